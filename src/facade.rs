//! `Index`: the one entry type every front end uses. It finds or builds a project's
//! database, answers every question over it, and keeps what is expensive to rebuild (the
//! definitions graph) until the database changes.

use crate::context::defgraph::Repo;
use crate::context::{impact, pack, repomap, repopack, skeleton, tokens::Tokenizer};
use crate::error::{Error, Result};
use crate::eval::{self, context as eval_context};
use crate::index::{self, IndexSummary, Progress, RunOptions};
use crate::model::NodeKind;
use crate::query::{self, blast, rank_files, trace};
use crate::store::{self, artifact, project, staging, Mode};
use rusqlite::Connection;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// When a run writes the committed artifact into the tree. Exporting it costs seconds on a
/// large repository (the canonical copy is rebuilt and recompressed whole), so the everyday
/// edit loop leaves an existing one alone; `indexer hook install` refreshes it at each
/// commit, `indexer export` on demand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArtifactWrite {
    /// Only when the tree has none yet (its first index).
    #[default]
    IfAbsent,
    /// When the tree has none, not during the run: `IndexSummary::artifact_due` names it
    /// for the caller to write when it suits (`Index::write_due_artifact`). `indexer index`
    /// does this from a detached process, so the first index returns without the export.
    Deferred,
    /// After every run that changed it (`indexer index --export`).
    Always,
    /// Never (`indexer index --no-artifact`).
    Never,
}

/// How to build or refresh an index. `IndexOptions::default()` is what `indexer index`
/// does with no flags, except that the command leaves a tree's first artifact to a
/// background process (`ArtifactWrite::Deferred`); the library writes it before returning.
#[derive(Clone)]
pub struct IndexOptions {
    /// Database file to use instead of the project's one in the cache folder.
    pub db: Option<PathBuf>,
    /// Project name (default: the indexed folder's name).
    pub project: Option<String>,
    /// Gitignore-style globs of paths to skip.
    pub excludes: Vec<String>,
    /// Files larger than this are skipped.
    pub max_file_bytes: u64,
    /// Index `.env` files and their variants (skipped by default), every value redacted.
    pub include_env: bool,
    /// Parallel parser threads (default: all cores).
    pub jobs: Option<usize>,
    /// Ignore any existing index and build from scratch.
    pub rebuild: bool,
    /// Keep only edges at least this confident (0..1); other sites go to `unresolved`.
    pub min_confidence: f64,
    /// Guess a name shared by at most this many definitions.
    pub fuzzy_limit: usize,
    /// When to write the committed artifact (`.codebase-index/graph.db.zst`).
    pub artifact: ArtifactWrite,
    /// Its zstd level (1-22).
    pub compression_level: i32,
    /// Called with (stage, files done, files to do) as the run goes.
    pub progress: Option<Progress>,
}

impl IndexOptions {
    pub const DEFAULT_MAX_FILE_BYTES: u64 = index::DEFAULT_MAX_FILE_BYTES;
    pub const DEFAULT_FUZZY_LIMIT: usize = index::DEFAULT_FUZZY_LIMIT;
    pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.0;
    pub const DEFAULT_COMPRESSION_LEVEL: i32 = artifact::DEFAULT_LEVEL;
    /// Byte offsets are stored as 32-bit values; no source file comes near this.
    const MAX_FILE_BYTES_LIMIT: u64 = 1 << 30;

    fn validate(&self) -> Result<()> {
        check_confidence(self.min_confidence)?;
        artifact::check_level(self.compression_level)?;
        if self.max_file_bytes > Self::MAX_FILE_BYTES_LIMIT {
            return Err(Error::invalid(format!(
                "--max-file-bytes {} is too large: files over {} bytes cannot be indexed",
                self.max_file_bytes,
                Self::MAX_FILE_BYTES_LIMIT
            )));
        }
        Ok(())
    }
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            db: None,
            project: None,
            excludes: Vec::new(),
            max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES,
            include_env: false,
            jobs: None,
            rebuild: false,
            min_confidence: Self::DEFAULT_MIN_CONFIDENCE,
            fuzzy_limit: Self::DEFAULT_FUZZY_LIMIT,
            artifact: ArtifactWrite::default(),
            compression_level: Self::DEFAULT_COMPRESSION_LEVEL,
            progress: None,
        }
    }
}

