//! The resolution chain: what a name written at some definition refers to. Each step of a
//! dotted reference (`self.session.get`) is looked up in the value the previous step found,
//! and the reference's confidence is that of its least certain step.
//!
//! Bare names are looked up, most certain first: locals and parameters (which shadow
//! everything), enclosing definitions, members and typed fields of the enclosing type where
//! the language makes them implicit, the file's module, imports, star imports, implicit
//! imports (`java.lang`) and includes, packages written out in full (`java.util.List`), the
//! language's own names (external), and last, where the language allows it, a definition
//! anywhere in the repository with that name.
//!
//! Go's and Rust's own steps (call chains, per-platform variants, module paths, macros) are
//! in `go_rust`.

mod c_family;
mod go_rust;
mod syntax;

use super::rules::{ImportStyle, Profile, SuperCall};
use super::symbols::{file_stem, is_c, is_header, Graph, Idx, Import};
use crate::model::NodeKind;
use c_family::Visible;
use go_rust::{rust_deref, rust_unwrap};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use syntax::{
    clean_type, first_argument, go_package, join_path, js_file, normalize_path, python_module,
    qualified_super, rust_module, split_reference, Head,
};

pub const SAME_SCOPE: f32 = 0.95;
pub const SAME_PACKAGE: f32 = 0.9;
pub const MEMBER: f32 = 0.9;
pub const IMPORT: f32 = 0.85;
pub const TYPED: f32 = 0.85;
pub const STAR_IMPORT: f32 = 0.8;
pub const INFERRED: f32 = 0.8;
pub const DEFAULT_EXPORT: f32 = 0.7;
pub const UNIQUE_NAME: f32 = 0.5;

/// How deep re-exports and type inference are followed.
const MAX_DEPTH: u8 = 6;
/// At most this many files are visible through the includes of one C or C++ file.
const MAX_VISIBLE_FILES: usize = 8192;

/// What a step of a reference denotes.
#[derive(Clone, Debug)]
enum Value {
    /// Definitions (several for overloads or an ambiguous name).
    Defs(Vec<Idx>),
    /// A value whose type is this definition.
    Instance(Idx),
    /// The base types of this type (`super`).
    Super(Idx),
    /// A module or package by name.
    Module(String),
    /// Code outside the repository: the standard library or a dependency.
    External,
    /// A value of unknown type.
    Unknown,
    /// A local variable or parameter without a known type.
    Local,
}

#[derive(Clone, Debug)]
struct Step {
    value: Value,
    confidence: f32,
    strategy: &'static str,
}

impl Step {
    fn new(value: Value, confidence: f32, strategy: &'static str) -> Self {
        Step {
            value,
            confidence,
            strategy,
        }
    }

    /// The next step's value, at the confidence of the weaker of the two.
    fn then(&self, next: Step) -> Step {
        if next.confidence < self.confidence {
            next
        } else {
            Step {
                value: next.value,
                ..self.clone()
            }
        }
    }
}

/// Why a reference has no target in the repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The standard library, a dependency, or a name defined nowhere in the repository.
    External,
    /// Defined in the repository, but not where this reference can see it.
    NotFound,
    /// More same-named definitions than the fuzzy limit allows.
    Ambiguous,
    /// Calls a parameter or local variable.
    Local,
    /// The receiver's type is unknown and the name is a common built-in method.
    Dynamic,
}

impl Miss {
    pub fn as_str(self) -> &'static str {
        match self {
            Miss::External => "external",
            Miss::NotFound => "not_found",
            Miss::Ambiguous => "ambiguous",
            Miss::Local => "local",
            Miss::Dynamic => "dynamic",
        }
    }
}

/// A definition a reference resolved to, how sure and how it was found.
pub struct Found {
    pub node: Idx,
    pub confidence: f32,
    pub strategy: &'static str,
}

pub enum Outcome {
    Resolved(Vec<Found>),
    Unresolved { miss: Miss, candidates: usize },
}

impl Outcome {
    /// Every one of `nodes`, found the same way.
    pub fn all(nodes: Vec<Idx>, confidence: f32, strategy: &'static str) -> Outcome {
        Outcome::Resolved(
            nodes
                .into_iter()
                .map(|node| Found {
                    node,
                    confidence,
                    strategy,
                })
                .collect(),
        )
    }
}

/// A parameter or local variable, with its type as written.
pub struct Local {
    pub name: Box<str>,
    pub type_text: Option<Box<str>>,
}

pub struct Resolver<'g> {
    g: &'g Graph,
    fuzzy_limit: usize,
    /// Locals of the file being resolved, by the definition they belong to.
    locals: FxHashMap<Idx, Vec<Local>>,
    /// The file of the reference being resolved (set by `resolve`).
    caller: Cell<Idx>,
    /// C and C++: what the last file asked about sees through its includes.
    visible_cache: RefCell<Option<Rc<Visible<'g>>>>,
    /// What `type_of` found: a local is typed once however often it is used.
    types: RefCell<TypeCache>,
    /// For each file asked about, the imports binding each name, in order: a lookup asks
    /// for most names a file uses, and scanning every import each time made it most of a
    /// lookup's time in files with many imports.
    bindings: RefCell<FxHashMap<Idx, Rc<Bindings<'g>>>>,
}

type Bindings<'g> = FxHashMap<&'g str, Vec<&'g Import>>;

/// `type_of` results by (scope, depth, hash of the type text), with the text to check.
type TypeCache = FxHashMap<(Idx, u8, u64), (Box<str>, Step)>;

impl<'g> Resolver<'g> {
    pub fn new(g: &'g Graph, fuzzy_limit: usize, mut locals: FxHashMap<Idx, Vec<Local>>) -> Self {
        // Sorted by name (stably: same-named bindings keep their order) for binary search;
        // a Go or Rust function binds hundreds of locals.
        for v in locals.values_mut() {
            v.sort_by(|a, b| a.name.cmp(&b.name));
        }
        Resolver {
            g,
            fuzzy_limit,
            locals,
            caller: Cell::new(0),
            visible_cache: RefCell::new(None),
            types: RefCell::new(FxHashMap::default()),
            bindings: RefCell::new(FxHashMap::default()),
        }
    }

