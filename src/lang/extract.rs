//! The shared traversal: parse a file with its grammar and walk the syntax tree once,
//! asking the language's rules about each named node. Produces definitions with qualified
//! names, signatures and doc comments, and the raw reference sites inside each of them.

use crate::lang::NodeExt;
use crate::lang::{compact, Cx, Language};
use crate::model::{ExtractedNode, FileExtract, NodeKind, RefKind};
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use tree_sitter::{Node, Parser};

/// Longest signature kept for a definition without a body (a constant's initializer).
const MAX_SIGNATURE_CHARS: usize = 300;
/// Longest docstring kept.
const MAX_DOC_CHARS: usize = 4000;
/// Longest name kept for a definition, and for each part of its qualifier. Every
/// definition inside another repeats the outer names in its qualified name: a class named
/// by a 100 kB identifier would multiply its size by the number of its members.
const MAX_NAME_CHARS: usize = 200;
/// Longest qualified name kept: nesting multiplies even short names.
const MAX_QUALIFIED_CHARS: usize = 1000;
/// Time allowed to extract one file: a base plus a per-byte share (about 7 s for 1 MiB, some
/// 30 times what real code needs). See [`file_budget`].
const FILE_BUDGET_BASE: Duration = Duration::from_secs(2);
const FILE_BUDGET_PER_BYTE: Duration = Duration::from_micros(5);
/// Nodes nested deeper than this are not visited: nothing real is defined that deep, and
/// rules that look at ancestors cost time proportional to depth.
const MAX_VISIT_DEPTH: u32 = 500;
/// A file never yields more definitions than this (bounds hostile generated input).
pub const MAX_NODES_PER_FILE: usize = 1 << 19;

thread_local! {
    static PARSERS: RefCell<Vec<(&'static str, Parser)>> = const { RefCell::new(Vec::new()) };
}

/// Extracts the definitions and reference sites of the file at `path` (repository-relative,
/// `/`-separated) from its text, with the grammar its name selects; `None` when no grammar
/// does (such files are indexed as file nodes only). A pure function of path and text: the
/// same input always gives the same output.
pub fn extract_file(path: &str, text: &str) -> Option<FileExtract> {
    crate::lang::for_path(path).map(|lang| extract(lang, path, text))
}

/// Extracts definitions and references from `src`, the text of the file at `path`.
/// Node 0 is the file itself (its qualified name is the path).
pub fn extract(lang: &'static Language, path: &str, text: &str) -> FileExtract {
    // Parsed with a final newline: some external scanners (Kotlin's) loop forever when a
    // token runs into the end of the input. Byte offsets are unchanged.
    let with_newline;
    let src = if text.ends_with('\n') {
        text
    } else {
        with_newline = format!("{text}\n");
        &with_newline
    };
    // Parsing and walking share one time budget: a file must never stall the run.
    let deadline = Instant::now() + file_budget(src.len());
    let tree = PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let idx = match parsers.iter().position(|(name, _)| *name == lang.name) {
            Some(i) => i,
            None => {
                let mut parser = Parser::new();
                // A grammar/ABI mismatch is a build defect, not a property of the input.
                parser
                    .set_language(&lang.grammar())
                    .expect("grammar compatible with the tree-sitter runtime");
                parsers.push((lang.name, parser));
                parsers.len() - 1
            }
        };
        let input = lang.rules.parser_input(src);
        debug_assert_eq!(input.len(), src.len());
        parse_with_deadline(&mut parsers[idx].1, &input, deadline)
    });
    let mut out = FileExtract {
        nodes: vec![file_node(path, text)],
        ..FileExtract::default()
    };
    let Some(tree) = tree else {
        // Abandoned: the file keeps its file node, and the run says so.
        out.has_errors = true;
        out.timed_out = true;
        return out;
    };
    let root = tree.root_node();
    out.has_errors = root.has_error();
    let cx = Cx {
        src: src.as_bytes(),
        source: src,
        path,
        state: RefCell::new(lang.rules.file_state(path)),
    };
    out.deprecated = lang.rules.deprecated(root, &cx);
    let finished = Walker {
        lang,
        cx: &cx,
        out: &mut out,
        scopes: Vec::new(),
        passed: Vec::new(),
        file_len: text.len(),
        deadline,
    }
    .walk(root);
    if !finished {
        // Out of time: a partial outline would be misleading, so keep only the file node.
        out.nodes.truncate(1);
        out.refs.clear();
        out.timed_out = true;
    }
    out
}

/// The time a file of `len` bytes gets to be parsed and walked before it is given up.
pub(crate) fn file_budget(len: usize) -> Duration {
    FILE_BUDGET_BASE + FILE_BUDGET_PER_BYTE * len as u32
}

