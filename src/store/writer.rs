//! The single writer: inserts and deletes whole files (row, content, nodes, references) with
//! content-derived ids, and keeps qualified names unique.

use super::rows::{text, text_or_null, RowInserter};
use super::scratch::ScratchBuild;
use crate::ids::{base_name, file_id, node_range, ORDINAL_BITS};
use crate::model::FileExtract;
use crate::text::split_identifier;
use anyhow::{bail, Context, Result};
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension, Statement};
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;

/// The row describing one file.
pub struct FileRecord<'a> {
    pub path: &'a str,
    pub language: &'a str,
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: &'a str,
    pub flags: i64,
    pub content: &'a str,
    /// Secrets taken out of `content`.
    pub redactions: &'a [crate::model::Redaction],
    /// The file's words and their counts (`text::file_words`), for the word index.
    pub words: &'a (u32, Vec<(String, u32)>),
    /// The words of the file's definitions (`text::definition_words` of `extract`'s nodes).
    pub definition_words: &'a crate::text::DefinitionWords,
    /// Each node's `name_tokens` column (`name_tokens`).
    pub name_tokens: &'a [String],
}

pub const FLAG_TEST: i64 = 1;
pub const FLAG_SYNTAX_ERRORS: i64 = 2;
pub const FLAG_INVALID_UTF8: i64 = 4;
pub const FLAG_PARSE_ABANDONED: i64 = 8;
/// The file's own documentation declares it deprecated (`lang::Rules::deprecated`).
pub const FLAG_DEPRECATED: i64 = 16;

/// Told of each file an incremental run replaces: before its rows are deleted and right
/// after its nodes are inserted. The resolution side compares the two to know what it must
/// redo; the store only reports, so it never depends on resolution.
pub trait Observer {
    /// Returns the qualified names (without `#k`) of the file's definitions.
    fn before_delete(&mut self, conn: &Connection, file_id: i64) -> Result<Vec<String>>;
    fn after_insert(
        &mut self,
        conn: &Connection,
        file_id: i64,
        extract: &FileExtract,
    ) -> Result<()>;
}

/// Writes inside one transaction opened by the caller; remembers which qualified names it
/// touched so `finish` can re-number exactly the names that may have changed.
pub struct Writer<'c, 'o> {
    conn: &'c Connection,
    insert_file: Statement<'c>,
    insert_content: Statement<'c>,
    insert_nodes: RowInserter<'c, 13>,
    insert_refs: RowInserter<'c, 7>,
    touched: BTreeSet<String>,
    /// Present in an incremental run; a full build re-numbers every repeated name at the end.
    observer: Option<&'o mut dyn Observer>,
    /// An incremental run keeps the full-text index itself (see `FullText`).
    full_text: Option<FullText>,
    /// The word indexes' changes, until `write_word_indexes` stores them.
    word_indexes: Option<WordIndexes>,
}

struct WordIndexes {
    files: super::terms::FileWords,
    definitions: super::terms::DefinitionWords,
}

/// In an incremental run the full-text triggers are set aside: FTS5 writes its pending terms
/// to disk at every statement once it is part of the transaction, one small segment each
/// time, and then merges them. Instead the entries that leave are copied aside
/// (`temp.fts_gone`) as they are indexed, and `finish` removes them in one statement and
/// adds the run's in another, under their final names.
struct FullText {
    /// The triggers' definitions, recreated by `finish`.
    triggers: Vec<String>,
    /// Files inserted by this run: indexed by `finish`.
    inserted: HashSet<i64>,
}

const FTS_COLUMNS: &str = "name, qualified_name, name_tokens, signature, docstring";

