"""Small helpers shared by compare.py and bench.py: start an MCP server over stdio and talk to it.

Uses the official Python `mcp` client (pinned to 1.26.0 by setup.sh, so result attributes are
camelCase: `structuredContent`, `isError`). Tool calls are sent as raw `tools/call` requests so the
client does not validate `structuredContent` against the tool's `outputSchema` and raise: we want to
record whatever the server sends.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[2]
DEFAULT_COMMANDS = {
    "deepwork": ".venv-dw/bin/deepwork serve --path {root} --platform claude",
    # named as DeepWork's plugin names tools, the reviewer agent and commands, so texts compare alike
    "cairn": "target/release/deepwork serve --path {root} --platform claude --plugin deepwork",
}


def server_argv(template: str, root: Path) -> list[str]:
    """Split a command template, fill `{root}` and make a repo-relative executable absolute."""
    argv = [part.replace("{root}", str(root)) for part in shlex.split(template)]
    if not os.path.isabs(argv[0]) and (REPO / argv[0]).exists():
        argv[0] = str(REPO / argv[0])
    return argv


def server_env() -> dict[str, str]:
    """The caller's environment without DeepWork/cairn knobs that would change job discovery."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("DEEPWORK_", "CAIRN_"))}


@contextlib.asynccontextmanager
async def open_session(argv: list[str], cwd: Path, errlog) -> AsyncIterator[tuple[ClientSession, Any]]:
    """Spawn the server, yield (initialized session, initialize result)."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd), env=server_env())
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            yield session, init


async def call_tool(session: ClientSession, name: str, arguments: dict | None) -> types.CallToolResult:
    """Send tools/call without the client's outputSchema validation."""
    request = types.ClientRequest(
        types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    )
    return await session.send_request(request, types.CallToolResult)


def dump(model) -> Any:
    """A pydantic result as wire-shaped JSON (aliases such as `_meta`, no unset optionals)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid`, from /proc (Linux only)."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # field 4 (ppid) comes after the parenthesised command name, which may contain spaces
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            kids.append(int(entry))
    return kids


WRAPPERS = {"uv", "uvx", "sh", "bash", "env", "timeout"}


def server_pid() -> int | None:
    """The server process: the client's child (descending through wrappers such as uvx or sh)."""
    kids = child_pids(os.getpid())
    if not kids:
        return None
    pid = max(kids)
    while _comm(pid) in WRAPPERS and len(grandkids := child_pids(pid)) == 1:
        pid = grandkids[0]
    return pid


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def proc_status_kb(pid: int, field: str) -> int | None:
    """A `kB` field of /proc/<pid>/status such as VmHWM (peak RSS) or VmRSS."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None
