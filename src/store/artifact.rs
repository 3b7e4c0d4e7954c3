//! The committed artifact: `.codebase-index/graph.db.zst`, a canonical copy of the database
//! compressed with zstd, with `artifact.json` describing it. Teams commit both beside the code,
//! so a fresh clone starts from the index instead of from zero.
//!
//! The copy holds nothing that depends on where or when the tree was indexed: no absolute
//! path, project name or modification time, every table written in key order into a new file,
//! the full-text index built in one pass. The same tree gives the same bytes, so the artifact
//! only changes in `git status` when the code did.

use crate::error::Error;
use crate::store::staging::{self, rename_into_place, temp_beside, write_atomically};
use crate::store::{self, Mode};
use anyhow::{bail, Context, Result};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder, under the repository root, holding the artifact.
pub const DIR: &str = ".codebase-index";
pub const FILE: &str = "graph.db.zst";
pub const MANIFEST: &str = "artifact.json";
/// Chosen by measurement (README, "Committed artifact"): most of the size gain of the
/// high levels at a fraction of their time.
pub const DEFAULT_LEVEL: i32 = 9;

/// `artifact.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: i32,
    pub indexer_version: String,
    /// blake3 over every indexed file's path and content hash: the source tree's identity.
    pub fingerprint: String,
    /// The resolution settings the edges were built with.
    pub resolution: String,
    pub files: i64,
    pub nodes: i64,
    pub edges: i64,
    pub unresolved: i64,
    pub database_bytes: u64,
    pub artifact_bytes: u64,
    pub compression_level: i32,
    /// `database_bytes / artifact_bytes`, two decimals.
    pub compression_ratio: f64,
}

/// Where a repository's artifact lives.
pub fn path_in(root: &Path) -> PathBuf {
    root.join(DIR).join(FILE)
}

pub fn check_level(level: i32) -> Result<()> {
    if !(1..=22).contains(&level) {
        crate::error::invalid!(
            "--compression-level {level} is out of range: use a value from 1 to 22"
        );
    }
    Ok(())
}

/// Writes the artifact of database `db` to `output` (a `.db.zst` path), with `artifact.json`
/// and a `.gitattributes` beside it. Returns `None` when the artifact already there describes
/// the same tree, settings and level (nothing is rewritten).
pub fn export(db: &Path, output: &Path, level: i32) -> Result<Option<Manifest>> {
    check_level(level)?;
    let dir = output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let manifest_path = dir.join(MANIFEST);
    let attributes_path = dir.join(".gitattributes");
    // Whatever a killed export left, before anything else: even an export with nothing to
    // write must not leave temporaries in a folder that gets committed.
    for written in [output, &manifest_path, &attributes_path] {
        staging::remove_stale(written);
    }
    // One export of a database at a time: the artifact and its manifest are renamed into
    // place one after the other, and two exports interleaving could pair one's manifest
    // with the other's artifact. A second export waits, then finds nothing left to do.
    let _lock = lock_exports(db)?;
    let (current, resolution) = {
        let conn = store::open(db, Mode::ReadOnly)?;
        let resolution = store::get_meta(&conn, "resolution")?.unwrap_or_default();
        (fingerprint(&conn)?, resolution)
    };
    if let Some(old) = read_manifest(&manifest_path) {
        let same = old.fingerprint == current
            && old.resolution == resolution
            && old.schema_version == store::SCHEMA_VERSION
            && old.indexer_version == env!("CARGO_PKG_VERSION")
            && old.compression_level == level;
        if same && output.exists() {
            return Ok(None);
        }
    }

    let copy = temp_beside(output, "db");
    let result = (|| {
        canonical_copy(db, &copy)?;
        let conn = store::open(&copy, Mode::ReadOnly)?;
        // From the copy, not from the database read above: an index run may have committed
        // in between, and the manifest must describe the bytes it sits beside.
        let fingerprint = fingerprint(&conn)?;
        let resolution = store::get_meta(&conn, "resolution")?.unwrap_or_default();
        let count = |table: &str| -> Result<i64> {
            Ok(conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?)
        };
        let (files, nodes, edges, unresolved) = (
            count("files")?,
            count("nodes")?,
            count("edges")?,
            count("unresolved")?,
        );
        drop(conn);
        let database_bytes = std::fs::metadata(&copy)?.len();
        let packed = temp_beside(output, "zst");
        compress(&copy, &packed, level).inspect_err(|_| {
            let _ = std::fs::remove_file(&packed);
        })?;
        let _ = std::fs::remove_file(&copy);
        let artifact_bytes = std::fs::metadata(&packed)?.len();
        let manifest = Manifest {
            schema_version: store::SCHEMA_VERSION,
            indexer_version: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint,
            resolution,
            files,
            nodes,
            edges,
            unresolved,
            database_bytes,
            artifact_bytes,
            compression_level: level,
            compression_ratio: (database_bytes as f64 / artifact_bytes.max(1) as f64 * 100.0)
                .round()
                / 100.0,
        };
        let mut json = serde_json::to_string_pretty(&manifest)?;
        json.push('\n');
        // The manifest goes last: one that matches the tree means the export is complete
        // (a later export with nothing to do writes nothing).
        let name = output
            .file_name()
            .map_or(FILE.into(), |n| n.to_string_lossy());
        write_atomically(
            &attributes_path,
            format!("{name} binary merge=ours\n").as_bytes(),
        )?;
        rename_into_place(&packed, output)?;
        write_atomically(&manifest_path, json.as_bytes())?;
        Ok(manifest)
    })();
    let _ = std::fs::remove_file(&copy);
    let _ = std::fs::remove_file(failure_path(db));
    result.map(Some)
}

