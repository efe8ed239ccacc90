//! Who may use the server when it has a token: the bearer header for the API, a login
//! session for the pages, and the rules around them.
//!
//! * The API (`/v1/…`) takes `Authorization: Bearer <token>`, compared in constant time.
//! * The pages take a cookie set by `POST /login`. It holds a random session id made for
//!   that login (256 bits from the OS), never the token: a cookie is sent to every port of
//!   its host, so a token in it would reach any other local listener the browser is
//!   pointed at. Ids live in this process only (a restart logs everyone out) and expire
//!   after [`SESSION_LIFETIME`]. The cookie's name carries the server's port
//!   (`sessiondb_8080`), so two servers on one host do not overwrite each other's.
//! * Failed logins and wrong bearer tokens share one budget ([`Limiter`]): a burst of
//!   [`FAILURES_BURST`], then [`FAILURES_PER_SECOND`]; past it every login and bearer check
//!   is answered 429 until the budget refills.
//! * After logging in the page goes to `next` only when it is a path on this server's own
//!   origin as a browser would parse it ([`safe_next`]).

use super::response::{json_error, json_ok, ApiError};
use super::web::html;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The shortest token accepted: 16 bytes (`openssl rand -hex 16` gives 32).
pub const MIN_TOKEN_BYTES: usize = 16;

/// How long a login lasts.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);

/// The most login sessions kept at once; the oldest goes when a new login needs room.
const MAX_SESSIONS: usize = 1024;

/// Failed attempts allowed at once before the limit applies.
pub const FAILURES_BURST: f64 = 10.0;

/// Failed attempts allowed per second after the burst.
pub const FAILURES_PER_SECOND: f64 = 2.0;

/// The token check of one server: the token, its login sessions and its failure budget.
pub struct Auth {
    token: Option<Arc<[u8]>>,
    cookie: String,
    sessions: Mutex<HashMap<String, Instant>>,
    limiter: Mutex<Limiter>,
}

impl Auth {
    /// The check for a server listening on `port`, with `token` (`None`: every request is
    /// let through, loopback only).
    pub fn new(token: Option<&str>, port: u16) -> Auth {
        Auth {
            token: token.map(|t| Arc::from(t.as_bytes())),
            cookie: format!("sessiondb_{port}"),
            sessions: Mutex::new(HashMap::new()),
            limiter: Mutex::new(Limiter::new(Instant::now())),
        }
    }

    /// The name of the login cookie.
    pub fn cookie_name(&self) -> &str {
        &self.cookie
    }

    /// Whether the server has a token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Instant>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn limiter(&self) -> MutexGuard<'_, Limiter> {
        self.limiter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new login session: its id, valid for [`SESSION_LIFETIME`].
    fn start_session(&self) -> String {
        let id = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let now = Instant::now();
        let mut sessions = self.sessions();
        sessions.retain(|_, until| *until > now);
        if sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, until)| **until)
                .map(|(id, _)| id.clone())
            {
                sessions.remove(&oldest);
            }
        }
        sessions.insert(id.clone(), now + SESSION_LIFETIME);
        id
    }

    /// Whether the request's cookie holds a live session id of this process.
    fn has_session(&self, headers: &HeaderMap) -> bool {
        let Some(id) = cookie_value(headers, &self.cookie) else {
            return false;
        };
        let Ok(id) = std::str::from_utf8(id) else {
            return false;
        };
        let mut sessions = self.sessions();
        match sessions.get(id) {
            Some(until) if *until > Instant::now() => true,
            Some(_) => {
                sessions.remove(id);
                false
            }
            None => false,
        }
    }
}

/// The failure budget: a bucket of [`FAILURES_BURST`] that refills at
/// [`FAILURES_PER_SECOND`]; each failure takes one.
pub struct Limiter {
    left: f64,
    at: Instant,
}

impl Limiter {
    /// A full bucket at `now`.
    pub fn new(now: Instant) -> Limiter {
        Limiter {
            left: FAILURES_BURST,
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.left = (self.left + elapsed * FAILURES_PER_SECOND).min(FAILURES_BURST);
        self.at = now;
    }

    /// `Err(wait)` while the budget is spent: how long until one more attempt.
    ///
    /// # Errors
    /// The wait, when no attempt is left.
    pub fn check(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        if self.left >= 1.0 {
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - self.left) / FAILURES_PER_SECOND,
            ))
        }
    }

    /// Takes one attempt out of the budget.
    pub fn fail(&mut self, now: Instant) {
        self.refill(now);
        self.left = (self.left - 1.0).max(0.0);
    }
}

