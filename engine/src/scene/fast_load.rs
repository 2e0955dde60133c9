//! The fast path of loading a scene, for files in the layout this library writes (JSON or
//! binary): each plain entity's component values are decoded straight from the text or bytes,
//! once.
//!
//! The careful path ([`scene_load`](crate::scene::load)) reads the whole document first,
//! capturing every component value as raw text or bytes, and decodes in a second pass; that is
//! what lets it place every error exactly. Most files are fine, so this path reads them once
//! instead and gives up at the first thing it does not expect (a syntax error, an unknown key
//! or component, an escaped name, a value that does not decode, a dangling reference, a
//! duplicate or colliding ID, keys out of the written order, a binary file cut short, ...).
//! Giving up undoes everything it did to the world, and the careful path then reads the file
//! again and reports the problem.
//!
//! Invariant: whatever this path accepts, the careful path accepts too and builds the same
//! entities (tests load each fixture both ways); it only refuses more.
//!
//! JSON is read in one pass, references resolved as they are met: a reference to an entity
//! further down the file takes a handle reserved ahead (hecs reserves handles without the world
//! borrowed mutably), and that entity is inserted on that handle when it is reached. Binary is
//! read in two: the first skims the entries (IDs, archetypes, component names; every entry gets
//! a reserved handle), the second decodes every value straight into a hecs column batch per set
//! of components, so the entities go into the world a batch at a time. Archetype instances are
//! captured raw and built at the end. Instances of one-entity archetypes without references go
//! in a column batch per archetype and set of changed components: the archetype's values
//! cloned into each column, each changed value (a binary diff's value, or a JSON patch merged
//! onto the archetype's) decoded into its column. Every other instance needs every entity of
//! its instance first: it is built by the careful path's own code.

use std::borrow::Cow;

use std::sync::Arc;

use hecs::{ColumnBatchBuilder, ColumnBatchType, Entity, EntityBuilder, World};
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
use crate::scene::binary_entry::{
    read_component_head, read_entry_head, ComponentHead, EntryHead, MIN_ENTRY_BYTES,
};
use crate::scene::follow::{follow_archetypes, Follow, Followed};
use crate::scene::format::{
    is_readable_binary, open_binary, scene_keys as keys, BinaryReader, KIND_TYPED,
    SCENE_FORMAT_VERSION,
};
use crate::scene::id_index::IdIndex;
use crate::scene::instance_diff::{archetype_value_key, Diff};
use crate::scene::load::{
    build_instances, decode_instance_value, decode_payload_into, evolved_layouts, parse_patch,
    plan_entry, read_tables, report_unknown_shared_fields, roll_back, scene_component,
    scene_ref_id, shared_key, Build, Context, Entry, LoadRefs, LoadedScene, Payload, Plan,
    SceneError, SceneHead, Source, ValueAt,
};
use crate::scene::prepare_progress::{report_offset, REPORT_EVERY};
use crate::scene::scene_budget::SceneBudget;
use crate::scene::scene_ids::SceneIds;

/// Handles reserved for forward references at a time; a value that needs more is decoded again
/// after reserving more.
const RESERVE_AHEAD: u32 = 256;

/// Why the fast path handed a scene over to the careful path (which loads it, or reports its
/// problem, placed). The world is as it was either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GiveUp {
    /// Text or bytes not laid out as the library writes them: keys out of order, escapes,
    /// another format, something cut short or after the end, bytes that fail their checksum.
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
    /// A binary scene with values of a component that changed since it was saved (read by
    /// their saved layout).
    ChangedComponent,
    /// A reference to an entity the scene does not hold.
    DanglingReference,
    /// A shared value with a field its type does not have.
    UnknownSharedField,
    /// The archetype instances: an entry with a problem, one to leave out or named by a former
    /// name, or one that could not be built.
    Instances,
    /// Something to warn about (the careful path reports it, placed).
    Warning,
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
/// (IDs, names), each with its plan and its reserved handle, and how errors are placed in the
/// file.
pub(super) struct Checked<'c> {
    pub entries: &'c [Entry<'c>],
    pub plans: &'c [Plan],
    pub source: Source<'c>,
    pub place: &'c dyn Fn(&mut SceneError, usize),
    /// Where each shared value is (byte offset).
    pub shared_at: &'c FxHashMap<u64, usize>,
}

impl From<PushError> for GiveUp {
    fn from(error: PushError) -> Self {
        match error {
            PushError::Invalid(..) => GiveUp::Value,
            PushError::ColumnFull | PushError::WrongType => GiveUp::BatchMismatch,
        }
    }
}

/// Loads a JSON scene in one pass, or returns `None` (with the world as it was) for the careful
/// path to load or to report.
pub(super) fn load_json_fast(
    context: &Context<'_>,
    world: &mut World,
    text: &str,
) -> Option<LoadedScene> {
    json_fast(context, world, text).ok()
}

/// [`load_json_fast`], saying why it gave up.
fn json_fast(context: &Context<'_>, world: &mut World, text: &str) -> Result<LoadedScene, GiveUp> {
    let ids = one_pass_ids(context, world);
    let loaded = load_fast(context, world, (RefWire::Text, ids, None), |load, world| {
        read_json(load, &mut Scanner { text, pos: 0 }, world)
    });
    loaded.map_err(Stopped::reason)
}

/// Loads a binary scene in one pass, or returns `None` (with the world as it was) for the
/// careful path to load or to report.
pub(super) fn load_binary_fast(
    context: &Context<'_>,
    world: &mut World,
    bytes: &[u8],
) -> Option<LoadedScene> {
    binary_fast(context, world, bytes).ok()
}

/// [`load_binary_fast`], saying why it gave up.
fn binary_fast(
    context: &Context<'_>,
    world: &mut World,
    bytes: &[u8],
) -> Result<LoadedScene, GiveUp> {
    let ids = one_pass_ids(context, world);
    let loaded = load_fast(
        context,
        world,
        (RefWire::Number, ids, None),
        |load, world| read_binary(load, bytes, world),
    );
    loaded.map_err(Stopped::reason)
}

/// The rule the one-pass route gives stable IDs by.
fn one_pass_ids<'c>(context: &'c Context<'c>, world: &World) -> SceneIds<'c> {
    let policy = context.options.on_id_conflict;
    SceneIds::new(world, policy, context.library.spawn_rng())
}

