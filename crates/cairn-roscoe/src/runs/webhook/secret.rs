//! Where a webhook's secret comes from: the server's environment variable its trigger names (`secret_env`), else
//! the `webhooks:` section of the global `roscoe.yaml` (`$CAIRN_HOME/roscoe.yaml`), a map of that same name to the
//! secret. Both are the operator's; a project's `roscoe.yaml` is never read for secrets, so whoever writes a project
//! cannot choose the key its webhooks are checked with. An empty secret counts as none.

use std::path::Path;

use serde_json::Value;

/// The secret named `name` on this server, or why there is none (worded for the operator, never holding a secret).
pub(super) fn find(home: &Path, name: &str) -> Result<Vec<u8>, String> {
    if let Some(secret) = std::env::var_os(name).filter(|v| !v.is_empty()) {
        return Ok(secret.into_encoded_bytes());
    }
    let missing = || {
        format!(
            "the server holds no secret for this webhook: set {name} in the environment of `cairn serve`, or under \
             `webhooks:` in the global roscoe.yaml ($CAIRN_HOME/roscoe.yaml)"
        )
    };
    let path = home.join("roscoe.yaml");
    let text = match crate::files::read_regular(&path, crate::sources::MAX_FILE_BYTES as u64) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| format!("{}: is not UTF-8 text", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(format!("{}: cannot be read ({e})", path.display())),
    };
    let doc = cairn_yaml::parse(&text).map_err(|e| format!("{}: not valid YAML: {e}", path.display()))?;
    match doc.value.get("webhooks") {
        None | Some(Value::Null) => Err(missing()),
        Some(Value::Object(secrets)) => match secrets.get(name) {
            Some(Value::String(secret)) if !secret.is_empty() => Ok(secret.clone().into_bytes()),
            Some(_) => Err(format!("{}: `webhooks.{name}` must be the secret, a non-empty string", path.display())),
            None => Err(missing()),
        },
        Some(_) => Err(format!(
            "{}: `webhooks` must be a mapping of secret names (ROSCOE_HOOK_…) to secrets",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_global_file_holds_secrets_by_name_and_the_environment_comes_first() {
        let home = tempfile::tempdir().unwrap();
        let name = "ROSCOE_HOOK_SECRET_RS_TEST";
        assert!(find(home.path(), name).unwrap_err().contains("set ROSCOE_HOOK_SECRET_RS_TEST in the environment"));
        let file = format!("webhooks:\n  {name}: from-file\n  OTHER: ''\n");
        std::fs::write(home.path().join("roscoe.yaml"), file).unwrap();
        assert_eq!(find(home.path(), name).unwrap(), b"from-file");
        assert!(find(home.path(), "OTHER").unwrap_err().contains("must be the secret, a non-empty string"));
        assert!(find(home.path(), "ROSCOE_HOOK_NONE").unwrap_err().contains("holds no secret"));
        std::fs::write(home.path().join("roscoe.yaml"), "webhooks: [a]\n").unwrap();
        assert!(find(home.path(), name).unwrap_err().contains("must be a mapping"));
        // The environment comes first (PATH stands for a variable the operator set).
        std::fs::write(home.path().join("roscoe.yaml"), "webhooks:\n  PATH: from-file\n").unwrap();
        let path = std::env::var_os("PATH").unwrap().into_encoded_bytes();
        assert_eq!(find(home.path(), "PATH").unwrap(), path);
    }
}
