//! The password of a URL that carries none, from where libpq's own tools look: the
//! `PGPASSWORD` environment variable, then the password file (`PGPASSFILE`, else
//! `~/.pgpass`). So a team store's URL can be written where others read it (a hook in
//! Claude Code's `settings.json`, a command line, a script) without its password, as
//! `psql` and `pg_dump` users already do.
//!
//! The file's rules are libpq's: lines `host:port:database:user:password`, each of the
//! first four a literal or `*`, `\:` and `\\` escaping a colon and a backslash, `#` starting
//! a comment line; the first matching line wins; a file that its group or others may read
//! is ignored (libpq ignores it too). Where libpq looks a password up per host of a
//! multi-host URL, this looks it up for the first host, which the connection tries first.

use postgres::config::Host;
use std::path::{Path, PathBuf};

/// Where a password came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The URL itself (`user:secret@host` or `password=`).
    Url,
    /// The `PGPASSWORD` environment variable.
    Environment,
    /// A line of this password file.
    File(PathBuf),
}

/// Gives `config` a password when its URL has none and one is found. Returns where the
/// password it now has came from, or why it has none, in words for an error message.
///
/// # Errors
/// No password was found (the message says where it was looked for).
pub fn fill(config: &mut postgres::Config) -> Result<Source, String> {
    if config.get_password().is_some() {
        return Ok(Source::Url);
    }
    if let Some(password) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        config.password(password.as_encoded_bytes());
        return Ok(Source::Environment);
    }
    let Some(file) = password_file() else {
        return Err("no password in the URL or PGPASSWORD, and no HOME for ~/.pgpass".into());
    };
    let text = read_private(&file)?;
    let wanted = Wanted::of(config);
    let password = lookup(&text, &wanted).ok_or_else(|| {
        format!(
            "no password in the URL or PGPASSWORD, nor a line for {}:{}:{}:{} in {}",
            wanted.host,
            wanted.port,
            wanted.database,
            wanted.user,
            file.display()
        )
    })?;
    config.password(password);
    Ok(Source::File(file))
}

/// Where the password of a connection to `url` would come from, or why there is none.
///
/// # Errors
/// The URL cannot be read, or no password was found (the message says where it was looked
/// for).
pub fn source_for(url: &str) -> Result<Source, String> {
    let request = super::tls::read_request(url).map_err(|e| e.to_string())?;
    let mut config: postgres::Config = request.url.parse().map_err(|e| format!("{e}"))?;
    fill(&mut config)
}

/// `PGPASSFILE`, else `.pgpass` in the home folder.
fn password_file() -> Option<PathBuf> {
    if let Some(file) = std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(file));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| Path::new(&home).join(".pgpass"))
}

/// The file's text, when it is a regular file only its owner may read (libpq's rule on
/// Unix; elsewhere any readable file); otherwise why it is not read.
fn read_private(file: &Path) -> Result<String, String> {
    let unread = |why: &str| format!("no password in the URL or PGPASSWORD, and {why}");
    let meta = std::fs::metadata(file)
        .map_err(|_| unread(&format!("no password file {}", file.display())))?;
    if !meta.is_file() {
        return Err(unread(&format!("{} is not a file", file.display())));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(unread(&format!(
                "{} is ignored because its group or others may read it (chmod 600 it)",
                file.display()
            )));
        }
    }
    std::fs::read_to_string(file)
        .map_err(|e| unread(&format!("{} cannot be read: {e}", file.display())))
}

/// What a password file's line must match: the connection's host, port, database and
/// user, with libpq's defaults.
struct Wanted {
    host: String,
    port: String,
    database: String,
    user: String,
}

impl Wanted {
    fn of(config: &postgres::Config) -> Wanted {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            // A socket in one of the default folders is `localhost` to libpq.
            #[cfg(unix)]
            Some(Host::Unix(dir)) if is_default_socket_dir(dir) => "localhost".to_owned(),
            #[cfg(unix)]
            Some(Host::Unix(dir)) => dir.to_string_lossy().into_owned(),
            None => "localhost".to_owned(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or_default().to_owned();
        let database = config.get_dbname().unwrap_or(&user).to_owned();
        Wanted {
            host,
            port: port.to_string(),
            database,
            user,
        }
    }
}

#[cfg(unix)]
fn is_default_socket_dir(dir: &Path) -> bool {
    dir == Path::new("/var/run/postgresql")
        || dir == Path::new("/run/postgresql")
        || dir == Path::new("/tmp")
}

/// The password of the first line of `text` that matches.
fn lookup(text: &str, wanted: &Wanted) -> Option<String> {
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(fields)
        .find(|f| {
            [&wanted.host, &wanted.port, &wanted.database, &wanted.user]
                .iter()
                .zip(&f[..4])
                .all(|(want, field)| field == "*" || field == *want)
        })
        .map(|mut f| f.swap_remove(4))
}

/// A line's five fields, unescaped (`None`: fewer than five). A colon after the fifth field
/// belongs to the password, as libpq reads it.
fn fields(line: &str) -> Option<Vec<String>> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.push(chars.next().unwrap_or('\\')),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    (fields.len() == 5).then_some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(host: &str, port: &str, database: &str, user: &str) -> Wanted {
        Wanted {
            host: host.into(),
            port: port.into(),
            database: database.into(),
            user: user.into(),
        }
    }

    #[test]
    fn the_first_matching_line_wins_with_wildcards_and_escapes() {
        let text = "# team store\n\
                    db.example:5432:other:ann:no\n\
                    db.example:*:team:ann:s3c\\:r\\\\et:tail\n\
                    *:*:*:*:fallback\n";
        let w = wanted("db.example", "5432", "team", "ann");
        assert_eq!(lookup(text, &w).as_deref(), Some("s3c:r\\et:tail"));
        let w = wanted("db.example", "5433", "other", "ann");
        assert_eq!(lookup(text, &w).as_deref(), Some("fallback"));
        assert_eq!(lookup("h:5432:d:u\n", &wanted("h", "5432", "d", "u")), None);
        assert_eq!(lookup("h:1:d:u:p\n", &wanted("h", "2", "d", "u")), None);
    }

    #[test]
    fn defaults_follow_libpq() {
        let config: postgres::Config = "postgres://ann@db.example".parse().unwrap();
        let w = Wanted::of(&config);
        assert_eq!(
            (
                w.host.as_str(),
                w.port.as_str(),
                w.database.as_str(),
                w.user.as_str()
            ),
            ("db.example", "5432", "ann", "ann")
        );
        let config: postgres::Config = "host=/var/run/postgresql user=bo dbname=t port=6000"
            .parse()
            .unwrap();
        let w = Wanted::of(&config);
        assert_eq!((w.host.as_str(), w.port.as_str()), ("localhost", "6000"));
    }
}
