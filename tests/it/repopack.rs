//! The whole-repository pack and `unpack`, on a small project written by the test in Python,
//! Go, Rust and JavaScript: every full file comes back byte for byte, the budget is a ceiling
//! on the whole document (tiktoken's count), byte-identical files are packed once, a floor
//! over the budget is said, and a crafted pack writes nothing outside its folder.

use crate::common::lab::Rng;
use crate::common::{git, index, indexer, write_tree};
use codebase_indexer::{unpack, FileLayer, Index, PackFormat, RepoPack, RepoPackOptions};
use std::path::{Path, PathBuf};

const LICENSE: &str = "Permission is granted to use this project.\n";

fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let big: String = (0..300)
        .map(|i| format!("    total += entry_{i} * rate  # entry {i} of the ledger\n"))
        .collect();
    write_tree(
        &root,
        &[
            ("README.md", "# Shop\n\nOrders, payments and a ledger.\n"),
            ("pyproject.toml", "[project]\nname = \"shop\"\n"),
            (
                "shop/orders.py",
                "from shop.payments import charge\n\n\ndef checkout(order):\n    \"\"\"Charge the order.\"\"\"\n    return charge(order.total)\n",
            ),
            (
                "shop/payments.py",
                "def charge(amount):\n    # TODO: refunds\n    return round(amount * 1.2, 2)\n",
            ),
            (
                "shop/ledger.py",
                &format!("def monthly(rate):\n    total = 0\n{big}    return total\n"),
            ),
            (
                "svc/server.go",
                "package svc\n\n// Serve answers.\nfunc Serve(port int) error {\n\treturn nil\n}\n",
            ),
            (
                "core/src/lib.rs",
                "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            ),
            (
                "web/cart.js",
                "export function total(items) {\n  return items.reduce((a, b) => a + b, 0);\n}\n",
            ),
            ("LICENSE", LICENSE),
            ("legal/LICENSE", LICENSE),
            (
                "shop/settings.py",
                "API_TOKEN = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"\n",
            ),
            (
                "tests/test_orders.py",
                "from shop.orders import checkout\n\n\ndef test_checkout():\n    assert checkout\n",
            ),
        ],
    );
    let db = dir.path().join("index.db");
    index(&root, &db);
    (dir, root, db)
}

fn pack(db: &Path, budget: usize, format: PackFormat) -> RepoPack {
    Index::open(db)
        .unwrap()
        .pack_repository(&RepoPackOptions {
            budget,
            format,
            ..RepoPackOptions::default()
        })
        .unwrap()
}

fn tiktoken(text: &str) -> usize {
    tiktoken_rs::o200k_base()
        .unwrap()
        .encode_ordinary(text)
        .len()
}

#[test]
fn a_round_trip_restores_every_full_file_byte_for_byte() {
    let (dir, root, db) = project();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "The shop, first cut"]);
    let p = pack(&db, 100_000, PackFormat::Json);
    // The history and the TODOs come before the files.
    assert_eq!(p.git.len(), 1);
    assert!(p.git[0].ends_with("The shop, first cut"), "{:?}", p.git);
    assert_eq!(p.todos.len(), 1, "{:?}", p.todos);
    assert_eq!(
        (p.todos[0].path.as_str(), p.todos[0].line),
        ("shop/payments.py", 2)
    );
    assert_eq!(p.todos[0].text, "TODO: refunds");
    let v: serde_json::Value = serde_json::from_str(&p.text).unwrap();
    assert_eq!(v["todos"][0]["line"], 2);
    assert!(v["git"][0]
        .as_str()
        .unwrap()
        .ends_with("The shop, first cut"));
    assert_eq!(p.stats.files, 12);
    assert_eq!(p.tree.len(), 12);
    assert_eq!(p.files[0].path, "README.md", "the README ranks first");
    let full: Vec<&str> = p
        .files
        .iter()
        .filter(|f| f.layer == FileLayer::Full && f.duplicate_of.is_none())
        .map(|f| f.path.as_str())
        .collect();
    for path in [
        "shop/orders.py",
        "svc/server.go",
        "core/src/lib.rs",
        "web/cart.js",
    ] {
        assert!(full.contains(&path), "{path} in full: {full:?}");
    }
    // The two licences are one text: the copy points to the first.
    let copies: Vec<_> = p
        .files
        .iter()
        .filter(|f| f.duplicate_of.is_some())
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert_eq!(copies[0].content, None);
    assert_eq!(p.stats.duplicates, 1);

    let out = dir.path().join("restored");
    let done = unpack(p.text.as_bytes(), &out, false).unwrap();
    assert!(done.mismatched.is_empty(), "{:?}", done.mismatched);
    for path in &done.written {
        assert_eq!(
            std::fs::read(out.join(path)).unwrap(),
            std::fs::read(root.join(path)).unwrap(),
            "{path}"
        );
    }
    // The copy is restored from its carrier's text.
    assert!(done.written.contains(&"LICENSE".to_string()));
    assert!(done.written.contains(&"legal/LICENSE".to_string()));
    // The file whose secret the index redacted is not restored, and says why.
    let (_, why) = done
        .refused
        .iter()
        .find(|(p, _)| p == "shop/settings.py")
        .expect("settings.py refused");
    assert!(why.contains("redacted"), "{why}");
    // Gzipped, the same pack restores the same files, and gzips to the same bytes again.
    let gz = p.gzipped();
    assert_eq!(gz, p.gzipped());
    let unzipped = dir.path().join("from-gzip");
    let done_gz = unpack(&gz, &unzipped, false).unwrap();
    assert_eq!(done_gz.written, done.written);
    // A second unpack replaces nothing without --force.
    let again = unpack(p.text.as_bytes(), &out, false).unwrap();
    assert!(again.written.is_empty(), "{:?}", again.written);
    assert!(again.refused.iter().any(|(_, w)| w.contains("--force")));
    std::fs::write(out.join("shop/orders.py"), "edited\n").unwrap();
    let forced = unpack(p.text.as_bytes(), &out, true).unwrap();
    assert!(forced.written.contains(&"shop/orders.py".to_string()));
    assert_eq!(
        std::fs::read(out.join("shop/orders.py")).unwrap(),
        std::fs::read(root.join("shop/orders.py")).unwrap()
    );
}

