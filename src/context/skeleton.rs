//! The whole repository as signatures, grouped by file, under a token budget.
//!
//! Four renderings, richest first: `skeleton` (every definition's signature, imports),
//! `compact` (public, non-local definitions only, no decorators, comments, default values or
//! imports, test methods without their qualified names; about half the tokens),
//! `summary` (one line per file: counts by kind and its most important names) and `deps`
//! (one line per file: the files it imports). `auto` takes the richest of the first three
//! that fits whole, else the summary of the files that rank highest.
//!
//! A file is one item, in whole or not at all. When files must be left out, the ones kept are
//! chosen greedily by file rank (the PageRank of its definitions, tests, migrations and
//! documentation restarting less), and printed in path order.

use crate::context::cursor::{self, Positions};
use crate::context::defgraph::{Def, Repo};
use crate::context::render;
use crate::context::tokens::{self, Account, Tokenizer};
use crate::model::NodeKind;
use anyhow::{bail, Result};
use rusqlite::Connection;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    // The richest that fits.
    #[default]
    Auto,
    Skeleton,
    Compact,
    Summary,
    Deps,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Skeleton => "skeleton",
            Mode::Compact => "compact",
            Mode::Summary => "summary",
            Mode::Deps => "deps",
        }
    }

    /// Index of a rendered mode's cache.
    fn slot(self) -> usize {
        match self {
            Mode::Auto | Mode::Skeleton => 0,
            Mode::Compact => 1,
            Mode::Summary => 2,
            Mode::Deps => 3,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub budget: usize,
    pub mode: Mode,
    /// Only files whose path starts with this.
    pub path_prefix: Option<String>,
    pub tokenizer: Tokenizer,
    /// End with a line naming the files left out, as many as fit.
    pub show_dropped: bool,
    /// Continue after the skeletons this cursor (a `next_cursor`) stands for: the files
    /// they showed are left out of this one.
    pub cursor: Option<String>,
    /// End the text with the cursor that continues after this skeleton, when anything is
    /// left.
    pub offer_cursor: bool,
}

impl Options {
    pub const DEFAULT_BUDGET: usize = 8000;

    /// What a cursor of this skeleton answers: the files are ranked the same way only under
    /// the same prefix (and shown in the same mode only when asked for the same one).
    fn question(&self) -> String {
        format!("{:?}\0{}", self.path_prefix, self.mode.as_str())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget: Self::DEFAULT_BUDGET,
            mode: Mode::default(),
            path_prefix: None,
            tokenizer: Tokenizer::default(),
            show_dropped: false,
            cursor: None,
            offer_cursor: false,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Skeleton {
    pub text: String,
    /// The mode rendered (never `Auto`).
    pub mode: Mode,
    pub account: Account,
    /// Files under the prefix, whether they had anything to show in this mode or not.
    pub files_total: usize,
    /// The files shown, in path order.
    pub files: Vec<String>,
    /// Files with something to show that the budget left out, the lowest-ranked last.
    pub dropped_files: Vec<String>,
    /// Files shown by the skeletons the cursor continued after.
    pub shown_before: usize,
    /// Continues after this skeleton and those before it; `None` when nothing is left.
    pub next_cursor: Option<String>,
}

/// Restart weight of a definition in tests, migrations or documentation (others weigh 1).
const SECONDARY_RESTART: f64 = 0.1;
/// Names a summary line lists.
const SUMMARY_NAMES: usize = 5;
/// How many dropped files' paths the room kept for the closing line (with `show_dropped`)
/// should hold.
const DROPPED_ROOM: usize = 5;
/// No file's rendering costs fewer tokens than this: with less room left, no file is
/// measured any more.
const MIN_ITEM_TOKENS: usize = 3;
/// Tokens kept for the line offering a cursor (a check and a few runs of positions).
const CURSOR_RESERVE: usize = 40;

/// Renders the repository (or the files under `opts.path_prefix`) in `opts.mode`, within
/// `opts.budget` tokens, from its graph: `repo` must be `conn`'s, loaded with the same path
/// prefix as `opts.path_prefix`.
pub fn render_in(conn: &Connection, repo: &Repo, opts: &Options) -> Result<Skeleton> {
    if repo.files.is_empty() {
        match opts.path_prefix.as_deref() {
            Some(p) if !p.is_empty() => bail!("no indexed file's path starts with {p:?}"),
            _ => bail!("the index holds no files: run `indexer index` first"),
        }
    }
    let mut r = Renderer::new(conn, repo, opts)?;
    match opts.mode {
        Mode::Auto => {
            for mode in [Mode::Skeleton, Mode::Compact, Mode::Summary] {
                if let Some(s) = r.whole(mode)? {
                    return Ok(s);
                }
            }
            r.fitted(Mode::Summary)
        }
        mode => match r.whole(mode)? {
            Some(s) => Ok(s),
            None => r.fitted(mode),
        },
    }
}

/// A file's rendering in one mode and how much of it has been counted: a block is counted
/// chunk by chunk (a chunk ends after a run of newlines; tokens never span one) and only as
/// far as a question about it needs.
struct Block {
    text: String,
    /// A bound its tokens cannot be under (`tokens::floor`).
    floor: usize,
    counted: usize,
    done: usize,
}

impl Block {
    fn new(text: String) -> Block {
        Block {
            floor: tokens::floor(&text),
            text,
            counted: 0,
            done: 0,
        }
    }

    /// Its tokens if they are at most `cap`, else `None`.
    fn cost_within(&mut self, tk: Tokenizer, cap: usize) -> Option<usize> {
        if self.floor > cap {
            return None;
        }
        while self.done < self.text.len() && self.counted <= cap {
            let rest = &self.text[self.done..];
            let end = chunk_end(rest);
            self.counted += tk.count(&rest[..end]);
            self.done += end;
        }
        (self.counted <= cap).then_some(self.counted)
    }
}

/// Byte length of the first chunk of `s`: through the first run of newlines.
fn chunk_end(s: &str) -> usize {
    let Some(nl) = s.find('\n') else {
        return s.len();
    };
    let run = s[nl..].bytes().take_while(|&b| b == b'\n').count();
    nl + run
}

/// What every rendering of one mode states in its account line.
struct Head<'h> {
    mode: Mode,
    auto: bool,
    scope: &'h str,
    files_total: usize,
    /// Files with something to show in this mode (those shown before aside).
    items: usize,
    /// Files shown before (the cursor's).
    before: usize,
    budget: usize,
    tokenizer: Tokenizer,
}

impl Head<'_> {
    fn line(&self, included: usize, tokens: usize) -> String {
        let dropped = self.items - included.min(self.items);
        let before = match self.before {
            0 => String::new(),
            n => format!(" after {} shown before", thousands(n)),
        };
        let mut line = format!(
            "# skeleton of {} ({} file{}), mode {}{}: {} shown{before}, {} dropped",
            self.scope,
            thousands(self.files_total),
            if self.files_total == 1 { "" } else { "s" },
            self.mode.as_str(),
            if self.auto { " (auto)" } else { "" },
            thousands(included),
            thousands(dropped),
        );
        if dropped > 0 {
            line.push_str(" (the lowest-ranked, over budget)");
        }
        let empty = self.files_total - (self.items + self.before).min(self.files_total);
        if empty > 0 {
            line.push_str(&format!(", {} with nothing to show", thousands(empty)));
        }
        line.push_str(&format!(
            "; {} of {} tokens ({})\n",
            thousands(tokens),
            thousands(self.budget),
            self.tokenizer.as_str()
        ));
        line
    }
}

/// The closing line naming dropped files: the first `listed` of `dropped` (best first).
fn dropped_line(dropped: &[&str], listed: usize) -> String {
    if listed == 0 {
        return format!(
            "# dropped (worst last): {} files, no room to list them\n",
            thousands(dropped.len())
        );
    }
    let mut line = String::from("# dropped (worst last): ");
    line.push_str(&dropped[..listed].join(", "));
    if listed < dropped.len() {
        line.push_str(&format!(", +{} more", thousands(dropped.len() - listed)));
    }
    line.push('\n');
    line
}

struct Renderer<'a> {
    conn: &'a Connection,
    repo: &'a Repo,
    opts: &'a Options,
    /// PageRank of each definition.
    rank: Vec<f64>,
    /// Files, best-ranked first (ties in path order), and each file's position in it.
    order: Vec<usize>,
    position: Vec<usize>,
    /// Positions in `order` of the files shown before (the cursor's).
    before: Positions,
    /// Per mode slot, per file: its block once built (`None` inside: nothing to show).
    blocks: [Vec<Option<Option<Block>>>; 4],
    /// Per file, the paths of the other files it imports from (loaded for `deps`).
    deps: Option<Vec<BTreeSet<String>>>,
    /// Per file, how many definitions `compact` shows (filled for `compact`).
    compact_shown: Vec<usize>,
    scope: String,
    auto: bool,
}

