//! Language support: which grammar parses a file, and per language the rules that say which
//! syntax nodes are definitions and which are references. The traversal itself is shared
//! (`crate::lang::extract`); a language only answers questions about single nodes.

use crate::model::{NodeKind, RawRef, RefKind};
use std::borrow::Cow;
use std::cell::{RefCell, RefMut};
use tree_sitter::Node;

pub(crate) use node::NodeExt;

mod bash;
mod c_family;
mod csharp;
mod elixir;
pub mod extract;
mod go;
mod java;
mod javascript;
mod kotlin;
mod lua;
mod node;
mod php;
mod python;
mod ruby;
mod rust;
mod scala;
mod swift;

/// A supported language: its name, file extensions, grammar and extraction rules.
pub struct Language {
    pub name: &'static str,
    pub extensions: &'static [&'static str],
    grammar: tree_sitter_language::LanguageFn,
    pub rules: &'static (dyn Rules + Sync),
}

impl Language {
    pub fn grammar(&self) -> tree_sitter::Language {
        tree_sitter::Language::new(self.grammar)
    }
}

/// Every language compiled into the binary.
pub static LANGUAGES: &[Language] = &[
    Language {
        name: "python",
        extensions: &["py", "pyi"],
        grammar: tree_sitter_python::LANGUAGE,
        rules: &python::Python,
    },
    Language {
        name: "typescript",
        extensions: &["ts", "mts", "cts"],
        grammar: tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
        rules: &javascript::JavaScript,
    },
    Language {
        name: "tsx",
        extensions: &["tsx"],
        grammar: tree_sitter_typescript::LANGUAGE_TSX,
        rules: &javascript::JavaScript,
    },
    Language {
        name: "javascript",
        extensions: &["js", "jsx", "mjs", "cjs"],
        grammar: tree_sitter_javascript::LANGUAGE,
        rules: &javascript::JavaScript,
    },
    Language {
        name: "go",
        extensions: &["go"],
        grammar: tree_sitter_go::LANGUAGE,
        rules: &go::Go,
    },
    Language {
        name: "rust",
        extensions: &["rs"],
        grammar: tree_sitter_rust::LANGUAGE,
        rules: &rust::Rust,
    },
    Language {
        name: "java",
        extensions: &["java"],
        grammar: tree_sitter_java::LANGUAGE,
        rules: &java::Java,
    },
    Language {
        name: "c",
        extensions: &["c", "h"],
        grammar: tree_sitter_c::LANGUAGE,
        rules: &c_family::CFamily,
    },
    Language {
        name: "cpp",
        extensions: &["cpp", "cc", "cxx", "c++", "hpp", "hxx", "hh", "h++", "ipp"],
        grammar: tree_sitter_cpp::LANGUAGE,
        rules: &c_family::CFamily,
    },
    Language {
        name: "csharp",
        extensions: &["cs"],
        grammar: tree_sitter_c_sharp::LANGUAGE,
        rules: &csharp::CSharp,
    },
    Language {
        name: "ruby",
        extensions: &["rb", "rake", "gemspec"],
        grammar: tree_sitter_ruby::LANGUAGE,
        rules: &ruby::Ruby,
    },
    Language {
        name: "php",
        extensions: &["php", "phtml"],
        grammar: tree_sitter_php::LANGUAGE_PHP,
        rules: &php::Php,
    },
    Language {
        name: "kotlin",
        extensions: &["kt", "kts"],
        grammar: tree_sitter_kotlin_ng::LANGUAGE,
        rules: &kotlin::Kotlin,
    },
    Language {
        name: "swift",
        extensions: &["swift"],
        grammar: tree_sitter_swift::LANGUAGE,
        rules: &swift::Swift,
    },
    Language {
        name: "scala",
        extensions: &["scala", "sc"],
        grammar: tree_sitter_scala::LANGUAGE,
        rules: &scala::Scala,
    },
    Language {
        name: "lua",
        extensions: &["lua"],
        grammar: tree_sitter_lua::LANGUAGE,
        rules: &lua::Lua,
    },
    Language {
        name: "elixir",
        extensions: &["ex", "exs"],
        grammar: tree_sitter_elixir::LANGUAGE,
        rules: &elixir::Elixir,
    },
    Language {
        name: "bash",
        extensions: &["sh", "bash"],
        grammar: tree_sitter_bash::LANGUAGE,
        rules: &bash::Bash,
    },
];

