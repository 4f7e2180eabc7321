//! End-to-end tests of `cairn serve`'s REST API and web UI: the real binary on a port it picks, on a private
//! `CAIRN_HOME`, probed with plain HTTP (`api.rs`, `pages.rs`, `notifications.rs`, `webhooks.rs`, `work_pages.rs`,
//! `work_board.rs`, `sessions.rs`, `early_close.rs`, and the hardening: `headers.rs`, `rate_limits.rs`,
//! `body_limits.rs`, `cross_origin.rs`) and with a real browser (`browser.rs`, which drives `browser.mjs` with Node,
//! playwright-core and Debian's chromium).

// Test helpers are shared between the modules of this one test binary.
#![allow(unreachable_pub)]

#[path = "../common/cairn_serve.rs"]
mod cairn_serve;
#[path = "../common/rest.rs"]
mod rest;
mod access;
mod api;
#[path = "../common/database.rs"]
mod database;
mod body_limits;
mod browser;
mod crawl;
mod cross_origin;
mod early_close;
mod headers;
mod lists;
mod notifications;
mod pages;
mod rate_limits;
mod schedules;
mod sessions;
mod signin_next;
mod support;
mod token_minting;
mod webhooks;
mod work_board;
mod work_pages;
