//! The committed artifact: byte-identical for the same tree wherever and however it was
//! indexed, a fresh clone starts from it and ends equal to a full index, and an artifact that
//! cannot be used (corrupt, truncated, another project's, a newer schema) is refused with a
//! note while a full index is built instead.

use crate::common::artifact_in;
use crate::common::{dump, options, write, write_tree};
use codebase_indexer::IndexSummary;
use codebase_indexer::{ArtifactWrite, Freshness, ARTIFACT_DIR, ARTIFACT_FILE, ARTIFACT_MANIFEST};
use std::path::Path;

const TREE: &[(&str, &str)] = &[
    ("app/__init__.py", "from .core import helper\n"),
    (
        "app/core.py",
        "class Base:\n    def ping(self):\n        return 1\n\n\ndef helper():\n    return Base().ping()\n",
    ),
    (
        "app/main.py",
        "from app import helper\nimport os\n\n\ndef main():\n    os.getcwd()\n    return helper()\n",
    ),
    ("web/util.js", "export function fmt(x) { return String(x); }\n"),
    (
        "web/app.js",
        "import { fmt } from './util.js';\nexport function run() { return fmt(1); }\n",
    ),
    ("README.md", "# fixture\n"),
];

/// Indexes `root` into `db` writing the artifact, with `jobs` threads.
fn index_with_artifact(root: &Path, db: &Path, jobs: usize) -> IndexSummary {
    let mut o = options(root, db);
    o.jobs = Some(jobs);
    o.artifact = ArtifactWrite::Always;
    crate::common::run(&o).expect("index")
}

fn artifact_bytes(root: &Path) -> (Vec<u8>, Vec<u8>) {
    let dir = root.join(ARTIFACT_DIR);
    (
        std::fs::read(dir.join(ARTIFACT_FILE)).unwrap(),
        std::fs::read(dir.join(ARTIFACT_MANIFEST)).unwrap(),
    )
}

/// Every table's rows that a full index and a bootstrapped one must share.
fn contents(db: &Path) -> Vec<Vec<String>> {
    [
        "SELECT id, path, language, size, hash, lines, flags, module FROM files ORDER BY id",
        "SELECT * FROM file_contents ORDER BY file_id",
        "SELECT * FROM file_words ORDER BY file_id",
        "SELECT term, hex(postings) FROM file_terms ORDER BY term",
        "SELECT term, hex(postings) FROM definition_terms ORDER BY term",
        "SELECT * FROM nodes ORDER BY id",
        "SELECT * FROM refs ORDER BY node_id, seq",
        "SELECT source_id, target_id, kind, confidence, strategy, line FROM edges \
         ORDER BY source_id, target_id, kind, line, strategy",
        "SELECT source_id, kind, name, key, reason, candidates, line FROM unresolved \
         ORDER BY source_id, line, name, kind",
        "SELECT rowid, name FROM nodes_fts WHERE nodes_fts MATCH 'helper OR fmt' ORDER BY rowid",
    ]
    .iter()
    .map(|sql| dump(db, sql))
    .collect()
}

#[test]
fn same_tree_same_bytes_from_any_folder_jobs_or_history() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a/repo"), dir.path().join("elsewhere/copy"));
    write_tree(&a, TREE);
    write_tree(&b, TREE);
    let first = index_with_artifact(&a, &dir.path().join("a.db"), 1);
    index_with_artifact(&b, &dir.path().join("b.db"), 2);
    let manifest = first.artifact.expect("an artifact is written");
    assert_eq!(manifest.files, 6);
    assert!(manifest.edges > 0 && manifest.compression_ratio > 1.0);
    assert_eq!(artifact_bytes(&a), artifact_bytes(&b));
    let json = String::from_utf8(artifact_bytes(&a).1).unwrap();
    assert!(!json.contains(dir.path().to_str().unwrap()), "{json}");
    assert_eq!(
        std::fs::read_to_string(a.join(ARTIFACT_DIR).join(".gitattributes")).unwrap(),
        "graph.db.zst binary merge=ours\n"
    );

    // Nothing changed: nothing is rewritten.
    let again = index_with_artifact(&a, &dir.path().join("a.db"), 1);
    assert!(again.artifact.is_none());

    // An incremental run after an edit gives the bytes of a full index of the edited tree.
    let edited = "def helper():\n    return 2\n";
    write(&a, "app/core.py", edited.as_bytes());
    let inc = index_with_artifact(&a, &dir.path().join("a.db"), 2);
    assert_eq!(inc.mode, "incremental");
    write(&b, "app/core.py", edited.as_bytes());
    std::fs::remove_dir_all(b.join(ARTIFACT_DIR)).unwrap();
    let full = index_with_artifact(&b, &dir.path().join("b2.db"), 1);
    assert_eq!(full.mode, "full");
    assert_eq!(artifact_bytes(&a), artifact_bytes(&b));
}

