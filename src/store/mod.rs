//! The SQLite database: opening with the right pragmas, schema migrations, and the checks
//! that refuse a foreign, corrupt or newer database with a message that says what to do.

pub mod artifact;
pub mod full_text;
pub mod history;
pub mod project;
pub mod rows;
pub mod scratch;
pub mod staging;
pub mod terms;
pub mod writer;

pub use writer::{FileRecord, Writer};

use crate::error::Error;
use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};

/// `PRAGMA application_id` of our databases ("CBIX"): tells ours from any other SQLite file.
pub const APPLICATION_ID: i32 = 0x4342_4958;

/// Numbered migrations, applied in order; `PRAGMA user_version` records how many ran.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_initial.sql"),
    include_str!("../../migrations/0002_call_graph.sql"),
    include_str!("../../migrations/0003_scope_index.sql"),
    include_str!("../../migrations/0004_redactions.sql"),
    include_str!("../../migrations/0005_git_blob_hash.sql"),
    include_str!("../../migrations/0006_scope_index_and_fts_hash.sql"),
    include_str!("../../migrations/0007_fts_positions.sql"),
    include_str!("../../migrations/0008_file_words.sql"),
    include_str!("../../migrations/0009_definition_terms.sql"),
    include_str!("../../migrations/0010_text_file_words.sql"),
    include_str!("../../migrations/0011_deprecated_flag.sql"),
];

pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// How the connection will be used.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ReadOnly,
    ReadWrite,
    /// A fresh database being filled in one go; a crash discards it, so no journal is needed.
    Bulk,
}

/// Opens an existing database of ours, checking what it is before touching it. Queries need
/// the current schema; an older database must be re-indexed first.
pub fn open(path: &Path, mode: Mode) -> Result<Connection> {
    let conn = open_checked(path, mode)?;
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version < SCHEMA_VERSION {
        return Err(Error::SchemaTooOld {
            db: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        }
        .into());
    }
    Ok(conn)
}

fn open_checked(path: &Path, mode: Mode) -> Result<Connection> {
    if !path.exists() {
        return Err(Error::NoIndex {
            message: format!(
                "no index at {}: run `indexer index PATH` first (or pass --db)",
                path.display()
            ),
        }
        .into());
    }
    let flags = match mode {
        Mode::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        _ => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    };
    let conn = Connection::open_with_flags(path, flags)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    let conn = match check_identity(&conn, path) {
        Ok(()) => conn,
        Err(e) if mode == Mode::ReadOnly && cannot_open(&e) => {
            // A WAL database is read through its -shm file, which a read-only folder (a
            // read-only mount, a shared cache) cannot hold. Nothing can write the database
            // there either, so it is read as immutable: without the WAL index or locks.
            let conn = Connection::open_with_flags(
                read_only_uri(path, true),
                flags | OpenFlags::SQLITE_OPEN_URI,
            )
            .with_context(|| format!("cannot open database {}", path.display()))?;
            check_identity(&conn, path).map_err(|_| e)?;
            conn
        }
        Err(e) => return Err(e),
    };
    configure(&conn, path, mode)?;
    Ok(conn)
}

/// Opens database `path` to read it as immutable: without locks, trusting that nothing
/// writes the file while the connection reads it (the caller sees to that).
pub fn open_immutable(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(read_only_uri(path, true), flags)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    check_identity(&conn, path)?;
    configure(&conn, path, Mode::ReadOnly)?;
    Ok(conn)
}

/// Attaches database `path` read-only as schema `name` (to a connection opened with URI
/// filenames, as `create` does), as immutable if a read-only folder requires it (see
/// `open_checked`).
pub fn attach_read_only(conn: &Connection, path: &Path, name: &str) -> Result<()> {
    let attach = |immutable: bool| -> Result<()> {
        conn.execute(
            &format!("ATTACH DATABASE ?1 AS {name}"),
            [read_only_uri(path, immutable)],
        )?;
        // The first read is where SQLite finds it cannot open the WAL index.
        conn.query_row(
            &format!("SELECT count(*) FROM {name}.sqlite_master"),
            [],
            |_| Ok(()),
        )?;
        Ok(())
    };
    attach(false)
        .or_else(|e| {
            if !cannot_open(&e) {
                return Err(e);
            }
            let _ = conn.execute_batch(&format!("DETACH DATABASE {name}"));
            attach(true)
        })
        .with_context(|| format!("cannot read {}", path.display()))
}

/// SQLite could not open the file (SQLITE_CANTOPEN), as opposed to finding it foreign.
fn cannot_open(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::CannotOpen
        )
    })
}

/// `file:<path>?mode=ro` (and `&immutable=1`), the path percent-encoded as a URI requires.
fn read_only_uri(path: &Path, immutable: bool) -> String {
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str(if immutable {
        "?mode=ro&immutable=1"
    } else {
        "?mode=ro"
    });
    uri
}

