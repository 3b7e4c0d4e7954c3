//! Java: classes, interfaces, enums, records and annotation types (`@interface` is an
//! Interface), methods (interface and abstract ones without bodies, methods of anonymous
//! classes and enum constant bodies included), constructors and compact constructors (named
//! after their class), `static final` fields and interface constants (one Constant per
//! declarator), nested, inner and local classes. Javadoc comes from the leading comment.
//! References: method calls (with their arguments' types where literals and casts show
//! them), `new Foo()`, `super(...)`/`this(...)`, imports (static and on-demand ones too),
//! `extends`/`implements`, annotations on definitions, method references (`Foo::bar`;
//! `Foo::new` names the class), and bindings: parameters, locals (`var` ones typed by their
//! constructor), loop, catch, resource and pattern variables, lambda parameters, fields and
//! record components (fields of the record).
//! A type declaration that error recovery broke up is recovered from the error node.
//! The module name is the declared `package`, else the file's directory, dotted.

use super::{Cx, Def, FileState, Rules, MAX_NESTING};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use std::cell::RefMut;
use std::collections::HashSet;
use tree_sitter::Node;

/// Declarators of one field declaration that may define constants. Each finds its field
/// through tree-sitter's parent lookup, which walks past every earlier sibling: time
/// quadratic in the length of `int a, b, ...;`.
const MAX_DECLARATORS: usize = 256;

/// What the walk of one file remembers between nodes.
#[derive(Default)]
pub struct State {
    /// The first declarators of the field declarations being walked, by node id: the walk
    /// visits a declaration right before its declarators, and other declarators (of
    /// locals) never define constants, so they need not look for their parent at all.
    field_declarators: HashSet<usize>,
}

fn state<'c>(cx: &'c Cx) -> RefMut<'c, State> {
    super::state_of(cx, |s| match s {
        FileState::Java(s) => Some(s),
        _ => None,
    })
}

pub struct Java;

