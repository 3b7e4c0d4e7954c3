//! The `indexer` command line: parse arguments, call the library, print.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use codebase_indexer::index::{self, IndexOptions, IndexSummary};
use codebase_indexer::model::NodeKind;
use codebase_indexer::store::{self, Mode};
use codebase_indexer::tokens::Tokenizer;
use codebase_indexer::{
    artifact, eval, eval_context, pack, project, query, rank, repomap, skeleton, staging, trace,
};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "indexer",
    version,
    about = "Index a repository into a local SQLite knowledge graph and query it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Target {
    /// Database file to use instead of the project's cached one.
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Project name (default: the indexed folder's name).
    #[arg(long, global = true, value_name = "NAME")]
    project: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Index (or re-index incrementally) a repository.
    Index {
        /// Repository root.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Reuse the existing index and redo only changed files (the default when one exists).
        #[arg(long, conflicts_with = "rebuild")]
        incremental: bool,
        /// Ignore any existing index and build from scratch.
        #[arg(long)]
        rebuild: bool,
        /// Skip paths matching this gitignore-style glob (repeatable).
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// Skip files larger than this many bytes.
        #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
        max_file_bytes: u64,
        /// Parallel parser threads (default: all cores).
        #[arg(long, short = 'j', value_name = "N")]
        jobs: Option<usize>,
        /// Keep only edges at least this confident (0..1); other sites go to `unresolved`.
        #[arg(long, default_value_t = 0.0, value_name = "F")]
        min_confidence: f64,
        /// Guess a name shared by at most this many definitions (confidence split among them).
        #[arg(long, default_value_t = 5, value_name = "N")]
        fuzzy_limit: usize,
        /// Index `.env` files and their variants (skipped by default), every value redacted.
        #[arg(long)]
        include_env: bool,
        /// List every skipped path with its reason.
        #[arg(long, short = 'v')]
        verbose: bool,
        /// Do not write the committed artifact (`.codebase-index/graph.db.zst`).
        #[arg(long)]
        no_artifact: bool,
        /// zstd level of the artifact (1-22).
        #[arg(long, default_value_t = artifact::DEFAULT_LEVEL, value_name = "N")]
        compression_level: i32,
        #[command(flatten)]
        target: Target,
    },
    /// Write the committed artifact of an index: a canonical copy of the database, zstd
    /// compressed, with `artifact.json` beside it.
    Export {
        /// Where to write it (default: `.codebase-index/graph.db.zst` in the indexed tree).
        #[arg(long, value_name = "PATH")]
        output: Option<PathBuf>,
        /// zstd level (1-22).
        #[arg(long, default_value_t = artifact::DEFAULT_LEVEL, value_name = "N")]
        compression_level: i32,
        #[command(flatten)]
        target: Target,
    },
    /// Load an artifact (`graph.db.zst`) as the index of a repository.
    Import {
        /// The artifact.
        artifact: PathBuf,
        /// Repository root it belongs to.
        #[arg(default_value = ".")]
        path: PathBuf,
        #[command(flatten)]
        target: Target,
    },
    /// Show the project, its database and what it holds.
    Status {
        #[command(flatten)]
        target: Target,
    },
    /// Full-text search over definitions (names, sub-tokens, signatures, docstrings).
    Search {
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Only this kind (Function, Method, Class, Interface, Enum, Type, Constant, Module, File).
        #[arg(long)]
        kind: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Files ranked for a natural-language query (an issue text, a question, a traceback).
    RankFiles {
        /// The query; `-` reads it from standard input.
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[command(flatten)]
        target: Target,
    },
    /// Measure retrieval on tasks with known answers: Acc@k, MRR, in-budget recall and latency,
    /// against a BM25 baseline over whole files.
    Eval {
        /// JSON lines: {"id", "query", "gold_files": [...], "gold_symbols": [...]?}.
        tasks: PathBuf,
        /// Cut-offs for Acc@k.
        #[arg(long, value_delimiter = ',', default_value = "1,3,5,10")]
        k: Vec<usize>,
        /// Token budgets for in-budget recall (files) or of each rendering (map, pack).
        #[arg(long, value_delimiter = ',', default_value = "4000,13000,27000")]
        budgets: Vec<usize>,
        /// files: rank-files against BM25 over whole files; map or pack: what the repo map or
        /// the query pack of each task's text holds at each budget.
        #[arg(long, default_value = "files")]
        mode: String,
        /// Tokenizer of the map and pack budgets: o200k or cl100k.
        #[arg(long, default_value = "o200k")]
        tokenizer: String,
        #[command(flatten)]
        target: Target,
    },
    /// The whole repository as signatures grouped by file, under a token budget.
    Skeleton {
        /// Token budget of the whole output.
        #[arg(long, default_value_t = 8000, value_name = "N")]
        budget: usize,
        /// auto (the richest that fits), skeleton, compact (~60%), summary (~10%), deps.
        #[arg(long, default_value = "auto")]
        mode: String,
        /// Only files under this path prefix.
        #[arg(long, value_name = "PREFIX")]
        path: Option<String>,
        #[command(flatten)]
        render: RenderArgs,
    },
    /// The definitions that matter most (personalized PageRank), under a token budget.
    Map {
        #[arg(long, default_value_t = 4000, value_name = "N")]
        budget: usize,
        /// Centre the map on these files (paths) or definitions (qualified names).
        #[arg(long, value_name = "FILE|QN", num_args = 1..)]
        focus: Vec<String>,
        /// Centre the map on what this text names (`-` reads it from standard input).
        #[arg(long, value_name = "TEXT")]
        query: Option<String>,
        /// text or json.
        #[arg(long, default_value = "text")]
        format: String,
        #[command(flatten)]
        render: RenderArgs,
    },
    /// The code around a symbol, a file or a question, under a token budget.
    Pack {
        /// A definition (qualified name) or a file (path).
        #[arg(
            long,
            value_name = "QN|FILE",
            required_unless_present = "query",
            conflicts_with = "query"
        )]
        entry: Option<String>,
        /// A question or issue text (`-` reads it from standard input).
        #[arg(long, value_name = "TEXT")]
        query: Option<String>,
        #[arg(long, default_value_t = 8000, value_name = "N")]
        budget: usize,
        /// Symbols other than the roots as signatures only.
        #[arg(long)]
        signatures_only: bool,
        /// markdown, xml or json.
        #[arg(long, default_value = "markdown")]
        format: String,
        /// Write the pack to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        render: RenderArgs,
    },
    /// Who calls a definition, breadth-first, with unresolved call sites naming it.
    TraceCallers(TraceArgs),
    /// What a definition calls, breadth-first, with its unresolved and external calls.
    TraceCallees(TraceArgs),
    /// Print the source of a definition (qualified name) or a file (path), with its callers
    /// and callees.
    GetSource {
        qualified_name: String,
        #[command(flatten)]
        target: Target,
    },
}

