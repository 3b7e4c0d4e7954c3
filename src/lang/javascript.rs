//! JavaScript, TypeScript and TSX (one rule set; the grammars share most node kinds).
//!
//! Definitions: function and generator declarations, TS function signatures (`declare
//! function`; overload signatures fold into the declaration after them, reported at the first
//! overload's line), classes (abstract ones and named class expressions too), methods
//! (getters, setters, constructors, abstract methods, TS method and construct signatures in
//! interfaces), class fields holding functions (as methods), `const f = () => ...` /
//! `= function` declarators (as functions; `= class` as classes), methods of object literals
//! bound to a variable (`api.get`), `Foo.prototype.m = function` and `exports.f = function`
//! assignments, anonymous `export default` functions and classes (named `default`), TS
//! interfaces, type aliases, enums, namespaces and ambient modules, and top-level
//! `const UPPER = literal` constants. Exported declarations carry their `export` and
//! decorators in the signature; JSDoc `/** */` comments are their docs.
//!
//! References: calls (`foo()`, `this.bar()`, `new Foo()` -> `Foo`, capitalized JSX elements
//! as component calls), ES imports, `import x = require()`, `require("x")` and `import("x")`,
//! re-exports (`export {a} from`, `export * from`), `extends` (Inherits), `implements`
//! (Implements) and decorators. Module names come from the path (`src/` stripped, `index`
//! files named by their folder).
//!
//! Bindings for resolution: parameters (typed by their TS annotation; constructor parameter
//! properties are also typed fields), local variables (typed by annotation, `as T`, or the
//! `new Foo()` / `make()` that produced them; destructured, `for ... of` and `catch` names
//! untyped, since they still shadow), class fields with a type or a `new` initializer,
//! `this.x = new Foo()` in methods, and functions passed as arguments (`xs.map(fn)`,
//! `setTimeout(this.tick)`) as references.

use super::{dotted_module, unquote, Cx, Def, Rules, MAX_NESTING};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct JavaScript;

/// Values that make a variable declarator a function definition.
const FUNCTION_VALUES: &[&str] = &[
    "arrow_function",
    "function_expression",
    "generator_function",
];

/// Class members that may be preceded by sibling decorators (TS puts member decorators in
/// the class body, before the member they apply to).
const CLASS_MEMBERS: &[&str] = &[
    "method_definition",
    "method_signature",
    "abstract_method_signature",
    "public_field_definition",
    "field_definition",
    "index_signature",
];

