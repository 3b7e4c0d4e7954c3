//! A context pack around a target: the code an agent needs to work on a symbol, a file or a
//! question, under a token budget, saying why each piece is there and what was left out.
//!
//! Roots are the symbol, the top-level definitions of the file, or the best hits for the
//! query (full-text BM25 over definitions fused by reciprocal rank with the repo map's
//! personalized PageRank). From the roots the pack grows breadth-first, each round one hop
//! of callees and then one hop of callers of the previous round, most confident edges first.
//! Candidates are taken whole in that order; one that does not fit is skipped and the scan
//! goes on. A root too large to include whole is shown as its signature instead.

use crate::context::cursor::{self, Positions, Shown};
use crate::context::defgraph::{source_of, Contents, Def, Edge, Repo};
use crate::context::render::{
    cdata, code_tag, fence, short_query, signature_lines, xml_escape, QUERY_SHOWN,
};
use crate::context::repomap;
use crate::context::tokens::{self, Account, ListedOnce, Tokenizer};
use crate::model::NodeKind;
use crate::query::rank_files;
use crate::query::resolve_target;
use anyhow::{bail, Result};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    #[value(alias = "md")]
    Markdown,
    Xml,
    Json,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Target {
    /// A qualified name (or unambiguous short name) or a file path.
    Entry(String),
    /// A natural-language question or issue text.
    Query(String),
}

/// What to pack and how. The default packs nothing: set `target`.
#[derive(Clone, Debug)]
pub struct Options {
    pub target: Target,
    pub budget: usize,
    /// Symbols other than the roots as signatures only.
    pub signatures_only: bool,
    pub format: Format,
    pub tokenizer: Tokenizer,
    /// List the best symbols left out (as many as fit).
    pub show_dropped: bool,
    /// Continue after the packs this cursor (a `next_cursor`) stands for: the symbols they
    /// showed are left out of this one, and count as in context.
    pub cursor: Option<String>,
    /// End the text with the cursor that continues after this pack, when anything is left.
    pub offer_cursor: bool,
}

impl Options {
    pub const DEFAULT_BUDGET: usize = 8000;

    /// What a cursor of this pack answers: the same candidates come only from the same
    /// target and renderings.
    fn question(&self) -> String {
        format!("{:?}\0{}", self.target, self.signatures_only)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Query(String::new()),
            budget: Self::DEFAULT_BUDGET,
            signatures_only: false,
            format: Format::default(),
            tokenizer: Tokenizer::default(),
            show_dropped: false,
            cursor: None,
            offer_cursor: false,
        }
    }
}

/// Query packs start from this many of the fused hits (whichever fit). On the Django tasks
/// 24 roots found the gold file in 81% of the packs at 13k tokens, 8 roots in 73%, 4 in 68%;
/// 40 no more than 24.
pub const QUERY_ROOTS: usize = 24;
/// Breadth-first rounds (each a hop of callees and a hop of callers).
const ROUNDS: usize = 3;
/// Candidates considered at most: a hub's callers can be most of a repository.
const MAX_CANDIDATES: usize = 1000;
/// Referenced symbols left out, listed per included symbol at most.
const NOT_IN_CONTEXT_LISTED: usize = 5;
/// Dropped symbols listed on request, at most.
const DROPPED_LISTED: usize = 30;
/// The scan for candidates that fit stops when the budget has less room than this, or after
/// this many candidates in a row did not fit.
const ROOM_FLOOR: usize = 16;
const MISSES_IN_A_ROW: usize = 150;
/// Bytes per token above which code is assumed not to go (o200k and cl100k average about 4
/// on source code; only long runs of one character go far beyond).
const MAX_BYTES_PER_TOKEN: usize = 12;
/// Reciprocal rank fusion constant.
const RRF_K: f64 = 60.0;
/// Files `rank-files` contributes to a query's ranking, one definition each.
const RANKED_FILES: usize = 20;

/// Why a symbol is in the pack.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Reason {
    Root,
    CalleeOf { of: String, confidence: f64 },
    CallerOf { of: String, confidence: f64 },
    MemberOf { of: String },
}