/// The schema version of an existing database of ours (refusing foreign or corrupt files).
pub fn schema_version(path: &Path) -> Result<i32> {
    let conn = open_checked(path, Mode::ReadOnly)?;
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Creates a new, empty database at `path` with the current schema.
pub fn create(path: &Path, mode: Mode) -> Result<Connection> {
    let conn = Connection::open(path)
        .with_context(|| format!("cannot create database {}", path.display()))?;
    // Large pages: most of the database is file text, stored in overflow page chains.
    conn.execute_batch(&format!(
        "PRAGMA page_size = 16384; PRAGMA application_id = {APPLICATION_ID};"
    ))?;
    configure(&conn, path, mode)?;
    migrate(&conn)?;
    Ok(conn)
}

fn configure(conn: &Connection, path: &Path, mode: Mode) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // Writing a file's rows takes some 30 distinct cached statements (deleting the old rows,
    // keeping the word indexes and the full text in step, comparing facts before and after):
    // with rusqlite's default of 16, each was prepared again for every file.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    let pragmas = match mode {
        // A server holds several read-only connections, each page cache filling over hours:
        // 256 KiB each (measured on Django under 8 clients: no slower than 16, 4 or 1 MiB,
        // whose peak memory was 66, 18 and 6 MB higher; the pages are in the OS's cache
        // anyway, and the CLI's map, pack and skeleton take as long).
        Mode::ReadOnly => "PRAGMA query_only = ON; PRAGMA cache_size = -256;",
        Mode::ReadWrite => {
            // Memory-mapped reads: resolution reads every definition on each run.
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 1073741824; \
             PRAGMA cache_size = -131072; PRAGMA temp_store = MEMORY;"
        }
        Mode::Bulk => {
            // Rows are consistent by construction: foreign-key checks would only cost lookups.
            // Temporary data stays in files (SQLite's default): with it in memory, the sorter
            // behind CREATE INDEX keeps every key in one list instead of sorting in runs (see
            // `restore_indexes`).
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF; \
             PRAGMA cache_size = -262144; PRAGMA temp_store = FILE; PRAGMA locking_mode = EXCLUSIVE;"
        }
    };
    conn.execute_batch(pragmas)
        .map_err(|e| corrupt_or(e, path, None))?;
    Ok(())
}

/// Statements each connection keeps prepared (rusqlite's `prepare_cached`).
const STATEMENT_CACHE: usize = 128;

/// Refuses databases that are not ours, are corrupt, or were written by a newer version.
fn check_identity(conn: &Connection, path: &Path) -> Result<()> {
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| {
            let unreadable = format!("{} is not a readable SQLite database", path.display());
            corrupt_or(e, path, Some(unreadable))
        })?;
    if app_id != APPLICATION_ID {
        return Err(Error::Foreign {
            path: path.to_path_buf(),
            application_id: app_id,
        }
        .into());
    }
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            db: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        }
        .into());
    }
    Ok(())
}

/// `Error::Corrupt` when SQLite found the file is no database or a damaged one (its message
/// after `prefix`); any other failure as it is, under `prefix`.
fn corrupt_or(e: rusqlite::Error, path: &Path, prefix: Option<String>) -> anyhow::Error {
    let damaged = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    );
    if !damaged {
        let e = anyhow::Error::new(e);
        return match prefix {
            Some(p) => e.context(p),
            None => e,
        };
    }
    let mut message = prefix.map(|p| p + ": ").unwrap_or_default();
    message
        .push_str("the database file is corrupt: rebuild it with `indexer index PATH --rebuild`: ");
    message.push_str(&e.to_string());
    Error::Corrupt {
        path: path.to_path_buf(),
        message,
    }
    .into()
}

/// Brings an older schema up to date, one migration per transaction.
pub fn migrate(conn: &Connection) -> Result<()> {
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)
            .with_context(|| format!("applying migration {}", i + 1))?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}

/// Secondary indexes and the full-text triggers, removed for a bulk load and rebuilt after it:
/// building them once, sorted, is much faster than maintaining them row by row.
pub struct Deferred {
    /// (table, definition)
    indexes: Vec<(String, String)>,
    triggers: Vec<String>,
}

/// Drops secondary indexes and triggers (remembering their definitions from the schema).
pub fn defer_indexes(conn: &Connection) -> Result<Deferred> {
    let mut q = conn.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_master \
         WHERE type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name",
    )?;
    let rows: Vec<(String, String, String, String)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut deferred = Deferred {
        indexes: Vec::new(),
        triggers: Vec::new(),
    };
    for (kind, name, table, sql) in rows {
        // A partial index covers few rows, stays cheap to maintain, and resolution reads
        // through it before the deferred indexes are back.
        if kind == "index" && sql.contains(" WHERE ") {
            continue;
        }
        conn.execute_batch(&format!("DROP {} \"{}\"", kind.to_uppercase(), name))?;
        if kind == "index" {
            deferred.indexes.push((table, sql));
        } else {
            deferred.triggers.push(sql);
        }
    }
    Ok(deferred)
}

