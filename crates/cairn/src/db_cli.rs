//! `cairn db …`: the database itself. `migrate` applies the embedded migrations that are pending and says which it
//! applied; several nodes may run it at once (they take turns under the database's migration lock, and the later
//! ones find nothing to do). `cairn serve` and the MCP commands also migrate when they open the database, so this is
//! for deployments that migrate as a separate step. `backup FILE` writes a consistent copy of a SQLite database while
//! servers keep writing, and `check` runs its integrity checks (PostgreSQL has `pg_dump` and `pg_amcheck` for both).

use anyhow::Context;
use cairn_store::Store;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::home::cairn_home;

/// `cairn db` options and command.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// Database URL (`sqlite://PATH` or `postgres://…`). Default: the SQLite file `$CAIRN_HOME/cairn.db`.
    #[arg(long, env = "CAIRN_DATABASE_URL", value_name = "URL", global = true)]
    pub database_url: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: DbCommand,
}

/// db commands.
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Apply pending migrations; prints what was applied (nothing when the database is up to date).
    Migrate {
        /// Print one JSON object (`{"applied": [{"version", "description"}], "version"}`) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a consistent copy of the SQLite database to FILE (a new file) while servers keep writing: it holds every
    /// write committed before the copy began. PostgreSQL: use pg_dump.
    Backup {
        /// The copy to write; it must not exist yet.
        file: std::path::PathBuf,
        /// Print one JSON object (`{"backup": FILE}`) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check the SQLite database's structure and foreign keys; exits 1 and lists the problems when there are any.
    /// PostgreSQL: use pg_amcheck.
    Check {
        /// Print one JSON object (`{"ok": bool, "problems": [...]}`) instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a db command.
pub async fn run(args: DbArgs) -> anyhow::Result<()> {
    let url = args.database_url.unwrap_or_else(|| Store::default_url(&cairn_home()));
    match args.command {
        DbCommand::Migrate { json } => {
            let store = Store::connect(&url).await.context("cairn db migrate needs its database")?;
            let applied = store.migrate().await;
            store.close().await;
            let applied = applied.context("cairn db migrate")?;
            let version = Store::known_migrations().last().map_or(0, |(version, _)| *version);
            if json {
                let applied: Vec<_> =
                    applied.iter().map(|m| json!({"version": m.version, "description": m.description})).collect();
                println!("{}", json!({"applied": applied, "version": version}));
            } else {
                for migration in &applied {
                    println!("applied {} {}", migration.version, migration.description);
                }
                match applied.len() {
                    0 => println!("the database is up to date (version {version})"),
                    n => println!("applied {n} migration(s); the database is at version {version}"),
                }
            }
            Ok(())
        }
        DbCommand::Backup { file, json } => {
            let store = Store::connect(&url).await.context("cairn db backup needs its database")?;
            let copied = store.backup(&file).await;
            store.close().await;
            copied.context("cairn db backup")?;
            if json {
                println!("{}", json!({"backup": file}));
            } else {
                println!("wrote a consistent copy of the database to {}", file.display());
            }
            Ok(())
        }
        DbCommand::Check { json } => {
            let store = Store::connect(&url).await.context("cairn db check needs its database")?;
            let checked = store.check().await;
            store.close().await;
            let checked = checked.context("cairn db check")?;
            if json {
                println!("{}", json!({"ok": checked.problems.is_empty(), "problems": checked.problems}));
            } else if checked.problems.is_empty() {
                println!("ok: the database's structure and foreign keys are sound");
            } else {
                for problem in &checked.problems {
                    println!("{problem}");
                }
            }
            if checked.problems.is_empty() {
                return Ok(());
            }
            anyhow::bail!("the database has {} problem(s); restore the last good backup (docs/operations.md)", checked.problems.len())
        }
    }
}
