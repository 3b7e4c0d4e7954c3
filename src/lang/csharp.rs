//! C#: classes, structs and records (Class), interfaces, enums, delegates (Type), methods,
//! constructors, destructors (`~Name`), `const` fields (one Constant per declarator), local
//! functions, and block namespaces (Module, so nested types are qualified through them).
//! Properties, events, indexers and operators are not definitions. `///` XML doc comments
//! are the docs (tags kept). References: invocations, `new Foo()`, `: base(...)`/`: this(...)`
//! initializers, `using` directives, base lists and attributes on definitions.
//! A type declaration that error recovery broke up is recovered from the error node.
//! The module name is a file-scoped `namespace A.B;`; "" when the file uses block namespaces
//! (they are Module definitions); otherwise the file's directory, dotted.

use super::java::{directory_module, recovered_type, strip_type_args};
use super::{Cx, Def, Rules};
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct CSharp;

impl Rules for CSharp {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let kind = match node.kind() {
            "class_declaration" | "struct_declaration" | "record_declaration" => NodeKind::Class,
            "interface_declaration" => NodeKind::Interface,
            "enum_declaration" => NodeKind::Enum,
            "delegate_declaration" => NodeKind::Type,
            "namespace_declaration" => NodeKind::Module,
            // Methods only exist inside types; saying so keeps them methods even when an
            // error-recovered region loses the enclosing type.
            "method_declaration" | "constructor_declaration" => NodeKind::Method,
            "destructor_declaration" => {
                let name = node.child_by_field_name("name")?;
                // `~Name`, so that it does not collide with the constructor `Name`.
                return Some(
                    Def::new(NodeKind::Method, format!("~{}", cx.text(name)), name, node)
                        .body(node.child_by_field_name("body")),
                );
            }
            "local_function_statement" => NodeKind::Function,
            "variable_declarator" => return constant(node, cx),
            "ERROR" => {
                return recovered_type(
                    node,
                    cx,
                    &[
                        ("class", NodeKind::Class),
                        ("struct", NodeKind::Class),
                        ("record", NodeKind::Class),
                        ("interface", NodeKind::Interface),
                        ("enum", NodeKind::Enum),
                    ],
                    &[
                        "type_parameter_list",
                        "parameter_list",
                        "base_list",
                        "type_parameter_constraints_clause",
                    ],
                )
            }
            _ => return None,
        };
        let name = node.child_by_field_name("name")?;
        let text: String = cx.text(name).split_whitespace().collect();
        Some(Def::new(kind, text, name, node).body(node.child_by_field_name("body")))
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind() {
            "invocation_expression" => {
                if let Some(f) = node.child_by_field_name("function") {
                    out.push(cx.reference(RefKind::Call, &callee(f, cx), node));
                }
            }
            "object_creation_expression" => {
                if let Some(ty) = node.child_by_field_name("type") {
                    let name = strip_type_args(cx.text(ty), '<', '>');
                    out.push(cx.reference(RefKind::Call, &name, node));
                }
            }
            "constructor_initializer" => {
                // `: base(...)` / `: this(...)` calls the named constructor.
                let mut c = node.walk();
                let kw = node
                    .children(&mut c)
                    .find(|k| matches!(k.kind(), "base" | "this"));
                if let Some(kw) = kw {
                    out.push(cx.reference(RefKind::Call, cx.text(kw), node));
                }
            }
            "using_directive" => using(node, cx, out),
            "class_declaration"
            | "struct_declaration"
            | "record_declaration"
            | "interface_declaration" => {
                attributes(node, cx, out);
                bases(node, cx, out);
            }
            "enum_declaration"
            | "delegate_declaration"
            | "method_declaration"
            | "constructor_declaration"
            | "destructor_declaration"
            | "local_function_statement" => attributes(node, cx, out),
            "variable_declarator" => {
                // A constant's attributes sit on the shared field declaration.
                if let Some(field) = const_field(node, cx) {
                    attributes(field, cx, out);
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let mut c = root.walk();
        let mut block_namespaces = false;
        for child in root.named_children(&mut c) {
            match child.kind() {
                "file_scoped_namespace_declaration" => {
                    if let Some(name) = child.child_by_field_name("name") {
                        return cx.text(name).split_whitespace().collect();
                    }
                }
                "namespace_declaration" => block_namespaces = true,
                _ => {}
            }
        }
        if block_namespaces {
            String::new()
        } else {
            directory_module(path)
        }
    }
}

/// A declarator of a `const` field.
fn constant<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let field = const_field(node, cx)?;
    let name = node.child_by_field_name("name")?;
    // The whole field declaration is the definition: its attributes, modifiers and doc
    // comment apply to every declarator in it.
    Some(Def::new(
        NodeKind::Constant,
        cx.text(name).to_string(),
        name,
        field,
    ))
}

/// The `const` field declaration a variable declarator belongs to, if it is one.
fn const_field<'t>(declarator: Node<'t>, cx: &Cx) -> Option<Node<'t>> {
    let field = declarator.parent()?.parent()?;
    if field.kind() != "field_declaration" {
        return None;
    }
    let mut c = field.walk();
    let is_const = field
        .named_children(&mut c)
        .any(|m| m.kind() == "modifier" && cx.text(m) == "const");
    is_const.then_some(field)
}

