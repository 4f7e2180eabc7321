//! Human steps asked through the host's form: the official Python client (PyPI `mcp`, installed by
//! `.ci/python-mcp.sh`) declares the elicitation capability; a run started with `ask_person: true` sends its human
//! step to the person as a form (the prompt, the choices by their labels, a comment), and their answer is recorded as
//! their decision (`decidedBy: elicitation`). Without `ask_person` no form comes; a declined form leaves the step
//! pending, also when the human step follows an AI step the agent answered.

use std::path::Path;

use serde_json::Value;

use crate::progress::python;
use crate::runs_support::write_workflow;
use crate::support::*;

/// A release gate with labelled choices.
const GATE: &str = "name: gate\ninitial: review\nnodes:\n  review:\n    type: human\n    config:\n      prompt: Ship release 1.2?\n      labels: { approve: Ship it, reject: Hold it }\n    transitions: { approve: $end, reject: $fail }\n";
/// An AI step, then the gate.
const DRAFT: &str = "name: draft\ninitial: write\nnodes:\n  write:\n    type: ai_agent\n    config: { prompt: Write the notes }\n    transitions: { success: review }\n  review:\n    type: human\n    config: { prompt: Publish the notes? }\n    transitions: { publish: $end, redo: write }\n";

#[tokio::test]
async fn a_client_that_can_ask_its_person_answers_human_steps_in_its_form() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let repo = env.repo("proj");
    write_workflow(&repo, "gate", GATE);
    write_workflow(&repo, "draft", DRAFT);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/roscoe/elicit_client.py");
    let mut command = env.cli(&python.display().to_string(), &[]);
    command.arg(&script).arg(env!("CARGO_BIN_EXE_cairn")).arg(&repo);
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();

    // Asked: the form carried the question and the labelled choices; the person's answer completed the run.
    assert_eq!(printed["asked"]["status"], "completed", "{printed}");
    let forms = printed["elicitations"].as_array().unwrap();
    assert_eq!(forms.len(), 2, "one form per asked human step, none without ask_person: {forms:?}");
    assert_eq!(forms[0]["message"], "Ship release 1.2?", "{forms:?}");
    let decision = &forms[0]["schema"]["properties"]["decision"];
    let choices = decision["oneOf"].as_array().unwrap();
    let titles: Vec<&str> = choices.iter().map(|c| c["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Ship it", "Hold it"], "{decision}");
    assert!(forms[0]["schema"]["properties"]["comment"].is_object(), "{forms:?}");
    let nodes = printed["askedHistory"]["nodes"].as_array().unwrap();
    let review = nodes.iter().find(|n| n["nodeId"] == "review").unwrap();
    assert_eq!(review["output"]["choice"], "approve", "{review}");
    assert_eq!(review["output"]["decidedBy"], "elicitation", "{review}");
    assert_eq!(review["output"]["comment"], "lgtm", "{review}");

    // Not asked: the step is handed to the agent as before.
    assert_eq!(printed["plain"]["status"], "paused", "{printed}");
    assert_eq!(printed["plain"]["pendingStep"]["nodeType"], "human", "{printed}");

    // Declined after an AI step: the human step stays pending for the person.
    assert_eq!(forms[1]["message"], "Publish the notes?", "{forms:?}");
    assert_eq!(printed["declined"]["status"], "paused", "{printed}");
    assert_eq!(printed["declined"]["pendingStep"]["nodeId"], "review", "{printed}");
}
