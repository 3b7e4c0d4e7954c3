//! `indexer index`: walk, read and extract in parallel, write from one thread in one
//! transaction. A first run (or `--rebuild`) builds a new database file beside the old one and
//! renames it into place; later runs update the existing database incrementally in a single
//! transaction. Either way a killed run leaves the previous good database.

mod git;
#[cfg(test)]
mod hostile_input;
pub mod redact;
pub mod walk;

use crate::lang;
use crate::lang::extract::extract;
use crate::model::FileExtract;
use crate::resolve::changes::Tracker;
use crate::resolve::{self, ResolveOptions, ResolveStats};
use crate::store::artifact;
use crate::store::staging;
use crate::store::{self, writer, FileRecord, Mode, Writer};
use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;
use walk::{Candidate, ContentClass, SkipReason, Skipped, WalkOptions};

/// Called with (stage, files done, files to do) as files are processed and as later
/// stages start.
pub type Progress = std::sync::Arc<ProgressFn>;
pub type ProgressFn = dyn Fn(&str, usize, usize) + Send + Sync;

/// Files larger than this are skipped, unless a run says otherwise.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 20;
/// Resolution guesses a name shared by at most this many definitions, unless a run says
/// otherwise.
pub(crate) const DEFAULT_FUZZY_LIMIT: usize = 5;

pub struct RunOptions<'a> {
    pub root: PathBuf,
    pub db: PathBuf,
    pub project: String,
    pub excludes: Vec<String>,
    pub max_file_bytes: u64,
    /// Index `.env` files and their variants, every value redacted.
    pub include_env: bool,
    pub jobs: usize,
    /// Ignore any existing database and build from scratch.
    pub rebuild: bool,
    /// Edges below this confidence are not stored (their sites go to `unresolved`).
    pub min_confidence: f64,
    /// A name shared by more definitions than this is not guessed.
    pub fuzzy_limit: usize,
    /// Write the committed artifact (`.codebase-index/`) at this zstd level after indexing.
    pub artifact_level: Option<i32>,
    pub progress: Option<&'a ProgressFn>,
}

#[derive(Debug, Serialize)]
pub struct IndexSummary {
    pub project: String,
    pub root: String,
    pub db: String,
    pub mode: &'static str,
    pub files: usize,
    pub extracted: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub skipped: BTreeMap<&'static str, usize>,
    #[serde(skip)]
    pub skipped_paths: Skipped,
    pub syntax_error_files: usize,
    pub invalid_utf8_files: usize,
    /// Files whose parse was abandoned after its time budget (kept as file nodes only).
    pub abandoned_parse_files: Vec<String>,
    pub languages: BTreeMap<String, usize>,
    pub nodes_by_kind: BTreeMap<String, i64>,
    pub resolution: ResolveStats,
    /// The artifact the database was started from, when there was none yet.
    pub bootstrapped_from: Option<String>,
    /// Of the unchanged files, those known to equal the artifact's from git's blob ids,
    /// without being read.
    pub vouched_by_git: usize,
    /// The artifact written after indexing (`None` when unchanged or not asked for).
    pub artifact: Option<artifact::Manifest>,
    /// The artifact the tree lacks and the run left for its caller to write
    /// (`ArtifactWrite::Deferred`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_due: Option<String>,
    /// What the run chose not to do, and why (an unusable artifact).
    pub notes: Vec<String>,
    /// Secrets taken out of the files extracted by this run (never their values).
    pub redactions: Vec<Redacted>,
    pub elapsed_ms: u128,
    /// Wall time by stage, in milliseconds.
    pub phases_ms: BTreeMap<&'static str, u128>,
    /// CPU time by stage (all threads), in milliseconds; empty where the system does not
    /// tell (Linux does).
    pub phases_cpu_ms: BTreeMap<&'static str, u128>,
    /// The process's peak memory (resident) at the end of each stage, in MiB.
    pub phases_peak_rss_mb: BTreeMap<&'static str, u64>,
}

/// A secret taken out of a file, by where and what kind.
#[derive(Debug, Clone, Serialize)]
pub struct Redacted {
    pub path: String,
    pub line: u32,
    pub kind: &'static str,
}

/// What reading and extracting one file produced.
enum FileRead {
    /// Same bytes as stored: only the modification time moved.
    SameContent,
    Extracted(Box<Extracted>),
    Skipped(SkipReason),
}

struct Extracted {
    language: &'static str,
    hash: String,
    flags: i64,
    content: String,
    redactions: Vec<crate::index::redact::Redaction>,
    extract: FileExtract,
    /// The file's words, for the whole-file word index.
    words: (u32, Vec<(String, u32)>),
    /// The words of its definitions, for the definition word index.
    definition_words: crate::text::DefinitionWords,
    /// Its definitions' names split into sub-tokens.
    name_tokens: Vec<String>,
}

/// A full build commits after about this much source (see `run`).
const BULK_COMMIT_BYTES: u64 = 32 << 20;

