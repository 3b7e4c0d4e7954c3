//! The blast radius of a definition or a file: what may break when it changes. Its
//! transitive callers as a tree (each with the confidence of the edge that reached it and of
//! the whole path), the call sites that name a reached definition but did not resolve to it
//! (they might reach it too), and the tests among the callers, the ones to run.
//!
//! The walk is the trace's (`trace::walk`); this module decides where each definition sits in
//! the tree: at the shallowest hop that reaches it, under the parent whose path is the most
//! confident (ties: the first edge the walk met, which is deterministic). Later sightings of a
//! definition already placed are left out of the tree and only counted (`edges`).

use super::trace::{self, Direction, NodeRef, Site};
use crate::model::NodeKind;
use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;
use std::collections::HashMap;

/// What to measure the blast radius of, and how far to go.
#[derive(Clone, Debug)]
pub struct Options {
    /// A definition (qualified name, or an unambiguous short name or suffix) or a file
    /// (repository-relative path): every definition in the file, the file node included.
    pub target: String,
    /// Hops of callers to follow, 1 to `MAX_DEPTH`.
    pub depth: usize,
    /// Edges below this confidence (0..1) are not followed; they are listed with the
    /// unresolved sites instead.
    pub min_confidence: f64,
    /// Renderings list the tests first (`Blast::tests` is filled either way).
    pub tests_first: bool,
}

impl Options {
    pub const DEFAULT_DEPTH: usize = 3;
    pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.0;
    /// Beyond ten hops of callers nearly every definition of a repository is reached.
    pub const MAX_DEPTH: usize = 10;
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: String::new(),
            depth: Self::DEFAULT_DEPTH,
            min_confidence: Self::DEFAULT_MIN_CONFIDENCE,
            tests_first: false,
        }
    }
}

/// Callers the tree (and the list of tests) shows at most, the roots aside; the rest are
/// counted.
pub const MAX_NODES: usize = 500;
/// Unresolved sites listed at most; the rest are counted.
pub const MAX_SITES: usize = 200;
/// The walk stops after this many edges (a hub's callers can be most of a repository) and
/// says so (`Blast::truncated`).
pub const MAX_EDGES: usize = 50_000;

/// The blast radius; as JSON this is the documented schema (`codebase-indexer/blast/1`).
#[derive(Debug, Serialize)]
pub struct Blast {
    pub schema: &'static str,
    /// The target as asked, and the definition or file it named.
    pub target: String,
    pub root: NodeRef,
    /// `definition` or `file`.
    pub target_kind: &'static str,
    pub depth: usize,
    pub min_confidence: f64,
    pub tests_first: bool,
    /// The tree in pre-order: the roots (hop 0: the definition, or those of the file's
    /// definitions, its own node included, that have callers), each followed by its callers,
    /// most confident first. `parent` is the index of the node it calls in this list.
    pub nodes: Vec<BlastNode>,
    /// Test code among the callers, most confident path first.
    pub tests: Vec<TestReach>,
    /// Call sites naming a definition of the tree (or a root of a file) that did not resolve
    /// to it (and, with a confidence floor, the edges to it below the floor): they might also
    /// reach it. Nearest and most confident definitions first.
    pub unresolved: Vec<MightReach>,
    /// Definitions the target holds (1 for a definition; a file's definitions and itself).
    pub roots: usize,
    /// Callers reached, the roots aside; those the tree leaves out past `MAX_NODES`.
    pub reached: usize,
    pub left_out: usize,
    pub tests_left_out: usize,
    pub unresolved_left_out: usize,
    /// Edges the walk crossed, those to definitions placed elsewhere in the tree included.
    pub edges: usize,
    /// The walk stopped after `MAX_EDGES` edges: there may be more callers.
    pub truncated: bool,
}

/// A definition of the tree.
#[derive(Clone, Debug, Serialize)]
pub struct BlastNode {
    /// Its position in `Blast::nodes`.
    pub index: usize,
    /// The node it calls (its parent in the tree); `None` for a root.
    pub parent: Option<usize>,
    /// Hops from the target (0 for a root).
    pub depth: usize,
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    /// Its first line.
    pub line: i64,
    /// Of the edge to its parent (1 for a root), and the product along the path to the root.
    pub confidence: f64,
    pub path_confidence: f64,
    /// How it reaches its parent: `calls` or `references`, the resolution strategy, and the
    /// line of the site (all `None` for a root).
    pub edge_kind: Option<String>,
    pub strategy: Option<String>,
    pub site_line: Option<i64>,
    /// Test code (see `TestReach`).
    pub test: bool,
}

