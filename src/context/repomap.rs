//! The repo map: the definitions that matter most, by personalized PageRank over the
//! reference graph, rendered as signature, location and first docstring line, most relevant
//! first, filling the token budget.
//!
//! The walk restarts at the focus (files, symbols) and at what the query names: definitions
//! whose name is written in it as code, and its best full-text hits. Without either it
//! restarts anywhere but tests, migrations and documentation. The stationary rank is then
//! discounted for tests, migrations and documentation, the one adjustment the evaluation tasks
//! supported (see `SECONDARY`).

use crate::context::cursor::{self, Positions};
use crate::context::defgraph::{Def, Repo};
use crate::context::render;
use crate::context::tokens::{self, Account, ListedOnce, Tokenizer};
use crate::model::NodeKind;
use crate::query::rank_files;
use crate::query::resolve_target;
use anyhow::{bail, Result};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub budget: usize,
    /// Files (paths) or definitions (qualified names) to centre the map on.
    pub focus: Vec<String>,
    pub query: Option<String>,
    pub format: Format,
    pub tokenizer: Tokenizer,
    /// List the best definitions left out, as many as fit.
    pub show_dropped: bool,
    /// Continue after the maps this cursor (a `next_cursor`) stands for: the definitions
    /// they showed are left out of this one.
    pub cursor: Option<String>,
    /// End the text with the cursor that continues after this map, when anything is left.
    pub offer_cursor: bool,
}

impl Options {
    pub const DEFAULT_BUDGET: usize = 4000;

    /// What a cursor of this map answers: the same ranking is made only from the same
    /// query and focus.
    fn question(&self) -> String {
        format!("{:?}\0{:?}", self.query, self.focus)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Self::DEFAULT_BUDGET,
            focus: Vec::new(),
            query: None,
            format: Format::default(),
            tokenizer: Tokenizer::default(),
            show_dropped: false,
            cursor: None,
            offer_cursor: false,
        }
    }
}

/// Score factor of tests, migrations and documentation. Measured on the Django tasks (map
/// at 4k tokens, gold file / gold symbol): 0.3 gave 0.895 / 0.641, no discount 0.895 / 0.592.
/// Also measured and left out: halving names defined in more than five places (0.886 /
/// 0.621 with it), halving `_private` names (0.886 / 0.641), doubling long identifiers
/// (0.895 / 0.592).
pub const SECONDARY: f64 = 0.3;

/// A query's full-text hits that seed the walk (300 did worse on the Django tasks).
const QUERY_HITS: usize = 100;

/// Definitions with a score, best first: PageRank restarting at `seeds` (definitions with
/// weights), or, without seeds, anywhere but tests, migrations and documentation. File nodes
/// are ranked (module-level code calls things) but never listed.
pub fn rank_definitions(repo: &Repo, seeds: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let mut restart = vec![0.0; repo.defs.len()];
    for &(d, w) in seeds {
        restart[d] += w;
    }
    if restart.iter().all(|&w| w == 0.0) {
        for (i, d) in repo.defs.iter().enumerate() {
            restart[i] = if repo.files[d.file].secondary {
                0.1
            } else {
                1.0
            };
        }
    }
    let rank = repo.pagerank(&restart);
    let mut scored: Vec<(usize, f64)> = repo
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind != NodeKind::File)
        .map(|(i, d)| {
            let factor = if repo.files[d.file].secondary {
                SECONDARY
            } else {
                1.0
            };
            (i, rank[i] * factor)
        })
        .filter(|&(_, s)| s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

/// Where a query restarts the walk: its best full-text hits (`hits`, best first, of which
/// the first `QUERY_HITS`), weighted by score (the best 1), and the definitions it names as
/// code, 1 shared among same-named ones.
pub fn query_seeds(
    repo: &Repo,
    query: &str,
    hits: &[rank_files::DefinitionHit],
) -> Vec<(usize, f64)> {
    let mut seeds = Vec::new();
    let best = hits.iter().map(|h| h.score).fold(0.0, f64::max);
    if best > 0.0 {
        for h in hits.iter().take(QUERY_HITS) {
            if let Some(i) = repo.index_of(h.node) {
                seeds.push((i, h.score / best));
            }
        }
    }
    for token in query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
        for part in token
            .split('.')
            .filter(|p| rank_files::looks_like_identifier(p))
        {
            let defs = repo.named(part);
            if !defs.is_empty() {
                let share = 1.0 / defs.len() as f64;
                seeds.extend(defs.iter().map(|&d| (d as usize, share)));
            }
        }
    }
    seeds
}