impl<'c, 'o> Writer<'c, 'o> {
    /// `observer` is `None` for a full build.
    pub fn new(conn: &'c Connection, observer: Option<&'o mut dyn Observer>) -> Result<Self> {
        Ok(Writer {
            conn,
            insert_file: conn.prepare(
                "INSERT INTO files(id, path, language, size, mtime_ns, hash, lines, flags, module) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?,
            insert_content: conn
                .prepare("INSERT INTO file_contents(file_id, content) VALUES (?1, ?2)")?,
            insert_nodes: RowInserter::new(
                conn,
                "nodes",
                [
                    "id",
                    "file_id",
                    "kind",
                    "name",
                    "qualified_name",
                    "parent_id",
                    "signature",
                    "docstring",
                    "start_line",
                    "end_line",
                    "start_byte",
                    "end_byte",
                    "name_tokens",
                ],
            ),
            insert_refs: RowInserter::new(
                conn,
                "refs",
                ["node_id", "seq", "kind", "name", "module", "alias", "line"],
            ),
            touched: BTreeSet::new(),
            full_text: match observer {
                Some(_) => {
                    conn.execute_batch(&format!(
                        "CREATE TEMP TABLE IF NOT EXISTS fts_gone(id INTEGER, {FTS_COLUMNS}); \
                         CREATE TEMP TABLE IF NOT EXISTS fts_new(lo INTEGER, hi INTEGER); \
                         DELETE FROM temp.fts_gone; DELETE FROM temp.fts_new;"
                    ))?;
                    Some(FullText {
                        triggers: take_full_text_triggers(conn)?,
                        inserted: HashSet::new(),
                    })
                }
                None => None,
            },
            word_indexes: Some(WordIndexes {
                files: super::terms::FileWords::new(observer.is_none()),
                definitions: super::terms::DefinitionWords::new(observer.is_none()),
            }),
            observer,
        })
    }

    pub fn insert_file(&mut self, rec: &FileRecord, extract: &FileExtract) -> Result<()> {
        let fid = file_id(rec.path);
        let lines = extract.nodes.first().map_or(0, |n| n.end_line);
        let inserted = self.insert_file.execute(params![
            fid,
            rec.path,
            rec.language,
            rec.size as i64,
            rec.mtime_ns,
            rec.hash,
            lines,
            rec.flags,
            extract.module
        ]);
        if let Err(e) = inserted {
            let other: Option<String> = self
                .conn
                .query_row("SELECT path FROM files WHERE id = ?1", [fid], |r| r.get(0))
                .optional()?;
            match other {
                Some(other) => bail!(
                    "file id collision between {other} and {}: exclude one of them with --exclude",
                    rec.path
                ),
                None => return Err(e).with_context(|| format!("storing {}", rec.path)),
            }
        }
        self.insert_content.execute(params![fid, rec.content])?;
        let conn = self.conn;
        let words = self.word_indexes()?;
        words.files.insert(conn, fid, rec.words.0, &rec.words.1)?;
        words.definitions.insert(fid, rec.definition_words);
        for r in rec.redactions {
            self.conn
                .prepare_cached("INSERT INTO redactions(file_id, line, kind) VALUES (?1, ?2, ?3)")?
                .execute(params![fid, r.line, r.kind])?;
        }

        let base = fid << ORDINAL_BITS;
        let int = ValueRef::Integer;
        debug_assert_eq!(extract.nodes.len(), rec.name_tokens.len());
        self.insert_nodes.insert(
            extract.nodes.iter().zip(rec.name_tokens).enumerate(),
            |(i, (n, tokens))| {
                [
                    int(base + i as i64),
                    int(fid),
                    text(n.kind.as_str()),
                    text(&n.name),
                    text(&n.qualified_name),
                    n.parent.map_or(ValueRef::Null, |p| int(base + p as i64)),
                    text_or_null(n.signature.as_deref()),
                    text_or_null(n.docstring.as_deref()),
                    int(n.start_line.into()),
                    int(n.end_line.into()),
                    int(n.start_byte.into()),
                    int(n.end_byte.into()),
                    text(tokens),
                ]
            },
        )?;
        if self.observer.is_some() {
            self.touched
                .extend(extract.nodes.iter().map(|n| n.qualified_name.clone()));
        }
        if let Some(observer) = self.observer.as_deref_mut() {
            observer.after_insert(self.conn, fid, extract)?;
        }
        if let Some(ft) = &mut self.full_text {
            ft.inserted.insert(fid);
        }
        self.insert_refs
            .insert(extract.refs.iter().enumerate(), |(seq, r)| {
                [
                    int(base + r.node as i64),
                    int(seq as i64),
                    text(r.kind.as_str()),
                    text(&r.name),
                    text_or_null(r.module.as_deref()),
                    text_or_null(r.alias.as_deref()),
                    int(r.line.into()),
                ]
            })?;
        Ok(())
    }

    /// Removes a file and everything extracted from it.
    pub fn delete_file(&mut self, path: &str) -> Result<()> {
        let fid = file_id(path);
        let (lo, hi) = node_range(fid);
        if let Some(observer) = self.observer.as_deref_mut() {
            let names = observer.before_delete(self.conn, fid)?;
            self.touched.extend(names);
        }
        self.conn
            .prepare_cached("DELETE FROM refs WHERE node_id >= ?1 AND node_id < ?2")?
            .execute([lo, hi])?;
        self.conn
            .prepare_cached("DELETE FROM edges WHERE source_id >= ?1 AND source_id < ?2")?
            .execute([lo, hi])?;
        self.conn
            .prepare_cached("DELETE FROM unresolved WHERE source_id >= ?1 AND source_id < ?2")?
            .execute([lo, hi])?;
        if self.full_text.is_some() {
            self.set_aside_full_text(lo, hi)?;
        }
        let conn = self.conn;
        let words = self.word_indexes()?;
        words.files.delete(conn, fid)?;
        words.definitions.delete(conn, fid)?;
        self.conn
            .prepare_cached("DELETE FROM nodes WHERE id >= ?1 AND id < ?2")?
            .execute([lo, hi])?;
        self.conn
            .prepare_cached("DELETE FROM redactions WHERE file_id = ?1")?
            .execute([fid])?;
        self.conn
            .prepare_cached("DELETE FROM file_contents WHERE file_id = ?1")?
            .execute([fid])?;
        self.conn
            .prepare_cached("DELETE FROM files WHERE id = ?1")?
            .execute([fid])?;
        Ok(())
    }

    /// Stores the word indexes' changes (`finish` does, if not called before; a full build
    /// calls `start_word_indexes` instead). No file is inserted or deleted after it.
    pub fn write_word_indexes(&mut self) -> Result<()> {
        if let Some(words) = self.word_indexes.take() {
            words.files.finish(self.conn)?;
            words.definitions.finish(self.conn)?;
        }
        Ok(())
    }

    /// A full build's word indexes, once every file is written: filled in a scratch
    /// database `scratch` on a thread of their own (their sizes stored now), and copied in by
    /// the returned build's `finish` (outside a transaction). What they gathered in memory is
    /// freed as they are written. No file is inserted or deleted after it.
    pub fn start_word_indexes(&mut self, scratch: PathBuf) -> Result<ScratchBuild> {
        if self.observer.is_some() {
            bail!("only a full build writes its word indexes beside the database");
        }
        let Some(words) = self.word_indexes.take() else {
            bail!("the word indexes were written already");
        };
        let tables = [
            words.files.into_encoded(),
            words.definitions.into_encoded(self.conn)?,
        ];
        let names = tables.each_ref().map(|t| t.table());
        super::scratch::start(
            "word-indexes",
            scratch,
            names.map(String::from).to_vec(),
            super::scratch::declarations(self.conn, &names)?,
            None,
            move |tx, abandoned| tables.into_iter().try_for_each(|t| t.write(tx, abandoned)),
        )
    }

    fn word_indexes(&mut self) -> Result<&mut WordIndexes> {
        match self.word_indexes.as_mut() {
            Some(words) => Ok(words),
            None => bail!("a file changed after the word indexes were written"),
        }
    }

    /// Records a new modification time for a file whose content did not change.
    pub fn touch_file(&mut self, path: &str, mtime_ns: i64) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE files SET mtime_ns = ?1 WHERE id = ?2")?
            .execute(params![mtime_ns, file_id(path)])?;
        Ok(())
    }

