#!/usr/bin/env bash
# Benchmark the indexer against Universal Ctags on real corpora; prints a Markdown table.
#
#   scripts/bench.sh [django] [linux] [NAME...]      (run from the repository root)
#
# Always measures Django (the default corpus):
#   cold index        no database and no artifact: `indexer index` with the defaults (it
#                     returns once the index is built; the artifact is then written by a
#                     detached export, timed on its own row, waited for before going on)
#   ctags -R          Universal Ctags over the same tree (all languages, tags file), each
#                     run right after a cold index: the two alternate
#   fresh clone       `git clone` of the tree with its committed artifact, 1% of the files
#                     edited, then `indexer index`; alternating with a cold index of the
#                     same clone without the artifact, tables compared for equality (also
#                     for every other corpus named, e.g. `gostd`)
#   no-change         re-index with nothing changed
#   one-file edit     re-index after appending a comment line to one .py file
#   commit with hook  `git commit` of such an edit with `indexer hook install`'s hook (it
#                     indexes what the commit holds and stages the artifact)
# `linux` adds the Linux kernel (cold index, then ctags -R, once each: they take minutes);
# any other corpus name known to the fetch script adds a cold index + ctags -R row.
#
# Wall time and peak RSS come from `/usr/bin/time -f '%e %M'`; the table shows the median
# wall time over the repetitions and the highest peak RSS seen. Everything runs on a copy
# of each corpus in a temporary directory, so the shared corpus cache is never modified.
#
# Environment:
#   SHARED      the shared folder holding corpora/fetch (default: ../shared from the repo)
#   REPS        repetitions of the cheap runs: no-change and one-file edit (default 5)
#   COLD_REPS   repetitions of cold index and ctags -R on non-huge corpora (default 3)
#   JOBS        pass -j JOBS to the indexer (default: its own default, all cores)
#   EDIT_FILE   the Django file to edit, relative to the corpus (default below)
#   KEEP_TMP=1  keep the temporary directory (copies, databases, logs) for inspection
set -euo pipefail

REPO=$(pwd)
[[ -f $REPO/Cargo.toml && -d $REPO/migrations ]] || { echo "run from the repository root" >&2; exit 2; }
SHARED=${SHARED:-$REPO/../shared}
FETCH=$SHARED/corpora/fetch
[[ -x $FETCH ]] || { echo "no fetch script at $FETCH (set SHARED)" >&2; exit 2; }
REPS=${REPS:-5}
COLD_REPS=${COLD_REPS:-3}
EDIT_FILE=${EDIT_FILE:-django/db/models/base.py}
JOBS_ARG=()
[[ -n ${JOBS:-} ]] && JOBS_ARG=(-j "$JOBS")

log() { echo "[bench] $*" >&2; }

# /usr/bin/time, not the shell keyword: the keyword can't report peak RSS.
if [[ ! -x /usr/bin/time ]]; then
  log "installing GNU time"
  SUDO=; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get install -y time >&2 || { $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y time >&2; }
fi
command -v ctags >/dev/null || { echo "ctags (Universal Ctags) is not on PATH" >&2; exit 2; }

# Corpora: django always first; `linux` is huge and gets single runs.
CORPORA=(django)
for a in "$@"; do
  [[ $a == django ]] && continue
  CORPORA+=("$a")
done

log "building release"
cargo build --release >&2
BIN=$REPO/target/release/indexer