impl Stopped {
    /// Why the one-pass route gave up (it refuses nothing itself).
    fn reason(self) -> GiveUp {
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
    let wire = match checked.source {
        Source::Binary => RefWire::Number,
        Source::Json(_) | Source::Unplaced => RefWire::Text,
    };
    let loaded = load_fast(context, world, (wire, ids, Some(checked)), |load, world| {
        load.head = head;
        // Every entry's handle first, so a reference to any of them resolves (and one to an
        // entity the scene does not hold is refused where it is).
        let handles = world.reserve_entities(checked.entries.len() as u32);
        let entries = checked.entries.iter();
        load.refs.pending = entries.map(|entry| entry.id).zip(handles).collect();
        read_entities_with(load, world, shared, |load, world| {
            read_checked(load, checked, world)
        })
    });
    loaded.map_err(|stopped| match stopped {
        Stopped::Refused(error) => error,
        // Not expected: the entries were checked.
        Stopped::GaveUp(why) => context.error(
            DiagnosticCode::Malformed,
            format!("the scene could not be built ({why:?})"),
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
    let build = Build {
        context,
        entries: checked.entries,
        plans: checked.plans,
        handles: &[],
        source: checked.source,
        place: checked.place,
        remapped: &FxHashMap::default(),
    };
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
                    decode_payload_into(&build, at, payload, *component, &mut builder)
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
fn load_fast<'c, 'a>(
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
    };
    let loaded = read(&mut load, world);
    let loaded = match careful {
        Some(_) => with_all_errors(&mut load, loaded),
        // This path does not place what it warns about: the careful path reports it, placed.
        None => match (loaded, !context.take_warnings().is_empty()) {
            (Ok(()), true) => Err(GiveUp::Warning),
            (read, _) => read,
        },
    };
    let mut state = std::mem::take(&mut load.refs);
    // Handles reserved ahead and never taken are released either way.
    roll_back(world, state.pool.drain(..));
    if let Err(why) = loaded {
        let handles = (state.ids.values()).chain(state.pending.values()).copied();
        roll_back(world, handles.chain(load.followed.handles()));
        return Err(match load.refused {
            Some(error) => Stopped::Refused(error),
            None => Stopped::GaveUp(why),
        });
    }
    let mut loaded = LoadedScene {
        entities: load.entities,
        by_id: state.ids,
        remapped: load.ids.into_remapped(),
        warnings: Vec::new(),
        changes: Vec::new(),
        meta: None,
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
struct Load<'c, 'a> {
    context: &'c Context<'c>,
    /// How references are written in this encoding.
    wire: RefWire,
    /// The stable ID each entity gets.
    ids: SceneIds<'c>,
    /// Stable ID → entity. Lent to the reference mapper while values decode (reached through
    /// [`scan_state`] then: all of a JSON scene's one pass, a binary scene's second), given
    /// back after.
    refs: RefState,
    /// Every entity of the scene, in the file's order.
    entities: Vec<Entity>,
    /// What the scene may still hold (entries and component values).
    budget: SceneBudget,
    /// The scene's `meta` and archetype table.
    head: SceneHead,
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
struct RefState {
    /// The entries read so far.
    ids: IdIndex,
    /// IDs referred to but not reached yet, with the handle reserved for each.
    pending: FxHashMap<StableId, Entity>,
    /// Handles reserved ahead: for forward references (JSON), or one per entry, taken in
    /// order (binary).
    pool: Vec<Entity>,
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
fn scan_state<R>(f: impl FnOnce(&mut RefState) -> R) -> Option<R> {
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
            (RefIn::Text(text), _) if text.starts_with('#') => {
                // Only an archetype's values refer to its entities by path.
                return Err(MapError::ArchetypeRelative(text.to_string()));
            }
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
fn read_entities_with<'a>(
    load: &mut Load<'_, 'a>,
    world: &mut World,
    shared: FxHashMap<u64, String>,
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
    // A shared value with a field its type does not have: the careful path reports it.
    built.and_then(
        |()| match (table.unknown_fields().is_empty(), load.careful) {
            (true, _) => Ok(()),
            (false, None) => Err(GiveUp::UnknownSharedField),
            (false, Some(checked)) => {
                let (context, shared_at) = (load.context, checked.shared_at);
                match report_unknown_shared_fields(context, &table, shared_at, checked.place) {
                    Ok(()) => Ok(()),
                    Err(error) => refuse(load, error),
                }
            }
        },
    )
}

/// `{"format": 2, ("shared": {...},)? "entities": [...]}` and nothing after it.
fn read_json<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
) -> Result<(), GiveUp> {
    let shared = read_json_head(load, scan)?;
    read_entities_with(load, world, shared, |load, world| {
        read_json_entities(load, scan, world)
    })?;
    scan.eat(b'}')?;
    scan.at_end().then_some(()).ok_or(LAYOUT)
}

/// Everything before the entity list: the format, `meta`, the archetype table (into the
/// load's head) and the shared table (returned), up to the list's `:`.
fn read_json_head<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
) -> Result<FxHashMap<u64, String>, GiveUp> {
    scan.eat(b'{')?;
    scan.key(keys::FORMAT)?;
    scan.literal(&SCENE_FORMAT_VERSION.to_string())?;
    scan.eat(b',')?;
    let mut shared = FxHashMap::default();
    let mut key = scan.string()?;
    if key == keys::META {
        scan.eat(b':')?;
        load.head.meta = Some(serde_json::from_str(scan.raw_value()?).map_err(|_| LAYOUT)?);
        scan.eat(b',')?;
        key = scan.string()?;
    }
    if key == keys::ARCHETYPES {
        scan.eat(b':')?;
        load.head.nodes = Some(serde_json::from_str(scan.raw_value()?).map_err(|_| LAYOUT)?);
        scan.eat(b',')?;
        key = scan.string()?;
    }
    if key == keys::SHARED {
        scan.eat(b':')?;
        scan.eat(b'{')?;
        if !scan.eat_empty(b'}')? {
            loop {
                let name = scan.string()?;
                scan.eat(b':')?;
                let value = scan.raw_value()?;
                shared.insert(shared_key(name).ok_or(LAYOUT)?, value.to_string());
                if scan.eat_close(b'}')? {
                    break;
                }
            }
        }
        scan.eat(b',')?;
        key = scan.string()?;
    }
    if key != keys::ENTITIES {
        return Err(LAYOUT);
    }
    scan.eat(b':')?;
    Ok(shared)
}

/// The entity list; each plain entity is complete in the world when its entry ends.
fn read_json_entities<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
) -> Result<(), GiveUp> {
    scan.eat(b'[')?;
    if scan.eat_empty(b']')? {
        return Ok(());
    }
    let mut builder = EntityBuilder::new();
    let mut seen: Vec<&'a str> = Vec::new();
    loop {
        read_json_entity(load, scan, world, &mut builder, &mut seen)?;
        load.budget.take_entities(1).map_err(|_| GiveUp::TooLarge)?;
        // A cancelled preparation stops here (the careful path then does not start).
        let count = load.entities.len();
        if count.is_multiple_of(REPORT_EVERY) && !report_offset(scan.pos) {
            return Err(GiveUp::Cancelled);
        }
        if scan.eat_close(b']')? {
            return Ok(());
        }
    }
}

/// One entry: `{"id": ..., ("archetype": ...,)? ("child": ...,)? ("components": {...})?}`.
fn read_json_entity<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
    builder: &mut EntityBuilder,
    seen: &mut Vec<&'a str>,
) -> Result<(), GiveUp> {
    scan.eat(b'{')?;
    scan.key(keys::ID)?;
    let offset = scan.value_start();
    let id = scan.string()?.parse::<StableId>().map_err(|_| LAYOUT)?;
    let mut names = Names::default();
    let mut key = read_json_names(scan, &mut names)?;
    // Most entries of a level: an untouched instance, its archetype's name and nothing else.
    if let (Some(archetype), None, "") = (names.archetype, names.child, key) {
        return finish_untouched(load, world, (id, offset), archetype);
    }
    let mut instance = names.entry(id, offset);
    seen.clear();
    reserve_ahead(world);
    if key == keys::COMPONENTS {
        scan.eat(b':')?;
        read_json_components(load, scan, world, builder, seen, instance.as_mut())?;
        key = scan.next_key(b'}')?;
    }
    // Anything else (an unknown key, keys out of order) is for the careful path.
    if !key.is_empty() {
        return Err(LAYOUT);
    }
    finish_entity(load, world, id, instance, builder)
}

/// One component value of a plain entity, decoded from the text into `builder`.
fn read_json_component<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &World,
    name: &str,
    builder: &mut EntityBuilder,
) -> Result<(), GiveUp> {
    let component = scene_component(load.context.registry, name).ok_or(GiveUp::Component)?;
    let start = scan.value_start();
    let rest = scan.text.get(start..).ok_or(LAYOUT)?;
    if rest.starts_with("null") {
        // `null` removes an archetype's component; a plain entity simply lacks it.
        let value = scan.raw_value()?;
        return (value == "null").then_some(()).ok_or(LAYOUT);
    }
    let ops = load.context.registry.ops(component);
    let decoded = decode(world, || ops.read_json_prefix_into(rest, builder));
    scan.pos = start + decoded.ok_or(GiveUp::Value)?;
    Ok(())
}

/// Counts one more component value; `false` once the scene holds more than the limit allows
/// (the careful path reports it).
fn take_value(load: &mut Load<'_, '_>) -> bool {
    load.budget.take_values(1).is_ok()
}

/// Runs `decode` (one component value); if it meets more forward references than handles
/// were reserved ahead ([`reserve_ahead`]), reserves more and runs it again (references already
/// read keep their handles). `None` if it fails otherwise.
fn decode<R>(world: &World, mut decode: impl FnMut() -> Option<R>) -> Option<R> {
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
fn reserve_ahead(world: &World) {
    scan_state(|state| {
        if state.pool.len() < RESERVE_AHEAD as usize / 4 {
            state.pool.extend(world.reserve_entities(RESERVE_AHEAD));
        }
    });
}

/// Ends an entry: a plain entity (its components in `builder`) goes into the world now, on the
/// handle reserved for it if something referred to it earlier; an archetype instance gets a
/// handle and waits for [`build_all_instances`].
fn finish_entity<'a>(
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

/// Ends an entry that is an untouched instance of an archetype (its name as written, with
/// where it is) as [`finish_entity`] ends any other, but with no entry made for it when it
/// joins its archetype's batch (most entries of a level).
fn finish_untouched<'a>(
    load: &mut Load<'_, 'a>,
    world: &mut World,
    (id, offset): (StableId, usize),
    archetype: (&'a str, usize),
) -> Result<(), GiveUp> {
    let own_id = own_id(load, id).ok_or(GiveUp::Id)?;
    let handle =
        scan_state(|state| place_instance(state, world, id)).ok_or(GiveUp::MapperMissing)??;
    load.entities.push(handle);
    let group = pristine_group(load, archetype.0)?;
    if group.is_some_and(|group| join_pristine(load, group, own_id, handle)) {
        return Ok(());
    }
    // An archetype whose instances are built one by one: as any other entry.
    let names = Names {
        archetype: Some(archetype),
        child: None,
    };
    let entry = names.entry(id, offset).ok_or(LAYOUT)?;
    take_instance(load, entry, own_id, handle)
}

/// The handle of the archetype instance with stable ID `id`: the one reserved for it if
/// something referred to it earlier, or a new reserved one.
#[inline]
fn place_instance(state: &mut RefState, world: &World, id: StableId) -> Result<Entity, GiveUp> {
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
    builder.add(own_id);
    let handle = match referred_to(state, id) {
        Some(handle) => {
            world
                .insert(handle, builder.build())
                .map_err(|_| GiveUp::Id)?;
            handle
        }
        // Not `spawn_at`: it searches hecs's whole free list for the handle.
        None => world.spawn(builder.build()),
    };
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
/// [`GiveUp::Instances`] for an entry the careful path is to report (an unknown archetype, a
/// former name).
fn take_instance<'a>(
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
fn join_pristine(load: &mut Load<'_, '_>, group: usize, own_id: StableId, handle: Entity) -> bool {
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
fn pristine_group<'a>(load: &mut Load<'_, 'a>, name: &'a str) -> Result<Option<usize>, GiveUp> {
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
    if plan.left_out.is_some() || !plan.renamed.is_empty() {
        return Err(GiveUp::Instances);
    }
    let (marker, archetype, node) = plan.instance.ok_or(GiveUp::Instances)?;
    let single = archetype.compiled.as_ref().is_some_and(|compiled| {
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
/// still holds IDs after the reservations, one entity at a time (see [`spawn_binary`]).
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
                builder.add(group.marker).add(*id);
                world
                    .insert(*handle, builder.build())
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
        let mut ids = batch.writer::<StableId>().ok_or(GiveUp::BatchMismatch)?;
        let mut markers = (batch.writer::<ArchetypeInstance>()).ok_or(GiveUp::BatchMismatch)?;
        for id in &pristine.ids {
            if !(ids.push(*id).is_ok() && markers.push(pristine.marker).is_ok()) {
                return Err(GiveUp::BatchMismatch);
            }
        }
        for group in changed() {
            for (id, overrides) in group.ids.iter().zip(&group.overrides) {
                let overrides = overrides.ok_or(GiveUp::BatchMismatch)?;
                let marker = ArchetypeInstance {
                    overrides,
                    ..pristine.marker
                };
                if !(ids.push(*id).is_ok() && markers.push(marker).is_ok()) {
                    return Err(GiveUp::BatchMismatch);
                }
            }
        }
    }
    let batch = batch.build().map_err(|_| GiveUp::BatchMismatch)?;
    let handles: Cow<'_, [Entity]> = match members {
        [] => Cow::Borrowed(&pristine.handles),
        _ => (pristine.handles.iter())
            .chain(changed().flat_map(|group| &group.handles))
            .copied()
            .collect(),
    };
    world.spawn_column_batch_at(&handles, batch);
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
        builder.add(marker).add(*id);
        world
            .insert(*handle, builder.build())
            .map_err(|_| GiveUp::BatchMismatch)?;
    }
    Ok(())
}

/// The binary layout (see [`scene_format`](crate::scene::format)), in the current format.
///
/// Two passes over the entries. The first ([`scan_binary`]) reads their IDs, archetypes and
/// component names: every entry gets its handle (reserved), and plain entities are counted by
/// their set of components. The second ([`spawn_binary`]) decodes the values, every reference
/// resolving as it is read, each straight into its column of a hecs column batch sized by the
/// count, and spawns each batch on its handles at once.
fn read_binary<'a>(
    load: &mut Load<'_, 'a>,
    bytes: &'a [u8],
    world: &mut World,
) -> Result<(), GiveUp> {
    let (mut reader, version) = open_binary(bytes).map_err(|_| LAYOUT)?;
    if !is_readable_binary(version) {
        return Err(LAYOUT);
    }
    let mut header = read_tables(&mut reader, version).map_err(|_| LAYOUT)?;
    // Values of a component that changed since the save are read by their saved layout: the
    // careful path does that.
    let evolved = evolved_layouts(load.context.registry, &header.components, &header.layouts);
    if evolved.iter().any(Option::is_some) {
        return Err(GiveUp::ChangedComponent);
    }
    load.head = SceneHead {
        meta: header.meta.take(),
        nodes: header.nodes.take(),
    };
    let count = reader
        .count("entity count", MIN_ENTRY_BYTES)
        .map_err(|_| LAYOUT)?;
    (load.budget.take_entities(count)).map_err(|_| GiveUp::TooLarge)?;
    let tables = Tables {
        plain: header
            .components
            .iter()
            .map(|name| scene_component(load.context.registry, name))
            .collect(),
        names: header.components,
        archetypes: header.archetypes,
    };
    load.entities.reserve(count);
    load.refs.ids = IdIndex::with_capacity(count);
    // Every entry's handle, taken in order; whatever is left when the load gives up is
    // released with the pool.
    let mut handles: Vec<Entity> = world
        .reserve_entities(u32::try_from(count).map_err(|_| GiveUp::TooLarge)?)
        .collect();
    handles.reverse();
    load.refs.pool = handles;
    // The first pass decodes nothing: it needs no reference mapper or shared table.
    let entries = reader.clone();
    let groups = scan_binary(load, &mut reader, count, &tables)?;
    if !reader.is_at_end() {
        return Err(LAYOUT);
    }
    read_entities_with(load, world, header.shared, |load, world| {
        spawn_binary(load, world, entries, &tables, &groups)
    })
}

/// The header's name tables of a binary scene.
struct Tables<'a> {
    names: Vec<&'a str>,
    /// The component each name is, if a scene may hold it.
    plain: Vec<Option<ComponentId>>,
    archetypes: Vec<&'a str>,
}

/// The next entry's fixed part ([`read_entry_head`]); gives up on anything it refuses.
#[inline(always)]
fn read_head<'a>(
    reader: &mut BinaryReader<'a>,
    tables: &Tables<'a>,
) -> Result<EntryHead<'a>, GiveUp> {
    read_entry_head(reader, &tables.archetypes).map_err(|_| LAYOUT)
}

