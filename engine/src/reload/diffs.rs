//! Every changed archetype's [`ArchetypeDiff`] of a library update, found on other cores while
//! the calling thread does its own work (finding the live instances in the world). A diff is a
//! pure function of the two versions, so where it is found changes nothing.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::archetype::{worker_threads, ArchetypeChange};
use crate::component::ComponentRegistry;
use crate::reload::diff::{diff_archetypes, ArchetypeDiff};

/// From this many changes the diffs are found on other cores: below it, starting threads
/// would cost more than it saves.
const PARALLEL_MIN_CHANGES: usize = 64;

/// Each change's diff (`None`: an archetype added, deleted or abstract on either side, or
/// nothing changed for live instances), in the order of `changes`, and what `beside` gave.
/// `beside` runs on this thread while other cores find the diffs; then this thread helps.
pub(super) fn diffs_beside<R>(
    registry: &ComponentRegistry,
    changes: &[ArchetypeChange],
    beside: impl FnOnce() -> R,
) -> (Vec<Option<ArchetypeDiff>>, R) {
    let threads = worker_threads();
    if threads < 2 || changes.len() < PARALLEL_MIN_CHANGES {
        let found = beside();
        let diffs = changes.iter().map(|c| diff_of(registry, c)).collect();
        return (diffs, found);
    }
    let next = AtomicUsize::new(0);
    let claim = || claim_and_diff(registry, changes, &next);
    let (found, done) = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads).map(|_| scope.spawn(claim)).collect();
        let found = beside();
        let mut done = claim();
        for worker in workers {
            // A panic in a worker is a bug: what it claimed is missing and found again below,
            // where the panic surfaces.
            if let Ok(more) = worker.join() {
                done.extend(more);
            }
        }
        (found, done)
    });
    let mut diffs: Vec<Option<Option<ArchetypeDiff>>> = changes.iter().map(|_| None).collect();
    for (index, diff) in done {
        diffs[index] = Some(diff);
    }
    let diffs = (diffs.into_iter().zip(changes))
        .map(|(diff, change)| diff.unwrap_or_else(|| diff_of(registry, change)))
        .collect();
    (diffs, found)
}

/// Claims changes one at a time (through `next`) until none is left; returns each claimed
/// change's index and diff.
fn claim_and_diff(
    registry: &ComponentRegistry,
    changes: &[ArchetypeChange],
    next: &AtomicUsize,
) -> Vec<(usize, Option<ArchetypeDiff>)> {
    let mut done = Vec::new();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(change) = changes.get(index) else {
            return done;
        };
        done.push((index, diff_of(registry, change)));
    }
}

/// The diff of one change, when it has one that changes live instances.
fn diff_of(registry: &ComponentRegistry, change: &ArchetypeChange) -> Option<ArchetypeDiff> {
    let (Some(old), Some(new)) = (&change.old, &change.new) else {
        return None;
    };
    diff_archetypes(registry, old, new).filter(|diff| !diff.is_empty())
}
