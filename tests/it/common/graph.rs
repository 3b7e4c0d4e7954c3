//! The resolved graph of a fixture repository, for the call-graph tests: edges and
//! unresolved references by qualified name, with assertions that print the whole graph
//! when they fail.

use std::fmt::Write;

#[derive(Debug, Clone)]
pub struct Edge {
    pub source: String,
    pub kind: String,
    pub target: String,
    pub confidence: f64,
    pub strategy: String,
    pub line: i64,
}

#[derive(Debug, Clone)]
pub struct Miss {
    pub source: String,
    pub kind: String,
    pub name: String,
    pub reason: String,
    pub candidates: i64,
    pub line: i64,
}

pub struct Graph {
    pub edges: Vec<Edge>,
    pub unresolved: Vec<Miss>,
}

/// Writes `files` into a fresh folder, indexes it and reads back the graph.
pub fn graph(files: &[(&str, &str)]) -> Graph {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    super::write_tree(&root, files);
    let db = dir.path().join("graph.db");
    super::index(&root, &db);
    load(&db)
}

/// The graph stored in a database.
pub fn load(db: &std::path::Path) -> Graph {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut q = conn
        .prepare(
            "SELECT s.qualified_name, e.kind, t.qualified_name, e.confidence, e.strategy, e.line \
             FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id \
             WHERE e.kind <> 'contains' ORDER BY 1, 2, 3, 6",
        )
        .unwrap();
    let edges = q
        .query_map([], |r| {
            Ok(Edge {
                source: r.get(0)?,
                kind: r.get(1)?,
                target: r.get(2)?,
                confidence: r.get(3)?,
                strategy: r.get(4)?,
                line: r.get(5)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut q = conn
        .prepare(
            "SELECT s.qualified_name, u.kind, u.name, u.reason, u.candidates, u.line \
             FROM unresolved u JOIN nodes s ON s.id = u.source_id ORDER BY 1, 2, 3, 6",
        )
        .unwrap();
    let unresolved = q
        .query_map([], |r| {
            Ok(Miss {
                source: r.get(0)?,
                kind: r.get(1)?,
                name: r.get(2)?,
                reason: r.get(3)?,
                candidates: r.get(4)?,
                line: r.get(5)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    Graph { edges, unresolved }
}

impl Graph {
    /// Every `kind` edge from `source` to `target`.
    pub fn find(&self, source: &str, kind: &str, target: &str) -> Vec<&Edge> {
        self.edges
            .iter()
            .filter(|e| e.source == source && e.kind == kind && e.target == target)
            .collect()
    }

    /// The edge, which must exist; returns it so the test can check confidence and strategy.
    #[track_caller]
    pub fn edge(&self, source: &str, kind: &str, target: &str) -> &Edge {
        match self.find(source, kind, target).first() {
            Some(e) => e,
            None => panic!(
                "expected edge {source} -{kind}-> {target}\n{}",
                self.describe()
            ),
        }
    }

    /// The edge must not exist.
    #[track_caller]
    pub fn no_edge(&self, source: &str, kind: &str, target: &str) {
        assert!(
            self.find(source, kind, target).is_empty(),
            "unexpected edge {source} -{kind}-> {target}\n{}",
            self.describe()
        );
    }

    /// Targets of `source`'s `kind` edges, sorted and deduplicated.
    pub fn targets(&self, source: &str, kind: &str) -> Vec<&str> {
        let mut t: Vec<&str> = self
            .edges
            .iter()
            .filter(|e| e.source == source && e.kind == kind)
            .map(|e| e.target.as_str())
            .collect();
        t.sort();
        t.dedup();
        t
    }

    /// The unresolved reference `name` written in `source`, which must exist.
    #[track_caller]
    pub fn miss(&self, source: &str, name: &str) -> &Miss {
        match self
            .unresolved
            .iter()
            .find(|m| m.source == source && m.name == name)
        {
            Some(m) => m,
            None => panic!(
                "expected unresolved {name} in {source}\n{}",
                self.describe()
            ),
        }
    }

    /// The whole graph, one line per edge or unresolved reference.
    pub fn describe(&self) -> String {
        let mut s = String::from("edges:\n");
        for e in &self.edges {
            let _ = writeln!(
                s,
                "  {} -{}-> {} ({} {}, line {})",
                e.source, e.kind, e.target, e.confidence, e.strategy, e.line
            );
        }
        s.push_str("unresolved:\n");
        for m in &self.unresolved {
            let _ = writeln!(
                s,
                "  {} -{}-> {} [{}, {} candidates, line {}]",
                m.source, m.kind, m.name, m.reason, m.candidates, m.line
            );
        }
        s
    }
}
