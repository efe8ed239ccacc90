//! Telling a PostgreSQL connection string from a file path, and writing one down without
//! its password.

/// Whether `target` names a PostgreSQL database (`postgres://` or `postgresql://`) rather
/// than a SQLite file.
pub fn is_postgres_url(target: &str) -> bool {
    let lower = target.get(..13).unwrap_or(target).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// The parameter names libpq reads in a `key=value` connection string (its "keyword/value"
/// form), as listed in PostgreSQL's documentation of connection parameters.
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "requiressl",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// The first keyword of `target` when it is written as a libpq `key=value` connection
/// string (`host=db user=ann password=…`), which sessiondb does not read: such a string must
/// be neither taken for a SQLite file's name (and created, password and all) nor printed.
/// `None` for anything else, a `postgres://` URL included.
pub fn libpq_keyword(target: &str) -> Option<&str> {
    let (key, _) = target.trim_start().split_once('=')?;
    let key = key.trim_end();
    LIBPQ_KEYWORDS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(key))
        .copied()
}

/// `url` with any password replaced by `***`: the password of the authority
/// (`user:secret@host`) and a `password=` query parameter. This is the only form of a
/// connection string that sessiondb prints or logs.
pub fn redact(url: &str) -> String {
    rewrite_password(url, Some("***"))
}

/// `url` with its password left out altogether (the authority's and a `password=`
/// parameter), for handing the rest of the URL to another program (`pg_dump`) whose
/// command line other users of the machine can read; the password goes by the environment.
pub fn without_password(url: &str) -> String {
    rewrite_password(url, None)
}

/// `url` with each password replaced by `shown`, or taken out when `shown` is `None`.
fn rewrite_password(url: &str, shown: Option<&str>) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    // The authority ends at the first `/`, `?` or `#` after its last `@`: a password written
    // without percent-encoding may hold those characters, and more is hidden rather than less.
    let user_end = rest.rfind('@').map_or(0, |at| at + 1);
    let authority_end = rest[user_end..]
        .find(['/', '?', '#'])
        .map_or(rest.len(), |i| user_end + i);
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match (userinfo.find(':'), shown) {
                (Some(colon), Some(shown)) => {
                    format!("{}:{shown}{}", &userinfo[..colon], &authority[at..])
                }
                (Some(colon), None) => format!("{}{}", &userinfo[..colon], &authority[at..]),
                (None, _) => authority.to_owned(),
            }
        }
        None => authority.to_owned(),
    };
    let tail = match tail.find('?') {
        Some(q) => {
            let (path, query) = tail.split_at(q);
            let params: Vec<String> = query[1..]
                .split('&')
                .filter_map(|p| match (p.split_once('='), shown) {
                    (Some((k, _)), Some(shown)) if k.eq_ignore_ascii_case("password") => {
                        Some(format!("{k}={shown}"))
                    }
                    (Some((k, _)), None) if k.eq_ignore_ascii_case("password") => None,
                    _ => Some(p.to_owned()),
                })
                .collect();
            if params.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{}", params.join("&"))
            }
        }
        None => tail.to_owned(),
    };
    format!("{}://{authority}{tail}", &url[..scheme_end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_with_unencoded_separators_is_hidden_whole() {
        let shown = redact("postgres://me:pa/ss?w#rd@db.example:5432/team");
        assert_eq!(shown, "postgres://me:***@db.example:5432/team");
        assert!(!shown.contains("ss") && !shown.contains("rd"), "{shown}");
    }

    #[test]
    fn libpq_keyword_strings_are_recognised() {
        assert_eq!(libpq_keyword("host=db user=ann password=x"), Some("host"));
        assert_eq!(libpq_keyword("  dbname = s password=x"), Some("dbname"));
        assert_eq!(libpq_keyword("PASSWORD=x host=db"), Some("password"));
        assert_eq!(libpq_keyword("postgres://u:p@h/db?host=x"), None);
        assert_eq!(libpq_keyword("/home/me/sessions.db"), None);
        assert_eq!(libpq_keyword("./host=db"), None);
        assert_eq!(libpq_keyword("notes=1.db"), None);
    }

    #[test]
    fn postgres_urls_are_told_from_paths() {
        assert!(is_postgres_url("postgres://h/db"));
        assert!(is_postgres_url("PostgreSQL://h/db"));
        assert!(!is_postgres_url("postgres.db"));
        assert!(!is_postgres_url("/tmp/postgres://x"));
        assert!(!is_postgres_url(""));
    }

    #[test]
    fn passwords_are_left_out() {
        let cases = [
            ("postgres://u:s3cret@h:5432/db", "postgres://u@h:5432/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://u:p@ss@h/db?x=1", "postgres://u@h/db?x=1"),
            (
                "postgresql://h/db?sslmode=require&password=s3cret&user=u",
                "postgresql://h/db?sslmode=require&user=u",
            ),
            ("postgres://u:pw@h/db?password=pw", "postgres://u@h/db"),
        ];
        for (url, want) in cases {
            assert_eq!(without_password(url), want, "{url}");
        }
    }

    #[test]
    fn passwords_are_redacted() {
        let cases = [
            (
                "postgres://u:s3cret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            ("postgres://h/db", "postgres://h/db"),
            ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
            (
                "postgresql://h/db?sslmode=require&password=x&user=u",
                "postgresql://h/db?sslmode=require&password=***&user=u",
            ),
            ("postgres://u:pw@h", "postgres://u:***@h"),
        ];
        for (url, want) in cases {
            assert_eq!(redact(url), want, "{url}");
            assert!(!redact(url).contains("s3cret"));
        }
    }
}
