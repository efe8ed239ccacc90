//! Answers sent while they are made (issue 28, item 8): a render on the blocking pool
//! writes into a [`Sink`], which hands the bytes, [`CHUNK`] at a time, through a bounded
//! channel to the response body. The render then holds a chunk and what it is reading, not
//! the whole answer; when the client reads slowly, the render waits for it.
//!
//! The status and headers go out with the first chunk. Until then an error still becomes
//! an error page (an answer shorter than a chunk behaves as if built whole). After it, an
//! error is logged and the body ends with an error, so that hyper cuts the connection
//! before the body's last chunk and the client sees a broken transfer, never an answer that
//! looks complete. The body ends cleanly only when the render said so ([`Sink::end`] with
//! `Ok`): a render that panics, gives up on a slow client or stops any other way is cut.

use crate::error::Error;
use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Bytes sent at a time: a chunk is what a streamed render holds of its answer.
pub const CHUNK: usize = 64 * 1024;

/// Chunks made ahead of the client: the channel's bound.
const AHEAD: usize = 2;

/// How long a render waits for the client to take one chunk before it gives up: a client
/// that stops reading must not keep a heavy render's place for ever (the idle timeout's
/// length, [`crate::serve::connections::Limits`]).
const CLIENT_WAIT: Duration = Duration::from_secs(30);

/// Where the handler waits for the answer: the response (sent with the first chunk), or the
/// error that ended the render before it.
pub type Answer = oneshot::Sender<Result<Response, Error>>;

/// The writing end of a streamed answer, used on a blocking thread of the runtime.
pub struct Sink {
    runtime: tokio::runtime::Handle,
    /// The response and where it goes, until the first chunk is sent.
    pending: Option<(Answer, Response)>,
    sender: mpsc::Sender<Bytes>,
    /// Set when the render ended well: only then does the body end without an error.
    complete: Arc<AtomicBool>,
    buffer: Vec<u8>,
    /// Set by [`Sink::end`].
    ended: bool,
}

impl Sink {
    /// A sink for a 200 answer, handed to `answer` with its first chunk.
    pub fn new(runtime: tokio::runtime::Handle, answer: Answer) -> Sink {
        let (sender, receiver) = mpsc::channel(AHEAD);
        let complete = Arc::new(AtomicBool::new(false));
        let body = Chunks {
            receiver,
            complete: complete.clone(),
        };
        let response = (StatusCode::OK, Body::new(body)).into_response();
        Sink {
            runtime,
            pending: Some((answer, response)),
            sender,
            complete,
            buffer: Vec::with_capacity(CHUNK),
            ended: false,
        }
    }

    /// Sets a header of the answer; ignored once the first chunk is sent (set headers
    /// before writing).
    pub fn header(&mut self, name: HeaderName, value: HeaderValue) {
        debug_assert!(self.pending.is_some(), "a header after the first chunk");
        if let Some((_, response)) = &mut self.pending {
            response.headers_mut().insert(name, value);
        }
    }

    /// Writes `bytes`, sending a chunk whenever [`CHUNK`] bytes are waiting.
    ///
    /// # Errors
    /// When the client went away or took no chunk for [`CLIENT_WAIT`]: the render should
    /// stop.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.buffer.extend_from_slice(bytes);
        while self.buffer.len() >= CHUNK {
            let rest = self.buffer.split_off(CHUNK);
            let chunk = std::mem::replace(&mut self.buffer, rest);
            self.send(Bytes::from(chunk))?;
        }
        Ok(())
    }

    fn send(&mut self, chunk: Bytes) -> Result<(), Error> {
        if let Some((answer, response)) = self.pending.take() {
            answer
                .send(Ok(response))
                .map_err(|_| client_gone("the client went away"))?;
        }
        let sent = self
            .runtime
            .block_on(async { tokio::time::timeout(CLIENT_WAIT, self.sender.send(chunk)).await });
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(client_gone("the client went away")),
            Err(_) => Err(client_gone("the client took no data for 30 s")),
        }
    }

    /// Ends the answer. Before the first chunk: the whole answer (with its length, as if
    /// built whole), or the error for the handler to turn into an error page. After it: the
    /// last bytes, or (the cause logged) an error that cuts the connection.
    pub fn end(mut self, outcome: Result<(), Error>) {
        self.ended = true;
        let rest = std::mem::take(&mut self.buffer);
        if let Some((answer, response)) = self.pending.take() {
            let whole = outcome.map(|()| {
                let (parts, _) = response.into_parts();
                Response::from_parts(parts, Body::from(rest))
            });
            let _ = answer.send(whole);
            return;
        }
        let sent = outcome.and_then(|()| {
            if rest.is_empty() {
                Ok(())
            } else {
                self.send(Bytes::from(rest))
            }
        });
        match sent {
            // The sender is dropped after this, so the body sees the mark before its end.
            Ok(()) => self.complete.store(true, Ordering::SeqCst),
            Err(e) if is_client_gone(&e) => {
                // Nothing is wrong with the server: say so without an error id.
                eprintln!("sessiondb serve: a streamed answer stopped: {e}");
            }
            Err(e) => cut(&e),
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if !self.ended {
            cut(&"the render stopped before its end (a panic)");
        }
    }
}

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Sink::write(self, bytes).map_err(|e| match e {
            Error::Io { source, .. } => source,
            other => std::io::Error::other(other),
        })?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn client_gone(why: &str) -> Error {
    Error::io(
        "<client>",
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, why),
    )
}