/// Recreates the indexes `defer_indexes` dropped on the tables `of_table` picks.
pub fn restore_indexes(
    conn: &Connection,
    deferred: &Deferred,
    of_table: impl Fn(&str) -> bool,
) -> Result<()> {
    // SQLite sorts an index's keys in runs of at most the page cache's size. Runs that fit
    // the CPU's caches, merged, beat one sort of every key in a cache of hundreds of MB by
    // far: the Linux kernel's indexes from 17.6 s to 11.1 s (`edges_target`, 9.1 million
    // keys, 6.8 s to 2.9 s); Django's from 0.25 s to 0.21 s.
    let cache: i64 = conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
    conn.execute_batch(&format!("PRAGMA cache_size = {SORT_RUN_CACHE_KIB}"))?;
    let created = deferred
        .indexes
        .iter()
        .filter(|(table, _)| of_table(table))
        .try_for_each(|(_, sql)| conn.execute_batch(sql));
    conn.execute_batch(&format!("PRAGMA cache_size = {cache}"))?;
    Ok(created?)
}

/// The page cache while indexes are built (negative: KiB), which bounds the sorter's runs.
const SORT_RUN_CACHE_KIB: i64 = -8192;

/// Recreates the triggers that keep the full-text index in step with `nodes`.
pub fn restore_triggers(conn: &Connection, deferred: &Deferred) -> Result<()> {
    for sql in &deferred.triggers {
        conn.execute_batch(sql)?;
    }
    Ok(())
}

/// Fills the full-text index from `nodes` in one pass.
pub fn rebuild_full_text(conn: &Connection) -> Result<()> {
    conn.execute_batch("INSERT INTO nodes_fts(nodes_fts) VALUES ('rebuild');")?;
    Ok(())
}

/// Every indexed file's path, relative to the indexed folder.
pub fn file_paths(conn: &Connection) -> Result<Vec<String>> {
    let mut q = conn.prepare_cached("SELECT path FROM files")?;
    let paths = q
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(paths)
}

pub fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) \
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

/// Opens (creating it if need be) a file that only serves to be locked; its content is
/// never touched.
pub fn open_lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
}

/// Holds `<db>.lock` while the database is rewritten: a second `indexer index` (or `import`)
/// of the same project stops with a message instead of racing the first. The operating system releases the lock when
/// the process ends, however it ends.
pub fn lock_for_writing(db: &Path) -> Result<std::fs::File> {
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let path = with_suffix(db, ".lock");
    let file = open_lock_file(&path).with_context(|| {
        format!(
            "cannot create the lock file {} (pass --db to keep the index elsewhere)",
            path.display()
        )
    })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked {
            db: db.to_path_buf(),
        }
        .into()),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// A write to the index that failed for want of room (a full disk, a quota, a file size
/// limit) or on a device error says so, and that the index in place was not touched.
pub fn explain_write_failure(e: anyhow::Error, db: &Path) -> anyhow::Error {
    use rusqlite::ErrorCode;
    use std::io::ErrorKind;
    let mut no_room = false;
    let mut io_error = false;
    for c in e.chain() {
        if let Some(rusqlite::Error::SqliteFailure(f, _)) = c.downcast_ref::<rusqlite::Error>() {
            no_room |= f.code == ErrorCode::DiskFull;
            io_error |= f.code == ErrorCode::SystemIoFailure;
        } else if let Some(io) = c.downcast_ref::<std::io::Error>() {
            no_room |= matches!(
                io.kind(),
                ErrorKind::StorageFull | ErrorKind::QuotaExceeded | ErrorKind::FileTooLarge
            );
        }
    }
    let why = if no_room {
        "no room left"
    } else if io_error {
        "the device refused a write (a full disk, a file size limit or a failing disk)"
    } else {
        return e;
    };
    e.context(format!(
        "cannot write the index {}: {why}; the index in place, if any, is unchanged; \
         free some space or pass --db to keep the index on another disk",
        db.display()
    ))
}

/// `<db><suffix>`: the files that go with a database (`-wal`, `.lock`, temporaries).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Puts the complete database `temp` in place of `db` in one rename. The previous database's
/// WAL files go first: they belong to it and must never be read against the new one.
pub fn install(temp: &Path, db: &Path) -> Result<()> {
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(db, suffix));
    }
    std::fs::rename(temp, db)
        .with_context(|| format!("cannot move the new index into place at {}", db.display()))
}