fn export_lock_path(db: &Path) -> PathBuf {
    store::with_suffix(db, ".export.lock")
}

/// `None` when the lock file cannot be created (a database in a read-only folder): nothing
/// else can write beside that database either.
fn lock_exports(db: &Path) -> Result<Option<std::fs::File>> {
    let path = export_lock_path(db);
    let Ok(file) = store::open_lock_file(&path) else {
        return Ok(None);
    };
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(Some(file))
}

/// Whether an export of database `db` is running now (in this process or another).
fn export_running(db: &Path) -> bool {
    let Ok(file) = std::fs::OpenOptions::new()
        .write(true)
        .open(export_lock_path(db))
    else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Where the reason a deferred export of `db` failed is kept until one succeeds: nobody
/// sees a detached process's errors, so `status` shows this instead.
fn failure_path(db: &Path) -> PathBuf {
    store::with_suffix(db, ".export-failure")
}

/// Records why an export of `db` nobody waited for failed.
pub fn record_failure(db: &Path, reason: &str) {
    let _ = write_atomically(&failure_path(db), reason.as_bytes());
}

/// Why the last export of `db` nobody waited for failed, if it did and none has succeeded.
fn last_failure(db: &Path) -> Option<String> {
    std::fs::read_to_string(failure_path(db)).ok()
}

/// Decompresses artifact `artifact` into a new database at `dest` (replacing nothing until it
/// is complete and checked): an artifact that is not ours, corrupt, truncated or from another
/// schema is refused with the reason.
pub fn decompress(artifact: &Path, dest: &Path) -> Result<()> {
    let temp = temp_beside(dest, "db");
    let result = (|| {
        let packed = std::fs::File::open(artifact)
            .with_context(|| format!("cannot read {}", artifact.display()))?;
        let output = std::fs::File::create(&temp)
            .with_context(|| format!("cannot write {}", temp.display()))?;
        // Each frame's checksum proves its bytes are the ones exported.
        decode_frames(&packed, &output).with_context(|| {
            format!(
                "{} is corrupt or truncated (not a valid zstd stream)",
                artifact.display()
            )
        })?;
        check_database(&temp).map_err(|e| anyhow::anyhow!("{}: {e}", artifact.display()))?;
        rename_into_place(&temp, dest)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Whether `db` is an index database of this schema; the reason if not. Its bytes are
/// intact: the zstd frame's checksum matched.
fn check_database(db: &Path) -> std::result::Result<(), String> {
    // Frames end cleanly at a frame boundary: only the length the header promises tells
    // that some are missing.
    let (len, expected) =
        expected_length(db).map_err(|e| format!("holds no index database ({e})"))?;
    if len != expected {
        return Err(format!(
            "is truncated: {len} bytes of a {expected}-byte database"
        ));
    }
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("holds no index database ({e})"))?;
    let header = |pragma: &str| -> std::result::Result<i32, String> {
        conn.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
            .map_err(|e| format!("holds no index database ({e})"))
    };
    if header("application_id")? != store::APPLICATION_ID {
        return Err("holds no index database (a foreign SQLite file)".into());
    }
    let version = header("user_version")?;
    if version != store::SCHEMA_VERSION {
        let which = if version > store::SCHEMA_VERSION {
            "a newer"
        } else {
            "an older"
        };
        return Err(format!(
            "written by {which} indexer (schema {version}; this one reads {})",
            store::SCHEMA_VERSION
        ));
    }
    Ok(())
}

/// A SQLite file's length and the length its header gives (page size times page count).
fn expected_length(db: &Path) -> std::io::Result<(u64, u64)> {
    use std::io::Read;
    let mut f = std::fs::File::open(db)?;
    let len = f.metadata()?.len();
    let mut header = [0u8; 100];
    f.read_exact(&mut header)?;
    if &header[..16] != b"SQLite format 3\0" {
        return Err(std::io::Error::other("not a SQLite file"));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    Ok((len, page_size * pages))
}

/// Reads `artifact.json`, if there is a valid one.
/// How the artifact in a tree stands against the index of that tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Freshness {
    /// No artifact in the tree; `failed` says why the last export nobody waited for (the
    /// one `indexer index` starts in the background) did not write it.
    Absent {
        path: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
    },
    /// None in the tree yet: an export is writing it now.
    Writing { path: String },
    /// It holds exactly the indexed files, built with the same settings and version.
    Current { path: String },
    /// It describes another state of the tree: `files` differ from the index's (changed,
    /// added or removed), or the same files with other resolution settings or version.
    Stale {
        path: String,
        files: usize,
        settings_differ: bool,
    },
    /// It cannot be read: corrupt, not ours, or of another schema.
    Unreadable { path: String, reason: String },
}

/// The artifact's database, read from a private temporary copy: two opens in one process
/// never share a file, and the copy's name is gone once it is open (its pages stay readable
/// until the connection closes).
pub fn open_copy(artifact: &Path) -> Result<Connection> {
    let temp = tempfile::Builder::new()
        .prefix("indexer-")
        .suffix(".db")
        .tempfile()
        .map_err(Error::io(
            &std::env::temp_dir(),
            "cannot create a temporary file for the artifact",
        ))?;
    decompress(artifact, temp.path())?;
    store::open(temp.path(), Mode::ReadOnly)
}

/// Compares the artifact in the tree at `root` with the index open on `conn` (database
/// `db`). The manifest answers "current" from its fingerprint alone; otherwise the artifact
/// is decompressed to count the files that differ.
pub fn freshness(conn: &Connection, db: &Path, root: &Path) -> Freshness {
    let artifact = path_in(root);
    let path = format!("{DIR}/{FILE}");
    if !artifact.exists() {
        if export_running(db) {
            return Freshness::Writing { path };
        }
        return Freshness::Absent {
            path,
            failed: last_failure(db),
        };
    }
    let compared = (|| -> Result<Freshness> {
        let resolution = store::get_meta(conn, "resolution")?.unwrap_or_default();
        let manifest = read_manifest(&root.join(DIR).join(MANIFEST));
        let settings_differ = manifest.as_ref().is_none_or(|m| {
            m.resolution != resolution
                || m.schema_version != store::SCHEMA_VERSION
                || m.indexer_version != env!("CARGO_PKG_VERSION")
        });
        let same_files = match &manifest {
            Some(m) => m.fingerprint == fingerprint(conn)?,
            None => false,
        };
        if same_files && !settings_differ {
            return Ok(Freshness::Current { path: path.clone() });
        }
        let theirs = open_copy(&artifact)?;
        let files = |c: &Connection| -> Result<std::collections::HashMap<String, String>> {
            let mut q = c.prepare("SELECT path, hash FROM files")?;
            let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let (ours, theirs) = (files(conn)?, files(&theirs)?);
        let differ = ours
            .iter()
            .filter(|(p, h)| theirs.get(*p) != Some(*h))
            .count()
            + theirs.keys().filter(|p| !ours.contains_key(*p)).count();
        Ok(Freshness::Stale {
            path: path.clone(),
            files: differ,
            settings_differ,
        })
    })();
    compared.unwrap_or_else(|e| Freshness::Unreadable {
        path,
        reason: format!("{e:#}"),
    })
}

pub fn read_manifest(path: &Path) -> Option<Manifest> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Every file's path and content hash, in path order, hashed.
pub(crate) fn fingerprint(conn: &Connection) -> Result<String> {
    let mut h = blake3::Hasher::new();
    let mut q = conn.prepare("SELECT path, hash FROM files ORDER BY path")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        h.update(r.get_ref(0)?.as_bytes()?);
        h.update(b"\0");
        h.update(r.get_ref(1)?.as_bytes()?);
        h.update(b"\n");
    }
    Ok(h.finalize().to_hex().to_string())
}

/// A new database at `dest` with `src`'s rows in key order, without what depends on the
/// machine or the moment: the root path, the project name and modification times.
fn canonical_copy(src: &Path, dest: &Path) -> Result<()> {
    let _ = std::fs::remove_file(dest);
    let mut conn = store::create(dest, Mode::Bulk)?;
    let deferred = store::defer_indexes(&conn)?;
    // The bulk connection's exclusive locking mode would extend to the attached source, whose
    // attachment then waits for every other connection to it to close: "database is locked"
    // while any query runs. The source is attached in normal mode, the copy stays exclusive.
    conn.execute_batch("PRAGMA locking_mode = NORMAL")?;
    store::attach_read_only(&conn, src, "src")?;
    conn.execute_batch("PRAGMA main.locking_mode = EXCLUSIVE")?;
    let tx = conn.transaction()?;
    tx.execute_batch(
        "INSERT INTO meta SELECT key, value FROM src.meta \
             WHERE key NOT IN ('root', 'project') ORDER BY key;
         INSERT INTO files(id, path, language, size, mtime_ns, hash, lines, flags, module) \
             SELECT id, path, language, size, 0, hash, lines, flags, module FROM src.files \
             ORDER BY id;
         INSERT INTO file_contents(file_id, content) \
             SELECT file_id, content FROM src.file_contents ORDER BY file_id;
         INSERT INTO file_words(file_id, words) \
             SELECT file_id, words FROM src.file_words ORDER BY file_id;
         INSERT INTO file_terms(term, postings) \
             SELECT term, postings FROM src.file_terms ORDER BY term;
         INSERT INTO definition_terms(term, postings) \
             SELECT term, postings FROM src.definition_terms ORDER BY term;
         INSERT INTO redactions(file_id, line, kind) \
             SELECT file_id, line, kind FROM src.redactions ORDER BY file_id, line, kind;
         INSERT INTO nodes(id, file_id, kind, name, qualified_name, parent_id, signature, \
                           docstring, start_line, end_line, start_byte, end_byte, name_tokens) \
             SELECT id, file_id, kind, name, qualified_name, parent_id, signature, docstring, \
                    start_line, end_line, start_byte, end_byte, name_tokens \
             FROM src.nodes ORDER BY id;
         INSERT INTO refs(node_id, seq, kind, name, module, alias, line) \
             SELECT node_id, seq, kind, name, module, alias, line FROM src.refs \
             ORDER BY node_id, seq;
         INSERT INTO edges(source_id, target_id, kind, confidence, strategy, line) \
             SELECT source_id, target_id, kind, confidence, strategy, line FROM src.edges \
             ORDER BY source_id, target_id, kind, line, strategy, confidence;
         INSERT INTO unresolved(source_id, kind, name, key, reason, candidates, line) \
             SELECT source_id, kind, name, key, reason, candidates, line FROM src.unresolved \
             ORDER BY source_id, line, name, kind, reason, candidates, key;",
    )?;
    tx.commit()?;
    conn.execute_batch("DETACH DATABASE src")?;
    store::restore_indexes(&conn, &deferred, |_| true)?;
    store::restore_triggers(&conn, &deferred)?;
    store::rebuild_full_text(&conn)?;
    // A plain rollback-journal file: the stock shell opens it without companions.
    conn.execute_batch("PRAGMA locking_mode = NORMAL; PRAGMA journal_mode = DELETE;")?;
    Ok(())
}

/// The database is compressed as independent frames of `FRAME_BYTES` each, so both ends
/// work on all cores; concatenated frames are one ordinary zstd stream (`zstd -d` reads it).
const FRAME_BYTES: usize = 8 << 20;

/// Frames are written in pieces of this size: measured on Linux, decoding an artifact whose
/// 8 MiB frames went to the file in one write each spent three times as long in the kernel.
const WRITE_BYTES: usize = 128 << 10;

fn compress(src: &Path, dest: &Path, level: i32) -> Result<()> {
    let input =
        std::fs::File::open(src).with_context(|| format!("cannot read {}", src.display()))?;
    let len = input.metadata()?.len();
    let mut output = std::io::BufWriter::new(
        std::fs::File::create(dest).with_context(|| format!("cannot write {}", dest.display()))?,
    );
    // Read a frame's worth at a time: the database is never held whole in memory.
    let starts: Vec<u64> = (0..len).step_by(FRAME_BYTES).collect();
    in_waves(
        &starts,
        |&start| {
            let mut chunk = vec![0; (len - start).min(FRAME_BYTES as u64) as usize];
            read_at(&input, &mut chunk, start)?;
            compress_frame(&chunk, level)
        },
        |frame| {
            frame
                .chunks(WRITE_BYTES)
                .try_for_each(|piece| output.write_all(piece))
        },
    )?;
    output
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    Ok(())
}

/// One frame with its content size and a checksum: a reader tells a damaged artifact from a
/// good one without reading the database.
fn compress_frame(chunk: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    c.compress(chunk)
}

/// Decompresses the concatenated frames of `packed` into `output`. Each frame's header gives
/// its size, so every frame has a known place in the file: the cores read, decode and write
/// frames side by side, each into buffers it reuses. Frames are read as they are decoded, not
/// the whole artifact first: the first is decoding while the rest is still being read, and the
/// memory read into is a few frames' worth, touched once. A stream with a frame `export` does
/// not write (one without its size, or larger) is decoded again in order.
fn decode_frames(packed: &std::fs::File, output: &std::fs::File) -> Result<()> {
    let frames = FrameReader::new(packed)?;
    if frames.len == 0 {
        bail!("it is empty");
    }
    // The cores decode; this thread alone writes (concurrent writers to one file only take
    // turns on its lock). A few buffers circulate between them, so memory stays a few frames.
    let reader = std::sync::Mutex::new(frames);
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (decoded_tx, decoded) = std::sync::mpsc::sync_channel::<(Vec<u8>, u64)>(jobs);
    let (free_tx, free) = std::sync::mpsc::channel::<Vec<u8>>();
    for _ in 0..=jobs {
        free_tx.send(Vec::new()).expect("the pool is open");
    }
    let free = std::sync::Mutex::new(free);
    let not_exported = std::thread::scope(|scope| -> Result<bool> {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                let decoded_tx = decoded_tx.clone();
                let (reader, free) = (&reader, &free);
                scope.spawn(move || -> Result<bool> {
                    let mut decoder = zstd::bulk::Decompressor::new()?;
                    let mut frame = Vec::new();
                    loop {
                        let next = reader.lock().expect("frame reader").next(&mut frame)?;
                        let (at, size) = match next {
                            Next::Frame { at, size } => (at, size),
                            Next::End => return Ok(false),
                            Next::NotExported => return Ok(true),
                        };
                        let Ok(mut buffer) = free.lock().expect("pool lock").recv() else {
                            return Ok(false); // the writer stopped: its error is reported
                        };
                        buffer.clear();
                        buffer.reserve(size);
                        decoder.decompress_to_buffer(&frame[..], &mut buffer)?;
                        if buffer.len() != size {
                            bail!("a frame holds other than the size its header gives");
                        }
                        if decoded_tx.send((buffer, at)).is_err() {
                            return Ok(false);
                        }
                    }
                })
            })
            .collect();
        drop(decoded_tx);
        let written = (|| -> Result<()> {
            for (buffer, at) in &decoded {
                for (k, piece) in buffer.chunks(WRITE_BYTES).enumerate() {
                    write_at(output, piece, at + (k * WRITE_BYTES) as u64)?;
                }
                let _ = free_tx.send(buffer);
            }
            Ok(())
        })();
        // A failed write ends the pool: workers waiting on it stop.
        drop(free_tx);
        drop(decoded);
        let mut not_exported = false;
        for w in workers {
            not_exported |= w.join().expect("zstd thread panicked")?;
        }
        written?;
        Ok(not_exported)
    })?;
    if not_exported {
        // A frame no export writes (a stream compressed some other way): decoded in order,
        // from the start.
        output.set_len(0)?;
        return decode_in_order(packed, output);
    }
    Ok(())
}

/// Decompresses `packed`, whatever its frames, into `output` in one pass.
fn decode_in_order(packed: &std::fs::File, output: &std::fs::File) -> Result<()> {
    let mut out = std::io::BufWriter::new(output);
    std::io::Seek::rewind(&mut out)?;
    let mut input = std::io::BufReader::new(packed);
    std::io::Seek::rewind(&mut input)?;
    zstd::stream::copy_decode(input, &mut out)?;
    out.flush()?;
    Ok(())
}

/// What `FrameReader::next` found.
enum Next {
    /// A whole frame, to be decoded into the database's bytes from `at` on, `size` of them.
    Frame {
        at: u64,
        size: usize,
    },
    End,
    /// A frame without its size, or larger than `export` writes, or no zstd frame at all.
    NotExported,
}

/// Reads an artifact's frames one after the other, each into a buffer of the caller's.
struct FrameReader<'f> {
    file: &'f std::fs::File,
    len: u64,
    /// Where the next read starts.
    offset: u64,
    /// Bytes read past the end of the last frame handed out: the start of the next one.
    carry: Vec<u8>,
    /// Where the next frame's content goes in the database.
    at: u64,
    /// A frame no export writes was found: the frames are decoded in order instead.
    not_exported: bool,
}

