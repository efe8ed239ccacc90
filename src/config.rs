//! sessiondb's own settings: a small TOML file, `$XDG_CONFIG_HOME/sessiondb/config.toml`,
//! else `~/.config/sessiondb/config.toml`.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The settings, with their defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `rename`, `tag`, `fork` and `append` also write to Claude Code's file, as
    /// `--write-back` does.
    pub write_back: bool,
    /// Whether the file sets `write_back` (unset, `rename`, `tag` and `fork` write back
    /// when the session's file is there, and `append` does not).
    pub write_back_set: bool,
}

/// The keys `config set` accepts.
pub const KEYS: [&str; 1] = ["write_back"];

/// Where the file is.
pub fn config_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".config"),
    };
    Some(base.join("sessiondb").join("config.toml"))
}

fn read_table(path: &Path) -> Result<toml::Table> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(toml::Table::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start].matches('\n').count() + 1)
            .unwrap_or(1);
        Error::Invalid(format!(
            "{} line {line} is not valid TOML: {}",
            path.display(),
            e.message()
        ))
    })
}

/// Reads the settings (defaults when the file does not exist).
///
/// # Errors
/// Fails when the file cannot be read, is not TOML, or a known key has a value of the
/// wrong type.
pub fn load(path: &Path) -> Result<Config> {
    let table = read_table(path)?;
    let write_back_set = table.contains_key("write_back");
    let write_back = match table.get("write_back") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(other) => {
            return Err(Error::Invalid(format!(
                "{}: write_back must be true or false, not {other}",
                path.display()
            )))
        }
    };
    Ok(Config {
        write_back,
        write_back_set,
    })
}

/// Sets `key` to `value` in the file, keeping its other keys; written atomically.
///
/// # Errors
/// [`Error::Invalid`] for an unknown key or a value of the wrong type; read and write errors.
pub fn set(path: &Path, key: &str, value: &str) -> Result<()> {
    let parsed = match key {
        "write_back" => match value {
            "true" => toml::Value::Boolean(true),
            "false" => toml::Value::Boolean(false),
            _ => {
                return Err(Error::Invalid(format!(
                    "write_back is true or false, not {value:?}"
                )))
            }
        },
        _ => {
            return Err(Error::Invalid(format!(
                "unknown setting {key:?} (known: {})",
                KEYS.join(", ")
            )))
        }
    };
    let mut table = read_table(path)?;
    table.insert(key.to_owned(), parsed);
    let text = toml::to_string(&table)
        .map_err(|e| Error::Invalid(format!("cannot write {}: {e}", path.display())))?;
    crate::export::write_atomically(path, |out| {
        out.write_all(text.as_bytes())
            .map_err(|e| Error::io(path, e))?;
        Ok(text.len() as u64)
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_keeps_other_keys_and_load_reads_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("sessiondb/config.toml");
        assert_eq!(load(&path).expect("defaults"), Config::default());
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "other = 1\n").expect("write");
        set(&path, "write_back", "true").expect("set");
        assert!(load(&path).expect("load").write_back);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("other = 1"), "{text}");
        assert!(set(&path, "write_back", "yes").is_err());
        assert!(set(&path, "colour", "true").is_err());
        std::fs::write(&path, "a = 1\nwrite_back = \n").expect("write");
        let err = load(&path).expect_err("invalid");
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
