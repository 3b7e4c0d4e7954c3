//! The resolution chain's C and C++ parts, called from `lookup`: what a translation unit
//! sees through its includes (and the implementation files beside included headers), which
//! definitions the linker can join across files, namespaces, and methods defined outside
//! their class.

use super::*;

/// What a C or C++ file sees through its includes.
pub(super) struct Visible<'g> {
    pub(super) file: Idx,
    /// Included files, directly (tier 1) or through other included files (tier 2).
    pub(super) files: FxHashMap<Idx, u8>,
    /// The implementation files beside included headers, at their header's tier: only what
    /// they share with other files counts (not their `static` functions, macros, types).
    pub(super) implementations: FxHashMap<Idx, u8>,
    /// Names of the included headers without extension (`workqueue` for
    /// `linux/workqueue.h`): a source file of that name likely implements them.
    pub(super) stems: FxHashSet<&'g str>,
}

/// C and C++: translation units, linkage and namespaces.
impl<'g> Resolver<'g> {
    /// C and C++: a bare name that no enclosing definition has. The paths it may mean are
    /// tried in order: a `using a::name` declaration, the namespaces around `scope` innermost
    /// first (`a.b.name`, `a.name`, `name`), then `using namespace` directives. Definitions
    /// with such a path are taken from, most certain first: the same file, the files it
    /// includes (directly, then through other headers) and the implementations beside
    /// included headers; the language's own names are external; last come definitions
    /// anywhere that the linker can join (not `static`, not another source file's macros and
    /// types), preferably in a source file named like an included header.
    pub(super) fn translation_unit(&self, scope: Idx, name: &str) -> Result<Step, Miss> {
        let g = self.g;
        let file = g.node(scope).file;
        let p = g.file(file).profile;
        let candidates: Vec<Idx> = g
            .by_name(name)
            .filter(|&i| g.node(i).kind != NodeKind::File)
            .collect();
        let (paths, using) = self.namespace_paths(scope, name);
        // `using std::max;`: the name is bound to something outside the repository.
        let bound_outside = using > 0
            && paths[..using]
                .iter()
                .all(|path| candidates.iter().all(|&c| g.local_qn(c) != path));
        let matches: Vec<Vec<Idx>> = paths
            .iter()
            .map(|path| {
                candidates
                    .iter()
                    .copied()
                    .filter(|&c| {
                        g.local_qn(c) == path || (path == name && g.nested_macros.contains(&c))
                    })
                    .collect()
            })
            .collect();
        for m in &matches {
            // A namespace is open: any file's block of it stands for all of them.
            if let Some(&ns) = m.iter().find(|&&c| g.node(c).kind == NodeKind::Module) {
                return Ok(Step::new(Value::Defs(vec![ns]), SAME_SCOPE, "namespace"));
            }
            if let Some(step) = self.in_translation_unit(file, m) {
                return Ok(step);
            }
        }
        if p.is_builtin(name) || bound_outside {
            return Ok(Step::new(Value::External, 1.0, "builtin"));
        }
        for (m, path) in matches.iter().zip(&paths) {
            let linkable: Vec<Idx> = m
                .iter()
                .copied()
                .filter(|c| !g.file_local.contains(c))
                .collect();
            if !linkable.is_empty() {
                return self.linked(file, linkable, name, path.contains('.'));
            }
        }
        if candidates.is_empty() {
            Err(Miss::External)
        } else {
            Err(Miss::NotFound)
        }
    }

    /// The paths (dotted, without module prefix) a bare C or C++ name may mean at `scope`;
    /// the first ones, as many as the number returned, come from `using` declarations.
    pub(super) fn namespace_paths(&self, scope: Idx, name: &str) -> (Vec<String>, usize) {
        let g = self.g;
        let n = g.node(scope);
        let f = g.file(n.file);
        let mut paths = Vec::new();
        let visible = |imp: &Import| !imp.name.is_empty() && self.visible(imp, scope);
        for imp in f.imports.iter().filter(|i| visible(i)) {
            if &*imp.name == name {
                paths.push(join(&imp.module.replace("::", "."), name));
            }
        }
        let using = paths.len();
        // Inside a function the enclosing namespaces and classes are its qualifier's.
        let local = match n.kind {
            NodeKind::File => "",
            NodeKind::Module => g.local_qn(scope),
            k if k.is_type_like() => g.local_qn(scope),
            _ => g.local_qn(scope).rsplit_once('.').map_or("", |(q, _)| q),
        };
        let mut prefix = local;
        loop {
            paths.push(join(prefix, name));
            match prefix.rsplit_once('.') {
                Some((outer, _)) => prefix = outer,
                None if !prefix.is_empty() => prefix = "",
                None => break,
            }
        }
        for imp in f.imports.iter().filter(|i| visible(i) && &*i.name == "*") {
            paths.push(join(&imp.module.replace("::", "."), name));
        }
        (paths, using)
    }