/// A test that reaches the target: a definition in a test file (`files.flags & 1`, the
/// paths `search` ranks below other code), or a function or method named or marked as a
/// test by its language's conventions (`test_x`, `TestX`, `testX`, `#[test]`, `@Test`, a
/// member of a Rust `mod tests`).
#[derive(Clone, Debug, Serialize)]
pub struct TestReach {
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: i64,
    pub depth: usize,
    pub path_confidence: f64,
    /// The root it reaches, and the definitions on the way from the test to it.
    pub reaches: String,
    pub via: Vec<String>,
}

/// An unresolved site that names a definition of the tree.
#[derive(Clone, Debug, Serialize)]
pub struct MightReach {
    /// The definition of the tree it names.
    pub might_reach: String,
    #[serde(flatten)]
    pub site: Site,
}

/// Where a reached definition sits: its hop, its parent and the edge to it.
struct Placed {
    depth: usize,
    parent: Option<i64>,
    confidence: f64,
    path_confidence: f64,
    edge: Option<trace::Hop>,
}

/// What the tree shows of a definition besides its place.
struct Facts {
    qualified_name: String,
    kind: String,
    path: String,
    line: i64,
    test: bool,
}

pub fn blast(conn: &Connection, opts: &Options) -> Result<Blast> {
    if opts.depth == 0 || opts.depth > Options::MAX_DEPTH {
        crate::error::invalid!(
            "depth {} is out of range: use 1 to {} hops of callers",
            opts.depth,
            Options::MAX_DEPTH
        );
    }
    if !(0.0..=1.0).contains(&opts.min_confidence) {
        crate::error::invalid!(
            "min confidence {} is out of range: use a value from 0 to 1",
            opts.min_confidence
        );
    }
    let target = super::resolve_target(conn, &opts.target)?;
    let root = trace::node_ref(conn, target)?;
    let is_file = root.kind == NodeKind::File.as_str();
    let roots = if is_file {
        definitions_of_file(conn, target)?
    } else {
        vec![target]
    };

    let mut placed: HashMap<i64, Placed> = roots
        .iter()
        .map(|&id| {
            let at_root = Placed {
                depth: 0,
                parent: None,
                confidence: 1.0,
                path_confidence: 1.0,
                edge: None,
            };
            (id, at_root)
        })
        .collect();
    // Ids in the order the walk placed them first (deterministic, as the walk is).
    let mut order: Vec<i64> = roots.clone();
    let mut edges = 0usize;
    let truncated = trace::walk(
        conn,
        &roots,
        Direction::Callers,
        opts.depth,
        opts.min_confidence,
        |crossed| {
            if edges >= MAX_EDGES {
                return false;
            }
            edges += 1;
            place(&mut placed, &mut order, crossed);
            true
        },
    )?;

    let mut facts: HashMap<i64, Facts> = HashMap::with_capacity(placed.len());
    for &id in &order {
        facts.insert(id, facts_of(conn, id)?);
    }
    // Nearest first, then the most confident path, then by name.
    let by_place = |a: &i64, b: &i64| {
        let (pa, pb) = (&placed[a], &placed[b]);
        pa.depth
            .cmp(&pb.depth)
            .then(pb.path_confidence.total_cmp(&pa.path_confidence))
            .then_with(|| facts[a].qualified_name.cmp(&facts[b].qualified_name))
            .then(a.cmp(b))
    };
    // What the tree keeps: every root (they sort first), then the nearest and most
    // confident callers, so a kept caller's callee (one hop nearer) is always kept.
    let mut ranked = order.clone();
    ranked.sort_by(by_place);
    let kept: std::collections::HashSet<i64> = ranked
        .iter()
        .take(roots.len() + MAX_NODES)
        .copied()
        .collect();

    let mut children: HashMap<i64, Vec<i64>> = HashMap::new();
    for &id in &ranked {
        if let Some(parent) = placed[&id].parent.filter(|_| kept.contains(&id)) {
            children.entry(parent).or_default().push(id);
        }
    }
    // Of a file, only the definitions something calls are shown (the header names the file).
    let mut shown_roots: Vec<i64> = roots
        .iter()
        .copied()
        .filter(|id| !is_file || children.contains_key(id))
        .collect();
    shown_roots.sort_by(by_place);

    let mut nodes = Vec::new();
    let mut index_of: HashMap<i64, usize> = HashMap::new();
    let mut stack: Vec<i64> = shown_roots.into_iter().rev().collect();
    while let Some(id) = stack.pop() {
        let p = &placed[&id];
        let f = &facts[&id];
        let index = nodes.len();
        index_of.insert(id, index);
        nodes.push(BlastNode {
            index,
            parent: p.parent.and_then(|parent| index_of.get(&parent).copied()),
            depth: p.depth,
            qualified_name: f.qualified_name.clone(),
            kind: f.kind.clone(),
            path: f.path.clone(),
            line: f.line,
            confidence: p.confidence,
            path_confidence: p.path_confidence,
            edge_kind: p.edge.as_ref().map(|e| e.kind.clone()),
            strategy: p.edge.as_ref().map(|e| e.strategy.clone()),
            site_line: p.edge.as_ref().and_then(|e| e.line),
            test: f.test && p.depth > 0,
        });
        if let Some(callers) = children.get(&id) {
            stack.extend(callers.iter().rev());
        }
    }

    let mut tests: Vec<TestReach> = ranked
        .iter()
        .filter(|id| placed[*id].depth > 0 && facts[*id].test)
        .map(|&id| test_reach(id, &placed, &facts))
        .collect();
    tests.sort_by(|a, b| {
        b.path_confidence
            .total_cmp(&a.path_confidence)
            .then_with(|| a.qualified_name.cmp(&b.qualified_name))
    });
    let tests_left_out = tests.len().saturating_sub(MAX_NODES);
    tests.truncate(MAX_NODES);

    // Sites naming any definition the tree keeps, a file's roots nothing calls included:
    // an unresolved site may be the only sign that something reaches it.
    let mut unresolved = Vec::new();
    let mut unresolved_total = 0;
    for id in ranked.iter().filter(|id| kept.contains(id)) {
        for site in trace::unresolved(conn, *id, Direction::Callers, opts.min_confidence)? {
            unresolved_total += 1;
            if unresolved.len() < MAX_SITES {
                unresolved.push(MightReach {
                    might_reach: facts[id].qualified_name.clone(),
                    site,
                });
            }
        }
    }

    Ok(Blast {
        schema: "codebase-indexer/blast/1",
        target: opts.target.clone(),
        root,
        target_kind: if is_file { "file" } else { "definition" },
        depth: opts.depth,
        min_confidence: opts.min_confidence,
        tests_first: opts.tests_first,
        roots: roots.len(),
        reached: placed.len() - roots.len(),
        left_out: placed.len() - kept.len(),
        tests_left_out,
        unresolved_left_out: unresolved_total - unresolved.len(),
        nodes,
        tests,
        unresolved,
        edges,
        truncated,
    })
}

