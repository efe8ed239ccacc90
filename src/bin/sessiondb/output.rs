//! Terminal output helpers: progress bars on a terminal only, JSON for scripts.

use indicatif::{ProgressBar, ProgressStyle};
use sessiondb::jsonl::pretty::Pretty;
use sessiondb::model::Progress;
use std::io::{IsTerminal, Write};

/// Prints a value as pretty JSON followed by a newline, through one buffer: stdout itself
/// is line-buffered, and a `write` per line made listing 10,000 sessions 4× slower.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = stdout();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// [`print_json`] of JSON values, written by [`Pretty`] (the same bytes, faster).
pub fn print_json_values(values: &[serde_json::Value]) -> anyhow::Result<()> {
    let mut buf = Vec::with_capacity(OUT_BUFFER);
    let mut out = std::io::stdout().lock();
    if values.is_empty() {
        buf.extend_from_slice(b"[]");
    } else {
        let mut pretty = Pretty::new(&mut buf);
        pretty.open(b'[');
        for (i, value) in values.iter().enumerate() {
            pretty.item(i == 0);
            pretty.value(value);
            pretty.drain_to(&mut out, OUT_BUFFER)?;
        }
        pretty.close(b']');
    }
    buf.push(b'\n');
    out.write_all(&buf)?;
    out.flush()?;
    Ok(())
}

/// How much hand-written JSON is buffered before it is written to stdout.
pub const OUT_BUFFER: usize = 64 * 1024;

/// Buffered stdout: one `write` per 64 KiB instead of one per line. Flush before returning.
pub fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock())
}

/// `println!` for a verb's output, but a reader that went away (`| head`) ends the process
/// quietly with status 0, as with every other write of a verb's output (see
/// [`is_broken_pipe`]); `println!` would panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::print_line(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// One line on stdout (see [`outln`]).
pub fn print_line(text: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(text).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        panic!("failed printing to stdout: {e}");
    }
}

/// Exit status 1 with no message: a search that found nothing (as grep and ripgrep do).
#[derive(Debug)]
pub struct NothingFound;

impl std::fmt::Display for NothingFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("nothing found")
    }
}

impl std::error::Error for NothingFound {}

/// A usage error found after parsing (exit status 2, as clap's): `pick` without a terminal.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Whether an error is just the reader of our stdout going away (`| head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(|e| e.io_error_kind())
                .is_some_and(|k| k == std::io::ErrorKind::BrokenPipe)
    })
}

/// A byte-progress bar on stderr, drawn only when stderr is a terminal.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// A bar with `label`, hidden when stderr is not a terminal.
    pub fn new(label: &'static str) -> Bar {
        Bar::with_template(
            label,
            "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {wide_msg}",
        )
    }

    /// A bar that counts lines instead of bytes (the [`Progress`] units are lines then).
    pub fn lines(label: &'static str) -> Bar {
        Bar::with_template(
            label,
            "{prefix} [{bar:30}] {human_pos}/{human_len} lines eta {eta} {wide_msg}",
        )
    }

    fn with_template(label: &'static str, template: &str) -> Bar {
        if !std::io::stderr().is_terminal() || crate::style::quiet() {
            return Bar(None);
        }
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("the template is valid")
                .progress_chars("=> "),
        );
        bar.set_prefix(label);
        Bar(Some(bar))
    }
}

impl Progress for Bar {
    fn start(&self, total_bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.set_length(total_bytes);
        }
    }
    fn advance(&self, bytes: u64, item: &str) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
            let short = item.rsplit('/').next().unwrap_or(item);
            bar.set_message(short.to_owned());
        }
    }
    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
