//! The `deepwork` program: the commands of `cairn deepwork`, so `deepwork serve --path .` works. Built as its own
//! binary so `cargo install --path crates/cairn` installs it, and holding only the deepwork commands
//! ([`cairn::entry::deepwork_main`]): a link named `deepwork` to `cairn` works too, as the whole program.

fn main() -> std::process::ExitCode {
    one_malloc_arena();
    cairn::entry::run_deepwork()
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
