//! C and C++ (one set of rules for both grammars: C++ node kinds never occur in C trees).
//!
//! Definitions: function definitions (named by the innermost declarator identifier, through
//! pointer, reference and parenthesized declarators), structs, unions and classes with a body
//! (classes), enums with a body, typedefs and `using X = ...` aliases (types; every name of a
//! multi-name typedef), `#define NAME value` (constants), `#define F(x)` (functions),
//! `const`/`constexpr` variables outside functions (constants) and namespaces (modules).
//! C++ members: function definitions and member function declarations in class bodies are
//! methods (constructors, destructors and operators included); an out-of-class
//! `void a::B::c() {}` is a method `c` with scope `a.B`. A `template <...>` line belongs to
//! the definition it wraps. References: calls (`f()`, `obj.m()`, `p->m()`, `ns::f()`,
//! `new Foo()` -> `Foo`), `#include` and `using` imports, base classes (inherits) and
//! `[[attributes]]` (decorators). Module names are the dotted path (`src/util/str.c` ->
//! `src.util.str`).

use super::{dotted_module, unquote, Cx, Def, Rules};
use crate::model::{NodeKind, RawRef, RefKind};
use std::cell::RefCell;
use tree_sitter::Node;

pub struct CFamily;

thread_local! {
    /// Declarator nodes (tree-sitter ids) of typedefs and constant declarations whose
    /// definitions are reported when the walk reaches the declarator itself. Reporting from
    /// the declarator rather than from the declaration keeps `typedef struct S {..} T;` flat
    /// (struct `S` and type `T` are siblings, not `T.S`) and gives every name of
    /// `typedef struct S T, *PT;` its own definition. The ids are recorded when the walk visits
    /// the declaration, which in pre-order always comes right before its declarators; this
    /// avoids asking every identifier for its parent (a walk down from the root each time).
    static PENDING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

impl Rules for CFamily {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        if take_pending(node.id()) {
            return declarator_def(node, cx);
        }
        match node.kind() {
            "function_definition" => {
                let (name_node, _) = declarator_name(node.child_by_field_name("declarator")?)?;
                let (name, scope) = split_name(name_node, cx)?;
                Some(
                    Def::new(NodeKind::Function, name, name_node, template_outer(node))
                        .body(node.child_by_field_name("body").or_else(|| semicolon(node)))
                        .scope(scope),
                )
            }
            "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
                let body = node.child_by_field_name("body")?;
                let name_node = node.child_by_field_name("name")?;
                // `Foo`, `ns::Foo` (scope `ns`), `hash<Foo>` (a specialization of `hash`).
                let (name, scope) = split_name(name_node, cx)?;
                let kind = if node.kind() == "enum_specifier" {
                    NodeKind::Enum
                } else {
                    NodeKind::Class
                };
                Some(
                    Def::new(kind, name, name_node, specifier_outer(node))
                        .body(Some(body))
                        .scope(scope),
                )
            }
            "type_definition" => {
                register_declarators(node);
                None
            }
            "declaration" | "field_declaration" => {
                if enclosing.is_type_like() {
                    if let Some(def) = member_function(node, cx) {
                        return Some(def);
                    }
                }
                if matches!(
                    enclosing,
                    NodeKind::File | NodeKind::Module | NodeKind::Class
                ) && is_constant_declaration(node, cx)
                {
                    register_declarators(node);
                }
                None
            }
            "alias_declaration" => {
                let name_node = node.child_by_field_name("name")?;
                Some(
                    Def::new(
                        NodeKind::Type,
                        cx.text(name_node).to_string(),
                        name_node,
                        template_outer(node),
                    )
                    .body(semicolon(node)),
                )
            }
            "namespace_definition" => {
                let name_node = node.child_by_field_name("name")?;
                let full = cx.text(name_node).replace(char::is_whitespace, "");
                let (scope, name) = match full.rsplit_once("::") {
                    Some((s, n)) => (Some(s.replace("::", ".")), n.to_string()),
                    None => (None, full),
                };
                Some(
                    Def::new(NodeKind::Module, name, name_node, node)
                        .body(node.child_by_field_name("body"))
                        .scope(scope),
                )
            }
            // `#define GUARD_H` (no value) is a flag, not a constant.
            "preproc_def" => {
                node.child_by_field_name("value")?;
                let name_node = node.child_by_field_name("name")?;
                let name = cx.text(name_node).to_string();
                Some(Def::new(NodeKind::Constant, name, name_node, node))
            }
            "preproc_function_def" => {
                let name_node = node.child_by_field_name("name")?;
                let name = cx.text(name_node).to_string();
                Some(
                    Def::new(NodeKind::Function, name, name_node, node)
                        .body(node.child_by_field_name("value")),
                )
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind() {
            "call_expression" => {
                if let Some(f) = node.child_by_field_name("function") {
                    out.push(cx.reference(RefKind::Call, &callee_name(f, cx), node));
                }
            }
            "new_expression" => {
                if let Some(t) = node.child_by_field_name("type") {
                    out.push(cx.reference(RefKind::Call, &strip_template_args(cx.text(t)), node));
                }
            }
            "preproc_include" => {
                if let Some(path) = node.child_by_field_name("path") {
                    let text = cx.text(path);
                    let module = match path.kind() {
                        "system_lib_string" => text.trim_start_matches('<').trim_end_matches('>'),
                        "string_literal" => unquote(text),
                        _ => text,
                    };
                    out.push(cx.import(module, "", None, node));
                }
            }
            "using_declaration" => using_import(node, cx, out),
            "function_definition" => decorators(node, cx, out),
            "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
                decorators(node, cx, out);
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    if child.kind() == "base_class_clause" {
                        bases(child, cx, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        // A new file: nothing from a previous walk on this thread may linger.
        PENDING.with(|p| p.borrow_mut().clear());
        dotted_module(path, &[], &[])
    }
}

fn take_pending(id: usize) -> bool {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.iter().position(|&x| x == id) {
            Some(i) => {
                p.swap_remove(i);
                true
            }
            None => false,
        }
    })
}

fn register_declarators(decl: Node) {
    let mut c = decl.walk();
    let ids: Vec<usize> = decl
        .children_by_field_name("declarator", &mut c)
        .map(|d| d.id())
        .collect();
    PENDING.with(|p| p.borrow_mut().extend(ids));
}

/// A typedef name or a constant, reported at its declarator (see `PENDING`).
fn declarator_def<'t>(declarator: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let decl = declarator.parent()?;
    let (name_node, _) = declarator_name(declarator)?;
    let (name, scope) = split_name(name_node, cx)?;
    let (kind, body) = if decl.kind() == "type_definition" {
        // `typedef struct S {..} T;` stops at the body of `S` (a definition of its own);
        // an anonymous `typedef struct {..} T;` keeps its members, they are shown nowhere
        // else; `typedef int T;` stops at the `;`.
        let named_type_body = decl
            .child_by_field_name("type")
            .filter(|t| t.child_by_field_name("name").is_some())
            .and_then(|t| t.child_by_field_name("body"));
        (NodeKind::Type, named_type_body.or_else(|| semicolon(decl)))
    } else {
        (NodeKind::Constant, semicolon(decl))
    };
    Some(
        Def::new(kind, name, name_node, template_outer(decl))
            .body(body)
            .scope(scope),
    )
}

/// `void f();`, `Foo(int);`, `~Foo();`, `virtual int g() const = 0;` in a class body.
fn member_function<'t>(decl: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let (name_node, is_function) = declarator_name(decl.child_by_field_name("declarator")?)?;
    // `friend void swap(A&, A&);` declares a free function, not a member.
    if !is_function || decl.parent()?.kind() == "friend_declaration" {
        return None;
    }
    let (name, scope) = split_name(name_node, cx)?;
    Some(
        Def::new(NodeKind::Function, name, name_node, template_outer(decl))
            .body(semicolon(decl))
            .scope(scope),
    )
}

