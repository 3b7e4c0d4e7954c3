//! An incremental re-index re-resolves exactly what a change can affect: after each edit,
//! addition, rename and deletion the edges and unresolved references equal a full rebuild's.

use crate::common::{dump, options, write, write_tree};
use std::path::Path;

const EDGES: &str = "SELECT source_id, target_id, kind, confidence, strategy, line FROM edges \
                     ORDER BY source_id, target_id, kind, line, strategy";
const UNRESOLVED: &str = "SELECT source_id, kind, name, key, reason, candidates, line \
                          FROM unresolved ORDER BY source_id, line, name, kind";

/// Every definition the full-text index of `db` finds by any word of the names in it, with
/// its score.
fn full_text_hits(db: &Path) -> Vec<String> {
    let mut words: Vec<String> = dump(db, "SELECT name FROM nodes")
        .iter()
        .flat_map(|n| {
            n.split(|c: char| !c.is_ascii_alphanumeric())
                .map(str::to_lowercase)
        })
        .filter(|w| !w.is_empty())
        .collect();
    words.sort();
    words.dedup();
    let query = words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    dump(
        db,
        // The scores too: they count every term an entry holds.
        &format!(
            "SELECT rowid, round(bm25(nodes_fts), 9) FROM nodes_fts \
             WHERE nodes_fts MATCH '{query}' ORDER BY rowid"
        ),
    )
}

/// Re-indexes `root` incrementally into `db`, rebuilds it from scratch elsewhere, and
/// compares the graphs row for row.
fn assert_incremental_equals_full(root: &Path, db: &Path, step: &str) {
    let summary = crate::common::run(&options(root, db)).unwrap();
    assert_eq!(summary.mode, "incremental", "{step}");
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.db");
    crate::common::run(&options(root, &full)).unwrap();
    // The full-text index the run kept itself is whole and answers as a rebuilt one does.
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")
        .unwrap_or_else(|e| panic!("{step}: the full-text index is damaged: {e}"));
    for sql in [
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
        "SELECT id, qualified_name FROM nodes ORDER BY id",
    ] {
        assert_eq!(dump(db, sql), dump(&full, sql), "{step}: {sql}");
    }
    let hits = full_text_hits(db);
    assert!(!hits.is_empty(), "{step}");
    assert_eq!(hits, full_text_hits(&full), "{step}: full-text hits");
    for sql in [EDGES, UNRESOLVED] {
        let a = dump(db, sql);
        let b = dump(&full, sql);
        if a != b {
            let only_inc: Vec<_> = a.iter().filter(|r| !b.contains(r)).collect();
            let only_full: Vec<_> = b.iter().filter(|r| !a.contains(r)).collect();
            panic!(
                "{step}: incremental differs from full rebuild\nonly incremental: {only_inc:#?}\n\
                 only full: {only_full:#?}\n{}",
                crate::common::graph::load(db).describe()
            );
        }
    }
}

