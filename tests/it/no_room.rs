//! Writes that fail: a full disk (a small tmpfs), a file size limit (`ulimit -f`), a read-only
//! cache folder. Each run stops with an error that says what happened, the index in place
//! stays as it was and answers queries, nothing half-written is left, and once there is room
//! the next run completes and equals a clean index.
//!
//! The tmpfs cases need permission to mount (root, as in CI); without it they say so and
//! check nothing. The file size limit needs nothing.

use crate::common::lab::{indexer, run_ok, write_version, Lab};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A tmpfs mounted over a folder for the life of the value.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, bytes: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(at)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("cannot mount a tmpfs here (not root?): nothing checked");
        }
        ok.then(|| Tmpfs(at.to_path_buf()))
    }

    fn remount(&self, options: &str) {
        let status = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Fills the file system but for about `left` bytes.
    fn fill_leaving(&self, left: u64) {
        let out = std::process::Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(&self.0)
            .output()
            .unwrap();
        let avail: u64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap();
        let junk = avail.saturating_sub(left) as usize;
        std::fs::write(self.0.join("junk"), vec![0u8; junk]).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

fn fails_with(out: &Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the run succeeded");
    assert!(err.contains(what), "expected {what:?} in: {err}");
}

/// Only the database, its lock and (after a read) its WAL files: no temporaries.
fn only_the_database(dir: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !matches!(
                n.as_str(),
                "junk" | "project.db-wal" | "project.db-shm" | "project.db.export.lock"
            )
        })
        .collect();
    names.sort();
    assert!(
        names.is_empty()
            || names == ["project.db.lock"]
            || names == ["project.db", "project.db.lock"],
        "{names:?}"
    );
}

#[test]
fn a_full_disk_stops_the_run_and_keeps_the_index_in_place() {
    let lab = Lab::new();
    let args = lab.index_args();
    // Too small for the database: a cold run has nowhere to go.
    let Some(disk) = Tmpfs::mount(&lab.cache, 256 << 10) else {
        return;
    };
    fails_with(
        &indexer(&args, &lab.cache).output().unwrap(),
        "no room left",
    );
    assert!(!lab.db.exists());
    only_the_database(&lab.cache);

    disk.remount(&format!("size={}", 64 << 20));
    run_ok(&args, &lab.cache);
    assert_eq!(lab.db_version(), 1);

    // Almost full: neither an incremental run nor a rebuild fits.
    disk.fill_leaving(32 << 10);
    write_version(&lab.root, false);
    for extra in [None, Some("--rebuild")] {
        let mut a = args.to_vec();
        a.extend(extra);
        fails_with(&indexer(&a, &lab.cache).output().unwrap(), "no room left");
        lab.queries_work();
        assert_eq!(lab.db_version(), 1);
        only_the_database(&lab.cache);
    }
    std::fs::remove_file(lab.cache.join("junk")).unwrap();
    run_ok(&args, &lab.cache);
    assert_eq!(lab.db_version(), 0);
}

#[test]
fn an_artifact_that_does_not_fit_is_a_note_and_leaves_nothing() {
    let lab = Lab::new();
    let root = lab.root.to_str().unwrap();
    let folder = lab.root.join(".codebase-index");
    // Room for the artifact, not for the uncompressed copy it is made from.
    let Some(_disk) = Tmpfs::mount(&folder, 2 * lab.canonical[1].len() as u64 + (64 << 10)) else {
        return;
    };
    // Written during the run (`--export`), so its failure is the run's note.
    let args = ["index", root, "--db", lab.db_arg(), "--json", "--export"];
    // The copy is made in the folder: with the whole database size it does not fit.
    let out = run_ok(&args, &lab.cache);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = summary["notes"].to_string();
    assert!(notes.contains("did not write"), "{notes}");
    assert!(
        notes.contains("disk is full") || notes.contains("No space left"),
        "{notes}"
    );
    assert!(!folder.join("graph.db.zst").exists());
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    assert_eq!(lab.db_version(), 1);
}

#[test]
fn a_file_size_limit_stops_the_run_and_keeps_the_index_in_place() {
    let lab = Lab::new();
    let args = lab.index_args();
    run_ok(&args, &lab.cache);
    write_version(&lab.root, false);
    // bash's `ulimit -f` counts KiB; SIGXFSZ ignored, an oversized write fails with EFBIG.
    let limited = |extra: Option<&str>| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(extra);
        std::process::Command::new("bash")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_indexer"))
            .args(&a)
            .env("XDG_CACHE_HOME", &lab.cache)
            .output()
            .unwrap()
    };
    for extra in [None, Some("--rebuild")] {
        fails_with(&limited(extra), "cannot write the index");
        lab.queries_work();
        assert_eq!(lab.db_version(), 1);
        only_the_database(&lab.cache);
    }
    run_ok(&args, &lab.cache);
    assert_eq!(lab.db_version(), 0);
}

#[test]
fn a_read_only_cache_folder_still_answers_queries() {
    let lab = Lab::new();
    let args = lab.index_args();
    let Some(disk) = Tmpfs::mount(&lab.cache, 64 << 20) else {
        return;
    };
    run_ok(&args, &lab.cache);
    disk.remount("ro");
    // Queries read the database without its WAL files, which the folder cannot hold.
    lab.queries_work();
    write_version(&lab.root, false);
    fails_with(
        &indexer(&args, &lab.cache).output().unwrap(),
        "pass --db to keep the index elsewhere",
    );
    // The export behind `db_version` writes outside the read-only folder.
    assert_eq!(lab.db_version(), 1);
}
