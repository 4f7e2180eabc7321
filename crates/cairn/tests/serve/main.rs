//! End-to-end tests of `cairn serve` and `cairn db`: the real binary on a port it picks, on a private `CAIRN_HOME` and
//! a fresh database (SQLite, or Postgres when `CAIRN_TEST_POSTGRES_URL` is set), probed with plain HTTP and with
//! rmcp's client.

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
#[path = "../common/rest.rs"]
mod rest;
#[path = "../common/database.rs"]
mod database;
mod backup;
mod db;
mod deep_messages;
mod deploy_doc;
mod endpoints;
mod operations_doc;
mod observability;
mod one_write;
mod priming;
mod private_files;
#[path = "../common/prometheus.rs"]
mod prometheus;
mod shutdown;
mod slow_clients;
#[path = "../common/slow_connections.rs"]
mod slow_connections;
mod support;
mod traces;
mod transfer;
