//! The `sessiondb` command line: one module per verb under `commands/`.

mod cli;
mod commands;
mod human;
mod output;
mod style;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    style::init(cli.color, cli.quiet);
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) if err.is::<output::NothingFound>() => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("sessiondb: {err:#}");
            ExitCode::FAILURE
        }
    }
}
