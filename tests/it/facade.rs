//! The library's entry type as a harness uses it: one `Index` answering many questions,
//! opened from a tree, a database or an artifact, noticing when the database changes under
//! it, and failing with errors a caller can match on.

use crate::common::{artifact_in, options, write, write_tree};
use std::path::PathBuf;

use codebase_indexer::{
    ArtifactWrite, Direction, Error, Index, IndexOptions, MapOptions, PackOptions, PackTarget,
    SearchOptions, TraceOptions,
};

const TREE: &[(&str, &str)] = &[
    (
        "shop/tax.py",
        "def rate(region):\n    return 0.2\n\n\ndef tax(total, region):\n    return total * rate(region)\n",
    ),
    (
        "shop/checkout.py",
        "from shop.tax import tax\n\n\ndef checkout(total):\n    return total + tax(total, 'eu')\n",
    ),
    (
        "shop/refund.py",
        "from shop.tax import tax\n\n\ndef refund(total):\n    return total - tax(total, 'eu')\n",
    ),
];

/// The shop written into a fresh folder: (the folder, the tree's root, a database path).
fn shop() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, TREE);
    let db = dir.path().join("shop.db");
    (dir, root, db)
}

fn qualified_names(map: &codebase_indexer::RepoMap) -> Vec<&str> {
    map.entries
        .iter()
        .map(|e| e.qualified_name.as_str())
        .collect()
}

#[test]
fn one_index_answers_every_question() {
    let (_dir, root, db) = shop();
    let run = options(&root, &db);
    let (index, summary) = Index::build(&run.root, run.options.clone()).unwrap();
    assert_eq!(summary.files, 3);
    assert_eq!(index.root().unwrap(), Some(root.canonicalize().unwrap()));

    let hits = index.search("tax", &SearchOptions::default()).unwrap();
    assert_eq!(hits[0].qualified_name, "shop.tax.tax");
    let source = index.source("shop.tax.rate").unwrap();
    assert!(source.source.contains("return 0.2"));
    assert_eq!(source.callers[0].qualified_name, "shop.tax.tax");

    let callers = index
        .trace("shop.tax.tax", Direction::Callers, &TraceOptions::default())
        .unwrap();
    let mut names: Vec<&str> = callers.hops.iter().map(|h| h.caller.as_str()).collect();
    names.sort();
    assert_eq!(names, ["shop.checkout.checkout", "shop.refund.refund"]);

    let pack = index
        .pack(&PackOptions {
            target: PackTarget::Entry("shop.checkout.checkout".into()),
            budget: 1500,
            ..PackOptions::default()
        })
        .unwrap();
    assert!(pack.text.contains("return total * rate(region)"));
    assert!(pack.account.tokens <= 1500);
    let ranked = index.rank_files("the tax rate of a region", 3).unwrap();
    assert_eq!(ranked[0].path, "shop/tax.py");
    assert_eq!(index.status().unwrap().files, 3);
}

