//! Applying archetype changes to live entities: field by field, keeping runtime state, letting
//! per-instance overrides win.

use std::sync::Arc;
use std::time::Instant;

use hecs::{Entity, EntityBuilder, World};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value};

use crate::archetype::Archetype;
use crate::archetype::{resolve_ref_path, CompiledArchetype, CompiledNode};
use crate::archetype::{ArchetypeId, ArchetypeInstance, InstanceOverrides, OverridesId};
use crate::archetype::{ArchetypeLibrary, LibraryUpdate};
use crate::component::MapError;
use crate::component::{with_mapper, EntityMapper, EntityRef, RefIn, RefOut, RefWire};
use crate::component::{Children, Parent};
use crate::component::{ComponentId, ComponentRegistry, TypedValue, ValueError};
use crate::json::remove_overridden;
use crate::reload::diff::{ArchetypeDiff, ComponentChange, NodeDiff};
use crate::reload::diffs::with_diffs;
use crate::reload::report::{PatchAction, PatchFailure, ReloadReport};

/// Applies what a library reload changed to the live entities of `world`.
///
/// For every archetype whose content changed, each live instance (roots and children, found
/// through their [`ArchetypeInstance`] markers) gets only the fields that changed; all other
/// fields keep their live values. Components the archetype gained are inserted, components it
/// lost are removed, children it gained or lost are spawned or despawned. Fields the instance
/// overrides ([`ArchetypeLibrary::instance_overrides`]) are left alone.
///
/// # Example
/// ```no_run
/// # let mut library: archetype_engine::ArchetypeLibrary = todo!();
/// # let mut world = hecs::World::new();
/// let update = library.reload_all();
/// let report = archetype_engine::apply_update(&mut world, &library, &update);
/// println!("{report}");
/// ```
pub fn apply_update(
    world: &mut World,
    library: &ArchetypeLibrary,
    update: &LibraryUpdate,
) -> ReloadReport {
    // Values read while patching check their `ArchetypeRef`s and `AssetPath`s as a load does.
    let context = library.reference_targets().context();
    context.install(|| apply_update_checked(world, library, update))
}

fn apply_update_checked(
    world: &mut World,
    library: &ArchetypeLibrary,
    update: &LibraryUpdate,
) -> ReloadReport {
    let started = Instant::now();
    let mut report = ReloadReport {
        held_back: update.held_back.clone(),
        errors: update.errors.clone(),
        ..ReloadReport::default()
    };
    // The changes' diffs are found on other cores while this thread finds the instances, then
    // patches them change after change.
    with_diffs(library.registry(), &update.changes, |diffs| {
        let (instances, overrides) = live_instances(world, library, update);
        let mut patcher = Patcher {
            registry: library.registry(),
            library,
            instances: &instances,
            overrides: &overrides,
            report: &mut report,
        };
        for change in &update.changes {
            let diff = diffs.next_diff();
            patcher.report.changed.push(change.name.to_string());
            match (&change.old, &change.new) {
                (_, None) => {
                    let orphans: usize = instances
                        .iter()
                        .filter(|((id, _), _)| *id == change.id)
                        .map(|(_, entities)| entities.len())
                        .sum();
                    patcher.report.entities_orphaned += orphans;
                }
                (Some(old), Some(new)) => {
                    if let Some(diff) = &diff {
                        patcher.apply(world, change.id, old, new, diff);
                    }
                }
                (None, Some(_)) => {}
            }
        }
    });
    report.elapsed = started.elapsed();
    report
}