#[test]
fn a_fresh_clone_starts_from_the_artifact_and_equals_a_full_index() {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin");
    write_tree(&origin, TREE);
    index_with_artifact(&origin, &dir.path().join("origin.db"), 2);

    // The clone has the committed artifact and some edits, additions and deletions.
    let clone = dir.path().join("clone");
    copy_tree(&origin, &clone);
    write(
        &clone,
        "app/core.py",
        b"class Base:\n    def ping(self):\n        return 1\n\n\ndef helper2():\n    return 3\n",
    );
    write(
        &clone,
        "app/__init__.py",
        b"from .core import helper2 as helper\n",
    );
    write(
        &clone,
        "app/extra.py",
        b"def extra():\n    return helper()\n",
    );
    std::fs::remove_file(clone.join("web/app.js")).unwrap();

    let db = dir.path().join("clone.db");
    let s = crate::common::run(&options(&clone, &db)).unwrap();
    assert_eq!(s.mode, "incremental");
    assert!(s.bootstrapped_from.is_some(), "{:?}", s.notes);
    // Only what differs from the artifact is extracted again.
    assert_eq!((s.extracted, s.removed), (3, 1));

    let full = dir.path().join("full.db");
    let mut o = options(&clone, &full);
    o.rebuild = true;
    crate::common::run(&o).unwrap();
    assert_eq!(contents(&db), contents(&full));
}

#[test]
fn unusable_artifacts_are_refused_and_a_full_index_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin");
    write_tree(&origin, TREE);
    index_with_artifact(&origin, &dir.path().join("origin.db"), 2);
    let good = artifact_bytes(&origin).0;

    // A database of a newer schema, compressed like an artifact.
    let newer = {
        let db = dir.path().join("newer.db");
        let raw = zstd::decode_all(&std::fs::read(artifact_in(&origin)).unwrap()[..]).unwrap();
        std::fs::write(&db, raw).unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA user_version = 99").unwrap();
        drop(conn);
        zstd::encode_all(std::fs::read(&db).unwrap().as_slice(), 3).unwrap()
    };
    // Another project's artifact: none of its files are in this tree.
    let foreign = {
        let other = dir.path().join("other");
        write_tree(
            &other,
            &[
                ("lib/a.go", "package lib\n\nfunc A() {}\n"),
                ("lib/b.go", "package lib\n"),
            ],
        );
        index_with_artifact(&other, &dir.path().join("other.db"), 1);
        artifact_bytes(&other).0
    };
    // Two frames, the second missing: every frame is whole, the database is not.
    let first_frame_only = {
        let raw = zstd::decode_all(&good[..]).unwrap();
        zstd::encode_all(&raw[..raw.len() / 2], 3).unwrap()
    };
    let damaged = {
        let mut bytes = good.clone();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
        bytes
    };
    let cases: [(&str, Vec<u8>, &str); 7] = [
        ("garbage", b"not an artifact at all".to_vec(), "zstd"),
        ("truncated", good[..good.len() / 2].to_vec(), "truncated"),
        ("a frame missing", first_frame_only, "truncated"),
        ("one byte changed", damaged, "corrupt"),
        (
            "not a database",
            zstd::encode_all(&b"plain text, compressed"[..], 3).unwrap(),
            "no index database",
        ),
        ("newer schema", newer, "written by a newer indexer"),
        ("another project", foreign, "another project"),
    ];
    for (i, (case, bytes, why)) in cases.into_iter().enumerate() {
        let clone = dir.path().join(format!("clone{i}"));
        copy_tree(&origin, &clone);
        std::fs::write(artifact_in(&clone), &bytes).unwrap();
        let db = dir.path().join(format!("clone{i}.db"));
        let s = crate::common::run(&options(&clone, &db)).unwrap();
        assert_eq!(s.mode, "full", "{case}");
        assert!(s.bootstrapped_from.is_none(), "{case}");
        assert!(
            s.notes.iter().any(|n| n.contains(why)),
            "{case}: {:?}",
            s.notes
        );
        // Nothing half-decompressed is left beside the database (the run's lock file stays).
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("clone{i}.db.")) && !n.ends_with(".lock"))
            .collect();
        assert!(leftovers.is_empty(), "{case}: {leftovers:?}");
        let full = dir.path().join(format!("full{i}.db"));
        let mut o = options(&clone, &full);
        o.rebuild = true;
        crate::common::run(&o).unwrap();
        assert_eq!(contents(&db), contents(&full), "{case}");
    }
}

