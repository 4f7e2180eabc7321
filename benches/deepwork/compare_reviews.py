#!/usr/bin/env python3
"""Review-id parity: drive DeepWork and cairn through the review tools and compare every review id.

    .venv-dw/bin/python benches/deepwork/compare_reviews.py [--deepwork CMD] [--cairn CMD]
        [--record DIR] [--keep] [--only LABEL_GLOB]

Each server gets a fresh review fixture (`fixture.py --with-reviews`: `.deepreview` files at the root
and in subdirectories with every strategy, unchanged_matching_files, a catch-all rule, a broken
file, DeepSchemas, CRLF / CR / BOM / non-UTF-8 files, a `feature` branch with committed, staged,
unstaged, renamed, deleted and untracked changes, and the job `review_demo`). The sequence
(`sequence()` below) calls `get_review_instructions` in git mode and with explicit `files`,
`get_configured_reviews` (all rules and filtered), `mark_review_as_passed`, `get_review_instructions`
again, then runs the quality gate through `finished_step` on `review_demo/write` (needs_work, pass
some reviews, needs_work, pass the rest, next step, ..., workflow_complete).

What is compared, per call:
* `tasks`: the task blocks of the returned text (`description` / `subagent_type` / `prompt`), keyed
  by the review id taken from the prompt's instruction-file name, in the order returned;
* `written`: for every id in the text, what its instruction file `<id>.md` says structurally: the
  `# Review:` title, the `review_id` of its After Review section, the `@` files of Files to Review /
  Unchanged Matching Files, the All Changed Files list and the policy location (prose is not compared);
* `dir` / `passed`: the `*.md` and `*.passed` names in `.deepwork/tmp/review_instructions/` after the call
  (`dir`: instruction files of this call's tasks; `dir_other`: how many other files an earlier call of
  the sequence listed, and the names of any other file, compared exactly);
* the warning prefix (its entries, with the validator's wording cut after `Validation error at <path>`),
  any other message text exactly, and for `finished_step` the status and the rest of the result
  (normalised like compare.py; `feedback` is parsed into `tasks` instead).
`get_configured_reviews` is compared as the rule list (`name @ defining_file`, in order; standard-schema
paths normalised to `<STANDARD_SCHEMAS>/<name>/deepschema.yml`) and each rule's description.

Exit code 0 when equal apart from KNOWN_DIFFERENCES (each with its reason), 1 with a diff, 2 when a
server could not be run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402
import fixture  # noqa: E402
from mcpclient import DEFAULT_COMMANDS, open_session, server_argv  # noqa: E402

# --------------------------------------------------------------------------------------------
# Deliberate differences of cairn, accepted by the diff. Key: glob over "<label>:<path>".
# Review ids for the same rule, files and contents must never appear here.
# --------------------------------------------------------------------------------------------
KNOWN_DIFFERENCES = {
    # DeepWork's shipped job_yml standard schema references a guidance file missing from its wheel, so
    # every non-empty get_review_instructions answer starts with this warning; cairn's standard schemas
    # are complete (docs/compatibility.md).
    "*:warnings[-]deepschema: <STANDARD_SCHEMAS>/job_yml/deepschema.yml: references entry*":
        "DeepWork's standard job_yml schema warns about its own missing file",
    # Anonymous DeepSchemas in a subdirectory never match in DeepWork (spec §10.4 bug); cairn matches them,
    # so src/.deepschema.settings.json.yml reviews src/settings.json in cairn only.
    "*:tasks.settings.json-DeepSchema-Compliance--src-settings.json--*":
        "anonymous DeepSchema in a subdirectory matches (DeepWork never matches it)",
    "*:written.settings.json-DeepSchema-Compliance--src-settings.json--*":
        "anonymous DeepSchema in a subdirectory matches (DeepWork never matches it)",
    "*:dir[+]settings.json-DeepSchema-Compliance--src-settings.json--*":
        "anonymous DeepSchema in a subdirectory matches (DeepWork never matches it)",
    # DeepWork lists an anonymous schema's rule by the schema's file name; cairn's description names the
    # governed file by its root-relative path (only visible for a schema in a subdirectory, which
    # DeepWork never matches anyway).
    "*configured_*:descriptions.settings.json DeepSchema Compliance @ src/.deepschema.settings.json.yml:0":
        "anonymous DeepSchema in a subdirectory: description names src/settings.json",
    # cairn deletes only un-passed instruction files older than an hour; DeepWork deletes every un-passed
    # one on each run, so cairn's directory still holds files that earlier calls listed (never others).
    "*:dir_other.listed by an earlier call": "un-passed instruction files of earlier calls are kept (stale-only clean-up)",
}

REVIEW_DIR = ".deepwork/tmp/review_instructions"

# Explicit files: unsorted, one duplicate, one missing file (hashes as MISSING), an unchanged file,
# a file matched only by the catch-all rule (dropped for explicit files), CRLF and non-UTF-8 files.
EXPLICIT_FILES = [
    "src/legacy.py", "docs/guide.md", "src/app.py", "docs/guide.md", "docs/missing.md",
    "docs/api/users.md", "config.yml", "src/lib/helpers.py", "README.md", "data/mac.txt",
]


class Recorder(compare.Recorder):
    """Adds the review-instructions directory listing (and the instruction files) to each record."""

    def add(self, name: str, request: dict, result) -> None:
        snap = {}
        d = self.root / REVIEW_DIR
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if p.suffix == ".md":
                    snap[p.name] = p.read_text(encoding="utf-8", errors="replace")
                elif p.suffix == ".passed":
                    snap[p.name] = None
        super().add(name, request, result)
        self.records[-1]["review_dir"] = snap


async def sequence(r: Recorder) -> None:
    """The scripted calls. Labels must stay stable: KNOWN_DIFFERENCES refers to them."""
    await r.call("configured_all", "get_configured_reviews")
    await r.call("configured_filtered", "get_configured_reviews",
                 only_rules_matching_files=["docs/guide.md", "src/app.py", "README.md", "docs/api/users.md"])
    await r.call("git_mode", "get_review_instructions")
    await r.call("explicit_files", "get_review_instructions", files=EXPLICIT_FILES)
    await r.call("explicit_empty", "get_review_instructions", files=[])

    # pass three reviews chosen by rule from this server's own answer (the ids themselves are compared)
    git_ids = ids_in(text_of(r.records[2]["result"]))
    for prefix in ("markdown_style--docs-guide.md--", "python_files--src-legacy.py--", "everything--"):
        rid = next((i for i in git_ids if i.startswith(prefix)), prefix + "not-found")
        await r.call(f"mark_passed_{prefix.split('--')[0]}", "mark_review_as_passed", review_id=rid)
    await r.call("git_mode_after_pass", "get_review_instructions")
    # editing a passed file gives it a new id, so its review comes back
    r.write("docs/guide.md", "# Guide\n\nHow to use it, now with more examples.\n")
    await r.call("git_mode_after_edit", "get_review_instructions")

    # --- the quality gate on review_demo/write
    await r.call("start_review_demo", "start_workflow", session_id="g1", goal="Write a report",
                 job_name="review_demo", workflow_name="write", inputs={"topic": "Rust MCP servers"})
    (r.root / "out").mkdir(exist_ok=True)
    (r.root / "out" / "report.md").write_bytes(b"# Report\r\n\r\nRust servers start fast.\r\n")
    draft = {"report": "out/report.md", "headline": "Rust MCP servers start fast"}
    await r.call("gate_draft_needs_work", "finished_step", session_id="g1", outputs=draft,
                 work_summary="Outlined, then drafted the report.")
    gate_ids = ids_in(feedback_of(r.records[-1]["result"]))
    for rid in [i for i in gate_ids if i.startswith(("step_draft_output_headline--", "markdown_style--"))]:
        await r.call(f"gate_mark_{rid.split('--')[0]}", "mark_review_as_passed", review_id=rid)
    await r.call("gate_draft_still_needs_work", "finished_step", session_id="g1", outputs=draft,
                 work_summary="Outlined, then drafted the report.")
    for rid in ids_in(feedback_of(r.records[-1]["result"])):
        await r.call(f"gate_mark_{rid.split('--')[0]}", "mark_review_as_passed", review_id=rid)
    await r.call("gate_draft_passes", "finished_step", session_id="g1", outputs=draft,
                 work_summary="Outlined, then drafted the report.")
    (r.root / "out" / "site").mkdir(exist_ok=True)
    (r.root / "out" / "site" / "report.md").write_bytes(b"# Report\r\n\r\nRust servers start fast.\r\n")
    (r.root / "out" / "site" / "report.txt").write_bytes("Rust servers start fast \u2014 copy\n".encode())
    published = {"published": ["out/site/report.txt", "out/site/report.md"]}
    await r.call("gate_publish_needs_work", "finished_step", session_id="g1", outputs=published)
    for rid in ids_in(feedback_of(r.records[-1]["result"])):
        await r.call(f"gate_mark_{rid.split('--')[0]}", "mark_review_as_passed", review_id=rid)
    await r.call("gate_publish_completes", "finished_step", session_id="g1", outputs=published)
    await r.call("git_mode_at_end", "get_review_instructions")


# --------------------------------------------------------------------------------------------
# Parsing the answers
# --------------------------------------------------------------------------------------------
TASK_RE = re.compile(r'^description: (.*)\n\tsubagent_type: (.*)\n\tprompt: "(.*)"$', re.M)
WARNING_HEAD = "Warning: Some .deepreview files could not be parsed:\n"
VALIDATION_RE = re.compile(r"(Validation error at .*?): .*")
STANDARD_RE = re.compile(r"/\S*?standard_schemas/(?:[^/\s]+/)*?([a-z_]+)/deepschema\.yml")


def text_of(result: dict) -> str:
    texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
    return texts[0] if texts else ""


def feedback_of(result: dict) -> str:
    return (result.get("structuredContent") or {}).get("feedback") or ""


def ids_in(text: str) -> list[str]:
    return [Path(prompt).stem for _d, _a, prompt in TASK_RE.findall(text)]


def split_warnings(text: str) -> tuple[list[str], str]:
    if not text.startswith(WARNING_HEAD):
        return [], text
    head, _, body = text.partition("\n\n")
    lines = head.split("\n")[1:]
    return [line.removeprefix("  - ") for line in lines], body


def section_lines(md: str, title: str) -> list[str] | None:
    """The `- ...` lines of a `## title` section of an instruction file (None when absent)."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |^---$|\Z)", md, re.M | re.S)
    if not m:
        return None
    return [line[2:] for line in m.group(1).splitlines() if line.startswith("- ")]