    /// Resolves a reference written at `scope`. `value_only` marks a name used as a value
    /// (a callback), which is kept only when it names a definition.
    pub fn resolve(&self, scope: Idx, text: &str) -> Outcome {
        self.caller.set(self.g.node(scope).file);
        if let Some((base, after)) = qualified_super(text) {
            if self.profile_of(scope).is_super("super") {
                if let Some(outcome) = self.resolve_qualified_super(scope, base, after) {
                    return outcome;
                }
            }
        }
        let (head, segments) = split_reference(text);
        // `cls()`, `this(...)`: the enclosing type itself; Python's `super()` is a builtin.
        if let (Head::Name, [only]) = (head, segments.as_slice()) {
            let p = self.profile_of(scope);
            if p.is_super(only) && p.is_builtin(only) {
                return self.unresolved(Miss::External, only);
            }
            if p.is_self(only) {
                if let Some(t) = self.g.enclosing_type(scope) {
                    return Outcome::Resolved(vec![Found {
                        node: t,
                        confidence: MEMBER,
                        strategy: "self",
                    }]);
                }
            }
        }
        let Some(&last) = segments.last() else {
            return Outcome::Unresolved {
                miss: Miss::Dynamic,
                candidates: 0,
            };
        };
        // Rust: `name!` is a macro; `crate::`, `super::` and `self::` paths start at a module.
        let style = self.profile_of(scope).imports;
        let rust = head == Head::Name && style == ImportStyle::Rust;
        if rust && last.ends_with('!') {
            return self.rust_macro(scope, &segments);
        }
        let root = if rust {
            self.rust_root(scope, text)
        } else {
            None
        };
        // Go and Rust: a receiver that is a call chain (`w.Header().Set`) has the type the
        // last call is declared to return.
        if matches!(head, Head::Expression | Head::Call(_))
            && matches!(style, ImportStyle::Go | ImportStyle::Rust)
        {
            if let Some(outcome) = self.resolve_chain(scope, text) {
                return outcome;
            }
        }
        let (step, rest) = match (head, &root) {
            (_, Some((module, used))) => (
                Ok(Step::new(Value::Module(module.clone()), IMPORT, "path")),
                &segments[*used..],
            ),
            (Head::Expression, _) => (Ok(Step::new(Value::Unknown, 1.0, "")), &segments[..]),
            (Head::SuperCall, _) => (self.super_of(scope), &segments[..]),
            (Head::Call(1), _) if self.is_super_builtin(scope, segments[0]) => {
                (self.explicit_super(scope, text), &segments[1..])
            }
            (Head::Call(k), _) => (Ok(self.call_result(scope, &segments[..k])), &segments[k..]),
            // Ruby: `super.m` calls `m` on what the same-named method of the bases returns.
            (Head::Name, _)
                if segments.len() > 1
                    && self.profile_of(scope).super_call == SuperCall::SameMethod
                    && self.profile_of(scope).is_super(segments[0]) =>
            {
                (Ok(Step::new(Value::Unknown, 1.0, "")), &segments[1..])
            }
            (Head::Name, _) => (
                // A name something is looked up in (`name.m()`) is never a method.
                self.lookup(scope, segments[0], 0, segments.len() > 1),
                &segments[1..],
            ),
        };
        let mut step = match step {
            Ok(s) => s,
            Err(miss) => return self.unresolved(miss, last),
        };
        // Where types are declared, calling a variable of a library type (a delegate, a
        // `Function` parameter) calls whatever it holds: a local call, not a library one.
        if rest.is_empty()
            && matches!(step.value, Value::External)
            && step.strategy == "external"
            && self.profile_of(scope).types.is_some()
        {
            return Outcome::Unresolved {
                miss: Miss::Local,
                candidates: 0,
            };
        }
        for seg in rest {
            step = match self.member(&step, seg, 0) {
                Ok(next) => step.then(next),
                Err(miss) => return self.unresolved(miss, last),
            };
        }
        // Rust: modules and functions have separate namespaces; a path that ends at a module
        // (`time::sleep` with `mod sleep; pub use sleep::sleep;`) calls the function.
        if let (true, Value::Module(m)) = (rust, &step.value) {
            if let Some(next) = self.rust_reexport(m) {
                step = step.then(next);
            }
        }
        self.finish(scope, self.own_variant(scope, step), last)
    }

    /// A dotted name looked up from `scope`: the first name in scope, the rest as members.
    fn chain(&self, scope: Idx, names: &[&str], depth: u8) -> Result<Step, Miss> {
        let (first, rest) = names.split_first().ok_or(Miss::Dynamic)?;
        let mut step = self.bare(scope, first, depth)?;
        for seg in rest {
            step = step.then(self.member(&step, seg, depth)?);
        }
        Ok(step)
    }

    /// What calling `names` returns: an instance of the class called, or of the type a
    /// function declares it returns.
    fn call_result(&self, scope: Idx, names: &[&str]) -> Step {
        match self.chain(scope, names, 1) {
            Ok(step) => self.returned(step, 1),
            Err(_) => Step::new(Value::Unknown, 1.0, ""),
        }
    }

    fn returned(&self, step: Step, depth: u8) -> Step {
        let unknown = Step::new(Value::Unknown, 1.0, "");
        match &step.value {
            Value::External => Step::new(Value::External, 1.0, ""),
            Value::Defs(defs) => {
                let d = defs[0];
                let n = self.g.node(d);
                if n.kind.is_type_like() {
                    return Step::new(
                        Value::Instance(d),
                        INFERRED.min(step.confidence),
                        "inferred_type",
                    );
                }
                let Some(ret) = self.g.returns.get(&d) else {
                    return unknown;
                };
                let typed = self.type_of(d, ret, depth + 1);
                match typed.value {
                    Value::Instance(_) => Step::new(
                        typed.value,
                        INFERRED.min(step.confidence).min(typed.confidence),
                        "inferred_type",
                    ),
                    _ => unknown,
                }
            }
            _ => unknown,
        }
    }

    fn unresolved(&self, miss: Miss, name: &str) -> Outcome {
        let candidates = self.candidates(name).len();
        let miss = if miss == Miss::NotFound && candidates == 0 {
            Miss::External
        } else {
            miss
        };
        Outcome::Unresolved { miss, candidates }
    }

    /// Definitions anywhere that a name could mean.
    fn candidates(&self, name: &str) -> Vec<Idx> {
        self.g
            .by_name(name)
            .filter(|&i| self.g.is_callable(i))
            .collect()
    }

    fn finish(&self, scope: Idx, step: Step, last: &str) -> Outcome {
        match step.value {
            Value::Defs(defs) => {
                // In C, struct, union and enum tags and typedef names are never values: a
                // call or callback named `kthread` is the function, not `struct kthread`.
                let c = is_c(&self.g.file(self.caller.get()).path);
                let mut defs = self.latest_definitions(defs);
                defs.retain(|&d| !(c && self.g.node(d).kind.is_type_like()));
                if defs.is_empty() {
                    return self.unresolved(Miss::NotFound, last);
                }
                // Overloads share one qualified name: they count once against the limit.
                if defs.len() > self.fuzzy_limit
                    && !self.go_variants(&defs)
                    && self.distinct_names(&defs) > self.fuzzy_limit
                {
                    return Outcome::Unresolved {
                        miss: Miss::Ambiguous,
                        candidates: defs.len(),
                    };
                }
                Outcome::all(defs, step.confidence, step.strategy)
            }
            Value::External => self.unresolved(Miss::External, last),
            Value::Local | Value::Instance(_) => Outcome::Unresolved {
                miss: Miss::Local,
                candidates: 0,
            },
            Value::Super(t) => self.super_call(scope, t, &step),
            Value::Module(_) => self.unresolved(Miss::NotFound, last),
            Value::Unknown => self.by_name_only(scope, last),
        }
    }

    /// Callable definitions among `defs`. Where a later definition rebinds the name (Python,
    /// JavaScript: `@overload` stubs, conditional redefinitions), only the last of those
    /// sharing a file and qualified name is kept; overloads elsewhere all stay.
    fn latest_definitions(&self, mut defs: Vec<Idx>) -> Vec<Idx> {
        let g = self.g;
        defs.retain(|&d| g.is_callable(d));
        defs.sort_unstable();
        let rebinds = |d: Idx| {
            matches!(
                g.file(g.node(d).file).profile.imports,
                ImportStyle::Python | ImportStyle::JavaScript
            )
        };
        let mut out: Vec<Idx> = Vec::with_capacity(defs.len());
        for d in defs {
            if let Some(&prev) = out.last() {
                let (a, b) = (g.node(prev), g.node(d));
                if rebinds(d) && a.file == b.file && a.qn == b.qn {
                    out.pop();
                }
            }
            out.push(d);
        }
        out
    }

    /// How many different qualified names the definitions have.
    fn distinct_names(&self, defs: &[Idx]) -> usize {
        let mut names: Vec<&str> = defs.iter().map(|&d| &*self.g.node(d).qn).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    }

