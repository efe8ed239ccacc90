//! Where things live: Claude Code's project-folder naming and sessiondb's default paths.

use std::path::PathBuf;

/// Claude Code's limit on a sanitized project-folder name, in UTF-16 units (spec §1.3).
const MAX_SANITIZED_LENGTH: usize = 200;

/// Claude Code's `sanitizePath`: every UTF-16 unit that is not `[a-zA-Z0-9]` becomes `-`
/// (so an astral character becomes `--`). Names over 200 units are cut and suffixed with
/// `-` and a hash; the CLI's hash (Bun's wyhash) cannot be reproduced, so this returns the
/// 200-unit prefix plus `-`, and lookups match project folders by that prefix.
pub fn sanitize_path(name: &str) -> String {
    let units: Vec<u16> = name.encode_utf16().collect();
    let mut out = String::with_capacity(units.len());
    for unit in units.iter().take(MAX_SANITIZED_LENGTH) {
        match char::from_u32(u32::from(*unit)) {
            Some(c) if c.is_ascii_alphanumeric() => out.push(c),
            _ => out.push('-'),
        }
    }
    if units.len() > MAX_SANITIZED_LENGTH {
        out.push('-');
    }
    out
}

/// The project folder name a host chose with `CLAUDE_CODE_PROJECT_DIR_NAME` (Claude Code
/// 2.1.234+), as Claude Code takes it: only when `CLAUDE_CONFIG_DIR` is set too, and only a
/// name of 1 to 64 characters from `[A-Za-z0-9_-]` that is not a reserved Windows device
/// name (`con`, `prn`, `aux`, `nul`, `com0`–`com9`, `lpt0`–`lpt9`, any case); anything else
/// is ignored, as Claude Code ignores it. Claude Code then keeps the transcripts of every
/// folder it runs in under `projects/<that name>/`.
pub fn project_dir_name_override() -> Option<String> {
    non_empty_env("CLAUDE_CONFIG_DIR")?;
    let name = non_empty_env("CLAUDE_CODE_PROJECT_DIR_NAME")?;
    let allowed = name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let lower = name.to_ascii_lowercase();
    let reserved = matches!(lower.as_str(), "con" | "prn" | "aux" | "nul")
        || ((lower.starts_with("com") || lower.starts_with("lpt"))
            && lower.len() == 4
            && lower.as_bytes()[3].is_ascii_digit());
    (allowed && !reserved).then_some(name)
}

/// The project folder Claude Code keeps a directory's sessions in: the name
/// [`project_dir_name_override`] gives, else the directory's path sanitized.
pub fn project_folder_for(dir: &str) -> String {
    project_dir_name_override().unwrap_or_else(|| sanitize_path(dir))
}

/// A project argument (`--project`, `project=`) as a project folder name: a folder name is
/// taken as it is; a path is resolved (symlinks too, when it exists) and named as Claude
/// Code names its folder ([`project_folder_for`]), and is returned beside it (the SDK's
/// `directory`).
pub fn project_argument(arg: &str) -> (String, Option<String>) {
    if arg.contains('/') || arg.contains('\\') {
        let real = std::fs::canonicalize(arg)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| arg.to_owned());
        (project_folder_for(&real), Some(real))
    } else {
        (arg.to_owned(), None)
    }
}

/// The database used when no `--db` is given: `$SESSIONDB_PATH`, else
/// `$XDG_DATA_HOME/sessiondb/sessions.db`, else `~/.local/share/sessiondb/sessions.db`.
pub fn default_database() -> Option<PathBuf> {
    if let Some(path) = non_empty_env("SESSIONDB_PATH") {
        return Some(PathBuf::from(path));
    }
    let data = match non_empty_env("XDG_DATA_HOME") {
        Some(dir) => PathBuf::from(dir),
        None => home()?.join(".local").join("share"),
    };
    Some(data.join("sessiondb").join("sessions.db"))
}

/// Claude Code's projects folder: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
pub fn default_projects_dir() -> Option<PathBuf> {
    if let Some(dir) = non_empty_env("CLAUDE_CONFIG_DIR") {
        return Some(PathBuf::from(dir).join("projects"));
    }
    Some(home()?.join(".claude").join("projects"))
}

fn home() -> Option<PathBuf> {
    non_empty_env("HOME").map(PathBuf::from)
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_like_claude_code() {
        assert_eq!(
            sanitize_path("/Users/foo/my-project"),
            "-Users-foo-my-project"
        );
        assert_eq!(sanitize_path("/home/u/.genesis"), "-home-u--genesis");
        assert_eq!(
            sanitize_path("/tmp/ccoracle-home/work"),
            "-tmp-ccoracle-home-work"
        );
        // An astral character is two UTF-16 units, so two hyphens.
        assert_eq!(sanitize_path("a😀b"), "a--b");
        assert_eq!(sanitize_path("é"), "-");
    }

    #[test]
    fn long_names_keep_a_prefix() {
        let long = "a".repeat(250);
        let out = sanitize_path(&long);
        assert_eq!(out.len(), 201);
        assert!(out.ends_with('-'));
    }
}
