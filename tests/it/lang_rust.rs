//! Rust extraction: definitions, qualified names, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const BUILDER: &str = r#"//! Builder for the runtime.

use std::collections::HashMap;
use crate::config::{self, Config as Cfg, loader::*};
extern crate serde;

/// Maximum worker threads.
pub const MAX_WORKERS: usize = 64;
static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A runtime builder.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Builder<T> {
    workers: usize,
    extra: T,
}

pub union Bits {
    int: u32,
    float: f32,
}

/// Scheduling flavor.
pub enum Flavor {
    CurrentThread,
    MultiThread { workers: usize },
}

pub type Callback = Box<dyn Fn() + Send>;

/// Something that can be built.
pub trait Build: Clone + fmt::Debug {
    /// Builds it.
    fn build(&self) -> Runtime;
    type Output;
    fn name(&self) -> String {
        String::from("build")
    }
}

impl<T: Default> Builder<T> {
    /// Creates a builder.
    pub fn new() -> Self {
        let cfg = config::load();
        Self::with_workers(cfg.workers)
    }

    fn with_workers(n: usize) -> Self {
        let counter = |x: usize| x + 1;
        println!("{}", counter(n));
        Builder { workers: n, extra: T::default() }
    }
}

impl<T> Build for Builder<T> {
    fn build(&self) -> Runtime {
        fn helper() -> u8 {
            0
        }
        self.validate();
        Runtime::new(helper())
    }
}

pub mod tests {
    #[test]
    fn builds() {
        assert!(true);
    }
}

mod external;

macro_rules! builder {
    () => {
        Builder::new()
    };
}

#[tokio::main]
async fn main() {
    let rt = builder!();
    rt.block_on(run::<u8>());
}
"#;