    /// A method called on a receiver of unknown type: only its name is known. Only methods
    /// qualify, except where modules are plain tables of functions (Lua, Elixir, shell).
    fn by_name_only(&self, scope: Idx, name: &str) -> Outcome {
        let mut found = self.candidates(name);
        // C and C++: `x.f()` / `p->f()` calls a method or, in C, a function pointer held by a
        // struct; never a free function named like the member.
        if self.profile_of(scope).translation_units() {
            let g = self.g;
            let total = found.len();
            // Nor a constructor: `T::U(..)` for a type `U` of an opaque `T` (a typedef)
            // constructs `U`, which is not guessed.
            let constructor = |i: Idx| g.local_qn(i).rsplit('.').nth(1) == Some(name);
            found.retain(|&i| g.node(i).kind == NodeKind::Method && !constructor(i));
            // A method defined out of line is declared in its class too: count it once.
            let out_of_line = |i: Idx| {
                g.node(i)
                    .parent
                    .is_none_or(|p| !g.node(p).kind.is_type_like())
            };
            let defined: FxHashSet<&str> = found
                .iter()
                .filter(|&&i| out_of_line(i))
                .map(|&i| g.local_qn(i))
                .collect();
            found.retain(|&i| out_of_line(i) || !defined.contains(g.local_qn(i)));
            if found.is_empty() {
                let miss = if total > 0 {
                    Miss::Dynamic
                } else {
                    Miss::External
                };
                return Outcome::Unresolved {
                    miss,
                    candidates: total,
                };
            }
        }
        let plain = self.profile_of(scope).imports == ImportStyle::Plain;
        found.retain(|&i| plain || self.g.node(i).kind == NodeKind::Method);
        self.spread(found, name, true)
    }

    /// The name-only guesses: unique, or shared among a few candidates.
    fn spread(&self, found: Vec<Idx>, name: &str, member: bool) -> Outcome {
        let n = found.len();
        if n == 0 {
            return Outcome::Unresolved {
                miss: Miss::External,
                candidates: 0,
            };
        }
        if member && n > 0 {
            let profile = self.g.file(self.g.node(found[0]).file).profile;
            if profile.is_builtin_method(name) {
                return Outcome::Unresolved {
                    miss: Miss::Dynamic,
                    candidates: n,
                };
            }
        }
        if n > self.fuzzy_limit {
            return Outcome::Unresolved {
                miss: Miss::Ambiguous,
                candidates: n,
            };
        }
        let (confidence, strategy) = if n == 1 {
            (UNIQUE_NAME, "unique_name")
        } else {
            (UNIQUE_NAME / n as f32, "ambiguous")
        };
        Outcome::all(found, confidence, strategy)
    }

    /// A call of the super name itself (`super(...)`, `base(...)`, Ruby's `super`) written
    /// at `scope` in type `t`: the method of the bases the language runs for it, never the
    /// base class. A base that has no such method leaves the call unresolved.
    fn super_call(&self, scope: Idx, t: Idx, step: &Step) -> Outcome {
        let g = self.g;
        let bases = self.superclasses(t);
        let Some(name) = self.super_call_name(scope, t) else {
            return self.unresolved(Miss::External, "super");
        };
        let rule = self.profile_of(scope).super_call;
        let hits: Vec<Idx> = match rule {
            SuperCall::Nothing => Vec::new(),
            SuperCall::Constructor => g
                .members(bases[0], &name)
                .into_iter()
                .filter(|&m| matches!(g.node(m).kind, NodeKind::Method | NodeKind::Function))
                .collect(),
            SuperCall::InheritedConstructor(_) | SuperCall::SameMethod => bases
                .iter()
                .map(|&b| self.class_member(b, &name))
                .find(|hits| !hits.is_empty())
                .unwrap_or_default(),
        };
        if hits.is_empty() {
            // A base that declares no constructor has the language's implicit one; a
            // method missing from bases that have a library base may be the library's.
            let implicit = matches!(
                rule,
                SuperCall::Constructor | SuperCall::InheritedConstructor(_)
            );
            let outside = implicit || self.inherits_outside(t);
            let miss = if outside {
                Miss::External
            } else {
                Miss::NotFound
            };
            return self.unresolved(miss, &name);
        }
        self.finish(
            scope,
            Step::new(Value::Defs(hits), step.confidence, step.strategy),
            &name,
        )
    }

    /// The bases of `t` a call of the super name reaches: its base classes, or where it has
    /// none in the repository, the interfaces (traits, mixins) it has.
    fn superclasses(&self, t: Idx) -> Vec<Idx> {
        let g = self.g;
        let mut bases = g.bases.get(&t).cloned().unwrap_or_default();
        if bases.iter().any(|&b| g.node(b).kind != NodeKind::Interface) {
            bases.retain(|&b| g.node(b).kind != NodeKind::Interface);
        }
        bases
    }

    /// The name a call of the super name itself looks up in the bases of `t`: `None` where
    /// the language's super name is no such call, or `t` has no base in the repository.
    fn super_call_name(&self, scope: Idx, t: Idx) -> Option<String> {
        let g = self.g;
        let base = *self.superclasses(t).first()?;
        match self.profile_of(scope).super_call {
            SuperCall::Nothing => None,
            SuperCall::Constructor => Some(g.node(base).name.to_string()),
            SuperCall::InheritedConstructor(name) => Some(name.to_string()),
            SuperCall::SameMethod => {
                // The method of `t` the call is written in (or in a block of).
                let mut at = scope;
                loop {
                    let n = g.node(at);
                    match n.parent {
                        Some(p) if p == t => return Some(n.name.to_string()),
                        Some(p) => at = p,
                        None => return None,
                    }
                }
            }
        }
    }

    /// The name under which a call site written `text` at `scope` is kept when it stays
    /// unresolved, so that a later definition of that name resolves it again: for a call of
    /// the super name itself, the method it looks up (`initialize`, the base's constructor).
    pub fn unresolved_key(&self, scope: Idx, text: &str) -> Option<String> {
        let p = self.profile_of(scope);
        if !p.is_super(text) || p.super_call == SuperCall::Nothing {
            return None;
        }
        let t = self.g.enclosing_type(scope)?;
        self.super_call_name(scope, t)
    }

