//! [`PrepareError`] and [`CommitError`]: why a scene could not be prepared off the game thread,
//! or committed into a world.

use std::fmt;

use hecs::Entity;

use crate::scene::load::SceneError;

/// Why [`PreparedScene::prepare`](crate::PreparedScene::prepare) gave no scene.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrepareError {
    /// The scene does not load: the same error [`load_scene`](crate::load_scene) gives, at the
    /// same file, line and column.
    Scene(SceneError),
    /// [`PrepareProgress::cancel`](crate::PrepareProgress::cancel) was called.
    Cancelled,
}

impl fmt::Display for PrepareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareError::Scene(error) => error.fmt(f),
            PrepareError::Cancelled => f.write_str("scene preparation cancelled"),
        }
    }
}

impl std::error::Error for PrepareError {}

impl From<SceneError> for PrepareError {
    fn from(error: SceneError) -> Self {
        PrepareError::Scene(error)
    }
}

/// Why [`PreparedScene::commit`](crate::PreparedScene::commit) (or a slice of it) did not
/// commit. The world is as it was before the first slice: slices committed before are undone.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommitError {
    /// The world refuses the scene: a stable ID of it is already in the world (with
    /// [`IdConflict::Error`](crate::IdConflict::Error)). The same error
    /// [`load_scene`](crate::load_scene) gives, placed in the file.
    Scene(SceneError),
    /// An archetype the scene's instances are built from was reloaded after the scene was
    /// prepared: its entities would be built from a version that is not the library's. Prepare
    /// the scene again.
    Stale {
        /// The archetype's name.
        archetype: String,
    },
    /// The library (or its component registry) is not the one the scene was prepared with.
    OtherLibrary,
    /// The world was cleared (`World::clear`) after handles were reserved for the scene
    /// ([`PreparedScene::reserve`](crate::PreparedScene::reserve), or a first
    /// [`commit_slice`](crate::PreparedScene::commit_slice)): a clear hands the same handles out
    /// again, so they may name other entities now. Nothing is despawned; prepare the scene
    /// again.
    WorldCleared,
    /// A handle reserved for the scene is no longer an empty entity: it was despawned, or given
    /// components, between the reservation and the commit. What is the scene's is despawned:
    /// the entities its earlier slices committed, and its reserved handles still empty. A
    /// handle the game gave components to is left as the game left it, an entity of the game's
    /// own now. Prepare the scene again.
    ReservedEntityLost {
        /// The reserved handle.
        entity: Entity,
    },
    /// Every entity of the scene was committed already (or the commit was abandoned).
    Finished,
}

impl fmt::Display for CommitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommitError::Scene(error) => error.fmt(f),
            CommitError::Stale { archetype } => write!(
                f,
                "archetype `{archetype}` was reloaded after the scene was prepared; prepare the scene again"
            ),
            CommitError::OtherLibrary => f.write_str(
                "the scene was prepared with another archetype library or component registry",
            ),
            CommitError::WorldCleared => f.write_str(
                "the world was cleared after handles were reserved for the scene; prepare the scene again",
            ),
            CommitError::ReservedEntityLost { entity } => write!(
                f,
                "entity {entity:?}, reserved for the scene, was despawned or given components before the commit; prepare the scene again"
            ),
            CommitError::Finished => f.write_str("the scene was committed (or abandoned) already"),
        }
    }
}

impl std::error::Error for CommitError {}