/// Bytes read at a time: a frame of 8 MiB of database compresses to some 2 MiB.
const READ_BYTES: usize = 1 << 20;
/// The longest header a zstd frame has.
const FRAME_HEADER_BYTES: usize = 18;

impl<'f> FrameReader<'f> {
    fn new(file: &'f std::fs::File) -> Result<Self> {
        Ok(FrameReader {
            file,
            len: file.metadata()?.len(),
            offset: 0,
            carry: Vec::new(),
            at: 0,
            not_exported: false,
        })
    }

    /// The next whole frame, read into `frame`.
    fn next(&mut self, frame: &mut Vec<u8>) -> Result<Next> {
        if self.not_exported {
            return Ok(Next::NotExported);
        }
        frame.clear();
        frame.append(&mut self.carry);
        // Its header tells whether the frame is one `export` writes (its size known, at most
        // a frame's), before the rest of it is read.
        self.fill(frame, FRAME_HEADER_BYTES)?;
        if frame.is_empty() {
            return Ok(Next::End);
        }
        let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(frame)
            .map(|s| s.filter(|&s| s <= FRAME_BYTES as u64))
        else {
            self.not_exported = true;
            return Ok(Next::NotExported);
        };
        loop {
            if let Ok(len) = zstd::zstd_safe::find_frame_compressed_size(frame) {
                self.carry.extend_from_slice(&frame[len..]);
                frame.truncate(len);
                let at = self.at;
                self.at += size;
                return Ok(Next::Frame {
                    at,
                    size: size as usize,
                });
            }
            // A frame of `FRAME_BYTES` compresses to fewer bytes than that, whatever they are.
            if self.offset == self.len || frame.len() > 2 * FRAME_BYTES {
                bail!("a frame is cut short");
            }
            let have = frame.len();
            self.fill(frame, have + READ_BYTES)?;
        }
    }

