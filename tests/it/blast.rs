//! `indexer blast` and `Index::blast` on fixture repositories: the callers' tree with edge
//! and path confidences, the tests that reach the target, the unresolved sites naming a
//! reached definition, depth and confidence cut-offs, a file as the target, and the errors.

use crate::common::{indexer, json, options, write_tree};
use codebase_indexer::{Blast, BlastOptions, Error, Index};
use std::path::Path;
use std::process::Output;

/// A chain of callers across files: tax <- checkout <- handle <- (serve, the test);
/// tax <- Ledger.settle_books (import) <- nightly (a method guessed by its unique name, 0.5);
/// and `calc.tax(3)`, a call on an unknown receiver that names tax but does not resolve (as
/// `calc.vat(3)` names vat, which nothing else calls).
const SHOP: &[(&str, &str)] = &[
    ("pkg/__init__.py", ""),
    (
        "pkg/shop.py",
        "def tax(total):\n    return total * 0.2\n\n\ndef checkout(total):\n    return total + tax(total)\n",
    ),
    (
        "pkg/api.py",
        "from pkg.shop import checkout\n\n\ndef handle(req):\n    return checkout(req)\n\n\n\
         def serve(req):\n    return handle(req)\n",
    ),
    (
        "pkg/ledger.py",
        "from pkg.shop import tax\n\n\nclass Ledger:\n    def settle_books(self, amount):\n        \
         return tax(amount)\n",
    ),
    (
        "pkg/batch.py",
        "def nightly(ledger):\n    return ledger.settle_books(1)\n",
    ),
    (
        "pkg/misc.py",
        "def guess(calc):\n    return calc.tax(3) + calc.vat(3)\n",
    ),
    ("pkg/rates.py", "def vat(total):\n    return total * 0.1\n"),
    (
        "tests/test_shop.py",
        "from pkg.api import handle\n\n\ndef test_handle():\n    assert handle(10) == 12\n",
    ),
];

