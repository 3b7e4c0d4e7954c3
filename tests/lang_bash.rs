//! Bash extraction: both function syntaxes, nested functions, read-only constants, comment
//! docs, command calls, `source`/`.` imports and recovery from syntax errors.

use codebase_indexer::extract::extract;
use codebase_indexer::lang::for_path;
use codebase_indexer::model::{ExtractedNode, FileExtract, NodeKind, RefKind};

fn run(path: &str, src: &str) -> FileExtract {
    extract(for_path(path).expect("language for path"), path, src)
}

/// (kind, qualified name, parent index, start line, end line) of every definition.
fn defs(x: &FileExtract) -> Vec<(NodeKind, &str, usize, u32, u32)> {
    x.nodes[1..]
        .iter()
        .map(|n| {
            (
                n.kind,
                n.qualified_name.as_str(),
                n.parent.expect("definitions have a parent"),
                n.start_line,
                n.end_line,
            )
        })
        .collect()
}

/// (owner qualified name, kind, name, module, line) of every reference.
fn refs(x: &FileExtract) -> Vec<(&str, RefKind, &str, Option<&str>, u32)> {
    x.refs
        .iter()
        .map(|r| {
            assert_eq!(r.alias, None);
            (
                x.nodes[r.node].qualified_name.as_str(),
                r.kind,
                r.name.as_str(),
                r.module.as_deref(),
                r.line,
            )
        })
        .collect()
}

fn node<'a>(x: &'a FileExtract, qualified_name: &str) -> &'a ExtractedNode {
    x.nodes
        .iter()
        .find(|n| n.qualified_name == qualified_name)
        .unwrap_or_else(|| panic!("no definition {qualified_name}"))
}

const BUILD: &str = r#"#!/usr/bin/env bash
set -euo pipefail
source ./lib/common.sh
. "$HOME/env.sh"
readonly MAX_RETRIES=3
declare -r TIMEOUT=10
declare -x EXPORTED=1
VERSION=1.0

# Builds the project.
# Usage: build <target>
build() {
  local target="$1"
  echo "building $target"
  make -C "$target" all | tee log.txt
  if [ -f x ]; then rm -f x; fi
  result=$(compute 1)
  FOO=bar env_cmd arg
}

function deploy {
  nested() { true; }
  "$CMD" arg
  ./script.sh
}

function with_parens() ( exit 0 )
build all; deploy
"#;

#[test]
fn bash_definitions_signatures_and_docs() {
    let x = run("scripts/build.sh", BUILD);
    assert!(!x.has_errors);
    use NodeKind::*;
    assert_eq!(
        defs(&x),
        vec![
            (Constant, "scripts.build.MAX_RETRIES", 0, 5, 5),
            (Constant, "scripts.build.TIMEOUT", 0, 6, 6),
            (Function, "scripts.build.build", 0, 12, 19),
            (Function, "scripts.build.deploy", 0, 21, 25),
            (Function, "scripts.build.deploy.nested", 4, 22, 22),
            (Function, "scripts.build.with_parens", 0, 27, 27),
        ]
    );
    let sig = |q: &str| node(&x, q).signature.clone().unwrap_or_default();
    assert_eq!(sig("scripts.build.MAX_RETRIES"), "readonly MAX_RETRIES=3");
    assert_eq!(sig("scripts.build.TIMEOUT"), "declare -r TIMEOUT=10");
    assert_eq!(sig("scripts.build.build"), "build()");
    assert_eq!(sig("scripts.build.deploy"), "function deploy");
    assert_eq!(sig("scripts.build.with_parens"), "function with_parens()");
    assert_eq!(
        node(&x, "scripts.build.build").docstring.as_deref(),
        Some("Builds the project.\nUsage: build <target>")
    );
    assert_eq!(node(&x, "scripts.build.deploy").docstring, None);
    // Exported and plain variables, and locals, are not constants.
    for absent in ["EXPORTED", "VERSION", "target", "result", "FOO"] {
        assert!(
            x.nodes.iter().all(|n| n.name != absent),
            "{absent} must not be a definition"
        );
    }
}

#[test]
fn bash_references() {
    let x = run("scripts/build.sh", BUILD);
    use RefKind::*;
    let file = "scripts/build.sh";
    let build = "scripts.build.build";
    assert_eq!(
        refs(&x),
        vec![
            (file, Call, "set", None, 2),
            (file, Import, "", Some("./lib/common.sh"), 3),
            (file, Import, "", Some("$HOME/env.sh"), 4),
            (build, Call, "echo", None, 14),
            (build, Call, "make", None, 15),
            (build, Call, "tee", None, 15),
            (build, Call, "rm", None, 16),
            (build, Call, "compute", None, 17),
            (build, Call, "env_cmd", None, 18),
            ("scripts.build.deploy.nested", Call, "true", None, 22),
            // `"$CMD" arg` names no command statically.
            ("scripts.build.deploy", Call, "./script.sh", None, 24),
            ("scripts.build.with_parens", Call, "exit", None, 27),
            (file, Call, "build", None, 28),
            (file, Call, "deploy", None, 28),
        ]
    );
}

#[test]
fn bash_syntax_error_keeps_surrounding_definitions() {
    let src = "before() { echo a; }\n\nif [ -f x ]; then\n  echo (\n\nafter() { before; }\n";
    let x = run("tools/run.bash", src);
    assert!(x.has_errors);
    let names: Vec<&str> = x.nodes[1..]
        .iter()
        .map(|n| n.qualified_name.as_str())
        .collect();
    assert_eq!(names, ["tools.run.before", "tools.run.after"]);
    assert_eq!(node(&x, "tools.run.after").start_line, 6);
    assert_eq!(
        refs(&x),
        vec![
            ("tools.run.before", RefKind::Call, "echo", None, 1),
            ("tools.run.after", RefKind::Call, "before", None, 6),
        ]
    );
}
