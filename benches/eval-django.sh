#!/usr/bin/env bash
# Retrieval evaluation on real Django releases (SWE-bench Lite, Django tasks).
#
#   benches/eval-django.sh [--tasks FILE] [--work DIR] [--bin PATH] [--mode files|map|pack]
#                          [--k 1,3,5,10] [--budgets 4000,13000,27000]
#                          [--tokenizer o200k|cl100k] [--fake-eval]
#
# Downloads each release's sdist from PyPI once (later runs are offline), moves one
# index incrementally through the releases in version order, runs `indexer eval` on
# each release's tasks and prints a Markdown report on stdout; progress on stderr.
# All the work is in scripts/eval_django.py (`--help` there); this wrapper only
# provides the default binary.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
script="$root/scripts/eval_django.py"

have_bin=0
for arg in "$@"; do
    case "$arg" in
        -h|--help) exec python3 "$script" --help ;;
        --bin|--bin=*) have_bin=1 ;;
    esac
done

if [[ $have_bin -eq 1 ]]; then
    exec python3 "$script" "$@"
fi

bin="$root/target/release/indexer"
if [[ ! -x "$bin" ]]; then
    echo "building $bin" >&2
    # nice: the build shares the machine with whatever else is running.
    (cd "$root" && nice cargo build --release >&2)
elif [[ -n "$(find "$root/src" "$root/Cargo.toml" "$root/Cargo.lock" -newer "$bin" -print -quit)" ]]; then
    # Not rebuilt automatically: sources being edited may not compile right now.
    echo "warning: $bin is older than the sources; run \`nice cargo build --release\` for current numbers" >&2
fi

exec python3 "$script" --bin "$bin" "$@"
