//! `indexer rank-files` and `indexer eval` on a small project written by the test: the
//! ranking puts the code that defines what a query is about first (tests and documentation
//! after it, a file the query names as code at the top), and the evaluation reports each
//! task's rank, its misses and exclusions, for this tool and for the BM25 baseline.

use crate::common::{index, write_tree};
use codebase_indexer::{Error, EvalOptions, Index, Renderer, Task, Tokenizer};

fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(
        &root,
        &[
            (
                "shop/invoice.py",
                "class Invoice:\n    \"\"\"A bill sent to a customer.\"\"\"\n\n    def total_with_tax(self, rate):\n        return self.amount * (1 + rate)\n",
            ),
            (
                "shop/shipping.py",
                "def shipping_cost(weight, distance):\n    \"\"\"Cost of sending a parcel.\"\"\"\n    return weight * distance\n",
            ),
            (
                "shop/currency.py",
                "def convert_amount(amount, rate):\n    return amount * rate\n",
            ),
            (
                "tests/test_invoice.py",
                "from shop.invoice import Invoice\n\ndef test_total_with_tax():\n    assert Invoice().total_with_tax(0.2)\n",
            ),
            (
                "docs/invoice.md",
                "# Invoice total with tax\n\nThe invoice total with tax is the amount times one plus the tax rate.\n",
            ),
        ],
    );
    let db = dir.path().join("index.db");
    index(&root, &db);
    (dir, db)
}

#[test]
fn code_ranks_before_its_tests_and_docs_and_named_files_come_first() {
    let (_dir, db) = project();
    let index = Index::open(&db).unwrap();
    let ranked = index
        .rank_files("The invoice total with tax is wrong", 10)
        .unwrap();
    let paths: Vec<&str> = ranked.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths[0], "shop/invoice.py", "{ranked:?}");
    assert_eq!(
        ranked[0].symbol.as_deref(),
        Some("shop.invoice.Invoice.total_with_tax")
    );
    let pos = |p: &str| paths.iter().position(|x| *x == p).unwrap();
    assert!(pos("shop/invoice.py") < pos("tests/test_invoice.py"));
    assert!(!paths.contains(&"shop/shipping.py"), "{paths:?}");
    assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));

    // Named as code: a path, and an identifier defined in one file.
    let ranked = index
        .rank_files("tax is wrong, see shop/currency.py", 3)
        .unwrap();
    assert_eq!(ranked[0].path, "shop/currency.py", "{ranked:?}");
    let ranked = index
        .rank_files("the tax for shipping_cost is wrong", 3)
        .unwrap();
    assert_eq!(ranked[0].path, "shop/shipping.py", "{ranked:?}");

    let e = index.rank_files("the of a", 3).unwrap_err();
    assert!(e.to_string().contains("no words"), "{e}");
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
}