/// The live entities of each node of every archetype `update` changed, found in one pass over
/// the world, and the overrides of those that have any.
fn live_instances(
    world: &World,
    library: &ArchetypeLibrary,
    update: &LibraryUpdate,
) -> (Instances, Overrides) {
    let changed: FxHashSet<ArchetypeId> = update.changes.iter().map(|c| c.id).collect();
    let mut instances = Instances::default();
    let mut overrides = Overrides::default();
    // The shapes met, each looked up in the library once.
    let mut shapes: FxHashMap<OverridesId, Option<InstanceOverrides>> = FxHashMap::default();
    if changed.is_empty() {
        return (instances, overrides);
    }
    // Found in one list first, then put in each node's list a run at a time: instances
    // spawned together lie together in the world, so most entities are neither looked up
    // one by one nor pushed onto a list grown one entity at a time.
    let mut found: Vec<((ArchetypeId, u32), Entity)> = Vec::new();
    let mut last: Option<(ArchetypeId, bool)> = None;
    for (entity, marker) in world.query::<(Entity, &ArchetypeInstance)>().iter() {
        let is_changed = match last {
            Some((archetype, is_changed)) if archetype == marker.archetype => is_changed,
            _ => changed.contains(&marker.archetype),
        };
        last = Some((marker.archetype, is_changed));
        if is_changed {
            found.push(((marker.archetype, marker.node), entity));
            if marker.has_overrides() {
                let shape = (shapes.entry(marker.overrides))
                    .or_insert_with(|| library.instance_overrides(marker));
                if let Some(InstanceOverrides(map)) = shape {
                    overrides.insert(entity, map.clone());
                }
            }
        }
    }
    for run in found.chunk_by(|a, b| a.0 == b.0) {
        if let Some((key, _)) = run.first() {
            (instances.entry(*key).or_default()).extend(run.iter().map(|(_, entity)| *entity));
        }
    }
    (instances, overrides)
}

/// The live entities of each node (archetype, node number) of the changed archetypes.
type Instances = FxHashMap<(ArchetypeId, u32), Vec<Entity>>;

/// The overrides of each live instance that has any.
type Overrides = FxHashMap<Entity, Arc<Map<String, Value>>>;

/// The typed value of `component` in a compiled node (none for components with `#` references).
fn typed_value(node: &CompiledNode, component: ComponentId) -> Option<&TypedValue> {
    node.typed
        .iter()
        .find(|(c, _)| *c == component)
        .map(|(_, value)| value)
}

/// One component's change on the entities of one archetype node.
struct PatchJob<'a> {
    component: ComponentId,
    /// The merge patch from the archetype's old value to its new one.
    patch: &'a Value,
    /// The archetype's old and new typed values, when it has them (components without `#`
    /// references): instances still equal to the old value take the new one as it is.
    shortcut: Option<(&'a TypedValue, &'a TypedValue)>,
}

/// The entities a patch goes to, sorted by [`Patcher::narrow`].
struct Narrowed {
    /// The entities that take the patch as it is, and their positions.
    plain: Vec<Entity>,
    plain_positions: Vec<usize>,
    /// The entities that take a narrowed patch: position, entity and their patch.
    special: Vec<(usize, Entity, Value)>,
}

struct Patcher<'a> {
    registry: &'a ComponentRegistry,
    library: &'a ArchetypeLibrary,
    instances: &'a Instances,
    overrides: &'a Overrides,
    report: &'a mut ReloadReport,
}

impl<'a> Patcher<'a> {
    /// Applies the change `diff` of archetype `id` (from `old` to `new`) to its live instances:
    /// their changed components, then the entities it lost and gained.
    fn apply(
        &mut self,
        world: &mut World,
        id: ArchetypeId,
        old: &Archetype,
        new: &Archetype,
        diff: &ArchetypeDiff,
    ) {
        let (Some(old_compiled), Some(compiled)) = (&old.compiled, &new.compiled) else {
            return;
        };
        for node_diff in &diff.nodes {
            let nodes = (
                &old_compiled.nodes[node_diff.old_index],
                &compiled.nodes[node_diff.new_index],
            );
            let touched = self.apply_node(world, id, new, node_diff, nodes);
            self.report.entities_updated += touched;
        }
        for node in &diff.removed {
            for &entity in self.entities_of(id, *node) {
                self.report.entities_despawned += despawn_subtree(world, entity);
            }
        }
        if !diff.added.is_empty() {
            let roots = self
                .instances
                .get(&(id, ArchetypeInstance::ROOT))
                .cloned()
                .unwrap_or_default();
            for root in roots {
                self.spawn_added(world, id, root, new, &diff.added);
            }
        }
    }