    /// The definitions among `defs` that `file` sees in its translation unit: its own, then
    /// those of included files.
    pub(super) fn in_translation_unit(&self, file: Idx, defs: &[Idx]) -> Option<Step> {
        if defs.is_empty() {
            return None;
        }
        let g = self.g;
        let own: Vec<Idx> = defs
            .iter()
            .copied()
            .filter(|&d| g.node(d).file == file)
            .collect();
        if !own.is_empty() {
            return Some(Step::new(Value::Defs(own), SAME_SCOPE, "same_file"));
        }
        let visible = self.visible_from(file);
        let tier_of = |d: &Idx| {
            let f = g.node(*d).file;
            visible.files.get(&f).copied().or_else(|| {
                (!g.file_local.contains(d))
                    .then(|| visible.implementations.get(&f).copied())
                    .flatten()
            })
        };
        let best = defs.iter().filter_map(tier_of).min()?;
        let seen: Vec<Idx> = defs
            .iter()
            .copied()
            .filter(|d| tier_of(d) == Some(best))
            .collect();
        let confidence = if best == 1 { IMPORT } else { STAR_IMPORT };
        Some(Step::new(Value::Defs(seen), confidence, "include"))
    }

    /// Definitions outside the translation unit that the linker could join to it: one in a
    /// source file named like an included header, one with a namespace-qualified path,
    /// otherwise a guess by name.
    pub(super) fn linked(
        &self,
        file: Idx,
        defs: Vec<Idx>,
        name: &str,
        qualified: bool,
    ) -> Result<Step, Miss> {
        let g = self.g;
        let visible = self.visible_from(file);
        let paired: Vec<Idx> = defs
            .iter()
            .copied()
            .filter(|&d| {
                visible
                    .stems
                    .contains(file_stem(&g.file(g.node(d).file).path))
            })
            .collect();
        if paired.len() == 1 {
            return Ok(Step::new(Value::Defs(paired), INFERRED, "header_pair"));
        }
        if qualified && defs.len() == 1 {
            return Ok(Step::new(Value::Defs(defs), INFERRED, "namespace"));
        }
        match self.spread(defs, name, false) {
            Outcome::Resolved(t) => {
                let (c, s) = (t[0].confidence, t[0].strategy);
                let nodes = t.into_iter().map(|t| t.node).collect();
                Ok(Step::new(Value::Defs(nodes), c, s))
            }
            Outcome::Unresolved { miss, .. } => Err(miss),
        }
    }

    /// `ns::name` for a C++ namespace `ns` (any of its blocks): definitions with that path
    /// in any file, the caller's translation unit first.
    pub(super) fn namespace_member(&self, ns: Idx, name: &str) -> Result<Step, Miss> {
        let g = self.g;
        let path = join(g.local_qn(ns), name);
        let defs: Vec<Idx> = g
            .by_name(name)
            .filter(|&i| g.node(i).kind != NodeKind::File && g.local_qn(i) == path)
            .collect();
        if let Some(&inner) = defs.iter().find(|&&d| g.node(d).kind == NodeKind::Module) {
            return Ok(Step::new(Value::Defs(vec![inner]), 1.0, ""));
        }
        let file = self.caller.get();
        if let Some(step) = self.in_translation_unit(file, &defs) {
            return Ok(step);
        }
        let linkable: Vec<Idx> = defs
            .into_iter()
            .filter(|d| !g.file_local.contains(d))
            .collect();
        if linkable.is_empty() {
            return Err(Miss::NotFound);
        }
        self.linked(file, linkable, name, true)
    }

