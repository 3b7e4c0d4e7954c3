//! What git already knows about a work tree's files: the blob id of every tracked file whose
//! content in the work tree is the one in git's index. A fresh clone starting from its
//! committed artifact compares these ids with the artifact's instead of reading every file.
//!
//! Outside a git work tree, or without a working `git`, there is nothing to vouch for and
//! files are read and hashed as usual.

use super::walk::GitStat;
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

/// What git's index says of the work tree at `root`, read while the tree is walked; `None`
/// when `root` is not in a git work tree or git cannot be run. `IndexView::unmodified` then
/// judges each file by the status the walk read.
pub fn read_index(root: &Path) -> Option<IndexView> {
    let found = run(
        root,
        &[
            "rev-parse",
            "--git-path",
            "index",
            "--show-prefix",
            "--show-object-format",
        ],
    )?;
    let found = String::from_utf8(found).ok()?;
    let mut lines = found.lines();
    let (index, prefix, format) = (lines.next()?, lines.next()?, lines.next());
    if format == Some("sha1") {
        if let Some(view) = index_file(&root.join(index), prefix) {
            return Some(view);
        }
    }
    diffed_blobs(root).map(IndexView::Diffed)
}

/// Git's index, as read by `read_index`.
pub enum IndexView {
    /// The index file's tracked files under `root`, and the time it was written (in ns).
    File { tracked: Vec<Tracked>, written: i64 },
    /// What `git diff-files` said, for an index of a kind not read here (split, or unknown).
    Diffed(HashMap<String, String>),
}

/// A file of git's index under `root`: its path relative to `root`, its status as recorded,
/// and its blob id.
pub struct Tracked {
    path: String,
    stat: GitStat,
    oid: [u8; 20],
}

impl IndexView {
    /// Tracked regular files under `root` (paths relative to it, `/`-separated) whose content
    /// in the work tree is the one git's index records, with their blob ids; `status` gives a
    /// file's status as the walk found it (`None`: not a file the walk kept).
    ///
    /// An id is only a claim about the bytes git would store: a file checked out through a
    /// filter (line-ending conversion, LFS) has other bytes than its blob. Callers compare the
    /// size on disk too, and read the file when either differs.
    pub fn unmodified(
        self,
        root: &Path,
        status: impl Fn(&str) -> Option<GitStat>,
    ) -> HashMap<String, String> {
        match self {
            IndexView::Diffed(blobs) => blobs,
            IndexView::File { tracked, written } => index_blobs(root, tracked, written, status),
        }
    }
}

/// The index at `index`, if it is of a kind read here (see `index_entries`), with the files
/// under `prefix` (`root`'s path within the work tree: `pkg/`, or empty).
#[cfg(unix)]
fn index_file(index: &Path, prefix: &str) -> Option<IndexView> {
    use std::os::unix::fs::MetadataExt;
    let bytes = std::fs::read(index).ok()?;
    let written = std::fs::metadata(index).ok()?;
    let written = written.mtime() * 1_000_000_000 + written.mtime_nsec();
    let tracked = index_entries(&bytes)?
        .into_iter()
        .filter_map(|e| {
            let path = std::str::from_utf8(e.path.strip_prefix(prefix.as_bytes())?).ok()?;
            let s = e.stat;
            Some(Tracked {
                path: path.to_string(),
                stat: GitStat([s[0], s[1], s[2], s[3], s[5], s[7], s[8], s[9]]),
                oid: e.oid,
            })
        })
        .collect();
    Some(IndexView::File { tracked, written })
}

#[cfg(not(unix))]
fn index_file(_: &Path, _: &str) -> Option<IndexView> {
    None
}

/// `IndexView::unmodified` from git's index file itself, as git would judge each file: its
/// status as recorded, and its content for the entries the index was written too soon after
/// to tell by their modification time.
///
/// `git diff-files` does the same, but the git measured here takes every file modified in the
/// second the index was written for racily clean: in a fresh clone that is nearly every file,
/// which it read and hashed again (95 ms of a 380 ms fresh clone of Django). Here a file is
/// racily clean only within `RACY_NS` of the index's own modification time.
fn index_blobs(
    root: &Path,
    tracked: Vec<Tracked>,
    written: i64,
    status: impl Fn(&str) -> Option<GitStat>,
) -> HashMap<String, String> {
    let mut blobs = HashMap::with_capacity(tracked.len());
    for t in tracked {
        if status(&t.path) != Some(t.stat) {
            continue;
        }
        let [_, _, mtime_s, mtime_ns, ..] = t.stat.0;
        let modified = i64::from(mtime_s) * 1_000_000_000 + i64::from(mtime_ns);
        // Racily clean: changed within the clock tick git recorded it in, its status would
        // still match. Only the content tells.
        let racy = modified + RACY_NS >= written;
        let blob = hex(&t.oid);
        if racy && !std::fs::read(root.join(&t.path)).is_ok_and(|b| blob_id(&b) == blob) {
            continue;
        }
        blobs.insert(t.path, blob);
    }
    blobs
}