impl<'a> Renderer<'a> {
    fn new(conn: &'a Connection, repo: &'a Repo, opts: &'a Options) -> Result<Renderer<'a>> {
        let restart: Vec<f64> = repo
            .defs
            .iter()
            .map(|d| {
                if repo.files[d.file].secondary {
                    SECONDARY_RESTART
                } else {
                    1.0
                }
            })
            .collect();
        let rank = repo.pagerank(&restart);
        let mut file_rank = vec![0.0; repo.files.len()];
        for (d, r) in repo.defs.iter().zip(&rank) {
            file_rank[d.file] += r;
        }
        let mut order: Vec<usize> = (0..repo.files.len()).collect();
        order.sort_by(|&a, &b| file_rank[b].total_cmp(&file_rank[a]).then(a.cmp(&b)));
        let n = repo.files.len();
        let before = match &opts.cursor {
            Some(c) => {
                let identity = |k: usize| repo.files[order[k]].path.clone();
                let shown = cursor::decode(c, "skeleton", &opts.question(), 1, n, &identity)?;
                shown.sets.into_iter().next().unwrap_or_default()
            }
            None => Positions::default(),
        };
        let mut position = vec![0; n];
        for (k, &f) in order.iter().enumerate() {
            position[f] = k;
        }
        let empty = || (0..n).map(|_| None).collect::<Vec<_>>();
        let scope = match opts.path_prefix.as_deref() {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => "the repository".to_string(),
        };
        Ok(Renderer {
            conn,
            repo,
            opts,
            rank,
            order,
            position,
            before,
            blocks: [empty(), empty(), empty(), empty()],
            deps: None,
            compact_shown: Vec::new(),
            scope,
            auto: opts.mode == Mode::Auto,
        })
    }

    fn head(&self, mode: Mode, items: usize) -> Head<'_> {
        Head {
            mode,
            auto: self.auto,
            scope: &self.scope,
            files_total: self.repo.files.len(),
            items,
            before: self.before.len(),
            budget: self.opts.budget,
            tokenizer: self.opts.tokenizer,
        }
    }

