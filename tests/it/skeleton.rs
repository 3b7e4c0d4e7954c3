//! The repository skeleton on a small project written by the test: Python, TypeScript, Go and
//! Rust files importing each other, a class with methods, private helpers, defaults, a test
//! and a document. Each mode's format, what `auto` picks, the path filter, the exact token
//! account, the budget held for every budget, and which files go first when some must.

use crate::common::{index, write_tree};
use clap::ValueEnum;
use codebase_indexer::{
    Index, Skeleton, SkeletonMode as Mode, SkeletonOptions as Options, Tokenizer,
};

const FILES: &[(&str, &str)] = &[
    (
        "shop/models.py",
        r#"from decimal import Decimal


class Payment:
    """A payment made by a customer."""

    def __init__(self, amount: Decimal, currency: str = "EUR"):
        self.amount = amount
        self.currency = currency

    @property
    def label(self) -> str:
        return f"{self.amount} {self.currency}"

    def _check(self) -> bool:
        return self.amount > 0


def make_payment(amount, currency="EUR", *, note=None) -> Payment:
    return Payment(Decimal(amount), currency)
"#,
    ),
    (
        "shop/service.py",
        r#"import logging as log
from decimal import Decimal
from shop.models import Payment, make_payment


def charge(amount, currency="EUR", retries=(1, 2)) -> Payment:
    log.info("charge")
    return make_payment(_rounded(amount), currency)


def _rounded(amount, places=2):
    return round(amount, places)


class Refund:
    def __init__(self, payment: Payment):
        self.payment = payment

    def apply(self, reason: str = "") -> Payment:
        return make_payment(-self.payment.amount)

    def _audit(self):
        def inner():
            return 1
        return inner()
"#,
    ),
    (
        "shop/orphan.py",
        "def forgotten_helper_nobody_calls(value, scale=10):\n    # Scales a value.\n    def times(x):\n        return x * scale\n\n    return times(value)\n",
    ),
    (
        "shop/__init__.py",
        "from shop.models import Payment\nfrom shop.service import charge\n",
    ),
    (
        "tests/test_service.py",
        r#"from shop.service import charge, Refund
from shop.models import Payment


def test_charge():
    assert charge(10).currency == "EUR"


def test_refund():
    Refund(charge(1)).apply()


class RefundTests:
    def setUp(self):
        self.amount = 3

    def test_apply(self, amount=3):
        Refund(charge(amount)).apply()
"#,
    ),
    (
        "web/format.ts",
        r#"export function formatAmount(amount: number, digits: number = 2): string {
  return amount.toFixed(digits);
}

export const CURRENCY = "EUR";
"#,
    ),
    (
        "web/client.ts",
        r#"import { formatAmount } from "./format";

export class Client {
  constructor(private base: string = "/api") {}

  show(amount: number, prefix = "$"): string {
    return prefix + formatAmount(amount);
  }

  private _secret(): void {}
}
"#,
    ),
    ("go.mod", "module example.com/shop\n\ngo 1.22\n"),
    (
        "money/money.go",
        r#"package money

// Amount is a sum of money in cents.
type Amount struct {
	Cents int64
}

func (a Amount) Add(b Amount) Amount {
	return Amount{a.Cents + b.Cents}
}

func Zero() Amount {
	return Amount{}
}
"#,
    ),
    (
        "cmd/main.go",
        r#"package main

import (
	"fmt"

	"example.com/shop/money"
)

func main() {
	fmt.Println(money.Zero().Add(money.Zero()))
}
"#,
    ),
    (
        "ledger/src/lib.rs",
        r#"pub mod entry;

use crate::entry::Entry;

/// All entries.
#[derive(Debug, Default)]
pub struct Ledger {
    entries: Vec<Entry>,
}

impl Ledger {
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    pub fn total(&self) -> i64 {
        self.entries.iter().map(|e| e.cents).sum()
    }
}
"#,
    ),
    (
        "ledger/src/entry.rs",
        r#"#[derive(Debug, Clone)]
pub struct Entry {
    pub cents: i64,
}

pub fn entry<'a>(cents: i64, _note: &'a str) -> Entry {
    Entry { cents }
}
"#,
    ),
    (
        "ledger/Cargo.toml",
        "[package]\nname = \"ledger\"\nversion = \"0.1.0\"\n",
    ),
    ("README.md", "# Shop\n\nPayments, refunds and a ledger.\n"),
];

