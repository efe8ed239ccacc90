//! Editing a file that Claude Code reads (`settings.json`, and `.claude.json` for
//! `mcp install`): the one way sessiondb changes such a file.
//!
//! ```text
//! claude_settings::edit(path, &Options::default(), |doc| {
//!     doc.set(&["mcpServers"], "sessiondb", &json!({...}));   // a json_edit::Document
//!     Ok(())
//! })
//! ```
//!
//! * **Read**: a missing file is `{}`; text that is not a JSON object is refused, untouched.
//! * **Modify**: the closure edits a [`Document`], which changes only the bytes of what it
//!   adds or removes (indentation, escapes, numbers and key order of the rest are kept).
//! * **Write**: atomically, a temporary file beside the file and a rename, keeping its mode;
//!   with [`Options::backup`], the previous bytes first go to `<file>.sessiondb.bak`.
//! * **Links**: a symbolic link (a dotfiles checkout) is followed: the file it points to is
//!   edited, beside itself, and the link stays a link.
//! * **Read-only**: a file without a write permission bit (0444) is refused, saying so: its
//!   owner made it so on purpose.
//! * **Concurrent writers**: the edit holds an exclusive lock on the file's folder (`flock`)
//!   against other sessiondb processes, and compares the file's bytes just before the rename
//!   with those it read (a writer that does not lock, such as Claude Code): when they
//!   differ it starts over from the new bytes, up to [`ATTEMPTS`] times.
//! * **Text**: [`edit_text`] is the same edit for a change that works on the text itself
//!   (`mcp install` splices what `claude mcp add` writes); [`edit`] is built on it.
//! * **Removing**: with [`Options::remove_when_empty`], a file left holding exactly
//!   [`NEW_FILE`] (`{}` and a newline, what an edit starts a missing file from) is removed:
//!   undoing an edit that created the file leaves no file (Claude Code reads a missing file
//!   as `{}`, so a user's own file of those three bytes loses nothing either).

use crate::error::{Error, Result};
use crate::json_edit::Document;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The text an edit starts a missing file from; a file left holding exactly this is removed
/// with [`Options::remove_when_empty`].
pub const NEW_FILE: &str = "{}\n";

/// How many times an edit starts over when another writer changed the file meanwhile.
pub const ATTEMPTS: usize = 20;

/// How an edit writes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Copy the previous bytes to `<file>.sessiondb.bak` first (not when the file is new).
    pub backup: bool,
    /// Remove the file when the edit leaves it holding exactly [`NEW_FILE`].
    pub remove_when_empty: bool,
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The file written: the path given, or what its link points to.
    pub file: PathBuf,
    /// Whether its bytes changed.
    pub changed: bool,
    /// Where the previous bytes were kept.
    pub backup: Option<PathBuf>,
    /// Whether the file was removed ([`Options::remove_when_empty`]).
    pub removed: bool,
}

/// Where [`Options::backup`] keeps the previous file.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sessiondb.bak");
    path.with_file_name(name)
}

/// The file a path names once links are followed (the path itself when it is not a link
/// or does not exist).
///
/// # Errors
/// A link whose target does not exist: writing a regular file there would replace the link.
pub fn target(path: &Path) -> Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|e| {
            Error::Invalid(format!(
                "{} is a symbolic link to a file that cannot be reached ({e}); it was left \
                 untouched",
                path.display()
            ))
        }),
        _ => Ok(path.to_owned()),
    }
}

/// Reads a settings file as a document: `{}` when it does not exist.
///
/// # Errors
/// Fails when it cannot be read or is not a JSON object (naming line and column).
pub fn read(path: &Path) -> Result<Document> {
    let bytes = current(path)?;
    let text = bytes.as_deref().map(|b| utf8(path, b)).transpose()?;
    parse(path, text.unwrap_or(NEW_FILE))
}

fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|_| {
        Error::Invalid(format!(
            "{} is not UTF-8 text; it was left untouched",
            path.display()
        ))
    })
}

