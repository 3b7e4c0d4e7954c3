//! Python: functions, classes, methods (decorated ones included, the `def` line is the
//! definition's line), UPPER_CASE module/class constants, docstrings, calls, imports,
//! base classes and decorators. Module names come from the path (`src/` layouts stripped).

use super::{dedent, dotted_module, unquote, Cx, Def, FileState, Rules, MAX_NESTING};
use crate::lang::NodeExt;
use crate::model::{NodeKind, RawRef, RefKind};
use rustc_hash::FxHashMap;
use std::cell::RefMut;
use std::sync::OnceLock;
use tree_sitter::{Language, Node};

pub struct Python;

impl Rules for Python {
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>> {
        match node.kind_str() {
            "function_definition" | "class_definition" => {
                // A decorated definition is reported from its `decorated_definition` wrapper.
                if state(cx).decorated == node.id() {
                    return None;
                }
                self.def_of(node, node, cx)
            }
            "decorated_definition" => {
                let inner = node.child_by_field("definition")?;
                state(cx).decorated = inner.id();
                self.def_of(inner, node, cx)
            }
            "expression_statement" => {
                state(cx).statement = node.named_child(0).map_or(usize::MAX, |c| c.id());
                None
            }
            "assignment" if matches!(enclosing, NodeKind::File | NodeKind::Class) => {
                // Only plain statements `NAME = ...` at module or class level.
                if state(cx).statement != node.id() {
                    return None;
                }
                let left = node.child_by_field("left")?;
                if left.kind_str() != "identifier" {
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
        let ids = ids();
        let kind = node.kind_id();
        let mut state = state(cx);
        enter(&mut state, node, kind, ids);
        // `ERROR` nodes have the id `u16::MAX`, past every grammar kind.
        if !ids.has_sites.get(kind as usize).is_some_and(|&has| has) {
            return;
        }
        let before = out.len();
        self.sites(&mut state, node, kind, ids, cx, out);
        if out.len() > before {
            settle_locals(&mut state, out, before);
        }
    }

    fn module_name(&self, path: &str, _root: Node, _cx: &Cx) -> String {
        dotted_module(path, &["src/", "lib/"], &["__init__"])
    }

    fn file_state(&self, _path: &str) -> FileState {
        FileState::Python(State {
            scopes: vec![Scope {
                end: usize::MAX,
                class: false,
                bound: FxHashMap::default(),
            }],
            bases: usize::MAX,
            decorated: usize::MAX,
            statement: usize::MAX,
        })
    }
}

impl Python {
    fn sites(
        &self,
        state: &mut State,
        node: Node,
        kind: u16,
        ids: &Ids,
        cx: &Cx,
        out: &mut Vec<RawRef>,
    ) {
        match kind {
            k if k == ids.call => {
                if let Some(f) = node.child_by_field_id(ids.function) {
                    out.push(cx.reference(RefKind::Call, cx.text(f), node));
                }
            }
            k if k == ids.decorator => {
                if let Some(expr) = node.named_child(0) {
                    let target = match expr.kind_id() {
                        k if k == ids.call => expr.child_by_field_id(ids.function).unwrap_or(expr),
                        _ => expr,
                    };
                    out.push(cx.reference(RefKind::Decorator, cx.text(target), node));
                }
            }
            k if k == ids.class_definition => {
                if let Some(bases) = node.child_by_field_id(ids.superclasses) {
                    state.bases = bases.id();
                    let mut c = bases.walk();
                    for base in bases.named_children(&mut c) {
                        if base.kind_str() != "keyword_argument" {
                            out.push(cx.reference(RefKind::Inherits, cx.text(base), base));
                        }
                    }
                }
            }
            k if k == ids.parameters || k == ids.lambda_parameters => parameters(node, cx, out),
            k if k == ids.assignment => assignment(state, node, ids, cx, out),
            k if k == ids.for_statement || k == ids.for_in_clause => {
                if let Some(left) = node.child_by_field_id(ids.left) {
                    bind_names(left, cx, out, 0);
                }
            }
            k if k == ids.as_pattern => {
                // `with Session() as s`: a context manager usually returns itself.
                let Some(target) = node.child_by_field_id(ids.alias) else {
                    return;
                };
                let target = match target.kind_str() {
                    "as_pattern_target" => target.named_child(0).unwrap_or(target),
                    _ => target,
                };
                let in_with = node.parent().is_some_and(|p| p.kind_str() == "with_item");
                let called = node
                    .named_child(0)
                    .filter(|v| in_with && v.kind_id() == ids.call)
                    .and_then(|v| v.child_by_field_id(ids.function))
                    .filter(|f| matches!(f.kind_str(), "identifier" | "attribute"));
                match (target.kind_str(), called) {
                    ("identifier", Some(f)) => {
                        let ty = format!("{}()", cx.text(f));
                        out.push(cx.binding(RefKind::Local, cx.text(target), Some(&ty), target));
                    }
                    _ => bind_names(target, cx, out, 0),
                }
            }
            k if k == ids.argument_list => {
                // Functions passed as values: `sorted(xs, key=by_name)`, `partial(f, 1)`.
                // A class's bases are its superclasses, not values passed along; only its
                // keyword arguments (`metaclass=Meta`) are.
                let bases = state.bases == node.id();
                let mut c = node.walk();
                for arg in node.named_children(&mut c) {
                    let value = match arg.kind_id() {
                        k if k == ids.keyword_argument => arg.child_by_field_id(ids.value),
                        _ if bases => None,
                        _ => Some(arg),
                    };
                    // `self` passed along is the object, not a reference to a definition.
                    // Builtins (`str`, `ValueError`) and dunders name no repository definition.
                    let named = value.filter(|v| match v.kind_str() {
                        "identifier" => {
                            let t = cx.text(*v);
                            !matches!(t, "self" | "cls")
                                && !t.starts_with("__")
                                && !crate::resolve::is_builtin("python", t)
                        }
                        kind => kind == "attribute",
                    });
                    if let Some(v) = named {
                        out.push(cx.reference(RefKind::Reference, cx.text(v), v));
                    }
                }
            }
            k if k == ids.import_statement => {
                let mut c = node.walk();
                for item in node.children_by_field_name("name", &mut c) {
                    let (name, alias) = split_alias(item, cx);
                    out.push(cx.import(name, "", alias, node));
                }
            }
            k if k == ids.import_from_statement => {
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
}

impl Python {
    fn def_of<'t>(&self, def: Node<'t>, outer: Node<'t>, cx: &Cx) -> Option<Def<'t>> {
        let name_node = def.child_by_field("name")?;
        let kind = if def.kind_str() == "class_definition" {
            NodeKind::Class
        } else {
            NodeKind::Function
        };
        let body = def.child_by_field("body");
        // The line of `def`/`class` (not the decorator), as Python's `ast` reports it.
        let mut d = Def::new(kind, cx.text(name_node).to_string(), def, outer)
            .body(body)
            .docstring(body.and_then(|b| docstring(b, cx)));
        d.name_node = def;
        Some(d)
    }
}

/// What the walk of one file remembers between nodes (made by `file_state`). Node ids are
/// tree-sitter's; `usize::MAX` is none.
pub struct State {
    /// The functions (and lambdas) the walk is inside, innermost last, with the variables
    /// bound in each; the module is at the bottom. A pre-order walk sees parameters and
    /// assignments before their uses.
    scopes: Vec<Scope>,
    /// The base list of the class last seen (the walk visits it right after the class).
    bases: usize,
    /// The definition inside the `decorated_definition`, and the expression directly in the
    /// expression statement, last seen: the walk visits them next. Asking each function or
    /// assignment for its parent instead walked down from the root every time, most of
    /// the extraction time of a file of many statements (over 200 s for 50 MB of them).
    decorated: usize,
    statement: usize,
}

fn state<'c>(cx: &'c Cx) -> RefMut<'c, State> {
    super::state_of(cx, |s| match s {
        FileState::Python(s) => Some(s),
        _ => None,
    })
}

/// A function being walked: where it ends and its variables so far.
struct Scope {
    end: usize,
    /// A class body: its names are not visible inside its methods.
    class: bool,
    bound: FxHashMap<String, Binding>,
}

/// A variable not yet stored: most are never called or used as a receiver, so its `Local`
/// reference is written only at the first site that does.
struct Binding {
    local: RawRef,
    /// The functions (by where they end) it was written in: a use in a nested function
    /// writes it there too, where resolution looks first.
    stored_in: Vec<usize>,
}

/// Keeps the scope stack in step with the walk: leaves finished functions, enters `node`.
fn enter(state: &mut State, node: Node, kind: u16, ids: &Ids) {
    let s = &mut state.scopes;
    let start = node.start_byte();
    while s.len() > 1 && s.last().is_some_and(|f| f.end <= start) {
        s.pop();
    }
    // Every node that opens a definition's scope, as the extraction engine attaches
    // references to it (a decorator belongs to the decorated function).
    if kind == ids.function_definition
        || kind == ids.lambda
        || kind == ids.decorated_definition
        || kind == ids.class_definition
    {
        s.push(Scope {
            end: node.end_byte(),
            class: kind == ids.class_definition,
            bound: FxHashMap::default(),
        });
    }
}

/// Holds back the variables just extracted, writes one where a call or a reference starts
/// with it (`x()`, `x.save()`), and drops references that are only a variable passed along
/// (`f(request)`): most argument names are such variables, not definitions.
fn settle_locals(state: &mut State, out: &mut Vec<RawRef>, from: usize) {
    if from == out.len() {
        return;
    }
    // Rebuilt in one pass: removing and inserting in place took time quadratic in the
    // references of one node (an argument list or a target list of thousands of names).
    let sites: Vec<RawRef> = out.drain(from..).collect();
    let s = &mut state.scopes;
    for site in sites {
        match site.kind {
            RefKind::Local => {
                let local = site;
                let Some(scope) = s.last_mut() else {
                    continue;
                };
                match scope.bound.get_mut(&local.name) {
                    // The first binding with a type is the one resolution uses.
                    Some(b) if b.local.module.is_none() && local.module.is_some() => {
                        b.local.module = local.module;
                    }
                    Some(_) => {}
                    None => {
                        scope.bound.insert(
                            local.name.clone(),
                            Binding {
                                local,
                                stored_in: Vec::new(),
                            },
                        );
                    }
                }
            }
            RefKind::Reference
                if s.last()
                    .is_some_and(|f| f.bound.contains_key(site.name.as_str())) => {}
            RefKind::Call | RefKind::Reference | RefKind::Decorator => {
                let head = site.name.split(['.', '(', '[']).next().unwrap_or("");
                // The innermost function binding the name (closures see outer ones).
                let here = s.last().map_or(0, |f| f.end);
                let found = s
                    .iter_mut()
                    .rev()
                    .enumerate()
                    .filter(|(depth, f)| *depth == 0 || !f.class)
                    .find_map(|(_, f)| f.bound.get_mut(head));
                if let Some(b) = found.filter(|b| !b.stored_in.contains(&here)) {
                    b.stored_in.push(here);
                    let mut local = b.local.clone();
                    local.line = site.line;
                    out.push(local);
                }
                out.push(site);
            }
            _ => out.push(site),
        }
    }
}

/// Parameters bind locals, typed by their annotation (`self` and `cls` are the receiver).
fn parameters(node: Node, cx: &Cx, out: &mut Vec<RawRef>) {
    let mut c = node.walk();
    for p in node.named_children(&mut c) {
        let (name, ty) = match p.kind_str() {
            "identifier" => (Some(p), None),
            "typed_parameter" => (p.named_child(0), p.child_by_field("type")),
            "default_parameter" => (p.child_by_field("name"), None),
            "typed_default_parameter" => (p.child_by_field("name"), p.child_by_field("type")),
            "list_splat_pattern" | "dictionary_splat_pattern" => (p.named_child(0), None),
            _ => (None, None),
        };
        let Some(name) = name else { continue };
        let name = match name.kind_str() {
            "list_splat_pattern" | "dictionary_splat_pattern" => match name.named_child(0) {
                Some(n) => n,
                None => continue,
            },
            _ => name,
        };
        let text = cx.text(name);
        if name.kind_str() == "identifier" && text != "self" && text != "cls" {
            out.push(cx.binding(RefKind::Local, text, ty.map(|t| cx.text(t)), name));
        }
    }
}

/// `x = Session()`, `x: Session = ...`, `self.session = Session()`: a local (at module level a
/// global, which shadows the same way) or a field of the enclosing class, typed by the
/// annotation or by the call that produced the value.
fn assignment(state: &State, node: Node, ids: &Ids, cx: &Cx, out: &mut Vec<RawRef>) {
    let Some(left) = node.child_by_field_id(ids.left) else {
        return;
    };
    let annotated = node.child_by_field_id(ids.type_).map(|t| cx.text(t));
    let called = node
        .child_by_field_id(ids.right)
        .filter(|r| r.kind_id() == ids.call)
        .and_then(|r| r.child_by_field_id(ids.function))
        .filter(|f| matches!(f.kind_str(), "identifier" | "attribute"))
        .map(|f| format!("{}()", cx.text(f)));
    let ty = annotated.map(str::to_string).or(called);
    match left.kind_str() {
        "identifier" => {
            // Class-level annotations (`session: Session`) type the class's fields; typed
            // module-level variables are fields of the module other files can import.
            // The body a statement is in is the innermost scope (an `if` block of a class
            // body is still the class body), read from the scope stack: asking the tree
            // for a node's parent walks down from the root.
            let s = &state.scopes;
            let (in_class, in_module) = (s.last().is_some_and(|f| f.class), s.len() == 1);
            let kind = if in_class || (in_module && ty.is_some()) {
                RefKind::Field
            } else {
                RefKind::Local
            };
            out.push(cx.binding(kind, cx.text(left), ty.as_deref(), left));
        }
        "attribute" => {
            let object = left.child_by_field_id(ids.object).map(|o| cx.text(o));
            if matches!(object, Some("self" | "cls")) && ty.is_some() {
                out.push(cx.binding(RefKind::Field, cx.text(left), ty.as_deref(), left));
            }
        }
        _ => bind_names(left, cx, out, 0),
    }
}

/// Every name bound by a target pattern (`a, (b, c)`), untyped.
fn bind_names(target: Node, cx: &Cx, out: &mut Vec<RawRef>, depth: u32) {
    if depth > MAX_NESTING {
        return;
    }
    if target.kind_str() == "identifier" {
        out.push(cx.binding(RefKind::Local, cx.text(target), None, target));
        return;
    }
    if matches!(
        target.kind_str(),
        "pattern_list" | "tuple_pattern" | "list_pattern" | "list_splat_pattern"
    ) {
        let mut c = target.walk();
        for child in target.named_children(&mut c) {
            bind_names(child, cx, out, depth + 1);
        }
    }
}

fn split_alias<'a>(item: Node, cx: &Cx<'a>) -> (&'a str, Option<&'a str>) {
    if item.kind_str() == "aliased_import" {
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
    if first.kind_str() != "expression_statement" {
        return None;
    }
    let s = first.named_child(0)?;
    if s.kind_str() != "string" && s.kind_str() != "concatenated_string" {
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

/// The node kinds and fields extraction looks at, as the grammar's numeric ids: comparing
/// ids spares reading (and validating) a kind's name for every node of every file.
struct Ids {
    /// Kinds `sites` handles; every other node is skipped after the scope bookkeeping.
    has_sites: Vec<bool>,
    call: u16,
    decorator: u16,
    class_definition: u16,
    function_definition: u16,
    decorated_definition: u16,
    lambda: u16,
    parameters: u16,
    lambda_parameters: u16,
    assignment: u16,
    for_statement: u16,
    for_in_clause: u16,
    as_pattern: u16,
    argument_list: u16,
    keyword_argument: u16,
    import_statement: u16,
    import_from_statement: u16,
    function: u16,
    superclasses: u16,
    left: u16,
    right: u16,
    type_: u16,
    alias: u16,
    value: u16,
    object: u16,
}

fn ids() -> &'static Ids {
    static IDS: OnceLock<Ids> = OnceLock::new();
    IDS.get_or_init(|| {
        let lang: Language = tree_sitter_python::LANGUAGE.into();
        let kind = |name: &str| {
            let id = lang.id_for_node_kind(name, true);
            assert_ne!(id, 0, "the Python grammar has no `{name}` nodes");
            id
        };
        let field = |name: &str| {
            lang.field_id_for_name(name)
                .unwrap_or_else(|| panic!("the Python grammar has no `{name}` field"))
                .get()
        };
        let mut ids = Ids {
            has_sites: vec![false; lang.node_kind_count()],
            call: kind("call"),
            decorator: kind("decorator"),
            class_definition: kind("class_definition"),
            function_definition: kind("function_definition"),
            decorated_definition: kind("decorated_definition"),
            lambda: kind("lambda"),
            parameters: kind("parameters"),
            lambda_parameters: kind("lambda_parameters"),
            assignment: kind("assignment"),
            for_statement: kind("for_statement"),
            for_in_clause: kind("for_in_clause"),
            as_pattern: kind("as_pattern"),
            argument_list: kind("argument_list"),
            keyword_argument: kind("keyword_argument"),
            import_statement: kind("import_statement"),
            import_from_statement: kind("import_from_statement"),
            function: field("function"),
            superclasses: field("superclasses"),
            left: field("left"),
            right: field("right"),
            type_: field("type"),
            alias: field("alias"),
            value: field("value"),
            object: field("object"),
        };
        for k in [
            ids.call,
            ids.decorator,
            ids.class_definition,
            ids.parameters,
            ids.lambda_parameters,
            ids.assignment,
            ids.for_statement,
            ids.for_in_clause,
            ids.as_pattern,
            ids.argument_list,
            ids.import_statement,
            ids.import_from_statement,
        ] {
            ids.has_sites[k as usize] = true;
        }
        ids
    })
}

#[cfg(test)]
mod tests {
    use crate::lang::testing::{extract_on_worker, names, nest};
    use crate::model::RefKind;

    #[test]
    fn deeply_nested_targets_bind_without_exhausting_the_stack() {
        let src = "def f():\n    (a, [b, *c]), d = x\n    a.f(), b.f(), c.f(), d.f()\n";
        let x = extract_on_worker("a.py", src.into());
        assert_eq!(names(&x, RefKind::Local), ["a", "b", "c", "d"]);
        // Followed by recursion, this exhausted the stack.
        let deep = format!("def f():\n    {} = x\n", nest("(", "a", ",)", 10_000));
        extract_on_worker("b.py", deep);
    }

    #[test]
    fn thousands_of_sites_in_one_node_settle_in_linear_time() {
        // Settling them in place took minutes for a few hundred kilobytes.
        let args = vec!["a"; 20_000].join(", ");
        let src = format!("def f(a):\n    g({args})\n    a.run()\n    {args} = x\n");
        let x = extract_on_worker("a.py", src);
        assert!(!x.timed_out);
        assert_eq!(names(&x, RefKind::Call), ["g", "a.run"]);
    }

    #[test]
    fn statements_and_decorated_definitions_are_recognized_without_parent_lookups() {
        let src = "X = 1\nY = Z = 2\nx = 3\nf(W = 4)\n@d\ndef g(): pass\nclass C:\n    K = 5\n";
        let x = extract_on_worker("a.py", src.into());
        let defs: Vec<&str> = x.nodes[1..]
            .iter()
            .map(|n| n.qualified_name.as_str())
            .collect();
        assert_eq!(defs, ["a.X", "a.Y", "a.g", "a.C", "a.C.K"]);
        let g = &x.nodes[3];
        assert_eq!((g.start_line, g.start_byte), (6, 31));
    }
}