impl Rules for Java {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let kind = match node.kind_str() {
            "class_declaration" | "record_declaration" => NodeKind::Class,
            "interface_declaration" | "annotation_type_declaration" => NodeKind::Interface,
            "enum_declaration" => NodeKind::Enum,
            // Every Java function is a member of some class, anonymous ones included, so
            // these are methods even where the enclosing definition is a method.
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "annotation_type_element_declaration" => NodeKind::Method,
            "field_declaration" | "constant_declaration" => {
                let mut c = node.walk();
                let ids: Vec<usize> = node
                    .children_by_field_name("declarator", &mut c)
                    .take(MAX_DECLARATORS)
                    .map(|d| d.id())
                    .collect();
                state(cx).field_declarators.extend(ids);
                return None;
            }
            "variable_declarator" if state(cx).field_declarators.contains(&node.id()) => {
                return constant(node, cx)
            }
            "ERROR" => {
                return recovered_type(
                    node,
                    cx,
                    &[
                        ("class", NodeKind::Class),
                        ("record", NodeKind::Class),
                        ("interface", NodeKind::Interface),
                        ("enum", NodeKind::Enum),
                    ],
                    &[
                        "type_parameters",
                        "superclass",
                        "super_interfaces",
                        "extends_interfaces",
                        "formal_parameters",
                        "permits",
                    ],
                )
            }
            "enum_constant" => {
                // A constant with a body is an anonymous subclass: its methods are
                // qualified through the constant (`Color.RED.apply`), nothing is stored.
                node.child_by_field("body")?;
                let name = node.child_by_field("name")?;
                let mut d = Def::new(NodeKind::Class, cx.text(name).to_string(), name, node);
                d.scope_only = true;
                return Some(d);
            }
            _ => return None,
        };
        let name = node.child_by_field("name")?;
        Some(
            Def::new(kind, cx.text(name).to_string(), name, node).body(node.child_by_field("body")),
        )
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "method_invocation" => {
                let Some(name) = node.child_by_field("name") else {
                    return;
                };
                let callee = match node.child_by_field("object") {
                    // `Outer.this.m()` calls a member of the enclosing `Outer`.
                    Some(obj) => {
                        let obj = cx.text(obj);
                        let obj = obj.strip_suffix(".this").unwrap_or(obj);
                        format!("{}.{}", obj, cx.text(name))
                    }
                    None => cx.text(name).to_string(),
                };
                let call = cx.reference(RefKind::Call, &callee, node);
                let args = node.child_by_field("arguments");
                out.push(with_args(call, args, cx, arg_type));
            }
            "object_creation_expression" => {
                if let Some(ty) = node.child_by_field("type") {
                    let name = strip_type_args(cx.text(ty), '<', '>');
                    out.push(cx.reference(RefKind::Call, &name, node));
                }
            }
            "explicit_constructor_invocation" => {
                if let Some(ctor) = node.child_by_field("constructor") {
                    let callee = match node.child_by_field("object") {
                        Some(obj) => format!("{}.{}", cx.text(obj), cx.text(ctor)),
                        None => cx.text(ctor).to_string(),
                    };
                    // The arguments pick among the constructors.
                    let call = cx.reference(RefKind::Call, &callee, node);
                    let args = node.child_by_field("arguments");
                    out.push(with_args(call, args, cx, arg_type));
                }
            }
            "import_declaration" => import(node, cx, out),
            "class_declaration" | "record_declaration" | "enum_declaration" => {
                annotations(node, cx, out);
                if let Some(sup) = node.child_by_field("superclass") {
                    types_in(sup, RefKind::Inherits, cx, out);
                }
                if let Some(list) = node.child_by_field("interfaces") {
                    types_in(list, RefKind::Implements, cx, out);
                }
            }
            "interface_declaration" => {
                annotations(node, cx, out);
                // An interface's `extends` list names the interfaces it inherits from.
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    if child.kind_str() == "extends_interfaces" {
                        types_in(child, RefKind::Inherits, cx, out);
                    }
                }
            }
            "annotation_type_declaration"
            | "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "annotation_type_element_declaration" => annotations(node, cx, out),
            "variable_declarator" if state(cx).field_declarators.remove(&node.id()) => {
                // A constant's annotations sit on the shared field declaration.
                if let Some(field) = node.parent().filter(|p| is_constant_field(*p, cx)) {
                    annotations(field, cx, out);
                }
            }
            // Fields (constants too: `LOG.info()` needs the type of `LOG`). Visited in the
            // class's scope, before a constant's own declarator opens its definition.
            "field_declaration" | "constant_declaration" => {
                declarators(node, RefKind::Field, cx, out)
            }
            "local_variable_declaration" => declarators(node, RefKind::Local, cx, out),
            "formal_parameter"
            | "catch_formal_parameter"
            | "resource"
            | "enhanced_for_statement" => {
                // A record's components are its fields.
                let kind = match node.parent().and_then(|p| p.parent()) {
                    Some(r)
                        if node.kind_str() == "formal_parameter"
                            && r.kind_str() == "record_declaration" =>
                    {
                        RefKind::Field
                    }
                    _ => RefKind::Local,
                };
                let ty = match node.kind_str() {
                    "catch_formal_parameter" => {
                        let mut c = node.walk();
                        let t = node
                            .named_children(&mut c)
                            .find(|n| n.kind_str() == "catch_type");
                        t.and_then(|t| t.named_child(0))
                    }
                    _ => node.child_by_field("type"),
                };
                if let Some(name) = node.child_by_field("name") {
                    // `try (var r = new Res())`; a loop's value is the collection.
                    let value = node
                        .child_by_field("value")
                        .filter(|_| node.kind_str() == "resource");
                    let ty = match (ty.and_then(|t| type_text(t, cx)), value) {
                        (None, Some(v)) => constructed(v, cx),
                        (ty, _) => ty,
                    };
                    out.push(cx.binding(kind, cx.text(name), ty.as_deref(), name));
                }
            }
            "spread_parameter" => {
                // `String... names` is an array: bound, untyped.
                let mut c = node.walk();
                let name = node
                    .named_children(&mut c)
                    .find(|n| n.kind_str() == "variable_declarator")
                    .and_then(|d| d.child_by_field("name"));
                if let Some(name) = name {
                    out.push(cx.binding(RefKind::Local, cx.text(name), None, name));
                }
            }
            "lambda_expression" => {
                // `x -> ...` and `(x, y) -> ...`; typed parameters are `formal_parameter`s.
                if let Some(params) = node.child_by_field("parameters") {
                    if params.kind_str() == "identifier" {
                        out.push(cx.binding(RefKind::Local, cx.text(params), None, params));
                    } else if params.kind_str() == "inferred_parameters" {
                        let mut c = params.walk();
                        for p in params.named_children(&mut c) {
                            if p.kind_str() == "identifier" {
                                out.push(cx.binding(RefKind::Local, cx.text(p), None, p));
                            }
                        }
                    }
                }
            }
            "instanceof_expression" => {
                // `o instanceof Foo f`
                if let (Some(ty), Some(name)) =
                    (node.child_by_field("right"), node.child_by_field("name"))
                {
                    let ty = type_text(ty, cx);
                    out.push(cx.binding(RefKind::Local, cx.text(name), ty.as_deref(), name));
                }
            }
            "type_pattern" | "record_pattern_component" => {
                // `case Foo f ->`, `Point(int x, var y)`
                let mut c = node.walk();
                let parts: Vec<Node> = node.named_children(&mut c).collect();
                if let [ty, name] = parts[..] {
                    if name.kind_str() == "identifier" {
                        let ty = type_text(ty, cx);
                        out.push(cx.binding(RefKind::Local, cx.text(name), ty.as_deref(), name));
                    }
                }
            }
            "method_reference" => {
                // `this::run`, `Foo::bar`, `super::m`; `Foo::new` names the class.
                let text: String = cx.text(node).split_whitespace().collect();
                let text = strip_type_args(&text, '<', '>');
                let target = text.strip_suffix("::new").unwrap_or(&text);
                if !target.contains('[') && !target.contains('(') {
                    out.push(cx.reference(RefKind::Reference, target, node));
                }
            }
            _ => {}
        }
    }

    /// Every top-level type carries `@Deprecated`: the file is the type, and it is replaced.
    fn deprecated(&self, root: Node, cx: &Cx) -> bool {
        let mut c = root.walk();
        let mut types = root.named_children(&mut c).filter(|n| {
            matches!(
                n.kind_str(),
                "class_declaration"
                    | "interface_declaration"
                    | "enum_declaration"
                    | "record_declaration"
                    | "annotation_type_declaration"
            )
        });
        let mut any = false;
        let all = types.all(|t| {
            any = true;
            let mut deprecated = false;
            each_annotation(t, cx, |_, name| {
                deprecated |= matches!(name, "Deprecated" | "java.lang.Deprecated")
            });
            deprecated
        });
        any && all
    }

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let mut c = root.walk();
        let declared = root
            .named_children(&mut c)
            .find(|n| n.kind_str() == "package_declaration")
            .and_then(|pkg| {
                let mut c = pkg.walk();
                let name = pkg
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind_str(), "scoped_identifier" | "identifier"));
                name
            })
            .map(|n| strip_type_args(cx.text(n), '<', '>'));
        declared.unwrap_or_else(|| directory_module(path))
    }

    fn file_state(&self, _path: &str) -> FileState {
        FileState::Java(State::default())
    }
}

