//! The whole-file word index (`file_terms`, `file_words`): kept by the writer, read by
//! ranking. Postings are (file id, count) pairs sorted by file id, so a full build and an
//! incremental run that reach the same tree store the same bytes.

use anyhow::Result;
use rusqlite::{params, Connection, OptionalExtension};
use rustc_hash::FxHashMap;
use std::collections::HashSet;

/// Encodes postings sorted by file id (see migration 0008).
pub fn encode(postings: &[(i64, u32)], out: &mut Vec<u8>) {
    let mut previous = 0i64;
    for &(file, count) in postings {
        varint((file - previous) as u64, out);
        varint(u64::from(count), out);
        previous = file;
    }
}

/// Decodes what `encode` wrote; a damaged blob yields the pairs before the damage.
pub fn decode(mut blob: &[u8], mut each: impl FnMut(i64, u32)) {
    let mut file = 0i64;
    while let (Some(delta), Some(count)) = (read_varint(&mut blob), read_varint(&mut blob)) {
        file = file.wrapping_add(delta as i64);
        each(file, count.min(u64::from(u32::MAX)) as u32);
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

/// The word index's changes of one run, written by `finish`.
pub struct Pending {
    /// A full build: no word is stored yet.
    full: bool,
    /// New postings by word, in the order files arrived.
    added: FxHashMap<String, Vec<(i64, u32)>>,
    /// Files whose postings leave, and the words they held.
    gone_files: HashSet<i64>,
    gone_terms: HashSet<String>,
}

impl Pending {
    pub fn new(full: bool) -> Self {
        Pending {
            full,
            added: FxHashMap::default(),
            gone_files: HashSet::new(),
            gone_terms: HashSet::new(),
        }
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
            match self.added.get_mut(word.as_str()) {
                Some(list) => list.push((file, *n)),
                None => {
                    self.added.insert(word.clone(), vec![(file, *n)]);
                }
            }
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
        self.gone_terms.extend(counts.into_iter().map(|(w, _)| w));
        self.gone_files.insert(file);
        conn.prepare_cached("DELETE FROM file_words WHERE file_id = ?1")?
            .execute([file])?;
        Ok(())
    }

    /// Writes every changed word's postings.
    pub fn finish(self, conn: &Connection) -> Result<()> {
        let Pending {
            full,
            mut added,
            gone_files,
            gone_terms,
        } = self;
        for word in gone_terms {
            added.entry(word).or_default();
        }
        // Written in key order, the table grows by appending.
        let mut added: Vec<(String, Vec<(i64, u32)>)> = added.into_iter().collect();
        added.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut read = conn.prepare_cached("SELECT postings FROM file_terms WHERE term = ?1")?;
        let mut write = conn.prepare_cached(
            "INSERT INTO file_terms(term, postings) VALUES (?1, ?2) \
             ON CONFLICT(term) DO UPDATE SET postings = excluded.postings",
        )?;
        let mut remove = conn.prepare_cached("DELETE FROM file_terms WHERE term = ?1")?;
        let mut blob = Vec::new();
        for (word, mut postings) in added {
            let stored: Option<Vec<u8>> = if full {
                None
            } else {
                read.query_row([&word], |r| r.get(0)).optional()?
            };
            if let Some(stored) = stored {
                decode(&stored, |file, n| {
                    if !gone_files.contains(&file) {
                        postings.push((file, n))
                    }
                });
            }
            if !full || postings.windows(2).any(|w| w[0].0 >= w[1].0) {
                postings.sort_unstable();
                postings.dedup_by_key(|p| p.0);
            }
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

/// What BM25 needs of the whole collection: how many files, their mean length in words.
pub fn collection(conn: &Connection) -> Result<(u64, f64)> {
    Ok(conn.query_row(
        "SELECT count(*), coalesce(avg(words), 0) FROM file_words",
        [],
        |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_round_trip() {
        let postings = [(3, 1), (300, 7), (1 << 43, 2), ((1 << 44) - 1, 70_000)];
        let mut blob = Vec::new();
        encode(&postings, &mut blob);
        let mut back = Vec::new();
        decode(&blob, |f, n| back.push((f, n)));
        assert_eq!(back, postings);
        // Cut short: the whole pairs before the cut.
        let mut cut = Vec::new();
        decode(&blob[..blob.len() - 1], |f, n| cut.push((f, n)));
        assert_eq!(cut, postings[..3]);
    }
}