/// What the database already knows about a file.
struct Known {
    size: u64,
    mtime_ns: i64,
    hash: String,
}

/// The options the unit tests index their fixtures with: the defaults `Index::build` uses,
/// a fixed project name, two threads, no artifact written into the tree.
#[cfg(test)]
pub(crate) fn test_run_options(root: &Path, db: &Path) -> RunOptions<'static> {
    RunOptions {
        root: root.canonicalize().expect("the tree's folder"),
        db: db.to_path_buf(),
        project: "fixture".into(),
        excludes: Vec::new(),
        max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        include_env: false,
        jobs: 2,
        rebuild: false,
        min_confidence: 0.0,
        fuzzy_limit: DEFAULT_FUZZY_LIMIT,
        artifact_level: None,
        progress: None,
    }
}

/// A fixture repository for unit tests: `files` (path, text) written into a temporary folder,
/// indexed with `test_run_options` and opened read-only. The folder lives as long as the
/// returned guard.
#[cfg(test)]
pub(crate) fn test_fixture(
    files: &[(impl AsRef<str>, impl AsRef<str>)],
) -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    for (path, text) in files {
        let p = root.join(path.as_ref());
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text.as_ref()).unwrap();
    }
    let db = dir.path().join("index.db");
    run(&test_run_options(&root, &db)).unwrap();
    let conn = store::open(&db, Mode::ReadOnly).unwrap();
    (dir, conn)
}

pub fn run(opts: &RunOptions<'_>) -> Result<IndexSummary> {
    let started = Instant::now();
    let mut lap = Lap::new(started);
    let _lock = store::lock_for_writing(&opts.db)?;
    staging::remove_stale(&opts.db);

    // A new database is written to a temporary file that becomes the database in one
    // rename: until then the old one stands, and a failed run leaves nothing behind.
    let temp = staging::temp_beside(&opts.db, "db");
    // A fresh clone with a committed artifact starts from it: only files whose content
    // differs from the artifact's are extracted again. It is decompressed while the tree
    // is walked.
    let committed = artifact::path_in(&opts.root);
    let bootstrap = !opts.rebuild && !opts.db.exists() && committed.exists();
    let (root, staged) = (&opts.root, &temp);
    let (walked, started_from, git_index) = std::thread::scope(|scope| {
        let unpacking = bootstrap.then(|| scope.spawn(|| artifact::decompress(&committed, staged)));
        // A database started from the artifact knows no modification times; in a git work
        // tree, git's blob ids tell which files hold the artifact's content unread.
        let asking_git = bootstrap.then(|| scope.spawn(|| git::read_index(root)));
        let walked = walk::walk(&WalkOptions {
            root: &opts.root,
            excludes: &opts.excludes,
            max_file_bytes: opts.max_file_bytes,
            threads: opts.jobs,
            include_env: opts.include_env,
        });
        let started_from = unpacking.map(|h| h.join().expect("artifact thread panicked"));
        let git_index = asking_git.and_then(|h| h.join().expect("git thread panicked"));
        (walked, started_from, git_index)
    });
    let (candidates, skipped) = walked?;
    // The walk's candidates are sorted by path.
    let walked = |path: &str| {
        let found = candidates.binary_search_by(|c| c.path.as_str().cmp(path));
        found.ok().map(|i| &candidates[i])
    };
    // Judged by the status the walk read.
    let mut vouched = git_index
        .map(|index| index.unmodified(&opts.root, |path| walked(path).map(|c| c.stat)))
        .unwrap_or_default();
    // Checked against the walk rather than the disk: the tree's paths are at hand.
    let started_from = started_from.map(|decompressed| {
        decompressed
            .and_then(|()| artifact::check_describes(&temp, &opts.root, |p| walked(p).is_some()))
    });
    let mut bootstrapped_from = None;
    let mut notes = Vec::new();
    match started_from {
        Some(Ok(())) => bootstrapped_from = Some(committed.display().to_string()),
        Some(Err(e)) => {
            vouched.clear();
            notes.push(format!(
                "not starting from {}: {e:#}; building a full index instead",
                committed.display()
            ))
        }
        None => {}
    }

    // A database from an older schema lacks what this version extracts: rebuild it.
    let update_in_place = bootstrapped_from.is_none()
        && !opts.rebuild
        && opts.db.exists()
        && store::schema_version(&opts.db)? == store::SCHEMA_VERSION;
    let incremental = update_in_place || bootstrapped_from.is_some();
    let mut summary = IndexSummary::new(opts, incremental);
    summary.bootstrapped_from = bootstrapped_from;
    summary.notes = notes;
    lap.record(&mut summary, "1_walk");
    if update_in_place {
        let mut conn = store::open(&opts.db, Mode::ReadWrite)?;
        // The writer deletes a re-extracted file's rows itself and keeps the edges other
        // files have into it (see `store::changes`): a cascade would delete those.
        conn.execute_batch("PRAGMA foreign_keys = OFF")?;
        update(
            &mut conn,
            opts,
            &candidates,
            &vouched,
            skipped,
            &mut summary,
            &mut lap,
        )
        .map_err(|e| store::explain_write_failure(e, &opts.db))?;
        fill_counts(&conn, &mut summary)?;
    } else {
        let built = build_into(
            &temp,
            opts,
            &candidates,
            &vouched,
            skipped,
            &mut summary,
            &mut lap,
        );
        if let Err(e) = built.and_then(|()| store::install(&temp, &opts.db)) {
            let _ = std::fs::remove_file(&temp);
            return Err(store::explain_write_failure(e, &opts.db));
        }
    }
    lap.record(&mut summary, "8_finish");
    if let Some(level) = opts.artifact_level {
        // The index itself is in place: a tree that cannot take the artifact (read-only,
        // or `.codebase-index` taken by a file) only loses the artifact.
        match artifact::export(&opts.db, &committed, level) {
            Ok(written) => summary.artifact = written,
            Err(e) => summary
                .notes
                .push(format!("did not write {}: {e:#}", committed.display())),
        }
        lap.record(&mut summary, "9_artifact");
    }
    summary.elapsed_ms = started.elapsed().as_millis();
    Ok(summary)
}

