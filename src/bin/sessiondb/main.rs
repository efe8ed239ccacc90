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
        // Claude Code's own refusal, word for word (scripts compare it).
        Err(err)
            if matches!(
                err.downcast_ref(),
                Some(sessiondb::Error::NoConversation(_))
            ) =>
        {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("sessiondb: {err:#}");
            ExitCode::FAILURE
        }
    }
}
