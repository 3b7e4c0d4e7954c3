//! What an incremental run changed, in the terms resolution needs: which names other files
//! may now resolve differently, and which files lost the targets of their edges.
//!
//! Each re-extracted file is compared with its previous version as a set of facts other
//! files' resolution can consult: its definitions (kind and qualified name), imports
//! (re-exports), member types and base types. Only names whose facts differ can change
//! another file's resolution. Edges from other files into the file survive re-extraction
//! where they stand (the run writes with foreign keys off, so deleting the file's nodes does
//! not cascade to them). A definition keeps its id while its ordinal in the file stays the
//! same, which is the usual edit; when ordinals shift, its edges are re-pointed at the
//! definition with the same kind and qualified name, and only edges whose target
//! disappeared are deleted and send their file back to resolution.

use crate::ids::{base_name, file_of, node_range, ORDINAL_BITS};
use crate::model::{FileExtract, NodeKind, RefKind};
use crate::store::writer::Observer;
use anyhow::Result;
use rusqlite::{params, Connection};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Default)]
pub struct Changes {
    /// Files inserted, re-extracted or deleted.
    pub files: BTreeSet<i64>,
    /// Names whose definitions, imports, member types or bases changed.
    pub names: BTreeSet<String>,
    /// Files with an edge whose target disappeared.
    pub dependents: BTreeSet<i64>,
    /// Files whose types changed bases: members inherited through them may differ.
    pub hierarchy: BTreeSet<i64>,
}

/// One fact about a file, with the name under which other files would look it up.
type Fact = (String, String);

/// A file's state before it was deleted or re-extracted.
struct Before {
    facts: BTreeSet<Fact>,
    /// The id each definition had, by its key (see `node_key`).
    ids: HashMap<String, i64>,
    /// Members the file's types inherited.
    inherited: Vec<String>,
}

#[derive(Default)]
pub struct Tracker {
    changes: Changes,
    before: HashMap<i64, Before>,
}

impl Observer for Tracker {
    /// Records the file's facts and the edges into it, before its rows are deleted. Returns
    /// the qualified names (without `#k`) of its definitions.
    fn before_delete(&mut self, conn: &Connection, fid: i64) -> Result<Vec<String>> {
        let (lo, hi) = node_range(fid);
        let mut facts = BTreeSet::new();
        let mut ids: HashMap<String, i64> = HashMap::new();
        let mut qns: HashMap<i64, String> = HashMap::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut q = conn.prepare_cached(
            "SELECT id, kind, name, qualified_name FROM nodes WHERE id >= ?1 AND id < ?2 ORDER BY id",
        )?;
        let mut rows = q.query([lo, hi])?;
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let kind = r.get_ref(1)?.as_str()?;
            let qn = base_name(r.get_ref(3)?.as_str()?);
            ids.insert(node_key(&mut seen, kind, qn), id);
            qns.insert(id, qn.to_string());
            if kind != NodeKind::File.as_str() {
                facts.insert(def_fact(r.get_ref(2)?.as_str()?, kind, qn));
            }
        }
        let module: String = conn
            .prepare_cached("SELECT module FROM files WHERE id = ?1")?
            .query_row([fid], |r| r.get(0))?;
        facts.insert(module_fact(&module));
        let mut q = conn.prepare_cached(
            "SELECT node_id, kind, name, module, alias FROM refs WHERE node_id >= ?1 \
             AND node_id < ?2 AND (kind IN ('import', 'field', 'inherits', 'implements') \
             OR (kind = 'local' AND node_id = ?1 AND module IS NOT NULL))",
        )?;
        let mut rows = q.query([lo, hi])?;
        let mut bases_before = false;
        let mut inherited = Vec::new();
        while let Some(r) = rows.next()? {
            let node: i64 = r.get(0)?;
            let owner = qns.get(&node).map_or("", String::as_str);
            let kind = RefKind::parse(r.get_ref(1)?.as_str()?);
            bases_before |= matches!(kind, Some(RefKind::Inherits | RefKind::Implements));
            ref_facts(
                &mut facts,
                owner,
                node == lo,
                kind,
                r.get_ref(2)?.as_str()?,
                r.get_ref(3)?.as_str_or_null()?,
                r.get_ref(4)?.as_str_or_null()?,
            );
        }
        if bases_before {
            // Members the file's types inherited before the change. `CROSS JOIN` keeps the
            // ancestors outermost: the planner would otherwise scan every node.
            let mut q = conn.prepare_cached(
                "WITH RECURSIVE up(id) AS ( \
                   SELECT target_id FROM edges WHERE source_id >= ?1 AND source_id < ?2 \
                     AND kind IN ('inherits', 'implements') \
                   UNION SELECT e.target_id FROM edges e JOIN up ON e.source_id = up.id \
                     AND e.kind IN ('inherits', 'implements')) \
                 SELECT DISTINCT n.name FROM up CROSS JOIN nodes n ON n.parent_id = up.id",
            )?;
            inherited = q
                .query_map([lo, hi], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<_>>()?;
        }
        self.before.insert(
            fid,
            Before {
                facts,
                ids,
                inherited,
            },
        );
        self.changes.files.insert(fid);
        Ok(qns.into_values().collect())
    }

