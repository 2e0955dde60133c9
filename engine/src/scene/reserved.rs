//! [`ReservedScene`] and [`ResolvedScene`]: the two steps that take the last decoding of a
//! prepared scene off the game thread. The game thread reserves handles
//! ([`PreparedScene::reserve`]), a worker decodes the values that hold entity references with
//! them ([`ReservedScene::resolve`]), and the game thread commits ([`ResolvedScene::commit`]),
//! only moving built columns into the world. The order is in the types: only a resolved scene
//! commits.

use hecs::World;

use crate::archetype::ArchetypeLibrary;
use crate::scene::commit_error::CommitError;
use crate::scene::load::LoadedScene;
use crate::scene::prepared::PreparedScene;

/// A [`PreparedScene`] with a handle reserved in the world for each of its entities
/// ([`PreparedScene::reserve`], on the game thread), to be [`resolve`](Self::resolve)d on any
/// thread.
///
/// The reserved handles are empty entities in the world until the commit, beside one entity
/// that marks the reservation. [`abandon`](Self::abandon) despawns them; a reserved scene dropped
/// without being committed or abandoned leaves them until the next
/// [`reserve`](PreparedScene::reserve) or commit into the same world, which despawns them.
///
/// See [`PreparedScene::reserve`] for an example of the three steps.
#[derive(Debug)]
#[must_use = "the reserved handles stay in the world until the scene is committed or abandoned"]
pub struct ReservedScene {
    scene: PreparedScene,
}

impl ReservedScene {
    pub(super) fn new(scene: PreparedScene) -> Self {
        ReservedScene { scene }
    }

    /// How many entities the scene has (and handles it reserved).
    pub fn len(&self) -> usize {
        self.scene.len()
    }

    /// Whether the scene has no entity.
    pub fn is_empty(&self) -> bool {
        self.scene.is_empty()
    }

    /// Decodes the values that hold entity references, each reference mapped to the handle
    /// reserved for its target. Runs on any thread, without the world. (Such values cannot be
    /// built before: components are plain serde types, and a reference gets its handle while
    /// it is deserialized.) A value that does not decode, which would be a bug (they were
    /// encoded from decoded values), is reported by the commit.
    pub fn resolve(self) -> ResolvedScene {
        self.scene.resolve_references()
    }

    /// Despawns the reserved handles (unless the world was cleared since: then none of them is
    /// the scene's any more); the scene is not committed.
    pub fn abandon(self, world: &mut World) {
        let mut scene = self.scene;
        scene.abandon(world);
    }
}

/// A scene whose every value is built, on handles reserved in the world:
/// [`commit`](Self::commit) or [`commit_slice`](Self::commit_slice) only check the world and the library
/// and move the built columns into the world, decoding nothing. See [`ReservedScene`] for the
/// steps that lead here.
///
/// The commit checks what [`PreparedScene::commit`] checks (stable IDs already in the world,
/// archetypes reloaded since preparation, the library), and that the reserved handles are
/// still empty entities of a world that was not cleared ([`CommitError::ReservedEntityLost`],
/// [`CommitError::WorldCleared`]). A failed commit despawns the reserved handles and leaves the
/// world as it was before [`PreparedScene::reserve`].
#[derive(Debug)]
#[must_use = "the reserved handles stay in the world until the scene is committed or abandoned"]
pub struct ResolvedScene {
    scene: PreparedScene,
}

impl ResolvedScene {
    pub(super) fn new(scene: PreparedScene) -> Self {
        ResolvedScene { scene }
    }

    /// How many entities the scene has.
    pub fn len(&self) -> usize {
        self.scene.len()
    }

    /// Whether the scene has no entity.
    pub fn is_empty(&self) -> bool {
        self.scene.is_empty()
    }

    /// How many entities are not committed yet.
    pub fn remaining(&self) -> usize {
        self.scene.remaining()
    }

    /// Commits the whole scene into `world` on its reserved handles.
    ///
    /// # Errors
    /// See [`CommitError`]; the reserved handles are despawned and the world is as it was
    /// before the reservation.
    pub fn commit(
        self,
        world: &mut World,
        library: &ArchetypeLibrary,
    ) -> Result<LoadedScene, CommitError> {
        self.scene.commit(world, library)
    }

    /// Commits the next whole batches, at most `max_entities` entities (at least one batch),
    /// as [`PreparedScene::commit_slice`] does; returns `Some` with the load's report once the
    /// last entity is in.
    ///
    /// # Errors
    /// See [`CommitError`]; slices committed before are undone and the reserved handles
    /// despawned.
    pub fn commit_slice(
        &mut self,
        world: &mut World,
        library: &ArchetypeLibrary,
        max_entities: usize,
    ) -> Result<Option<LoadedScene>, CommitError> {
        self.scene.commit_slice(world, library, max_entities)
    }

    /// Takes back everything committed so far and the reserved handles, as
    /// [`PreparedScene::abandon`] does.
    pub fn abandon(&mut self, world: &mut World) {
        self.scene.abandon(world);
    }
}
