//! What resolution needs to know about each language: which receiver names mean the
//! enclosing class, whether a bare name can reach class members or other files of the same
//! package, how imports name modules, and which names belong to the language itself.

/// How a language's imports name what they import.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportStyle {
    /// Dotted module paths, relative with leading dots (`from ..a import b`).
    Python,
    /// File paths relative to the importing file (`./util`); bare specifiers are packages.
    JavaScript,
    /// Package import paths (`net/http`, `example.com/m/pkg`), mapped through `go.mod`.
    Go,
    /// Dotted namespaces or packages (`java.util.List`, `using System.IO`).
    Namespace,
    /// `crate::a::b`, `self::`, `super::`; other roots are external crates.
    Rust,
    /// `#include "path"`: a header relative to the file or anywhere in the tree. Languages
    /// with includes resolve by translation unit (see `Profile::translation_units`).
    Include,
    /// Paths or names with no module structure the resolver understands.
    Plain,
}

/// What calling a super name itself (not a member of it) runs. Never the base class: the
/// class is constructed by then, and an edge to it would name no code that runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuperCall {
    /// The name is no call of its own, or calls a builtin (Python's `super()`).
    Nothing,
    /// A constructor of the direct base, named like it (Java, Kotlin, C#). Constructors are
    /// not inherited: a base that declares none has the language's implicit one.
    Constructor,
    /// The constructor of this name of the bases or their ancestors: JavaScript's
    /// `constructor`, which a class without one forwards to its own base.
    InheritedConstructor(&'static str),
    /// The bases' method named like the one the call is written in (Ruby's `super`).
    SameMethod,
}

pub struct Profile {
    pub imports: ImportStyle,
    /// Receiver names that mean the enclosing type's instance or the type itself.
    pub self_names: &'static [&'static str],
    /// Receiver names that mean the base types.
    pub super_names: &'static [&'static str],
    /// What a call of a super name itself runs (`super(...)`, `base(...)`, Ruby's `super`).
    pub super_call: SuperCall,
    /// A bare name can be a member of the enclosing type (Java `save()` means `this.save()`).
    pub implicit_members: bool,
    /// Files of the same module or package see each other's top-level names.
    pub package_scope: bool,
    /// Enclosing namespaces are in scope (C++, C#, Kotlin, Scala, PHP).
    pub nested_namespaces: bool,
    /// A bare name found in no scope may still name a definition anywhere (C's single
    /// global namespace, JavaScript globals, Ruby and PHP autoloading).
    pub global_fallback: bool,
    /// Functions and types of the language and its standard library that a same-named
    /// repository definition must not capture. Sorted.
    pub builtins: &'static [&'static str],
    /// Methods of built-in types: a call of one on a receiver of unknown type is not
    /// guessed onto a repository method of the same name. Sorted.
    pub builtin_methods: &'static [&'static str],
    /// Statically typed languages whose variables declare their types (Java, Kotlin, C#);
    /// `None` elsewhere.
    pub types: Option<&'static TypeRules>,
}

/// What resolution assumes in a language with declared types (Java, Kotlin, C#). A declared
/// or constructed type that no repository file defines (`List<Foo> xs`,
/// `var b = new StringBuilder()`) is a library type: calls on such a value are external,
/// never guessed by name. Imports bind names in the importing file only (no re-exports).
pub struct TypeRules {
    /// Modules every file sees whole without importing them (Java's `java.lang`), looked up
    /// after the file's imports; they matter only where the repository defines them.
    pub implicit_imports: &'static [&'static str],
    /// The name of the unnamed companion object whose members are the type's own (Kotlin's
    /// `Companion`).
    pub companion: Option<&'static str>,
}

impl Profile {
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtins.binary_search(&name).is_ok()
    }

    pub fn is_builtin_method(&self, name: &str) -> bool {
        self.builtin_methods.binary_search(&name).is_ok()
    }

    pub fn is_self(&self, name: &str) -> bool {
        self.self_names.contains(&name)
    }

    pub fn is_super(&self, name: &str) -> bool {
        self.super_names.contains(&name)
    }

    /// C and C++: a file sees its own definitions, what it includes (transitively) and the
    /// names the linker joins across files; module names are paths, not namespaces, and
    /// C++ namespaces and classes are open across files (`void Shape::draw() {..}`).
    pub fn translation_units(&self) -> bool {
        self.imports == ImportStyle::Include
    }
}

