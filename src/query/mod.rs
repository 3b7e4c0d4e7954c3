//! Read-only questions answered from the database alone: search, source of a definition,
//! and the project's status (traces, the blast radius and file ranking in their modules). None of them re-parses the repository.

pub mod blast;
pub mod rank_files;
pub mod trace;

use crate::error::Error;
use crate::model::NodeKind;
use crate::store;
use crate::store::artifact::Freshness;
use crate::text::split_identifier;
use anyhow::Result;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use trace::{Direction, Link, Site};

#[derive(Debug, Serialize)]
pub struct Hit {
    pub qualified_name: String,
    pub name: String,
    pub kind: String,
    pub path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub signature: Option<String>,
    pub score: f64,
}

/// Full-text search over names, qualified names, identifier sub-tokens, signatures and
/// docstrings, ranked by bm25 (higher score is better; test code counts half). A definition
/// whose name is the query (`url_for`, or `url for`) comes first. All query words must match; when that
/// finds nothing, any word may.
pub fn search(
    conn: &Connection,
    query: &str,
    limit: usize,
    kind: Option<NodeKind>,
) -> Result<Vec<Hit>> {
    let words = query_words(query);
    if words.is_empty() {
        crate::error::invalid!("the search query {query:?} has no words to look for");
    }
    let all = words.join(" AND ");
    let mut hits = run_search(conn, &all, query, limit, kind)?;
    if hits.is_empty() && words.len() > 1 {
        hits = run_search(conn, &words.join(" OR "), query, limit, kind)?;
    }
    Ok(hits)
}

/// Query words as FTS5 prefix terms, quoted so no user text is read as FTS syntax. Words are
/// split as the tokenizer splits them (`url_for` is `url` and `for`), and a camelCase word also
/// matches its sub-tokens: `getUser` is `"getuser"* OR ("get"* AND "user"*)`.
fn query_words(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in query.split(|c: char| !c.is_alphanumeric()) {
        if raw.is_empty() {
            continue;
        }
        let whole = raw.to_lowercase();
        let parts = split_identifier(raw);
        let term = if parts.contains(' ') {
            let sub = parts
                .split(' ')
                .map(|p| format!("\"{p}\"*"))
                .collect::<Vec<_>>()
                .join(" AND ");
            format!("(\"{whole}\"* OR ({sub}))")
        } else {
            format!("\"{whole}\"*")
        };
        out.push(term);
    }
    out
}

