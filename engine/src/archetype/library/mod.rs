//! [`ArchetypeLibrary`]: every archetype under a root directory, resolved, validated and ready
//! to spawn.

#[cfg(feature = "binary")]
mod cooked;
mod names;
mod rebuild;
mod spawning;
mod write_back;

pub use write_back::{FieldValue, WriteBackError};

use names::TargetsStale;
use rebuild::RebuildDoc;

use std::any::TypeId;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use hecs::{Entity, World};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use crate::archetype::archetype_ref::ArchetypeRef;
use crate::archetype::case_index::CaseIndex;
use crate::archetype::compiled::{check_partial, compile, CompileProblem};
use crate::archetype::dependency_graph::{DependencyGraph, DependencyLists, Dependents};
use crate::archetype::doc_summary::{Dependencies, DocSummary};
use crate::archetype::file::{ArchetypeDoc, DocProblem};
use crate::archetype::held_back::HeldBack;
use crate::archetype::instance::{InstanceOverrides, OverrideOrigin, OverrideShapes};
use crate::archetype::loaded::Archetype;
use crate::archetype::name::{check_name, name_from_relative_path, NewNameError};
use crate::archetype::partial_check::{not_fully_checked, own_values, where_named};
use crate::archetype::rebuild_job::{
    run_queued, CompileDone, Compiled, JobDone, LeafDone, RebuildJob,
};
use crate::archetype::reference_context::{ArchetypeTargets, AssetIndex, ReferenceTargets};
use crate::archetype::renames::Renames;
use crate::archetype::resolved_tree::{ResolvedTree, TreeHash, TreeRecipe};
use crate::archetype::resolver::{
    resolve_alone, supplier, Cycle, DependencyTree, Failure, Lookup, ResolveWarning,
    ResolvedEntity, Resolver,
};
use crate::archetype::source::SourceFile;
use crate::archetype::spawn_error::SpawnError;
use crate::archetype::spawn_rng::{SpawnRng, DEFAULT_SPAWN_SEED};
use crate::archetype::tree::{
    case_conflict_problem, case_conflicts, examine_path, scan, CaseConflict, Entry, FoundFile,
};
use crate::component::{ArchetypeId, ArchetypeInstance, OverridesId};
use crate::component::{ComponentId, ComponentRegistry};
use crate::diagnostic::{
    quoted, sort_and_dedup, Diagnostic, DiagnosticCode, Diagnostics, Related, Severity,
};
use crate::json::did_you_mean;
use crate::json::{FieldPath, SourceText, TextLines};
use crate::limits::Limits;

/// How a library reads its files.
///
/// New options may be added in minor versions: start from [`LoadOptions::default`] and set
/// the fields you need.
///
/// # Example
/// ```
/// use archetype_engine::{LoadOptions, Severity};
/// let mut options = LoadOptions::default();
/// options.unknown_fields = Severity::Warning; // a typo in a field name is reported, not fatal
/// options.limits.max_file_bytes = 1024 * 1024;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Size and depth limits.
    pub limits: Limits,
    /// Whether a field a component type does not have is an error (the default) or a warning.
    pub unknown_fields: Severity,
    /// The directory [`AssetPath`](crate::AssetPath) fields are relative to: each one read must
    /// name a file there (scanned on each full load). `None` (the default): only their form is
    /// checked.
    pub assets_root: Option<PathBuf>,
    /// Whether a value a file writes that equals what the archetype inherits there is noted
    /// (`same-as-inherited`, a [`Severity::Note`]): off by default; editors turn it on.
    pub same_as_inherited: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            limits: Limits::default(),
            unknown_fields: Severity::Error,
            assets_root: None,
            same_as_inherited: false,
        }
    }
}

/// Every archetype under a root directory: read once, inheritance resolved, every component
/// value deserialized up front, so spawning never parses JSON.
///
/// A library keeps serving the last good version of an archetype whose file breaks later (see
/// [`reload_all`](Self::reload_all)), and a library that loaded with errors still serves the
/// archetypes that are valid and do not depend on broken ones.
///
/// # Example
/// ```no_run
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry};
/// # #[derive(Clone, serde::Serialize, serde::Deserialize)] struct Health { max: f32 }
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Health>()?;
/// let library = ArchetypeLibrary::load("archetypes", registry)?;
/// let mut world = hecs::World::new();
/// let goblin = library.spawn(&mut world, "enemies/goblin")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ArchetypeLibrary {
    registry: Arc<ComponentRegistry>,
    root: PathBuf,
    options: LoadOptions,
    sources: FxHashMap<Arc<str>, SourceFile>,
    /// The names of `sources`, sorted (kept in step with it).
    sorted_names: Vec<Arc<str>>,
    scan_problems: Vec<Diagnostic>,
    slots: Vec<Slot>,
    ids: FxHashMap<Arc<str>, ArchetypeId>,
    states: FxHashMap<Arc<str>, State>,
    /// Former archetype names (`formerly`) and what each is called now.
    /// Shared with the trees built again from files that write an old name.
    renames: Arc<Renames>,
    diagnostics: Vec<Diagnostic>,
    /// What `ArchetypeRef`s are checked against: the archetypes with a file.
    targets: Arc<ArchetypeTargets>,
    /// What changed since `targets` was made.
    targets_stale: TargetsStale,
    /// The spellings of every part of the names of `sources` (case conflicts).
    case_index: CaseIndex,
    /// The archetypes (with a file) that name one without a file, as last rebuilt: their
    /// "did you mean" draws on the set of names.
    naming_missing: FxHashSet<Arc<str>>,
    /// For each archetype name, the archetypes whose values name it (`ArchetypeRef`s, as
    /// `states` record them).
    referrers: FxHashMap<Arc<str>, FxHashSet<Arc<str>>>,
    /// The archetypes whose file lists former names (`formerly`).
    listing_formerly: FxHashSet<Arc<str>>,
    /// The archetypes whose file names an old name (mapped to the current one) or has name
    /// problems (see `map_old_names`).
    naming_old: FxHashSet<Arc<str>>,
    /// The files under the assets root, when there is one.
    assets: Option<Arc<AssetIndex>>,
    /// Rolls spawn-time variations (`$range`, `$pick`).
    rng: SpawnRng,
    /// The shapes of instances' overrides, each kept once.
    override_shapes: OverrideShapes,
    /// The ID of the archetype last found by name for a spawn (`u32::MAX`: none), tried
    /// before the name is hashed: games spawn the same archetype many times in a row.
    last_spawnable: AtomicU32,
    /// During a rebuild, the files of the archetypes it resolves again, parsed once at its
    /// start (old names mapped); empty between rebuilds, when only summaries are kept. A leaf's
    /// job takes its file and drops it where it ran, once the leaf is resolved and compiled.
    rebuild_docs: FxHashMap<Arc<str>, RebuildDoc>,
    /// Who builds on whom, kept up to date file by file.
    graph: DependencyGraph,
    /// The `formerly` clashes the renames were last found with, by archetype (see
    /// [`Renames::find`]): kept for the edits that change no name.
    rename_clashes: FxHashMap<Arc<str>, Vec<DocProblem>>,
    /// The diagnostics of each archetype that has any (its file's, its names', its state's),
    /// as [`diagnostics`](Self::diagnostics) gathers them.
    diagnosed: FxHashMap<Arc<str>, Vec<Diagnostic>>,
    /// The archetypes read through a symbolic link (a reload of a file looks for them).
    linked: FxHashSet<Arc<str>>,
    /// Loaded from a cook, and not reloaded since: it has no files' texts, so the first
    /// reload reads every file ([`cooked`]).
    cooked: bool,
}

