//! Diagnostics: one problem found in a workflow, with a stable code, its stage, severity, node and position.
//!
//! Codes are the spec's tokens (§5, §19). The stage says which group a code belongs to: every schema code is
//! reported to callers as `invalid_config`, every integrity code as `integrity_error` (see [`Stage::error_code`]),
//! and lint codes are warnings.

use std::fmt;

use serde::Serialize;

/// One problem in a workflow definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// Stable code, e.g. `unknown_target`.
    pub code: Code,
    /// How serious it is.
    pub severity: Severity,
    /// The node it concerns, when it concerns one (lint's `state`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What is wrong and how to fix it; names the node when there is one.
    pub message: String,
    /// JSON pointer into the document (`/nodes/review/transitions/approve`); `""` is the whole document.
    pub pointer: String,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
}

impl Diagnostic {
    /// A diagnostic of `code`, with the severity its code implies and no position yet.
    pub(crate) fn new(
        code: Code,
        node: Option<&str>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity: code.severity(),
            node: node.map(str::to_owned),
            message: message.into(),
            pointer: pointer.into(),
            line: None,
            column: None,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "{line}:{column}: {}: {}", self.code, self.message)
            }
            _ => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

/// Severity of a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The workflow cannot be written or run.
    Error,
    /// Lint: probably a mistake.
    Warning,
    /// Lint: worth knowing, often intended.
    Info,
}

/// The validation stage a code belongs to (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// YAML and JSON-Schema shape.
    Schema,
    /// Graph, references and executor rules.
    Integrity,
    /// Non-fatal warnings.
    Lint,
}

impl Stage {
    /// The `WriterErrorCode` / `validate_workflow` code a failing stage is reported under.
    pub fn error_code(self) -> &'static str {
        match self {
            Stage::Schema => "invalid_config",
            Stage::Integrity => "integrity_error",
            Stage::Lint => "lint",
        }
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal, $stage:ident, $severity:ident;)*) => {
        /// A stable diagnostic code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
        pub enum Code {
            $($(#[$doc])* #[serde(rename = $text)] $variant,)*
        }

        impl Code {
            /// Every code, in catalog order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as written in results and docs.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $text,)* }
            }

            /// The stage that reports it.
            pub fn stage(self) -> Stage {
                match self { $(Code::$variant => Stage::$stage,)* }
            }

            /// Its severity.
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$severity,)* }
            }
        }
    };
}

codes! {
    /// The text is not YAML, or its shape breaks the JSON Schema.
    InvalidConfig = "invalid_config", Schema, Error;
    /// The workflow id (or `name`) does not match `^[a-z0-9][a-z0-9_-]{0,63}$`.
    InvalidId = "invalid_id", Schema, Error;
    /// `name` differs from the id the file is stored under.
    NameMismatch = "name_mismatch", Schema, Error;
    /// A node id is reserved (`input`, `run`, …).
    ReservedNodeId = "reserved_node_id", Schema, Error;
    /// `initial` names no node.
    UnknownInitial = "unknown_initial", Integrity, Error;
    /// A transition target is neither a node, `$end` nor `$fail`.
    UnknownTarget = "unknown_target", Integrity, Error;
    /// A template or condition references something that is neither a node nor a reserved root.
    UnknownReference = "unknown_reference", Integrity, Error;
    /// A reference to a node that does not run on every path to the place it is used, without a fallback.
    UndominatedReference = "undominated_reference", Integrity, Error;
    /// `input.x` where `x` is not a declared input.
    UnknownInput = "unknown_input", Integrity, Error;
    /// `item`, `index` or `results` used outside the map field that provides it.
    InvalidReferenceScope = "invalid_reference_scope", Integrity, Error;
    /// A cycle with no `maxIterations` node and no human node in it.
    UncappedCycle = "uncapped_cycle", Integrity, Error;
    /// A reserved event name used as a judge or consensus choice.
    ReservedEvent = "reserved_event", Integrity, Error;
    /// A template does not parse.
    InvalidTemplate = "invalid_template", Integrity, Error;
    /// A condition expression is not valid CEL.
    InvalidExpression = "invalid_expression", Integrity, Error;
    /// A choice (judge, consensus gate) has no transition, or there are no choices at all.
    MissingTransition = "missing_transition", Integrity, Error;
    /// A human node has no transition to offer.
    HumanWithoutTransitions = "human_without_transitions", Integrity, Error;
    /// A consensus `quorum` larger than its agent count.
    QuorumExceedsAgents = "quorum_exceeds_agents", Integrity, Error;
    /// A literal `round_robin.candidates` list without 2–8 entries, or no candidates source at all.
    CandidateCount = "candidate_count", Integrity, Error;
    /// A map node with neither `items` nor `extract`.
    MapWithoutItems = "map_without_items", Integrity, Error;
    /// A script node without exactly one of `command` / `script`.
    ScriptSource = "script_source", Integrity, Error;
    /// A script `command` with a template value where the shell would expand it (inside quotes, after `$`, in a
    /// here-document).
    ScriptHoleQuoted = "script_hole_quoted", Integrity, Error;
    /// A condition node without exactly one of `expression` / `cases` (+ `default`).
    ConditionForm = "condition_form", Integrity, Error;
    /// Lint: a node not reachable from `initial`.
    UnreachableState = "unreachable_state", Lint, Warning;
    /// Lint: a reachable node from which no successful exit is reachable.
    DeadState = "dead_state", Lint, Warning;
    /// Lint: a transition keyed by an event its node can never emit.
    UnreachableTransition = "unreachable_transition", Lint, Warning;
    /// Lint: a model not in the available list.
    UnknownModel = "unknown_model", Lint, Warning;
    /// Lint: a subworkflow id that does not resolve in this scope.
    UnknownSubworkflow = "unknown_subworkflow", Lint, Warning;
    /// Lint: a subworkflow call that leads back to the calling workflow.
    SubworkflowCycle = "subworkflow_cycle", Lint, Warning;
    /// Lint: a declared input never referenced.
    UnusedInput = "unused_input", Lint, Warning;
    /// Lint: a script that routes its events but not `failure`.
    MissingFailureRoute = "missing_failure_route", Lint, Info;
    /// Lint: a fan-out node (needs a capable host or an API key, and mocks in tests).
    FanoutRequiresHostOrApi = "fanout_requires_host_or_api", Lint, Info;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