fn project() -> (tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write_tree(&root, FILES);
    let db = dir.path().join("index.db");
    index(&root, &db);
    let index = Index::open(&db).unwrap();
    (dir, index)
}

fn opts(mode: Mode, budget: usize) -> Options {
    Options {
        budget,
        mode,
        path_prefix: None,
        tokenizer: Tokenizer::O200k,
        show_dropped: false,
        ..Options::default()
    }
}

fn run(index: &Index, o: &Options) -> Skeleton {
    index
        .skeleton(o)
        .unwrap_or_else(|e| panic!("{:?} at {}: {e:#}", o.mode, o.budget))
}

/// The lines of `text` from `### path` to the next blank line.
fn block<'t>(text: &'t str, path: &str) -> Vec<&'t str> {
    let header = format!("### {path}");
    let mut lines = text.lines().skip_while(|l| *l != header);
    assert!(lines.next().is_some(), "no block for {path} in:\n{text}");
    lines.take_while(|l| !l.is_empty()).collect()
}

/// The lines of every file block of a skeleton or compact text.
fn block_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().skip(1).filter(|l| !l.starts_with("# dropped"))
}

/// The paths of the file blocks of a skeleton or compact text, in order.
fn headers(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("### "))
        .collect()
}

fn line_of<'t>(text: &'t str, start: &str) -> &'t str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{text}"))
}

#[test]
fn skeleton_shows_imports_indented_members_and_qualified_names() {
    let (_dir, index) = project();
    let s = run(&index, &opts(Mode::Skeleton, 100_000));
    let text = &s.text;
    assert_eq!(s.mode, Mode::Skeleton);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(
            "# skeleton of the repository (14 files), mode skeleton: 10 shown, 0 dropped"
        ),
        "{first}"
    );
    assert!(
        first.ends_with(&format!("; {} of 100,000 tokens (o200k)", s.account.tokens)),
        "{first}"
    );
    // Files in path order; those with nothing but a file node have no block.
    assert_eq!(
        headers(text),
        [
            "cmd/main.go",
            "ledger/src/entry.rs",
            "ledger/src/lib.rs",
            "money/money.go",
            "shop/models.py",
            "shop/orphan.py",
            "shop/service.py",
            "tests/test_service.py",
            "web/client.ts",
            "web/format.ts",
        ]
    );
    assert_eq!(
        block(text, "shop/service.py"),
        [
            "# imports: logging as log, decimal.Decimal, shop.models.Payment, shop.models.make_payment",
            "def charge(amount, currency=\"EUR\", retries=(1, 2)) -> Payment:  # shop.service.charge",
            "def _rounded(amount, places=2):  # shop.service._rounded",
            "class Refund:  # shop.service.Refund",
            "    def __init__(self, payment: Payment):  # shop.service.Refund.__init__",
            "    def apply(self, reason: str = \"\") -> Payment:  # shop.service.Refund.apply",
            "    def _audit(self):  # shop.service.Refund._audit",
            "        def inner():  # shop.service.Refund._audit.inner",
        ]
    );
    assert_eq!(
        block(text, "shop/models.py"),
        [
            "# imports: decimal.Decimal",
            "class Payment:  # shop.models.Payment",
            "    def __init__(self, amount: Decimal, currency: str = \"EUR\"):  # shop.models.Payment.__init__",
            "    @property",
            "    def label(self) -> str:  # shop.models.Payment.label",
            "    def _check(self) -> bool:  # shop.models.Payment._check",
            "def make_payment(amount, currency=\"EUR\", *, note=None) -> Payment:  # shop.models.make_payment",
        ]
    );
    let ts = block(text, "web/client.ts");
    assert_eq!(ts[0], "# imports: ./format.formatAmount");
    assert!(
        ts.contains(&"export class Client  # web.client.Client"),
        "{ts:?}"
    );
    assert!(
        ts.contains(&"    show(amount: number, prefix = \"$\"): string  # web.client.Client.show"),
        "{ts:?}"
    );
    let go = block(text, "money/money.go");
    assert!(
        go.contains(&"func (a Amount) Add(b Amount) Amount  # money.Amount.Add"),
        "{go:?}"
    );
    let rust = block(text, "ledger/src/lib.rs");
    assert_eq!(rust[0], "# imports: crate::entry::Entry");
    assert!(rust.contains(&"#[derive(Debug, Default)]"), "{rust:?}");
    assert!(
        rust.contains(&"pub fn total(&self) -> i64  # ledger.src.Ledger.total"),
        "{rust:?}"
    );
    assert_eq!(
        block(text, "cmd/main.go")[0],
        "# imports: fmt, example.com/shop/money"
    );
    assert!(!text.contains("### shop/__init__.py") && !text.contains("README"));
    assert_eq!(s.account.included, 10);
    assert_eq!(s.files_total, 14);
    assert!(s.dropped_files.is_empty());
}

