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
//! `new Foo()`, `Foo f(1)` and `std::make_unique<Foo>()` -> `Foo`), `#include` and `using`
//! imports, base classes (inherits) and `[[attributes]]` (decorators). Bindings: parameters
//! and local variables (`Local`, reported where a call first names them as its callee or
//! receiver, the only uses resolution has for them), variables at file or namespace level
//! (where declared: they shadow the same way), C++ data members with a class type
//! (`Field`), each typed by its type's name
//! in dotted form (`const geo::Point &p` -> `geo.Point`, `std::unique_ptr<Foo>` -> `Foo`,
//! `auto x = new Foo` -> `Foo`, `auto x = make()` -> `make()`; builtin types give none).
//! Functions named as values (`Reference`): identifier arguments, `&f`, `&Foo::m`, values
//! of initializer lists (`.open = foo_open`) and of assignments to members. Module names
//! are the dotted path (`src/util/str.c` -> `src.util.str`).

use super::{dotted_module, unquote, Cx, Def, FileState, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::RefMut;
use tree_sitter::Node;

pub struct CFamily;

/// What the walk of one file remembers between nodes (made by `file_state`).
pub struct State {
    /// Declarator nodes (tree-sitter ids) of typedefs and constant declarations whose
    /// definitions are reported when the walk reaches the declarator itself. Reporting from
    /// the declarator rather than from the declaration keeps `typedef struct S {..} T;` flat
    /// (struct `S` and type `T` are siblings, not `T.S`) and gives every name of
    /// `typedef struct S T, *PT;` its own definition. The ids are recorded when the walk visits
    /// the declaration, which in pre-order always comes right before its declarators; this
    /// avoids asking every identifier for its parent (a walk down from the root each time).
    pending: HashSet<usize>,
    /// The file is C++ (by extension): class members are bound as fields.
    cpp: bool,
    /// Parameters and locals bound so far in the function being walked, which ends at
    /// `function_end`. Only those a call names as its callee or receiver (`cb(x)`,
    /// `repo->save()`) matter to resolution, so each is reported at the first such call:
    /// most locals of C code never are, and this keeps their rows out of the database.
    /// By name (the first binding of a name counts): every identifier asks.
    function_end: usize,
    locals: HashMap<String, PendingLocal>,
    /// Variables at file or namespace level (reported where they are declared).
    file_names: HashSet<String>,
}

/// A parameter or local not reported yet (see `State::locals`).
struct PendingLocal {
    type_text: Option<String>,
    line: u32,
    reported: bool,
}

fn state<'c>(cx: &'c Cx) -> RefMut<'c, State> {
    super::state_of(cx, |s| match s {
        FileState::CFamily(s) => Some(s),
        _ => None,
    })
}

/// C++ source and header extensions (`.h` is parsed as C).
const CPP_EXTENSIONS: &[&str] = &["cpp", "cc", "cxx", "c++", "hpp", "hxx", "hh", "h++", "ipp"];