#[test]
fn python_edits_adds_renames_and_deletes_match_a_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let db = dir.path().join("index.db");
    write_tree(
        &root,
        &[
            ("pkg/__init__.py", "from .core import helper\n"),
            (
                "pkg/core.py",
                "class Base:\n    def ping(self):\n        return 1\n\n\ndef helper():\n    return Base()\n",
            ),
            (
                "pkg/app.py",
                "from pkg import helper\nfrom pkg.core import Base\n\n\nclass App(Base):\n    \
                 def run(self):\n        self.ping()\n        self.extra()\n        return helper()\n\n\n\
                 def main():\n    missing()\n    return App().run()\n",
            ),
            ("pkg/other.py", "def unrelated():\n    return 2\n"),
        ],
    );
    crate::common::run(&options(&root, &db)).unwrap();

    // A new definition that an unresolved call was waiting for.
    write(&root, "pkg/extra.py", b"def missing():\n    return 3\n");
    write(
        &root,
        "pkg/app.py",
        b"from pkg import helper\nfrom pkg.core import Base\nfrom pkg.extra import missing\n\n\n\
          class App(Base):\n    def run(self):\n        self.ping()\n        self.extra()\n        \
          return helper()\n\n\ndef main():\n    missing()\n    return App().run()\n",
    );
    assert_incremental_equals_full(&root, &db, "add a file");

    // A base class gains the method a subclass in another file calls through `self`.
    write(
        &root,
        "pkg/core.py",
        b"class Base:\n    def ping(self):\n        return 1\n\n    def extra(self):\n        \
          return 4\n\n\ndef helper():\n    return Base()\n",
    );
    assert_incremental_equals_full(&root, &db, "add a method to a base class");

    // Two definitions trade places: each takes the other's id, and the edges other files
    // have into them must follow the definition, not the id.
    write(
        &root,
        "pkg/core.py",
        b"def helper():\n    return Base()\n\n\nclass Base:\n    def extra(self):\n        \
          return 4\n\n    def ping(self):\n        return 1\n",
    );
    assert_incremental_equals_full(&root, &db, "swap definitions");

    // Renaming a function leaves its callers in other files unresolved; ids shift.
    write(
        &root,
        "pkg/core.py",
        b"# moved\n\nclass Base:\n    def ping(self):\n        return 1\n\n    def extra(self):\n        \
          return 4\n\n\ndef helper2():\n    return Base()\n",
    );
    assert_incremental_equals_full(&root, &db, "rename a function");

    // The re-export follows the rename.
    write(
        &root,
        "pkg/__init__.py",
        b"from .core import helper2 as helper\n",
    );
    assert_incremental_equals_full(&root, &db, "change a re-export");

    // A second definition of the same name makes a unique-name guess ambiguous.
    write(
        &root,
        "pkg/other.py",
        b"def unrelated():\n    return 2\n\n\nclass Other:\n    def ping(self):\n        return 5\n",
    );
    write(&root, "pkg/use.py", b"def use(x):\n    return x.ping()\n");
    assert_incremental_equals_full(&root, &db, "add a same-named method");

    // A module of the same name earlier in path order: the definitions of the untouched
    // `pkg/tools/__init__.py` become `pkg.tools.fmt#2` (renamed in place, full text too).
    write(
        &root,
        "pkg/tools/__init__.py",
        b"def fmt():\n    return 6\n",
    );
    assert_incremental_equals_full(&root, &db, "add a package");
    write(&root, "pkg/tools.py", b"def fmt():\n    return 7\n");
    assert_incremental_equals_full(&root, &db, "shadow a package's names");
    assert!(
        dump(
            &db,
            "SELECT qualified_name FROM nodes WHERE qualified_name LIKE 'pkg.tools.fmt%'"
        )
        .iter()
        .any(|q| q.contains("fmt#2")),
        "the earlier package's names are renumbered"
    );

    // Deleting the file that defined a called function.
    std::fs::remove_file(root.join("pkg/extra.py")).unwrap();
    assert_incremental_equals_full(&root, &db, "delete a file");

    std::fs::remove_file(root.join("pkg/other.py")).unwrap();
    assert_incremental_equals_full(&root, &db, "delete the ambiguous twin");
}

/// A file resolved again because a name it uses changed elsewhere, whose references still
/// find what they found, keeps its stored rows as they are: nothing of it is rewritten.
#[test]
fn a_re_resolved_file_that_finds_the_same_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let db = dir.path().join("index.db");
    write_tree(
        &root,
        &[
            ("pkg/core.py", "def helper():\n    return 1\n"),
            (
                "pkg/app.py",
                "from pkg.core import helper\n\n\ndef main():\n    missing()\n    return helper()\n",
            ),
            ("pkg/other.py", "def unrelated():\n    return 2\n"),
        ],
    );
    crate::common::run(&options(&root, &db)).unwrap();
    let app_rows = |db: &Path| {
        let app = "(SELECT id FROM files WHERE path = 'pkg/app.py')";
        let mut rows = dump(
            db,
            &format!(
                "SELECT 'edge', rowid, source_id, target_id, kind FROM edges \
                 WHERE source_id >> 19 = {app} AND kind <> 'contains' ORDER BY rowid"
            ),
        );
        rows.extend(dump(
            db,
            &format!(
                "SELECT 'unresolved', rowid, source_id, name, reason FROM unresolved \
                 WHERE source_id >> 19 = {app} ORDER BY rowid"
            ),
        ));
        rows
    };
    let before = app_rows(&db);
    assert!(before.iter().any(|r| r.contains("\"edge\"")), "{before:?}");
    assert!(
        before.iter().any(|r| r.contains("\"unresolved\"")),
        "{before:?}"
    );

    // A second `helper`: `pkg/app.py` is resolved again, and its import still decides.
    write(
        &root,
        "pkg/other.py",
        b"def unrelated():\n    return 2\n\n\ndef helper():\n    return 3\n",
    );
    let summary = crate::common::run(&options(&root, &db)).unwrap();
    assert_eq!(summary.extracted, 1);
    assert_eq!(
        summary.resolution.files, 2,
        "the edited file and the one using the name"
    );
    assert_eq!(app_rows(&db), before);
    assert_incremental_equals_full(&root, &db, "a name added elsewhere");
}