impl Rules for JavaScript {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let def = definition(node, enclosing, cx)?;
        let doc = jsdoc(def.outer, cx);
        Some(def.docstring(doc))
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        let kind = node.kind_str();
        match kind {
            "call_expression" => call(node, cx, out),
            "new_expression" => {
                if let Some(c) = node.child_by_field("constructor") {
                    if matches!(c.kind_str(), "identifier" | "member_expression") {
                        out.push(cx.reference(RefKind::Call, cx.text(c), node));
                    }
                }
            }
            "jsx_opening_element" | "jsx_self_closing_element" => {
                // `<Button/>` calls the component; lower-case tags are plain HTML elements.
                if let Some(name) = node.child_by_field("name") {
                    let text = cx.text(name);
                    if name.kind_str() == "member_expression"
                        || text.starts_with(|c: char| c.is_ascii_uppercase())
                    {
                        out.push(cx.reference(RefKind::Call, text, node));
                    }
                }
            }
            "decorator" => {
                // Decorators in a class body or before `export` are reported by the member
                // or class they apply to, so that they attach to it rather than the parent.
                let parent = node.parent().map(|p| p.kind_str());
                if !matches!(parent, Some("class_body" | "export_statement")) {
                    decorator(node, cx, out);
                }
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                if let Some(export) = node.parent().filter(|p| p.kind_str() == "export_statement") {
                    let mut c = export.walk();
                    for d in export.children_by_field_name("decorator", &mut c) {
                        decorator(d, cx, out);
                    }
                }
            }
            "class_heritage" => {
                // JavaScript: the heritage holds the base expression directly; TypeScript
                // wraps it in `extends_clause` (handled below).
                if let Some(base) = node.named_child(0) {
                    if !matches!(base.kind_str(), "extends_clause" | "implements_clause") {
                        out.push(cx.reference(RefKind::Inherits, cx.text(base), base));
                    }
                }
            }
            "extends_clause" => {
                let mut c = node.walk();
                for base in node.children_by_field_name("value", &mut c) {
                    out.push(cx.reference(RefKind::Inherits, type_name(base, cx), base));
                }
            }
            "extends_type_clause" => {
                let mut c = node.walk();
                for base in node.children_by_field_name("type", &mut c) {
                    out.push(cx.reference(RefKind::Inherits, type_name(base, cx), base));
                }
            }
            "implements_clause" => {
                let mut c = node.walk();
                for t in node.named_children(&mut c) {
                    if t.kind_str() != "comment" {
                        out.push(cx.reference(RefKind::Implements, type_name(t, cx), t));
                    }
                }
            }
            "import_statement" => import_statement(node, cx, out),
            "export_statement" => reexport(node, cx, out),
            "formal_parameters" => parameters(node, cx, out),
            "arrow_function" => {
                // `x => ...`: a single parameter without parentheses.
                if let Some(p) = node.child_by_field("parameter") {
                    bind_pattern(p, cx, out);
                }
            }
            "variable_declarator" => variable(node, cx, out),
            "for_in_statement" => {
                if let Some(left) = node.child_by_field("left") {
                    bind_pattern(left, cx, out);
                }
            }
            "catch_clause" => {
                if let Some(p) = node.child_by_field("parameter") {
                    bind_pattern(p, cx, out);
                }
            }
            "public_field_definition" | "field_definition" => field(node, cx, out),
            "assignment_expression" => this_assignment(node, cx, out),
            "arguments" => {
                let mut c = node.walk();
                for arg in node.named_children(&mut c) {
                    callback(arg, cx, out);
                }
            }
            // `<Button onClick={this.handle} />`
            "jsx_expression"
                if node
                    .parent()
                    .is_some_and(|p| p.kind_str() == "jsx_attribute") =>
            {
                if let Some(value) = node.named_child(0) {
                    callback(value, cx, out);
                }
            }
            _ => {}
        }
        if CLASS_MEMBERS.contains(&kind) {
            let mut decorators = Vec::new();
            let mut prev = node.prev_named_sibling();
            while let Some(p) = prev.filter(|p| p.kind_str() == "decorator") {
                decorators.push(p);
                prev = p.prev_named_sibling();
            }
            for d in decorators.into_iter().rev() {
                decorator(d, cx, out);
            }
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &["src/"], &["index"])
    }

    fn attached_prefix_kinds(&self) -> &'static [&'static str] {
        // TypeScript class-member decorators are siblings before the member.
        &["decorator"]
    }
}