def instruction_structure(md: str) -> dict:
    title = md.split("\n", 1)[0]
    after = section_lines(md, "After Review") or []
    rid = next((re.sub(r'^`review_id`: `"(.*)"`$', r"\1", a) for a in after if a.startswith("`review_id`")), None)
    policy = re.search(r"^This review was requested by the policy at `(.*)`\.?$", md, re.M)
    return {
        "title": title,
        "review_id": rid,
        "files_to_review": section_lines(md, "Files to Review"),
        "unchanged_matching_files": section_lines(md, "Unchanged Matching Files"),
        "all_changed_files": section_lines(md, "All Changed Files"),
        "has_content_to_review": "\n## Content to Review\n" in md,
        "requested_by": policy.group(1) if policy else None,
    }


class Normaliser(compare.Normaliser):
    def string(self, s: str) -> str:
        s = STANDARD_RE.sub(r"<STANDARD_SCHEMAS>/\1/deepschema.yml", s)
        return super().string(s)

    def review_text(self, text: str, snap: dict) -> dict:
        warnings, body = split_warnings(text)
        tasks, written = {}, {}
        for description, agent, prompt in TASK_RE.findall(body):
            rid = Path(prompt).stem
            tasks[rid] = {"description": description, "subagent_type": agent, "prompt": self.string(prompt)}
            md = snap.get(rid + ".md")
            written[rid] = self.value(instruction_structure(md)) if md is not None else "<no instruction file>"
        rest = TASK_RE.sub("<TASK>", body)
        return {
            "warnings": sorted(self.string(VALIDATION_RE.sub(r"\1: <DETAIL>", w)) for w in warnings),
            # the fixed lines around the task blocks are prose; anything else (messages) is compared exactly
            "message": "<TASK LIST>" if tasks else self.string(rest),
            "tasks": tasks,
            "written": written,
        }

    def all(self, records: list[dict]) -> dict:
        self.listed_before: set[str] = set()
        out = {}
        for rec in records:
            out[rec["label"]] = self.record(rec)
            self.listed_before.update(out[rec["label"]].get("tasks", {}) if isinstance(out[rec["label"]], dict) else ())
        return out

    def dir_state(self, snap: dict, tasks: dict) -> dict:
        passed = sorted(k[:-7] for k in snap if k.endswith(".passed"))
        md = sorted(k[:-3] for k in snap if k.endswith(".md"))
        return {
            "dir": [i for i in md if i in tasks],
            "dir_other": {
                "listed by an earlier call": sum(1 for i in md if i not in tasks and i in self.listed_before),
                "never listed": [i for i in md if i not in tasks and i not in self.listed_before],
            },
            "passed": passed,
        }

    def record(self, rec: dict):
        label, res, snap = rec["label"], rec["result"], rec.get("review_dir", {})
        name = label.split("_", 1)[1]
        if "jsonrpc_error" in res or "content" not in res:
            return super().record(rec)
        out = {"isError": res.get("isError", False)}
        if rec["request"].get("tool") == "get_review_instructions":
            out.update(self.review_text(text_of(res), snap))
        elif rec["request"].get("tool") == "get_configured_reviews":
            sc = res.get("structuredContent")
            items = sc.get("result", sc) if isinstance(sc, dict) else json.loads(text_of(res))
            rules = [self.configured(item) for item in items]
            keys = [f"{r.get('name')} @ {r.get('defining_file')}" for r in rules]
            out["rules"] = keys  # name and defining_file, in order
            out["descriptions"] = {k: r.get("description") for k, r in zip(keys, rules)}
        elif rec["request"].get("tool") == "finished_step":
            base = super().record(rec)
            out.update(base)
            out.update(self.review_text(feedback_of(res), snap) if feedback_of(res) else {})
        else:
            out.update(super().record(rec))
        if name.startswith(("git_mode", "explicit", "gate_", "mark_passed")):
            out.update(self.dir_state(snap, out.get("tasks", {})))
        return out

    def configured(self, item: dict) -> dict:
        item = self.value(item)
        if item.get("name", "").startswith("PARSE_ERROR:"):
            item["description"] = VALIDATION_RE.sub(r"\1: <DETAIL>", item["description"])
        return item


