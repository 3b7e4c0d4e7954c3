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
pub use symbols::NodePrefetch;

/// Whether `name` is one of the language's own functions or types (never a repository
/// definition when written bare).
pub fn is_builtin(language: &str, name: &str) -> bool {
    rules::profile(language).is_builtin(name)
}

use crate::model::{RawRef, RefKind};
use crate::resolve::changes::Changes;
use crate::store::rows::{text, RowInserter};
use anyhow::Result;
use lookup::{Found, Local, Outcome, Resolver};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Condvar, Mutex};
use symbols::{Graph, Idx};

macro_rules! scope_refs_select {
    () => {
        "SELECT node_id, kind, name, module, alias, line FROM refs"
    };
}

macro_rules! scope_refs_condition {
    () => {
        "kind = 'import' OR kind = 'field' OR kind = 'inherits' OR kind = 'implements' \
         OR (kind = 'local' AND module IS NOT NULL AND node_id % 524288 = 0)"
    };
}

/// Every file's imports, member types and bases, and the typed variables at its top level (a
/// file node's ordinal is 0): the rows of the partial index `refs_scope`, whose condition this
/// repeats so that only those rows are read.
pub(crate) const SCOPE_REFS_QUERY: &str = concat!(
    scope_refs_select!(),
    " WHERE ",
    scope_refs_condition!(),
    " ORDER BY node_id, seq"
);

/// The rows of `SCOPE_REFS_QUERY` of the nodes `?1..?2` (one file's).
pub(crate) const SCOPE_REFS_OF_NODES: &str = concat!(
    scope_refs_select!(),
    " WHERE node_id >= ?1 AND node_id < ?2 AND (",
    scope_refs_condition!(),
    ") ORDER BY node_id, seq"
);

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

/// One file's reference sites, loaded for resolution: rows of fixed size, their texts in
/// one string (about half the memory of a row holding its own strings, so that a full build
/// keeps about twice the sites in memory; on the Linux kernel not all of them fit).
#[derive(Default)]
struct FileSites {
    rows: Vec<SiteRow>,
    text: String,
}

struct SiteRow {
    node: i64,
    /// `name` is `text[start..start + name_len]`, and `module` follows it.
    start: usize,
    name_len: u32,
    /// `NO_MODULE` when the site has none.
    module_len: u32,
    line: u32,
    kind: RefKind,
}

const NO_MODULE: u32 = u32::MAX;

/// A reference site, as `FileSites` holds it.
struct Site<'a> {
    node: i64,
    kind: RefKind,
    name: &'a str,
    module: Option<&'a str>,
    line: u32,
}

impl FileSites {
    fn push(&mut self, site: Site) {
        let start = self.text.len();
        let name = fitting(site.name);
        self.text.push_str(name);
        let module_len = match site.module.map(fitting) {
            Some(module) => {
                self.text.push_str(module);
                module.len() as u32
            }
            None => NO_MODULE,
        };
        self.rows.push(SiteRow {
            node: site.node,
            start,
            name_len: name.len() as u32,
            module_len,
            line: site.line,
            kind: site.kind,
        });
    }

    fn iter(&self) -> impl Iterator<Item = Site<'_>> {
        self.rows.iter().map(|r| {
            let name_end = r.start + r.name_len as usize;
            Site {
                node: r.node,
                kind: r.kind,
                name: &self.text[r.start..name_end],
                module: (r.module_len != NO_MODULE)
                    .then(|| &self.text[name_end..name_end + r.module_len as usize]),
                line: r.line,
            }
        })
    }

    /// Roughly the memory the sites hold.
    fn bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<SiteRow>() + self.text.capacity()
    }
}

