//! The repository walk: which files are candidates for indexing, and why the others are
//! skipped. Ignore files (.gitignore, .ignore, .cbmignore) are honoured through the `ignore`
//! crate; dependency folders, excluded globs, oversized files, lock files and generated-name
//! files are skipped here; everything skipped is counted by reason. Content-based skips (binary, generated
//! header, unreadable) happen when the file is read, see `classify_content`.

use anyhow::{bail, Context, Result};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{WalkBuilder, WalkState};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why a path was not indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// Matched by .gitignore, .ignore or .cbmignore (a folder counts once).
    IgnoreRules,
    DependencyDir,
    Hidden,
    /// `.env` and its variants: they hold a deployment's secrets (see `is_env_file`).
    EnvFile,
    Excluded,
    Symlink,
    TooLarge,
    LockFile,
    Generated,
    Binary,
    Unreadable,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::IgnoreRules => "ignore_rules",
            SkipReason::DependencyDir => "dependency_dir",
            SkipReason::Hidden => "hidden",
            SkipReason::EnvFile => "env_file",
            SkipReason::Excluded => "excluded",
            SkipReason::Symlink => "symlink",
            SkipReason::TooLarge => "too_large",
            SkipReason::LockFile => "lock_file",
            SkipReason::Generated => "generated",
            SkipReason::Binary => "binary",
            SkipReason::Unreadable => "unreadable",
        }
    }
}

/// Skipped paths by reason, each list sorted.
pub type Skipped = BTreeMap<SkipReason, Vec<String>>;

/// A file that passed the walk's filters.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Repository-relative, '/'-separated.
    pub path: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
    /// Its status as git's index would record it.
    pub stat: GitStat,
}

/// A file's status at the width git's index stores it: ctime and mtime (seconds and
/// nanoseconds), inode, user, group and size, each the low 32 bits. What git compares by
/// default (`core.checkStat`) to trust that a file still holds the blob it recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GitStat(pub [u32; 8]);

impl GitStat {
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        GitStat([
            meta.ctime() as u32,
            meta.ctime_nsec() as u32,
            meta.mtime() as u32,
            meta.mtime_nsec() as u32,
            meta.ino() as u32,
            meta.uid(),
            meta.gid(),
            meta.size() as u32,
        ])
    }

    /// Git's index is not read outside Unix (`git diff-files` answers): nothing to record.
    #[cfg(not(unix))]
    pub fn of(_: &std::fs::Metadata) -> Self {
        GitStat::default()
    }
}

pub struct WalkOptions<'a> {
    pub root: &'a Path,
    pub excludes: &'a [String],
    pub max_file_bytes: u64,
    pub threads: usize,
    /// Index env files (their values redacted) instead of skipping them.
    pub include_env: bool,
}

/// Folders that hold dependencies, build output or tool caches rather than the project's code.
const DEPENDENCY_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "bower_components",
    "target",
    "vendor",
    "venv",
    ".venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "site-packages",
    ".gradle",
    ".idea",
    ".codebase-index",
];

/// A file of environment variables for a deployment: `.env`, `.env.local`, `.envrc`,
/// `.flaskenv`, `production.env`. Such files exist to hold secrets, so they are skipped
/// unless asked for, and then every value in them is redacted.
pub fn is_env_file(name: &str) -> bool {
    name == ".env"
        || name.starts_with(".env.")
        || name == ".envrc"
        || name == ".flaskenv"
        || (name.ends_with(".env") && name.len() > ".env".len())
}

/// Dotfiles that are worth indexing (configuration people ask about).
const KEPT_HIDDEN: &[&str] = &[".github", ".gitlab-ci.yml", ".cbmignore.example"];

const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "mix.lock",
    "Podfile.lock",
    "packages.lock.json",
    "flake.lock",
];

/// File names that tools generate (`*.min.js`, protobuf output, source maps).
const GENERATED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.css",
    ".min.mjs",
    ".bundle.js",
    ".map",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.swift",
    ".g.dart",
    ".designer.cs",
    ".generated.cs",
];

