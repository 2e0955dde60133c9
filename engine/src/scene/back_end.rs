//! The back-end every scene load goes through ([`Load`], run by [`build_scene`]). Whichever
//! reader read the file, it gives each entity its stable ID (kept, refused or fresh:
//! [`SceneIds`]) and its handle, resolves references, puts the plain entities into the world,
//! builds the archetype instances (the untouched and diffed instances of one-entity
//! archetypes a column batch per archetype, every other one by
//! [`build_instances`]), spawns the children the
//! archetypes gained ([`follow`](crate::scene::follow)), and, if the load stops, undoes all of
//! it: the world is as it was.
//!
//! Two routes feed it:
//! - The one-pass readers ([`fast_load`](crate::scene::fast_load)) read a file (JSON in any
//!   layout, binary in the current format) and call it as they read. A reference to an entity
//!   further down the file takes a handle reserved ahead, and one left without its entity at
//!   the end gives up. At the first thing they do not expect, the load gives up with a typed
//!   reason ([`GiveUp`]), and the careful route reads the file again.
//! - The careful readers ([`load`](crate::scene::load)) read the whole document, check it in
//!   the order problems are reported (duplicate IDs, IDs already in the world, names), and
//!   hand the checked entries to [`build_checked`]. Every entry has its handle before a value
//!   is read, so a reference to an entity the scene does not hold is refused where it is; each
//!   value is decoded with its errors placed, instances are built one by one, warnings are
//!   kept, and a problem refuses the scene with its error ([`Stopped::Refused`]).
//!
//! The limits on what a scene holds are counted by the readers as they read
//! ([`SceneBudget`]).

use std::borrow::Cow;

use std::sync::Arc;

use hecs::{Entity, EntityBuilder, World};
use rustc_hash::FxHashMap;
use serde_json::Map;

use crate::archetype::Archetype;
use crate::archetype::ShapesAtHand;
use crate::archetype::{override_shape, ArchetypeInstance, CompiledNode, OverridesId};
use crate::component::ComponentId;
use crate::component::ComponentRegistry;
use crate::component::StableId;
use crate::component::TypedValue;
use crate::component::{with_installed_mapper, PushError};
use crate::component::{with_load_table, LoadTable};
use crate::component::{with_mapper, EntityMapper, RefIn, RefOut, RefWire};
use crate::component::{MapError, ReadOnly};
use crate::diagnostic::DiagnosticCode;
use crate::json::merge_patch;
use crate::scene::commit::{self, Identities, Identity};
use crate::scene::follow::{follow_archetypes, Follow, Followed};
use crate::scene::id_index::IdIndex;
use crate::scene::instance_diff::{archetype_value_key, Diff};
use crate::scene::load::{
    build_instances, decode_instance_value, decode_payload_into, leave_out, parse_patch,
    plan_entry, report_renames, report_unknown_shared_fields, scene_component, scene_ref_id,
    warn_left_out, Build, Context, Entry, LoadRefs, LoadedScene, Payload, Plan, SceneChange,
    SceneError, SceneHead, Source, ValueAt,
};
use crate::scene::prepare_progress::{report_offset, REPORT_EVERY};
use crate::scene::scene_budget::SceneBudget;
use crate::scene::scene_ids::SceneIds;

/// A scene's shared table as read: key → the value's JSON text, and key → where the value is
/// in the file (to place what is reported of it).
pub(super) type SharedTable = (FxHashMap<u64, String>, FxHashMap<u64, usize>);

/// Handles reserved for forward references at a time; a value that needs more is decoded again
/// after reserving more.
const RESERVE_AHEAD: u32 = 256;

/// Why the fast path handed a scene over to the careful path (which loads it, or reports its
/// problem, placed). The world is as it was either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GiveUp {
    /// Text or bytes the reader does not take: a key unknown or written twice, another format,
    /// a syntax error, something cut short or after the end, bytes that fail their checksum.
    Layout,
    /// A limit gone over (entities, component values).
    TooLarge,
    /// An ID twice, or one already in the world without
    /// [`IdConflict::Remap`](crate::scene::IdConflict::Remap).
    Id,
    /// A component not registered, or named twice for one entity.
    Component,
    /// A value that does not decode.
    Value,
    /// A reference to an entity the scene does not hold.
    DanglingReference,
    /// A shared value with a field its type does not have, an error by
    /// [`SceneLoadOptions::unknown_fields`](crate::scene::SceneLoadOptions::unknown_fields)
    /// (as a warning, it is placed and the load goes on).
    UnknownSharedField,
    /// The archetype instances: an entry with a problem (a child left out where
    /// [`RemovedChildren::Error`](crate::scene::RemovedChildren::Error) makes it one), or one
    /// that could not be built.
    Instances,
    /// The preparation this load is part of was cancelled.
    Cancelled,
    /// A column batch whose columns or handles do not fit the entries read into it (not
    /// expected: the careful path loads the scene instead of a panic).
    BatchMismatch,
    /// The reference mapper this load installs was not found installed (not expected).
    MapperMissing,
    /// Only in a careful load ([`build_checked`]): the scene has a problem, and the load's
    /// error says which, placed.
    Refused,
}

/// How a load through the back-end ended without a scene.
pub(super) enum Stopped {
    /// The one-pass route gave up: the careful route reads the file again.
    GaveUp(GiveUp),
    /// The careful route refused the scene: the load's error.
    Refused(SceneError),
}

/// What the careful route hands the back-end: the document's entries, read whole and checked
/// (IDs, names), each with its plan, and how errors are placed in the file.
pub(super) struct Checked<'c> {
    pub entries: &'c [Entry<'c>],
    pub plans: &'c [Plan],
    pub source: Source<'c>,
    pub place: &'c dyn Fn(&mut SceneError, usize),
    /// Where each shared value is (byte offset).
    pub shared_at: &'c FxHashMap<u64, usize>,
}

impl From<commit::NotCommitted> for GiveUp {
    fn from(_: commit::NotCommitted) -> Self {
        GiveUp::BatchMismatch
    }
}

impl From<PushError> for GiveUp {
    fn from(error: PushError) -> Self {
        match error {
            PushError::Invalid(..) => GiveUp::Value,
            PushError::ColumnFull | PushError::WrongType => GiveUp::BatchMismatch,
        }
    }
}

