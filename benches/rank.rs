//! Ranking latency on whole issue texts: `rank_files` in process with one `Index` kept (as the
//! MCP server answers), and the `indexer rank-files` command a user types, on every task of a
//! task file:
//! `DB=/tmp/django.db TASKS=../shared/eval/swebench-lite-django.jsonl cargo bench --bench rank`
//! (index the tree the tasks are about first, e.g.
//! `indexer index ~/.cache/indexer-corpora/django --db /tmp/django.db --no-artifact`).
//!
//! Prints the median, p95 and worst of each, in milliseconds. The in-process figures are of
//! the second pass over the tasks (the first warms SQLite's page cache, as a running server
//! has it); the command's are one run a task, reading the issue from standard input. Issue 19
//! asks for p95 under 50 ms in process and under 150 ms for the command.

use codebase_indexer::Index;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const LIMIT: usize = 20;

fn main() {
    let (Some(db), Some(tasks)) = (std::env::var_os("DB"), std::env::var_os("TASKS")) else {
        eprintln!("set DB and TASKS (see the comment at the top of benches/rank.rs)");
        return;
    };
    let db = Path::new(&db);
    let queries: Vec<String> = std::fs::read_to_string(&tasks)
        .expect("read TASKS")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let task: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            task["query"].as_str().expect("a query").to_string()
        })
        .collect();
    let index = Index::open(db).expect("open DB");
    let mut in_process = Vec::new();
    for pass in 0..2 {
        for q in &queries {
            let start = Instant::now();
            index.rank_files(q, LIMIT).expect("rank");
            if pass == 1 {
                in_process.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/indexer");
    let mut command = Vec::new();
    if exe.exists() {
        for q in &queries {
            let start = Instant::now();
            let mut child = Command::new(&exe)
                .args(["rank-files", "-", "--db"])
                .arg(db)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .expect("run indexer");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(q.as_bytes())
                .expect("write the query");
            assert!(child.wait().expect("wait").success(), "rank-files failed");
            command.push(start.elapsed().as_secs_f64() * 1e3);
        }
    } else {
        eprintln!(
            "no {}: build it (cargo build --release) to time the command",
            exe.display()
        );
    }
    println!("{} issue texts, top {LIMIT}\n", queries.len());
    println!("| | median ms | p95 ms | max ms |");
    println!("|---|---:|---:|---:|");
    for (label, times) in [
        ("in process", in_process),
        ("`indexer rank-files`", command),
    ] {
        if let Some((median, p95, max)) = spread(times) {
            println!("| {label} | {median:.1} | {p95:.1} | {max:.1} |");
        }
    }
}

/// Median, 95th percentile and maximum.
fn spread(mut times: Vec<f64>) -> Option<(f64, f64, f64)> {
    if times.is_empty() {
        return None;
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    Some((at(0.5), at(0.95), at(1.0)))
}