impl std::fmt::Debug for IndexOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexOptions")
            .field("db", &self.db)
            .field("project", &self.project)
            .field("excludes", &self.excludes)
            .field("max_file_bytes", &self.max_file_bytes)
            .field("include_env", &self.include_env)
            .field("jobs", &self.jobs)
            .field("rebuild", &self.rebuild)
            .field("min_confidence", &self.min_confidence)
            .field("fuzzy_limit", &self.fuzzy_limit)
            .field("artifact", &self.artifact)
            .field("compression_level", &self.compression_level)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Full-text search options.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub limit: usize,
    /// Only definitions of this kind.
    pub kind: Option<NodeKind>,
}

impl SearchOptions {
    pub const DEFAULT_LIMIT: usize = 20;
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: Self::DEFAULT_LIMIT,
            kind: None,
        }
    }
}

/// How far a trace of callers or callees goes.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// Hops to follow.
    pub depth: usize,
    /// Follow only edges at least this confident (0..1); weaker ones are listed apart.
    pub min_confidence: f64,
}

impl TraceOptions {
    pub const DEFAULT_DEPTH: usize = 3;
    pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.0;
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            depth: Self::DEFAULT_DEPTH,
            min_confidence: Self::DEFAULT_MIN_CONFIDENCE,
        }
    }
}

/// An open index: a project's database, a database file, or a committed artifact.
///
/// Queries take `&self`. Each one first checks whether the database changed since the last
/// (another process re-indexed it in place, or replaced it with a rebuild) and reloads what
/// it keeps in memory only then. One `Index` serves one thread at a time; it can be moved
/// to another thread (wrap it in a `Mutex` to share it).
///
/// A committed artifact answers the same questions without the tree or its database, and a
/// failure says what went wrong in a form to match on:
///
/// ```
/// use codebase_indexer::{Error, Index, IndexOptions, ARTIFACT_DIR, ARTIFACT_FILE};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let tree = tempfile::tempdir()?;
/// std::fs::write(tree.path().join("util.go"), "package util\n\nfunc Clamp(x int) int { return x }\n")?;
/// let cache = tempfile::tempdir()?;
/// let options = IndexOptions {
///     db: Some(cache.path().join("util.db")),
///     ..IndexOptions::default() // the first index also writes the artifact into the tree
/// };
/// Index::build(tree.path(), options)?;
///
/// let artifact = tree.path().join(ARTIFACT_DIR).join(ARTIFACT_FILE);
/// let index = Index::open(&artifact)?;
/// assert_eq!(index.source("Clamp")?.path, "util.go");
/// match index.source("Clamp2") {
///     Err(Error::NotFound { name }) => assert_eq!(name, "Clamp2"),
///     other => panic!("{other:?}"),
/// }
/// # Ok(())
/// # }
/// ```
pub struct Index {
    /// The file as the caller named it: the database, or the artifact it was read from.
    location: PathBuf,
    /// The database file, when reading one in place (not a private copy of an artifact).
    db: Option<PathBuf>,
    conn: RefCell<Connection>,
    /// Which file `conn` has open, to notice when a rebuild renamed another into its place.
    opened: Cell<Option<FileIdentity>>,
    /// Definitions graphs, possibly shared with other indexes of the same database.
    graphs: GraphCache,
    /// The identity of the database's contents (see `GraphCache`) at a `PRAGMA
    /// data_version` of `conn`.
    contents: RefCell<Option<(i64, String)>>,
    /// Tokenizers already loading or loaded (their tables live as long as the process).
    warmed: Cell<[bool; 2]>,
    /// How `refresh` re-indexes: the root and the options of the build.
    build: Option<(PathBuf, IndexOptions)>,
}

impl Index {
    /// How many files `rank_files` lists unless asked otherwise.
    pub const DEFAULT_RANKED_FILES: usize = 20;

