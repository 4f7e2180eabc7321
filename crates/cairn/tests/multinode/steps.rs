//! Step answers across nodes: the same pending step answered through two nodes at the same moment is applied once,
//! the other answer refused with `stale_step` (ten rounds).

use serde_json::{Value, json};

use crate::support::{Client, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_answering_one_pending_step_apply_it_once() {
    let Some(cluster) = Cluster::postgres("steps") else { return };
    let (a, b) = (cluster.node("a").await, cluster.node("b").await);
    let first = Client::http(&a.url("/roscoe/mcp"), None).await;
    let second = Client::http(&b.url("/roscoe/mcp"), None).await;
    for round in 0..10 {
        let started = first.ok("start_workflow", json!({"global": true, "id": "ship"})).await;
        let run_id = started["runId"].as_str().unwrap();
        let answer = |who: &str| json!({"global": true, "run_id": run_id, "node_id": "draft", "response": who});
        let (x, y) = tokio::join!(first.ok("advance_run", answer("a")), second.ok("advance_run", answer("b")));
        let applied: Vec<&Value> = [&x, &y].into_iter().filter(|r| r.get("code").is_none()).collect();
        let refused = [&x, &y].into_iter().filter(|r| r["code"] == "stale_step").count();
        assert_eq!((applied.len(), refused), (1, 1), "round {round}: {x} / {y}");
        assert_eq!(applied[0]["pendingStep"]["nodeId"], "ask", "round {round}");
        let history = second.ok("get_run_history", json!({"global": true, "run_id": run_id})).await;
        let drafts: Vec<&Value> =
            history["nodes"].as_array().unwrap().iter().filter(|n| n["nodeId"] == "draft").collect();
        assert_eq!(drafts.len(), 1, "round {round}: the step was answered once");
        assert_eq!(drafts[0]["attempts"], 1, "round {round}");
    }
    first.close().await;
    second.close().await;
}
