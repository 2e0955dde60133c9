//! What an edit of a live scene changes ([`SceneEdit`]), found by comparing two versions of the
//! scene loaded on their own (no world of the game's needed: [`SceneEdit::compare`]), and
//! writing it into the game's world ([`SceneEdit::apply`], which costs what the edit changes).

use std::sync::Arc;

use hecs::{Entity, EntityBuilder, World};
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::archetype::{ArchetypeInstance, ArchetypeLibrary};
use crate::component::{with_installed_mapper, with_mapper, ComponentId, ComponentRegistry};
use crate::component::{EntityMapper, MapError, ReadOnly, RefIn, RefOut, RefWire, StableId};
use crate::json::merge_patch;
use crate::scene::commit::{self, Identity};
use crate::scene::live::{LiveSceneFailure, LiveSceneReport};
use crate::scene::load::IdConflict;

/// A version of a scene loaded on its own, by stable ID and back.
pub(super) struct Version<'v> {
    pub world: &'v World,
    pub ids: &'v FxHashMap<StableId, Entity>,
    /// Every entity of `world` (gained children too) → its stable ID ([`ids_by_entity`]).
    pub by_entity: &'v Arc<FxHashMap<Entity, StableId>>,
}

/// What an edit changes, by stable ID as the scene's files give it.
#[derive(Default)]
pub(super) struct SceneEdit {
    removed: Vec<StableId>,
    added: Vec<Added>,
    /// Entities changed, each change in order.
    changed: Vec<(StableId, Vec<Change>)>,
    /// Values that could not be read from the new version.
    failures: Vec<LiveSceneFailure>,
}

/// An entity added: its stable ID, its components' values (references as stable IDs) and its
/// marker.
type Added = (
    StableId,
    Vec<(ComponentId, Value)>,
    Option<ArchetypeInstance>,
);

/// One change of one entity.
enum Change {
    /// The merge patch from the old value to the new: the fields the file changed.
    Patch(ComponentId, Value),
    /// A component the entity did not have.
    Insert(ComponentId, Value),
    Remove(ComponentId),
    Marker(ArchetypeInstance),
}

impl SceneEdit {
    /// Compares two versions of a scene entity by entity: every entity of both in the new
    /// version's storage order (both are stored as their files list them, so each is read in
    /// order), over the components either has, by their bytes.
    pub(super) fn compare(
        registry: &ComponentRegistry,
        old: &Version<'_>,
        new: &Version<'_>,
    ) -> SceneEdit {
        let mapper = VersionRefs {
            old: old.by_entity.clone(),
            new: new.by_entity.clone(),
            side: Side::Old,
            wire: RefWire::Number,
        };
        let (edit, _) = with_mapper(mapper, || compare_versions(registry, old, new));
        edit
    }

    /// Whether the versions are alike.
    pub(super) fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.added.is_empty()
            && self.changed.is_empty()
            && self.failures.is_empty()
    }

    /// Writes the edit into `world`, where the scene's entities are `live`: despawns the
    /// removed, spawns the added through the commit (references among them and to the others
    /// resolved by stable ID), writes the changes. What it costs is what the edit changes.
    pub(super) fn apply(
        self,
        world: &mut World,
        library: &ArchetypeLibrary,
        live: &mut LiveEntities,
        on_conflict: IdConflict,
    ) -> LiveSceneReport {
        let mut report = LiveSceneReport::default();
        report.failures = self.failures;
        let mut gone = Vec::new();
        for id in &self.removed {
            if let Some(entity) = live.remove(*id) {
                gone.push(entity);
            }
        }
        gone.retain(|entity| world.contains(*entity));
        report.despawned = gone.len();
        commit::roll_back(world, gone);
        // A handle for each added entity first, so references to it resolve.
        let handles: Vec<Entity> = (self.added.iter())
            .map(|(id, ..)| {
                let handle = world.reserve_entity();
                live.insert(*id, handle);
                handle
            })
            .collect();
        let taken = taken_ids(world, !self.added.is_empty());
        let tables = std::mem::take(live);
        let registry = library.registry();
        let ((), tables) = with_mapper(tables, || {
            for (id, changes) in &self.changed {
                let entity = live_entity(*id);
                let Some(entity) = entity.filter(|entity| world.contains(*entity)) else {
                    continue;
                };
                report.updated += 1;
                for change in changes {
                    if let Err(failure) = change.apply(world, registry, *id, entity) {
                        report.failures.push(failure);
                    }
                }
            }
            for ((id, values, marker), handle) in self.added.into_iter().zip(handles) {
                let own = match (taken.contains(&id), on_conflict) {
                    (false, _) => Ok(id),
                    (true, IdConflict::Remap) => Ok(library.spawn_rng().next_id()),
                    (true, _) => Err(LiveSceneFailure::new(
                        id,
                        None,
                        "the world has an entity with this stable ID already; load with IdConflict::Remap to give new entities fresh IDs",
                    )),
                };
                let spawned = own.and_then(|own| {
                    let identity = Identity { id: own, marker };
                    spawn(world, registry, (id, handle, identity), &values)
                });
                match spawned {
                    Ok(()) => report.spawned += 1,
                    Err(failure) => {
                        forget(id);
                        commit::roll_back(world, [handle]);
                        report.failures.push(failure);
                    }
                }
            }
        });
        *live = tables;
        report
    }
}