/// The definition at `node`, before its JSDoc is looked up.
fn definition<'t>(node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
    match node.kind_str() {
        "function_declaration" | "generator_function_declaration" => {
            named(NodeKind::Function, node, cx).map(|d| overloaded(d, node, cx))
        }
        "function_signature" => {
            // Overload signatures fold into the declaration that ends their run.
            if followed_by_same_name(node, cx) {
                return None;
            }
            named(NodeKind::Function, node, cx).map(|d| overloaded(d, node, cx))
        }
        "class_declaration" | "abstract_class_declaration" => named(NodeKind::Class, node, cx),
        "class" => {
            // Anonymous class expressions are named by what holds them (a declarator,
            // `export default`) or stay anonymous.
            node.child_by_field("name")?;
            if node.parent()?.kind_str() == "variable_declarator" {
                return None;
            }
            named(NodeKind::Class, node, cx)
        }
        "function_expression" | "generator_function" => {
            // A named function that error recovery turned into an expression (`function
            // f() {}` after broken code). Other function values are named by the
            // declarator, field or assignment holding them, or are anonymous.
            node.child_by_field("name")?;
            if node.parent()?.kind_str() != "ERROR" {
                return None;
            }
            named(NodeKind::Function, node, cx)
        }
        "export_statement" => {
            // `export default function () {}` / `export default class {}`: named `default`.
            let value = node.child_by_field("value")?;
            let kind = match value.kind_str() {
                "class" if value.child_by_field("name").is_none() => NodeKind::Class,
                "function_expression" | "generator_function" | "arrow_function" => {
                    NodeKind::Function
                }
                _ => return None,
            };
            let name = value.child_by_field("name");
            let text = name.map_or("default", |n| cx.text(n));
            Some(
                Def::new(kind, text.to_string(), name.unwrap_or(value), node)
                    .body(value.child_by_field("body")),
            )
        }
        "method_definition" => {
            let parent = node.parent()?;
            match parent.kind_str() {
                "class_body" => named(NodeKind::Method, node, cx).map(|d| overloaded(d, node, cx)),
                "object" => object_member(node, node.child_by_field("name")?, node, cx),
                _ => None,
            }
        }
        "pair" => {
            let value = node.child_by_field("value")?;
            if !FUNCTION_VALUES.contains(&value.kind_str()) || node.parent()?.kind_str() != "object"
            {
                return None;
            }
            object_member(node, node.child_by_field("key")?, value, cx)
        }
        "method_signature" => {
            let parent = node.parent()?;
            let member = match parent.kind_str() {
                // Class overload signatures fold into the implementation after them.
                "class_body" => {
                    return (!followed_by_same_name(node, cx))
                        .then(|| named(NodeKind::Method, node, cx))?
                        .map(|d| overloaded(d, node, cx));
                }
                // Interface overloads are separate declarations, each its own method.
                "interface_body" => true,
                // `type T = { m(): void }` is an interface in all but name.
                "object_type" => {
                    parent.parent().map(|p| p.kind_str()) == Some("type_alias_declaration")
                }
                _ => false,
            };
            if !member {
                return None;
            }
            named(NodeKind::Method, node, cx)
        }
        // `new (...): T` in an interface: the constructor of what the interface describes.
        "construct_signature" => {
            let parent = node.parent()?;
            let member = parent.kind_str() == "interface_body"
                || (parent.kind_str() == "object_type"
                    && parent.parent().map(|p| p.kind_str()) == Some("type_alias_declaration"));
            if !member {
                return None;
            }
            let keyword = node.child(0).filter(|k| k.kind_str() == "new")?;
            Some(Def::new(NodeKind::Method, "new".to_string(), keyword, node))
        }
        "abstract_method_signature" => named(NodeKind::Method, node, cx),
        "public_field_definition" | "field_definition" => {
            let value = node.child_by_field("value")?;
            if !FUNCTION_VALUES.contains(&value.kind_str()) {
                return None;
            }
            let name = node
                .child_by_field("name")
                .or_else(|| node.child_by_field("property"))?;
            Some(
                Def::new(NodeKind::Method, cx.text(name).to_string(), name, node)
                    .body(value.child_by_field("body")),
            )
        }
        "interface_declaration" => named(NodeKind::Interface, node, cx),
        "type_alias_declaration" => {
            // The whole alias is its signature (the type is not a body to cut at).
            let mut d = named(NodeKind::Type, node, cx)?;
            d.body = semicolon(node);
            Some(d)
        }
        "enum_declaration" => named(NodeKind::Enum, node, cx),
        "internal_module" | "module" => {
            let name = node.child_by_field("name")?;
            Some(
                Def::new(
                    NodeKind::Module,
                    name_text(name, cx).to_string(),
                    name,
                    wrapped(node),
                )
                .body(node.child_by_field("body")),
            )
        }
        "variable_declarator" => declarator(node, enclosing, cx),
        "assignment_expression" => assigned_function(node, cx),
        _ => None,
    }
}

/// The `/** ... */` comment directly above a definition (and its decorators), without its
/// markers. Other comments are left to the engine's leading-comment rule.
fn jsdoc(outer: Node, cx: &Cx) -> Option<String> {
    let mut anchor = outer;
    while let Some(d) = anchor
        .prev_named_sibling()
        .filter(|p| p.kind_str() == "decorator")
    {
        anchor = d;
    }
    let comment = anchor
        .prev_sibling()
        .filter(|c| c.kind_str() == "comment")?;
    let text = cx.text(comment);
    let trailing = comment
        .prev_sibling()
        .is_some_and(|p| p.end_position().row == comment.start_position().row);
    if !text.starts_with("/**")
        || comment.end_position().row + 1 < anchor.start_position().row
        || trailing
    {
        return None;
    }
    let inner = text.trim_start_matches("/**").trim_end_matches("*/");
    let lines: Vec<&str> = inner
        .lines()
        .map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix('*')
                .map_or(l, |r| r.strip_prefix(' ').unwrap_or(r));
            l.trim_end()
        })
        .collect();
    let doc = lines.join("\n").trim().to_string();
    (!doc.is_empty()).then_some(doc)
}

/// A declaration with a `name` field; `outer` takes in `export`/`declare` wrappers so the
/// signature and leading comment include them.
fn named<'t>(kind: NodeKind, node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let name = node.child_by_field("name")?;
    Some(
        Def::new(kind, cx.text(name).to_string(), name, wrapped(node))
            .body(node.child_by_field("body").or_else(|| semicolon(node))),
    )
}

