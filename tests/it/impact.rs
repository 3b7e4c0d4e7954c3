//! `impact` on real git repositories made by the tests: what a diff changes (modified, added,
//! deleted, renamed and moved definitions, module-level code) on each kind of diff (work
//! tree, staged, a commit, a merge, a range), the context it scores, and every error.

use crate::common::{git, options, write_tree};
use codebase_indexer::{
    Change, DiffSpec, Error, Impact, ImpactOptions, Index, PackFormat, DEFAULT_IMPACT_WEIGHTS,
};
use std::path::Path;

fn commit_all(root: &Path, message: &str) -> String {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", message]);
    git(root, &["rev-parse", "HEAD"])
}

const SHOP: &str = r#"RATE = 0.2


def tax(total):
    """Tax on a total."""
    return round(total * RATE, 2)


def checkout(cart):
    total = sum(item.price for item in cart)
    return total + tax(total)


def legacy_total(cart):
    return checkout(cart)


def compute(a, b):
    x = a * 2
    y = b * 3
    z = x + y
    return z * z


def helper(items):
    seen = set()
    out = []
    for i in items:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out
"#;

const REPORT: &str = r#"from pkg.shop import checkout, tax


def summary(cart):
    return "total %s" % checkout(cart)


def tax_report(totals):
    return [tax(t) for t in totals]
"#;

/// A repository with the shop committed, indexed; returns (tree, database).
fn shop(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = dir.join("repo");
    write_tree(
        &root,
        &[
            ("pkg/shop.py", SHOP),
            ("pkg/report.py", REPORT),
            ("pkg/__init__.py", ""),
        ],
    );
    git(&root, &["init", "-q"]);
    commit_all(&root, "base");
    let db = dir.join("index.db");
    (root, db)
}

/// Indexes the tree as it is now and runs `impact` with `spec` and the defaults otherwise.
fn impact(root: &Path, db: &Path, spec: DiffSpec) -> Result<Impact, Error> {
    impact_with(
        root,
        db,
        ImpactOptions {
            spec,
            ..ImpactOptions::default()
        },
    )
}

fn impact_with(root: &Path, db: &Path, opts: ImpactOptions) -> Result<Impact, Error> {
    let (index, _) = Index::build(root, options(root, db).options.clone()).expect("index");
    index.impact(&opts)
}

fn change_of<'a>(i: &'a Impact, qualified_name: &str) -> &'a Change {
    &i.changed
        .iter()
        .find(|c| c.qualified_name == qualified_name)
        .unwrap_or_else(|| {
            panic!(
                "{qualified_name} not among the changed: {:?}",
                i.changed
                    .iter()
                    .map(|c| &c.qualified_name)
                    .collect::<Vec<_>>()
            )
        })
        .change
}

fn names(i: &Impact) -> Vec<&str> {
    i.changed
        .iter()
        .map(|c| c.qualified_name.as_str())
        .collect()
}

#[test]
fn a_work_tree_diff_names_modified_added_deleted_and_module_level_code() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    let edited = SHOP
        .replace("RATE = 0.2", "import math\n\nRATE = 0.25")
        .replace("round(total * RATE, 2)", "round(total * RATE, 3)")
        .replace(
            "def legacy_total(cart):\n    return checkout(cart)\n\n\n",
            "",
        )
        + "\n\ndef refund(cart):\n    return -checkout(cart)\n";
    write_tree(&root, &[("pkg/shop.py", &edited)]);
    let i = impact(&root, &db, DiffSpec::Worktree).unwrap();
    assert_eq!(change_of(&i, "pkg.shop.tax"), &Change::Modified);
    assert_eq!(change_of(&i, "pkg.shop.RATE"), &Change::Modified);
    assert_eq!(change_of(&i, "pkg.shop.refund"), &Change::Added);
    assert_eq!(change_of(&i, "pkg.shop.legacy_total"), &Change::Deleted);
    assert_eq!(change_of(&i, "pkg/shop.py"), &Change::ModuleLevel);
    // Untouched definitions of the same file are not changed.
    assert!(!names(&i).contains(&"pkg.shop.checkout"), "{:?}", names(&i));
    let tax = i
        .changed
        .iter()
        .find(|c| c.qualified_name == "pkg.shop.tax")
        .unwrap();
    assert!(
        tax.diff.contains("-    return round(total * RATE, 2)"),
        "{}",
        tax.diff
    );
    assert!(tax.diff.contains("+    return round(total * RATE, 3)"));
    assert!(tax.code.starts_with("def tax(total):"), "{}", tax.code);
    assert_eq!((tax.lines_added, tax.lines_removed), (1, 1));
    // Callers of what changed are the context, the graph saying why.
    let checkout = i
        .context
        .iter()
        .find(|s| s.candidate.qualified_name == "pkg.shop.checkout")
        .expect("checkout, the caller of tax, is in the context");
    assert!(checkout.candidate.signals.graph > 0.0);
    assert!(
        checkout.candidate.why.contains("caller of pkg.shop.tax"),
        "{}",
        checkout.candidate.why
    );
    let report = i
        .context
        .iter()
        .find(|s| s.candidate.qualified_name == "pkg.report.tax_report")
        .expect("tax_report, the caller in another file");
    assert_eq!(report.candidate.signals.same_file, 0.0);
    assert!(i.text.contains("## Changed") && i.text.contains("## Context"));
    assert!(
        i.text
            .contains("pkg.shop.tax  pkg/shop.py:6-8  (Function, modified; +1 -1)"),
        "{}",
        i.text
    );
    assert!(i.account.tokens <= i.account.budget);
    assert_eq!(i.weights, DEFAULT_IMPACT_WEIGHTS);
}

