//! Change impact: from a git diff to what a reviewer or an agent must see to reason about
//! the change, under a token budget. The diff's hunks are mapped onto the definitions they
//! touch on both sides (`changes`); every other definition is scored by four signals
//! blended by weights (`signals`); the changed definitions come first in full with their
//! diff, then the best-scored context, each saying why it is there.

pub mod changes;
pub mod diff;
pub mod signals;

use crate::context::defgraph::{source_of, Contents, Repo, REFERENCE_KINDS};
use crate::context::pack::Format;
use crate::context::pack::Rendering;
use crate::context::render::{cdata, fence, signature_lines, xml_escape};
use crate::context::tokens::{self, Account, Tokenizer};
use crate::model::NodeKind;
use crate::store;
use anyhow::Result;
use changes::{Change, ChangedSymbol};
use rusqlite::Connection;
use serde::Serialize;
use signals::{Signals, Via, Weights};
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub use diff::Spec;

/// The defaults: the best weights on a 0.1 grid over the evaluation of seven repositories'
/// histories (`scripts/impact_eval.py`; README, "Change impact"), the weights that
/// leave-one-repository-out validation chose for five of the seven.
pub const DEFAULT_WEIGHTS: Weights = Weights {
    graph: 0.6,
    bm25: 0.2,
    same_file: 0.1,
    cochange: 0.1,
};

#[derive(Clone, Debug)]
pub struct Options {
    pub spec: Spec,
    /// Only these changed definitions (qualified names) start the analysis; all by default.
    pub symbols: Vec<String>,
    pub budget: usize,
    /// Hops through callers and callees for the graph signal.
    pub depth: usize,
    pub format: Format,
    /// The analysis only: changed symbols and scored candidates, no code.
    pub graph_only: bool,
    pub weights: Weights,
    pub tokenizer: Tokenizer,
}

impl Options {
    pub const DEFAULT_BUDGET: usize = 8000;
    pub const DEFAULT_DEPTH: usize = 2;
}

impl Default for Options {
    fn default() -> Self {
        Options {
            spec: Spec::Worktree,
            symbols: Vec::new(),
            budget: Self::DEFAULT_BUDGET,
            depth: Self::DEFAULT_DEPTH,
            format: Format::default(),
            graph_only: false,
            weights: DEFAULT_WEIGHTS,
            tokenizer: Tokenizer::default(),
        }
    }
}

/// A definition scored for the context.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub qualified_name: String,
    pub kind: &'static str,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f64,
    pub signals: Signals,
    /// Why: the graph hop that reached it, and the other signals that count.
    pub why: String,
    #[serde(skip)]
    pub def: usize,
}

/// A context definition as shown.
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    #[serde(flatten)]
    pub candidate: Candidate,
    pub rendering: Rendering,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub code: String,
    pub callers: Vec<Neighbor>,
    pub callees: Vec<Neighbor>,
}

/// A caller or callee of a shown definition, and whether the output holds it.
#[derive(Clone, Debug, Serialize)]
pub struct Neighbor {
    pub qualified_name: String,
    pub in_context: bool,
}

/// The impact of a diff; as JSON this is the documented schema (`codebase-indexer/impact/1`).
#[derive(Clone, Debug, Serialize)]
pub struct Impact {
    pub schema: &'static str,
    /// What was compared, and the commits of its sides.
    pub diff: String,
    pub base: Option<String>,
    pub head: Option<String>,
    pub files_changed: usize,
    pub weights: Weights,
    #[serde(flatten)]
    pub account: Account,
    pub code_tokens: usize,
    /// Changed symbols in all, and those shown (the first ones, in diff order).
    pub changed_total: usize,
    pub changed: Vec<ChangedSymbol>,
    /// Definitions scored, and the best of them in order; with `graph_only` as many as fit,
    /// otherwise those shown.
    pub candidates_scored: usize,
    pub context: Vec<Shown>,
    /// The best candidates left out, with their scores.
    pub dropped_top: Vec<Candidate>,
    #[serde(skip)]
    pub format: Format,
    #[serde(skip)]
    pub text: String,
}

/// Candidates listed at most as left out.
const DROPPED_LISTED: usize = 10;
/// Callers and callees named per shown definition.
const NEIGHBORS_LISTED: usize = 6;

