//! Hostile input for every language, as a bounded smoke test: random bytes, mutated and
//! truncated realistic code, constructs nested 10,000 deep, and 50 MB single-line files go
//! through the same steps as a file the indexer reads (invalid UTF-8 replaced, secrets
//! redacted, extracted on a thread with the indexer's worker stack), and through `index::run`
//! so resolution and the SQLite writer see them too. Every case checks invariants of what
//! came out, not only that something came out.
//!
//! Unit tests of the indexing stage rather than integration tests: each extraction is judged
//! against the extractor's time budget and against tree-sitter's own parse time of the text
//! its grammar is given (Bash's is masked), its text is redacted as the indexer does, and
//! each index run is checked against the walk's classification of content; the public API
//! shows none of these. `cargo test --lib hostile_input` runs them.
//!
//! `HOSTILE_ITERATIONS=N` sets the random and mutated cases per language (long runs);
//! `HOSTILE_HEAVY=1` adds 50 MB files of millions of statements or operands (some 10 GB of
//! memory each, for tree-sitter's syntax tree); `HOSTILE_SEED=S` changes the inputs. A
//! failing case names its seed, and its input is saved under the system's temporary folder
//! (`codebase-indexer-hostile-input/failures/`); a case that kills the process (a crash in a
//! grammar's C code, a stack overflow) is named by its thread in the abort message and
//! leaves its input in `codebase-indexer-hostile-input/last/<language>`.

mod deep;
mod seeds;

use super::redact::redact;
use super::walk::{classify_content, ContentClass};
use super::{IndexSummary, RunOptions, DEFAULT_MAX_FILE_BYTES};
use crate::lang::extract::{extract, file_budget, parse_with_deadline, MAX_NODES_PER_FILE};
use crate::lang::{self, Language};
use crate::model::{FileExtract, NodeKind, RefKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The stack of the indexer's extraction and resolution threads (spawned with Rust's
/// default): hostile input must not need more.
const WORKER_STACK: usize = 2 << 20;
/// Nesting depth and chain length of the deep cases.
const DEPTH: usize = 10_000;
/// Items in the long flat lists of a short run (a long run has `DEPTH`).
const WIDTH: usize = 2_500;
/// Depth of the cases nested by indentation (Python blocks), whose size grows with the
/// square of the depth: 10,000 levels take 50 MB, kept for long runs.
const INDENT_DEPTH: usize = 1_500;
const INDENT_DEPTH_LONG: usize = DEPTH;
/// Random and mutated cases per language unless `HOSTILE_ITERATIONS` says otherwise.
const DEFAULT_ITERATIONS: u64 = 12;
/// A short run cuts the seed at every fourth byte offset, a long one at every offset.
const TRUNCATION_STRIDE: usize = 4;
/// A short run indexes every fourth deep case (all are extracted), a long one all of them.
const INDEXED_DEEP_STRIDE: usize = 4;
const DEFAULT_SEED: u64 = 0x5eed_1dea_c0de_f00d;
/// Mutants are capped: large inputs are the deep and 50 MB cases' business.
const MAX_MUTANT_BYTES: usize = 64 << 10;
/// Extraction stores names, signatures and references at most this many times the size of
/// the file (plus a constant): anything growing faster than the input is a blow-up.
const MAX_GROWTH: usize = 64;
/// Inputs up to this size are kept on disk while their case runs.
const MAX_KEPT_INPUT: usize = 4 << 20;
/// Size of the single-line files.
const FIFTY_MB: usize = 50 << 20;

struct Subject {
    name: &'static str,
    ext: &'static str,
    seed: &'static str,
}

const SUBJECTS: &[Subject] = &[
    Subject {
        name: "python",
        ext: "py",
        seed: seeds::PYTHON,
    },
    Subject {
        name: "typescript",
        ext: "ts",
        seed: seeds::TYPESCRIPT,
    },
    Subject {
        name: "tsx",
        ext: "tsx",
        seed: seeds::TSX,
    },
    Subject {
        name: "javascript",
        ext: "js",
        seed: seeds::JAVASCRIPT,
    },
    Subject {
        name: "go",
        ext: "go",
        seed: seeds::GO,
    },
    Subject {
        name: "rust",
        ext: "rs",
        seed: seeds::RUST,
    },
    Subject {
        name: "java",
        ext: "java",
        seed: seeds::JAVA,
    },
    Subject {
        name: "c",
        ext: "c",
        seed: seeds::C,
    },
    Subject {
        name: "cpp",
        ext: "cpp",
        seed: seeds::CPP,
    },
    Subject {
        name: "csharp",
        ext: "cs",
        seed: seeds::CSHARP,
    },
    Subject {
        name: "ruby",
        ext: "rb",
        seed: seeds::RUBY,
    },
    Subject {
        name: "php",
        ext: "php",
        seed: seeds::PHP,
    },
    Subject {
        name: "kotlin",
        ext: "kt",
        seed: seeds::KOTLIN,
    },
    Subject {
        name: "swift",
        ext: "swift",
        seed: seeds::SWIFT,
    },
    Subject {
        name: "scala",
        ext: "scala",
        seed: seeds::SCALA,
    },
    Subject {
        name: "lua",
        ext: "lua",
        seed: seeds::LUA,
    },
    Subject {
        name: "elixir",
        ext: "ex",
        seed: seeds::ELIXIR,
    },
    Subject {
        name: "bash",
        ext: "sh",
        seed: seeds::BASH,
    },
];

fn subject(name: &str) -> &'static Subject {
    SUBJECTS.iter().find(|s| s.name == name).expect("subject")
}