#[test]
fn renamed_and_moved_definitions_are_paired_by_their_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    let helper = &SHOP[SHOP.find("def helper").unwrap()..];
    let edited = SHOP
        .replace("def compute(a, b):", "def calculate(a, b):")
        .replace(helper, "");
    write_tree(
        &root,
        &[
            ("pkg/shop.py", &edited),
            ("pkg/util.py", &format!("import os\n\n\n{helper}")),
        ],
    );
    commit_all(&root, "rename and move");
    let i = impact(&root, &db, DiffSpec::Commit("HEAD".into())).unwrap();
    assert_eq!(
        change_of(&i, "pkg.shop.calculate"),
        &Change::Renamed("pkg.shop.compute".into())
    );
    assert_eq!(
        change_of(&i, "pkg.util.helper"),
        &Change::Moved("pkg.shop.helper".into())
    );
    // Paired, so neither old name is left as a deletion.
    assert!(!names(&i).contains(&"pkg.shop.compute"));
    assert!(!names(&i).contains(&"pkg.shop.helper"));
    assert_eq!(
        i.base.as_deref(),
        Some(git(&root, &["rev-parse", "HEAD~1"]).as_str())
    );
}

#[test]
fn staged_and_work_tree_diffs_differ() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    write_tree(
        &root,
        &[("pkg/shop.py", &SHOP.replace("x = a * 2", "x = a * 4"))],
    );
    git(&root, &["add", "pkg/shop.py"]);
    write_tree(
        &root,
        &[(
            "pkg/report.py",
            &REPORT.replace("\"total %s\"", "\"sum %s\""),
        )],
    );
    let staged = impact(&root, &db, DiffSpec::Staged).unwrap();
    assert_eq!(names(&staged), vec!["pkg.shop.compute"]);
    let work = impact(&root, &db, DiffSpec::Worktree).unwrap();
    let mut n = names(&work);
    n.sort();
    assert_eq!(n, vec!["pkg.report.summary", "pkg.shop.compute"]);
    // An untracked file is part of the work tree's changes, unless git ignores it: here
    // through the repository's `core.excludesFile`, which the index's walk does not read.
    write_tree(
        &root,
        &[
            ("pkg/extra.py", "def extra():\n    return 1\n"),
            ("pkg/scratch.py", "def scratch():\n    return 2\n"),
            ("../excludes", "scratch.py\n"),
        ],
    );
    let excludes = dir.path().join("excludes");
    git(
        &root,
        &["config", "core.excludesFile", excludes.to_str().unwrap()],
    );
    let work = impact(&root, &db, DiffSpec::Worktree).unwrap();
    assert_eq!(change_of(&work, "pkg.extra.extra"), &Change::Added);
    assert!(
        !names(&work).contains(&"pkg.scratch.scratch"),
        "{:?}",
        names(&work)
    );
    assert_eq!(work.files_changed, 3, "shop.py, report.py and extra.py");
}