/// The next component of an entry ([`read_component_head`]); gives up on anything it refuses.
#[inline(always)]
fn read_component<'a>(
    reader: &mut BinaryReader<'a>,
    tables: &Tables<'a>,
) -> Result<ComponentHead<'a>, GiveUp> {
    read_component_head(reader, tables.names.len()).map_err(|_| LAYOUT)
}

/// Plain entities of a binary scene with the same components (in the same order).
struct Group {
    components: Vec<ComponentId>,
    /// How many entities.
    len: u32,
}

/// What the first pass over a binary scene's entries found.
struct Groups {
    groups: Vec<Group>,
    /// Per entry, its group ([`INSTANCE`] for an archetype instance).
    group_of: Vec<u32>,
}

/// [`Groups::group_of`] an archetype instance.
const INSTANCE: u32 = u32::MAX;

/// The names an entry makes an archetype instance by, as written, each with where its value
/// starts.
#[derive(Clone, Copy, Default)]
struct Names<'a> {
    archetype: Option<(&'a str, usize)>,
    child: Option<(&'a str, usize)>,
}

impl<'a> Names<'a> {
    /// The archetype instance entry of entity `id` (at `offset`), if it names an archetype.
    fn entry(self, id: StableId, offset: usize) -> Option<Entry<'a>> {
        let span = |(name, at): (&str, usize)| at..at + name.len() + 2;
        let (archetype, at) = self.archetype?;
        Some(Entry {
            id,
            offset,
            archetype: Some(Cow::Borrowed(archetype)),
            child: self.child.map(|(child, _)| Cow::Borrowed(child)),
            name_spans: (
                span((archetype, at)),
                self.child.map_or(offset..offset, span),
            ),
            components: Vec::new(),
        })
    }
}