/// Everything the library remembers about one archetype name, for as long as it lives.
struct Slot {
    name: Arc<str>,
    /// Interned entity paths (`""` is node 0); never shrinks, so instance markers stay valid.
    node_paths: Vec<Arc<str>>,
    /// The node numbers of the paths but the root's (always 0, so most archetypes, which are
    /// one entity, have an empty map, which allocates nothing).
    node_ids: FxHashMap<Arc<str>, u32>,
    /// The version in effect (the last good one).
    current: Option<Arc<Archetype>>,
    /// The file is gone; `current` stays as the baseline if it comes back.
    deleted: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Status {
    Ready,
    Errors,
    Dependency(String),
    /// Part of an inheritance cycle (its members, `a -> b -> a`), with no other problem.
    Cycle(String),
}

struct State {
    status: Status,
    problems: Vec<Diagnostic>,
    /// The archetype names its component values name (`ArchetypeRef`s): it is checked again
    /// when one appears or disappears.
    references: Vec<Arc<str>>,
}

/// How one archetype changed in a reload: `old` is what was in effect, `new` what is now.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ArchetypeChange {
    /// The archetype.
    pub id: ArchetypeId,
    /// Its name.
    pub name: Arc<str>,
    /// The version in effect before (`None`: the archetype is new).
    pub old: Option<Arc<Archetype>>,
    /// The version in effect now (`None`: the archetype was deleted).
    pub new: Option<Arc<Archetype>>,
}

/// What a reload changed in a library.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct LibraryUpdate {
    /// Archetypes whose content in effect changed (including new and deleted ones).
    pub changes: Vec<ArchetypeChange>,
    /// Archetypes that were touched but keep their last good version, with the reason.
    pub held_back: Vec<HeldBack>,
    /// Current problems of the files and archetypes the reload touched.
    pub errors: Vec<Diagnostic>,
}

impl LibraryUpdate {
    /// This update, then `later`: one update from the state before this one to the state
    /// after `later` (an archetype changed by both is one change, from its first `old` to its
    /// last `new`).
    fn followed_by(mut self, later: LibraryUpdate) -> LibraryUpdate {
        for change in later.changes {
            match self.changes.iter_mut().find(|c| c.id == change.id) {
                Some(first) => first.new = change.new,
                None => self.changes.push(change),
            }
        }
        self.held_back.extend(later.held_back);
        self.errors.extend(later.errors);
        sort_and_dedup(&mut self.errors);
        self
    }
}

/// A library that loaded with errors. It still holds every archetype that is valid
/// ([`into_partial`](Self::into_partial)).
pub struct LoadError {
    library: Box<ArchetypeLibrary>,
}

impl LoadError {
    /// The problems found, in reporting order (warnings included).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.library.diagnostics()
    }

    /// The library with every archetype that is valid and does not depend on a broken one.
    pub fn into_partial(self) -> ArchetypeLibrary {
        *self.library
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors = self.library.error_count();
        write!(
            f,
            "{errors} error{} loading archetypes from `{}`:\n{}",
            if errors == 1 { "" } else { "s" },
            self.library.root.display(),
            Diagnostics(self.library.diagnostics.clone())
        )
    }
}

impl fmt::Debug for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for LoadError {}

impl fmt::Debug for ArchetypeLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArchetypeLibrary")
            .field("root", &self.root)
            .field("archetypes", &self.sources.len())
            .field("errors", &self.error_count())
            .finish()
    }
}

impl ArchetypeLibrary {
    /// Loads every archetype under `root` with default options.
    ///
    /// Every `*.json` file under `root` (recursively; hidden files and directories, and
    /// directories named `*.json`, skipped) is an archetype file, named by its path. A symbolic
    /// link is followed only where its real path stays inside the root's; a link out of the
    /// root is an `invalid-name` error, never read. A FIFO, socket or device named `*.json`
    /// is an `io` error, never opened (so a load never blocks on one). Hot reload and rescans
    /// apply the same rule.
    ///
    /// # Errors
    /// If any file has an error. The error lists every problem and still holds the valid part
    /// of the library ([`LoadError::into_partial`]).
    ///
    /// # Example
    /// ```
    /// use archetype_engine::{ArchetypeLibrary, ComponentRegistry};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Clone, Serialize, Deserialize)]
    /// # struct Health { current: f32, max: f32 }
    /// # let dir = tempfile::tempdir()?;
    /// # let root = dir.path();
    /// # std::fs::create_dir(root.join("enemies"))?;
    /// std::fs::write(root.join("enemies/goblin.json"), r#"{ "components": { "Helth": { "current": 10, "max": 10 } } }"#)?;
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Health>()?;
    /// match ArchetypeLibrary::load(root, registry) {
    ///     Ok(library) => println!("{} archetypes", library.len()),
    ///     Err(error) => {
    ///         // Every problem at once, as `file:line:column: error[code]: message`.
    ///         let message = error.diagnostics()[0].to_string();
    ///         assert!(message.ends_with("goblin.json:1:19: error[unknown-component]: unknown component `Helth`; did you mean `Health`?"));
    ///         let partial = error.into_partial(); // still serves every valid archetype
    ///         assert!(partial.get("enemies/goblin").is_none());
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(
        root: impl AsRef<Path>,
        registry: impl Into<Arc<ComponentRegistry>>,
    ) -> Result<Self, LoadError> {
        Self::load_with(root, registry, LoadOptions::default())
    }

