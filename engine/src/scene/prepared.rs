//! [`PreparedScene`]: a scene loaded off the game thread, committed into the world in one
//! call or in slices.
//!
//! Preparation runs the loader itself ([`load_scene`]) into a private staging world: every
//! parse, decode, reference check and diagnostic is the load's own. It then sorts the staging
//! entities into hecs column batches (see [`PreparedBatch`]). The values that hold references
//! are decoded once handles are reserved: by [`ReservedScene::resolve`] on any thread after
//! [`PreparedScene::reserve`] (see `reserved.rs`), else by the commit. The commit checks the
//! world's stable IDs, the library's versions and the reserved handles ([`Reservation`]), and
//! spawns the batches.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hecs::{Entity, World};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::archetype::read_limited;
use crate::archetype::Archetype;
use crate::archetype::ArchetypeLibrary;
use crate::archetype::{ArchetypeId, ArchetypeInstance};
use crate::component::ComponentRegistry;
use crate::component::StableId;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::scene::commit;
use crate::scene::commit_error::{CommitError, PrepareError};
use crate::scene::load::{load_scene, IdConflict, LoadedScene, SceneError, SceneLoadOptions};
use crate::scene::prepare_progress::PrepareProgress;
use crate::scene::prepared_batch::{BatchContext, BatchError, PreparedBatch};
use crate::scene::reservation::{release_dropped, Reservation};
use crate::scene::reserved::{ReservedScene, ResolvedScene};

/// A scene read, decoded and checked on any thread, ready to be committed into a `World` on
/// the game thread ([`commit`](Self::commit), or [`commit_slice`](Self::commit_slice) to
/// spread it over frames).
///
/// [`prepare`](Self::prepare) needs no world, only the library (shared, read-only): it reports
/// every problem [`load_scene`] reports, with the same message, file, line and column. What
/// only the world can tell is checked at commit: a stable ID already in it (with
/// [`IdConflict::Error`], the same error as `load_scene`'s; with [`IdConflict::Remap`], fresh
/// IDs), and whether an archetype the scene's instances come from was reloaded in between
/// ([`CommitError::Stale`]: prepare again). A failed commit leaves the world as it was.
///
/// The commit reserves handles, decodes the values that hold entity references (references are
/// mapped to the reserved handles; every other value was built during preparation) and spawns
/// hecs column batches of up to [`PreparedScene::BATCH_ENTITIES`] entities. That decoding is
/// the only decoding left on the game thread; [`reserve`](Self::reserve) moves it off too: the
/// game thread reserves the handles, a worker decodes those values
/// ([`ReservedScene::resolve`]), and the game thread commits the [`ResolvedScene`], decoding
/// nothing.
///
/// # Example
/// ```
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, PreparedScene,
///     PrepareProgress, SceneLoadOptions};
/// let mut library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
/// library.set_sources([("crate.json", Some(r#"{ "components": { "Name": "crate" } }"#))]);
/// let scene = br#"{ "format": 2, "entities": [
///     { "id": "00000000000000a1", "archetype": "crate" },
///     { "id": "00000000000000a2", "archetype": "crate", "components": { "Name": "big crate" } }
/// ] }"#;
///
/// // On a worker thread: no world needed.
/// let progress = PrepareProgress::new();
/// let prepared = std::thread::scope(|threads| {
///     let (library, progress) = (&library, progress.clone());
///     threads
///         .spawn(move || {
///             PreparedScene::prepare(scene, None, library, &SceneLoadOptions::default(), &progress)
///         })
///         .join()
///         .expect("the worker panicked")
/// })?;
/// assert_eq!(progress.fraction(), 1.0);
///
/// // On the game thread: one call (or `commit_slice` per frame).
/// let mut world = hecs::World::new();
/// let loaded = prepared.commit(&mut world, &library)?;
/// assert_eq!(loaded.len(), 2);
/// assert_eq!(world.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PreparedScene {
    file: Option<PathBuf>,
    /// The file's bytes, to place a commit-time conflict exactly (the load's own error).
    bytes: Arc<[u8]>,
    options: SceneLoadOptions,
    registry: Arc<ComponentRegistry>,
    /// The archetype versions the instances were built from.
    versions: Vec<(ArchetypeId, Arc<Archetype>)>,
    /// Each entity's stable ID as prepared, by scene index.
    ids: Vec<StableId>,
    /// The scene index of each stable ID.
    id_index: FxHashMap<StableId, u32>,
    /// Batches not committed yet, in commit order (the last is committed first).
    batches: Vec<PreparedBatch>,
    /// The load's report, with staging handles until `report_on_handles`.
    loaded: LoadedScene,
    /// The report's handles are the world's: mapped by `resolve` (off the game thread), else
    /// by the last slice.
    report_on_handles: bool,
    /// Each staging handle's scene index, for the report.
    index_of: Arc<FxHashMap<Entity, u32>>,
    /// Handles reserved in the world (by `reserve` or the first slice), until the last batch is
    /// in.
    reservation: Option<Reservation>,
    /// Why values did not resolve (a bug), reported by the commit.
    unresolved: Option<BatchError>,
    /// Set by the first slice.
    commit: Option<CommitState>,
    /// Every batch is in the world, or the commit was abandoned.
    finished: bool,
}

