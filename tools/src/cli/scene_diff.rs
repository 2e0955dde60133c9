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
//! Both scenes are read as [`SceneDocument`]s in the current format (see
//! [`scene`](super::scene)), so a binary scene compares equal to the JSON scene of the same
//! world. Shared values
//! (`{ "$shared": "<key>" }`) are replaced by their entry in the file's `shared` table first:
//! keys are content hashes, so what differs is the content. Entities are matched by ID and
//! listed in ID order; components in name order; fields of a changed component as
//! `Component.path: old -> new` (`(absent)` where one side does not have the field).

use std::collections::BTreeMap;
use std::path::PathBuf;

use archetype_engine::{scene_keys, FieldPath, SceneDocument};
use clap::Args;
use serde_json::{Map, Value};

use super::scene::{read_scene, report_load_error, Archetypes};
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
    writeln!(out, "{added} added, {removed} removed, {changed} changed")?;
    if added + removed + changed == 0 {
        return Ok(Exit::Success);
    }
    Ok(Exit::Findings)
}

/// One entity of a scene as the diff compares it: shared values in place.
#[derive(PartialEq)]
struct Compared {
    archetype: Option<String>,
    child: Option<String>,
    /// Its fields placing a sub-scene (`scene`, `overrides`), as JSON.
    placement: Vec<(&'static str, Value)>,
    components: BTreeMap<String, Value>,
}

/// The entries of a document by ID, shared values in place.
fn by_id(document: &SceneDocument) -> BTreeMap<String, Compared> {
    let shared = document.shared();
    document
        .entries()
        .iter()
        .map(|entry| {
            let mut placement = Vec::new();
            if let Some(scene) = &entry.scene {
                placement.push((scene_keys::SCENE, Value::String(scene.clone())));
            }
            if !entry.overrides.is_empty() {
                let overrides = Value::Object(entry.overrides.clone());
                placement.push((scene_keys::OVERRIDES, overrides));
            }
            let components = entry
                .components
                .iter()
                .map(|(name, value)| (name.clone(), with_shared_values(value, shared)))
                .collect();
            let compared = Compared {
                archetype: entry.archetype.clone(),
                child: entry.child.clone(),
                placement,
                components,
            };
            (entry.id.to_string(), compared)
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
fn label(entity: &Compared) -> String {
    match (&entity.archetype, &entity.child) {
        (Some(archetype), Some(child)) => format!("{archetype}#{child}"),
        (Some(archetype), None) => archetype.clone(),
        (None, _) => "(no archetype)".to_string(),
    }
}

/// The lines under a changed entity: its archetype, child path or placement if they changed,
/// then its components added, removed and changed, by name.
fn entity_changes(before: &Compared, after: &Compared) -> Vec<String> {
    let mut lines = Vec::new();
    let text = |name: &Option<String>| name.clone().map(Value::String);
    let named = [
        (
            scene_keys::ARCHETYPE,
            text(&before.archetype),
            text(&after.archetype),
        ),
        (scene_keys::CHILD, text(&before.child), text(&after.child)),
    ];
    let placed = |entity: &Compared, key| {
        let found = entity.placement.iter().find(|(k, _)| *k == key);
        found.map(|(_, value)| value.clone())
    };
    let placement = [scene_keys::SCENE, scene_keys::OVERRIDES]
        .map(|key| (key, placed(before, key), placed(after, key)));
    for (key, old, new) in named.into_iter().chain(placement) {
        if old != new {
            let (old, new) = (shown(old.as_ref()), shown(new.as_ref()));
            lines.push(format!("{key}: {old} -> {new}"));
        }
    }
    let (old, new) = (&before.components, &after.components);
    let mut names: Vec<&str> = old.keys().chain(new.keys()).map(String::as_str).collect();
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
