#!/usr/bin/env python3
"""Side by side: a 50-step deterministic workflow in roscoe and in LangGraph, on SQLite, on this machine.

    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph langgraph-checkpoint-sqlite
    cargo build --release -p cairn
    /tmp/lg/bin/python benches/roscoe/vs_langgraph.py [--runs 30] [--steps 50] [--cairn target/release/cairn]

roscoe: one `cairn roscoe mcp` process on a fresh CAIRN_HOME (its SQLite database), driven by a raw JSON-RPC loop
over stdio (the cheapest client: no SDK on the timed path); a global workflow of `--steps` condition nodes in a line,
each `expression: 'true'`; one timed `start_workflow` runs it to `completed` (a new run each time, stored in the
database, its definition validated once per file text).

LangGraph: a StateGraph of `--steps` nodes in a line, each adding one to a counter and routed by a conditional edge
(the equivalent of a condition node), compiled with the SQLite checkpointer (`SqliteSaver` on a file), one timed
`invoke` per new thread, with `durability="exit"` (one checkpoint write per run) and the default `"async"`.

The runs interleave (one of each per round, after warm-ups), so both see the same machine. Prints medians and p90 in
ms, and the ratio of LangGraph's median to roscoe's (above 1: roscoe is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

WARMUPS = 3


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def workflow_yaml(steps: int) -> str:
    lines = ["name: chain", "initial: n0", "nodes:"]
    for i in range(steps):
        nxt = f"n{i + 1}" if i + 1 < steps else "$end"
        lines += [f"  n{i}:", "    type: condition", "    config: { expression: 'true' }",
                  f"    transitions: {{ 'true': {nxt}, 'false': $fail }}"]
    return "\n".join(lines) + "\n"


class Roscoe:
    """`cairn roscoe mcp` over stdio, spoken to line by line."""

    def __init__(self, cairn: str, home: Path) -> None:
        env = dict(os.environ, CAIRN_HOME=str(home), RUST_LOG="error")
        self.proc = subprocess.Popen([cairn, "roscoe", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "vs-langgraph", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def start(self) -> None:
        answer = self.request("tools/call", {"name": "start_workflow", "arguments": {"global": True, "id": "chain"}})
        result = answer["result"]["structuredContent"]
        assert result["status"] == "completed", result

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


class State(TypedDict):
    n: int


def langgraph_app(steps: int, db: Path):
    graph = StateGraph(State)
    for i in range(steps):
        graph.add_node(f"n{i}", lambda state: {"n": state["n"] + 1})
    graph.add_edge(START, "n0")
    for i in range(steps):
        nxt = f"n{i + 1}" if i + 1 < steps else END
        graph.add_conditional_edges(f"n{i}", lambda state, nxt=nxt: nxt if state["n"] >= 0 else END, [nxt, END])
    saver = SqliteSaver(sqlite3.connect(str(db), check_same_thread=False))
    return graph.compile(checkpointer=saver)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--cairn", default=str(Path(__file__).resolve().parents[2] / "target/release/cairn"))
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="vs-langgraph-"))
    home = scratch / "home"
    (home / "workflows").mkdir(parents=True)
    (home / "workflows" / "chain.yaml").write_text(workflow_yaml(args.steps))
    roscoe = Roscoe(args.cairn, home)
    app = langgraph_app(args.steps, scratch / "langgraph.db")

    def lang(durability: str) -> None:
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        out = app.invoke({"n": 0}, config=config, durability=durability)
        assert out["n"] == args.steps, out

    cases = {"roscoe start_workflow": roscoe.start, "LangGraph durability=exit": lambda: lang("exit"),
             "LangGraph durability=async": lambda: lang("async")}
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(WARMUPS + args.runs):
        for name, case in cases.items():
            began = time.perf_counter()
            case()
            took = (time.perf_counter() - began) * 1000
            if round_ >= WARMUPS:
                timings[name].append(took)
    roscoe.close()

    base = statistics.median(timings["roscoe start_workflow"])
    print(f"{args.steps} condition steps, {args.runs} runs each after {WARMUPS} warm-ups, interleaved\n")
    print("| | median ms | p90 ms | LangGraph / roscoe |")
    print("|---|---|---|---|")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {p90(values):.2f} | {median / base:.2f} |")


if __name__ == "__main__":
    main()
