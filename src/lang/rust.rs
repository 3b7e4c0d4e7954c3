//! Rust: functions (methods inside `impl` and `trait` blocks, trait method signatures
//! included), structs and unions (classes), enums, traits (interfaces), type aliases and
//! associated types, `const`/`static` items (constants), inline `mod` blocks (modules) and
//! `macro_rules!` macros (functions). `impl T` / `impl Trait for T` blocks only name a scope,
//! so methods are qualified as `module.T.method`. `#[...]` attributes are part of the
//! signature and reported as decorators; `///` comments above them are the docs.
//! References: calls (`foo()`, `self.bar()`, `Foo::new()`, and a struct literal `Foo { .. }`
//! as a call of its type), macro invocations (`name!`), `use` / `extern crate` imports (use
//! trees expanded into one import per item), supertraits (inherits) and implemented traits
//! (implements, with the implementing type as `module`), functions passed as arguments
//! (Reference: `map(Self::convert)`), struct fields with their types (Field; tuple fields
//! are `0`, `1`, ...), and the locals of a function (Local): parameters, type parameters
//! typed by their first bound, `let` bindings typed as written or by their value
//! (`Foo::new()`, `open()?`, `Foo { .. }`, `Arc::new(Foo::new())`), and the untyped
//! bindings of closures, `for`, `if let` / `while let` and `match` patterns.
//! Module names come from the path under `src/` (`src/runtime/builder.rs` ->
//! `runtime.builder`, `mod.rs` dropped); a crate root (`src/lib.rs`, `src/main.rs`) is the
//! empty module, as `crate::` names it.

use super::{call_chain, dotted_module, Cx, Def, Rules};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use tree_sitter::Node;

pub struct Rust;

/// Items that may carry `#[...]` attributes reported as their decorators.
const ATTRIBUTED_ITEMS: &[&str] = &[
    "function_item",
    "function_signature_item",
    "struct_item",
    "union_item",
    "enum_item",
    "trait_item",
    "type_item",
    "associated_type",
    "const_item",
    "static_item",
    "mod_item",
    "macro_definition",
    "impl_item",
];

