#!/usr/bin/env python3
"""Run one scripted MCP call sequence against DeepWork and cairn and diff the results.

    .venv-dw/bin/python benches/deepwork/compare.py [--deepwork CMD] [--cairn CMD]
        [--jobs N] [--record DIR] [--strict-text] [--keep] [--only LABEL_GLOB]

CMD is a command line with `{root}` standing for the fixture directory (defaults:
`.venv-dw/bin/deepwork serve --path {root} --platform claude` and
`target/release/deepwork serve --path {root} --platform claude --plugin deepwork`; relative executables are
resolved against the repository). Each server gets a fresh fixture project (fixture.py), is
spawned over stdio with the Python `mcp` client and driven through the same sequence (`sequence()`
below: tools, get_workflows, start/finish/nesting/go_to/abort, agent stacks, missing session ids,
lookup errors, session jobs, a corrupt state file, protocol errors) and finally a snapshot of the
files under `.deepwork/tmp` is taken.

Results are normalised before the diff: the fixture root becomes `<ROOT>`, timestamps `<TS>`,
uuids `<UUID>`, DeepWork's standard jobs are dropped from job lists, PyYAML error details are
dropped, and long prose (server instructions, how_to_invoke, important_note, step instructions not
written by the fixture) becomes `<TEXT>`, keeping presence and type (`--strict-text` keeps it all).
Tools are compared by name, property names (in order) and required list. Everything else,
including error messages, result key order and the files left under `.deepwork/tmp`, is compared
exactly. Differences matching KNOWN_DIFFERENCES (deliberate cairn behaviour, one comment each) are
shown with `~` but accepted; unexpected ones are marked `!`.

Exit code: 0 when equal (apart from known differences), 1 with a readable diff otherwise,
2 when a server could not be run. `--record DIR` saves the raw transcripts
(`DIR/<name>.json`) and the normalised ones (`DIR/<name>.normalised.json`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

import yaml
from mcp.shared.exceptions import McpError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixture  # noqa: E402
from mcpclient import DEFAULT_COMMANDS, call_tool, dump, open_session, server_argv  # noqa: E402

# --------------------------------------------------------------------------------------------
# Deliberate differences of cairn, accepted by the diff. Key: glob over "<label>:<path>".
# --------------------------------------------------------------------------------------------
KNOWN_DIFFERENCES = {
    # A corrupt state.json is reported as an error naming the file; DeepWork silently treats it as
    # an empty stack ("No active workflow session ...").
    "*corrupt_state*:*": "corrupt state file reported as an error naming the file",
    # go_to_step back to (or restarting) the first step keeps the start_workflow inputs; DeepWork
    # loses them (spec §5.3 QUIRK).
    "*go_to_step_back_to_first:structuredContent.begin_step.step_inputs*": "go_to_step keeps the start inputs",
    "*go_to_step_back_to_first:structuredContent.begin_step.step_instructions": "go_to_step keeps the start inputs",
    "*go_to_step_restart_current:structuredContent.begin_step.step_inputs*": "go_to_step keeps the start inputs",
    "*go_to_step_restart_current:structuredContent.begin_step.step_instructions": "go_to_step keeps the start inputs",
    "*disk:state.session-s1/state.json.completed_workflows[1].step_progress.identify_competitors.input_values*":
        "go_to_step keeps the start inputs (stored input_values)",
    # register_session_job validates before writing: an invalid definition leaves nothing on disk
    # (DeepWork writes it, says "The file was written to ...", and the bad file then shadows lookups).
    "*register_schema_invalid:structuredContent.error": "invalid session job is not written",
    "*register_duplicate_step:structuredContent.error": "invalid session job is not written",
    "*start_broken_session_job:content*": "invalid session job is not written, so it is just not found",
    "*disk:files[-].deepwork/tmp/sessions/claude/session-s4/jobs/bad_yaml/": "invalid session job is not written",
    "*disk:files[-].deepwork/tmp/sessions/claude/session-s4/jobs/broken_job/job.yml": "invalid session job is not written",
    "*disk:files[-].deepwork/tmp/sessions/claude/session-s4/jobs/dup_steps/job.yml": "invalid session job is not written",
    # Session files are guarded by a cross-process lock file (DeepWork only locks within one process).
    "*disk:files[+].deepwork/tmp/sessions/claude/session-*/.lock": "cross-process lock file",
    # Without a session id, start_workflow makes a session on every platform (DeepWork refuses on
    # `claude`, where nothing gives the model an id unless a hook does); its files are new sessions.
    "*start_no_session_id:*": "start_workflow without a session id makes a new session",
    "*start_empty_session_id:*": "start_workflow without a session id makes a new session",
    "*disk:files[+].deepwork/tmp/sessions/claude/session-<UUID>/*": "start_workflow without a session id makes a new session",
    "*disk:files[+].deepwork/tmp/status/v1/sessions/<UUID>.yml": "start_workflow without a session id makes a new session",
    "*disk:state.session-<UUID>/state.json": "start_workflow without a session id makes a new session",
    "*disk:status.sessions/<UUID>.yml": "start_workflow without a session id makes a new session",
    # A call without a session id is told which ids it can pass: the project's active sessions.
    "*_no_session_id:structuredContent.error": "the missing-session error lists the active sessions",
    # Argument validation errors are the MCP framework's own text (pydantic in DeepWork); only
    # isError:true and the names in ERROR_MENTIONS are compared.
    "*unexpected_argument:content*": "argument validation text is framework-specific",
    "*missing_required_argument:content*": "argument validation text is framework-specific",
}

# Calls whose error text is the framework's own: only whether it names these words is compared
# (an output value that is neither a string nor a list of strings: the argument and the key).
ERROR_MENTIONS = {"finished_step_number_value": ["outputs", "market_summary"]}

# The most characters of server instructions (DeepWork falls back to a pointer at get_workflows past it).
INSTRUCTIONS_BUDGET = 2048

# Keys whose (long, prose) string values are replaced by <TEXT> unless --strict-text.
# (Argument `description`s come from the fixture and are compared exactly.)
PROSE_KEYS = {"instructions", "how_to_invoke", "important_note", "feedback", "issue_detected"}

SESSION_JOB_YAML = """\
name: session_demo
summary: A job that exists for one session only
step_arguments:
  - name: note
    description: A one-line note
    type: string
