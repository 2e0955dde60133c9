//! The JSON API, answered on the game thread: routes a request to the view or edit it asks
//! for, reading its parameters and body (never trusting them: an unknown entity, component or
//! field is a 4xx answer, never a panic).
//!
//! | request | answer |
//! |---|---|
//! | `GET /api/entities?archetype=&name=&component=&offset=&limit=` | `{ total, offset, entities: [{ id, name, archetype }] }` |
//! | `GET /api/entity?id=` | `{ id, archetype, node, stable_id, components: [{ name, value, fields: [{ path, value, source }] }] }`; a `source` is `{ kind: "archetype", archetype, file, line }`, `{ kind: "override", from: "scene" | "spawn" }`, `{ kind: "default" }` or `{ kind: "runtime" }` |
//! | `GET /api/archetypes` | `{ archetypes: [{ name, extends, abstract, file, instances }] }` |
//! | `GET /api/diagnostics` | `{ diagnostics: [{ severity, code, message, file, line }] }` |
//! | `POST /api/set` `{ id, component, path, value }` | the entity, as `GET /api/entity` |
//! | `POST /api/apply` `{ id, fields: [{ component, path }] }` | `{ archetype, file, entities_updated }` |
//! | `POST /api/revert` `{ id, fields: [{ component, path }] }` | `{ reverted }` |
//! | `POST /api/save-as` `{ id, name }` | `{ archetype, file, entities_updated }` |

use hecs::{Entity, World};
use serde_json::Value;

use crate::archetype::ArchetypeLibrary;
use crate::inspector::edits::{self, Place};
use crate::inspector::entities::{self, entity_of, path_of, Filter, MAX_PAGE};
use crate::inspector::http::{Request, Response};

/// The answer to `request`.
pub(super) fn answer(
    request: &Request,
    world: &mut World,
    library: &mut ArchetypeLibrary,
) -> Response {
    let result = match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/api/entities") => list(request, world, library),
        ("GET", "/api/entity") => {
            let entity = entity_param(world, request.param("id"));
            entity.map(|entity| entities::entity_detail(world, library, entity))
        }
        ("GET", "/api/archetypes") => Ok(entities::archetype_tree(world, library)),
        ("GET", "/api/diagnostics") => Ok(entities::diagnostics(library)),
        ("POST", "/api/set") => set(request, world, library),
        ("POST", "/api/apply") => write(request, world, library, Write::Apply),
        ("POST", "/api/revert") => write(request, world, library, Write::Revert),
        ("POST", "/api/save-as") => save_as(request, world, library),
        _ => Err(Response::error(404, "no such page")),
    };
    match result {
        Ok(value) => Response::json(200, &value),
        Err(response) => response,
    }
}

/// `GET /api/entities`.
fn list(request: &Request, world: &World, library: &ArchetypeLibrary) -> Result<Value, Response> {
    let component = match request.param("component").filter(|c| !c.is_empty()) {
        Some(name) => Some(
            (library.registry().id(name))
                .ok_or_else(|| Response::error(400, format!("no component `{name}`")))?,
        ),
        None => None,
    };
    let filter = Filter {
        archetype: request.param("archetype").filter(|a| !a.is_empty()),
        name: request.param("name").filter(|n| !n.is_empty()),
        component,
    };
    let number = |name: &str, default: usize| -> Result<usize, Response> {
        match request.param(name) {
            None | Some("") => Ok(default),
            Some(text) => (text.parse())
                .map_err(|_| Response::error(400, format!("`{name}` is not a number"))),
        }
    };
    let offset = number("offset", 0)?;
    let limit = number("limit", 100)?.min(MAX_PAGE);
    Ok(entities::entity_page(
        world, library, &filter, offset, limit,
    ))
}

/// The live entity an `id` names.
fn entity_param(world: &World, id: Option<&str>) -> Result<Entity, Response> {
    let id = id.ok_or_else(|| Response::error(400, "an `id` is needed"))?;
    entity_of(world, id).ok_or_else(|| Response::error(404, format!("no entity `{id}`")))
}

/// The request's body as a JSON object.
fn body(request: &Request) -> Result<serde_json::Map<String, Value>, Response> {
    match serde_json::from_slice(&request.body) {
        Ok(Value::Object(members)) => Ok(members),
        _ => Err(Response::error(400, "the body is not a JSON object")),
    }
}

/// The place `{ component, path }` names.
fn place(library: &ArchetypeLibrary, value: &Value) -> Result<Place, Response> {
    let name = (value.get("component").and_then(Value::as_str))
        .ok_or_else(|| Response::error(400, "a `component` is needed"))?;
    let component = (library.registry().id(name))
        .ok_or_else(|| Response::error(400, format!("no component `{name}`")))?;
    let path = (value.get("path").map_or(Some(Vec::new()), path_of))
        .ok_or_else(|| Response::error(400, "`path` is an array of keys and indexes"))?;
    Ok(Place { component, path })
}

/// `POST /api/set`.
fn set(
    request: &Request,
    world: &mut World,
    library: &ArchetypeLibrary,
) -> Result<Value, Response> {
    let mut body = body(request)?;
    let entity = entity_param(world, body.get("id").and_then(Value::as_str))?;
    let place = place(library, &Value::Object(body.clone()))?;
    let value = body
        .remove("value")
        .ok_or_else(|| Response::error(400, "a `value` is needed"))?;
    edits::set_field(world, library, entity, &place, value)?;
    Ok(entities::entity_detail(world, library, entity))
}

/// Which write-back a request asks for.
enum Write {
    Apply,
    Revert,
}

/// `POST /api/apply` and `POST /api/revert`.
fn write(
    request: &Request,
    world: &mut World,
    library: &mut ArchetypeLibrary,
    kind: Write,
) -> Result<Value, Response> {
    let body = body(request)?;
    let entity = entity_param(world, body.get("id").and_then(Value::as_str))?;
    let fields = (body.get("fields").and_then(Value::as_array))
        .ok_or_else(|| Response::error(400, "`fields` is an array of { component, path }"))?;
    let places = (fields.iter())
        .map(|field| place(library, field))
        .collect::<Result<Vec<_>, _>>()?;
    if places.is_empty() {
        return Err(Response::error(400, "no fields chosen"));
    }
    match kind {
        Write::Apply => edits::apply_to_archetype(world, library, entity, &places),
        Write::Revert => edits::revert_to_archetype(world, library, entity, &places),
    }
}

/// `POST /api/save-as`.
fn save_as(
    request: &Request,
    world: &mut World,
    library: &mut ArchetypeLibrary,
) -> Result<Value, Response> {
    let body = body(request)?;
    let entity = entity_param(world, body.get("id").and_then(Value::as_str))?;
    let name = (body.get("name").and_then(Value::as_str))
        .ok_or_else(|| Response::error(400, "a `name` is needed"))?;
    edits::save_as_archetype(world, library, entity, name)
}
