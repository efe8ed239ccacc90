//! Reading a column of a PostgreSQL row as a typed value, without panicking.
//!
//! `postgres::Row::get` panics when a column's value does not convert to the Rust type asked
//! for, or is NULL where no `Option` was asked for. Either happens only when the database
//! or a query no longer matches its reader (a column altered by another program, a query
//! edited without its reader), and then it must fail the one operation with a message, not
//! abort the process: a server's worker or a long import would die with it. [`RowExt::col`]
//! reads with `try_get` and gives sessiondb's own [`Error`], naming the column (its name,
//! number and PostgreSQL type) and the Rust type expected, so the message says what to fix.

use crate::error::{DatabaseError, Error, Result};
use postgres::types::FromSql;
use postgres::Row;

/// Typed, fallible reads of a row's columns: every row read of the team store goes through
/// it.
pub(crate) trait RowExt {
    /// The value of column `idx` as a `T`; an error naming the column when it is NULL (and
    /// `T` is no `Option`), of a type that does not convert to `T`, or missing.
    fn col<'a, T: FromSql<'a>>(&'a self, idx: usize) -> Result<T>;
}

impl RowExt for Row {
    fn col<'a, T: FromSql<'a>>(&'a self, idx: usize) -> Result<T> {
        self.try_get(idx)
            .map_err(|e| column_error(self, idx, std::any::type_name::<T>(), e))
    }
}

/// The error for column `idx` of `row` that could not be read as `rust_type`: the column by
/// its name, the library's reason (a type mismatch or a NULL), the library's error as source.
fn column_error(row: &Row, idx: usize, rust_type: &str, e: postgres::Error) -> Error {
    let column = match row.columns().get(idx) {
        Some(c) => format!(
            "column {:?} (number {idx}, PostgreSQL type {})",
            c.name(),
            c.type_()
        ),
        None => format!("column number {idx} (the row has {} columns)", row.len()),
    };
    // The library's own text is only "error deserializing column N"; its cause says why.
    let why = std::error::Error::source(&e).map_or_else(|| e.to_string(), ToString::to_string);
    Error::Database(DatabaseError::new(
        format!("postgres error: cannot read {column} as {rust_type}: {why}"),
        e,
    ))
}
