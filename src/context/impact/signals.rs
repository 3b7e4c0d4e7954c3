//! Why a definition matters to a change, as four signals in 0..1, blended by weights:
//!
//! - graph: the best path from a changed definition through callers and callees, each hop
//!   worth `DECAY` times its edge's confidence;
//! - bm25: full-text similarity of the definition to the changed code, over the best match;
//! - same file: it is in a file the change touches;
//! - co-change: how often its file changed in the same commits as a changed file, from the
//!   history before the diff (large commits left out: a reformat says nothing).

use crate::context::defgraph::Repo;
use crate::model::NodeKind;
use crate::query::rank_files;
use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What a hop through the call graph keeps of a path's strength.
pub const DECAY: f64 = 0.5;
/// Full-text hits considered for the bm25 signal.
const BM25_HITS: usize = 400;
/// Bytes of changed code the full-text query is made from.
const QUERY_BYTES: usize = 8000;
/// Commits of history read for co-change, newest first.
pub const HISTORY_COMMITS: usize = 2000;
/// Commits changing more files than this are left out of co-change.
const LARGE_COMMIT: usize = 30;

/// How much each signal counts in the blend.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Weights {
    pub graph: f64,
    pub bm25: f64,
    pub same_file: f64,
    pub cochange: f64,
}

impl Weights {
    /// Graph, BM25, same file, co-change, comma-separated.
    pub fn parse(text: &str) -> Option<Weights> {
        let v: Vec<f64> = text
            .split(',')
            .map(|p| p.trim().parse::<f64>().ok())
            .collect::<Option<_>>()?;
        Weights::from_slice(&v)
    }

    /// Graph, BM25, same file, co-change: four numbers, each finite and 0 or more.
    pub fn from_slice(v: &[f64]) -> Option<Weights> {
        match *v {
            [graph, bm25, same_file, cochange] if v.iter().all(|w| w.is_finite() && *w >= 0.0) => {
                Some(Weights {
                    graph,
                    bm25,
                    same_file,
                    cochange,
                })
            }
            _ => None,
        }
    }

