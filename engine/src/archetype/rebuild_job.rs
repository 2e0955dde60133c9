//! [`RebuildJob`]: the work a rebuild hands to other cores, and what comes back.
//!
//! The rebuild's own thread resolves, in order, every archetype that others build on: what
//! resolving one finds (cycles, chains too deep) can depend on what was resolved before it. An
//! archetype nothing builds on (a leaf of the `extends` tree: most of a library) reads only its
//! file and its dependencies' trees, so once those are resolved it is resolved, compiled and
//! hashed on any core ([`resolve_alone`](crate::archetype::resolver::resolve_alone)). On a
//! first load its tree is dropped there too: nothing compares it, and it is built again when
//! read.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use crate::archetype::compiled::{CompileProblem, CompiledArchetype};
use crate::archetype::resolved_tree::TreeHash;
use crate::archetype::resolver::{DependencyTree, ResolveWarning, ResolvedEntity};

/// One piece of a rebuild's work for any core.
pub(super) enum RebuildJob {
    /// Compile an archetype resolved on the rebuild's thread.
    Compile(Arc<str>, Arc<ResolvedEntity>),
    /// Resolve an archetype nothing builds on from its dependencies' trees, and compile it.
    Leaf(Arc<str>, Box<[DependencyTree]>),
}

/// A compiled archetype, the problems found compiling it, and the entity paths it uses that its
/// slot has not interned yet (in the order they were given numbers).
pub(super) struct Compiled {
    pub compiled: Option<CompiledArchetype>,
    pub problems: Vec<CompileProblem>,
    pub new_nodes: Vec<Arc<str>>,
    /// The archetype names its values name (`ArchetypeRef`s).
    pub references: Vec<Arc<str>>,
}

/// What compiling an archetype gave, and the hash of the tree it was compiled from.
pub(super) type CompileDone = (Compiled, TreeHash);

/// What a job gave.
pub(super) enum JobDone {
    /// A [`RebuildJob::Compile`] compiled.
    Compiled(CompileDone),
    /// A [`RebuildJob::Leaf`] resolved and compiled.
    Leaf(LeafDone),
}

/// A leaf resolved and compiled on some core.
pub(super) struct LeafDone {
    /// Its tree; `None` when it was dropped (a first load: nothing compares it).
    pub tree: Option<Arc<ResolvedEntity>>,
    /// Its depth (see [`MAX_ARCHETYPE_DEPTH`](crate::archetype::resolver::MAX_ARCHETYPE_DEPTH)).
    pub depth: usize,
    /// The operators it settled with nothing to work on.
    pub unused: Vec<ResolveWarning>,
    /// What compiling it gave.
    pub compiled: CompileDone,
}

/// Runs (with `run`) the jobs `queue` gives until it is closed and empty; returns what they
/// gave. A job that gives nothing (an archetype with no file, a leaf that does not resolve on
/// its own) is left for the rebuild's thread.
pub(super) fn run_queued(
    queue: &Mutex<mpsc::Receiver<RebuildJob>>,
    run: &impl Fn(RebuildJob) -> Option<(Arc<str>, JobDone)>,
) -> Vec<(Arc<str>, JobDone)> {
    let mut done = Vec::new();
    loop {
        // The lock is held while waiting for a job, not while doing it.
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => break,
        };
        let Ok(job) = job else { break };
        done.extend(run(job));
    }
    done
}