/// A query's full-text hits over definitions, best first (none for a query without words).
pub fn query_hits(
    conn: &Connection,
    query: &str,
    limit: usize,
) -> Result<Vec<rank_files::DefinitionHit>> {
    rank_files::definition_hits(conn, query, limit)
}

/// Focus arguments as definitions: a file path means its definitions, anything else one
/// definition by (unambiguous) name.
fn focus_defs(conn: &Connection, repo: &Repo, focus: &[String]) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for f in focus {
        let id = resolve_target(conn, f)?;
        let Some(i) = repo.index_of(id) else {
            bail!("{f:?} is outside the part of the repository being mapped");
        };
        if repo.defs[i].kind == NodeKind::File {
            let range = repo.defs_of_file(repo.defs[i].file);
            out.extend(range);
        } else {
            out.push(i);
        }
    }
    Ok(out)
}

#[derive(Debug, Serialize)]
pub struct MapEntry {
    /// Index into the `Repo` the map was rendered from.
    #[serde(skip)]
    pub def: usize,
    pub qualified_name: String,
    pub kind: &'static str,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    pub score: f64,
}

#[derive(Debug, Serialize)]
pub struct RepoMap {
    pub schema: &'static str,
    #[serde(flatten)]
    pub account: Account,
    pub definitions_total: usize,
    pub focus: Vec<String>,
    /// The query's first `render::QUERY_SHOWN` characters (the whole text is not worth its
    /// tokens).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "stated_query"
    )]
    pub query: Option<String>,
    pub entries: Vec<MapEntry>,
    /// Definitions shown by the maps the cursor continued after.
    #[serde(skip_serializing_if = "cursor::none_shown")]
    pub shown_before: usize,
    /// Continues after this map and those before it; `None` when nothing is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// With `show_dropped`: the best definitions left out, best first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_top: Vec<String>,
    /// The rendering (for `json`, this document without this field).
    #[serde(skip)]
    pub text: String,
}

/// Tokens kept for the line offering a cursor (a check and a few runs of positions).
const CURSOR_RESERVE: usize = 40;

/// Stop scanning for more entries once the budget has less room than this, or after this
/// many entries in a row did not fit.
const ROOM_FLOOR: usize = 8;
const MISSES_IN_A_ROW: usize = 200;
/// Dropped names listed on request, at most.
const DROPPED_LISTED: usize = 50;
/// Tokens kept free beside the list of what was left out, for the header's count to grow
/// by a digit.
const DROPPED_MARGIN: usize = 2;

/// The map `opts` asks for (`repo` must be the whole of `conn`'s definitions graph).
pub fn render_in(conn: &Connection, repo: &Repo, opts: &Options) -> Result<RepoMap> {
    let mut seeds: Vec<(usize, f64)> = focus_defs(conn, repo, &opts.focus)?
        .into_iter()
        .map(|d| (d, 1.0))
        .collect();
    if let Some(q) = &opts.query {
        let q = rank_files::own_query(conn, q)?;
        let hits = query_hits(conn, &q, QUERY_HITS)?;
        seeds.extend(query_seeds(repo, &q, &hits));
    }
    let ranked = rank_definitions(repo, &seeds);
    if ranked.is_empty() {
        bail!("the index holds no definitions to map");
    }
    let before = match &opts.cursor {
        Some(c) => {
            let identity = |k: usize| repo.defs[ranked[k].0].qualified_name.clone();
            let shown = cursor::decode(c, "map", &opts.question(), 1, ranked.len(), &identity)?;
            shown.sets.into_iter().next().unwrap_or_default()
        }
        None => Positions::default(),
    };
    render_ranked(repo, &ranked, &before, opts)
}