/// Builds the database in `temp`: from scratch, or by updating the artifact decompressed
/// there (`summary.bootstrapped_from`). Nobody reads the file until it is renamed (but the
/// run's own reader of the definitions as they were, see `prefetch_graph`), so no journal is kept
/// (part of the end of a full build runs in WAL mode, while its full-text thread reads).
fn build_into(
    temp: &Path,
    opts: &RunOptions<'_>,
    candidates: &[Candidate],
    vouched: &HashMap<String, String>,
    skipped: Skipped,
    summary: &mut IndexSummary,
    lap: &mut Lap,
) -> Result<()> {
    let mut conn = if summary.bootstrapped_from.is_none() {
        let _ = std::fs::remove_file(temp);
        store::create(temp, Mode::Bulk)?
    } else {
        let conn = store::open(temp, Mode::Bulk)?;
        // Started from the artifact, the run reads far more than it writes: every
        // definition for resolution, index pages for each replaced row.
        conn.execute_batch("PRAGMA mmap_size = 1073741824")?;
        conn
    };
    update(&mut conn, opts, candidates, vouched, skipped, summary, lap)?;
    fill_counts(&conn, summary)?;
    conn.execute_batch("PRAGMA locking_mode = NORMAL; PRAGMA journal_mode = WAL;")?;
    Ok(())
}