/// `text`, or its start if its length would not fit a row (never for real sites: they are
/// parts of a file's text, at most 1 GiB).
fn fitting(text: &str) -> &str {
    let mut end = text.len().min(NO_MODULE as usize - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The reference sites resolution reads, by file id, as extraction produced them: a full
/// build keeps them in memory as it writes them, so resolution need not read them back, up to
/// `SITES_BYTES`. Files arrive in id order; from the first that would exceed the budget on,
/// none is kept, and those are read back from the database.
pub struct Sites {
    by_file: HashMap<i64, FileSites>,
    bytes: usize,
    budget: usize,
    /// The first file not kept, once the budget is spent.
    kept_below: Option<i64>,
}

impl Default for Sites {
    fn default() -> Self {
        Sites::with_budget(SITES_BYTES)
    }
}

/// The memory the sites kept for resolution may take (an estimate): all of most
/// repositories' (Django's take about 25 MB), a part of the Linux kernel's 8 million.
const SITES_BYTES: usize = 128 << 20;

impl Sites {
    fn with_budget(budget: usize) -> Self {
        Sites {
            by_file: HashMap::new(),
            bytes: 0,
            budget,
            kept_below: None,
        }
    }

    /// Keeps the sites of the file `file_id` that `load_refs` would read back, in its order;
    /// files must come in id order.
    pub fn keep(&mut self, file_id: i64, refs: Vec<RawRef>) {
        if self.kept_below.is_some() {
            return;
        }
        let base = file_id << crate::ids::ORDINAL_BITS;
        let mut sites = FileSites::default();
        // By node, then by position in the file (a stable sort): the refs table's key order.
        let mut order: Vec<&RawRef> = refs.iter().filter(|r| is_site(r.kind)).collect();
        order.sort_by_key(|r| r.node);
        sites.rows.reserve_exact(order.len());
        sites.text.reserve_exact(
            order
                .iter()
                .map(|r| r.name.len() + r.module.as_ref().map_or(0, String::len))
                .sum(),
        );
        for r in order {
            sites.push(Site {
                node: base + r.node as i64,
                kind: r.kind,
                name: &r.name,
                module: r.module.as_deref(),
                line: r.line,
            });
        }
        self.bytes += sites.bytes();
        if self.bytes > self.budget {
            self.kept_below = Some(file_id);
            return;
        }
        if !sites.rows.is_empty() {
            self.by_file.insert(file_id, sites);
        }
    }

    /// Whether the sites of file `file_id` are here (a file without any has none to keep).
    fn has(&self, file_id: i64) -> bool {
        self.kept_below.is_none_or(|f| file_id < f)
    }
}

/// Resolves every file (`changes` is `None`) or the files an incremental change affects,
/// reading their reference sites from the database.
pub fn resolve(
    conn: &Connection,
    changes: Option<&Changes>,
    opts: &ResolveOptions,
    prefetched: Option<(NodePrefetch, &BTreeSet<i64>)>,
) -> Result<ResolveStats> {
    let (g, files) = prepare(conn, changes, opts, prefetched)?;
    // Re-resolved within a scope, most files find what they found before: their rows are
    // compared with the results and replaced only where these differ.
    let stored = changes.is_some();
    resolve_files(conn, &g, &files, Vec::new(), stored, opts, || Ok(()))
}

/// A full build's resolution of every file, from the sites extraction kept in memory, while
/// this thread runs `meanwhile` (which must not touch `edges` or `unresolved`).
pub fn resolve_all_while(
    conn: &Connection,
    mut sites: Sites,
    opts: &ResolveOptions,
    meanwhile: impl FnOnce() -> Result<()>,
) -> Result<ResolveStats> {
    let (g, files) = prepare(conn, None, opts, None)?;
    // The files whose sites are in memory come first (ids ascending).
    let in_memory = files.partition_point(|&f| sites.has(g.file(f).id));
    let kept = files[..in_memory]
        .iter()
        .map(|&f| sites.by_file.remove(&g.file(f).id).unwrap_or_default())
        .collect();
    drop(sites);
    resolve_files(conn, &g, &files, kept, false, opts, meanwhile)
}

/// Resolves `files` on worker threads, the first of them from `kept` sites. This thread,
/// which alone uses the connection, runs `meanwhile`, then reads the other files' sites a
/// bounded number of files ahead and stores the results in the files' order: the order of
/// the database's writes does not depend on which thread finished first. With `stored`, the
/// files' earlier results are still in the database, and are replaced where they differ.
fn resolve_files(
    conn: &Connection,
    g: &Graph,
    files: &[Idx],
    kept: Vec<FileSites>,
    stored: bool,
    opts: &ResolveOptions,
    meanwhile: impl FnOnce() -> Result<()>,
) -> Result<ResolveStats> {
    let mut store = Store::new(conn, files.len(), stored)?;
    let mut loaded = kept.len();
    let shelf = Shelf::new(kept, files.len());
    // While it runs `meanwhile`, this thread keeps a core to itself.
    let jobs = opts.jobs.max(1);
    shelf.allow((jobs - 1).max(1));
    std::thread::scope(|scope| {
        // Set however this thread leaves the scope (an error, a panic): waiting workers stop.
        let _stop = shelf.stop_on_drop();
        for _ in 0..jobs {
            let shelf = &shelf;
            scope.spawn(move || {
                let resolving = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    while let Some((i, refs)) = shelf.next_to_resolve() {
                        shelf.put(i, resolve_guarded(g, files[i], &refs, opts));
                    }
                }));
                if resolving.is_err() {
                    shelf.stop();
                }
            });
        }
        meanwhile()?;
        shelf.allow(jobs);
        for i in 0..files.len() {
            while loaded < files.len() && loaded - i < FILES_IN_FLIGHT {
                shelf.provide(load_refs(conn, g.file(files[loaded]).id)?);
                loaded += 1;
            }
            let resolved = shelf
                .take(i)
                .ok_or_else(|| anyhow::anyhow!("a resolution thread stopped"))?;
            store.put(g.file(files[i]).id, resolved)?;
        }
        Ok(store.stats)
    })
}

