//! [`LiveScene`]: a scene file kept in step with the world it was loaded into. A save of the
//! file (or of any sub-scene it places) changes the live entities the way a save of an
//! archetype file changes its instances.
//!
//! An edit is read by the loader itself (every check, message and limit a load has, sub-scenes
//! flattened) into a private world, the scene's *baseline*, and compared with the previous
//! baseline by stable ID: entities the file added enter the game's world through the commit,
//! those it removed leave it, and of the others only the component fields whose values the
//! file changed are written (a merge patch of the difference), so every field the file did not
//! change keeps its runtime value. A broken edit changes nothing and is reported, placed. The
//! game's own entities (those without one of the scene's stable IDs) are never touched.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hecs::{Entity, EntityBuilder, World};
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::archetype::{ArchetypeInstance, ArchetypeLibrary};
use crate::component::{with_installed_mapper, with_mapper, ComponentId, ComponentRegistry};
use crate::component::{EntityMapper, MapError, ReadOnly, RefIn, RefOut, RefWire, StableId};
use crate::json::merge_patch;
use crate::scene::commit::{self, Identity};
use crate::scene::load::{
    load_scene_from_path, IdConflict, LoadedScene, SceneChange, SceneError, SceneLoadOptions,
};

/// A scene loaded from a file and kept in step with it: [`reload`](Self::reload) (or, watching,
/// [`apply`](Self::apply) once per frame) carries each edit of the file, and of every
/// sub-scene it places, into the world.
///
/// What an edit changes:
/// - an entity added to the file is spawned, one removed is despawned;
/// - a component field whose value the file changed is written into the live entity; every
///   other field keeps its runtime value (a wounded goblin stays wounded when the designer
///   moves it). A component the file added or removed is added or removed; an instance whose
///   archetype or overrides changed gets its new marker.
/// - references between the scene's entities stay valid (they are written by stable ID);
/// - an entity the game despawned is not brought back by an edit of its fields, and the
///   game's own entities are never touched.
///
/// An edit that does not load (a syntax error, an unknown component, a reference to an entity
/// the scene does not hold, a limit) changes nothing: the report holds the error, placed, and
/// the scene stays at its last good version.
///
/// # Example
/// ```
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LiveScene, LoadOptions, Name,
///     SceneLoadOptions};
/// # let dir = tempfile::tempdir()?;
/// let level = dir.path().join("level.scene.json");
/// std::fs::write(&level, r#"{ "format": 2, "entities": [
///     { "id": "00000000000000a1", "components": { "Name": "door" } } ] }"#)?;
/// let library = ArchetypeLibrary::empty(dir.path(), ComponentRegistry::new(), LoadOptions::default());
/// let mut world = hecs::World::new();
/// let (mut live, loaded) = LiveScene::load(&level, &mut world, &library, &SceneLoadOptions::default())?;
/// assert_eq!(loaded.len(), 1);
///
/// // The designer renames the door and adds a key.
/// std::fs::write(&level, r#"{ "format": 2, "entities": [
///     { "id": "00000000000000a1", "components": { "Name": "red door" } },
///     { "id": "00000000000000a2", "components": { "Name": "red key" } } ] }"#)?;
/// let report = live.reload(&mut world, &library);
/// assert_eq!((report.spawned(), report.updated()), (1, 1));
/// let door = live.entity(archetype_engine::StableId(0xa1)).unwrap();
/// assert_eq!(world.get::<&Name>(door)?.as_str(), "red door");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LiveScene {
    file: PathBuf,
    options: SceneLoadOptions,
    /// The scene as its files last gave it, loaded on its own (stable IDs as the files give
    /// them): what the next edit is compared with.
    baseline: Baseline,
    /// Each entity of the scene in the game's world, by its stable ID as the files give it.
    live: FxHashMap<StableId, Entity>,
    #[cfg(feature = "hot-reload")]
    watch: Option<(crate::reload::FileWatch, crate::reload::HotReloadOptions)>,
}

