//! The repo map and the context pack on a small project written by the test, in Python,
//! TypeScript, Go, Rust and Java: budgets are ceilings whatever the budget and target, items
//! are whole or absent, the pack grows callees then callers round by round, what was left out
//! is said, and every stated token count is tiktoken's count of the output.

use crate::common::lab::Rng;
use crate::common::{index, write_tree};
use codebase_indexer::{
    Error, Index, MapFormat, MapOptions, Pack, PackFormat as Format, PackOptions,
    PackTarget as Target, Rendering, RepoMap, Tokenizer,
};

/// `shop/orders.py` is the hub: `checkout` calls `reserve` and `charge`, `api.place_order`
/// calls `checkout`, `charge` calls `convert`. `report.py` holds a function far larger than
/// the small budgets, called by `checkout` too.
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let huge_body: String = (0..400)
        .map(|i| format!("    total += line_{i} * rate  # accumulate entry {i}\n"))
        .collect();
    let report = format!(
        "def monthly_report(rate):\n    \"\"\"Every order of the month, summed.\"\"\"\n    total = 0\n{huge_body}    return total\n"
    );
    write_tree(
        &root,
        &[
            (
                "shop/orders.py",
                "from shop.payments import charge\nfrom shop.stock import reserve\nfrom shop.report import monthly_report\n\n\
class Order:\n    \"\"\"An order placed by a customer.\"\"\"\n\n    def __init__(self, items):\n        self.items = items\n\n    def total(self):\n        return sum(i.price for i in self.items)\n\n\
def checkout(order):\n    \"\"\"Reserve the stock, then charge the customer.\"\"\"\n    reserve(order.items)\n    charge(order.total())\n    monthly_report(1)\n    return order\n",
            ),
            (
                "shop/payments.py",
                "from shop.currency import convert\n\ndef charge(amount, currency=\"EUR\"):\n    \"\"\"Charge a card; the code contains ]]> and <tags> & quotes \\\" on purpose.\"\"\"\n    s = \"]]>\"\n    return convert(amount, currency)\n",
            ),
            (
                "shop/currency.py",
                "def convert(amount, currency):\n    return amount * rate_of(currency)\n\ndef rate_of(currency):\n    return 1.0\n",
            ),
            (
                "shop/stock.py",
                "def reserve(items):\n    \"\"\"Hold the items in the warehouse.\"\"\"\n    for i in items:\n        hold(i)\n\ndef hold(item):\n    return item\n",
            ),
            ("shop/report.py", report.as_str()),
            (
                "shop/api.py",
                "from shop.orders import checkout, Order\n\ndef place_order(items):\n    return checkout(Order(items))\n",
            ),
            (
                "tests/test_orders.py",
                "from shop.orders import checkout\n\ndef test_checkout():\n    assert checkout([])\n",
            ),
            (
                "web/cart.ts",
                "import { price } from './price';\nexport class Cart {\n  items: number[] = [];\n  total(): number { return this.items.map(price).reduce((a, b) => a + b, 0); }\n}\n",
            ),
            (
                "web/price.ts",
                "export function price(x: number): number { return x * 1.2; }\n",
            ),
            (
                "svc/main.go",
                "package main\n\nfunc main() { serve(8080) }\n\nfunc serve(port int) int { return port }\n",
            ),
            (
                "core/src/lib.rs",
                "pub struct Ledger { entries: Vec<i64> }\nimpl Ledger {\n    pub fn balance(&self) -> i64 { sum(&self.entries) }\n}\nfn sum(xs: &[i64]) -> i64 { xs.iter().sum() }\n",
            ),
            (
                "app/src/Invoice.java",
                "package app;\npublic class Invoice {\n  public int total() { return tax(10); }\n  private int tax(int x) { return x / 5; }\n}\n",
            ),
        ],
    );
    let db = dir.path().join("index.db");
    index(&root, &db);
    (dir, db)
}

fn open(db: &std::path::Path) -> Index {
    Index::open(db).unwrap()
}

fn pack_of(index: &Index, target: Target, budget: usize, format: Format) -> Pack {
    index
        .pack(&PackOptions {
            target,
            budget,
            signatures_only: false,
            format,
            tokenizer: Tokenizer::O200k,
            show_dropped: true,
            ..PackOptions::default()
        })
        .unwrap()
}

