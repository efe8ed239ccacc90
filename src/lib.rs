//! sessiondb: an embedded, SQLite-backed store for coding-agent sessions.
#![warn(missing_docs)]

pub mod resume;