/// Renders the best of `ranked` that fit the budget, those at the positions `before` aside.
fn render_ranked(
    repo: &Repo,
    ranked: &[(usize, f64)],
    before: &Positions,
    opts: &Options,
) -> Result<RepoMap> {
    let tk = opts.tokenizer;
    let mut map = RepoMap {
        schema: "codebase-indexer/map/1",
        account: Account {
            tokenizer: tk,
            budget: opts.budget,
            ..Account::default()
        },
        definitions_total: ranked.len(),
        focus: opts.focus.clone(),
        query: opts.query.clone(),
        entries: Vec::new(),
        shown_before: before.len(),
        next_cursor: None,
        dropped_top: Vec::new(),
        text: String::new(),
    };
    let header_room = tk.count(&header(&map, 0, ranked.len(), 0));
    let cursor_room = if opts.offer_cursor { CURSOR_RESERVE } else { 0 };
    let room = opts.budget.saturating_sub(
        header_room + cursor_room + tokens::dropped_reserve(opts.budget, opts.show_dropped),
    );
    // Greedy by rank: an entry costs its lines, plus its file's header when it is the first
    // of its file.
    let mut taken: Vec<usize> = Vec::new();
    let mut files_in: std::collections::HashSet<usize> = Default::default();
    let (mut used, mut misses) = (0, 0);
    for (k, &(def, score)) in ranked.iter().enumerate() {
        if room - used < ROOM_FLOOR || misses >= MISSES_IN_A_ROW {
            break;
        }
        if before.contains(k) {
            continue;
        }
        let d = &repo.defs[def];
        let mut cost = match opts.format {
            Format::Text => tk.count(&entry_text(d)),
            Format::Json => json_cost(tk, &entry(repo, def, score)),
        };
        if !files_in.contains(&d.file) {
            cost += match opts.format {
                Format::Text => tk.count(&format!("{}\n", repo.files[d.file].path)),
                Format::Json => 0,
            };
        }
        if used + cost <= room {
            used += cost;
            taken.push(k);
            files_in.insert(d.file);
            misses = 0;
        } else {
            misses += 1;
        }
    }
    let mut listed = ListedOnce::default();
    let fitted = tokens::fit_exact(tk, opts.budget, taken, |taken, n| {
        let mut m = RepoMap {
            entries: Vec::new(),
            next_cursor: None,
            dropped_top: Vec::new(),
            text: String::new(),
            focus: map.focus.clone(),
            query: map.query.clone(),
            account: map.account.clone(),
            ..map
        };
        fill(&mut m, repo, ranked, before, taken, n, &mut listed, opts);
        m.text
    });
    let Some((taken, _, n)) = fitted else {
        bail!(
            "a budget of {} tokens cannot hold even the map's header ({header_room} tokens)",
            opts.budget
        );
    };
    fill(&mut map, repo, ranked, before, &taken, n, &mut listed, opts);
    Ok(map)
}

/// Sets `map`'s entries, account, cursor and text for the entries `taken` (indexes into
/// `ranked`) after those `before`, its text stating `tokens` as its own count.
#[allow(clippy::too_many_arguments)]
fn fill(
    map: &mut RepoMap,
    repo: &Repo,
    ranked: &[(usize, f64)],
    before: &Positions,
    taken: &[usize],
    tokens: usize,
    listed: &mut ListedOnce,
    opts: &Options,
) {
    map.entries = taken
        .iter()
        .map(|&k| entry(repo, ranked[k].0, ranked[k].1))
        .collect();
    map.account.tokens = tokens;
    map.account.included = taken.len();
    map.account.dropped = ranked.len() - taken.len() - before.len();
    // A page that showed nothing would be followed by the same page.
    map.next_cursor = (map.account.dropped > 0 && !taken.is_empty()).then(|| {
        let shown = cursor::Shown {
            sets: vec![before.with(taken.iter().copied())],
        };
        let identity = |k: usize| repo.defs[ranked[k].0].qualified_name.clone();
        cursor::encode("map", &opts.question(), &shown, &identity)
    });
    let cursor_line = match &map.next_cursor {
        Some(c) if opts.offer_cursor => cursor::offer_line("this map", c),
        _ => String::new(),
    };
    // Shown here or before: not listed as left out.
    let in_map: std::collections::HashSet<usize> =
        taken.iter().copied().chain(before.iter()).collect();
    let left_out: Vec<&str> = ranked
        .iter()
        .enumerate()
        .filter(|(k, _)| !in_map.contains(k))
        .take(if opts.show_dropped { DROPPED_LISTED } else { 0 })
        .map(|(_, &(d, _))| repo.defs[d].qualified_name.as_str())
        .collect();
    map.dropped_top = Vec::new();
    let head = header(map, taken.len(), ranked.len(), tokens);
    match opts.format {
        Format::Text => {
            let mut text = head;
            // Files in the order of their best entry, entries in source order.
            let mut order: Vec<usize> = Vec::new();
            let mut by_file: HashMap<usize, Vec<usize>> = HashMap::new();
            for &k in taken {
                let def = ranked[k].0;
                let file = repo.defs[def].file;
                by_file
                    .entry(file)
                    .or_insert_with(|| {
                        order.push(file);
                        Vec::new()
                    })
                    .push(def);
            }
            for file in order {
                text.push_str(&repo.files[file].path);
                text.push('\n');
                let mut defs = by_file.remove(&file).unwrap_or_default();
                defs.sort_by_key(|&d| (repo.defs[d].start_byte, d));
                for d in defs {
                    text.push_str(&entry_text(&repo.defs[d]));
                }
            }
            let n = if left_out.is_empty() {
                0
            } else {
                listed.get(taken.len(), || {
                    let reserve = opts.tokenizer.count(&cursor_line);
                    dropped_that_fit(&text, &left_out, reserve, opts)
                })
            };
            if n > 0 {
                text.push_str("# left out, best first: ");
                text.push_str(&left_out[..n].join(", "));
                text.push('\n');
            }
            text.push_str(&cursor_line);
            map.text = text;
        }
        Format::Json => {
            map.text = serde_json::to_string_pretty(&*map).unwrap_or_default() + "\n";
            if !left_out.is_empty() {
                let n = listed.get(taken.len(), || {
                    // As many of the best left out as the room left holds, each name costing
                    // its line as printed; a margin for the list's own brackets.
                    let tk = opts.tokenizer;
                    let mut room = opts.budget.saturating_sub(tk.count(&map.text) + 8);
                    left_out
                        .iter()
                        .take_while(|name| {
                            let cost = tk.count(&format!("    \"{name}\",\n")) + 1;
                            let fits = cost <= room;
                            room = room.saturating_sub(cost);
                            fits
                        })
                        .count()
                });
                map.dropped_top = left_out[..n].iter().map(|s| s.to_string()).collect();
                map.text = serde_json::to_string_pretty(&*map).unwrap_or_default() + "\n";
            }
        }
    }
}

