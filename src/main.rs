fn main() {
    let path = std::env::args().nth(1).unwrap();
    let src = std::fs::read_to_string(&path).unwrap();
    let lang = codebase_indexer::lang::for_path(&path).unwrap();
    let x = codebase_indexer::extract::extract(lang, &path, &src);
    for n in &x.nodes { println!("{:?} {} {} L{}-{} sig={:?} doc={:?}", n.kind, n.qualified_name, n.parent.unwrap_or(99), n.start_line, n.end_line, n.signature, n.docstring); }
    for r in &x.refs { println!("  ref {} {:?} {} {:?} {:?} L{}", r.node, r.kind, r.name, r.module, r.alias, r.line); }
}