#[test]
fn rust_definitions_kinds_names_parents_and_lines() {
    let ex = run("src/runtime/builder.rs", BUILDER);
    assert!(!ex.has_errors);
    assert_eq!(ex.nodes[0].kind, NodeKind::File);
    assert_eq!(ex.nodes[0].qualified_name, "src/runtime/builder.rs");
    use NodeKind::*;
    let m = "src/runtime/builder.rs";
    assert_eq!(
        outline(&ex),
        vec![
            (Constant, "runtime.builder.MAX_WORKERS", m, 8, 8),
            (Constant, "runtime.builder.COUNTER", m, 9, 9),
            (Class, "runtime.builder.Builder", m, 14, 17),
            (Class, "runtime.builder.Bits", m, 19, 22),
            (Enum, "runtime.builder.Flavor", m, 25, 28),
            (Type, "runtime.builder.Callback", m, 30, 30),
            (Interface, "runtime.builder.Build", m, 33, 40),
            (
                Method,
                "runtime.builder.Build.build",
                "runtime.builder.Build",
                35,
                35
            ),
            (
                Type,
                "runtime.builder.Build.Output",
                "runtime.builder.Build",
                36,
                36
            ),
            (
                Method,
                "runtime.builder.Build.name",
                "runtime.builder.Build",
                37,
                39
            ),
            // `impl` blocks only name the scope: their methods hang off the file.
            (Method, "runtime.builder.Builder.new", m, 44, 47),
            (Method, "runtime.builder.Builder.with_workers", m, 49, 53),
            (Method, "runtime.builder.Builder.build", m, 57, 63),
            (
                Function,
                "runtime.builder.Builder.build.helper",
                "runtime.builder.Builder.build",
                58,
                60
            ),
            (Module, "runtime.builder.tests", m, 66, 71),
            (
                Function,
                "runtime.builder.tests.builds",
                "runtime.builder.tests",
                68,
                70
            ),
            (Function, "runtime.builder.builder", m, 75, 79),
            (Function, "runtime.builder.main", m, 82, 85),
        ]
    );
    // The parent index points at the enclosing stored definition.
    let build_trait = ex
        .nodes
        .iter()
        .position(|n| n.qualified_name == "runtime.builder.Build")
        .unwrap();
    assert_eq!(
        unique_node(&ex, "runtime.builder.Build.name").parent,
        Some(build_trait)
    );
    // Not definitions: the closure in a `let`, the `mod external;` declaration, enum
    // variants, fields, and the impl blocks themselves.
    for absent in ["counter", "external", "CurrentThread", "workers", "cfg"] {
        assert!(
            ex.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
    assert_eq!(ex.nodes.iter().filter(|n| n.name == "Builder").count(), 1);
}

#[test]
fn rust_signatures_stop_at_the_body_and_keep_attributes() {
    let ex = run("src/runtime/builder.rs", BUILDER);
    let sig = |q: &str| unique_node(&ex, q).signature.clone().unwrap();
    assert_eq!(
        sig("runtime.builder.Builder"),
        "#[derive(Debug, Clone)]\n#[non_exhaustive]\npub struct Builder<T>"
    );
    assert_eq!(
        sig("runtime.builder.MAX_WORKERS"),
        "pub const MAX_WORKERS: usize = 64"
    );
    assert_eq!(sig("runtime.builder.Bits"), "pub union Bits");
    assert_eq!(sig("runtime.builder.Flavor"), "pub enum Flavor");
    assert_eq!(
        sig("runtime.builder.Callback"),
        "pub type Callback = Box<dyn Fn() + Send>"
    );
    assert_eq!(
        sig("runtime.builder.Build"),
        "pub trait Build: Clone + fmt::Debug"
    );
    assert_eq!(
        sig("runtime.builder.Build.build"),
        "fn build(&self) -> Runtime"
    );
    assert_eq!(sig("runtime.builder.Build.Output"), "type Output");
    assert_eq!(sig("runtime.builder.Builder.new"), "pub fn new() -> Self");
    assert_eq!(sig("runtime.builder.tests"), "pub mod tests");
    assert_eq!(sig("runtime.builder.tests.builds"), "#[test]\nfn builds()");
    assert_eq!(sig("runtime.builder.builder"), "macro_rules! builder");
    assert_eq!(
        sig("runtime.builder.main"),
        "#[tokio::main]\nasync fn main()"
    );
    // The whole definition's range starts at its first attribute.
    let builder = unique_node(&ex, "runtime.builder.Builder");
    assert!(BUILDER[builder.start_byte as usize..].starts_with("#[derive(Debug, Clone)]"));
    assert!(BUILDER[..builder.end_byte as usize].ends_with("extra: T,\n}"));
}

#[test]
fn rust_doc_comments_skip_attributes() {
    let ex = run("src/runtime/builder.rs", BUILDER);
    let doc = |q: &str| unique_node(&ex, q).docstring.clone();
    assert_eq!(
        doc("runtime.builder.MAX_WORKERS").as_deref(),
        Some("Maximum worker threads.")
    );
    assert_eq!(
        doc("runtime.builder.Builder").as_deref(),
        Some("A runtime builder.")
    );
    assert_eq!(
        doc("runtime.builder.Flavor").as_deref(),
        Some("Scheduling flavor.")
    );
    assert_eq!(
        doc("runtime.builder.Build.build").as_deref(),
        Some("Builds it.")
    );
    assert_eq!(
        doc("runtime.builder.Builder.new").as_deref(),
        Some("Creates a builder.")
    );
    assert_eq!(doc("runtime.builder.COUNTER"), None);
    assert_eq!(doc("runtime.builder.Builder.with_workers"), None);
}

#[test]
fn rust_references_of_every_kind() {
    let ex = run("src/runtime/builder.rs", BUILDER);
    use RefKind::*;
    let m = "src/runtime/builder.rs";
    let refs: Vec<_> = refs(&ex)
        .into_iter()
        .filter(|r| !matches!(r.1, Local | Field | Reference))
        .collect();
    assert_eq!(
        refs,
        vec![
            (m, Import, "HashMap", Some("std::collections"), None, 3),
            // `self` in a use list imports the list's own path.
            (m, Import, "config", Some("crate"), None, 4),
            (m, Import, "Config", Some("crate::config"), Some("Cfg"), 4),
            (m, Import, "*", Some("crate::config::loader"), None, 4),
            (m, Import, "", Some("serde"), None, 5),
            (
                "runtime.builder.COUNTER",
                Call,
                "AtomicUsize::new",
                None,
                None,
                9
            ),
            (
                "runtime.builder.Builder",
                Decorator,
                "derive",
                None,
                None,
                12
            ),
            (
                "runtime.builder.Builder",
                Decorator,
                "non_exhaustive",
                None,
                None,
                13
            ),
            ("runtime.builder.Build", Inherits, "Clone", None, None, 33),
            (
                "runtime.builder.Build",
                Inherits,
                "fmt::Debug",
                None,
                None,
                33
            ),
            (
                "runtime.builder.Build.name",
                Call,
                "String::from",
                None,
                None,
                38
            ),
            (
                "runtime.builder.Builder.new",
                Call,
                "config::load",
                None,
                None,
                45
            ),
            (
                "runtime.builder.Builder.new",
                Call,
                "Self::with_workers",
                None,
                None,
                46
            ),
            (
                "runtime.builder.Builder.with_workers",
                Call,
                "println!",
                None,
                None,
                51
            ),
            // A struct literal instantiates its type.
            (
                "runtime.builder.Builder.with_workers",
                Call,
                "Builder",
                None,
                None,
                52
            ),
            (
                "runtime.builder.Builder.with_workers",
                Call,
                "T::default",
                None,
                None,
                52
            ),
            // An `impl Trait for T` block is not stored, so its trait attaches to the file,
            // naming the implementing type.
            (m, Implements, "Build", Some("Builder"), None, 56),
            (
                "runtime.builder.Builder.build",
                Call,
                "self.validate",
                None,
                None,
                61
            ),
            (
                "runtime.builder.Builder.build",
                Call,
                "Runtime::new",
                None,
                None,
                62
            ),
            (
                "runtime.builder.Builder.build",
                Call,
                "helper",
                None,
                None,
                62
            ),
            (
                "runtime.builder.tests.builds",
                Decorator,
                "test",
                None,
                None,
                67
            ),
            (
                "runtime.builder.tests.builds",
                Call,
                "assert!",
                None,
                None,
                69
            ),
            (
                "runtime.builder.main",
                Decorator,
                "tokio::main",
                None,
                None,
                81
            ),
            ("runtime.builder.main", Call, "builder!", None, None, 83),
            ("runtime.builder.main", Call, "rt.block_on", None, None, 84),
            // Turbofish arguments are not part of the callee.
            ("runtime.builder.main", Call, "run", None, None, 84),
        ]
    );
}

const BINDINGS: &str = r#"pub struct Pool {
    inner: Arc<Inner>,
    pub(crate) size: usize,
}

struct Id(u64, pub Name);

enum Event {
    Data { len: usize },
}

impl Pool {
    fn run<R: Read + Send, 'a>(&self, mut reader: R, (a, b): (u8, u8), f: impl Fn(u8)) -> Self
    where
        W: Write,
    {
        let conn = Conn::open(1)?;
        let mut sock = self.connect().await.unwrap();
        let cfg: Config = load();
        let Pair { left, right: ref mut r } = pair;
        let p = Pool { size: 1, inner };
        let shared = Arc::new(Shared::new());
        let list = Vec::<u8>::new();
        let chained = make().build();
        if let Some(v) = opt {}
        while let Ok(msg) = rx.recv() {}
        for (i, _) in xs {}
        match event {
            Some(x) => {}
            None => {}
        }
        let cb = |n, m: u8| n;
        jobs.map(Self::convert).for_each(drop);
        spawn(worker, MAX_JOBS, self.size);
    }
}
"#;

#[test]
fn rust_locals_fields_and_references() {
    let ex = run("src/pool.rs", BINDINGS);
    assert!(!ex.has_errors);
    use RefKind::*;
    let f = "pool.Pool.run";
    let bindings: Vec<_> = refs(&ex)
        .into_iter()
        .filter(|r| matches!(r.1, Local | Field | Reference) || r.2 == "Pool")
        .collect();
    assert_eq!(
        bindings,
        vec![
            ("pool.Pool", Field, "inner", Some("Arc<Inner>"), None, 2),
            ("pool.Pool", Field, "size", Some("usize"), None, 3),
            // Tuple fields are named by position; enum variant fields are no fields.
            ("pool.Id", Field, "0", Some("u64"), None, 6),
            ("pool.Id", Field, "1", Some("Name"), None, 6),
            // Type parameters stand for their first bound; `&self` is the receiver.
            (f, Local, "R", Some("Read"), None, 13),
            (f, Local, "reader", Some("R"), None, 13),
            (f, Local, "a", None, None, 13),
            (f, Local, "b", None, None, 13),
            (f, Local, "f", Some("impl Fn(u8)"), None, 13),
            (f, Local, "W", Some("Write"), None, 15),
            // `?` and `.unwrap()` unwrap what the call returns; `.await` changes nothing.
            (f, Local, "conn", Some("Conn::open()?"), None, 17),
            (f, Local, "sock", Some("self.connect()?"), None, 18),
            (f, Local, "cfg", Some("Config"), None, 19),
            (f, Local, "left", None, None, 20),
            (f, Local, "r", None, None, 20),
            (f, Local, "p", Some("Pool"), None, 21),
            (f, Call, "Pool", None, None, 21),
            // A smart pointer is used as what it holds.
            (f, Local, "shared", Some("Shared::new()"), None, 22),
            // Type arguments say nothing usable; a chain is kept without its arguments.
            (f, Local, "list", None, None, 23),
            (f, Local, "chained", Some("make().build()"), None, 24),
            (f, Local, "v", None, None, 25),
            (f, Local, "msg", None, None, 26),
            (f, Local, "i", None, None, 27),
            // `None` is a variant, not a binding.
            (f, Local, "x", None, None, 29),
            (f, Local, "cb", None, None, 32),
            (f, Local, "n", None, None, 32),
            (f, Local, "m", Some("u8"), None, 32),
            (f, Reference, "Self::convert", None, None, 33),
            (f, Reference, "drop", None, None, 33),
            // Constants and field values are not functions passed along.
            (f, Reference, "worker", None, None, 34),
        ]
    );
}

#[test]
fn rust_impl_scopes_strip_generics_paths_and_references() {
    let src = "\
impl<'a, T: Clone> fmt::Display for wrapper::Wrapper<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        Ok(())
    }
}
impl<T> From<T> for &Handle {
    fn from(_: T) -> Self {
        todo!()
    }
}
";
    let ex = run("src/wrap.rs", src);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Method, "wrap.Wrapper.fmt", "src/wrap.rs", 2, 4),
            (Method, "wrap.Handle.from", "src/wrap.rs", 7, 9),
        ]
    );
    let implements: Vec<_> = ex
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Implements)
        .map(|r| (r.name.as_str(), r.line))
        .collect();
    assert_eq!(implements, vec![("fmt::Display", 1), ("From", 6)]);
}