/// A file that no grammar parses: only its file node.
pub fn file_only(path: &str, src: &str) -> FileExtract {
    FileExtract {
        nodes: vec![file_node(path, src)],
        ..FileExtract::default()
    }
}

/// Parses `src`, giving up at `deadline`: error recovery on hostile input can take very long.
pub(crate) fn parse_with_deadline(
    parser: &mut Parser,
    src: &str,
    deadline: Instant,
) -> Option<tree_sitter::Tree> {
    let bytes = src.as_bytes();
    let mut check = |_: &tree_sitter::ParseState| {
        if Instant::now() > deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let tree = parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
        None,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut check)),
    );
    if tree.is_none() {
        // A cancelled parse would otherwise resume on the next call.
        parser.reset();
    }
    tree
}

fn file_node(path: &str, src: &str) -> ExtractedNode {
    // As `src.lines().count()` counts them: a final line without a newline counts too.
    let newlines = memchr::memchr_iter(b'\n', src.as_bytes()).count();
    let lines = (newlines + usize::from(!src.is_empty() && !src.ends_with('\n'))).max(1) as u32;
    ExtractedNode {
        kind: NodeKind::File,
        name: path.rsplit('/').next().unwrap_or(path).to_string(),
        qualified_name: path.to_string(),
        parent: None,
        signature: None,
        docstring: None,
        start_line: 1,
        end_line: lines,
        start_byte: 0,
        end_byte: src.len() as u32,
    }
}

struct Scope {
    /// tree-sitter id of the node that opened the scope (closed when the walk leaves it).
    ts_id: usize,
    /// The stored definition, or the nearest stored ancestor for a naming-only scope.
    def: usize,
    kind: NodeKind,
    qualified_name: String,
}

struct Walker<'a, 'c, 't> {
    lang: &'static Language,
    cx: &'a Cx<'c>,
    out: &'a mut FileExtract,
    scopes: Vec<Scope>,
    /// At each depth of the walk, the nodes passed so far under the current ancestor at the
    /// depth above: the siblings before each node on the path to the current one, nearest
    /// last. tree-sitter finds a previous sibling by scanning its parent's children from the
    /// first, which made a file's leading comments quadratic in its top-level definitions.
    passed: Vec<Vec<Node<'t>>>,
    /// Length of the file itself (the parsed text may carry one extra newline).
    file_len: usize,
    deadline: Instant,
}

