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
    /// `#include "path"`: a header relative to the file or anywhere in the tree.
    Include,
    /// Paths or names with no module structure the resolver understands.
    Plain,
}

pub struct Profile {
    pub imports: ImportStyle,
    /// Receiver names that mean the enclosing type's instance or the type itself.
    pub self_names: &'static [&'static str],
    /// Receiver names that mean the base types.
    pub super_names: &'static [&'static str],
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
}

pub fn profile(language: &str) -> &'static Profile {
    match language {
        "python" => &PYTHON,
        "javascript" | "typescript" | "tsx" => &JAVASCRIPT,
        "go" => &GO,
        "rust" => &RUST,
        "java" | "kotlin" | "scala" => &JVM,
        "csharp" => &CSHARP,
        "c" | "cpp" => &C_FAMILY,
        "php" => &PHP,
        "ruby" => &RUBY,
        "swift" => &SWIFT,
        _ => &PLAIN,
    }
}

/// The return type a function's signature declares, where the language writes it after
/// the parameters: `-> T` (Python, Rust, Swift) or `): T` (TypeScript, Kotlin, Scala).
pub fn return_type<'s>(profile: &Profile, signature: &'s str) -> Option<&'s str> {
    let after = match profile.imports {
        ImportStyle::Python | ImportStyle::Rust => signature.rsplit_once("->")?.1,
        ImportStyle::JavaScript | ImportStyle::Namespace => signature.rsplit_once("):")?.1,
        _ => return None,
    };
    let t = after
        .split(" where ")
        .next()
        .unwrap_or(after)
        .trim()
        .trim_end_matches(['{', ':', '=', ';'])
        .trim();
    (!t.is_empty()).then_some(t)
}

/// The text between matching quotes, or the text itself.
pub fn unquoted(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
}

static PYTHON: Profile = Profile {
    imports: ImportStyle::Python,
    self_names: &["cls", "self"],
    super_names: &["super"],
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
};

static JAVASCRIPT: Profile = Profile {
    imports: ImportStyle::JavaScript,
    self_names: &["this"],
    super_names: &["super"],
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &[
        "Array",
        "ArrayBuffer",
        "BigInt",
        "Boolean",
        "DataView",
        "Date",
        "Error",
        "EvalError",
        "Float32Array",
        "Float64Array",
        "Function",
        "Int16Array",
        "Int32Array",
        "Int8Array",
        "Intl",
        "JSON",
        "Map",
        "Math",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Set",
        "String",
        "Symbol",
        "SyntaxError",
        "TypeError",
        "URIError",
        "URL",
        "URLSearchParams",
        "Uint16Array",
        "Uint32Array",
        "Uint8Array",
        "WeakMap",
        "WeakRef",
        "WeakSet",
        "alert",
        "atob",
        "btoa",
        "clearInterval",
        "clearTimeout",
        "console",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "fetch",
        "isFinite",
        "isNaN",
        "parseFloat",
        "parseInt",
        "queueMicrotask",
        "require",
        "setImmediate",
        "setInterval",
        "setTimeout",
        "structuredClone",
    ],
    builtin_methods: &[
        "apply",
        "bind",
        "call",
        "catch",
        "concat",
        "entries",
        "every",
        "filter",
        "finally",
        "find",
        "findIndex",
        "forEach",
        "get",
        "has",
        "includes",
        "indexOf",
        "join",
        "keys",
        "map",
        "pop",
        "push",
        "reduce",
        "replace",
        "set",
        "shift",
        "slice",
        "some",
        "sort",
        "splice",
        "split",
        "then",
        "toString",
        "trim",
        "unshift",
        "values",
    ],
};

static GO: Profile = Profile {
    imports: ImportStyle::Go,
    self_names: &[],
    super_names: &[],
    implicit_members: false,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: false,
    builtins: &[
        "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
        "max", "min", "new", "panic", "print", "println", "real", "recover",
    ],
    builtin_methods: &[],
};

static RUST: Profile = Profile {
    imports: ImportStyle::Rust,
    self_names: &["Self", "self"],
    super_names: &[],
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: false,
    builtins: &[
        "Box", "Err", "None", "Ok", "Option", "Result", "Some", "String", "Vec", "drop",
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
};

static JVM: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["this"],
    super_names: &["super"],
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
};

static CSHARP: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["this"],
    super_names: &["base"],
    implicit_members: true,
    package_scope: true,
    nested_namespaces: true,
    global_fallback: false,
    builtins: &["Console", "Exception", "Math", "String", "nameof"],
    builtin_methods: &[
        "Add",
        "Contains",
        "Equals",
        "GetHashCode",
        "Remove",
        "ToString",
        "TryGetValue",
    ],
};

static C_FAMILY: Profile = Profile {
    imports: ImportStyle::Include,
    self_names: &["this"],
    super_names: &[],
    implicit_members: true,
    package_scope: false,
    nested_namespaces: true,
    global_fallback: true,
    builtins: &[
        "abort", "assert", "atoi", "calloc", "exit", "fclose", "fopen", "fprintf", "free",
        "fwrite", "malloc", "memcmp", "memcpy", "memmove", "memset", "printf", "puts", "realloc",
        "snprintf", "sprintf", "strcmp", "strcpy", "strlen", "strncmp", "strncpy",
    ],
    builtin_methods: &[
        "begin",
        "c_str",
        "clear",
        "empty",
        "end",
        "find",
        "insert",
        "push_back",
        "size",
    ],
};

static PHP: Profile = Profile {
    imports: ImportStyle::Namespace,
    self_names: &["$this", "self", "static"],
    super_names: &["parent"],
    implicit_members: false,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &[],
    builtin_methods: &[],
};

static RUBY: Profile = Profile {
    imports: ImportStyle::Plain,
    self_names: &["self"],
    super_names: &["super"],
    implicit_members: true,
    package_scope: false,
    nested_namespaces: true,
    global_fallback: true,
    builtins: &["puts", "raise", "require", "require_relative"],
    builtin_methods: &["each", "map", "to_s"],
};

static SWIFT: Profile = Profile {
    imports: ImportStyle::Plain,
    self_names: &["Self", "self"],
    super_names: &["super"],
    implicit_members: true,
    package_scope: true,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &["fatalError", "precondition", "print"],
    builtin_methods: &[],
};

static PLAIN: Profile = Profile {
    imports: ImportStyle::Plain,
    self_names: &["self", "this"],
    super_names: &["super"],
    implicit_members: false,
    package_scope: false,
    nested_namespaces: false,
    global_fallback: true,
    builtins: &[],
    builtin_methods: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_are_sorted_for_binary_search() {
        for p in [
            &PYTHON,
            &JAVASCRIPT,
            &GO,
            &RUST,
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