/// What the commit has done so far.
struct CommitState {
    handles: Arc<[Entity]>,
    ids: Vec<StableId>,
    remapped: FxHashMap<StableId, StableId>,
}

impl std::fmt::Debug for PreparedScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedScene")
            .field("file", &self.file)
            .field("entities", &self.ids.len())
            .field("batches_left", &self.batches.len())
            .field("reserved", &self.reservation.is_some())
            .finish_non_exhaustive()
    }
}

impl PreparedScene {
    /// The most entities a batch holds: a [`commit_slice`](Self::commit_slice) commits whole
    /// batches.
    pub const BATCH_ENTITIES: usize = 1024;

    /// Prepares a scene (JSON or binary) from bytes; `file` names it in errors. Runs on any
    /// thread; `progress` reports how far it is and can cancel it.
    ///
    /// # Errors
    /// [`PrepareError::Scene`]: what [`load_scene`] reports for these bytes (into an empty
    /// world); [`PrepareError::Cancelled`].
    pub fn prepare(
        bytes: &[u8],
        file: Option<&Path>,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
        progress: &PrepareProgress,
    ) -> Result<PreparedScene, PrepareError> {
        let total = bytes.len() as u64;
        progress.set_bytes(0, total);
        check_cancelled(progress)?;
        let mut staging = World::new();
        let loaded = crate::scene::prepare_progress::reporting_to(progress, || {
            load_scene(bytes, file, &mut staging, library, options)
        });
        check_cancelled(progress)?;
        let loaded = loaded?;
        progress.set_bytes(total, total);
        check_cancelled(progress)?;
        let mut prepared = PreparedScene {
            file: file.map(Path::to_path_buf),
            bytes: Arc::from(bytes),
            options: options.clone(),
            registry: library.registry().clone(),
            versions: versions(&staging, library),
            ids: Vec::new(),
            id_index: FxHashMap::default(),
            batches: Vec::new(),
            loaded,
            index_of: Arc::default(),
            reservation: None,
            unresolved: None,
            report_on_handles: false,
            commit: None,
            finished: false,
        };
        prepared.build_batches(&staging, progress)?;
        Ok(prepared)
    }

    /// Reads a scene file (within the size limit) and prepares it; see
    /// [`prepare`](Self::prepare).
    ///
    /// # Errors
    /// As [`prepare`](Self::prepare), and if the file cannot be read.
    pub fn prepare_path(
        path: impl AsRef<Path>,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
        progress: &PrepareProgress,
    ) -> Result<PreparedScene, PrepareError> {
        let path = path.as_ref();
        let bytes = read_limited(path, options.limits.max_scene_bytes).map_err(|diagnostic| {
            SceneError {
                diagnostic: Box::new(diagnostic.with_file(path)),
                entity: None,
                offset: None,
                others: Vec::new(),
            }
        })?;
        PreparedScene::prepare(&bytes, Some(path), library, options, progress)
    }

    /// How many entities the scene has.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the scene has no entity.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many entities are not committed yet.
    pub fn remaining(&self) -> usize {
        self.batches.iter().map(PreparedBatch::len).sum()
    }

