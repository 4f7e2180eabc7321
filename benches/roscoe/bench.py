#!/usr/bin/env python3
"""Benchmark cairn's roscoe authoring tools over MCP (stdio), as an agent host would call them.

    .venv-dw/bin/python benches/roscoe/bench.py [--iterations 50] [--cairn CMD] [--json FILE]

(`benches/deepwork/setup.sh` makes `.venv-dw` with the official Python `mcp` client; build the server
first with `cargo build --release -p cairn`.)

One `cairn roscoe mcp` process, a private CAIRN_HOME and a git project; each metric gets 3 warm-ups
and `--iterations` timed calls:

  ping                     the client + stdio floor;
  validate_workflow        a 200-node workflow passed inline (`yaml`), and a 10-node one as the baseline;
  lint_workflow            the same 200-node workflow stored in the repo, by id (lint reads every
                           workflow of the scope for the unknown-subworkflow and cycle checks);
  list_workflows           1,000 workflows in scope (600 repo, 400 global, 100 of them shadowed),
                           and 10 workflows as the baseline;
  get_workflow             one workflow by id among the 1,000.

Prints a markdown table (median, p90, ratio to the baseline) ready for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deepwork"))
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from bench import machine_info, p90  # noqa: E402  (benches/deepwork/bench.py)
from mcpclient import REPO, call_tool, server_env  # noqa: E402

WARMUPS = 3
NODE_KINDS = ("script", "ai_agent", "condition", "ai_judge")


def node(i: int, count: int) -> str:
    """Node n<i> of a linear workflow; every node after the first reads its predecessor's output."""
    nxt = f"n{i + 1}" if i + 1 < count else "$end"
    prev = f"n{i - 1}" if i > 0 else None
    kind = NODE_KINDS[i % len(NODE_KINDS)]
    read = f"{{{{ {prev}.text || \"none\" }}}}" if prev else "{{ input.topic }}"
    if kind == "script":
        return (f"  n{i}:\n    type: script\n    config:\n      command: 'echo {read}'\n"
                f"    transitions: {{ success: {nxt}, failure: $fail }}\n")
    if kind == "ai_agent":
        return (f"  n{i}:\n    type: ai_agent\n    config:\n      prompt: 'Step {i}: build on {read}'\n"
                f"    transitions: {{ success: {nxt}, failure: $fail }}\n")
    if kind == "condition":
        return (f"  n{i}:\n    type: condition\n    config:\n      expression: 'size(input.topic) > {i % 7}'\n"
                f"    transitions: {{ 'true': {nxt}, 'false': {nxt} }}\n")
    return (f"  n{i}:\n    type: ai_judge\n    config:\n      prompt: 'Judge step {i}: {read}'\n"
            f"      choices: [pass, redo]\n"
            f"    transitions: {{ pass: {nxt}, redo: {nxt}, failure: $fail }}\n")


def workflow(name: str, count: int) -> str:
    head = (f"name: {name}\ndescription: A generated {count}-node workflow\n"
            f"inputs:\n  topic: {{ type: string }}\ninitial: n0\nnodes:\n")
    return head + "".join(node(i, count) for i in range(count))


def small(name: str) -> str:
    return workflow(name, 3)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def populate(project: Path, home: Path, repo_count: int, global_count: int, shadowed: int) -> None:
    """`repo_count` repo workflows w0000…, `global_count` global ones; the first `shadowed` global ids repeat repo ids."""
    repo_dir = project / ".roscoe" / "workflows"
    global_dir = home / "workflows"
    for d in (repo_dir, global_dir):
        if d.exists():
            for f in d.iterdir():
                f.unlink()
        d.mkdir(parents=True, exist_ok=True)
    for i in range(repo_count):
        (repo_dir / f"w{i:04d}.yaml").write_text(small(f"w{i:04d}"))
    for j in range(global_count):
        wid = f"w{j:04d}" if j < shadowed else f"g{j:04d}"
        (global_dir / f"{wid}.yaml").write_text(small(wid))


