//! The layering ARCHITECTURE.md describes, checked on the source: which top-level module may
//! use which. A `crate::x` path in a module's code (comments aside) is a dependency on `x`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules: `src/x.rs` and `src/x/`, the binary and the crate root aside.
fn modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "main" && m != "lib")
        .collect()
}

/// A line of code without its comment and the contents of its string literals (fixtures of
/// the Rust extractor write `crate::` paths of their own).
fn code_of(line: &str) -> String {
    let mut code = String::with_capacity(line.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '/' if chars.peek() == Some(&'/') => break,
            _ => code.push(c),
        }
    }
    code
}

/// Top-level module -> the modules it uses.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            if top == "main" || top == "lib" {
                continue;
            }
            let used = deps.entry(top.clone()).or_default();
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                // Unit tests (at the end of a file) may build fixtures with any stage.
                if line.trim() == "#[cfg(test)]" {
                    break;
                }
                let code = code_of(line);
                for (i, _) in code.match_indices("crate::") {
                    let name: String = code[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if known.contains(&name) && name != top {
                        used.insert(name);
                    }
                }
            }
        }
    }
    deps
}

#[test]
fn top_level_modules_form_no_cycle() {
    let deps = dependencies();
    // Kahn's algorithm: whatever cannot be ordered sits on a cycle.
    let mut remaining = deps.clone();
    loop {
        let free: Vec<String> = remaining
            .iter()
            .filter(|(_, used)| used.iter().all(|u| !remaining.contains_key(u)))
            .map(|(m, _)| m.clone())
            .collect();
        if free.is_empty() {
            break;
        }
        for m in free {
            remaining.remove(&m);
        }
    }
    assert!(
        remaining.is_empty(),
        "modules on an import cycle: {remaining:#?}"
    );
}

#[test]
fn each_stage_uses_only_the_stages_below_it() {
    let deps = dependencies();
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("error", &[][..]),
        ("ids", &[]),
        ("model", &[]),
        ("text", &[]),
        ("store", &["error", "ids", "model", "text"]),
        // Python's extractor asks resolution's table of builtins.
        ("resolve", &["error", "ids", "model", "store"]),
        ("lang", &["model", "resolve"]),
        (
            "index",
            &["error", "ids", "lang", "model", "resolve", "store"],
        ),
        ("query", &["error", "lang", "model", "store", "text"]),
        (
            "context",
            &["error", "ids", "lang", "model", "query", "store", "text"],
        ),
        ("eval", &["context", "error", "query", "store", "text"]),
        ("hook", &["error", "facade", "index", "store"]),
        // Restores a whole-repository pack's files: the pack's types, atomic writes.
        ("unpack", &["context", "error", "store"]),
        // The MCP server: the facade's questions, the renderers' option types.
        ("serve", &["context", "error", "facade", "query", "store"]),
        (
            "facade",
            &[
                "context", "error", "eval", "index", "model", "query", "store",
            ],
        ),
    ]);
    for (module, used) in &deps {
        let Some(ok) = allowed.get(module.as_str()) else {
            panic!("{module} is a new top-level module: give it a place in the layering");
        };
        for u in used {
            assert!(
                ok.contains(&u.as_str()),
                "{module} uses {u}, which is not below it (allowed: {ok:?})"
            );
        }
    }
}

#[test]
fn renderers_never_write_and_extraction_reads_no_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let read = |dir: &str| -> Vec<(String, String)> {
        std::fs::read_dir(src.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .map(|p| {
                (
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect()
    };
    for (path, text) in read("context").into_iter().chain(read("query")) {
        for writer in [
            "Mode::ReadWrite",
            "Mode::Bulk",
            "Writer",
            "staging",
            "set_meta",
        ] {
            assert!(!text.contains(writer), "{path} uses {writer}");
        }
    }
    for (path, text) in read("lang") {
        for io in ["std::fs", "File::open", "read_to_string"] {
            assert!(!text.contains(io), "{path} uses {io}");
        }
    }
}
