#!/usr/bin/env python3
"""Check the Go or Java definitions in an index against Universal Ctags.

Usage:
    scripts/compare_ctags.py DB ROOT --lang go|java [--min-recall PCT] [--kinds K,K,...]
                                                    [--examples N] [--json]

    DB    database written by `indexer index ROOT --db DB`
    ROOT  the tree that was indexed (the DB holds paths relative to it)

Runs `ctags -R --languages=Go|Java --fields=+nKz --output-format=json -f - ROOT` (JSON
output is line-delimited, so names with tabs or odd bytes can't break the parse), keeps
the tags of the kinds below that lie in files the DB holds, and matches them exactly on
(repository-relative path, name, line) against DB nodes of kinds Class, Interface, Enum,
Type, Function and Method. The DB node's kind is not compared: languages differ in what
they call a class or a type, and the line plus the name already pin the definition.

Kinds kept (ctags long names), overridable with --kinds:
  go    func       functions and methods (ctags reports both as `func`)
        type       other named types: `type N int`, `type F func()`
        talias     aliases, `type A = B` (in a grouped `type (...)` block ctags 5.9 also
                   reports some plain named types this way; either kind counts)
        struct     `type S struct {...}`
        interface  `type I interface {...}`
        Not kept: methodSpec (method signatures inside an interface type: members of a
        type, not declarations), struct members, vars, consts, packages, imports.
  java  class, interface, enum, annotation (`@interface`), method.
        ctags reports constructors as `method`, and also abstract and interface methods
        and annotation elements (`int value();`), all of which count. It knows nothing
        of records (`record R(...)` comes out as a method named R on the record's line,
        which still matches a Class node there) and does not tag local or anonymous
        classes, so DB nodes for those appear only in the informational "DB only" count.
        Not kept: fields, enum constants, packages, local variables.

    recall  = ctags tags matched / ctags tags kept
    DB only = DB nodes of those kinds in those files with no ctags tag (informational:
              ctags has no tag for some constructs, e.g. Java local and anonymous classes)

Misses are grouped by cause where it is obvious: the DB has the name on another line, the
DB holds no definitions at all for the file, the indexer flagged syntax errors in the
file; the rest by ctags kind and enclosing scope kind. Exits 1 when recall < --min-recall
(default 98), 2 on usage errors. Needs `ctags` (Universal Ctags with JSON output) on PATH.
"""

import argparse
import collections
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

LANGS = {
    "go": ("Go", {"func", "type", "talias", "struct", "interface"}),
    "java": ("Java", {"class", "interface", "enum", "annotation", "method"}),
}
DB_KINDS = ("Class", "Interface", "Enum", "Type", "Function", "Method")


