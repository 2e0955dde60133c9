//! Scenes placed inside scenes (issue 23, point 3): an entry with a `scene` key places another
//! scene file, whose entities are loaded with stable IDs derived from the placing entry's.
//!
//! ```json
//! { "id": "00000000000000f1", "scene": "rooms/armory.scene.json",
//!   "components": { "Transform": { "translation": [10.0, 0.0, 0.0] } },
//!   "overrides": { "00000000000000a1": { "Health": { "current": 5 } },
//!                  "00000000000000b7/00000000000000a1": { "Name": "inner guard" } } }
//! ```
//!
//! The placing entry is an entity of its own (its `components`, `archetype`, as any entry);
//! the sub-scene's entities without a `Parent` become its children (`Parent`, and its
//! `Children`). Each sub-scene entity's stable ID is [`derive_id`] of the placing entry's ID
//! and its own, so loading again gives the same IDs; references inside the sub-scene stay
//! inside it (it is loaded as a scene of its own). `overrides` patches (merge patch) the
//! components of sub-scene entities by path: their ID in the sub-scene, or, through a scene the
//! sub-scene places itself, the placing entry's ID there, `/`, and so on.
//!
//! The file's `scene` and `overrides` members are blanked out (replaced by spaces) before the
//! rest is loaded, so every other error keeps its line and column.

use std::fmt;
use std::path::{Path, PathBuf};

use hecs::{Entity, World};
use serde_json::{Map, Value};

use crate::archetype::read_limited;
use crate::archetype::ArchetypeLibrary;
use crate::component::EntityRef;
use crate::component::StableId;
use crate::component::{Children, Parent};
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::json::PathSegment;
use crate::json::SourceText;
use crate::scene::format::scene_keys as keys;
use crate::scene::load::{IdConflict, LoadedScene, SceneError, SceneLoadOptions};

/// The stable ID an entity with ID `own` in a sub-scene gets when the entry with ID `placing`
/// places that sub-scene: SplitMix64's finalizer over the two, the same for the same pair on
/// every run and machine (so a level saved after loading keeps its IDs). For an entity two
/// levels down, apply it twice: `sub_scene_id(outer, sub_scene_id(inner, own))`.
///
/// # Example
/// ```
/// use archetype_engine::{sub_scene_id, StableId};
/// let placing = StableId(0xc1);
/// let own = StableId(0xa1);
/// assert_eq!(sub_scene_id(placing, own), sub_scene_id(placing, own));
/// assert_ne!(sub_scene_id(placing, own), sub_scene_id(StableId(0xc2), own));
/// ```
pub fn sub_scene_id(placing: StableId, own: StableId) -> StableId {
    derive_id(placing, own)
}

pub(super) fn derive_id(placing: StableId, own: StableId) -> StableId {
    let mut z = placing.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ own.0;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    StableId(z ^ (z >> 31))
}

/// One entry placing a sub-scene.
struct Placement {
    id: StableId,
    /// The `scene` value, and where it is (byte offset of the value).
    scene: String,
    scene_at: usize,
    /// The `overrides` object, in the file's order.
    overrides: Vec<Override>,
}

/// One override: entity path, its key's offset, and component → merge patch.
type Override = (String, usize, Map<String, Value>);

/// What loading a scene with its sub-scenes needs besides the bytes.
pub(super) struct Nesting<'a> {
    pub library: &'a ArchetypeLibrary,
    pub options: &'a SceneLoadOptions,
    /// The files being loaded, outermost first (to name a cycle).
    pub stack: Vec<PathBuf>,
}

/// Loads `bytes` with the scenes it places, if it places any (`None`: it places none, or it
/// is not JSON a sub-scene can be found in: the loader's own error stands). Called once the
/// loader refused the file (it knows no `scene` key), so ordinary loads pay nothing.
pub(super) fn load_with_sub_scenes(
    bytes: &[u8],
    file: Option<&Path>,
    world: &mut World,
    nesting: &mut Nesting<'_>,
) -> Option<Result<LoadedScene, SceneError>> {
    let needle = format!("\"{}\"", keys::SCENE);
    if !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
        return None;
    }
    let text = SourceText::from_bytes(bytes.to_vec()).ok()?;
    let placements = match placements(&text, file) {
        Ok(placements) if placements.is_empty() => return None,
        Ok(placements) => placements,
        Err(error) => return Some(Err(error)),
    };
    let rest = blank_members(&text, placements.len());
    Some(load_placed(&rest, &text, file, world, nesting, placements))
}