impl std::fmt::Debug for LiveScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveScene")
            .field("file", &self.file)
            .field("entities", &self.live.len())
            .field("files", &self.baseline.files)
            .finish_non_exhaustive()
    }
}

/// What one update of a [`LiveScene`] did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct LiveSceneReport {
    spawned: usize,
    despawned: usize,
    updated: usize,
    error: Option<SceneError>,
    failures: Vec<LiveSceneFailure>,
    elapsed: Duration,
}

/// A change of an edit that could not be written into a live entity; the rest of the edit
/// was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LiveSceneFailure {
    /// The entity, by its stable ID as the scene's files give it.
    pub id: StableId,
    /// The component whose change did not take (`None`: the entity could not be spawned).
    pub component: Option<String>,
    /// Why.
    pub message: String,
}

impl LiveSceneFailure {
    fn new(id: StableId, component: Option<&str>, message: impl Into<String>) -> Self {
        LiveSceneFailure {
            id,
            component: component.map(str::to_string),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for LiveSceneFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.component {
            Some(component) => write!(
                f,
                "entity {}: component `{component}`: {}",
                self.id, self.message
            ),
            None => write!(f, "entity {}: {}", self.id, self.message),
        }
    }
}

impl LiveSceneReport {
    /// Entities the edit added, spawned.
    pub fn spawned(&self) -> usize {
        self.spawned
    }

    /// Entities the edit removed, despawned.
    pub fn despawned(&self) -> usize {
        self.despawned
    }

    /// Live entities with a component or marker the edit changed.
    pub fn updated(&self) -> usize {
        self.updated
    }

    /// Why the edit was not applied (it does not load): the scene stays at its last good
    /// version.
    pub fn error(&self) -> Option<&SceneError> {
        self.error.as_ref()
    }

    /// Changes that could not be written into a live entity (its runtime value does not take
    /// the patch), one message each; the rest of the edit was applied.
    pub fn failures(&self) -> &[LiveSceneFailure] {
        &self.failures
    }

    /// How long the update took on the calling thread.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Whether nothing was seen to apply.
    pub fn is_empty(&self) -> bool {
        self.spawned == 0
            && self.despawned == 0
            && self.updated == 0
            && self.error.is_none()
            && self.failures.is_empty()
    }
}

impl std::fmt::Display for LiveSceneReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(error) = &self.error {
            return write!(f, "scene edit not applied: {error}");
        }
        write!(
            f,
            "scene edit applied: {} spawned, {} despawned, {} updated",
            self.spawned, self.despawned, self.updated
        )?;
        for failure in &self.failures {
            write!(f, "\n  {failure}")?;
        }
        Ok(())
    }
}