/// The comparison, with the [`VersionRefs`] installed.
fn compare_versions(
    registry: &ComponentRegistry,
    old: &Version<'_>,
    new: &Version<'_>,
) -> SceneEdit {
    let mut removed: Vec<StableId> = (old.ids.keys())
        .filter(|id| !new.ids.contains_key(id))
        .copied()
        .collect();
    removed.sort_unstable();
    let mut edit = SceneEdit {
        removed,
        ..SceneEdit::default()
    };
    let mut buffers = Buffers::default();
    let mut in_order = new.world.query::<(Entity, &StableId)>();
    for (at_new, id) in in_order.iter() {
        if new.ids.get(id) != Some(&at_new) {
            // A child an archetype gained since the file was written: the world's.
            continue;
        }
        let Some(&at_old) = old.ids.get(id) else {
            let values = values_of(registry, new.world, at_new);
            match values {
                Ok(values) => edit.added.push((*id, values, marker(new.world, at_new))),
                Err(failure) => edit.failures.push(failure.at(*id)),
            }
            continue;
        };
        let mut changes = Vec::new();
        buffers.components_of(registry, (old.world, at_old), (new.world, at_new));
        let components = std::mem::take(&mut buffers.components);
        for &component in &components {
            let pair = ((old.world, at_old), (new.world, at_new));
            if buffers.same(registry, component, pair) {
                continue;
            }
            match change_of(registry, component, pair) {
                Ok(Some(change)) => changes.push(change),
                Ok(None) => {}
                Err(failure) => edit.failures.push(failure.at(*id)),
            }
        }
        buffers.components = components;
        let after = marker(new.world, at_new);
        if marker(old.world, at_old) != after {
            changes.extend(after.map(Change::Marker));
        }
        if !changes.is_empty() {
            edit.changed.push((*id, changes));
        }
    }
    edit.added.sort_unstable_by_key(|(id, ..)| *id);
    edit
}

/// A failure before its entity is known.
struct Unread {
    component: String,
    message: String,
}

impl Unread {
    fn at(self, id: StableId) -> LiveSceneFailure {
        LiveSceneFailure::new(id, Some(&self.component), self.message)
    }
}

/// Every registered component of `entity` in the new version, as JSON.
fn values_of(
    registry: &ComponentRegistry,
    world: &World,
    entity: Entity,
) -> Result<Vec<(ComponentId, Value)>, Unread> {
    let mut values = Vec::new();
    let Ok(found) = world.entity(entity) else {
        return Ok(values);
    };
    let components = found
        .component_types()
        .filter_map(|t| registry.id_of_type_id(t));
    for component in components {
        if let Some(value) = json(registry, component, world, entity, Side::New) {
            values.push((component, value?));
        }
    }
    values.sort_unstable_by_key(|(component, _)| *component);
    Ok(values)
}

/// How one component that differs between the versions changes.
fn change_of(
    registry: &ComponentRegistry,
    component: ComponentId,
    ((old, at_old), (new, at_new)): ((&World, Entity), (&World, Entity)),
) -> Result<Option<Change>, Unread> {
    let before = json(registry, component, old, at_old, Side::Old);
    let after = json(registry, component, new, at_new, Side::New);
    Ok(match (before, after) {
        (_, None) => Some(Change::Remove(component)),
        (None, Some(after)) => Some(Change::Insert(component, after?)),
        (Some(before), Some(after)) => {
            merge_patch::diff(&before?, &after?).map(|patch| Change::Patch(component, patch))
        }
    })
}

