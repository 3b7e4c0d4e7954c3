//! Latency and token savings of the renderers on an indexed corpus, in process with the
//! tokenizer loaded (as a server or a long-running agent harness holds it):
//! `DB=/tmp/django.db cargo bench --bench render` (index a corpus first:
//! `indexer index ~/.cache/indexer-corpora/django --db /tmp/django.db --no-artifact`).
//!
//! Prints, for skeleton (auto), map and pack (query and entry) at 1k, 4k and 16k tokens, the
//! median and worst of `RUNS` runs (each opening the index and reading the graph from the
//! database, as the command does), then the token savings: the repository's raw tokens (every indexed file's text,
//! o200k) against each renderer's output. `QUERY` and `ENTRY` choose the pack's targets
//! (defaults fit Django; set both for another corpus).

use codebase_indexer::{
    Index, MapOptions, PackOptions, PackTarget, SkeletonMode, SkeletonOptions, Tokenizer,
};
use std::path::Path;
use std::time::Instant;

const RUNS: usize = 7;
const BUDGETS: [usize; 3] = [1000, 4000, 16000];

fn main() {
    let Some(db) = std::env::var_os("DB") else {
        eprintln!("set DB to an index database (see the comment at the top of benches/render.rs)");
        return;
    };
    let query = std::env::var("QUERY")
        .unwrap_or_else(|_| "QuerySet.bulk_update() does not respect batch_size".into());
    let entry = std::env::var("ENTRY").unwrap_or_else(|_| "django.db.models.query.QuerySet".into());
    let db = Path::new(&db);
    let open = || Index::open(db).expect("open DB");
    let tk = Tokenizer::O200k;
    tk.count("load the tokenizer");

    let raw = raw_tokens(db, tk);
    println!("repository: {raw} tokens of indexed text (o200k)\n");
    println!("| renderer | budget | median ms | max ms | output tokens | raw / output |");
    println!("|---|---:|---:|---:|---:|---:|");
    for budget in BUDGETS {
        let runs: Vec<(f64, usize)> = (0..RUNS)
            .map(|_| {
                timed(|| {
                    open()
                        .skeleton(&SkeletonOptions {
                            budget,
                            tokenizer: tk,
                            ..SkeletonOptions::default()
                        })
                        .map(|s| s.account.tokens)
                })
            })
            .collect();
        row("skeleton (auto)", budget, &runs, raw);
    }
    for budget in BUDGETS {
        for (label, query) in [("map", None), ("map --query", Some(query.clone()))] {
            let runs: Vec<(f64, usize)> = (0..RUNS)
                .map(|_| {
                    timed(|| {
                        open()
                            .map(&MapOptions {
                                budget,
                                query: query.clone(),
                                tokenizer: tk,
                                ..MapOptions::default()
                            })
                            .map(|m| m.account.tokens)
                    })
                })
                .collect();
            row(label, budget, &runs, raw);
        }
    }
    for budget in BUDGETS {
        for (label, target) in [
            ("pack --query", PackTarget::Query(query.clone())),
            ("pack --entry", PackTarget::Entry(entry.clone())),
        ] {
            let runs: Vec<(f64, usize)> = (0..RUNS)
                .map(|_| {
                    timed(|| {
                        open()
                            .pack(&PackOptions {
                                target: target.clone(),
                                budget,
                                tokenizer: tk,
                                ..PackOptions::default()
                            })
                            .map(|p| p.account.tokens)
                    })
                })
                .collect();
            row(label, budget, &runs, raw);
        }
    }
    println!("\nwhole-repository renderings (no budget limit):\n");
    println!("| rendering | tokens | share of raw | raw / output |");
    println!("|---|---:|---:|---:|");
    let index = open();
    for mode in [
        SkeletonMode::Skeleton,
        SkeletonMode::Compact,
        SkeletonMode::Summary,
        SkeletonMode::Deps,
    ] {
        let s = index
            .skeleton(&SkeletonOptions {
                budget: usize::MAX / 4,
                mode,
                tokenizer: tk,
                ..SkeletonOptions::default()
            })
            .expect("skeleton");
        let n = s.account.tokens;
        println!(
            "| skeleton --mode {} | {n} | {:.1}% | {:.1}x |",
            mode.as_str(),
            100.0 * n as f64 / raw as f64,
            raw as f64 / n as f64
        );
    }
}

/// Tokens of every indexed file's text, read with SQL as any `sqlite3` user could.
fn raw_tokens(db: &Path, tk: Tokenizer) -> usize {
    let conn = rusqlite::Connection::open(db).expect("open DB");
    let mut q = conn
        .prepare("SELECT content FROM file_contents")
        .expect("contents");
    let texts: Vec<String> = q
        .query_map([], |r| r.get(0))
        .expect("contents")
        .map(Result::unwrap)
        .collect();
    // Counted on two cores.
    let (a, b) = texts.split_at(texts.len() / 2);
    let count = |part: &[String]| part.iter().map(|t| tk.count(t)).sum::<usize>();
    std::thread::scope(|s| {
        let first = s.spawn(|| count(a));
        count(b) + first.join().expect("token counter")
    })
}

fn timed(f: impl FnOnce() -> codebase_indexer::Result<usize>) -> (f64, usize) {
    let t = Instant::now();
    let tokens = f().expect("render");
    (t.elapsed().as_secs_f64() * 1e3, tokens)
}

fn row(label: &str, budget: usize, runs: &[(f64, usize)], raw: usize) {
    let mut ms: Vec<f64> = runs.iter().map(|r| r.0).collect();
    ms.sort_by(f64::total_cmp);
    let tokens = runs[0].1;
    println!(
        "| {label} | {budget} | {:.0} | {:.0} | {tokens} | {:.0}x |",
        ms[ms.len() / 2],
        ms[ms.len() - 1],
        raw as f64 / tokens as f64
    );
}
