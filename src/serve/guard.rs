//! The requests `serve` refuses before routing, whatever the route and whether or not a token
//! is set: a browser on another site must not be able to write (or, through DNS rebinding,
//! read) the store of a server on the same machine.
//!
//! 1. **Host** (421): the `Host` header (and an absolute request target) must name the address
//!    the client connected to, or, when that is a loopback address, `localhost`, `127.0.0.1`
//!    or `[::1]`, or a name given with `--allow-host`; each with the port connected to (a
//!    name given with its own port needs that port). A rebinding page reaches the server
//!    under its own name, which is none of these.
//! 2. **Cross-site** (403): `Sec-Fetch-Site: cross-site`, or an `Origin` other than the
//!    server's own (`http://` or `https://` followed by the `Host` sent), `null` included.
//!    Clients that are not browsers send neither header.
//! 3. **Content type** (415): every `POST` must say `Content-Type: application/json` (any
//!    parameters, e.g. `; charset=utf-8`). A page can send `text/plain` and form bodies to
//!    any address without asking; `application/json` it cannot send cross-origin without a
//!    CORS preflight, which this server never grants.
//!
//! [`Policy::check`] runs in the connection's service (see `connections`) ahead of the
//! router, so every route, present and future, is covered.

use axum::http::{header, request::Parts, HeaderMap, Method, StatusCode};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

/// A host the server answers to besides its own address (`--allow-host NAME[:PORT]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    host: Host,
    /// `None`: any request without a port, or with the port connected to.
    port: Option<u16>,
}

impl FromStr for AllowedHost {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (host, port) = split_authority(text).ok_or_else(|| {
            format!("{text:?} is not a host name (NAME or NAME:PORT, e.g. sessions.example)")
        })?;
        Ok(AllowedHost { host, port })
    }
}

impl fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.host, self.port) {
            (Host::Ip(IpAddr::V6(ip)), Some(p)) => write!(f, "[{ip}]:{p}"),
            (Host::Ip(IpAddr::V6(ip)), None) => write!(f, "[{ip}]"),
            (Host::Ip(ip), Some(p)) => write!(f, "{ip}:{p}"),
            (Host::Ip(ip), None) => write!(f, "{ip}"),
            (Host::Name(n), Some(p)) => write!(f, "{n}:{p}"),
            (Host::Name(n), None) => write!(f, "{n}"),
        }
    }
}

/// Why a request was refused: the status and a message for `{"error": …}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 421, 403 or 415.
    pub status: StatusCode,
    /// What was wrong and what the server wants instead.
    pub message: String,
}

impl Refusal {
    fn new(status: StatusCode, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
        }
    }
}

/// The rules, with the names added by `--allow-host`.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    allowed: Vec<AllowedHost>,
}

impl Policy {
    /// A policy that also answers to `allowed`.
    pub fn new(allowed: Vec<AllowedHost>) -> Policy {
        Policy { allowed }
    }

    /// Checks a request that arrived on a connection to `local` (the server's address as
    /// the client reached it).
    ///
    /// # Errors
    /// The first rule the request breaks, in the order of the module docs.
    pub fn check(&self, request: &Parts, local: SocketAddr) -> Result<(), Refusal> {
        let host = self.check_host(request, local)?;
        check_site(&request.headers, host)?;
        if request.method == Method::POST {
            check_content_type(&request.headers)?;
        }
        Ok(())
    }

    /// The `Host` header, when it names this server.
    fn check_host<'a>(&self, request: &'a Parts, local: SocketAddr) -> Result<&'a str, Refusal> {
        let misdirected = || {
            Refusal::new(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "this server answers to the Host {local} (or a name given with \
                     --allow-host), not to the one sent"
                ),
            )
        };
        let mut values = request.headers.get_all(header::HOST).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(misdirected());
        };
        let host = value.to_str().map_err(|_| misdirected())?;
        if !self.answers_to(host, local) {
            return Err(misdirected());
        }
        if let Some(authority) = request.uri.authority() {
            if !self.answers_to(authority.as_str(), local) {
                return Err(misdirected());
            }
        }
        Ok(host)
    }

    fn answers_to(&self, authority: &str, local: SocketAddr) -> bool {
        let Some((host, port)) = split_authority(authority) else {
            return false;
        };
        let same_port = port == Some(local.port()) || (port.is_none() && local.port() == 80);
        let local_ip = canonical(local.ip());
        let own = match &host {
            Host::Ip(ip) => {
                *ip == local_ip
                    || (local_ip.is_loopback()
                        && (*ip == IpAddr::V4(Ipv4Addr::LOCALHOST)
                            || *ip == IpAddr::V6(Ipv6Addr::LOCALHOST)))
            }
            Host::Name(name) => local_ip.is_loopback() && name == "localhost",
        };
        (own && same_port)
            || self.allowed.iter().any(|a| {
                a.host == host
                    && match a.port {
                        Some(p) => port == Some(p),
                        None => port.is_none() || port == Some(local.port()),
                    }
            })
    }
}