    /// Opens an index: `path` is a folder of an indexed tree (the project whose root is it
    /// or the nearest folder above it), a database file, or an artifact (`graph.db.zst`,
    /// decompressed to a private temporary file).
    pub fn open(path: impl AsRef<Path>) -> Result<Index> {
        let path = path.as_ref();
        if path.is_dir() {
            return Self::open_database(&project::for_folder(path)?);
        }
        Self::open_database(path)
    }

    /// Opens the project indexed under `name` (`IndexOptions::project`, or the name of the
    /// folder it was indexed from).
    pub fn open_project(name: &str) -> Result<Index> {
        Self::open_database(&project::by_name(name)?)
    }

    fn open_database(path: &Path) -> Result<Index> {
        if path.extension().is_some_and(|e| e == "zst") {
            return Self::open_artifact(path);
        }
        let conn = store::open(path, Mode::ReadOnly)?;
        Ok(Index::with_connection(
            path.to_path_buf(),
            Some(path.to_path_buf()),
            conn,
        ))
    }

    fn open_artifact(path: &Path) -> Result<Index> {
        let conn = artifact::open_copy(path)?;
        Ok(Index::with_connection(path.to_path_buf(), None, conn))
    }

    fn with_connection(location: PathBuf, db: Option<PathBuf>, conn: Connection) -> Index {
        Index {
            opened: Cell::new(db.as_deref().and_then(FileIdentity::of)),
            location,
            db,
            conn: RefCell::new(conn),
            graphs: GraphCache::default(),
            contents: RefCell::new(None),
            warmed: Cell::new([false; 2]),
            build: None,
        }
    }

    /// Indexes the tree at `root` (incrementally when an index exists, unless
    /// `options.rebuild`) and opens the result.
    pub fn build(root: impl AsRef<Path>, options: IndexOptions) -> Result<(Index, IndexSummary)> {
        let root = canonical_root(root.as_ref())?;
        let (db, summary) = run_index(&root, &options)?;
        let mut index = Self::open_database(&db)?;
        index.build = Some((root, options));
        Ok((index, summary))
    }

    /// Brings the index up to date with its tree: an incremental run with the options it was
    /// built with (`rebuild` aside), or with the defaults when it was opened (then without
    /// writing the committed artifact). An index read from an artifact has no tree to
    /// refresh from.
    pub fn refresh(&mut self) -> Result<IndexSummary> {
        if self.build.is_none() {
            let db = self.db.clone().ok_or_else(|| {
                Error::invalid("an index opened from an artifact cannot be refreshed")
            })?;
            let root = self.meta("root")?.ok_or_else(|| {
                Error::invalid(format!("{} records no root folder", db.display()))
            })?;
            // A refresh brings the index up to date for reading; the committed artifact is
            // the business of `indexer index`, the hook and CI, so it is left alone.
            let options = IndexOptions {
                db: Some(db),
                project: self.meta("project")?,
                artifact: ArtifactWrite::Never,
                ..IndexOptions::default()
            };
            self.build = Some((PathBuf::from(root), options));
        }
        let (root, options) = self.build.as_ref().expect("set above");
        let options = IndexOptions {
            rebuild: false,
            ..options.clone()
        };
        let (_, summary) = run_index(root, &options)?;
        self.current()?;
        Ok(summary)
    }

    /// Loads `artifact` as the index of the tree at `root` (only `options.db` and
    /// `options.project` are used), replacing any index it had.
    pub fn import(
        artifact: impl AsRef<Path>,
        root: impl AsRef<Path>,
        options: IndexOptions,
    ) -> Result<Index> {
        let artifact = artifact.as_ref();
        let root = root.as_ref();
        let root = root.canonicalize().map_err(Error::io(
            root,
            format!("no such directory: {}", root.display()),
        ))?;
        let db = db_for(&options, &root)?;
        let project = project_name(&options, &root);
        artifact::import(artifact, &root, &db, &project)?;
        let mut index = Self::open_database(&db)?;
        index.build = Some((root, options));
        Ok(index)
    }

