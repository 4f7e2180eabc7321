//! Several `cairn serve` nodes on one database, as a team runs them behind a load balancer on a shared PostgreSQL:
//! claims, step answers, document updates and evidence stay exactly-once across nodes (`claims.rs`, `steps.rs`,
//! `records.rs`), a run advanced through one node
//! streams to another node's SSE clients (`live.rs`), a node killed mid-load loses no acknowledged write
//! (`crash.rs`), a client that keeps an `Mcp-Session-Id` continues its session on another node (`sessions.rs`), and
//! a token revoked anywhere is refused by every node that had it cached (`tokens.rs`), and a run's durable timer
//! fires on time, once, across a kill and across nodes (`timers.rs`), each run notification is sent once by
//! whichever node claims it (`notifications.rs`), and a workflow's schedule starts one run per slot across nodes,
//! one catch-up run after all were down, none while paused (`schedules.rs`).
//!
//! The database is a fresh Postgres database per test when `CAIRN_TEST_POSTGRES_URL` is set. Without it the
//! Postgres-only tests print a notice and pass (several nodes on SQLite is not the deployment), and `live.rs`,
//! `sessions.rs` and `notifications.rs` run their nodes on one shared SQLite file.

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
mod claims;
mod crash;
#[path = "../common/database.rs"]
mod database;
mod live;
mod notifications;
#[path = "../common/prometheus.rs"]
mod prometheus;
mod records;
mod schedules;
mod sessions;
mod steps;
mod support;
mod timers;
mod tokens;
mod webhooks;
