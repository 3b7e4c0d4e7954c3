//! How references and module names are written: splitting a callee (`self.a.b`,
//! `make().run`, `Vec::<u8>::new`) into names, reducing a written type to the name to look
//! up, and turning a language's import path into a module name or a file.

use super::*;

/// `from ..a import b` written in module `pkg.sub.mod` means `pkg.a`.
pub(super) fn python_module(module: &str, path: &str, raw: &str) -> Option<String> {
    let dots = raw.len() - raw.trim_start_matches('.').len();
    let rest = &raw[dots..];
    if dots == 0 {
        return Some(rest.to_string());
    }
    let is_package = path.ends_with("/__init__.py") || path.ends_with("/__init__.pyi");
    let mut base: Vec<&str> = module.split('.').filter(|s| !s.is_empty()).collect();
    if !is_package {
        base.pop();
    }
    for _ in 1..dots {
        base.pop()?;
    }
    let mut out = base.join(".");
    if !rest.is_empty() {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(rest);
    }
    Some(out)
}

/// A relative JavaScript/TypeScript import to a file of the repository.
pub(super) fn js_file(g: &Graph, from: &str, spec: &str) -> Option<Idx> {
    if !spec.starts_with('.') {
        return None;
    }
    let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
    let base = normalize_path(&join_path(dir, spec));
    let base = base.trim_end_matches('/');
    // `./x.js` in TypeScript sources means `./x.ts`.
    let stem = [".js", ".jsx", ".mjs", ".cjs"]
        .iter()
        .find_map(|e| base.strip_suffix(e))
        .unwrap_or(base);
    const EXTS: [&str; 8] = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts"];
    std::iter::once(base.to_string())
        .chain(EXTS.iter().map(|e| format!("{stem}.{e}")))
        .chain(EXTS.iter().map(|e| format!("{base}/index.{e}")))
        .find_map(|p| g.file_by_path(&p))
}

/// A Go import path to the package directory holding it in this repository.
pub(super) fn go_package(g: &Graph, path: &str) -> Option<String> {
    for (module, dir) in &g.go_modules {
        if let Some(rest) = path.strip_prefix(module.as_str()) {
            if rest.is_empty() || rest.starts_with('/') {
                let p = format!("{dir}{rest}");
                return Some(p.trim_matches('/').to_string());
            }
        }
    }
    // The standard library's own tree and GOPATH-style layouts: the path is the directory.
    g.module_exists(path).then(|| path.to_string())
}

