//! The whole repository as one document under a token budget: the tree of every indexed
//! path (grouped by folder), statistics, the newest commits, the TODO comments, and the files
//! in one of three layers decided by rank under the one budget: `full` (its text), `skeleton`
//! (its imports and signatures, from the index) or metadata only, which is its place in the
//! tree (an entry of its own for each would cost more than the tree: about 90 tokens a file
//! with its hash). Everything comes from the index but the commits: nothing is re-read or
//! re-parsed, and secrets are already redacted there.
//!
//! Rank: the README first, then manifests and configuration, entry points, the rest of the
//! code by the repo map's PageRank, other documentation, and tests and generated code last.
//! With a task (an issue, a question), the files `rank-files` gives it come right after the
//! README and the PageRank restarts where the task points. A byte-identical copy of a file
//! ranked before it points to that file instead of holding the text again.
//!
//! A delta pack (`Options::since`, the state a previous pack left) holds only the files
//! added or changed since, and names the deleted ones. When files are left that a pack did
//! not hold in full, its `next_cursor` gives a later page: files only, in rank order, each
//! in full while it fits, past those the first page held in full.
//!
//! JSON (`codebase-indexer/repo-pack/1`) is what `unpack` restores files from; markdown and
//! XML are for pasting.

use crate::context::defgraph::Repo;
use crate::context::pack::Format;
use crate::context::render::{cdata, fence, xml_escape};
use crate::context::repomap;
use crate::context::skeleton::file_skeleton;
use crate::context::tokens::{self, Account, Tokenizer};
use crate::query::rank_files;
use crate::store::writer::{FLAG_INVALID_UTF8, FLAG_TEST};
use anyhow::Result;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub const SCHEMA: &str = "codebase-indexer/repo-pack/1";

/// Called with (files read, files in the index) while the pack reads the index.
pub type Progress = std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>;

#[derive(Clone)]
pub struct Options {
    /// A ceiling on the whole document, structure included.
    pub budget: usize,
    pub format: Format,
    pub tokenizer: Tokenizer,
    /// An issue or a question: the files it needs come first (after the README), and the
    /// rest of the code is ranked by PageRank restarting where it points.
    pub task: Option<String>,
    /// The state a previous pack left (`RepoPack::state`): pack only the files added or
    /// changed since, and list the ones deleted.
    pub since: Option<PackState>,
    /// A later page: the `next_cursor` of the page before, with the same task (and delta).
    pub cursor: Option<String>,
    pub progress: Option<Progress>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("budget", &self.budget)
            .field("format", &self.format)
            .field("tokenizer", &self.tokenizer)
            .field("task", &self.task)
            .field("since", &self.since.as_ref().map(|s| s.files.len()))
            .field("cursor", &self.cursor)
            .finish_non_exhaustive()
    }
}

impl Options {
    pub const DEFAULT_BUDGET: usize = 100_000;
    /// Files that `rank-files` gives a task, ranked right after the README.
    pub const TASK_FILES: usize = 20;
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Self::DEFAULT_BUDGET,
            format: Format::Json,
            tokenizer: Tokenizer::default(),
            task: None,
            since: None,
            cursor: None,
            progress: None,
        }
    }
}

pub const STATE_SCHEMA: &str = "codebase-indexer/pack-state/1";

/// What a pack saw: the hash of every path in its tree, so that a later pack can hold only
/// what changed since.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackState {
    pub schema: String,
    /// Path to the SHA-256 of its text.
    pub files: BTreeMap<String, String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Full,
    Skeleton,
    /// Listed without content: on a later page, a file larger than the page.
    Metadata,
}

/// One file of the pack; as JSON, an element of `files`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepoFile {
    pub path: String,
    pub language: String,
    /// Bytes on disk when indexed.
    pub size: u64,
    /// Of the text the index holds: the file's bytes unless `redacted` or `lossy`.
    pub sha256: String,
    pub layer: Layer,
    /// `None` for a copy (`duplicate_of`).
    pub content: Option<String>,
    /// Why a file has less than its full text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The path of the byte-identical file that carries this one's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
    /// Secrets were replaced in the text: it is not the file's.
    #[serde(default, skip_serializing_if = "is_false")]
    pub redacted: bool,
    /// Bytes that were not UTF-8 were replaced: it is not the file's.
    #[serde(default, skip_serializing_if = "is_false")]
    pub lossy: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub files: usize,
    /// Files per language.
    pub languages: BTreeMap<String, usize>,
    pub full: usize,
    pub skeleton: usize,
    /// In the tree only.
    pub metadata: usize,
    /// Copies listed with the file carrying their text.
    pub duplicates: usize,
    /// Tokens of the whole document and the budget, with the tokenizer.
    pub tokens: usize,
    pub budget: usize,
    pub tokenizer: String,
    /// A delta pack: the files left out because they are as the previous pack saw them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<usize>,
}