impl Reason {
    fn describe(&self) -> String {
        match self {
            Reason::Root => "root".into(),
            Reason::CalleeOf { of, confidence } => format!("callee of {of} ({confidence:.2})"),
            Reason::CallerOf { of, confidence } => format!("caller of {of} ({confidence:.2})"),
            Reason::MemberOf { of } => format!("member of {of}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rendering {
    Full,
    Signature,
}

/// A referenced symbol that is not in the pack.
#[derive(Clone, Debug, Serialize)]
pub struct Missing {
    pub qualified_name: String,
    pub path: String,
    pub line: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct PackedSymbol {
    /// Index into the `Repo` the pack was built from.
    #[serde(skip)]
    pub def: usize,
    pub qualified_name: String,
    pub kind: &'static str,
    pub start_line: u32,
    pub end_line: u32,
    pub reason: Reason,
    pub rendering: Rendering,
    pub code: String,
    pub not_in_context: Vec<Missing>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PackedFile {
    pub path: String,
    pub language: String,
    pub symbols: Vec<PackedSymbol>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DroppedSymbol {
    pub qualified_name: String,
    pub path: String,
    pub line: u32,
    /// Tokens of its code in full (the rendering tried last, for a root its signature).
    pub tokens: usize,
    /// `tokens` estimated from its size (bytes / 4): it was too large to try.
    pub tokens_estimated: bool,
    pub reason: Reason,
}

/// The pack; as JSON this is the documented schema (`codebase-indexer/pack/1`).
#[derive(Clone, Debug, Serialize)]
pub struct Pack {
    pub schema: &'static str,
    /// A query is stated as the header states it, shortened: a whole issue text would cost
    /// more than the budget it is packed for.
    #[serde(serialize_with = "stated_target")]
    pub target: Target,
    #[serde(flatten)]
    pub account: Account,
    /// Tokens of the code blocks alone.
    pub code_tokens: usize,
    /// Definitions in the repository.
    pub repo_symbols: usize,
    /// The target's roots, and how many of them are in the pack.
    pub roots: usize,
    pub roots_included: usize,
    /// Symbols shown by the packs the cursor continued after.
    #[serde(skip_serializing_if = "cursor::none_shown")]
    pub shown_before: usize,
    /// Continues after this pack and those before it; `None` when nothing is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub files: Vec<PackedFile>,
    /// With `show_dropped`: the first symbols left out, in the order they were considered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_top: Vec<DroppedSymbol>,
    #[serde(skip)]
    pub format: Format,
    #[serde(skip)]
    pub text: String,
}

/// A symbol considered for the pack, in priority order.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub def: usize,
    pub reason: Reason,
    pub root: bool,
}

/// Tokens kept for the line offering a cursor (a check and a few runs of positions).
const CURSOR_RESERVE: usize = 48;

/// What earlier pages of a pack showed, and whether this one leaves candidates for later.
struct Paging {
    /// The candidates' definitions, in order: a cursor's positions index them.
    defs: Vec<usize>,
    /// Positions shown before, in full and as signatures.
    full: Positions,
    signatures: Positions,
    /// The scan stopped before the last candidate.
    stopped_early: bool,
}

impl Paging {
    fn identity<'r>(&'r self, repo: &'r Repo) -> impl Fn(usize) -> String + 'r {
        move |k| repo.defs[self.defs[k]].qualified_name.clone()
    }

    /// Earlier pages' symbols, with their renderings.
    fn shown(&self) -> impl Iterator<Item = (usize, Rendering)> + '_ {
        let full = self.full.iter().map(|k| (self.defs[k], Rendering::Full));
        full.chain(
            self.signatures
                .iter()
                .map(|k| (self.defs[k], Rendering::Signature)),
        )
    }
}

/// A candidate with its renderings' texts and costs.
struct Priced {
    /// Its position among the candidates.
    position: usize,
    def: usize,
    reason: Reason,
    rendering: Rendering,
    code: String,
    /// Tokens of the symbol's fragment of the output, and of its code alone.
    cost: usize,
    code_tokens: usize,
    /// `code_tokens` is a size estimate (bytes / 4), the code not being tokenized.
    estimated: bool,
}

/// The pack of `opts.target` (`repo` must be the whole of `conn`'s definitions graph).
pub fn build_in(conn: &Connection, repo: &Repo, opts: &Options) -> Result<Pack> {
    let roots = roots(conn, repo, &opts.target)?;
    let candidates = expand(repo, &roots);
    let mut paging = Paging {
        defs: candidates.iter().map(|c| c.def).collect(),
        full: Positions::default(),
        signatures: Positions::default(),
        stopped_early: false,
    };
    if let Some(c) = &opts.cursor {
        let shown = {
            let identity = paging.identity(repo);
            cursor::decode(c, "pack", &opts.question(), 2, candidates.len(), &identity)?
        };
        let mut sets = shown.sets.into_iter();
        paging.full = sets.next().unwrap_or_default();
        paging.signatures = sets.next().unwrap_or_default();
    }
    assemble(conn, repo, candidates, roots.len(), paging, opts)
}

/// The definitions a target names, most relevant first.
pub fn roots(conn: &Connection, repo: &Repo, target: &Target) -> Result<Vec<usize>> {
    match target {
        Target::Entry(entry) => {
            let id = resolve_target(conn, entry)?;
            let Some(def) = repo.index_of(id) else {
                bail!("{entry:?} is not in the index");
            };
            if repo.defs[def].kind != NodeKind::File {
                return Ok(vec![def]);
            }
            let top: Vec<usize> = repo
                .defs_of_file(repo.defs[def].file)
                .filter(|&d| repo.defs[d].parent == Some(def))
                .collect();
            // A file without definitions (a script, a config file) is its own root.
            Ok(if top.is_empty() { vec![def] } else { top })
        }
        Target::Query(query) => {
            let fused = query_ranking(conn, repo, query)?;
            if fused.is_empty() {
                bail!(
                    "nothing in the index matches the query {:?}: try other words, or `indexer search`",
                    query.chars().take(80).collect::<String>()
                );
            }
            Ok(fused.into_iter().take(QUERY_ROOTS).collect())
        }
    }
}

/// Definitions for a query, best first: BM25 definition hits, the personalized PageRank of
/// the repo map seeded by them, and one definition for each of `rank-files`' best files
/// (which also weighs whole-file text and paths), fused by reciprocal rank.
fn query_ranking(conn: &Connection, repo: &Repo, query: &str) -> Result<Vec<usize>> {
    if !rank_files::has_words(query) {
        crate::error::invalid!("the query {query:?} has no words to look for");
    }
    let query = &rank_files::own_query(conn, query)?;
    // One reading of the definitions for both the hits and `rank-files`' files.
    let (hits, ranked_files) = rank_files::hits_and_files(conn, query, RANKED_FILES)?;
    let by_hit: Vec<usize> = hits
        .iter()
        .filter_map(|h| repo.index_of(h.node))
        .filter(|&d| repo.defs[d].kind != NodeKind::File)
        .collect();
    let by_rank = if by_hit.is_empty() {
        Vec::new()
    } else {
        let seeds = repomap::query_seeds(repo, query, &hits);
        let ranked = repomap::rank_definitions(repo, &seeds);
        let top = ranked.into_iter().take(rank_files::TOP_DEFINITIONS);
        top.map(|(d, _)| d).collect()
    };
    let by_file = file_representatives(repo, &hits, &ranked_files);
    let mut fused: HashMap<usize, f64> = HashMap::new();
    for list in [by_hit, by_rank, by_file] {
        for (r, d) in list.into_iter().enumerate() {
            *fused.entry(d).or_default() += 1.0 / (RRF_K + r as f64 + 1.0);
        }
    }
    let mut out: Vec<(usize, f64)> = fused.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out.into_iter().map(|(d, _)| d).collect())
}

/// One definition per ranked file, in the files' order: the file's best definition hit, else
/// the file itself when it has no definitions (a script, a configuration file), else the
/// definition `rank-files` names for it. A file whose definitions neither matched nor were
/// named adds nothing: its whole text is what matched, and no one definition stands for it.
fn file_representatives(
    repo: &Repo,
    hits: &[rank_files::DefinitionHit],
    ranked: &[rank_files::RankedFile],
) -> Vec<usize> {
    let mut best_hit: HashMap<&str, usize> = HashMap::new();
    for hit in hits {
        if let Some(d) = repo.index_of(hit.node) {
            if repo.defs[d].kind != NodeKind::File {
                best_hit.entry(hit.path.as_str()).or_insert(d);
            }
        }
    }
    let file_of: HashMap<&str, usize> = repo
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i))
        .collect();
    ranked
        .iter()
        .filter_map(|r| {
            if let Some(&d) = best_hit.get(r.path.as_str()) {
                return Some(d);
            }
            let &file = file_of.get(r.path.as_str())?;
            let mut defs = repo
                .defs_of_file(file)
                .filter(|&d| repo.defs[d].kind != NodeKind::File)
                .peekable();
            if defs.peek().is_none() {
                // Whatever `rank-files` named for it (a parsed script: its own path).
                return repo.files[file].node;
            }
            let symbol = r.symbol.as_ref()?;
            defs.find(|&d| &repo.defs[d].qualified_name == symbol)
        })
        .collect()
}

/// Roots, then breadth-first rounds: callees of the previous round's symbols, then their
/// callers, each hop most confident first; members of type roots after the first round.
pub fn expand(repo: &Repo, roots: &[usize]) -> Vec<Candidate> {
    let mut seen: HashSet<usize> = roots.iter().copied().collect();
    let mut out: Vec<Candidate> = roots
        .iter()
        .map(|&def| Candidate {
            def,
            reason: Reason::Root,
            root: true,
        })
        .collect();
    let mut frontier: Vec<usize> = roots.to_vec();
    for round in 0..ROUNDS {
        let mut next = Vec::new();
        for callees in [true, false] {
            let mut hop: Vec<(usize, usize, Edge)> = Vec::new();
            for &from in &frontier {
                let edges = if callees {
                    &repo.out_edges[from]
                } else {
                    &repo.in_edges[from]
                };
                hop.extend(edges.iter().map(|e| (from, e.other, *e)));
            }
            hop.sort_by(|a, b| {
                b.2.confidence
                    .total_cmp(&a.2.confidence)
                    .then(b.2.weight.total_cmp(&a.2.weight))
                    .then((a.0, a.1).cmp(&(b.0, b.1)))
            });
            for (from, to, e) in hop {
                if out.len() >= MAX_CANDIDATES {
                    return out;
                }
                if repo.defs[to].kind == NodeKind::File || !seen.insert(to) {
                    continue;
                }
                let of = repo.defs[from].qualified_name.clone();
                let reason = if callees {
                    Reason::CalleeOf {
                        of,
                        confidence: e.confidence,
                    }
                } else {
                    Reason::CallerOf {
                        of,
                        confidence: e.confidence,
                    }
                };
                out.push(Candidate {
                    def: to,
                    reason,
                    root: false,
                });
                next.push(to);
            }
        }
        if round == 0 {
            for &root in roots {
                if !repo.defs[root].kind.is_type_like() {
                    continue;
                }
                for member in repo.defs_of_file(repo.defs[root].file) {
                    if repo.defs[member].parent == Some(root) && seen.insert(member) {
                        out.push(Candidate {
                            def: member,
                            reason: Reason::MemberOf {
                                of: repo.defs[root].qualified_name.clone(),
                            },
                            root: false,
                        });
                    }
                }
            }
        }
        frontier = next;
        if frontier.is_empty() {
            break;
        }
    }
    out
}

/// Prices the candidates, takes them whole in order while they fit, and renders the pack.
fn assemble(
    conn: &Connection,
    repo: &Repo,
    candidates: Vec<Candidate>,
    roots: usize,
    mut paging: Paging,
    opts: &Options,
) -> Result<Pack> {
    let tk = opts.tokenizer;
    let mut contents = Contents::new(conn)?;
    let mut pack = Pack {
        schema: "codebase-indexer/pack/1",
        target: opts.target.clone(),
        account: Account {
            tokenizer: tk,
            budget: opts.budget,
            ..Account::default()
        },
        code_tokens: 0,
        repo_symbols: repo
            .defs
            .iter()
            .filter(|d| d.kind != NodeKind::File)
            .count(),
        roots,
        roots_included: 0,
        shown_before: paging.full.len() + paging.signatures.len(),
        next_cursor: None,
        files: Vec::new(),
        dropped_top: Vec::new(),
        format: opts.format,
        text: String::new(),
    };
    let header_cost = tk.count(&header(&pack, 0, candidates.len(), 0));
    let cursor_room = if opts.offer_cursor { CURSOR_RESERVE } else { 0 };
    let room = opts.budget.saturating_sub(
        header_cost + cursor_room + tokens::dropped_reserve(opts.budget, opts.show_dropped),
    );
    let shown_in_full: Vec<usize> = paging.full.iter().map(|k| paging.defs[k]).collect();
    let mut taken: Vec<Priced> = Vec::new();
    let mut dropped: Vec<Priced> = Vec::new();
    let mut used = 0;
    let mut files_in: HashSet<usize> = HashSet::new();
    let candidates_total = candidates.len();
    let mut misses = 0;
    for (position, c) in candidates.into_iter().enumerate() {
        if room - used < ROOM_FLOOR || misses >= MISSES_IN_A_ROW {
            paging.stopped_early = true;
            break;
        }
        if paging.full.contains(position) || paging.signatures.contains(position) {
            continue;
        }
        let d = &repo.defs[c.def];
        // Inside something already taken whole, here or before: already in the context.
        if taken
            .iter()
            .any(|t| t.rendering == Rendering::Full && repo.is_within(c.def, t.def))
            || shown_in_full.iter().any(|&t| repo.is_within(c.def, t))
        {
            continue;
        }
        let content = contents.of(repo.files[d.file].id)?;
        let full = !opts.signatures_only || c.root;
        let mut options = Vec::with_capacity(2);
        if full {
            options.push(Rendering::Full);
        }
        if c.root || opts.signatures_only {
            options.push(Rendering::Signature);
        }
        let file_cost = if files_in.contains(&d.file) {
            0
        } else {
            tk.count(&file_open(opts.format, &repo.files[d.file].path))
        };
        let mut placed = false;
        let mut last = None;
        for rendering in options {
            // Code has fewer tokens than bytes / MAX_BYTES_PER_TOKEN only when it is mostly
            // one repeated run; what is surely too large is not tokenized to find out.
            let bytes = (d.end_byte - d.start_byte) as usize;
            if rendering == Rendering::Full && bytes / MAX_BYTES_PER_TOKEN > room - used {
                continue;
            }
            // What it contains that was taken separately is refunded when it comes in.
            let inner: Vec<usize> = (0..taken.len())
                .filter(|&i| rendering == Rendering::Full && repo.is_within(taken[i].def, c.def))
                .collect();
            let refund: usize = inner.iter().map(|&i| taken[i].cost).sum();
            // Nor is code whose tokens cannot be under the room left (most of the scan's
            // misses once the budget is nearly full: tokenizing them was half a pack's time).
            if rendering == Rendering::Full
                && tokens::floor(source_of(&content, d)) + file_cost > room + refund - used
            {
                continue;
            }
            let priced = price(repo, position, &c, rendering, &content, opts);
            if used + priced.cost + file_cost <= room + refund {
                for &i in inner.iter().rev() {
                    let t = taken.remove(i);
                    used -= t.cost;
                }
                used += priced.cost + file_cost;
                files_in.insert(d.file);
                taken.push(priced);
                placed = true;
                break;
            }
            last = Some(priced);
        }
        if placed {
            misses = 0;
        } else {
            misses += 1;
            dropped.push(last.unwrap_or_else(|| {
                // Too large by its size alone: its tokens are estimated, not counted.
                let bytes = (d.end_byte - d.start_byte) as usize;
                Priced {
                    position,
                    def: c.def,
                    reason: c.reason.clone(),
                    rendering: Rendering::Full,
                    code: String::new(),
                    cost: 0,
                    code_tokens: bytes / 4,
                    estimated: true,
                }
            }));
        }
    }
    let selection = Selection {
        taken: &taken,
        dropped: &dropped,
        candidates_total,
        paging: &paging,
    };
    let order: Vec<usize> = (0..taken.len()).collect();
    let mut listed = ListedOnce::default();
    let fitted = tokens::fit_exact(tk, opts.budget, order, |kept, n| {
        let mut p = pack.clone();
        fill(&mut p, repo, &selection, kept, n, &mut listed, opts);
        p.text
    });
    let Some((kept, _, n)) = fitted else {
        bail!(
            "a budget of {} tokens cannot hold even the pack's header ({header_cost} tokens)",
            opts.budget
        );
    };
    fill(&mut pack, repo, &selection, &kept, n, &mut listed, opts);
    Ok(pack)
}

/// What the scan chose: the candidates taken and those that did not fit, in order.
struct Selection<'s> {
    taken: &'s [Priced],
    dropped: &'s [Priced],
    candidates_total: usize,
    paging: &'s Paging,
}