/// `crate::a::b` (or `self::`, `super::`) written in module `m` as a qualified-name prefix.
/// Paths rooted elsewhere name other crates.
pub(super) fn rust_module(module: &str, raw: &str) -> Option<String> {
    let mut parts = raw.split("::").filter(|s| !s.is_empty());
    let first = parts.next()?;
    let mut base: Vec<&str> = match first {
        "crate" => crate_root(module),
        "self" => module.split('.').collect(),
        "super" => {
            let mut b: Vec<&str> = module.split('.').collect();
            b.pop();
            b
        }
        _ => return None,
    };
    for p in parts {
        if p == "super" {
            base.pop();
        } else {
            base.push(p);
        }
    }
    Some(
        base.into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// The module prefix of a crate's root: everything up to its `src` folder (files directly
/// under a top-level `src/` have no prefix), and a file at the root is the root.
pub(super) fn crate_root(module: &str) -> Vec<&str> {
    let parts: Vec<&str> = module.split('.').collect();
    match parts.iter().rposition(|&p| p == "src") {
        Some(i) => parts[..=i].to_vec(),
        None => Vec::new(),
    }
}

pub(super) fn join_path(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Resolves `.` and `..` components.
pub(super) fn normalize_path(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

/// A type as written reduced to the name to look up: `Optional["Session"]` -> `Session`,
/// `*http.Server` -> `http.Server`, `List<Foo>` -> `List`, `&mut Self` -> `Self`.
pub(super) fn clean_type(text: &str) -> Option<&str> {
    let mut t = text.trim();
    for wrapper in [
        "Optional[",
        "typing.Optional[",
        "t.Optional[",
        "Type[",
        "type[",
    ] {
        if let Some(inner) = t.strip_prefix(wrapper).and_then(|s| s.strip_suffix(']')) {
            t = inner.trim();
        }
    }
    if let Some((first, _)) = t.split_once('|') {
        t = first.trim();
    }
    t = t.trim_matches(|c| c == '"' || c == '\'');
    t = t
        .trim_start_matches(['*', '&', '?', '^'])
        .trim_end_matches(['?', '!', '*', '&']);
    for prefix in ["mut ", "const ", "dyn ", "impl ", "struct ", "class "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let end = t.find(['<', '[', '(', ' ', ',']).unwrap_or(t.len());
    let t = t[..end].trim_end_matches("::");
    let t = t.trim();
    (!t.is_empty() && t != "None").then_some(t)
}

/// The first argument of the first call written in `text`, trimmed: `X` in `super(X, self).m`.
/// `None` without an argument list; an argument with brackets of its own is cut at the first
/// closing one, which makes it no name.
pub(super) fn first_argument(text: &str) -> Option<&str> {
    let (_, inner) = text.split_once('(')?;
    let end = inner.find([',', ')'])?;
    Some(inner[..end].trim())
}

/// `super<T>.m` (Kotlin) or `super[T].m` (Scala): the base named, `T`, and what follows it,
/// `.m`.
pub(super) fn qualified_super(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim().strip_prefix("super")?;
    let close = match rest.chars().next()? {
        '<' => '>',
        '[' => ']',
        _ => return None,
    };
    let (base, after) = rest[1..].split_once(close)?;
    let base = base.trim();
    (!base.is_empty() && after.starts_with('.')).then_some((base, after))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Head {
    /// The first segment is a name to look up.
    Name,
    /// The receiver is an expression (a call result, an index): only later names are known.
    Expression,
    /// Python's `super()`.
    SuperCall,
    /// The receiver is what the call of the first `k` names returns: `make().run`.
    Call(usize),
}

/// `self.a.b` -> [self, a, b]; `foo(x).bar` -> Expression, [bar]; `a::b::<T>::c` -> [a, b, c].
pub(super) fn split_reference(text: &str) -> (Head, Vec<&str>) {
    let mut t = text.trim();
    for prefix in ["new ", "await ", "yield "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let mut head = Head::Name;
    if let Some(rest) = t.strip_prefix("super()") {
        head = Head::SuperCall;
        t = rest;
    }
    let bytes = t.as_bytes();
    let mut segments: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let sep_len = match b {
            b'.' | b'\\' => 1,
            b':' if bytes.get(i + 1) == Some(&b':') => 2,
            b':' => 1,
            b'-' if bytes.get(i + 1) == Some(&b'>') => 2,
            b'?' if bytes.get(i + 1) == Some(&b'.') => 2,
            b'!' if bytes.get(i + 1) == Some(&b'.') => 2,
            b'(' | b'[' | b'{' | b'<' => {
                // Skip the bracketed part; type arguments vanish, anything else makes the
                // receiver an expression.
                let close = match b {
                    b'(' => b')',
                    b'[' => b']',
                    b'{' => b'}',
                    _ => b'>',
                };
                let mut level = 0;
                let mut j = i;
                while j < bytes.len() {
                    if bytes[j] == b {
                        level += 1;
                    } else if bytes[j] == close {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    j += 1;
                }
                if i > start {
                    segments.push(&t[start..i]);
                }
                if b == b'(' && head == Head::Name && !segments.is_empty() && j + 1 < bytes.len() {
                    head = Head::Call(segments.len());
                } else if b != b'<' {
                    head = Head::Expression;
                    segments.clear();
                }
                i = j + 1;
                start = i;
                continue;
            }
            _ => 0,
        };
        if sep_len > 0 {
            if i > start {
                segments.push(&t[start..i]);
            }
            i += sep_len;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < t.len() {
        segments.push(&t[start..]);
    }
    let keep = |s: &&str| !s.is_empty() && !s.contains(char::is_whitespace);
    if let Head::Call(k) = head {
        // Text that is no name among the called ones (Ruby's `puts x(1).y`): the callee
        // is not known.
        if !segments[..k].iter().all(keep) {
            head = Head::Expression;
            segments.drain(..k);
        }
    }
    segments.retain(keep);
    if head == Head::Name {
        // Ruby's `@x` is the field `x` of `self`.
        if let Some(field) = segments.first().and_then(|s| s.strip_prefix('@')) {
            if !field.is_empty() && !field.starts_with('@') {
                segments[0] = "self";
                segments.insert(1, field);
            }
        }
    }
    (head, segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_names() {
        assert_eq!(
            split_reference("self.a.b"),
            (Head::Name, vec!["self", "a", "b"])
        );
        assert_eq!(
            split_reference("foo(x).bar"),
            (Head::Call(1), vec!["foo", "bar"])
        );
        // Text around the call (Ruby's `puts x(1).y`) is not a name: the count follows.
        assert_eq!(
            split_reference("puts x(1).y"),
            (Head::Expression, vec!["y"])
        );
        assert_eq!(
            split_reference("a.b(x).c(y).d"),
            (Head::Expression, vec!["d"])
        );
        assert_eq!(
            split_reference("Vec::<u8>::new"),
            (Head::Name, vec!["Vec", "new"])
        );
        assert_eq!(
            split_reference("a?.b->c"),
            (Head::Name, vec!["a", "b", "c"])
        );
        assert_eq!(
            split_reference("super().save"),
            (Head::SuperCall, vec!["save"])
        );
        assert_eq!(
            split_reference("super(Base, self).save"),
            (Head::Call(1), vec!["super", "save"])
        );
        assert_eq!(first_argument("super(Base, self).save"), Some("Base"));
        assert_eq!(
            first_argument("super(type(self), self).m"),
            Some("type(self")
        );
        assert_eq!(first_argument("super"), None);
        assert_eq!(
            qualified_super("super<Saver>.save"),
            Some(("Saver", ".save"))
        );
        assert_eq!(
            qualified_super("super[a.Saver].save"),
            Some(("a.Saver", ".save"))
        );
        assert_eq!(qualified_super("super.save"), None);
        assert_eq!(qualified_super("superb<T>.save"), None);
        assert_eq!(split_reference("new Foo"), (Head::Name, vec!["Foo"]));
        assert_eq!(split_reference("xs[0].m"), (Head::Expression, vec!["m"]));
        assert_eq!(
            split_reference("obj:method"),
            (Head::Name, vec!["obj", "method"])
        );
        assert_eq!(
            split_reference("@repo.save"),
            (Head::Name, vec!["self", "repo", "save"])
        );
    }

    #[test]
    fn relative_python_modules() {
        assert_eq!(
            python_module("pkg.sub.mod", "pkg/sub/mod.py", ".x"),
            Some("pkg.sub.x".into())
        );
        assert_eq!(
            python_module("pkg.sub", "pkg/sub/__init__.py", ".x"),
            Some("pkg.sub.x".into())
        );
        assert_eq!(
            python_module("pkg.sub.mod", "pkg/sub/mod.py", "..x"),
            Some("pkg.x".into())
        );
        assert_eq!(
            python_module("pkg.sub.mod", "pkg/sub/mod.py", "."),
            Some("pkg.sub".into())
        );
        assert_eq!(
            python_module("m", "m.py", "os.path"),
            Some("os.path".into())
        );
    }

    #[test]
    fn rust_paths() {
        assert_eq!(rust_module("net.tcp", "crate::util"), Some("util".into()));
        assert_eq!(
            rust_module("tokio.src.net", "crate::io"),
            Some("tokio.src.io".into())
        );
        assert_eq!(rust_module("a.b", "super::c"), Some("a.c".into()));
        assert_eq!(rust_module("a.b", "std::fmt"), None);
    }

    #[test]
    fn imports_bind_names() {
        // The names the cases below bind.
        let expected = |style: ImportStyle, i: &Import| match (style, &*i.module) {
            (ImportStyle::Python, _) => Some("os"),
            (ImportStyle::Go, _) if i.alias.is_some() => None,
            (ImportStyle::Go, _) => Some("m"),
            (ImportStyle::Rust, "crate::util") => Some("assist"),
            (ImportStyle::JavaScript, _) => Some("X"),
            _ => None,
        };
        let imp = |module: &str, name: &str, alias: Option<&str>| Import {
            module: module.into(),
            name: name.into(),
            alias: alias.map(Into::into),
            node: 0,
            line: 1,
        };
        let cases = [
            (ImportStyle::Python, imp("os.path", "", None)),
            (ImportStyle::Go, imp("example.com/m/v2", "", None)),
            (ImportStyle::Go, imp("net/http", "", Some("."))),
            (
                ImportStyle::Rust,
                imp("crate::util", "helper", Some("assist")),
            ),
            (ImportStyle::Rust, imp("std::io", "*", None)),
            (ImportStyle::JavaScript, imp("./x", "default", Some("X"))),
            (ImportStyle::Namespace, imp("java.util.List", "", None)),
        ];
        for (style, i) in &cases {
            for name in [
                "os", "m", "v2", "http", ".", "assist", "helper", "X", "List", "*",
            ] {
                assert_eq!(
                    binds(*style, i, name),
                    expected(*style, i) == Some(name),
                    "{name} {:?}",
                    (&i.module, &i.name, &i.alias)
                );
            }
        }
    }

    #[test]
    fn types_reduce_to_names() {
        assert_eq!(clean_type("Optional[\"Session\"]"), Some("Session"));
        assert_eq!(clean_type("*http.Server"), Some("http.Server"));
        assert_eq!(clean_type("List<Foo>"), Some("List"));
        assert_eq!(clean_type("&mut Self"), Some("Self"));
        assert_eq!(clean_type("Foo | None"), Some("Foo"));
        assert_eq!(clean_type("None"), None);
    }
}
