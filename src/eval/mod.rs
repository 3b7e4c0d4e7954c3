//! Retrieval evaluation: for tasks with known answers (an issue text and the files its fix
//! changed), how often the right file lands in what the ranking returns. Reported per task
//! and overall, for this tool's ranking (`rank_files::rank_files`) and for the classic baseline,
//! BM25 over whole files, side by side:
//! - Acc@k: a gold file among the first k files;
//! - MRR: the mean of 1 / (rank of the first gold file), 0 when it is not ranked;
//! - in-budget recall: a gold file within the longest prefix of the ranked files whose whole
//!   text fits a token budget (o200k_base), the SWE-bench paper's BM25 setting;
//! - latency of each ranking, median and 95th percentile.
//!
//! A gold file missing from the index is reported and left out; a task none of whose gold
//! files is indexed is excluded, not counted as a miss.

pub mod context;

use crate::query::rank_files::{self, words};
use anyhow::{Context, Result};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

/// One task of a tasks file (JSON lines); other fields (`release`) are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    pub id: String,
    pub query: String,
    pub gold_files: Vec<String>,
    #[serde(default)]
    pub gold_symbols: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// Cut-offs for Acc@k.
    pub k: Vec<usize>,
    /// Token budgets for in-budget recall.
    pub budgets: Vec<usize>,
}

impl EvalOptions {
    pub const DEFAULT_K: [usize; 4] = [1, 3, 5, 10];
    /// Also the budgets of `eval --mode map|pack`.
    pub const DEFAULT_BUDGETS: [usize; 3] = [4000, 13000, 27000];
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            k: Self::DEFAULT_K.to_vec(),
            budgets: Self::DEFAULT_BUDGETS.to_vec(),
        }
    }
}

pub const SYSTEMS: [&str; 2] = ["indexer", "bm25"];

/// Files listed in a task's `top`.
const TOP_LISTED: usize = 10;

#[derive(Debug, Serialize)]
pub struct Report {
    pub systems: Vec<&'static str>,
    pub k: Vec<usize>,
    pub budgets: Vec<usize>,
    pub tasks: Vec<TaskResult>,
    pub summary: BTreeMap<&'static str, Summary>,
    /// Tasks none of whose gold files is in the index.
    pub excluded: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct TaskResult {
    pub id: String,
    /// Gold files present in the index (the ones scored).
    pub gold_files: Vec<String>,
    pub missing_gold_files: Vec<String>,
    pub excluded: bool,
    pub results: BTreeMap<&'static str, SystemResult>,
}

#[derive(Debug, Serialize)]
pub struct SystemResult {
    /// 1-based rank of the first gold file; `None` when it was not ranked.
    pub rank: Option<usize>,
    pub reciprocal_rank: f64,
    pub hit_at: BTreeMap<usize, bool>,
    pub in_budget: BTreeMap<usize, bool>,
    pub latency_ms: f64,
    pub top: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    pub tasks: usize,
    pub acc_at: BTreeMap<usize, f64>,
    pub mrr: f64,
    pub in_budget_recall: BTreeMap<usize, f64>,
    pub latency_ms: Latency,
}

#[derive(Debug, Serialize)]
pub struct Latency {
    pub median: f64,
    pub p95: f64,
}

/// Reads a tasks file: one JSON object per line, blank lines ignored.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read tasks file {}", path.display()))?;
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let task: Task = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a task", path.display(), i + 1))?;
        tasks.push(task);
    }
    if tasks.is_empty() {
        crate::error::invalid!("{} holds no tasks", path.display());
    }
    Ok(tasks)
}

/// A task's gold files: those in the index, and those missing from it.
pub fn split_gold(task: &Task, indexed: impl Fn(&str) -> bool) -> (Vec<String>, Vec<String>) {
    task.gold_files.iter().cloned().partition(|g| indexed(g))
}

