//! A look at a team store's migration history before refinery's runner reads it (issue 28,
//! item 15), so that the three states the runner reports badly get a clear error: a role
//! that may not create the tables ("error asserting migrations table"), a database written
//! by a newer sessiondb ("missing from the filesystem"), and a history row refinery cannot
//! parse (it panics on a NULL column, an `applied_on` that is not RFC 3339 or a checksum
//! that is not a number).

use super::decode::RowExt;
use crate::error::{Error, Result};
use postgres::error::SqlState;
use postgres::{Client, SimpleQueryMessage};

/// refinery's history table.
const TABLE: &str = "refinery_schema_history";

/// Fails with a clear [`Error::Migration`] when the history holds a row refinery cannot
/// read, a migration newer than `embedded` (the versions and names this binary applies),
/// or when migrations are due and the role may not create tables. Otherwise the runner
/// goes ahead.
///
/// # Errors
/// As above, or when the history cannot be read.
pub fn check(client: &mut Client, embedded: &[(i64, String)]) -> Result<()> {
    let applied = read(client)?.unwrap_or_default();
    let known = embedded.iter().map(|(v, _)| *v).max().unwrap_or(0);
    if let Some((version, name)) = applied.iter().filter(|(v, _)| *v > known).max() {
        return Err(Error::Migration(format!(
            "this database was written by a newer sessiondb (its schema has migration \
             V{version} {name:?}; this sessiondb knows up to V{known}); upgrade sessiondb. \
             Nothing was changed"
        )));
    }
    let due = embedded
        .iter()
        .filter(|(v, _)| !applied.iter().any(|(a, _)| a == v))
        .map(|(v, name)| format!("V{v} {name}"))
        .next();
    if let Some(first_due) = due {
        refuse_without_create(client, &first_due)?;
    }
    Ok(())
}

/// The applied migrations (version, name), or `None` when there is no history table yet
/// (a new database). A row that refinery would panic on is an error naming it.
fn read(client: &mut Client) -> Result<Option<Vec<(i64, String)>>> {
    let query = format!("SELECT version::text, name, applied_on, checksum FROM {TABLE}");
    let messages = match client.simple_query(&query) {
        Ok(messages) => messages,
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => return Ok(None),
        Err(e) => {
            return Err(Error::Migration(format!(
                "cannot read the migration history ({TABLE}): {}",
                e.as_db_error()
                    .map_or_else(|| e.to_string(), |d| d.message().to_owned())
            )))
        }
    };
    let mut applied = Vec::new();
    for message in &messages {
        let SimpleQueryMessage::Row(row) = message else {
            continue;
        };
        let version = row.get(0).unwrap_or("NULL");
        let malformed = |what: &str| {
            Error::Migration(format!(
                "the migration history ({TABLE}) has a malformed row for version {version}: \
                 {what}. sessiondb writes every column of it, so the row was changed by \
                 another program; restore it (from a backup, or as a newly made team store \
                 has it) before using this database"
            ))
        };
        let name = row.get(1).ok_or_else(|| malformed("its name is NULL"))?;
        let applied_on = row
            .get(2)
            .ok_or_else(|| malformed("its applied_on is NULL"))?;
        if !is_rfc3339(applied_on) {
            return Err(malformed(&format!(
                "its applied_on {applied_on:?} is not an RFC 3339 time"
            )));
        }
        let checksum = row
            .get(3)
            .ok_or_else(|| malformed("its checksum is NULL"))?;
        if checksum.parse::<u64>().is_err() {
            return Err(malformed(&format!(
                "its checksum {checksum:?} is not a number"
            )));
        }
        let version: i64 = version
            .parse()
            .map_err(|_| malformed("its version is not a number"))?;
        applied.push((version, name.to_owned()));
    }
    Ok(Some(applied))
}

/// Fails when the connected role may not create tables in its current schema: migration
/// `first_due` would fail, in refinery's words, with "error asserting migrations table".
fn refuse_without_create(client: &mut Client, first_due: &str) -> Result<()> {
    let row = client.query_one(
        "SELECT current_user::text, current_database()::text, current_schema()::text,
                coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)",
        &[],
    )?;
    let (user, database, schema, may): (String, String, Option<String>, bool) =
        (row.col(0)?, row.col(1)?, row.col(2)?, row.col(3)?);
    if may {
        return Ok(());
    }
    let Some(schema) = schema else {
        return Err(Error::Migration(format!(
            "this team store needs its tables created or upgraded ({first_due} is due), and \
             role {user:?} has no schema to create them in (its search_path names none that \
             exists); set a search_path, or run sessiondb once as the database's owner"
        )));
    };
    Err(Error::Migration(format!(
        "this team store needs its tables created or upgraded ({first_due} is due), and \
         role {user:?} may not create tables in schema {schema:?} of database {database:?}. \
         Run sessiondb once as a role that may (the database's owner), or have it granted: \
         GRANT CREATE ON SCHEMA {schema} TO {user}"
    )))
}

/// Whether `text` is an RFC 3339 time as refinery's parser takes it, checked strictly
/// (`2026-12-04T10:00:00.123Z`, `…+01:00`): fields of the right width and range.
fn is_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |from: usize, to: usize| -> Option<u32> {
        let part = b.get(from..to)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        digits(0, 4),
        digits(5, 7),
        digits(8, 10),
        digits(11, 13),
        digits(14, 16),
        digits(17, 19),
    ) else {
        return false;
    };
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    let mut at = 19;
    if sep(at, b'.') {
        let fraction = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if !(1..=9).contains(&fraction) {
            return false;
        }
        at += 1 + fraction;
    }
    match b.get(at) {
        Some(b'Z') => at + 1 == b.len(),
        Some(b'+' | b'-') => {
            at + 6 == b.len()
                && sep(at + 3, b':')
                && digits(at + 1, at + 3).is_some_and(|h| h <= 23)
                && digits(at + 4, at + 6).is_some_and(|m| m <= 59)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_rfc3339;

    #[test]
    fn rfc3339_times_are_told_from_others() {
        for good in [
            "2026-12-04T10:00:00Z",
            "2026-12-04T10:00:00.123456789Z",
            "2024-02-29T23:59:59+01:00",
            "2026-12-04T10:00:00.5-05:30",
        ] {
            assert!(is_rfc3339(good), "{good}");
        }
        for bad in [
            "yesterday",
            "",
            "2026-12-04",
            "2026-12-04 10:00:00Z",
            "2026-13-04T10:00:00Z",
            "2025-02-29T10:00:00Z",
            "2026-12-04T24:00:00Z",
            "2026-12-04T10:00:00",
            "2026-12-04T10:00:00.Z",
            "2026-12-04T10:00:00+1:00",
            "2026-12-04T10:00:00Zjunk",
            "2026-12-04T10:00:00.1234567890Z",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }
}
