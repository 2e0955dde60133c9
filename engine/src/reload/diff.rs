//! [`ArchetypeDiff`]: what changed between two versions of a concrete archetype, entity by
//! entity and field by field. Pure: no world, no files.
//!
//! Values are compared in their canonical form (deserialized, then serialized again), so a
//! file that spells a default out (`"translation": [0, 0, 0]`) or writes `2` for `2.0` changes
//! nothing, and a patch only ever names fields whose typed value really changed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::archetype::Archetype;
use crate::archetype::CompiledNode;
use crate::component::{ComponentId, ComponentRegistry};
use crate::json::merge_patch;

/// How one entity of an archetype instance changes.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NodeDiff {
    /// The node number in instance markers.
    pub node: u32,
    /// The node's index in the old version's compiled nodes.
    pub old_index: usize,
    /// The node's index in the new version's compiled nodes.
    pub new_index: usize,
    pub changes: Vec<ComponentChange>,
}

/// How one component of one entity changes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ComponentChange {
    /// Fields changed: apply this merge patch to live components.
    Patch(ComponentId, Value),
    /// The archetype gained the component.
    Add(ComponentId),
    /// The archetype lost the component.
    Remove(ComponentId),
}

/// Everything that changed between two versions of a concrete archetype.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ArchetypeDiff {
    /// Entities in both versions whose components changed.
    pub nodes: Vec<NodeDiff>,
    /// Entities only in the new version (indices into its compiled nodes, parents first).
    pub added: Vec<usize>,
    /// Entities only in the old version (node numbers).
    pub removed: Vec<u32>,
}

impl ArchetypeDiff {
    /// Whether nothing changes for live instances.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}

/// Compares two concrete versions of one archetype. `None` if either is abstract.
pub(super) fn diff_archetypes(
    registry: &ComponentRegistry,
    old: &Archetype,
    new: &Archetype,
) -> Option<ArchetypeDiff> {
    let (old_compiled, new_compiled) = (old.compiled.as_ref()?, new.compiled.as_ref()?);
    let mut diff = ArchetypeDiff::default();
    for (new_index, new_node) in new_compiled.nodes.iter().enumerate() {
        let Some((old_index, old_node)) = old_compiled
            .nodes
            .iter()
            .enumerate()
            .find(|(_, n)| n.path == new_node.path)
        else {
            diff.added.push(new_index);
            continue;
        };
        let alike = alike_components(registry, old_node, new_node);
        let before = canonical_components(registry, old, old_node, &alike);
        let after = canonical_components(registry, new, new_node, &alike);
        let mut changes = Vec::new();
        for (id, old_value) in &before {
            match after.get(id) {
                None => changes.push(ComponentChange::Remove(*id)),
                Some(new_value) => {
                    let Some(mut patch) = merge_patch::diff(old_value, new_value) else {
                        continue;
                    };
                    // Live entities keep the values they rolled; later spawns roll anew.
                    let masks = [new_node.varied_mask(*id), old_node.varied_mask(*id)];
                    let mut left = true;
                    for mask in masks.iter().flatten() {
                        left = left && merge_patch::remove_overridden(&mut patch, mask);
                    }
                    if left {
                        changes.push(ComponentChange::Patch(*id, patch));
                    }
                }
            }
        }
        for id in after.keys() {
            if !before.contains_key(id) {
                changes.push(ComponentChange::Add(*id));
            }
        }
        if !changes.is_empty() {
            diff.nodes.push(NodeDiff {
                node: new_node.marker.node,
                old_index,
                new_index,
                changes,
            });
        }
    }
    for old_node in &old_compiled.nodes {
        if !new_compiled.nodes.iter().any(|n| n.path == old_node.path) {
            diff.removed.push(old_node.marker.node);
        }
    }
    Some(diff)
}

/// The components without `#` references that both versions of an entity have, with values
/// known to be alike (`ValueOps::known_alike`):
/// nothing of them changes, and they are not encoded to be compared.
fn alike_components(
    registry: &ComponentRegistry,
    old: &CompiledNode,
    new: &CompiledNode,
) -> Vec<ComponentId> {
    (new.typed.iter())
        .filter(|(id, after)| {
            (old.typed.iter()).any(|(old_id, before)| {
                old_id == id && registry.ops(*id).known_alike(before, after)
            })
        })
        .map(|(id, _)| *id)
        .collect()
}

/// Component → canonical JSON of one compiled entity, but for the components `alike` (left out
/// of both versions' maps). Components holding `#` references keep their written form (their
/// canonical form depends on the instance).
fn canonical_components(
    registry: &ComponentRegistry,
    archetype: &Archetype,
    node: &CompiledNode,
    alike: &[ComponentId],
) -> BTreeMap<ComponentId, Value> {
    let mut out = BTreeMap::new();
    for (id, typed) in &node.typed {
        if alike.contains(id) {
            continue;
        }
        let value = registry.ops(*id).encode(typed).unwrap_or_else(|_| {
            // Encoding what was just decoded only fails for hostile serde impls; fall back to
            // the written value so the change is still applied.
            written_value(archetype, node, *id, registry)
        });
        out.insert(*id, value);
    }
    for (id, value) in &node.with_refs {
        out.insert(*id, value.clone());
    }
    out
}

fn written_value(
    archetype: &Archetype,
    node: &CompiledNode,
    id: ComponentId,
    registry: &ComponentRegistry,
) -> Value {
    archetype
        .resolved
        .entity_at(&node.path)
        .and_then(|entity| entity.components.get(registry.name(id)))
        .cloned()
        .unwrap_or(Value::Null)
}