fn price(
    repo: &Repo,
    position: usize,
    c: &Candidate,
    rendering: Rendering,
    content: &str,
    opts: &Options,
) -> Priced {
    let d = &repo.defs[c.def];
    let code = match rendering {
        Rendering::Full => source_of(content, d).to_string(),
        Rendering::Signature => signature_lines(d, 0),
    };
    let tk = opts.tokenizer;
    let mut priced = Priced {
        position,
        def: c.def,
        reason: c.reason.clone(),
        rendering,
        code_tokens: tk.count(&code),
        code,
        cost: 0,
        estimated: false,
    };
    // Priced with every referenced symbol marked missing: the rendering can only be shorter.
    let missing = missing_of(repo, c.def, &[]);
    let symbol = packed(repo, &priced, missing);
    priced.cost = match opts.format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&symbol).unwrap_or_default();
            tk.count(&text) + text.lines().count() + 2
        }
        format => tk.count(&symbol_text(format, &symbol, &repo.files[d.file].language)),
    };
    priced
}

/// Referenced symbols of `def` that the pack's symbols (`packed`, with their renderings) do
/// not show: neither included nor inside a symbol included in full. Most confident first.
fn missing_of(repo: &Repo, def: usize, packed: &[(usize, Rendering)]) -> Vec<Missing> {
    let shown = |target: usize| {
        packed.iter().any(|&(p, rendering)| {
            p == target || (rendering == Rendering::Full && repo.is_within(target, p))
        })
    };
    let mut edges: Vec<&Edge> = repo.out_edges[def]
        .iter()
        .filter(|e| repo.defs[e.other].kind != NodeKind::File && !shown(e.other))
        .collect();
    edges.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.other.cmp(&b.other))
    });
    edges
        .into_iter()
        .take(NOT_IN_CONTEXT_LISTED)
        .map(|e| {
            let d = &repo.defs[e.other];
            Missing {
                qualified_name: d.qualified_name.clone(),
                path: repo.files[d.file].path.clone(),
                line: d.start_line,
            }
        })
        .collect()
}