/// Extensions of formats that are never text: skipped as binary without being read.
const BINARY_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "psd", "pdf", "zip",
    "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "war", "whl", "egg", "so", "dylib", "dll",
    "exe", "o", "a", "lib", "obj", "class", "pyc", "pyo", "mo", "woff", "woff2", "ttf", "otf",
    "eot", "mp3", "mp4", "wav", "ogg", "flac", "avi", "mov", "webm", "sqlite", "db", "bin", "dat",
    "wasm", "npy", "pkl", "parquet",
];

fn has_binary_extension(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| {
        BINARY_EXTENSIONS
            .iter()
            .any(|b| b.eq_ignore_ascii_case(ext))
    })
}

/// Walks `root` and returns the candidate files sorted by path, plus what was skipped.
pub fn walk(opts: &WalkOptions) -> Result<(Vec<Candidate>, Skipped)> {
    let root = opts.root;
    let meta = std::fs::metadata(root)
        .with_context(|| format!("cannot index {}: no such directory", root.display()))?;
    if !meta.is_dir() {
        bail!("cannot index {}: not a directory", root.display());
    }
    let excludes = build_excludes(root, opts.excludes)?;
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .git_global(false)
        .add_custom_ignore_filename(".cbmignore")
        .threads(opts.threads.max(1));
    let done = Mutex::new(Vec::new());
    builder.build_parallel().visit(&mut VisitorBuilder {
        opts,
        excludes: &excludes,
        done: &done,
    });
    let mut seen = Seen::default();
    // The root is listed like every folder the walk goes into, under the path its entries
    // name as their parent.
    let root_key = root
        .join("_")
        .parent()
        .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
    seen.entered.push((root_key, list_folder(root).entries));
    for part in done.into_inner().expect("walk lock") {
        seen.found.extend(part.found);
        seen.skipped.extend(part.skipped);
        seen.entered.extend(part.entered);
        seen.other.extend(part.other);
        for (folder, n) in part.shown {
            *seen.shown.entry(folder).or_default() += n;
        }
    }
    let ignored = hidden_by_ignore_files(&seen, root);
    let Seen {
        mut found,
        skipped: skips,
        ..
    } = seen;
    let mut skipped = Skipped::new();
    let ignored = ignored.into_iter().map(|p| (SkipReason::IgnoreRules, p));
    for (reason, path) in skips.into_iter().chain(ignored) {
        skipped.entry(reason).or_default().push(path);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    for list in skipped.values_mut() {
        list.sort();
    }
    Ok((found, skipped))
}

/// What ignore files hid: the `ignore` crate does not show such entries, so each folder the
/// walk went into was counted as it went in, and the folders holding more entries than the
/// walk showed of them are listed again to name the missing ones (a fresh clone has none).
fn hidden_by_ignore_files(seen: &Seen, root: &Path) -> Vec<String> {
    let short: Vec<&Path> = seen
        .entered
        .iter()
        .filter(|(folder, n)| seen.shown.get(folder.as_os_str()).copied().unwrap_or(0) < *n)
        .map(|(folder, _)| folder.as_path())
        .collect();
    if short.is_empty() {
        return Vec::new();
    }
    let entered: Vec<String> = seen
        .entered
        .iter()
        .map(|(f, _)| relative(f, root))
        .collect();
    let shown: FxHashSet<&str> = seen
        .found
        .iter()
        .map(|c| c.path.as_str())
        .chain(seen.skipped.iter().map(|(_, p)| p.as_str()))
        .chain(seen.other.iter().map(String::as_str))
        .chain(entered.iter().map(String::as_str))
        .collect();
    let mut hidden = Vec::new();
    for folder in short {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = relative(&entry.path(), root);
            if !shown.contains(path.as_str()) {
                hidden.push(path);
            }
        }
    }
    hidden
}

/// What the walk's threads saw, each thread its own (merged once the walk is over).
#[derive(Default)]
struct Seen {
    found: Vec<Candidate>,
    skipped: Vec<(SkipReason, String)>,
    /// The folders the walk went into, with how many entries each held as it went in.
    entered: Vec<(PathBuf, usize)>,
    /// How many entries the walk showed of each folder, by the folder's path.
    shown: FxHashMap<OsString, usize>,
    /// Entries shown that are neither candidates, skipped nor folders gone into (sockets).
    other: Vec<String>,
}