pub fn profile(language: &str) -> &'static Profile {
    match language {
        "python" => &PYTHON,
        "javascript" | "typescript" | "tsx" => &JAVASCRIPT,
        "go" => &GO,
        "rust" => &RUST,
        "java" => &JAVA,
        "kotlin" => &KOTLIN,
        "scala" => &JVM,
        "csharp" => &CSHARP,
        "c" | "cpp" => &C_FAMILY,
        "php" => &PHP,
        "ruby" => &RUBY,
        "swift" => &SWIFT,
        _ => &PLAIN,
    }
}

/// The return type a function's declaration states: `-> T` (Python), `): T` (TypeScript,
/// Kotlin, PHP), or a Go or Rust result (`go_rust_return_type`).
pub fn return_type(style: ImportStyle, decl: &str) -> Option<&str> {
    let after = match style {
        ImportStyle::Go => return go_rust_return_type(decl, true),
        ImportStyle::Rust => return go_rust_return_type(decl, false),
        ImportStyle::Python => decl.rsplit_once("->")?.1,
        ImportStyle::JavaScript | ImportStyle::Namespace => decl.rsplit_once("):")?.1,
        _ => return None,
    };
    let t = after.trim().trim_end_matches(['{', ':', '=', ';']).trim();
    (!t.is_empty()).then_some(t)
}

/// The text between matching quotes, or the text itself.
pub fn unquoted(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
}

/// The declared result type in a Go or Rust function signature (`decl` is its declaration
/// line, attributes removed): `func (c *C) Do(r *Req) (*Resp, error)` gives `*Resp`,
/// `pub fn new(n: usize) -> Self where ...` gives `Self`. `None` without a result.
pub fn go_rust_return_type(decl: &str, go: bool) -> Option<&str> {
    let b = decl.as_bytes();
    // Go: `func`, the receiver, the name; a Go interface method starts at its name.
    // Rust: qualifiers up to `fn `, then the name.
    let mut i = if go {
        let mut i = decl.strip_prefix("func ").map_or(0, |_| 5);
        if b.get(i) == Some(&b'(') {
            i = skip_group(b, i)?;
        }
        i
    } else if decl.starts_with("fn ") {
        3
    } else {
        decl.find(" fn ")? + 4
    };
    while i < b.len() && (b[i] == b' ' || b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    if matches!(b.get(i), Some(b'[' | b'<')) {
        i = skip_group(b, i)?;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let rest = decl[skip_group(b, i)?..].trim();
    let result = if go {
        go_first_result(rest)?
    } else {
        let t = rest.strip_prefix("->")?;
        t.split_once(" where ").map_or(t, |(t, _)| t).trim()
    };
    (!result.is_empty()).then_some(result)
}

/// The index just past the bracketed group opening at `open` (`(...)`, `[...]`, `<...>`),
/// brackets of every kind nested; the arrows of Rust's `->` and Go's `<-chan` are none.
pub fn skip_group(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'<' if b.get(j + 1) == Some(&b'-') => {}
            b'(' | b'[' | b'<' | b'{' => depth += 1,
            b'>' if j > 0 && b[j - 1] == b'-' => {}
            b')' | b']' | b'>' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The type of a Go function's first result: `*Resp`, `(*Resp, error)`, `(n int, err error)`.
fn go_first_result(rest: &str) -> Option<&str> {
    let Some(list) = rest.strip_prefix('(') else {
        return Some(rest);
    };
    let b = list.as_bytes();
    let end = skip_group(rest.as_bytes(), 0)? - 2;
    let list = &list[..end];
    // Top-level elements; named results (`n int`) carry a type after their names, and names
    // grouped before a type (`x, y int`) share it.
    let mut elems = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (j, &c) in b[..end].iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                elems.push(list[start..j].trim());
                start = j + 1;
            }
            _ => {}
        }
    }
    elems.push(list[start..].trim());
    match elems.iter().find_map(|e| named_result_type(e)) {
        Some(t) => Some(t),
        None => elems.first().copied(),
    }
}