    /// Reads on until `into` holds `want` bytes or the file ends.
    fn fill(&mut self, into: &mut Vec<u8>, want: usize) -> Result<()> {
        let more = (want.saturating_sub(into.len()) as u64).min(self.len - self.offset);
        let start = into.len();
        into.resize(start + more as usize, 0);
        read_at(self.file, &mut into[start..], self.offset)?;
        self.offset += more;
        Ok(())
    }
}

fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut buf) = (0, buf);
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset + done)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            buf = &mut buf[n..];
            done += n as u64;
        }
        Ok(())
    }
}

fn write_at(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut buf) = (0, buf);
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_write(file, buf, offset + done)?;
            buf = &buf[n..];
            done += n as u64;
        }
        Ok(())
    }
}

/// Runs `work` on the items, one thread per core at a time, and hands each result to `sink`
/// in the items' order: at most a core's worth of results is held at once.
fn in_waves<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> std::io::Result<R> + Sync,
    mut sink: impl FnMut(R) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    for wave in items.chunks(jobs) {
        let results = std::thread::scope(|scope| {
            let handles: Vec<_> = wave.iter().map(|item| scope.spawn(|| work(item))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("zstd thread panicked"))
                .collect::<std::io::Result<Vec<R>>>()
        })?;
        for r in results {
            sink(r)?;
        }
    }
    Ok(())
}

