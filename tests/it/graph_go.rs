//! Go call graph: package-qualified calls through imports and aliases, same-package calls
//! across files, typed receivers (receiver, parameter, local, field, factory result),
//! embedding, shadowing, the standard library, instantiation and name-only guesses.

use crate::common::graph::{graph, Graph};

const GO_MOD: &str = "module example.com/app\n\ngo 1.22\n";

const STORE: &str = r#"package store

import "fmt"

type Base struct{}

func (b *Base) Close() error { return nil }

type Saver interface {
	Save(k string)
}

type ReadSaver interface {
	Saver
	Read() string
}

type Store struct {
	*Base
	cache  *Cache
	onSave func()
	name   string
}

type Cache struct{}

func (c *Cache) Get(k string) string { return k }

func New() *Store { return &Store{} }

func Open(path string) (*Store, error) { return New(), nil }

func (s *Store) Save(k string) {
	s.cache.Get(k)
	s.Close()
	s.flush()
	s.onSave()
	fmt.Println(k)
	helper()
	_ = uint32(len(k))
}

func (s *Store) flush() {}

func (s *Store) Cache() *Cache { return s.cache }

func Println(s string) {}

func shadowed() {
	helper := func() {}
	helper()
}
"#;

const HELPERS: &str = r#"package store

func helper() {}

var Default = New()

type CacheAlias = Cache

func useDefault() { Default.Save("d") }

type Job struct{}

func (j *Job) Reset() {}
"#;

const UTIL: &str = r#"package util

import "strings"

func Format(s string) string { return strings.ToUpper(s) }

func New() int { return 0 }

type Timer struct{}

func (t *Timer) Reset() {}
"#;

const MAIN: &str = r#"package main

import (
	"net/http"
	"strings"

	"example.com/app/store"
	u "example.com/app/util"
)

func Format() {}

func run(st *store.Store, items []Resettable) {
	st.Save("x")
	s := store.New()
	s.Save("y")
	c := &store.Cache{}
	c.Get("k")
	u.Format("z")
	Format()
	strings.ToUpper("a")
	o, err := store.Open("p")
	o.Save("z")
	var saver store.Saver
	saver.Save("w")
	http.HandleFunc("/", serve)
	go worker(done)
	for _, it := range items {
		it.Reset()
	}
	helper()
	missing()
	st.Cache().Get("chained")
	err.Error()
	store.Default.Save("m")
	var ca store.CacheAlias
	ca.Get("a")
	saver.(*store.Store).flush()
	store.Cache{}.Get("lit")
}

func shadow(Format func()) {
	Format()
}

func worker(f func()) { f() }

func done() {}

func serve(w http.ResponseWriter, r *http.Request) {}
"#;

const STORE_TEST: &str = r#"package store_test

import (
	"testing"

	"example.com/app/store"
)

func TestSave(t *testing.T) {
	st := store.New()
	st.Save("k")
	t.Errorf("failed")
}
"#;

/// One function written once per platform, and callers with and without a platform.
const PLATFORMS: [&str; 6] = ["linux", "windows", "darwin", "freebsd", "openbsd", "netbsd"];

fn go_repo() -> Graph {
    let sys: Vec<(String, String)> = PLATFORMS
        .iter()
        .map(|p| {
            (
                format!("store/sys_{p}.go"),
                "package store\n\nfunc sysOpen() {}\n".to_string(),
            )
        })
        .collect();
    let mut files: Vec<(&str, &str)> = sys.iter().map(|(p, s)| (p.as_str(), s.as_str())).collect();
    files.extend([
        (
            "store/open_linux.go",
            "package store\n\nfunc openLinux() { sysOpen() }\n",
        ),
        (
            "store/open_linux_arm64.go",
            "package store\n\nfunc openArm() { sysOpen() }\n",
        ),
        (
            "store/open.go",
            "package store\n\nfunc openAny() { sysOpen() }\n",
        ),
    ]);
    files.extend(FILES);
    graph(&files)
}