/// `n int` -> `int`; `*Foo` or `chan int` name no result.
fn named_result_type(e: &str) -> Option<&str> {
    let (name, ty) = e.split_once(' ')?;
    let is_name = name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && !matches!(name, "func" | "chan" | "map" | "struct" | "interface");
    is_name.then(|| ty.trim())
}

/// What a Go or Rust type alias declaration stands for: `FileInfo = fs.FileInfo` (Go, the
/// spec in a group), `type FileInfo = fs.FileInfo`, `pub type Result<T> = io::Result<T>;`.
/// `None` for a defined type (`type Celsius float64`).
pub fn alias_target(decl: &str) -> Option<&str> {
    let (head, target) = decl.split_once(" = ")?;
    // The head is the name with its type parameters, after `type` and a visibility.
    let name = head
        .split(['<', '['])
        .next()?
        .trim_end()
        .rsplit(' ')
        .next()?;
    let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let target = target.trim().trim_end_matches(';').trim();
    (plain && !target.is_empty()).then_some(target)
}

/// The `name` of a `Cargo.toml`'s `[package]` section.
pub fn cargo_package_name(toml: &str) -> Option<&str> {
    let mut in_package = false;
    for line in toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            if let Some(value) = line.strip_prefix("name") {
                let value = value.trim_start().strip_prefix('=')?.trim();
                return Some(unquoted(value)).filter(|v| !v.is_empty());
            }
        }
    }
    None
}

static PYTHON: Profile = Profile {
    imports: ImportStyle::Python,
    self_names: &["cls", "self"],
    super_names: &["super"],
    super_call: SuperCall::Nothing,
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: false,
    builtins: &[
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BaseException",
        "BlockingIOError",
        "BrokenPipeError",
        "BufferError",
        "BytesWarning",
        "ChildProcessError",
        "ConnectionAbortedError",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "DeprecationWarning",
        "EOFError",
        "EnvironmentError",
        "Exception",
        "FileExistsError",
        "FileNotFoundError",
        "FloatingPointError",
        "FutureWarning",
        "GeneratorExit",
        "IOError",
        "ImportError",
        "ImportWarning",
        "IndentationError",
        "IndexError",
        "InterruptedError",
        "IsADirectoryError",
        "KeyError",
        "KeyboardInterrupt",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "NotADirectoryError",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "PendingDeprecationWarning",
        "PermissionError",
        "ProcessLookupError",
        "RecursionError",
        "ReferenceError",
        "ResourceWarning",
        "RuntimeError",
        "RuntimeWarning",
        "StopAsyncIteration",
        "StopIteration",
        "SyntaxError",
        "SyntaxWarning",
        "SystemError",
        "SystemExit",
        "TabError",
        "TimeoutError",
        "TypeError",
        "UnboundLocalError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeError",
        "UnicodeTranslateError",
        "UnicodeWarning",
        "UserWarning",
        "ValueError",
        "Warning",
        "ZeroDivisionError",
        "__import__",
        "abs",
        "aiter",
        "all",
        "anext",
        "any",
        "ascii",
        "bin",
        "bool",
        "breakpoint",
        "bytearray",
        "bytes",
        "callable",
        "chr",
        "classmethod",
        "compile",
        "complex",
        "delattr",
        "dict",
        "dir",
        "divmod",
        "enumerate",
        "eval",
        "exec",
        "exit",
        "filter",
        "float",
        "format",
        "frozenset",
        "getattr",
        "globals",
        "hasattr",
        "hash",
        "help",
        "hex",
        "id",
        "input",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "list",
        "locals",
        "map",
        "max",
        "memoryview",
        "min",
        "next",
        "object",
        "oct",
        "open",
        "ord",
        "pow",
        "print",
        "property",
        "quit",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "setattr",
        "slice",
        "sorted",
        "staticmethod",
        "str",
        "sum",
        "super",
        "tuple",
        "type",
        "vars",
        "zip",
    ],
    builtin_methods: &[
        "add",
        "append",
        "capitalize",
        "clear",
        "copy",
        "count",
        "decode",
        "discard",
        "encode",
        "endswith",
        "extend",
        "find",
        "format",
        "get",
        "index",
        "insert",
        "isdigit",
        "items",
        "join",
        "keys",
        "lower",
        "lstrip",
        "partition",
        "pop",
        "popitem",
        "remove",
        "replace",
        "reverse",
        "rfind",
        "rpartition",
        "rsplit",
        "rstrip",
        "setdefault",
        "sort",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "title",
        "union",
        "update",
        "upper",
        "values",
    ],
    types: None,
};

