//! Extraction throughput on a real corpus, split into parse-only and full extraction, single
//! thread. `CORPUS=~/.cache/indexer-corpora/django cargo bench --bench extract`
//! (fetch corpora with ../shared/corpora/fetch NAME).

use std::time::Instant;

/// The grammar of a file for the parse-only baseline: tree-sitter alone, as a peer measured
/// beside the indexer's extraction. Files of other languages are left out of both.
fn grammar(path: &str) -> Option<tree_sitter::Language> {
    let ext = path.rsplit_once('.')?.1;
    Some(match ext {
        "py" | "pyi" => tree_sitter_python::LANGUAGE.into(),
        "rs" => tree_sitter_rust::LANGUAGE.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "js" | "jsx" | "mjs" | "cjs" => tree_sitter_javascript::LANGUAGE.into(),
        "java" => tree_sitter_java::LANGUAGE.into(),
        "c" | "h" => tree_sitter_c::LANGUAGE.into(),
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => tree_sitter_cpp::LANGUAGE.into(),
        "rb" => tree_sitter_ruby::LANGUAGE.into(),
        "php" => tree_sitter_php::LANGUAGE_PHP.into(),
        "lua" => tree_sitter_lua::LANGUAGE.into(),
        _ => return None,
    })
}

fn main() {
    // As the `indexer` binary does: tree-sitter allocates through mimalloc.
    // SAFETY: first thing in `main`, before any tree-sitter object exists.
    unsafe {
        tree_sitter::set_allocator(
            Some(libmimalloc_sys::mi_malloc),
            Some(libmimalloc_sys::mi_calloc),
            Some(libmimalloc_sys::mi_realloc),
            Some(libmimalloc_sys::mi_free),
        );
    }
    let Some(root) = std::env::var_os("CORPUS") else {
        eprintln!("set CORPUS to a source tree (see ../shared/corpora/fetch --list)");
        return;
    };
    let root = std::path::PathBuf::from(root);
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(&root).build().flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        if let (Some(l), Ok(src)) = (grammar(&rel), std::fs::read_to_string(path)) {
            if src.len() <= 1 << 20 {
                files.push((l, rel, src));
            }
        }
    }
    let bytes: usize = files.iter().map(|f| f.2.len()).sum();
    println!("{} files, {:.1} MB", files.len(), bytes as f64 / 1e6);

    let mut parsers: Vec<(tree_sitter::Language, tree_sitter::Parser)> = Vec::new();
    let t = Instant::now();
    let mut slowest: Vec<(f64, &str, usize)> = Vec::new();
    for (l, rel, src) in &files {
        let i = match parsers.iter().position(|(n, _)| n == l) {
            Some(i) => i,
            None => {
                let mut p = tree_sitter::Parser::new();
                p.set_language(l).unwrap();
                parsers.push((l.clone(), p));
                parsers.len() - 1
            }
        };
        let one = Instant::now();
        std::hint::black_box(parsers[i].1.parse(src, None));
        slowest.push((one.elapsed().as_secs_f64(), rel, src.len()));
    }
    report("parse only", t.elapsed(), bytes);
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (secs, rel, len) in slowest.iter().take(5) {
        println!("  slow: {secs:.3} s  {:.0} KB  {rel}", *len as f64 / 1e3);
    }

    let t = Instant::now();
    let mut visited = 0usize;
    let mut named = 0usize;
    for (l, _, src) in &files {
        let i = parsers.iter().position(|(n, _)| n == l).unwrap();
        let tree = parsers[i].1.parse(src, None).unwrap();
        let mut c = tree.walk();
        'outer: loop {
            let n = c.node();
            visited += 1;
            if n.is_named() {
                named += std::hint::black_box(n.kind_id()) as usize & 1;
            }
            if c.goto_first_child() {
                continue;
            }
            loop {
                if c.goto_next_sibling() {
                    continue 'outer;
                }
                if !c.goto_parent() {
                    break 'outer;
                }
            }
        }
    }
    report("parse + bare walk", t.elapsed(), bytes);
    println!("{visited} tree nodes ({named})");

    let t = Instant::now();
    let mut nodes = 0;
    for (_, rel, src) in &files {
        nodes += codebase_indexer::extract_file(rel, src).map_or(0, |x| x.nodes.len());
    }
    report("parse + extract", t.elapsed(), bytes);
    println!("{nodes} nodes");
}

fn report(what: &str, d: std::time::Duration, bytes: usize) {
    println!(
        "{what:<16} {:>7.2} s  {:>6.1} MB/s",
        d.as_secs_f64(),
        bytes as f64 / 1e6 / d.as_secs_f64()
    );
}
