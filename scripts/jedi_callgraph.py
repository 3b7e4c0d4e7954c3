#!/usr/bin/env python3
"""Measure the indexer's Python call edges against a ground truth built with Jedi.

Usage:
    scripts/jedi_callgraph.py ROOT DB [--cache FILE.json] [--jobs N] [--show-misses N]
                                      [--threshold C] [--json]

    ROOT  the tree that was indexed (the DB holds paths relative to it)
    DB    database written by the indexer for ROOT (opened read-only)

--show-misses N prints N false positives and N missed pairs at the threshold, each with
what the index holds at that site (its edges, and its `unresolved` rows where present).

Ground truth. Every .py file under ROOT (hidden directories, virtualenvs and build output
skipped; tests and examples kept) is parsed with parso. Each `atom_expr`/`power` trailer
that opens with `(` is a call site; its callee is the name just before that trailer
(`a.b(x).c(y)` holds the calls `b` and `c`). Calls inside decorators are skipped; calls
whose callee is not a name (`f()()`, `x[0]()`) are kept as "unnamed" sites. A site's line
is the first line of the whole atom_expr, which is where the indexer's tree-sitter `call`
node starts. `jedi.Script(...).goto(line, col, follow_imports=True)` on the callee name
classifies the site:
    in-repo   some result is a function or class defined in a .py file of ROOT; its
              targets are (path, line of the `def`/`class` keyword)
    external  otherwise some result lies outside those files (stdlib, site-packages, stubs)
    dynamic   only in-repo results that are no definition (param, variable, property)
    unknown   no result; sites where Jedi raised or hit the time limit count as errors
Jedi sees ROOT/src (if any) and ROOT ahead of the interpreter's sys.path, so a copy of the
package installed in site-packages does not shadow the tree. The ground truth is cached
as JSON keyed by ROOT and invalidated when any file's size or mtime changes.

Comparison, by (site path, site line, target path, target line), at each confidence
threshold (--threshold, default 0.8) and over all edges:
    precision  indexer `calls` edges from .py files at a line where some Jedi call is
               in-repo or external: the fraction whose target is among Jedi's in-repo
               targets for that line. Edges at lines with no Jedi call, or with only
               dynamic/unknown/unnamed ones, are counted apart.
    recall     distinct Jedi in-repo (site, target) pairs: the fraction the indexer has
               an edge for. Pairs whose target has no indexer node at that line ("target
               not modelled") or whose source file is not in the DB are counted apart.
Only the standard library besides jedi and parso.
"""

import argparse
import collections
import hashlib
import json
import multiprocessing
import os
import signal
import sqlite3
import sys
import time

CACHE_VERSION = 1
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist",
             "venv", "env", "virtualenv", "htmlcov"}
DEF_TYPES = {"function", "class"}
SITE_TIMEOUT = 20.0  # seconds for one goto