#[test]
fn a_merge_commit_is_what_it_brought_into_its_first_parent() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    git(&root, &["checkout", "-q", "-b", "side"]);
    write_tree(
        &root,
        &[(
            "pkg/report.py",
            &REPORT.replace("\"total %s\"", "\"sum %s\""),
        )],
    );
    commit_all(&root, "side");
    git(&root, &["checkout", "-q", "-"]);
    write_tree(
        &root,
        &[("pkg/shop.py", &SHOP.replace("x = a * 2", "x = a * 4"))],
    );
    commit_all(&root, "main");
    git(&root, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    let i = impact(&root, &db, DiffSpec::Commit("HEAD".into())).unwrap();
    assert_eq!(names(&i), vec!["pkg.report.summary"]);
    // And a range: everything between the base and the merge.
    let base = git(&root, &["rev-list", "--max-parents=0", "HEAD"]);
    let range = impact(&root, &db, DiffSpec::parse(&format!("{base}..HEAD"))).unwrap();
    let mut n = names(&range);
    n.sort();
    assert_eq!(n, vec!["pkg.report.summary", "pkg.shop.compute"]);
}

#[test]
fn a_diff_of_fifty_files_stays_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let files: Vec<(String, String)> = (0..50)
        .map(|k| {
            (
                format!("mod{k:02}.py"),
                format!(
                    "def f{k}(x):\n    return x + {k}\n\n\ndef g{k}(x):\n    return f{k}(x) * 2\n"
                ),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    write_tree(&root, &refs);
    git(&root, &["init", "-q"]);
    commit_all(&root, "base");
    for (p, c) in &files {
        write_tree(&root, &[(p, &c.replace("return x +", "return x -"))]);
    }
    commit_all(&root, "fifty");
    let db = dir.path().join("index.db");
    let i = impact_with(
        &root,
        &db,
        ImpactOptions {
            spec: DiffSpec::Commit("HEAD".into()),
            budget: 1500,
            ..ImpactOptions::default()
        },
    )
    .unwrap();
    assert_eq!(i.files_changed, 50);
    assert_eq!(i.changed_total, 50);
    assert!(
        i.changed.len() < 50,
        "a 1,500-token budget cannot show 50 diffs"
    );
    assert!(!i.changed.is_empty());
    assert!(i.account.tokens <= 1500, "{} tokens", i.account.tokens);
    assert!(i.account.dropped >= 50 - i.changed.len());
    // JSON is a document within the budget too.
    let json = impact_with(
        &root,
        &db,
        ImpactOptions {
            spec: DiffSpec::Commit("HEAD".into()),
            budget: 1500,
            format: PackFormat::Json,
            ..ImpactOptions::default()
        },
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&json.text).unwrap();
    assert_eq!(v["schema"], "codebase-indexer/impact/1");
    assert_eq!(v["changed_total"], 50);
    assert!(json.account.tokens <= 1500);
    // The document states what the answer holds: its tokens and those of the code shown.
    assert_eq!(v["tokens"], json.account.tokens);
    assert!(json.code_tokens > 0);
    assert_eq!(v["code_tokens"], json.code_tokens);
}

#[test]
fn symbols_restrict_where_the_analysis_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    let edited = SHOP
        .replace("round(total * RATE, 2)", "round(total * RATE, 3)")
        .replace("x = a * 2", "x = a * 4");
    write_tree(&root, &[("pkg/shop.py", &edited)]);
    let i = impact_with(
        &root,
        &db,
        ImpactOptions {
            symbols: vec!["pkg.shop.compute".into()],
            ..ImpactOptions::default()
        },
    )
    .unwrap();
    assert_eq!(names(&i), vec!["pkg.shop.compute"]);
    let e = impact_with(
        &root,
        &db,
        ImpactOptions {
            symbols: vec!["pkg.shop.checkout".into()],
            ..ImpactOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("not changed by"), "{e}");
}

#[test]
fn other_languages_map_their_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let go = "package shop\n\nfunc Tax(t float64) float64 {\n\treturn t * 0.2\n}\n\nfunc Checkout(t float64) float64 {\n\treturn t + Tax(t)\n}\n";
    let ts = "export class Cart {\n  total(): number {\n    return 1;\n  }\n\n  count(): number {\n    return 2;\n  }\n}\n";
    write_tree(&root, &[("shop/shop.go", go), ("web/cart.ts", ts)]);
    git(&root, &["init", "-q"]);
    commit_all(&root, "base");
    write_tree(
        &root,
        &[
            ("shop/shop.go", &go.replace("t * 0.2", "t * 0.25")),
            ("web/cart.ts", &ts.replace("return 2;", "return 3;")),
        ],
    );
    let db = dir.path().join("index.db");
    let i = impact(&root, &db, DiffSpec::Worktree).unwrap();
    let mut n = names(&i);
    n.sort();
    assert_eq!(n.len(), 2, "{n:?}");
    assert!(n[0].ends_with("Tax"), "{n:?}");
    assert!(n[1].ends_with("Cart.count"), "{n:?}");
    assert!(i
        .context
        .iter()
        .any(|s| s.candidate.qualified_name.ends_with("Checkout")));
}

#[test]
fn each_bad_input_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // Not a git repository.
    let plain = dir.path().join("plain");
    write_tree(&plain, &[("a.py", "def f():\n    return 1\n")]);
    let e = impact(&plain, &dir.path().join("plain.db"), DiffSpec::Worktree).unwrap_err();
    assert!(e.to_string().contains("not in a git repository"), "{e}");

    let (root, db) = shop(dir.path());
    // Nothing changed.
    let e = impact(&root, &db, DiffSpec::Worktree).unwrap_err();
    assert!(e.to_string().contains("changes nothing"), "{e}");
    // A revision that does not exist, and one that looks like an option.
    let e = impact(&root, &db, DiffSpec::Commit("nosuch".into())).unwrap_err();
    assert!(e.to_string().contains("no commit \"nosuch\""), "{e}");
    let e = impact(&root, &db, DiffSpec::Commit("--output=x".into())).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // Only a binary file.
    write_tree(&root, &[]);
    crate::common::write(&root, "logo.png", &[0x89, b'P', b'N', b'G', 0, 0, 1, 2, 0]);
    let e = impact(&root, &db, DiffSpec::Worktree).unwrap_err();
    assert!(
        e.to_string().contains("changes no code the index holds"),
        "{e}"
    );
    std::fs::remove_file(root.join("logo.png")).unwrap();
    // Only files the index leaves out.
    let mut run = options(&root, &db);
    run.excludes = vec!["vendor/**".into()];
    write_tree(&root, &[("vendor/lib.py", "def v():\n    return 1\n")]);
    let (index, _) = Index::build(&root, run.options.clone()).unwrap();
    let e = index.impact(&ImpactOptions::default()).unwrap_err();
    assert!(e.to_string().contains("does not hold"), "{e}");
    // A budget too small for anything.
    std::fs::remove_dir_all(root.join("vendor")).unwrap();
    write_tree(
        &root,
        &[("pkg/shop.py", &SHOP.replace("x = a * 2", "x = a * 4"))],
    );
    let e = impact_with(
        &root,
        &db,
        ImpactOptions {
            budget: 5,
            ..ImpactOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("cannot hold"), "{e}");
}

#[test]
fn co_change_comes_from_the_history_before_the_diff_cached_per_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    let notes = "def note(text):\n    return text.strip()\n";
    // pkg/notes.py changes with pkg/shop.py in two commits, pkg/report.py in the first only.
    for n in 1..=2 {
        let shop = SHOP.replace("RATE = 0.2", &format!("RATE = 0.2{n}"));
        let notes = format!("{notes}\n# revision {n}\n");
        write_tree(&root, &[("pkg/shop.py", &shop), ("pkg/notes.py", &notes)]);
        commit_all(&root, &format!("rate {n}"));
    }
    let head = git(&root, &["rev-parse", "HEAD"]);
    let edited = SHOP
        .replace("RATE = 0.2", "RATE = 0.22")
        .replace("round(total * RATE, 2)", "round(total * RATE, 4)");
    write_tree(&root, &[("pkg/shop.py", &edited)]);
    let cochange_of = |i: &Impact, name: &str| {
        i.context
            .iter()
            .find(|s| s.candidate.qualified_name == name)
            .map_or(0.0, |s| s.candidate.signals.cochange)
    };
    let first = impact(&root, &db, DiffSpec::Worktree).unwrap();
    // Two of the three commits that changed pkg/shop.py changed pkg/notes.py: 2 / (3 + 1).
    assert_eq!(cochange_of(&first, "pkg.notes.note"), 0.5);
    assert_eq!(cochange_of(&first, "pkg.report.summary"), 0.25);
    let cached = |db: &Path| -> Vec<(String, String)> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare("SELECT key, files FROM cochange_history ORDER BY seq")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let rows = cached(&db);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().all(|(k, _)| k.starts_with(&format!("{head}/"))));
    assert!(rows[0].1.contains("pkg/notes.py"), "{rows:?}");
    // The cache is what the next impact reads for the same commit: rewrite it and see.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE cochange_history SET files = 'pkg/shop.py\npkg/report.py'",
        [],
    )
    .unwrap();
    drop(conn);
    let second = impact(&root, &db, DiffSpec::Worktree).unwrap();
    assert_eq!(cochange_of(&second, "pkg.report.summary"), 0.75);
    // A new commit is another history, read again from git.
    commit_all(&root, "rate and tax");
    write_tree(&root, &[("pkg/shop.py", SHOP)]);
    let third = impact(&root, &db, DiffSpec::Worktree).unwrap();
    assert_eq!(cochange_of(&third, "pkg.report.summary"), 1.0 / 5.0);
    let new_head = git(&root, &["rev-parse", "HEAD"]);
    let rows = cached(&db);
    assert_eq!(rows.len(), 4);
    assert!(rows
        .iter()
        .all(|(k, _)| k.starts_with(&format!("{new_head}/"))));
    // A range is answered from the history before its old side, whatever the cache holds.
    let range = impact(
        &root,
        &db,
        DiffSpec::Range {
            from: head.clone(),
            to: new_head.clone(),
            merge_base: false,
        },
    )
    .unwrap();
    assert_eq!(cochange_of(&range, "pkg.notes.note"), 0.5);
}

