//! Ruby: classes, modules, methods (`def` at top level is a Function, inside a class or module
//! a Method; `def self.x` is always a Method), constant assignments (`FOO = ...`). A
//! `class << self` block is transparent: its methods belong to the enclosing class. Names
//! written with a path (`class A::B`) keep the last segment as the name and the rest, dotted,
//! as an extra qualifier. References: explicit calls (with a receiver, arguments, a block or
//! parentheses; a bare identifier cannot be told apart from a local variable), a bare `super`,
//! `require`/`require_relative`/`load` as imports, `include`/`extend`/`prepend` as
//! implemented mixins and `class A < B` as inheritance. `::` in names becomes `.`.
//! Ruby code is namespaced by its own modules, so the module name of a file is empty.

use super::{unquote, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Ruby;

impl Rules for Ruby {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "class" | "module" => {
                let (name, name_node, scope) = constant_path(node.child_by_field("name")?, cx)?;
                let kind = if node.kind_str() == "class" {
                    NodeKind::Class
                } else {
                    NodeKind::Module
                };
                Some(
                    Def::new(kind, name, name_node, node)
                        .body(body_start(node))
                        .scope(scope),
                )
            }
            "method" => {
                let name_node = node.child_by_field("name")?;
                // The engine makes a Function in a class a Method; modules hold methods too.
                let kind = if enclosing == NodeKind::Module {
                    NodeKind::Method
                } else {
                    NodeKind::Function
                };
                Some(
                    Def::new(kind, cx.text(name_node).to_string(), name_node, node)
                        .body(method_body(node)),
                )
            }
            "singleton_method" => {
                let name_node = node.child_by_field("name")?;
                // `def self.x` belongs to the enclosing class; `def Other.x` to `Other`.
                let scope = node
                    .child_by_field("object")
                    .filter(|o| o.kind_str() != "self")
                    .map(|o| dotted(cx.text(o)));
                Some(
                    Def::new(
                        NodeKind::Method,
                        cx.text(name_node).to_string(),
                        name_node,
                        node,
                    )
                    .body(method_body(node))
                    .scope(scope),
                )
            }
            "assignment" => {
                let left = node.child_by_field("left")?;
                if !matches!(left.kind_str(), "constant" | "scope_resolution") {
                    return None;
                }
                let (name, name_node, scope) = constant_path(left, cx)?;
                Some(Def::new(NodeKind::Constant, name, name_node, node).scope(scope))
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call" => call(node, cx, out),
            // A bare `super` calls the superclass's method of the same name, with the same
            // arguments, also as a receiver (`super.merge(x)`); `super(...)` is a call of
            // its own.
            "super" if !called(node) => out.push(cx.reference(RefKind::Call, "super", node)),
            "class" => {
                let base = node
                    .child_by_field("superclass")
                    .and_then(|s| s.named_child(0));
                // `class A < Struct.new(:x)` inherits from an expression, reported as a call.
                if let Some(base) =
                    base.filter(|b| matches!(b.kind_str(), "constant" | "scope_resolution"))
                {
                    out.push(cx.reference(RefKind::Inherits, &dotted(cx.text(base)), base));
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, _path: &str, _root: Node, _cx: &Cx) -> String {
        String::new()
    }
}

fn call(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let method = node.child_by_field("method");
    let receiver = node.child_by_field("receiver");
    if receiver.is_none() {
        let name = method.map_or("", |m| cx.text(m));
        let args = node.child_by_field("arguments");
        match name {
            "require" | "require_relative" | "load" => {
                if let Some(arg) = args.and_then(|a| a.named_child(0)) {
                    let text = cx.text(arg);
                    let module = if arg.kind_str() == "string" {
                        unquote(text)
                    } else {
                        text
                    };
                    out.push(cx.import(module, "", None, node));
                    return;
                }
            }
            "include" | "extend" | "prepend" => {
                let mut mixins = Vec::new();
                if let Some(args) = args {
                    let mut c = args.walk();
                    for arg in args.named_children(&mut c) {
                        if matches!(arg.kind_str(), "constant" | "scope_resolution") {
                            mixins.push(arg);
                        }
                    }
                }
                if !mixins.is_empty() {
                    for m in mixins {
                        out.push(cx.reference(RefKind::Implements, &dotted(cx.text(m)), m));
                    }
                    return;
                }
            }
            _ => {}
        }
    }
    // The callee is everything up to the method name: `foo.bar.baz 1` -> `foo.bar.baz`.
    let Some(end) = method.or(receiver) else {
        return;
    };
    let callee = cx
        .src
        .get(node.start_byte()..end.end_byte())
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("");
    out.push(cx.reference(RefKind::Call, &dotted(callee), node));
}

/// Whether `node` is the method of a call, which records it.
fn called(node: Node) -> bool {
    node.parent().is_some_and(|p| {
        p.kind_str() == "call"
            && p.child_by_field("method")
                .is_some_and(|m| m.id() == node.id())
    })
}

/// Name, name node and dotted qualifier of a constant or constant path (`A::B::C` -> `C`
/// qualified by `A.B`; `::C` -> `C`).
fn constant_path<'t>(node: Node<'t>, cx: &Cx) -> Option<(String, Node<'t>, Option<String>)> {
    match node.kind_str() {
        "scope_resolution" => {
            let name = node.child_by_field("name")?;
            let scope = node
                .child_by_field("scope")
                .map(|s| dotted(cx.text(s)))
                .filter(|s| !s.is_empty());
            Some((cx.text(name).to_string(), name, scope))
        }
        _ => Some((cx.text(node).to_string(), node, None)),
    }
}

/// Where a method's signature ends; an endless `def x = expr` has only an expression, and its
/// whole text is the signature.
fn method_body(node: Node) -> Option<Node> {
    if node
        .child_by_field("body")
        .is_some_and(|b| b.kind_str() != "body_statement")
    {
        return None;
    }
    body_start(node)
}

/// Where the header of a `class`/`module`/`def` ends: at the body, at a comment between the
/// header and the body, or at `end` when the body is empty (`def x; end` -> `def x;`).
fn body_start(node: Node) -> Option<Node> {
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .find(|n| matches!(n.kind_str(), "body_statement" | "comment" | "end"));
    found
}

/// `A::B.c` -> `A.B.c`: constant paths joined with dots like qualified names.
fn dotted(text: &str) -> String {
    text.trim_start_matches("::").replace("::", ".")
}
