//! The acceptance flow of spec §10 over both transports: create → list → claim → refusals → updates → the done rule
//! → hand-offs; argument limits; documents with versions; the local stdio user.

use serde_json::json;

use crate::support::{ALL, Env, Via, item, space};

async fn lifecycle(via: Via) {
    let mut env = Env::new();
    let account = env.account("acme", "acme/web").await;
    let agent = env.bearer(&account, "worker", "agent", ALL).await;
    let other = env.bearer(&account, "other", "agent", ALL).await;
    let ada = env.bearer(&account, "Ada", "person", ALL).await;
    let (agent, other, ada) = (env.client(via, &agent).await, env.client(via, &other).await, env.client(via, &ada).await);

    let space = space(&ada, "Auth").await;
    let id = item(&agent, &space, "Add SSO login").await;
    let finished = item(&agent, &space, "Old chore").await;
    ada.ok("work_update", json!({"item_id": finished, "state": "done"})).await;
    let listed = agent.ok("work_list", json!({})).await;
    let ids: Vec<&str> = listed["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![id.as_str()], "done items are left out by default");
    let done = agent.ok("work_list", json!({"state": "done"})).await;
    assert_eq!(done["items"][0]["done_by"], "Ada (person)");

    let claimed = agent.ok("work_claim", json!({"item_id": id, "claimant": "worker one"})).await["item"].clone();
    assert_eq!((claimed["state"].as_str(), claimed["claimant"].as_str()), (Some("claimed"), Some("worker one")));
    assert_eq!(claimed["claimant_kind"], "agent");
    let refused = other.fail("work_claim", json!({"item_id": id, "claimant": "worker two"}), "conflict").await;
    assert!(refused["message"].as_str().unwrap().starts_with("held by \"worker one\" (agent) since "), "{refused}");
    assert_eq!(refused["details"]["holder"], "worker one");
    let again = agent.ok("work_claim", json!({"item_id": id, "claimant": "Worker  One"})).await["item"].clone();
    assert_eq!(again["updated_at"], claimed["updated_at"], "a repeat by the holder changes nothing");

    let update = agent.ok("work_update", json!({"item_id": id, "state": "in_progress", "notes": "on it"})).await;
    assert_eq!(update["changed"], json!(["state", "notes"]));
    let repeat = agent.ok("work_update", json!({"item_id": id, "state": "in_progress"})).await;
    assert_eq!(repeat["changed"], json!([]));
    agent.ok("work_update", json!({"item_id": id, "state": "blocked"})).await;
    let denied = other.fail("work_update", json!({"item_id": id, "state": "done"}), "permission_denied").await;
    assert_eq!(denied["message"], "only its claimant (\"worker one\") or a person marks it done");
    let by_person = ada.ok("work_update", json!({"item_id": id, "state": "done"})).await["item"].clone();
    assert_eq!((by_person["state"].as_str(), by_person["claimant"].as_str()), (Some("done"), Some("worker one")));
    assert_eq!(by_person["done_by"], "Ada (person)");
    let mine = agent.ok("work_list", json!({"state": "done", "claimed_by": "worker one"})).await;
    assert_eq!(mine["items"].as_array().unwrap().len(), 1, "claimed_by matches finished work too");
    agent.fail("work_claim", json!({"item_id": id, "claimant": "worker one"}), "failed_precondition").await;

    // Hand-offs: to someone, enforced for agents; twice fails.
    let next = item(&agent, &space, "Session refresh").await;
    agent.ok("work_claim", json!({"item_id": next, "claimant": "worker one"})).await;
    other.fail("work_handoff", json!({"item_id": next, "note": "mine now"}), "permission_denied").await;
    let handed = agent.ok("work_handoff", json!({"item_id": next, "note": "Done: API. Left: UI.", "to": "worker two"})).await;
    let handed = &handed["item"];
    assert_eq!((handed["state"].as_str(), handed["claimant"].as_str()), (Some("open"), Some("")));
    assert_eq!(handed["handoff"], json!({"from": "worker one", "to": "worker two", "note": "Done: API. Left: UI.", "at": handed["updated_at"]}));
    agent.fail("work_handoff", json!({"item_id": next, "note": "again"}), "failed_precondition").await;
    let not_for_you = agent.fail("work_claim", json!({"item_id": next, "claimant": "worker three"}), "conflict").await;
    assert_eq!(not_for_you["message"], "handed off to \"worker two\"; only they or a person may claim it");
    other.ok("work_claim", json!({"item_id": next, "claimant": "Worker Two"})).await;
    ada.ok("work_handoff", json!({"item_id": next, "note": "releasing a stale claim"})).await;

    // Limits: note 0 / 1 / 4000 / 4001, links 10 / 11, unknown states and arguments.
    ada.ok("work_claim", json!({"item_id": next, "claimant": "Ada"})).await;
    ada.fail("work_handoff", json!({"item_id": next, "note": ""}), "invalid_argument").await;
    ada.fail("work_handoff", json!({"item_id": next, "note": "x".repeat(4001)}), "invalid_argument").await;
    ada.ok("work_handoff", json!({"item_id": next, "note": "x".repeat(4000)})).await;
    ada.ok("work_claim", json!({"item_id": next, "claimant": "Ada"})).await;
    ada.ok("work_handoff", json!({"item_id": next, "note": "x"})).await;
    let ten: Vec<String> = (0..10).map(|i| format!("https://github.com/acme/web/pull/{i}")).collect();
    agent.ok("work_update", json!({"item_id": next, "links": ten})).await;
    let eleventh = agent.fail("work_update", json!({"item_id": next, "links": ["https://example.com/x"]}), "invalid_argument").await;
    assert_eq!(eleventh["message"], "the item keeps at most ten links; it has 10 and 1 are new");
    agent.fail("work_update", json!({"item_id": next, "state": "open"}), "invalid_argument").await;
    agent.fail("work_update", json!({"item_id": next}), "invalid_argument").await;
    agent.fail("work_claim", json!({"item_id": next, "claimant": "w", "force": true}), "invalid_argument").await;
    agent.fail("work_list", json!({"state": "finished"}), "invalid_argument").await;
    agent.fail("work_claim", json!({"item_id": "wi_nope", "claimant": "w"}), "not_found").await;
    agent.fail("work_create", json!({"space_id": space, "title": ""}), "invalid_argument").await;
    for client in [agent, other, ada] {
        client.close().await;
    }
}

#[tokio::test]
async fn lifecycle_over_stdio() {
    lifecycle(Via::Stdio).await;
}

#[tokio::test]
async fn lifecycle_over_http() {
    lifecycle(Via::Http).await;
}

async fn documents(via: Via) {
    let mut env = Env::new();
    let account = env.account("acme", "").await;
    let ada = env.bearer(&account, "Ada", "person", ALL).await;
    let ada = env.client(via, &ada).await;
    let space = space(&ada, "Design").await;
    let same = ada.ok("decisions_create_space", json!({"name": "design"})).await;
    assert_eq!((same["space"]["id"].as_str(), same["created"].as_bool()), (Some(space.as_str()), Some(false)));
    let made = ada.ok("decisions_create_document", json!({"space_id": space, "title": "Roadmap", "body": "# v1"})).await;
    let doc = made["document"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["document"]["version"], 1);
    let v2 = ada
        .ok("decisions_update_document", json!({"space_id": space, "document_id": doc, "base_version": 1, "body": "# v2"}))
        .await;
    assert_eq!((v2["document"]["version"].as_i64(), v2["document"]["body"].as_str()), (Some(2), Some("# v2")));
    let stale = ada
        .fail(
            "decisions_update_document",
            json!({"space_id": space, "document_id": doc, "base_version": 1, "body": "# lost"}),
            "conflict",
        )
        .await;
    assert_eq!(stale["details"]["current_version"], 2);
    let read = ada.ok("decisions_get_document", json!({"space_id": space, "document_id": doc})).await;
    assert_eq!(read["document"]["body"], "# v2");
    let listed = ada.ok("decisions_list_documents", json!({"space_id": space, "query": "road"})).await;
    assert_eq!(listed["documents"][0]["version"], 2);
    assert!(listed["documents"][0].get("body").is_none(), "lists leave bodies out");
    let spaces = ada.ok("decisions_list_spaces", json!({})).await;
    assert_eq!(spaces["spaces"].as_array().unwrap().len(), 1);
    let wi = ada.ok("work_create", json!({"space_id": space, "title": "Build v2", "document_id": doc})).await;
    assert_eq!(wi["item"]["document_id"], doc);
    let by_doc = ada.ok("work_list", json!({"document_id": doc})).await;
    assert_eq!(by_doc["items"].as_array().unwrap().len(), 1);
    ada.fail("work_create", json!({"space_id": space, "title": "x", "document_id": "doc_nope"}), "not_found").await;
    ada.close().await;
}

#[tokio::test]
async fn documents_keep_versions_over_stdio() {
    documents(Via::Stdio).await;
}

#[tokio::test]
async fn documents_keep_versions_over_http() {
    documents(Via::Http).await;
}

#[tokio::test]
async fn the_local_stdio_user_acts_as_agent_or_person() {
    let env = Env::new();
    let agent = env.local("agent").await;
    let person = env.local("person").await;
    let space = space(&agent, "Local").await;
    let id = item(&agent, &space, "Local work").await;
    agent.ok("work_claim", json!({"item_id": id, "claimant": "local coder"})).await;
    let done = person.ok("work_update", json!({"item_id": id, "state": "done"})).await;
    assert_eq!(done["item"]["done_by"], "local person (person)");
    assert_eq!(agent.tool_names().await.len(), 17, "the local user holds every scope");
    agent.close().await;
    person.close().await;
}