    /// The files `file` sees through its includes, computed once per file in a row.
    pub(super) fn visible_from(&self, file: Idx) -> Rc<Visible<'g>> {
        if let Some(v) = self
            .visible_cache
            .borrow()
            .as_ref()
            .filter(|v| v.file == file)
        {
            return v.clone();
        }
        let g = self.g;
        let mut files: FxHashMap<Idx, u8> = FxHashMap::default();
        let mut implementations: FxHashMap<Idx, u8> = FxHashMap::default();
        let mut stems: FxHashSet<&'g str> = FxHashSet::default();
        let mut queue: Vec<(Idx, u8)> = vec![(file, 0)];
        // A source file included by others (a unity build) sees what they include.
        for &u in g.included_by.get(&file).map_or(&[][..], |v| v.as_slice()) {
            if u != file && files.insert(u, 2).is_none() {
                queue.push((u, 1));
            }
        }
        let mut i = 0;
        while i < queue.len() && files.len() < MAX_VISIBLE_FILES {
            let (f, depth) = queue[i];
            i += 1;
            let tier = if depth == 0 { 1 } else { 2 };
            for &t in g.includes_of(f) {
                if t == file || files.contains_key(&t) {
                    continue;
                }
                files.insert(t, tier);
                queue.push((t, tier));
                let path = &*g.file(t).path;
                if is_header(path) {
                    stems.insert(file_stem(path));
                }
                if let Some(&imp) = g.implementation.get(&t) {
                    if imp != file {
                        implementations.entry(imp).or_insert(tier);
                    }
                }
            }
        }
        let v = Rc::new(Visible {
            file,
            files,
            implementations,
            stems,
        });
        *self.visible_cache.borrow_mut() = Some(v.clone());
        v
    }

    /// C++: the definitions of `class`'s method `name` written outside its body, in any file
    /// (`void Shape::draw() {..}` in shape.cpp for the class in shape.hpp). They hold the
    /// code, so they replace the declarations in the class (`in_class`); several classes of
    /// the same path take the definitions in a file named like the class's own.
    pub(super) fn out_of_class(&self, class: Idx, name: &str, in_class: Vec<Idx>) -> Vec<Idx> {
        let g = self.g;
        let path = join(g.local_qn(class), name);
        let defs: Vec<Idx> = g
            .by_name(name)
            .filter(|&i| {
                let n = g.node(i);
                n.kind == NodeKind::Method
                    && n.parent.is_none_or(|p| !g.node(p).kind.is_type_like())
                    && g.local_qn(i) == path
            })
            .collect();
        if defs.is_empty() {
            return in_class;
        }
        let stem = file_stem(&g.file(g.node(class).file).path);
        let beside: Vec<Idx> = defs
            .iter()
            .copied()
            .filter(|&d| file_stem(&g.file(g.node(d).file).path) == stem)
            .collect();
        if beside.is_empty() {
            defs
        } else {
            beside
        }
    }

    /// The file an `#include` names: relative to the including file, or the only file in
    /// the tree with that path suffix.
    pub(super) fn include_target(&self, file: Idx, imp: &Import) -> Option<Idx> {
        let g = self.g;
        let dir = g.file(file).path.rsplit_once('/').map_or("", |(d, _)| d);
        let inc = crate::resolve::rules::unquoted(imp.module.trim_matches(['<', '>']));
        g.file_by_path(&normalize_path(&join_path(dir, inc)))
            .or_else(|| g.file_by_path_suffix(inc))
    }

    /// The files `file`'s `#include`s name (not its `using` declarations).
    pub fn include_targets(&self, file: Idx) -> Vec<Idx> {
        let mut out: Vec<Idx> = self
            .g
            .file(file)
            .imports
            .iter()
            .filter(|imp| imp.name.is_empty())
            .filter_map(|imp| self.include_target(file, imp))
            .filter(|&t| t != file)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The implementation beside a header: `util.h` -> `util.c` (or `.cc`, `.cpp`, `.cxx`).
    pub fn implementation_beside(&self, header: Idx) -> Option<Idx> {
        let path = &*self.g.file(header).path;
        if !is_header(path) {
            return None;
        }
        let (stem, _) = path.rsplit_once('.')?;
        ["c", "cc", "cpp", "cxx"]
            .iter()
            .find_map(|ext| self.g.file_by_path(&format!("{stem}.{ext}")))
    }
}
