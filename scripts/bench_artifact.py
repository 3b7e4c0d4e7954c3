#!/usr/bin/env python3
"""Measures the committed artifact on a corpus: size and compression ratio per zstd level,
export time, and a fresh clone's bootstrap (artifact present, 1% of the files edited) against
a cold index of the same tree.

    scripts/bench_artifact.py CORPUS_DIR [--indexer PATH] [--levels 1,3,9,19] [--runs 3]

CORPUS_DIR is copied to a scratch folder first; nothing is written into it.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, **kw):
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    return out.stdout, elapsed


def edit_one_percent(root, db):
    """Appends a comment line to 1% of the indexed source files (every 100th by path)."""
    import sqlite3

    conn = sqlite3.connect(db)
    paths = [
        p
        for (p,) in conn.execute(
            "SELECT path FROM files WHERE language IN "
            "('python', 'go', 'java', 'javascript', 'typescript', 'rust', 'c', 'cpp') "
            "ORDER BY path"
        )
    ]
    conn.close()
    chosen = paths[::100]
    for p in chosen:
        marker = "#" if p.endswith(".py") else "//"
        with open(os.path.join(root, p), "a", encoding="utf-8") as f:
            f.write(f"\n{marker} edited for the bootstrap benchmark\n")
    return len(chosen), len(paths)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--indexer", default="target/release/indexer")
    ap.add_argument("--levels", default="1,3,9,19")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    indexer = os.path.abspath(args.indexer)
    scratch = tempfile.mkdtemp(prefix="bench-artifact-")
    try:
        origin = os.path.join(scratch, "origin")
        shutil.copytree(args.corpus, origin, symlinks=True)
        shutil.rmtree(os.path.join(origin, ".codebase-index"), ignore_errors=True)
        db = os.path.join(scratch, "origin.db")
        _, cold = run([indexer, "index", origin, "--db", db, "--rebuild", "--no-artifact"])
        print(f"cold index of {args.corpus}: {cold:.2f} s")

        print("\nlevel | artifact | database | ratio | export time")
        for level in [int(x) for x in args.levels.split(",")]:
            out = os.path.join(scratch, f"level{level}.db.zst")
            stdout, t = run(
                [indexer, "export", "--db", db, "--output", out,
                 "--compression-level", str(level), "--json"]
            )
            m = json.loads(stdout)["manifest"]
            print(
                f"{level:5} | {m['artifact_bytes'] / 1e6:7.1f} MB | "
                f"{m['database_bytes'] / 1e6:7.1f} MB | {m['compression_ratio']:5.2f} | {t:6.2f} s"
            )

        # The clone: the tree with its committed artifact at the default level, then 1% edited.
        _, t = run([indexer, "export", "--db", db])
        print(f"\nexport at the default level into the tree: {t:.2f} s")
        clone = os.path.join(scratch, "clone")
        shutil.copytree(origin, clone, symlinks=True)
        edited, total = edit_one_percent(clone, db)
        print(f"edited {edited} of {total} source files")
        boots, colds = [], []
        for i in range(args.runs):
            fresh = os.path.join(scratch, f"fresh{i}.db")
            stdout, t = run([indexer, "index", clone, "--db", fresh, "--no-artifact", "--json"])
            s = json.loads(stdout)
            assert s["bootstrapped_from"], s["notes"]
            boots.append(t)
            cold_db = os.path.join(scratch, f"cold{i}.db")
            _, t = run([indexer, "index", clone, "--db", cold_db, "--rebuild", "--no-artifact"])
            colds.append(t)
            print(
                f"run {i + 1}: bootstrap {boots[-1]:.2f} s ({s['extracted']} extracted, "
                f"{s['resolution']['files']} files re-resolved), cold {colds[-1]:.2f} s"
            )
            for f in (fresh, cold_db):
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(f + suffix):
                        os.remove(f + suffix)
        b, c = statistics.median(boots), statistics.median(colds)
        print(f"\nbootstrap median {b:.2f} s, cold median {c:.2f} s: {c / b:.1f}x faster")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
