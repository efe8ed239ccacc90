//! [`Db`] as a [`StreamStore`]: the SessionStore protocol's rules ([`crate::streams`])
//! run in a transaction of whichever engine the store is.

use super::engine::Once;
use super::Db;
use crate::error::Result;
use crate::streams::{StreamStore, StreamTx};

/// The SessionStore protocol's transactions, on whichever engine the store is.
impl StreamStore for Db {
    fn write_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        let mut once = Once::new(f);
        self.engine.write_streams(&mut |tx| once.run(tx))?;
        once.value()
    }

    fn read_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        let mut once = Once::new(f);
        self.engine.read_streams(&mut |tx| once.run(tx))?;
        once.value()
    }
}
