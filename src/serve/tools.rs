//! The tools the server offers: each a JSON schema, a description that tells an agent when
//! to use it, and an answer in two forms, a structured value and a text rendering. Every
//! answer that can grow is held to `budget_tokens` (counted on its text with the CLI's
//! tokenizer), says what it left out, and hands back a cursor that continues after it.

use super::repos::{Reads, Renderer, Repo};
use super::Served;
use crate::context::{cursor, impact, pack, repomap, repopack, skeleton, tokens::Tokenizer};
use crate::error::{Error, Result};
use crate::facade::{SearchOptions, TraceOptions};
use crate::query::blast::{self, Shows};
use crate::query::trace::Direction;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The largest budget a call may ask for: an answer is at most this many tokens.
pub const MAX_BUDGET: usize = 100_000;
/// The tokens kept for the line that says what was left out and how to go on.
const FOOTER_RESERVE: usize = 40;

/// What a tool returns: the structured value and its text rendering.
pub struct Answer {
    pub structured: Value,
    pub text: String,
}

/// A tool's name, description and argument type.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Map<String, Value>,
}

fn schema_of<T: JsonSchema>() -> Map<String, Value> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(mut m)) => {
            m.remove("$schema");
            m.remove("title");
            m
        }
        _ => Map::new(),
    }
}

pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search",
        description: "Find definitions (functions, classes, methods, types, constants) by name or words: full-text search over names, identifier sub-tokens, signatures and docstrings, best first. Use it to locate a symbol you can name or describe in a few words; for a whole issue text or question use rank_files or pack instead. Without `repo` it searches every served repository.",
        schema: schema_of::<SearchArgs>,
    },
    ToolSpec {
        name: "get_source",
        description: "The source of one definition (by qualified name; a short name or a suffix works when unambiguous) or of a file (by path), with its callers, callees and unresolved calls. Use it after search to read exactly one symbol; for the code around a symbol (its callees and callers too) use pack.",
        schema: schema_of::<SourceArgs>,
    },
    ToolSpec {
        name: "trace_callers",
        description: "Who calls or references a definition, breadth-first to `depth` hops, each edge with its confidence and the strategy that resolved it, plus the unresolved call sites that might also reach it. Use it to judge the blast radius of a change.",
        schema: schema_of::<TraceArgs>,
    },
    ToolSpec {
        name: "trace_callees",
        description: "What a definition calls or references, breadth-first to `depth` hops, with confidences, plus its unresolved and external calls. Use it to follow what a function does without reading every callee.",
        schema: schema_of::<TraceArgs>,
    },
    ToolSpec {
        name: "blast",
        description: "The blast radius of a definition (qualified name) or of a file (path: every definition in it): what may break when it changes. Its transitive callers to `depth` hops as a tree, each with the confidence of its edge and of the whole path, then the unresolved call sites that might also reach it and the tests among the callers (listed first with `tests`). Use it before changing a definition, to know what to check and which tests to run; for the code around a diff use impact.",
        schema: schema_of::<BlastArgs>,
    },
    ToolSpec {
        name: "rank_files",
        description: "Files ranked for a natural-language text (an issue, a question, a traceback), best first, with the best-matching definition of each. Use it to decide where to look first; pack gives their code under a budget.",
        schema: schema_of::<RankArgs>,
    },
    ToolSpec {
        name: "skeleton",
        description: "The repository (or the files under `path`) as signatures grouped by file, the richest rendering that fits the budget (signatures with docstrings, compact, summary, or imports only). Use it for an overview of a part of the code; map ranks definitions by importance instead.",
        schema: schema_of::<SkeletonArgs>,
    },
    ToolSpec {
        name: "map",
        description: "The definitions that matter most in the repository, ranked by personalized PageRank over the call and import graph, as signatures under the budget; centred on `focus` (paths or qualified names) or a `query` when given. Use it to orient in an unfamiliar repository.",
        schema: schema_of::<MapArgs>,
    },
    ToolSpec {
        name: "pack",
        description: "A context pack: the code an agent needs to work on a question or issue (`query`), or around a definition or file (`qualified_name` or `path`): the matching definitions in full, their callers and callees as code or signatures, under the budget, each saying why it is included and what was left out. Use it to gather the code for a task in one call.",
        schema: schema_of::<PackArgs>,
    },
    ToolSpec {
        name: "impact",
        description: "What a git diff changes and the context needed to reason about it, under the budget: the changed definitions in full with their diff, then the definitions most likely affected (call graph, text similarity, same file, co-change), each saying why it is there. Without `rev` the uncommitted work tree (untracked files included) against HEAD; `staged` the staged changes; `rev` a commit (against its first parent), `A..B` or `A...B`. Use it to review a change or to see what an edit may break.",
        schema: schema_of::<ImpactArgs>,
    },
    ToolSpec {
        name: "pack_repository",
        description: "The whole repository as one document under the budget: every indexed path (by folder), then files by rank in full or as their skeleton (imports and signatures), the rest in the tree only. With `task` (an issue or question) the files it needs come first, in full where they fit. When files are left that the page did not hold in full, `next_cursor` gives the next page (files only, in rank order). Use it to hand over a repository at once; for the code of one task, pack is smaller.",
        schema: schema_of::<RepoPackArgs>,
    },
    ToolSpec {
        name: "get_file",
        description: "A file's text as indexed (secrets redacted), whole or a line range. Use it for files that are not code (configs, docs) or to read around a line; for one definition get_source is smaller.",
        schema: schema_of::<FileArgs>,
    },
    ToolSpec {
        name: "get_tree",
        description: "The indexed files under a folder (`prefix`), as a tree to `depth` levels with language and line counts; deeper folders are summarized with their file counts.",
        schema: schema_of::<TreeArgs>,
    },
    ToolSpec {
        name: "list_repos",
        description: "The repositories this server answers for: kind (tree, artifact, remote), whether each can answer, how old its index is, and the last refresh or fetch error. Use it first when more than one repository may be served.",
        schema: schema_of::<NoArgs>,
    },
    ToolSpec {
        name: "repo_stats",
        description: "A repository's counts (files, definitions, references, edges by language and kind), call-graph health (how many call sites resolved), freshness and last refresh error.",
        schema: schema_of::<RepoArgs>,
    },
    ToolSpec {
        name: "refresh",
        description: "Re-index a repository now (incremental: only changed files are re-read). Answers are brought up to date automatically when files change; use this after changes a watcher cannot see.",
        schema: schema_of::<RepoArgs>,
    },
];

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RepoArgs {
    /// Repository name (see list_repos); may be left out when one repository is served.
    repo: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words or a name to look for.
    query: String,
    /// Only definitions of this kind (function, method, class, interface, type, constant, module, file, ...).
    kind: Option<String>,
    /// Hits to return (default 20, at most 200).
    limit: Option<usize>,
    /// Repository name; without it every served repository is searched.
    repo: Option<String>,
    /// Tokens the answer may take (default 2000).
    budget_tokens: Option<usize>,
    /// Continue after a previous answer (its `next_cursor`).
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SourceArgs {
    /// Qualified name (or unambiguous short name or suffix) of a definition, or a file path.
    qualified_name: String,
    repo: Option<String>,
    /// Tokens the answer may take (default 4000).
    budget_tokens: Option<usize>,
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TraceArgs {
    /// Qualified name (or unambiguous short name or suffix) of a definition.
    qualified_name: String,
    /// Hops to follow (default 3, at most 10).
    depth: Option<usize>,
    /// Follow only edges at least this confident (0 to 1, default 0).
    min_confidence: Option<f64>,
    repo: Option<String>,
    /// Tokens the answer may take (default 2000).
    budget_tokens: Option<usize>,
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BlastArgs {
    /// Qualified name (or unambiguous short name or suffix) of a definition, or a file path.
    name: String,
    /// Hops of callers to follow (default 3, 1 to 10).
    depth: Option<usize>,
    /// Follow only edges at least this confident (0 to 1, default 0); weaker ones are listed with the unresolved sites.
    min_confidence: Option<f64>,
    /// List the tests that reach it first (default false).
    tests: Option<bool>,
    repo: Option<String>,
    /// Tokens the answer may take (default 4000).
    budget_tokens: Option<usize>,
    /// Continue after a previous answer (its `next_cursor`).
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ImpactArgs {
    /// A commit (against its first parent), `A..B` or `A...B`; without it (and without `staged`) the work tree against HEAD.
    rev: Option<String>,
    /// The staged changes against HEAD instead of the work tree.
    staged: Option<bool>,
    /// Start only from these changed definitions (qualified names).
    symbols: Option<Vec<String>>,
    /// Hops through callers and callees for the graph signal (default 2, at most 6).
    depth: Option<usize>,
    /// markdown (default), xml or json.
    format: Option<String>,
    /// The analysis only: the changed definitions and the scored ones, without code.
    graph_only: Option<bool>,
    /// Weights of the graph, text, same-file and co-change signals, four numbers of 0 or more (default [0.6, 0.2, 0.1, 0.1]).
    weights: Option<Vec<f64>>,
    repo: Option<String>,
    /// Tokens the answer may take (default 8000).
    budget_tokens: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RepoPackArgs {
    /// An issue or question the pack is for: the files it needs come first.
    task: Option<String>,
    /// markdown (default), xml or json.
    format: Option<String>,
    repo: Option<String>,
    /// Tokens the answer may take (default 100000).
    budget_tokens: Option<usize>,
    /// The next page: the `next_cursor` of the answer before (with the same task).
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RankArgs {
    /// The issue text, question or traceback.
    query: String,
    /// Files to return (default 20, at most 200).
    limit: Option<usize>,
    /// Repository name; without it every served repository is ranked.
    repo: Option<String>,
    /// Tokens the answer may take (default 1000).
    budget_tokens: Option<usize>,
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkeletonArgs {
    /// Only files whose path starts with this (relative to the repository root).
    path: Option<String>,
    /// auto (default: the richest that fits), skeleton, compact, summary or deps.
    mode: Option<String>,
    repo: Option<String>,
    /// Tokens the answer may take (default 4000).
    budget_tokens: Option<usize>,
    /// Continue after a previous skeleton of the same path and mode (its `next_cursor`).
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MapArgs {
    /// A question or issue text to centre the map on.
    query: Option<String>,
    /// Paths or qualified names to centre the map on.
    focus: Option<Vec<String>>,
    repo: Option<String>,
    /// Tokens the answer may take (default 4000).
    budget_tokens: Option<usize>,
    /// Continue after a previous map of the same query and focus (its `next_cursor`).
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PackArgs {
    /// A question or issue text to gather code for.
    query: Option<String>,
    /// A definition to pack the code around.
    qualified_name: Option<String>,
    /// A file to pack the code around.
    path: Option<String>,
    /// Symbols other than the matches as signatures only.
    signatures_only: Option<bool>,
    /// Repository name; without it a query is packed from every served repository.
    repo: Option<String>,
    /// Tokens the answer may take (default 8000).
    budget_tokens: Option<usize>,
    /// Continue after a previous pack of the same target (its `next_cursor`).
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FileArgs {
    /// File path relative to the repository root.
    path: String,
    /// First line to return (1-based, default 1).
    start_line: Option<usize>,
    /// Last line to return (default: the end of the file).
    end_line: Option<usize>,
    repo: Option<String>,
    /// Tokens the answer may take (default 4000).
    budget_tokens: Option<usize>,
    cursor: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TreeArgs {
    /// Folder to list (relative to the repository root; default: the root).
    prefix: Option<String>,
    /// Levels below the folder to list (default 2, at most 20).
    depth: Option<usize>,
    repo: Option<String>,
    /// Tokens the answer may take (default 2000).
    budget_tokens: Option<usize>,
    cursor: Option<String>,
}

/// Runs tool `name` with `args` (a JSON object); `None` when no tool has that name.
pub fn call(served: &Served, name: &str, args: Map<String, Value>) -> Option<Result<Answer>> {
    let args = Value::Object(args);
    Some(match name {
        "search" => parse(args).and_then(|a| search(served, a)),
        "get_source" => parse(args).and_then(|a| get_source(served, a)),
        "trace_callers" => parse(args).and_then(|a| trace(served, a, Direction::Callers)),
        "trace_callees" => parse(args).and_then(|a| trace(served, a, Direction::Callees)),
        "blast" => parse(args).and_then(|a| blast(served, a)),
        "rank_files" => parse(args).and_then(|a| rank_files(served, a)),
        "skeleton" => parse(args).and_then(|a| skeleton(served, a)),
        "map" => parse(args).and_then(|a| map(served, a)),
        "pack" => parse(args).and_then(|a| pack(served, a)),
        "pack_repository" => parse(args).and_then(|a| pack_repository(served, a)),
        "impact" => parse(args).and_then(|a| impact(served, a)),
        "get_file" => parse(args).and_then(|a| get_file(served, a)),
        "get_tree" => parse(args).and_then(|a| get_tree(served, a)),
        "list_repos" => parse::<NoArgs>(args).map(|_| list_repos(served)),
        "repo_stats" => parse(args).and_then(|a| repo_stats(served, a)),
        "refresh" => parse(args).and_then(|a| refresh(served, a)),
        _ => return None,
    })
}

fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T> {
    serde_json::from_value(args).map_err(|e| Error::invalid(format!("bad arguments: {e}")))
}

fn budget(asked: Option<usize>, default: usize) -> Result<usize> {
    match asked {
        None => Ok(default),
        Some(b) if (1..=MAX_BUDGET).contains(&b) => Ok(b),
        Some(b) => Err(Error::invalid(format!(
            "budget_tokens {b} is out of range: 1 to {MAX_BUDGET}"
        ))),
    }
}

fn cursor(c: Option<&str>) -> Result<usize> {
    match c {
        None | Some("") => Ok(0),
        Some(c) => c.parse().map_err(|_| {
            Error::invalid(format!(
                "cursor {c:?} is not one this server handed out: pass a previous answer's next_cursor"
            ))
        }),
    }
}

fn limit(asked: Option<usize>, default: usize, max: usize) -> Result<usize> {
    match asked {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(Error::invalid(format!(
            "limit {n} is out of range: 1 to {max}"
        ))),
    }
}

/// A repository-relative path made safe: no absolute paths, no `..`, no symlink on the way
/// (a link may lead outside the repository). Returns it '/'-separated, without `.` parts.
pub fn safe_path(repo: &Repo, path: &str) -> Result<String> {
    let p = path.replace('\\', "/");
    let drive = p.len() >= 2 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic();
    if p.starts_with('/') || drive {
        return Err(Error::invalid(format!(
            "{path:?} is an absolute path: pass a path relative to the repository root"
        )));
    }
    let mut parts = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(Error::invalid(format!(
                    "{path:?} leads outside the repository ('..' is not allowed)"
                )))
            }
            part => parts.push(part),
        }
    }
    if let Some(root) = &repo.root {
        let mut at = root.clone();
        for part in &parts {
            at.push(part);
            if at
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                return Err(Error::invalid(format!(
                    "{path:?} goes through a symbolic link, which is not served (it may lead outside the repository)"
                )));
            }
        }
    }
    Ok(parts.join("/"))
}

/// Text under a budget: a header, then whole items while they fit, then a footer saying
/// what was left out and the cursor that continues.
struct Pager {
    tokenizer: Tokenizer,
    budget: usize,
    text: String,
    used: usize,
}

struct Paged {
    text: String,
    tokens: usize,
    /// Items included, from the cursor on.
    included: usize,
    next_cursor: Option<String>,
}

impl Pager {
    fn new(tokenizer: Tokenizer, budget: usize, header: &str) -> Result<Pager> {
        let used = tokenizer.count(header);
        if used + FOOTER_RESERVE > budget {
            return Err(Error::invalid(format!(
                "budget_tokens {budget} is too small for this answer: its header alone takes {used} tokens"
            )));
        }
        Ok(Pager {
            tokenizer,
            budget,
            text: header.to_string(),
            used,
        })
    }

    fn room(&self) -> usize {
        self.budget - FOOTER_RESERVE - self.used
    }

    /// Appends whole items from `start` while they fit.
    fn page(mut self, items: &[impl AsRef<str>], start: usize, what: &str) -> Result<Paged> {
        let mut end = start;
        for item in &items[start.min(items.len())..] {
            let item = item.as_ref();
            let cost = self.tokenizer.count(item);
            if cost > self.room() {
                break;
            }
            self.used += cost;
            self.text.push_str(item);
            end += 1;
        }
        if end == start && start < items.len() {
            let need = self.tokenizer.count(items[start].as_ref());
            return Err(Error::invalid(format!(
                "the next {what} alone takes {need} tokens, more than budget_tokens {} leaves: raise it",
                self.budget
            )));
        }
        let left = items.len().saturating_sub(end);
        let next_cursor = (left > 0).then(|| end.to_string());
        if let Some(c) = &next_cursor {
            self.text.push_str(&format!(
                "[{left} more {what}{} not shown: call again with cursor \"{c}\"]\n",
                if left == 1 { "" } else { "s" }
            ));
        }
        let tokens = self.tokenizer.count(&self.text);
        debug_assert!(tokens <= self.budget);
        Ok(Paged {
            text: self.text,
            tokens,
            included: end - start,
            next_cursor,
        })
    }
}

fn age_note(repo: &Repo) -> String {
    let f = repo.freshness();
    let mut s = match f.index_age_s {
        Some(a) if f.watched && a < 1.0 => "index current".to_string(),
        Some(a) => format!("index {a:.0} s old"),
        None => "index age unknown".to_string(),
    };
    if let Some(e) = f.refresh_error {
        s.push_str(&format!(
            "; last refresh failed, serving the last good index: {e}"
        ));
    }
    s
}

/// The fields every answer from one repository has.
fn answer_fields(repo: &Repo, budget: usize, tokens: usize) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("repo".into(), json!(repo.name));
    m.insert("freshness".into(), json!(repo.freshness()));
    m.insert("budget_tokens".into(), json!(budget));
    m.insert("tokens".into(), json!(tokens));
    m
}

/// `answer_fields` of a paged answer, with its cursor.
fn base(repo: &Repo, budget: usize, paged: &Paged) -> Map<String, Value> {
    let mut m = answer_fields(repo, budget, paged.tokens);
    m.insert("next_cursor".into(), json!(paged.next_cursor));
    m
}

/// One query's results from every repository in `repos`, best first (ties by repository,
/// then by `key`: a stable order for the cursor), the first `keep` of them. With one
/// repository its error is the answer's; with more, the failed ones are listed apart.
struct Merged<'a, T> {
    repos: Vec<&'a Arc<Repo>>,
    items: Vec<(&'a Arc<Repo>, T)>,
    unavailable: Vec<Value>,
}

impl<'a, T: serde::Serialize> Merged<'a, T> {
    fn run(
        repos: Vec<&'a Arc<Repo>>,
        reads: Reads,
        keep: usize,
        query: impl Fn(&crate::facade::Index) -> Result<Vec<T>>,
        score: impl Fn(&T) -> f64,
        key: impl Fn(&T) -> &str,
    ) -> Result<Merged<'a, T>> {
        let mut items = Vec::new();
        let mut unavailable = Vec::new();
        for &repo in &repos {
            match repo.with_reader(reads, &query) {
                Ok(found) => items.extend(found.into_iter().map(|x| (repo, x))),
                Err(e) if repos.len() > 1 => {
                    unavailable.push(json!({"repo": repo.name, "error": e.to_string()}))
                }
                Err(e) => return Err(e),
            }
        }
        items.sort_by(|(ra, a), (rb, b)| {
            score(b)
                .total_cmp(&score(a))
                .then_with(|| ra.name.cmp(&rb.name))
                .then_with(|| key(a).cmp(key(b)))
        });
        items.truncate(keep);
        Ok(Merged {
            repos,
            items,
            unavailable,
        })
    }

    fn many(&self) -> bool {
        self.repos.len() > 1
    }

    /// Each repository and the age of its index, for a header line.
    fn ages(&self) -> String {
        let ages: Vec<String> = self
            .repos
            .iter()
            .map(|r| format!("{}: {}", r.name, age_note(r)))
            .collect();
        ages.join(", ")
    }

    /// The structured answer: the items the page shows under `field`, each with its
    /// repository, and the freshness of every repository asked.
    fn structured(
        &self,
        budget: usize,
        paged: &Paged,
        start: usize,
        field: &str,
    ) -> Map<String, Value> {
        let from = start.min(self.items.len());
        let shown: Vec<Value> = self.items[from..from + paged.included]
            .iter()
            .map(|(repo, x)| {
                let mut v = json!(x);
                v["repo"] = json!(repo.name);
                v
            })
            .collect();
        let mut m = base(self.repos[0], budget, paged);
        if self.many() {
            m.insert("repo".into(), Value::Null);
            m.insert(
                "freshness".into(),
                json!(self.repos.iter().map(|r| r.freshness()).collect::<Vec<_>>()),
            );
        }
        m.insert(field.into(), Value::Array(shown));
        if !self.unavailable.is_empty() {
            m.insert("unavailable".into(), Value::Array(self.unavailable.clone()));
        }
        m
    }
}

fn search(served: &Served, a: SearchArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 2000)?;
    let start = cursor(a.cursor.as_deref())?;
    let limit = limit(a.limit, SearchOptions::DEFAULT_LIMIT, 200)?;
    let kind = a.kind.as_deref().map(str::parse).transpose()?;
    let options = SearchOptions {
        limit: start + limit,
        kind,
    };
    let hits = Merged::run(
        served.pick_many(a.repo.as_deref())?,
        Reads::Lookup,
        start + limit,
        |index| index.search(&a.query, &options),
        |h| h.score,
        |h| h.qualified_name.as_str(),
    )?;
    let items: Vec<String> = hits
        .items
        .iter()
        .map(|(repo, h)| {
            let mut s = format!(
                "{} {}  {}:{}",
                h.kind, h.qualified_name, h.path, h.start_line
            );
            if hits.many() {
                s.push_str(&format!("  [{}]", repo.name));
            }
            s.push('\n');
            if let Some(sig) = h.signature.as_deref().and_then(|s| s.lines().last()) {
                s.push_str(&format!("    {}\n", sig.trim()));
            }
            s
        })
        .collect();
    let header = format!(
        "{} hits for {:?} ({})\n",
        hits.items.len(),
        a.query,
        hits.ages()
    );
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(&items, start, "hit")?;
    let mut m = hits.structured(budget, &paged, start, "hits");
    m.insert("query".into(), json!(a.query));
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

fn get_source(served: &Served, a: SourceArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 4000)?;
    let start = cursor(a.cursor.as_deref())?;
    let repo = served.pick(a.repo.as_deref())?;
    let src = repo.with_index(|index| index.source(&a.qualified_name))?;
    let mut items: Vec<String> = src.source.lines().map(|l| format!("{l}\n")).collect();
    let source_lines = items.len();
    items.push(format!("# callers ({})\n", src.callers.len()));
    for l in &src.callers {
        items.push(format!(
            "#   {}  {:.2} {}\n",
            l.qualified_name, l.confidence, l.strategy
        ));
    }
    items.push(format!("# callees ({})\n", src.callees.len()));
    for l in &src.callees {
        items.push(format!(
            "#   {}  {:.2} {}\n",
            l.qualified_name, l.confidence, l.strategy
        ));
    }
    if !src.unresolved_calls.is_empty() {
        items.push(format!(
            "# unresolved calls ({})\n",
            src.unresolved_calls.len()
        ));
        for u in &src.unresolved_calls {
            items.push(format!("#   {}  [{}] line {}\n", u.text, u.reason, u.line));
        }
    }
    let header = format!(
        "# {} ({}) {}:{}-{} ({})\n",
        src.qualified_name,
        src.kind,
        src.path,
        src.start_line,
        src.end_line,
        age_note(repo)
    );
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(&items, start, "line")?;
    let end = start + paged.included;
    let shown_source: String = items[start.min(source_lines)..end.min(source_lines)].concat();
    let mut m = base(repo, budget, &paged);
    m.insert("qualified_name".into(), json!(src.qualified_name));
    m.insert("kind".into(), json!(src.kind));
    m.insert("path".into(), json!(src.path));
    m.insert("start_line".into(), json!(src.start_line));
    m.insert("end_line".into(), json!(src.end_line));
    m.insert("signature".into(), json!(src.signature));
    m.insert("docstring".into(), json!(src.docstring));
    m.insert("source".into(), json!(shown_source));
    m.insert(
        "source_complete".into(),
        json!(start == 0 && end >= source_lines),
    );
    if end >= items.len() {
        m.insert("callers".into(), json!(src.callers));
        m.insert("callees".into(), json!(src.callees));
        m.insert("unresolved_calls".into(), json!(src.unresolved_calls));
    }
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

fn trace(served: &Served, a: TraceArgs, direction: Direction) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 2000)?;
    let start = cursor(a.cursor.as_deref())?;
    let depth = limit(a.depth, TraceOptions::DEFAULT_DEPTH, 10)?;
    let repo = served.pick(a.repo.as_deref())?;
    let options = TraceOptions {
        depth,
        min_confidence: a
            .min_confidence
            .unwrap_or(TraceOptions::DEFAULT_MIN_CONFIDENCE),
    };
    let t = repo.with_index(|index| index.trace(&a.qualified_name, direction, &options))?;
    let arrow = match direction {
        Direction::Callers => "<-",
        Direction::Callees => "->",
    };
    let what = match direction {
        Direction::Callers => "callers",
        Direction::Callees => "callees",
    };
    let mut items: Vec<String> = t
        .hops
        .iter()
        .map(|h| {
            let other = match direction {
                Direction::Callers => &h.caller,
                Direction::Callees => &h.callee,
            };
            let at = h.line.map(|l| format!(":{l}")).unwrap_or_default();
            format!(
                "{}{arrow} {other}  {}{at}  {} {:.2} {}\n",
                "  ".repeat(h.depth.saturating_sub(1)),
                h.path,
                h.kind,
                h.confidence,
                h.strategy
            )
        })
        .collect();
    let hops = items.len();
    if !t.unresolved.is_empty() {
        items.push(format!("unresolved sites ({}):\n", t.unresolved.len()));
        items.extend(t.unresolved.iter().map(|u| {
            format!(
                "  {} in {}  {}:{}  [{}]\n",
                u.text, u.caller, u.path, u.line, u.reason
            )
        }));
    }
    let header = format!(
        "{what} of {} ({} {}:{}), depth {depth}, {hops} edges{} ({})\n",
        t.root.qualified_name,
        t.root.kind,
        t.root.path,
        t.root.line,
        if t.truncated {
            " (stopped at the hop limit)"
        } else {
            ""
        },
        age_note(repo)
    );
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(&items, start, "line")?;
    let end = start + paged.included;
    let mut m = base(repo, budget, &paged);
    m.insert("root".into(), json!(t.root));
    m.insert("direction".into(), json!(t.direction));
    m.insert("depth".into(), json!(depth));
    m.insert("edges_total".into(), json!(hops));
    m.insert("hops".into(), json!(t.hops[start.min(hops)..end.min(hops)]));
    let unresolved_from = start.saturating_sub(hops + 1);
    let unresolved_to = end.saturating_sub(hops + 1);
    m.insert(
        "unresolved".into(),
        json!(
            t.unresolved
                [unresolved_from.min(t.unresolved.len())..unresolved_to.min(t.unresolved.len())]
        ),
    );
    m.insert("truncated".into(), json!(t.truncated));
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

fn blast(served: &Served, a: BlastArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 4000)?;
    let start = cursor(a.cursor.as_deref())?;
    let repo = served.pick(a.repo.as_deref())?;
    let options = blast::Options {
        target: a.name,
        depth: a.depth.unwrap_or(blast::Options::DEFAULT_DEPTH),
        min_confidence: a
            .min_confidence
            .unwrap_or(blast::Options::DEFAULT_MIN_CONFIDENCE),
        tests_first: a.tests.unwrap_or(false),
    };
    let b = repo.with_index(|index| index.blast(&options))?;
    let body = b.body();
    // The summary goes first here: a page that cannot hold the whole tree still says what
    // the radius holds.
    let header = format!(
        "{} ({})\n{}",
        b.header().trim_end(),
        age_note(repo),
        b.summary()
    );
    let lines: Vec<&str> = body.iter().map(|l| l.text.as_str()).collect();
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(&lines, start, "line")?;
    let shown = &body[start.min(body.len())..(start + paged.included).min(body.len())];
    let (mut nodes, mut tests, mut sites) = (Vec::new(), Vec::new(), Vec::new());
    for line in shown {
        match line.shows {
            Some(Shows::Node(i)) => nodes.push(json!(b.nodes[i])),
            Some(Shows::Test(i)) => tests.push(json!(b.tests[i])),
            Some(Shows::Site(i)) => sites.push(json!(b.unresolved[i])),
            None => {}
        }
    }
    // The `codebase-indexer/blast/1` document, its lists cut to what the page shows.
    let mut m = match serde_json::to_value(&b) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    m.insert("nodes".into(), Value::Array(nodes));
    m.insert("tests".into(), Value::Array(tests));
    m.insert("unresolved".into(), Value::Array(sites));
    m.insert("lines_total".into(), json!(body.len()));
    m.extend(base(repo, budget, &paged));
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

fn rank_files(served: &Served, a: RankArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 1000)?;
    let start = cursor(a.cursor.as_deref())?;
    let limit = limit(a.limit, crate::facade::Index::DEFAULT_RANKED_FILES, 200)?;
    let ranked = Merged::run(
        served.pick_many(a.repo.as_deref())?,
        Reads::Ranking,
        start + limit,
        |index| index.rank_files(&a.query, start + limit),
        |f| f.score,
        |f| f.path.as_str(),
    )?;
    let items: Vec<String> = ranked
        .items
        .iter()
        .map(|(repo, f)| {
            let mut s = format!("{:.4}  {}", f.score, f.path);
            if let Some(sym) = &f.symbol {
                s.push_str(&format!("  {sym}"));
            }
            if let Some(of) = &f.copy_of {
                s.push_str(&format!("  (copy of {of})"));
            }
            if ranked.many() {
                s.push_str(&format!("  [{}]", repo.name));
            }
            s.push('\n');
            s
        })
        .collect();
    let header = format!("files ranked for the query ({})\n", ranked.ages());
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(&items, start, "file")?;
    let m = ranked.structured(budget, &paged, start, "files");
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

/// Room for a renderer under `budget` once the header line is paid for.
fn renderer_room(served: &Served, budget: usize, header: &str) -> Result<usize> {
    let cost = served.tokenizer.count(header);
    budget.checked_sub(cost).filter(|r| *r >= 50).ok_or_else(|| {
        Error::invalid(format!(
            "budget_tokens {budget} is too small for this answer: its header alone takes {cost} tokens"
        ))
    })
}

fn rendered(
    served: &Served,
    repo: &Repo,
    budget: usize,
    header: String,
    body: &str,
    mut m: Map<String, Value>,
) -> Answer {
    let text = format!("{header}{body}");
    m.extend(answer_fields(repo, budget, served.tokenizer.count(&text)));
    Answer {
        structured: Value::Object(m),
        text,
    }
}

/// `markdown` (the default), `xml` or `json`, for the answers rendered as documents.
fn document_format(format: Option<&str>) -> Result<pack::Format> {
    match format {
        None => Ok(pack::Format::Markdown),
        Some(f) => <pack::Format as clap::ValueEnum>::from_str(f, true)
            .map_err(|_| Error::invalid(format!("format {f:?} is not one of markdown, xml, json"))),
    }
}

/// The header of a document answer and the room its renderer has: markdown opens with the
/// line naming the answer (`what`, up to the repository's name), the repository and its
/// freshness; XML and JSON are documents of
/// their own, handed back as the renderer writes them.
fn document_header(
    served: &Served,
    repo: &Repo,
    budget: usize,
    format: pack::Format,
    what: &str,
) -> Result<(String, usize)> {
    match format {
        pack::Format::Markdown => {
            let header = format!("# {what} {} ({})\n", repo.name, age_note(repo));
            let room = renderer_room(served, budget, &header)?;
            Ok((header, room))
        }
        pack::Format::Xml | pack::Format::Json => Ok((String::new(), budget)),
    }
}

fn pack_repository(served: &Served, a: RepoPackArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, repopack::Options::DEFAULT_BUDGET)?;
    let repo = served.pick(a.repo.as_deref())?;
    let format = document_format(a.format.as_deref())?;
    let (header, room) = document_header(served, repo, budget, format, "repository pack of")?;
    let options = repopack::Options {
        budget: room,
        format,
        tokenizer: served.tokenizer,
        task: a.task,
        cursor: a.cursor,
        ..repopack::Options::default()
    };
    let p = repo.with_graph_index(Renderer::Pack, |index| index.pack_repository(&options))?;
    if let Some(floor) = p.floor_exceeds_budget {
        return Err(Error::invalid(format!(
            "the tree of this repository alone takes {floor} tokens: give budget_tokens of at least {} (or use skeleton or get_tree)",
            floor + (budget - room) + 1
        )));
    }
    let mut m = Map::new();
    m.insert("stats".into(), json!(p.stats));
    let files: Vec<Value> = p
        .files
        .iter()
        .map(|f| json!({"path": f.path, "layer": f.layer, "duplicate_of": f.duplicate_of}))
        .collect();
    m.insert("files".into(), Value::Array(files));
    m.insert("next_cursor".into(), json!(p.next_cursor));
    Ok(rendered(served, repo, budget, header, &p.text, m))
}

fn skeleton(served: &Served, a: SkeletonArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 4000)?;
    let repo = served.pick(a.repo.as_deref())?;
    let path = a.path.as_deref().map(|p| safe_path(repo, p)).transpose()?;
    let mode = match a.mode.as_deref() {
        None => skeleton::Mode::Auto,
        Some(m) => <skeleton::Mode as clap::ValueEnum>::from_str(m, true).map_err(|_| {
            Error::invalid(format!(
                "mode {m:?} is not one of auto, skeleton, compact, summary, deps"
            ))
        })?,
    };
    let header = format!(
        "# skeleton of {}{} ({})\n",
        repo.name,
        path.as_deref()
            .map(|p| format!(" under {p}"))
            .unwrap_or_default(),
        age_note(repo)
    );
    let room = renderer_room(served, budget, &header)?;
    let options = skeleton::Options {
        budget: room,
        mode,
        path_prefix: path.clone(),
        tokenizer: served.tokenizer,
        show_dropped: true,
        cursor: a.cursor,
        offer_cursor: true,
    };
    let s = repo.with_graph_index(Renderer::Skeleton, |index| index.skeleton(&options))?;
    let mut m = Map::new();
    m.insert("path".into(), json!(path));
    m.insert("mode".into(), json!(s.mode));
    m.insert("files_total".into(), json!(s.files_total));
    m.insert("files_included".into(), json!(s.account.included));
    m.insert("files".into(), json!(s.files));
    m.insert("shown_before".into(), json!(s.shown_before));
    m.insert("dropped_files".into(), json!(s.dropped_files));
    m.insert("next_cursor".into(), json!(s.next_cursor));
    Ok(rendered(served, repo, budget, header, &s.text, m))
}

fn map(served: &Served, a: MapArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, repomap::Options::DEFAULT_BUDGET)?;
    let repo = served.pick(a.repo.as_deref())?;
    let header = format!("# map of {} ({})\n", repo.name, age_note(repo));
    let room = renderer_room(served, budget, &header)?;
    let options = repomap::Options {
        budget: room,
        focus: a.focus.unwrap_or_default(),
        query: a.query,
        format: repomap::Format::Text,
        tokenizer: served.tokenizer,
        show_dropped: true,
        cursor: a.cursor,
        offer_cursor: true,
    };
    let r = repo.with_graph_index(Renderer::Map, |index| index.map(&options))?;
    let mut m = Map::new();
    m.insert("definitions_total".into(), json!(r.definitions_total));
    m.insert("focus".into(), json!(r.focus));
    m.insert("query".into(), json!(r.query));
    m.insert("entries".into(), json!(r.entries));
    m.insert("shown_before".into(), json!(r.shown_before));
    m.insert("dropped".into(), json!(r.account.dropped));
    m.insert("dropped_top".into(), json!(r.dropped_top));
    m.insert("next_cursor".into(), json!(r.next_cursor));
    Ok(rendered(served, repo, budget, header, &r.text, m))
}

fn pack(served: &Served, a: PackArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, pack::Options::DEFAULT_BUDGET)?;
    let target_count = [
        a.query.is_some(),
        a.qualified_name.is_some(),
        a.path.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if target_count != 1 {
        return Err(Error::invalid(
            "pass exactly one of query, qualified_name or path",
        ));
    }
    let repos = match (&a.query, a.repo.as_deref()) {
        (Some(_), None) => served.pick_many(None)?,
        _ => vec![served.pick(a.repo.as_deref())?],
    };
    let mut cursors = pack_cursors(a.cursor.as_deref(), &repos)?;
    // Repositories with nothing left after the cursor are not packed again.
    let pending: Vec<usize> = (0..repos.len())
        .filter(|&i| cursors[i] != Some(PackCursor::Done))
        .collect();
    if pending.is_empty() {
        return Err(Error::invalid(
            "this cursor continues after the last pack: nothing is left to show",
        ));
    }
    // Across repositories, room for the line handing out the joined cursor (a typical
    // cursor per repository).
    let cursor_line = |c: &str| format!("\n{}", cursor::offer_line("these packs", c));
    let reserve = if repos.len() > 1 {
        let typical: Vec<String> = repos
            .iter()
            .map(|r| format!("{}=pack.0123456789ab.0-99,120-199.100-119", r.name))
            .collect();
        served.tokenizer.count(&cursor_line(&typical.join(" ")))
    } else {
        0
    };
    let share = budget.saturating_sub(reserve) / pending.len();
    let mut text = String::new();
    let mut parts = Vec::new();
    for &i in &pending {
        let repo = repos[i];
        let target = match (&a.query, &a.qualified_name, &a.path) {
            (Some(q), _, _) => pack::Target::Query(q.clone()),
            (_, Some(qn), _) => pack::Target::Entry(qn.clone()),
            (_, _, Some(p)) => pack::Target::Entry(safe_path(repo, p)?),
            _ => unreachable!("one target checked above"),
        };
        let header = format!("# pack from {} ({})\n", repo.name, age_note(repo));
        let room = renderer_room(served, share, &header)?;
        let options = pack::Options {
            target,
            budget: room,
            signatures_only: a.signatures_only.unwrap_or(false),
            format: pack::Format::Markdown,
            tokenizer: served.tokenizer,
            show_dropped: true,
            cursor: match &cursors[i] {
                Some(PackCursor::After(c)) if !c.is_empty() => Some(c.clone()),
                _ => None,
            },
            offer_cursor: repos.len() == 1,
        };
        match repo.with_graph_index(Renderer::Pack, |index| index.pack(&options)) {
            Ok(p) => {
                cursors[i] = Some(match &p.next_cursor {
                    Some(c) => PackCursor::After(c.clone()),
                    None => PackCursor::Done,
                });
                text.push_str(&header);
                text.push_str(&p.text);
                let files: Vec<Value> = p
                    .files
                    .iter()
                    .map(|f| {
                        json!({
                            "path": f.path,
                            "language": f.language,
                            "symbols": f.symbols.iter().map(|s| json!({
                                "qualified_name": s.qualified_name,
                                "kind": s.kind,
                                "start_line": s.start_line,
                                "end_line": s.end_line,
                                "reason": s.reason,
                                "rendering": s.rendering,
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                parts.push(json!({
                    "repo": repo.name,
                    "freshness": repo.freshness(),
                    "tokens": p.account.tokens,
                    "code_tokens": p.code_tokens,
                    "included": p.account.included,
                    "dropped": p.account.dropped,
                    "shown_before": p.shown_before,
                    "next_cursor": p.next_cursor,
                    "roots": p.roots,
                    "roots_included": p.roots_included,
                    "files": files,
                    "dropped_top": p.dropped_top,
                }));
            }
            Err(e) if repos.len() > 1 => {
                parts.push(json!({"repo": repo.name, "error": e.to_string()}))
            }
            Err(e) => return Err(e),
        }
    }
    let next_cursor = if repos.len() == 1 {
        match cursors.pop().flatten() {
            Some(PackCursor::After(c)) => Some(c),
            _ => None,
        }
    } else {
        let left = cursors
            .iter()
            .any(|c| matches!(c, Some(PackCursor::After(c)) if !c.is_empty()));
        left.then(|| joined_pack_cursor(&repos, &cursors))
    };
    if let (Some(c), true) = (&next_cursor, repos.len() > 1) {
        let line = cursor_line(c);
        // Longer than the room kept for it: given in the structured answer only.
        if served.tokenizer.count(&format!("{text}{line}")) <= budget {
            text.push_str(&line);
        }
    }
    let tokens = served.tokenizer.count(&text);
    let structured = json!({
        "budget_tokens": budget,
        "tokens": tokens,
        "packs": parts,
        "next_cursor": next_cursor,
    });
    Ok(Answer { structured, text })
}

fn impact(served: &Served, a: ImpactArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, impact::Options::DEFAULT_BUDGET)?;
    let repo = served.pick(a.repo.as_deref())?;
    let spec = match (a.rev, a.staged.unwrap_or(false)) {
        (Some(_), true) => return Err(Error::invalid("pass rev or staged, not both")),
        (Some(rev), false) if rev.trim().is_empty() => {
            return Err(Error::invalid(
                "rev is empty: pass a commit, A..B or A...B, or leave it out for the work tree",
            ))
        }
        (Some(rev), false) => impact::Spec::parse(rev.trim()),
        (None, true) => impact::Spec::Staged,
        (None, false) => impact::Spec::Worktree,
    };
    let format = document_format(a.format.as_deref())?;
    let weights = match a.weights {
        None => impact::DEFAULT_WEIGHTS,
        Some(w) => impact_weights(&w)?,
    };
    let (header, room) = document_header(served, repo, budget, format, "impact in")?;
    let options = impact::Options {
        spec,
        symbols: a.symbols.unwrap_or_default(),
        budget: room,
        depth: a.depth.unwrap_or(impact::Options::DEFAULT_DEPTH),
        format,
        graph_only: a.graph_only.unwrap_or(false),
        weights,
        tokenizer: served.tokenizer,
    };
    // The server keeps the whole graph: an impact then reads only the diff's part from git.
    let i = repo.with_graph_index(Renderer::Pack, |index| {
        index.load_graph()?;
        index.impact(&options)
    })?;
    // The structured answer is the analysis; the code and the diffs are in the text.
    let mut m = match serde_json::to_value(&i) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for list in ["changed", "context"] {
        if let Some(Value::Array(items)) = m.get_mut(list) {
            for item in items.iter_mut().filter_map(Value::as_object_mut) {
                item.remove("code");
                item.remove("diff");
            }
        }
    }
    Ok(rendered(served, repo, budget, header, &i.text, m))
}

/// `[graph, text, same_file, cochange]`, each finite and 0 or more.
fn impact_weights(w: &[f64]) -> Result<impact::signals::Weights> {
    impact::signals::Weights::from_slice(w).ok_or_else(|| {
        Error::invalid(format!(
            "weights {w:?}: give four numbers of 0 or more, [graph, text, same_file, cochange], e.g. [0.6, 0.2, 0.1, 0.1]"
        ))
    })
}

/// Where a repository's pack stands after the packs a cursor stands for.
#[derive(Clone, Debug, PartialEq)]
enum PackCursor {
    /// Its own pack's cursor.
    After(String),
    /// Its pack showed everything.
    Done,
}

/// The state of each of `repos` a pack cursor gives (`None`: not packed yet). With one
/// repository the cursor is its pack's; across several it names each: `name=cursor` (or
/// `name=-` once done, `name=` when its pack failed and starts again), separated by spaces.
fn pack_cursors(cursor: Option<&str>, repos: &[&Arc<Repo>]) -> Result<Vec<Option<PackCursor>>> {
    let mut states = vec![None; repos.len()];
    let Some(cursor) = cursor.filter(|c| !c.is_empty()) else {
        return Ok(states);
    };
    if repos.len() == 1 {
        states[0] = Some(PackCursor::After(cursor.to_string()));
        return Ok(states);
    }
    let stale = || {
        Error::invalid(
            "this cursor was handed out for another set of repositories: call again without it",
        )
    };
    for part in cursor.split(' ') {
        let (name, c) = part.split_once('=').ok_or_else(stale)?;
        let i = repos
            .iter()
            .position(|r| r.name == name)
            .ok_or_else(stale)?;
        states[i] = Some(match c {
            "-" => PackCursor::Done,
            c => PackCursor::After(c.to_string()),
        });
    }
    if states.iter().any(Option::is_none) {
        return Err(stale());
    }
    Ok(states)
}

fn joined_pack_cursor(repos: &[&Arc<Repo>], states: &[Option<PackCursor>]) -> String {
    let parts: Vec<String> = repos
        .iter()
        .zip(states)
        .map(|(r, s)| match s {
            Some(PackCursor::After(c)) => format!("{}={c}", r.name),
            Some(PackCursor::Done) => format!("{}=-", r.name),
            None => format!("{}=", r.name),
        })
        .collect();
    parts.join(" ")
}

fn get_file(served: &Served, a: FileArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 4000)?;
    let repo = served.pick(a.repo.as_deref())?;
    let path = safe_path(repo, &a.path)?;
    let file = repo.with_index(|index| index.file(&path))?;
    let lines: Vec<&str> = file.content.split_inclusive('\n').collect();
    let first = a.start_line.unwrap_or(1).max(1);
    let last = a.end_line.unwrap_or(lines.len()).min(lines.len());
    if first > last.max(1) || (lines.is_empty() && first > 1) {
        return Err(Error::invalid(format!(
            "lines {first}-{last} are not in {path}, which has {} lines",
            lines.len()
        )));
    }
    let window = &lines[(first - 1).min(lines.len())..last];
    let start = cursor(a.cursor.as_deref())?;
    let header = format!(
        "# {} ({}, {} lines; from line {}) ({})\n",
        file.path,
        file.language,
        lines.len(),
        first + start,
        age_note(repo)
    );
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(window, start, "line")?;
    let shown_from = first + start;
    let shown_to = shown_from + paged.included;
    let mut m = base(repo, budget, &paged);
    m.insert("path".into(), json!(file.path));
    m.insert("language".into(), json!(file.language));
    m.insert("lines_total".into(), json!(lines.len()));
    m.insert("start_line".into(), json!(shown_from));
    m.insert("end_line".into(), json!(shown_to.saturating_sub(1)));
    m.insert(
        "content".into(),
        json!(window[start.min(window.len())..(start + paged.included).min(window.len())].concat()),
    );
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

fn get_tree(served: &Served, a: TreeArgs) -> Result<Answer> {
    let budget = budget(a.budget_tokens, 2000)?;
    let depth = limit(a.depth, 2, 20)?;
    let start = cursor(a.cursor.as_deref())?;
    let repo = served.pick(a.repo.as_deref())?;
    let prefix = a
        .prefix
        .as_deref()
        .map(|p| safe_path(repo, p))
        .transpose()?
        .unwrap_or_default();
    let dir = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}/")
    };
    let files = repo.with_index(|index| index.files(&dir))?;
    if files.is_empty() && !prefix.is_empty() {
        return Err(Error::NotFound { name: prefix });
    }
    // Files to `depth` levels below the folder, and every folder on the way with the count
    // of all files under it (deeper files are only counted).
    let mut entries: Vec<(String, Value)> = Vec::new();
    let mut folder_counts: std::collections::BTreeMap<String, usize> = Default::default();
    for f in &files {
        let rel = &f.path[dir.len()..];
        let parts: Vec<&str> = rel.split('/').collect();
        for level in 1..parts.len().min(depth + 1) {
            let folder = format!("{dir}{}/", parts[..level].join("/"));
            *folder_counts.entry(folder).or_default() += 1;
        }
        if parts.len() <= depth {
            entries.push((
                f.path.clone(),
                json!({"path": f.path, "type": "file", "language": f.language, "lines": f.lines, "size": f.size}),
            ));
        }
    }
    for (folder, n) in folder_counts {
        entries.push((
            folder.clone(),
            json!({"path": folder, "type": "folder", "files": n}),
        ));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let items: Vec<String> = entries
        .iter()
        .map(|(path, v)| {
            let rel = &path[dir.len()..];
            let level = rel.trim_end_matches('/').matches('/').count();
            let name = rel.trim_end_matches('/').rsplit('/').next().unwrap_or(rel);
            if v["type"] == "folder" {
                format!("{}{name}/  ({} files)\n", "  ".repeat(level), v["files"])
            } else {
                format!(
                    "{}{name}  {} {} lines\n",
                    "  ".repeat(level),
                    v["language"].as_str().unwrap_or(""),
                    v["lines"]
                )
            }
        })
        .collect();
    let header = format!(
        "# {}/{} ({} files) ({})\n",
        repo.name,
        prefix,
        files.len(),
        age_note(repo)
    );
    let paged = Pager::new(served.tokenizer, budget, &header)?.page(&items, start, "entry")?;
    let from = start.min(entries.len());
    let mut m = base(repo, budget, &paged);
    m.insert("prefix".into(), json!(prefix));
    m.insert("files_total".into(), json!(files.len()));
    m.insert(
        "entries".into(),
        Value::Array(
            entries[from..from + paged.included]
                .iter()
                .map(|(_, v)| v.clone())
                .collect(),
        ),
    );
    Ok(Answer {
        structured: Value::Object(m),
        text: paged.text,
    })
}

fn list_repos(served: &Served) -> Answer {
    // Fresh first, as every answer: an error that has cleared is not reported.
    for repo in &served.repos {
        repo.ensure_fresh();
    }
    let infos: Vec<_> = served.repos.iter().map(|r| r.info()).collect();
    let mut text = match infos.len() {
        1 => "1 repository served\n".to_string(),
        n => format!("{n} repositories served\n"),
    };
    for i in &infos {
        let where_ = i
            .url
            .clone()
            .or(i.root.clone())
            .or(i.location.clone())
            .unwrap_or_default();
        text.push_str(&format!("{} ({}) {}", i.name, i.kind, where_));
        match (&i.error, &i.freshness.index_age_s) {
            (Some(e), _) => text.push_str(&format!("  UNAVAILABLE: {e}")),
            (None, Some(a)) => text.push_str(&format!("  index {a:.0} s old")),
            (None, None) => {}
        }
        if let Some(e) = &i.freshness.refresh_error {
            text.push_str(&format!("  last refresh failed: {e}"));
        }
        if let Some(e) = &i.fetch_error {
            text.push_str(&format!("  last fetch failed: {e}"));
        }
        text.push('\n');
    }
    Answer {
        structured: json!({ "repos": infos }),
        text,
    }
}

fn repo_stats(served: &Served, a: RepoArgs) -> Result<Answer> {
    let repo = served.pick(a.repo.as_deref())?;
    let status = repo.with_index(|index| index.status())?;
    let info = repo.info();
    let g = &status.graph;
    let text = format!(
        "{} ({}): {} files, {} definitions, {} references, {} edges; languages: {}\ncall graph: {}\n{}\n",
        repo.name,
        info.kind,
        status.files,
        status.nodes,
        status.refs,
        status.edges,
        status
            .languages
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        serde_json::to_string(g).unwrap_or_default(),
        age_note(repo)
    );
    Ok(Answer {
        structured: json!({ "repo": info, "status": status }),
        text,
    })
}

fn refresh(served: &Served, a: RepoArgs) -> Result<Answer> {
    let repo: &Arc<Repo> = served.pick(a.repo.as_deref())?;
    let started = std::time::Instant::now();
    repo.refresh_now()?;
    let ms = started.elapsed().as_millis();
    Ok(Answer {
        structured: json!({ "repo": repo.name, "freshness": repo.freshness(), "elapsed_ms": ms }),
        text: format!("{} refreshed in {ms} ms\n", repo.name),
    })
}