    /// Commits the whole scene into `world`. The values that hold entity references are decoded
    /// here, on the calling thread; to decode them on a worker instead, see
    /// [`reserve`](Self::reserve).
    ///
    /// # Errors
    /// See [`CommitError`]; the world is left as it was (but for the handles of scenes dropped
    /// while they held some, which every commit first despawns; see [`reserve`](Self::reserve)).
    pub fn commit(
        mut self,
        world: &mut World,
        library: &ArchetypeLibrary,
    ) -> Result<LoadedScene, CommitError> {
        if self.commit.is_some() || self.reservation.is_some() {
            let report = self.commit_slice(world, library, usize::MAX)?;
            return report.ok_or(CommitError::Finished);
        }
        if self.finished {
            return Err(CommitError::Finished);
        }
        release_dropped(world);
        self.check(world, library)?;
        let state = self.start_whole(world, library)?;
        self.commit = Some(state);
        self.finished = true;
        Ok(self.report())
    }

    /// Commits the next whole batches of the scene, at most `max_entities` entities (but at
    /// least one batch, of up to [`BATCH_ENTITIES`](Self::BATCH_ENTITIES)). Returns `Some` with
    /// the load's report once the last entity is in. The first slice reserves a handle for
    /// every entity of the scene, so references across slices resolve: until the last slice,
    /// the entities not committed yet are empty entities in the world (beside one entity that
    /// marks the reservation; see [`reserve`](Self::reserve)). Values that hold references are
    /// decoded here, a batch at a time.
    ///
    /// # Errors
    /// See [`CommitError`]; slices committed before are undone, so the world is as it was
    /// before the first.
    pub fn commit_slice(
        &mut self,
        world: &mut World,
        library: &ArchetypeLibrary,
        max_entities: usize,
    ) -> Result<Option<LoadedScene>, CommitError> {
        if self.finished {
            return Err(CommitError::Finished);
        }
        release_dropped(world);
        if let Err(error) = self.check_slice(world, library) {
            self.abandon(world);
            return Err(error);
        }
        let state = match self.commit.take() {
            Some(state) => state,
            None => self.start(world, library),
        };
        let mut spawned = 0;
        while let Some(mut batch) = self.batches.pop() {
            spawned += batch.len();
            let built = batch
                .resolve(&self.registry, &state.handles)
                .and_then(|()| batch.finish(&self.registry, &state.ids));
            match built {
                Ok((indices, batch)) => {
                    let targets: Vec<Entity> =
                        indices.iter().map(|&i| state.handles[i as usize]).collect();
                    commit::built_batch_at(world, &targets, batch);
                    if let Some(reservation) = &self.reservation {
                        reservation.committed(&indices);
                    }
                }
                Err(component) => {
                    self.commit = Some(state);
                    self.abandon(world);
                    return Err(CommitError::Scene(internal_error(&component)));
                }
            }
            if self
                .batches
                .last()
                .is_some_and(|next| spawned + next.len() > max_entities)
            {
                break;
            }
        }
        self.commit = Some(state);
        self.finished = self.batches.is_empty();
        if self.finished {
            if let Some(reservation) = self.reservation.take() {
                reservation.finish(world);
            }
        }
        Ok(self.finished.then(|| self.report()))
    }

    /// Takes back everything committed so far and the handles reserved (unless the world was
    /// cleared since: then nothing of the scene's is left to take); the scene cannot be
    /// committed after.
    pub fn abandon(&mut self, world: &mut World) {
        self.batches.clear();
        self.finished = true;
        let state = self.commit.take();
        match self.reservation.take() {
            Some(reservation) => reservation.release(world),
            None => {
                let handles = state.iter().flat_map(|state| state.handles.iter());
                commit::roll_back(world, handles.copied());
            }
        }
    }

