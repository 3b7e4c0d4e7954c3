//! A full build's full-text index, built on a thread of its own while the writer's thread
//! goes on with the rest of the build (the indexes of resolution's edges).
//!
//! SQLite lets one connection write a database at a time, and filling `nodes_fts` is the
//! longest single piece of a full build's tail (on the Linux kernel about 16 s when it was
//! filled a row at a time, with the other core idle). So the index is written into a
//! scratch database of its own by one `INSERT ... SELECT` from the build's database attached
//! there (in WAL mode by then, so that connection reads the committed definitions while the
//! writer writes), and its tables are copied in at the end: the index `INSERT INTO
//! nodes_fts(nodes_fts) VALUES ('rebuild')` writes (the same rows are inserted in the same
//! order), for a fraction of the writer's time (on the kernel 1.5 s instead of 16).

use super::scratch::{self, ScratchBuild};
use anyhow::{anyhow, Result};
use rusqlite::Connection;
use std::path::PathBuf;

/// The full-text index's tables that hold what it indexed (its `config` stays the
/// database's own).
const SHADOW_TABLES: [&str; 3] = ["nodes_fts_data", "nodes_fts_idx", "nodes_fts_docsize"];

/// Starts indexing every definition of the database `conn` is connected to, as it was last
/// committed, in a scratch database `scratch`; the build's `finish` copies the index in.
/// The database must be in WAL mode: the builder's reading connection must not block the
/// writer's.
pub fn start(conn: &Connection, scratch: PathBuf) -> Result<ScratchBuild> {
    let db = conn
        .path()
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("the full-text index is built beside a database file"))?;
    let settings: Vec<(String, rusqlite::types::Value)> = conn
        .prepare("SELECT k, v FROM nodes_fts_config WHERE k <> 'version' ORDER BY k")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    scratch::start(
        "full-text",
        scratch,
        SHADOW_TABLES.map(String::from).to_vec(),
        scratch::declarations(conn, &["nodes_fts"])?,
        Some(db),
        move |tx, _| {
            // Configured as the database's own index.
            for (key, value) in &settings {
                tx.execute(
                    "INSERT INTO nodes_fts(nodes_fts, rank) VALUES (?1, ?2)",
                    rusqlite::params![key, value],
                )?;
            }
            // As 'rebuild' reads them: every row of the content table, in rowid order. One
            // statement: the values go from one table to the other without being copied out.
            tx.execute_batch(
                "INSERT INTO main.nodes_fts(rowid, name, qualified_name, name_tokens, signature, \
                 docstring) SELECT id, name, qualified_name, name_tokens, signature, docstring \
                 FROM source.nodes ORDER BY id",
            )?;
            Ok(())
        },
    )
}
