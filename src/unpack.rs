//! Restores the files a whole-repository pack (JSON, `codebase-indexer/repo-pack/1`) holds in
//! full into a folder: every file checked against its SHA-256, nothing written outside the
//! folder (no absolute path, no `..`, no symbolic link on the way), no existing file
//! replaced unless asked, and what cannot be restored (a skeleton, a redacted or lossy text)
//! named with the reason. Files the pack only names in its tree are not restored, and the
//! files a delta pack lists as deleted are named, not removed.

use crate::context::repopack::{sha256_hex, Layer, RepoFile, SCHEMA};
use crate::error::Error;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

#[derive(Deserialize)]
struct PackDocument {
    schema: String,
    files: Vec<RepoFile>,
    #[serde(default)]
    deleted_since_last_pack: Vec<String>,
}

/// The most a gzipped pack may inflate to.
const MAX_UNZIPPED: u64 = 4 << 30;

/// What `unpack` did, file by file.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Unpacked {
    pub written: Vec<String>,
    /// Written, but their text is not what the pack's SHA-256 says.
    pub mismatched: Vec<String>,
    /// Not written: (path, why).
    pub refused: Vec<(String, String)>,
    /// A delta pack's deleted paths: named, never removed.
    pub deleted_since_last_pack: Vec<String>,
}

/// Restores the files of the pack `pack` (JSON, or JSON gzipped) into `dir` (made if
/// missing).
pub fn unpack(pack: &[u8], dir: &Path, force: bool) -> Result<Unpacked> {
    let mut unzipped = Vec::new();
    let json = if pack.starts_with(&[0x1f, 0x8b]) {
        // A hostile file may inflate without end: read one byte past the bound to know.
        let mut reader = std::io::Read::take(flate2::read::GzDecoder::new(pack), MAX_UNZIPPED + 1);
        std::io::Read::read_to_end(&mut reader, &mut unzipped)
            .map_err(|e| Error::invalid(format!("the gzipped pack is corrupt ({e})")))?;
        if unzipped.len() as u64 > MAX_UNZIPPED {
            return Err(Error::invalid(format!(
                "the gzipped pack inflates past {} GiB, more than any pack this tool writes",
                MAX_UNZIPPED >> 30
            ))
            .into());
        }
        &unzipped[..]
    } else {
        pack
    };
    let doc: PackDocument = serde_json::from_slice(json).map_err(|e| {
        Error::invalid(format!(
            "not a whole-repository pack in JSON ({e}): unpack reads what `indexer pack --all --format json` writes"
        ))
    })?;
    if doc.schema != SCHEMA {
        return Err(Error::invalid(format!(
            "the pack's schema is {:?}; this version reads {SCHEMA:?}",
            doc.schema
        ))
        .into());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let full: HashMap<&str, &RepoFile> = doc
        .files
        .iter()
        .filter(|f| f.layer == Layer::Full && f.content.is_some())
        .map(|f| (f.path.as_str(), f))
        .collect();
    let mut out = Unpacked {
        deleted_since_last_pack: doc.deleted_since_last_pack.clone(),
        ..Unpacked::default()
    };
    for f in &doc.files {
        // A copy takes its carrier's text and is checked against its own hash.
        let source = match &f.duplicate_of {
            Some(carrier) => match full.get(carrier.as_str()) {
                Some(c) => c,
                None => {
                    out.refused.push((
                        f.path.clone(),
                        format!("a copy of {carrier}, which the pack does not hold in full"),
                    ));
                    continue;
                }
            },
            None => f,
        };
        if let Some(why) = not_restorable(source) {
            out.refused.push((f.path.clone(), why));
            continue;
        }
        let target = match place(dir, &f.path, force) {
            Ok(t) => t,
            Err(why) => {
                out.refused.push((f.path.clone(), why));
                continue;
            }
        };
        let content = source.content.as_deref().unwrap_or_default();
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        crate::store::staging::write_atomically(&target, content.as_bytes())
            .with_context(|| format!("cannot write {}", target.display()))?;
        if sha256_hex(content.as_bytes()) != f.sha256 {
            out.mismatched.push(f.path.clone());
        }
        out.written.push(f.path.clone());
    }
    Ok(out)
}

/// Why a file's text in the pack is not the file, if it is not.
fn not_restorable(f: &RepoFile) -> Option<String> {
    match f.layer {
        Layer::Skeleton => return Some("only its skeleton is packed, not its text".into()),
        Layer::Metadata => return Some("only its metadata is packed, not its text".into()),
        Layer::Full => {}
    }
    if f.redacted {
        return Some("secrets were redacted from its text".into());
    }
    if f.lossy {
        return Some("bytes that were not UTF-8 were replaced in its text".into());
    }
    if f.content.is_none() {
        return Some("its content is missing".into());
    }
    None
}

/// Where `path` goes under `dir`, or why it may not: it must be relative and stay inside
/// `dir` with no symbolic link on the way, and an existing file is kept unless `force`.
fn place(dir: &Path, path: &str, force: bool) -> std::result::Result<PathBuf, String> {
    let rel = Path::new(path);
    if path.is_empty() || path.contains('\0') {
        return Err("not a path".into());
    }
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err("the path leaves the folder (absolute, or with `..` or `.`)".into());
    }
    let mut at = dir.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link in the folder",
                    at.strip_prefix(dir).unwrap_or(&at).display()
                ))
            }
            Ok(m) if i + 1 < parts.len() && !m.is_dir() => {
                return Err(format!(
                    "{} is a file, not a folder",
                    at.strip_prefix(dir).unwrap_or(&at).display()
                ))
            }
            Ok(m) if i + 1 == parts.len() && (m.is_dir() || !force) => {
                return Err(if m.is_dir() {
                    "a folder is in the way".into()
                } else {
                    "exists (pass --force to replace it)".into()
                })
            }
            _ => {}
        }
    }
    Ok(at)
}