workflows:
  solo:
    summary: Write one note
    steps:
      - name: write_note
        instructions: |
          Write a one-line note about the session.
        outputs:
          note: {}
"""
SESSION_JOB_SCHEMA_INVALID = "name: broken_job\nsummary: Missing its workflows\nstep_arguments: []\n"
SESSION_JOB_DUPLICATE_STEP = SESSION_JOB_YAML.replace("name: session_demo", "name: dup_steps").replace(
    "        outputs:\n          note: {}\n",
    "        outputs:\n          note: {}\n      - name: write_note\n        instructions: Again.\n",
)


# --------------------------------------------------------------------------------------------
# The call sequence
# --------------------------------------------------------------------------------------------
class Recorder:
    """Runs calls on one session and records every result under a numbered label."""

    def __init__(self, session, root: Path):
        self.session, self.root, self.records = session, root, []

    def add(self, name: str, request: dict, result) -> None:
        self.records.append({"label": f"{len(self.records):02d}_{name}", "request": request, "result": result})

    async def call(self, name: str, tool: str, **arguments) -> dict:
        request = {"tool": tool, "arguments": arguments}
        try:
            result = dump(await call_tool(self.session, tool, arguments))
        except McpError as e:
            result = {"jsonrpc_error": {"code": e.error.code, "message": e.error.message}}
        self.add(name, request, result)
        return result

    async def protocol(self, name: str, coro_fn) -> None:
        try:
            result = dump(await coro_fn())
        except McpError as e:
            result = {"jsonrpc_error": {"code": e.error.code, "message": e.error.message}}
        self.add(name, {"method": name}, result)

    def write(self, rel: str, text: str = "content\n") -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


async def sequence(r: Recorder) -> None:
    """The scripted calls. Labels must stay stable: KNOWN_DIFFERENCES refers to them."""
    s = r.session
    await r.protocol("tools_list", s.list_tools)
    await r.protocol("ping", s.send_ping)
    await r.protocol("prompts_list", s.list_prompts)
    await r.protocol("resources_list", s.list_resources)

    await r.call("get_workflows", "get_workflows")

    # --- main flow of competitive_research/full_analysis in session s1
    cr = dict(goal="Compare note-taking apps", job_name="competitive_research", workflow_name="full_analysis")
    inputs = {"market_segment": "note-taking apps", "product_category": "productivity", "not_an_input": "ignored"}
    await r.call("start_full_analysis", "start_workflow", session_id="s1", inputs=inputs, **cr)
    await r.call("finished_step_missing_outputs", "finished_step", session_id="s1", outputs={})
    await r.call("finished_step_unknown_outputs", "finished_step", session_id="s1",
                 outputs={"competitors_list": "out/competitors.md", "market_summary": "x", "zeta": "1", "bogus": "2"})
    r.write("out/competitors.md", "- Alpha\n- Beta\n")
    await r.call("finished_step_string_given_list", "finished_step", session_id="s1",
                 outputs={"market_summary": ["a", "b"], "competitors_list": "out/competitors.md"})
    await r.call("finished_step_file_missing", "finished_step", session_id="s1",
                 outputs={"competitors_list": "out/missing.md", "market_summary": "x"})
    await r.call("finished_step_file_list_one_missing", "finished_step", session_id="s1",
                 outputs={"competitors_list": ["out/competitors.md", "out/nope.md"], "market_summary": "x"})
    await r.call("finished_step_number_value", "finished_step", session_id="s1",
                 outputs={"competitors_list": "out/competitors.md", "market_summary": 5})
    await r.call("finished_step_ok_next_step", "finished_step", session_id="s1", work_summary="Listed two.",
                 outputs={"competitors_list": "out/competitors.md", "market_summary": "Crowded market."})

    # --- nested workflow pushed on top of s1, then completed (pops back)
    await r.call("start_nested_inner_on_top", "start_workflow", session_id="s1", goal="Summarise",
                 job_name="nested_demo", workflow_name="inner")
    r.add("status_while_nested", {}, session_status_order(r.root, "s1"))
    r.write("out/summary.md")
    await r.call("finished_step_inner_complete", "finished_step", session_id="s1",
                 outputs={"summary_file": ["out/summary.md"]})
    r.write("out/notes.md")
    await r.call("finished_step_research_next", "finished_step", session_id="s1",
                 outputs={"research_notes.md": "out/notes.md"})
    await r.call("go_to_step_back_to_first", "go_to_step", session_id="s1", step_id="identify_competitors")
    await r.call("go_to_step_forward_error", "go_to_step", session_id="s1", step_id="write_report")
    await r.call("go_to_step_unknown_step", "go_to_step", session_id="s1", step_id="no_such_step")
    await r.call("go_to_step_restart_current", "go_to_step", session_id="s1", step_id="identify_competitors")
    await r.call("abort_full_analysis", "abort_workflow", session_id="s1", explanation="Changed my mind")
    await r.call("abort_empty_stack", "abort_workflow", session_id="s1", explanation="again")
    await r.call("finished_step_empty_stack", "finished_step", session_id="s1", outputs={})
    await r.call("go_to_step_empty_stack", "go_to_step", session_id="s1", step_id="x")

    # --- agent stacks: outer on the main stack, inner run by agent a1
    await r.call("start_outer", "start_workflow", session_id="s1", goal="Write a doc", job_name="nested_demo",
                 workflow_name="outer", inputs={"topic": "rust"})
    r.write("out/outline.md")
    await r.call("finished_outline", "finished_step", session_id="s1", outputs={"outline_file": "out/outline.md"})
    await r.call("agent_start_inner", "start_workflow", session_id="s1", agent_id="a1", goal="Summarise",
                 job_name="nested_demo", workflow_name="inner")
    await r.call("agent_go_to_step_restart", "go_to_step", session_id="s1", agent_id="a1", step_id="summarize")
    await r.call("agent_finished_inner", "finished_step", session_id="s1", agent_id="a1",
                 outputs={"summary_file": "out/summary.md"}, work_summary="Summarised.")
    await r.call("agent_finished_empty_stack", "finished_step", session_id="s1", agent_id="a1", outputs={})
    await r.call("main_finished_delegate", "finished_step", session_id="s1", outputs={})
    await r.call("agent_start_perf", "start_workflow", session_id="s1", agent_id="a1", goal="Quick",
                 job_name="perf_job", workflow_name="quick")
    await r.call("agent_abort_perf", "abort_workflow", session_id="s1", agent_id="a1", explanation="Not needed")
    r.write("out/final.md")
    await r.call("main_finished_outer", "finished_step", session_id="s1", outputs={"final_doc": "out/final.md"})

    # --- missing session ids
    await r.call("start_no_session_id", "start_workflow", **cr)
    await r.call("start_empty_session_id", "start_workflow", session_id="", **cr)
    await r.call("finished_no_session_id", "finished_step", outputs={})
    await r.call("abort_no_session_id", "abort_workflow", explanation="x")
    await r.call("go_to_step_no_session_id", "go_to_step", step_id="x")
    await r.call("register_no_session_id", "register_session_job", job_name="session_demo",
                 job_definition_yaml=SESSION_JOB_YAML)
    await r.call("get_session_job_no_session_id", "get_session_job", job_name="session_demo")

    # --- job / workflow lookup
    await r.call("start_unknown_job", "start_workflow", session_id="s3", goal="g", job_name="no_such_job",
                 workflow_name="x")
    await r.call("start_unknown_workflow", "start_workflow", session_id="s3", goal="g", job_name="nested_demo",
                 workflow_name="no_such_workflow")
    await r.call("start_single_workflow_autoselect", "start_workflow", session_id="s3", goal="g",
                 job_name="competitive_research", workflow_name="whatever")
    await r.call("abort_autoselected", "abort_workflow", session_id="s3", explanation="done")

    # --- session jobs (session s4)
    await r.call("register_valid", "register_session_job", session_id="s4", job_name="session_demo",
                 job_definition_yaml=SESSION_JOB_YAML)
    await r.call("register_bad_name", "register_session_job", session_id="s4", job_name="Bad-Name",
                 job_definition_yaml=SESSION_JOB_YAML)
    await r.call("register_bad_yaml", "register_session_job", session_id="s4", job_name="bad_yaml",
                 job_definition_yaml="name: [unclosed\n")
    await r.call("register_schema_invalid", "register_session_job", session_id="s4", job_name="broken_job",
                 job_definition_yaml=SESSION_JOB_SCHEMA_INVALID)
    await r.call("register_duplicate_step", "register_session_job", session_id="s4", job_name="dup_steps",
                 job_definition_yaml=SESSION_JOB_DUPLICATE_STEP)
    await r.call("get_session_job", "get_session_job", session_id="s4", job_name="session_demo")
    await r.call("get_session_job_unknown", "get_session_job", session_id="s4", job_name="nope")
    await r.call("get_session_job_other_session", "get_session_job", session_id="s5", job_name="session_demo")
    await r.call("start_session_job", "start_workflow", session_id="s4", goal="Note", job_name="session_demo",
                 workflow_name="solo")
    await r.call("finished_session_job", "finished_step", session_id="s4", outputs={"note": "hello"})
    await r.call("start_session_job_autoselect", "start_workflow", session_id="s4", goal="Note",
                 job_name="session_demo", workflow_name="other")
    await r.call("abort_session_job", "abort_workflow", session_id="s4", explanation="done")
    await r.call("start_broken_session_job", "start_workflow", session_id="s4", goal="g", job_name="broken_job",
                 workflow_name="x")
    await r.call("start_session_job_other_session", "start_workflow", session_id="s5", goal="g",
                 job_name="session_demo", workflow_name="solo")

    # --- corrupt state file for session s2
    r.write(".deepwork/tmp/sessions/claude/session-s2/state.json", "{ this is not json")
    await r.call("corrupt_state_finished_step", "finished_step", session_id="s2", outputs={})
    await r.call("corrupt_state_abort", "abort_workflow", session_id="s2", explanation="x")
    await r.call("corrupt_state_go_to_step", "go_to_step", session_id="s2", step_id="x")

    # --- protocol-level errors
    await r.call("unknown_tool", "no_such_tool")
    await r.call("unexpected_argument", "get_workflows", foo=1)
    await r.call("missing_required_argument", "start_workflow", session_id="s6", job_name="perf_job",
                 workflow_name="quick")

    r.add("disk", {}, disk_snapshot(r.root))


def session_status_order(root: Path, session: str) -> dict:
    """The workflows of a session's status file in their order (other tools read `workflows[0]`)."""
    status = yaml.safe_load((root / ".deepwork/tmp/status/v1/sessions" / f"{session}.yml").read_text())
    listed = [{"job": w["job_name"], "workflow": w["workflow"]["name"], "status": w["status"]} for w in status["workflows"]]
    active = [w["workflow_instance_id"] for w in status["workflows"] if w["status"] == "active"]
    return {"workflows": listed, "active_workflow_is_last_started": bool(active) and status["active_workflow"] == active[-1]}


