//! Deeply nested and very long constructs per language: each case nests the language's own
//! constructs `n` levels deep, or chains `n` members, calls or operands.

/// `open` `n` times, then `inner`, then `close` `n` times.
fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
    let mut s = String::with_capacity((open.len() + close.len()) * n + inner.len());
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(inner);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

/// `first` followed by `n` times `sep item`.
fn chain(first: &str, link: &str, n: usize) -> String {
    let mut s = String::with_capacity(first.len() + link.len() * n);
    s.push_str(first);
    for _ in 0..n {
        s.push_str(link);
    }
    s
}

/// Lines nested by indentation (one space per level): `head` opens each level.
fn indented(head: &str, leaf: &str, n: usize) -> String {
    let mut s = String::with_capacity(n * (n / 2 + head.len() + 2));
    for i in 0..n {
        s.extend(std::iter::repeat_n(' ', i));
        s.push_str(head);
        s.push('\n');
    }
    s.extend(std::iter::repeat_n(' ', n));
    s.push_str(leaf);
    s.push('\n');
    s
}

/// Expression shapes every C-like language writes the same way.
fn c_like_expressions(n: usize) -> Vec<(&'static str, String)> {
    vec![
        ("member chain", chain("a", ".b", n)),
        ("call chain", chain("a", "()", n)),
        ("method call chain", chain("a", ".b()", n)),
        ("nested calls", nest("f(", "x", ")", n)),
        ("nested calls with arguments", nest("f(1, ", "x", ")", n)),
        ("parentheses", nest("(", "x", ")", n)),
        ("index chain", chain("a", "[0]", n)),
        ("nested index", nest("a[", "0", "]", n)),
        ("sum", chain("x", " + x", n)),
        ("string concatenation", chain("\"s\"", " + x", n)),
        ("logical chain", chain("a", " && a", n)),
        ("unary", nest("!", "x", "", n)),
        ("ternary", nest("a ? b : ", "c", "", n)),
    ]
}

