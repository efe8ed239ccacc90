//! The `sessiondb` command line: one module per verb under `commands/`.

mod cli;
#[cfg(feature = "mcp")]
mod cli_mcp;
#[cfg(feature = "pick")]
mod cli_pick;
mod cli_setup;
mod cli_usage;
mod commands;
mod human;
mod listing_json;
mod output;
mod style;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::parse();
    style::init(cli.global.color, cli.global.quiet);
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
        Err(err) if err.is::<output::NothingFound>() => ExitCode::FAILURE,
        Err(err) if err.is::<output::Usage>() => {
            eprintln!("sessiondb: {err}");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("sessiondb: {}", message(&err));
            exit_code(&err)
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