/// The rule a load into `world` gives stable IDs by (its options' [`IdConflict`]).
///
/// [`IdConflict`]: crate::scene::IdConflict
pub(super) fn load_ids<'c>(context: &'c Context<'c>, world: &World) -> SceneIds<'c> {
    let policy = context.options.on_id_conflict;
    SceneIds::new(world, policy, context.library.spawn_rng())
}

impl Stopped {
    /// Why the one-pass route gave up (it refuses nothing itself).
    pub(super) fn reason(self) -> GiveUp {
        match self {
            Stopped::GaveUp(why) => why,
            Stopped::Refused(_) => GiveUp::Refused,
        }
    }
}

/// Builds the entries the careful route read and checked (see [`Checked`]) through the same
/// back-end as the one-pass route: each plain entity decoded into its reserved handle with
/// every error placed, the archetype instances built at the end, the shared values' unknown
/// fields reported. `ids` gives the entities their stable IDs. All of the entities, or none:
/// the world is left as it was on any error.
pub(super) fn build_checked<'c>(
    context: &'c Context<'c>,
    world: &mut World,
    ids: SceneIds<'c>,
    checked: &'c Checked<'c>,
    shared: FxHashMap<u64, String>,
    head: SceneHead,
) -> Result<LoadedScene, SceneError> {
    let wire = checked.source.wire();
    let loaded = build_scene(context, world, (wire, ids, Some(checked)), |load, world| {
        load.head = head;
        // Every entry's handle first, so a reference to any of them resolves (and one to an
        // entity the scene does not hold is refused where it is).
        let count = u32::try_from(checked.entries.len()).map_err(|_| GiveUp::TooLarge)?;
        let handles = world.reserve_entities(count);
        let entries = checked.entries.iter();
        load.refs.pending = entries.map(|entry| entry.id).zip(handles).collect();
        // Every entry is indexed as it is placed: sized once, as the binary reader sizes it.
        load.refs.ids = IdIndex::with_capacity(checked.entries.len());
        let shared = (shared, checked.shared_at.clone());
        read_entities_with(load, world, shared, |load, world| {
            read_checked(load, checked, world)
        })
    });
    loaded.map_err(|stopped| match stopped {
        Stopped::Refused(error) => error,
        // Not expected: the entries were checked, and the careful route refuses with an error.
        Stopped::GaveUp(why) => context.error(
            DiagnosticCode::Malformed,
            format!("the scene could not be built ({why:?}); this is a bug, please report it"),
        ),
    })
}

/// The careful route's plain entities, decoded from the read values into their handles in the
/// file's order; every other entry (an archetype instance, an entry left out or with a
/// problem) takes its handle for [`build_all_instances`].
fn read_checked(
    load: &mut Load<'_, '_>,
    checked: &Checked<'_>,
    world: &mut World,
) -> Result<(), GiveUp> {
    let context = load.context;
    let mut builder = EntityBuilder::new();
    for (i, (entry, plan)) in checked.entries.iter().zip(checked.plans).enumerate() {
        if i.is_multiple_of(REPORT_EVERY) && !report_offset(entry.offset) {
            let cancelled = context.error(DiagnosticCode::Io, "scene preparation cancelled");
            return refuse(load, cancelled);
        }
        let own_id = own_id(load, entry.id).ok_or(GiveUp::Id)?;
        let decoded = match plan.failed || plan.instance.is_some() || plan.left_out.is_some() {
            true => Ok(true),
            false => {
                let mut values = entry.components.iter().zip(&plan.components);
                let decoded = values.try_for_each(|((name, offset, payload), component)| {
                    let at = ValueAt {
                        entry,
                        name,
                        offset: *offset,
                    };
                    let placing = (context, checked);
                    decode_payload_into(placing, at, payload, *component, &mut builder)
                });
                context.entity_result(decoded)
            }
        };
        let handle = match decoded {
            Err(error) => return refuse(load, error),
            Ok(false) => {
                scan_state(|state| place_entity(state, world, (entry.id, own_id), &mut builder))
            }
            // Not built here (or not at all): it keeps its handle.
            Ok(true) => {
                builder.clear();
                scan_state(|state| place_instance(state, world, entry.id))
            }
        };
        load.entities.push(handle.ok_or(GiveUp::MapperMissing)??);
    }
    Ok(())
}

/// Stops a careful load with `error`, the load's.
fn refuse(load: &mut Load<'_, '_>, error: SceneError) -> Result<(), GiveUp> {
    load.refused = Some(error);
    Err(GiveUp::Refused)
}