const FILES: [(&str, &str); 6] = [
    ("go.mod", GO_MOD),
    ("store/store.go", STORE),
    ("store/helpers.go", HELPERS),
    ("store/store_test.go", STORE_TEST),
    ("util/util.go", UTIL),
    ("cmd/app/main.go", MAIN),
];

#[test]
fn go_imports_and_aliases_resolve_to_packages_and_functions() {
    let g = go_repo();
    // A package import is an edge to the package's files; the standard library is external.
    g.edge("cmd/app/main.go", "imports", "store/store.go");
    g.edge("cmd/app/main.go", "imports", "util/util.go");
    assert_eq!(g.miss("cmd/app/main.go", "strings").reason, "external");
    // `u.Format` goes through the alias to util, never to main's own Format.
    let e = g.edge("cmd/app.run", "calls", "util.Format");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.85, "import"));
    g.edge("cmd/app.run", "calls", "cmd/app.Format");
    // `store.New` and `util.New` share a name: each call lands on its own package.
    g.edge("cmd/app.run", "calls", "store.New");
    g.no_edge("cmd/app.run", "calls", "util.New");
    g.edge("store/store_test.TestSave", "calls", "store.New");
}

#[test]
fn go_typed_receivers_parameters_locals_and_fields() {
    let g = go_repo();
    // The receiver `s *Store` types `s`.
    let e = g.edge("store.Store.Save", "calls", "store.Store.flush");
    assert_eq!(e.strategy, "type_annotation");
    // A field's declared type: `s.cache.Get`.
    g.edge("store.Store.Save", "calls", "store.Cache.Get");
    // A parameter `st *store.Store`.
    g.edge("cmd/app.run", "calls", "store.Store.Save");
    // A local from a factory (`store.New()` returns `*Store`) and from a two-result
    // factory; both also reach Save.
    let saves: Vec<_> = g
        .find("cmd/app.run", "calls", "store.Store.Save")
        .iter()
        .filter(|e| e.line < 30)
        .map(|e| (e.line, e.strategy.as_str()))
        .collect();
    assert_eq!(
        saves,
        vec![
            (14, "type_annotation"),
            (16, "inferred_type"),
            (23, "inferred_type")
        ]
    );
    // A composite literal instantiates the type and types the local.
    g.edge("cmd/app.run", "calls", "store.Cache");
    g.edge("store.New", "calls", "store.Store");
    let e = g.find("cmd/app.run", "calls", "store.Cache.Get")[0];
    assert_eq!((e.line, e.confidence), (18, 0.85));
    // An interface-typed local reaches the interface's method.
    g.edge("cmd/app.run", "calls", "store.Saver.Save");
    // A func-typed field is called like a method but names no method.
    assert_eq!(g.miss("store.Store.Save", "s.onSave").reason, "local");
}

#[test]
fn go_embedding_gives_inherits_edges_and_promoted_methods() {
    let g = go_repo();
    g.edge("store.Store", "inherits", "store.Base");
    g.edge("store.ReadSaver", "inherits", "store.Saver");
    // `s.Close()` is Base's method, promoted through the embedded field.
    g.edge("store.Store.Save", "calls", "store.Base.Close");
}

#[test]
fn go_same_package_calls_cross_files_but_not_packages() {
    let g = go_repo();
    let e = g.edge("store.Store.Save", "calls", "store.helper");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.9, "same_package"));
    // main has no `helper`: store's unexported one is not visible from there.
    g.no_edge("cmd/app.run", "calls", "store.helper");
    assert_eq!(g.miss("cmd/app.run", "helper").reason, "not_found");
    assert_eq!(g.miss("cmd/app.run", "missing").reason, "external");
}

#[test]
fn go_parameters_and_locals_shadow_outer_functions() {
    let g = go_repo();
    g.no_edge("cmd/app.shadow", "calls", "cmd/app.Format");
    assert_eq!(g.miss("cmd/app.shadow", "Format").reason, "local");
    g.no_edge("store.shadowed", "calls", "store.helper");
    assert_eq!(g.miss("store.shadowed", "helper").reason, "local");
}