fn packed(repo: &Repo, p: &Priced, not_in_context: Vec<Missing>) -> PackedSymbol {
    let d: &Def = &repo.defs[p.def];
    PackedSymbol {
        def: p.def,
        qualified_name: d.qualified_name.clone(),
        kind: d.kind.as_str(),
        start_line: d.start_line,
        end_line: d.end_line,
        reason: p.reason.clone(),
        rendering: p.rendering,
        code: p.code.clone(),
        not_in_context,
    }
}

/// Sets the pack's files, account, cursor and text for `kept` (indexes into the selection's
/// `taken`), its text stating `tokens` as its own count.
fn fill(
    pack: &mut Pack,
    repo: &Repo,
    selection: &Selection,
    kept: &[usize],
    tokens: usize,
    listed: &mut ListedOnce,
    opts: &Options,
) {
    let Selection {
        taken,
        dropped,
        candidates_total,
        paging,
    } = *selection;
    // In the agent's context: this pack's symbols and the earlier pages'.
    let in_pack: Vec<(usize, Rendering)> = kept
        .iter()
        .map(|&k| (taken[k].def, taken[k].rendering))
        .chain(paging.shown())
        .collect();
    // Files in the order of their first symbol; symbols in source order.
    let mut order: Vec<usize> = Vec::new();
    let mut by_file: HashMap<usize, Vec<&Priced>> = HashMap::new();
    for &k in kept {
        let file = repo.defs[taken[k].def].file;
        by_file
            .entry(file)
            .or_insert_with(|| {
                order.push(file);
                Vec::new()
            })
            .push(&taken[k]);
    }
    pack.files = order
        .into_iter()
        .map(|file| {
            let mut symbols = by_file.remove(&file).unwrap_or_default();
            symbols.sort_by_key(|p| (repo.defs[p.def].start_byte, p.def));
            PackedFile {
                path: repo.files[file].path.clone(),
                language: repo.files[file].language.clone(),
                symbols: symbols
                    .into_iter()
                    .map(|p| packed(repo, p, missing_of(repo, p.def, &in_pack)))
                    .collect(),
            }
        })
        .collect();
    pack.code_tokens = kept.iter().map(|&k| taken[k].code_tokens).sum();
    pack.roots_included = kept
        .iter()
        .filter(|&&k| taken[k].reason == Reason::Root)
        .count();
    pack.account.tokens = tokens;
    pack.account.included = kept.len();
    pack.account.dropped = candidates_total - kept.len() - pack.shown_before;
    // A page that showed nothing would be followed by the same page.
    let more = (paging.stopped_early || !dropped.is_empty() || kept.len() < taken.len())
        && !kept.is_empty();
    pack.next_cursor = more.then(|| {
        let now = |r: Rendering| {
            kept.iter()
                .filter(move |&&k| taken[k].rendering == r)
                .map(|&k| taken[k].position)
        };
        let shown = Shown {
            sets: vec![
                paging.full.with(now(Rendering::Full)),
                paging.signatures.with(now(Rendering::Signature)),
            ],
        };
        cursor::encode("pack", &opts.question(), &shown, &paging.identity(repo))
    });
    pack.dropped_top = Vec::new();
    let mut all_dropped: Vec<DroppedSymbol> = Vec::new();
    if opts.show_dropped {
        all_dropped = (0..taken.len())
            .filter(|k| !kept.contains(k))
            .map(|k| &taken[k])
            .chain(dropped.iter())
            .take(DROPPED_LISTED)
            .map(|p| {
                let d = &repo.defs[p.def];
                DroppedSymbol {
                    qualified_name: d.qualified_name.clone(),
                    path: repo.files[d.file].path.clone(),
                    line: d.start_line,
                    tokens: p.code_tokens,
                    tokens_estimated: p.estimated,
                    reason: p.reason.clone(),
                }
            })
            .collect();
    }
    let n = if all_dropped.is_empty() {
        0
    } else {
        listed.get(kept.len(), || {
            // The dropped list gets what room the budget has left: as many entries as fit.
            let tk = opts.tokenizer;
            let text = render_text(
                pack,
                kept.len(),
                candidates_total,
                tokens,
                opts.offer_cursor,
            );
            let mut room = opts.budget.saturating_sub(tk.count(&text));
            all_dropped
                .iter()
                .take_while(|d| {
                    let cost = match opts.format {
                        Format::Json => {
                            let text = serde_json::to_string_pretty(d).unwrap_or_default();
                            tk.count(&text) + text.lines().count() + 2
                        }
                        format => tk.count(&dropped_text(format, std::slice::from_ref(*d))),
                    };
                    let fits = cost <= room;
                    room = room.saturating_sub(cost);
                    fits
                })
                .count()
        })
    };
    all_dropped.truncate(n);
    pack.dropped_top = all_dropped;
    pack.text = render_text(
        pack,
        kept.len(),
        candidates_total,
        tokens,
        opts.offer_cursor,
    );
}

