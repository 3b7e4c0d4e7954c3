#!/usr/bin/env python3
"""Evaluate `indexer eval` on the Django tasks of SWE-bench Lite, release by release.

For every Django release the tasks name (in version order) this script:
  1. downloads the release's sdist from PyPI once into WORK/sdist/VERSION/ and
     unpacks it once into WORK/src/VERSION/ (re-runs are offline);
  2. makes the single working tree WORK/tree equal to that release (files with
     unchanged content keep their mtime, so the index update is incremental) and
     runs `indexer index WORK/tree --db WORK/django.db --no-artifact`, timing it;
  3. runs `indexer eval` on that release's tasks (or, with --fake-eval, builds a
     synthetic result of the same shape);
  4. recomputes one summary over all tasks of all releases, prints a Markdown
     report on stdout and writes WORK/report.json and WORK/tasks.tsv.

--mode files (the default) ranks files against BM25 over whole files (Acc@k, MRR,
in-budget recall); --mode map and --mode pack measure what the repo map or the
query pack of each task's text holds at each token budget (a gold file, a gold
symbol), beside BM25's whole files that fit in the same budget.

Progress goes to stderr, the report to stdout. Any error stops the run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import NoReturn

DEFAULT_TASKS = "/work/shared/eval/swebench-lite-django.jsonl"
DEFAULT_WORK = "~/.cache/indexer-eval/django"
DEFAULT_K = "1,3,5,10"
DEFAULT_BUDGETS = "4000,13000,27000"
DEFAULT_TOKENIZER = "o200k"
MODES = ("files", "map", "pack")
RESULT_KEYS = ("rank", "reciprocal_rank", "hit_at", "in_budget", "latency_ms", "top")
CONTEXT_TASK_LISTS = ("gold_files", "missing_gold_files", "gold_symbols", "missing_gold_symbols")
CONTEXT_SUMMARY_KEYS = ("tasks", "gold_file_recall", "bm25_gold_file_recall", "tasks_naming_symbols",
                        "gold_symbol_recall", "mean_tokens", "median_ms", "p95_ms")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def die(msg: str) -> NoReturn:
    log(f"error: {msg}")
    sys.exit(1)


# ---------------------------------------------------------------- versions

_VERSION_RE = re.compile(r"^(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?$")


def version_key(v: str) -> tuple:
    """Sort key for the PEP 440 subset Django uses (X.Y[.Z][aN|bN|rcN][.postN]).

    A plain string sort puts "3.0.14" before "3.0.2" and "10.0" before "2.2";
    trailing zeros are dropped so "3.0" and "3.0.0" compare equal, and a
    pre-release sorts before its final release.
    """
    m = _VERSION_RE.match(v)
    if not m:
        die(f"cannot parse Django version {v!r}")
    nums = [int(x) for x in m.group(1).split(".")]
    while len(nums) > 1 and nums[-1] == 0:
        nums.pop()
    pre = (0, m.group(2), int(m.group(3))) if m.group(2) else (1, "", 0)
    post = int(m.group(4)) if m.group(4) else -1
    return (tuple(nums), pre, post)


# ---------------------------------------------------------------- inputs

def parse_int_list(text: str, what: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        die(f"--{what} wants comma-separated integers, got {text!r}")
    if not vals or any(v <= 0 for v in vals):
        die(f"--{what} wants positive integers, got {text!r}")
    return vals


def load_tasks(path: Path) -> list[dict]:
    tasks = []
    seen = set()
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                t = json.loads(line)
            except json.JSONDecodeError as e:
                die(f"{path}:{n}: not JSON: {e}")
            for key in ("id", "release", "query", "gold_files"):
                if key not in t:
                    die(f"{path}:{n}: task lacks {key!r}")
            if t["id"] in seen:
                die(f"{path}:{n}: duplicate task id {t['id']!r}")
            seen.add(t["id"])
            version_key(t["release"])
            tasks.append(t)
    if not tasks:
        die(f"{path}: no tasks")
    return tasks


# ---------------------------------------------------------------- sdists

def find_sdist(d: Path) -> Path | None:
    if not d.is_dir():
        return None
    found = sorted(p for p in d.iterdir()
                   if p.is_file() and (p.name.endswith(".tar.gz") or p.name.endswith(".zip")))
    if len(found) > 1:
        die(f"{d}: more than one sdist: {[p.name for p in found]}")
    return found[0] if found else None


def fetch_sdist(work: Path, version: str) -> Path:
    """The sdist of `version`, downloaded only when not already cached.

    pip writes into a scratch folder that is renamed into place at the end, so an
    interrupted download never passes for a cached one.
    """
    final = work / "sdist" / version
    got = find_sdist(final)
    if got:
        return got
    scratch = work / "sdist" / f".partial-{version}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    log(f"[{version}] downloading sdist from PyPI")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", f"Django=={version}", "-d", str(scratch)]
    # pip's chatter goes to stderr, keeping stdout for the report.
    r = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
    if r.returncode != 0:
        die(f"pip download of Django=={version} failed (exit {r.returncode})")
    if find_sdist(scratch) is None:
        die(f"pip download of Django=={version} left no .tar.gz or .zip in {scratch}")
    shutil.rmtree(final, ignore_errors=True)
    scratch.rename(final)
    return find_sdist(final)


def unpack_sdist(work: Path, version: str, sdist: Path) -> Path:
    """The unpacked release (the sdist's top folder), unpacked only once."""
    final = work / "src" / version
    if final.is_dir():
        return final
    scratch = work / "src" / f".partial-{version}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    log(f"[{version}] unpacking {sdist.name}")
    if sdist.name.endswith(".tar.gz"):
        with tarfile.open(sdist) as tf:
            # The "data" filter refuses absolute paths, links leaving the folder
            # and device files; member mtimes are kept.
            tf.extractall(scratch, filter="data")
    else:
        with zipfile.ZipFile(sdist) as zf:
            for info in zf.infolist():
                zf.extract(info, scratch)
                # zipfile does not restore mtimes; do it so that they mean the same
                # thing as for a tar sdist.
                target = scratch / info.filename
                if not info.is_dir():
                    ts = time.mktime(info.date_time + (0, 0, -1))
                    os.utime(target, (ts, ts))
    tops = sorted(scratch.iterdir())
    if len(tops) != 1 or not tops[0].is_dir():
        die(f"{sdist}: expected one top-level folder, found {[p.name for p in tops]}")
    shutil.rmtree(final, ignore_errors=True)
    tops[0].rename(final)
    scratch.rmdir()
    return final


def is_packaging_only(rel: str) -> bool:
    """Files setuptools adds to an sdist that a Django checkout does not have."""
    first = rel.split("/", 1)[0]
    return rel == "PKG-INFO" or first.endswith(".egg-info")


# ---------------------------------------------------------------- sync

def list_tree(root: Path) -> tuple[dict[str, Path], set[str]]:
    """Relative path -> path for files and symlinks, plus the set of folders."""
    files: dict[str, Path] = {}
    dirs: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        rel_base = base.relative_to(root).as_posix()
        for name in list(dirnames):
            p = base / name
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            if p.is_symlink():
                # A symlink to a folder is a leaf, like rsync -a treats it.
                dirnames.remove(name)
                files[rel] = p
            else:
                dirs.add(rel)
        for name in sorted(filenames):
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            files[rel] = base / name
    return files, dirs


def same_content(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)
    sa, sb = a.stat(), b.stat()
    if sa.st_size != sb.st_size:
        return False
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            ca, cb = fa.read(1 << 20), fb.read(1 << 20)
            if ca != cb:
                return False
            if not ca:
                return True


def remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    else:
        p.unlink()


def sync_tree(src: Path, dst: Path) -> dict[str, int]:
    """Make dst equal to src, like `rsync -a --delete --checksum`.

    Files whose content is unchanged are not touched, so their mtime stays what
    the index recorded and the indexer skips them without reading them. Changed
    files are copied with the release's own mtime (as rsync -a would); should
    that collide with the old (size, mtime) pair, the mtime is bumped so the
    indexer, which trusts size and mtime, still sees the change.
    """
    dst.mkdir(parents=True, exist_ok=True)
    sfiles, sdirs = list_tree(src)
    sfiles = {r: p for r, p in sfiles.items() if not is_packaging_only(r)}
    sdirs = {r for r in sdirs if not is_packaging_only(r)}
    dfiles, ddirs = list_tree(dst)
    stats = {"added": 0, "changed": 0, "deleted": 0, "unchanged": 0}

    # Deletions first, deepest first, so a path that turns from file into
    # folder (or back) is free before it is created.
    for rel in sorted(dfiles, reverse=True):
        if rel not in sfiles:
            remove(dst / rel)
            stats["deleted"] += 1
    for rel in sorted(ddirs, reverse=True):
        if rel not in sdirs and (dst / rel).exists():
            remove(dst / rel)

    for rel in sorted(sdirs):
        d = dst / rel
        if d.exists() and (d.is_symlink() or not d.is_dir()):
            remove(d)
        d.mkdir(parents=True, exist_ok=True)

    for rel in sorted(sfiles):
        s, d = sfiles[rel], dst / rel
        old = None
        if d.is_symlink() or d.exists():
            if not d.is_symlink() and d.is_dir():
                shutil.rmtree(d)
            elif same_content(s, d):
                stats["unchanged"] += 1
                continue
            else:
                if not d.is_symlink():
                    st = d.stat()
                    old = (st.st_size, st.st_mtime_ns)
                d.unlink()
        if s.is_symlink():
            os.symlink(os.readlink(s), d)
        else:
            shutil.copy2(s, d)
            st = d.stat()
            if old is not None and (st.st_size, st.st_mtime_ns) == old:
                now = time.time_ns()
                os.utime(d, ns=(now, now))
        stats["changed" if old is not None else "added"] += 1
    return stats


# ---------------------------------------------------------------- indexing

def run_index(binary: Path, tree: Path, db: Path) -> tuple[float, dict | None]:
    cmd = [str(binary), "index", str(tree), "--db", str(db), "--no-artifact", "--json"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=sys.stderr)
    elapsed = time.monotonic() - t0
    if r.returncode != 0:
        die(f"`{' '.join(cmd)}` failed (exit {r.returncode})")
    try:
        info = json.loads(r.stdout)
    except json.JSONDecodeError:
        # The numbers that matter here are measured by this script; the
        # indexer's own JSON is only kept for reference.
        info = None
    return elapsed, info


# ---------------------------------------------------------------- eval

def fake_eval(tasks: list[dict], tree: Path, ks: list[int], budgets: list[int]) -> dict:
    """A result shaped like `indexer eval --json`, derived from hashes of task ids.

    Gold-file presence is checked against the real working tree, so exclusions
    are genuine; ranks and latencies are not. It exists to exercise the
    aggregation before `indexer eval` does.
    """
    systems = ["indexer", "bm25"]
    out_tasks = []
    excluded = []
    for t in tasks:
        present = [g for g in t["gold_files"] if (tree / g).is_file()]
        missing = [g for g in t["gold_files"] if not (tree / g).is_file()]
        is_excl = not present
        if is_excl:
            excluded.append(t["id"])
        results = {}
        for sysname in systems:
            h = int.from_bytes(hashlib.sha256(f"{sysname}\0{t['id']}".encode()).digest()[:8], "big")
            r = h % 14 + 1  # 1..14; ranks above 10 stand for "not in the top 10"
            rank = None if (is_excl or r > 10) else r
            top = [f"django/fake/{sysname}_{i}.py" for i in range(1, 11)]
            if rank is not None:
                top[rank - 1] = present[0]
            results[sysname] = {
                "rank": rank,
                "reciprocal_rank": 0.0 if rank is None else 1.0 / rank,
                "hit_at": {str(k): rank is not None and rank <= k for k in ks},
                # Pretend a budget of B tokens holds about B/4000 files.
                "in_budget": {str(b): rank is not None and rank <= b // 4000 for b in budgets},
                "latency_ms": round(2.0 + (h >> 16) % 5000 / 100.0, 2),
                "top": top,
            }
        out_tasks.append({"id": t["id"], "gold_files": present, "missing_gold_files": missing,
                          "excluded": is_excl, "results": results})
    doc = {"systems": systems, "k": ks, "budgets": budgets, "tasks": out_tasks, "excluded": excluded}
    doc["summary"] = summarize(doc["tasks"], systems, ks, budgets)
    return doc


def run_eval(binary: Path, tasks_file: Path, db: Path, k_arg: str | None, budgets_arg: str | None,
             extra: tuple[str, ...]) -> dict:
    cmd = [str(binary), "eval", str(tasks_file), "--db", str(db), "--json"]
    if k_arg is not None:
        cmd += ["--k", k_arg]
    if budgets_arg is not None:
        cmd += ["--budgets", budgets_arg]
    cmd += list(extra)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=sys.stderr)
    if r.returncode != 0:
        die(f"`{' '.join(cmd)}` failed (exit {r.returncode})"
            + ("; is `indexer eval` built into this binary? --fake-eval runs without it"
               if r.returncode == 2 else ""))
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError as e:
        die(f"`{' '.join(cmd)}` printed no valid JSON ({e}); first bytes: {r.stdout[:200]!r}")


def need(obj, key, where: str, typ=None):
    if not isinstance(obj, dict) or key not in obj:
        die(f"indexer eval output: {where} lacks key {key!r}")
    val = obj[key]
    if typ is not None and not isinstance(val, typ):
        die(f"indexer eval output: {where}.{key} should be {typ.__name__}, got {type(val).__name__}")
    return val


def validate_eval(doc: dict, release: str, task_ids: list[str], ks: list[int], budgets: list[int]) -> list[dict]:
    """Check the eval output has what the aggregation reads; return its tasks."""
    where = f"[{release}]"
    systems = need(doc, "systems", where, list)
    if not systems or not all(isinstance(s, str) for s in systems):
        die(f"indexer eval output: {where}.systems should be a non-empty list of names")
    got_k = need(doc, "k", where, list)
    got_b = need(doc, "budgets", where, list)
    if got_k != ks:
        die(f"indexer eval output: {where}.k is {got_k}, expected {ks}")
    if got_b != budgets:
        die(f"indexer eval output: {where}.budgets is {got_b}, expected {budgets}")
    tasks = need(doc, "tasks", where, list)
    need(doc, "summary", where, dict)
    need(doc, "excluded", where, list)
    ids = [need(t, "id", f"{where}.tasks[{i}]", str) for i, t in enumerate(tasks)]
    if sorted(ids) != sorted(task_ids):
        die(f"indexer eval output: {where} task ids differ from the input; "
            f"missing {sorted(set(task_ids) - set(ids))}, unexpected {sorted(set(ids) - set(task_ids))}")
    for t in tasks:
        tw = f"{where}.tasks[{t['id']}]"
        need(t, "gold_files", tw, list)
        need(t, "missing_gold_files", tw, list)
        # An excluded task has nothing to rank, so its results are not read.
        if need(t, "excluded", tw, bool):
            continue
        res = need(t, "results", tw, dict)
        for s in systems:
            r = need(res, s, f"{tw}.results", dict)
            sw = f"{tw}.results.{s}"
            for key in RESULT_KEYS:
                need(r, key, sw)
            if r["rank"] is not None and (not isinstance(r["rank"], int) or r["rank"] < 1):
                die(f"indexer eval output: {sw}.rank should be a positive integer or null, got {r['rank']!r}")
            if not isinstance(r["reciprocal_rank"], (int, float)):
                die(f"indexer eval output: {sw}.reciprocal_rank should be a number")
            if not isinstance(r["latency_ms"], (int, float)):
                die(f"indexer eval output: {sw}.latency_ms should be a number")
            for k in ks:
                need(need(r, "hit_at", sw, dict), str(k), f"{sw}.hit_at", bool)
            for b in budgets:
                need(need(r, "in_budget", sw, dict), str(b), f"{sw}.in_budget", bool)
    return tasks


# ---------------------------------------------------------------- summary

def percentile(vals: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    s = sorted(vals)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(tasks: list[dict], systems: list[str], ks: list[int], budgets: list[int]) -> dict:
    """Summary over per-task results, never over other summaries."""
    live = [t for t in tasks if not t["excluded"]]
    out = {}
    for s in systems:
        rs = [t["results"][s] for t in live]
        n = len(rs)
        mean = (lambda xs: sum(xs) / n) if n else (lambda xs: float("nan"))
        lat = [float(r["latency_ms"]) for r in rs]
        out[s] = {
            "tasks": n,
            "acc_at": {str(k): mean([1.0 if r["hit_at"][str(k)] else 0.0 for r in rs]) for k in ks},
            "mrr": mean([0.0 if r["rank"] is None else float(r["reciprocal_rank"]) for r in rs]),
            "in_budget_recall": {str(b): mean([1.0 if r["in_budget"][str(b)] else 0.0 for r in rs])
                                 for b in budgets},
            "latency_ms": {"median": statistics.median(lat) if lat else float("nan"),
                           "p95": percentile(lat, 0.95)},
        }
    return out


def check_release_summary(release: str, doc: dict, mine: dict) -> None:
    """Warn when the eval's own summary disagrees with the one recomputed here.

    Latency percentiles are left out: the two sides may interpolate differently.
    """
    theirs = doc.get("summary", {})
    for s, m in mine.items():
        t = theirs.get(s)
        if not isinstance(t, dict):
            log(f"[{release}] warning: eval summary has no entry for {s}")
            continue
        pairs = [("tasks", t.get("tasks"), m["tasks"]), ("mrr", t.get("mrr"), m["mrr"])]
        pairs += [(f"acc_at.{k}", (t.get("acc_at") or {}).get(k), v) for k, v in m["acc_at"].items()]
        pairs += [(f"in_budget_recall.{b}", (t.get("in_budget_recall") or {}).get(b), v)
                  for b, v in m["in_budget_recall"].items()]
        for name, a, b in pairs:
            # indexer eval rounds shares to 4 decimals.
            if not isinstance(a, (int, float)) or abs(a - b) > 1e-4:
                log(f"[{release}] warning: {s} {name}: eval says {a!r}, recomputed {b!r}")


def fmt_budget(b: int) -> str:
    return f"{b // 1000}k" if b % 1000 == 0 else f"{b / 1000:g}k"


def fmt_secs(x: float) -> str:
    return f"{x:.1f} s"


def gold_file_notes(report: dict) -> list[str]:
    """Markdown lines on excluded tasks and gold files missing from their release."""
    lines = []
    if report["excluded"]:
        lines.append("Excluded (every gold file missing from the release's index):\n")
        for e in report["excluded"]:
            lines.append(f"- `{e['id']}` ({e['release']}): {', '.join(f'`{g}`' for g in e['missing_gold_files'])}")
        lines.append("")
    n_gold = sum(len(t["task_gold_files"]) for t in report["tasks"])
    lines.append(f"Gold files absent from their release's sdist: {len(report['gold_files_not_in_sdist'])} "
                 f"of {n_gold}.\n")
    partial = [t for t in report["tasks"] if not t["excluded"] and t["missing_gold_files"]]
    if partial:
        lines.append("Evaluated on their remaining gold files (some gold files missing from the release):\n")
        for t in partial:
            lines.append(f"- `{t['id']}` ({t['release']}): {', '.join(f'`{g}`' for g in t['missing_gold_files'])}")
        lines.append("")
    return lines


def index_times(report: dict) -> list[str]:
    """Markdown table of the index time of each release."""
    lines = []
    lines.append("Index time per release (one database, updated incrementally in version order):\n")
    lines.append("| Release | Tasks | Files added | changed | deleted | Index time |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for r in report["releases"]:
        sy = r["sync"]
        lines.append(f"| {r['release']} | {r['tasks']} | {sy['added']} | {sy['changed']} | {sy['deleted']} "
                     f"| {fmt_secs(r['index_seconds'])} |")
    lines.append("")
    return lines


def markdown(report: dict) -> str:
    ks, budgets, systems = report["k"], report["budgets"], report["systems"]
    summ = report["summary"]
    head = ["System"] + [f"Acc@{k}" for k in ks] + ["MRR"] + [f"recall@{fmt_budget(b)}" for b in budgets] \
        + ["median ms", "p95 ms"]
    lines = []
    if report["fake_eval"]:
        lines.append("> **Synthetic results (--fake-eval)**: ranks and latencies below are made up; "
                     "only the exclusions and index times are real.\n")
    n_live = report["tasks_evaluated"]
    lines.append(f"Django, SWE-bench Lite: {n_live} tasks evaluated over {len(report['releases'])} releases "
                 f"({report['tasks_total']} tasks, {len(report['excluded'])} excluded).\n")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for s in systems:
        m = summ[s]
        row = [s] + [f"{m['acc_at'][str(k)]:.3f}" for k in ks] + [f"{m['mrr']:.3f}"] \
            + [f"{m['in_budget_recall'][str(b)]:.3f}" for b in budgets] \
            + [f"{m['latency_ms']['median']:.1f}", f"{m['latency_ms']['p95']:.1f}"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines += gold_file_notes(report)
    lines += index_times(report)
    return "\n".join(lines)


# ---------------------------------------------------------------- map and pack modes

def _unit(*parts: str) -> float:
    """A number in [0, 1) drawn from a hash of `parts`."""
    h = hashlib.sha256("\0".join(parts).encode()).digest()[:8]
    return int.from_bytes(h, "big") / 2.0 ** 64


def _fake_qualified_name(symbol: str) -> str:
    """`django/db/models/query.py::QuerySet.update` as `django.db.models.query.QuerySet.update`."""
    path, name = symbol.split("::", 1)
    module = path[:-3] if path.endswith(".py") else path
    if module.endswith("/__init__"):
        module = module[: -len("/__init__")]
    return f"{module.replace('/', '.')}.{name}"


def fake_eval_context(tasks: list[dict], tree: Path, mode: str, budgets: list[int]) -> dict:
    """A result shaped like `indexer eval --mode map|pack --json`, derived from hashes of task ids.

    Gold-file presence (hence exclusion) is checked against the real working tree, and a
    gold symbol counts as found when its file is there; every other number is made up.
    Hits grow with the budget, so the aggregation sees plausible curves.
    """
    out_tasks = []
    excluded = []
    for t in tasks:
        tid = t["id"]
        present = [g for g in t["gold_files"] if (tree / g).is_file()]
        missing = [g for g in t["gold_files"] if not (tree / g).is_file()]
        symbols, missing_symbols = [], []
        for sym in t.get("gold_symbols") or []:
            if "::" not in sym or sym.split("::", 1)[1].startswith("impl:"):
                continue
            if (tree / sym.split("::", 1)[0]).is_file():
                symbols.append(_fake_qualified_name(sym))
            else:
                missing_symbols.append(sym)
        is_excl = not present
        if is_excl:
            excluded.append(tid)
        results = {}
        if not is_excl:
            u_file, u_bm25, u_sym = (_unit(mode, what, tid) for what in ("file", "bm25", "symbol"))
            for b in budgets:
                gold_file = u_file < b / (b + 6000)
                tokens = int(b * (0.85 + 0.15 * _unit(mode, "tokens", tid, str(b))))
                results[str(b)] = {
                    "gold_file": gold_file,
                    "gold_symbol": (gold_file and u_sym < b / (b + 12000)) if symbols else None,
                    "bm25_gold_file": u_bm25 < b / (b + 15000),
                    "tokens": tokens,
                    "included": max(1, tokens // 350),
                    "latency_ms": round(20.0 + b / 200.0 * (0.5 + _unit(mode, "ms", tid, str(b))), 2),
                }
        out_tasks.append({"id": tid, "gold_files": present, "missing_gold_files": missing,
                          "gold_symbols": symbols, "missing_gold_symbols": missing_symbols,
                          "excluded": is_excl, "results": results})
    summary = {}
    for b in budgets:
        m = summarize_context(out_tasks, b)
        summary[str(b)] = {
            "tasks": m["tasks"],
            "gold_file_recall": round(m["gold_file_recall"] or 0.0, 4),
            "bm25_gold_file_recall": round(m["bm25_gold_file_recall"] or 0.0, 4),
            "tasks_naming_symbols": m["tasks_naming_symbols"],
            "gold_symbol_recall": round(m["gold_symbol_recall"] or 0.0, 4),
            "mean_tokens": round(m["mean_tokens"] or 0.0, 4),
            "median_ms": round(m["median_ms"] or 0.0, 2),
            "p95_ms": round(m["p95_ms"] or 0.0, 2),
        }
    return {"mode": mode, "budgets": budgets, "tasks": out_tasks, "summary": summary,
            "excluded": excluded, "load_ms": 0.0}


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def validate_eval_context(doc: dict, release: str, task_ids: list[str], mode: str,
                          budgets: list[int]) -> list[dict]:
    """Check the map/pack eval output has what the aggregation reads; return its tasks."""
    where = f"[{release}]"
    got_mode = need(doc, "mode", where, str)
    if got_mode != mode:
        die(f"indexer eval output: {where}.mode is {got_mode!r}, expected {mode!r}")
    got_b = need(doc, "budgets", where, list)
    if got_b != budgets:
        die(f"indexer eval output: {where}.budgets is {got_b}, expected {budgets}")
    tasks = need(doc, "tasks", where, list)
    summary = need(doc, "summary", where, dict)
    need(doc, "excluded", where, list)
    if not _is_number(need(doc, "load_ms", where)):
        die(f"indexer eval output: {where}.load_ms should be a number")
    ids = [need(t, "id", f"{where}.tasks[{i}]", str) for i, t in enumerate(tasks)]
    if sorted(ids) != sorted(task_ids):
        die(f"indexer eval output: {where} task ids differ from the input; "
            f"missing {sorted(set(task_ids) - set(ids))}, unexpected {sorted(set(ids) - set(task_ids))}")
    keys = [str(b) for b in budgets]
    for t in tasks:
        tw = f"{where}.tasks[{t['id']}]"
        for key in CONTEXT_TASK_LISTS:
            if not all(isinstance(x, str) for x in need(t, key, tw, list)):
                die(f"indexer eval output: {tw}.{key} should be a list of strings")
        is_excl = need(t, "excluded", tw, bool)
        res = need(t, "results", tw, dict)
        # An excluded task has nothing rendered, so its results are not read.
        if is_excl:
            continue
        if sorted(res) != sorted(keys):
            die(f"indexer eval output: {tw}.results has budgets {sorted(res)}, expected {keys}")
        names_symbol = bool(t["gold_symbols"])
        for b in keys:
            r = need(res, b, f"{tw}.results", dict)
            rw = f"{tw}.results.{b}"
            need(r, "gold_file", rw, bool)
            need(r, "bm25_gold_file", rw, bool)
            gs = need(r, "gold_symbol", rw)
            if gs is not None and not isinstance(gs, bool):
                die(f"indexer eval output: {rw}.gold_symbol should be true, false or null, got {gs!r}")
            if (gs is None) == names_symbol:
                die(f"indexer eval output: {rw}.gold_symbol is {gs!r} but the task has "
                    f"{len(t['gold_symbols'])} gold symbols in the index (null means none)")
            for key in ("tokens", "included"):
                if not _is_count(need(r, key, rw)):
                    die(f"indexer eval output: {rw}.{key} should be a non-negative integer, got {r[key]!r}")
            if not _is_number(need(r, "latency_ms", rw)):
                die(f"indexer eval output: {rw}.latency_ms should be a number")
            if r["tokens"] > int(b):
                log(f"{where} warning: {t['id']} at budget {b}: the rendering has {r['tokens']} tokens")
    for b in keys:
        s = need(summary, b, f"{where}.summary", dict)
        for key in CONTEXT_SUMMARY_KEYS:
            if not _is_number(need(s, key, f"{where}.summary.{b}")):
                die(f"indexer eval output: {where}.summary.{b}.{key} should be a number")
    return tasks


def summarize_context(tasks: list[dict], budget: int) -> dict:
    """Summary at one budget over per-task results, never over other summaries.

    Shares and statistics over no task are None.
    """
    b = str(budget)
    rs = [t["results"][b] for t in tasks if not t["excluded"]]
    n = len(rs)
    share = (lambda k, of: k / of if of else None)
    files = sum(1 for r in rs if r["gold_file"])
    bm25 = sum(1 for r in rs if r["bm25_gold_file"])
    naming = [r["gold_symbol"] for r in rs if r["gold_symbol"] is not None]
    lat = [float(r["latency_ms"]) for r in rs]
    file_recall, bm25_recall = share(files, n), share(bm25, n)
    return {
        "tasks": n,
        "gold_file_hits": files,
        "gold_file_recall": file_recall,
        "bm25_gold_file_hits": bm25,
        "bm25_gold_file_recall": bm25_recall,
        "difference_points": None if n == 0 else 100.0 * (file_recall - bm25_recall),
        # Head to head on the same tasks.
        "rendering_only": sum(1 for r in rs if r["gold_file"] and not r["bm25_gold_file"]),
        "bm25_only": sum(1 for r in rs if r["bm25_gold_file"] and not r["gold_file"]),
        "both": sum(1 for r in rs if r["gold_file"] and r["bm25_gold_file"]),
        "neither": sum(1 for r in rs if not r["gold_file"] and not r["bm25_gold_file"]),
        "tasks_naming_symbols": len(naming),
        "gold_symbol_hits": sum(1 for h in naming if h),
        "gold_symbol_recall": share(sum(1 for h in naming if h), len(naming)),
        "mean_tokens": share(sum(r["tokens"] for r in rs), n),
        "mean_included": share(sum(r["included"] for r in rs), n),
        "median_ms": statistics.median(lat) if lat else None,
        "p95_ms": percentile(lat, 0.95) if lat else None,
    }


def check_release_summary_context(release: str, doc: dict, budgets: list[int], tasks: list[dict]) -> None:
    """Warn when the eval's own per-budget summary disagrees with the one recomputed here.

    The eval writes 0 for a share or statistic over no task, rounds shares and mean tokens
    to 4 decimals and latencies to 2.
    """
    theirs = doc.get("summary", {})
    for b in budgets:
        t = theirs.get(str(b))
        m = summarize_context(tasks, b)
        if not isinstance(t, dict):
            log(f"[{release}] warning: eval summary has no entry for budget {b}")
            continue
        for key in CONTEXT_SUMMARY_KEYS:
            mine = m[key] if m[key] is not None else 0.0
            tol = 0.0 if key in ("tasks", "tasks_naming_symbols") else 0.006 if key.endswith("_ms") else 1e-4
            a = t.get(key)
            if not _is_number(a) or abs(a - mine) > tol:
                log(f"[{release}] warning: budget {b} {key}: eval says {a!r}, recomputed {mine!r}")


def _fmt_share(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _fmt_num(x: float | None, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def markdown_context(report: dict) -> str:
    mode, budgets, summ = report["mode"], report["budgets"], report["summary"]
    lines = []
    if report["fake_eval"]:
        lines.append("> **Synthetic results (--fake-eval)**: hits, tokens and latencies below are made up; "
                     "only the exclusions and index times are real.\n")
    n_live = report["tasks_evaluated"]
    what = "repo map" if mode == "map" else "query pack"
    lines.append(f"Django, SWE-bench Lite, `--mode {mode}` (the {what} of each task's text; "
                 f"tokenizer {report['tokenizer']}): {n_live} tasks evaluated over {len(report['releases'])} "
                 f"releases ({report['tasks_total']} tasks, {len(report['excluded'])} excluded).\n")
    naming = {summ[str(b)]["tasks_naming_symbols"] for b in budgets}
    one_naming = len(naming) == 1
    sym_head = (f"gold symbol (of {next(iter(naming))} tasks naming one)" if one_naming
                else "gold symbol (of the tasks naming one)")
    head = ["budget", f"gold file ({mode})", "BM25 whole files", "difference (points)", sym_head,
            "mean tokens", "median ms", "p95 ms"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for b in budgets:
        m = summ[str(b)]
        sym = _fmt_share(m["gold_symbol_recall"])
        if not one_naming:
            sym += f" of {m['tasks_naming_symbols']}"
        row = [fmt_budget(b), _fmt_share(m["gold_file_recall"]), _fmt_share(m["bm25_gold_file_recall"]),
               _fmt_num(m["difference_points"], "+.1f"), sym, _fmt_num(m["mean_tokens"], ".0f"),
               _fmt_num(m["median_ms"], ".1f"), _fmt_num(m["p95_ms"], ".1f")]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(f"gold file: the {what} holds code from a gold file; BM25 whole files: a gold file among "
                 "the whole files, ranked by BM25 over the task text, that fit in the same budget; "
                 + ("gold symbol: the map has a gold symbol's own entry."
                    if mode == "map" else
                    "gold symbol: the pack holds a gold symbol's code in full (itself or a definition "
                    "around it included in full).")
                 + "\n")
    lines.append("Tasks with a gold file, head to head on the same tasks:\n")
    lines.append(f"| budget | {mode} only | BM25 only | both | neither |")
    lines.append("|---|---:|---:|---:|---:|")
    for b in budgets:
        m = summ[str(b)]
        lines.append(f"| {fmt_budget(b)} | {m['rendering_only']} | {m['bm25_only']} | {m['both']} "
                     f"| {m['neither']} |")
    lines.append("")
    lines += gold_file_notes(report)
    live = [t for t in report["tasks"] if not t["excluded"]]
    n_found = sum(len(t["gold_symbols"]) for t in live)
    n_missing = sum(len(t["missing_gold_symbols"]) for t in live)
    lines.append(f"Gold symbols of the evaluated tasks: {n_found} found in the index, {n_missing} not found "
                 f"(module-level `impl:` entries name no symbol and are not counted); "
                 f"{sum(1 for t in live if t['gold_symbols'])} tasks name at least one found symbol.\n")
    lines += index_times(report)
    return "\n".join(lines)


def write_tasks_tsv_context(path: Path, tasks: list[dict], budgets: list[int]) -> None:
    def flag(x) -> str:
        return "" if x is None else ("1" if x else "0")

    cols = ["id", "release", "gold", "excluded"]
    for b in budgets:
        cols += [f"file_{b}", f"symbol_{b}", f"bm25_{b}"]
    with path.open("w", encoding="utf-8") as f:
        f.write("\t".join(cols) + "\n")
        for t in tasks:
            row = [t["id"], t["release"], ",".join(t["task_gold_files"]), "yes" if t["excluded"] else "no"]
            for b in budgets:
                r = None if t["excluded"] else t["results"][str(b)]
                row += ["", "", ""] if r is None else \
                    [flag(r["gold_file"]), flag(r["gold_symbol"]), flag(r["bm25_gold_file"])]
            f.write("\t".join(row) + "\n")


def eval_release(binary: Path, rtasks: list[dict], release: str, db: Path, scratch_dir: Path,
                 k_arg: str | None, budgets_arg: str | None, extra: tuple[str, ...]) -> dict:
    """`indexer eval` on one release's tasks, written to a scratch jsonl."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", prefix=f"tasks-{release}-", dir=scratch_dir,
                                     delete=False, encoding="utf-8") as f:
        for t in rtasks:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
        tmp_tasks = Path(f.name)
    try:
        log(f"[{release}] evaluating {len(rtasks)} tasks")
        return run_eval(binary, tmp_tasks, db, k_arg, budgets_arg, extra)
    finally:
        tmp_tasks.unlink()


def write_context_report(args, binary: Path, work: Path, budgets: list[int], all_tasks: list[dict],
                         release_info: list[dict]) -> None:
    """report.json, tasks.tsv and the Markdown report of --mode map or pack."""
    excluded = [{"id": t["id"], "release": t["release"], "missing_gold_files": t["missing_gold_files"],
                 "reason": "every gold file is missing from the release's index"}
                for t in all_tasks if t["excluded"]]
    report = {
        "fake_eval": args.fake_eval,
        "binary": str(binary),
        "mode": args.mode,
        "tokenizer": args.tokenizer or DEFAULT_TOKENIZER,
        "budgets": budgets,
        "tasks_total": len(all_tasks),
        "tasks_evaluated": sum(1 for t in all_tasks if not t["excluded"]),
        "summary": {str(b): summarize_context(all_tasks, b) for b in budgets},
        "excluded": excluded,
        "gold_files_not_in_sdist": [{"id": t["id"], "release": t["release"], "file": g}
                                    for t in all_tasks for g in t["not_in_sdist"]],
        "gold_symbols_not_in_index": [{"id": t["id"], "release": t["release"], "symbol": g}
                                      for t in all_tasks for g in t["missing_gold_symbols"]],
        "releases": release_info,
        "tasks": all_tasks,
    }
    (work / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_tasks_tsv_context(work / "tasks.tsv", all_tasks, budgets)
    print(markdown_context(report))


# ---------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(
        description="Run `indexer eval` on every Django release the SWE-bench Lite tasks name, "
                    "moving one index incrementally from release to release, and print a Markdown "
                    "report on stdout (progress on stderr).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Outputs in WORK: report.json (all tasks, recomputed summary, index times), "
               "tasks.tsv (id, release, gold files, excluded, then with --mode files the rank per "
               "system, with --mode map or pack file_B, symbol_B and bm25_B per budget B: 1 when the "
               "rendering, or BM25's whole files, hold a gold file or gold symbol, 0 when not, empty "
               "when not measured).\n"
               "Caches in WORK: sdist/VERSION/ (downloads), src/VERSION/ (unpacked), "
               "tree/ (the indexed working tree), django.db.")
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help=f"tasks jsonl (default: {DEFAULT_TASKS})")
    ap.add_argument("--work", default=DEFAULT_WORK, help=f"work and cache folder (default: {DEFAULT_WORK})")
    ap.add_argument("--bin", required=True, help="the indexer binary (benches/eval-django.sh passes target/release/indexer, "
                                                "building it when missing)")
    ap.add_argument("--mode", choices=MODES, default="files",
                    help="files: rank files against BM25 over whole files (Acc@k, MRR, in-budget recall); "
                         "map or pack: what the repo map or the query pack of each task's text holds at "
                         "each budget, beside BM25's whole files in the same budget; passed to indexer "
                         "eval (default: files)")
    ap.add_argument("--k", default=None,
                    help=f"cut-offs for Acc@k, passed to indexer eval; --mode files only (default there: {DEFAULT_K})")
    ap.add_argument("--budgets", default=None,
                    help="token budgets for in-budget recall (files) or of each rendering (map, pack), "
                         f"passed to indexer eval (default there: {DEFAULT_BUDGETS})")
    ap.add_argument("--tokenizer", choices=("o200k", "cl100k"), default=None,
                    help="tokenizer of the map and pack budgets, passed to indexer eval; --mode map or "
                         f"pack only (default there: {DEFAULT_TOKENIZER})")
    ap.add_argument("--fake-eval", action="store_true",
                    help="do not call `indexer eval`: synthesize its JSON (of the chosen --mode) "
                         "deterministically from hashes of the task ids (gold-file presence is checked "
                         "against the real release tree). "
                         "Downloads and indexing still run for real. For testing the aggregation.")
    args = ap.parse_args()
    context_mode = args.mode != "files"
    if context_mode and args.k is not None:
        die(f"--k is for --mode files; --mode {args.mode} measures token budgets only (--budgets)")
    if not context_mode and args.tokenizer is not None:
        die("--tokenizer is for --mode map or pack")

    ks = parse_int_list(args.k if args.k is not None else DEFAULT_K, "k")
    budgets = parse_int_list(args.budgets if args.budgets is not None else DEFAULT_BUDGETS, "budgets")
    binary = Path(args.bin).resolve()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        die(f"no executable indexer at {binary}")
    tasks_path = Path(args.tasks)
    if not tasks_path.is_file():
        die(f"no tasks file at {tasks_path}")
    work = Path(os.path.expanduser(args.work)).resolve()
    work.mkdir(parents=True, exist_ok=True)
    tree = work / "tree"
    db = work / "django.db"

    t_start = time.monotonic()
    tasks = load_tasks(tasks_path)
    by_release: dict[str, list[dict]] = {}
    for t in tasks:
        by_release.setdefault(t["release"], []).append(t)
    releases = sorted(by_release, key=version_key)
    log(f"{len(tasks)} tasks over {len(releases)} releases: {', '.join(releases)}")

    # Fetch everything first: a network failure then stops the run before any
    # time is spent indexing.
    unpacked = {}
    sdists = {}
    for v in releases:
        sdists[v] = fetch_sdist(work, v)
        unpacked[v] = unpack_sdist(work, v, sdists[v])

    all_tasks: list[dict] = []
    release_info: list[dict] = []
    systems: list[str] | None = None
    scratch_dir = work / "tmp"
    scratch_dir.mkdir(exist_ok=True)
    for v in releases:
        rtasks = by_release[v]
        t0 = time.monotonic()
        sync = sync_tree(unpacked[v], tree)
        sync_s = time.monotonic() - t0
        log(f"[{v}] tree synced in {sync_s:.1f} s: {sync['added']} added, {sync['changed']} changed, "
            f"{sync['deleted']} deleted, {sync['unchanged']} unchanged")
        not_in_sdist = {t["id"]: [g for g in t["gold_files"] if not (tree / g).is_file()] for t in rtasks}
        gold_of = {t["id"]: list(t["gold_files"]) for t in rtasks}
        symbols_of = {t["id"]: list(t.get("gold_symbols") or []) for t in rtasks}

        log(f"[{v}] indexing")
        index_s, index_json = run_index(binary, tree, db)
        log(f"[{v}] indexed in {index_s:.1f} s")

        if context_mode:
            t0 = time.monotonic()
            if args.fake_eval:
                doc = fake_eval_context(rtasks, tree, args.mode, budgets)
            else:
                extra = ("--mode", args.mode)
                if args.tokenizer is not None:
                    extra += ("--tokenizer", args.tokenizer)
                doc = eval_release(binary, rtasks, v, db, scratch_dir, None, args.budgets or DEFAULT_BUDGETS,
                                   extra)
            eval_s = time.monotonic() - t0
            etasks = validate_eval_context(doc, v, [t["id"] for t in rtasks], args.mode, budgets)
            check_release_summary_context(v, doc, budgets, etasks)
            listed = set(doc["excluded"])
            flagged = {t["id"] for t in etasks if t["excluded"]}
            if listed != flagged:
                log(f"[{v}] warning: top-level excluded {sorted(listed)} differs from tasks flagged excluded "
                    f"{sorted(flagged)}; using the per-task flags")
            log(f"[{v}] evaluated in {eval_s:.1f} s")
            for t in sorted(etasks, key=lambda t: t["id"]):
                t = dict(t)
                t["release"] = v
                t["not_in_sdist"] = not_in_sdist[t["id"]]
                t["task_gold_files"] = gold_of[t["id"]]
                t["task_gold_symbols"] = symbols_of[t["id"]]
                all_tasks.append(t)
            release_info.append({"release": v, "sdist": sdists[v].name, "sdist_bytes": sdists[v].stat().st_size,
                                 "tasks": len(rtasks), "sync": sync, "sync_seconds": round(sync_s, 3),
                                 "index_seconds": round(index_s, 3), "index": index_json,
                                 "eval_seconds": round(eval_s, 3), "load_ms": doc["load_ms"]})
            continue

        if args.fake_eval:
            doc = fake_eval(rtasks, tree, ks, budgets)
        else:
            doc = eval_release(binary, rtasks, v, db, scratch_dir, args.k or DEFAULT_K,
                               args.budgets or DEFAULT_BUDGETS, ())
        etasks = validate_eval(doc, v, [t["id"] for t in rtasks], ks, budgets)
        if systems is None:
            systems = list(doc["systems"])
        elif list(doc["systems"]) != systems:
            die(f"indexer eval output: [{v}] systems {doc['systems']} differ from earlier releases' {systems}")
        check_release_summary(v, doc, summarize(etasks, systems, ks, budgets))
        listed = set(doc["excluded"])
        flagged = {t["id"] for t in etasks if t["excluded"]}
        if listed != flagged:
            log(f"[{v}] warning: top-level excluded {sorted(listed)} differs from tasks flagged excluded "
                f"{sorted(flagged)}; using the per-task flags")

        for t in sorted(etasks, key=lambda t: t["id"]):
            t = dict(t)
            t["release"] = v
            t["not_in_sdist"] = not_in_sdist[t["id"]]
            t["task_gold_files"] = gold_of[t["id"]]
            all_tasks.append(t)
        release_info.append({"release": v, "sdist": sdists[v].name, "sdist_bytes": sdists[v].stat().st_size,
                             "tasks": len(rtasks), "sync": sync, "sync_seconds": round(sync_s, 3),
                             "index_seconds": round(index_s, 3), "index": index_json})

    if context_mode:
        write_context_report(args, binary, work, budgets, all_tasks, release_info)
        log(f"wrote {work / 'report.json'} and {work / 'tasks.tsv'}; total {time.monotonic() - t_start:.1f} s")
        return

    assert systems is not None
    excluded = [{"id": t["id"], "release": t["release"], "missing_gold_files": t["missing_gold_files"],
                 "reason": "every gold file is missing from the release's index"}
                for t in all_tasks if t["excluded"]]
    report = {
        "fake_eval": args.fake_eval,
        "binary": str(binary),
        "systems": systems,
        "k": ks,
        "budgets": budgets,
        "tasks_total": len(all_tasks),
        "tasks_evaluated": sum(1 for t in all_tasks if not t["excluded"]),
        "summary": summarize(all_tasks, systems, ks, budgets),
        "excluded": excluded,
        "gold_files_not_in_sdist": [{"id": t["id"], "release": t["release"], "file": g}
                                    for t in all_tasks for g in t["not_in_sdist"]],
        "releases": release_info,
        "tasks": all_tasks,
    }
    (work / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with (work / "tasks.tsv").open("w", encoding="utf-8") as f:
        f.write("\t".join(["id", "release", "gold", "excluded"] + [f"rank_{s}" for s in systems]) + "\n")
        for t in all_tasks:
            ranks = ["" if t["excluded"] or t["results"][s]["rank"] is None else str(t["results"][s]["rank"])
                     for s in systems]
            f.write("\t".join([t["id"], t["release"], ",".join(t["task_gold_files"]),
                               "yes" if t["excluded"] else "no"] + ranks) + "\n")

    print(markdown(report))
    log(f"wrote {work / 'report.json'} and {work / 'tasks.tsv'}; total {time.monotonic() - t_start:.1f} s")


if __name__ == "__main__":
    main()
