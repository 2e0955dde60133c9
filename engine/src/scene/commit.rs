//! The one place a scene's entities enter a world, and leave it again when a load is undone.
//!
//! Every route of a load (either reader of either encoding, the archetype instances, the
//! children archetypes gained, placed sub-scenes, a [`PreparedScene`]'s batches) hands its
//! entities here: one at a time ([`entity`]) or a column batch at a time ([`batch_at`],
//! [`batch`]). An entity's identity, its stable ID and, for an archetype instance, its
//! [`ArchetypeInstance`] marker, is added here ([`Identity`]; [`Identities`] writes a batch's
//! columns), never by the caller; so are the `Parent`/`Children` links that place an entity
//! under another ([`link_child`], [`reidentify`]), and the changes to the components of an
//! entity in the world (a placement's overrides, a live scene's edits: [`patch_component`],
//! [`insert_component`], [`remove_component`], [`set_marker`]). [`roll_back`] takes a failed load's entities
//! out again. No other file in `scene/` spawns, inserts into or despawns from the world a scene
//! is loaded into (checked by this file's unit test over the sources).
//!
//! [`PreparedScene`]: crate::scene::PreparedScene

use hecs::{
    BatchWriter, ColumnBatch, ColumnBatchBuilder, ColumnBatchType, Entity, EntityBuilder, World,
};

use serde_json::Value;

use crate::archetype::ArchetypeInstance;
use crate::component::{Children, ComponentId, ComponentRegistry, EntityRef, Parent, StableId};
use crate::component::{TypedValue, ValueError};

/// Who an entity of a scene is: its stable ID in the world and, for an entity of an archetype
/// instance, its marker (archetype, node, overrides).
#[derive(Clone, Copy, Debug)]
pub(super) struct Identity {
    pub id: StableId,
    pub marker: Option<ArchetypeInstance>,
}

impl Identity {
    /// A plain entity's.
    pub(super) fn plain(id: StableId) -> Identity {
        Identity { id, marker: None }
    }

    /// An archetype instance entity's.
    pub(super) fn instance(id: StableId, marker: ArchetypeInstance) -> Identity {
        Identity {
            id,
            marker: Some(marker),
        }
    }
}

/// The commit could not put an entity or batch where it was to go: a handle no longer
/// reserved (despawned or given components meanwhile), or a batch whose rows do not match its
/// handles. The world holds nothing of it; the caller undoes the rest of its load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NotCommitted;

/// Puts one entity into `world`: the components in `builder` (emptied) with its `identity`, on
/// `handle` (reserved for it) or, with `None`, on a new one. Its handle.
pub(super) fn entity(
    world: &mut World,
    handle: Option<Entity>,
    identity: Identity,
    builder: &mut EntityBuilder,
) -> Result<Entity, NotCommitted> {
    builder.add(identity.id);
    if let Some(marker) = identity.marker {
        builder.add(marker);
    }
    match handle {
        Some(handle) => {
            let inserted = world.insert(handle, builder.build());
            inserted.map(|()| handle).map_err(|_| NotCommitted)
        }
        // Not `spawn_at`: it searches hecs's whole free list for the handle.
        None => Ok(world.spawn(builder.build())),
    }
}

/// Adds the identity columns to a batch type: the stable IDs, and the markers for archetype
/// instances.
pub(super) fn identity_columns(batch_type: &mut ColumnBatchType, instances: bool) {
    batch_type.add::<StableId>();
    if instances {
        batch_type.add::<ArchetypeInstance>();
    }
}

/// The identity columns of a column batch being filled: the stable IDs, and the markers if
/// the batch's entities are archetype instances (it has that column).
pub(super) struct Identities<'b> {
    ids: BatchWriter<'b, StableId>,
    markers: Option<BatchWriter<'b, ArchetypeInstance>>,
}

