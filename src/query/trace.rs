//! Walking the call graph: who calls a definition and what it calls, hop by hop, with the
//! reference sites that did not resolve listed beside the edges, so an empty answer is
//! never a silent gap.

use anyhow::Result;
use rusqlite::{params, Connection};
use serde::Serialize;
use std::collections::HashSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Callers,
    Callees,
}

impl Direction {
    /// The edge column at the definition asked about, and the one at the other end.
    fn columns(self) -> (&'static str, &'static str) {
        match self {
            Direction::Callers => ("target_id", "source_id"),
            Direction::Callees => ("source_id", "target_id"),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct NodeRef {
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub line: i64,
}

/// One edge of the walk: `caller` reaches `callee` at `path:line`.
#[derive(Clone, Debug, Serialize)]
pub struct Hop {
    pub depth: usize,
    pub caller: String,
    pub callee: String,
    pub kind: String,
    pub confidence: f64,
    pub strategy: String,
    pub path: String,
    pub line: Option<i64>,
}

/// A reference site that resolved to no definition (or only below the confidence asked for).
#[derive(Clone, Debug, Serialize)]
pub struct Site {
    pub caller: String,
    pub text: String,
    pub reason: String,
    pub candidates: i64,
    pub path: String,
    pub line: i64,
}

#[derive(Debug, Serialize)]
pub struct Trace {
    pub root: NodeRef,
    pub direction: Direction,
    pub depth: usize,
    pub min_confidence: f64,
    pub hops: Vec<Hop>,
    /// Callers: unresolved call sites whose callee text ends in the root's name.
    /// Callees: the root's own unresolved and external calls.
    pub unresolved: Vec<Site>,
    /// The walk stopped at `MAX_HOPS`.
    pub truncated: bool,
}

/// The walk stops after this many edges: a hub's callers can be most of a repository.
pub const MAX_HOPS: usize = 2000;

/// Breadth-first over `calls` and `references` edges from `root` (a node id).
pub fn trace(
    conn: &Connection,
    root: i64,
    direction: Direction,
    depth: usize,
    min_confidence: f64,
) -> Result<Trace> {
    let mut trace = Trace {
        root: node_ref(conn, root)?,
        direction,
        depth,
        min_confidence,
        hops: Vec::new(),
        unresolved: Vec::new(),
        truncated: false,
    };
    trace.truncated = walk(conn, &[root], direction, depth, min_confidence, |crossed| {
        if trace.hops.len() >= MAX_HOPS {
            return false;
        }
        trace.hops.push(crossed.hop);
        true
    })?;
    trace.unresolved = unresolved(conn, root, direction, min_confidence)?;
    Ok(trace)
}

/// An edge the walk crossed, from `near` (reached `hop.depth - 1` hops out) to `far`.
pub(crate) struct Crossed {
    pub near: i64,
    pub far: i64,
    pub hop: Hop,
}

/// The breadth-first walk behind `trace` and the blast radius: from `roots` (node ids, hop
/// 0) over `calls` and `references` edges at least `min_confidence`, `depth` hops at most.
/// Every edge met is handed to `visit`, hop by hop, the nodes of a hop in the order they
/// were reached and each node's edges most confident first; a node is walked on from the
/// first hop that reaches it only. `visit` returns false to stop the walk; the result says
/// whether it did.
pub(crate) fn walk(
    conn: &Connection,
    roots: &[i64],
    direction: Direction,
    depth: usize,
    min_confidence: f64,
    mut visit: impl FnMut(Crossed) -> bool,
) -> Result<bool> {
    let (near, far) = direction.columns();
    let mut step = conn.prepare_cached(&format!(
        "SELECT e.{far}, s.qualified_name, t.qualified_name, e.kind, e.confidence, e.strategy, \
                f.path, e.line \
         FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id \
         JOIN files f ON f.id = s.file_id \
         WHERE e.{near} = ?1 AND e.kind IN ('calls', 'references') AND e.confidence >= ?2 \
         ORDER BY e.confidence DESC, f.path, e.line, e.{far}"
    ))?;
    let mut seen: HashSet<i64> = roots.iter().copied().collect();
    let mut frontier = roots.to_vec();
    for d in 1..=depth {
        let mut next = Vec::new();
        for &node in &frontier {
            let rows = step.query_map(params![node, min_confidence], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Hop {
                        depth: d,
                        caller: r.get(1)?,
                        callee: r.get(2)?,
                        kind: r.get(3)?,
                        confidence: r.get(4)?,
                        strategy: r.get(5)?,
                        path: r.get(6)?,
                        line: r.get(7)?,
                    },
                ))
            })?;
            for row in rows {
                let (other, hop) = row?;
                let first = seen.insert(other);
                if !visit(Crossed {
                    near: node,
                    far: other,
                    hop,
                }) {
                    return Ok(true);
                }
                if first {
                    next.push(other);
                }
            }
        }
        frontier = next;
    }
    Ok(false)
}

