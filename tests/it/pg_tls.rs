//! TLS to a team store (`sslmode`): a throwaway cluster that serves TLS with a certificate
//! made here and refuses plain TCP, and the plain test server for the modes that must keep
//! working without TLS. Needs `SESSIONDB_TEST_PG` (for the server binaries), as every
//! PostgreSQL test.

use crate::support::{own_cluster, pg_db, OwnCluster};
use sessiondb::pg::PgStore;
use std::path::Path;
use std::process::Command;

/// A CA and a server certificate it signed for `localhost` only, as PEM files in `dir`:
/// `ca.pem`, `server.pem`, `server.key`, and `other-ca.pem` (a CA that signed nothing);
/// and client certificates for the user `sessiondb`: `client.pem`/`client.key` signed by
/// the CA, `stranger.pem`/`stranger.key` by another (keys mode 0600).
fn make_certificates(dir: &Path) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
    let server_key = KeyPair::generate().expect("server key");
    let server = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("server params")
        .signed_by(&server_key, &Issuer::from_params(&ca_params, &ca_key))
        .expect("server certificate");
    let other_key = KeyPair::generate().expect("other key");
    let other = ca_params.self_signed(&other_key).expect("other CA");
    std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write");
    std::fs::write(dir.join("other-ca.pem"), other.pem()).expect("write");
    std::fs::write(dir.join("server.pem"), server.pem()).expect("write");
    std::fs::write(dir.join("server.key"), server_key.serialize_pem()).expect("write");
    let client = |name: &str, issuer: &Issuer<'_, &KeyPair>| {
        let key = KeyPair::generate().expect("client key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "sessiondb");
        let cert = params.signed_by(&key, issuer).expect("client certificate");
        std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).expect("write");
        private_file(&dir.join(format!("{name}.key")), &key.serialize_pem());
    };
    client("client", &Issuer::from_params(&ca_params, &ca_key));
    client("stranger", &Issuer::from_params(&ca_params, &other_key));
}