fn run_search(
    conn: &Connection,
    fts_query: &str,
    raw_query: &str,
    limit: usize,
    kind: Option<NodeKind>,
) -> Result<Vec<Hit>> {
    let mut q = conn.prepare_cached(
        "SELECT n.qualified_name, n.name, n.kind, f.path, n.start_line, n.end_line, n.signature, \
                -bm25(nodes_fts, 10.0, 4.0, 6.0, 1.0, 0.5) \
                    * CASE WHEN f.flags & 1 THEN 0.5 ELSE 1.0 END AS score \
         FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid JOIN files f ON f.id = n.file_id \
         WHERE nodes_fts MATCH ?1 AND (?2 IS NULL OR n.kind = ?2) \
         ORDER BY (n.name = ?3 OR n.name_tokens = ?5) DESC, score DESC, n.qualified_name \
         LIMIT ?4",
    )?;
    let rows = q.query_map(
        params![
            fts_query,
            kind.map(NodeKind::as_str),
            raw_query.trim(),
            limit as i64,
            split_identifier(raw_query)
        ],
        |r| {
            Ok(Hit {
                qualified_name: r.get(0)?,
                name: r.get(1)?,
                kind: r.get(2)?,
                path: r.get(3)?,
                start_line: r.get(4)?,
                end_line: r.get(5)?,
                signature: r.get(6)?,
                score: r.get(7)?,
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[derive(Debug, Serialize)]
pub struct Source {
    pub qualified_name: String,
    pub kind: String,
    pub path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub signature: Option<String>,
    pub docstring: Option<String>,
    pub source: String,
    /// Definitions calling or referencing this one.
    pub callers: Vec<Link>,
    /// Definitions this one calls or references.
    pub callees: Vec<Link>,
    /// Calls from this definition that resolved to nothing in the repository.
    pub unresolved_calls: Vec<Site>,
}

/// The source of a definition by qualified name, or of a file by path. A name that is not
/// exact is tried as a short name or a qualified-name suffix when that is unambiguous.
pub fn get_source(conn: &Connection, target: &str) -> Result<Source> {
    let id = resolve_target(conn, target)?;
    let mut q = conn.prepare_cached(
        "SELECT n.qualified_name, n.kind, f.path, n.start_line, n.end_line, n.signature, \
                n.docstring, CAST(substr(CAST(c.content AS BLOB), n.start_byte + 1, \
                n.end_byte - n.start_byte) AS TEXT) \
         FROM nodes n JOIN files f ON f.id = n.file_id \
         JOIN file_contents c ON c.file_id = n.file_id WHERE n.id = ?1",
    )?;
    let mut src = q.query_row([id], |r| {
        let start_line: i64 = r.get(3)?;
        Ok(Source {
            qualified_name: r.get(0)?,
            kind: r.get(1)?,
            path: r.get(2)?,
            start_line,
            end_line: r.get(4)?,
            signature: r.get(5)?,
            docstring: r.get(6)?,
            source: r.get(7)?,
            callers: Vec::new(),
            callees: Vec::new(),
            unresolved_calls: Vec::new(),
        })
    })?;
    src.callers = trace::neighbors(conn, id, Direction::Callers)?;
    src.callees = trace::neighbors(conn, id, Direction::Callees)?;
    src.unresolved_calls = trace::trace(conn, id, Direction::Callees, 0, 0.0)?.unresolved;
    Ok(src)
}

/// The node a user means by `target`: an exact qualified name, a file path, or an
/// unambiguous short name or qualified-name suffix.
pub fn resolve_target(conn: &Connection, target: &str) -> Result<i64> {
    let exact: Option<i64> = conn
        .query_row(
            "SELECT id FROM nodes WHERE qualified_name = ?1 ORDER BY id LIMIT 1",
            [target],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = exact {
        return Ok(id);
    }
    let file: Option<i64> = conn
        .query_row(
            "SELECT n.id FROM files f JOIN nodes n ON n.file_id = f.id AND n.kind = 'File' \
             WHERE f.path = ?1",
            [target.trim_start_matches("./")],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = file {
        return Ok(id);
    }
    // By the last name segment (indexed), then as a suffix of the qualified name.
    let last = target.rsplit(['.', '/']).next().unwrap_or(target);
    let mut q = conn.prepare(
        "SELECT id, qualified_name FROM nodes WHERE name = ?1 \
           AND (qualified_name = ?3 OR qualified_name LIKE ?2 ESCAPE '\\' \
                OR qualified_name LIKE ?2 || '#%' ESCAPE '\\') \
         ORDER BY qualified_name LIMIT 11",
    )?;
    let escaped = target
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    let candidates: Vec<(i64, String)> = q
        .query_map(params![last, format!("%.{escaped}"), target], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    match candidates.len() {
        0 => Err(Error::NotFound {
            name: target.to_string(),
        }
        .into()),
        1 => Ok(candidates[0].0),
        n => Err(Error::Ambiguous {
            name: target.to_string(),
            candidates: candidates.into_iter().take(10).map(|(_, qn)| qn).collect(),
            more: n > 10,
        }
        .into()),
    }
}

#[derive(Debug, Serialize)]
pub struct Status {
    pub project: Option<String>,
    pub root: Option<String>,
    pub db: String,
    pub db_bytes: u64,
    pub schema_version: i32,
    pub files: i64,
    pub nodes: i64,
    pub refs: i64,
    pub edges: i64,
    pub syntax_error_files: i64,
    pub languages: BTreeMap<String, i64>,
    pub nodes_by_kind: BTreeMap<String, i64>,
    pub refs_by_kind: BTreeMap<String, i64>,
    pub graph: GraphHealth,
    /// Secrets taken out of the indexed text: where and what kind, never the value.
    pub redactions: Vec<RedactedSite>,
    /// The committed artifact in the indexed tree against this index (`None` for an index
    /// read from an artifact, or one whose tree is gone).
    pub artifact: Option<Freshness>,
}

#[derive(Debug, Serialize)]
pub struct RedactedSite {
    pub path: String,
    pub line: i64,
    pub kind: String,
}

/// How complete and how certain the call graph is.
#[derive(Debug, Serialize)]
pub struct GraphHealth {
    pub edges_by_kind: BTreeMap<String, i64>,
    pub call_edges_by_strategy: BTreeMap<String, i64>,
    /// Call sites: resolved to at least one definition, or unresolved by reason.
    pub call_sites: i64,
    pub call_sites_resolved: i64,
    pub call_sites_unresolved_by_reason: BTreeMap<String, i64>,
    /// Resolved / external / otherwise unresolved shares of call sites.
    pub resolved_ratio: f64,
    pub external_ratio: f64,
    pub unresolved_ratio: f64,
    /// Reference edges (not `contains`) per definition.
    pub average_degree: f64,
    /// Source files none of whose definitions has a reference edge in or out.
    pub isolated_files_ratio: f64,
    /// Reference edges with confidence below 0.5.
    pub low_confidence_ratio: f64,
}

pub fn status(conn: &Connection, db: &Path) -> Result<Status> {
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0));
    let grouped = |sql: &str| -> Result<BTreeMap<String, i64>> {
        let mut q = conn.prepare(sql)?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    };
    let db_bytes = ["", "-wal"]
        .iter()
        .filter_map(|s| {
            let mut p = db.as_os_str().to_owned();
            p.push(s);
            std::fs::metadata(p).ok()
        })
        .map(|m| m.len())
        .sum();
    Ok(Status {
        project: store::get_meta(conn, "project")?,
        root: store::get_meta(conn, "root")?,
        db: db.display().to_string(),
        db_bytes,
        schema_version: conn.query_row("PRAGMA user_version", [], |r| r.get(0))?,
        files: count("SELECT count(*) FROM files")?,
        nodes: count("SELECT count(*) FROM nodes")?,
        refs: count("SELECT count(*) FROM refs")?,
        edges: count("SELECT count(*) FROM edges")?,
        syntax_error_files: count("SELECT count(*) FROM files WHERE flags & 2")?,
        languages: grouped("SELECT language, count(*) FROM files GROUP BY language")?,
        nodes_by_kind: grouped("SELECT kind, count(*) FROM nodes GROUP BY kind")?,
        refs_by_kind: grouped("SELECT kind, count(*) FROM refs GROUP BY kind")?,
        graph: graph_health(conn)?,
        redactions: conn
            .prepare(
                "SELECT f.path, r.line, r.kind FROM redactions r JOIN files f ON f.id = r.file_id \
                 ORDER BY f.path, r.line, r.kind",
            )?
            .query_map([], |r| {
                Ok(RedactedSite {
                    path: r.get(0)?,
                    line: r.get(1)?,
                    kind: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?,
        artifact: None,
    })
}

fn graph_health(conn: &Connection) -> Result<GraphHealth> {
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0));
    let grouped = |sql: &str| -> Result<BTreeMap<String, i64>> {
        let mut q = conn.prepare(sql)?;
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    };
    let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let call_sites = count("SELECT count(*) FROM refs WHERE kind = 'call'")?;
    let unresolved =
        grouped("SELECT reason, count(*) FROM unresolved WHERE kind = 'calls' GROUP BY reason")?;
    let unresolved_total: i64 = unresolved.values().sum();
    let external = unresolved.get("external").copied().unwrap_or(0);
    let resolved = call_sites - unresolved_total;
    let references = count("SELECT count(*) FROM edges WHERE kind <> 'contains'")?;
    let definitions = count("SELECT count(*) FROM nodes WHERE kind <> 'File'")?;
    // Only source files of the supported languages can have edges.
    let parsed = crate::lang::LANGUAGES
        .iter()
        .map(|l| format!("'{}'", l.name))
        .collect::<Vec<_>>()
        .join(", ");
    let files = count(&format!(
        "SELECT count(*) FROM files WHERE language IN ({parsed})"
    ))?;
    let isolated = count(&format!(
        "SELECT count(*) FROM files f WHERE language IN ({parsed}) AND NOT EXISTS ( \
           SELECT 1 FROM edges e WHERE e.source_id >= f.id << 19 \
             AND e.source_id < (f.id + 1) << 19 AND e.kind <> 'contains') \
         AND NOT EXISTS ( \
           SELECT 1 FROM edges e WHERE e.target_id >= f.id << 19 \
             AND e.target_id < (f.id + 1) << 19 AND e.kind <> 'contains')"
    ))?;
    let low = count("SELECT count(*) FROM edges WHERE kind <> 'contains' AND confidence < 0.5")?;
    Ok(GraphHealth {
        edges_by_kind: grouped("SELECT kind, count(*) FROM edges GROUP BY kind")?,
        call_edges_by_strategy: grouped(
            "SELECT strategy, count(*) FROM edges WHERE kind = 'calls' GROUP BY strategy",
        )?,
        call_sites,
        call_sites_resolved: resolved,
        call_sites_unresolved_by_reason: unresolved,
        resolved_ratio: ratio(resolved, call_sites),
        external_ratio: ratio(external, call_sites),
        unresolved_ratio: ratio(unresolved_total - external, call_sites),
        average_degree: ratio(references, definitions),
        isolated_files_ratio: ratio(isolated, files),
        low_confidence_ratio: ratio(low, references),
    })
}

/// A file's stored text: what the index holds (secrets redacted, invalid UTF-8 replaced),
/// so it answers without the tree, from an artifact as well.
#[derive(Debug, Serialize)]
pub struct FileText {
    pub path: String,
    pub language: String,
    /// Bytes on disk when indexed.
    pub size: i64,
    pub lines: i64,
    pub content: String,
}

/// An indexed file, as listed by `files`.
#[derive(Debug, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub language: String,
    pub size: i64,
    pub lines: i64,
}

pub fn file_text(conn: &Connection, path: &str) -> Result<FileText> {
    let path = path.trim_start_matches("./");
    conn.query_row(
        "SELECT f.path, f.language, f.size, f.lines, c.content \
         FROM files f JOIN file_contents c ON c.file_id = f.id WHERE f.path = ?1",
        [path],
        |r| {
            Ok(FileText {
                path: r.get(0)?,
                language: r.get(1)?,
                size: r.get(2)?,
                lines: r.get(3)?,
                content: r.get(4)?,
            })
        },
    )
    .optional()?
    .ok_or_else(|| {
        Error::NotFound {
            name: path.to_string(),
        }
        .into()
    })
}

/// Indexed files whose path starts with `prefix` (all of them for ""), in path order.
pub fn list_files(conn: &Connection, prefix: &str) -> Result<Vec<FileEntry>> {
    // A range on the unique path index: `prefix` <= path < `prefix` followed by U+10FFFF.
    let end = format!("{prefix}\u{10FFFF}");
    let mut q = conn.prepare_cached(
        "SELECT path, language, size, lines FROM files \
         WHERE path >= ?1 AND path < ?2 ORDER BY path",
    )?;
    let rows = q.query_map(params![prefix, end], |r| {
        Ok(FileEntry {
            path: r.get(0)?,
            language: r.get(1)?,
            size: r.get(2)?,
            lines: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
