#!/usr/bin/env python3
"""Build a fresh DeepWork fixture project for cairn's comparison and benchmark scripts.

    python3 benches/deepwork/fixture.py DIR [--jobs N] [--with-reviews | --review-bench] [--force]

Creates DIR (a git repository with one commit) containing `.deepwork/jobs/` with:

* `competitive_research` - one workflow `full_analysis` (3 steps) where string and file_path
  step_arguments flow from step to step through `inputs`; it has
  `common_job_info_provided_to_all_steps_at_runtime` and `post_workflow_instructions`.
* `nested_demo` - workflows `outer` (its middle step is `sub_workflow: {workflow_name: inner}`)
  and `inner`.
* `perf_job` - tiny job for the benchmark: workflow `quick` (one step, one `string` output) and
  workflow `quick_file` (one step, one `file_path` output).
* with `--jobs N`: generated jobs `gen_job_001`, ... so that the project has N jobs in total.

Every job.yml follows the job schema of the DeepWork spec (§3.2) and is written from scratch for
cairn (no DeepWork job, schema or prose is copied). By default there are no `review` blocks and no
`.deepreview` files. `--with-reviews` builds the review-parity project used by compare_reviews.py
(see `build_reviews` below): `.deepreview` files at the root and in subdirectories with every strategy,
`unchanged_matching_files` / `all_changed_filenames`, a catch-all rule, a broken `.deepreview`, a
named and two anonymous DeepSchemas, files with CRLF / CR / BOM / non-UTF-8 content, the job
`review_demo` (output review blocks, an argument review, a reviewed string output, process
requirements), and a `feature` branch with a commit plus staged, unstaged, renamed, deleted and
untracked changes on top of `main`. `--review-bench` builds the review benchmark project of
`bench.py --reviews` (`build_review_bench`: 100 `.deepreview` files with 200 rules, 2,000 committed
files, 5 changed files).

Only the standard library is used, so any python3 can run it; `build(path, ...)`, `build_review_bench`
are the API used by compare.py, compare_reviews.py and bench.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

# --------------------------------------------------------------------------------------------
# Job definitions (YAML text, written by hand so key order and style are exactly what we want).
# --------------------------------------------------------------------------------------------

COMPETITIVE_RESEARCH = """\
name: competitive_research
summary: Map the competitors of a product and turn the findings into a positioning report
step_arguments:
  - name: market_segment
    description: The market segment the product competes in
    type: string
  - name: product_category
    description: The broad category of the product
    type: string
  - name: competitors_list
    description: Markdown file with one line per competitor found
    type: file_path
  - name: market_summary
    description: Two or three sentences describing the segment
    type: string
  - name: research_notes.md
    description: Notes with strengths and weaknesses of each competitor
    type: file_path
  - name: key_findings
    description: The three most important findings, as short sentences
    type: string
  - name: report_files
    description: The final report and its appendix
    type: file_path
  - name: positioning_statement
    description: One sentence positioning the product against the field
    type: string
workflows:
  full_analysis:
    summary: Find competitors, research them, then write a positioning report
    common_job_info_provided_to_all_steps_at_runtime: |
      Fixture job for cairn. Keep every file under the out/ directory and cite sources inline.
    steps:
      - name: identify_competitors
        instructions: |
          List between five and eight competitors in the given market segment.
          Write them to a markdown file and summarise the segment in a few sentences.
        inputs:
          market_segment: {}
          product_category:
            required: false
        outputs:
          competitors_list: {}
          market_summary: {}
      - name: research_competitors
        instructions: |
          For every competitor in the list, note strengths, weaknesses and pricing.
        inputs:
          competitors_list: {}
          market_summary:
            required: false
        outputs:
          research_notes.md: {}
          key_findings:
            required: false
      - name: write_report
        instructions: |
          Write the positioning report and a short appendix from the research notes.
        inputs:
          research_notes.md: {}
          key_findings:
            required: false
          market_segment:
            required: false
        outputs:
          report_files: {}
          positioning_statement: {}
        process_requirements:
          sources_cited: Every claim about a competitor MUST name its source.
    post_workflow_instructions: |
      Tell the user where the report is and offer to open a pull request with it.
"""

NESTED_DEMO = """\
name: nested_demo
summary: A workflow whose middle step runs another workflow of the same job
step_arguments:
  - name: topic
    description: What the document is about
    type: string
  - name: outline_file
    description: Outline of the document
    type: file_path
  - name: summary_file
    description: Summary written by the inner workflow
    type: file_path
  - name: final_doc
    description: The finished document
    type: file_path
