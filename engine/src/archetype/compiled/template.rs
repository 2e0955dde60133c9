//! [`NodeTemplate`]: how one entity of a compiled archetype spawns when nothing about it needs
//! a builder.

use std::any::TypeId;
use std::sync::OnceLock;

use hecs::{BuiltEntityClone, Entity, EntityBuilderClone, World};

use crate::archetype::spawn_rng::SpawnRng;
use crate::component::StableId;
use crate::component::{ArchetypeInstance, ComponentId, ComponentRegistry, TypedValue, ValueError};
use crate::component::{SpawnTemplate, TemplateBuilder};
use crate::json::FieldPath;

/// How a node's entity spawns when nothing about it needs a builder.
pub(crate) enum NodeTemplate {
    /// Its values cloned and handed to hecs with a cached archetype key, a fresh `StableId`
    /// among them.
    Fast(SpawnTemplate),
    /// Values too big for that (over a kilobyte, or over-aligned): hecs's own clone template,
    /// with a placeholder `StableId` overwritten after the spawn.
    Built(BuiltEntityClone),
    /// Made from the node's values on its first spawn ([`CompiledNode::template`](super::CompiledNode::template)): a cooked
    /// library's, whose archetypes are mostly never spawned in a run, so a load does not make
    /// them all.
    #[cfg_attr(not(feature = "binary"), allow(dead_code))]
    Later(OnceLock<Box<NodeTemplate>>),
}

impl NodeTemplate {
    /// The template of `values` (component, value) and the instance marker `marker`.
    pub(super) fn new(
        registry: &ComponentRegistry,
        values: &[(ComponentId, &TypedValue)],
        marker: ArchetypeInstance,
    ) -> Self {
        // The values and the marker.
        let mut fast = TemplateBuilder::with_capacity(values.len() + 1);
        for (id, value) in values {
            registry.ops(*id).add_to_spawn_template(value, &mut fast);
        }
        fast.add(marker);
        if let Some(template) = fast.build(&()) {
            return NodeTemplate::Fast(template);
        }
        let mut built = EntityBuilderClone::new();
        for (id, value) in values {
            registry.ops(*id).add_to_template(value, &mut built);
        }
        built.add(marker);
        built.add(StableId(0));
        NodeTemplate::Built(built.build())
    }

    /// Where the values of types `types` are among the template's, in order; `None` unless each
    /// is there, after the one before (hecs's own template takes no other values).
    pub(super) fn places(&self, types: impl Iterator<Item = TypeId>) -> Option<Box<[usize]>> {
        let NodeTemplate::Fast(template) = self else {
            return None;
        };
        let mut after = None;
        let mut places = Vec::new();
        for type_id in types {
            let place = template.part_of(type_id)?;
            if after.is_some_and(|after| place <= after) {
                return None;
            }
            after = Some(place);
            places.push(place);
        }
        Some(places.into())
    }

    /// Spawns one entity of the template with a fresh stable ID from `rng`.
    #[inline]
    pub(super) fn spawn(&self, world: &mut World, rng: &SpawnRng) -> Result<Entity, ValueError> {
        match self {
            NodeTemplate::Fast(template) => template
                .spawn(world, || rng.next_id(), ())
                // Made for no bundle (`NodeTemplate::new`), it takes `()`.
                .map_err(|()| {
                    ValueError::invalid(
                        FieldPath::root(),
                        "internal error: a spawn template that wants a bundle",
                    )
                }),
            NodeTemplate::Built(template) => {
                let entity = world.spawn(template);
                if let Ok(id) = world.query_one_mut::<&mut StableId>(entity) {
                    *id = rng.next_id();
                }
                Ok(entity)
            }
            // `CompiledNode::template` hands out the template made, never this.
            NodeTemplate::Later(_) => Err(ValueError::invalid(
                FieldPath::root(),
                "internal error: a spawn template not made yet",
            )),
        }
    }
}
