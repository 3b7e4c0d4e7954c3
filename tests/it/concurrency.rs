//! Readers and writers at once: queries answer while `indexer index` writes (WAL readers see
//! the state before the run or after it, never a mix), a reader holding a snapshot across a
//! run neither blocks it nor sees it, and two index runs started together on one project
//! end with one refused by the project's lock, the other's database complete.

use crate::common::lab::{indexer, run_ok, write_version, Lab};
use std::process::Stdio;

/// `status --json`'s node count of the project's database.
fn nodes(lab: &Lab) -> i64 {
    let out = run_ok(&["status", "--db", lab.db_arg(), "--json"], &lab.cache);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["nodes"].as_i64().expect("status has a node count")
}

#[test]
fn queries_answer_during_index_runs_with_the_state_before_or_after() {
    let lab = Lab::new();
    let mut nodes_of = [0; 2];
    for v in [1, 0] {
        write_version(&lab.root, v == 1);
        run_ok(&lab.index_args(), &lab.cache);
        nodes_of[v] = nodes(&lab);
    }
    assert_ne!(nodes_of[0], nodes_of[1]);

    let mut during = 0;
    for round in 0..6 {
        let target = (round + 1) % 2;
        write_version(&lab.root, target == 1);
        // Incremental runs write in place; rebuilds replace the file in one rename.
        let mut args = lab.index_args().to_vec();
        if round >= 4 {
            args.push("--rebuild");
        }
        let mut child = indexer(&args, &lab.cache)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        while child.try_wait().unwrap().is_none() {
            let n = nodes(&lab);
            assert!(n == nodes_of[0] || n == nodes_of[1], "{n} nodes mid-run");
            lab.queries_work();
            during += 1;
        }
        assert!(child.wait().unwrap().success());
        assert_eq!(lab.db_version(), target);
    }
    assert!(
        during >= 6,
        "only {during} queries ran during the index runs"
    );
}

#[test]
fn a_reader_holding_a_snapshot_does_not_block_an_index_run() {
    let lab = Lab::new();
    let args = lab.index_args();
    run_ok(&args, &lab.cache);
    let count = |c: &rusqlite::Connection| -> i64 {
        c.query_row("SELECT count(*) FROM nodes WHERE name = 'Extra'", [], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let reader = rusqlite::Connection::open(&lab.db).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    assert_eq!(count(&reader), 15);

    write_version(&lab.root, false);
    run_ok(&args, &lab.cache);
    // The open read transaction still sees its snapshot; a new one sees the run's result.
    assert_eq!(count(&reader), 15);
    reader.execute_batch("COMMIT").unwrap();
    assert_eq!(count(&reader), 0);
    assert_eq!(lab.db_version(), 0);
}

#[test]
fn two_index_runs_at_once_one_refused_by_the_lock() {
    let lab = Lab::new();
    let args = lab.index_args();
    run_ok(&args, &lab.cache);
    let mut refused = 0;
    for round in 0..4 {
        let target = round % 2;
        write_version(&lab.root, target == 1);
        let runs: Vec<_> = (0..2)
            .map(|_| {
                indexer(&args, &lab.cache)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut succeeded = 0;
        for run in runs {
            let out = run.wait_with_output().unwrap();
            if out.status.success() {
                succeeded += 1;
            } else {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("another `indexer index` is updating"), "{err}");
                refused += 1;
            }
        }
        assert!(succeeded >= 1);
        assert_eq!(lab.db_version(), target);
        lab.queries_work();
    }
    assert!(
        refused >= 1,
        "no run was ever refused: the runs never overlapped"
    );
}
