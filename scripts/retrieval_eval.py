#!/usr/bin/env python3
"""File-level retrieval on the evaluation sets: `rank-files`, `pack --query` and `map --query`
beside BM25 over the language's source files without tests, one table per set and language.

    scripts/retrieval_eval.py prepare-django WORK
    scripts/retrieval_eval.py SET=DATA:WORK [SET=DATA:WORK ...] [--sample N] [--seed S]
                              [--indexer PATH] [--label NAME] [--min-tasks 15]

DATA is a task file of ../shared/eval/ and WORK the folder `sweval.py prepare` materialized its
trees in (see ../shared/eval/README.md, "Running the evaluation"), e.g.

    scripts/retrieval_eval.py multiswe=../shared/eval/multiswe-visible.jsonl:/work/evalwork/multiswe

The Django tasks (../shared/eval/swebench-lite-django.jsonl) have no mirror: their trees are
the Django releases the tasks name, from PyPI. `scripts/retrieval_eval.py prepare-django WORK`
downloads those sdists (pip), writes the tasks in the task format to WORK/tasks.jsonl and has
sweval unpack one tree per task; then pass `django=WORK/tasks.jsonl:WORK`.

For each set, sweval runs its `bm25-files-notests` baseline and then this tool as a command
ranker on the same instances: each tree is indexed once (a database in sweval's scratch folder,
removed after its query), `rank-files` gives the ranked list sweval scores, and the same
database answers `pack --query` and `map --query` at 13,000 tokens, whose files are kept beside
it. Printed per set, and per language with at least --min-tasks tasks: Acc@1/5/10 and MRR of
the first gold file (sweval's rank), and the share of tasks whose 13k pack or map names a gold
file. sweval's own reports (with R@B and All@k) stay in WORK/results/.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWEVAL = ROOT.parent / "shared" / "eval" / "sweval.py"
DJANGO = ROOT.parent / "shared" / "eval" / "swebench-lite-django.jsonl"
BUDGET = "13000"
LIMIT = "100"


def query(indexer, tree, query_file, instance, work):
    """sweval's command ranker: prints the ranked paths, keeps the pack's and map's files."""
    db = Path(work) / f"{instance}.db"
    text = Path(query_file).read_text(encoding="utf-8", errors="replace")

    def ask(*args):
        out = subprocess.run([indexer, *args, "--db", str(db), "--json"], input=text,
                             capture_output=True, text=True, check=True, cwd=tree)
        return json.loads(out.stdout)

    try:
        ranked = [f["path"] for f in ask("rank-files", "-", "--limit", LIMIT)]
        pack = sorted({f["path"] for f in ask("pack", "--query", "-", "--budget", BUDGET)["files"]})
        mapped = sorted({e["path"] for e in ask("map", "--query", "-", "--budget", BUDGET)["entries"]})
        side = {"pack": pack, "map": mapped}
        (Path(work) / f"{instance}.side.json").write_text(json.dumps(side))
    finally:
        # Hundreds of trees: a database each would fill the disk.
        for suffix in ("", "-wal", "-shm", ".lock", ".export.lock"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    print(json.dumps(ranked))


def prepare_django(work):
    """Trees of the Django tasks from the releases they name (sweval prepare-sdists)."""
    work = Path(work)
    sdists = work / "sdists"
    tasks = [json.loads(line) for line in DJANGO.read_text().splitlines() if line.strip()]
    for release in sorted({t["release"] for t in tasks}):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"Django=={release}", "-d", str(sdists)], check=True)
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "tasks.jsonl", "w") as out, open(work / "releases.jsonl", "w") as releases:
        for t in tasks:
            out.write(json.dumps({"id": t["id"], "repo": "django/django", "base_commit": "",
                                  "language": "python", "query": t["query"],
                                  "gold_files": t["gold_files"]}) + "\n")
            releases.write(json.dumps({"instance_id": t["id"], "release": t["release"]}) + "\n")
    sweval("prepare-sdists", "--data", str(work / "tasks.jsonl"), "--work", str(work),
           "--map", str(work / "releases.jsonl"), "--sdists", str(sdists))


def sweval(*args):
    subprocess.run([sys.executable, str(SWEVAL), *args], check=True, stdout=subprocess.DEVNULL)