/// Runs `read` with the wire references are written in, the rule stable IDs are given by,
/// and, for a careful load, its checked entries; undoes everything it did to the world if it
/// stops.
pub(super) fn build_scene<'c, 'a>(
    context: &'c Context<'c>,
    world: &mut World,
    (wire, ids, careful): (RefWire, SceneIds<'c>, Option<&'c Checked<'c>>),
    read: impl FnOnce(&mut Load<'c, 'a>, &mut World) -> Result<(), GiveUp>,
) -> Result<LoadedScene, Stopped> {
    let mut load = Load {
        context,
        wire,
        ids,
        refs: RefState::default(),
        entities: Vec::new(),
        budget: SceneBudget::new(&context.options.limits),
        head: SceneHead::default(),
        followed: Followed::default(),
        instances: Vec::new(),
        instance_handles: Vec::new(),
        pristine: Pristine::default(),
        careful,
        refused: None,
        changes: Vec::new(),
    };
    let loaded = read(&mut load, world);
    let loaded = match careful {
        Some(_) => with_all_errors(&mut load, loaded),
        None => loaded,
    };
    let mut state = std::mem::take(&mut load.refs);
    // Handles reserved ahead and never taken are released either way.
    commit::roll_back(world, state.pool.drain(..));
    if let Err(why) = loaded {
        // What the one-pass route warned of is the careful path's to report again.
        if careful.is_none() {
            context.take_warnings();
        }
        let handles = (state.ids.values()).chain(state.pending.values()).copied();
        commit::roll_back(world, handles.chain(load.followed.handles()));
        return Err(match load.refused {
            Some(error) => Stopped::Refused(error),
            None => Stopped::GaveUp(why),
        });
    }
    let mut loaded = LoadedScene {
        entities: load.entities,
        by_id: state.ids,
        remapped: load.ids.into_remapped(),
        // The one-pass route's warnings, placed by byte offset (a careful load takes its own).
        warnings: match careful {
            Some(_) => Vec::new(),
            None => context.take_warnings(),
        },
        changes: load.changes,
        meta: None,
        sub_scenes: Vec::new(),
    };
    follow_archetypes(context, world, &mut loaded, load.followed, load.head.meta);
    Ok(loaded)
}

/// A careful load's outcome in check mode ([`SceneLoadOptions::all_errors`]): every entity's
/// problem found (the one that stopped the load among them) refuses the scene, as one error.
///
/// [`SceneLoadOptions::all_errors`]: crate::scene::SceneLoadOptions::all_errors
fn with_all_errors(load: &mut Load<'_, '_>, read: Result<(), GiveUp>) -> Result<(), GiveUp> {
    let context = load.context;
    if !context.options.all_errors {
        return read;
    }
    if let Some(error) = load.refused.take() {
        let _ = context.entity_result(Err(error));
    }
    match context.take_errors() {
        Some(errors) => refuse(load, errors),
        None => read,
    }
}

/// What one load has built so far.
pub(super) struct Load<'c, 'a> {
    pub(super) context: &'c Context<'c>,
    /// How references are written in this encoding.
    wire: RefWire,
    /// The stable ID each entity gets.
    pub(super) ids: SceneIds<'c>,
    /// Stable ID → entity. Lent to the reference mapper while values decode (reached through
    /// [`scan_state`] then: all of a JSON scene's one pass, a binary scene's second), given
    /// back after.
    pub(super) refs: RefState,
    /// Every entity of the scene, in the file's order.
    pub(super) entities: Vec<Entity>,
    /// What the scene may still hold (entries and component values).
    pub(super) budget: SceneBudget,
    /// The scene's `meta` and archetype table.
    pub(super) head: SceneHead,
    /// The children the archetypes gained, once the instances are built.
    followed: Followed,
    /// Archetype instances, built at the end, and their handles.
    instances: Vec<Entry<'a>>,
    instance_handles: Vec<Entity>,
    /// Untouched instances of single-entity archetypes, spawned a batch per archetype.
    pristine: Pristine<'a>,
    /// A careful load's entries (`None`: the one-pass route).
    careful: Option<&'c Checked<'c>>,
    /// The error a careful load stopped with.
    refused: Option<SceneError>,
    /// What the one-pass route changed from the file (archetypes and children found by a
    /// former name, entries left out).
    changes: Vec<SceneChange>,
}

/// Untouched instances (no values of their own) of archetypes that are one entity without
/// references: every one is its archetype's values as they are, so they go into the world as
/// `spawn_many` puts them, a column batch per archetype, not one by one.
#[derive(Default)]
struct Pristine<'a> {
    /// Archetype name as written → its group, or `None` for an archetype whose instances are
    /// built one by one (children, references).
    by_name: FxHashMap<&'a str, Option<usize>>,
    /// The name looked up last and its group.
    last_name: Option<(&'a str, Option<usize>)>,
    groups: Vec<PristineGroup>,
    /// Instances of those archetypes whose only values are binary diffs taken against the
    /// archetype's values of now: a batch per archetype and set of components diffed.
    diffed: Vec<DiffedGroup<'a>>,
    /// (pristine group, components diffed) → its group in `diffed`.
    diffed_by_key: FxHashMap<(usize, Vec<ComponentId>), usize>,
    /// The key of each archetype value (by pristine group), made at the first diff of it.
    keys: FxHashMap<(usize, ComponentId), Option<u64>>,
    /// The override shapes met last, with their IDs.
    shapes: ShapesAtHand,
    /// The override shape of an instance whose one diff of a component has the shape written
    /// as these bytes ([`Diff::leaves`](crate::scene::instance_diff::Diff::leaves)).
    records: FxHashMap<(ComponentId, &'a [u8]), OverridesId>,
    /// (pristine group, the one component diffed, the key of the archetype value it was taken
    /// against) → its group in `diffed`, once the general path took such a diff.
    diffed_by_one: FxHashMap<(usize, ComponentId, u64), usize>,
}

/// The instances of one archetype with diffs of the same components (binary diffs, or JSON
/// merge patches): each its archetype's values but for those, which are decoded straight into
/// their columns.
struct DiffedGroup<'a> {
    /// The [`PristineGroup`] of the archetype.
    archetype: usize,
    /// The components diffed, sorted.
    components: Vec<ComponentId>,
    ids: Vec<StableId>,
    handles: Vec<Entity>,
    /// The diffed values: `components.len()` per instance, in their order.
    values: Vec<Diffed<'a>>,
    /// Each instance's override shape (found when the values are decoded, for patches).
    overrides: Vec<Option<OverridesId>>,
}

/// A diffed value of an instance, as a [`DiffedGroup`] holds it.
enum Diffed<'a> {
    /// A binary diff's value, whole, in postcard.
    Postcard(&'a [u8]),
    /// A JSON merge patch, to merge onto the archetype's value.
    Patch(&'a str),
    /// The value decoded.
    Typed(TypedValue),
    /// Taken into its column.
    Taken,
}

/// The untouched instances of one archetype.
struct PristineGroup {
    marker: ArchetypeInstance,
    archetype: Arc<Archetype>,
    /// Each instance's stable ID (after remapping) and handle.
    ids: Vec<StableId>,
    handles: Vec<Entity>,
}

/// Stable ID → entity: the reference mapper's state while values decode.
#[derive(Default)]
pub(super) struct RefState {
    /// The entries read so far.
    pub(super) ids: IdIndex,
    /// IDs referred to but not reached yet, with the handle reserved for each.
    pending: FxHashMap<StableId, Entity>,
    /// Handles reserved ahead: for forward references (JSON), or one per entry, taken in
    /// order (binary).
    pub(super) pool: Vec<Entity>,
    /// A reference found the pool empty: reserve more and decode the value again.
    starved: bool,
}

/// Reads references as stable IDs, giving IDs not seen yet a reserved handle.
struct ScanRefs {
    state: RefState,
    wire: RefWire,
    /// A careful load: every entry has its handle already, so an ID not seen is an entity the
    /// scene does not hold, refused where it is; and a reference may be written either way.
    known_only: bool,
}

/// Gives `f` the reference state of the [`ScanRefs`] installed while the entries are read;
/// `None` outside that (never expected: the callers run inside it).
pub(super) fn scan_state<R>(f: impl FnOnce(&mut RefState) -> R) -> Option<R> {
    with_installed_mapper(|mapper: &mut ScanRefs| f(&mut mapper.state))
}

impl EntityMapper for ScanRefs {
    fn wire(&self) -> RefWire {
        self.wire
    }
    fn write(&mut self, _entity: Entity) -> Result<RefOut, MapError> {
        Err(MapError::NotWritten(ReadOnly::Loading))
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        // A reference written the other encoding's way is for the careful path.
        let id = match (&reference, self.wire) {
            (RefIn::Text(_), RefWire::Text) | (RefIn::Number(_), RefWire::Number) => {
                scene_ref_id(reference)?
            }
            _ if self.known_only => scene_ref_id(reference)?,
            _ => return Err(MapError::NotAStableId),
        };
        let state = &mut self.state;
        if let Some(entity) = state.ids.get(&id).or_else(|| state.pending.get(&id)) {
            return Ok(*entity);
        }
        if self.known_only {
            return Err(MapError::NotInScene(id));
        }
        let Some(handle) = state.pool.pop() else {
            state.starved = true;
            return Err(MapError::NoHandleReserved);
        };
        state.pending.insert(id, handle);
        Ok(handle)
    }
}

/// Runs `read` (which reads the entity list) with the shared table and the reference mapper
/// installed, checks every reference found its entity, then builds the archetype instances.
pub(super) fn read_entities_with<'a>(
    load: &mut Load<'_, 'a>,
    world: &mut World,
    (shared, shared_at): SharedTable,
    read: impl FnOnce(&mut Load<'_, 'a>, &mut World) -> Result<(), GiveUp>,
) -> Result<(), GiveUp> {
    let (built, table) = with_load_table(LoadTable::new(shared), || {
        let mapper = ScanRefs {
            state: std::mem::take(&mut load.refs),
            wire: load.wire,
            known_only: load.careful.is_some(),
        };
        let (read, mapper) = with_mapper(mapper, || read(load, world));
        load.refs = mapper.state;
        read?;
        // A reference to an entity the scene does not hold.
        if !load.refs.pending.is_empty() {
            return Err(GiveUp::DanglingReference);
        }
        spawn_pristine(load, world)?;
        build_all_instances(load, world)
    });
    // A shared value with a field its type does not have: warned of, placed, or (as an error)
    // reported by the careful path.
    built.and_then(
        |()| match (table.unknown_fields().is_empty(), load.careful) {
            (true, _) => Ok(()),
            (false, None) => {
                let source = one_pass_source(load.wire);
                let place = |error: &mut SceneError, at: usize| source.place(error, at);
                report_unknown_shared_fields(load.context, &table, &shared_at, &place)
                    .map_err(|_| GiveUp::UnknownSharedField)
            }
            (false, Some(checked)) => {
                let context = load.context;
                match report_unknown_shared_fields(context, &table, &shared_at, checked.place) {
                    Ok(()) => Ok(()),
                    Err(error) => refuse(load, error),
                }
            }
        },
    )
}

/// Counts one more component value; `false` once the scene holds more than the limit allows
/// (the careful path reports it).
pub(super) fn take_value(load: &mut Load<'_, '_>) -> bool {
    load.budget.take_values(1).is_ok()
}

/// Runs `decode` (one component value); if it meets more forward references than handles
/// were reserved ahead ([`reserve_ahead`]), reserves more and runs it again (references already
/// read keep their handles). `None` if it fails otherwise.
pub(super) fn decode<R>(world: &World, mut decode: impl FnMut() -> Option<R>) -> Option<R> {
    let mut batch = RESERVE_AHEAD;
    loop {
        if let Some(decoded) = decode() {
            return Some(decoded);
        }
        batch = batch.saturating_mul(4);
        let more = scan_state(|state| {
            let starved = std::mem::take(&mut state.starved);
            if starved {
                state.pool.extend(world.reserve_entities(batch));
            }
            starved
        });
        if more != Some(true) {
            return None;
        }
    }
}

/// Keeps handles reserved for the forward references of the next entry (checked once per
/// entry, not per value).
pub(super) fn reserve_ahead(world: &World) {
    scan_state(|state| {
        if state.pool.len() < RESERVE_AHEAD as usize / 4 {
            state.pool.extend(world.reserve_entities(RESERVE_AHEAD));
        }
    });
}

/// Ends an entry: a plain entity (its components in `builder`) goes into the world now, on the
/// handle reserved for it if something referred to it earlier; an archetype instance gets a
/// handle and waits for [`build_all_instances`].
pub(super) fn finish_entity<'a>(
    load: &mut Load<'_, 'a>,
    world: &mut World,
    id: StableId,
    instance: Option<Entry<'a>>,
    builder: &mut EntityBuilder,
) -> Result<(), GiveUp> {
    let own_id = own_id(load, id).ok_or(GiveUp::Id)?;
    let handle = match instance {
        Some(_) => scan_state(|state| place_instance(state, world, id)),
        None => scan_state(|state| place_entity(state, world, (id, own_id), builder)),
    };
    let handle = handle.ok_or(GiveUp::MapperMissing)??;
    if let Some(entry) = instance {
        take_instance(load, entry, own_id, handle)?;
    }
    load.entities.push(handle);
    Ok(())
}