/// The pack as data, and as the text of its format.
#[derive(Clone, Debug)]
pub struct RepoPack {
    pub stats: Stats,
    /// Every indexed path, in path order.
    pub tree: Vec<String>,
    /// The files shown in full or as skeletons, and their copies, in rank order.
    pub files: Vec<RepoFile>,
    /// The newest commits (short id, date, subject), when the tree is in git.
    pub git: Vec<String>,
    /// TODO, FIXME, HACK and XXX comments, best-ranked files first.
    pub todos: Vec<Todo>,
    pub account: Account,
    /// Set when the tree, the statistics, the commits and the TODOs alone exceed the budget:
    /// their tokens. The pack then holds no file (and is over the budget).
    pub floor_exceeds_budget: Option<usize>,
    /// A delta pack: the paths the previous pack had that the index no longer holds.
    pub deleted_since_last_pack: Option<Vec<String>>,
    /// What this pack saw, for the next delta (the whole tree, even for a delta pack).
    pub state: PackState,
    /// Where the next page starts (`Options::cursor`), while files are left that no page
    /// held in full: the first page gives the overview, later ones the rest in rank order.
    pub next_cursor: Option<String>,
    pub text: String,
}

/// Where a later page starts: its number, the rank position it goes on from, the files the
/// first page held in full, and a digest of what was packed (the files and the task), so
/// that a cursor of another pack is refused. As text, `rp1.DIGEST.PAGE.FROM.I,J,...`.
#[derive(Clone, Debug, PartialEq)]
struct Cursor {
    fingerprint: String,
    page: usize,
    from: usize,
    full: Vec<usize>,
}

impl Cursor {
    fn encode(&self) -> String {
        let full: Vec<String> = self.full.iter().map(usize::to_string).collect();
        format!(
            "rp1.{}.{}.{}.{}",
            self.fingerprint,
            self.page,
            self.from,
            full.join(",")
        )
    }

    fn parse(text: &str) -> Result<Cursor> {
        let bad =
            || crate::error::Error::invalid(format!("not a cursor of a repository pack: {text:?}"));
        let mut parts = text.split('.');
        if parts.next() != Some("rp1") {
            return Err(bad().into());
        }
        let fingerprint = parts.next().ok_or_else(bad)?.to_string();
        let mut number =
            || -> Result<usize> { Ok(parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?) };
        let (page, from) = (number()?, number()?);
        let full = match parts.next() {
            Some("") => Vec::new(),
            Some(list) => list
                .split(',')
                .map(|n| n.parse::<usize>().map_err(|_| bad()))
                .collect::<std::result::Result<Vec<usize>, _>>()?,
            None => return Err(bad().into()),
        };
        // In rank order, as the first page took them (and as the lookups need them).
        if parts.next().is_some() || page < 2 || !full.windows(2).all(|w| w[0] < w[1]) {
            return Err(bad().into());
        }
        Ok(Cursor {
            fingerprint,
            page,
            from,
            full,
        })
    }
}

/// A digest of the files packed, in rank order, and the task.
fn fingerprint(entries: &[Entry], task: Option<&str>) -> String {
    let mut h = blake3::Hasher::new();
    h.update(task.unwrap_or("").as_bytes());
    for e in entries {
        h.update(&[0]);
        h.update(e.file.path.as_bytes());
        h.update(e.file.sha256.as_bytes());
    }
    h.finalize().to_hex()[..16].to_string()
}

/// A file read from the index, with what each layer would show.
struct Entry {
    file: RepoFile,
    full: String,
    /// Its file in the graph, when its language has definitions to make a skeleton of.
    graph_file: Option<usize>,
    /// Made the first time a layer asks for it: most files of a large repository are never
    /// shown, and making every skeleton up front was most of a pack's time.
    skeleton: std::cell::OnceCell<Option<String>>,
    /// The entry carrying this one's bytes, ranked before it.
    carrier: Option<usize>,
    /// One of the files the task needs.
    needed: bool,
}

impl Entry {
    /// Its skeleton (imports, signatures, docstrings), if it has one.
    fn skeleton(&self, conn: &Connection, repo: &Repo) -> Result<Option<&str>> {
        if let Some(made) = self.skeleton.get() {
            return Ok(made.as_deref());
        }
        let made = match self.graph_file {
            Some(i) => Some(file_skeleton(conn, repo, i)?).filter(|s| !s.is_empty()),
            None => None,
        };
        Ok(self.skeleton.get_or_init(|| made).as_deref())
    }
}