static JAVASCRIPT: Profile = Profile {
    imports: ImportStyle::JavaScript,
    self_names: &["this"],
    super_names: &["super"],
    super_call: SuperCall::InheritedConstructor("constructor"),
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &[
        "AbortController",
        "AggregateError",
        "Array",
        "ArrayBuffer",
        "Atomics",
        "BigInt",
        "BigInt64Array",
        "BigUint64Array",
        "Blob",
        "Boolean",
        "Buffer",
        "CustomEvent",
        "DOMException",
        "DataView",
        "Date",
        "Error",
        "EvalError",
        "Event",
        "EventTarget",
        "FinalizationRegistry",
        "Float32Array",
        "Float64Array",
        "FormData",
        "Function",
        "Headers",
        "Int16Array",
        "Int32Array",
        "Int8Array",
        "Intl",
        "JSON",
        "Map",
        "Math",
        "MessageChannel",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Request",
        "Response",
        "Set",
        "SharedArrayBuffer",
        "String",
        "Symbol",
        "SyntaxError",
        "TextDecoder",
        "TextEncoder",
        "TypeError",
        "URIError",
        "URL",
        "URLSearchParams",
        "Uint16Array",
        "Uint32Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "WeakMap",
        "WeakRef",
        "WeakSet",
        "WebSocket",
        "XMLHttpRequest",
        "alert",
        "atob",
        "btoa",
        "cancelAnimationFrame",
        "clearImmediate",
        "clearInterval",
        "clearTimeout",
        "console",
        "decodeURI",
        "decodeURIComponent",
        "document",
        "encodeURI",
        "encodeURIComponent",
        "eval",
        "fetch",
        "globalThis",
        "isFinite",
        "isNaN",
        "module",
        "navigator",
        "parseFloat",
        "parseInt",
        "performance",
        "process",
        "queueMicrotask",
        "requestAnimationFrame",
        "require",
        "setImmediate",
        "setInterval",
        "setTimeout",
        "structuredClone",
        "window",
    ],
    builtin_methods: &[
        "addEventListener",
        "apply",
        "at",
        "bind",
        "call",
        "catch",
        "charAt",
        "charCodeAt",
        "codePointAt",
        "concat",
        "endsWith",
        "entries",
        "every",
        "exec",
        "fill",
        "filter",
        "finally",
        "find",
        "findIndex",
        "findLast",
        "findLastIndex",
        "flat",
        "flatMap",
        "forEach",
        "get",
        "has",
        "hasOwnProperty",
        "includes",
        "indexOf",
        "join",
        "keys",
        "lastIndexOf",
        "localeCompare",
        "map",
        "match",
        "matchAll",
        "padEnd",
        "padStart",
        "pop",
        "push",
        "reduce",
        "reduceRight",
        "removeEventListener",
        "repeat",
        "replace",
        "replaceAll",
        "reverse",
        "set",
        "shift",
        "slice",
        "some",
        "sort",
        "splice",
        "split",
        "startsWith",
        "substring",
        "test",
        "then",
        "toFixed",
        "toISOString",
        "toLowerCase",
        "toString",
        "toUpperCase",
        "trim",
        "trimEnd",
        "trimStart",
        "unshift",
        "valueOf",
        "values",
    ],
    types: None,
};