    /// Files with something to show in `mode`, best-ranked first, those shown before aside.
    fn items(&mut self, mode: Mode) -> Result<Vec<usize>> {
        let mut items = self.all_items(mode)?;
        items.retain(|&f| !self.before.contains(self.position[f]));
        Ok(items)
    }

    fn all_items(&mut self, mode: Mode) -> Result<Vec<usize>> {
        let repo = self.repo;
        let has_defs = |f: usize| {
            repo.defs_of_file(f)
                .any(|d| repo.defs[d].kind != NodeKind::File)
        };
        let items = match mode {
            Mode::Auto | Mode::Skeleton | Mode::Summary => self
                .order
                .iter()
                .copied()
                .filter(|&f| has_defs(f))
                .collect(),
            Mode::Compact => {
                if self.compact_shown.is_empty() {
                    self.compact_shown = (0..repo.files.len())
                        .map(|f| compact_defs(repo, f).len())
                        .collect();
                }
                let shown = &self.compact_shown;
                self.order
                    .iter()
                    .copied()
                    .filter(|&f| shown[f] > 0)
                    .collect()
            }
            Mode::Deps => {
                self.load_deps()?;
                let deps = self.deps.as_ref().expect("loaded");
                self.order
                    .iter()
                    .copied()
                    .filter(|&f| !deps[f].is_empty())
                    .collect()
            }
        };
        Ok(items)
    }

    /// The block of `file` in `mode`, built once.
    fn block(&mut self, mode: Mode, file: usize) -> Result<Option<&mut Block>> {
        if self.blocks[mode.slot()][file].is_none() {
            let text = match mode {
                Mode::Auto | Mode::Skeleton => Some(self.skeleton_block(file)?),
                Mode::Compact => Some(self.compact_block(file)),
                Mode::Summary => self.summary_line(file),
                Mode::Deps => self.deps_line(file)?,
            };
            self.blocks[mode.slot()][file] = Some(text.map(Block::new));
        }
        Ok(self.blocks[mode.slot()][file]
            .as_mut()
            .and_then(Option::as_mut))
    }

    /// Tokens of `file`'s block in `mode` if at most `cap`.
    fn cost_within(&mut self, mode: Mode, file: usize, cap: usize) -> Result<Option<usize>> {
        let tk = self.opts.tokenizer;
        if self.blocks[mode.slot()][file].is_none() && self.floor_unbuilt(mode, file) > cap {
            return Ok(None);
        }
        Ok(self.block(mode, file)?.and_then(|b| b.cost_within(tk, cap)))
    }

    /// A bound the tokens of a block not yet built cannot be under: its header has at least
    /// two tokens (`###`, the path), each definition line at least one, in `skeleton` three
    /// (`signature  # qualified.name`).
    fn floor_unbuilt(&self, mode: Mode, file: usize) -> usize {
        let defs = self.repo.defs_of_file(file).len().saturating_sub(1);
        match mode {
            Mode::Auto | Mode::Skeleton => 2 + 3 * defs,
            Mode::Compact => 2 + self.compact_shown.get(file).copied().unwrap_or(0),
            Mode::Summary | Mode::Deps => 0,
        }
    }

    /// The texts of the built blocks of `items` in `mode` (empty for any not built).
    fn texts(&self, mode: Mode, items: &[usize]) -> Vec<&str> {
        items
            .iter()
            .map(|&f| match &self.blocks[mode.slot()][f] {
                Some(Some(b)) => b.text.as_str(),
                _ => "",
            })
            .collect()
    }

    /// Every file of `mode`, if all of them fit the budget.
    fn whole(&mut self, mode: Mode) -> Result<Option<Skeleton>> {
        let items = self.items(mode)?;
        let tk = self.opts.tokenizer;
        let budget = self.opts.budget;
        let head_cost = tk.count(&self.head(mode, items.len()).line(items.len(), budget)) + 1;
        let Some(cap) = budget.checked_sub(head_cost) else {
            return Ok(None);
        };
        // What the files cannot be under, before counting any of them.
        let mut floor = 0;
        for &f in &items {
            floor += match mode {
                Mode::Summary | Mode::Deps => self.block(mode, f)?.map_or(0, |b| b.floor),
                _ => self.floor_unbuilt(mode, f),
            };
            if floor > cap {
                return Ok(None);
            }
        }
        let mut used = 0;
        for &f in &items {
            match self.cost_within(mode, f, cap - used)? {
                Some(c) => used += c,
                None => return Ok(None),
            }
        }
        let all: Vec<usize> = (0..items.len()).collect();
        let texts = self.texts(mode, &items);
        let head = self.head(mode, items.len());
        let fitted = tokens::fit_exact(tk, budget, all, |kept, n| {
            compose(&head, &items, &texts, kept, n, "")
        });
        Ok(match fitted {
            Some((kept, text, n)) if kept.len() == items.len() => {
                Some(self.result(mode, &items, &kept, text, n))
            }
            _ => None,
        })
    }