/// Options every renderer takes.
#[derive(Args)]
struct RenderArgs {
    /// o200k (default) or cl100k.
    #[arg(long, default_value = "o200k")]
    tokenizer: String,
    /// Also list the best items left out (as many as fit the budget).
    #[arg(long)]
    show_dropped: bool,
    #[command(flatten)]
    target: Target,
}

#[derive(Args)]
struct TraceArgs {
    /// Qualified name (or an unambiguous short name or suffix) of the definition.
    qualified_name: String,
    /// How many hops to follow.
    #[arg(long, default_value_t = 3, value_name = "N")]
    depth: usize,
    /// Follow only edges at least this confident (0..1); weaker ones are listed apart.
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    min_confidence: f64,
    #[command(flatten)]
    target: Target,
}

/// Byte offsets are stored as 32-bit values; no source file comes near this.
const MAX_FILE_BYTES_LIMIT: u64 = 1 << 30;

fn main() {
    codebase_indexer::extract::use_mimalloc_for_parsing();
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        // A closed pipe (`indexer search x | head`) is the reader's choice, not a failure.
        let broken_pipe = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        });
        if broken_pipe {
            std::process::exit(0);
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Index {
            path,
            incremental: _,
            rebuild,
            exclude,
            max_file_bytes,
            include_env,
            jobs,
            min_confidence,
            fuzzy_limit,
            verbose,
            no_artifact,
            compression_level,
            target,
        } => {
            check_confidence(min_confidence)?;
            artifact::check_level(compression_level)?;
            if max_file_bytes > MAX_FILE_BYTES_LIMIT {
                anyhow::bail!(
                    "--max-file-bytes {max_file_bytes} is too large: files over \
                     {MAX_FILE_BYTES_LIMIT} bytes cannot be indexed"
                );
            }
            let root = path
                .canonicalize()
                .with_context(|| format!("cannot index {}: no such directory", path.display()))?;
            let db = db_for(&target, &root)?;
            let name = project_name(&target, &root);
            let jobs =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
            let bar = progress_bar();
            let summary = index::run(&IndexOptions {
                root,
                db,
                project: name,
                excludes: exclude,
                max_file_bytes,
                include_env,
                jobs,
                rebuild,
                min_confidence,
                fuzzy_limit,
                artifact_level: (!no_artifact).then_some(compression_level),
                progress: bar.clone().map(|b| {
                    Box::new(move |stage: &str, done: usize, total: usize| {
                        b.set_message(stage.to_string());
                        b.set_length(total as u64);
                        b.set_position(done as u64);
                    }) as index::Progress
                }),
            });
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let summary = summary?;
            for note in &summary.notes {
                eprintln!("note: {note}");
            }
            if target.json {
                print_json(&summary)
            } else {
                print_summary(&summary, verbose)
            }
        }
        Command::Export {
            output,
            compression_level,
            target,
        } => {
            let db = project::locate(target.db.as_deref(), target.project.as_deref())?;
            let output = match output {
                Some(o) => o,
                None => {
                    let conn = store::open(&db, Mode::ReadOnly)?;
                    let root = store::get_meta(&conn, "root")?
                        .context("the index records no root folder: pass --output")?;
                    artifact::path_in(std::path::Path::new(&root))
                }
            };
            let written = artifact::export(&db, &output, compression_level)?;
            if target.json {
                return print_json(&serde_json::json!({
                    "artifact": output, "written": written.is_some(), "manifest": written
                }));
            }
            match written {
                Some(m) => writeln!(
                    out,
                    "wrote {} ({}, {:.2}x of {}; {} files, {} nodes, {} edges)",
                    output.display(),
                    human_bytes(m.artifact_bytes),
                    m.compression_ratio,
                    human_bytes(m.database_bytes),
                    m.files,
                    m.nodes,
                    m.edges
                )?,
                None => writeln!(out, "{} is up to date", output.display())?,
            }
            Ok(())
        }
        Command::Import {
            artifact: file,
            path,
            target,
        } => {
            let root = path
                .canonicalize()
                .with_context(|| format!("no such directory: {}", path.display()))?;
            let db = db_for(&target, &root)?;
            let _lock = store::lock_for_writing(&db)?;
            staging::remove_stale(&db);
            let staged = staging::temp_beside(&db, "db");
            artifact::bootstrap(&file, &root, &staged)?;
            let installed = (|| {
                let conn = store::open(&staged, Mode::ReadWrite)?;
                store::set_meta(&conn, "root", &root.to_string_lossy())?;
                store::set_meta(&conn, "project", &project_name(&target, &root))?;
                conn.execute_batch("PRAGMA journal_mode = DELETE")?;
                drop(conn);
                store::install(&staged, &db)
            })();
            if installed.is_err() {
                let _ = std::fs::remove_file(&staged);
            }
            installed?;
            writeln!(
                out,
                "imported {} as the index of {} -> {}",
                file.display(),
                root.display(),
                db.display()
            )?;
            Ok(())
        }
        Command::Status { target } => {
            let (conn, db) = open_target(&target)?;
            let s = query::status(&conn, &db)?;
            if target.json {
                return print_json(&s);
            }
            writeln!(out, "project   {}", s.project.as_deref().unwrap_or("?"))?;
            writeln!(out, "root      {}", s.root.as_deref().unwrap_or("?"))?;
            writeln!(out, "database  {} ({})", s.db, human_bytes(s.db_bytes))?;
            writeln!(
                out,
                "contents  {} files, {} nodes, {} reference sites, {} edges",
                s.files, s.nodes, s.refs, s.edges
            )?;
            writeln!(out, "languages {}", join_counts(&s.languages))?;
            writeln!(out, "nodes     {}", join_counts(&s.nodes_by_kind))?;
            writeln!(out, "refs      {}", join_counts(&s.refs_by_kind))?;
            let g = &s.graph;
            writeln!(out, "edges     {}", join_counts(&g.edges_by_kind))?;
            writeln!(out, "calls by  {}", join_counts(&g.call_edges_by_strategy))?;
            writeln!(
                out,
                "call sites {}: {:.1}% resolved, {:.1}% external, {:.1}% unresolved ({})",
                g.call_sites,
                100.0 * g.resolved_ratio,
                100.0 * g.external_ratio,
                100.0 * g.unresolved_ratio,
                join_counts(&g.call_sites_unresolved_by_reason)
            )?;
            writeln!(
                out,
                "graph     average degree {:.2}, isolated files {:.1}%, low-confidence edges {:.1}%",
                g.average_degree,
                100.0 * g.isolated_files_ratio,
                100.0 * g.low_confidence_ratio
            )?;
            if s.syntax_error_files > 0 {
                writeln!(
                    out,
                    "files with syntax errors (partially extracted): {}",
                    s.syntax_error_files
                )?;
            }
            if !s.redactions.is_empty() {
                writeln!(
                    out,
                    "redacted  {} secrets, kept out of the index:",
                    s.redactions.len()
                )?;
                for r in &s.redactions {
                    writeln!(out, "  {}:{} {}", r.path, r.line, r.kind)?;
                }
            }
            Ok(())
        }
        Command::Search {
            query,
            limit,
            kind,
            target,
        } => {
            let kind = kind
                .map(|k| {
                    NodeKind::parse(&k).with_context(|| {
                        format!(
                            "unknown kind {k:?}: use one of {}",
                            NodeKind::ALL.map(NodeKind::as_str).join(", ")
                        )
                    })
                })
                .transpose()?;
            let conn = open_for_query(&target)?;
            let hits = query::search(&conn, &query, limit, kind)?;
            if target.json {
                return print_json(&serde_json::json!({ "query": query, "hits": hits }));
            }
            if hits.is_empty() {
                eprintln!("no matches for {query:?}");
            }
            for h in hits {
                writeln!(
                    out,
                    "{:<9} {}  {}:{}",
                    h.kind, h.qualified_name, h.path, h.start_line
                )?;
                if let Some(sig) = h.signature.as_deref().and_then(|s| s.lines().last()) {
                    writeln!(out, "          {sig}")?;
                }
            }
            Ok(())
        }
        Command::RankFiles {
            query,
            limit,
            target,
        } => {
            let query = read_text(query)?;
            let conn = open_for_query(&target)?;
            let ranked = rank::rank_files(&conn, &query, limit)?;
            if target.json {
                return print_json(&ranked);
            }
            for f in ranked {
                writeln!(
                    out,
                    "{:>7.4}  {}  {}",
                    f.score,
                    f.path,
                    f.symbol.as_deref().unwrap_or("")
                )?;
            }
            Ok(())
        }
        Command::Eval {
            tasks,
            k,
            budgets,
            mode,
            tokenizer,
            target,
        } => {
            let renderer = match mode.as_str() {
                "files" => None,
                "map" => Some(eval_context::Renderer::Map),
                "pack" => Some(eval_context::Renderer::Pack),
                _ => anyhow::bail!("unknown eval mode {mode:?}: use files, map or pack"),
            };
            let tasks = eval::read_tasks(&tasks)?;
            let conn = open_for_query(&target)?;
            if let Some(renderer) = renderer {
                let tokenizer = Tokenizer::parse(&tokenizer)?;
                let report = eval_context::run(&conn, &tasks, renderer, &budgets, tokenizer)?;
                if target.json {
                    return print_json(&report);
                }
                return eval_context::print(&report, &mut out);
            }
            let report = eval::run(&conn, &tasks, &eval::EvalOptions { k, budgets })?;
            if target.json {
                return print_json(&report);
            }
            eval::print(&report, &mut out)?;
            Ok(())
        }
        Command::Skeleton {
            budget,
            mode,
            path,
            render,
        } => {
            let tokenizer = warm(&render.tokenizer)?;
            let opts = skeleton::Options {
                budget,
                mode: skeleton::Mode::parse(&mode)?,
                path_prefix: path,
                tokenizer,
                show_dropped: render.show_dropped,
            };
            let conn = open_for_query(&render.target)?;
            let s = skeleton::render(&conn, &opts)?;
            if render.target.json {
                return print_json(&s);
            }
            write!(out, "{}", s.text)?;
            Ok(())
        }
        Command::Map {
            budget,
            focus,
            query,
            format,
            render,
        } => {
            let tokenizer = warm(&render.tokenizer)?;
            let opts = repomap::Options {
                budget,
                focus,
                query: query.map(read_text).transpose()?,
                format: if render.target.json {
                    repomap::Format::Json
                } else {
                    repomap::Format::parse(&format)?
                },
                tokenizer,
                show_dropped: render.show_dropped,
            };
            let conn = open_for_query(&render.target)?;
            let map = repomap::render(&conn, &opts)?;
            write!(out, "{}", map.text)?;
            Ok(())
        }
        Command::Pack {
            entry,
            query,
            budget,
            signatures_only,
            format,
            output,
            render,
        } => {
            let tokenizer = warm(&render.tokenizer)?;
            let target = match (entry, query) {
                (Some(e), None) => pack::Target::Entry(e),
                (None, Some(q)) => pack::Target::Query(read_text(q)?),
                _ => anyhow::bail!("pass exactly one of --entry and --query"),
            };
            let opts = pack::Options {
                target,
                budget,
                signatures_only,
                format: if render.target.json {
                    pack::Format::Json
                } else {
                    pack::Format::parse(&format)?
                },
                tokenizer,
                show_dropped: render.show_dropped,
            };
            let conn = open_for_query(&render.target)?;
            let p = pack::build(&conn, &opts)?;
            match output {
                Some(path) => {
                    staging::write_atomically(&path, p.text.as_bytes())?;
                    eprintln!(
                        "wrote {}: {} symbols, {} of {} tokens",
                        path.display(),
                        p.account.included,
                        p.account.tokens,
                        p.account.budget
                    );
                }
                None => write!(out, "{}", p.text)?,
            }
            Ok(())
        }
        Command::TraceCallers(args) => print_trace(args, trace::Direction::Callers),
        Command::TraceCallees(args) => print_trace(args, trace::Direction::Callees),
        Command::GetSource {
            qualified_name,
            target,
        } => {
            let conn = open_for_query(&target)?;
            let src = query::get_source(&conn, &qualified_name)?;
            if target.json {
                return print_json(&src);
            }
            writeln!(
                out,
                "# {} ({}) {}:{}-{}",
                src.qualified_name, src.kind, src.path, src.start_line, src.end_line
            )?;
            write!(out, "{}", src.source)?;
            if !src.source.ends_with('\n') {
                writeln!(out)?;
            }
            let links = |label: &str, links: &[trace::Link], out: &mut dyn Write| -> Result<()> {
                writeln!(out, "# {label} ({})", links.len())?;
                for l in links {
                    writeln!(
                        out,
                        "#   {}  {:.2} {}",
                        l.qualified_name, l.confidence, l.strategy
                    )?;
                }
                Ok(())
            };
            links("callers", &src.callers, &mut out)?;
            links("callees", &src.callees, &mut out)?;
            if !src.unresolved_calls.is_empty() {
                writeln!(out, "# unresolved calls ({})", src.unresolved_calls.len())?;
                for u in &src.unresolved_calls {
                    writeln!(out, "#   {}  [{}] line {}", u.text, u.reason, u.line)?;
                }
            }
            Ok(())
        }
    }
}