/// Whether `e` is the client's going away ([`client_gone`]), also as a render passed it on
/// (the export wraps it in an error of its own output, of the same kind).
fn is_client_gone(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Logs why an answer was cut (its client sees the connection closed before the end).
fn cut(why: &dyn std::fmt::Display) {
    super::response::internal(&format!("a streamed answer was cut: {why}"));
}

/// The body side: the chunks, then the end when the render ended well, else an error that
/// cuts the connection.
struct Chunks {
    receiver: mpsc::Receiver<Bytes>,
    complete: Arc<AtomicBool>,
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.receiver.poll_recv(cx).map(|chunk| match chunk {
            Some(bytes) => Some(Ok(Frame::data(bytes))),
            None if self.complete.load(Ordering::SeqCst) => None,
            None => Some(Err(std::io::Error::other(
                "the answer was cut (see the server's log)",
            ))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// Runs `render` on a sink as a heavy page does, and answers the status and what the
    /// client received: the body's bytes, or the error that cut it.
    fn serve(
        render: impl FnOnce(&mut Sink) -> Result<(), Error> + Send + 'static,
    ) -> Result<(StatusCode, Result<Vec<u8>, String>), Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (answer, answered) = oneshot::channel();
            let handle = tokio::runtime::Handle::current();
            let task = tokio::task::spawn_blocking(move || {
                let mut sink = Sink::new(handle, answer);
                let outcome = render(&mut sink);
                sink.end(outcome);
            });
            let response = match answered.await {
                Ok(r) => r?,
                Err(_) => panic!("no answer: {:?}", task.await),
            };
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes().to_vec())
                .map_err(|e| e.to_string());
            Ok((status, body))
        })
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| b'a' + (i % 26) as u8).collect()
    }

    #[test]
    fn an_answer_larger_than_a_chunk_arrives_whole() {
        let want = bytes(3 * CHUNK + 123);
        let sent = want.clone();
        let (status, body) = serve(move |sink| {
            for piece in sent.chunks(1000) {
                sink.write(piece)?;
            }
            Ok(())
        })
        .expect("answer");
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body.expect("complete"), want);
    }

    #[test]
    fn an_error_before_the_first_chunk_is_the_answer() {
        let outcome = serve(|sink| {
            sink.write(b"<p>a start")?;
            Err(Error::NotFound("no such session".into()))
        });
        assert!(matches!(outcome, Err(Error::NotFound(_))));
    }

    #[test]
    fn an_error_after_the_first_chunk_cuts_the_transfer() {
        let (status, body) = serve(|sink| {
            sink.write(&bytes(2 * CHUNK))?;
            Err(Error::NotFound("a line went missing".into()))
        })
        .expect("answer");
        assert_eq!(status, StatusCode::OK);
        assert!(body.is_err(), "the body ended as if complete");
    }

    #[test]
    fn a_render_that_panics_after_the_first_chunk_cuts_the_transfer() {
        let (_, body) = serve(|sink| {
            sink.write(&bytes(2 * CHUNK))?;
            panic!("a bug in a render");
        })
        .expect("answer");
        assert!(body.is_err(), "the body ended as if complete");
    }
}