/// How many of the best definitions left out (`names`, best first) the list after `text` has
/// room for, `reserve` tokens kept for what follows it (the count of the whole is checked
/// afterwards by the caller).
fn dropped_that_fit(text: &str, names: &[&str], reserve: usize, opts: &Options) -> usize {
    // The room is measured on the text, not on the count its header states: a list whose
    // length followed that count would change the count in turn, and the search for a
    // self-consistent count would not settle (measured: 1.5 s of retries on Django at 4k).
    let tk = opts.tokenizer;
    let room = opts
        .budget
        .saturating_sub(tk.count(text) + reserve + DROPPED_MARGIN);
    // A name and the comma before it split into tokens of their own.
    let mut used = tk.count("# left out, best first:") + 2;
    names
        .iter()
        .take_while(|name| {
            used += tk.count(&format!(", {name}"));
            used <= room
        })
        .count()
}

fn stated_query<S: serde::Serializer>(query: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    query
        .as_deref()
        .map(|q| render::short_query(q, render::QUERY_SHOWN))
        .serialize(s)
}

fn header(map: &RepoMap, included: usize, total: usize, tokens: usize) -> String {
    let mut centred = Vec::new();
    if !map.focus.is_empty() {
        centred.push(format!("focus {}", map.focus.join(", ")));
    }
    if let Some(q) = &map.query {
        centred.push(format!("query \"{}\"", render::short_query(q, 60)));
    }
    let centred = if centred.is_empty() {
        String::new()
    } else {
        format!(", centred on {}", centred.join("; "))
    };
    let before = match map.shown_before {
        0 => String::new(),
        n => format!(" after {n} shown before"),
    };
    format!(
        "# repo map: {included} of {total} definitions by PageRank{before}{centred}; {tokens} of {} tokens ({}), {} left out\n",
        map.account.budget,
        map.account.tokenizer.as_str(),
        total - included - map.shown_before
    )
}

/// `  301  class QuerySet(AltersData):  # django.db.models.query.QuerySet` and the docstring's
/// first line under it.
fn entry_text(d: &Def) -> String {
    let mut out = String::new();
    let lines = crate::context::render::signature_lines(d, 0);
    for (i, line) in lines.lines().enumerate() {
        if i == 0 {
            out.push_str(&format!("{:>6}  ", d.start_line));
        } else {
            out.push_str("        ");
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(doc) = &d.doc_line {
        out.push_str("          ");
        out.push_str(doc);
        out.push('\n');
    }
    out
}

fn entry(repo: &Repo, def: usize, score: f64) -> MapEntry {
    let d = &repo.defs[def];
    MapEntry {
        def,
        qualified_name: d.qualified_name.clone(),
        kind: d.kind.as_str(),
        path: repo.files[d.file].path.clone(),
        start_line: d.start_line,
        end_line: d.end_line,
        signature: d.signature.clone().unwrap_or_else(|| d.name.clone()),
        doc: d.doc_line.clone(),
        score: (score * 1e9).round() / 1e9,
    }
}

/// Tokens an entry adds to the pretty JSON document: its own pretty text, plus a token of
/// indentation per line.
fn json_cost(tk: Tokenizer, e: &MapEntry) -> usize {
    let text = serde_json::to_string_pretty(e).unwrap_or_default();
    tk.count(&text) + text.lines().count() + 1
}