#[test]
fn compact_drops_private_names_defaults_decorators_and_imports() {
    let (_dir, index) = project();
    let full = run(&index, &opts(Mode::Skeleton, 100_000));
    let c = run(&index, &opts(Mode::Compact, 100_000));
    let text = &c.text;
    assert_eq!(c.mode, Mode::Compact);
    assert!(
        c.account.tokens < full.account.tokens * 8 / 10,
        "{} vs {}",
        c.account.tokens,
        full.account.tokens
    );
    let gone = [
        "_rounded",
        "_check",
        "_audit",
        "inner",
        "_secret",
        "# imports",
        "@property",
        "#[derive",
        "=\"EUR\"",
        "str = ",
        "None",
        "places",
        "(1, 2)",
        "/api",
        "\"$\"",
        "= 2",
        "= \"\"",
    ];
    for g in gone {
        assert!(
            !block_lines(text).any(|l| l.contains(g)),
            "{g:?} in:\n{text}"
        );
    }
    assert_eq!(
        block(text, "shop/service.py"),
        [
            "def charge(amount, currency, retries) -> Payment:  # shop.service.charge",
            "class Refund:  # shop.service.Refund",
            "    def __init__(self, payment: Payment):  # shop.service.Refund.__init__",
            "    def apply(self, reason: str) -> Payment:  # shop.service.Refund.apply",
        ]
    );
    // No function-local definitions, no comment after a Python header.
    assert_eq!(
        block(text, "shop/orphan.py"),
        ["def forgotten_helper_nobody_calls(value, scale):  # shop.orphan.forgotten_helper_nobody_calls"]
    );
    // A test method's qualified name, its class's and its name, is not repeated.
    assert_eq!(
        block(text, "tests/test_service.py"),
        [
            "def test_charge():  # tests.test_service.test_charge",
            "def test_refund():  # tests.test_service.test_refund",
            "class RefundTests:  # tests.test_service.RefundTests",
            "    def setUp(self):  # tests.test_service.RefundTests.setUp",
            "    def test_apply(self, amount):",
        ]
    );
    assert_eq!(
        block(text, "shop/models.py"),
        [
            "class Payment:  # shop.models.Payment",
            "    def __init__(self, amount: Decimal, currency: str):  # shop.models.Payment.__init__",
            "    def label(self) -> str:  # shop.models.Payment.label",
            "def make_payment(amount, currency, *, note) -> Payment:  # shop.models.make_payment",
        ]
    );
    assert_eq!(
        block(text, "web/client.ts"),
        [
            "export class Client  # web.client.Client",
            "    constructor(private base: string)  # web.client.Client.constructor",
            "    show(amount: number, prefix): string  # web.client.Client.show",
        ]
    );
    // Rust methods outside their type's block keep their qualified names.
    let rust = block(text, "ledger/src/lib.rs");
    assert!(
        rust.contains(&"pub fn push(&mut self, entry: Entry)  # ledger.src.Ledger.push"),
        "{rust:?}"
    );
    assert_eq!(headers(text), headers(&full.text));
}

