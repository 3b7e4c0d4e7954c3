//! The repository-wide symbol tables resolution consults: every file with its module, every
//! definition with its qualified name, the imports and member types of every file, and the
//! class hierarchy. Loaded from the database in a few sequential scans.

use super::lang::{self, Profile};
use super::overloads::{self, Params};
use crate::model::{NodeKind, RefKind};
use crate::store::writer::{base_name, ORDINAL_BITS};
use anyhow::Result;
use rusqlite::Connection;
use std::collections::{HashMap, HashSet};

pub type Idx = u32;

pub struct FileInfo {
    pub id: i64,
    pub path: Box<str>,
    pub profile: &'static Profile,
    pub module: Box<str>,
    /// The file's own node (kind File).
    pub node: Option<Idx>,
    pub imports: Vec<Import>,
}

/// One import as extracted: `from module import name as alias`.
pub struct Import {
    pub module: Box<str>,
    /// The imported item; empty for the whole module, `*` for all of it.
    pub name: Box<str>,
    pub alias: Option<Box<str>>,
    /// The node the import is written in (a file node, or a function for local imports).
    pub node: Idx,
    pub line: u32,
}

/// A base type named by a definition (`class A(B)`, `implements I`).
pub struct BaseRef {
    pub node: Idx,
    pub name: Box<str>,
    pub implements: bool,
    pub line: u32,
}

pub struct NodeInfo {
    pub id: i64,
    pub file: Idx,
    pub kind: NodeKind,
    pub parent: Option<Idx>,
    pub name: Box<str>,
    /// The qualified name without its `#k` uniqueness suffix.
    pub qn: Box<str>,
    /// The parameters of a method, which choose among overloads; read for languages with
    /// declared types (Java, Kotlin, C#).
    pub params: Option<Box<Params>>,
}

/// A member variable with a declared or inferred type (`self.session = Session()`).
pub struct Field {
    pub type_text: Box<str>,
    /// The node where the type is written: types resolve in that node's scope.
    pub node: Idx,
}

/// Strings looked up by a 64-bit hash, kept as one sorted vector: compact for millions of
/// names, and every hit is checked against the real string by the caller.
#[derive(Default)]
pub struct HashIndex(Vec<(u64, Idx)>);

impl HashIndex {
    fn push(&mut self, key: &str, idx: Idx) {
        self.0.push((hash(key), idx));
    }

    fn seal(&mut self) {
        self.0.sort_unstable();
        self.0.dedup();
    }

    /// Candidates for `key` (hash matches; callers compare the strings).
    pub fn get(&self, key: &str) -> impl Iterator<Item = Idx> + '_ {
        let h = hash(key);
        let start = self.0.partition_point(|&(k, _)| k < h);
        self.0[start..]
            .iter()
            .take_while(move |&&(k, _)| k == h)
            .map(|&(_, i)| i)
    }
}

/// FNV-1a: fast, and good enough with the string check behind it.
pub fn hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

pub struct Graph {
    pub files: Vec<FileInfo>,
    pub nodes: Vec<NodeInfo>,
    file_by_id: HashMap<i64, Idx>,
    by_qn: HashIndex,
    by_name: HashIndex,
    /// Module names and every dotted prefix of them (a package with only submodules).
    modules: HashIndex,
    by_path: HashIndex,
    /// Files by their last path component (`util.h`).
    by_basename: HashIndex,
    fields: HashMap<(Idx, u64), Vec<Field>>,
    /// Base types named by every definition, in file order.
    pub base_refs: Vec<BaseRef>,
    /// Direct base types of each type, filled by `super::hierarchy`.
    pub bases: HashMap<Idx, Vec<Idx>>,
    /// Types with a base outside the repository: an unknown member may be inherited.
    pub external_bases: HashSet<Idx>,
    /// `module` lines of `go.mod` files: (module path, directory).
    pub go_modules: Vec<(String, String)>,
}

impl Graph {
    pub fn load(conn: &Connection) -> Result<Graph> {
        let mut g = Graph {
            files: Vec::new(),
            nodes: Vec::new(),
            file_by_id: HashMap::new(),
            by_qn: HashIndex::default(),
            by_name: HashIndex::default(),
            modules: HashIndex::default(),
            by_path: HashIndex::default(),
            by_basename: HashIndex::default(),
            fields: HashMap::new(),
            base_refs: Vec::new(),
            bases: HashMap::new(),
            external_bases: HashSet::new(),
            go_modules: Vec::new(),
        };
        let mut q = conn.prepare("SELECT id, path, language, module FROM files ORDER BY id")?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let idx = g.files.len() as Idx;
            let id: i64 = r.get(0)?;
            let path: String = r.get(1)?;
            let module: String = r.get(3)?;
            g.by_path.push(&path, idx);
            g.by_basename
                .push(path.rsplit('/').next().unwrap_or(&path), idx);
            let mut prefix = module.as_str();
            loop {
                g.modules.push(prefix, idx);
                match prefix.rsplit_once(['.', '/']) {
                    Some((p, _)) => prefix = p,
                    None => break,
                }
            }
            g.file_by_id.insert(id, idx);
            g.files.push(FileInfo {
                id,
                path: path.into(),
                profile: lang::profile(r.get_ref(2)?.as_str()?),
                module: module.into(),
                node: None,
                imports: Vec::new(),
            });
        }
        g.by_path.seal();
        g.by_basename.seal();
        g.modules.seal();

