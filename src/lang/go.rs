//! Go: functions, methods (qualified by their receiver type), type specs (structs as
//! classes, interfaces, other types and aliases as types), interface methods, package-level
//! constants (every name of a `const` block), and local types inside functions. Doc comments
//! are the comments above a declaration.
//!
//! References: calls (a composite literal `Foo{...}` is a call of its type), imports
//! (module = import path, alias = an explicit package name, including `.` and `_`), embedded
//! struct fields / embedded interfaces as Inherits, functions and method values passed as
//! arguments (Reference), struct fields with their types (Field, embedded ones named by their
//! type), and the locals of a function (Local): receiver, parameters, named results, type
//! parameters, `:=` / `var` declarations typed as written or by their value (`NewFoo()`,
//! `&Foo{}`, `new(Foo)`, `x.(*Foo)`), and untyped `range` / type-switch / `select` bindings.
//!
//! Module names are package paths: the file's directory (`net/http`), with the package name
//! appended when it differs from the directory's last component (external `_test` packages,
//! `net/http/http_test`) unless it is `main`; a file at the repository root is named by its
//! package.

use super::{call_chain, unquote, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Go;

impl Rules for Go {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "function_declaration" => {
                let name = node.child_by_field("name")?;
                Some(
                    Def::new(NodeKind::Function, cx.text(name).to_string(), name, node)
                        .body(node.child_by_field("body")),
                )
            }
            "method_declaration" => {
                let name = node.child_by_field("name")?;
                let receiver = node.child_by_field("receiver").and_then(receiver_type);
                Some(
                    Def::new(NodeKind::Method, cx.text(name).to_string(), name, node)
                        .body(node.child_by_field("body"))
                        .scope(receiver.map(|r| cx.text(r).to_string())),
                )
            }
            "type_spec" | "type_alias" => {
                let name = node.child_by_field("name")?;
                let ty = node.child_by_field("type")?;
                let (kind, body) = match ty.kind_str() {
                    "struct_type" if node.kind_str() == "type_spec" => {
                        (NodeKind::Class, ty.named_child(0))
                    }
                    // Interface elements sit directly in the type: cut the signature at the
                    // first one (the engine drops the dangling `{`).
                    "interface_type" if node.kind_str() == "type_spec" => {
                        (NodeKind::Interface, ty.named_child(0))
                    }
                    _ => (NodeKind::Type, None),
                };
                Some(
                    Def::new(
                        kind,
                        cx.text(name).to_string(),
                        name,
                        single_spec_outer(node),
                    )
                    .body(body),
                )
            }
            "method_elem" => {
                let name = node.child_by_field("name")?;
                Some(Def::new(
                    NodeKind::Method,
                    cx.text(name).to_string(),
                    name,
                    node,
                ))
            }
            // Each name of a const spec is its own constant (`A, B = 1, 2`); names are the
            // spec's direct identifier children (values sit inside an expression list).
            "identifier" if enclosing == NodeKind::File => {
                let spec = node.parent()?;
                if spec.kind_str() != "const_spec" {
                    return None;
                }
                Some(Def::new(
                    NodeKind::Constant,
                    cx.text(node).to_string(),
                    node,
                    single_spec_outer(spec),
                ))
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call_expression" => {
                let Some(f) = node.child_by_field("function") else {
                    return;
                };
                // `Map[int](x)`: the callee without its type arguments.
                let f = match f.kind_str() {
                    "index_expression" => f.child_by_field("operand").unwrap_or(f),
                    _ => f,
                };
                // A called function literal or parenthesized expression has no name.
                if matches!(f.kind_str(), "identifier" | "selector_expression") {
                    out.push(cx.reference(RefKind::Call, cx.text(f), node));
                }
            }
            // `Must[int](x)` parses as a conversion to a generic type; with explicit type
            // arguments it is far more often a call of a generic function.
            "type_conversion_expression" => {
                if let Some(t) = node
                    .child_by_field("type")
                    .filter(|t| t.kind_str() == "generic_type")
                    .and_then(|t| t.child_by_field("type"))
                {
                    out.push(cx.reference(RefKind::Call, cx.text(t), node));
                }
            }
            "import_spec" => {
                let Some(path) = node.child_by_field("path") else {
                    return;
                };
                let alias = node.child_by_field("name").map(|n| cx.text(n));
                out.push(cx.import(unquote(cx.text(path)), "", alias, node));
            }
            "field_declaration" => fields(node, cx, out),
            // `Foo{...}`, `&pkg.Foo{...}`: an instantiation of the named type.
            "composite_literal" => {
                if let Some(t) = node.child_by_field("type").and_then(named_type) {
                    out.push(cx.reference(RefKind::Call, cx.text(t), node));
                }
            }
            "parameter_list" | "type_parameter_list"
                if node.parent().is_some_and(|p| {
                    matches!(
                        p.kind_str(),
                        "function_declaration" | "method_declaration" | "func_literal"
                    )
                }) =>
            {
                parameters(node, cx, out)
            }
            "short_var_declaration" => {
                if let (Some(left), Some(right)) =
                    (node.child_by_field("left"), node.child_by_field("right"))
                {
                    bind_values(left, None, Some(right), cx, out);
                }
            }
            "var_spec" => {
                let before = out.len();
                bind_values(
                    node,
                    node.child_by_field("type"),
                    node.child_by_field("value"),
                    cx,
                    out,
                );
                // A typed package variable is also seen from the package's other files
                // (and as `pkg.Var` from other packages): a Field of the file.
                if is_package_level(node) {
                    let vars: Vec<RawRef> = out[before..]
                        .iter()
                        .filter(|r| r.module.is_some())
                        .map(|r| RawRef {
                            kind: RefKind::Field,
                            ..r.clone()
                        })
                        .collect();
                    out.extend(vars);
                }
            }
            "range_clause" | "receive_statement" => {
                let declares = node
                    .children(&mut node.walk())
                    .any(|c| c.kind_str() == ":=");
                if let Some(left) = node.child_by_field("left").filter(|_| declares) {
                    bind_values(left, None, None, cx, out);
                }
            }
            "type_switch_statement" => {
                if let Some(alias) = node.child_by_field("alias") {
                    bind_values(alias, None, None, cx, out);
                }
            }
            // Functions and method values passed as arguments: `sort.Slice(xs, less)`,
            // `mux.HandleFunc("/", s.serve)`. Most are plain variables, which resolve to
            // nothing and are dropped.
            "argument_list" => {
                let mut c = node.walk();
                for arg in node.named_children(&mut c) {
                    let named = match arg.kind_str() {
                        "identifier" => cx.text(arg) != "nil",
                        "selector_expression" => arg
                            .child_by_field("operand")
                            .is_some_and(|o| o.kind_str() == "identifier"),
                        _ => false,
                    };
                    if named {
                        out.push(cx.reference(RefKind::Reference, cx.text(arg), arg));
                    }
                }
            }
            // An embedded interface is a single-type element of an interface (unions and
            // `~T` approximations are type-set constraints, not embedding).
            "type_elem" => {
                if node.named_child_count() != 1
                    || node.parent().map(|p| p.kind_str()) != Some("interface_type")
                {
                    return;
                }
                if let Some(t) = node.named_child(0) {
                    if matches!(
                        t.kind_str(),
                        "type_identifier" | "qualified_type" | "generic_type"
                    ) {
                        let t = embedded_name(t);
                        out.push(cx.reference(RefKind::Inherits, cx.text(t), t));
                    }
                }
            }
            _ => {}
        }
    }

    /// The package comment (the comments right above `package`) holds a paragraph starting
    /// `Deprecated:`, Go's convention for a package that another replaces.
    fn deprecated(&self, root: Node, cx: &Cx) -> bool {
        let Some(clause) = root.named_child_of_kind("package_clause") else {
            return false;
        };
        let mut next_line = clause.start_position().row;
        let mut comment = clause.prev_named_sibling();
        while let Some(n) = comment.filter(|n| n.kind_str() == "comment") {
            if n.end_position().row + 1 < next_line {
                break;
            }
            let deprecated = cx.text(n).lines().any(|line| {
                let line = line
                    .trim_start()
                    .trim_start_matches(['/', '*'])
                    .trim_start();
                line.starts_with("Deprecated:")
            });
            if deprecated {
                return true;
            }
            next_line = n.start_position().row;
            comment = n.prev_named_sibling();
        }
        false
    }

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let package = root
            .named_child_of_kind("package_clause")
            .and_then(|p| p.named_child(0))
            .map(|n| cx.text(n))
            .unwrap_or("");
        let last = dir.rsplit('/').next().unwrap_or(dir);
        if dir.is_empty() {
            package.to_string()
        } else if package.is_empty() || package == last || package == "main" {
            dir.to_string()
        } else {
            format!("{dir}/{package}")
        }
    }
}