/// The handle of the archetype instance with stable ID `id`: the one reserved for it if
/// something referred to it earlier, or a new reserved one.
#[inline]
pub(super) fn place_instance(
    state: &mut RefState,
    world: &World,
    id: StableId,
) -> Result<Entity, GiveUp> {
    // An ID twice.
    if !state.ids.is_new(&id) {
        return Err(GiveUp::Id);
    }
    let handle = referred_to(state, id).unwrap_or_else(|| world.reserve_entity());
    state.ids.insert(id, handle);
    Ok(handle)
}

/// Puts the plain entity with stable ID `id` (its components in `builder`) into the world:
/// on the handle reserved for it if something referred to it earlier; its handle.
fn place_entity(
    state: &mut RefState,
    world: &mut World,
    (id, own_id): (StableId, StableId),
    builder: &mut EntityBuilder,
) -> Result<Entity, GiveUp> {
    // An ID twice.
    if !state.ids.is_new(&id) {
        return Err(GiveUp::Id);
    }
    let reserved = referred_to(state, id);
    let handle = commit::entity(world, reserved, Identity::plain(own_id), builder)
        .map_err(|_| GiveUp::Id)?;
    state.ids.insert(id, handle);
    Ok(handle)
}

/// The handle reserved for `id` when something referred to it before its entry.
#[inline]
fn referred_to(state: &mut RefState, id: StableId) -> Option<Entity> {
    match state.pending.is_empty() {
        true => None,
        false => state.pending.remove(&id),
    }
}

