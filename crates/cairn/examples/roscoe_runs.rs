//! Benchmark of roscoe runs, in process on a store (SQLite by default): the median time of `advance_run` on a 50-node
//! linear workflow started as an MCP host starts it (each answer finishes one ai_agent node and pauses at the next)
//! and of `list_runs` with 10,000 runs in the database. It calls the run facade that the MCP tools call, so the figures are the server's own time,
//! without a transport.
//!
//! `cargo run --release -p cairn --example roscoe_runs [RUNS] [--database-url URL]` (default 20 runs of 49 advances
//! each, on a fresh SQLite file). Several of these processes on one Postgres database are several nodes at work.

use std::time::{Duration, Instant};

use cairn_roscoe::runs::ListRuns;
use cairn_roscoe::{Runs, Scope, Service};
use cairn_roscoe::engine::Answer;
use cairn_store::Store;
use cairn_store::runs as rows;

const NODES: usize = 50;
const LISTED_RUNS: usize = 10_000;

fn linear_workflow() -> String {
    let mut yaml = String::from("name: linear\ninitial: n1\nnodes:\n");
    for i in 1..=NODES {
        let prompt = if i == 1 { "start".to_owned() } else { format!("continue from {{{{ n{}.text }}}}", i - 1) };
        let next = if i == NODES { "$end".to_owned() } else { format!("n{}", i + 1) };
        yaml.push_str(&format!(
            "  n{i}:\n    type: ai_agent\n    config: {{ prompt: \"{prompt}\" }}\n    transitions: {{ success: {next} }}\n"
        ));
    }
    yaml
}

fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(samples[samples.len() / 2]), ms(samples[samples.len() * 9 / 10]))
}

#[tokio::main]
async fn main() {
    let (mut runs_to_time, mut database) = (20_usize, None::<String>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--database-url" => database = Some(args.next().expect("--database-url URL")),
            n => runs_to_time = n.parse().expect("RUNS is a number"),
        }
    }
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".roscoe/workflows")).unwrap();
    std::fs::write(project.join(".roscoe/workflows/linear.yaml"), linear_workflow()).unwrap();
    let url = database.unwrap_or_else(|| Store::default_url(&home));
    let store = Store::open(&url).await.expect("the database opens");
    let service = Service::new(&home);
    let runs = Runs::new(store.clone(), service);
    let scope = Scope::resolve(Some(project.to_str().unwrap()), None).expect("the project scope");

    let mut advances = Vec::new();
    let mut starts = Vec::new();
    for round in 0..runs_to_time + 1 {
        let began = Instant::now();
        // Started as an MCP host starts a run, so its AI steps are handed back to the caller (from the command line
        // the server would try to run them itself, and with no provider hand each one back a step later).
        let actor = cairn_roscoe::Actor::local("mcp");
        let started = runs.start_workflow(&scope, "linear", None, None, &actor).await.expect("start");
        let elapsed = began.elapsed();
        let run_id = started.result.run_id.clone();
        for step in 1..NODES {
            let answer = Answer::Response { response: format!("answer {step}"), failed: false };
            let began = Instant::now();
            let result = runs.advance(&scope, &run_id, None, answer).await.expect("advance");
            let elapsed = began.elapsed();
            assert_eq!(result.status, "paused");
            if round > 0 {
                advances.push(elapsed);
            }
        }
        let last = Answer::Response { response: "done".into(), failed: false };
        assert_eq!(runs.advance(&scope, &run_id, None, last).await.expect("advance").status, "completed");
        if round > 0 {
            starts.push(elapsed);
        }
    }

    // 10,000 more runs of this project, written straight into the table.
    let mut conn = store.read().await.unwrap();
    let template = rows::list_runs(
        &mut conn,
        &rows::ListFilter {
            project_id: scope.project_id().to_owned(),
            status: None,
            workflow_id: None,
            include_children: false,
            search: None,
            after: None,
            limit: 1,
        },
    )
    .await
    .unwrap();
    let mut row = rows::get_run(&mut conn, &template[0].id).await.unwrap().unwrap();
    drop(conn);
    let mut tx = rows::begin(&store).await.unwrap();
    for i in 0..LISTED_RUNS {
        // Unique across processes that share one database.
        row.id = format!("bench{:07}{i:014}", std::process::id());
        row.root_run_id = row.id.clone();
        row.started_at += 1;
        row.status = ["completed", "failed", "paused"][i % 3].to_owned();
        rows::insert_run(&mut tx, &row).await.unwrap();
    }
    rows::commit(tx).await.unwrap();
    let mut lists = Vec::new();
    let mut filtered = Vec::new();
    for i in 0..203 {
        let began = Instant::now();
        let listed = runs.list_runs(&scope, &ListRuns::default()).await.expect("list");
        let elapsed = began.elapsed();
        assert_eq!(listed.len(), 20);
        let query = ListRuns { status: Some("failed".into()), limit: Some(50), ..ListRuns::default() };
        let began_filtered = Instant::now();
        runs.list_runs(&scope, &query).await.expect("list");
        if i >= 3 {
            lists.push(elapsed);
            filtered.push(began_filtered.elapsed());
        }
    }

    let (advance_median, advance_p90) = stats(advances.clone());
    let (start_median, start_p90) = stats(starts);
    let (list_median, list_p90) = stats(lists);
    let (filtered_median, filtered_p90) = stats(filtered);
    println!("| metric | median ms (p90) | samples |");
    println!("|---|---|---|");
    println!("| advance_run, 50-node linear workflow | {advance_median:.3} ({advance_p90:.3}) | {} |", advances.len());
    println!("| start_workflow, same workflow | {start_median:.3} ({start_p90:.3}) | {runs_to_time} |");
    println!("| list_runs, {LISTED_RUNS} runs in the project (limit 20) | {list_median:.3} ({list_p90:.3}) | 200 |");
    println!("| list_runs, status filter, limit 50 | {filtered_median:.3} ({filtered_p90:.3}) | 200 |");
}
