//! [`Archetype`]: one loaded archetype, as the library currently serves it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::archetype::compiled::CompiledArchetype;
use crate::archetype::resolved_tree::ResolvedTree;
use crate::archetype::resolver::ResolvedEntity;
use crate::component::ArchetypeId;

/// A loaded archetype: its name, file, parents, and fully resolved content.
///
/// Values of this type are immutable snapshots; a reload produces a new one (the library hands
/// out `Arc<Archetype>`s, so a snapshot stays valid while you hold it).
pub struct Archetype {
    pub(crate) id: ArchetypeId,
    pub(crate) name: Arc<str>,
    pub(crate) file: PathBuf,
    pub(crate) is_abstract: bool,
    pub(crate) extends: Vec<String>,
    /// Reads as the [`ResolvedEntity`]; built on first read for an archetype nothing builds on.
    pub(crate) resolved: ResolvedTree,
    /// The longest chain of archetypes it is built on, itself included (through `extends` and
    /// children's `archetype`): an edit building on it is held to the same bound as a load.
    pub(crate) depth: usize,
    pub(crate) compiled: Option<CompiledArchetype>,
}

impl Archetype {
    /// The archetype's ID in its library.
    pub fn id(&self) -> ArchetypeId {
        self.id
    }

    /// The archetype's name, e.g. `enemies/goblin`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it was loaded from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Whether it can only be extended, not spawned.
    pub fn is_abstract(&self) -> bool {
        self.is_abstract
    }

    /// Its direct parents, in the order they are applied.
    pub fn extends(&self) -> &[String] {
        &self.extends
    }

    /// Its content with inheritance applied: every component's full JSON value and every child.
    pub fn resolved(&self) -> &ResolvedEntity {
        &self.resolved
    }

    /// The paths of the entities an instance consists of: `""` for the root, then children
    /// (`"turret"`, `"turret/barrel"`), depth-first in name order. Empty for abstract archetypes.
    pub fn entity_paths(&self) -> impl Iterator<Item = &str> {
        self.compiled
            .iter()
            .flat_map(|compiled| compiled.nodes.iter().map(|node| &*node.path))
    }
}

impl std::fmt::Debug for Archetype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archetype")
            .field("name", &self.name)
            .field("file", &self.file)
            .field("is_abstract", &self.is_abstract)
            .field("extends", &self.extends)
            .finish_non_exhaustive()
    }
}
