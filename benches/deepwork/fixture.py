#!/usr/bin/env python3
"""Build a fresh DeepWork fixture project for cairn's comparison and benchmark scripts.

    python3 benches/deepwork/fixture.py DIR [--jobs N] [--with-reviews] [--force]

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
`.deepreview` files; `--with-reviews` adds a few (reserved for the reviews milestone).

Only the standard library is used, so any python3 can run it; `build(path, ...)` is the API used by
compare.py and bench.py.
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


# Review additions for the reviews milestone (off by default). They only append keys that the
# job schema allows: a `review` block on a step output and a `.deepreview` file at the root.
REVIEW_BLOCK_FOR_NOTES = """\
          research_notes.md:
            review:
              strategy: individual
              instructions: Check that every competitor has strengths, weaknesses and pricing.
"""

DEEPREVIEW = """\
markdown_style:
  description: Markdown files use sentence-case headings
  match:
    include:
      - "out/**/*.md"
  review:
    strategy: individual
    instructions: Headings must be in sentence case and no line may exceed 120 characters.
"""

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


def job_texts(jobs: int = 3, with_reviews: bool = False) -> dict[str, str]:
    """Return {dir name: job.yml text} for a project with `jobs` jobs in total (at least 3)."""
    texts = dict(BASE_JOBS)
    if with_reviews:
        texts["competitive_research"] = COMPETITIVE_RESEARCH.replace(
            "          research_notes.md: {}\n", REVIEW_BLOCK_FOR_NOTES, 1
        )
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
    for name, text in job_texts(jobs, with_reviews).items():
        job_dir = root / ".deepwork" / "jobs" / name
        job_dir.mkdir(parents=True)
        (job_dir / "job.yml").write_text(text)
    if with_reviews:
        (root / ".deepreview").write_text(DEEPREVIEW)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "cairn DeepWork fixture")
    return root


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="directory to create")
    ap.add_argument("--jobs", type=int, default=3, help="total number of jobs (default 3, min 3)")
    ap.add_argument("--with-reviews", action="store_true", help="add review blocks and a .deepreview file")
    ap.add_argument("--force", action="store_true", help="delete DIR first if it exists")
    args = ap.parse_args(argv)
    root = build(args.dir, jobs=args.jobs, with_reviews=args.with_reviews, force=args.force)
    print(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