/// The entries that place a sub-scene, in the file's order.
fn placements(text: &SourceText, file: Option<&Path>) -> Result<Vec<Placement>, SceneError> {
    let Ok(document) = serde_json::from_str::<Value>(text.text()) else {
        return Ok(Vec::new());
    };
    let Some(entries) = document.get(keys::ENTITIES).and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    let mut placements = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(scene) = entry.get(keys::SCENE) else {
            continue;
        };
        let at = |key: &str| {
            let path = [
                PathSegment::Key(keys::ENTITIES.to_string()),
                PathSegment::Index(i),
                PathSegment::Key(key.to_string()),
            ];
            text.locate(&path).map_or(0, |located| located.value.start)
        };
        let error = |key: &str, message: String| {
            let mut error = scene_error(file, DiagnosticCode::Malformed, message);
            error.diagnostic.position = Some(text.position(at(key)));
            error
        };
        let id = entry
            .get(keys::ID)
            .and_then(Value::as_str)
            .and_then(|id| id.parse::<StableId>().ok())
            .ok_or_else(|| {
                error(
                    keys::ID,
                    format!("entity {i}: an entry placing a scene needs an `id` (16 hex digits)"),
                )
            })?;
        let scene = scene.as_str().ok_or_else(|| {
            error(keys::SCENE, format!("entity {id}: `scene` must be a string (a scene file's path, relative to this file)"))
        })?;
        let overrides = overrides(text, entry, i)
            .map_err(|problem| error(keys::OVERRIDES, format!("entity {id}: {problem}")))?;
        placements.push(Placement {
            id,
            scene: scene.to_string(),
            scene_at: at(keys::SCENE),
            overrides,
        });
    }
    Ok(placements)
}

/// The `overrides` of entry `i`: path → component → patch, with the offset of each path key.
fn overrides(text: &SourceText, entry: &Value, i: usize) -> Result<Vec<Override>, OverrideError> {
    let Some(overrides) = entry.get(keys::OVERRIDES) else {
        return Ok(Vec::new());
    };
    let Some(overrides) = overrides.as_object() else {
        return Err(OverrideError::NotAnObject);
    };
    let mut all = Vec::new();
    for (path, components) in overrides {
        let Some(components) = components.as_object() else {
            return Err(OverrideError::EntityNotAnObject { path: path.clone() });
        };
        let located = text.locate(&[
            PathSegment::Key(keys::ENTITIES.to_string()),
            PathSegment::Index(i),
            PathSegment::Key(keys::OVERRIDES.to_string()),
            PathSegment::Key(path.clone()),
        ]);
        let at = located.and_then(|l| l.key).map_or(0, |key| key.start);
        all.push((path.clone(), at, components.clone()));
    }
    Ok(all)
}

/// The text with every `scene` and `overrides` member of the entries blanked out (spaces, and
/// the comma before each), so the rest loads as an ordinary scene at the same positions.
fn blank_members(text: &SourceText, count: usize) -> Vec<u8> {
    let mut bytes = text.text().as_bytes().to_vec();
    let mut found = 0;
    for i in 0.. {
        if found == count {
            break;
        }
        let entry = [
            PathSegment::Key(keys::ENTITIES.to_string()),
            PathSegment::Index(i),
        ];
        let Some(located) = text.locate(&entry) else {
            break;
        };
        if located.matched < entry.len() {
            break;
        }
        for key in [keys::SCENE, keys::OVERRIDES] {
            let mut path = entry.to_vec();
            path.push(PathSegment::Key(key.to_string()));
            let Some(member) = text.locate(&path).filter(|l| l.matched == path.len()) else {
                continue;
            };
            if key == keys::SCENE {
                found += 1;
            }
            let Some(start) = member.key.map(|key| key.start) else {
                continue;
            };
            // From the comma before the member (an entry's first key is its `id`) to its end.
            let comma = bytes[..start]
                .iter()
                .rposition(|b| *b == b',')
                .unwrap_or(start);
            for byte in &mut bytes[comma..member.value.end] {
                if *byte != b'\n' {
                    *byte = b' ';
                }
            }
        }
    }
    bytes
}

/// Loads the rest of the file, then each sub-scene into it; undoes everything on an error.
fn load_placed(
    rest: &[u8],
    text: &SourceText,
    file: Option<&Path>,
    world: &mut World,
    nesting: &mut Nesting<'_>,
    placements: Vec<Placement>,
) -> Result<LoadedScene, SceneError> {
    let mut loaded =
        crate::scene::load::load_scene_flat(rest, file, world, nesting.library, nesting.options)?;
    for placement in &placements {
        let placed = place(&mut loaded, placement, (text, file), world, nesting)
            .and_then(|()| check_derived_ids(&loaded, placement, (text, file), world, nesting));
        if let Err(error) = placed {
            for entity in &loaded.entities {
                let _ = world.despawn(*entity);
            }
            return Err(error);
        }
    }
    Ok(loaded)
}