#[test]
fn the_artifact_is_a_plain_sqlite_database_once_decompressed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, TREE);
    index_with_artifact(&root, &dir.path().join("index.db"), 2);
    let raw = zstd::decode_all(&std::fs::read(artifact_in(&root)).unwrap()[..]).unwrap();
    let db = dir.path().join("g.db");
    std::fs::write(&db, raw).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let callers: Vec<String> = conn
        .prepare("SELECT caller FROM calls WHERE callee = 'app.core.helper' ORDER BY caller")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(callers, ["app.main.main"]);
    // Nothing of the machine it was built on.
    let root_meta: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'root'", [], |r| {
            r.get(0)
        })
        .ok();
    assert_eq!(root_meta, None);
    let mtimes: i64 = conn
        .query_row("SELECT count(*) FROM files WHERE mtime_ns <> 0", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(mtimes, 0);
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in crate::common::files_under(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dest).unwrap();
    }
}

#[test]
fn a_tree_that_cannot_take_the_artifact_still_gets_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, TREE);
    // `.codebase-index` is taken by a file.
    write(&root, ARTIFACT_DIR, b"not a folder");
    let s = index_with_artifact(&root, &dir.path().join("index.db"), 2);
    assert!(s.artifact.is_none());
    assert!(
        s.notes.iter().any(|n| n.contains("did not write")),
        "{:?}",
        s.notes
    );
    assert_eq!(s.files, 6);
    assert!(!dump(&dir.path().join("index.db"), "SELECT source_id FROM edges").is_empty());
}

#[test]
fn status_says_whether_the_artifact_is_current_stale_or_absent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, TREE);
    let db = dir.path().join("a.db");
    index_with_artifact(&root, &db, 2);
    let state = || {
        codebase_indexer::Index::open(&db)
            .unwrap()
            .status()
            .unwrap()
            .artifact
    };
    let path = format!("{ARTIFACT_DIR}/{ARTIFACT_FILE}");
    assert_eq!(state(), Some(Freshness::Current { path: path.clone() }));

    // Indexed again without writing the artifact: one file edited, one added, one removed.
    write(&root, "app/core.py", b"def helper():\n    return 2\n");
    write(&root, "app/extra.py", b"def extra():\n    return 3\n");
    std::fs::remove_file(root.join("web/util.js")).unwrap();
    crate::common::index(&root, &db);
    assert_eq!(
        state(),
        Some(Freshness::Stale {
            path: path.clone(),
            files: 3,
            settings_differ: false
        })
    );
    // The same files under other resolution settings.
    index_with_artifact(&root, &db, 2);
    let mut o = options(&root, &db);
    o.min_confidence = 0.9;
    crate::common::run(&o).unwrap();
    assert_eq!(
        state(),
        Some(Freshness::Stale {
            path: path.clone(),
            files: 0,
            settings_differ: true
        })
    );

    std::fs::write(artifact_in(&root), b"not zstd").unwrap();
    assert!(matches!(state(), Some(Freshness::Unreadable { .. })));
    std::fs::remove_dir_all(root.join(ARTIFACT_DIR)).unwrap();
    assert_eq!(state(), Some(Freshness::Absent { path, failed: None }));
}

#[test]
fn by_default_only_a_tree_without_an_artifact_gets_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, TREE);
    let db = dir.path().join("a.db");
    let run = |artifact: ArtifactWrite| {
        let mut o = options(&root, &db);
        o.artifact = artifact;
        crate::common::run(&o).unwrap()
    };
    assert!(run(ArtifactWrite::Never).artifact.is_none());
    assert!(!artifact_in(&root).exists());
    // The first run of the defaults writes it...
    std::fs::remove_file(&db).unwrap();
    assert!(run(ArtifactWrite::IfAbsent).artifact.is_some());
    let first = artifact_bytes(&root);
    // ...later ones leave it as it is, however the tree changed.
    write(&root, "app/core.py", b"def helper():\n    return 2\n");
    let s = run(ArtifactWrite::IfAbsent);
    assert_eq!((s.extracted, s.artifact.is_none()), (1, true));
    assert_eq!(artifact_bytes(&root), first);
    // Asked for, it is brought up to date: the bytes of a full index of the edited tree.
    assert!(run(ArtifactWrite::Always).artifact.is_some());
    let refreshed = artifact_bytes(&root);
    assert_ne!(refreshed, first);
    let other = dir.path().join("copy");
    write_tree(&other, TREE);
    write(&other, "app/core.py", b"def helper():\n    return 2\n");
    index_with_artifact(&other, &dir.path().join("b.db"), 1);
    assert_eq!(artifact_bytes(&other), refreshed);
}