    pub fn blend(&self, s: &Signals) -> f64 {
        self.graph * s.graph
            + self.bm25 * s.bm25
            + self.same_file * s.same_file
            + self.cochange * s.cochange
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Signals {
    pub graph: f64,
    pub bm25: f64,
    pub same_file: f64,
    pub cochange: f64,
}

/// How the graph signal reached a definition: the hop into it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Via {
    pub from: usize,
    /// The definition calls (or references) `from`; otherwise `from` calls it.
    pub caller: bool,
    pub confidence: f64,
}

/// Graph proximity of every definition within `depth` hops of `seeds`, with the hop that
/// gave each its best path.
pub fn graph(repo: &Repo, seeds: &[usize], depth: usize) -> HashMap<usize, (f64, Option<Via>)> {
    let mut best: HashMap<usize, (f64, Option<Via>)> =
        seeds.iter().map(|&s| (s, (1.0, None))).collect();
    let mut frontier: Vec<usize> = seeds.to_vec();
    for _ in 0..depth {
        let mut next = Vec::new();
        for &from in &frontier {
            let here = best[&from].0;
            for (edges, caller) in [(&repo.in_edges[from], true), (&repo.out_edges[from], false)] {
                for e in edges {
                    let score = here * DECAY * e.confidence;
                    let slot = best.entry(e.other).or_insert((0.0, None));
                    if score > slot.0 {
                        *slot = (
                            score,
                            Some(Via {
                                from,
                                caller,
                                confidence: e.confidence,
                            }),
                        );
                        next.push(e.other);
                    }
                }
            }
        }
        next.sort_unstable();
        next.dedup();
        frontier = next;
        if frontier.is_empty() {
            break;
        }
    }
    for s in seeds {
        best.remove(s);
    }
    best
}

/// Full-text similarity of the index's nodes to the changed code, the best hit 1.
pub fn bm25(conn: &Connection, changed_code: &[&str]) -> Result<Vec<(i64, f64)>> {
    let mut text = String::new();
    for code in changed_code {
        let room = QUERY_BYTES.saturating_sub(text.len());
        if room == 0 {
            break;
        }
        let mut end = room.min(code.len());
        while !code.is_char_boundary(end) {
            end -= 1;
        }
        text.push_str(&code[..end]);
        text.push('\n');
    }
    let hits = rank_files::definition_hits(conn, &text, BM25_HITS)?;
    let top = hits.iter().map(|h| h.score).fold(0.0, f64::max);
    if top <= 0.0 {
        return Ok(Vec::new());
    }
    // A node is one full-text row: one hit each.
    Ok(hits.into_iter().map(|h| (h.node, h.score / top)).collect())
}

/// For each file path, how often it changed with one of `changed` (the best of them): the
/// commits holding both over those holding the changed file, plus one (a file seen in one
/// commit says less than one seen in twenty).
pub fn cochange(history: &[(String, Vec<String>)], changed: &[&str]) -> HashMap<String, f64> {
    let changed: HashSet<&str> = changed.iter().copied().collect();
    let mut with: HashMap<&str, usize> = HashMap::new();
    let mut pairs: HashMap<(&str, &str), usize> = HashMap::new();
    for (_, files) in history {
        if files.len() > LARGE_COMMIT {
            continue;
        }
        for f in files.iter().filter(|f| changed.contains(f.as_str())) {
            *with.entry(f).or_default() += 1;
            for g in files.iter().filter(|g| *g != f) {
                *pairs.entry((f, g)).or_default() += 1;
            }
        }
    }
    let mut out: HashMap<String, f64> = HashMap::new();
    for ((f, g), n) in pairs {
        let p = n as f64 / (with[f] + 1) as f64;
        let slot = out.entry(g.to_string()).or_default();
        *slot = slot.max(p);
    }
    out
}

/// Every definition with a signal, but files and `seeds`.
pub fn gather(
    repo: &Repo,
    seeds: &[usize],
    changed_files: &HashSet<usize>,
    graph: &HashMap<usize, (f64, Option<Via>)>,
    bm25: &HashMap<usize, f64>,
    cochange: &HashMap<String, f64>,
) -> Vec<(usize, Signals, Option<Via>)> {
    let seeds: HashSet<usize> = seeds.iter().copied().collect();
    let mut defs: HashSet<usize> = graph.keys().chain(bm25.keys()).copied().collect();
    for &f in changed_files {
        defs.extend(repo.defs_of_file(f));
    }
    let cofiles: HashSet<usize> = repo
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| cochange.contains_key(&f.path))
        .map(|(i, _)| i)
        .collect();
    for &f in &cofiles {
        defs.extend(repo.defs_of_file(f));
    }
    let mut out: Vec<(usize, Signals, Option<Via>)> = defs
        .into_iter()
        .filter(|d| !seeds.contains(d) && repo.defs[*d].kind != NodeKind::File)
        .map(|d| {
            let file = repo.defs[d].file;
            let (g, via) = graph.get(&d).copied().unwrap_or((0.0, None));
            let s = Signals {
                graph: g,
                bm25: bm25.get(&d).copied().unwrap_or(0.0),
                same_file: if changed_files.contains(&file) {
                    1.0
                } else {
                    0.0
                },
                cochange: cochange.get(&repo.files[file].path).copied().unwrap_or(0.0),
            };
            (d, s, via)
        })
        .collect();
    out.sort_by_key(|c| c.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse_four_numbers() {
        let w = Weights::parse("0.4, 0.3,0.2,0.1").unwrap();
        assert_eq!(w.same_file, 0.2);
        assert!(Weights::parse("1,2,3").is_none());
        assert!(Weights::parse("1,2,3,-1").is_none());
        assert!(Weights::parse("1,2,x,1").is_none());
    }

    #[test]
    fn cochange_counts_shared_commits() {
        let h = vec![
            (
                "c1".to_string(),
                vec!["a.py".to_string(), "b.py".to_string()],
            ),
            (
                "c2".to_string(),
                vec!["a.py".to_string(), "b.py".to_string()],
            ),
            (
                "c3".to_string(),
                vec!["a.py".to_string(), "c.py".to_string()],
            ),
            (
                "c4".to_string(),
                vec!["d.py".to_string(), "e.py".to_string()],
            ),
        ];
        let c = cochange(&h, &["a.py"]);
        assert_eq!(c["b.py"], 2.0 / 4.0);
        assert_eq!(c["c.py"], 1.0 / 4.0);
        assert!(!c.contains_key("d.py"));
        assert!(!c.contains_key("a.py"));
    }
}
