//! A team store's password from where libpq's tools look (`sessiondb::pg::password`): a
//! cluster of its own whose TCP logins need a password, and URLs without it.

use crate::support::own_cluster;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// The password, with a colon and a backslash for the file's escapes.
const SECRET: &str = "s3:cr\\et";

/// `sessiondb --db URL ARGS` with the password sources given (and no others).
fn sessiondb(url: &str, args: &[&str], passfile: &Path, password: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sessiondb"));
    command
        .arg("--db")
        .arg(url)
        .args(args)
        .env("PGPASSFILE", passfile)
        .env_remove("PGPASSWORD")
        .env_remove("SESSIONDB_PATH");
    if let Some(p) = password {
        command.env("PGPASSWORD", p);
    }
    let out = command.output().expect("run sessiondb");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(SECRET), "the password was shown: {all}");
    out
}

fn write_passfile(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_url_without_its_password_logs_in_by_pgpassword_or_the_password_file() {
    let Some(cluster) = own_cluster(
        "a_url_without_its_password_logs_in_by_pgpassword_or_the_password_file",
        &["--password".into(), SECRET.into()],
    ) else {
        return;
    };
    let url = &cluster.url;
    let port = url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .expect("port");
    let dir = tempfile::tempdir().expect("tmp");
    let passfile = dir.path().join("pgpass");
    let list = ["sessions", "--all"];

    // Nothing anywhere: the server's refusal, and where the password was looked for.
    let out = sessiondb(url, &list, &passfile, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no password file"),
        "{}",
        stderr(&out)
    );

    // In the URL (percent-encoded), or in PGPASSWORD.
    let encoded = url.replacen("://sessiondb@", "://sessiondb:s3%3Acr%5Cet@", 1);
    assert!(sessiondb(&encoded, &list, &passfile, None).status.success());
    assert!(sessiondb(url, &list, &passfile, Some(SECRET))
        .status
        .success());

    // The first matching line of the file, with its escapes; wildcards match.
    let line = format!("127.0.0.1:{port}:postgres:sessiondb:s3\\:cr\\\\et\n");
    write_passfile(
        &passfile,
        &format!("# team\n127.0.0.1:1:*:*:wrong\n{line}"),
        0o600,
    );
    let out = sessiondb(url, &list, &passfile, None);
    assert!(out.status.success(), "{}", stderr(&out));
    write_passfile(&passfile, "*:*:*:sessiondb:s3\\:cr\\\\et\n", 0o600);
    assert!(sessiondb(url, &list, &passfile, None).status.success());

    // A file others may read is ignored, as libpq ignores it, and the error says why.
    write_passfile(&passfile, &line, 0o644);
    let out = sessiondb(url, &list, &passfile, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("group or others may read it"),
        "{}",
        stderr(&out)
    );

    // A file without a line for this connection.
    write_passfile(&passfile, "127.0.0.1:1:*:*:wrong\n", 0o600);
    let out = sessiondb(url, &list, &passfile, None);
    assert_eq!(out.status.code(), Some(1));
    let want = format!("nor a line for 127.0.0.1:{port}:postgres:sessiondb in");
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));

    // The hooks: installed only when capture will log in without the URL's password.
    let settings = dir.path().join("settings.json");
    let settings = settings.to_string_lossy();
    let install = ["hooks", "install", "--settings", &settings];
    let out = sessiondb(&encoded, &install, &passfile, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("hooks not installed"),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new(settings.as_ref()).exists());
    write_passfile(&passfile, &line, 0o600);
    let out = sessiondb(&encoded, &install, &passfile, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = std::fs::read_to_string(settings.as_ref()).expect("settings");
    assert!(
        written.contains(url.as_str()) && !written.contains("s3%3A"),
        "{written}"
    );
}
