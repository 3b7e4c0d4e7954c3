//! A git diff as data: which files changed between two states of a repository, how (added,
//! deleted, modified, renamed), the hunks with the exact lines changed on each side, and the
//! bytes of each side.
//!
//! Everything goes through the `git` program, as the fresh-clone bootstrap does: it is
//! wherever a repository is, and its diff machinery (rename detection, merge parents,
//! `.gitattributes`, the index) is what the user's own `git diff` shows. Paths are relative
//! to the indexed folder (`--relative`), which may be below the repository's top.

use crate::error::Error;
use anyhow::{bail, Context, Result};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

/// git's empty tree: the old side of a repository's first commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Which two states to compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// Everything not committed: the work tree (untracked files included) against `HEAD`.
    Worktree,
    /// What is staged: the index against `HEAD`.
    Staged,
    /// A commit against its first parent (a merge: what it brought into the first parent).
    Commit(String),
    /// `A..B` (B against A) or `A...B` (B against their merge base).
    Range {
        from: String,
        to: String,
        merge_base: bool,
    },
}

impl Spec {
    /// `REV`, `A..B` or `A...B`.
    pub fn parse(rev: &str) -> Spec {
        if let Some((from, to)) = rev.split_once("...") {
            return Spec::Range {
                from: or_head(from),
                to: or_head(to),
                merge_base: true,
            };
        }
        if let Some((from, to)) = rev.split_once("..") {
            return Spec::Range {
                from: or_head(from),
                to: or_head(to),
                merge_base: false,
            };
        }
        Spec::Commit(rev.to_string())
    }

    pub fn describe(&self) -> String {
        match self {
            Spec::Worktree => "the work tree against HEAD".into(),
            Spec::Staged => "the staged changes against HEAD".into(),
            Spec::Commit(c) => format!("commit {c} against its first parent"),
            Spec::Range {
                from,
                to,
                merge_base,
            } => format!("{from}{}{to}", if *merge_base { "..." } else { ".." }),
        }
    }
}

fn or_head(rev: &str) -> String {
    if rev.is_empty() {
        "HEAD".into()
    } else {
        rev.to_string()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Added,
    Deleted,
    Modified,
    Renamed,
}

/// One file of the diff.
#[derive(Clone, Debug)]
pub struct FileDiff {
    pub status: Status,
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    /// Blob ids; the new side has none when it is the work tree's file.
    pub old_blob: Option<String>,
    pub new_blob: Option<String>,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// The path on the side that exists, the new one first.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or_default()
    }
}

#[derive(Clone, Debug, Default)]
pub struct Hunk {
    /// `@@ -a,b +c,d @@`, without what git adds after it.
    pub header: String,
    /// The hunk's lines, each with its ` `, `-` or `+`.
    pub lines: Vec<String>,
    /// 1-based line numbers removed on the old side and added on the new side.
    pub removed: Vec<u32>,
    pub added: Vec<u32>,
    /// Where the hunk starts on each side.
    pub old_start: u32,
    pub new_start: u32,
}

impl Hunk {
    /// The line numbers on each side of every line of the hunk: (old, new), `None` on the
    /// side a line is not on.
    pub fn numbered(&self) -> impl Iterator<Item = (Option<u32>, Option<u32>, &str)> {
        let (mut old, mut new) = (self.old_start, self.new_start);
        self.lines.iter().map(move |l| match l.as_bytes().first() {
            Some(b'-') => {
                old += 1;
                (Some(old - 1), None, l.as_str())
            }
            Some(b'+') => {
                new += 1;
                (None, Some(new - 1), l.as_str())
            }
            _ => {
                old += 1;
                new += 1;
                (Some(old - 1), Some(new - 1), l.as_str())
            }
        })
    }
}

/// The diff of `spec` in the repository holding `root`, paths relative to `root`.
#[derive(Clone, Debug)]
pub struct Diff {
    pub spec: Spec,
    /// The commit of the old side (`None` before the first commit).
    pub base: Option<String>,
    /// The commit of the new side (`None` for the work tree and the index).
    pub head: Option<String>,
    pub files: Vec<FileDiff>,
}

