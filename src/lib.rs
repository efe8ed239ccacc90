//! sessiondb: an embedded, SQLite-backed store for coding-agent sessions.
//!
//! Claude Code keeps each session as an append-only JSONL transcript. sessiondb imports
//! those files into one SQLite database without losing a byte, exports them back
//! byte-identically, and rebuilds what resume needs from SQL plus pure functions.
//!
//! ```no_run
//! use sessiondb::{import, model::NoProgress, Store};
//! # fn main() -> sessiondb::Result<()> {
//! let store = Store::open("sessions.db")?;
//! let report = import::import_paths(&store, &["/home/me/.claude/projects".into()], &NoProgress)?;
//! println!("{} new rows", report.new_rows);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod backend;
pub mod backup;
pub mod capture;
pub mod catalog;
pub mod check;
pub mod checkpoint;
pub mod config;
pub mod error;
pub mod export;
pub mod fork;
pub mod hooks;
pub mod import;
pub mod integrity;
pub mod jsonl;
pub mod metadata;
pub mod model;
pub mod names;
pub mod paths;
pub mod pg;
pub mod query;
pub mod record;
pub mod restore;
pub mod resume;
pub mod schema;
pub mod sdk;
pub mod search;
pub mod serve;
pub mod store;
pub mod time;
pub mod usage;
pub mod watch;
pub mod write_back;

pub use backend::Db;
pub use error::{Error, Result};
pub use store::Store;