/// Places the far end of an edge: at the first hop that reaches it, under the most confident
/// path of that hop. Every edge of hop `d` comes before those of hop `d + 1`, and its near
/// end is placed at hop `d - 1`, final by then.
fn place(placed: &mut HashMap<i64, Placed>, order: &mut Vec<i64>, crossed: trace::Crossed) {
    let near = &placed[&crossed.near];
    let path_confidence = near.path_confidence * crossed.hop.confidence;
    let depth = crossed.hop.depth;
    let candidate = Placed {
        depth,
        parent: Some(crossed.near),
        confidence: crossed.hop.confidence,
        path_confidence,
        edge: Some(crossed.hop),
    };
    match placed.get_mut(&crossed.far) {
        None => {
            placed.insert(crossed.far, candidate);
            order.push(crossed.far);
        }
        Some(p) if p.depth == depth && path_confidence > p.path_confidence => *p = candidate,
        Some(_) => {}
    }
}

/// Every definition in the file of the file node `file`, the file node first.
fn definitions_of_file(conn: &Connection, file: i64) -> Result<Vec<i64>> {
    let mut q = conn.prepare_cached(
        "SELECT n.id FROM nodes n WHERE n.file_id = (SELECT file_id FROM nodes WHERE id = ?1) \
         ORDER BY n.id = ?1 DESC, n.id",
    )?;
    let ids = q.query_map([file], |r| r.get(0))?;
    Ok(ids.collect::<rusqlite::Result<_>>()?)
}