impl Rules for Rust {
    fn definition<'t>(&self, node: Node<'t>, _enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        let kind = match node.kind_str() {
            // The engine turns a function directly inside an impl or trait into a method.
            "function_item" | "function_signature_item" | "macro_definition" => NodeKind::Function,
            "struct_item" | "union_item" => NodeKind::Class,
            "enum_item" => NodeKind::Enum,
            "trait_item" => NodeKind::Interface,
            "type_item" | "associated_type" => NodeKind::Type,
            "const_item" | "static_item" => NodeKind::Constant,
            // `mod m;` only points at another file, which defines the module itself.
            "mod_item" if node.child_by_field("body").is_some() => NodeKind::Module,
            "impl_item" => return impl_scope(node, cx),
            _ => return None,
        };
        let name_node = node.child_by_field("name")?;
        let name = cx.text(name_node);
        // `const _: () = ...;` is an anonymous compile-time assertion, not a named item.
        if name.is_empty() || name == "_" {
            return None;
        }
        let body = if node.kind_str() == "macro_definition" {
            // Stop the signature at the rules so it reads `macro_rules! name`.
            node.named_child_of_kind("macro_rule")
        } else {
            // Body-less items (`fn f();`, `type T = u8;`) end the signature before the `;`.
            node.child_by_field("body").or_else(|| {
                let mut c = node.walk();
                let last = node.children(&mut c).last()?;
                (last.kind_str() == ";").then_some(last)
            })
        };
        Some(Def::new(kind, name.to_string(), name_node, node).body(body))
    }

    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
        let kind = node.kind_str();
        // Attributes are preceding siblings; reporting them from the item itself attaches
        // them to the definition rather than to its parent. `mod m;` defines nothing here.
        if ATTRIBUTED_ITEMS.contains(&kind)
            && (kind != "mod_item" || node.child_by_field("body").is_some())
        {
            decorators(node, cx, out);
        }
        match kind {
            "call_expression" => {
                if let Some(f) = node.child_by_field("function") {
                    out.push(cx.reference(RefKind::Call, cx.text(callee(f)), node));
                }
            }
            "macro_invocation" => {
                if let Some(m) = node.child_by_field("macro") {
                    let name = format!("{}!", cx.text(m));
                    out.push(cx.reference(RefKind::Call, &name, node));
                }
            }
            "use_declaration" => {
                if let Some(arg) = node.child_by_field("argument") {
                    use_tree(arg, "", node, cx, out);
                }
            }
            "extern_crate_declaration" => {
                if let Some(name) = cx.field(node, "name") {
                    out.push(cx.import(name, "", cx.field(node, "alias"), node));
                }
            }
            "trait_item" => {
                if let Some(bounds) = node.child_by_field("bounds") {
                    let mut c = bounds.walk();
                    for b in bounds.named_children(&mut c) {
                        if b.kind_str() != "lifetime" {
                            out.push(cx.reference(RefKind::Inherits, &type_path(b, cx), b));
                        }
                    }
                }
            }
            "impl_item" => {
                if let Some(t) = node.child_by_field("trait") {
                    // The impl block is no stored node: the implementing type goes along.
                    let mut r = cx.reference(RefKind::Implements, &type_path(t, cx), t);
                    let ty = node.child_by_field("type").map(|ty| type_name(ty, cx));
                    r.module = ty.filter(|ty| !ty.is_empty());
                    out.push(r);
                }
            }
            // `Foo { a: 1 }`, `Self { .. }`: an instantiation of the type.
            "struct_expression" => {
                if let Some(name) = node.child_by_field("name") {
                    let name = match name.kind_str() {
                        "generic_type_with_turbofish" => {
                            name.child_by_field("type").unwrap_or(name)
                        }
                        _ => name,
                    };
                    out.push(cx.reference(RefKind::Call, cx.text(name), node));
                }
            }
            "field_declaration" => {
                let in_struct = node
                    .parent()
                    .and_then(|l| l.parent())
                    .is_some_and(|s| matches!(s.kind_str(), "struct_item" | "union_item"));
                if let (true, Some(name), Some(ty)) = (
                    in_struct,
                    node.child_by_field("name"),
                    node.child_by_field("type"),
                ) {
                    out.push(cx.binding(RefKind::Field, cx.text(name), Some(cx.text(ty)), name));
                }
            }
            // Tuple struct fields are named by position: `self.0`.
            "ordered_field_declaration_list"
                if node.parent().is_some_and(|p| p.kind_str() == "struct_item") =>
            {
                let mut c = node.walk();
                for (i, ty) in node.children_by_field_name("type", &mut c).enumerate() {
                    let name = i.to_string();
                    out.push(cx.binding(RefKind::Field, &name, Some(cx.text(ty)), ty));
                }
            }
            "parameters" | "closure_parameters" => parameters(node, cx, out),
            // Type parameters of a function (not of an impl block, which is no node) stand
            // for their first trait bound: `fn f<T: Read>(r: T)` reads through `Read`.
            "type_parameters" | "where_clause"
                if node
                    .parent()
                    .is_some_and(|p| p.kind_str() == "function_item") =>
            {
                type_parameters(node, cx, out)
            }
            "let_declaration" => {
                let Some(pattern) = node.child_by_field("pattern") else {
                    return;
                };
                if pattern.kind_str() == "identifier" {
                    let ty = match node.child_by_field("type") {
                        Some(t) => Some(cx.text(t).to_string()),
                        None => node
                            .child_by_field("value")
                            .and_then(|v| value_type(v, cx, 0)),
                    };
                    out.push(cx.binding(RefKind::Local, cx.text(pattern), ty.as_deref(), pattern));
                } else {
                    bind_pattern(pattern, cx, out, 0);
                }
            }
            "let_condition" | "for_expression" => {
                if let Some(pattern) = node.child_by_field("pattern") {
                    bind_pattern(pattern, cx, out, 0);
                }
            }
            "match_pattern" => {
                if let Some(pattern) = node.named_child(0) {
                    bind_pattern(pattern, cx, out, 0);
                }
            }
            // Functions passed as values: `map(Self::convert)`, `spawn(run)`. Plain
            // variables resolve to nothing and are dropped.
            "arguments" => {
                let mut c = node.walk();
                for arg in node.named_children(&mut c) {
                    if matches!(arg.kind_str(), "identifier" | "scoped_identifier")
                        && !is_constant_case(cx.text(arg))
                    {
                        out.push(cx.reference(RefKind::Reference, cx.text(arg), arg));
                    }
                }
            }
            _ => {}
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        match path {
            "src/lib.rs" | "src/main.rs" => String::new(),
            _ => dotted_module(path, &["src/"], &["mod", "lib", "main"]),
        }
    }

    fn attached_prefix_kinds(&self) -> &'static [&'static str] {
        &["attribute_item"]
    }
}