/// The node including its `export`, `declare` and (for namespaces) statement wrappers.
fn wrapped(node: Node) -> Node {
    let mut outer = node;
    while let Some(p) = outer.parent() {
        match p.kind_str() {
            "export_statement" | "ambient_declaration" => outer = p,
            "expression_statement" if outer.kind_str() == "internal_module" => outer = p,
            _ => break,
        }
    }
    outer
}

/// The declaration inside `export`/`declare` wrappers.
fn unwrapped(mut node: Node) -> Node {
    for _ in 0..3 {
        let inner = match node.kind_str() {
            "export_statement" => node.child_by_field("declaration"),
            "ambient_declaration" => node.named_child(0),
            _ => None,
        };
        match inner {
            Some(i) => node = i,
            None => break,
        }
    }
    node
}

/// A declaration after overload signatures of its name is reported at the first of them
/// (where ctags places it and where the declaration begins); signature, docs and body stay
/// the implementation's.
fn overloaded<'t>(mut def: Def<'t>, node: Node<'t>, cx: &Cx) -> Def<'t> {
    let mut prev = wrapped(node).prev_named_sibling();
    while let Some(p) = prev {
        if p.kind_str() == "comment" {
            prev = p.prev_named_sibling();
            continue;
        }
        let decl = unwrapped(p);
        let name = decl.child_by_field("name");
        match name {
            Some(n)
                if matches!(decl.kind_str(), "function_signature" | "method_signature")
                    && cx.text(n) == def.name =>
            {
                def.name_node = n;
                prev = p.prev_named_sibling();
            }
            _ => break,
        }
    }
    def
}

/// Whether the next declaration (past comments and wrappers) has the same name: the
/// signature is then an overload of it.
fn followed_by_same_name(node: Node, cx: &Cx) -> bool {
    let Some(name) = cx.field(node, "name") else {
        return false;
    };
    let mut next = wrapped(node).next_named_sibling();
    while let Some(n) = next.filter(|n| n.kind_str() == "comment") {
        next = n.next_named_sibling();
    }
    next.map(unwrapped).is_some_and(|n| {
        matches!(
            n.kind_str(),
            "function_signature"
                | "function_declaration"
                | "method_signature"
                | "method_definition"
        ) && cx.field(n, "name") == Some(name)
    })
}

/// A method of an object literal bound to a variable: `const api = { get() {} }` defines
/// `api.get`. Methods of other object literals are anonymous.
fn object_member<'t>(
    node: Node<'t>,
    name: Node<'t>,
    function: Node<'t>,
    cx: &Cx,
) -> Option<Def<'t>> {
    let holder = node.parent()?.parent()?;
    if holder.kind_str() != "variable_declarator" {
        return None;
    }
    let var = holder.child_by_field("name")?;
    if var.kind_str() != "identifier" {
        return None;
    }
    Some(
        Def::new(NodeKind::Method, cx.text(name).to_string(), name, node)
            .body(function.child_by_field("body"))
            .scope(Some(cx.text(var).to_string())),
    )
}

/// `const f = () => ...` (Function), `const A = class {}` (Class) and top-level
/// `const UPPER = literal` (Constant).
fn declarator<'t>(node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
    let name = node.child_by_field("name")?;
    if name.kind_str() != "identifier" {
        return None;
    }
    let value = node.child_by_field("value")?;
    let declaration = node.parent()?;
    // With one declarator the whole statement (`export const f = ...`) is the definition.
    let single = declaration
        .named_children(&mut declaration.walk())
        .filter(|c| c.kind_str() == "variable_declarator")
        .count()
        == 1;
    let outer = if single { wrapped(declaration) } else { node };
    let text = cx.text(name).to_string();
    let kind = match value.kind_str() {
        k if FUNCTION_VALUES.contains(&k) => NodeKind::Function,
        "class" => NodeKind::Class,
        _ => {
            let is_const = declaration.kind_str() == "lexical_declaration"
                && cx.field(declaration, "kind") == Some("const");
            if is_const
                && matches!(enclosing, NodeKind::File | NodeKind::Module)
                && is_constant_name(&text)
                && is_literal(value, 0)
            {
                let end = if single { semicolon(declaration) } else { None };
                return Some(Def::new(NodeKind::Constant, text, name, outer).body(end));
            }
            return None;
        }
    };
    Some(Def::new(kind, text, name, outer).body(value.child_by_field("body")))
}