    /// Loads every archetype under `root`.
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub fn load_with(
        root: impl AsRef<Path>,
        registry: impl Into<Arc<ComponentRegistry>>,
        options: LoadOptions,
    ) -> Result<Self, LoadError> {
        let root = root.as_ref();
        let span = tracing::info_span!("load_archetypes", root = %root.display());
        let _entered = span.enter();
        let started = std::time::Instant::now();
        let mut library = Self::empty(root, registry, options);
        library.reload_all();
        library.log_loaded(started);
        if library.error_count() > 0 {
            return Err(LoadError {
                library: Box::new(library),
            });
        }
        Ok(library)
    }

    /// Logs the end of a library load (inside its `load_archetypes` span).
    fn log_loaded(&self, started: std::time::Instant) {
        let ms = crate::logging::ms_since(started);
        let files = self.len();
        let archetypes = self.names().filter(|name| self.get(name).is_some()).count();
        let errors = self.error_count();
        let warnings = self.diagnostics().len() - errors;
        if errors > 0 {
            tracing::warn!(files, archetypes, errors, warnings, ms, "loaded archetypes");
        } else {
            tracing::info!(files, archetypes, errors, warnings, ms, "loaded archetypes");
        }
    }

    /// A library with no archetypes yet, reading from `root` when told to (see
    /// [`reload_all`](Self::reload_all), [`set_source`](Self::set_source)).
    pub fn empty(
        root: impl AsRef<Path>,
        registry: impl Into<Arc<ComponentRegistry>>,
        options: LoadOptions,
    ) -> Self {
        ArchetypeLibrary {
            registry: registry.into(),
            root: root.as_ref().to_path_buf(),
            options,
            sources: FxHashMap::default(),
            sorted_names: Vec::new(),
            scan_problems: Vec::new(),
            slots: Vec::new(),
            ids: FxHashMap::default(),
            states: FxHashMap::default(),
            renames: Arc::default(),
            diagnostics: Vec::new(),
            targets: Arc::default(),
            targets_stale: TargetsStale::All,
            case_index: CaseIndex::default(),
            naming_missing: FxHashSet::default(),
            referrers: FxHashMap::default(),
            listing_formerly: FxHashSet::default(),
            naming_old: FxHashSet::default(),
            assets: None,
            rng: SpawnRng::new(DEFAULT_SPAWN_SEED),
            last_spawnable: AtomicU32::new(u32::MAX),
            override_shapes: OverrideShapes::default(),
            rebuild_docs: FxHashMap::default(),
            graph: DependencyGraph::default(),
            rename_clashes: FxHashMap::default(),
            diagnosed: FxHashMap::default(),
            linked: FxHashSet::default(),
            cooked: false,
        }
    }

    /// The shapes of instances' overrides, shared by the entities that have the same.
    pub(crate) fn override_shapes(&self) -> &OverrideShapes {
        &self.override_shapes
    }

