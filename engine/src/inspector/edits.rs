//! The inspector's writes, on the game thread: a live field set (the world only), and the
//! write-back of an entity's fields (Apply to archetype, Revert to archetype, Save as new
//! archetype) through the library's own file writing, followed by a reload of the written
//! file that patches every instance.

use hecs::{Entity, World};
use serde_json::{json, Map, Value};

use crate::archetype::{ArchetypeInstance, ArchetypeLibrary, FieldValue, OverrideOrigin};
use crate::component::ComponentId;
use crate::inspector::entities::{archetype_node, as_live, get_at, live_value, set_at};
use crate::inspector::http::Response;
use crate::json::{merge_patch, FieldPath, PathSegment};
use crate::reload::apply_update;

/// A field of a component, as a write names it.
pub(super) struct Place {
    pub component: ComponentId,
    pub path: Vec<PathSegment>,
}

/// Sets `place` of `entity` to `value` in the world (the component decoded from its live
/// value with the field replaced, so a value the type refuses changes nothing).
pub(super) fn set_field(
    world: &mut World,
    library: &ArchetypeLibrary,
    entity: Entity,
    place: &Place,
    value: Value,
) -> Result<(), Response> {
    let registry = library.registry();
    let mut whole = live_value(world, library, entity, place.component)
        .ok_or_else(|| Response::error(404, "the entity has no such component"))?;
    if !set_at(&mut whole, &place.path, value) {
        return Err(Response::error(400, "the component has no such field"));
    }
    let ops = registry.ops(place.component);
    let mut unknown = Vec::new();
    let typed = ops.decode(&whole, &mut unknown).map_err(|error| {
        let at = match error.path.is_empty() {
            true => String::new(),
            false => format!(" at `{}`", error.path),
        };
        Response::error(400, format!("invalid value{at}: {}", error.message))
    })?;
    if let Some(field) = unknown.first() {
        return Err(Response::error(400, format!("unknown field `{field}`")));
    }
    ops.overwrite_typed(world, entity, &typed);
    Ok(())
}

/// The entity's archetype name and marker (the archetype of the instance it belongs to).
fn instance_of<'l>(
    world: &World,
    library: &'l ArchetypeLibrary,
    entity: Entity,
) -> Result<(&'l str, ArchetypeInstance), Response> {
    let marker = world
        .get::<&ArchetypeInstance>(entity)
        .map(|m| *m)
        .map_err(|_| Response::error(400, "the entity is not an archetype instance"))?;
    let name = library
        .name_of(marker.archetype)
        .ok_or_else(|| Response::error(409, "the entity's archetype is gone"))?;
    Ok((name, marker))
}

/// [`instance_of`] for the root entity of an instance: a child is refused (a new archetype
/// extends an archetype's root).
fn root_archetype<'l>(
    world: &World,
    library: &'l ArchetypeLibrary,
    entity: Entity,
) -> Result<(&'l str, ArchetypeInstance), Response> {
    let (name, marker) = instance_of(world, library, entity)?;
    if !marker.is_root() {
        return Err(Response::error(
            400,
            "the entity is a child of an archetype instance; save its instance's root as a new archetype",
        ));
    }
    Ok((name, marker))
}

/// Writes `places` of `entity`'s live values into its archetype's file (a child's into the
/// archetype's `children`), drops the entity's overrides of them (its values are now the
/// archetype's, and later edits of the archetype reach it), reloads the file and patches
/// every instance.
pub(super) fn apply_to_archetype(
    world: &mut World,
    library: &mut ArchetypeLibrary,
    entity: Entity,
    places: &[Place],
) -> Result<Value, Response> {
    let (name, marker) = instance_of(world, library, entity)?;
    let name = name.to_string();
    let child = library.node_path(marker).unwrap_or("").to_string();
    let mut values = Vec::with_capacity(places.len());
    for place in places {
        let whole = live_value(world, library, entity, place.component)
            .ok_or_else(|| Response::error(404, "the entity has no such component"))?;
        let value = get_at(&whole, &place.path)
            .ok_or_else(|| Response::error(400, "the component has no such field"))?;
        let component = library.registry().name(place.component).to_string();
        values.push(FieldValue::new(
            component,
            FieldPath::from(place.path.clone()),
            value.clone(),
        ));
    }
    let file = library
        .write_to_archetype_child(&name, &child, &values)
        .map_err(|error| Response::error(409, error.to_string()))?;
    drop_overrides(world, library, entity, marker, places);
    Ok(reload(world, library, &file, &name))
}

