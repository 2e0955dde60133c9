//! The instance marker: which archetype (and which child of it) an entity was spawned from.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::component::ComponentId;
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

/// Per-instance overrides: which places of which components were set for this entity on top of
/// its archetype when it was spawned (`spawn_with`) or loaded from a scene — component name →
/// the shape of the patch: `true` where it set a value, `null` where it removed the component,
/// an object where it went into one (`{"Health": {"max": true}, "Speed": null}`).
///
/// Hot reload leaves every place an override sets alone, the way Unity treats prefab instance
/// overrides. The values themselves live in the entity's components; the shape is shared by
/// every entity with the same one (an `Arc`), so an override costs an entity a pointer. Only
/// entities that have overrides carry this component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceOverrides(pub Arc<Map<String, Value>>);

/// The shape of an override patch (see [`InstanceOverrides`]): objects kept, `null` kept (a
/// removal), every other value `true`.
pub(crate) fn override_shape(patch: &Value) -> Value {
    match patch {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, member)| (key.clone(), override_shape(member)))
                .collect(),
        ),
        Value::Null => Value::Null,
        _ => Value::Bool(true),
    }
}

/// The override shapes in use, each kept once and shared by every entity that has it.
#[derive(Debug, Default)]
pub(crate) struct OverrideShapes {
    shapes: Mutex<FxHashMap<String, Arc<Map<String, Value>>>>,
    /// Shapes that set whole components (typed spawn parameters), by their sorted components.
    whole: Mutex<FxHashMap<Vec<ComponentId>, InstanceOverrides>>,
}

impl OverrideShapes {
    /// The shared copy of `shape` (component name → shape).
    pub fn intern(&self, shape: Map<String, Value>) -> InstanceOverrides {
        // A map of JSON values always serializes.
        let key = serde_json::to_string(&shape).unwrap_or_default();
        let mut shapes = match self.shapes.lock() {
            Ok(shapes) => shapes,
            // A panic elsewhere while holding the lock leaves the table as it was: use it.
            Err(poisoned) => poisoned.into_inner(),
        };
        let shared = shapes.entry(key).or_insert_with(|| Arc::new(shape));
        InstanceOverrides(shared.clone())
    }

    /// The shared shape setting each of `components` (sorted) whole, named by `name`.
    pub fn whole(
        &self,
        components: &[ComponentId],
        name: impl Fn(ComponentId) -> String,
    ) -> InstanceOverrides {
        let mut whole = match self.whole.lock() {
            Ok(whole) => whole,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(shared) = whole.get(components) {
            return shared.clone();
        }
        let shape = components
            .iter()
            .map(|id| (name(*id), Value::Bool(true)))
            .collect();
        let shared = self.intern(shape);
        whole.insert(components.to_vec(), shared.clone());
        shared
    }
}

/// The few override shapes one operation (a scene load) met last, with their shared records:
/// instances mostly have one of a few shapes, so most need neither [`OverrideShapes`]' table
/// nor its lock.
#[derive(Debug, Default)]
pub(crate) struct ShapesAtHand {
    known: Vec<(Map<String, Value>, InstanceOverrides)>,
}

impl ShapesAtHand {
    /// How many shapes are kept at hand.
    const KEPT: usize = 16;

    /// The shared record of `shape`, from those at hand or from `shapes`.
    pub fn intern(
        &mut self,
        shapes: &OverrideShapes,
        shape: Map<String, Value>,
    ) -> InstanceOverrides {
        if let Some((_, shared)) = self.known.iter().find(|(known, _)| *known == shape) {
            return shared.clone();
        }
        let shared = shapes.intern(shape.clone());
        if self.known.len() < Self::KEPT {
            self.known.push((shape, shared.clone()));
        }
        shared
    }
}
