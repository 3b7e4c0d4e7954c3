//! The word indexes kept by the writer and read by ranking: whole files' words
//! (`file_terms`, `file_words`) and definitions' (`definition_terms`). Postings are sorted by
//! id, so a full build and an incremental run that reach the same tree store the same bytes.

use crate::ids::{base_name, ORDINAL_BITS};
use crate::store::rows::{text, RowInserter};
use anyhow::Result;
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicBool, Ordering};

/// A posting: an id (a file's or a definition's) and its values.
pub type Entry<const N: usize> = (i64, [u32; N]);

/// Encodes postings sorted by id: each id as the difference from the one before (the first
/// as is), then its `N` values, all unsigned LEB128 varints (see migrations 0008 and 0009).
pub fn encode<const N: usize>(postings: &[Entry<N>], out: &mut Vec<u8>) {
    let mut previous = 0i64;
    for &(id, values) in postings {
        varint((id - previous) as u64, out);
        for v in values {
            varint(u64::from(v), out);
        }
        previous = id;
    }
}

/// Decodes what `encode` wrote; a damaged blob yields the entries before the damage.
pub fn decode<const N: usize>(mut blob: &[u8], mut each: impl FnMut(i64, [u32; N])) {
    let mut id = 0i64;
    'entries: while let Some(delta) = read_varint(&mut blob) {
        let mut values = [0u32; N];
        for v in &mut values {
            match read_varint(&mut blob) {
                Some(x) => *v = x.min(u64::from(u32::MAX)) as u32,
                None => break 'entries,
            }
        }
        id = id.wrapping_add(delta as i64);
        each(id, values);
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(blob: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &b) in blob.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *blob = &blob[i + 1..];
            return Some(v);
        }
    }
    None
}

/// One run's changes to a table of postings (`term`, `postings`), written by `finish`.
struct Postings<const N: usize> {
    table: &'static str,
    /// How many low bits of an id are not its file's (0: the ids are files').
    ordinal_bits: u32,
    /// A full build: no word is stored yet.
    full: bool,
    /// New postings by word, in the order files arrived (an incremental run).
    added: FxHashMap<String, Vec<Entry<N>>>,
    /// A full build's postings by word, encoded as they arrive.
    encoded: FxHashMap<Box<str>, Encoded>,
    /// Files whose postings leave, and the entries they held by word.
    gone_files: FxHashSet<i64>,
    gone: FxHashMap<String, Vec<Entry<N>>>,
}

/// One word's postings as `encode` writes them, built entry by entry: a full build adds
/// files in id order, so each entry is appended, in 6 to 10 bytes instead of the 16 of an
/// `Entry` (on the Linux kernel the entries held about a gigabyte).
#[derive(Default)]
struct Encoded {
    bytes: Vec<u8>,
    last: i64,
}

impl Encoded {
    fn push<const N: usize>(&mut self, id: i64, values: [u32; N]) {
        if self.bytes.is_empty() || id > self.last {
            varint((id - self.last) as u64, &mut self.bytes);
            for v in values {
                varint(u64::from(v), &mut self.bytes);
            }
        } else {
            // Out of order: sorted again, each id once (the lowest values), as `encode`
            // expects.
            let mut entries: Vec<Entry<N>> = Vec::new();
            decode(&self.bytes, |id, values| entries.push((id, values)));
            entries.push((id, values));
            entries.sort_unstable();
            entries.dedup_by_key(|p| p.0);
            self.bytes.clear();
            encode(&entries, &mut self.bytes);
        }
        self.last = self.last.max(id);
    }
}

impl<const N: usize> Postings<N> {
    fn new(table: &'static str, ordinal_bits: u32, full: bool) -> Self {
        Postings {
            table,
            ordinal_bits,
            full,
            added: FxHashMap::default(),
            encoded: FxHashMap::default(),
            gone_files: FxHashSet::default(),
            gone: FxHashMap::default(),
        }
    }

    fn add(&mut self, word: &str, entries: impl Iterator<Item = Entry<N>>) {
        if self.full {
            let list = match self.encoded.get_mut(word) {
                Some(list) => list,
                None => self.encoded.entry(word.into()).or_default(),
            };
            for (id, values) in entries {
                list.push(id, values);
            }
            return;
        }
        match self.added.get_mut(word) {
            Some(list) => list.extend(entries),
            None => {
                self.added.insert(word.to_string(), entries.collect());
            }
        }
    }