/// An archetype instance entry with its handle: an untouched instance of a single-entity
/// archetype joins its archetype's batch, any other waits for [`build_all_instances`].
/// [`GiveUp::Instances`] for an entry the careful path is to report (an unknown archetype).
pub(super) fn take_instance<'a>(
    load: &mut Load<'_, 'a>,
    entry: Entry<'a>,
    own_id: StableId,
    handle: Entity,
) -> Result<(), GiveUp> {
    let group = match (&entry.archetype, &entry.child) {
        (Some(Cow::Borrowed(name)), None) => pristine_group(load, name)?,
        _ => None,
    };
    let batched = match group {
        Some(group) if entry.components.is_empty() => join_pristine(load, group, own_id, handle),
        Some(group) => take_diffed(load, group, &entry, (own_id, handle)),
        None => false,
    };
    if !batched {
        load.instances.push(entry);
        load.instance_handles.push(handle);
    }
    Ok(())
}

/// Puts an untouched instance into the batch of pristine group `group`; `false` if there is
/// no such group.
#[inline]
pub(super) fn join_pristine(
    load: &mut Load<'_, '_>,
    group: usize,
    own_id: StableId,
    handle: Entity,
) -> bool {
    match load.pristine.groups.get_mut(group) {
        Some(pristine) => {
            pristine.ids.push(own_id);
            pristine.handles.push(handle);
            true
        }
        None => false,
    }
}

/// Puts an instance of the archetype of pristine group `group` into its [`DiffedGroup`] if
/// its only values are binary diffs taken against the archetype's values of now; `false` if
/// they are not (it is built one by one).
fn take_diffed<'a>(
    load: &mut Load<'_, 'a>,
    group: usize,
    entry: &Entry<'a>,
    (own_id, handle): (StableId, Entity),
) -> bool {
    if let [(name, _, Payload::Diff(diff, None))] = entry.components.as_slice() {
        if take_one_diff(load, group, name, diff, (own_id, handle)).is_some() {
            return true;
        }
    }
    let registry = load.context.registry;
    let Some(archetype) = load.pristine.groups.get(group).map(|g| g.archetype.clone()) else {
        return false;
    };
    let Some(node) = archetype.compiled.as_ref().map(|c| &c.nodes[0]) else {
        return false;
    };
    let mut diffs = Vec::with_capacity(entry.components.len());
    let mut shape = Some(Map::new());
    for (name, _, payload) in &entry.components {
        let Some(component) = scene_component(registry, name) else {
            return false;
        };
        let in_archetype = node.typed.iter().any(|(c, _)| *c == component);
        if !in_archetype || matches!(&**name, "Parent" | "Children") {
            return false;
        }
        let value = match payload {
            Payload::Diff(diff, None) => {
                let key = *load
                    .pristine
                    .keys
                    .entry((group, component))
                    .or_insert_with(|| archetype_value_key(registry, node, component));
                if key != Some(diff.key) {
                    return false;
                }
                if let Some(shape) = &mut shape {
                    shape.insert(registry.name(component).to_string(), diff.shape());
                }
                Diffed::Postcard(diff.value)
            }
            Payload::Json(text) => {
                // Its shape is known once the patch is read.
                shape = None;
                Diffed::Patch(text)
            }
            _ => return false,
        };
        diffs.push((component, value));
    }
    diffs.sort_unstable_by_key(|(component, _)| *component);
    let components: Vec<ComponentId> = diffs.iter().map(|(c, _)| *c).collect();
    if components.windows(2).any(|pair| pair[0] == pair[1]) {
        // A component twice: the careful path says so.
        return false;
    }
    let records = load.context.library.override_shapes();
    let overrides = shape.map(|shape| load.pristine.shapes.intern(records, shape));
    if let ([(name, _, Payload::Diff(diff, None))], Some(record)) =
        (entry.components.as_slice(), &overrides)
    {
        // Known from now on by its bytes (see take_one_diff).
        if let Some(component) = scene_component(registry, name) {
            let at = diffed_group_index(&mut load.pristine, group, vec![component]);
            (load.pristine.diffed_by_one).insert((group, component, diff.key), at);
            (load.pristine.records).insert((component, diff.leaves), *record);
        }
    }
    let diffed = diffed_group(&mut load.pristine, group, components);
    diffed.ids.push(own_id);
    diffed.handles.push(handle);
    (diffed.values).extend(diffs.into_iter().map(|(_, value)| value));
    diffed.overrides.push(overrides);
    true
}

/// [`take_diffed`] of an instance whose only value is one binary diff (most changed instances:
/// a goblin hurt, a door opened), without a map made or a list allocated for it: its group is
/// found by its archetype, component and key, its override record by the bytes of its shape.
/// `None` (nothing done) when either is not known yet: the general path decides, and makes
/// them.
fn take_one_diff<'a>(
    load: &mut Load<'_, 'a>,
    group: usize,
    name: &str,
    diff: &Diff<'a>,
    (own_id, handle): (StableId, Entity),
) -> Option<()> {
    let registry = load.context.registry;
    let pristine = &mut load.pristine;
    let component = scene_component(registry, name)?;
    let record = *pristine.records.get(&(component, diff.leaves))?;
    // Found only for a diff the general path took with this key: against the archetype's
    // value of now, of a component its entity holds as a typed value.
    let at = *pristine.diffed_by_one.get(&(group, component, diff.key))?;
    let diffed = pristine.diffed.get_mut(at)?;
    diffed.ids.push(own_id);
    diffed.handles.push(handle);
    diffed.values.push(Diffed::Postcard(diff.value));
    diffed.overrides.push(Some(record));
    Some(())
}

