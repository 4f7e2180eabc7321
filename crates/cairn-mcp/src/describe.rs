//! Describing a tool for `tools/list`: its input schema generated from the parameter type, in the portable form every
//! host accepts (see `portable`), and its output schema.

use std::sync::Arc;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::portable::{self, Optional};

/// A tool named `name` whose arguments are `P` and whose structured result follows `output`. The parameter type's
/// own doc comment (`` `x` arguments.``) is left out: the tool's description says it all, in every request's context.
/// Optional arguments are nullable, without `default: null`.
pub fn tool<P: JsonSchema>(name: &'static str, description: &'static str, output: Map<String, Value>) -> Tool {
    shaped::<P>(name, description, output, Optional::Nullable)
}

/// [`tool`], its optional arguments written as Pydantic writes them (`default: null`): the shape of DeepWork's tools.
pub fn pydantic_tool<P: JsonSchema>(name: &'static str, description: &'static str, output: Map<String, Value>) -> Tool {
    shaped::<P>(name, description, output, Optional::NullDefault)
}

/// The tool entry, its optional arguments as `shape` says.
fn shaped<P: JsonSchema>(
    name: &'static str,
    description: &'static str,
    output: Map<String, Value>,
    shape: Optional,
) -> Tool {
    let schema = serde_json::to_value(schemars::schema_for!(P)).expect("schemas serialize");
    let mut input = portable::input_schema(schema, shape);
    input.remove("description");
    Tool::new(name, description, Arc::new(input)).with_raw_output_schema(Arc::new(output))
}