/// Reads the rest of an entry's first member after its ID up to its components: its
/// `archetype` and `child` (into `names`). Returns the key after them, `""` at the entry's end.
fn read_json_names<'a>(scan: &mut Scanner<'a>, names: &mut Names<'a>) -> Result<&'a str, GiveUp> {
    let mut key = scan.next_key(b'}')?;
    if key == keys::ARCHETYPE {
        scan.eat(b':')?;
        let at = scan.value_start();
        names.archetype = Some((scan.string()?, at));
        key = scan.next_key(b'}')?;
    }
    if key == keys::CHILD {
        // Only archetype instances have children.
        if names.archetype.is_none() {
            return Err(LAYOUT);
        }
        scan.eat(b':')?;
        let at = scan.value_start();
        names.child = Some((scan.string()?, at));
        key = scan.next_key(b'}')?;
    }
    Ok(key)
}

/// Reads an entity's `components` object: an archetype instance's values kept as text in its
/// entry, a plain entity's decoded into `builder` (`seen`: the names read, to refuse one
/// written twice).
fn read_json_components<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
    builder: &mut EntityBuilder,
    seen: &mut Vec<&'a str>,
    mut instance: Option<&mut Entry<'a>>,
) -> Result<(), GiveUp> {
    scan.eat(b'{')?;
    if scan.eat_empty(b'}')? {
        return Ok(());
    }
    loop {
        let name = scan.string()?;
        if seen.contains(&name) {
            return Err(GiveUp::Component);
        }
        if !take_value(load) {
            return Err(GiveUp::TooLarge);
        }
        seen.push(name);
        scan.eat(b':')?;
        match &mut instance {
            Some(entry) => {
                let at = scan.value_start();
                let value = scan.raw_value()?;
                let payload = if value == "null" {
                    Payload::Removed
                } else {
                    Payload::Json(value)
                };
                entry.components.push((Cow::Borrowed(name), at, payload));
            }
            None => read_json_component(load, scan, world, name, builder)?,
        }
        if scan.eat_close(b'}')? {
            return Ok(());
        }
    }
}

/// The first pass: gives every entry its handle, captures the archetype instances and counts
/// the plain entities by component set (keyed by their component name indices in the order
/// written, the same for every entity with those components as the library writes them).
fn scan_binary<'a>(
    load: &mut Load<'_, 'a>,
    reader: &mut BinaryReader<'a>,
    count: usize,
    tables: &Tables<'a>,
) -> Result<Groups, GiveUp> {
    let mut by_key: FxHashMap<Vec<usize>, u32> = FxHashMap::default();
    let mut found = Groups {
        groups: Vec::new(),
        group_of: Vec::with_capacity(count),
    };
    let mut key: Vec<usize> = Vec::new();
    for _ in 0..count {
        let head = read_head(reader, tables)?;
        if untouched_instance(load, &head)? {
            found.group_of.push(INSTANCE);
            continue;
        }
        let mut instance = match head.archetype {
            Some(archetype) => Some(Entry {
                id: head.id,
                offset: head.offset,
                archetype: Some(Cow::Borrowed(archetype)),
                child: (!head.child.is_empty()).then_some(Cow::Borrowed(head.child)),
                name_spans: (head.offset..head.offset, head.offset..head.offset),
                components: Vec::new(),
            }),
            None if head.child.is_empty() => None,
            None => return Err(LAYOUT),
        };
        key.clear();
        (load.budget.take_values(head.components)).map_err(|_| GiveUp::TooLarge)?;
        for _ in 0..head.components {
            let component = read_component(reader, tables)?;
            match &mut instance {
                Some(entry) => {
                    let max_depth = load.context.options.limits.max_depth;
                    push_instance_value(entry, tables, component, max_depth)?
                }
                // Nothing to remove from a plain entity; the careful path says so.
                None if component.kind != KIND_TYPED => return Err(LAYOUT),
                None => key.push(component.index),
            }
        }
        let handle = take_handle(load, head.id).ok_or(GiveUp::Id)?;
        load.entities.push(handle);
        if let Some(entry) = instance {
            let own_id = load.ids.get(head.id);
            take_instance(load, entry, own_id, handle)?;
            found.group_of.push(INSTANCE);
            continue;
        }
        let group = match by_key.get(key.as_slice()) {
            Some(group) => *group,
            None => new_group(&mut found, &mut by_key, &key, &tables.plain)?,
        };
        found.groups.get_mut(group as usize).ok_or(LAYOUT)?.len += 1;
        found.group_of.push(group);
    }
    Ok(found)
}