    /// The best-ranked files of `mode` that fit the budget, the others dropped.
    fn fitted(&mut self, mode: Mode) -> Result<Skeleton> {
        let items = self.items(mode)?;
        let tk = self.opts.tokenizer;
        let budget = self.opts.budget;
        let head_cost = {
            // The account line at its longest: some files dropped, the counts as long as
            // they can get.
            let head = self.head(mode, items.len());
            let n = items.len();
            let mut cost = [0, n / 2, n.saturating_sub(1)]
                .iter()
                .map(|&k| tk.count(&head.line(k, budget)))
                .max()
                .unwrap_or(0)
                + 1;
            if self.opts.show_dropped {
                // Room for the closing line to name the best few files left out (paths as
                // long as those of the first files in rank order).
                let paths = vec![""; items.len()];
                cost += tk.count(&dropped_line(&paths, 0));
                let sample: Vec<usize> = items
                    .iter()
                    .take(20)
                    .map(|&f| tk.count(&self.repo.files[f].path) + 1)
                    .collect();
                if !sample.is_empty() {
                    cost += DROPPED_ROOM * sample.iter().sum::<usize>() / sample.len();
                }
            }
            cost
        };
        let cursor_room = if self.opts.offer_cursor {
            CURSOR_RESERVE
        } else {
            0
        };
        let room = budget.saturating_sub(head_cost + cursor_room);
        // Greedy in rank order; a file known not to fit what is left is given a cost over
        // the whole room, which is what the selection would make of its true cost.
        let over = room.saturating_add(1);
        let mut costs = Vec::with_capacity(items.len());
        let mut used = 0;
        for &f in &items {
            let left = room - used;
            let cost = if left < MIN_ITEM_TOKENS {
                None
            } else {
                self.cost_within(mode, f, left)?
            };
            match cost {
                Some(c) => {
                    used += c;
                    costs.push(c);
                }
                None => costs.push(over),
            }
        }
        let taken = tokens::select_greedy(&costs, room);
        let texts = self.texts(mode, &items);
        let head = self.head(mode, items.len());
        let render = |kept: &[usize], n| {
            compose(
                &head,
                &items,
                &texts,
                kept,
                n,
                &self.cursor_line(&items, kept),
            )
        };
        let fitted = tokens::fit_exact(tk, budget, taken, render);
        let Some((kept, mut text, mut n)) = fitted else {
            let least =
                tokens::fit_exact(tk, usize::MAX, Vec::new(), render).map_or(0, |(_, _, n)| n);
            bail!(
                "a budget of {budget} tokens is too small for the skeleton: its account line \
                 alone takes {least} tokens ({}); give at least {least}",
                tk.as_str()
            );
        };
        if self.opts.show_dropped && kept.len() < items.len() {
            let in_kept: HashSet<usize> = kept.iter().copied().collect();
            let dropped: Vec<&str> = (0..items.len())
                .filter(|k| !in_kept.contains(k))
                .map(|k| self.repo.files[items[k]].path.as_str())
                .collect();
            // As many paths as the room left seems to hold; the exact fit trims the rest.
            let slack = budget - n;
            let mut cost = tk.count(&dropped_line(&dropped, 0)) + 2;
            let mut listed = 0;
            for path in &dropped {
                cost += tk.count(path) + 1;
                if cost > slack {
                    break;
                }
                listed += 1;
            }
            let with_line = tokens::fit_exact(tk, budget, (0..listed).collect(), |shown, n| {
                let line = dropped_line(&dropped, shown.len()) + &self.cursor_line(&items, &kept);
                compose(&head, &items, &texts, &kept, n, &line)
            });
            if let Some((_, t, m)) = with_line {
                text = t;
                n = m;
            }
        }
        Ok(self.result(mode, &items, &kept, text, n))
    }

    /// The cursor that continues after the files shown before and `kept` (indexes into
    /// `items`), when `items` has others.
    fn next_cursor(&self, items: &[usize], kept: &[usize]) -> Option<String> {
        // Nothing left, or a page that showed nothing (followed by the same page).
        if kept.len() >= items.len() || kept.is_empty() {
            return None;
        }
        let shown = cursor::Shown {
            sets: vec![self
                .before
                .with(kept.iter().map(|&k| self.position[items[k]]))],
        };
        let identity = |k: usize| self.repo.files[self.order[k]].path.clone();
        Some(cursor::encode(
            "skeleton",
            &self.opts.question(),
            &shown,
            &identity,
        ))
    }

    /// With `offer_cursor`, the line handing out `next_cursor`, if any.
    fn cursor_line(&self, items: &[usize], kept: &[usize]) -> String {
        match self.next_cursor(items, kept) {
            Some(c) if self.opts.offer_cursor => cursor::offer_line("this skeleton", &c),
            _ => String::new(),
        }
    }

    fn result(
        &self,
        mode: Mode,
        items: &[usize],
        kept: &[usize],
        text: String,
        tokens: usize,
    ) -> Skeleton {
        let in_kept: HashSet<usize> = kept.iter().copied().collect();
        let dropped_files: Vec<String> = (0..items.len())
            .filter(|k| !in_kept.contains(k))
            .map(|k| self.repo.files[items[k]].path.clone())
            .collect();
        let mut files: Vec<String> = kept
            .iter()
            .map(|&k| self.repo.files[items[k]].path.clone())
            .collect();
        files.sort();
        Skeleton {
            text,
            mode,
            account: Account {
                tokenizer: self.opts.tokenizer,
                budget: self.opts.budget,
                tokens,
                included: kept.len(),
                dropped: dropped_files.len(),
            },
            files_total: self.repo.files.len(),
            files,
            dropped_files,
            shown_before: self.before.len(),
            next_cursor: self.next_cursor(items, kept),
        }
    }