#[test]
fn summary_counts_kinds_and_names_the_most_important() {
    let (_dir, index) = project();
    let s = run(&index, &opts(Mode::Summary, 100_000));
    let text = &s.text;
    assert_eq!(s.mode, Mode::Summary);
    let service = line_of(text, "shop/service.py: ");
    assert!(
        service.starts_with("shop/service.py: 1 class, 3 functions, 3 methods — "),
        "{service}"
    );
    let names: Vec<&str> = service.split(" — ").nth(1).unwrap().split(", ").collect();
    assert_eq!(names.len(), 5, "{service}");
    assert!(
        names.contains(&"charge") && names.contains(&"Refund"),
        "{service}"
    );
    assert!(
        !names.iter().any(|n| n.contains("inner")),
        "nested too deep: {service}"
    );
    let models = line_of(text, "shop/models.py: ");
    assert!(
        models.starts_with("shop/models.py: 1 class, 1 function, 3 methods — Payment, "),
        "{models}"
    );
    assert_eq!(
        line_of(text, "cmd/main.go: "),
        "cmd/main.go: 1 function — main"
    );
    assert_eq!(
        line_of(text, "web/format.ts: "),
        "web/format.ts: 1 function, 1 constant — formatAmount, CURRENCY"
    );
    assert!(models.contains("Payment.label"), "{models}");
    assert!(!text.contains("shop/__init__.py") && !text.contains("go.mod"));
    assert_eq!(text.lines().count(), 1 + 10);
    let full = run(&index, &opts(Mode::Skeleton, 100_000));
    assert!(s.account.tokens < full.account.tokens / 2);
}

#[test]
fn deps_lists_the_files_each_file_imports() {
    let (_dir, index) = project();
    let s = run(&index, &opts(Mode::Deps, 100_000));
    let lines: Vec<&str> = s.text.lines().skip(1).collect();
    assert_eq!(s.mode, Mode::Deps);
    for want in [
        "shop/__init__.py -> shop/models.py, shop/service.py",
        "shop/service.py -> shop/models.py",
        "tests/test_service.py -> shop/models.py, shop/service.py",
        "web/client.ts -> web/format.ts",
        "ledger/src/lib.rs -> ledger/src/entry.rs",
    ] {
        assert!(lines.contains(&want), "{want:?} not in {lines:?}");
    }
    // Files that import nothing in the repository are not listed.
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("shop/models.py") || l.starts_with("shop/orphan.py")),
        "{lines:?}"
    );
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    assert_eq!(s.account.included, lines.len());
}

#[test]
fn auto_picks_the_richest_mode_that_fits_whole() {
    let (_dir, index) = project();
    let size = |mode| run(&index, &opts(mode, 100_000)).account.tokens;
    let (skeleton, compact, summary) = (
        size(Mode::Skeleton),
        size(Mode::Compact),
        size(Mode::Summary),
    );
    assert!(
        summary + 20 < compact && compact + 20 < skeleton,
        "{summary} {compact} {skeleton}"
    );
    // `(auto)` in the account line costs a few tokens more.
    for (budget, want, dropped) in [
        (100_000, Mode::Skeleton, false),
        (skeleton + 10, Mode::Skeleton, false),
        (skeleton - 10, Mode::Compact, false),
        (compact + 10, Mode::Compact, false),
        (compact - 10, Mode::Summary, false),
        (summary + 10, Mode::Summary, false),
        (summary - 20, Mode::Summary, true),
        (80, Mode::Summary, true),
    ] {
        let s = run(&index, &opts(Mode::Auto, budget));
        assert_eq!(s.mode, want, "budget {budget}:\n{}", s.text);
        assert_eq!(
            !s.dropped_files.is_empty(),
            dropped,
            "budget {budget}:\n{}",
            s.text
        );
        assert!(s
            .text
            .lines()
            .next()
            .unwrap()
            .contains(&format!("mode {} (auto)", want.as_str())));
        assert!(s.account.tokens <= budget);
    }
}

#[test]
fn path_prefix_keeps_only_the_files_under_it() {
    let (_dir, index) = project();
    let mut o = opts(Mode::Skeleton, 100_000);
    o.path_prefix = Some("shop/".into());
    let s = run(&index, &o);
    assert_eq!(
        headers(&s.text),
        ["shop/models.py", "shop/orphan.py", "shop/service.py"]
    );
    assert_eq!(s.files_total, 4);
    assert!(
        s.text.starts_with("# skeleton of shop/ (4 files)"),
        "{}",
        s.text
    );
    o.mode = Mode::Deps;
    let deps = run(&index, &o);
    assert!(
        deps.text.lines().skip(1).all(|l| l.starts_with("shop/")),
        "{}",
        deps.text
    );
    o.path_prefix = Some("nowhere/".into());
    let err = index.skeleton(&o).unwrap_err().to_string();
    assert!(err.contains("nowhere/"), "{err}");
}

