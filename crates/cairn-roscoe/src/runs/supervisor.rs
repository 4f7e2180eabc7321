//! Linux: the supervisor process between the server and a script, so that a script's whole process tree is stopped
//! on timeout and cancel, when the script ends, and when the server dies — however the server dies.
//!
//! The server forks the supervisor as the script "command" (its own process group, the script's pipes); in that
//! child, before anything is executed, [`install`]'s hook forks once more: the grandchild goes on to execute the
//! script, the supervisor stays behind and never executes anything. The supervisor
//! - is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process of the script's tree that loses its parent — one that
//!   left the process group with `setsid` and whose parent exited, say — is re-parented to the supervisor instead of
//!   to init, so every process of the tree stays a descendant the supervisor can list (`/proc/…/children`) and reaps;
//! - watches its parent: when the server process is gone (SIGKILL included) its parent changes, and it stops the
//!   tree. A parent-death signal (`PR_SET_PDEATHSIG`, SIGHUP) wakes it at once; it is only a wake-up, because it also
//!   comes when the server *thread* that forked it ends while the server lives on (tokio's threads come and go);
//! - on SIGTERM (the server's timeout or cancel, sent to the process group) sends SIGTERM to every descendant,
//!   setsid'd ones included, waits up to [`GRACE`] for the script, then SIGKILLs whatever is left;
//! - when the script exits, SIGKILLs every remaining descendant (a background job would otherwise outlive its
//!   script) and exits the way the script did (the same code, or the same signal), which is what the server sees.
//!
//! The script has a parent-death signal too (SIGKILL): if the supervisor itself is SIGKILLed, the script dies, but
//! the script's own children then go to init, out of reach. A process that moves itself out of the tree's reach by
//! other means (a setuid program, another user's process manager) is not stopped either.
//!
//! Everything the supervisor runs happens in a child of a multi-threaded process, so it may only make
//! async-signal-safe calls: raw system calls, no allocation, no locks. Buffers live on the stack.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use libc::{c_int, pid_t};

/// How long the script's tree has between SIGTERM and SIGKILL (§7.1).
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// How long the server waits for a terminated supervisor before it SIGKILLs the group itself: the supervisor's grace
/// plus time to kill and reap.
pub(crate) const SERVER_GRACE: Duration = Duration::from_secs(10);

/// Set by SIGTERM: stop the tree.
static TERMINATE: AtomicBool = AtomicBool::new(false);

/// Makes `command` start a supervisor that runs the script as its child (see the module documentation).
pub(crate) fn install(command: &mut tokio::process::Command) {
    let server = std::process::id() as pid_t;
    // SAFETY: the hook runs in the forked child before exec and makes only async-signal-safe calls (no allocation,
    // no locks); it returns only in the grandchild, which then executes the script.
    unsafe {
        command.pre_exec(move || fork_supervisor(server));
    }
}

/// In the forked child: returns `Ok` in the grandchild (which executes the script); the supervisor never returns.
fn fork_supervisor(server: pid_t) -> io::Result<()> {
    // SAFETY: plain system calls on values owned by this function.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP) != 0
            || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != server {
            // The server died while forking: nothing to run for.
            libc::_exit(1);
        }
        // Hold SIGTERM and SIGHUP until the supervisor's handlers are in place.
        let mut held: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut held);
        libc::sigaddset(&mut held, libc::SIGTERM);
        libc::sigaddset(&mut held, libc::SIGHUP);
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &held, &mut before);
        let supervisor = libc::getpid();
        let script = libc::fork();
        if script < 0 {
            return Err(io::Error::last_os_error());
        }
        if script == 0 {
            // The script: it dies with its supervisor, and starts with the signal mask it was given.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != supervisor {
                libc::_exit(1);
            }
            libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
            return Ok(());
        }
        // The supervisor keeps no file open: not the script's pipes (their readers wait for every writer to close),
        // not the server's sockets and files, not the pipe on which the server learns whether the exec worked.
        close_all();
        TERMINATE.store(false, Ordering::SeqCst);
        for signal in [libc::SIGTERM, libc::SIGHUP] {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            // No SA_RESTART: a signal cuts the supervisor's naps short.
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::sigprocmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        supervise(server, script)
    }
}

/// SIGTERM asks for the tree to stop; SIGHUP (the parent-death signal) only wakes the supervisor up.
extern "C" fn on_signal(signal: c_int) {
    if signal == libc::SIGTERM {
        TERMINATE.store(true, Ordering::SeqCst);
    }
}

/// Waits for the script, reaping adopted orphans, and stops the tree on SIGTERM or when the server is gone (checked
/// at least every 100 ms); then exits as the script did.
fn supervise(server: pid_t, script: pid_t) -> ! {
    let mut ended: Option<c_int> = None;
    // SAFETY: `getppid` is a plain system call.
    while ended.is_none() && reap(script, &mut ended) {
        if TERMINATE.load(Ordering::SeqCst) || unsafe { libc::getppid() } != server {
            terminate(script, &mut ended);
            break;
        }
        if ended.is_none() {
            nap(100);
        }
    }
    kill_tree(script, &mut ended);
    exit_as(ended)
}

/// SIGTERM to every descendant, then up to [`GRACE`] for the script to end.
fn terminate(script: pid_t, ended: &mut Option<c_int>) {
    signal_descendants(libc::SIGTERM);
    let deadline = now_ms() + GRACE.as_millis() as i64;
    while ended.is_none() && now_ms() < deadline && reap(script, ended) {
        nap(50);
    }
}