    /// Where the committed artifact of this index goes: `.codebase-index/graph.db.zst` in
    /// the indexed tree.
    pub fn artifact_path(&self) -> Result<PathBuf> {
        let root = self
            .meta("root")?
            .ok_or_else(|| Error::invalid("the index records no root folder: pass --output"))?;
        Ok(artifact::path_in(Path::new(&root)))
    }

    /// Writes the committed artifact of this index to `output` (a `.db.zst` path) at zstd
    /// `level`, with `artifact.json` beside it. `None` when the artifact there is already
    /// this index's (nothing rewritten).
    pub fn export(&self, output: &Path, level: i32) -> Result<Option<artifact::Manifest>> {
        let db = self
            .db
            .as_deref()
            .ok_or_else(|| Error::invalid("the index is already an artifact: copy the file"))?;
        Ok(artifact::export(db, output, level)?)
    }

    /// Writes the artifact a run with `ArtifactWrite::Deferred` left due, at zstd `level`.
    /// Meant for a caller nobody waits on (a detached process, a background thread): a
    /// failure is also recorded beside the database, for `status` to report.
    pub fn write_due_artifact(&self, level: i32) -> Result<Option<artifact::Manifest>> {
        let written = self
            .artifact_path()
            .and_then(|path| self.export(&path, level));
        if let (Err(e), Some(db)) = (&written, &self.db) {
            artifact::record_failure(db, &format!("{e:#}"));
        }
        written
    }

    /// The path the index was opened from (the database, or the artifact).
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// The indexed tree's root, as recorded when it was indexed.
    pub fn root(&self) -> Result<Option<PathBuf>> {
        Ok(self.meta("root")?.map(PathBuf::from))
    }

    /// Counts, languages, graph health, redactions, and the committed artifact's freshness.
    pub fn status(&self) -> Result<query::Status> {
        let mut status = self.read(|conn| query::status(conn, &self.location))?;
        status.artifact = self.artifact_freshness()?;
        Ok(status)
    }

    /// How the committed artifact in the indexed tree stands against this index; `None` for
    /// an index read from an artifact, or one whose tree is gone.
    pub fn artifact_freshness(&self) -> Result<Option<artifact::Freshness>> {
        let Some(root) = self.root()?.filter(|r| self.db.is_some() && r.is_dir()) else {
            return Ok(None);
        };
        let db = self.db.as_deref().expect("checked above");
        self.read(|conn| Ok(Some(artifact::freshness(conn, db, &root))))
    }

    /// Full-text search over definitions (names, sub-tokens, signatures, docstrings).
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<query::Hit>> {
        self.read(|conn| query::search(conn, query, options.limit, options.kind))
    }

    /// The source of a definition (qualified name, or an unambiguous short name or suffix)
    /// or a file (path), with its callers and callees.
    pub fn source(&self, name: &str) -> Result<query::Source> {
        self.read(|conn| query::get_source(conn, name))
    }

    /// A file's stored text by repository-relative path (what the index holds, so an
    /// artifact answers without the tree).
    pub fn file(&self, path: &str) -> Result<query::FileText> {
        self.read(|conn| query::file_text(conn, path))
    }

    /// The indexed files whose path starts with `prefix`, in path order.
    pub fn files(&self, prefix: &str) -> Result<Vec<query::FileEntry>> {
        self.read(|conn| query::list_files(conn, prefix))
    }

    /// Callers (or callees) of a definition, breadth-first, with the unresolved sites.
    pub fn trace(
        &self,
        name: &str,
        direction: trace::Direction,
        options: &TraceOptions,
    ) -> Result<trace::Trace> {
        check_confidence(options.min_confidence)?;
        self.read(|conn| {
            let root = query::resolve_target(conn, name)?;
            trace::trace(conn, root, direction, options.depth, options.min_confidence)
        })
    }

    /// The blast radius of a definition or a file: its transitive callers as a tree with
    /// their confidences, the unresolved call sites that might also reach it, and the tests
    /// among the callers.
    pub fn blast(&self, options: &blast::Options) -> Result<blast::Blast> {
        self.read(|conn| blast::blast(conn, options))
    }

    /// Files ranked for a natural-language query (an issue text, a question, a traceback).
    pub fn rank_files(&self, query: &str, limit: usize) -> Result<Vec<rank_files::RankedFile>> {
        self.read(|conn| rank_files::rank_files(conn, query, limit))
    }

