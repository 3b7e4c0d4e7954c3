//! `indexer serve` driven by a real MCP client: the Python SDK pinned in
//! tests/mcp/requirements.txt runs the scenarios of tests/mcp/scenarios.py against the
//! binary, over stdio and Streamable HTTP, on fixture repositories written here.
//!
//! The Python is `INDEXER_TEST_PYTHON` when set, else `target/mcp-venv/bin/python`, made on
//! first use (`.ci/run` makes it beforehand).

use crate::common::lab::{indexer, run_ok};
use crate::common::write_tree;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A scenario still running after this long is killed, with whatever it printed.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

/// The identity of the fixtures' commits: no git configuration is needed.
const GIT_ENV: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Fixture Author"),
    ("GIT_AUTHOR_EMAIL", "fixture@example.com"),
    ("GIT_COMMITTER_NAME", "Fixture Author"),
    ("GIT_COMMITTER_EMAIL", "fixture@example.com"),
];

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn requirements() -> PathBuf {
    manifest_dir().join("tests/mcp/requirements.txt")
}

/// The Python that has the pinned client, found or made once per test process.
fn python() -> &'static Path {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(find_python) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn find_python() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("INDEXER_TEST_PYTHON") {
        return Ok(p.into());
    }
    let venv = manifest_dir().join("target").join("mcp-venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        make_venv(&venv).map_err(|e| {
            format!(
                "cannot make the venv of the MCP tests at {}: {e}\n\
                 make it by hand:\n  python3 -m venv target/mcp-venv\n  \
                 target/mcp-venv/bin/python -m pip install -r tests/mcp/requirements.txt\n\
                 or set INDEXER_TEST_PYTHON to a Python that has those packages",
                venv.display()
            )
        })?;
    }
    Ok(python)
}

