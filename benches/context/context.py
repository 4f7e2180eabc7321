#!/usr/bin/env python3
"""What cairn's tools cost an agent's context: the bytes of each surface's `tools/list` answer (the tool
definitions a host without tool search puts into every model request) and of its `initialize` instructions,
with the largest tools; then the answers an agent reads most (a mid-run advance_run, get_run_history and
test_workflow of a three-step run, work_list of 50 items with 600-character notes), each as the bytes of its
structuredContent. All read over stdio with a raw JSON-RPC loop: nothing but the server's own answer is counted.

    python3 benches/context/context.py [--binary target/release/cairn] [--top 5]
"""

import argparse
import json
import os
import subprocess
import tempfile

SURFACES = {
    "deepwork": ["deepwork", "serve", "--path", "."],
    "roscoe": ["roscoe", "mcp"],
    "work": ["work", "mcp"],
}


def measure(binary, args, home):
    """The surface's initialize and tools/list answers, as the lines the server wrote."""
    env = dict(os.environ, CAIRN_HOME=home)
    env.pop("CAIRN_DATABASE_URL", None)
    server = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, cwd=home)

    def ask(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        return server.stdout.readline() if "id" in message else None

    init = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "context-bench", "version": "1"}}})
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    listed = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    server.kill()
    server.wait()
    return json.loads(init), listed.rstrip(b"\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="target/release/cairn")
    parser.add_argument("--top", type=int, default=5, help="list this many of each surface's largest tools")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    total = 0
    with tempfile.TemporaryDirectory() as home:
        subprocess.run(["git", "init", "-q", home], check=True)
        print(f"{'surface':<10} {'tools':>5} {'tools/list B':>13} {'instructions B':>15}")
        for name, args in SURFACES.items():
            init, listed = measure(binary, args, home)
            tools = json.loads(listed)["result"]["tools"]
            instructions = len(init["result"].get("instructions", "").encode())
            total += len(listed)
            print(f"{name:<10} {len(tools):>5} {len(listed):>13} {instructions:>15}")
            largest = sorted(tools, key=lambda t: -len(json.dumps(t, separators=(",", ":"))))[: options.top]
            for tool in largest:
                size = len(json.dumps(tool, separators=(",", ":")))
                described = len(tool.get("description", "").encode())
                print(f"    {tool['name']:<32} {size:>6} B (description {described} B)")
        print(f"{'all three':<10} {'':>5} {total:>13}")
        print()
        for name, size in answers(binary, home):
            print(f"{name:<44} {size:>7} B")


class Session:
    """One stdio server, initialized, answering tool calls."""

    def __init__(self, binary, args, home):
        env = dict(os.environ, CAIRN_HOME=home)
        env.pop("CAIRN_DATABASE_URL", None)
        self.server = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env=env, cwd=home)
        self.next_id = 0
        self.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "context-bench", "version": "1"}})
        self.send("notifications/initialized")

    def send(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not method.startswith("notifications/"):
            self.next_id += 1
            message["id"] = self.next_id
        self.server.stdin.write((json.dumps(message) + "\n").encode())
        self.server.stdin.flush()
        return None if "id" not in message else json.loads(self.server.stdout.readline())

    def call(self, tool, arguments):
        """The tool's structuredContent, and its size in bytes of compact JSON."""
        content = self.send("tools/call", {"name": tool, "arguments": arguments})["result"]["structuredContent"]
        return content, len(json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode())

    def close(self):
        self.server.kill()
        self.server.wait()


THREE_STEPS = """name: three
initial: a
nodes:
  a:
    type: ai_agent
    config: { prompt: 'Write a haiku about {{ input.topic }}' }
    transitions: { success: b }
  b:
    type: ai_agent
    config: { prompt: 'Improve this haiku: {{ a.text }}' }
    transitions: { success: c }
  c:
    type: ai_agent
    config: { prompt: 'Give this haiku a title: {{ b.text }}' }
    transitions: { success: $end }
inputs:
  topic: { type: string, default: rain }
"""


def answers(binary, home):
    """(answer, bytes) for the answers an agent reads most."""
    roscoe = Session(binary, ["roscoe", "mcp"], home)
    scope = {"global": True}
    roscoe.call("create_workflow", {**scope, "id": "three", "yaml": THREE_STEPS})
    started, _ = roscoe.call("start_workflow", {**scope, "id": "three"})
    run = started["runId"]
    _, mid_run = roscoe.call("advance_run", {**scope, "run_id": run, "node_id": "a", "response": "rain on the roof"})
    roscoe.call("advance_run", {**scope, "run_id": run, "node_id": "b", "response": "soft rain on the roof"})
    roscoe.call("advance_run", {**scope, "run_id": run, "node_id": "c", "response": "Roof"})
    _, history = roscoe.call("get_run_history", {**scope, "run_id": run})
    _, history_full = roscoe.call("get_run_history", {**scope, "run_id": run, "detail": "full"})
    mocks = {"a": "rain", "b": "soft rain", "c": "Roof"}
    _, test = roscoe.call("test_workflow", {**scope, "id": "three", "mocks": mocks})
    _, test_full = roscoe.call("test_workflow", {**scope, "id": "three", "mocks": mocks, "detail": "full"})
    roscoe.close()
    work = Session(binary, ["work", "mcp"], home)
    space, _ = work.call("decisions_create_space", {"name": "bench"})
    space_id = space.get("id") or space.get("space", {}).get("id")
    notes = ("The flaky test fails when two writers race on the same row; " * 11)[:600]
    for n in range(50):
        work.call("work_create", {"space_id": space_id, "title": f"Item {n}", "notes": notes})
    _, listed = work.call("work_list", {"space_id": space_id, "page_size": 50})
    work.close()
    return [
        ("roscoe advance_run, mid-run", mid_run),
        ("roscoe get_run_history, 3 nodes", history),
        ("roscoe get_run_history, 3 nodes, detail full", history_full),
        ("roscoe test_workflow, 3 nodes", test),
        ("roscoe test_workflow, 3 nodes, detail full", test_full),
        ("work work_list, 50 items, 600-char notes", listed),
    ]


if __name__ == "__main__":
    main()