    /// The repository as signatures grouped by file, under a token budget.
    pub fn skeleton(&self, options: &skeleton::Options) -> Result<skeleton::Skeleton> {
        self.warm(options.tokenizer);
        let prefix = options.path_prefix.as_deref().unwrap_or("");
        self.with_graph_of(prefix, |conn, repo| {
            skeleton::render_in(conn, repo, options)
        })
    }

    /// The definitions that matter most (personalized PageRank), under a token budget.
    pub fn map(&self, options: &repomap::Options) -> Result<repomap::RepoMap> {
        self.warm(options.tokenizer);
        self.with_graph(|conn, repo| repomap::render_in(conn, repo, options))
    }

    /// The code around a definition, a file or a question, under a token budget.
    pub fn pack(&self, options: &pack::Options) -> Result<pack::Pack> {
        self.warm(options.tokenizer);
        self.with_graph(|conn, repo| pack::build_in(conn, repo, options))
    }

    /// The whole repository as one document under the budget: every path, and each file in
    /// full, as its skeleton or as metadata, by rank.
    pub fn pack_repository(&self, options: &repopack::Options) -> Result<repopack::RepoPack> {
        self.warm(options.tokenizer);
        let root = self.root()?;
        self.with_graph(|conn, repo| repopack::pack_in(conn, repo, options, root.as_deref()))
    }