/// The language of a repository-relative path, chosen by extension.
pub fn for_path(path: &str) -> Option<&'static Language> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = file.rsplit_once('.')?;
    LANGUAGES
        .iter()
        .find(|l| l.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
}

/// A language by its name (`python`, `tsx`, ...).
pub fn by_name(name: &str) -> Option<&'static Language> {
    LANGUAGES.iter().find(|l| l.name == name)
}

/// A definition recognized at one syntax node.
pub struct Def<'t> {
    pub kind: NodeKind,
    pub name: String,
    /// The node whose line is reported as the definition's line (usually the name).
    pub name_node: Node<'t>,
    /// The whole definition, decorators and annotations included.
    pub outer: Node<'t>,
    /// Where the signature stops; `None` means the signature is the whole (capped) text.
    pub body: Option<Node<'t>>,
    /// Extra qualifier between the enclosing scope and the name: a Go receiver type,
    /// a C++ `Class::` prefix, the type of a Rust `impl` block.
    pub scope: Option<String>,
    /// A docstring found inside the definition (Python); otherwise leading comments are used.
    pub docstring: Option<String>,
    /// The node only names a scope for its children and is not itself stored (Rust `impl`).
    pub scope_only: bool,
}

impl<'t> Def<'t> {
    /// The usual case: `outer` is the node, named by `name_node`, signature up to `body`.
    pub fn new(kind: NodeKind, name: String, name_node: Node<'t>, outer: Node<'t>) -> Self {
        Def {
            kind,
            name,
            name_node,
            outer,
            body: None,
            scope: None,
            docstring: None,
            scope_only: false,
        }
    }

    pub fn body(mut self, body: Option<Node<'t>>) -> Self {
        self.body = body;
        self
    }

    pub fn scope(mut self, scope: Option<String>) -> Self {
        self.scope = scope;
        self
    }

    pub fn docstring(mut self, doc: Option<String>) -> Self {
        self.docstring = doc;
        self
    }
}

/// The file being extracted, handed to the rules: its text, read-only, and what the rules
/// remember between its nodes.
pub struct Cx<'a> {
    pub src: &'a [u8],
    /// The same text as `src`.
    pub source: &'a str,
    pub path: &'a str,
    /// Made by `Rules::file_state` when the walk of this file starts and dropped with it:
    /// nothing of one file's walk reaches the next, not even a node id (a new tree may
    /// reuse a freed one's addresses).
    pub(crate) state: RefCell<FileState>,
}

/// What a language's rules remember between the nodes of one file's walk. The rules
/// themselves are shared, stateless values; a language that needs memory has a variant.
pub enum FileState {
    /// The language's rules look at each node on its own.
    None,
    Python(python::State),
    CFamily(c_family::State),
    Java(java::State),
    Bash(bash::State),
}

/// The state of one language's walk, out of a `Cx`: each language's rules open it with
/// the variant their `Rules::file_state` makes.
fn state_of<'c, S>(
    cx: &'c Cx,
    variant: impl FnOnce(&mut FileState) -> Option<&mut S>,
) -> RefMut<'c, S> {
    RefMut::map(cx.state.borrow_mut(), |s| {
        variant(s).expect("the file's state made by the same rules")
    })
}

