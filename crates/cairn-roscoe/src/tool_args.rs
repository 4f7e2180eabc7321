//! The shapes of the roscoe tools' arguments: the scope every tool takes (`cwd`, `global`), the macros that declare
//! the fields several tools share (scope, run id, a fan-out answer's step, the workflow checked or written, the docs
//! tools'), and the inputs that become the service's types (source, execution, budget). The tools in `tools/`
//! declare their params with these.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::engine::{Budget, Execution};
use crate::source::Source;

/// The scope inputs every tool takes (§3), copied out of its params.
pub(crate) struct ScopeArgs {
    pub(crate) cwd: Option<String>,
    pub(crate) global: Option<bool>,
}

/// Declares the scope fields (`cwd`, `global`) on a params struct. The server's instructions say what they mean; the
/// schema says it in one line, on `cwd`.
macro_rules! scoped_params {
    ($(#[$meta:meta])* struct Params { $($(#[$fmeta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Params {
            /// Absolute project path.
            #[serde(default)]
            cwd: Option<String>,
            // `true`: the global store, no project (described by `cwd`'s line and the instructions).
            #[serde(default)]
            global: Option<bool>,
            $($(#[$fmeta])* $field: $ty,)*
        }

        impl Params {
            /// The scope inputs.
            fn scope(&self) -> $crate::tool_args::ScopeArgs {
                $crate::tool_args::ScopeArgs { cwd: self.cwd.clone(), global: self.global }
            }
        }
    };
}
pub(crate) use scoped_params;

/// Declares a docs tool's params struct: no scope fields (the docs are the same in every project), no unknown ones.
macro_rules! docs_params {
    ($(#[$meta:meta])* struct Params { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct Params { $($body)* }
    };
}
pub(crate) use docs_params;

/// Declares the params of a tool that acts on one run: `run_id` (also read as `runId`) with the doc written on it,
/// then the other fields as written; the scope fields come first, as [`scoped_params!`] puts them.
macro_rules! run_params {
    ($(#[$meta:meta])* struct Params {
        $(#[$run:meta])* run_id: String,
        $($(#[$fmeta:meta])* $field:ident: $ty:ty,)*
    }) => {
        $crate::tool_args::scoped_params! {
            $(#[$meta])*
            struct Params {
                $(#[$run])*
                #[serde(alias = "runId")]
                run_id: String,
                $($(#[$fmeta])* $field: $ty,)*
            }
        }
    };
}
pub(crate) use run_params;

/// Declares the params of a tool that answers a fan-out step: [`run_params!`]'s, then `node_id` (also read as
/// `nodeId`), the step the answer is meant for.
macro_rules! answer_params {
    ($(#[$meta:meta])* struct Params {
        $(#[$run:meta])* run_id: String,
        $($(#[$fmeta:meta])* $field:ident: $ty:ty,)*
    }) => {
        $crate::tool_args::run_params! {
            $(#[$meta])*
            struct Params {
                $(#[$run])*
                run_id: String,
                $($(#[$fmeta])* $field: $ty,)*
                /// Its nodeId: a stale answer is refused.
                #[serde(default, alias = "nodeId")]
                node_id: Option<String>,
            }
        }
    };
}
pub(crate) use answer_params;

/// Declares the params of a tool that checks one workflow, given as `config`, `yaml` or a stored `id` (with its
/// `source`), followed by the fields written here; [`Params::subject`] is the workflow they name.
macro_rules! subject_params {
    ($(#[$meta:meta])* struct Params { $($(#[$fmeta:meta])* $field:ident: $ty:ty,)* }) => {
        $crate::tool_args::scoped_params! {
            $(#[$meta])*
            struct Params {
                /// The workflow as JSON (or `yaml`, `id`).
                #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
                #[serde(default)]
                config: Option<serde_json::Value>,
                #[serde(default)]
                yaml: Option<String>,
                #[serde(default)]
                id: Option<String>,
                /// Of `id` (default: repo first).
                #[serde(default)]
                source: Option<$crate::tool_args::SourceArg>,
                $($(#[$fmeta])* $field: $ty,)*
            }
        }

        impl Params {
            /// The workflow the arguments name: exactly one of `config`, `yaml`, `id`.
            fn subject(self) -> Result<$crate::service::Subject, $crate::error::Error> {
                $crate::service::Subject::from_inputs(self.config, self.yaml, self.id, $crate::tool_args::source(self.source))
            }
        }
    };
}
pub(crate) use subject_params;

/// Declares the params of a tool that writes a workflow: `id` and `source` with the docs written on them, and
/// between them the workflow as `config` or `yaml`; the params convert into a [`BodyWrite`].
macro_rules! body_params {
    ($(#[$meta:meta])* struct Params {
        $(#[$id:meta])* id: String,
        $(#[$source:meta])* source: Option<SourceArg>,
    }) => {
        $crate::tool_args::scoped_params! {
            $(#[$meta])*
            struct Params {
                $(#[$id])*
                id: String,
                /// The workflow as JSON (or `yaml`).
                #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
                #[serde(default)]
                config: Option<serde_json::Value>,
                /// The workflow as YAML (or `config`).
                #[serde(default)]
                yaml: Option<String>,
                $(#[$source])*
                #[serde(default)]
                source: Option<$crate::tool_args::SourceArg>,
            }
        }

        impl From<Params> for $crate::tool_args::BodyWrite {
            fn from(params: Params) -> Self {
                $crate::tool_args::BodyWrite {
                    scope: params.scope(),
                    id: params.id,
                    config: params.config,
                    yaml: params.yaml,
                    source: $crate::tool_args::source(params.source),
                }
            }
        }
    };
}
pub(crate) use body_params;

/// What `create_workflow` and `update_workflow` are given: the scope, the workflow's id, its body as `config` or
/// `yaml`, and the source.
pub(crate) struct BodyWrite {
    pub(crate) scope: ScopeArgs,
    pub(crate) id: String,
    pub(crate) config: Option<Value>,
    pub(crate) yaml: Option<String>,
    pub(crate) source: Option<Source>,
}

/// A workflow source as a tool input.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceArg {
    /// `<git root>/.roscoe/workflows/` of the project.
    Repo,
    /// `$CAIRN_HOME/workflows/`.
    Global,
}

impl From<SourceArg> for Source {
    fn from(source: SourceArg) -> Source {
        match source {
            SourceArg::Repo => Source::Repo,
            SourceArg::Global => Source::Global,
        }
    }
}

/// Who runs a run's AI steps (`execution` of `start_workflow`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExecutionArg {
    /// Handed back to the MCP host (the default for runs an MCP host starts).
    Host,
    /// Run by the server through its model providers.
    Server,
}

impl From<ExecutionArg> for Execution {
    fn from(arg: ExecutionArg) -> Execution {
        match arg {
            ExecutionArg::Host => Execution::Host,
            ExecutionArg::Server => Execution::Server,
        }
    }
}

/// How much of a trace an answer holds (`detail` of `get_run_history` and `test_workflow`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum DetailArg {
    /// What an agent reads: no repeats, nulls or empty extras (see `brief`).
    #[default]
    Brief,
    /// Every field.
    Full,
}

/// A run tree's budget over all its model calls.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetArg {
    #[serde(default)]
    pub(crate) usd: Option<f64>,
    /// Input + output tokens.
    #[serde(default)]
    pub(crate) tokens: Option<i64>,
}

impl From<BudgetArg> for Budget {
    fn from(arg: BudgetArg) -> Budget {
        Budget { usd: arg.usd, tokens: arg.tokens }
    }
}

/// An optional source input as the service's type.
pub(crate) fn source(arg: Option<SourceArg>) -> Option<Source> {
    arg.map(Source::from)
}

