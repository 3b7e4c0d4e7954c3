//! The definitions and reference graph in memory, read once from the database for the
//! renderers (skeleton, repo map, pack), and personalized PageRank over it.
//!
//! Nodes are definitions (file nodes included: module-level code calls things too); an edge
//! `a -> b` says `a` calls, references, imports, inherits from or is decorated by `b`. Its
//! weight is the sum of the confidences of the sites between the two, so a definition called
//! from many places, surely, is worth more than one guessed at once.

use crate::model::NodeKind;
use crate::query::rank_files;
use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};
use rustc_hash::FxHashMap as HashMap;
use std::collections::HashSet;
use std::sync::OnceLock;

/// One definition, as the renderers need it.
#[derive(Clone, Debug)]
pub struct Def {
    pub id: i64,
    /// Index into `Repo::files`.
    pub file: usize,
    pub kind: NodeKind,
    pub name: String,
    pub qualified_name: String,
    /// Index into `Repo::defs` of the enclosing definition (`None` for file nodes).
    pub parent: Option<usize>,
    pub signature: Option<String>,
    /// The docstring's first non-empty line.
    pub doc_line: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
}

#[derive(Clone, Debug)]
pub struct File {
    pub id: i64,
    pub path: String,
    pub language: String,
    /// Tests, migrations and files of no parsed language (documentation, data).
    pub secondary: bool,
    /// Index into `Repo::defs` of the file node.
    pub node: Option<usize>,
}

/// All reference sites between two definitions, as one edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    pub other: usize,
    /// The sum of the sites' confidences.
    pub weight: f64,
    /// The most confident site's confidence.
    pub confidence: f64,
}

/// Runs `q` over the id range `range` (its `?1` and `?2`), or unbound.
fn query_range<'s>(
    q: &'s mut rusqlite::Statement,
    range: Option<(i64, i64)>,
) -> rusqlite::Result<rusqlite::Rows<'s>> {
    match range {
        Some((lo, hi)) => q.query([lo, hi]),
        None => q.query([]),
    }
}