/// Files whose sites are read but not yet stored: bounds the sites held in memory.
const FILES_IN_FLIGHT: usize = 256;

/// Loads the graph and clears what resolution will write again: every edge but `contains`
/// rewritten for a full build, the affected files' edges and unresolved sites otherwise.
/// Returns the graph and the files to resolve.
fn prepare(
    conn: &Connection,
    changes: Option<&Changes>,
    opts: &ResolveOptions,
    prefetched: Option<(NodePrefetch, &BTreeSet<i64>)>,
) -> Result<(Graph, Vec<Idx>)> {
    let mut g = Graph::load(conn, prefetched)?;
    includes(&mut g);
    hierarchy(&mut g, opts.fuzzy_limit, opts.jobs);
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
            files
        }
    };
    Ok((g, files))
}

/// Writes resolution's results and counts them.
struct Store<'c> {
    conn: &'c Connection,
    edges: RowInserter<'c, 6>,
    misses: RowInserter<'c, 7>,
    /// Each file's earlier results are in the database: rows are replaced only where the
    /// new ones differ (re-resolved dependents mostly find what they found before).
    stored: bool,
    stats: ResolveStats,
}

/// An edge as compared with the stored ones (the confidence by its bits).
type EdgeKey<S> = (i64, i64, S, u64, S, i64);
/// An unresolved site as compared with the stored ones.
type MissKey<S> = (i64, S, S, S, S, i64, i64);

impl<'c> Store<'c> {
    fn new(conn: &'c Connection, files: usize, stored: bool) -> Result<Self> {
        Ok(Store {
            conn,
            edges: RowInserter::new(
                conn,
                "edges",
                [
                    "source_id",
                    "target_id",
                    "kind",
                    "confidence",
                    "strategy",
                    "line",
                ],
            ),
            misses: RowInserter::new(
                conn,
                "unresolved",
                [
                    "source_id",
                    "kind",
                    "name",
                    "key",
                    "reason",
                    "candidates",
                    "line",
                ],
            ),
            stored,
            stats: ResolveStats {
                files,
                ..Default::default()
            },
        })
    }

