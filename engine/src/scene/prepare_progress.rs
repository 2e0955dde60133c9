//! [`PrepareProgress`]: how far a scene's preparation off the game thread has come, and the
//! switch that cancels it (issue 23).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The progress of a [`PreparedScene`](crate::PreparedScene)'s preparation, shared between
/// the thread that prepares and the one that draws the loading screen; also cancels it.
///
/// Clones share the same counters. Preparation has two stages: reading and decoding the file
/// ([`bytes`](Self::bytes), counted when the stage ends: the decoding runs as one step), then
/// sorting every entity into its batch ([`entries`](Self::entries), counted as it goes).
/// [`cancel`](Self::cancel) is seen between the stages and between batches: preparation then
/// stops with [`PrepareError::Cancelled`](crate::PrepareError::Cancelled).
///
/// # Example
/// ```
/// use archetype_engine::PrepareProgress;
/// let progress = PrepareProgress::new();
/// assert_eq!(progress.fraction(), 0.0);
/// let seen_by_worker = progress.clone();
/// progress.cancel();
/// assert!(seen_by_worker.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct PrepareProgress {
    state: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    bytes_done: AtomicU64,
    bytes_total: AtomicU64,
    entries_done: AtomicU64,
    entries_total: AtomicU64,
    cancelled: AtomicBool,
}

impl PrepareProgress {
    /// Progress at zero, not cancelled.
    pub fn new() -> Self {
        PrepareProgress::default()
    }

    /// Asks the preparation to stop; it does at its next check.
    pub fn cancel(&self) {
        self.state.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.state.cancelled.load(Ordering::Relaxed)
    }

    /// Bytes of the file read and decoded, of its size: `(done, total)`.
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.state.bytes_done.load(Ordering::Relaxed),
            self.state.bytes_total.load(Ordering::Relaxed),
        )
    }

    /// Entities sorted into batches, of the scene's entities: `(done, total)`; the total is
    /// known once the file is decoded (0 before).
    pub fn entries(&self) -> (u64, u64) {
        (
            self.state.entries_done.load(Ordering::Relaxed),
            self.state.entries_total.load(Ordering::Relaxed),
        )
    }

    /// The whole preparation done, from 0.0 to 1.0 (the two stages weigh one half each), for a
    /// progress bar.
    pub fn fraction(&self) -> f32 {
        let half = |(done, total): (u64, u64)| {
            if total == 0 {
                0.0
            } else {
                done.min(total) as f32 / total as f32 * 0.5
            }
        };
        half(self.bytes()) + half(self.entries())
    }

    pub(super) fn set_bytes(&self, done: u64, total: u64) {
        self.state.bytes_total.store(total, Ordering::Relaxed);
        self.state.bytes_done.store(done, Ordering::Relaxed);
    }

    pub(super) fn set_entries(&self, done: u64, total: u64) {
        self.state.entries_total.store(total, Ordering::Relaxed);
        self.state.entries_done.store(done, Ordering::Relaxed);
    }
}