fn too_many(wait: Duration) -> Response {
    let seconds = wait.as_secs() + 1;
    let mut response = json_error(
        StatusCode::TOO_MANY_REQUESTS,
        &format!("too many wrong tokens: try again in {seconds} s"),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// Compares in time that depends only on the expected token's length: a given token of
/// another length is answered after comparing the expected one with itself, so that its
/// timing does not tell the expected length either.
pub fn same_token(given: &[u8], expected: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    let same_length = given.len() == expected.len();
    let compared = if same_length { given } else { expected };
    let same: bool = compared.ct_eq(expected).into();
    same && same_length
}

/// The credentials of `Authorization: Bearer <token>`; the scheme is case-insensitive and
/// may be followed by several spaces (RFC 9110, 11.4).
pub fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then(|| rest.trim_ascii_start())
}

/// The value of the cookie `name` in the request, if any.
fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a [u8]> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|v| v.as_bytes().split(|b| *b == b';'))
        .find_map(|pair| {
            pair.trim_ascii()
                .strip_prefix(name.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
        })
}

/// Paths anyone may fetch without the token: the login form and the assets it uses.
pub fn is_public(path: &str) -> bool {
    path == "/login" || path.starts_with("/assets/") || path == "/favicon.ico"
}

/// Where `serve` answers MCP (streamable HTTP).
pub const MCP_PATH: &str = "/mcp";

/// Whether `path` belongs to the pages (which take the login cookie too) rather than the
/// API (bearer header only). The MCP endpoint is API: the login cookie must not let a page
/// (the viewer's, or one that tricks a logged-in browser) call it.
pub fn is_page(path: &str) -> bool {
    !path.starts_with("/v1/") && path != MCP_PATH && !path.starts_with("/mcp/")
}

/// The middleware: checks the token (the API from the bearer header, the pages also from
/// the login cookie); the login form and its assets are open.
pub async fn authorize(State(auth): State<Arc<Auth>>, request: Request, next: Next) -> Response {
    let Some(expected) = &auth.token else {
        return next.run(request).await;
    };
    let path = request.uri().path();
    if is_public(path) {
        return next.run(request).await;
    }
    if is_page(path) && auth.has_session(request.headers()) {
        return next.run(request).await;
    }
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| bearer_token(v.as_bytes()));
    if let Some(given) = bearer {
        let now = Instant::now();
        if let Err(wait) = auth.limiter().check(now) {
            return too_many(wait);
        }
        if same_token(given, expected) {
            return next.run(request).await;
        }
        auth.limiter().fail(now);
    }
    if is_page(path) {
        let target = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        return unauthorized(request.method(), &target);
    }
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "missing or wrong token (send Authorization: Bearer <token>)",
    )
    .into_response()
}

/// The answer to a page request without a valid login: a GET is sent to the login form
/// (coming back afterwards), anything else gets 401.
pub fn unauthorized(method: &Method, path_and_query: &str) -> Response {
    if method == Method::GET {
        let target = format!("/login?next={}", html::url_part(path_and_query));
        let mut response = StatusCode::SEE_OTHER.into_response();
        if let Ok(v) = HeaderValue::from_str(&target) {
            response.headers_mut().insert(header::LOCATION, v);
        }
        response
    } else {
        json_error(
            StatusCode::UNAUTHORIZED,
            "missing or wrong token: log in again",
        )
    }
}

#[derive(serde::Deserialize)]
struct LoginBody {
    token: String,
}

