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
            match userinfo.find(':') {
                Some(colon) => format!("{}:***{}", &userinfo[..colon], &authority[at..]),
                None => authority.to_owned(),
            }
        }
        None => authority.to_owned(),
    };
    let tail = match tail.find('?') {
        Some(q) => {
            let (path, query) = tail.split_at(q + 1);
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => p.to_owned(),
                })
                .collect();
            format!("{path}{}", params.join("&"))
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
