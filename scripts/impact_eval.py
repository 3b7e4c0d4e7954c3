#!/usr/bin/env python3
"""Evaluation of `indexer impact` over the history of real repositories.

For each sampled commit that changes 2-20 definitions the index holds at its parent, the tree
is checked out at the parent and indexed (incrementally), and `indexer impact PARENT..COMMIT
--symbols ANCHOR --graph-only --json` is asked about one changed definition at a time: its
diff is all the tool is given (the index is the parent's, the co-change history is the
parent's). The other definitions the same commit modified or deleted are the answers; the
measure is recall@10 and recall@20 of them among the scored definitions.

Every scored definition comes back with its four signals, so any blend of weights is scored
offline from one run: the blend, each signal alone, and weights chosen by
leave-one-repository-out validation (chosen on the other repositories, measured on the one
left out) on a grid over the simplex.

    scripts/impact_eval.py collect --repo NAME=GIT_DIR ... [--commits 60] [--anchors 3]
    scripts/impact_eval.py report [--markdown]

`collect` appends to target/impact-eval/NAME.jsonl.gz (one line a query); `report` reads them
all. GIT_DIR may be a bare mirror (`fetch`) or a checkout.
"""

import argparse
import gzip
import heapq
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "impact-eval"
# Extensions of the languages the index parses definitions of.
CODE = {
    ".py", ".pyi", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".c",
    ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".rb", ".php", ".kt", ".kts", ".swift",
    ".scala", ".lua", ".ex", ".exs", ".sh", ".bash",
}
SIGNALS = ("graph", "bm25", "same_file", "cochange")
KS = (10, 20)
# Weights are searched on a grid of steps of 1/GRID_STEP over the simplex.
GRID_STEP = 10


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def history(repo, limit):
    """(commit, [paths]) for non-merge commits, newest first. From the raw
    listing, which needs no file contents: a snapshot may lack its largest blobs."""
    out = git(
        repo, "log", "--no-merges", "--no-renames", f"-n{limit}",
        "--raw", "--no-abbrev", "--format=@%H",
    )
    commits = []
    for line in out.splitlines():
        if line.startswith("@"):
            commits.append((line[1:], []))
        elif line.startswith(":") and commits:
            commits[-1][1].append(line.split("\t", 1)[1])
    return commits


def plausible(files):
    """A commit worth asking about: 1-10 code files."""
    code = [p for p in files if os.path.splitext(p)[1].lower() in CODE]
    return 1 <= len(code) <= 10


def evenly(items, n):
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def run_json(cmd, cwd, env):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or [""]
    return json.loads(p.stdout), None


def key(c):
    return c["path"], c["qualified_name"]


def collect(args):
    indexer = str(Path(args.indexer).resolve())
    OUT.mkdir(parents=True, exist_ok=True)
    for spec in args.repo:
        name, git_dir = spec.split("=", 1)
        work = Path(args.work) / name
        if work.exists():
            shutil.rmtree(work)
        subprocess.run(
            ["git", "clone", "-q", "--no-checkout", git_dir, str(work)], check=True
        )
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(args.work) / f"{name}.cache"))
        commits = [c for c in history(work, args.history) if plausible(c[1])]
        tries = evenly(commits, args.commits)[::-1]  # oldest first: small re-indexes
        out_path = OUT / f"{name}.jsonl.gz"
        queries = kept = 0
        with gzip.open(out_path, "wt") as out:
            for commit, _ in tries:
                try:
                    git(work, "checkout", "-q", "-f", "--detach", f"{commit}^")
                    git(work, "clean", "-q", "-fdx")
                except subprocess.CalledProcessError:
                    continue
                idx = subprocess.run(
                    [indexer, "index", "--no-artifact", "--json", "."],
                    cwd=work, env=env, capture_output=True, text=True,
                )
                if idx.returncode != 0:
                    print(f"{name} {commit[:10]}: index failed: {idx.stderr[-200:]}", file=sys.stderr)
                    continue
                rng = f"{commit}^..{commit}"
                whole, err = run_json(
                    [indexer, "impact", rng, "--graph-only", "--json", "--budget", "100000000"],
                    work, env,
                )
                if whole is None:
                    continue
                changed = whole["changed"]
                names = [c["qualified_name"] for c in changed]
                answers = list(dict.fromkeys(
                    key(c) for c in changed
                    if c["in_index"] and c["kind"] != "file"
                    and c["change"] in ("modified", "deleted")
                ))
                if not 2 <= len(answers) <= 20:
                    continue
                kept += 1
                anchors = [a for a in answers if names.count(a[1]) == 1]
                for anchor in evenly(anchors, args.anchors):
                    res, err = run_json(
                        [indexer, "impact", rng, "--symbols", anchor[1], "--graph-only",
                         "--json", "--budget", "100000000", "--depth", str(args.depth)],
                        work, env,
                    )
                    if res is None:
                        print(f"{name} {commit[:10]} {anchor[1]}: {err}", file=sys.stderr)
                        continue
                    # What a changed definition holds is shown with it, never scored.
                    targets = [
                        a for a in answers
                        if a != anchor and not (a[0] == anchor[0] and a[1].startswith(anchor[1] + "."))
                    ]
                    if not targets:
                        continue
                    cands = res["context"] + res["dropped_top"]
                    if len(res["dropped_top"]) >= 10:
                        print(f"{name} {commit[:10]}: candidates left out", file=sys.stderr)
                    out.write(json.dumps({
                        "repo": name, "commit": commit, "anchor": list(anchor),
                        "targets": [list(t) for t in targets],
                        "scored": res["candidates_scored"],
                        "candidates": prune([
                            [c["path"], c["qualified_name"], c["start_line"]]
                            + [round(c["signals"][s], 5) for s in SIGNALS]
                            for c in cands
                        ], {tuple(t) for t in targets}),
                    }) + "\n")
                    queries += 1
        print(f"{name}: {len(tries)} commits tried, {kept} kept, {queries} queries", file=sys.stderr)