def run_set(name, data, work, a):
    sample = ["--sample", str(a.sample), "--seed", str(a.seed)] if a.sample else []
    common = ["--data", data, "--work", work, "--keep-top", "20", *sample]
    base = Path(work) / "results"
    sweval("run", *common, "--ranker", "bm25-files-notests", "--label", "bm25-notests",
           "--out", str(base / "bm25-notests.json"))
    scratch = Path(work) / "scratch" / a.label
    me = [sys.executable, str(Path(__file__).resolve()), "_query", a.indexer]
    index_cmd = f"{shlex.quote(a.indexer)} index {{repo}} --db {{work}}/{{instance}}.db --no-artifact"
    cmd = " ".join(shlex.quote(x) for x in me) + " {repo} {query} {instance} {work}"
    sweval("run", *common, "--ranker", "cmd", "--label", a.label, "--index-cmd", index_cmd,
           "--cmd", cmd, "--scratch", str(scratch), "--timeout", "600",
           "--out", str(base / f"{a.label}.json"))
    bm25 = json.loads((base / "bm25-notests.json").read_text())["instances"]
    ours = json.loads((base / f"{a.label}.json").read_text())["instances"]
    gold = {r["instance_id"]: set(r["gold"]) for r in ours}
    side = {}
    for iid in gold:
        f = scratch / f"{iid}.side.json"
        side[iid] = json.loads(f.read_text()) if f.exists() else {"pack": [], "map": []}
    groups = defaultdict(list)
    for r in ours:
        groups["all"].append(r["instance_id"])
        groups[r["language"]].append(r["instance_id"])
    ranks = {"BM25-notests": {r["instance_id"]: r["rank"] for r in bm25},
             "rank-files": {r["instance_id"]: r["rank"] for r in ours}}
    print(f"\n### {name}\n")
    print("| group | tasks | ranker | Acc@1 | Acc@5 | Acc@10 | MRR | pack@13k | map@13k |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for group, ids in sorted(groups.items(), key=lambda g: (g[0] != "all", g[0])):
        if group != "all" and len(ids) < a.min_tasks:
            continue
        for label, rank in ranks.items():
            rs = [rank.get(i) for i in ids]
            acc = lambda k: sum(1 for x in rs if x is not None and x <= k) / len(ids)
            mrr = sum(1 / x for x in rs if x) / len(ids)
            if label == "rank-files":
                holds = lambda kind: sum(1 for i in ids if gold[i] & set(side[i][kind])) / len(ids)
                extra = f"{holds('pack'):.1%} | {holds('map'):.1%}"
            else:
                extra = "– | –"
            print(f"| {group} | {len(ids)} | {label} | {acc(1):.1%} | {acc(5):.1%} | {acc(10):.1%} "
                  f"| {mrr:.3f} | {extra} |")
    return groups, ranks


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_query":
        return query(*sys.argv[2:7])
    if len(sys.argv) == 3 and sys.argv[1] == "prepare-django":
        return prepare_django(sys.argv[2])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sets", nargs="+", metavar="SET=DATA:WORK")
    p.add_argument("--sample", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-tasks", type=int, default=15)
    p.add_argument("--indexer", default=str(ROOT / "target" / "release" / "indexer"))
    p.add_argument("--label", default="indexer", help="names this build's results in WORK/results/")
    a = p.parse_args()
    a.indexer = os.path.abspath(a.indexer)
    totals = defaultdict(dict)
    for spec in a.sets:
        name, _, rest = spec.partition("=")
        data, _, work = rest.partition(":")
        _, ranks = run_set(name, data, work, a)
        for label, rank in ranks.items():
            totals[label].update({f"{name}/{i}": r for i, r in rank.items()})
    if len(a.sets) > 1:
        print("\n### every set together\n")
        print("| ranker | tasks | Acc@1 | Acc@5 | Acc@10 | MRR |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, rank in totals.items():
            rs, n = list(rank.values()), len(rank)
            acc = lambda k: sum(1 for x in rs if x is not None and x <= k) / n
            print(f"| {label} | {n} | {acc(1):.1%} | {acc(5):.1%} | {acc(10):.1%} "
                  f"| {sum(1 / x for x in rs if x) / n:.3f} |")


if __name__ == "__main__":
    main()
