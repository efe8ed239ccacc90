//! `sessiondb serve [--addr 127.0.0.1:7878] [--token-file FILE] [--allow-host NAME]`: the
//! HTTP/JSON API. The token comes from `--token-file`, `$SESSIONDB_TOKEN`, or `--token`
//! (visible to other users in `ps`). `--db postgres://…` serves a team store (the web viewer
//! excepted, whose pages say it does not run there yet).

use crate::cli::ServeArgs;
use anyhow::Context;
use sessiondb::serve::auth::MIN_TOKEN_BYTES;
use sessiondb::serve::http::{self, Config};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;

pub fn run(db: &Path, args: ServeArgs) -> anyhow::Result<()> {
    let token = match (&args.token_file, args.token) {
        (Some(file), _) => Some(read_token_file(file)?),
        (None, Some(token)) => Some(token),
        (None, None) => std::env::var("SESSIONDB_TOKEN").ok(),
    }
    .filter(|t| !t.is_empty());
    if let Some(token) = &token {
        check_token_length(token)?;
    }
    let addr: SocketAddr = args
        .addr
        .to_socket_addrs()
        .with_context(|| format!("--addr {:?} is not HOST:PORT", args.addr))?
        .next()
        .with_context(|| format!("--addr {:?} resolves to no address", args.addr))?;
    if !addr.ip().is_loopback() && token.is_none() {
        anyhow::bail!(
            "refusing to serve on {addr} without a token: anything but a loopback address needs \
             --token-file FILE (or SESSIONDB_TOKEN)"
        );
    }
    let store = Arc::new(open_store(db)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The store is dropped here, after the runtime: a team store's connections close by
    // blocking, which an async thread must not do.
    let served = store.clone();
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
        if args.open {
            open_browser(&viewer_url(bound));
        }
        let config = Config {
            token,
            allowed_hosts: args.allow_host,
            ..Config::default()
        };
        let grace = config.limits.shutdown_grace;
        let stopped = http::run(listener, served, config, http::shutdown_signal())
            .await
            .context("the server failed")?;
        if stopped.cut > 0 {
            eprintln!(
                "sessiondb: stopped; {} request(s) still in progress after {} s were cut \
                 (a write among them is stored whole or not at all)",
                stopped.cut,
                grace.as_secs()
            );
        } else {
            eprintln!("sessiondb: stopped");
        }
        Ok::<_, anyhow::Error>(())
    })
}

/// How many PostgreSQL connections one `serve` process uses at most: appends to different
/// sessions run at once, each on its own connection (several processes on one database
/// each have their own).
const TEAM_STORE_CONNECTIONS: usize = 8;

/// The store to serve: a SQLite file (created when missing) or a team store.
fn open_store(db: &Path) -> anyhow::Result<sessiondb::Db> {
    Ok(super::open_db(db)?.with_connections(TEAM_STORE_CONNECTIONS))
}

/// The token: the file's first line, without its line end and surrounding blanks.
fn read_token_file(file: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the token file {}", file.display()))?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        anyhow::bail!("the token file {} is empty", file.display());
    }
    if token.chars().any(|c| c.is_control() || c == ' ') {
        anyhow::bail!(
            "the token in {} contains a space or a control character",
            file.display()
        );
    }
    warn_if_others_may_read(file);
    Ok(token.to_owned())
}

/// Refuses a token shorter than [`MIN_TOKEN_BYTES`]: the token is also the API's bearer,
/// and a short one is guessed.
fn check_token_length(token: &str) -> anyhow::Result<()> {
    if token.len() < MIN_TOKEN_BYTES {
        anyhow::bail!(
            "the token is {} bytes long; use at least {MIN_TOKEN_BYTES} (for instance \
             `openssl rand -hex 16`)",
            token.len()
        );
    }
    Ok(())
}

/// Warns, as ssh does for a key, when the token file may be read by other users.
fn warn_if_others_may_read(file: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(file) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                crate::style::warn(format_args!(
                    "the token file {} may be read by other users (mode {mode:04o}); \
                     run chmod 600 on it",
                    file.display()
                ));
            }
        }
    }
}

/// The viewer's address for a browser: a wildcard bind is reached on loopback.
fn viewer_url(bound: SocketAddr) -> String {
    let ip = match bound.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_owned(),
        ip if ip.is_unspecified() => "[::1]".to_owned(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        ip => ip.to_string(),
    };
    format!("http://{ip}:{}/", bound.port())
}

/// Starts the user's browser on `url` without waiting for it; a failure is a warning (the
/// server keeps running and the address was printed).
fn open_browser(url: &str) {
    let mut command = match std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    {
        Some(browser) => std::process::Command::new(browser),
        None if cfg!(target_os = "macos") => std::process::Command::new("open"),
        None if cfg!(windows) => {
            let mut c = std::process::Command::new("cmd");
            c.args(["/C", "start", ""]);
            c
        }
        None => std::process::Command::new("xdg-open"),
    };
    command
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            // Reap it when it exits, so that no zombie stays behind.
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("sessiondb: cannot open a browser ({e}); open {url} yourself"),
    }
}