    /// Stores the results `r` of file `file`.
    fn put(&mut self, file: i64, r: Resolved) -> Result<()> {
        self.stats.edges += r.edges.len();
        self.stats.unresolved += r.misses.len();
        let range = crate::ids::node_range(file);
        let edges_kept = self.stored
            && self.kept(
                "SELECT source_id, target_id, kind, confidence, strategy, line FROM edges \
                 WHERE source_id >= ?1 AND source_id < ?2 AND kind <> 'contains'",
                "DELETE FROM edges WHERE source_id >= ?1 AND source_id < ?2 \
                 AND kind <> 'contains'",
                range,
                r.edges.iter().map(edge_key).collect(),
                |r| {
                    let confidence: f64 = r.get(3)?;
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        confidence.to_bits(),
                        r.get(4)?,
                        r.get(5)?,
                    ))
                },
                |s: &EdgeKey<String>, n| (s.0, s.1, &*s.2, s.3, &*s.4, s.5) == *n,
            )?;
        if !edges_kept {
            self.edges.insert(r.edges.iter(), |e| {
                [
                    ValueRef::Integer(e.source),
                    ValueRef::Integer(e.target),
                    text(e.kind),
                    ValueRef::Real(e.confidence),
                    text(e.strategy),
                    ValueRef::Integer(e.line.into()),
                ]
            })?;
        }
        let misses_kept = self.stored
            && self.kept(
                "SELECT source_id, kind, name, key, reason, candidates, line FROM unresolved \
                 WHERE source_id >= ?1 AND source_id < ?2",
                "DELETE FROM unresolved WHERE source_id >= ?1 AND source_id < ?2",
                range,
                r.misses.iter().map(miss_key).collect(),
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ))
                },
                |s: &MissKey<String>, n| (s.0, &*s.1, &*s.2, &*s.3, &*s.4, s.5, s.6) == *n,
            )?;
        if !misses_kept {
            self.misses.insert(r.misses.iter(), |m| {
                let (source, kind, name, key, reason, candidates, line) = miss_key(m);
                [
                    ValueRef::Integer(source),
                    text(kind),
                    text(name),
                    text(key),
                    text(reason),
                    ValueRef::Integer(candidates),
                    ValueRef::Integer(line),
                ]
            })?;
        }
        Ok(())
    }

    /// Whether the rows `select` reads for the nodes `lo..hi` (each by `read`) are `new`, in
    /// any order (`same` compares a stored row with a new one): then they stay; otherwise
    /// `delete` removes them, for the new ones to be inserted.
    fn kept<Stored: Ord, New: Ord>(
        &self,
        select: &str,
        delete: &str,
        (lo, hi): (i64, i64),
        mut new: Vec<New>,
        read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<Stored>,
        same: impl Fn(&Stored, &New) -> bool,
    ) -> Result<bool> {
        let mut stored: Vec<Stored> = self
            .conn
            .prepare_cached(select)?
            .query_map([lo, hi], read)?
            .collect::<rusqlite::Result<_>>()?;
        stored.sort_unstable();
        new.sort_unstable();
        let equal = stored.len() == new.len() && stored.iter().zip(&new).all(|(s, n)| same(s, n));
        if !equal {
            self.conn.prepare_cached(delete)?.execute([lo, hi])?;
        }
        Ok(equal)
    }
}

fn edge_key(e: &EdgeRow) -> EdgeKey<&str> {
    (
        e.source,
        e.target,
        e.kind,
        e.confidence.to_bits(),
        e.strategy,
        e.line.into(),
    )
}

/// An unresolved site's columns as stored (its key is its written name's last one unless
/// given).
fn miss_key(m: &MissRow) -> MissKey<&str> {
    let key = m
        .key
        .as_deref()
        .unwrap_or_else(|| last_name(&m.name).trim_end_matches('!'));
    (
        m.source,
        m.kind,
        &m.name,
        key,
        m.reason,
        m.candidates as i64,
        m.line.into(),
    )
}

/// The files' sites and their results, by file position, between the thread that reads
/// and stores and the resolution workers. Sites are provided in file order; workers take
/// files in order, at most `limit` at a time, and pause while the results waiting exceed
/// `SHELF_BYTES`: the files before them are then all taken, so the one the storing thread
/// waits for is always on its way.
struct Shelf {
    state: Mutex<ShelfState>,
    /// Workers wait here for a file they may take.
    for_workers: Condvar,
    /// The storing thread waits here for the results of the file it stores next.
    for_storer: Condvar,
}