/// Brings the database in `conn` up to date with `candidates`; a file in `vouched` (path to
/// git blob id) whose id and size equal the database's is unchanged unread. An incremental
/// run is one transaction: killed, it rolls back. A full build writes a file nobody reads
/// until it is renamed into place, so it commits every few dozen MB to keep SQLite's page
/// cache clean instead of spilling it page by page, and builds indexes once at the end.
fn update(
    conn: &mut Connection,
    opts: &RunOptions<'_>,
    candidates: &[Candidate],
    vouched: &HashMap<String, String>,
    mut skipped: Skipped,
    summary: &mut IndexSummary,
    lap: &mut Lap,
) -> Result<()> {
    let incremental = summary.mode == "incremental";
    let known = if incremental {
        load_known(conn)?
    } else {
        HashMap::new()
    };
    // Files whose size and mtime match the database are unchanged without being read.
    let mut to_touch = Vec::new();
    let mut to_read: Vec<&Candidate> = Vec::new();
    for c in candidates {
        match known.get(c.path.as_str()) {
            Some(k) if k.size == c.size && k.mtime_ns == c.mtime_ns => {}
            Some(k) if k.size == c.size && vouched.get(&c.path) == Some(&k.hash) => {
                to_touch.push(c)
            }
            _ => to_read.push(c),
        }
    }
    summary.unchanged = candidates.len() - to_read.len();
    summary.vouched_by_git = to_touch.len();
    // Written in id order, every table grows by appending at the end of its B-tree instead of
    // splitting pages all over a database far larger than the page cache.
    to_read.sort_by_cached_key(|c| crate::ids::file_id(&c.path));
    let prefetch = if incremental && !to_read.is_empty() {
        let bootstrap = summary.bootstrapped_from.is_some();
        prefetch_graph(conn, bootstrap, to_read.iter().map(|c| c.size).sum())?
    } else {
        None
    };

    let tx = conn.transaction()?;
    let deferred = if incremental {
        None
    } else {
        Some(store::defer_indexes(&tx)?)
    };
    // An incremental run compares each replaced file's facts before and after, to know
    // what resolution must redo.
    let mut tracker = Tracker::default();
    let observer = incremental.then_some(&mut tracker as &mut dyn writer::Observer);
    let mut writer = Writer::new(&tx, observer)?;
    for c in to_touch {
        writer.touch_file(&c.path, c.mtime_ns)?;
    }
    // A full build hands the files' reference sites to resolution in memory.
    let mut sites = resolve::Sites::default();
    let mut uncommitted_bytes = 0u64;
    let mut done = 0usize;
    process_in_order(
        &to_read,
        opts.jobs,
        |c| c.size,
        |c| read_and_extract(c, known.get(c.path.as_str())),
        |i, outcome| {
            let c = to_read[i];
            let was_known = known.contains_key(c.path.as_str());
            match outcome {
                FileRead::SameContent => {
                    writer.touch_file(&c.path, c.mtime_ns)?;
                    summary.unchanged += 1;
                }
                FileRead::Extracted(mut x) => {
                    if was_known {
                        writer.delete_file(&c.path)?;
                    }
                    summary.count_flags(&c.path, x.flags);
                    summary
                        .redactions
                        .extend(x.redactions.iter().map(|r| Redacted {
                            path: c.path.clone(),
                            line: r.line,
                            kind: r.kind,
                        }));
                    writer.insert_file(
                        &FileRecord {
                            path: &c.path,
                            language: x.language,
                            size: c.size,
                            mtime_ns: c.mtime_ns,
                            hash: &x.hash,
                            flags: x.flags,
                            content: &x.content,
                            redactions: &x.redactions,
                            words: &x.words,
                            definition_words: &x.definition_words,
                            name_tokens: &x.name_tokens,
                        },
                        &x.extract,
                    )?;
                    if !incremental {
                        sites.keep(
                            crate::ids::file_id(&c.path),
                            std::mem::take(&mut x.extract.refs),
                        );
                    }
                    summary.extracted += 1;
                    uncommitted_bytes += c.size;
                    if !incremental && uncommitted_bytes > BULK_COMMIT_BYTES {
                        tx.execute_batch("COMMIT; BEGIN")?;
                        uncommitted_bytes = 0;
                    }
                }
                FileRead::Skipped(reason) => {
                    if was_known {
                        writer.delete_file(&c.path)?;
                        summary.removed += 1;
                    }
                    skipped.entry(reason).or_default().push(c.path.clone());
                }
            }
            done += 1;
            if let Some(progress) = &opts.progress {
                progress("extracting", done, to_read.len());
            }
            Ok(())
        },
    )?;
    // Files gone from the tree (or now filtered out) leave the database.
    let present: HashSet<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
    let mut gone: Vec<&String> = known
        .keys()
        .filter(|p| !present.contains(p.as_str()))
        .collect();
    gone.sort();
    for path in gone {
        writer.delete_file(path)?;
        summary.removed += 1;
    }
    lap.record(summary, "2_extract_write");
    let stage = |name: &str| {
        if let Some(progress) = &opts.progress {
            progress(name, to_read.len(), to_read.len());
        }
    };
    let resolve_opts = ResolveOptions {
        min_confidence: opts.min_confidence,
        fuzzy_limit: opts.fuzzy_limit,
        jobs: opts.jobs,
    };
    // Resolution settings are part of what the edges mean: a change re-resolves everything.
    let settings = format!(
        "min_confidence={} fuzzy_limit={}",
        opts.min_confidence, opts.fuzzy_limit
    );
    let same_settings = store::get_meta(&tx, "resolution")?.as_deref() == Some(settings.as_str());
    match &deferred {
        Some(d) => {
            // Before resolution: a full build holds every file's postings in memory until
            // they are written (held through resolution, on the Linux kernel they raised the
            // peak by some 450 MB). It writes them on a thread of their own while this one
            // loads the graph (the kernel's peak about 200 MB higher than when they were
            // written first).
            let word_indexes =
                writer.start_word_indexes(staging::temp_beside(&opts.db, "words"))?;
            lap.record(summary, "2_word_indexes");
            // A full build resolves on worker threads while this thread builds every other
            // index. The edges are then written in one sorted pass and indexed last, while
            // the full text is built on a thread of its own.
            stage("resolving references");
            let resolution = resolve::resolve_all_while(&tx, sites, &resolve_opts, || {
                lap.record(summary, "3_resolve_start");
                stage("building indexes");
                store::restore_indexes(&tx, d, |t| !is_resolution_table(t))?;
                lap.record(summary, "4_indexes");
                // Before the full-text index is filled, so renames need no full-text updates.
                writer.finish()?;
                lap.record(summary, "5_unique_names");
                tx.execute_batch("COMMIT")?;
                word_indexes.finish(&tx)?;
                lap.record(summary, "5_word_indexes");
                tx.execute_batch("BEGIN")?;
                stage("resolving references");
                Ok(())
            })?;
            summary.resolution = resolution;
            // In WAL mode while the full-text thread reads the definitions as committed and
            // this one goes on writing: only the edges' indexes pass through the log.
            tx.execute_batch(
                "COMMIT; PRAGMA locking_mode = NORMAL; PRAGMA journal_mode = WAL; \
                 PRAGMA wal_autocheckpoint = 0; BEGIN",
            )?;
            // Started once resolution is done, the full text takes the core that indexing
            // the edges on this thread leaves idle, not one the resolution workers use.
            let mut full_text =
                store::full_text::start(&tx, staging::temp_beside(&opts.db, "fulltext"))?;
            store::restore_indexes(&tx, d, is_resolution_table)?;
            lap.record(summary, "7_resolve_store");
            stage("building the full-text index");
            tx.execute_batch("COMMIT")?;
            full_text.wait()?;
            // No other connection reads the database any more: the log goes into the database
            // file (which alone is renamed into place), and what is left is written once, not
            // into the log and again into the database (the kernel's full text is 400 MB).
            let mode: String = tx.query_row("PRAGMA journal_mode = OFF", [], |r| r.get(0))?;
            anyhow::ensure!(
                mode == "off",
                "could not move the write-ahead log into the database"
            );
            tx.execute_batch("PRAGMA locking_mode = EXCLUSIVE")?;
            full_text.finish(&tx)?;
            tx.execute_batch("BEGIN")?;
            store::restore_triggers(&tx, d)?;
            lap.record(summary, "7_store_full_text");
        }
        None => {
            writer.write_word_indexes()?;
            lap.record(summary, "2_word_indexes");
            stage("building indexes");
            writer.finish()?;
            let changes = tracker.finish(&tx)?;
            lap.record(summary, "5_unique_names");
            // Nothing re-extracted and the same settings: every edge still stands.
            let unchanged = same_settings && changes.files.is_empty();
            if !unchanged {
                stage("resolving references");
                let scope = same_settings.then_some(&changes);
                // The tracker saw every file whose rows this run deleted or inserted.
                let prefetched = prefetch.map(|p| (p, &changes.files));
                summary.resolution = resolve::resolve(&tx, scope, &resolve_opts, prefetched)?;
                lap.record(summary, "3_resolve");
            } else {
                // Read no further: nothing may write the database while it reads.
                drop(prefetch);
            }
            if summary.bootstrapped_from.is_some() {
                tx.execute_batch("PRAGMA cache_spill = ON")?;
            }
        }
    }
    store::set_meta(&tx, "resolution", &settings)?;
    store::set_meta(&tx, "root", &opts.root.to_string_lossy())?;
    store::set_meta(&tx, "project", &opts.project)?;
    tx.commit()?;

    for list in skipped.values_mut() {
        list.sort();
    }
    summary.skipped = skipped.iter().map(|(r, v)| (r.as_str(), v.len())).collect();
    summary.skipped_paths = skipped;
    Ok(())
}

