//! What a roscoe command works with: the facades on the database and the home, the scope its options name (`--cwd`
//! DIR, `--global`, or the current directory's repository), how to print ([`Output`]) and who acts (the local user,
//! via `cli`, who may run scripts).

use std::path::Path;

use anyhow::Context as _;
use cairn_roscoe::{Actor, Runs, Scope, Service};
use cairn_store::Store;

use super::GlobalOptions;
use super::exit::Exit;
use super::output::Output;
use crate::home::cairn_home;

/// The facades, scope and output of one command.
#[derive(Debug, Clone)]
pub(super) struct Ctx {
    pub(super) runs: Runs,
    pub(super) service: Service,
    pub(super) scope: Scope,
    pub(super) out: Output,
    pub(super) actor: Actor,
    pub(super) options: GlobalOptions,
}

impl Ctx {
    /// Resolves the scope, then opens the database.
    pub(super) async fn open(options: &GlobalOptions) -> anyhow::Result<Ctx> {
        let scope = scope(options)?;
        let home = cairn_home();
        let store = open_store(&home, options.database_url.clone()).await?;
        let service = Service::new(&home);
        Ok(Ctx {
            runs: Runs::new(store, service.clone()),
            service,
            scope,
            out: Output::new(options),
            actor: Actor::local("cli"),
            options: options.clone(),
        })
    }

    /// This context, showing scripts' lines as they are printed when `verbose` (`--verbose`).
    pub(super) fn verbose(&self, verbose: bool) -> Ctx {
        let mut ctx = self.clone();
        ctx.out.verbose = verbose;
        ctx
    }

    /// The scope options to repeat in a command the user is told to run: `--global`, `--cwd ROOT` when `--cwd` was
    /// given, else nothing (the current directory).
    pub(super) fn scope_flags(&self) -> String {
        match (&self.scope, &self.options.cwd) {
            (Scope::Global, _) => " --global".to_owned(),
            (Scope::Project { root, .. }, Some(_)) => format!(" --cwd {}", shell_word(&root.display().to_string())),
            (Scope::Project { .. }, None) => String::new(),
        }
    }
}

/// The database at `url`, or the home's SQLite file.
pub(super) async fn open_store(home: &Path, url: Option<String>) -> anyhow::Result<Store> {
    let url = url.unwrap_or_else(|| Store::default_url(home));
    Store::open(&url).await.with_context(|| format!("could not open the database {url}"))
}

/// The scope `options` name; a usage error naming what is wrong with `--cwd`.
fn scope(options: &GlobalOptions) -> anyhow::Result<Scope> {
    if options.global {
        return Ok(Scope::Global);
    }
    let here = std::env::current_dir().context("the current directory is not accessible; pass --cwd or --global")?;
    let dir = match &options.cwd {
        Some(dir) => here.join(dir),
        None => here,
    };
    Scope::project(&dir.to_string_lossy()).map_err(|error| match &error {
        cairn_roscoe::Error::CwdInvalid { reason, .. } => Exit::usage(format!(
            "{} {reason}; pass --cwd with an existing directory, or --global ({})",
            dir.display(),
            error.as_code()
        ))
        .into(),
        _ => Exit::from_facade(&error).into(),
    })
}

/// `text` as one shell word (quoted when it needs to be).
pub(super) fn shell_word(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-=:,@+".contains(c)) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
