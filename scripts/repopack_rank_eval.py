#!/usr/bin/env python3
"""How early the whole-repository pack ranks the file a task's fix changed, with real history.

    scripts/repopack_rank_eval.py TASKS.jsonl REPO MIRROR [--cap 15] [--indexer LABEL=PATH ...]

TASKS is JSON lines in the evaluation task format ({"id", "repo", "base_commit", "gold_files",
...}: ../shared/eval/multiswe-visible.jsonl, mulocbench-visible.jsonl); REPO selects its tasks
(`owner/name`); MIRROR is a bare git mirror of it (the `fetch` tool's `.../repo` folder). For
each of the first CAP tasks the script clones the mirror at the task's base commit (history
included, which the pack's churn signal reads), indexes it, and packs it with a budget large
enough for every file, so the pack's `files` are the whole rank order. Each build named with
--indexer packs the same index; it prints per build the MRR of the first gold file's position
and the share of tasks with one in the first 5 and 20 files, without a task (the order a pack
gives every file before --task personalizes it).
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from repopack_task_eval import tree_paths

ROOT = Path(__file__).resolve().parent.parent
EVERY_FILE = "50000000"


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tasks", type=Path)
    p.add_argument("repo")
    p.add_argument("mirror", type=Path)
    p.add_argument("--cap", type=int, default=15)
    p.add_argument("--indexer", action="append", metavar="LABEL=PATH",
                   help=f"a build to compare (default: this={ROOT / 'target/release/indexer'})")
    a = p.parse_args()
    builds = [b.split("=", 1) for b in (a.indexer or [f"this={ROOT / 'target/release/indexer'}"])]
    tasks = [json.loads(line) for line in a.tasks.read_text().splitlines() if line.strip()]
    tasks = [t for t in tasks if t["repo"].lower() == a.repo.lower()][: a.cap]
    positions = {label: [] for label, _ in builds}
    with tempfile.TemporaryDirectory() as tmp:
        tree, cache = Path(tmp) / "tree", Path(tmp) / "cache"
        env = dict(os.environ, XDG_CACHE_HOME=str(cache))
        for t in tasks:
            shutil.rmtree(tree, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            run(["git", "clone", "-q", "--shared", "--no-checkout", str(a.mirror), str(tree)])
            run(["git", "-C", str(tree), "checkout", "-q", "--detach", t["base_commit"]])
            # One index for every build: the builds differ in how they rank, not what they read.
            run([builds[0][1], "index", ".", "--no-artifact"], cwd=tree, env=env)
            for label, indexer in builds:
                pack = json.loads(run([indexer, "pack", "--all", "--json", "--budget", EVERY_FILE],
                                      cwd=tree, env=env))
                order = [f["path"] for f in pack["files"] if not f.get("duplicate_of")]
                gold = [g for g in t["gold_files"] if g in tree_paths(pack["tree"])]
                ranks = [order.index(g) + 1 for g in gold if g in order]
                if ranks:
                    positions[label].append(min(ranks))
    print(f"| {a.repo} | tasks | MRR | in first 5 | in first 20 |")
    print("|---|---:|---:|---:|---:|")
    for label, ps in positions.items():
        n = len(ps) or 1
        print(f"| {label} | {len(ps)} | {sum(1 / x for x in ps) / n:.3f} | "
              f"{sum(x <= 5 for x in ps) / n:.0%} | {sum(x <= 20 for x in ps) / n:.0%} |")


if __name__ == "__main__":
    main()