// ---------------------------------------------------------------------------------------
// Settings and randomness

struct Config {
    seed: u64,
    iterations: u64,
    /// `HOSTILE_ITERATIONS` was given: a long run, with the largest cases.
    long: bool,
}

fn config() -> Config {
    let seed = env_u64("HOSTILE_SEED").unwrap_or(DEFAULT_SEED);
    let iterations = env_u64("HOSTILE_ITERATIONS");
    Config {
        seed,
        iterations: iterations.unwrap_or(DEFAULT_ITERATIONS),
        long: iterations.is_some(),
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let raw = std::env::var(name).ok()?;
    let t = raw.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={raw} is not a number")))
}

/// SplitMix64: tiny, fast, and the same sequence on every platform.
struct Rng(u64);

impl Rng {
    /// The generator of one case, from the run's seed and the case's coordinates, so any
    /// case can be regenerated alone.
    fn for_case(seed: u64, lang: &str, strategy: &str, i: u64) -> Rng {
        let mut h = seed ^ 0x243f_6a88_85a3_08d3;
        for b in lang.bytes().chain([0]).chain(strategy.bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut r = Rng(h ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A length that is usually short and sometimes as long as `max`.
    fn length(&mut self, max: usize) -> usize {
        let cap = *self.pick(&[1, 4, 16, 64, 256, max.max(1)]);
        self.below(cap.min(max.max(1)) + 1)
    }
}

// ---------------------------------------------------------------------------------------
// Input generators

/// Fragments that open or close something in some language, or confuse a lexer.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "\"",
    "'",
    "`",
    "\"\"\"",
    "'''",
    "/*",
    "*/",
    "/**",
    "<!--",
    "-->",
    "#{",
    "${",
    "$(",
    "$((",
    "\\",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "    ",
    "<<EOF\n",
    "\nEOF\n",
    "<<-'X'\n",
    "?>",
    "<?php ",
    "<?= ",
    "end",
    " do",
    "fi",
    "done",
    "esac",
    "@",
    "#",
    "//",
    "--",
    "--[[",
    "]]",
    "[[",
    "[=[",
    ":",
    ";",
    ",",
    "::",
    "->",
    "=>",
    "|>",
    "...",
    "?.",
    "!!",
    "&&",
    "||",
    "r#\"",
    "\"#",
    "b'",
    "'\\",
    "%{",
    "%w(",
    "~r/",
    "@\"",
    "$\"",
    "\u{feff}",
    "\u{202e}",
    "\u{200b}",
    "é",
    "\u{1d11e}",
    "\u{0}",
    "\u{7f}",
    "ﬁ",
    "İ",
    "\u{10ffff}",
];

const WORDS: &[&str] = &[
    "def",
    "class",
    "function",
    "fn",
    "func",
    "fun",
    "impl",
    "struct",
    "interface",
    "enum",
    "trait",
    "protocol",
    "extension",
    "object",
    "record",
    "module",
    "namespace",
    "package",
    "import",
    "from",
    "use",
    "using",
    "require",
    "include",
    "extends",
    "implements",
    "return",
    "if",
    "else",
    "elif",
    "for",
    "while",
    "do",
    "end",
    "begin",
    "then",
    "case",
    "when",
    "match",
    "lambda",
    "async",
    "await",
    "new",
    "this",
    "self",
    "super",
    "var",
    "let",
    "val",
    "const",
    "static",
    "public",
    "private",
    "template",
    "typename",
    "defmodule",
    "defp",
    "local",
    "#include",
    "#define",
    "#if",
    "#endif",
    "@Override",
    "@dataclass",
    "typedef",
    "operator",
    "sizeof",
    "macro_rules!",
    "yield",
    "x",
    "Foo",
    "a.b",
    "a::b",
    "a->b",
    "$x",
    "@x",
    "self.x",
    "f(x)",
    "0x1F",
    "1e9",
    "'c'",
    "\"s\"",
    "=",
    "+",
    "*",
    "%",
    "&",
    "|",
];

/// Random bytes of one of several kinds: any byte, printable text, or a soup of syntax
/// fragments and keywords with the odd invalid byte.
fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    let len = rng.length(8192);
    let mut out = Vec::with_capacity(len + 16);
    let kind = rng.below(4);
    while out.len() < len {
        match kind {
            0 => out.push(rng.next() as u8),
            1 => {
                let b = rng.below(97) as u8;
                out.push(if b == 96 { b'\n' } else { b' ' + b });
            }
            _ => match rng.below(12) {
                0..=4 => out.extend_from_slice(rng.pick(FRAGMENTS).as_bytes()),
                5..=9 => {
                    out.extend_from_slice(rng.pick(WORDS).as_bytes());
                    out.push(*rng.pick(b" \n.(,"));
                }
                10 if kind == 3 => {
                    let bad: &&[u8] = rng.pick(INVALID_UTF8);
                    out.extend_from_slice(bad);
                }
                _ => out.push(*rng.pick(b" \n\t_aZ09")),
            },
        }
    }
    out
}

const INVALID_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xc0\x80",
    b"\x80",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\xed\xa0\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xfe\xfe",
];

/// Start offsets of token-ish pieces: runs of word characters, runs of whitespace, and
/// single other bytes.
fn token_starts(b: &[u8]) -> Vec<usize> {
    let class = |c: u8| {
        if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            0
        } else if c.is_ascii_whitespace() {
            1
        } else {
            2
        }
    };
    let mut starts = vec![0];
    for i in 1..b.len() {
        if class(b[i]) != class(b[i - 1]) || class(b[i]) == 2 {
            starts.push(i);
        }
    }
    starts.push(b.len());
    starts
}

