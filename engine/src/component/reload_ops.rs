//! [`ReloadOps`]: carrying an archetype's edit into the live components of its instances.

use hecs::{Entity, World};
use serde_json::Value;

use crate::component::ops::{Ops, TypedValue};
use crate::component::registry::Component;
use crate::component::value_layout::{Layout, Splice};
use crate::component::value_ops::{deserialize_value, ValueError, ValueOps};
use crate::component::value_reader::{Reading, ValueReader};
use crate::json::merge_patch;
use crate::json::FieldPath;

/// Patching live components when their archetype changes.
pub(crate) trait ReloadOps {
    /// Applies a merge patch to the live component of each entity that has one, keeping every
    /// field the patch does not mention. Returns, per entity, whether it was patched, and the
    /// failures.
    ///
    /// `shortcut` is the archetype's value before and after the edit (the patch being their
    /// difference): a live component still serializing exactly as `before` becomes a clone of
    /// `after`, which is what patching it would give, without the JSON round trip.
    fn patch_entities(
        &self,
        world: &mut World,
        entities: &[Entity],
        patch: &Value,
        shortcut: Option<(&TypedValue, &TypedValue)>,
    ) -> (Vec<bool>, Vec<(Entity, ValueError)>);
}

impl<T: Component> ReloadOps for Ops<T> {
    fn patch_entities(
        &self,
        world: &mut World,
        entities: &[Entity],
        patch: &Value,
        shortcut: Option<(&TypedValue, &TypedValue)>,
    ) -> (Vec<bool>, Vec<(Entity, ValueError)>) {
        let mut patched = vec![false; entities.len()];
        let mut failures = Vec::new();
        let layout = shortcut.and_then(|_| self.layout());
        let mut bytes = shortcut.and_then(|(before, after)| {
            BytePatch::new(
                before.downcast_ref::<T>()?,
                after.downcast_ref::<T>()?,
                layout,
                patch,
            )
        });
        // A view finds each entity's column without looking the type up in its archetype.
        let mut view = world.view_mut::<&mut T>();
        for (i, &entity) in entities.iter().enumerate() {
            let Some(component) = view.get_mut(entity) else {
                continue;
            };
            if bytes.as_mut().is_some_and(|bytes| bytes.patch(component)) {
                patched[i] = true;
                continue;
            }
            // Through JSON: the patch names fields, and serde is the only view of them.
            match patched_through_json(component, patch) {
                Ok(updated) => {
                    *component = updated;
                    patched[i] = true;
                }
                Err(error) => failures.push((entity, error)),
            }
        }
        (patched, failures)
    }
}

/// Patching live values without JSON, by their postcard bytes: untouched instances (most of
/// them, often) serialize exactly as the archetype's old value, a cheap and exact comparison;
/// instances whose value differs (a goblin mid-fight) get the patched fields' bytes from the
/// archetype's new value spliced into theirs, decoded once (only for patches of plain struct
/// fields, `value_layout::Splice`).
struct BytePatch<'a, T> {
    /// The archetype's value before the edit, as bytes.
    before: Vec<u8>,
    /// The archetype's value after it.
    after: &'a T,
    splice: Option<Splice<'a>>,
    /// Buffers reused from value to value.
    live: Vec<u8>,
    spliced: Vec<u8>,
}

impl<'a, T: Component> BytePatch<'a, T> {
    /// `None` if the archetype's value cannot be written as bytes.
    fn new(before: &T, after: &'a T, layout: Option<&'a Layout>, patch: &Value) -> Option<Self> {
        let before = crate::component::binary_codec::to_allocvec(before).ok()?;
        let splice = layout.and_then(|layout| {
            let after = crate::component::binary_codec::to_allocvec(after).ok()?;
            Splice::plan(layout, patch, &after).ok()
        });
        Some(BytePatch {
            before,
            after,
            splice,
            live: Vec::new(),
            spliced: Vec::new(),
        })
    }

    /// Patches `component` by its bytes; `false` if it must go through JSON (a value that
    /// cannot be serialized takes that path, which reports why).
    fn patch(&mut self, component: &mut T) -> bool {
        // Most instances are untouched: compared as they serialize, not written.
        if crate::component::binary_codec::serializes_to(&*component, &self.before) {
            *component = self.after.clone();
            return true;
        }
        let Some(splice) = &self.splice else {
            return false;
        };
        self.live.clear();
        let Ok(live) =
            crate::component::binary_codec::to_extend(&*component, std::mem::take(&mut self.live))
        else {
            return false;
        };
        self.live = live;
        self.spliced.clear();
        // Both parts are values already checked (the live one and the archetype's): read
        // back as they are.
        let updated = splice
            .apply(&self.live, &mut self.spliced)
            .ok()
            .and_then(|()| crate::component::binary_codec::from_bytes::<T>(&self.spliced).ok());
        match updated {
            Some(updated) => {
                *component = updated;
                true
            }
            None => false,
        }
    }
}

/// `component` with `patch` applied through its JSON form.
fn patched_through_json<T: Component>(component: &T, patch: &Value) -> Result<T, ValueError> {
    serde_json::to_value(component)
        .map_err(|e| ValueError::invalid(FieldPath::root(), e.to_string()))
        .and_then(|mut value| {
            merge_patch::apply(&mut value, patch);
            // Plain serde first; the tracking decoder only to say where it failed.
            let reading = Reading::default();
            T::deserialize(ValueReader::new(&value, &reading, false))
                .or_else(|_| deserialize_value::<T>(&value, &mut Vec::new()))
        })
}