struct VisitorBuilder<'a> {
    opts: &'a WalkOptions<'a>,
    excludes: &'a Gitignore,
    done: &'a Mutex<Vec<Seen>>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for VisitorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Visitor {
            opts: self.opts,
            excludes: self.excludes,
            seen: Seen::default(),
            done: self.done,
        })
    }
}

/// One walk thread's visitor: what it sees goes to `done` when its thread ends.
struct Visitor<'a> {
    opts: &'a WalkOptions<'a>,
    excludes: &'a Gitignore,
    seen: Seen,
    done: &'a Mutex<Vec<Seen>>,
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let seen = std::mem::take(&mut self.seen);
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(seen);
    }
}

impl ignore::ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: std::result::Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        let (opts, root) = (self.opts, self.opts.root);
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                // Unreadable folders and the like: count them, keep walking.
                let path = error_path(&err, root);
                self.seen.skipped.push((SkipReason::Unreadable, path));
                return WalkState::Continue;
            }
        };
        if entry.depth() == 0 {
            return WalkState::Continue;
        }
        if let Some(folder) = entry.path().parent() {
            match self.seen.shown.get_mut(folder.as_os_str()) {
                Some(n) => *n += 1,
                None => {
                    self.seen.shown.insert(folder.as_os_str().to_owned(), 1);
                }
            }
        }
        let rel = relative(entry.path(), root);
        let mut skip = |reason: SkipReason, path: String| {
            self.seen.skipped.push((reason, path));
        };
        let name = entry.file_name().to_string_lossy();
        let Some(ft) = entry.file_type() else {
            self.seen.other.push(rel);
            return WalkState::Continue;
        };
        if ft.is_symlink() {
            // Never followed: a link may leave the root or form a loop.
            skip(SkipReason::Symlink, rel);
            return WalkState::Continue;
        }
        let is_dir = ft.is_dir();
        let listing = if is_dir && !DEPENDENCY_DIRS.contains(&name.as_ref()) {
            list_folder(entry.path())
        } else {
            Listing::default()
        };
        if is_dir && (DEPENDENCY_DIRS.contains(&name.as_ref()) || listing.virtualenv) {
            skip(SkipReason::DependencyDir, rel);
            return WalkState::Skip;
        }
        if !is_dir && is_env_file(&name) {
            if !opts.include_env {
                skip(SkipReason::EnvFile, rel);
                return WalkState::Continue;
            }
        } else if name.starts_with('.') && !KEPT_HIDDEN.contains(&name.as_ref()) {
            skip(SkipReason::Hidden, rel);
            return if is_dir {
                WalkState::Skip
            } else {
                WalkState::Continue
            };
        }
        if self
            .excludes
            .matched_path_or_any_parents(entry.path(), is_dir)
            .is_ignore()
        {
            skip(SkipReason::Excluded, rel);
            return if is_dir {
                WalkState::Skip
            } else {
                WalkState::Continue
            };
        }
        if is_dir {
            self.seen
                .entered
                .push((entry.path().to_path_buf(), listing.entries));
            return WalkState::Continue;
        }
        if !ft.is_file() {
            self.seen.other.push(rel);
            return WalkState::Continue;
        }
        if LOCK_FILES.contains(&name.as_ref()) {
            skip(SkipReason::LockFile, rel);
            return WalkState::Continue;
        }
        if has_binary_extension(&name) {
            skip(SkipReason::Binary, rel);
            return WalkState::Continue;
        }
        if GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s)) {
            skip(SkipReason::Generated, rel);
            return WalkState::Continue;
        }
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(_) => {
                skip(SkipReason::Unreadable, rel);
                return WalkState::Continue;
            }
        };
        if meta.len() > opts.max_file_bytes {
            skip(SkipReason::TooLarge, rel);
            return WalkState::Continue;
        }
        self.seen.found.push(Candidate {
            path: rel,
            abs: entry.path().to_path_buf(),
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
            stat: GitStat::of(&meta),
        });
        WalkState::Continue
    }
}