/// Writes `text` to a file only its owner can read, as a private key must be.
fn private_file(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

/// Starts a TLS-only cluster with the certificate in `certs`, or `None` when no test server
/// is configured (the binaries are then not known to be there).
fn tls_cluster(what: &str, certs: &Path) -> Option<OwnCluster> {
    start_tls_cluster(what, certs, false)
}

/// As [`tls_cluster`], and with `client_ca`, a cluster that also requires a client
/// certificate signed by `ca.pem` for the user it names (`cert` authentication).
fn start_tls_cluster(what: &str, certs: &Path, client_ca: bool) -> Option<OwnCluster> {
    let mut options = vec![
        "--ssl".into(),
        certs.join("server.pem").into_os_string(),
        certs.join("server.key").into_os_string(),
    ];
    options.extend(client_ca.then(|| certs.join("ca.pem").into_os_string()));
    own_cluster(what, &options)
}

fn with_query(url: &str, query: &str) -> String {
    format!("{url}?{query}")
}

fn connect_error(url: &str) -> String {
    match PgStore::connect(url) {
        Ok(_) => panic!("{url} must not connect"),
        Err(e) => e.to_string(),
    }
}

/// Runs `import` of the sample projects and `sessions --all` through the binary against
/// `url`: both must succeed, and neither may show the password `pw-secret`.
fn import_and_list_through_the_binary(url: &str) {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    for args in [
        vec!["import".to_owned(), samples.display().to_string()],
        vec!["sessions".to_owned(), "--all".to_owned()],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
            .arg("--db")
            .arg(url)
            .args(&args)
            .output()
            .expect("run sessiondb");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{args:?}: {all}");
        assert!(!all.contains("pw-secret"), "{all}");
    }
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn sslmode_require_and_verify_connect_over_tls_and_check_what_they_promise() {
    let certs = tempfile::tempdir().expect("tempdir");
    make_certificates(certs.path());
    let Some(cluster) = tls_cluster(
        "sslmode_require_and_verify_connect_over_tls_and_check_what_they_promise",
        certs.path(),
    ) else {
        return;
    };
    let by_ip = cluster
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    let by_name = by_ip.replacen("@127.0.0.1:", "@localhost:", 1);
    let root = |file: &str| certs.path().join(file).display().to_string();

    // The cluster refuses plain TCP: a connection that works used TLS.
    let err = connect_error(&with_query(&by_ip, "sslmode=disable"));
    assert!(
        err.contains("no encryption") || err.contains("rejects"),
        "{err}"
    );
    assert!(!err.contains("pw-secret"), "{err}");

    let store = PgStore::connect(&with_query(&by_ip, "sslmode=require")).expect("require");
    let ssl: bool = store
        .read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )?
                .get(0))
        })
        .expect("pg_stat_ssl");
    assert!(ssl);
    // `prefer` (the default) takes TLS when it is offered.
    PgStore::connect(&by_ip).expect("prefer");

    // verify-full: the right root and the name the certificate was issued for.
    let full = format!("sslmode=verify-full&sslrootcert={}", root("ca.pem"));
    PgStore::connect(&with_query(&by_name, &full)).expect("verify-full by name");
    let err = connect_error(&with_query(&by_ip, &full));
    assert!(err.contains("certificate"), "{err}");
    assert!(!err.contains("pw-secret") && err.contains(":***@"), "{err}");
    // verify-ca does not compare the name, but still wants the right root.
    let ca = format!("sslmode=verify-ca&sslrootcert={}", root("ca.pem"));
    PgStore::connect(&with_query(&by_ip, &ca)).expect("verify-ca by address");
    let other = format!("sslmode=verify-ca&sslrootcert={}", root("other-ca.pem"));
    let err = connect_error(&with_query(&by_name, &other));
    assert!(err.contains("certificate"), "{err}");
    // require with a root named checks the chain, as libpq does.
    let err = connect_error(&with_query(
        &by_ip,
        &format!("sslmode=require&sslrootcert={}", root("other-ca.pem")),
    ));
    assert!(err.contains("certificate"), "{err}");

    // Through the binary: a whole import and listing over TLS, the password never shown.
    let url = with_query(&by_ip, "sslmode=require");
    import_and_list_through_the_binary(&url);
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_server_without_tls_keeps_plain_modes_and_refuses_require_clearly() {
    let Some(db) = pg_db("a_server_without_tls_keeps_plain_modes_and_refuses_require_clearly")
    else {
        return;
    };
    let url = db
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    PgStore::connect(&with_query(&url, "sslmode=disable")).expect("disable");
    PgStore::connect(&with_query(&url, "sslmode=prefer")).expect("prefer falls back");
    let err = connect_error(&with_query(&url, "sslmode=require"));
    assert!(err.contains("does not offer TLS"), "{err}");
    assert!(err.contains("sslmode=require"), "{err}");
    assert!(!err.contains("pw-secret") && err.contains(":***@"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(with_query(
            &url,
            "sslmode=verify-full&sslrootcert=missing-roots.pem",
        ))
        .args(["sessions", "--all"])
        .output()
        .expect("run sessiondb");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("missing-roots.pem"), "{err}");
    assert!(!err.contains("pw-secret"), "{err}");
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn client_certificates_named_by_the_url_are_sent() {
    let certs = tempfile::tempdir().expect("tempdir");
    make_certificates(certs.path());
    let Some(cluster) = start_tls_cluster(
        "client_certificates_named_by_the_url_are_sent",
        certs.path(),
        true,
    ) else {
        return;
    };
    let url = cluster
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    let file = |name: &str| certs.path().join(name).display().to_string();
    let with_client = |cert: &str, key: &str| {
        with_query(
            &url,
            &format!(
                "sslmode=require&sslcert={}&sslkey={}",
                file(cert),
                file(key)
            ),
        )
    };
    // Every refusal, to check afterwards that none shows the password.
    let errors = std::cell::RefCell::new(Vec::new());
    let refused = |url: &str| {
        let err = connect_error(url);
        errors.borrow_mut().push(err.clone());
        err
    };
    // Without a certificate the server refuses the login.
    let err = refused(&with_query(&url, "sslmode=require"));
    assert!(err.contains("certificate"), "{err}");
    // With the CA's certificate for this user, it lets us in, and sees the certificate.
    let good = with_client("client.pem", "client.key");
    let store = PgStore::connect(&good).expect("a client certificate signed by the CA");
    let dn: String = store
        .read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )?
                .get(0))
        })
        .expect("pg_stat_ssl");
    assert!(dn.contains("CN=sessiondb"), "{dn}");
    // Signed by a CA the server does not trust: refused by the server.
    let err = refused(&with_client("stranger.pem", "stranger.key"));
    assert!(err.contains("cannot connect"), "{err}");
    // A key others can read is refused before connecting, as libpq refuses it.
    let open_key = certs.path().join("open.key");
    std::fs::copy(certs.path().join("client.key"), &open_key).expect("copy");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&open_key, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let err = refused(&with_client("client.pem", "open.key"));
    assert!(err.contains("open.key") && err.contains("0600"), "{err}");
    // A named file that is missing, a key that does not match, an encrypted key's password.
    let err = refused(&with_client("missing.pem", "client.key"));
    assert!(err.contains("missing.pem"), "{err}");
    let err = refused(&with_client("client.pem", "stranger.key"));
    assert!(
        err.contains("client.key") || err.contains("stranger.key"),
        "{err}"
    );
    let err = refused(&format!("{good}&sslpassword=x"));
    assert!(err.contains("sslpassword"), "{err}");
    for err in errors.borrow().iter() {
        assert!(!err.contains("pw-secret") && err.contains(":***@"), "{err}");
    }

    // Through the binary: an import and a listing with the client certificate.
    import_and_list_through_the_binary(&good);
}