/// Reads the diff of `spec` from git. `indexed` lists the files the index holds (paths
/// relative to `root`): for the work tree, those git does not track and does not ignore are
/// its untracked files. Asking the index instead of git to list them spares git a walk of
/// every folder (on Django that listing costs twice the diff), and a file the index leaves
/// out holds no definition an impact could start from. Only when nothing else changed does
/// git list them, so that the answer can say what the change holds.
pub fn read(root: &Path, spec: &Spec, indexed: &[String]) -> Result<Diff> {
    // The top of the work tree and HEAD's commit in one call: git prints the top, then the
    // commit, and fails with 1 when there is no commit yet.
    let (status, out) = git_piped(
        root,
        &[
            "rev-parse",
            "--show-toplevel",
            "--verify",
            "--quiet",
            "HEAD^{commit}",
        ],
        Vec::new(),
    )?;
    let out = String::from_utf8_lossy(&out);
    let mut lines = out.lines();
    let in_work_tree = lines.next().is_some_and(|top| !top.trim().is_empty());
    if !in_work_tree || !matches!(status.code(), Some(0 | 1)) {
        return Err(Error::invalid(format!(
            "{} is not in a git repository's work tree (impact reads its changes from git)",
            root.display()
        ))
        .into());
    }
    let head = lines
        .next()
        .map(|c| c.trim().to_string())
        .filter(|c| status.success() && !c.is_empty());
    let (base, new, args): (Option<String>, Option<String>, Vec<String>) = match spec {
        Spec::Worktree => {
            let old = head.clone().unwrap_or_else(|| EMPTY_TREE.into());
            (head.clone(), None, vec![old])
        }
        Spec::Staged => {
            let old = head.clone().unwrap_or_else(|| EMPTY_TREE.into());
            (head.clone(), None, vec!["--cached".into(), old])
        }
        Spec::Commit(rev) => {
            let c = commit_of(root, rev)?;
            let parent = first_parent(root, &c)?;
            let old = parent.clone().unwrap_or_else(|| EMPTY_TREE.into());
            (parent, Some(c.clone()), vec![old, c])
        }
        Spec::Range {
            from,
            to,
            merge_base,
        } => {
            let (a, b) = (commit_of(root, from)?, commit_of(root, to)?);
            let a = if *merge_base {
                git(root, &["merge-base", &a, &b])
                    .map(|s| s.trim().to_string())
                    .map_err(|_| {
                        Error::invalid(format!("{from} and {to} have no common ancestor"))
                    })?
            } else {
                a
            };
            (Some(a.clone()), Some(b.clone()), vec![a, b])
        }
    };
    let mut common = vec![
        "-c".to_string(),
        "core.quotePath=false".into(),
        "diff".into(),
        "--no-color".into(),
        "--no-ext-diff".into(),
        "--no-textconv".into(),
        "--find-renames".into(),
        "--relative".into(),
    ];
    common.extend(args);
    common.extend(["--raw", "-z", "--no-abbrev", "--patch", "--unified=3"].map(String::from));
    // The untracked files are found meanwhile.
    let (out, untracked) = std::thread::scope(|s| {
        let others = (*spec == Spec::Worktree).then(|| s.spawn(|| untracked(root, indexed)));
        let out = git_bytes(root, &common);
        let others = others.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("listing untracked files failed")))
        });
        (out, others)
    });
    let out = out?;
    // The raw listing's records end in NUL, and an empty one ends it; the patch follows.
    let (raw, patch) = match out.windows(2).position(|w| w == b"\0\0") {
        Some(at) => (&out[..at + 1], &out[at + 2..]),
        None => (&out[..], &[][..]),
    };
    let mut files = parse_raw(raw)?;
    let sections = parse_patch(&String::from_utf8_lossy(patch));
    if sections.len() != files.len() {
        bail!(
            "git listed {} changed files but its patch has {}",
            files.len(),
            sections.len()
        );
    }
    for (f, (binary, hunks)) in files.iter_mut().zip(sections) {
        f.binary = binary;
        f.hunks = hunks;
    }
    if let Some(untracked) = untracked {
        let mut untracked = untracked?;
        if files.is_empty() && untracked.is_empty() {
            // Nothing the index holds changed: git's own listing says whether untracked
            // files the index leaves out did, so that the answer names them.
            untracked = untracked_listed(root)?;
        }
        files.extend(untracked.into_iter().filter_map(|p| added(root, p)));
    }
    for f in &mut files {
        // The work tree's side has no blob id (git prints zeros).
        if f.new_blob
            .as_deref()
            .is_some_and(|b| b.bytes().all(|c| c == b'0'))
        {
            f.new_blob = None;
        }
    }
    Ok(Diff {
        spec: spec.clone(),
        base,
        head: new,
        files,
    })
}

