#!/usr/bin/env python3
"""What cairn's tools cost an agent's context: the bytes of each surface's `tools/list` answer (the tool
definitions a host without tool search puts into every model request) and of its `initialize` instructions,
with the largest tools, read over stdio with a raw JSON-RPC loop (nothing but the server's own answer is counted).

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


if __name__ == "__main__":
    main()
