//! The `indexer` binary end to end: JSON shapes, project discovery and error exits (killed
//! runs: tests/crash.rs).

use crate::common::*;

fn fixture() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    write_tree(
        repo.path(),
        &[
            (
                "svc/http.py",
                "class HttpClient:\n    \"\"\"Talks HTTP.\"\"\"\n\n    def parseHTTPRequest(self, raw):\n        return raw\n",
            ),
            ("svc/util.go", "package svc\n\n// GetUserName returns it.\nfunc GetUserName() string { return \"\" }\n"),
            ("notes.md", "# Notes\n"),
        ],
    );
    repo
}

#[test]
fn index_status_search_and_get_source_speak_json() {
    let repo = fixture();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();

    let summary = json(&indexer(cache.path(), root, &["index", ".", "--json"]));
    assert_eq!(summary["mode"], "full");
    assert_eq!(summary["files"], 3);
    assert_eq!(summary["languages"]["python"], 1);
    assert!(summary["nodes_by_kind"]["Method"].as_i64().unwrap() >= 1);
    let db = summary["db"].as_str().unwrap().to_string();
    assert!(
        db.starts_with(cache.path().to_str().unwrap()),
        "db in cache: {db}"
    );
    // The database stays in the cache; the tree gains only the committed artifact, written
    // in the background.
    crate::common::wait_for_artifact(root);
    let mut written: Vec<String> = std::fs::read_dir(root.join(".codebase-index"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, [".gitattributes", "artifact.json", "graph.db.zst"]);

    // Commands run in a subfolder find the project.
    let sub = root.join("svc");
    let status = json(&indexer(cache.path(), &sub, &["status", "--json"]));
    assert_eq!(status["db"], db.as_str());
    assert_eq!(status["files"], 3);
    assert_eq!(status["artifact"]["state"], "current");
    let text = indexer(cache.path(), &sub, &["status"]);
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .contains("artifact  .codebase-index/graph.db.zst: current\n"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );

    // Sub-token search: "http request" finds parseHTTPRequest.
    let hits = json(&indexer(
        cache.path(),
        &sub,
        &["search", "http request", "--json", "--kind", "method"],
    ));
    let first = &hits["hits"][0];
    assert_eq!(
        first["qualified_name"],
        "svc.http.HttpClient.parseHTTPRequest"
    );
    assert_eq!(first["name"], "parseHTTPRequest");
    assert_eq!(first["kind"], "Method");
    assert_eq!(first["path"], "svc/http.py");
    assert_eq!(first["start_line"], 4);
    assert!(first["score"].as_f64().unwrap() > 0.0);

    let hits = json(&indexer(
        cache.path(),
        root,
        &["search", "user name", "--json"],
    ));
    assert_eq!(hits["hits"][0]["name"], "GetUserName");

    let src = json(&indexer(
        cache.path(),
        root,
        &["get-source", "svc.http.HttpClient", "--json"],
    ));
    assert_eq!(src["docstring"], "Talks HTTP.");
    assert!(src["source"]
        .as_str()
        .unwrap()
        .starts_with("class HttpClient:"));
    assert!(src["source"].as_str().unwrap().ends_with("return raw"));

    // A unique short name or qualified-name suffix works as well.
    for short in [
        "parseHTTPRequest",
        "HttpClient.parseHTTPRequest",
        "http.HttpClient",
    ] {
        let found = json(&indexer(
            cache.path(),
            root,
            &["get-source", short, "--json"],
        ));
        assert!(
            found["qualified_name"].as_str().unwrap().ends_with(short),
            "{short}"
        );
    }

    // A file path works too, and so does --project from anywhere.
    let other = tempfile::tempdir().unwrap();
    let name = root.file_name().unwrap().to_str().unwrap();
    let file = indexer(
        cache.path(),
        other.path(),
        &["get-source", "notes.md", "--project", name],
    );
    assert!(file.status.success());
    assert!(String::from_utf8_lossy(&file.stdout).contains("# Notes"));
}

#[test]
fn errors_exit_non_zero_with_advice() {
    let cache = tempfile::tempdir().unwrap();
    let nowhere = tempfile::tempdir().unwrap();

    let out = indexer(cache.path(), nowhere.path(), &["index", "missing-dir"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no such directory"), "{err}");
    assert!(out.stdout.is_empty());

    let out = indexer(cache.path(), nowhere.path(), &["status"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("indexer index PATH"));

    let repo = fixture();
    indexer(cache.path(), repo.path(), &["index", "."]);
    let out = indexer(cache.path(), repo.path(), &["get-source", "NoSuchThing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("indexer search"));
    let out = indexer(
        cache.path(),
        repo.path(),
        &["search", "x", "--kind", "Gizmo"],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown kind"));
}

#[test]
fn trace_callers_and_callees_walk_the_graph_and_show_unresolved_sites() {
    let repo = tempfile::tempdir().unwrap();
    write_tree(
        repo.path(),
        &[
            ("app/core.py", "def save(x):\n    return x\n\n\ndef store(x):\n    return save(x)\n"),
            (
                "app/api.py",
                "from app.core import store\nimport os\n\n\ndef handle(req):\n    \
                 os.getcwd()\n    req.save()\n    return store(req)\n\n\ndef main():\n    return handle(1)\n",
            ),
        ],
    );
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();
    json(&indexer(cache.path(), root, &["index", ".", "--json"]));

    let t = json(&indexer(
        cache.path(),
        root,
        &["trace-callers", "app.core.save", "--depth", "3", "--json"],
    ));
    let hops: Vec<(u64, &str, &str)> = t["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["depth"].as_u64().unwrap(),
                h["caller"].as_str().unwrap(),
                h["strategy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hops,
        [
            (1, "app.core.store", "same_file"),
            (2, "app.api.handle", "import"),
            (3, "app.api.main", "same_file")
        ]
    );
    // `req.save()` names `save` but is a method call on an unknown receiver: listed, labelled.
    let sites = t["unresolved"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{t}");
    assert_eq!(sites[0]["text"], "req.save");
    assert_eq!(sites[0]["caller"], "app.api.handle");

    // Depth 1 stops at the direct caller; a confidence floor above every edge leaves none.
    let t = json(&indexer(
        cache.path(),
        root,
        &["trace-callers", "save", "--depth", "1", "--json"],
    ));
    assert_eq!(t["hops"].as_array().unwrap().len(), 1);
    let t = json(&indexer(
        cache.path(),
        root,
        &[
            "trace-callers",
            "app.core.save",
            "--min-confidence",
            "0.99",
            "--json",
        ],
    ));
    assert!(t["hops"].as_array().unwrap().is_empty());
    assert!(t["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["reason"]
            .as_str()
            .unwrap()
            .starts_with("below min confidence")));

    let t = json(&indexer(
        cache.path(),
        root,
        &["trace-callees", "app.api.handle", "--json"],
    ));
    let callees: Vec<&str> = t["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["callee"].as_str().unwrap())
        .collect();
    assert_eq!(callees, ["app.core.store", "app.core.save"]);
    let reasons: Vec<(&str, &str)> = t["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["text"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    // No repository method is named `save`: a method call on an unknown receiver is external.
    assert_eq!(
        reasons,
        [("os.getcwd", "external"), ("req.save", "external")]
    );

    let text = indexer(cache.path(), root, &["trace-callers", "app.core.save"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("app.core.save <- app.core.store  app/core.py:6  0.95 same_file"),
        "{text}"
    );
    assert!(text.contains("did not resolve"), "{text}");

    let src = json(&indexer(
        cache.path(),
        root,
        &["get-source", "app.core.store", "--json"],
    ));
    assert_eq!(src["callers"][0]["qualified_name"], "app.api.handle");
    assert_eq!(src["callees"][0]["qualified_name"], "app.core.save");

    let status = json(&indexer(cache.path(), root, &["status", "--json"]));
    assert_eq!(status["graph"]["call_sites"], 5);
    assert_eq!(status["graph"]["call_sites_resolved"], 3);
    assert_eq!(
        status["graph"]["call_sites_unresolved_by_reason"]["external"],
        2
    );

    let missing = indexer(cache.path(), root, &["trace-callers", "nope.nothing"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nothing named"));
}

#[test]
fn the_first_index_writes_its_artifact_in_the_background() {
    let repo = fixture();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();
    let summary = json(&indexer(cache.path(), root, &["index", ".", "--json"]));
    assert!(summary["artifact_due"]
        .as_str()
        .unwrap()
        .ends_with(".codebase-index/graph.db.zst"));
    assert!(
        summary["artifact"].is_null(),
        "not written by the run itself"
    );
    wait_for_artifact(root);
    let status = json(&indexer(cache.path(), root, &["status", "--json"]));
    assert_eq!(status["artifact"]["state"], "current");
    // What the background wrote is the canonical export.
    let other = cache.path().join("other.db.zst");
    json(&indexer(
        cache.path(),
        root,
        &["export", "--output", other.to_str().unwrap(), "--json"],
    ));
    assert_eq!(
        std::fs::read(root.join(".codebase-index/graph.db.zst")).unwrap(),
        std::fs::read(&other).unwrap()
    );
    // With an artifact in the tree, later runs leave it alone and start nothing.
    std::fs::write(root.join("svc/more.py"), "def more():\n    pass\n").unwrap();
    let summary = json(&indexer(cache.path(), root, &["index", ".", "--json"]));
    assert!(summary.get("artifact_due").is_none());
    let status = json(&indexer(cache.path(), root, &["status", "--json"]));
    assert_eq!(status["artifact"]["state"], "stale");
    assert_eq!(status["artifact"]["files"], 1);
}

#[test]
fn a_background_export_that_fails_is_reported_by_status() {
    let repo = fixture();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();
    // `.codebase-index` taken by a file: the artifact has nowhere to go.
    std::fs::write(root.join(".codebase-index"), "not a folder\n").unwrap();
    let out = indexer(cache.path(), root, &["index", "."]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("being written in the background"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        let status = json(&indexer(cache.path(), root, &["status", "--json"]));
        if status["artifact"]["state"] != "writing" && status["artifact"]["failed"].is_string() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status["artifact"]["state"], "absent");
    let failed = status["artifact"]["failed"].as_str().unwrap();
    assert!(failed.contains(".codebase-index"), "{failed}");
    let text =
        String::from_utf8_lossy(&indexer(cache.path(), root, &["status"]).stdout).into_owned();
    assert!(
        text.contains("writing it in the background failed"),
        "{text}"
    );
}

#[test]
fn artifact_export_import_and_queries_on_the_compressed_file() {
    let repo = fixture();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();

    // `index` writes the artifact; `--no-artifact` would not.
    json(&indexer(cache.path(), root, &["index", ".", "--json"]));
    crate::common::wait_for_artifact(root);
    let artifact = root.join(".codebase-index/graph.db.zst");
    assert!(artifact.exists());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".codebase-index/artifact.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["files"], 3);
    assert_eq!(manifest["compression_level"], 9);

    // Queries read the artifact directly.
    let hits = json(&indexer(
        cache.path(),
        root,
        &[
            "search",
            "GetUserName",
            "--db",
            artifact.to_str().unwrap(),
            "--json",
        ],
    ));
    assert_eq!(hits["hits"][0]["qualified_name"], "svc.GetUserName");

    // `export` to another path at another level.
    let out = root.join("copy.db.zst");
    let exported = json(&indexer(
        cache.path(),
        root,
        &[
            "export",
            "--output",
            out.to_str().unwrap(),
            "--compression-level",
            "3",
            "--json",
        ],
    ));
    assert_eq!(exported["written"], true);
    assert_eq!(exported["manifest"]["compression_level"], 3);
    assert!(out.exists());

    // `import` loads an artifact as another checkout's index, ready for queries.
    let clone = tempfile::tempdir().unwrap();
    write_tree(
        clone.path(),
        &[
            ("svc/http.py", "class HttpClient:\n    pass\n"),
            ("svc/util.go", "package svc\n"),
            ("notes.md", "# Notes\n"),
        ],
    );
    let other_cache = tempfile::tempdir().unwrap();
    let imported = indexer(
        other_cache.path(),
        clone.path(),
        &["import", artifact.to_str().unwrap(), "."],
    );
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let hits = json(&indexer(
        other_cache.path(),
        clone.path(),
        &["search", "parseHTTPRequest", "--json"],
    ));
    assert_eq!(
        hits["hits"][0]["qualified_name"],
        "svc.http.HttpClient.parseHTTPRequest"
    );

    // A bad level is refused before anything runs.
    let bad = indexer(
        cache.path(),
        root,
        &["index", ".", "--compression-level", "30"],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("out of range"));
}

#[test]
fn rank_files_and_eval_speak_json() {
    let repo = fixture();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();
    json(&indexer(
        cache.path(),
        root,
        &["index", ".", "--no-artifact", "--json"],
    ));

    let ranked = json(&indexer(
        cache.path(),
        root,
        &["rank-files", "parsing an HTTP request fails", "--json"],
    ));
    assert_eq!(ranked[0]["path"], "svc/http.py");
    assert!(ranked[0]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(ranked[0]["symbol"], "svc.http.HttpClient.parseHTTPRequest");
    // An issue text may open with a flag: it is the query all the same, given as it is or
    // after `--`, and so is the text of `map --query` and `pack --query`.
    for args in [
        &[
            "rank-files",
            "--verbose: parsing an HTTP request fails",
            "--json",
        ][..],
        &[
            "rank-files",
            "--json",
            "--",
            "--verbose: parsing an HTTP request fails",
        ],
    ] {
        let flagged = json(&indexer(cache.path(), root, args));
        assert_eq!(flagged[0]["path"], "svc/http.py", "{args:?}");
    }
    for command in ["map", "pack"] {
        let out = indexer(
            cache.path(),
            root,
            &[
                command,
                "--query",
                "--verbose parsing HTTP requests",
                "--json",
            ],
        );
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("parseHTTPRequest"));
    }

    let tasks = root.join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\": \"t1\", \"query\": \"user name lookup\", \"gold_files\": [\"svc/util.go\"], \"release\": \"1.0\"}\n\n\
         {\"id\": \"t2\", \"query\": \"http\", \"gold_files\": [\"gone.py\"]}\n",
    )
    .unwrap();
    let report = json(&indexer(
        cache.path(),
        root,
        &[
            "eval",
            "tasks.jsonl",
            "--k",
            "1,5",
            "--budgets",
            "500",
            "--json",
        ],
    ));
    assert_eq!(report["systems"], serde_json::json!(["indexer", "bm25"]));
    assert_eq!(report["excluded"], serde_json::json!(["t2"]));
    assert_eq!(report["tasks"][0]["results"]["indexer"]["rank"], 1);
    assert_eq!(report["summary"]["indexer"]["acc_at"]["1"], 1.0);
    assert!(report["summary"]["bm25"]["latency_ms"]["p95"].is_number());

    std::fs::write(&tasks, "{\"id\": \"t1\"}\n").unwrap();
    let out = indexer(cache.path(), root, &["eval", "tasks.jsonl"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tasks.jsonl:1: not a task"), "{err}");
}

#[test]
fn skeleton_map_and_pack_speak_json_write_files_and_refuse_bad_arguments() {
    let repo = fixture();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path();
    json(&indexer(
        cache.path(),
        root,
        &["index", ".", "--no-artifact", "--json"],
    ));

    let skeleton = json(&indexer(
        cache.path(),
        root,
        &["skeleton", "--budget", "500", "--json"],
    ));
    assert_eq!(skeleton["mode"], "skeleton");
    let text = skeleton["text"].as_str().unwrap();
    assert!(text.contains("### svc/http.py\n"), "{text}");
    assert!(text
        .contains("    def parseHTTPRequest(self, raw):  # svc.http.HttpClient.parseHTTPRequest"));
    assert!(skeleton["account"]["tokens"].as_u64().unwrap() <= 500);

    let map = json(&indexer(
        cache.path(),
        root,
        &[
            "map",
            "--budget",
            "300",
            "--query",
            "user name",
            "--tokenizer",
            "cl100k",
            "--json",
        ],
    ));
    assert_eq!(map["schema"], "codebase-indexer/map/1");
    assert_eq!(map["tokenizer"], "cl100k");
    assert_eq!(map["entries"][0]["qualified_name"], "svc.GetUserName");

    let pack = json(&indexer(
        cache.path(),
        root,
        &[
            "pack",
            "--entry",
            "parseHTTPRequest",
            "--budget",
            "400",
            "--json",
        ],
    ));
    assert_eq!(pack["schema"], "codebase-indexer/pack/1");
    assert_eq!(
        pack["files"][0]["symbols"][0]["qualified_name"],
        "svc.http.HttpClient.parseHTTPRequest"
    );

    // --output writes the pack there and says so on stderr; stdout stays empty.
    let out = indexer(
        cache.path(),
        root,
        &[
            "pack", "--query", "-", "--budget", "400", "--format", "xml", "--output", "ctx.xml",
        ],
    );
    // No stdin text: the query is empty, which is an error that names the problem.
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no words"));
    let out = indexer(
        cache.path(),
        root,
        &[
            "pack",
            "--query",
            "http request",
            "--budget",
            "400",
            "--format",
            "xml",
            "--output",
            "ctx.xml",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(root.join("ctx.xml")).unwrap();
    assert!(written.starts_with("<context_pack "), "{written}");

    for (args, says) in [
        (&["pack", "--budget", "400"][..], "--entry"),
        (
            &["pack", "--entry", "x", "--query", "y"][..],
            "cannot be used with",
        ),
        (&["pack", "--entry", "nothing.here"][..], "nothing named"),
        (
            &["pack", "--entry", "svc/http.py", "--format", "yaml"][..],
            "[possible values: markdown, xml, json]",
        ),
        (
            &["map", "--tokenizer", "gpt2"][..],
            "[possible values: o200k, cl100k]",
        ),
        (
            &["skeleton", "--mode", "tree"][..],
            "[possible values: auto, skeleton, compact, summary, deps]",
        ),
        (&["skeleton", "--budget", "5"][..], "budget"),
        (
            &["eval", "tasks.jsonl", "--mode", "graph"][..],
            "[possible values: files, map, pack]",
        ),
    ] {
        let out = indexer(cache.path(), root, args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
