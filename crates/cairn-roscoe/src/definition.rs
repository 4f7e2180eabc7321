//! Workflow definitions: the YAML format, its JSON Schema, templates, the dominance check and validation.
//!
//! Entry points: [`parse`] (schema + integrity; a workflow or every error), [`validate`] (the same, plus lint on
//! request, always returning every diagnostic) and [`schema`] (the JSON Schema text that `get_workflow_schema`
//! returns). This module reads text only; finding files, scopes and other workflows is the caller's job, which
//! passes what lint needs (available models, known workflow ids) in [`Options`].

mod cron;
mod diagnostic;
pub mod dominance;
mod expression;
mod inputs;
mod model;
mod parse;
mod schema;
pub mod shell_holes;
pub mod template;
mod trigger;
mod trigger_check;
mod validate;

pub use cron::Cron;
pub use diagnostic::{Code, Diagnostic, Severity, Stage};
pub use inputs::validate_inputs;
pub use model::{
    ConfigKey, Input, InputType, Node, NodeType, RESERVED_EVENTS, RESERVED_NODE_IDS, Target,
    Transition, Workflow,
};
pub use schema::schema;
pub use trigger::{MIN_EVERY_MS, Trigger, WEBHOOK_SECRET_PREFIX, interval_ms, is_webhook_secret_name};
pub use validate::{Options, Validation, parse, validate};

pub(crate) use expression::{check_size as check_expression_size, on_cel_stack};
pub(crate) use parse::{is_valid_id, read_yaml};
