#!/usr/bin/env bash
# Record every user-facing output of an `indexer` binary on Django and tokio, so that two
# builds (say, before and after a refactor that must not change any output) can be compared
# with `diff -r`:
#
#   scripts/snapshot_outputs.sh BIN OUTDIR [TREES_DIR]
#   git worktree add --detach /tmp/before BASE && (cd /tmp/before && cargo build --release)
#   scripts/snapshot_outputs.sh /tmp/before/target/release/indexer /tmp/snap/before
#   cargo build --release && scripts/snapshot_outputs.sh target/release/indexer /tmp/snap/after
#   diff -r -x work /tmp/snap/before /tmp/snap/after          # must print nothing
#
# TREES_DIR (default ~/.cache/indexer-snapshot-trees) holds fixed copies of the corpora
# `django` and `tokio`, made on the first run from ../shared/corpora/fetch (CORPORA_FETCH
# names another fetch script) and never touched again: the tree paths and file mtimes are
# then the same for every run, so they need no filtering. The only thing written into a tree is the indexer's own `.codebase-index/`, which
# is removed before each index run so every run starts from the same state.
#
# For each tree NAME it writes OUTDIR/NAME/:
#   index.out, index.err           `index TREE --db OUTDIR/work/NAME.db --rebuild`
#   artifact/graph.db.zst, artifact/artifact.json, artifact/.gitattributes, artifact/ls.txt
#                                  the artifact that run wrote into TREE/.codebase-index/ (bytes)
#   db.dump                        `sqlite3 OUTDIR/work/NAME.db .dump`
#   export.db.zst, export.artifact.json, export.gitattributes, export.out, export.err
#                                  `export --output OUTDIR/NAME/export.db.zst` (export writes its
#                                  artifact.json and .gitattributes beside the output; they are
#                                  renamed with an `export.` prefix so they cannot be confused
#                                  with the index run's artifact.json)
#   q/LABEL.out, q/LABEL.err, q/LABEL.rc
#                                  stdout, stderr and exit code of every query command (search,
#                                  get-source, trace-callers/-callees, status, rank-files,
#                                  skeleton, map, pack, eval, and error cases); pack --output
#                                  also leaves q/pack_output_file.md
#   eval_tasks.jsonl               the eval tasks used (written by this script)
# OUTDIR/work/ holds the databases and scratch files; it is compared through db.dump, not
# byte for byte (exclude it: `diff -r -x work`).
#
# What is filtered, and why (all else is recorded verbatim):
#   - the elapsed time on the first line of `index` ("indexed ROOT (full run) in 3.32s -> DB"):
#     the number is replaced by "<elapsed>", the rest of the line is kept;
#   - the absolute OUTDIR in any output (the database path printed by index, status, export
#     and errors) is replaced by "<OUTDIR>", so runs into different OUTDIRs compare equal;
#   - eval: in `--json`, every key named like `*latency*` or `*_ms` (per-task `latency_ms`,
#     the summaries' `latency_ms`, `median_ms`, `p95_ms`, pack mode's `load_ms`) is deleted
#     (jq); in the text tables, the trailing "median ms" and "p95 ms" columns and the
#     "graph loaded in N ms" clause are cut (sed). These are wall-clock measurements.
#   - db.dump: nothing. The `meta` table holds only root, project and resolution settings, and
#     files.mtime_ns are the tree's mtimes (fixed copies), so two runs of the same binary give
#     the same dump byte for byte; no other column holds a time.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 BIN OUTDIR [TREES_DIR]" >&2
  exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[[ -x $BIN ]] || { echo "not an executable: $1" >&2; exit 2; }
mkdir -p "$2"
OUTDIR=$(cd "$2" && pwd)
TREES=(django tokio)
TREES_DIR=${3:-${XDG_CACHE_HOME:-$HOME/.cache}/indexer-snapshot-trees}
FETCH=${CORPORA_FETCH:-$(dirname "$0")/../../shared/corpora/fetch}
mkdir -p "$TREES_DIR"
TREES_DIR=$(cd "$TREES_DIR" && pwd)
for t in "${TREES[@]}"; do
  if [[ ! -d $TREES_DIR/$t ]]; then
    src=$("$FETCH" "$t" | tail -n1)
    cp -a "$src" "$TREES_DIR/$t"
  fi
done
for t in jq sqlite3; do
  command -v "$t" >/dev/null || { echo "$t is not on PATH" >&2; exit 2; }
done

