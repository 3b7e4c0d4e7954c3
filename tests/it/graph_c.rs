//! Call-graph resolution for C: a translation unit sees its own definitions, what it
//! includes (directly or through other headers) and the implementations beside included
//! headers; other files' non-static functions are joined by the linker; `static` functions,
//! macros and types of other source files are invisible.

use crate::common::graph::{graph, Graph};

const STRBUF_H: &str = r#"#ifndef STRBUF_H
#define STRBUF_H
#include "util/mem.h"

struct strbuf {
    char *data;
    int len;
};

#define STRBUF_INIT { 0, 0 }
#define MAX(a, b) ((a) > (b) ? (a) : (b))

int strbuf_append(struct strbuf *sb, const char *text);

static inline int strbuf_len(const struct strbuf *sb) { return sb->len; }
#endif
"#;

const MEM_H: &str = r#"#include <stdlib.h>

static inline void *xmalloc(int n) { return malloc(n); }
"#;

const STRBUF_C: &str = r#"#include <string.h>
#include "util/strbuf.h"

static int grow(struct strbuf *sb, int n) {
    sb->data = xmalloc(n);
    return 0;
}

static void init(void) {}

int strbuf_append(struct strbuf *sb, const char *text) {
    int n = strlen(text);
    init();
    grow(sb, MAX(n, 16));
    return strbuf_len(sb);
}
"#;

const LOG_H: &str = r#"void log_msg(const char *msg);
"#;

const LOG_C: &str = r#"#include <stdio.h>
#include "log.h"

#define CHECK(x) ((void)(x))

static int format(int x) { return x + 1; }

static void init(void) {}

void log_msg(const char *msg) {
    init();
    printf("%s %d\n", msg, format(1));
}
"#;

const MAIN_C: &str = r#"#include <stdio.h>
#include "util/strbuf.h"
#include "log.h"

struct ops {
    int (*start)(int);
};

static int format(int x) { return x; }

static int twice(int x) { return 2 * x; }

int run(int (*callback)(int), int arg) {
    return callback(arg);
}

int main(void) {
    struct strbuf sb = STRBUF_INIT;
    struct ops *ops = 0;
    int (*handler)(int) = twice;
    strbuf_append(&sb, "x");
    log_msg("hi");
    format(1);
    run(twice, 2);
    handler(3);
    ops->start(1);
    printf("%d\n", 1);
    grow(&sb, 1);
    CHECK(1);
    shared();
    missing_everywhere();
    return 0;
}
"#;

const PLUGIN_A: &str = r#"int shared(void) { return 1; }

int handler(int x) { return x; }

int start(int x) { return x; }
"#;

const PLUGIN_B: &str = r#"int shared(void) { return 2; }

int callback(int x) { return x; }
"#;

/// A repository function named like a C library function.
const COMPAT: &str = r#"int printf(const char *fmt, ...) { return 0; }
"#;

const PARSE_A_H: &str = "int parse(const char *text);\n";
const PARSE_A_C: &str = r#"#include "parse.h"
int parse(const char *text) { return 1; }
"#;
const PARSE_B_H: &str = "int parse(const char *text);\n";
const PARSE_B_C: &str = r#"#include "parse.h"
int parse(const char *text) { return 2; }
"#;
const USE_A: &str = r#"#include "a/parse.h"
int use_a(void) { return parse("x"); }
"#;
const USE_B: &str = r#"#include "b/parse.h"
int use_b(void) { return parse("y"); }
"#;

fn repo() -> Graph {
    graph(&[
        ("include/util/strbuf.h", STRBUF_H),
        ("include/util/mem.h", MEM_H),
        ("src/util/strbuf.c", STRBUF_C),
        ("src/log.h", LOG_H),
        ("src/log.c", LOG_C),
        ("src/main.c", MAIN_C),
        ("src/plugins/a.c", PLUGIN_A),
        ("src/plugins/b.c", PLUGIN_B),
        ("src/compat/printf.c", COMPAT),
        ("src/a/parse.h", PARSE_A_H),
        ("src/a/parse.c", PARSE_A_C),
        ("src/b/parse.h", PARSE_B_H),
        ("src/b/parse.c", PARSE_B_C),
        ("src/use_a.c", USE_A),
        ("src/use_b.c", USE_B),
    ])
}

const MAIN: &str = "src.main.main";

#[test]
fn c_same_file_definitions_come_first() {
    let g = repo();
    let e = g.edge(MAIN, "calls", "src.main.format");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.95, "same_file"));
    // The other `static format` lives in log.c, which main.c cannot see.
    g.no_edge(MAIN, "calls", "src.log.format");
    g.edge("src.log.log_msg", "calls", "src.log.format");
    g.no_edge("src.log.log_msg", "calls", "src.main.format");
    // Two `static init` functions, each called in its own file only.
    g.edge("src.log.log_msg", "calls", "src.log.init");
    g.no_edge("src.log.log_msg", "calls", "src.util.strbuf.init");
    g.edge(
        "src.util.strbuf.strbuf_append",
        "calls",
        "src.util.strbuf.init",
    );
    g.no_edge("src.util.strbuf.strbuf_append", "calls", "src.log.init");
    g.edge(MAIN, "calls", "src.main.run");
}

