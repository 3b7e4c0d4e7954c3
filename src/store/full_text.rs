//! A full build's full-text index, built on a thread of its own while the writer's thread
//! goes on with the rest of the build (resolution's edges, the secondary indexes).
//!
//! SQLite lets one connection write a database at a time, and filling `nodes_fts` is the
//! longest single piece of a full build's tail (on the Linux kernel about 16 s, with the
//! other core idle). So the index is written into a scratch database of its own, from the
//! definitions read through a second connection (the build's database is in WAL mode by
//! then, so that connection reads the committed rows while the writer writes), and its
//! tables are copied in at the end: the index `INSERT INTO nodes_fts(nodes_fts) VALUES
//! ('rebuild')` writes (the same rows are inserted in the same order), for a fraction of the
//! writer's time (on the kernel 1.5 s instead of 16).

use anyhow::{anyhow, Context, Result};
use rusqlite::types::ToSqlOutput;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The full-text index's tables that hold what it indexed (its `config` stays the
/// database's own).
const SHADOW_TABLES: [&str; 3] = ["nodes_fts_data", "nodes_fts_idx", "nodes_fts_docsize"];

/// A full-text index being built; `finish` copies it into the database.
pub struct FullTextBuild {
    scratch: PathBuf,
    builder: Option<JoinHandle<Result<()>>>,
    /// Set when the build is dropped unfinished (the run failed): the thread stops early.
    abandoned: Arc<AtomicBool>,
}

/// Starts indexing every definition of the database `conn` is connected to, as it was last
/// committed, in a scratch database `scratch` (replaced if present). The database must be
/// in WAL mode: the builder's reading connection must not block the writer's.
pub fn start(conn: &Connection, scratch: PathBuf) -> Result<FullTextBuild> {
    let db = conn
        .path()
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("the full-text index is built beside a database file"))?;
    let declaration: String = conn.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'nodes_fts'",
        [],
        |r| r.get(0),
    )?;
    let settings: Vec<(String, rusqlite::types::Value)> = conn
        .prepare("SELECT k, v FROM nodes_fts_config WHERE k <> 'version' ORDER BY k")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let _ = std::fs::remove_file(&scratch);
    let target = scratch.clone();
    let abandoned = Arc::new(AtomicBool::new(false));
    let stop = abandoned.clone();
    let builder = std::thread::Builder::new()
        .name("full-text".into())
        .spawn(move || build(&db, &target, &declaration, &settings, &stop))
        .context("cannot start the full-text index's thread")?;
    Ok(FullTextBuild {
        scratch,
        builder: Some(builder),
        abandoned,
    })
}

/// Indexes the definitions of `db` into a new database at `scratch`, whose full-text table
/// is declared and set up as the source's.
fn build(
    db: &Path,
    scratch: &Path,
    declaration: &str,
    settings: &[(String, rusqlite::types::Value)],
    abandoned: &AtomicBool,
) -> Result<()> {
    let source = super::open(db, super::Mode::ReadOnly)?;
    let mut out = Connection::open(scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    // Nobody else reads the scratch database, and it is deleted after the copy.
    out.execute_batch(
        "PRAGMA page_size = 16384; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -16384;",
    )?;
    out.execute_batch(declaration)?;
    for (key, value) in settings {
        out.execute(
            "INSERT INTO nodes_fts(nodes_fts, rank) VALUES (?1, ?2)",
            rusqlite::params![key, value],
        )?;
    }
    let tx = out.transaction()?;
    {
        // As 'rebuild' reads them: every row of the content table, in rowid order.
        let mut read = source.prepare(
            "SELECT id, name, qualified_name, name_tokens, signature, docstring FROM nodes \
             ORDER BY id",
        )?;
        let mut insert = tx.prepare(
            "INSERT INTO nodes_fts(rowid, name, qualified_name, name_tokens, signature, \
             docstring) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut rows = read.query([])?;
        let mut read_rows = 0u32;
        while let Some(row) = rows.next()? {
            read_rows = read_rows.wrapping_add(1);
            if read_rows.is_multiple_of(4096) && abandoned.load(Ordering::Relaxed) {
                return Ok(());
            }
            for i in 0..6 {
                insert.raw_bind_parameter(i + 1, ToSqlOutput::Borrowed(row.get_ref(i)?))?;
            }
            insert.raw_execute()?;
        }
    }
    tx.commit()?;
    Ok(())
}

impl FullTextBuild {
    /// Waits for the index and copies it into the database of `conn`, in place of what
    /// `nodes_fts` held. Must run outside a transaction (it attaches the scratch database).
    pub fn finish(mut self, conn: &Connection) -> Result<()> {
        let builder = self.builder.take().expect("finished once");
        builder
            .join()
            .map_err(|_| anyhow!("the full-text index's thread panicked"))?
            .context("building the full-text index")?;
        conn.execute(
            "ATTACH DATABASE ?1 AS full_text",
            [self.scratch.to_string_lossy()],
        )?;
        let copied = (|| -> Result<()> {
            let tx = conn.unchecked_transaction()?;
            for table in SHADOW_TABLES {
                // Same declarations on both sides: SQLite copies the rows without decoding them.
                tx.execute_batch(&format!(
                    "DELETE FROM main.{table}; INSERT INTO main.{table} SELECT * FROM full_text.{table};"
                ))?;
            }
            tx.commit()?;
            Ok(())
        })();
        conn.execute_batch("DETACH DATABASE full_text")?;
        copied
    }
}

impl Drop for FullTextBuild {
    /// However the build ends, the scratch database goes (after its thread is done with it).
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::Relaxed);
        if let Some(builder) = self.builder.take() {
            let _ = builder.join();
        }
        let _ = std::fs::remove_file(&self.scratch);
    }
}
