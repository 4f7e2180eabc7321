//! Reviews a job step asks for itself: its outputs' review blocks, its process requirements, and reviews of string
//! outputs. They become review rules over the submitted files (checked whether or not git sees them as changed) and
//! inline tasks for text, all prefaced with the job's context and the step's inputs.

use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use super::{GateInput, paths};
use crate::review::root_relative;
use crate::job::{ArgumentType, ReviewBlock};
use crate::review_rule::{ReviewRule, ReviewTask, Strategy};

/// What a step's own reviews need.
#[derive(Debug, Default)]
pub(crate) struct StepReviews {
    /// Rules over the step's file outputs.
    pub(crate) rules: Vec<ReviewRule>,
    /// Reviews of text (string outputs; process requirements of a step without file outputs).
    pub(crate) inline_tasks: Vec<ReviewTask>,
}

/// The step's own reviews for `platform`.
pub(crate) fn step_reviews(input: &GateInput<'_>, platform: &str) -> StepReviews {
    let preamble = preamble(input);
    let with_preamble = |text: &str| {
        if preamble.is_empty() { text.to_owned() } else { format!("{preamble}\n\n{text}") }
    };
    let source_file = input.job.job_dir.join("job.yml");
    let step = &input.step.name;
    let mut reviews = StepReviews::default();
    let mut all_files: Vec<String> = Vec::new();

    for (output, output_ref) in &input.step.outputs {
        let Some(value) = input.outputs.get(output) else { continue };
        let Some(argument) = input.job.argument(output) else { continue };
        let blocks: Vec<&ReviewBlock> = output_ref.review.iter().chain(argument.review.iter()).collect();
        let files: Vec<String> = paths(value).into_iter().map(|p| root_relative(input.root, p)).collect();
        if argument.kind == ArgumentType::FilePath {
            all_files.extend(files.iter().cloned());
        }
        for (i, block) in blocks.iter().enumerate() {
            let name = output_review_name(step, output, i);
            let instructions = with_preamble(&block.instructions);
            match argument.kind {
                ArgumentType::FilePath => reviews.rules.push(ReviewRule {
                    name,
                    description: format!("Review of output '{output}' from step '{step}'"),
                    include: files.clone(),
                    exclude: Vec::new(),
                    strategy: Strategy::parse(&block.strategy).unwrap_or(Strategy::Individual),
                    instructions,
                    agent: block.agent.clone(),
                    all_changed_filenames: block.additional_context.all_changed_filenames,
                    unchanged_matching_files: block.additional_context.unchanged_matching_files,
                    reference_files: Vec::new(),
                    precompute_command: None,
                    rule_dir: input.root.to_path_buf(),
                    source_file: source_file.clone(),
                    source_line: 0,
                }),
                ArgumentType::String => {
                    let text = value.as_str().unwrap_or_default().to_owned();
                    reviews.inline_tasks.push(inline_task(name, instructions, text, block.agent.get(platform), &source_file));
                }
            }
        }
    }

    if !input.step.process_requirements.is_empty()
        && let Some(summary) = input.work_summary
    {
        let name = process_review_name(step);
        let instructions = with_preamble(&process_instructions(input, summary));
        if all_files.is_empty() {
            // No file to attach the review to: the work summary itself is what is reviewed.
            reviews.inline_tasks.push(inline_task(name, instructions, summary.to_owned(), None, &source_file));
        } else {
            reviews.rules.push(ReviewRule {
                name,
                description: format!("Process quality review for step '{step}'"),
                include: all_files,
                exclude: Vec::new(),
                strategy: Strategy::MatchesTogether,
                instructions,
                agent: IndexMap::new(),
                all_changed_filenames: false,
                unchanged_matching_files: false,
                reference_files: Vec::new(),
                precompute_command: None,
                rule_dir: input.root.to_path_buf(),
                source_file: source_file.clone(),
                source_line: 0,
            });
        }
    }
    reviews
}

/// The rule name of review block `index` of `output` in `step` (0: the step's own block for it, 1: its argument's).
pub(crate) fn output_review_name(step: &str, output: &str, index: usize) -> String {
    format!("step_{step}_output_{output}{}", if index > 0 { "_arg" } else { "" })
}

/// The rule name of `step`'s process-requirements review.
pub(crate) fn process_review_name(step: &str) -> String {
    format!("step_{step}_process_quality")
}

fn inline_task(name: String, instructions: String, content: String, agent: Option<&String>, source: &Path) -> ReviewTask {
    ReviewTask {
        rule_name: name,
        files: Vec::new(),
        instructions,
        agent: agent.cloned(),
        reference_files: Vec::new(),
        unchanged_matching_files: Vec::new(),
        all_changed_files: None,
        inline_content: Some(content),
        precompute: None,
        source_file: source.to_path_buf(),
        source_line: 0,
    }
}

/// `## Job Context` (the workflow's common info) and `## Step Inputs` (each declared input and its value).
fn preamble(input: &GateInput<'_>) -> String {
    let mut parts = Vec::new();
    if let Some(info) = input.workflow.common_job_info.as_deref().filter(|i| !i.is_empty()) {
        parts.push(format!("## Job Context\n\n{info}"));
    }
    if !input.step.inputs.is_empty() {
        let mut lines = vec!["## Step Inputs\n".to_owned()];
        for name in input.step.inputs.keys() {
            let Some(argument) = input.job.argument(name) else { continue };
            let kind = argument.kind.as_str();
            let shown = match (input.input_values.get(name), argument.kind) {
                (None, _) => format!("{} — *not available*", argument.description),
                (Some(value), ArgumentType::FilePath) => {
                    paths(value).iter().map(|p| format!("@{p}")).collect::<Vec<_>>().join(", ")
                }
                (Some(Value::String(text)), ArgumentType::String) => text.clone(),
                (Some(other), ArgumentType::String) => other.to_string(),
            };
            lines.push(format!("- **{name}** ({kind}): {shown}"));
        }
        lines.push(String::new());
        parts.push(lines.join("\n"));
    }
    parts.join("\n\n")
}

fn process_instructions(input: &GateInput<'_>, summary: &str) -> String {
    let requirements: Vec<String> =
        input.step.process_requirements.iter().map(|(name, text)| format!("- **{name}**: {text}")).collect();
    let outputs: Vec<String> = input
        .step
        .outputs
        .keys()
        .filter_map(|name| {
            let value = input.outputs.get(name)?;
            let argument = input.job.argument(name)?;
            Some(match argument.kind {
                ArgumentType::FilePath => format!(
                    "- **{name}** (file_path): {}",
                    paths(value).iter().map(|p| format!("@{p}")).collect::<Vec<_>>().join(", ")
                ),
                ArgumentType::String => format!("- **{name}** (string): {}", value.as_str().unwrap_or_default()),
            })
        })
        .collect();
    format!(
        "## Process Requirements Review\n\nJudge whether the way this step was carried out meets the requirements \
         below, using the agent's work summary and the step's outputs. The requirements use RFC 2119 keywords: an unmet \
         MUST or SHALL fails the review; an unmet SHOULD or RECOMMENDED fails it only when it would have been easy to \
         meet; MAY is for information.\n\n## Requirements\n\n{}\n\n## Work Summary (work_summary)\n\n{summary}\n\n\
         ## Step Outputs\n\n{}\n\nPass the review when every requirement is met or does not apply; otherwise name each \
         unmet requirement and what would meet it.",
        requirements.join("\n"),
        if outputs.is_empty() { "(none)".to_owned() } else { outputs.join("\n") }
    )
}