impl<'b> Identities<'b> {
    /// The writers of `batch`'s identity columns; `None` if it has no stable-ID column.
    pub(super) fn of(batch: &'b ColumnBatchBuilder) -> Option<Identities<'b>> {
        Some(Identities {
            ids: batch.writer::<StableId>()?,
            markers: batch.writer::<ArchetypeInstance>(),
        })
    }

    /// The next row's identity. An instance's marker in a batch without a marker column, a
    /// plain entity in one with it, or a full column is [`NotCommitted`].
    pub(super) fn push(&mut self, identity: Identity) -> Result<(), NotCommitted> {
        let marked = match (&mut self.markers, identity.marker) {
            (Some(markers), Some(marker)) => markers.push(marker).is_ok(),
            (None, None) => true,
            _ => false,
        };
        match marked && self.ids.push(identity.id).is_ok() {
            true => Ok(()),
            false => Err(NotCommitted),
        }
    }
}

/// Writes the stable IDs of a batch whose markers, if any, are in it already (a prepared
/// batch's columns, cloned from the staging world the load committed them into).
pub(super) fn stable_ids(
    batch: &ColumnBatchBuilder,
    ids: impl Iterator<Item = StableId>,
) -> Result<(), NotCommitted> {
    let mut writer = batch.writer::<StableId>().ok_or(NotCommitted)?;
    for id in ids {
        writer.push(id).map_err(|_| NotCommitted)?;
    }
    Ok(())
}

/// Spawns `batch`, sized for `rows` entities, on `handles` (reserved for them, in its rows'
/// order).
pub(super) fn batch_at(
    world: &mut World,
    handles: &[Entity],
    batch: ColumnBatchBuilder,
    rows: u32,
) -> Result<(), NotCommitted> {
    // hecs asserts a batch and its handles match: a panic is no answer to a bad file.
    if handles.len() != rows as usize {
        return Err(NotCommitted);
    }
    // Complete only if every column holds `rows` values.
    let batch = batch.build().map_err(|_| NotCommitted)?;
    world.spawn_column_batch_at(handles, batch);
    Ok(())
}

/// Spawns a complete `batch` (its identity columns written) on `handles`, which are as many as
/// its rows.
pub(super) fn built_batch_at(world: &mut World, handles: &[Entity], batch: ColumnBatch) {
    world.spawn_column_batch_at(handles, batch);
}

/// Spawns a complete `batch` (its identity columns written) on new handles: the handles, in
/// its rows' order.
pub(super) fn batch(world: &mut World, batch: ColumnBatch) -> impl Iterator<Item = Entity> + '_ {
    world.spawn_column_batch(batch)
}

/// Adds `child` to `parent`'s `Children` (an entity an archetype gained under its parent).
pub(super) fn link_child(world: &mut World, parent: Entity, child: Entity) {
    match world.query_one_mut::<&mut Children>(parent) {
        Ok(children) => children.0.push(EntityRef(child)),
        Err(_) => {
            let _ = world.insert_one(parent, Children(vec![EntityRef(child)]));
        }
    }
}

/// Places `roots` (entities without a parent) under `placing`: each gets it as its `Parent`,
/// and it lists them after its own `Children`.
pub(super) fn place_under(world: &mut World, placing: Entity, roots: &[Entity]) {
    if roots.is_empty() {
        return;
    }
    for root in roots {
        let _ = world.insert_one(*root, Parent(EntityRef(placing)));
    }
    let mut children = world
        .get::<&Children>(placing)
        .map(|children| children.0.clone())
        .unwrap_or_default();
    children.extend(roots.iter().map(|root| EntityRef(*root)));
    let _ = world.insert_one(placing, Children(children));
}

/// Gives `entity` (of a placed sub-scene) the stable ID its placement derives.
pub(super) fn reidentify(world: &mut World, entity: Entity, id: StableId) {
    if let Ok(mut stable) = world.get::<&mut StableId>(entity) {
        *stable = id;
    }
}

/// Applies a merge patch to `entity`'s `component`, keeping every field it does not name (an
/// edit of a scene file reaching a live entity; a sub-scene placement's overrides). `Ok(false)`
/// if the entity has no such component; the error says why the patched value is refused.
pub(super) fn patch_component(
    world: &mut World,
    registry: &ComponentRegistry,
    component: ComponentId,
    entity: Entity,
    patch: &Value,
) -> Result<bool, ValueError> {
    let ops = registry.ops(component);
    let (patched, mut failures) = ops.patch_entities(world, &[entity], patch, None);
    match failures.pop() {
        Some((_, error)) => Err(error),
        None => Ok(patched.first().copied().unwrap_or(false)),
    }
}

/// Gives `entity` a `component` value (replacing one it has).
pub(super) fn insert_component(
    world: &mut World,
    registry: &ComponentRegistry,
    component: ComponentId,
    entity: Entity,
    value: &TypedValue,
) -> bool {
    registry.ops(component).insert_typed(world, entity, value)
}

/// Takes `component` off `entity`.
pub(super) fn remove_component(
    world: &mut World,
    registry: &ComponentRegistry,
    component: ComponentId,
    entity: Entity,
) -> bool {
    registry.ops(component).remove(world, entity)
}

/// Gives an archetype instance entity its marker as its file now says (another archetype, or
/// other overrides).
pub(super) fn set_marker(world: &mut World, entity: Entity, marker: ArchetypeInstance) -> bool {
    world.insert_one(entity, marker).is_ok()
}

