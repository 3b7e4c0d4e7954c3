//! Rust call graph: `use` imports, aliases and re-exports, `crate::` / `super::` / `self::`
//! paths, the crate's own name in integration tests, traits (implements edges, default
//! methods reached through `self`), typed receivers (parameter, `let`, field, factory
//! result), shadowing, the standard library, macros, instantiation and name-only guesses.

use crate::common::graph::{graph, Graph};

const CARGO: &str = "[package]\nname = \"my-app\"\nversion = \"0.1.0\"\n\n[dependencies]\n";

const LIB: &str = r#"pub mod app;
pub mod net;
pub mod util;

pub use net::Conn;

pub fn init() {}
"#;

const NET: &str = r#"mod conn;

pub use self::conn::{Conn, Transport};

pub fn connect() -> Conn {
    Conn::new()
}
"#;

const CONN: &str = r#"use crate::util::{self, helper};
use std::collections::HashMap;
use std::io;

pub trait Transport {
    fn send(&self) -> usize;
    fn flush(&self) {}
}

pub trait Reliable: Transport {}

pub struct Conn {
    buf: Buffer,
    peers: HashMap<u8, u8>,
    on_close: Box<dyn Fn()>,
}

pub struct Buffer;

impl Buffer {
    pub fn clear(&mut self) {}
}

impl Conn {
    pub fn new() -> Self {
        Conn { buf: Buffer, peers: HashMap::new(), on_close: Box::new(|| {}) }
    }

    pub fn open() -> io::Result<Self> {
        Ok(Self::new())
    }

    pub fn peer(&self) -> &Conn {
        self
    }

    pub fn reset(&mut self) {
        self.buf.clear();
        self.flush();
        helper();
        util::format();
        self.peers.clear();
        (self.on_close)();
        super::super::init();
    }
}

impl Transport for Conn {
    fn send(&self) -> usize {
        self.peers.len()
    }
}

pub enum State {
    Idle,
    Busy(u8),
}

pub fn state() -> State {
    State::Busy(1)
}
"#;

const UTIL: &str = r#"pub fn helper() {}

pub fn format() {}

pub fn new() {}

fn hidden() {}

macro_rules! log_it {
    () => {};
}

pub struct Timer;

impl Timer {
    pub fn close(&self) {}
}
"#;

const APP: &str = r#"use crate::net::{self, Conn, Transport};
use crate::util::helper as assist;

pub struct Gate;

impl Gate {
    pub fn close(&self) {}
}

fn helper() {}

pub fn run(c: &Conn, t: &dyn Transport, items: Vec<u8>) -> std::io::Result<()> {
    c.send();
    let mut conn = Conn::new();
    conn.reset();
    let mut opened = Conn::open()?;
    opened.reset();
    let mut s = net::connect();
    s.reset();
    t.flush();
    assist();
    helper();
    crate::util::format();
    std::mem::drop(conn);
    println!("done");
    log_it!();
    items.iter().map(Transport::send);
    spawn(helper);
    for x in items {
        x.close();
    }
    hidden();
    c.peer().reset();
    Conn::open()?.reset();
    Conn::open().unwrap().reset();
    let chained = c.peer().peer();
    chained.reset();
    Ok(())
}

fn spawn(f: fn()) {}

fn shadow(helper: fn()) {
    helper();
    let assist = || {};
    assist();
}

mod tests {
    use super::*;

    fn runs() {
        helper();
        let c = Conn::new();
    }
}
"#;

const INTEGRATION: &str = r#"use my_app::net::Conn;

fn it_connects() {
    let c = Conn::new();
    c.send();
    my_app::init();
    tokio::spawn(async {});
}
"#;

fn rust_repo() -> Graph {
    graph(&[
        ("Cargo.toml", CARGO),
        ("src/lib.rs", LIB),
        ("src/net/mod.rs", NET),
        ("src/net/conn.rs", CONN),
        ("src/util.rs", UTIL),
        ("src/app.rs", APP),
        ("tests/integration.rs", INTEGRATION),
    ])
}

#[test]
fn rust_use_imports_aliases_and_re_exports() {
    let g = rust_repo();
    // `use crate::net::Conn` goes through `pub use self::conn::Conn` in net/mod.rs.
    g.edge("src/app.rs", "imports", "net.conn.Conn");
    g.edge("app.run", "calls", "net.conn.Conn.new");
    // The alias reaches util's helper; the bare name is app's own helper.
    let e = g.edge("app.run", "calls", "util.helper");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.85, "import"));
    g.edge("app.run", "calls", "app.helper");
    // `util::format()` through `use crate::util::{self, ..}`.
    g.edge("net.conn.Conn.reset", "calls", "util.format");
    assert_eq!(g.miss("src/net/conn.rs", "std.io").reason, "external");
    // `pub use net::Conn` in lib.rs names the child module `net`.
    g.edge("src/lib.rs", "imports", "net.conn.Conn");
}

#[test]
fn rust_paths_from_crate_super_and_self() {
    let g = rust_repo();
    let e = g.edge("app.run", "calls", "util.format");
    assert_eq!(e.strategy, "path");
    // `super::super::init` from net/conn.rs is the crate root's `init`.
    g.edge("net.conn.Conn.reset", "calls", "init");
    // `mod tests { use super::*; }` sees the file's items.
    g.edge("app.tests.runs", "calls", "app.helper");
    g.edge("app.tests.runs", "calls", "net.conn.Conn.new");
}

