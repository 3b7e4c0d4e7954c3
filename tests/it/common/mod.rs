//! Helpers shared by the integration tests: fixture repositories written by the test, and
//! (in `extract`) the extraction helpers of the per-language tests.



pub mod extract;
pub mod graph;
pub mod lab;

use codebase_indexer::index::{self, IndexOptions, IndexSummary};
use std::path::{Path, PathBuf};

/// Writes `files` (path, content) under `root`, creating folders.
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

pub fn options(root: &Path, db: &Path) -> IndexOptions {
    IndexOptions {
        root: root.canonicalize().unwrap(),
        db: db.to_path_buf(),
        project: "fixture".into(),
        excludes: Vec::new(),
        max_file_bytes: 1 << 20,
        include_env: false,
        jobs: 2,
        rebuild: false,
        min_confidence: 0.0,
        fuzzy_limit: 5,
        artifact_level: None,
        progress: None,
    }
}

pub fn index(root: &Path, db: &Path) -> IndexSummary {
    index::run(&options(root, db)).expect("index")
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