fn facts_of(conn: &Connection, id: i64) -> Result<Facts> {
    let mut q = conn.prepare_cached(
        "SELECT n.qualified_name, n.kind, n.name, n.signature, f.path, n.start_line, \
                f.flags & 1 \
         FROM nodes n JOIN files f ON f.id = n.file_id WHERE n.id = ?1",
    )?;
    Ok(q.query_row([id], |r| {
        let qualified_name: String = r.get(0)?;
        let kind: String = r.get(1)?;
        let name: String = r.get(2)?;
        let signature: Option<String> = r.get(3)?;
        let in_test_file: bool = r.get(6)?;
        let test = in_test_file
            || (is_callable(&kind) && is_test_by_convention(&name, &qualified_name, signature));
        Ok(Facts {
            qualified_name,
            kind,
            path: r.get(4)?,
            line: r.get(5)?,
            test,
        })
    })?)
}

fn is_callable(kind: &str) -> bool {
    kind == NodeKind::Function.as_str() || kind == NodeKind::Method.as_str()
}

/// A function or method outside a test file that its language would run as a test: named
/// `test_x` or `test` (pytest, unittest), `TestX` (Go, xUnit), `testX` (JUnit 3), marked
/// `#[test]` (or a `#[...::test]` such as `#[tokio::test]`) or `@Test`, or a member of a
/// Rust `mod tests` (or `mod test`).
fn is_test_by_convention(name: &str, qualified_name: &str, signature: Option<String>) -> bool {
    let after = |prefix: &str| name.strip_prefix(prefix).map(|rest| rest.chars().next());
    let named = name == "test"
        || after("test_").is_some()
        || matches!(after("Test"), Some(Some(c)) if c.is_uppercase() || c == '_')
        || matches!(after("test"), Some(Some(c)) if c.is_uppercase());
    let marked = signature.is_some_and(|s| {
        s.lines().map(str::trim).any(|l| {
            l == "#[test]"
                || (l.starts_with("#[") && l.ends_with("::test]"))
                || l == "@Test"
                || l.starts_with("@Test(")
        })
    });
    let segments: Vec<&str> = qualified_name.split(['.', ':']).collect();
    let in_test_module = segments.len() > 1
        && segments[..segments.len() - 1]
            .iter()
            .any(|s| *s == "tests" || *s == "test");
    named || marked || in_test_module
}

/// `id`'s place as a test: its path up to the root it reaches.
fn test_reach(id: i64, placed: &HashMap<i64, Placed>, facts: &HashMap<i64, Facts>) -> TestReach {
    let mut via = Vec::new();
    let mut at = placed[&id].parent;
    let mut reaches = id;
    while let Some(parent) = at {
        reaches = parent;
        at = placed[&parent].parent;
        if at.is_some() {
            via.push(facts[&parent].qualified_name.clone());
        }
    }
    let f = &facts[&id];
    TestReach {
        qualified_name: f.qualified_name.clone(),
        kind: f.kind.clone(),
        path: f.path.clone(),
        line: f.line,
        depth: placed[&id].depth,
        path_confidence: placed[&id].path_confidence,
        reaches: facts[&reaches].qualified_name.clone(),
        via,
    }
}

/// What a line of the text rendering shows, for a front end that pages it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shows {
    Node(usize),
    Test(usize),
    Site(usize),
}

/// A line of the text rendering (ending in a newline).
pub(crate) struct Line {
    pub text: String,
    pub shows: Option<Shows>,
}

impl Blast {
    /// The first line: what the radius is of, how far it went.
    pub fn header(&self) -> String {
        let what = if self.target_kind == "file" {
            format!("the file {}", self.root.path)
        } else {
            format!(
                "{} ({} {}:{})",
                self.root.qualified_name, self.root.kind, self.root.path, self.root.line
            )
        };
        let floor = if self.min_confidence > 0.0 {
            format!(", edges of confidence {:.2} or more", self.min_confidence)
        } else {
            String::new()
        };
        format!(
            "blast radius of {what}: callers to depth {}{floor}\n",
            self.depth
        )
    }