static GO: Profile = Profile {
    imports: ImportStyle::Go,
    self_names: &[],
    super_names: &[],
    super_call: SuperCall::Nothing,
    implicit_members: false,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: false,
    // The predeclared functions and types (conversions like `uint32(x)` are calls).
    builtins: &[
        "any",
        "append",
        "bool",
        "byte",
        "cap",
        "clear",
        "close",
        "comparable",
        "complex",
        "complex128",
        "complex64",
        "copy",
        "delete",
        "error",
        "float32",
        "float64",
        "imag",
        "int",
        "int16",
        "int32",
        "int64",
        "int8",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "rune",
        "string",
        "uint",
        "uint16",
        "uint32",
        "uint64",
        "uint8",
        "uintptr",
    ],
    builtin_methods: &[],
    types: None,
};

static RUST: Profile = Profile {
    imports: ImportStyle::Rust,
    self_names: &["Self", "self"],
    super_names: &[],
    super_call: SuperCall::Nothing,
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: false,
    // The prelude, primitive types (`u32::from`), the standard crates, and the standard
    // macros (`name!`: a repository macro of the same name does not capture them).
    builtins: &[
        "Arc",
        "AsMut",
        "AsRef",
        "Box",
        "Clone",
        "Default",
        "Err",
        "Extend",
        "From",
        "FromIterator",
        "Into",
        "IntoIterator",
        "Iterator",
        "None",
        "Ok",
        "Option",
        "Rc",
        "Result",
        "Some",
        "String",
        "ToOwned",
        "ToString",
        "TryFrom",
        "TryInto",
        "Vec",
        "alloc",
        "assert!",
        "assert_eq!",
        "assert_ne!",
        "bool",
        "cfg!",
        "char",
        "column!",
        "compile_error!",
        "concat!",
        "core",
        "dbg!",
        "debug_assert!",
        "debug_assert_eq!",
        "debug_assert_ne!",
        "drop",
        "env!",
        "eprint!",
        "eprintln!",
        "f32",
        "f64",
        "file!",
        "format!",
        "format_args!",
        "i128",
        "i16",
        "i32",
        "i64",
        "i8",
        "include!",
        "include_bytes!",
        "include_str!",
        "isize",
        "line!",
        "matches!",
        "module_path!",
        "option_env!",
        "panic!",
        "print!",
        "println!",
        "std",
        "str",
        "stringify!",
        "thread_local!",
        "todo!",
        "u128",
        "u16",
        "u32",
        "u64",
        "u8",
        "unimplemented!",
        "unreachable!",
        "usize",
        "vec!",
        "write!",
        "writeln!",
    ],
    builtin_methods: &[
        "as_ref",
        "as_str",
        "borrow",
        "borrow_mut",
        "clone",
        "collect",
        "contains",
        "default",
        "expect",
        "filter",
        "from",
        "get",
        "insert",
        "into",
        "into_iter",
        "is_empty",
        "is_none",
        "is_some",
        "iter",
        "iter_mut",
        "len",
        "lock",
        "map",
        "map_err",
        "new",
        "ok",
        "ok_or",
        "push",
        "remove",
        "to_owned",
        "to_string",
        "unwrap",
        "unwrap_or",
        "unwrap_or_default",
        "unwrap_or_else",
    ],
    types: None,
};

static JAVA: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["this"],
    super_names: &["super"],
    super_call: SuperCall::Constructor,
    implicit_members: true,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: false,
    builtins: &[
        "Boolean",
        "Byte",
        "Character",
        "Class",
        "Double",
        "Enum",
        "Error",
        "Exception",
        "Float",
        "IllegalArgumentException",
        "IllegalStateException",
        "IndexOutOfBoundsException",
        "Integer",
        "Iterable",
        "Long",
        "Math",
        "NullPointerException",
        "Number",
        "Object",
        "Runnable",
        "RuntimeException",
        "Short",
        "String",
        "StringBuilder",
        "System",
        "Thread",
        "Throwable",
        "UnsupportedOperationException",
        "Void",
        "clone",
        "equals",
        "finalize",
        "getClass",
        "hashCode",
        "notify",
        "notifyAll",
        "ordinal",
        "toString",
        "valueOf",
        "values",
        "wait",
    ],
    builtin_methods: &[
        "add",
        "addAll",
        "append",
        "charAt",
        "clone",
        "close",
        "collect",
        "compareTo",
        "contains",
        "containsKey",
        "entrySet",
        "equals",
        "filter",
        "forEach",
        "get",
        "getClass",
        "getKey",
        "getValue",
        "hasNext",
        "hashCode",
        "isEmpty",
        "iterator",
        "keySet",
        "length",
        "map",
        "next",
        "put",
        "remove",
        "size",
        "stream",
        "substring",
        "toString",
        "trim",
        "values",
    ],
    types: Some(&TypeRules {
        implicit_imports: &["java.lang"],
        companion: None,
    }),
};

