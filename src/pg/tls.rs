//! TLS to a team store, as the connection string asks for it (`sslmode`, `sslrootcert`,
//! `sslcert`, `sslkey`, with libpq's meanings).
//!
//! The `postgres` crate knows `disable`, `prefer` and `require`; libpq's `verify-ca` and
//! `verify-full`, and `sslrootcert`, are read here and taken out of the URL before it is
//! parsed. The connector is rustls (with ring), so a build needs no OS TLS library.
//!
//! | `sslmode` | encrypted | server certificate checked |
//! | --- | --- | --- |
//! | `disable` | never | - |
//! | `prefer` (the default) | when the server offers TLS | no |
//! | `require` | always | no; against `sslrootcert` when one is given (as libpq) |
//! | `verify-ca` | always | signed by a root of `sslrootcert` |
//! | `verify-full` | always | signed by a root of `sslrootcert`, and issued for the host |
//!
//! Without `sslrootcert`, `verify-ca` and `verify-full` read `~/.postgresql/root.crt`, as
//! libpq does.
//!
//! A client certificate (`sslcert`, PEM, the chain after the certificate) and its key
//! (`sslkey`, PEM: PKCS#8, PKCS#1 or SEC1, not encrypted) are sent when the server asks for
//! one, over any mode but `disable`. Without `sslcert`, `~/.postgresql/postgresql.crt` and
//! `~/.postgresql/postgresql.key` are used when the certificate file exists, as libpq does;
//! a file the URL names must exist (libpq would go on without it, so that a typo shows only
//! as the server's refusal). The key must not be readable by group or others (0600, or
//! 0640 when root owns it), libpq's rule. `sslpassword` (an encrypted key) is refused.

use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// How the connection must be protected: libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain text only.
    Disable,
    /// TLS when the server offers it, plain text otherwise.
    Prefer,
    /// TLS or no connection; the certificate is not checked unless a root is named.
    Require,
    /// TLS with a certificate signed by a trusted root, for any host name.
    VerifyCa,
    /// TLS with a certificate signed by a trusted root and issued for the host.
    VerifyFull,
}

/// What a connection string asks of TLS, and the string left for the `postgres` crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsRequest {
    /// The URL with `sslmode` reduced to what the `postgres` crate knows and
    /// `sslrootcert` taken out.
    pub url: String,
    /// The mode asked for (`prefer` when the URL names none).
    pub mode: SslMode,
    /// The trusted roots file, when the URL names one.
    pub root_cert: Option<PathBuf>,
    /// The client certificate file, when the URL names one (`sslcert`).
    pub client_cert: Option<PathBuf>,
    /// Its private key file, when the URL names one (`sslkey`).
    pub client_key: Option<PathBuf>,
}

/// Reads `sslmode`, `sslrootcert`, `sslcert` and `sslkey` from `url`'s query.
///
/// # Errors
/// [`Error::Invalid`] for an `sslmode` libpq does not know (`allow` is refused too: it
/// would try plain text first, which is never what a team store wants).
pub fn read_request(url: &str) -> Result<TlsRequest> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut mode = SslMode::Prefer;
    let mut root_cert = None;
    let (mut client_cert, mut client_key) = (None, None);
    let mut kept = Vec::new();
    for param in query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        match key {
            "sslmode" => {
                mode = match percent_decode(value).as_str() {
                    "disable" => SslMode::Disable,
                    "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(Error::Invalid(format!(
                            "sslmode={other} is not supported (disable, prefer, require, \
                             verify-ca or verify-full)"
                        )))
                    }
                };
            }
            "sslrootcert" => root_cert = Some(PathBuf::from(percent_decode(value))),
            "sslcert" => client_cert = Some(PathBuf::from(percent_decode(value))),
            "sslkey" => client_key = Some(PathBuf::from(percent_decode(value))),
            "sslpassword" => {
                return Err(Error::Invalid(
                    "sslpassword is not supported: the client key (sslkey) must be a PEM file \
                     that is not encrypted (readable by its owner only)"
                        .to_owned(),
                ))
            }
            _ => kept.push(param.to_owned()),
        }
    }
    let passed = match mode {
        SslMode::Disable => "disable",
        SslMode::Prefer => "prefer",
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => "require",
    };
    kept.push(format!("sslmode={passed}"));
    Ok(TlsRequest {
        url: format!("{base}?{}", kept.join("&")),
        mode,
        root_cert,
        client_cert,
        client_key,
    })
}

/// `%XX` escapes of a query value decoded (a file path may hold spaces or `&`).
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The rustls connector for `request`, or `None` for `sslmode=disable`.
///
/// # Errors
/// [`Error::Invalid`] when the roots file cannot be read or holds no certificate.
pub fn connector(request: &TlsRequest) -> Result<Option<tokio_postgres_rustls::MakeRustlsConnect>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots_file = match (request.mode, &request.root_cert) {
        (SslMode::Disable, _) => return Ok(None),
        (SslMode::Prefer | SslMode::Require, None) => None,
        (_, Some(file)) => Some(file.clone()),
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => Some(default_root_cert()?),
    };
    let verifier: Arc<dyn ServerCertVerifier> = match roots_file {
        None => Arc::new(AnyCertificate(provider.clone())),
        Some(file) => {
            let roots = Arc::new(read_roots(&file)?);
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                roots,
                provider.clone(),
            )
            .build()
            .map_err(|e| Error::Invalid(format!("{}: {e}", file.display())))?;
            if request.mode == SslMode::VerifyFull {
                webpki
            } else {
                Arc::new(AnyHostName(webpki))
            }
        }
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Invalid(format!("TLS set-up: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match client_identity(request)? {
        None => builder.with_no_client_auth(),
        Some((chain, key, files)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| Error::Invalid(format!("{files}: {e}")))?,
    };
    Ok(Some(tokio_postgres_rustls::MakeRustlsConnect::new(config)))
}