/// `impl<T> Vec<T>` and `impl Display for Vec<T>` name the scope `Vec` for their items.
fn impl_scope<'t>(node: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
    let ty = node.child_by_field("type")?;
    let name = type_name(ty, cx);
    if name.is_empty() {
        return None;
    }
    // Kind `Class` so that functions directly inside become methods.
    let mut def = Def::new(NodeKind::Class, name, ty, node).body(node.child_by_field("body"));
    def.scope_only = true;
    Some(def)
}

/// The bare type name an impl block is for: generics, paths and references stripped.
fn type_name(mut ty: Node, cx: &Cx) -> String {
    // A loop rather than recursion: `&&&...T` may nest as deep as the input does.
    while matches!(
        ty.kind_str(),
        "generic_type" | "reference_type" | "pointer_type"
    ) {
        match ty.child_by_field("type") {
            Some(inner) => ty = inner,
            None => return String::new(),
        }
    }
    match ty.kind_str() {
        "scoped_type_identifier" => cx.field(ty, "name").unwrap_or("").to_string(),
        // Tuples, slices, `dyn Trait`: keep the text, without spaces that would read oddly.
        _ => cx.text(ty).split_whitespace().collect(),
    }
}

/// A trait or bound as written, its generic arguments dropped (`Iterator<Item = u8>` ->
/// `Iterator`, `fmt::Display` stays).
fn type_path(ty: Node, cx: &Cx) -> String {
    match ty.kind_str() {
        "generic_type" => ty
            .child_by_field("type")
            .map(|t| type_path(t, cx))
            .unwrap_or_default(),
        "higher_ranked_trait_bound" => ty
            .child_by_field("type")
            .map(|t| type_path(t, cx))
            .unwrap_or_default(),
        _ => cx.text(ty).to_string(),
    }
}

/// Parameters: locals typed as declared (`&self` and `self: Arc<Self>` are the receiver);
/// closure parameters may be bare patterns.
fn parameters(list: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        match p.kind_str() {
            "parameter" => {
                let Some(pattern) = p.child_by_field("pattern") else {
                    continue;
                };
                if pattern.kind_str() == "identifier" {
                    let ty = p.child_by_field("type").map(|t| cx.text(t));
                    out.push(cx.binding(RefKind::Local, cx.text(pattern), ty, pattern));
                } else {
                    bind_pattern(pattern, cx, out, 0);
                }
            }
            "self_parameter" | "variadic_parameter" | "attribute_item" => {}
            _ if list.kind_str() == "closure_parameters" => bind_pattern(p, cx, out, 0),
            _ => {}
        }
    }
}

/// `<T: Read + Send>` and `where T: Read`: `T` as a local standing for its first bound.
fn type_parameters(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    for p in node.named_children(&mut c) {
        let (name, bounds) = match p.kind_str() {
            "type_parameter" | "constrained_type_parameter" => (
                p.child_by_field("name")
                    .or_else(|| p.child_by_field("left")),
                p.child_by_field("bounds"),
            ),
            "where_predicate" => (p.child_by_field("left"), p.child_by_field("bounds")),
            _ => continue,
        };
        let Some(name) = name.filter(|n| n.kind_str() == "type_identifier") else {
            continue;
        };
        let bound = bounds.and_then(|b| {
            let mut bc = b.walk();
            let first = b
                .named_children(&mut bc)
                .find(|t| t.kind_str() != "lifetime" && !cx.text(*t).starts_with('?'));
            first
        });
        if let Some(bound) = bound {
            out.push(cx.binding(
                RefKind::Local,
                cx.text(name),
                Some(&type_path(bound, cx)),
                name,
            ));
        }
    }
}