    /// Reserves a handle in `world` for every entity of the scene, on the game thread, so that
    /// the values holding entity references can be decoded with them on any thread
    /// ([`ReservedScene::resolve`]); the [`ResolvedScene`] it gives then commits without
    /// decoding anything. Cheap: it takes the handles from hecs in one step.
    ///
    /// Until the commit, the reserved handles are empty entities in the world, beside one
    /// entity that marks the reservation (it holds a private component; the commit despawns
    /// it). They are the scene's: a handle despawned or given components meanwhile, or a
    /// cleared world, makes the commit refuse ([`CommitError::ReservedEntityLost`],
    /// [`CommitError::WorldCleared`]) rather than build a wrong world.
    /// [`abandon`](ReservedScene::abandon), or any commit error, despawns them. A scene dropped
    /// with its handles reserved leaves them (and the slices it committed) until the next
    /// `reserve` or commit into the same world, which despawns them first, before its own
    /// checks.
    ///
    /// A scene whose commit already started in slices keeps the handles its first slice
    /// reserved.
    ///
    /// # Example
    /// The three steps, each on the thread it is meant for:
    /// ```
    /// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, EntityRef, LoadOptions,
    ///     PreparedScene, PrepareProgress, SceneLoadOptions, StableId};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Clone, Serialize, Deserialize)]
    /// struct Follow {
    ///     leader: EntityRef,
    /// }
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Follow>()?;
    /// let library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
    /// let scene = br#"{ "format": 2, "entities": [
    ///     { "id": "00000000000000a1", "components": { "Name": "leader" } },
    ///     { "id": "00000000000000a2", "components": { "Follow": { "leader": "00000000000000a1" } } }
    /// ] }"#;
    /// let mut world = hecs::World::new();
    /// let loaded = std::thread::scope(|threads| {
    ///     // A worker reads, decodes and checks the scene: no world needed.
    ///     let prepared = threads
    ///         .spawn(|| {
    ///             let options = SceneLoadOptions::default();
    ///             PreparedScene::prepare(scene, None, &library, &options, &PrepareProgress::new())
    ///         })
    ///         .join()
    ///         .expect("the worker panicked")?;
    ///     // The game thread reserves the handles (cheap).
    ///     let reserved = prepared.reserve(&mut world);
    ///     // A worker decodes the values that hold references, with those handles.
    ///     let resolved = threads
    ///         .spawn(move || reserved.resolve())
    ///         .join()
    ///         .expect("the worker panicked");
    ///     // The game thread spawns the built batches: nothing is decoded here.
    ///     Ok::<_, Box<dyn std::error::Error>>(resolved.commit(&mut world, &library)?)
    /// })?;
    ///
    /// let leader = loaded.entity(StableId(0xa1)).expect("in the scene");
    /// let follower = loaded.entity(StableId(0xa2)).expect("in the scene");
    /// assert_eq!(world.get::<&Follow>(follower)?.leader, EntityRef(leader));
    /// assert_eq!(world.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reserve(mut self, world: &mut World) -> ReservedScene {
        if self.reservation.is_none() && self.commit.is_none() && !self.finished {
            self.reservation = Some(Reservation::new(world, self.ids.len()));
        }
        ReservedScene::new(self)
    }

    /// Decodes the values that hold entity references with the reserved handles, and puts them
    /// in the load's report (any thread).
    pub(super) fn resolve_references(mut self) -> ResolvedScene {
        if let Some(reservation) = &self.reservation {
            let handles = reservation.handles.clone();
            for batch in &mut self.batches {
                if let Err(component) = batch.resolve(&self.registry, &handles) {
                    self.unresolved.get_or_insert(component);
                }
            }
            self.map_report(&handles);
        }
        ResolvedScene::new(self)
    }
}

/// `Err(Cancelled)` once the progress was cancelled.
fn check_cancelled(progress: &PrepareProgress) -> Result<(), PrepareError> {
    if progress.is_cancelled() {
        Err(PrepareError::Cancelled)
    } else {
        Ok(())
    }
}

/// The versions of the archetypes whose instances are in `staging`.
fn versions(staging: &World, library: &ArchetypeLibrary) -> Vec<(ArchetypeId, Arc<Archetype>)> {
    let used: FxHashSet<ArchetypeId> = staging
        .query::<&ArchetypeInstance>()
        .iter()
        .map(|instance| instance.archetype)
        .collect();
    let mut versions: Vec<_> = used
        .into_iter()
        .filter_map(|id| Some((id, library.get_by_id(id)?.clone())))
        .collect();
    versions.sort_by_key(|(id, _)| *id);
    versions
}