/// Packs the repository of `conn`, whose whole graph is `repo`; `root` is the indexed tree,
/// whose git history (when it is in a git work tree) the pack opens with.
pub fn pack_in(
    conn: &Connection,
    repo: &Repo,
    opts: &Options,
    root: Option<&Path>,
) -> Result<RepoPack> {
    if opts.budget == 0 {
        crate::error::invalid!("the budget must be at least 1 token");
    }
    let cursor = opts.cursor.as_deref().map(Cursor::parse).transpose()?;
    let mut entries = read_entries(conn, repo, opts, root)?;
    if entries.is_empty() {
        crate::error::invalid!("the index holds no files: run `indexer index` first");
    }
    let state = PackState {
        schema: STATE_SCHEMA.to_string(),
        files: entries
            .iter()
            .map(|e| (e.file.path.clone(), e.file.sha256.clone()))
            .collect(),
    };
    let mut unchanged = None;
    let deleted_since_last_pack = opts.since.as_ref().map(|since| {
        let all = entries.len();
        entries.retain(|e| since.files.get(&e.file.path) != Some(&e.file.sha256));
        unchanged = Some(all - entries.len());
        since
            .files
            .keys()
            .filter(|p| !state.files.contains_key(*p))
            .cloned()
            .collect::<Vec<String>>()
    });
    let fingerprint = fingerprint(&entries, opts.task.as_deref());
    if let Some(c) = &cursor {
        if c.fingerprint != fingerprint || c.full.iter().any(|&i| i >= entries.len()) {
            crate::error::invalid!(
                "the cursor belongs to another pack (the task, the delta or the index changed since): start again without it"
            );
        }
    }
    let mut languages = BTreeMap::new();
    for e in &entries {
        *languages.entry(e.file.language.clone()).or_insert(0) += 1;
    }
    let mut tree: Vec<String> = entries.iter().map(|e| e.file.path.clone()).collect();
    tree.sort();
    // The carrier of each content is its best-ranked copy.
    let mut carriers: HashMap<String, usize> = HashMap::new();
    for i in 0..entries.len() {
        match carriers.get(&entries[i].file.sha256) {
            Some(&c) => {
                entries[i].carrier = Some(c);
                entries[i].file.duplicate_of = Some(entries[c].file.path.clone());
            }
            None => {
                carriers.insert(entries[i].file.sha256.clone(), i);
            }
        }
    }
    let tk = opts.tokenizer;
    let base = Stats {
        files: entries.len(),
        languages,
        budget: opts.budget,
        tokenizer: tk.as_str().to_string(),
        unchanged,
        ..Stats::default()
    };
    // A later page holds files only: the tree, the history and the TODOs were on the first.
    let first_page = cursor.is_none();
    let folders = if first_page {
        folders(&tree)
    } else {
        Folders::new()
    };
    let git = if first_page {
        root.map(recent_commits).unwrap_or_default()
    } else {
        Vec::new()
    };
    let todos = if first_page {
        todos(&entries)
    } else {
        Vec::new()
    };
    let page = cursor.as_ref().map_or(1, |c| c.page);
    let doc = Document {
        format: opts.format,
        tree: &folders,
        git: &git,
        todos: &todos,
        deleted: deleted_since_last_pack.as_deref().filter(|_| first_page),
        page,
    };
    // The floor: the tree and the statistics.
    let floor = tk.count(&doc.render(&stats_of(&base, &[], 0), &[], None));
    let mut layers: Vec<Layer> = vec![Layer::Full; entries.len()];
    let room = opts.budget.saturating_sub(floor).saturating_sub(16);
    // Best first, in what the floor leaves; later pages go on in rank order from where the
    // cursor stands, past the files an earlier page held in full.
    let (promoted, resume) = match &cursor {
        None => {
            let over = floor > opts.budget;
            let promoted =
                first_page_layers(&entries, &doc, tk, room, over, &mut layers, (conn, repo))?;
            (promoted, 0)
        }
        Some(c) => later_page_layers(&entries, &doc, tk, room, c, &mut layers, (conn, repo))?,
    };
    // Where the next page starts, and the files held in full before it, once `taken` (a
    // prefix of `promoted`) is what this page shows; `None` when no file is left.
    let next_cursor = |taken: &[usize]| -> Option<String> {
        let (full, from) = match &cursor {
            None => {
                let full: Vec<usize> = taken
                    .iter()
                    .copied()
                    .filter(|&i| layers[i] == Layer::Full)
                    .collect();
                (full, 0)
            }
            Some(c) => {
                let from = match promoted.get(taken.len()) {
                    None => resume,
                    // Dropped to fit: it comes first on the next page, unless nothing fit
                    // (then it is passed over, so that paging moves on).
                    Some(&dropped) if !taken.is_empty() => dropped,
                    Some(&dropped) => dropped + 1,
                };
                (c.full.clone(), from)
            }
        };
        let left = (from..entries.len())
            .any(|i| entries[i].carrier.is_none() && full.binary_search(&i).is_err());
        left.then(|| {
            Cursor {
                fingerprint: fingerprint.clone(),
                page: page + 1,
                from,
                full,
            }
            .encode()
        })
    };
    let render_with =
        |taken: &[usize], n: usize| -> (Stats, Vec<RepoFile>, String, Option<String>) {
            let mut shown: Vec<Option<Layer>> = vec![None; entries.len()];
            for &i in taken {
                shown[i] = Some(layers[i]);
            }
            // A copy is listed, without its text, when its carrier is shown.
            let files: Vec<RepoFile> = (0..entries.len())
                .filter_map(|i| {
                    let e = &entries[i];
                    match (shown[i], e.carrier.and_then(|c| shown[c])) {
                        (Some(Layer::Full), _) => Some(with_layer(&e.file, Layer::Full, &e.full)),
                        (Some(Layer::Skeleton), _) => Some(with_layer(
                            &e.file,
                            Layer::Skeleton,
                            e.skeleton
                                .get()
                                .and_then(Option::as_deref)
                                .unwrap_or_default(),
                        )),
                        (Some(Layer::Metadata), _) => Some(RepoFile {
                            layer: Layer::Metadata,
                            reason: Some(format!("larger than a page of {} tokens", opts.budget)),
                            ..e.file.clone()
                        }),
                        (None, Some(layer)) => Some(RepoFile {
                            layer,
                            ..e.file.clone()
                        }),
                        (None, None) => None,
                    }
                })
                .collect();
            let s = stats_of(&base, &files, n);
            let next = next_cursor(taken);
            let text = doc.render(&s, &files, next.as_deref());
            (s, files, text, next)
        };
    // The document states its own token count; over the budget, pieces go from the end.
    let budget = if floor > opts.budget {
        usize::MAX
    } else {
        opts.budget
    };
    let (taken, n) = tokens::fit_exact(tk, budget, promoted.clone(), |taken, n| {
        render_with(taken, n).2
    })
    .map_or((Vec::new(), floor), |(taken, _, n)| (taken, n));
    let (stats, files, text, next_cursor) = render_with(&taken, n);
    let account = Account {
        tokenizer: tk,
        budget: opts.budget,
        tokens: stats.tokens,
        included: stats.full + stats.skeleton,
        dropped: stats.metadata,
    };
    Ok(RepoPack {
        stats,
        tree: if first_page { tree } else { Vec::new() },
        files,
        git,
        todos,
        account,
        floor_exceeds_budget: (floor > opts.budget).then_some(floor),
        deleted_since_last_pack,
        state,
        next_cursor,
        text,
    })
}