struct ShelfState {
    /// Each file's sites until a worker takes them; the first `sites.len()` are provided.
    sites: Vec<FileSites>,
    next: usize,
    /// Each file's results and their size (`Resolved::bytes`), until stored.
    results: Vec<Option<(Resolved, usize)>>,
    bytes: usize,
    /// Files being resolved, and how many may be.
    working: usize,
    limit: usize,
    stopped: bool,
    /// Whom a change may concern: each side is woken only when it waits for what changed,
    /// since every wake-up is a system call and a contended lock (on Django, waking
    /// everyone at every change cost some 20,000 futex calls while resolution ran).
    workers_waiting: usize,
    storer_waits_for: Option<usize>,
}

/// The most memory results may hold while they wait to be stored (an estimate): a full
/// build of the Linux kernel resolves some 7 million sites, and while the storing thread
/// builds the other indexes (9 s on the kernel) nothing is stored. With 128 MB its
/// resolution stopped for most of that time (1.4 cores busy instead of 1.75); the peak did
/// not move (it comes earlier, while the graph loads beside the word indexes).
const SHELF_BYTES: usize = 256 << 20;

impl Shelf {
    /// `sites` of the first files, of `files` in all.
    fn new(sites: Vec<FileSites>, files: usize) -> Self {
        Shelf {
            state: Mutex::new(ShelfState {
                sites,
                next: 0,
                results: (0..files).map(|_| None).collect(),
                bytes: 0,
                working: 0,
                limit: 1,
                stopped: false,
                workers_waiting: 0,
                storer_waits_for: None,
            }),
            for_workers: Condvar::new(),
            for_storer: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ShelfState> {
        // A worker that panicked holding the lock changed nothing half-way: go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the workers, if any waits.
    fn wake_workers(&self, s: &ShelfState) {
        if s.workers_waiting > 0 {
            self.for_workers.notify_all();
        }
    }

    /// The next file for a worker and its sites, once they are provided and there is room;
    /// `None` when all are taken or the run stopped.
    fn next_to_resolve(&self) -> Option<(usize, FileSites)> {
        let mut s = self.lock();
        loop {
            if s.stopped || s.next == s.results.len() {
                return None;
            }
            if s.next < s.sites.len() && s.working < s.limit && s.bytes <= SHELF_BYTES {
                break;
            }
            s.workers_waiting += 1;
            s = self.for_workers.wait(s).unwrap_or_else(|e| e.into_inner());
            s.workers_waiting -= 1;
        }
        let i = s.next;
        s.next += 1;
        s.working += 1;
        if s.next == s.results.len() {
            // Nothing left to take: the workers still waiting can finish.
            self.wake_workers(&s);
        }
        Some((i, std::mem::take(&mut s.sites[i])))
    }

    /// The sites of the next file.
    fn provide(&self, sites: FileSites) {
        let mut s = self.lock();
        s.sites.push(sites);
        self.wake_workers(&s);
    }

    /// Lets `limit` files be resolved at a time.
    fn allow(&self, limit: usize) {
        let mut s = self.lock();
        s.limit = limit;
        self.wake_workers(&s);
    }

    /// A worker's results for file `i`. Its slot is free again, but it takes the next file
    /// itself: nobody else needs waking for that.
    fn put(&self, i: usize, r: Resolved) {
        let bytes = r.bytes();
        let mut s = self.lock();
        s.working -= 1;
        s.bytes += bytes;
        s.results[i] = Some((r, bytes));
        if s.storer_waits_for == Some(i) {
            self.for_storer.notify_one();
        }
    }

    /// Waits for file `i`'s results; `None` if the run stopped first.
    fn take(&self, i: usize) -> Option<Resolved> {
        let mut s = self.lock();
        loop {
            if let Some((r, bytes)) = s.results[i].take() {
                let over = s.bytes > SHELF_BYTES;
                s.bytes -= bytes;
                if over && s.bytes <= SHELF_BYTES {
                    self.wake_workers(&s);
                }
                return Some(r);
            }
            if s.stopped {
                return None;
            }
            s.storer_waits_for = Some(i);
            s = self.for_storer.wait(s).unwrap_or_else(|e| e.into_inner());
            s.storer_waits_for = None;
        }
    }

    /// Stops the run: no file is taken any more, and nobody waits for one.
    fn stop(&self) {
        self.lock().stopped = true;
        self.for_workers.notify_all();
        self.for_storer.notify_all();
    }

    /// Stops the run when dropped.
    fn stop_on_drop(&self) -> impl Drop + '_ {
        struct Stop<'a>(&'a Shelf);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.stop();
            }
        }
        Stop(self)
    }
}