static KOTLIN: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["this"],
    super_names: &["super"],
    super_call: SuperCall::Constructor,
    implicit_members: true,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: false,
    builtins: &[
        "Any",
        "Array",
        "Boolean",
        "Byte",
        "Character",
        "Class",
        "Double",
        "Enum",
        "Error",
        "Exception",
        "Float",
        "IllegalArgumentException",
        "IllegalStateException",
        "IndexOutOfBoundsException",
        "Int",
        "Integer",
        "Iterable",
        "Long",
        "Math",
        "NullPointerException",
        "Number",
        "Object",
        "Pair",
        "Runnable",
        "RuntimeException",
        "Short",
        "String",
        "StringBuilder",
        "System",
        "TODO",
        "Thread",
        "Throwable",
        "Triple",
        "Unit",
        "UnsupportedOperationException",
        "Void",
        "arrayListOf",
        "arrayOf",
        "buildList",
        "buildMap",
        "buildString",
        "check",
        "checkNotNull",
        "emptyList",
        "emptyMap",
        "emptySet",
        "error",
        "hashMapOf",
        "lazy",
        "listOf",
        "listOfNotNull",
        "mapOf",
        "maxOf",
        "minOf",
        "mutableListOf",
        "mutableMapOf",
        "mutableSetOf",
        "print",
        "println",
        "repeat",
        "require",
        "requireNotNull",
        "run",
        "sequenceOf",
        "setOf",
        "with",
    ],
    builtin_methods: &[
        "add",
        "addAll",
        "all",
        "also",
        "any",
        "apply",
        "associate",
        "contains",
        "count",
        "equals",
        "filter",
        "filterNotNull",
        "find",
        "first",
        "firstOrNull",
        "flatMap",
        "forEach",
        "get",
        "getOrNull",
        "groupBy",
        "hashCode",
        "isEmpty",
        "isNotEmpty",
        "joinToString",
        "last",
        "lastOrNull",
        "let",
        "map",
        "mapNotNull",
        "put",
        "remove",
        "run",
        "size",
        "sortedBy",
        "takeIf",
        "takeUnless",
        "toList",
        "toMutableList",
        "toSet",
        "toString",
        "use",
    ],
    types: Some(&TypeRules {
        // Kotlin's default imports.
        implicit_imports: &[
            "kotlin",
            "kotlin.annotation",
            "kotlin.collections",
            "kotlin.comparisons",
            "kotlin.io",
            "kotlin.ranges",
            "kotlin.sequences",
            "kotlin.text",
            "java.lang",
            "kotlin.jvm",
        ],
        companion: Some("Companion"),
    }),
};

/// Scala.
static JVM: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["this"],
    super_names: &["super"],
    super_call: SuperCall::Nothing,
    implicit_members: true,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: false,
    builtins: &[
        "Boolean",
        "Character",
        "Double",
        "Exception",
        "Float",
        "IllegalArgumentException",
        "IllegalStateException",
        "Integer",
        "Long",
        "Math",
        "Object",
        "RuntimeException",
        "String",
        "StringBuilder",
        "System",
        "Thread",
        "arrayOf",
        "check",
        "error",
        "lazy",
        "listOf",
        "mapOf",
        "mutableListOf",
        "mutableMapOf",
        "println",
        "require",
        "setOf",
    ],
    builtin_methods: &[
        "add", "contains", "equals", "get", "hashCode", "isEmpty", "length", "put", "remove",
        "size", "toString",
    ],
    types: None,
};

