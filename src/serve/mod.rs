//! `indexer serve`: the Model Context Protocol server. One process answers for many
//! repositories over stdio or Streamable HTTP; its tools are the library's queries and
//! renderers (`tools`), held to token budgets, on indexes kept fresh (`repos`).

mod http;
pub mod registry;
pub mod remote;
mod repos;
mod tools;

use crate::context::tokens::Tokenizer;
use crate::error::{Error, Result};
use registry::{RepoEntry, RepoKind};
use repos::Repo;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use repos::{Freshness, RepoInfo};
pub use tools::MAX_BUDGET;

/// How `serve` runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Streamable HTTP on this address (path `/mcp`) instead of stdio.
    pub http: Option<SocketAddr>,
    /// Bearer token HTTP clients must send; required (generated when absent) off loopback.
    pub token: Option<String>,
    /// Browser origins allowed besides loopback ones (`http://host:port`).
    pub allowed_origins: Vec<String>,
    /// A tool call that takes longer is answered with an error.
    pub call_timeout: Duration,
    /// Larger HTTP request bodies are refused (413).
    pub max_request_bytes: usize,
    /// How often remotes are fetched (jittered by up to 10%); `None` never.
    pub remote_refresh: Option<Duration>,
    /// Run on a tool call's thread once the call is done: where the program gives the
    /// memory its allocator holds for the thread back (calls run on a pool of threads that
    /// grows with the load, each keeping what its last call freed).
    pub after_call: Option<fn()>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            http: None,
            token: None,
            allowed_origins: Vec::new(),
            call_timeout: Duration::from_secs(60),
            max_request_bytes: 1 << 20,
            remote_refresh: Some(Duration::from_secs(15 * 60)),
            after_call: None,
        }
    }
}

/// The repositories one server answers for.
pub struct Served {
    repos: Vec<Arc<Repo>>,
    tokenizer: Tokenizer,
}

impl Served {
    /// Opens every entry, side by side (a tree that was never indexed is indexed now). A
    /// repository that cannot be opened is kept, to report why.
    pub fn open(entries: &[RepoEntry]) -> Served {
        let readers = std::thread::available_parallelism().map_or(2, |n| n.get());
        let repos = std::thread::scope(|s| {
            let handles: Vec<_> = entries
                .iter()
                .map(|e| s.spawn(move || Repo::open(e, readers)))
                .collect();
            handles
                .into_iter()
                .map(|h| Arc::new(h.join().expect("opening a repository panicked")))
                .collect()
        });
        let tokenizer = Tokenizer::default();
        tokenizer.warm_in_background();
        Served { repos, tokenizer }
    }

    pub fn infos(&self) -> Vec<RepoInfo> {
        self.repos.iter().map(|r| r.info()).collect()
    }

    fn names(&self) -> String {
        self.repos
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The repository `name` names, or the only one served.
    fn pick(&self, name: Option<&str>) -> Result<&Arc<Repo>> {
        match name {
            Some(name) => self.repos.iter().find(|r| r.name == name).ok_or_else(|| {
                Error::invalid(format!(
                    "no repository named {name:?} is served (served: {})",
                    self.names()
                ))
            }),
            None if self.repos.len() == 1 => Ok(&self.repos[0]),
            None => Err(Error::invalid(format!(
                "several repositories are served ({}): pass repo",
                self.names()
            ))),
        }
    }

    /// The repository `name` names, or every one served.
    fn pick_many(&self, name: Option<&str>) -> Result<Vec<&Arc<Repo>>> {
        match name {
            Some(_) => Ok(vec![self.pick(name)?]),
            None => Ok(self.repos.iter().collect()),
        }
    }
}

/// The names of the tools, in the order `tools/list` gives them.
pub fn tool_names() -> Vec<&'static str> {
    tools::TOOLS.iter().map(|t| t.name).collect()
}

#[derive(Clone)]
struct Handler {
    served: Arc<Served>,
    call_timeout: Duration,
    after_call: Option<fn()>,
}

fn error_kind(e: &Error) -> &'static str {
    match e {
        Error::NoIndex { .. } => "no_index",
        Error::Locked { .. } => "locked",
        Error::SchemaTooOld { .. } | Error::SchemaTooNew { .. } => "schema",
        Error::Foreign { .. } | Error::Corrupt { .. } => "corrupt",
        Error::NotFound { .. } => "not_found",
        Error::Ambiguous { .. } => "ambiguous",
        Error::InvalidArgument { .. } => "invalid_argument",
        Error::Io { .. } => "io",
        Error::Other { .. } => "other",
    }
}