/// SIGKILLs the supervisor's children until it has none: killing a process hands its own children to the
/// supervisor (it is their subreaper), so each round reaches one level deeper, and a process forked meanwhile is
/// caught in the next round. Gives up after a minute (a process stuck in the kernel cannot die sooner).
fn kill_tree(script: pid_t, ended: &mut Option<c_int>) {
    let deadline = now_ms() + 60_000;
    while now_ms() < deadline {
        for_each_child(0, |pid| {
            // SAFETY: signalling a child of this process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        });
        if !reap(script, ended) {
            return;
        }
        nap(10);
    }
}

/// Reaps every child that has ended, noting the script's status; `false` when no child is left.
fn reap(script: pid_t, ended: &mut Option<c_int>) -> bool {
    loop {
        let mut status = 0;
        // SAFETY: a non-blocking wait for any child.
        let reaped = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if reaped == script {
            *ended = Some(status);
        } else if reaped == 0 {
            return true;
        } else if reaped < 0 {
            return io::Error::last_os_error().raw_os_error() != Some(libc::ECHILD);
        }
    }
}

/// Sends `signal` to every descendant: the supervisor's children, their children, and so on (as far as a fixed
/// table holds; the kill rounds of [`kill_tree`] reach the rest).
fn signal_descendants(signal: c_int) {
    let mut found = [0 as pid_t; 1024];
    let mut count = 0;
    for_each_child(0, |pid| push(&mut found, &mut count, pid));
    let mut next = 0;
    while next < count {
        let parent = found[next];
        next += 1;
        for_each_child(parent, |pid| push(&mut found, &mut count, pid));
    }
    for pid in &found[..count] {
        // SAFETY: signalling a descendant of this process.
        unsafe { libc::kill(*pid, signal) };
    }
}

fn push(table: &mut [pid_t], count: &mut usize, pid: pid_t) {
    if *count < table.len() {
        table[*count] = pid;
        *count += 1;
    }
}

/// Calls `each` with every child of process `parent`'s main thread (`0`: of this process) as `/proc` lists them.
fn for_each_child(parent: pid_t, mut each: impl FnMut(pid_t)) {
    let mut path = [0u8; 64];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        for b in bytes {
            if len < path.len() - 1 {
                path[len] = *b;
                len += 1;
            }
        }
    };
    if parent == 0 {
        put(b"/proc/thread-self/children");
    } else {
        let mut digits = [0u8; 12];
        let shown = decimal(parent, &mut digits);
        put(b"/proc/");
        put(shown);
        put(b"/task/");
        put(shown);
        put(b"/children");
    }
    // SAFETY: `path` is NUL-terminated (it was zeroed and never filled to the end); the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return;
    }
    let mut buffer = [0u8; 512];
    let mut number: pid_t = 0;
    let mut in_number = false;
    loop {
        // SAFETY: reading into a stack buffer of the given length.
        let read = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
        if read <= 0 {
            break;
        }
        for b in &buffer[..read as usize] {
            if b.is_ascii_digit() {
                number = number.saturating_mul(10).saturating_add(pid_t::from(b - b'0'));
                in_number = true;
            } else if in_number {
                each(number);
                number = 0;
                in_number = false;
            }
        }
    }
    if in_number {
        each(number);
    }
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
}

/// `n` in decimal, written at the end of `digits`.
fn decimal(mut n: pid_t, digits: &mut [u8; 12]) -> &[u8] {
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || start == 0 {
            return &digits[start..];
        }
    }
}

/// Closes every file descriptor.
fn close_all() {
    // SAFETY: closing descriptors this process owns; nothing here uses them afterwards.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 { limit.rlim_cur.min(1 << 20) } else { 4096 };
        for fd in 0..max as c_int {
            libc::close(fd);
        }
    }
}

/// Exits with the script's exit code, or dies of the signal that killed it (without a core dump).
fn exit_as(ended: Option<c_int>) -> ! {
    // SAFETY: system calls only; `_exit` does not return.
    unsafe {
        match ended {
            Some(status) if libc::WIFEXITED(status) => libc::_exit(libc::WEXITSTATUS(status)),
            Some(status) if libc::WIFSIGNALED(status) => {
                let signal = libc::WTERMSIG(status);
                let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                libc::signal(signal, libc::SIG_DFL);
                let mut all: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&mut all);
                libc::sigprocmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
                libc::kill(libc::getpid(), signal);
                libc::_exit(128 + signal)
            }
            _ => libc::_exit(1),
        }
    }
}

/// Milliseconds on the monotonic clock.
fn now_ms() -> i64 {
    // SAFETY: `clock_gettime` writes the timespec it is given.
    unsafe {
        let mut now: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
        now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}

/// Sleeps `ms` milliseconds (a signal may cut it short).
fn nap(ms: i64) {
    let pause = libc::timespec { tv_sec: 0, tv_nsec: ms * 1_000_000 };
    // SAFETY: `nanosleep` reads the timespec it is given.
    unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits() {
        let mut digits = [0u8; 12];
        assert_eq!(decimal(0, &mut digits), b"0");
        assert_eq!(decimal(4_194_304, &mut digits), b"4194304");
    }

    #[test]
    fn lists_the_children_of_a_process() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        // A child is listed under the thread that forked it: this one.
        let mut own = Vec::new();
        for_each_child(0, |pid| own.push(pid));
        assert!(own.contains(&(child.id() as pid_t)), "{own:?}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
