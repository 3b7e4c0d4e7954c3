//! Turns the raw reference sites kept at extraction into edges with a confidence and the
//! strategy that found them, and keeps every site that resolves to nothing in `unresolved`.
//!
//! A full build resolves every file. An incremental run resolves the files it changed plus
//! every file whose references may now land elsewhere: those with edges into a changed file,
//! and those with edges to, or unresolved references by, a name the change added or removed.
//! Resolution of a file depends only on the repository-wide tables, so the result equals a
//! full build's.

pub mod changes;
mod lookup;
mod overloads;
mod python_stdlib;
mod rules;
mod symbols;

pub use lookup::last_name;

/// Whether `name` is one of the language's own functions or types (never a repository
/// definition when written bare).
pub fn is_builtin(language: &str, name: &str) -> bool {
    rules::profile(language).is_builtin(name)
}

use crate::model::RefKind;
use crate::resolve::changes::Changes;
use anyhow::Result;
use lookup::{Found, Local, Outcome, Resolver};
use rusqlite::{params, Connection};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use symbols::{Graph, Idx};

/// Every file's imports, member types and bases, and the typed variables at its top level (a
/// file node's ordinal is 0): the rows of the partial index `refs_scope`, whose condition this
/// repeats so that only those rows are read.
pub(crate) const SCOPE_REFS_QUERY: &str =
    "SELECT node_id, kind, name, module, alias, line FROM refs \
     WHERE kind = 'import' OR kind = 'field' OR kind = 'inherits' OR kind = 'implements' \
     OR (kind = 'local' AND module IS NOT NULL AND node_id % 524288 = 0) \
     ORDER BY node_id, seq";