pub fn run(conn: &Connection, tasks: &[Task], opts: &EvalOptions) -> Result<Report> {
    if opts.k.is_empty() || opts.k.contains(&0) {
        crate::error::invalid!("--k needs cut-offs of 1 or more");
    }
    let indexed: HashSet<String> = crate::store::file_paths(conn)?.into_iter().collect();
    let bm25 = Bm25::build(conn)?;
    let mut tokens = TokenCounts::new(conn)?;
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (gold, missing) = split_gold(task, |g| indexed.contains(g));
        let mut result = TaskResult {
            id: task.id.clone(),
            excluded: gold.is_empty(),
            gold_files: gold,
            missing_gold_files: missing,
            results: BTreeMap::new(),
        };
        if !result.excluded {
            for system in SYSTEMS {
                let started = Instant::now();
                let ranked = match system {
                    "indexer" => rank_files::rank_files(conn, &task.query, usize::MAX)
                        .map(|r| r.into_iter().map(|f| f.path).collect())
                        .unwrap_or_default(),
                    _ => bm25.rank(&task.query),
                };
                let latency_ms = started.elapsed().as_secs_f64() * 1e3;
                let scored = score(&ranked, &result.gold_files, opts, latency_ms, |p| {
                    tokens.of(p)
                })?;
                result.results.insert(system, scored);
            }
        }
        results.push(result);
    }
    let summary = SYSTEMS
        .iter()
        .map(|&s| (s, summarize(&results, s, opts)))
        .collect();
    Ok(Report {
        systems: SYSTEMS.to_vec(),
        k: opts.k.clone(),
        budgets: opts.budgets.clone(),
        excluded: results
            .iter()
            .filter(|r| r.excluded)
            .map(|r| r.id.clone())
            .collect(),
        tasks: results,
        summary,
    })
}

/// One system's result on one task: `tokens` counts a file's whole text.
fn score(
    ranked: &[String],
    gold: &[String],
    opts: &EvalOptions,
    latency_ms: f64,
    mut tokens: impl FnMut(&str) -> Result<usize>,
) -> Result<SystemResult> {
    let rank = ranked.iter().position(|p| gold.contains(p)).map(|i| i + 1);
    let mut in_budget = BTreeMap::new();
    for &budget in &opts.budgets {
        in_budget.insert(budget, within_budget(ranked, gold, budget, &mut tokens)?);
    }
    Ok(SystemResult {
        rank,
        reciprocal_rank: rank.map_or(0.0, |r| 1.0 / r as f64),
        hit_at: opts
            .k
            .iter()
            .map(|&k| (k, rank.is_some_and(|r| r <= k)))
            .collect(),
        in_budget,
        latency_ms: (latency_ms * 100.0).round() / 100.0,
        top: ranked.iter().take(TOP_LISTED).cloned().collect(),
    })
}