/// Both sides' texts of each of `files` (`None` for a side that does not exist, a binary
/// file or one that is not UTF-8): the blobs git holds, read by one `git cat-file --batch`,
/// and the work tree's files for a side git has no blob of.
pub fn texts(root: &Path, files: &[FileDiff]) -> Result<Vec<(Option<String>, Option<String>)>> {
    let mut wanted: Vec<&str> = files
        .iter()
        .filter(|f| !f.binary)
        .flat_map(|f| [&f.old_blob, &f.new_blob])
        .flatten()
        .map(String::as_str)
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let blobs = cat_blobs(root, &wanted)?;
    // One blob may be both sides (a file renamed unchanged).
    let take = |id: &Option<String>| id.as_ref().and_then(|id| blobs.get(id.as_str())).cloned();
    let text = |bytes: Option<Vec<u8>>| bytes.and_then(|b| String::from_utf8(b).ok());
    Ok(files
        .iter()
        .map(|f| {
            if f.binary {
                return (None, None);
            }
            let old = text(take(&f.old_blob));
            let new = match (&f.new_blob, &f.new_path) {
                (Some(_), _) => take(&f.new_blob),
                (None, Some(p)) if f.status != Status::Deleted => std::fs::read(root.join(p)).ok(),
                _ => None,
            };
            (old, text(new))
        })
        .collect())
}

/// The contents of blobs `ids`, by id, read through one `git cat-file --batch`.
fn cat_blobs(root: &Path, ids: &[&str]) -> Result<HashMap<String, Vec<u8>>> {
    let mut out = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    let mut request = String::new();
    for id in ids {
        request.push_str(id);
        request.push('\n');
    }
    let (_, answer) = git_piped(root, &["cat-file", "--batch"], request.into_bytes())?;
    // `<id> <type> <size>\n<content>\n` per blob, `<id> missing\n` for one git lacks.
    let mut at = 0;
    for id in ids {
        let Some(eol) = answer[at..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&answer[at..at + eol]).into_owned();
        at += eol + 1;
        // A missing object has no content to skip.
        let (blob, size) = match header.split(' ').collect::<Vec<_>>()[..] {
            [_, kind, size] => (kind == "blob", size.parse::<usize>().ok()),
            _ => (false, None),
        };
        let Some(size) = size.filter(|&n| at + n <= answer.len()) else {
            continue;
        };
        if blob {
            out.insert(id.to_string(), answer[at..at + size].to_vec());
        }
        at += size + 1;
    }
    Ok(out)
}

/// The commits that changed files, newest first, each with the paths it changed (relative to
/// `root`), from `rev`'s history: at most `limit` commits, merges left out (their changes are
/// their parents').
pub fn history(root: &Path, rev: &str, limit: usize) -> Result<Vec<(String, Vec<String>)>> {
    let args: Vec<String> = [
        "-c",
        "core.quotePath=false",
        "log",
        "--no-merges",
        "--no-renames",
        "--relative",
        "--name-only",
        "-z",
        "--format=%x01%H",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--max-count={limit}"),
        rev.to_string(),
        "--".into(),
        ".".into(),
    ])
    .collect();
    let out = git_bytes(root, &args)?;
    let text = String::from_utf8_lossy(&out);
    let mut commits = Vec::new();
    for record in text.split('\u{1}').filter(|r| !r.is_empty()) {
        let mut parts = record.split(['\0', '\n']).filter(|p| !p.is_empty());
        let Some(id) = parts.next() else { continue };
        commits.push((id.to_string(), parts.map(str::to_string).collect()));
    }
    Ok(commits)
}

/// `git diff --raw -z` entries: `:mode mode blob blob status\0path\0[path\0]`.
fn parse_raw(raw: &[u8]) -> Result<Vec<FileDiff>> {
    let mut out = Vec::new();
    let mut fields = raw.split(|&b| b == 0).peekable();
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            continue;
        }
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [_, new_mode, old_blob, new_blob, status] = parts[..] else {
            bail!("unexpected line in git's raw diff: {meta:?}");
        };
        let path = |f: Option<&[u8]>| f.map(|p| String::from_utf8_lossy(p).into_owned());
        let first = path(fields.next());
        let letter = status.chars().next().unwrap_or('M');
        let (status, old_path, new_path) = match letter {
            'A' => (Status::Added, None, first),
            'D' => (Status::Deleted, first, None),
            'R' | 'C' => {
                let second = path(fields.next());
                if letter == 'C' {
                    (Status::Added, None, second)
                } else {
                    (Status::Renamed, first, second)
                }
            }
            _ => (Status::Modified, first.clone(), first),
        };
        // Submodules (mode 160000) and symbolic links (120000) hold no code to map.
        let binary = new_mode == "160000" || new_mode == "120000";
        out.push(FileDiff {
            status,
            old_blob: (status != Status::Added).then(|| old_blob.to_string()),
            new_blob: (status != Status::Deleted).then(|| new_blob.to_string()),
            old_path: if status == Status::Added {
                None
            } else {
                old_path
            },
            new_path,
            binary,
            hunks: Vec::new(),
        });
    }
    Ok(out)
}

