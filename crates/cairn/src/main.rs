//! The `cairn` binary: the program's entry ([`cairn::entry`]), which picks the command set from the name it was
//! started as.

fn main() -> std::process::ExitCode {
    cairn::entry::run()
}