/// The [`DiffedGroup`] of the instances of pristine group `group` with diffs of `components`
/// (sorted), started if it is the first.
fn diffed_group<'p, 'a>(
    pristine: &'p mut Pristine<'a>,
    group: usize,
    components: Vec<ComponentId>,
) -> &'p mut DiffedGroup<'a> {
    let at = diffed_group_index(pristine, group, components);
    &mut pristine.diffed[at]
}

/// The index of [`diffed_group`]'s group.
fn diffed_group_index(
    pristine: &mut Pristine<'_>,
    group: usize,
    components: Vec<ComponentId>,
) -> usize {
    let key = (group, components);
    match pristine.diffed_by_key.get(&key) {
        Some(at) => *at,
        None => {
            pristine.diffed.push(DiffedGroup {
                archetype: group,
                components: key.1.clone(),
                ids: Vec::new(),
                handles: Vec::new(),
                values: Vec::new(),
                overrides: Vec::new(),
            });
            let at = pristine.diffed.len() - 1;
            pristine.diffed_by_key.insert(key, at);
            at
        }
    }
}

/// The batch untouched instances of archetype `name` (as written) join, planned once per
/// archetype: `Ok(None)` when its instances are built one by one (it has children or
/// references), [`GiveUp::Instances`] when the careful path is to report the name.
pub(super) fn pristine_group<'a>(
    load: &mut Load<'_, 'a>,
    name: &'a str,
) -> Result<Option<usize>, GiveUp> {
    // Levels are mostly a few archetypes: the one met last is compared, not hashed.
    if let Some((last, group)) = load.pristine.last_name {
        if last == name {
            return Ok(group);
        }
    }
    if let Some(group) = load.pristine.by_name.get(name) {
        load.pristine.last_name = Some((name, *group));
        return Ok(*group);
    }
    let probe = Entry {
        id: StableId(0),
        offset: 0,
        archetype: Some(Cow::Borrowed(name)),
        child: None,
        name_spans: (0..0, 0..0),
        components: Vec::new(),
    };
    let plan = plan_entry(load.context, &probe, load.head.nodes.as_ref());
    let plan = plan.map_err(|_| GiveUp::Instances)?;
    if plan.left_out.is_some() {
        return Err(GiveUp::Instances);
    }
    let (marker, archetype, node) = plan.instance.ok_or(GiveUp::Instances)?;
    // An archetype written by a former name: its instances are planned one by one, where the
    // rename is reported.
    let single = plan.renamed.is_empty()
        && archetype.compiled.as_ref().is_some_and(|compiled| {
            compiled.nodes.len() == 1 && compiled.nodes[0].with_refs.is_empty()
        });
    let group = (single && node == 0).then(|| {
        load.pristine.groups.push(PristineGroup {
            marker,
            archetype,
            ids: Vec::new(),
            handles: Vec::new(),
        });
        load.pristine.groups.len() - 1
    });
    load.pristine.by_name.insert(name, group);
    load.pristine.last_name = Some((name, group));
    Ok(group)
}

/// Puts the instances of one-entity archetypes into the world on their handles: a column
/// batch per archetype (see [`spawn_archetype_batch`]), its values cloned into each column as
/// `spawn_many` fills them, or decoded into it for diffed instances; or, when hecs's free list
/// still holds IDs after the reservations, one entity at a time (as the binary reader's plain
/// entities: see [`fast_load`](crate::scene::fast_load)).
fn spawn_pristine(load: &mut Load<'_, '_>, world: &mut World) -> Result<(), GiveUp> {
    if load.pristine.groups.is_empty() {
        return Ok(());
    }
    let registry = load.context.registry;
    world.flush();
    let by_batch = world.freelist().len() == 0;
    let groups = std::mem::take(&mut load.pristine.groups);
    if !by_batch {
        let mut builder = EntityBuilder::new();
        for group in &groups {
            let node = single_node(group)?;
            for (id, handle) in group.ids.iter().zip(&group.handles) {
                for (component, typed) in &node.typed {
                    registry.ops(*component).add_to_builder(typed, &mut builder);
                }
                let identity = Identity::instance(*id, group.marker);
                commit::entity(world, Some(*handle), identity, &mut builder)
                    .map_err(|_| GiveUp::BatchMismatch)?;
            }
        }
    }
    spawn_diffed(load, world, &groups, by_batch)
}

/// Puts the instances of [`DiffedGroup`]s into the world on their handles, each diffed value
/// decoded straight into its column, references read as stable IDs: with their archetype's
/// untouched instances, a batch per archetype (`by_batch`), or one entity at a time after them
/// (see [`spawn_pristine`]).
fn spawn_diffed(
    load: &mut Load<'_, '_>,
    world: &mut World,
    groups: &[PristineGroup],
    by_batch: bool,
) -> Result<(), GiveUp> {
    let mut diffed = std::mem::take(&mut load.pristine.diffed);
    if diffed.is_empty() && !by_batch {
        return Ok(());
    }
    let registry = load.context.registry;
    let mut shapes = std::mem::take(&mut load.pristine.shapes);
    // The map is lent to the decoders' mapper and taken back after.
    let ids = Arc::new(std::mem::take(&mut load.refs.ids));
    let mapper = LoadRefs {
        ids: ids.clone(),
        // Postcard says nothing of its own: references are read as the encoding writes them.
        wire: match load.wire {
            RefWire::Number => RefWire::Number,
            _ => RefWire::Any,
        },
        instance: None,
    };
    let (spawned, _) = with_mapper(mapper, || {
        for group in &mut diffed {
            let pristine = groups.get(group.archetype).ok_or(GiveUp::Instances)?;
            decode_patches(load.context, pristine, group, &mut shapes)?;
        }
        if !by_batch {
            return diffed.iter_mut().try_for_each(|group| {
                let pristine = groups.get(group.archetype).ok_or(GiveUp::Instances)?;
                spawn_diffed_one_by_one(registry, world, pristine, group)
            });
        }
        // Each archetype's diffed groups, in the order met.
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
        for (at, group) in diffed.iter().enumerate() {
            (members.get_mut(group.archetype).ok_or(GiveUp::Instances)?).push(at);
        }
        groups
            .iter()
            .zip(&members)
            .try_for_each(|(pristine, members)| {
                spawn_archetype_batch(registry, world, pristine, &mut diffed, members)
            })
    });
    load.refs.ids = Arc::try_unwrap(ids).unwrap_or_else(|ids| (*ids).clone());
    spawned
}

