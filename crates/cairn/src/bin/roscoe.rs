//! The `roscoe` entry name: the same program as `cairn roscoe`, so `roscoe mcp` and `roscoe run` work. Built as its
//! own binary so `cargo install --path crates/cairn` installs it; the name picks the command set
//! ([`cairn::entry`]), as it does for a link named `roscoe` to `cairn`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    cairn::entry::main().await
}
