//! The repositories one server answers for, each kept fresh: a tree is watched for changes
//! and brought up to date incrementally before the next answer; a remote is fetched in the
//! background; an artifact is read-only. A refresh that fails leaves the last good index
//! in service and its error on show.

use super::registry::{RepoEntry, RepoKind};
use crate::error::{Error, Result};
use crate::facade::{ArtifactWrite, GraphCache, Index, IndexOptions};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// How often a tree is stat-checked when no watcher reports its changes, and how soon a
/// failed refresh is tried again.
pub const UNWATCHED_CHECK: Duration = Duration::from_secs(2);
/// A watched tree is still checked this often, in case an event was lost.
pub const WATCHED_CHECK: Duration = Duration::from_secs(60);

/// One served repository.
pub struct Repo {
    pub name: String,
    pub kind: RepoKind,
    pub url: Option<String>,
    /// The tree (trees and remotes).
    pub root: Option<PathBuf>,
    /// The database or artifact the readers open.
    location: Option<PathBuf>,
    /// The index that refreshes (trees and remotes); its lock orders refreshes.
    refresher: Option<Mutex<Index>>,
    /// Indexes for the queries that read the database alone, and for ranking files: a lookup
    /// never waits behind a ranking, several times its cost.
    readers: Pool,
    ranking_readers: Pool,
    /// Indexes of the packs, and of the maps: a map (a few times cheaper) never waits behind
    /// a pack (measured on Django under 8 clients: map p50 92 to 57-62 ms, pack about the
    /// same; the cheap queries' p50 up by 1-3 ms).
    pack_readers: Pool,
    map_readers: Pool,
    /// The skeleton's own index (its graphs are mostly of path prefixes, small and quick to
    /// render): a skeleton never waits behind a map or a pack.
    skeleton_readers: Pool,
    /// The definitions graphs every reader shares, each read once per change of the
    /// database.
    graphs: GraphCache,
    /// Set by the watcher (or a fetch) when the tree changed since the last refresh.
    dirty: Arc<AtomicBool>,
    /// Kept for as long as the repository is served; `None` when the platform refused one.
    watcher: Option<notify::RecommendedWatcher>,
    state: Mutex<State>,
}

/// What a query reads, for the index it runs on.
#[derive(Clone, Copy)]
pub enum Reads {
    /// A name, a source, a trace, a file, a folder: a few reads.
    Lookup,
    /// Files ranked for a whole text.
    Ranking,
}

/// Which renderer a call runs, for the index it runs on.
#[derive(Clone, Copy)]
pub enum Renderer {
    Skeleton,
    /// The map and the pack, on the whole repository's graph.
    Map,
    Pack,
}

/// Open indexes of one repository, one per concurrent call and at most `max`: a call
/// finding all busy waits for one, so connections and memory stay bounded under any load.
struct Pool {
    slots: Mutex<Slots>,
    free: Condvar,
    max: usize,
}

#[derive(Default)]
struct Slots {
    idle: Vec<Index>,
    /// Indexes open, idle or busy.
    open: usize,
}

impl Pool {
    fn new(max: usize) -> Pool {
        Pool {
            slots: Mutex::new(Slots::default()),
            free: Condvar::new(),
            max: max.max(1),
        }
    }

    fn with<T>(
        &self,
        open: impl FnOnce() -> Result<Index>,
        f: impl FnOnce(&Index) -> Result<T>,
    ) -> Result<T> {
        let index = {
            let mut slots = lock(&self.slots);
            loop {
                if let Some(index) = slots.idle.pop() {
                    break index;
                }
                if slots.open < self.max {
                    slots.open += 1;
                    drop(slots);
                    match open() {
                        Ok(index) => break index,
                        Err(e) => {
                            lock(&self.slots).open -= 1;
                            self.free.notify_one();
                            return Err(e);
                        }
                    }
                }
                slots = self.free.wait(slots).unwrap_or_else(|p| p.into_inner());
            }
        };
        let answer = f(&index);
        lock(&self.slots).idle.push(index);
        self.free.notify_one();
        answer
    }
}

#[derive(Clone, Debug)]
struct State {
    /// When the tree was last read by a refresh that succeeded (or found nothing to do).
    fresh_at: Option<SystemTime>,
    last_check: Instant,
    /// Why the index could not be opened at all; the repository answers nothing.
    open_error: Option<String>,
    refresh_error: Option<String>,
    fetch_error: Option<String>,
    fetched_at: Option<SystemTime>,
}