# ---------------------------------------------------------------------------------------------
# Per-tree parameters: the same commands on both trees, with these names and texts.
params() {
  case $1 in
    django)
      SEARCH_TEXT="slugify"
      SEARCH_KIND_TEXT="get user model"          # with --kind Function
      SEARCH_JSON_TEXT="queryset filter"         # with --json
      SRC_FUNCTION=django.utils.text.slugify
      SRC_METHOD=django.db.models.query.QuerySet._filter_or_exclude
      SRC_JSON=django.contrib.auth.get_user_model
      SRC_FILE=django/utils/text.py
      SRC_AMBIGUOUS=slugify                      # a short name with two definitions
      SRC_MISSING=django.utils.text.no_such_function
      TRACE_A=django.utils.text.slugify
      TRACE_B=django.contrib.auth.get_user_model
      RANK_TEXT="The slugify helper in django.utils.text keeps leading and trailing dashes and underscores when allow_unicode is set, so the generated URL slug is wrong."
      SKEL_PREFIX=django/utils/
      MAP_QUERY="get_user_model raises ImproperlyConfigured when AUTH_USER_MODEL points to an app that is not installed"
      MAP_FOCUS=django/utils/text.py
      PACK_ENTRY=django.contrib.auth.get_user_model
      PACK_ENTRY_FILE=django/utils/text.py
      PACK_QUERY="QuerySet.filter() raises a confusing TypeError after a slice has been taken.

Calling qs[:5].filter(name='x') fails with \"Cannot filter a query once a slice has been taken.\" That is expected, but the same message appears when exclude() is chained after distinct() on a sliced queryset inside a Prefetch object, and the traceback points into _filter_or_exclude rather than the user's code.

Expected: the error names the operation that was attempted (filter or exclude) and mentions Prefetch when the queryset came from prefetch_related_objects. Steps: create a model with a ForeignKey, prefetch with Prefetch('children', queryset=Child.objects.all()[:3]) and call filter() on it."
      TASKS='{"id":"dj-slugify","query":"slugify should strip leading and trailing dashes and underscores from the result","gold_files":["django/utils/text.py"],"gold_symbols":["django/utils/text.py::slugify"]}
{"id":"dj-get-user-model","query":"get_user_model raises ImproperlyConfigured when AUTH_USER_MODEL refers to a model that has not been installed","gold_files":["django/contrib/auth/__init__.py"],"gold_symbols":["django/contrib/auth/__init__.py::get_user_model"]}
{"id":"dj-filter-slice","query":"Filtering a QuerySet with filter() after slicing raises TypeError: Cannot filter a query once a slice has been taken","gold_files":["django/db/models/query.py"],"gold_symbols":["django/db/models/query.py::QuerySet._filter_or_exclude"]}'
      ;;
    tokio)
      SEARCH_TEXT="block on"
      SEARCH_KIND_TEXT="spawn blocking"          # with --kind Function
      SEARCH_JSON_TEXT="runtime builder"         # with --json
      SRC_FUNCTION=runtime.blocking.pool.spawn_blocking
      SRC_METHOD=runtime.builder.Builder.build_current_thread_runtime
      SRC_JSON=runtime.runtime.Runtime.block_on
      SRC_FILE=src/runtime/builder.rs
      SRC_AMBIGUOUS=block_on                     # a short name with many definitions
      SRC_MISSING=runtime.runtime.Runtime.no_such_method
      TRACE_A=runtime.runtime.Runtime.block_on
      TRACE_B=runtime.runtime.Runtime.enter
      RANK_TEXT="Runtime::block_on panics with 'Cannot start a runtime from within a runtime' when it is called from inside a spawn_blocking task on the current_thread scheduler."
      SKEL_PREFIX=src/runtime/task/
      MAP_QUERY="Builder::new_current_thread with enable_all builds a runtime whose timer driver never fires"
      MAP_FOCUS=src/runtime/builder.rs
      PACK_ENTRY=runtime.runtime.Runtime.block_on
      PACK_ENTRY_FILE=src/runtime/builder.rs
      PACK_QUERY="Runtime::block_on deadlocks when the future spawns a blocking task and the runtime is shut down.

With a current_thread runtime built by Builder::new_current_thread().enable_all().build(), calling rt.block_on(async { tokio::task::spawn_blocking(|| ...).await }) and then dropping the runtime from another thread hangs forever. The blocking pool's shutdown waits for the worker thread while the scheduler's CoreGuard still holds the core.

Expected: shutdown_timeout returns after the timeout and the JoinHandle of the blocking task reports a cancelled JoinError. Steps: build the runtime, spawn a blocking task that sleeps, call shutdown_timeout(Duration::from_millis(10))."
      TASKS='{"id":"tk-block-on","query":"Runtime::block_on panics when called from within an asynchronous context","gold_files":["src/runtime/runtime.rs"],"gold_symbols":["src/runtime/runtime.rs::Runtime.block_on"]}
{"id":"tk-spawn-blocking","query":"spawn_blocking tasks are not run after the blocking pool has been shut down","gold_files":["src/runtime/blocking/pool.rs"],"gold_symbols":["src/runtime/blocking/pool.rs::spawn_blocking"]}
{"id":"tk-current-thread","query":"Builder::new_current_thread with enable_all builds a runtime whose timer does not fire","gold_files":["src/runtime/builder.rs"],"gold_symbols":["src/runtime/builder.rs::Builder.build_current_thread_runtime"]}'
      ;;
    *) echo "no parameters for tree $1" >&2; exit 2 ;;
  esac
}