pub struct ResolveOptions {
    /// Edges below this confidence are kept as unresolved (`low_confidence`) instead.
    pub min_confidence: f64,
    /// A name shared by more definitions than this is not guessed at all.
    pub fuzzy_limit: usize,
    pub jobs: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct ResolveStats {
    /// Files whose references were resolved.
    pub files: usize,
    pub edges: usize,
    pub unresolved: usize,
}

/// One resolved reference, as stored.
struct EdgeRow {
    source: i64,
    target: i64,
    kind: &'static str,
    confidence: f64,
    strategy: &'static str,
    line: u32,
}

/// One reference with no target, as stored.
struct MissRow {
    source: i64,
    kind: &'static str,
    name: String,
    /// The name a later definition must have to resolve the site; the written name's last
    /// one when `None`.
    key: Option<String>,
    reason: &'static str,
    candidates: usize,
    line: u32,
}

#[derive(Default)]
struct Resolved {
    edges: Vec<EdgeRow>,
    misses: Vec<MissRow>,
}

/// A reference site of one file, loaded for resolution.
struct RefRow {
    node: i64,
    kind: RefKind,
    name: String,
    module: Option<String>,
    line: u32,
}

/// Resolves every file (`changes` is `None`) or the files an incremental change affects.
pub fn resolve(
    conn: &Connection,
    changes: Option<&Changes>,
    opts: &ResolveOptions,
) -> Result<ResolveStats> {
    let mut g = Graph::load(conn)?;
    includes(&mut g);
    hierarchy(&mut g, opts.fuzzy_limit);
    let files: Vec<Idx> = match changes {
        None => {
            conn.execute_batch(
                "DELETE FROM edges; DELETE FROM unresolved; \
                 INSERT INTO edges(source_id, target_id, kind, confidence, strategy, line) \
                 SELECT parent_id, id, 'contains', 1.0, 'syntax', start_line FROM nodes \
                 WHERE parent_id IS NOT NULL ORDER BY id;",
            )?;
            (0..g.files.len() as Idx).collect()
        }
        Some(c) => {
            let files = affected(conn, &g, c)?;
            let mut contains = conn.prepare_cached(
                "INSERT INTO edges(source_id, target_id, kind, confidence, strategy, line) \
                 SELECT parent_id, id, 'contains', 1.0, 'syntax', start_line FROM nodes \
                 WHERE id >= ?1 AND id < ?2 AND parent_id IS NOT NULL ORDER BY id",
            )?;
            for &fid in &c.files {
                let (lo, hi) = crate::ids::node_range(fid);
                contains.execute([lo, hi])?;
            }
            for &f in &files {
                let (lo, hi) = crate::ids::node_range(g.file(f).id);
                conn.prepare_cached(
                    "DELETE FROM edges WHERE source_id >= ?1 AND source_id < ?2 \
                     AND kind <> 'contains'",
                )?
                .execute([lo, hi])?;
                conn.prepare_cached(
                    "DELETE FROM unresolved WHERE source_id >= ?1 AND source_id < ?2",
                )?
                .execute([lo, hi])?;
            }
            files
        }
    };

    let mut stats = ResolveStats {
        files: files.len(),
        ..Default::default()
    };
    let mut insert_edge = conn.prepare(
        "INSERT INTO edges(source_id, target_id, kind, confidence, strategy, line) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut insert_miss = conn.prepare(
        "INSERT INTO unresolved(source_id, kind, name, key, reason, candidates, line) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut store = |r: Resolved| -> Result<()> {
        for e in &r.edges {
            insert_edge.execute(params![
                e.source,
                e.target,
                e.kind,
                e.confidence,
                e.strategy,
                e.line
            ])?;
        }
        for m in &r.misses {
            insert_miss.execute(params![
                m.source,
                m.kind,
                m.name,
                m.key
                    .as_deref()
                    .unwrap_or_else(|| last_name(&m.name).trim_end_matches('!')),
                m.reason,
                m.candidates as i64,
                m.line
            ])?;
        }
        stats.edges += r.edges.len();
        stats.unresolved += r.misses.len();
        Ok(())
    };
    let load = |f: Idx| load_refs(conn, g.file(f).id);
    pipeline(
        &files,
        opts.jobs,
        load,
        |f, refs| resolve_guarded(&g, f, refs, opts),
        &mut store,
    )?;
    Ok(stats)
}

/// Files whose references are loaded but not yet resolved and stored: bounds the reference
/// rows held in memory.
const FILES_IN_FLIGHT: usize = 256;

/// Resolves `files` on `jobs` threads while this thread, which alone uses the connection,
/// loads the next files' references and stores the results, in the files' order: the
/// database reads and writes overlap the resolution instead of alternating with it.
fn pipeline(
    files: &[Idx],
    jobs: usize,
    mut load: impl FnMut(Idx) -> Result<Vec<RefRow>>,
    work: impl Fn(Idx, &[RefRow]) -> Resolved + Sync,
    store: &mut impl FnMut(Resolved) -> Result<()>,
) -> Result<()> {
    if jobs <= 1 {
        for &f in files {
            store(work(f, &load(f)?))?;
        }
        return Ok(());
    }
    let (job_tx, jobs_rx) = std::sync::mpsc::channel::<(usize, Idx, Vec<RefRow>)>();
    let (done_tx, done) = std::sync::mpsc::channel::<(usize, Resolved)>();
    let jobs_rx = std::sync::Mutex::new(jobs_rx);
    std::thread::scope(|scope| {
        // Owned here: an early return closes the queue, and the threads stop.
        let job_tx = job_tx;
        for _ in 0..jobs {
            let (jobs_rx, done_tx, work) = (&jobs_rx, done_tx.clone(), &work);
            scope.spawn(move || loop {
                let next = jobs_rx.lock().expect("resolution queue").recv();
                let Ok((seq, f, refs)) = next else { return };
                if done_tx.send((seq, work(f, &refs))).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut waiting = std::collections::BTreeMap::new();
        let (mut loaded, mut stored) = (0, 0);
        while stored < files.len() {
            while loaded < files.len() && loaded - stored < FILES_IN_FLIGHT {
                let f = files[loaded];
                job_tx
                    .send((loaded, f, load(f)?))
                    .expect("resolution threads run until the queue closes");
                loaded += 1;
            }
            let (seq, r) = done.recv().expect("a resolution thread stopped");
            waiting.insert(seq, r);
            while let Some(r) = waiting.remove(&stored) {
                store(r)?;
                stored += 1;
            }
        }
        Ok(())
    })
}

/// C and C++: which files each file includes, and the implementation beside each header,
/// resolved once for the translation-unit lookups of every file.
fn includes(g: &mut Graph) {
    if !g.files.iter().any(|f| f.profile.translation_units()) {
        return;
    }
    let (includes, implementation) = {
        let r = Resolver::new(g, 0, HashMap::new());
        let mut includes = Vec::with_capacity(g.files.len());
        let mut implementation = HashMap::new();
        for (i, f) in g.files.iter().enumerate() {
            let i = i as Idx;
            if !f.profile.translation_units() {
                includes.push(Box::default());
                continue;
            }
            includes.push(r.include_targets(i).into_boxed_slice());
            if let Some(imp) = r.implementation_beside(i) {
                implementation.insert(i, imp);
            }
        }
        (includes, implementation)
    };
    let mut included_by: HashMap<Idx, Vec<Idx>> = HashMap::new();
    for (i, targets) in includes.iter().enumerate() {
        for &t in targets.iter() {
            if !symbols::is_header(&g.file(t).path) {
                included_by.entry(t).or_default().push(i as Idx);
            }
        }
    }
    g.includes = includes;
    g.implementation = implementation;
    g.included_by = included_by;
}

/// Resolves the base types of every definition first: member lookups walk the hierarchy.
fn hierarchy(g: &mut Graph, fuzzy_limit: usize) {
    let mut bases: HashMap<Idx, Vec<Idx>> = HashMap::new();
    let mut external = Vec::new();
    {
        let r = Resolver::new(g, fuzzy_limit, HashMap::new());
        for b in &g.base_refs {
            match r.resolve(b.node, &b.name) {
                Outcome::Resolved(targets) => {
                    let list = bases.entry(b.node).or_default();
                    for t in targets {
                        if t.node != b.node && g.node(t.node).kind.is_type_like() {
                            list.push(t.node);
                        }
                    }
                }
                Outcome::Unresolved { .. } => external.push(b.node),
            }
        }
    }
    g.bases = bases;
    g.external_bases = external.into_iter().collect();
}

/// Files to re-resolve after an incremental change.
fn affected(conn: &Connection, g: &Graph, changes: &Changes) -> Result<Vec<Idx>> {
    let mut files: BTreeSet<i64> = changes.dependents.clone();
    let mut names: BTreeSet<&str> = changes.names.iter().map(String::as_str).collect();
    for &fid in &changes.files {
        files.insert(fid);
    }
    // Members inherited through changed bases can change what `self.x` means in the
    // file's types and in their subclasses.
    for &fid in &changes.hierarchy {
        if let Some(f) = g.file_of_id(fid) {
            for t in g.nodes_of(f).filter(|&t| g.node(t).kind.is_type_like()) {
                names.extend(inherited_names(g, t));
            }
        }
    }
    // What a C or C++ file defines and includes is seen by every file including it.
    let included: Vec<Idx> = changes
        .files
        .iter()
        .filter_map(|&fid| g.file_of_id(fid))
        .filter(|&f| g.file(f).profile.translation_units())
        .collect();
    for f in includers(g, &included) {
        files.insert(g.file(f).id);
    }
    let mut by_target_name = conn.prepare_cached(
        "SELECT DISTINCT e.source_id >> 19 FROM nodes n JOIN edges e ON e.target_id = n.id \
         WHERE n.name = ?1 AND e.kind <> 'contains'",
    )?;
    let mut by_key =
        conn.prepare_cached("SELECT DISTINCT source_id >> 19 FROM unresolved WHERE key = ?1")?;
    for name in names {
        for f in by_target_name.query_map([name], |r| r.get::<_, i64>(0))? {
            files.insert(f?);
        }
        for f in by_key.query_map([name], |r| r.get::<_, i64>(0))? {
            files.insert(f?);
        }
    }
    Ok(files
        .into_iter()
        .filter_map(|id| g.file_of_id(id))
        .collect())
}

/// The files that include one of `files`, directly or through other files.
fn includers(g: &Graph, files: &[Idx]) -> Vec<Idx> {
    if files.is_empty() {
        return Vec::new();
    }
    let mut by_target: HashMap<Idx, Vec<Idx>> = HashMap::new();
    for (i, targets) in g.includes.iter().enumerate() {
        for &t in targets.iter() {
            by_target.entry(t).or_default().push(i as Idx);
        }
    }
    let mut seen: BTreeSet<Idx> = BTreeSet::new();
    let mut queue = files.to_vec();
    while let Some(f) = queue.pop() {
        for &i in by_target.get(&f).map_or(&[][..], |v| v.as_slice()) {
            if seen.insert(i) {
                queue.push(i);
            }
        }
    }
    seen.into_iter().collect()
}

/// Names of the members of every ancestor of a type.
fn inherited_names(g: &Graph, t: Idx) -> Vec<&str> {
    let mut out = Vec::new();
    let mut queue: Vec<Idx> = g.bases.get(&t).cloned().unwrap_or_default();
    let mut i = 0;
    while i < queue.len() && i < 64 {
        let b = queue[i];
        i += 1;
        let members = g.nodes_of(g.node(b).file).map(|i| g.node(i));
        out.extend(members.filter(|n| n.parent == Some(b)).map(|n| &*n.name));
        if let Some(more) = g.bases.get(&b) {
            for &x in more {
                if !queue.contains(&x) {
                    queue.push(x);
                }
            }
        }
    }
    out
}

fn load_refs(conn: &Connection, file_id: i64) -> Result<Vec<RefRow>> {
    let (lo, hi) = crate::ids::node_range(file_id);
    // The kinds as `=` terms: an `IN (...)` list makes SQLite fill a temporary table at every
    // execution, and this runs once per file.
    let mut q = conn.prepare_cached(
        "SELECT node_id, kind, name, module, line FROM refs \
         WHERE node_id >= ?1 AND node_id < ?2 \
         AND (kind = 'call' OR kind = 'reference' OR kind = 'decorator' OR kind = 'local') \
         ORDER BY node_id, seq",
    )?;
    let rows = q.query_map([lo, hi], |r| {
        Ok(RefRow {
            node: r.get(0)?,
            kind: RefKind::parse(r.get_ref(1)?.as_str()?).unwrap_or(RefKind::Call),
            name: r.get(2)?,
            module: r.get(3)?,
            line: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// `resolve_file`, except that a defect (a panic) does not stop the run: the file's
/// reference sites are all kept as unresolved with the reason `error`, so the gap shows.
fn resolve_guarded(g: &Graph, file: Idx, refs: &[RefRow], opts: &ResolveOptions) -> Resolved {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        resolve_file(g, file, refs, opts)
    }))
    .unwrap_or_else(|_| Resolved {
        edges: Vec::new(),
        misses: refs
            .iter()
            .filter_map(|r| {
                Some(MissRow {
                    kind: edge_kind(r.kind)?,
                    source: r.node,
                    name: r.name.clone(),
                    key: None,
                    reason: "error",
                    candidates: 0,
                    line: r.line,
                })
            })
            .collect(),
    })
}

/// The edge a reference site becomes; variables and fields become none.
fn edge_kind(kind: RefKind) -> Option<&'static str> {
    match kind {
        RefKind::Call => Some("calls"),
        RefKind::Decorator => Some("decorates"),
        RefKind::Reference => Some("references"),
        _ => None,
    }
}

/// Everything one file's references resolve to, in the file's order.
fn resolve_file(g: &Graph, file: Idx, refs: &[RefRow], opts: &ResolveOptions) -> Resolved {
    let mut locals: HashMap<Idx, Vec<Local>> = HashMap::new();
    for r in refs.iter().filter(|r| r.kind == RefKind::Local) {
        if let Some(node) = g.node_by_id(r.node) {
            locals.entry(node).or_default().push(Local {
                name: r.name.as_str().into(),
                type_text: r.module.as_deref().map(Into::into),
            });
        }
    }
    let resolver = Resolver::new(g, opts.fuzzy_limit, locals);
    let mut out = Resolved::default();
    let keep = |out: &mut Resolved, source: i64, kind, name: &str, line, outcome| {
        record(g, out, opts, source, kind, name, line, outcome)
    };

    let f = g.file(file);
    for imp in &f.imports {
        let source = g.node(imp.node).id;
        let shown = if imp.name.is_empty() || &*imp.name == "*" {
            imp.module.to_string()
        } else {
            format!("{}.{}", imp.module, imp.name)
        };
        keep(
            &mut out,
            source,
            "imports",
            &shown,
            imp.line,
            resolver.resolve_import(file, imp),
        );
    }
    for b in g.base_refs_of(file) {
        let kind = if b.implements {
            "implements"
        } else {
            "inherits"
        };
        let outcome = resolver.resolve(b.node, &b.name);
        keep(&mut out, g.node(b.node).id, kind, &b.name, b.line, outcome);
    }
    for r in refs {
        let Some(node) = g.node_by_id(r.node) else {
            continue;
        };
        let Some(kind) = edge_kind(r.kind) else {
            continue;
        };
        if r.kind == RefKind::Reference && f.profile.is_self(&r.name) {
            // `self` passed along is the object, not a reference to its class.
            continue;
        }
        let mut outcome = resolver.resolve(node, &r.name);
        // The constructor `super(...)` calls takes the arguments written: where none of the
        // base's does, the one called is not in the repository (Kotlin's primary
        // constructor is no definition of its own).
        let super_call = r.kind == RefKind::Call && f.profile.is_super(&r.name);
        if let (RefKind::Call, Some(args), Outcome::Resolved(targets)) =
            (r.kind, r.module.as_deref(), &mut outcome)
        {
            if super_call {
                overloads::accepting(g, targets, args);
            }
            if targets.is_empty() {
                outcome = Outcome::Unresolved {
                    miss: lookup::Miss::External,
                    candidates: 0,
                };
            } else {
                overloads::narrow(g, targets, args);
            }
        }
        if r.kind == RefKind::Reference && !names_definition(g, f, &outcome) {
            continue;
        }
        let misses = out.misses.len();
        keep(&mut out, r.node, kind, &r.name, r.line, outcome);
        if super_call && out.misses.len() > misses {
            if let Some(m) = out.misses.last_mut() {
                m.key = resolver.unresolved_key(node, &r.name);
            }
        }
    }
    out
}

/// A name passed as a value is usually a plain variable: it counts only when scopes,
/// imports or types find a definition (confidence at least 0.8, never a guess by name). Go
/// and Rust pass every value by name (`f(x, s.conf)`), so there it must also be a function,
/// method or constructor, not a constant.
fn names_definition(g: &Graph, file: &symbols::FileInfo, outcome: &Outcome) -> bool {
    use crate::model::NodeKind;
    let Outcome::Resolved(targets) = outcome else {
        return false;
    };
    let go_or_rust = matches!(
        file.profile.imports,
        rules::ImportStyle::Go | rules::ImportStyle::Rust
    );
    targets.iter().all(|t| {
        t.confidence >= lookup::INFERRED
            && (!go_or_rust
                || matches!(
                    g.node(t.node).kind,
                    NodeKind::Function | NodeKind::Method | NodeKind::Class | NodeKind::Enum
                ))
    })
}

#[allow(clippy::too_many_arguments)]
fn record(
    g: &Graph,
    out: &mut Resolved,
    opts: &ResolveOptions,
    source: i64,
    kind: &'static str,
    name: &str,
    line: u32,
    outcome: Outcome,
) {
    let miss = |reason: &'static str, candidates: usize| MissRow {
        source,
        kind,
        name: name.to_string(),
        key: None,
        reason,
        candidates,
        line,
    };
    match outcome {
        Outcome::Resolved(targets) => {
            let (kept, low): (Vec<Found>, Vec<Found>) = targets
                .into_iter()
                .partition(|t| t.confidence as f64 + 1e-9 >= opts.min_confidence);
            if kept.is_empty() {
                out.misses.push(miss("low_confidence", low.len()));
            }
            for t in kept {
                out.edges.push(EdgeRow {
                    source,
                    target: g.node(t.node).id,
                    kind,
                    confidence: round(t.confidence),
                    strategy: t.strategy,
                    line,
                });
            }
        }
        Outcome::Unresolved {
            miss: m,
            candidates,
        } => out.misses.push(miss(m.as_str(), candidates)),
    }
}

/// Confidences are stored with three decimals: `0.5 / 3` prints as 0.167 everywhere.
fn round(c: f32) -> f64 {
    (c as f64 * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn scope_query_and_index_pick_file_nodes_by_the_ordinal_bits() {
        let literal = format!("node_id % {} = 0", 1i64 << crate::ids::ORDINAL_BITS);
        for sql in [
            include_str!("../../migrations/0002_call_graph.sql"),
            include_str!("../../migrations/0003_scope_index.sql"),
            super::SCOPE_REFS_QUERY,
        ] {
            assert!(sql.contains(&literal), "{literal:?} missing from {sql}");
        }
    }
}
