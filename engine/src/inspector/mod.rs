//! The live inspector (feature `inspector`): a small HTTP server a game opts into, serving a
//! page that shows the running world (entities, each component's fields and where each value
//! comes from, the archetype tree, the library's diagnostics), edits live values, and writes
//! them back into archetype files.
//!
//! The server thread ([`server`]) reads requests under strict bounds ([`http`]) and refuses
//! what the [`guard`] refuses; every other request travels over a channel to the game thread,
//! where [`Inspector::apply`] answers it ([`api`]) with the world and the library in hand.
//! Writing back goes through the library's own
//! [`write_to_archetype`](crate::ArchetypeLibrary::write_to_archetype) and
//! [`write_derived_archetype`](crate::ArchetypeLibrary::write_derived_archetype), then the
//! written file is reloaded and every instance patched, as hot reload does.

mod api;
mod edits;
mod entities;
mod guard;
mod http;
mod options;
mod server;

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use hecs::World;

use crate::archetype::ArchetypeLibrary;

pub use options::InspectorOptions;

/// Why the inspector could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectorError {
    /// The address is not a loopback address and
    /// [`allow_remote`](InspectorOptions::allow_remote) is off.
    #[error("{addr} is not a loopback address; set InspectorOptions::allow_remote to serve other machines")]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address could not be bound (in use, not this machine's, not resolved).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address as given.
        addr: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}

/// The live inspector: a web page showing and editing the running world. Created with
/// [`bind`](Self::bind), polled once per frame with [`apply`](Self::apply); dropping it stops
/// the server.
///
/// # Example
/// ```no_run
/// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, Inspector, InspectorOptions};
/// let mut library = ArchetypeLibrary::load("archetypes", ComponentRegistry::new())?;
/// let mut world = hecs::World::new();
/// let mut inspector = Inspector::bind("127.0.0.1:0", InspectorOptions::default())?;
/// println!("{}", inspector.url());
/// loop {
///     inspector.apply(&mut world, &mut library);
///     // ... the game's frame ...
/// #   break;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Inspector {
    addr: SocketAddr,
    url: String,
    requests: Receiver<server::Pending>,
    max_per_apply: usize,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Inspector {
    /// Starts the server at `addr` (`"127.0.0.1:0"` picks a free port) with a fresh token.
    ///
    /// # Errors
    /// [`InspectorError::NotLoopback`] for an address another machine could reach (unless
    /// allowed), [`InspectorError::Bind`] when it cannot be listened on.
    pub fn bind(
        addr: impl ToSocketAddrs + std::fmt::Display,
        options: InspectorOptions,
    ) -> Result<Inspector, InspectorError> {
        let shown = addr.to_string();
        let bind_error = |source| InspectorError::Bind {
            addr: shown.clone(),
            source,
        };
        let resolved: Vec<SocketAddr> = addr.to_socket_addrs().map_err(bind_error)?.collect();
        if let Some(remote) = resolved.iter().find(|a| !a.ip().is_loopback()) {
            if !options.allow_remote {
                return Err(InspectorError::NotLoopback { addr: *remote });
            }
        }
        let listener = TcpListener::bind(&resolved[..]).map_err(bind_error)?;
        let local = listener.local_addr().map_err(bind_error)?;
        let token = guard::new_token();
        let guard = guard::Guard::new(
            local,
            token.clone(),
            &options.allowed_hosts,
            options.read_only,
        );
        let (to_game, requests) = mpsc::sync_channel(server::QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let max_per_apply = options.max_requests_per_apply.max(1);
        let thread = std::thread::Builder::new()
            .name("archetype-inspector".to_string())
            .spawn({
                let stop = stop.clone();
                move || server::serve(listener, guard, options, to_game, stop)
            })
            .map_err(bind_error)?;
        let host = match local {
            SocketAddr::V4(v4) if v4.ip().is_loopback() => format!("127.0.0.1:{}", v4.port()),
            other => other.to_string(),
        };
        Ok(Inspector {
            addr: local,
            url: format!("http://{host}/?token={token}"),
            requests,
            max_per_apply,
            stop,
            thread: Some(thread),
        })
    }

    /// The page's address with the token: what to open in a browser (and to print).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers the requests waiting (at most
    /// [`max_requests_per_apply`](InspectorOptions::max_requests_per_apply)) with the world
    /// and library: reads, live edits, and writes to archetype files (each written file is
    /// reloaded and its instances patched before the next request). Call once per frame;
    /// with nothing waiting it returns at once. Returns how many requests it answered.
    pub fn apply(&mut self, world: &mut World, library: &mut ArchetypeLibrary) -> usize {
        let mut answered = 0;
        while answered < self.max_per_apply {
            let Ok(pending) = self.requests.try_recv() else {
                break;
            };
            let response = api::answer(&pending.request, world, library);
            let _ = pending.reply.send(response);
            answered += 1;
        }
        answered
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // A request waiting for the game gets its answer now rather than at its timeout.
        while let Ok(pending) = self.requests.try_recv() {
            let closing = http::Response::error(503, "the game closed the inspector");
            let _ = pending.reply.send(closing);
        }
        if let Some(thread) = self.thread.take() {
            // A connection wakes the thread from `accept`; it sees `stop` and returns. If the
            // connection fails (no handles left), the thread is left to end with the process
            // rather than joined forever.
            let wake = std::net::TcpStream::connect_timeout(&self.wake_addr(), WAKE_TIMEOUT);
            if wake.is_ok() {
                let _ = thread.join();
            }
        }
    }
}

/// How long closing the inspector tries to reach its own thread.
const WAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

impl Inspector {
    /// Where the inspector's own thread is reached: its address, the loopback one when it
    /// listens on every address.
    fn wake_addr(&self) -> SocketAddr {
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            let loopback: std::net::IpAddr = match addr {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            };
            addr.set_ip(loopback);
        }
        addr
    }
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}
