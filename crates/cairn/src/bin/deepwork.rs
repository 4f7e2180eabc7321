//! The `deepwork` program: the commands of `cairn deepwork`, so `deepwork serve --path .` works. Built as its own
//! binary so `cargo install --path crates/cairn` installs it, and holding only the deepwork commands
//! ([`cairn::entry::deepwork_main`]): a link named `deepwork` to `cairn` works too, as the whole program.

// One thread serves the host's requests (a deepwork server has one client), file work runs on tokio's blocking
// threads: a call's hand-offs stay on one core and the idle program holds no worker threads.
#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    cairn::entry::deepwork_main().await
}
