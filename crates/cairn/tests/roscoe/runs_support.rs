//! Helpers for the run tests: workflows written straight into a project's repo source, and waiting for files and
//! processes that a script leaves behind.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Writes `<root>/.roscoe/workflows/<id>.yaml`.
pub fn write_workflow(root: &Path, id: &str, yaml: &str) {
    let dir = root.join(".roscoe/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{id}.yaml")), yaml).unwrap();
}

/// Waits (up to a minute) until `check` returns something.
pub async fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether process `pid` still exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

/// The pending step's field, as text.
pub fn pending<'v>(result: &'v Value, field: &str) -> &'v str {
    result["pendingStep"][field].as_str().unwrap_or_else(|| panic!("no pendingStep.{field} in {result}"))
}