/// Decodes the JSON merge patches of a [`DiffedGroup`], each merged onto its archetype's
/// value, and finds the override shapes of their instances: each read by [`parse_patch`] and
/// decoded by [`decode_instance_value`], as the careful path reads and decodes it.
/// [`GiveUp::Value`] for a patch that does not read or decode, or names a field its type does
/// not have: the careful path says why, or what it warns of.
fn decode_patches(
    context: &Context<'_>,
    pristine: &PristineGroup,
    group: &mut DiffedGroup<'_>,
    shapes: &mut ShapesAtHand,
) -> Result<(), GiveUp> {
    let Some(resolved) = pristine.archetype.resolved.entity_at("") else {
        return Err(GiveUp::Instances);
    };
    let node = single_node(pristine)?;
    let stride = group.components.len();
    let max_depth = context.options.limits.max_depth;
    for (row, overrides) in group.overrides.iter_mut().enumerate() {
        if overrides.is_some() {
            continue;
        }
        let mut shape = Map::new();
        for (k, component) in group.components.iter().enumerate() {
            let value = &mut group.values[row * stride + k];
            let Diffed::Patch(text) = value else {
                continue;
            };
            let name = context.registry.name(*component);
            let patch = parse_patch(text, max_depth).map_err(|_| GiveUp::Value)?;
            let merged = merge_patch::merged(resolved.components.get(name), &patch);
            let base = node.typed.iter().find(|(c, _)| c == component);
            let ops = context.registry.ops(*component);
            let (typed, unknown) = decode_instance_value(
                context.registry,
                *component,
                &merged,
                Some(&patch),
                base.map(|(_, typed)| typed),
                |value, unknown| ops.decode(value, unknown),
            );
            let typed = typed.map_err(|_| GiveUp::Value)?;
            if !unknown.is_empty() {
                return Err(GiveUp::Value);
            }
            shape.insert(name.to_string(), override_shape(&patch));
            *value = Diffed::Typed(typed);
        }
        *overrides = Some(shapes.intern(context.library.override_shapes(), shape));
    }
    Ok(())
}

/// The archetype entity of a pristine group's archetype.
fn single_node(pristine: &PristineGroup) -> Result<&CompiledNode, GiveUp> {
    let compiled = pristine.archetype.compiled.as_ref();
    compiled
        .and_then(|c| c.nodes.first())
        .ok_or(GiveUp::Instances)
}

/// The instances of one archetype as one column batch: its untouched ones, then those of its
/// [`DiffedGroup`]s `members` (indices into `diffed`). They all have the same components (an
/// instance's overrides are named by its marker), so one hecs archetype holds them, and one
/// batch of their total fills it at its size: a second batch into it would grow it by
/// doubling.
fn spawn_archetype_batch(
    registry: &ComponentRegistry,
    world: &mut World,
    pristine: &PristineGroup,
    diffed: &mut [DiffedGroup<'_>],
    members: &[usize],
) -> Result<(), GiveUp> {
    let node = single_node(pristine)?;
    let rows = |group: &DiffedGroup<'_>| u32::try_from(group.handles.len());
    let untouched = u32::try_from(pristine.handles.len()).map_err(|_| GiveUp::TooLarge)?;
    let mut count = untouched;
    for &at in members {
        let group = diffed.get(at).ok_or(GiveUp::Instances)?;
        let known = |component| node.typed.iter().any(|(c, _)| c == component);
        if !group.components.iter().all(known) {
            // A diffed component the archetype does not have: not this batch's column.
            return Err(GiveUp::BatchMismatch);
        }
        let more = rows(group).map_err(|_| GiveUp::TooLarge)?;
        count = count.checked_add(more).ok_or(GiveUp::TooLarge)?;
    }
    if count == 0 {
        return Ok(());
    }
    let mut batch = node.batch_type(registry).into_batch(count);
    for (component, typed) in &node.typed {
        let ops = registry.ops(*component);
        ops.fill_column(typed, &mut batch, untouched);
        for &at in members {
            let group = diffed.get_mut(at).ok_or(GiveUp::Instances)?;
            let Ok(k) = group.components.binary_search(component) else {
                let more = rows(group).map_err(|_| GiveUp::TooLarge)?;
                ops.fill_column(typed, &mut batch, more);
                continue;
            };
            let stride = group.components.len();
            let mut sink = ops.postcard_sink(&batch).ok_or(GiveUp::BatchMismatch)?;
            for value in group.values.iter_mut().skip(k).step_by(stride) {
                match std::mem::replace(value, Diffed::Taken) {
                    Diffed::Postcard(bytes) => sink.push_postcard(bytes)?,
                    Diffed::Typed(typed) => sink.push_typed(typed)?,
                    Diffed::Patch(_) | Diffed::Taken => return Err(GiveUp::BatchMismatch),
                }
            }
        }
    }
    let changed = || members.iter().filter_map(|&at| diffed.get(at));
    {
        let mut identities = Identities::of(&batch).ok_or(GiveUp::BatchMismatch)?;
        for id in &pristine.ids {
            identities.push(Identity::instance(*id, pristine.marker))?;
        }
        for group in changed() {
            for (id, overrides) in group.ids.iter().zip(&group.overrides) {
                let overrides = overrides.ok_or(GiveUp::BatchMismatch)?;
                let marker = ArchetypeInstance {
                    overrides,
                    ..pristine.marker
                };
                identities.push(Identity::instance(*id, marker))?;
            }
        }
    }
    let handles: Cow<'_, [Entity]> = match members {
        [] => Cow::Borrowed(&pristine.handles),
        _ => (pristine.handles.iter())
            .chain(changed().flat_map(|group| &group.handles))
            .copied()
            .collect(),
    };
    commit::batch_at(world, &handles, batch, count)?;
    Ok(())
}