#[test]
fn the_budget_is_a_ceiling_on_the_whole_document() {
    let (_dir, _root, db) = project();
    let floor = pack(&db, 1, PackFormat::Json)
        .floor_exceeds_budget
        .expect("a budget of one token is under the floor");
    let mut rng = Rng::new("REPOPACK_SEED", 3);
    let mut layers_seen = std::collections::HashSet::new();
    for round in 0..24 {
        let budget = floor + (rng.next() * 4000.0) as usize;
        let format = [PackFormat::Json, PackFormat::Markdown, PackFormat::Xml][round % 3];
        let p = pack(&db, budget, format);
        let n = tiktoken(&p.text);
        assert!(n <= budget, "{format:?} at {budget}: {n} tokens");
        assert_eq!(
            p.stats.tokens, n,
            "{format:?} at {budget}: the stated count"
        );
        assert!(p.floor_exceeds_budget.is_none());
        assert_eq!(
            p.stats.full + p.stats.skeleton + p.stats.metadata + p.stats.duplicates,
            p.stats.files
        );
        for f in &p.files {
            layers_seen.insert(f.layer);
        }
        if format == PackFormat::Json {
            let v: serde_json::Value = serde_json::from_str(&p.text).unwrap();
            assert_eq!(v["schema"], "codebase-indexer/repo-pack/1");
            assert_eq!(v["stats"]["tokens"], n);
        }
    }
    // Small budgets show the large file as its skeleton, which unpack does not restore.
    assert!(
        layers_seen.contains(&FileLayer::Skeleton),
        "{layers_seen:?}"
    );
    let p = (floor..floor + 4000)
        .step_by(50)
        .map(|b| pack(&db, b, PackFormat::Json))
        .find(|p| {
            p.files
                .iter()
                .any(|f| f.path == "shop/ledger.py" && f.layer == FileLayer::Skeleton)
        })
        .expect("a budget where the ledger is a skeleton");
    let out = tempfile::tempdir().unwrap();
    let done = unpack(p.text.as_bytes(), out.path(), false).unwrap();
    let (_, why) = done
        .refused
        .iter()
        .find(|(p, _)| p == "shop/ledger.py")
        .unwrap();
    assert!(why.contains("skeleton"), "{why}");
    assert!(!out.path().join("shop/ledger.py").exists());
}