/// Installs `artifact` as the database `db` of the tree at `root` (project `project`),
/// replacing the one there in one rename once it is complete; under the write lock, so no
/// run of `index` races it.
pub fn import(artifact: &Path, root: &Path, db: &Path, project: &str) -> Result<()> {
    let _lock = store::lock_for_writing(db)?;
    staging::remove_stale(db);
    let staged = staging::temp_beside(db, "db");
    decompress(artifact, &staged)?;
    check_describes(&staged, root, |p| root.join(p).exists())?;
    let installed = (|| {
        let conn = store::open(&staged, Mode::ReadWrite)?;
        store::set_meta(&conn, "root", &root.to_string_lossy())?;
        store::set_meta(&conn, "project", project)?;
        conn.execute_batch("PRAGMA journal_mode = DELETE")?;
        drop(conn);
        store::install(&staged, db)
    })();
    if installed.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    installed
}

/// Refuses the artifact decompressed into `staged` (and removes it) unless it describes the
/// tree at `root`: `present` says whether the tree holds a path the index lists. An
/// artifact from another project shares (almost) none of its files.
pub fn check_describes(staged: &Path, root: &Path, present: impl Fn(&str) -> bool) -> Result<()> {
    let share = (|| -> Result<f64> {
        let conn = store::open(staged, Mode::ReadOnly)?;
        let mut q = conn.prepare("SELECT path FROM files")?;
        let mut rows = q.query([])?;
        let (mut total, mut found) = (0usize, 0usize);
        while let Some(r) = rows.next()? {
            total += 1;
            found += usize::from(present(r.get_ref(0)?.as_str()?));
        }
        Ok(if total == 0 {
            0.0
        } else {
            found as f64 / total as f64
        })
    })();
    let checked = share.and_then(|share| {
        if share < MIN_SHARE_PRESENT {
            bail!(
                "it describes another project: only {:.0}% of its files exist under {}",
                share * 100.0,
                root.display()
            );
        }
        Ok(())
    });
    if checked.is_err() {
        let _ = std::fs::remove_file(staged);
    }
    checked
}