fn symbols(p: &Pack) -> Vec<(String, Rendering)> {
    p.files
        .iter()
        .flat_map(|f| f.symbols.iter())
        .map(|s| (s.qualified_name.clone(), s.rendering))
        .collect()
}

// The order the pack considers its candidates in (callees, then callers, round by round) is
// not visible in a pack, which groups its symbols by file and lists each file's in source
// order: it is tested on the candidates themselves, in the unit test
// `context::pack::tests::pack_grows_callees_then_callers_round_by_round`.

#[test]
fn pack_skips_what_does_not_fit_without_cutting_it_and_says_so() {
    let (_dir, db) = project();
    let index = open(&db);
    let p = pack_of(
        &index,
        Target::Entry("shop.orders.checkout".into()),
        1100,
        Format::Markdown,
    );
    let got = symbols(&p);
    assert!(p.account.tokens <= 1100);
    // The huge callee does not fit: absent, listed as dropped and as not in context; the
    // smaller candidates after it are in.
    assert!(
        !got.iter().any(|(q, _)| q == "shop.report.monthly_report"),
        "{got:?}"
    );
    assert!(p
        .dropped_top
        .iter()
        .any(|d| d.qualified_name == "shop.report.monthly_report"));
    assert!(p
        .text
        .contains("[NOT IN CONTEXT] shop.report.monthly_report (shop/report.py:1)"));
    for qn in [
        "shop.orders.checkout",
        "shop.payments.charge",
        "shop.currency.convert",
    ] {
        assert!(
            got.contains(&(qn.to_string(), Rendering::Full)),
            "{qn}: {got:?}"
        );
    }
    // Whole symbols: each code block is exactly the definition's source.
    let source = std::fs::read_to_string(_dir.path().join("repo/shop/payments.py")).unwrap();
    let charge = p
        .files
        .iter()
        .flat_map(|f| &f.symbols)
        .find(|s| s.qualified_name == "shop.payments.charge")
        .unwrap();
    assert!(
        source.contains(&charge.code) && charge.code.ends_with("return convert(amount, currency)")
    );
    assert!(
        p.text.contains(
            "### shop.payments.charge (Function, lines 3-6): callee of shop.orders.checkout (0.85)"
        ),
        "{}",
        p.text
    );
    // The meta header opens the pack.
    assert!(p
        .text
        .starts_with("# Context pack: entry shop.orders.checkout\n"));
    assert!(p.text.contains(&format!(
        "tokens: {} of code, {} in all, budget 1100 (o200k)",
        p.code_tokens, p.account.tokens
    )));
}

#[test]
fn a_root_too_large_in_full_is_shown_as_its_signature() {
    let (_dir, db) = project();
    let index = open(&db);
    let p = pack_of(
        &index,
        Target::Entry("shop.report.monthly_report".into()),
        300,
        Format::Markdown,
    );
    let got = symbols(&p);
    assert!(
        got.contains(&(
            "shop.report.monthly_report".to_string(),
            Rendering::Signature
        )),
        "{got:?}"
    );
    // Its caller still fits, whole.
    assert!(got.contains(&("shop.orders.checkout".to_string(), Rendering::Full)));
    assert!(
        p.text.contains("lines 1-404, signature only): root"),
        "{}",
        p.text
    );
}

#[test]
fn a_file_entry_packs_its_top_level_definitions() {
    let (_dir, db) = project();
    let index = open(&db);
    let p = pack_of(
        &index,
        Target::Entry("shop/orders.py".into()),
        4000,
        Format::Markdown,
    );
    let got = symbols(&p);
    assert_eq!((p.roots, p.roots_included), (2, 2));
    assert!(got.contains(&("shop.orders.Order".into(), Rendering::Full)));
    assert!(got.contains(&("shop.orders.checkout".into(), Rendering::Full)));
    // Members of a class taken whole are not repeated.
    assert!(
        !got.iter().any(|(q, _)| q == "shop.orders.Order.total"),
        "{got:?}"
    );
}