#[test]
fn the_account_states_the_exact_tokens_of_the_text_for_both_tokenizers() {
    let (_dir, index) = project();
    for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
        for mode in [
            Mode::Auto,
            Mode::Skeleton,
            Mode::Compact,
            Mode::Summary,
            Mode::Deps,
        ] {
            for budget in [60, 150, 400, 100_000] {
                let mut o = opts(mode, budget);
                o.tokenizer = tokenizer;
                o.show_dropped = true;
                let s = run(&index, &o);
                assert_eq!(
                    s.account.tokens,
                    tokenizer.count(&s.text),
                    "{mode:?} {budget}"
                );
                assert_eq!(s.account.tokenizer, tokenizer);
                let first = s.text.lines().next().unwrap();
                let stated = format!(
                    " of {} tokens ({})",
                    budget.to_string().replace("100000", "100,000"),
                    tokenizer.as_str()
                );
                assert!(
                    first.contains(&format!("; {}{stated}", s.account.tokens)),
                    "{first}"
                );
            }
        }
    }
}

#[test]
fn no_budget_is_ever_exceeded_and_files_come_whole() {
    let (_dir, index) = project();
    let modes = [
        Mode::Auto,
        Mode::Skeleton,
        Mode::Compact,
        Mode::Summary,
        Mode::Deps,
    ];
    for mode in modes {
        let full = run(&index, &opts(mode, 100_000));
        let items = full.account.included;
        let mut fitted_once = false;
        for budget in (20..=2000).step_by(7) {
            let mut o = opts(mode, budget);
            o.show_dropped = budget % 2 == 0;
            let s = match index.skeleton(&o) {
                Ok(s) => s,
                Err(e) => {
                    assert!(
                        !fitted_once,
                        "{mode:?} at {budget} failed after a smaller budget fit: {e}"
                    );
                    assert!(e.to_string().contains("too small"), "{e}");
                    continue;
                }
            };
            fitted_once = true;
            assert!(
                s.account.tokens <= budget,
                "{mode:?} {budget}: {}\n{}",
                s.account.tokens,
                s.text
            );
            assert_eq!(s.account.tokens, Tokenizer::O200k.count(&s.text));
            assert_ne!(s.mode, Mode::Auto);
            assert_eq!(s.account.dropped, s.dropped_files.len());
            if mode != Mode::Auto {
                assert_eq!(s.mode, mode);
                assert_eq!(
                    s.account.included + s.account.dropped,
                    items,
                    "{mode:?} {budget}"
                );
            }
            // Every block shown is the block of the unlimited rendering of that mode.
            let whole = run(&index, &opts(s.mode, 100_000));
            let body = |t: &str| {
                t.lines()
                    .skip(1)
                    .filter(|l| !l.starts_with("# dropped"))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            let all = body(&whole.text);
            let mut at = 0;
            for line in body(&s.text) {
                let found = all[at..].iter().position(|l| *l == line);
                assert!(
                    found.is_some(),
                    "{mode:?} {budget}: {line:?} not in order in the full text"
                );
                at += found.unwrap() + 1;
            }
            if matches!(s.mode, Mode::Skeleton | Mode::Compact) {
                for path in headers(&s.text) {
                    assert_eq!(
                        block(&s.text, path),
                        block(&whole.text, path),
                        "{mode:?} {budget}"
                    );
                }
            }
            if o.show_dropped && !s.dropped_files.is_empty() {
                // The closing line is there, unless not even its shortest form fits.
                let last = s.text.lines().last().unwrap();
                let line = format!(
                    "# dropped (worst last): {} files, no room to list them\n",
                    s.dropped_files.len()
                );
                assert!(
                    last.starts_with("# dropped (worst last): ")
                        || s.account.included == 0
                            && s.account.tokens + Tokenizer::O200k.count(&line) > budget,
                    "{mode:?} {budget}:\n{}",
                    s.text
                );
            }
        }
        assert!(fitted_once, "{mode:?}");
    }
}

#[test]
fn the_lowest_ranked_files_are_dropped_first_and_reported() {
    let (_dir, index) = project();
    // Ranked by what references them: models.py is imported by every other Python file, the
    // orphan by none; the test file restarts less.
    // At the least budget that renders at all, every file is dropped: all of them in rank
    // order, the best first.
    let least = (20..200)
        .find_map(|b| index.skeleton(&opts(Mode::Summary, b)).ok())
        .unwrap();
    let ranked = &least.dropped_files;
    assert_eq!(least.account.included, 0);
    assert_eq!(ranked.len(), 10);
    let pos = |p: &str| ranked.iter().position(|d| d == p).unwrap();
    assert_eq!(ranked[0], "shop/models.py", "{ranked:?}");
    assert!(pos("shop/service.py") < pos("shop/orphan.py"), "{ranked:?}");
    assert_eq!(ranked[9], "tests/test_service.py", "{ranked:?}");

    let mut o = opts(Mode::Summary, 75);
    o.show_dropped = true;
    let s = run(&index, &o);
    assert!(s.dropped_files.contains(&"shop/orphan.py".to_string()));
    // Dropped files keep their rank order, worst last.
    let order: Vec<usize> = s.dropped_files.iter().map(|d| pos(d)).collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        s.dropped_files
    );
    let last = s.text.lines().last().unwrap();
    assert!(last.starts_with("# dropped (worst last): "), "{}", s.text);
    assert!(s.text.lines().next().unwrap().contains(&format!(
        "{} dropped (the lowest-ranked, over budget)",
        s.dropped_files.len()
    )));

    // One token short of everything: what goes is among the lowest-ranked, never models.py.
    for mode in [Mode::Skeleton, Mode::Compact, Mode::Summary] {
        let at = |budget| run(&index, &opts(mode, budget));
        let mut least = at(100_000).account.tokens;
        while at(least - 1).dropped_files.is_empty() {
            least -= 1;
        }
        assert!(at(least).dropped_files.is_empty());
        let s = at(least - 1);
        assert!(!s.dropped_files.is_empty(), "{mode:?}");
        assert!(
            !s.dropped_files.contains(&"shop/models.py".to_string()),
            "{mode:?}: {:?}",
            s.dropped_files
        );
    }

    // The dropped list names as many files as fit, best first: a prefix of dropped_files.
    for budget in [70, 120, 200] {
        let mut o = opts(Mode::Skeleton, budget);
        o.show_dropped = true;
        let s = run(&index, &o);
        let last = s.text.lines().last().unwrap();
        let listed = last.trim_start_matches("# dropped (worst last): ");
        if !listed.ends_with("no room to list them") {
            let names: Vec<&str> = listed.split(", ").filter(|n| !n.starts_with('+')).collect();
            assert_eq!(names, s.dropped_files[..names.len()], "{}", s.text);
        }
        assert!(s.account.tokens <= budget);
    }
}