workflows:
  outer:
    summary: Outline a document, summarise it in a nested workflow, then finish it
    steps:
      - name: outline
        instructions: |
          Write an outline for the topic.
        inputs:
          topic: {}
        outputs:
          outline_file: {}
      - name: delegate_summary
        sub_workflow:
          workflow_name: inner
      - name: finish
        instructions: |
          Turn the outline and the summary into the final document.
        inputs:
          outline_file: {}
          summary_file:
            required: false
        outputs:
          final_doc: {}
  inner:
    summary: Summarise an outline in one file
    steps:
      - name: summarize
        instructions: |
          Summarise the outline in one paragraph.
        inputs:
          outline_file:
            required: false
        outputs:
          summary_file: {}
"""

PERF_JOB = """\
name: perf_job
summary: Smallest possible job, used to time start_workflow and finished_step
step_arguments:
  - name: answer
    description: A short answer
    type: string
  - name: answer_file
    description: A file holding a short answer
    type: file_path
workflows:
  quick:
    summary: One step with one string output
    steps:
      - name: only_step
        instructions: |
          Reply with a short answer.
        outputs:
          answer: {}
  quick_file:
    summary: One step with one file output
    steps:
      - name: only_step
        instructions: |
          Write a short answer to a file.
        outputs:
          answer_file: {}
"""


def generated_job(index: int) -> str:
    """A small two-step job used to pad the project to N jobs."""
    name = f"gen_job_{index:03d}"
    return f"""\
name: {name}
summary: Generated job number {index} for the many-jobs benchmark
step_arguments:
  - name: request
    description: What to do
    type: string
  - name: draft
    description: A draft file
    type: file_path
  - name: verdict
    description: Final verdict
    type: string
workflows:
  main:
    summary: Draft then decide
    steps:
      - name: draft_it
        instructions: |
          Write a draft for the request.
        inputs:
          request: {{}}
        outputs:
          draft: {{}}
      - name: decide
        instructions: |
          Read the draft and give a verdict.
        inputs:
          draft: {{}}
        outputs:
          verdict: {{}}
  alternate:
    summary: Decide directly
    steps:
      - name: decide
        instructions: |
          Give a verdict without a draft.
        outputs:
          verdict: {{}}
"""


# --------------------------------------------------------------------------------------------
# The review-parity project (--with-reviews). Everything below is written for cairn.
# --------------------------------------------------------------------------------------------
# The job used for the quality gate: an output-level and an argument-level review block on the same
# file output (rules step_draft_output_report and ..._arg), a reviewed string output (an inline task),
# process requirements (reviewed when a work_summary and a file output are submitted), and a second
# step whose file-list output has an individual output review and a matches_together argument review.
REVIEW_DEMO = """\
name: review_demo
summary: A small job whose outputs are reviewed by the quality gate
step_arguments:
  - name: topic
    description: What the report is about
    type: string
  - name: report
    description: The report, one markdown file
    type: file_path
    review:
      strategy: individual
      instructions: The first paragraph of the report must state its conclusion.
  - name: headline
    description: A one-line headline for the report
    type: string
  - name: published
    description: The published copies of the report
    type: file_path
    review:
      strategy: matches_together
      instructions: The copies must be consistent with each other.
workflows:
  write:
    summary: Draft a report with a headline, then publish it
    common_job_info_provided_to_all_steps_at_runtime: |
      Fixture job for cairn's review comparison. Write everything under out/.
    steps:
      - name: draft
        instructions: |
          Draft a short report on the topic and give it a headline.
        inputs:
          topic: {}
        outputs:
          report:
            review:
              strategy: matches_together
              instructions: Every claim in the report must cite a source.
              additional_context:
                all_changed_filenames: true
          headline:
            review:
              strategy: individual
              instructions: The headline must be shorter than 80 characters.
              agent:
                claude: headline-editor
        process_requirements:
          outline_first: The agent MUST write an outline before drafting the report.
      - name: publish
        instructions: |
          Copy the report to the publishing folders.
        inputs:
          report: {}
        outputs:
          published:
            review:
              strategy: individual
              instructions: Each published copy must be identical to the report.