    /// Compares the new extraction with the file's previous version and re-points edges
    /// from other files at the same definitions' new ids.
    /// The file's new rows must be in place: they may reuse ids of definitions now gone.
    fn after_insert(&mut self, conn: &Connection, fid: i64, extract: &FileExtract) -> Result<()> {
        let base = node_range(fid).0;
        self.changes.files.insert(fid);
        let mut facts = BTreeSet::from([module_fact(&extract.module)]);
        let mut ids: HashMap<String, i64> = HashMap::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, n) in extract.nodes.iter().enumerate() {
            let kind = n.kind.as_str();
            ids.insert(
                node_key(&mut seen, kind, &n.qualified_name),
                base + i as i64,
            );
            if n.kind != NodeKind::File {
                facts.insert(def_fact(&n.name, kind, &n.qualified_name));
            }
        }
        let mut bases_now = false;
        for r in &extract.refs {
            let owner = extract
                .nodes
                .get(r.node)
                .map_or("", |n| n.qualified_name.as_str());
            bases_now |= matches!(r.kind, RefKind::Inherits | RefKind::Implements);
            ref_facts(
                &mut facts,
                owner,
                r.node == 0,
                Some(r.kind),
                &r.name,
                r.module.as_deref(),
                r.alias.as_deref(),
            );
        }
        let Some(before) = self.before.remove(&fid) else {
            // A new file: everything it defines is new.
            self.changes
                .names
                .extend(facts.into_iter().map(|(name, _)| name));
            if bases_now {
                self.changes.hierarchy.insert(fid);
            }
            return Ok(());
        };
        let bases = |f: &BTreeSet<Fact>| -> Vec<String> {
            f.iter()
                .filter(|(_, fact)| fact.starts_with("b "))
                .map(|(_, fact)| fact.clone())
                .collect()
        };
        if bases(&before.facts) != bases(&facts) {
            self.changes.hierarchy.insert(fid);
            self.changes.names.extend(before.inherited);
        }
        for (name, _) in before.facts.symmetric_difference(&facts) {
            self.changes.names.insert(name.clone());
        }
        // Edges are collected by row before any moves: a definition may take the id of
        // another that moved or went away.
        let (lo, hi) = node_range(fid);
        let mut moves: Vec<(i64, i64)> = Vec::new();
        let mut gone: Vec<i64> = Vec::new();
        for (key, old) in &before.ids {
            match ids.get(key) {
                Some(new) if new == old => {}
                Some(&new) => {
                    for row in incoming_edges(conn, *old, lo, hi)? {
                        moves.push((row.0, new));
                    }
                }
                None => {
                    for (row, source) in incoming_edges(conn, *old, lo, hi)? {
                        gone.push(row);
                        self.changes.dependents.insert(file_of(source));
                    }
                }
            }
        }
        let mut delete = conn.prepare_cached("DELETE FROM edges WHERE rowid = ?1")?;
        for row in gone {
            delete.execute([row])?;
        }
        let mut repoint =
            conn.prepare_cached("UPDATE edges SET target_id = ?2 WHERE rowid = ?1")?;
        for (row, target) in moves {
            repoint.execute([row, target])?;
        }
        Ok(())
    }
}

