//! What each renderer puts in front of the model, measured on tasks with known answers: for
//! every task and budget, the repo map (`--mode map`) or the query pack (`--mode pack`) of
//! the task's text is rendered, and the evaluation records whether it holds code from a gold
//! file, and whether it holds a gold symbol's code: for the pack, the symbol in full or
//! inside a definition included in full; for the map, the symbol's own entry. Beside it, the
//! baseline's in-budget recall: whole files ranked by BM25, as many as fit.
//!
//! A gold symbol is `path::Name` (`Class.method`); `path::impl:N`, `path::imports` and
//! `path::docstring` (module-level code) name no symbol, and a task with only such gold
//! symbols does not count for symbol recall.

use crate::context::defgraph::Repo;
use crate::context::pack::{self, Rendering};
use crate::context::repomap;
use crate::context::tokens::Tokenizer;
use crate::eval::{percentile, round4, split_gold, within_budget, Bm25, Task, TokenCounts};
use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

/// Which rendering an evaluation measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Renderer {
    Map,
    Pack,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub mode: Renderer,
    pub budgets: Vec<usize>,
    pub tasks: Vec<TaskResult>,
    /// By budget.
    pub summary: BTreeMap<usize, Summary>,
    /// Tasks none of whose gold files is in the index.
    pub excluded: Vec<String>,
    /// Reading the graph into memory, once for all tasks.
    pub load_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct TaskResult {
    pub id: String,
    pub gold_files: Vec<String>,
    pub missing_gold_files: Vec<String>,
    /// Gold symbols found in the index as definitions (qualified names).
    pub gold_symbols: Vec<String>,
    /// Gold symbols that name a definition the index does not have.
    pub missing_gold_symbols: Vec<String>,
    pub excluded: bool,
    /// By budget.
    pub results: BTreeMap<usize, RenderResult>,
}

#[derive(Debug, Serialize)]
pub struct RenderResult {
    pub gold_file: bool,
    /// `None` when the task names no symbol found in the index.
    pub gold_symbol: Option<bool>,
    /// The baseline on the same task: a gold file among the whole files that fit.
    pub bm25_gold_file: bool,
    pub tokens: usize,
    pub included: usize,
    pub latency_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    pub tasks: usize,
    pub gold_file_recall: f64,
    pub bm25_gold_file_recall: f64,
    pub tasks_naming_symbols: usize,
    pub gold_symbol_recall: f64,
    pub mean_tokens: f64,
    pub median_ms: f64,
    pub p95_ms: f64,
}

pub fn run(
    conn: &Connection,
    tasks: &[Task],
    mode: Renderer,
    budgets: &[usize],
    tokenizer: Tokenizer,
) -> Result<Report> {
    if budgets.is_empty() || budgets.contains(&0) {
        crate::error::invalid!("--budgets needs budgets of 1 token or more");
    }
    let started = Instant::now();
    let repo = Repo::load(conn, None)?;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let indexed: HashSet<&str> = repo.files.iter().map(|f| f.path.as_str()).collect();
    let bm25 = Bm25::build(conn)?;
    let mut tokens = TokenCounts::new(conn)?;
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (gold, missing) = split_gold(task, |g| indexed.contains(g));
        let (symbols, missing_symbols) = gold_symbols(&repo, &task.gold_symbols);
        let mut result = TaskResult {
            id: task.id.clone(),
            excluded: gold.is_empty(),
            gold_files: gold,
            missing_gold_files: missing,
            gold_symbols: symbols
                .iter()
                .map(|&d| repo.defs[d].qualified_name.clone())
                .collect(),
            missing_gold_symbols: missing_symbols,
            results: BTreeMap::new(),
        };
        if !result.excluded {
            let baseline = bm25.rank(&task.query);
            for &budget in budgets {
                let started = Instant::now();
                let (files, symbols_in, used, included) =
                    render(conn, &repo, mode, &task.query, budget, tokenizer)?;
                let latency_ms = started.elapsed().as_secs_f64() * 1e3;
                let gold_symbol = (!symbols.is_empty()).then(|| {
                    symbols.iter().any(|&g| {
                        symbols_in
                            .iter()
                            .any(|&(d, full)| covers(&repo, mode, d, full, g))
                    })
                });
                result.results.insert(
                    budget,
                    RenderResult {
                        gold_file: result.gold_files.iter().any(|g| files.contains(g)),
                        gold_symbol,
                        bm25_gold_file: within_budget(
                            &baseline,
                            &result.gold_files,
                            budget,
                            |p| tokens.of(p),
                        )?,
                        tokens: used,
                        included,
                        latency_ms: (latency_ms * 100.0).round() / 100.0,
                    },
                );
            }
        }
        results.push(result);
    }
    let summary = budgets
        .iter()
        .map(|&b| (b, summarize(&results, b)))
        .collect();
    Ok(Report {
        mode,
        budgets: budgets.to_vec(),
        excluded: results
            .iter()
            .filter(|r| r.excluded)
            .map(|r| r.id.clone())
            .collect(),
        tasks: results,
        summary,
        load_ms: (load_ms * 100.0).round() / 100.0,
    })
}

/// Whether the included definition `d` (in full or not) holds the gold symbol `g`'s code.
fn covers(repo: &Repo, mode: Renderer, d: usize, full: bool, g: usize) -> bool {
    match mode {
        Renderer::Map => d == g,
        Renderer::Pack => full && repo.is_within(g, d),
    }
}