def python_files(root):
    """Repository-relative paths of the .py files under root, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS
                       and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))]
        for f in filenames:
            if f.endswith(".py"):
                out.append(os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/"))
    return sorted(out)


def call_sites(module):
    """Yield (line of the call expression, callee name leaf or None) in a parso tree."""
    stack = [module]
    while stack:
        node = stack.pop()
        if node.type == "decorator":
            continue
        children = getattr(node, "children", None)
        if not children:
            continue
        if node.type in ("atom_expr", "power"):
            for prev, cur in zip(children, children[1:]):
                if cur.type == "trailer" and cur.children[0] == "(":
                    dotted = prev.type == "trailer" and prev.children[0] == "."
                    callee = prev if prev.type == "name" else prev.children[1] if dotted else None
                    yield node.start_pos[0], callee
        stack.extend(reversed(children))


_W = {}  # per-worker state


def _on_alarm(signum, frame):
    raise TimeoutError("goto exceeded time limit")


def _init_worker(root, files):
    import jedi
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(root, "src")
    base = [p for p in sys.path if p and os.path.abspath(p) != here
            and not (os.path.abspath(p) + os.sep).startswith(root + os.sep)]
    sys_path = ([src] if os.path.isdir(src) else []) + [root] + base
    _W.update(root=root, files=set(files), env=jedi.InterpreterEnvironment(),
              project=jedi.Project(root, sys_path=sys_path))
    signal.signal(signal.SIGALRM, _on_alarm)


def _def_line(name):
    """Line of the `def`/`class` keyword of a Jedi definition name."""
    tree_name = getattr(name._name, "tree_name", None)  # private, but stable since 0.16
    parent = getattr(tree_name, "parent", None)
    if parent is not None and parent.type in ("funcdef", "classdef"):
        return parent.start_pos[0]
    return name.line


def _resolve(script, leaf):
    """(status, sorted targets) for one callee name."""
    targets, external, dynamic = set(), False, False
    for n in script.goto(*leaf.start_pos, follow_imports=True):
        path = str(n.module_path) if n.module_path else None
        rel = os.path.relpath(path, _W["root"]).replace(os.sep, "/") if path else None
        if rel not in _W["files"]:
            external = True
        elif n.type in DEF_TYPES:
            targets.add((rel, _def_line(n)))
        else:
            dynamic = True
    status = "in" if targets else "ext" if external else "dyn" if dynamic else "unk"
    return status, sorted(targets)


def jedi_file(rel):
    """Sites of one file: [line, callee, status, [[path, line], ...]]."""
    import jedi
    import parso
    path = os.path.join(_W["root"], rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        code = f.read()
    sites, errors = [], 0
    try:
        script = jedi.Script(code, path=path, project=_W["project"], environment=_W["env"])
        calls = list(call_sites(parso.parse(code)))
    except Exception:
        return rel, [], 1
    for line, leaf in calls:
        if leaf is None:
            sites.append([line, "", "anon", []])
            continue
        try:
            signal.setitimer(signal.ITIMER_REAL, SITE_TIMEOUT)
            status, targets = _resolve(script, leaf)
        except Exception:
            status, targets, errors = "err", [], errors + 1
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sites.append([line, leaf.value, status, [list(t) for t in targets]])
    return rel, sites, errors


def ground_truth(root, cache_path, jobs):
    """{rel: sites}, seconds spent (0 when cached), errors; cached under root."""
    files = python_files(root)
    stats = [(rel, os.stat(os.path.join(root, rel))) for rel in files]
    sig = hashlib.sha1(repr([(r, s.st_size, s.st_mtime_ns) for r, s in stats]).encode()).hexdigest()
    cache = {}
    if cache_path and os.path.exists(cache_path):
        with open(cache_path) as f:
            cache = json.load(f)
        if cache.get("version") != CACHE_VERSION:
            cache = {}
    entry = cache.get("roots", {}).get(root)
    if entry and entry["signature"] == sig:
        return entry["files"], 0.0, entry["errors"]
    start, out, errors = time.time(), {}, 0
    biggest_first = [r for r, _ in sorted(stats, key=lambda rs: -rs[1].st_size)]
    with multiprocessing.Pool(jobs, _init_worker, (root, files), maxtasksperchild=50) as pool:
        for rel, sites, errs in pool.imap_unordered(jedi_file, biggest_first):
            out[rel], errors = sites, errors + errs
    elapsed = time.time() - start
    if cache_path:
        cache.setdefault("version", CACHE_VERSION)
        cache.setdefault("roots", {})[root] = {"signature": sig, "files": out,
                                               "errors": errors, "seconds": elapsed}
        tmp = cache_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(cache, f)
        os.replace(tmp, cache_path)
    return out, elapsed, errors


def load_index(db):
    """Call edges from .py files, definitions by (path, line), indexed file paths."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    edges = con.execute("""
        SELECT sf.path, e.line, tf.path, t.start_line, e.confidence, e.strategy,
               t.qualified_name
        FROM edges e
        JOIN nodes s ON s.id = e.source_id JOIN files sf ON sf.id = s.file_id
        JOIN nodes t ON t.id = e.target_id JOIN files tf ON tf.id = t.file_id
        WHERE e.kind = 'calls' AND sf.path LIKE '%.py' AND e.line IS NOT NULL""").fetchall()
    defs = {}
    for path, line, qname in con.execute("""
            SELECT f.path, n.start_line, n.qualified_name FROM nodes n
            JOIN files f ON f.id = n.file_id WHERE n.kind <> 'File'"""):
        defs.setdefault((path, line), qname)
    files = {p for (p,) in con.execute("SELECT path FROM files")}
    unresolved = collections.defaultdict(list)  # schema 2 keeps calls it could not resolve
    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'unresolved'").fetchone():
        for path, line, name, reason in con.execute("""
                SELECT f.path, u.line, u.name, u.reason FROM unresolved u
                JOIN nodes s ON s.id = u.source_id JOIN files f ON f.id = s.file_id
                WHERE u.kind = 'calls'"""):
            unresolved[(path, line)].append(f"{name} [unresolved: {reason}]")
    con.close()
    return edges, defs, files, unresolved


def compare(truth, edges, defs, db_files, threshold):
    by_line = collections.defaultdict(lambda: {"targets": set(), "known": False, "names": []})
    pairs = {}
    for rel, sites in truth.items():
        for line, name, status, targets in sites:
            info = by_line[(rel, line)]
            info["names"].append(name or "<unnamed>")
            info["known"] |= status in ("in", "ext")
            for t in targets:
                info["targets"].add(tuple(t))
                pairs.setdefault(((rel, line), tuple(t)), name)
    kept = [e for e in edges if e[4] >= threshold]
    c = collections.Counter()
    false_pos, got = [], collections.defaultdict(list)
    for spath, line, tpath, tline, conf, strategy, tq in kept:
        got[(spath, line)].append((tpath, tline))
        info = by_line.get((spath, line))
        if info is None:
            c["edges_no_jedi_site"] += 1
        elif not info["known"]:
            c["edges_unknown_site"] += 1
        elif (tpath, tline) in info["targets"]:
            c["edges_correct"] += 1
        else:
            c["edges_wrong"] += 1
            false_pos.append((spath, line, tq, conf, strategy))
    misses = []
    for (site, target), name in sorted(pairs.items()):
        if site[0] not in db_files:
            c["pairs_source_not_indexed"] += 1
        elif target not in defs:
            c["pairs_target_not_modelled"] += 1
        elif target in got.get(site, ()):
            c["pairs_found"] += 1
        else:
            c["pairs_missed"] += 1
            misses.append((site, name, target))
    judged = c["edges_correct"] + c["edges_wrong"]
    c["precision"] = c["edges_correct"] / judged if judged else None
    scored = c["pairs_found"] + c["pairs_missed"]
    c["recall"] = c["pairs_found"] / scored if scored else None
    return dict(c), sorted(false_pos), misses, by_line


ROWS = [("precision", "precision"), ("  correct edges", "edges_correct"),
        ("  wrong edges", "edges_wrong"), ("  excluded: Jedi unresolved", "edges_unknown_site"),
        ("  excluded: no Jedi call", "edges_no_jedi_site"), ("recall", "recall"),
        ("  pairs found", "pairs_found"), ("  pairs missed", "pairs_missed"),
        ("  target not modelled", "pairs_target_not_modelled"),
        ("  source not indexed", "pairs_source_not_indexed")]


def show_examples(n, label, result, edges, defs, unresolved):
    """Print the first n false positives and misses of one threshold, for debugging."""
    _, false_pos, misses, by_line = result
    site_edges = collections.defaultdict(list, {k: list(v) for k, v in unresolved.items()})
    for spath, line, _tp, _tl, conf, strategy, tq in edges:
        site_edges[(spath, line)].append(f"{tq} ({conf:.2f} {strategy})")
    print(f"\nFalse positives at {label} (first {n}):")
    for spath, line, tq, conf, strategy in false_pos[:n]:
        info = by_line[(spath, line)]
        expected = [defs.get(t, f"{t[0]}:{t[1]}") for t in sorted(info["targets"])]
        print(f"  {spath}:{line} calls {', '.join(info['names'])}\n"
              f"      expected {', '.join(expected) or 'external only'}\n"
              f"      got      {tq} ({conf:.2f} {strategy})")
    print(f"\nMisses at {label} (first {n}):")
    for site, name, target in misses[:n]:
        print(f"  {site[0]}:{site[1]} calls {name}\n"
              f"      expected {defs.get(target)} ({target[0]}:{target[1]})\n"
              f"      got      {'; '.join(site_edges.get(site, [])) or 'no edge'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("db")
    ap.add_argument("--cache", help="JSON file caching the Jedi ground truth")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--threshold", type=float, default=0.8, help="high-confidence cut")
    ap.add_argument("--show-misses", type=int, default=0, metavar="N",
                    help="print N false positives and N misses at the threshold")
    ap.add_argument("--json", action="store_true", help="print the metrics as JSON")
    args = ap.parse_args()
    root = os.path.realpath(args.root)
    if not os.path.isdir(root) or not os.path.isfile(args.db):
        ap.error("ROOT must be a directory and DB an existing file")

    truth, seconds, errors = ground_truth(root, args.cache, args.jobs)
    status = collections.Counter(s[2] for sites in truth.values() for s in sites)
    edges, defs, db_files, unresolved = load_index(args.db)
    results = {label: compare(truth, edges, defs, db_files, thr) for label, thr in
               ((f">={args.threshold:g}", args.threshold), ("all", float("-inf")))}
    jedi = {"files": len(truth), "seconds": round(seconds, 1), "sites": sum(status.values()),
            **{k: status[s] for k, s in (("in-repo", "in"), ("external", "ext"),
               ("dynamic", "dyn"), ("unknown", "unk"), ("unnamed", "anon"))},
            "errors": errors, "py_files_absent_from_db": len(set(truth) - db_files)}
    strategies = dict(collections.Counter(e[5] for e in edges).most_common())
    if args.json:
        print(json.dumps({"root": root, "db": args.db, "jedi": jedi, "index_edges": len(edges),
                          "index_edges_by_strategy": strategies,
                          "metrics": {label: r[0] for label, r in results.items()}}, indent=2))
        return
    when = "cached" if seconds == 0 else f"built in {seconds:.1f}s"
    print(f"Jedi ground truth for {root} ({when}):")
    print("  " + ", ".join(f"{k} {v}" for k, v in jedi.items() if k != "seconds"))
    print(f"Indexer call edges from .py files: {len(edges)}")
    for strategy, n in strategies.items():
        print(f"  {strategy:<24} {n}")
    print(f"\n{'':<28}" + "".join(f"{label:>10}" for label in results))
    for title, key in ROWS:
        cells = [r[0].get(key, 0) for r in results.values()]
        if key in ("precision", "recall"):
            cells = ["n/a" if v is None else f"{100 * v:.1f}%" for v in cells]
        print(f"{title:<28}" + "".join(f"{c:>10}" for c in cells))
    if args.show_misses:
        label = next(iter(results))
        show_examples(args.show_misses, label, results[label], edges, defs, unresolved)


if __name__ == "__main__":
    main()
