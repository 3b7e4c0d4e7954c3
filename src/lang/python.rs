//! Python: functions, classes, methods (decorated ones included, the `def` line is the
//! definition's line), UPPER_CASE module/class constants, docstrings, calls, imports,
//! base classes and decorators. Module names come from the path (`src/` layouts stripped).

use super::{dedent, dotted_module, unquote, Cx, Def, Rules};
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Python;

impl Rules for Python {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind() {
            "function_definition" | "class_definition" => {
                // A decorated definition is reported from its `decorated_definition` wrapper.
                if node
                    .parent()
                    .is_some_and(|p| p.kind() == "decorated_definition")
                {
                    return None;
                }
                self.def_of(node, node, cx)
            }
            "decorated_definition" => {
                let inner = node.child_by_field_name("definition")?;
                self.def_of(inner, node, cx)
            }
            "assignment" if matches!(enclosing, NodeKind::File | NodeKind::Class) => {
                // Only plain statements `NAME = ...` at module or class level.
                if node.parent()?.kind() != "expression_statement" {
                    return None;
                }
                let left = node.child_by_field_name("left")?;
                if left.kind() != "identifier" {
                    return None;
                }
                let name = cx.text(left);
                is_constant_name(name)
                    .then(|| Def::new(NodeKind::Constant, name.to_string(), left, node))
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind() {
            "call" => {
                if let Some(f) = node.child_by_field_name("function") {
                    out.push(cx.reference(RefKind::Call, cx.text(f), node));
                }
            }
            "decorator" => {
                if let Some(expr) = node.named_child(0) {
                    let target = match expr.kind() {
                        "call" => expr.child_by_field_name("function").unwrap_or(expr),
                        _ => expr,
                    };
                    out.push(cx.reference(RefKind::Decorator, cx.text(target), node));
                }
            }
            "class_definition" => {
                if let Some(bases) = node.child_by_field_name("superclasses") {
                    let mut c = bases.walk();
                    for base in bases.named_children(&mut c) {
                        if base.kind() != "keyword_argument" {
                            out.push(cx.reference(RefKind::Inherits, cx.text(base), base));
                        }
                    }
                }
            }
            "import_statement" => {
                let mut c = node.walk();
                for item in node.children_by_field_name("name", &mut c) {
                    let (name, alias) = split_alias(item, cx);
                    out.push(cx.import(name, "", alias, node));
                }
            }
            "import_from_statement" => {
                let module = cx.field(node, "module_name").unwrap_or("");
                let mut c = node.walk();
                let mut any = false;
                for item in node.children_by_field_name("name", &mut c) {
                    let (name, alias) = split_alias(item, cx);
                    out.push(cx.import(module, name, alias, node));
                    any = true;
                }
                if !any {
                    // `from m import *`
                    out.push(cx.import(module, "*", None, node));
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &["src/", "lib/"], &["__init__"])
    }
}

impl Python {
    fn def_of<'t>(&self, def: Node<'t>, outer: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
        let name_node = def.child_by_field_name("name")?;
        let kind = if def.kind() == "class_definition" {
            NodeKind::Class
        } else {
            NodeKind::Function
        };
        let body = def.child_by_field_name("body");
        // The line of `def`/`class` (not the decorator), as Python's `ast` reports it.
        let mut d = Def::new(kind, cx.text(name_node).to_string(), def, outer)
            .body(body)
            .docstring(body.and_then(|b| docstring(b, cx)));
        d.name_node = def;
        Some(d)
    }
}

fn split_alias<'a>(item: Node, cx: &Cx<'a>) -> (&'a str, Option<&'a str>) {
    if item.kind() == "aliased_import" {
        (
            cx.field(item, "name").unwrap_or(""),
            cx.field(item, "alias"),
        )
    } else {
        (cx.text(item), None)
    }
}

/// `MAX_SIZE`, `DEFAULT_TIMEOUT_2`: all caps with at least one letter.
fn is_constant_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The docstring: a string literal as the body's first statement, dedented like
/// `inspect.cleandoc`.
fn docstring(body: Node, cx: &Cx) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let s = first.named_child(0)?;
    if s.kind() != "string" && s.kind() != "concatenated_string" {
        return None;
    }
    Some(clean_doc(unquote(cx.text(s))))
}

/// Like `inspect.cleandoc`: the first line trimmed, the rest dedented together.
fn clean_doc(raw: &str) -> String {
    let (first, rest) = raw.split_once('\n').unwrap_or((raw, ""));
    format!("{}\n{}", first.trim(), dedent(rest))
        .trim()
        .to_string()
}