    /// The state the last remembered whole-repository pack of this tree left
    /// (`remember_pack`), if there is one: what `RepoPackOptions::since` takes for a pack of
    /// only what changed since.
    pub fn last_pack(&self) -> Result<Option<repopack::PackState>> {
        let file = self.pack_state_file()?;
        let bytes = match std::fs::read(&file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&file, "cannot read the last pack's state")(e)),
        };
        let state: repopack::PackState = serde_json::from_slice(&bytes)
            .ok()
            .filter(|s: &repopack::PackState| s.schema == repopack::STATE_SCHEMA)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{} is not the state of a pack this version writes: delete it, and the next pack holds every file",
                    file.display()
                ))
            })?;
        Ok(Some(state))
    }

    /// Keeps what `pack` saw as the last pack of this tree, for the next `last_pack`.
    pub fn remember_pack(&self, pack: &repopack::RepoPack) -> Result<()> {
        let file = self.pack_state_file()?;
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(Error::io(dir, "cannot create the folder"))?;
        }
        let json = serde_json::to_vec(&pack.state).map_err(anyhow::Error::from)?;
        Ok(staging::write_atomically(&file, &json)?)
    }

    fn pack_state_file(&self) -> Result<PathBuf> {
        let root = self.root()?.ok_or_else(|| {
            Error::invalid("the index records no root folder: a pack of what changed needs one")
        })?;
        Ok(project::pack_state_file(&root)?)
    }

    /// What a git diff changes and the context it needs, under a token budget. Reads the
    /// diff from the repository holding the indexed tree; does not refresh the index first
    /// (call `refresh` for a work-tree diff on current code).
    pub fn impact(&self, options: &impact::Options) -> Result<impact::Impact> {
        check_depth(options.depth)?;
        self.warm(options.tokenizer);
        let root = self.root()?.ok_or_else(|| {
            Error::invalid("impact needs the indexed tree (this index was opened from an artifact)")
        })?;
        let db = self.db.as_deref().ok_or_else(|| {
            Error::invalid(
                "impact needs the index's database (this index was opened from an artifact)",
            )
        })?;
        // Git, the tree and the changed definitions' matches are read on another thread.
        std::thread::scope(|s| {
            let pending = s.spawn(|| impact::prepare(&root, db, options));
            let version = self.current()?;
            let conn = self.conn.borrow();
            let stamp = self.contents_stamp(&conn, version)?;
            let held = self.graphs.get(&stamp, "");
            let prepared = pending
                .join()
                .map_err(|_| anyhow::anyhow!("reading the diff failed"))??;
            // The whole graph when this index holds it; otherwise the files the diff's
            // analysis reaches are read (a tenth of Django's for a few changed functions).
            let repo = match held {
                Some(repo) => repo,
                None => {
                    let files = impact::files_needed(&conn, &prepared, options.depth)?;
                    Arc::new(Repo::load_files(&conn, &files)?)
                }
            };
            Ok(impact::build_in(&conn, &repo, prepared, options)?)
        })
    }

    /// Reads the whole definitions graph into this index's cache unless it holds it, so that
    /// an impact answers from it instead of reading the part it needs: what a server, which
    /// answers many questions about one index, does.
    pub fn load_graph(&self) -> Result<()> {
        self.with_graph(|_, _| Ok(()))
    }

    /// Retrieval on tasks with known answers: `rank-files` against BM25 over whole files.
    pub fn eval(&self, tasks: &[eval::Task], options: &eval::EvalOptions) -> Result<eval::Report> {
        self.read(|conn| eval::run(conn, tasks, options))
    }

    /// What the repo map or the query pack of each task's text holds at each budget.
    pub fn eval_context(
        &self,
        tasks: &[eval::Task],
        renderer: eval_context::Renderer,
        budgets: &[usize],
        tokenizer: Tokenizer,
    ) -> Result<eval_context::Report> {
        self.warm(tokenizer);
        self.read(|conn| eval_context::run(conn, tasks, renderer, budgets, tokenizer))
    }

    /// Runs `f` on the current database, turning its failure into the library's error.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> anyhow::Result<T>) -> Result<T> {
        self.current()?;
        let conn = self.conn.borrow();
        Ok(f(&conn)?)
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.read(|conn| store::get_meta(conn, key))
    }

    /// Reopens the database if a rebuild put another file in its place, and forgets the
    /// graph if the database changed since it was read. Returns the database's version.
    fn current(&self) -> Result<i64> {
        if let Some(db) = &self.db {
            let now = FileIdentity::of(db);
            if now.is_some() && now != self.opened.get() {
                *self.conn.borrow_mut() = store::open(db, Mode::ReadOnly)?;
                self.opened.set(now);
                // Another connection: its versions are not comparable with the last one's.
                *self.contents.borrow_mut() = None;
            }
        }
        self.data_version()
    }

    /// The identity of what the database holds now: the location, the resolution settings
    /// and every file's path and content hash, which determine the graph (an incremental
    /// index ends identical to a full one). Recomputed only when the database changed.
    fn contents_stamp(&self, conn: &Connection, version: i64) -> Result<String> {
        if let Some((v, stamp)) = &*self.contents.borrow() {
            if *v == version {
                return Ok(stamp.clone());
            }
        }
        let stamp = format!(
            "{}\n{}\n{}",
            self.location.display(),
            store::get_meta(conn, "resolution")?.unwrap_or_default(),
            artifact::fingerprint(conn)?
        );
        *self.contents.borrow_mut() = Some((version, stamp.clone()));
        Ok(stamp)
    }

    /// A handle on this index's graphs, to share them with other indexes of the same
    /// database (`with_graph_cache`).
    pub fn graph_cache(&self) -> GraphCache {
        self.graphs.clone()
    }

    /// Uses `cache` for definitions graphs, shared with the indexes it came from: a graph
    /// is read once for all of them. Indexes of other databases must not share one.
    pub fn with_graph_cache(mut self, cache: GraphCache) -> Index {
        self.graphs = cache;
        self
    }

    fn data_version(&self) -> Result<i64> {
        let conn = self.conn.borrow();
        conn.query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| Error::Other {
                message: format!("cannot read {}: {e}", self.location.display()),
            })
    }

    /// Runs `f` on the current database and its whole definitions graph, which is read once
    /// per database version.
    fn with_graph<T>(&self, f: impl FnOnce(&Connection, &Repo) -> anyhow::Result<T>) -> Result<T> {
        self.with_graph_of("", f)
    }

    /// `with_graph` for the files under a path prefix (the whole repository for "").
    fn with_graph_of<T>(
        &self,
        prefix: &str,
        f: impl FnOnce(&Connection, &Repo) -> anyhow::Result<T>,
    ) -> Result<T> {
        let version = self.current()?;
        let conn = self.conn.borrow();
        let stamp = self.contents_stamp(&conn, version)?;
        let repo = self.graphs.get_or_load(&stamp, prefix, || {
            Repo::load(&conn, Some(prefix).filter(|p| !p.is_empty()))
        })?;
        Ok(f(&conn, &repo)?)
    }

    /// Starts loading a tokenizer's tables on another thread (about 0.3 s for o200k), so
    /// that reading the graph overlaps with it.
    fn warm(&self, tokenizer: Tokenizer) {
        let slot = tokenizer as usize;
        let mut warmed = self.warmed.get();
        if !warmed[slot] {
            tokenizer.warm_in_background();
            warmed[slot] = true;
            self.warmed.set(warmed);
        }
    }
}