/// A call with its arguments, which pick among overloads: their types where the text
/// shows them (`arg_type`), `_` elsewhere, comma-separated (`String,_`; "" for none).
pub(super) fn with_args(
    mut call: RawRef,
    list: Option<Node>,
    cx: &Cx,
    arg_type: fn(Node, &Cx) -> Option<String>,
) -> RawRef {
    if let Some(list) = list {
        let mut c = list.walk();
        let args: Vec<String> = list
            .named_children(&mut c)
            .filter(|a| !a.kind_str().contains("comment"))
            .map(|a| arg_type(a, cx).unwrap_or_else(|| "_".to_string()))
            .collect();
        call.module = Some(args.join(","));
    }
    call
}

/// The type of an argument where the text shows it: literals, casts, `new T(...)`, and
/// string concatenations.
fn arg_type(arg: Node, cx: &Cx) -> Option<String> {
    arg_type_at(arg, cx, 0)
}

fn arg_type_at(arg: Node, cx: &Cx, depth: u32) -> Option<String> {
    if depth > MAX_NESTING {
        return None;
    }
    let ty = match arg.kind_str() {
        "string_literal" | "text_block" => "String",
        "character_literal" => "char",
        "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal" => match cx.text(arg).ends_with(['l', 'L']) {
            true => "long",
            false => "int",
        },
        "decimal_floating_point_literal" | "hex_floating_point_literal" => {
            match cx.text(arg).ends_with(['f', 'F']) {
                true => "float",
                false => "double",
            }
        }
        "true" | "false" => "boolean",
        "class_literal" => "Class",
        "cast_expression" | "object_creation_expression" => {
            return Some(strip_type_args(
                cx.text(arg.child_by_field("type")?),
                '<',
                '>',
            ))
        }
        "parenthesized_expression" | "unary_expression" => {
            let inner = arg.named_child(arg.named_child_count().checked_sub(1)? as u32)?;
            return arg_type_at(inner, cx, depth + 1);
        }
        // `"n = " + n` is a string.
        "binary_expression" if cx.field(arg, "operator") == Some("+") => {
            let left = arg.child_by_field("left")?;
            let right = arg.child_by_field("right")?;
            let string = |n: Node| arg_type_at(n, cx, depth + 1).is_some_and(|t| t == "String");
            return (string(left) || string(right)).then(|| "String".to_string());
        }
        _ => return None,
    };
    Some(ty.to_string())
}