/// How close before the index was written a file's modification time makes it racily
/// clean: file times come from a clock that advances by ticks of up to 10 ms.
const RACY_NS: i64 = 20_000_000;

/// One entry of git's index: the stage-0 regular files that are checked out, and trusted.
struct IndexEntry<'a> {
    /// ctime s, ns, mtime s, ns, dev, ino, mode, uid, gid, size (each 32 bits, as stored).
    stat: [u32; 10],
    oid: [u8; 20],
    path: std::borrow::Cow<'a, [u8]>,
}

/// The entries of an index file (versions 2 to 4, SHA-1, not split), as `gitformat-index`
/// lays them out; entries git is told not to check (assume-unchanged, skip-worktree,
/// intent-to-add), other stages and anything but regular files are left out.
fn index_entries(bytes: &[u8]) -> Option<Vec<IndexEntry<'_>>> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)? as usize;
    let mut entries = Vec::with_capacity(count.min(bytes.len() / 62));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mut stat = [0u32; 10];
        for (i, field) in stat.iter_mut().enumerate() {
            *field = u32_at(start + 4 * i)?;
        }
        let oid: [u8; 20] = bytes.get(start + 40..start + 60)?.try_into().ok()?;
        let flags = u16::from_be_bytes(bytes.get(start + 60..start + 62)?.try_into().ok()?);
        at = start + 62;
        let mut extended = 0u16;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            extended = u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
            at += 2;
        }
        let path: std::borrow::Cow<'_, [u8]> = if version == 4 {
            // The length of the previous path's tail to drop, then this path's own tail.
            let (strip, used) = offset_varint(bytes.get(at..)?)?;
            at += used;
            let tail_len = bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            previous.truncate(keep);
            previous.extend_from_slice(&bytes[at..at + tail_len]);
            at += tail_len + 1;
            std::borrow::Cow::Owned(previous.clone())
        } else {
            let len = bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let path = &bytes[at..at + len];
            // NUL-padded to a multiple of eight bytes from the entry's start.
            at = start + (at - start + len + 8) / 8 * 8;
            std::borrow::Cow::Borrowed(path)
        };
        let mode = stat[6];
        let trusted = flags & 0x8000 == 0 && extended & 0x6000 == 0;
        let stage = (flags >> 12) & 3;
        if trusted && stage == 0 && (mode == 0o100644 || mode == 0o100755) {
            entries.push(IndexEntry { stat, oid, path });
        }
    }
    // Extensions: a split index keeps most entries in another file.
    let end = bytes.len().checked_sub(20)?;
    while at + 8 <= end {
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" {
            return None;
        }
        at += 8 + u32_at(at + 4)? as usize;
    }
    // Then the checksum, and nothing else: anything other is not an index written whole.
    (at == end).then_some(entries)
}

/// The variable-length integer of index version 4 (git's `decode_varint`): its value and
/// how many bytes it took.
fn offset_varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut used = 0;
    let mut c = *bytes.first()?;
    used += 1;
    let mut value = usize::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = *bytes.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_mul(128)? + usize::from(c & 0x7f);
    }
    Some((value, used))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// `IndexView::unmodified` as `git diff-files` tells it.
