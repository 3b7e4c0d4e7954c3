#!/usr/bin/env python3
"""How often a whole-repository pack holds a task's gold file in full, with and without --task.

    scripts/repopack_task_eval.py TREE TASKS.jsonl [--budgets 50000,100000] [--indexer PATH]

TREE is an indexed tree (`indexer index TREE`); TASKS is JSON lines of {"id", "query",
"gold_files"} (the SWE-bench Django tasks in ../shared/eval/). For each task whose gold files
the tree holds, `indexer pack --all --json --budget B` runs once without a task and once with
the task's text (`--task -`); a task counts when one of its gold files is in the full layer.
Prints one row per budget: tasks counted, share without --task, share with it.
"""

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pack(indexer, tree, budget, task=None):
    args = [indexer, "pack", "--all", "--json", "--budget", str(budget)]
    if task is not None:
        args += ["--task", "-"]
    out = subprocess.run(args, cwd=tree, input=task or "", capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def tree_paths(tree):
    """Every path of a pack's tree: folders alike in one part are one key, `a/{x,y}/b`."""
    paths = set()
    for folder, names in tree.items():
        head, brace, rest = folder.partition("{")
        if brace:
            parts, _, tail = rest.partition("}")
            folders = [head + p + tail for p in parts.split(",")]
        else:
            folders = [folder]
        paths |= {f"{f}/{n}" if f != "." else n for f in folders for n in names}
    return paths


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tree", type=Path)
    p.add_argument("tasks", type=Path)
    p.add_argument("--budgets", default="50000,100000")
    p.add_argument("--indexer", default=str(ROOT / "target" / "release" / "indexer"))
    a = p.parse_args()
    tasks = [json.loads(line) for line in a.tasks.read_text().splitlines() if line.strip()]
    print("| budget | tasks | gold file in full, no task | with --task |")
    print("|---:|---:|---:|---:|")
    for budget in [int(b) for b in a.budgets.split(",")]:
        plain = pack(a.indexer, a.tree, budget)
        indexed = tree_paths(plain["tree"])
        full_plain = {f["path"] for f in plain["files"] if f["layer"] == "full"}
        counted = hit_plain = hit_task = 0
        for t in tasks:
            gold = [g for g in t["gold_files"] if g in indexed]
            if not gold:
                continue
            counted += 1
            hit_plain += any(g in full_plain for g in gold)
            with_task = pack(a.indexer, a.tree, budget, t["query"])
            full = {f["path"] for f in with_task["files"] if f["layer"] == "full"}
            hit_task += any(g in full for g in gold)
        print(f"| {budget} | {counted} | {hit_plain / counted:.1%} | {hit_task / counted:.1%} |")


if __name__ == "__main__":
    main()