/// Every variable of a field or local declaration, typed as declared; `var x = new Foo()`
/// takes the type it is constructed with.
fn declarators(decl: Node, kind: RefKind, cx: &Cx, out: &mut Vec<RawRef>) {
    let ty = decl.child_by_field("type").and_then(|t| type_text(t, cx));
    let mut c = decl.walk();
    for d in decl.children_by_field_name("declarator", &mut c) {
        let Some(name) = d.child_by_field("name") else {
            continue;
        };
        // `int[] a, b[];`: a declarator with dimensions is an array.
        let ty = match (&ty, d.child_by_field("dimensions")) {
            (_, Some(_)) => None,
            (Some(t), None) => Some(t.clone()),
            (None, None) => d.child_by_field("value").and_then(|v| constructed(v, cx)),
        };
        out.push(cx.binding(kind, cx.text(name), ty.as_deref(), name));
    }
}

/// A declared type worth looking up: class types without type arguments. Primitive and
/// array types, and `var`, bind no type.
fn type_text(ty: Node, cx: &Cx) -> Option<String> {
    match ty.kind_str() {
        "type_identifier" if cx.text(ty) == "var" => None,
        "type_identifier" | "scoped_type_identifier" | "generic_type" => {
            Some(strip_type_args(cx.text(ty), '<', '>'))
        }
        _ => None,
    }
}

/// `new Foo<>(...)` as the call of the type, `Foo()`: the value's type.
fn constructed(value: Node, cx: &Cx) -> Option<String> {
    if value.kind_str() != "object_creation_expression" {
        return None;
    }
    let ty = value.child_by_field("type")?;
    Some(format!("{}()", strip_type_args(cx.text(ty), '<', '>')))
}

/// A declarator of a `static final` field or of an interface constant.
fn constant<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let field = node.parent()?;
    if !is_constant_field(field, cx) {
        return None;
    }
    let name = node.child_by_field("name")?;
    // The whole field declaration is the definition: its modifiers and Javadoc apply to
    // every declarator in it.
    Some(Def::new(
        NodeKind::Constant,
        cx.text(name).to_string(),
        name,
        field,
    ))
}

fn is_constant_field(field: Node, cx: &Cx) -> bool {
    match field.kind_str() {
        // Fields of interfaces are implicitly `static final`.
        "constant_declaration" => true,
        "field_declaration" => {
            let Some(mods) = field.named_child_of_kind("modifiers") else {
                return false;
            };
            let mut c = mods.walk();
            let words: Vec<&str> = mods.children(&mut c).map(|m| cx.text(m)).collect();
            words.contains(&"static") && words.contains(&"final")
        }
        _ => false,
    }
}

/// Annotations in a definition's `modifiers`, as decorators (name without `@` or arguments).
fn annotations(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    each_annotation(def, cx, |ann, name| {
        out.push(cx.reference(RefKind::Decorator, name, ann))
    });
}

/// Calls `f` with each annotation in a definition's `modifiers` and its name as written.
fn each_annotation<'t>(def: Node<'t>, cx: &Cx<'t>, mut f: impl FnMut(Node<'t>, &'t str)) {
    let Some(mods) = def.named_child_of_kind("modifiers") else {
        return;
    };
    let mut c = mods.walk();
    for ann in mods.named_children(&mut c) {
        if matches!(ann.kind_str(), "annotation" | "marker_annotation") {
            if let Some(name) = ann.child_by_field("name") {
                f(ann, cx.text(name));
            }
        }
    }
}

/// Every type named in a `superclass`, `super_interfaces` or `extends_interfaces` clause.
fn types_in(clause: Node, kind: RefKind, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = clause.walk();
    for child in clause.named_children(&mut c) {
        if child.kind_str() == "type_list" {
            let mut c = child.walk();
            for ty in child.named_children(&mut c) {
                out.push(cx.reference(kind, &strip_type_args(cx.text(ty), '<', '>'), ty));
            }
        } else {
            out.push(cx.reference(kind, &strip_type_args(cx.text(child), '<', '>'), child));
        }
    }
}

