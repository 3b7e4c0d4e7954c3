//! The `indexer` command line: parse arguments, call the library's `Index`, print.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use codebase_indexer::{
    ArtifactWrite, BlastOptions, DiffSpec, Direction, EvalOptions, Freshness, ImpactOptions, Index,
    IndexOptions, IndexSummary, Link, MapFormat, MapOptions, NodeKind, PackFormat, PackOptions,
    PackTarget, Renderer, RepoPackOptions, SearchOptions, SkeletonMode, SkeletonOptions, Task,
    Tokenizer, TraceOptions, Weights, ARTIFACT_DIR, ARTIFACT_FILE, DEFAULT_IMPACT_WEIGHTS,
    MAX_TRACE_HOPS,
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

/// Which index a command reads or writes.
#[derive(Args, Clone)]
struct Selection {
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

/// What `eval` measures.
#[derive(Clone, Copy, ValueEnum)]
enum EvalMode {
    Files,
    Map,
    Pack,
}

#[derive(Subcommand)]
enum Command {
    /// Index (or re-index incrementally) a repository.
    Index(IndexArgs),
    /// Write the committed artifact of an index: a canonical copy of the database, zstd
    /// compressed, with `artifact.json` beside it.
    Export(ExportArgs),
    /// Load an artifact (`graph.db.zst`) as the index of a repository.
    Import(ImportArgs),
    /// Show the project, its database and what it holds.
    Status(StatusArgs),
    /// Full-text search over definitions (names, sub-tokens, signatures, docstrings).
    Search(SearchArgs),
    /// Files ranked for a natural-language query (an issue text, a question, a traceback).
    RankFiles(RankFilesArgs),
    /// Measure retrieval on tasks with known answers: Acc@k, MRR, in-budget recall and latency,
    /// against a BM25 baseline over whole files.
    Eval(EvalArgs),
    /// The whole repository as signatures grouped by file, under a token budget.
    Skeleton(SkeletonArgs),
    /// The definitions that matter most (personalized PageRank), under a token budget.
    Map(MapArgs),
    /// The code around a symbol, a file or a question, or the whole repository (`--all`),
    /// under a token budget.
    Pack(PackArgs),
    /// Restore the files a whole-repository pack (JSON) holds in full into a folder.
    Unpack(UnpackArgs),
    /// What a git diff changes and the context it needs, under a token budget: the changed
    /// definitions with their diff, then the definitions most likely affected (call graph,
    /// text similarity, same file, co-change in the history before the diff).
    Impact(ImpactArgs),
    /// Who calls a definition, breadth-first, with unresolved call sites naming it.
    TraceCallers(TraceArgs),
    /// What a definition calls, breadth-first, with its unresolved and external calls.
    TraceCallees(TraceArgs),
    /// The blast radius of a definition or a file: its transitive callers as a tree with
    /// edge and path confidences, the unresolved call sites that might also reach it, and the
    /// tests among the callers.
    Blast(BlastArgs),
    /// Print the source of a definition (qualified name) or a file (path), with its callers
    /// and callees.
    GetSource(GetSourceArgs),
    /// The git pre-commit hook that stages, at each commit, the artifact of what the commit
    /// holds.
    #[command(subcommand)]
    Hook(HookCommand),
    /// Serve the indexed repositories to agents over the Model Context Protocol (stdio, or
    /// Streamable HTTP with --http).
    Serve(ServeArgs),
    /// The repositories `indexer serve` serves when no --repo is given.
    #[command(subcommand)]
    Repo(RepoCommand),
}

#[derive(Args)]
struct ServeArgs {
    /// Serve Streamable HTTP on this address (path /mcp) instead of stdio; loopback needs no
    /// token, any other address a bearer token
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Serve this tree or artifact (repeatable) instead of the registered repositories
    #[arg(long = "repo", value_name = "PATH")]
    repos: Vec<PathBuf>,
    /// Bearer token HTTP clients must send (default off loopback: one generated and printed once)
    #[arg(
        long,
        value_name = "TOKEN",
        env = "INDEXER_SERVE_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Allow browser requests from this origin, e.g. http://myhost:3000 (repeatable; loopback
    /// origins are always allowed)
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Fetch remote repositories this often, jittered by 10% (seconds, or with an s, m or h
    /// suffix; default 15m)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    refresh_interval: Option<std::time::Duration>,
    /// Never fetch remote repositories in the background
    #[arg(long)]
    no_auto_refresh: bool,
    /// Abandon a tool call after this long (seconds, or with an s, m or h suffix; default 60s)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    call_timeout: Option<std::time::Duration>,
}

#[derive(Subcommand)]
enum RepoCommand {
    /// Register a tree (indexed now), a committed artifact (graph.db.zst) or a git URL (cloned
    /// shallowly into the cache folder and indexed now)
    Add {
        /// A folder, an artifact, or a git URL
        target: String,
        /// Name to serve it under (default: the last part of its path or URL)
        #[arg(long)]
        name: Option<String>,
    },
    /// List the registered repositories
    List {
        /// Print one JSON document on stdout
        #[arg(long)]
        json: bool,
    },
    /// Unregister a repository (a remote's clone is deleted; a tree and its index stay)
    Remove {
        /// Its name, as `repo list` shows it
        name: String,
    },
}

/// `90`, `90s`, `15m`, `2h`.
fn parse_duration(s: &str) -> std::result::Result<std::time::Duration, String> {
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => s.split_at(at),
        None => (s, "s"),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a duration like 90s, 15m or 2h"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("{s:?} is not a duration like 90s, 15m or 2h")),
    };
    if secs == 0 {
        return Err("a duration must be at least one second".into());
    }
    Ok(std::time::Duration::from_secs(secs))
}

#[derive(Subcommand)]
enum HookCommand {
    /// Write the hook into the repository's hooks folder (`.git/hooks/pre-commit`).
    Install {
        /// A folder of the repository.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Replace a pre-commit hook that is not this tool's.
        #[arg(long)]
        force: bool,
    },
    /// What the hook runs: index the staged files and stage their artifact.
    PreCommit,
}

#[derive(Args)]
struct IndexArgs {
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
    #[arg(long, default_value_t = IndexOptions::DEFAULT_MAX_FILE_BYTES, value_name = "BYTES")]
    max_file_bytes: u64,
    /// Parallel parser threads (default: all cores).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Keep only edges at least this confident (0..1); other sites go to `unresolved`.
    #[arg(long, default_value_t = IndexOptions::DEFAULT_MIN_CONFIDENCE, value_name = "F")]
    min_confidence: f64,
    /// Guess a name shared by at most this many definitions (confidence split among them).
    #[arg(long, default_value_t = IndexOptions::DEFAULT_FUZZY_LIMIT, value_name = "N")]
    fuzzy_limit: usize,
    /// Index `.env` files and their variants (skipped by default), every value redacted.
    #[arg(long)]
    include_env: bool,
    /// List every skipped path with its reason.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Do not write the committed artifact (`.codebase-index/graph.db.zst`), not even into a
    /// tree that has none.
    #[arg(long, conflicts_with = "export")]
    no_artifact: bool,
    /// Also refresh the committed artifact when the tree has one (by default only a tree
    /// without one gets it; `indexer hook install` refreshes it at each commit).
    #[arg(long)]
    export: bool,
    /// zstd level of the artifact (1-22).
    #[arg(long, default_value_t = IndexOptions::DEFAULT_COMPRESSION_LEVEL, value_name = "N")]
    compression_level: i32,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct ExportArgs {
    /// Where to write it (default: `.codebase-index/graph.db.zst` in the indexed tree).
    #[arg(long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// zstd level (1-22).
    #[arg(long, default_value_t = IndexOptions::DEFAULT_COMPRESSION_LEVEL, value_name = "N")]
    compression_level: i32,
    /// The export `indexer index` leaves running when the tree had no artifact: to the
    /// tree's artifact path, silent, a failure recorded for `status`.
    #[arg(long, hide = true, conflicts_with = "output")]
    deferred: bool,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct ImportArgs {
    /// The artifact.
    artifact: PathBuf,
    /// Repository root it belongs to.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct StatusArgs {
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct SearchArgs {
    query: String,
    #[arg(long, default_value_t = SearchOptions::DEFAULT_LIMIT)]
    limit: usize,
    /// Only this kind (Function, Method, Class, Interface, Enum, Type, Constant, Module, File).
    #[arg(long)]
    kind: Option<String>,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct RankFilesArgs {
    /// The query; `-` reads it from standard input. It may start with `-` (an issue that
    /// opens with `--flag`).
    #[arg(allow_hyphen_values = true)]
    query: String,
    #[arg(long, default_value_t = Index::DEFAULT_RANKED_FILES)]
    limit: usize,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct EvalArgs {
    /// JSON lines: {"id", "query", "gold_files": [...], "gold_symbols": [...]?}.
    tasks: PathBuf,
    /// Cut-offs for Acc@k, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = EvalOptions::DEFAULT_K)]
    k: Vec<usize>,
    /// Token budgets for in-budget recall (files) or of each rendering (map, pack),
    /// comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = EvalOptions::DEFAULT_BUDGETS)]
    budgets: Vec<usize>,
    /// files: rank-files against BM25 over whole files; map or pack: what the repo map or
    /// the query pack of each task's text holds at each budget.
    #[arg(long, value_enum, default_value_t = EvalMode::Files)]
    mode: EvalMode,
    /// Tokenizer of the map and pack budgets.
    #[arg(long, value_enum, default_value_t = Tokenizer::default())]
    tokenizer: Tokenizer,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct SkeletonArgs {
    /// Token budget of the whole output.
    #[arg(long, default_value_t = SkeletonOptions::DEFAULT_BUDGET, value_name = "N")]
    budget: usize,
    /// auto (the richest that fits), skeleton, compact (~60%), summary (~10%), deps.
    #[arg(long, value_enum, default_value_t = SkeletonMode::default())]
    mode: SkeletonMode,
    /// Only files under this path prefix.
    #[arg(long, value_name = "PREFIX")]
    path: Option<String>,
    #[command(flatten)]
    render: RenderArgs,
}

#[derive(Args)]
struct MapArgs {
    #[arg(long, default_value_t = MapOptions::DEFAULT_BUDGET, value_name = "N")]
    budget: usize,
    /// Centre the map on these files (paths) or definitions (qualified names).
    #[arg(long, value_name = "FILE|QN", num_args = 1..)]
    focus: Vec<String>,
    /// Centre the map on what this text names (`-` reads it from standard input).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    query: Option<String>,
    /// Output format (`--json` is the same as json).
    #[arg(long, value_enum, default_value_t = MapFormat::default())]
    format: MapFormat,
    #[command(flatten)]
    render: RenderArgs,
}

#[derive(Args)]
struct PackArgs {
    /// A definition (qualified name) or a file (path).
    #[arg(
        long,
        value_name = "QN|FILE",
        required_unless_present_any = ["query", "all"],
        conflicts_with_all = ["query", "all"]
    )]
    entry: Option<String>,
    /// The whole repository: every path, and each file in full, as its skeleton or as
    /// metadata, by rank, within the budget (default 100000). JSON is what `unpack` reads.
    #[arg(long, conflicts_with_all = ["query", "signatures_only"])]
    all: bool,
    /// With --all: an issue or question the pack is for (`-` reads it from standard input):
    /// the files it needs come first, in full where they fit.
    #[arg(
        long,
        value_name = "TEXT",
        requires = "all",
        allow_hyphen_values = true
    )]
    task: Option<String>,
    /// With --all: gzip the output (`unpack` reads it as it is).
    #[arg(long, requires = "all")]
    gzip: bool,
    /// With --all: only the files added or changed since the last `pack --all` of this
    /// repository, and the paths deleted since (the state is kept in the cache folder).
    #[arg(long, requires = "all")]
    delta: bool,
    /// With --all: the next page of a pack that did not hold every file in full (the cursor
    /// the page before gave; pass the same --task).
    #[arg(
        long,
        value_name = "CURSOR",
        requires = "all",
        conflicts_with = "delta"
    )]
    cursor: Option<String>,
    /// A question or issue text (`-` reads it from standard input).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    query: Option<String>,
    /// Tokens of the whole output (default 8000; 100000 with --all).
    #[arg(long, value_name = "N")]
    budget: Option<usize>,
    /// Symbols other than the roots as signatures only.
    #[arg(long)]
    signatures_only: bool,
    /// Output format (`--json` is the same as json).
    #[arg(long, value_enum, default_value_t = PackFormat::default())]
    format: PackFormat,
    /// Write the pack to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    render: RenderArgs,
}

#[derive(Args)]
struct UnpackArgs {
    /// A pack written by `indexer pack --all --format json`.
    pack: PathBuf,
    /// The folder to restore into (made if missing).
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    dir: PathBuf,
    /// Replace files that exist already.
    #[arg(long)]
    force: bool,
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ImpactArgs {
    /// A commit (against its first parent), `A..B` or `A...B`; the uncommitted work tree
    /// against HEAD by default.
    #[arg(value_name = "REV|REV..REV", conflicts_with_all = ["staged", "worktree"])]
    rev: Option<String>,
    /// The staged changes against HEAD.
    #[arg(long, conflicts_with = "worktree")]
    staged: bool,
    /// The work tree (untracked files included) against HEAD: the default.
    #[arg(long)]
    worktree: bool,
    /// Start only from these changed definitions (qualified names, comma-separated).
    #[arg(long, value_name = "QN,...", value_delimiter = ',')]
    symbols: Vec<String>,
    #[arg(long, default_value_t = ImpactOptions::DEFAULT_BUDGET, value_name = "N")]
    budget: usize,
    /// Hops through callers and callees.
    #[arg(long, default_value_t = ImpactOptions::DEFAULT_DEPTH, value_name = "N")]
    depth: usize,
    /// Output format (`--json` is the same as json).
    #[arg(long, value_enum, default_value_t = PackFormat::default())]
    format: PackFormat,
    /// The analysis only: changed symbols and scored definitions, without code.
    #[arg(long)]
    graph_only: bool,
    /// Weights of the graph, text, same-file and co-change signals.
    #[arg(long, value_name = "G,L,S,C", value_parser = parse_weights)]
    weights: Option<Weights>,
    /// Tokenizer the budget is counted with.
    #[arg(long, value_enum, default_value_t = Tokenizer::default())]
    tokenizer: Tokenizer,
    #[command(flatten)]
    target: Selection,
}

fn parse_weights(text: &str) -> Result<Weights, String> {
    Weights::parse(text)
        .ok_or_else(|| format!("{text:?}: give four weights of 0 or more, e.g. 0.6,0.2,0.1,0.1"))
}

#[derive(Args)]
struct GetSourceArgs {
    qualified_name: String,
    #[command(flatten)]
    target: Selection,
}

/// Options every renderer takes.
#[derive(Args)]
struct RenderArgs {
    /// Tokenizer the budget is counted with.
    #[arg(long, value_enum, default_value_t = Tokenizer::default())]
    tokenizer: Tokenizer,
    /// Also list the best items left out (as many as fit the budget).
    #[arg(long)]
    show_dropped: bool,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct TraceArgs {
    /// Qualified name (or an unambiguous short name or suffix) of the definition.
    qualified_name: String,
    /// How many hops to follow.
    #[arg(long, default_value_t = TraceOptions::DEFAULT_DEPTH, value_name = "N")]
    depth: usize,
    /// Follow only edges at least this confident (0..1); weaker ones are listed apart.
    #[arg(long, default_value_t = TraceOptions::DEFAULT_MIN_CONFIDENCE, value_name = "F")]
    min_confidence: f64,
    #[command(flatten)]
    target: Selection,
}

#[derive(Args)]
struct BlastArgs {
    /// A definition (qualified name, or an unambiguous short name or suffix) or a file
    /// (repository-relative path: every definition in it).
    #[arg(value_name = "QN|FILE")]
    name: String,
    /// Hops of callers to follow (1 to 10).
    #[arg(long, default_value_t = BlastOptions::DEFAULT_DEPTH, value_name = "N")]
    depth: usize,
    /// Follow only edges at least this confident (0..1); weaker ones are listed with the
    /// unresolved sites.
    #[arg(long, default_value_t = BlastOptions::DEFAULT_MIN_CONFIDENCE, value_name = "F")]
    min_confidence: f64,
    /// List the tests that reach it first.
    #[arg(long)]
    tests: bool,
    #[command(flatten)]
    target: Selection,
}

fn main() {
    route_parser_allocations_to_mimalloc();
    disable_sqlite_memory_statistics();
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
    match cli.command {
        Command::Index(args) => index(args),
        Command::Export(args) => export(args),
        Command::Import(args) => import(args),
        Command::Status(args) => status(args),
        Command::Search(args) => search(args),
        Command::RankFiles(args) => rank_files(args),
        Command::Eval(args) => eval(args),
        Command::Skeleton(args) => skeleton(args),
        Command::Map(args) => map(args),
        Command::Pack(args) => pack(args),
        Command::Unpack(args) => unpack(args),
        Command::Impact(args) => impact(args),
        Command::TraceCallers(args) => print_trace(args, Direction::Callers),
        Command::TraceCallees(args) => print_trace(args, Direction::Callees),
        Command::Blast(args) => blast(args),
        Command::GetSource(args) => get_source(args),
        Command::Hook(HookCommand::Install { path, force }) => {
            let program = std::env::current_exe().context("cannot tell where indexer is")?;
            let hook = codebase_indexer::install_pre_commit_hook(&path, &program, force)?;
            println!(
                "installed {}: each commit stages the artifact of what it holds",
                hook.display()
            );
            Ok(())
        }
        Command::Serve(args) => serve(args),
        Command::Repo(RepoCommand::Add { target, name }) => {
            let e = codebase_indexer::serve::add_repository(&target, name.as_deref())?;
            println!(
                "registered {} ({}) {}",
                e.name,
                e.kind.as_str(),
                e.location()
            );
            Ok(())
        }
        Command::Repo(RepoCommand::List { json }) => {
            let repos = codebase_indexer::serve::list_repositories()?;
            if json {
                return print_json(&repos);
            }
            if repos.is_empty() {
                eprintln!("no repository is registered: `indexer repo add PATH`");
            }
            for e in repos {
                let at = e.location();
                println!("{:<20} {:<8} {at}", e.name, e.kind.as_str());
            }
            Ok(())
        }
        Command::Repo(RepoCommand::Remove { name }) => {
            let e = codebase_indexer::serve::remove_repository(&name)?;
            println!("removed {}", e.name);
            Ok(())
        }
        Command::Hook(HookCommand::PreCommit) => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            if let Some(m) = codebase_indexer::run_pre_commit_hook(&cwd)? {
                eprintln!(
                    "indexer: staged {ARTIFACT_DIR}/{ARTIFACT_FILE} ({} files, {})",
                    m.files,
                    human_bytes(m.artifact_bytes)
                );
            }
            Ok(())
        }
    }
}

fn serve(args: ServeArgs) -> Result<()> {
    return_freed_memory_at_once();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let entries = codebase_indexer::serve::entries_to_serve(&args.repos, &cwd)?;
    let defaults = codebase_indexer::serve::ServeOptions::default();
    let options = codebase_indexer::serve::ServeOptions {
        http: args.http,
        token: args.token,
        allowed_origins: args.allowed_origins,
        call_timeout: args.call_timeout.unwrap_or(defaults.call_timeout),
        remote_refresh: match (args.no_auto_refresh, args.refresh_interval) {
            (true, _) => None,
            (false, Some(every)) => Some(every),
            (false, None) => defaults.remote_refresh,
        },
        after_call: Some(collect_thread_memory),
        ..defaults
    };
    Ok(codebase_indexer::serve::serve(entries, options)?)
}

fn index(
    IndexArgs {
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
        export,
        compression_level,
        target,
    }: IndexArgs,
) -> Result<()> {
    let bar = progress_bar();
    let options = IndexOptions {
        db: target.db,
        project: target.project,
        excludes: exclude,
        max_file_bytes,
        include_env,
        jobs,
        rebuild,
        min_confidence,
        fuzzy_limit,
        artifact: match (no_artifact, export) {
            (true, _) => ArtifactWrite::Never,
            (_, true) => ArtifactWrite::Always,
            _ => ArtifactWrite::Deferred,
        },
        compression_level,
        progress: bar.clone().map(|b| {
            std::sync::Arc::new(move |stage: &str, done: usize, total: usize| {
                b.set_message(stage.to_string());
                b.set_length(total as u64);
                b.set_position(done as u64);
            }) as codebase_indexer::Progress
        }),
    };
    let built = Index::build(&path, options);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (index, mut summary) = built?;
    if summary.artifact_due.is_some() {
        if let Err(e) = export_in_background(&index, compression_level) {
            summary.notes.push(format!(
                "could not start writing the artifact in the background ({e}): \
                 `indexer export` writes it"
            ));
            summary.artifact_due = None;
        }
    }
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    if target.json {
        print_json(&summary)
    } else {
        print_summary(&summary, verbose)
    }
}

/// The first artifact of a tree, written by a detached `indexer export --deferred` once this
/// command has returned: the index is usable at once, the artifact follows seconds later
/// (as `git gc --auto` does its work). The export's lock and atomic renames keep it safe
/// against later runs and kills; `status` shows it being written, or why it failed.
fn export_in_background(index: &Index, level: i32) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let mut child = std::process::Command::new(exe);
    child
        .arg("export")
        .arg("--deferred")
        .arg("--compression-level")
        .arg(level.to_string())
        .arg("--db")
        .arg(index.location())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own process group: a Ctrl-C meant for the shell's next command does not reach it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut child, 0);
    child.spawn().map(drop)
}

fn export(
    ExportArgs {
        output,
        compression_level,
        deferred,
        target,
    }: ExportArgs,
) -> Result<()> {
    let index = open(&target)?;
    if deferred {
        index.write_due_artifact(compression_level)?;
        return Ok(());
    }
    let output = match output {
        Some(o) => o,
        None => index.artifact_path()?,
    };
    let written = index.export(&output, compression_level)?;
    if target.json {
        return print_json(&serde_json::json!({
            "artifact": output, "written": written.is_some(), "manifest": written
        }));
    }
    let mut out = std::io::stdout().lock();
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

fn import(
    ImportArgs {
        artifact,
        path,
        target,
    }: ImportArgs,
) -> Result<()> {
    let options = IndexOptions {
        db: target.db,
        project: target.project,
        ..IndexOptions::default()
    };
    let index = Index::import(&artifact, &path, options)?;
    writeln!(
        std::io::stdout().lock(),
        "imported {} as the index of {} -> {}",
        artifact.display(),
        index.root()?.unwrap_or_default().display(),
        index.location().display()
    )?;
    Ok(())
}

fn status(StatusArgs { target }: StatusArgs) -> Result<()> {
    let s = open(&target)?.status()?;
    if target.json {
        return print_json(&s);
    }
    print_status(&s)
}

fn search(
    SearchArgs {
        query,
        limit,
        kind,
        target,
    }: SearchArgs,
) -> Result<()> {
    let kind = kind.map(|k| k.parse::<NodeKind>()).transpose()?;
    let hits = open(&target)?.search(&query, &SearchOptions { limit, kind })?;
    if target.json {
        return print_json(&serde_json::json!({ "query": query, "hits": hits }));
    }
    if hits.is_empty() {
        eprintln!("no matches for {query:?}");
    }
    let mut out = std::io::stdout().lock();
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

fn rank_files(
    RankFilesArgs {
        query,
        limit,
        target,
    }: RankFilesArgs,
) -> Result<()> {
    let query = read_text(query)?;
    let ranked = open(&target)?.rank_files(&query, limit)?;
    if target.json {
        return print_json(&ranked);
    }
    let mut out = std::io::stdout().lock();
    for f in ranked {
        let copy = f
            .copy_of
            .map(|of| format!("  (copy of {of})"))
            .unwrap_or_default();
        writeln!(
            out,
            "{:>7.4}  {}  {}{copy}",
            f.score,
            f.path,
            f.symbol.as_deref().unwrap_or("")
        )?;
    }
    Ok(())
}

fn eval(
    EvalArgs {
        tasks,
        k,
        budgets,
        mode,
        tokenizer,
        target,
    }: EvalArgs,
) -> Result<()> {
    let tasks = Task::read_all(&tasks)?;
    let index = open(&target)?;
    let mut out = std::io::stdout().lock();
    let renderer = match mode {
        EvalMode::Files => None,
        EvalMode::Map => Some(Renderer::Map),
        EvalMode::Pack => Some(Renderer::Pack),
    };
    if let Some(renderer) = renderer {
        let report = index.eval_context(&tasks, renderer, &budgets, tokenizer)?;
        if target.json {
            return print_json(&report);
        }
        return Ok(report.write_text(&mut out)?);
    }
    let report = index.eval(&tasks, &EvalOptions { k, budgets })?;
    if target.json {
        return print_json(&report);
    }
    Ok(report.write_text(&mut out)?)
}

fn skeleton(
    SkeletonArgs {
        budget,
        mode,
        path,
        render,
    }: SkeletonArgs,
) -> Result<()> {
    let options = SkeletonOptions {
        budget,
        mode,
        path_prefix: path,
        tokenizer: render.tokenizer,
        show_dropped: render.show_dropped,
        ..SkeletonOptions::default()
    };
    let s = open(&render.target)?.skeleton(&options)?;
    if render.target.json {
        return print_json(&s);
    }
    write!(std::io::stdout().lock(), "{}", s.text)?;
    Ok(())
}

fn map(
    MapArgs {
        budget,
        focus,
        query,
        format,
        render,
    }: MapArgs,
) -> Result<()> {
    let options = MapOptions {
        budget,
        focus,
        query: query.map(read_text).transpose()?,
        format: if render.target.json {
            MapFormat::Json
        } else {
            format
        },
        tokenizer: render.tokenizer,
        show_dropped: render.show_dropped,
        ..MapOptions::default()
    };
    let map = open(&render.target)?.map(&options)?;
    write!(std::io::stdout().lock(), "{}", map.text)?;
    Ok(())
}

fn pack(
    PackArgs {
        entry,
        all,
        task,
        gzip,
        delta,
        cursor,
        query,
        budget,
        signatures_only,
        format,
        output,
        render,
    }: PackArgs,
) -> Result<()> {
    let format = if render.target.json {
        PackFormat::Json
    } else {
        format
    };
    if all {
        let index = open(&render.target)?;
        let since = if delta {
            let last = index.last_pack()?;
            if last.is_none() {
                eprintln!("note: no earlier pack of this repository: every file is packed");
            }
            last
        } else {
            None
        };
        let bar = progress_bar();
        let options = RepoPackOptions {
            budget: budget.unwrap_or(RepoPackOptions::DEFAULT_BUDGET),
            format,
            tokenizer: render.tokenizer,
            task: task.map(read_text).transpose()?,
            since,
            cursor: cursor.clone(),
            progress: bar.clone().map(|b| {
                b.set_message("packing");
                std::sync::Arc::new(move |done: usize, total: usize| {
                    b.set_length(total as u64);
                    b.set_position(done as u64);
                }) as codebase_indexer::RepoPackProgress
            }),
        };
        let packed = index.pack_repository(&options);
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let p = packed?;
        if let Some(floor) = p.floor_exceeds_budget {
            eprintln!(
                "warning: the tree and the files' metadata alone take {floor} tokens, over the budget of {}: packed without content",
                options.budget
            );
        }
        let s = &p.stats;
        let mut summary = format!(
            "{} files: {} in full, {} as skeletons, {} as metadata, {} duplicates; {} of {} tokens",
            s.files, s.full, s.skeleton, s.metadata, s.duplicates, s.tokens, s.budget
        );
        if let Some(next) = &p.next_cursor {
            summary.push_str(&format!("; the next page: --cursor {next}"));
        }
        if let (Some(unchanged), Some(deleted)) = (s.unchanged, &p.deleted_since_last_pack) {
            summary.push_str(&format!(
                "; {unchanged} unchanged and {} deleted since the last pack",
                deleted.len()
            ));
        }
        match (output, gzip) {
            (Some(path), gzip) => {
                if gzip {
                    p.write_gzipped_to(&path)?;
                } else {
                    p.write_to(&path)?;
                }
                eprintln!("wrote {}: {summary}", path.display());
            }
            (None, false) => write!(std::io::stdout().lock(), "{}", p.text)?,
            (None, true) => std::io::stdout().lock().write_all(&p.gzipped())?,
        }
        // Once the pack is out: a pack that failed to be written is not the last one. A later
        // page is part of the pack its first page started.
        if cursor.is_some() {
            return Ok(());
        }
        if let Err(e) = index.remember_pack(&p) {
            eprintln!("warning: the next `pack --all --delta` cannot start from this pack: {e}");
        }
        return Ok(());
    }
    let budget = budget.unwrap_or(PackOptions::DEFAULT_BUDGET);
    let target = match (entry, query) {
        (Some(e), None) => PackTarget::Entry(e),
        (None, Some(q)) => PackTarget::Query(read_text(q)?),
        _ => anyhow::bail!("pass exactly one of --entry and --query"),
    };
    let options = PackOptions {
        target,
        budget,
        signatures_only,
        format,
        tokenizer: render.tokenizer,
        show_dropped: render.show_dropped,
        ..PackOptions::default()
    };
    let p = open(&render.target)?.pack(&options)?;
    match output {
        Some(path) => {
            p.write_to(&path)?;
            eprintln!(
                "wrote {}: {} symbols, {} of {} tokens",
                path.display(),
                p.account.included,
                p.account.tokens,
                p.account.budget
            );
        }
        None => write!(std::io::stdout().lock(), "{}", p.text)?,
    }
    Ok(())
}

fn impact(args: ImpactArgs) -> Result<()> {
    let spec = match (&args.rev, args.staged) {
        (Some(rev), _) => DiffSpec::parse(rev),
        (None, true) => DiffSpec::Staged,
        (None, false) => DiffSpec::Worktree,
    };
    let options = ImpactOptions {
        spec,
        symbols: args.symbols,
        budget: args.budget,
        depth: args.depth,
        format: if args.target.json {
            PackFormat::Json
        } else {
            args.format
        },
        graph_only: args.graph_only,
        weights: args.weights.unwrap_or(DEFAULT_IMPACT_WEIGHTS),
        tokenizer: args.tokenizer,
    };
    let mut index = open(&args.target)?;
    // The changed files are read as they are now: bring the index up to date with them.
    index.refresh()?;
    let i = index.impact(&options)?;
    write!(std::io::stdout().lock(), "{}", i.text)?;
    Ok(())
}

fn unpack(args: UnpackArgs) -> Result<()> {
    let pack = std::fs::read(&args.pack)
        .with_context(|| format!("cannot read {}", args.pack.display()))?;
    let done = codebase_indexer::unpack(&pack, &args.dir, args.force)?;
    if args.json {
        return print_json(&done);
    }
    for (path, why) in &done.refused {
        eprintln!("not restored: {path}: {why}");
    }
    for path in &done.mismatched {
        eprintln!("warning: {path} does not match its sha256 in the pack");
    }
    if !done.deleted_since_last_pack.is_empty() {
        eprintln!(
            "note: the pack lists {} files deleted since the pack before it; unpack leaves them in place",
            done.deleted_since_last_pack.len()
        );
    }
    println!(
        "restored {} files into {} ({} not restored, {} not matching their sha256)",
        done.written.len(),
        args.dir.display(),
        done.refused.len(),
        done.mismatched.len()
    );
    Ok(())
}

fn get_source(
    GetSourceArgs {
        qualified_name,
        target,
    }: GetSourceArgs,
) -> Result<()> {
    let src = open(&target)?.source(&qualified_name)?;
    if target.json {
        return print_json(&src);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "# {} ({}) {}:{}-{}",
        src.qualified_name, src.kind, src.path, src.start_line, src.end_line
    )?;
    write!(out, "{}", src.source)?;
    if !src.source.ends_with('\n') {
        writeln!(out)?;
    }
    let links = |label: &str, links: &[Link], out: &mut dyn Write| -> Result<()> {
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

/// The index a query command reads: `--db` (a database or an artifact), else `--project`,
/// else the project of the current directory.
fn open(target: &Selection) -> Result<Index> {
    Ok(match (&target.db, &target.project) {
        (Some(db), _) => Index::open(db)?,
        (None, Some(name)) => Index::open_project(name)?,
        (None, None) => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            Index::open(cwd)?
        }
    })
}

/// A text argument, or standard input for `-`.
fn read_text(arg: String) -> Result<String> {
    if arg == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read the query from stdin")
    } else {
        Ok(arg)
    }
}

fn print_trace(args: TraceArgs, direction: Direction) -> Result<()> {
    let options = TraceOptions {
        depth: args.depth,
        min_confidence: args.min_confidence,
    };
    let t = open(&args.target)?.trace(&args.qualified_name, direction, &options)?;
    if args.target.json {
        return print_json(&t);
    }
    let mut out = std::io::stdout().lock();
    let (what, arrow) = match direction {
        Direction::Callers => ("callers", "<-"),
        Direction::Callees => ("callees", "->"),
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
            Direction::Callers => (&h.callee, &h.caller),
            Direction::Callees => (&h.caller, &h.callee),
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
        writeln!(out, "  ... stopped after {MAX_TRACE_HOPS} edges")?;
    }
    if !t.unresolved.is_empty() {
        let label = match direction {
            Direction::Callers => "call sites naming it that did not resolve to it",
            Direction::Callees => "calls that resolved to no definition",
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

fn blast(
    BlastArgs {
        name,
        depth,
        min_confidence,
        tests,
        target,
    }: BlastArgs,
) -> Result<()> {
    let options = BlastOptions {
        target: name,
        depth,
        min_confidence,
        tests_first: tests,
    };
    let b = open(&target)?.blast(&options)?;
    if target.json {
        return print_json(&b);
    }
    write!(std::io::stdout().lock(), "{}", b.text())?;
    Ok(())
}

fn print_status(s: &codebase_indexer::Status) -> Result<()> {
    let mut out = std::io::stdout().lock();
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
    match &s.artifact {
        None => {}
        Some(Freshness::Absent { path, failed }) => match failed {
            None => writeln!(
                out,
                "artifact  {path}: none in the tree (`indexer export` writes it)"
            )?,
            Some(reason) => writeln!(
                out,
                "artifact  {path}: none in the tree; writing it in the background failed: \
                 {reason} (`indexer export` writes it)"
            )?,
        },
        Some(Freshness::Writing { path }) => {
            writeln!(out, "artifact  {path}: being written in the background")?
        }
        Some(Freshness::Current { path }) => writeln!(out, "artifact  {path}: current")?,
        Some(Freshness::Stale {
            path,
            files,
            settings_differ,
        }) => {
            let settings = if *settings_differ {
                ", built with other settings or another version"
            } else {
                ""
            };
            writeln!(
                out,
                "artifact  {path}: stale, {files} {} from the index{settings} \
                 (`indexer export` refreshes it)",
                if *files == 1 {
                    "file differs"
                } else {
                    "files differ"
                }
            )?
        }
        Some(Freshness::Unreadable { path, reason }) => {
            writeln!(out, "artifact  {path}: unreadable: {reason}")?
        }
    }
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
            "started   from {from}: only files that differ from it were extracted{}",
            if s.vouched_by_git > 0 {
                format!(" ({} known equal from git, unread)", s.vouched_by_git)
            } else {
                String::new()
            }
        )?;
    }
    if s.artifact_due.is_some() {
        writeln!(
            out,
            "artifact  {ARTIFACT_DIR}/{ARTIFACT_FILE}: being written in the background"
        )?;
    }
    if let Some(m) = &s.artifact {
        writeln!(
            out,
            "artifact  {}/{}: {} ({:.2}x of {}, zstd level {})",
            ARTIFACT_DIR,
            ARTIFACT_FILE,
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
        if !s.phases_cpu_ms.is_empty() {
            writeln!(out, "cpu       {} (ms)", join_counts(&s.phases_cpu_ms))?;
            writeln!(
                out,
                "peak      {} (MiB)",
                join_counts(&s.phases_peak_rss_mb)
            )?;
        }
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

/// A server's calls run on a pool of threads, each with its own mimalloc heap that keeps
/// pages it freed for 10 ms by default, purged only when that thread allocates again: an
/// idle thread holds the high-water mark of the last call it ran. Purging at once keeps the
/// server's memory flat under load (measured on Django with 8 clients: peak resident
/// memory +15-24% over a 2,000-call run with the default, +7.8% with this; no slower).
fn return_freed_memory_at_once() {
    // `mi_option_purge_delay` in the mimalloc 3 headers `libmimalloc-sys` builds (its Rust
    // bindings do not name it).
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: setting an option is allowed at any time; the value is read at each purge.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) };
}

/// Returns what the calling thread's mimalloc heap keeps of the memory it freed, all of it
/// (`force`). After each tool call of the server, with the purge delay at 0 (measured on
/// Django with 8 clients: peak resident memory +13-15% over a 2,000-call run without it,
/// +6-7% with it unforced, and, with maps and packs on indexes of their own, +10-12%
/// unforced and +9-11% forced; 1-4% fewer calls a second; without the purge delay at 0 it
/// gains nothing).
fn collect_thread_memory() {
    // SAFETY: mi_collect only releases the calling thread's free pages; callable any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// Routes tree-sitter's C allocations through mimalloc, which parses about 6% faster than the
/// system allocator here.
fn route_parser_allocations_to_mimalloc() {
    // SAFETY: called first thing in `main`, before any tree-sitter object exists (a tree
    // allocated by one allocator must never be freed by the other); the four functions are
    // one consistent malloc family.
    unsafe {
        tree_sitter::set_allocator(
            Some(libmimalloc_sys::mi_malloc),
            Some(libmimalloc_sys::mi_calloc),
            Some(libmimalloc_sys::mi_realloc),
            Some(libmimalloc_sys::mi_free),
        );
    }
}

/// Turns SQLite's memory statistics off: nothing here reads them, and keeping them takes a
/// process-wide lock around every allocation (0.5% of a cold index's instructions on a Django
/// sample, more when several threads use SQLite at once). SQLite keeps its own allocator:
/// routed through mimalloc, the end of a cold Django index (resolution's edges and their
/// indexes) took 0.07 s longer.
fn disable_sqlite_memory_statistics() {
    // SAFETY: called first thing in `main`, before SQLite is initialized; afterwards SQLite
    // refuses the setting and keeps its statistics, which loses nothing.
    let configured = unsafe {
        rusqlite::ffi::sqlite3_config(
            rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
            0 as std::os::raw::c_int,
        )
    };
    debug_assert_eq!(configured, rusqlite::ffi::SQLITE_OK);
}