impl Tracker {
    /// Everything the run changed; deleted files contribute all their old facts, and edges
    /// into them are deleted, their files re-resolved.
    pub fn finish(mut self, conn: &Connection) -> Result<Changes> {
        let mut sources = conn.prepare_cached(
            "SELECT DISTINCT source_id >> ?3 FROM edges WHERE target_id >= ?1 AND target_id < ?2",
        )?;
        let mut delete =
            conn.prepare_cached("DELETE FROM edges WHERE target_id >= ?1 AND target_id < ?2")?;
        for (fid, before) in std::mem::take(&mut self.before) {
            self.changes
                .names
                .extend(before.facts.into_iter().map(|(name, _)| name));
            self.changes.names.extend(before.inherited);
            let (lo, hi) = node_range(fid);
            let files = sources.query_map(params![lo, hi, ORDINAL_BITS], |r| r.get::<_, i64>(0))?;
            for f in files {
                self.changes.dependents.insert(f?);
            }
            delete.execute([lo, hi])?;
        }
        self.changes.names.retain(|n| !n.is_empty() && n != "*");
        Ok(self.changes)
    }
}

/// Identifies a definition across re-extractions: kind, qualified name and which of the
/// same-named ones it is.
fn node_key(seen: &mut HashMap<String, usize>, kind: &str, qn: &str) -> String {
    let key = format!("{kind} {qn}");
    let n = seen.entry(key.clone()).or_default();
    *n += 1;
    format!("{key} {n}")
}

/// Modules are looked up by name (and Python's by suffix): a module appearing or
/// disappearing affects imports that end in its last name.
fn module_fact(module: &str) -> Fact {
    (
        crate::resolve::last_name(module).to_string(),
        format!("m {module}"),
    )
}

fn def_fact(name: &str, kind: &str, qn: &str) -> Fact {
    (name.to_string(), format!("d {kind} {qn}"))
}

/// Facts from an import (the names it binds or reaches), a member type or a base type.
fn ref_facts(
    facts: &mut BTreeSet<Fact>,
    owner: &str,
    owner_is_file: bool,
    kind: Option<RefKind>,
    name: &str,
    module: Option<&str>,
    alias: Option<&str>,
) {
    match kind {
        Some(RefKind::Import) => {
            let fact = format!(
                "i {owner} {} {name} {}",
                module.unwrap_or(""),
                alias.unwrap_or("")
            );
            let module_name = crate::resolve::last_name(module.unwrap_or(""));
            for n in [name, alias.unwrap_or(""), module_name] {
                facts.insert((n.to_string(), fact.clone()));
            }
        }
        // A typed top-level variable (JavaScript): importers call through its type. An
        // untyped one is no fact (nor is it among the rows `before_delete` reads): were it
        // one, every edit of its file would count its name as changed.
        Some(RefKind::Local) if owner_is_file => {
            if let Some(ty) = module {
                facts.insert((name.to_string(), format!("v {name} {ty}")));
            }
        }
        Some(RefKind::Field) => {
            let field = crate::resolve::last_name(name);
            facts.insert((
                field.to_string(),
                format!("f {owner} {name} {}", module.unwrap_or("")),
            ));
        }
        Some(k @ (RefKind::Inherits | RefKind::Implements)) => {
            let owner_name = crate::resolve::last_name(owner);
            facts.insert((
                owner_name.to_string(),
                format!("b {owner} {} {name}", k.as_str()),
            ));
        }
        _ => {}
    }
}

/// Edges from outside a file's id range `lo..hi` into definition `target`: (rowid, source).
fn incoming_edges(conn: &Connection, target: i64, lo: i64, hi: i64) -> Result<Vec<(i64, i64)>> {
    let mut q = conn.prepare_cached(
        "SELECT rowid, source_id FROM edges WHERE target_id = ?1 \
         AND (source_id < ?2 OR source_id >= ?3)",
    )?;
    let rows = q.query_map([target, lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
