//! [`Db`] as a [`StreamStore`]: the SessionStore protocol's rules ([`crate::streams`])
//! run in a transaction of whichever engine the store is.

use super::Db;
use crate::error::Result;
use crate::streams::{StreamStore, StreamTx};

/// The SessionStore protocol's transactions, on whichever engine the store is.
impl StreamStore for Db {
    fn write_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        match self {
            Db::Sqlite(s) => s.write_streams(f),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.write_streams(f),
        }
    }

    fn read_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        match self {
            Db::Sqlite(s) => s.read_streams(f),
            #[cfg(feature = "postgres")]
            Db::Postgres(p) => p.read_streams(f),
        }
    }
}