/// A [`DiffedGroup`] one entity at a time (hecs's free list holds IDs: see
/// [`spawn_pristine`]).
fn spawn_diffed_one_by_one(
    registry: &ComponentRegistry,
    world: &mut World,
    pristine: &PristineGroup,
    group: &mut DiffedGroup<'_>,
) -> Result<(), GiveUp> {
    let node = single_node(pristine)?;
    let stride = group.components.len();
    let mut builder = EntityBuilder::new();
    let rows = group.ids.iter().zip(&group.handles).zip(&group.overrides);
    for (row, ((id, handle), record)) in rows.enumerate() {
        for (component, typed) in &node.typed {
            let ops = registry.ops(*component);
            let Ok(k) = group.components.binary_search(component) else {
                ops.add_to_builder(typed, &mut builder);
                continue;
            };
            match std::mem::replace(&mut group.values[row * stride + k], Diffed::Taken) {
                Diffed::Postcard(bytes) => ops
                    .read_postcard_into(bytes, &mut builder)
                    .map_err(|_| GiveUp::Value)?,
                Diffed::Typed(typed) => ops.add_owned(typed, &mut builder),
                Diffed::Patch(_) | Diffed::Taken => return Err(GiveUp::BatchMismatch),
            }
        }
        let overrides = record.ok_or(GiveUp::BatchMismatch)?;
        let marker = ArchetypeInstance {
            overrides,
            ..pristine.marker
        };
        let identity = Identity::instance(*id, marker);
        commit::entity(world, Some(*handle), identity, &mut builder)?;
    }
    Ok(())
}

/// The stable ID the entry with stable ID `id` gets ([`SceneIds::assign`]). `None` for an ID
/// already in the world without [`IdConflict::Remap`](crate::scene::IdConflict::Remap).
pub(super) fn own_id(load: &mut Load<'_, '_>, id: StableId) -> Option<StableId> {
    load.ids.assign(id).ok()
}

/// Gives the entry with stable ID `id` its handle (the next reserved one) and its
/// [`own_id`]. `None` for a duplicate ID, or one already in the world without
/// [`IdConflict::Remap`](crate::scene::IdConflict::Remap).
pub(super) fn take_handle(load: &mut Load<'_, '_>, id: StableId) -> Option<Entity> {
    own_id(load, id)?;
    // Read before the reference mapper is installed: the state is the load's own.
    let state = &mut load.refs;
    // An ID twice.
    if !state.ids.is_new(&id) {
        return None;
    }
    let handle = state.pool.pop()?;
    state.ids.insert(id, handle);
    Some(handle)
}

/// Where the one-pass route places what it reports: by byte offset (the line and column of
/// JSON worked out when reported).
fn one_pass_source(wire: RefWire) -> Source<'static> {
    match wire {
        RefWire::Number => Source::Binary,
        _ => Source::JsonOffsets,
    }
}

/// Archetype instances, once every entity has its handle: built by [`build_instances`], then
/// inserted. The one-pass route plans the instances it kept here, warning of the former names
/// they were written by and the entries left out, placed by byte offset (and gives up on one
/// the careful route is to report or warn of); a careful load's entries come planned, each
/// error placed.
fn build_all_instances(load: &mut Load<'_, '_>, world: &mut World) -> Result<(), GiveUp> {
    let context = load.context;
    let planned;
    let one_pass = one_pass_source(load.wire);
    let place_one_pass = move |error: &mut SceneError, at: usize| one_pass.place(error, at);
    let (entries, plans, handles, source, place): (_, &[Plan], &[Entity], _, _) = match load.careful
    {
        Some(checked) => (
            checked.entries,
            checked.plans,
            &load.entities,
            checked.source,
            checked.place,
        ),
        None if load.instances.is_empty() => return Ok(()),
        None => {
            planned = (load.instances.iter())
                .map(|entry| plan_entry(context, entry, load.head.nodes.as_ref()).ok())
                .collect::<Option<Vec<_>>>()
                .ok_or(GiveUp::Instances)?;
            load.changes = report_changes(context, &load.instances, &planned, one_pass)?;
            let place: &dyn Fn(&mut SceneError, usize) = &place_one_pass;
            let handles = &load.instance_handles;
            (
                &load.instances[..],
                &planned[..],
                &handles[..],
                one_pass,
                place,
            )
        }
    };
    // The map is lent to the instance builder's mappers (no copy) and taken back after.
    let ids = Arc::new(std::mem::take(&mut load.refs.ids));
    let mut follow = Follow::new(context, load.head.nodes.as_ref(), plans);
    follow.spare = world
        .reserve_entities(follow.handles_needed(plans))
        .collect();
    let mut inserted = true;
    let build = Build {
        context,
        entries,
        plans,
        handles,
        source,
        place,
        remapped: load.ids.remapped(),
    };
    let built = build_instances(
        &build,
        &ids,
        &mut follow,
        &mut |handle, identity, builder: &mut EntityBuilder| {
            inserted &= commit::entity(world, Some(handle), identity, builder).is_ok();
        },
    );
    load.followed = follow.finish();
    load.refs.ids = Arc::try_unwrap(ids).unwrap_or_else(|ids| (*ids).clone());
    if load.careful.is_none() && plans.iter().any(|plan| plan.left_out.is_some()) {
        let (entities, by_id) = (&mut load.entities, &mut load.refs.ids);
        leave_out(world, entries, plans, entities, by_id);
    }
    match (built, inserted, load.careful.is_some()) {
        (Ok(()), true, _) => Ok(()),
        (Err(error), _, true) => refuse(load, error),
        _ => Err(GiveUp::Instances),
    }
}

/// What the one-pass route's plans change from the file, as the careful reader reports it:
/// the archetypes and children written by a former name, then the entries left out (a child
/// its archetype no longer has), each warned of, placed by `source`. [`GiveUp::Instances`]
/// where [`RemovedChildren::Error`](crate::scene::RemovedChildren::Error) makes one an error
/// (the careful path reports it).
fn report_changes(
    context: &Context<'_>,
    entries: &[Entry<'_>],
    plans: &[Plan],
    source: Source<'_>,
) -> Result<Vec<SceneChange>, GiveUp> {
    let mut changes = report_renames(context, entries, plans, source);
    for (entry, plan) in entries.iter().zip(plans) {
        if let Some(change) = &plan.left_out {
            warn_left_out(context, entry, change, source).map_err(|_| GiveUp::Instances)?;
            changes.push(change.clone());
        }
    }
    Ok(changes)
}