impl<'a> Cx<'a> {
    /// The source text of a node (sources are valid UTF-8 by the time they are parsed).
    pub fn text(&self, node: Node) -> &'a str {
        // Slicing the validated source checks only the two boundaries, where `utf8_text`
        // would re-validate every byte of the node.
        self.source
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    /// The text of a node's field, if present.
    pub fn field(&self, node: Node, field: &str) -> Option<&'a str> {
        node.child_by_field(field).map(|n| self.text(n))
    }

    /// A reference of `kind` to `name` at `at`, attached by the engine to the enclosing definition.
    pub fn reference(&self, kind: RefKind, name: &str, at: Node) -> RawRef {
        RawRef {
            node: 0,
            kind,
            name: compact(name, MAX_REF_CHARS),
            module: None,
            alias: None,
            line: line_of(at),
        }
    }

    /// A parameter, local (`RefKind::Local`) or field (`RefKind::Field`) named `name`, with
    /// its type as written if known (`callee()` for the result of a call).
    pub fn binding(&self, kind: RefKind, name: &str, type_text: Option<&str>, at: Node) -> RawRef {
        RawRef {
            node: 0,
            kind,
            name: compact(name, MAX_REF_CHARS),
            module: type_text.map(|t| compact(t, MAX_REF_CHARS)),
            alias: None,
            line: line_of(at),
        }
    }

    /// An import of `name` (or the whole module when `name` is empty) from `module`.
    pub fn import(&self, module: &str, name: &str, alias: Option<&str>, at: Node) -> RawRef {
        RawRef {
            node: 0,
            kind: RefKind::Import,
            name: compact(name, MAX_REF_CHARS),
            module: Some(compact(module, MAX_REF_CHARS)),
            alias: alias.map(|a| compact(a, MAX_REF_CHARS)),
            line: line_of(at),
        }
    }
}

const MAX_REF_CHARS: usize = 200;

/// How deep a rule's helper follows a pattern, type or expression into itself. Real code
/// nests a few levels; hostile input nests thousands, which would exhaust a worker's stack
/// and, asked again at every enclosing node, cost time quadratic in the depth.
pub const MAX_NESTING: u32 = 32;

/// 1-based line of a node's start.
pub fn line_of(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// Collapses whitespace runs to one space and caps the length (on a char boundary).
pub fn compact(text: &str, max_chars: usize) -> String {
    // Most texts (a callee, a base) are short and printable ASCII: nothing to change.
    if text.len() <= max_chars && text.bytes().all(|b| b.is_ascii_graphic()) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len().min(max_chars + 4));
    let mut pending_space = false;
    let mut count = 0;
    for ch in text.chars() {
        if ch.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        // The space owed before this character counts too.
        if count + usize::from(pending_space) >= max_chars {
            out.push('…');
            break;
        }
        if pending_space {
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        out.push(ch);
        count += 1;
    }
    out
}

/// The contents of a string literal without quotes or prefixes (`r"x"`, `'''x'''`, `"x"`).
pub fn unquote(text: &str) -> &str {
    let t = text.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '@' || c == '$');
    for q in ["\"\"\"", "'''", "\"", "'", "`"] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    t
}

/// Removes the indentation all non-blank lines share, and trailing blanks of every line.
pub fn dedent(raw: &str) -> String {
    let indent = raw
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    raw.lines()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module prefix from a path: strip the extension, drop `strip_prefixes` leading folders and
/// `index_names` final components (`__init__`, `mod`, `index`), join with dots.
pub fn dotted_module(path: &str, strip_prefixes: &[&str], index_names: &[&str]) -> String {
    let mut p = path;
    for prefix in strip_prefixes {
        if let Some(rest) = p.strip_prefix(prefix) {
            if rest.contains('/') || rest.contains('.') {
                p = rest;
                break;
            }
        }
    }
    let p = match p.rsplit_once('/') {
        Some((dir, file)) => (Some(dir), file),
        None => (None, p),
    };
    let stem = p.1.split_once('.').map_or(p.1, |(s, _)| s);
    let mut parts: Vec<&str> = p.0.map(|d| d.split('/').collect()).unwrap_or_default();
    if !index_names.contains(&stem) || parts.is_empty() {
        parts.push(stem);
    }
    parts.join(".")
}

/// A callee written as a chain of names and calls, with the calls' arguments dropped:
/// `s.conn(addr).peer` -> `s.conn().peer`, `Builder::new(x)?.build` -> `Builder::new()?.build`.
/// `None` for anything else (operators, literals, closures), or when longer than `max`.
pub fn call_chain(text: &str, max: usize) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'(' | b'[' => {
                let close = if c == b'(' { b')' } else { b']' };
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match b.get(j)? {
                        x if *x == c => depth += 1,
                        x if *x == close => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                out.push(c as char);
                out.push(close as char);
                i = j + 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'.' | b':' | b'?' | b'_' | b'<' | b'>' | b',' => {
                out.push(c as char);
                i += 1;
            }
            c if c.is_ascii_alphanumeric() => {
                out.push(c as char);
                i += 1;
            }
            _ => return None,
        }
        if out.len() > max {
            return None;
        }
    }
    (!out.is_empty() && !out.starts_with('(')).then_some(out)
}