impl IndexSummary {
    fn new(opts: &RunOptions<'_>, incremental: bool) -> Self {
        IndexSummary {
            project: opts.project.clone(),
            root: opts.root.display().to_string(),
            db: opts.db.display().to_string(),
            mode: if incremental { "incremental" } else { "full" },
            files: 0,
            extracted: 0,
            unchanged: 0,
            removed: 0,
            skipped: BTreeMap::new(),
            skipped_paths: Skipped::new(),
            syntax_error_files: 0,
            invalid_utf8_files: 0,
            abandoned_parse_files: Vec::new(),
            languages: BTreeMap::new(),
            nodes_by_kind: BTreeMap::new(),
            resolution: ResolveStats::default(),
            bootstrapped_from: None,
            vouched_by_git: 0,
            artifact: None,
            artifact_due: None,
            notes: Vec::new(),
            redactions: Vec::new(),
            elapsed_ms: 0,
            phases_ms: BTreeMap::new(),
            phases_cpu_ms: BTreeMap::new(),
            phases_peak_rss_mb: BTreeMap::new(),
        }
    }

    fn count_flags(&mut self, path: &str, flags: i64) {
        if flags & writer::FLAG_SYNTAX_ERRORS != 0 {
            self.syntax_error_files += 1;
        }
        if flags & writer::FLAG_INVALID_UTF8 != 0 {
            self.invalid_utf8_files += 1;
        }
        if flags & writer::FLAG_PARSE_ABANDONED != 0 {
            self.abandoned_parse_files.push(path.to_string());
        }
    }
}

/// Starts reading the definitions resolution will load, as they stand before this run writes
/// anything, beside extraction (see `resolve::NodePrefetch`); `None` when there is no file.
fn prefetch_graph(
    conn: &Connection,
    bootstrap: bool,
    bytes_to_read: u64,
) -> Result<Option<resolve::NodePrefetch>> {
    let Some(db) = conn.path().filter(|p| !p.is_empty()).map(PathBuf::from) else {
        return Ok(None);
    };
    let reader = if bootstrap {
        // A database started from the artifact keeps no log (`build_into`): its file changes
        // only when the run commits, or spills pages it has changed before that. Spilling is
        // off until resolution is done, so the changed pages stay in memory: a bound on what
        // is re-extracted bounds them.
        if bytes_to_read > PREFETCH_MAX_BYTES_TO_READ {
            return Ok(None);
        }
        conn.execute_batch("PRAGMA cache_spill = OFF")?;
        store::open_immutable(&db)
    } else {
        // In WAL mode: the reader keeps its snapshot while the run writes.
        store::open(&db, Mode::ReadOnly)
    };
    // Reading ahead only saves time: a run that cannot read ahead reads the graph later.
    Ok(reader.and_then(resolve::NodePrefetch::start).ok())
}