/// Makes the venv in a temporary sibling folder and renames it into place, so that a test
/// process running beside this one never sees half of it (the first rename wins).
fn make_venv(venv: &Path) -> Result<(), String> {
    let parent = venv.parent().expect("the venv has a parent");
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = parent.join(format!(".mcp-venv-{}-{nanos}", std::process::id()));
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{cmd:?} failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let made = run(Command::new("python3").args(["-m", "venv"]).arg(&tmp))
        .and_then(|()| {
            run(Command::new(tmp.join("bin").join("python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                ])
                .arg(requirements()))
        })
        .and_then(|()| {
            // What it was made from: .ci/run makes it again when the pins change.
            std::fs::copy(requirements(), tmp.join("requirements.txt"))
                .map(|_| ())
                .map_err(|e| format!("cannot copy the requirements into the venv: {e}"))
        });
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    match std::fs::rename(&tmp, venv) {
        Ok(()) => Ok(()),
        Err(_) if venv.join("bin").join("python").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(format!("cannot move the venv into place: {e}"))
        }
    }
}

/// tiktoken's o200k_base table as the tiktoken-rs crate ships it: the scenarios count the
/// answers' text with Python's tiktoken, which would otherwise download the table.
fn o200k_table() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("INDEXER_TEST_O200K") {
        return Some(p.into());
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry").join("src"))
        .ok()?
        .flatten()
        .filter_map(|registry| std::fs::read_dir(registry.path()).ok())
        .flat_map(|crates| crates.flatten())
        .filter(|c| c.file_name().to_string_lossy().starts_with("tiktoken-rs-"))
        .map(|c| c.path().join("assets").join("o200k_base.tiktoken"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().unwrap().port()
}

fn path_arg(p: &Path) -> String {
    p.to_str().expect("temporary paths are UTF-8").to_string()
}

/// Runs one scenario of scenarios.py with the cache at `cache`; fails the test, showing
/// what it printed, when it fails or outlives `SCENARIO_TIMEOUT`.
fn scenario(name: &str, cache: &Path, args: &[String]) {
    let mut cmd = Command::new(python());
    cmd.arg(manifest_dir().join("tests/mcp/scenarios.py"))
        .arg(name)
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_indexer"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(GIT_ENV)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a timeout ends the scenario and the servers it started.
        .process_group(0);
    if let Some(table) = o200k_table() {
        cmd.env("INDEXER_TEST_O200K", table);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python().display()));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + SCENARIO_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the scenario") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    match status {
        Some(s) if s.success() => println!("{stdout}"),
        Some(s) => {
            panic!("scenario {name} failed ({s})\n--- stdout\n{stdout}\n--- stderr\n{stderr}")
        }
        None => panic!(
            "scenario {name} was killed after {} s\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            SCENARIO_TIMEOUT.as_secs()
        ),
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(GIT_ENV)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// The shop fixture (its facts are listed at the top of scenarios.py): Python, Go and
/// TypeScript, a long text file, a config file, and a file .gitignore keeps out; a git
/// repository with one commit.
fn shop(root: &Path) {
    let mut reports = String::new();
    for i in 0..30 {
        reports.push_str(&format!(
            "def report_{i:02}(rows):\n    \"\"\"Report number {i} over the rows.\"\"\"\n    return len(rows) + {i}\n\n\n"
        ));
    }
    let long: String = (1..=300)
        .map(|i| {
            format!(
                "line {i:04}: the quick brown fox jumps over the lazy dog {}\n",
                i * 7
            )
        })
        .collect();
    write_tree(
        root,
        &[
            (".gitignore", "build/\n"),
            ("build/generated.py", "def ignored_function():\n    return 0\n"),
            (
                "pkg/shop.py",
                "\"\"\"Shop helpers.\"\"\"\n\nfrom pkg.util import helper\n\n\n\
                 def tax(total):\n    \"\"\"Tax owed on a basket total.\"\"\"\n    return total * 0.2\n\n\n\
                 def checkout(total):\n    \"\"\"Charge the customer for a basket total.\"\"\"\n    \
                 return helper(total + tax(total))\n",
            ),
            ("pkg/util.py", "def helper(x):\n    return x\n"),
            ("pkg/other.py", "def helper(y):\n    return y * 2\n"),
            ("pkg/reports.py", &reports),
            (
                "svc/inventory.go",
                "package svc\n\n// ServeInventory starts the inventory server.\n\
                 func ServeInventory(port int) int {\n\treturn listenOn(port)\n}\n\n\
                 func listenOn(port int) int {\n\treturn port + 1\n}\n",
            ),
            (
                "web/cart.ts",
                "export interface CartItem {\n  sku: string;\n  quantity: number;\n}\n\n\
                 export function cartTotal(items: CartItem[]): number {\n  \
                 return items.reduce((sum, item) => sum + priceOf(item), 0);\n}\n\n\
                 function priceOf(item: CartItem): number {\n  return item.quantity * 3;\n}\n",
            ),
            ("docs/long.txt", &long),
            ("config.toml", "[server]\nport = 8080\n"),
        ],
    );
    git(root, &["init", "-q", "-b", "main"]);
    commit_all(root, "shop");
}

/// The billing fixture: a second tree with its own `checkout`.
fn billing(root: &Path) {
    write_tree(
        root,
        &[
            (
                "billing/invoice.py",
                "def checkout(invoice):\n    \"\"\"Check out an invoice.\"\"\"\n    return settle(invoice)\n\n\n\
                 def settle(invoice):\n    return invoice\n",
            ),
            (
                "billing/ledger.go",
                "package billing\n\n// PostLedger posts an amount to the ledger.\n\
                 func PostLedger(amount int) int {\n\treturn amount\n}\n",
            ),
        ],
    );
}

struct Dirs {
    tmp: tempfile::TempDir,
    cache: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        Dirs { tmp, cache }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// The shop fixture at `rel` (its last segment is the repository's name).
    fn shop(&self, rel: &str) -> PathBuf {
        let root = self.path(rel);
        shop(&root);
        root
    }
}

/// Scenario `name` on the shop fixture with `extra` arguments, and a free port when it
/// runs over HTTP.
fn shop_scenario(name: &str, http: bool, extra: &[&str]) {
    let d = Dirs::new();
    let root = d.shop("shop");
    let mut args = vec!["--repo".into(), path_arg(&root)];
    args.extend(extra.iter().map(|a| a.to_string()));
    if http {
        args.extend(["--port".into(), free_port().to_string()]);
    }
    scenario(name, &d.cache, &args);
}

fn tools_scenario(transport: &str, mode: &str) {
    shop_scenario(
        "tools",
        transport == "http",
        &["--transport", transport, "--mode", mode],
    );
}

#[test]
fn stdio_initialize_handshake_lists_and_calls_every_tool() {
    tools_scenario("stdio", "legacy");
}

#[test]
fn stdio_stateless_revision_lists_and_calls_every_tool() {
    tools_scenario("stdio", "auto");
}

#[test]
fn http_initialize_handshake_lists_and_calls_every_tool() {
    tools_scenario("http", "legacy");
}

#[test]
fn http_stateless_revision_lists_and_calls_every_tool() {
    tools_scenario("http", "auto");
}

#[test]
fn answers_keep_to_budgets_and_cursors_reassemble_them() {
    shop_scenario("budgets", false, &[]);
}

#[test]
fn bad_calls_answer_errors_and_nothing_outside_the_tree_is_served() {
    let d = Dirs::new();
    let root = d.shop("shop");
    let outside = d.path("outside");
    write_tree(
        &outside,
        &[(
            "secret.py",
            "OUTSIDE_SECRET_CONTENT_42 = 'not for the server'\n",
        )],
    );
    std::os::unix::fs::symlink(outside.join("secret.py"), root.join("pkg/leak.py")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
    scenario(
        "errors",
        &d.cache,
        &[
            "--repo".into(),
            path_arg(&root),
            "--outside".into(),
            path_arg(&outside),
        ],
    );
}

#[test]
fn impact_of_a_work_tree_change_and_blast_of_its_callers_keep_to_budgets() {
    let d = Dirs::new();
    let root = d.shop("shop");
    write_tree(
        &root,
        &[(
            "tests/test_shop.py",
            "from pkg.shop import checkout\n\n\ndef test_checkout():\n    assert checkout(10) > 10\n",
        )],
    );
    commit_all(&root, "a test");
    // Left uncommitted: the change impact reports.
    let shop = std::fs::read_to_string(root.join("pkg/shop.py")).unwrap();
    assert!(shop.contains("return total * 0.2\n"));
    std::fs::write(
        root.join("pkg/shop.py"),
        shop.replace("return total * 0.2\n", "return total * 0.25\n"),
    )
    .unwrap();
    scenario(
        "impact-and-blast",
        &d.cache,
        &["--repo".into(), path_arg(&root)],
    );
}

#[test]
fn http_needs_the_token_a_loopback_origin_and_a_small_body() {
    shop_scenario("http-guard", true, &[]);
}

#[test]
fn http_bearer_scheme_is_case_insensitive() {
    shop_scenario("http-bearer-scheme", true, &[]);
}

#[test]
fn http_off_loopback_generates_prints_and_requires_a_token() {
    shop_scenario("http-generated-token", true, &[]);
}

#[test]
fn get_tree_text_shows_the_folders_of_the_files_it_lists() {
    shop_scenario("tree-text", false, &[]);
}

#[test]
fn map_answers_when_not_everything_fits() {
    shop_scenario("map-budgets", false, &[]);
}

#[test]
fn edits_are_seen_and_a_failed_refresh_serves_the_last_good_index() {
    let d = Dirs::new();
    let root = d.shop("shop");
    scenario("freshness", &d.cache, &["--repo".into(), path_arg(&root)]);
}

#[test]
fn two_repositories_are_searched_together_and_picked_by_name() {
    let d = Dirs::new();
    let one = d.shop("one/shop");
    let two = d.path("two/shop");
    billing(&two);
    scenario(
        "multi",
        &d.cache,
        &[
            "--repo".into(),
            path_arg(&one),
            "--repo".into(),
            path_arg(&two),
        ],
    );
}

#[test]
fn an_artifact_is_served_without_its_tree() {
    let d = Dirs::new();
    let root = d.shop("shop");
    let db = d.path("shop.db");
    let store = d.path("store");
    std::fs::create_dir_all(&store).unwrap();
    let artifact = store.join("shop.db.zst");
    run_ok(
        &[
            "index",
            &path_arg(&root),
            "--db",
            &path_arg(&db),
            "--no-artifact",
        ],
        &d.cache,
    );
    run_ok(
        &[
            "export",
            "--db",
            &path_arg(&db),
            "--output",
            &path_arg(&artifact),
        ],
        &d.cache,
    );
    // What get_file must answer once the tree and its database are gone.
    let expected = d.path("expected");
    for rel in [
        "config.toml",
        "docs/long.txt",
        "pkg/other.py",
        "pkg/reports.py",
        "pkg/shop.py",
        "pkg/util.py",
        "svc/inventory.go",
        "web/cart.ts",
    ] {
        std::fs::create_dir_all(expected.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), expected.join(rel)).unwrap();
    }
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_file(&db).unwrap();
    scenario(
        "artifact",
        &d.cache,
        &[
            "--repo".into(),
            path_arg(&artifact),
            "--expected".into(),
            path_arg(&expected),
        ],
    );
}

fn repo_list(cache: &Path) -> serde_json::Value {
    let out = run_ok(&["repo", "list", "--json"], cache);
    serde_json::from_slice(&out.stdout).expect("repo list --json prints JSON")
}

fn fails(args: &[&str], cache: &Path) -> String {
    let out = indexer(args, cache).output().expect("run indexer");
    assert!(
        !out.status.success(),
        "indexer {args:?} should have failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn registered_tree_and_remote_and_the_tree_around_the_folder_are_served() {
    let d = Dirs::new();
    let cache = &d.cache;
    let shop = d.shop("shop");
    let billing_root = d.path("billing");
    billing(&billing_root);
    run_ok(&["index", "--no-artifact", &path_arg(&billing_root)], cache);

    // The remote: a bare repository a work clone pushes to.
    let work = d.path("greet-src");
    write_tree(
        &work,
        &[(
            "lib/greet.py",
            "def remote_greeting(name):\n    return \"Hello, \" + name\n",
        )],
    );
    git(&work, &["init", "-q", "-b", "main"]);
    commit_all(&work, "greet");
    let bare = d.path("greet.git");
    git(
        d.tmp.path(),
        &["init", "-q", "--bare", "-b", "main", &path_arg(&bare)],
    );
    git(&work, &["remote", "add", "origin", &path_arg(&bare)]);
    git(&work, &["push", "-q", "origin", "main"]);
    let url = format!("file://{}", path_arg(&bare));

    assert_eq!(repo_list(cache), serde_json::json!([]));
    let out = run_ok(
        &["repo", "add", &path_arg(&shop), "--name", "shop-tree"],
        cache,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("registered shop-tree (tree)"), "{said}");
    let out = run_ok(&["repo", "add", &url, "--name", "remote1"], cache);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("registered remote1 (remote) {url}")),
        "{said}"
    );

    let err = fails(&["repo", "add", &path_arg(&shop), "--name", "again"], cache);
    assert!(err.contains("already registered as \"shop-tree\""), "{err}");
    let err = fails(
        &["repo", "add", &path_arg(&billing_root), "--name", "remote1"],
        cache,
    );
    assert!(err.contains("already registered"), "{err}");
    let err = fails(&["repo", "add", &path_arg(&shop), "--name", "../x"], cache);
    assert!(err.contains("not a usable repository name"), "{err}");
    let missing = format!("file://{}", path_arg(&d.path("missing.git")));
    let err = fails(&["repo", "add", &missing, "--name", "broken"], cache);
    assert!(err.contains("git clone failed"), "{err}");
    let remotes = cache.join("codebase-indexer").join("remotes");
    assert!(
        !remotes.join("broken").exists(),
        "a failed clone leaves nothing behind"
    );

    let listed = repo_list(cache);
    let clone = remotes.join("remote1");
    assert_eq!(
        listed,
        serde_json::json!([
            {"name": "shop-tree", "kind": "tree", "path": path_arg(&shop.canonicalize().unwrap())},
            {"name": "remote1", "kind": "remote", "path": path_arg(&clone), "url": url},
        ])
    );
    assert!(
        clone.join("lib/greet.py").is_file(),
        "the remote is cloned into the cache"
    );

    scenario(
        "registry",
        cache,
        &[
            "--cwd".into(),
            path_arg(&billing_root.join("billing")),
            "--remote-url".into(),
            url.clone(),
            "--remote-work".into(),
            path_arg(&work),
        ],
    );

    let out = run_ok(&["repo", "remove", "remote1"], cache);
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed remote1"));
    assert!(!clone.exists(), "removing a remote deletes its clone");
    let listed = repo_list(cache);
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shop-tree"]);
    let err = fails(&["repo", "remove", "remote1"], cache);
    assert!(err.contains("remote1"), "{err}");
    run_ok(&["repo", "remove", "shop-tree"], cache);
    assert!(
        shop.join("pkg/shop.py").is_file(),
        "removing a tree leaves it alone"
    );
    assert_eq!(repo_list(cache), serde_json::json!([]));
}

#[test]
fn serve_with_nothing_to_serve_says_how_to_give_it_something() {
    let d = Dirs::new();
    let empty = d.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = indexer(&["serve"], &d.cache)
        .current_dir(&empty)
        .stdin(Stdio::null())
        .output()
        .expect("run indexer serve");
    assert!(
        !out.status.success(),
        "serve with nothing to serve exited 0"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no repository to serve"), "{err}");
    assert!(err.contains("--repo"), "{err}");
}

#[test]
fn a_remote_without_a_default_branch_is_refused_and_leaves_nothing() {
    let d = Dirs::new();
    let bare = d.path("empty.git");
    git(d.tmp.path(), &["init", "-q", "--bare", &path_arg(&bare)]);
    git(&bare, &["symbolic-ref", "HEAD", "refs/heads/missing"]);
    let url = format!("file://{}", path_arg(&bare));
    let out = indexer(&["repo", "add", &url, "--name", "empty"], &d.cache)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("has no default branch to serve"),
        "{stderr}"
    );
    assert_eq!(repo_list(&d.cache), serde_json::json!([]));
    let remotes = d.cache.join("codebase-indexer").join("remotes");
    let left: Vec<_> = std::fs::read_dir(&remotes)
        .map(|r| r.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in {}: {left:?}", remotes.display());
}
