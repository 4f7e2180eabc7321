//! Document updates and evidence across nodes: 20 updates of one document version sent at once through two nodes
//! make exactly one new version (the rest are conflicts naming it); 20 identical merge records make one record (the
//! rest find it), and merges of one pull request at different commits keep the first (the rest are conflicts).

use futures::future::join_all;
use serde_json::{Value, json};

use crate::support::{Client, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn document_updates_and_evidence_are_applied_once_across_nodes() {
    let Some(cluster) = Cluster::postgres("records") else { return };
    let nodes = [cluster.node("a").await, cluster.node("b").await];
    let bearer = cluster.bearer().await;
    let urls = [nodes[0].url("/mcp"), nodes[1].url("/mcp")];
    let clients = join_all((0..10).map(|c| Client::http(&urls[c % 2], Some(&bearer)))).await;
    let all = |tool: &'static str, args: &dyn Fn(usize) -> Value| {
        join_all((0..20).map(|i| clients[i % 10].call(tool, args(i))))
    };

    let space = clients[0].ok("decisions_create_space", json!({"name": "Design", "description": ""})).await;
    let space = space["space"]["id"].as_str().unwrap().to_owned();
    let made = clients[0].ok("decisions_create_document", json!({"space_id": space, "title": "Plan", "body": "# v1"})).await;
    let doc = made["document"]["id"].as_str().unwrap().to_owned();
    let updates = all("decisions_update_document", &|i| {
        json!({"space_id": space, "document_id": doc, "base_version": 1, "body": format!("# v2 by {i}")})
    })
    .await;
    let (won, lost): (Vec<_>, Vec<_>) = updates.iter().partition(|r| r.is_error != Some(true));
    assert_eq!((won.len(), lost.len()), (1, 19), "one update of version 1 wins");
    let winner = &won[0].structured_content.as_ref().unwrap()["document"];
    assert_eq!(winner["version"], 2);
    for refusal in lost {
        let error = &refusal.structured_content.as_ref().unwrap()["error"];
        assert_eq!((error["code"].as_str(), error["details"]["current_version"].as_i64()), (Some("conflict"), Some(2)));
    }
    let read = clients[1].ok("decisions_get_document", json!({"space_id": space, "document_id": doc})).await;
    assert_eq!(read["document"]["body"], winner["body"], "node b reads the winning version");
    assert_eq!(read["document"]["version"], 2);

    let merged = |pr: i64, commit: String| {
        json!({"kind": "merged", "repository": "acme/web", "commit": commit, "pull_requests": [pr]})
    };
    let same = all("work_record_evidence", &|_| merged(1, "abc1234".into())).await;
    let answers: Vec<&Value> = same.iter().map(|r| r.structured_content.as_ref().expect("an answer")).collect();
    assert_eq!(answers.iter().filter(|a| a["created"] == true).count(), 1, "one record is made");
    assert!(answers.iter().all(|a| a["evidence"]["id"] == answers[0]["evidence"]["id"]), "the rest find it");

    let rivals = all("work_record_evidence", &|i| merged(2, format!("{:07x}", 0xbee0000 + i))).await;
    let (won, lost): (Vec<_>, Vec<_>) = rivals.iter().partition(|r| r.is_error != Some(true));
    assert_eq!((won.len(), lost.len()), (1, 19), "one merge commit is recorded");
    let commit = won[0].structured_content.as_ref().unwrap()["evidence"]["commit"].as_str().unwrap().to_owned();
    for refusal in lost {
        let error = &refusal.structured_content.as_ref().unwrap()["error"];
        assert_eq!(error["code"], "conflict", "{error}");
        assert!(error["message"].as_str().unwrap().ends_with(&format!("merged at {commit}")), "{error}");
    }
    for client in clients {
        client.close().await;
    }
}