/// A random byte range of `b`, or a range of whole tokens.
fn span(rng: &mut Rng, b: &[u8], tokens: bool) -> (usize, usize) {
    if tokens && b.len() > 1 {
        let starts = token_starts(b);
        let i = rng.below(starts.len());
        let j = (i + rng.length(starts.len())).min(starts.len() - 1);
        return (starts[i], starts[j]);
    }
    let start = rng.below(b.len() + 1);
    let end = (start + rng.length(b.len())).min(b.len());
    (start, end)
}

/// One to eight edits of `seed`: deletions, duplications and swaps of byte or token
/// ranges, pieces spliced from other languages, unbalanced brackets and quotes, invalid
/// UTF-8, repetition, truncation.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        let tokens = rng.below(2) == 0;
        match rng.below(11) {
            0 => {
                let (s, e) = span(rng, &b, tokens);
                b.drain(s..e);
            }
            1 => {
                let (s, e) = span(rng, &b, tokens);
                let piece = b[s..e].to_vec();
                let at = rng.below(b.len() + 1);
                b.splice(at..at, piece);
            }
            2 => {
                let (s1, e1) = span(rng, &b, tokens);
                let (s2, e2) = span(rng, &b, tokens);
                let ((s1, e1), (s2, e2)) = if s1 <= s2 {
                    ((s1, e1), (s2, e2))
                } else {
                    ((s2, e2), (s1, e1))
                };
                if e1 <= s2 {
                    let mut out = b[..s1].to_vec();
                    out.extend_from_slice(&b[s2..e2]);
                    out.extend_from_slice(&b[e1..s2]);
                    out.extend_from_slice(&b[s1..e1]);
                    out.extend_from_slice(&b[e2..]);
                    b = out;
                }
            }
            3 => {
                let other = rng.pick(SUBJECTS).seed.as_bytes();
                let (s, e) = span(rng, other, tokens);
                let at = rng.below(b.len() + 1);
                b.splice(at..at, other[s..e].iter().copied());
            }
            4 | 5 => {
                let at = rng.below(b.len() + 1);
                let f = rng.pick(FRAGMENTS).as_bytes();
                b.splice(at..at, f.iter().copied());
            }
            6 => {
                let at = rng.below(b.len() + 1);
                let bad = rng.pick(INVALID_UTF8);
                b.splice(at..at, bad.iter().copied());
            }
            7 => {
                let (s, e) = span(rng, &b, tokens);
                let piece = b[s..e].to_vec();
                let times = rng.length(200);
                let repeated: Vec<u8> = piece.repeat(times);
                b.splice(e..e, repeated);
            }
            8 => {
                let at = rng.below(b.len() + 1);
                b.truncate(at);
            }
            9 => {
                if !b.is_empty() {
                    let at = rng.below(b.len());
                    b[at] = rng.next() as u8;
                }
            }
            _ => {
                let at = rng.below(b.len() + 1);
                let w = rng.pick(WORDS).as_bytes();
                b.splice(at..at, w.iter().chain(b" ").copied());
            }
        }
        b.truncate(MAX_MUTANT_BYTES);
    }
    b
}

// ---------------------------------------------------------------------------------------
// The pipeline's steps and what must hold after them

/// The text the indexer parses from a file's bytes, as `index` makes it: invalid UTF-8
/// replaced, then secrets redacted. Redaction must keep every line where it was.
fn to_text(bytes: &[u8]) -> String {
    let content = String::from_utf8_lossy(bytes);
    let (clean, found) = redact(&content);
    let lines = newlines(&content);
    assert_eq!(newlines(&clean), lines, "redaction moved lines");
    for r in &found {
        assert!(
            r.line >= 1 && r.line as usize <= lines + 1,
            "redaction line {r:?}"
        );
    }
    clean.into_owned()
}

fn newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