fn tool_error(kind: &str, message: String, candidates: Option<Vec<String>>) -> CallToolResult {
    let mut structured = json!({ "error": { "kind": kind, "message": message } });
    if let Some(c) = candidates {
        structured["error"]["candidates"] = json!(c);
    }
    let mut r = CallToolResult::structured_error(structured);
    r.content = vec![ContentBlock::text(format!("error: {message}"))];
    r
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "codebase-indexer",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Code search and context for the repositories listed by list_repos: search finds \
                 definitions, get_source reads one, trace_callers/trace_callees follow the call \
                 graph, blast gives what a change to a definition or file may break (callers, \
                 tests), rank_files and pack gather the code for an issue or question under a \
                 token budget, impact the code around a git diff, map and skeleton give an \
                 overview. Answers are brought up to date with the files before they are given.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools::TOOLS
            .iter()
            .map(|t| {
                let writes = t.name == "refresh";
                Tool::new(t.name, t.description, (t.schema)()).with_annotations(
                    ToolAnnotations::new()
                        .read_only(!writes)
                        .destructive(false)
                        .idempotent(true)
                        .open_world(false),
                )
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !tools::TOOLS.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named {name:?} (tools: {})",
                    tool_names().join(", ")
                ),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let served = Arc::clone(&self.served);
        let after_call = self.after_call;
        let job = tokio::task::spawn_blocking(move || {
            let answer = tools::call(&served, &name, args);
            if let Some(f) = after_call {
                f();
            }
            answer
        });
        let result = match tokio::time::timeout(self.call_timeout, job).await {
            Err(_) => tool_error(
                "timeout",
                format!(
                    "the call took longer than {} s and was abandoned",
                    self.call_timeout.as_secs()
                ),
                None,
            ),
            Ok(Err(e)) => tool_error("internal", format!("the call failed: {e}"), None),
            Ok(Ok(None)) => unreachable!("the tool name was checked"),
            Ok(Ok(Some(Err(e)))) => {
                let candidates = match &e {
                    Error::Ambiguous { candidates, .. } => Some(candidates.clone()),
                    _ => None,
                };
                tool_error(error_kind(&e), e.to_string(), candidates)
            }
            Ok(Ok(Some(Ok(answer)))) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(answer.text)]);
                r.structured_content = Some(answer.structured);
                r
            }
        };
        Ok(result.into())
    }
}

/// Serves `entries` until the client leaves (stdio) or the process is stopped (HTTP).
pub fn serve(entries: Vec<RepoEntry>, options: ServeOptions) -> Result<()> {
    if entries.is_empty() {
        return Err(Error::invalid(
            "no repository to serve: run `indexer serve` inside an indexed tree, pass --repo PATH, or `indexer repo add PATH`",
        ));
    }
    let served = Arc::new(Served::open(&entries));
    for info in served.infos() {
        match &info.error {
            Some(e) => eprintln!("indexer serve: {} is unavailable: {e}", info.name),
            None => eprintln!(
                "indexer serve: {} ({})",
                info.name,
                info.root.or(info.location).unwrap_or_default()
            ),
        }
    }
    if let Some(every) = options.remote_refresh {
        for repo in served.repos.iter().filter(|r| r.kind == RepoKind::Remote) {
            spawn_remote_refresh(Arc::clone(repo), every);
        }
    }
    let handler = Handler {
        served,
        call_timeout: options.call_timeout,
        after_call: options.after_call,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Other {
            message: format!("cannot start the server's runtime: {e}"),
        })?;
    runtime.block_on(async move {
        match options.http {
            Some(addr) => http::run(handler, addr, &options).await,
            None => {
                let running =
                    handler
                        .serve(rmcp::transport::stdio())
                        .await
                        .map_err(|e| Error::Other {
                            message: format!("the MCP session did not start: {e}"),
                        })?;
                let _ = running.waiting().await;
                Ok(())
            }
        }
    })
}

fn spawn_remote_refresh(repo: Arc<Repo>, every: Duration) {
    std::thread::spawn(move || loop {
        std::thread::sleep(every.mul_f64(remote::jitter()));
        let Some(root) = repo.root.clone() else {
            return;
        };
        let outcome = remote::update(&root).map_err(|e| e.to_string());
        repo.record_fetch(outcome);
    });
}

