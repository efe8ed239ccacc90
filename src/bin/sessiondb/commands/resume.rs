//! `sessiondb resume SESSION` and `sessiondb continue`.

use crate::cli::{ContinueArgs, ResumeArgs, ResumeView};
use crate::output::print_json;
use anyhow::Context;
use sessiondb::model::SessionRef;
use sessiondb::resume::{ResumeOptions, Resumed};
use sessiondb::{query, Store};
use std::io::Write;
use std::path::Path;

pub fn run_resume(db: &Path, args: ResumeArgs) -> anyhow::Result<()> {
    let store = super::open(db)?;
    let session = query::resolve_session(&*store.reader()?, &args.session)?;
    show(&store, &session, &args.view)
}

pub fn run_continue(db: &Path, args: ContinueArgs) -> anyhow::Result<()> {
    let store = super::open(db)?;
    let project = match (args.project, args.cwd) {
        (Some(p), _) => super::project_key(&p),
        (None, Some(dir)) => super::project_key_of_dir(&dir)?,
        (None, None) => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            super::project_key_of_dir(&cwd)?
        }
    };
    let session = store.continue_target(&project)?;
    show(&store, &session, &args.view)
}

fn show(store: &Store, session: &SessionRef, view: &ResumeView) -> anyhow::Result<()> {
    let options = ResumeOptions {
        at: view.at.clone(),
        interactive: view.interactive,
        continue_interrupted: view.continue_interrupted,
        leaf_rule: view.leaf_rule.into(),
        model: view.model.clone(),
    };
    let resumed = store.resume(session, &options)?;
    if view.api {
        return print_json(&resumed.into_api_view());
    }
    if view.json {
        return print_json(&resumed);
    }
    summary(&resumed)
}

fn summary(r: &Resumed) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let title = ["custom_title", "ai_title", "summary"]
        .iter()
        .find_map(|k| r.metadata.get(*k).and_then(|v| v.as_str()))
        .unwrap_or("(untitled)");
    writeln!(out, "session   {}/{}", r.project, r.session_id)?;
    writeln!(out, "title     {title}")?;
    writeln!(out, "leaf      {}", r.leaf_uuid.as_deref().unwrap_or("-"))?;
    writeln!(out, "model     {}", r.model.as_deref().unwrap_or("-"))?;
    writeln!(
        out,
        "messages  {} records, {} API messages",
        r.messages.len(),
        r.api_view().len()
    )?;
    writeln!(out, "state     {:?}", r.interruption)?;
    if r.repairs.is_empty() {
        writeln!(out, "repairs   none")?;
    }
    for repair in &r.repairs {
        writeln!(
            out,
            "repair    {:?} {} {}",
            repair.kind,
            repair.uuid.as_deref().unwrap_or("-"),
            repair.detail
        )?;
    }
    if !r.subagents.is_empty() {
        writeln!(out, "subagents {}", r.subagents.len())?;
    }
    Ok(())
}