/// `const int X = 1;` / `static constexpr int N = 3;`: the variable itself is constant
/// (a `const char *p` is a pointer to constants and is left out).
fn is_constant_declaration(decl: Node, cx: &Cx) -> bool {
    let mut c = decl.walk();
    let is_const = decl
        .children(&mut c)
        .any(|ch| ch.kind() == "type_qualifier" && matches!(cx.text(ch), "const" | "constexpr"));
    if !is_const {
        return false;
    }
    let Some(d) = decl.child_by_field_name("declarator") else {
        return false;
    };
    match d.kind() {
        "init_declarator" => d
            .child_by_field_name("declarator")
            .is_some_and(|n| n.kind() == "identifier"),
        "field_identifier" => decl.child_by_field_name("default_value").is_some(),
        _ => false,
    }
}

/// The node naming a declarator (through pointers, references, arrays, parentheses and
/// initializers), and whether it declares a function: the name's own declarator is a
/// function declarator (`int (*f)(int)` is a pointer, `int (*g(void))(int)` a function).
fn declarator_name(mut d: Node) -> Option<(Node, bool)> {
    let mut is_function = false;
    // Bounded: declarators nest only as deep as the source text does.
    loop {
        match d.kind() {
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name"
            | "template_function"
            | "operator_cast"
            | "primitive_type" => return Some((d, is_function)),
            "function_declarator" => {
                is_function = true;
                d = d.child_by_field_name("declarator")?;
            }
            "pointer_declarator" | "array_declarator" | "init_declarator" => {
                is_function = false;
                d = d.child_by_field_name("declarator")?;
            }
            "parenthesized_declarator" | "reference_declarator" | "attributed_declarator" => {
                is_function = false;
                let mut c = d.walk();
                let inner = d.named_children(&mut c).find(|n| {
                    n.kind() != "attribute_declaration" && n.kind() != "ms_call_modifier"
                });
                d = inner?;
            }
            _ => return None,
        }
    }
}