# ---------------------------------------------------------------------------------------------
OUTDIR_RE=$(printf '%s' "$OUTDIR" | sed 's/[][\.*^$|/]/\\&/g')
# Replaces the absolute OUTDIR by a placeholder, in place.
unpath() { sed -i "s/$OUTDIR_RE/<OUTDIR>/g" "$@"; }

# q LABEL [STDIN_FILE] -- ARGS...: runs BIN ARGS (with --db of the current tree appended),
# saving stdout, stderr and the exit code under q/LABEL.*. A non-zero exit is recorded, not fatal.
q() {
  local label=$1 input=/dev/null; shift
  if [[ $1 != -- ]]; then input=$1; shift; fi
  shift # --
  local rc=0
  "$BIN" "$@" --db "$DB" <"$input" >"$QDIR/$label.out" 2>"$QDIR/$label.err" || rc=$?
  echo "$rc" >"$QDIR/$label.rc"
  unpath "$QDIR/$label.out" "$QDIR/$label.err"
}

# Deletes every key named like *latency* or *_ms from a JSON document, in place.
drop_latency_json() {
  local tmp=$1.tmp
  jq 'walk(if type == "object" then with_entries(select(.key | test("latency|(^|_)ms$") | not)) else . end)' \
    "$1" >"$tmp" && mv "$tmp" "$1"
}
# Cuts the latency columns (the last two: "median ms", "p95 ms") from eval's text tables and
# the "graph loaded in N ms" clause, in place. Only lines that end with those columns change.
drop_latency_text() {
  sed -i -E \
    -e 's/ +median ms +p95 ms$//' \
    -e '/^ *[a-z0-9]+ +[0-9]/ s/ +[0-9]+(\.[0-9]+)? +[0-9]+(\.[0-9]+)?$//' \
    -e 's/; graph loaded in [0-9]+(\.[0-9]+)? ms//' \
    "$1"
}

