//! Helpers shared by the per-language extraction tests (`tests/lang_*.rs`): run the
//! extractor on a source text and flatten its definitions and references into tuples that
//! compare against literal expectations.

use codebase_indexer::{ExtractedNode, FileExtract, NodeKind, RefKind};

/// Extracts `src` as the file `path`, with the language its path selects.
pub fn run(path: &str, src: &str) -> FileExtract {
    codebase_indexer::extract_file(path, src).expect("language for path")
}

/// (kind, qualified name, parent index, start line, end line) of every definition.
pub fn defs(x: &FileExtract) -> Vec<(NodeKind, &str, usize, u32, u32)> {
    x.nodes[1..]
        .iter()
        .map(|n| {
            (
                n.kind,
                n.qualified_name.as_str(),
                n.parent.expect("definitions have a parent"),
                n.start_line,
                n.end_line,
            )
        })
        .collect()
}

/// (kind, qualified name, parent's qualified name, start line, end line) of every definition.
pub fn outline(x: &FileExtract) -> Vec<(NodeKind, &str, &str, u32, u32)> {
    defs(x)
        .into_iter()
        .map(|(kind, name, parent, start, end)| {
            let parent = x.nodes[parent].qualified_name.as_str();
            (kind, name, parent, start, end)
        })
        .collect()
}

/// [`outline`] with owned names, to compare against expectations built from `String`s.
pub fn outline_owned(x: &FileExtract) -> Vec<(NodeKind, String, String, u32, u32)> {
    outline(x)
        .into_iter()
        .map(|(kind, name, parent, start, end)| {
            (kind, name.to_string(), parent.to_string(), start, end)
        })
        .collect()
}

/// The first definition named `qualified_name`; panics when there is none.
pub fn node<'a>(x: &'a FileExtract, qualified_name: &str) -> &'a ExtractedNode {
    x.nodes
        .iter()
        .find(|n| n.qualified_name == qualified_name)
        .unwrap_or_else(|| panic!("no definition {qualified_name}"))
}

/// The definition named `qualified_name`, asserting that there is exactly one.
pub fn unique_node<'a>(x: &'a FileExtract, qualified_name: &str) -> &'a ExtractedNode {
    let found = x
        .nodes
        .iter()
        .filter(|n| n.qualified_name == qualified_name)
        .count();
    assert_eq!(found, 1, "exactly one {qualified_name}");
    node(x, qualified_name)
}

/// The signature of [`node`], or `""` when it has none.
pub fn sig<'a>(x: &'a FileExtract, qualified_name: &str) -> &'a str {
    node(x, qualified_name).signature.as_deref().unwrap_or("")
}

/// The docstring of [`node`].
pub fn doc<'a>(x: &'a FileExtract, qualified_name: &str) -> Option<&'a str> {
    node(x, qualified_name).docstring.as_deref()
}

/// (owner's qualified name, kind, name, module, alias, line) of a reference.
pub type Ref<'a> = (
    &'a str,
    RefKind,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    u32,
);

/// Every reference, in source order.
pub fn refs(x: &FileExtract) -> Vec<Ref<'_>> {
    x.refs
        .iter()
        .map(|r| {
            (
                x.nodes[r.node].qualified_name.as_str(),
                r.kind,
                r.name.as_str(),
                r.module.as_deref(),
                r.alias.as_deref(),
                r.line,
            )
        })
        .collect()
}

/// (owning node index, name, line) of the references of one kind, in source order.
pub fn kind_refs(x: &FileExtract, kind: RefKind) -> Vec<(usize, &str, u32)> {
    x.refs
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| (r.node, r.name.as_str(), r.line))
        .collect()
}

/// (owner's qualified name, name, line) of the references of one kind, as owned strings;
/// compare with [`owned`].
pub fn kind_refs_owned(x: &FileExtract, kind: RefKind) -> Vec<(String, String, u32)> {
    kind_refs(x, kind)
        .into_iter()
        .map(|(owner, name, line)| {
            (
                x.nodes[owner].qualified_name.clone(),
                name.to_string(),
                line,
            )
        })
        .collect()
}

/// Owned copies of (owner, name, line) expectations, for [`kind_refs_owned`].
pub fn owned(items: &[(&str, &str, u32)]) -> Vec<(String, String, u32)> {
    items
        .iter()
        .map(|(a, b, l)| (a.to_string(), b.to_string(), *l))
        .collect()
}
