//! The repository-wide symbol tables resolution consults: every file with its module, every
//! definition with its qualified name, the imports and member types of every file, and the
//! class hierarchy. Loaded from the database in a few sequential scans.

use super::overloads::{self, Params};
use super::rules::{self, Profile};
use crate::ids::{base_name, file_of, node_range};
use crate::model::{NodeKind, RefKind};
use anyhow::Result;
use rusqlite::Connection;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;

pub type Idx = u32;

pub struct FileInfo {
    pub id: i64,
    pub path: Box<str>,
    pub profile: &'static Profile,
    pub module: Box<str>,
    /// `hash(module)`, for `Graph::module_members`.
    module_hash: u64,
    /// The file's own node (kind File).
    pub node: Option<Idx>,
    pub imports: Vec<Import>,
}

/// One import as extracted: `from module import name as alias`.
pub struct Import {
    pub module: Box<str>,
    /// The imported item; empty for the whole module, `*` for all of it.
    pub name: Box<str>,
    pub alias: Option<Box<str>>,
    /// The node the import is written in (a file node, or a function for local imports).
    pub node: Idx,
    pub line: u32,
}

/// A base type named by a definition (`class A(B)`, `implements I`).
pub struct BaseRef {
    pub node: Idx,
    pub name: Box<str>,
    pub implements: bool,
    pub line: u32,
}

pub struct NodeInfo {
    pub id: i64,
    pub file: Idx,
    pub kind: NodeKind,
    pub parent: Option<Idx>,
    pub name: Box<str>,
    /// The qualified name without its `#k` uniqueness suffix.
    pub qn: Box<str>,
    /// `hash(qn)`: member lookups extend it instead of hashing the qualifier again.
    qn_hash: u64,
    /// The parameters of a method, which choose among overloads; read for languages with
    /// declared types (Java, Kotlin, C#).
    pub params: Option<Box<Params>>,
}

/// A member variable with a declared or inferred type (`self.session = Session()`).
pub struct Field {
    pub type_text: Box<str>,
    /// The node where the type is written: types resolve in that node's scope.
    pub node: Idx,
}

/// Strings looked up by a 64-bit hash, kept as one sorted vector: compact for millions of
/// names, and every hit is checked against the real string by the caller. A directory by the
/// hash's top bits finds a key's run in two reads, where a binary search over a vector larger
/// than the CPU caches would miss the cache at almost every step.
#[derive(Default)]
pub struct HashIndex {
    entries: Vec<(u64, Idx)>,
    /// `entries[starts[b]..starts[b + 1]]` holds the hashes whose top `bits` bits are `b`.
    starts: Vec<u32>,
    bits: u32,
}

impl HashIndex {
    fn push(&mut self, key: &str, idx: Idx) {
        self.push_hashed(hash(key), idx);
    }

    fn push_hashed(&mut self, key_hash: u64, idx: Idx) {
        self.entries.push((key_hash, idx));
    }

    fn seal(&mut self) {
        self.entries.sort_unstable();
        self.entries.dedup();
        // About one entry per bucket.
        self.bits = self
            .entries
            .len()
            .next_power_of_two()
            .trailing_zeros()
            .max(1);
        let buckets = 1usize << self.bits;
        self.starts = Vec::with_capacity(buckets + 1);
        let mut next = 0;
        for b in 0..buckets {
            while next < self.entries.len() && self.bucket(self.entries[next].0) < b {
                next += 1;
            }
            self.starts.push(next as u32);
        }
        self.starts.push(self.entries.len() as u32);
    }

    fn bucket(&self, h: u64) -> usize {
        (h >> (64 - self.bits)) as usize
    }

    /// Candidates for `key` (hash matches; callers compare the strings).
    pub fn get(&self, key: &str) -> impl Iterator<Item = Idx> + '_ {
        self.get_hash(hash(key))
    }

    fn get_hash(&self, h: u64) -> impl Iterator<Item = Idx> + '_ {
        let run = match self.starts.get(self.bucket(h)..self.bucket(h) + 2) {
            Some(&[lo, hi]) => &self.entries[lo as usize..hi as usize],
            _ => &[],
        };
        run.iter()
            .skip_while(move |&&(k, _)| k < h)
            .take_while(move |&&(k, _)| k == h)
            .map(|&(_, i)| i)
    }
}

/// FNV-1a: fast, and good enough with the string check behind it.
pub fn hash(s: &str) -> u64 {
    hash_more(FNV_OFFSET, s)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues a hash with more text: `hash_more(hash("a"), ".b") == hash("a.b")`.
fn hash_more(mut h: u64, s: &str) -> u64 {
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Rows on their way from the thread reading them to the one using them: each row's three
/// texts are copied into one buffer per batch instead of a string each, and its other
/// columns (`Fixed`, which also tells which texts are NULL) kept beside where they end.
struct Batch<Fixed> {
    text: String,
    rows: Vec<(Fixed, [u32; 3])>,
}

/// Rows per batch, and the length of text past which a batch goes at once (which also keeps
/// every offset within a `u32`: SQLite returns no text over 10^9 bytes, and a row has three).
const NODE_BATCH: usize = 1024;
const NODE_BATCH_TEXT: usize = 1 << 20;

impl<Fixed> Default for Batch<Fixed> {
    fn default() -> Self {
        Batch {
            text: String::new(),
            rows: Vec::new(),
        }
    }
}

impl<Fixed: Copy> Batch<Fixed> {
    fn is_full(&self) -> bool {
        self.rows.len() == NODE_BATCH || self.text.len() > NODE_BATCH_TEXT
    }

    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn push(&mut self, fixed: Fixed, texts: [&str; 3]) {
        let ends = texts.map(|t| {
            self.text.push_str(t);
            self.text.len() as u32
        });
        self.rows.push((fixed, ends));
    }

    /// The rows as they were pushed.
    fn iter(&self) -> impl Iterator<Item = (Fixed, [&str; 3])> {
        let mut start = 0;
        self.rows.iter().map(move |&(fixed, ends)| {
            let texts = ends.map(|end| {
                let text = &self.text[start..end as usize];
                start = end as usize;
                text
            });
            (fixed, texts)
        })
    }
}

/// Rows of `nodes`: the name, qualified name (without its `#k`) and signature of each are the
/// texts.
type NodeBatch = Batch<NodeColumns>;

#[derive(Clone, Copy)]
struct NodeColumns {
    id: i64,
    file_id: i64,
    kind: NodeKind,
    parent: Option<i64>,
    has_signature: bool,
}

/// A row of `nodes` as read, before it is copied into a batch.
struct NodeRow<'r> {
    id: i64,
    file_id: i64,
    kind: NodeKind,
    parent: Option<i64>,
    name: &'r str,
    qn: &'r str,
    signature: Option<&'r str>,
}

impl NodeBatch {
    fn push_row(&mut self, row: NodeRow) {
        let columns = NodeColumns {
            id: row.id,
            file_id: row.file_id,
            kind: row.kind,
            parent: row.parent,
            has_signature: row.signature.is_some(),
        };
        self.push(columns, [row.name, row.qn, row.signature.unwrap_or("")]);
    }

    fn node_rows(&self) -> impl Iterator<Item = NodeRow<'_>> {
        self.iter().map(|(c, [name, qn, signature])| NodeRow {
            id: c.id,
            file_id: c.file_id,
            kind: c.kind,
            parent: c.parent,
            name,
            qn,
            signature: c.has_signature.then_some(signature),
        })
    }
}

