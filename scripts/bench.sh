#!/usr/bin/env bash
# Benchmark the indexer against Universal Ctags on real corpora; prints a Markdown table.
#
#   scripts/bench.sh [django] [linux] [NAME...]      (run from the repository root)
#
# Always measures Django (the default corpus):
#   cold index        fresh database, `indexer index --rebuild`
#   no-change         re-index with nothing changed
#   one-file edit     re-index after appending a comment line to one .py file
#   commit with hook  `git commit` of such an edit with `indexer hook install`'s hook (it
#                     indexes what the commit holds and stages the artifact)
#   ctags -R          Universal Ctags over the same tree (all languages, tags file)
# `linux` adds the Linux kernel (cold index + ctags -R, once each: they take minutes);
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

ROWS=()        # Markdown rows, in order
declare -A COLD_S CTAGS_S

# measure OUT REPS CMD...: runs CMD REPS times (stdout to OUT.stdout of the last run) and
# sets WALL (median seconds) and RSS (max KiB). A per-run setup hook PRE, if defined as a
# function, runs untimed before each repetition; POST runs untimed after.
measure() {
  local out=$1 reps=$2; shift 2
  local walls=() rss=0 i
  for ((i = 1; i <= reps; i++)); do
    if declare -F PRE >/dev/null; then PRE "$i"; fi
    /usr/bin/time -o "$out.time" -f '%e %M' "$@" >"$out.stdout" 2>"$out.stderr" \
      || { echo "failed: $*" >&2; cat "$out.stderr" >&2; exit 1; }
    local w m
    read -r w m <"$out.time"
    walls+=("$w")
    (( m > rss )) && rss=$m
    if declare -F POST >/dev/null; then POST "$i"; fi
  done
  WALL=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {
    if (NR % 2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2 }')
  RSS=$rss
}

# The indexer's --json summary: field from the last measured run.
summary() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

row() { # corpus, run, reps, files, extracted
  ROWS+=("| $1 | $2 | $(printf '%.2f' "$WALL") | $((RSS / 1024)) | $3 | $4 | $5 |")
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

  log "$name: cold index x$reps"
  # A fresh tree each time: no database and no committed artifact (so it is written).
  PRE() { rm -rf "$db" "$db"-wal "$db"-shm "$tree/.codebase-index"; }
  measure "$TMP/$name.cold" "$reps" "$BIN" index "$tree" --db "$db" --rebuild --json "${JOBS_ARG[@]}"
  unset -f PRE
  files=$(summary "$TMP/$name.cold.stdout" files)
  row "$name" "cold index (\`--rebuild\`)" "$reps" "$files" "$(summary "$TMP/$name.cold.stdout" extracted)"
  COLD_S[$name]=$WALL

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
    export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
    export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost GIT_CONFIG_NOSYSTEM=1
    git -C "$tree" init -q
    (cd "$tree" && "$BIN" hook install >/dev/null && git add -A && git commit -q -m base)
    PRE() { printf '# bench commit %s\n' "$1" >>"$edit"; git -C "$tree" add "${edit#"$tree"/}"; }
    measure "$TMP/$name.commit" "$REPS" git -C "$tree" commit -q -m "bench edit"
    unset -f PRE
    row "$name" "\`git commit\` of a one-file edit, hook installed" "$REPS" "$files" ""
    rm -rf "$tree/.git"
  fi

  log "$name: ctags -R x$reps"
  PRE() { rm -f "$TMP/$name.tags"; }
  measure "$TMP/$name.ctags" "$reps" ctags -R -f "$TMP/$name.tags" "$tree"
  unset -f PRE
  row "$name" "\`ctags -R\`" "$reps" "" ""
  CTAGS_S[$name]=$WALL
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