/// The error for prepared values that did not go into the world (a bug: they were built from
/// decoded values).
fn internal_error(error: &BatchError) -> SceneError {
    SceneError {
        diagnostic: Box::new(Diagnostic::error(
            DiagnosticCode::Malformed,
            format!("{error} (a bug in archetype-engine: please report it)"),
        )),
        entity: None,
        offset: None,
        others: Vec::new(),
    }
}

impl PreparedScene {
    /// Sorts the staging world's entities into batches, counting progress.
    fn build_batches(
        &mut self,
        staging: &World,
        progress: &PrepareProgress,
    ) -> Result<(), PrepareError> {
        let mut order: Vec<Entity> = self.loaded.entities.clone();
        let listed: FxHashSet<Entity> = order.iter().copied().collect();
        order.extend(
            staging
                .iter()
                .map(|e| e.entity())
                .filter(|e| !listed.contains(e)),
        );
        let index_of: FxHashMap<Entity, u32> = order
            .iter()
            .enumerate()
            .map(|(i, e)| (*e, i as u32))
            .collect();
        let by_id: FxHashMap<u32, u32> = index_of.iter().map(|(e, i)| (e.id(), *i)).collect();
        let ids: Vec<Option<StableId>> = order
            .iter()
            .map(|e| staging.get::<&StableId>(*e).ok().map(|id| *id))
            .collect();
        self.ids = ids.iter().map(|id| id.unwrap_or(StableId(0))).collect();
        // Entities without a stable ID (none in a saved scene) cannot conflict.
        self.id_index = ids
            .iter()
            .enumerate()
            .filter_map(|(i, id)| Some(((*id)?, i as u32)))
            .collect();
        self.index_of = Arc::new(index_of);
        let context = BatchContext {
            registry: &self.registry,
            index_of: self.index_of.clone(),
            by_id: &by_id,
        };
        let total = order.len() as u64;
        let mut done = 0u64;
        progress.set_entries(0, total);
        let mut tick = |rows: usize| {
            done += rows as u64;
            progress.set_entries(done, total);
            !progress.is_cancelled()
        };
        for archetype in staging.archetypes().filter(|a| !a.is_empty()) {
            let batches =
                PreparedBatch::from_archetype(&context, archetype, Self::BATCH_ENTITIES, &mut tick)
                    .map_err(|component| PrepareError::Scene(internal_error(&component)))?;
            check_cancelled(progress)?;
            self.batches.extend(batches);
        }
        // Committed from the end: the file's first entities go first.
        self.batches
            .sort_by_key(|batch| std::cmp::Reverse(batch.indices[0]));
        Ok(())
    }

    /// Whether the world, the library and the reserved handles (if any) still take the next
    /// slice.
    fn check_slice(&self, world: &World, library: &ArchetypeLibrary) -> Result<(), CommitError> {
        if let Some(component) = &self.unresolved {
            return Err(CommitError::Scene(internal_error(component)));
        }
        if let Some(reservation) = &self.reservation {
            let pending = self.batches.iter().flat_map(|batch| batch.indices.iter());
            reservation.check(world, pending.copied())?;
        }
        self.check(world, library)
    }

    /// Whether the world and the library still take the scene.
    fn check(&self, world: &World, library: &ArchetypeLibrary) -> Result<(), CommitError> {
        if !Arc::ptr_eq(library.registry(), &self.registry) {
            return Err(CommitError::OtherLibrary);
        }
        for (id, version) in &self.versions {
            if !library
                .get_by_id(*id)
                .is_some_and(|now| Arc::ptr_eq(now, version))
            {
                return Err(CommitError::Stale {
                    archetype: version.name().to_string(),
                });
            }
        }
        self.check_ids(world, library)
    }

