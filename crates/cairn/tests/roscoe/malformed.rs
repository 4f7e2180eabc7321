//! Malformed JSON-RPC on `cairn roscoe mcp`'s stdin: every fault is answered, and the server goes on serving.

use crate::stdio_faults;
use crate::support::Env;

fn roscoe_mcp(env: &Env) -> tokio::process::Command {
    env.command(env!("CARGO_BIN_EXE_cairn"), &["roscoe"])
}

#[tokio::test(flavor = "multi_thread")]
async fn every_listed_fault_is_answered() {
    let env = Env::new();
    stdio_faults::every_listed_fault_is_answered(roscoe_mcp(&env)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_request_is_answered_with_its_own_id() {
    let env = Env::new();
    stdio_faults::a_deep_request_is_answered_with_its_own_id(roscoe_mcp(&env)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lines_before_initialize_do_not_stop_it() {
    let env = Env::new();
    stdio_faults::lines_before_initialize_do_not_stop_it(roscoe_mcp(&env)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unterminated_last_line_is_answered() {
    let env = Env::new();
    stdio_faults::an_unterminated_last_line_is_answered(roscoe_mcp(&env)).await;
}

#[test]
fn every_line_gets_one_answer_or_none() {
    let env = Env::new();
    stdio_faults::every_line_gets_one_answer_or_none(roscoe_mcp(&env));
}