/// A spec alone in its declaration (`type T struct{}`, `const X = 1`) is reported with the
/// declaration keyword; a spec in a group `( ... )` stands for itself.
fn single_spec_outer(spec: Node) -> Node {
    match spec.parent() {
        Some(decl)
            if matches!(decl.kind_str(), "type_declaration" | "const_declaration")
                && !decl.children(&mut decl.walk()).any(|c| c.kind_str() == "(") =>
        {
            decl
        }
        _ => spec,
    }
}

/// The receiver's type name: `(c *Client)` and `(p Pair[K, V])` give `Client` and `Pair`.
fn receiver_type(receiver: Node) -> Option<Node> {
    let param = receiver.named_child(0)?;
    let mut t = param.child_by_field("type")?;
    // Bounded: a receiver is at most a pointer to a (parenthesized) generic type.
    for _ in 0..4 {
        t = match t.kind_str() {
            "pointer_type" | "parenthesized_type" => t.named_child(0)?,
            "generic_type" => t.child_by_field("type")?,
            _ => return Some(t),
        };
    }
    Some(t)
}

/// Struct fields: an embedded field is a base type (Inherits); the fields of a named struct
/// type are its members (Field), an embedded one named by its type (`*pkg.Base` -> `Base`).
fn fields(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(ty) = node.child_by_field("type") else {
        return;
    };
    let mut c = node.walk();
    let mut names = node.children_by_field_name("name", &mut c).peekable();
    let embedded = names.peek().is_none();
    if embedded {
        let t = embedded_name(ty);
        out.push(cx.reference(RefKind::Inherits, cx.text(t), t));
    }
    // Fields of anonymous structs (`var x struct{ ... }`) belong to no named type.
    let named_struct = node
        .parent()
        .and_then(|list| list.parent())
        .and_then(|st| st.parent())
        .is_some_and(|spec| spec.kind_str() == "type_spec");
    if !named_struct {
        return;
    }
    let ty_text = cx.text(ty);
    if embedded {
        let t = embedded_name(ty);
        let name = match t.kind_str() {
            "qualified_type" => t.child_by_field("name").unwrap_or(t),
            _ => t,
        };
        out.push(cx.binding(RefKind::Field, cx.text(name), Some(ty_text), name));
    }
    for name in names {
        out.push(cx.binding(RefKind::Field, cx.text(name), Some(ty_text), name));
    }
}