/// `Foo.prototype.m = function () {}` (method `m` of `Foo`) and `exports.f = ...` /
/// `module.exports.f = ...` (function `f`), the pre-class CommonJS idioms.
fn assigned_function<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let right = node.child_by_field("right")?;
    if !FUNCTION_VALUES.contains(&right.kind_str()) {
        return None;
    }
    let left = node.child_by_field("left")?;
    if left.kind_str() != "member_expression" {
        return None;
    }
    let statement = node.parent()?;
    if statement.kind_str() != "expression_statement" {
        return None;
    }
    let name = left.child_by_field("property")?;
    let object = cx.text(left.child_by_field("object")?);
    let scope = match object {
        "exports" | "module.exports" => None,
        _ => Some(object.strip_suffix(".prototype")?.to_string()),
    };
    Some(
        Def::new(
            NodeKind::Function,
            cx.text(name).to_string(),
            name,
            statement,
        )
        .body(right.child_by_field("body"))
        .scope(scope),
    )
}

fn call(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(f) = node.child_by_field("function") else {
        return;
    };
    // `@Component({...})` is recorded as the decorator it is, not as a call.
    if node.parent().is_some_and(|p| p.kind_str() == "decorator") {
        return;
    }
    let first_string = || {
        node.child_by_field("arguments")
            .and_then(|a| a.named_child(0))
            .filter(|a| a.kind_str() == "string")
            .map(|a| unquote(cx.text(a)))
    };
    match f.kind_str() {
        // `import("./m")`
        "import" => {
            if let Some(module) = first_string() {
                out.push(cx.import(module, "", None, node));
            }
        }
        "identifier" if cx.text(f) == "require" => match first_string() {
            Some(module) => require(node, module, cx, out),
            None => out.push(cx.reference(RefKind::Call, "require", node)),
        },
        "identifier" | "member_expression" | "super" | "subscript_expression" => {
            out.push(cx.reference(RefKind::Call, cx.text(f), node));
        }
        // Immediately invoked function expressions and curried calls have no callee name
        // of their own (an inner call is recorded where it occurs).
        _ => {}
    }
}

/// `require("m")`: `const x = require()` aliases the module; destructuring imports names.
fn require(node: Node, module: &str, cx: &Cx, out: &mut Vec<RawRef>) {
    let target = node
        .parent()
        .filter(|p| p.kind_str() == "variable_declarator")
        .and_then(|p| p.child_by_field("name"));
    match target {
        Some(t) if t.kind_str() == "identifier" => {
            out.push(cx.import(module, "", Some(cx.text(t)), node))
        }
        Some(t) if t.kind_str() == "object_pattern" => {
            let mut c = t.walk();
            for p in t.named_children(&mut c) {
                match p.kind_str() {
                    "shorthand_property_identifier_pattern" => {
                        out.push(cx.import(module, cx.text(p), None, node))
                    }
                    "pair_pattern" => {
                        let key = cx.field(p, "key").unwrap_or("");
                        out.push(cx.import(module, key, cx.field(p, "value"), node));
                    }
                    _ => {}
                }
            }
        }
        _ => out.push(cx.import(module, "", None, node)),
    }
}

fn import_statement(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    let children: Vec<Node> = node.named_children(&mut c).collect();
    // `import fs = require("fs")`
    if let Some(req) = children
        .iter()
        .find(|n| n.kind_str() == "import_require_clause")
    {
        let module = req
            .child_by_field("source")
            .map_or("", |s| unquote(cx.text(s)));
        let alias = req
            .named_child(0)
            .filter(|n| n.kind_str() == "identifier")
            .map(|n| cx.text(n));
        out.push(cx.import(module, "", alias, node));
        return;
    }
    let Some(source) = node.child_by_field("source") else {
        return;
    };
    let module = unquote(cx.text(source));
    let Some(clause) = children.iter().find(|n| n.kind_str() == "import_clause") else {
        // `import "./side-effects"`
        out.push(cx.import(module, "", None, node));
        return;
    };
    let mut c = clause.walk();
    for part in clause.named_children(&mut c) {
        match part.kind_str() {
            // `import x from`: the default export under a local name.
            "identifier" => out.push(cx.import(module, "default", Some(cx.text(part)), node)),
            // `import * as ns from`: the whole module under a local name.
            "namespace_import" => {
                let alias = part.named_child(0).map(|n| cx.text(n));
                out.push(cx.import(module, "", alias, node));
            }
            "named_imports" => specifiers(part, module, "import_specifier", node, cx, out),
            _ => {}
        }
    }
}