/// Which part of the index a graph holds.
#[derive(Clone, Copy)]
enum Scope<'a> {
    /// The files under a path prefix ("" for all).
    Prefix(&'a str),
    /// These files (ids), whole.
    Files(&'a HashSet<i64>),
}

/// The repository's definitions and their reference graph.
pub struct Repo {
    pub files: Vec<File>,
    /// Grouped by file (files in id order), a file's definitions in source order, parents
    /// before children.
    pub defs: Vec<Def>,
    by_id: HashMap<i64, usize>,
    /// Each file's definitions: a range of `defs`.
    file_ranges: Vec<std::ops::Range<usize>>,
    /// Outgoing edges (`other` is the target), and incoming (`other` is the source), per
    /// definition.
    pub out_edges: Vec<Vec<Edge>>,
    pub in_edges: Vec<Vec<Edge>>,
    /// The walk's steps and the definitions by name, made on first use.
    steps: OnceLock<Steps>,
    named: OnceLock<Vec<u32>>,
}

/// The walk's steps into each node, flattened for one sequential pass per round: into node
/// `t`, `sources[offsets[t]..offsets[t + 1]]` with the probabilities `probs` of the step
/// from each, in source order; `dangling[i]` says node `i` has no step out.
struct Steps {
    offsets: Vec<u32>,
    sources: Vec<u32>,
    probs: Vec<f64>,
    dangling: Vec<bool>,
}

/// Edge kinds that say one definition depends on another (`contains` is structure).
pub const REFERENCE_KINDS: &str =
    "'calls', 'references', 'imports', 'inherits', 'implements', 'decorates'";

impl Repo {
    /// Reads every file and definition (under `path_prefix`, if given, for the definitions
    /// and files kept; edges leaving the prefix are dropped).
    pub fn load(conn: &Connection, path_prefix: Option<&str>) -> Result<Repo> {
        Self::load_scope(conn, Scope::Prefix(path_prefix.unwrap_or("")))
    }

    /// Reads the files `file_ids` whole, with the edges between their definitions: for a
    /// question about a few files and their neighbours, a fraction of the whole graph (which
    /// the same question on the whole graph answers alike as long as it stays within them).
    pub fn load_files(conn: &Connection, file_ids: &HashSet<i64>) -> Result<Repo> {
        Self::load_scope(conn, Scope::Files(file_ids))
    }

    fn load_scope(conn: &Connection, scope: Scope) -> Result<Repo> {
        let prefix = match scope {
            Scope::Prefix(p) => p,
            Scope::Files(_) => "",
        };
        let mut files = Vec::new();
        let mut file_index: HashMap<i64, usize> = HashMap::default();
        let mut q = conn.prepare(
            "SELECT id, path, language, flags FROM files WHERE substr(path, 1, length(?1)) = ?1 \
             ORDER BY path",
        )?;
        let mut rows = q.query([prefix])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            if let Scope::Files(wanted) = scope {
                if !wanted.contains(&id) {
                    continue;
                }
            }
            let path: String = r.get(1)?;
            let language: String = r.get(2)?;
            let flags: i64 = r.get(3)?;
            let secondary = rank_files::is_secondary(&language, flags);
            file_index.insert(id, files.len());
            files.push(File {
                id,
                path,
                language,
                secondary,
                node: None,
            });
        }
        const NODE_COLUMNS: &str = "SELECT id, file_id, kind, name, qualified_name, parent_id, \
             signature, substr(docstring, 1, 400), start_line, end_line, start_byte, end_byte \
             FROM nodes";
        // The whole table in one scan, or each file's id range (in file id order): either
        // way in id order, which groups them by file.
        let (nodes_sql, ranges, count) = match scope {
            Scope::Prefix(_) => {
                let count: i64 = conn.query_row("SELECT count(*) FROM nodes", [], |r| r.get(0))?;
                (NODE_COLUMNS.to_string(), vec![None], count.max(0) as usize)
            }
            Scope::Files(_) => {
                let mut ids: Vec<i64> = files.iter().map(|f| f.id).collect();
                ids.sort_unstable();
                let ranges = ids
                    .into_iter()
                    .map(|f| Some(crate::ids::node_range(f)))
                    .collect();
                (
                    format!("{NODE_COLUMNS} WHERE id >= ?1 AND id < ?2"),
                    ranges,
                    0,
                )
            }
        };
        let mut rows_read: Vec<(Def, Option<i64>)> = Vec::with_capacity(count);
        let mut q = conn.prepare(&nodes_sql)?;
        for &range in &ranges {
            let mut rows = query_range(&mut q, range)?;
            while let Some(r) = rows.next()? {
                let Some(&file) = file_index.get(&r.get::<_, i64>(1)?) else {
                    continue;
                };
                let Some(kind) = NodeKind::parse(r.get_ref(2)?.as_str()?) else {
                    continue;
                };
                let docstring = r.get_ref(7)?.as_str_or_null()?;
                let def = Def {
                    id: r.get(0)?,
                    file,
                    kind,
                    name: r.get(3)?,
                    qualified_name: r.get(4)?,
                    parent: None,
                    signature: r.get(6)?,
                    doc_line: docstring.and_then(first_line),
                    start_line: r.get(8)?,
                    end_line: r.get(9)?,
                    start_byte: r.get(10)?,
                    end_byte: r.get(11)?,
                };
                rows_read.push((def, r.get(5)?));
            }
        }
        // Ids are `file id << 19 | ordinal`: rowid order keeps a file's nodes together, in
        // source order, parents first.
        let mut by_id: HashMap<i64, usize> =
            HashMap::with_capacity_and_hasher(rows_read.len(), Default::default());
        let mut file_ranges = vec![0..0; files.len()];
        let mut defs: Vec<Def> = Vec::with_capacity(rows_read.len());
        let mut parents: Vec<Option<i64>> = Vec::with_capacity(rows_read.len());
        for (def, parent) in rows_read {
            let i = defs.len();
            by_id.insert(def.id, i);
            let range = &mut file_ranges[def.file];
            if range.end == 0 {
                *range = i..i;
            }
            range.end = i + 1;
            if def.kind == NodeKind::File {
                files[def.file].node = Some(i);
            }
            defs.push(def);
            parents.push(parent);
        }
        for (def, parent) in defs.iter_mut().zip(parents) {
            // A file node's parent is nothing; a top-level definition's is its file node.
            def.parent = parent.and_then(|p| by_id.get(&p).copied());
        }
        let mut out_edges = vec![Vec::new(); defs.len()];
        let mut in_edges = vec![Vec::new(); defs.len()];
        // Every site as (source, target, confidence), then merged per pair in sorted order,
        // so edge order never depends on the database's.
        let mut sites: Vec<(u32, u32, f64)> = Vec::new();
        let edges_sql = format!(
            "SELECT source_id, target_id, confidence FROM edges WHERE kind IN ({REFERENCE_KINDS})"
        );
        // The whole table in one scan, or the edges leaving each file, read through the
        // index on their source.
        let mut q = match scope {
            Scope::Prefix(_) => conn.prepare(&edges_sql)?,
            Scope::Files(_) => conn.prepare(&format!(
                "{edges_sql} AND source_id >= ?1 AND source_id < ?2"
            ))?,
        };
        for &range in &ranges {
            let mut rows = query_range(&mut q, range)?;
            while let Some(r) = rows.next()? {
                let (Some(&s), Some(&t)) = (by_id.get(&r.get(0)?), by_id.get(&r.get(1)?)) else {
                    continue;
                };
                if s != t {
                    sites.push((s as u32, t as u32, r.get(2)?));
                }
            }
        }
        sites.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
        for pair in sites.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
            let (s, t) = (pair[0].0 as usize, pair[0].1 as usize);
            let weight = pair.iter().map(|p| p.2).sum();
            let confidence = pair.iter().map(|p| p.2).fold(0.0, f64::max);
            let edge = |other| Edge {
                other,
                weight,
                confidence,
            };
            out_edges[s].push(edge(t));
            in_edges[t].push(edge(s));
        }
        Ok(Repo {
            files,
            defs,
            by_id,
            file_ranges,
            out_edges,
            in_edges,
            steps: OnceLock::new(),
            named: OnceLock::new(),
        })
    }

    /// Definitions (file nodes aside) named `name`, as indexes into `defs` in order.
    pub fn named(&self, name: &str) -> &[u32] {
        let sorted = self.named.get_or_init(|| {
            let mut sorted: Vec<u32> = (0..self.defs.len() as u32)
                .filter(|&i| self.defs[i as usize].kind != NodeKind::File)
                .collect();
            sorted.sort_by(|&a, &b| {
                (self.defs[a as usize].name.as_str(), a)
                    .cmp(&(self.defs[b as usize].name.as_str(), b))
            });
            sorted
        });
        let name_of = |i: &u32| self.defs[*i as usize].name.as_str();
        let start = sorted.partition_point(|i| name_of(i) < name);
        let end = start + sorted[start..].partition_point(|i| name_of(i) == name);
        &sorted[start..end]
    }

    /// Nodes a walk starting where `restart` is positive reaches, in index order.
    fn reachable_from(&self, restart: &[f64]) -> Vec<u32> {
        let mut seen: Vec<bool> = restart.iter().map(|&w| w > 0.0).collect();
        let mut stack: Vec<usize> = (0..seen.len()).filter(|&i| seen[i]).collect();
        if stack.len() < seen.len() {
            while let Some(s) = stack.pop() {
                for e in &self.out_edges[s] {
                    if !seen[e.other] {
                        seen[e.other] = true;
                        stack.push(e.other);
                    }
                }
            }
        }
        (0..seen.len() as u32)
            .filter(|&i| seen[i as usize])
            .collect()
    }

    fn steps(&self) -> &Steps {
        self.steps.get_or_init(|| {
            let totals: Vec<f64> = self
                .out_edges
                .iter()
                .map(|edges| edges.iter().map(|e| e.weight).sum())
                .collect();
            let mut offsets = Vec::with_capacity(self.defs.len() + 1);
            let (mut sources, mut probs) = (Vec::new(), Vec::new());
            for edges in &self.in_edges {
                offsets.push(sources.len() as u32);
                // In-edges are in source order (see `load`).
                for e in edges.iter().filter(|e| totals[e.other] > 0.0) {
                    sources.push(e.other as u32);
                    probs.push(e.weight / totals[e.other]);
                }
            }
            offsets.push(sources.len() as u32);
            Steps {
                offsets,
                sources,
                probs,
                dangling: totals.iter().map(|&t| t <= 0.0).collect(),
            }
        })
    }

    pub fn index_of(&self, id: i64) -> Option<usize> {
        self.by_id.get(&id).copied()
    }

    /// Definitions of a file, `file` being an index into `files`: a contiguous range.
    pub fn defs_of_file(&self, file: usize) -> std::ops::Range<usize> {
        self.file_ranges[file].clone()
    }

    /// Whether `inner` is `outer` or lies inside it.
    pub fn is_within(&self, inner: usize, outer: usize) -> bool {
        let mut at = Some(inner);
        while let Some(i) = at {
            if i == outer {
                return true;
            }
            at = self.defs[i].parent;
        }
        false
    }

    /// Personalized PageRank: the stationary distribution of a walk that follows weighted
    /// edges with probability `DAMPING` and otherwise restarts at a node drawn from
    /// `restart` (any non-negative weights; uniform when all are zero). Dangling nodes
    /// restart. Iterates until the L1 change is below 1e-6 or 100 rounds.
    pub fn pagerank(&self, restart: &[f64]) -> Vec<f64> {
        const DAMPING: f64 = 0.85;
        let n = self.defs.len();
        if n == 0 {
            return Vec::new();
        }
        let total: f64 = restart.iter().sum();
        let p: Vec<f64> = if total > 0.0 {
            restart.iter().map(|w| w / total).collect()
        } else {
            vec![1.0 / n as f64; n]
        };
        let steps = self.steps();
        // A node the walk cannot reach from where it restarts keeps a rank of exactly 0
        // (so do all the nodes stepping into it): only the reachable ones are computed,
        // which changes no bit of the result. A query's restart reaches a fraction of them.
        let reachable = self.reachable_from(&p);
        let mut rank = p.clone();
        let mut next = vec![0.0; n];
        let mut dangling: f64 = (0..n).filter(|&i| steps.dangling[i]).map(|i| rank[i]).sum();
        for _ in 0..100 {
            let restart_mass = 1.0 - DAMPING + DAMPING * dangling;
            // One pass: each node's new rank from the ranks flowing in, and on the way the
            // change and the dangling mass of the next round.
            let (mut delta, mut next_dangling) = (0.0, 0.0);
            for t in reachable.iter().map(|&t| t as usize) {
                let range = steps.offsets[t] as usize..steps.offsets[t + 1] as usize;
                let mut x = restart_mass * p[t];
                for (&s, &w) in steps.sources[range.clone()].iter().zip(&steps.probs[range]) {
                    x += DAMPING * rank[s as usize] * w;
                }
                next[t] = x;
                delta += (rank[t] - x).abs();
                if steps.dangling[t] {
                    next_dangling += x;
                }
            }
            std::mem::swap(&mut rank, &mut next);
            dangling = next_dangling;
            if delta < 1e-6 {
                break;
            }
        }
        rank
    }
}

