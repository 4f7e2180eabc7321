//! Who may do what, on every surface: the scopes a cairn token can hold, and the [`Access`] a call is made with.
//!
//! One token model serves every HTTP surface of `cairn serve` (docs/security.md has the table of which tool or route
//! needs which scope). The HTTP layer authenticates a request and puts its [`Access`] into the request's extensions;
//! an MCP server finds it there with [`Access::of`]. A call over stdio carries no HTTP request: it is the local user,
//! who started the server, and may do everything ([`Access::local`]). An HTTP request that reached a server without
//! an [`Access`] may do nothing, so a route mounted without the access layer fails closed.

use std::fmt;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// One scope a token may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Work items over MCP, reading (`mcp:read`).
    McpRead,
    /// Work items over MCP, changing (`mcp:write`).
    McpWrite,
    /// Read decisions data: spaces, documents, work items, evidence (`decisions:read`).
    DecisionsRead,
    /// Change decisions data (`decisions:write`).
    DecisionsWrite,
    /// Read roscoe workflows, runs and docs (`roscoe:read`).
    RoscoeRead,
    /// Write roscoe workflows: create, update, delete, move, rename, import skills (`roscoe:write`).
    RoscoeWrite,
    /// Start, advance, decide, cancel and retry roscoe runs (`roscoe:run`).
    RoscoeRun,
    /// Make the server run a `script` node: start or test a workflow that has one, or write one (`roscoe:exec`).
    RoscoeExec,
    /// Read DeepWork jobs, schemas and reviews (`deepwork:read`).
    DeepworkRead,
    /// Run DeepWork workflows and reviews (`deepwork:write`).
    DeepworkWrite,
    /// Manage accounts and tokens (`admin`).
    Admin,
    /// Read the server's metrics at `/metrics` (`metrics:read`).
    MetricsRead,
}

impl Scope {
    /// Every scope, in display order.
    pub const ALL: [Scope; 12] = [
        Scope::McpRead,
        Scope::McpWrite,
        Scope::DecisionsRead,
        Scope::DecisionsWrite,
        Scope::RoscoeRead,
        Scope::RoscoeWrite,
        Scope::RoscoeRun,
        Scope::RoscoeExec,
        Scope::DeepworkRead,
        Scope::DeepworkWrite,
        Scope::Admin,
        Scope::MetricsRead,
    ];

    /// Its name, as tokens and documents spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::McpRead => "mcp:read",
            Scope::McpWrite => "mcp:write",
            Scope::DecisionsRead => "decisions:read",
            Scope::DecisionsWrite => "decisions:write",
            Scope::RoscoeRead => "roscoe:read",
            Scope::RoscoeWrite => "roscoe:write",
            Scope::RoscoeRun => "roscoe:run",
            Scope::RoscoeExec => "roscoe:exec",
            Scope::DeepworkRead => "deepwork:read",
            Scope::DeepworkWrite => "deepwork:write",
            Scope::Admin => "admin",
            Scope::MetricsRead => "metrics:read",
        }
    }

    /// Parses one scope name; the error lists the names there are.
    pub fn parse(text: &str) -> Result<Scope, String> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text).ok_or_else(|| {
            format!("scope '{text}' is not one of {}", Scope::join(&Scope::ALL))
        })
    }

    /// Parses scopes separated by commas and/or spaces (at least one), sorted and de-duplicated.
    pub fn parse_list(text: &str) -> Result<Vec<Scope>, String> {
        let mut scopes = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(Scope::parse)
            .collect::<Result<Vec<_>, _>>()?;
        scopes.sort();
        scopes.dedup();
        if scopes.is_empty() {
            return Err("give at least one scope".into());
        }
        Ok(scopes)
    }

    /// `mcp:read, decisions:read`.
    pub fn join(scopes: &[Scope]) -> String {
        scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// The scopes this one grants besides itself: a write scope grants its read scope, `roscoe:run` grants
    /// `roscoe:read`, and `roscoe:exec` grants `roscoe:run`.
    fn implies(self) -> &'static [Scope] {
        match self {
            Scope::McpWrite => &[Scope::McpRead],
            Scope::DecisionsWrite => &[Scope::DecisionsRead],
            Scope::RoscoeWrite | Scope::RoscoeRun => &[Scope::RoscoeRead],
            Scope::RoscoeExec => &[Scope::RoscoeRun, Scope::RoscoeRead],
            Scope::DeepworkWrite => &[Scope::DeepworkRead],
            _ => &[],
        }
    }

    /// Whether holding `self` grants `wanted`.
    pub fn grants(self, wanted: Scope) -> bool {
        self == wanted || self.implies().contains(&wanted)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `held` grants every scope of `needed`.
pub fn holds_all(held: &[Scope], needed: &[Scope]) -> bool {
    needed.iter().all(|wanted| held.iter().any(|h| h.grants(*wanted)))
}

/// A refusal: `what` needs scopes the caller lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// The tool or route asked for.
    pub what: String,
    /// The scopes it needs.
    pub needed: Vec<Scope>,
    /// The scopes the caller holds.
    pub has: Vec<Scope>,
}