    /// The live entities of node `node` of archetype `id`.
    fn entities_of(&self, id: ArchetypeId, node: u32) -> &'a [Entity] {
        self.instances
            .get(&(id, node))
            .map_or(&[][..], Vec::as_slice)
    }

    /// Applies the component changes of one node of archetype `id` (`nodes`: its old and new
    /// compiled versions) to its live entities; returns how many had a component written,
    /// inserted or removed.
    fn apply_node(
        &mut self,
        world: &mut World,
        id: ArchetypeId,
        new: &Archetype,
        node_diff: &NodeDiff,
        (old_node, node): (&CompiledNode, &CompiledNode),
    ) -> usize {
        let entities = self.entities_of(id, node_diff.node);
        if entities.is_empty() {
            return 0;
        }
        let mut touched = vec![false; entities.len()];
        for change in &node_diff.changes {
            match change {
                ComponentChange::Patch(component, patch) => {
                    // Values rolled per entity are not the archetype's: no shortcut.
                    let varies = node.varied_mask(*component).is_some()
                        || old_node.varied_mask(*component).is_some();
                    let shortcut = typed_value(old_node, *component)
                        .zip(typed_value(node, *component))
                        .filter(|_| !varies);
                    let patch = PatchJob {
                        component: *component,
                        patch,
                        shortcut,
                    };
                    self.patch(world, id, entities, &patch, &node.path, &mut touched);
                }
                ComponentChange::Add(component) => {
                    for (position, &entity) in entities.iter().enumerate() {
                        if self.insert(world, id, entity, *component, node_diff.new_index, new) {
                            touched[position] = true;
                        }
                    }
                }
                ComponentChange::Remove(component) => {
                    let name = self.registry.name(*component);
                    for (position, &entity) in entities.iter().enumerate() {
                        let overridden = self
                            .overrides
                            .get(&entity)
                            .is_some_and(|o| o.contains_key(name));
                        if !overridden && self.registry.ops(*component).remove(world, entity) {
                            touched[position] = true;
                        }
                    }
                }
            }
        }
        touched.iter().filter(|t| **t).count()
    }

    /// Patches one component on `entities`, marking in `touched` (by their positions in
    /// `entities`) those patched.
    fn patch(
        &mut self,
        world: &mut World,
        id: ArchetypeId,
        entities: &[Entity],
        job: &PatchJob<'_>,
        node_path: &str,
        touched: &mut [bool],
    ) {
        let (component, patch) = (job.component, job.patch);
        let ops = self.registry.ops(component);
        let name = self.registry.name(component);
        let by_reference = mentions_reference(patch);
        if self.overrides.is_empty() && !by_reference {
            // No instance overrides anything: every entity takes the patch as it is.
            let (flags, failures) = ops.patch_entities(world, entities, patch, job.shortcut);
            mark(touched, (0..entities.len()).zip(flags));
            self.report_patch_failures(id, name, failures);
            return;
        }
        let Narrowed {
            plain,
            plain_positions,
            mut special,
        } = self.narrow(entities, name, patch);
        let mut failures = Vec::new();
        if by_reference {
            // `#child` references resolve per instance: one entity at a time.
            special.extend(
                plain_positions
                    .iter()
                    .zip(&plain)
                    .map(|(p, e)| (*p, *e, patch.clone())),
            );
        } else {
            let (flags, mut failed) = ops.patch_entities(world, &plain, patch, job.shortcut);
            mark(touched, plain_positions.iter().copied().zip(flags));
            failures.append(&mut failed);
        }
        for (position, entity, patch) in special {
            let run = |world: &mut World| ops.patch_entities(world, &[entity], &patch, None);
            let (flags, mut failed) = if by_reference {
                let mapper = LiveRefs::for_entity(world, self.library, id, entity, node_path);
                with_mapper(mapper, || run(world)).0
            } else {
                run(world)
            };
            mark(
                touched,
                [(position, flags.first().copied().unwrap_or(false))],
            );
            failures.append(&mut failed);
        }
        self.report_patch_failures(id, name, failures);
    }

    /// Sorts `entities` for a `patch` of the component `name`: most take the patch as it is;
    /// those with overrides of the component get it narrowed to what they do not override.
    fn narrow(&self, entities: &[Entity], name: &str, patch: &Value) -> Narrowed {
        let mut plain = Vec::with_capacity(entities.len());
        let mut plain_positions = Vec::with_capacity(entities.len());
        let mut special = Vec::new();
        for (position, &entity) in entities.iter().enumerate() {
            match self.overrides.get(&entity).and_then(|o| o.get(name)) {
                None => {
                    plain.push(entity);
                    plain_positions.push(position);
                }
                // The instance removed the component: it stays removed.
                Some(Value::Null) => {}
                Some(overridden) => {
                    let mut narrowed = patch.clone();
                    if remove_overridden(&mut narrowed, overridden) {
                        special.push((position, entity, narrowed));
                    }
                }
            }
        }
        Narrowed {
            plain,
            plain_positions,
            special,
        }
    }

    /// Reports the entities of archetype `id` that a patch of the component `name` failed on.
    fn report_patch_failures(
        &mut self,
        id: ArchetypeId,
        name: &str,
        failures: Vec<(Entity, ValueError)>,
    ) {
        let archetype = self.library.name_of(id).unwrap_or("?");
        for (entity, error) in failures {
            self.report.patch_failures.push(PatchFailure::new(
                entity,
                archetype,
                name,
                PatchAction::Patch,
                error.path,
                &error.message,
            ));
        }
    }

    /// Inserts a component the archetype gained, unless the entity already has it (its own
    /// or an override's) or an override removed it. Returns whether it was inserted.
    fn insert(
        &mut self,
        world: &mut World,
        id: ArchetypeId,
        entity: Entity,
        component: ComponentId,
        node_index: usize,
        new: &Archetype,
    ) -> bool {
        let ops = self.registry.ops(component);
        if ops.has(world, entity) {
            return false;
        }
        let name = self.registry.name(component);
        if matches!(
            self.overrides.get(&entity).and_then(|o| o.get(name)),
            Some(Value::Null)
        ) {
            return false;
        }
        let Some(compiled) = &new.compiled else {
            return false;
        };
        let node = &compiled.nodes[node_index];
        if let Some((_, typed)) = node.typed.iter().find(|(c, _)| *c == component) {
            return ops.insert_typed(world, entity, typed);
        }
        let Some((_, value)) = node.with_refs.iter().find(|(c, _)| *c == component) else {
            return false;
        };
        let mapper = LiveRefs::for_entity(world, self.library, id, entity, &node.path);
        let (decoded, _) = with_mapper(mapper, || ops.decode(value, &mut Vec::new()));
        match decoded {
            Ok(typed) => ops.insert_typed(world, entity, &typed),
            Err(error) => {
                self.report.patch_failures.push(PatchFailure::new(
                    entity,
                    self.library.name_of(id).unwrap_or("?"),
                    name,
                    PatchAction::Add,
                    error.path,
                    &error.message,
                ));
                false
            }
        }
    }

    /// Spawns, under one live instance, the entities the archetype gained.
    fn spawn_added(
        &mut self,
        world: &mut World,
        id: ArchetypeId,
        root: Entity,
        new: &Archetype,
        added: &[usize],
    ) {
        let Some(compiled) = &new.compiled else {
            return;
        };
        let spawned = spawn_nodes(
            world,
            self.registry,
            self.library,
            id,
            root,
            compiled,
            added,
        );
        self.report.entities_spawned += spawned.len();
    }
}

