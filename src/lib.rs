//! codebase-indexer: a repository as a local SQLite knowledge graph of its definitions.
//!
//! Stages, each in its own module: `walk` (which files), `lang` + `extract` (definitions and
//! reference sites per file), `store` (SQLite schema and the single writer), `index` (the
//! pipeline, full and incremental), `query` (search, source, status), `project` (where a
//! project's database lives), `artifact` (the committed, compressed copy of the database),
//! and the renderers of what an agent reads under a token budget: `tokens` (counting and
//! fitting), `graph` (the definitions graph in memory, PageRank), `skeleton`, `repomap`,
//! `pack`, with `render` for the text pieces they share.

pub mod artifact;
pub mod eval;
pub mod eval_context;
pub mod extract;
pub mod graph;
pub mod index;
pub mod lang;
pub mod model;
pub mod pack;
pub mod project;
pub mod query;
pub mod rank;
pub mod redact;
pub mod render;
pub mod repomap;
pub mod resolve;
pub mod skeleton;
pub mod staging;
pub mod store;
pub mod text;
pub mod tokens;
pub mod trace;
pub mod walk;