impl Resolved {
    /// Roughly the memory the results hold.
    fn bytes(&self) -> usize {
        self.edges.len() * std::mem::size_of::<EdgeRow>()
            + self
                .misses
                .iter()
                .map(|m| {
                    std::mem::size_of::<MissRow>()
                        + m.name.len()
                        + m.key.as_ref().map_or(0, String::len)
                })
                .sum::<usize>()
    }
}

/// C and C++: which files each file includes, and the implementation beside each header,
/// resolved once for the translation-unit lookups of every file.
fn includes(g: &mut Graph) {
    if !g.files.iter().any(|f| f.profile.translation_units()) {
        return;
    }
    let (includes, implementation) = {
        let r = Resolver::new(g, 0, FxHashMap::default());
        let mut includes = Vec::with_capacity(g.files.len());
        let mut implementation = FxHashMap::default();
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
    let mut included_by: FxHashMap<Idx, Vec<Idx>> = FxHashMap::default();
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
/// The base references are split among `jobs` threads in contiguous runs (each lookup
/// reads only the graph) and their outcomes gathered in order, as one thread would.
fn hierarchy(g: &mut Graph, fuzzy_limit: usize, jobs: usize) {
    // A base's types, or None when it names nothing in the repository.
    let resolve_run = |refs: &[symbols::BaseRef]| -> Vec<Option<Vec<Idx>>> {
        let r = Resolver::new(g, fuzzy_limit, FxHashMap::default());
        refs.iter()
            .map(|b| match r.resolve(b.node, &b.name) {
                Outcome::Resolved(targets) => Some(
                    targets
                        .into_iter()
                        .filter(|t| t.node != b.node && g.node(t.node).kind.is_type_like())
                        .map(|t| t.node)
                        .collect(),
                ),
                Outcome::Unresolved { .. } => None,
            })
            .collect()
    };
    let refs = &g.base_refs;
    let run = refs.len().div_ceil(jobs.max(1)).max(MIN_BASES_PER_THREAD);
    let outcomes: Vec<Option<Vec<Idx>>> = if refs.len() <= run {
        resolve_run(refs)
    } else {
        std::thread::scope(|scope| {
            let runs: Vec<_> = refs
                .chunks(run)
                .map(|chunk| scope.spawn(move || resolve_run(chunk)))
                .collect();
            runs.into_iter()
                .flat_map(|h| h.join().expect("a hierarchy thread panicked"))
                .collect()
        })
    };
    let mut bases: FxHashMap<Idx, Vec<Idx>> = FxHashMap::default();
    let mut external = FxHashSet::default();
    for (b, outcome) in g.base_refs.iter().zip(outcomes) {
        match outcome {
            Some(types) => bases.entry(b.node).or_default().extend(types),
            None => {
                external.insert(b.node);
            }
        }
    }
    g.bases = bases;
    g.external_bases = external;
}

/// Fewer base references than this are resolved on the calling thread: starting a thread
/// costs more than they take.
const MIN_BASES_PER_THREAD: usize = 512;

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

/// The kinds of reference site resolution reads (the rest describe scopes: `SCOPE_REFS_QUERY`).
fn is_site(kind: RefKind) -> bool {
    matches!(
        kind,
        RefKind::Call | RefKind::Reference | RefKind::Decorator | RefKind::Local
    )
}

/// The sites of one file that `is_site` selects, by node and then position.
fn load_refs(conn: &Connection, file_id: i64) -> Result<FileSites> {
    let (lo, hi) = crate::ids::node_range(file_id);
    // The kinds as `=` terms: an `IN (...)` list makes SQLite fill a temporary table at every
    // execution, and this runs once per file.
    let mut q = conn.prepare_cached(
        "SELECT node_id, kind, name, module, line FROM refs \
         WHERE node_id >= ?1 AND node_id < ?2 \
         AND (kind = 'call' OR kind = 'reference' OR kind = 'decorator' OR kind = 'local') \
         ORDER BY node_id, seq",
    )?;
    let mut sites = FileSites::default();
    let mut rows = q.query([lo, hi])?;
    while let Some(r) = rows.next()? {
        sites.push(Site {
            node: r.get(0)?,
            kind: RefKind::parse(r.get_ref(1)?.as_str()?).unwrap_or(RefKind::Call),
            name: r.get_ref(2)?.as_str()?,
            module: r.get_ref(3)?.as_str_or_null()?,
            line: r.get(4)?,
        });
    }
    Ok(sites)
}

/// `resolve_file`, except that a defect (a panic) does not stop the run: the file's
/// reference sites are all kept as unresolved with the reason `error`, so the gap shows.
fn resolve_guarded(g: &Graph, file: Idx, refs: &FileSites, opts: &ResolveOptions) -> Resolved {
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
                    name: r.name.to_string(),
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
fn resolve_file(g: &Graph, file: Idx, refs: &FileSites, opts: &ResolveOptions) -> Resolved {
    let mut locals: FxHashMap<Idx, Vec<Local>> = FxHashMap::default();
    for r in refs.iter().filter(|r| r.kind == RefKind::Local) {
        if let Some(node) = g.node_by_id(r.node) {
            locals.entry(node).or_default().push(Local {
                name: r.name.into(),
                type_text: r.module.map(Into::into),
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
    for r in refs.iter() {
        let Some(node) = g.node_by_id(r.node) else {
            continue;
        };
        let Some(kind) = edge_kind(r.kind) else {
            continue;
        };
        if r.kind == RefKind::Reference && f.profile.is_self(r.name) {
            // `self` passed along is the object, not a reference to its class.
            continue;
        }
        let mut outcome = resolver.resolve(node, r.name);
        // The constructor `super(...)` calls takes the arguments written: where none of the
        // base's does, the one called is not in the repository (Kotlin's primary
        // constructor is no definition of its own).
        let super_call = r.kind == RefKind::Call && f.profile.is_super(r.name);
        if let (RefKind::Call, Some(args), Outcome::Resolved(targets)) =
            (r.kind, r.module, &mut outcome)
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
        keep(&mut out, r.node, kind, r.name, r.line, outcome);
        if super_call && out.misses.len() > misses {
            if let Some(m) = out.misses.last_mut() {
                m.key = resolver.unresolved_key(node, r.name);
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
    use super::*;

    /// The compact sites give back what was pushed, in order, names and modules apart.
    #[test]
    fn file_sites_keep_each_site_as_given() {
        let given = [
            (7, RefKind::Call, "self.save", None, 3),
            (7, RefKind::Local, "m", Some("Model"), 4),
            (9, RefKind::Reference, "café.über", Some(""), 5),
            (9, RefKind::Decorator, "", None, 6),
        ];
        let mut sites = FileSites::default();
        for (node, kind, name, module, line) in given {
            sites.push(Site {
                node,
                kind,
                name,
                module,
                line,
            });
        }
        let back: Vec<_> = sites
            .iter()
            .map(|s| (s.node, s.kind, s.name, s.module, s.line))
            .collect();
        assert_eq!(back, given);
        assert_eq!(fitting("é"), "é");
    }

    #[test]
    fn base_types_resolved_on_several_threads_equal_one_threads() {
        // Enough bases for several runs of `MIN_BASES_PER_THREAD`: in-repository bases, one
        // named through an import, and bases from outside the repository.
        let mut models =
            String::from("from shop.base import Root\n\nclass Base0(Root):\n    pass\n");
        for i in 1..1500 {
            let base = match i % 3 {
                0 => format!("Base{}", i - 1),
                1 => "Root, Base0".to_string(),
                _ => "external.Missing".to_string(),
            };
            models.push_str(&format!("\nclass Base{i}({base}):\n    pass\n"));
        }
        let files = [
            ("shop/base.py", "class Root:\n    pass\n".to_string()),
            ("shop/models.py", models),
        ];
        let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
        let (dir, _) = crate::index::test_fixture(&files);
        let conn =
            crate::store::open(&dir.path().join("index.db"), crate::store::Mode::ReadOnly).unwrap();
        let with_jobs = |jobs| {
            let mut g = Graph::load(&conn, None).unwrap();
            assert!(g.base_refs.len() > 2 * MIN_BASES_PER_THREAD);
            hierarchy(&mut g, 5, jobs);
            let mut bases: Vec<(Idx, Vec<Idx>)> = g.bases.into_iter().collect();
            bases.sort_unstable();
            let mut external: Vec<Idx> = g.external_bases.into_iter().collect();
            external.sort_unstable();
            (bases, external)
        };
        let (bases, external) = with_jobs(1);
        assert!(bases.iter().filter(|(_, b)| b.len() == 2).count() >= 499);
        assert_eq!(external.len(), 500);
        for jobs in [2, 3, 7] {
            assert_eq!(
                with_jobs(jobs),
                (bases.clone(), external.clone()),
                "{jobs} threads"
            );
        }
    }

    /// A full build's resolution from sites kept in memory, all, some or none of them (read
    /// back from the database), stores what resolution from the database does, row for row.
    #[test]
    fn sites_from_memory_or_the_database_resolve_alike() {
        let files = [
            ("app/models.py", "class Model:\n    def save(self):\n        return self.clean()\n    def clean(self):\n        return helper()\n\ndef helper():\n    return Model().save()\n"),
            ("app/views.py", "from app.models import Model, helper\n\n@decorate\ndef view(request):\n    m = Model()\n    m.save()\n    return helper(request, missing())\n"),
            ("lib/util.go", "package util\n\nfunc Helper() int { return Other() }\n\nfunc Other() int { return 1 }\n"),
            ("src/main.c", "#include \"util.h\"\nstatic int twice(int x) { return x * 2; }\nint main(void) { return twice(util()); }\n"),
            ("src/util.h", "int util(void);\n"),
            ("web/app.ts", "import { render } from './view';\nexport function start(): void { render(); missing(); }\n"),
            ("web/view.ts", "export function render(): void { start(); }\nimport { start } from './app';\n"),
        ];
        let (dir, _) = crate::index::test_fixture(&files);
        let db = dir.path().join("index.db");
        let conn = crate::store::open(&db, crate::store::Mode::ReadWrite).unwrap();
        let opts = ResolveOptions {
            min_confidence: 0.0,
            fuzzy_limit: 5,
            jobs: 2,
        };
        let rows = |conn: &Connection| -> Vec<String> {
            let mut q = conn
                .prepare(
                    "SELECT rowid || ' ' || source_id || ' ' || target_id || ' ' || kind || ' ' \
                     || confidence || ' ' || strategy || ' ' || line FROM edges \
                     UNION ALL SELECT rowid || ' ' || source_id || ' ' || kind || ' ' || name \
                     || ' ' || key || ' ' || reason || ' ' || candidates || ' ' || line \
                     FROM unresolved",
                )
                .unwrap();
            q.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let from_database = resolve(&conn, None, &opts, None).unwrap();
        let expected = rows(&conn);
        assert!(from_database.edges > 10 && from_database.unresolved > 0);
        let mut by_id: Vec<(i64, &str, &str)> = files
            .iter()
            .map(|(p, t)| (crate::ids::file_id(p), *p, *t))
            .collect();
        by_id.sort();
        let mut kept_counts = Vec::new();
        for budget in [usize::MAX, 600, 0] {
            let mut sites = Sites::with_budget(budget);
            for (id, path, text) in &by_id {
                let extract = crate::lang::extract::extract_file(path, text).unwrap();
                sites.keep(*id, extract.refs);
            }
            let kept = sites.by_file.len();
            kept_counts.push(kept);
            let ran = std::cell::Cell::new(false);
            let stats = resolve_all_while(&conn, sites, &opts, || {
                ran.set(true);
                Ok(())
            })
            .unwrap();
            assert!(ran.get());
            assert_eq!(
                (stats.edges, stats.unresolved),
                (from_database.edges, from_database.unresolved)
            );
            assert_eq!(rows(&conn), expected, "budget {budget}, {kept} files kept");
        }
        // All of them, some, none.
        assert!(kept_counts[0] > kept_counts[1] && kept_counts[1] > 0 && kept_counts[2] == 0);
    }

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