/// An untouched instance of a single-entity archetype (most entries of a level) straight into
/// its batch, given its handle, without an entry made for it; `false` for any other entry.
#[inline]
fn untouched_instance<'a>(load: &mut Load<'_, 'a>, head: &EntryHead<'a>) -> Result<bool, GiveUp> {
    let (Some(name), 0, "") = (head.archetype, head.components, head.child) else {
        return Ok(false);
    };
    let Some(group) = pristine_group(load, name)? else {
        return Ok(false);
    };
    let handle = take_handle(load, head.id).ok_or(GiveUp::Id)?;
    load.entities.push(handle);
    let own_id = load.ids.get(head.id);
    join_pristine(load, group, own_id, handle)
        .then_some(true)
        .ok_or(GiveUp::BatchMismatch)
}

/// Adds a component value (as [`read_component`] read it) to an archetype instance's entry.
/// [`GiveUp::Layout`] for a payload the format refuses (see [`ComponentHead::payload`]),
/// [`GiveUp::Component`] for a component written twice (the careful path's to report).
fn push_instance_value<'a>(
    entry: &mut Entry<'a>,
    tables: &Tables<'a>,
    component: ComponentHead<'a>,
    max_depth: usize,
) -> Result<(), GiveUp> {
    // Changed layouts are given up on before any entry is read.
    let payload = component.payload(None, max_depth).map_err(|_| LAYOUT)?;
    let name = *tables.names.get(component.index).ok_or(LAYOUT)?;
    if entry.components.iter().any(|(seen, ..)| seen == name) {
        return Err(GiveUp::Component);
    }
    entry
        .components
        .push((Cow::Borrowed(name), component.offset, payload));
    Ok(())
}

/// Starts the group of the plain entities with the components `key` names (see
/// [`Group::new`]); its index.
fn new_group(
    found: &mut Groups,
    by_key: &mut FxHashMap<Vec<usize>, u32>,
    key: &[usize],
    plain: &[Option<ComponentId>],
) -> Result<u32, GiveUp> {
    let group = u32::try_from(found.groups.len()).map_err(|_| GiveUp::TooLarge)?;
    found
        .groups
        .push(Group::new(key, plain).ok_or(GiveUp::Component)?);
    by_key.insert(key.to_vec(), group);
    Ok(group)
}

impl Group {
    /// A group for entities with the components `indices` name (in the header's table, which
    /// `plain` maps to components). `None` if one is unknown or two name one component (the
    /// careful path's to report).
    fn new(indices: &[usize], plain: &[Option<ComponentId>]) -> Option<Self> {
        let components = indices
            .iter()
            .map(|index| *plain.get(*index)?)
            .collect::<Option<Vec<ComponentId>>>()?;
        let mut distinct = components.clone();
        distinct.sort_unstable();
        distinct.dedup();
        (distinct.len() == components.len()).then_some(Group { components, len: 0 })
    }
}

/// The stable ID the entry with stable ID `id` gets ([`SceneIds::assign`]). `None` for an ID
/// already in the world without [`IdConflict::Remap`](crate::scene::IdConflict::Remap).
fn own_id(load: &mut Load<'_, '_>, id: StableId) -> Option<StableId> {
    load.ids.assign(id).ok()
}

/// Gives the entry with stable ID `id` its handle (the next reserved one) and its
/// [`own_id`]. `None` for a duplicate ID, or one already in the world without
/// [`IdConflict::Remap`](crate::scene::IdConflict::Remap).
fn take_handle(load: &mut Load<'_, '_>, id: StableId) -> Option<Entity> {
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

/// The second pass over the entries (`reader` at the first): decodes each plain entity's values
/// and puts it on its handle. A group at a time as a column batch; or, when hecs's free list
/// still holds IDs after the reservation, one entity at a time (placing a batch searches what
/// is left of that list once per handle).
fn spawn_binary<'a>(
    load: &Load<'_, 'a>,
    world: &mut World,
    reader: BinaryReader<'a>,
    tables: &Tables<'a>,
    found: &Groups,
) -> Result<(), GiveUp> {
    world.flush();
    if found.groups.is_empty() {
        // Only archetype instances (a level): nothing to read again.
        return Ok(());
    }
    let by_batch = world.freelist().len() == 0;
    let batches = if by_batch { &found.groups[..] } else { &[] };
    let batches = column_batches(load.context.registry, batches);
    let handles = write_entities(load, world, reader, tables, found, &batches)?;
    for ((batch, handles), group) in batches.into_iter().zip(handles).zip(&found.groups) {
        // hecs asserts a batch and its handles match; they do by construction, but a panic is
        // not an answer to bad input.
        if handles.len() != group.len as usize {
            return Err(GiveUp::BatchMismatch);
        }
        let batch = batch.build().map_err(|_| GiveUp::BatchMismatch)?;
        world.spawn_column_batch_at(&handles, batch);
    }
    Ok(())
}

/// An empty column batch for each group: its stable-ID column and its components' columns.
fn column_batches(registry: &ComponentRegistry, groups: &[Group]) -> Vec<ColumnBatchBuilder> {
    groups
        .iter()
        .map(|group| {
            let mut batch_type = ColumnBatchType::new();
            batch_type.add::<StableId>();
            for component in &group.components {
                registry.ops(*component).add_column(&mut batch_type);
            }
            batch_type.into_batch(group.len)
        })
        .collect()
}