#[test]
fn c_included_headers_and_what_they_include() {
    let g = repo();
    let append = "src.util.strbuf.strbuf_append";
    let e = g.edge(append, "calls", "include.util.strbuf.strbuf_len");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.85, "include"));
    g.edge(append, "calls", "include.util.strbuf.MAX");
    // mem.h is included by strbuf.h: seen, a little less directly.
    let e = g.edge("src.util.strbuf.grow", "calls", "include.util.mem.xmalloc");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "include"));
    let e = g.edge("src/main.c", "imports", "include/util/strbuf.h");
    assert_eq!(e.strategy, "include");
    g.edge("include/util/strbuf.h", "imports", "include/util/mem.h");
    g.edge("src/main.c", "imports", "src/log.h");
    assert_eq!(g.miss("src/main.c", "stdio.h").reason, "external");
}

#[test]
fn c_functions_declared_in_headers_land_on_their_implementation() {
    let g = repo();
    // log.c beside the included log.h.
    let e = g.edge(MAIN, "calls", "src.log.log_msg");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.85, "include"));
    // strbuf.c, named like the included include/util/strbuf.h, in another folder.
    let e = g.edge(MAIN, "calls", "src.util.strbuf.strbuf_append");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "header_pair"));
    // Two `parse` functions: each caller reaches the one its header declares.
    assert_eq!(g.targets("src.use_a.use_a", "calls"), ["src.a.parse.parse"]);
    assert_eq!(g.targets("src.use_b.use_b", "calls"), ["src.b.parse.parse"]);
}

#[test]
fn c_static_functions_and_macros_of_other_files_are_invisible() {
    let g = repo();
    // `static int grow` of strbuf.c and `#define CHECK` of log.c.
    g.no_edge(MAIN, "calls", "src.util.strbuf.grow");
    assert_eq!(g.miss(MAIN, "grow").reason, "not_found");
    g.no_edge(MAIN, "calls", "src.log.CHECK");
    assert_eq!(g.miss(MAIN, "CHECK").reason, "not_found");
}

#[test]
fn c_parameters_and_locals_shadow_functions() {
    let g = repo();
    // `int (*callback)(int)` is a parameter; plugins/b.c defines a function `callback`.
    g.no_edge("src.main.run", "calls", "src.plugins.b.callback");
    assert_eq!(g.miss("src.main.run", "callback").reason, "local");
    // `int (*handler)(int) = twice;` is a local; plugins/a.c defines `handler`.
    g.no_edge(MAIN, "calls", "src.plugins.a.handler");
    assert_eq!(g.miss(MAIN, "handler").reason, "local");
}

#[test]
fn c_calls_through_struct_members_are_dynamic() {
    let g = repo();
    // `ops->start(1)` calls a function pointer, not the function `start` of plugins/a.c.
    g.no_edge(MAIN, "calls", "src.plugins.a.start");
    assert_eq!(g.miss(MAIN, "ops->start").reason, "dynamic");
}

#[test]
fn c_library_calls_are_external() {
    let g = repo();
    // compat/printf.c defines a `printf`: library calls never land on it.
    g.no_edge(MAIN, "calls", "src.compat.printf.printf");
    g.no_edge("src.log.log_msg", "calls", "src.compat.printf.printf");
    assert_eq!(g.miss(MAIN, "printf").reason, "external");
    assert_eq!(
        g.miss("src.util.strbuf.strbuf_append", "strlen").reason,
        "external"
    );
    assert_eq!(
        g.miss("include.util.mem.xmalloc", "malloc").reason,
        "external"
    );
}

#[test]
fn c_functions_passed_as_values_are_references() {
    let g = repo();
    // `run(twice, 2)` and `int (*handler)(int) = twice;`.
    let lines: Vec<i64> = g
        .find(MAIN, "references", "src.main.twice")
        .iter()
        .map(|e| e.line)
        .collect();
    assert_eq!(lines, [20, 24]);
    assert_eq!(g.targets(MAIN, "references"), ["src.main.twice"]);
}

#[test]
fn c_unknown_and_ambiguous_names() {
    let g = repo();
    // Two non-static `shared` functions, neither declared in an included header.
    for target in ["src.plugins.a.shared", "src.plugins.b.shared"] {
        let e = g.edge(MAIN, "calls", target);
        assert_eq!((e.confidence, e.strategy.as_str()), (0.25, "ambiguous"));
    }
    let m = g.miss(MAIN, "missing_everywhere");
    assert_eq!((m.reason.as_str(), m.candidates), ("external", 0));
}

/// What a header includes is seen by every file including it: when it changes, they are
/// resolved again, and the result equals a full build's.
#[test]
fn c_incremental_runs_follow_changed_includes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let files = [
        ("inc/base.h", "#define BASE 1\n"),
        (
            "inc/extra.h",
            "static inline int helper(void) { return 1; }\n",
        ),
        (
            "src/main.c",
            "#include \"base.h\"\nint main(void) { return helper(); }\n",
        ),
    ];
    crate::common::write_tree(&root, &files);
    let db = dir.path().join("graph.db");
    crate::common::index(&root, &db);
    let before = crate::common::graph::load(&db);
    let e = before.edge("src.main.main", "calls", "inc.extra.helper");
    assert_eq!(e.strategy, "unique_name");

    crate::common::write(
        &root,
        "inc/base.h",
        b"#include \"extra.h\"\n#define BASE 1\n",
    );
    crate::common::index(&root, &db);
    let after = crate::common::graph::load(&db);
    let e = after.edge("src.main.main", "calls", "inc.extra.helper");
    assert_eq!((e.confidence, e.strategy.as_str()), (0.8, "include"));

    let full = graph(&[
        ("inc/base.h", "#include \"extra.h\"\n#define BASE 1\n"),
        (files[1].0, files[1].1),
        (files[2].0, files[2].1),
    ]);
    assert_eq!(after.describe(), full.describe());
}