impl Rules for CFamily {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        if take_pending(node.id(), cx) {
            return declarator_def(node, cx);
        }
        match node.kind_str() {
            "function_definition" => {
                let (name_node, _) = declarator_name(node.child_by_field("declarator")?)?;
                let (name, scope) = split_name(name_node, cx)?;
                Some(
                    Def::new(NodeKind::Function, name, name_node, template_outer(node))
                        .body(node.child_by_field("body").or_else(|| semicolon(node)))
                        .scope(scope),
                )
            }
            "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
                let body = node.child_by_field("body")?;
                let name_node = node.child_by_field("name")?;
                // `Foo`, `ns::Foo` (scope `ns`), `hash<Foo>` (a specialization of `hash`).
                let (name, scope) = split_name(name_node, cx)?;
                let kind = if node.kind_str() == "enum_specifier" {
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
                register_declarators(node, cx);
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
                    register_declarators(node, cx);
                }
                None
            }
            "alias_declaration" => {
                let name_node = node.child_by_field("name")?;
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
                let name_node = node.child_by_field("name")?;
                let full = cx.text(name_node).replace(char::is_whitespace, "");
                let (scope, name) = match full.rsplit_once("::") {
                    Some((s, n)) => (Some(s.replace("::", ".")), n.to_string()),
                    None => (None, full),
                };
                Some(
                    Def::new(NodeKind::Module, name, name_node, node)
                        .body(node.child_by_field("body"))
                        .scope(scope),
                )
            }
            // `#define GUARD_H` (no value) is a flag, not a constant.
            "preproc_def" => {
                node.child_by_field("value")?;
                let name_node = node.child_by_field("name")?;
                let name = cx.text(name_node).to_string();
                Some(Def::new(NodeKind::Constant, name, name_node, node))
            }
            "preproc_function_def" => {
                let name_node = node.child_by_field("name")?;
                let name = cx.text(name_node).to_string();
                Some(
                    Def::new(NodeKind::Function, name, name_node, node)
                        .body(node.child_by_field("value")),
                )
            }
            _ => None,
        }
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        match node.kind_str() {
            "call_expression" => {
                if let Some(f) = node.child_by_field("function") {
                    report_local(f, cx, out);
                    out.push(cx.reference(RefKind::Call, &callee_name(f, cx), node));
                    // `std::make_unique<Foo>(..)` constructs a `Foo`.
                    if let Some(t) = made_type(f, cx) {
                        out.push(cx.reference(RefKind::Call, &t.replace('.', "::"), node));
                    }
                }
            }
            "new_expression" => {
                if let Some(t) = node.child_by_field("type") {
                    out.push(cx.reference(RefKind::Call, &strip_template_args(cx.text(t)), node));
                }
            }
            "declaration" => declaration(node, cx, out),
            "field_declaration" => field_declaration(node, cx, out),
            "for_range_loop" => {
                // `for (Foo &x : xs)`
                if let Some(d) = node.child_by_field("declarator") {
                    let ty = node.child_by_field("type").and_then(|t| type_name(t, cx));
                    bind(d, ty.as_deref(), cx, out);
                }
            }
            "lambda_expression" => {
                if let Some(params) = node
                    .child_by_field("declarator")
                    .and_then(|d| d.child_by_field("parameters"))
                {
                    parameters(params, cx, out);
                }
            }
            "argument_list" => arguments(node, cx, out),
            "initializer_list" => {
                // `{ .open = foo_open, .release = &foo_release }`, `{ handler, 0 }`
                let mut c = node.walk();
                for item in node.named_children(&mut c) {
                    let value = match item.kind_str() {
                        "initializer_pair" => item.child_by_field("value"),
                        _ => Some(item),
                    };
                    if let Some(v) = value.filter(|v| v.kind_str() == "identifier") {
                        function_value(v, cx, out);
                    }
                }
            }
            "pointer_expression" => {
                // `&handler`, `&Foo::method`
                let is_address = node
                    .child_by_field("operator")
                    .is_some_and(|o| cx.text(o) == "&");
                if let Some(arg) = node.child_by_field("argument").filter(|_| is_address) {
                    match arg.kind_str() {
                        "identifier" => function_value(arg, cx, out),
                        "qualified_identifier" => out.push(cx.reference(
                            RefKind::Reference,
                            &strip_template_args(cx.text(arg)),
                            arg,
                        )),
                        _ => {}
                    }
                }
            }
            "assignment_expression" => {
                // `ops->open = foo_open;` registers a callback.
                let to_member = node
                    .child_by_field("left")
                    .is_some_and(|l| l.kind_str() == "field_expression");
                if let Some(r) = node
                    .child_by_field("right")
                    .filter(|r| to_member && r.kind_str() == "identifier")
                {
                    function_value(r, cx, out);
                }
            }
            "preproc_include" => {
                if let Some(path) = node.child_by_field("path") {
                    let text = cx.text(path);
                    let module = match path.kind_str() {
                        "system_lib_string" => text.trim_start_matches('<').trim_end_matches('>'),
                        "string_literal" => unquote(text),
                        _ => text,
                    };
                    out.push(cx.import(module, "", None, node));
                }
            }
            "using_declaration" => using_import(node, cx, out),
            "function_definition" => {
                decorators(node, cx, out);
                {
                    let mut s = state(cx);
                    s.function_end = node.end_byte();
                    s.locals.clear();
                }
                if let Some(params) = node
                    .child_by_field("declarator")
                    .and_then(function_declarator)
                    .and_then(|d| d.child_by_field("parameters"))
                {
                    parameters(params, cx, out);
                }
            }
            "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
                decorators(node, cx, out);
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    if child.kind_str() == "base_class_clause" {
                        bases(child, cx, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &[], &[])
    }

    fn file_state(&self, path: &str) -> FileState {
        let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
        FileState::CFamily(State {
            pending: HashSet::default(),
            cpp: CPP_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)),
            function_end: 0,
            locals: HashMap::default(),
            file_names: HashSet::default(),
        })
    }
}