        let mut q = conn.prepare(
            "SELECT id, file_id, kind, name, qualified_name, parent_id, signature FROM nodes \
             ORDER BY id",
        )?;
        let mut rows = q.query([])?;
        let mut parents: Vec<Option<i64>> = Vec::new();
        while let Some(r) = rows.next()? {
            let idx = g.nodes.len() as Idx;
            let Some(&file) = g.file_by_id.get(&r.get::<_, i64>(1)?) else {
                continue;
            };
            let kind = NodeKind::parse(r.get_ref(2)?.as_str()?).unwrap_or(NodeKind::Constant);
            let name: &str = r.get_ref(3)?.as_str()?;
            let qn = base_name(r.get_ref(4)?.as_str()?);
            if kind == NodeKind::File {
                g.files[file as usize].node = Some(idx);
            } else {
                g.by_name.push(name, idx);
                g.by_qn.push(qn, idx);
            }
            parents.push(r.get(5)?);
            let params = match kind {
                NodeKind::Method | NodeKind::Function
                    if g.files[file as usize].profile.types.is_some() =>
                {
                    let signature = r.get_ref(6)?.as_str_or_null()?.unwrap_or("");
                    overloads::parse(signature, name).map(Box::new)
                }
                _ => None,
            };
            g.nodes.push(NodeInfo {
                id: r.get(0)?,
                file,
                kind,
                parent: None,
                name: name.into(),
                qn: qn.into(),
                params,
            });
        }
        for (i, p) in parents.into_iter().enumerate() {
            g.nodes[i].parent = p.and_then(|p| g.node_by_id(p));
        }
        g.by_qn.seal();
        g.by_name.seal();

