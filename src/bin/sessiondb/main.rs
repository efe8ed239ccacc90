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
            eprintln!("sessiondb: {}", message(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each said once: a cause whose text the message
/// already holds (SQLite's own message repeated by a wrapper) is left out.
fn message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}
