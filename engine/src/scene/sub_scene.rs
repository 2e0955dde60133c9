//! Scenes placed inside scenes: an entry with a `scene` key places another scene file, whose
//! entities are loaded with stable IDs derived from the placing entry's.
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
//! Every placed file is read before anything is spawned ([`Plan`](super::sub_scene_plan)): by
//! the file rule, once per load, with the nesting depth and the flattened scene's size
//! bounded. A placing file's `scene` and `overrides` members are blanked out (replaced by
//! spaces) before the rest is loaded, so every other error keeps its line and column.

use std::fmt;
use std::path::Path;

use hecs::{Entity, World};
use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

use crate::archetype::ArchetypeLibrary;
use crate::component::Parent;
use crate::component::StableId;
use crate::diagnostic::DiagnosticCode;
use crate::json::SourceText;
use crate::scene::commit;
use crate::scene::load::{load_scene_flat, IdConflict, LoadedScene, SceneError, SceneLoadOptions};
use crate::scene::sub_scene_plan::{scene_error, Placement, Plan};

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

/// Loads `bytes` with the scenes it places, if it places any (`None`: it places none, or it
/// is not JSON a sub-scene can be found in: the loader's own error stands). Called once the
/// loader refused the file (it knows no `scene` key), so ordinary loads pay nothing.
///
/// Every placed file is read first ([`Plan`]: the file rule, once per file, the depth and the
/// flattened size limits), then the entities are built, placement by placement.
pub(super) fn load_with_sub_scenes(
    bytes: &[u8],
    file: Option<&Path>,
    world: &mut World,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Option<Result<LoadedScene, SceneError>> {
    let plan = match Plan::read(bytes, file, library, options) {
        Ok(Some(plan)) => plan,
        Ok(None) => return None,
        Err(error) => return Some(Err(error)),
    };
    let mut load = Placing {
        plan: &plan,
        library,
        options,
        taken: taken_ids(world, options),
        inner: SceneLoadOptions {
            on_id_conflict: IdConflict::Remap,
            ..options.clone()
        },
    };
    let loaded = load.file(0, bytes, world).map(|mut loaded| {
        let placed = plan.files.iter().skip(1);
        loaded.sub_scenes = placed.filter_map(|file| file.path.clone()).collect();
        loaded
    });
    Some(loaded)
}

/// The stable IDs in the world before the load, when a placement's may not be among them
/// ([`IdConflict::Error`]); gathered once for the whole load.
fn taken_ids(world: &World, options: &SceneLoadOptions) -> Option<FxHashSet<StableId>> {
    match options.on_id_conflict {
        IdConflict::Error => Some(world.query::<&StableId>().iter().copied().collect()),
        IdConflict::Remap => None,
    }
}

/// One load placing the files of a plan.
struct Placing<'p> {
    plan: &'p Plan,
    library: &'p ArchetypeLibrary,
    options: &'p SceneLoadOptions,
    /// See [`taken_ids`].
    taken: Option<FxHashSet<StableId>>,
    /// What a placed file is loaded with: fresh IDs (each entity gets its derived one after).
    inner: SceneLoadOptions,
}

impl Placing<'_> {
    /// Loads file `f` of the plan (its `bytes`) with the scenes it places; undoes everything
    /// on an error. The recursion follows the nesting, which the plan bounded.
    fn file(
        &mut self,
        f: usize,
        bytes: &[u8],
        world: &mut World,
    ) -> Result<LoadedScene, SceneError> {
        let planned = &self.plan.files[f];
        let options = if f == 0 { self.options } else { &self.inner };
        let path = planned.path.as_deref();
        let Some((text, rest)) = &planned.placing else {
            return load_scene_flat(bytes, path, world, self.library, options);
        };
        let mut loaded = load_scene_flat(rest, path, world, self.library, options)?;
        for placement in &planned.placements {
            if let Err(error) = self.place(&mut loaded, placement, (text, path), world) {
                commit::roll_back(world, loaded.entities.iter().copied());
                return Err(error);
            }
        }
        Ok(loaded)
    }

    /// Loads one placement's sub-scene into `world`, re-identified, parented and overridden,
    /// and adds its entities to `loaded`.
    fn place(
        &mut self,
        loaded: &mut LoadedScene,
        placement: &Placement,
        (text, file): (&SourceText, Option<&Path>),
        world: &mut World,
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
        let placed = &self.plan.files[placement.file];
        let bytes = placed.bytes.as_deref().unwrap_or_default();
        let sub = self.file(placement.file, bytes, world)?;
        let adopted = adopt(loaded, sub, placement, placing, world, self.taken.as_ref());
        if let Err(id) = adopted {
            let message = format!(
                "entity {}: sub-scene `{}` gives entity {id}, which is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs",
                placement.id, placement.scene
            );
            let mut error = located(DiagnosticCode::DuplicateKey, message, placement.scene_at);
            error.entity = Some(id);
            return Err(error);
        }
        for (path, at, components) in &placement.overrides {
            override_entity(loaded, placement, path, components, world, self.library).map_err(
                |problem| {
                    let message = format!("entity {}: {problem}", placement.id);
                    located(problem.code(), message, *at)
                },
            )?;
        }
        Ok(())
    }
}

/// Gives the sub-scene's entities their derived IDs, parents its roots to the placing entity and
/// lists them in `loaded`. Each entity's ID in the world is derived from the placing entity's
/// ID in the world (its fresh one with [`IdConflict::Remap`], so placing a level twice gives
/// two sets of IDs); `loaded` finds it by the ID derived from the placing entry's as written.
///
/// With `taken` (the world's IDs before an [`IdConflict::Error`] load), a derived ID already
/// given, before the load or by it, is refused: the entities are in `loaded` (to be undone)
/// and the first such ID is the error.
fn adopt(
    loaded: &mut LoadedScene,
    sub: LoadedScene,
    placement: &Placement,
    placing: Entity,
    world: &mut World,
    taken: Option<&FxHashSet<StableId>>,
) -> Result<(), StableId> {
    let base = loaded.new_id(placement.id).unwrap_or(placement.id);
    let mut clash = None;
    for (own, entity) in sub.by_id.iter() {
        let key = derive_id(placement.id, *own);
        let id = derive_id(base, *own);
        commit::reidentify(world, *entity, id);
        let given = loaded.by_id.insert(key, *entity);
        let refused = taken.is_some_and(|taken| given.is_some() || taken.contains(&id));
        if refused && clash.is_none() {
            clash = Some(id);
        }
        if id != key {
            loaded.remapped.insert(key, id);
        }
    }
    let roots: Vec<Entity> = (sub.entities.iter())
        .filter(|entity| world.get::<&Parent>(**entity).is_err())
        .copied()
        .collect();
    commit::place_under(world, placing, &roots);
    loaded.entities.extend(sub.entities);
    loaded.warnings.extend(sub.warnings);
    clash.map_or(Ok(()), Err)
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
        let patched = commit::patch_component(world, registry, component, entity, patch).map_err(
            |failure| OverrideError::Invalid {
                path: path.to_string(),
                name: name.clone(),
                why: failure.message,
            },
        )?;
        if !patched {
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