fn diffed_blobs(root: &Path) -> Option<HashMap<String, String>> {
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

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// A committed repository: two source files, one in a folder, an executable script and a
    /// symbolic link.
    fn repository() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg/deep")).unwrap();
        std::fs::write(root.join("main.py"), "print('main')\n").unwrap();
        std::fs::write(root.join("pkg/deep/lib.rs"), "pub fn lib() {}\n").unwrap();
        std::fs::write(root.join("pkg/run.sh"), "#!/bin/sh\necho run\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let script = root.join("pkg/run.sh");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::symlink("main.py", root.join("link.py")).unwrap();
        }
        git(root, &["init", "-q"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        dir
    }

    /// A file's status as the walk reads it, now.
    fn status_now(root: &Path, path: &str) -> Option<GitStat> {
        let meta = std::fs::symlink_metadata(root.join(path)).ok()?;
        meta.is_file().then(|| GitStat::of(&meta))
    }

    /// `read_index` judged by each file's status as it is now.
    fn unmodified_blobs(root: &Path) -> Option<HashMap<String, String>> {
        let index = read_index(root)?;
        Some(index.unmodified(root, |path| status_now(root, path)))
    }

    /// The same from the index file of `root`'s repository, never from `git diff-files`.
    fn index_file_blobs(root: &Path) -> Option<HashMap<String, String>> {
        let index = index_file(&root.join(".git/index"), "")?;
        assert!(matches!(index, IndexView::File { .. }));
        Some(index.unmodified(root, |path| status_now(root, path)))
    }

    fn hash_object(root: &Path, path: &str) -> String {
        git(root, &["hash-object", path]).trim().to_string()
    }

    #[test]
    fn every_index_version_vouches_for_the_files_git_would() {
        let dir = repository();
        let root = dir.path();
        let expected: HashMap<String, String> = ["main.py", "pkg/deep/lib.rs", "pkg/run.sh"]
            .iter()
            .map(|p| (p.to_string(), hash_object(root, p)))
            .collect();
        for version in ["2", "3", "4"] {
            git(root, &["update-index", "--index-version", version]);
            // git writes version 3 only when an entry needs its extended flags (below).
            let index = std::fs::read(root.join(".git/index")).unwrap();
            assert_eq!(index[7], if version == "4" { 4 } else { 2 });
            // Read from the index file: the symbolic link is not a file git vouches for.
            let read = index_file_blobs(root).unwrap();
            assert_eq!(read, expected, "index version {version}");
            assert_eq!(unmodified_blobs(root).unwrap(), expected);
            // From a folder of the work tree, paths are relative to it.
            assert_eq!(
                unmodified_blobs(&root.join("pkg")).unwrap(),
                HashMap::from([
                    (
                        "deep/lib.rs".to_string(),
                        expected["pkg/deep/lib.rs"].clone()
                    ),
                    ("run.sh".to_string(), expected["pkg/run.sh"].clone()),
                ])
            );
        }
        // Extended flags (version 3): a file git is told not to check out is not vouched for.
        git(root, &["update-index", "--index-version", "3"]);
        git(root, &["update-index", "--skip-worktree", "main.py"]);
        assert_eq!(std::fs::read(root.join(".git/index")).unwrap()[7], 3);
        let read = index_file_blobs(root).unwrap();
        assert!(!read.contains_key("main.py") && read.contains_key("pkg/run.sh"));
        // Neither is one git is told to assume unchanged.
        git(
            root,
            &[
                "update-index",
                "--no-skip-worktree",
                "--assume-unchanged",
                "main.py",
            ],
        );
        let read = index_file_blobs(root).unwrap();
        assert!(!read.contains_key("main.py") && read.contains_key("pkg/run.sh"));
    }

    #[test]
    fn a_file_changed_since_the_index_was_written_is_not_vouched_for() {
        let dir = repository();
        let root = dir.path();
        // Same size, and the old modification time put back: only the change time and the
        // content differ from what the index recorded.
        let file = root.join("pkg/deep/lib.rs");
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, "pub fn bib() {}\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        // Changed right after the commit: racily clean for git, whose word is the content.
        std::fs::write(root.join("main.py"), "print('mein')\n").unwrap();
        let blobs = unmodified_blobs(root).unwrap();
        assert!(!blobs.contains_key("pkg/deep/lib.rs"), "{blobs:?}");
        assert!(!blobs.contains_key("main.py"), "{blobs:?}");
        assert_eq!(blobs["pkg/run.sh"], hash_object(root, "pkg/run.sh"));
        // git agrees.
        let dirty = git(root, &["diff-files", "--name-only"]);
        assert_eq!(dirty, "main.py\npkg/deep/lib.rs\n");
    }

    #[test]
    fn outside_a_work_tree_git_vouches_for_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        assert_eq!(unmodified_blobs(dir.path()), None);
    }

    #[test]
    fn truncated_or_foreign_index_files_are_not_read() {
        let dir = repository();
        let index = std::fs::read(dir.path().join(".git/index")).unwrap();
        assert!(index_entries(&index).is_some());
        for cut in [0, 4, 12, 40, 70, index.len() - 21] {
            if let Some(entries) = index_entries(&index[..cut]) {
                panic!("{cut} bytes read as {} entries", entries.len());
            }
        }
        let mut foreign = index.clone();
        foreign[..4].copy_from_slice(b"DIRX");
        assert!(index_entries(&foreign).is_none());
    }
}
