//! [`InspectorOptions`]: how the inspector listens and what it allows.

use std::time::Duration;

/// How an [`Inspector`](crate::Inspector) listens and what it allows. Start from
/// [`InspectorOptions::default`] and change what you need.
///
/// # Example
/// ```
/// let mut options = archetype_engine::InspectorOptions::default();
/// options.read_only = true;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct InspectorOptions {
    /// Refuse every write (editing a field, writing an archetype file); default `false`.
    pub read_only: bool,
    /// Allow binding an address other than loopback (another machine could then reach the
    /// inspector, with the token); default `false`.
    pub allow_remote: bool,
    /// Host names (without port) a request's `Host` may name beside `127.0.0.1`,
    /// `localhost`, `[::1]` and the bound address; default none.
    pub allowed_hosts: Vec<String>,
    /// Largest request body read, in bytes (default 64 KiB).
    pub max_body_bytes: usize,
    /// How long reading a request or writing a response may take (default 2 s).
    pub io_timeout: Duration,
    /// How long a request waits for the game's next [`apply`](crate::Inspector::apply)
    /// (default 5 s); then it is answered 503.
    pub reply_timeout: Duration,
    /// Most requests one [`apply`](crate::Inspector::apply) answers (default 8): a burst
    /// spreads over frames rather than stalling one.
    pub max_requests_per_apply: usize,
}

impl Default for InspectorOptions {
    fn default() -> Self {
        InspectorOptions {
            read_only: false,
            allow_remote: false,
            allowed_hosts: Vec::new(),
            max_body_bytes: 64 * 1024,
            io_timeout: Duration::from_secs(2),
            reply_timeout: Duration::from_secs(5),
            max_requests_per_apply: 8,
        }
    }
}
