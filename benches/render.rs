//! Latency and token savings of the renderers on an indexed corpus, in process with the
//! tokenizer loaded (as a server or a long-running agent harness holds it):
//! `DB=/tmp/django.db cargo bench --bench render` (index a corpus first:
//! `indexer index ~/.cache/indexer-corpora/django --db /tmp/django.db --no-artifact`).
//!
//! Prints, for skeleton (auto), map and pack (query and entry) at 1k, 4k and 16k tokens, the
//! median and worst of `RUNS` cold runs (each opening the index and reading the graph from the
//! database, as the command does) and the median of `RUNS` warm ones (one `Index` kept, as a
//! server keeps it), then the token savings: the repository's raw tokens (every indexed file's text,
//! o200k) against each renderer's output. `QUERY` and `ENTRY` choose the pack's targets
//! (defaults fit Django; set both for another corpus).

use codebase_indexer::{
    Index, MapOptions, PackOptions, PackTarget, Result, SkeletonMode, SkeletonOptions, Tokenizer,
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
    println!(
        "| renderer | budget | cold median ms | cold max ms | warm median ms | output tokens | raw / output |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let measure = |label: &str, budget: usize, render: &dyn Fn(&Index) -> Result<usize>| {
        // Cold: a new `Index` each time, as every command opens one. Warm: one `Index` kept
        // across calls (a server, a harness), after a first call has read the graph.
        let cold: Vec<(f64, usize)> = (0..RUNS).map(|_| timed(|| render(&open()))).collect();
        let index = open();
        timed(|| render(&index));
        let warm: Vec<(f64, usize)> = (0..RUNS).map(|_| timed(|| render(&index))).collect();
        row(label, budget, &cold, &warm, raw);
    };
    for budget in BUDGETS {
        measure("skeleton (auto)", budget, &|index| {
            let options = SkeletonOptions {
                budget,
                tokenizer: tk,
                ..SkeletonOptions::default()
            };
            index.skeleton(&options).map(|s| s.account.tokens)
        });
    }
    for budget in BUDGETS {
        for (label, query) in [("map", None), ("map --query", Some(query.clone()))] {
            measure(label, budget, &|index| {
                let options = MapOptions {
                    budget,
                    query: query.clone(),
                    tokenizer: tk,
                    ..MapOptions::default()
                };
                index.map(&options).map(|m| m.account.tokens)
            });
        }
    }
    for budget in BUDGETS {
        for (label, target) in [
            ("pack --query", PackTarget::Query(query.clone())),
            ("pack --entry", PackTarget::Entry(entry.clone())),
        ] {
            measure(label, budget, &|index| {
                let options = PackOptions {
                    target: target.clone(),
                    budget,
                    tokenizer: tk,
                    ..PackOptions::default()
                };
                index.pack(&options).map(|p| p.account.tokens)
            });
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

fn timed(f: impl FnOnce() -> Result<usize>) -> (f64, usize) {
    let t = Instant::now();
    let tokens = f().expect("render");
    (t.elapsed().as_secs_f64() * 1e3, tokens)
}

fn median_ms(runs: &[(f64, usize)]) -> (f64, f64) {
    let mut ms: Vec<f64> = runs.iter().map(|r| r.0).collect();
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() - 1])
}

fn row(label: &str, budget: usize, cold: &[(f64, usize)], warm: &[(f64, usize)], raw: usize) {
    let ((cold_median, cold_max), (warm_median, _)) = (median_ms(cold), median_ms(warm));
    let tokens = cold[0].1;
    println!(
        "| {label} | {budget} | {cold_median:.0} | {cold_max:.0} | {warm_median:.0} | {tokens} | {:.0}x |",
        raw as f64 / tokens as f64
    );
}
