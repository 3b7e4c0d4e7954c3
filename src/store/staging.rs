//! Files are written beside their destination under a temporary name that carries the
//! writer's process id, and renamed into place once complete: a reader sees the old file or
//! the new one, never part of one. A killed writer leaves only temporaries, which the next
//! writer of the same destination removes.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `<path>.tmp-<pid>.<ext>`: a temporary for `path`, in its folder (a rename never crosses
/// file systems), unique to this process.
pub fn temp_beside(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".tmp-{}.{ext}", std::process::id()));
    PathBuf::from(s)
}

pub fn rename_into_place(temp: &Path, dest: &Path) -> Result<()> {
    std::fs::rename(temp, dest)
        .with_context(|| format!("cannot move {} into place", dest.display()))
}

/// Replaces `path` with `bytes` in one rename; an unchanged file is not rewritten.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    let temp = temp_beside(path, "tmp");
    let written = (|| {
        let mut f = std::fs::File::create(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    rename_into_place(&temp, path)
}

/// Removes the temporaries of `path` (and their SQLite journals) whose writer is gone.
pub fn remove_stale(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.tmp-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let alive = rest[..digits]
            .parse::<u32>()
            .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_temporaries_of_gone_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("graph.db.zst");
        let mine = temp_beside(&dest, "db");
        // No process has this id (above the kernel's pid_max limit).
        let gone = dir.path().join("graph.db.zst.tmp-4194305.db");
        let gone_journal = dir.path().join("graph.db.zst.tmp-4194305.db-journal");
        let other = dir.path().join("other.tmp-4194305.db");
        for p in [&dest, &mine, &gone, &gone_journal, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        remove_stale(&dest);
        assert!(dest.exists() && mine.exists() && other.exists());
        assert!(!gone.exists() && !gone_journal.exists());
    }

    #[test]
    fn an_unchanged_file_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("artifact.json");
        write_atomically(&p, b"{}").unwrap();
        let before = std::fs::metadata(&p).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_atomically(&p, b"{}").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), before);
        write_atomically(&p, b"{\"a\":1}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}");
    }
}
