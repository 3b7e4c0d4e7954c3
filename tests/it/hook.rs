//! Real git repositories made by the tests: the pre-commit hook (each commit carries the
//! artifact of what it holds, staged files only, byte-identical to `indexer export` of an
//! index of the committed tree), and a fresh clone starting from its committed artifact with
//! git's blob ids instead of reading every file.

use std::path::Path;
use std::process::{Command, Output};

/// `program` in `cwd` with a git and an indexer of the test's own: no user configuration,
/// no shared cache.
fn command(program: &str, cwd: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com");
    c
}

fn run(program: &str, cwd: &Path, home: &Path, args: &[&str]) -> Output {
    let out = command(program, cwd, home, args).output().expect("run");
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn git(cwd: &Path, home: &Path, args: &[&str]) -> Vec<u8> {
    run("git", cwd, home, args).stdout
}

fn indexer(cwd: &Path, home: &Path, args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_indexer"), cwd, home, args)
}

/// `indexer export` of an index of `rev` checked out in a fresh clone.
fn export_of(repo: &Path, home: &Path, rev: &str, name: &str) -> Vec<u8> {
    let clone = home.join(name);
    git(home, home, &["clone", "-q", repo.to_str().unwrap(), name]);
    git(&clone, home, &["checkout", "-q", rev]);
    // Without the committed artifact, so that nothing of it is reused.
    std::fs::remove_dir_all(clone.join(".codebase-index")).unwrap();
    let db = home.join(format!("{name}.db"));
    let db = db.to_str().unwrap();
    indexer(&clone, home, &["index", ".", "--db", db, "--no-artifact"]);
    let out = home.join(format!("{name}.db.zst"));
    indexer(
        &clone,
        home,
        &["export", "--db", db, "--output", out.to_str().unwrap()],
    );
    std::fs::read(out).unwrap()
}

#[test]
fn each_commit_carries_the_artifact_of_what_it_holds() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = home.join("repo");
    std::fs::create_dir_all(repo.join("shop")).unwrap();
    let write = |path: &str, text: &str| std::fs::write(repo.join(path), text).unwrap();
    write(
        "shop/tax.py",
        "def rate():\n    return 0.2\n\n\ndef tax(x):\n    return x * rate()\n",
    );
    write(
        "shop/cart.py",
        "from shop.tax import tax\n\n\ndef total(x):\n    return x + tax(x)\n",
    );
    write(".gitignore", "build/\nvendor/\n");
    std::fs::create_dir_all(repo.join("vendor")).unwrap();
    write("vendor/lib.py", "def vendored():\n    return 3\n");
    git(&repo, home, &["init", "-q"]);
    // Tracked although ignored: a clone's index skips it, and so must the hook's.
    git(&repo, home, &["add", "-f", "vendor/lib.py"]);
    indexer(&repo, home, &["hook", "install"]);
    let hook = std::fs::read_to_string(repo.join(".git/hooks/pre-commit")).unwrap();
    assert!(hook.contains("hook pre-commit"), "{hook}");
    // Installing again replaces its own hook; someone else's is kept unless forced.
    indexer(&repo, home, &["hook", "install"]);

    git(&repo, home, &["add", "."]);
    git(&repo, home, &["commit", "-q", "-m", "first"]);
    let committed = git(&repo, home, &["show", "HEAD:.codebase-index/graph.db.zst"]);
    assert_eq!(committed, export_of(&repo, home, "HEAD", "first"));

    // An edit is staged, another is not, and an ignored file appears: the commit's artifact
    // is the staged tree's.
    write(
        "shop/tax.py",
        "def rate():\n    return 0.25\n\n\ndef tax(x):\n    return x * rate()\n\n\ndef zero():\n    return 0\n",
    );
    git(&repo, home, &["add", "shop/tax.py"]);
    write("shop/cart.py", "def unstaged():\n    return 1\n");
    std::fs::create_dir_all(repo.join("build")).unwrap();
    write("build/gen.py", "def generated():\n    return 2\n");
    git(&repo, home, &["commit", "-q", "-m", "second"]);
    let second = git(&repo, home, &["show", "HEAD:.codebase-index/graph.db.zst"]);
    assert_ne!(second, committed);
    assert_eq!(second, export_of(&repo, home, "HEAD", "second"));
    // The unstaged edit is still only in the work tree.
    let status = String::from_utf8(git(&repo, home, &["status", "--porcelain"])).unwrap();
    assert!(status.contains(" M shop/cart.py"), "{status}");
    assert!(!status.contains(".codebase-index"), "{status}");
}

#[test]
fn a_foreign_hook_is_kept_and_outside_git_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = home.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, home, &["init", "-q"]);
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\nmake lint\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_indexer"))
        .args(["hook", "install"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        "#!/bin/sh\nmake lint\n"
    );
    indexer(&repo, home, &["hook", "install", "--force"]);
    assert!(std::fs::read_to_string(&hook)
        .unwrap()
        .contains("hook pre-commit"));

    let plain = home.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_indexer"))
        .args(["hook", "install"])
        .current_dir(&plain)
        .env("GIT_CEILING_DIRECTORIES", home)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a git repository"), "{err}");
}