    /// With [`IdConflict::Error`]: no stable ID of the scene is in the world on an entity that
    /// is not the scene's own.
    fn check_ids(&self, world: &World, library: &ArchetypeLibrary) -> Result<(), CommitError> {
        if self.options.on_id_conflict == IdConflict::Remap {
            return Ok(());
        }
        let handles = self.commit.as_ref().map(|state| &state.handles);
        let conflict = world
            .query::<(Entity, &StableId)>()
            .iter()
            .any(|(entity, id)| {
                self.id_index
                    .get(id)
                    .is_some_and(|&i| handles.is_none_or(|handles| handles[i as usize] != entity))
            });
        if conflict {
            return Err(CommitError::Scene(self.conflict_error(world, library)));
        }
        Ok(())
    }

    /// The load's own error for the conflict, placed in the file: the loader is run against a
    /// world of the world's other stable IDs (it stops at the conflict).
    fn conflict_error(&self, world: &World, library: &ArchetypeLibrary) -> SceneError {
        let ours: FxHashSet<Entity> = self
            .commit
            .as_ref()
            .map(|state| state.handles.iter().copied().collect())
            .unwrap_or_default();
        let mut probe = World::new();
        for (entity, id) in world.query::<(Entity, &StableId)>().iter() {
            if !ours.contains(&entity) {
                probe.spawn((*id,));
            }
        }
        let file = self.file.as_deref();
        match load_scene(&self.bytes, file, &mut probe, library, &self.options) {
            Err(error) => error,
            Ok(_) => SceneError {
                diagnostic: Box::new(Diagnostic::error(
                    DiagnosticCode::DuplicateKey,
                    "an entity of the scene is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs",
                )),
                entity: None,
                offset: None,
                others: Vec::new(),
            },
        }
    }

    /// The first slice: handles for every entity (reserved now, unless `reserve` did), and the
    /// stable IDs they get.
    fn start(&mut self, world: &mut World, library: &ArchetypeLibrary) -> CommitState {
        let count = self.ids.len();
        let handles = self
            .reservation
            .get_or_insert_with(|| Reservation::new(world, count))
            .handles
            .clone();
        let (ids, remapped) = self.new_ids(world, library);
        CommitState {
            handles,
            ids,
            remapped,
        }
    }

    /// The whole scene in one go: the batches without references spawn on fresh handles, then
    /// handles are reserved for the others, whose references are decoded.
    fn start_whole(
        &mut self,
        world: &mut World,
        library: &ArchetypeLibrary,
    ) -> Result<CommitState, CommitError> {
        let (ids, remapped) = self.new_ids(world, library);
        let mut handles = vec![Entity::DANGLING; self.ids.len()];
        let (referencing, plain): (Vec<_>, Vec<_>) = std::mem::take(&mut self.batches)
            .into_iter()
            .partition(PreparedBatch::has_references);
        let mut failed = None;
        for batch in plain {
            match batch.finish(&self.registry, &ids) {
                Ok((indices, batch)) => {
                    for (i, entity) in indices.into_iter().zip(commit::batch(world, batch)) {
                        handles[i as usize] = entity;
                    }
                }
                Err(component) => failed = failed.or(Some(component)),
            }
        }
        let count: usize = referencing.iter().map(PreparedBatch::len).sum();
        let rows = referencing.iter().flat_map(|batch| batch.indices.iter());
        for (&i, entity) in rows.zip(world.reserve_entities(count as u32)) {
            handles[i as usize] = entity;
        }
        world.flush();
        let handles: Arc<[Entity]> = Arc::from(handles);
        for mut batch in referencing {
            let built = batch
                .resolve(&self.registry, &handles)
                .and_then(|()| batch.finish(&self.registry, &ids));
            match built {
                Ok((indices, batch)) => {
                    let targets: Vec<Entity> =
                        indices.iter().map(|&i| handles[i as usize]).collect();
                    commit::built_batch_at(world, &targets, batch);
                }
                Err(component) => failed = failed.or(Some(component)),
            }
        }
        if let Some(component) = failed {
            let taken = handles.iter().filter(|h| **h != Entity::DANGLING);
            commit::roll_back(world, taken.copied());
            return Err(CommitError::Scene(internal_error(&component)));
        }
        Ok(CommitState {
            handles,
            ids,
            remapped,
        })
    }

