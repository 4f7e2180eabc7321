//! Review rules and review tasks: the common language of the review pipeline.
//!
//! A [`ReviewRule`] says which files need which review: it comes from a `.deepreview` file, from a DeepSchema, or from
//! a job step's review block (the quality gate). Matching a rule against a list of files yields [`ReviewTask`]s, one
//! per review an agent must run; each task is written to an instruction file and listed for the agent.

use std::path::PathBuf;

use indexmap::IndexMap;

/// How a rule turns matched files into tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// One task per matched file.
    Individual,
    /// One task for all matched files together.
    MatchesTogether,
    /// When anything matches, one task over every file of the input list.
    AllChangedFiles,
}

impl Strategy {
    /// The name used in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Individual => "individual",
            Strategy::MatchesTogether => "matches_together",
            Strategy::AllChangedFiles => "all_changed_files",
        }
    }

    /// Parses a YAML strategy name.
    pub fn parse(name: &str) -> Option<Strategy> {
        match name {
            "individual" => Some(Strategy::Individual),
            "matches_together" => Some(Strategy::MatchesTogether),
            "all_changed_files" => Some(Strategy::AllChangedFiles),
            _ => None,
        }
    }
}

/// A file whose contents are inlined into a review's instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceFile {
    /// Absolute path.
    pub path: PathBuf,
    /// Heading shown above the contents (the path as written, or the file under review).
    pub label: String,
    /// What the file is.
    pub description: Option<String>,
    /// The directory the file must resolve inside to be read: the project root for files a project names, `None`
    /// for files of cairn's own folders and of folders the user configured.
    pub boundary: Option<PathBuf>,
}

/// Which files need which review.
#[derive(Debug, Clone)]
pub struct ReviewRule {
    /// Rule name (the key in `.deepreview`, `<schema> DeepSchema Compliance`, `step_<step>_output_<output>` …).
    pub name: String,
    /// One-line description.
    pub description: String,
    /// Glob patterns (DeepWork's semantics, see `glob.rs`), relative to `rule_dir`.
    pub include: Vec<String>,
    /// Glob patterns that exclude a file even if included.
    pub exclude: Vec<String>,
    /// How matched files become tasks.
    pub strategy: Strategy,
    /// What the reviewer checks (already resolved when given as `{file: …}`).
    pub instructions: String,
    /// Reviewer agent per platform (`claude` → `security-expert`).
    pub agent: IndexMap<String, String>,
    /// Add the whole input file list to each task.
    pub all_changed_filenames: bool,
    /// Add files that match but did not change (matches_together only).
    pub unchanged_matching_files: bool,
    /// Files inlined into the instructions.
    pub reference_files: Vec<ReferenceFile>,
    /// Shell command whose output is added as precomputed context (run from the project root).
    pub precompute_command: Option<String>,
    /// Absolute directory the patterns are relative to (the `.deepreview`'s directory, or the project root).
    pub rule_dir: PathBuf,
    /// Absolute path of the file that defines the rule.
    pub source_file: PathBuf,
    /// 1-based line of the rule in its file; 0 for rules made by cairn (DeepSchemas, job steps).
    pub source_line: usize,
}

/// One review an agent must run.
#[derive(Debug, Clone)]
pub struct ReviewTask {
    /// Name of the rule that asked for it.
    pub rule_name: String,
    /// Files under review, relative to the project root, sorted; empty for inline reviews.
    pub files: Vec<String>,
    /// What the reviewer checks.
    pub instructions: String,
    /// Reviewer agent for the platform, if the rule names one.
    pub agent: Option<String>,
    /// Files inlined into the instructions.
    pub reference_files: Vec<ReferenceFile>,
    /// Matching files that did not change (relative to the project root).
    pub unchanged_matching_files: Vec<String>,
    /// The whole input file list, when the rule asks for it.
    pub all_changed_files: Option<Vec<String>>,
    /// Text under review (string outputs of a step), instead of files.
    pub inline_content: Option<String>,
    /// Precompute command and the directory it is resolved against.
    pub precompute: Option<(String, PathBuf)>,
    /// Absolute path of the defining file.
    pub source_file: PathBuf,
    /// Line of the rule in it (0 for rules made by cairn).
    pub source_line: usize,
}

impl ReviewTask {
    /// A review of `files` by rule `rule_name` and nothing more: no instructions, agent, references, inline text,
    /// precompute or defining file.
    pub(crate) fn of_files(rule_name: &str, files: Vec<String>) -> ReviewTask {
        ReviewTask {
            rule_name: rule_name.to_owned(),
            files,
            instructions: String::new(),
            agent: None,
            reference_files: Vec::new(),
            unchanged_matching_files: Vec::new(),
            all_changed_files: None,
            inline_content: None,
            precompute: None,
            source_file: PathBuf::new(),
            source_line: 0,
        }
    }
}