"""

GITIGNORE = """\
# Written by both servers at startup with different contents (each ships its own job schema);
# ignored so that it never shows up as a changed file and both projects change identically.
.deepwork/job.schema.json
# Scratch folder of both servers. cairn leaves it out of changed files anyway; DeepWork lists the fresh project's
# .deepwork/tmp/.gitignore as changed, which would make all_changed_files tasks differ by that one file.
.deepwork/tmp/
ignored/
"""

ROOT_DEEPREVIEW = """\
markdown_style:
  description: Markdown files use sentence-case headings
  match:
    include:
      - "out/**/*.md"
      - "docs/**/*.md"
    exclude:
      - "docs/api/**"
  review:
    strategy: individual
    instructions: Headings must be in sentence case and no line may exceed 120 characters.

docs_together:
  description: The top-level documentation pages read as one piece
  match:
    include:
      - "docs/*.md"
  review:
    strategy: matches_together
    instructions: The pages must not contradict each other.
    additional_context:
      unchanged_matching_files: true
      all_changed_filenames: true

config_tripwire:
  description: A configuration or data change gets a review of the whole change
  match:
    include:
      - config.yml
      - "data/*.txt"
  review:
    strategy: all_changed_files
    instructions: Check that the rest of the change is consistent with the configuration change.

text_data:
  description: Text data files are plain and well formed
  match:
    include:
      - "data/*.txt"
  review:
    strategy: individual
    agent:
      claude: data-checker
    instructions: Every line must be a complete record.

everything:
  description: A catch-all rule (dropped when files are passed explicitly)
  match:
    include:
      - "**/*"
    exclude:
      - ".deepwork/**"
      - "**/.deepreview"
  review:
    strategy: matches_together
    instructions: Look over the whole change for anything surprising.
"""

SRC_DEEPREVIEW = """\
python_files:
  description: Python modules follow the project style
  match:
    include:
      - "**/*.py"
    exclude:
      - "lib/vendored_*.py"
  review:
    strategy: individual
    instructions: Functions need docstrings and type hints.

python_together:
  description: Python changes are coherent across modules
  match:
    include:
      - "**/*.py"
  review:
    strategy: matches_together
    instructions: Changed modules must still work with the unchanged ones.
    additional_context:
      unchanged_matching_files: true

markdown_style:
  description: Markdown inside src (same rule name as the root rule, an independent rule)
  match:
    include:
      - "**/*.md"
  review:
    strategy: individual
    instructions: Code notes stay short.
"""

DOCS_DEEPREVIEW = """\
api_docs:
  description: The API pages list every endpoint
  match:
    include:
      - "api/*.md"
  review:
    strategy: matches_together
    instructions: Every endpoint must appear on exactly one page.
"""

BROKEN_DEEPREVIEW = """\
bad_rule:
  description: This rule has no match block, so the whole file fails validation
  review:
    strategy: individual
    instructions: Never used.
"""

API_DOC_SCHEMA = """\
summary: A page of the API reference
instructions: Keep one endpoint per section.
matchers:
  - "docs/api/*.md"
requirements:
  endpoints_listed: Every endpoint MUST be listed with its method and path.
  examples_given: Every endpoint SHOULD have a request example.
"""

CONFIG_SCHEMA = """\
requirements:
  keys_commented: Every key SHOULD have a comment that explains it.
"""

SETTINGS_SCHEMA = """\
requirements:
  no_secrets: The settings MUST NOT contain credentials.