/// What every extraction must satisfy, whatever the input.
/// Returns the bytes of text extracted.
fn check_extract(x: &FileExtract, path: &str, text: &str) -> usize {
    let len = text.len();
    let last_line = newlines(text) as u32 + 1;
    assert!(
        !x.nodes.is_empty() && x.nodes.len() <= MAX_NODES_PER_FILE,
        "node count {}",
        x.nodes.len()
    );
    let file = &x.nodes[0];
    assert_eq!(file.kind, NodeKind::File);
    assert_eq!(file.qualified_name, path);
    assert_eq!(
        (file.parent, file.start_byte, file.end_byte),
        (None, 0, len as u32)
    );
    assert!(
        file.end_line >= 1 && file.end_line <= last_line,
        "file lines {}",
        file.end_line
    );
    if x.timed_out {
        assert!(
            x.nodes.len() == 1 && x.refs.is_empty(),
            "an abandoned file keeps only its file node"
        );
    }
    for (i, n) in x.nodes.iter().enumerate().skip(1) {
        let at = || format!("node {i} {:?} {:?}", n.kind, n.qualified_name);
        assert_ne!(n.kind, NodeKind::File, "{}", at());
        let parent = n.parent.unwrap_or_else(|| panic!("{} has no parent", at()));
        assert!(
            parent < i,
            "{}: parent {parent} is not an earlier node",
            at()
        );
        assert!(
            !n.name.is_empty() && !n.qualified_name.is_empty(),
            "{}: empty name",
            at()
        );
        assert!(
            n.start_byte <= n.end_byte && n.end_byte as usize <= len,
            "{}: bytes {}..{} in a file of {len}",
            at(),
            n.start_byte,
            n.end_byte
        );
        assert!(
            text.is_char_boundary(n.start_byte as usize)
                && text.is_char_boundary(n.end_byte as usize),
            "{}: bytes {}..{} split a character",
            at(),
            n.start_byte,
            n.end_byte
        );
        assert!(
            1 <= n.start_line && n.start_line <= n.end_line && n.end_line <= last_line,
            "{}: lines {}..{} of {last_line}",
            at(),
            n.start_line,
            n.end_line
        );
        if let Some(sig) = &n.signature {
            for line in sig.lines() {
                assert!(
                    line.chars().count() <= 301,
                    "{}: signature line of {} chars",
                    at(),
                    line.chars().count()
                );
            }
        }
        if let Some(doc) = &n.docstring {
            assert!(
                doc.chars().count() <= 4001,
                "{}: docstring of {} chars",
                at(),
                doc.chars().count()
            );
        }
    }
    for (i, r) in x.refs.iter().enumerate() {
        let at = || format!("ref {i} {:?} {:?}", r.kind, r.name);
        assert!(
            r.node < x.nodes.len(),
            "{}: owner {} of {}",
            at(),
            r.node,
            x.nodes.len()
        );
        assert!(
            1 <= r.line && r.line <= last_line,
            "{}: line {} of {last_line}",
            at(),
            r.line
        );
        // A call's module lists its arguments' types (overloads are picked by them): as
        // long as the argument list, which the bound on all extracted text covers.
        let module = r.module.as_ref().filter(|_| r.kind != RefKind::Call);
        for s in [Some(&r.name), module, r.alias.as_ref()]
            .into_iter()
            .flatten()
        {
            assert!(
                s.chars().count() <= 201,
                "{}: {} chars",
                at(),
                s.chars().count()
            );
        }
        if r.kind != RefKind::Import {
            assert!(!r.name.is_empty(), "{}: empty name", at());
        }
    }
    let stored = extracted_bytes(x);
    assert!(
        stored <= MAX_GROWTH * len + (1 << 20),
        "{stored} bytes extracted from {len}: more than linear"
    );
    stored
}

/// Text extraction produced, all of which is stored.
fn extracted_bytes(x: &FileExtract) -> usize {
    let nodes: usize = x
        .nodes
        .iter()
        .map(|n| {
            n.name.len()
                + n.qualified_name.len()
                + n.signature.as_ref().map_or(0, String::len)
                + n.docstring.as_ref().map_or(0, String::len)
        })
        .sum();
    let refs: usize = x
        .refs
        .iter()
        .map(|r| {
            r.name.len()
                + r.module.as_ref().map_or(0, String::len)
                + r.alias.as_ref().map_or(0, String::len)
        })
        .sum();
    nodes + refs
}

