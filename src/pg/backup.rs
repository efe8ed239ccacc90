//! `sessiondb --db postgres://… backup OUT`: a consistent copy of a team store, made by
//! PostgreSQL's own `pg_dump` in its custom format (read back with `pg_restore`).
//!
//! `pg_dump` reads the whole database in one repeatable-read snapshot, so the copy holds
//! exactly the transactions committed before it began while writers go on, as SQLite's
//! online backup does for a file. It is the server's tool for the job: it knows every
//! object of the database (tables, indexes, the migration history, column compression), so
//! a restore gives back the same store, not a re-import of its sessions.
//!
//! The password never reaches `pg_dump`'s command line (which other users of the machine
//! can read): it gets the URL without it and the password in `PGPASSWORD`, and
//! `--no-password` so that it fails instead of prompting. As with the SQLite backup, the
//! copy is written to a temporary file (mode 0600) beside OUT, synced, and renamed over OUT
//! only when `pg_dump` succeeded; on failure nothing is left.

use super::url::{redact, without_password};
use super::PgStore;
use crate::error::{Error, Result};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a team store's backup wrote.
#[derive(Debug, Clone, Serialize)]
pub struct PgBackupReport {
    /// The database copied: its URL without the password.
    pub source: String,
    /// The copy (`pg_dump --format=custom`).
    pub destination: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The `pg_dump` that made it (`$PG_DUMP`, else `pg_dump` from `PATH`).
    pub pg_dump: String,
    /// Temporary files of earlier backups killed before their rename, removed from DEST's
    /// folder.
    pub stale_temporaries_removed: u64,
}

/// Copies the team store at `url` to `dest` (replacing a file there) with `pg_dump`,
/// atomically and with mode 0600.
///
/// # Errors
/// [`Error::CannotConnect`] when the store cannot be opened (checked first, as every verb
/// does); [`Error::Invalid`] when `pg_dump` is missing or fails (with its message, the
/// password hidden); [`Error::Io`] when the folder cannot be written. Nothing is left at
/// `dest` or beside it on failure.
pub fn backup(url: &str, dest: &Path) -> Result<PgBackupReport> {
    let shown = redact(url);
    // The URL, the server and the schema are checked as every verb checks them, so that a
    // bad URL gets sessiondb's message rather than pg_dump's.
    drop(PgStore::connect(url)?);
    let password = password_of(url)?;
    let program = std::env::var_os("PG_DUMP")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| OsString::from("pg_dump"));
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    // tempfile creates the file with mode 0600 and removes it if anything below fails;
    // pg_dump truncates and writes it, keeping the mode.
    let stale_temporaries_removed = crate::backup::remove_stale_temporaries(&parent);
    let tmp = crate::backup::temporary(&parent)?;
    let mut command = Command::new(&program);
    command
        .arg("--format=custom")
        .arg("--no-password")
        .arg("--file")
        .arg(tmp.path())
        .arg("--dbname")
        .arg(without_password(url))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(password) = &password {
        command.env("PGPASSWORD", password);
    }
    let shown_program = program.to_string_lossy().into_owned();
    let out = command.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Invalid(format!(
                "`backup` of a team store runs PostgreSQL's pg_dump, and {shown_program} was \
                 not found: install PostgreSQL's client programs (pg_dump of the server's \
                 major version or newer) or set PG_DUMP to its path"
            ))
        } else {
            Error::io(PathBuf::from(&program), e)
        }
    })?;
    if !out.status.success() {
        let said = hide(&String::from_utf8_lossy(&out.stderr), password.as_deref());
        return Err(Error::Invalid(format!(
            "{shown_program} failed ({}) backing up {shown}; nothing written to {}: {}",
            out.status,
            dest.display(),
            said.trim()
        )));
    }
    let file = tmp.as_file();
    file.sync_all().map_err(|e| Error::io(tmp.path(), e))?;
    let bytes = file.metadata().map_err(|e| Error::io(tmp.path(), e))?.len();
    if bytes == 0 {
        return Err(Error::Invalid(format!(
            "{shown_program} reported success backing up {shown} but wrote nothing; \
             nothing written to {}",
            dest.display()
        )));
    }
    tmp.persist(dest).map_err(|e| Error::io(dest, e.error))?;
    // The rename itself survives a crash once the folder is synced.
    if let Ok(dir) = std::fs::File::open(&parent) {
        let _ = dir.sync_all();
    }
    Ok(PgBackupReport {
        source: shown,
        destination: dest.to_owned(),
        bytes,
        pg_dump: shown_program,
        stale_temporaries_removed,
    })
}

/// The password the URL holds (decoded), if any: the authority's or a `password=`
/// parameter, read by the same parser the connection uses.
fn password_of(url: &str) -> Result<Option<String>> {
    let request = super::tls::read_request(url)?;
    let config: postgres::Config = request
        .url
        .parse()
        .map_err(|e: postgres::Error| Error::Invalid(format!("{}: {e}", redact(url))))?;
    Ok(config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned()))
}

/// `pg_dump`'s message as sessiondb shows it: the password (should a message ever hold it)
/// replaced by `***`, and control characters other than line breaks and tabs taken out (the
/// message may quote the server, and it goes to a terminal).
fn hide(said: &str, password: Option<&str>) -> String {
    let said = match password.filter(|p| !p.is_empty()) {
        Some(p) => said.replace(p, "***"),
        None => said.to_owned(),
    };
    said.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_read_from_either_place_and_decoded() {
        let cases = [
            ("postgres://u:s%40cret@h/db", Some("s@cret")),
            ("postgres://u@h/db?password=p%26w", Some("p&w")),
            ("postgres://u@h/db", None),
        ];
        for (url, want) in cases {
            assert_eq!(password_of(url).unwrap().as_deref(), want, "{url}");
        }
    }

    #[test]
    fn a_message_never_shows_the_password_or_control_characters() {
        let said = hide(
            "FATAL: no s3cret here\u{1b}[31m\nsecond line",
            Some("s3cret"),
        );
        assert_eq!(said, "FATAL: no *** here[31m\nsecond line");
    }
}