fn take_pending(id: usize, cx: &Cx) -> bool {
    state(cx).pending.remove(&id)
}

/// Declarators of one declaration that become definitions. Each finds its declaration by
/// asking for its parent, which tree-sitter answers by walking down from the root past
/// every earlier sibling: time quadratic in the length of `typedef int a, b, ...;`.
const MAX_DECLARATORS: usize = 256;

fn register_declarators(decl: Node, cx: &Cx) {
    let mut c = decl.walk();
    let ids: Vec<usize> = decl
        .children_by_field_name("declarator", &mut c)
        .take(MAX_DECLARATORS)
        .map(|d| d.id())
        .collect();
    state(cx).pending.extend(ids);
}

/// A typedef name or a constant, reported at its declarator (see `State::pending`).
fn declarator_def<'t>(declarator: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let decl = declarator.parent()?;
    let (name_node, _) = declarator_name(declarator)?;
    let (name, scope) = split_name(name_node, cx)?;
    let (kind, body) = if decl.kind_str() == "type_definition" {
        // `typedef struct S {..} T;` stops at the body of `S` (a definition of its own);
        // an anonymous `typedef struct {..} T;` keeps its members, they are shown nowhere
        // else; `typedef int T;` stops at the `;`.
        let named_type_body = decl
            .child_by_field("type")
            .filter(|t| t.child_by_field("name").is_some())
            .and_then(|t| t.child_by_field("body"));
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
    let (name_node, is_function) = declarator_name(decl.child_by_field("declarator")?)?;
    // `friend void swap(A&, A&);` declares a free function, not a member.
    if !is_function || decl.parent()?.kind_str() == "friend_declaration" {
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
    let is_const = decl.children(&mut c).any(|ch| {
        ch.kind_str() == "type_qualifier" && matches!(cx.text(ch), "const" | "constexpr")
    });
    if !is_const {
        return false;
    }
    let Some(d) = decl.child_by_field("declarator") else {
        return false;
    };
    match d.kind_str() {
        "init_declarator" => d
            .child_by_field("declarator")
            .is_some_and(|n| n.kind_str() == "identifier"),
        "field_identifier" => decl.child_by_field("default_value").is_some(),
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
        match d.kind_str() {
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
                d = d.child_by_field("declarator")?;
            }
            "pointer_declarator" | "array_declarator" | "init_declarator" => {
                is_function = false;
                d = d.child_by_field("declarator")?;
            }
            "parenthesized_declarator" | "reference_declarator" | "attributed_declarator" => {
                is_function = false;
                let mut c = d.walk();
                let inner = d.named_children(&mut c).find(|n| {
                    n.kind_str() != "attribute_declaration" && n.kind_str() != "ms_call_modifier"
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
    while n.kind_str() == "qualified_identifier" {
        if let Some(s) = n.child_by_field("scope") {
            scope.push(strip_template_args(cx.text(s)));
        }
        n = n.child_by_field("name")?;
    }
    let name = match n.kind_str() {
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
        if p.kind_str() != "template_declaration" {
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
            if matches!(p.kind_str(), "declaration" | "field_declaration")
                && p.child_by_field("declarator").is_none() =>
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
    (last.kind_str() == ";").then_some(last)
}

/// The callee as written, without template arguments: `v.push_back`, `p->m`, `ns::f`,
/// `make<int>` -> `make`.
fn callee_name(f: Node, cx: &Cx) -> String {
    match f.kind_str() {
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
        if matches!(
            base.kind_str(),
            "access_specifier" | "attribute_declaration"
        ) {
            continue;
        }
        let name = strip_template_args(cx.text(base));
        out.push(cx.reference(RefKind::Inherits, &name, base));
    }
}

/// Where a declaration stands: in a function body (locals) or at file or namespace level.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Body,
    Global,
}

/// The place of a declaration whose parent is `parent`, looking through preprocessor
/// conditionals, labels and `extern "C"`; `None` inside classes, templates and the rest.
fn placement(parent: Node) -> Option<Place> {
    let mut p = parent;
    for _ in 0..6 {
        match p.kind_str() {
            "compound_statement" | "for_statement" | "condition_clause" => {
                return Some(Place::Body)
            }
            "translation_unit" | "declaration_list" => return Some(Place::Global),
            "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "preproc_elifdef"
            | "labeled_statement"
            | "case_statement"
            | "linkage_specification" => p = p.parent()?,
            _ => return None,
        }
    }
    None
}

/// `Foo *f = make(), g;`, `auto s = new Circle(1);`, `if (auto r = get())`: each declared
/// variable is a local (in a body) or a file-level variable, typed by the declared type or,
/// for `auto`, by its initializer. Prototypes and constants (definitions of their own) bind
/// nothing. `Foo f(1, 2);` and `Foo f{1};` also construct a `Foo` (C++).
fn declaration(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(place) = node.parent().and_then(placement) else {
        return;
    };
    if place == Place::Global && is_constant_declaration(node, cx) {
        return;
    }
    let type_node = node.child_by_field("type");
    let declared = type_node.and_then(|t| type_name(t, cx));
    let is_auto = type_node.is_some_and(|t| t.kind_str() == "placeholder_type_specifier");
    let mut c = node.walk();
    for d in node.children_by_field_name("declarator", &mut c) {
        let Some((name, is_function)) = declarator_name(d) else {
            continue;
        };
        // `int helper(void);` declares a function, wherever it stands; in a body,
        // `Lock lock(mutex_);` is read as one too, but is a variable built from arguments.
        let built = is_function
            && place == Place::Body
            && declared.is_some()
            && is_cpp(cx)
            && built_from(d);
        if name.kind_str() != "identifier" || (is_function && !built) {
            continue;
        }
        let value = match d.kind_str() {
            "init_declarator" => d.child_by_field("value"),
            "function_declarator" => d.child_by_field("parameters"),
            _ => node.child_by_field("value"),
        };
        let inferred = match value {
            Some(v) if is_auto => value_type(v, cx),
            // `handler_fn h = on_event;`
            Some(v) if v.kind_str() == "identifier" => {
                function_value(v, cx, out);
                None
            }
            _ => None,
        };
        if let (Some(t), Some(v)) = (type_node, value) {
            let constructs = (built
                || matches!(v.kind_str(), "argument_list" | "initializer_list"))
                && matches!(
                    t.kind_str(),
                    "type_identifier" | "qualified_identifier" | "template_type"
                )
                && is_cpp(cx);
            if constructs {
                out.push(cx.reference(RefKind::Call, &strip_template_args(cx.text(t)), d));
            }
        }
        push_local(
            name,
            declared.as_deref().or(inferred.as_deref()),
            place,
            cx,
            out,
        );
    }
}

/// Whether a function declarator `name(a, b)` in a body is rather a variable built from
/// arguments: every "parameter" is a bare name, as no real parameter list is.
fn built_from(d: Node) -> bool {
    if d.kind_str() != "function_declarator"
        || d.child_by_field("declarator")
            .is_none_or(|n| n.kind_str() != "identifier")
    {
        return false;
    }
    let Some(params) = d.child_by_field("parameters") else {
        return false;
    };
    let mut c = params.walk();
    let mut any = false;
    for p in params.named_children(&mut c) {
        let is_name = p.kind_str() == "parameter_declaration"
            && p.child_by_field("declarator").is_none()
            && p.child_by_field("type")
                .is_some_and(|t| t.kind_str() == "type_identifier")
            && p.named_child_count() == 1;
        if !is_name {
            return false;
        }
        any = true;
    }
    any
}

/// The parameters of a function or lambda, typed by their declared types (a function
/// pointer parameter has none).
fn parameters(list: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        if !matches!(
            p.kind_str(),
            "parameter_declaration"
                | "optional_parameter_declaration"
                | "variadic_parameter_declaration"
        ) {
            continue;
        }
        let Some((name, is_function)) = p.child_by_field("declarator").and_then(declarator_name)
        else {
            continue;
        };
        if name.kind_str() != "identifier" {
            continue;
        }
        let ty = match is_function {
            true => None,
            false => p.child_by_field("type").and_then(|t| type_name(t, cx)),
        };
        push_local(name, ty.as_deref(), Place::Body, cx, out);
    }
}

/// A local named by declarator `d` (the variable of a range `for`).
fn bind(d: Node, ty: Option<&str>, cx: &Cx, out: &mut Vec<RawRef>) {
    if let Some((name, _)) = declarator_name(d) {
        if name.kind_str() == "identifier" {
            push_local(name, ty, Place::Body, cx, out);
        }
    }
}

/// A variable: reported now at file level, and at its first use as a call's callee or
/// receiver in a function (see `State::locals`).
fn push_local(name: Node, ty: Option<&str>, place: Place, cx: &Cx, out: &mut Vec<RawRef>) {
    let text = cx.text(name);
    let mut s = state(cx);
    match place {
        Place::Body => {
            s.locals
                .entry(text.to_string())
                .or_insert_with(|| PendingLocal {
                    type_text: ty.map(str::to_string),
                    line: super::line_of(name),
                    reported: false,
                });
        }
        Place::Global => {
            out.push(cx.binding(RefKind::Local, text, ty, name));
            s.file_names.insert(text.to_string());
        }
    }
}

/// Reports the local a call's callee starts with (`cb` of `cb(1)`, `o` of `o->ops->run()`)
/// the first time a call uses it.
fn report_local(callee: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut head = callee;
    loop {
        match head.kind_str() {
            "identifier" => break,
            "field_expression" => match head.child_by_field("argument") {
                Some(a) => head = a,
                None => return,
            },
            _ => return,
        }
    }
    let name = cx.text(head);
    let at = head.start_byte();
    let mut s = state(cx);
    if at >= s.function_end {
        return;
    }
    if let Some(local) = s.locals.get_mut(name) {
        if !local.reported {
            local.reported = true;
            let mut r = cx.binding(RefKind::Local, name, local.type_text.as_deref(), head);
            r.line = local.line;
            out.push(r);
        }
    }
}

/// Data members of a C++ class with a class type: `Repo *repo_;`,
/// `std::unique_ptr<Cache> cache_;`. (C struct members are only ever called through
/// function pointers, so their types lead nowhere and they are not reported.)
fn field_declaration(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    if !is_cpp(cx) || !in_class_body(node) {
        return;
    }
    let Some(ty) = node.child_by_field("type").and_then(|t| type_name(t, cx)) else {
        return;
    };
    let mut c = node.walk();
    for d in node.children_by_field_name("declarator", &mut c) {
        if let Some((name, false)) = declarator_name(d) {
            if name.kind_str() == "field_identifier" {
                out.push(cx.binding(RefKind::Field, cx.text(name), Some(&ty), name));
            }
        }
    }
}

/// Whether a member declaration stands in a class body (possibly inside `#if` blocks).
fn in_class_body(node: Node) -> bool {
    let mut p = node.parent();
    for _ in 0..6 {
        match p.map(|p| p.kind_str()) {
            Some("field_declaration_list") => return true,
            Some(
                "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif"
                | "preproc_elifdef",
            ) => p = p.and_then(|p| p.parent()),
            _ => return false,
        }
    }
    false
}

/// Identifier arguments may name functions passed as callbacks: `qsort(.., cmp_int)`.
fn arguments(list: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = list.walk();
    for arg in list.named_children(&mut c) {
        if arg.kind_str() == "identifier" {
            function_value(arg, cx, out);
        }
    }
}

/// An identifier used as a value, reported as a possible function reference unless it is
/// a variable bound earlier in the function or file, or a macro-style `UPPER_CASE` name.
fn function_value(ident: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let name = cx.text(ident);
    // Type keywords are identifiers only where macros confused the parser.
    const TYPE_WORDS: &[&str] = &[
        "bool", "char", "const", "double", "float", "int", "long", "short", "signed", "struct",
        "unsigned", "void",
    ];
    if is_macro_name(name) || TYPE_WORDS.contains(&name) {
        return;
    }
    let at = ident.start_byte();
    let bound = {
        let s = state(cx);
        (at < s.function_end && s.locals.contains_key(name)) || s.file_names.contains(name)
    };
    if !bound {
        out.push(cx.reference(RefKind::Reference, name, ident));
    }
}

/// `GFP_KERNEL`, `NULL`, `MAX_LEN`: all caps with at least one letter.
fn is_macro_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn is_cpp(cx: &Cx) -> bool {
    state(cx).cpp
}

/// The innermost function declarator on the way to a function definition's name: the one
/// holding its parameters (`int (*pick(int which))(int)` takes `which`).
fn function_declarator(mut d: Node) -> Option<Node> {
    let mut found = None;
    loop {
        match d.kind_str() {
            "function_declarator" => {
                found = Some(d);
                d = d.child_by_field("declarator")?;
            }
            "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                let mut c = d.walk();
                let inner = d
                    .named_children(&mut c)
                    .find(|n| n.kind_str().ends_with("declarator"));
                match d.child_by_field("declarator").or(inner) {
                    Some(next) => d = next,
                    None => return found,
                }
            }
            _ => return found,
        }
    }
}

/// A type reduced to the name of the type it denotes, dotted: `struct ops` -> `ops`,
/// `geo::Point` -> `geo.Point`, `std::vector<int>` -> `std.vector`, `std::unique_ptr<Foo>`
/// -> `Foo` (a smart pointer is used like the object). Builtin types, `auto` and
/// `decltype(..)` have none.
fn type_name(t: Node, cx: &Cx) -> Option<String> {
    // Smart pointers nest without bound in hostile input: followed in a loop, not by
    // recursion.
    let mut t = t;
    loop {
        match t.kind_str() {
            "type_identifier" => return Some(cx.text(t).to_string()),
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
                t = t.child_by_field("name")?;
            }
            "qualified_identifier" | "template_type" => {
                let mut inner = t;
                while inner.kind_str() == "qualified_identifier" {
                    inner = inner.child_by_field("name")?;
                }
                if inner.kind_str() == "template_type"
                    && matches!(cx.field(inner, "name"), Some("unique_ptr" | "shared_ptr"))
                {
                    t = first_type_argument(inner)?;
                    continue;
                }
                let name = strip_template_args(cx.text(t)).replace("::", ".");
                return Some(name.replace(' ', ""));
            }
            _ => return None,
        }
    }
}

/// The first type argument of `T<A, ..>`.
fn first_type_argument(template: Node) -> Option<Node> {
    let args = template.child_by_field("arguments")?;
    let mut c = args.walk();
    let first = args.named_children(&mut c).next()?;
    first.child_by_field("type")
}

/// The type `std::make_unique<Foo>` / `make_shared<Foo>` makes, given the callee.
fn made_type(callee: Node, cx: &Cx) -> Option<String> {
    let mut f = callee;
    while f.kind_str() == "qualified_identifier" {
        f = f.child_by_field("name")?;
    }
    if f.kind_str() != "template_function"
        || !matches!(cx.field(f, "name"), Some("make_unique" | "make_shared"))
    {
        return None;
    }
    type_name(first_type_argument(f)?, cx)
}

/// The type of an `auto` variable from its initializer: `new Foo(..)` is a `Foo`,
/// `make_unique<Foo>()` too; another call gives its callee followed by `()`.
fn value_type(value: Node, cx: &Cx) -> Option<String> {
    match value.kind_str() {
        "new_expression" => type_name(value.child_by_field("type")?, cx),
        "call_expression" => {
            let f = value.child_by_field("function")?;
            if let Some(t) = made_type(f, cx) {
                return Some(t);
            }
            match f.kind_str() {
                "identifier" | "qualified_identifier" | "template_function" => Some(format!(
                    "{}()",
                    strip_template_args(cx.text(f)).replace("::", ".")
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `[[nodiscard]]`, `[[gnu::always_inline]]` on a definition.
fn decorators(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    for decl in node.named_children(&mut c) {
        if decl.kind_str() != "attribute_declaration" {
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
    let is_namespace = node.children(&mut c).any(|ch| ch.kind_str() == "namespace");
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

#[cfg(test)]
mod tests {
    use crate::lang::testing::{extract_on_worker, names, nest};
    use crate::model::RefKind;

    #[test]
    fn smart_pointers_of_smart_pointers_are_unwrapped_in_a_loop() {
        let src = "void f() { std::unique_ptr<std::shared_ptr<Foo>> p; p->run(); }\n";
        let x = extract_on_worker("a.cpp", src.into());
        let p = x.refs.iter().find(|r| r.kind == RefKind::Local).unwrap();
        assert_eq!((p.name.as_str(), p.module.as_deref()), ("p", Some("Foo")));
        let deep = format!(
            "void f() {{ {} p; p->run(); }}\n",
            nest("std::unique_ptr<", "Foo", ">", 10_000)
        );
        // Followed by recursion, this exhausted the stack (when parsed within its budget).
        extract_on_worker("b.cpp", deep);
    }

    #[test]
    fn a_long_declaration_defines_its_first_declarators_in_linear_time() {
        let names_list: Vec<String> = (0..2_000).map(|i| format!("t{i}")).collect();
        let src = format!("typedef int {};\n", names_list.join(", "));
        let x = extract_on_worker("a.c", src);
        assert_eq!(x.nodes.len(), 1 + super::MAX_DECLARATORS);
        assert_eq!(x.nodes[1].name, "t0");
        let x = extract_on_worker("b.c", "typedef int A, *PA;\nint n = 1;\n".into());
        let defs: Vec<&str> = x.nodes[1..].iter().map(|n| n.name.as_str()).collect();
        assert_eq!(defs, ["A", "PA"]);
        assert!(names(&x, RefKind::Call).is_empty());
    }
}