/// A `var` spec written at the top of the file, alone or in a group.
fn is_package_level(spec: Node) -> bool {
    let decl = match spec.parent() {
        Some(p) if p.kind_str() == "var_spec_list" => p.parent(),
        p => p,
    };
    decl.and_then(|d| d.parent())
        .is_some_and(|f| f.kind_str() == "source_file")
}

/// The receiver, parameters, named results or type parameters of a function: locals typed
/// as declared (a type parameter by its constraint). Variadic parameters are slices.
fn parameters(list: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        let ty = match p.kind_str() {
            "parameter_declaration" | "type_parameter_declaration" => p.child_by_field("type"),
            "variadic_parameter_declaration" => None,
            _ => continue,
        };
        let ty = ty.map(|t| cx.text(t));
        let mut pc = p.walk();
        for name in p.children_by_field_name("name", &mut pc) {
            let text = cx.text(name);
            if text != "_" {
                out.push(cx.binding(RefKind::Local, text, ty, name));
            }
        }
    }
}

/// The identifiers of `names` (an expression list or a `var` spec) as locals: typed by `ty`,
/// or each by the value at its position (`a, b := NewA(), NewB()`); with a single value for
/// several names (`r, err := Open()`), the first name takes the call's first result and a
/// last `err` is an `error`.
fn bind_values(
    names: Node,
    ty: Option<Node>,
    values: Option<Node>,
    cx: &Cx,
    out: &mut Vec<RawRef>,
) {
    let declared = ty.map(|t| cx.text(t).to_string());
    let values: Vec<Node> = values
        .map(|v| v.named_children(&mut v.walk()).collect())
        .unwrap_or_default();
    let mut c = names.walk();
    let field = (names.kind_str() == "var_spec").then_some("name");
    let idents: Vec<Node> = match field {
        Some(f) => names.children_by_field_name(f, &mut c).collect(),
        None => names.named_children(&mut c).collect(),
    };
    for (i, name) in idents.iter().enumerate() {
        if name.kind_str() != "identifier" || cx.text(*name) == "_" {
            continue;
        }
        let inferred = match (values.len(), i) {
            _ if declared.is_some() => None,
            (n, _) if n == idents.len() => value_type(values[i], cx),
            (1, 0) => value_type(values[0], cx).filter(|t| t.ends_with("()")),
            // `f, err := Open()`: by convention the last result is the `error`.
            (1, _) if i + 1 == idents.len() && cx.text(*name) == "err" => Some("error".to_string()),
            _ => None,
        };
        let ty = declared.as_deref().or(inferred.as_deref());
        out.push(cx.binding(RefKind::Local, cx.text(*name), ty, *name));
    }
}