    /// Copies the full-text entries of nodes `lo..hi` aside, as they are indexed now, for
    /// `finish` to remove.
    fn set_aside_full_text(&self, lo: i64, hi: i64) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO temp.fts_gone SELECT id, {FTS_COLUMNS} FROM nodes \
                 WHERE id >= ?1 AND id < ?2"
            ))?
            .execute([lo, hi])?;
        Ok(())
    }

    /// Makes qualified names unique: among nodes sharing a name, ordered by (path, byte),
    /// the first keeps it and the k-th becomes `name#k`. Only names touched by this run are
    /// re-numbered, so the outcome equals a full rebuild's.
    pub fn finish(mut self) -> Result<()> {
        self.write_word_indexes()?;
        if self.observer.is_none() {
            // A full build numbers every repeated name in one set-based statement.
            self.conn.execute_batch(
                "UPDATE nodes SET qualified_name = r.qn || '#' || r.k \
                 FROM (SELECT n.id, n.qualified_name AS qn, row_number() OVER ( \
                           PARTITION BY n.qualified_name ORDER BY f.path, n.start_byte, n.id) AS k \
                       FROM nodes n JOIN files f ON f.id = n.file_id \
                       WHERE n.qualified_name IN (SELECT qualified_name FROM nodes \
                                                  GROUP BY qualified_name HAVING count(*) > 1)) AS r \
                 WHERE nodes.id = r.id AND r.k > 1",
            )?;
            return Ok(());
        }
        let full_text = self
            .full_text
            .as_ref()
            .expect("an incremental run keeps the full-text index");
        let names = &self.touched;
        // One index range covers `name` and every `name#k` (`#` sorts just before `$`); rows of
        // other names in that range (`name!`, `name#x`) are filtered out below.
        let mut members = self.conn.prepare_cached(
            "SELECT n.id, n.qualified_name FROM nodes n JOIN files f ON f.id = n.file_id \
             WHERE n.qualified_name >= ?1 AND n.qualified_name < ?1 || '$' \
             ORDER BY f.path, n.start_byte, n.id",
        )?;
        let mut rename = self
            .conn
            .prepare_cached("UPDATE nodes SET qualified_name = ?1 WHERE id = ?2")?;
        // Nodes of files this run did not insert, renamed: indexed again under the new names.
        let mut renamed = Vec::new();
        for name in names {
            let mut rows: Vec<(i64, String)> = members
                .query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            rows.retain(|(_, qn)| base_name(qn) == name.as_str());
            for (k, (id, current)) in rows.into_iter().enumerate() {
                let wanted = if k == 0 {
                    name.clone()
                } else {
                    format!("{name}#{}", k + 1)
                };
                if current != wanted {
                    // A node of a file this run did not insert is in the full-text index
                    // under its old name.
                    if !full_text.inserted.contains(&(id >> ORDINAL_BITS)) {
                        self.set_aside_full_text(id, id + 1)?;
                        renamed.push(id);
                    }
                    rename.execute(params![wanted, id])?;
                }
            }
        }
        // Ranges of node ids to index: the inserted files' and the renamed nodes'.
        let mut add_range = self
            .conn
            .prepare_cached("INSERT INTO temp.fts_new(lo, hi) VALUES (?1, ?2)")?;
        let files = full_text.inserted.iter().map(|&f| node_range(f));
        for (lo, hi) in files.chain(renamed.iter().map(|&id| (id, id + 1))) {
            add_range.execute([lo, hi])?;
        }
        self.conn.execute_batch(&format!(
            "INSERT INTO nodes_fts(nodes_fts, rowid, {FTS_COLUMNS}) \
             SELECT 'delete', id, {FTS_COLUMNS} FROM temp.fts_gone; \
             INSERT INTO nodes_fts(rowid, {FTS_COLUMNS}) \
             SELECT id, {FTS_COLUMNS} FROM temp.fts_new JOIN nodes ON id >= lo AND id < hi \
             ORDER BY id; \
             DELETE FROM temp.fts_gone; DELETE FROM temp.fts_new;"
        ))?;
        for sql in &full_text.triggers {
            self.conn.execute_batch(sql)?;
        }
        Ok(())
    }
}

