//! One module per verb; `run` dispatches.

mod agents;
mod append;
mod backup;
mod capture;
mod check;
mod compact;
mod config;
mod delete;
mod export;
mod fork;
mod hooks;
mod import;
mod info;
mod launch;
#[cfg(feature = "mcp")]
mod mcp;
pub(crate) mod messages;
#[cfg(feature = "pick")]
mod pick;
mod reindex;
mod rename;
mod restore;
mod resume;
mod search;
mod serve;
mod sessions;
mod stats;
mod statusline;
mod sync;
mod tag;
mod watch;

use crate::cli::{Cli, Command};
use anyhow::Context;
use sessiondb::Store;
use std::path::PathBuf;

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    // These need no database (completions, man, config), or never the default one: capture
    // must not fail before it can log, and hooks name --db in the hook only when it was given.
    let cli = match cli.command {
        Command::Completions(args) => return completions(args.shell),
        Command::Man => return man(),
        Command::Capture(args) => return capture::run(cli.global.db, &args),
        Command::Hooks(args) => return hooks::run(cli.global.db, args),
        Command::Config(args) => return config::run(args),
        Command::Sync(args) => return sync::run(cli.global.db, args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => return mcp::run(cli.global.db, args),
        command => Cli { command, ..cli },
    };
    let db = database_path(cli.global.db)?;
    match cli.command {
        Command::Import(args) => import::run(&db, args),
        Command::Export(args) => export::run(&db, args),
        Command::Sessions(args) => sessions::run(&db, args),
        Command::Info(args) => info::run(&db, args),
        Command::Messages(args) => messages::run(&db, args),
        Command::Agents(args) => agents::run(&db, args),
        Command::Rename(args) => rename::run(&db, args),
        Command::Tag(args) => tag::run(&db, args),
        Command::Delete(args) => delete::run(&db, args),
        Command::Search(args) => search::run(&db, args),
        Command::Reindex(args) => reindex::run(&db, args),
        Command::Backup(args) => backup::run(&db, args),
        Command::Check(args) => check::run(&db, args),
        Command::Compact(args) => compact::run(&db, args),
        Command::Resume(args) => resume::run_resume(&db, args),
        Command::Continue(args) => resume::run_continue(&db, args),
        Command::Fork(args) => fork::run(&db, args),
        Command::Append(args) => append::run(&db, args),
        Command::Serve(args) => serve::run(&db, args),
        Command::Restore(args) => restore::run(&db, args),
        Command::Launch(args) => launch::run(&db, args),
        Command::Watch(args) => watch::run(&db, args),
        Command::Stats(args) => stats::run(&db, args),
        Command::Statusline(args) => statusline::run(&db, args),
        #[cfg(feature = "pick")]
        Command::Pick(args) => pick::run(&db, args),
        Command::Completions(_)
        | Command::Man
        | Command::Capture(_)
        | Command::Hooks(_)
        | Command::Config(_)
        | Command::Sync(_) => unreachable!("handled above"),
        #[cfg(feature = "mcp")]
        Command::Mcp(_) => unreachable!("handled above"),
    }
}

/// `sessiondb completions SHELL`: clap_complete's script for the whole grammar.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<()> {
    use clap::CommandFactory;
    // Into memory first: clap_complete panics when a write fails (`| head`).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "sessiondb", &mut script);
    let mut out = crate::output::stdout();
    std::io::Write::write_all(&mut out, &script)?;
    std::io::Write::flush(&mut out)?;
    Ok(())
}

/// `sessiondb man`: the manual page in roff, every verb in it (clap_mangen's own page
/// refers to a page per verb, `sessiondb-import(1)`, that nothing ships).
fn man() -> anyhow::Result<()> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let man = clap_mangen::Man::new(cli.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    page.extend_from_slice(b".SH COMMANDS\n");
    for verb in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        man_verb(&mut page, "sessiondb", verb)?;
    }
    man.render_version_section(&mut page)?;
    let mut out = crate::output::stdout();
    std::io::Write::write_all(&mut out, &page)?;
    std::io::Write::flush(&mut out)?;
    Ok(())
}

/// One verb of the manual page (and its own verbs, `hooks install`): a subsection with its
/// synopsis, description and options.
fn man_verb(page: &mut Vec<u8>, parent: &str, verb: &clap::Command) -> anyhow::Result<()> {
    let name = format!("{parent} {}", verb.get_name());
    page.extend_from_slice(format!(".SS \"{name}\"\n").as_bytes());
    let man = clap_mangen::Man::new(verb.clone().bin_name(&name));
    let mut part = Vec::new();
    man.render_synopsis_section(&mut part)?;
    man.render_description_section(&mut part)?;
    man.render_options_section(&mut part)?;
    // The sections' headings become paragraphs inside the subsection.
    for line in String::from_utf8_lossy(&part).lines() {
        if line.starts_with(".SH ") {
            page.extend_from_slice(b".PP\n");
        } else {
            page.extend_from_slice(line.as_bytes());
            page.push(b'\n');
        }
    }
    for inner in verb.get_subcommands().filter(|c| !c.is_hide_set()) {
        man_verb(page, &name, inner)?;
    }
    Ok(())
}

