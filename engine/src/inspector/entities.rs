//! What the page shows of the world: the entity list (filtered, one page at a time), one
//! entity's components with each field's live value and where it comes from, the archetype
//! tree with live instance counts, and the library's diagnostics.

use hecs::{Entity, World};
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};

use crate::archetype::{ArchetypeInstance, ArchetypeLibrary, OverrideOrigin, ResolvedEntity};
use crate::component::{ComponentId, Name, StableId};
use crate::json::{FieldPath, PathSegment};

/// Most entities one page lists.
pub(super) const MAX_PAGE: usize = 1000;

/// Which entities the list shows.
#[derive(Debug, Default)]
pub(super) struct Filter<'a> {
    /// Entities of this archetype (exact name).
    pub archetype: Option<&'a str>,
    /// Entities whose `Name` contains this (ignoring ASCII case).
    pub name: Option<&'a str>,
    /// Entities with this component.
    pub component: Option<ComponentId>,
}

/// The page `offset..offset + limit` of the entities `filter` lets through, with their total.
pub(super) fn entity_page(
    world: &World,
    library: &ArchetypeLibrary,
    filter: &Filter<'_>,
    offset: usize,
    limit: usize,
) -> Value {
    let name_filter = filter.name.map(str::to_ascii_lowercase);
    let registry = library.registry();
    let mut total = 0;
    let mut page = Vec::new();
    let mut query = world.query::<(Entity, Option<&ArchetypeInstance>, Option<&Name>)>();
    for (entity, marker, name) in query.iter() {
        let archetype = marker.and_then(|m| library.name_of(m.archetype));
        if filter
            .archetype
            .is_some_and(|wanted| archetype != Some(wanted))
        {
            continue;
        }
        if let Some(wanted) = &name_filter {
            let found = name.is_some_and(|n| n.0.to_ascii_lowercase().contains(wanted.as_str()));
            if !found {
                continue;
            }
        }
        if let Some(component) = filter.component {
            if !registry.ops(component).has(world, entity) {
                continue;
            }
        }
        total += 1;
        if total > offset && page.len() < limit {
            page.push(json!({
                "id": entity_id(entity),
                "name": name.map(|n| n.0.as_str()),
                "archetype": archetype,
            }));
        }
    }
    json!({ "total": total, "offset": offset, "entities": page })
}

/// An entity's ID as the API writes it: hecs's bits, as a string (JavaScript numbers cannot
/// hold every 64-bit value).
pub(super) fn entity_id(entity: Entity) -> String {
    entity.to_bits().get().to_string()
}

/// The entity an API ID names, if it is alive.
pub(super) fn entity_of(world: &World, id: &str) -> Option<Entity> {
    let entity = Entity::from_bits(id.parse().ok()?)?;
    world.contains(entity).then_some(entity)
}

/// The resolved archetype entity an instance marker stands for (its node of its archetype).
pub(super) fn archetype_node<'l>(
    library: &'l ArchetypeLibrary,
    marker: &ArchetypeInstance,
) -> Option<&'l ResolvedEntity> {
    let archetype = library.get_by_id(marker.archetype)?;
    let path = library.node_path(*marker).unwrap_or("");
    let mut node = archetype.resolved();
    for child in path.split('/').filter(|s| !s.is_empty()) {
        node = node.children.get(child)?;
    }
    Some(node)
}

/// One entity: its archetype, node and stable ID, and each component with its live value and
/// each field's source.
pub(super) fn entity_detail(world: &World, library: &ArchetypeLibrary, entity: Entity) -> Value {
    let marker = world.get::<&ArchetypeInstance>(entity).ok().map(|m| *m);
    let stable = world.get::<&StableId>(entity).ok().map(|id| id.to_string());
    let archetype = marker.and_then(|m| library.name_of(m.archetype));
    let node_path = marker.and_then(|m| library.node_path(m)).unwrap_or("");
    let node = marker.and_then(|m| archetype_node(library, &m));
    let overrides = marker.and_then(|m| library.instance_overrides(&m));
    let origin = marker.and_then(|m| library.instance_override_origin(&m));
    let registry = library.registry();
    let mut components = Vec::new();
    for id in registry.ids() {
        let ops = registry.ops(id);
        if registry.is_managed(id) || !ops.has(world, entity) {
            continue;
        }
        let name = registry.name(id);
        let live = match ops.to_json(world, entity) {
            Some(Ok(value)) => value,
            Some(Err(error)) => json!({ "$error": error.to_string() }),
            None => continue,
        };
        let from_archetype = node
            .and_then(|n| n.components.get(name))
            .map(|value| as_live(library, id, value));
        let overridden = overrides.as_ref().and_then(|o| o.0.get(name));
        let source = Source {
            library,
            archetype,
            node_path,
            component: name,
            archetype_value: from_archetype.as_ref(),
            overridden,
            origin,
        };
        let mut fields = Vec::new();
        leaves(&live, &mut Vec::new(), &mut |path, value| {
            fields.push(json!({
                "path": path_json(path),
                "value": value,
                "source": source.of(path, value),
            }));
        });
        components.push(json!({ "name": name, "value": live, "fields": fields }));
    }
    json!({
        "id": entity_id(entity),
        "archetype": archetype,
        "node": node_path,
        "stable_id": stable,
        "components": components,
    })
}

