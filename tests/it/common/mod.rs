//! Helpers shared by the integration tests: fixture repositories written by the test, and
//! (in `extract`) the extraction helpers of the per-language tests.

pub mod extract;
pub mod graph;
pub mod lab;

use codebase_indexer::{ArtifactWrite, Error, Index, IndexOptions, IndexSummary};
use std::path::{Path, PathBuf};

/// Writes `files` (path, content) under `root`, creating folders.
/// Runs git in `root` with no system or global configuration and a fixed author; its
/// trimmed standard output. Fails the test when git fails.
pub fn git(root: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        write(root, path, content.as_bytes());
    }
}

pub fn write(root: &Path, path: &str, bytes: &[u8]) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// A fixture's index run: the tree and the options, which a test may change before `run`.
pub struct Run {
    pub root: PathBuf,
    pub options: IndexOptions,
}

impl std::ops::Deref for Run {
    type Target = IndexOptions;
    fn deref(&self) -> &IndexOptions {
        &self.options
    }
}

impl std::ops::DerefMut for Run {
    fn deref_mut(&mut self) -> &mut IndexOptions {
        &mut self.options
    }
}

/// The defaults, but for a fixed project name, two threads, the database at `db` and no
/// artifact written into the tree.
pub fn options(root: &Path, db: &Path) -> Run {
    Run {
        root: root.to_path_buf(),
        options: IndexOptions {
            db: Some(db.to_path_buf()),
            project: Some("fixture".into()),
            jobs: Some(2),
            artifact: ArtifactWrite::Never,
            ..IndexOptions::default()
        },
    }
}

/// Indexes as `Index::build` does.
pub fn run(run: &Run) -> Result<IndexSummary, Error> {
    Index::build(&run.root, run.options.clone()).map(|(_, summary)| summary)
}

pub fn index(root: &Path, db: &Path) -> IndexSummary {
    run(&options(root, db)).expect("index")
}

/// Where indexing `root` writes its committed artifact.
pub fn artifact_in(root: &Path) -> PathBuf {
    root.join(codebase_indexer::ARTIFACT_DIR)
        .join(codebase_indexer::ARTIFACT_FILE)
}

/// Waits for the artifact that `indexer index` writes in the background into a tree that
/// had none; its manifest is written last, once the artifact is complete.
pub fn wait_for_artifact(root: &Path) {
    let manifest = root
        .join(codebase_indexer::ARTIFACT_DIR)
        .join(codebase_indexer::ARTIFACT_MANIFEST);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !manifest.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no artifact written into {}",
            root.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn db_path(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// Every row of a table as text, in a stable order, for whole-table comparisons.
pub fn dump(db: &Path, sql: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut q = conn.prepare(sql).unwrap();
    let n = q.column_count();
    let rows = q
        .query_map([], |r| {
            let mut cells = Vec::with_capacity(n);
            for i in 0..n {
                let v: rusqlite::types::Value = r.get(i)?;
                cells.push(format!("{v:?}"));
            }
            Ok(cells.join("|"))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

pub fn paths(db: &Path) -> Vec<String> {
    dump(db, "SELECT path FROM files ORDER BY path")
        .into_iter()
        .map(|s| {
            s.trim_start_matches("Text(\"")
                .trim_end_matches("\")")
                .to_string()
        })
        .collect()
}

/// Runs the `indexer` binary in `cwd` with its cache (projects' databases) under `cache`.
pub fn indexer(cache: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_indexer"))
        .args(args)
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("run indexer")
}

/// The JSON document a successful run printed.
pub fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}
