//! Swift: classes, structs and actors (Class), enums, protocols (Interface), functions,
//! methods, initializers and deinitializers (`init`/`deinit`), subscripts, protocol
//! requirements, type aliases, and constants (`static let` in types, UPPER_CASE top-level
//! `let`). Extensions only name a scope: their members become `Type.member`. References:
//! calls, imports, inheritance clauses (a class's first entry is its superclass, every other
//! entry a conformance) and attributes (`@objc`, `@MainActor`) as decorators. Module names
//! come from the path with `Sources/` or `src/` stripped.

use super::{dotted_module, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Swift;

impl Rules for Swift {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "class_declaration" => {
                let keyword = node.child_by_field("declaration_kind")?.kind_str();
                let name_node = node.child_by_field("name")?;
                let body = node.child_by_field("body");
                if keyword == "extension" {
                    // `extension Foo.Bar<T>: P` adds members to `Foo.Bar`; it is not a type
                    // of its own, only the scope that qualifies its members.
                    let name = extended_type_name(cx.text(name_node));
                    let mut def = Def::new(NodeKind::Class, name, name_node, node).body(body);
                    def.scope_only = true;
                    return Some(def);
                }
                let kind = if keyword == "enum" {
                    NodeKind::Enum
                } else {
                    NodeKind::Class
                };
                Some(Def::new(kind, cx.text(name_node).to_string(), name_node, node).body(body))
            }
            "protocol_declaration" => {
                let name_node = node.child_by_field("name")?;
                Some(
                    Def::new(
                        NodeKind::Interface,
                        cx.text(name_node).to_string(),
                        name_node,
                        node,
                    )
                    .body(node.child_by_field("body")),
                )
            }
            "function_declaration" | "protocol_function_declaration" => {
                // `name` is a multiple field (the return type shares it); the first is the name,
                // an identifier or an operator token (`static func ==`).
                let name_node = node.child_by_field("name")?;
                Some(
                    Def::new(
                        NodeKind::Function,
                        cx.text(name_node).to_string(),
                        name_node,
                        node,
                    )
                    .body(node.child_by_field("body")),
                )
            }
            "init_declaration" => {
                let name_node = node.child_by_field("name")?;
                Some(
                    Def::new(NodeKind::Method, "init".to_string(), name_node, node)
                        .body(node.child_by_field("body")),
                )
            }
            "deinit_declaration" => {
                let keyword = child_of_kind(node, "deinit")?;
                Some(
                    Def::new(NodeKind::Method, "deinit".to_string(), keyword, node)
                        .body(node.child_by_field("body")),
                )
            }
            "subscript_declaration" => {
                let keyword = child_of_kind(node, "subscript")?;
                Some(
                    Def::new(NodeKind::Method, "subscript".to_string(), keyword, node)
                        .body(child_of_kind(node, "computed_property")),
                )
            }
            "typealias_declaration" => {
                let name_node = node.child_by_field("name")?;
                Some(Def::new(
                    NodeKind::Type,
                    cx.text(name_node).to_string(),
                    name_node,
                    node,
                ))
            }
            "property_declaration" => {
                // One binding per declaration is the norm: the declaration is the definition.
                constant_def(node, single_binding(node)?, node, cx)
            }
            "pattern" => {
                // `static let a = 1, b = 2`: each binding of a multi-binding declaration is
                // its own definition.
                let decl = node.parent()?;
                if decl.kind_str() != "property_declaration" {
                    return None;
                }
                let mut c = decl.walk();
                let names: Vec<Node> = decl.children_by_field_name("name", &mut c).collect();
                if names.len() < 2 || !names.iter().any(|n| n.id() == node.id()) {
                    return None;
                }
                constant_def(decl, node, decl, cx)
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call_expression" => {
                if let Some(callee) = node.named_child(0) {
                    out.push(cx.reference(RefKind::Call, cx.text(callee), node));
                }
            }
            "import_declaration" => import(node, cx, out),
            "class_declaration" | "protocol_declaration" => {
                decorators(node, cx, out);
                let is_class = node
                    .child_by_field("declaration_kind")
                    .is_some_and(|k| k.kind_str() == "class");
                let mut c = node.walk();
                let mut first = true;
                for spec in node.children(&mut c) {
                    if spec.kind_str() != "inheritance_specifier" {
                        continue;
                    }
                    let Some(base) = spec.child_by_field("inherits_from") else {
                        continue;
                    };
                    // Only a class has a superclass, and Swift requires it to come first.
                    let kind = if is_class && first {
                        RefKind::Inherits
                    } else {
                        RefKind::Implements
                    };
                    first = false;
                    out.push(cx.reference(kind, cx.text(base), base));
                }
            }
            "function_declaration"
            | "protocol_function_declaration"
            | "init_declaration"
            | "deinit_declaration"
            | "subscript_declaration"
            | "typealias_declaration" => decorators(node, cx, out),
            // Attributes of ordinary properties (`@Published var x`) would otherwise land on
            // the enclosing type; only constants are definitions of their own.
            "property_declaration" if is_constant_declaration(node, cx) => {
                decorators(node, cx, out)
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &["Sources/", "src/"], &[])
    }
}

