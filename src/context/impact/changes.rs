//! From a diff's hunks to the definitions they touch, on both sides. Each side of a file is
//! extracted from its own bytes (the old side from git), so a definition that no longer
//! exists is still known by name, kind and span. A line belongs to the innermost definition
//! whose span holds it, a line outside every definition to the file's module-level code. A
//! definition found only on the old side and one found only on the new side whose bodies are
//! mostly the same lines are one definition renamed (another name) or moved (the same name
//! elsewhere), not a deletion and an addition.

use crate::context::defgraph::Repo;
use crate::context::impact::diff::{FileDiff, Hunk};
use crate::lang::extract::extract_file;
use crate::model::{ExtractedNode, FileExtract, NodeKind};
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Lines two bodies must share (of the longer one) to be one definition renamed or moved.
const SAME_BODY: f64 = 0.6;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "change", content = "from", rename_all = "snake_case")]
pub enum Change {
    Modified,
    Added,
    Deleted,
    /// Another name; `from` is the old qualified name.
    Renamed(String),
    /// The same name in another place (file or enclosing definition).
    Moved(String),
    /// Lines outside every definition of the file.
    ModuleLevel,
}

impl Change {
    pub fn describe(&self) -> String {
        match self {
            Change::Modified => "modified".into(),
            Change::Added => "added".into(),
            Change::Deleted => "deleted".into(),
            Change::Renamed(from) => format!("renamed from {from}"),
            Change::Moved(from) => format!("moved from {from}"),
            Change::ModuleLevel => "module-level code".into(),
        }
    }
}

/// A definition the diff touches.
#[derive(Clone, Debug, Serialize)]
pub struct ChangedSymbol {
    pub qualified_name: String,
    pub kind: &'static str,
    pub path: String,
    #[serde(flatten)]
    pub change: Change,
    /// Its span on the side it exists on (the old side for a deletion).
    pub start_line: u32,
    pub end_line: u32,
    pub lines_added: usize,
    pub lines_removed: usize,
    /// The hunks' lines inside it, under their headers.
    pub diff: String,
    /// Its code on that side (the changed lines, for module-level code).
    pub code: String,
    /// Its node in the index, on the side the index holds.
    #[serde(skip)]
    pub node: Option<i64>,
    /// That node in the definitions graph (`resolve`).
    #[serde(skip)]
    pub def: Option<usize>,
    pub in_index: bool,
}

/// One side of a file: its definitions, with spans that start at their first byte
/// (decorators and attributes included).
struct Side {
    path: String,
    ext: FileExtract,
    spans: Vec<(u32, u32)>,
}

impl Side {
    fn new(path: &str, text: &str) -> Option<Side> {
        let ext = extract_file(path, text)?;
        let starts = line_starts(text);
        let spans = ext
            .nodes
            .iter()
            .map(|n| {
                let first = starts.partition_point(|&s| s <= n.start_byte as usize) as u32;
                (first.max(1), n.end_line.max(first))
            })
            .collect();
        Some(Side {
            path: path.to_string(),
            ext,
            spans,
        })
    }

    /// The innermost definition holding `line` (0, the file node, for none).
    fn innermost(&self, line: u32) -> usize {
        let mut best = 0;
        for (i, &(a, b)) in self.spans.iter().enumerate().skip(1) {
            if a <= line && line <= b && (best == 0 || a >= self.spans[best].0) {
                best = i;
            }
        }
        best
    }