/// Definitions graphs read from one database: the whole repository's (under the empty
/// prefix) and those of the path prefixes asked for last, for the database's contents they
/// were read from. Clones share the graphs, so indexes of one database handed the same cache
/// (a server's readers) read each graph once, whichever asks first.
#[derive(Clone, Default)]
pub struct GraphCache(Arc<Mutex<Vec<CachedGraph>>>);

struct CachedGraph {
    stamp: String,
    prefix: String,
    repo: Arc<Repo>,
}

impl GraphCache {
    /// Graphs of path prefixes kept besides the whole repository's.
    const PREFIXES_KEPT: usize = 8;

    /// The graph of `prefix` for the contents `stamp`, if it is held.
    fn get(&self, stamp: &str, prefix: &str) -> Option<Arc<Repo>> {
        let graphs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        graphs
            .iter()
            .find(|g| g.stamp == stamp && g.prefix == prefix)
            .map(|g| Arc::clone(&g.repo))
    }

    /// The graph of `prefix` for the contents `stamp`, read by `load` if it is not held.
    /// The cache stays locked while a graph is read, so it is read once however many ask.
    fn get_or_load(
        &self,
        stamp: &str,
        prefix: &str,
        load: impl FnOnce() -> anyhow::Result<Repo>,
    ) -> Result<Arc<Repo>> {
        let mut graphs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = graphs
            .iter()
            .find(|g| g.stamp == stamp && g.prefix == prefix)
        {
            return Ok(Arc::clone(&g.repo));
        }
        let repo = Arc::new(load()?);
        // Graphs of other contents are stale (or, for a reader behind, about to be).
        graphs.retain(|g| g.stamp == stamp);
        graphs.push(CachedGraph {
            stamp: stamp.to_string(),
            prefix: prefix.to_string(),
            repo: Arc::clone(&repo),
        });
        // Oldest prefixes go first; the whole repository's graph stays.
        while graphs.iter().filter(|g| !g.prefix.is_empty()).count() > Self::PREFIXES_KEPT {
            let oldest = graphs
                .iter()
                .position(|g| !g.prefix.is_empty())
                .expect("counted above");
            graphs.remove(oldest);
        }
        Ok(repo)
    }
}

impl repopack::RepoPack {
    /// Writes the pack's text to `path` in one rename (a reader never sees part of it).
    pub fn write_to(&self, path: impl AsRef<Path>) -> Result<()> {
        Ok(staging::write_atomically(
            path.as_ref(),
            self.text.as_bytes(),
        )?)
    }

    /// Writes the pack's text gzipped to `path` in one rename.
    pub fn write_gzipped_to(&self, path: impl AsRef<Path>) -> Result<()> {
        Ok(staging::write_atomically(path.as_ref(), &self.gzipped())?)
    }

    /// The pack's text gzipped, the same bytes for the same text (no name, no time).
    pub fn gzipped(&self) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::best());
        // Writing into memory cannot fail.
        let _ = gz.write_all(self.text.as_bytes());
        gz.finish().unwrap_or_default()
    }
}

impl pack::Pack {
    /// Writes the pack's text to `path` in one rename (a reader never sees part of it).
    pub fn write_to(&self, path: impl AsRef<Path>) -> Result<()> {
        Ok(staging::write_atomically(
            path.as_ref(),
            self.text.as_bytes(),
        )?)
    }
}

