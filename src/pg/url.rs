//! Telling a PostgreSQL connection string from a file path, and writing one down without
//! its password.

/// Whether `target` names a PostgreSQL database (`postgres://` or `postgresql://`) rather
/// than a SQLite file.
pub fn is_postgres_url(target: &str) -> bool {
    let lower = target.get(..13).unwrap_or(target).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
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
