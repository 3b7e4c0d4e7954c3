//! The resolution chain's Go and Rust parts, called from `lookup`: Go functions written once
//! per platform, call chains typed by declared results (`w.Header().Set`,
//! `Conn::open()?.send`), and Rust's module paths (`crate::`, `super::`, child modules, the
//! repository's crates by name), re-exports and `macro_rules!` macros.

use super::*;
use crate::resolve::rules::skip_group;
use crate::resolve::symbols::hash;

/// Go and Rust: call chains and per-platform variants.
impl Resolver<'_> {
    /// Whether `defs` are one Go function written once per platform or build tag (the
    /// same qualified name in several files): one target, not an ambiguity.
    pub(super) fn go_variants(&self, defs: &[Idx]) -> bool {
        let g = self.g;
        let first = g.node(defs[0]);
        g.file(first.file).profile.imports == ImportStyle::Go
            && defs.iter().all(|&d| g.node(d).qn == first.qn)
    }

    /// Of a Go function's per-platform variants, the one in the caller's file when there is
    /// one (`c.regs()` in `signal_linux_arm.go`), else those whose file names share the
    /// caller's operating system and then its architecture (`_linux`, `_arm64`, `_bsd`), else
    /// all of them.
    pub(super) fn own_variant(&self, scope: Idx, step: Step) -> Step {
        let Value::Defs(defs) = &step.value else {
            return step;
        };
        if defs.len() < 2 || !self.go_variants(defs) {
            return step;
        }
        let g = self.g;
        let file = g.node(scope).file;
        let mut own: Vec<Idx> = defs
            .iter()
            .copied()
            .filter(|&d| g.node(d).file == file)
            .collect();
        if own.is_empty() {
            let wanted = GoPlatforms::of(&g.file(file).path);
            let score = |d: Idx| wanted.shared(&GoPlatforms::of(&g.file(g.node(d).file).path));
            let best = defs.iter().map(|&d| score(d)).max().unwrap_or_default();
            if best > (false, false) {
                own = defs.iter().copied().filter(|&d| score(d) == best).collect();
            }
        }
        if own.is_empty() {
            return step;
        }
        Step {
            value: Value::Defs(own),
            ..step
        }
    }

    /// A Go package-level variable `name` of `module` (declared in any of its files), as
    /// the value of its declared or inferred type.
    pub(super) fn go_package_var(&self, module: &str, name: &str, depth: u8) -> Option<Step> {
        let g = self.g;
        if depth > MAX_DEPTH || !g.go_vars.contains(&hash(name)) {
            return None;
        }
        for f in g.module_files(module) {
            let file = g.file(f);
            if file.profile.imports != ImportStyle::Go {
                return None;
            }
            let Some(node) = file.node else {
                continue;
            };
            if let Some(var) = g.fields(node, name).first() {
                let step = self.type_of(var.node, &var.type_text, depth + 1);
                return Some(match step.value {
                    Value::Instance(_) => step,
                    Value::External => Step::new(Value::External, 1.0, "external"),
                    _ => Step::new(Value::Local, 1.0, "local"),
                });
            }
        }
        None
    }

    /// A call whose receiver is a call chain: `time.Now().Add`, `conn.peer()?.send`.
    /// `None` when the text is no chain of names and calls.
    pub(super) fn resolve_chain(&self, scope: Idx, text: &str) -> Option<Outcome> {
        let rust = self.profile_of(scope).imports == ImportStyle::Rust;
        let toks = chain_tokens(text, rust)?;
        let (Tok::Name(last, _), receiver) = toks.split_last()? else {
            return None;
        };
        let step = match self.chain_value(scope, receiver, 0)? {
            Ok(step) => step,
            Err(miss) => return Some(self.unresolved(miss, last)),
        };
        Some(match self.member(&step, last, 0) {
            Ok(next) => self.finish(scope, step.then(next), last),
            Err(miss) => self.unresolved(miss, last),
        })
    }

    /// What a call chain written as a type (`a.b().c()`) holds: an instance, something
    /// external, or a local of unknown type.
    pub(super) fn chain_type(&self, scope: Idx, text: &str, depth: u8) -> Step {
        let unknown = Step::new(Value::Local, 1.0, "local");
        let rust = self.profile_of(scope).imports == ImportStyle::Rust;
        let Some(toks) = chain_tokens(text, rust) else {
            return unknown;
        };
        match self.chain_value(scope, &toks, depth + 1) {
            Some(Ok(step)) => match step.value {
                Value::Instance(_) => Step::new(step.value, step.confidence, "inferred_type"),
                Value::External => Step::new(Value::External, 1.0, "external"),
                _ => unknown,
            },
            _ => unknown,
        }
    }

    /// Evaluates names and calls left to right: a call of a function holds its declared
    /// result (Rust `?`, `.unwrap()` and `.expect(..)` take it out of a `Result` or
    /// `Option`; `.await` is the value itself), a call of a type is a conversion or a tuple
    /// struct. `None` when the chain does not start with a name.
    fn chain_value(&self, scope: Idx, toks: &[Tok], depth: u8) -> Option<Result<Step, Miss>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let rust = self.profile_of(scope).imports == ImportStyle::Rust;
        let Some(Tok::Name(first, _)) = toks.first() else {
            return None;
        };
        // Rust paths from `crate`, `super` or `self::`.
        let lead = toks
            .iter()
            .enumerate()
            .take_while(|&(i, t)| match t {
                Tok::Name("crate", _) => rust && i == 0,
                Tok::Name("super", _) => rust,
                Tok::Name("self", _) => {
                    rust && i == 0 && matches!(toks.get(1), Some(Tok::Name(_, true)))
                }
                _ => false,
            })
            .count();
        let mut step = if lead > 0 {
            let path: Vec<&str> = toks[..lead]
                .iter()
                .map(|t| match t {
                    Tok::Name(n, _) => *n,
                    _ => "",
                })
                .collect();
            let module = rust_module(&self.rust_base_module(scope), &path.join("::"))?;
            Step::new(Value::Module(module), IMPORT, "path")
        } else {
            match self.bare(scope, first, depth) {
                Ok(step) => step,
                Err(miss) => return Some(Err(miss)),
            }
        };
        // The declaring function and result type of the last call, for `?` and `.unwrap()`.
        let mut last_call: Option<(Idx, &str)> = None;
        let mut i = lead.max(1);
        while i < toks.len() {
            match toks[i] {
                Tok::Name("await", _) if rust => {}
                Tok::Name("unwrap" | "expect", _)
                    if rust && matches!(toks.get(i + 1), Some(Tok::Call)) =>
                {
                    step = self.unwrapped(step, last_call.take(), depth);
                    i += 1;
                }
                Tok::Try => step = self.unwrapped(step, last_call.take(), depth),
                Tok::Name(name, _) => {
                    last_call = None;
                    step = match self.member(&step, name, depth) {
                        Ok(next) => step.then(next),
                        Err(miss) => return Some(Err(miss)),
                    };
                }
                Tok::Call => {
                    last_call = None;
                    let value = match &step.value {
                        Value::Defs(defs) if self.g.node(defs[0]).kind.is_type_like() => {
                            Value::Instance(defs[0])
                        }
                        Value::Defs(defs) => match self.g.returns.get(&defs[0]) {
                            Some(ret) => {
                                last_call = Some((defs[0], &**ret));
                                let held = self.type_of(defs[0], ret, depth + 1);
                                match held.value {
                                    Value::Instance(_) | Value::External => held.value,
                                    _ => Value::Unknown,
                                }
                            }
                            None => Value::Unknown,
                        },
                        Value::External => Value::External,
                        _ => Value::Unknown,
                    };
                    step = step.then(Step::new(value, INFERRED, "inferred_type"));
                }
                Tok::Index => step = step.then(Step::new(Value::Unknown, 1.0, "")),
                // Go `x.(*T)`: the asserted type.
                Tok::Assert(t) => {
                    last_call = None;
                    let held = self.type_of(scope, t, depth + 1);
                    let value = match held.value {
                        Value::Instance(_) | Value::External => held.value,
                        _ => Value::Unknown,
                    };
                    step = step.then(Step::new(value, TYPED, "type_annotation"));
                }
            }
            i += 1;
        }
        Some(Ok(step))
    }

    /// The value inside the `Result` or `Option` the last call returned.
    fn unwrapped(&self, step: Step, last_call: Option<(Idx, &str)>, depth: u8) -> Step {
        let inner = last_call.and_then(|(def, ret)| Some((def, rust_unwrap(ret)?)));
        let value = match (inner, &step.value) {
            (Some((def, inner)), _) => match self.type_of(def, inner, depth + 1).value {
                v @ (Value::Instance(_) | Value::External) => v,
                _ => Value::Unknown,
            },
            (None, Value::External) => Value::External,
            _ => Value::Unknown,
        };
        step.then(Step::new(value, INFERRED, "inferred_type"))
    }
}