fn text(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// The shop indexed by the binary: (tree, cache).
fn indexed_shop() -> (tempfile::TempDir, tempfile::TempDir) {
    let repo = tempfile::tempdir().unwrap();
    write_tree(repo.path(), SHOP);
    let cache = tempfile::tempdir().unwrap();
    json(&indexer(
        cache.path(),
        repo.path(),
        &["index", ".", "--no-artifact", "--json"],
    ));
    (repo, cache)
}

/// (depth, qualified name, parent's qualified name) of each node, in the tree's order.
fn tree(b: &serde_json::Value) -> Vec<(u64, String, Option<String>)> {
    let nodes = b["nodes"].as_array().expect("nodes");
    nodes
        .iter()
        .map(|n| {
            let parent = n["parent"].as_u64().map(|p| {
                nodes[p as usize]["qualified_name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            });
            (
                n["depth"].as_u64().unwrap(),
                n["qualified_name"].as_str().unwrap().to_string(),
                parent,
            )
        })
        .collect()
}

fn node<'a>(b: &'a serde_json::Value, qualified_name: &str) -> &'a serde_json::Value {
    b["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["qualified_name"] == qualified_name)
        .unwrap_or_else(|| panic!("{qualified_name} is not in the tree: {b:#}"))
}

fn close(a: &serde_json::Value, b: f64) -> bool {
    (a.as_f64().expect("a number") - b).abs() < 1e-9
}

fn owned(rows: &[(u64, &str, Option<&str>)]) -> Vec<(u64, String, Option<String>)> {
    rows.iter()
        .map(|(d, q, p)| (*d, q.to_string(), p.map(str::to_string)))
        .collect()
}

#[test]
fn python_callers_form_a_tree_with_path_confidences_tests_and_unresolved_sites() {
    let (repo, cache) = indexed_shop();
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--json"],
    ));
    assert_eq!(b["schema"], "codebase-indexer/blast/1");
    assert_eq!(b["target_kind"], "definition");
    assert_eq!(b["root"]["qualified_name"], "pkg.shop.tax");
    assert_eq!(b["depth"], 3);
    assert_eq!(
        tree(&b),
        owned(&[
            (0, "pkg.shop.tax", None),
            (1, "pkg.shop.checkout", Some("pkg.shop.tax")),
            (2, "pkg.api.handle", Some("pkg.shop.checkout")),
            (3, "pkg.api.serve", Some("pkg.api.handle")),
            (3, "tests.test_shop.test_handle", Some("pkg.api.handle")),
            (1, "pkg.ledger.Ledger.settle_books", Some("pkg.shop.tax")),
            (
                2,
                "pkg.batch.nightly",
                Some("pkg.ledger.Ledger.settle_books")
            ),
        ]),
        "{b:#}"
    );
    let checkout = node(&b, "pkg.shop.checkout");
    assert!(close(&checkout["confidence"], 0.95), "{checkout}");
    assert_eq!(checkout["strategy"], "same_file");
    assert_eq!(checkout["site_line"], 6);
    assert_eq!(
        (&checkout["path"], &checkout["line"]),
        (&"pkg/shop.py".into(), &5.into())
    );
    let handle = node(&b, "pkg.api.handle");
    assert!(close(&handle["confidence"], 0.85), "{handle}");
    assert!(close(&handle["path_confidence"], 0.95 * 0.85), "{handle}");
    let nightly = node(&b, "pkg.batch.nightly");
    assert_eq!(nightly["strategy"], "unique_name");
    assert!(close(&nightly["path_confidence"], 0.85 * 0.5), "{nightly}");
    assert_eq!(node(&b, "tests.test_shop.test_handle")["test"], true);
    assert_eq!(node(&b, "pkg.api.serve")["test"], false);
    assert_eq!(b["reached"], 6);
    assert_eq!(b["left_out"], 0);

    let tests = b["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1, "{b:#}");
    assert_eq!(tests[0]["qualified_name"], "tests.test_shop.test_handle");
    assert_eq!(tests[0]["reaches"], "pkg.shop.tax");
    assert_eq!(
        tests[0]["via"],
        serde_json::json!(["pkg.api.handle", "pkg.shop.checkout"])
    );
    assert!(close(&tests[0]["path_confidence"], 0.95 * 0.85 * 0.85));

    let sites = b["unresolved"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{b:#}");
    assert_eq!(sites[0]["might_reach"], "pkg.shop.tax");
    assert_eq!(sites[0]["text"], "calc.tax");
    assert_eq!(sites[0]["caller"], "pkg.misc.guess");
    assert_eq!(
        (&sites[0]["path"], &sites[0]["line"]),
        (&"pkg/misc.py".into(), &2.into())
    );

    // The terminal tree: indented a hop at a time, confidences on each line, then the
    // unresolved sites, the tests and the summary.
    let out = text(&indexer(cache.path(), repo.path(), &["blast", "tax"]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("blast radius of pkg.shop.tax (Function pkg/shop.py:1)"),
        "{out}"
    );
    assert_eq!(lines[1], "pkg.shop.tax  pkg/shop.py:1", "{out}");
    assert_eq!(
        lines[2], "  pkg.shop.checkout  pkg/shop.py:5  conf 0.95 (path 0.95)",
        "{out}"
    );
    assert_eq!(
        lines[3], "    pkg.api.handle  pkg/api.py:4  conf 0.85 (path 0.81)",
        "{out}"
    );
    assert!(
        out.contains("      tests.test_shop.test_handle  tests/test_shop.py:4  conf 0.85 (path 0.69)  [test]"),
        "{out}"
    );
    let tree_end = out
        .find("unresolved call sites")
        .expect("the sites are listed");
    let tests_at = out
        .find("tests that reach it (1):")
        .expect("the tests are listed");
    assert!(
        tree_end < tests_at,
        "the tests follow the tree by default:\n{out}"
    );
    assert!(
        out.contains("calc.tax <- pkg.misc.guess  pkg/misc.py:2"),
        "{out}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("6 callers reached over 6 edges, 1 test, 1 unresolved site"),
        "{out}"
    );
}

#[test]
fn tests_first_lists_them_before_the_tree() {
    let (repo, cache) = indexed_shop();
    let out = text(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--tests"],
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "tests that reach it (1):", "{out}");
    assert!(
        lines[2].starts_with("  tests.test_shop.test_handle  tests/test_shop.py:4  path 0.69, reaches pkg.shop.tax via pkg.api.handle -> pkg.shop.checkout"),
        "{out}"
    );
    assert_eq!(lines[3], "pkg.shop.tax  pkg/shop.py:1", "{out}");
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--tests", "--json"],
    ));
    assert_eq!(b["tests_first"], true);
    assert_eq!(
        b["tests"][0]["qualified_name"],
        "tests.test_shop.test_handle"
    );

    // At depth 1 no test is reached: the list is still there, empty.
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--depth", "1", "--json"],
    ));
    assert_eq!(b["tests"], serde_json::json!([]));
}

#[test]
fn depth_and_min_confidence_cut_the_tree() {
    let (repo, cache) = indexed_shop();
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--depth", "1", "--json"],
    ));
    assert_eq!(
        tree(&b),
        owned(&[
            (0, "pkg.shop.tax", None),
            (1, "pkg.shop.checkout", Some("pkg.shop.tax")),
            (1, "pkg.ledger.Ledger.settle_books", Some("pkg.shop.tax")),
        ]),
        "{b:#}"
    );
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--depth", "2", "--json"],
    ));
    assert_eq!(b["nodes"].as_array().unwrap().len(), 5, "{b:#}");
    assert!(b["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n["depth"].as_u64().unwrap() <= 2));

    // The 0.5 guess onto settle_books is not followed; it is listed as a site that might
    // also reach it.
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--min-confidence", "0.6", "--json"],
    ));
    let names: Vec<String> = tree(&b).into_iter().map(|(_, q, _)| q).collect();
    assert!(!names.contains(&"pkg.batch.nightly".to_string()), "{b:#}");
    assert!(names.contains(&"pkg.ledger.Ledger.settle_books".to_string()));
    assert_eq!(b["reached"], 5);
    let below: Vec<&serde_json::Value> = b["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["reason"]
                .as_str()
                .unwrap()
                .starts_with("below min confidence")
        })
        .collect();
    assert_eq!(below.len(), 1, "{b:#}");
    assert_eq!(below[0]["caller"], "pkg.batch.nightly");
    assert_eq!(below[0]["might_reach"], "pkg.ledger.Ledger.settle_books");
    // Above every edge but the same-file one, only checkout is left.
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg.shop.tax", "--min-confidence", "0.9", "--json"],
    ));
    assert_eq!(
        tree(&b),
        owned(&[
            (0, "pkg.shop.tax", None),
            (1, "pkg.shop.checkout", Some("pkg.shop.tax")),
        ]),
        "{b:#}"
    );
}

