//! C extraction: definitions, typedefs, macros, signatures, docs and references.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

const STRBUF: &str = r#"#include <stdio.h>
#include "util/strbuf.h"

/* Initial capacity. */
#define INITIAL_CAP 16
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define STRBUF_H

// Growth factor.
static const int GROWTH = 2;
const char *greeting = "hi";
int counter = 0;

/* A growable string. */
struct strbuf {
    char *data;
    size_t len;
};

union value {
    int i;
    double d;
};

enum mode {
    MODE_READ,
    MODE_WRITE,
};

typedef struct {
    int x;
} anon_t;

typedef struct node {
    struct node *next;
} node_t, *node_p;

typedef int (*compare_fn)(const void *, const void *);
typedef unsigned long size_type;

int strbuf_init(struct strbuf *sb, size_t cap);

/* Appends text. */
static int
strbuf_append(struct strbuf *sb, const char *text)
{
    size_t n = strlen(text);
    sb->data = realloc(sb->data, MAX(n, INITIAL_CAP));
    memcpy(sb->data + sb->len, text, n);
    return 0;
}

char **split_lines(const char *text, int *count) {
    struct strbuf tmp;
    strbuf_append(&tmp, text);
    return 0;
}

int (*pick(int which))(const void *, const void *) {
    return 0;
}
"#;

#[test]
fn c_definitions_kinds_names_and_lines() {
    let ex = run("src/util/strbuf.c", STRBUF);
    assert!(!ex.has_errors);
    use NodeKind::*;
    let f = "src/util/strbuf.c";
    assert_eq!(
        outline(&ex),
        vec![
            (Constant, "src.util.strbuf.INITIAL_CAP", f, 5, 5),
            (Function, "src.util.strbuf.MAX", f, 6, 6),
            (Constant, "src.util.strbuf.GROWTH", f, 10, 10),
            (Class, "src.util.strbuf.strbuf", f, 15, 18),
            (Class, "src.util.strbuf.value", f, 20, 23),
            (Enum, "src.util.strbuf.mode", f, 25, 28),
            // The anonymous struct yields nothing; the typedef is reported at its name.
            (Type, "src.util.strbuf.anon_t", f, 32, 32),
            // The named struct and both typedef names are siblings.
            (Class, "src.util.strbuf.node", f, 34, 36),
            (Type, "src.util.strbuf.node_t", f, 36, 36),
            (Type, "src.util.strbuf.node_p", f, 36, 36),
            (Type, "src.util.strbuf.compare_fn", f, 38, 38),
            (Type, "src.util.strbuf.size_type", f, 39, 39),
            // Reported at the name's line, below the return type.
            (Function, "src.util.strbuf.strbuf_append", f, 45, 51),
            (Function, "src.util.strbuf.split_lines", f, 53, 57),
            (Function, "src.util.strbuf.pick", f, 59, 61),
        ]
    );
    // Not definitions: the include guard without a value, a prototype, non-const globals,
    // a pointer to const chars, struct fields, enumerators and local variables.
    for absent in [
        "STRBUF_H",
        "strbuf_init",
        "counter",
        "greeting",
        "data",
        "MODE_READ",
        "n",
        "tmp",
    ] {
        assert!(
            ex.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn c_signatures_and_docs() {
    let ex = run("src/util/strbuf.c", STRBUF);
    let sig = |q: &str| unique_node(&ex, q).signature.clone().unwrap();
    let doc = |q: &str| unique_node(&ex, q).docstring.clone();
    assert_eq!(sig("src.util.strbuf.INITIAL_CAP"), "#define INITIAL_CAP 16");
    assert_eq!(sig("src.util.strbuf.MAX"), "#define MAX(a, b)");
    assert_eq!(sig("src.util.strbuf.GROWTH"), "static const int GROWTH = 2");
    assert_eq!(sig("src.util.strbuf.strbuf"), "struct strbuf");
    assert_eq!(sig("src.util.strbuf.value"), "union value");
    assert_eq!(sig("src.util.strbuf.mode"), "enum mode");
    assert_eq!(
        sig("src.util.strbuf.anon_t"),
        "typedef struct { int x; } anon_t"
    );
    assert_eq!(sig("src.util.strbuf.node_t"), "typedef struct node");
    assert_eq!(
        sig("src.util.strbuf.compare_fn"),
        "typedef int (*compare_fn)(const void *, const void *)"
    );
    assert_eq!(
        sig("src.util.strbuf.size_type"),
        "typedef unsigned long size_type"
    );
    assert_eq!(
        sig("src.util.strbuf.strbuf_append"),
        "static int strbuf_append(struct strbuf *sb, const char *text)"
    );
    assert_eq!(
        sig("src.util.strbuf.split_lines"),
        "char **split_lines(const char *text, int *count)"
    );
    assert_eq!(
        sig("src.util.strbuf.pick"),
        "int (*pick(int which))(const void *, const void *)"
    );
    assert_eq!(
        doc("src.util.strbuf.INITIAL_CAP").as_deref(),
        Some("Initial capacity.")
    );
    assert_eq!(
        doc("src.util.strbuf.GROWTH").as_deref(),
        Some("Growth factor.")
    );
    assert_eq!(
        doc("src.util.strbuf.strbuf").as_deref(),
        Some("A growable string.")
    );
    assert_eq!(
        doc("src.util.strbuf.strbuf_append").as_deref(),
        Some("Appends text.")
    );
    assert_eq!(doc("src.util.strbuf.MAX"), None);
    assert_eq!(doc("src.util.strbuf.split_lines"), None);
    // The range of a function starts at its return type.
    let append = unique_node(&ex, "src.util.strbuf.strbuf_append");
    assert!(STRBUF[append.start_byte as usize..].starts_with("static int\nstrbuf_append("));
}

#[test]
fn c_references() {
    let ex = run("src/util/strbuf.c", STRBUF);
    use RefKind::*;
    let f = "src/util/strbuf.c";
    let append = "src.util.strbuf.strbuf_append";
    let split = "src.util.strbuf.split_lines";
    assert_eq!(
        refs(&ex),
        vec![
            (f, Import, "", Some("stdio.h"), None, 1),
            (f, Import, "", Some("util/strbuf.h"), None, 2),
            // File-level variables shadow like locals (the constant is a definition).
            (f, Local, "greeting", None, None, 11),
            (f, Local, "counter", None, None, 12),
            // Parameters and locals no call names are not reported.
            (append, Call, "strlen", None, None, 47),
            (append, Call, "realloc", None, None, 48),
            (append, Call, "MAX", None, None, 48),
            (append, Call, "memcpy", None, None, 49),
            (split, Call, "strbuf_append", None, None, 55),
        ]
    );
}

#[test]
fn c_calls_through_members_and_pointers() {
    let src = "\
void run(struct ops *o, struct ops ops) {
    o->start(1);
    ops.stop();
    (*o->hook)();
}
";
    let ex = run("lib/run.c", src);
    let calls: Vec<_> = ex
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Call)
        .map(|r| (r.kind, r.name.as_str()))
        .collect();
    assert_eq!(
        calls,
        vec![
            (RefKind::Call, "o->start"),
            (RefKind::Call, "ops.stop"),
            (RefKind::Call, "(*o->hook)"),
        ]
    );
    assert_eq!(ex.nodes[1].qualified_name, "lib.run.run");
}

#[test]
fn c_headers_use_the_same_rules() {
    let src = "\
#ifndef POINT_H
#define POINT_H

typedef struct point {
    int x, y;
} point_t;

point_t point_add(point_t a, point_t b);

static inline int point_dot(point_t a, point_t b) { return a.x * b.x + a.y * b.y; }

#endif
";
    let ex = run("include/point.h", src);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Class, "include.point.point", "include/point.h", 4, 6),
            (Type, "include.point.point_t", "include/point.h", 6, 6),
            (
                Function,
                "include.point.point_dot",
                "include/point.h",
                10,
                10
            ),
        ]
    );
}