/// Each node's `name_tokens` column: its name's sub-tokens (for `FileRecord::name_tokens`;
/// computed by the workers, off the writer's thread).
pub fn name_tokens(extract: &FileExtract) -> Vec<String> {
    extract
        .nodes
        .iter()
        .map(|n| split_identifier(&n.name))
        .collect()
}

/// The words of a file's definitions as the writer stores their text columns, given their
/// `name_tokens` (for `FileRecord::definition_words`; computed by the workers too).
pub fn definition_words(
    extract: &FileExtract,
    name_tokens: &[String],
) -> crate::text::DefinitionWords {
    crate::text::definition_words(extract.nodes.iter().zip(name_tokens).map(|(n, tokens)| {
        [
            n.name.as_str(),
            base_name(&n.qualified_name),
            tokens.as_str(),
            n.signature.as_deref().unwrap_or(""),
            n.docstring.as_deref().unwrap_or(""),
        ]
    }))
}

/// Drops the full-text triggers of `nodes`, returning their definitions.
fn take_full_text_triggers(conn: &Connection) -> Result<Vec<String>> {
    let mut q = conn.prepare(
        "SELECT name, sql FROM sqlite_master \
         WHERE type = 'trigger' AND tbl_name = 'nodes' AND sql IS NOT NULL ORDER BY name",
    )?;
    let triggers: Vec<(String, String)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (name, _) in &triggers {
        conn.execute_batch(&format!("DROP TRIGGER \"{name}\""))?;
    }
    Ok(triggers.into_iter().map(|(_, sql)| sql).collect())
}