/// Marks `touched` at each position whose flag is set.
fn mark(touched: &mut [bool], flags: impl IntoIterator<Item = (usize, bool)>) {
    for (position, patched) in flags {
        if patched {
            touched[position] = true;
        }
    }
}

/// Spawns, under the live instance of archetype `id` whose root is `root`, the entities of
/// the nodes `indices` of `compiled` (parents before children), each linked to its parent
/// entity, with a fresh [`StableId`](crate::StableId). A node whose parent the instance lacks is skipped.
/// Returns each spawned node's index with its entity.
pub(super) fn spawn_nodes(
    world: &mut World,
    registry: &ComponentRegistry,
    library: &ArchetypeLibrary,
    id: ArchetypeId,
    root: Entity,
    compiled: &CompiledArchetype,
    indices: &[usize],
) -> Vec<(usize, Entity)> {
    let mut paths = instance_entities(world, library, id, root);
    let mut spawned = Vec::new();
    for &index in indices {
        let node = &compiled.nodes[index];
        let Some(parent_index) = node.parent else {
            continue;
        };
        let Some(&parent) = paths.get(&*compiled.nodes[parent_index].path) else {
            continue;
        };
        let entity = world.reserve_entity();
        paths.insert(node.path.to_string(), entity);
        let mut builder = EntityBuilder::new();
        let Ok(rolled) = node.rolled(registry, library.spawn_rng()) else {
            continue;
        };
        node.add_values(registry, &rolled, &mut builder, |_| false);
        for (component, value) in &node.with_refs {
            let value = &*node.ref_value(*component, value, library.spawn_rng());
            let mapper = LiveRefs {
                paths: paths.clone(),
                base: compiled.nodes[node.base].path.to_string(),
            };
            let (decoded, _) = with_mapper(mapper, || {
                registry.ops(*component).decode(value, &mut Vec::new())
            });
            if let Ok(typed) = decoded {
                registry
                    .ops(*component)
                    .add_to_builder(&typed, &mut builder);
            }
        }
        builder.add(library.spawn_rng().next_id());
        builder.add(node.marker);
        builder.add(Parent(EntityRef(parent)));
        let _ = world.insert(entity, builder.build());
        match world.query_one_mut::<&mut Children>(parent) {
            Ok(children) => children.0.push(EntityRef(entity)),
            Err(_) => {
                let _ = world.insert_one(parent, Children(vec![EntityRef(entity)]));
            }
        }
        spawned.push((index, entity));
    }
    spawned
}