#[test]
fn rust_use_trees_expand_into_one_import_per_item() {
    let src = "\
use std::io;
use serde;
use a::b::{c, d as e, f::{g, h::*}};
use x::y as z;
use ::root::item;
";
    let ex = run("src/lib.rs", src);
    let imports: Vec<_> = ex
        .refs
        .iter()
        .map(|r| {
            assert_eq!(r.kind, RefKind::Import);
            (
                r.module.as_deref().unwrap(),
                r.name.as_str(),
                r.alias.as_deref(),
                r.line,
            )
        })
        .collect();
    assert_eq!(
        imports,
        vec![
            ("std", "io", None, 1),
            ("serde", "", None, 2),
            ("a::b", "c", None, 3),
            ("a::b", "d", Some("e"), 3),
            ("a::b::f", "g", None, 3),
            ("a::b::f::h", "*", None, 3),
            ("x", "y", Some("z"), 4),
            ("root", "item", None, 5),
        ]
    );
}

#[test]
fn rust_module_names_follow_the_path() {
    let src = "pub fn f() {}\n";
    let q = |path: &str| run(path, src).nodes[1].qualified_name.clone();
    assert_eq!(q("src/runtime/builder.rs"), "runtime.builder.f");
    assert_eq!(q("src/runtime/mod.rs"), "runtime.f");
    assert_eq!(q("src/net/tcp/main.rs"), "net.tcp.f");
    assert_eq!(q("benches/speed.rs"), "benches.speed.f");
    // A crate root is the empty module `crate::` names; a nested crate keeps its path.
    assert_eq!(q("src/lib.rs"), "f");
    assert_eq!(q("src/main.rs"), "f");
    assert_eq!(q("tokio-util/src/lib.rs"), "tokio-util.src.f");
}

