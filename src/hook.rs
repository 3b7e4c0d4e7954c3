//! The git pre-commit hook that keeps a committed artifact exact: at each commit it indexes
//! what the commit holds (the staged files, not the working tree) and stages the artifact of
//! that, so no commit carries a stale one while the everyday `indexer index` never pays the
//! export. Git runs through the `git` program: the user's own configuration, hooks path and
//! worktrees apply as they do to every other git command.

use crate::error::{Error, Result};
use crate::facade::{ArtifactWrite, Index, IndexOptions};
use crate::index::IndexSummary;
use crate::store::artifact::Freshness;
use crate::store::{artifact, staging};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the commit carries of the artifact, in `.codebase-index/`.
const ARTIFACT_FILES: [&str; 3] = [artifact::FILE, artifact::MANIFEST, ".gitattributes"];

/// The first line after the shebang of a hook this module wrote.
const MARK: &str = "# codebase-indexer pre-commit hook";

/// Writes the pre-commit hook of the git repository at `repo` (any folder inside it),
/// calling `indexer` at `program`. A hook of someone else's is left alone unless `force`.
/// Returns the hook's path.
pub fn install_pre_commit_hook(repo: &Path, program: &Path, force: bool) -> Result<PathBuf> {
    let hooks = PathBuf::from(git(repo, &["rev-parse", "--git-path", "hooks"])?);
    let hooks = if hooks.is_absolute() {
        hooks
    } else {
        repo.join(hooks)
    };
    let hook = hooks.join("pre-commit");
    if let Ok(existing) = std::fs::read_to_string(&hook) {
        if !existing.contains(MARK) && !force {
            return Err(Error::invalid(format!(
                "{} exists and is not this tool's: add `indexer hook pre-commit` to it, \
                 or pass --force to replace it",
                hook.display()
            )));
        }
    }
    let script = format!(
        "#!/bin/sh\n{MARK}: stages the artifact of what this commit holds.\n\
         exec '{}' hook pre-commit\n",
        program.display().to_string().replace('\'', "'\\''")
    );
    let cannot_write = || Error::io(&hook, format!("cannot write {}", hook.display()));
    std::fs::create_dir_all(&hooks).map_err(cannot_write())?;
    staging::write_atomically(&hook, script.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
            .map_err(cannot_write())?;
    }
    Ok(hook)
}

/// What the hook does: indexes the staged files of the repository at `repo` in a private
/// folder (starting from the staged artifact, so only files that differ are extracted),
/// writes the artifact of that into the work tree's `.codebase-index/` and stages it.
/// Returns the manifest when the artifact changed.
pub fn run_pre_commit_hook(repo: &Path) -> Result<Option<artifact::Manifest>> {
    let root = PathBuf::from(git(repo, &["rev-parse", "--show-toplevel"])?);
    if work_tree_is_the_commit(&root)? {
        // The usual case: the files on disk are the commit's, so the project's own index
        // is brought up to date (incrementally) and exported in place.
        let options = IndexOptions {
            artifact: ArtifactWrite::Always,
            ..IndexOptions::default()
        };
        let (index, summary) = Index::build(&root, options)?;
        ensure_current(&index, &summary)?;
        stage_artifact(&root)?;
        return Ok(summary.artifact);
    }
    let scratch = tempfile::Builder::new()
        .prefix("indexer-commit-")
        .tempdir()
        .map_err(Error::io(
            &std::env::temp_dir(),
            "cannot create a folder for the staged files",
        ))?;
    let staged = scratch.path().join("tree");
    let mut prefix = staged.to_string_lossy().into_owned();
    prefix.push('/');
    git(
        &root,
        &["checkout-index", "--all", &format!("--prefix={prefix}")],
    )?;
    // The walk honours `.gitignore` files without a repository around them, as in a clone.
    let options = IndexOptions {
        db: Some(scratch.path().join("staged.db")),
        project: Some("staged".into()),
        artifact: ArtifactWrite::Always,
        ..IndexOptions::default()
    };
    let (index, summary) = Index::build(&staged, options)?;
    ensure_current(&index, &summary)?;
    let from = staged.join(artifact::DIR);
    let to = root.join(artifact::DIR);
    std::fs::create_dir_all(&to)
        .map_err(Error::io(&to, format!("cannot create {}", to.display())))?;
    for name in ARTIFACT_FILES {
        let bytes = std::fs::read(from.join(name)).map_err(Error::io(
            &from.join(name),
            format!("the staged index wrote no {name}"),
        ))?;
        staging::write_atomically(&to.join(name), &bytes)?;
    }
    stage_artifact(&root)?;
    Ok(summary.artifact)
}

/// A commit must never carry a stale artifact: when the export did not happen (a read-only
/// folder, no room), the hook fails and says why, and the commit does not go ahead.
fn ensure_current(index: &Index, summary: &IndexSummary) -> Result<()> {
    match index.artifact_freshness()? {
        Some(Freshness::Current { .. }) => Ok(()),
        other => Err(Error::invalid(format!(
            "the artifact could not be brought up to date ({other:?}){}{}",
            if summary.notes.is_empty() { "" } else { ": " },
            summary.notes.join("; ")
        ))),
    }
}

/// Whether every tracked file on disk is as staged and no file the walk would index is
/// untracked: then indexing the work tree indexes exactly what the commit holds.
fn work_tree_is_the_commit(root: &Path) -> Result<bool> {
    if git(root, &["diff", "--quiet"]).is_err() {
        return Ok(false);
    }
    let untracked = git(root, &["ls-files", "--others", "--exclude-standard"])?;
    let artifact_dir = format!("{}/", artifact::DIR);
    Ok(untracked.lines().all(|p| p.starts_with(&artifact_dir)))
}

fn stage_artifact(root: &Path) -> Result<()> {
    let mut add = vec!["add", "--"];
    let paths: Vec<String> = ARTIFACT_FILES
        .iter()
        .map(|n| format!("{}/{n}", artifact::DIR))
        .collect();
    add.extend(paths.iter().map(String::as_str));
    git(root, &add)?;
    Ok(())
}

/// Runs `git` in `dir`; its trimmed standard output, or its standard error as the error.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(Error::io(dir, "cannot run git (is it installed?)"))?;
    if !out.status.success() {
        return Err(Error::invalid(format!(
            "git {} failed in {}: {}",
            args.first().unwrap_or(&""),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