    /// Each definition's key: its qualified name and how many before it in the file share it.
    fn keys(&self) -> Vec<(String, usize)> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        self.ext
            .nodes
            .iter()
            .map(|n| {
                let k = seen.entry(n.qualified_name.as_str()).or_default();
                *k += 1;
                (n.qualified_name.clone(), *k - 1)
            })
            .collect()
    }

    fn body(&self, text: &str, i: usize) -> Vec<String> {
        let n = &self.ext.nodes[i];
        let code = text
            .get(n.start_byte as usize..n.end_byte as usize)
            .unwrap_or_default();
        // Without the first line, which holds the name.
        code.lines()
            .skip(1)
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// A definition touched on one side only, waiting to be paired with one of the other side.
struct Lone {
    symbol: ChangedSymbol,
    node: ExtractedNode,
    body: Vec<String>,
}

/// The changed symbols of `files`, whose sides' texts are `texts[i] = (old, new)`, matched to
/// the index's nodes in `index`; in diff order, each file's in source order.
pub fn changed_symbols(
    files: &[FileDiff],
    texts: &[(Option<String>, Option<String>)],
    index: &IndexFiles,
) -> Vec<ChangedSymbol> {
    let mut out = Vec::new();
    let mut deleted: Vec<Lone> = Vec::new();
    let mut added: Vec<Lone> = Vec::new();
    for (f, (old_text, new_text)) in files.iter().zip(texts) {
        // A file the index does not hold counts when it is code: deleted, or on a side the
        // tree is not at. Other files the index leaves out (generated, too large, its own
        // artifact) say nothing it can use.
        let paths = || [&f.old_path, &f.new_path].into_iter().flatten();
        let held = paths().any(|p| index.files.contains_key(p.as_str()));
        let code = paths().any(|p| {
            crate::lang::for_path(p).is_some() && !p.starts_with(crate::store::artifact::DIR)
        });
        if !held && !code {
            continue;
        }
        let old = f
            .old_path
            .as_deref()
            .zip(old_text.as_deref())
            .and_then(|(p, t)| Side::new(p, t).map(|s| (s, t)));
        let new = f
            .new_path
            .as_deref()
            .zip(new_text.as_deref())
            .and_then(|(p, t)| Side::new(p, t).map(|s| (s, t)));
        if old.is_none() && new.is_none() {
            // No grammar for it (or binary): the file as a whole, if the index has it.
            if f.binary && f.hunks.is_empty() && f.status == super::diff::Status::Modified {
                continue;
            }
            out.push(module_level(f, index, |_, _| true));
            continue;
        }
        let mut touched_old: Vec<usize> = Vec::new();
        let mut touched_new: Vec<usize> = Vec::new();
        for h in &f.hunks {
            for (o, n, line) in h.numbered() {
                if line.starts_with(' ') {
                    continue;
                }
                // A blank line outside every definition changes no code.
                let blank = line[1..].trim().is_empty();
                let side = if o.is_some() { &old } else { &new };
                let Some(((s, _), l)) = side.as_ref().zip(o.or(n)) else {
                    continue;
                };
                let at = s.innermost(l);
                if at == 0 && blank {
                    continue;
                }
                if o.is_some() {
                    touched_old.push(at);
                } else {
                    touched_new.push(at);
                }
            }
        }
        let dedup = |v: &mut Vec<usize>| {
            v.sort_unstable();
            v.dedup();
        };
        dedup(&mut touched_old);
        dedup(&mut touched_new);
        let old_keys = old.as_ref().map(|(s, _)| s.keys()).unwrap_or_default();
        let new_keys = new.as_ref().map(|(s, _)| s.keys()).unwrap_or_default();
        let old_at: HashMap<&(String, usize), usize> =
            old_keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let new_at: HashMap<&(String, usize), usize> =
            new_keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
        // Pairs (old, new) of one definition on both sides, touched on either.
        let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
        let mut outside_any = false;
        for &n in &touched_new {
            if n == 0 {
                outside_any = true;
                continue;
            }
            pairs.push((old_at.get(&new_keys[n]).copied(), Some(n)));
        }
        for &o in &touched_old {
            if o == 0 {
                outside_any = true;
                continue;
            }
            match new_at.get(&old_keys[o]).copied() {
                Some(n) if touched_new.contains(&n) => {}
                n => pairs.push((Some(o), n)),
            }
        }
        pairs.sort_by_key(|&(o, n)| (n.map_or(u32::MAX, |n| n as u32), o));
        pairs.dedup();
        let mut module_symbol = None;
        if outside_any {
            let outside = |o: Option<u32>, n: Option<u32>| {
                o.zip(old.as_ref())
                    .is_some_and(|(l, (s, _))| s.innermost(l) == 0)
                    || n.zip(new.as_ref())
                        .is_some_and(|(l, (s, _))| s.innermost(l) == 0)
            };
            module_symbol = Some(module_level(f, index, outside));
        }
        for (o, n) in pairs {
            let old_span = o.zip(old.as_ref()).map(|(i, (s, _))| s.spans[i]);
            let new_span = n.zip(new.as_ref()).map(|(i, (s, _))| s.spans[i]);
            let inside = |ol: Option<u32>, nl: Option<u32>| {
                ol.zip(old_span).is_some_and(|(l, (a, b))| a <= l && l <= b)
                    || nl.zip(new_span).is_some_and(|(l, (a, b))| a <= l && l <= b)
            };
            let diff_text = render_hunks(&f.hunks, inside);
            let (lines_added, lines_removed) = counted(&f.hunks, inside);
            let (side, keys, i, text, change) = match (o, n) {
                (Some(_), Some(n)) => {
                    let (s, t) = new.as_ref().expect("a new index has its side");
                    (s, &new_keys, n, *t, Change::Modified)
                }
                (None, Some(n)) => {
                    let (s, t) = new.as_ref().expect("a new index has its side");
                    (s, &new_keys, n, *t, Change::Added)
                }
                (Some(o), None) => {
                    let (s, t) = old.as_ref().expect("an old index has its side");
                    (s, &old_keys, o, *t, Change::Deleted)
                }
                (None, None) => continue,
            };
            let node = side.ext.nodes[i].clone();
            let (start_line, end_line) = side.spans[i];
            let found = index
                .definition(&side.path, &node.qualified_name, keys[i].1)
                .or_else(|| {
                    // The index may hold the other side (a diff of commits after the tree's).
                    let (os, oi) = match (o, n, &old, &new) {
                        (Some(o), Some(_), Some((s, _)), _) => (s, o),
                        _ => return None,
                    };
                    index.definition(&os.path, &os.ext.nodes[oi].qualified_name, old_keys[oi].1)
                });
            let symbol = ChangedSymbol {
                qualified_name: node.qualified_name.clone(),
                kind: node.kind.as_str(),
                path: side.path.clone(),
                change: change.clone(),
                start_line,
                end_line,
                lines_added,
                lines_removed,
                diff: diff_text,
                code: text
                    .get(node.start_byte as usize..node.end_byte as usize)
                    .unwrap_or_default()
                    .to_string(),
                in_index: found.is_some(),
                node: found,
                def: None,
            };
            let lone = |symbol| Lone {
                body: side.body(text, i),
                node: node.clone(),
                symbol,
            };
            match change {
                Change::Added => added.push(lone(symbol)),
                Change::Deleted => deleted.push(lone(symbol)),
                _ => out.push(symbol),
            }
        }
        out.extend(module_symbol);
    }
    pair_renames(&mut out, deleted, added);
    out
}

/// Pairs deletions with additions of the same kind whose bodies mostly agree, best first;
/// what stays alone is a deletion or an addition.
fn pair_renames(out: &mut Vec<ChangedSymbol>, deleted: Vec<Lone>, added: Vec<Lone>) {
    let mut scored: Vec<(f64, usize, usize)> = Vec::new();
    for (d, del) in deleted.iter().enumerate() {
        for (a, add) in added.iter().enumerate() {
            if del.node.kind != add.node.kind || del.body.is_empty() || add.body.is_empty() {
                continue;
            }
            let s = similarity(&del.body, &add.body);
            if s >= SAME_BODY {
                scored.push((s, d, a));
            }
        }
    }
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    let (mut used_d, mut used_a) = (HashSet::new(), HashSet::new());
    let mut renamed: HashMap<usize, String> = HashMap::new();
    for (_, d, a) in scored {
        if used_d.contains(&d) || used_a.contains(&a) {
            continue;
        }
        used_d.insert(d);
        used_a.insert(a);
        renamed.insert(a, deleted[d].node.qualified_name.clone());
    }
    for (a, mut lone) in added.into_iter().enumerate() {
        if let Some(from) = renamed.remove(&a) {
            lone.symbol.change = if base_name(&lone.node.name) == last_part(&from) {
                Change::Moved(from)
            } else {
                Change::Renamed(from)
            };
        }
        out.push(lone.symbol);
    }
    out.extend(
        deleted
            .into_iter()
            .enumerate()
            .filter(|(d, _)| !used_d.contains(d))
            .map(|(_, l)| l.symbol),
    );
}

/// A qualified name without the `#k` the index numbers repeated names with.
fn base_name(qualified_name: &str) -> &str {
    match qualified_name.rsplit_once('#') {
        Some((base, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => qualified_name,
    }
}

fn last_part(qualified_name: &str) -> &str {
    qualified_name
        .rsplit(['.', ':', '/', '#'])
        .next()
        .unwrap_or(qualified_name)
}

/// Lines the two bodies share (as multisets), over the longer body's lines.
fn similarity(a: &[String], b: &[String]) -> f64 {
    let mut counts: HashMap<&str, i32> = HashMap::new();
    for l in a {
        *counts.entry(l).or_default() += 1;
    }
    let mut shared = 0;
    for l in b {
        if let Some(c) = counts.get_mut(l.as_str()) {
            if *c > 0 {
                *c -= 1;
                shared += 1;
            }
        }
    }
    shared as f64 / a.len().max(b.len()) as f64
}

/// Lines added and removed for which `keep(old line, new line)` holds.
fn counted(hunks: &[Hunk], keep: impl Fn(Option<u32>, Option<u32>) -> bool) -> (usize, usize) {
    let added = hunks.iter().flat_map(|h| &h.added);
    let removed = hunks.iter().flat_map(|h| &h.removed);
    (
        added.filter(|&&l| keep(None, Some(l))).count(),
        removed.filter(|&&l| keep(Some(l), None)).count(),
    )
}

/// The file's module-level code: the changed lines for which `keep(old line, new line)`
/// holds.
fn module_level(
    f: &FileDiff,
    index: &IndexFiles,
    keep: impl Fn(Option<u32>, Option<u32>) -> bool,
) -> ChangedSymbol {
    let path = f.path().to_string();
    let node = index.file_node(&path);
    let (lines_added, lines_removed) = counted(&f.hunks, &keep);
    ChangedSymbol {
        qualified_name: path.clone(),
        kind: NodeKind::File.as_str(),
        path,
        change: Change::ModuleLevel,
        start_line: 1,
        end_line: 1,
        lines_added,
        lines_removed,
        diff: render_hunks(&f.hunks, &keep),
        code: changed_lines(&f.hunks, &keep),
        in_index: node.is_some(),
        node,
        def: None,
    }
}

/// The hunks' lines for which `keep(old line, new line)` holds, under their headers.
fn render_hunks(hunks: &[Hunk], keep: impl Fn(Option<u32>, Option<u32>) -> bool) -> String {
    let mut out = String::new();
    for h in hunks {
        let lines: Vec<&str> = h
            .numbered()
            .filter(|&(o, n, _)| keep(o, n))
            .map(|(_, _, l)| l)
            .collect();
        if lines.iter().all(|l| l.starts_with(' ')) {
            continue;
        }
        out.push_str(&h.header);
        out.push('\n');
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The changed lines for which `keep(old line, new line)` holds, without their marks.
fn changed_lines(hunks: &[Hunk], keep: impl Fn(Option<u32>, Option<u32>) -> bool) -> String {
    let mut out = String::new();
    for h in hunks {
        for (o, n, l) in h.numbered() {
            if !l.starts_with(' ') && keep(o, n) {
                out.push_str(&l[1..]);
                out.push('\n');
            }
        }
    }
    out
}

/// What the index holds of the files a diff touches: each file's node and its definitions'
/// nodes, in source order. Read for those files alone, so the diff is mapped onto the index
/// while the whole definitions graph is still loading.
pub struct IndexFiles {
    files: HashMap<String, HeldFile>,
}

struct HeldFile {
    node: Option<i64>,
    /// (node id, qualified name) in id order: source order.
    nodes: Vec<(i64, String)>,
}

impl IndexFiles {
    /// The index's nodes of `paths`, a path it does not hold left out.
    pub fn load<'p>(
        conn: &Connection,
        paths: impl IntoIterator<Item = &'p str>,
    ) -> rusqlite::Result<IndexFiles> {
        let mut file_of = conn.prepare_cached("SELECT id FROM files WHERE path = ?1")?;
        let mut nodes_of = conn.prepare_cached(
            "SELECT id, kind, qualified_name FROM nodes WHERE file_id = ?1 ORDER BY id",
        )?;
        let mut files = HashMap::new();
        for path in paths {
            if files.contains_key(path) {
                continue;
            }
            let Some(id) = file_of
                .query_row([path], |r| r.get::<_, i64>(0))
                .optional()?
            else {
                continue;
            };
            let mut held = HeldFile {
                node: None,
                nodes: Vec::new(),
            };
            let mut rows = nodes_of.query([id])?;
            while let Some(r) = rows.next()? {
                let node: i64 = r.get(0)?;
                if r.get_ref(1)?.as_str()? == NodeKind::File.as_str() {
                    held.node = Some(node);
                }
                held.nodes.push((node, r.get(2)?));
            }
            files.insert(path.to_string(), held);
        }
        Ok(IndexFiles { files })
    }

    fn file_node(&self, path: &str) -> Option<i64> {
        self.files.get(path).and_then(|f| f.node)
    }

    /// The `k`-th node of the file at `path` named `qualified_name` (before the index
    /// numbered repeated names).
    fn definition(&self, path: &str, qualified_name: &str, k: usize) -> Option<i64> {
        self.files
            .get(path)?
            .nodes
            .iter()
            .filter(|(_, qn)| base_name(qn) == qualified_name)
            .nth(k)
            .map(|&(id, _)| id)
    }
}

/// Fills each symbol's place in the definitions graph `repo` from its node.
pub fn resolve(changed: &mut [ChangedSymbol], repo: &Repo) {
    for c in changed {
        c.def = c.node.and_then(|n| repo.index_of(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_compare_by_shared_lines() {
        let a: Vec<String> = ["x = 1", "y = 2", "return x + y"]
            .map(String::from)
            .to_vec();
        let b: Vec<String> = ["x = 1", "y = 3", "return x + y"]
            .map(String::from)
            .to_vec();
        assert!((similarity(&a, &b) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(similarity(&a, &a), 1.0);
    }
}
