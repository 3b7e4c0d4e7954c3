//! Where a project's database lives: one file per project under
//! `$XDG_CACHE_HOME/codebase-indexer/` (default `~/.cache/codebase-indexer/`), named
//! `<project>-<hash of the root path>.db` so two repositories with the same folder name never
//! collide. Commands find the project of the current directory by walking up its ancestors.

use crate::error::Error;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub fn cache_dir() -> Result<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("codebase-indexer"));
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .context("neither XDG_CACHE_HOME nor HOME is set: pass --db PATH")?;
    Ok(PathBuf::from(home).join(".cache").join("codebase-indexer"))
}

/// Hex digest identifying a repository root (its canonical path).
fn root_key(root: &Path) -> String {
    let h = blake3::hash(root.to_string_lossy().as_bytes());
    h.to_hex()[..12].to_string()
}

/// A file-name-safe project name.
fn sanitize(name: &str) -> String {
    file_safe_name(name, "root")
}

/// `name` with every character but letters, digits, `-`, `_` and `.` replaced by `_`, and no
/// leading `.`; `fallback` when nothing is left.
pub fn file_safe_name(name: &str, fallback: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.');
    if s.is_empty() {
        fallback.to_string()
    } else {
        s.to_string()
    }
}

/// The database for indexing `root` (canonical): an existing one for this root if there is
/// one (whatever project name it was given), else a new name.
pub fn db_for_root(root: &Path, project: Option<&str>) -> Result<PathBuf> {
    let dir = cache_dir()?;
    let key = root_key(root);
    if let Some(name) = project {
        return Ok(dir.join(format!("{}-{key}.db", sanitize(name))));
    }
    if let Some(existing) = find_by_key(&dir, &key)? {
        return Ok(existing);
    }
    let base = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    Ok(dir.join(format!("{}-{key}.db", sanitize(&base))))
}

fn list_dbs(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "db"))
        .collect();
    out.sort();
    Ok(out)
}

fn find_by_key(dir: &Path, key: &str) -> Result<Option<PathBuf>> {
    let suffix = format!("-{key}.db");
    Ok(list_dbs(dir)?
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(&suffix)))
}

/// Where the state of the last whole-repository pack of the tree at `root` is kept (what
/// `pack --all --delta` compares with): in the cache folder, never in the repository.
pub fn pack_state_file(root: &Path) -> Result<PathBuf> {
    let base = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    Ok(cache_dir()?
        .join("packs")
        .join(format!("{}-{}.json", sanitize(&base), root_key(root))))
}

/// The database of the project named `name` (`--project`).
pub fn by_name(name: &str) -> Result<PathBuf> {
    let dir = cache_dir()?;
    let prefix = format!("{}-", sanitize(name));
    let matches: Vec<PathBuf> = list_dbs(&dir)?
        .into_iter()
        .filter(|p| {
            p.file_stem().is_some_and(|s| {
                let s = s.to_string_lossy();
                s.strip_prefix(&prefix).is_some_and(|rest| {
                    rest.len() == 12 && rest.bytes().all(|b| b.is_ascii_hexdigit())
                })
            })
        })
        .collect();
    match matches.len() {
        0 => Err(Error::NoIndex {
            message: format!(
                "no project named {name:?} in {}: index it with `indexer index PATH --project {name}`",
                dir.display()
            ),
        }
        .into()),
        1 => Ok(matches.into_iter().next().expect("one match")),
        _ => crate::error::invalid!(
            "several projects are named {name:?}: pass --db with one of {}",
            matches
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The database of the project whose root is `folder` or the nearest folder above it.
pub fn for_folder(folder: &Path) -> Result<PathBuf> {
    let dir = cache_dir()?;
    let folder = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    for dir_up in folder.ancestors() {
        if let Some(found) = find_by_key(&dir, &root_key(dir_up))? {
            return Ok(found);
        }
    }
    Err(Error::NoIndex {
        message: format!(
            "no index for {} or any folder above it: run `indexer index PATH` first, \
             or pass --project NAME or --db PATH",
            folder.display()
        ),
    }
    .into())
}
