//! codebase-indexer: a repository as a local SQLite knowledge graph of its definitions, and
//! the code an LLM agent needs from it under a token budget.
//!
//! [`Index`] is the entry point: build or open an index, then ask it questions. Every result
//! is a plain serializable value; every failure an [`Error`] to match on.
//!
//! ```
//! use codebase_indexer::{ArtifactWrite, Index, IndexOptions, PackOptions, PackTarget, SearchOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tree = tempfile::tempdir()?;
//! std::fs::write(
//!     tree.path().join("shop.py"),
//!     "def tax(total):\n    return total * 0.2\n\n\
//!      def checkout(total):\n    \"\"\"Charge the customer.\"\"\"\n    return total + tax(total)\n",
//! )?;
//! let db = tempfile::tempdir()?;
//! let options = IndexOptions {
//!     db: Some(db.path().join("shop.db")),
//!     artifact: ArtifactWrite::Never, // no `.codebase-index/` written into the tree
//!     ..IndexOptions::default()
//! };
//! let (index, summary) = Index::build(tree.path(), options)?;
//! assert_eq!(summary.files, 1);
//!
//! let hits = index.search("checkout", &SearchOptions::default())?;
//! assert_eq!(hits[0].qualified_name, "shop.checkout");
//!
//! let pack = index.pack(&PackOptions {
//!     target: PackTarget::Entry("shop.checkout".into()),
//!     budget: 2000,
//!     ..PackOptions::default()
//! })?;
//! assert!(pack.text.contains("return total * 0.2")); // its callee came along
//! assert!(pack.account.tokens <= 2000);
//! # Ok(())
//! # }
//! ```
//!
//! The stages behind it (walk, extract, store, resolve, query, render) are private modules;
//! `ARCHITECTURE.md` says which owns what.

#![forbid(unsafe_code)]

mod context;
mod error;
mod eval;
mod facade;
mod hook;
mod ids;
mod index;
mod lang;
mod model;
mod query;
mod resolve;
pub mod serve;
mod store;
mod text;
mod unpack;

/// The README's library example, compiled by `cargo test` so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

pub use context::impact::{
    changes::{Change, ChangedSymbol},
    signals::{Signals, Weights},
    Candidate as ImpactCandidate, Impact, Options as ImpactOptions, Spec as DiffSpec,
    DEFAULT_WEIGHTS as DEFAULT_IMPACT_WEIGHTS,
};
pub use context::pack::{
    DroppedSymbol, Format as PackFormat, Missing, Options as PackOptions, Pack, PackedFile,
    PackedSymbol, Reason, Rendering, Target as PackTarget,
};
pub use context::repomap::{Format as MapFormat, MapEntry, Options as MapOptions, RepoMap};
pub use context::repopack::{
    Layer as FileLayer, Options as RepoPackOptions, PackState, Progress as RepoPackProgress,
    RepoFile, RepoPack, Stats as RepoPackStats, Todo,
};
pub use context::skeleton::{Mode as SkeletonMode, Options as SkeletonOptions, Skeleton};
pub use context::tokens::{Account, Tokenizer};
pub use error::{Error, Result};
pub use eval::context::{
    RenderResult, Renderer, Report as ContextEvalReport, Summary as ContextEvalSummary,
    TaskResult as ContextEvalTask,
};
pub use eval::{
    EvalOptions, Latency, Report as EvalReport, Summary as EvalSummary, SystemResult, Task,
    TaskResult as EvalTask,
};
pub use facade::{ArtifactWrite, GraphCache, Index, IndexOptions, SearchOptions, TraceOptions};
pub use hook::{install_pre_commit_hook, run_pre_commit_hook};
pub use index::walk::SkipReason;
pub use index::{IndexSummary, Progress, Redacted};
pub use lang::extract::{extract_file, MAX_NODES_PER_FILE};
pub use model::{ExtractedNode, FileExtract, NodeKind, RawRef, RefKind};
pub use query::blast::{
    Blast, BlastNode, MightReach, Options as BlastOptions, TestReach, MAX_EDGES as MAX_BLAST_EDGES,
    MAX_NODES as MAX_BLAST_NODES, MAX_SITES as MAX_BLAST_SITES,
};
pub use query::rank_files::RankedFile;
pub use query::trace::{Direction, Hop, Link, NodeRef, Site, Trace, MAX_HOPS as MAX_TRACE_HOPS};
pub use query::{FileEntry, FileText, GraphHealth, Hit, RedactedSite, Source, Status};
pub use resolve::ResolveStats;
pub use store::artifact::{
    Freshness, Manifest, DIR as ARTIFACT_DIR, FILE as ARTIFACT_FILE, MANIFEST as ARTIFACT_MANIFEST,
};
pub use unpack::{unpack, Unpacked};