/// A request from a page of another site, by `Sec-Fetch-Site` or `Origin`.
fn check_site(headers: &HeaderMap, host: &str) -> Result<(), Refusal> {
    let cross_site = headers
        .get_all("sec-fetch-site")
        .iter()
        .any(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"));
    if cross_site {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "cross-site requests are refused (Sec-Fetch-Site: cross-site)",
        ));
    }
    for origin in headers.get_all(header::ORIGIN) {
        let origin = origin.as_bytes();
        let own = [&b"http://"[..], b"https://"].iter().any(|scheme| {
            origin.len() == scheme.len() + host.len()
                && origin[..scheme.len()].eq_ignore_ascii_case(scheme)
                && origin[scheme.len()..].eq_ignore_ascii_case(host.as_bytes())
        });
        if !own {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                format!(
                    "requests from other origins are refused (only http://{host} may send Origin)"
                ),
            ));
        }
    }
    Ok(())
}

/// A `POST` with a body a page could not send cross-origin without a preflight.
fn check_content_type(headers: &HeaderMap) -> Result<(), Refusal> {
    let unsupported = || {
        Refusal::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a POST must be sent with Content-Type: application/json",
        )
    };
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(unsupported());
    };
    let media_type = value.as_bytes().split(|b| *b == b';').next().unwrap_or(b"");
    if media_type
        .trim_ascii()
        .eq_ignore_ascii_case(b"application/json")
    {
        Ok(())
    } else {
        Err(unsupported())
    }
}

/// A host as it appears in `Host`, `Origin` or `--allow-host`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    Ip(IpAddr),
    /// A DNS name, lowercased, without a final dot.
    Name(String),
}

/// An IPv4 address the socket reports as IPv4-mapped IPv6 is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// `host[:port]`, `[v6][:port]`; `None` for anything else.
fn split_authority(text: &str) -> Option<(Host, Option<u16>)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        let ip: Ipv6Addr = ip.parse().ok()?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (Host::Ip(canonical(IpAddr::V6(ip))), port)
    } else {
        let (name, port) = match text.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (text, None),
        };
        let host = match name.parse::<Ipv4Addr>() {
            Ok(ip) => Host::Ip(IpAddr::V4(ip)),
            Err(_) => Host::Name(dns_name(name)?),
        };
        (host, port)
    };
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((host, port))
}