/// Whether `--db` names a PostgreSQL team store rather than a SQLite file.
pub fn is_team_store(db: &std::path::Path) -> bool {
    db.to_str().is_some_and(sessiondb::pg::url::is_postgres_url)
}

/// Opens an existing store of either kind for a verb that changes it.
pub fn open_db_existing(db: &std::path::Path) -> anyhow::Result<sessiondb::Db> {
    if is_team_store(db) {
        let url = db.to_str().expect("a team store URL is UTF-8");
        return Ok(sessiondb::pg::PgStore::connect(url)?.into());
    }
    Ok(open_existing(db)?.into())
}

/// Whether a change is written back to Claude Code's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteBack {
    /// `--write-back` (or the config): write back, or change nothing and say why.
    Required,
    /// `--no-write-back` (or the config): only the database.
    Off,
    /// The default of `rename`, `tag` and `fork`: write back when the session's file is
    /// there and holds what is stored; otherwise (a file Claude Code wrote to since, say)
    /// change the database alone with a warning.
    WhenPresent,
}

/// The write-back a verb runs with: the flags, else the config's `write_back`, else
/// `default`.
pub fn write_back_mode(
    flags: &crate::cli::WriteBackArgs,
    default: WriteBack,
) -> anyhow::Result<WriteBack> {
    if flags.write_back || flags.no_write_back {
        return Ok(if flags.write_back {
            WriteBack::Required
        } else {
            WriteBack::Off
        });
    }
    let config = match sessiondb::config::config_path() {
        Some(path) => sessiondb::config::load(&path)?,
        None => sessiondb::config::Config::default(),
    };
    Ok(match (config.write_back_set, config.write_back) {
        (true, true) => WriteBack::Required,
        (true, false) => WriteBack::Off,
        (false, _) => default,
    })
}

/// The write-back target of a change, when one is wanted: only a SQLite store writes back
/// to Claude Code's files on this machine (a team store's session may come from another).
pub fn write_back_target(
    store: &sessiondb::Db,
    session: &sessiondb::model::SessionRef,
    mode: WriteBack,
) -> anyhow::Result<Option<sessiondb::write_back::Target>> {
    match (mode, store.writes_back()) {
        (WriteBack::Off, _) | (WriteBack::WhenPresent, false) => Ok(None),
        (WriteBack::Required, true) => Ok(Some(store.write_back_check(session)?)),
        (WriteBack::WhenPresent, true) => {
            if !store.write_back_file_present(session)? {
                return Ok(None);
            }
            match store.write_back_check(session) {
                Ok(target) => Ok(Some(target)),
                Err(e) => {
                    crate::style::warn(format_args!(
                        "{e} (the change is made in the database only; --no-write-back \
                         silences this)"
                    ));
                    Ok(None)
                }
            }
        }
        (WriteBack::Required, false) => {
            crate::style::warn(format_args!(
                "not written back: a team store does not write to Claude Code's files"
            ));
            Ok(None)
        }
    }
}

/// What to call the database in output: a file's path, or a URL without its password.
pub fn shown(db: &std::path::Path) -> String {
    match db.to_str() {
        Some(url) if sessiondb::pg::url::is_postgres_url(url) => sessiondb::pg::url::redact(url),
        _ => db.display().to_string(),
    }
}

/// Ends a read verb's use of its store (see [`sessiondb::Db::close_for_exit`]).
pub fn leave_open(store: sessiondb::Db) {
    store.close_for_exit();
}

/// Opens the store of either kind for a verb that may create it (`import`).
pub fn open_db(db: &std::path::Path) -> anyhow::Result<sessiondb::Db> {
    if is_team_store(db) {
        let url = db.to_str().expect("a team store URL is UTF-8");
        return Ok(sessiondb::pg::PgStore::connect(url)?.into());
    }
    Ok(open(db)?.into())
}

/// Opens an existing store of either kind for a verb that only reads.
pub fn open_db_read(db: &std::path::Path) -> anyhow::Result<sessiondb::Db> {
    if is_team_store(db) {
        let url = db.to_str().expect("a team store URL is UTF-8");
        return Ok(sessiondb::pg::PgStore::connect(url)?.into());
    }
    Ok(open_read(db)?.into())
}

fn database_path(flag: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let db = flag.or_else(sessiondb::paths::default_database).context(
        "no database path: pass --db PATH or set SESSIONDB_PATH (HOME is not set either)",
    )?;
    refuse_libpq_string(&db)?;
    Ok(db)
}