/// The pack's text in its format, stating `tokens` as its own count (and, with
/// `offer_cursor`, ending with its cursor when it has one).
fn render_text(
    pack: &Pack,
    included: usize,
    candidates: usize,
    tokens: usize,
    offer_cursor: bool,
) -> String {
    match pack.format {
        Format::Json => serde_json::to_string_pretty(pack).unwrap_or_default() + "\n",
        format => {
            let mut text = header(pack, included, candidates, tokens);
            for f in &pack.files {
                text.push_str(&file_open(format, &f.path));
                for s in &f.symbols {
                    text.push_str(&symbol_text(format, s, &f.language));
                }
                if format == Format::Xml {
                    text.push_str("</file>\n");
                }
            }
            text.push_str(&dropped_text(format, &pack.dropped_top));
            match &pack.next_cursor {
                Some(c) if offer_cursor && format == Format::Xml => {
                    text.push_str(&format!("<next_cursor>{}</next_cursor>\n", xml_escape(c)));
                }
                Some(c) if offer_cursor => {
                    text.push('\n');
                    text.push_str(&cursor::offer_line("this pack", c));
                }
                _ => {}
            }
            if format == Format::Xml {
                text.push_str("</context_pack>\n");
            }
            text
        }
    }
}

fn stated_target<S: serde::Serializer>(target: &Target, s: S) -> Result<S::Ok, S::Error> {
    match target {
        Target::Query(q) => Target::Query(short_query(q, QUERY_SHOWN)).serialize(s),
        entry => entry.serialize(s),
    }
}