    /// Which fields an instance overrides, as its marker names them: the shape kept by this
    /// library, `None` for an instance without overrides (or a marker of another library's).
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeInstance, ArchetypeLibrary, ComponentRegistry, LoadOptions};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Name": "goblin", "Transform": {} } }"#));
    /// let mut world = hecs::World::new();
    /// let grukk = library.spawn_with(&mut world, "enemies/goblin", &serde_json::json!({ "Name": "Grukk" }))?;
    /// let marker = *world.get::<&ArchetypeInstance>(grukk)?;
    /// let overrides = library.instance_overrides(&marker).expect("Grukk has a name of his own");
    /// assert_eq!(serde_json::to_string(&*overrides.0)?, r#"{"Name":true}"#);
    ///
    /// let goblin = library.spawn(&mut world, "enemies/goblin")?;
    /// assert!(library.instance_overrides(&*world.get::<&ArchetypeInstance>(goblin)?).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn instance_overrides(&self, instance: &ArchetypeInstance) -> Option<InstanceOverrides> {
        self.override_shapes.get(instance.overrides)
    }

    /// Where an instance's overrides were set: by its spawn or by its scene entry (`None` for
    /// an instance without overrides).
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeInstance, ArchetypeLibrary, ComponentRegistry, LoadOptions, OverrideOrigin};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("goblin.json", Some(r#"{ "components": { "Name": "goblin" } }"#));
    /// let mut world = hecs::World::new();
    /// let grukk = library.spawn_with(&mut world, "goblin", &serde_json::json!({ "Name": "Grukk" }))?;
    /// let marker = *world.get::<&ArchetypeInstance>(grukk)?;
    /// assert_eq!(library.instance_override_origin(&marker), Some(OverrideOrigin::Spawn));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn instance_override_origin(&self, instance: &ArchetypeInstance) -> Option<OverrideOrigin> {
        let (_, origin) = self.override_shapes.get_with_origin(instance.overrides)?;
        Some(origin)
    }

    /// Restarts the random numbers that spawn-time variations (`$range`, `$pick`) are rolled
    /// from. The same seed and the same spawns in the same order give the same world; a library
    /// starts with [`DEFAULT_SPAWN_SEED`], so runs are alike until a game seeds it (from the
    /// clock, a save's seed, a replay's).
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    /// # struct Health { max: u32 }
    /// # let mut registry = ComponentRegistry::new();
    /// # registry.register::<Health>()?;
    /// # let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
    /// library.set_source("goblin.json", Some(r#"{ "components": { "Health": { "max": { "$range": [8, 12] } } } }"#));
    /// let mut world = hecs::World::new();
    /// let mut roll = |library: &ArchetypeLibrary, world: &mut hecs::World| -> Vec<u32> {
    ///     (0..20).map(|_| {
    ///         let goblin = library.spawn(world, "goblin").unwrap();
    ///         world.get::<&Health>(goblin).unwrap().max
    ///     }).collect()
    /// };
    /// library.set_spawn_seed(42);
    /// let first = roll(&library, &mut world);
    /// assert!(first.iter().all(|max| (8..=12).contains(max)));
    /// library.set_spawn_seed(42);
    /// assert_eq!(roll(&library, &mut world), first);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_spawn_seed(&self, seed: u64) {
        self.rng.reseed(seed);
    }

    /// Makes the stable IDs this library gives new entities a sequence of their own, the same
    /// for the same `seed`: spawns (every entity of an instance, `spawn_many`, `spawn_with`, …),
    /// fresh IDs of a scene loaded with [`IdConflict::Remap`](crate::IdConflict::Remap), and
    /// children spawned by hot reload or for a scene's archetype that gained them. Two runs
    /// that do the same things in the same order (and, with variation, set the same
    /// [`set_spawn_seed`](Self::set_spawn_seed)) then save byte-identical scenes: for tests,
    /// replays and reproducible bug reports.
    ///
    /// IDs of one sequence are distinct from each other; they are not drawn apart from other
    /// sources (another seed, [`StableId::generate`](crate::StableId::generate), another
    /// process), so a game that loads saves made by other runs should keep the default.
    /// Without it, IDs come from [`StableId::generate`](crate::StableId::generate): random per
    /// process, so people adding entities on two branches do not collide.
    ///
    /// ```
    /// # use archetype_engine::{save_scene, ArchetypeLibrary, ComponentRegistry, LoadOptions, SceneEncoding, SceneSaveOptions};
    /// let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// library.set_source("crate.json", Some(r#"{ "components": { "Name": "Crate" } }"#));
    /// let run = |library: &ArchetypeLibrary| {
    ///     library.set_id_seed(7);
    ///     let mut world = hecs::World::new();
    ///     library.spawn_many(&mut world, "crate", 3).unwrap();
    ///     save_scene(&world, library, SceneEncoding::Json, &SceneSaveOptions::default()).unwrap()
    /// };
    /// assert_eq!(run(&library), run(&library));
    /// ```
    pub fn set_id_seed(&self, seed: u64) {
        self.rng.seed_ids(seed);
    }

    /// The random numbers spawn-time variations are rolled from.
    pub(crate) fn spawn_rng(&self) -> &SpawnRng {
        &self.rng
    }

    /// The component registry the library reads with.
    pub fn registry(&self) -> &Arc<ComponentRegistry> {
        &self.registry
    }

    /// The archetypes directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The options the library reads with.
    pub fn options(&self) -> &LoadOptions {
        &self.options
    }

    /// Every current problem, sorted by file and position.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Number of current errors (not counting warnings).
    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// The names of every archetype with a file, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sorted_names.iter().map(|name| &**name)
    }

    /// Number of archetype files (of a cooked library: of archetypes in the cook).
    pub fn len(&self) -> usize {
        self.sorted_names.len()
    }

    /// Whether there are no archetype files.
    pub fn is_empty(&self) -> bool {
        self.sorted_names.is_empty()
    }

    /// The archetype in effect under `name` (its last good version), if it has a file.
    pub fn get(&self, name: &str) -> Option<&Arc<Archetype>> {
        let id = self.ids.get(name)?;
        let slot = &self.slots[id.0 as usize];
        if slot.deleted {
            return None;
        }
        slot.current.as_ref()
    }

    /// The archetype with `id`, even if its file was deleted since (for orphaned instances).
    pub fn get_by_id(&self, id: ArchetypeId) -> Option<&Arc<Archetype>> {
        self.slots.get(id.0 as usize)?.current.as_ref()
    }

    /// The ID of an archetype name (known names only; IDs are never reused).
    pub fn id(&self, name: &str) -> Option<ArchetypeId> {
        self.ids.get(name).copied()
    }

    /// The name behind an ID.
    pub fn name_of(&self, id: ArchetypeId) -> Option<&str> {
        self.slots.get(id.0 as usize).map(|slot| &*slot.name)
    }

    /// The entity path (`""`, `"turret"`, ...) an instance marker points to.
    pub fn node_path(&self, instance: ArchetypeInstance) -> Option<&str> {
        let slot = self.slots.get(instance.archetype.0 as usize)?;
        slot.node_paths
            .get(instance.node as usize)
            .map(|path| &**path)
    }

    /// The node number of an entity path of an archetype, if any instance ever had it.
    pub fn node_id(&self, id: ArchetypeId, path: &str) -> Option<u32> {
        node_number(self.slots.get(id.0 as usize)?, path)
    }

    /// Whether the archetype's file is gone (its live instances are orphans).
    pub fn is_deleted(&self, id: ArchetypeId) -> bool {
        self.slots
            .get(id.0 as usize)
            .is_some_and(|slot| slot.deleted)
    }

    /// What an archetype's file declares, even when the archetype has errors: whether it is
    /// abstract, and its parents (by their current names). `None` if the file is not
    /// readable JSON.
    pub fn declared(&self, name: &str) -> Option<(bool, &[String])> {
        let summary = self.sources.get(name)?.summary.as_deref()?;
        Some((summary.is_abstract, summary.current().extends()))
    }

    /// The current name of the archetype formerly called `former` (its file lists `former`
    /// under `formerly`), or `None`. A former name that is also a live archetype's, or a former
    /// name of two archetypes, stands for none (`validate` reports it).
    ///
    /// Scenes and archetype files naming a former name load as the current archetype, with a
    /// warning; [`spawn`](Self::spawn) and its kin take a former name as the current one (a
    /// name kept in a saved component value keeps working).
    pub fn renamed(&self, former: &str) -> Option<&str> {
        self.renames.current(former).map(|name| &**name)
    }

    /// The current path of the child a scene (or a tool) names `path` in archetype
    /// `archetype` (its current or a former name), when a name on the path is a former one
    /// (`formerly` in a child entry); `None` when nothing on it was renamed.
    pub fn renamed_child(&self, archetype: &str, path: &str) -> Option<String> {
        let name = self.renamed(archetype).unwrap_or(archetype);
        self.get(name)?.resolved.current_path(path)
    }

    /// The former names of the archetype now called `name` (see [`renamed`](Self::renamed)),
    /// sorted.
    pub fn former_names(&self, name: &str) -> Vec<&str> {
        self.renames.former_names(name)
    }

    /// The text of an archetype's file as last read, for tools that show sources.
    pub fn source_text(&self, name: &str) -> Option<&str> {
        self.sources
            .get(name)?
            .text
            .as_deref()
            .map(|text| text.text())
    }

    /// [`source_text`](Self::source_text) with where its lines start: the index the library
    /// placed the file's problems with (built on first use, kept until the text changes), so a
    /// tool placing them again in other units (an editor's UTF-16 columns) does not index the
    /// text again.
    pub fn source_lines(&self, name: &str) -> Option<TextLines<'_>> {
        self.sources
            .get(name)?
            .text
            .as_deref()
            .map(SourceText::lines)
    }

    /// The file an archetype is read from, as shown in messages.
    pub fn file_of(&self, name: &str) -> Option<&Path> {
        self.sources.get(name).map(|source| source.file.as_path())
    }

    /// Where an archetype's file is read from: its real path, symbolic links resolved (always
    /// inside the root). A tool that rewrites the file writes there, so a link stays a link.
    /// `None` for an archetype whose text was given without a file
    /// ([`set_source`](Self::set_source)).
    pub fn real_file_of(&self, name: &str) -> Option<&Path> {
        self.sources.get(name)?.real.as_deref()
    }

    /// The `case-conflict` error a new archetype `name` would get beside the archetypes here
    /// (a directory on its path, or the name itself, differing only in letter case from
    /// another's, as `Enemies/troll` beside `enemies/goblin`), or `None`. For tools that
    /// create archetype files.
    pub fn case_conflict_of(&self, name: &str) -> Option<Diagnostic> {
        let conflict = self.case_conflict_among(name, None)?;
        let file = file_of_name(&self.root, name);
        Some(case_conflict_problem(&file, name, &conflict))
    }

    /// How a new archetype `name` would clash by letter case with the archetypes here, but
    /// `leaving` (an archetype to be renamed `name`).
    fn case_conflict_among(&self, name: &str, leaving: Option<&str>) -> Option<CaseConflict> {
        let names = self
            .names()
            .filter(|other| *other != name && Some(*other) != leaving);
        let conflicts = case_conflicts(names.chain(std::iter::once(name)));
        let (_, conflict) = conflicts.into_iter().find(|(other, _)| other == name)?;
        Some(conflict)
    }

    /// Whether a new archetype may be named `name` here, by the rules a load would hold its
    /// file to: the naming rules ([`check_archetype_name`](crate::tooling::check_archetype_name),
    /// length included), no archetype of that name or of one differing only in letter case,
    /// no directory on its path differing only in letter case from another archetype's, and
    /// not a former name of another archetype. For tools that create archetype files.
    ///
    /// # Errors
    /// A [`NewNameError`] saying which rule the name breaks (with the name probably meant,
    /// when there is one).
    ///
    /// # Example
    /// ```
    /// use archetype_engine::tooling::NewNameError;
    /// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions};
    ///
    /// let mut library =
    ///     ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// library.set_source("enemies/orc.json", Some("{}"));
    /// assert!(library.check_new_name("enemies/goblin").is_ok());
    /// let clash = library.check_new_name("Enemies/goblin").unwrap_err();
    /// assert!(matches!(clash, NewNameError::DirectoryCase { .. }));
    /// assert!(clash.to_string().ends_with("did you mean `enemies/goblin`?"));
    /// ```
    pub fn check_new_name(&self, name: &str) -> Result<(), NewNameError> {
        self.check_name_taking(name, None)
    }

    /// Whether archetype `old` may be renamed `new` here: as
    /// [`check_new_name`](Self::check_new_name), with `old`'s own name and directories given
    /// up (a rename may change only their letter case).
    ///
    /// # Errors
    /// As [`check_new_name`](Self::check_new_name).
    pub fn check_rename(&self, old: &str, new: &str) -> Result<(), NewNameError> {
        self.check_name_taking(new, Some(old))
    }

    /// [`check_rename`](Self::check_rename) of `leaving` (`None`: a new archetype), with the
    /// name probably meant for a directory spelt differently.
    fn check_name_taking(&self, name: &str, leaving: Option<&str>) -> Result<(), NewNameError> {
        let Some(mut refusal) = self.refusal_of(name, leaving) else {
            return Ok(());
        };
        if let NewNameError::DirectoryCase {
            directory,
            others,
            suggestion,
            ..
        } = &mut refusal
        {
            if let [other] = others.as_slice() {
                let fixed = format!("{other}{}", &name[directory.len()..]);
                if self.refusal_of(&fixed, leaving).is_none() {
                    *suggestion = Some(fixed);
                }
            }
        }
        Err(refusal)
    }

    /// The first rule `name` breaks as the new name of `leaving` (or of a new archetype).
    fn refusal_of(&self, name: &str, leaving: Option<&str>) -> Option<NewNameError> {
        if let Err(problem) = check_name(name) {
            return Some(NewNameError::Invalid(problem));
        }
        if let Some(file) = self.file_of(name) {
            let (name, file) = (name.to_string(), file.to_path_buf());
            return Some(NewNameError::Taken { name, file });
        }
        let twin = (self.names()).find(|other| {
            Some(*other) != leaving && other.len() == name.len() && other.eq_ignore_ascii_case(name)
        });
        if let Some(existing) = twin {
            let file = self
                .file_of(existing)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let existing = existing.to_string();
            return Some(NewNameError::CaseTwin { existing, file });
        }
        if let Some(conflict) = self.case_conflict_among(name, leaving) {
            return Some(NewNameError::DirectoryCase {
                name: name.to_string(),
                directory: conflict.part,
                others: conflict.others,
                suggestion: None,
            });
        }
        match self.renamed(name) {
            Some(current) if Some(current) != leaving => Some(NewNameError::FormerName {
                name: name.to_string(),
                current: current.to_string(),
            }),
            _ => None,
        }
    }

    /// Which archetype's file wrote `field` of `component` on the entity at `entity_path`
    /// (`""` for the root) of archetype `name`, with the place in that file (line, column).
    ///
    /// Returns the file and the diagnostic-style position, or `None` when no file wrote it.
    pub fn provenance(
        &self,
        name: &str,
        entity_path: &str,
        component: &str,
        field: &FieldPath,
    ) -> Option<(PathBuf, Option<crate::Position>)> {
        let docs = |n: &str| self.current_doc(n);
        let node: Vec<&str> = entity_path.split('/').filter(|s| !s.is_empty()).collect();
        let found = supplier(&docs, name, &node, component, field.segments())?;
        let source = self.sources.get(found.archetype.as_str())?;
        let mut probe = Diagnostic::error(DiagnosticCode::Io, String::new());
        source.locate_into(&mut probe, &found.path, false);
        Some((source.file.clone(), probe.position))
    }

    /// Re-reads every file under the root (new, changed and deleted files alike) and rebuilds
    /// what they affect. Archetypes whose new version has errors keep their last good version.
    ///
    /// Of a library loaded from a cook ([`load_cooked`](Self::load_cooked)), the archetypes
    /// whose files now resolve differently from the cook are the changes (the files'
    /// archetypes take over the cooked ones' IDs, so instances spawned from the cook are
    /// patched, not orphaned).
    pub fn reload_all(&mut self) -> LibraryUpdate {
        self.cooked = false;
        self.assets = (self.options.assets_root.as_deref())
            .and_then(AssetIndex::scan)
            .map(Arc::new);
        let scan = scan(&self.root);
        let before = std::mem::replace(&mut self.scan_problems, scan.problems);
        let mut updates: Vec<(Arc<str>, Option<SourceFile>)> = Vec::new();
        for name in self.sources.keys() {
            if !scan.files.contains_key(&**name) {
                updates.push((name.clone(), None));
            }
        }
        let files: Vec<(String, FoundFile)> = scan.files.into_iter().collect();
        let sources = read_sources(&files, &self.registry, &self.options.limits);
        for ((name, _), source) in files.into_iter().zip(sources) {
            updates.push((Arc::from(name), Some(source)));
        }
        let mut update = self.apply_sources(updates);
        // Entries that give no archetype (a link out of the root, a directory named `*.json`)
        // are news when their problem is.
        let new_problems = self.scan_problems.iter().filter(|p| !before.contains(p));
        update.errors.extend(new_problems.cloned());
        sort_and_dedup(&mut update.errors);
        update
    }

    /// Re-reads the given files (paths under the root; a missing file means it was deleted)
    /// and rebuilds what they affect. Each path is judged by the same rule as a full load
    /// (see [`load`](Self::load)): a link out of the root, a special file or a directory named
    /// `*.json` gets the error a load gives it. Archetypes read through a link to one of the
    /// files are re-read too.
    ///
    /// A library loaded from a cook ([`load_cooked`](Self::load_cooked)) has no files'
    /// texts yet: its first reload reads every file, as [`reload_all`](Self::reload_all).
    pub fn reload_files<P: AsRef<Path>>(&mut self, paths: &[P]) -> LibraryUpdate {
        if self.cooked {
            return self.reload_all();
        }
        let Ok(real_root) = std::fs::canonicalize(&self.root) else {
            return self.reload_all();
        };
        let mut updates = Vec::new();
        let mut reals = FxHashSet::default();
        let mut done = FxHashSet::default();
        for path in paths {
            let Some(relative) = self.relative_path(path.as_ref()) else {
                continue;
            };
            let shown = self.root.join(&relative);
            if let (Some(dir), Some(file_name)) = (shown.parent(), shown.file_name()) {
                if let Ok(real_dir) = std::fs::canonicalize(dir) {
                    reals.insert(real_dir.join(file_name));
                }
            }
            if done.insert(relative.clone()) {
                updates.extend(self.examine_file(&real_root, &relative));
            }
        }
        // Files read through links to the changed files (the watcher reports only the target).
        let aliases: Vec<PathBuf> = (self.linked.iter())
            .filter_map(|name| self.sources.get(name))
            .filter(|source| {
                source
                    .real
                    .as_ref()
                    .is_some_and(|real| reals.contains(real))
            })
            .filter_map(|source| source.file.strip_prefix(&self.root).ok())
            .map(Path::to_path_buf)
            .filter(|relative| !done.contains(relative))
            .collect();
        for relative in aliases {
            updates.extend(self.examine_file(&real_root, &relative));
            done.insert(relative);
        }
        let mut update = self.apply_sources(updates);
        let examined = |d: &&Diagnostic| {
            d.file
                .as_ref()
                .and_then(|file| file.strip_prefix(&self.root).ok())
                .is_some_and(|relative| done.contains(relative))
        };
        update
            .errors
            .extend(self.scan_problems.iter().filter(examined).cloned());
        sort_and_dedup(&mut update.errors);
        update
    }

    /// Judges the file at `relative` by the rule, records its problem if it is refused, and
    /// returns its update: the file as read, or `None` (no archetype there now).
    fn examine_file(
        &mut self,
        real_root: &Path,
        relative: &Path,
    ) -> Option<(Arc<str>, Option<SourceFile>)> {
        let file = self.root.join(relative);
        self.scan_problems
            .retain(|d| d.file.as_ref() != Some(&file));
        let name = match examine_path(&self.root, real_root, relative) {
            Entry::File { name, found } => {
                let source = SourceFile::read(&found, &name, &self.registry, &self.options.limits);
                return Some((Arc::from(name), Some(source)));
            }
            Entry::Refused(problem) => {
                self.scan_problems.push(problem);
                name_from_relative_path(relative).ok()
            }
            Entry::Nothing | Entry::Directory(_) => name_from_relative_path(relative).ok(),
        };
        name.map(|name| (Arc::from(name), None))
    }

    /// Replaces the content of one archetype file without touching the disk (`None` deletes
    /// it), then rebuilds what it affects. `relative_path` is relative to the root, e.g.
    /// `enemies/goblin.json`. A text over the file size limit
    /// ([`Limits::max_file_bytes`](crate::Limits::max_file_bytes)) is refused as the file
    /// would be (a `too-large` error). For tests and tools that generate archetypes, and
    /// editors' unsaved buffers.
    pub fn set_source(
        &mut self,
        relative_path: impl AsRef<Path>,
        text: Option<&str>,
    ) -> LibraryUpdate {
        self.set_sources([(relative_path, text)])
    }

    /// [`set_source`](Self::set_source) for several files at once (one rebuild).
    pub fn set_sources<P: AsRef<Path>>(
        &mut self,
        sources: impl IntoIterator<Item = (P, Option<impl AsRef<str>>)>,
    ) -> LibraryUpdate {
        let mut updates = Vec::new();
        for (relative, text) in sources {
            let relative = relative.as_ref();
            let Ok(name) = crate::archetype::name::name_from_relative_path(relative) else {
                continue;
            };
            let source = text.map(|text| {
                SourceFile::from_text(
                    self.root.join(relative),
                    &name,
                    text.as_ref(),
                    &self.registry,
                    &self.options.limits,
                )
            });
            updates.push((Arc::from(name), source));
        }
        // A cooked library reads its files first (see `reload_all`).
        let hydrated = self.cooked.then(|| self.reload_all());
        let update = self.apply_sources(updates);
        match hydrated {
            Some(first) => first.followed_by(update),
            None => update,
        }
    }

    fn relative_path(&self, path: &Path) -> Option<PathBuf> {
        if let Ok(relative) = path.strip_prefix(&self.root) {
            return Some(relative.to_path_buf());
        }
        let root = std::fs::canonicalize(&self.root).ok()?;
        if let Ok(relative) = path.strip_prefix(&root) {
            return Some(relative.to_path_buf());
        }
        // The file may be gone: canonicalize its directory instead.
        let parent = std::fs::canonicalize(path.parent()?).ok()?;
        let relative_dir = parent.strip_prefix(&root).ok()?;
        Some(relative_dir.join(path.file_name()?))
    }

    /// Installs new file contents (or deletions) and rebuilds everything they affect. An edit
    /// that changes no name and no `formerly` costs what it affects: the passes over every
    /// file (names missing, case conflicts, former names) are made only when names change.
    fn apply_sources(&mut self, updates: Vec<(Arc<str>, Option<SourceFile>)>) -> LibraryUpdate {
        let mut touched: BTreeSet<Arc<str>> = BTreeSet::new();
        // Names that appeared or disappeared.
        let mut comings_and_goings: FxHashSet<Arc<str>> = FxHashSet::default();
        let mut formerly_changed = false;
        if self.sources.is_empty() {
            self.sources.reserve(updates.len());
        }
        for (name, source) in updates {
            match source {
                Some(mut source) => {
                    let old = self.sources.get(&name);
                    if let Some(old) = old {
                        // A case conflict depends on the set of names alone: it stays with the
                        // file's new text (found again below when names come or go).
                        let conflict = old.problems.iter().filter(|d| is_case_conflict(d));
                        source.problems.extend(conflict.cloned());
                    }
                    let unchanged = old.is_some_and(|old| {
                        old.text.as_ref().map(|t| t.text())
                            == source.text.as_ref().map(|t| t.text())
                            && old.problems == source.problems
                            && old.real == source.real
                    });
                    if !unchanged {
                        formerly_changed |= old.map(formerly) != Some(formerly(&source));
                        touched.insert(name.clone());
                        match source.linked {
                            true => self.linked.insert(name.clone()),
                            false => self.linked.remove(&name),
                        };
                        match formerly(&source).is_empty() {
                            true => self.listing_formerly.remove(&name),
                            false => self.listing_formerly.insert(name.clone()),
                        };
                        if self.sources.insert(name.clone(), source).is_none() {
                            comings_and_goings.insert(name);
                        }
                    }
                }
                None => {
                    self.linked.remove(&name);
                    self.listing_formerly.remove(&name);
                    self.naming_old.remove(&name);
                    if self.sources.remove(&name).is_some() {
                        touched.insert(name.clone());
                        comings_and_goings.insert(name);
                    }
                }
            }
        }
        let names_changed = !comings_and_goings.is_empty();
        if names_changed {
            self.names_came_or_went(&comings_and_goings, &mut touched);
        }
        self.update_renames(&mut touched, names_changed || formerly_changed);
        self.rebuild(touched)
    }

    /// The file of the archetype `name` as resolution reads it: old archetype names replaced
    /// by current ones. Parsed again from the kept text, unless the rebuild under way holds it.
    /// `None` if it has no file, or the file is not JSON.
    fn current_doc(&self, name: &str) -> Option<Arc<ArchetypeDoc>> {
        if let Some(doc) = self.rebuild_docs.get(name).and_then(RebuildDoc::get) {
            return Some(doc);
        }
        self.doc_from_text(name)
    }

    /// The file of the archetype `name` as resolution reads it, parsed again from the kept
    /// text (or the one just read); see [`current_doc`](Self::current_doc).
    fn doc_from_text(&self, name: &str) -> Option<Arc<ArchetypeDoc>> {
        let source = self.sources.get(name)?;
        let doc = source.written_doc(&self.registry, &self.options.limits)?;
        if source.summary.as_ref()?.mapped.is_none() {
            return Some(doc);
        }
        match self.renames.map_doc(&doc) {
            Some((mapped, _)) => Some(Arc::new(mapped)),
            None => Some(doc),
        }
    }

    /// Maps the old names the files write, adding to `touched` every archetype whose file as
    /// resolved, or whose name problems, changed. With `find_again` (names or former names
    /// changed) the former names (`formerly`) of every file are read again first; else the
    /// renames are as they were, and only the files in `touched` are mapped again.
    fn update_renames(&mut self, touched: &mut BTreeSet<Arc<str>>, find_again: bool) {
        if !find_again {
            let names: Vec<Arc<str>> = touched.iter().cloned().collect();
            for name in names {
                let clash = self.rename_clashes.get(&name).cloned().unwrap_or_default();
                self.map_old_names(&name, clash, touched);
            }
            return;
        }
        let (renames, clashes) = Renames::find(&self.sources, &self.listing_formerly);
        let renames = Arc::new(renames);
        let before = std::mem::replace(&mut self.renames, renames.clone());
        let changed: FxHashSet<&str> = renames.differences(&before).into_iter().collect();
        if !changed.is_empty() {
            self.targets_stale = TargetsStale::All;
            // `ArchetypeRef`s naming a former name that changed meaning are checked again.
            touched.extend(self.referring_to(changed.iter().copied()));
        }
        self.rename_clashes = clashes;
        // The files whose old names or name problems may have changed: all of them when a
        // former name changed meaning, else those edited, those with clashes, and those that
        // named an old name or had name problems.
        let candidates: Vec<&Arc<str>> = match changed.is_empty() {
            false => self.sources.keys().collect(),
            true => {
                let mut names: FxHashSet<&Arc<str>> = touched.iter().collect();
                names.extend(self.rename_clashes.keys());
                names.extend(&self.naming_old);
                names.into_iter().collect()
            }
        };
        let mut again: Vec<(Arc<str>, Vec<DocProblem>)> = (candidates.into_iter())
            .filter_map(|name| {
                let source = self.sources.get(name)?;
                let summary = source.summary.as_deref()?;
                let clash = self.rename_clashes.get(name);
                let again = touched.contains(name)
                    || clash.is_some_and(|clash| !clash.is_empty())
                    || !source.name_problems.is_empty()
                    || summary.mapped.is_some()
                    || (!changed.is_empty()
                        && (summary.written.all().iter())
                            .any(|dep| changed.contains(dep.as_str())));
                again.then(|| (name.clone(), clash.cloned().unwrap_or_default()))
            })
            .collect();
        // In name order, as the files are placed: what is found does not depend on hashing.
        again.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (name, clash) in again {
            self.map_old_names(&name, clash, touched);
        }
    }

    /// Maps the old names the file of `name` writes and places its name problems (its
    /// `formerly` clashes, `clash`, among them), adding it to `touched` if either changed.
    fn map_old_names(
        &mut self,
        name: &Arc<str>,
        clash: Vec<DocProblem>,
        touched: &mut BTreeSet<Arc<str>>,
    ) {
        let Some(source) = self.sources.get_mut(name) else {
            return;
        };
        let Some(summary) = source.summary.as_deref() else {
            return;
        };
        // Without renames there is nothing to map (and no document to read).
        let written = (!self.renames.is_empty())
            .then(|| source.written_doc(&self.registry, &self.options.limits))
            .flatten();
        let (mapped, mut found) = match written.and_then(|doc| self.renames.map_doc(&doc)) {
            Some((mapped, warnings)) => (Some(Dependencies::of(&mapped)), warnings),
            None => (None, Vec::new()),
        };
        found.extend(clash);
        let placed: Vec<Diagnostic> = found
            .into_iter()
            .map(|problem| source.place(problem, name))
            .collect();
        match mapped.is_some() || !placed.is_empty() {
            true => self.naming_old.insert(name.clone()),
            false => self.naming_old.remove(name),
        };
        if mapped != summary.mapped || placed != source.name_problems {
            touched.insert(name.clone());
            if let Some(summary) = source.summary.as_deref_mut() {
                summary.mapped = mapped;
            }
            source.name_problems = placed;
        }
    }

    /// An archetype renamed while the game runs keeps its ID, so its live instances follow the
    /// file under its new name (they are patched, not orphaned): `name` takes over the slot of
    /// a former name (`formerly`) whose file is gone, unless `name` already has a slot that
    /// served a version (which instances may carry).
    fn take_over_former_slot(&mut self, name: &Arc<str>) {
        let fresh = self
            .ids
            .get(name)
            .is_none_or(|id| self.slots[id.0 as usize].current.is_none());
        if !fresh {
            return;
        }
        let formers = self.renames.former_names(name);
        let Some((former, id)) = formers.iter().find_map(|former| {
            let id = *self.ids.get(*former)?;
            (!self.sources.contains_key(*former)).then_some((Arc::<str>::from(*former), id))
        }) else {
            return;
        };
        self.ids.remove(&former);
        self.ids.insert(name.clone(), id);
        self.slots[id.0 as usize].name = name.clone();
        tracing::debug!(archetype = %name, former = %former, "renamed archetype keeps its ID");
    }

    fn slot_id(&mut self, name: &Arc<str>) -> ArchetypeId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = ArchetypeId(self.slots.len() as u32);
        self.slots.push(Slot {
            name: name.clone(),
            node_paths: vec![crate::archetype::compiled::root_path()],
            node_ids: FxHashMap::default(),
            current: None,
            deleted: false,
        });
        self.ids.insert(name.clone(), id);
        id
    }

    /// What `ArchetypeRef` and `AssetPath` fields are checked against.
    pub(crate) fn reference_targets(&self) -> ReferenceTargets {
        ReferenceTargets {
            archetypes: self.targets.clone(),
            assets: self.assets.clone(),
        }
    }

    /// The archetypes with a file, by name, for `ArchetypeRef`s.
    fn archetype_targets(&self) -> ArchetypeTargets {
        let mut ids: FxHashMap<Arc<str>, ArchetypeId> = self
            .sorted_names
            .iter()
            .filter_map(|name| Some((name.clone(), *self.ids.get(name)?)))
            .collect();
        // A former name (`formerly`) stands for the archetype under its current one.
        for (former, current) in self.renames.iter() {
            if let Some(&id) = self.ids.get(current) {
                ids.insert(former.clone(), id);
            }
        }
        ArchetypeTargets {
            ids,
            sorted: self.sorted_names.clone(),
        }
    }
}