impl LiveScene {
    /// Loads the scene file at `path` into `world`, as [`load_scene_from_path`] does, and keeps
    /// what it needs to carry the file's later edits into the world.
    ///
    /// # Errors
    /// As [`load_scene_from_path`].
    pub fn load(
        path: impl AsRef<Path>,
        world: &mut World,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Result<(LiveScene, LoadedScene), SceneError> {
        let loaded = load_scene_from_path(path.as_ref(), world, library, options)?;
        let scene = LiveScene::follow(path, &loaded, library, options)?;
        Ok((scene, loaded))
    }

    /// Follows the scene file at `path`, already in the world as `loaded` (by
    /// [`load_scene_from_path`], or a [`PreparedScene`](crate::PreparedScene)'s commit), with
    /// the options it was loaded with: its later edits are carried into the world.
    ///
    /// # Errors
    /// If the file no longer loads as it did (it is read again, on its own, as the version the
    /// next edit is compared with).
    pub fn follow(
        path: impl AsRef<Path>,
        loaded: &LoadedScene,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Result<LiveScene, SceneError> {
        let file = path.as_ref().to_path_buf();
        let options = SceneLoadOptions {
            all_errors: false,
            ..options.clone()
        };
        let baseline = read_baseline(&file, library, &options)?;
        let gained = gained_children(loaded);
        let live = (loaded.by_id.iter())
            .filter(|(id, _)| !gained.contains(id))
            .map(|(id, entity)| (*id, *entity))
            .collect();
        Ok(LiveScene {
            file,
            options,
            baseline,
            live,
            #[cfg(feature = "hot-reload")]
            watch: None,
        })
    }

    /// The scene's top file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The files the scene reads: its top file, then every sub-scene file it places (at any
    /// depth), as of its last good version.
    pub fn files(&self) -> &[PathBuf] {
        &self.baseline.files
    }

    /// The live entity with stable ID `id` as the scene's files give it (a sub-scene's entity
    /// by its derived ID; see [`sub_scene_id`](crate::sub_scene_id)).
    pub fn entity(&self, id: StableId) -> Option<Entity> {
        self.live.get(&id).copied()
    }

    /// Reads the scene's files again now and carries what changed into `world`.
    pub fn reload(&mut self, world: &mut World, library: &ArchetypeLibrary) -> LiveSceneReport {
        let started = Instant::now();
        let span = tracing::info_span!("live_scene", file = %self.file.display());
        let _entered = span.enter();
        let mut report = match read_baseline(&self.file, library, &self.options) {
            Ok(next) => {
                let report = self.update(world, library, &next);
                self.baseline = next;
                report
            }
            Err(error) => LiveSceneReport {
                error: Some(error),
                ..LiveSceneReport::default()
            },
        };
        report.elapsed = started.elapsed();
        log_report(&report);
        report
    }

    /// Compares the baseline with `next` (the files' new version) and writes the difference
    /// into `world`.
    fn update(
        &mut self,
        world: &mut World,
        library: &ArchetypeLibrary,
        next: &Baseline,
    ) -> LiveSceneReport {
        let next_ids = &next.ids;
        let mut report = LiveSceneReport::default();
        // Removed: out of the world (unless the game despawned it already).
        let mut gone = Vec::new();
        for id in self.baseline.ids.keys() {
            if !next_ids.contains_key(id) {
                if let Some(entity) = self.live.remove(id) {
                    gone.push(entity);
                }
            }
        }
        gone.retain(|entity| world.contains(*entity));
        gone.sort_unstable_by_key(|entity| entity.to_bits());
        report.despawned = gone.len();
        commit::roll_back(world, gone);
        // Added: a handle each first, so references among them (and to them) resolve.
        let mut added: Vec<(StableId, Entity, Entity)> = next_ids
            .iter()
            .filter(|(id, _)| !self.baseline.ids.contains_key(id))
            .map(|(id, at)| (*id, *at, world.reserve_entity()))
            .collect();
        added.sort_unstable_by_key(|(id, ..)| *id);
        for (id, _, handle) in &added {
            self.live.insert(*id, *handle);
        }
        let mapper = EditMapper {
            side: Side::Old,
            wire: RefWire::Text,
            tables: EditRefs::new(&self.live, &self.baseline.world, &next.world),
        };
        let write = || self.write_edit(world, library, next, added, &mut report);
        let ((), _) = with_mapper(mapper, write);
        report
    }

    /// Writes the edit into `world` (the edit's references installed): the fields changed,
    /// then the entities `added`.
    fn write_edit(
        &mut self,
        world: &mut World,
        library: &ArchetypeLibrary,
        next: &Baseline,
        added: Vec<(StableId, Entity, Entity)>,
        report: &mut LiveSceneReport,
    ) {
        let registry = library.registry();
        let old = &self.baseline.world;
        // Changed: the fields the file changed, into the live entities still there.
        let mut compared = Compared::default();
        // In the new version's storage order: both versions are stored as their files list
        // their entities, so each side is read in order, not all over memory.
        let mut in_order = next.world.query::<(Entity, &StableId)>();
        for (at_next, id) in in_order.iter() {
            let (Some(at_old), Some(&live)) = (self.baseline.ids.get(id), self.live.get(id)) else {
                continue;
            };
            if next.ids.get(id) != Some(&at_next) {
                // A child an archetype gained since the file was written: the world's.
                continue;
            }
            if !world.contains(live) {
                continue;
            }
            let edit = Edit {
                id: *id,
                old: *at_old,
                new: at_next,
                live,
            };
            match edit.apply(world, registry, (old, &next.world), &mut compared) {
                Ok(true) => report.updated += 1,
                Ok(false) => {}
                Err(failures) => {
                    report.updated += 1;
                    report.failures.extend(failures);
                }
            }
        }
        // Added: built from the new version, into the world through the commit.
        let taken = taken_ids(world, &added);
        for (id, at_next, handle) in added {
            match self.spawn(world, library, &next.world, (id, at_next, handle), &taken) {
                Ok(()) => report.spawned += 1,
                Err(failure) => {
                    self.live.remove(&id);
                    commit::roll_back(world, [handle]);
                    report.failures.push(failure);
                }
            }
        }
    }

    /// Spawns the entity `id` the edit added (at `at_next` in the new version) on `handle`.
    fn spawn(
        &self,
        world: &mut World,
        library: &ArchetypeLibrary,
        next: &World,
        (id, at_next, handle): (StableId, Entity, Entity),
        taken: &rustc_hash::FxHashSet<StableId>,
    ) -> Result<(), LiveSceneFailure> {
        let registry = library.registry();
        let mut builder = EntityBuilder::new();
        for component in registry.ids() {
            let Some(value) = json(registry, component, next, at_next, Side::New) else {
                continue;
            };
            let name = Some(registry.name(component));
            let value = value.map_err(|e| LiveSceneFailure::new(id, name, e.to_string()))?;
            let typed = decode(registry, component, &value)
                .map_err(|e| LiveSceneFailure::new(id, name, e))?;
            registry.ops(component).add_owned(typed, &mut builder);
        }
        let own = match (taken.contains(&id), self.options.on_id_conflict) {
            (false, _) => id,
            (true, IdConflict::Remap) => library.spawn_rng().next_id(),
            (true, _) => {
                return Err(LiveSceneFailure::new(
                    id,
                    None,
                    "the world has an entity with this stable ID already; load with IdConflict::Remap to give new entities fresh IDs",
                ))
            }
        };
        let marker = next.get::<&ArchetypeInstance>(at_next).ok().map(|m| *m);
        let identity = Identity { id: own, marker };
        commit::entity(world, Some(handle), identity, &mut builder)
            .map(|_| ())
            .map_err(|_| LiveSceneFailure::new(id, None, "its reserved handle was taken"))
    }

    /// Watches the scene's files (the directories they are in), so that [`apply`](Self::apply)
    /// carries each saved edit into the world: native file events, or polling where they are
    /// unavailable, as [`HotReloader`](crate::HotReloader) watches archetype files. Editors'
    /// ways of saving (writing in place, renaming a new file over the old one, deleting and
    /// creating it) are all seen.
    ///
    /// # Errors
    /// If neither native file events nor polling can watch a directory of the scene's files.
    #[cfg(feature = "hot-reload")]
    pub fn watch(
        &mut self,
        options: crate::reload::HotReloadOptions,
    ) -> Result<(), crate::reload::WatchError> {
        let (dirs, classify) = watched(&self.baseline.files);
        let watch = crate::reload::FileWatch::new(
            &dirs,
            notify::RecursiveMode::NonRecursive,
            &options,
            classify,
        )?;
        self.watch = Some((watch, options));
        Ok(())
    }

    /// Carries the edits saved since the last call into `world`, once they settled (the files
    /// quiet for the debounce). Call it once per frame; it returns at once, with an empty
    /// report, when nothing settled (or the scene is not watched: see [`watch`](Self::watch)).
    #[cfg(feature = "hot-reload")]
    pub fn apply(&mut self, world: &mut World, library: &ArchetypeLibrary) -> LiveSceneReport {
        let Some((watch, options)) = &self.watch else {
            return LiveSceneReport::default();
        };
        if watch.take_settled(options).is_none() {
            return LiveSceneReport::default();
        }
        let before = self.baseline.files.clone();
        let report = self.reload(world, library);
        if self.baseline.files != before {
            // Sub-scenes placed or no longer placed: watch the files the scene reads now.
            if let Some((_, options)) = self.watch.take() {
                if let Err(error) = self.watch(options) {
                    tracing::warn!("{error}");
                }
            }
        }
        report
    }
}

/// The directories of `files`, and a test of whether a changed path is one of the files (by
/// its real path: a file saved by renaming another over it is the same file).
#[cfg(feature = "hot-reload")]
fn watched(files: &[PathBuf]) -> (Vec<PathBuf>, crate::reload::Classify) {
    let real: rustc_hash::FxHashSet<PathBuf> =
        (files.iter()).filter_map(|file| real_path(file)).collect();
    let mut dirs: Vec<PathBuf> = (real.iter())
        .filter_map(|file| file.parent().map(Path::to_path_buf))
        .collect();
    dirs.sort();
    dirs.dedup();
    let classify = move |path: &Path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if crate::reload::is_editor_scratch(name) {
            return crate::reload::Relevance::Ignore;
        }
        match real.contains(path) || real_path(path).is_some_and(|p| real.contains(&p)) {
            true => crate::reload::Relevance::File,
            false => crate::reload::Relevance::Ignore,
        }
    };
    (dirs, std::sync::Arc::new(classify))
}

/// `file` with its directory's real path (the file itself may be gone for a moment).
#[cfg(feature = "hot-reload")]
fn real_path(file: &Path) -> Option<PathBuf> {
    let dir = match file.parent() {
        // A bare file name is in the current directory.
        Some(dir) if dir.as_os_str().is_empty() => Path::new("."),
        Some(dir) => dir,
        None => return None,
    };
    Some(std::fs::canonicalize(dir).ok()?.join(file.file_name()?))
}

/// Loads the scene's files on their own: the baseline an edit is compared with, its entities
/// by stable ID (without the children the archetypes gained since the files were written,
/// which get fresh IDs at every load: they are the world's, not the file's), and the files it
/// read.
fn read_baseline(
    file: &Path,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Result<Baseline, SceneError> {
    let mut baseline = World::new();
    let own = SceneLoadOptions {
        on_id_conflict: IdConflict::Error,
        ..options.clone()
    };
    let loaded = load_scene_from_path(file, &mut baseline, library, &own)?;
    let gained = gained_children(&loaded);
    let ids = (loaded.by_id.iter())
        .filter(|(id, _)| !gained.contains(id))
        .map(|(id, entity)| (*id, *entity))
        .collect();
    let files = std::iter::once(file.to_path_buf()).chain(loaded.sub_scenes);
    Ok(Baseline {
        world: baseline,
        ids,
        files: files.collect(),
    })
}

/// A scene's files loaded on their own ([`read_baseline`]).
struct Baseline {
    world: World,
    /// Its entities by stable ID.
    ids: FxHashMap<StableId, Entity>,
    /// The files it read: the top file, then every sub-scene it places.
    files: Vec<PathBuf>,
}

/// The stable IDs of the children a load spawned because their archetypes gained them.
fn gained_children(loaded: &LoadedScene) -> rustc_hash::FxHashSet<StableId> {
    (loaded.changes.iter())
        .filter_map(|change| match change {
            SceneChange::ChildSpawned { id, .. } => Some(*id),
            _ => None,
        })
        .collect()
}

/// The stable IDs in `world` besides the scene's entities being added (`added`): those an
/// added entity's ID may not take.
fn taken_ids(
    world: &World,
    added: &[(StableId, Entity, Entity)],
) -> rustc_hash::FxHashSet<StableId> {
    if added.is_empty() {
        return rustc_hash::FxHashSet::default();
    }
    world.query::<&StableId>().iter().copied().collect()
}

fn log_report(report: &LiveSceneReport) {
    match &report.error {
        Some(error) => tracing::error!("{error}"),
        None if !report.is_empty() => tracing::info!(
            spawned = report.spawned,
            despawned = report.despawned,
            updated = report.updated,
            ms = crate::logging::ms(report.elapsed),
            "reloaded scene"
        ),
        None => {}
    }
    for failure in &report.failures {
        tracing::error!("{failure}");
    }
}

/// One entity of both versions: its stable ID, where it is in the old and new baseline, and
/// its live entity.
struct Edit {
    id: StableId,
    old: Entity,
    new: Entity,
    live: Entity,
}

/// Buffers reused from component to component.
#[derive(Default)]
struct Compared {
    old: Vec<u8>,
    new: Vec<u8>,
    /// The registered components either version of the entity has.
    components: Vec<ComponentId>,
}

impl Compared {
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
}

impl Edit {
    /// Writes what changed of this entity between the versions into its live entity:
    /// `Ok(true)` if something did, the failures if something did not take.
    fn apply(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        (old, new): (&World, &World),
        compared: &mut Compared,
    ) -> Result<bool, Vec<LiveSceneFailure>> {
        let mut changed = false;
        let mut failures = Vec::new();
        compared.components_of(registry, (old, self.old), (new, self.new));
        let components = std::mem::take(&mut compared.components);
        for &component in &components {
            if same(
                registry,
                component,
                (old, self.old),
                (new, self.new),
                compared,
            ) {
                continue;
            }
            changed = true;
            let name = registry.name(component);
            if let Err(why) = self.apply_component(world, registry, component, (old, new)) {
                failures.push(LiveSceneFailure::new(self.id, Some(name), why));
            }
        }
        compared.components = components;
        let (before, after) = (marker(old, self.old), marker(new, self.new));
        if before != after {
            changed = true;
            if let Some(after) = after {
                commit::set_marker(world, self.live, after);
            }
        }
        match failures.is_empty() {
            true => Ok(changed),
            false => Err(failures),
        }
    }

    /// One component the versions give differently: added, removed, or patched with the
    /// difference of its values (the fields the file changed, nothing else).
    fn apply_component(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        component: ComponentId,
        (old, new): (&World, &World),
    ) -> Result<(), String> {
        let before = json(registry, component, old, self.old, Side::Old);
        let after = json(registry, component, new, self.new, Side::New);
        match (before, after) {
            (_, None) => {
                commit::remove_component(world, registry, component, self.live);
                Ok(())
            }
            (None, Some(after)) => {
                let after = after.map_err(|e| e.to_string())?;
                let typed = decode(registry, component, &after)?;
                if !commit::insert_component(world, registry, component, self.live, &typed) {
                    return Err("the entity is gone".to_string());
                }
                Ok(())
            }
            (Some(before), Some(after)) => {
                let before = before.map_err(|e| e.to_string())?;
                let after = after.map_err(|e| e.to_string())?;
                let Some(difference) = merge_patch::diff(&before, &after) else {
                    return Ok(());
                };
                patch(world, registry, component, self.live, &difference)
            }
        }
    }
}

/// An instance entity's marker.
fn marker(world: &World, entity: Entity) -> Option<ArchetypeInstance> {
    world.get::<&ArchetypeInstance>(entity).ok().map(|m| *m)
}

/// Which world's references an [`EditRefs`] writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
    Live,
}

/// The references of an edit, by stable ID: written from either version of the baseline (an
/// entity → its stable ID) and from the live world (a scene entity → its stable ID as the
/// files give it; any other entity → its raw bits, which read back as the same entity), and
/// read into the live world (a stable ID → the scene's live entity).
struct EditRefs {
    old: FxHashMap<Entity, StableId>,
    new: FxHashMap<Entity, StableId>,
    live_ids: FxHashMap<Entity, StableId>,
    live: FxHashMap<StableId, Entity>,
}

/// The mapper installed while an edit reads and writes values: [`EditRefs`]' tables, the
/// side written, and the wire.
struct EditMapper {
    side: Side,
    wire: RefWire,
    tables: EditRefs,
}

impl EditRefs {
    fn new(live: &FxHashMap<StableId, Entity>, old: &World, new: &World) -> EditRefs {
        let ids = |world: &World| {
            (world.query::<(Entity, &StableId)>().iter())
                .map(|(entity, id)| (entity, *id))
                .collect()
        };
        EditRefs {
            old: ids(old),
            new: ids(new),
            live_ids: live.iter().map(|(id, entity)| (*entity, *id)).collect(),
            live: live.clone(),
        }
    }
}

/// Runs `f` with the installed [`EditMapper`] writing `side`'s references in `wire`.
fn on<R>(side: Side, wire: RefWire, f: impl FnOnce() -> R) -> R {
    let _ = with_installed_mapper(|mapper: &mut EditMapper| {
        mapper.side = side;
        mapper.wire = wire;
    });
    f()
}

/// Whether `component` is the same in both versions of an entity (both without it, or values
/// with the same bytes, references by stable ID).
fn same(
    registry: &ComponentRegistry,
    component: ComponentId,
    (old, at_old): (&World, Entity),
    (new, at_new): (&World, Entity),
    compared: &mut Compared,
) -> bool {
    let ops = registry.ops(component);
    compared.old.clear();
    compared.new.clear();
    let before = on(Side::Old, RefWire::Number, || {
        ops.postcard_of(old, at_old, &mut compared.old)
    });
    let after = on(Side::New, RefWire::Number, || {
        ops.postcard_of(new, at_new, &mut compared.new)
    });
    match (before, after) {
        (None, None) => true,
        (Some(true), Some(true)) => compared.old == compared.new,
        (Some(_), Some(_)) => {
            // Not written as bytes (the `binary` feature is off): compared as JSON.
            let before = json(registry, component, old, at_old, Side::Old);
            let after = json(registry, component, new, at_new, Side::New);
            matches!((before, after), (Some(Ok(a)), Some(Ok(b))) if a == b)
        }
        _ => false,
    }
}

/// `component` of `entity` in `world` (one of the versions) as JSON, references as stable
/// IDs; `None` if it has none.
fn json(
    registry: &ComponentRegistry,
    component: ComponentId,
    world: &World,
    entity: Entity,
    side: Side,
) -> Option<Result<Value, serde_json::Error>> {
    let ops = registry.ops(component);
    on(side, RefWire::Text, || ops.to_json(world, entity))
}

/// A value of `component` read from JSON, references to the scene's live entities.
fn decode(
    registry: &ComponentRegistry,
    component: ComponentId,
    value: &Value,
) -> Result<crate::component::TypedValue, String> {
    let ops = registry.ops(component);
    let decoded = on(Side::Live, RefWire::Any, || {
        ops.decode(value, &mut Vec::new())
    });
    decoded.map_err(|error| error.message)
}

/// Applies `patch` to the live `component` of `entity`.
fn patch(
    world: &mut World,
    registry: &ComponentRegistry,
    component: ComponentId,
    entity: Entity,
    patch: &Value,
) -> Result<(), String> {
    let patched = on(Side::Live, RefWire::Any, || {
        commit::patch_component(world, registry, component, entity, patch)
    });
    patched.map(|_| ()).map_err(|error| error.message)
}

impl EntityMapper for EditMapper {
    fn wire(&self) -> RefWire {
        self.wire
    }

    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        let tables = &self.tables;
        let id = match self.side {
            Side::Old => tables.old.get(&entity),
            Side::New => tables.new.get(&entity),
            Side::Live => tables.live_ids.get(&entity),
        };
        match (id, self.wire) {
            (Some(id), RefWire::Number) => Ok(RefOut::Number(id.0)),
            (Some(id), _) => Ok(RefOut::Hex(*id)),
            // An entity of the game's own, in a live value: kept as it is.
            (None, _) if self.side == Side::Live => Ok(RefOut::Number(entity.to_bits().get())),
            (None, _) => Err(MapError::NotWritten(ReadOnly::Loading)),
        }
    }

    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        match reference {
            RefIn::Text(text) => {
                let id = text.parse::<StableId>().map_err(MapError::BadStableId)?;
                (self.tables.live.get(&id).copied()).ok_or(MapError::NotInScene(id))
            }
            RefIn::Number(bits) => Entity::from_bits(bits).ok_or(MapError::InvalidBits(bits)),
        }
    }
}