/// Reads every plain entity's values (`reader` at the first entry): into its group's batch
/// (the first `batches.len()` groups), or straight onto its handle in the world. The handles
/// of each batch's entities, in its order.
fn write_entities<'a>(
    load: &Load<'_, 'a>,
    world: &mut World,
    mut reader: BinaryReader<'a>,
    tables: &Tables<'a>,
    found: &Groups,
    batches: &[ColumnBatchBuilder],
) -> Result<Vec<Vec<Entity>>, GiveUp> {
    let registry = load.context.registry;
    let mut handles: Vec<Vec<Entity>> = found.groups[..batches.len()]
        .iter()
        .map(|group| Vec::with_capacity(group.len as usize))
        .collect();
    // Per batch: its stable-ID column and one writer per component, in the entries' order.
    let mut columns = batches
        .iter()
        .zip(&found.groups)
        .map(|(batch, group)| {
            let ids = batch.writer::<StableId>()?;
            let sinks = group
                .components
                .iter()
                .map(|component| registry.ops(*component).postcard_sink(batch))
                .collect::<Option<Vec<_>>>()?;
            Some((ids, sinks))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or(GiveUp::BatchMismatch)?;
    let mut builder = EntityBuilder::new();
    for (entry, group) in found.group_of.iter().enumerate() {
        let head = read_head(&mut reader, tables)?;
        if *group == INSTANCE {
            for _ in 0..head.components {
                read_component(&mut reader, tables)?;
            }
            continue;
        }
        let id = load.ids.get(head.id);
        let handle = *load.entities.get(entry).ok_or(GiveUp::BatchMismatch)?;
        match columns.get_mut(*group as usize) {
            Some((ids, sinks)) => {
                ids.push(id).map_err(|_| GiveUp::BatchMismatch)?;
                for sink in sinks {
                    let payload = read_component(&mut reader, tables)?.payload;
                    sink.push_postcard(payload)?;
                }
                let batch = handles.get_mut(*group as usize);
                batch.ok_or(GiveUp::BatchMismatch)?.push(handle);
            }
            None => {
                let group = found.groups.get(*group as usize);
                for component in &group.ok_or(GiveUp::BatchMismatch)?.components {
                    let payload = read_component(&mut reader, tables)?.payload;
                    registry
                        .ops(*component)
                        .read_postcard_into(payload, &mut builder)
                        .map_err(|_| GiveUp::Value)?;
                }
                builder.add(id);
                world
                    .insert(handle, builder.build())
                    .map_err(|_| GiveUp::BatchMismatch)?;
            }
        }
    }
    Ok(handles)
}

/// Archetype instances, once every entity has its handle: built by [`build_instances`], then
/// inserted. The one-pass route plans the instances it kept here (and gives up on one the
/// careful route is to report or warn of); a careful load's entries come planned, each error
/// placed.
fn build_all_instances(load: &mut Load<'_, '_>, world: &mut World) -> Result<(), GiveUp> {
    let context = load.context;
    let planned;
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
                .map(|entry| {
                    let plan = plan_entry(context, entry, load.head.nodes.as_ref()).ok()?;
                    // An entry to leave out, or an old name: the careful path says so,
                    // placed.
                    (plan.left_out.is_none() && plan.renamed.is_empty()).then_some(plan)
                })
                .collect::<Option<Vec<_>>>()
                .ok_or(GiveUp::Instances)?;
            let source = match load.wire {
                RefWire::Number => Source::Binary,
                _ => Source::Unplaced,
            };
            let place: &dyn Fn(&mut SceneError, usize) = &|_, _| {};
            let handles = &load.instance_handles;
            (
                &load.instances[..],
                &planned[..],
                &handles[..],
                source,
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
        &mut |handle, builder: &mut EntityBuilder| {
            inserted &= world.insert(handle, builder.build()).is_ok();
        },
    );
    load.followed = follow.finish();
    load.refs.ids = Arc::try_unwrap(ids).unwrap_or_else(|ids| (*ids).clone());
    match (built, inserted, load.careful.is_some()) {
        (Ok(()), true, _) => Ok(()),
        (Err(error), _, true) => refuse(load, error),
        _ => Err(GiveUp::Instances),
    }
}

/// The fast path's most common give-up: the text or bytes are not as the library writes them.
const LAYOUT: GiveUp = GiveUp::Layout;

/// Reads the structure of a scene document: whitespace, punctuation, plain strings. Anything
/// unusual (escapes in a string, control characters) is [`GiveUp::Layout`]: the careful path's
/// business.
struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    #[inline]
    fn skip_whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Where the next value starts (after whitespace).
    fn value_start(&mut self) -> usize {
        self.skip_whitespace();
        self.pos
    }

    #[inline]
    fn peek(&mut self) -> Result<u8, GiveUp> {
        self.skip_whitespace();
        self.text.as_bytes().get(self.pos).copied().ok_or(LAYOUT)
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Result<(), GiveUp> {
        (self.peek()? == byte).then(|| self.pos += 1).ok_or(LAYOUT)
    }

    /// At the start of an object or array: `true` if it is empty (closed by `close`, eaten).
    fn eat_empty(&mut self, close: u8) -> Result<bool, GiveUp> {
        let empty = self.peek()? == close;
        self.pos += usize::from(empty);
        Ok(empty)
    }

    /// After a member or element: `true` at the closing `close` (eaten), `false` after a comma
    /// (eaten), [`GiveUp::Layout`] otherwise.
    #[inline]
    fn eat_close(&mut self, close: u8) -> Result<bool, GiveUp> {
        match self.peek()? {
            b',' => {
                self.pos += 1;
                Ok(false)
            }
            byte if byte == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(LAYOUT),
        }
    }

    /// The next member's key, or `""` at the object's end (both eaten).
    #[inline]
    fn next_key(&mut self, close: u8) -> Result<&'a str, GiveUp> {
        if self.eat_close(close)? {
            return Ok("");
        }
        self.string()
    }

    /// `"key":`, exactly.
    #[inline]
    fn key(&mut self, key: &str) -> Result<(), GiveUp> {
        (self.string()? == key).then_some(()).ok_or(LAYOUT)?;
        self.eat(b':')
    }

    /// A string without escapes or control characters; its contents.
    #[inline]
    fn string(&mut self) -> Result<&'a str, GiveUp> {
        self.eat(b'"')?;
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let mut end = start;
        loop {
            match *bytes.get(end).ok_or(LAYOUT)? {
                b'"' => break,
                b'\\' | 0..=0x1f => return Err(LAYOUT),
                _ => end += 1,
            }
        }
        self.pos = end + 1;
        self.text.get(start..end).ok_or(LAYOUT)
    }

    /// A number or literal written exactly as `literal`.
    fn literal(&mut self, literal: &str) -> Result<(), GiveUp> {
        let start = self.value_start();
        let end = start + literal.len();
        (self.text.get(start..end).ok_or(LAYOUT)? == literal)
            .then_some(())
            .ok_or(LAYOUT)?;
        let next = self.text.as_bytes().get(end).copied();
        if !matches!(
            next,
            Some(b' ' | b'\n' | b'\t' | b'\r' | b',' | b'}' | b']') | None
        ) {
            return Err(LAYOUT);
        }
        self.pos = end;
        Ok(())
    }

    /// Any JSON value, checked by serde_json; its text.
    fn raw_value(&mut self) -> Result<&'a str, GiveUp> {
        let start = self.value_start();
        let rest = self.text.get(start..).ok_or(LAYOUT)?;
        let mut values =
            serde_json::Deserializer::from_str(rest).into_iter::<serde::de::IgnoredAny>();
        values.next().ok_or(LAYOUT)?.map_err(|_| LAYOUT)?;
        let end = start + values.byte_offset();
        self.pos = end;
        self.text.get(start..end).ok_or(LAYOUT)
    }

    /// Only whitespace is left.
    fn at_end(&mut self) -> bool {
        self.skip_whitespace();
        self.pos == self.text.len()
    }
}

// Every test here compares the JSON and binary paths.
#[cfg(test)]
#[cfg(feature = "binary")]
mod tests {
    use super::*;
    use crate::json::SourceText;
    use crate::scene::load::{load_binary, load_json_text, IdConflict, SceneLoadOptions};
    use crate::{
        save_scene, ArchetypeLibrary, ComponentRegistry, EntityRef, LoadOptions, Name,
        SceneEncoding, SceneSaveOptions, Shared,
    };

    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Follow {
        leader: Option<EntityRef>,
        #[serde(default)]
        crowd: Vec<EntityRef>,
    }

    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Loot(Shared<Vec<String>>);

    fn library() -> ArchetypeLibrary {
        let mut registry = ComponentRegistry::new();
        registry.register::<Follow>().unwrap();
        registry.register::<Loot>().unwrap();
        let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        library.set_source(
            "turret.json",
            Some(
                r##"{
                    "components": { "Name": "Turret", "Follow": { "leader": "#gun" } },
                    "children": { "gun": { "components": { "Name": "Gun", "Follow": { "leader": "#" } } } }
                }"##,
            ),
        );
        library.set_source(
            "crate.json",
            Some(r#"{ "components": { "Name": "Crate" } }"#),
        );
        assert!(
            library.diagnostics().is_empty(),
            "{:?}",
            library.diagnostics()
        );
        library
    }

    /// Entities in the scene of [`world`].
    const ENTITIES: u32 = 613;

