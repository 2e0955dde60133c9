//! [`ArchetypeLibrary`]: every archetype under a root directory, resolved, validated and ready
//! to spawn.

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
use crate::archetype::compiled::{check_partial, compile, CompileProblem};
use crate::archetype::dependency_graph::{DependencyGraph, DependencyLists, Dependents};
use crate::archetype::doc_summary::{Dependencies, DocSummary};
use crate::archetype::file::{ArchetypeDoc, DocProblem};
use crate::archetype::held_back::HeldBack;
use crate::archetype::instance::{InstanceOverrides, OverrideShapes};
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
    /// The names changed since `targets` was made.
    targets_stale: bool,
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
            targets_stale: true,
            assets: None,
            rng: SpawnRng::new(DEFAULT_SPAWN_SEED),
            last_spawnable: AtomicU32::new(u32::MAX),
            override_shapes: OverrideShapes::default(),
            rebuild_docs: FxHashMap::default(),
            graph: DependencyGraph::default(),
            rename_clashes: FxHashMap::default(),
            diagnosed: FxHashMap::default(),
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

    /// Number of archetype files.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there are no archetype files.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
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
        let mut file = self.root.clone();
        file.extend(name.split('/'));
        file.set_extension("json");
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
    pub fn reload_all(&mut self) -> LibraryUpdate {
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
    pub fn reload_files<P: AsRef<Path>>(&mut self, paths: &[P]) -> LibraryUpdate {
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
        let aliases: Vec<PathBuf> = self
            .sources
            .values()
            .filter(|source| source.linked)
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
        self.apply_sources(updates)
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
                        if self.sources.insert(name.clone(), source).is_none() {
                            comings_and_goings.insert(name);
                        }
                    }
                }
                None => {
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

    /// What names appearing or disappearing changes: the `ArchetypeRef`s naming them and the
    /// archetypes naming a missing one are checked again, and case conflicts found again.
    fn names_came_or_went(
        &mut self,
        comings_and_goings: &FxHashSet<Arc<str>>,
        touched: &mut BTreeSet<Arc<str>>,
    ) {
        self.targets_stale = true;
        for (name, state) in &self.states {
            if state
                .references
                .iter()
                .any(|r| comings_and_goings.contains(r))
            {
                touched.insert(name.clone());
            }
        }
        self.sorted_names = self.sources.keys().cloned().collect();
        self.sorted_names.sort_unstable();
        // "Did you mean" for a parent or child archetype that does not exist draws on the
        // set of names: check the archetypes that name a missing one again.
        for (name, source) in &self.sources {
            let names_missing = source.summary.as_deref().is_some_and(|summary| {
                (summary.current().all().iter()).any(|dep| !self.sources.contains_key(dep.as_str()))
            });
            if names_missing {
                touched.insert(name.clone());
            }
        }
        // Case conflicts depend on the whole set of names: found again.
        let conflicts = case_conflicts(self.sources.keys().map(|n| &**n));
        for (name, source) in self.sources.iter_mut() {
            let had = source.problems.iter().any(is_case_conflict);
            source.problems.retain(|d| !is_case_conflict(d));
            if let Some((_, conflict)) = conflicts.iter().find(|(n, _)| **n == **name) {
                source
                    .problems
                    .push(case_conflict_problem(&source.file, name, conflict));
                touched.insert(name.clone());
            } else if had {
                touched.insert(name.clone());
            }
        }
    }

    /// The file of the archetype `name` as resolution reads it: old archetype names replaced
    /// by current ones. Parsed again from the kept text, unless the rebuild under way holds it.
    /// `None` if it has no file, or the file is not JSON.
    fn current_doc(&self, name: &str) -> Option<Arc<ArchetypeDoc>> {
        if let Some(doc) = self.rebuild_docs.get(name).and_then(RebuildDoc::get) {
            return Some(doc);
        }
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
        let (renames, clashes) = Renames::find(&self.sources);
        let renames = Arc::new(renames);
        let before = std::mem::replace(&mut self.renames, renames.clone());
        let changed: FxHashSet<&str> = renames.differences(&before).into_iter().collect();
        if !changed.is_empty() {
            self.targets_stale = true;
            // `ArchetypeRef`s naming a former name that changed meaning are checked again.
            for (name, state) in &self.states {
                if state.references.iter().any(|r| changed.contains(&**r)) {
                    touched.insert(name.clone());
                }
            }
        }
        self.rename_clashes = clashes;
        let again: Vec<(Arc<str>, Vec<DocProblem>)> = (self.sources.iter())
            .filter_map(|(name, source)| {
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

    /// Resolves every archetype of `affected_sorted` that has a file, and compiles each
    /// concrete one that resolved. When there are many, other cores work while this thread
    /// goes on resolving: they compile what it resolved, and resolve and compile the leaves
    /// (see [`rebuild_job`](crate::archetype::rebuild_job)). What is found never depends on
    /// threads: a leaf that does not resolve on its own is resolved again here, in order.
    /// Slots must exist for all of them.
    fn resolve_and_compile(
        &self,
        affected: &FxHashSet<Arc<str>>,
        affected_sorted: &[Arc<str>],
        dependents: &Dependents,
    ) -> Resolution {
        let names: Vec<&str> = self.sorted_names.iter().map(|n| &**n).collect();
        let lookup = |name: &str| self.lookup(affected, name);
        let targets = self.reference_targets();
        let run = |job: RebuildJob| self.run_job(job, &targets);
        let threads = if affected_sorted.len() < PARALLEL_MIN_ITEMS {
            1
        } else {
            worker_threads()
        };

        let (jobs, queue) = mpsc::channel::<RebuildJob>();
        let queue = Mutex::new(queue);
        let work = || run_queued(&queue, &run);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut resolver = Resolver::new(lookup, &names, &*self.registry);
            let (mut outcomes, sent) =
                self.resolve_in_order(&mut resolver, affected_sorted, dependents, &jobs);
            drop(jobs);
            // This thread does what is left (everything, on one thread).
            let mut done = work();
            for worker in workers {
                // A panic in a worker is a bug. What it did is then missing: it is done again
                // on this thread (below, and in `rebuild`), where the panic surfaces.
                if let Ok(more) = worker.join() {
                    done.extend(more);
                }
            }
            let mut compiled = FxHashMap::default();
            compiled.reserve(done.len());
            for (name, done) in done {
                match done {
                    JobDone::Compiled(result) => {
                        compiled.insert(name, result);
                    }
                    JobDone::Leaf(leaf) => {
                        outcomes.insert(name.clone(), (Ok(leaf.tree), leaf.depth, leaf.unused));
                        compiled.insert(name, leaf.compiled);
                    }
                }
            }
            // Leaves that did not resolve on their own: resolved here, as any other.
            for name in sent {
                (outcomes.entry(name)).or_insert_with_key(|name| resolve_here(&mut resolver, name));
            }
            Resolution {
                outcomes,
                compiled,
                cycles: resolver.take_cycles(),
            }
        })
    }

    /// Does one job of a rebuild on whichever core runs it; `None` leaves it to the
    /// rebuild's thread.
    fn run_job(&self, job: RebuildJob, targets: &ReferenceTargets) -> Option<(Arc<str>, JobDone)> {
        match job {
            RebuildJob::Compile(name, resolved) => {
                let compiled = self.compile_one(&name, &resolved, targets)?;
                let done = JobDone::Compiled((compiled, TreeHash::of(&resolved)));
                Some((name, done))
            }
            RebuildJob::Leaf(name, deps) => {
                let cell = self.rebuild_docs.get(&name)?;
                let doc = cell.take()?;
                let resolved = resolve_alone(&name, &doc, &deps, &*self.registry);
                let Some((tree, depth, unused)) = resolved else {
                    // For the rebuild's thread to resolve it again, in order.
                    cell.put_back(doc);
                    return None;
                };
                let Some(compiled) = self.compile_one(&name, &tree, targets) else {
                    cell.put_back(doc);
                    return None;
                };
                if compiled.problems.is_empty() && unused.is_empty() {
                    // Freed here, while this core has it at hand (problems are placed in it).
                    drop(doc);
                } else {
                    cell.put_back(doc);
                }
                let hash = TreeHash::of(&tree);
                // A first load compares the tree with nothing, and it can be built again: it
                // is dropped here rather than on the rebuild's thread.
                let first = (self.ids.get(&name)).is_some_and(|id| {
                    let slot = &self.slots[id.0 as usize];
                    slot.current.is_none()
                });
                let rebuildable = self.sources.get(&name).is_some_and(|s| s.text.is_some());
                let tree = (!(first && rebuildable)).then_some(tree);
                let leaf = LeafDone {
                    tree,
                    depth,
                    unused,
                    compiled: (compiled, hash),
                };
                Some((name, JobDone::Leaf(leaf)))
            }
        }
    }

    /// How the resolver sees the archetype `name` while the archetypes of `affected` are
    /// resolved again: their files, and the others' current resolved values.
    fn lookup(&self, affected: &FxHashSet<Arc<str>>, name: &str) -> Lookup {
        if !self.sources.contains_key(name) {
            return Lookup::Missing;
        }
        if affected.contains(name) {
            return match self.rebuild_docs.get(name).and_then(RebuildDoc::get) {
                Some(doc) => Lookup::Doc(doc),
                None => Lookup::Broken,
            };
        }
        let ready = self
            .states
            .get(name)
            .is_some_and(|s| s.status == Status::Ready);
        let current = self
            .ids
            .get(name)
            .and_then(|id| self.slots[id.0 as usize].current.as_ref());
        match (ready, current) {
            (true, Some(current)) => {
                Lookup::Resolved(current.resolved.arc().clone(), current.depth)
            }
            _ => Lookup::Broken,
        }
    }

    /// Compiles the archetype `name` (resolved to `resolved`) without changing its slot; `None`
    /// if it has no file or no slot.
    fn compile_one(
        &self,
        name: &Arc<str>,
        resolved: &ResolvedEntity,
        targets: &ReferenceTargets,
    ) -> Option<Compiled> {
        let summary = self.sources.get(name)?.summary.as_deref()?;
        let id = *self.ids.get(name)?;
        let slot = &self.slots[id.0 as usize];
        Some(compile_with_slot(
            slot,
            id,
            summary.is_abstract,
            resolved,
            &self.registry,
            targets,
        ))
    }

    /// Resolves, in order, each archetype of `sorted` that has a file, and sends each one that
    /// resolved to `jobs` to be compiled. A leaf (nothing builds on it) whose dependencies are
    /// all resolved when its turn comes is instead sent to `jobs` to be resolved and compiled:
    /// resolving it here would read only their trees (see [`resolve_alone`]), so the outcome
    /// is the same. Returns the outcomes found here, and the leaves sent.
    fn resolve_in_order<'a, L: Fn(&str) -> Lookup>(
        &self,
        resolver: &mut Resolver<'a, L>,
        sorted: &[Arc<str>],
        dependents: &Dependents,
        jobs: &mpsc::Sender<RebuildJob>,
    ) -> (FxHashMap<Arc<str>, ResolveOutcome>, Vec<Arc<str>>) {
        let mut outcomes = FxHashMap::default();
        outcomes.reserve(sorted.len());
        let mut sent = Vec::new();
        for name in sorted {
            let Some(summary) = self.sources.get(name).and_then(|s| s.summary.as_deref()) else {
                continue;
            };
            if !dependents.contains_key(&**name) {
                if let Some(deps) = known_dependencies(resolver, summary) {
                    // Only fails if every receiver is gone, and this thread is one.
                    let _ = jobs.send(RebuildJob::Leaf(name.clone(), deps));
                    sent.push(name.clone());
                    continue;
                }
            }
            let outcome = resolve_here(resolver, name);
            if let (Ok(Some(resolved)), _, _) = &outcome {
                let _ = jobs.send(RebuildJob::Compile(name.clone(), resolved.clone()));
            }
            outcomes.insert(name.clone(), outcome);
        }
        (outcomes, sent)
    }

    /// Re-resolves `touched` archetypes and everything that depends on them.
    fn rebuild(&mut self, touched: BTreeSet<Arc<str>>) -> LibraryUpdate {
        // Every archetype whose file or mapping changed is touched: their entries are set
        // again, and the graph is what the files say now.
        if self.graph.deps().is_empty() {
            self.graph.reserve(touched.len());
        }
        for name in &touched {
            let list = (self.sources.get(name))
                .map(|source| source.summary.as_deref().map(|s| s.current().shared()));
            self.graph.set(name, list.map(Option::unwrap_or_default));
        }
        // Out of `self` while the rebuild reads it beside `&mut self`.
        let graph = std::mem::take(&mut self.graph);
        let (deps, dependents) = (graph.deps(), graph.dependents());
        let affected = affected_by(touched, dependents);
        // Sorted, so the work and its report come out in the same order every time.
        let mut affected_sorted: Vec<Arc<str>> = affected.iter().cloned().collect();
        affected_sorted.sort_unstable();

        // Archetype IDs are given in dependency order before any work, so they never depend on
        // how the work was spread over threads.
        let order = dependency_order(&affected_sorted, &affected, deps);
        // On a first load every archetype is new: room for all, so they are not grown (and
        // rehashed) one doubling at a time.
        if self.slots.is_empty() {
            self.slots.reserve(order.len());
            self.ids.reserve(order.len());
            self.states.reserve(order.len());
        }
        for name in &order {
            if self.sources.contains_key(name) {
                self.take_over_former_slot(name);
                self.slot_id(name);
            }
        }
        if std::mem::take(&mut self.targets_stale) {
            self.targets = Arc::new(self.archetype_targets());
        }
        self.rebuild_docs = (affected_sorted.iter())
            .filter_map(|name| Some((name.clone(), RebuildDoc::new(self.current_doc(name)?))))
            .collect();
        // The rebuild holds the files it read now (so a leaf's job can free its own).
        for name in &affected_sorted {
            if let Some(source) = self.sources.get_mut(name) {
                source.fresh = None;
            }
        }
        let Resolution {
            outcomes,
            compiled,
            cycles,
        } = self.resolve_and_compile(&affected, &affected_sorted, dependents);
        let mut work = Decisions {
            deps,
            dependents,
            outcomes,
            precompiled: compiled,
            cycle_errors: FxHashMap::default(),
            cycle_of: FxHashMap::default(),
            update: LibraryUpdate::default(),
        };
        // About one change per archetype decided (grown, the list is copied a few times over).
        work.update.changes.reserve(order.len());
        self.note_cycles(&cycles, &mut work);

        // Decide, dependencies first, what each affected archetype becomes.
        for name in order {
            if self.sources.contains_key(&name) {
                self.decide(name, &mut work);
            } else {
                self.mark_deleted(&name, &mut work.update);
            }
        }

        // The files the leaves' jobs did not free (those others build on, those with problems)
        // have served; what stays is their summary. A fresh map: a cleared one would keep its
        // capacity.
        let docs: Vec<RebuildDoc> = std::mem::take(&mut self.rebuild_docs)
            .into_values()
            .collect();
        drop_on_every_core(docs);
        let mut update = work.update;
        self.graph = graph;
        self.collect_diagnostics(&affected_sorted);
        self.report_errors(&affected_sorted, &mut update.errors);
        update
    }

    /// Makes each inheritance cycle one error, in the file of its member first in name order,
    /// and notes each member's cycle (`a -> b -> a`): every member is held back.
    fn note_cycles<'a>(&self, cycles: &'a [Cycle], work: &mut Decisions<'a>) {
        for cycle in cycles {
            for link in &cycle.links {
                work.cycle_of
                    .entry(link.from.as_str())
                    .or_insert_with(|| cycle.names());
            }
            if let Some((first, diagnostic)) = self.cycle_diagnostic(cycle) {
                work.cycle_errors.entry(first).or_default().push(diagnostic);
            }
        }
    }

    /// Forgets the state of the archetype `name`, whose file is gone, and marks it deleted
    /// (once): a change to nothing. A name whose slot its new name took over is nothing.
    fn mark_deleted(&mut self, name: &Arc<str>, update: &mut LibraryUpdate) {
        self.states.remove(name);
        let Some(&id) = self.ids.get(name) else {
            return;
        };
        let slot = &mut self.slots[id.0 as usize];
        if !slot.deleted {
            slot.deleted = true;
            update.changes.push(ArchetypeChange {
                id,
                name: name.clone(),
                old: slot.current.clone(),
                new: None,
            });
        }
    }

    /// Decides what the archetype `name` (which has a file) becomes: its status, its problems,
    /// and the version in effect.
    fn decide(&mut self, name: Arc<str>, work: &mut Decisions<'_>) {
        let id = self.slot_id(&name);
        let broken_dep = work
            .deps
            .get(&name)
            .and_then(|list| self.first_broken_dependency(list));
        let (outcome, depth, unused) = match work.outcomes.remove(&name) {
            Some((outcome, depth, unused)) => (Some(outcome), depth, unused),
            None => (None, 1, Vec::new()),
        };
        let mut found = Findings {
            name,
            id,
            problems: Vec::new(),
            references: Vec::new(),
            new_archetype: None,
        };
        let status = self.status_of(outcome, depth, broken_dep, work, &mut found);
        // Under a broken dependency what the archetype is built on is not known: no warnings
        // about what it inherits (or lacks).
        let unused = match status {
            Status::Dependency(_) => Vec::new(),
            _ => unused,
        };
        let noted = self.options.same_as_inherited;
        let unused = (unused.into_iter())
            .filter(|left| noted || left.code != DiagnosticCode::SameAsInherited);
        let warnings: Vec<Diagnostic> = (unused.into_iter())
            .map(|left| self.place_compile_problem(&found.name, CompileProblem::warning(left)))
            .collect();
        found.problems.splice(0..0, warnings);
        if let Status::Dependency(dep) = &status {
            (work.update.held_back).push(HeldBack::broken_dependency(&*found.name, dep.as_str()));
            let (problems, named) = self.findings_despite(&found.name, dep);
            found.problems.extend(problems);
            found.references = named;
        }
        found
            .problems
            .extend(work.cycle_errors.remove(&found.name).unwrap_or_default());
        let Findings {
            name,
            id,
            problems,
            references,
            new_archetype,
        } = found;
        self.put_in_effect(id, &name, new_archetype, &mut work.update);
        let state = State {
            status,
            problems,
            references,
        };
        self.states.insert(name, state);
    }

    /// The first of `deps` (in `extends` order, then children) that has a file but is not
    /// ready.
    fn first_broken_dependency(&self, deps: &[String]) -> Option<String> {
        deps.iter()
            .find(|dep| {
                !self
                    .states
                    .get(dep.as_str())
                    .is_some_and(|s| s.status == Status::Ready)
                    && self.sources.contains_key(dep.as_str())
            })
            .cloned()
    }

    /// The status resolving gave the archetype of `found` (`None`: it was not resolved),
    /// compiling it when it resolved and nothing it depends on is broken.
    fn status_of(
        &mut self,
        outcome: Option<Result<Option<Arc<ResolvedEntity>>, Failure>>,
        depth: usize,
        broken_dep: Option<String>,
        work: &mut Decisions<'_>,
        found: &mut Findings,
    ) -> Status {
        let summary = self.sources[&found.name].summary.as_deref();
        match (outcome, summary) {
            (None, _) | (_, None) => Status::Errors,
            (Some(Err(Failure::Problems(problems))), _) => {
                let source = &self.sources[&found.name];
                for problem in problems {
                    let diagnostic = source.place(
                        crate::archetype::file::DocProblem {
                            path: problem.path,
                            at_key: false,
                            diagnostic: problem.diagnostic,
                        },
                        &found.name,
                    );
                    found.problems.push(diagnostic);
                }
                Status::Errors
            }
            // The first dependency (in `extends` order, then children) known to be
            // broken, so the report does not depend on which were resolved in this
            // rebuild (the resolver only sees file-level breakage of those).
            (Some(Err(Failure::Dependency(dep))), _) => {
                Status::Dependency(broken_dep.unwrap_or(dep))
            }
            (Some(Err(Failure::InCycle)), _) => match work.cycle_of.get(&*found.name) {
                Some(names) => Status::Cycle(names.clone()),
                None => Status::Errors,
            },
            (Some(Err(Failure::Cycle(_))), _) => Status::Errors,
            (Some(Ok(_)), _) if broken_dep.is_some() => {
                Status::Dependency(broken_dep.unwrap_or_default())
            }
            (Some(Ok(resolved)), Some(summary)) => {
                let (compiled, hash) = match (work.precompiled.remove(&found.name), &resolved) {
                    (Some(done), _) => done,
                    (None, Some(resolved)) => (
                        compile_with_slot(
                            &self.slots[found.id.0 as usize],
                            found.id,
                            summary.is_abstract,
                            resolved,
                            &self.registry,
                            &self.reference_targets(),
                        ),
                        TreeHash::of(resolved),
                    ),
                    // A tree is dropped only where it was compiled; never reached.
                    (None, None) => return Status::Errors,
                };
                let keep_tree = work.dependents.contains_key(&*found.name);
                let Some(tree) = self.tree_of(&found.name, summary, (resolved, hash), keep_tree)
                else {
                    return Status::Errors;
                };
                let written = (summary.is_abstract, summary.current().extends().to_vec());
                self.accept_compiled(written, tree, depth, compiled, found)
            }
        }
    }

    /// Records what compiling the archetype of `found` gave (its entity paths, problems and
    /// references), and makes its new version when neither its file nor its values have errors.
    fn accept_compiled(
        &mut self,
        (is_abstract, extends): (bool, Vec<String>),
        resolved: ResolvedTree,
        depth: usize,
        compiled: Compiled,
        found: &mut Findings,
    ) -> Status {
        let Compiled {
            compiled,
            problems,
            new_nodes,
            references,
        } = compiled;
        found.references = references;
        let slot = &mut self.slots[found.id.0 as usize];
        for path in &new_nodes {
            let node = intern_node(slot, path);
            debug_assert_eq!(slot.node_paths.len() as u32, node + 1);
        }
        let mut hard = compiled.is_none() && !is_abstract;
        for problem in problems {
            let diagnostic = self.place_compile_problem(&found.name, problem);
            hard |= diagnostic.is_error();
            found.problems.push(diagnostic);
        }
        let source = &self.sources[&found.name];
        if source.has_errors() || hard {
            return Status::Errors;
        }
        found.new_archetype = Some(Arc::new(Archetype {
            id: found.id,
            name: found.name.clone(),
            file: source.file.clone(),
            is_abstract,
            extends,
            resolved,
            depth,
            compiled,
        }));
        Status::Ready
    }

    /// The resolved tree the archetype `name` keeps: `resolved` itself when `keep` (others
    /// build on it), else a tree built again when it is read, from the file's text and the
    /// trees of the archetypes it names (in effect now: they are what it resolved from).
    fn tree_of(
        &self,
        name: &Arc<str>,
        summary: &DocSummary,
        (resolved, hash): (Option<Arc<ResolvedEntity>>, TreeHash),
        keep: bool,
    ) -> Option<ResolvedTree> {
        let text = self.sources.get(name).and_then(|s| s.text.clone());
        let Some(text) = text.filter(|_| !keep) else {
            // A tree is dropped only where it can be built again; `None` is never reached.
            return Some(ResolvedTree::kept(resolved?, hash));
        };
        let deps = (summary.current().all().iter())
            .filter_map(|dep| {
                let slot = &self.slots[self.ids.get(dep.as_str())?.0 as usize];
                let current = slot.current.as_ref()?;
                Some((
                    slot.name.clone(),
                    current.resolved.arc().clone(),
                    current.depth,
                ))
            })
            .collect();
        let recipe = TreeRecipe {
            name: name.clone(),
            text,
            registry: self.registry.clone(),
            max_depth: self.options.limits.max_depth,
            max_children_depth: self.options.limits.max_children_depth,
            renames: summary.mapped.is_some().then(|| self.renames.clone()),
            deps,
        };
        Some(ResolvedTree::rebuildable(resolved, recipe, hash))
    }

    /// Puts `new` (when there is one) in effect in the slot `id` of `name`, a change when it
    /// differs from what was; the slot has a file, so it is no longer deleted.
    fn put_in_effect(
        &mut self,
        id: ArchetypeId,
        name: &Arc<str>,
        new: Option<Arc<Archetype>>,
        update: &mut LibraryUpdate,
    ) {
        let slot = &mut self.slots[id.0 as usize];
        // A file that came back broken changes nothing in effect, but it is no longer deleted,
        // so instances are not orphans; they keep the last good version.
        let was_deleted = std::mem::replace(&mut slot.deleted, false);
        let Some(mut new) = new else {
            return;
        };
        let changed = match &slot.current {
            None => true,
            Some(old) => {
                was_deleted
                    || !old.resolved.same_as(&new.resolved)
                    || old.is_abstract != new.is_abstract
            }
        };
        // Compared: a tree that can be built again is not kept.
        if let Some(new) = Arc::get_mut(&mut new) {
            new.resolved.release();
        }
        if changed {
            update.changes.push(ArchetypeChange {
                id,
                name: name.clone(),
                old: slot.current.clone(),
                new: Some(new.clone()),
            });
        }
        slot.current = Some(new);
    }

    /// Adds the current problems of the files and archetypes of `names` to `errors`, then sorts
    /// them and drops duplicates.
    fn report_errors(&self, names: &[Arc<str>], errors: &mut Vec<Diagnostic>) {
        for name in names {
            if let Some(source) = self.sources.get(name) {
                errors.extend(source.problems.iter().cloned());
                errors.extend(source.name_problems.iter().cloned());
            }
            if let Some(state) = self.states.get(name) {
                errors.extend(state.problems.iter().cloned());
            }
        }
        sort_and_dedup(errors);
    }

    /// What can be found in an archetype held back by a broken `dependency`: the problems of
    /// its own values, checked as partial values, and a note that says the check stopped
    /// short and why (see [`partial_check`](crate::archetype::partial_check)).
    /// Also returns the archetype names its values name.
    fn findings_despite(&self, name: &str, dependency: &str) -> (Vec<Diagnostic>, Vec<Arc<str>>) {
        let Some(source) = self.sources.get(name) else {
            return (Vec::new(), Vec::new());
        };
        let Some(doc) = self.current_doc(name) else {
            return (Vec::new(), Vec::new());
        };
        let own = own_values(&doc.root);
        let context = self.reference_targets().context();
        let problems = context.install(|| check_partial(&own, &self.registry));
        let mut found: Vec<Diagnostic> = problems
            .into_iter()
            .map(|problem| self.place_compile_problem(name, problem))
            .collect();
        let broken_through = |held: &str| match self.states.get(held).map(|s| &s.status) {
            Some(Status::Dependency(next)) => Some(next.clone()),
            _ => None,
        };
        let note = crate::archetype::file::DocProblem {
            path: where_named(&doc.extends, &doc.root, dependency),
            at_key: false,
            diagnostic: not_fully_checked(dependency, broken_through),
        };
        found.push(source.place(note, name));
        (found, context.take_named())
    }

    /// The one error of an inheritance cycle, and the member it belongs to: placed at the
    /// link of the member first in name order, in its file, with every member's link
    /// (`extends` entry or child's `archetype`) labelled in that member's file.
    fn cycle_diagnostic(&self, cycle: &Cycle) -> Option<(Arc<str>, Diagnostic)> {
        let first = cycle.links.first()?;
        let (owner, source) = self.sources.get_key_value(first.from.as_str())?;
        let problem = crate::archetype::file::DocProblem {
            path: first.path.clone(),
            at_key: false,
            diagnostic: Diagnostic::error(
                DiagnosticCode::InheritanceCycle,
                format!("inheritance cycle: {}", cycle.names()),
            ),
        };
        let mut diagnostic = source.place(problem, owner);
        for link in &cycle.links {
            let Some(source) = self.sources.get(link.from.as_str()) else {
                continue;
            };
            let (from, to) = (quoted(&link.from), quoted(&link.to));
            let label = match link.child() {
                None => format!("{from} extends {to} here"),
                Some(child) => {
                    format!(
                        "{from}'s child {} is an instance of {to} here",
                        quoted(&child)
                    )
                }
            };
            let mut related = Related::new(source.file.clone(), label);
            if let Some((position, span)) = source.locate(&link.path, false) {
                related.position = Some(position);
                related.span = Some(span);
            }
            diagnostic.related.push(related);
        }
        Some((owner.clone(), diagnostic))
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

    fn place_compile_problem(&self, name: &str, problem: CompileProblem) -> Diagnostic {
        let severity = if problem.unknown_field {
            self.options.unknown_fields
        } else {
            problem.severity
        };
        // A field missing from a value an abstract parent left partial is the concrete
        // archetype's to complete: report it in its own file (at its own value of the
        // component, or else at its `extends`).
        let missing = problem.missing_field;
        let mut diagnostic = Diagnostic::error(problem.code, problem.message)
            .with_severity(severity)
            .with_archetype(name)
            .with_component(problem.component.to_string())
            .with_field(problem.field.clone())
            .with_suggestion(problem.suggestion);
        let docs = |n: &str| self.current_doc(n);
        let node: Vec<&str> = problem.node.iter().map(|n| &**n).collect();
        let written = problem.written.as_ref().unwrap_or(&problem.field);
        let found = supplier(&docs, name, &node, &problem.component, written.segments());
        let found = match found {
            Some(found) if missing && found.archetype != name => {
                let own_docs = |n: &str| if n == name { docs(n) } else { None };
                let own = supplier(&own_docs, name, &node, &problem.component, &[]);
                Some(own.unwrap_or(crate::archetype::resolver::Supplier {
                    archetype: name.to_string(),
                    path: FieldPath::root().key(crate::archetype::file::keys::EXTENDS),
                }))
            }
            other => other,
        };
        match found.and_then(|f| Some((self.sources.get(f.archetype.as_str())?, f.path))) {
            Some((source, path)) => {
                diagnostic.file = Some(source.file.clone());
                source.locate_into(
                    &mut diagnostic,
                    &path,
                    problem.unknown_field || problem.at_key,
                );
            }
            None => diagnostic.file = self.sources.get(name).map(|s| s.file.clone()),
        }
        diagnostic
    }

    /// Gathers the diagnostics of the archetypes `names` (those a rebuild decided) again, then
    /// the library's: the others' have not changed.
    fn collect_diagnostics(&mut self, names: &[Arc<str>]) {
        for name in names {
            let mut found = Vec::new();
            if let Some(source) = self.sources.get(name) {
                found.extend(source.problems.iter().cloned());
                found.extend(source.name_problems.iter().cloned());
                if let Some(state) = self.states.get(name) {
                    found.extend(state.problems.iter().cloned());
                }
            }
            if found.is_empty() {
                self.diagnosed.remove(name);
            } else {
                self.diagnosed.insert(name.clone(), found);
            }
        }
        let mut all = self.scan_problems.clone();
        all.extend(self.diagnosed.values().flatten().cloned());
        sort_and_dedup(&mut all);
        self.diagnostics = all;
    }

    /// The archetype `name` if it can be instantiated now (by spawning, or by a scene), or why
    /// not: unknown (with a suggestion), deleted, without a version free of errors, abstract.
    #[inline]
    pub(crate) fn spawnable(&self, name: &str) -> Result<&Arc<Archetype>, SpawnError> {
        // Spawns mostly repeat a name: the archetype found last is compared first. (A live
        // archetype's name is no former name, so that comes before the renames.)
        if let Some(archetype) = self.last_spawnable(name) {
            return Ok(archetype);
        }
        self.spawnable_by_name(name)
    }

    /// [`spawnable`](Self::spawnable) past the archetype found last, kept out of it so the
    /// common spawn stays small enough to inline.
    fn spawnable_by_name(&self, name: &str) -> Result<&Arc<Archetype>, SpawnError> {
        // A former name (`formerly`) stands for the archetype under its current one: names in
        // saved component values (a spawner's archetype) keep working after a rename.
        let name = self.renamed(name).unwrap_or(name);
        if let Some(archetype) = self.last_spawnable(name) {
            return Ok(archetype);
        }
        let Some(&id) = self.ids.get(name) else {
            return Err(self.unknown_archetype(name));
        };
        let archetype = self.spawnable_slot(id, name)?;
        if self.last_spawnable.load(Ordering::Relaxed) != id.0 {
            self.last_spawnable.store(id.0, Ordering::Relaxed);
        }
        Ok(archetype)
    }

    /// The archetype `spawnable` found last, if it is called `name` and can still be spawned.
    /// (The slot of a name is the one `ids` gives it: a slot keeps its name unless it moves
    /// to a new one, and a moved slot no longer answers to the old.)
    #[inline]
    fn last_spawnable(&self, name: &str) -> Option<&Arc<Archetype>> {
        let slot = self
            .slots
            .get(self.last_spawnable.load(Ordering::Relaxed) as usize)?;
        if slot.deleted || *slot.name != *name {
            return None;
        }
        slot.current
            .as_ref()
            .filter(|archetype| !archetype.is_abstract)
    }

    /// The error for spawning `name`, which names no archetype (with a suggestion).
    #[cold]
    fn unknown_archetype(&self, name: &str) -> SpawnError {
        SpawnError::UnknownArchetype {
            name: name.to_string(),
            // `enemies/goblin.json`, `enemies\goblin`: the naming rules know the fix.
            suggestion: check_name(name)
                .err()
                .and_then(|problem| problem.suggestion)
                .filter(|fixed| self.ids.contains_key(fixed.as_str()))
                .or_else(|| did_you_mean(name, self.names())),
        }
    }

    /// [`spawnable`](Self::spawnable) for an archetype known by its ID (`name` is its name).
    #[inline]
    fn spawnable_slot(&self, id: ArchetypeId, name: &str) -> Result<&Arc<Archetype>, SpawnError> {
        let slot = &self.slots[id.0 as usize];
        match &slot.current {
            Some(archetype) if !slot.deleted && !archetype.is_abstract => Ok(archetype),
            _ => Err(self.unspawnable(slot, name)),
        }
    }

    /// Why the archetype in `slot` (called `name`) cannot be spawned: deleted, without a
    /// version free of errors, or abstract.
    #[cold]
    fn unspawnable(&self, slot: &Slot, name: &str) -> SpawnError {
        let name = name.to_string();
        if slot.deleted {
            return SpawnError::Deleted { name };
        }
        let Some(archetype) = &slot.current else {
            let reason = match self.states.get(name.as_str()).map(|s| &s.status) {
                Some(Status::Dependency(dep)) => format!("it depends on `{dep}`, which has errors"),
                Some(Status::Cycle(names)) => {
                    format!("it is part of an inheritance cycle ({names})")
                }
                _ => "its file has errors".to_string(),
            };
            return SpawnError::Unavailable { name, reason };
        };
        debug_assert!(archetype.is_abstract);
        SpawnError::Abstract { name }
    }

    /// Spawns an instance of the archetype `name` (root and children) into `world`.
    ///
    /// Every spawned entity gets a fresh [`StableId`](crate::StableId) and an
    /// [`ArchetypeInstance`] marker.
    ///
    /// # Errors
    /// If there is no such archetype (with a suggestion), it is abstract, or it never loaded
    /// without errors.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, StableId};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Name": "goblin" } }"#));
    /// let mut world = hecs::World::new();
    /// let goblin = library.spawn(&mut world, "enemies/goblin")?;
    /// assert!(world.get::<&StableId>(goblin).is_ok()); // so scenes can save it
    ///
    /// let error = library.spawn(&mut world, "enemies/gobln").unwrap_err();
    /// assert_eq!(error.to_string(), "unknown archetype `enemies/gobln`; did you mean `enemies/goblin`?");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn spawn(&self, world: &mut World, name: &str) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        match &archetype.compiled {
            Some(compiled) => compiled
                .spawn(world, &self.registry, None, &self.rng)
                .map_err(|error| SpawnError::internal(name, error)),
            None => Err(SpawnError::Abstract {
                name: name.to_string(),
            }),
        }
    }

    /// Spawns an instance of the archetype `name` through a [`hecs::CommandBuffer`], for a
    /// system that spawns while it iterates the world: the instance's entities are reserved
    /// now (so the returned root can be stored in components at once) and get their
    /// components, as [`spawn`](Self::spawn) gives them, when the buffer runs
    /// (`commands.run_on(&mut world)`).
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn); nothing is recorded for an instance that fails but the release
    /// of its reserved handles.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, Name, StableId};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("spawner.json", Some(r#"{ "components": { "Name": "spawner" } }"#));
    /// # library.set_source("imp.json", Some(r#"{ "components": { "Name": "imp" } }"#));
    /// let mut world = hecs::World::new();
    /// library.spawn_many(&mut world, "spawner", 3)?;
    /// let mut commands = hecs::CommandBuffer::new();
    /// for name in world.query::<&Name>().iter() {
    ///     if name.0 == "spawner" {
    ///         library.spawn_deferred(&world, &mut commands, "imp")?;
    ///     }
    /// }
    /// commands.run_on(&mut world);
    /// assert_eq!(world.query::<&Name>().iter().filter(|n| n.0 == "imp").count(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn spawn_deferred(
        &self,
        world: &World,
        commands: &mut hecs::CommandBuffer,
        name: &str,
    ) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        match &archetype.compiled {
            Some(compiled) => compiled
                .spawn_deferred(world, commands, &self.registry, &self.rng)
                .map_err(|error| SpawnError::internal(name, error)),
            None => Err(SpawnError::Abstract {
                name: name.to_string(),
            }),
        }
    }

    /// Spawns an instance of the archetype an [`ArchetypeRef`] names (a spawner's, a weapon's
    /// projectile). A reference this library read (from an archetype file, a scene, overrides)
    /// holds the archetype's ID, so no name is looked up; any other is spawned by its name.
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_ref(
        &self,
        world: &mut World,
        archetype: &ArchetypeRef,
    ) -> Result<Entity, SpawnError> {
        let name = archetype.name();
        // An ID is this library's only if its slot has the name (IDs are never reused).
        let ours = archetype.id().filter(|id| {
            self.slots
                .get(id.0 as usize)
                .is_some_and(|slot| &*slot.name == name)
        });
        let Some(id) = ours else {
            return self.spawn(world, name);
        };
        let archetype = self.spawnable_slot(id, name)?;
        match &archetype.compiled {
            Some(compiled) => compiled
                .spawn(world, &self.registry, None, &self.rng)
                .map_err(|error| SpawnError::internal(name, error)),
            None => Err(SpawnError::Abstract {
                name: name.to_string(),
            }),
        }
    }

    /// Spawns an instance with per-entity overrides: `overrides` maps component names to merge
    /// patches applied on top of the archetype's root for this one entity (`null` leaves a
    /// component out). Which fields they set is recorded in the entity's [`ArchetypeInstance`]
    /// marker ([`instance_overrides`](Self::instance_overrides)), so hot reload never
    /// overwrites them.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, Name};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    /// # struct Health { current: f32, max: f32 }
    /// # let mut registry = ComponentRegistry::new();
    /// # registry.register::<Health>()?;
    /// # let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Health": { "current": 10, "max": 10 } } }"#));
    /// let mut world = hecs::World::new();
    /// let boss = library.spawn_with(
    ///     &mut world,
    ///     "enemies/goblin",
    ///     &serde_json::json!({ "Health": { "max": 500 }, "Name": "Grukk" }),
    /// )?;
    /// assert_eq!(*world.get::<&Health>(boss)?, Health { current: 10.0, max: 500.0 });
    /// assert_eq!(world.get::<&Name>(boss)?.as_str(), "Grukk");
    ///
    /// // A mistake in an override is an error naming the field, not a silent default.
    /// let error = library
    ///     .spawn_with(&mut world, "enemies/goblin", &serde_json::json!({ "Health": { "max": "lots" } }))
    ///     .unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "invalid overrides for `enemies/goblin`: invalid value for `Health.max`: invalid type: string \"lots\", expected f32"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn), and if an override names an unknown component or gives a
    /// value the component cannot take (the error says which field).
    pub fn spawn_with(
        &self,
        world: &mut World,
        name: &str,
        overrides: &Value,
    ) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        let Some(compiled) = &archetype.compiled else {
            return Err(SpawnError::Abstract {
                name: name.to_string(),
            });
        };
        let context = self.reference_targets().context();
        let checked = context
            .install(|| {
                compiled.check_overrides(
                    &self.registry,
                    &archetype.resolved,
                    overrides,
                    &self.override_shapes,
                )
            })
            .map_err(|problem| SpawnError::InvalidOverride {
                name: name.to_string(),
                component: problem.component,
                field: problem.field,
                message: problem.message,
                suggestion: problem.suggestion,
            })?;
        compiled
            .spawn(world, &self.registry, Some(&checked), &self.rng)
            .map_err(|error| SpawnError::internal(name, error))
    }

    /// Spawns an instance of `name` with typed components of the caller's on its root: each
    /// replaces the archetype's value of that type, or adds a component the archetype does not
    /// have (`(Transform::from_translation(at),)` spawns a goblin at a place). No JSON is read.
    ///
    /// The registered components given are recorded as the instance's overrides
    /// ([`instance_overrides`](Self::instance_overrides)), whole: hot reload never overwrites
    /// them (an archetype edit of a goblin's `Transform` does not move goblins spawned at their
    /// places), and a scene saves them as the instance's differences from its archetype.
    ///
    /// For a single-entity archetype whose values do not vary per spawn, the first spawn with a
    /// bundle type makes a template for it (the archetype's other values, the marker naming
    /// the overrides), and every spawn after is one entity spawned from it with the bundle:
    /// the cost of a plain [`spawn`](Self::spawn).
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, Transform};
    /// # let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
    /// # library.set_source("enemies/goblin.json", Some(r#"{ "components": { "Name": "goblin", "Transform": {} } }"#));
    /// let mut world = hecs::World::new();
    /// let at = glam::Vec3::new(4.0, 0.0, 2.0);
    /// let goblin = library.spawn_with_bundle(&mut world, "enemies/goblin", (Transform::from_translation(at),))?;
    /// assert_eq!(world.get::<&Transform>(goblin)?.translation, at);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_with_bundle<B: hecs::DynamicBundle + 'static>(
        &self,
        world: &mut World,
        name: &str,
        bundle: B,
    ) -> Result<Entity, SpawnError> {
        let archetype = self.spawnable(name)?;
        let Some(compiled) = &archetype.compiled else {
            return Err(SpawnError::Abstract {
                name: name.to_string(),
            });
        };
        // The common case (a single entity, nothing varying): a template made once per bundle
        // type (the archetype's values the bundle does not replace, the marker, the override
        // shape), spawned with the bundle and a fresh stable ID as one entity.
        let made;
        let template = match compiled.recent_bundle_template(TypeId::of::<B>()) {
            Some(template) => template,
            None => {
                made = compiled.bundle_template(
                    &self.registry,
                    TypeId::of::<B>(),
                    &bundle,
                    || self.bundle_components(&bundle),
                    |shape| self.bundle_overrides(shape),
                );
                made.as_deref()
            }
        };
        let mut bundle = bundle;
        if let Some(template) = template {
            // Handed back when this value's types are not its type's first value's (a
            // `&BuiltEntityClone` bundle, say): spawned the general way below.
            match template.spawn(world, || self.rng.next_id(), bundle) {
                Ok(entity) => return Ok(entity),
                Err(back) => bundle = back,
            }
        }
        let components: Vec<ComponentId> = sorted(bundle.with_ids(|types| {
            (types.iter())
                .filter_map(|type_id| self.registry.id_of_type_id(*type_id))
                .collect()
        }));
        // What the library sets itself is replaced, but is not the instance's to override.
        let shape: Vec<ComponentId> = (components.iter().copied())
            .filter(|id| !self.registry.is_managed(*id))
            .collect();
        let overrides = self.bundle_overrides(&shape);
        let spawned = compiled.spawn_simple_with(
            world,
            &self.registry,
            &self.rng,
            bundle,
            &components,
            overrides,
        );
        match spawned {
            Ok(entity) => entity.map_err(|error| SpawnError::internal(name, error)),
            // Children or references: spawn the instance, then give its root the components.
            Err(bundle) => {
                let entity = compiled
                    .spawn(world, &self.registry, None, &self.rng)
                    .map_err(|error| SpawnError::internal(name, error))?;
                let mut builder = hecs::EntityBuilder::new();
                builder.add_bundle(bundle);
                let marker = world
                    .get::<&ArchetypeInstance>(entity)
                    .map(|marker| *marker);
                if let Ok(marker) = marker {
                    builder.add(ArchetypeInstance {
                        overrides,
                        ..marker
                    });
                }
                // The entity was just spawned: it is there to take the components.
                let _ = world.insert(entity, builder.build());
                Ok(entity)
            }
        }
    }

    /// The registered components of `bundle`, sorted; `None` if one is managed by the library.
    fn bundle_components(&self, bundle: &impl hecs::DynamicBundle) -> Option<Vec<ComponentId>> {
        let components: Vec<ComponentId> = bundle.with_ids(|types| {
            (types.iter())
                .filter_map(|type_id| self.registry.id_of_type_id(*type_id))
                .collect()
        });
        let managed = components.iter().any(|id| self.registry.is_managed(*id));
        (!managed).then(|| sorted(components))
    }

    /// The override shape setting each of `shape` (sorted) whole, `NONE` for none.
    fn bundle_overrides(&self, shape: &[ComponentId]) -> OverridesId {
        let name = |id| self.registry.name(id).to_string();
        match shape.is_empty() {
            true => OverridesId::NONE,
            false => self.override_shapes.whole(shape, name),
        }
    }

    /// Spawns `count` instances of `name` at once (as one column batch when the archetype is a
    /// single entity without references: the fastest way to fill a world).
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_many(
        &self,
        world: &mut World,
        name: &str,
        count: usize,
    ) -> Result<Vec<Entity>, SpawnError> {
        let archetype = self.spawnable(name)?;
        let Some(compiled) = &archetype.compiled else {
            return Err(SpawnError::Abstract {
                name: name.to_string(),
            });
        };
        let count = u32::try_from(count).map_err(|_| SpawnError::TooMany { count })?;
        compiled
            .spawn_many(world, &self.registry, count, &self.rng)
            .map_err(|error| SpawnError::internal(name, error))
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

fn sorted(mut ids: Vec<ComponentId>) -> Vec<ComponentId> {
    ids.sort_unstable();
    ids
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

/// The file of an archetype a rebuild resolves again, which the job of a leaf takes.
struct RebuildDoc(Mutex<Option<Arc<ArchetypeDoc>>>);

impl RebuildDoc {
    fn new(doc: Arc<ArchetypeDoc>) -> Self {
        RebuildDoc(Mutex::new(Some(doc)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<ArchetypeDoc>>> {
        // Changed by whole assignments only, which leave it whole if a panic poisons it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The file, unless a leaf's job took it.
    fn get(&self) -> Option<Arc<ArchetypeDoc>> {
        self.lock().clone()
    }

    fn take(&self) -> Option<Arc<ArchetypeDoc>> {
        self.lock().take()
    }

    fn put_back(&self, doc: Arc<ArchetypeDoc>) {
        *self.lock() = Some(doc);
    }
}

/// Drops `items` on every core (up to 8) when there are at least [`PARALLEL_MIN_ITEMS`]:
/// freeing a library's worth of parsed documents is a walk of every tree in them.
fn drop_on_every_core<T: Send>(mut items: Vec<T>) {
    let threads = worker_threads();
    if threads < 2 || items.len() < PARALLEL_MIN_ITEMS {
        return;
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        while items.len() > chunk {
            let part = items.split_off(items.len() - chunk);
            scope.spawn(move || drop(part));
        }
        drop(std::mem::take(&mut items));
    });
}

/// How many threads a load (or a big scene save) works on: every core, up to 8.
pub(crate) fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Below this many files (or archetypes) a load works on one thread: starting threads would
/// cost more than it saves.
const PARALLEL_MIN_ITEMS: usize = 256;

/// What [`ArchetypeLibrary::resolve_and_compile`] found: each archetype's outcome, what was
/// compiled, and every inheritance cycle.
struct Resolution {
    outcomes: FxHashMap<Arc<str>, ResolveOutcome>,
    compiled: FxHashMap<Arc<str>, CompileDone>,
    cycles: Vec<Cycle>,
}

/// What resolving one archetype gave, its depth, and the operators it settled with nothing to
/// work on. A tree resolved and dropped on another core (see [`LeafDone::tree`]) is `Ok(None)`;
/// what compiling it gave is then among the compiled ones.
type ResolveOutcome = (
    Result<Option<Arc<ResolvedEntity>>, Failure>,
    usize,
    Vec<ResolveWarning>,
);

/// The trees and depths of every archetype the file of `summary` names, when all of them are
/// known to `resolver` without resolving anything.
fn known_dependencies<'a, L: Fn(&str) -> Lookup>(
    resolver: &Resolver<'a, L>,
    summary: &DocSummary,
) -> Option<Box<[DependencyTree]>> {
    (summary.current().all().iter())
        .map(|dep| {
            let (tree, depth) = resolver.known(dep)?;
            Some((Arc::from(dep.as_str()), tree, depth))
        })
        .collect()
}

/// Resolves `name` on the rebuild's thread: its outcome, depth and unused operators.
fn resolve_here<'a, L: Fn(&str) -> Lookup>(
    resolver: &mut Resolver<'a, L>,
    name: &str,
) -> ResolveOutcome {
    let outcome = resolver.resolve(name).map(Some);
    let depth = resolver.depth(name).unwrap_or(1);
    (outcome, depth, resolver.take_unused(name))
}

/// `touched` and every archetype that depends on one of them, directly or not.
fn affected_by(touched: BTreeSet<Arc<str>>, dependents: &Dependents) -> FxHashSet<Arc<str>> {
    let mut affected: FxHashSet<Arc<str>> = FxHashSet::default();
    let mut queue: Vec<Arc<str>> = touched.into_iter().collect();
    while let Some(name) = queue.pop() {
        if affected.insert(name.clone()) {
            if let Some(list) = dependents.get(&*name) {
                queue.extend(list.iter().cloned());
            }
        }
    }
    affected
}

/// What [`ArchetypeLibrary::rebuild`] carries from resolving to deciding, archetype by
/// archetype, what each becomes.
struct Decisions<'a> {
    /// Each archetype's dependencies.
    deps: &'a DependencyLists,
    /// For each name, the archetypes that depend on it: an archetype none depends on keeps no
    /// resolved tree ([`ResolvedTree`]).
    dependents: &'a Dependents,
    /// What resolving gave, taken as each archetype is decided.
    outcomes: FxHashMap<Arc<str>, ResolveOutcome>,
    /// What other threads compiled, taken as each archetype is decided.
    precompiled: FxHashMap<Arc<str>, CompileDone>,
    /// Each inheritance cycle's error, by the member whose file it goes in.
    cycle_errors: FxHashMap<Arc<str>, Vec<Diagnostic>>,
    /// Each cycle member's cycle (`a -> b -> a`).
    cycle_of: FxHashMap<&'a str, String>,
    /// What the rebuild changed and found so far.
    update: LibraryUpdate,
}

/// What deciding one archetype found: its problems, the names its values name, and its new
/// version when it has one.
struct Findings {
    name: Arc<str>,
    id: ArchetypeId,
    problems: Vec<Diagnostic>,
    references: Vec<Arc<str>>,
    new_archetype: Option<Arc<Archetype>>,
}

/// Compiles `resolved` without changing `slot`: entity paths the slot does not know yet get the
/// next numbers, and are returned for [`intern_node`] to record in the same order. An abstract
/// archetype is not compiled, only checked as far as its partial values go.
fn compile_with_slot(
    slot: &Slot,
    id: ArchetypeId,
    is_abstract: bool,
    resolved: &ResolvedEntity,
    registry: &ComponentRegistry,
    targets: &ReferenceTargets,
) -> Compiled {
    let context = targets.context();
    if is_abstract {
        let problems = context.install(|| check_partial(resolved, registry));
        return Compiled {
            compiled: None,
            problems,
            new_nodes: Vec::new(),
            references: context.take_named(),
        };
    }
    let mut new_nodes: Vec<Arc<str>> = Vec::new();
    let mut new_ids: FxHashMap<Arc<str>, u32> = FxHashMap::default();
    let mut intern = |path: &str| -> u32 {
        if let Some(node) = node_number(slot, path).or_else(|| new_ids.get(path).copied()) {
            return node;
        }
        let node = (slot.node_paths.len() + new_nodes.len()) as u32;
        let path: Arc<str> = Arc::from(path);
        new_nodes.push(path.clone());
        new_ids.insert(path, node);
        node
    };
    let (compiled, problems) = context.install(|| compile(id, resolved, registry, &mut intern));
    Compiled {
        compiled,
        problems,
        new_nodes,
        references: context.take_named(),
    }
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

/// `affected` ordered so that every archetype comes after the affected archetypes it depends
/// on (cycles, already reported as errors, are broken arbitrarily).
fn dependency_order(
    sorted: &[Arc<str>],
    affected: &FxHashSet<Arc<str>>,
    deps: &DependencyLists,
) -> Vec<Arc<str>> {
    let mut seen = FxHashSet::default();
    let mut out = Vec::with_capacity(sorted.len());
    // Depth first, each archetype after its dependencies, with a stack of our own (archetype,
    // next dependency to visit): a chain of thousands of files must not overflow the call stack.
    let mut stack: Vec<(Arc<str>, usize)> = Vec::new();
    for name in sorted {
        if !seen.insert(name.clone()) {
            continue;
        }
        stack.push((name.clone(), 0));
        while let Some((current, next)) = stack.last_mut() {
            match deps.get(&**current).and_then(|list| list.get(*next)) {
                Some(dep) => {
                    *next += 1;
                    if let Some(dep) = affected.get(dep.as_str()) {
                        if seen.insert(dep.clone()) {
                            stack.push((dep.clone(), 0));
                        }
                    }
                }
                None => {
                    out.push(current.clone());
                    stack.pop();
                }
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every diagnostic of `library`, as printed.
    fn messages(library: &ArchetypeLibrary) -> Vec<String> {
        library
            .diagnostics()
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    fn library(files: &[(&str, &str)]) -> ArchetypeLibrary {
        let mut library =
            ArchetypeLibrary::empty("root", ComponentRegistry::new(), LoadOptions::default());
        library.set_sources(files.iter().map(|(path, text)| (*path, Some(*text))));
        library
    }

    /// An archetype with a fractional `$range` keeps its one spawn template, and the 256
    /// outcomes of the range side by side, each the size of the component: spawns clone the
    /// template with a rolled outcome in its place (there was a template per outcome, each a
    /// copy of every component: a gigabyte for 10,000 such archetypes spawned once).
    #[test]
    fn a_varied_archetype_keeps_its_outcomes_side_by_side_and_no_template_per_outcome() {
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Speed {
            value: f32,
        }
        let mut registry = ComponentRegistry::new();
        registry.register::<Speed>().unwrap();
        let mut library = ArchetypeLibrary::empty("root", registry, LoadOptions::default());
        library.set_source(
            "runner.json",
            Some(r#"{ "components": { "Name": "runner", "Speed": { "value": { "$range": [0.0, 1.0] } } } }"#),
        );
        let mut world = World::new();
        let speeds: Vec<f32> = (0..2000)
            .map(|_| {
                let runner = library.spawn(&mut world, "runner").unwrap();
                world.get::<&Speed>(runner).unwrap().value
            })
            .collect();
        let distinct: BTreeSet<u32> = speeds.iter().map(|speed| speed.to_bits()).collect();
        assert!(distinct.len() > 200, "{} distinct speeds", distinct.len());
        assert!(speeds.iter().all(|speed| (0.0..=1.0).contains(speed)));
        let runner = library.get("runner").unwrap();
        let node = &runner.compiled.as_ref().unwrap().nodes[0];
        let (_, varied) = &node.varied[0];
        assert_eq!(varied.kept(), (256, 256 * std::mem::size_of::<Speed>()));
    }

    #[test]
    fn documents_are_not_kept_after_a_rebuild() {
        let library = library(&[("base.json", r#"{ "components": { "Name": "x" } }"#)]);
        assert!(library.sources.values().all(|s| s.fresh.is_none()));
        assert!(library.rebuild_docs.is_empty());
        assert!(library.sources.values().all(|s| s.summary.is_some()));
    }

    #[test]
    fn a_document_parsed_again_places_provenance_as_the_first_read() {
        let base = "{\n  \"abstract\": true,\n  \"components\": { \"Name\": \"x\" }\n}";
        let library = library(&[
            ("base.json", base),
            ("goblin.json", r#"{ "extends": ["base"] }"#),
        ]);
        let (file, position) = library
            .provenance("goblin", "", "Name", &FieldPath::root())
            .unwrap();
        assert_eq!(file, Path::new("root").join("base.json"));
        let position = position.unwrap();
        assert_eq!((position.line, position.column), (3, 27));
        assert_eq!(library.declared("base"), Some((true, &[][..])));
        assert_eq!(
            library.declared("goblin"),
            Some((false, &["base".to_string()][..]))
        );
    }

    #[test]
    fn declared_parents_are_current_names_after_a_rename() {
        let library = library(&[
            (
                "monster.json",
                r#"{ "formerly": ["beast"], "abstract": true }"#,
            ),
            ("goblin.json", r#"{ "extends": ["beast"] }"#),
        ]);
        assert_eq!(
            library.declared("goblin"),
            Some((false, &["monster".to_string()][..]))
        );
        let doc = library.current_doc("goblin").unwrap();
        assert_eq!(doc.extends, ["monster"]);
        assert!(library.get("goblin").is_some());
    }

    const BASE: &str = r#"{ "abstract": true, "components": { "Name": "base" } }"#;

    #[test]
    fn a_leaf_tree_is_built_on_first_read_as_it_was_resolved() {
        let goblin = r#"{ "extends": ["base"], "children": { "hat": { "components": { "Name": "hat" } } } }"#;
        let lazy = library(&[("base.json", BASE), ("goblin.json", goblin)]);
        // Here something builds on the goblin, so its tree is kept as resolved.
        let kept = library(&[
            ("base.json", BASE),
            ("goblin.json", goblin),
            ("chief.json", r#"{ "extends": ["goblin"] }"#),
        ]);
        let (lazy, kept) = (lazy.get("goblin").unwrap(), kept.get("goblin").unwrap());
        assert!(!lazy.resolved.is_built());
        assert!(kept.resolved.is_built());
        assert_eq!(lazy.resolved(), kept.resolved());
        assert!(lazy.resolved.is_built());
        assert_eq!(lazy.resolved().components["Name"], "base");
    }

    #[test]
    fn an_edit_to_a_parent_changes_a_leaf_built_on_first_read() {
        let mut library = library(&[
            ("base.json", BASE),
            ("goblin.json", r#"{ "extends": ["base"] }"#),
        ]);
        let before = library.get("goblin").unwrap().clone();
        let update = library.set_source(
            "base.json",
            Some(r#"{ "abstract": true, "components": { "Name": "changed" } }"#),
        );
        let changed: Vec<&str> = update.changes.iter().map(|c| &*c.name).collect();
        assert_eq!(changed, ["base", "goblin"]);
        let goblin = library.get("goblin").unwrap();
        assert!(!goblin.resolved.is_built());
        assert_eq!(goblin.resolved().components["Name"], "changed");
        assert_eq!(before.resolved().components["Name"], "base");
    }

    #[test]
    fn an_edit_that_resolves_the_same_is_no_change() {
        let mut library = library(&[
            ("base.json", BASE),
            ("goblin.json", r#"{ "extends": ["base"] }"#),
        ]);
        let update = library.set_source("goblin.json", Some("{\n  \"extends\": [\"base\"]\n}"));
        assert!(update.changes.is_empty());
        let update = library.set_source(
            "goblin.json",
            Some(r#"{ "extends": ["base"], "components": { "Name": "g" } }"#),
        );
        assert_eq!(update.changes.len(), 1);
    }

    #[test]
    fn a_leaf_resolved_as_a_job_is_the_one_resolved_in_order() {
        let goblin = r#"{ "extends": ["BASE"], "components": { "Name": "g" }, "children": { "hat": { "components": { "Name": "hat" } } } }"#;
        // `base` sorts before `goblin`: when the goblin's turn comes its parent is resolved,
        // so it is resolved as a job. `zbase` sorts after it: resolved in order, here.
        let as_job = library(&[
            ("base.json", BASE),
            ("goblin.json", &goblin.replace("BASE", "base")),
        ]);
        let in_order = library(&[
            ("zbase.json", BASE),
            ("goblin.json", &goblin.replace("BASE", "zbase")),
        ]);
        let (as_job, in_order) = (
            as_job.get("goblin").unwrap(),
            in_order.get("goblin").unwrap(),
        );
        // Either way the tree was dropped once compiled (a first load), and builds the same.
        assert!(!as_job.resolved.is_built());
        assert!(!in_order.resolved.is_built());
        assert_eq!(as_job.resolved(), in_order.resolved());
        assert_eq!(as_job.depth, in_order.depth);
        assert_eq!(as_job.resolved().children["hat"].components["Name"], "hat");
    }

    #[test]
    fn a_leaf_that_does_not_resolve_as_a_job_is_resolved_in_order() {
        // `a0` … `a31`: the deepest chain allowed. `a32` sorts after its parent `a31`, so it is
        // sent as a job, where it is one too deep: it is resolved again here, and reported.
        let texts: Vec<(String, String)> = (0..=32)
            .map(|k| {
                let text = match k {
                    0 => r#"{ "components": { "Name": "a" } }"#.to_string(),
                    _ => format!(r#"{{ "extends": "a{}" }}"#, k - 1),
                };
                (format!("a{k}.json"), text)
            })
            .collect();
        let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (&**p, &**t)).collect();
        let library = library(&files);
        let messages = messages(&library);
        let file = Path::new("root").join("a32.json");
        assert_eq!(
            messages,
            [format!(
                "{}:1:14: error[too-deep]: this archetype is built on a chain of more than 32 \
                 archetypes (through `extends` and children's `archetype`); make the chain \
                 shorter",
                file.display()
            )]
        );
        assert!(library.get("a31").is_some());
        assert!(library.get("a32").is_none());
    }

    #[test]
    fn a_leaf_resolved_as_a_job_has_its_problems_placed_in_its_file() {
        // `leaf` sorts after its parent, so it is resolved as a job, which keeps its file for
        // the problems to be placed in.
        let leaf = "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Name\": { \"$mul\": 2 },\n    \"Transform\": { \"speed\": 1 }\n  }\n}";
        let library = library(&[
            ("base.json", r#"{ "abstract": true }"#),
            ("leaf.json", leaf),
        ]);
        let messages = messages(&library);
        let file = Path::new("root").join("leaf.json");
        let file = file.display();
        assert_eq!(
            messages,
            [
                format!(
                    "{file}:4:13: warning[unused-operator]: `$mul` has nothing to scale: nothing \
                     this archetype is built on sets `Name`, and its type gives no default number there, so it \
                     is left out"
                ),
                format!(
                    "{file}:5:20: error[unknown-field]: unknown field `speed` in component \
                     `Transform`"
                ),
            ]
        );
    }

    #[test]
    fn a_leaf_naming_an_old_name_is_built_with_the_current_one() {
        let library = library(&[
            (
                "monster.json",
                r#"{ "formerly": ["beast"], "abstract": true, "components": { "Name": "m" } }"#,
            ),
            ("goblin.json", r#"{ "extends": ["beast"] }"#),
        ]);
        let goblin = library.get("goblin").unwrap();
        assert!(!goblin.resolved.is_built());
        assert_eq!(goblin.resolved().components["Name"], "m");
    }
}