#[test]
fn a_file_is_the_blast_of_every_definition_in_it() {
    let (repo, cache) = indexed_shop();
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg/shop.py", "--json"],
    ));
    assert_eq!(b["target_kind"], "file");
    assert_eq!(b["root"]["path"], "pkg/shop.py");
    assert_eq!(b["roots"], 3, "the file node, tax and checkout: {b:#}");
    // checkout calls tax, but both are roots: neither is shown as the other's caller; the
    // file node, which nothing calls, is not shown.
    assert_eq!(
        tree(&b),
        owned(&[
            (0, "pkg.shop.checkout", None),
            (1, "pkg.api.handle", Some("pkg.shop.checkout")),
            (2, "pkg.api.serve", Some("pkg.api.handle")),
            (2, "tests.test_shop.test_handle", Some("pkg.api.handle")),
            (0, "pkg.shop.tax", None),
            (1, "pkg.ledger.Ledger.settle_books", Some("pkg.shop.tax")),
            (
                2,
                "pkg.batch.nightly",
                Some("pkg.ledger.Ledger.settle_books")
            ),
        ]),
        "{b:#}"
    );
    assert_eq!(b["reached"], 5);
    assert_eq!(b["tests"][0]["reaches"], "pkg.shop.checkout");
    assert_eq!(b["tests"][0]["via"], serde_json::json!(["pkg.api.handle"]));
    assert_eq!(b["unresolved"][0]["might_reach"], "pkg.shop.tax");
    let out = text(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "./pkg/shop.py"],
    ));
    assert!(
        out.starts_with("blast radius of the file pkg/shop.py"),
        "{out}"
    );

    // Nothing resolves to vat: the tree is empty, but the site naming it is listed.
    let b = json(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg/rates.py", "--json"],
    ));
    assert_eq!(b["nodes"], serde_json::json!([]), "{b:#}");
    assert_eq!(b["reached"], 0);
    let sites: Vec<(&str, &str)> = b["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["might_reach"].as_str().unwrap(),
                s["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(sites, [("pkg.rates.vat", "calc.vat")], "{b:#}");
    let out = text(&indexer(
        cache.path(),
        repo.path(),
        &["blast", "pkg/rates.py"],
    ));
    assert!(out.contains("\n  no resolved callers\n"), "{out}");
    assert!(
        out.contains("calc.vat <- pkg.misc.guess  pkg/misc.py:2"),
        "{out}"
    );
}

#[test]
fn unknown_targets_and_bad_depths_are_refused_with_advice() {
    let (repo, cache) = indexed_shop();
    let fails = |args: &[&str]| {
        let out = indexer(cache.path(), repo.path(), args);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(out.stdout.is_empty(), "nothing on stdout for {args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = fails(&["blast", "pkg.shop.nothing"]);
    assert!(err.contains("nothing named \"pkg.shop.nothing\""), "{err}");
    assert!(err.contains("indexer search"), "{err}");
    let err = fails(&["blast", "pkg/none.py"]);
    assert!(err.contains("nothing named \"pkg/none.py\""), "{err}");
    for depth in ["0", "11"] {
        let err = fails(&["blast", "pkg.shop.tax", "--depth", depth]);
        assert!(
            err.contains(&format!("depth {depth} is out of range: use 1 to 10")),
            "{err}"
        );
    }
    let err = fails(&["blast", "pkg.shop.tax", "--min-confidence", "1.5"]);
    assert!(err.contains("out of range"), "{err}");
    let err = fails(&["blast", "pkg.shop.tax", "--depth", "deep"]);
    assert!(
        err.contains("invalid value 'deep' for '--depth <N>'"),
        "{err}"
    );
}

const GO_MOD: &str = "module example.com/app\n\ngo 1.22\n";

fn go_blast(root: &Path, db: &Path, opts: BlastOptions) -> Result<Blast, Error> {
    let (index, _) = Index::build(root, options(root, db).options.clone()).expect("index");
    index.blast(&opts)
}

#[test]
fn go_callers_across_packages_and_its_test_through_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(
        &root,
        &[
            ("go.mod", GO_MOD),
            ("shop/tax.go", "package shop\n\nfunc Tax(x int) int { return x / 5 }\n"),
            (
                "shop/checkout.go",
                "package shop\n\nfunc Checkout(x int) int { return x + Tax(x) }\n",
            ),
            (
                "cmd/app/main.go",
                "package main\n\nimport \"example.com/app/shop\"\n\nfunc main() { shop.Checkout(1) }\n",
            ),
            (
                "shop/shop_test.go",
                "package shop\n\nimport \"testing\"\n\nfunc TestCheckout(t *testing.T) { Checkout(2) }\n",
            ),
        ],
    );
    let db = dir.path().join("index.db");
    let b = go_blast(
        &root,
        &db,
        BlastOptions {
            target: "shop.Tax".into(),
            ..BlastOptions::default()
        },
    )
    .expect("blast");
    let rows: Vec<(usize, &str, Option<usize>)> = b
        .nodes
        .iter()
        .map(|n| (n.depth, n.qualified_name.as_str(), n.parent))
        .collect();
    // The test's path is the more confident one (same package), so it comes first.
    assert_eq!(
        rows,
        [
            (0, "shop.Tax", None),
            (1, "shop.Checkout", Some(0)),
            (2, "shop.TestCheckout", Some(1)),
            (2, "cmd/app.main", Some(1)),
        ],
        "{b:#?}"
    );
    assert_eq!(b.nodes[1].strategy.as_deref(), Some("same_package"));
    assert!(b.nodes[2].path_confidence > b.nodes[3].path_confidence);
    assert!(b.nodes[2].test && !b.nodes[3].test);
    assert_eq!(b.tests.len(), 1);
    assert_eq!(b.tests[0].qualified_name, "shop.TestCheckout");
    assert_eq!(b.tests[0].via, ["shop.Checkout"]);
    let text = b.text();
    assert!(
        text.contains("\n    cmd/app.main  cmd/app/main.go:5  conf 0.85"),
        "{text}"
    );

    let index = Index::open(&db).unwrap();
    let err = index
        .blast(&BlastOptions {
            target: "shop.Nothing".into(),
            ..BlastOptions::default()
        })
        .unwrap_err();
    assert!(
        matches!(err, Error::NotFound { ref name } if name == "shop.Nothing"),
        "{err:?}"
    );
    let err = index
        .blast(&BlastOptions {
            target: "shop.Tax".into(),
            depth: 0,
            ..BlastOptions::default()
        })
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
}

#[test]
fn a_hub_with_more_callers_than_the_tree_holds_says_how_many_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let callers: String = (0..520)
        .map(|i| format!("def caller_{i:03}():\n    return hub()\n\n\n"))
        .collect();
    write_tree(
        &root,
        &[
            ("core.py", "def hub():\n    return 1\n"),
            (
                "callers.py",
                &format!("from core import hub\n\n\n{callers}"),
            ),
        ],
    );
    let (index, _) = Index::build(
        &root,
        options(&root, &dir.path().join("index.db")).options.clone(),
    )
    .expect("index");
    let b = index
        .blast(&BlastOptions {
            target: "core.hub".into(),
            ..BlastOptions::default()
        })
        .expect("blast");
    assert_eq!(b.reached, 520);
    assert_eq!(b.nodes.len(), 1 + codebase_indexer::MAX_BLAST_NODES);
    assert_eq!(b.left_out, 520 - codebase_indexer::MAX_BLAST_NODES);
    // Equally confident callers are kept by name.
    assert_eq!(b.nodes[1].qualified_name, "callers.caller_000");
    assert_eq!(b.nodes.last().unwrap().qualified_name, "callers.caller_499");
    assert!(
        b.summary()
            .contains("left out: 20 callers past the first 500"),
        "{}",
        b.summary()
    );
}