/// The callee of an invocation without type arguments: `this.Do<int>` -> `this.Do`.
fn callee(f: Node, cx: &Cx) -> String {
    match f.kind() {
        "generic_name" => first_identifier(f, cx),
        "member_access_expression" => {
            let (Some(expr), Some(name)) = (
                f.child_by_field_name("expression"),
                f.child_by_field_name("name"),
            ) else {
                return cx.text(f).to_string();
            };
            let name = if name.kind() == "generic_name" {
                first_identifier(name, cx)
            } else {
                cx.text(name).to_string()
            };
            format!("{}.{}", cx.text(expr), name)
        }
        _ => cx.text(f).to_string(),
    }
}

fn first_identifier(generic: Node, cx: &Cx) -> String {
    let mut c = generic.walk();
    let id = generic
        .named_children(&mut c)
        .find(|n| n.kind() == "identifier");
    id.map_or_else(|| cx.text(generic).to_string(), |n| cx.text(n).to_string())
}

/// Attributes on a definition, as decorators (name without brackets or arguments).
fn attributes(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = def.walk();
    for list in def.named_children(&mut c) {
        if list.kind() != "attribute_list" {
            continue;
        }
        let mut c = list.walk();
        for attr in list.named_children(&mut c) {
            if attr.kind() != "attribute" {
                continue;
            }
            if let Some(name) = attr.child_by_field_name("name") {
                let name = strip_type_args(cx.text(name), '<', '>');
                out.push(cx.reference(RefKind::Decorator, &name, attr));
            }
        }
    }
}

/// The base list. C# does not say syntactically which base is a class: interfaces and
/// structs only have interface bases; for classes and records a base named like an
/// interface (`IFoo`) is implemented and any other base is inherited. An interface's bases
/// are the interfaces it inherits from.
fn bases(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let is_struct = def.kind() == "struct_declaration" || {
        let mut c = def.walk();
        let is_record_struct = def.kind() == "record_declaration"
            && def.children(&mut c).any(|k| k.kind() == "struct");
        is_record_struct
    };
    let mut c = def.walk();
    let Some(list) = def.named_children(&mut c).find(|n| n.kind() == "base_list") else {
        return;
    };
    let mut c = list.walk();
    for base in list.named_children(&mut c) {
        let ty = match base.kind() {
            "argument_list" => continue,
            "primary_constructor_base_type" => match base.child_by_field_name("type") {
                Some(t) => t,
                None => continue,
            },
            _ => base,
        };
        let name = strip_type_args(cx.text(ty), '<', '>');
        let kind = if def.kind() == "interface_declaration" {
            RefKind::Inherits
        } else if is_struct || looks_like_interface(&name) {
            RefKind::Implements
        } else {
            RefKind::Inherits
        };
        out.push(cx.reference(kind, &name, ty));
    }
}

/// `IDisposable`, `System.IComparable`: `I` followed by an uppercase letter.
fn looks_like_interface(name: &str) -> bool {
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    let mut chars = last.chars();
    chars.next() == Some('I') && chars.next().is_some_and(|c| c.is_uppercase())
}

/// `using A.B;` imports namespace `A.B` whole; `using static A.B;` imports the members of
/// type `A.B` (name `*`); `using X = A.B;` imports `B` from `A` as `X`.
fn using(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let alias = node.child_by_field_name("name");
    let mut c = node.walk();
    let Some(target) = node
        .named_children(&mut c)
        .find(|n| Some(n.id()) != alias.map(|a| a.id()))
    else {
        return;
    };
    let path: String = cx.text(target).split_whitespace().collect();
    let mut c = node.walk();
    let is_static = node.children(&mut c).any(|k| k.kind() == "static");
    if let Some(alias) = alias {
        let (module, name) = path.rsplit_once('.').unwrap_or(("", &path));
        out.push(cx.import(module, name, Some(cx.text(alias)), node));
    } else if is_static {
        out.push(cx.import(&path, "*", None, node));
    } else {
        out.push(cx.import(&path, "", None, node));
    }
}