/// The first page's layers, best first: the full text when it takes at most a quarter of
/// the room left, so that one large file does not take the room of many (a file the task
/// needs may take it all), else the skeleton. Returns the files shown, in rank order.
fn first_page_layers(
    entries: &[Entry],
    doc: &Document,
    tk: Tokenizer,
    mut room: usize,
    over: bool,
    layers: &mut [Layer],
    (conn, repo): (&Connection, &Repo),
) -> Result<Vec<usize>> {
    let mut promoted = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if over || room < 8 {
            break;
        }
        if e.carrier.is_some() {
            continue;
        }
        // The skeleton is made only for a file whose text does not fit.
        for layer in [Layer::Full, Layer::Skeleton] {
            let text = match layer {
                Layer::Full => Some(e.full.as_str()),
                _ => e.skeleton(conn, repo)?,
            };
            let Some(text) = text.filter(|t| tokens::floor(t) <= room) else {
                continue;
            };
            let cost = tk.count(&doc.file(&with_layer(&e.file, layer, text)));
            let share = if layer == Layer::Full && !e.needed {
                room / 4
            } else {
                room
            };
            if cost <= share {
                room -= cost;
                layers[i] = layer;
                promoted.push(i);
                break;
            }
        }
    }
    Ok(promoted)
}

/// A later page's layers: the files no earlier page held in full, in rank order from the
/// cursor, each in full while it fits; a file too large for a page of its own comes as its
/// skeleton, or as its metadata when even that does not fit, so that paging always moves on.
/// Returns the files shown and where the next page starts when all of them stay.
fn later_page_layers(
    entries: &[Entry],
    doc: &Document,
    tk: Tokenizer,
    mut room: usize,
    cursor: &Cursor,
    layers: &mut [Layer],
    (conn, repo): (&Connection, &Repo),
) -> Result<(Vec<usize>, usize)> {
    let mut promoted = Vec::new();
    for (i, e) in entries.iter().enumerate().skip(cursor.from) {
        if e.carrier.is_some() || cursor.full.binary_search(&i).is_ok() {
            continue;
        }
        let full = tk.count(&doc.file(&with_layer(&e.file, Layer::Full, &e.full)));
        if full <= room {
            room -= full;
            promoted.push(i);
            continue;
        }
        if !promoted.is_empty() {
            return Ok((promoted, i));
        }
        let skeleton = e
            .skeleton(conn, repo)?
            .map(|s| tk.count(&doc.file(&with_layer(&e.file, Layer::Skeleton, s))));
        layers[i] = match skeleton.filter(|&cost| cost <= room) {
            Some(cost) => {
                room -= cost;
                Layer::Skeleton
            }
            None => Layer::Metadata,
        };
        promoted.push(i);
    }
    Ok((promoted, entries.len()))
}

