//! Go: functions, methods (qualified by their receiver type), type specs (structs as
//! classes, interfaces, other types and aliases as types), interface methods, package-level
//! constants (every name of a `const` block), and local types inside functions. Doc comments
//! are the comments above a declaration.
//!
//! References: calls, imports (module = import path, alias = an explicit package name,
//! including `.` and `_`), and embedded struct fields / embedded interfaces as Inherits.
//!
//! Module names are package paths: the file's directory (`net/http`), with the package name
//! appended when it differs from the directory's last component (external `_test` packages,
//! `net/http/http_test`) unless it is `main`; a file at the repository root is named by its
//! package.

use super::{unquote, Cx, Def, Rules};
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Go;

impl Rules for Go {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind() {
            "function_declaration" => {
                let name = node.child_by_field_name("name")?;
                Some(
                    Def::new(NodeKind::Function, cx.text(name).to_string(), name, node)
                        .body(node.child_by_field_name("body")),
                )
            }
            "method_declaration" => {
                let name = node.child_by_field_name("name")?;
                let receiver = node.child_by_field_name("receiver").and_then(receiver_type);
                Some(
                    Def::new(NodeKind::Method, cx.text(name).to_string(), name, node)
                        .body(node.child_by_field_name("body"))
                        .scope(receiver.map(|r| cx.text(r).to_string())),
                )
            }
            "type_spec" | "type_alias" => {
                let name = node.child_by_field_name("name")?;
                let ty = node.child_by_field_name("type")?;
                let (kind, body) = match ty.kind() {
                    "struct_type" if node.kind() == "type_spec" => {
                        (NodeKind::Class, ty.named_child(0))
                    }
                    // Interface elements sit directly in the type: cut the signature at the
                    // first one (the engine drops the dangling `{`).
                    "interface_type" if node.kind() == "type_spec" => {
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
                let name = node.child_by_field_name("name")?;
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
                if spec.kind() != "const_spec" {
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
        match node.kind() {
            "call_expression" => {
                let Some(f) = node.child_by_field_name("function") else {
                    return;
                };
                // `Map[int](x)`: the callee without its type arguments.
                let f = match f.kind() {
                    "index_expression" => f.child_by_field_name("operand").unwrap_or(f),
                    _ => f,
                };
                // A called function literal or parenthesized expression has no name.
                if matches!(f.kind(), "identifier" | "selector_expression") {
                    out.push(cx.reference(RefKind::Call, cx.text(f), node));
                }
            }
            // `Must[int](x)` parses as a conversion to a generic type; with explicit type
            // arguments it is far more often a call of a generic function.
            "type_conversion_expression" => {
                if let Some(t) = node
                    .child_by_field_name("type")
                    .filter(|t| t.kind() == "generic_type")
                    .and_then(|t| t.child_by_field_name("type"))
                {
                    out.push(cx.reference(RefKind::Call, cx.text(t), node));
                }
            }
            "import_spec" => {
                let Some(path) = node.child_by_field_name("path") else {
                    return;
                };
                let alias = node.child_by_field_name("name").map(|n| cx.text(n));
                out.push(cx.import(unquote(cx.text(path)), "", alias, node));
            }
            // An embedded field: a type without a field name.
            "field_declaration" if node.child_by_field_name("name").is_none() => {
                if let Some(t) = node.child_by_field_name("type").map(embedded_name) {
                    out.push(cx.reference(RefKind::Inherits, cx.text(t), t));
                }
            }
            // An embedded interface is a single-type element of an interface (unions and
            // `~T` approximations are type-set constraints, not embedding).
            "type_elem" => {
                if node.named_child_count() != 1
                    || node.parent().map(|p| p.kind()) != Some("interface_type")
                {
                    return;
                }
                if let Some(t) = node.named_child(0) {
                    if matches!(
                        t.kind(),
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

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let package = {
            let mut c = root.walk();
            let clause = root
                .named_children(&mut c)
                .find(|n| n.kind() == "package_clause");
            clause
                .and_then(|p| p.named_child(0))
                .map(|n| cx.text(n))
                .unwrap_or("")
        };
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
            if matches!(decl.kind(), "type_declaration" | "const_declaration")
                && !decl.children(&mut decl.walk()).any(|c| c.kind() == "(") =>
        {
            decl
        }
        _ => spec,
    }
}

/// The receiver's type name: `(c *Client)` and `(p Pair[K, V])` give `Client` and `Pair`.
fn receiver_type(receiver: Node) -> Option<Node> {
    let param = receiver.named_child(0)?;
    let mut t = param.child_by_field_name("type")?;
    // Bounded: a receiver is at most a pointer to a (parenthesized) generic type.
    for _ in 0..4 {
        t = match t.kind() {
            "pointer_type" | "parenthesized_type" => t.named_child(0)?,
            "generic_type" => t.child_by_field_name("type")?,
            _ => return Some(t),
        };
    }
    Some(t)
}

/// An embedded type's name: `*Base` -> `Base`, `List[T]` -> `List`, `io.Reader` as is.
fn embedded_name(t: Node) -> Node {
    let mut t = t;
    for _ in 0..4 {
        let next = match t.kind() {
            "pointer_type" => t.named_child(0),
            "generic_type" => t.child_by_field_name("type"),
            _ => None,
        };
        match next {
            Some(n) => t = n,
            None => break,
        }
    }
    t
}