"""

# Files committed on main (bytes are written verbatim: CRLF, CR-only, BOM and Latin-1 content).
REVIEW_FILES_MAIN: dict[str, bytes] = {
    ".deepreview": ROOT_DEEPREVIEW.encode(),
    "src/.deepreview": SRC_DEEPREVIEW.encode(),
    ".deepwork/schemas/api_doc/deepschema.yml": API_DOC_SCHEMA.encode(),
    ".deepschema.config.yml.yml": CONFIG_SCHEMA.encode(),
    "config.yml": b"mode: fast\nretries: 3\n",
    "docs/intro.md": b"# Introduction\n\nWhat this project is.\n",
    "docs/guide.md": b"# Guide\n\nHow to use it.\n",
    "docs/old.md": b"# Old page\n\nTo be renamed.\n",
    "docs/obsolete.md": b"# Obsolete\n\nTo be deleted.\n",
    "docs/api/users.md": b"# Users\n\nGET /users\n",
    "src/app.py": b"def main():\r\n    return 1\r\n",
    "src/legacy.py": "# d\xe9j\xe0 vu\nNAME = 'caf\xe9'\n".encode("latin-1"),
    "src/lib/util.py": b"def helper():\n    return 2\n",
    "src/lib/helpers.py": b"def unchanged():\n    return 3\n",
    "src/lib/vendored_json.py": b"# vendored, excluded by python_files\n",
    "src/NOTES.md": b"# Notes\n\nCafe\xcc\x81 and na\xc3\xafve: UTF-8 text.\n",
    "data/records.txt": b"one\ntwo\n",
}

# One commit on the branch `feature` (so the merge-base with main matters).
REVIEW_FILES_FEATURE: dict[str, bytes] = {
    ".deepwork/jobs/review_demo/job.yml": REVIEW_DEMO.encode(),
    "src/lib/util.py": b"def helper():\n    return 20\n",
    "docs/api/orders.md": b"# Orders\n\nGET /orders\nPOST /orders\n",
}

# Unstaged edits and untracked files after the last commit.
REVIEW_FILES_WORKTREE: dict[str, bytes] = {
    "docs/guide.md": b"# Guide\n\nHow to use it, now with examples.\n",
    "src/app.py": b"def main():\r\n    return 10\r\n",
    "src/legacy.py": "# d\xe9j\xe0 vu, again\nNAME = 'caf\xe9'\n".encode("latin-1"),
    "config.yml": b"mode: safe\nretries: 5\n",
    "data/records.txt": b"one\ntwo\nthree\n",
    "data/mac.txt": b"classic\rmac\rline endings\r",
    "data/bom.txt": b"\xef\xbb\xbfwith a byte order mark\n",
    "data/empty.txt": b"",
    "docs/new.md": b"# New page\n\nAdded after the commit.\n",
    "docs/windows.md": b"# Windows page\r\n\r\nWritten with CRLF.\r\n",
    "docs/AUTH-REQ-001.md": b"# Auth requirements\n\nAUTH-REQ-001: Tokens MUST expire.\n",
    "docs/my notes.md": b"# My notes\n\nA file name with a space.\n",
    "docs/.deepreview": DOCS_DEEPREVIEW.encode(),
    "broken/.deepreview": BROKEN_DEEPREVIEW.encode(),
    "src/settings.json": b'{"debug": false}\n',
    "src/.deepschema.settings.json.yml": SETTINGS_SCHEMA.encode(),
    "src/latin1_new.py": "TITLE = 'na\xefve'\n".encode("latin-1"),
    "ignored/scratch.md": b"# Ignored by .gitignore, never a changed file\n",
}


def write_files(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def build_reviews(root: Path) -> None:
    """After the main commit: branch `feature` with one commit, then staged/unstaged/untracked changes."""
    _git(root, "checkout", "-q", "-b", "feature")
    write_files(root, REVIEW_FILES_FEATURE)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "feature work")
    write_files(root, REVIEW_FILES_WORKTREE)
    (root / "src" / "staged.py").write_bytes(b"STAGED = True\n")
    _git(root, "add", "src/staged.py")                  # staged only
    _git(root, "mv", "docs/old.md", "docs/moved.md")   # staged rename
    _git(root, "rm", "-q", "docs/obsolete.md")          # deleted: never a changed file


README = """\
# cairn DeepWork fixture

Generated by benches/deepwork/fixture.py. Scratch outputs go to out/.
"""

BASE_JOBS = {
    "competitive_research": COMPETITIVE_RESEARCH,
    "nested_demo": NESTED_DEMO,
    "perf_job": PERF_JOB,
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "cairn fixture",
    "GIT_AUTHOR_EMAIL": "fixture@cairn.invalid",
    "GIT_COMMITTER_NAME": "cairn fixture",
    "GIT_COMMITTER_EMAIL": "fixture@cairn.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


def job_texts(jobs: int = 3) -> dict[str, str]:
    """Return {dir name: job.yml text} for a project with `jobs` jobs in total (at least 3)."""
    texts = dict(BASE_JOBS)
    for i in range(1, max(0, jobs - len(BASE_JOBS)) + 1):
        texts[f"gen_job_{i:03d}"] = generated_job(i)
    return texts


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)


def build(root: str | os.PathLike, jobs: int = 3, with_reviews: bool = False, force: bool = False) -> Path:
    """Create the fixture project at `root` (must not exist unless force) and return its path."""
    root = Path(root).absolute()
    if root.exists():
        if not force:
            raise FileExistsError(f"{root} exists (use force=True / --force)")
        shutil.rmtree(root)
    (root / "out").mkdir(parents=True)
    (root / "out" / ".keep").write_text("")
    (root / "README.md").write_text(README)
    for name, text in job_texts(jobs).items():
        job_dir = root / ".deepwork" / "jobs" / name
        job_dir.mkdir(parents=True)
        (job_dir / "job.yml").write_text(text)
    if with_reviews:
        (root / ".gitignore").write_text(GITIGNORE)
        write_files(root, REVIEW_FILES_MAIN)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "cairn DeepWork fixture")
    if with_reviews:
        build_reviews(root)
    return root


# --------------------------------------------------------------------------------------------
# The review benchmark project (bench.py --reviews): many rules, many files, a few changes.
# --------------------------------------------------------------------------------------------
def bench_deepreview(index: int) -> str:
    """Two rules for package `index`: Python files one by one, and the docs together (every 10th package
    also lists unchanged matching files; every 25th is an all_changed_files tripwire on its data)."""
    pkg = f"pkg_{index:03d}"
    docs_extra = ("    additional_context:\n      unchanged_matching_files: true\n" if index % 10 == 0 else "")
    if index % 25 == 0:
        second = f"""\
{pkg}_data:
  description: Data of {pkg} changes get a review of the whole change
  match:
    include:
      - "data/*.txt"
  review:
    strategy: all_changed_files
    instructions: Check the data change against the rest of the change.