/// `ids`, sorted.
/// Whether `diagnostic` is a case conflict (found from the set of names, not from a file).
fn is_case_conflict(diagnostic: &Diagnostic) -> bool {
    diagnostic.code == DiagnosticCode::CaseConflict
}

/// The former names (`formerly`) a file lists (none if it does not read).
fn formerly(source: &SourceFile) -> &[String] {
    source
        .summary
        .as_deref()
        .map_or(&[], |summary| &summary.formerly)
}

/// Reads and parses files, on every core when there are many (each file is independent, and
/// reading plus parsing is most of a load).
fn read_sources(
    files: &[(String, FoundFile)],
    registry: &ComponentRegistry,
    limits: &crate::limits::Limits,
) -> Vec<SourceFile> {
    parallel_map(files, |(name, found)| {
        SourceFile::read(found, name, registry, limits)
    })
}

/// `items.iter().map(work)`, on every core (up to 8) when there are at least
/// [`PARALLEL_MIN_ITEMS`] items, in order.
fn parallel_map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = worker_threads();
    if threads < 2 || items.len() < PARALLEL_MIN_ITEMS {
        return items.iter().map(work).collect();
    }
    map_on_threads(items, threads, work)
}

/// `items.iter().map(work)` on `threads` threads (each a run of the items), in order, however
/// few the items.
pub(crate) fn map_on_threads<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let chunk = items.len().div_ceil(threads.max(1)).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(work).collect::<Vec<_>>()))
            .collect();
        let mut results = Vec::with_capacity(items.len());
        for (worker, part) in workers.into_iter().zip(items.chunks(chunk)) {
            match worker.join() {
                Ok(mut done) => results.append(&mut done),
                // A panic in a worker is a bug; do that part again on this thread so the
                // panic (and its message) surfaces here.
                Err(_) => results.extend(part.iter().map(work)),
            }
        }
        results
    })
}