START=$SECONDS
for NAME in "${TREES[@]}"; do
  params "$NAME"
  TREE=$TREES_DIR/$NAME
  [[ -d $TREE ]] || { echo "no tree at $TREE" >&2; exit 2; }
  OUT=$OUTDIR/$NAME
  QDIR=$OUT/q
  WORK=$OUTDIR/work
  DB=$WORK/$NAME.db
  echo "[snapshot] $NAME: index" >&2

  # A clean start: no artifact in the tree, no database, no earlier outputs.
  rm -rf "$TREE/.codebase-index" "$OUT"
  rm -f "$DB" "$DB-wal" "$DB-shm" "$DB.lock" "$OUTDIR/$NAME.db"
  mkdir -p "$OUT" "$QDIR" "$WORK"

  # Index (text output; the elapsed time is the only wall-clock value it prints).
  "$BIN" index "$TREE" --db "$DB" --rebuild >"$OUT/index.out" 2>"$OUT/index.err"
  sed -i -E '1s/ in [0-9]+(\.[0-9]+)?s -> / in <elapsed> -> /' "$OUT/index.out"
  unpath "$OUT/index.out" "$OUT/index.err"

  # Export (before the index's artifact.json is copied in: export writes artifact.json and
  # .gitattributes beside its output).
  "$BIN" export --db "$DB" --output "$OUT/export.db.zst" >"$OUT/export.out" 2>"$OUT/export.err"
  mv "$OUT/artifact.json" "$OUT/export.artifact.json"
  if [[ -f $OUT/.gitattributes ]]; then mv "$OUT/.gitattributes" "$OUT/export.gitattributes"; fi
  unpath "$OUT/export.out" "$OUT/export.err"

  # The artifact the index run wrote into the tree, and the database as text.
  mkdir -p "$OUT/artifact"
  cp "$TREE/.codebase-index/graph.db.zst" "$TREE/.codebase-index/artifact.json" "$OUT/artifact/"
  if [[ -f $TREE/.codebase-index/.gitattributes ]]; then cp "$TREE/.codebase-index/.gitattributes" "$OUT/artifact/"; fi
  ls -A "$TREE/.codebase-index" >"$OUT/artifact/ls.txt"
  sqlite3 "$DB" .dump >"$OUT/db.dump"

  echo "[snapshot] $NAME: queries" >&2
  # search
  q search_1 -- search "$SEARCH_TEXT"
  q search_2_kind_function -- search "$SEARCH_KIND_TEXT" --kind Function
  q search_3_json -- search "$SEARCH_JSON_TEXT" --json
  # get-source
  q get_source_function -- get-source "$SRC_FUNCTION"
  q get_source_method -- get-source "$SRC_METHOD"
  q get_source_json -- get-source "$SRC_JSON" --json
  q get_source_file -- get-source "$SRC_FILE"
  q get_source_ambiguous -- get-source "$SRC_AMBIGUOUS"
  q error_get_source_missing -- get-source "$SRC_MISSING"
  # trace
  q trace_callers_a -- trace-callers "$TRACE_A"
  q trace_callers_a_depth2 -- trace-callers "$TRACE_A" --depth 2
  q trace_callers_a_json -- trace-callers "$TRACE_A" --json
  q trace_callees_a -- trace-callees "$TRACE_A"
  q trace_callees_a_depth2 -- trace-callees "$TRACE_A" --depth 2
  q trace_callers_b -- trace-callers "$TRACE_B"
  q trace_callers_b_depth2 -- trace-callers "$TRACE_B" --depth 2
  q trace_callees_b -- trace-callees "$TRACE_B"
  q trace_callees_b_depth2 -- trace-callees "$TRACE_B" --depth 2
  q trace_callees_b_json -- trace-callees "$TRACE_B" --json
  # status
  q status -- status
  q status_json -- status --json
  # rank-files
  q rank_files -- rank-files "$RANK_TEXT"
  q rank_files_json -- rank-files "$RANK_TEXT" --json
  # skeleton
  q skeleton_2000 -- skeleton --budget 2000
  q skeleton_8000 -- skeleton --budget 8000
  q skeleton_8000_compact -- skeleton --budget 8000 --mode compact
  q skeleton_8000_path -- skeleton --budget 8000 --path "$SKEL_PREFIX"
  q skeleton_8000_json -- skeleton --budget 8000 --json
  q skeleton_8000_cl100k -- skeleton --budget 8000 --tokenizer cl100k
  q skeleton_8000_show_dropped -- skeleton --budget 8000 --show-dropped
  # map
  q map_1000 -- map --budget 1000
  q map_4000 -- map --budget 4000
  q map_4000_query -- map --budget 4000 --query "$MAP_QUERY"
  q map_4000_focus -- map --budget 4000 --focus "$MAP_FOCUS"
  q map_4000_json -- map --budget 4000 --format json
  q map_4000_cl100k -- map --budget 4000 --tokenizer cl100k
  q map_4000_show_dropped -- map --budget 4000 --show-dropped
  # pack
  for fmt in markdown xml json; do
    for budget in 8000 2000; do
      q "pack_entry_${fmt}_$budget" -- pack --entry "$PACK_ENTRY" --format "$fmt" --budget "$budget"
    done
  done
  q pack_entry_file_8000 -- pack --entry "$PACK_ENTRY_FILE" --budget 8000
  printf '%s\n' "$PACK_QUERY" >"$WORK/$NAME.pack_query.txt"
  q pack_query_13000 "$WORK/$NAME.pack_query.txt" -- pack --query - --budget 13000
  q pack_query_13000_json "$WORK/$NAME.pack_query.txt" -- pack --query - --budget 13000 --format json
  q pack_entry_8000_show_dropped -- pack --entry "$PACK_ENTRY" --budget 8000 --show-dropped
  q pack_entry_8000_signatures_only -- pack --entry "$PACK_ENTRY" --budget 8000 --signatures-only
  q pack_entry_8000_cl100k -- pack --entry "$PACK_ENTRY" --budget 8000 --tokenizer cl100k
  q pack_entry_8000_output_file -- pack --entry "$PACK_ENTRY" --budget 8000 --output "$QDIR/pack_output_file.md"
  # eval
  printf '%s\n' "$TASKS" >"$OUT/eval_tasks.jsonl"
  q eval_files_json -- eval "$OUT/eval_tasks.jsonl" --json
  q eval_pack_json -- eval "$OUT/eval_tasks.jsonl" --mode pack --json
  q eval_files -- eval "$OUT/eval_tasks.jsonl"
  q eval_pack -- eval "$OUT/eval_tasks.jsonl" --mode pack
  for f in eval_files_json eval_pack_json; do
    [[ -s $QDIR/$f.out ]] && drop_latency_json "$QDIR/$f.out"
  done
  drop_latency_text "$QDIR/eval_files.out"
  drop_latency_text "$QDIR/eval_pack.out"
done
echo "[snapshot] done in $((SECONDS - START))s: $OUTDIR" >&2