#[test]
fn a_commit_whose_artifact_cannot_be_written_is_stopped() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = home.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("a.py"), "def a():\n    return 1\n").unwrap();
    // `.codebase-index` taken by a file: the artifact has nowhere to go.
    std::fs::write(repo.join(".codebase-index"), "not a folder\n").unwrap();
    git(&repo, home, &["init", "-q"]);
    indexer(&repo, home, &["hook", "install"]);
    git(&repo, home, &["add", "."]);
    let out = command("git", &repo, home, &["commit", "-q", "-m", "blocked"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("could not be brought up to date"), "{err}");
    let log = command("git", &repo, home, &["rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .unwrap();
    assert!(!log.status.success(), "no commit was made");
}

#[test]
fn a_fresh_clone_reads_only_the_files_git_does_not_vouch_for() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = home.join("origin");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, home, &["init", "-q"]);
    let files = [
        (
            "app/models.py",
            "class User:\n    def name(self):\n        return helper()\n",
        ),
        ("app/util.py", "def helper():\n    return 1\n"),
        (
            "app/views.py",
            "from app.models import User\n\ndef show():\n    return User().name()\n",
        ),
        (
            "cmd/main.go",
            "package main\n\nfunc main() { run() }\n\nfunc run() {}\n",
        ),
        ("lib/core.rs", "pub fn core() -> u32 { 1 }\n"),
        ("README.md", "# origin\n"),
    ];
    for (path, text) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let db = home.join("origin.db");
    indexer(
        &repo,
        home,
        &["index", ".", "--db", db.to_str().unwrap(), "--export"],
    );
    git(&repo, home, &["add", "-A"]);
    git(&repo, home, &["commit", "-q", "-m", "with its artifact"]);

    git(
        home,
        home,
        &["clone", "-q", repo.to_str().unwrap(), "clone"],
    );
    let clone = home.join("clone");
    // Edited in the work tree only (same size: only the blob id tells), edited and staged,
    // and a file git does not track.
    std::fs::write(clone.join("app/util.py"), "def helper():\n    return 2\n").unwrap();
    std::fs::write(clone.join("lib/core.rs"), "pub fn core() -> u32 { 2 }\n").unwrap();
    git(&clone, home, &["add", "lib/core.rs"]);
    std::fs::write(
        clone.join("app/extra.py"),
        "def extra():\n    return helper()\n",
    )
    .unwrap();
    let clone_db = home.join("clone.db");
    let out = indexer(
        &clone,
        home,
        &["index", ".", "--db", clone_db.to_str().unwrap(), "--json"],
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary["bootstrapped_from"].is_string(), "{summary}");
    assert_eq!(summary["extracted"], 3, "{summary}");
    assert_eq!(summary["vouched_by_git"], 4, "{summary}");
    // Exactly the index a full run over the clone builds.
    let full_db = home.join("full.db");
    indexer(
        &clone,
        home,
        &[
            "index",
            ".",
            "--db",
            full_db.to_str().unwrap(),
            "--rebuild",
            "--no-artifact",
        ],
    );
    for table in [
        "SELECT path, language, size, hash, lines, flags, module FROM files ORDER BY path",
        "SELECT id, kind, qualified_name, start_line, end_line FROM nodes ORDER BY id",
        "SELECT source_id, target_id, kind, confidence, strategy, line FROM edges \
         ORDER BY 1, 2, 3, 6",
        "SELECT source_id, name, reason, line FROM unresolved ORDER BY 1, 2, 4",
    ] {
        assert_eq!(
            crate::common::dump(&clone_db, table),
            crate::common::dump(&full_db, table),
            "{table}"
        );
    }
    // The next run finds every file by its modification time.
    let out = indexer(
        &clone,
        home,
        &["index", ".", "--db", clone_db.to_str().unwrap(), "--json"],
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["extracted"], 0, "{summary}");
    assert_eq!(summary["vouched_by_git"], 0, "{summary}");

    // Without git's word (no `.git`), every file is read and hashed as before.
    let plain = home.join("plain");
    git(
        home,
        home,
        &["clone", "-q", repo.to_str().unwrap(), "plain"],
    );
    std::fs::remove_dir_all(plain.join(".git")).unwrap();
    let plain_db = home.join("plain.db");
    let out = indexer(
        &plain,
        home,
        &["index", ".", "--db", plain_db.to_str().unwrap(), "--json"],
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary["bootstrapped_from"].is_string(), "{summary}");
    assert_eq!(summary["extracted"], 0, "{summary}");
    assert_eq!(summary["vouched_by_git"], 0, "{summary}");
}
