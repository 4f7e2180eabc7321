//! What the host calls the things cairn's texts point the model at: the deepwork tools (`how_to_invoke`, the server
//! instructions), the sub-agent a review task runs in (`subagent_type`) and the commands a user can type (repair
//! suggestions). They depend on how the server was installed, so `deepwork serve` is told (`--plugin`,
//! `--tool-prefix`):
//!
//! * the README's plain `.mcp.json` (server key `deepwork`, the default): tools `mcp__deepwork__<tool>`, reviews in
//!   Claude Code's built-in `general-purpose` agent, no commands;
//! * a Claude Code plugin `<name>` (`--plugin <name>`, what cairn's plugin passes): tools
//!   `mcp__plugin_<name>_deepwork__<tool>`, the plugin's reviewer agent `<name>:reviewer`, its commands
//!   `/<name>:deepwork` and `/<name>:review`. `--plugin deepwork` gives the names of DeepWork's own plugin.

/// How the host names tools, the reviewer agent and commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostNames {
    tool_prefix: String,
    reviewer_agent: String,
    plugin: Option<String>,
}

impl Default for HostNames {
    /// The README's plain `.mcp.json` set-up.
    fn default() -> Self {
        HostNames { tool_prefix: "mcp__deepwork__".into(), reviewer_agent: "general-purpose".into(), plugin: None }
    }
}

impl HostNames {
    /// The names as Claude Code shows them for the plugin `plugin` (none: the plain `.mcp.json` set-up), with the
    /// tool prefix replaced by `tool_prefix` when given (a server key other than `deepwork`, another host).
    pub fn new(plugin: Option<&str>, tool_prefix: Option<&str>) -> Self {
        let mut names = match plugin.filter(|p| !p.is_empty()) {
            Some(plugin) => HostNames {
                tool_prefix: format!("mcp__plugin_{}_deepwork__", host_identifier(plugin)),
                reviewer_agent: format!("{plugin}:reviewer"),
                plugin: Some(plugin.to_owned()),
            },
            None => HostNames::default(),
        };
        if let Some(prefix) = tool_prefix {
            names.tool_prefix = prefix.to_owned();
        }
        names
    }

    /// The deepwork tool `tool` as the model calls it.
    pub fn tool(&self, tool: &str) -> String {
        format!("{}{tool}", self.tool_prefix)
    }

    /// The agent a review task runs in when its rule names none.
    pub fn reviewer_agent(&self) -> &str {
        &self.reviewer_agent
    }

    /// The user command `command` of the plugin (`/cairn:deepwork`), when a plugin provides commands.
    pub fn command(&self, command: &str) -> Option<String> {
        self.plugin.as_ref().map(|plugin| format!("/{plugin}:{command}"))
    }

    /// How to start `workflow` of `job`, in a few words: the plugin's command, else a call of `start_workflow`.
    pub fn start_hint(&self, job: &str, workflow: &str) -> String {
        match self.command("deepwork") {
            Some(command) => format!("`{command} {workflow}`"),
            None => format!("`{}` (job_name=\"{job}\", workflow_name=\"{workflow}\")", self.tool("start_workflow")),
        }
    }
}

/// `name` as Claude Code spells it inside tool names: every character other than a letter, digit, `_` or `-`
/// becomes `_`.
fn host_identifier(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_set_up_by_default() {
        let names = HostNames::default();
        assert_eq!(names, HostNames::new(None, None));
        assert_eq!(names.tool("start_workflow"), "mcp__deepwork__start_workflow");
        assert_eq!(names.reviewer_agent(), "general-purpose");
        assert_eq!(names.command("deepwork"), None);
        assert_eq!(
            names.start_hint("deepwork_jobs", "repair"),
            "`mcp__deepwork__start_workflow` (job_name=\"deepwork_jobs\", workflow_name=\"repair\")"
        );
    }

    #[test]
    fn a_plugin_brings_its_names() {
        let names = HostNames::new(Some("cairn"), None);
        assert_eq!(names.tool("finished_step"), "mcp__plugin_cairn_deepwork__finished_step");
        assert_eq!(names.reviewer_agent(), "cairn:reviewer");
        assert_eq!(names.command("review").as_deref(), Some("/cairn:review"));
        assert_eq!(names.start_hint("deepwork_jobs", "repair"), "`/cairn:deepwork repair`");
        let deepwork = HostNames::new(Some("deepwork"), None);
        assert_eq!(deepwork.tool("start_workflow"), "mcp__plugin_deepwork_deepwork__start_workflow");
        assert_eq!(deepwork.reviewer_agent(), "deepwork:reviewer");
    }

    #[test]
    fn the_tool_prefix_can_be_given() {
        let names = HostNames::new(None, Some("mcp__dw__"));
        assert_eq!(names.tool("get_workflows"), "mcp__dw__get_workflows");
        assert_eq!(names.reviewer_agent(), "general-purpose");
        let both = HostNames::new(Some("my.tools"), Some("x_"));
        assert_eq!(both.tool("a"), "x_a");
        assert_eq!(HostNames::new(Some("my.tools"), None).tool("a"), "mcp__plugin_my_tools_deepwork__a");
    }
}