fn header(pack: &Pack, included: usize, candidates: usize, tokens: usize) -> String {
    let target = match &pack.target {
        Target::Entry(e) => format!("entry {e}"),
        Target::Query(q) => format!("query \"{}\"", short_query(q, QUERY_SHOWN)),
    };
    let a = &pack.account;
    let dropped = candidates.saturating_sub(included + pack.shown_before);
    let before = match pack.shown_before {
        0 => String::new(),
        n => format!(" after {n} shown before"),
    };
    match pack.format {
        Format::Xml => format!(
            "<context_pack schema=\"{}\" tokenizer=\"{}\" budget=\"{}\" tokens=\"{tokens}\" \
             code_tokens=\"{}\" repo_symbols=\"{}\" roots=\"{}\" roots_included=\"{}\" \
             included=\"{included}\" \
             dropped=\"{dropped}\">\n<target>{}</target>\n",
            pack.schema,
            a.tokenizer.as_str(),
            a.budget,
            pack.code_tokens,
            pack.repo_symbols,
            pack.roots,
            pack.roots_included,
            xml_escape(&target)
        ),
        _ => format!(
            "# Context pack: {target}\n\
             repository: {} symbols; included {included}{before} ({} of {} root{}), left out {dropped} more reached from them\n\
             tokens: {} of code, {tokens} in all, budget {} ({})\n",
            pack.repo_symbols,
            pack.roots_included,
            pack.roots,
            if pack.roots == 1 { "" } else { "s" },
            pack.code_tokens,
            a.budget,
            a.tokenizer.as_str()
        ),
    }
}

fn file_open(format: Format, path: &str) -> String {
    match format {
        Format::Xml => format!("<file path=\"{}\">\n", xml_escape(path)),
        Format::Markdown => format!("\n## {path}\n"),
        Format::Json => String::new(),
    }
}