/// What an answer says about the index it came from.
#[derive(Clone, Debug, Serialize)]
pub struct Freshness {
    pub repo: String,
    /// Seconds since the index was last known to match its tree (for an artifact: since it
    /// was written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_age_s: Option<f64>,
    /// A watcher reports the tree's changes as they happen.
    pub watched: bool,
    /// The last refresh failed: the answer comes from the last good index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_error: Option<String>,
}

/// A repository as `list_repos` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RepoInfo {
    pub name: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The index can answer.
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub freshness: Freshness,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_age_s: Option<f64>,
}

fn age(t: Option<SystemTime>) -> Option<f64> {
    t.map(|t| {
        let s = SystemTime::now()
            .duration_since(t)
            .unwrap_or_default()
            .as_secs_f64();
        (s * 10.0).round() / 10.0
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another call must not take the repository down with it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The options of every refresh the server makes: nothing is written into the tree.
pub(super) fn build_options(db: Option<PathBuf>) -> IndexOptions {
    IndexOptions {
        db,
        artifact: ArtifactWrite::Never,
        ..IndexOptions::default()
    }
}

impl Repo {
    /// Opens `entry` for serving: a tree is brought up to date first (indexed from scratch
    /// when it never was). A failure leaves a repository that reports it and answers nothing.
    pub fn open(entry: &RepoEntry, max_readers: usize) -> Repo {
        let mut repo = Repo {
            name: entry.name.clone(),
            kind: entry.kind,
            url: entry.url.clone(),
            root: None,
            location: None,
            refresher: None,
            readers: Pool::new(max_readers),
            ranking_readers: Pool::new(max_readers),
            pack_readers: Pool::new(max_readers),
            map_readers: Pool::new(max_readers),
            skeleton_readers: Pool::new(1),
            graphs: GraphCache::default(),
            dirty: Arc::new(AtomicBool::new(false)),
            watcher: None,
            state: Mutex::new(State {
                fresh_at: None,
                last_check: Instant::now(),
                open_error: None,
                refresh_error: None,
                fetch_error: None,
                fetched_at: None,
            }),
        };
        let opened = match entry.kind {
            RepoKind::Artifact => repo.open_artifact(&entry.path),
            RepoKind::Tree | RepoKind::Remote => repo.open_tree(&entry.path),
        };
        if let Err(e) = opened {
            lock(&repo.state).open_error = Some(e.to_string());
        }
        repo
    }

    fn open_artifact(&mut self, path: &Path) -> Result<()> {
        let index = Index::open(path)?;
        // Each reader of an artifact is a private decompressed copy: one is enough.
        self.readers = Pool::new(1);
        self.location = Some(path.to_path_buf());
        lock(&self.state).fresh_at = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let mut slots = lock(&self.readers.slots);
        slots.idle.push(index);
        slots.open = 1;
        Ok(())
    }

    fn open_tree(&mut self, root: &Path) -> Result<()> {
        let started = SystemTime::now();
        let (index, _) = Index::build(root, build_options(None))?;
        let root = index.root()?.unwrap_or_else(|| root.to_path_buf());
        self.location = Some(index.location().to_path_buf());
        self.refresher = Some(Mutex::new(index));
        {
            let mut state = lock(&self.state);
            state.fresh_at = Some(started);
            state.last_check = Instant::now();
        }
        self.watcher = watch(&root, Arc::clone(&self.dirty));
        self.root = Some(root);
        Ok(())
    }

    fn watched(&self) -> bool {
        self.watcher.is_some()
    }

    /// Marks the tree as changed (a fetch moved it, or a caller asked for a refresh).
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// Brings a tree's index up to date when it may have changed: the watcher saw a change,
    /// or the periodic check is due. Callers that arrive during a refresh wait for it, so
    /// none answers from the index it is replacing.
    pub fn ensure_fresh(&self) {
        let Some(refresher) = &self.refresher else {
            return;
        };
        let watched = self.watched();
        let due = |state: &State| {
            let interval = if watched && state.refresh_error.is_none() {
                WATCHED_CHECK
            } else {
                UNWATCHED_CHECK
            };
            state.last_check.elapsed() >= interval
        };
        if !self.dirty.load(Ordering::SeqCst) && !due(&lock(&self.state)) {
            if let Err(std::sync::TryLockError::WouldBlock) = refresher.try_lock() {
                // A refresh is under way: answer from what it writes.
                drop(lock(refresher));
            }
            if watched {
                // No change reported: the index is current as of now.
                let mut state = lock(&self.state);
                if state.refresh_error.is_none() {
                    state.fresh_at = Some(SystemTime::now());
                }
            }
            return;
        }
        let mut index = lock(refresher);
        // Another caller may have refreshed while this one waited.
        let was_dirty = self.dirty.swap(false, Ordering::SeqCst);
        if !was_dirty && !due(&lock(&self.state)) {
            return;
        }
        let started = SystemTime::now();
        let outcome = index.refresh();
        let mut state = lock(&self.state);
        state.last_check = Instant::now();
        match outcome {
            Ok(_) => {
                state.fresh_at = Some(started);
                state.refresh_error = None;
            }
            Err(e) => state.refresh_error = Some(e.to_string()),
        }
    }

    /// Refreshes now, whatever the watcher says; the error of a failed refresh.
    pub fn refresh_now(&self) -> Result<()> {
        if self.refresher.is_none() {
            return Err(Error::invalid(format!(
                "{} is served from an artifact, which has no tree to refresh from",
                self.name
            )));
        }
        self.mark_dirty();
        self.ensure_fresh();
        match lock(&self.state).refresh_error.clone() {
            Some(e) => Err(Error::Other { message: e }),
            None => Ok(()),
        }
    }

    fn check_open(&self) -> Result<()> {
        match lock(&self.state).open_error.clone() {
            Some(e) => Err(Error::NoIndex {
                message: format!("repository {} has no usable index: {e}", self.name),
            }),
            None => Ok(()),
        }
    }

    fn open_reader(&self) -> Result<Index> {
        let location = self
            .location
            .as_ref()
            .expect("set when the repository opened");
        Ok(Index::open(location)?.with_graph_cache(self.graphs.clone()))
    }

    /// Runs `f` on one of this repository's readers, fresh first.
    pub fn with_index<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.with_reader(Reads::Lookup, f)
    }

    /// Runs `f` on one of this repository's readers for `reads`, fresh first.
    pub fn with_reader<T>(&self, reads: Reads, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.check_open()?;
        self.ensure_fresh();
        let pool = match reads {
            Reads::Lookup => &self.readers,
            Reads::Ranking => &self.ranking_readers,
        };
        pool.with(|| self.open_reader(), f)
    }

    /// Runs `f` on a reader that keeps definitions graphs: the skeleton's, or the one of map
    /// and pack.
    pub fn with_graph_index<T>(
        &self,
        renderer: Renderer,
        f: impl FnOnce(&Index) -> Result<T>,
    ) -> Result<T> {
        if self.refresher.is_none() {
            // An artifact's one reader holds the graph as well.
            return self.with_index(f);
        }
        self.check_open()?;
        self.ensure_fresh();
        let pool = match renderer {
            Renderer::Skeleton => &self.skeleton_readers,
            Renderer::Map => &self.map_readers,
            Renderer::Pack => &self.pack_readers,
        };
        pool.with(|| self.open_reader(), f)
    }

    pub fn freshness(&self) -> Freshness {
        let state = lock(&self.state);
        Freshness {
            repo: self.name.clone(),
            index_age_s: age(state.fresh_at),
            watched: self.watched(),
            refresh_error: state.refresh_error.clone(),
        }
    }

    pub fn info(&self) -> RepoInfo {
        let freshness = self.freshness();
        let state = lock(&self.state);
        RepoInfo {
            name: self.name.clone(),
            kind: self.kind.as_str(),
            root: self.root.as_ref().map(|r| r.display().to_string()),
            url: self.url.clone(),
            location: self.location.as_ref().map(|l| l.display().to_string()),
            available: state.open_error.is_none(),
            error: state.open_error.clone(),
            freshness,
            fetch_error: state.fetch_error.clone(),
            fetched_age_s: age(state.fetched_at),
        }
    }

    /// Records the outcome of a background fetch of a remote.
    pub fn record_fetch(&self, outcome: std::result::Result<bool, String>) {
        let mut state = lock(&self.state);
        match outcome {
            Ok(moved) => {
                state.fetch_error = None;
                state.fetched_at = Some(SystemTime::now());
                if moved {
                    self.mark_dirty();
                }
            }
            Err(e) => state.fetch_error = Some(e),
        }
    }
}

/// A recursive watcher that marks the tree dirty on any change outside `.git/` and the
/// artifact's folder; `None` when the platform refuses one (the periodic check remains).
fn watch(root: &Path, dirty: Arc<AtomicBool>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let git = root.join(".git");
    let artifact = root.join(crate::ARTIFACT_DIR);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let relevant = match &event {
            Ok(e) => {
                !matches!(e.kind, notify::EventKind::Access(_))
                    && e.paths
                        .iter()
                        .any(|p| !p.starts_with(&git) && !p.starts_with(&artifact))
            }
            // A lost event queue: assume anything changed.
            Err(_) => true,
        };
        if relevant {
            dirty.store(true, Ordering::SeqCst);
        }
    })
    .ok()?;
    watcher.watch(root, notify::RecursiveMode::Recursive).ok()?;
    Some(watcher)
}