    /// The stable IDs the entities get: the file's, or with [`IdConflict::Remap`] and stable
    /// IDs in the world, fresh ones (and the file's ID to the new one).
    fn new_ids(
        &self,
        world: &World,
        library: &ArchetypeLibrary,
    ) -> (Vec<StableId>, FxHashMap<StableId, StableId>) {
        let mut ids = self.ids.clone();
        let mut remapped = FxHashMap::default();
        let remap = self.options.on_id_conflict == IdConflict::Remap
            && world.query::<&StableId>().iter().next().is_some();
        if remap {
            for id in ids.iter_mut() {
                let fresh = library.spawn_rng().next_id();
                remapped.insert(*id, fresh);
                *id = fresh;
            }
        }
        (ids, remapped)
    }

    /// Puts `handles` (by scene index) in the load's report in place of the staging handles.
    fn map_report(&mut self, handles: &[Entity]) {
        let handle = |staging: &Entity| {
            self.index_of
                .get(staging)
                .map_or(*staging, |&i| handles[i as usize])
        };
        let entities = self.loaded.entities.iter().map(handle).collect();
        let by_id = self
            .loaded
            .by_id
            .iter()
            .map(|(id, staging)| (*id, handle(staging)))
            .collect();
        self.loaded.entities = entities;
        self.loaded.by_id = by_id;
        self.report_on_handles = true;
    }

    /// The load's report, with the world's handles.
    fn report(&mut self) -> LoadedScene {
        let Some(CommitState {
            handles, remapped, ..
        }) = &self.commit
        else {
            return LoadedScene::default();
        };
        let (handles, remapped) = (handles.clone(), remapped.clone());
        if !self.report_on_handles {
            self.map_report(&handles);
        }
        LoadedScene {
            entities: std::mem::take(&mut self.loaded.entities),
            by_id: std::mem::take(&mut self.loaded.by_id),
            remapped,
            warnings: std::mem::take(&mut self.loaded.warnings),
            changes: std::mem::take(&mut self.loaded.changes),
            meta: self.loaded.meta.take(),
            sub_scenes: std::mem::take(&mut self.loaded.sub_scenes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archetype::LoadOptions;
    use crate::component::EntityRef;
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Aim {
        at: EntityRef,
        also: Vec<EntityRef>,
    }

    /// References, in whichever encoding the build has (postcard, or JSON without `binary`),
    /// resolve to the committed entities, by the commit or by `resolve` after `reserve`, and
    /// the report maps IDs to them.
    #[test]
    fn references_resolve_to_the_committed_entities() {
        let mut registry = ComponentRegistry::new();
        registry.register::<Aim>().unwrap();
        let library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        let scene = br#"{ "format": 2, "entities": [
            { "id": "00000000000000a1", "components": { "Aim": { "at": "00000000000000a2", "also": ["00000000000000a1"] } } },
            { "id": "00000000000000a2", "components": { "Aim": { "at": "00000000000000a2", "also": [] } } }
        ] }"#;
        let options = SceneLoadOptions::default();
        for reserve in [false, true] {
            let progress = PrepareProgress::new();
            let prepared =
                PreparedScene::prepare(scene, None, &library, &options, &progress).unwrap();
            let mut world = World::new();
            world.spawn((1u8,));
            let loaded = if reserve {
                let resolved = prepared.reserve(&mut world).resolve();
                resolved.commit(&mut world, &library).unwrap()
            } else {
                prepared.commit(&mut world, &library).unwrap()
            };
            check_references(&world, &loaded);
        }
    }

    fn check_references(world: &World, loaded: &LoadedScene) {
        let a1 = loaded.entity(StableId(0xa1)).unwrap();
        let a2 = loaded.entity(StableId(0xa2)).unwrap();
        let aim = (*world.get::<&Aim>(a1).unwrap()).clone();
        assert_eq!(
            aim,
            Aim {
                at: EntityRef(a2),
                also: vec![EntityRef(a1)]
            }
        );
        assert_eq!(world.get::<&Aim>(a2).unwrap().at, EntityRef(a2));
        assert_eq!(*world.get::<&StableId>(a2).unwrap(), StableId(0xa2));
        assert_eq!(world.len(), 3);
    }
}
