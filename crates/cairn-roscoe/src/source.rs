//! Which of the two workflow sources a file lives in: a project's repo source or the user's global source
//! (`sources.rs` says where each is on disk).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a workflow file lives. Orders repo before global.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `<project root>/.roscoe/workflows/`.
    Repo,
    /// `<cairn home>/workflows/`.
    Global,
}

impl Source {
    /// `"repo"` or `"global"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Repo => "repo",
            Source::Global => "global",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A source name that is neither `repo` nor `global`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSource(pub String);

impl fmt::Display for UnknownSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "source '{}' is unknown; use \"repo\" or \"global\"", self.0)
    }
}

impl FromStr for Source {
    type Err = UnknownSource;

    fn from_str(s: &str) -> Result<Self, UnknownSource> {
        match s {
            "repo" => Ok(Source::Repo),
            "global" => Ok(Source::Global),
            other => Err(UnknownSource(other.to_owned())),
        }
    }
}
