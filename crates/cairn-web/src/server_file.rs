//! `$CAIRN_HOME/server.json`: where a running `cairn serve` listens and which project roots it serves (`{ pid, port,
//! url, projects }`), so the `url` of every run result (`<base>/open/runs/<id>?project=…`) points at this server,
//! and a run of a project it does not serve says so (`urlNote`). Written when the server listens and removed at
//! shutdown if it still names this process; a file left by a killed server is ignored by readers (its pid is dead).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The file of one server.
#[derive(Debug)]
pub(crate) struct ServerFile {
    path: PathBuf,
}

impl ServerFile {
    /// Records that this process serves the project roots `projects` on `local`; failures are logged, never fatal.
    pub(crate) fn write(home: &Path, local: SocketAddr, projects: &[PathBuf]) -> ServerFile {
        let path = home.join("server.json");
        let url = format!("http://{local}");
        let body = json!({ "pid": std::process::id(), "port": local.port(), "url": url, "projects": projects });
        let written = std::fs::create_dir_all(home).and_then(|()| {
            let temp = home.join(format!(".server.json.{}", std::process::id()));
            std::fs::write(&temp, body.to_string())?;
            std::fs::rename(&temp, &path)
        });
        if let Err(error) = written {
            tracing::warn!("cannot write {}: {error}; run URLs will name the default address", path.display());
        }
        ServerFile { path }
    }

    /// Removes the file if it still names this process.
    pub(crate) fn remove(self) {
        let ours = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|v| v["pid"].as_u64() == Some(u64::from(std::process::id())));
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_names_this_process_and_goes_away_at_the_end() {
        let home = tempfile::tempdir().unwrap();
        let file = ServerFile::write(home.path(), "127.0.0.1:4321".parse().unwrap(), &[PathBuf::from("/srv/proj")]);
        let text = std::fs::read_to_string(home.path().join("server.json")).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["url"], "http://127.0.0.1:4321");
        assert_eq!(value["port"], 4321);
        assert_eq!(value["projects"], serde_json::json!(["/srv/proj"]));
        file.remove();
        assert!(!home.path().join("server.json").exists());
    }
}