/// Operating systems in Go file names (`_linux`), with the conventional groups `_bsd` and
/// `_unix` standing for theirs. Sorted for binary search.
const GO_OSES: &[&str] = &[
    "aix",
    "android",
    "bsd",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "js",
    "linux",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "unix",
    "wasip1",
    "windows",
    "zos",
];
const GO_BSD: &[&str] = &["darwin", "dragonfly", "freebsd", "netbsd", "openbsd"];
const GO_UNIX: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "linux",
    "netbsd",
    "openbsd",
    "solaris",
];

/// Architectures in Go file names (`_arm64`, and the conventional `_mips64x`). Sorted.
const GO_ARCHES: &[&str] = &[
    "386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le", "mips64x", "mipsle",
    "mipsx", "ppc64", "ppc64le", "ppc64x", "riscv64", "s390x", "wasm",
];

/// The operating systems and architectures a Go file name is built for
/// (`signal_linux_mips64x.go` -> linux, mips64x; `exec_bsd.go` -> the BSDs).
#[derive(Debug, Default, PartialEq)]
struct GoPlatforms<'a> {
    oses: Vec<&'a str>,
    arches: Vec<&'a str>,
}

impl<'a> GoPlatforms<'a> {
    fn of(path: &'a str) -> Self {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem = name.strip_suffix(".go").unwrap_or(name);
        let stem = stem.strip_suffix("_test").unwrap_or(stem);
        let mut p = GoPlatforms::default();
        // The first part is the file's own name, never a platform.
        for part in stem.split('_').skip(1) {
            if GO_ARCHES.binary_search(&part).is_ok() {
                p.arches.push(part);
            } else if GO_OSES.binary_search(&part).is_ok() {
                match part {
                    "bsd" => p.oses.extend(GO_BSD),
                    "unix" => p.oses.extend(GO_UNIX),
                    os => p.oses.push(os),
                }
            }
        }
        p
    }

