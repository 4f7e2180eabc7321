//! `cairn man <DIR>`: man pages (roff, section 1) generated from the clap definitions — `cairn.1`, `roscoe.1`,
//! `deepwork.1` and one page per command under each (`roscoe-runs-list.1`, …) — written into a folder.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::completions::Named;

/// `cairn man` options.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  cairn man ~/.local/share/man/man1 && man roscoe-run")]
pub struct ManArgs {
    /// The folder to write the pages into (created if missing).
    pub dir: PathBuf,
}

/// Writes every page and prints their paths.
pub fn run(args: ManArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.dir).with_context(|| format!("could not create {}", args.dir.display()))?;
    let mut written = Vec::new();
    for named in [Named::Cairn, Named::Roscoe, Named::Deepwork] {
        let mut command = named.command();
        command.build();
        write_pages(&command, command.get_name(), &args.dir, &mut written)?;
    }
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}

/// The page of `command` as `name`, then those of its visible subcommands as `name-sub`.
fn write_pages(command: &clap::Command, name: &str, dir: &Path, written: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let path = dir.join(format!("{name}.1"));
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone().name(name.to_owned())).render(&mut page)?;
    std::fs::write(&path, page).with_context(|| format!("could not write {}", path.display()))?;
    written.push(path);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}