/// Each file section of a unified patch: whether git called it binary, and its hunks.
fn parse_patch(patch: &str) -> Vec<(bool, Vec<Hunk>)> {
    let mut out: Vec<(bool, Vec<Hunk>)> = Vec::new();
    let mut in_hunk = false;
    for line in patch.lines() {
        if line.starts_with("diff --git ") {
            out.push((false, Vec::new()));
            in_hunk = false;
            continue;
        }
        let Some((binary, hunks)) = out.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix("@@ -") {
            let Some((old, new)) = hunk_starts(rest) else {
                continue;
            };
            let end = rest.find(" @@").map_or(rest.len(), |i| i + 3);
            hunks.push(Hunk {
                header: format!("@@ -{}", &rest[..end]),
                old_start: old,
                new_start: new,
                ..Hunk::default()
            });
            in_hunk = true;
            continue;
        }
        if !in_hunk {
            if line.starts_with("Binary files ") || line == "GIT binary patch" {
                *binary = true;
            }
            continue;
        }
        let Some(h) = hunks.last_mut() else { continue };
        match line.as_bytes().first() {
            Some(b'-' | b'+' | b' ') => h.lines.push(line.to_string()),
            // "\ No newline at end of file"
            Some(b'\\') => {}
            _ => in_hunk = false,
        }
    }
    for (_, hunks) in &mut out {
        for h in hunks.iter_mut() {
            let numbered: Vec<(Option<u32>, Option<u32>, bool)> = h
                .numbered()
                .map(|(o, n, l)| (o, n, l.starts_with(' ')))
                .collect();
            for (o, n, context) in numbered {
                if context {
                    continue;
                }
                if let Some(o) = o {
                    h.removed.push(o);
                }
                if let Some(n) = n {
                    h.added.push(n);
                }
            }
        }
    }
    out
}

/// `a,b +c,d @@` → (a, c); a count of 0 puts the start one line early (`-5,0` is "after 5").
fn hunk_starts(rest: &str) -> Option<(u32, u32)> {
    let (old, tail) = rest.split_once(" +")?;
    let new = tail.split(' ').next()?;
    let start = |s: &str| -> Option<u32> {
        let (first, count) = s.split_once(',').unwrap_or((s, "1"));
        let first: u32 = first.parse().ok()?;
        let count: u32 = count.parse().ok()?;
        Some(if count == 0 { first + 1 } else { first })
    };
    Some((start(old)?, start(new)?))
}

/// The files of `indexed` that git neither tracks nor ignores.
fn untracked(root: &Path, indexed: &[String]) -> Result<Vec<String>> {
    let tracked = git_bytes(root, &["ls-files", "-z"].map(String::from))?;
    let tracked: HashSet<&[u8]> = tracked.split(|&b| b == 0).collect();
    let candidates: Vec<&String> = indexed
        .iter()
        // The index's own artifact, written into the tree before it is committed.
        .filter(|p| !p.starts_with(crate::store::artifact::DIR))
        .filter(|p| !tracked.contains(p.as_bytes()))
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    // What git ignores (its global excludes too, which the index's walk does not read).
    let mut request = Vec::new();
    for p in &candidates {
        request.extend_from_slice(p.as_bytes());
        request.push(0);
    }
    let (status, ignored) = git_piped(root, &["check-ignore", "-z", "--stdin"], request)?;
    // 1: none of them is ignored.
    if !matches!(status.code(), Some(0 | 1)) {
        bail!("git check-ignore failed");
    }
    let ignored: HashSet<&[u8]> = ignored.split(|&b| b == 0).collect();
    Ok(candidates
        .into_iter()
        .filter(|p| !ignored.contains(p.as_bytes()))
        .cloned()
        .collect())
}