impl<'t> Walker<'_, '_, 't> {
    /// Walks the tree; false when the file's time budget ran out first.
    fn walk(&mut self, root: Node<'t>) -> bool {
        let module = self.lang.rules.module_name(self.cx.path, root, self.cx);
        self.out.module = module.clone();
        self.scopes.push(Scope {
            ts_id: root.id(),
            def: 0,
            kind: NodeKind::File,
            qualified_name: module,
        });
        // Iterative pre-order walk: deeply nested input cannot overflow the stack.
        let mut cursor = root.walk();
        let mut visited = 0u32;
        let mut depth = 0u32;
        self.passed.push(Vec::new());
        'outer: loop {
            let node = cursor.node();
            self.passed[depth as usize].push(node);
            if node.is_named() && node.id() != root.id() {
                self.visit(node);
                visited += 1;
                if visited.is_multiple_of(4096) && Instant::now() > self.deadline {
                    return false;
                }
            }
            // Depth is counted here: the cursor's own `depth()` walks its whole stack.
            if depth < MAX_VISIT_DEPTH && cursor.goto_first_child() {
                depth += 1;
                if self.passed.len() == depth as usize {
                    self.passed.push(Vec::new());
                }
                continue;
            }
            loop {
                let leaving = cursor.node().id();
                if self.scopes.len() > 1 && self.scopes.last().map(|s| s.ts_id) == Some(leaving) {
                    self.scopes.pop();
                }
                if cursor.goto_next_sibling() {
                    continue 'outer;
                }
                if !cursor.goto_parent() {
                    break 'outer;
                }
                // Left behind: only the levels on the path to the current node hold nodes.
                self.passed[depth as usize].clear();
                depth -= 1;
            }
        }
        true
    }

    fn visit(&mut self, node: Node<'t>) {
        let rules = self.lang.rules;
        let enclosing = self.scopes.last().expect("file scope").kind;
        // Error recovery inserts zero-width (missing) names, whose text is empty: there is
        // nothing to store or resolve under them.
        if let Some(def) = rules
            .definition(node, enclosing, self.cx)
            .filter(|d| !d.name.trim().is_empty())
        {
            self.open_definition(node, def);
        }
        let before = self.out.refs.len();
        rules.references(node, self.cx, &mut self.out.refs);
        let owner = self.scopes.last().expect("file scope").def;
        let mut kept = before;
        for i in before..self.out.refs.len() {
            // An import's name may be empty (the whole module); every other site needs one.
            if self.out.refs[i].name.is_empty() && self.out.refs[i].kind != RefKind::Import {
                continue;
            }
            self.out.refs.swap(kept, i);
            self.out.refs[kept].node = owner;
            kept += 1;
        }
        self.out.refs.truncate(kept);
    }

    fn open_definition(&mut self, node: Node<'t>, def: crate::lang::Def<'t>) {
        let parent = self.scopes.last().expect("file scope");
        let mut kind = def.kind;
        if kind == NodeKind::Function && (parent.kind.is_type_like() || def.scope.is_some()) {
            kind = NodeKind::Method;
        }
        let name = truncate_chars(&def.name, MAX_NAME_CHARS);
        let mut qualified_name = parent.qualified_name.clone();
        for part in def.scope.iter().chain([&name]) {
            if !qualified_name.is_empty() {
                qualified_name.push('.');
            }
            qualified_name.push_str(&truncate_chars(part, MAX_NAME_CHARS));
        }
        let qualified_name = truncate_chars(&qualified_name, MAX_QUALIFIED_CHARS);
        let parent_def = parent.def;
        if def.scope_only {
            self.scopes.push(Scope {
                ts_id: node.id(),
                def: parent_def,
                kind: def.kind,
                qualified_name,
            });
            return;
        }
        if self.out.nodes.len() >= MAX_NODES_PER_FILE {
            return;
        }
        let outer = def.outer;
        let anchor = self.first_attached(outer);
        let signature = Some(self.signature(anchor.start_byte(), outer, def.body));
        let docstring = def
            .docstring
            .or_else(|| self.leading_comment(anchor))
            .map(|d| truncate_chars(&d, MAX_DOC_CHARS));
        let idx = self.out.nodes.len();
        self.out.nodes.push(ExtractedNode {
            kind,
            name,
            qualified_name: qualified_name.clone(),
            parent: Some(parent_def),
            signature,
            docstring,
            start_line: def.name_node.start_position().row as u32 + 1,
            end_line: end_line(outer),
            start_byte: anchor.start_byte() as u32,
            end_byte: outer.end_byte().min(self.file_len) as u32,
        });
        self.scopes.push(Scope {
            ts_id: node.id(),
            def: idx,
            kind,
            qualified_name,
        });
    }

    /// The first of the siblings directly before a definition that belong to it
    /// (`#[derive] struct S`), or the definition itself.
    fn first_attached(&self, outer: Node<'t>) -> Node<'t> {
        let kinds = self.lang.rules.attached_prefix_kinds();
        self.earlier_siblings(outer)
            .filter(|n| n.is_named())
            .take_while(|n| kinds.contains(&n.kind_str()))
            .last()
            .unwrap_or(outer)
    }

    /// The siblings before `node`, nearest first: from what the walk passed when `node` is
    /// on its path (or a sibling shortly before it), else from tree-sitter.
    fn earlier_siblings(&self, node: Node<'t>) -> EarlierSiblings<'_, 't> {
        /// How far back a level is searched for `node`: further than any attribute run.
        const NEAR: usize = 64;
        for level in self.passed.iter().rev() {
            let near = &level[level.len().saturating_sub(NEAR)..];
            if let Some(i) = near.iter().rposition(|n| n.id() == node.id()) {
                let before = level.len() - near.len() + i;
                return EarlierSiblings::Passed(level[..before].iter());
            }
        }
        EarlierSiblings::Scanned(node.prev_sibling())
    }

    /// The declaration without its body, whitespace collapsed; attribute and decorator
    /// lines stay on lines of their own.
    fn signature(&self, start: usize, outer: Node, body: Option<Node>) -> String {
        let end = body
            .filter(|b| b.start_byte() >= start)
            .map_or(outer.end_byte(), |b| b.start_byte());
        let text = &self.cx.src[start..end.max(start)];
        let text = std::str::from_utf8(text).unwrap_or("");
        let mut lines: Vec<String> = Vec::new();
        let mut current = String::new();
        for line in text.lines() {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(t);
            if t.starts_with('@') || t.starts_with("#[") || (t.starts_with('[') && t.ends_with(']'))
            {
                lines.push(std::mem::take(&mut current));
            }
        }
        if !current.is_empty() {
            lines.push(current);
        }
        let joined = lines
            .iter()
            .map(|l| compact(l, MAX_SIGNATURE_CHARS))
            .collect::<Vec<_>>()
            .join("\n");
        let trimmed = joined.trim_end_matches(['{', ' ']).trim_end();
        trimmed.to_string()
    }

    /// Contiguous comments directly above a definition, markers stripped.
    fn leading_comment(&self, anchor: Node<'t>) -> Option<String> {
        let mut comments = Vec::new();
        let mut next_row = anchor.start_position().row;
        let mut earlier = self.earlier_siblings(anchor).peekable();
        while let Some(prev) = earlier.next() {
            if !prev.kind_str().contains("comment") || last_row(prev) + 1 < next_row {
                break;
            }
            // A shebang is no doc; inner docs (`//!`, `/*!`) document the enclosing module.
            let text = self.cx.text(prev);
            if text.starts_with("#!") || text.starts_with("//!") || text.starts_with("/*!") {
                break;
            }
            // A trailing comment on the previous code line belongs to that line.
            if earlier
                .peek()
                .is_some_and(|p| last_row(*p) == prev.start_position().row)
            {
                break;
            }
            comments.push(self.cx.text(prev));
            next_row = prev.start_position().row;
        }
        if comments.is_empty() {
            return None;
        }
        comments.reverse();
        let text = comments
            .iter()
            .flat_map(|c| c.lines())
            .map(strip_comment_markers)
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }
}