/// Every indexed file with its text, in rank order.
fn read_entries(
    conn: &Connection,
    repo: &Repo,
    opts: &Options,
    root: Option<&Path>,
) -> Result<Vec<Entry>> {
    let mut restart: Vec<f64> = repo
        .defs
        .iter()
        .map(|d| {
            if repo.files[d.file].secondary {
                0.1
            } else {
                1.0
            }
        })
        .collect();
    // A task: the files it needs by position, and the walk restarting where it points.
    let mut needed: HashMap<String, usize> = HashMap::new();
    if let Some(task) = opts.task.as_deref() {
        let task = rank_files::own_query(conn, task)?;
        for (i, f) in rank_files::rank_own_query(conn, &task, Options::TASK_FILES)?
            .into_iter()
            .enumerate()
        {
            needed.insert(f.path, i);
        }
        let hits = repomap::query_hits(conn, &task, 400)?;
        let seeds = repomap::query_seeds(repo, &task, &hits);
        if !seeds.is_empty() {
            restart.iter_mut().for_each(|w| *w = 0.0);
            for (d, w) in seeds {
                restart[d] += w;
            }
        }
    }
    let rank = repo.pagerank(&restart);
    let mut file_rank: HashMap<i64, f64> = HashMap::new();
    let mut file_index: HashMap<i64, usize> = HashMap::new();
    for (i, f) in repo.files.iter().enumerate() {
        file_index.insert(f.id, i);
    }
    for (d, r) in repo.defs.iter().zip(&rank) {
        *file_rank.entry(repo.files[d.file].id).or_default() += r;
    }
    // Files that change often are where the work is: the rank grows with the log of the
    // recent commits that touched the file.
    let churn = root.map(|r| churn(conn, r)).unwrap_or_default();
    for f in &repo.files {
        if let (Some(&c), Some(r)) = (churn.get(&f.path), file_rank.get_mut(&f.id)) {
            *r *= 1.0 + CHURN_WEIGHT * (1.0 + c as f64).ln();
        }
    }
    let mut q = conn.prepare(
        "SELECT f.id, f.path, f.language, f.size, f.flags, c.content, \
                EXISTS (SELECT 1 FROM redactions r WHERE r.file_id = f.id) \
         FROM files f JOIN file_contents c ON c.file_id = f.id ORDER BY f.path",
    )?;
    let total: i64 = conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0))?;
    let total = total.max(0) as usize;
    let mut rows = q.query([])?;
    let mut ranked: Vec<((u8, f64, usize, String), Entry)> = Vec::new();
    while let Some(r) = rows.next()? {
        if let Some(progress) = &opts.progress {
            if ranked.len().is_multiple_of(256) {
                progress(ranked.len(), total);
            }
        }
        let id: i64 = r.get(0)?;
        let path: String = r.get(1)?;
        let language: String = r.get(2)?;
        let size: i64 = r.get(3)?;
        let flags: i64 = r.get(4)?;
        let content: String = r.get(5)?;
        let redacted: bool = r.get(6)?;
        let graph_file = file_index
            .get(&id)
            .copied()
            .filter(|_| crate::lang::by_name(&language).is_some());
        let class = class_of(&path, &language, flags);
        let task_position = needed.get(&path).copied();
        let is_needed = task_position.is_some();
        // The task's files (the README aside) come right after the README; the classes after
        // them move down one.
        let (class, order) = match task_position {
            Some(i) if class > 0 => (1, i as f64),
            _ if class > 0 && !needed.is_empty() => {
                (class + 1, -file_rank.get(&id).copied().unwrap_or(0.0))
            }
            // The README before its translations (`README.md`, then `README.zh-CN.md`).
            _ if class == 0 => (0, path.matches('.').count() as f64),
            _ => (class, -file_rank.get(&id).copied().unwrap_or(0.0)),
        };
        let key = (class, order, path.matches('/').count(), path.clone());
        let file = RepoFile {
            sha256: sha256_hex(content.as_bytes()),
            path,
            language,
            size: size.max(0) as u64,
            layer: Layer::Full,
            content: None,
            reason: None,
            duplicate_of: None,
            redacted,
            lossy: flags & FLAG_INVALID_UTF8 != 0,
        };
        ranked.push((
            key,
            Entry {
                file,
                full: content,
                graph_file,
                skeleton: std::cell::OnceCell::new(),
                carrier: None,
                needed: is_needed,
            },
        ));
    }
    ranked.sort_by(|(a, _), (b, _)| {
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    Ok(ranked.into_iter().map(|(_, e)| e).collect())
}

/// How much a file's rank grows with the log of its recent commits: measured on the
/// histories of five repositories in four languages (docs/measurements.md), 0.5 gives
/// nearly all of the gain and is the only weight that costs none of them anything.
const CHURN_WEIGHT: f64 = 0.5;

/// How many of the recent commits (as many as change impact reads for co-change) touched
/// each path; none outside git. The database's cached history is used when it is HEAD's.
fn churn(conn: &Connection, root: &Path) -> HashMap<String, usize> {
    use crate::context::impact::{diff, read_history};
    let mut out = HashMap::new();
    let Ok(head) = diff::git(root, &["rev-parse", "--verify", "-q", "HEAD"]) else {
        return out;
    };
    for (_, paths) in read_history(root, conn, head.trim()).0 {
        for p in paths {
            *out.entry(p).or_insert(0) += 1;
        }
    }
    out
}

/// Which group a file is ranked in: 0 the top-level README and the documentation's index,
/// 1 manifests and configuration, 2 entry points, 3 the rest of the code (by PageRank), 4
/// other documentation and text, 5 tests and generated code. Documentation beyond the
/// README comes after the code: changelogs and translations would otherwise take the budget.
fn class_of(path: &str, language: &str, flags: i64) -> u8 {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let stem = name.split('.').next().unwrap_or(&name);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    let depth = path.matches('/').count();
    if flags & FLAG_TEST != 0 || is_generated(path, &name) {
        return 5;
    }
    if (depth == 0 && stem == "readme")
        || (path.starts_with("docs/") && depth == 1 && stem == "index")
    {
        return 0;
    }
    const MANIFESTS: &[&str] = &[
        "cargo.toml",
        "package.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "go.mod",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "gemfile",
        "composer.json",
        "cmakelists.txt",
        "makefile",
        "mix.exs",
        "package.swift",
        "build.sbt",
        "tsconfig.json",
        "requirements.txt",
        "tox.ini",
        "meson.build",
    ];
    if depth <= 1 && (MANIFESTS.contains(&name.as_str()) || ext == "gemspec" || ext == "csproj") {
        return 1;
    }
    if depth == 0 && matches!(ext, "toml" | "yaml" | "yml" | "ini" | "cfg") {
        return 1;
    }
    if crate::lang::by_name(language).is_none() {
        return 4;
    }
    let entry = matches!(
        stem,
        "main" | "__main__" | "cli" | "app" | "lib" | "index" | "server"
    );
    if depth <= 2 && entry {
        return 2;
    }
    3
}

fn is_generated(path: &str, name: &str) -> bool {
    name.ends_with(".min.js")
        || name.ends_with(".min.css")
        || name.ends_with("_pb2.py")
        || name.ends_with(".pb.go")
        || name.ends_with(".generated.ts")
        || path
            .split('/')
            .any(|p| p == "generated" || p == "__generated__")
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn with_layer(f: &RepoFile, layer: Layer, text: &str) -> RepoFile {
    RepoFile {
        layer,
        content: Some(text.to_string()),
        reason: (layer == Layer::Skeleton).then(|| "budget".into()),
        ..f.clone()
    }
}

fn stats_of(base: &Stats, files: &[RepoFile], tokens: usize) -> Stats {
    let count = |l: Layer| {
        files
            .iter()
            .filter(|f| f.layer == l && f.duplicate_of.is_none())
            .count()
    };
    let duplicates = files.iter().filter(|f| f.duplicate_of.is_some()).count();
    let (full, skeleton) = (count(Layer::Full), count(Layer::Skeleton));
    Stats {
        full,
        skeleton,
        metadata: base.files - full - skeleton - duplicates,
        duplicates,
        tokens,
        ..base.clone()
    }
}

/// The document's shape in one format.
struct Document<'a> {
    format: Format,
    tree: &'a Folders<'a>,
    git: &'a [String],
    todos: &'a [Todo],
    /// A delta pack's deleted paths.
    deleted: Option<&'a [String]>,
    /// 1 for the first page.
    page: usize,
}

impl Document<'_> {
    fn render(&self, stats: &Stats, files: &[RepoFile], next: Option<&str>) -> String {
        let mut out = String::new();
        match self.format {
            Format::Json => {
                out.push_str(&format!("{{\"schema\": \"{SCHEMA}\",\n"));
                if self.page > 1 {
                    out.push_str(&format!("\"page\": {},\n", self.page));
                }
                if let Some(next) = next {
                    out.push_str(&format!("\"next_cursor\": {},\n", serde_json::json!(next)));
                }
                out.push_str("\"stats\": ");
                out.push_str(&serde_json::to_string(stats).unwrap_or_default());
                out.push_str(",\n\"tree\": ");
                out.push_str(&serde_json::to_string(self.tree).unwrap_or_default());
                out.push_str(",\n\"git\": ");
                out.push_str(&serde_json::to_string(self.git).unwrap_or_default());
                out.push_str(",\n\"todos\": ");
                out.push_str(&serde_json::to_string(self.todos).unwrap_or_default());
                if let Some(deleted) = self.deleted {
                    out.push_str(",\n\"deleted_since_last_pack\": ");
                    out.push_str(&serde_json::to_string(deleted).unwrap_or_default());
                }
                out.push_str(",\n\"files\": [");
                for (i, f) in files.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    out.push_str(self.file(f).trim_end());
                }
                out.push_str("\n]}\n");
            }
            Format::Markdown => {
                out.push_str(&format!(
                    "# Repository pack{}\n\n{} files ({}); {} in full, {} as skeletons, {} as metadata, {} duplicates; {} of {} tokens ({})\n",
                    if self.page > 1 {
                        format!(", page {}", self.page)
                    } else {
                        String::new()
                    },
                    stats.files,
                    stats
                        .languages
                        .iter()
                        .map(|(l, n)| format!("{l} {n}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    stats.full,
                    stats.skeleton,
                    stats.metadata,
                    stats.duplicates,
                    stats.tokens,
                    stats.budget,
                    stats.tokenizer,
                ));
                if let Some(unchanged) = stats.unchanged {
                    out.push_str(&format!(
                        "\nOnly what changed since the last pack: {unchanged} files unchanged, {} deleted.\n",
                        self.deleted.map_or(0, <[String]>::len)
                    ));
                }
                if let Some(next) = next {
                    out.push_str(&format!(
                        "\nMore files follow on page {}: pass the cursor `{next}`.\n",
                        self.page + 1
                    ));
                }
                if self.page == 1 {
                    out.push_str("\n## Tree\n\n```\n");
                    for (folder, names) in self.tree {
                        out.push_str(&format!("{folder}/\n"));
                        for n in names {
                            out.push_str(&format!("  {n}\n"));
                        }
                    }
                    out.push_str("```\n");
                }
                if !self.git.is_empty() {
                    out.push_str("\n## Recent commits\n\n");
                    for c in self.git {
                        out.push_str(&format!("- {c}\n"));
                    }
                }
                if !self.todos.is_empty() {
                    out.push_str("\n## TODOs\n\n");
                    for t in self.todos {
                        out.push_str(&format!("- {}:{}: {}\n", t.path, t.line, t.text));
                    }
                }
                if let Some(deleted) = self.deleted.filter(|d| !d.is_empty()) {
                    out.push_str("\n## Deleted since the last pack\n\n");
                    for p in deleted {
                        out.push_str(&format!("- {p}\n"));
                    }
                }
                out.push_str("\n## Files\n");
                for f in files {
                    out.push_str(&self.file(f));
                }
            }
            Format::Xml => {
                let page = if self.page > 1 {
                    format!(" page=\"{}\"", self.page)
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "<repository schema=\"{SCHEMA}\"{page}>\n<stats>{}</stats>\n",
                    xml_escape(&serde_json::to_string(stats).unwrap_or_default())
                ));
                if let Some(next) = next {
                    out.push_str(&format!(
                        "<next_cursor>{}</next_cursor>\n",
                        xml_escape(next)
                    ));
                }
                if self.page == 1 {
                    out.push_str("<tree>\n");
                    for (folder, names) in self.tree {
                        out.push_str(&format!(
                            "<folder path=\"{}\">{}</folder>\n",
                            xml_escape(folder),
                            xml_escape(&names.join("\n"))
                        ));
                    }
                    out.push_str("</tree>\n");
                }
                if !self.git.is_empty() {
                    out.push_str(&format!(
                        "<git>\n{}\n</git>\n",
                        xml_escape(&self.git.join("\n"))
                    ));
                }
                if !self.todos.is_empty() {
                    out.push_str("<todos>\n");
                    for t in self.todos {
                        out.push_str(&format!(
                            "<todo path=\"{}\" line=\"{}\">{}</todo>\n",
                            xml_escape(&t.path),
                            t.line,
                            xml_escape(&t.text)
                        ));
                    }
                    out.push_str("</todos>\n");
                }
                if let Some(deleted) = self.deleted {
                    out.push_str(&format!(
                        "<deleted_since_last_pack>{}</deleted_since_last_pack>\n",
                        xml_escape(&deleted.join("\n"))
                    ));
                }
                for f in files {
                    out.push_str(&self.file(f));
                }
                out.push_str("</repository>\n");
            }
        }
        out
    }

    /// One file as the document shows it.
    fn file(&self, f: &RepoFile) -> String {
        match self.format {
            Format::Json => serde_json::to_string(f).unwrap_or_default() + "\n",
            Format::Markdown => {
                let mut head = format!(
                    "\n### {}\n{}, {} bytes, sha256 {}, {}",
                    f.path,
                    f.language,
                    f.size,
                    f.sha256,
                    layer_name(f.layer)
                );
                if let Some(d) = &f.duplicate_of {
                    head.push_str(&format!(", same as {d}"));
                } else if let Some(r) = &f.reason {
                    head.push_str(&format!(" ({r})"));
                }
                if f.redacted {
                    head.push_str(", secrets redacted");
                }
                head.push('\n');
                if let Some(c) = &f.content {
                    let fence = fence(c);
                    head.push_str(&format!("{fence}\n{}\n{fence}\n", c.trim_end_matches('\n')));
                }
                head
            }
            Format::Xml => {
                let mut attrs = format!(
                    "path=\"{}\" language=\"{}\" size=\"{}\" sha256=\"{}\" layer=\"{}\"",
                    xml_escape(&f.path),
                    xml_escape(&f.language),
                    f.size,
                    f.sha256,
                    layer_name(f.layer)
                );
                if let Some(d) = &f.duplicate_of {
                    attrs.push_str(&format!(" duplicate_of=\"{}\"", xml_escape(d)));
                }
                if let Some(r) = &f.reason {
                    attrs.push_str(&format!(" reason=\"{}\"", xml_escape(r)));
                }
                match &f.content {
                    Some(c) => format!("<file {attrs}>{}</file>\n", cdata(c)),
                    None => format!("<file {attrs}/>\n"),
                }
            }
        }
    }
}