TMP=$(mktemp -d /tmp/indexer-bench.XXXXXX)
cleanup() { if [[ ${KEEP_TMP:-} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT
# The indexer keeps per-project state under the XDG cache; keep it out of the user's.
export XDG_CACHE_HOME=$TMP/xdg

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost GIT_CONFIG_NOSYSTEM=1
ROWS=()        # Markdown rows, in order
NOTES=()       # ratios and checks printed under the table
declare -A COLD_S CTAGS_S

# timed SERIES OUT CMD...: runs CMD once (stdout to OUT.stdout); its wall time joins the
# series SERIES, and its peak RSS the series' highest.
declare -A SERIES_WALLS SERIES_RSS
timed() {
  local series=$1 out=$2 w m
  shift 2
  /usr/bin/time -o "$out.time" -f '%e %M' "$@" >"$out.stdout" 2>"$out.stderr" \
    || { echo "failed: $*" >&2; cat "$out.stderr" >&2; exit 1; }
  read -r w m <"$out.time"
  SERIES_WALLS[$series]+="$w "
  (( m > ${SERIES_RSS[$series]:-0} )) && SERIES_RSS[$series]=$m
  return 0
}

# series SERIES: sets WALL (median seconds) and RSS (max KiB) of the runs in SERIES.
series() {
  # shellcheck disable=SC2086 # the walls are words
  WALL=$(median ${SERIES_WALLS[$1]})
  RSS=${SERIES_RSS[$1]}
}

# measure OUT REPS CMD...: runs CMD REPS times (stdout to OUT.stdout of the last run) and
# sets WALL (median seconds) and RSS (max KiB). A per-run setup hook PRE, if defined as a
# function, runs untimed before each repetition; POST runs untimed after.
measure() {
  local out=$1 reps=$2 i
  shift 2
  for ((i = 1; i <= reps; i++)); do
    if declare -F PRE >/dev/null; then PRE "$i"; fi
    timed "$out" "$out" "$@"
    if declare -F POST >/dev/null; then POST "$i"; fi
  done
  series "$out"
}

median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR % 2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2 }'
}

# wait_for_artifact TREE: until the background export of the run that just returned has
# written the manifest (its last step); appends the seconds waited to EXPORT_WAITS.
wait_for_artifact() {
  local start end
  start=$(date +%s.%N)
  until [[ -f $1/.codebase-index/artifact.json ]]; do sleep 0.02; done
  end=$(date +%s.%N)
  EXPORT_WAITS+=("$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')")
}

# Every row the index holds, without what depends on where or when it was built.
tables() {
  sqlite3 "$1" "SELECT path, language, size, hash, lines, flags, module FROM files ORDER BY path;
    SELECT id, file_id, kind, qualified_name, parent_id, signature, start_line, end_line,
      start_byte, end_byte FROM nodes ORDER BY id;
    SELECT source_id, target_id, kind, confidence, strategy, line FROM edges
      ORDER BY source_id, target_id, kind, line, strategy;
    SELECT source_id, kind, name, reason, candidates, line FROM unresolved
      ORDER BY source_id, line, name, kind, reason;" | md5sum | cut -d' ' -f1
}

# fresh_clone NAME TREE: a git repository of TREE with its artifact committed; each round
# clones it, edits 1% of the tracked files (a comment line appended) and indexes the clone,
# then indexes the same edited clone again without the artifact (cold). The two alternate,
# so both sides of their ratio are taken in the same minutes.
fresh_clone() {
  local name=$1 tree=$2 origin=$TMP/$1.origin clone=$TMP/$1.clone fdb=$TMP/$1.fresh.db cdb=$TMP/$1.cold.db
  log "$name: fresh clone with its artifact, 1% of files edited, and a cold index of it, x$COLD_REPS"
  cp -a "$tree" "$origin"
  rm -rf "$origin/.codebase-index"
  git -C "$origin" init -q
  "$BIN" index "$origin" --db "$TMP/$name.origin.db" --export "${JOBS_ARG[@]}" >/dev/null
  git -C "$origin" add -A
  git -C "$origin" commit -q -m base
  local total
  total=$(summary "$TMP/$name.cold.stdout" files)
  EDITS=$(( (total + 99) / 100 ))
  # clone_and_edit DB [cold]: a new edited clone, to be indexed into DB (removed first).
  clone_and_edit() {
    rm -rf "$clone" "$1" "$1"-wal "$1"-shm
    git clone -q "$origin" "$clone"
    # Source files of the indexed languages, spread over the tree.
    local code=$TMP/$name.code
    git -C "$clone" ls-files -- '*.py' '*.go' '*.rs' '*.c' '*.java' '*.ts' '*.js' '*.rb' '*.php' >"$code"
    awk -v n="$EDITS" -v t="$(wc -l <"$code")" 'NR % int(t / n > 1 ? t / n : 1) == 0' "$code" \
      | head -n "$EDITS" | while IFS= read -r f; do
        case $f in *.py | *.rb) printf '# edited\n' ;; *) printf '// edited\n' ;; esac >>"$clone/$f"
      done
    [[ ${2:-} == cold ]] && rm -rf "$clone/.codebase-index"
    sync
  }
  local i
  EXPORT_WAITS=()
  for ((i = 1; i <= COLD_REPS; i++)); do
    clone_and_edit "$fdb"
    timed "$name.fresh" "$TMP/$name.fresh" "$BIN" index "$clone" --db "$fdb" --json "${JOBS_ARG[@]}"
    clone_and_edit "$cdb" cold
    timed "$name.freshcold" "$TMP/$name.freshcold" "$BIN" index "$clone" --db "$cdb" --json "${JOBS_ARG[@]}"
    wait_for_artifact "$clone"
  done
  series "$name.fresh"
  local fresh=$WALL
  row "$name" "fresh clone with its artifact, 1% of files edited" "$COLD_REPS" "$(summary "$TMP/$name.fresh.stdout" files)" "$(summary "$TMP/$name.fresh.stdout" extracted)"
  series "$name.freshcold"
  row "$name" "cold index of the same edited clone, defaults (alternating with the row above)" "$COLD_REPS" "$(summary "$TMP/$name.freshcold.stdout" files)" "$(summary "$TMP/$name.freshcold.stdout" extracted)"
  local same=differ
  [[ $(tables "$cdb") == $(tables "$fdb") ]] && same=equal
  NOTES+=("$(awk -v n="$name" -v a="$WALL" -v b="$fresh" -v s="$same" 'BEGIN {
    printf "%s: cold index / fresh clone wall time = %.1f; tables of the two indexes: %s", n, a / b, s }')")
  rm -rf "$origin" "$clone" "$fdb"* "$cdb"* "$TMP/$name.origin.db"*
}