/// The tokenizer a renderer asked for, loading on another thread while the graph is read.
fn warm(name: &str) -> Result<Tokenizer> {
    let tokenizer = Tokenizer::parse(name)?;
    tokenizer.warm_in_background();
    Ok(tokenizer)
}

/// A text argument, or standard input for `-`.
fn read_text(arg: String) -> Result<String> {
    if arg == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read the query from stdin")
    } else {
        Ok(arg)
    }
}

/// The database for indexing `root`: `--db`, or the project's in the cache.
fn db_for(target: &Target, root: &std::path::Path) -> Result<PathBuf> {
    match &target.db {
        Some(db) => Ok(db.clone()),
        None => project::db_for_root(root, target.project.as_deref()),
    }
}

/// `--project`, or the indexed folder's name.
fn project_name(target: &Target, root: &std::path::Path) -> String {
    target.project.clone().unwrap_or_else(|| {
        root.file_name()
            .map_or("root".into(), |n| n.to_string_lossy().into_owned())
    })
}

fn check_confidence(c: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&c) {
        anyhow::bail!("--min-confidence {c} is out of range: use a value from 0 to 1");
    }
    Ok(())
}

fn print_trace(args: TraceArgs, direction: trace::Direction) -> Result<()> {
    check_confidence(args.min_confidence)?;
    let conn = open_for_query(&args.target)?;
    let root = query::resolve_target(&conn, &args.qualified_name)?;
    let t = trace::trace(&conn, root, direction, args.depth, args.min_confidence)?;
    if args.target.json {
        return print_json(&t);
    }
    let mut out = std::io::stdout().lock();
    let (what, arrow) = match direction {
        trace::Direction::Callers => ("callers", "<-"),
        trace::Direction::Callees => ("callees", "->"),
    };
    writeln!(
        out,
        "{what} of {} ({} {}:{}), depth {}",
        t.root.qualified_name, t.root.kind, t.root.path, t.root.line, t.depth
    )?;
    if t.hops.is_empty() {
        writeln!(out, "  no resolved {what}")?;
    }
    for h in &t.hops {
        let (near, far) = match direction {
            trace::Direction::Callers => (&h.callee, &h.caller),
            trace::Direction::Callees => (&h.caller, &h.callee),
        };
        writeln!(
            out,
            "  {}{near} {arrow} {far}  {}:{}  {:.2} {}{}",
            "  ".repeat(h.depth - 1),
            h.path,
            h.line.unwrap_or(0),
            h.confidence,
            h.strategy,
            if h.kind == "references" {
                " (reference)"
            } else {
                ""
            }
        )?;
    }
    if t.truncated {
        writeln!(out, "  ... stopped after {} edges", trace::MAX_HOPS)?;
    }
    if !t.unresolved.is_empty() {
        let label = match direction {
            trace::Direction::Callers => "call sites naming it that did not resolve to it",
            trace::Direction::Callees => "calls that resolved to no definition",
        };
        writeln!(out, "{label} ({}):", t.unresolved.len())?;
        for u in &t.unresolved {
            let candidates = if u.candidates > 0 {
                format!(", {} candidates", u.candidates)
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {} {arrow} {}  {}:{}  [{}{candidates}]",
                u.caller, u.text, u.path, u.line, u.reason
            )?;
        }
    }
    Ok(())
}

