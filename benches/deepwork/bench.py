#!/usr/bin/env python3
"""Benchmark DeepWork and cairn as MCP servers over stdio (method of the DeepWork spec §16).

    .venv-dw/bin/python benches/deepwork/bench.py --server deepwork|cairn|both [--jobs N]
        [--spawns 10] [--iterations 50] [--deepwork CMD] [--cairn CMD] [--json FILE]
    .venv-dw/bin/python benches/deepwork/bench.py --reviews [--server ...] [--iterations 50]

Each server gets a fresh fixture project (fixture.py, `--jobs` jobs in total) and is driven with
the official Python `mcp` client:

  (a) startup: spawn -> initialize -> first successful tools/list, `--spawns` fresh processes
      (after one untimed warm-up spawn);
  (b) get_workflows round trip on one process: 3 warm-ups + `--iterations` timed (a `ping` round
      trip is timed the same way first: the floor set by the Python client and stdio);
  (c) start_workflow + finished_step pair on perf_job with a fresh session id per iteration
      (stack depth stays 1, the pair ends in workflow_complete): workflow `quick` (one string
      output) and `quick_file` (one file_path output); 3 warm-ups + `--iterations` timed each;
  (d) peak RSS: VmHWM from /proc/<server pid>/status at the end of (b)+(c) (the server pid is the
      client's child process).

`--reviews` measures the review pipeline instead, on the review benchmark project
(`fixture.build_review_bench`: 100 `.deepreview` files with 200 rules under `packages/`, 2,000
committed files, then 2 edited and 3 untracked files, 5 changed files in all), aged 1 s before the
server starts (cairn's caches do not trust modification times younger than ~100 ms):

  (r1) get_review_instructions in git mode (no `files`): 3 warm-ups + `--iterations` timed on one
      process; every call recomputes the changed files and rewrites the instruction files;
  (r2) finished_step with one file output: perf_job/quick_file (one step, one file_path output that no
      rule matches, no review blocks), a fresh session per iteration; start_workflow is untimed and
      finished_step is timed (the gate runs git and matches the output against all 200 rules);
  (r3) peak RSS as in (d).

Prints a markdown table (median and p90 per metric and server, ratio deepwork/cairn of the
medians) and the machine info (with `uptime` at the start), ready to paste into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixture  # noqa: E402
from mcpclient import DEFAULT_COMMANDS, call_tool, open_session, proc_status_kb, server_argv, server_pid  # noqa: E402

WARMUPS = 3


def ms(seconds: float) -> float:
    return seconds * 1000.0


def p90(samples: list[float]) -> float:
    """Nearest-rank 90th percentile."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def check(result, what: str) -> dict:
    """Fail loudly if a benchmarked call did not succeed (a fast error is not a result)."""
    if result.isError or result.structuredContent is None or "error" in result.structuredContent:
        text = result.content[0].text if result.content else ""
        raise RuntimeError(f"{what} failed: {result.structuredContent or text}")
    return result.structuredContent


async def measure_startup(argv: list[str], root: Path, spawns: int, errlog) -> list[float]:
    samples = []
    for i in range(spawns + 1):  # the first spawn is an untimed warm-up (disk cache, .pyc, ...)
        t0 = time.perf_counter()
        async with open_session(argv, root, errlog) as (session, _init):
            tools = await session.list_tools()
            t1 = time.perf_counter()
        if not tools.tools:
            raise RuntimeError("tools/list returned no tools")
        if i:
            samples.append(ms(t1 - t0))
    return samples


async def measure_latency(argv: list[str], root: Path, iterations: int, errlog) -> dict:
    out = {}
    async with open_session(argv, root, errlog) as (session, _init):
        await session.list_tools()
        pid = server_pid()

        samples = []
        for i in range(WARMUPS + iterations):
            t0 = time.perf_counter()
            await session.send_ping()
            t1 = time.perf_counter()
            if i >= WARMUPS:
                samples.append(ms(t1 - t0))
        out["ping"] = samples

        samples = []
        for i in range(WARMUPS + iterations):
            t0 = time.perf_counter()
            res = await call_tool(session, "get_workflows", {})
            t1 = time.perf_counter()
            check(res, "get_workflows")
            if i >= WARMUPS:
                samples.append(ms(t1 - t0))
        out["get_workflows"] = samples

        (root / "out").mkdir(exist_ok=True)
        (root / "out" / "answer.txt").write_text("42\n")
        variants = {"pair_string": ("quick", {"answer": "42"}), "pair_file": ("quick_file", {"answer_file": "out/answer.txt"})}
        for key, (workflow, outputs) in variants.items():
            pairs, starts, finishes = [], [], []
            for i in range(WARMUPS + iterations):
                sid = f"bench-{key}-{i}"
                t0 = time.perf_counter()
                res = await call_tool(session, "start_workflow", {
                    "goal": "benchmark", "job_name": "perf_job", "workflow_name": workflow, "session_id": sid})
                t1 = time.perf_counter()
                check(res, "start_workflow")
                res = await call_tool(session, "finished_step", {"session_id": sid, "outputs": outputs})
                t2 = time.perf_counter()
                if check(res, "finished_step").get("status") != "workflow_complete":
                    raise RuntimeError(f"finished_step did not complete the workflow: {res.structuredContent}")
                if i >= WARMUPS:
                    pairs.append(ms(t2 - t0))
                    starts.append(ms(t1 - t0))
                    finishes.append(ms(t2 - t1))
            out[key], out[key + "_start"], out[key + "_finish"] = pairs, starts, finishes

        out["peak_rss_kb"] = proc_status_kb(pid, "VmHWM") if pid else None
        out["server_pid_comm"] = Path(f"/proc/{pid}/comm").read_text().strip() if pid else None
    return out