    /// Whether `other` is built for one of these operating systems, and for one of these
    /// architectures.
    fn shared(&self, other: &GoPlatforms) -> (bool, bool) {
        (
            other.oses.iter().any(|o| self.oses.contains(o)),
            other.arches.iter().any(|a| self.arches.contains(a)),
        )
    }
}

/// A piece of a call chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    /// A name; true when written after `::`.
    Name(&'a str, bool),
    /// `(...)`.
    Call,
    /// `[...]`.
    Index,
    /// Rust's `?`.
    Try,
    /// Go's type assertion `.(T)`, with the type as written.
    Assert(&'a str),
}

/// `w.Header().Set` -> [w, Header, Call, Set]; `Foo::<T>::new()?.x` -> [Foo, new, Call, Try,
/// x]; a literal `Point{1, 2}.In` calls its type; Go's `w.(Flusher).Flush` asserts a type.
/// `None` for anything else (operators, literals, closures).
fn chain_tokens(text: &str, rust: bool) -> Option<Vec<Tok<'_>>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut after_path = false;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'.' if !rust && b.get(i + 1) == Some(&b'(') => {
                let end = skip_group(b, i + 1)?;
                out.push(Tok::Assert(text[i + 2..end - 1].trim()));
                i = end;
            }
            b'.' => {
                after_path = false;
                i += 1;
            }
            b'{' => {
                i = skip_group(b, i)?;
                out.push(Tok::Call);
            }
            b':' if rust && b.get(i + 1) == Some(&b':') => {
                after_path = true;
                i += 2;
            }
            b'<' if rust => i = skip_group(b, i)?,
            b'(' => {
                i = skip_group(b, i)?;
                out.push(Tok::Call);
            }
            b'[' => {
                i = skip_group(b, i)?;
                out.push(Tok::Index);
            }
            b'?' if rust => {
                out.push(Tok::Try);
                i += 1;
            }
            c if c == b'_' || c.is_ascii_alphanumeric() => {
                let start = i;
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                out.push(Tok::Name(&text[start..i], after_path));
                after_path = false;
            }
            _ => return None,
        }
    }
    matches!(out.first(), Some(Tok::Name(..))).then_some(out)
}