/// What an impact needs besides the whole definitions graph, read while that graph loads:
/// the diff from git, the definitions it changes (matched to the index's nodes), their
/// full-text matches in the index, and the history before the diff.
pub struct Prepared {
    diff: diff::Diff,
    changed: Vec<ChangedSymbol>,
    /// Nodes similar to the changed code: (node id, BM25 score with the best 1).
    bm25: Vec<(i64, f64)>,
    history: Vec<store::history::Commit>,
}

/// Reads the diff of `opts.spec` in the git repository holding `root`, maps it onto the
/// index at `db`, and reads the history of its old side (`history_of`).
pub fn prepare(root: &Path, db: &Path, opts: &Options) -> Result<Prepared> {
    if opts.budget == 0 {
        crate::error::invalid!("the budget must be at least 1 token");
    }
    let spec = &opts.spec;
    let conn = store::open(db, store::Mode::ReadOnly)?;
    let indexed = match spec {
        Spec::Worktree => store::file_paths(&conn)?,
        _ => Vec::new(),
    };
    let d = diff::read(root, spec, &indexed)?;
    if d.files.is_empty() {
        crate::error::invalid!("{} changes nothing", spec.describe());
    }
    let texts = diff::texts(root, &d.files)?;
    let paths = d
        .files
        .iter()
        .flat_map(|f| [&f.old_path, &f.new_path])
        .flatten()
        .map(String::as_str);
    let index = changes::IndexFiles::load(&conn, paths)?;
    let mut changed = changes::changed_symbols(&d.files, &texts, &index);
    let listed = || {
        let mut l: Vec<&str> = d.files.iter().map(|f| f.path()).take(5).collect();
        if d.files.len() > 5 {
            l.push("...");
        }
        l.join(", ")
    };
    if changed.is_empty() {
        crate::error::invalid!(
            "{} changes no code the index holds: {} files ({}), binary, empty or left out of the index",
            spec.describe(),
            d.files.len(),
            listed()
        );
    }
    if !opts.symbols.is_empty() {
        let wanted: HashSet<&str> = opts.symbols.iter().map(String::as_str).collect();
        let unknown: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|w| !changed.iter().any(|c| c.qualified_name == *w))
            .collect();
        if !unknown.is_empty() {
            crate::error::invalid!(
                "not changed by {}: {} (changed: {})",
                spec.describe(),
                unknown.join(", "),
                changed
                    .iter()
                    .map(|c| c.qualified_name.as_str())
                    .take(20)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        changed.retain(|c| wanted.contains(c.qualified_name.as_str()));
    }
    if !changed.iter().any(|c| c.in_index) {
        crate::error::invalid!(
            "{} changes only code the index does not hold ({}): run `indexer index` on the tree at the new side",
            spec.describe(),
            listed()
        );
    }
    let code: Vec<&str> = changed.iter().map(|c| c.code.as_str()).collect();
    let bm25 = signals::bm25(&conn, &code)?;
    // Only what came before the change: the old side's history.
    let history = match &d.base {
        Some(base) => history_of(root, db, &conn, base),
        None => Vec::new(),
    };
    Ok(Prepared {
        diff: d,
        changed,
        bm25,
        history,
    })
}

/// The co-change history of commit `base`: the database's cached copy when it holds that
/// commit's, otherwise read from git and cached (best effort: a database that cannot be
/// written, a read-only mount or a busy writer, only misses the cache).
fn history_of(
    root: &Path,
    db: &Path,
    conn: &Connection,
    base: &str,
) -> Vec<store::history::Commit> {
    let (h, cached) = read_history(root, conn, base);
    if !cached && !h.is_empty() {
        let _ = store::history::save(db, base, signals::HISTORY_COMMITS, &h);
    }
    h
}

/// The co-change history of commit `base`, `HISTORY_COMMITS` deep, and whether it came from
/// the database's cache (else from git; empty outside git).
pub fn read_history(
    root: &Path,
    conn: &Connection,
    base: &str,
) -> (Vec<store::history::Commit>, bool) {
    let limit = signals::HISTORY_COMMITS;
    match store::history::cached(conn, base, limit) {
        Ok(Some(h)) => (h, true),
        _ => (diff::history(root, base, limit).unwrap_or_default(), false),
    }
}

/// The files whose definitions an impact of `prepared` scores: those of the changed
/// definitions and of their full-text matches, the files that changed with them, and the
/// files of every definition within `depth` hops of them (found through the edges' indexes).
/// The graph of these files alone scores every candidate as the whole graph does: a path of
/// at most `depth` hops from a changed definition only passes through them.
pub fn files_needed(conn: &Connection, prepared: &Prepared, depth: usize) -> Result<HashSet<i64>> {
    let seeds: Vec<i64> = prepared.changed.iter().filter_map(|c| c.node).collect();
    let mut files: HashSet<i64> = prepared
        .bm25
        .iter()
        .map(|&(node, _)| crate::ids::file_of(node))
        .collect();
    let paths: Vec<&str> = prepared.changed.iter().map(|c| c.path.as_str()).collect();
    files.extend(
        signals::cochange(&prepared.history, &paths)
            .keys()
            .map(|p| crate::ids::file_id(p)),
    );
    let edge = |end: &str, other: &str| {
        format!("SELECT {other} FROM edges WHERE {end} = ?1 AND kind IN ({REFERENCE_KINDS})")
    };
    let mut callees = conn.prepare_cached(&edge("source_id", "target_id"))?;
    let mut callers = conn.prepare_cached(&edge("target_id", "source_id"))?;
    let mut reached: HashSet<i64> = seeds.iter().copied().collect();
    let mut frontier = seeds;
    for _ in 0..depth {
        let mut next = Vec::new();
        for &node in &frontier {
            for q in [&mut callees, &mut callers] {
                for other in q.query_map([node], |r| r.get::<_, i64>(0))? {
                    let other = other?;
                    if reached.insert(other) {
                        next.push(other);
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    files.extend(reached.into_iter().map(crate::ids::file_of));
    Ok(files)
}

/// The impact of `prepared` on the index `conn` and its definitions graph `repo`: the whole
/// graph, or that of the files `files_needed` names.
pub fn build_in(
    conn: &Connection,
    repo: &Repo,
    prepared: Prepared,
    opts: &Options,
) -> Result<Impact> {
    let Prepared {
        diff: d,
        mut changed,
        bm25,
        history,
    } = prepared;
    changes::resolve(&mut changed, repo);
    let bm25 = bm25
        .into_iter()
        .filter_map(|(node, score)| Some((repo.index_of(node)?, score)))
        .collect();
    let candidates = score(repo, &history, &bm25, &changed, opts);
    let scored = candidates.len();
    render(conn, repo, d, changed, candidates, scored, opts)
}

/// Every candidate, best first.
fn score(
    repo: &Repo,
    history: &[store::history::Commit],
    bm25: &HashMap<usize, f64>,
    changed: &[ChangedSymbol],
    opts: &Options,
) -> Vec<Candidate> {
    let seeds: Vec<usize> = changed.iter().filter_map(|c| c.def).collect();
    let changed_files: HashSet<usize> = seeds.iter().map(|&s| repo.defs[s].file).collect();
    let code_seeds: Vec<usize> = seeds
        .iter()
        .copied()
        .filter(|&s| repo.defs[s].kind != NodeKind::File)
        .collect();
    let graph = signals::graph(repo, &seeds, opts.depth);
    let paths: Vec<&str> = changed.iter().map(|c| c.path.as_str()).collect();
    let cochange = signals::cochange(history, &paths);
    let mut out: Vec<Candidate> =
        signals::gather(repo, &seeds, &changed_files, &graph, bm25, &cochange)
            .into_iter()
            .map(|(def, s, via)| {
                let dd = &repo.defs[def];
                Candidate {
                    qualified_name: dd.qualified_name.clone(),
                    kind: dd.kind.as_str(),
                    path: repo.files[dd.file].path.clone(),
                    start_line: dd.start_line,
                    end_line: dd.end_line,
                    score: opts.weights.blend(&s),
                    why: why(repo, &s, via),
                    signals: s,
                    def,
                }
            })
            .filter(|c| c.score > 0.0)
            // What a changed definition holds is shown with it.
            .filter(|c| !code_seeds.iter().any(|&s| repo.is_within(c.def, s)))
            .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.def.cmp(&b.def)));
    out
}

fn why(repo: &Repo, s: &Signals, via: Option<Via>) -> String {
    let mut parts = Vec::new();
    if let Some(v) = via {
        let of = &repo.defs[v.from].qualified_name;
        let rel = if v.caller { "caller of" } else { "callee of" };
        parts.push(format!(
            "{rel} {of} ({:.2}), graph {:.2}",
            v.confidence, s.graph
        ));
    }
    if s.bm25 >= 0.005 {
        parts.push(format!("text {:.2}", s.bm25));
    }
    if s.same_file > 0.0 {
        parts.push("same file".into());
    }
    if s.cochange > 0.0 {
        parts.push(format!("co-change {:.2}", s.cochange));
    }
    parts.join(", ")
}

/// One item of the output, priced.
struct Piece {
    text: String,
    cost: usize,
}

fn render(
    conn: &Connection,
    repo: &Repo,
    d: diff::Diff,
    changed: Vec<ChangedSymbol>,
    candidates: Vec<Candidate>,
    scored: usize,
    opts: &Options,
) -> Result<Impact> {
    let tk = opts.tokenizer;
    let mut impact = Impact {
        schema: "codebase-indexer/impact/1",
        diff: d.spec.describe(),
        base: d.base.clone(),
        head: d.head.clone(),
        files_changed: d.files.len(),
        weights: opts.weights,
        account: Account {
            tokenizer: tk,
            budget: opts.budget,
            ..Account::default()
        },
        code_tokens: 0,
        changed_total: changed.len(),
        changed,
        candidates_scored: scored,
        context: Vec::new(),
        dropped_top: Vec::new(),
        format: opts.format,
        text: String::new(),
    };
    let mut contents = Contents::new(conn)?;
    // The changed symbols, in full with their diff while they fit, in diff order.
    let header_room = tk.count(&header(&impact, &impact.account, impact.changed.len(), 0))
        + 64
        + tokens::dropped_reserve(opts.budget, true);
    let mut room = opts.budget.saturating_sub(header_room);
    let mut changed_pieces = Vec::new();
    for c in &impact.changed {
        let p = changed_piece(opts.format, c, tk);
        if p.cost > room {
            break;
        }
        room -= p.cost;
        changed_pieces.push(p);
    }
    // Then the context, best first, whole or as a signature, skipping what does not fit.
    let mut shown: Vec<(Shown, Piece)> = Vec::new();
    let mut dropped = Vec::new();
    let mut in_context: HashSet<usize> = impact
        .changed
        .iter()
        .filter_map(|c| c.def)
        .filter(|&d| repo.defs[d].kind != NodeKind::File)
        .collect();
    let mut misses = 0;
    for c in candidates {
        if misses >= 100 || room < 16 {
            dropped.push(c);
            continue;
        }
        let def = &repo.defs[c.def];
        if in_context.iter().any(|&t| repo.is_within(c.def, t)) {
            continue;
        }
        let content = contents.of(repo.files[def.file].id)?;
        let renderings: &[Rendering] = if opts.graph_only {
            &[Rendering::Signature]
        } else {
            &[Rendering::Full, Rendering::Signature]
        };
        // A definition whose members are shown already is shown by its signature.
        let holds_shown = shown
            .iter()
            .any(|(s, _)| repo.is_within(s.candidate.def, c.def));
        let renderings = if holds_shown {
            &renderings[renderings.len() - 1..]
        } else {
            renderings
        };
        let mut placed = false;
        for &rendering in renderings {
            let code = match rendering {
                Rendering::Full => source_of(&content, def).to_string(),
                Rendering::Signature if opts.graph_only => String::new(),
                Rendering::Signature => signature_lines(def, 0),
            };
            // Its code alone could not fit: not worth tokenizing.
            if tokens::floor(&code) > room {
                continue;
            }
            let s = Shown {
                rendering,
                code,
                callers: Vec::new(),
                callees: Vec::new(),
                candidate: c.clone(),
            };
            let p = context_piece(opts.format, &s, tk);
            if p.cost <= room {
                room -= p.cost;
                in_context.insert(c.def);
                shown.push((s, p));
                placed = true;
                break;
            }
        }
        if placed {
            misses = 0;
        } else {
            misses += 1;
            dropped.push(c);
        }
    }
    // Callers and callees of what is shown, marked when the output does not hold them
    // (the exact fit below counts what they add).
    let in_context: HashSet<i64> = in_context.iter().map(|&d| repo.defs[d].id).collect();
    for (s, p) in &mut shown {
        let id = repo.defs[s.candidate.def].id;
        s.callers = neighbors(conn, id, true, &in_context)?;
        s.callees = neighbors(conn, id, false, &in_context)?;
        p.text = context_text(opts.format, s);
    }
    // The best left out, as many as the room kept for them holds.
    let reserve = tokens::dropped_reserve(opts.budget, true);
    let mut used = 0;
    for c in dropped.into_iter().take(DROPPED_LISTED) {
        let cost = tk.count(&dropped_line(opts.format, &c));
        if used + cost > reserve {
            break;
        }
        used += cost;
        impact.dropped_top.push(c);
    }
    let all_changed = std::mem::take(&mut impact.changed);
    let changed_total = all_changed.len();
    let changed_fit = changed_pieces.len();
    let (context, context_pieces): (Vec<Shown>, Vec<Piece>) = shown.into_iter().unzip();
    let mut pieces: Vec<Piece> = changed_pieces;
    pieces.extend(context_pieces);
    // The fit drops pieces from the end, so what it keeps is always the first `k`.
    let view = |k: usize, tokens: usize| {
        let changed_shown = k.min(changed_fit);
        let context_shown = k - changed_shown;
        let mut account = impact.account.clone();
        account.tokens = tokens;
        account.included = k;
        account.dropped = changed_total - changed_shown + scored - context_shown;
        (changed_shown, context_shown, account)
    };
    // The tokens of code each piece shows, in the order of `pieces`.
    let code_tokens: Vec<usize> = all_changed[..changed_fit]
        .iter()
        .map(|c| tk.count(changed_code(c)) + tk.count(&c.diff))
        .chain(context.iter().map(|s| tk.count(&s.code)))
        .collect();
    let fitted = tokens::fit_exact(tk, opts.budget, (0..pieces.len()).collect(), |taken, n| {
        let (changed_shown, context_shown, account) = view(taken.len(), n);
        if opts.format == Format::Json {
            let probe = Impact {
                account,
                code_tokens: code_tokens[..taken.len()].iter().sum(),
                changed: all_changed[..changed_shown].to_vec(),
                context: context[..context_shown].to_vec(),
                dropped_top: impact.dropped_top.clone(),
                ..impact.clone()
            };
            return serde_json::to_string_pretty(&probe).unwrap_or_default() + "\n";
        }
        let mut out = header(&impact, &account, changed_total, changed_shown);
        for (i, p) in pieces[..taken.len()].iter().enumerate() {
            if i == 0 || i == changed_shown {
                out.push_str(&section_title(opts.format, i >= changed_shown));
            }
            out.push_str(&p.text);
        }
        if !impact.dropped_top.is_empty() && opts.format == Format::Markdown {
            out.push_str("\n## Left out (best first)\n");
            for c in &impact.dropped_top {
                out.push_str(&dropped_line(opts.format, c));
            }
        }
        out.push_str(footer(opts.format));
        out
    });
    let Some((taken, text, n)) = fitted else {
        crate::error::invalid!(
            "a budget of {} tokens cannot hold even the header of this impact",
            opts.budget
        );
    };
    let (changed_shown, context_shown, account) = view(taken.len(), n);
    impact.code_tokens = code_tokens[..taken.len()].iter().sum();
    impact.account = account;
    impact.changed_total = changed_total;
    impact.changed = all_changed;
    impact.changed.truncate(changed_shown);
    let mut context = context;
    context.truncate(context_shown);
    impact.context = context;
    impact.text = text;
    Ok(impact)
}

/// The callers (or callees) of node `id` as the definitions graph holds them: one per other
/// definition with its best site's confidence, file nodes left out, the most confident
/// first (ties in id order). Read from the edges, not the graph in memory, which may hold
/// only the files an impact scores.
fn neighbors(
    conn: &Connection,
    id: i64,
    callers: bool,
    in_context: &HashSet<i64>,
) -> Result<Vec<Neighbor>> {
    let (end, other) = if callers {
        ("target_id", "source_id")
    } else {
        ("source_id", "target_id")
    };
    let mut q = conn.prepare_cached(&format!(
        "SELECT n.id, n.qualified_name, max(e.confidence) AS c \
         FROM edges e JOIN nodes n ON n.id = e.{other} \
         WHERE e.{end} = ?1 AND e.{other} != ?1 AND e.kind IN ({REFERENCE_KINDS}) \
               AND n.kind != '{}' \
         GROUP BY n.id ORDER BY c DESC, n.id LIMIT {NEIGHBORS_LISTED}",
        NodeKind::File.as_str()
    ))?;
    let rows = q.query_map([id], |r| {
        let id: i64 = r.get(0)?;
        Ok(Neighbor {
            qualified_name: r.get(1)?,
            in_context: in_context.contains(&id),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A left-out candidate as listed.
fn dropped_line(format: Format, c: &Candidate) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(c).unwrap_or_default() + "\n",
        _ => format!(
            "- {}  {}:{}  score {:.3}\n",
            c.qualified_name, c.path, c.start_line, c.score
        ),
    }
}

fn header(i: &Impact, account: &Account, changed_total: usize, changed_shown: usize) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let line = format!(
        "impact of {}: {}, {} ({changed_shown} shown); {} definitions scored, {} in context, {} left out; {} of {} tokens ({})",
        i.diff,
        plural(i.files_changed, "file", "files"),
        plural(changed_total, "changed symbol", "changed symbols"),
        i.candidates_scored,
        account.included - changed_shown,
        account.dropped,
        account.tokens,
        account.budget,
        account.tokenizer.as_str(),
    );
    match i.format {
        Format::Markdown => format!("# {line}\n"),
        Format::Xml => format!("<impact>\n<meta>{}</meta>\n", xml_escape(&line)),
        Format::Json => String::new(),
    }
}

fn section_title(format: Format, context: bool) -> String {
    let title = if context { "Context" } else { "Changed" };
    match format {
        Format::Markdown => format!("\n## {title}\n"),
        Format::Xml => format!("<section name=\"{}\"/>\n", title.to_lowercase()),
        Format::Json => String::new(),
    }
}

fn footer(format: Format) -> &'static str {
    match format {
        Format::Xml => "</impact>\n",
        _ => "",
    }
}

/// What a changed symbol shows in full: its code as it is now, unless it is gone or
/// outside definitions (then its diff is all there is).
fn changed_code(c: &ChangedSymbol) -> &str {
    match c.change {
        Change::Deleted | Change::ModuleLevel => "",
        _ => c.code.as_str(),
    }
}

fn changed_piece(format: Format, c: &ChangedSymbol, tk: Tokenizer) -> Piece {
    let title = format!(
        "{}  {}:{}-{}  ({}, {}; +{} -{})",
        c.qualified_name,
        c.path,
        c.start_line,
        c.end_line,
        c.kind,
        c.change.describe(),
        c.lines_added,
        c.lines_removed
    );
    // In full as it is now, then its diff.
    let code = changed_code(c);
    let text = match format {
        Format::Markdown => {
            let mut out = format!("\n### {title}\n");
            if !code.is_empty() {
                let f = fence(code);
                out.push_str(&format!("{f}\n{}\n{f}\n", code.trim_end()));
            }
            let f = fence(&c.diff);
            out.push_str(&format!("{f}diff\n{}{f}\n", c.diff));
            out
        }
        Format::Xml => format!(
            "<changed name=\"{}\" path=\"{}\" change=\"{}\">\n<code>{}</code>\n<diff>{}</diff>\n</changed>\n",
            xml_escape(&c.qualified_name),
            xml_escape(&c.path),
            xml_escape(&c.change.describe()),
            cdata(code),
            cdata(&c.diff)
        ),
        Format::Json => serde_json::to_string_pretty(c).unwrap_or_default() + "\n",
    };
    Piece {
        cost: tk.count(&text),
        text,
    }
}

fn context_piece(format: Format, s: &Shown, tk: Tokenizer) -> Piece {
    let text = context_text(format, s);
    Piece {
        cost: tk.count(&text),
        text,
    }
}

fn context_text(format: Format, s: &Shown) -> String {
    let c = &s.candidate;
    let list = |v: &[Neighbor]| {
        v.iter()
            .map(|n| {
                if n.in_context {
                    n.qualified_name.clone()
                } else {
                    format!("{} [NOT IN CONTEXT]", n.qualified_name)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut links = String::new();
    if !s.callers.is_empty() {
        links.push_str(&format!("callers: {}\n", list(&s.callers)));
    }
    if !s.callees.is_empty() {
        links.push_str(&format!("callees: {}\n", list(&s.callees)));
    }
    let title = format!(
        "{}  {}:{}  (score {:.3}: {})",
        c.qualified_name, c.path, c.start_line, c.score, c.why
    );
    match format {
        Format::Markdown => {
            let code = if s.code.is_empty() {
                String::new()
            } else {
                let f = fence(&s.code);
                format!("{f}\n{}\n{f}\n", s.code.trim_end())
            };
            format!("\n### {title}\n{links}{code}")
        }
        Format::Xml => format!(
            "<symbol name=\"{}\" path=\"{}\" line=\"{}\" score=\"{:.3}\" why=\"{}\">\n{}{}\n</symbol>\n",
            xml_escape(&c.qualified_name),
            xml_escape(&c.path),
            c.start_line,
            c.score,
            xml_escape(&c.why),
            xml_escape(&links),
            cdata(&s.code)
        ),
        Format::Json => serde_json::to_string_pretty(s).unwrap_or_default() + "\n",
    }
}