#[test]
fn c_syntax_errors_keep_the_definitions_around_them() {
    let src = "\
int before(void) { return 1; }

int broken(int x { return x; }

struct after { int a; };

int later(void) { return 2; }
";
    let ex = run("src/err.c", src);
    assert!(ex.has_errors);
    use NodeKind::*;
    assert_eq!(
        outline(&ex),
        vec![
            (Function, "src.err.before", "src/err.c", 1, 1),
            (Function, "src.err.broken", "src/err.c", 3, 3),
            (Class, "src.err.after", "src/err.c", 5, 5),
            (Function, "src.err.later", "src/err.c", 7, 7),
        ]
    );
}

#[test]
fn c_never_panics_on_fragments() {
    for src in [
        "",
        "typedef",
        "typedef struct {",
        "struct { int a; };",
        "int (*(*f)(int))(",
        "#define",
        "#include",
        "const int = 3;",
        "enum { A, B };",
    ] {
        let ex = run("src/frag.c", src);
        assert_eq!(ex.nodes[0].kind, NodeKind::File);
    }
    // Anonymous structs and enums name nothing.
    let ex = run("src/anon.c", "struct { int a; } s;\nenum { A, B };\n");
    assert_eq!(ex.nodes.len(), 1);
}

#[test]
fn c_variables_and_functions_passed_as_values() {
    let src = "\
static struct ops *g_ops;
int (*g_hook)(int);
static const struct file_operations fops = {
    .open = foo_open,
    .read = &foo_read,
    .mode = MODE_X,
};
void run(struct ops *o, int (*cb)(int), int n) {
    struct ops *p = get_ops(), local;
    int unused = 0;
    register_cb(cb, my_cb, &other_cb, GFP_KERNEL, n, g_ops);
    o->ops->start(1);
    cb(2);
    cb(3);
    p->stop();
    o->handler = on_event;
}
";
    let ex = run("lib/run.c", src);
    use RefKind::*;
    let (f, fops, run_) = ("lib/run.c", "lib.run.fops", "lib.run.run");
    assert_eq!(
        refs(&ex),
        vec![
            // File-level variables, typed by their type's name (a function pointer: none).
            (f, Local, "g_ops", Some("ops"), None, 1),
            (f, Local, "g_hook", None, None, 2),
            // Functions in an initializer; `MODE_X` is a macro.
            (fops, Reference, "foo_open", None, None, 4),
            (fops, Reference, "foo_read", None, None, 5),
            (run_, Call, "get_ops", None, None, 9),
            (run_, Call, "register_cb", None, None, 11),
            // Parameters, locals and file-level variables are not references.
            (run_, Reference, "my_cb", None, None, 11),
            (run_, Reference, "other_cb", None, None, 11),
            // A parameter or local is reported (with its own line) where a call first uses
            // it; `local` and `unused` never are.
            (run_, Local, "o", Some("ops"), None, 8),
            (run_, Call, "o->ops->start", None, None, 12),
            (run_, Local, "cb", None, None, 8),
            (run_, Call, "cb", None, None, 13),
            (run_, Call, "cb", None, None, 14),
            (run_, Local, "p", Some("ops"), None, 9),
            (run_, Call, "p->stop", None, None, 15),
            // A callback stored in a member.
            (run_, Reference, "on_event", None, None, 16),
        ]
    );
}