/// Rust paths and macros.
impl Resolver<'_> {
    /// The module a Rust path is written in: the innermost inline `mod` around `scope`, or
    /// the file's module.
    pub(super) fn rust_base_module(&self, scope: Idx) -> String {
        let g = self.g;
        let mut at = Some(scope);
        while let Some(a) = at {
            let n = g.node(a);
            match n.kind {
                NodeKind::Module => return n.qn.to_string(),
                NodeKind::File => break,
                _ => at = n.parent,
            }
        }
        g.file(g.node(scope).file).module.to_string()
    }

    /// `crate::a::f`, `super::super::f`, `self::f`: the module the leading keywords name and
    /// how many segments they take.
    pub(super) fn rust_root(&self, scope: Idx, text: &str) -> Option<(String, usize)> {
        let text = text.trim();
        if !["crate::", "super::", "self::"]
            .iter()
            .any(|p| text.starts_with(p))
        {
            return None;
        }
        let parts: Vec<&str> = text.split("::").collect();
        let used = parts
            .iter()
            .enumerate()
            .take_while(|&(i, p)| match *p {
                "crate" => i == 0,
                "super" => true,
                "self" => i == 0 && parts.len() > 1,
                _ => false,
            })
            .count();
        if used == 0 || used == parts.len() {
            return None;
        }
        let module = rust_module(&self.rust_base_module(scope), &parts[..used].join("::"))?;
        Some((module, used))
    }

    /// A bare name that is a child module of the module at `scope`, or the name of a crate
    /// of the repository: that module's name.
    pub(super) fn rust_named_module(&self, scope: Idx, name: &str) -> Option<String> {
        let child = join(&self.rust_base_module(scope), name);
        if self.g.module_exists(&child) {
            return Some(child);
        }
        self.g
            .rust_crates
            .iter()
            .find(|(crate_name, _)| crate_name == name)
            .map(|(_, root)| root.clone())
    }

    /// The definition that the parent of module `m` re-exports under `m`'s last name.
    pub(super) fn rust_reexport(&self, m: &str) -> Option<Step> {
        let g = self.g;
        let (parent, name) = m.rsplit_once('.').unwrap_or(("", m));
        for f in g.module_files(parent) {
            let bindings = self.bindings(f);
            for &imp in bindings.get(name).into_iter().flatten() {
                if g.node(imp.node).kind == NodeKind::File {
                    if let Ok(
                        step @ Step {
                            value: Value::Defs(_),
                            ..
                        },
                    ) = self.import_target(f, imp, 1, true)
                    {
                        return Some(step);
                    }
                }
            }
        }
        None
    }

    /// `name!`: a standard macro, one imported by `use`, or a `macro_rules!` of the
    /// repository (exported macros live at their crate's root whatever their module, so a
    /// path prefix only tells whether the crate is this one).
    pub(super) fn rust_macro(&self, scope: Idx, segments: &[&str]) -> Outcome {
        let g = self.g;
        let last = segments.last().copied().unwrap_or("");
        let name = last.trim_end_matches('!');
        let p = self.profile_of(scope);
        let file = g.node(scope).file;
        let external = || self.unresolved(Miss::External, name);
        match segments {
            [_] if p.is_builtin(last) => return external(),
            [_] => {
                if let Some(step) = self.imported(file, scope, name, 0) {
                    return match step {
                        Ok(step) => self.finish(scope, step, name),
                        Err(_) => external(),
                    };
                }
            }
            [first, ..] if matches!(*first, "crate" | "self" | "super") => {}
            [first, ..] => match self.bare(scope, first, 0) {
                Ok(Step {
                    value: Value::Module(_) | Value::Defs(_),
                    ..
                }) => {}
                _ => return external(),
            },
            [] => return external(),
        }
        let defs: Vec<Idx> = g.by_name(name).filter(|i| g.macros.contains(i)).collect();
        let here: Vec<Idx> = defs
            .iter()
            .copied()
            .filter(|&d| g.node(d).file == file)
            .collect();
        let (found, confidence, strategy) = match (here.is_empty(), defs.len()) {
            (false, _) => (here, SAME_SCOPE, "same_file"),
            (true, 0) => return external(),
            (true, 1) => (defs, INFERRED, "macro"),
            (true, _) => return self.spread(defs, name, false),
        };
        Outcome::all(found, confidence, strategy)
    }
}