"""
    else:
        second = f"""\
{pkg}_docs:
  description: The docs of {pkg} read as one piece
  match:
    include:
      - "docs/*.md"
  review:
    strategy: matches_together
    instructions: The pages must not contradict each other.
{docs_extra}"""
    return f"""\
{pkg}_python:
  description: Python modules of {pkg} follow the style guide
  match:
    include:
      - "**/*.py"
    exclude:
      - "**/test_*.py"
  review:
    strategy: individual
    instructions: Functions need docstrings and type hints.

{second}"""


# Files changed after the commit: (path, new content or None to leave as is). Two edits of committed
# files, one edit of a docs page in a package with unchanged_matching_files, one untracked module and
# one untracked data file in an all_changed_files package.
BENCH_CHANGES = {
    "packages/pkg_003/mod_01.py": "def f_01():\n    return 'changed'\n",
    "packages/pkg_042/docs/page_2.md": "# Page 2 of pkg_042\n\nChanged after the commit.\n",
    "packages/pkg_060/docs/page_0.md": "# Page 0 of pkg_060\n\nChanged after the commit.\n",
    "packages/pkg_077/mod_new.py": "def new():\n    return 'untracked'\n",
    "packages/pkg_075/data/item_9.txt": "untracked record\n",
}


def build_review_bench(root: str | os.PathLike, rule_files: int = 100, files: int = 2000,
                       force: bool = False) -> Path:
    """The base fixture plus `packages/pkg_NNN/` (NNN < rule_files), each with a `.deepreview` of two
    rules (2 * rule_files rules) and files // rule_files files (half .py, a quarter docs/*.md, a quarter
    data/*.txt), committed; then BENCH_CHANGES on top. The caller should let the files age (sleep 1 s)."""
    root = build(root, force=force)
    per = files // rule_files
    for i in range(rule_files):
        pkg = root / "packages" / f"pkg_{i:03d}"
        (pkg / "docs").mkdir(parents=True)
        (pkg / "data").mkdir()
        (pkg / ".deepreview").write_text(bench_deepreview(i))
        n_py, n_md = per // 2, per // 4
        for j in range(n_py):
            (pkg / f"mod_{j:02d}.py").write_text(f"def f_{j:02d}():\n    return {i * 100 + j}\n")
        for j in range(n_md):
            (pkg / "docs" / f"page_{j}.md").write_text(f"# Page {j} of pkg_{i:03d}\n\nText.\n")
        for j in range(per - n_py - n_md):
            (pkg / "data" / f"item_{j}.txt").write_text(f"record {i} {j}\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "review benchmark packages")
    for rel, text in BENCH_CHANGES.items():
        (root / rel).write_text(text)
    return root



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="directory to create")
    ap.add_argument("--jobs", type=int, default=3, help="total number of jobs (default 3, min 3)")
    ap.add_argument("--with-reviews", action="store_true", help="the review-parity project (compare_reviews.py)")
    ap.add_argument("--review-bench", action="store_true",
                    help="the review benchmark project: 100 .deepreview files (200 rules), 2,000 files, 5 changes")
    ap.add_argument("--force", action="store_true", help="delete DIR first if it exists")
    args = ap.parse_args(argv)
    if args.review_bench:
        root = build_review_bench(args.dir, force=args.force)
    else:
        root = build(args.dir, jobs=args.jobs, with_reviews=args.with_reviews, force=args.force)
    print(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