/// An edit that changes no definition, import or typed variable resolves only its own file
/// again: the untyped variables of a file's own scope (a JavaScript test's `const $` inside
/// a callback) are no fact that other files' references depend on.
#[test]
fn an_edit_that_changes_no_name_resolves_only_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let db = dir.path().join("index.db");
    write_tree(
        &root,
        &[
            (
                "src/app.test.js",
                "QUnit.test('init', function(assert) {\n  const $ = django.jQuery;\n  \
                 $('#id').hide();\n  assert.equal(1, 1);\n});\n",
            ),
            (
                "src/use.js",
                "function other() {\n  const count = 2;\n  return $(count);\n}\n",
            ),
        ],
    );
    crate::common::run(&options(&root, &db)).unwrap();
    write(
        &root,
        "src/app.test.js",
        b"QUnit.test('init', function(assert) {\n  const $ = django.jQuery;\n  \
          $('#id').hide();\n  assert.equal(1, 1);\n});\n// note\n",
    );
    let summary = crate::common::run(&options(&root, &db)).unwrap();
    assert_eq!(summary.extracted, 1);
    assert_eq!(summary.resolution.files, 1, "only the edited file");
    assert_incremental_equals_full(&root, &db, "a comment added");
}

#[test]
fn go_and_java_packages_match_a_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let db = dir.path().join("index.db");
    write_tree(
        &root,
        &[
            ("go.mod", "module example.com/m\n"),
            ("util/util.go", "package util\n\nfunc Helper() int { return 1 }\n"),
            (
                "main.go",
                "package main\n\nimport \"example.com/m/util\"\n\nfunc main() { util.Helper(); local() }\n",
            ),
            (
                "src/com/x/A.java",
                "package com.x;\n\npublic class A {\n  void run() { new B().go(); }\n}\n",
            ),
            (
                "src/com/x/B.java",
                "package com.x;\n\npublic class B {\n  void go() {}\n}\n",
            ),
        ],
    );
    crate::common::run(&options(&root, &db)).unwrap();

    write(&root, "local.go", b"package main\n\nfunc local() {}\n");
    assert_incremental_equals_full(&root, &db, "add a file to a Go package");

    write(
        &root,
        "util/util.go",
        b"package util\n\n// Helper moved down.\n\nfunc Helper() int { return 1 }\n",
    );
    assert_incremental_equals_full(&root, &db, "shift ids of a called Go function");

    write(
        &root,
        "src/com/x/B.java",
        b"package com.x;\n\npublic class B {\n  void stop() {}\n}\n",
    );
    assert_incremental_equals_full(&root, &db, "rename a Java method");
}

#[test]
fn super_calls_follow_methods_added_to_and_removed_from_bases() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let db = dir.path().join("index.db");
    write_tree(
        &root,
        &[
            ("lib/base.rb", "class Base\nend\n"),
            ("lib/mid.rb", "class Mid < Base\nend\n"),
            (
                "lib/kid.rb",
                "class Kid < Mid\n  def save\n    super\n  end\nend\n",
            ),
            ("web/base.js", "export class Base {}\n"),
            (
                "web/kid.js",
                "import { Base } from \"./base\";\n\nexport class Kid extends Base {\n  constructor() {\n    super();\n  }\n}\n",
            ),
        ],
    );
    crate::common::run(&options(&root, &db)).unwrap();

    // The calls stay unresolved under the names they need: adding those methods to a base
    // in another file resolves them.
    write(
        &root,
        "lib/base.rb",
        b"class Base\n  def save\n    true\n  end\nend\n",
    );
    assert_incremental_equals_full(&root, &db, "add the Ruby method `super` calls");
    write(
        &root,
        "web/base.js",
        b"export class Base {\n  constructor() {}\n}\n",
    );
    assert_incremental_equals_full(&root, &db, "add the constructor `super()` calls");
    let g = crate::common::graph::load(&db);
    g.edge("Kid.save", "calls", "Base.save");
    g.edge(
        "web.kid.Kid.constructor",
        "calls",
        "web.base.Base.constructor",
    );

    write(
        &root,
        "lib/mid.rb",
        b"class Mid < Base\n  def save\n    super\n  end\nend\n",
    );
    assert_incremental_equals_full(&root, &db, "override the method in between");
    write(&root, "lib/mid.rb", b"class Mid < Base\nend\n");
    write(&root, "web/base.js", b"export class Base {}\n");
    assert_incremental_equals_full(&root, &db, "remove the override and the constructor");
}