#[test]
fn query_packs_start_from_several_hits() {
    let (_dir, db) = project();
    let index = open(&db);
    let p = pack_of(
        &index,
        Target::Query("Charging a card converts the currency twice".into()),
        3000,
        Format::Markdown,
    );
    let got = symbols(&p);
    assert!(
        got.iter().any(|(q, _)| q == "shop.payments.charge"),
        "{got:?}"
    );
    assert!(
        got.iter().any(|(q, _)| q == "shop.currency.convert"),
        "{got:?}"
    );
    assert!(p.roots > 1);
}

#[test]
fn a_query_longer_than_the_budget_is_stated_shortened_in_every_format() {
    let (_dir, db) = project();
    let index = open(&db);
    // A whole issue text, pasted logs and all, many times the budget.
    let issue = format!(
        "Charging a card converts the currency twice\n{}",
        "Traceback (most recent call last): charge convert\n".repeat(2000)
    );
    for format in [Format::Markdown, Format::Json, Format::Xml] {
        let p = pack_of(&index, Target::Query(issue.clone()), 3000, format);
        assert!(p.account.tokens <= 3000, "{format:?}: {}", p.account.tokens);
        assert!(!p.files.is_empty(), "{format:?}");
        assert_eq!(
            Tokenizer::O200k.count(&p.text),
            p.account.tokens,
            "{format:?}"
        );
        assert!(p
            .text
            .contains("Charging a card converts the currency twice"));
        assert!(
            p.text.len() < 20_000,
            "{format:?}: the query is not repeated whole"
        );
    }
    // The map restates the query too, in text and in JSON.
    for format in [MapFormat::Text, MapFormat::Json] {
        let m = index
            .map(&MapOptions {
                budget: 3000,
                query: Some(issue.clone()),
                format,
                ..MapOptions::default()
            })
            .unwrap_or_else(|e| panic!("map {format:?}: {e}"));
        assert!(m.account.tokens <= 3000, "{format:?}: {}", m.account.tokens);
        assert!(!m.entries.is_empty(), "{format:?}");
        assert!(m
            .text
            .contains("Charging a card converts the currency twice"));
        assert!(
            m.text.len() < 20_000,
            "{format:?}: the query is not repeated whole"
        );
    }
}

#[test]
fn unknown_entries_and_queries_matching_nothing_are_errors() {
    let (_dir, db) = project();
    let index = open(&db);
    let build = |target| {
        index.pack(&PackOptions {
            target,
            budget: 2000,
            signatures_only: false,
            format: Format::Markdown,
            tokenizer: Tokenizer::O200k,
            show_dropped: false,
            ..PackOptions::default()
        })
    };
    let e = build(Target::Entry("no.such.thing".into())).unwrap_err();
    assert!(e.to_string().contains("nothing named"), "{e}");
    assert!(
        matches!(e, Error::NotFound { ref name } if name == "no.such.thing"),
        "{e:?}"
    );
    let e = build(Target::Query("zzyzx qwertyuiop".into())).unwrap_err();
    assert!(
        e.to_string().contains("nothing in the index matches"),
        "{e}"
    );
    let e = build(Target::Query("?? !!".into())).unwrap_err();
    assert!(e.to_string().contains("no words"), "{e}");
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
}

#[test]
fn signatures_only_keeps_roots_whole() {
    let (_dir, db) = project();
    let index = open(&db);
    let p = index
        .pack(&PackOptions {
            target: Target::Entry("shop.orders.checkout".into()),
            budget: 4000,
            signatures_only: true,
            format: Format::Markdown,
            tokenizer: Tokenizer::O200k,
            show_dropped: false,
            ..PackOptions::default()
        })
        .unwrap();
    let got = symbols(&p);
    assert!(got.contains(&("shop.orders.checkout".into(), Rendering::Full)));
    assert!(got.contains(&("shop.payments.charge".into(), Rendering::Signature)));
    assert!(got.contains(&("shop.report.monthly_report".into(), Rendering::Signature)));
    assert!(got
        .iter()
        .all(|(q, r)| q == "shop.orders.checkout" || *r == Rendering::Signature));
}

