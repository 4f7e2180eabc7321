//! `work_list` previews items (notes cut to 200 characters and marked, empty fields left out) and `work_get`
//! answers one whole, with its history, over stdio and `/mcp`.

use serde_json::json;

use crate::support::{ALL, Env, Via, item, space};

#[tokio::test]
async fn work_list_previews_long_notes_and_work_get_has_them_whole_with_the_history() {
    for via in [Via::Stdio, Via::Http] {
        let mut env = Env::new();
        let acme = env.account("acme", "").await;
        let bearer = env.bearer(&acme, "reader", "agent", ALL).await;
        let client = env.client(via, &bearer).await;
        let space = space(&client, "Previews").await;
        let long_notes = "The migration plan, step by step. ".repeat(18).trim_end().to_owned();
        assert!(long_notes.chars().count() > 600);
        let long = client.ok("work_create", json!({"space_id": space, "title": "Long", "notes": long_notes})).await;
        let long_id = long["item"]["id"].as_str().unwrap().to_owned();
        let short_id = item(&client, &space, "Short").await;
        client.ok("work_update", json!({"item_id": short_id, "notes": "Two words."})).await;
        client.ok("work_claim", json!({"item_id": long_id, "claimant": "agent one"})).await;

        let listed = client.ok("work_list", json!({"space_id": space})).await;
        let items = listed["items"].as_array().unwrap();
        let find = |id: &str| items.iter().find(|i| i["id"] == id).unwrap().clone();
        let (long, short) = (find(&long_id), find(&short_id));
        let preview = long["notes"].as_str().unwrap();
        assert!(preview.chars().count() <= 200 && preview.ends_with('…'), "{via:?}: {preview}");
        assert!(long_notes.starts_with(preview.trim_end_matches('…')), "a preview is the notes' beginning");
        assert_eq!(long["notes_truncated"], true, "{via:?}");
        assert_eq!(long["claimant"], "agent one");
        assert_eq!(short["notes"], "Two words.");
        for field in ["notes_truncated", "links", "claimant", "claimant_kind", "claimed_at", "handoff", "document_id"] {
            assert!(short.get(field).is_none(), "{via:?}: an unclaimed item without links has no {field}: {short}");
        }
        for field in ["id", "space_id", "title", "state", "created_at", "updated_at"] {
            assert!(short.get(field).is_some(), "{via:?}: {field} stays: {short}");
        }

        let whole = client.ok("work_get", json!({"item_id": long_id})).await;
        assert_eq!(whole["item"]["notes"], long_notes.as_str(), "{via:?}: work_get has the notes whole");
        assert!(whole["item"].get("notes_truncated").is_none());
        let kinds: Vec<&str> = whole["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"created"), "{via:?}: {kinds:?}");
        assert!(kinds.contains(&"claimed"), "{via:?}: {kinds:?}");
        assert!(whole["events"].as_array().unwrap().iter().any(|e| e["by"] == "agent one"));

        let missing = client.fail("work_get", json!({"item_id": "wi_nothere"}), "not_found").await;
        assert!(missing["message"].as_str().unwrap().contains("wi_nothere"), "{missing}");
        client.fail("work_get", json!({}), "invalid_argument").await;
        client.close().await;
    }
}