/// What a run over a folder of hostile files must satisfy: the summary agrees with the
/// database, the database with direct extraction, and nothing failed inside.
fn check_index(summary: &IndexSummary, db: &Path, files: &[ProjectFile], lang: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let per_file = |sql: &str| -> BTreeMap<String, i64> {
        let mut q = conn.prepare(sql).unwrap();
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let mut expect_skipped: BTreeMap<&str, usize> = BTreeMap::new();
    let mut indexed = 0usize;
    for f in files {
        match classify_content(&f.bytes) {
            ContentClass::Binary => *expect_skipped.entry("binary").or_default() += 1,
            ContentClass::Generated => *expect_skipped.entry("generated").or_default() += 1,
            ContentClass::Text => indexed += 1,
        }
    }
    assert_eq!(summary.skipped, expect_skipped, "skipped files");
    assert_eq!(summary.files, indexed, "files in the summary");
    assert_eq!(summary.extracted, indexed, "files extracted");
    assert_eq!(
        count("SELECT count(*) FROM files") as usize,
        indexed,
        "file rows"
    );
    let langs: BTreeMap<String, usize> = [(lang.to_string(), indexed)]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(summary.languages, langs);
    assert_eq!(
        summary.nodes_by_kind.values().sum::<i64>(),
        count("SELECT count(*) FROM nodes"),
        "node rows"
    );
    // Each file as direct extraction saw it, but where one of the two gave the file up
    // at its time budget (the index run's threads share the cores): a file given up keeps
    // its file node alone.
    let nodes = per_file(
        "SELECT f.path, count(*) FROM nodes n JOIN files f ON f.id = n.file_id GROUP BY f.path",
    );
    let refs = per_file(
        "SELECT f.path, count(*) FROM refs r JOIN nodes n ON n.id = r.node_id \
         JOIN files f ON f.id = n.file_id GROUP BY f.path",
    );
    for f in files.iter().filter(|f| nodes.contains_key(&f.path)) {
        let stored = (nodes[&f.path], refs.get(&f.path).copied().unwrap_or(0));
        if summary.abandoned_parse_files.contains(&f.path) {
            assert_eq!(
                stored,
                (1, 0),
                "{}: given up, yet stored with definitions",
                f.path
            );
            // Only a file slow to extract on its own may be given up in a run.
            assert!(
                f.timed_out || f.took >= file_budget(f.bytes.len()) / 8,
                "{}: given up by the index run, extracted alone in {:?}",
                f.path,
                f.took
            );
        } else if !f.timed_out {
            assert_eq!(
                stored,
                (f.nodes as i64, f.refs as i64),
                "{}: (nodes, references) stored against direct extraction",
                f.path
            );
        }
    }
    assert_eq!(
        summary.resolution.edges as i64,
        count("SELECT count(*) FROM edges WHERE kind <> 'contains'"),
        "edge rows"
    );
    assert_eq!(
        summary.resolution.unresolved as i64,
        count("SELECT count(*) FROM unresolved"),
        "unresolved rows"
    );
    assert_eq!(
        count("SELECT count(*) FROM unresolved WHERE reason = 'error'"),
        0,
        "resolution failed on a file"
    );
    assert_eq!(
        count("SELECT count(*) FROM edges WHERE kind = 'contains'"),
        count("SELECT count(*) FROM nodes WHERE parent_id IS NOT NULL"),
        "one contains edge per child"
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM edges e \
             WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE id = e.source_id) \
             OR NOT EXISTS (SELECT 1 FROM nodes WHERE id = e.target_id)"
        ),
        0,
        "edges between stored nodes"
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM nodes n JOIN nodes p ON p.id = n.parent_id \
             WHERE p.id >= n.id OR p.file_id <> n.file_id"
        ),
        0,
        "parents come first, in the same file"
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM (SELECT qualified_name FROM nodes \
             GROUP BY qualified_name HAVING count(*) > 1)"
        ),
        0,
        "qualified names are unique"
    );
}

// ---------------------------------------------------------------------------------------
// Running cases

/// What one language's run did, printed at its end.
#[derive(Default)]
struct Tally {
    extractions: u64,
    index_runs: u64,
    indexed_files: u64,
    /// Files given up because tree-sitter's own parse was too slow.
    parse_bound: u64,
    slowest: (Duration, String),
    /// The largest ratio of extracted text to input, and where.
    growth: (f64, String),
}

impl Tally {
    fn saw(&mut self, took: Duration, label: &str) {
        self.extractions += 1;
        if took > self.slowest.0 {
            self.slowest = (took, label.to_string());
        }
    }
}

/// Processor time of the calling thread so far (Linux; zero elsewhere), in the kernel's
/// clock ticks.
fn thread_cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return Duration::ZERO;
    };
    // The fields after the command name, which is in parentheses and may hold anything.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime, fields 14 and 15 of the line, at 100 ticks per second.
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    Duration::from_millis(ticks * 10)
}

/// How long tree-sitter alone takes to parse `text` (as its grammar is given it), given up
/// after `limit`.
fn parse_time(lang: &Language, text: &str, limit: Duration) -> Duration {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.grammar()).expect("grammar");
    let started = Instant::now();
    let input = lang.rules.parser_input(text);
    parse_with_deadline(&mut parser, &input, started + limit);
    started.elapsed()
}

/// Where failing and last inputs are kept, and the heavy cases' lock file.
fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join("codebase-indexer-hostile-input")
}

/// Runs `work` on a thread with the indexer's worker stack, named after the case so a
/// stack overflow names it too. A panic, or still running long after the extractor's own
/// time budget for `len` bytes, fails the test with the case and its saved input.
fn run_case<R: Send + 'static>(
    name: &str,
    input: &[u8],
    limit: Duration,
    work: impl FnOnce() -> R + Send + 'static,
) -> R {
    // A crash in C code or a stack overflow ends the process before any report: the
    // input of the case running then is left behind, under its language's name.
    if input.len() <= MAX_KEPT_INPUT {
        let language = name.split('/').next().unwrap_or(name);
        let _ = save_input("last", language, input);
    }
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let r = work();
            let _ = tx.send(());
            r
        })
        .expect("spawn a case thread");
    match rx.recv_timeout(limit) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let saved = save_failure(name, input);
            panic!("{name}: still running after {limit:?} (input saved to {saved})");
        }
    }
    match handle.join() {
        Ok(r) => r,
        Err(e) => {
            let saved = save_failure(name, input);
            eprintln!("{name}: failed; input saved to {saved}");
            std::panic::resume_unwind(e)
        }
    }
}

