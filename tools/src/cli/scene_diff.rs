//! `archetool scene diff`: the entity-level differences between two scenes, by stable ID.
//!
//! ```text
//! + 00000000000000e1 enemies/goblin
//! - 000000000000000a (no archetype)
//! ~ 00000000000000b2 enemies/goblin
//!     + Armor: {"value": 2}
//!     - Melee
//!     ~ Health.current: 12 -> 5
//! 1 added, 1 removed, 1 changed
//! ```
//!
//! Both scenes are read as JSON documents in the current format (see [`scene`](super::scene)),
//! so a binary scene compares equal to the JSON scene of the same world. Shared values
//! (`{ "$shared": "<key>" }`) are replaced by their entry in the file's `shared` table first:
//! keys are content hashes, so what differs is the content. Entities are matched by ID and
//! listed in ID order; components in name order; fields of a changed component as
//! `Component.path: old -> new` (`(absent)` where one side does not have the field).

use std::collections::BTreeMap;
use std::path::PathBuf;

use archetype_engine::{scene_keys, FieldPath};
use clap::Args;
use serde_json::{Map, Value};

use super::scene::{entities, read_scene, report_load_error, Archetypes};
use super::{one_line, CliError, Context, DirArg, Exit};

/// Arguments of `archetool scene diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The scene before.
    pub old: PathBuf,
    /// The scene after.
    pub new: PathBuf,
    /// The archetypes root (to read binary and older-format scenes).
    #[command(flatten)]
    pub dir: DirArg,
}

/// Compares two scenes; see [`SceneCommand::Diff`](super::scene::SceneCommand::Diff).
///
/// # Errors
/// If a file cannot be read, or the archetypes are needed and their directory does not exist.
pub fn diff(args: &DiffArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let mut archetypes = Archetypes::new(&args.dir.dir);
    let mut documents = Vec::with_capacity(2);
    for path in [&args.old, &args.new] {
        match read_scene(path, &mut archetypes, context)? {
            Ok(scene) => documents.push(scene.document),
            Err(error) => return report_load_error(&error, &archetypes, context),
        }
    }
    let (old, new) = (by_id(&documents[0]), by_id(&documents[1]));
    let (mut added, mut removed, mut changed) = (0, 0, 0);
    let mut ids: Vec<&str> = old.keys().chain(new.keys()).map(String::as_str).collect();
    ids.sort_unstable();
    ids.dedup();
    let out = &mut *context.out;
    for id in ids {
        match (old.get(id), new.get(id)) {
            (None, Some(entity)) => {
                added += 1;
                writeln!(out, "+ {id} {}", label(entity))?;
            }
            (Some(entity), None) => {
                removed += 1;
                writeln!(out, "- {id} {}", label(entity))?;
            }
            (Some(before), Some(after)) if before != after => {
                changed += 1;
                writeln!(out, "~ {id} {}", label(after))?;
                for line in entity_changes(before, after) {
                    writeln!(out, "    {line}")?;
                }
            }
            _ => {}
        }
    }
    if added + removed + changed == 0 {
        return Ok(Exit::Success);
    }
    writeln!(out, "{added} added, {removed} removed, {changed} changed")?;
    Ok(Exit::Findings)
}

/// The entity entries of a document by ID, shared values in place.
fn by_id(document: &Value) -> BTreeMap<String, Map<String, Value>> {
    let empty = Map::new();
    let shared = document
        .get(scene_keys::SHARED)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    entities(document)
        .filter_map(|entity| {
            let id = entity.get(scene_keys::ID)?.as_str()?.to_string();
            let entity = entity
                .iter()
                .map(|(key, value)| (key.clone(), with_shared_values(value, shared)))
                .collect();
            Some((id, entity))
        })
        .collect()
}

/// `value` with every shared-value reference (`{ "$shared": "<key>" }`) replaced by the entry
/// of `shared` it names (references to missing entries are left as they are).
fn with_shared_values(value: &Value, shared: &Map<String, Value>) -> Value {
    match value {
        Value::Object(object) => {
            let key = object.get(scene_keys::SHARED_REF).and_then(Value::as_str);
            match key.and_then(|key| shared.get(key)) {
                // Keys are content hashes, so an entry cannot contain a reference to itself.
                Some(entry) if object.len() == 1 => with_shared_values(entry, shared),
                _ => Value::Object(
                    object
                        .iter()
                        .map(|(k, v)| (k.clone(), with_shared_values(v, shared)))
                        .collect(),
                ),
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| with_shared_values(item, shared))
                .collect(),
        ),
        scalar => scalar.clone(),
    }
}

/// `archetype`, `archetype#child` or `(no archetype)`.
fn label(entity: &Map<String, Value>) -> String {
    let text = |key| entity.get(key).and_then(Value::as_str);
    match (text(scene_keys::ARCHETYPE), text(scene_keys::CHILD)) {
        (Some(archetype), Some(child)) => format!("{archetype}#{child}"),
        (Some(archetype), None) => archetype.to_string(),
        (None, _) => "(no archetype)".to_string(),
    }
}

/// The lines under a changed entity: its archetype or child path if they changed, then its
/// components added, removed and changed, by name.
fn entity_changes(before: &Map<String, Value>, after: &Map<String, Value>) -> Vec<String> {
    let mut lines = Vec::new();
    for key in [scene_keys::ARCHETYPE, scene_keys::CHILD] {
        let (old, new) = (before.get(key), after.get(key));
        if old != new {
            lines.push(format!("{key}: {} -> {}", shown(old), shown(new)));
        }
    }
    let (old, new) = (components(before), components(after));
    let mut names: Vec<&str> = old.keys().chain(new.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        match (old.get(name), new.get(name)) {
            (None, Some(value)) => lines.push(format!("+ {name}: {}", one_line(value))),
            (Some(_), None) => lines.push(format!("- {name}")),
            (Some(old), Some(new)) if old != new => {
                let mut fields = Vec::new();
                field_changes(old, new, FieldPath::root(), &mut fields);
                for (field, old, new) in fields {
                    let place = if field.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name}.{field}")
                    };
                    lines.push(format!("~ {place}: {} -> {}", shown(old), shown(new)));
                }
            }
            _ => {}
        }
    }
    lines
}

/// An entity's components by name.
fn components(entity: &Map<String, Value>) -> BTreeMap<&str, &Value> {
    let components = entity
        .get(scene_keys::COMPONENTS)
        .and_then(Value::as_object);
    components
        .into_iter()
        .flatten()
        .map(|(name, value)| (name.as_str(), value))
        .collect()
}

/// The places where `old` and `new` differ: into objects field by field, anything else (arrays
/// included) as a whole.
fn field_changes<'a>(
    old: &'a Value,
    new: &'a Value,
    path: FieldPath,
    changes: &mut Vec<(FieldPath, Option<&'a Value>, Option<&'a Value>)>,
) {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                match (old.get(key), new.get(key)) {
                    (Some(a), Some(b)) => field_changes(a, b, path.key(key.as_str()), changes),
                    (a, b) => changes.push((path.key(key.as_str()), a, b)),
                }
            }
        }
        _ if old != new => changes.push((path, Some(old), Some(new))),
        _ => {}
    }
}

/// A value on one line, or `(absent)`.
fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_string(), one_line)
}