    fn skeleton_block(&self, file: usize) -> Result<String> {
        let mut out = format!("### {}\n", self.repo.files[file].path);
        out.push_str(&file_skeleton(self.conn, self.repo, file)?);
        out.push('\n');
        Ok(out)
    }

    fn compact_block(&self, file: usize) -> String {
        let repo = self.repo;
        let mut out = format!("### {}\n", repo.files[file].path);
        let python = repo.files[file].language == "python";
        for d in compact_defs(repo, file) {
            let def = &repo.defs[d];
            let strip = matches!(def.kind, NodeKind::Function | NodeKind::Method);
            let signature = def
                .signature
                .as_deref()
                .map(|s| compact_signature(s, strip, python));
            let shown = Def {
                signature,
                ..def.clone()
            };
            let lines = render::signature_lines(&shown, 4 * depth(repo, d));
            let comment = format!("  # {}\n", def.qualified_name);
            match lines.strip_suffix(&comment) {
                Some(bare) if is_test_member(repo, d) && derivable_name(repo, d) => {
                    out.push_str(bare);
                    out.push('\n');
                }
                _ => out.push_str(&lines),
            }
        }
        out.push('\n');
        out
    }

    fn summary_line(&self, file: usize) -> Option<String> {
        let repo = self.repo;
        let mut counts: Vec<(NodeKind, usize)> = Vec::new();
        let mut named: Vec<(usize, String)> = Vec::new();
        for d in repo.defs_of_file(file) {
            let def = &repo.defs[d];
            if def.kind == NodeKind::File {
                continue;
            }
            match counts.iter_mut().find(|(k, _)| *k == def.kind) {
                Some((_, n)) => *n += 1,
                None => counts.push((def.kind, 1)),
            }
            if let Some(name) = outline_name(repo, d) {
                named.push((d, name));
            }
        }
        if counts.is_empty() {
            return None;
        }
        counts.sort();
        let counts: Vec<String> = counts
            .iter()
            .map(|&(kind, n)| kind_count(kind, n))
            .collect();
        named.sort_by(|a, b| {
            self.rank[b.0]
                .total_cmp(&self.rank[a.0])
                .then(a.0.cmp(&b.0))
        });
        let mut names: Vec<&str> = Vec::new();
        for (_, name) in &named {
            if names.len() == SUMMARY_NAMES {
                break;
            }
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        let mut line = format!("{}: {}", repo.files[file].path, counts.join(", "));
        if !names.is_empty() {
            line.push_str(" — ");
            line.push_str(&names.join(", "));
        }
        line.push('\n');
        Some(line)
    }

    fn deps_line(&mut self, file: usize) -> Result<Option<String>> {
        self.load_deps()?;
        let deps = &self.deps.as_ref().expect("loaded")[file];
        if deps.is_empty() {
            return Ok(None);
        }
        let list: Vec<&str> = deps.iter().map(String::as_str).collect();
        Ok(Some(format!(
            "{} -> {}\n",
            self.repo.files[file].path,
            list.join(", ")
        )))
    }

    /// Reads, once, which files each file imports from: `imports` edges from any of its
    /// definitions to a definition of another file (outside the prefix too).
    fn load_deps(&mut self) -> Result<()> {
        if self.deps.is_some() {
            return Ok(());
        }
        let repo = self.repo;
        let mut deps = vec![BTreeSet::new(); repo.files.len()];
        let mut q = self
            .conn
            .prepare("SELECT source_id, target_id FROM edges WHERE kind = 'imports'")?;
        let mut outside = self.conn.prepare(
            "SELECT n.file_id, f.path FROM nodes n JOIN files f ON f.id = n.file_id \
             WHERE n.id = ?1",
        )?;
        // Files outside the prefix, by node id: (file id, path).
        let mut elsewhere: HashMap<i64, Option<(i64, String)>> = HashMap::new();
        let mut rows = q.query([])?;
        while let Some(r) = rows.next()? {
            let Some(source) = repo.index_of(r.get(0)?) else {
                continue;
            };
            let from = repo.defs[source].file;
            let target: i64 = r.get(1)?;
            let path = match repo.index_of(target) {
                Some(t) if repo.defs[t].file == from => continue,
                Some(t) => repo.files[repo.defs[t].file].path.clone(),
                None => {
                    let found = match elsewhere.get(&target) {
                        Some(found) => found.clone(),
                        None => {
                            let found = outside
                                .query_row([target], |r| Ok((r.get(0)?, r.get(1)?)))
                                .ok();
                            elsewhere.insert(target, found.clone());
                            found
                        }
                    };
                    match found {
                        Some((file_id, path)) if file_id != repo.files[from].id => path,
                        _ => continue,
                    }
                }
            };
            deps[from].insert(path);
        }
        self.deps = Some(deps);
        Ok(())
    }
}

/// The account line, the blocks of `kept` (indexes into `items`) in path order, and the
/// closing line, if any.
/// A file's skeleton from the index: its imports, then the signature (and docstring's first
/// line) of each definition, indented by nesting. Any language the index parses.
pub fn file_skeleton(conn: &Connection, repo: &Repo, file: usize) -> Result<String> {
    let mut out = String::new();
    let imports = imports(conn, repo, file)?;
    if !imports.is_empty() {
        out.push_str("# imports: ");
        out.push_str(&imports.join(", "));
        out.push('\n');
    }
    for d in repo.defs_of_file(file) {
        let def = &repo.defs[d];
        if def.kind != NodeKind::File {
            out.push_str(&render::signature_lines(def, 4 * depth(repo, d)));
        }
    }
    Ok(out)
}

/// The imports written in `file` (at its top level or in any definition), in source
/// order, each once.
fn imports(conn: &Connection, repo: &Repo, file: usize) -> Result<Vec<String>> {
    let range = repo.defs_of_file(file);
    let (Some(lo), Some(hi)) = (
        range.clone().map(|d| repo.defs[d].id).min(),
        range.map(|d| repo.defs[d].id).max(),
    ) else {
        return Ok(Vec::new());
    };
    let mut q = conn.prepare_cached(
        "SELECT node_id, name, module, alias FROM refs \
         WHERE node_id BETWEEN ?1 AND ?2 AND kind = 'import' ORDER BY seq, node_id",
    )?;
    let mut rows = q.query([lo, hi])?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let node: i64 = r.get(0)?;
        if repo.index_of(node).map(|d| repo.defs[d].file) != Some(file) {
            continue;
        }
        let name: String = r.get(1)?;
        let module: Option<String> = r.get(2)?;
        let alias: Option<String> = r.get(3)?;
        let text = import_text(&name, module.as_deref(), alias.as_deref());
        if !text.is_empty() && seen.insert(text.clone()) {
            out.push(text);
        }
    }
    Ok(out)
}