/// Registers a tree (indexed now, nothing written into it), a committed artifact
/// (`graph.db.zst`, checked now) or a git URL (cloned shallowly into the cache folder and
/// indexed now) under `name` (default: the last segment of its path or URL).
pub fn add_repository(target: &str, name: Option<&str>) -> Result<RepoEntry> {
    let mut registry = registry::Registry::load()?;
    let name = name
        .map(str::to_string)
        .unwrap_or_else(|| registry::default_name(target));
    // Before the clone or the index, which take long and would be thrown away.
    registry.check_free(&name)?;
    let entry = if remote::is_url(target) {
        let dir = remote::clone_dir(&name)?;
        remote::clone(target, &dir)?;
        let indexed = crate::facade::Index::build(&dir, repos::build_options(None));
        if let Err(e) = indexed {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        RepoEntry {
            name,
            kind: RepoKind::Remote,
            path: dir,
            url: Some(target.to_string()),
        }
    } else {
        let path = std::path::Path::new(target);
        let canonical = path.canonicalize().map_err(Error::io(
            path,
            format!("no such file or directory: {target}"),
        ))?;
        if canonical.is_dir() {
            crate::facade::Index::build(&canonical, repos::build_options(None))?;
            RepoEntry {
                name,
                kind: RepoKind::Tree,
                path: canonical,
                url: None,
            }
        } else {
            crate::facade::Index::open(&canonical)?;
            RepoEntry {
                name,
                kind: RepoKind::Artifact,
                path: canonical,
                url: None,
            }
        }
    };
    if let Err(e) = registry.add(entry.clone()) {
        if entry.kind == RepoKind::Remote {
            let _ = std::fs::remove_dir_all(&entry.path);
        }
        return Err(e);
    }
    Ok(entry)
}

/// Unregisters `name`; a remote's clone is deleted with it (a tree and its index stay).
pub fn remove_repository(name: &str) -> Result<RepoEntry> {
    let entry = registry::Registry::load()?.remove(name)?;
    if entry.kind == RepoKind::Remote && entry.path.starts_with(remote::clone_dir("")?) {
        let _ = std::fs::remove_dir_all(&entry.path);
    }
    Ok(entry)
}

pub fn list_repositories() -> Result<Vec<RepoEntry>> {
    Ok(registry::Registry::load()?.repos)
}

/// What `serve` serves: the trees and artifacts in `paths` when any are given; otherwise
/// the registered repositories and the indexed tree around `cwd` (when it has one).
pub fn entries_to_serve(
    paths: &[std::path::PathBuf],
    cwd: &std::path::Path,
) -> Result<Vec<RepoEntry>> {
    let mut entries: Vec<RepoEntry> = Vec::new();
    let push = |mut entry: RepoEntry, entries: &mut Vec<RepoEntry>| {
        if entries
            .iter()
            .any(|e| e.path == entry.path && e.url == entry.url)
        {
            return;
        }
        let base = entry.name.clone();
        let mut n = 2;
        while entries.iter().any(|e| e.name == entry.name) {
            entry.name = format!("{base}-{n}");
            n += 1;
        }
        entries.push(entry);
    };
    if !paths.is_empty() {
        for p in paths {
            let canonical = p.canonicalize().map_err(Error::io(
                p,
                format!("no such file or directory: {}", p.display()),
            ))?;
            let kind = if canonical.is_dir() {
                RepoKind::Tree
            } else {
                RepoKind::Artifact
            };
            let name = registry::default_name(&canonical.to_string_lossy());
            let name = match (kind, canonical.parent().and_then(|d| d.parent())) {
                // `.../NAME/.codebase-index/graph.db.zst` is NAME's artifact.
                (RepoKind::Artifact, Some(tree))
                    if canonical
                        .parent()
                        .is_some_and(|d| d.ends_with(crate::ARTIFACT_DIR)) =>
                {
                    registry::default_name(&tree.to_string_lossy())
                }
                _ => name,
            };
            push(
                RepoEntry {
                    name,
                    kind,
                    path: canonical,
                    url: None,
                },
                &mut entries,
            );
        }
        return Ok(entries);
    }
    for entry in registry::Registry::load()?.repos {
        push(entry, &mut entries);
    }
    if let Ok(index) = crate::facade::Index::open(cwd) {
        if let Some(root) = index.root()?.filter(|r| r.is_dir()) {
            let name = registry::default_name(&root.to_string_lossy());
            push(
                RepoEntry {
                    name,
                    kind: RepoKind::Tree,
                    path: root,
                    url: None,
                },
                &mut entries,
            );
        }
    }
    Ok(entries)
}
