//! Malformed JSON-RPC on `cairn work mcp`'s stdin: every fault is answered, and the server goes on serving.

use crate::stdio_faults;
use crate::support::Env;

#[tokio::test(flavor = "multi_thread")]
async fn every_listed_fault_is_answered() {
    let env = Env::new();
    stdio_faults::every_listed_fault_is_answered(env.local_command("agent")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_request_is_answered_with_its_own_id() {
    let env = Env::new();
    stdio_faults::a_deep_request_is_answered_with_its_own_id(env.local_command("agent")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lines_before_initialize_do_not_stop_it() {
    let env = Env::new();
    stdio_faults::lines_before_initialize_do_not_stop_it(env.local_command("agent")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unterminated_last_line_is_answered() {
    let env = Env::new();
    stdio_faults::an_unterminated_last_line_is_answered(env.local_command("agent")).await;
}

#[test]
fn every_line_gets_one_answer_or_none() {
    let env = Env::new();
    stdio_faults::every_line_gets_one_answer_or_none(env.local_command("agent"));
}