/// `export {a as b} from "./m"`, `export * from "./m"`, `export * as ns from "./m"`.
fn reexport(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(source) = node.child_by_field("source") else {
        return;
    };
    let module = unquote(cx.text(source));
    let mut c = node.walk();
    let parts: Vec<Node> = node.named_children(&mut c).collect();
    if let Some(clause) = parts.iter().find(|p| p.kind_str() == "export_clause") {
        specifiers(*clause, module, "export_specifier", node, cx, out);
    } else if let Some(ns) = parts.iter().find(|p| p.kind_str() == "namespace_export") {
        let alias = ns.named_child(0).map(|n| name_text(n, cx));
        out.push(cx.import(module, "", alias, node));
    } else {
        out.push(cx.import(module, "*", None, node));
    }
}

fn specifiers(list: Node, module: &str, kind: &str, at: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = list.walk();
    for s in list.named_children(&mut c).filter(|s| s.kind_str() == kind) {
        let name = s.child_by_field("name").map_or("", |n| name_text(n, cx));
        let alias = s.child_by_field("alias").map(|n| name_text(n, cx));
        out.push(cx.import(module, name, alias, at));
    }
}

/// An identifier's text, or a string literal's contents (`declare module "m"`,
/// `export { "a-b" as c }`).
fn name_text<'a>(node: Node, cx: &Cx<'a>) -> &'a str {
    match node.kind_str() {
        "string" => unquote(cx.text(node)),
        _ => cx.text(node),
    }
}

/// The statement's closing `;`, where the signature of a body-less declaration stops.
fn semicolon(node: Node) -> Option<Node> {
    node.child(node.child_count().checked_sub(1)? as u32)
        .filter(|n| n.kind_str() == ";")
}

/// `@dec`, `@ns.dec`, `@dec(args)`: the decorator's name without arguments.
fn decorator(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(mut expr) = node.named_child(0) else {
        return;
    };
    if expr.kind_str() == "parenthesized_expression" {
        match expr.named_child(0) {
            Some(inner) => expr = inner,
            None => return,
        }
    }
    let target = match expr.kind_str() {
        "call_expression" => expr.child_by_field("function").unwrap_or(expr),
        _ => expr,
    };
    out.push(cx.reference(RefKind::Decorator, cx.text(target), node));
}

/// A type without its type arguments: `Base<T>` -> `Base`, `ns.I<T>` -> `ns.I`.
fn type_name<'a>(node: Node, cx: &Cx<'a>) -> &'a str {
    match node.kind_str() {
        "generic_type" => node
            .child_by_field("name")
            .map_or_else(|| cx.text(node), |n| cx.text(n)),
        _ => cx.text(node),
    }
}

/// `MAX_SIZE`, `API_V2`: all caps with at least one letter.
fn is_constant_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Literal values, including arithmetic on literals (`60 * 1000`), literal arrays and
/// objects and `as const`. Depth-bounded so hostile expressions cannot exhaust the stack.
fn is_literal(node: Node, depth: u32) -> bool {
    if depth > 8 {
        return false;
    }
    match node.kind_str() {
        "string" | "number" | "true" | "false" | "null" | "undefined" | "regex" | "array"
        | "object" => true,
        "template_string" => node
            .named_children(&mut node.walk())
            .all(|n| n.kind_str() != "template_substitution"),
        "unary_expression" => node
            .child_by_field("argument")
            .is_some_and(|a| is_literal(a, depth + 1)),
        "binary_expression" => {
            node.child_by_field("left")
                .is_some_and(|a| is_literal(a, depth + 1))
                && node
                    .child_by_field("right")
                    .is_some_and(|a| is_literal(a, depth + 1))
        }
        "parenthesized_expression" | "as_expression" | "satisfies_expression" => node
            .named_child(0)
            .is_some_and(|a| is_literal(a, depth + 1)),
        _ => false,
    }
}

/// Parameters bind locals of the function they belong to (anonymous callbacks bind in the
/// enclosing definition). `constructor(private repo: Repo)` also declares the field `repo`.
fn parameters(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    // The parameters of a function type (`cb: (s: string) => void`) bind nothing.
    if node
        .parent()
        .is_some_and(|p| matches!(p.kind_str(), "function_type" | "constructor_type"))
    {
        return;
    }
    let mut c = node.walk();
    for p in node.named_children(&mut c) {
        match p.kind_str() {
            "required_parameter" | "optional_parameter" => {
                let Some(pattern) = p.child_by_field("pattern") else {
                    continue;
                };
                let ty = p.child_by_field("type").and_then(|t| annotation(t, cx));
                // `function (this: Subscriber<T>)`: the type of `this` outside a class.
                if pattern.kind_str() == "this" {
                    if ty.is_some() {
                        out.push(cx.binding(RefKind::Local, "this", ty, pattern));
                    }
                    continue;
                }
                if pattern.kind_str() == "identifier" {
                    let name = cx.text(pattern);
                    out.push(cx.binding(RefKind::Local, name, ty, pattern));
                    let property = (0..p.named_child_count()).any(|i| {
                        p.named_child(i as u32).is_some_and(|m| {
                            matches!(m.kind_str(), "accessibility_modifier" | "override_modifier")
                        })
                    }) || p.child(0).is_some_and(|k| k.kind_str() == "readonly");
                    if property && ty.is_some() {
                        let field = format!("this.{name}");
                        out.push(cx.binding(RefKind::Field, &field, ty, pattern));
                    }
                } else {
                    bind_pattern(pattern, cx, out);
                }
            }
            _ => bind_pattern(p, cx, out),
        }
    }
}