        // Imports and member types of every file: re-exports and inherited fields may
        // lead anywhere.
        let mut q = conn.prepare(
            "SELECT node_id, kind, name, module, alias, line FROM refs \
             WHERE kind IN ('import', 'field', 'inherits', 'implements') ORDER BY node_id, seq",
        )?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let Some(node) = g.node_by_id(r.get(0)?) else {
                continue;
            };
            let name: &str = r.get_ref(2)?.as_str()?;
            let module = r.get_ref(3)?.as_str_or_null()?.unwrap_or("");
            let line: u32 = r.get(5)?;
            match RefKind::parse(r.get_ref(1)?.as_str()?) {
                Some(RefKind::Import) => {
                    let file = g.nodes[node as usize].file as usize;
                    g.files[file].imports.push(Import {
                        module: module.into(),
                        name: name.into(),
                        alias: r.get_ref(4)?.as_str_or_null()?.map(Into::into),
                        node,
                        line,
                    });
                }
                Some(RefKind::Field) if !module.is_empty() => g.add_field(node, name, module),
                Some(kind @ (RefKind::Inherits | RefKind::Implements)) => {
                    g.base_refs.push(BaseRef {
                        node,
                        name: name.into(),
                        implements: kind == RefKind::Implements,
                        line,
                    })
                }
                _ => {}
            }
        }

        let mut q = conn.prepare(
            "SELECT f.path, c.content FROM files f JOIN file_contents c ON c.file_id = f.id \
             WHERE f.path = 'go.mod' OR f.path LIKE '%/go.mod' ORDER BY f.path",
        )?;
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let path: &str = r.get_ref(0)?.as_str()?;
            let dir = path
                .strip_suffix("go.mod")
                .unwrap_or("")
                .trim_end_matches('/');
            let content: &str = r.get_ref(1)?.as_str()?;
            if let Some(m) = content
                .lines()
                .find_map(|l| l.trim().strip_prefix("module "))
            {
                g.go_modules
                    .push((lang::unquoted(m.trim()).to_string(), dir.to_string()));
            }
        }
        Ok(g)
    }

    /// `self.x = ...` inside a method types the enclosing class's field `x`; a field written
    /// directly in a class body types that class's field.
    fn add_field(&mut self, node: Idx, name: &str, type_text: &str) {
        let n = &self.nodes[node as usize];
        let profile = self.files[n.file as usize].profile;
        let (owner, field) = if n.kind.is_type_like() {
            (Some(node), name)
        } else {
            let field = profile
                .self_names
                .iter()
                .find_map(|s| name.strip_prefix(s)?.strip_prefix('.'));
            (self.enclosing_type(node), field.unwrap_or(name))
        };
        if let Some(owner) = owner {
            self.fields
                .entry((owner, hash(field)))
                .or_default()
                .push(Field {
                    type_text: type_text.into(),
                    node,
                });
        }
    }

    pub fn node_by_id(&self, id: i64) -> Option<Idx> {
        self.nodes
            .binary_search_by_key(&id, |n| n.id)
            .ok()
            .map(|i| i as Idx)
    }

    pub fn file_of_id(&self, file_id: i64) -> Option<Idx> {
        self.file_by_id.get(&file_id).copied()
    }

    pub fn node(&self, idx: Idx) -> &NodeInfo {
        &self.nodes[idx as usize]
    }

    pub fn file(&self, idx: Idx) -> &FileInfo {
        &self.files[idx as usize]
    }

    /// Definitions with exactly this (base) qualified name.
    pub fn by_qn<'a>(&'a self, qn: &'a str) -> impl Iterator<Item = Idx> + 'a {
        self.by_qn
            .get(qn)
            .filter(move |&i| &*self.nodes[i as usize].qn == qn)
    }

    /// Definitions named `name` anywhere in the repository.
    pub fn by_name<'a>(&'a self, name: &'a str) -> impl Iterator<Item = Idx> + 'a {
        self.by_name
            .get(name)
            .filter(move |&i| &*self.nodes[i as usize].name == name)
    }

    /// `qualifier.name`, looked up without building the string when the qualifier is empty.
    pub fn member_qn(&self, qualifier: &str, name: &str) -> Vec<Idx> {
        if qualifier.is_empty() {
            return self.by_qn(name).collect();
        }
        let qn = format!("{qualifier}.{name}");
        self.by_qn(&qn).collect()
    }

    /// Whether some file's module is `module` or lies under it.
    pub fn module_exists(&self, module: &str) -> bool {
        self.modules.get(module).any(|f| {
            let m = &*self.files[f as usize].module;
            m == module
                || m.strip_prefix(module)
                    .is_some_and(|rest| rest.starts_with(['.', '/']))
        })
    }

    /// Files whose module is exactly `module`.
    pub fn module_files<'a>(&'a self, module: &'a str) -> impl Iterator<Item = Idx> + 'a {
        self.modules
            .get(module)
            .filter(move |&f| &*self.files[f as usize].module == module)
    }

    pub fn file_by_path(&self, path: &str) -> Option<Idx> {
        self.by_path
            .get(path)
            .find(|&f| &*self.files[f as usize].path == path)
    }

    /// The file whose path is `path` or, failing that, the only one ending in `/path`.
    pub fn file_by_path_suffix(&self, path: &str) -> Option<Idx> {
        if let Some(f) = self.file_by_path(path) {
            return Some(f);
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let suffix = format!("/{path}");
        let mut found = self
            .by_basename
            .get(name)
            .filter(|&f| self.files[f as usize].path.ends_with(&suffix));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    pub fn fields(&self, class: Idx, name: &str) -> &[Field] {
        self.fields
            .get(&(class, hash(name)))
            .map_or(&[], |v| v.as_slice())
    }

    /// The type a method belongs to: its nearest type-like ancestor or, for methods defined
    /// outside their type's body (Go receivers, Rust `impl` blocks, C++ `X::m`), the type
    /// named by the qualified name's prefix.
    pub fn enclosing_type(&self, mut idx: Idx) -> Option<Idx> {
        loop {
            let n = &self.nodes[idx as usize];
            if n.kind.is_type_like() {
                return Some(idx);
            }
            if n.kind == NodeKind::Method {
                let parent_is_type = n
                    .parent
                    .is_some_and(|p| self.nodes[p as usize].kind.is_type_like());
                if !parent_is_type {
                    let (prefix, _) = n.qn.rsplit_once('.')?;
                    return self
                        .by_qn(prefix)
                        .find(|&t| self.nodes[t as usize].kind.is_type_like());
                }
            }
            idx = n.parent?;
        }
    }

    /// Whether a reference can land on this node (files and namespaces are not targets).
    pub fn is_callable(&self, idx: Idx) -> bool {
        !matches!(
            self.nodes[idx as usize].kind,
            NodeKind::File | NodeKind::Module
        )
    }

    /// The first node id of a file and the first id past it.
    pub fn id_range(file_id: i64) -> (i64, i64) {
        (file_id << ORDINAL_BITS, (file_id + 1) << ORDINAL_BITS)
    }
}