/// The most a run started from the artifact reads and writes again with the graph read
/// beside it (its changed pages are held in memory until the graph is read).
const PREFETCH_MAX_BYTES_TO_READ: u64 = 32 << 20;

/// Tables written by resolution, whose indexes a full build creates once it has stored them.
fn is_resolution_table(table: &str) -> bool {
    table == "edges" || table == "unresolved"
}

/// Measures consecutive stages of a run: wall time, and on Linux the process's CPU time and
/// its peak memory so far.
struct Lap {
    at: Instant,
    cpu_ms: Option<u128>,
}

impl Lap {
    fn new(started: Instant) -> Self {
        Lap {
            at: started,
            cpu_ms: process_usage().map(|(cpu, _)| cpu),
        }
    }

    fn record(&mut self, summary: &mut IndexSummary, stage: &'static str) {
        let now = Instant::now();
        summary.phases_ms.insert(stage, (now - self.at).as_millis());
        self.at = now;
        if let Some((cpu, peak_kib)) = process_usage() {
            if let Some(before) = self.cpu_ms {
                summary
                    .phases_cpu_ms
                    .insert(stage, cpu.saturating_sub(before));
            }
            summary.phases_peak_rss_mb.insert(stage, peak_kib / 1024);
            self.cpu_ms = Some(cpu);
        }
    }
}

/// This process's CPU time so far (user and system, all threads, in milliseconds at the
/// kernel's 10 ms resolution) and its peak resident memory in KiB; `None` without `/proc`.
fn process_usage() -> Option<(u128, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name, which may hold spaces: state is field 3, utime and stime
    // fields 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let tick = |i: usize| fields.get(i)?.parse::<u128>().ok();
    let cpu_ms = (tick(11)? + tick(12)?) * 10;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let peak_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some((cpu_ms, peak_kib))
}

fn read_and_extract(c: &Candidate, known: Option<&Known>) -> FileRead {
    let bytes = match std::fs::read(&c.abs) {
        Ok(b) => b,
        Err(_) => return FileRead::Skipped(SkipReason::Unreadable),
    };
    match walk::classify_content(&bytes) {
        ContentClass::Binary => return FileRead::Skipped(SkipReason::Binary),
        ContentClass::Generated => return FileRead::Skipped(SkipReason::Generated),
        ContentClass::Text => {}
    }
    let hash = git::blob_id(&bytes);
    if known.is_some_and(|k| k.hash == hash) {
        return FileRead::SameContent;
    }
    let mut flags = 0;
    let content = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            flags |= writer::FLAG_INVALID_UTF8;
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    // Secrets are taken out before anything reads the text: nothing downstream sees them.
    let file_name = c.path.rsplit('/').next().unwrap_or(&c.path);
    let redacted = if walk::is_env_file(file_name) {
        crate::index::redact::redact_env(&content)
    } else {
        crate::index::redact::redact(&content)
    };
    let (clean, redactions) = match redacted {
        (std::borrow::Cow::Owned(clean), found) => (Some(clean), found),
        (std::borrow::Cow::Borrowed(_), found) => (None, found),
    };
    let content = clean.unwrap_or(content);
    if walk::is_test_path(&c.path) {
        flags |= writer::FLAG_TEST;
    }
    let (language, extract) = match lang::for_path(&c.path) {
        Some(l) => (
            l.name,
            guarded(|| extract(l, &c.path, &content), &c.path, &content),
        ),
        None => (
            walk::text_language(&c.path),
            crate::lang::extract::file_only(&c.path, &content),
        ),
    };
    let words = crate::text::file_words(&c.path, &content);
    if extract.has_errors {
        flags |= writer::FLAG_SYNTAX_ERRORS;
    }
    if extract.timed_out {
        flags |= writer::FLAG_PARSE_ABANDONED;
    }
    if extract.deprecated {
        flags |= writer::FLAG_DEPRECATED;
    }
    let name_tokens = writer::name_tokens(&extract);
    let definition_words = writer::definition_words(&extract, &name_tokens);
    FileRead::Extracted(Box::new(Extracted {
        language,
        hash,
        flags,
        content,
        redactions,
        extract,
        words,
        definition_words,
        name_tokens,
    }))
}