/// With [`IdConflict::Error`]: no ID a placement's entities were given is already in the world
/// on another entity (the file's own IDs were checked by the load).
fn check_derived_ids(
    loaded: &LoadedScene,
    placement: &Placement,
    (text, file): (&SourceText, Option<&Path>),
    world: &World,
    nesting: &Nesting<'_>,
) -> Result<(), SceneError> {
    if nesting.options.on_id_conflict != IdConflict::Error {
        return Ok(());
    }
    let mut query = world.query::<(Entity, &StableId)>();
    let taken = query
        .iter()
        .find(|(entity, id)| loaded.entity(**id).is_some_and(|ours| ours != *entity));
    let Some((_, id)) = taken else {
        return Ok(());
    };
    let message = format!(
        "entity {}: sub-scene `{}` gives entity {id}, which is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs",
        placement.id, placement.scene
    );
    let mut error = scene_error(file, DiagnosticCode::DuplicateKey, message);
    error.diagnostic.position = Some(text.position(placement.scene_at));
    error.entity = Some(*id);
    Err(error)
}

/// Loads one placement's sub-scene into `world`, re-identified, parented and overridden, and
/// adds its entities to `loaded`.
fn place(
    loaded: &mut LoadedScene,
    placement: &Placement,
    (text, file): (&SourceText, Option<&Path>),
    world: &mut World,
    nesting: &mut Nesting<'_>,
) -> Result<(), SceneError> {
    let located = |code: DiagnosticCode, message: String, at: usize| {
        let mut error = scene_error(file, code, message);
        error.diagnostic.position = Some(text.position(at));
        error.entity = Some(placement.id);
        error
    };
    let Some(placing) = loaded.entity(placement.id) else {
        return Err(located(
            DiagnosticCode::Malformed,
            format!("entity {}: the placing entry was left out", placement.id),
            placement.scene_at,
        ));
    };
    let base = file.and_then(Path::parent).unwrap_or_else(|| Path::new(""));
    let path = base.join(&placement.scene);
    let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    if let Some(start) = nesting.stack.iter().position(|seen| *seen == canonical) {
        let mut names: Vec<String> = nesting.stack[start..]
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        names.push(canonical.display().to_string());
        let message = format!(
            "entity {}: scene cycle: {}",
            placement.id,
            names.join(" → ")
        );
        return Err(located(
            DiagnosticCode::InheritanceCycle,
            message,
            placement.scene_at,
        ));
    }
    let bytes =
        read_limited(&path, nesting.options.limits.max_scene_bytes).map_err(|diagnostic| {
            let message = format!(
                "entity {}: sub-scene `{}` cannot be read: {}",
                placement.id, placement.scene, diagnostic.message
            );
            located(DiagnosticCode::Io, message, placement.scene_at)
        })?;
    nesting.stack.push(canonical);
    let sub = load_sub_scene(&bytes, &path, world, nesting);
    nesting.stack.pop();
    let sub = sub?;
    adopt(loaded, sub, placement, placing, world);
    for (path, at, components) in &placement.overrides {
        override_entity(loaded, placement, path, components, world, nesting.library).map_err(
            |problem| {
                let message = format!("entity {}: {problem}", placement.id);
                located(problem.code(), message, *at)
            },
        )?;
    }
    Ok(())
}

/// A sub-scene loaded into `world` under fresh IDs (its own are kept in its report's `by_id`).
fn load_sub_scene(
    bytes: &[u8],
    path: &Path,
    world: &mut World,
    nesting: &mut Nesting<'_>,
) -> Result<LoadedScene, SceneError> {
    let mut options = nesting.options.clone();
    options.on_id_conflict = IdConflict::Remap;
    let mut inner = Nesting {
        library: nesting.library,
        options: &options,
        stack: std::mem::take(&mut nesting.stack),
    };
    let result = match crate::scene::load::load_scene_flat(
        bytes,
        Some(path),
        world,
        inner.library,
        inner.options,
    ) {
        // Refused: it may place scenes itself (loaded with the stack, to see cycles).
        Err(error) => {
            load_with_sub_scenes(bytes, Some(path), world, &mut inner).unwrap_or(Err(error))
        }
        loaded => loaded,
    };
    nesting.stack = inner.stack;
    result
}

/// Gives the sub-scene's entities their derived IDs, parents its roots to the placing entity and
/// lists them in `loaded`.
fn adopt(
    loaded: &mut LoadedScene,
    sub: LoadedScene,
    placement: &Placement,
    placing: Entity,
    world: &mut World,
) {
    let mut roots = Vec::new();
    for (own, entity) in sub.by_id.iter() {
        let id = derive_id(placement.id, *own);
        if let Ok(mut stable) = world.get::<&mut StableId>(*entity) {
            *stable = id;
        }
        loaded.by_id.insert(id, *entity);
    }
    for entity in &sub.entities {
        if world.get::<&Parent>(*entity).is_err() {
            roots.push(*entity);
        }
    }
    for root in &roots {
        let _ = world.insert_one(*root, Parent(EntityRef(placing)));
    }
    if !roots.is_empty() {
        let mut children = world
            .get::<&Children>(placing)
            .map(|children| children.0.clone())
            .unwrap_or_default();
        children.extend(roots.iter().map(|root| EntityRef(*root)));
        let _ = world.insert_one(placing, Children(children));
    }
    loaded.entities.extend(sub.entities);
    loaded.warnings.extend(sub.warnings);
}