    /// Takes file `file`'s entries (as `add` was given them) out of the postings of `word`.
    fn remove(&mut self, file: i64, word: &str, entries: impl Iterator<Item = Entry<N>>) {
        match self.gone.get_mut(word) {
            Some(list) => list.extend(entries),
            None => {
                self.gone.insert(word.to_string(), entries.collect());
            }
        }
        self.gone_files.insert(file);
    }

    /// A full build's postings, to be written by `EncodedTable::write`.
    fn into_encoded(self) -> EncodedTable {
        debug_assert!(
            self.full,
            "only a full build encodes its lists as they arrive"
        );
        EncodedTable {
            table: self.table,
            encoded: self.encoded,
        }
    }

    /// Writes every changed word's postings.
    fn finish(self, conn: &Connection) -> Result<()> {
        let Postings {
            table,
            ordinal_bits,
            full,
            mut added,
            encoded,
            gone_files,
            gone,
        } = self;
        if full {
            return EncodedTable { table, encoded }.write(conn, &AtomicBool::new(false));
        }
        // A word whose entries leave and come back the same (a re-extracted file's words
        // that the edit did not touch, the usual case) keeps its stored postings as they are.
        for (word, mut left) in gone {
            left.sort_unstable();
            match added.get_mut(&word) {
                Some(came) => {
                    came.sort_unstable();
                    if *came == left {
                        added.remove(&word);
                    }
                }
                None => {
                    added.insert(word, Vec::new());
                }
            }
        }
        // Written in key order, the table grows by appending.
        let mut added: Vec<(String, Vec<Entry<N>>)> = added.into_iter().collect();
        added.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut read =
            conn.prepare_cached(&format!("SELECT postings FROM {table} WHERE term = ?1"))?;
        let mut write = conn.prepare_cached(&format!(
            "INSERT INTO {table}(term, postings) VALUES (?1, ?2) \
             ON CONFLICT(term) DO UPDATE SET postings = excluded.postings"
        ))?;
        let mut remove = conn.prepare_cached(&format!("DELETE FROM {table} WHERE term = ?1"))?;
        let mut blob = Vec::new();
        for (word, mut postings) in added {
            // Decoded where SQLite holds the blob: no copy of each stored list.
            read.query_row([&word], |r| {
                decode(r.get_ref(0)?.as_blob()?, |id, values| {
                    if !gone_files.contains(&(id >> ordinal_bits)) {
                        postings.push((id, values))
                    }
                });
                Ok(())
            })
            .optional()?;
            postings.sort_unstable();
            postings.dedup_by_key(|p| p.0);
            if postings.is_empty() {
                remove.execute([&word])?;
                continue;
            }
            blob.clear();
            encode(&postings, &mut blob);
            write.execute(params![word, blob])?;
        }
        Ok(())
    }
}

/// A full build's postings of one table, every list encoded as its entries arrived.
pub struct EncodedTable {
    table: &'static str,
    encoded: FxHashMap<Box<str>, Encoded>,
}

impl EncodedTable {
    pub fn table(&self) -> &'static str {
        self.table
    }

    /// Writes every word's postings into the table (empty: nothing is stored yet), in key
    /// order, so that the table grows by appending; stops early once `abandoned` is set.
    pub fn write(self, conn: &Connection, abandoned: &AtomicBool) -> Result<()> {
        let mut encoded: Vec<(Box<str>, Encoded)> = self.encoded.into_iter().collect();
        encoded.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rows = RowInserter::new(conn, self.table, ["term", "postings"]);
        for some in encoded.chunks(4096) {
            if abandoned.load(Ordering::Relaxed) {
                break;
            }
            rows.insert(some.iter(), |(word, list)| {
                [text(word), ValueRef::Blob(&list.bytes)]
            })?;
        }
        Ok(())
    }
}

/// The whole-file word index's changes of one run (`file_terms`, `file_words`).
pub struct FileWords(Postings<1>);

impl FileWords {
    pub fn new(full: bool) -> Self {
        FileWords(Postings::new("file_terms", 0, full))
    }

    /// Records a file's words (`text::file_words`).
    pub fn insert(
        &mut self,
        conn: &Connection,
        file: i64,
        total: u32,
        counts: &[(String, u32)],
    ) -> Result<()> {
        conn.prepare_cached("INSERT INTO file_words(file_id, words) VALUES (?1, ?2)")?
            .execute(params![file, total])?;
        for (word, n) in counts {
            self.0.add(word, std::iter::once((file, [*n])));
        }
        Ok(())
    }