/// Runs an extractor; should it panic (a defect, whatever the input), the file is kept as a
/// file node only and flagged abandoned, and the run goes on.
fn guarded(run: impl FnOnce() -> FileExtract, path: &str, content: &str) -> FileExtract {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
        let mut x = crate::lang::extract::file_only(path, content);
        x.timed_out = true;
        x
    })
}

/// Workers run ahead of the writer by at least `jobs * 16` items, and further while what is
/// ahead weighs less than this many bytes (up to `AHEAD_ITEMS`): one large file that takes
/// seconds to parse does not leave the other cores idle behind it, and memory stays bounded.
const AHEAD_BYTES: u64 = 32 << 20;
const AHEAD_ITEMS: usize = 4096;

/// Runs `work` over `items` on `jobs` threads and hands results to `sink` in item order, so
/// the database is written in the same order every time. Workers stay at most a bounded
/// window ahead of the writer (in items, and in the `weight` of the items), which bounds
/// memory.
fn process_in_order<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    weight: impl Fn(&T) -> u64,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> Result<()>,
) -> Result<()> {
    let jobs = jobs.max(1);
    let window = jobs * 16;
    // `ahead[i]`: the weight of the items before `i`.
    let ahead: Vec<u64> = std::iter::once(0)
        .chain(items.iter().scan(0u64, |sum, t| {
            *sum += weight(t);
            Some(*sum)
        }))
        .collect();
    let next = AtomicUsize::new(0);
    let written = AtomicUsize::new(0);
    // Whether the next item is within the window ahead of the writer.
    let may_start = || {
        let i = next.load(Ordering::Relaxed).min(items.len());
        let written = written.load(Ordering::Relaxed);
        i < written + window
            || (i < written + AHEAD_ITEMS && ahead[i] - ahead[written] < AHEAD_BYTES)
    };
    let all_started = || next.load(Ordering::Relaxed) >= items.len();
    // The first item whose work panicked: every worker stops, and the run fails instead of
    // waiting forever for that item's result.
    let panicked = AtomicUsize::new(usize::MAX);
    let handoff = Mutex::new(Handoff {
        done: BTreeMap::new(),
        held_back: 0,
        stopped: 0,
    });
    let ready = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let lock = || handoff.lock().expect("handoff lock");
                loop {
                    if !may_start() {
                        // The writer must not wait for more results while this one waits for it.
                        lock().held_back += 1;
                        ready.notify_one();
                        while !may_start() && panicked.load(Ordering::Relaxed) == usize::MAX {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                        }
                        lock().held_back -= 1;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() || panicked.load(Ordering::Relaxed) != usize::MAX {
                        break;
                    }
                    let r =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&items[i])));
                    let Ok(r) = r else {
                        let _ = panicked.compare_exchange(
                            usize::MAX,
                            i,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        );
                        break;
                    };
                    let mut h = lock();
                    h.done.insert(i, r);
                    let wake = all_started()
                        || h.held_back > 0
                        || h.run_from(written.load(Ordering::Relaxed)) >= HANDOFF_RUN;
                    drop(h);
                    if wake {
                        ready.notify_one();
                    }
                }
                lock().stopped += 1;
                ready.notify_one();
            });
        }
        let mut expected = 0usize;
        let result = (|| {
            let mut batch = Vec::with_capacity(HANDOFF_RUN);
            loop {
                {
                    let mut h = handoff.lock().expect("handoff lock");
                    loop {
                        let run = h.run_from(expected);
                        if run >= HANDOFF_RUN
                            || (run > 0 && (all_started() || h.held_back > 0))
                            || h.stopped == jobs
                        {
                            break;
                        }
                        h = ready.wait(h).expect("handoff lock");
                    }
                    while let Some(r) = h.done.remove(&(expected + batch.len())) {
                        batch.push(r);
                    }
                    if batch.is_empty() && h.stopped == jobs {
                        break;
                    }
                }
                for r in batch.drain(..) {
                    sink(expected, r)?;
                    expected += 1;
                    written.store(expected, Ordering::Relaxed);
                }
            }
            match panicked.load(Ordering::Relaxed) {
                usize::MAX => Ok(()),
                i => Err(anyhow::anyhow!(
                    "internal error: processing item {} of {} panicked",
                    i + 1,
                    items.len()
                )),
            }
        })();
        if result.is_err() {
            // Let the workers finish quickly: nothing more will be written.
            next.store(items.len(), Ordering::Relaxed);
            written.store(usize::MAX / 2, Ordering::Relaxed);
        }
        result
    })
}

/// Results waiting for the writer. The writer is woken when `HANDOFF_RUN` of them are ready
/// in order, when a worker waits for it or stops, and for each result once every item has
/// started: woken for every file, it had cost two context switches a file.
struct Handoff<R> {
    done: BTreeMap<usize, R>,
    /// Workers waiting for the writer to catch up.
    held_back: usize,
    /// Workers that stopped.
    stopped: usize,
}

const HANDOFF_RUN: usize = 8;