#[test]
fn skeleton_pages_continue_with_the_next_files_until_all_are_shown() {
    let (_dir, index) = project();
    for mode in [Mode::Auto, Mode::Skeleton, Mode::Compact, Mode::Summary] {
        let whole = run(&index, &opts(mode, 100_000));
        let all = whole.files.len();
        // Room for the largest file alone (with the account, dropped and cursor lines), less
        // than for all of them.
        let largest = whole
            .files
            .iter()
            .map(|p| {
                let mut o = opts(mode, 100_000);
                o.path_prefix = Some(p.clone());
                run(&index, &o).account.tokens
            })
            .max()
            .unwrap();
        let budget = largest + 160;
        assert!(budget < whole.account.tokens, "{mode:?}");
        let mut o = opts(mode, budget);
        o.show_dropped = true;
        o.offer_cursor = true;
        let mut shown: Vec<String> = Vec::new();
        for page in 0.. {
            assert!(page < 30, "{mode:?}: the cursors never end");
            let s = run(&index, &o);
            assert_eq!(
                s.account.tokens,
                Tokenizer::O200k.count(&s.text),
                "{mode:?}"
            );
            assert!(
                s.account.tokens <= budget,
                "{mode:?} page {page}: {}",
                s.account.tokens
            );
            assert_eq!(s.shown_before, shown.len(), "{mode:?} page {page}");
            for p in &s.files {
                assert!(!shown.contains(p), "{mode:?}: {p} shown twice");
                assert!(
                    s.text.contains(p.as_str()),
                    "{mode:?}: {p} not in {}",
                    s.text
                );
            }
            shown.extend(s.files.iter().cloned());
            match s.next_cursor {
                Some(c) => {
                    assert!(s.text.contains(&c), "{}", s.text);
                    o.cursor = Some(c);
                }
                None => break,
            }
        }
        assert_eq!(shown.len(), all, "{mode:?}: {shown:?}");
    }
    // A cursor of another prefix or mode is refused.
    let mut o = opts(Mode::Summary, 110);
    o.offer_cursor = true;
    let cursor = run(&index, &o).next_cursor.expect("more than a page");
    o.cursor = Some(cursor);
    o.path_prefix = Some("shop/".into());
    assert!(index
        .skeleton(&o)
        .unwrap_err()
        .to_string()
        .contains("cursor"));
}

