//! How output looks, decided once per process: colour (`--color`, `NO_COLOR`,
//! `CLICOLOR_FORCE`), `--quiet`, the terminal width for cutting lines, and the pager.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal, unless NO_COLOR is set; always with CLICOLOR_FORCE.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

struct Settings {
    color: bool,
    quiet: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Records the global options; called once, before any command runs.
pub fn init(choice: ColorChoice, quiet: bool) {
    let color = decide_color(
        choice,
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR"),
        std::env::var_os("CLICOLOR_FORCE"),
    );
    let _ = SETTINGS.set(Settings { color, quiet });
}

/// The colour rule: `always`/`never` win; with `auto`, a non-empty `NO_COLOR` turns colour
/// off, then a `CLICOLOR_FORCE` other than `0` turns it on, else colour on a terminal only.
pub fn decide_color(
    choice: ColorChoice,
    terminal: bool,
    no_color: Option<OsString>,
    force: Option<OsString>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if no_color.is_some_and(|v| !v.is_empty()) {
                false
            } else if force.is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else {
                terminal
            }
        }
    }
}

/// Whether stdout gets colour.
pub fn color() -> bool {
    SETTINGS.get().is_some_and(|s| s.color)
}

/// Whether summaries and warnings are silenced (`--quiet`).
pub fn quiet() -> bool {
    SETTINGS.get().is_some_and(|s| s.quiet)
}

/// An SGR-styled string when colour is on, the plain text otherwise.
pub fn paint(code: &str, text: &str) -> String {
    if color() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// A summary line on stderr (which database, what was done), unless `--quiet`.
pub fn note(text: std::fmt::Arguments<'_>) {
    if !quiet() {
        eprintln!("{text}");
    }
}

/// A warning on stderr, unless `--quiet`.
pub fn warn(text: std::fmt::Arguments<'_>) {
    if !quiet() {
        eprintln!("warning: {text}");
    }
}

/// The columns stdout has when it is a terminal (`COLUMNS` first, then the terminal's
/// size); `None` when it is not a terminal: lines are then never cut.
pub fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    columns_from(std::env::var("COLUMNS").ok().as_deref())
        .or_else(|| {
            console::Term::stdout()
                .size_checked()
                .map(|(_, w)| w as usize)
        })
        .or(Some(80))
}

/// `COLUMNS` as a width, when it is a positive number.
fn columns_from(value: Option<&str>) -> Option<usize> {
    value?.trim().parse().ok().filter(|&w: &usize| w > 0)
}

/// Where long output goes: a pager on a terminal (`$PAGER`, else `less -FRX`), else stdout.
/// Writes are buffered either way.
pub struct Pager {
    child: Option<Child>,
    out: Box<dyn Write>,
}

impl Pager {
    /// A pager when `wanted` and stdout is a terminal; plain buffered stdout otherwise (or
    /// when the pager cannot be started).
    pub fn start(wanted: bool) -> Pager {
        let stdout = || -> Box<dyn Write> { Box::new(std::io::BufWriter::new(std::io::stdout())) };
        if !wanted || !std::io::stdout().is_terminal() {
            return Pager {
                child: None,
                out: stdout(),
            };
        }
        let command = std::env::var("PAGER")
            .ok()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| "less -FRX".to_owned());
        match Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdin(Stdio::piped())
            .spawn()
        {
            Ok(mut child) => match child.stdin.take() {
                Some(stdin) => Pager {
                    child: Some(child),
                    out: Box::new(std::io::BufWriter::new(stdin)),
                },
                None => Pager {
                    child: None,
                    out: stdout(),
                },
            },
            Err(_) => Pager {
                child: None,
                out: stdout(),
            },
        }
    }

    /// Flushes, closes the pager's input and waits until the user leaves it.
    ///
    /// # Errors
    /// Fails when writing fails (a pager quit early is a closed pipe, which the caller
    /// treats as success).
    pub fn finish(mut self) -> std::io::Result<()> {
        let flushed = self.out.flush();
        drop(std::mem::replace(&mut self.out, Box::new(std::io::sink())));
        if let Some(mut child) = self.child.take() {
            child.wait()?;
        }
        flushed
    }
}

impl Write for Pager {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl Drop for Pager {
    fn drop(&mut self) {
        // An error path: still let the user read what was written.
        let _ = self.out.flush();
        drop(std::mem::replace(&mut self.out, Box::new(std::io::sink())));
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_flags_then_environment() {
        let os = |s: &str| Some(OsString::from(s));
        use ColorChoice::*;
        let cases = [
            (Auto, true, None, None, true),
            (Auto, false, None, None, false),
            (Auto, true, os("1"), None, false),
            (Auto, true, os(""), None, true),
            (Auto, false, None, os("1"), true),
            (Auto, false, None, os("0"), false),
            (Auto, false, os("1"), os("1"), false),
            (Always, false, os("1"), None, true),
            (Never, true, None, os("1"), false),
        ];
        for (choice, terminal, no_color, force, want) in cases {
            assert_eq!(
                decide_color(choice, terminal, no_color.clone(), force.clone()),
                want,
                "{choice:?} terminal={terminal} NO_COLOR={no_color:?} CLICOLOR_FORCE={force:?}"
            );
        }
    }

    #[test]
    fn columns_must_be_a_positive_number() {
        assert_eq!(columns_from(Some("120")), Some(120));
        assert_eq!(columns_from(Some(" 60 ")), Some(60));
        assert_eq!(columns_from(Some("0")), None);
        assert_eq!(columns_from(Some("wide")), None);
        assert_eq!(columns_from(None), None);
    }
}