/// `Walker::earlier_siblings`.
enum EarlierSiblings<'a, 't> {
    Passed(std::slice::Iter<'a, Node<'t>>),
    Scanned(Option<Node<'t>>),
}

impl<'t> Iterator for EarlierSiblings<'_, 't> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        match self {
            EarlierSiblings::Passed(before) => before.next_back().copied(),
            EarlierSiblings::Scanned(next) => {
                let node = (*next)?;
                *next = node.prev_sibling();
                Some(node)
            }
        }
    }
}

fn end_line(node: Node) -> u32 {
    last_row(node) as u32 + 1
}

/// 0-based row of a node's last character: some grammars end a node (a Rust line comment,
/// a C `#include`) at column 0 of the next row, after its newline.
fn last_row(node: Node) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

fn strip_comment_markers(line: &str) -> &str {
    // The closing marker first, so a lone `*/` line is not read as a `*` prefix.
    let t = line.trim().trim_end_matches("*/").trim_end();
    for prefix in [
        "///", "//!", "//", "/**", "/*", "#", "--[[", "---", "--", ";", "*",
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            return rest.trim_end_matches("]]").trim();
        }
    }
    t
}

fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exhausted_parse_budget_abandons_the_parse_and_the_parser_recovers() {
        let python = crate::lang::by_name("python").unwrap();
        let mut parser = Parser::new();
        parser.set_language(&python.grammar()).unwrap();
        let src = "def f(x):\n    return [y for y in x if y]\n".repeat(5000);
        assert!(parse_with_deadline(&mut parser, &src, Instant::now()).is_none());
        let later = Instant::now() + Duration::from_secs(5);
        let tree = parse_with_deadline(&mut parser, "def g(): pass\n", later);
        let tree = tree.unwrap();
        assert_eq!(
            tree.root_node()
                .to_sexp()
                .matches("function_definition")
                .count(),
            1
        );
    }

    #[test]
    fn missing_names_define_and_reference_nothing() {
        // Error recovery's zero-width names: a Lua function without one, a Bash command
        // without one, a C++ reference to nothing.
        for (path, src) in [
            ("a.lua", "d\nd\nfunction()end\n"),
            ("a.sh", "()\n"),
            ("a.cpp", "l[&=class\n"),
        ] {
            let x = extract(crate::lang::for_path(path).unwrap(), path, src);
            assert!(
                x.nodes[1..].iter().all(|n| !n.name.is_empty()),
                "{path}: {:?}",
                x.nodes
            );
            assert!(
                x.refs
                    .iter()
                    .all(|r| !r.name.is_empty() || r.kind == RefKind::Import),
                "{path}: {:?}",
                x.refs
            );
        }
    }

    #[test]
    fn long_names_are_capped_before_members_repeat_them() {
        let name = "N".repeat(100_000);
        let src = format!("class {name}:\n{}", "    def m(self): pass\n".repeat(1000));
        let python = crate::lang::by_name("python").unwrap();
        let x = extract(python, "a.py", &src);
        assert_eq!(x.nodes.len(), 1002);
        let class = &x.nodes[1];
        assert_eq!(class.name.chars().count(), MAX_NAME_CHARS + 1);
        assert!(class.name.ends_with('…'));
        let method = &x.nodes[2];
        assert_eq!(method.qualified_name, format!("a.{}.m", class.name));
        let stored: usize = x.nodes.iter().map(|n| n.qualified_name.len()).sum();
        assert!(stored < 2 * src.len(), "{stored} bytes of qualified names");
        let deep: String = (0..200)
            .map(|i| format!("{}class {}:\n", " ".repeat(i), "C".repeat(150)))
            .collect::<String>()
            + &" ".repeat(200)
            + "pass\n";
        let x = extract(python, "b.py", &deep);
        let longest = x
            .nodes
            .iter()
            .map(|n| n.qualified_name.chars().count())
            .max();
        assert_eq!(longest, Some(MAX_QUALIFIED_CHARS + 1));
    }
}