/// Unresolved sites beside the edges: for callers, sites naming the root's name anywhere
/// (and edges to it below the asked confidence); for callees, the root's own.
pub(crate) fn unresolved(
    conn: &Connection,
    root: i64,
    direction: Direction,
    min_confidence: f64,
) -> Result<Vec<Site>> {
    let select = "SELECT s.qualified_name, u.name, u.reason, u.candidates, f.path, u.line \
                  FROM unresolved u JOIN nodes s ON s.id = u.source_id \
                  JOIN files f ON f.id = s.file_id";
    let sql = match direction {
        Direction::Callers => format!(
            "{select} WHERE u.key = (SELECT name FROM nodes WHERE id = ?1) \
             AND u.kind IN ('calls', 'references') ORDER BY f.path, u.line"
        ),
        Direction::Callees => format!("{select} WHERE u.source_id = ?1 ORDER BY u.line, u.name"),
    };
    // Edges below the confidence asked for: named by the callee's name for callers, by its
    // qualified name for the callees of one definition.
    let (near, _) = direction.columns();
    let shown = match direction {
        Direction::Callers => "name",
        Direction::Callees => "qualified_name",
    };
    let low = format!(
        "SELECT s.qualified_name, t.{shown}, 'below min confidence (' || e.strategy || ')', \
                0, f.path, e.line \
         FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id \
         JOIN files f ON f.id = s.file_id \
         WHERE e.{near} = ?1 AND e.kind IN ('calls', 'references') AND e.confidence < ?2 \
         ORDER BY f.path, e.line"
    );
    let to_site = |r: &rusqlite::Row| -> rusqlite::Result<Site> {
        Ok(Site {
            caller: r.get(0)?,
            text: r.get(1)?,
            reason: r.get(2)?,
            candidates: r.get(3)?,
            path: r.get(4)?,
            line: r.get::<_, Option<i64>>(5)?.unwrap_or(0),
        })
    };
    let mut sites: Vec<Site> = conn
        .prepare_cached(&sql)?
        .query_map([root], to_site)?
        .collect::<rusqlite::Result<_>>()?;
    if min_confidence > 0.0 {
        let below: Vec<Site> = conn
            .prepare_cached(&low)?
            .query_map(params![root, min_confidence], to_site)?
            .collect::<rusqlite::Result<_>>()?;
        sites.extend(below);
    }
    Ok(sites)
}

/// A definition's direct callers or callees, most confident first (for `get-source`).
#[derive(Debug, Serialize)]
pub struct Link {
    pub qualified_name: String,
    pub confidence: f64,
    pub strategy: String,
    pub line: Option<i64>,
}

pub fn neighbors(conn: &Connection, id: i64, direction: Direction) -> Result<Vec<Link>> {
    let (near, far) = direction.columns();
    let mut q = conn.prepare_cached(&format!(
        "SELECT n.qualified_name, max(e.confidence), e.strategy, min(e.line) FROM edges e \
         JOIN nodes n ON n.id = e.{far} \
         WHERE e.{near} = ?1 AND e.kind IN ('calls', 'references') \
         GROUP BY n.id ORDER BY max(e.confidence) DESC, n.qualified_name"
    ))?;
    let rows = q.query_map([id], |r| {
        Ok(Link {
            qualified_name: r.get(0)?,
            confidence: r.get(1)?,
            strategy: r.get(2)?,
            line: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn node_ref(conn: &Connection, id: i64) -> Result<NodeRef> {
    Ok(conn.query_row(
        "SELECT n.qualified_name, n.kind, f.path, n.start_line FROM nodes n \
         JOIN files f ON f.id = n.file_id WHERE n.id = ?1",
        [id],
        |r| {
            Ok(NodeRef {
                qualified_name: r.get(0)?,
                kind: r.get(1)?,
                path: r.get(2)?,
                line: r.get(3)?,
            })
        },
    )?)
}