static CSHARP: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["this"],
    super_names: &["base"],
    super_call: SuperCall::Constructor,
    implicit_members: true,
    package_scope: true,
    nested_namespaces: true,
    global_fallback: false,
    builtins: &[
        "Activator",
        "ArgumentException",
        "ArgumentNullException",
        "ArgumentOutOfRangeException",
        "Array",
        "Console",
        "Convert",
        "DateTime",
        "Debug",
        "Dictionary",
        "Enumerable",
        "Environment",
        "Exception",
        "File",
        "Guid",
        "HashSet",
        "InvalidOperationException",
        "List",
        "Math",
        "NotImplementedException",
        "NotSupportedException",
        "Path",
        "String",
        "StringBuilder",
        "Task",
        "TimeSpan",
        "Tuple",
        "nameof",
    ],
    builtin_methods: &[
        "Add",
        "AddRange",
        "Any",
        "Clear",
        "Contains",
        "ContainsKey",
        "Count",
        "Dispose",
        "EndsWith",
        "Equals",
        "First",
        "FirstOrDefault",
        "GetHashCode",
        "GetType",
        "IndexOf",
        "Insert",
        "Join",
        "OrderBy",
        "Remove",
        "Select",
        "Split",
        "StartsWith",
        "Substring",
        "ToArray",
        "ToDictionary",
        "ToList",
        "ToLower",
        "ToString",
        "ToUpper",
        "Trim",
        "TryGetValue",
        "Where",
    ],
    types: Some(&TypeRules {
        implicit_imports: &[],
        companion: None,
    }),
};

static C_FAMILY: Profile = Profile {
    imports: ImportStyle::Include,
    self_names: &["this"],
    super_names: &[],
    super_call: SuperCall::Nothing,
    implicit_members: true,
    package_scope: false,
    // Module names are folders, not namespaces; C++ namespaces are definitions of their own.
    nested_namespaces: false,
    global_fallback: true,
    // The C library, POSIX calls repositories rarely define for themselves, and `std`.
    builtins: &[
        "abort",
        "abs",
        "assert",
        "atexit",
        "atof",
        "atoi",
        "atol",
        "atoll",
        "bsearch",
        "calloc",
        "ceil",
        "close",
        "exit",
        "fabs",
        "fclose",
        "fdopen",
        "feof",
        "ferror",
        "fflush",
        "fgetc",
        "fgets",
        "fileno",
        "floor",
        "fopen",
        "fprintf",
        "fputc",
        "fputs",
        "fread",
        "free",
        "fscanf",
        "fseek",
        "fstat",
        "ftell",
        "fwrite",
        "getc",
        "getchar",
        "getenv",
        "isalnum",
        "isalpha",
        "isdigit",
        "islower",
        "isprint",
        "isspace",
        "isupper",
        "isxdigit",
        "longjmp",
        "lseek",
        "malloc",
        "memchr",
        "memcmp",
        "memcpy",
        "memmove",
        "memset",
        "open",
        "perror",
        "pow",
        "printf",
        "pthread_create",
        "pthread_join",
        "pthread_mutex_lock",
        "pthread_mutex_unlock",
        "putc",
        "putchar",
        "puts",
        "qsort",
        "rand",
        "read",
        "realloc",
        "setjmp",
        "snprintf",
        "sprintf",
        "sqrt",
        "srand",
        "sscanf",
        "std",
        "strcat",
        "strchr",
        "strcmp",
        "strcpy",
        "strcspn",
        "strdup",
        "strerror",
        "strlen",
        "strncat",
        "strncmp",
        "strncpy",
        "strndup",
        "strrchr",
        "strspn",
        "strstr",
        "strtod",
        "strtok",
        "strtol",
        "strtoll",
        "strtoul",
        "strtoull",
        "tolower",
        "toupper",
        "unlink",
        "va_arg",
        "va_copy",
        "va_end",
        "va_start",
        "vfprintf",
        "vprintf",
        "vsnprintf",
        "vsprintf",
        "write",
    ],
    // Members of the standard containers, strings and smart pointers.
    builtin_methods: &[
        "append",
        "at",
        "back",
        "begin",
        "c_str",
        "cbegin",
        "cend",
        "clear",
        "count",
        "data",
        "emplace",
        "emplace_back",
        "empty",
        "end",
        "erase",
        "find",
        "front",
        "get",
        "insert",
        "length",
        "lock",
        "pop_back",
        "pop_front",
        "push_back",
        "push_front",
        "rbegin",
        "release",
        "rend",
        "reserve",
        "reset",
        "resize",
        "size",
        "substr",
        "swap",
        "unlock",
    ],
    types: None,
};

