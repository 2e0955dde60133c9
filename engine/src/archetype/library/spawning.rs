//! Spawning by name: the archetype found (the last one spawned tried first), then its
//! compiled template written into the world, with overrides, a bundle or many at once.

use super::*;

impl ArchetypeLibrary {
    /// The archetype `name` if it can be instantiated now (by spawning, or by a scene), or why
    /// not: unknown (with a suggestion), deleted, without a version free of errors, abstract.
    #[inline]
    pub(crate) fn spawnable(&self, name: &str) -> Result<&Arc<Archetype>, SpawnError> {
        // Spawns mostly repeat a name: the archetype found last is compared first. (A live
        // archetype's name is no former name, so that comes before the renames.)
        if let Some(archetype) = self.last_spawnable(name) {
            return Ok(archetype);
        }
        self.spawnable_by_name(name)
    }

    /// [`spawnable`](Self::spawnable) past the archetype found last, kept out of it so the
    /// common spawn stays small enough to inline.
    fn spawnable_by_name(&self, name: &str) -> Result<&Arc<Archetype>, SpawnError> {
        // A former name (`formerly`) stands for the archetype under its current one: names in
        // saved component values (a spawner's archetype) keep working after a rename.
        let name = self.renamed(name).unwrap_or(name);
        if let Some(archetype) = self.last_spawnable(name) {
            return Ok(archetype);
        }
        let Some(&id) = self.ids.get(name) else {
            return Err(self.unknown_archetype(name));
        };
        let archetype = self.spawnable_slot(id, name)?;
        if self.last_spawnable.load(Ordering::Relaxed) != id.0 {
            self.last_spawnable.store(id.0, Ordering::Relaxed);
        }
        Ok(archetype)
    }

    /// The archetype `spawnable` found last, if it is called `name` and can still be spawned.
    /// (The slot of a name is the one `ids` gives it: a slot keeps its name unless it moves
    /// to a new one, and a moved slot no longer answers to the old.)
    #[inline]
    fn last_spawnable(&self, name: &str) -> Option<&Arc<Archetype>> {
        let slot = self
            .slots
            .get(self.last_spawnable.load(Ordering::Relaxed) as usize)?;
        if slot.deleted || *slot.name != *name {
            return None;
        }
        slot.current
            .as_ref()
            .filter(|archetype| !archetype.is_abstract)
    }

    /// The error for spawning `name`, which names no archetype (with a suggestion).
    #[cold]
    fn unknown_archetype(&self, name: &str) -> SpawnError {
        SpawnError::UnknownArchetype {
            name: name.to_string(),
            // `enemies/goblin.json`, `enemies\goblin`: the naming rules know the fix.
            suggestion: check_name(name)
                .err()
                .and_then(|problem| problem.suggestion)
                .filter(|fixed| self.ids.contains_key(fixed.as_str()))
                .or_else(|| did_you_mean(name, self.names())),
        }
    }

    /// [`spawnable`](Self::spawnable) for an archetype known by its ID (`name` is its name).
    #[inline]
    fn spawnable_slot(&self, id: ArchetypeId, name: &str) -> Result<&Arc<Archetype>, SpawnError> {
        let slot = &self.slots[id.0 as usize];
        match &slot.current {
            Some(archetype) if !slot.deleted && !archetype.is_abstract => Ok(archetype),
            _ => Err(self.unspawnable(slot, name)),
        }
    }

    /// Why the archetype in `slot` (called `name`) cannot be spawned: deleted, without a
    /// version free of errors, or abstract.
    #[cold]
    fn unspawnable(&self, slot: &Slot, name: &str) -> SpawnError {
        let name = name.to_string();
        if slot.deleted {
            return SpawnError::Deleted { name };
        }
        let Some(archetype) = &slot.current else {
            let reason = match self.states.get(name.as_str()).map(|s| &s.status) {
                Some(Status::Dependency(dep)) => format!("it depends on `{dep}`, which has errors"),
                Some(Status::Cycle(names)) => {
                    format!("it is part of an inheritance cycle ({names})")
                }
                _ => "its file has errors".to_string(),
            };
            return SpawnError::Unavailable { name, reason };
        };
        debug_assert!(archetype.is_abstract);
        SpawnError::Abstract { name }
    }

