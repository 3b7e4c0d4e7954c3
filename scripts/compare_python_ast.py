#!/usr/bin/env python3
"""Check the Python definitions in an index against Python's own parser.

Usage:
    scripts/compare_python_ast.py DB ROOT [--min-recall PCT] [--max-spurious PCT]
                                          [--examples N] [--json]

    DB    database written by `indexer index ROOT --db DB`
    ROOT  the tree that was indexed (the DB holds paths relative to it)

For every file the DB holds with language 'python' and a .py name, the file is read from
ROOT and parsed with `ast`; every FunctionDef, AsyncFunctionDef and ClassDef at any depth
(nested, decorated, under if/try/with, ...) gives one (path, name, lineno). The DB's
Function, Method and Class nodes of the same files give (path, name, start_line). Both
sides are multisets (a name may be defined twice on one line in odd code) and are matched
exactly on the triple.

    recall   = matched / ast definitions
    spurious = DB definitions without an ast counterpart / DB definitions

Files ast cannot parse (Python-2-only syntax, deliberately broken test fixtures) are
skipped on both sides and counted. Exits 1 when recall < --min-recall (default 99.5) or
spurious > --max-spurious (default 0.5), 2 on usage errors. Only the standard library.
"""

import argparse
import ast
import collections
import json
import os
import sqlite3
import sys
import warnings

DB_KINDS = ("Function", "Method", "Class")


def ast_definitions(tree):
    """Yield (name, lineno, construct) for every def/class in the tree.

    `construct` describes where the definition sits (its own kind, whether decorated,
    and the statements between it and the enclosing def/class/module) so that misses
    can be grouped by the syntax that causes them.
    """
    # Iterative walk keeping the chain of enclosing statement types; recursion would
    # hit the interpreter's limit on deeply nested generated code.
    stack = [(tree, ())]
    while stack:
        node, chain = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = {"FunctionDef": "def", "AsyncFunctionDef": "async def",
                        "ClassDef": "class"}[type(child).__name__]
                where = " > ".join(chain[-3:]) or "module"
                deco = " @decorated" if child.decorator_list else ""
                yield child.name, child.lineno, f"{kind}{deco} in {where}"
                stack.append((child, chain + (kind,)))
            elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                stack.append((child, chain + (type(child).__name__,)))
            # Anything else is an expression (or a part of one): no statement, so no
            # def or class, can occur below it.


