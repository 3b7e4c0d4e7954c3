//! Remote repositories: a shallow clone into the cache folder made with the `git` program
//! (the user's own git, with their ssh-agent and credential helper; nothing here stores a
//! credential), fetched again in the background. Git never prompts: a fetch that needs a
//! password fails and says so.

use crate::error::{Error, Result};
use crate::store::project;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `arg` names a git remote rather than a local path.
pub fn is_url(arg: &str) -> bool {
    arg.contains("://") || (arg.contains('@') && arg.contains(':') && !Path::new(arg).exists())
}

/// Where the clone of the remote registered as `name` lives.
pub fn clone_dir(name: &str) -> Result<PathBuf> {
    Ok(project::cache_dir()?.join("remotes").join(name))
}

fn git(args: &[&str], dir: Option<&Path>) -> Result<String> {
    let mut cmd = Command::new("git");
    if let Some(dir) = dir {
        cmd.arg("-C").arg(dir);
    }
    cmd.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "")
        .env("SSH_ASKPASS", "")
        // ssh must fail rather than ask (host keys, passwords).
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .stdin(std::process::Stdio::null());
    let out = cmd.output().map_err(|e| {
        Error::invalid(format!(
            "cannot run git ({e}): remote repositories need the git program"
        ))
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Other {
            message: format!("git {} failed: {}", args[0], stderr.trim()),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Clones `url` shallowly into `dest` (which must not exist): into a temporary sibling
/// first, renamed into place, so a failed clone leaves nothing behind.
pub fn clone(url: &str, dest: &Path) -> Result<()> {
    if dest.exists() {
        return Err(Error::invalid(format!(
            "{} already exists: remove it or pick another --name",
            dest.display()
        )));
    }
    let parent = dest.parent().expect("a clone folder has a parent");
    std::fs::create_dir_all(parent).map_err(Error::io(
        parent,
        format!("cannot create {}", parent.display()),
    ))?;
    let tmp = tempfile::Builder::new()
        .prefix(".clone-")
        .tempdir_in(parent)
        .map_err(Error::io(
            parent,
            format!("cannot write into {}", parent.display()),
        ))?;
    let into = tmp.path().join("tree");
    let into_str = into.to_string_lossy().into_owned();
    git(
        &["clone", "--depth", "1", "--quiet", "--", url, &into_str],
        None,
    )?;
    // A remote whose HEAD names no branch clones to an empty tree, with only a warning.
    if git(&["rev-parse", "--verify", "--quiet", "HEAD"], Some(&into)).is_err() {
        return Err(Error::invalid(format!(
            "{url} has no default branch to serve (its HEAD names a branch it does not have)"
        )));
    }
    std::fs::rename(&into, dest).map_err(Error::io(
        dest,
        format!("cannot move the clone to {}", dest.display()),
    ))?;
    Ok(())
}

/// Fetches the remote's default branch and moves the clone to it; whether it moved.
pub fn update(dir: &Path) -> Result<bool> {
    let before = git(&["rev-parse", "HEAD"], Some(dir))?;
    git(
        &["fetch", "--depth", "1", "--quiet", "origin", "HEAD"],
        Some(dir),
    )?;
    let after = git(&["rev-parse", "FETCH_HEAD"], Some(dir))?;
    if after == before {
        return Ok(false);
    }
    git(&["reset", "--hard", "--quiet", "FETCH_HEAD"], Some(dir))?;
    Ok(true)
}

/// A pseudo-random factor in [0.9, 1.1): refreshes of many remotes spread out.
pub fn jitter() -> f64 {
    let mut b = [0u8; 2];
    let _ = getrandom::fill(&mut b);
    0.9 + f64::from(u16::from_le_bytes(b)) / f64::from(u16::MAX) * 0.2
}
