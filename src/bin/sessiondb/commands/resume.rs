//! `sessiondb resume SESSION` and `sessiondb continue`.

use crate::cli::{ContinueArgs, ResumeArgs, ResumeView};
use crate::human;
use crate::output::{print_json, print_json_values};
use anyhow::Context;
use sessiondb::model::SessionRef;
use sessiondb::resume::{Interruption, Repair, RepairKind, ResumeOptions, Resumed};
use sessiondb::Db;
use std::io::Write;
use std::path::Path;

pub fn run_resume(db: &Path, args: ResumeArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    let session = store.resolve_session(&args.session)?;
    show(&store, db, &session, &args.view)
}

pub fn run_continue(db: &Path, args: ContinueArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    let (project, cwd) = match (args.project, args.cwd) {
        (Some(p), _) => (
            super::project_key(&p),
            super::project_directory(&p).map(std::path::PathBuf::from),
        ),
        (None, Some(dir)) => {
            let dir = super::absolute_dir(&dir)?;
            (super::project_key_of_dir(&dir)?, Some(dir))
        }
        (None, None) => {
            let dir = std::env::current_dir().context("cannot read the current directory")?;
            let dir = super::absolute_dir(&dir)?;
            (super::project_key_of_dir(&dir)?, Some(dir))
        }
    };
    let session = match store.continue_target(&project) {
        Err(sessiondb::Error::SessionNotFound(_)) => anyhow::bail!(
            "no session to continue in project {} (cwd {})",
            project,
            cwd.as_deref()
                .map_or_else(|| "unknown".to_owned(), |d| d.display().to_string())
        ),
        found => found?,
    };
    show(&store, db, &session, &args.view)
}

fn show(store: &Db, db: &Path, session: &SessionRef, view: &ResumeView) -> anyhow::Result<()> {
    let options = ResumeOptions {
        at: view.at.clone(),
        interactive: view.interactive,
        continue_interrupted: view.continue_interrupted,
        leaf_rule: view.leaf_rule.into(),
        model: view.model.clone(),
        cli_version: view.cli_version,
    };
    if view.api {
        return print_json_values(&store.resume_api_view(session, &options)?);
    }
    let resumed = store.resume(session, &options)?;
    if view.json {
        return print_json(&resumed);
    }
    // The title `sessions` shows: the catalog's.
    let title = store
        .session_info(session, None)
        .ok()
        .and_then(|info| info.title().map(str::to_owned));
    summary(&resumed, title.as_deref(), &super::shown(db))
}

/// The text summary: what the state is and what the repairs did, in words.
fn summary(r: &Resumed, title: Option<&str>, db: &str) -> anyhow::Result<()> {
    let mut out = crate::output::stdout();
    let records = r.messages.len() as u64;
    writeln!(out, "session   {}/{}", r.project, r.session_id)?;
    writeln!(
        out,
        "title     {}",
        human::one_line(title.unwrap_or("(untitled)"))
    )?;
    writeln!(out, "leaf      {}", r.leaf_uuid.as_deref().unwrap_or("-"))?;
    writeln!(out, "model     {}", r.model.as_deref().unwrap_or("-"))?;
    writeln!(
        out,
        "messages  {}, {} to send",
        human::plural(records, "record", "records"),
        human::plural(r.api_view().len() as u64, "API message", "API messages")
    )?;
    writeln!(out, "state     {}", interruption_words(r.interruption))?;
    if r.repairs.is_empty() {
        writeln!(out, "repairs   none")?;
    }
    for repair in &r.repairs {
        writeln!(out, "repair    {}", human::one_line(&repair_words(repair)))?;
    }
    if !r.subagents.is_empty() {
        writeln!(
            out,
            "subagents {}",
            human::plural(r.subagents.len() as u64, "sub-agent", "sub-agents")
        )?;
    }
    writeln!(out, "database  {db}")?;
    out.flush()?;
    Ok(())
}

/// How the conversation ended, in words.
fn interruption_words(state: Interruption) -> &'static str {
    match state {
        Interruption::None => "the last turn finished",
        Interruption::InterruptedPrompt => "interrupted: the last prompt got no reply",
        Interruption::InterruptedTurn => "interrupted in the middle of a turn",
    }
}

/// What a repair did, in words.
fn repair_words(repair: &Repair) -> String {
    let ids = |prefix: &str| {
        repair
            .detail
            .strip_prefix(prefix)
            .unwrap_or(&repair.detail)
            .to_owned()
    };
    match repair.kind {
        RepairKind::SyntheticToolResult => {
            format!("added a synthetic tool result for {}", ids("tool_use "))
        }
        RepairKind::Sentinel => {
            "added the reply \"No response requested.\" after the last prompt".to_owned()
        }
        RepairKind::InterruptedTurnRewound => format!(
            "{} of the unfinished last turn",
            ids("").replacen("dropped ", "dropped the ", 1)
        ),
        RepairKind::ContentReplacement => format!(
            "replaced the content of {} with its recorded preview",
            ids("")
        ),
        RepairKind::PermissionModeStripped => {
            format!(
                "removed an invalid permission mode ({})",
                ids("permissionMode ")
            )
        }
        RepairKind::ThinkingOnlyDropped => "dropped an orphaned thinking-only reply".to_owned(),
        RepairKind::WhitespaceOnlyDropped => "dropped a whitespace-only reply".to_owned(),
        RepairKind::UnansweredToolUseDropped => {
            "dropped an earlier reply whose tool calls were never answered".to_owned()
        }
    }
}
