//! A project in two versions and a cache, for tests that run the `indexer` binary against
//! each other or kill it: which clean version a database equals, and whether queries answer.

use super::write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A seeded splitmix64: the kill schedule is random but reproducible.
pub struct Rng(u64);

impl Rng {
    /// Seeded from the environment variable `var` (a fixed seed without it), mixed with `salt`.
    pub fn new(var: &str, salt: u64) -> Self {
        let seed = std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0x5eed);
        Rng(seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// Uniform in [0, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn indexer(args: &[&str], cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_indexer"));
    c.args(args).env("XDG_CACHE_HOME", cache);
    c
}

pub fn run_ok(args: &[&str], cache: &Path) -> Output {
    let out = indexer(args, cache).output().expect("run indexer");
    assert!(
        out.status.success(),
        "indexer {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Two versions of a project in three languages. B edits, renames, deletes and adds
/// definitions and files, so an incremental run from one to the other rewrites nodes,
/// re-points edges and removes files.
pub fn write_version(root: &Path, b: bool) {
    for i in 0..120 {
        let callee = if b && i % 3 == 0 {
            "helper_b"
        } else {
            "helper"
        };
        let mut py = format!("from pkg.m{:03} import {callee}\n\n", (i + 1) % 120);
        for j in 0..12 {
            py.push_str(&format!(
                "class Model{i}_{j}:\n    def save(self, x):\n        return {callee}(x) + {j}\n\n"
            ));
        }
        py.push_str("def helper(x):\n    return x\n\ndef helper_b(x):\n    return x\n");
        write(root, &format!("pkg/m{i:03}.py"), py.as_bytes());
    }
    for i in 0..60 {
        let extra = if b && i % 4 == 0 {
            "\nfunc Extra() int { return Run0() }\n"
        } else {
            ""
        };
        let go = format!(
            "package svc\n\nfunc Run{i}() int {{ return Run{}() }}\n\ntype T{i} struct{{}}\n\nfunc (t T{i}) M() int {{ return Run{i}() }}\n{extra}",
            (i + 1) % 60
        );
        write(root, &format!("svc/f{i:02}.go"), go.as_bytes());
        let js = format!(
            "import {{ g{} }} from './w{:02}.js';\nexport function g{i}(a) {{ return g{}(a); }}\nexport class W{i} {{ run() {{ return g{i}(1); }} }}\n",
            (i + 1) % 60,
            (i + 1) % 60,
            (i + 1) % 60
        );
        write(root, &format!("web/w{i:02}.js"), js.as_bytes());
    }
    let (gone, added) = if b {
        ("pkg/only_a.py", "pkg/only_b.py")
    } else {
        ("pkg/only_b.py", "pkg/only_a.py")
    };
    let _ = std::fs::remove_file(root.join(gone));
    write(root, added, b"def only():\n    return 1\n");
}

/// A project, a cache, and the canonical export of a clean index of each version.
pub struct Lab {
    dir: tempfile::TempDir,
    pub root: PathBuf,
    pub cache: PathBuf,
    pub db: PathBuf,
    pub canonical: [Vec<u8>; 2],
}

impl Lab {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let mut canonical = [Vec::new(), Vec::new()];
        for (v, slot) in canonical.iter_mut().enumerate() {
            write_version(&root, v == 1);
            let db = dir.path().join(format!("clean{v}.db"));
            let out = dir.path().join(format!("clean{v}.db.zst"));
            let (db_arg, out_arg) = (db.to_str().unwrap(), out.to_str().unwrap());
            run_ok(
                &[
                    "index",
                    root.to_str().unwrap(),
                    "--db",
                    db_arg,
                    "--no-artifact",
                ],
                &cache,
            );
            run_ok(&["export", "--db", db_arg, "--output", out_arg], &cache);
            *slot = std::fs::read(&out).unwrap();
        }
        assert_ne!(canonical[0], canonical[1]);
        let db = cache.join("project.db");
        Lab {
            dir,
            root,
            cache,
            db,
            canonical,
        }
    }

    /// `indexer index` of the project into its database, without the artifact.
    pub fn index_args(&self) -> [&str; 5] {
        [
            "index",
            self.root.to_str().unwrap(),
            "--db",
            self.db_arg(),
            "--no-artifact",
        ]
    }

    pub fn db_arg(&self) -> &str {
        self.db.to_str().unwrap()
    }

    /// The canonical export of the project's database as it is now.
    pub fn export_of_db(&self) -> Vec<u8> {
        // Beside the lab, not the database: its folder may be full or read-only.
        let out = self.dir.path().join("check").join("project.db.zst");
        let _ = std::fs::remove_file(&out);
        let out_arg = out.to_str().unwrap();
        run_ok(
            &["export", "--db", self.db_arg(), "--output", out_arg],
            &self.cache,
        );
        let bytes = std::fs::read(&out).unwrap();
        std::fs::remove_file(&out).unwrap();
        let _ = std::fs::remove_file(out.with_file_name("artifact.json"));
        let _ = std::fs::remove_file(out.with_file_name(".gitattributes"));
        bytes
    }

    /// Which clean version the database equals; panics if neither.
    pub fn db_version(&self) -> usize {
        let bytes = self.export_of_db();
        self.canonical
            .iter()
            .position(|c| *c == bytes)
            .expect("the database is neither the state before the run nor after it")
    }

    /// Every query command answers on the database as it is.
    pub fn queries_work(&self) {
        let db = self.db_arg();
        for args in [
            vec!["status", "--db", db, "--json"],
            vec!["search", "save", "--db", db, "--json"],
            vec!["trace-callers", "pkg.m001.helper", "--db", db, "--json"],
            vec!["trace-callees", "svc.Run3", "--db", db, "--json"],
            vec!["get-source", "web/w07.js", "--db", db, "--json"],
        ] {
            let out = run_ok(&args, &self.cache);
            serde_json::from_slice::<serde_json::Value>(&out.stdout)
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        }
    }

    /// Runs `args` and kills it (SIGKILL) after `after`; true if it was still running.
    pub fn kill_after(&self, args: &[&str], after: Duration) -> bool {
        let mut child = indexer(args, &self.cache)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + after;
        loop {
            if child.try_wait().unwrap().is_some() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            std::thread::sleep((deadline - now).min(Duration::from_millis(2)));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        true
    }

    pub fn time(&self, args: &[&str]) -> Duration {
        let start = Instant::now();
        run_ok(args, &self.cache);
        start.elapsed()
    }
}
