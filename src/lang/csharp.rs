//! C#: classes, structs and records (Class), interfaces, enums, delegates (Type), methods,
//! constructors, destructors (`~Name`), `const` fields (one Constant per declarator), local
//! functions, and block namespaces (Module, so nested types are qualified through them).
//! Properties, events, indexers and operators are not definitions. `///` XML doc comments
//! are the docs (tags kept). References: invocations (with their arguments' types where
//! literals and casts show them), `new Foo()` (and `Foo x = new()`), `: base(...)`/
//! `: this(...)` initializers, `using` directives, base lists, attributes on definitions,
//! method groups passed as arguments or subscribed to events, and bindings: parameters,
//! locals (`var` ones typed by their constructor), `foreach`, `catch`, pattern and `out`
//! variables, lambda parameters, fields, properties and primary-constructor parameters
//! (fields).
//! A type declaration that error recovery broke up is recovered from the error node.
//! The module name is a file-scoped `namespace A.B;`; "" when the file uses block namespaces
//! (they are Module definitions); otherwise the file's directory, dotted.

use super::java::{directory_module, recovered_type, strip_type_args, with_args};
use super::{Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct CSharp;

impl Rules for CSharp {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let kind = match node.kind_str() {
            "class_declaration" | "struct_declaration" | "record_declaration" => NodeKind::Class,
            "interface_declaration" => NodeKind::Interface,
            "enum_declaration" => NodeKind::Enum,
            "delegate_declaration" => NodeKind::Type,
            "namespace_declaration" => NodeKind::Module,
            // Methods only exist inside types; saying so keeps them methods even when an
            // error-recovered region loses the enclosing type.
            "method_declaration" | "constructor_declaration" => NodeKind::Method,
            "destructor_declaration" => {
                let name = node.child_by_field("name")?;
                // `~Name`, so that it does not collide with the constructor `Name`.
                return Some(
                    Def::new(NodeKind::Method, format!("~{}", cx.text(name)), name, node)
                        .body(node.child_by_field("body")),
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
        let name = node.child_by_field("name")?;
        let text: String = cx.text(name).split_whitespace().collect();
        Some(Def::new(kind, text, name, node).body(node.child_by_field("body")))
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "invocation_expression" => {
                if let Some(f) = node.child_by_field("function") {
                    let call = cx.reference(RefKind::Call, &callee(f, cx), node);
                    let args = node.child_by_field("arguments");
                    out.push(with_args(call, args, cx, arg_type));
                }
            }
            "object_creation_expression" => {
                if let Some(ty) = node.child_by_field("type") {
                    let name = strip_type_args(cx.text(ty), '<', '>');
                    out.push(cx.reference(RefKind::Call, &name, node));
                }
            }
            "constructor_initializer" => {
                // `: base(...)` / `: this(...)` calls the named constructor.
                let mut c = node.walk();
                let kw = node
                    .children(&mut c)
                    .find(|k| matches!(k.kind_str(), "base" | "this"));
                if let Some(kw) = kw {
                    // The arguments pick among the constructors.
                    let call = cx.reference(RefKind::Call, cx.text(kw), node);
                    let mut c = node.walk();
                    let args = node
                        .named_children(&mut c)
                        .find(|a| a.kind_str() == "argument_list");
                    out.push(with_args(call, args, cx, arg_type));
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
            // Fields, events and locals (`using` and `for` ones too). Visited in the class's
            // scope, before a constant's own declarator opens its definition.
            "variable_declaration" => {
                let kind = match node.parent().map(|p| p.kind_str()) {
                    Some("field_declaration" | "event_field_declaration") => RefKind::Field,
                    _ => RefKind::Local,
                };
                declarators(node, kind, cx, out);
            }
            "property_declaration" => {
                // A property is used like a field.
                if let Some(name) = node.child_by_field("name") {
                    let ty = node.child_by_field("type").and_then(|t| type_text(t, cx));
                    out.push(cx.binding(RefKind::Field, cx.text(name), ty.as_deref(), name));
                }
            }
            "parameter_list" => parameters(node, cx, out),
            "implicit_parameter" => {
                // `x => ...`
                out.push(cx.binding(RefKind::Local, cx.text(node), None, node));
            }
            "foreach_statement"
            | "catch_declaration"
            | "declaration_pattern"
            | "declaration_expression" => {
                // `foreach (Foo x in xs)`, `catch (E e)`, `o is Foo f`, `out Foo x`.
                let name = match node.kind_str() {
                    "foreach_statement" => node.child_by_field("left"),
                    _ => node.child_by_field("name"),
                };
                if let Some(name) = name.filter(|n| n.kind_str() == "identifier") {
                    let ty = node.child_by_field("type").and_then(|t| type_text(t, cx));
                    out.push(cx.binding(RefKind::Local, cx.text(name), ty.as_deref(), name));
                }
            }
            "argument" => {
                // A method group passed as a delegate: `xs.ForEach(Print)`, `this.Print`.
                if let Some(value) =
                    node.named_child(node.named_child_count().saturating_sub(1) as u32)
                {
                    if let Some(text) = method_group(value, cx) {
                        out.push(cx.reference(RefKind::Reference, &text, value));
                    }
                }
            }
            "assignment_expression" => {
                // Event subscription: `button.Click += OnClick`.
                let op = node.child_by_field("operator").map(|o| cx.text(o));
                if matches!(op, Some("+=" | "-=")) {
                    if let Some(value) = node.child_by_field("right") {
                        if let Some(text) = method_group(value, cx) {
                            out.push(cx.reference(RefKind::Reference, &text, value));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let mut c = root.walk();
        let mut block_namespaces = false;
        for child in root.named_children(&mut c) {
            match child.kind_str() {
                "file_scoped_namespace_declaration" => {
                    if let Some(name) = child.child_by_field("name") {
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

/// Every variable of a declaration, typed as declared; `var x = new Foo()` takes the type
/// it is constructed with. `Foo x = new()` calls the constructor of the declared type.
fn declarators(decl: Node, kind: RefKind, cx: &Cx, out: &mut Vec<RawRef>) {
    let ty_node = decl.child_by_field("type");
    let ty = ty_node.and_then(|t| type_text(t, cx));
    let mut c = decl.walk();
    for d in decl.named_children(&mut c) {
        if d.kind_str() != "variable_declarator" {
            continue;
        }
        let Some(name) = d.child_by_field("name") else {
            continue;
        };
        let mut c = d.walk();
        let value = d
            .named_children(&mut c)
            .find(|v| v.id() != name.id() && v.kind_str() != "bracketed_argument_list");
        let ty = match (&ty, value) {
            (Some(t), Some(v)) if v.kind_str() == "implicit_object_creation_expression" => {
                out.push(cx.reference(RefKind::Call, t, v));
                Some(t.clone())
            }
            (Some(t), _) => Some(t.clone()),
            (None, Some(v)) if v.kind_str() == "object_creation_expression" => v
                .child_by_field("type")
                .and_then(|t| type_text(t, cx))
                .map(|t| format!("{t}()")),
            _ => None,
        };
        out.push(cx.binding(kind, cx.text(name), ty.as_deref(), name));
    }
}

/// Parameters of a method, constructor, lambda or local function are locals; those of a
/// class, struct or record (primary constructor) are visible to all its members.
fn parameters(list: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let kind = match list.parent().map(|p| p.kind_str()) {
        Some("class_declaration" | "struct_declaration" | "record_declaration") => RefKind::Field,
        _ => RefKind::Local,
    };
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        if p.kind_str() != "parameter" {
            continue;
        }
        if let Some(name) = p.child_by_field("name") {
            let ty = p.child_by_field("type").and_then(|t| type_text(t, cx));
            out.push(cx.binding(kind, cx.text(name), ty.as_deref(), name));
        }
    }
    // `params T[] rest` is written straight into the list.
    if let Some(name) = list.child_by_field("name") {
        out.push(cx.binding(kind, cx.text(name), None, name));
    }
}

/// The type of an argument where the text shows it: literals, casts and `new T(...)`.
/// Named and `ref`/`out` arguments are left unknown.
fn arg_type(arg: Node, cx: &Cx) -> Option<String> {
    if arg.child_by_field("name").is_some() || arg.named_child_count() != 1 {
        return None;
    }
    let mut c = arg.walk();
    if arg
        .children(&mut c)
        .any(|k| matches!(k.kind_str(), "ref" | "out" | "in"))
    {
        return None;
    }
    let value = arg.named_child(0)?;
    let ty = match value.kind_str() {
        "string_literal"
        | "verbatim_string_literal"
        | "raw_string_literal"
        | "interpolated_string_expression" => "string",
        "character_literal" => "char",
        "integer_literal" => {
            let t = cx.text(value);
            if t.ends_with(['u', 'U']) || t.contains("UL") || t.contains("ul") {
                return None;
            }
            match t.ends_with(['l', 'L']) {
                true => "long",
                false => "int",
            }
        }
        "real_literal" => match cx.text(value).chars().last() {
            Some('f' | 'F') => "float",
            Some('m' | 'M') => "decimal",
            _ => "double",
        },
        "boolean_literal" => "bool",
        "cast_expression" | "object_creation_expression" => {
            return Some(strip_type_args(
                cx.text(value.child_by_field("type")?),
                '<',
                '>',
            ))
        }
        _ => return None,
    };
    Some(ty.to_string())
}

/// A type worth looking up: a named type without type arguments (`Foo?` is `Foo`).
/// Predefined, array, tuple and pointer types, and `var`, bind no type.
fn type_text(ty: Node, cx: &Cx) -> Option<String> {
    let mut ty = ty;
    while ty.kind_str() == "nullable_type" {
        ty = ty.named_child(0)?;
    }
    match ty.kind_str() {
        "identifier" | "qualified_name" | "generic_name" => {
            Some(strip_type_args(cx.text(ty), '<', '>'))
        }
        _ => None,
    }
}

/// An argument that may name a method: a bare name, or a member of `this`/`base`. Other
/// member accesses are almost always property reads.
fn method_group(value: Node, cx: &Cx) -> Option<String> {
    match value.kind_str() {
        "identifier" => Some(cx.text(value).to_string()),
        "member_access_expression" => {
            let text: String = cx.text(value).split_whitespace().collect();
            let rest = text
                .strip_prefix("this.")
                .or_else(|| text.strip_prefix("base."))?;
            (!rest.contains(['.', '(', '[', '<'])).then_some(text)
        }
        _ => None,
    }
}

/// A declarator of a `const` field.
fn constant<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let field = const_field(node, cx)?;
    let name = node.child_by_field("name")?;
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
    if field.kind_str() != "field_declaration" {
        return None;
    }
    let mut c = field.walk();
    let is_const = field
        .named_children(&mut c)
        .any(|m| m.kind_str() == "modifier" && cx.text(m) == "const");
    is_const.then_some(field)
}

/// The callee of an invocation without type arguments: `this.Do<int>` -> `this.Do`.
fn callee(f: Node, cx: &Cx) -> String {
    match f.kind_str() {
        "generic_name" => first_identifier(f, cx),
        "member_access_expression" => {
            let (Some(expr), Some(name)) =
                (f.child_by_field("expression"), f.child_by_field("name"))
            else {
                return cx.text(f).to_string();
            };
            let name = if name.kind_str() == "generic_name" {
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
        .find(|n| n.kind_str() == "identifier");
    id.map_or_else(|| cx.text(generic).to_string(), |n| cx.text(n).to_string())
}

/// Attributes on a definition, as decorators (name without brackets or arguments).
fn attributes(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = def.walk();
    for list in def.named_children(&mut c) {
        if list.kind_str() != "attribute_list" {
            continue;
        }
        let mut c = list.walk();
        for attr in list.named_children(&mut c) {
            if attr.kind_str() != "attribute" {
                continue;
            }
            if let Some(name) = attr.child_by_field("name") {
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
    let is_struct = def.kind_str() == "struct_declaration" || {
        let mut c = def.walk();
        let is_record_struct = def.kind_str() == "record_declaration"
            && def.children(&mut c).any(|k| k.kind_str() == "struct");
        is_record_struct
    };
    let mut c = def.walk();
    let Some(list) = def
        .named_children(&mut c)
        .find(|n| n.kind_str() == "base_list")
    else {
        return;
    };
    let mut c = list.walk();
    for base in list.named_children(&mut c) {
        let ty = match base.kind_str() {
            "argument_list" => continue,
            "primary_constructor_base_type" => match base.child_by_field("type") {
                Some(t) => t,
                None => continue,
            },
            _ => base,
        };
        let name = strip_type_args(cx.text(ty), '<', '>');
        let kind = if def.kind_str() == "interface_declaration" {
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
    let alias = node.child_by_field("name");
    let mut c = node.walk();
    let Some(target) = node
        .named_children(&mut c)
        .find(|n| Some(n.id()) != alias.map(|a| a.id()))
    else {
        return;
    };
    let path: String = cx.text(target).split_whitespace().collect();
    let mut c = node.walk();
    let is_static = node.children(&mut c).any(|k| k.kind_str() == "static");
    if let Some(alias) = alias {
        let (module, name) = path.rsplit_once('.').unwrap_or(("", &path));
        out.push(cx.import(module, name, Some(cx.text(alias)), node));
    } else if is_static {
        out.push(cx.import(&path, "*", None, node));
    } else {
        out.push(cx.import(&path, "", None, node));
    }
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::extract_on_worker;
    use crate::model::RefKind;

    #[test]
    fn a_nullable_type_binds_its_underlying_type() {
        let src = "class C { void F() { Foo? x = null; x.Run(); } }\n";
        let x = extract_on_worker("a.cs", src.into());
        let local = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::Local && r.name == "x");
        assert_eq!(local.and_then(|r| r.module.as_deref()), Some("Foo"));
    }
}
