//! The instance marker: which archetype (and which child of it) an entity was spawned from.
//!
//! A built-in component, so it lives beside the others; the archetype layer gives the numbers
//! in it meaning (`archetype/instance.rs` keeps the override shapes [`OverridesId`] names).

use serde::{Deserialize, Serialize};

/// The index of an archetype name in its [`ArchetypeLibrary`](crate::ArchetypeLibrary).
///
/// IDs are never reused within a library: a deleted archetype keeps its ID, so its live
/// instances can still say where they came from, and it gets the same ID back if the file
/// returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ArchetypeId(pub u32);

/// Marks an entity spawned from an archetype: the archetype, the node inside it (`0` is the
/// root, other numbers are children; see [`ArchetypeLibrary::node_path`]) and which of its
/// fields the instance overrides (see [`ArchetypeLibrary::instance_overrides`]).
///
/// Set by the library on every spawned entity (root and children) and kept small (12 bytes,
/// `Copy`) because every live instance carries it: an instance with overrides holds no other
/// component for them, so it is spawned with the same columns as one without.
///
/// [`ArchetypeLibrary::node_path`]: crate::ArchetypeLibrary::node_path
/// [`ArchetypeLibrary::instance_overrides`]: crate::ArchetypeLibrary::instance_overrides
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ArchetypeInstance {
    /// The archetype the entity was spawned from.
    pub archetype: ArchetypeId,
    /// Which entity of the archetype: `0` for the root, otherwise an interned child path.
    pub node: u32,
    /// The shape of the instance's overrides, [`OverridesId::NONE`] for none. A number in the
    /// table of the library that spawned or loaded the instance: it means nothing to another
    /// library or process (scenes save the overrides themselves, as differences).
    #[serde(default)]
    pub overrides: OverridesId,
}

impl ArchetypeInstance {
    /// The node number of an archetype's root entity.
    pub const ROOT: u32 = 0;

    /// Whether this entity is the root of its archetype instance.
    pub fn is_root(&self) -> bool {
        self.node == Self::ROOT
    }

    /// Whether the instance overrides some of its archetype's fields.
    pub fn has_overrides(&self) -> bool {
        self.overrides != OverridesId::NONE
    }
}

/// Names the shape of an instance's overrides in its library: the same number for every
/// instance with the same shape set the same way (by a spawn, or by a scene entry), for as
/// long as the library lives. [`ArchetypeLibrary::instance_overrides`] gives the shape,
/// [`ArchetypeLibrary::instance_override_origin`] where it was set.
///
/// [`ArchetypeLibrary::instance_overrides`]: crate::ArchetypeLibrary::instance_overrides
/// [`ArchetypeLibrary::instance_override_origin`]: crate::ArchetypeLibrary::instance_override_origin
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OverridesId(pub(crate) u32);

impl OverridesId {
    /// No overrides: the instance is its archetype's values (as spawned, before it changed).
    pub const NONE: OverridesId = OverridesId(0);
}