    /// Takes a stored file out of the index, reading which words it held from its stored
    /// text. Call before the file's rows are deleted.
    pub fn delete(&mut self, conn: &Connection, file: i64) -> Result<()> {
        let stored: Option<(String, String)> = conn
            .prepare_cached(
                "SELECT f.path, c.content FROM file_words w JOIN files f ON f.id = w.file_id \
                 JOIN file_contents c ON c.file_id = w.file_id WHERE w.file_id = ?1",
            )?
            .query_row([file], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((path, content)) = stored else {
            return Ok(());
        };
        let (_, counts) = crate::text::file_words(&path, &content);
        for (word, n) in &counts {
            self.0.remove(file, word, std::iter::once((file, [*n])));
        }
        conn.prepare_cached("DELETE FROM file_words WHERE file_id = ?1")?
            .execute([file])?;
        Ok(())
    }

    pub fn finish(self, conn: &Connection) -> Result<()> {
        self.0.finish(conn)
    }

    /// A full build's postings (see `EncodedTable`).
    pub fn into_encoded(self) -> EncodedTable {
        self.0.into_encoded()
    }
}

/// The entries of one word's definitions in file `file` (ordinals and weighted counts, from
/// `found.postings`): each definition's id, its weighted count and its length.
fn definition_entries<'a>(
    file: i64,
    found: &'a crate::text::DefinitionWords,
    list: &'a [(u32, u32)],
) -> impl Iterator<Item = Entry<2>> + 'a {
    let base = file << ORDINAL_BITS;
    list.iter()
        .map(move |&(o, weight)| (base + i64::from(o), [weight, found.lengths[o as usize]]))
}

/// Meta keys of the definition word index's collection: how many definitions, and how many
/// words they hold in all.
const DEFINITIONS_KEY: &str = "definition_rows";
const DEFINITION_WORDS_KEY: &str = "definition_words";

/// The definition word index's changes of one run (`definition_terms`): for each word, the
/// definitions holding it with their weighted counts and lengths (`text::definition_words`).
pub struct DefinitionWords {
    postings: Postings<2>,
    /// Definitions and words added, less those that left.
    rows: i64,
    words: i64,
}

impl DefinitionWords {
    pub fn new(full: bool) -> Self {
        DefinitionWords {
            postings: Postings::new("definition_terms", ORDINAL_BITS, full),
            rows: 0,
            words: 0,
        }
    }

    /// Records the words of file `file`'s definitions.
    pub fn insert(&mut self, file: i64, found: &crate::text::DefinitionWords) {
        for (word, list) in &found.postings {
            self.postings
                .add(word, definition_entries(file, found, list));
        }
        self.rows += found.lengths.len() as i64;
        self.words += found.lengths.iter().map(|&n| i64::from(n)).sum::<i64>();
    }

    /// Takes a stored file's definitions out of the index, reading their words from their
    /// stored columns. Call before the file's nodes are deleted.
    pub fn delete(&mut self, conn: &Connection, file: i64) -> Result<()> {
        let (lo, hi) = crate::ids::node_range(file);
        let mut q = conn.prepare_cached(
            "SELECT name, qualified_name, name_tokens, coalesce(signature, ''), \
             coalesce(docstring, '') FROM nodes WHERE id >= ?1 AND id < ?2 ORDER BY id",
        )?;
        let columns = q
            .query_map([lo, hi], |r| {
                Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?])
            })?
            .collect::<rusqlite::Result<Vec<[String; 5]>>>()?;
        let found = crate::text::definition_words(columns.iter().map(stored_columns));
        self.rows -= found.lengths.len() as i64;
        self.words -= found.lengths.iter().map(|&n| i64::from(n)).sum::<i64>();
        for (word, list) in &found.postings {
            self.postings
                .remove(file, word, definition_entries(file, &found, list));
        }
        Ok(())
    }

    pub fn finish(self, conn: &Connection) -> Result<()> {
        let (rows, words) = if self.postings.full {
            (0, 0)
        } else {
            definition_collection(conn)?
        };
        let (rows, words) = (rows + self.rows, words + self.words);
        self.postings.finish(conn)?;
        store_collection(conn, rows, words)
    }

    /// A full build's postings (see `EncodedTable`); the collection's sizes are stored now.
    pub fn into_encoded(self, conn: &Connection) -> Result<EncodedTable> {
        store_collection(conn, self.rows, self.words)?;
        Ok(self.postings.into_encoded())
    }
}

/// Stores how many definitions the definition word index holds, and how many words.
fn store_collection(conn: &Connection, rows: i64, words: i64) -> Result<()> {
    super::set_meta(conn, DEFINITIONS_KEY, &rows.to_string())?;
    super::set_meta(conn, DEFINITION_WORDS_KEY, &words.to_string())
}