/// `text` as a document, refused unless it is a JSON object.
fn parse(path: &Path, text: &str) -> Result<Document> {
    let doc = Document::parse(text.to_owned()).map_err(|e| {
        Error::Invalid(format!(
            "{} is not valid JSON (line {}, column {}: {e}); it was left untouched",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    if !doc.value().is_object() {
        return Err(Error::Invalid(format!(
            "{} is not a JSON object; it was left untouched",
            path.display()
        )));
    }
    Ok(doc)
}

/// Edits the settings file at `path` with `change` (see the module documentation). `change`
/// may run more than once (when another writer changed the file meanwhile), each time on
/// the file as it then is; its last answer is returned.
///
/// # Errors
/// As [`read`]; a read-only file or a link to nothing; an error of `change`; a failure to
/// write; another writer that kept changing the file for [`ATTEMPTS`] tries.
pub fn edit<T>(
    path: &Path,
    options: &Options,
    mut change: impl FnMut(&mut Document) -> Result<T>,
) -> Result<(T, Edited)> {
    edit_text(path, options, |file, before| {
        let mut doc = parse(file, before.unwrap_or(NEW_FILE))?;
        let answer = change(&mut doc)?;
        let after = doc.text();
        let new = if before.unwrap_or(NEW_FILE) == after {
            NewText::Keep
        } else if options.remove_when_empty && before.is_some() && after == NEW_FILE {
            NewText::Remove
        } else {
            NewText::Write(after.to_owned())
        };
        Ok((answer, new))
    })
}

/// What a change made with [`edit_text`] asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewText {
    /// Leave the file as it is.
    Keep,
    /// Write these bytes.
    Write(String),
    /// Remove the file.
    Remove,
}

/// [`edit`] for a change that works on the file's text itself (`mcp install` splices the
/// text `claude mcp add` would write): `change` gets the file the link points to and its
/// text (`None` when it does not exist), and says what to write. Links, the read-only
/// refusal, the lock, the comparison before the rename and [`Options::backup`] are those
/// of [`edit`].
///
/// # Errors
/// As [`edit`], and when the file is not UTF-8 text.
pub fn edit_text<T>(
    path: &Path,
    options: &Options,
    mut change: impl FnMut(&Path, Option<&str>) -> Result<(T, NewText)>,
) -> Result<(T, Edited)> {
    let file = target(path)?;
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
    let _lock = lock(&folder)?;
    for _ in 0..ATTEMPTS {
        let before = current(&file)?;
        let text = before.as_deref().map(|b| utf8(&file, b)).transpose()?;
        let mode = refuse_read_only(&file)?;
        let (answer, new) = change(&file, text)?;
        let mut edited = Edited {
            file: file.clone(),
            changed: false,
            backup: None,
            removed: false,
        };
        let after = match &new {
            NewText::Write(text) if before.as_deref() != Some(text.as_bytes()) => {
                Some(text.as_bytes())
            }
            NewText::Remove if before.is_some() => None,
            _ => return Ok((answer, edited)),
        };
        edited.changed = true;
        let tmp = match after {
            Some(bytes) => Some(write_beside(&file, &folder, bytes, mode)?),
            None => None,
        };
        // Another writer (one that does not lock) changed the file since it was read:
        // start over from its bytes.
        if current(&file)? != before {
            continue;
        }
        if let (true, Some(previous)) = (options.backup, &before) {
            let bak = backup_path(&file);
            crate::export::write_atomically(&bak, |out| {
                out.write_all(previous).map_err(|e| Error::io(&bak, e))?;
                Ok(previous.len() as u64)
            })?;
            edited.backup = Some(bak);
        }
        match tmp {
            Some(tmp) => {
                tmp.persist(&file).map_err(|e| Error::io(&file, e.error))?;
            }
            None => {
                std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
                edited.removed = true;
            }
        }
        if let Ok(dir) = std::fs::File::open(&folder) {
            let _ = dir.sync_all();
        }
        return Ok((answer, edited));
    }
    Err(Error::Invalid(format!(
        "{} kept changing while sessiondb edited it ({ATTEMPTS} tries); try again",
        file.display()
    )))
}

fn current(file: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(file) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(file, e)),
    }
}

/// The file's permission bits, after refusing a file that has no write bit.
fn refuse_read_only(file: &Path) -> Result<Option<u32>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(file) {
            Ok(m) => {
                let mode = m.permissions().mode() & 0o7777;
                if mode & 0o222 == 0 {
                    return Err(Error::Invalid(format!(
                        "{} is read-only (mode {:04o}); sessiondb does not change a file made \
                         read-only: make it writable (chmod u+w) or edit it by hand",
                        file.display(),
                        mode
                    )));
                }
                Ok(Some(mode))
            }
            Err(_) => Ok(None),
        }
    }
    #[cfg(not(unix))]
    {
        match std::fs::metadata(file) {
            Ok(m) if m.permissions().readonly() => Err(Error::Invalid(format!(
                "{} is read-only; sessiondb does not change a file made read-only",
                file.display()
            ))),
            _ => Ok(None),
        }
    }
}

fn write_beside(
    file: &Path,
    folder: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> Result<tempfile::NamedTempFile> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".sessiondb-settings-")
        .tempfile_in(folder)
        .map_err(|e| Error::io(folder, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(file, e))?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io(file, e))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.as_file().sync_all().map_err(|e| Error::io(file, e))?;
    Ok(tmp)
}

/// An exclusive lock on `folder` (released when dropped): a rename does not change the
/// folder, so every sessiondb process editing a file in it waits for the one before.
fn lock(folder: &Path) -> Result<Option<std::fs::File>> {
    #[cfg(unix)]
    {
        let dir = std::fs::File::open(folder).map_err(|e| Error::io(folder, e))?;
        rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| Error::io(folder, e.into()))?;
        Ok(Some(dir))
    }
    #[cfg(not(unix))]
    {
        let _ = folder;
        Ok(None)
    }
}