/// Despawns `entity` and its descendants and unlinks it from its parent. Returns how many
/// entities were despawned.
fn despawn_subtree(world: &mut World, entity: Entity) -> usize {
    if let Ok(Parent(parent)) = world.get::<&Parent>(entity).map(|p| *p) {
        if let Ok(children) = world.query_one_mut::<&mut Children>(parent.0) {
            children.0.retain(|child| child.0 != entity);
        }
    }
    let mut count = 0;
    let mut stack = vec![entity];
    while let Some(next) = stack.pop() {
        if let Ok(children) = world.get::<&Children>(next) {
            stack.extend(children.0.iter().map(|child| child.0));
        }
        if world.despawn(next).is_ok() {
            count += 1;
        }
    }
    count
}

/// The entities of one live instance, by entity path, found through `Children` links.
pub(crate) fn instance_entities(
    world: &World,
    library: &ArchetypeLibrary,
    id: ArchetypeId,
    root: Entity,
) -> FxHashMap<String, Entity> {
    let mut paths = FxHashMap::default();
    let mut stack = vec![root];
    while let Some(entity) = stack.pop() {
        let Ok(marker) = world.get::<&ArchetypeInstance>(entity).map(|m| *m) else {
            continue;
        };
        if marker.archetype != id {
            continue;
        }
        if let Some(path) = library.node_path(marker) {
            paths.insert(path.to_string(), entity);
        }
        if let Ok(children) = world.get::<&Children>(entity) {
            stack.extend(children.0.iter().map(|child| child.0));
        }
    }
    paths
}

/// Finds the root of the instance `entity` belongs to, walking `Parent` links.
pub(crate) fn instance_root(world: &World, id: ArchetypeId, mut entity: Entity) -> Entity {
    loop {
        match world.get::<&ArchetypeInstance>(entity).map(|m| *m) {
            Ok(marker) if marker.archetype == id && !marker.is_root() => {}
            _ => return entity,
        }
        match world.get::<&Parent>(entity).map(|p| *p) {
            Ok(Parent(parent)) => entity = parent.0,
            Err(_) => return entity,
        }
    }
}

/// Whether a patch may hold a `#` entity reference (any string starting with `#`).
fn mentions_reference(value: &Value) -> bool {
    match value {
        Value::String(text) => text.starts_with('#'),
        Value::Array(items) => items.iter().any(mentions_reference),
        Value::Object(map) => map.values().any(mentions_reference),
        _ => false,
    }
}

/// References in live components: raw entity bits stay as they are, `#child` text from the
/// archetype resolves within the entity's own instance.
pub(crate) struct LiveRefs {
    pub paths: FxHashMap<String, Entity>,
    pub base: String,
}

impl LiveRefs {
    fn for_entity(
        world: &World,
        library: &ArchetypeLibrary,
        id: ArchetypeId,
        entity: Entity,
        node_path: &str,
    ) -> Self {
        let root = instance_root(world, id, entity);
        let paths = instance_entities(world, library, id, root);
        let base = library
            .get_by_id(id)
            .and_then(|archetype| archetype.compiled.as_ref())
            .and_then(|compiled| {
                let node = compiled.nodes.iter().find(|n| &*n.path == node_path)?;
                Some(compiled.nodes[node.base].path.to_string())
            })
            .unwrap_or_default();
        LiveRefs { paths, base }
    }
}

impl EntityMapper for LiveRefs {
    fn wire(&self) -> RefWire {
        RefWire::Any
    }
    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        Ok(RefOut::Number(entity.to_bits().get()))
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        match reference {
            RefIn::Number(bits) => Entity::from_bits(bits).ok_or(MapError::InvalidBits(bits)),
            RefIn::Text(text) => {
                let path = resolve_ref_path(text, &self.base)?;
                let child = self.paths.get(&path).copied();
                child.ok_or_else(|| MapError::NoInstanceChild(text.to_string()))
            }
        }
    }
}