#[test]
fn xml_escapes_and_splits_cdata_and_json_follows_the_schema() {
    let (_dir, db) = project();
    let index = open(&db);
    let x = pack_of(
        &index,
        Target::Entry("shop.payments.charge".into()),
        2000,
        Format::Xml,
    );
    let doc = roxmltree::Document::parse(&x.text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "context_pack");
    assert_eq!(
        root.attribute("tokens").unwrap(),
        x.account.tokens.to_string()
    );
    let symbol = root
        .descendants()
        .find(|n| n.attribute("name") == Some("shop.payments.charge"))
        .unwrap();
    // The code comes back byte for byte, `]]>` and markup included.
    let code: String = symbol.children().filter_map(|c| c.text()).collect();
    assert!(
        code.contains("s = \"]]>\"") && code.contains("<tags> &"),
        "{code}"
    );
    assert_eq!(symbol.attribute("rendering"), Some("full"));

    let j = pack_of(
        &index,
        Target::Entry("shop.payments.charge".into()),
        2000,
        Format::Json,
    );
    let v: serde_json::Value = serde_json::from_str(&j.text).unwrap();
    assert_eq!(v["schema"], "codebase-indexer/pack/1");
    assert_eq!(v["target"]["kind"], "entry");
    assert_eq!(v["tokens"].as_u64().unwrap() as usize, j.account.tokens);
    assert_eq!(v["budget"], 2000);
    let s = &v["files"][0]["symbols"][0];
    assert_eq!(s["qualified_name"], "shop.payments.charge");
    assert_eq!(s["reason"]["why"], "root");
    assert_eq!(s["rendering"], "full");
    assert!(s["code"].as_str().unwrap().contains("]]>"));
    assert!(v["files"][0]["symbols"][0]["not_in_context"].is_array());
}

#[test]
fn budgets_are_never_exceeded_and_counts_are_tiktokens() {
    let (_dir, db) = project();
    let index = open(&db);
    // Every definition (file nodes included) with its file, for random targets.
    let defs: Vec<(String, String)> = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut q = conn
            .prepare(
                "SELECT n.qualified_name, f.path FROM nodes n JOIN files f ON f.id = n.file_id \
                 ORDER BY f.path, n.start_byte, n.id",
            )
            .unwrap();
        let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    };
    assert!(defs.len() > 20, "{defs:?}");
    let mut rng = Rng::new("PACK_SEED", 7);
    let words = [
        "order", "charge", "price", "ledger", "serve", "tax", "report", "items",
    ];
    for round in 0..40 {
        let budget = 60 + (rng.next() * 3000.0) as usize;
        let tokenizer = if round % 2 == 0 {
            Tokenizer::O200k
        } else {
            Tokenizer::Cl100k
        };
        let format = [Format::Markdown, Format::Xml, Format::Json][round % 3];
        let (qualified_name, path) = &defs[(rng.next() * defs.len() as f64) as usize];
        let target = match round % 3 {
            0 => Target::Entry(qualified_name.clone()),
            1 => Target::Entry(path.clone()),
            _ => Target::Query(format!(
                "{} {}",
                words[(rng.next() * 8.0) as usize],
                words[(rng.next() * 8.0) as usize]
            )),
        };
        let opts = PackOptions {
            target: target.clone(),
            budget,
            signatures_only: rng.next() < 0.3,
            format,
            tokenizer,
            show_dropped: rng.next() < 0.5,
            ..PackOptions::default()
        };
        match index.pack(&opts) {
            Ok(p) => {
                let n = tokenizer.count(&p.text);
                assert_eq!(p.account.tokens, n, "{target:?} {format:?}");
                assert!(n <= budget, "{n} > {budget} for {target:?} {format:?}");
            }
            Err(e) => assert!(e.to_string().contains("cannot hold"), "{target:?}: {e}"),
        }
        let focus = vec![qualified_name.clone()];
        let mopts = MapOptions {
            budget,
            focus: if round % 2 == 0 { focus } else { Vec::new() },
            query: (round % 3 == 0).then(|| words[round % 8].to_string()),
            format: if round % 4 == 0 {
                MapFormat::Json
            } else {
                MapFormat::Text
            },
            tokenizer,
            show_dropped: round % 5 == 0,
            ..MapOptions::default()
        };
        match index.map(&mopts) {
            Ok(m) => {
                let n = tokenizer.count(&m.text);
                assert_eq!(m.account.tokens, n);
                assert!(n <= budget, "map: {n} > {budget}");
            }
            Err(e) => assert!(e.to_string().contains("cannot hold"), "map: {e}"),
        }
    }
}