/// Refuses a libpq `key=value` connection string given as `--db` (or `SESSIONDB_PATH`):
/// it is not a file's name, and it is not repeated, since it may hold a password.
pub fn refuse_libpq_string(db: &std::path::Path) -> anyhow::Result<()> {
    if let Some(keyword) = db.to_str().and_then(sessiondb::pg::url::libpq_keyword) {
        anyhow::bail!(
            "--db (or SESSIONDB_PATH) looks like a libpq key=value connection string (it \
             starts with `{keyword}=`; the rest is not shown, it may hold a password), which \
             sessiondb does not read. Name a team store by URL, \
             postgres://USER@HOST:PORT/DBNAME?sslmode=require, and give the password in \
             PGPASSWORD or ~/.pgpass, not on the command line, where `ps` shows it to every \
             user of the machine"
        );
    }
    Ok(())
}

/// Refuses a team store URL where only a SQLite file will do (`capture --checkpoint`, which
/// copies a SQLite WAL): a URL must never be taken for a file name and created, with its
/// password in the name.
pub fn sqlite_only(db: &std::path::Path, verb: &str) -> anyhow::Result<()> {
    if is_team_store(db) {
        return Err(sessiondb::Error::Invalid(format!(
            "`{verb}` works on a SQLite store file, and {} is a team store",
            shown(db)
        ))
        .into());
    }
    Ok(())
}

/// Opens the store for a verb that may create it (`import`, `append`, `serve`).
pub fn open(db: &std::path::Path) -> anyhow::Result<Store> {
    named(db, Store::open(db))
}

/// Opens an existing store for a verb that changes it (`rename`, `tag`, `fork`, `delete`,
/// `reindex`): nothing is created at a path that holds no database.
pub fn open_existing(db: &std::path::Path) -> anyhow::Result<Store> {
    named(db, Store::open_existing(db))
}

/// Opens an existing store for a verb that only reads: one connection, no thread, read-only
/// when the file or its folder is; nothing is created at a path that holds no database.
pub fn open_read(db: &std::path::Path) -> anyhow::Result<Store> {
    named(db, Store::open_read(db))
}

/// An opening error, named once: the errors that already name the file pass unchanged.
fn named(db: &std::path::Path, opened: sessiondb::Result<Store>) -> anyhow::Result<Store> {
    use sessiondb::Error;
    opened.map_err(|e| match e {
        Error::NoDatabase { .. }
        | Error::CannotOpen { .. }
        | Error::NotADatabase { .. }
        | Error::ReadOnly { .. }
        | Error::SchemaTooNew { .. }
        | Error::Io { .. } => anyhow::Error::new(e),
        other => anyhow::Error::new(other).context(format!("cannot open {}", db.display())),
    })
}

/// A `--project` value as a project folder name: paths are sanitized as Claude Code does.
pub fn project_key(arg: &str) -> String {
    sessiondb::paths::project_argument(arg).0
}

/// The project folder Claude Code uses for a directory: its real path, sanitized, or the
/// name `CLAUDE_CODE_PROJECT_DIR_NAME` gives (`paths::project_folder_for`). A directory
/// that does not exist on this machine (a session made elsewhere) is taken as written, made
/// absolute: only its sanitized form matters.
pub fn project_key_of_dir(dir: &std::path::Path) -> anyhow::Result<String> {
    Ok(sessiondb::paths::project_folder_for(
        &absolute_dir(dir)?.to_string_lossy(),
    ))
}

/// `dir` resolved as Claude Code resolves its cwd: the real path when it exists, else the
/// path made absolute with `.` and `..` taken out.
pub fn absolute_dir(dir: &std::path::Path) -> anyhow::Result<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(dir) {
        return Ok(real);
    }
    let joined = if dir.is_absolute() {
        dir.to_owned()
    } else {
        std::env::current_dir()
            .context("cannot read the current directory")?
            .join(dir)
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// A `--project` path (not a folder name), as the SDK's `directory` argument: the `cwd` the
/// listing reports for sessions that record none.
pub fn project_directory(arg: &str) -> Option<String> {
    sessiondb::paths::project_argument(arg).1
}

/// Makes `change` to `session` in the database and, when the flags or the config ask for it,
/// writes it back to Claude Code's file: the file is checked before the change (a file that
/// cannot take it stops the change before anything is stored) and the lines the change
/// added are appended after it.
pub fn with_write_back<T>(
    store: &sessiondb::Db,
    session: &sessiondb::model::SessionRef,
    mode: WriteBack,
    change: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let target = write_back_target(store, session, mode)?;
    let changed = change()?;
    if let Some(target) = target {
        store.write_back_apply(&target)?;
        crate::style::note(format_args!("written back to {}", target.path.display()));
    }
    Ok(changed)
}