fn compose(
    head: &Head,
    items: &[usize],
    texts: &[&str],
    kept: &[usize],
    tokens: usize,
    closing: &str,
) -> String {
    let mut order: Vec<usize> = kept.to_vec();
    order.sort_by_key(|&k| items[k]);
    let mut out = head.line(kept.len(), tokens);
    for k in order {
        out.push_str(texts[k]);
    }
    out.push_str(closing);
    out
}

/// Nesting level of a definition below its file node (0 for top-level ones).
fn depth(repo: &Repo, def: usize) -> usize {
    let mut n = 0;
    let mut at = repo.defs[def].parent;
    while let Some(p) = at {
        if repo.defs[p].kind == NodeKind::File || n > repo.defs.len() {
            break;
        }
        n += 1;
        at = repo.defs[p].parent;
    }
    n
}

/// The definitions of `file` that `compact` shows, in source order: not the file node, no
/// private one, none local to a function or method, nothing inside one left out.
fn compact_defs(repo: &Repo, file: usize) -> Vec<usize> {
    let range = repo.defs_of_file(file);
    // Parents come before their children: a definition is hidden if it is private, or its
    // parent is hidden or a function.
    let mut hidden = vec![false; range.len()];
    let mut shown = Vec::new();
    for d in range.clone() {
        let def = &repo.defs[d];
        if def.kind == NodeKind::File {
            continue;
        }
        let local = def.parent.is_some_and(|p| {
            matches!(repo.defs[p].kind, NodeKind::Function | NodeKind::Method)
                || range.contains(&p) && hidden[p - range.start]
        });
        if local || is_private(&def.name) {
            hidden[d - range.start] = true;
        } else {
            shown.push(d);
        }
    }
    shown
}

/// A test method (`test...` in a test file): much of a repository's text and the least asked
/// for by name, so `compact` does not repeat its qualified name when the class's, shown above
/// it, gives it.
fn is_test_member(repo: &Repo, def: usize) -> bool {
    let d = &repo.defs[def];
    repo.files[d.file].secondary
        && d.name
            .get(..4)
            .is_some_and(|p| p.eq_ignore_ascii_case("test"))
}

/// Whether a definition's qualified name is its parent definition's, a dot, and its name.
fn derivable_name(repo: &Repo, def: usize) -> bool {
    let d = &repo.defs[def];
    d.parent.is_some_and(|p| {
        let parent = &repo.defs[p];
        parent.kind != NodeKind::File
            && d.qualified_name.len() == parent.qualified_name.len() + 1 + d.name.len()
            && d.qualified_name.starts_with(parent.qualified_name.as_str())
            && d.qualified_name[parent.qualified_name.len()..].starts_with('.')
            && d.qualified_name.ends_with(d.name.as_str())
    })
}

/// A name kept out of `compact`: `_private`, but not `__dunder__`.
fn is_private(name: &str) -> bool {
    let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
    name.starts_with('_') && !dunder
}

/// How a summary names a definition: a top-level one by its name, a member of a top-level
/// type as `Type.member`; anything deeper is not named.
fn outline_name(repo: &Repo, def: usize) -> Option<String> {
    let d = &repo.defs[def];
    let parent = &repo.defs[d.parent?];
    if parent.kind == NodeKind::File {
        return Some(d.name.clone());
    }
    let grand = &repo.defs[parent.parent?];
    (grand.kind == NodeKind::File && parent.kind.is_type_like())
        .then(|| format!("{}.{}", parent.name, d.name))
}