/// What a language tells the shared traversal about single syntax nodes.
pub trait Rules {
    /// If `node` defines something, describe it. `enclosing` is the kind of the innermost
    /// enclosing definition (`File` at top level).
    fn definition<'t>(&self, node: Node<'t>, enclosing: NodeKind, cx: &Cx) -> Option<Def<'t>>;

    /// Reference sites found at `node` itself (its children are visited separately).
    fn references(&self, node: Node, cx: &Cx, out: &mut Vec<RawRef>);

    /// The qualified-name prefix for everything defined in this file.
    fn module_name(&self, path: &str, root: Node, cx: &Cx) -> String;

    /// Whether the file's own documentation declares it deprecated as a whole (Go's package
    /// comment with a `Deprecated:` paragraph, Java's `@Deprecated` top-level type): code its
    /// authors have replaced, which a query about behaviour is rarely answered by.
    fn deprecated(&self, _root: Node, _cx: &Cx) -> bool {
        false
    }

    /// A new file's state, for the rules that remember something between its nodes (the
    /// walk makes one per file, before asking anything else about it).
    fn file_state(&self, _path: &str) -> FileState {
        FileState::None
    }

    /// Sibling kinds directly before a definition that belong to it (Rust `#[attr]`).
    fn attached_prefix_kinds(&self) -> &'static [&'static str] {
        &[]
    }

    /// The text the grammar parses: `src` itself, or a copy of the same length, byte for
    /// byte, where the grammar's C code cannot take some characters safely. Nodes' byte
    /// ranges are the same in both; everything else reads `src`.
    fn parser_input<'s>(&self, src: &'s str) -> Cow<'s, str> {
        Cow::Borrowed(src)
    }
}

/// Helpers for the rules' regression tests on hostile input.
#[cfg(test)]
pub(crate) mod testing {
    use crate::model::{FileExtract, RefKind};

    /// Extracts `src` as `path` the way the indexer does: on a thread with Rust's default
    /// stack of 2 MiB, which its extraction workers have.
    pub(crate) fn extract_on_worker(path: &str, src: String) -> FileExtract {
        let path = path.to_string();
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let lang = super::for_path(&path).expect("language of the path");
                crate::lang::extract::extract(lang, &path, &src)
            })
            .expect("spawn")
            .join()
            .expect("extraction")
    }

    /// `open` `n` times, `inner`, then `close` `n` times.
    pub(crate) fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    }

    /// The names of the references of one kind, in order.
    pub(crate) fn names(x: &FileExtract, kind: RefKind) -> Vec<&str> {
        x.refs
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.name.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn compact_keeps_at_most_max_chars_before_the_ellipsis() {
        assert_eq!(compact("a  b\n c", 10), "a b c");
        assert_eq!(compact("self.run", 8), "self.run");
        assert_eq!(compact("self.run", 7), "self.ru…");
        assert_eq!(compact("abcd", 3), "abc…");
        // A space owed before the last character used to make it one too many.
        assert_eq!(compact("ab cd", 3), "ab…");
        assert_eq!(compact("ab c", 4), "ab c");
        for text in ["x y ".repeat(100), "xy ".repeat(100), " z".repeat(100)] {
            let out = compact(&text, 7);
            assert!(out.trim_end_matches('…').chars().count() <= 7, "{out:?}");
        }
    }
}