#[test]
fn errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, TREE);
    write(&root, "billing/tax.py", b"def tax(x):\n    return x\n");
    let db = dir.path().join("shop.db");
    crate::common::index(&root, &db);
    let index = Index::open(&db).unwrap();

    match index.source("no_such_thing") {
        Err(Error::NotFound { name }) => assert_eq!(name, "no_such_thing"),
        other => panic!("{other:?}"),
    }
    match index.source("tax") {
        Err(Error::Ambiguous {
            name,
            candidates,
            more,
        }) => {
            assert_eq!(name, "tax");
            assert_eq!(candidates, ["billing.tax.tax", "shop.tax.tax"]);
            assert!(!more);
        }
        other => panic!("{other:?}"),
    }
    let bad = TraceOptions {
        min_confidence: 1.5,
        ..TraceOptions::default()
    };
    assert!(matches!(
        index.trace("shop.tax.rate", Direction::Callees, &bad),
        Err(Error::InvalidArgument { .. })
    ));
    let bad = IndexOptions {
        db: Some(dir.path().join("other.db")),
        compression_level: 30,
        ..IndexOptions::default()
    };
    match Index::build(&root, bad) {
        Err(e @ Error::InvalidArgument { .. }) => {
            assert!(e.to_string().contains("--compression-level 30"), "{e}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(!dir.path().join("other.db").exists());
    match Index::open(dir.path().join("missing.db")) {
        Err(Error::NoIndex { message }) => assert!(message.contains("missing.db"), "{message}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn a_long_lived_index_sees_incremental_runs_and_rebuilds() {
    let (_dir, root, db) = shop();
    crate::common::index(&root, &db);
    let index = Index::open(&db).unwrap();
    let map = || index.map(&MapOptions::default()).unwrap();
    assert!(!qualified_names(&map()).contains(&"shop.tax.surcharge"));

    // An incremental run by someone else, in place: the graph is read again.
    write(
        &root,
        "shop/tax.py",
        b"def rate(region):\n    return surcharge() + 0.2\n\n\ndef surcharge():\n    return 0.01\n\n\ndef tax(total, region):\n    return total * rate(region)\n",
    );
    crate::common::index(&root, &db);
    assert!(qualified_names(&map()).contains(&"shop.tax.surcharge"));

    // A rebuild puts a new file in the database's place: the index reopens it.
    write(&root, "shop/coupon.py", b"def coupon():\n    return 5\n");
    let mut rebuild = options(&root, &db);
    rebuild.rebuild = true;
    crate::common::run(&rebuild).unwrap();
    assert!(qualified_names(&map()).contains(&"shop.coupon.coupon"));
    assert_eq!(index.status().unwrap().files, 4);
}

#[test]
fn indexes_sharing_a_graph_cache_never_answer_from_a_stale_graph() {
    let (_dir, root, db) = shop();
    crate::common::index(&root, &db);
    let first = Index::open(&db).unwrap();
    let second = Index::open(&db)
        .unwrap()
        .with_graph_cache(first.graph_cache());
    let names = |index: &Index| {
        qualified_names(&index.map(&MapOptions::default()).unwrap())
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&first), names(&second));

    // The second reads the new contents first; the first must not keep the graph it read.
    write(&root, "shop/coupon.py", b"def coupon():\n    return 5\n");
    crate::common::index(&root, &db);
    assert!(names(&second).contains(&"shop.coupon.coupon".to_string()));
    assert!(names(&first).contains(&"shop.coupon.coupon".to_string()));

    // And back: a file removed is gone for both.
    std::fs::remove_file(root.join("shop/coupon.py")).unwrap();
    crate::common::index(&root, &db);
    assert!(!names(&first).contains(&"shop.coupon.coupon".to_string()));
    assert!(!names(&second).contains(&"shop.coupon.coupon".to_string()));
}

#[test]
fn refresh_re_indexes_with_the_options_of_the_build() {
    let (_dir, root, db) = shop();
    let run = options(&root, &db);
    let (mut index, _) = Index::build(&run.root, run.options.clone()).unwrap();
    write(&root, "shop/coupon.py", b"def coupon():\n    return 5\n");
    let summary = index.refresh().unwrap();
    assert_eq!((summary.mode, summary.extracted), ("incremental", 1));
    assert_eq!(index.source("coupon").unwrap().path, "shop/coupon.py");
    // Opened rather than built: refreshed from the root the database records.
    let mut reopened = Index::open(&db).unwrap();
    std::fs::remove_file(root.join("shop/refund.py")).unwrap();
    let summary = reopened.refresh().unwrap();
    assert_eq!(summary.removed, 1);
    assert!(matches!(
        reopened.source("refund"),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn two_opens_of_one_artifact_in_one_process_do_not_collide() {
    let (dir, root, db) = shop();
    let mut run = options(&root, &db);
    run.artifact = ArtifactWrite::Always;
    crate::common::run(&run).unwrap();
    let artifact = artifact_in(&root);

    let a = Index::open(&artifact).unwrap();
    let b = Index::open(&artifact).unwrap();
    drop(a);
    // The first one's temporary is gone; the second still answers from its own.
    assert_eq!(b.source("shop.tax.rate").unwrap().path, "shop/tax.py");
    assert_eq!(b.location(), artifact.as_path());
    let c = Index::open(&artifact).unwrap();
    let status = c.status().unwrap();
    assert_eq!(status.files, 3);
    assert_eq!(
        status.artifact, None,
        "an artifact is not compared with itself"
    );
    assert!(matches!(
        c.export(&dir.path().join("copy.db.zst"), 3),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn an_index_moves_to_another_thread() {
    fn send<T: Send>(_: &T) {}
    let (_dir, root, db) = shop();
    crate::common::index(&root, &db);
    let index = Index::open(&db).unwrap();
    send(&index);
    let hits = std::thread::spawn(move || index.search("refund", &SearchOptions::default()))
        .join()
        .unwrap()
        .unwrap();
    assert_eq!(hits[0].qualified_name, "shop.refund.refund");
}