/// Rust: references, smart pointers and `Pin` are used as what they point to:
/// `&'a Arc<Mutex<T>>` -> `Mutex<T>`.
pub(super) fn rust_deref(text: &str) -> &str {
    let mut t = text.trim();
    for _ in 0..8 {
        t = t.trim_start_matches('&').trim_start();
        if t.starts_with('\'') {
            t = t.split_once(' ').map_or("", |(_, rest)| rest).trim_start();
        }
        for prefix in ["mut ", "dyn "] {
            t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
        }
        let Some(open) = t.find('<') else {
            break;
        };
        let head = t[..open].rsplit("::").next().unwrap_or("");
        if matches!(head, "Arc" | "Box" | "Pin" | "Rc") && t.ends_with('>') {
            t = &t[open + 1..t.len() - 1];
        } else {
            break;
        }
    }
    t
}

/// Rust: what `?` or `.unwrap()` take out of a result type: `io::Result<File>` -> `File`,
/// `Option<Self>` -> `Self`; `None` for other types.
pub(super) fn rust_unwrap(ret: &str) -> Option<&str> {
    let ret = ret.trim();
    let open = ret.find('<')?;
    let head = ret[..open].rsplit("::").next().unwrap_or("");
    if !matches!(head, "Result" | "Option") || !ret.ends_with('>') {
        return None;
    }
    let inner = &ret[open + 1..ret.len() - 1];
    let mut depth = 0i32;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => return Some(inner[..i].trim()),
            _ => {}
        }
    }
    Some(inner.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_chains_split_into_names_and_calls() {
        use Tok::*;
        assert_eq!(
            chain_tokens("w.Header().Set", false),
            Some(vec![
                Name("w", false),
                Name("Header", false),
                Call,
                Name("Set", false)
            ])
        );
        assert_eq!(
            chain_tokens("Foo::<T>::open(a, b)?.items[0]", true),
            Some(vec![
                Name("Foo", false),
                Name("open", true),
                Call,
                Try,
                Name("items", false),
                Index
            ])
        );
        assert_eq!(
            chain_tokens("w.(http.Flusher).Flush", false),
            Some(vec![
                Name("w", false),
                Assert("http.Flusher"),
                Name("Flush", false)
            ])
        );
        assert_eq!(
            chain_tokens("Point{x, y}.In", false),
            Some(vec![Name("Point", false), Call, Name("In", false)])
        );
        assert_eq!(chain_tokens("(*T)(x).m", false), None);
        assert_eq!(chain_tokens("a + b", false), None);
    }

    #[test]
    fn rust_types_deref_and_unwrap() {
        assert_eq!(rust_deref("&'a Arc<Mutex<Inner>>"), "Mutex<Inner>");
        assert_eq!(rust_deref("Pin<&mut Box<dyn Future>>"), "Future");
        assert_eq!(rust_deref("&mut Self"), "Self");
        assert_eq!(rust_unwrap("io::Result<File>"), Some("File"));
        assert_eq!(rust_unwrap("Result<Conn<T>, Error>"), Some("Conn<T>"));
        assert_eq!(rust_unwrap("Option<Self>"), Some("Self"));
        assert_eq!(rust_unwrap("Vec<u8>"), None);
    }

    #[test]
    fn go_file_names_tell_platforms() {
        let p = GoPlatforms::of("runtime/signal_linux_mips64x.go");
        assert_eq!((p.oses, p.arches), (vec!["linux"], vec!["mips64x"]));
        assert_eq!(
            GoPlatforms::of("os/exec_windows_test.go").oses,
            vec!["windows"]
        );
        // The first part is the file's own name: `linux.go` is no platform file.
        assert_eq!(GoPlatforms::of("x/linux.go"), GoPlatforms::default());
        // `_bsd` and `_unix` files are written for groups of systems.
        let bsd = GoPlatforms::of("syscall/syscall_bsd.go");
        let linux_riscv = GoPlatforms::of("syscall/syscall_linux_riscv64.go");
        let freebsd = GoPlatforms::of("syscall/types_freebsd.go");
        assert_eq!(bsd.shared(&linux_riscv), (false, false));
        assert_eq!(bsd.shared(&freebsd), (true, false));
        let freebsd_amd64 = GoPlatforms::of("syscall/syscall_freebsd_amd64.go");
        // The system counts before the architecture.
        assert!(
            freebsd_amd64.shared(&freebsd)
                > freebsd_amd64.shared(&GoPlatforms::of("x_linux_amd64.go"))
        );
        for list in [GO_OSES, GO_ARCHES] {
            assert!(list.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
