//! cairn's home and its database are private to their owner whatever the umask: a fresh `$CAIRN_HOME` is `0700` and
//! `cairn.db` (with its `-wal` and `-shm`) `0600`; a home or database left open to others is tightened, with a log
//! line saying so.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// `cairn args…` on `home` under umask 022, with the default SQLite database.
fn cairn(home: &Path, args: &[&str]) -> std::process::Output {
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"umask 022; exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .env("CAIRN_HOME", home)
        .env_remove("CAIRN_DATABASE_URL")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

const CREATE: [&str; 9] = ["work", "token", "create", "--principal", "ada", "--kind", "person", "--scopes", "mcp:read"];

#[test]
fn a_fresh_home_and_its_database_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    cairn(&home, &CREATE);
    assert_eq!(mode(&home), 0o700, "the home");
    for file in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let path = home.join(file);
        if path.exists() {
            assert_eq!(mode(&path), 0o600, "{file}");
        }
    }
    assert_eq!(mode(&home.join("cairn.db")), 0o600);
}

#[test]
fn a_home_open_to_others_is_made_private_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    cairn(&home, &CREATE);
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(home.join("cairn.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let listed = cairn(&home, &["work", "token", "list"]);
    assert_eq!((mode(&home), mode(&home.join("cairn.db"))), (0o700, 0o600));
    let log = String::from_utf8_lossy(&listed.stderr);
    assert!(log.contains("was open to others (mode 755); made it private"), "{log}");
    assert!(log.contains("cairn.db was open to others (mode 644); made it private (mode 600)"), "{log}");
}