/// Below this share of its files present in the tree, an artifact is another project's.
const MIN_SHARE_PRESENT: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that compress somewhat, as a database does: runs of a counter among noise.
    fn database_like(len: usize) -> Vec<u8> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        (0..len)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if (i / 4096) % 3 == 0 {
                    state as u8
                } else {
                    (i / 64) as u8
                }
            })
            .collect()
    }

    fn decoded(packed: &[u8]) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("in.zst"), dir.path().join("out.db"));
        std::fs::write(&input, packed).unwrap();
        let out = std::fs::File::create(&output).unwrap();
        decode_frames(&std::fs::File::open(&input).unwrap(), &out).unwrap();
        std::fs::read(&output).unwrap()
    }

    #[test]
    fn frames_read_piece_by_piece_decode_to_the_exported_bytes() {
        let dir = tempfile::tempdir().unwrap();
        // Three frames, the last short; the noise makes frames of several read pieces each.
        let db = database_like(2 * FRAME_BYTES + 12_345);
        let (src, packed) = (dir.path().join("g.db"), dir.path().join("g.db.zst"));
        std::fs::write(&src, &db).unwrap();
        compress(&src, &packed, 1).unwrap();
        let packed = std::fs::read(&packed).unwrap();
        assert!(packed.len() > 2 * READ_BYTES, "frames span several reads");
        assert!(decoded(&packed) == db);
    }

    #[test]
    fn streams_not_written_by_export_are_decoded_in_order() {
        let db = database_like(FRAME_BYTES + 4096);
        // No frame size in the header; one frame larger than an export's.
        let unsized_frame = zstd::encode_all(&db[..], 1).unwrap();
        let large_frame = zstd::bulk::compress(&db, 1).unwrap();
        // An exported frame, then one without its size.
        let mut mixed = zstd::bulk::compress(&db[..4096], 1).unwrap();
        mixed.extend(zstd::encode_all(&db[4096..], 1).unwrap());
        for packed in [unsized_frame, large_frame, mixed] {
            assert!(decoded(&packed) == db);
        }
    }
}
