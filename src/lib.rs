//! codebase-indexer: a repository as a local SQLite knowledge graph of its definitions.
//!
//! Stages, each in its own module: `walk` (which files), `lang` + `extract` (definitions and
//! reference sites per file), `store` (SQLite schema and the single writer), `index` (the
//! pipeline, full and incremental), `query` (search, source, status), `project` (where a
//! project's database lives), `artifact` (the committed, compressed copy of the database).

pub mod artifact;
pub mod eval;
pub mod extract;
pub mod index;
pub mod lang;
pub mod model;
pub mod project;
pub mod query;
pub mod rank;
pub mod redact;
pub mod resolve;
pub mod staging;
pub mod store;
pub mod text;
pub mod trace;
pub mod walk;
