//! The `sessiondb` command line: one module per verb under `commands/`.

mod cli;
mod commands;
mod output;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("sessiondb: {err:#}");
            exit_code(&err)
        }
    }
}

/// 2 for a name that cannot be stored (a usage error, like clap's), 1 for anything else.
fn exit_code(err: &anyhow::Error) -> ExitCode {
    let bad_name = err.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<sessiondb::Error>(),
            Some(sessiondb::Error::BadName(_))
        )
    });
    if bad_name {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}