impl eval::Report {
    /// The report as the table `indexer eval` prints.
    pub fn write_text(&self, out: &mut impl std::io::Write) -> Result<()> {
        Ok(eval::print(self, out)?)
    }
}

impl eval_context::Report {
    /// The report as the table `indexer eval --mode map|pack` prints.
    pub fn write_text(&self, out: &mut impl std::io::Write) -> Result<()> {
        Ok(eval_context::print(self, out)?)
    }
}

impl eval::Task {
    /// Reads a tasks file: JSON lines of `{"id", "query", "gold_files", "gold_symbols"?}`.
    pub fn read_all(path: impl AsRef<Path>) -> Result<Vec<eval::Task>> {
        Ok(eval::read_tasks(path.as_ref())?)
    }
}

/// Which file a path names: device and inode, so a rename onto the path is noticed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FileIdentity(u64, u64);

impl FileIdentity {
    #[cfg(unix)]
    fn of(path: &Path) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileIdentity(m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn of(_path: &Path) -> Option<FileIdentity> {
        None
    }
}

/// Hops of the call graph an impact walks: beyond a few, every definition is reached.
const MAX_IMPACT_DEPTH: usize = 6;

fn check_depth(depth: usize) -> Result<()> {
    if depth > MAX_IMPACT_DEPTH {
        return Err(Error::invalid(format!(
            "--depth {depth} is too deep: use at most {MAX_IMPACT_DEPTH}"
        )));
    }
    Ok(())
}

fn check_confidence(c: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&c) {
        return Err(Error::invalid(format!(
            "--min-confidence {c} is out of range: use a value from 0 to 1"
        )));
    }
    Ok(())
}

fn canonical_root(root: &Path) -> Result<PathBuf> {
    root.canonicalize().map_err(Error::io(
        root,
        format!("cannot index {}: no such directory", root.display()),
    ))
}

/// The database for indexing `root`: `options.db`, or the project's in the cache.
fn db_for(options: &IndexOptions, root: &Path) -> Result<PathBuf> {
    match &options.db {
        Some(db) => Ok(db.clone()),
        None => Ok(project::db_for_root(root, options.project.as_deref())?),
    }
}

/// `options.project`, or the indexed folder's name.
fn project_name(options: &IndexOptions, root: &Path) -> String {
    options.project.clone().unwrap_or_else(|| {
        root.file_name()
            .map_or("root".into(), |n| n.to_string_lossy().into_owned())
    })
}

/// Indexes `root` as `options` say; returns the database written and what the run did.
fn run_index(root: &Path, options: &IndexOptions) -> Result<(PathBuf, IndexSummary)> {
    options.validate()?;
    let db = db_for(options, root)?;
    let committed = artifact::path_in(root);
    let run = RunOptions {
        root: root.to_path_buf(),
        db: db.clone(),
        project: project_name(options, root),
        excludes: options.excludes.clone(),
        max_file_bytes: options.max_file_bytes,
        include_env: options.include_env,
        jobs: options
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())),
        rebuild: options.rebuild,
        min_confidence: options.min_confidence,
        fuzzy_limit: options.fuzzy_limit,
        artifact_level: match options.artifact {
            ArtifactWrite::Always => Some(options.compression_level),
            ArtifactWrite::IfAbsent if !committed.exists() => Some(options.compression_level),
            ArtifactWrite::IfAbsent | ArtifactWrite::Deferred | ArtifactWrite::Never => None,
        },
        progress: options.progress.as_deref(),
    };
    let mut summary = index::run(&run)?;
    if options.artifact == ArtifactWrite::Deferred && !committed.exists() {
        summary.artifact_due = Some(committed.display().to_string());
    }
    Ok((db, summary))
}

impl std::str::FromStr for NodeKind {
    type Err = Error;

    /// A kind by name, case-insensitively (`method`, `Class`).
    fn from_str(s: &str) -> Result<NodeKind> {
        NodeKind::parse(s).ok_or_else(|| {
            Error::invalid(format!(
                "unknown kind {s:?}: use one of {}",
                NodeKind::ALL.map(NodeKind::as_str).join(", ")
            ))
        })
    }
}
