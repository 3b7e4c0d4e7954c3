//! codebase-indexer: a repository as a local SQLite knowledge graph.

pub mod extract;
pub mod lang;
pub mod model;