fn save_failure(name: &str, input: &[u8]) -> String {
    match save_input("failures", name, input) {
        Ok(path) => path,
        Err(e) => format!("nowhere ({e})"),
    }
}

fn save_input(folder: &str, name: &str, input: &[u8]) -> std::io::Result<String> {
    let dir = scratch_dir().join(folder);
    let file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(file);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(&path, input)?;
    Ok(path.display().to_string())
}

/// A file of a hostile project with what direct extraction found in it.
struct ProjectFile {
    path: String,
    bytes: Vec<u8>,
    nodes: usize,
    refs: usize,
    timed_out: bool,
    took: Duration,
}

/// One language's run: every strategy, then the files it made through `index::run`.
struct Fuzz {
    lang: &'static Language,
    subject: &'static Subject,
    cfg: Config,
    tally: Tally,
}

impl Fuzz {
    fn new(name: &str) -> Fuzz {
        let subject = subject(name);
        let lang = lang::by_name(name).expect("language");
        let path = format!("src/seed.{}", subject.ext);
        assert_eq!(
            lang::for_path(&path).map(|l| l.name),
            Some(name),
            "{path} maps to {name}"
        );
        Fuzz {
            lang,
            subject,
            cfg: config(),
            tally: Tally::default(),
        }
    }

    fn case_name(&self, strategy: &str, i: u64) -> String {
        format!(
            "{}/{strategy}/{i} HOSTILE_SEED={:#x}",
            self.lang.name, self.cfg.seed
        )
    }

    /// Extracts `bytes` as the file `path` the way the indexer would, and checks the result
    /// and the time it took. The extractor gives a file up at its time budget: that must
    /// happen on time, and only where tree-sitter's own parse takes much of the budget (a
    /// grammar's error recovery can be slow); running out in the extractor's own rules
    /// means something in them is super-linear.
    fn extract(&mut self, name: &str, path: &str, bytes: Vec<u8>) -> ProjectFile {
        let allowed = file_budget(bytes.len());
        // Processor time, not wall time: other tests share the two cores.
        let overdue = allowed * 2 + Duration::from_secs(1);
        let (mut attempt, mut cpu) = self.extract_once(name, path, &bytes);
        if attempt.timed_out || cpu > overdue {
            // Once more before judging: a first run pays for cold caches.
            (attempt, cpu) = self.extract_once(name, path, &bytes);
            assert!(
                cpu <= overdue,
                "{name}: extraction took {cpu:?} of processor time, far past its budget of {allowed:?}"
            );
            if attempt.timed_out {
                let parse = parse_time(self.lang, &to_text(&bytes), allowed);
                assert!(
                    parse >= allowed / 3,
                    "{name}: ran out of its budget of {allowed:?} though parsing alone takes {parse:?}"
                );
                self.tally.parse_bound += 1;
            }
        }
        self.tally.saw(attempt.took, name);
        attempt
    }

    /// One extraction, and the processor time it took.
    fn extract_once(&mut self, name: &str, path: &str, bytes: &[u8]) -> (ProjectFile, Duration) {
        let lang = self.lang;
        let limit = file_budget(bytes.len()) * 4 + Duration::from_secs(30);
        let owned_path = path.to_string();
        let input = bytes.to_vec();
        let (nodes, refs, timed_out, took, cpu, growth) = run_case(name, bytes, limit, move || {
            let text = to_text(&input);
            let (started, cpu_before) = (Instant::now(), thread_cpu_time());
            let x = extract(lang, &owned_path, &text);
            let (took, cpu) = (
                started.elapsed(),
                thread_cpu_time().saturating_sub(cpu_before),
            );
            let stored = check_extract(&x, &owned_path, &text);
            let growth = stored as f64 / text.len().max(1024) as f64;
            (x.nodes.len(), x.refs.len(), x.timed_out, took, cpu, growth)
        });
        if growth > self.tally.growth.0 {
            self.tally.growth = (growth, name.to_string());
        }
        let file = ProjectFile {
            path: path.to_string(),
            bytes: bytes.to_vec(),
            nodes,
            refs,
            timed_out,
            took,
        };
        (file, cpu)
    }

    fn path(&self, stem: &str) -> String {
        format!("src/{stem}.{}", self.subject.ext)
    }

    fn random(&mut self, i: u64) -> ProjectFile {
        let mut rng = Rng::for_case(self.cfg.seed, self.lang.name, "random", i);
        let bytes = random_bytes(&mut rng);
        let (name, path) = (
            self.case_name("random", i),
            self.path(&format!("random_{i}")),
        );
        self.extract(&name, &path, bytes)
    }

    fn mutant(&mut self, i: u64) -> ProjectFile {
        let mut rng = Rng::for_case(self.cfg.seed, self.lang.name, "mutate", i);
        let bytes = mutate(&mut rng, self.subject.seed.as_bytes());
        let (name, path) = (
            self.case_name("mutate", i),
            self.path(&format!("mutant_{i}")),
        );
        self.extract(&name, &path, bytes)
    }