/// `import a.b.C;` (module `a.b`, name `C`), `import a.b.*;` (name `*`), and the same for
/// `import static a.b.C.m;` whose module is the class.
fn import(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    let mut path = None;
    let mut wildcard = false;
    for child in node.named_children(&mut c) {
        match child.kind_str() {
            "scoped_identifier" | "identifier" => path = Some(cx.text(child)),
            "asterisk" => wildcard = true,
            _ => {}
        }
    }
    let Some(path) = path else {
        return;
    };
    let path: String = path.split_whitespace().collect();
    if wildcard {
        out.push(cx.import(&path, "*", None, node));
    } else {
        let (module, name) = path.rsplit_once('.').unwrap_or(("", &path));
        out.push(cx.import(module, name, None, node));
    }
}

/// A type declaration that error recovery broke up: an ERROR node holding a declaration
/// keyword (`keywords`, with the kind it declares) directly followed by the name. The
/// definition spans the ERROR node, so the members parsed inside it are qualified through
/// it; the signature stops at the first child after the name that is not in `header`
/// (type parameters, base lists, ...). `Foo::class` and `Foo.class` are not declarations.
pub(super) fn recovered_type<'t>(
    node: Node<'t>,
    cx: &Cx,
    keywords: &[(&str, NodeKind)],
    header: &[&str],
) -> Option<Def<'t>> {
    let mut c = node.walk();
    let children: Vec<Node> = node.children(&mut c).collect();
    let (kw, kind) = children.iter().enumerate().find_map(|(i, k)| {
        let kind = keywords
            .iter()
            .find(|(word, _)| !k.is_named() && k.kind_str() == *word)?
            .1;
        let after_member_access = i > 0 && matches!(children[i - 1].kind_str(), "::" | ".");
        (!after_member_access).then_some((i, kind))
    })?;
    let name = children
        .get(kw + 1)
        .filter(|n| n.kind_str() == "identifier")?;
    let body = children[kw + 2..]
        .iter()
        .find(|n| !header.contains(&n.kind_str()))
        .copied();
    Some(Def::new(kind, cx.text(*name).to_string(), *name, node).body(body))
}

/// The fallback module name for a file that declares no package or namespace: its
/// directory, dotted (`src/util/Strings.java` -> `src.util`), or "" at the root.
pub(super) fn directory_module(path: &str) -> String {
    path.rsplit_once('/')
        .map(|(dir, _)| {
            dir.split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default()
}

/// A type's text without its type arguments or whitespace: `java.util.Map<K, V>` ->
/// `java.util.Map`, `Outer<A>.Inner` -> `Outer.Inner` (Scala passes `[` and `]`).
pub(super) fn strip_type_args(text: &str, open: char, close: char) -> String {
    let mut depth = 0usize;
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch == open {
            depth += 1;
        } else if ch == close && depth > 0 {
            depth -= 1;
        } else if depth == 0 && !ch.is_whitespace() {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::{extract_on_worker, nest};
    use crate::model::RefKind;

    #[test]
    fn argument_types_look_into_a_bounded_depth() {
        let src = "class C { void f() { g((\"n = \" + n), -(1)); } }\n";
        let x = extract_on_worker("C.java", src.into());
        let call = x.refs.iter().find(|r| r.kind == RefKind::Call).unwrap();
        assert_eq!(call.module.as_deref(), Some("String,int"));
        let deep = format!(
            "class C {{ void f() {{ g({}); }} }}\n",
            nest("(", "\"s\"", ")", 10_000)
        );
        // Followed by recursion, this exhausted the stack.
        let x = extract_on_worker("D.java", deep);
        if let Some(call) = x.refs.iter().find(|r| r.kind == RefKind::Call) {
            assert_eq!(call.module.as_deref(), Some("_"));
        }
    }

    #[test]
    fn a_long_field_declaration_defines_its_first_constants() {
        let src = "interface I { int A = 1, B = 2; }\nclass C { @X static final int D = 1; int e; void f() { int G = 1; } }\n";
        let x = extract_on_worker("C.java", src.into());
        let constants: Vec<&str> = x.nodes[1..]
            .iter()
            .filter(|n| n.kind == crate::model::NodeKind::Constant)
            .map(|n| n.name.as_str())
            .collect();
        assert_eq!(constants, ["A", "B", "D"]);
        assert!(x
            .refs
            .iter()
            .any(|r| r.kind == RefKind::Decorator && r.name == "X"));
        let many: Vec<String> = (0..2_000).map(|i| format!("A{i} = {i}")).collect();
        let src = format!("interface I {{ int {}; }}\n", many.join(", "));
        let x = extract_on_worker("D.java", src);
        assert_eq!(x.nodes.len(), 2 + super::MAX_DECLARATORS);
    }
}
