#!/usr/bin/env python3
"""Latency of `indexer impact` on a work-tree change, from the CLI and through the MCP server.

    target/mcp-venv/bin/python scripts/impact_latency.py GIT_WORK_TREE [--runs 15] [--budget 8000]

The work tree must hold an uncommitted change and an index (`indexer index`). The CLI is run
`--runs` times as a user types it (`indexer impact --budget N`: it refreshes the index, reads
the diff, scores and renders); the server (`indexer serve --repo TREE` over stdio, driven by
the Python MCP client the tests use) is asked `impact` with the same budget as many times
after one warm-up call. Prints the median and the slowest of each, in milliseconds.
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent


def summary(name, times):
    ms = sorted(t * 1000 for t in times)
    print(f"{name}: median {statistics.median(ms):.0f} ms, fastest {ms[0]:.0f}, slowest {ms[-1]:.0f} ({len(ms)} runs)")


async def server(bin, tree, runs, budget):
    params = StdioServerParameters(command=bin, args=["serve", "--repo", str(tree)], cwd=str(tree), env=dict(os.environ))
    async with Client(params) as c:
        args = {"budget_tokens": budget}
        first = await c.call_tool("impact", args)
        assert not first.is_error, first
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            r = await c.call_tool("impact", args)
            times.append(time.perf_counter() - t)
            assert not r.is_error, r
        return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tree", type=Path)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--budget", type=int, default=8000)
    p.add_argument("--indexer", default=str(ROOT / "target" / "release" / "indexer"))
    a = p.parse_args()
    cli = [a.indexer, "impact", "--budget", str(a.budget)]
    subprocess.run(cli, cwd=a.tree, check=True, capture_output=True)  # warm the page cache
    times = []
    for _ in range(a.runs):
        t = time.perf_counter()
        subprocess.run(cli, cwd=a.tree, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    summary("cli", times)
    summary("server", asyncio.run(server(a.indexer, a.tree.resolve(), a.runs, a.budget)))


if __name__ == "__main__":
    main()