    /// The seed cut at every byte offset, character boundaries or not.
    fn truncations(&mut self) {
        let seed = self.subject.seed.as_bytes();
        let path = self.path("truncated");
        let stride = if self.cfg.long { 1 } else { TRUNCATION_STRIDE };
        for cut in (0..=seed.len()).step_by(stride) {
            let name = self.case_name("truncate", cut as u64);
            self.extract(&name, &path, seed[..cut].to_vec());
        }
    }

    /// Every deep case; none may run out of the extractor's time budget.
    fn deep(&mut self) -> Vec<ProjectFile> {
        let indent = if self.cfg.long {
            INDENT_DEPTH_LONG
        } else {
            INDENT_DEPTH
        };
        let mut out = Vec::new();
        let cases = deep::cases(self.lang.name, DEPTH, indent);
        let width = if self.cfg.long { DEPTH } else { WIDTH };
        let wide = deep::wide(self.lang.name, width);
        for (k, (label, text)) in cases.into_iter().chain(wide).enumerate() {
            let name = format!("{}/deep/{label}", self.lang.name);
            let path = self.path(&format!("deep_{k}"));
            out.push(self.extract(&name, &path, text.into_bytes()));
        }
        out
    }

    /// Indexes `files` as a fresh project from a thread with the worker stack (the binary's
    /// main thread has more) and checks the run against the database.
    fn index(&mut self, files: Vec<ProjectFile>, max_file_bytes: u64) -> (IndexSummary, Duration) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        for f in &files {
            write(&root, &f.path, &f.bytes);
        }
        let db = dir.path().join("index.db");
        let total: usize = files.iter().map(|f| f.bytes.len()).sum();
        let name = format!(
            "{}/index/{} HOSTILE_SEED={:#x}",
            self.lang.name, self.tally.index_runs, self.cfg.seed
        );
        let limit = file_budget(total) * 4 + Duration::from_secs(120);
        let started = Instant::now();
        let (r, d) = (root.clone(), db.clone());
        let summary = run_case(&name, &[], limit, move || {
            super::run(&run_options(&r, &d, max_file_bytes)).expect("index run")
        });
        let took = started.elapsed();
        check_index(&summary, &db, &files, self.lang.name);
        self.tally.index_runs += 1;
        self.tally.indexed_files += files.len() as u64;
        (summary, took)
    }

    fn report(&self, started: Instant) {
        let t = &self.tally;
        println!(
            "{}: {} extractions ({} given up in a slow parse), {} index runs over {} files, \
             slowest extraction {:?} ({}), most text extracted {:.1} times the input ({}), \
             {:.1} s; HOSTILE_SEED={:#x} HOSTILE_ITERATIONS={}",
            self.lang.name,
            t.extractions,
            t.parse_bound,
            t.index_runs,
            t.indexed_files,
            t.slowest.0,
            t.slowest.1,
            t.growth.0,
            t.growth.1,
            started.elapsed().as_secs_f64(),
            self.cfg.seed,
            self.cfg.iterations,
        );
    }
}

/// Writes `bytes` to `path` under `root`, creating folders.
fn write(root: &Path, path: &str, bytes: &[u8]) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// A run over `root` as `Index::build` makes it with the default options, but for a fixed
/// project name, two threads, the database at `db`, files up to `max_file_bytes` and no
/// artifact written into the tree.
fn run_options(root: &Path, db: &Path, max_file_bytes: u64) -> RunOptions<'static> {
    RunOptions {
        max_file_bytes,
        ..crate::index::test_run_options(root, db)
    }
}

/// Mutated and random files go into an index run in batches of this many.
const INDEX_BATCH: u64 = 400;

fn fuzz(name: &str) {
    let started = Instant::now();
    let mut f = Fuzz::new(name);
    let deep = f.deep();
    f.truncations();
    let stride = if f.cfg.long { 1 } else { INDEXED_DEEP_STRIDE };
    let mut batch: Vec<ProjectFile> = deep.into_iter().step_by(stride).collect();
    let seed_path = f.path("seed");
    batch.push(f.extract(
        &format!("{name}/seed"),
        &seed_path,
        f.subject.seed.as_bytes().to_vec(),
    ));
    for i in 0..f.cfg.iterations {
        let random = f.random(i);
        let mutant = f.mutant(i);
        // Every file of a batch is small but the first batch's deep ones: a few of each kind
        // keep index runs short.
        if i % 4 == 0 {
            batch.push(random);
            batch.push(mutant);
        }
        if (i + 1) % INDEX_BATCH == 0 || i + 1 == f.cfg.iterations {
            f.index(std::mem::take(&mut batch), 64 << 20);
        }
    }
    if !batch.is_empty() {
        f.index(batch, 64 << 20);
    }
    f.report(started);
}

macro_rules! languages {
    ($($name:ident),*) => {
        $(
            #[test]
            fn $name() {
                fuzz(stringify!($name));
            }
        )*
    };
}

languages!(
    python, typescript, tsx, javascript, go, rust, java, c, cpp, csharp, ruby, php, kotlin, swift,
    scala, lua, elixir, bash
);