/// What one rendering holds: the files it has code from, its definitions (with whether each
/// is in full), its tokens and its item count.
#[allow(clippy::type_complexity)]
fn render(
    conn: &Connection,
    repo: &Repo,
    mode: Renderer,
    query: &str,
    budget: usize,
    tokenizer: Tokenizer,
) -> Result<(HashSet<String>, Vec<(usize, bool)>, usize, usize)> {
    let mut files = HashSet::new();
    let mut defs = Vec::new();
    let account = match mode {
        Renderer::Map => {
            let map = repomap::render_in(
                conn,
                repo,
                &repomap::Options {
                    budget,
                    focus: Vec::new(),
                    query: Some(query.to_string()),
                    format: repomap::Format::Text,
                    tokenizer,
                    show_dropped: false,
                    ..repomap::Options::default()
                },
            )?;
            for e in &map.entries {
                files.insert(e.path.clone());
                defs.push((e.def, false));
            }
            map.account
        }
        Renderer::Pack => {
            let p = pack::build_in(
                conn,
                repo,
                &pack::Options {
                    target: pack::Target::Query(query.to_string()),
                    budget,
                    signatures_only: false,
                    format: pack::Format::Markdown,
                    tokenizer,
                    show_dropped: false,
                    ..pack::Options::default()
                },
            )?;
            for f in &p.files {
                files.insert(f.path.clone());
                for s in &f.symbols {
                    defs.push((s.def, s.rendering == Rendering::Full));
                }
            }
            p.account
        }
    };
    Ok((files, defs, account.tokens, account.included))
}

/// Names the tasks give to module-level code when the file defines nothing so named.
const MODULE_LEVEL: [&str; 2] = ["imports", "docstring"];

/// Gold symbols (`path::Class.method`) as definitions; `impl:N`, `imports` and `docstring`
/// name module-level code, no symbol, and are skipped.
fn gold_symbols(repo: &Repo, symbols: &[String]) -> (Vec<usize>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for s in symbols {
        let Some((path, name)) = s.split_once("::") else {
            continue;
        };
        if name.starts_with("impl:") {
            continue;
        }
        let Some(file) = repo.files.iter().position(|f| f.path == path) else {
            missing.push(s.clone());
            continue;
        };
        let suffix = format!(".{name}");
        let hit = repo.defs_of_file(file).find(|&d| {
            let qn = repo.defs[d].qualified_name.as_str();
            qn.ends_with(&suffix) || qn == name
        });
        match hit {
            Some(d) => found.push(d),
            // The file's imports or docstring: module-level code, like `impl:N`.
            None if MODULE_LEVEL.contains(&name) => {}
            None => missing.push(s.clone()),
        }
    }
    (found, missing)
}

fn summarize(results: &[TaskResult], budget: usize) -> Summary {
    let scored: Vec<&RenderResult> = results
        .iter()
        .filter_map(|r| r.results.get(&budget))
        .collect();
    let n = scored.len().max(1) as f64;
    let naming: Vec<bool> = scored.iter().filter_map(|r| r.gold_symbol).collect();
    let mut latencies: Vec<f64> = scored.iter().map(|r| r.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    Summary {
        tasks: scored.len(),
        gold_file_recall: round4(scored.iter().filter(|r| r.gold_file).count() as f64 / n),
        bm25_gold_file_recall: round4(
            scored.iter().filter(|r| r.bm25_gold_file).count() as f64 / n,
        ),
        tasks_naming_symbols: naming.len(),
        gold_symbol_recall: round4(
            naming.iter().filter(|&&h| h).count() as f64 / naming.len().max(1) as f64,
        ),
        mean_tokens: round4(scored.iter().map(|r| r.tokens as f64).sum::<f64>() / n),
        median_ms: percentile(&latencies, 0.5),
        p95_ms: percentile(&latencies, 0.95),
    }
}

/// Prints the summary, one row per budget.
pub fn print(report: &Report, out: &mut impl std::io::Write) -> Result<()> {
    let evaluated = report.tasks.len() - report.excluded.len();
    let mode = match report.mode {
        Renderer::Map => "map",
        Renderer::Pack => "pack",
    };
    writeln!(
        out,
        "{evaluated} tasks evaluated ({mode} of the task text), {} excluded; graph loaded in {:.0} ms",
        report.excluded.len(),
        report.load_ms
    )?;
    writeln!(
        out,
        "{:>7} {:>10} {:>10} {:>13} {:>11} {:>9} {:>7}",
        "budget", "gold file", "BM25 files", "gold symbol", "mean tokens", "median ms", "p95 ms"
    )?;
    for (budget, s) in &report.summary {
        writeln!(
            out,
            "{:>7} {:>10.3} {:>10.3} {:>6.3} of {:>3} {:>11.0} {:>9.1} {:>7.1}",
            budget,
            s.gold_file_recall,
            s.bm25_gold_file_recall,
            s.gold_symbol_recall,
            s.tasks_naming_symbols,
            s.mean_tokens,
            s.median_ms,
            s.p95_ms
        )?;
    }
    for id in &report.excluded {
        writeln!(out, "excluded {id}")?;
    }
    Ok(())
}