/// Where a component's values come from, for one entity.
struct Source<'a> {
    library: &'a ArchetypeLibrary,
    archetype: Option<&'a str>,
    node_path: &'a str,
    component: &'a str,
    archetype_value: Option<&'a Value>,
    overridden: Option<&'a Value>,
    origin: Option<OverrideOrigin>,
}

impl Source<'_> {
    /// The source of the field at `path` whose live value is `live`: an override of the
    /// instance (`from` its scene entry or its spawn), the archetype file that wrote it (when the live value is
    /// the archetype's, or the archetype rolls it at spawn), the type's default (the
    /// archetype's value, written by no file), or a change at run time.
    fn of(&self, path: &[PathSegment], live: &Value) -> Value {
        if overrides_place(self.overridden, path) {
            let from = match self.origin {
                Some(OverrideOrigin::Scene) => "scene",
                _ => "spawn",
            };
            return json!({ "kind": "override", "from": from });
        }
        let (Some(name), Some(value)) = (self.archetype, self.archetype_value) else {
            return json!({ "kind": "runtime" });
        };
        match value_at(value, path) {
            Some(Reached::Value(expected)) if expected != live => json!({ "kind": "runtime" }),
            None => json!({ "kind": "runtime" }),
            Some(_) => {
                let field = FieldPath::from(path.to_vec());
                let found = (self.library).provenance(name, self.node_path, self.component, &field);
                let Some((file, position)) = found else {
                    // The archetype has the value, but no file writes it: the type's default.
                    return json!({ "kind": "default" });
                };
                json!({
                    "kind": "archetype",
                    "archetype": name,
                    "file": file.to_string_lossy(),
                    "line": position.map(|p| p.line),
                })
            }
        }
    }
}

/// What a path reaches in an archetype's resolved value.
enum Reached<'a> {
    Value(&'a Value),
    /// An operator (`$range`, `$pick`, ...) rolled at spawn, on the way or at the place.
    Rolled,
}

fn value_at<'a>(mut value: &'a Value, path: &[PathSegment]) -> Option<Reached<'a>> {
    for segment in path {
        if is_operator(value) {
            return Some(Reached::Rolled);
        }
        value = match (segment, value) {
            (PathSegment::Key(key), Value::Object(members)) => members.get(key)?,
            (PathSegment::Index(index), Value::Array(items)) => items.get(*index)?,
            _ => return None,
        };
    }
    Some(if is_operator(value) {
        Reached::Rolled
    } else {
        Reached::Value(value)
    })
}

fn is_operator(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|members| members.keys().any(|key| key.starts_with('$')))
}

/// Whether an override shape (component level: `true` for the whole value, or an object of
/// field shapes) covers `path`.
fn overrides_place(shape: Option<&Value>, path: &[PathSegment]) -> bool {
    let mut shape = match shape {
        Some(shape) => shape,
        None => return false,
    };
    for segment in path {
        match (shape, segment) {
            (Value::Bool(true), _) => return true,
            (Value::Object(members), PathSegment::Key(key)) => match members.get(key) {
                Some(inner) => shape = inner,
                None => return false,
            },
            _ => return false,
        }
    }
    !matches!(shape, Value::Null)
}

/// Calls `visit` with each leaf of `value` (a scalar, an array, or an empty object) and its
/// path; objects are walked member by member.
fn leaves(
    value: &Value,
    path: &mut Vec<PathSegment>,
    visit: &mut impl FnMut(&[PathSegment], &Value),
) {
    match value {
        Value::Object(members) if !members.is_empty() && !members.contains_key("$error") => {
            for (key, member) in members {
                path.push(PathSegment::Key(key.clone()));
                leaves(member, path, visit);
                path.pop();
            }
        }
        _ => visit(path, value),
    }
}