def ctags_tags(root, language, stats):
    """Yield every tag ctags finds under root, as parsed JSON objects.

    stats["bad_json_lines"] counts output lines that were not JSON (reported, not fatal).
    """
    cmd = ["ctags", "-R", f"--languages={language}", "--fields=+nKz",
           "--output-format=json", "-f", "-", root]
    # stderr goes to a file: read through a pipe only at the end, a chatty ctags could
    # fill it and block while we wait on stdout.
    errfile = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile)
    except FileNotFoundError:
        sys.exit("ctags not found on PATH (Universal Ctags is needed)")
    for raw in proc.stdout:
        # Source files need not be UTF-8; a replaced byte in a name only costs a match.
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            stats["bad_json_lines"] += 1
            continue
        if tag.get("_type") == "tag":
            yield tag
    if proc.wait() != 0:
        errfile.seek(0)
        err = errfile.read().decode("utf-8", "replace")
        sys.exit(f"ctags failed ({proc.returncode}): {err.strip()[:2000]}\ncommand: {' '.join(cmd)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("root")
    ap.add_argument("--lang", required=True, choices=sorted(LANGS))
    ap.add_argument("--min-recall", type=float, default=98.0, metavar="PCT")
    ap.add_argument("--kinds", metavar="K,K,...",
                    help="ctags kinds to keep (long names), instead of the defaults")
    ap.add_argument("--examples", type=int, default=20, metavar="N",
                    help="examples to print per group of misses (default 20)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    if not os.path.isfile(args.db):
        ap.error(f"no such database: {args.db}")
    if not os.path.isdir(args.root):
        ap.error(f"no such directory: {args.root}")
    language, kinds = LANGS[args.lang]
    if args.kinds:
        kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
    root = os.path.abspath(args.root)

    con = sqlite3.connect(f"file:{os.path.abspath(args.db)}?mode=ro", uri=True)
    db_files = {path: (fid, lang, flags) for fid, path, lang, flags in
                con.execute("SELECT id, path, language, flags FROM files")}

    expected = collections.Counter()  # (path, name, line) -> count
    tag_info = {}                     # (path, name, line) -> (kind, scopeKind)
    ctags_files, outside_db, kind_counts = set(), 0, collections.Counter()
    stats = collections.Counter()
    for tag in ctags_tags(root, language, stats):
        path = os.path.relpath(tag["path"], root).replace(os.sep, "/")
        ctags_files.add(path)
        kind = tag.get("kind", "")
        if kind not in kinds or "line" not in tag:
            continue
        # ctags names anonymous entities `__anon<hash>`; no source name to match.
        if tag["name"].startswith("__anon"):
            continue
        if path not in db_files:
            outside_db += 1  # ignored, too big, or not a file the indexer walks
            continue
        key = (path, tag["name"], tag["line"])
        expected[key] += 1
        kind_counts[kind] += 1
        tag_info.setdefault(key, (kind, tag.get("scopeKind", "")))

    compared = sorted(p for p in ctags_files if p in db_files)
    con.execute("CREATE TEMP TABLE compared(id INTEGER PRIMARY KEY)")
    con.executemany("INSERT INTO compared VALUES (?)", ((db_files[p][0],) for p in compared))
    got = collections.Counter()
    db_kind = {}
    for path, name, line, kind in con.execute(
        f"""SELECT f.path, n.name, n.start_line, n.kind
            FROM nodes n JOIN files f ON f.id = n.file_id JOIN compared c ON c.id = f.id
            WHERE n.kind IN ({','.join('?' * len(DB_KINDS))})""", DB_KINDS):
        got[(path, name, line)] += 1
        db_kind.setdefault((path, name, line), kind)

    matched = sum((expected & got).values())
    misses = sorted((expected - got).elements())
    db_only = sorted((got - expected).elements())
    n_tags = sum(expected.values())
    recall = 100.0 * matched / n_tags if n_tags else 100.0

    files_with_defs = {p for p, _, _ in got}
    db_lines = collections.defaultdict(list)
    for path, name, line in db_only:
        db_lines[(path, name)].append(line)

    def cause(key):
        path, name, line = key
        kind, scope = tag_info[key]
        other = db_lines.get((path, name))
        if other:
            return "DB has the name on another line"
        if path not in files_with_defs:
            return "DB holds no definitions for the file"
        if db_files[path][2] & 2:
            return "file flagged with syntax errors by the indexer"
        return f"not in DB: {kind}" + (f" in {scope}" if scope else "")

    groups = collections.defaultdict(list)
    for key in misses:
        groups[cause(key)].append(key)

    def example(key):
        path, name, line = key
        e = {"path": path, "name": name, "line": line, "ctags_kind": tag_info[key][0]}
        other = db_lines.get((path, name))
        if other:
            e["db_line"] = min(other, key=lambda l: abs(l - line))
        return e

    report = {
        "db": args.db,
        "root": args.root,
        "lang": args.lang,
        "ctags_kinds": sorted(kinds),
        "db_kinds": list(DB_KINDS),
        "ctags_files_with_tags": len(ctags_files),
        "files_compared": len(compared),
        "db_files_of_language": sum(1 for _, l, _ in db_files.values() if l == args.lang),
        "tags_outside_db_files": outside_db,
        "ctags_bad_json_lines": stats["bad_json_lines"],
        "ctags_tags": n_tags,
        "ctags_tags_by_kind": dict(sorted(kind_counts.items())),
        "matched": matched,
        "missed": len(misses),
        "recall_pct": round(recall, 3),
        "db_definitions": sum(got.values()),
        "db_only": len(db_only),
        "misses_by_cause": {c: {"count": len(ks), "examples": [example(k) for k in ks[:args.examples]]}
                            for c, ks in sorted(groups.items(), key=lambda g: -len(g[1]))},
        "db_only_examples": [{"path": p, "name": n, "line": l, "db_kind": db_kind[(p, n, l)]}
                             for p, n, l in db_only[:args.examples]],
        "thresholds": {"min_recall_pct": args.min_recall},
    }
    ok = recall >= args.min_recall
    report["pass"] = ok
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_text(report)
    return 0 if ok else 1


def print_text(r):
    print(f"language                {r['lang']} (ctags kinds: {', '.join(r['ctags_kinds'])})")
    print(f"files compared          {r['files_compared']} (of {r['ctags_files_with_tags']} with ctags tags;"
          f" DB holds {r['db_files_of_language']} {r['lang']} files)")
    if r["tags_outside_db_files"]:
        print(f"tags in files not in DB {r['tags_outside_db_files']} (ignored)")
    if r["ctags_bad_json_lines"]:
        print(f"WARNING: {r['ctags_bad_json_lines']} ctags output lines were not JSON (skipped)")
    print()
    print(f"ctags tags              {r['ctags_tags']}  "
          + ", ".join(f"{k} {n}" for k, n in r["ctags_tags_by_kind"].items()))
    print(f"matched                 {r['matched']}")
    print(f"recall                  {r['recall_pct']:.3f}%  (min {r['thresholds']['min_recall_pct']}%)")
    print(f"DB definitions          {r['db_definitions']}  ({'/'.join(r['db_kinds'])})")
    print(f"DB only (informational) {r['db_only']}")
    if r["misses_by_cause"]:
        print("\nmisses by cause:")
        for c, g in r["misses_by_cause"].items():
            print(f"  {g['count']:7}  {c}")
        for c, g in r["misses_by_cause"].items():
            print(f"\n{c} ({g['count']}, first {len(g['examples'])}):")
            for e in g["examples"]:
                extra = f"  (DB line {e['db_line']})" if "db_line" in e else ""
                print(f"  {e['path']}:{e['line']}  {e['name']}  [{e['ctags_kind']}]{extra}")
    if r["db_only_examples"]:
        print(f"\nDB only ({r['db_only']}, first {len(r['db_only_examples'])}):")
        for e in r["db_only_examples"]:
            print(f"  {e['path']}:{e['line']}  {e['name']}  [{e['db_kind']}]")
    print("\n" + ("PASS" if r["pass"] else "FAIL"))


if __name__ == "__main__":
    sys.exit(main())
