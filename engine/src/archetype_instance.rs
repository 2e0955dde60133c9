//! The instance marker: which archetype (and which child of it) an entity was spawned from.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The index of an archetype name in its [`ArchetypeLibrary`](crate::ArchetypeLibrary).
///
/// IDs are never reused within a library: a deleted archetype keeps its ID, so its live
/// instances can still say where they came from, and it gets the same ID back if the file
/// returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ArchetypeId(pub u32);

/// Marks an entity spawned from an archetype: the archetype and the node inside it (`0` is the
/// root, other numbers are children; see [`ArchetypeLibrary::node_path`]).
///
/// Set by the library on every spawned entity (root and children) and kept small (8 bytes,
/// `Copy`) because every live instance carries it.
///
/// [`ArchetypeLibrary::node_path`]: crate::ArchetypeLibrary::node_path
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArchetypeInstance {
    /// The archetype the entity was spawned from.
    pub archetype: ArchetypeId,
    /// Which entity of the archetype: `0` for the root, otherwise an interned child path.
    pub node: u32,
}

impl ArchetypeInstance {
    /// The node number of an archetype's root entity.
    pub const ROOT: u32 = 0;

    /// Whether this entity is the root of its archetype instance.
    pub fn is_root(&self) -> bool {
        self.node == Self::ROOT
    }
}

/// Per-instance overrides: component name → merge patch applied on top of the archetype when
/// the entity was spawned (or loaded from a scene).
///
/// Hot reload leaves every place an override sets alone, the way Unity treats prefab instance
/// overrides. Only entities that have overrides carry this component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceOverrides(pub Arc<Map<String, Value>>);
