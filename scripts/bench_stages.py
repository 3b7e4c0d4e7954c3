#!/usr/bin/env python3
"""Where a cold `indexer index` spends its time and memory, stage by stage, for two builds.

    scripts/bench_stages.py BEFORE_BIN AFTER_BIN CORPUS [--reps N]

Each build indexes a copy of the corpus (`../shared/corpora/fetch CORPUS`) from nothing (no
database, no artifact) with the defaults, `--reps` times, alternating the builds; `sync` runs
before each timed run. A build that writes the artifact in the background after returning
(`artifact_due` in its summary) is waited for before the next run, and that wait is reported
on its own line. Prints a Markdown table of the median wall time, CPU time and peak memory of
every stage, as each build's `--json` summary reports them (`phases_ms`, `phases_cpu_ms`,
`phases_peak_rss_mb`), and of the whole command as `/usr/bin/time` sees it.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

STAGES = {
    "1_walk": "walk (and the artifact's decompression, when starting from one)",
    "2_extract_write": "read, parse and extract; write",
    "2_word_indexes": "word indexes' postings (a full build: started on their own thread)",
    "3_resolve": "resolve references (incremental)",
    "3_resolve_start": "load the graph for resolution, start its threads",
    "4_indexes": "secondary indexes (while resolving)",
    "5_unique_names": "unique qualified names",
    "5_word_indexes": "wait for the word indexes, copy them in",
    "7_resolve_store": "rest of resolution, store its edges, index them (the full text on its own thread)",
    "7_store_full_text": "wait for the full-text index, copy it in",
    "8_finish": "finish (journal mode, rename into place)",
    "9_artifact": "artifact export, in the run",
}


def run_once(binary, tree, work):
    db = work / "index.db"
    for p in work.glob("index.db*"):
        p.unlink()
    shutil.rmtree(tree / ".codebase-index", ignore_errors=True)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "xdg"))
    subprocess.run(["sync"], check=True)
    timing = work / "time.txt"
    out = subprocess.run(
        ["/usr/bin/time", "-o", str(timing), "-f", "%e %U %S %M",
         binary, "index", str(tree), "--db", str(db), "--json"],
        env=env, check=True, capture_output=True, text=True)
    summary = json.loads(out.stdout)
    wall, user, system, peak_kib = timing.read_text().split()
    total = {"wall": float(wall), "cpu": float(user) + float(system),
             "peak": int(peak_kib) // 1024}
    waited = None
    if summary.get("artifact_due"):
        start = time.monotonic()
        manifest = tree / ".codebase-index" / "artifact.json"
        while not manifest.exists():
            time.sleep(0.05)
        waited = time.monotonic() - start
    return summary, total, waited


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("corpus")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    repo = Path(__file__).resolve().parent.parent
    fetch = Path(os.environ.get("SHARED", repo.parent / "shared")) / "corpora" / "fetch"
    src = subprocess.run([str(fetch), args.corpus], check=True, capture_output=True,
                         text=True).stdout.strip().splitlines()[-1]
    builds = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
    runs = {name: [] for name in builds}
    with tempfile.TemporaryDirectory(prefix="indexer-stages.") as tmp:
        tmp = Path(tmp)
        tree = tmp / args.corpus
        shutil.copytree(src, tree, symlinks=True)
        for _ in range(args.reps):
            for name, binary in builds.items():
                runs[name].append(run_once(binary, tree, tmp))

    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    def cell(v, unit):
        if v is None:
            return ""
        return f"{v:.2f} s" if unit == "s" else f"{v:.0f} MiB"

    print(f"{args.corpus}, cold `indexer index` with the defaults, median of {args.reps} "
          f"runs each (before: `{args.before}`, after: `{args.after}`)")
    print()
    print("| stage | before: wall | CPU | peak memory | after: wall | CPU | peak memory |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for stage, label in STAGES.items():
        cells = []
        present = False
        for name in builds:
            summaries = [s for s, _, _ in runs[name]]
            wall = med([s["phases_ms"].get(stage) for s in summaries])
            cpu = med([s.get("phases_cpu_ms", {}).get(stage) for s in summaries])
            peak = med([s.get("phases_peak_rss_mb", {}).get(stage) for s in summaries])
            present |= wall is not None
            cells += [cell(wall and wall / 1000, "s"), cell(cpu and cpu / 1000, "s"),
                      cell(peak, "MiB")]
        if present:
            print(f"| {label} | " + " | ".join(cells) + " |")
    cells = []
    for name in builds:
        totals = [t for _, t, _ in runs[name]]
        cells += [cell(med([t["wall"] for t in totals]), "s"),
                  cell(med([t["cpu"] for t in totals]), "s"),
                  cell(med([t["peak"] for t in totals]), "MiB")]
    print("| **the whole command** | " + " | ".join(cells) + " |")
    for name in builds:
        waited = med([w for _, _, w in runs[name]])
        if waited is not None:
            print(f"\n{name}: the artifact, written in the background after the command "
                  f"returned, took another {waited:.2f} s")


if __name__ == "__main__":
    main()
