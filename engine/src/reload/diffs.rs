//! Every changed archetype's [`ArchetypeDiff`] of a library update, found on other cores while
//! the calling thread does its own work (finding the live instances, then patching them one
//! change after another as their diffs come). A diff is a pure function of the two versions,
//! so where it is found changes nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::archetype::{worker_threads, ArchetypeChange};
use crate::component::ComponentRegistry;
use crate::reload::diff::{diff_archetypes, ArchetypeDiff};

/// From this many changes the diffs are found on other cores: below it, starting threads
/// would cost more than it saves.
const PARALLEL_MIN_CHANGES: usize = 64;

/// Runs `work` on this thread with a [`DiffFeed`] of `changes`' diffs, found meanwhile on
/// other cores (all of them on this thread, as `work` asks for them, when there are few).
pub(super) fn with_diffs<R>(
    registry: &ComponentRegistry,
    changes: &[ArchetypeChange],
    work: impl FnOnce(&mut DiffFeed<'_>) -> R,
) -> R {
    let threads = worker_threads();
    let next = AtomicUsize::new(0);
    let (sender, found) = mpsc::channel();
    let mut feed = DiffFeed {
        registry,
        changes,
        next: &next,
        found,
        early: changes.iter().map(|_| None).collect(),
        turn: 0,
    };
    if threads < 2 || changes.len() < PARALLEL_MIN_CHANGES {
        drop(sender);
        return work(&mut feed);
    }
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let sender = sender.clone();
            let next = &next;
            // A panic in a worker is a bug: what it claimed never comes, and is found again
            // on this thread (`DiffFeed::next`), where the panic surfaces.
            scope.spawn(move || {
                while let Some((index, diff)) = claim_and_diff(registry, changes, next) {
                    if sender.send((index, diff)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        work(&mut feed)
    })
}

/// The diffs of a library update's changes, in their order, as other cores find them.
pub(super) struct DiffFeed<'a> {
    registry: &'a ComponentRegistry,
    changes: &'a [ArchetypeChange],
    /// The first change no thread has claimed yet.
    next: &'a AtomicUsize,
    found: mpsc::Receiver<(usize, Option<ArchetypeDiff>)>,
    /// Diffs that came before their turn (`Some`), by change.
    early: Vec<Option<Option<ArchetypeDiff>>>,
    /// The change whose diff is given next.
    turn: usize,
}

impl DiffFeed<'_> {
    /// The diff of the next change (`None`: an archetype added, deleted or abstract on either
    /// side, or nothing changed for live instances). While it is not found, this thread finds
    /// the diffs no other has claimed, and then waits for it.
    pub(super) fn next_diff(&mut self) -> Option<ArchetypeDiff> {
        let turn = self.turn;
        self.turn += 1;
        loop {
            if let Some(diff) = self.early.get_mut(turn).and_then(Option::take) {
                return diff;
            }
            if let Some((index, diff)) = claim_and_diff(self.registry, self.changes, self.next) {
                self.keep(index, diff);
                continue;
            }
            match self.found.recv() {
                Ok((index, diff)) => self.keep(index, diff),
                // Every other thread is gone without it (a panic): found here.
                Err(_) => {
                    return self
                        .changes
                        .get(turn)
                        .and_then(|c| diff_of(self.registry, c))
                }
            }
        }
    }

    fn keep(&mut self, index: usize, diff: Option<ArchetypeDiff>) {
        if let Some(slot) = self.early.get_mut(index) {
            *slot = Some(diff);
        }
    }
}

/// Claims the next change no thread has claimed (through `next`) and finds its diff; `None`
/// when none is left.
fn claim_and_diff(
    registry: &ComponentRegistry,
    changes: &[ArchetypeChange],
    next: &AtomicUsize,
) -> Option<(usize, Option<ArchetypeDiff>)> {
    let index = next.fetch_add(1, Ordering::Relaxed);
    let change = changes.get(index)?;
    Some((index, diff_of(registry, change)))
}

/// The diff of one change, when it has one that changes live instances.
fn diff_of(registry: &ComponentRegistry, change: &ArchetypeChange) -> Option<ArchetypeDiff> {
    let (Some(old), Some(new)) = (&change.old, &change.new) else {
        return None;
    };
    diff_archetypes(registry, old, new).filter(|diff| !diff.is_empty())
}