    /// The last line: what was reached, and what was left out.
    pub fn summary(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut s = format!(
            "{} reached over {}, {}, {}",
            plural(self.reached, "caller", "callers"),
            plural(self.edges, "edge", "edges"),
            plural(self.tests.len() + self.tests_left_out, "test", "tests"),
            plural(
                self.unresolved.len() + self.unresolved_left_out,
                "unresolved site",
                "unresolved sites"
            ),
        );
        let mut left = Vec::new();
        if self.left_out > 0 {
            left.push(format!(
                "{} past the first {MAX_NODES}",
                plural(self.left_out, "caller", "callers")
            ));
        }
        if self.tests_left_out > 0 {
            left.push(plural(self.tests_left_out, "test", "tests"));
        }
        if self.unresolved_left_out > 0 {
            left.push(plural(
                self.unresolved_left_out,
                "unresolved site",
                "unresolved sites",
            ));
        }
        if !left.is_empty() {
            s.push_str(&format!("; left out: {}", left.join(", ")));
        }
        if self.truncated {
            s.push_str(&format!(
                "; the walk stopped after {MAX_EDGES} edges, there may be more callers"
            ));
        }
        s.push('\n');
        s
    }

    /// The lines between the header and the summary: the tree (indented two spaces a hop),
    /// the unresolved sites, and the tests (first, with `tests_first`).
    pub(crate) fn body(&self) -> Vec<Line> {
        let mut tree: Vec<Line> = self
            .nodes
            .iter()
            .map(|n| {
                let conf = if n.depth == 0 {
                    String::new()
                } else {
                    let reference = if n.edge_kind.as_deref() == Some("references") {
                        " reference"
                    } else {
                        ""
                    };
                    format!(
                        "  conf {:.2} (path {:.2}){reference}",
                        n.confidence, n.path_confidence
                    )
                };
                let test = if n.test { "  [test]" } else { "" };
                Line {
                    text: format!(
                        "{}{}  {}:{}{conf}{test}\n",
                        "  ".repeat(n.depth),
                        n.qualified_name,
                        n.path,
                        n.line
                    ),
                    shows: Some(Shows::Node(n.index)),
                }
            })
            .collect();
        if self.nodes.iter().all(|n| n.depth == 0) {
            tree.push(Line {
                text: "  no resolved callers\n".into(),
                shows: None,
            });
        }

        let mut sites = Vec::new();
        if !self.unresolved.is_empty() {
            sites.push(Line {
                text: format!(
                    "unresolved call sites that might also reach it ({}):\n",
                    self.unresolved.len() + self.unresolved_left_out
                ),
                shows: None,
            });
            sites.extend(self.unresolved.iter().enumerate().map(|(i, u)| {
                let candidates = if u.site.candidates > 0 {
                    format!(", {} candidates", u.site.candidates)
                } else {
                    String::new()
                };
                Line {
                    text: format!(
                        "  {} <- {}  {}:{}  [{}{candidates}] names {}\n",
                        u.site.text,
                        u.site.caller,
                        u.site.path,
                        u.site.line,
                        u.site.reason,
                        u.might_reach
                    ),
                    shows: Some(Shows::Site(i)),
                }
            }));
        }

        let mut tests = vec![Line {
            text: format!(
                "tests that reach it ({}):\n",
                self.tests.len() + self.tests_left_out
            ),
            shows: None,
        }];
        if self.tests.is_empty() {
            tests.push(Line {
                text: "  none among the callers\n".into(),
                shows: None,
            });
        }
        tests.extend(self.tests.iter().enumerate().map(|(i, t)| {
            let via = if t.via.is_empty() {
                String::new()
            } else {
                format!(" via {}", t.via.join(" -> "))
            };
            Line {
                text: format!(
                    "  {}  {}:{}  path {:.2}, reaches {}{via}\n",
                    t.qualified_name, t.path, t.line, t.path_confidence, t.reaches
                ),
                shows: Some(Shows::Test(i)),
            }
        }));

        let mut lines = Vec::new();
        if self.tests_first {
            lines.extend(tests);
            lines.extend(tree);
            lines.extend(sites);
        } else {
            lines.extend(tree);
            lines.extend(sites);
            lines.extend(tests);
        }
        lines
    }

    /// The whole text, as `indexer blast` prints it.
    pub fn text(&self) -> String {
        let mut s = self.header();
        for line in self.body() {
            s.push_str(&line.text);
        }
        s.push_str(&self.summary());
        s
    }
}
