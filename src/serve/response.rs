//! The answers every part of the server sends: JSON bodies, `{"error": …}` refusals, the
//! security headers, and the generic 500. Shared by the connection loop, the API and the
//! pages, so that none of them imports another for these.
//!
//! A 500 never carries its cause to the client (it may hold SQL, a path of this machine or
//! a database message): the body says `internal error <id>` and the cause goes to the
//! server's standard error with the same id, so the two can be matched.

use crate::error::Error;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The Content-Security-Policy of every answer: nothing but this server's own script,
/// stylesheet and images (plus `data:` images from transcripts), no frames, no plugins.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// Adds the security headers to an answer. The connection's service calls it on every
/// answer it sends — pages, API, assets, errors, 404s and the request guard's refusals —
/// so that no answer, present or future, goes out without them.
pub fn add_security_headers(h: &mut HeaderMap) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// A JSON answer with `body` as it is.
pub fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A 200 JSON answer.
pub fn json_ok(value: serde_json::Value) -> Response {
    json_response(StatusCode::OK, value.to_string().into_bytes())
}

/// `{"error": message}` with `status`.
pub fn json_error(status: StatusCode, message: &str) -> Response {
    json_response(
        status,
        serde_json::json!({ "error": message })
            .to_string()
            .into_bytes(),
    )
}

/// The HTTP status for a library error.
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Invalid(_) => StatusCode::BAD_REQUEST,
        Error::SessionNotFound(_) | Error::NotFound(_) | Error::NoConversation(_) => {
            StatusCode::NOT_FOUND
        }
        Error::AmbiguousSession { .. } => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// What a client is told about an error: its own message for the errors it caused (400,
/// 404, 409), and for anything else (a 500) a generic message with an id, the cause going
/// to standard error under that id ([`internal`]).
pub fn client_message(status: StatusCode, detail: &dyn std::fmt::Display) -> String {
    if status.is_server_error() {
        internal(detail)
    } else {
        detail.to_string()
    }
}

/// Logs `detail` under a new id and returns the message a client gets instead:
/// `internal error <id> (the server's log has the detail)`.
pub fn internal(detail: &dyn std::fmt::Display) -> String {
    let id = error_id();
    // The log is the serve process's standard error (a terminal, journald, a file).
    eprintln!(
        "sessiondb serve: internal error {id}: {}",
        detail.to_string().escape_debug()
    );
    format!("internal error {id} (the server's log has the detail)")
}

/// A short random id that matches an answer to its log line.
fn error_id() -> String {
    let mut id = uuid::Uuid::new_v4().simple().to_string();
    id.truncate(12);
    id
}

/// An error answer of the API: a status and `{"error": message}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// An answer with `status` and `message` (shown to the client as it is).
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// A 400.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A 500 whose cause is logged, not sent ([`internal`]).
    pub fn internal(detail: &dyn std::fmt::Display) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, internal(detail))
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let status = status_of(&e);
        ApiError::new(status, client_message(status, &e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = json_error(self.status, &self.message);
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_hides_its_cause_behind_an_id() {
        let e = Error::io(
            "/home/me/secret/sessions.db",
            std::io::Error::other("SELECT x"),
        );
        let status = status_of(&e);
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let message = client_message(status, &e);
        assert!(message.starts_with("internal error "), "{message}");
        assert!(
            !message.contains("secret") && !message.contains("SELECT"),
            "{message}"
        );
        let mine = Error::Invalid("limit must be a number".into());
        assert_eq!(
            client_message(status_of(&mine), &mine),
            "limit must be a number"
        );
    }
}