    /// Plain entities referring forward, back, to themselves and to instances; one value with
    /// more forward references than are reserved at a time; shared data; two instances of an
    /// archetype with a child, one with an override; four of a single-entity archetype (two
    /// untouched, which go in as a batch, referred to before and after they are read; two with
    /// a value of their own of one shape, the second batched by that shape's bytes in binary).
    fn world(library: &ArchetypeLibrary) -> World {
        let mut world = World::new();
        let early = world.reserve_entity();
        let turret = library.spawn(&mut world, "turret").unwrap();
        library.spawn(&mut world, "turret").unwrap();
        *world.get::<&mut Name>(turret).unwrap() = Name("Custom".into());
        let crates = library.spawn_many(&mut world, "crate", 4).unwrap();
        *world.get::<&mut Name>(crates[2]).unwrap() = Name("Opened".into());
        *world.get::<&mut Name>(crates[3]).unwrap() = Name("Broken".into());
        for (entity, id) in [(early, 4), (world.reserve_entity(), 5)] {
            let follow = Follow {
                leader: Some(EntityRef(crates[0])),
                crowd: vec![EntityRef(crates[1]), EntityRef(crates[2])],
            };
            world.insert(entity, (StableId(id), follow)).unwrap();
        }
        let crowd: Vec<Entity> = (0..600)
            .map(|i| world.spawn((StableId(1000 + i), Name(format!("crowd {i}")))))
            .collect();
        let loot = Shared::new(vec!["coin".to_string()]);
        let first = world.reserve_entity();
        let last = world.reserve_entity();
        let middle = world.spawn((
            StableId(2),
            Follow {
                leader: Some(EntityRef(turret)),
                crowd: crowd.iter().copied().map(EntityRef).collect(),
            },
            Loot(loot.clone()),
        ));
        world
            .insert(
                first,
                (
                    StableId(1),
                    Follow {
                        leader: Some(EntityRef(last)),
                        crowd: vec![EntityRef(first)],
                    },
                    Loot(loot),
                ),
            )
            .unwrap();
        world
            .insert(
                last,
                (
                    StableId(3),
                    Follow {
                        leader: Some(EntityRef(middle)),
                        crowd: Vec::new(),
                    },
                ),
            )
            .unwrap();
        world
    }

    fn save(world: &World, library: &ArchetypeLibrary) -> String {
        String::from_utf8(save_in(world, library, SceneEncoding::Json)).unwrap()
    }

    fn save_in(world: &World, library: &ArchetypeLibrary, encoding: SceneEncoding) -> Vec<u8> {
        save_scene(world, library, encoding, &SceneSaveOptions::default()).unwrap()
    }