/// Every name a binding pattern declares, untyped: `a`, `{a, b: c}`, `[d, ...e]`, `f = 1`.
fn bind_pattern(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    bind_pattern_at(node, cx, out, 0);
}

fn bind_pattern_at(node: Node, cx: &Cx, out: &mut Vec<RawRef>, depth: u32) {
    if depth > MAX_NESTING {
        return;
    }
    match node.kind_str() {
        "identifier" | "shorthand_property_identifier_pattern" => {
            out.push(cx.binding(RefKind::Local, cx.text(node), None, node))
        }
        "assignment_pattern" | "object_assignment_pattern" => {
            if let Some(left) = node.child_by_field("left") {
                bind_pattern_at(left, cx, out, depth + 1);
            }
        }
        "pair_pattern" => {
            if let Some(value) = node.child_by_field("value") {
                bind_pattern_at(value, cx, out, depth + 1);
            }
        }
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            let mut c = node.walk();
            for child in node.named_children(&mut c) {
                bind_pattern_at(child, cx, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// `const x: T = ...`, `let x = new Foo()`, `const x = make()`, `const {a, b} = o`. A
/// declarator that holds a function or class is a definition, and `require()` an import.
fn variable(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(name) = node.child_by_field("name") else {
        return;
    };
    let value = node.child_by_field("value");
    if value.is_some_and(|v| is_require(v, cx)) {
        return;
    }
    if name.kind_str() != "identifier" {
        bind_pattern(name, cx, out);
        return;
    }
    if value.is_some_and(|v| FUNCTION_VALUES.contains(&v.kind_str()) || v.kind_str() == "class") {
        return;
    }
    // `const MAX = 10` says nothing a resolver could use.
    if value.is_some_and(|v| is_literal(v, 0)) && is_constant_name(cx.text(name)) {
        return;
    }
    let annotated = node.child_by_field("type").and_then(|t| annotation(t, cx));
    let ty = match annotated {
        Some(t) => Some(t.to_string()),
        None => value.and_then(|v| value_type(v, cx)),
    };
    out.push(cx.binding(RefKind::Local, cx.text(name), ty.as_deref(), name));
}

/// `name: T` or `name = new T()` in a class body: a field of the class with its type.
/// Fields holding functions are methods, and untyped fields say nothing.
fn field(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(name) = node
        .child_by_field("name")
        .or_else(|| node.child_by_field("property"))
    else {
        return;
    };
    let value = node.child_by_field("value");
    if value.is_some_and(|v| FUNCTION_VALUES.contains(&v.kind_str())) {
        return;
    }
    let ty = match node.child_by_field("type").and_then(|t| annotation(t, cx)) {
        Some(t) => Some(t.to_string()),
        None => value.and_then(|v| value_type(v, cx)),
    };
    if let Some(ty) = ty {
        out.push(cx.binding(RefKind::Field, name_text(name, cx), Some(&ty), name));
    }
}

/// `this.x = new Foo()` (or `= y as Foo`) in a method types the field `x`.
fn this_assignment(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(left) = node
        .child_by_field("left")
        .filter(|l| l.kind_str() == "member_expression")
    else {
        return;
    };
    if left.child_by_field("object").map(|o| o.kind_str()) != Some("this") {
        return;
    }
    let Some(ty) = node.child_by_field("right").and_then(|r| value_type(r, cx)) else {
        return;
    };
    out.push(cx.binding(RefKind::Field, cx.text(left), Some(&ty), left));
}

/// A function passed as a value: `xs.map(format)`, `setTimeout(this.tick)`. Other member
/// expressions (`opts.timeout`) are data far more often than functions.
fn callback(arg: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let is_function = match arg.kind_str() {
        "identifier" => true,
        "member_expression" => arg.child_by_field("object").map(|o| o.kind_str()) == Some("this"),
        _ => false,
    };
    if is_function {
        out.push(cx.reference(RefKind::Reference, cx.text(arg), arg));
    }
}

/// The type a value was built with: `new Foo()` -> `Foo()`, `make()` -> `make()` (what the
/// call returns), `x as Foo` -> `Foo`.
fn value_type(value: Node, cx: &Cx) -> Option<String> {
    let mut value = value;
    while value.kind_str() == "parenthesized_expression" {
        value = value.named_child(0)?;
    }
    match value.kind_str() {
        "new_expression" => {
            let c = value.child_by_field("constructor")?;
            matches!(c.kind_str(), "identifier" | "member_expression")
                .then(|| format!("{}()", cx.text(c)))
        }
        // Only plain function calls: what a method returns (`map.get(k)`) is rarely of
        // the receiver's kind, and an external receiver would make the value external.
        "call_expression" => {
            let f = value.child_by_field("function")?;
            (f.kind_str() == "identifier").then(|| format!("{}()", cx.text(f)))
        }
        "as_expression" | "satisfies_expression" => {
            let t = value.named_child(1)?;
            simple_type(t, cx).map(str::to_string)
        }
        _ => None,
    }
}

/// The type named by a `: T` annotation, when it is one named type.
fn annotation<'a>(node: Node, cx: &Cx<'a>) -> Option<&'a str> {
    let t = match node.kind_str() {
        "type_annotation" | "opting_type_annotation" => node.named_child(0)?,
        _ => node,
    };
    simple_type(t, cx)
}

/// `Foo`, `ns.Foo`, `Foo<T>` -> `Foo`, `Foo | null` -> `Foo`. Arrays, functions, object
/// literals and primitive types have no members to resolve.
fn simple_type<'a>(t: Node, cx: &Cx<'a>) -> Option<&'a str> {
    simple_type_at(t, cx, 0)
}