impl Change {
    /// Writes this change into `entity`, the live entity of stable ID `id`.
    fn apply(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        id: StableId,
        entity: Entity,
    ) -> Result<(), LiveSceneFailure> {
        let failed = |component: ComponentId, message: String| {
            LiveSceneFailure::new(id, Some(registry.name(component)), message)
        };
        match self {
            Change::Patch(component, patch) => {
                commit::patch_component(world, registry, *component, entity, patch)
                    .map(|_| ())
                    .map_err(|error| failed(*component, error.message))
            }
            Change::Insert(component, value) => {
                let typed = decode(registry, *component, value)
                    .map_err(|message| failed(*component, message))?;
                match commit::insert_component(world, registry, *component, entity, &typed) {
                    true => Ok(()),
                    false => Err(failed(*component, "the entity is gone".to_string())),
                }
            }
            Change::Remove(component) => {
                commit::remove_component(world, registry, *component, entity);
                Ok(())
            }
            Change::Marker(marker) => {
                commit::set_marker(world, entity, *marker);
                Ok(())
            }
        }
    }
}

/// Spawns an added entity on its reserved handle from its values (the [`LiveEntities`]
/// installed).
fn spawn(
    world: &mut World,
    registry: &ComponentRegistry,
    (id, handle, identity): (StableId, Entity, Identity),
    values: &[(ComponentId, Value)],
) -> Result<(), LiveSceneFailure> {
    let mut builder = EntityBuilder::new();
    for (component, value) in values {
        let typed = decode(registry, *component, value).map_err(|message| {
            LiveSceneFailure::new(id, Some(registry.name(*component)), message)
        })?;
        registry.ops(*component).add_owned(typed, &mut builder);
    }
    commit::entity(world, Some(handle), identity, &mut builder)
        .map(|_| ())
        .map_err(|_| LiveSceneFailure::new(id, None, "its reserved handle was taken"))
}

/// The stable IDs in `world`, when an added entity's ID may not be among them (`needed`).
fn taken_ids(world: &World, needed: bool) -> rustc_hash::FxHashSet<StableId> {
    match needed {
        true => world.query::<&StableId>().iter().copied().collect(),
        false => rustc_hash::FxHashSet::default(),
    }
}

/// An instance entity's marker.
fn marker(world: &World, entity: Entity) -> Option<ArchetypeInstance> {
    world.get::<&ArchetypeInstance>(entity).ok().map(|m| *m)
}

/// Every entity of `world` → its stable ID: made once per version (a version is compared as
/// the new one, then as the old one).
pub(super) fn ids_by_entity(world: &World) -> Arc<FxHashMap<Entity, StableId>> {
    let mut query = world.query::<(Entity, &StableId)>();
    Arc::new(query.iter().map(|(entity, id)| (entity, *id)).collect())
}

/// Buffers reused from entity to entity while comparing.
#[derive(Default)]
struct Buffers {
    old: Vec<u8>,
    new: Vec<u8>,
    /// The registered components either version of the entity has.
    components: Vec<ComponentId>,
}

impl Buffers {
    /// Lists the registered components `old` and `new` (an entity in each version) have.
    fn components_of(
        &mut self,
        registry: &ComponentRegistry,
        (old, at_old): (&World, Entity),
        (new, at_new): (&World, Entity),
    ) {
        self.components.clear();
        for (world, entity) in [(old, at_old), (new, at_new)] {
            if let Ok(entity) = world.entity(entity) {
                let types = entity.component_types();
                let ids = types.filter_map(|type_id| registry.id_of_type_id(type_id));
                self.components.extend(ids);
            }
        }
        self.components.sort_unstable();
        self.components.dedup();
    }

    /// Whether `component` is the same in both versions of an entity (both without it, or
    /// values with the same bytes, references by stable ID).
    fn same(
        &mut self,
        registry: &ComponentRegistry,
        component: ComponentId,
        ((old, at_old), (new, at_new)): ((&World, Entity), (&World, Entity)),
    ) -> bool {
        let ops = registry.ops(component);
        self.old.clear();
        self.new.clear();
        let before = on(Side::Old, RefWire::Number, || {
            ops.postcard_of(old, at_old, &mut self.old)
        });
        let after = on(Side::New, RefWire::Number, || {
            ops.postcard_of(new, at_new, &mut self.new)
        });
        match (before, after) {
            (None, None) => true,
            (Some(true), Some(true)) => self.old == self.new,
            (Some(_), Some(_)) => {
                // Not written as bytes (the `binary` feature is off): compared as JSON.
                let before = json(registry, component, old, at_old, Side::Old);
                let after = json(registry, component, new, at_new, Side::New);
                matches!((before, after), (Some(Ok(a)), Some(Ok(b))) if a == b)
            }
            _ => false,
        }
    }
}

/// Which version's references the installed [`VersionRefs`] writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