def prune(cands, targets):
    """Candidates that can rank in the top max(KS) under some blend: of those with the same
    four signals only the first max(KS) in the neutral order (path, line) can, and the
    answers are kept whatever their rank."""
    cands.sort(key=lambda c: (c[0], c[2]))
    seen = {}
    out = []
    for c in cands:
        v = tuple(c[3:])
        seen[v] = seen.get(v, 0) + 1
        if seen[v] <= max(KS) or (c[0], c[1]) in targets:
            out.append(c)
    return out


def load():
    queries = []
    for f in sorted(OUT.glob("*.jsonl.gz")):
        with gzip.open(f, "rt") as fh:
            try:
                for line in fh:
                    queries.append(json.loads(line))
            except (EOFError, json.JSONDecodeError):
                print(f"{f.name}: cut short (still being collected?)", file=sys.stderr)
    return queries


def recalls(q, w):
    """Recall@k of q's answers under weights w; ties in the neutral order (path, line), the
    order `prune` left the candidates in. A candidate no weighted signal reaches is not
    ranked, as in the tool."""
    if "_vectors" not in q:
        targets = {tuple(t) for t in q["targets"]}
        q["_answers"] = len(targets)
        q["_vectors"] = [(c[3], c[4], c[5], c[6], (c[0], c[1]) in targets) for c in q["candidates"]]
    g, b, s, c = w
    scored = [
        (g * vg + b * vb + s * vs + c * vc, -i, hit)
        for i, (vg, vb, vs, vc, hit) in enumerate(q["_vectors"])
    ]
    top = heapq.nlargest(max(KS), (x for x in scored if x[0] > 0))
    return [sum(1 for x in top[:k] if x[2]) / q["_answers"] for k in KS]


def grid():
    n = GRID_STEP
    for a in range(n + 1):
        for b in range(n + 1 - a):
            for c in range(n + 1 - a - b):
                yield (a / n, b / n, c / n, (n - a - b - c) / n)


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def report(args):
    queries = load()
    if not queries:
        sys.exit(f"no results under {OUT}: run `collect` first")
    repos = sorted({q["repo"] for q in queries})
    by_repo = {r: [q for q in queries if q["repo"] == r] for r in repos}
    weights = list(grid())
    # recall[r][w] = (mean R@10, mean R@20) over r's queries
    table = {r: {} for r in repos}
    for r in repos:
        for w in weights:
            rs = [recalls(q, w) for q in by_repo[r]]
            table[r][w] = tuple(mean(x[i] for x in rs) for i in range(len(KS)))

    def objective(w, among):
        return mean(sum(table[r][w]) / len(KS) for r in among)

    best_all = max(weights, key=lambda w: (objective(w, repos), w))
    loo = {}
    chosen = {}
    for r in repos:
        others = [o for o in repos if o != r]
        w = max(weights, key=lambda w: (objective(w, others), w))
        chosen[r] = w
        loo[r] = table[r][w]
    alone = {s: tuple(float(i == j) for j in range(4)) for i, s in enumerate(SIGNALS)}
    cols = [("blend (LOO)", None)] + [(f"{s} only", w) for s, w in alone.items()]
    cols.append(("defaults", best_all))

    def cell(r, w):
        return loo[r] if w is None else table[r][w]

    rows = []
    for r in repos:
        rows.append([r, str(len(by_repo[r]))] + [
            " / ".join(f"{x:.3f}" for x in cell(r, w)) for _, w in cols
        ])
    overall = []
    for _, w in cols:
        overall.append(" / ".join(
            f"{mean(cell(r, w)[i] for r in repos):.3f}" for i in range(len(KS))
        ))
    rows.append(["**overall** (mean of repositories)", str(len(queries))] + overall)
    head = ["repository", "queries"] + [c for c, _ in cols]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("Cells are recall@10 / recall@20. Weights are graph, bm25, same file, co-change.")
    print(f"Defaults (chosen on all repositories): {fmt(best_all)}")
    for r in repos:
        print(f"- left out {r}: chosen {fmt(chosen[r])}")
    wins = sum(
        1 for r in repos
        if all(sum(loo[r]) > sum(table[r][w]) for w in alone.values())
    )
    print(f"The validated blend beats every signal alone on {wins} of {len(repos)} repositories.")


def fmt(w):
    return ",".join(f"{x:.1f}" for x in w)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--repo", action="append", required=True, help="NAME=GIT_DIR")
    c.add_argument("--commits", type=int, default=150, help="commits tried (those changing 2-20 definitions are kept)")
    c.add_argument("--anchors", type=int, default=3, help="changed definitions asked about per commit")
    c.add_argument("--history", type=int, default=3000, help="newest commits sampled from")
    c.add_argument("--depth", type=int, default=2)
    c.add_argument("--indexer", default=str(ROOT / "target" / "release" / "indexer"))
    c.add_argument("--work", default="/tmp/impact-eval")
    sub.add_parser("report")
    args = p.parse_args()
    collect(args) if args.cmd == "collect" else report(args)


if __name__ == "__main__":
    main()