static PHP: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["$this", "self", "static"],
    super_names: &["parent"],
    super_call: SuperCall::Nothing,
    implicit_members: false,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &[],
    builtin_methods: &[],
    types: None,
};

static RUBY: Profile = Profile {
    imports: ImportStyle::Plain,
    self_names: &["self"],
    super_names: &["super"],
    super_call: SuperCall::SameMethod,
    implicit_members: true,
    package_scope: false,
    nested_namespaces: true,
    global_fallback: true,
    builtins: &["puts", "raise", "require", "require_relative"],
    builtin_methods: &["each", "map", "to_s"],
    types: None,
};

static SWIFT: Profile = Profile {
    imports: ImportStyle::Plain,
    self_names: &["Self", "self"],
    super_names: &["super"],
    super_call: SuperCall::Nothing,
    implicit_members: true,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &["fatalError", "precondition", "print"],
    builtin_methods: &[],
    types: None,
};

static PLAIN: Profile = Profile {
    imports: ImportStyle::Plain,
    self_names: &["self", "this"],
    super_names: &["super"],
    super_call: SuperCall::Nothing,
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &[],
    builtin_methods: &[],
    types: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_types_of_signatures() {
        let go = |s| go_rust_return_type(s, true);
        assert_eq!(go("func NewReader(rd io.Reader) *Reader"), Some("*Reader"));
        assert_eq!(
            go("func (c *Client) Do(req *Request) (*Response, error)"),
            Some("*Response")
        );
        assert_eq!(
            go("func Open(name string) (f *File, err error)"),
            Some("*File")
        );
        assert_eq!(go("func Pair() (x, y int)"), Some("int"));
        assert_eq!(
            go("func Map[K comparable, V any](m map[K]V) List[V]"),
            Some("List[V]")
        );
        assert_eq!(go("func (s *Server) Close()"), None);
        assert_eq!(
            go("func Pipe(in <-chan int, out chan<- int) *Pipe"),
            Some("*Pipe")
        );
        assert_eq!(go("Serve(w Writer) error"), Some("error"));
        let rust = |s| go_rust_return_type(s, false);
        assert_eq!(rust("pub fn new() -> Self"), Some("Self"));
        assert_eq!(
            rust("pub(crate) async fn open<F: Fn() -> u8>(f: F) -> io::Result<File> where F: Send"),
            Some("io::Result<File>")
        );
        assert_eq!(rust("fn build(&self) -> Runtime"), Some("Runtime"));
        assert_eq!(rust("fn run(&mut self)"), None);
    }

    #[test]
    fn alias_targets() {
        assert_eq!(alias_target("FileInfo = fs.FileInfo"), Some("fs.FileInfo"));
        assert_eq!(
            alias_target("type Set[T any] = map[T]bool"),
            Some("map[T]bool")
        );
        assert_eq!(
            alias_target("pub(crate) type Result<T> = io::Result<T>;"),
            Some("io::Result<T>")
        );
        assert_eq!(alias_target("type Celsius float64"), None);
        assert_eq!(alias_target("Num int"), None);
    }

    #[test]
    fn cargo_package_names() {
        let toml = "[workspace]\nname = \"no\"\n[package]\nname = \"tokio-util\"\n";
        assert_eq!(cargo_package_name(toml), Some("tokio-util"));
        assert_eq!(cargo_package_name("[dependencies]\nname = \"x\"\n"), None);
    }

    #[test]
    fn builtin_lists_are_sorted_for_binary_search() {
        for p in [
            &PYTHON,
            &JAVASCRIPT,
            &GO,
            &RUST,
            &JAVA,
            &KOTLIN,
            &JVM,
            &CSHARP,
            &C_FAMILY,
            &PHP,
            &RUBY,
            &SWIFT,
        ] {
            assert!(
                p.builtins.windows(2).all(|w| w[0] < w[1]),
                "{:?}",
                p.builtins
            );
            assert!(p.builtin_methods.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
