//! Describing a tool for `tools/list`: its input schema generated from the parameter type, in the portable form every
//! host accepts (see `portable`), and its output schema.

use std::sync::Arc;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::portable;

/// A tool named `name` whose arguments are `P` and whose structured result follows `output`.
pub fn tool<P: JsonSchema>(name: &'static str, description: &'static str, output: Map<String, Value>) -> Tool {
    let schema = serde_json::to_value(schemars::schema_for!(P)).expect("schemas serialize");
    let input = portable::input_schema(schema);
    Tool::new(name, description, Arc::new(input)).with_raw_output_schema(Arc::new(output))
}
