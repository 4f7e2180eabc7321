//! `cairn completions <shell>`: the shell completion script (bash, zsh, fish, powershell) of `cairn`, `roscoe` or
//! `deepwork`, generated from the clap definitions, on stdout.

use clap::{Args, CommandFactory, ValueEnum};
use clap_complete::Shell;

use crate::entry::Program;

/// `cairn completions` options.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  cairn completions bash > ~/.local/share/bash-completion/completions/cairn\n  cairn completions zsh --program roscoe > ~/.zfunc/_roscoe")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
    /// The program to complete: the name the commands are typed under.
    #[arg(long, value_enum, default_value_t = Named::Cairn)]
    pub program: Named,
}

/// The names the program is installed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Named {
    /// `cairn …`.
    Cairn,
    /// `roscoe …`.
    Roscoe,
    /// `deepwork …`.
    Deepwork,
}

impl Named {
    /// The program's clap command.
    pub fn command(self) -> clap::Command {
        match self.program() {
            Program::Cairn => crate::Cli::command(),
            Program::Roscoe => crate::roscoe_cli::RoscoeCli::command(),
            Program::Deepwork => crate::deepwork_cli::DeepworkCli::command(),
        }
    }

    fn program(self) -> Program {
        match self {
            Named::Cairn => Program::Cairn,
            Named::Roscoe => Program::Roscoe,
            Named::Deepwork => Program::Deepwork,
        }
    }
}

/// Prints the completion script (all of it, or as much as a reader that stops early takes).
pub fn run(args: CompletionsArgs) -> std::io::Result<()> {
    let mut command = args.program.command();
    let name = command.get_name().to_owned();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    match std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        outcome => outcome,
    }
}
