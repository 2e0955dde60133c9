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

use hecs::{Entity, World};
use rustc_hash::FxHashMap;

use crate::archetype::ArchetypeLibrary;
use crate::component::StableId;
use crate::scene::live_edit::{ids_by_entity, LiveEntities, SceneEdit, Version};
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
    live: LiveEntities,
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
    pub(super) spawned: usize,
    pub(super) despawned: usize,
    pub(super) updated: usize,
    pub(super) error: Option<SceneError>,
    pub(super) failures: Vec<LiveSceneFailure>,
    elapsed: Duration,
    written: Duration,
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
    pub(super) fn new(id: StableId, component: Option<&str>, message: impl Into<String>) -> Self {
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

    /// How much of [`elapsed`](Self::elapsed) writing the edit into the world took: it costs
    /// what the edit changes. The rest is reading the scene's files again and comparing them
    /// with their last version, which costs what the scene holds and touches no world.
    pub fn written_in(&self) -> Duration {
        self.written
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
        let live = file_entities(loaded).collect();
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
        self.live.get(id)
    }

    /// Reads the scene's files again now and carries what changed into `world`.
    pub fn reload(&mut self, world: &mut World, library: &ArchetypeLibrary) -> LiveSceneReport {
        let started = Instant::now();
        let span = tracing::info_span!("live_scene", file = %self.file.display());
        let _entered = span.enter();
        let mut report = match read_baseline(&self.file, library, &self.options) {
            Ok(next) => {
                let old = Version {
                    world: &self.baseline.world,
                    ids: &self.baseline.ids,
                    by_entity: &self.baseline.by_entity,
                };
                let new = Version {
                    world: &next.world,
                    ids: &next.ids,
                    by_entity: &next.by_entity,
                };
                let edit = SceneEdit::compare(library.registry(), &old, &new);
                let writing = Instant::now();
                let on_conflict = self.options.on_id_conflict;
                let mut report = match edit.is_empty() {
                    true => LiveSceneReport::default(),
                    false => edit.apply(world, library, &mut self.live, on_conflict),
                };
                report.written = writing.elapsed();
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
    let ids = file_entities(&loaded).collect();
    let files = std::iter::once(file.to_path_buf()).chain(loaded.sub_scenes);
    Ok(Baseline {
        by_entity: ids_by_entity(&baseline),
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
    /// Every entity → its stable ID, for writing references as the files do.
    by_entity: std::sync::Arc<FxHashMap<Entity, StableId>>,
    /// The files it read: the top file, then every sub-scene it places.
    files: Vec<PathBuf>,
}

/// The entities a load took from the scene's files, by stable ID: without the children it
/// spawned because their archetypes gained them since the files were written (they get fresh
/// IDs at every load: they are the world's, not the files').
fn file_entities(loaded: &LoadedScene) -> impl Iterator<Item = (StableId, Entity)> + '_ {
    let gained: rustc_hash::FxHashSet<StableId> = (loaded.changes.iter())
        .filter_map(|change| match change {
            SceneChange::ChildSpawned { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    (loaded.by_id.iter())
        .filter(move |(id, _)| !gained.contains(id))
        .map(|(id, entity)| (*id, *entity))
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