// ---------------------------------------------------------------------------------------
// 50 MB on one line

/// `unit` repeated to 50 MB between `head` and `tail`, all on one line.
fn one_line(head: &str, unit: &str, tail: &str) -> Vec<u8> {
    let mut s = String::with_capacity(FIFTY_MB + head.len() + tail.len() + 1);
    s.push_str(head);
    while s.len() < FIFTY_MB {
        s.push_str(unit);
    }
    s.push_str(tail);
    s.push('\n');
    s.into_bytes()
}

/// Peak resident memory of this process so far, in MiB (Linux).
fn peak_rss_mib() -> Option<u64> {
    super::process_usage().map(|(_, peak_kib)| peak_kib / 1024)
}

/// Serializes the heavy 50 MB cases across test threads and processes: tree-sitter's syntax
/// tree of one takes about 200 bytes of memory per byte of input.
fn heavy_case_lock() -> std::fs::File {
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let file = std::fs::File::create(dir.join("50mb.lock")).expect("lock file");
    file.lock().expect("lock");
    file
}

/// A 50 MB single-line file in each shape, between `head` and `tail`: (label, head, unit,
/// tail). The first, one string literal, parses into a few nodes; the others into
/// millions, which costs gigabytes in tree-sitter alone and runs with `HOSTILE_HEAVY=1`.
type Shape<'a> = (&'a str, &'a str, &'a str, &'a str);

/// Each 50 MB shape is skipped as too large under the default size limit, and extracted
/// and indexed in bounded time with the limit raised above it.
fn fifty_megabytes(name: &str, shapes: &[Shape]) {
    let mut f = Fuzz::new(name);
    let heavy = std::env::var_os("HOSTILE_HEAVY").is_some();
    let count = if heavy { shapes.len() } else { 1 };
    for (i, &(label, head, unit, tail)) in shapes[..count].iter().enumerate() {
        let _lock = (i > 0).then(heavy_case_lock);
        let bytes = one_line(head, unit, tail);
        let path = f.path("huge");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        write(&root, &path, &bytes);
        let db = dir.path().join("default.db");
        let summary =
            super::run(&run_options(&root, &db, DEFAULT_MAX_FILE_BYTES)).expect("index run");
        assert_eq!(
            summary.files, 0,
            "{name} {label}: indexed under the default limit"
        );
        assert_eq!(
            summary.skipped.get("too_large"),
            Some(&1),
            "{name} {label}: {:?}",
            summary.skipped
        );
        drop(dir);

        let started = Instant::now();
        let direct = f.extract(&format!("{name}/50MB/{label}"), &path, bytes);
        let extracted_in = started.elapsed();
        let (nodes, refs, timed_out) = (direct.nodes, direct.refs, direct.timed_out);
        let (summary, took) = f.index(vec![direct], 64 << 20);
        println!(
            "{name} 50 MB {label}: extraction {:.1} s ({nodes} nodes, {refs} references, \
             given up: {timed_out}), index run {:.1} s, phases {:?}, peak RSS {} MiB",
            extracted_in.as_secs_f64(),
            took.as_secs_f64(),
            summary.phases_ms,
            peak_rss_mib().unwrap_or(0),
        );
    }
}

#[test]
fn fifty_megabytes_python() {
    fifty_megabytes(
        "python",
        &[
            ("string", "s = \"", "abcd", "\""),
            ("statements", "", "x=1;", ""),
            ("expression", "x = 1", "+1", ""),
        ],
    );
}

#[test]
fn fifty_megabytes_javascript() {
    fifty_megabytes(
        "javascript",
        &[
            ("string", "const s = \"", "abcd", "\";"),
            ("statements", "", "x=1;", ""),
            ("expression", "const x = 1", "+1", ";"),
        ],
    );
}

#[test]
fn fifty_megabytes_c() {
    fifty_megabytes(
        "c",
        &[
            ("string", "const char *s = \"", "abcd", "\";"),
            (
                "statements",
                "int f(void) { int x; ",
                "x=1;",
                " return x; }",
            ),
            ("expression", "int x = 1", "+1", ";"),
        ],
    );
}

#[test]
fn fifty_megabytes_go() {
    fifty_megabytes(
        "go",
        &[
            ("string", "package p; var s = \"", "abcd", "\""),
            ("statements", "package p; func f() { x := 0; ", "x=1;", " }"),
            ("expression", "package p; var x = 1", "+1", ""),
        ],
    );
}

#[test]
fn random_seeds_differ_and_repeat() {
    // The generators are deterministic per seed: a printed seed reproduces its case.
    let a = random_bytes(&mut Rng::for_case(1, "python", "random", 7));
    let b = random_bytes(&mut Rng::for_case(1, "python", "random", 7));
    let c = random_bytes(&mut Rng::for_case(2, "python", "random", 7));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let m1 = mutate(
        &mut Rng::for_case(1, "go", "mutate", 3),
        seeds::GO.as_bytes(),
    );
    let m2 = mutate(
        &mut Rng::for_case(1, "go", "mutate", 3),
        seeds::GO.as_bytes(),
    );
    assert_eq!(m1, m2);
}
