//! The inspector's listening thread: accepts one connection at a time, reads its request
//! under the bounds of [`http`](super::http), refuses what the [`Guard`] refuses, serves the
//! page itself, and hands every other request to the game thread, waiting (bounded) for the
//! answer [`Inspector::apply`](crate::Inspector::apply) sends back. It never touches the world.

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use crate::inspector::guard::Guard;
use crate::inspector::http::{read_request, write_response, Request, Response};
use crate::inspector::options::InspectorOptions;

/// The page, served as it is (no build step).
const PAGE: &str = include_str!("page.html");

/// How long the thread waits after a failed accept (the process out of file handles, say)
/// before it tries again.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);

/// Requests waiting for the game thread, at most this many (then 503).
pub(super) const QUEUE: usize = 32;

/// A request on its way to the game thread, with where its answer goes.
pub(super) struct Pending {
    pub request: Request,
    pub reply: mpsc::Sender<Response>,
}

/// Serves `listener` until `stop` is set (and a connection wakes it: see
/// [`Inspector`](crate::Inspector)'s `Drop`), waiting in `accept` in between.
pub(super) fn serve(
    listener: TcpListener,
    guard: Guard,
    options: InspectorOptions,
    to_game: SyncSender<Pending>,
    stop: Arc<AtomicBool>,
) {
    loop {
        let accepted = listener.accept();
        if stop.load(Ordering::Relaxed) {
            return;
        }
        match accepted {
            Ok((stream, _)) => handle(stream, &guard, &options, &to_game),
            Err(error) => {
                tracing::warn!(target: "archetype_engine", %error, "inspector connection failed");
                std::thread::sleep(ACCEPT_RETRY);
            }
        }
    }
}

/// Answers the one request of `stream`.
fn handle(
    mut stream: TcpStream,
    guard: &Guard,
    options: &InspectorOptions,
    to_game: &SyncSender<Pending>,
) {
    let configured = stream.set_nonblocking(false).is_ok()
        && stream.set_read_timeout(Some(options.io_timeout)).is_ok()
        && stream.set_write_timeout(Some(options.io_timeout)).is_ok();
    if !configured {
        return;
    }
    let response = match read_request(&mut stream, options.max_body_bytes) {
        Ok(request) => answer(request, guard, options, to_game),
        Err(refused) => match refused.response() {
            Some(response) => response,
            None => return,
        },
    };
    let _ = write_response(&mut stream, &response);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// The response to `request`: a refusal, the page, or the game thread's answer.
fn answer(
    request: Request,
    guard: &Guard,
    options: &InspectorOptions,
    to_game: &SyncSender<Pending>,
) -> Response {
    if let Some(refusal) = guard.refusal(&request) {
        return refusal;
    }
    if request.method == "GET" && request.path == "/" {
        return Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: PAGE.as_bytes().to_vec(),
        };
    }
    let (reply, answer) = mpsc::channel();
    match to_game.try_send(Pending { request, reply }) {
        Ok(()) => wait(&answer, options.reply_timeout),
        Err(TrySendError::Full(_)) => {
            Response::error(503, "the game has too many requests waiting")
        }
        Err(TrySendError::Disconnected(_)) => Response::error(503, "the game closed the inspector"),
    }
}

/// The game's answer, or 503 when it does not come in time.
fn wait(answer: &Receiver<Response>, timeout: Duration) -> Response {
    answer.recv_timeout(timeout).unwrap_or_else(|_| {
        Response::error(
            503,
            "the game did not answer in time (is it calling Inspector::apply?)",
        )
    })
}