async def bench_server(name: str, template: str, jobs: int, spawns: int, iterations: int, workdir: Path) -> dict:
    root = fixture.build(workdir / name, jobs=jobs)
    argv = server_argv(template, root)
    print(f"[{name}] {' '.join(argv)}", file=sys.stderr)
    with open(workdir / f"{name}.stderr.txt", "w") as errlog:
        result = {"command": argv, "startup": await measure_startup(argv, root, spawns, errlog)}
        print(f"[{name}] startup done", file=sys.stderr)
        result.update(await measure_latency(argv, root, iterations, errlog))
    print(f"[{name}] latency done", file=sys.stderr)
    return result


def review_text(result, what: str) -> str:
    """The text of a get_review_instructions answer; fail unless it is a task list."""
    text = result.content[0].text if result.content else ""
    if result.isError or "prompt: \"@" not in text:
        raise RuntimeError(f"{what} did not return review tasks: {text[:500]}")
    return text


async def measure_reviews(argv: list[str], root: Path, iterations: int, errlog) -> dict:
    out = {}
    async with open_session(argv, root, errlog) as (session, _init):
        await session.list_tools()
        pid = server_pid()

        samples = []
        for i in range(WARMUPS + iterations):
            t0 = time.perf_counter()
            await session.send_ping()
            t1 = time.perf_counter()
            if i >= WARMUPS:
                samples.append(ms(t1 - t0))
        out["ping"] = samples

        samples = []
        for i in range(WARMUPS + iterations):
            t0 = time.perf_counter()
            res = await call_tool(session, "get_review_instructions", {})
            t1 = time.perf_counter()
            text = review_text(res, "get_review_instructions")
            if i >= WARMUPS:
                samples.append(ms(t1 - t0))
        out["review_instructions"] = samples
        out["review_tasks"] = text.count('prompt: "@')

        (root / "out").mkdir(exist_ok=True)
        (root / "out" / "answer.txt").write_text("42\n")
        starts, finishes = [], []
        for i in range(WARMUPS + iterations):
            sid = f"bench-review-gate-{i}"
            t0 = time.perf_counter()
            res = await call_tool(session, "start_workflow", {
                "goal": "benchmark", "job_name": "perf_job", "workflow_name": "quick_file", "session_id": sid})
            t1 = time.perf_counter()
            check(res, "start_workflow")
            res = await call_tool(session, "finished_step", {"session_id": sid, "outputs": {"answer_file": "out/answer.txt"}})
            t2 = time.perf_counter()
            if check(res, "finished_step").get("status") != "workflow_complete":
                raise RuntimeError(f"finished_step did not complete the workflow: {res.structuredContent}")
            if i >= WARMUPS:
                starts.append(ms(t1 - t0))
                finishes.append(ms(t2 - t1))
        out["gate_finish"], out["gate_start"] = finishes, starts

        out["peak_rss_kb"] = proc_status_kb(pid, "VmHWM") if pid else None
        out["server_pid_comm"] = Path(f"/proc/{pid}/comm").read_text().strip() if pid else None
    return out


async def bench_reviews_server(name: str, template: str, iterations: int, workdir: Path) -> dict:
    root = fixture.build_review_bench(workdir / name)
    time.sleep(1.0)  # let the fixture's files age (cairn's caches distrust very recent mtimes)
    argv = server_argv(template, root)
    print(f"[{name}] {' '.join(argv)}", file=sys.stderr)
    with open(workdir / f"{name}.stderr.txt", "w") as errlog:
        result = {"command": argv}
        result.update(await measure_reviews(argv, root, iterations, errlog))
    print(f"[{name}] reviews done ({result['review_tasks']} review tasks per get_review_instructions)", file=sys.stderr)
    return result


