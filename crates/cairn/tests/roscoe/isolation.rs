//! Per-call scoping on one long-lived server: concurrent calls with different `cwd`s (two git repositories) each see
//! their own repo workflows and the shared global ones, never the other project's; over stdio and over HTTP.

use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::support::*;

fn ids(list: &Value) -> Vec<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|w| (w["id"].as_str().unwrap().to_owned(), w["source"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_with_different_cwds_never_see_each_others_repo_workflows() {
    for transport in TRANSPORTS {
        isolation(transport).await;
    }
}

async fn isolation(transport: Transport) {
    let env = Env::new();
    let alpha = env.repo("alpha");
    let beta = env.repo("beta");
    let client = Arc::new(env.connect_over(transport).await);
    client.ok("create_workflow", json!({"global": true, "id": "shared", "yaml": simple("shared")})).await;
    for (root, own) in [(&alpha, "only-alpha"), (&beta, "only-beta")] {
        let cwd = s(root);
        for id in ["local", own] {
            let args = json!({"cwd": cwd, "id": id, "yaml": simple(id), "source": "repo"});
            client.ok("create_workflow", args).await;
        }
    }

    let expected = |own: &str| {
        let mut list = vec![
            ("local".to_owned(), "repo".to_owned()),
            (own.to_owned(), "repo".to_owned()),
            ("shared".to_owned(), "global".to_owned()),
        ];
        list.sort();
        list
    };
    let calls: Vec<(PathBuf, &str)> =
        (0..40).map(|i| if i % 2 == 0 { (alpha.clone(), "only-alpha") } else { (beta.clone(), "only-beta") }).collect();
    futures::stream::iter(calls)
        .map(|(root, own)| {
            let client = client.clone();
            let expected = expected(own);
            async move {
                let cwd = s(&root);
                let list = client.ok("list_workflows", json!({"cwd": cwd})).await;
                assert_eq!(ids(&list), expected, "{cwd}");
                let local = client.ok("get_workflow", json!({"cwd": cwd, "id": "local"})).await;
                assert_eq!(local["path"], s(&root.join(".roscoe/workflows/local.yaml")));
                let other = if own == "only-alpha" { "only-beta" } else { "only-alpha" };
                let err = client.fail("get_workflow", json!({"cwd": cwd, "id": other})).await;
                assert_eq!(err["code"], "not_found");
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;

    // A subdirectory resolves to its repository's root.
    let sub = alpha.join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let list = client.ok("list_workflows", json!({"cwd": s(&sub)})).await;
    assert_eq!(ids(&list), expected("only-alpha"));
    // Global scope sees neither project.
    let list = client.ok("list_workflows", json!({"global": true})).await;
    assert_eq!(ids(&list), [("shared".to_owned(), "global".to_owned())]);
    Arc::into_inner(client).unwrap().close().await;
}