#[test]
fn rust_syntax_errors_keep_the_definitions_around_them() {
    let src = "\
fn before() -> u8 {
    1
}

fn broken(x: u32 {
    let y = ;
}

struct After {
    a: u8,
}

impl After {
    fn fixed(&self) {}
}
";
    let ex = run("src/err.rs", src);
    assert!(ex.has_errors);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Function, "err.before", "src/err.rs", 1, 3),
            (Function, "err.broken", "src/err.rs", 5, 7),
            (Class, "err.After", "src/err.rs", 9, 11),
            (Method, "err.After.fixed", "src/err.rs", 14, 14),
        ]
    );
}

#[test]
fn rust_never_panics_on_fragments() {
    for src in [
        "",
        "impl",
        "impl<T> for {",
        "fn",
        "use a::{",
        "#[derive(",
        "macro_rules! m",
        "trait T: {",
        "const _: () = ();",
        "struct S<T>(T) where",
    ] {
        let ex = run("src/frag.rs", src);
        assert_eq!(ex.nodes[0].kind, NodeKind::File);
        // An anonymous `const _` names nothing.
        assert!(ex.nodes.iter().all(|n| n.name != "_"));
    }
}

#[test]
fn rust_multi_line_doc_comments_survive_attributes() {
    let src = "//! Crate docs.\n\nuse std::fmt;\n\n/// First line.\n///\n/// Second para.\n#[derive(Debug)]\npub struct S;\n";
    let x = codebase_indexer::extract_file("src/lib.rs", src).unwrap();
    let s = x.nodes.iter().find(|n| n.name == "S").unwrap();
    assert_eq!(s.docstring.as_deref(), Some("First line.\n\nSecond para."));
    assert!(x
        .nodes
        .iter()
        .all(|n| n.docstring.as_deref() != Some("Crate docs.")));
}
