//! What the tool definitions cost an agent's context: hosts without tool search (Gemini CLI, Cursor, Codex with most
//! models) put every tool of `tools/list` into every model request. Each surface's list, as its stdio server sends
//! it, stays within its budget: roscoe 25,000 bytes, the three surfaces together 45,000 (docs/benchmarks.md keeps
//! the measured figures; `benches/context/context.py` prints them).

use crate::raw_stdio::RawStdio;
use crate::schemas::{servers, tools};

/// The most roscoe's `tools/list` may hold, in bytes of compact JSON.
const ROSCOE_BUDGET: usize = 25_000;
/// The most the three surfaces' lists may hold together.
const ALL_BUDGET: usize = 45_000;

#[tokio::test]
async fn the_tool_lists_fit_their_context_budgets() {
    let home = tempfile::tempdir().unwrap();
    std::process::Command::new("git").args(["init", "-q"]).current_dir(home.path()).status().unwrap();
    let mut sizes = Vec::new();
    for (surface, command) in servers(home.path()) {
        let mut server = RawStdio::start(command).await;
        let listed = serde_json::to_string(&tools(&mut server).await).unwrap();
        assert!(server.close().await, "{surface} exits cleanly: {}", server.log());
        println!("{surface}: tools/list {} B", listed.len());
        sizes.push((surface, listed.len()));
    }
    let roscoe = sizes.iter().find(|(s, _)| *s == "roscoe").map(|(_, n)| *n).unwrap();
    assert!(roscoe <= ROSCOE_BUDGET, "roscoe's tools cost {roscoe} B, over its budget of {ROSCOE_BUDGET}");
    let all: usize = sizes.iter().map(|(_, n)| n).sum();
    assert!(all <= ALL_BUDGET, "the three surfaces' tools cost {all} B ({sizes:?}), over the budget of {ALL_BUDGET}");
}