/// (label, whole file) for `lang`, nested `n` levels deep; `indent_n` bounds the
/// indentation-nested cases, whose size grows with the square of the depth.
pub fn cases(lang: &str, n: usize, indent_n: usize) -> Vec<(String, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    let mut exprs = |wrap: &dyn Fn(&str) -> String, list: Vec<(&'static str, String)>| {
        for (label, e) in list {
            out.push((label, wrap(&e)));
        }
    };
    match lang {
        "python" => {
            let wrap = |e: &str| format!("def f():\n    return {e}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.retain(|(l, _)| !matches!(*l, "logical chain" | "unary" | "ternary"));
                v.extend([
                    ("lists", nest("[", "", "]", n)),
                    ("dicts", nest("{1: ", "2", "}", n)),
                    ("lambdas", chain("", "lambda x: ", n) + "x"),
                    ("not chain", chain("", "not ", n) + "x"),
                    ("conditional", nest("a if b else ", "c", "", n)),
                    ("comprehensions", nest("[x for x in ", "y", "]", n)),
                    ("f-strings", nest("f\"{", "x", "}\"", n.min(200))),
                    ("boolean chain", chain("a", " and a", n)),
                ]);
                v
            });
            out.push((
                "nested defs",
                indented("def f(a=[[[1]]]):", "pass", indent_n),
            ));
            out.push(("nested ifs", indented("if (x):", "pass", indent_n)));
            out.push(("nested classes", indented("class C(B):", "x = 1", indent_n)));
            out.push((
                "decorators",
                chain("", "@d(x)\n", n) + "def f():\n    pass\n",
            ));
            out.push((
                "dotted import",
                chain("import a", ".b", n) + "\n" + &chain("from a", ".b", n) + " import c\n",
            ));
            out.push(("relative import", chain("from ", ".", n) + " import c\n"));
            out.push(("tuple targets", nest("(", "a", ",)", n) + " = x\n"));
        }
        "typescript" | "tsx" | "javascript" => {
            let wrap = |e: &str| format!("function f() {{ return {e}; }}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.extend([
                    ("arrays", nest("[", "", "]", n)),
                    ("objects", nest("{a: ", "1", "}", n)),
                    ("arrows", chain("", "() => ", n) + "x"),
                    (
                        "function expressions",
                        nest("function () { return ", "1", "; }", n),
                    ),
                    ("templates", nest("`${", "x", "}`", n)),
                    ("optional chain", chain("a", "?.b", n)),
                    ("new chain", chain("", "new ", n) + "A()"),
                    ("await chain", chain("", "await ", n) + "x"),
                    ("spread", nest("[...", "x", "]", n)),
                ]);
                v
            });
            out.push((
                "blocks",
                format!("function f() {}\n", nest("{ ", "x();", " }", n)),
            ));
            out.push((
                "nested functions",
                nest("function f(a) { ", "g();", " }", n),
            ));
            out.push(("nested ifs", nest("if (x) { ", "y();", " }", n)));
            out.push((
                "nested classes",
                nest(
                    "class A { m() { return class B extends A { static s = ",
                    "1",
                    "; }; } }",
                    n,
                ),
            ));
            out.push((
                "destructuring",
                format!("const {} = x;\n", nest("{a: ", "b", "}", n)),
            ));
            out.push(("arrow parameters", nest("(a = (", "1", ")) => 0", n)));
            if lang != "javascript" {
                out.push((
                    "generic types",
                    format!("let x: {} = 1;\n", nest("A<", "B", ">", n)),
                ));
                out.push((
                    "namespaces",
                    nest("namespace A { ", "export const x = 1;", " }", n),
                ));
                out.push((
                    "union types",
                    format!("type T = {};\n", chain("A", " | A", n)),
                ));
            }
            if lang != "typescript" {
                out.push((
                    "jsx",
                    format!("const x = {};\n", nest("<div a={1}>", "x", "</div>", n)),
                ));
            }
        }
        "go" => {
            let wrap = |e: &str| format!("package p\n\nfunc f() {{\n\tx := {e}\n\t_ = x\n}}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.retain(|(l, _)| *l != "ternary");
                v.extend([
                    ("composite literals", nest("T{", "1", "}", n)),
                    (
                        "func literals",
                        nest("func() int { return ", "1", " }()", n),
                    ),
                    ("type assertions", chain("a", ".(T)", n)),
                    ("slices", chain("a", "[1:]", n)),
                ]);
                v
            });
            out.push((
                "blocks",
                format!("package p\nfunc f() {}\n", nest("{ ", "g()", " }", n)),
            ));
            out.push((
                "nested ifs",
                format!(
                    "package p\nfunc f() {{ {} }}\n",
                    nest("if x { ", "g()", " }", n)
                ),
            ));
            out.push((
                "nested types",
                format!(
                    "package p\nvar x {}\n",
                    chain("", "map[string][]*chan ", n) + "int"
                ),
            ));
            out.push((
                "nested structs",
                format!(
                    "package p\ntype T {}\n",
                    nest("struct { a ", "int", " }", n)
                ),
            ));
            out.push((
                "selector import",
                format!("package p\nimport \"{}\"\n", chain("a", "/b", n)),
            ));
        }
        "rust" => {
            let wrap = |e: &str| format!("fn f() {{ let x = {e}; }}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.retain(|(l, _)| *l != "ternary");
                v.extend([
                    ("arrays", nest("[", "1", "]", n)),
                    ("closures", chain("", "|| ", n) + "1"),
                    ("try chain", chain("x", "?", n)),
                    ("references", chain("", "&", n) + "x"),
                    ("paths", chain("a", "::b", n) + "()"),
                    ("macros", nest("vec![", "1", "]", n)),
                    ("blocks in expressions", nest("{ ", "1", " }", n)),
                    ("struct literals", nest("S { a: ", "1", " }", n)),
                ]);
                v
            });
            out.push(("nested fns", nest("fn f() { ", "g();", " }", n)));
            out.push(("nested mods", nest("mod a { ", "fn f() {}", " }", n)));
            out.push((
                "nested ifs",
                format!("fn f() {{ {} }}\n", nest("if x { ", "g()", " }", n)),
            ));
            out.push((
                "generic types",
                format!("type T = {};\n", nest("Vec<", "u8", ">", n)),
            ));
            out.push((
                "tuple patterns",
                format!("fn f() {{ let {} = x; }}\n", nest("(", "a", ",)", n)),
            ));
            out.push((
                "struct patterns",
                format!("fn f() {{ let {} = x; }}\n", nest("S { a: ", "b", " }", n)),
            ));
            out.push(("use trees", format!("use {};\n", nest("a::{", "b", "}", n))));
            out.push((
                "impl paths",
                format!("impl {} {{ fn f(&self) {{}} }}\n", chain("a", "::B", n)),
            ));
        }
        "java" => {
            let wrap = |e: &str| format!("class C {{ Object f() {{ return {e}; }} }}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.extend([
                    ("lambdas", chain("", "x -> ", n) + "x"),
                    ("casts", chain("", "(A) ", n) + "x"),
                    ("string plus in call", nest("f(\"s\" + ", "x", ")", n)),
                    (
                        "parenthesized argument",
                        format!("f({})", nest("(", "\"s\"", ")", n)),
                    ),
                    ("arrays", format!("new int[]{}", nest("{", "1", "}", n))),
                    (
                        "anonymous classes",
                        nest("new A() { Object m() { return ", "1", "; } }", n),
                    ),
                ]);
                v
            });
            out.push(("nested classes", nest("class A { ", "int x;", " }", n)));
            out.push((
                "blocks",
                format!("class C {{ void f() {} }}\n", nest("{ ", "g();", " }", n)),
            ));
            out.push((
                "nested ifs",
                format!(
                    "class C {{ void f() {{ {} }} }}\n",
                    nest("if (x) { ", "g();", " }", n)
                ),
            ));
            out.push((
                "generic types",
                format!("class C {{ {} x; }}\n", nest("A<", "B", ">", n)),
            ));
            out.push((
                "long import",
                format!("import {};\nclass C {{}}\n", chain("a", ".b", n)),
            ));
            out.push((
                "annotations",
                format!("{}class C {{}}\n", chain("", "@A(1) ", n)),
            ));
        }
        "c" | "cpp" => {
            let wrap = |e: &str| format!("int f(void) {{ return {e}; }}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.extend([
                    ("arrow chain", chain("a", "->b", n)),
                    ("casts", chain("", "(int)", n) + "x"),
                    ("dereference", chain("", "*", n) + "p"),
                    ("string literals", chain("", "\"s\" ", n)),
                    ("initializers", nest("{", "1", "}", n)),
                    ("comma", chain("x", ", x", n)),
                ]);
                v
            });
            out.push((
                "blocks",
                format!("void f(void) {}\n", nest("{ ", "g();", " }", n)),
            ));
            out.push((
                "nested ifs",
                format!(
                    "void f(void) {{ {} }}\n",
                    nest("if (x) { ", "g();", " }", n)
                ),
            ));
            out.push((
                "pointer declarator",
                format!("int {}x;\n", chain("", "*", n)),
            ));
            out.push((
                "parenthesized declarator",
                format!("int {};\n", nest("(*", "f", ")", n)),
            ));
            out.push((
                "function declarators",
                format!("int {};\n", nest("(*", "f", ")(void)", n)),
            ));
            out.push((
                "array declarator",
                format!("int x{};\n", chain("", "[1]", n)),
            ));
            out.push((
                "nested structs",
                format!("{};\n", nest("struct a { ", "int x;", " } b;", n)),
            ));
            out.push(("preprocessor", nest("#if X\n", "int x;\n", "#endif\n", n)));
            out.push(("macro calls", format!("{}\n", nest("M(", "x", ")", n))));
            if lang == "cpp" {
                out.push((
                    "namespaces",
                    nest("namespace a { ", "int f() { return 1; }", " }", n),
                ));
                out.push((
                    "nested classes",
                    nest("class A { public: ", "void f() {}", " };", n),
                ));
                out.push(("templates", format!("{} x;\n", nest("A<", "int", ">", n))));
                out.push((
                    "smart pointers",
                    format!(
                        "void f() {{ {} x; }}\n",
                        nest("std::unique_ptr<", "T", ">", n)
                    ),
                ));
                out.push((
                    "qualified name",
                    format!("void {}() {{}}\n", chain("a", "::a", n)),
                ));
                out.push((
                    "lambdas",
                    format!("auto x = {};\n", nest("[]() { return ", "1", "; }()", n)),
                ));
                out.push((
                    "template parameters",
                    format!(
                        "{} class C {{}};\n",
                        nest("template <template <", "class", "> class T>", n)
                    ),
                ));
            }
        }
        "csharp" => {
            let wrap = |e: &str| format!("class C {{ object F() {{ return {e}; }} }}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.extend([
                    ("lambdas", chain("", "x => ", n) + "x"),
                    ("casts", chain("", "(A)", n) + "x"),
                    ("null conditional", chain("a", "?.b", n)),
                    ("object creation", nest("new A(", "1", ")", n)),
                    ("interpolated strings", nest("$\"{", "x", "}\"", n)),
                ]);
                v
            });
            out.push(("nested classes", nest("class A { ", "int x;", " }", n)));
            out.push(("namespaces", nest("namespace A { ", "class C {}", " }", n)));
            out.push((
                "blocks",
                format!("class C {{ void F() {} }}\n", nest("{ ", "G();", " }", n)),
            ));
            out.push((
                "nested ifs",
                format!(
                    "class C {{ void F() {{ {} }} }}\n",
                    nest("if (x) { ", "G();", " }", n)
                ),
            ));
            out.push((
                "generic types",
                format!("class C {{ {} x; }}\n", nest("A<", "B", ">", n)),
            ));
            out.push((
                "nullable types",
                format!(
                    "class C {{ void F() {{ {} x = null; }} }}\n",
                    chain("A", "?", n)
                ),
            ));
            out.push((
                "attributes",
                format!("{}class C {{}}\n", chain("", "[A] ", n)),
            ));
        }
        "ruby" => {
            let wrap = |e: &str| format!("def f\n  {e}\nend\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.extend([
                    ("arrays", nest("[", "1", "]", n)),
                    ("hashes", nest("{a: ", "1", "}", n)),
                    ("safe navigation", chain("a", "&.b", n)),
                    ("scope chain", chain("A", "::B", n)),
                    ("interpolation", nest("\"#{", "x", "}\"", n)),
                    ("lambdas", nest("->(x) { ", "x", " }", n)),
                ]);
                v
            });
            out.push(("begin blocks", nest("begin\n", "x\n", "end\n", n)));
            out.push(("do blocks", nest("proc do\n", "x\n", "end\n", n)));
            out.push(("brace blocks", nest("a { ", "x", " }", n)));
            out.push((
                "nested classes",
                nest("class A < B\n", "def f; end\n", "end\n", n),
            ));
            out.push(("nested modules", nest("module A\n", "X = 1\n", "end\n", n)));
            out.push(("nested defs", nest("def f(a = 1)\n", "g\n", "end\n", n)));
            out.push(("nested ifs", nest("if x then ", "y", " end", n)));
        }
        "php" => {
            let wrap = |e: &str| format!("<?php\nfunction f() {{ return {e}; }}\n");
            exprs(&wrap, {
                let mut v: Vec<(&'static str, String)> = vec![
                    ("member chain", chain("$a", "->b", n)),
                    ("method chain", chain("$a", "->b()", n)),
                    ("call chain", chain("$a", "()", n)),
                    ("static chain", chain("A", "::b()", n)),
                    ("nested calls", nest("f(", "1", ")", n)),
                    ("parentheses", nest("(", "1", ")", n)),
                    ("arrays", nest("[", "1", "]", n)),
                    ("concatenation", chain("\"s\"", " . $x", n)),
                    ("sum", chain("$x", " + $x", n)),
                    ("closures", nest("function () { return ", "1", "; }", n)),
                    ("arrow functions", chain("", "fn() => ", n) + "1"),
                    ("qualified names", chain("", "\\a", n) + "()"),
                    ("new chain", nest("new A(", "1", ")", n)),
                    (
                        "anonymous classes",
                        nest("new class { function f() { return ", "1", "; } }", n),
                    ),
                ];
                v.push(("unary", nest("!", "$x", "", n)));
                v
            });
            out.push((
                "blocks",
                format!("<?php\nfunction f() {}\n", nest("{ ", "g();", " }", n)),
            ));
            out.push((
                "nested ifs",
                format!(
                    "<?php\nfunction f() {{ {} }}\n",
                    nest("if ($x) { ", "g();", " }", n)
                ),
            ));
            out.push((
                "namespace",
                format!(
                    "<?php\nnamespace {};\nuse {};\n",
                    chain("A", "\\B", n),
                    chain("A", "\\B", n)
                ),
            ));
            out.push((
                "html interleaved",
                chain("<?php\n", "if ($x): ?><p><?php ", n),
            ));
        }
        "kotlin" => {
            let wrap = |e: &str| format!("fun f(): Any {{\n    return {e}\n}}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.retain(|(l, _)| *l != "ternary");
                v.extend([
                    ("lambdas", nest("{ ", "1", " }", n)),
                    ("lambdas with parameters", nest("{ x -> ", "x", " }", n)),
                    ("safe calls", chain("a", "?.b", n)),
                    ("not-null assertions", chain("x", "!!", n)),
                    ("templates", nest("\"${", "x", "}\"", n)),
                    ("if expressions", nest("if (a) ", "b", " else c", n)),
                    ("annotated expressions", chain("", "@A ", n) + "x"),
                    ("when", nest("when (x) { 1 -> ", "2", " else -> 3 }", n)),
                ]);
                v
            });
            out.push(("nested classes", nest("class A { ", "val x = 1", " }", n)));
            out.push(("nested functions", nest("fun f() { ", "g()", " }", n)));
            out.push((
                "generic types",
                format!("val x: {} = y\n", nest("A<", "B", ">", n)),
            ));
            out.push(("long import", format!("import {}\n", chain("a", ".b", n))));
            out.push((
                "annotations",
                format!("{}class C\n", chain("", "@A(1) ", n)),
            ));
        }
        "swift" => {
            let wrap = |e: &str| format!("func f() -> Any {{\n    return {e}\n}}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.extend([
                    ("closures", nest("{ ", "1", " }", n)),
                    ("optional chain", chain("a", "?.b", n)),
                    ("force unwrap", chain("x", "!", n)),
                    ("arrays", nest("[", "1", "]", n)),
                    ("tuples", nest("(1, ", "2", ")", n)),
                    ("interpolation", nest("\"\\(", "x", ")\"", n)),
                ]);
                v
            });
            out.push(("nested classes", nest("class A { ", "var x = 1", " }", n)));
            out.push(("nested functions", nest("func f() { ", "g()", " }", n)));
            out.push((
                "nested ifs",
                format!("func f() {{ {} }}\n", nest("if x { ", "g()", " }", n)),
            ));
            out.push((
                "generic types",
                format!("let x: {} = y\n", nest("A<", "B", ">", n)),
            ));
            out.push(("long import", format!("import {}\n", chain("a", ".b", n))));
        }
        "scala" => {
            let wrap = |e: &str| format!("object O {{\n  def f = {e}\n}}\n");
            exprs(&wrap, {
                let mut v = c_like_expressions(n);
                v.retain(|(l, _)| *l != "ternary");
                v.extend([
                    ("lambdas", chain("", "(x: Int) => ", n) + "x"),
                    ("blocks", nest("{ ", "1", " }", n)),
                    ("if expressions", nest("if (a) ", "b", " else c", n)),
                    ("interpolation", nest("s\"${", "x", "}\"", n)),
                    ("type applications", chain("f", "[A]", n)),
                    ("matches", nest("x match { case _ => ", "1", " }", n)),
                ]);
                v
            });
            out.push(("nested classes", nest("class A { ", "val x = 1", " }", n)));
            out.push(("nested objects", nest("object A { ", "def f = 1", " }", n)));
            out.push(("nested defs", nest("def f = { ", "g()", " }", n)));
            out.push((
                "generic types",
                format!("object O {{ val x: {} = y }}\n", nest("A[", "B", "]", n)),
            ));
            out.push(("long import", format!("import {}\n", chain("a", ".b", n))));
            out.push((
                "import selectors",
                format!("import {}\n", nest("a.{", "b", "}", n)),
            ));
        }
        "lua" => {
            let wrap = |e: &str| format!("function f()\n  return {e}\nend\n");
            exprs(&wrap, {
                vec![
                    ("member chain", chain("a", ".b", n)),
                    ("method chain", chain("a", ":b()", n)),
                    ("call chain", chain("a", "()", n)),
                    ("nested calls", nest("f(", "x", ")", n)),
                    ("parentheses", nest("(", "x", ")", n)),
                    ("tables", nest("{", "1", "}", n)),
                    ("index chain", chain("a", "[1]", n)),
                    ("sum", chain("x", " + x", n)),
                    ("concatenation", chain("\"s\"", " .. x", n)),
                    ("not chain", chain("", "not ", n) + "x"),
                    ("functions", nest("function() return ", "1", " end", n)),
                    ("string calls", chain("f", " \"s\"", n)),
                ]
            });
            out.push(("do blocks", nest("do ", "x()", " end", n)));
            out.push(("nested ifs", nest("if x then ", "y()", " end", n)));
            out.push(("nested whiles", nest("while x do ", "y()", " end", n)));
            out.push(("nested functions", nest("function f() ", "g()", " end", n)));
            out.push((
                "dotted function name",
                format!("function {}() end\n", chain("a", ".b", n)),
            ));
        }
        "elixir" => {
            let wrap = |e: &str| format!("defmodule M do\n  def f do\n    {e}\n  end\nend\n");
            exprs(&wrap, {
                vec![
                    ("member chain", chain("a", ".b", n)),
                    ("call chain", chain("a", ".()", n)),
                    ("nested calls", nest("f(", "x", ")", n)),
                    ("parentheses", nest("(", "x", ")", n)),
                    ("lists", nest("[", "1", "]", n)),
                    ("tuples", nest("{", "1", "}", n)),
                    ("maps", nest("%{a: ", "1", "}", n)),
                    ("fns", nest("fn -> ", "1", " end", n)),
                    ("pipes", chain("x", " |> f()", n)),
                    ("sum", chain("x", " + x", n)),
                    ("interpolation", nest("\"#{", "x", "}\"", n)),
                    ("module chain", chain("A", ".B", n)),
                    ("captures", chain("", "&", n) + "f/1"),
                ]
            });
            out.push(("nested ifs", nest("if x do\n", "y\n", "end\n", n)));
            out.push(("nested cases", nest("case x do\n_ -> ", "y\n", "end\n", n)));
            out.push((
                "nested modules",
                nest("defmodule A do\n", "def f, do: 1\n", "end\n", n),
            ));
            out.push(("nested defs", nest("def f do\n", "g()\n", "end\n", n)));
            out.push((
                "guards",
                format!(
                    "defmodule M do\n  def f(x) {} do\n    x\n  end\nend\n",
                    chain("", "when a ", n) + "when b"
                ),
            ));
            out.push((
                "left guards",
                format!(
                    "defmodule M do\n  def {} do\n    x\n  end\nend\n",
                    nest("(", "f(x) when a", ") when b", n)
                ),
            ));
            out.push((
                "attributes",
                format!("defmodule M do\n  {}\nend\n", chain("", "@a ", n) + "1"),
            ));
        }
        "bash" => {
            let wrap = |e: &str| format!("f() {{\n  echo {e}\n}}\n");
            exprs(&wrap, {
                vec![
                    ("command substitutions", nest("$(echo ", "x", ")", n)),
                    ("quoted substitutions", nest("\"$(echo ", "x", ")\"", n)),
                    ("arithmetic", format!("$(( {} ))", nest("(", "1", ")", n))),
                    (
                        "arithmetic sum",
                        format!("$(( {} ))", chain("1", " + 1", n)),
                    ),
                    ("parameter expansion", nest("${a:-", "x", "}", n)),
                    ("member chain", chain("a", ".b", n)),
                    ("call chain", chain("a", "()", n)),
                    ("long word list", chain("a", " a", n)),
                ]
            });
            out.push(("nested ifs", nest("if true; then ", ":", "; fi", n)));
            out.push(("nested whiles", nest("while true; do ", ":", "; done", n)));
            out.push(("groups", nest("{ ", ":", "; }", n)));
            out.push(("subshells", nest("( ", ":", " )", n)));
            out.push(("nested functions", nest("f() { ", ":", "; }", n)));
            out.push(("pipeline", chain("a", " | a", n)));
            out.push(("and list", chain("a", " && a", n)));
            out.push(("nested cases", nest("case x in a) ", ":", " ;; esac", n)));
        }
        other => panic!("no deep cases for {other}"),
    }
    out.into_iter().map(|(l, t)| (l.to_string(), t)).collect()
}