impl<R> Handoff<R> {
    /// How many results are ready in order from item `from`, up to `HANDOFF_RUN`.
    fn run_from(&self, from: usize) -> usize {
        self.done
            .range(from..from + HANDOFF_RUN)
            .enumerate()
            .take_while(|&(k, (&i, _))| i == from + k)
            .count()
    }
}

fn load_known(conn: &Connection) -> Result<HashMap<String, Known>> {
    let mut q = conn.prepare("SELECT path, size, mtime_ns, hash FROM files")?;
    let rows = q.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Known {
                size: r.get::<_, i64>(1)? as u64,
                mtime_ns: r.get(2)?,
                hash: r.get(3)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn fill_counts(conn: &Connection, s: &mut IndexSummary) -> Result<()> {
    s.files = conn.query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0))? as usize;
    let mut q = conn.prepare("SELECT language, count(*) FROM files GROUP BY language")?;
    for row in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (l, n) = row?;
        s.languages.insert(l, n as usize);
    }
    let mut q = conn.prepare("SELECT kind, count(*) FROM nodes GROUP BY kind")?;
    for row in q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (k, n) = row?;
        s.nodes_by_kind.insert(k, n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_cannot_be_read_is_skipped_as_unreadable() {
        // Deleted between the walk and the read, or denied: either way it is not read.
        let gone = Candidate {
            path: "gone.py".into(),
            abs: PathBuf::from("/nonexistent/codebase-indexer/gone.py"),
            size: 10,
            mtime_ns: 0,
            stat: walk::GitStat::default(),
        };
        assert!(matches!(
            read_and_extract(&gone, None),
            FileRead::Skipped(SkipReason::Unreadable)
        ));
        let dir = tempfile::tempdir().unwrap();
        let folder = Candidate {
            path: "folder.py".into(),
            abs: dir.path().to_path_buf(),
            size: 0,
            mtime_ns: 0,
            stat: walk::GitStat::default(),
        };
        assert!(matches!(
            read_and_extract(&folder, None),
            FileRead::Skipped(SkipReason::Unreadable)
        ));
    }

    #[test]
    fn a_panicking_extractor_keeps_the_file_as_a_file_node() {
        let x = guarded(
            || panic!("extractor defect"),
            "src/a.py",
            "def f():\n    pass\n",
        );
        assert!(x.timed_out);
        assert_eq!(x.nodes.len(), 1);
        assert!(x.refs.is_empty());
    }

    #[test]
    fn a_panicking_worker_fails_the_run_instead_of_hanging() {
        let items: Vec<u64> = (0..2_000).collect();
        let mut delivered = 0;
        let err = process_in_order(
            &items,
            2,
            |_| 1,
            |&i| {
                if i == 37 {
                    panic!("worker defect");
                }
                i
            },
            |_, _| {
                delivered += 1;
                Ok(())
            },
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("item 38 of 2000 panicked"),
            "{err}"
        );
        assert!(delivered <= 37);
    }

    /// What `process_in_order` hands its sink, on three threads.
    fn delivered(
        items: &[u64],
        weight: impl Fn(&u64) -> u64,
        work: impl Fn(&u64) -> u64 + Sync,
    ) -> Vec<(usize, u64)> {
        let mut seen = Vec::new();
        process_in_order(items, 3, weight, work, |i, r| {
            seen.push((i, r));
            Ok(())
        })
        .unwrap();
        seen
    }

    #[test]
    fn results_are_delivered_in_item_order() {
        let items: Vec<u64> = (0..500).collect();
        let seen = delivered(
            &items,
            |&i| i,
            |&i| {
                // Uneven work so results arrive out of order.
                std::thread::sleep(std::time::Duration::from_micros((i * 7919) % 300));
                i * 2
            },
        );
        let expected: Vec<(usize, u64)> = items.iter().map(|&i| (i as usize, i * 2)).collect();
        assert_eq!(seen, expected);
    }

    /// A slow item keeps the writer waiting while the other workers fill the window behind
    /// it and wait in turn: the writer is woken, takes every result in order, and no thread
    /// waits for another forever.
    #[test]
    fn a_slow_item_holds_back_the_window_without_a_stall() {
        let items: Vec<u64> = (0..300).collect();
        let seen = delivered(
            &items,
            // Each item weighs the whole byte allowance: only the item window is ahead.
            |_| AHEAD_BYTES,
            |&i| {
                if i % 100 == 3 {
                    std::thread::sleep(std::time::Duration::from_millis(30));
                }
                i + 1
            },
        );
        let expected: Vec<(usize, u64)> = items.iter().map(|&i| (i as usize, i + 1)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_failing_sink_stops_the_workers() {
        let items: Vec<u32> = (0..10_000).collect();
        let err = process_in_order(
            &items,
            2,
            |_| 1,
            |&i| i,
            |i, _| {
                if i == 10 {
                    anyhow::bail!("disk full")
                }
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
    }
}