#[test]
fn map_ranks_the_hub_first_fills_the_budget_and_follows_the_focus() {
    let (_dir, db) = project();
    let index = open(&db);
    let render = |budget, focus: Vec<String>, query: Option<&str>| {
        index
            .map(&MapOptions {
                budget,
                focus,
                query: query.map(str::to_string),
                format: MapFormat::Text,
                tokenizer: Tokenizer::O200k,
                show_dropped: false,
                ..MapOptions::default()
            })
            .unwrap()
    };
    let m = render(4000, Vec::new(), None);
    // Everything fits in 4,000 tokens: all definitions, none dropped.
    assert_eq!(m.account.dropped, 0, "{}", m.text);
    // Heavily called code outranks what nobody calls; tests come late.
    let pos = |m: &RepoMap, qn: &str| {
        m.entries
            .iter()
            .position(|e| e.qualified_name == qn)
            .unwrap_or(usize::MAX)
    };
    assert!(pos(&m, "shop.currency.convert") < pos(&m, "tests.test_orders.test_checkout"));
    assert!(pos(&m, "shop.orders.checkout") < pos(&m, "shop.api.place_order"));
    assert!(m
        .text
        .contains("def convert(amount, currency):  # shop.currency.convert"));
    assert!(m
        .text
        .contains("Reserve the stock, then charge the customer."));
    // A small budget is filled closely, with the best entries.
    let small = render(200, Vec::new(), None);
    assert!(
        small.account.tokens <= 200 && small.account.tokens >= 180,
        "{}",
        small.text
    );
    assert!(small.account.dropped > 0);
    // A focus on the Go file puts its definitions first.
    let go = render(200, vec!["svc/main.go".into()], None);
    assert_eq!(go.entries[0].path, "svc/main.go", "{}", go.text);
    let q = render(200, Vec::new(), Some("ledger balance"));
    assert!(
        q.entries[..2]
            .iter()
            .any(|e| e.qualified_name.ends_with("Ledger.balance")),
        "{}",
        q.text
    );
    // Determinism.
    assert_eq!(
        render(700, Vec::new(), None).text,
        render(700, Vec::new(), None).text
    );
}

/// Pages of a map or a pack, each asked with the previous one's cursor, until none is
/// handed out (at most 50).
fn pages<T>(
    mut page: impl FnMut(Option<String>) -> T,
    cursor: impl Fn(&T) -> Option<String>,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    loop {
        let next = out.last().map(&cursor);
        if !out.is_empty() && next.as_ref().is_none_or(|c: &Option<String>| c.is_none()) {
            return out;
        }
        assert!(out.len() < 50, "the cursors never end");
        out.push(page(next.flatten()));
    }
}

#[test]
fn map_pages_continue_without_repeats_until_every_definition_is_shown() {
    let (_dir, db) = project();
    let index = open(&db);
    let tokenizer = Tokenizer::O200k;
    let map = |budget, cursor| {
        index
            .map(&MapOptions {
                budget,
                query: Some("checkout charge".into()),
                show_dropped: true,
                cursor,
                offer_cursor: true,
                ..MapOptions::default()
            })
            .unwrap()
    };
    let whole = map(50_000, None);
    assert!(
        whole.next_cursor.is_none(),
        "everything fits: nothing to continue"
    );
    let all: Vec<&str> = whole
        .entries
        .iter()
        .map(|e| e.qualified_name.as_str())
        .collect();

    let pages = pages(
        |cursor| map(150, cursor),
        |m: &RepoMap| m.next_cursor.clone(),
    );
    assert!(pages.len() >= 3, "{} pages", pages.len());
    let mut seen: Vec<String> = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        assert_eq!(page.account.tokens, tokenizer.count(&page.text));
        assert!(
            page.account.tokens <= 150,
            "page {i}: {}",
            page.account.tokens
        );
        assert_eq!(page.shown_before, seen.len(), "page {i}");
        for e in &page.entries {
            assert!(
                !seen.contains(&e.qualified_name),
                "{} shown twice",
                e.qualified_name
            );
            seen.push(e.qualified_name.clone());
        }
        match &page.next_cursor {
            Some(c) => assert!(
                page.text.contains(&format!("cursor \"{c}\"")),
                "{}",
                page.text
            ),
            None => assert!(!page.text.contains("cursor")),
        }
    }
    // The pages together are the whole map.
    let mut all: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    all.sort();
    seen.sort();
    assert_eq!(seen, all);
}

