//! Instance overrides: which fields of its archetype an instance sets itself, kept once per
//! shape. (The instance marker, a built-in component, is `component/instance_marker.rs`.)

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::component::{ComponentId, OverridesId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An instance's overrides: which places of which components were set for this entity on top
/// of its archetype when it was spawned (`spawn_with`, `spawn_with_bundle`) or loaded from a
/// scene — component name → the shape of the patch: `true` where it set a value, `null` where
/// it removed the component, an object where it went into one
/// (`{"Health": {"max": true}, "Speed": null}`).
///
/// Hot reload leaves every place an override sets alone, the way Unity treats prefab instance
/// overrides. The values themselves live in the entity's components; the shape is kept once
/// by the library and shared by every entity with the same one, which names it by an
/// [`OverridesId`] in its [`ArchetypeInstance`](crate::ArchetypeInstance) marker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceOverrides(pub Arc<Map<String, Value>>);

/// Where an instance's overrides were set: what the inspector shows a designer beside an
/// overridden value, and where Revert takes it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OverrideOrigin {
    /// Given when the entity was spawned (`spawn_with`, `spawn_with_bundle`), or kept from
    /// such overrides when some were reverted.
    Spawn,
    /// Read from the entity's scene entry (its differences from its archetype): the scene
    /// file holds them.
    Scene,
}

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

/// The override shapes in use, each kept once (for as long as the library) and named by its
/// [`OverridesId`]: its place in the table, plus one.
#[derive(Debug, Default)]
pub(crate) struct OverrideShapes {
    table: Mutex<ShapeTable>,
}

#[derive(Debug, Default)]
struct ShapeTable {
    /// Each shape and where it was set, in the order met: [`OverridesId`] `n` is
    /// `shapes[n - 1]`.
    shapes: Vec<(InstanceOverrides, OverrideOrigin)>,
    /// A shape's JSON text and origin → its ID.
    by_text: FxHashMap<(String, OverrideOrigin), OverridesId>,
    /// Shapes that set whole components (typed spawn parameters), by their sorted components.
    whole: FxHashMap<Vec<ComponentId>, OverridesId>,
}

impl ShapeTable {
    /// The ID of `shape` (component name → shape) set at `origin`, added if new;
    /// [`OverridesId::NONE`] for a shape that overrides nothing.
    fn intern(&mut self, shape: Map<String, Value>, origin: OverrideOrigin) -> OverridesId {
        if shape.is_empty() {
            return OverridesId::NONE;
        }
        // A map of JSON values always serializes.
        let key = (serde_json::to_string(&shape).unwrap_or_default(), origin);
        if let Some(id) = self.by_text.get(&key) {
            return *id;
        }
        // IDs run out after 2³² − 1 shapes, far past what memory holds (a shape's text alone
        // is dozens of bytes); past that, every new shape would be named by the last ID and
        // read back as the first shape given it.
        let id = OverridesId(u32::try_from(self.shapes.len() + 1).unwrap_or(u32::MAX));
        self.shapes
            .push((InstanceOverrides(Arc::new(shape)), origin));
        self.by_text.insert(key, id);
        id
    }
}

impl OverrideShapes {
    fn table(&self) -> std::sync::MutexGuard<'_, ShapeTable> {
        match self.table.lock() {
            Ok(table) => table,
            // A panic elsewhere while holding the lock leaves the table as it was: use it.
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The ID of `shape` (component name → shape) set at `origin`, the same for every equal
    /// shape of the same origin.
    pub fn intern(&self, shape: Map<String, Value>, origin: OverrideOrigin) -> OverridesId {
        self.table().intern(shape, origin)
    }

    /// The ID of the shape setting each of `components` (sorted) whole, named by `name`.
    pub fn whole(
        &self,
        components: &[ComponentId],
        name: impl Fn(ComponentId) -> String,
    ) -> OverridesId {
        let mut table = self.table();
        if let Some(id) = table.whole.get(components) {
            return *id;
        }
        let shape = components
            .iter()
            .map(|id| (name(*id), Value::Bool(true)))
            .collect();
        let id = table.intern(shape, OverrideOrigin::Spawn);
        table.whole.insert(components.to_vec(), id);
        id
    }

    /// The shape `id` names (`None` for [`OverridesId::NONE`] or an ID from another library).
    pub fn get(&self, id: OverridesId) -> Option<InstanceOverrides> {
        self.get_with_origin(id).map(|(shape, _)| shape)
    }

    /// The shape `id` names and where it was set.
    pub fn get_with_origin(&self, id: OverridesId) -> Option<(InstanceOverrides, OverrideOrigin)> {
        let index = usize::try_from(id.0).ok()?.checked_sub(1)?;
        self.table().shapes.get(index).cloned()
    }
}

/// The few override shapes one scene load met last, with their IDs (of
/// [`OverrideOrigin::Scene`]):
/// instances mostly have one of a few shapes, so most need neither [`OverrideShapes`]' table
/// nor its lock.
#[derive(Debug, Default)]
pub(crate) struct ShapesAtHand {
    known: Vec<(Map<String, Value>, OverridesId)>,
}

impl ShapesAtHand {
    /// How many shapes are kept at hand.
    const KEPT: usize = 16;

    /// The ID of `shape`, from those at hand or from `shapes`.
    pub fn intern(&mut self, shapes: &OverrideShapes, shape: Map<String, Value>) -> OverridesId {
        if let Some((_, id)) = self.known.iter().find(|(known, _)| *known == shape) {
            return *id;
        }
        let id = shapes.intern(shape.clone(), OverrideOrigin::Scene);
        if self.known.len() < Self::KEPT {
            self.known.push((shape, id));
        }
        id
    }
}