/// Sets `places` of `entity` back to its archetype's values.
pub(super) fn revert_to_archetype(
    world: &mut World,
    library: &ArchetypeLibrary,
    entity: Entity,
    places: &[Place],
) -> Result<Value, Response> {
    let marker = world
        .get::<&ArchetypeInstance>(entity)
        .map(|m| *m)
        .map_err(|_| Response::error(400, "the entity is not an archetype instance"))?;
    let node = archetype_node(library, &marker)
        .ok_or_else(|| Response::error(409, "the entity's archetype is gone"))?;
    for place in places {
        let name = library.registry().name(place.component);
        let value = (node.components.get(name))
            .and_then(|value| get_at(value, &place.path))
            .ok_or_else(|| Response::error(400, "the archetype has no value there"))?;
        set_field(world, library, entity, place, value.clone())?;
    }
    drop_overrides(world, library, entity, marker, places);
    Ok(json!({ "reverted": places.len() }))
}

/// Takes `places` out of the instance's override record, so the archetype's later changes
/// reach them again (hot reload leaves what an instance overrides alone).
fn drop_overrides(
    world: &mut World,
    library: &ArchetypeLibrary,
    entity: Entity,
    marker: ArchetypeInstance,
    places: &[Place],
) {
    let Some(overrides) = library.instance_overrides(&marker) else {
        return;
    };
    let origin = (library.instance_override_origin(&marker)).unwrap_or(OverrideOrigin::Spawn);
    let mut shape = (*overrides.0).clone();
    for place in places {
        let name = library.registry().name(place.component);
        let keys: Option<Vec<&str>> = (place.path.iter())
            .map(|segment| match segment {
                PathSegment::Key(key) => Some(key.as_str()),
                PathSegment::Index(_) => None,
            })
            .collect();
        if let Some(keys) = keys {
            remove_from_shape(&mut shape, name, &keys);
        }
    }
    let id = library.override_shapes().intern(shape, origin);
    if let Ok(mut marker) = world.get::<&mut ArchetypeInstance>(entity) {
        marker.overrides = id;
    }
}

/// Removes the place `component` then `keys` from an override shape; objects it leaves empty
/// go too. A place inside a value overridden whole (`true`) stays overridden.
fn remove_from_shape(shape: &mut Map<String, Value>, component: &str, keys: &[&str]) {
    fn remove(members: &mut Map<String, Value>, key: &str, rest: &[&str]) {
        let Some(inner) = members.get_mut(key) else {
            return;
        };
        match (rest.split_first(), inner) {
            (None, _) => {
                members.remove(key);
            }
            (Some((next, rest)), Value::Object(inner)) => {
                remove(inner, next, rest);
                if inner.is_empty() {
                    members.remove(key);
                }
            }
            (Some(_), _) => {}
        }
    }
    remove(shape, component, keys);
}

/// Writes a new archetype `new_name` extending `entity`'s with the entity's differences from
/// it, and loads it.
pub(super) fn save_as_archetype(
    world: &mut World,
    library: &mut ArchetypeLibrary,
    entity: Entity,
    new_name: &str,
) -> Result<Value, Response> {
    let (base, marker) = root_archetype(world, library, entity)?;
    let base = base.to_string();
    let node = archetype_node(library, &marker)
        .ok_or_else(|| Response::error(409, "the entity's archetype is gone"))?;
    let registry = library.registry();
    let mut differences = Map::new();
    for id in registry.ids() {
        if registry.is_managed(id) || registry.is_runtime_only(id) {
            continue;
        }
        let Some(live) = live_value(world, library, entity, id) else {
            continue;
        };
        let name = registry.name(id);
        let difference = match node.components.get(name) {
            Some(archetype) => merge_patch::diff(&as_live(library, id, archetype), &live),
            None => Some(live),
        };
        if let Some(difference) = difference {
            differences.insert(name.to_string(), difference);
        }
    }
    let file = library
        .write_derived_archetype(new_name, &base, &differences)
        .map_err(|error| Response::error(409, error.to_string()))?;
    Ok(reload(world, library, &file, new_name))
}

/// Reloads `file` and patches the world; the answer names the file and the archetype.
fn reload(
    world: &mut World,
    library: &mut ArchetypeLibrary,
    file: &std::path::Path,
    name: &str,
) -> Value {
    let update = library.reload_files(&[file]);
    let report = apply_update(world, library, &update);
    // The file as the library names it (under its root as the game gave it).
    let shown = library.file_of(name).unwrap_or(file);
    json!({
        "archetype": name,
        "file": shown.to_string_lossy(),
        "entities_updated": report.entities_updated(),
        "errors": report.errors().iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
    })
}