    fn profile_of(&self, scope: Idx) -> &'static Profile {
        self.g.file(self.g.node(scope).file).profile
    }

    fn super_of(&self, scope: Idx) -> Result<Step, Miss> {
        match self.g.enclosing_type(scope) {
            Some(t) => Ok(Step::new(Value::Super(t), MEMBER, "super")),
            None => Ok(Step::new(Value::Unknown, 1.0, "")),
        }
    }

    /// `super<T>.m` (Kotlin), `super[T].m` (Scala): `m` as the base `T` has it, declared or
    /// inherited, whichever base the plain `super.m` would reach. `None` when `T` is no type
    /// of the repository (a library's, or JavaScript's computed `super[name]`).
    fn resolve_qualified_super(&self, scope: Idx, base: &str, after: &str) -> Option<Outcome> {
        let (_, segments) = split_reference(after);
        let (&first, rest) = segments.split_first()?;
        let last = segments.last().copied().unwrap_or(first);
        let names: Vec<&str> = base.split('.').collect();
        let step = self.chain(scope, &names, 0).ok()?;
        let (t, confidence) = match step.value {
            Value::Defs(defs) if self.g.node(defs[0]).kind.is_type_like() => {
                (defs[0], MEMBER.min(step.confidence))
            }
            _ => return None,
        };
        let hits = self.class_member(t, first);
        if hits.is_empty() {
            let miss = if self.g.external_bases.contains(&t) {
                Miss::External
            } else {
                Miss::NotFound
            };
            return Some(self.unresolved(miss, last));
        }
        let mut step = Step::new(Value::Defs(hits), confidence, "super");
        for seg in rest {
            step = match self.member(&step, seg, 0) {
                Ok(next) => step.then(next),
                Err(miss) => return Some(self.unresolved(miss, last)),
            };
        }
        Some(self.finish(scope, step, last))
    }

    /// Whether `name` is the super name of a language where it is a builtin function
    /// (Python's `super`), called to get the bases.
    fn is_super_builtin(&self, scope: Idx, name: &str) -> bool {
        let p = self.profile_of(scope);
        p.is_super(name) && p.is_builtin(name)
    }

    /// Python's `super(Class, self)`: the bases of `Class`, which is nearly always the
    /// enclosing class (the spelling from before `super()`); `super(Mid, self)` starts past
    /// `Mid`. An argument that names no class means the enclosing class.
    fn explicit_super(&self, scope: Idx, text: &str) -> Result<Step, Miss> {
        let names: Vec<&str> = first_argument(text)
            .map(|a| a.split('.').collect())
            .unwrap_or_default();
        let is_name =
            |s: &&str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !names.is_empty() && names.iter().all(is_name) {
            if let Ok(step) = self.chain(scope, &names, 0) {
                if let Value::Defs(defs) = &step.value {
                    if self.g.node(defs[0]).kind.is_type_like() {
                        let confidence = MEMBER.min(step.confidence);
                        return Ok(Step::new(Value::Super(defs[0]), confidence, "super"));
                    }
                }
            }
        }
        self.super_of(scope)
    }

    /// A bare name at `scope`.
    fn bare(&self, scope: Idx, name: &str, depth: u8) -> Result<Step, Miss> {
        self.lookup(scope, name, depth, false)
    }

    /// A bare name at `scope`; `receiver` when something is looked up in it (`name.m()`) or
    /// it names a type: where types are declared, that is never a method.
    fn lookup(&self, scope: Idx, name: &str, depth: u8, receiver: bool) -> Result<Step, Miss> {
        let g = self.g;
        let node = g.node(scope);
        let file = g.file(node.file);
        let p = file.profile;
        if p.is_self(name) {
            return match g.enclosing_type(scope) {
                Some(t) => Ok(Step::new(Value::Instance(t), MEMBER, "self")),
                // Outside a type, a receiver bound like a parameter: TypeScript's
                // `function (this: Subscriber<T>)`.
                None => {
                    Ok(self
                        .local(scope, name, depth)
                        .unwrap_or(Step::new(Value::Unknown, 1.0, "")))
                }
            };
        }
        if p.is_super(name) {
            return self.super_of(scope);
        }
        if let Some(step) = self.local(scope, name, depth) {
            return Ok(step);
        }
        // Enclosing definitions, innermost first.
        let mut at = Some(scope);
        let mut saw_type = false;
        while let Some(a) = at {
            let n = g.node(a);
            match n.kind {
                NodeKind::File => break,
                k if k.is_type_like() => {
                    saw_type = true;
                    // Inside a type its own name is the type, not the constructors named
                    // after it (Java, Kotlin, C#, C++).
                    if p.implicit_members
                        && (p.types.is_some() || p.translation_units())
                        && &*n.name == name
                    {
                        return Ok(Step::new(Value::Defs(vec![a]), SAME_SCOPE, "scope"));
                    }
                    if p.implicit_members {
                        let mut hits = self.class_member(a, name);
                        if receiver && p.types.is_some() {
                            hits.retain(|&h| {
                                !matches!(g.node(h).kind, NodeKind::Method | NodeKind::Function)
                            });
                        }
                        if hits.is_empty() && p.translation_units() {
                            if let Some(step) = self.field_type(a, name, depth) {
                                return Ok(step);
                            }
                        }
                        if !hits.is_empty() {
                            return Ok(Step::new(Value::Defs(hits), MEMBER, "member"));
                        }
                    }
                    // A typed field of the type or its bases, used without `this.` (Java,
                    // Kotlin, C#; C++ and Swift have the same rule).
                    if p.implicit_members && p.types.is_some() {
                        if let Some(step) = self.field_type(a, name, depth) {
                            return Ok(step);
                        }
                    }
                }
                NodeKind::Module => {
                    let hits = g.members(a, name);
                    if !hits.is_empty() {
                        let (c, s) = self.locality(&hits, node.file, SAME_PACKAGE, "namespace");
                        return Ok(Step::new(Value::Defs(hits), c, s));
                    }
                    // `namespace A.B { }` also sees the names of `A` (C#; C++ has the same
                    // rule), unless an enclosing namespace node comes next and says so itself.
                    let outer_is_module =
                        n.parent.is_some_and(|q| g.node(q).kind == NodeKind::Module);
                    if p.nested_namespaces && p.types.is_some() && !outer_is_module {
                        let mut prefix = &*n.qn;
                        while let Some((outer, _)) = prefix.rsplit_once('.') {
                            prefix = outer;
                            let hits = g.member_qn(prefix, name);
                            if !hits.is_empty() {
                                return Ok(Step::new(Value::Defs(hits), SAME_PACKAGE, "namespace"));
                            }
                        }
                    }
                }
                _ => {
                    let hits = g.members(a, name);
                    if !hits.is_empty() {
                        return Ok(Step::new(Value::Defs(hits), SAME_SCOPE, "scope"));
                    }
                }
            }
            at = n.parent;
        }
        // Methods written outside their type (Go, Rust, C++ `X::m`) see its members too.
        if p.implicit_members && !saw_type {
            if let Some(t) = g.enclosing_type(scope) {
                if let Some(step) = self.implicit_member(t, name, depth) {
                    return Ok(step);
                }
            }
        }
        if p.translation_units() {
            return self.translation_unit(scope, name);
        }
        // The file's module (and the package's other files where the language shares it).
        let hits = g.module_members(node.file, name);
        let hits: Vec<Idx> = if p.package_scope {
            hits
        } else {
            hits.into_iter()
                .filter(|&h| g.node(h).file == node.file)
                .collect()
        };
        if !hits.is_empty() {
            let (c, s) = self.locality(&hits, node.file, SAME_PACKAGE, "same_package");
            return Ok(Step::new(Value::Defs(hits), c, s));
        }
        // A table or object of the file holding functions (`local M = {}; function M.f()`).
        let table = join(&file.module, name);
        if g.is_scope(&table) {
            return Ok(Step::new(Value::Module(table), SAME_SCOPE, "same_file"));
        }
        if p.nested_namespaces {
            let mut prefix = file.module.as_ref();
            while let Some((outer, _)) = prefix.rsplit_once('.') {
                prefix = outer;
                let hits = g.member_qn(prefix, name);
                if !hits.is_empty() {
                    return Ok(Step::new(Value::Defs(hits), SAME_PACKAGE, "namespace"));
                }
            }
        }
        if let Some(step) = self.imported(node.file, scope, name, depth) {
            return step;
        }
        // Rust: a child module (`mod util;` then `util::f()`) or a crate of the repository
        // (`tokio::spawn` in its integration tests), before the standard crates.
        if p.imports == ImportStyle::Rust {
            if let Some(m) = self.rust_named_module(scope, name) {
                return Ok(Step::new(Value::Module(m), IMPORT, "import"));
            }
        }
        // Go: a variable of the package declared in another file.
        if p.imports == ImportStyle::Go {
            if let Some(step) = self.go_package_var(&file.module, name, depth) {
                return Ok(step);
            }
        }
        // A package or namespace written out in full (`java.util.Arrays.sort(a)`).
        if p.types.is_some() && g.module_exists(name) {
            return Ok(Step::new(
                Value::Module(name.to_string()),
                SAME_SCOPE,
                "qualified_name",
            ));
        }
        if p.is_builtin(name) {
            return Ok(Step::new(Value::External, 1.0, "builtin"));
        }
        let found = self.candidates(name);
        if found.is_empty() {
            return Err(Miss::External);
        }
        if self.global_scope(node.file) || self.has_external_star(node.file) {
            // A JavaScript script sees the globals of other scripts, not modules' names.
            let found: Vec<Idx> = if p.imports == ImportStyle::JavaScript {
                found
                    .into_iter()
                    .filter(|&c| self.global_scope(g.node(c).file))
                    .collect()
            } else {
                found
            };
            if found.is_empty() {
                return Err(Miss::NotFound);
            }
            return match self.spread(found, name, false) {
                Outcome::Resolved(t) => {
                    let (c, s) = (t[0].confidence, t[0].strategy);
                    Ok(Step::new(
                        Value::Defs(t.into_iter().map(|t| t.node).collect()),
                        c,
                        s,
                    ))
                }
                Outcome::Unresolved { miss, .. } => Err(miss),
            };
        }
        Err(Miss::NotFound)
    }

    /// A member of type `t` named by a bare name inside it. In C++ a data member counts too:
    /// `repo_.save()` in a method means `this->repo_.save()`.
    fn implicit_member(&self, t: Idx, name: &str, depth: u8) -> Option<Step> {
        let hits = self.class_member(t, name);
        if !hits.is_empty() {
            return Some(Step::new(Value::Defs(hits), MEMBER, "member"));
        }
        if self.profile_of(t).translation_units() {
            return self.field_type(t, name, depth);
        }
        None
    }

    /// Same file: most certain; otherwise the given confidence and strategy.
    fn locality(
        &self,
        hits: &[Idx],
        file: Idx,
        other: f32,
        strategy: &'static str,
    ) -> (f32, &'static str) {
        if hits.iter().all(|&h| self.g.node(h).file == file) {
            (SAME_SCOPE, "same_file")
        } else {
            (other, strategy)
        }
    }

    /// A parameter or local of `scope` or an enclosing function, or a module-level variable.
    /// Class bodies are skipped: their names are not in scope inside methods.
    fn local(&self, scope: Idx, name: &str, depth: u8) -> Option<Step> {
        let mut at = Some(scope);
        while let Some(a) = at {
            let n = self.g.node(a);
            if !n.kind.is_type_like() {
                // A name bound several times takes the first binding with a known type.
                let bindings = self.locals.get(&a).map_or(&[][..], |v| v.as_slice());
                let start = bindings.partition_point(|l| &*l.name < name);
                let mut named = bindings[start..].iter().take_while(|l| &*l.name == name);
                if let Some(first) = named.next() {
                    if let Some(step) = self.js_variable_scope(a, name) {
                        return Some(step);
                    }
                    let local = std::iter::once(first)
                        .chain(named)
                        .find(|l| l.type_text.is_some())
                        .unwrap_or(first);
                    return Some(match local.type_text.as_deref() {
                        Some(t) => self.type_of(a, t, depth + 1),
                        None => Step::new(Value::Local, 1.0, "local"),
                    });
                }
            }
            if n.kind == NodeKind::File {
                return self.module_variable(a, name, depth);
            }
            at = n.parent;
        }
        None
    }

    /// A typed module-level variable of the file whose node is `file_node`
    /// (`current_app: Flask = LocalProxy(...)`).
    fn module_variable(&self, file_node: Idx, name: &str, depth: u8) -> Option<Step> {
        let f = self.g.fields(file_node, name).first()?;
        let step = self.type_of(f.node, &f.type_text, depth + 1);
        (!matches!(step.value, Value::Local)).then_some(step)
    }

    /// JavaScript: what a variable bound at `scope` means when definitions say more than
    /// its binding. `const api = { get() {} }` is a namespace of its methods `api.get`; a
    /// variable beside a same-named definition of its scope means the definition: `var Foo
    /// = (function () { function Foo() {} return Foo; }())` (compiled classes), TS
    /// `const E: ECtor` beside `interface E`.
    fn js_variable_scope(&self, scope: Idx, name: &str) -> Option<Step> {
        let g = self.g;
        let n = g.node(scope);
        let file = g.file(n.file);
        if file.profile.imports != ImportStyle::JavaScript {
            return None;
        }
        let holder = match n.kind {
            NodeKind::File => &*file.module,
            _ => &*n.qn,
        };
        let qn = join(holder, name);
        if g.is_scope(&qn) {
            return Some(Step::new(Value::Module(qn), SAME_SCOPE, "scope"));
        }
        let hits: Vec<Idx> = g.by_qn(&qn).filter(|&h| g.node(h).file == n.file).collect();
        (!hits.is_empty()).then(|| Step::new(Value::Defs(hits), SAME_SCOPE, "scope"))
    }

    /// The value of a variable whose type is written `text` at `scope` (an annotation, or
    /// `callee()` for what a call returns): an instance of a repository type, something
    /// external, or a local of unknown type.
    fn type_of(&self, scope: Idx, text: &str, depth: u8) -> Step {
        let key = (scope, depth, super::symbols::hash(text));
        if let Some((seen, step)) = self.types.borrow().get(&key) {
            if &**seen == text {
                return step.clone();
            }
        }
        let step = self.type_of_uncached(scope, text, depth);
        self.types
            .borrow_mut()
            .insert(key, (text.into(), step.clone()));
        step
    }

    fn type_of_uncached(&self, scope: Idx, text: &str, depth: u8) -> Step {
        let unknown = Step::new(Value::Local, 1.0, "local");
        if depth > MAX_DEPTH {
            return unknown;
        }
        // Rust writes `Foo::new()?` for what `Foo::new` returns inside its `Result` or
        // `Option`, paths with `::`, and uses `&Arc<Foo>` as a `Foo`.
        let style = self.profile_of(scope).imports;
        let rust = style == ImportStyle::Rust;
        if matches!(style, ImportStyle::Go | ImportStyle::Rust)
            && text.trim_end_matches(['?', ')', '(']).contains('(')
        {
            return self.chain_type(scope, text, depth);
        }
        let (text, unwrap) = match text.strip_suffix('?') {
            Some(t) if rust => (t, true),
            _ => (text, false),
        };
        let (text, inferred) = match text.strip_suffix("()") {
            Some(callee) => (callee, true),
            None => (text, false),
        };
        let text = if rust { rust_deref(text) } else { text };
        let Some(name) = clean_type(text) else {
            return unknown;
        };
        let root = if rust {
            self.rust_root(scope, name)
        } else {
            None
        };
        let split = |c: char| c == '.' || (rust && c == ':');
        let mut parts = name.split(split).filter(|s| !s.is_empty());
        let rooted = root.map(|(module, used)| {
            parts.nth(used - 1);
            Step::new(Value::Module(module), IMPORT, "path")
        });
        let first = if rooted.is_some() {
            Some("")
        } else {
            parts.next()
        };
        let Some(first) = first else {
            return unknown;
        };
        let looked_up = match rooted {
            Some(step) => Ok(step),
            None => self.lookup(scope, first, depth + 1, true),
        };
        let mut step = match looked_up {
            Ok(step) => step,
            // Where types are declared, one that no repository file defines is a library
            // type. A one-letter name is more likely a type parameter, of unknown bound.
            Err(Miss::External) if self.profile_of(scope).types.is_some() && first.len() > 1 => {
                return Step::new(Value::External, 1.0, "external");
            }
            Err(_) => return unknown,
        };
        for seg in parts {
            match self.member(&step, seg, depth + 1) {
                Ok(next) => step = step.then(next),
                Err(_) => return unknown,
            }
        }
        if inferred && unwrap {
            // Rust `make()?`: what the function returns inside its `Result` or `Option`.
            let Value::Defs(defs) = &step.value else {
                return unknown;
            };
            let Some(ret) = self.g.returns.get(&defs[0]).and_then(|r| rust_unwrap(r)) else {
                return unknown;
            };
            let held = self.type_of(defs[0], ret, depth + 1);
            return match held.value {
                Value::Instance(_) => Step::new(
                    held.value,
                    INFERRED.min(step.confidence).min(held.confidence),
                    "inferred_type",
                ),
                _ => held,
            };
        }
        if inferred {
            let value = self.returned(step, depth + 1);
            return match value.value {
                Value::Instance(_) | Value::External => value,
                _ => unknown,
            };
        }
        let (confidence, strategy) = (TYPED, "type_annotation");
        // Go and Rust: an alias is used as what it stands for.
        if let Value::Defs(defs) = &step.value {
            if let Some(target) = self.g.aliases.get(&defs[0]) {
                let held = self.type_of(defs[0], target, depth + 1);
                if matches!(held.value, Value::Instance(_) | Value::External) {
                    return Step::new(held.value, confidence.min(step.confidence), strategy);
                }
            }
        }
        match &step.value {
            Value::External => Step::new(Value::External, 1.0, "external"),
            Value::Defs(defs) if self.g.node(defs[0]).kind.is_type_like() => Step::new(
                Value::Instance(defs[0]),
                confidence.min(step.confidence),
                strategy,
            ),
            // `Self`, and a type parameter standing for its bound.
            Value::Instance(t) => Step::new(
                Value::Instance(*t),
                confidence.min(step.confidence),
                strategy,
            ),
            _ => unknown,
        }
    }

    /// Members of a type named `name`, searching its bases breadth-first.
    fn class_member(&self, class: Idx, name: &str) -> Vec<Idx> {
        let mut queue = vec![class];
        let mut seen = vec![class];
        let mut i = 0;
        while i < queue.len() && i < 64 {
            let t = queue[i];
            i += 1;
            // Members named like their type are its constructors, not a member `name`
            // (Java, Kotlin, C#, C++: inside a class the name of a base is that class).
            let p = self.profile_of(t);
            let constructors =
                &*self.g.node(t).name == name && (p.types.is_some() || p.translation_units());
            let mut hits = if constructors {
                Vec::new()
            } else {
                self.g.members(t, name)
            };
            if p.translation_units() && !constructors {
                hits = self.out_of_class(t, name, hits);
            }
            if !hits.is_empty() {
                return hits;
            }
            if let Some(c) = self.companion(t) {
                let hits = self.g.members(c, name);
                if !hits.is_empty() {
                    return hits;
                }
            }
            for &b in self.g.bases.get(&t).map_or(&[][..], |v| v.as_slice()) {
                if !seen.contains(&b) {
                    seen.push(b);
                    queue.push(b);
                }
            }
        }
        Vec::new()
    }

    /// Whether `t` or one of its ancestors has a base outside the repository.
    fn inherits_outside(&self, t: Idx) -> bool {
        let mut queue = vec![t];
        let mut i = 0;
        while i < queue.len() && i < 64 {
            let b = queue[i];
            i += 1;
            if self.g.external_bases.contains(&b) {
                return true;
            }
            for &next in self.g.bases.get(&b).map_or(&[][..], |v| v.as_slice()) {
                if !queue.contains(&next) {
                    queue.push(next);
                }
            }
        }
        false
    }

    /// The companion object of a type, whose members are the type's (Kotlin).
    fn companion(&self, t: Idx) -> Option<Idx> {
        let name = self.profile_of(t).types?.companion?;
        let qn = format!("{}.{name}", self.g.node(t).qn);
        let found = self
            .g
            .by_qn(&qn)
            .find(|&c| self.g.node(c).kind.is_type_like());
        found
    }

    /// The declared type of a field `name` of `class` or its bases.
    fn field_type(&self, class: Idx, name: &str, depth: u8) -> Option<Step> {
        let mut queue = vec![class];
        let mut i = 0;
        let mut declared = None;
        while i < queue.len() && i < 64 {
            let t = queue[i];
            i += 1;
            let companion = self.companion(t);
            for f in std::iter::once(t)
                .chain(companion)
                .flat_map(|owner| self.g.fields(owner, name))
            {
                let step = self.type_of(f.node, &f.type_text, depth + 1);
                if !matches!(step.value, Value::Local) {
                    return Some(step);
                }
                declared = Some(step);
            }
            if let Some(bases) = self.g.bases.get(&t) {
                for &b in bases {
                    if !queue.contains(&b) {
                        queue.push(b);
                    }
                }
            }
        }
        // Go and Rust declare every field: one whose type is no repository type (a func or
        // map field) holds a value of unknown type, not a method to guess by name.
        let style = self.profile_of(class).imports;
        declared.filter(|_| matches!(style, ImportStyle::Go | ImportStyle::Rust))
    }

    /// `value.name`.
    fn member(&self, step: &Step, name: &str, depth: u8) -> Result<Step, Miss> {
        if depth > MAX_DEPTH {
            return Err(Miss::NotFound);
        }
        let g = self.g;
        match &step.value {
            Value::Defs(defs) => {
                let d = defs[0];
                let n = g.node(d);
                if n.kind.is_type_like() {
                    let found = self.type_member(d, name, depth);
                    // C++: a class is closed, so `Base::m()` names a member the class declares
                    // (in or out of line) or inherits; one it lacks is not guessed by name
                    // unless a base outside the repository may have it.
                    let closed = g.file(n.file).profile.translation_units()
                        && matches!(
                            found,
                            Ok(Step {
                                value: Value::Unknown,
                                ..
                            })
                        )
                        && defs.iter().all(|&t| {
                            !g.node(t).kind.is_type_like()
                                || (self.class_member(t, name).is_empty()
                                    && !self.inherits_outside(t))
                        });
                    return if closed { Err(Miss::NotFound) } else { found };
                }
                if n.kind == NodeKind::Module && g.file(n.file).profile.translation_units() {
                    return self.namespace_member(d, name);
                }
                // A typed constant (`static final Logger LOG`) has its type's members.
                if n.kind == NodeKind::Constant {
                    let typed = g
                        .enclosing_type(d)
                        .and_then(|t| self.field_type(t, &n.name, depth + 1));
                    if let Some(step) = typed {
                        return self
                            .member(&step, name, depth + 1)
                            .map(|next| step.then(next));
                    }
                }
                if matches!(n.kind, NodeKind::File | NodeKind::Module) {
                    let hits = g.members(d, name);
                    if !hits.is_empty() {
                        return Ok(Step::new(Value::Defs(hits), 1.0, ""));
                    }
                    return Err(Miss::NotFound);
                }
                Ok(Step::new(Value::Unknown, 1.0, ""))
            }
            Value::Instance(t) => self.type_member(*t, name, depth),
            Value::Super(t) => {
                let bases = g.bases.get(t).map_or(&[][..], |v| v.as_slice());
                for &b in bases {
                    let hits = self.class_member(b, name);
                    if !hits.is_empty() {
                        return Ok(Step::new(Value::Defs(hits), 1.0, ""));
                    }
                }
                // `super.toString()`: a method every object has.
                let universal = self.profile_of(*t).types.is_some()
                    && self.profile_of(*t).is_builtin_method(name);
                if g.external_bases.contains(t) || bases.is_empty() || universal {
                    Err(Miss::External)
                } else {
                    Err(Miss::NotFound)
                }
            }
            Value::Module(m) => self.module_member(m, name, depth),
            Value::External => Ok(Step::new(Value::External, 1.0, "")),
            Value::Unknown | Value::Local => Ok(Step::new(Value::Unknown, 1.0, "")),
        }
    }

    fn type_member(&self, t: Idx, name: &str, depth: u8) -> Result<Step, Miss> {
        let hits = self.class_member(t, name);
        if !hits.is_empty() {
            return Ok(Step::new(Value::Defs(hits), 1.0, ""));
        }
        // Rust: `Message::Data(..)` (a variant, stored as no node) builds the enum.
        if self.g.node(t).kind == NodeKind::Enum
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && self.profile_of(t).imports == ImportStyle::Rust
        {
            return Ok(Step::new(Value::Defs(vec![t]), 1.0, ""));
        }
        if let Some(step) = self.field_type(t, name, depth) {
            return Ok(step);
        }
        if self.g.external_bases.contains(&t) {
            return Err(Miss::External);
        }
        // An attribute without a declared type: its value is unknown, not missing.
        Ok(Step::new(Value::Unknown, 1.0, ""))
    }

    /// `module.name`: a definition, a submodule, or a name the module re-exports.
    fn module_member(&self, module: &str, name: &str, depth: u8) -> Result<Step, Miss> {
        let g = self.g;
        let hits = g.member_qn(module, name);
        if !hits.is_empty() {
            return Ok(Step::new(Value::Defs(hits), 1.0, ""));
        }
        let sub = join(module, name);
        if g.is_scope(&sub) {
            return Ok(Step::new(Value::Module(sub), 1.0, ""));
        }
        // A typed variable of the module (`current_app: Flask = ...`, `export const api: Api`).
        for f in g.module_files(module) {
            if let Some(step) = g
                .file(f)
                .node
                .and_then(|n| self.module_variable(n, name, depth))
            {
                return Ok(step);
            }
        }
        if g.module_exists(&sub) {
            return Ok(Step::new(Value::Module(sub), 1.0, ""));
        }
        if depth < MAX_DEPTH {
            for f in g.module_files(module) {
                let file = g.file(f);
                // Java, Kotlin and C# imports never re-export (and chasing their star
                // imports from package to package is very slow on a large tree).
                if file.profile.types.is_some() {
                    continue;
                }
                // Rust: a `use` inside a function or an inline `mod tests` re-exports nothing
                // from the file's module (and following `use super::*` from there loops).
                let exported = |imp: &&Import| {
                    file.profile.imports != ImportStyle::Rust
                        || g.node(imp.node).kind == NodeKind::File
                };
                let bindings = self.bindings(f);
                for &imp in bindings.get(name).into_iter().flatten() {
                    if exported(&imp) {
                        if let Ok(step) = self.import_target(f, imp, depth + 1, true) {
                            return Ok(step);
                        }
                    }
                }
                for imp in file
                    .imports
                    .iter()
                    .filter(|i| &*i.name == "*")
                    .filter(exported)
                {
                    // A star import of the module itself adds nothing.
                    if let Some(m) = self.import_module(f, imp).filter(|m| m != module) {
                        if let Ok(step) = self.module_member(&m, name, depth + 1) {
                            if !matches!(step.value, Value::External) {
                                return Ok(step);
                            }
                        }
                    }
                }
            }
        }
        // Go: `http.DefaultClient`, a package variable.
        if let Some(step) = self.go_package_var(module, name, depth) {
            return Ok(step);
        }
        if g.module_exists(module) || g.is_scope(module) {
            Err(Miss::NotFound)
        } else {
            Ok(Step::new(Value::External, 1.0, ""))
        }
    }

    /// A name bound by an import of `file` (or an include, which binds everything).
    fn imported(&self, file: Idx, scope: Idx, name: &str, depth: u8) -> Option<Result<Step, Miss>> {
        let g = self.g;
        let f = g.file(file);
        let style = f.profile.imports;
        let bindings = self.bindings(file);
        for &imp in bindings.get(name).into_iter().flatten() {
            if self.visible(imp, scope) {
                let step = self
                    .import_target(file, imp, depth, true)
                    .map(|s| match s.value {
                        // An imported variable is no surer than its type.
                        Value::Instance(_) => {
                            Step::new(s.value, IMPORT.min(s.confidence), s.strategy)
                        }
                        _ => Step::new(s.value, IMPORT, "import"),
                    });
                return Some(step);
            }
        }
        for imp in f.imports.iter().filter(|i| is_star(style, i)) {
            if let Some(m) = self.import_module(file, imp) {
                if let Ok(step) = self.module_member(&m, name, depth + 1) {
                    if matches!(step.value, Value::Defs(_) | Value::Module(_)) {
                        return Some(Ok(Step::new(step.value, STAR_IMPORT, "star_import")));
                    }
                }
            }
        }
        // Modules seen without an import (`java.lang`), where the repository defines them.
        if let Some(rules) = f.profile.types {
            for &m in rules.implicit_imports {
                if &*f.module != m && g.module_exists(m) {
                    let hits = g.member_qn(m, name);
                    if !hits.is_empty() {
                        return Some(Ok(Step::new(Value::Defs(hits), IMPORT, "implicit_import")));
                    }
                }
            }
        }
        None
    }

    /// `file`'s imports by the name each binds (see `bindings`).
    fn bindings(&self, file: Idx) -> Rc<Bindings<'g>> {
        if let Some(found) = self.bindings.borrow().get(&file) {
            return found.clone();
        }
        let f = self.g.file(file);
        let mut by_name = Bindings::default();
        for imp in &f.imports {
            if let Some(name) = binding(f.profile.imports, imp) {
                by_name.entry(name).or_default().push(imp);
            }
        }
        let by_name = Rc::new(by_name);
        self.bindings.borrow_mut().insert(file, by_name.clone());
        by_name
    }

    /// An import inside a function binds only there; one at file level binds everywhere.
    fn visible(&self, imp: &Import, scope: Idx) -> bool {
        let g = self.g;
        if g.node(imp.node).kind == NodeKind::File {
            return true;
        }
        let mut at = Some(scope);
        while let Some(a) = at {
            if a == imp.node {
                return true;
            }
            at = g.node(a).parent;
        }
        false
    }

    /// An import as an edge: to the definition or the module's files it names.
    pub fn resolve_import(&self, file: Idx, imp: &Import) -> Outcome {
        let g = self.g;
        let resolved = |nodes: Vec<Idx>, strategy| {
            if nodes.is_empty() {
                return Outcome::Unresolved {
                    miss: Miss::NotFound,
                    candidates: 0,
                };
            }
            Outcome::all(nodes, IMPORT, strategy)
        };
        if g.file(file).profile.imports == ImportStyle::Include && !imp.name.is_empty() {
            // C++ `using ns::name;` (`using namespace ns;` names no definition).
            if &*imp.name == "*" {
                return Outcome::Unresolved {
                    miss: Miss::External,
                    candidates: 0,
                };
            }
            let text = format!("{}::{}", imp.module, imp.name);
            return match self.resolve(imp.node, &text) {
                Outcome::Resolved(targets) => Outcome::Resolved(
                    targets
                        .into_iter()
                        .map(|t| Found {
                            confidence: t.confidence.min(IMPORT),
                            strategy: "using",
                            ..t
                        })
                        .collect(),
                ),
                other => other,
            };
        }
        if g.file(file).profile.imports == ImportStyle::Include {
            return match self.include_target(file, imp) {
                Some(t) => resolved(g.file(t).node.into_iter().collect(), "include"),
                None => Outcome::Unresolved {
                    miss: Miss::External,
                    candidates: 0,
                },
            };
        }
        match self.import_target(file, imp, 0, false) {
            Ok(step) => match step.value {
                Value::Defs(defs) => resolved(defs, "import"),
                Value::Module(m) => resolved(
                    g.module_files(&m).filter_map(|f| g.file(f).node).collect(),
                    "import",
                ),
                Value::External => Outcome::Unresolved {
                    miss: Miss::External,
                    candidates: 0,
                },
                _ => Outcome::Unresolved {
                    miss: Miss::NotFound,
                    candidates: 0,
                },
            },
            Err(miss) => Outcome::Unresolved {
                miss,
                candidates: 0,
            },
        }
    }

    /// What an import binds (`bind`) or names: a module, a definition, or something outside
    /// the repository.
    fn import_target(&self, file: Idx, imp: &Import, depth: u8, bind: bool) -> Result<Step, Miss> {
        let g = self.g;
        let style = g.file(file).profile.imports;
        let Some(module) = self.import_module(file, imp) else {
            return Ok(Step::new(Value::External, 1.0, ""));
        };
        let item = &*imp.name;
        if item.is_empty() || item == "*" {
            // The whole module: Python's `import a.b` binds `a`.
            let bound = if bind && style == ImportStyle::Python && imp.alias.is_none() {
                module.split('.').next().unwrap_or(&module).to_string()
            } else {
                module
            };
            return if g.module_exists(&bound) || g.by_qn(&bound).next().is_some() {
                let hits: Vec<Idx> = g.by_qn(&bound).collect();
                if hits.is_empty() {
                    Ok(Step::new(Value::Module(bound), 1.0, ""))
                } else {
                    Ok(Step::new(Value::Defs(hits), 1.0, ""))
                }
            } else {
                Ok(Step::new(Value::External, 1.0, ""))
            };
        }
        if item == "default" {
            return self.default_export(&module, imp.alias.as_deref());
        }
        let hits: Vec<Idx> = g.member_qn(&module, item);
        if !hits.is_empty() {
            return Ok(Step::new(Value::Defs(hits), 1.0, ""));
        }
        self.module_member(&module, item, depth + 1)
    }

    /// `import x from './m'`: the definition `m` exports by default. Without export
    /// tracking, a top-level definition named like the binding or the file's only one.
    fn default_export(&self, module: &str, alias: Option<&str>) -> Result<Step, Miss> {
        let g = self.g;
        if let Some(alias) = alias {
            let hits = g.member_qn(module, alias);
            if !hits.is_empty() {
                return Ok(Step::new(
                    Value::Defs(hits),
                    DEFAULT_EXPORT,
                    "default_export",
                ));
            }
        }
        let tops: Vec<Idx> = g
            .module_files(module)
            .flat_map(|f| {
                let file_node = g.file(f).node;
                g.nodes_of(f).filter(move |&i| {
                    let n = g.node(i);
                    n.parent.is_some() && n.parent == file_node && n.kind != NodeKind::Constant
                })
            })
            .collect();
        match tops.as_slice() {
            [one] => Ok(Step::new(
                Value::Defs(vec![*one]),
                DEFAULT_EXPORT,
                "default_export",
            )),
            _ if g.module_exists(module) => Ok(Step::new(Value::Unknown, 1.0, "")),
            _ => Ok(Step::new(Value::External, 1.0, "")),
        }
    }

    /// The module an import names, as the qualified-name prefix of its definitions.
    /// `None` when it is outside the repository.
    fn import_module(&self, file: Idx, imp: &Import) -> Option<String> {
        let g = self.g;
        let f = g.file(file);
        let raw = &*imp.module;
        match f.profile.imports {
            ImportStyle::Python => {
                let m = python_module(&f.module, &f.path, raw)?;
                if raw.starts_with('.') || g.module_exists(&m) {
                    return Some(m);
                }
                if super::python_stdlib::contains(&m) {
                    return Some(m);
                }
                // `from flaskr.db import x` in a project kept below the repository root.
                Some(g.module_by_suffix(&m).map_or(m, str::to_string))
            }
            ImportStyle::JavaScript => {
                let target = js_file(g, &f.path, raw)?;
                Some(g.file(target).module.to_string())
            }
            ImportStyle::Go => go_package(g, raw),
            ImportStyle::Rust => {
                let base = self.rust_base_module(imp.node);
                rust_module(&base, raw).or_else(|| {
                    // `use util::x` (a child module) or `use tokio::x` (a crate here).
                    let (first, rest) = raw.split_once("::").unwrap_or((raw, ""));
                    let root = self.rust_named_module(imp.node, first)?;
                    Some(match rest {
                        "" => root,
                        rest => join(&root, &rest.replace("::", ".")),
                    })
                })
            }
            ImportStyle::Include => None,
            ImportStyle::Namespace | ImportStyle::Plain => Some(
                raw.replace("::", ".")
                    .replace('\\', ".")
                    .trim_matches('.')
                    .to_string(),
            ),
        }
    }

    /// Whether a bare name found in no scope may still name a definition of another file.
    /// JavaScript shares globals only between scripts: a file with an `import` or
    /// `require` is a module, which sees other files' names only through its imports.
    fn global_scope(&self, file: Idx) -> bool {
        let f = self.g.file(file);
        let is_module = f.profile.imports == ImportStyle::JavaScript && !f.imports.is_empty();
        f.profile.global_fallback && !is_module
    }

    /// A `from x import *` whose module is outside the repository makes any name possible.
    fn has_external_star(&self, file: Idx) -> bool {
        let f = self.g.file(file);
        f.profile.imports == ImportStyle::Python
            && f.imports.iter().any(|i| {
                &*i.name == "*"
                    && self
                        .import_module(file, i)
                        .is_none_or(|m| !self.g.module_exists(&m))
            })
    }
}