def machine_info() -> str:
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(open("/proc/meminfo").readline().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    load = "load average %.2f %.2f %.2f at the end (keep the machine idle: other jobs skew all numbers)" % os.getloadavg()
    return (f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {cpu}{mem}; "
            f"Linux {platform.release()}; Python {platform.python_version()}; {git}; {load}")


REVIEW_ROWS = [
    ("ping", "ping round trip: client + transport floor (ms)"),
    ("review_instructions", "get_review_instructions, git mode (ms)"),
    ("gate_finish", "finished_step, one file output, 200 rules (ms)"),
    ("gate_start", "… the untimed start_workflow before it (ms)"),
]

ROWS = [
    ("startup", "spawn → first tools/list (ms)"),
    ("ping", "ping round trip: client + transport floor (ms)"),
    ("get_workflows", "get_workflows round trip (ms)"),
    ("pair_string", "start_workflow + finished_step, string output (ms)"),
    ("pair_string_start", "… start_workflow part (ms)"),
    ("pair_string_finish", "… finished_step part (ms)"),
    ("pair_file", "start_workflow + finished_step, file output (ms)"),
    ("pair_file_start", "… start_workflow part (ms)"),
    ("pair_file_finish", "… finished_step part (ms)"),
]


def table(results: dict, args) -> str:
    names = list(results)
    if args.reviews:
        tasks = ", ".join(f"{n} {results[n]['review_tasks']}" for n in names)
        fixture_line = (f"Fixture: review benchmark project (fixture.build_review_bench: 100 .deepreview files, "
                        f"200 rules, 2,000 committed files, 5 changed); review tasks per call: {tasks}; "
                        f"{WARMUPS} warm-ups + {args.iterations} timed calls on one process; values are median (p90).")
    else:
        fixture_line = (f"Fixture: {args.jobs} project jobs (fixture.py); startup: {args.spawns} fresh processes after "
                        f"1 warm-up; latency: {WARMUPS} warm-ups + {args.iterations} timed calls on one process; "
                        f"values are median (p90).")
    lines = [
        fixture_line,
        f"Load at the start: {args.uptime_before}",
        f"Machine: {machine_info()}",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        "| metric | " + " | ".join(names) + (" | deepwork/cairn |" if len(names) == 2 else " |"),
        "|---" * (len(names) + 1 + (len(names) == 2)) + "|",
    ]
    for key, label in (REVIEW_ROWS if args.reviews else ROWS):
        cells, medians = [], []
        for n in names:
            samples = results[n][key]
            med = statistics.median(samples)
            medians.append(med)
            cells.append(f"{med:.1f} ({p90(samples):.1f})")
        ratio = [f"{medians[0] / medians[1]:.1f}×" if medians[1] else "-"] if len(names) == 2 else []
        lines.append(f"| {label} | " + " | ".join(cells + ratio) + " |")
    rss = [results[n]["peak_rss_kb"] for n in names]
    cells = [f"{kb / 1024:.1f}" if kb else "?" for kb in rss]
    ratio = [f"{rss[0] / rss[1]:.1f}×" if len(names) == 2 and all(rss) else "-"] if len(names) == 2 else []
    lines.append("| peak RSS of the server, VmHWM (MB) | " + " | ".join(cells + ratio) + " |")
    lines.append("")
    lines.append("Measured server processes: " + ", ".join(
        f"{n} = `{results[n]['server_pid_comm']}`" for n in names) + ".")
    return "\n".join(lines)


async def main_async(args) -> int:
    servers = ["deepwork", "cairn"] if args.server == "both" else [args.server]
    templates = {"deepwork": args.deepwork, "cairn": args.cairn}
    results, failed = {}, False
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
        for name in servers:
            try:
                if args.reviews:
                    results[name] = await bench_reviews_server(name, templates[name], args.iterations, Path(tmp))
                else:
                    results[name] = await bench_server(name, templates[name], args.jobs, args.spawns,
                                                       args.iterations, Path(tmp))
            except Exception as e:  # noqa: BLE001 - report, and still print the other server's numbers
                errf = Path(tmp) / f"{name}.stderr.txt"
                tail = errf.read_text()[-2000:] if errf.exists() else ""
                print(f"{name}: benchmark failed: {e!r}\n{tail}", file=sys.stderr)
                failed = True
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    if results:
        print(table(results, args))
    return 2 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", choices=["deepwork", "cairn", "both"], default="both")
    ap.add_argument("--jobs", type=int, default=3, help="total jobs in the fixture project (default 3)")
    ap.add_argument("--spawns", type=int, default=10, help="fresh processes for the startup metric")
    ap.add_argument("--iterations", type=int, default=50, help="timed calls per latency metric")
    ap.add_argument("--deepwork", default=DEFAULT_COMMANDS["deepwork"], help="DeepWork command ({root})")
    ap.add_argument("--cairn", default=DEFAULT_COMMANDS["cairn"], help="cairn command ({root})")
    ap.add_argument("--reviews", action="store_true",
                    help="benchmark get_review_instructions and the gate on 200 rules / 2,000 files instead")
    ap.add_argument("--json", metavar="FILE", help="also write the raw samples as JSON")
    args = ap.parse_args()
    args.uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime before: {args.uptime_before}", file=sys.stderr)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
