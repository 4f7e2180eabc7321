//! Only the server's own configuration runs or reaches anything (issue 33): a project's `roscoe.yaml` is the
//! caller's to write, so the provider keys that name a command, an address or a key (`command`, `args`, `baseUrl`,
//! `apiKeyEnv`, `apiKeyFile`, `type`) are refused there, with an error naming the key and the file, on `cairn serve`
//! on stdio and on the command line alike; nothing runs and nothing connects.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::runs_support::write_workflow;
use crate::support::*;

/// One AI step the server answers itself: no `script` node, so `roscoe:run` may start it.
const DRAFT: &str = "name: draft\nexecution: server\ninitial: draft\nnodes:\n  draft:\n    type: ai_agent\n    \
    config: { prompt: Write a haiku }\n    transitions: { success: $end }\n";

/// A listener that counts the connections it gets, standing in for an attacker's server.
struct Listener {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                counted.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        Listener { port, connections }
    }
}

/// `start_workflow` of `draft` in `root` must be refused for `root/roscoe.yaml`, naming each of `keys`.
fn assert_refused(started: &Value, root: &Path, keys: &[&str]) {
    assert_eq!(started["code"], "invalid_config", "{started}");
    let error = started["error"].as_str().unwrap();
    assert!(error.contains(&s(&root.join("roscoe.yaml"))), "the error names the file: {error}");
    for key in keys {
        assert!(error.contains(&format!("`{key}`")), "the error names {key}: {error}");
    }
    assert!(error.contains("global roscoe.yaml"), "the error says where the key belongs: {error}");
    assert!(started.get("runId").is_none(), "no run started: {started}");
}

#[tokio::test]
async fn a_project_provider_command_never_runs_for_a_caller_without_exec() {
    let env = Env::new();
    let root = env.repo("proj");
    let marker = env.tmp.path().join("ran");
    let tool = root.join("tool.sh");
    std::fs::write(&tool, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let yaml = format!(
        "models:\n  providers: {{ \"claude-*\": claude-cli }}\nproviders:\n  claude-cli: {{ command: \"{}\" }}\n",
        tool.display()
    );
    std::fs::write(root.join("roscoe.yaml"), yaml).unwrap();
    write_workflow(&root, "draft", DRAFT);

    let served = env.serve(&["--require-auth"], &[]).await;
    let writer = Client::http(&served, &env.token("writer", "roscoe:write,roscoe:run").await).await;
    let started = writer.ok("start_workflow", json!({ "cwd": s(&root), "id": "draft" })).await;
    assert_refused(&started, &root, &["providers.claude-cli.command"]);
    // The same file over stdio, where the project's files are as much the caller's.
    let stdio = env.connect().await;
    let started = stdio.ok("start_workflow", json!({ "cwd": s(&root), "id": "draft" })).await;
    assert_refused(&started, &root, &["providers.claude-cli.command"]);
    // And from the command line, which runs AI steps itself.
    let ran = env.roscoe(&root, &["run", "draft"]).await;
    assert_eq!(ran.code, 2, "{ran:?}");
    assert!(ran.stderr.contains("`providers.claude-cli.command` may be set only in the global roscoe.yaml"), "{}", ran.stderr);
    assert!(!marker.exists(), "tool.sh never ran");
    writer.close().await;
    stdio.close().await;
}

#[tokio::test]
async fn a_project_provider_address_and_key_never_receive_the_servers_secrets() {
    let env = Env::new();
    let root = env.repo("proj");
    let key_file = env.tmp.path().join("key");
    std::fs::write(&key_file, "file-secret").unwrap();
    write_workflow(&root, "draft", DRAFT);
    let listener = Listener::start();
    let served = env.serve(&["--require-auth"], &[("SOME_SECRET", "env-secret")]).await;
    let writer = Client::http(&served, &env.token("writer", "roscoe:write,roscoe:run").await).await;
    let base = format!("http://127.0.0.1:{}", listener.port);
    let cases = [
        (format!("anthropic: {{ baseUrl: \"{base}\", apiKeyEnv: SOME_SECRET }}"), ["providers.anthropic.baseUrl", "providers.anthropic.apiKeyEnv"]),
        (format!("anthropic: {{ baseUrl: \"{base}\", apiKeyFile: \"{}\" }}", key_file.display()), ["providers.anthropic.baseUrl", "providers.anthropic.apiKeyFile"]),
        (format!("mine: {{ type: openai, baseUrl: \"{base}/v1\", apiKeyEnv: SOME_SECRET }}"), ["providers.mine.type", "providers.mine.baseUrl"]),
    ];
    for (provider, keys) in cases {
        let yaml = format!("models:\n  providers: {{ \"claude-*\": {} }}\nproviders:\n  {provider}\n", keys[0].split('.').nth(1).unwrap());
        std::fs::write(root.join("roscoe.yaml"), &yaml).unwrap();
        let started = writer.ok("start_workflow", json!({ "cwd": s(&root), "id": "draft" })).await;
        assert_refused(&started, &root, &keys);
    }
    assert_eq!(listener.connections.load(Ordering::SeqCst), 0, "nothing connected to the project's address");
    writer.close().await;
}
