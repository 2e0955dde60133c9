//! [`PrepareProgress`]: how far a scene's preparation off the game thread has come, and the
//! switch that cancels it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::component::serde_context::{self, Progress};

/// The progress of a [`PreparedScene`](crate::PreparedScene)'s preparation, shared between
/// the thread that prepares and the one that draws the loading screen; also cancels it.
///
/// Clones share the same counters. Preparation has two stages: reading and decoding the file
/// ([`bytes`](Self::bytes): the loader reports how far into the file its entries are, every
/// 256 entries, then the whole file once archetype instances are built), then sorting every
/// entity into its batch ([`entries`](Self::entries), counted as it goes).
/// [`cancel`](Self::cancel) is seen at each of those reports: preparation then stops with
/// [`PrepareError::Cancelled`](crate::PrepareError::Cancelled).
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

/// Entries between two reports of the loader.
pub(super) const REPORT_EVERY: usize = 256;

/// Runs `f` (a load) with `progress` receiving the loader's reports on this thread.
pub(super) fn reporting_to<R>(progress: &PrepareProgress, f: impl FnOnce() -> R) -> R {
    serde_context::scoped::<Progress, _>(Some(Box::new(progress.clone())), f).0
}

/// The loader has read the file up to byte `offset`; `false` if the preparation it runs for
/// was cancelled (the loader then stops). Without a preparation on this thread, `true`.
pub(super) fn report_offset(offset: usize) -> bool {
    serde_context::with::<Progress, _>(|slot| {
        let slot = slot.borrow();
        let Some(progress) = slot
            .as_ref()
            .and_then(|any| any.downcast_ref::<PrepareProgress>())
        else {
            return true;
        };
        let total = progress.state.bytes_total.load(Ordering::Relaxed);
        let done = (offset as u64).min(total);
        progress.state.bytes_done.fetch_max(done, Ordering::Relaxed);
        !progress.is_cancelled()
    })
}

/// Whether a preparation running on this thread was cancelled.
pub(super) fn cancelled() -> bool {
    !report_offset(0)
}