fn open_for_query(target: &Target) -> Result<rusqlite::Connection> {
    Ok(open_target(target)?.0)
}

/// The database a query reads and its path. An artifact (`--db graph.db.zst`) is
/// decompressed to a temporary file, removed once open.
fn open_target(target: &Target) -> Result<(rusqlite::Connection, PathBuf)> {
    let db = project::locate(target.db.as_deref(), target.project.as_deref())?;
    if db.extension().is_none_or(|e| e != "zst") {
        return Ok((store::open(&db, Mode::ReadOnly)?, db));
    }
    let temp = std::env::temp_dir().join(format!("indexer-{}.db", std::process::id()));
    artifact::decompress(&db, &temp)?;
    let conn = store::open(&temp, Mode::ReadOnly);
    // Open, the file's pages stay readable after its name is gone.
    let _ = std::fs::remove_file(&temp);
    Ok((conn?, db))
}

fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    // Keeps spinning while a long stage (index building) reports no new position.
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {pos}/{len} files {wide_bar}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn print_summary(s: &IndexSummary, verbose: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "indexed {} ({} run) in {:.2}s -> {}",
        s.root,
        s.mode,
        s.elapsed_ms as f64 / 1000.0,
        s.db
    )?;
    writeln!(
        out,
        "files     {} in index: {} extracted, {} unchanged, {} removed",
        s.files, s.extracted, s.unchanged, s.removed
    )?;
    writeln!(out, "languages {}", join_counts(&s.languages))?;
    writeln!(out, "nodes     {}", join_counts(&s.nodes_by_kind))?;
    writeln!(
        out,
        "graph     {} files resolved: {} edges, {} unresolved references",
        s.resolution.files, s.resolution.edges, s.resolution.unresolved
    )?;
    if let Some(from) = &s.bootstrapped_from {
        writeln!(
            out,
            "started   from {from}: only files that differ from it were extracted"
        )?;
    }
    if let Some(m) = &s.artifact {
        writeln!(
            out,
            "artifact  {}/{}: {} ({:.2}x of {}, zstd level {})",
            artifact::DIR,
            artifact::FILE,
            human_bytes(m.artifact_bytes),
            m.compression_ratio,
            human_bytes(m.database_bytes),
            m.compression_level
        )?;
    }
    let skipped: usize = s.skipped.values().sum();
    if skipped > 0 {
        writeln!(out, "skipped   {skipped}: {}", join_counts(&s.skipped))?;
    }
    if s.syntax_error_files > 0 {
        writeln!(
            out,
            "recovered {} files with syntax errors (what parsed is indexed)",
            s.syntax_error_files
        )?;
    }
    if s.invalid_utf8_files > 0 {
        writeln!(
            out,
            "replaced  invalid UTF-8 in {} files (indexed with U+FFFD)",
            s.invalid_utf8_files
        )?;
    }
    for path in &s.abandoned_parse_files {
        writeln!(
            out,
            "abandoned parsing {path}: it took too long or the extractor failed (kept as a file node only)"
        )?;
    }
    if !s.redactions.is_empty() {
        let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
        for r in &s.redactions {
            *kinds.entry(r.kind).or_default() += 1;
        }
        writeln!(
            out,
            "redacted  {} secrets, kept out of the index: {}{}",
            s.redactions.len(),
            join_counts(&kinds),
            if verbose { "" } else { " (-v lists them)" }
        )?;
    }
    if verbose {
        writeln!(out, "stages    {} (ms)", join_counts(&s.phases_ms))?;
        for r in &s.redactions {
            writeln!(out, "redact {}:{} {}", r.path, r.line, r.kind)?;
        }
        for (reason, paths) in &s.skipped_paths {
            for p in paths {
                writeln!(out, "skip {:<15} {p}", reason.as_str())?;
            }
        }
    }
    Ok(())
}

fn join_counts<K: std::fmt::Display, V: std::fmt::Display>(
    m: &std::collections::BTreeMap<K, V>,
) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

// Extraction allocates many small strings on several threads; mimalloc handles that pattern
// markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