#[test]
fn a_cursor_from_other_arguments_or_an_earlier_index_is_refused() {
    let (dir, db) = project();
    let index = open(&db);
    let map = |query: &str, cursor| {
        index.map(&MapOptions {
            budget: 150,
            query: Some(query.into()),
            cursor,
            ..MapOptions::default()
        })
    };
    let first = map("checkout charge", None).unwrap();
    let cursor = first.next_cursor.clone().expect("more than one page");
    assert!(map("checkout charge", Some(cursor.clone())).is_ok());
    for (query, c) in [
        ("refund", cursor.clone()),
        ("checkout charge", format!("{cursor}9")),
        ("checkout charge", "map.0.0-5".into()),
        ("checkout charge", cursor.replacen("map", "pack", 1)),
    ] {
        match map(query, Some(c.clone())) {
            Err(Error::InvalidArgument { .. }) => {}
            other => panic!("{query} with {c}: {:?}", other.map(|m| m.entries.len())),
        }
    }
    // The index changed under the cursor: the definitions it skipped are not where they were.
    let root = dir.path().join("repo");
    let shown = &first.entries[0];
    let text = std::fs::read_to_string(root.join(&shown.path)).unwrap();
    let name = shown.qualified_name.rsplit('.').next().unwrap();
    std::fs::write(
        root.join(&shown.path),
        text.replace(name, &format!("{name}_renamed")),
    )
    .unwrap();
    crate::common::index(&root, &db);
    match map("checkout charge", Some(cursor)) {
        Err(Error::InvalidArgument { message }) => assert!(message.contains("cursor"), "{message}"),
        other => panic!("a stale cursor: {:?}", other.map(|m| m.entries.len())),
    }
}

#[test]
fn pack_pages_continue_without_repeats_and_count_earlier_pages_as_in_context() {
    let (_dir, db) = project();
    let index = open(&db);
    let tokenizer = Tokenizer::O200k;
    for format in [Format::Markdown, Format::Xml, Format::Json] {
        let pack = |budget, cursor| {
            index
                .pack(&PackOptions {
                    target: Target::Entry("shop.orders.checkout".into()),
                    budget,
                    format,
                    tokenizer,
                    show_dropped: true,
                    cursor,
                    offer_cursor: true,
                    ..PackOptions::default()
                })
                .unwrap()
        };
        let whole = symbols(&pack(50_000, None));
        // JSON says more per symbol.
        let budget = if format == Format::Json { 700 } else { 400 };
        let pages = pages(
            |cursor| pack(budget, cursor),
            |p: &Pack| p.next_cursor.clone(),
        );
        assert!(pages.len() >= 2, "{format:?}: {} pages", pages.len());
        let mut seen: Vec<String> = Vec::new();
        for (i, page) in pages.iter().enumerate() {
            assert_eq!(
                page.account.tokens,
                tokenizer.count(&page.text),
                "{format:?} {i}"
            );
            assert!(page.account.tokens <= budget, "{format:?} page {i}");
            assert_eq!(page.shown_before, seen.len(), "{format:?} page {i}");
            for s in page.files.iter().flat_map(|f| &f.symbols) {
                assert!(
                    !seen.contains(&s.qualified_name),
                    "{} twice",
                    s.qualified_name
                );
                // What an earlier page showed is in the agent's context.
                for m in &s.not_in_context {
                    assert!(
                        !seen.contains(&m.qualified_name),
                        "{} marked missing",
                        m.qualified_name
                    );
                }
            }
            seen.extend(symbols(page).into_iter().map(|(n, _)| n));
            if let (Some(c), false) = (&page.next_cursor, format == Format::Json) {
                assert!(page.text.contains(c.as_str()), "{format:?} page {i}");
            }
        }
        // Every symbol of the whole pack small enough for a page is on one of them; the
        // huge report never fits 400 tokens.
        for (name, _) in &whole {
            if name != "shop.report.monthly_report" {
                assert!(seen.contains(name), "{format:?}: {name} on no page");
            }
        }
    }
}
