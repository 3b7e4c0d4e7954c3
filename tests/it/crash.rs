//! Crash safety: `indexer index` and `indexer export` killed with SIGKILL at random moments,
//! many times, during cold runs, incremental runs and artifact exports. After every kill the
//! database holds the last committed state exactly (its canonical export is byte-identical to
//! that of a clean index of the tree before or after the run), every query works on it, and
//! the next run completes and equals a clean index of the tree. The artifact is the old one or
//! the new one, never a piece, and nothing half-written is left in `.codebase-index/`.
//!
//! `CRASH_KILLS` sets the kills per scenario (default 8); `CRASH_SEED` the random schedule.

use crate::common::lab::{run_ok, write_version, Lab, Rng};
use std::path::Path;
use std::time::Duration;

fn kills() -> usize {
    std::env::var("CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

/// Runs `kills()` rounds of: prepare, kill the command at a random moment of its usual
/// duration (`round` gets the moment as a fraction of it), check. Returns how many kills hit a running process (the others finished
/// first, and are checked the same way). At least half must hit, or the schedule tested
/// nothing.
fn kill_rounds(salt: u64, mut round: impl FnMut(f64, usize) -> bool) -> usize {
    let mut rng = Rng::new("CRASH_SEED", salt);
    let mut hit = 0;
    // The usual duration is one measurement, which other tests running beside it can
    // stretch: a kill that finds the run already over brings the later moments forward.
    let mut scale = 1.0;
    for i in 0..kills() {
        // A little past the usual duration too: the end of a run (rename, cleanup) counts.
        if round(rng.next() * 1.1 * scale, i) {
            hit += 1;
        } else {
            scale *= 0.7;
        }
    }
    assert!(
        hit * 2 >= kills(),
        "only {hit} of {} kills hit a running process",
        kills()
    );
    eprintln!("kill points survived: {hit}");
    hit
}

fn no_leftovers(dir: &Path) {
    let stray: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(stray.is_empty(), "left in {}: {stray:?}", dir.display());
}

#[test]
fn a_killed_cold_run_leaves_no_database_or_a_complete_one() {
    let lab = Lab::new();
    let args = lab.index_args();
    let usual = lab.time(&args);
    kill_rounds(1, |at, _| {
        let _ = std::fs::remove_file(&lab.db);
        let hit = lab.kill_after(&args, usual.mul_f64(at));
        if lab.db.exists() {
            assert_eq!(lab.db_version(), 1);
            lab.queries_work();
        }
        run_ok(&args, &lab.cache);
        assert_eq!(lab.db_version(), 1);
        no_leftovers(&lab.cache);
        hit
    });
}

#[test]
fn a_killed_incremental_run_leaves_the_last_committed_state() {
    let lab = Lab::new();
    let args = lab.index_args();
    run_ok(&args, &lab.cache);
    write_version(&lab.root, false);
    let usual = lab.time(&args);
    kill_rounds(2, |at, i| {
        // The tree moves to the other version; the database is at the current one.
        let before = i % 2;
        let target = 1 - before;
        write_version(&lab.root, target == 1);
        let hit = lab.kill_after(&args, usual.mul_f64(at));
        let now = lab.db_version();
        assert!(now == before || now == target);
        lab.queries_work();
        run_ok(&args, &lab.cache);
        assert_eq!(lab.db_version(), target);
        no_leftovers(&lab.cache);
        hit
    });
}

#[test]
fn a_killed_export_leaves_the_previous_artifact_or_the_new_one() {
    let lab = Lab::new();
    let root = lab.root.to_str().unwrap();
    let folder = lab.root.join(".codebase-index");
    let artifact = folder.join("graph.db.zst");
    let manifest = folder.join("artifact.json");
    // The artifact of `index --export` is the canonical export of the database.
    let args = ["index", root, "--db", lab.db_arg(), "--export"];
    run_ok(&args, &lab.cache);
    assert_eq!(std::fs::read(&artifact).unwrap(), lab.canonical[1]);
    write_version(&lab.root, false);
    let usual = lab.time(&args);
    let export = ["export", "--db", lab.db_arg()];
    let usual_export = lab.time(&export);

    kill_rounds(3, |at, i| {
        let before = i % 2;
        let target = 1 - before;
        write_version(&lab.root, target == 1);
        let hit = lab.kill_after(&args, usual.mul_f64(at));
        let packed = std::fs::read(&artifact).unwrap();
        assert!(packed == lab.canonical[before] || packed == lab.canonical[target]);
        // Whichever it is, it can be imported and queried.
        let imported = lab.cache.join("imported.db");
        run_ok(
            &[
                "import",
                artifact.to_str().unwrap(),
                root,
                "--db",
                imported.to_str().unwrap(),
            ],
            &lab.cache,
        );
        std::fs::remove_file(&imported).unwrap();
        run_ok(&args, &lab.cache);
        assert_eq!(std::fs::read(&artifact).unwrap(), lab.canonical[target]);
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
        assert_eq!(
            m["artifact_bytes"].as_u64(),
            Some(lab.canonical[target].len() as u64)
        );
        assert!(folder.join(".gitattributes").exists());
        no_leftovers(&folder);
        no_leftovers(&lab.cache);
        hit
    });

    // `indexer export` alone, killed while it rewrites the artifact from scratch.
    kill_rounds(4, |at, _| {
        std::fs::remove_file(&manifest).unwrap();
        let hit = lab.kill_after(&export, usual_export.mul_f64(at));
        let packed = std::fs::read(&artifact).unwrap();
        assert!(lab.canonical.contains(&packed));
        run_ok(&export, &lab.cache);
        assert!(manifest.exists());
        no_leftovers(&folder);
        hit
    });

    // The export `indexer index` leaves running in the background for a tree without an
    // artifact, killed: no artifact yet or a complete one, and the next one writes it.
    let deferred = ["export", "--deferred", "--db", lab.db_arg()];
    kill_rounds(5, |at, _| {
        std::fs::remove_dir_all(&folder).unwrap();
        let hit = lab.kill_after(&deferred, usual_export.mul_f64(at));
        match std::fs::read(&artifact) {
            Ok(packed) => {
                assert!(lab.canonical.contains(&packed));
                assert!(manifest.exists(), "an artifact without its manifest");
            }
            Err(_) => assert!(!manifest.exists()),
        }
        // The next export clears what the killed one left.
        run_ok(&deferred, &lab.cache);
        assert!(lab.canonical.contains(&std::fs::read(&artifact).unwrap()));
        no_leftovers(&folder);
        hit
    });
}

#[test]
fn a_killed_bootstrap_from_the_artifact_leaves_no_database_or_a_complete_one() {
    let lab = Lab::new();
    let root = lab.root.to_str().unwrap();
    // The committed artifact is of version 1; the clone's tree is at either version.
    run_ok(&["index", root, "--db", lab.db_arg()], &lab.cache);
    crate::common::wait_for_artifact(&lab.root);
    let artifact = lab.root.join(".codebase-index/graph.db.zst");
    assert_eq!(std::fs::read(&artifact).unwrap(), lab.canonical[1]);
    let args = lab.index_args();
    // A bootstrap with nothing to redo is much shorter than one with edits to replay.
    let mut usual = [Duration::ZERO; 2];
    for (v, slot) in usual.iter_mut().enumerate() {
        std::fs::remove_file(&lab.db).unwrap();
        write_version(&lab.root, v == 1);
        *slot = lab.time(&args);
    }
    kill_rounds(5, |at, i| {
        let target = i % 2;
        write_version(&lab.root, target == 1);
        std::fs::remove_file(&lab.db).unwrap();
        let hit = lab.kill_after(&args, usual[target].mul_f64(at));
        let built = lab.db.exists();
        if built {
            assert_eq!(lab.db_version(), target);
            lab.queries_work();
        }
        let out = run_ok(&[&args[..], &["--json"]].concat(), &lab.cache);
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // Without a database the run starts from the artifact again.
        assert_eq!(summary["bootstrapped_from"].is_string(), !built);
        assert_eq!(lab.db_version(), target);
        no_leftovers(&lab.cache);
        hit
    });
}
