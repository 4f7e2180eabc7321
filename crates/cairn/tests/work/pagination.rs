//! Paging `work_list`: sizes (0 → 50, 200, 201), a walk that stays exact while other clients insert, and page tokens
//! that were tampered with, reused with other filters, or made for another account.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::{ALL, Env, Via, space};

fn ids(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn pages_are_exact_under_concurrent_inserts_and_tokens_are_bound_to_their_query() {
    let mut env = Env::new();
    let acme = env.account("acme", "").await;
    let globex = env.account("globex", "").await;
    let bearer = env.bearer(&acme, "pager", "agent", ALL).await;
    let writer = env.bearer(&acme, "writer", "agent", ALL).await;
    let outsider = env.bearer(&globex, "outsider", "agent", ALL).await;
    let (reader, writer, outsider) =
        (env.client(Via::Http, &bearer).await, env.client(Via::Http, &writer).await, env.client(Via::Http, &outsider).await);
    let space = space(&reader, "Paged").await;
    let mut before = BTreeSet::new();
    for i in 0..60 {
        let made = writer.ok("work_create", json!({"space_id": space, "title": format!("item {i}")})).await;
        before.insert(made["item"]["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids(&reader.ok("work_list", json!({})).await).len(), 50, "0 means 50");
    assert_eq!(ids(&reader.ok("work_list", json!({"page_size": 200})).await).len(), 60);
    let too_big = reader.fail("work_list", json!({"page_size": 201}), "invalid_argument").await;
    assert_eq!(too_big["message"], "page_size is at most 200; it is 201");

    let mut seen = Vec::new();
    let mut page = reader.ok("work_list", json!({"page_size": 7})).await;
    let mut inserted = 0;
    loop {
        seen.extend(ids(&page));
        let token = page["next_page_token"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
        writer.ok("work_create", json!({"space_id": space, "title": format!("late {inserted}")})).await;
        inserted += 1;
        page = reader.ok("work_list", json!({"page_size": 7, "page_token": token})).await;
    }
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no item twice");
    assert_eq!(unique, before, "every item that was there at the start, and only those");
    assert!(inserted > 5);

    let first = reader.ok("work_list", json!({"page_size": 5})).await;
    let token = first["next_page_token"].as_str().unwrap().to_owned();
    let mut tampered = token.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    reader.fail("work_list", json!({"page_size": 5, "page_token": tampered}), "invalid_argument").await;
    let other_filter = reader.fail("work_list", json!({"page_size": 5, "state": "open", "page_token": token}), "invalid_argument").await;
    assert!(other_filter["message"].as_str().unwrap().starts_with("page_token does not belong to this query"));
    outsider.fail("work_list", json!({"page_size": 5, "page_token": token}), "invalid_argument").await;
    reader.fail("work_list", json!({"page_token": "not-a-token"}), "invalid_argument").await;
    let second = reader.ok("work_list", json!({"page_size": 5, "page_token": token})).await;
    assert_eq!(ids(&second).len(), 5);
    for client in [reader, writer, outsider] {
        client.close().await;
    }
}