/// A constant binding: `static let` inside a type body (extensions included), or a top-level
/// `let` whose name is UPPER_CASE. Locals and `var`s are not definitions.
fn constant_def<'t>(
    decl: Node<'t>,
    pattern: Node<'t>,
    outer: Node<'t>,
    cx: &Cx,
) -> Option<Def<'t>> {
    let ident = pattern.child_by_field("bound_identifier")?;
    let name = cx.text(ident);
    let mut c = decl.walk();
    let is_let = decl
        .children(&mut c)
        .find(|n| n.kind_str() == "value_binding_pattern")
        .and_then(|b| b.child_by_field("mutability"))
        .is_some_and(|m| m.kind_str() == "let");
    if !is_let {
        return None;
    }
    let constant = match decl.parent()?.kind_str() {
        "source_file" => is_constant_name(name),
        "class_body" | "enum_class_body" | "protocol_body" => has_static(decl, cx),
        _ => false,
    };
    constant.then(|| Def::new(NodeKind::Constant, name.to_string(), ident, outer))
}

fn is_constant_declaration(decl: Node, cx: &Cx) -> bool {
    single_binding(decl).is_some_and(|p| constant_def(decl, p, decl, cx).is_some())
}

/// The only binding pattern of a declaration, `None` for `let a = 1, b = 2`.
fn single_binding(decl: Node) -> Option<Node> {
    let mut c = decl.walk();
    let mut names = decl.children_by_field_name("name", &mut c);
    let first = names.next()?;
    names.next().is_none().then_some(first)
}

fn has_static(decl: Node, cx: &Cx) -> bool {
    let mut c = decl.walk();
    let Some(mods) = decl.children(&mut c).find(|n| n.kind_str() == "modifiers") else {
        return false;
    };
    let mut c = mods.walk();
    let found = mods
        .children(&mut c)
        .any(|m| m.kind_str() == "property_modifier" && cx.text(m) == "static");
    found
}

/// Attributes written on a declaration, directly or among its modifiers, as decorators named
/// without `@` or arguments (`@available(iOS 13, *)` -> `available`).
fn decorators(decl: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = decl.walk();
    for child in decl.children(&mut c) {
        match child.kind_str() {
            "attribute" => decorator(child, cx, out),
            "modifiers" => {
                let mut mc = child.walk();
                for attr in child.children(&mut mc) {
                    if attr.kind_str() == "attribute" {
                        decorator(attr, cx, out);
                    }
                }
            }
            _ => {}
        }
    }
}

fn decorator(attr: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    if let Some(name) = attr.named_child(0) {
        out.push(cx.reference(RefKind::Decorator, cx.text(name), attr));
    }
}

/// `import Foundation` imports a module; `import struct Foo.Bar` imports one item of `Foo`.
fn import(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    let mut path = None;
    let mut item_import = false;
    for child in node.children(&mut c) {
        match child.kind_str() {
            "identifier" => path = Some(cx.text(child)),
            "typealias" | "struct" | "class" | "enum" | "protocol" | "let" | "var" | "func" => {
                item_import = true
            }
            _ => {}
        }
    }
    let Some(path) = path else { return };
    match path.rsplit_once('.') {
        Some((module, item)) if item_import => out.push(cx.import(module, item, None, node)),
        _ => out.push(cx.import(path, "", None, node)),
    }
}

/// `Foo.Bar<T>` -> `Foo.Bar`: the extended type without generic arguments or whitespace.
fn extended_type_name(text: &str) -> String {
    let base = text.split('<').next().unwrap_or(text);
    base.chars().filter(|c| !c.is_whitespace()).collect()
}

fn child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut c = node.walk();
    let found = node.children(&mut c).find(|n| n.kind_str() == kind);
    found
}

/// `MAX_SIZE`, `LIMIT2`: all caps with at least one letter.
fn is_constant_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}