/// References in either version of a scene, written as stable IDs (numbers to compare bytes,
/// hex strings in JSON).
struct VersionRefs {
    old: Arc<FxHashMap<Entity, StableId>>,
    new: Arc<FxHashMap<Entity, StableId>>,
    side: Side,
    wire: RefWire,
}

/// Runs `f` with the installed [`VersionRefs`] writing `side`'s references in `wire`.
fn on<R>(side: Side, wire: RefWire, f: impl FnOnce() -> R) -> R {
    let _ = with_installed_mapper(|mapper: &mut VersionRefs| {
        mapper.side = side;
        mapper.wire = wire;
    });
    f()
}

/// `component` of `entity` in `world` (one of the versions) as JSON, references as stable
/// IDs; `None` if it has none.
fn json(
    registry: &ComponentRegistry,
    component: ComponentId,
    world: &World,
    entity: Entity,
    side: Side,
) -> Option<Result<Value, Unread>> {
    let ops = registry.ops(component);
    let value = on(side, RefWire::Text, || ops.to_json(world, entity))?;
    Some(value.map_err(|error| Unread {
        component: registry.name(component).to_string(),
        message: error.to_string(),
    }))
}

impl EntityMapper for VersionRefs {
    fn wire(&self) -> RefWire {
        self.wire
    }

    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        let ids = match self.side {
            Side::Old => &self.old,
            Side::New => &self.new,
        };
        match (ids.get(&entity), self.wire) {
            (Some(id), RefWire::Number) => Ok(RefOut::Number(id.0)),
            (Some(id), _) => Ok(RefOut::Hex(*id)),
            (None, _) => Err(MapError::NotWritten(ReadOnly::Loading)),
        }
    }

    fn read(&mut self, _reference: RefIn<'_>) -> Result<Entity, MapError> {
        Err(MapError::NotRead)
    }
}

/// The scene's entities in the game's world, by stable ID as its files give it, and back; the
/// entity mapper while an edit is written: a scene entity is written as its stable ID, any
/// other entity as its raw bits (which read back as the same entity), and a stable ID read as
/// the scene's entity.
#[derive(Default)]
pub(super) struct LiveEntities {
    by_id: FxHashMap<StableId, Entity>,
    ids: FxHashMap<Entity, StableId>,
}

impl LiveEntities {
    pub(super) fn get(&self, id: StableId) -> Option<Entity> {
        self.by_id.get(&id).copied()
    }

    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    pub(super) fn insert(&mut self, id: StableId, entity: Entity) {
        if let Some(old) = self.by_id.insert(id, entity) {
            self.ids.remove(&old);
        }
        self.ids.insert(entity, id);
    }

    pub(super) fn remove(&mut self, id: StableId) -> Option<Entity> {
        let entity = self.by_id.remove(&id)?;
        self.ids.remove(&entity);
        Some(entity)
    }
}

impl FromIterator<(StableId, Entity)> for LiveEntities {
    fn from_iter<I: IntoIterator<Item = (StableId, Entity)>>(pairs: I) -> Self {
        let mut live = LiveEntities::default();
        for (id, entity) in pairs {
            live.insert(id, entity);
        }
        live
    }
}

/// The live entity with stable ID `id` (the [`LiveEntities`] installed).
fn live_entity(id: StableId) -> Option<Entity> {
    with_installed_mapper(|live: &mut LiveEntities| live.get(id)).flatten()
}

/// Forgets the added entity `id` that could not be spawned (the [`LiveEntities`] installed).
fn forget(id: StableId) {
    let _ = with_installed_mapper(|live: &mut LiveEntities| live.remove(id));
}

/// A value of `component` read from JSON, references to the scene's live entities (the
/// [`LiveEntities`] installed).
fn decode(
    registry: &ComponentRegistry,
    component: ComponentId,
    value: &Value,
) -> Result<crate::component::TypedValue, String> {
    let ops = registry.ops(component);
    ops.decode(value, &mut Vec::new())
        .map_err(|error| error.message)
}

impl EntityMapper for LiveEntities {
    fn wire(&self) -> RefWire {
        RefWire::Any
    }

    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        match self.ids.get(&entity) {
            Some(id) => Ok(RefOut::Hex(*id)),
            // An entity of the game's own, in a live value: kept as it is.
            None => Ok(RefOut::Number(entity.to_bits().get())),
        }
    }

    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        match reference {
            RefIn::Text(text) => {
                let id = text.parse::<StableId>().map_err(MapError::BadStableId)?;
                self.get(id).ok_or(MapError::NotInScene(id))
            }
            RefIn::Number(bits) => Entity::from_bits(bits).ok_or(MapError::InvalidBits(bits)),
        }
    }
}
