//! Evidence and status end to end: merged / rolled records (refusals, idempotent repeats, conflicts, roll unions)
//! and `work_status` on the worked example of spec §6.9.

use serde_json::json;

use crate::support::{ALL, Env, Via, space};

const ROADMAP: &str = "# Auth roadmap\n## Phase 1\n| Piece | State | PRs |\n|---|---|---|\n\
    | SSO login | ✅ Implemented | #742 |\n| Session refresh | Merged | #743, #744 |\n| Audit log | Planned | |\n\
    | Password reset | implemented | acme/api#12 |\n";

async fn evidence_and_status(via: Via) {
    let mut env = Env::new();
    let account = env.account("acme", "acme/web").await;
    let ci = env.bearer(&account, "ci", "service", ALL).await;
    let ada = env.bearer(&account, "Ada", "person", ALL).await;
    let (ci, ada) = (env.client(via, &ci).await, env.client(via, &ada).await);
    let merged = |n: &[i64], commit: &str| json!({"kind": "merged", "repository": "acme/web", "commit": commit, "pull_requests": n});

    ci.fail("work_record_evidence", merged(&[], "abc1234"), "invalid_argument").await;
    ci.fail("work_record_evidence", merged(&[1, 2], "abc1234"), "invalid_argument").await;
    let roll = json!({"kind": "rolled", "repository": "acme/web", "commit": "def5678", "pull_requests": [743]});
    ci.fail("work_record_evidence", roll.clone(), "invalid_argument").await;
    let first = ci.ok("work_record_evidence", merged(&[742], "abc1234")).await;
    assert_eq!((first["created"].as_bool(), first["evidence"]["pull_requests"].clone()), (Some(true), json!([742])));
    let repeat = ci.ok("work_record_evidence", merged(&[742], "ABC1234")).await;
    assert_eq!((repeat["created"].as_bool(), repeat["evidence"]["id"].clone()), (Some(false), first["evidence"]["id"].clone()));
    let clash = ci.fail("work_record_evidence", merged(&[742], "fff0000"), "conflict").await;
    assert_eq!(clash["message"], "#742 in acme/web is already recorded merged at abc1234");
    ci.ok("work_record_evidence", merged(&[743], "def5678")).await;
    let mut roll = roll;
    roll["service"] = json!("web");
    let rolled = ci.ok("work_record_evidence", roll.clone()).await;
    assert_eq!(rolled["created"], true);
    roll["pull_requests"] = json!([743, 700]);
    let union = ci.ok("work_record_evidence", roll).await;
    assert_eq!((union["created"].as_bool(), union["added"].clone()), (Some(false), json!([700])));
    assert_eq!(union["evidence"]["pull_requests"], json!([700, 743]));

    let space = space(&ada, "Roadmaps").await;
    let doc = ada.ok("decisions_create_document", json!({"space_id": space, "title": "Auth roadmap", "body": ROADMAP})).await;
    let doc = doc["document"]["id"].as_str().unwrap().to_owned();
    ada.ok("work_create", json!({"space_id": space, "title": "Roll SSO", "document_id": doc})).await;
    let status = ada.ok("work_status", json!({"space_id": space, "document_id": doc})).await;
    let rows: Vec<(String, String, String)> = status["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["piece"].as_str().unwrap().into(), p["shows"].as_str().unwrap().into(), p["finding"].as_str().unwrap().into()))
        .collect();
    let expected = [
        ("SSO login", "merged", "claims implemented; not rolled: #742"),
        ("Session refresh", "partial", "claims merged; not merged: #744"),
        ("Audit log", "unchecked", ""),
        ("Password reset", "unchecked", "claims implemented; unchecked: no evidence recorded for acme/api"),
    ];
    let expected: Vec<(String, String, String)> =
        expected.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect();
    assert_eq!(rows, expected);
    assert_eq!(status["repository"], "acme/web");
    assert_eq!(status["summary"]["pieces"], 4);
    assert_eq!(status["summary"]["disagree"], 3);
    assert_eq!(status["pieces"][0]["pull_requests"][0]["merge_commit"], "abc1234");
    assert_eq!(status["pieces"][1]["pull_requests"][0]["services"], json!(["web"]));
    assert_eq!(status["work_items"]["open"], 1);

    env.cli(&["account", "update", "--account", &account, "--default-repository", ""]).await;
    let none = ada.fail("work_status", json!({"space_id": space, "document_id": doc}), "failed_precondition").await;
    assert_eq!(none["message"], "no repository: pass repository or set the account's default repository");
    let named = ada.ok("work_status", json!({"space_id": space, "document_id": doc, "repository": "acme/web"})).await;
    assert_eq!(named["pieces"][0]["finding"], "claims implemented; not rolled: #742");
    ci.close().await;
    ada.close().await;
}

#[tokio::test]
async fn evidence_and_status_over_stdio() {
    evidence_and_status(Via::Stdio).await;
}

#[tokio::test]
async fn evidence_and_status_over_http() {
    evidence_and_status(Via::Http).await;
}
