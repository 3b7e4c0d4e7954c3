//! The co-change history of an index's tree, cached: the files each recent commit changed,
//! as read from git back from one commit. Reading it costs a `git log` of thousands of
//! commits (about 0.1 s); the commit it starts from changes only when the work tree's HEAD
//! moves, while impacts of work-tree edits ask for it every time.
//!
//! The table holds the history of the last commit asked about, under a key naming that
//! commit and how many commits were read. It is made on first use and is not part of the
//! schema's version: it is git's data, not the tree's, so the committed artifact leaves it
//! out, a rebuilt index starts without it, and it is read again from git when missing.

use crate::store::{self, Mode};
use anyhow::Result;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// A commit and the paths it changed.
pub type Commit = (String, Vec<String>);

const TABLE: &str = "CREATE TABLE IF NOT EXISTS cochange_history (\
     key TEXT NOT NULL, seq INTEGER NOT NULL, commit_id TEXT NOT NULL, files TEXT NOT NULL, \
     PRIMARY KEY (key, seq)) WITHOUT ROWID";

fn key(head: &str, limit: usize) -> String {
    format!("{head}/{limit}")
}

/// The cached history of `head` read `limit` commits deep, if it is the one cached.
pub fn cached(conn: &Connection, head: &str, limit: usize) -> Result<Option<Vec<Commit>>> {
    let exists = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cochange_history'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !exists {
        return Ok(None);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT commit_id, files FROM cochange_history WHERE key = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([key(head, limit)], |r| {
        let files: String = r.get(1)?;
        Ok((
            r.get::<_, String>(0)?,
            files.split('\n').map(str::to_string).collect(),
        ))
    })?;
    let history: Vec<Commit> = rows.collect::<rusqlite::Result<_>>()?;
    Ok((!history.is_empty()).then_some(history))
}

/// Replaces the cached history of the database at `db` with `history`, that of `head`.
pub fn save(db: &Path, head: &str, limit: usize, history: &[Commit]) -> Result<()> {
    let mut conn = store::open(db, Mode::ReadWrite)?;
    conn.execute_batch(TABLE)?;
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM cochange_history", [])?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO cochange_history(key, seq, commit_id, files) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let key = key(head, limit);
        let mut files = String::new();
        for (seq, (id, paths)) in history.iter().enumerate() {
            files.clear();
            for (i, p) in paths.iter().enumerate() {
                if i > 0 {
                    files.push('\n');
                }
                files.push_str(p);
            }
            insert.execute(params![key, seq as i64, id, files])?;
        }
    }
    tx.commit()?;
    Ok(())
}
