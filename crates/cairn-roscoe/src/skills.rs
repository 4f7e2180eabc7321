//! Skill import (§15, seed "Skill import"): find Agent Skills (`SKILL.md` files with `name` + `description` front
//! matter) and turn one into a workflow in two steps, with the host running the model completion.
//!
//! [`discover`] walks the user-global skill roots, the project-local ones from `cwd` up to the project root, and
//! (unless `content_scan: false`) the project tree itself. [`convert`] reads a skill's bundle, builds the converter
//! prompt (`convert_skill`), and later takes the host's completion, extracts and validates the workflow, copies the
//! bundled `scripts/` into the workflow's asset folder and writes the file (`finalize_skill_conversion`).
//!
//! The facade methods live here, on [`Service`], beside the code they call. The user's home directories come in as a
//! [`UserDirs`] value; only [`UserDirs::from_env`] reads the environment.

mod convert;
mod discover;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

pub use convert::{ConvertRequest, Converted, FinalizeArgs, FinalizeRequest, Handback, Staged};
pub use crate::error::Stage;

use crate::actor::Actor;
use crate::error::Error;
use crate::front_matter;
use crate::scope::Scope;
use crate::service::Service;

/// The largest skill file read.
pub(crate) const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// The user's directories that hold global skill roots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserDirs {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CODEX_HOME` (Codex CLI's home; `~/.codex` when unset).
    pub codex_home: Option<PathBuf>,
}

impl UserDirs {
    /// `$HOME` and `$CODEX_HOME`, each ignored when unset or empty.
    pub fn from_env() -> UserDirs {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        UserDirs {
            home: var("HOME"),
            codex_home: var("CODEX_HOME"),
        }
    }
}

/// One skill found by `list_skills`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skill {
    /// The skill file (canonical path).
    pub path: PathBuf,
    /// Its front matter `name`.
    pub name: String,
    /// Its front matter `description`.
    pub description: String,
}

/// `list_skills`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillList {
    /// How many skills were found.
    pub count: usize,
    /// The skills, in discovery order.
    pub skills: Vec<Skill>,
}

impl Service {
    /// `list_skills`: every skill in the roots of `scope`, in discovery order, optionally filtered by `query`
    /// (case-insensitive, over name, description and path).
    pub fn list_skills(
        &self,
        scope: &Scope,
        user: &UserDirs,
        content_scan: bool,
        query: Option<&str>,
    ) -> SkillList {
        let query = query
            .map(str::to_lowercase)
            .filter(|q| !q.trim().is_empty());
        let skills: Vec<Skill> = discover::skills(user, scope, content_scan)
            .into_iter()
            .filter(|skill| {
                query.as_deref().is_none_or(|q| {
                    [
                        skill.name.as_str(),
                        skill.description.as_str(),
                        &skill.path.to_string_lossy(),
                    ]
                    .iter()
                    .any(|field| field.to_lowercase().contains(q))
                })
            })
            .collect();
        SkillList {
            count: skills.len(),
            skills,
        }
    }

    /// `convert_skill`: resolves the skill and returns the converter prompt for the host to run, or a `resolve`
    /// failure.
    pub fn convert_skill(
        &self,
        scope: &Scope,
        user: &UserDirs,
        request: &ConvertRequest,
    ) -> Result<Staged<Handback>, Error> {
        convert::handback(self, scope, user, request)
    }

    /// `finalize_skill_conversion`: re-reads the skill, extracts and validates the workflow from `completion`,
    /// copies `scripts/` and writes the workflow; a failure names its stage.
    pub fn finalize_skill_conversion(
        &self,
        scope: &Scope,
        request: &FinalizeRequest,
        actor: &Actor,
    ) -> Result<Staged<Converted>, Error> {
        convert::finalize(self, scope, request, actor)
    }
}

/// Reads `path` as a skill: a `.md` file up to 256 KiB whose front matter has non-empty `name` and `description`
/// strings and that is not a blog post. `path` is reported as given.
pub(crate) fn read_skill(path: &Path) -> Option<Skill> {
    let is_markdown = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md"));
    if !is_markdown {
        return None;
    }
    let text = String::from_utf8(crate::files::read_regular(path, MAX_SKILL_BYTES).ok()?).ok()?;
    let (front, _) = front_matter::split(&text)?;
    let text_of = |key: &str| {
        front
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let (name, description) = (text_of("name")?, text_of("description")?);
    if is_blog_post(path, &front) {
        return None;
    }
    Some(Skill {
        path: path.to_owned(),
        name,
        description,
    })
}

/// Jekyll / Hugo posts have `name` and `description` too; their publishing keys or folders give them away.
fn is_blog_post(path: &Path, front: &serde_json::Map<String, Value>) -> bool {
    const POST_KEYS: [&str; 5] = ["date", "layout", "permalink", "draft", "categories"];
    if POST_KEYS.iter().any(|k| front.contains_key(*k)) {
        return true;
    }
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.iter().any(|p| p == "_posts")
        || parts
            .windows(2)
            .any(|w| w[0] == "content" && w[1] == "posts")
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn a_skill_needs_name_and_description_front_matter() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a/SKILL.md");
        write(
            &ok,
            "---\nname: pdf\ndescription: Fill PDF forms\n---\n# PDF\n",
        );
        let skill = read_skill(&ok).unwrap();
        assert_eq!(
            (skill.name.as_str(), skill.description.as_str()),
            ("pdf", "Fill PDF forms")
        );

        for (file, text) in [
            ("no-desc.md", "---\nname: x\n---\nbody\n"),
            ("empty-desc.md", "---\nname: x\ndescription: \"  \"\n---\n"),
            ("no-front.md", "name: x\ndescription: y\n"),
            ("unclosed.md", "---\nname: x\ndescription: y\n"),
            (
                "post.md",
                "---\nname: x\ndescription: y\nlayout: post\n---\n",
            ),
            ("_posts/p.md", "---\nname: x\ndescription: y\n---\n"),
            ("content/posts/p.md", "---\nname: x\ndescription: y\n---\n"),
            ("notes.txt", "---\nname: x\ndescription: y\n---\n"),
        ] {
            let path = dir.path().join(file);
            write(&path, text);
            assert!(read_skill(&path).is_none(), "{file}");
        }
    }

    #[test]
    fn large_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.md");
        let mut text = String::from("---\nname: x\ndescription: y\n---\n");
        text.push_str(&"a".repeat(MAX_SKILL_BYTES as usize));
        write(&path, &text);
        assert!(read_skill(&path).is_none());
    }
}
