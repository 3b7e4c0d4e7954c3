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

use super::graph::{Graph, Idx, Import};
use super::lang::{ImportStyle, Profile};
use crate::model::NodeKind;
use std::collections::HashMap;

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

pub struct Target {
    pub node: Idx,
    pub confidence: f32,
    pub strategy: &'static str,
}

pub enum Outcome {
    Resolved(Vec<Target>),
    Unresolved { miss: Miss, candidates: usize },
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
    locals: HashMap<Idx, Vec<Local>>,
}

impl<'g> Resolver<'g> {
    pub fn new(g: &'g Graph, fuzzy_limit: usize, locals: HashMap<Idx, Vec<Local>>) -> Self {
        Resolver {
            g,
            fuzzy_limit,
            locals,
        }
    }

    /// Resolves a reference written at `scope`. `value_only` marks a name used as a value
    /// (a callback), which is kept only when it names a definition.
    pub fn resolve(&self, scope: Idx, text: &str) -> Outcome {
        let (head, segments) = split_reference(text);
        // `cls()`, `this(...)`: the enclosing type itself; Python's `super()` is a builtin.
        if let (Head::Name, [only]) = (head, segments.as_slice()) {
            let p = self.profile_of(scope);
            if p.is_super(only) && p.is_builtin(only) {
                return self.unresolved(Miss::External, only);
            }
            if p.is_self(only) {
                if let Some(t) = self.g.enclosing_type(scope) {
                    return Outcome::Resolved(vec![Target {
                        node: t,
                        confidence: MEMBER,
                        strategy: "self",
                    }]);
                }
            }
        }
        let Some((&last, receiver)) = segments.split_last() else {
            return Outcome::Unresolved {
                miss: Miss::Dynamic,
                candidates: 0,
            };
        };
        let step = match (head, receiver.first()) {
            (Head::Expression, _) => Ok(Step::new(Value::Unknown, 1.0, "")),
            (Head::SuperCall, _) => self.super_of(scope),
            (Head::Name, None) => self.bare(scope, last, 0),
            (Head::Name, Some(&first)) => self.lookup(scope, first, 0, true),
        };
        let rest = match (head, receiver.is_empty()) {
            (Head::Name, false) => &segments[1..],
            (Head::Name, true) => &[][..],
            _ => &segments[..],
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
        self.finish(step, last)
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

    fn finish(&self, step: Step, last: &str) -> Outcome {
        match step.value {
            Value::Defs(defs) => {
                let defs: Vec<Idx> = defs
                    .into_iter()
                    .filter(|&d| self.g.is_callable(d))
                    .collect();
                if defs.is_empty() {
                    return self.unresolved(Miss::NotFound, last);
                }
                // Overloads share one qualified name: they count once against the limit.
                if defs.len() > self.fuzzy_limit && self.distinct_names(&defs) > self.fuzzy_limit {
                    return Outcome::Unresolved {
                        miss: Miss::Ambiguous,
                        candidates: defs.len(),
                    };
                }
                Outcome::Resolved(
                    defs.into_iter()
                        .map(|node| Target {
                            node,
                            confidence: step.confidence,
                            strategy: step.strategy,
                        })
                        .collect(),
                )
            }
            Value::External => self.unresolved(Miss::External, last),
            Value::Local | Value::Instance(_) => Outcome::Unresolved {
                miss: Miss::Local,
                candidates: 0,
            },
            Value::Super(t) => {
                let mut bases = self.g.bases.get(&t).cloned().unwrap_or_default();
                if bases.is_empty() {
                    return self.unresolved(Miss::External, last);
                }
                // `super(...)` calls the base class, not the interfaces beside it.
                if bases
                    .iter()
                    .any(|&b| self.g.node(b).kind != NodeKind::Interface)
                {
                    bases.retain(|&b| self.g.node(b).kind != NodeKind::Interface);
                }
                self.finish(
                    Step::new(Value::Defs(bases), step.confidence, step.strategy),
                    last,
                )
            }
            Value::Module(_) => self.unresolved(Miss::NotFound, last),
            Value::Unknown => self.by_name_only(last, true),
        }
    }

    /// How many different qualified names the definitions have.
    fn distinct_names(&self, defs: &[Idx]) -> usize {
        let mut names: Vec<&str> = defs.iter().map(|&d| &*self.g.node(d).qn).collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    }

    /// A method called on a receiver of unknown type: only its name is known.
    fn by_name_only(&self, name: &str, member: bool) -> Outcome {
        let mut found = self.candidates(name);
        if member {
            // A method call cannot land on a free function of another module.
            let methods: Vec<Idx> = found
                .iter()
                .copied()
                .filter(|&i| self.g.node(i).kind == NodeKind::Method)
                .collect();
            if !methods.is_empty() {
                found = methods;
            }
        }
        self.spread(found, name, member)
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
        Outcome::Resolved(
            found
                .into_iter()
                .map(|node| Target {
                    node,
                    confidence,
                    strategy,
                })
                .collect(),
        )
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
                None => Ok(Step::new(Value::Unknown, 1.0, "")),
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
                    // after it (Java, Kotlin, C#; C++ has the same rule).
                    if p.implicit_members && p.types.is_some() && &*n.name == name {
                        return Ok(Step::new(Value::Defs(vec![a]), SAME_SCOPE, "scope"));
                    }
                    if p.implicit_members {
                        let mut hits = self.class_member(a, name);
                        if receiver && p.types.is_some() {
                            hits.retain(|&h| {
                                !matches!(g.node(h).kind, NodeKind::Method | NodeKind::Function)
                            });
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
                    let hits = g.member_qn(&n.qn, name);
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
                    let hits = g.member_qn(&n.qn, name);
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
                let hits = self.class_member(t, name);
                if !hits.is_empty() {
                    return Ok(Step::new(Value::Defs(hits), MEMBER, "member"));
                }
            }
        }
        // The file's module (and the package's other files where the language shares it).
        let hits = g.member_qn(&file.module, name);
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
        if p.global_fallback || self.has_external_star(node.file) {
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
                let mut named = bindings.iter().filter(|l| &*l.name == name);
                if let Some(first) = named.next() {
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
                return None;
            }
            at = n.parent;
        }
        None
    }

    /// The value of a variable whose type is written `text` at `scope` (an annotation, or
    /// `callee()` for what a call returns): an instance of a repository type, something
    /// external, or a local of unknown type.
    fn type_of(&self, scope: Idx, text: &str, depth: u8) -> Step {
        let unknown = Step::new(Value::Local, 1.0, "local");
        if depth > MAX_DEPTH {
            return unknown;
        }
        let (text, inferred) = match text.strip_suffix("()") {
            Some(callee) => (callee, true),
            None => (text, false),
        };
        let Some(name) = clean_type(text) else {
            return unknown;
        };
        let mut parts = name.split('.');
        let Some(first) = parts.next() else {
            return unknown;
        };
        let mut step = match self.lookup(scope, first, depth + 1, true) {
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
        match &step.value {
            Value::External => Step::new(Value::External, 1.0, "external"),
            Value::Defs(defs) if self.g.node(defs[0]).kind.is_type_like() => {
                let (confidence, strategy) = if inferred {
                    (INFERRED, "inferred_type")
                } else {
                    (TYPED, "type_annotation")
                };
                Step::new(
                    Value::Instance(defs[0]),
                    confidence.min(step.confidence),
                    strategy,
                )
            }
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
            // (Java, Kotlin, C#).
            let constructors = &*self.g.node(t).name == name && self.profile_of(t).types.is_some();
            let hits = if constructors {
                Vec::new()
            } else {
                self.g.member_qn(&self.g.node(t).qn, name)
            };
            if !hits.is_empty() {
                return hits;
            }
            if let Some(c) = self.companion(t) {
                let hits = self.g.member_qn(&self.g.node(c).qn, name);
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
            }
            if let Some(bases) = self.g.bases.get(&t) {
                for &b in bases {
                    if !queue.contains(&b) {
                        queue.push(b);
                    }
                }
            }
        }
        None
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
                    return self.type_member(d, name, depth);
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
                    let hits = g.member_qn(&n.qn, name);
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
                for imp in &file.imports {
                    if binding(file.profile.imports, imp).as_deref() == Some(name) {
                        if let Ok(step) = self.import_target(f, imp, depth + 1, true) {
                            return Ok(step);
                        }
                    }
                }
                for imp in file.imports.iter().filter(|i| &*i.name == "*") {
                    if let Some(m) = self.import_module(f, imp) {
                        if let Ok(step) = self.module_member(&m, name, depth + 1) {
                            if !matches!(step.value, Value::External) {
                                return Ok(step);
                            }
                        }
                    }
                }
            }
        }
        if g.module_exists(module) {
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
        for imp in &f.imports {
            if binding(style, imp).as_deref() == Some(name) && self.visible(imp, scope) {
                let step = self
                    .import_target(file, imp, depth, true)
                    .map(|s| Step::new(s.value, IMPORT, "import"));
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
        if style == ImportStyle::Include {
            for target in self.included_files(file) {
                let hits: Vec<Idx> = g.member_qn(&g.file(target).module, name);
                if !hits.is_empty() {
                    return Some(Ok(Step::new(Value::Defs(hits), IMPORT, "include")));
                }
            }
        }
        None
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
            Outcome::Resolved(
                nodes
                    .into_iter()
                    .map(|node| Target {
                        node,
                        confidence: IMPORT,
                        strategy,
                    })
                    .collect(),
            )
        };
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
                g.nodes
                    .iter()
                    .enumerate()
                    .skip(file_node.map_or(g.nodes.len(), |n| n as usize))
                    .take_while(move |(_, n)| n.file == f)
                    .filter(move |(_, n)| n.parent == file_node && n.kind != NodeKind::Constant)
                    .map(|(i, _)| i as Idx)
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
            ImportStyle::Python => python_module(&f.module, &f.path, raw),
            ImportStyle::JavaScript => {
                let target = js_file(g, &f.path, raw)?;
                Some(g.file(target).module.to_string())
            }
            ImportStyle::Go => go_package(g, raw),
            ImportStyle::Rust => rust_module(&f.module, raw),
            ImportStyle::Include => None,
            ImportStyle::Namespace | ImportStyle::Plain => Some(
                raw.replace("::", ".")
                    .replace('\\', ".")
                    .trim_matches('.')
                    .to_string(),
            ),
        }
    }

    /// The file an `#include` names: relative to the including file, or the only file in
    /// the tree with that path suffix.
    fn include_target(&self, file: Idx, imp: &Import) -> Option<Idx> {
        let g = self.g;
        let dir = g.file(file).path.rsplit_once('/').map_or("", |(d, _)| d);
        let inc = super::lang::unquoted(imp.module.trim_matches(['<', '>']));
        g.file_by_path(&normalize_path(&join_path(dir, inc)))
            .or_else(|| g.file_by_path_suffix(inc))
    }

    /// Included files and the implementation files beside included headers.
    fn included_files(&self, file: Idx) -> Vec<Idx> {
        let g = self.g;
        let mut out = Vec::new();
        for imp in &g.file(file).imports {
            if let Some(t) = self.include_target(file, imp) {
                out.push(t);
                // The implementation beside a header: `util.h` -> `util.c`.
                let path = &*g.file(t).path;
                if let Some((stem, _)) = path.rsplit_once('.') {
                    for ext in ["c", "cc", "cpp", "cxx"] {
                        if let Some(src) = g.file_by_path(&format!("{stem}.{ext}")) {
                            if src != file {
                                out.push(src);
                            }
                        }
                    }
                }
            }
        }
        out
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

/// The local name an import binds, if any.
pub fn binding(style: ImportStyle, imp: &Import) -> Option<String> {
    if let Some(alias) = &imp.alias {
        return (!matches!(&**alias, "_" | ".")).then(|| alias.to_string());
    }
    match &*imp.name {
        "*" | "default" => None,
        "" => match style {
            ImportStyle::Python => imp.module.split('.').next().map(str::to_string),
            ImportStyle::Go => {
                let mut parts = imp.module.rsplit('/');
                let last = parts.next()?;
                // `example.com/m/v2` is package `m`.
                let is_version = last.len() > 1
                    && last.starts_with('v')
                    && last[1..].bytes().all(|b| b.is_ascii_digit());
                Some(if is_version { parts.next()? } else { last }.to_string())
            }
            ImportStyle::Namespace | ImportStyle::Include | ImportStyle::JavaScript => None,
            ImportStyle::Rust | ImportStyle::Plain => Some(last_name(&imp.module).to_string()),
        },
        name => Some(last_name(name).to_string()),
    }
}

/// The last identifier of a dotted, `::` or `/` path.
pub fn last_name(text: &str) -> &str {
    text.rsplit(['.', ':', '/', '\\']).next().unwrap_or(text)
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// `from ..a import b` written in module `pkg.sub.mod` means `pkg.a`.
fn python_module(module: &str, path: &str, raw: &str) -> Option<String> {
    let dots = raw.len() - raw.trim_start_matches('.').len();
    let rest = &raw[dots..];
    if dots == 0 {
        return Some(rest.to_string());
    }
    let is_package = path.ends_with("/__init__.py") || path.ends_with("/__init__.pyi");
    let mut base: Vec<&str> = module.split('.').filter(|s| !s.is_empty()).collect();
    if !is_package {
        base.pop();
    }
    for _ in 1..dots {
        base.pop()?;
    }
    let mut out = base.join(".");
    if !rest.is_empty() {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(rest);
    }
    Some(out)
}

/// A relative JavaScript/TypeScript import to a file of the repository.
fn js_file(g: &Graph, from: &str, spec: &str) -> Option<Idx> {
    if !spec.starts_with('.') {
        return None;
    }
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    let base = normalize_path(&join_path(dir, spec));
    let base = base.trim_end_matches('/');
    // `./x.js` in TypeScript sources means `./x.ts`.
    let stem = [".js", ".jsx", ".mjs", ".cjs"]
        .iter()
        .find_map(|e| base.strip_suffix(e))
        .unwrap_or(base);
    const EXTS: [&str; 8] = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts"];
    std::iter::once(base.to_string())
        .chain(EXTS.iter().map(|e| format!("{stem}.{e}")))
        .chain(EXTS.iter().map(|e| format!("{base}/index.{e}")))
        .find_map(|p| g.file_by_path(&p))
}

/// A Go import path to the package directory holding it in this repository.
fn go_package(g: &Graph, path: &str) -> Option<String> {
    for (module, dir) in &g.go_modules {
        if let Some(rest) = path.strip_prefix(module.as_str()) {
            if rest.is_empty() || rest.starts_with('/') {
                let p = format!("{dir}{rest}");
                return Some(p.trim_matches('/').to_string());
            }
        }
    }
    // The standard library's own tree and GOPATH-style layouts: the path is the directory.
    g.module_exists(path).then(|| path.to_string())
}

/// `crate::a::b` (or `self::`, `super::`) written in module `m` as a qualified-name prefix.
/// Paths rooted elsewhere name other crates.
fn rust_module(module: &str, raw: &str) -> Option<String> {
    let mut parts = raw.split("::").filter(|s| !s.is_empty());
    let first = parts.next()?;
    let mut base: Vec<&str> = match first {
        "crate" => crate_root(module),
        "self" => module.split('.').collect(),
        "super" => {
            let mut b: Vec<&str> = module.split('.').collect();
            b.pop();
            b
        }
        _ => return None,
    };
    for p in parts {
        if p == "super" {
            base.pop();
        } else {
            base.push(p);
        }
    }
    Some(
        base.into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// The module prefix of a crate's root: everything up to its `src` folder (files directly
/// under a top-level `src/` have no prefix), and a file at the root is the root.
fn crate_root(module: &str) -> Vec<&str> {
    let parts: Vec<&str> = module.split('.').collect();
    match parts.iter().rposition(|&p| p == "src") {
        Some(i) => parts[..=i].to_vec(),
        None => Vec::new(),
    }
}

fn join_path(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Resolves `.` and `..` components.
fn normalize_path(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

/// A type as written reduced to the name to look up: `Optional["Session"]` -> `Session`,
/// `*http.Server` -> `http.Server`, `List<Foo>` -> `List`, `&mut Self` -> `Self`.
fn clean_type(text: &str) -> Option<&str> {
    let mut t = text.trim();
    for wrapper in [
        "Optional[",
        "typing.Optional[",
        "t.Optional[",
        "Type[",
        "type[",
    ] {
        if let Some(inner) = t.strip_prefix(wrapper).and_then(|s| s.strip_suffix(']')) {
            t = inner.trim();
        }
    }
    if let Some((first, _)) = t.split_once('|') {
        t = first.trim();
    }
    t = t.trim_matches(|c| c == '"' || c == '\'');
    t = t
        .trim_start_matches(['*', '&', '?', '^'])
        .trim_end_matches(['?', '!', '*', '&']);
    for prefix in ["mut ", "const ", "dyn ", "impl ", "struct ", "class "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let end = t.find(['<', '[', '(', ' ', ',']).unwrap_or(t.len());
    let t = t[..end].trim_end_matches("::");
    let t = t.trim();
    (!t.is_empty() && t != "None").then_some(t)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Head {
    /// The first segment is a name to look up.
    Name,
    /// The receiver is an expression (a call result, an index): only later names are known.
    Expression,
    /// Python's `super()`.
    SuperCall,
}

/// `self.a.b` -> [self, a, b]; `foo(x).bar` -> Expression, [bar]; `a::b::<T>::c` -> [a, b, c].
fn split_reference(text: &str) -> (Head, Vec<&str>) {
    let mut t = text.trim();
    for prefix in ["new ", "await ", "yield "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let mut head = Head::Name;
    if let Some(rest) = t.strip_prefix("super()") {
        head = Head::SuperCall;
        t = rest;
    }
    let bytes = t.as_bytes();
    let mut segments: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let sep_len = match b {
            b'.' | b'\\' => 1,
            b':' if bytes.get(i + 1) == Some(&b':') => 2,
            b':' => 1,
            b'-' if bytes.get(i + 1) == Some(&b'>') => 2,
            b'?' if bytes.get(i + 1) == Some(&b'.') => 2,
            b'!' if bytes.get(i + 1) == Some(&b'.') => 2,
            b'(' | b'[' | b'{' | b'<' => {
                // Skip the bracketed part; type arguments vanish, anything else makes the
                // receiver an expression.
                let close = match b {
                    b'(' => b')',
                    b'[' => b']',
                    b'{' => b'}',
                    _ => b'>',
                };
                let mut level = 0;
                let mut j = i;
                while j < bytes.len() {
                    if bytes[j] == b {
                        level += 1;
                    } else if bytes[j] == close {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    j += 1;
                }
                if b != b'<' {
                    head = Head::Expression;
                    segments.clear();
                } else if i > start {
                    segments.push(&t[start..i]);
                }
                i = j + 1;
                start = i;
                continue;
            }
            _ => 0,
        };
        if sep_len > 0 {
            if i > start {
                segments.push(&t[start..i]);
            }
            i += sep_len;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < t.len() {
        segments.push(&t[start..]);
    }
    segments.retain(|s| !s.is_empty() && !s.contains(char::is_whitespace));
    if head == Head::Name {
        // Ruby's `@x` is the field `x` of `self`.
        if let Some(field) = segments.first().and_then(|s| s.strip_prefix('@')) {
            if !field.is_empty() && !field.starts_with('@') {
                segments[0] = "self";
                segments.insert(1, field);
            }
        }
    }
    (head, segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_names() {
        assert_eq!(
            split_reference("self.a.b"),
            (Head::Name, vec!["self", "a", "b"])
        );
        assert_eq!(
            split_reference("foo(x).bar"),
            (Head::Expression, vec!["bar"])
        );
        assert_eq!(
            split_reference("Vec::<u8>::new"),
            (Head::Name, vec!["Vec", "new"])
        );
        assert_eq!(
            split_reference("a?.b->c"),
            (Head::Name, vec!["a", "b", "c"])
        );
        assert_eq!(
            split_reference("super().save"),
            (Head::SuperCall, vec!["save"])
        );
        assert_eq!(split_reference("new Foo"), (Head::Name, vec!["Foo"]));
        assert_eq!(split_reference("xs[0].m"), (Head::Expression, vec!["m"]));
        assert_eq!(
            split_reference("obj:method"),
            (Head::Name, vec!["obj", "method"])
        );
        assert_eq!(
            split_reference("@repo.save"),
            (Head::Name, vec!["self", "repo", "save"])
        );
    }

    #[test]
    fn relative_python_modules() {
        assert_eq!(
            python_module("pkg.sub.mod", "pkg/sub/mod.py", ".x"),
            Some("pkg.sub.x".into())
        );
        assert_eq!(
            python_module("pkg.sub", "pkg/sub/__init__.py", ".x"),
            Some("pkg.sub.x".into())
        );
        assert_eq!(
            python_module("pkg.sub.mod", "pkg/sub/mod.py", "..x"),
            Some("pkg.x".into())
        );
        assert_eq!(
            python_module("pkg.sub.mod", "pkg/sub/mod.py", "."),
            Some("pkg.sub".into())
        );
        assert_eq!(
            python_module("m", "m.py", "os.path"),
            Some("os.path".into())
        );
    }

    #[test]
    fn rust_paths() {
        assert_eq!(rust_module("net.tcp", "crate::util"), Some("util".into()));
        assert_eq!(
            rust_module("tokio.src.net", "crate::io"),
            Some("tokio.src.io".into())
        );
        assert_eq!(rust_module("a.b", "super::c"), Some("a.c".into()));
        assert_eq!(rust_module("a.b", "std::fmt"), None);
    }

    #[test]
    fn types_reduce_to_names() {
        assert_eq!(clean_type("Optional[\"Session\"]"), Some("Session"));
        assert_eq!(clean_type("*http.Server"), Some("http.Server"));
        assert_eq!(clean_type("List<Foo>"), Some("List"));
        assert_eq!(clean_type("&mut Self"), Some("Self"));
        assert_eq!(clean_type("Foo | None"), Some("Foo"));
        assert_eq!(clean_type("None"), None);
    }
}