/// `2 classes`, `1 function`.
fn kind_count(kind: NodeKind, n: usize) -> String {
    let (one, many) = match kind {
        NodeKind::File => ("file", "files"),
        NodeKind::Module => ("module", "modules"),
        NodeKind::Class => ("class", "classes"),
        NodeKind::Interface => ("interface", "interfaces"),
        NodeKind::Enum => ("enum", "enums"),
        NodeKind::Type => ("type", "types"),
        NodeKind::Function => ("function", "functions"),
        NodeKind::Method => ("method", "methods"),
        NodeKind::Constant => ("constant", "constants"),
    };
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// One import as the imports line shows it: `module.name`, `module` for a whole module,
/// `... as alias` when renamed.
fn import_text(name: &str, module: Option<&str>, alias: Option<&str>) -> String {
    let module = module.unwrap_or("").trim();
    let name = name.trim();
    let base = if module.is_empty() {
        name.to_string()
    } else if name.is_empty() {
        module.to_string()
    } else {
        let sep = if module.ends_with(['.', ':', '/', '\\']) {
            ""
        } else if module.contains("::") {
            "::"
        } else {
            "."
        };
        format!("{module}{sep}{name}")
    };
    match alias.map(str::trim) {
        Some(a) if !a.is_empty() && a != name && !base.is_empty() => format!("{base} as {a}"),
        _ => base,
    }
}

/// A line that is a decorator or attribute only: `@cached`, `#[derive(Debug)]`, `[Test]`.
fn is_attribute_line(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('@') || t.starts_with("#[") || (t.starts_with('[') && t.ends_with(']'))
}

/// A signature as `compact` shows it: no decorator or attribute lines (the declaration line
/// is kept even if it looks like one), in Python no comment after the header (the signature
/// runs to the body, comments before the first statement included), and, when `strip`, no
/// parameter defaults.
fn compact_signature(signature: &str, strip: bool, python: bool) -> String {
    let lines: Vec<&str> = signature.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut kept: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !is_attribute_line(l))
        .collect();
    if kept.is_empty() {
        kept.extend(lines.last());
    }
    if python {
        for line in &mut kept {
            *line = without_comment(line);
        }
    }
    let text = kept.join("\n");
    if strip {
        strip_defaults(&text, !python)
    } else {
        text
    }
}

/// A Python line without the `# comment` that ends it: from the first `#` outside strings and
/// brackets (one inside brackets may have swallowed the rest of a collapsed line; it stays).
fn without_comment(line: &str) -> &str {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        match chars[i].1 {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '"' | '\'' => {
                let quote = chars[i].1;
                i += 1;
                while i < chars.len() && chars[i].1 != quote {
                    i += if chars[i].1 == '\\' { 2 } else { 1 };
                }
            }
            '#' if depth == 0 => return line[..chars[i].0].trim_end(),
            _ => {}
        }
        i += 1;
    }
    line
}