#[test]
fn a_floor_over_the_budget_is_said_and_packs_no_file() {
    let (_dir, root, db) = project();
    let p = pack(&db, 20, PackFormat::Json);
    let floor = p.floor_exceeds_budget.expect("over");
    assert!(p.files.is_empty());
    assert_eq!(p.stats.metadata, p.stats.files);
    assert_eq!(p.stats.tokens, tiktoken(&p.text));
    assert!(floor > 20);
    // The command line says so on stderr.
    let cache = tempfile::tempdir().unwrap();
    let out = indexer(
        cache.path(),
        &root,
        &[
            "pack",
            "--all",
            "--budget",
            "20",
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("over the budget of 20"), "{err}");
}

#[test]
fn a_crafted_pack_writes_nothing_outside_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let target = dir.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, target.join("link")).unwrap();
    let sha = |text: &str| {
        use sha2::Digest;
        sha2::Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let file = |path: &str, content: &str| {
        serde_json::json!({
            "path": path, "language": "text", "size": content.len(), "sha256": sha(content),
            "layer": "full", "content": content,
        })
    };
    let escaped = outside.join("abs.txt");
    let doc = serde_json::json!({
        "schema": "codebase-indexer/repo-pack/1",
        "stats": {},
        "tree": {},
        "files": [
            file("../escaped.txt", "up"),
            file(escaped.to_str().unwrap(), "absolute"),
            file("link/through.txt", "through a link"),
            file("./dot.txt", "dot"),
            file("fine/ok.txt", "ok"),
            {"path": "wrong.txt", "language": "text", "size": 1, "sha256": sha("other"),
             "layer": "full", "content": "x"},
        ],
    });
    let done = unpack(doc.to_string().as_bytes(), &target, true).unwrap();
    assert_eq!(done.written, vec!["fine/ok.txt", "wrong.txt"]);
    assert_eq!(done.mismatched, vec!["wrong.txt"]);
    let refused: Vec<&str> = done.refused.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(refused.len(), 4, "{:?}", done.refused);
    assert!(!dir.path().join("escaped.txt").exists());
    assert!(!escaped.exists());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_to_string(target.join("fine/ok.txt")).unwrap(),
        "ok"
    );
    // Not a pack at all: a clear error.
    let e = unpack(
        b"{\"schema\": \"something/else\", \"files\": []}",
        &target,
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("schema"), "{e}");
    let e = unpack(b"not json", &target, false).unwrap_err();
    assert!(e.to_string().contains("not a whole-repository pack"), "{e}");
}

#[test]
fn a_task_puts_the_files_it_needs_first() {
    let (_dir, _root, db) = project();
    let index = Index::open(&db).unwrap();
    let with = |task: Option<&str>| {
        index
            .pack_repository(&RepoPackOptions {
                budget: 100_000,
                task: task.map(String::from),
                ..RepoPackOptions::default()
            })
            .unwrap()
    };
    let plain = with(None);
    let position = |p: &RepoPack, path: &str| p.files.iter().position(|f| f.path == path);
    let task = with(Some("the monthly ledger total is wrong for some rates"));
    assert_eq!(task.files[0].path, "README.md");
    assert_eq!(
        task.files[1].path,
        "shop/ledger.py",
        "{:?}",
        task.files.iter().map(|f| &f.path).collect::<Vec<_>>()
    );
    assert_eq!(task.files[1].layer, FileLayer::Full);
    assert!(position(&plain, "shop/ledger.py") > Some(1));
    assert!(task.stats.tokens <= 100_000);
}

#[test]
fn a_delta_holds_what_changed_since_the_last_pack() {
    let (_dir, root, _db) = project();
    let cache = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| crate::common::json(&indexer(cache.path(), &root, args));
    let files_in = |v: &serde_json::Value| -> Vec<String> {
        let mut paths: Vec<String> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        paths.sort();
        paths
    };
    run(&["index", ".", "--no-artifact", "--json"]);
    let listed = |dir: &Path| -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = crate::common::files_under(dir);
        out.sort();
        out
    };
    let before = listed(&root);
    let first = run(&["pack", "--all", "--json"]);
    assert_eq!(first["stats"]["files"], 12);
    assert!(first.get("deleted_since_last_pack").is_none());
    // The state lives in the cache folder, not in the repository.
    assert_eq!(listed(&root), before);
    let states = std::fs::read_dir(cache.path().join("codebase-indexer/packs"))
        .unwrap()
        .count();
    assert_eq!(states, 1);

    // An edit, an addition, a deletion.
    std::fs::write(
        root.join("shop/payments.py"),
        "def charge(amount):\n    return round(amount * 1.25, 2)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("svc/health.go"),
        "package svc\n\n// Healthy says yes.\nfunc Healthy() bool {\n\treturn true\n}\n",
    )
    .unwrap();
    std::fs::remove_file(root.join("web/cart.js")).unwrap();
    run(&["index", ".", "--no-artifact", "--json"]);
    let delta = run(&["pack", "--all", "--delta", "--json"]);
    assert_eq!(
        files_in(&delta),
        vec!["shop/payments.py", "svc/health.go"],
        "{delta}"
    );
    assert_eq!(
        delta["deleted_since_last_pack"],
        serde_json::json!(["web/cart.js"])
    );
    assert_eq!(delta["stats"]["unchanged"], 10);
    assert_eq!(delta["stats"]["files"], 2);
    let tree: Vec<&str> = delta["tree"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|names| {
            names
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
        })
        .collect();
    assert_eq!(tree.len(), 2, "{tree:?}");

    // Applied over a restore of the first pack, the delta brings the folder to the new tree.
    let out = tempfile::tempdir().unwrap();
    unpack(first.to_string().as_bytes(), out.path(), false).unwrap();
    let done = unpack(delta.to_string().as_bytes(), out.path(), true).unwrap();
    assert_eq!(done.written, vec!["shop/payments.py", "svc/health.go"]);
    assert_eq!(done.deleted_since_last_pack, vec!["web/cart.js"]);
    for path in ["shop/payments.py", "svc/health.go"] {
        assert_eq!(
            std::fs::read(out.path().join(path)).unwrap(),
            std::fs::read(root.join(path)).unwrap(),
            "{path}"
        );
    }

    // Nothing changed since: an empty delta. A plain pack still holds everything.
    let again = run(&["pack", "--all", "--delta", "--json"]);
    assert_eq!(files_in(&again), Vec::<String>::new());
    assert_eq!(again["deleted_since_last_pack"], serde_json::json!([]));
    assert_eq!(again["stats"]["unchanged"], 12);
    let whole = run(&["pack", "--all", "--json"]);
    assert_eq!(whole["stats"]["files"], 12);
    // In markdown the delta says so.
    let md = indexer(cache.path(), &root, &["pack", "--all", "--delta"]);
    let text = String::from_utf8_lossy(&md.stdout);
    assert!(
        text.contains("Only what changed since the last pack: 12 files unchanged, 0 deleted."),
        "{text}"
    );
}