/// Nesting deeper than any real pattern is left out rather than risking the stack.
const MAX_PATTERN_DEPTH: usize = 16;

/// Every name a pattern binds, untyped: `(a, b)`, `Some(x)`, `Foo { a, b: ref c }`,
/// `x @ 1..=2`. Capitalized identifiers are unit variants or constants, not bindings.
fn bind_pattern(p: Node, cx: &Cx, out: &mut Vec<RawRef>, depth: usize) {
    if depth > MAX_PATTERN_DEPTH {
        return;
    }
    match p.kind_str() {
        "identifier" => {
            let name = cx.text(p);
            if name != "_" && !name.starts_with(|c: char| c.is_ascii_uppercase()) {
                out.push(cx.binding(RefKind::Local, name, None, p));
            }
        }
        "shorthand_field_identifier" => {
            out.push(cx.binding(RefKind::Local, cx.text(p), None, p));
        }
        "field_pattern" => match p.child_by_field("pattern") {
            Some(inner) => bind_pattern(inner, cx, out, depth + 1),
            None => {
                if let Some(name) = p.child_by_field("name") {
                    bind_pattern(name, cx, out, depth + 1);
                }
            }
        },
        "tuple_pattern"
        | "slice_pattern"
        | "or_pattern"
        | "ref_pattern"
        | "mut_pattern"
        | "reference_pattern"
        | "captured_pattern"
        | "tuple_struct_pattern"
        | "struct_pattern" => {
            let mut c = p.walk();
            for (i, child) in p.named_children(&mut c).enumerate() {
                // The path of `Some(x)` / `Foo { .. }` names no binding.
                let is_path =
                    matches!(p.kind_str(), "tuple_struct_pattern" | "struct_pattern") && i == 0;
                if !is_path {
                    bind_pattern(child, cx, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Constructors whose value derefs to their argument: `Arc::new(Foo::new())` is used as a
/// `Foo`.
const WRAPPERS: &[&str] = &["Arc::new", "Box::new", "Box::pin", "Pin::new", "Rc::new"];

/// The type a `let` value shows: a struct literal's type, or `callee()` for a call of a path
/// or chain (`Foo::new()`, `self.conn()`, `a.b().c()`); `callee()?` when the result is
/// unwrapped by `?`, `.unwrap()` or `.expect(..)` (the resolver looks inside `Result` /
/// `Option`). `.await` and `&` change nothing.
fn value_type(v: Node, cx: &Cx, depth: usize) -> Option<String> {
    if depth > 4 {
        return None;
    }
    match v.kind_str() {
        "struct_expression" => {
            let name = v.child_by_field("name")?;
            let name = match name.kind_str() {
                "generic_type_with_turbofish" => name.child_by_field("type")?,
                _ => name,
            };
            Some(cx.text(name).to_string())
        }
        "await_expression" | "parenthesized_expression" => {
            value_type(v.named_child(0)?, cx, depth + 1)
        }
        "reference_expression" => value_type(v.child_by_field("value")?, cx, depth + 1),
        "try_expression" => {
            let inner = value_type(v.named_child(0)?, cx, depth + 1)?;
            inner.ends_with("()").then(|| format!("{inner}?"))
        }
        "call_expression" => {
            let f = callee(v.child_by_field("function")?);
            if f.kind_str() == "field_expression" {
                let method = cx.field(f, "field");
                if matches!(method, Some("unwrap" | "expect")) {
                    let inner = value_type(f.child_by_field("value")?, cx, depth + 1)?;
                    return inner.ends_with("()").then(|| format!("{inner}?"));
                }
            }
            let text = cx.text(f);
            if WRAPPERS.contains(&text) {
                let arg = v.child_by_field("arguments")?.named_child(0)?;
                return value_type(arg, cx, depth + 1);
            }
            if !matches!(
                f.kind_str(),
                "identifier" | "scoped_identifier" | "field_expression"
            ) {
                return None;
            }
            // A chain `self.conn(a).peer(..)` is kept without its arguments; type
            // arguments (`Vec::<u8>::new`) say nothing the resolver reads.
            call_chain(text, 120)
                .filter(|t| !t.contains('<'))
                .map(|t| format!("{t}()"))
        }
        _ => None,
    }
}

/// `MAX_SIZE`: a constant, not a function passed as a value.
fn is_constant_case(name: &str) -> bool {
    let last = name.rsplit("::").next().unwrap_or(name);
    last.bytes().any(|b| b.is_ascii_uppercase())
        && last
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The callee without turbofish arguments: `parse::<u8>` -> `parse`.
fn callee(f: Node) -> Node {
    if f.kind_str() == "generic_function" {
        f.child_by_field("function").unwrap_or(f)
    } else {
        f
    }
}

/// One decorator per `#[attr]` directly above the item (comments in between allowed).
fn decorators(item: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut attrs = Vec::new();
    let mut prev = item.prev_named_sibling();
    while let Some(p) = prev {
        match p.kind_str() {
            "attribute_item" => attrs.push(p),
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = p.prev_named_sibling();
    }
    for attr_item in attrs.into_iter().rev() {
        let Some(attr) = attr_item.named_child_of_kind("attribute") else {
            continue;
        };
        if let Some(path) = attr.named_child(0) {
            out.push(cx.reference(RefKind::Decorator, cx.text(path), attr_item));
        }
    }
}

/// Expands a use tree into imports: `a::b::{c, d as e, f::*}` gives `(a::b, c)`,
/// `(a::b, d as e)` and `(a::b::f, *)`.
fn use_tree(node: Node, prefix: &str, at: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    use_tree_at(node, prefix, at, cx, out, 0);
}

/// Nesting deeper than any real use tree is left out rather than risking the stack.
const MAX_USE_DEPTH: usize = 32;

fn use_tree_at(node: Node, prefix: &str, at: Node, cx: &Cx, out: &mut Vec<RawRef>, depth: usize) {
    if depth > MAX_USE_DEPTH {
        return;
    }
    match node.kind_str() {
        "use_as_clause" => {
            if let Some(path) = node.child_by_field("path") {
                let full = join_path(prefix, cx.text(path));
                push_path_import(&full, cx.field(node, "alias"), at, cx, out);
            }
        }
        "use_wildcard" => {
            let module = node
                .named_child(0)
                .map_or_else(|| prefix.to_string(), |p| join_path(prefix, cx.text(p)));
            out.push(cx.import(&module, "*", None, at));
        }
        "scoped_use_list" => {
            let inner = node
                .child_by_field("path")
                .map_or_else(|| prefix.to_string(), |p| join_path(prefix, cx.text(p)));
            if let Some(list) = node.child_by_field("list") {
                use_tree_at(list, &inner, at, cx, out, depth + 1);
            }
        }
        "use_list" => {
            let mut c = node.walk();
            for item in node.named_children(&mut c) {
                use_tree_at(item, prefix, at, cx, out, depth + 1);
            }
        }
        "identifier" | "scoped_identifier" | "self" | "crate" | "super" => {
            let full = join_path(prefix, cx.text(node));
            push_path_import(&full, None, at, cx, out);
        }
        _ => {}
    }
}

/// `a::b` under prefix `x` is `x::a::b`; `self` inside a list means the prefix itself.
fn join_path(prefix: &str, path: &str) -> String {
    let path = path.trim_start_matches("::");
    if prefix.is_empty() {
        path.to_string()
    } else if path == "self" {
        prefix.to_string()
    } else {
        format!("{prefix}::{path}")
    }
}

/// `a::b::c` imports item `c` from module `a::b`; a single segment imports a whole crate.
fn push_path_import(full: &str, alias: Option<&str>, at: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    match full.rsplit_once("::") {
        Some((module, name)) => out.push(cx.import(module, name, alias, at)),
        None => out.push(cx.import(full, "", alias, at)),
    }
}