impl Denied {
    /// The scopes of `needed` the caller lacks.
    pub fn missing(&self) -> Vec<Scope> {
        self.needed.iter().copied().filter(|s| !holds_all(&self.has, &[*s])).collect()
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let has = if self.has.is_empty() { "none".to_owned() } else { Scope::join(&self.has) };
        write!(f, "{} needs scopes {}; this token has {has}", self.what, Scope::join(&self.needed))
    }
}

impl std::error::Error for Denied {}

/// The principal a call is made by and the scopes it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The principal's id (`prn_…`).
    pub principal_id: String,
    /// How results and logs name it: `Ada (person)`.
    pub name: String,
    /// The scopes its token holds, as granted.
    pub scopes: Vec<Scope>,
}

impl Access {
    /// The local user: whoever started a stdio server, or a browser or client of a loopback-only `cairn serve`
    /// that asks for no sign-in. May do everything.
    pub fn local() -> Access {
        Access { principal_id: "prn_local_person".into(), name: "local person".into(), scopes: Scope::ALL.to_vec() }
    }

    /// The access of an MCP call: the one the HTTP layer attached to its request, the local user's over stdio, and
    /// `None` (nothing allowed) for an HTTP request that carries none.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Access> {
        match context.extensions.get::<http::request::Parts>() {
            Some(parts) => parts.extensions.get::<Access>().cloned(),
            None => Some(Access::local()),
        }
    }

    /// Whether it holds `scope`, directly or through a scope that grants it.
    pub fn holds(&self, scope: Scope) -> bool {
        holds_all(&self.scopes, &[scope])
    }

    /// Ok when it holds every scope of `needed`, else the refusal naming `what`.
    pub fn require(&self, what: &str, needed: &[Scope]) -> Result<(), Denied> {
        if holds_all(&self.scopes, needed) {
            return Ok(());
        }
        Err(Denied { what: what.to_owned(), needed: needed.to_vec(), has: self.scopes.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_imply() {
        assert_eq!(Scope::parse_list("roscoe:exec, mcp:read mcp:read").unwrap(), vec![Scope::McpRead, Scope::RoscoeExec]);
        assert!(Scope::parse("root").unwrap_err().contains("roscoe:exec"));
        assert!(Scope::parse_list(" ").is_err());
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Ok(scope));
        }
        assert!(holds_all(&[Scope::RoscoeExec], &[Scope::RoscoeRun, Scope::RoscoeRead]));
        assert!(!holds_all(&[Scope::RoscoeRun], &[Scope::RoscoeExec]));
        assert!(!holds_all(&[Scope::RoscoeWrite], &[Scope::RoscoeRun]));
        assert!(!holds_all(&[Scope::Admin], &[Scope::RoscoeRead]));
    }

    #[test]
    fn a_refusal_names_what_is_needed_and_what_is_held() {
        let access = Access { principal_id: "prn_1".into(), name: "Ada (agent)".into(), scopes: vec![Scope::RoscoeRun] };
        assert!(access.require("advance_run", &[Scope::RoscoeRun]).is_ok());
        let denied = access.require("start_workflow", &[Scope::RoscoeExec]).unwrap_err();
        assert_eq!(denied.to_string(), "start_workflow needs scopes roscoe:exec; this token has roscoe:run");
        assert_eq!(denied.missing(), vec![Scope::RoscoeExec]);
    }
}