    /// Spawns an instance of the archetype `name` (root and children) into `world`.
    ///
    /// Every spawned entity gets a fresh [`StableId`](crate::StableId) and an
    /// [`ArchetypeInstance`] marker.
    ///
    /// # Errors
    /// If there is no such archetype (with a suggestion), it is abstract, or it never loaded
    /// without errors.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, StableId};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Name": "goblin" } }"#));
    /// let mut world = hecs::World::new();
    /// let goblin = library.spawn(&mut world, "enemies/goblin")?;
    /// assert!(world.get::<&StableId>(goblin).is_ok()); // so scenes can save it
    ///
    /// let error = library.spawn(&mut world, "enemies/gobln").unwrap_err();
    /// assert_eq!(error.to_string(), "unknown archetype `enemies/gobln`; did you mean `enemies/goblin`?");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn spawn(&self, world: &mut World, name: &str) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        match &archetype.compiled {
            Some(compiled) => compiled
                .spawn(world, &self.registry, None, &self.rng)
                .map_err(|error| SpawnError::internal(name, error)),
            None => Err(SpawnError::Abstract {
                name: name.to_string(),
            }),
        }
    }

    /// Spawns an instance of the archetype `name` through a [`hecs::CommandBuffer`], for a
    /// system that spawns while it iterates the world: the instance's entities are reserved
    /// now (so the returned root can be stored in components at once) and get their
    /// components, as [`spawn`](Self::spawn) gives them, when the buffer runs
    /// (`commands.run_on(&mut world)`).
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn); nothing is recorded for an instance that fails but the release
    /// of its reserved handles.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, Name, StableId};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("spawner.json", Some(r#"{ "components": { "Name": "spawner" } }"#));
    /// # library.set_source("imp.json", Some(r#"{ "components": { "Name": "imp" } }"#));
    /// let mut world = hecs::World::new();
    /// library.spawn_many(&mut world, "spawner", 3)?;
    /// let mut commands = hecs::CommandBuffer::new();
    /// for name in world.query::<&Name>().iter() {
    ///     if name.0 == "spawner" {
    ///         library.spawn_deferred(&world, &mut commands, "imp")?;
    ///     }
    /// }
    /// commands.run_on(&mut world);
    /// assert_eq!(world.query::<&Name>().iter().filter(|n| n.0 == "imp").count(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spawn_deferred(
        &self,
        world: &World,
        commands: &mut hecs::CommandBuffer,
        name: &str,
    ) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        match &archetype.compiled {
            Some(compiled) => compiled
                .spawn_deferred(world, commands, &self.registry, &self.rng)
                .map_err(|error| SpawnError::internal(name, error)),
            None => Err(SpawnError::Abstract {
                name: name.to_string(),
            }),
        }
    }

    /// Spawns an instance of the archetype an [`ArchetypeRef`] names (a spawner's, a weapon's
    /// projectile). A reference this library read (from an archetype file, a scene, overrides)
    /// holds the archetype's ID, so no name is looked up; any other is spawned by its name.
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_ref(
        &self,
        world: &mut World,
        archetype: &ArchetypeRef,
    ) -> Result<Entity, SpawnError> {
        let name = archetype.name();
        // An ID is this library's only if its slot has the name (IDs are never reused).
        let ours = archetype.id().filter(|id| {
            self.slots
                .get(id.0 as usize)
                .is_some_and(|slot| &*slot.name == name)
        });
        let Some(id) = ours else {
            return self.spawn(world, name);
        };
        let archetype = self.spawnable_slot(id, name)?;
        match &archetype.compiled {
            Some(compiled) => compiled
                .spawn(world, &self.registry, None, &self.rng)
                .map_err(|error| SpawnError::internal(name, error)),
            None => Err(SpawnError::Abstract {
                name: name.to_string(),
            }),
        }
    }

    /// Spawns an instance with per-entity overrides: `overrides` maps component names to merge
    /// patches applied on top of the archetype's root for this one entity (`null` leaves a
    /// component out). Which fields they set is recorded in the entity's [`ArchetypeInstance`]
    /// marker ([`instance_overrides`](Self::instance_overrides)), so hot reload never
    /// overwrites them.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, Name};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    /// # struct Health { current: f32, max: f32 }
    /// # let mut registry = ComponentRegistry::new();
    /// # registry.register::<Health>()?;
    /// # let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Health": { "current": 10, "max": 10 } } }"#));
    /// let mut world = hecs::World::new();
    /// let boss = library.spawn_with(
    ///     &mut world,
    ///     "enemies/goblin",
    ///     &serde_json::json!({ "Health": { "max": 500 }, "Name": "Grukk" }),
    /// )?;
    /// assert_eq!(*world.get::<&Health>(boss)?, Health { current: 10.0, max: 500.0 });
    /// assert_eq!(world.get::<&Name>(boss)?.as_str(), "Grukk");
    ///
    /// // A mistake in an override is an error naming the field, not a silent default.
    /// let error = library
    ///     .spawn_with(&mut world, "enemies/goblin", &serde_json::json!({ "Health": { "max": "lots" } }))
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "invalid overrides for `enemies/goblin`: invalid value for `Health.max`: invalid type: string \"lots\", expected f32"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn), and if an override names an unknown component or gives a
    /// value the component cannot take (the error says which field).
    pub fn spawn_with(
        &self,
        world: &mut World,
        name: &str,
        overrides: &Value,
    ) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        let Some(compiled) = &archetype.compiled else {
            return Err(SpawnError::Abstract {
                name: name.to_string(),
            });
        };
        let context = self.reference_targets().context();
        let checked = context
            .install(|| {
                compiled.check_overrides(
                    &self.registry,
                    &archetype.resolved,
                    overrides,
                    &self.override_shapes,
                )
            })
            .map_err(|problem| SpawnError::InvalidOverride {
                name: name.to_string(),
                component: problem.component,
                field: problem.field,
                message: problem.message,
                suggestion: problem.suggestion,
            })?;
        compiled
            .spawn(world, &self.registry, Some(&checked), &self.rng)
            .map_err(|error| SpawnError::internal(name, error))
    }

    /// Spawns an instance of `name` with typed components of the caller's on its root: each
    /// replaces the archetype's value of that type, or adds a component the archetype does not
    /// have (`(Transform::from_translation(at),)` spawns a goblin at a place). No JSON is read.
    ///
    /// The registered components given are recorded as the instance's overrides
    /// ([`instance_overrides`](Self::instance_overrides)), whole: hot reload never overwrites
    /// them (an archetype edit of a goblin's `Transform` does not move goblins spawned at their
    /// places), and a scene saves them as the instance's differences from its archetype.
    ///
    /// For a single-entity archetype whose values do not vary per spawn, the first spawn with a
    /// bundle type makes a template for it (the archetype's other values, the marker naming
    /// the overrides), and every spawn after is one entity spawned from it with the bundle:
    /// the cost of a plain [`spawn`](Self::spawn).
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, Transform};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Name": "goblin", "Transform": {} } }"#));
    /// let mut world = hecs::World::new();
    /// let at = glam::Vec3::new(4.0, 0.0, 2.0);
    /// let goblin = library.spawn_with_bundle(&mut world, "enemies/goblin", (Transform::from_translation(at),))?;
    /// assert_eq!(world.get::<&Transform>(goblin)?.translation, at);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_with_bundle<B: hecs::DynamicBundle + 'static>(
        &self,
        world: &mut World,
        name: &str,
        bundle: B,
    ) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        let Some(compiled) = &archetype.compiled else {
            return Err(SpawnError::Abstract {
                name: name.to_string(),
            });
        };
        // The common case (a single entity, nothing varying): a template made once per bundle
        // type (the archetype's values the bundle does not replace, the marker, the override
        // shape), spawned with the bundle and a fresh stable ID as one entity.
        let made;
        let template = match compiled.recent_bundle_template(TypeId::of::<B>()) {
            Some(template) => template,
            None => {
                made = compiled.bundle_template(
                    &self.registry,
                    TypeId::of::<B>(),
                    &bundle,
                    || self.bundle_components(&bundle),
                    |shape| self.bundle_overrides(shape),
                );
                made.as_deref()
            }
        };
        let mut bundle = bundle;
        if let Some(template) = template {
            // Handed back when this value's types are not its type's first value's (a
            // `&BuiltEntityClone` bundle, say): spawned the general way below.
            match template.spawn(world, || self.rng.next_id(), bundle) {
                Ok(entity) => return Ok(entity),
                Err(back) => bundle = back,
            }
        }
        let components: Vec<ComponentId> = sorted(bundle.with_ids(|types| {
            (types.iter())
                .filter_map(|type_id| self.registry.id_of_type_id(*type_id))
                .collect()
        }));
        // What the library sets itself is replaced, but is not the instance's to override.
        let shape: Vec<ComponentId> = (components.iter().copied())
            .filter(|id| !self.registry.is_managed(*id))
            .collect();
        let overrides = self.bundle_overrides(&shape);
        let spawned = compiled.spawn_simple_with(
            world,
            &self.registry,
            &self.rng,
            bundle,
            &components,
            overrides,
        );
        match spawned {
            Ok(entity) => entity.map_err(|error| SpawnError::internal(name, error)),
            // Children or references: spawn the instance, then give its root the components.
            Err(bundle) => {
                let entity = compiled
                    .spawn(world, &self.registry, None, &self.rng)
                    .map_err(|error| SpawnError::internal(name, error))?;
                let mut builder = hecs::EntityBuilder::new();
                builder.add_bundle(bundle);
                let marker = world
                    .get::<&ArchetypeInstance>(entity)
                    .map(|marker| *marker);
                if let Ok(marker) = marker {
                    builder.add(ArchetypeInstance {
                        overrides,
                        ..marker
                    });
                }
                // The entity was just spawned: it is there to take the components.
                let _ = world.insert(entity, builder.build());
                Ok(entity)
            }
        }
    }

    /// The registered components of `bundle`, sorted; `None` if one is managed by the library.
    fn bundle_components(&self, bundle: &impl hecs::DynamicBundle) -> Option<Vec<ComponentId>> {
        let components: Vec<ComponentId> = bundle.with_ids(|types| {
            (types.iter())
                .filter_map(|type_id| self.registry.id_of_type_id(*type_id))
                .collect()
        });
        let managed = components.iter().any(|id| self.registry.is_managed(*id));
        (!managed).then(|| sorted(components))
    }

    /// The override shape setting each of `shape` (sorted) whole, `NONE` for none.
    fn bundle_overrides(&self, shape: &[ComponentId]) -> OverridesId {
        let name = |id| self.registry.name(id).to_string();
        match shape.is_empty() {
            true => OverridesId::NONE,
            false => self.override_shapes.whole(shape, name),
        }
    }

    /// Spawns `count` instances of `name` at once (as one column batch when the archetype is a
    /// single entity without references: the fastest way to fill a world).
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_many(
        &self,
        world: &mut World,
        name: &str,
        count: usize,
    ) -> Result<Vec<Entity>, SpawnError> {
        let archetype = self.spawnable(name)?;
        let Some(compiled) = &archetype.compiled else {
            return Err(SpawnError::Abstract {
                name: name.to_string(),
            });
        };
        let count = u32::try_from(count).map_err(|_| SpawnError::TooMany { count })?;
        compiled
            .spawn_many(world, &self.registry, count, &self.rng)
            .map_err(|error| SpawnError::internal(name, error))
    }
}

fn sorted(mut ids: Vec<ComponentId>) -> Vec<ComponentId> {
    ids.sort_unstable();
    ids
}
