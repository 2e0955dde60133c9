//! [`ReloadOps`]: carrying an archetype's edit into the live components of its instances.

use hecs::{Entity, World};
use serde_json::Value;

use crate::component::ops::{Ops, TypedValue};
use crate::component::registry::Component;
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
        // Untouched instances (most of them, often) serialize exactly as the archetype's old
        // value: postcard's bytes are a cheap, exact comparison of the serialized form.
        let shortcut = shortcut.and_then(|(before, after)| {
            let before =
                crate::component::binary_codec::to_allocvec(before.downcast_ref::<T>()?).ok()?;
            Some((before, after.downcast_ref::<T>()?))
        });
        // Instances whose value differs from the archetype's (a goblin mid-fight): the patched
        // fields' bytes from the archetype's new value spliced into the live value's, decoded
        // once (no JSON). Only for patches of plain struct fields (`value_layout::Splice`).
        let layout = shortcut.as_ref().and_then(|_| self.layout());
        let splice = shortcut
            .as_ref()
            .zip(layout.as_ref())
            .and_then(|((_, after), layout)| {
                let after = crate::component::binary_codec::to_allocvec(*after).ok()?;
                crate::component::value_layout::Splice::plan(layout, patch, &after).ok()
            });
        let mut spliced = Vec::new();
        let mut live_bytes = Vec::new();
        // A view finds each entity's column without looking the type up in its archetype.
        let mut view = world.view_mut::<&mut T>();
        for (i, &entity) in entities.iter().enumerate() {
            let Some(component) = view.get_mut(entity) else {
                continue;
            };
            if let Some((before, after)) = &shortcut {
                live_bytes.clear();
                // A value that cannot be serialized takes the slow path, which reports why.
                if let Ok(bytes) = crate::component::binary_codec::to_extend(
                    &*component,
                    std::mem::take(&mut live_bytes),
                ) {
                    live_bytes = bytes;
                    if live_bytes == *before {
                        *component = (*after).clone();
                        patched[i] = true;
                        continue;
                    }
                    if let Some(splice) = &splice {
                        spliced.clear();
                        // Both parts are values already checked (the live one and the
                        // archetype's): read back as they are.
                        let updated = splice.apply(&live_bytes, &mut spliced).ok().and_then(|()| {
                            crate::component::binary_codec::from_bytes::<T>(&spliced).ok()
                        });
                        if let Some(updated) = updated {
                            *component = updated;
                            patched[i] = true;
                            continue;
                        }
                    }
                }
            }
            // Through JSON: the patch names fields, and serde is the only view of them.
            let result = serde_json::to_value(&*component)
                .map_err(|e| ValueError::invalid(FieldPath::root(), e.to_string()))
                .and_then(|mut value| {
                    merge_patch::apply(&mut value, patch);
                    // Plain serde first; the tracking decoder only to say where it failed.
                    let reading = Reading::default();
                    T::deserialize(ValueReader::new(&value, &reading, false))
                        .or_else(|_| deserialize_value::<T>(&value, &mut Vec::new()))
                });
            match result {
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