/// A path as the API writes it: keys as strings, indexes as numbers.
pub(super) fn path_json(path: &[PathSegment]) -> Value {
    Value::Array(
        path.iter()
            .map(|segment| match segment {
                PathSegment::Key(key) => Value::String(key.clone()),
                PathSegment::Index(index) => json!(index),
            })
            .collect(),
    )
}

/// A path from the API's form; `None` for anything but strings and non-negative integers.
pub(super) fn path_of(value: &Value) -> Option<Vec<PathSegment>> {
    (value.as_array()?.iter())
        .map(|segment| match segment {
            Value::String(key) => Some(PathSegment::Key(key.clone())),
            Value::Number(n) => Some(PathSegment::Index(usize::try_from(n.as_u64()?).ok()?)),
            _ => None,
        })
        .collect()
}

/// Every archetype with its parents, whether it is abstract, its file and its live instance
/// count (root entities of instances).
pub(super) fn archetype_tree(world: &World, library: &ArchetypeLibrary) -> Value {
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    for marker in world.query::<&ArchetypeInstance>().iter() {
        if marker.node == 0 {
            *counts.entry(marker.archetype.0).or_default() += 1;
        }
    }
    let mut names: Vec<&str> = library.names().collect();
    names.sort_unstable();
    let archetypes: Vec<Value> = (names.into_iter())
        .filter_map(|name| library.get(name))
        .map(|archetype| {
            json!({
                "name": archetype.name(),
                "extends": archetype.extends(),
                "abstract": archetype.is_abstract(),
                "file": archetype.file().to_string_lossy(),
                "instances": counts.get(&archetype.id().0).copied().unwrap_or(0),
            })
        })
        .collect();
    json!({ "archetypes": archetypes })
}

/// The library's current diagnostics.
pub(super) fn diagnostics(library: &ArchetypeLibrary) -> Value {
    let list: Vec<Value> = (library.diagnostics().iter())
        .map(|d| {
            json!({
                "severity": d.severity.as_str(),
                "code": d.code.as_str(),
                "message": d.message,
                "file": d.file.as_ref().map(|f| f.to_string_lossy()),
                "line": d.position.map(|p| p.line),
            })
        })
        .collect();
    json!({ "diagnostics": list })
}

/// A component's live value, whole, as JSON.
pub(super) fn live_value(
    world: &World,
    library: &ArchetypeLibrary,
    entity: Entity,
    id: ComponentId,
) -> Option<Value> {
    library.registry().ops(id).to_json(world, entity)?.ok()
}

/// An archetype's value of component `id` as a live value of it writes (`12` of a float field
/// reads back `12.0`), so the two compare by what they mean; as written when it does not decode
/// on its own (it holds an operator rolled at spawn).
pub(super) fn as_live(library: &ArchetypeLibrary, id: ComponentId, value: &Value) -> Value {
    let ops = library.registry().ops(id);
    let typed = ops.decode(value, &mut Vec::new()).ok();
    typed
        .and_then(|typed| ops.encode(&typed).ok())
        .unwrap_or_else(|| value.clone())
}

/// `value` with the place at `path` set to `new` (objects on the way created).
pub(super) fn set_at(value: &mut Value, path: &[PathSegment], new: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        *value = new;
        return true;
    };
    let mut place = value;
    for segment in parents {
        place = match (segment, place) {
            (PathSegment::Key(key), Value::Object(members)) => members
                .entry(key.clone())
                .or_insert_with(|| Value::Object(Map::new())),
            (PathSegment::Index(index), Value::Array(items)) => match items.get_mut(*index) {
                Some(item) => item,
                None => return false,
            },
            _ => return false,
        };
    }
    match (last, place) {
        (PathSegment::Key(key), Value::Object(members)) => {
            members.insert(key.clone(), new);
            true
        }
        (PathSegment::Index(index), Value::Array(items)) => match items.get_mut(*index) {
            Some(item) => {
                *item = new;
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// The value at `path` inside `value`.
pub(super) fn get_at<'a>(mut value: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
    for segment in path {
        value = match (segment, value) {
            (PathSegment::Key(key), Value::Object(members)) => members.get(key)?,
            (PathSegment::Index(index), Value::Array(items)) => items.get(*index)?,
            _ => return None,
        };
    }
    Some(value)
}