fn build_excludes(root: &Path, globs: &[String]) -> Result<Gitignore> {
    let mut b = GitignoreBuilder::new(root);
    for g in globs {
        b.add_line(None, g)
            .with_context(|| format!("invalid --exclude pattern {g:?}"))?;
    }
    Ok(b.build()?)
}

/// How many entries a folder holds, and whether it is a Python virtual environment (holds a
/// `pyvenv.cfg` file). Nothing if it cannot be read: the walk reports that.
#[derive(Default)]
struct Listing {
    entries: usize,
    virtualenv: bool,
}

fn list_folder(dir: &Path) -> Listing {
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        listing.entries += 1;
        if entry.file_name() == "pyvenv.cfg" && entry.path().is_file() {
            listing.virtualenv = true;
        }
    }
    listing
}

fn error_path(err: &ignore::Error, root: &Path) -> String {
    match err {
        ignore::Error::WithPath { path, .. } => relative(path, root),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err, root)
        }
        other => other.to_string(),
    }
}

/// Repository-relative path with '/' separators. A name that is not UTF-8 keeps its other
/// bytes as `\xE9`: distinct names stay distinct (a lossy `�` would merge `caf\xE9.py` and
/// `caf\xE8.py` into one path), and the same name always reads the same.
pub fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut out = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        for chunk in c.as_os_str().as_encoded_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02X}"));
            }
        }
    }
    out
}

pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// What reading a file told us about it.
pub enum ContentClass {
    Text,
    Binary,
    Generated,
}

/// Binary (a NUL byte near the start, for files whose extension did not already tell) or generated (a marker in the first lines) content.
pub fn classify_content(bytes: &[u8]) -> ContentClass {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return ContentClass::Binary;
    }
    let first_lines: Vec<&[u8]> = head.split(|&b| b == b'\n').take(10).collect();
    for (i, line) in first_lines.into_iter().enumerate() {
        let line = String::from_utf8_lossy(line).to_ascii_lowercase();
        // The usual markers head the file; further down the words are prose (a
        // sphinx-quickstart `conf.py` calls itself "autogenerated" on line 9, and is edited).
        let marked = i < 5
            && (line.contains("do not edit")
                || line.contains("@generated")
                || line.contains("code generated")
                || line.contains("autogenerated")
                || line.contains("auto-generated")
                || line.contains("automatically generated")
                || line.contains("this file is generated")
                || line.contains("this file was generated"));
        // The C scanners and parsers of flex and Bison, beside their `.l` and `.y`: flex
        // writes its banner after a few `#line` directives.
        let parser_generator =
            line.contains("generated by flex") || line.contains("made by gnu bison");
        if marked || parser_generator {
            return ContentClass::Generated;
        }
    }
    ContentClass::Text
}

/// Whether a path looks like test code (by folder or file naming conventions).
pub fn is_test_path(path: &str) -> bool {
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or(path);
    if parts.any(|d| {
        matches!(
            d,
            "test" | "tests" | "__tests__" | "spec" | "specs" | "testing" | "testdata"
        )
    }) {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || (stem.ends_with("Test") && stem.len() > 4)
        || (stem.ends_with("Tests") && stem.len() > 5)
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// A label for text files that no grammar parses (kept as file nodes).
pub fn text_language(path: &str) -> &'static str {
    let file = path.rsplit('/').next().unwrap_or(path);
    let ext = file
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "markdown",
        "rst" => "rst",
        "yml" | "yaml" => "yaml",
        "toml" => "toml",
        "json" | "jsonc" => "json",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" | "scss" | "sass" | "less" => "css",
        "xml" | "xsd" | "xsl" => "xml",
        "ini" | "cfg" | "conf" => "config",
        _ if file == "Dockerfile" || file.starts_with("Dockerfile.") => "dockerfile",
        _ if file == "Makefile" || ext == "mk" => "makefile",
        _ => "text",
    }
}