/// The client certificate chain and key to send, when the URL names them or libpq's
/// default files exist; with the files' names for messages.
#[allow(clippy::type_complexity)]
fn client_identity(
    request: &TlsRequest,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>, String)>> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".postgresql"))
    };
    let cert = match &request.client_cert {
        Some(file) => file.clone(),
        None => match home().map(|d| d.join("postgresql.crt")) {
            // libpq's default certificate, used only when it is there.
            Some(file) if file.exists() => file,
            _ => return Ok(None),
        },
    };
    let key = match &request.client_key {
        Some(file) => file.clone(),
        None => match home() {
            Some(dir) => dir.join("postgresql.key"),
            None => {
                return Err(Error::Invalid(format!(
                    "sslcert {}: sslkey=FILE is needed (HOME is not set to find \
                     ~/.postgresql/postgresql.key)",
                    cert.display()
                )))
            }
        },
    };
    let bad_cert = |why: String| Error::Invalid(format!("sslcert {}: {why}", cert.display()));
    let pem = std::fs::read(&cert).map_err(|e| bad_cert(e.to_string()))?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad_cert(format!("not a PEM certificate file ({e})")))?;
    if chain.is_empty() {
        return Err(bad_cert("holds no certificate".to_owned()));
    }
    let bad_key = |why: String| Error::Invalid(format!("sslkey {}: {why}", key.display()));
    let meta = std::fs::metadata(&key).map_err(|e| bad_key(e.to_string()))?;
    if !private_enough(&meta) {
        return Err(bad_key(
            "the private key file is readable by group or others; it must have mode 0600 \
             or less (0640 or less when owned by root)"
                .to_owned(),
        ));
    }
    let pem = std::fs::read(&key).map_err(|e| bad_key(e.to_string()))?;
    let private = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        bad_key(format!(
            "not a PEM private key that is not encrypted (PKCS#8, PKCS#1 or SEC1): {e}"
        ))
    })?;
    let files = format!("sslcert {} with sslkey {}", cert.display(), key.display());
    Ok(Some((chain, private, files)))
}

/// libpq's rule for a client key file: no access for others, and none for the group unless
/// root owns the file (a key shared with a server's group); never write or execute for the
/// group.
fn private_enough(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode();
    if meta.uid() == 0 {
        mode & 0o037 == 0
    } else {
        mode & 0o077 == 0
    }
}

/// libpq's default roots file, `~/.postgresql/root.crt`.
fn default_root_cert() -> Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            Error::Invalid(
                "sslmode=verify-ca/verify-full needs sslrootcert=FILE (HOME is not set to find \
             ~/.postgresql/root.crt)"
                    .to_owned(),
            )
        })?;
    Ok(PathBuf::from(home).join(".postgresql").join("root.crt"))
}

/// The certificates of a PEM file, as trusted roots.
fn read_roots(file: &std::path::Path) -> Result<RootCertStore> {
    let bad = |why: String| Error::Invalid(format!("sslrootcert {}: {why}", file.display()));
    let pem = std::fs::read(file).map_err(|e| bad(e.to_string()))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(format!("not a PEM certificate file ({e})")))?;
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("holds no certificate".to_owned()));
    }
    Ok(roots)
}

/// `require` without roots, as libpq: the channel is encrypted and the server proves it
/// holds the key of the certificate it shows, but who signed that certificate is not
/// checked.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name it was issued for is not
/// compared with the host.
#[derive(Debug)]
struct AnyHostName(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_modes_are_read_and_reduced_for_the_driver() {
        let r = read_request("postgres://u:pw@h/db?sslmode=verify-full&sslrootcert=%2Fa%20b%2Fca.pem&application_name=x").unwrap();
        assert_eq!(r.mode, SslMode::VerifyFull);
        assert_eq!(r.root_cert, Some(PathBuf::from("/a b/ca.pem")));
        assert_eq!(
            r.url,
            "postgres://u:pw@h/db?application_name=x&sslmode=require"
        );
        let r = read_request("postgres://h/db?&").unwrap();
        assert_eq!(r.url, "postgres://h/db?sslmode=prefer");
        let r = read_request("postgres://h/db").unwrap();
        assert_eq!(
            (r.mode, r.url.as_str()),
            (SslMode::Prefer, "postgres://h/db?sslmode=prefer")
        );
        let r = read_request("postgres://h/db?sslmode=disable").unwrap();
        assert_eq!(r.mode, SslMode::Disable);
        let r = read_request("postgres://h/db?sslcert=%2Fk%2Fc.pem&sslkey=%2Fk%2Fc.key").unwrap();
        assert_eq!(r.client_cert, Some(PathBuf::from("/k/c.pem")));
        assert_eq!(r.client_key, Some(PathBuf::from("/k/c.key")));
        assert_eq!(r.url, "postgres://h/db?sslmode=prefer");
        assert!(read_request("postgres://h/db?sslpassword=x").is_err());
        assert!(read_request("postgres://h/db?sslmode=allow").is_err());
        assert!(read_request("postgres://h/db?sslmode=bogus").is_err());
    }

    #[test]
    fn disable_needs_no_connector_and_a_missing_roots_file_is_named() {
        let r = read_request("postgres://h/db?sslmode=disable").unwrap();
        assert!(connector(&r).unwrap().is_none());
        let r = read_request("postgres://h/db?sslmode=require").unwrap();
        assert!(connector(&r).unwrap().is_some());
        let r = read_request("postgres://h/db?sslmode=verify-ca&sslrootcert=no-such.pem").unwrap();
        let err = connector(&r).err().unwrap().to_string();
        assert!(err.contains("no-such.pem"), "{err}");
    }
}