/// Reads rows of `nodes` (`filter` completes the statement: a condition, then the order)
/// and hands each to `push`, in the statement's order, until `push` declines one (then
/// false).
fn read_nodes(
    conn: &Connection,
    filter: &str,
    params: &[&dyn rusqlite::ToSql],
    push: &mut impl FnMut(NodeRow) -> bool,
) -> Result<bool> {
    let mut q = conn.prepare_cached(&format!(
        "SELECT id, file_id, kind, name, qualified_name, parent_id, signature FROM nodes {filter}"
    ))?;
    let mut rows = q.query(params)?;
    while let Some(r) = rows.next()? {
        let row = NodeRow {
            id: r.get(0)?,
            file_id: r.get(1)?,
            kind: NodeKind::parse(r.get_ref(2)?.as_str()?).unwrap_or(NodeKind::Constant),
            parent: r.get(5)?,
            name: r.get_ref(3)?.as_str()?,
            qn: base_name(r.get_ref(4)?.as_str()?),
            signature: r.get_ref(6)?.as_str_or_null()?,
        };
        if !push(row) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Hands `push` every row of `nodes` in id order, as `read_nodes` would read them all now:
/// from the rows read ahead (every row below id `below`) but for the files in `replaced`,
/// whose rows are read from `conn`, each where its ids place it, and for the rows past what
/// was read ahead.
fn merge_nodes(
    conn: &Connection,
    batches: &[NodeBatch],
    below: i64,
    replaced: &BTreeSet<i64>,
    push: &mut impl FnMut(NodeRow) -> bool,
) -> Result<bool> {
    let again = replaced
        .iter()
        .copied()
        .take_while(|&f| node_range(f).0 < below);
    let rows = batches.iter().flat_map(NodeBatch::node_rows);
    let merged = merge_by_file(
        push,
        rows,
        |row| row.file_id,
        again,
        replaced,
        |push, file| {
            let (lo, hi) = node_range(file);
            read_nodes(
                conn,
                "WHERE id >= ?1 AND id < ?2 ORDER BY id",
                &[&lo, &hi.min(below)],
                &mut |row| push(row),
            )
        },
    )?;
    if !merged || below == i64::MAX {
        return Ok(merged);
    }
    read_nodes(conn, "WHERE id >= ?1 ORDER BY id", &[&below], push)
}

/// Hands `push` the rows read ahead (`ahead`, ordered by file) but for those of the files in
/// `replaced`, and calls `read_file` (which hands `push` that file's rows as they are now) for
/// each of `again` (replaced files, ascending) where its id places it among them; stops once
/// `push` declines a row (then false).
fn merge_by_file<Push: FnMut(Row) -> bool, Row>(
    push: &mut Push,
    ahead: impl Iterator<Item = Row>,
    file_of: impl Fn(&Row) -> i64,
    again: impl Iterator<Item = i64>,
    replaced: &BTreeSet<i64>,
    read_file: impl Fn(&mut Push, i64) -> Result<bool>,
) -> Result<bool> {
    let mut again = again.peekable();
    for row in ahead {
        // A replaced file's new rows go where its old ones were, or would be.
        let file = file_of(&row);
        while let Some(f) = again.next_if(|&f| f <= file) {
            if !read_file(push, f)? {
                return Ok(false);
            }
        }
        if replaced.contains(&file) {
            continue;
        }
        if !push(row) {
            return Ok(false);
        }
    }
    for f in again {
        if !read_file(push, f)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A row of `SCOPE_REFS_QUERY`: an import, a typed field or variable, or a base type.
struct ScopeRow<'r> {
    node: i64,
    kind: Option<RefKind>,
    name: &'r str,
    module: Option<&'r str>,
    alias: Option<&'r str>,
    line: u32,
}

/// Rows of `SCOPE_REFS_QUERY` read ahead: the name, module and alias of each are the texts.
type ScopeBatch = Batch<ScopeColumns>;

#[derive(Clone, Copy)]
struct ScopeColumns {
    node: i64,
    kind: Option<RefKind>,
    has_module: bool,
    has_alias: bool,
    line: u32,
}

impl ScopeBatch {
    fn push_row(&mut self, row: ScopeRow) {
        let columns = ScopeColumns {
            node: row.node,
            kind: row.kind,
            has_module: row.module.is_some(),
            has_alias: row.alias.is_some(),
            line: row.line,
        };
        let texts = [row.name, row.module.unwrap_or(""), row.alias.unwrap_or("")];
        self.push(columns, texts);
    }

    fn scope_rows(&self) -> impl Iterator<Item = ScopeRow<'_>> {
        self.iter().map(|(c, [name, module, alias])| ScopeRow {
            node: c.node,
            kind: c.kind,
            name,
            module: c.has_module.then_some(module),
            alias: c.has_alias.then_some(alias),
            line: c.line,
        })
    }
}

/// Reads the rows of `sql` (`SCOPE_REFS_QUERY`, or `SCOPE_REFS_OF_NODES` with its range) and
/// hands each to `push` until it declines one (then false).
fn read_scope_refs(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
    push: &mut impl FnMut(ScopeRow) -> bool,
) -> Result<bool> {
    let mut q = conn.prepare_cached(sql)?;
    let mut rows = q.query(params)?;
    while let Some(r) = rows.next()? {
        let row = ScopeRow {
            node: r.get(0)?,
            kind: RefKind::parse(r.get_ref(1)?.as_str()?),
            name: r.get_ref(2)?.as_str()?,
            module: r.get_ref(3)?.as_str_or_null()?,
            alias: r.get_ref(4)?.as_str_or_null()?,
            line: r.get(5)?,
        };
        if !push(row) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Hands `push` every row of `SCOPE_REFS_QUERY` as it would read them now: from `batches`
/// (read ahead) but for the files in `replaced`, read from `conn` where their ids place them.
fn merge_scope_refs(
    conn: &Connection,
    batches: &[ScopeBatch],
    replaced: &BTreeSet<i64>,
    push: &mut impl FnMut(ScopeRow) -> bool,
) -> Result<bool> {
    merge_by_file(
        push,
        batches.iter().flat_map(ScopeBatch::scope_rows),
        |row| file_of(row.node),
        replaced.iter().copied(),
        replaced,
        |push, file| {
            let (lo, hi) = node_range(file);
            read_scope_refs(conn, super::SCOPE_REFS_OF_NODES, &[&lo, &hi], &mut |row| {
                push(row)
            })
        },
    )
}

/// The definitions (and the scope references, `SCOPE_REFS_QUERY`) as they stood when a run
/// began, read on a thread of their own through a connection of their own while the run
/// extracts and writes what changed, so that loading the graph afterwards reads from the
/// database only the rows of the files the run replaced. Whoever starts it sees to it that the reader keeps seeing the database as it
/// was: in WAL mode its snapshot does; a database without a log must not be written before
/// the graph is loaded.
pub struct NodePrefetch {
    reading: Option<std::thread::JoinHandle<Result<Prefetched>>>,
    interrupt: rusqlite::InterruptHandle,
}

/// Rows of `nodes` read ahead, in id order, and of `SCOPE_REFS_QUERY`.
struct Prefetched {
    batches: Vec<NodeBatch>,
    /// Every row with a lower id is in `batches`, none from this id on (a file's first row;
    /// `i64::MAX` when all were read).
    below: i64,
    /// Every row of `SCOPE_REFS_QUERY`, when all definitions and these fit the limit.
    scope_refs: Option<Vec<ScopeBatch>>,
}

/// Text kept in memory ahead of the graph: past it (the rows of some hundreds of thousands
/// of definitions), the rest is read when the graph is loaded (and the scope references
/// are read ahead only if they too fit).
const PREFETCH_TEXT: usize = 64 << 20;

impl NodePrefetch {
    /// Starts reading through `conn`. In WAL mode its snapshot is taken before this returns:
    /// writes through other connections from then on are not seen.
    pub fn start(conn: Connection) -> Result<NodePrefetch> {
        Self::start_within(conn, PREFETCH_TEXT)
    }

    /// As `start`, keeping at most about `limit` bytes of text.
    fn start_within(conn: Connection, limit: usize) -> Result<NodePrefetch> {
        conn.execute_batch("BEGIN")?;
        conn.query_row(
            "SELECT count(*) FROM (SELECT 1 FROM nodes LIMIT 1)",
            [],
            |_| Ok(()),
        )?;
        let interrupt = conn.get_interrupt_handle();
        let reading = std::thread::Builder::new()
            .name("graph-prefetch".into())
            .spawn(move || prefetch_nodes(&conn, limit))?;
        Ok(NodePrefetch {
            reading: Some(reading),
            interrupt,
        })
    }

    /// Waits for the rows.
    fn finish(mut self) -> Result<Prefetched> {
        self.reading
            .take()
            .expect("joined once")
            .join()
            .map_err(|_| anyhow::anyhow!("the graph's prefetch thread panicked"))?
    }
}

impl Drop for NodePrefetch {
    /// Unused (nothing to resolve, or the run failed): the reading stops.
    fn drop(&mut self) {
        if let Some(reading) = self.reading.take() {
            self.interrupt.interrupt();
            let _ = reading.join();
        }
    }
}

fn prefetch_nodes(conn: &Connection, limit: usize) -> Result<Prefetched> {
    let mut batches = Vec::new();
    let mut batch = NodeBatch::default();
    let mut kept = 0;
    let mut below = i64::MAX;
    let mut last_file = None;
    read_nodes(conn, "ORDER BY id", &[], &mut |row| {
        if kept + batch.text.len() > limit && last_file != Some(row.file_id) {
            below = row.id;
            return false;
        }
        last_file = Some(row.file_id);
        batch.push_row(row);
        if batch.is_full() {
            kept += batch.text.len();
            batches.push(std::mem::take(&mut batch));
        }
        true
    })?;
    if !batch.is_empty() {
        kept += batch.text.len();
        batches.push(batch);
    }
    let scope_refs = if below == i64::MAX {
        prefetch_scope_refs(conn, limit.saturating_sub(kept))?
    } else {
        None
    };
    Ok(Prefetched {
        batches,
        below,
        scope_refs,
    })
}

/// Every row of `SCOPE_REFS_QUERY`, unless their text exceeds `limit`.
fn prefetch_scope_refs(conn: &Connection, limit: usize) -> Result<Option<Vec<ScopeBatch>>> {
    let mut batches = Vec::new();
    let mut batch = ScopeBatch::default();
    let mut kept = 0;
    let all = read_scope_refs(conn, super::SCOPE_REFS_QUERY, &[], &mut |row| {
        batch.push_row(row);
        if batch.is_full() {
            kept += batch.text.len();
            batches.push(std::mem::take(&mut batch));
        }
        kept + batch.text.len() <= limit
    })?;
    if !all {
        return Ok(None);
    }
    if !batch.is_empty() {
        batches.push(batch);
    }
    Ok(Some(batches))
}

pub struct Graph {
    pub files: Vec<FileInfo>,
    pub nodes: Vec<NodeInfo>,
    file_by_id: FxHashMap<i64, Idx>,
    by_qn: HashIndex,
    by_name: HashIndex,
    /// Module names and every dotted prefix of them (a package with only submodules).
    modules: HashIndex,
    by_path: HashIndex,
    /// Python modules by every proper dotted suffix of their names (`flaskr.db` for
    /// `examples.tutorial.flaskr.db`): a project folder below the root may be on `sys.path`.
    module_suffixes: HashIndex,
    /// Files by their last path component (`util.h`).
    by_basename: HashIndex,
    fields: FxHashMap<(Idx, u64), Vec<Field>>,
    /// Qualifiers that are no definition or module but hold definitions: the variable of
    /// a JavaScript object literal whose methods are `api.get`. Maps to a node under it.
    /// Only JavaScript's and Lua-like languages' (a table `M` of `function M.f()`):
    /// elsewhere such prefixes are types defined in another module
    /// (a Rust `impl` block, C++ `X::m`), which must keep resolving to the type.
    scopes: HashIndex,
    /// Base types named by every definition, in file order (see `base_refs_of`).
    pub base_refs: Vec<BaseRef>,
    /// Direct base types of each type, filled by `super::hierarchy`.
    pub bases: FxHashMap<Idx, Vec<Idx>>,
    /// Types with a base outside the repository: an unknown member may be inherited.
    pub external_bases: FxHashSet<Idx>,
    /// Declared return types of functions, as written (`-> Session`, `): Session`).
    pub returns: FxHashMap<Idx, Box<str>>,
    /// `module` lines of `go.mod` files: (module path, directory).
    pub go_modules: Vec<(String, String)>,
    /// C and C++: the files each file `#include`s (by file index; empty for other
    /// languages), filled by `super::includes`.
    pub includes: Vec<Box<[Idx]>>,
    /// C and C++: the implementation file beside a header (`util.h` -> `util.c`).
    pub implementation: FxHashMap<Idx, Idx>,
    /// C and C++: the files that include a source (not header) file, as unity builds do
    /// (`build_policy.c` includes `sched.h`, then `fair.c`).
    pub included_by: FxHashMap<Idx, Vec<Idx>>,
    /// C and C++ definitions only their own file can see: `static` functions, and the macros,
    /// types and constants of source (not header) files.
    pub file_local: FxHashSet<Idx>,
    /// C and C++ macros defined inside a namespace, class or function: the preprocessor
    /// knows them by their bare name.
    pub nested_macros: FxHashSet<Idx>,
    /// Go: hashes of the names of typed package variables (most names are none).
    pub go_vars: FxHashSet<u64>,
    /// Go and Rust: what a type alias stands for (`type FileInfo = fs.FileInfo`).
    pub aliases: FxHashMap<Idx, Box<str>>,
    /// Rust: `macro_rules!` definitions (stored as functions), for `name!` calls.
    pub macros: FxHashSet<Idx>,
    /// Rust: the crates of the repository by the name other crates use (`Cargo.toml`'s
    /// package name, `-` as `_`), with the module of their root (`src/lib.rs`).
    pub rust_crates: Vec<(String, String)>,
}

impl Graph {
    /// Loads the graph of the database `conn` is connected to. With `prefetched`, the
    /// definitions as they stood before this run (see [`NodePrefetch`]) are taken from memory
    /// but for the files in `replaced` (those whose rows the run deleted or inserted), which
    /// are read again: the same graph, with a fraction of the reading left for this thread.
    pub fn load(
        conn: &Connection,
        prefetched: Option<(NodePrefetch, &BTreeSet<i64>)>,
    ) -> Result<Graph> {
        let mut g = Graph {
            files: Vec::new(),
            nodes: Vec::new(),
            file_by_id: FxHashMap::default(),
            by_qn: HashIndex::default(),
            by_name: HashIndex::default(),
            modules: HashIndex::default(),
            by_path: HashIndex::default(),
            module_suffixes: HashIndex::default(),
            by_basename: HashIndex::default(),
            fields: FxHashMap::default(),
            scopes: HashIndex::default(),
            base_refs: Vec::new(),
            bases: FxHashMap::default(),
            external_bases: FxHashSet::default(),
            go_modules: Vec::new(),
            returns: FxHashMap::default(),
            includes: Vec::new(),
            implementation: FxHashMap::default(),
            included_by: FxHashMap::default(),
            file_local: FxHashSet::default(),
            nested_macros: FxHashSet::default(),
            go_vars: FxHashSet::default(),
            aliases: FxHashMap::default(),
            macros: FxHashSet::default(),
            rust_crates: Vec::new(),
        };
        // The rows read ahead; should the reading have failed, they are read here instead.
        let mut prefetched = prefetched
            .and_then(|(prefetch, replaced)| prefetch.finish().ok().map(|rows| (rows, replaced)));
        let mut q = conn.prepare("SELECT id, path, language, module FROM files ORDER BY id")?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let idx = g.files.len() as Idx;
            let id: i64 = r.get(0)?;
            let path: String = r.get(1)?;
            let module: String = r.get(3)?;
            g.by_path.push(&path, idx);
            g.by_basename
                .push(path.rsplit('/').next().unwrap_or(&path), idx);
            let mut prefix = module.as_str();
            loop {
                g.modules.push(prefix, idx);
                match prefix.rsplit_once(['.', '/']) {
                    Some((p, _)) => prefix = p,
                    None => break,
                }
            }
            if r.get_ref(2)?.as_str()? == "python" {
                let mut rest = module.as_str();
                while let Some((_, tail)) = rest.split_once('.') {
                    g.module_suffixes.push(tail, idx);
                    rest = tail;
                }
            }
            g.file_by_id.insert(id, idx);
            g.files.push(FileInfo {
                id,
                path: path.into(),
                profile: rules::profile(r.get_ref(2)?.as_str()?),
                module_hash: hash(&module),
                module: module.into(),
                node: None,
                imports: Vec::new(),
            });
        }
        g.by_path.seal();
        g.module_suffixes.seal();
        g.by_basename.seal();
        g.modules.seal();

        // This thread reads the definitions while another builds the graph from them (on a
        // fresh clone of Django reading took some 60% of the time, building the rest).
        let parents = std::thread::scope(|scope| -> Result<Vec<Option<i64>>> {
            let (batches, received) = std::sync::mpsc::sync_channel::<NodeBatch>(4);
            let building = scope.spawn(|| g.add_nodes(received));
            let read = (|| -> Result<()> {
                let mut batch = NodeBatch::default();
                let mut push = |row: NodeRow| {
                    batch.push_row(row);
                    !(batch.is_full() && batches.send(std::mem::take(&mut batch)).is_err())
                };
                match prefetched.as_mut() {
                    Some((rows, replaced)) => {
                        let batches = std::mem::take(&mut rows.batches);
                        merge_nodes(conn, &batches, rows.below, replaced, &mut push)?
                    }
                    None => read_nodes(conn, "ORDER BY id", &[], &mut push)?,
                };
                if !batch.is_empty() {
                    let _ = batches.send(batch);
                }
                Ok(())
            })();
            drop(batches);
            let parents = building.join().expect("the graph's builder panicked");
            read.map(|()| parents)
        })?;
        for (i, p) in parents.into_iter().enumerate() {
            let Some(p) = p else { continue };
            // A definition's parent is mostly its file's node, the definition before it or
            // that one's parent: tried before a search of every node.
            let before = i.checked_sub(1);
            let near = [
                g.files[g.nodes[i].file as usize].node,
                before.map(|j| j as Idx),
                before.and_then(|j| g.nodes[j].parent),
            ];
            g.nodes[i].parent = near
                .into_iter()
                .flatten()
                .find(|&c| g.nodes[c as usize].id == p)
                .or_else(|| g.node_by_id(p));
        }
        g.by_qn.seal();
        g.by_name.seal();
        for (i, n) in g.nodes.iter().enumerate() {
            let style = g.files[n.file as usize].profile.imports;
            let tables = matches!(
                style,
                rules::ImportStyle::JavaScript | rules::ImportStyle::Plain
            );
            if n.kind == NodeKind::File || !tables {
                continue;
            }
            if let Some((prefix, _)) = n.qn.rsplit_once('.') {
                if g.by_qn(prefix).next().is_none() && !g.module_exists(prefix) {
                    g.scopes.push(prefix, i as Idx);
                }
            }
        }
        g.scopes.seal();

        // Imports and member types of every file: re-exports and inherited fields may
        // lead anywhere.
        // Typed top-level variables too (a file node's ordinal is 0): importers of the
        // file may call through them.
        // The condition is the partial index `refs_scope`'s: only those rows are read.
        // In node order: a node's rows come together.
        let mut current_node: Option<(i64, Option<Idx>)> = None;
        let mut add = |row: ScopeRow| {
            let found = match current_node {
                Some((last, found)) if last == row.node => found,
                _ => g.node_by_id(row.node),
            };
            current_node = Some((row.node, found));
            if let Some(node) = found {
                g.add_scope_ref(node, row);
            }
            true
        };
        let scope_refs = prefetched
            .as_mut()
            .and_then(|(rows, replaced)| Some((rows.scope_refs.take()?, *replaced)));
        match scope_refs {
            Some((batches, replaced)) => merge_scope_refs(conn, &batches, replaced, &mut add)?,
            None => read_scope_refs(conn, super::SCOPE_REFS_QUERY, &[], &mut add)?,
        };
        drop(prefetched);

        let mut q = conn.prepare(
            "SELECT f.path, c.content FROM files f JOIN file_contents c ON c.file_id = f.id \
             WHERE f.path = 'go.mod' OR f.path LIKE '%/go.mod' ORDER BY f.path",
        )?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let path: &str = r.get_ref(0)?.as_str()?;
            let dir = path
                .strip_suffix("go.mod")
                .unwrap_or("")
                .trim_end_matches('/');
            let content: &str = r.get_ref(1)?.as_str()?;
            if let Some(m) = content
                .lines()
                .find_map(|l| l.trim().strip_prefix("module "))
            {
                g.go_modules
                    .push((rules::unquoted(m.trim()).to_string(), dir.to_string()));
            }
        }

        let mut q = conn.prepare(
            "SELECT f.path, c.content FROM files f JOIN file_contents c ON c.file_id = f.id \
             WHERE f.path IN ('Cargo.toml', 'Cargo.toml.orig') OR f.path LIKE '%/Cargo.toml' \
             OR f.path LIKE '%/Cargo.toml.orig' ORDER BY f.path",
        )?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let path: &str = r.get_ref(0)?.as_str()?;
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            let content: &str = r.get_ref(1)?.as_str()?;
            let Some(name) = rules::cargo_package_name(content) else {
                continue;
            };
            let root = if dir.is_empty() {
                "src/lib.rs".to_string()
            } else {
                format!("{dir}/src/lib.rs")
            };
            if let Some(f) = g.file_by_path(&root) {
                let entry = (
                    name.replace('-', "_"),
                    g.files[f as usize].module.to_string(),
                );
                if !g.rust_crates.contains(&entry) {
                    g.rust_crates.push(entry);
                }
            }
        }
        // Grouped by file so that `base_refs_of` bisects (the rows come in node order, but a
        // Rust impl's base moves to the type it names); the sort is stable, so each
        // definition keeps its bases' order.
        g.base_refs.sort_by_key(|b| g.nodes[b.node as usize].file);
        Ok(g)
    }

    /// Records an import, a typed field or variable, or a base type of `node`.
    fn add_scope_ref(&mut self, node: Idx, row: ScopeRow) {
        let module = row.module.unwrap_or("");
        match row.kind {
            Some(RefKind::Import) => {
                let file = self.nodes[node as usize].file as usize;
                self.files[file].imports.push(Import {
                    module: module.into(),
                    name: row.name.into(),
                    alias: row.alias.map(Into::into),
                    node,
                    line: row.line,
                });
            }
            Some(RefKind::Field) if !module.is_empty() => self.add_field(node, row.name, module),
            Some(RefKind::Local) => self.add_module_variable(node, row.name, module),
            Some(kind @ (RefKind::Inherits | RefKind::Implements)) => {
                // Rust `impl Trait for Foo` is written in no stored node: the ref names
                // the implementing type, found beside the impl when it is defined there.
                let node = match module {
                    "" => node,
                    ty => self.type_in_scope_of(node, ty).unwrap_or(node),
                };
                self.base_refs.push(BaseRef {
                    node,
                    name: row.name.into(),
                    implements: kind == RefKind::Implements,
                    line: row.line,
                })
            }
            _ => {}
        }
    }

    /// The base types named by the definitions of `file`.
    pub fn base_refs_of(&self, file: Idx) -> &[BaseRef] {
        let file_of = |b: &BaseRef| self.nodes[b.node as usize].file;
        let start = self.base_refs.partition_point(|b| file_of(b) < file);
        let end = self.base_refs.partition_point(|b| file_of(b) <= file);
        &self.base_refs[start..end]
    }

    /// Adds the definitions of `batches` (rows of `nodes` in id order) and returns each one's
    /// parent id, for `load` to link once all are in.
    fn add_nodes(&mut self, batches: std::sync::mpsc::Receiver<NodeBatch>) -> Vec<Option<i64>> {
        let mut parents: Vec<Option<i64>> = Vec::new();
        // Rows come in id order, so a file's nodes come together: its index is looked up once.
        let mut current_file: Option<(i64, Idx)> = None;
        for batch in batches {
            for row in batch.node_rows() {
                let (name, qn, signature) = (row.name, row.qn, row.signature);
                let idx = self.nodes.len() as Idx;
                let file = match current_file {
                    Some((id, file)) if id == row.file_id => file,
                    _ => {
                        let Some(&file) = self.file_by_id.get(&row.file_id) else {
                            continue;
                        };
                        current_file = Some((row.file_id, file));
                        file
                    }
                };
                let kind = row.kind;
                let qn_hash = hash(qn);
                if kind == NodeKind::File {
                    self.files[file as usize].node = Some(idx);
                } else {
                    self.by_name.push(name, idx);
                    self.by_qn.push_hashed(qn_hash, idx);
                }
                parents.push(row.parent);
                self.read_signature(idx, kind, file, signature);
                let params = match kind {
                    NodeKind::Method | NodeKind::Function
                        if self.files[file as usize].profile.types.is_some() =>
                    {
                        overloads::parse(signature.unwrap_or(""), name).map(Box::new)
                    }
                    _ => None,
                };
                self.nodes.push(NodeInfo {
                    id: row.id,
                    file,
                    kind,
                    parent: None,
                    name: name.into(),
                    qn: qn.into(),
                    qn_hash,
                    params,
                });
                self.note_file_local(idx, kind, signature);
            }
        }
        parents
    }

    /// C and C++ (given the node just loaded): a definition seen only in its own file (one in
    /// a source file, not a header, that is no function or a `static` one, or a macro), and a
    /// macro defined inside another definition.
    fn note_file_local(&mut self, idx: Idx, kind: NodeKind, signature: Option<&str>) {
        let file = &self.files[self.nodes[idx as usize].file as usize];
        if !file.profile.translation_units()
            || matches!(kind, NodeKind::File | NodeKind::Module | NodeKind::Method)
        {
            return;
        }
        let macro_like = signature.is_some_and(|s| s.starts_with('#'));
        // `static` in any case of its letters (a `STATIC` macro standing for it included).
        let is_static = signature.is_some_and(|s| {
            s.as_bytes()
                .get(..6)
                .is_some_and(|p| p.eq_ignore_ascii_case(b"static"))
        });
        if kind == NodeKind::Function && !is_static && !macro_like {
            return;
        }
        // A header's macros, types and static inline functions are seen by every file
        // that includes it.
        if !is_header(&file.path) {
            self.file_local.insert(idx);
        }
        if macro_like && self.local_qn(idx).contains('.') {
            self.nested_macros.insert(idx);
        }
    }

    /// What a definition's signature says that resolution uses: the type a function returns,
    /// what a Go or Rust type alias stands for, whether a Rust function is a `macro_rules!`.
    fn read_signature(&mut self, idx: Idx, kind: NodeKind, file: Idx, signature: Option<&str>) {
        let Some(sig) = signature else {
            return;
        };
        let style = self.files[file as usize].profile.imports;
        let go_or_rust = matches!(style, rules::ImportStyle::Go | rules::ImportStyle::Rust);
        // Go and Rust attributes sit on lines of their own above the declaration.
        let decl = if go_or_rust {
            sig.lines().last().unwrap_or(sig)
        } else {
            sig
        };
        match kind {
            NodeKind::Type if go_or_rust => {
                if let Some(t) = rules::alias_target(decl) {
                    self.aliases.insert(idx, t.into());
                }
            }
            NodeKind::Function | NodeKind::Method => {
                if style == rules::ImportStyle::Rust && decl.starts_with("macro_rules!") {
                    self.macros.insert(idx);
                } else if let Some(t) = rules::return_type(style, decl) {
                    self.returns.insert(idx, t.into());
                }
            }
            _ => {}
        }
    }

    /// The type named `name` defined directly in the module or inline module `node` stands
    /// for (a file: its module).
    fn type_in_scope_of(&self, node: Idx, name: &str) -> Option<Idx> {
        let n = &self.nodes[node as usize];
        let scope = match n.kind {
            NodeKind::File => &self.files[n.file as usize].module,
            NodeKind::Module => &n.qn,
            _ => return None,
        };
        self.member_qn(scope, name)
            .into_iter()
            .find(|&t| self.nodes[t as usize].kind.is_type_like())
    }

    /// `self.x = ...` inside a method types the enclosing class's field `x`; a field written
    /// directly in a class body types that class's field; a Go package variable is a field of
    /// its file.
    fn add_field(&mut self, node: Idx, name: &str, type_text: &str) {
        let n = &self.nodes[node as usize];
        let profile = self.files[n.file as usize].profile;
        // A typed module-level variable is a field of its file.
        let (owner, field) = if n.kind.is_type_like() || n.kind == NodeKind::File {
            (Some(node), name)
        } else if n.kind == NodeKind::File && profile.imports == rules::ImportStyle::Go {
            // A Go package-level variable, seen from the package's other files.
            self.go_vars.insert(hash(name));
            (Some(node), name)
        } else {
            let field = profile
                .self_names
                .iter()
                .find_map(|s| name.strip_prefix(s)?.strip_prefix('.'));
            (self.enclosing_type(node), field.unwrap_or(name))
        };
        if let Some(owner) = owner {
            self.fields
                .entry((owner, hash(field)))
                .or_default()
                .push(Field {
                    type_text: type_text.into(),
                    node,
                });
        }
    }

    /// A typed top-level variable (`export const store = new Store()`), kept as a field of
    /// the file node. Only JavaScript's for now: its importers name such variables directly;
    /// other languages can opt in here.
    fn add_module_variable(&mut self, node: Idx, name: &str, type_text: &str) {
        let n = &self.nodes[node as usize];
        let profile = self.files[n.file as usize].profile;
        if n.kind == NodeKind::File && profile.imports == rules::ImportStyle::JavaScript {
            self.fields
                .entry((node, hash(name)))
                .or_default()
                .push(Field {
                    type_text: type_text.into(),
                    node,
                });
        }
    }

    pub fn node_by_id(&self, id: i64) -> Option<Idx> {
        self.nodes
            .binary_search_by_key(&id, |n| n.id)
            .ok()
            .map(|i| i as Idx)
    }

    pub fn file_of_id(&self, file_id: i64) -> Option<Idx> {
        self.file_by_id.get(&file_id).copied()
    }

    pub fn node(&self, idx: Idx) -> &NodeInfo {
        &self.nodes[idx as usize]
    }

    pub fn file(&self, idx: Idx) -> &FileInfo {
        &self.files[idx as usize]
    }

    /// Definitions with exactly this (base) qualified name.
    pub fn by_qn<'a>(&'a self, qn: &'a str) -> impl Iterator<Item = Idx> + 'a {
        self.by_qn
            .get(qn)
            .filter(move |&i| &*self.nodes[i as usize].qn == qn)
    }

    /// Definitions named `name` anywhere in the repository.
    pub fn by_name<'a>(&'a self, name: &'a str) -> impl Iterator<Item = Idx> + 'a {
        self.by_name
            .get(name)
            .filter(move |&i| &*self.nodes[i as usize].name == name)
    }

    /// Definitions named `qualifier.name`, looked up without building the string.
    pub fn member_qn(&self, qualifier: &str, name: &str) -> Vec<Idx> {
        self.member_hashed(qualifier, hash(qualifier), name)
    }

    /// The definitions named `name` directly inside definition `owner`'s qualified name.
    pub fn members(&self, owner: Idx, name: &str) -> Vec<Idx> {
        let n = &self.nodes[owner as usize];
        self.member_hashed(&n.qn, n.qn_hash, name)
    }

    /// The definitions named `name` directly in file `file`'s module.
    pub fn module_members(&self, file: Idx, name: &str) -> Vec<Idx> {
        let f = &self.files[file as usize];
        self.member_hashed(&f.module, f.module_hash, name)
    }

    fn member_hashed(&self, qualifier: &str, qualifier_hash: u64, name: &str) -> Vec<Idx> {
        if qualifier.is_empty() {
            return self.by_qn(name).collect();
        }
        let h = hash_more(hash_more(qualifier_hash, "."), name);
        self.by_qn
            .get_hash(h)
            .filter(|&i| {
                let qn = &*self.nodes[i as usize].qn;
                qn.len() == qualifier.len() + 1 + name.len()
                    && qn.starts_with(qualifier)
                    && qn.ends_with(name)
                    && qn.as_bytes()[qualifier.len()] == b'.'
            })
            .collect()
    }

    /// Whether some file's module is `module` or lies under it.
    pub fn module_exists(&self, module: &str) -> bool {
        self.modules.get(module).any(|f| {
            let m = &*self.files[f as usize].module;
            m == module
                || m.strip_prefix(module)
                    .is_some_and(|rest| rest.starts_with(['.', '/']))
        })
    }

    /// The one Python module whose name ends in `.suffix`, if exactly one does, below a
    /// folder that could be on `sys.path` (not itself a package: `src/flask/json` does not
    /// make `import json` mean `flask.json`).
    pub fn module_by_suffix(&self, suffix: &str) -> Option<&str> {
        let mut found = self.module_suffixes.get(suffix).filter_map(|f| {
            let m = &*self.files[f as usize].module;
            let parent = m.strip_suffix(suffix)?.strip_suffix('.')?;
            let parent_is_package = self.module_files(parent).any(|p| {
                let path = &*self.files[p as usize].path;
                path.ends_with("/__init__.py") || path == "__init__.py"
            });
            (!parent_is_package).then_some(m)
        });
        let first = found.next()?;
        found.all(|m| m == first).then_some(first)
    }

    /// Whether `qn` qualifies definitions without being one or a module (see `scopes`).
    pub fn is_scope(&self, qn: &str) -> bool {
        self.scopes.get(qn).any(|i| {
            self.nodes[i as usize]
                .qn
                .rsplit_once('.')
                .is_some_and(|(p, _)| p == qn)
        })
    }

    /// Files whose module is exactly `module`.
    pub fn module_files<'a>(&'a self, module: &'a str) -> impl Iterator<Item = Idx> + 'a {
        self.modules
            .get(module)
            .filter(move |&f| &*self.files[f as usize].module == module)
    }

    pub fn file_by_path(&self, path: &str) -> Option<Idx> {
        self.by_path
            .get(path)
            .find(|&f| &*self.files[f as usize].path == path)
    }

    /// The file whose path is `path` or, failing that, the only one ending in `/path`.
    pub fn file_by_path_suffix(&self, path: &str) -> Option<Idx> {
        if let Some(f) = self.file_by_path(path) {
            return Some(f);
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let suffix = format!("/{path}");
        let mut found = self
            .by_basename
            .get(name)
            .filter(|&f| self.files[f as usize].path.ends_with(&suffix));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    pub fn fields(&self, class: Idx, name: &str) -> &[Field] {
        self.fields
            .get(&(class, hash(name)))
            .map_or(&[], |v| v.as_slice())
    }

    /// The type a method belongs to: its nearest type-like ancestor or, for methods defined
    /// outside their type's body (Go receivers, Rust `impl` blocks, C++ `X::m`), the type
    /// named by the qualified name's prefix.
    pub fn enclosing_type(&self, mut idx: Idx) -> Option<Idx> {
        loop {
            let n = &self.nodes[idx as usize];
            if n.kind.is_type_like() {
                return Some(idx);
            }
            if n.kind == NodeKind::Method {
                let parent_is_type = n
                    .parent
                    .is_some_and(|p| self.nodes[p as usize].kind.is_type_like());
                if !parent_is_type {
                    let (prefix, _) = n.qn.rsplit_once('.')?;
                    let found = self
                        .by_qn(prefix)
                        .find(|&t| self.nodes[t as usize].kind.is_type_like());
                    // C++: `void Shape::draw() {..}` in shape.cpp belongs to a class that a
                    // header usually declares, under that header's module prefix.
                    if found.is_none() && self.files[n.file as usize].profile.translation_units() {
                        let (path, _) = self.local_qn(idx).rsplit_once('.')?;
                        return self.type_by_local_qn(n.file, path);
                    }
                    return found;
                }
            }
            idx = n.parent?;
        }
    }

    /// C and C++: the qualified name inside its file, without the file's module prefix: the
    /// path of namespaces and classes the language itself sees (`geo.Shape.draw`).
    pub fn local_qn(&self, idx: Idx) -> &str {
        let n = &self.nodes[idx as usize];
        let module = &*self.files[n.file as usize].module;
        n.qn.strip_prefix(module)
            .and_then(|rest| rest.strip_prefix('.'))
            .unwrap_or(&n.qn)
    }

    /// C and C++: a type whose path inside its file is `path` (`geo.Shape`), preferably in
    /// `file`, then in a file of the same name (`shape.hpp` for `shape.cpp`).
    pub fn type_by_local_qn(&self, file: Idx, path: &str) -> Option<Idx> {
        let name = path.rsplit('.').next().unwrap_or(path);
        let found: Vec<Idx> = self
            .by_name(name)
            .filter(|&t| self.nodes[t as usize].kind.is_type_like() && self.local_qn(t) == path)
            .collect();
        let stem = file_stem(&self.files[file as usize].path);
        found
            .iter()
            .find(|&&t| self.nodes[t as usize].file == file)
            .or_else(|| {
                found.iter().find(|&&t| {
                    file_stem(&self.files[self.nodes[t as usize].file as usize].path) == stem
                })
            })
            .or(found.first())
            .copied()
    }

    /// The files `file` includes (C and C++).
    pub fn includes_of(&self, file: Idx) -> &[Idx] {
        self.includes.get(file as usize).map_or(&[], |v| v)
    }

    /// Whether a reference can land on this node (files and namespaces are not targets).
    pub fn is_callable(&self, idx: Idx) -> bool {
        !matches!(
            self.nodes[idx as usize].kind,
            NodeKind::File | NodeKind::Module
        )
    }

    /// A file's definitions (its node ids are one contiguous range).
    pub fn nodes_of(&self, file: Idx) -> std::ops::Range<Idx> {
        let (lo, hi) = crate::ids::node_range(self.files[file as usize].id);
        let start = self.nodes.partition_point(|n| n.id < lo);
        let end = self.nodes.partition_point(|n| n.id < hi);
        start as Idx..end as Idx
    }
}

/// C and C++ headers, by extension.
pub fn is_header(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    ["h", "hh", "hpp", "hxx", "h++", "ipp", "inc", "tcc", "inl"]
        .iter()
        .any(|e| e.eq_ignore_ascii_case(ext))
}

/// Files parsed as C (rather than C++).
pub fn is_c(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    ext.eq_ignore_ascii_case("c") || ext.eq_ignore_ascii_case("h")
}

/// The file name without folders and extension: `include/linux/list.h` -> `list`.
pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split_once('.').map_or(name, |(stem, _)| stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row as `read_nodes` hands it over, as text.
    fn rows_of(read: impl FnOnce(&mut dyn FnMut(NodeRow) -> bool) -> Result<bool>) -> Vec<String> {
        let mut out = Vec::new();
        let done = read(&mut |r: NodeRow| {
            out.push(format!(
                "{} {} {:?} {} {} {:?} {:?}",
                r.id, r.file_id, r.kind, r.name, r.qn, r.parent, r.signature
            ));
            true
        })
        .unwrap();
        assert!(done);
        out
    }

    /// Every row as `read_scope_refs` hands it over, as text.
    fn scope_rows_of(
        read: impl FnOnce(&mut dyn FnMut(ScopeRow) -> bool) -> Result<bool>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        let done = read(&mut |r: ScopeRow| {
            out.push(format!(
                "{} {:?} {} {:?} {:?} {}",
                r.node, r.kind, r.name, r.module, r.alias, r.line
            ));
            true
        })
        .unwrap();
        assert!(done);
        out
    }

    #[test]
    fn prefetched_rows_merged_with_the_replaced_files_equal_a_fresh_read() {
        let files = [
            ("app/models.py", "import os\n\nclass User:\n    def save(self):\n        pass\n\nclass Admin(User):\n    pass\n\ndef helper():\n    return User()\n"),
            ("app/views.py", "from app.models import User as U\n\nclass Page:\n    def render(self):\n        return U().save()\n"),
            ("cmd/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { run() }\n\nfunc run() { fmt.Println() }\n"),
            ("src/util.c", "#include \"util.h\"\nstatic int twice(int x) { return x * 2; }\nint util(void) { return twice(2); }\n"),
            ("src/lib.rs", "use std::fmt;\npub struct Config;\nimpl Config {\n    pub fn load() -> Self { Config }\n}\n"),
            ("web/app.ts", "import { api } from './api';\nexport function start(): void { render(); }\nfunction render(): void { api(); }\n"),
        ];
        let (dir, _) = crate::index::test_fixture(&files);
        let db = dir.path().join("index.db");
        let mut conn = crate::store::open(&db, crate::store::Mode::ReadWrite).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        let all = |conn: &Connection| {
            rows_of(|push| read_nodes(conn, "ORDER BY id", &[], &mut |r| push(r)))
        };
        let scope_refs = |conn: &Connection| {
            scope_rows_of(|push| {
                read_scope_refs(conn, super::super::SCOPE_REFS_QUERY, &[], &mut |r| push(r))
            })
        };
        let before = all(&conn);
        let scope_before = scope_refs(&conn);
        let mut ids: Vec<i64> = files.iter().map(|(p, _)| crate::ids::file_id(p)).collect();
        ids.sort_unstable();
        // A file deleted, one re-extracted with other rows, one new (an id no file has).
        let (gone, changed) = (ids[1], ids[3]);
        let new = (ids[2]..).find(|f| !ids.contains(f)).unwrap();
        let replaced: BTreeSet<i64> = [gone, changed, new].into_iter().collect();
        // Limits that keep everything, a few files and only the first file's rows.
        for limit in [usize::MAX, 120, 0] {
            let reader = crate::store::open(&db, crate::store::Mode::ReadOnly).unwrap();
            let prefetch = NodePrefetch::start_within(reader, limit).unwrap();
            let tx = conn.transaction().unwrap();
            tx.execute("DELETE FROM nodes WHERE file_id = ?1", [gone])
                .unwrap();
            tx.execute(
                "UPDATE nodes SET name = name || '_v2', signature = NULL WHERE file_id = ?1",
                [changed],
            )
            .unwrap();
            let (lo, hi) = node_range(gone);
            tx.execute(
                "DELETE FROM refs WHERE node_id >= ?1 AND node_id < ?2",
                [lo, hi],
            )
            .unwrap();
            let (lo, hi) = node_range(changed);
            tx.execute(
                "UPDATE refs SET name = name || '_v2', alias = 'v2' \
                 WHERE node_id >= ?1 AND node_id < ?2",
                [lo, hi],
            )
            .unwrap();
            let (lo, _) = node_range(new);
            tx.execute(
                "INSERT INTO refs(node_id, seq, kind, name, module, alias, line) \
                 VALUES (?1, 0, 'import', 'path', 'os', NULL, 1)",
                [lo],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO nodes(id, file_id, kind, name, qualified_name, start_line, end_line, \
                 start_byte, end_byte, name_tokens) VALUES (?1, ?2, 'File', 'new.py', 'new.py', \
                 1, 1, 0, 0, ''), (?1 + 1, ?2, 'Function', 'f', 'new.f#2', 1, 1, 0, 0, 'f')",
                [lo, new],
            )
            .unwrap();
            let mut prefetched = prefetch.finish().unwrap();
            if limit == usize::MAX {
                // The snapshot of before the writes.
                assert_eq!(prefetched.below, i64::MAX);
                let kept = rows_of(|push| {
                    prefetched
                        .batches
                        .iter()
                        .flat_map(NodeBatch::node_rows)
                        .for_each(|r| {
                            push(r);
                        });
                    Ok(true)
                });
                assert_eq!(kept, before);
                let batches = prefetched.scope_refs.take().expect("all scope rows kept");
                let kept = scope_rows_of(|push| {
                    batches
                        .iter()
                        .flat_map(ScopeBatch::scope_rows)
                        .for_each(|r| {
                            push(r);
                        });
                    Ok(true)
                });
                assert_eq!(kept, scope_before);
                let merged = scope_rows_of(|push| {
                    merge_scope_refs(&tx, &batches, &replaced, &mut |r| push(r))
                });
                let expected = scope_refs(&tx);
                assert_ne!(expected, scope_before);
                assert_eq!(merged, expected);
            } else {
                assert!(prefetched.below < i64::MAX, "limit {limit} kept every row");
                assert!(prefetched.scope_refs.is_none());
            }
            let merged = rows_of(|push| {
                merge_nodes(
                    &tx,
                    &prefetched.batches,
                    prefetched.below,
                    &replaced,
                    &mut |r| push(r),
                )
            });
            let expected = all(&tx);
            assert_ne!(expected, before);
            assert_eq!(merged, expected, "limit {limit}");
            tx.rollback().unwrap();
        }
    }
}