fn first_line(doc: &str) -> Option<String> {
    doc.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// The source text of a definition: `content` is its file's text.
pub fn source_of<'a>(content: &'a str, def: &Def) -> &'a str {
    let (s, e) = (def.start_byte as usize, def.end_byte as usize);
    content.get(s..e.min(content.len())).unwrap_or("")
}

/// Reads files' texts by file id, each once.
pub struct Contents<'c> {
    q: rusqlite::CachedStatement<'c>,
    cache: HashMap<i64, std::rc::Rc<str>>,
}

impl<'c> Contents<'c> {
    pub fn new(conn: &'c Connection) -> Result<Self> {
        Ok(Contents {
            q: conn.prepare_cached("SELECT content FROM file_contents WHERE file_id = ?1")?,
            cache: HashMap::default(),
        })
    }

    pub fn of(&mut self, file_id: i64) -> Result<std::rc::Rc<str>> {
        if let Some(c) = self.cache.get(&file_id) {
            return Ok(c.clone());
        }
        let text: String = self
            .q
            .query_row([file_id], |r| r.get(0))
            .optional()?
            .unwrap_or_default();
        let text: std::rc::Rc<str> = text.into();
        self.cache.insert(file_id, text.clone());
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize, edges: &[(usize, usize, f64)]) -> Repo {
        let defs = (0..n)
            .map(|i| Def {
                id: i as i64,
                file: 0,
                kind: NodeKind::Function,
                name: format!("f{i}"),
                qualified_name: format!("m.f{i}"),
                parent: None,
                signature: None,
                doc_line: None,
                start_line: 1,
                end_line: 1,
                start_byte: 0,
                end_byte: 0,
            })
            .collect();
        let mut out_edges = vec![Vec::new(); n];
        let mut in_edges = vec![Vec::new(); n];
        for &(s, t, w) in edges {
            let edge = |other| Edge {
                other,
                weight: w,
                confidence: w,
            };
            out_edges[s].push(edge(t));
            in_edges[t].push(edge(s));
        }
        Repo {
            files: Vec::new(),
            defs,
            by_id: HashMap::default(),
            file_ranges: Vec::new(),
            out_edges,
            in_edges,
            steps: OnceLock::new(),
            named: OnceLock::new(),
        }
    }