/// `POST /login {"token": …}`: checks the token and sets the login cookie (a new session
/// id; HttpOnly, SameSite=Strict, for [`SESSION_LIFETIME`]).
pub async fn login(
    State(auth): State<Arc<Auth>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(r) = same_origin_json(&headers) {
        return r;
    }
    let Ok(body) = serde_json::from_slice::<LoginBody>(&body) else {
        return json_error(StatusCode::BAD_REQUEST, "send {\"token\": \"…\"}");
    };
    let Some(expected) = &auth.token else {
        return json_ok(serde_json::json!({ "ok": true }));
    };
    let now = Instant::now();
    if let Err(wait) = auth.limiter().check(now) {
        return too_many(wait);
    }
    if !same_token(body.token.as_bytes(), expected) {
        auth.limiter().fail(now);
        return json_error(StatusCode::UNAUTHORIZED, "wrong token");
    }
    let id = auth.start_session();
    let mut response = json_ok(serde_json::json!({ "ok": true }));
    let cookie = format!(
        "{}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        auth.cookie,
        SESSION_LIFETIME.as_secs()
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// Where the login form may send the browser afterwards: `next` when it is a plain path
/// (printable ASCII, one leading `/`, no backslash) that a browser's URL parser puts on
/// this server's own origin, after the URL standard's clean-up (leading and trailing C0
/// controls and spaces cut, tabs and newlines dropped anywhere, `\` read as `/`); `None`
/// otherwise. `/%09/evil.example` (a tab, which the parser drops to leave
/// `//evil.example`) and `/\evil.example` are refused.
pub fn safe_next(next: &str) -> Option<&str> {
    let bytes = next.as_bytes();
    let plain = bytes.first() == Some(&b'/')
        && !matches!(bytes.get(1), Some(b'/' | b'\\'))
        && bytes
            .iter()
            .all(|b| (0x21..0x7f).contains(b) && *b != b'\\');
    if !plain {
        return None;
    }
    let base = url::Url::parse("http://sessiondb.invalid/").ok()?;
    let parsed = base.join(next).ok()?;
    (parsed.origin() == base.origin()).then_some(next)
}

/// Refuses a write that a page of another site could have sent: the body must be declared
/// `application/json` (which a cross-site form cannot send without a CORS preflight this
/// server never grants), `Sec-Fetch-Site` must not be `cross-site`, and an `Origin` must
/// match `Host`. (The server's own layer checks the same for every route; the pages keep
/// their own check so that their safety never depends on the order of layers.)
#[allow(clippy::result_large_err)]
pub fn same_origin_json(headers: &HeaderMap) -> Result<(), Response> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(json_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "actions take Content-Type: application/json",
        ));
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
    {
        return Err(json_error(
            StatusCode::FORBIDDEN,
            "cross-site request refused",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).map(HeaderValue::as_bytes);
        let origin = origin.as_bytes();
        let host_part = origin
            .strip_prefix(b"http://")
            .or_else(|| origin.strip_prefix(b"https://"));
        if host.is_none() || host_part != host {
            return Err(json_error(
                StatusCode::FORBIDDEN,
                "cross-origin request refused",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_auth_scheme_is_case_insensitive() {
        for (header, token) in [
            (&b"Bearer abc"[..], Some(&b"abc"[..])),
            (b"bearer abc", Some(b"abc")),
            (b"BEARER abc", Some(b"abc")),
            (b"bEaReR   abc", Some(b"abc")),
            (b"Bearer", None),
            (b"Basic abc", None),
            (b"Bearerabc", None),
            (b"abc", None),
        ] {
            assert_eq!(bearer_token(header), token, "{header:?}");
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"secret", b"secret"));
        assert!(!same_token(b"secre", b"secret"));
        assert!(!same_token(b"secret!", b"secret"));
        assert!(!same_token(b"", b"secret"));
        assert!(!same_token(b"sedret", b"secret"));
    }

    #[test]
    fn next_is_a_path_on_this_origin_as_a_browser_parses_it() {
        for good in [
            "/",
            "/session/p/s?view=resume",
            "/search?q=a%20b#m-3",
            "/a/b//c",
        ] {
            assert_eq!(safe_next(good), Some(good), "{good}");
        }
        for bad in [
            "/\t/evil.example/",
            "/\n/evil.example",
            "/\r/evil.example",
            "\t//evil.example",
            " /x",
            "\u{1}/x",
            "//evil.example",
            "/\\evil.example",
            "\\/evil.example",
            "/x\\y",
            "https://evil.example/",
            "javascript:alert(1)",
            "x",
            "",
            "/é",
            "/\u{7f}",
        ] {
            assert_eq!(safe_next(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn failures_are_limited_then_refill() {
        let t = Instant::now();
        let mut l = Limiter::new(t);
        for _ in 0..FAILURES_BURST as usize {
            assert!(l.check(t).is_ok());
            l.fail(t);
        }
        let wait = l.check(t).expect_err("spent");
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        assert!(l.check(t + Duration::from_secs(1)).is_ok(), "refilled");
    }

    #[test]
    fn sessions_are_random_per_login_and_expire() {
        let auth = Auth::new(Some("0123456789abcdef"), 8080);
        assert_eq!(auth.cookie_name(), "sessiondb_8080");
        let a = auth.start_session();
        let b = auth.start_session();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("x=1; sessiondb_8080={a}")).expect("v"),
        );
        assert!(auth.has_session(&headers));
        auth.sessions().insert(a.clone(), Instant::now());
        assert!(!auth.has_session(&headers), "expired");
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("sessiondb_8080=0123456789abcdef"),
        );
        assert!(!auth.has_session(&headers), "the token is not a session");
    }
}