    fn fast_binary(
        bytes: &[u8],
        world: &mut World,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Option<LoadedScene> {
        load_binary_fast(&Context::new(None, library, options), world, bytes)
    }

    fn fast(
        text: &str,
        world: &mut World,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Option<LoadedScene> {
        load_json_fast(&Context::new(None, library, options), world, text)
    }

    #[test]
    fn reads_what_the_library_writes_and_builds_what_the_careful_path_builds() {
        let library = library();
        let original = world(&library);
        let text = save(&original, &library);
        let options = SceneLoadOptions::default();

        let mut quick = World::new();
        let loaded = fast(&text, &mut quick, &library, &options).expect("the fast path gave up");
        assert_eq!(loaded.len(), ENTITIES as usize);
        assert_eq!(quick.len(), ENTITIES, "no reserved handle is left over");
        assert!(save(&quick, &library) == text, "saves other bytes");

        let mut careful = World::new();
        let source = SourceText::from_string(text.clone());
        load_json_text(
            &Context::new(None, &library, &options),
            &mut careful,
            &source,
        )
        .unwrap();
        assert!(save(&careful, &library) == text, "saves other bytes");

        // The binary encoding of the same scene, both ways.
        let bytes = save_in(&original, &library, SceneEncoding::Binary);
        let mut quick = World::new();
        fast_binary(&bytes, &mut quick, &library, &options).expect("the fast path gave up");
        assert_eq!(quick.len(), ENTITIES, "no reserved handle is left over");
        assert!(save(&quick, &library) == text, "saves other bytes");
        let mut careful = World::new();
        load_binary(
            &Context::new(None, &library, &options),
            &mut careful,
            &bytes,
        )
        .unwrap();
        assert!(save(&careful, &library) == text, "saves other bytes");

        // Into a world whose free list outlasts the reservation: entities are put on their
        // handles one at a time instead of a batch at a time.
        for binary in [true, false] {
            let mut holey = World::new();
            free_ids(&mut holey);
            let loaded = if binary {
                fast_binary(&bytes, &mut holey, &library, &options)
            } else {
                fast(&text, &mut holey, &library, &options)
            };
            loaded.expect("the fast path gave up");
            assert!(
                holey.freelist().len() < 1000,
                "the reservation took freed IDs"
            );
            assert_eq!(holey.len(), ENTITIES, "no reserved handle is left over");
            assert!(save(&holey, &library) == text, "saves other bytes");
        }

        // Entries out of stable-ID order (a file edited by hand): IDs indexed by hash, and
        // the same world.
        let reversed = reversed_entries(&text);
        let mut unsorted = World::new();
        let context = Context::new(None, &library, &options);
        let loaded = json_fast(&context, &mut unsorted, &reversed);
        let loaded = loaded.unwrap_or_else(|why| panic!("the fast path gave up: {why:?}"));
        assert!(save(&unsorted, &library) == text, "saves other bytes");
        assert_eq!(
            loaded.entity(StableId(2)).map(|e| unsorted.contains(e)),
            Some(true)
        );

        // Into a world that holds the scene already: remapped, every reference fixed up.
        let remap = SceneLoadOptions {
            on_id_conflict: IdConflict::Remap,
            ..SceneLoadOptions::default()
        };
        let again = fast(&text, &mut quick, &library, &remap).expect("the fast path gave up");
        assert_eq!(quick.len(), 2 * ENTITIES);
        remapped(&quick, &again);
        let again =
            fast_binary(&bytes, &mut quick, &library, &remap).expect("the fast path gave up");
        assert_eq!(quick.len(), 3 * ENTITIES);
        remapped(&quick, &again);
    }

    /// Leaves 1,000 freed IDs on hecs's free list (more than the scene of [`world`] has
    /// entities).
    fn free_ids(world: &mut World) {
        let gone: Vec<Entity> = (0..1000).map(|_| world.spawn(())).collect();
        for entity in gone {
            world.despawn(entity).unwrap();
        }
    }

    /// Entity 1 of [`world`], loaded again with fresh IDs, has its own and still follows entity 3.
    fn remapped(world: &World, again: &LoadedScene) {
        let entity = |id: u64| again.entity(StableId(id)).unwrap();
        let new_id = |id: u64| again.new_id(StableId(id)).unwrap();
        assert_ne!(new_id(1), StableId(1));
        assert_eq!(*world.get::<&StableId>(entity(1)).unwrap(), new_id(1));
        let leader = world.get::<&Follow>(entity(1)).unwrap().leader.unwrap();
        assert_eq!(leader.entity(), entity(3));
        assert_eq!(*world.get::<&StableId>(leader.entity()).unwrap(), new_id(3));
    }

    /// The same document with every object's keys sorted and no whitespace: valid, but not
    /// in the order the library writes.
    /// `text` (a scene as the library writes it) with its entries in the opposite order.
    fn reversed_entries(text: &str) -> String {
        let (head, rest) = text.split_once("\"entities\": [\n").unwrap();
        let (body, tail) = rest.rsplit_once("\n  ]").unwrap();
        let mut entries: Vec<String> = Vec::new();
        for line in body.lines() {
            if line == "    {" {
                entries.push(String::new());
            }
            let entry = entries.last_mut().unwrap();
            entry.push_str(if line == "    }," { "    }" } else { line });
            entry.push('\n');
        }
        let entries: Vec<&str> = entries.iter().rev().map(|e| e.trim_end()).collect();
        format!("{head}\"entities\": [\n{}\n  ]{tail}", entries.join(",\n"))
    }

    fn reordered(text: &str) -> String {
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(text).unwrap()).unwrap()
    }

    /// Runs `attempt` on a world holding one entity; asserts it gave up and left the world as
    /// it was. Returns the world and that entity.
    fn gives_up(
        what: &str,
        attempt: impl FnOnce(&mut World) -> Option<LoadedScene>,
    ) -> (World, Entity) {
        let mut world = World::new();
        let before = world.spawn((Name("before".into()),));
        assert!(attempt(&mut world).is_none(), "{what}: taken");
        assert_eq!(world.len(), 1, "{what}: the world changed");
        assert!(world.contains(before), "{what}: the world changed");
        (world, before)
    }

    /// Entity 1's ID, as [`save`] writes it.
    const FIRST_ID: &str = "\"id\": \"0000000000000001\"";

    /// The saved text of [`world`] with one unexpected thing each (named), for the fast path
    /// to give up on.
    fn unexpected_json(text: &str) -> Vec<(&'static str, String)> {
        let first_id = FIRST_ID;
        vec![
            ("keys out of order", reordered(text)),
            (
                "an escaped name",
                text.replacen("\"Follow\"", "\"Follo\\u0077\"", 1),
            ),
            (
                "a dangling reference",
                text.replacen(
                    "\"leader\": \"0000000000000003\"",
                    "\"leader\": \"00000000000000ff\"",
                    1,
                ),
            ),
            (
                "a duplicate entity",
                text.replacen(first_id, "\"id\": \"0000000000000002\"", 1),
            ),
            (
                "an unknown component",
                text.replacen("\"Follow\"", "\"Folow\"", 1),
            ),
            ("trailing text", format!("{text}x")),
            (
                "an older format",
                text.replacen("\"format\": 2", "\"format\": 1", 1),
            ),
            (
                "a value that does not decode",
                text.replacen("\"leader\": \"0000000000000003\"", "\"leader\": 3", 1),
            ),
            (
                "an unknown archetype",
                text.replacen("\"archetype\": \"turret\"", "\"archetype\": \"turet\"", 1),
            ),
            (
                "an unknown archetype of untouched instances",
                text.replace("\"archetype\": \"crate\"", "\"archetype\": \"crat\""),
            ),
            (
                "an instance's value that does not decode",
                text.replacen("\"Name\": \"Custom\"", "\"Name\": 5", 1),
            ),
            (
                "a child of a plain entity",
                text.replacen(
                    first_id,
                    "\"id\": \"0000000000000001\", \"child\": \"gun\"",
                    1,
                ),
            ),
        ]
    }

    /// The saved bytes of [`world`] with one unexpected thing each (named), for the fast path
    /// to give up on.
    fn unexpected_binary(bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
        let renamed = {
            let at = bytes.windows(6).position(|w| w == b"Follow").unwrap();
            let mut renamed = bytes.to_vec();
            renamed[at..at + 6].copy_from_slice(b"Fellow");
            renamed
        };
        // Entity 1's `Follow` (leader: Some(3), crowd: [1]) and entity 2's ID.
        let replaced = |what: &[u8], with: &[u8]| {
            let at: Vec<usize> = (0..bytes.len() - what.len())
                .filter(|at| bytes[*at..].starts_with(what))
                .collect();
            assert_eq!(at.len(), 1, "{what:?} is not unique");
            let mut replaced = bytes.to_vec();
            replaced[at[0]..at[0] + what.len()].copy_from_slice(with);
            replaced
        };
        vec![
            ("a cut short file", bytes[..bytes.len() - 1].to_vec()),
            ("trailing bytes", [bytes, &[0]].concat()),
            ("an unknown component", renamed),
            (
                "a dangling reference",
                replaced(&[1, 3, 1, 1], &[1, 0x7f, 1, 1]),
            ),
            (
                "a value that does not decode",
                replaced(&[1, 3, 1, 1], &[5, 3, 1, 1]),
            ),
            (
                "a duplicate entity",
                replaced(&2u64.to_le_bytes(), &1u64.to_le_bytes()),
            ),
        ]
    }

    #[test]
    fn gives_up_on_unexpected_json_and_leaves_the_world_as_it_was() {
        let library = library();
        let text = save(&world(&library), &library);
        let options = SceneLoadOptions::default();
        assert!(text.contains(FIRST_ID), "{text}");
        for (what, case) in unexpected_json(&text) {
            assert_ne!(case, text, "{what}: the case changed nothing");
            let (mut world, before) =
                gives_up(what, |world| fast(&case, world, &library, &options));
            // Then the careful path reads it: valid files load as they would have.
            let careful = load_json_text(
                &Context::new(None, &library, &options),
                &mut world,
                &SourceText::from_string(case.clone()),
            );
            if matches!(
                what,
                "keys out of order"
                    | "an escaped name"
                    | "a child of a plain entity"
                    | "an older format"
            ) {
                careful.unwrap_or_else(|error| panic!("{what}: {error}"));
                world.despawn(before).unwrap();
                assert!(save(&world, &library) == text, "{what}: saves other bytes");
            } else {
                assert!(careful.is_err(), "{what}: loads carefully");
            }
        }
    }

    #[test]
    fn gives_up_on_unexpected_bytes_and_leaves_the_world_as_it_was() {
        let library = library();
        let bytes = save_in(&world(&library), &library, SceneEncoding::Binary);
        let options = SceneLoadOptions::default();
        for (what, case) in unexpected_binary(&bytes) {
            // In a fresh world (entities spawned a batch at a time) and in one with freed IDs
            // left after the reservation (one at a time).
            let (mut world, _) =
                gives_up(what, |world| fast_binary(&case, world, &library, &options));
            let (_, _) = gives_up(what, |world| {
                free_ids(world);
                fast_binary(&case, world, &library, &options)
            });
            let careful = load_binary(&Context::new(None, &library, &options), &mut world, &case);
            assert!(careful.is_err(), "{what}: loads carefully");
        }
    }

    #[test]
    fn gives_up_on_an_id_already_in_the_world_without_remapping() {
        let library = library();
        let original = world(&library);
        let text = save(&original, &library);
        let bytes = save_in(&original, &library, SceneEncoding::Binary);
        let options = SceneLoadOptions::default();
        let mut world = World::new();
        assert!(fast(&text, &mut world, &library, &options).is_some());
        let len = world.len();
        assert!(fast(&text, &mut world, &library, &options).is_none());
        assert!(fast_binary(&bytes, &mut world, &library, &options).is_none());
        assert_eq!(world.len(), len);
    }

    #[test]
    fn says_why_it_gives_up() {
        let library = library();
        let text = save(&world(&library), &library);
        let options = SceneLoadOptions::default();
        let why = |what: &str| {
            let cases = unexpected_json(&text);
            let (_, case) = cases.iter().find(|(case, _)| *case == what).unwrap();
            let mut world = World::new();
            let context = Context::new(None, &library, &options);
            let why = json_fast(&context, &mut world, case).err();
            assert_eq!(world.len(), 0, "{what}: the world changed");
            why
        };
        assert_eq!(why("keys out of order"), Some(GiveUp::Layout));
        assert_eq!(why("trailing text"), Some(GiveUp::Layout));
        assert_eq!(why("a duplicate entity"), Some(GiveUp::Id));
        assert_eq!(why("an unknown component"), Some(GiveUp::Component));
        assert_eq!(why("a value that does not decode"), Some(GiveUp::Value));
        assert_eq!(why("a dangling reference"), Some(GiveUp::DanglingReference));
        assert_eq!(why("an unknown archetype"), Some(GiveUp::Instances));
        let mut world = World::new();
        let context = Context::new(None, &library, &options);
        assert!(json_fast(&context, &mut world, &text).is_ok());
    }
}