async def timed(session, name: str, arguments: dict | None, iterations: int) -> list[float]:
    samples = []
    for i in range(WARMUPS + iterations):
        start = time.perf_counter()
        if name == "ping":
            await session.send_ping()
        else:
            result = await call_tool(session, name, arguments)
            if result.isError:
                raise SystemExit(f"{name} failed: {result.content[0].text}")
            body = result.structuredContent or {}
            if body.get("valid") is False or body.get("errors"):
                raise SystemExit(f"{name}: the benchmark workflow is not valid: {result.content[0].text[:2000]}")
        if i >= WARMUPS:
            samples.append((time.perf_counter() - start) * 1000.0)
    return samples


async def run(args) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="roscoe-bench-") as tmp:
        tmp_path = Path(tmp)
        home, project = tmp_path / "home", tmp_path / "project"
        project.mkdir()
        git(project, "init", "-q")
        cwd = str(project)
        big = workflow("big", 200)
        baseline = workflow("tiny", 10)
        argv = args.cairn.split() + ["roscoe", "mcp"]
        if not os.path.isabs(argv[0]):
            argv[0] = str(REPO / argv[0])
        env = {**server_env(), "CAIRN_HOME": str(home)}
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(project), env=env)
        results: dict[str, list[float]] = {}
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                results["ping"] = await timed(session, "ping", None, args.iterations)
                results["validate 10"] = await timed(session, "validate_workflow", {"cwd": cwd, "yaml": baseline}, args.iterations)
                results["validate 200"] = await timed(session, "validate_workflow", {"cwd": cwd, "yaml": big}, args.iterations)
                populate(project, home, repo_count=6, global_count=4, shadowed=1)
                results["list 10"] = await timed(session, "list_workflows", {"cwd": cwd}, args.iterations)
                populate(project, home, repo_count=600, global_count=400, shadowed=100)
                listed = await call_tool(session, "list_workflows", {"cwd": cwd})
                count = len(listed.structuredContent["result"])
                if count != 1000:
                    raise SystemExit(f"expected 1,000 listed workflows, got {count}")
                results["list 1000"] = await timed(session, "list_workflows", {"cwd": cwd}, args.iterations)
                results["get 1 of 1000"] = await timed(session, "get_workflow", {"cwd": cwd, "id": "w0300"}, args.iterations)
                (project / ".roscoe" / "workflows" / "big.yaml").write_text(big)
                results["lint 200 (1,000 in scope)"] = await timed(session, "lint_workflow", {"cwd": cwd, "id": "big"}, args.iterations)
        return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--cairn", default="target/release/cairn", help="the cairn binary (and any leading arguments)")
    ap.add_argument("--json", help="also write the raw samples here")
    args = ap.parse_args()
    results = asyncio.run(run(args))
    baselines = {"validate 200": "validate 10", "list 1000": "list 10"}
    rows = [
        ("ping round trip: client + transport floor", "ping"),
        ("validate_workflow, 10 nodes inline (baseline)", "validate 10"),
        ("validate_workflow, 200 nodes inline", "validate 200"),
        ("list_workflows, 10 in scope (baseline)", "list 10"),
        ("list_workflows, 1,000 in scope", "list 1000"),
        ("get_workflow, 1 of 1,000", "get 1 of 1000"),
        ("lint_workflow, 200 nodes, 1,000 workflows in scope", "lint 200 (1,000 in scope)"),
    ]
    print(f"{WARMUPS} warm-ups + {args.iterations} timed calls each on one `cairn roscoe mcp` process; median (p90) in ms.\n")
    print("| metric | median (p90) ms | ratio to baseline |\n|---|---|---|")
    for label, key in rows:
        samples = results[key]
        med = statistics.median(samples)
        ratio = ""
        if key in baselines:
            ratio = f"{med / statistics.median(results[baselines[key]]):.1f}×"
        print(f"| {label} | {med:.2f} ({p90(samples):.2f}) | {ratio} |")
    print()
    print(f"Machine: {machine_info()}")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
