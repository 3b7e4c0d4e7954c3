//! Tables a full build fills on a thread of its own, in a scratch database beside the
//! index, while the writer's thread goes on with the rest of the build; their rows are then
//! copied in at once.
//!
//! SQLite lets one connection write a database at a time. A table whose rows are all known
//! at some point (the word indexes once every file is read, the full-text index once the
//! definitions are named) can be written elsewhere by another core, and an `INSERT INTO t
//! SELECT * FROM scratch.t` between tables declared alike copies SQLite's records without
//! decoding them: a fraction of the time the inserts took.

use anyhow::{anyhow, Context, Result};
use rusqlite::{Connection, InterruptHandle, Transaction};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Tables being filled in a scratch database; `finish` copies them into the database.
pub struct ScratchBuild {
    scratch: PathBuf,
    /// The tables `finish` copies, in order.
    tables: Vec<String>,
    builder: Option<JoinHandle<Result<()>>>,
    /// Set when the build is dropped unfinished (the run failed): `fill` may stop early.
    abandoned: Arc<AtomicBool>,
    /// Stops the builder's statement running when the build is dropped unfinished.
    interrupt: Arc<Mutex<Option<InterruptHandle>>>,
}

/// Starts filling `tables` on a thread named `name`, in a new database at `scratch`
/// (replaced if present): `declarations` create them as the database declares them, then
/// `fill` writes their rows in one transaction, and may stop early once its flag is set.
/// With `source`, that database is attached as `source` for `fill` to read (only read).
pub fn start<F>(
    name: &str,
    scratch: PathBuf,
    tables: Vec<String>,
    declarations: Vec<String>,
    source: Option<PathBuf>,
    fill: F,
) -> Result<ScratchBuild>
where
    F: FnOnce(&Transaction, &AtomicBool) -> Result<()> + Send + 'static,
{
    let _ = std::fs::remove_file(&scratch);
    let target = scratch.clone();
    let abandoned = Arc::new(AtomicBool::new(false));
    let interrupt = Arc::new(Mutex::new(None));
    let (stop, handle) = (abandoned.clone(), interrupt.clone());
    let builder = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            build(
                &target,
                &declarations,
                source.as_deref(),
                fill,
                &stop,
                &handle,
            )
        })
        .with_context(|| format!("cannot start the {name} thread"))?;
    Ok(ScratchBuild {
        scratch,
        tables,
        builder: Some(builder),
        abandoned,
        interrupt,
    })
}

/// The statements that create `tables` as the database of `conn` declares them.
pub fn declarations(conn: &Connection, tables: &[&str]) -> Result<Vec<String>> {
    tables
        .iter()
        .map(|table| {
            conn.query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .with_context(|| format!("no table {table} in the database"))
        })
        .collect()
}

fn build<F>(
    scratch: &Path,
    declarations: &[String],
    source: Option<&Path>,
    fill: F,
    abandoned: &AtomicBool,
    interrupt: &Mutex<Option<InterruptHandle>>,
) -> Result<()>
where
    F: FnOnce(&Transaction, &AtomicBool) -> Result<()>,
{
    let mut out = Connection::open(scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    // Nobody else reads the scratch database, and it is deleted after the copy. (`main.`:
    // the source attached below is the index itself, in WAL mode, read while it is written.)
    out.execute_batch(
        "PRAGMA main.page_size = 16384; PRAGMA main.journal_mode = OFF; \
         PRAGMA main.synchronous = OFF; PRAGMA main.locking_mode = EXCLUSIVE; \
         PRAGMA main.cache_size = -16384;",
    )?;
    for declaration in declarations {
        out.execute_batch(declaration)?;
    }
    if let Some(source) = source {
        // Only read: `fill` writes the scratch database alone.
        out.execute("ATTACH DATABASE ?1 AS source", [source.to_string_lossy()])?;
    }
    // A statement reading a whole table is interrupted when the build is abandoned.
    *interrupt.lock().unwrap_or_else(|e| e.into_inner()) = Some(out.get_interrupt_handle());
    if abandoned.load(Ordering::Relaxed) {
        return Ok(());
    }
    let tx = out.transaction()?;
    fill(&tx, abandoned)?;
    tx.commit()?;
    Ok(())
}

impl ScratchBuild {
    /// Waits for the tables to be filled: the builder no longer reads its source.
    pub fn wait(&mut self) -> Result<()> {
        let Some(builder) = self.builder.take() else {
            return Ok(());
        };
        let name = builder.thread().name().unwrap_or("scratch").to_string();
        builder
            .join()
            .map_err(|_| anyhow!("the {name} thread panicked"))?
            .with_context(|| format!("building on the {name} thread"))
    }

    /// Waits for the tables and copies them into the database of `conn`, in place of what
    /// they held. Must run outside a transaction (it attaches the scratch database).
    pub fn finish(mut self, conn: &Connection) -> Result<()> {
        self.wait()?;
        conn.execute(
            "ATTACH DATABASE ?1 AS scratch",
            [self.scratch.to_string_lossy()],
        )?;
        let copied = (|| -> Result<()> {
            let tx = conn.unchecked_transaction()?;
            for table in &self.tables {
                // Same declarations on both sides: SQLite copies the rows without decoding them.
                tx.execute_batch(&format!(
                    "DELETE FROM main.{table}; INSERT INTO main.{table} SELECT * FROM scratch.{table};"
                ))?;
            }
            tx.commit()?;
            Ok(())
        })();
        conn.execute_batch("DETACH DATABASE scratch")?;
        copied
    }
}

impl Drop for ScratchBuild {
    /// However the build ends, the scratch database goes (after its thread is done with it).
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::Relaxed);
        if let Some(handle) = self
            .interrupt
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            handle.interrupt();
        }
        if let Some(builder) = self.builder.take() {
            let _ = builder.join();
        }
        let _ = std::fs::remove_file(&self.scratch);
    }
}