#[test]
fn a_budget_too_small_for_the_account_line_is_an_error() {
    let (_dir, index) = project();
    for mode in [Mode::Auto, Mode::Skeleton, Mode::Summary] {
        let err = index.skeleton(&opts(mode, 10)).unwrap_err().to_string();
        assert!(
            err.contains("too small") && err.contains("at least"),
            "{err}"
        );
    }
    // Modes parse as the command line parses them.
    assert!(Mode::from_str("outline", false).is_err());
    assert_eq!(Mode::from_str("compact", false).unwrap(), Mode::Compact);
    assert_eq!(Mode::Deps.as_str(), "deps");
}

#[test]
fn renders_are_deterministic() {
    let (dir, index) = project();
    let again = Index::open(dir.path().join("index.db")).unwrap();
    for mode in [
        Mode::Auto,
        Mode::Skeleton,
        Mode::Compact,
        Mode::Summary,
        Mode::Deps,
    ] {
        for budget in [90, 300, 100_000] {
            let mut o = opts(mode, budget);
            o.show_dropped = true;
            let a = run(&index, &o);
            let b = run(&again, &o);
            assert_eq!(a.text, b.text, "{mode:?} {budget}");
            assert_eq!(a.dropped_files, b.dropped_files);
        }
    }
}

/// Token counts per mode and render times on a real index, from `SKELETON_DB` (a database
/// path); skipped without it. Run in release:
/// `SKELETON_DB=/tmp/django.db cargo test --release --test it -- --ignored --nocapture skeleton::`
#[test]
#[ignore]
fn measure_on_a_real_index() {
    let Ok(db) = std::env::var("SKELETON_DB") else {
        eprintln!("SKELETON_DB unset: nothing measured");
        return;
    };
    let index = Index::open(db).unwrap();
    let full = |mode| run(&index, &opts(mode, 1 << 40));
    let skeleton = full(Mode::Skeleton);
    let base = skeleton.account.tokens as f64;
    println!(
        "skeleton: {} tokens, {} files of {}",
        skeleton.account.tokens, skeleton.account.included, skeleton.files_total
    );
    for mode in [Mode::Compact, Mode::Summary, Mode::Deps] {
        let s = full(mode);
        println!(
            "{}: {} tokens ({:.1}% of skeleton), {} files",
            mode.as_str(),
            s.account.tokens,
            100.0 * s.account.tokens as f64 / base,
            s.account.included
        );
    }
    // What of each render is loading the graph and PageRank: the ignored unit test
    // `context::defgraph::tests::measure_on_a_real_index` (same SKELETON_DB).
    for budget in [1_000, 4_000, 16_000] {
        for mode in [
            Mode::Auto,
            Mode::Skeleton,
            Mode::Compact,
            Mode::Summary,
            Mode::Deps,
        ] {
            let mut o = opts(mode, budget);
            o.show_dropped = true;
            // The best of three: other work on the machine only ever adds time.
            let mut best = f64::MAX;
            let mut s = None;
            for _ in 0..3 {
                let start = std::time::Instant::now();
                s = Some(run(&index, &o));
                best = best.min(start.elapsed().as_secs_f64() * 1e3);
            }
            let s = s.unwrap();
            println!(
                "{budget:>6} {:>8} -> {:<8} {:>6} tokens {:>5} files {:>5} dropped {best:>6.0} ms",
                mode.as_str(),
                s.mode.as_str(),
                s.account.tokens,
                s.account.included,
                s.account.dropped,
            );
            assert!(s.account.tokens <= budget);
            assert_eq!(s.account.tokens, Tokenizer::O200k.count(&s.text));
        }
    }
}