/// Applies one override (`path` → components) to the sub-scene entity at `path`.
fn override_entity(
    loaded: &LoadedScene,
    placement: &Placement,
    path: &str,
    components: &Map<String, Value>,
    world: &mut World,
    library: &ArchetypeLibrary,
) -> Result<(), OverrideError> {
    let mut local: Option<StableId> = None;
    for segment in path.split('/') {
        let own = segment
            .parse::<StableId>()
            .map_err(|_| OverrideError::BadSegment {
                path: path.to_string(),
                segment: segment.to_string(),
            })?;
        local = Some(local.map_or(own, |outer| derive_id(outer, own)));
    }
    let id = local.map(|local| derive_id(placement.id, local));
    let entity = id
        .and_then(|id| loaded.entity(id))
        .ok_or_else(|| OverrideError::NoEntity {
            path: path.to_string(),
            scene: placement.scene.clone(),
        })?;
    let registry = library.registry();
    for (name, patch) in components {
        let component = registry
            .id(name)
            .ok_or_else(|| OverrideError::UnknownComponent {
                path: path.to_string(),
                name: name.clone(),
            })?;
        let (patched, failures) =
            registry
                .ops(component)
                .patch_entities(world, &[entity], patch, None);
        if let Some((_, failure)) = failures.first() {
            return Err(OverrideError::Invalid {
                path: path.to_string(),
                name: name.clone(),
                why: failure.message.clone(),
            });
        }
        if !patched.first().copied().unwrap_or(false) {
            return Err(OverrideError::NoComponent {
                path: path.to_string(),
                name: name.clone(),
            });
        }
    }
    Ok(())
}

/// Why an entry's `overrides` cannot be applied; the message follows `entity <id>: `.
#[derive(Debug)]
enum OverrideError {
    /// `overrides` is not an object.
    NotAnObject,
    /// The components of an override path are not an object.
    EntityNotAnObject { path: String },
    /// A path segment that is no stable ID.
    BadSegment { path: String, segment: String },
    /// The path names no entity of the sub-scene (the sub-scene's file).
    NoEntity { path: String, scene: String },
    /// A component name the registry does not know.
    UnknownComponent { path: String, name: String },
    /// A component whose patch does not apply, and why.
    Invalid {
        path: String,
        name: String,
        why: String,
    },
    /// A component the entity does not have.
    NoComponent { path: String, name: String },
}

impl OverrideError {
    /// The diagnostic code the problem is reported under.
    fn code(&self) -> DiagnosticCode {
        match self {
            OverrideError::NotAnObject | OverrideError::EntityNotAnObject { .. } => {
                DiagnosticCode::Malformed
            }
            OverrideError::BadSegment { .. }
            | OverrideError::NoEntity { .. }
            | OverrideError::NoComponent { .. } => DiagnosticCode::UnknownChild,
            OverrideError::UnknownComponent { .. } => DiagnosticCode::UnknownComponent,
            OverrideError::Invalid { .. } => DiagnosticCode::InvalidComponent,
        }
    }
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverrideError::NotAnObject => {
                f.write_str("`overrides` must be an object: entity path → components")
            }
            OverrideError::EntityNotAnObject { path } => {
                write!(f, "override `{path}` must be an object: component → value")
            }
            OverrideError::BadSegment { path, segment } => write!(
                f,
                "override `{path}`: `{segment}` is not a stable ID (16 hex digits)"
            ),
            OverrideError::NoEntity { path, scene } => {
                write!(
                    f,
                    "override `{path}` names no entity of sub-scene `{scene}`"
                )
            }
            OverrideError::UnknownComponent { path, name } => {
                write!(f, "override `{path}`: unknown component `{name}`")
            }
            OverrideError::Invalid { path, name, why } => {
                write!(f, "override `{path}`: component `{name}`: {why}")
            }
            OverrideError::NoComponent { path, name } => {
                write!(f, "override `{path}`: the entity has no component `{name}`")
            }
        }
    }
}

/// An error of `file` (no position yet).
fn scene_error(file: Option<&Path>, code: DiagnosticCode, message: String) -> SceneError {
    let mut diagnostic = Diagnostic::error(code, message);
    diagnostic.file = file.map(Path::to_path_buf);
    SceneError {
        diagnostic: Box::new(diagnostic),
        entity: None,
        offset: None,
        others: Vec::new(),
    }
}
