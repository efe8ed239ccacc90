//! sessiondb: an embedded, SQLite-backed store for coding-agent sessions.
//!
//! Claude Code keeps each session as an append-only JSONL transcript. sessiondb imports
//! those files into one SQLite database (or a PostgreSQL team store) without losing a byte,
//! exports them back byte-identically, and rebuilds what resume needs from SQL plus pure
//! functions.
//!
//! [`SessionDb`] is the API to depend on: open a store by path or URL, then import, list,
//! read, resume, search, fork, append, export and check.
//!
//! ```no_run
//! use sessiondb::SessionDb;
//! # fn main() -> sessiondb::Result<()> {
//! let db = SessionDb::open("sessions.db")?;
//! let report = db.import(&["/home/me/.claude/projects"])?;
//! println!("{} new rows", report.new_rows);
//! let found = db.search(&sessiondb::search::SearchQuery {
//!     text: "migration".into(),
//!     ..Default::default()
//! })?;
//! for hit in found.hits {
//!     println!("{} {}", hit.session_id, hit.snippet);
//! }
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod backend;
pub mod backup;
pub mod capture;
pub mod catalog;
pub mod check;
pub mod checkpoint;
pub mod claude_settings;
pub mod codec;
pub mod compact;
pub mod config;
mod delete;
pub mod error;
pub mod export;
pub mod fork;
pub mod hooks;
pub mod import;
pub mod integrity;
pub mod json_edit;
pub mod jsonl;
pub mod library;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod metadata;
pub mod model;
pub mod names;
pub mod paths;
#[cfg(feature = "postgres")]
pub mod pg;
/// Without the team store, only telling its URLs from file paths (to refuse them clearly).
#[cfg(not(feature = "postgres"))]
pub mod pg {
    pub mod url;
}
pub mod query;
pub mod record;
pub mod restore;
pub mod resume;
pub mod schema;
pub mod sdk;
pub mod search;
#[cfg(feature = "serve")]
pub mod serve;
pub mod store;
pub mod streams;
#[cfg(feature = "postgres")]
pub mod sync;
pub mod time;
pub mod usage;
pub mod watch;
pub mod write_back;

pub use backend::Db;
pub use error::{DatabaseError, Error, Result};
pub use library::{Found, SessionDb};
pub use store::Store;