fn is_star(style: ImportStyle, imp: &Import) -> bool {
    &*imp.name == "*"
        || (style == ImportStyle::Namespace && imp.name.is_empty() && imp.alias.is_none())
        || (style == ImportStyle::Go && imp.alias.as_deref() == Some("."))
}

/// Whether an import binds `name`.
#[cfg(test)]
fn binds(style: ImportStyle, imp: &Import, name: &str) -> bool {
    binding(style, imp) == Some(name)
}

/// The local name an import binds, if any. Borrowed: it runs for every import of a file at
/// every name looked up.
pub fn binding(style: ImportStyle, imp: &Import) -> Option<&str> {
    if let Some(alias) = &imp.alias {
        return (!matches!(&**alias, "_" | ".")).then_some(&**alias);
    }
    match &*imp.name {
        "*" | "default" => None,
        "" => match style {
            ImportStyle::Python => imp.module.split('.').next(),
            ImportStyle::Go => {
                let mut parts = imp.module.rsplit('/');
                let last = parts.next()?;
                // `example.com/m/v2` is package `m`.
                let is_version = last.len() > 1
                    && last.starts_with('v')
                    && last[1..].bytes().all(|b| b.is_ascii_digit());
                if is_version {
                    parts.next()
                } else {
                    Some(last)
                }
            }
            ImportStyle::Namespace | ImportStyle::Include | ImportStyle::JavaScript => None,
            ImportStyle::Rust | ImportStyle::Plain => Some(last_name(&imp.module)),
        },
        name => Some(last_name(name)),
    }
}

/// The last identifier of a dotted, `::` or `/` path.
pub fn last_name(text: &str) -> &str {
    // The separators are ASCII: a byte search finds them, and slicing after one is safe.
    match text
        .bytes()
        .rposition(|b| matches!(b, b'.' | b':' | b'/' | b'\\'))
    {
        Some(i) => &text[i + 1..],
        None => text,
    }
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::last_name;

    #[test]
    fn the_last_name_follows_the_last_separator() {
        assert_eq!(last_name("django.db.models"), "models");
        assert_eq!(last_name("std::collections::HashMap"), "HashMap");
        assert_eq!(last_name("github.com/x/pkg"), "pkg");
        assert_eq!(last_name("a\\b"), "b");
        assert_eq!(last_name("plain"), "plain");
        assert_eq!(last_name("trailing."), "");
        assert_eq!(last_name("naïve.café"), "café");
    }
}