# The indexer's --json summary: field from the last measured run.
summary() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

row() { # corpus, run, reps, files, extracted
  local rss=n/a
  [[ -n $RSS ]] && rss=$((RSS / 1024))
  ROWS+=("| $1 | $2 | $(printf '%.2f' "$WALL") | $rss | $3 | $4 | $5 |")
}

index() { "$BIN" index "$1" --db "$2" --json "${JOBS_ARG[@]}" "${@:3}"; }

for name in "${CORPORA[@]}"; do
  log "fetching $name"
  src=$("$FETCH" "$name" | tail -n1)
  tree=$TMP/$name
  log "copying $src to $tree"
  cp -a "$src" "$tree"
  db=$TMP/$name.db
  reps=$COLD_REPS
  [[ $name == linux ]] && reps=1

  log "$name: cold index and ctags -R, alternating, x$reps"
  # Each round: a fresh tree (no database and no committed artifact, so one is written in
  # the background and waited for, untimed), then `ctags -R` of the same tree. `sync`
  # first: no run pays for the writeback of the one before. Alternating puts both sides of
  # the ratio in the same minutes: this machine's speed drifts by tens of percent an hour.
  EXPORT_WAITS=()
  for ((i = 1; i <= reps; i++)); do
    rm -rf "$db" "$db"-wal "$db"-shm "$tree/.codebase-index"
    sync
    timed "$name.cold" "$TMP/$name.cold" "$BIN" index "$tree" --db "$db" --json "${JOBS_ARG[@]}"
    wait_for_artifact "$tree"
    # ctags sees the tree the index saw: without the artifact just written.
    mv "$tree/.codebase-index" "$TMP/$name.artifact"
    rm -f "$TMP/$name.tags"
    timed "$name.ctags" "$TMP/$name.ctags" ctags -R -f "$TMP/$name.tags" "$tree"
    mv "$TMP/$name.artifact" "$tree/.codebase-index"
  done
  series "$name.cold"
  files=$(summary "$TMP/$name.cold.stdout" files)
  row "$name" "cold index, defaults" "$reps" "$files" "$(summary "$TMP/$name.cold.stdout" extracted)"
  COLD_S[$name]=$WALL
  WALL=$(median "${EXPORT_WAITS[@]}") RSS=
  row "$name" "its artifact, written in the background after it returned" "$reps" "" ""
  series "$name.ctags"
  row "$name" "\`ctags -R\` (alternating with the cold index)" "$reps" "" ""
  CTAGS_S[$name]=$WALL

  if [[ $name != linux ]]; then
    fresh_clone "$name" "$tree"
  fi

  if [[ $name == django ]]; then
    log "$name: no-change re-index x$REPS"
    measure "$TMP/$name.nochange" "$REPS" "$BIN" index "$tree" --db "$db" --json "${JOBS_ARG[@]}"
    row "$name" "re-index, no change" "$REPS" "$files" "$(summary "$TMP/$name.nochange.stdout" extracted)"

    edit=$tree/$EDIT_FILE
    [[ -f $edit ]] || edit=$(find "$tree" -name '*.py' -size +1k | LC_ALL=C sort | head -n1)
    log "$name: one-file edit re-index x$REPS (${edit#"$tree"/})"
    cp -p "$edit" "$TMP/edit.orig"
    # Each timed run sees exactly one changed file: append a comment, re-index (timed),
    # then restore the file and re-index untimed so the next run starts in sync.
    PRE() { printf '# bench edit %s\n' "$1" >>"$edit"; }
    POST() { cp -p "$TMP/edit.orig" "$edit"; index "$tree" "$db" >/dev/null; }
    measure "$TMP/$name.edit" "$REPS" "$BIN" index "$tree" --db "$db" --json "${JOBS_ARG[@]}"
    unset -f PRE POST
    row "$name" "re-index, one .py file edited" "$REPS" "$files" "$(summary "$TMP/$name.edit.stdout" extracted)"

    log "$name: git commit of a one-file edit with the pre-commit hook x$REPS"
    git -C "$tree" init -q
    (cd "$tree" && "$BIN" hook install >/dev/null && git add -A && git commit -q -m base)
    PRE() { printf '# bench commit %s\n' "$1" >>"$edit"; git -C "$tree" add "${edit#"$tree"/}"; }
    measure "$TMP/$name.commit" "$REPS" git -C "$tree" commit -q -m "bench edit"
    unset -f PRE
    row "$name" "\`git commit\` of a one-file edit, hook installed" "$REPS" "$files" ""
    rm -rf "$tree/.git"
  fi

  rm -rf "$tree" "$db" "$db"-wal "$db"-shm "$TMP/$name.tags"
done

cpu=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
[[ -n $cpu ]] || cpu=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}')
ram=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)

echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}, $ram RAM; indexer $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?') (release), $(ctags --version | head -n1 | cut -d, -f1)."
echo
echo "| Corpus | Run | Wall (s, median) | Peak RSS (MB) | Runs | Files | Re-extracted |"
echo "|---|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
for name in "${CORPORA[@]}"; do
  awk -v n="$name" -v a="${COLD_S[$name]}" -v b="${CTAGS_S[$name]}" 'BEGIN {
    if (b > 0) printf "%s: cold index / ctags -R wall time = %.2f\n", n, a / b
    else printf "%s: ctags -R too fast to compare\n", n }'
done
printf '%s\n' "${NOTES[@]}"