/// The type of a value, where the expression shows it: `Foo{}` and `&Foo{}` are `Foo`,
/// `new(Foo)` is `*Foo`, `x.(*Foo)` is `*Foo`, and a call `pkg.NewFoo(...)` is
/// `pkg.NewFoo()` (whatever it returns; a conversion `Foo(x)` is a `Foo`), a call chain
/// `s.conn(a).peer()` is `s.conn().peer()`.
fn value_type(value: Node, cx: &Cx) -> Option<String> {
    let mut v = value;
    // Bounded: `&(&Foo{})` nests no deeper in real code.
    for _ in 0..4 {
        match v.kind_str() {
            "unary_expression" if cx.field(v, "operator") == Some("&") => {
                v = v.child_by_field("operand")?;
            }
            "parenthesized_expression" => v = v.named_child(0)?,
            _ => break,
        }
    }
    match v.kind_str() {
        "composite_literal" => {
            let t = named_type(v.child_by_field("type")?)?;
            Some(cx.text(t).to_string())
        }
        "type_assertion_expression" => Some(cx.text(v.child_by_field("type")?).to_string()),
        "call_expression" => {
            let f = v.child_by_field("function")?;
            let f = match f.kind_str() {
                "index_expression" => f.child_by_field("operand")?,
                _ => f,
            };
            if f.kind_str() == "identifier" && cx.text(f) == "new" {
                let arg = v.child_by_field("arguments")?.named_child(0)?;
                return Some(format!("*{}", cx.text(named_type(arg)?)));
            }
            if !matches!(f.kind_str(), "identifier" | "selector_expression") {
                return None;
            }
            // A chain `s.conn(addr).peer(...)` is kept without its arguments.
            call_chain(cx.text(f), 120).map(|text| format!("{text}()"))
        }
        _ => None,
    }
}

/// A named type (`Foo`, `pkg.Foo`, `Foo[T]` -> `Foo`); slices, maps and anonymous structs
/// have no name.
fn named_type(t: Node) -> Option<Node> {
    match t.kind_str() {
        "type_identifier" | "qualified_type" => Some(t),
        "generic_type" => t
            .child_by_field("type")
            .filter(|n| matches!(n.kind_str(), "type_identifier" | "qualified_type")),
        _ => None,
    }
}

/// An embedded type's name: `*Base` -> `Base`, `List[T]` -> `List`, `io.Reader` as is.
fn embedded_name(t: Node) -> Node {
    let mut t = t;
    for _ in 0..4 {
        let next = match t.kind_str() {
            "pointer_type" => t.named_child(0),
            "generic_type" => t.child_by_field("type"),
            _ => None,
        };
        match next {
            Some(n) => t = n,
            None => break,
        }
    }
    t
}