# --------------------------------------------------------------------------------------------
# Running and reporting
# --------------------------------------------------------------------------------------------
async def run_server(name: str, template: str, workdir: Path) -> tuple[list[dict], str]:
    root = fixture.build(workdir / name / "project", with_reviews=True)
    argv = server_argv(template, root)
    errpath = workdir / name / "stderr.txt"
    with open(errpath, "w") as errlog:
        async with open_session(argv, root, errlog) as (session, _init):
            recorder = Recorder(session, root)
            await sequence(recorder)
    return recorder.records, errpath.read_text()


_list_diff = compare.diff


def diff(a, b, path: str = "") -> list[tuple[str, object, object]]:
    """compare.diff, but lists of strings (ids, file names, warnings) are compared as sets, each item
    only on one side reported as `path[-]item` / `path[+]item`, and then by order (`path<order>`)."""
    if isinstance(a, list) and isinstance(b, list) and a != b and all(isinstance(x, str) for x in a + b):
        only_a, only_b = [x for x in a if x not in b], [y for y in b if y not in a]
        if not only_a and not only_b:
            return [(f"{path}<order>", a, b)]
        return [(f"{path}[-]{x}", x, compare.MISSING) for x in only_a] + \
            [(f"{path}[+]{y}", compare.MISSING, y) for y in only_b]
    return _list_diff(a, b, path)


