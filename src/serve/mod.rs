//! `sessiondb serve`: the store over HTTP/JSON, for apps built on Anthropic's Agent SDK.
//!
//! * [`http`]: the axum router, with the endpoints of the SDK's `SessionStore` protocol
//!   ([`crate::streams`]) under `/v1/store/` and the read
//!   endpoints (`/v1/sessions`, `/v1/resume`, `/v1/messages`, `/v1/search`) answering the
//!   JSON the CLI prints with `--json`.
//! * [`guard`]: the requests refused before any route (a foreign Host, cross-site requests,
//!   a POST that is not JSON).
//! * [`connections`]: the accept loop, with the connection limit, the idle, header and body
//!   timeouts and the bounded graceful shutdown.
//!
//! * [`auth`]: the token, login sessions and their limits; [`response`]: the answers and
//!   headers all of them send (a 500 says only an id; its cause goes to the log).
//!
//! * [`idle_index`]: on a team store, the search queue indexed while no request is in
//!   flight.
//!
//! * [`web`]: the web viewer's pages and actions at `/`, on the same port.
//!
//! * [`heavy`]: the bound on renders that hold a whole session; [`stream`]: answers sent
//!   while they are made; `trim`: memory given back after a burst.
//!
//! `tools/python/sessiondb_store.py` is the Python adapter (a `SessionStore` for the SDK).

pub mod auth;
pub mod connections;
pub mod guard;
pub mod heavy;
pub mod http;
pub mod idle_index;
pub mod response;
pub mod stream;
mod trim;
pub mod web;