#[test]
fn pages_after_the_first_give_every_other_file_once() {
    let (_dir, _root, db) = project();
    let index = Index::open(&db).unwrap();
    let page = |budget: usize, cursor: Option<String>, task: Option<&str>| {
        index.pack_repository(&RepoPackOptions {
            budget,
            format: PackFormat::Markdown,
            cursor,
            task: task.map(String::from),
            ..RepoPackOptions::default()
        })
    };
    let floor = page(1, None, None).unwrap().floor_exceeds_budget.unwrap();
    for budget in [floor + 300, floor + 900] {
        let mut shown: Vec<(String, FileLayer)> = Vec::new();
        let mut cursor = None;
        let mut pages = 0;
        loop {
            let p = page(budget, cursor.take(), None).unwrap();
            pages += 1;
            assert!(pages < 40, "paging does not end");
            let n = tiktoken(&p.text);
            assert!(n <= budget, "page {pages} at {budget}: {n} tokens");
            assert_eq!(p.stats.tokens, n);
            if pages > 1 {
                assert!(p
                    .text
                    .starts_with(&format!("# Repository pack, page {pages}")));
                assert!(
                    !p.text.contains("## Tree"),
                    "the tree is on the first page only"
                );
                assert!(!p.files.is_empty(), "a later page moves on");
            }
            shown.extend(
                p.files
                    .iter()
                    .filter(|f| f.duplicate_of.is_none())
                    .map(|f| (f.path.clone(), f.layer)),
            );
            match p.next_cursor {
                Some(c) => {
                    assert!(p.text.contains(&c), "the page names its cursor");
                    cursor = Some(c);
                }
                None => break,
            }
        }
        assert!(pages > 1, "{budget}: one page held everything");
        // Every file but the licence's copy, in full exactly once; only the ledger, larger
        // than a page, as its skeleton instead.
        let mut covered: Vec<&str> = shown.iter().map(|(p, _)| p.as_str()).collect();
        covered.sort();
        covered.dedup();
        assert_eq!(covered.len(), 11, "{budget}: {shown:?}");
        let full: Vec<&str> = shown
            .iter()
            .filter(|(_, l)| *l == FileLayer::Full)
            .map(|(p, _)| p.as_str())
            .collect();
        let mut unique = full.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), full.len(), "a file in full twice: {full:?}");
        let not_full: Vec<&&str> = covered.iter().filter(|p| !full.contains(p)).collect();
        assert_eq!(not_full, vec![&"shop/ledger.py"], "{budget}: {shown:?}");
    }
    // A cursor of another pack, or no cursor at all, is refused with a clear error.
    let first = page(floor + 300, None, None).unwrap();
    let cursor = first.next_cursor.expect("more than one page");
    let e = page(floor + 300, Some(cursor), Some("the ledger")).unwrap_err();
    assert!(e.to_string().contains("another pack"), "{e}");
    let e = page(floor + 300, Some("rp1.x.y".into()), None).unwrap_err();
    assert!(e.to_string().contains("not a cursor"), "{e}");
}

#[test]
fn the_readme_comes_before_its_translations() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(
        &root,
        &[
            ("README.cn.md", "# 商店\n"),
            ("README.de.md", "# Laden\n"),
            ("README.md", "# Shop\n"),
            ("shop.py", "def buy():\n    return 1\n"),
        ],
    );
    let db = dir.path().join("index.db");
    index(&root, &db);
    let p = pack(&db, 10_000, PackFormat::Json);
    let order: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(order[0], "README.md", "{order:?}");
}