/// A DNS name in the form compared: lowercase, no final dot; `None` when it is not one.
fn dns_name(name: &str) -> Option<String> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    valid.then(|| name.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(method: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder().method(method).uri("/v1/store/load");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        request.body(()).expect("a request").into_parts().0
    }

    fn status(policy: &Policy, local: &str, method: &str, headers: &[(&str, &str)]) -> u16 {
        let local: SocketAddr = local.parse().expect("an address");
        match policy.check(&parts(method, headers), local) {
            Ok(()) => 200,
            Err(r) => r.status.as_u16(),
        }
    }

    #[test]
    fn hosts_are_the_address_connected_to_or_loopback_names() {
        let p = Policy::default();
        let json = ("content-type", "application/json");
        for (local, host, want) in [
            ("127.0.0.1:7878", "127.0.0.1:7878", 200),
            ("127.0.0.1:7878", "localhost:7878", 200),
            ("127.0.0.1:7878", "LocalHost.:7878", 200),
            ("127.0.0.1:7878", "[::1]:7878", 200),
            ("[::1]:7878", "localhost:7878", 200),
            ("[::ffff:127.0.0.1]:7878", "127.0.0.1:7878", 200),
            ("127.0.0.1:80", "localhost", 200),
            ("192.168.1.5:7878", "192.168.1.5:7878", 200),
            ("127.0.0.1:7878", "localhost", 421),
            ("127.0.0.1:7878", "localhost:7879", 421),
            ("127.0.0.1:7878", "evil.example:7878", 421),
            ("127.0.0.1:7878", "evil.example", 421),
            ("127.0.0.1:7878", "127.0.0.2:7878", 421),
            ("127.0.0.1:7878", "localhost.evil.example:7878", 421),
            ("127.0.0.1:7878", "127.0.0.1:7878:1", 421),
            ("127.0.0.1:7878", "127.0.0.1:+7878", 421),
            ("127.0.0.1:7878", "", 421),
            ("192.168.1.5:7878", "localhost:7878", 421),
            ("192.168.1.5:7878", "127.0.0.1:7878", 421),
        ] {
            assert_eq!(
                status(&p, local, "POST", &[("host", host), json]),
                want,
                "{host} on {local}"
            );
        }
        assert_eq!(status(&p, "127.0.0.1:7878", "GET", &[]), 421, "no Host");
        assert_eq!(
            status(
                &p,
                "127.0.0.1:7878",
                "GET",
                &[("host", "localhost:7878"), ("host", "evil.example")]
            ),
            421,
            "two Hosts"
        );
    }

    #[test]
    fn allowed_names_add_to_the_own_ones() {
        let p = Policy::new(vec![
            "Sessions.Example".parse().unwrap(),
            "proxy.example:8443".parse().unwrap(),
            "10.0.0.7".parse().unwrap(),
        ]);
        for (host, want) in [
            ("sessions.example", 200),
            ("sessions.example:7878", 200),
            ("sessions.example:9999", 421),
            ("proxy.example:8443", 200),
            ("proxy.example", 421),
            ("proxy.example:7878", 421),
            ("10.0.0.7:7878", 200),
            ("localhost:7878", 200),
            ("other.example:7878", 421),
        ] {
            assert_eq!(
                status(&p, "127.0.0.1:7878", "GET", &[("host", host)]),
                want,
                "{host}"
            );
        }
        for bad in ["", "a b", "x:y", "[::1", "a..b", "-:1:2"] {
            assert!(bad.parse::<AllowedHost>().is_err(), "{bad:?}");
        }
        assert_eq!(
            "[::1]:9".parse::<AllowedHost>().unwrap().to_string(),
            "[::1]:9"
        );
    }

    #[test]
    fn cross_site_requests_and_posts_that_are_not_json_are_refused() {
        let p = Policy::default();
        let host = ("host", "localhost:7878");
        let json = ("content-type", "application/json");
        for (method, headers, want) in [
            ("POST", vec![host, json], 200),
            (
                "POST",
                vec![host, ("content-type", "Application/JSON; charset=utf-8")],
                200,
            ),
            ("POST", vec![host], 415),
            ("POST", vec![host, ("content-type", "text/plain")], 415),
            (
                "POST",
                vec![host, ("content-type", "application/x-www-form-urlencoded")],
                415,
            ),
            (
                "POST",
                vec![host, ("content-type", "multipart/form-data; boundary=x")],
                415,
            ),
            (
                "POST",
                vec![host, ("content-type", "application/jsonx")],
                415,
            ),
            ("POST", vec![host, json, json], 415),
            ("GET", vec![host], 200),
            (
                "POST",
                vec![host, json, ("origin", "http://localhost:7878")],
                200,
            ),
            (
                "POST",
                vec![host, json, ("origin", "HTTPS://LOCALHOST:7878")],
                200,
            ),
            (
                "POST",
                vec![host, json, ("origin", "http://evil.example")],
                403,
            ),
            (
                "POST",
                vec![host, json, ("origin", "http://127.0.0.1:7878")],
                403,
            ),
            (
                "POST",
                vec![host, json, ("origin", "http://localhost:7878.evil")],
                403,
            ),
            ("POST", vec![host, json, ("origin", "null")], 403),
            ("GET", vec![host, ("origin", "http://evil.example")], 403),
            ("POST", vec![host, ("origin", "http://evil.example")], 403),
            (
                "POST",
                vec![host, json, ("sec-fetch-site", "same-origin")],
                200,
            ),
            ("POST", vec![host, json, ("sec-fetch-site", "none")], 200),
            (
                "POST",
                vec![host, json, ("sec-fetch-site", "cross-site")],
                403,
            ),
            ("GET", vec![host, ("sec-fetch-site", "Cross-Site")], 403),
            (
                "GET",
                vec![
                    ("host", "evil.example:7878"),
                    ("origin", "http://evil.example:7878"),
                ],
                421,
            ),
        ] {
            assert_eq!(
                status(&p, "127.0.0.1:7878", method, &headers),
                want,
                "{method} {headers:?}"
            );
        }
    }
}