/// Commits of the git history listed, newest first.
const COMMITS_LISTED: usize = 15;
/// TODO-like comments listed, in rank order of their files.
const TODOS_LISTED: usize = 100;
const MARKERS: [&str; 4] = ["TODO", "FIXME", "HACK", "XXX"];

/// A TODO, FIXME, HACK or XXX marker and the rest of its line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Todo {
    pub path: String,
    pub line: usize,
    pub text: String,
}

/// The newest commits of the history holding `root`, one line each (short id, date,
/// subject); none outside git.
fn recent_commits(root: &Path) -> Vec<String> {
    let log = [
        "log",
        &format!("-n{COMMITS_LISTED}"),
        "--no-color",
        "--date=short",
        "--format=%h %ad %s",
    ];
    crate::context::impact::diff::git(root, &log)
        .map(|out| out.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The marked comments of the files, best-ranked files first, at most `TODOS_LISTED`.
fn todos(entries: &[Entry]) -> Vec<Todo> {
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| e.carrier.is_none()) {
        // Most files hold none: one fast search each before reading them by line.
        if !MARKERS.iter().any(|m| e.full.contains(m)) {
            continue;
        }
        for (n, line) in e.full.lines().enumerate() {
            let Some(at) = marker_at(line) else { continue };
            let text: String = line[at..].trim().chars().take(120).collect();
            out.push(Todo {
                path: e.file.path.clone(),
                line: n + 1,
                text,
            });
            if out.len() == TODOS_LISTED {
                return out;
            }
        }
    }
    out
}

/// Where a TODO, FIXME, HACK or XXX stands in `line` as a word of its own.
fn marker_at(line: &str) -> Option<usize> {
    MARKERS.iter().find_map(|m| {
        line.match_indices(m).map(|(i, _)| i).find(|&i| {
            let before = line[..i].chars().next_back();
            let after = line[i + m.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// The tree as folders (`.` for the top) and their files' names, in order: every path once,
/// a folder's name once for all its files, and folders that differ in one part of their
/// path and hold the same names once for all of them, with that part as `{a,b,c}`
/// (`locale/{de,fr,ja}/LC_MESSAGES`: translations, platforms, versions).
type Folders<'a> = BTreeMap<String, Vec<&'a str>>;

/// Folders alike in all but one part are written once when there are at least this many.
const ALIKE_FOLDERS: usize = 3;

/// (a folder's names, its path with one part left out) -> (folder, the part left out).
type Alike<'p, 't> = HashMap<(&'p [&'t str], String), Vec<(&'t str, &'t str)>>;

fn folders(tree: &[String]) -> Folders<'_> {
    let mut plain: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in tree {
        let (folder, name) = p.rsplit_once('/').unwrap_or((".", p));
        plain.entry(folder).or_default().push(name);
    }
    // Folders by their names and their path with one part left out; the largest groups
    // take their folders first (ties in path order, so the result is always the same).
    let mut alike: Alike = HashMap::new();
    for (folder, names) in &plain {
        if folder.contains(['{', '}', ',']) {
            continue;
        }
        let parts: Vec<&str> = folder.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let mut pattern = parts.clone();
            pattern[i] = "\0";
            alike
                .entry((names.as_slice(), pattern.join("/")))
                .or_default()
                .push((folder, part));
        }
    }
    let mut groups: Vec<_> = alike
        .into_iter()
        .filter(|(_, members)| members.len() >= ALIKE_FOLDERS)
        .collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let mut out: Folders = BTreeMap::new();
    let mut taken: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for ((names, pattern), members) in groups {
        let free: Vec<&str> = members
            .iter()
            .filter(|(folder, _)| !taken.contains(folder))
            .map(|&(_, part)| part)
            .collect();
        if free.len() < ALIKE_FOLDERS {
            continue;
        }
        for (folder, _) in &members {
            taken.insert(folder);
        }
        out.insert(
            pattern.replace("\0", &format!("{{{}}}", free.join(","))),
            names.to_vec(),
        );
    }
    for (folder, names) in plain {
        if !taken.contains(folder) {
            out.insert(folder.to_string(), names);
        }
    }
    out
}

fn layer_name(l: Layer) -> &'static str {
    match l {
        Layer::Full => "full",
        Layer::Skeleton => "skeleton",
        Layer::Metadata => "metadata",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_alike_in_one_part_are_written_once() {
        let tree: Vec<String> = [
            "README.md",
            "app/locale/de/LC_MESSAGES/django.po",
            "app/locale/fr/LC_MESSAGES/django.po",
            "app/locale/ja/LC_MESSAGES/django.po",
            "app/locale/xx/LC_MESSAGES/other.po",
            "app/views.py",
            "two/a/x.py",
            "two/b/x.py",
            "odd/{a}/x.py",
            "odd/b/x.py",
            "odd/c/x.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let f = folders(&tree);
        let keys: Vec<&str> = f.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec![
                ".",
                "app",
                "app/locale/xx/LC_MESSAGES",
                "app/locale/{de,fr,ja}/LC_MESSAGES",
                "odd/b",
                "odd/c",
                "odd/{a}",
                "two/a",
                "two/b",
            ]
        );
        assert_eq!(f["app/locale/{de,fr,ja}/LC_MESSAGES"], vec!["django.po"]);
        // Every path is still there once.
        let count: usize = f.values().map(Vec::len).sum::<usize>() + 2;
        assert_eq!(count, tree.len());
    }
}