#[test]
fn the_graph_read_for_a_diff_answers_as_the_whole_graph() {
    let dir = tempfile::tempdir().unwrap();
    let (root, db) = shop(dir.path());
    // tax <- tax_report -> fmt: fmt is two hops from tax, in a file nothing else reaches.
    let report = REPORT
        .replace(
            "from pkg.shop import checkout, tax",
            "from pkg.fmt import fmt\nfrom pkg.shop import checkout, tax",
        )
        .replace("[tax(t) for t in totals]", "[fmt(tax(t)) for t in totals]");
    let cli = "from pkg.report import summary\n\n\ndef main(cart):\n    return summary(cart)\n\n\ndef run():\n    return main([])\n";
    write_tree(
        &root,
        &[
            ("pkg/report.py", &report),
            ("pkg/fmt.py", "def fmt(x):\n    return str(x)\n"),
            ("pkg/cli.py", cli),
        ],
    );
    commit_all(&root, "report");
    // pkg/notes.py changes with pkg/shop.py: co-change reaches it.
    for n in 1..=2 {
        let shop = SHOP.replace("RATE = 0.2", &format!("RATE = 0.2{n}"));
        let notes = format!("def note(text):\n    return text.strip()\n\n# revision {n}\n");
        write_tree(&root, &[("pkg/shop.py", &shop), ("pkg/notes.py", &notes)]);
        commit_all(&root, &format!("rate {n}"));
    }
    write_tree(
        &root,
        &[(
            "pkg/shop.py",
            &SHOP.replace("round(total * RATE, 2)", "round(total * RATE, 3)"),
        )],
    );
    let (index, _) = Index::build(&root, options(&root, &db).options.clone()).unwrap();
    let mut cases = Vec::new();
    for spec in [DiffSpec::Worktree, DiffSpec::Commit("HEAD".into())] {
        for depth in 1..=3 {
            for format in [PackFormat::Markdown, PackFormat::Json, PackFormat::Xml] {
                for budget in [700, 5000] {
                    cases.push(ImpactOptions {
                        spec: spec.clone(),
                        depth,
                        format,
                        budget,
                        ..ImpactOptions::default()
                    });
                }
            }
        }
    }
    // A fresh index reads the part of the graph each diff reaches; once it holds the whole
    // graph (as a server does), it answers from that.
    let part: Vec<Impact> = cases.iter().map(|o| index.impact(o).unwrap()).collect();
    index.load_graph().unwrap();
    for (o, p) in cases.iter().zip(&part) {
        assert_eq!(index.impact(o).unwrap().text, p.text, "{o:?}");
    }
    // One hop from tax, tax_report is shown with its callee fmt, which only the edges name.
    let one_hop = &part[1];
    assert_eq!(one_hop.diff, "the work tree against HEAD");
    let tax_report = one_hop
        .context
        .iter()
        .find(|s| s.candidate.qualified_name == "pkg.report.tax_report")
        .expect("tax_report in context");
    assert!(
        tax_report
            .callees
            .iter()
            .any(|n| n.qualified_name == "pkg.fmt.fmt" && !n.in_context),
        "{:?}",
        tax_report.callees
    );
    assert!(one_hop.text.contains("pkg.fmt.fmt [NOT IN CONTEXT]"));
}