fn simple_type_at<'a>(t: Node, cx: &Cx<'a>, depth: u32) -> Option<&'a str> {
    if depth > MAX_NESTING {
        return None;
    }
    match t.kind_str() {
        "type_identifier" | "nested_type_identifier" | "identifier" => Some(cx.text(t)),
        "generic_type" => t.child_by_field("name").map(|n| cx.text(n)),
        "parenthesized_type" => simple_type_at(t.named_child(0)?, cx, depth + 1),
        "union_type" => {
            // `Foo | null | undefined`: the one type that is not nullish.
            let mut found = None;
            let mut c = t.walk();
            for member in t.named_children(&mut c) {
                if matches!(member.kind_str(), "literal_type" | "predefined_type") {
                    let text = cx.text(member);
                    if matches!(text, "null" | "undefined" | "void") {
                        continue;
                    }
                }
                if found.is_some() {
                    return None;
                }
                found = Some(simple_type_at(member, cx, depth + 1)?);
            }
            found
        }
        _ => None,
    }
}

/// `require("m")`, the value of a CommonJS import (recorded as an import, not a local).
fn is_require(value: Node, cx: &Cx) -> bool {
    let call = match value.kind_str() {
        "call_expression" => value,
        // `require("m").x`
        "member_expression" => match value.child_by_field("object") {
            Some(o) if o.kind_str() == "call_expression" => o,
            _ => return false,
        },
        _ => return false,
    };
    call.child_by_field("function")
        .is_some_and(|f| f.kind_str() == "identifier" && cx.text(f) == "require")
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::{extract_on_worker, names, nest};
    use crate::model::RefKind;

    #[test]
    fn deeply_nested_patterns_and_parentheses_do_not_exhaust_the_stack() {
        let src = "function f() { const {a, b: [c, ...d]} = o; let e = ((new Foo())); }\n";
        let x = extract_on_worker("a.js", src.into());
        assert_eq!(names(&x, RefKind::Local), ["a", "c", "d", "e"]);
        let e = x.refs.iter().find(|r| r.name == "e").unwrap();
        assert_eq!(e.module.as_deref(), Some("Foo()"));
        for deep in [
            format!("const {} = x;\n", nest("{a: ", "b", "}", 10_000)),
            format!("let y = {};\n", nest("(", "new Foo()", ")", 10_000)),
            format!("let z: {} = y;\n", nest("(", "Foo", ")", 10_000)),
        ] {
            // Followed by recursion, the first exhausted the stack.
            extract_on_worker("b.ts", deep);
        }
    }
}