/// Whether a gold file is within the longest prefix of `ranked` whose whole files fit `budget`.
pub fn within_budget(
    ranked: &[String],
    gold: &[String],
    budget: usize,
    mut tokens: impl FnMut(&str) -> Result<usize>,
) -> Result<bool> {
    let mut used = 0;
    for path in ranked {
        used += tokens(path)?;
        if used > budget {
            return Ok(false);
        }
        if gold.contains(path) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn summarize(results: &[TaskResult], system: &str, opts: &EvalOptions) -> Summary {
    let scored: Vec<&SystemResult> = results
        .iter()
        .filter_map(|r| r.results.get(system))
        .collect();
    let n = scored.len().max(1) as f64;
    let share = |hit: &dyn Fn(&SystemResult) -> bool| {
        round4(scored.iter().filter(|r| hit(r)).count() as f64 / n)
    };
    let mut latencies: Vec<f64> = scored.iter().map(|r| r.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    Summary {
        tasks: scored.len(),
        acc_at: opts
            .k
            .iter()
            .map(|&k| (k, share(&|r| r.hit_at[&k])))
            .collect(),
        mrr: round4(scored.iter().map(|r| r.reciprocal_rank).sum::<f64>() / n),
        in_budget_recall: opts
            .budgets
            .iter()
            .map(|&b| (b, share(&|r| r.in_budget[&b])))
            .collect(),
        latency_ms: Latency {
            median: percentile(&latencies, 0.5),
            p95: percentile(&latencies, 0.95),
        },
    }
}

pub fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Linear interpolation between the closest ranks of sorted `values`.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let at = p * (values.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    let x = values[lo] + (values[hi] - values[lo]) * (at - lo as f64);
    (x * 100.0).round() / 100.0
}

/// Prints the summary as a table, and the excluded tasks.
pub fn print(report: &Report, out: &mut impl std::io::Write) -> Result<()> {
    let evaluated = report.tasks.len() - report.excluded.len();
    writeln!(
        out,
        "{evaluated} tasks evaluated, {} excluded (no gold file in the index)",
        report.excluded.len()
    )?;
    let mut header = format!("{:<8}", "system");
    for k in &report.k {
        header.push_str(&format!(" {:>7}", format!("Acc@{k}")));
    }
    header.push_str(&format!(" {:>6}", "MRR"));
    for b in &report.budgets {
        header.push_str(&format!(" {:>7}", format!("R@{}k", b / 1000)));
    }
    header.push_str(&format!(" {:>9} {:>7}", "median ms", "p95 ms"));
    writeln!(out, "{header}")?;
    for system in &report.systems {
        let s = &report.summary[system];
        let mut row = format!("{system:<8}");
        for k in &report.k {
            row.push_str(&format!(" {:>7.3}", s.acc_at[k]));
        }
        row.push_str(&format!(" {:>6.3}", s.mrr));
        for b in &report.budgets {
            row.push_str(&format!(" {:>7.3}", s.in_budget_recall[b]));
        }
        row.push_str(&format!(
            " {:>9.1} {:>7.1}",
            s.latency_ms.median, s.latency_ms.p95
        ));
        writeln!(out, "{row}")?;
    }
    for id in &report.excluded {
        writeln!(out, "excluded {id}")?;
    }
    Ok(())
}

/// Whole-file token counts (o200k_base), read and counted once per file.
pub struct TokenCounts<'c> {
    content: rusqlite::CachedStatement<'c>,
    counted: HashMap<String, usize>,
}

impl<'c> TokenCounts<'c> {
    pub fn new(conn: &'c Connection) -> Result<Self> {
        Ok(TokenCounts {
            content: conn.prepare_cached(
                "SELECT c.content FROM file_contents c JOIN files f ON f.id = c.file_id \
                 WHERE f.path = ?1",
            )?,
            counted: HashMap::new(),
        })
    }

    pub fn of(&mut self, path: &str) -> Result<usize> {
        if let Some(&n) = self.counted.get(path) {
            return Ok(n);
        }
        let text: String = self.content.query_row([path], |r| r.get(0))?;
        let n = crate::context::tokens::Tokenizer::O200k.count(&text);
        self.counted.insert(path.to_string(), n);
        Ok(n)
    }
}

/// The baseline: Okapi BM25 over each file's path and text as words (identifiers split
/// into sub-tokens, also kept whole), with the parameters of the SWE-bench retrieval
/// (Pyserini's defaults, k1 = 0.9, b = 0.4). Built in memory from the database.
pub struct Bm25 {
    paths: Vec<String>,
    lengths: Vec<u32>,
    average_length: f64,
    postings: HashMap<String, Vec<(u32, u32)>>,
}

const K1: f64 = 0.9;
const B: f64 = 0.4;

impl Bm25 {
    pub fn build(conn: &Connection) -> Result<Self> {
        let mut q = conn.prepare(
            "SELECT f.path, c.content FROM files f JOIN file_contents c ON c.file_id = f.id \
             ORDER BY f.path",
        )?;
        let docs: Vec<(String, String)> = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        // Term counts per file, on every core.
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let chunk = docs.len().div_ceil(threads).max(1);
        let counted: Vec<Vec<HashMap<String, u32>>> = std::thread::scope(|s| {
            let workers: Vec<_> = docs
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|(path, text)| {
                                let mut tf: HashMap<String, u32> = HashMap::new();
                                for t in [path.as_str(), text.as_str()] {
                                    words(t, true, |w| match tf.get_mut(w) {
                                        Some(n) => *n += 1,
                                        None => {
                                            tf.insert(w.to_string(), 1);
                                        }
                                    });
                                }
                                tf
                            })
                            .collect()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("tokenizer thread"))
                .collect()
        });
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(docs.len());
        for (doc, tf) in counted.into_iter().flatten().enumerate() {
            lengths.push(tf.values().sum());
            for (term, n) in tf {
                postings.entry(term).or_default().push((doc as u32, n));
            }
        }
        let average_length =
            lengths.iter().map(|&l| l as f64).sum::<f64>() / lengths.len().max(1) as f64;
        Ok(Bm25 {
            paths: docs.into_iter().map(|(p, _)| p).collect(),
            lengths,
            average_length,
            postings,
        })
    }

    /// Every file with a query word, best first (ties by path).
    pub fn rank(&self, query: &str) -> Vec<String> {
        let mut terms = HashSet::new();
        words(query, true, |w| {
            terms.insert(w.to_string());
        });
        let n = self.paths.len() as f64;
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for term in terms {
            let Some(list) = self.postings.get(&term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let tf = tf as f64;
                let norm = 1.0 - B + B * self.lengths[doc as usize] as f64 / self.average_length;
                *scores.entry(doc).or_default() += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let mut ranked: Vec<(u32, f64)> = scores.into_iter().collect();
        // Documents are numbered in path order: ties fall back to it.
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .map(|(doc, _)| self.paths[doc as usize].clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    /// Values worked out by hand: files a, b, c, d of 5, 8, 10 and 1 tokens, gold c.
    #[test]
    fn metrics_of_one_task() {
        let opts = EvalOptions {
            k: vec![1, 3, 5],
            budgets: vec![10, 25],
        };
        let tokens = |p: &str| {
            Ok(match p {
                "a" => 5,
                "b" => 8,
                "c" => 10,
                _ => 1,
            })
        };
        let r = score(
            &ranked(&["a", "b", "c", "d"]),
            &ranked(&["c"]),
            &opts,
            1.0,
            tokens,
        )
        .unwrap();
        assert_eq!(r.rank, Some(3));
        assert!((r.reciprocal_rank - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.hit_at, BTreeMap::from([(1, false), (3, true), (5, true)]));
        // 10 tokens hold a (5) but not a + b (13); 25 hold a + b + c (23).
        assert_eq!(r.in_budget, BTreeMap::from([(10, false), (25, true)]));
        // A gold file never ranked: rank none, reciprocal rank 0, no hit anywhere.
        let miss = score(&ranked(&["a", "b"]), &ranked(&["x"]), &opts, 1.0, tokens).unwrap();
        assert_eq!((miss.rank, miss.reciprocal_rank), (None, 0.0));
        assert!(miss
            .hit_at
            .values()
            .chain(miss.in_budget.values())
            .all(|h| !h));
        // The first of several gold files counts.
        let two = score(
            &ranked(&["a", "b", "c"]),
            &ranked(&["c", "b"]),
            &opts,
            1.0,
            tokens,
        )
        .unwrap();
        assert_eq!(two.rank, Some(2));
        assert_eq!(two.in_budget, BTreeMap::from([(10, false), (25, true)]));
    }

    /// Over tasks ranked 1, 3 and not at all, and one excluded: Acc@1 1/3, Acc@3 2/3,
    /// MRR (1 + 1/3 + 0) / 3 = 0.4444.
    #[test]
    fn metrics_over_tasks_leave_out_the_excluded() {
        let opts = EvalOptions {
            k: vec![1, 3],
            budgets: vec![100],
        };
        let tokens = |_: &str| Ok(10);
        let task = |id: &str, ranking: &[&str], latency: f64| {
            let r = score(&ranked(ranking), &ranked(&["g"]), &opts, latency, tokens).unwrap();
            TaskResult {
                id: id.into(),
                gold_files: ranked(&["g"]),
                missing_gold_files: Vec::new(),
                excluded: false,
                results: BTreeMap::from([("indexer", r)]),
            }
        };
        let excluded = TaskResult {
            id: "x".into(),
            gold_files: Vec::new(),
            missing_gold_files: ranked(&["gone.py"]),
            excluded: true,
            results: BTreeMap::new(),
        };
        let tasks = [
            task("first", &["g", "a"], 10.0),
            task("third", &["a", "b", "g"], 30.0),
            task("never", &["a"], 20.0),
            excluded,
        ];
        let s = summarize(&tasks, "indexer", &opts);
        assert_eq!(s.tasks, 3);
        assert_eq!(s.acc_at, BTreeMap::from([(1, 0.3333), (3, 0.6667)]));
        assert_eq!(s.mrr, 0.4444);
        assert_eq!(s.in_budget_recall, BTreeMap::from([(100, 0.6667)]));
        assert_eq!((s.latency_ms.median, s.latency_ms.p95), (20.0, 29.0));
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile(&v, 0.5), 3.0);
        assert_eq!(percentile(&v, 0.95), 8.8);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
