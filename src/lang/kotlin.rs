//! Kotlin (tree-sitter-kotlin-ng): classes (data, sealed, inner ...), enum classes (Enum),
//! interfaces and annotation classes (Interface), object declarations and companion objects
//! (Class; an unnamed companion is `Companion`), functions (members are Methods, extension
//! functions `fun T.f()` are qualified through their receiver type `T`), secondary
//! constructors (named after their class), `const val` and UPPER_CASE `val` at top level or
//! in objects (Constant), and type aliases (Type). KDoc comes from the leading comment.
//! References: calls (`a!!.b` and `this@Outer.m` written `a.b`, `this.m`; with their
//! arguments' types where literals show them), `this(...)`/`super(...)` delegation, imports,
//! supertypes (a constructor call `Base()` is inherited, a bare type implemented),
//! annotations, callable references (`::f`, `Foo::bar`), and bindings: parameters, local and
//! top-level properties (typed as declared or by the call that initializes them), loop,
//! catch, `when` and lambda variables (`it` too), properties of classes and objects and
//! `val`/`var` constructor parameters (fields).
//! A type declaration that error recovery broke up is recovered from the error node.
//! The module name is the declared `package`, else the file's directory, dotted.

use super::java::{directory_module, recovered_type, strip_type_args, with_args};
use super::{Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Kotlin;

impl Rules for Kotlin {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "class_declaration" => {
                let name = node.child_by_field("name")?;
                let kind = if has_child_kind(node, "interface") {
                    NodeKind::Interface
                } else if has_modifier(node, "enum", cx) {
                    NodeKind::Enum
                } else if has_modifier(node, "annotation", cx) {
                    NodeKind::Interface
                } else {
                    NodeKind::Class
                };
                Some(Def::new(kind, cx.text(name).to_string(), name, node).body(class_body(node)))
            }
            "object_declaration" => {
                let name = node.child_by_field("name")?;
                Some(
                    Def::new(NodeKind::Class, cx.text(name).to_string(), name, node)
                        .body(class_body(node)),
                )
            }
            "companion_object" => {
                let (name, name_node) = match node.child_by_field("name") {
                    Some(n) => (cx.text(n).to_string(), n),
                    // The compiler names an anonymous companion `Companion`.
                    None => (
                        "Companion".to_string(),
                        keyword(node, "object").unwrap_or(node),
                    ),
                };
                Some(Def::new(NodeKind::Class, name, name_node, node).body(class_body(node)))
            }
            "function_declaration" => {
                let name = node.child_by_field("name")?;
                // A member of a class body (anonymous objects included) is a method.
                let kind = if node
                    .parent()
                    .is_some_and(|p| matches!(p.kind_str(), "class_body" | "enum_class_body"))
                {
                    NodeKind::Method
                } else {
                    NodeKind::Function
                };
                Some(
                    Def::new(kind, cx.text(name).to_string(), name, node)
                        .body(node.named_child_of_kind("function_body"))
                        .scope(receiver(node, name, cx)),
                )
            }
            "secondary_constructor" => {
                // Named after its class, like the primary constructor it delegates to;
                // `constructor` when error recovery lost the class.
                let class_name = node
                    .parent()
                    .and_then(|body| body.parent())
                    .and_then(|class| class.child_by_field("name"))
                    .map_or("constructor", |n| cx.text(n));
                let kw = keyword(node, "constructor").unwrap_or(node);
                Some(
                    Def::new(NodeKind::Method, class_name.to_string(), kw, node)
                        .body(node.named_child_of_kind("block")),
                )
            }
            "property_declaration" => constant(node, cx),
            "type_alias" => {
                let name = node.child_by_field("type")?;
                Some(Def::new(
                    NodeKind::Type,
                    cx.text(name).to_string(),
                    name,
                    node,
                ))
            }
            "infix_expression" => misparsed_class(node, cx),
            "ERROR" => {
                let mut d = recovered_type(
                    node,
                    cx,
                    &[
                        ("class", NodeKind::Class),
                        ("interface", NodeKind::Interface),
                        ("object", NodeKind::Class),
                    ],
                    &[
                        "type_parameters",
                        "primary_constructor",
                        "delegation_specifiers",
                        "type_constraints",
                        ":",
                    ],
                )?;
                if d.kind == NodeKind::Class && has_modifier_text(node, "enum", cx) {
                    d.kind = NodeKind::Enum;
                }
                Some(d)
            }
            "enum_entry" => {
                // An entry with a body is an anonymous subclass: its members are qualified
                // through the entry (`Color.RED.apply`), nothing is stored.
                node.named_child_of_kind("class_body")?;
                let name = node.named_child_of_kind("identifier")?;
                let mut d = Def::new(NodeKind::Class, cx.text(name).to_string(), name, node);
                d.scope_only = true;
                Some(d)
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call_expression" => {
                if let Some(callee) = node.named_child(0) {
                    let call = cx.reference(RefKind::Call, &clean_callee(cx.text(callee)), node);
                    let args = node.named_child_of_kind("value_arguments");
                    let mut call = with_args(call, args, cx, arg_type);
                    // A trailing lambda is one more argument.
                    if node.named_child_of_kind("annotated_lambda").is_some() {
                        call.module = Some(match call.module.as_deref() {
                            None | Some("") => "_".to_string(),
                            Some(a) => format!("{a},_"),
                        });
                    }
                    out.push(call);
                }
            }
            "parameter" => {
                // A function's (or anonymous function's) parameter.
                if let Some(name) = node.named_child_of_kind("identifier") {
                    let ty = node
                        .named_child(node.named_child_count().saturating_sub(1) as u32)
                        .and_then(|t| type_text(t, cx));
                    out.push(cx.binding(RefKind::Local, cx.text(name), ty.as_deref(), name));
                }
            }
            // `val`/`var` constructor parameters are properties; plain ones are only seen by
            // initializers.
            "class_parameter" if has_child_kind(node, "val") || has_child_kind(node, "var") => {
                if let Some(name) = node.named_child_of_kind("identifier") {
                    let mut c = node.walk();
                    let ty = node.named_children(&mut c).find_map(|t| type_text(t, cx));
                    out.push(cx.binding(RefKind::Field, cx.text(name), ty.as_deref(), name));
                }
            }
            "property_declaration" => property(node, cx, out),
            "for_statement" | "lambda_parameters" | "when_subject" => {
                let mut c = node.walk();
                for var in node.named_children(&mut c) {
                    match var.kind_str() {
                        "variable_declaration" => {
                            // `when (val x = f())` takes what the call returns.
                            let inferred = (node.kind_str() == "when_subject")
                                .then(|| var.next_named_sibling().and_then(|v| called(v, cx)))
                                .flatten();
                            variable(var, RefKind::Local, inferred, cx, out)
                        }
                        "multi_variable_declaration" => {
                            let mut c = var.walk();
                            for v in var.named_children(&mut c) {
                                variable(v, RefKind::Local, None, cx, out);
                            }
                        }
                        _ => {}
                    }
                }
            }
            // A lambda without parameters has the implicit `it`.
            "lambda_literal" if node.named_child_of_kind("lambda_parameters").is_none() => {
                out.push(cx.binding(RefKind::Local, "it", None, node));
            }
            "catch_block" => {
                if let Some(name) = node.named_child_of_kind("identifier") {
                    let mut c = node.walk();
                    let ty = node.named_children(&mut c).find_map(|t| type_text(t, cx));
                    out.push(cx.binding(RefKind::Local, cx.text(name), ty.as_deref(), name));
                }
            }
            "callable_reference" => {
                // `::helper`, `Foo::bar`, `::Foo` (a constructor).
                callable_reference(node, cx, out)
            }
            "navigation_expression" if has_child_kind(node, "::") => {
                // `Foo::bar` and `this::m` parse as navigation with `::`.
                callable_reference(node, cx, out)
            }
            "constructor_delegation_call" => {
                if let Some(kw) = node.child(0).filter(|k| !k.is_named()) {
                    // The arguments pick among the constructors.
                    let call = cx.reference(RefKind::Call, cx.text(kw), node);
                    let args = node.named_child_of_kind("value_arguments");
                    out.push(with_args(call, args, cx, arg_type));
                }
            }
            "import" => import(node, cx, out),
            "class_declaration" | "object_declaration" | "companion_object" => {
                prefix_annotations(node, cx, out);
                annotations(node, cx, out);
                supertypes(node, cx, out);
            }
            "function_declaration" | "secondary_constructor" | "type_alias" => {
                prefix_annotations(node, cx, out);
                annotations(node, cx, out)
            }

            "infix_expression" if misparsed_class(node, cx).is_some() => {
                // The annotations are the enclosing annotated expressions.
                let mut chain = Vec::new();
                let mut cur = node.parent();
                while let Some(p) = cur.filter(|p| p.kind_str() == "annotated_expression") {
                    chain.push(p);
                    cur = p.parent();
                }
                for ann in chain.iter().rev() {
                    annotations_in_expression(*ann, false, cx, out);
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String {
        let declared = root
            .named_child_of_kind("package_header")
            .and_then(|pkg| pkg.named_child_of_kind("qualified_identifier"))
            .map(|q| cx.text(q).split_whitespace().collect::<String>());
        declared.unwrap_or_else(|| directory_module(path))
    }
}

/// A property: in a class, object or companion body a field of it (a constant's binding is
/// attached to the constant, whose enclosing type owns it); in a function body a local; at
/// top level a global of the file, which shadows like a local. Extension properties
/// (`val Foo.size`) bind nothing.
fn property(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    if constant(node, cx).is_some() {
        prefix_annotations(node, cx, out);
        annotations(node, cx, out);
    }
    let mut c = node.walk();
    let mut var = None;
    let mut value = None;
    for child in node.named_children(&mut c) {
        match child.kind_str() {
            "user_type" | "nullable_type" | "parenthesized_type" => return,
            "variable_declaration" | "multi_variable_declaration" => var = Some(child),
            "modifiers" | "type_parameters" | "type_constraints" | "type_modifiers" | "getter"
            | "setter" | "property_delegate" => {}
            _ if var.is_some() => value = Some(child),
            _ => {}
        }
    }
    let Some(var) = var else {
        return;
    };
    let kind = match node.parent().map(|p| p.kind_str()) {
        Some("class_body" | "enum_class_body") => RefKind::Field,
        _ => RefKind::Local,
    };
    if var.kind_str() == "multi_variable_declaration" {
        let mut c = var.walk();
        for v in var.named_children(&mut c) {
            variable(v, kind, None, cx, out);
        }
    } else {
        variable(var, kind, value.and_then(|v| called(v, cx)), cx, out);
    }
}

/// `name` or `name: Type` of a property, loop or lambda; `inferred` is the type taken from
/// the value when none is written.
fn variable(var: Node, kind: RefKind, inferred: Option<String>, cx: &Cx, out: &mut Vec<RawRef>) {
    if var.kind_str() != "variable_declaration" {
        return;
    }
    let Some(name) = var.named_child_of_kind("identifier") else {
        return;
    };
    let mut c = var.walk();
    let declared = var
        .named_children(&mut c)
        .find(|t| t.kind_str() != "identifier" && t.kind_str() != "annotation");
    let ty = match declared {
        Some(t) => type_text(t, cx),
        None => inferred,
    };
    out.push(cx.binding(kind, cx.text(name), ty.as_deref(), name));
}

/// The type of an argument where the text shows it: literals and `as` casts. Named
/// arguments (`x = 1`) are left unknown.
fn arg_type(arg: Node, cx: &Cx) -> Option<String> {
    if has_child_kind(arg, "=") || arg.named_child_count() != 1 {
        return None;
    }
    let value = arg.named_child(0)?;
    let ty = match value.kind_str() {
        "string_literal" | "multiline_string_literal" => "String",
        "character_literal" => "Char",
        "number_literal" => {
            let t = cx.text(value);
            if t.ends_with(['u', 'U']) || t.contains("uL") || t.contains("UL") {
                return None;
            }
            match t.ends_with('L') {
                true => "Long",
                false => "Int",
            }
        }
        "float_literal" => match cx.text(value).ends_with(['f', 'F']) {
            true => "Float",
            false => "Double",
        },
        "as_expression" => {
            let ty = value.child_by_field("right")?;
            return type_text(ty, cx);
        }
        _ => return None,
    };
    Some(ty.to_string())
}

/// A type worth looking up: a user type (nullable or not) without its type arguments.
/// Function types bind no type.
fn type_text(ty: Node, cx: &Cx) -> Option<String> {
    let mut ty = ty;
    while matches!(ty.kind_str(), "nullable_type" | "parenthesized_type") {
        ty = ty.named_child(0)?;
    }
    (ty.kind_str() == "user_type").then(|| strip_type_args(cx.text(ty), '<', '>'))
}

/// `Foo()` or `a.b.make()` as the value's type: `callee()` (the class, when a class is called).
fn called(value: Node, cx: &Cx) -> Option<String> {
    if value.kind_str() != "call_expression" {
        return None;
    }
    let callee = value.named_child(0)?;
    matches!(callee.kind_str(), "identifier" | "navigation_expression")
        .then(|| format!("{}()", clean_callee(cx.text(callee))))
}

/// `::helper`, `Foo::bar`, `this::run`; `Foo::class` is a class literal, not a reference.
fn callable_reference(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let text: String = cx.text(node).split_whitespace().collect();
    let text = strip_type_args(&text, '<', '>');
    if text.ends_with("::class") || text.contains('(') || text.contains('{') {
        return;
    }
    out.push(cx.reference(RefKind::Reference, &clean_callee(&text), node));
}

/// A callee without Kotlin's `!!` assertions and `@label` qualifiers: `a!!.b` -> `a.b`,
/// `this@Outer.m` -> `this.m`.
fn clean_callee(text: &str) -> String {
    if !text.contains(['!', '@']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '!' if chars.peek() == Some(&'!') => {
                chars.next();
            }
            '@' if out.ends_with("this") || out.ends_with("super") => {
                while chars
                    .peek()
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    chars.next();
                }
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Several annotations with arguments before a top-level `class A { ... }` make the grammar
/// read the declaration as an infix expression (`class A {lambda}`) inside annotated
/// expressions. Recognize that shape: identifiers (modifiers, then the keyword, then the
/// name) and an optional lambda that is the body.
fn misparsed_class<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let mut outer = node
        .parent()
        .filter(|p| p.kind_str() == "annotated_expression")?;
    while let Some(p) = outer
        .parent()
        .filter(|p| p.kind_str() == "annotated_expression")
    {
        outer = p;
    }
    let mut c = node.walk();
    let parts: Vec<Node> = node.named_children(&mut c).collect();
    let kw = parts.iter().position(|n| {
        n.kind_str() == "identifier" && matches!(cx.text(*n), "class" | "interface" | "object")
    })?;
    if parts[..kw].iter().any(|n| n.kind_str() != "identifier") {
        return None;
    }
    let name = parts.get(kw + 1).filter(|n| n.kind_str() == "identifier")?;
    let body = match parts.get(kw + 2) {
        Some(b) if b.kind_str() == "lambda_literal" && kw + 3 == parts.len() => Some(*b),
        None => None,
        Some(_) => return None,
    };
    let modifiers: Vec<&str> = parts[..kw].iter().map(|n| cx.text(*n)).collect();
    let kind = match cx.text(parts[kw]) {
        "interface" => NodeKind::Interface,
        _ if modifiers.contains(&"enum") => NodeKind::Enum,
        _ if modifiers.contains(&"annotation") => NodeKind::Interface,
        _ => NodeKind::Class,
    };
    Some(Def::new(kind, cx.text(*name).to_string(), *name, outer).body(body))
}

/// Whether a `modifiers` child of `node` (an ERROR node) holds the keyword `word`.
fn has_modifier_text(node: Node, word: &str, cx: &Cx) -> bool {
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .any(|m| m.kind_str() == "modifiers" && cx.text(m).split_whitespace().any(|w| w == word));
    found
}

/// Annotations the grammar put into annotated expression statements right before a
/// declaration (annotations with arguments on lines of their own before a top-level
/// declaration): those on the lines directly above, unless they hold a declaration.
fn prefix_annotations(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut prefixes = Vec::new();
    let mut next_row = def.start_position().row;
    let mut cur = def.prev_named_sibling();
    while let Some(p) = cur.filter(|p| {
        p.kind_str() == "annotated_expression"
            && p.end_position().row + 1 >= next_row
            && !holds_misparsed_class(*p, cx)
    }) {
        prefixes.push(p);
        next_row = p.start_position().row;
        cur = p.prev_named_sibling();
    }
    for p in prefixes.iter().rev() {
        annotations_in_expression(*p, true, cx, out);
    }
}

fn holds_misparsed_class(expr: Node, cx: &Cx) -> bool {
    let mut inner = expr;
    while inner.kind_str() == "annotated_expression" {
        match inner.named_child(inner.named_child_count().saturating_sub(1) as u32) {
            Some(last) => inner = last,
            None => return false,
        }
    }
    inner.kind_str() == "infix_expression" && misparsed_class(inner, cx).is_some()
}

/// The annotations of an annotated expression; with `nested`, also those of the annotated
/// expressions inside it (`@A("x") @B("y")` nests the second in the first).
fn annotations_in_expression(expr: Node, nested: bool, cx: &Cx, out: &mut Vec<RawRef>) {
    // The nested ones form a chain, one per annotation: followed in a loop.
    let mut next = Some(expr);
    while let Some(expr) = next.take() {
        let mut c = expr.walk();
        for child in expr.named_children(&mut c) {
            match child.kind_str() {
                "annotation" => annotation(child, cx, out),
                "annotated_expression" if nested && next.is_none() => next = Some(child),
                _ => {}
            }
        }
    }
}

/// `const val X`, or a `val` with an UPPER_CASE name at top level or directly in an
/// object (Kotlin's statics); one simple name, not a destructuring declaration.
fn constant<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    if !has_child_kind(node, "val") {
        return None;
    }
    let var = node.named_child_of_kind("variable_declaration")?;
    let name = var.named_child_of_kind("identifier")?;
    let text = cx.text(name);
    let is_const = has_modifier(node, "const", cx)
        || (is_upper_case(text) && {
            let parent = node.parent()?;
            match parent.kind_str() {
                "source_file" => true,
                "class_body" => parent.parent().is_some_and(|o| {
                    matches!(o.kind_str(), "object_declaration" | "companion_object")
                }),
                _ => false,
            }
        });
    is_const.then(|| Def::new(NodeKind::Constant, text.to_string(), name, node))
}

/// The receiver type of an extension function (`fun List<T>.second()` -> `List`): the type
/// written between `fun` (or its type parameters) and the name.
fn receiver(func: Node, name: Node, cx: &Cx) -> Option<String> {
    let mut c = func.walk();
    let ty = func
        .named_children(&mut c)
        .take_while(|n| n.id() != name.id())
        .find(|n| {
            matches!(
                n.kind_str(),
                "user_type" | "nullable_type" | "parenthesized_type"
            )
        })?;
    let text = strip_type_args(cx.text(ty), '<', '>');
    let text = text.trim_matches(|c| c == '(' || c == ')' || c == '?');
    (!text.is_empty()).then(|| text.to_string())
}

fn class_body(node: Node) -> Option<Node> {
    node.named_child_of_kind("class_body")
        .or_else(|| node.named_child_of_kind("enum_class_body"))
}

fn has_child_kind(node: Node, kind: &str) -> bool {
    let mut c = node.walk();
    let found = node.children(&mut c).any(|n| n.kind_str() == kind);
    found
}

fn keyword<'t>(node: Node<'t>, kw: &str) -> Option<Node<'t>> {
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .find(|n| !n.is_named() && n.kind_str() == kw);
    found
}

/// Whether the node's `modifiers` include the keyword `word` (`enum`, `const`, ...).
fn has_modifier(node: Node, word: &str, cx: &Cx) -> bool {
    let Some(mods) = node.named_child_of_kind("modifiers") else {
        return false;
    };
    let mut c = mods.walk();
    let found = mods
        .named_children(&mut c)
        .any(|m| m.kind_str() != "annotation" && cx.text(m) == word);
    found
}

fn is_upper_case(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Annotations in a definition's `modifiers`, as decorators (name without `@`, use-site
/// target or arguments).
fn annotations(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(mods) = def.named_child_of_kind("modifiers") else {
        return;
    };
    let mut c = mods.walk();
    for ann in mods.named_children(&mut c) {
        if ann.kind_str() == "annotation" {
            annotation(ann, cx, out);
        }
    }
}

fn annotation(ann: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    // `@[A B]` holds several annotations.
    let mut c = ann.walk();
    for item in ann.named_children(&mut c) {
        let ty = match item.kind_str() {
            "use_site_target" => continue,
            "constructor_invocation" => match item.named_child(0) {
                Some(t) => t,
                None => continue,
            },
            _ => item,
        };
        let name = strip_type_args(cx.text(ty), '<', '>');
        out.push(cx.reference(RefKind::Decorator, &name, ann));
    }
}

/// Supertypes: `Base(args)` calls a superclass constructor (Inherits); a bare type or a
/// delegated `Iface by impl` is an interface (Implements). An interface's supertypes are
/// the interfaces it inherits from.
fn supertypes(def: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(list) = def.named_child_of_kind("delegation_specifiers") else {
        return;
    };
    let is_interface = has_child_kind(def, "interface");
    let mut c = list.walk();
    for spec in list.named_children(&mut c) {
        // Annotations may precede the type; the type is the last child.
        let mut c = spec.walk();
        let Some(inner) = spec
            .named_children(&mut c)
            .filter(|n| n.kind_str() != "annotation")
            .last()
        else {
            continue;
        };
        let (kind, ty) = match inner.kind_str() {
            "constructor_invocation" => (RefKind::Inherits, inner.named_child(0)),
            "explicit_delegation" => (RefKind::Implements, inner.named_child(0)),
            _ => (RefKind::Implements, Some(inner)),
        };
        let Some(ty) = ty else {
            continue;
        };
        let kind = if is_interface {
            RefKind::Inherits
        } else {
            kind
        };
        let name = strip_type_args(cx.text(ty), '<', '>');
        out.push(cx.reference(kind, name.trim_end_matches('?'), ty));
    }
}

/// `import a.b.C` (module `a.b`, name `C`), `import a.b.*` (name `*`), `import a.b.C as D`.
fn import(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(path) = node.named_child_of_kind("qualified_identifier") else {
        return;
    };
    let path: String = cx.text(path).split_whitespace().collect();
    if has_child_kind(node, "*") {
        out.push(cx.import(&path, "*", None, node));
        return;
    }
    let alias = node.named_child_of_kind("identifier").map(|a| cx.text(a));
    let (module, name) = path.rsplit_once('.').unwrap_or(("", &path));
    out.push(cx.import(module, name, alias, node));
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::{extract_on_worker, nest};
    use crate::model::RefKind;

    #[test]
    fn nested_types_and_annotation_chains_are_followed_in_loops() {
        let x = extract_on_worker(
            "a.kt",
            "fun f() {\n    val x: ((Foo))? = y\n    x.run()\n}\n".into(),
        );
        let local = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::Local && r.name == "x");
        assert_eq!(local.and_then(|r| r.module.as_deref()), Some("Foo"));
        for deep in [
            format!("val x: {}? = y\n", nest("(", "Foo", ")", 10_000)),
            format!("{}class C\n", "@A(1) ".repeat(10_000)),
        ] {
            // Followed by recursion, these could exhaust the stack.
            extract_on_worker("b.kt", deep);
        }
    }
}