/// Takes entities out of the world again: those a load that failed made or reserved, so the
/// world is as it was (a handle never used is released; one already gone is skipped), and the
/// entries a load leaves out, with the links to them from their parents' `Children`.
pub(super) fn roll_back(world: &mut World, handles: impl IntoIterator<Item = Entity>) {
    for handle in handles {
        let _ = world.despawn(handle);
    }
}

/// Drops the links to `gone` (entities taken out) from the `Children` of `parents`.
pub(super) fn unlink(world: &mut World, parents: &[Entity], gone: &rustc_hash::FxHashSet<Entity>) {
    for parent in parents {
        if let Ok(children) = world.query_one_mut::<&mut Children>(*parent) {
            children.0.retain(|child| !gone.contains(&child.0));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// What changes a world: the calls no file of `scene/` but this one makes on the world a
    /// scene loads into (named `world`, or `staging` for a prepared scene's).
    const WRITES: &[&str] = &[
        ".spawn(",
        ".spawn_at(",
        ".spawn_batch(",
        ".spawn_column_batch",
        ".insert(",
        ".insert_one(",
        ".exchange",
        ".remove::<",
        ".remove_one::<",
        ".despawn(",
        ".clear(",
        ".query_one_mut::<&mut",
        ".query_mut::<",
        ".get::<&mut",
        ".patch_entities(world",
        ".insert_typed(world",
        ".overwrite_typed(world",
        ".remove(world",
    ];

    /// Writes made elsewhere, each for a reason the commit does not cover.
    const ELSEWHERE: &[(&str, &str, &str)] = &[(
        "reservation.rs",
        "world.spawn(",
        "the sentinel that marks reserved handles is no entity of the scene",
    )];

    /// The code of `text` before its unit tests, without `//` comments, whitespace left out
    /// (so a call broken over lines reads as one).
    fn code(text: &str) -> String {
        let text = text.split("#[cfg(test)]").next().unwrap_or(text);
        let lines = text
            .lines()
            .map(|line| line.split("//").next().unwrap_or(line));
        lines.flat_map(|line| line.split_whitespace()).collect()
    }

    /// Each write in `code` (see [`code`]) on a world: the call, with its receiver.
    fn writes(code: &str) -> Vec<String> {
        let mut found = Vec::new();
        for receiver in ["world", "staging"] {
            for write in WRITES {
                let call = match write.strip_prefix(".patch_entities(") {
                    Some(_) => write.to_string(),
                    None => format!("{receiver}{write}"),
                };
                let mut rest = code;
                while let Some(at) = rest.find(&call) {
                    let before = rest[..at].chars().next_back();
                    if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        found.push(call.clone());
                    }
                    rest = &rest[at + call.len()..];
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }

    #[test]
    fn a_scenes_entities_enter_and_leave_the_world_only_through_the_commit() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/scene");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("engine/src/scene")
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        assert!(files.len() > 20, "found only {} files", files.len());
        let mut outside = Vec::new();
        let mut needed = Vec::new();
        for path in &files {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name == "commit.rs" {
                continue;
            }
            let text = std::fs::read_to_string(path).expect("a scene source file");
            let code = code(&text);
            for call in writes(&code) {
                let allowed = ELSEWHERE
                    .iter()
                    .find(|(file, write, _)| *file == name && *write == call);
                match allowed {
                    Some(allowed) => needed.push(*allowed),
                    None => outside.push(format!("engine/src/scene/{name}: `{call}`")),
                }
            }
        }
        assert!(
            outside.is_empty(),
            "scene code writing to a world outside scene/commit.rs (put the entity in through \
             the commit):\n{}",
            outside.join("\n")
        );
        for allowed in ELSEWHERE {
            assert!(
                needed.contains(allowed),
                "{}: `{}` is no longer made there; take it off the list",
                allowed.0,
                allowed.1
            );
        }
    }

    #[test]
    fn the_check_finds_writes_broken_over_lines_and_not_lookalikes() {
        let text = "fn f(world: &mut World) {\n    world\n        .insert(handle, b.build())\n\
                    // world.despawn(e) in a comment\n    let _ = other_world.despawn(e);\n\
                    map.insert(1, 2);\n    staging.spawn_column_batch(batch);\n}\n\
                    #[cfg(test)]\nmod tests { fn t(world: &mut World) { world.spawn(()); } }\n";
        assert_eq!(
            writes(&code(text)),
            ["staging.spawn_column_batch", "world.insert("]
        );
    }
}