/// How many threads a load (or a big scene save) works on: every core, up to 8.
pub(crate) fn worker_threads() -> usize {
    // Asked once: the standard library reads the process's CPU quota from files each time.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// Below this many files (or archetypes) a load works on one thread: starting threads would
/// cost more than it saves.
const PARALLEL_MIN_ITEMS: usize = 256;

/// The file of the archetype `name` under `root`, as messages show it (`enemies/goblin` is
/// `root/enemies/goblin.json`).
fn file_of_name(root: &Path, name: &str) -> PathBuf {
    let mut file = root.to_path_buf();
    file.extend(name.split('/'));
    file.set_extension("json");
    file
}

/// The node number of the entity path `path` in `slot`, if it has one.
fn node_number(slot: &Slot, path: &str) -> Option<u32> {
    if path.is_empty() {
        return Some(0);
    }
    slot.node_ids.get(path).copied()
}

fn intern_node(slot: &mut Slot, path: &str) -> u32 {
    if let Some(id) = node_number(slot, path) {
        return id;
    }
    let id = slot.node_paths.len() as u32;
    let path: Arc<str> = Arc::from(path);
    slot.node_paths.push(path.clone());
    slot.node_ids.insert(path, id);
    id
}

impl ResolvedEntity {
    /// The entity at `path` (`""` for this one, `"turret/barrel"` for a grandchild).
    pub fn entity_at(&self, path: &str) -> Option<&ResolvedEntity> {
        let mut entity = self;
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            entity = entity.children.get(segment)?;
        }
        Some(entity)
    }
}
