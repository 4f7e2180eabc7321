//! Malformed JSON-RPC on `cairn deepwork serve`'s stdin: every fault is answered, and the server goes on serving.

use crate::stdio_faults;
use crate::support::Project;

#[tokio::test(flavor = "multi_thread")]
async fn every_listed_fault_is_answered() {
    let project = Project::new();
    stdio_faults::every_listed_fault_is_answered(project.command(&[])).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_request_is_answered_with_its_own_id() {
    let project = Project::new();
    stdio_faults::a_deep_request_is_answered_with_its_own_id(project.command(&[])).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lines_before_initialize_do_not_stop_it() {
    let project = Project::new();
    stdio_faults::lines_before_initialize_do_not_stop_it(project.command(&[])).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unterminated_last_line_is_answered() {
    let project = Project::new();
    stdio_faults::an_unterminated_last_line_is_answered(project.command(&[])).await;
}

#[test]
fn every_line_gets_one_answer_or_none() {
    let project = Project::new();
    stdio_faults::every_line_gets_one_answer_or_none(project.command(&[]));
}
