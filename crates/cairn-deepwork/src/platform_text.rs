//! The words that depend on the host platform (`deepwork serve --platform`). On Claude Code the model finds its
//! session id as `CLAUDE_CODE_SESSION_ID` (put into its context by the plugin's SessionStart hook) and may ask the
//! user with `AskUserQuestion`; other hosts have neither, so their texts say to keep the `session_id`
//! `start_workflow` returns, and to ask the user in the conversation. Tool definitions are written for Claude Code
//! and turned into the other hosts' wording here ([`reword`]), so that one definition stays the source.

use serde_json::Value;

/// The platform name of Claude Code.
const CLAUDE: &str = "claude";

/// Claude Code's wording in the tool definitions, and what other hosts read instead.
const CLAUDE_WORDING: &[(&str, &str)] = &[
    (
        "Pass CLAUDE_CODE_SESSION_ID as session_id when your context has it (and CLAUDE_CODE_AGENT_ID as agent_id in a \
         sub-agent); otherwise omit session_id and pass",
        "Omit session_id and pass",
    ),
    ("CLAUDE_CODE_SESSION_ID when your context has it; otherwise leave it out and pass", "Leave it out and pass"),
    ("Sub-agent id (CLAUDE_CODE_AGENT_ID):", "Sub-agent id:"),
    ("(CLAUDE_CODE_SESSION_ID, or the begin_step.session_id", "(the begin_step.session_id"),
];

/// `start_workflow`'s `important_note` (DeepWork's text on Claude Code).
pub(crate) fn important_note(platform: &str) -> &'static str {
    if platform == CLAUDE {
        "IMPORTANT: If, given the info on the workflow you now have, the user's request seems ambiguous and can be \
         interpreted several ways, you MUST use AskUserQuestion to clarify their intent if that tool is available."
    } else {
        "IMPORTANT: If, given the info on the workflow you now have, the user's request seems ambiguous and can be \
         interpreted several ways, ask the user which they mean before you go on."
    }
}

/// Where the model gets the session id to pass, as the server instructions say it.
pub(crate) fn session_id_hint(platform: &str) -> &'static str {
    if platform == CLAUDE {
        "pass `CLAUDE_CODE_SESSION_ID` from your context as `session_id` (`CLAUDE_CODE_AGENT_ID` as `agent_id` in a \
         sub-agent). Without one, omit it in `start_workflow` and pass the `begin_step.session_id` it returns to every \
         later call."
    } else {
        "omit it in `start_workflow` and pass the `begin_step.session_id` it returns to every later call."
    }
}

/// Where a missing session id comes from, for the error that asks for one.
pub(crate) fn session_id_source(platform: &str) -> &'static str {
    if platform == CLAUDE {
        "Pass the session_id that start_workflow returned (begin_step.session_id), or CLAUDE_CODE_SESSION_ID when your \
         context has it."
    } else {
        "Pass the session_id that start_workflow returned (begin_step.session_id)."
    }
}

/// Whether `platform` reads the tool definitions reworded ([`reword`]): every host but Claude Code.
pub(crate) fn rewords_tools(platform: &str) -> bool {
    platform != CLAUDE
}

/// Replaces Claude Code's wording in a tool definition (as JSON) with what other hosts read.
pub(crate) fn reword(value: &mut Value) {
    match value {
        Value::String(text) => {
            for (claude, other) in CLAUDE_WORDING {
                if text.contains(claude) {
                    *text = text.replace(claude, other);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(reword),
        Value::Object(fields) => fields.values_mut().for_each(reword),
        _ => {}
    }
}