def disk_snapshot(root: Path) -> dict:
    """Files the server left under .deepwork/ (paths), with state and status files parsed."""
    tmp = root / ".deepwork" / "tmp"
    entries = [p for p in (root / ".deepwork").rglob("*") if p.is_file() or not any(p.iterdir())]
    snap = {
        # files, and empty directories (with a trailing /), except the fixture's own jobs
        "files": sorted(str(p.relative_to(root)) + ("" if p.is_file() else "/") for p in entries
                        if not str(p.relative_to(root)).startswith(".deepwork/jobs/")),
        "tmp_gitignore": (tmp / ".gitignore").read_text() if (tmp / ".gitignore").exists() else None,
        "state": {},
        "status": {},
    }
    for f in sorted((tmp / "sessions" / "claude").glob("session-*/*.json")):
        text = f.read_text()
        try:
            snap["state"][f"{f.parent.name}/{f.name}"] = json.loads(text)
        except ValueError:
            snap["state"][f"{f.parent.name}/{f.name}"] = {"unparseable": text}
    status = tmp / "status" / "v1"
    for f in sorted(status.rglob("*.yml")) if status.exists() else []:
        snap["status"][str(f.relative_to(status))] = json_safe(yaml.safe_load(f.read_text()))
    return snap


def json_safe(v):
    """YAML values that JSON lacks (e.g. an unquoted timestamp parsed as datetime) become tagged strings."""
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [json_safe(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return f"<yaml {type(v).__name__}: {v}>"


async def run_server(name: str, template: str, workdir: Path, jobs: int) -> tuple[list[dict], str]:
    """Build a fresh fixture for this server, run the sequence, return (records, stderr text)."""
    root = fixture.build(workdir / name / "project", jobs=jobs)
    argv = server_argv(template, root)
    errpath = workdir / name / "stderr.txt"
    with open(errpath, "w") as errlog:
        async with open_session(argv, root, errlog) as (session, init):
            recorder = Recorder(session, root)
            recorder.add("initialize", {"argv": argv}, dump(init))
            await sequence(recorder)
    return recorder.records, errpath.read_text()


# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------
# Timestamps in DeepWork's format (Python `datetime.now(UTC).isoformat()`) become <TS>; any other
# timestamp shape becomes e.g. <TS:dddd-dd-ddTdd:dd:ddZ> so a format difference still shows.
TS_RE = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:?\d\d|Z)?")
TS_PYTHON_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00")
UUID_RE = re.compile(r"\b[0-9a-f]{32}\b")  # uuid4().hex, DeepWork's workflow_instance_id format
UUID_DASHED_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


PYDANTIC_RE = re.compile(r"errors\.pydantic\.dev/[0-9.]+/")
FIXTURE_JOB_RE = re.compile(r"^(competitive_research|nested_demo|perf_job|gen_job_\d+)$")


def _ts(m: re.Match) -> str:
    if TS_PYTHON_RE.fullmatch(m.group(0)):
        return "<TS>"
    return "<TS:" + re.sub(r"\d", "d", m.group(0)) + ">"


def fixture_instruction_texts() -> set[str]:
    texts = set()
    for text in [*fixture.job_texts().values(), SESSION_JOB_YAML]:
        for wf in yaml.safe_load(text)["workflows"].values():
            texts.update(step["instructions"] for step in wf["steps"] if "instructions" in step)
    return texts


def without_descriptions(schema):
    """A JSON schema without its `description`s, keys sorted (their order means nothing in a schema)."""
    if isinstance(schema, dict):
        return {k: without_descriptions(schema[k]) for k in sorted(schema) if k != "description"}
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


class Normaliser:
    def __init__(self, root: Path, strict_text: bool):
        self.roots = sorted({str(root), str(root.resolve())}, key=len, reverse=True)
        self.strict = strict_text
        self.fixture_texts = fixture_instruction_texts()

    def string(self, s: str) -> str:
        for root in self.roots:
            s = s.replace(root, "<ROOT>")
        s = TS_RE.sub(_ts, s)
        s = UUID_RE.sub("<UUID>", s)
        s = UUID_DASHED_RE.sub("<UUID-dashed>", s)
        s = PYDANTIC_RE.sub("errors.pydantic.dev/<V>/", s)
        if s.startswith("Invalid YAML syntax: "):  # PyYAML's own message cannot be reproduced
            s = "Invalid YAML syntax: <YAML_ERROR>"
        return s

    def step_instructions(self, s: str) -> str:
        """Keep the generated '## Inputs' block and fixture text; other prose becomes <TEXT>."""
        head, body = "", s
        if s.startswith("## Inputs\n\n") and "\n\n" in s[11:]:
            cut = s.index("\n\n", 11) + 2
            head, body = s[:cut], s[cut:]
        if self.strict or body in self.fixture_texts:
            return head + body
        return head + "<TEXT>"

    def value(self, v, key: str | None = None):
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k == "jobs" and isinstance(x, list):  # drop standard / package jobs
                    x = [j for j in x if not isinstance(j, dict) or FIXTURE_JOB_RE.match(str(j.get("name")))]
                out[self.string(k)] = self.value(x, k)
            return out
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if isinstance(v, str):
            v = self.string(v)
            if key == "step_instructions":
                return self.step_instructions(v)
            if not self.strict and key in PROSE_KEYS and v and v not in self.fixture_texts:
                return "<TEXT>"
        return v

    def record(self, rec: dict):
        label, res = rec["label"], rec["result"]
        name = label.split("_", 1)[1]
        if "jsonrpc_error" in res:
            return {"jsonrpc_error": self.value(res["jsonrpc_error"])}
        if name == "initialize":
            instructions = res.get("instructions") or ""
            listed = [line for line in instructions.splitlines() if line.startswith("- **")]
            return {
                "protocolVersion": res.get("protocolVersion"),
                "serverInfo.name": res.get("serverInfo", {}).get("name"),
                "has_tools_capability": "tools" in res.get("capabilities", {}),
                "instructions": self.value(res.get("instructions"), "instructions"),
                # the workflow list (`- **job** (workflows): summary`): the fixture's lines exactly, the
                # standard jobs by name (their summaries are each server's own), within the budget
                "instructions_fixture_workflows": [l for l in listed if FIXTURE_JOB_RE.match(l[4:].split("**")[0])],
                "instructions_other_jobs": sorted(l[4:].split("**")[0] for l in listed
                                                  if not FIXTURE_JOB_RE.match(l[4:].split("**")[0])),
                "instructions_within_budget": len(instructions) <= INSTRUCTIONS_BUDGET,
            }
        if name == "tools_list":
            return [
                {
                    "name": t["name"],
                    "properties": list(t["inputSchema"].get("properties", {})),
                    "required": t["inputSchema"].get("required", []),
                    "has_outputSchema": "outputSchema" in t,
                    # the whole input schema but its descriptions (each server's own words)
                    "inputSchema": without_descriptions(t["inputSchema"]),
                }
                for t in res.get("tools", [])
            ]
        if name == "disk":
            return self.value(res)
        if "content" not in res:  # ping / list results
            return self.value(res)
        out = {"isError": res.get("isError", False)}
        texts = [c.get("text") for c in res["content"] if c.get("type") == "text"]
        if name in ERROR_MENTIONS:  # the framework's wording: only the names it mentions
            out["content_names"] = {word: word in " ".join(texts) for word in ERROR_MENTIONS[name]}
            return out
        if "structuredContent" in res:
            sc = res["structuredContent"]
            compact = json.dumps(sc, separators=(",", ":"), ensure_ascii=False)
            out["content"] = "<compact JSON of structuredContent>" if texts == [compact] else self.value(texts)
            out["structuredContent"] = self.value(sc)
        else:
            out["content"] = self.value(texts)
        return out

    def all(self, records: list[dict]) -> dict:
        return {rec["label"]: self.record(rec) for rec in records}


# --------------------------------------------------------------------------------------------
# Diff
# --------------------------------------------------------------------------------------------
MISSING = "<missing>"


def diff(a, b, path: str = "") -> list[tuple[str, object, object]]:
    if type(a) is not type(b):
        return [(path, a, b)]
    if isinstance(a, dict):
        out = []
        if list(a) != list(b) and set(a) == set(b):
            out.append((f"{path}<key order>" if path else "<key order>", list(a), list(b)))
        for k in a:
            sub = f"{path}.{k}" if path else k
            out += diff(a[k], b[k], sub) if k in b else [(sub, a[k], MISSING)]
        out += [(f"{path}.{k}" if path else k, MISSING, b[k]) for k in b if k not in a]
        return out
    if isinstance(a, list):
        if (a != b and max(len(a), len(b)) > 1 and len(short(a) + short(b)) > 300
                and all(isinstance(x, str) and "\n" not in x and len(x) < 200 for x in a + b)):
            # long lists of scalars (file lists): one entry per item only on one side, path `list[-]item`
            # (only in the first) or `list[+]item` (only in the second)
            only_a, only_b = [x for x in a if x not in b], [y for y in b if y not in a]
            if not only_a and not only_b:
                return [(f"{path}<order>", a, b)]
            return [(f"{path}[-]{x}", x, MISSING) for x in only_a] + [(f"{path}[+]{y}", MISSING, y) for y in only_b]
        out = []
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else MISSING
            y = b[i] if i < len(b) else MISSING
            out += diff(x, y, f"{path}[{i}]") if MISSING not in (x, y) else [(f"{path}[{i}]", x, y)]
        return out
    return [] if a == b else [(path, a, b)]


def star_match(pattern: str, text: str) -> bool:
    """Glob where only `*` is special (so `[0]` in a path is literal)."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), text, re.S) is not None


def known(label: str, path: str) -> str | None:
    for pattern, why in KNOWN_DIFFERENCES.items():
        if star_match(pattern, f"{label}:{path}"):
            return why
    return None


def short(v, limit: int = 400) -> str:
    s = v if v == MISSING else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


def report(a: dict, b: dict, names: tuple[str, str], only: str) -> int:
    """Print the per-call diff; return the number of unexpected differences."""
    unexpected = equal = known_only = 0
    labels = list(a) + [k for k in b if k not in a]
    for label in labels:
        if not star_match(only, label):
            continue
        diffs = diff(a.get(label, MISSING), b.get(label, MISSING))
        if not diffs:
            equal += 1
            print(f"  = {label}")
            continue
        bad = [(p, x, y) for p, x, y in diffs if not known(label, p)]
        unexpected += len(bad)
        known_only += not bad
        print(f"  {'!' if bad else '~'} {label}")
        for p, x, y in diffs:
            why = known(label, p)
            tag = f"   [known: {why}]" if why else ""
            print(f"      {p or '<result>'}:{tag}\n        {names[0]:>8}: {short(x)}\n        {names[1]:>8}: {short(y)}")
    print(f"\n{len(labels)} calls: {equal} equal, {known_only} differ only by known differences, "
          f"{unexpected} unexpected difference(s)")
    return unexpected


NAMES = ("deepwork", "cairn")


async def run_both(run_server, args, workdir: Path, strict_text: bool, record_stem: str,
                   normaliser: type = None) -> dict | None:
    """Runs `run_server(name, template, workdir)` for DeepWork then cairn and normalises each transcript; `None` when
    a server could not be run (the reason is printed). With `--record`, raw and normalised transcripts and the
    server's stderr are saved as `<name><record_stem>.json` and friends. `normaliser` defaults to `Normaliser`."""
    normaliser = normaliser or Normaliser
    normalised, failed = {}, False
    for name, template in zip(NAMES, (args.deepwork, args.cairn)):
        try:
            records, stderr = await run_server(name, template, workdir)
        except Exception as e:  # noqa: BLE001 - report any failure to run a server
            print(f"{name}: could not run `{template}`: {e!r}", file=sys.stderr)
            errf = workdir / name / "stderr.txt"
            if errf.exists():
                print(f"--- {name} stderr (tail) ---\n{errf.read_text()[-3000:]}", file=sys.stderr)
            if args.verbose:
                traceback.print_exc()
            failed = True
            continue
        normalised[name] = normaliser(workdir / name / "project", strict_text).all(records)
        if args.record:
            out = Path(args.record)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{name}{record_stem}.json").write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
            (out / f"{name}{record_stem}.normalised.json").write_text(
                json.dumps(normalised[name], indent=2, ensure_ascii=False) + "\n")
            (out / f"{name}{record_stem}.stderr.txt").write_text(stderr)
    return None if failed else normalised


async def main_async(args) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="cairn-compare-"))
    try:
        run = lambda name, template, wd: run_server(name, template, wd, args.jobs)  # noqa: E731
        normalised = await run_both(run, args, workdir, args.strict_text, "")
        if normalised is None:
            return 2
        print(f"deepwork: {args.deepwork}\ncairn:    {args.cairn}\n")
        bad = report(normalised["deepwork"], normalised["cairn"], NAMES, args.only)
        print("equal" if bad == 0 else "DIFFERENT")
        return 0 if bad == 0 else 1
    finally:
        if args.keep:
            print(f"(fixtures kept in {workdir})", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deepwork", default=DEFAULT_COMMANDS["deepwork"], help="reference server command ({root})")
    ap.add_argument("--cairn", default=DEFAULT_COMMANDS["cairn"], help="server under test command ({root})")
    ap.add_argument("--jobs", type=int, default=3, help="jobs in the fixture (more than ~10 switches the "
                    "server instructions to their short form)")
    ap.add_argument("--record", metavar="DIR", help="save raw and normalised transcripts to DIR")
    ap.add_argument("--strict-text", action="store_true", help="compare prose texts too")
    ap.add_argument("--only", default="*", metavar="GLOB", help="only report calls whose label matches")
    ap.add_argument("--keep", action="store_true", help="keep the temporary fixture projects")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