    #[test]
    fn pagerank_sums_to_one_and_favours_the_called() {
        // 0, 1 and 2 all call 3; 3 calls nothing.
        let repo = chain(4, &[(0, 3, 1.0), (1, 3, 1.0), (2, 3, 1.0)]);
        let r = repo.pagerank(&[0.0; 4]);
        assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(r[3] > r[0] * 2.0, "{r:?}");
        assert!((r[0] - r[1]).abs() < 1e-12);
    }

    #[test]
    fn personalization_moves_rank_to_the_focus_and_its_callees() {
        // 0 -> 1, 2 -> 3: restarting at 0 ranks 1 above 3.
        let repo = chain(4, &[(0, 1, 1.0), (2, 3, 1.0)]);
        let r = repo.pagerank(&[1.0, 0.0, 0.0, 0.0]);
        assert!(r[1] > r[3] && r[0] > r[2], "{r:?}");
        assert_eq!(r[3], 0.0);
    }

    #[test]
    fn a_restart_that_reaches_part_of_the_graph_ranks_as_the_whole_iteration_does() {
        // 0 -> 1 -> 2 -> 0 and 1 -> 3 (dangling); 4 -> 5 -> 1, never reached from 0.
        let edges = [
            (0, 1, 1.0),
            (1, 2, 2.0),
            (2, 0, 1.0),
            (1, 3, 1.0),
            (4, 5, 1.0),
            (5, 1, 1.0),
        ];
        let repo = chain(6, &edges);
        let restart = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let got = repo.pagerank(&restart);
        // Every node, every round, pushing along the out-steps.
        let totals: Vec<f64> = repo
            .out_edges
            .iter()
            .map(|e| e.iter().map(|e| e.weight).sum())
            .collect();
        let mut rank = restart.to_vec();
        for _ in 0..100 {
            let dangling: f64 = (0..6).filter(|&i| totals[i] == 0.0).map(|i| rank[i]).sum();
            let mut next: Vec<f64> = restart
                .iter()
                .map(|p| (0.15 + 0.85 * dangling) * p)
                .collect();
            for (s, out) in repo.out_edges.iter().enumerate() {
                for e in out {
                    next[e.other] += 0.85 * rank[s] * e.weight / totals[s];
                }
            }
            let delta: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            rank = next;
            if delta < 1e-6 {
                break;
            }
        }
        for (g, want) in got.iter().zip(&rank) {
            assert!((g - want).abs() < 1e-12, "{got:?} vs {rank:?}");
        }
        assert_eq!((got[4], got[5]), (0.0, 0.0));
    }