/// A definition's five text columns as the index reads them: the qualified name without the
/// `#k` that tells repeated names apart, which depends on other files.
pub fn stored_columns(c: &[String; 5]) -> [&str; 5] {
    [&c[0], base_name(&c[1]), &c[2], &c[3], &c[4]]
}

/// The definition word index's collection: how many definitions, how many words in all.
pub fn definition_collection(conn: &Connection) -> Result<(i64, i64)> {
    let get = |key| -> Result<i64> {
        Ok(super::get_meta(conn, key)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    };
    Ok((get(DEFINITIONS_KEY)?, get(DEFINITION_WORDS_KEY)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_round_trip() {
        let postings = [
            (3, [1]),
            (300, [7]),
            (1 << 43, [2]),
            ((1 << 44) - 1, [70_000]),
        ];
        let mut blob = Vec::new();
        encode(&postings, &mut blob);
        let mut back = Vec::new();
        decode(&blob, |f, n: [u32; 1]| back.push((f, n)));
        assert_eq!(back, postings);
        // Cut short: the whole pairs before the cut.
        let mut cut = Vec::new();
        decode(&blob[..blob.len() - 1], |f, n: [u32; 1]| cut.push((f, n)));
        assert_eq!(cut, postings[..3]);
    }

    /// A full build's lists, encoded as entries arrive, are the bytes `encode` makes of the
    /// entries sorted with each id once, in whatever order they came.
    #[test]
    fn lists_encoded_as_they_arrive_equal_the_sorted_encoding() {
        let arrivals: [&[Entry<2>]; 3] = [
            &[(5, [1, 2]), (9, [3, 4]), (1 << 40, [5, 6])],
            &[(9, [3, 4]), (5, [1, 2]), (7, [8, 8]), (5, [0, 9])],
            &[(0, [1, 1]), (0, [1, 0]), (3, [2, 2])],
        ];
        for entries in arrivals {
            let mut list = Encoded::default();
            for &(id, values) in entries {
                list.push(id, values);
            }
            let mut sorted = entries.to_vec();
            sorted.sort_unstable();
            sorted.dedup_by_key(|p| p.0);
            let mut want = Vec::new();
            encode(&sorted, &mut want);
            assert_eq!(list.bytes, want, "{entries:?}");
        }
    }

    /// A run that takes files' entries out and puts entries back: a word whose entries come
    /// back the same is left as stored, the others are rewritten, emptied ones removed.
    #[test]
    fn an_update_rewrites_only_the_words_whose_entries_changed() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t(term TEXT PRIMARY KEY, postings BLOB NOT NULL) WITHOUT ROWID",
        )
        .unwrap();
        let stored = |conn: &Connection| -> Vec<(String, Vec<Entry<1>>)> {
            let mut q = conn
                .prepare("SELECT term, postings FROM t ORDER BY term")
                .unwrap();
            q.query_map([], |r| {
                let mut list = Vec::new();
                decode(&r.get::<_, Vec<u8>>(1)?, |id, v| list.push((id, v)));
                Ok((r.get(0)?, list))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
        };
        let mut first = Postings::<1>::new("t", 0, true);
        for (word, file, n) in [
            ("same", 1, 2),
            ("same", 2, 1),
            ("edit", 1, 1),
            ("gone", 1, 4),
        ] {
            first.add(word, std::iter::once((file, [n])));
        }
        first.finish(&conn).unwrap();
        // File 1 re-extracted: "same" as before, "edit" counted twice, "gone" gone, "new" new.
        let mut run = Postings::<1>::new("t", 0, false);
        for (word, n) in [("same", 2), ("edit", 1), ("gone", 4)] {
            run.remove(1, word, std::iter::once((1, [n])));
        }
        for (word, n) in [("same", 2), ("edit", 2), ("new", 1)] {
            run.add(word, std::iter::once((1, [n])));
        }
        let before: i64 = conn
            .query_row("SELECT total_changes()", [], |r| r.get(0))
            .unwrap();
        run.finish(&conn).unwrap();
        let after: i64 = conn
            .query_row("SELECT total_changes()", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            after - before,
            3,
            "edit and new written, gone deleted, same untouched"
        );
        let want: Vec<(String, Vec<Entry<1>>)> = vec![
            ("edit".into(), vec![(1, [2])]),
            ("new".into(), vec![(1, [1])]),
            ("same".into(), vec![(1, [2]), (2, [1])]),
        ];
        assert_eq!(stored(&conn), want);
    }
}