/// `signature` with the default values of its parameters taken out: in each top-level
/// `( ... )`, a `= value` up to the next `,` or `)` of that list goes, and the spaces before
/// it. Brackets and quotes inside a value are respected; `angles` counts `<...>` as brackets
/// too (generic arguments, in languages other than Python). Odd text gives odd output, never
/// a panic.
fn strip_defaults(signature: &str, angles: bool) -> String {
    let chars: Vec<char> = signature.chars().collect();
    let mut out = String::with_capacity(signature.len());
    // Brackets open in the parameter lists; depth 1 is a list's own level.
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '<' if angles
                && depth >= 1
                && (prev.is_alphanumeric() || prev == '_' || prev == ':') =>
            {
                depth += 1
            }
            '>' if angles && depth >= 2 && !matches!(prev, '-' | '=') => depth -= 1,
            '"' | '\'' | '`' if depth >= 1 && is_quote_start(&chars, i, angles) => {
                let end = skip_quoted(&chars, i);
                out.extend(&chars[i..end]);
                i = end;
                continue;
            }
            '=' if depth == 1
                && !matches!(prev, '=' | '!' | '<' | '>' | ':' | '+' | '-' | '*' | '/')
                && !matches!(next, '=' | '>') =>
            {
                let end = skip_value(&chars, i + 1, angles);
                let trimmed = out.trim_end().len();
                out.truncate(trimmed);
                i = end;
                continue;
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Whether the quote at `i` opens a string. In languages with generics (`angles`), a `'`
/// opens one only as a char literal (`'a'`, `'\n'`), not as a lifetime or label (`'a`).
fn is_quote_start(chars: &[char], i: usize, angles: bool) -> bool {
    chars[i] != '\''
        || !angles
        || chars.get(i + 1) == Some(&'\\')
        || chars.get(i + 2) == Some(&'\'')
}

/// Index just past the string opened at `start` (its quote char), or the end of the text.
fn skip_quoted(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// Index of the `,` or `)` that ends the default value starting at `start`, at the value's
/// own level; the end of the text if none.
fn skip_value(chars: &[char], start: usize, angles: bool) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        match c {
            ',' | ')' | ']' | '}' if depth == 0 => return i,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '<' if angles && (prev.is_alphanumeric() || prev == '_' || prev == ':') => depth += 1,
            '>' if angles && depth > 0 && !matches!(prev, '-' | '=') => depth -= 1,
            '"' | '\'' | '`' if is_quote_start(chars, i, angles) => {
                i = skip_quoted(chars, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// `5334` as `5,334`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_stripped_up_to_the_next_parameter() {
        let cases = [
            (
                "def charge(amount, currency=\"EUR\") -> Payment:",
                "def charge(amount, currency) -> Payment:",
            ),
            (
                "def f(a, b: int = 3, *, c=(1, 2), d={'x': [1, 2]}, **kw):",
                "def f(a, b: int, *, c, d, **kw):",
            ),
            ("def f(sep=',', end=')'):", "def f(sep, end):"),
            ("def f(s='it\\'s, ok', t=None):", "def f(s, t):"),
            ("def f(x=a == b, y=1):", "def f(x, y):"),
            (
                "def g(self) -> Dict[str, int]:",
                "def g(self) -> Dict[str, int]:",
            ),
            (
                "function f(cb: (x: number) => void = noop, n = 1)",
                "function f(cb: (x: number) => void, n)",
            ),
            (
                "fun f(m: Map<String, Int> = mapOf(), k: Int = 0): Int",
                "fun f(m: Map<String, Int>, k: Int): Int",
            ),
            (
                "void f(std::map<int, int> m = std::map<int, int>{}, int n = 2)",
                "void f(std::map<int, int> m, int n)",
            ),
            (
                "fn f<'a>(x: &'a str, it: impl Iterator<Item = u8>) -> &'a str",
                "fn f<'a>(x: &'a str, it: impl Iterator<Item = u8>) -> &'a str",
            ),
            ("const X = 1", "const X = 1"),
        ];
        for (input, want) in cases {
            let angles = !input.starts_with("def ");
            assert_eq!(strip_defaults(input, angles), want, "{input}");
        }
    }

    #[test]
    fn odd_signatures_never_panic() {
        for s in [
            "",
            "(",
            ")",
            "=",
            "(=",
            "(a=",
            "(a=\"",
            "(a='",
            "(a=(((",
            "(a=)))",
            "f(a=b))=c(",
            "(a='\\",
            "((x=1)",
            "(a=<<>>)",
            "é(ü='ß', ö=\"…\")",
            "(a=`x",
        ] {
            strip_defaults(s, true);
            strip_defaults(s, false);
        }
        assert_eq!(strip_defaults("f(a=1", false), "f(a");
        assert_eq!(strip_defaults("é(ü='ß', ö=\"…\")", false), "é(ü, ö)");
    }

    #[test]
    fn private_names_are_underscored_but_not_dunders() {
        assert!(is_private("_helper"));
        assert!(is_private("__mangled"));
        assert!(is_private("_"));
        assert!(is_private("__"));
        assert!(!is_private("__init__"));
        assert!(!is_private("__str__"));
        assert!(!is_private("public"));
        assert!(!is_private("trailing_"));
    }

    #[test]
    fn counts_are_plural_unless_one() {
        assert_eq!(kind_count(NodeKind::Class, 1), "1 class");
        assert_eq!(kind_count(NodeKind::Class, 2), "2 classes");
        assert_eq!(kind_count(NodeKind::Function, 14), "14 functions");
        assert_eq!(kind_count(NodeKind::Method, 1), "1 method");
        assert_eq!(kind_count(NodeKind::Constant, 1200), "1,200 constants");
    }

    #[test]
    fn decorator_lines_go_and_the_declaration_stays() {
        assert_eq!(
            compact_signature(
                "@property\n@cached\ndef name(self, x=1) -> str:",
                true,
                true
            ),
            "def name(self, x) -> str:"
        );
        assert_eq!(
            compact_signature("#[derive(Debug)]\npub struct S", false, false),
            "pub struct S"
        );
        assert_eq!(compact_signature("@only", true, true), "@only");
        // Comments after a Python header go; `#` in strings and brackets stays.
        assert_eq!(
            compact_signature("def ptr(self): # Raise an exception # here", true, true),
            "def ptr(self):"
        );
        assert_eq!(
            compact_signature("class A(B): # The class we'll use", false, true),
            "class A(B):"
        );
        assert_eq!(
            compact_signature("def f(a='#', b=\"x#\"):  # c", false, true),
            "def f(a='#', b=\"x#\"):"
        );
        assert_eq!(
            compact_signature("def f(a, # the a b): # c", false, true),
            "def f(a, # the a b):"
        );
        assert_eq!(without_comment("x = '#\\'#'  # c"), "x = '#\\'#'");
        assert_eq!(without_comment("'unclosed #"), "'unclosed #");
        assert_eq!(without_comment("# only"), "");
    }

    #[test]
    fn imports_read_as_written() {
        assert_eq!(
            import_text("Decimal", Some("decimal"), None),
            "decimal.Decimal"
        );
        assert_eq!(import_text("", Some("os"), None), "os");
        assert_eq!(import_text("", Some("numpy"), Some("np")), "numpy as np");
        assert_eq!(import_text("x", Some("."), None), ".x");
        assert_eq!(
            import_text("HashMap", Some("std::collections"), None),
            "std::collections::HashMap"
        );
    }

    #[test]
    fn chunks_end_after_newline_runs() {
        assert_eq!(chunk_end("ab\ncd"), 3);
        assert_eq!(chunk_end("ab\n\n\ncd"), 5);
        assert_eq!(chunk_end("abc"), 3);
        assert_eq!(thousands(5334), "5,334");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