    #[test]
    fn heavier_edges_carry_more_rank() {
        let repo = chain(3, &[(0, 1, 0.95), (0, 2, 0.25)]);
        let r = repo.pagerank(&[1.0, 0.0, 0.0]);
        assert!(r[1] > 3.0 * r[2], "{r:?}");
    }

    /// What of each skeleton render is loading the graph and PageRank, on a real index from
    /// `SKELETON_DB` (a database path; the integration test `skeleton::measure_on_a_real_index`
    /// times the renders); skipped without it. Run in release:
    /// `SKELETON_DB=/tmp/django.db cargo test --release --lib -- --ignored --nocapture defgraph::`
    #[test]
    #[ignore]
    fn measure_on_a_real_index() {
        let Ok(db) = std::env::var("SKELETON_DB") else {
            eprintln!("SKELETON_DB unset: nothing measured");
            return;
        };
        let conn =
            crate::store::open(std::path::Path::new(&db), crate::store::Mode::ReadOnly).unwrap();
        let start = std::time::Instant::now();
        let repo = Repo::load(&conn, None).unwrap();
        let load = start.elapsed();
        let start = std::time::Instant::now();
        repo.pagerank(&vec![1.0; repo.defs.len()]);
        println!(
            "of each render: loading the graph {:.0} ms, PageRank {:.0} ms",
            load.as_secs_f64() * 1e3,
            start.elapsed().as_secs_f64() * 1e3
        );
    }
}