#[test]
fn go_standard_library_calls_are_external_and_capture_nothing() {
    let g = go_repo();
    assert_eq!(g.miss("store.Store.Save", "fmt.Println").reason, "external");
    g.no_edge("store.Store.Save", "calls", "store.Println");
    assert_eq!(g.miss("cmd/app.run", "strings.ToUpper").reason, "external");
    assert_eq!(
        g.miss("store/store_test.TestSave", "t.Errorf").reason,
        "external"
    );
    // Builtins and conversions are the language's own.
    assert_eq!(g.miss("store.Store.Save", "len").reason, "external");
    assert_eq!(g.miss("store.Store.Save", "uint32").reason, "external");
}

#[test]
fn go_functions_passed_as_values_are_references() {
    let g = go_repo();
    g.edge("cmd/app.run", "references", "cmd/app.serve");
    g.edge("cmd/app.run", "references", "cmd/app.done");
    g.edge("cmd/app.run", "calls", "cmd/app.worker");
    // Plain variables passed along are no references.
    assert!(g
        .targets("cmd/app.run", "references")
        .iter()
        .all(|t| *t == "cmd/app.serve" || *t == "cmd/app.done"));
}

#[test]
fn go_unknown_receivers_are_only_guessed() {
    let g = go_repo();
    // `it` has no known type: two `Reset` methods share the guess.
    let guesses = g.find("cmd/app.run", "calls", "store.Job.Reset");
    assert_eq!(guesses.len(), 1);
    assert_eq!(
        (guesses[0].confidence, guesses[0].strategy.as_str()),
        (0.25, "ambiguous")
    );
    g.edge("cmd/app.run", "calls", "util.Timer.Reset");
}

#[test]
fn go_call_chains_use_declared_results() {
    let g = go_repo();
    // `st.Cache()` returns `*Cache`: `.Get` is Cache's.
    let e = g
        .find("cmd/app.run", "calls", "store.Cache.Get")
        .into_iter()
        .find(|e| e.line == 33)
        .expect("chained call");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "inferred_type"));
    // `o, err := store.Open(..)`: the last `err` is an `error`.
    assert_eq!(g.miss("cmd/app.run", "err.Error").reason, "external");
}

#[test]
fn go_platform_variants_are_one_function() {
    let g = go_repo();
    // Repeated qualified names are numbered in path order: darwin, freebsd (#2), linux
    // (#3), netbsd (#4), openbsd (#5), windows (#6). A linux file calls the linux variant.
    assert_eq!(
        g.targets("store.openLinux", "calls"),
        vec!["store.sysOpen#3"]
    );
    // No variant for linux on arm64: the linux one shares the most.
    assert_eq!(g.targets("store.openArm", "calls"), vec!["store.sysOpen#3"]);
    // A file for every platform reaches all six variants: more than the fuzzy limit of
    // five, but one function, not an ambiguous name.
    let all = g.targets("store.openAny", "calls");
    assert_eq!(all.len(), 6);
    assert!(all.iter().all(|t| t.starts_with("store.sysOpen")));
    assert!(g
        .edges
        .iter()
        .all(|e| e.source != "store.openAny" || e.confidence == 0.9));
}

#[test]
fn go_package_variables_aliases_and_assertions() {
    let g = go_repo();
    // A package variable declared in another file of the package, and from another package.
    let e = g.edge("store.useDefault", "calls", "store.Store.Save");
    assert_eq!(e.strategy, "inferred_type");
    let lines = |target: &str| -> Vec<i64> {
        g.find("cmd/app.run", "calls", target)
            .iter()
            .map(|e| e.line)
            .collect()
    };
    assert!(lines("store.Store.Save").contains(&35));
    // An alias is used as the type it stands for.
    assert!(lines("store.Cache.Get").contains(&37));
    // A type assertion and a composite literal in a chain.
    assert_eq!(lines("store.Store.flush"), vec![38]);
    assert!(lines("store.Cache.Get").contains(&39));
}
