//! What git already knows about a work tree's files: the blob id of every tracked file whose
//! content in the work tree is the one in git's index. A fresh clone starting from its
//! committed artifact compares these ids with the artifact's instead of reading every file.
//!
//! Outside a git work tree, or without a working `git`, there is nothing to vouch for and
//! files are read and hashed as usual.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// The git blob id of `bytes`: SHA-1 of `blob <length>\0` and the bytes, in hex. Equal to
/// what `git hash-object` prints for a file without filters.
pub fn blob_id(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    format!("{:x}", h.finalize())
}

/// Tracked regular files under `root` (paths relative to it, `/`-separated) that git
/// considers unmodified in the work tree, with their blob ids. `None` when `root` is not in
/// a git work tree or git cannot be run.
///
/// An id is only a claim about the bytes git would store: a file checked out through a
/// filter (line-ending conversion, LFS) has other bytes than its blob. Callers compare the
/// size on disk too, and read the file when either differs.
pub fn unmodified_blobs(root: &Path) -> Option<HashMap<String, String>> {
    // Both list paths relative to `root`, NUL-terminated and unquoted.
    let staged = run(root, &["ls-files", "--stage", "-z"])?;
    // Files whose stat data or content differ from the index; git does not refresh its
    // stat cache here, so a file only touched is listed too (and then read: still correct).
    let modified = run(root, &["diff-files", "--name-only", "--relative", "-z"])?;
    let modified: std::collections::HashSet<&[u8]> = modified
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    let mut blobs = HashMap::new();
    for entry in staged.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        // `<mode> <blob> <stage>\t<path>`
        let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
            continue;
        };
        let (meta, path) = (&entry[..tab], &entry[tab + 1..]);
        let mut fields = meta.split(|&b| b == b' ');
        let (Some(mode), Some(blob), Some(stage)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // Regular files only (no links or submodules), and no merge conflicts.
        if !(mode == b"100644" || mode == b"100755") || stage != b"0" || modified.contains(path) {
            continue;
        }
        let (Ok(path), Ok(blob)) = (std::str::from_utf8(path), std::str::from_utf8(blob)) else {
            continue;
        };
        blobs.insert(path.to_string(), blob.to_string());
    }
    Some(blobs)
}

fn run(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        // Reading only: never wait for, or take, the index lock of a running git command.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_gits() {
        // What `git hash-object --stdin` prints for "hello\n" and for nothing.
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    }
}