fn symbol_text(format: Format, s: &PackedSymbol, language: &str) -> String {
    let mut out = String::new();
    match format {
        Format::Xml => {
            let (why, confidence) = match &s.reason {
                Reason::CalleeOf { confidence, .. } | Reason::CallerOf { confidence, .. } => (
                    s.reason.describe(),
                    format!(" confidence=\"{confidence:.2}\""),
                ),
                r => (r.describe(), String::new()),
            };
            out.push_str(&format!(
                "<symbol name=\"{}\" kind=\"{}\" lines=\"{}-{}\" rendering=\"{}\" reason=\"{}\"{confidence}>{}</symbol>\n",
                xml_escape(&s.qualified_name),
                s.kind,
                s.start_line,
                s.end_line,
                rendering_name(s.rendering),
                xml_escape(&why),
                cdata(&s.code)
            ));
            for m in &s.not_in_context {
                out.push_str(&format!(
                    "<not_in_context name=\"{}\" path=\"{}\" line=\"{}\" from=\"{}\"/>\n",
                    xml_escape(&m.qualified_name),
                    xml_escape(&m.path),
                    m.line,
                    xml_escape(&s.qualified_name)
                ));
            }
        }
        _ => {
            let shown = match s.rendering {
                Rendering::Full => "",
                Rendering::Signature => ", signature only",
            };
            out.push_str(&format!(
                "\n### {} ({}, lines {}-{}{shown}): {}\n",
                s.qualified_name,
                s.kind,
                s.start_line,
                s.end_line,
                s.reason.describe()
            ));
            let fence = fence(&s.code);
            out.push_str(&format!("{fence}{}\n", code_tag(language)));
            out.push_str(&s.code);
            if !s.code.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&fence);
            out.push('\n');
            for m in &s.not_in_context {
                out.push_str(&format!(
                    "[NOT IN CONTEXT] {} ({}:{})\n",
                    m.qualified_name, m.path, m.line
                ));
            }
        }
    }
    out
}

fn rendering_name(r: Rendering) -> &'static str {
    match r {
        Rendering::Full => "full",
        Rendering::Signature => "signature",
    }
}

