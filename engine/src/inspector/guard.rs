//! Who may talk to the inspector: a request carries the run's token, names an allowed host
//! (so a page on another site cannot reach it through DNS rebinding) and, if a browser sends
//! one, an allowed origin (so another site's page cannot write); a write is JSON (a
//! cross-site form cannot send it without a preflight the inspector never answers) and is
//! refused outright in read-only mode. Checked on the server thread: a refused request never
//! reaches the game.

use std::net::SocketAddr;

use crate::inspector::http::{Request, Response};

/// The header a request may carry the token in (the page does); else the `token` parameter.
pub(super) const TOKEN_HEADER: &str = "x-inspector-token";

/// What a request is checked against.
#[derive(Debug, Clone)]
pub(super) struct Guard {
    pub token: String,
    /// Accepted `Host` values (`127.0.0.1:8080`, `localhost:8080`, ...).
    pub hosts: Vec<String>,
    pub read_only: bool,
}

impl Guard {
    /// The guard of an inspector at `addr`, with `extra` host names allowed beside the
    /// loopback names and the address itself.
    pub fn new(addr: SocketAddr, token: String, extra: &[String], read_only: bool) -> Guard {
        let port = addr.port();
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
            addr.to_string(),
        ];
        hosts.extend(extra.iter().map(|host| format!("{host}:{port}")));
        Guard {
            token,
            hosts,
            read_only,
        }
    }

    /// The refusal of `request`, or `None` if it may go on.
    pub fn refusal(&self, request: &Request) -> Option<Response> {
        let host = request.header("host").unwrap_or("");
        if !self.hosts.iter().any(|allowed| allowed == host) {
            return Some(Response::error(
                403,
                format!("host `{host}` is not allowed"),
            ));
        }
        let token = (request.header(TOKEN_HEADER)).or_else(|| request.param("token"));
        if !token.is_some_and(|token| same_token(token, &self.token)) {
            return Some(Response::error(401, "missing or wrong token"));
        }
        if let Some(origin) = request.header("origin") {
            let allowed = (self.hosts.iter()).any(|host| origin == format!("http://{host}"));
            if !allowed {
                return Some(Response::error(
                    403,
                    format!("origin `{origin}` is not allowed"),
                ));
            }
        }
        if request.method == "GET" {
            return None;
        }
        if request.method != "POST" {
            return Some(Response::error(405, "only GET and POST"));
        }
        if self.read_only {
            return Some(Response::error(403, "the inspector is read-only"));
        }
        let json = (request.header("content-type"))
            .is_some_and(|kind| kind.starts_with("application/json"));
        if !json {
            return Some(Response::error(415, "a write is application/json"));
        }
        None
    }
}

/// Compares tokens in time that does not depend on where they differ.
fn same_token(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && (given.bytes().zip(token.bytes())).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// A fresh token: 128 bits from the standard library's per-process random hash keys, mixed
/// with the clock and a counter (no dependency for one random number per run).
pub(super) fn new_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = || {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u128(nanos);
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(), half())
}
