//! Bash extraction: both function syntaxes, nested functions, read-only constants, comment
//! docs, command calls, `source`/`.` imports and recovery from syntax errors.

use crate::common::extract::*;
use codebase_indexer::{NodeKind, RefKind};

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
            (file, Call, "set", None, None, 2),
            (file, Import, "", Some("./lib/common.sh"), None, 3),
            (file, Import, "", Some("$HOME/env.sh"), None, 4),
            (build, Call, "echo", None, None, 14),
            (build, Call, "make", None, None, 15),
            (build, Call, "tee", None, None, 15),
            (build, Call, "rm", None, None, 16),
            (build, Call, "compute", None, None, 17),
            (build, Call, "env_cmd", None, None, 18),
            ("scripts.build.deploy.nested", Call, "true", None, None, 22),
            // `"$CMD" arg` names no command statically.
            ("scripts.build.deploy", Call, "./script.sh", None, None, 24),
            ("scripts.build.with_parens", Call, "exit", None, None, 27),
            (file, Call, "build", None, None, 28),
            (file, Call, "deploy", None, None, 28),
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
            ("tools.run.before", RefKind::Call, "echo", None, None, 1),
            ("tools.run.after", RefKind::Call, "before", None, None, 6),
        ]
    );
}
