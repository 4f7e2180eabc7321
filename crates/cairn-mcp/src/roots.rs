//! The client's workspace root, asked for with `roots/list`.
//!
//! Used when a server is started without an explicit project path: each call asks the client again (the workspace
//! can change between calls) and takes the first `file:` root. A client without the roots capability, an error, a
//! slow answer or no `file:` root all mean "no root": the caller falls back to its launch directory.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// How long to wait for the client's answer before falling back.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// The first `file:` root the client reports, as an absolute path.
///
/// Roots are deprecated in the newest protocol revision, but the clients DeepWork users run (Claude Code among them)
/// still send them, and DeepWork's root resolution depends on them.
#[allow(deprecated)]
pub async fn first_file_root(context: &RequestContext<RoleServer>) -> Option<PathBuf> {
    let supports_roots = context
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some());
    if !supports_roots {
        return None;
    }
    let answer = tokio::time::timeout(ROOTS_TIMEOUT, context.peer.list_roots()).await;
    let roots = match answer {
        Ok(Ok(result)) => result.roots,
        Ok(Err(err)) => {
            tracing::debug!("roots/list failed: {err}");
            return None;
        }
        Err(_) => {
            tracing::debug!("roots/list timed out");
            return None;
        }
    };
    roots.iter().find_map(|root| file_uri_to_path(&root.uri))
}

/// `file:///a/b%20c` → `/a/b c`; `None` for other schemes or relative paths.
pub fn file_uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file:")?;
    let rest = match rest.strip_prefix("//") {
        Some(after) => {
            let slash = after.find('/')?;
            let host = &after[..slash];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return None;
            }
            &after[slash..]
        }
        None => rest,
    };
    let path = PathBuf::from(percent_decode(rest)?);
    path.is_absolute().then_some(path)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_file_uris() {
        assert_eq!(file_uri_to_path("file:///a/b%20c"), Some(PathBuf::from("/a/b c")));
        assert_eq!(file_uri_to_path("file://localhost/x"), Some(PathBuf::from("/x")));
        assert_eq!(file_uri_to_path("file:/x"), Some(PathBuf::from("/x")));
        assert_eq!(file_uri_to_path("file://host/x"), None);
        assert_eq!(file_uri_to_path("https://x/y"), None);
        assert_eq!(file_uri_to_path("file:///bad%zz"), None);
    }
}