#[test]
fn rust_crate_name_reaches_the_library_from_integration_tests() {
    let g = rust_repo();
    g.edge(
        "tests.integration.it_connects",
        "calls",
        "net.conn.Conn.new",
    );
    g.edge("tests.integration.it_connects", "calls", "init");
    g.edge(
        "tests.integration.it_connects",
        "calls",
        "net.conn.Conn.send",
    );
    // Other crates stay external.
    assert_eq!(
        g.miss("tests.integration.it_connects", "tokio::spawn")
            .reason,
        "external"
    );
}

#[test]
fn rust_traits_give_edges_and_default_methods() {
    let g = rust_repo();
    g.edge("net.conn.Conn", "implements", "net.conn.Transport");
    g.edge("net.conn.Reliable", "inherits", "net.conn.Transport");
    // `self.flush()` is the trait's default method, inherited by Conn.
    let e = g.edge("net.conn.Conn.reset", "calls", "net.conn.Transport.flush");
    assert_eq!(e.strategy, "self");
    // A `&dyn Transport` parameter reaches the trait's methods.
    g.edge("app.run", "calls", "net.conn.Transport.flush");
}

#[test]
fn rust_typed_receivers_parameters_locals_fields_and_factories() {
    let g = rust_repo();
    // `c: &Conn` reaches the impl-for-trait method.
    let e = g.edge("app.run", "calls", "net.conn.Conn.send");
    assert_eq!(
        (e.confidence, e.strategy.as_str()),
        (0.85, "type_annotation")
    );
    // `Conn::new()`, `Conn::open()?` (inside `io::Result<Self>`) and `net::connect()`
    // (declared `-> Conn`) all type their locals.
    let resets: Vec<_> = g
        .find("app.run", "calls", "net.conn.Conn.reset")
        .iter()
        .filter(|e| e.line < 30)
        .map(|e| (e.line, e.strategy.as_str()))
        .collect();
    assert_eq!(
        resets,
        vec![
            (15, "inferred_type"),
            (17, "inferred_type"),
            (19, "inferred_type")
        ]
    );
    // A field's declared type; a std type's method is external.
    g.edge("net.conn.Conn.reset", "calls", "net.conn.Buffer.clear");
    g.no_edge("net.conn.Conn.reset", "calls", "util.Timer.close");
    assert_eq!(
        g.miss("net.conn.Conn.reset", "self.peers.clear").reason,
        "external"
    );
    assert_eq!(
        g.miss("net.conn.Conn.send", "self.peers.len").reason,
        "external"
    );
}

#[test]
fn rust_instantiation_and_enum_variants_reach_the_type() {
    let g = rust_repo();
    g.edge("net.conn.Conn.new", "calls", "net.conn.Conn");
    g.edge("net.conn.state", "calls", "net.conn.State");
    let e = g.edge("net.conn.Conn.open", "calls", "net.conn.Conn.new");
    assert_eq!(e.strategy, "self");
}

#[test]
fn rust_parameters_and_locals_shadow_outer_functions() {
    let g = rust_repo();
    g.no_edge("app.shadow", "calls", "app.helper");
    assert_eq!(g.miss("app.shadow", "helper").reason, "local");
    g.no_edge("app.shadow", "calls", "util.helper");
    assert_eq!(g.miss("app.shadow", "assist").reason, "local");
}

#[test]
fn rust_standard_library_and_macros() {
    let g = rust_repo();
    assert_eq!(g.miss("app.run", "std::mem::drop").reason, "external");
    assert_eq!(g.miss("app.run", "println!").reason, "external");
    // `HashMap::new` is std's, not util's `new`.
    assert_eq!(
        g.miss("net.conn.Conn.new", "HashMap::new").reason,
        "external"
    );
    g.no_edge("net.conn.Conn.new", "calls", "util.new");
    // A `macro_rules!` of the repository.
    let e = g.edge("app.run", "calls", "util.log_it");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "macro"));
}

#[test]
fn rust_functions_passed_as_values_are_references() {
    let g = rust_repo();
    g.edge("app.run", "references", "app.helper");
    g.edge("app.run", "references", "net.conn.Transport.send");
    assert_eq!(
        g.targets("app.run", "references"),
        vec!["app.helper", "net.conn.Transport.send"]
    );
}

#[test]
fn rust_unknown_receivers_and_hidden_names() {
    let g = rust_repo();
    // `x` has no known type: the two `close` methods share the guess.
    let e = g.edge("app.run", "calls", "app.Gate.close");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.25, "ambiguous"));
    g.edge("app.run", "calls", "util.Timer.close");
    // A private function of another module, never imported.
    g.no_edge("app.run", "calls", "util.hidden");
    assert_eq!(g.miss("app.run", "hidden").reason, "not_found");
}

#[test]
fn rust_call_chains_use_declared_results() {
    let g = rust_repo();
    // `c.peer()` returns `&Conn`; `Conn::open()` returns `io::Result<Self>`, unwrapped by
    // `?` or `.unwrap()`; a `let` of a chain holds its result too.
    let lines: Vec<i64> = g
        .find("app.run", "calls", "net.conn.Conn.reset")
        .iter()
        .map(|e| e.line)
        .collect();
    assert_eq!(lines, vec![15, 17, 19, 33, 34, 35, 37]);
    let e = g
        .find("app.run", "calls", "net.conn.Conn.reset")
        .into_iter()
        .find(|e| e.line == 34)
        .unwrap();
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "inferred_type"));
}