/// Every untracked file git does not ignore, as git lists them (walking the tree).
fn untracked_listed(root: &Path) -> Result<Vec<String>> {
    let out = git_bytes(
        root,
        &["ls-files", "--others", "--exclude-standard", "-z"].map(String::from),
    )?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        // The index's own artifact, written into the tree before it is committed.
        .filter(|p| !p.starts_with(crate::store::artifact::DIR))
        .collect())
}

/// Untracked file `path` as an added file of the work tree; `None` if it cannot be read
/// (gone since it was listed).
fn added(root: &Path, path: String) -> Option<FileDiff> {
    let bytes = std::fs::read(root.join(&path)).ok()?;
    let binary = bytes.contains(&0) || std::str::from_utf8(&bytes).is_err();
    let hunks = if binary || bytes.is_empty() {
        Vec::new()
    } else {
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text.lines().map(|l| format!("+{l}")).collect();
        let n = lines.len() as u32;
        vec![Hunk {
            header: format!("@@ -0,0 +1,{n} @@"),
            lines,
            removed: Vec::new(),
            added: (1..=n).collect(),
            old_start: 1,
            new_start: 1,
        }]
    };
    Some(FileDiff {
        status: Status::Added,
        old_path: None,
        new_path: Some(path),
        old_blob: None,
        new_blob: None,
        binary,
        hunks,
    })
}

/// The commit `rev` names, or a clear error.
fn commit_of(root: &Path, rev: &str) -> Result<String> {
    if rev.starts_with('-') {
        return Err(Error::invalid(format!("{rev:?} is not a revision")).into());
    }
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map(|s| s.trim().to_string())
    .map_err(|_| Error::invalid(format!("no commit {rev:?} in this repository")).into())
}

fn first_parent(root: &Path, commit: &str) -> Result<Option<String>> {
    let line = git(root, &["rev-list", "--parents", "-n", "1", commit])?;
    Ok(line.split_whitespace().nth(1).map(str::to_string))
}

/// Runs git with `input` on its standard input; its exit status and standard output.
fn git_piped(root: &Path, args: &[&str], input: Vec<u8>) -> Result<(ExitStatus, Vec<u8>)> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| "cannot run git (is it installed?)".to_string())?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Written from another thread: git answers while it reads, and a full pipe both ways
    // would otherwise stall.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_end(&mut out)?;
    let _ = writer.join();
    Ok((child.wait()?, out))
}

/// Runs git in `root` (reading only); its standard output, or why it failed.
pub(crate) fn git(root: &Path, args: &[&str]) -> Result<String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    Ok(String::from_utf8_lossy(&git_bytes(root, &args)?).into_owned())
}

fn git_bytes(root: &Path, args: &[String]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        // Reading only: never wait for, or take, the index lock of a running git command.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .output()
        .with_context(|| "cannot run git (is it installed?)".to_string())?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.iter()
                .filter(|a| !a.starts_with("core."))
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_number_each_side() {
        let patch = "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n\
                     @@ -2,3 +2,4 @@ def f():\n     a = 1\n-    b = 2\n+    b = 3\n+    c = 4\n     return a\n\
                     diff --git a/y.bin b/y.bin\nBinary files a/y.bin and b/y.bin differ\n";
        let sections = parse_patch(patch);
        assert_eq!(sections.len(), 2);
        let (binary, hunks) = &sections[0];
        assert!(!binary);
        assert_eq!(hunks[0].header, "@@ -2,3 +2,4 @@");
        assert_eq!(hunks[0].removed, vec![3]);
        assert_eq!(hunks[0].added, vec![3, 4]);
        assert!(sections[1].0);
    }

    #[test]
    fn a_deletion_sits_after_its_line() {
        assert_eq!(hunk_starts("5,0 +7,2 @@"), Some((6, 7)));
        assert_eq!(hunk_starts("5 +7,0 @@"), Some((5, 8)));
    }

    #[test]
    fn specs_parse() {
        assert_eq!(Spec::parse("abc"), Spec::Commit("abc".into()));
        assert_eq!(
            Spec::parse("a..b"),
            Spec::Range {
                from: "a".into(),
                to: "b".into(),
                merge_base: false
            }
        );
        assert_eq!(
            Spec::parse("main..."),
            Spec::Range {
                from: "main".into(),
                to: "HEAD".into(),
                merge_base: true
            }
        );
    }
}