def parse_file(path):
    """The ast of a file, or None when Python 3.11's parser rejects it."""
    with open(path, "rb") as f:
        source = f.read()
    with warnings.catch_warnings():
        # Invalid escape sequences and the like warn on stderr; they don't matter here.
        warnings.simplefilter("ignore")
        try:
            # Bytes, so ast honours PEP 263 encoding declarations itself.
            return ast.parse(source, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("root")
    ap.add_argument("--min-recall", type=float, default=99.5, metavar="PCT")
    ap.add_argument("--max-spurious", type=float, default=0.5, metavar="PCT")
    ap.add_argument("--examples", type=int, default=20, metavar="N",
                    help="examples of misses and of spurious nodes to print (default 20)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    if not os.path.isfile(args.db):
        ap.error(f"no such database: {args.db}")
    if not os.path.isdir(args.root):
        ap.error(f"no such directory: {args.root}")

    # Read-only, so a mistyped path can't create an empty database.
    con = sqlite3.connect(f"file:{os.path.abspath(args.db)}?mode=ro", uri=True)
    files = con.execute(
        "SELECT id, path, size, flags FROM files WHERE language = 'python' ORDER BY path"
    ).fetchall()
    other_python = sum(1 for _, p, _, _ in files if not p.endswith(".py"))
    files = [f for f in files if f[1].endswith(".py")]

    expected = collections.Counter()   # (path, name, line) -> count, from ast
    construct = {}                     # (path, name, line) -> construct description
    parsed_ids = []
    unparsable, missing, changed, flagged = [], [], 0, 0
    for file_id, path, size, flags in files:
        full = os.path.join(args.root, path)
        if not os.path.isfile(full):
            missing.append(path)
            continue
        if os.path.getsize(full) != size:
            changed += 1  # edited since indexing: mismatches here say nothing
        tree = parse_file(full)
        if tree is None:
            unparsable.append(path)
            continue
        if flags & 2:
            flagged += 1  # the indexer saw syntax errors that ast accepts
        parsed_ids.append(file_id)
        for name, line, what in ast_definitions(tree):
            expected[(path, name, line)] += 1
            construct.setdefault((path, name, line), what)

    got = collections.Counter()
    db_kind = {}
    con.execute("CREATE TEMP TABLE parsed(id INTEGER PRIMARY KEY)")
    con.executemany("INSERT INTO parsed VALUES (?)", ((i,) for i in parsed_ids))
    for path, name, line, kind in con.execute(
        f"""SELECT f.path, n.name, n.start_line, n.kind
            FROM nodes n JOIN files f ON f.id = n.file_id JOIN parsed p ON p.id = f.id
            WHERE n.kind IN ({','.join('?' * len(DB_KINDS))})""", DB_KINDS):
        got[(path, name, line)] += 1
        db_kind.setdefault((path, name, line), kind)

    matched = sum((expected & got).values())
    misses = sorted((expected - got).elements())
    spurious = sorted((got - expected).elements())
    n_ast, n_db = sum(expected.values()), sum(got.values())
    recall = 100.0 * matched / n_ast if n_ast else 100.0
    spurious_pct = 100.0 * len(spurious) / n_db if n_db else 0.0

    # A miss and a spurious node with the same (path, name) are most likely one
    # definition reported on another line; say so rather than count two unrelated errors.
    spurious_lines = collections.defaultdict(list)
    for path, name, line in spurious:
        spurious_lines[(path, name)].append(line)

    def miss_cause(key):
        path, name, line = key
        other = spurious_lines.get((path, name))
        if other:
            return f"{construct[key]}; DB has it on line {min(other, key=lambda l: abs(l - line))}"
        return construct[key]

    by_construct = collections.Counter(construct[k] for k in misses)
    ast_names = collections.defaultdict(list)
    for path, name, line in expected:
        ast_names[(path, name)].append(line)

    def spurious_cause(key):
        path, name, line = key
        other = ast_names.get((path, name))
        if other:
            return f"{db_kind[key]}; ast has it on line {min(other, key=lambda l: abs(l - line))}"
        return f"{db_kind[key]}; no definition of that name in the file"

    report = {
        "db": args.db,
        "root": args.root,
        "python_files": len(files),
        "files_compared": len(parsed_ids),
        "files_unparsable": len(unparsable),
        "files_missing_on_disk": len(missing),
        "files_size_changed_since_index": changed,
        "files_flagged_syntax_errors_but_parsable": flagged,
        "non_py_python_files_ignored": other_python,
        "ast_definitions": n_ast,
        "matched": matched,
        "missed": len(misses),
        "recall_pct": round(recall, 3),
        "db_definitions": n_db,
        "spurious": len(spurious),
        "spurious_pct": round(spurious_pct, 3),
        "missed_by_construct": dict(by_construct.most_common()),
        "miss_examples": [{"path": p, "name": n, "line": l, "cause": miss_cause((p, n, l))}
                          for p, n, l in misses[:args.examples]],
        "spurious_examples": [{"path": p, "name": n, "line": l,
                               "cause": spurious_cause((p, n, l))}
                              for p, n, l in spurious[:args.examples]],
        "unparsable_examples": unparsable[:args.examples],
        "thresholds": {"min_recall_pct": args.min_recall,
                       "max_spurious_pct": args.max_spurious},
    }
    ok = recall >= args.min_recall and spurious_pct <= args.max_spurious
    report["pass"] = ok

    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_text(report, misses, spurious)
    return 0 if ok else 1


def print_text(r, misses, spurious):
    print(f"python files in DB      {r['python_files']} (.py; {r['non_py_python_files_ignored']}"
          " other python files ignored)")
    print(f"compared                {r['files_compared']}")
    print(f"skipped, ast can't parse {r['files_unparsable']}"
          + (f" (e.g. {', '.join(r['unparsable_examples'][:3])})" if r["unparsable_examples"] else ""))
    if r["files_missing_on_disk"]:
        print(f"skipped, not on disk    {r['files_missing_on_disk']}")
    if r["files_size_changed_since_index"]:
        print(f"WARNING: {r['files_size_changed_since_index']} files changed size since indexing")
    if r["files_flagged_syntax_errors_but_parsable"]:
        print(f"indexer flagged syntax errors in {r['files_flagged_syntax_errors_but_parsable']}"
              " files ast accepts")
    print()
    print(f"ast definitions         {r['ast_definitions']}")
    print(f"matched                 {r['matched']}")
    print(f"recall                  {r['recall_pct']:.3f}%  (min {r['thresholds']['min_recall_pct']}%)")
    print(f"DB definitions          {r['db_definitions']}  (Function/Method/Class)")
    print(f"spurious                {r['spurious']} = {r['spurious_pct']:.3f}%"
          f"  (max {r['thresholds']['max_spurious_pct']}%)")
    if r["missed_by_construct"]:
        print("\nmisses by construct:")
        for what, n in r["missed_by_construct"].items():
            print(f"  {n:6}  {what}")
    if r["miss_examples"]:
        print(f"\nmisses ({len(misses)}, first {len(r['miss_examples'])}):")
        for e in r["miss_examples"]:
            print(f"  {e['path']}:{e['line']}  {e['name']}  [{e['cause']}]")
    if r["spurious_examples"]:
        print(f"\nspurious ({len(spurious)}, first {len(r['spurious_examples'])}):")
        for e in r["spurious_examples"]:
            print(f"  {e['path']}:{e['line']}  {e['name']}  [{e['cause']}]")
    print("\n" + ("PASS" if r["pass"] else "FAIL"))


if __name__ == "__main__":
    sys.exit(main())
