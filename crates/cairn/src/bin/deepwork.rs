//! The `deepwork` program: the commands of `cairn deepwork`, so `deepwork serve --path .` works. Built as its own
//! binary so `cargo install --path crates/cairn` installs it, and holding only the deepwork commands
//! ([`cairn::entry::deepwork_main`]): a link named `deepwork` to `cairn` works too, as the whole program.

// One thread serves the host's requests (a deepwork server has one client), file work runs on tokio's blocking
// threads: a call's hand-offs stay on one core and the idle program holds no worker threads.
fn main() -> std::process::ExitCode {
    one_malloc_arena();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    runtime.expect("a tokio runtime starts").block_on(cairn::entry::deepwork_main())
}

/// glibc gives each thread that allocates its own malloc arena, each holding memory of its own; the blocking
/// threads' file work is small and rarely at once, so one arena serves them all (about half a MiB less at peak,
/// docs/benchmarks.md).
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: called first in `main`, before any other thread exists or anything is allocated through another arena.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
