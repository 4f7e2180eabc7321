//! The `deepwork` entry name: the same program as `cairn deepwork`, so `deepwork serve --path .` works. Built as its
//! own binary so `cargo install --path crates/cairn` installs it; the name picks the command set
//! ([`cairn::entry`]), as it does for a link named `deepwork` to `cairn`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    cairn::entry::main().await
}