fn dropped_text(format: Format, dropped: &[DroppedSymbol]) -> String {
    if dropped.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    match format {
        Format::Xml => {
            out.push_str("<dropped>\n");
            for d in dropped {
                out.push_str(&format!(
                    "<symbol name=\"{}\" path=\"{}\" line=\"{}\" tokens=\"{}\" reason=\"{}\"/>\n",
                    xml_escape(&d.qualified_name),
                    xml_escape(&d.path),
                    d.line,
                    d.tokens,
                    xml_escape(&d.reason.describe())
                ));
            }
            out.push_str("</dropped>\n");
        }
        _ => {
            out.push_str("\n## Left out (did not fit)\n");
            for d in dropped {
                out.push_str(&format!(
                    "- {} ({}:{}, {}{} tokens): {}\n",
                    d.qualified_name,
                    d.path,
                    d.line,
                    if d.tokens_estimated { "about " } else { "" },
                    d.tokens,
                    d.reason.describe()
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index;

    /// The Python part of the integration tests' pack fixture (`tests/it/pack.rs`):
    /// `checkout` calls `reserve`, `charge`, `Order.total` and `monthly_report`;
    /// `api.place_order` and a test call `checkout`; `charge` calls `convert`, which calls
    /// `rate_of`; `reserve` calls `hold`.
    fn shop() -> (tempfile::TempDir, Connection) {
        let huge_body: String = (0..400)
            .map(|i| format!("    total += line_{i} * rate  # accumulate entry {i}\n"))
            .collect();
        let report = format!(
            "def monthly_report(rate):\n    \"\"\"Every order of the month, summed.\"\"\"\n    total = 0\n{huge_body}    return total\n"
        );
        let files = [
            (
                "shop/orders.py",
                "from shop.payments import charge\nfrom shop.stock import reserve\nfrom shop.report import monthly_report\n\n\
class Order:\n    \"\"\"An order placed by a customer.\"\"\"\n\n    def __init__(self, items):\n        self.items = items\n\n    def total(self):\n        return sum(i.price for i in self.items)\n\n\
def checkout(order):\n    \"\"\"Reserve the stock, then charge the customer.\"\"\"\n    reserve(order.items)\n    charge(order.total())\n    monthly_report(1)\n    return order\n",
            ),
            (
                "shop/payments.py",
                "from shop.currency import convert\n\ndef charge(amount, currency=\"EUR\"):\n    \"\"\"Charge a card; the code contains ]]> and <tags> & quotes \\\" on purpose.\"\"\"\n    s = \"]]>\"\n    return convert(amount, currency)\n",
            ),
            (
                "shop/currency.py",
                "def convert(amount, currency):\n    return amount * rate_of(currency)\n\ndef rate_of(currency):\n    return 1.0\n",
            ),
            (
                "shop/stock.py",
                "def reserve(items):\n    \"\"\"Hold the items in the warehouse.\"\"\"\n    for i in items:\n        hold(i)\n\ndef hold(item):\n    return item\n",
            ),
            ("shop/report.py", report.as_str()),
            (
                "shop/api.py",
                "from shop.orders import checkout, Order\n\ndef place_order(items):\n    return checkout(Order(items))\n",
            ),
            (
                "docs/refunds.md",
                "# Refunds\n\nA refund is paid back within the refund window of fourteen days.\n",
            ),
            (
                "scripts/nightly.py",
                "from shop.payments import charge\n\nfor overdue in [3, 5]:\n    print(\"late payment\", charge(overdue))\n",
            ),
            (
                "tests/test_orders.py",
                "from shop.orders import checkout\n\ndef test_checkout():\n    assert checkout([])\n",
            ),
        ];
        // Indexed as `Index::build` runs it with the default options.
        index::test_fixture(&files)
    }

    /// A query whose words only a file without definitions holds (documentation, here)
    /// still finds that file, through the whole-file ranking, and packs it.
    #[test]
    fn query_reaches_files_only_their_text_matches() {
        let (_dir, conn) = shop();
        let repo = Repo::load(&conn, None).unwrap();
        let target = Target::Query("how long is the refund window?".into());
        let roots = roots(&conn, &repo, &target).unwrap();
        let paths: Vec<&str> = roots
            .iter()
            .map(|&d| repo.files[repo.defs[d].file].path.as_str())
            .collect();
        assert_eq!(paths, ["docs/refunds.md"]);
        let opts = Options {
            target,
            ..Options::default()
        };
        let pack = build_in(&conn, &repo, &opts).unwrap();
        let packed: Vec<&str> = pack.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(packed, ["docs/refunds.md"]);
        assert!(pack.text.contains("fourteen days"), "{}", pack.text);
    }

    /// Lines an issue copies from the repository's issue template choose no root: the
    /// definitions the pack starts from are found from what the reporter wrote, as the files
    /// `rank-files` ranks are.
    #[test]
    fn lines_from_the_issue_template_choose_no_root() {
        let template =
            "---\nname: Bug report\n---\nDescribe how the warehouse should hold the items\n";
        let (_dir, conn) = index::test_fixture(&[
            (".github/ISSUE_TEMPLATE/bug_report.md", template),
            (
                "shop/stock.py",
                "def hold(items):\n    \"\"\"Hold the items in the warehouse.\"\"\"\n    return items\n",
            ),
            (
                "shop/payments.py",
                "def charge(card, amount):\n    \"\"\"Charge a card once.\"\"\"\n    return amount\n",
            ),
        ]);
        let repo = Repo::load(&conn, None).unwrap();
        let issue = "Describe how the warehouse should hold the items\n\nA card is charged twice.";
        let roots = roots(&conn, &repo, &Target::Query(issue.into())).unwrap();
        let names: Vec<&str> = roots
            .iter()
            .map(|&d| repo.defs[d].qualified_name.as_str())
            .collect();
        assert_eq!(names, ["shop.payments.charge"]);
    }

    /// A script without definitions is matched as a whole file and packed whole.
    #[test]
    fn query_reaches_scripts_without_definitions() {
        let (_dir, conn) = shop();
        let repo = Repo::load(&conn, None).unwrap();
        let target = Target::Query("which nightly job lists what is overdue?".into());
        let roots = roots(&conn, &repo, &target).unwrap();
        let first = &repo.defs[roots[0]];
        assert_eq!(
            (first.kind, repo.files[first.file].path.as_str()),
            (NodeKind::File, "scripts/nightly.py")
        );
        let opts = Options {
            target,
            ..Options::default()
        };
        let pack = build_in(&conn, &repo, &opts).unwrap();
        assert!(pack.files.iter().any(|f| f.path == "scripts/nightly.py"));
        assert!(pack.text.contains("for overdue in [3, 5]"), "{}", pack.text);
    }

    /// The candidates' order is what a pack takes first; a pack shows symbols by file and in
    /// source order, so the order is checked here, on `roots` and `expand`.
    #[test]
    fn pack_grows_callees_then_callers_round_by_round() {
        let (_dir, conn) = shop();
        let repo = Repo::load(&conn, None).unwrap();
        let roots = roots(&conn, &repo, &Target::Entry("shop.orders.checkout".into())).unwrap();
        let order: Vec<(String, String)> = expand(&repo, &roots)
            .into_iter()
            .map(|c| {
                let why = match c.reason {
                    Reason::Root => "root".to_string(),
                    Reason::CalleeOf { of, .. } => format!("callee of {of}"),
                    Reason::CallerOf { of, .. } => format!("caller of {of}"),
                    Reason::MemberOf { of } => format!("member of {of}"),
                };
                (repo.defs[c.def].qualified_name.clone(), why)
            })
            .collect();
        let pos = |qn: &str| {
            order
                .iter()
                .position(|(q, _)| q == qn)
                .unwrap_or_else(|| panic!("{qn} not a candidate: {order:?}"))
        };
        assert_eq!(order[0], ("shop.orders.checkout".into(), "root".into()));
        // Round 1: callees of the root, then its callers.
        let callees = [
            "shop.payments.charge",
            "shop.stock.reserve",
            "shop.orders.Order.total",
        ];
        for c in callees {
            assert_eq!(
                order[pos(c)].1,
                "callee of shop.orders.checkout",
                "{order:?}"
            );
        }
        let caller = pos("shop.api.place_order");
        assert_eq!(order[caller].1, "caller of shop.orders.checkout");
        assert!(callees.iter().all(|c| pos(c) < caller), "{order:?}");
        // Round 2: callees of round 1 (charge -> convert, reserve -> hold), after every
        // caller of round 1, and before their own callers.
        let convert = pos("shop.currency.convert");
        assert_eq!(order[convert].1, "callee of shop.payments.charge");
        assert!(convert > caller && pos("shop.stock.hold") > caller);
        let test_caller = pos("tests.test_orders.test_checkout");
        assert_eq!(order[test_caller].1, "caller of shop.orders.checkout");
        // Round 3 reaches rate_of through convert.
        assert!(pos("shop.currency.rate_of") > convert);
    }
}