compare.diff = diff  # compare.report and compare.diff's recursion use this


async def main_async(args) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="cairn-compare-reviews-"))
    names = compare.NAMES
    compare.KNOWN_DIFFERENCES.clear()
    compare.KNOWN_DIFFERENCES.update(KNOWN_DIFFERENCES)
    try:
        normalised = await compare.run_both(run_server, args, workdir, False, ".reviews", Normaliser)
        if normalised is None:
            return 2
        print(f"deepwork: {args.deepwork}\ncairn:    {args.cairn}\n")
        bad = compare.report(normalised["deepwork"], normalised["cairn"], names, args.only)
        for name in names:  # each instruction file must carry the id its name and the task list give
            checked, wrong = id_consistency(normalised[name])
            print(f"{name}: {checked} instruction files, review_id line = file name = prompt in {checked - len(wrong)}"
                  + (f"; MISMATCHES: {wrong}" if wrong else ""))
            bad += len(wrong)
        a_ids, b_ids = all_ids(normalised["deepwork"]), all_ids(normalised["cairn"])
        common = a_ids & b_ids
        print(f"review ids: {len(a_ids)} from deepwork, {len(b_ids)} from cairn, {len(common)} equal; "
              f"only deepwork: {sorted(a_ids - b_ids)}; only cairn: {sorted(b_ids - a_ids)}")
        print("equal" if bad == 0 else "DIFFERENT")
        return 0 if bad == 0 else 1
    finally:
        if args.keep:
            print(f"(fixtures kept in {workdir})", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def id_consistency(normalised: dict) -> tuple[int, list[str]]:
    checked, wrong = 0, []
    for label, rec in normalised.items():
        for rid, written in (rec.get("written") or {}).items() if isinstance(rec, dict) else ():
            checked += 1
            if not isinstance(written, dict) or written.get("review_id") != rid:
                wrong.append(f"{label}:{rid}")
    return checked, wrong


def all_ids(normalised: dict) -> set[str]:
    ids = set()
    for rec in normalised.values():
        if isinstance(rec, dict):
            ids.update(rec.get("tasks", {}))
            ids.update(rec.get("dir", []))
            ids.update(rec.get("passed", []))
    return ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deepwork", default=DEFAULT_COMMANDS["deepwork"], help="reference server command ({root})")
    ap.add_argument("--cairn", default=DEFAULT_COMMANDS["cairn"], help="server under test command ({root})")
    ap.add_argument("--record", metavar="DIR", help="save raw and normalised transcripts to DIR")
    ap.add_argument("--only", default="*", metavar="GLOB", help="only report calls whose label matches")
    ap.add_argument("--keep", action="store_true", help="keep the temporary fixture projects")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
