//! `sessiondb serve [--addr 127.0.0.1:7878] [--token TOKEN]`: the HTTP/JSON API.

use crate::cli::ServeArgs;
use anyhow::Context;
use sessiondb::serve::http::{self, Config};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;

pub fn run(db: &Path, args: ServeArgs) -> anyhow::Result<()> {
    let token = args
        .token
        .or_else(|| std::env::var("SESSIONDB_TOKEN").ok())
        .filter(|t| !t.is_empty());
    let addr: SocketAddr = args
        .addr
        .to_socket_addrs()
        .with_context(|| format!("--addr {:?} is not HOST:PORT", args.addr))?
        .next()
        .with_context(|| format!("--addr {:?} resolves to no address", args.addr))?;
    if !addr.ip().is_loopback() && token.is_none() {
        anyhow::bail!(
            "refusing to serve on {addr} without a token: anything but a loopback address needs \
             --token (or SESSIONDB_TOKEN)"
        );
    }
    let store = Arc::new(super::open(db)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let bound = listener.local_addr()?;
        // Scripts read this line to learn the port (with --addr 127.0.0.1:0).
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{bound}")?;
        out.flush()?;
        drop(out);
        let config = Config {
            token,
            ..Config::default()
        };
        http::run(listener, store, config, http::shutdown_signal())
            .await
            .context("the server failed")?;
        eprintln!("sessiondb: stopped");
        Ok::<_, anyhow::Error>(())
    })
}
