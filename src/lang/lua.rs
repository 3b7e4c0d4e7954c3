//! Lua: `function f()`, `local function f()`, `function M.f()` / `function a.b.f()` (scope
//! `M` / `a.b`), `function M:m()` (a method of `M`) and functions assigned to names
//! (`f = function() end`, `local f = function() end`, `M.f = function() end`). The `--`/`---`
//! comments above a function are its docs. References: calls (`f()`, `M.f()`, `obj:m()`) and
//! `require("x")` / `require "x"` imports (the local it is assigned to is the alias).
//! Module names come from the path (`lua/` and `src/` layouts stripped, `init.lua` is its
//! folder).

use super::{dotted_module, unquote, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Lua;

impl Rules for Lua {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "function_declaration" => {
                let name_node = node.child_by_field("name")?;
                let (name_node, name, scope) = split_target(name_node, cx)?;
                Some(
                    Def::new(NodeKind::Function, name, name_node, node)
                        .body(function_body(node))
                        .scope(scope),
                )
            }
            // Reported from the function value, so that the definition's scope is the
            // function alone; the assignment around it is the outer range and signature.
            "function_definition" => {
                let Some((target, statement)) = assigned_to(node) else {
                    return table_field(node, cx);
                };
                let (name_node, name, scope) = split_target(target, cx)?;
                Some(
                    Def::new(NodeKind::Function, name, name_node, statement)
                        .body(function_body(node))
                        .scope(scope),
                )
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        if node.kind_str() != "function_call" {
            return;
        }
        let Some(callee) = node.child_by_field("name") else {
            return;
        };
        let name = cx.text(callee);
        if name == "require" {
            if let Some(module) = required_module(node, cx) {
                let alias = assigned_to(node).and_then(|(target, _)| {
                    (target.kind_str() == "identifier").then(|| cx.text(target))
                });
                out.push(cx.import(module, "", alias, node));
                return;
            }
        }
        out.push(cx.reference(RefKind::Call, name, node));
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &["lua/", "src/"], &["init"])
    }
}

/// `{ key = function() end }`: a function stored under a key of a table literal, qualified by
/// the variable the table is assigned to (`local M = { f = ... }` gives `M.f`), if any.
fn table_field<'t>(func: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let field = func.parent().filter(|p| p.kind_str() == "field")?;
    let key = field
        .child_by_field("name")
        .filter(|k| k.kind_str() == "identifier")?;
    let table = field
        .parent()
        .filter(|p| p.kind_str() == "table_constructor")?;
    let scope = assigned_to(table)
        .and_then(|(target, _)| split_target(target, cx))
        .map(|(_, name, scope)| match scope {
            Some(outer) => format!("{outer}.{name}"),
            None => name,
        });
    Some(
        Def::new(NodeKind::Function, cx.text(key).to_string(), key, field)
            .body(function_body(func))
            .scope(scope),
    )
}

/// The block, or for an empty function the closing `end`, where the signature stops.
fn function_body(func: Node) -> Option<Node> {
    func.child_by_field("body").or_else(|| {
        let mut c = func.walk();
        let last = func.children(&mut c).last()?;
        (last.kind_str() == "end").then_some(last)
    })
}

/// `f` -> (`f`, no scope); `M.f` -> (`f`, `M`); `a.b.f` -> (`f`, `a.b`); `M:m` -> (`m`, `M`).
/// Bracket targets (`t["k"]`) are not names.
fn split_target<'t>(target: Node<'t>, cx: &Cx) -> Option<(Node<'t>, String, Option<String>)> {
    match target.kind_str() {
        "identifier" => Some((target, cx.text(target).to_string(), None)),
        "dot_index_expression" | "method_index_expression" => {
            let field = if target.kind_str() == "dot_index_expression" {
                "field"
            } else {
                "method"
            };
            let name_node = target.child_by_field(field)?;
            let table = target.child_by_field("table")?;
            let scope = cx.text(table).split_whitespace().collect::<String>();
            // `a.b.f` keeps dots; `a:b` cannot be a table, so only dotted paths are scopes.
            if !scope
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            {
                return None;
            }
            Some((name_node, cx.text(name_node).to_string(), Some(scope)))
        }
        _ => None,
    }
}

/// For a value in `a, b = v1, v2` (or `local ...`): the variable it is assigned to and the
/// whole statement (the `variable_declaration` for locals, so that `local` and the comments
/// above belong to it).
fn assigned_to(value: Node) -> Option<(Node, Node)> {
    let list = value.parent()?;
    if list.kind_str() != "expression_list" {
        return None;
    }
    let assignment = list.parent()?;
    if assignment.kind_str() != "assignment_statement" {
        return None;
    }
    let mut c = list.walk();
    let index = list
        .children_by_field_name("value", &mut c)
        .position(|v| v.id() == value.id())?;
    let vars = assignment.named_child_of_kind("variable_list")?;
    let mut c = vars.walk();
    let target = vars.children_by_field_name("name", &mut c).nth(index)?;
    let statement = match assignment.parent() {
        Some(p) if p.kind_str() == "variable_declaration" => p,
        _ => assignment,
    };
    Some((target, statement))
}

/// The module of `require("x")` / `require "x"` when it is a literal string.
fn required_module<'a>(call: Node, cx: &Cx<'a>) -> Option<&'a str> {
    let args = call.child_by_field("arguments")?;
    let first = args.named_child(0)?;
    if first.kind_str() != "string" {
        return None;
    }
    Some(match first.child_by_field("content") {
        Some(content) => cx.text(content),
        None => unquote(cx.text(first)),
    })
}