/// Name and extra scope of a declarator name: `a::B::c` -> (`c`, `a.B`), `~Foo` -> `~Foo`,
/// `swap<int>` -> `swap`.
fn split_name(name_node: Node, cx: &Cx) -> Option<(String, Option<String>)> {
    let mut scope: Vec<String> = Vec::new();
    let mut n = name_node;
    while n.kind() == "qualified_identifier" {
        if let Some(s) = n.child_by_field_name("scope") {
            scope.push(strip_template_args(cx.text(s)));
        }
        n = n.child_by_field_name("name")?;
    }
    let name = match n.kind() {
        "template_function" | "template_type" => cx.field(n, "name")?.to_string(),
        _ => super::compact(cx.text(n), 200),
    };
    if name.is_empty() {
        return None;
    }
    let scope = (!scope.is_empty()).then(|| scope.join("."));
    Some((name, scope))
}

/// The definition including a wrapping `template <...>` (possibly several, for members of
/// class templates defined out of line).
fn template_outer(node: Node) -> Node {
    let mut outer = node;
    while let Some(p) = outer.parent() {
        if p.kind() != "template_declaration" {
            break;
        }
        outer = p;
    }
    outer
}

/// A struct/class/enum standing alone as `struct S {..};` is the whole declaration (so the
/// comments above it are its docs); with declarators (`struct S {..} s;`) only the specifier.
fn specifier_outer(node: Node) -> Node {
    match node.parent() {
        Some(p)
            if matches!(p.kind(), "declaration" | "field_declaration")
                && p.child_by_field_name("declarator").is_none() =>
        {
            template_outer(p)
        }
        _ => template_outer(node),
    }
}

/// The trailing `;` of a declaration (possibly inside `= default;`), where its signature
/// stops.
fn semicolon(node: Node) -> Option<Node> {
    let mut last = node;
    while last.child_count() > 0 {
        let mut c = last.walk();
        last = last.children(&mut c).last()?;
    }
    (last.kind() == ";").then_some(last)
}

/// The callee as written, without template arguments: `v.push_back`, `p->m`, `ns::f`,
/// `make<int>` -> `make`.
fn callee_name(f: Node, cx: &Cx) -> String {
    match f.kind() {
        "template_function" | "qualified_identifier" | "field_expression" => {
            strip_template_args(cx.text(f))
        }
        _ => cx.text(f).to_string(),
    }
}

/// Drops `<...>` groups: `ns::Other<T>` -> `ns::Other`. Operator names keep their `<`.
fn strip_template_args(text: &str) -> String {
    if text.contains("operator") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for ch in text.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `class D : public B, private ns::C<T>` inherits `B` and `ns::C`.
fn bases(clause: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = clause.walk();
    for base in clause.named_children(&mut c) {
        if matches!(base.kind(), "access_specifier" | "attribute_declaration") {
            continue;
        }
        let name = strip_template_args(cx.text(base));
        out.push(cx.reference(RefKind::Inherits, &name, base));
    }
}

/// `[[nodiscard]]`, `[[gnu::always_inline]]` on a definition.
fn decorators(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    for decl in node.named_children(&mut c) {
        if decl.kind() != "attribute_declaration" {
            continue;
        }
        let mut c2 = decl.walk();
        for attr in decl.named_children(&mut c2) {
            let Some(name) = cx.field(attr, "name") else {
                continue;
            };
            let full = match cx.field(attr, "prefix") {
                Some(prefix) => format!("{prefix}::{name}"),
                None => name.to_string(),
            };
            out.push(cx.reference(RefKind::Decorator, &full, attr));
        }
    }
}

/// `using namespace std;` imports everything from `std`; `using std::vector;` one name.
fn using_import(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(target) = node.named_child(0) else {
        return;
    };
    let mut c = node.walk();
    let is_namespace = node.children(&mut c).any(|ch| ch.kind() == "namespace");
    let path = cx.text(target).replace(char::is_whitespace, "");
    if is_namespace {
        out.push(cx.import(&path, "*", None, node));
    } else {
        match path.rsplit_once("::") {
            Some((module, name)) => out.push(cx.import(module, name, None, node)),
            None => out.push(cx.import(&path, "", None, node)),
        }
    }
}