#[test]
fn eval_reports_ranks_misses_and_exclusions_for_both_systems() {
    let (dir, db) = project();
    let index = Index::open(&db).unwrap();
    // A hand-made tasks file: one task per line, extra fields ignored, blank lines skipped.
    let file = dir.path().join("tasks.jsonl");
    std::fs::write(
        &file,
        r#"{"id": "tax", "query": "Invoice total with tax is off", "gold_files": ["shop/invoice.py"], "release": "1.0"}

{"id": "parcel", "query": "sending a parcel far costs too much", "gold_files": ["shop/shipping.py", "shop/removed.py"], "gold_symbols": ["shop/shipping.py::shipping_cost"]}
{"id": "gone", "query": "anything", "gold_files": ["shop/removed.py"]}
"#,
    )
    .unwrap();
    let tasks = Task::read_all(&file).unwrap();
    assert_eq!(tasks.len(), 3);
    assert_eq!(tasks[1].gold_symbols, ["shop/shipping.py::shipping_cost"]);
    let opts = EvalOptions {
        k: vec![1, 3],
        budgets: vec![1_000_000],
    };
    let report = index.eval(&tasks, &opts).unwrap();
    assert_eq!(report.excluded, ["gone"]);
    let parcel = &report.tasks[1];
    assert_eq!(parcel.gold_files, ["shop/shipping.py"]);
    assert_eq!(parcel.missing_gold_files, ["shop/removed.py"]);
    // Whole-file BM25 ranks the documentation and the test, dense with the query's words,
    // above the code; the tool ranks the code first.
    let tax = &report.tasks[0].results;
    assert_eq!(tax["indexer"].rank, Some(1), "{:?}", tax["indexer"].top);
    assert_eq!(tax["bm25"].rank, Some(3), "{:?}", tax["bm25"].top);
    assert_eq!(tax["bm25"].top[0], "docs/invoice.md");
    for system in ["indexer", "bm25"] {
        assert_eq!(parcel.results[system].rank, Some(1), "{system}");
        assert_eq!(report.summary[system].tasks, 2);
        assert_eq!(report.summary[system].in_budget_recall[&1_000_000], 1.0);
    }
    let (tool, bm25) = (&report.summary["indexer"], &report.summary["bm25"]);
    assert_eq!(
        (tool.acc_at[&1], tool.acc_at[&3], tool.mrr),
        (1.0, 1.0, 1.0)
    );
    // (1/3 + 1) / 2
    assert_eq!(
        (bm25.acc_at[&1], bm25.acc_at[&3], bm25.mrr),
        (0.5, 1.0, 0.6667)
    );
    assert!(report.tasks[2].results.is_empty());
}

#[test]
fn eval_of_the_map_and_the_pack_reports_gold_files_and_symbols_per_budget() {
    let (dir, db) = project();
    let index = Index::open(&db).unwrap();
    let file = dir.path().join("tasks.jsonl");
    std::fs::write(
        &file,
        r#"{"id": "tax", "query": "Invoice total with tax is off", "gold_files": ["shop/invoice.py"], "gold_symbols": ["shop/invoice.py::Invoice.total_with_tax", "shop/invoice.py::imports"]}
{"id": "module", "query": "sending a parcel costs too much", "gold_files": ["shop/shipping.py"], "gold_symbols": ["shop/shipping.py::impl:1", "shop/shipping.py::Gone.method"]}
{"id": "gone", "query": "anything", "gold_files": ["shop/removed.py"]}
"#,
    )
    .unwrap();
    let tasks = Task::read_all(&file).unwrap();
    for mode in [Renderer::Map, Renderer::Pack] {
        let report = index
            .eval_context(&tasks, mode, &[100, 2000], Tokenizer::O200k)
            .unwrap();
        assert_eq!(report.excluded, ["gone"], "{mode:?}");
        let tax = &report.tasks[0];
        assert_eq!(tax.gold_symbols, ["shop.invoice.Invoice.total_with_tax"]);
        // `imports` is module-level code, not a missing definition; `Gone.method` is missing.
        assert!(tax.missing_gold_symbols.is_empty());
        let module = &report.tasks[1];
        assert!(module.gold_symbols.is_empty());
        assert_eq!(
            module.missing_gold_symbols,
            ["shop/shipping.py::Gone.method"]
        );
        // A large budget holds the gold file and the symbol; a tiny one holds less.
        let big = &tax.results[&2000];
        assert!(
            big.gold_file && big.gold_symbol == Some(true),
            "{mode:?}: {big:?}"
        );
        assert!(big.tokens <= 2000 && big.bm25_gold_file);
        assert_eq!(module.results[&2000].gold_symbol, None);
        let s = &report.summary[&2000];
        assert_eq!((s.tasks, s.tasks_naming_symbols), (2, 1));
        assert_eq!((s.gold_file_recall, s.gold_symbol_recall), (1.0, 1.0));
        let small = &tax.results[&100];
        assert!(small.tokens <= 100, "{mode:?}: {small:?}");
    }
}