/// `head`, then `item` `n` times with `#` standing for its index, joined by `sep`, then
/// `tail`.
fn list(head: &str, item: &str, sep: &str, tail: &str, n: usize) -> String {
    let mut s = String::with_capacity(head.len() + tail.len() + n * (item.len() + sep.len() + 5));
    s.push_str(head);
    for i in 0..n {
        if i > 0 {
            s.push_str(sep);
        }
        s.push_str(&item.replace('#', &i.to_string()));
    }
    s.push_str(tail);
    s
}

/// Long flat constructs per language, `n` items each: argument, parameter, target and
/// literal lists, locals each used once, members, imports; and a definition named by an
/// `n`-character identifier holding `n / 10` members, and an `n * 10`-byte string.
pub fn wide(lang: &str, n: usize) -> Vec<(String, String)> {
    // (label, head, item, separator, tail)
    let shapes: &[(&str, &str, &str, &str, &str)] = match lang {
        "python" => &[
            ("arguments", "def f():\n    g(", "a#", ", ", ")\n"),
            ("parameters", "def f(", "a#", ", ", "):\n    pass\n"),
            (
                "locals",
                "def f():\n",
                "    a# = make()\n    a#.run()\n",
                "",
                "",
            ),
            (
                "methods",
                "class C:\n",
                "    def m#(self):\n        self.m0()\n",
                "",
                "",
            ),
            ("imports", "", "from m# import n# as k#\n", "", ""),
            ("targets", "def f():\n    ", "a#", ", ", " = x\n"),
            ("list", "x = [", "a#", ", ", "]\n"),
            ("decorators", "", "@d#\n", "", "def f():\n    pass\n"),
        ],
        "typescript" | "tsx" | "javascript" => &[
            ("arguments", "function f() { g(", "a#", ", ", "); }\n"),
            ("parameters", "function f(", "a#", ", ", ") {}\n"),
            (
                "locals",
                "function f() {\n",
                "  const a# = make();\n  a#.run();\n",
                "",
                "}\n",
            ),
            (
                "methods",
                "class C {\n",
                "  m#() { this.m0(); }\n",
                "",
                "}\n",
            ),
            (
                "imports",
                "",
                "import { n# as k# } from \"./m#\";\n",
                "",
                "",
            ),
            ("targets", "const [", "a#", ", ", "] = x;\n"),
            ("list", "const x = [", "a#", ", ", "];\n"),
            ("object", "const o = {", "k#: function () {}", ", ", "};\n"),
        ],
        "go" => &[
            ("arguments", "package p\nfunc f() { g(", "a#", ", ", ") }\n"),
            ("parameters", "package p\nfunc f(", "a# int", ", ", ") {}\n"),
            (
                "locals",
                "package p\nfunc f() {\n",
                "\ta# := make()\n\ta#.Run()\n",
                "",
                "}\n",
            ),
            (
                "methods",
                "package p\n",
                "func (c *C) M#() { c.M0() }\n",
                "",
                "",
            ),
            (
                "imports",
                "package p\nimport (\n",
                "\tk# \"m/p#\"\n",
                "",
                ")\n",
            ),
            ("targets", "package p\nfunc f() { ", "a#", ", ", " := x }\n"),
            ("list", "package p\nvar x = []int{", "#", ", ", "}\n"),
        ],
        "rust" => &[
            ("arguments", "fn f() { g(", "a#", ", ", "); }\n"),
            ("parameters", "fn f(", "a#: u8", ", ", ") {}\n"),
            (
                "locals",
                "fn f() {\n",
                "    let a# = make();\n    a#.run();\n",
                "",
                "}\n",
            ),
            (
                "methods",
                "impl C {\n",
                "    fn m#(&self) { self.m0(); }\n",
                "",
                "}\n",
            ),
            ("imports", "", "use m#::n# as k#;\n", "", ""),
            ("targets", "fn f() { let (", "a#", ", ", ") = x; }\n"),
            ("use list", "use m::{", "n#", ", ", "};\n"),
            ("list", "const X: [u8; 3] = [", "#", ", ", "];\n"),
        ],
        "java" => &[
            (
                "arguments",
                "class C { void f() { g(",
                "a#",
                ", ",
                "); } }\n",
            ),
            (
                "parameters",
                "class C { void f(",
                "int a#",
                ", ",
                ") {} }\n",
            ),
            (
                "locals",
                "class C { void f() {\n",
                "  Foo a# = new Foo();\n  a#.run();\n",
                "",
                "} }\n",
            ),
            (
                "methods",
                "class C {\n",
                "  void m#() { m0(); }\n",
                "",
                "}\n",
            ),
            ("imports", "", "import m#.N#;\n", "", "class C {}\n"),
            ("declarators", "class C { int ", "a#", ", ", "; }\n"),
            ("list", "class C { int[] x = {", "#", ", ", "}; }\n"),
        ],
        "c" | "cpp" => &[
            ("arguments", "void f(void) { g(", "a#", ", ", "); }\n"),
            ("parameters", "void f(", "int a#", ", ", ") {}\n"),
            (
                "locals",
                "void f(void) {\n",
                "  struct s *a# = make();\n  a#->run(a#);\n",
                "",
                "}\n",
            ),
            ("functions", "", "int m#(void) { return m0(); }\n", "", ""),
            ("includes", "", "#include \"m#.h\"\n", "", ""),
            ("typedef declarators", "typedef int ", "t#", ", ", ";\n"),
            ("declarators", "int ", "a#", ", ", ";\n"),
            ("list", "int x[] = {", "#", ", ", "};\n"),
            ("enumerators", "enum e { ", "E#", ", ", " };\n"),
        ],
        "csharp" => &[
            (
                "arguments",
                "class C { void F() { G(",
                "a#",
                ", ",
                "); } }\n",
            ),
            (
                "parameters",
                "class C { void F(",
                "int a#",
                ", ",
                ") {} }\n",
            ),
            (
                "locals",
                "class C { void F() {\n",
                "  var a# = new Foo();\n  a#.Run();\n",
                "",
                "} }\n",
            ),
            (
                "methods",
                "class C {\n",
                "  void M#() { M0(); }\n",
                "",
                "}\n",
            ),
            ("imports", "", "using K# = M#.N;\n", "", "class C {}\n"),
            ("list", "class C { int[] x = {", "#", ", ", "}; }\n"),
        ],
        "ruby" => &[
            ("arguments", "def f\n  g(", "a#", ", ", ")\nend\n"),
            ("parameters", "def f(", "a#", ", ", ")\nend\n"),
            (
                "locals",
                "def f\n",
                "  a# = Foo.new\n  a#.run\n",
                "",
                "end\n",
            ),
            (
                "methods",
                "class C\n",
                "  def m#\n    m0\n  end\n",
                "",
                "end\n",
            ),
            ("imports", "", "require \"m#\"\n", "", ""),
            ("targets", "def f\n  ", "a#", ", ", " = x\nend\n"),
            ("list", "X = [", "#", ", ", "]\n"),
        ],
        "php" => &[
            (
                "arguments",
                "<?php\nfunction f() { g(",
                "$a#",
                ", ",
                "); }\n",
            ),
            ("parameters", "<?php\nfunction f(", "$a#", ", ", ") {}\n"),
            (
                "locals",
                "<?php\nfunction f() {\n",
                "  $a# = new Foo();\n  $a#->run();\n",
                "",
                "}\n",
            ),
            (
                "methods",
                "<?php\nclass C {\n",
                "  function m#() { $this->m0(); }\n",
                "",
                "}\n",
            ),
            ("imports", "<?php\n", "use M\\N# as K#;\n", "", ""),
            ("list", "<?php\n$x = [", "#", ", ", "];\n"),
        ],
        "kotlin" => &[
            ("arguments", "fun f() { g(", "a#", ", ", ") }\n"),
            ("parameters", "fun f(", "a#: Int", ", ", ") {}\n"),
            (
                "locals",
                "fun f() {\n",
                "  val a# = Foo()\n  a#.run()\n",
                "",
                "}\n",
            ),
            ("methods", "class C {\n", "  fun m#() { m0() }\n", "", "}\n"),
            ("imports", "", "import m#.N# as K#\n", "", ""),
            ("list", "val x = listOf(", "#", ", ", ")\n"),
        ],
        "swift" => &[
            ("arguments", "func f() { g(", "a#", ", ", ") }\n"),
            ("parameters", "func f(", "a#: Int", ", ", ") {}\n"),
            (
                "locals",
                "func f() {\n",
                "  let a# = Foo()\n  a#.run()\n",
                "",
                "}\n",
            ),
            (
                "methods",
                "class C {\n",
                "  func m#() { m0() }\n",
                "",
                "}\n",
            ),
            ("imports", "", "import M#\n", "", ""),
            ("list", "let x = [", "#", ", ", "]\n"),
        ],
        "scala" => &[
            ("arguments", "object O { def f = g(", "a#", ", ", ") }\n"),
            (
                "parameters",
                "object O { def f(",
                "a#: Int",
                ", ",
                ") = 1 }\n",
            ),
            (
                "locals",
                "object O { def f = {\n",
                "  val a# = new Foo()\n  a#.run()\n",
                "",
                "} }\n",
            ),
            ("methods", "class C {\n", "  def m#() = m0()\n", "", "}\n"),
            ("imports", "", "import m#.{N# => K#}\n", "", ""),
            ("selectors", "import m.{", "n#", ", ", "}\n"),
            ("list", "object O { val x = List(", "#", ", ", ") }\n"),
        ],
        "lua" => &[
            ("arguments", "function f()\n  g(", "a#", ", ", ")\nend\n"),
            ("parameters", "function f(", "a#", ", ", ")\nend\n"),
            (
                "locals",
                "function f()\n",
                "  local a# = make()\n  a#:run()\n",
                "",
                "end\n",
            ),
            (
                "methods",
                "local M = {}\n",
                "function M.m#() return M.m0() end\n",
                "",
                "return M\n",
            ),
            ("imports", "", "local m# = require(\"m#\")\n", "", ""),
            ("targets", "local ", "a#", ", ", " = x\n"),
            ("list", "local x = {", "#", ", ", "}\n"),
        ],
        "elixir" => &[
            (
                "arguments",
                "defmodule M do\n  def f do\n    g(",
                "a#",
                ", ",
                ")\n  end\nend\n",
            ),
            (
                "parameters",
                "defmodule M do\n  def f(",
                "a#",
                ", ",
                ") do\n    1\n  end\nend\n",
            ),
            (
                "locals",
                "defmodule M do\n  def f do\n",
                "    a# = make()\n    a#.run()\n",
                "",
                "  end\nend\n",
            ),
            (
                "functions",
                "defmodule M do\n",
                "  def m#, do: m0()\n",
                "",
                "end\n",
            ),
            (
                "imports",
                "defmodule M do\n",
                "  alias A#.B#, as: K#\n",
                "",
                "end\n",
            ),
            (
                "only list",
                "defmodule M do\n  import A, only: [",
                "f#: 1",
                ", ",
                "]\nend\n",
            ),
            ("list", "defmodule M do\n  @x [", "#", ", ", "]\nend\n"),
        ],
        "bash" => &[
            ("arguments", "f() {\n  g ", "a#", " ", "\n}\n"),
            ("locals", "f() {\n", "  local a#=1\n  a# x\n", "", "}\n"),
            ("functions", "", "f#() { f0; }\n", "", ""),
            ("imports", "", "source ./m#.sh\n", "", ""),
            ("array", "a=(", "#", " ", ")\n"),
            ("readonly", "readonly ", "A#=1", " ", "\n"),
        ],
        other => panic!("no wide cases for {other}"),
    };
    let mut out: Vec<(String, String)> = shapes
        .iter()
        .map(|(label, head, item, sep, tail)| (label.to_string(), list(head, item, sep, tail, n)))
        .collect();
    let name = "N".repeat(n);
    let long = "x".repeat(n * 10);
    let (named, string) = match lang {
        "python" => (
            format!("class {name}:\n") + &list("", "    def m#(self): pass\n", "", "", n / 10),
            format!("s = \"{long}\"\n"),
        ),
        "typescript" | "tsx" | "javascript" => (
            format!("class {name} {{\n") + &list("", "  m#() {}\n", "", "}\n", n / 10),
            format!("const s = \"{long}\";\n"),
        ),
        "go" => (
            list(
                &format!("package p\ntype {name} struct{{}}\n"),
                &format!("func (c *{name}) M#() {{}}\n"),
                "",
                "",
                n / 10,
            ),
            format!("package p\nvar s = \"{long}\"\n"),
        ),
        "rust" => (
            format!("impl {name} {{\n") + &list("", "    fn m#(&self) {}\n", "", "}\n", n / 10),
            format!("const S: &str = \"{long}\";\n"),
        ),
        "java" | "csharp" => (
            format!("class {name} {{\n") + &list("", "  void m#() {}\n", "", "}\n", n / 10),
            format!("class C {{ String s = \"{long}\"; }}\n"),
        ),
        "c" => (
            list(
                "",
                &format!("int {name}#(void) {{ return 0; }}\n"),
                "",
                "",
                n / 10,
            ),
            format!("const char *s = \"{long}\";\n"),
        ),
        "cpp" => (
            format!("namespace {name} {{ class {name} {{\n")
                + &list("", "  void m#() {}\n", "", "}; }\n", n / 10),
            format!("const char *s = \"{long}\";\n"),
        ),
        "ruby" => (
            format!("class {name}\n") + &list("", "  def m#; end\n", "", "end\n", n / 10),
            format!("S = \"{long}\"\n"),
        ),
        "php" => (
            format!("<?php\nclass {name} {{\n")
                + &list("", "  function m#() {}\n", "", "}\n", n / 10),
            format!("<?php\n$s = \"{long}\";\n"),
        ),
        "kotlin" | "swift" => {
            let f = if lang == "kotlin" { "fun" } else { "func" };
            (
                format!("class {name} {{\n")
                    + &list("", &format!("  {f} m#() {{}}\n"), "", "}\n", n / 10),
                format!("val s = \"{long}\"\n"),
            )
        }
        "scala" => (
            format!("object {name} {{\n") + &list("", "  def m#() = 1\n", "", "}\n", n / 10),
            format!("object O {{ val s = \"{long}\" }}\n"),
        ),
        "lua" => (
            format!("local {name} = {{}}\n")
                + &list("", &format!("function {name}.m#() end\n"), "", "", n / 10),
            format!("local s = \"{long}\"\n"),
        ),
        "elixir" => (
            format!("defmodule {name} do\n") + &list("", "  def m#, do: 1\n", "", "end\n", n / 10),
            format!("defmodule M do\n  @s \"{long}\"\nend\n"),
        ),
        "bash" => (
            list("", &format!("{name}#() {{ :; }}\n"), "", "", n / 10),
            format!("s=\"{long}\"\n"),
        ),
        other => panic!("no wide cases for {other}"),
    };
    out.push(("long name".to_string(), named));
    out.push(("long string".to_string(), string));
    out
}
