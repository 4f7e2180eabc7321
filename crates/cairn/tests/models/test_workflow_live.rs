//! Over MCP: `test_workflow` with a provider configured runs a fan-out node without mocks live through the provider
//! (every phase, charged as metered), an AI step inside a subworkflow's child too, and mocks always win; and
//! `start_workflow` hands AI steps back to the host unless `execution` or `roscoe.yaml`'s `hosts` say otherwise.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use super::anthropic::{Answer, Request, StandIn};
use super::support::{Env, anthropic_env, start};

/// A consensus (most consistent of three, then aggregated), then a subworkflow whose agent is not mocked.
const OUTER: &str = "name: outer\ninitial: vote\nnodes:\n  vote:\n    type: consensus\n    config: { mode: most_consistent, \
    agentCount: 3, prompt: \"Best name?\" }\n    transitions: { success: inner }\n  inner:\n    type: subworkflow\n    \
    config: { workflow: inner }\n    transitions: { success: $end }\n";
const INNER: &str = "name: inner\ninitial: say\nnodes:\n  say:\n    type: ai_agent\n    config: { prompt: \"Say hi\" }\n    \
    transitions: { success: $end }\n";

/// Calls `tool` over MCP (as the client rmcp names `rmcp`); its structured result.
async fn call(env: &Env, tool: &str, args: Value) -> Value {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ().serve(StreamableHttpClientTransport::from_uri(env.served.url("/roscoe/mcp"))).await.unwrap();
    let Value::Object(args) = args else { unreachable!("arguments are an object") };
    let result = client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap();
    result.structured_content.expect("structured content")
}

async fn test_workflow(env: &Env, args: Value) -> Value {
    call(env, "test_workflow", args).await
}

fn model() -> impl Fn(&Request) -> Answer {
    |request: &Request| {
        let prompt = request.first_user_text();
        let text = if prompt.contains("Say hi") {
            "hi"
        } else if prompt.contains("\"index\"") {
            r#"{"reasoning": "all agree", "index": 0}"#
        } else {
            "Alpha"
        };
        Answer::text(text)
    }
}

#[tokio::test]
async fn fan_out_nodes_without_mocks_and_steps_inside_children_run_live_and_mocks_win() {
    let stand_in = StandIn::start(model()).await;
    let vars = anthropic_env(&stand_in.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("outer", OUTER), ("inner", INNER)], "", &vars).await;

    let live = test_workflow(&env, json!({ "global": true, "id": "outer" })).await;
    assert_eq!((live["ok"].as_bool(), live["finalStatus"].as_str()), (Some(true), Some("completed")), "{live}");
    // Three agents, the aggregate, and the child's agent.
    assert_eq!(stand_in.requests().len(), 5, "{live}");
    let vote = &live["nodeTrace"][0];
    assert_eq!(vote["calls"].as_array().map(Vec::len), Some(4), "{vote}");
    assert_eq!(vote["cost"]["billingMode"], "metered", "{vote}");
    assert_eq!(live["nodeTrace"][1]["children"][0]["output"]["text"], "hi", "{live}");

    let mocks = json!({ "vote": { "responses": ["A", "A", "B"], "aggregate": "{\"reasoning\": \"r\", \"index\": 0}" }, "inner/say": "mocked hi" });
    let mocked = test_workflow(&env, json!({ "global": true, "id": "outer", "mocks": mocks })).await;
    assert_eq!(mocked["finalStatus"], "completed", "{mocked}");
    assert_eq!(stand_in.requests().len(), 5, "mocks win: no call was made");
}

#[tokio::test]
async fn without_a_provider_an_unmocked_fan_out_node_is_still_refused() {
    let env = start(&[("outer", OUTER), ("inner", INNER)], "", &[]).await;
    let refused = test_workflow(&env, json!({ "global": true, "id": "outer" })).await;
    assert_eq!(refused["code"], "fanout_in_test_mode_unsupported", "{refused}");
}

#[tokio::test]
async fn an_mcp_start_hands_back_unless_execution_or_the_hosts_entry_says_server() {
    let stand_in = StandIn::start(model()).await;
    let vars = anthropic_env(&stand_in.base);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let env = start(&[("outer", OUTER), ("inner", INNER)], "", &vars).await;
    let handed = call(&env, "start_workflow", json!({ "global": true, "id": "outer" })).await;
    assert_eq!(handed["status"], "paused", "{handed}");
    assert_eq!(handed["pendingStep"]["consensusPhase"], "generate");
    assert_eq!(handed["hostHint"]["kind"], "no_subagents", "an unknown client: {handed}");
    let served = call(&env, "start_workflow", json!({ "global": true, "id": "outer", "execution": "server" })).await;
    let history = env.stopped(served["runId"].as_str().unwrap()).await;
    assert_eq!(history["run"]["status"], "completed", "{history}");
    assert_eq!(stand_in.requests().len(), 5);

    let yaml = "hosts:\n  rmcp: { execution: server, subagents: true }\n";
    let env = start(&[("outer", OUTER), ("inner", INNER)], yaml, &vars).await;
    let started = call(&env, "start_workflow", json!({ "global": true, "id": "outer" })).await;
    assert!(started.get("hostHint").is_none(), "the hosts entry says it has subagents: {started}");
    let history = env.stopped(started["runId"].as_str().unwrap()).await;
    assert_eq!((history["run"]["status"].as_str(), history["run"]["execution"].as_str()), (Some("completed"), Some("server")));
    let hosted = call(&env, "start_workflow", json!({ "global": true, "id": "outer", "execution": "host" })).await;
    assert_eq!(hosted["status"], "paused", "the start's own execution wins: {hosted}");
}
