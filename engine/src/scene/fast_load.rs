//! The one-pass readers of scenes (JSON, its members in any order, with any whitespace and
//! escapes; binary in the current format): each plain entity's component values are decoded
//! straight from the text or bytes, once, into the back-end every load goes through
//! ([`back_end`](crate::scene::back_end)) as they are read.
//!
//! The careful readers ([`load`](crate::scene::load)) read the whole document first,
//! capturing every component value as raw text or bytes, and check it before anything is
//! built; that is what lets them report problems in their order and place every error
//! exactly. Most files are fine, so these read them once instead and give up at the first
//! thing they do not expect (a syntax error, an unknown or repeated key, an unknown component,
//! a value that does not decode, a dangling reference, a duplicate or colliding ID, an older
//! format, a binary file cut short, ...), with a typed reason ([`GiveUp`]). Giving up undoes
//! everything the load did to the world, and the careful route then reads the file again and
//! loads it or reports the problem.
//!
//! A JSON document is read where it stands when the entity list is its last member and each
//! entry names its archetype before its components (the library's order, and sorted order).
//! Otherwise the part needed first is skipped over (only brackets and strings matched) and read
//! once what it depends on is known: the entity list after the format and shared table that
//! follow it, an entry's components after the archetype named after them.
//!
//! Invariant: whatever this route accepts, the careful route accepts too and builds the same
//! entities (tests load each fixture both ways, and a property test random scenes); it only
//! refuses more.
//!
//! JSON is read in one pass, references resolved as they are met: a reference to an entity
//! further down the file takes a handle reserved ahead (hecs reserves handles without the world
//! borrowed mutably), and that entity is inserted on that handle when it is reached. Binary is
//! read in two: the first skims the entries (IDs, archetypes, component names; every entry gets
//! a reserved handle), the second decodes every value straight into a hecs column batch per set
//! of components, so the entities go into the world a batch at a time. Archetype instances are
//! captured raw and handed to the back-end, which batches those of one-entity archetypes and
//! builds the others at the end.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use hecs::{ColumnBatchBuilder, ColumnBatchType, Entity, EntityBuilder, World};
use rustc_hash::FxHashMap;

use crate::component::ComponentId;
use crate::component::ComponentRegistry;
use crate::component::Layout;
use crate::component::RefWire;
use crate::component::StableId;
use crate::json;
use crate::scene::back_end::{
    build_scene, decode, finish_entity, join_pristine, load_ids, own_id, place_instance,
    pristine_group, read_entities_with, reserve_ahead, scan_state, take_handle, take_instance,
    take_value, GiveUp, Load, SharedTable, Stopped,
};
use crate::scene::binary_entry::{read_component_head, read_entry_head, ComponentHead, EntryHead};
use crate::scene::commit::{self, Identities, Identity};
use crate::scene::format::{scene_keys as keys, BinaryReader, KIND_TYPED, SCENE_FORMAT_VERSION};
use crate::scene::id_index::IdIndex;
use crate::scene::load::{
    decode_evolved, open_scene_binary, place_by_offsets, scene_component, shared_key, Context,
    Entry, LoadedScene, NotOpened, OpenedBinary, Payload, SceneHead,
};
use crate::scene::prepare_progress::{report_offset, REPORT_EVERY};

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
    let ids = load_ids(context, world);
    // A byte order mark is allowed before the document.
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let loaded = build_scene(context, world, (RefWire::Text, ids, None), |load, world| {
        read_json(load, &mut Scanner { text, pos: start }, world)
    });
    let mut loaded = loaded.map_err(Stopped::reason)?;
    place_by_offsets(text, start, &mut loaded.warnings);
    Ok(loaded)
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
    let ids = load_ids(context, world);
    let loaded = build_scene(
        context,
        world,
        (RefWire::Number, ids, None),
        |load, world| read_binary(load, bytes, world),
    );
    loaded.map_err(Stopped::reason)
}

/// A JSON scene: `{"format": 2, "meta": …, "archetypes": …, "shared": {...}, "entities": [...]}`,
/// its members in any order, and nothing after it.
///
/// The entity list is read where it stands when it is the last member (as the library writes
/// it: everything it needs came before). Anywhere else, it is skipped over, the members after
/// it are read, and then it is read.
fn read_json<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
) -> Result<(), GiveUp> {
    let list_last = entity_list_last(scan.text);
    let mut head = Head::default();
    scan.eat(b'{')?;
    let mut next = scan.first_key(b'}')?;
    while let Some(key) = next {
        scan.eat(b':')?;
        if key != keys::ENTITIES {
            read_json_head(load, scan, &key, &mut head)?;
        } else if head.entities.replace(scan.value_start()).is_some() {
            return Err(LAYOUT);
        } else if !list_last {
            scan.skip_value()?;
        } else {
            read_json_list(load, scan, world, &mut head)?;
        }
        next = scan.next_key(b'}')?;
    }
    if !scan.at_end() || !head.format {
        return Err(LAYOUT);
    }
    let end = scan.pos;
    match head.entities {
        Some(at) if !list_last => {
            scan.pos = at;
            read_json_list(load, scan, world, &mut head)?;
            scan.pos = end;
            Ok(())
        }
        Some(_) => Ok(()),
        None => Err(LAYOUT),
    }
}

/// Whether the entity list is the last member of the document `text`: only it is an array,
/// so a document ending `]}` ends with it.
fn entity_list_last(text: &str) -> bool {
    let rest = text.trim_end().strip_suffix('}').map(str::trim_end);
    rest.is_some_and(|rest| rest.ends_with(']'))
}

/// What the top level of a JSON scene has said so far.
#[derive(Default)]
struct Head {
    format: bool,
    /// The shared table: key → the value's JSON text, and where it is.
    shared: Option<SharedTable>,
    /// Where the entity list starts.
    entities: Option<usize>,
}

/// One top-level member other than the entity list (its key read, and its `:`): the format,
/// `meta`, the archetype table (into the load's head) or the shared table.
fn read_json_head<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    key: &str,
    head: &mut Head,
) -> Result<(), GiveUp> {
    match key {
        keys::FORMAT if !head.format => {
            scan.literal(&SCENE_FORMAT_VERSION.to_string())?;
            head.format = true;
        }
        keys::META if load.head.meta.is_none() => {
            load.head.meta = Some(serde_json::from_str(scan.raw_value()?).map_err(|_| LAYOUT)?);
        }
        keys::ARCHETYPES if load.head.nodes.is_none() => {
            load.head.nodes = Some(serde_json::from_str(scan.raw_value()?).map_err(|_| LAYOUT)?);
        }
        keys::SHARED if head.shared.is_none() => head.shared = Some(read_json_shared(scan)?),
        // An unknown key, or one written twice.
        _ => return Err(LAYOUT),
    }
    Ok(())
}

/// The shared table: key → the value's JSON text, and key → where the value starts.
fn read_json_shared(scan: &mut Scanner<'_>) -> Result<SharedTable, GiveUp> {
    let (mut shared, mut shared_at) = (FxHashMap::default(), FxHashMap::default());
    scan.eat(b'{')?;
    let mut next = scan.first_key(b'}')?;
    while let Some(name) = next {
        scan.eat(b':')?;
        let at = scan.value_start();
        let value = scan.raw_value()?;
        let key = shared_key(&name).ok_or(LAYOUT)?;
        if shared.insert(key, value.to_string()).is_some() {
            return Err(LAYOUT);
        }
        shared_at.insert(key, at);
        next = scan.next_key(b'}')?;
    }
    Ok((shared, shared_at))
}

/// The entity list, with the shared table read before it (the whole top level but the list,
/// when the list is not its last member).
fn read_json_list<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
    head: &mut Head,
) -> Result<(), GiveUp> {
    let shared = head.shared.take().unwrap_or_default();
    read_entities_with(load, world, shared, |load, world| {
        read_json_entities(load, scan, world)
    })
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
    let mut seen: Vec<Cow<'a, str>> = Vec::new();
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

/// One entry: `{"id": ..., "archetype": ..., "child": ..., "components": {...}}`, its members
/// in any order (only the ID is required; only an archetype instance has a child).
///
/// An entry in the library's order (the ID, the archetype and child if any, the components
/// last) is read here, its components where they stand: decoded into `builder` for a plain
/// entity, kept as text for an archetype instance. Any other order is read from the entry's
/// start again by [`read_json_entity_in_any_order`].
fn read_json_entity<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
    builder: &mut EntityBuilder,
    seen: &mut Vec<Cow<'a, str>>,
) -> Result<(), GiveUp> {
    let (start, budget) = (scan.value_start(), load.budget);
    scan.eat(b'{')?;
    let mut next = scan.first_key(b'}')?;
    if next.as_deref() != Some(keys::ID) {
        scan.pos = start;
        return read_json_entity_in_any_order(load, (scan, world), (builder, seen));
    }
    scan.eat(b':')?;
    let offset = scan.value_start();
    let id = parse_id(&scan.string()?)?;
    next = scan.next_key(b'}')?;
    let mut names = Names::default();
    if next.as_deref() == Some(keys::ARCHETYPE) {
        scan.eat(b':')?;
        let (archetype, span) = scan.name()?;
        next = scan.next_key(b'}')?;
        // `"components": {}`, as the library writes an untouched instance.
        let empty = next.as_deref() == Some(keys::COMPONENTS) && scan.empty_object_value()?;
        if empty {
            next = scan.next_key(b'}')?;
        }
        // Most entries of a level: an untouched instance, its archetype's name and no
        // components.
        if let (Cow::Borrowed(archetype), None) = (&archetype, &next) {
            return finish_untouched(load, world, (id, offset), (archetype, span));
        }
        names.archetype = Some((archetype, span));
        if empty && next.is_some() {
            // Another order, or the components twice: read again.
            scan.pos = start;
            return read_json_entity_in_any_order(load, (scan, world), (builder, seen));
        }
        if next.as_deref() == Some(keys::CHILD) {
            scan.eat(b':')?;
            names.child = Some(scan.name()?);
            next = scan.next_key(b'}')?;
        }
    }
    let mut instance = names.entry(id, offset);
    if next.as_deref() == Some(keys::COMPONENTS) {
        scan.eat(b':')?;
        read_json_components(load, scan, world, builder, seen, instance.as_mut())?;
        next = scan.next_key(b'}')?;
    }
    if next.is_some() {
        // Another order: read again (what this read took is given back).
        builder.clear();
        load.budget = budget;
        scan.pos = start;
        return read_json_entity_in_any_order(load, (scan, world), (builder, seen));
    }
    finish_entity(load, world, id, instance, builder)
}

/// [`read_json_entity`] of an entry whose members are in another order. Its components are
/// read where they stand once the archetype is known (after it in sorted order); before it,
/// they are skipped over and read at the entry's end (a value that did not decode as a plain
/// entity's may be an instance's patch).
#[inline(never)]
fn read_json_entity_in_any_order<'a>(
    load: &mut Load<'_, 'a>,
    (scan, world): (&mut Scanner<'a>, &mut World),
    (builder, seen): (&mut EntityBuilder, &mut Vec<Cow<'a, str>>),
) -> Result<(), GiveUp> {
    scan.eat(b'{')?;
    let mut next = scan.first_key(b'}')?;
    let (mut id, mut names) = (None, Names::default());
    // Where the components are, what reading them there gave (`None`: to read again), and
    // the budget before (what reading them again takes).
    let mut components = None;
    while let Some(key) = next {
        scan.eat(b':')?;
        match &*key {
            keys::ID if id.is_none() => {
                let offset = scan.value_start();
                id = Some((parse_id(&scan.string()?)?, offset));
            }
            keys::ARCHETYPE | keys::CHILD => {
                let name = Some(scan.name()?);
                let slot = match &*key {
                    keys::ARCHETYPE => &mut names.archetype,
                    _ => &mut names.child,
                };
                if std::mem::replace(slot, name).is_some() {
                    return Err(LAYOUT);
                }
                // Components read before the entry named its archetype are read again.
                if let Some((_, read, _)) = &mut components {
                    *read = None;
                }
            }
            keys::COMPONENTS if components.is_none() => {
                let (at, budget) = (scan.value_start(), load.budget);
                let mut instance = names.clone().entry(StableId(0), at);
                let read =
                    read_json_components(load, scan, world, builder, seen, instance.as_mut());
                let read = match read {
                    Ok(()) => Some(instance),
                    Err(_) if names.archetype.is_none() => {
                        scan.pos = at;
                        scan.skip_value()?;
                        None
                    }
                    Err(why) => return Err(why),
                };
                components = Some((at, read, budget));
            }
            // An unknown key, or one written twice.
            _ => return Err(LAYOUT),
        }
        next = scan.next_key(b'}')?;
    }
    let (id, offset) = id.ok_or(LAYOUT)?;
    // Only archetype instances have children.
    if names.child.is_some() && names.archetype.is_none() {
        return Err(LAYOUT);
    }
    let instance = match components {
        Some((_, Some(instance), _)) => instance.map(|entry| Entry {
            id,
            offset,
            ..entry
        }),
        Some((at, None, budget)) => {
            builder.clear();
            load.budget = budget;
            let end = std::mem::replace(&mut scan.pos, at);
            let mut instance = names.entry(id, offset);
            read_json_components(load, scan, world, builder, seen, instance.as_mut())?;
            scan.pos = end;
            instance
        }
        None => {
            if let (Some((Cow::Borrowed(archetype), span)), None) = (&names.archetype, &names.child)
            {
                return finish_untouched(load, world, (id, offset), (archetype, span.clone()));
            }
            names.entry(id, offset)
        }
    };
    finish_entity(load, world, id, instance, builder)
}

/// An entry's stable ID, as its string reads.
#[inline]
fn parse_id(id: &str) -> Result<StableId, GiveUp> {
    id.parse::<StableId>().map_err(|_| LAYOUT)
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

/// Ends an entry that is an untouched instance of an archetype (its name as written, with
/// where it is) as [`finish_entity`] ends any other, but with no entry made for it when it
/// joins its archetype's batch (most entries of a level).
fn finish_untouched<'a>(
    load: &mut Load<'_, 'a>,
    world: &mut World,
    (id, offset): (StableId, usize),
    archetype: (&'a str, Range<usize>),
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
        archetype: Some((Cow::Borrowed(archetype.0), archetype.1)),
        child: None,
    };
    let entry = names.entry(id, offset).ok_or(LAYOUT)?;
    take_instance(load, entry, own_id, handle)
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
    let opened = open_scene_binary(load.context.registry, bytes, &mut load.budget);
    let OpenedBinary {
        mut reader,
        mut header,
        evolved,
        count,
    } = opened.map_err(|why| match why {
        NotOpened::TooMany(_) => GiveUp::TooLarge,
        NotOpened::Malformed(_) | NotOpened::Version(_) => LAYOUT,
    })?;
    load.head = SceneHead {
        meta: header.meta.take(),
        nodes: header.nodes.take(),
    };
    let tables = Tables {
        plain: header
            .components
            .iter()
            .map(|name| scene_component(load.context.registry, name))
            .collect(),
        names: header.components,
        archetypes: header.archetypes,
        evolved,
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
    let shared = (header.shared, header.shared_at);
    read_entities_with(load, world, shared, |load, world| {
        spawn_binary(load, world, entries, &tables, &groups)
    })
}

/// The header's name tables of a binary scene.
struct Tables<'a> {
    names: Vec<&'a str>,
    /// The component each name is, if a scene may hold it.
    plain: Vec<Option<ComponentId>>,
    archetypes: Vec<&'a str>,
    /// Each component's layout when the scene was saved, where that is not its type's now:
    /// its values are read by that layout ([`decode_evolved`]).
    evolved: Vec<Option<Arc<Layout>>>,
}

impl Tables<'_> {
    /// The saved layout of component `index`, if its type changed since.
    fn evolved(&self, index: usize) -> Option<&Arc<Layout>> {
        self.evolved.get(index).and_then(Option::as_ref)
    }
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

/// The names an entry makes an archetype instance by, as they read, each with where it is
/// written (its string's span).
#[derive(Clone, Default)]
struct Names<'a> {
    archetype: Option<(Cow<'a, str>, Range<usize>)>,
    child: Option<(Cow<'a, str>, Range<usize>)>,
}

impl<'a> Names<'a> {
    /// The archetype instance entry of entity `id` (at `offset`), if it names an archetype.
    #[inline]
    fn entry(self, id: StableId, offset: usize) -> Option<Entry<'a>> {
        let (archetype, archetype_span) = self.archetype?;
        let (child, child_span) = match self.child {
            Some((child, span)) => (Some(child), span),
            None => (None, offset..offset),
        };
        Some(Entry {
            id,
            offset,
            archetype: Some(archetype),
            child,
            name_spans: (archetype_span, child_span),
            components: Vec::new(),
        })
    }
}

/// Reads an entity's `components` object: an archetype instance's values kept as text in its
/// entry, a plain entity's decoded into `builder` (`seen`: the names read, to refuse one
/// written twice).
fn read_json_components<'a>(
    load: &mut Load<'_, 'a>,
    scan: &mut Scanner<'a>,
    world: &mut World,
    builder: &mut EntityBuilder,
    seen: &mut Vec<Cow<'a, str>>,
    mut instance: Option<&mut Entry<'a>>,
) -> Result<(), GiveUp> {
    seen.clear();
    reserve_ahead(world);
    scan.eat(b'{')?;
    let mut next = scan.first_key(b'}')?;
    while let Some(name) = next {
        if seen.contains(&name) {
            return Err(GiveUp::Component);
        }
        if !take_value(load) {
            return Err(GiveUp::TooLarge);
        }
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
                entry.components.push((name.clone(), at, payload));
            }
            None => read_json_component(load, scan, world, &name, builder)?,
        }
        seen.push(name);
        next = scan.next_key(b'}')?;
    }
    Ok(())
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
    let evolved = tables.evolved(component.index);
    let payload = component.payload(evolved, max_depth).map_err(|_| LAYOUT)?;
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
        commit::batch_at(world, &handles, batch, group.len)?;
    }
    Ok(())
}

/// An empty column batch for each group: its stable-ID column and its components' columns.
fn column_batches(registry: &ComponentRegistry, groups: &[Group]) -> Vec<ColumnBatchBuilder> {
    groups
        .iter()
        .map(|group| {
            let mut batch_type = ColumnBatchType::new();
            commit::identity_columns(&mut batch_type, false);
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
            let ids = Identities::of(batch)?;
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
                ids.push(Identity::plain(id))?;
                let of_group = found.groups.get(*group as usize);
                let components = &of_group.ok_or(GiveUp::BatchMismatch)?.components;
                for (sink, component) in sinks.iter_mut().zip(components) {
                    let head = read_component(&mut reader, tables)?;
                    match tables.evolved(head.index) {
                        None => sink.push_postcard(head.payload)?,
                        Some(layout) => {
                            let context = load.context;
                            let typed = decode_evolved(context, *component, head.payload, layout);
                            sink.push_typed(typed.map_err(|_| GiveUp::Value)?)?;
                        }
                    }
                }
                let batch = handles.get_mut(*group as usize);
                batch.ok_or(GiveUp::BatchMismatch)?.push(handle);
            }
            None => {
                let group = found.groups.get(*group as usize);
                for component in &group.ok_or(GiveUp::BatchMismatch)?.components {
                    let head = read_component(&mut reader, tables)?;
                    let ops = registry.ops(*component);
                    match tables.evolved(head.index) {
                        None => (ops.read_postcard_into(head.payload, &mut builder))
                            .map_err(|_| GiveUp::Value)?,
                        Some(layout) => {
                            let context = load.context;
                            let typed = decode_evolved(context, *component, head.payload, layout);
                            ops.add_owned(typed.map_err(|_| GiveUp::Value)?, &mut builder);
                        }
                    }
                }
                commit::entity(world, Some(handle), Identity::plain(id), &mut builder)?;
            }
        }
    }
    Ok(handles)
}

/// The fast path's most common give-up: the text or bytes are not as the library writes them.
const LAYOUT: GiveUp = GiveUp::Layout;

/// Reads the structure of a scene document: whitespace, punctuation, strings (decoded when
/// they have escapes). What JSON refuses (a control character in a string, a syntax error) is
/// [`GiveUp::Layout`]: the careful path's business. Strings and whitespace are scanned by the
/// span index's word-at-a-time functions ([`json::string_stop`], [`json::skip_whitespace`]).
struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    #[inline(always)]
    fn skip_whitespace(&mut self) {
        self.pos = json::skip_whitespace(self.text.as_bytes(), self.pos);
    }

    /// Where the next value starts (after whitespace).
    fn value_start(&mut self) -> usize {
        self.skip_whitespace();
        self.pos
    }

    #[inline(always)]
    fn peek(&mut self) -> Result<u8, GiveUp> {
        self.skip_whitespace();
        self.text.as_bytes().get(self.pos).copied().ok_or(LAYOUT)
    }

    #[inline(always)]
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
    #[inline(always)]
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

    /// An object's first key (its `{` eaten), or `None` if it is empty (its close eaten).
    #[inline(always)]
    fn first_key(&mut self, close: u8) -> Result<Option<Cow<'a, str>>, GiveUp> {
        if self.eat_empty(close)? {
            return Ok(None);
        }
        self.string().map(Some)
    }

    /// The next member's key after a member, or `None` at the object's end (both eaten).
    #[inline(always)]
    fn next_key(&mut self, close: u8) -> Result<Option<Cow<'a, str>>, GiveUp> {
        if self.eat_close(close)? {
            return Ok(None);
        }
        self.string().map(Some)
    }

    /// A string; its contents, decoded if it has escapes.
    #[inline(always)]
    fn string(&mut self) -> Result<Cow<'a, str>, GiveUp> {
        self.eat(b'"')?;
        let start = self.pos;
        let end = json::string_stop(self.text.as_bytes(), start).ok_or(LAYOUT)?;
        match self.text.as_bytes().get(end) {
            Some(b'"') => {}
            Some(b'\\') => return self.escaped_string(start - 1),
            // A control character, which JSON refuses.
            _ => return Err(LAYOUT),
        }
        self.pos = end + 1;
        self.text.get(start..end).map(Cow::Borrowed).ok_or(LAYOUT)
    }

    /// [`string`](Self::string) for a string with escapes, its quote at `open`.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self, open: usize) -> Result<Cow<'a, str>, GiveUp> {
        let end = json::string_end(self.text.as_bytes(), open).ok_or(LAYOUT)?;
        let decoded = json::decoded_string(self.text.get(open..end).ok_or(LAYOUT)?);
        self.pos = end;
        decoded.ok_or(LAYOUT)
    }

    /// After a key: `true` if its value is an empty object (the `:` and the value eaten);
    /// otherwise nothing is eaten.
    #[inline(always)]
    fn empty_object_value(&mut self) -> Result<bool, GiveUp> {
        let start = self.pos;
        if self.eat(b':').is_ok() && self.eat(b'{').is_ok() && self.eat_empty(b'}')? {
            return Ok(true);
        }
        self.pos = start;
        Ok(false)
    }

    /// A string and its span (quotes included).
    #[inline(always)]
    fn name(&mut self) -> Result<(Cow<'a, str>, Range<usize>), GiveUp> {
        let start = self.value_start();
        let name = self.string()?;
        Ok((name, start..self.pos))
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

    /// Skips a value that is read properly later: only its brackets and strings are matched.
    fn skip_value(&mut self) -> Result<(), GiveUp> {
        let start = self.value_start();
        self.pos = json::value_end(self.text.as_bytes(), start).ok_or(LAYOUT)?;
        Ok(())
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
    use crate::json::{Position, SourceText};
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
        library_of(&[
            (
                "turret.json",
                r##"{
                    "components": { "Name": "Turret", "Follow": { "leader": "#gun" } },
                    "children": { "gun": { "components": { "Name": "Gun", "Follow": { "leader": "#" } } } }
                }"##,
            ),
            ("crate.json", r#"{ "components": { "Name": "Crate" } }"#),
        ])
    }

    /// A library of `files` (name, text) with [`Follow`] and [`Loot`] registered.
    fn library_of(files: &[(&str, &str)]) -> ArchetypeLibrary {
        let mut registry = ComponentRegistry::new();
        registry.register::<Follow>().unwrap();
        registry.register::<Loot>().unwrap();
        let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        for (name, text) in files {
            library.set_source(name, Some(text));
        }
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

        assert!(
            entity_list_last(&text),
            "the entity list is not read where it stands"
        );
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

        // The same document laid out otherwise (keys sorted, the entity list first, escapes,
        // no whitespace or more of it): read in one pass, the same world.
        for (what, layout) in other_layouts(&text) {
            let mut world = World::new();
            let loaded = json_fast(&context, &mut world, &layout);
            loaded.unwrap_or_else(|why| panic!("{what}: the fast path gave up: {why:?}"));
            assert_eq!(
                world.len(),
                ENTITIES,
                "{what}: no reserved handle is left over"
            );
            assert!(save(&world, &library) == text, "{what}: saves other bytes");
        }

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

    /// Every key sorted (the entity list before the format, an entry's ID after its
    /// components), compact.
    fn reordered(text: &str) -> String {
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(text).unwrap()).unwrap()
    }

    /// `compact` (a scene as [`reordered`] writes it) with each entry's `archetype` member
    /// moved after its components, where they have no nested object.
    fn archetype_last(compact: &str) -> String {
        let mut out = String::new();
        let mut rest = compact;
        while let Some(at) = rest.find("{\"archetype\":\"") {
            let (before, entry) = rest.split_at(at + 1);
            out.push_str(before);
            let name_end = entry[13..].find('"').unwrap() + 14;
            let (archetype, after) = entry.split_at(name_end);
            match after.strip_prefix(",\"components\":{") {
                Some(components) if components.find('}') < components.find('{') => {
                    let end = components.find('}').unwrap() + 1;
                    out.push_str("\"components\":{");
                    out.push_str(&components[..end]);
                    out.push(',');
                    out.push_str(archetype);
                    rest = &components[end..];
                }
                _ => {
                    out.push_str(archetype);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        assert!(out.contains("},\"archetype\":"), "{out}");
        out
    }

    /// `text` laid out other ways than the library writes it, each named.
    fn other_layouts(text: &str) -> Vec<(&'static str, String)> {
        let sorted = serde_json::from_str::<serde_json::Value>(text).unwrap();
        let pretty = serde_json::to_string_pretty(&sorted).unwrap();
        let escaped: String = text
            .chars()
            .map(|c| match c {
                'a'..='z' => format!("\\u{:04x}", c as u32),
                c => c.to_string(),
            })
            .collect();
        // Outside strings only `true`, `false` and `null` have letters: put them back.
        let escaped = ["true", "false", "null"]
            .iter()
            .fold(escaped, |text, word| {
                let spelled: String = word
                    .chars()
                    .map(|c| format!("\\u{:04x}", c as u32))
                    .collect();
                text.replace(&spelled, word)
            });
        vec![
            ("keys sorted, compact", reordered(text)),
            (
                "archetypes named after their components",
                archetype_last(&reordered(text)),
            ),
            ("keys sorted, pretty", pretty),
            ("every letter escaped", escaped),
            (
                "other whitespace",
                text.replace(": ", " :\t").replace(",\n", " ,\r\n"),
            ),
        ]
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
            (
                "an unknown key",
                text.replacen(FIRST_ID, "\"colour\": 1, \"id\": \"0000000000000001\"", 1),
            ),
            (
                "a key twice",
                text.replacen(
                    FIRST_ID,
                    "\"id\": \"0000000000000001\", \"id\": \"0000000000000001\"",
                    1,
                ),
            ),
            (
                "an untouched instance's components twice",
                text.replacen(
                    "\"components\": {}",
                    "\"components\": {}, \"components\": {}",
                    1,
                ),
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
            if matches!(what, "a child of a plain entity" | "an older format") {
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
        assert_eq!(why("an unknown key"), Some(GiveUp::Layout));
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

    mod saved {
        /// A component as a game saved it.
        #[derive(Clone, serde::Serialize, serde::Deserialize)]
        pub struct Gauge {
            pub level: u8,
            pub leader: Option<crate::EntityRef>,
        }
    }

    /// The same component after an update: a field added, one renamed.
    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Gauge {
        #[serde(alias = "level")]
        fill: u8,
        leader: Option<EntityRef>,
        #[serde(default)]
        max: u8,
    }

    #[test]
    fn reads_values_of_a_component_changed_since_the_save_by_their_saved_layout() {
        let mut registry = ComponentRegistry::new();
        registry.register::<saved::Gauge>().unwrap();
        let old = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        let mut world = World::new();
        let first = world.spawn((StableId(1), Name("first".into())));
        for (id, level) in [(2, 5), (3, 7)] {
            let leader = Some(EntityRef(first));
            world.spawn((StableId(id), saved::Gauge { level, leader }));
        }
        world.spawn((
            StableId(4),
            saved::Gauge {
                level: 9,
                leader: None,
            },
            Name("x".into()),
        ));
        let bytes = save_in(&world, &old, SceneEncoding::Binary);
        let mut registry = ComponentRegistry::new();
        registry.register::<Gauge>().unwrap();
        let new = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        let options = SceneLoadOptions::default();
        // A batch at a time, and one at a time (freed IDs left in the world).
        for holey in [false, true] {
            let mut loaded = World::new();
            if holey {
                free_ids(&mut loaded);
            }
            let scene = fast_binary(&bytes, &mut loaded, &new, &options).expect("gave up");
            let leader = scene.entity(StableId(1)).map(EntityRef);
            let gauge = |id| -> Gauge {
                let entity = scene.entity(StableId(id)).unwrap();
                (*loaded.get::<&Gauge>(entity).unwrap()).clone()
            };
            let max = 0;
            assert_eq!(
                gauge(2),
                Gauge {
                    fill: 5,
                    leader,
                    max
                }
            );
            assert_eq!(
                gauge(3),
                Gauge {
                    fill: 7,
                    leader,
                    max
                }
            );
            assert_eq!(
                gauge(4),
                Gauge {
                    fill: 9,
                    leader: None,
                    max
                }
            );
        }
    }

    /// The library of [`library`] after a rename: `crate` is now `box`, and the turret's `gun`
    /// child is now `cannon`.
    fn renamed_library() -> ArchetypeLibrary {
        library_of(&[
            (
                "turret.json",
                r##"{
                    "components": { "Name": "Turret", "Follow": { "leader": "#cannon" } },
                    "children": { "cannon": { "formerly": ["gun"], "components": { "Name": "Gun", "Follow": { "leader": "#" } } } }
                }"##,
            ),
            (
                "box.json",
                r#"{ "formerly": ["crate"], "components": { "Name": "Crate" } }"#,
            ),
        ])
    }

    #[test]
    fn reads_archetypes_and_children_by_their_former_names_with_the_warnings_placed() {
        let old = library();
        let text = save(&world(&old), &old);
        let bytes = save_in(&world(&old), &old, SceneEncoding::Binary);
        let library = renamed_library();
        let options = SceneLoadOptions::default();
        for text in [text.clone(), format!("\u{feff}{text}")] {
            let mut world = World::new();
            let quick = fast(&text, &mut world, &library, &options).expect("gave up");
            let context = Context::new(None, &library, &options);
            let mut careful_world = World::new();
            let source = SourceText::from_string(text.clone());
            let careful = load_json_text(&context, &mut careful_world, &source).unwrap();
            assert_eq!(quick.changes(), careful.changes());
            assert_eq!(quick.warnings(), careful.warnings());
            assert!(save(&world, &library) == save(&careful_world, &library));
        }
        let quick = fast(&text, &mut World::new(), &library, &options).unwrap();
        let messages: Vec<_> = (quick.warnings().iter())
            .map(|warning| {
                let position = warning.diagnostic.position.unwrap();
                let message = &warning.diagnostic.message;
                format!("{}:{} {message}", position.line, position.column)
            })
            .collect();
        // Each at the first entry that wrote the old name, its name's opening quote.
        let line_column = |written: &str| {
            let offset = text.find(written).unwrap() + written.find(": ").unwrap() + 2;
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let column = offset - before.rfind('\n').map_or(0, |newline| newline + 1) + 1;
            format!("{line}:{column}")
        };
        // In the file's order.
        let mut expected = [
                format!(
                    "{} archetype `crate` is now called `box`: 4 entries loaded as `box` (saving writes the new name)",
                    line_column(r#""archetype": "crate""#)
                ),
                format!(
                    "{} child `gun` of archetype `turret` is now `cannon`: 2 entries loaded as `cannon` (saving writes the new path)",
                    line_column(r#""child": "gun""#)
                ),
            ];
        expected.sort_by_key(|message| {
            let (line, column) = message.split_once(' ').unwrap().0.split_once(':').unwrap();
            (
                line.parse::<usize>().unwrap(),
                column.parse::<usize>().unwrap(),
            )
        });
        assert_eq!(messages, expected);

        let context = Context::new(None, &library, &options);
        let careful = load_binary(&context, &mut World::new(), &bytes).unwrap();
        let quick = fast_binary(&bytes, &mut World::new(), &library, &options).expect("gave up");
        assert_eq!(quick.changes(), careful.changes());
        assert_eq!(quick.warnings(), careful.warnings());
    }

    /// `text` loaded in one pass with unknown fields at warning severity, after checking it
    /// warns of what the careful reader does; and as the careful reader loads it.
    fn warned_of_unknown_fields_in_one_pass(
        text: &str,
        library: &ArchetypeLibrary,
    ) -> (LoadedScene, LoadedScene) {
        let options = SceneLoadOptions {
            unknown_fields: crate::Severity::Warning,
            ..SceneLoadOptions::default()
        };
        let context = Context::new(None, library, &options);
        let quick = fast(text, &mut World::new(), library, &options).expect("gave up");
        let source = SourceText::from_string(text.to_string());
        let careful = load_json_text(&context, &mut World::new(), &source).unwrap();
        assert_eq!(quick.warnings(), careful.warnings());
        (quick, careful)
    }

    #[test]
    fn warns_of_an_unknown_field_in_an_instance_as_the_careful_reader_does() {
        let library = library();
        let text = r#"{"format": 2, "entities": [
            {"id": "0000000000000001", "archetype": "turret", "components": {"Follow": {"bogus": 1}}}
        ]}"#;
        let (loaded, _) = warned_of_unknown_fields_in_one_pass(text, &library);
        let messages: Vec<_> = (loaded.warnings().iter())
            .map(|warning| (warning.diagnostic.position, warning.to_string()))
            .collect();
        let message = "warning[unknown-field]: entity 0000000000000001: unknown field `bogus` in component `Follow`";
        // At the key `"bogus"`.
        let at = Position {
            line: 2,
            column: 89,
        };
        assert_eq!(messages, [(Some(at), message.to_string())]);
    }

    #[test]
    fn leaves_out_the_entries_of_a_child_the_archetype_lost_with_the_warnings_placed() {
        let old = library();
        let text = save(&world(&old), &old);
        let bytes = save_in(&world(&old), &old, SceneEncoding::Binary);
        let library = library_of(&[
            ("turret.json", r#"{ "components": { "Name": "Turret" } }"#),
            ("crate.json", r#"{ "components": { "Name": "Crate" } }"#),
        ]);
        let options = SceneLoadOptions::default();
        let context = Context::new(None, &library, &options);
        let mut world = World::new();
        let quick = fast(&text, &mut world, &library, &options).expect("gave up");
        let mut careful_world = World::new();
        let source = SourceText::from_string(text.clone());
        let careful = load_json_text(&context, &mut careful_world, &source).unwrap();
        assert_eq!(quick.changes(), careful.changes());
        assert_eq!(quick.warnings(), careful.warnings());
        assert_eq!(quick.len(), careful.len());
        assert_eq!(world.len(), careful_world.len());
        assert!(save(&world, &library) == save(&careful_world, &library));
        let first_gun = text.find(r#""child": "gun""#).unwrap() + r#""child": "#.len();
        let warning = &quick.warnings()[0];
        assert_eq!(
            warning.diagnostic.span,
            Some(first_gun..first_gun + r#""gun""#.len())
        );
        let id_at = text[..first_gun].rfind(r#""id": ""#).unwrap() + r#""id": ""#.len();
        let id = &text[id_at..id_at + 16];
        assert_eq!(
            warning.to_string(),
            format!("warning[unknown-child]: entity {id}: left out; archetype `turret` has no child `gun` any more")
        );

        let quick = fast_binary(&bytes, &mut World::new(), &library, &options).expect("gave up");
        let careful = load_binary(&context, &mut World::new(), &bytes).unwrap();
        assert_eq!(quick.changes(), careful.changes());
        assert_eq!(quick.warnings(), careful.warnings());

        // As an error, the careful reader's to report.
        let options = SceneLoadOptions {
            removed_children: crate::scene::RemovedChildren::Error,
            ..SceneLoadOptions::default()
        };
        let mut world = World::new();
        assert!(fast(&text, &mut world, &library, &options).is_none());
        assert_eq!(world.len(), 0);
    }

    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Purse {
        gold: u32,
    }

    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Stash(Shared<Purse>);

    #[test]
    fn warns_of_an_unknown_field_in_a_shared_value_beside_a_rename_as_the_careful_reader_does() {
        let mut registry = ComponentRegistry::new();
        registry.register::<Stash>().unwrap();
        let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        let chest = r#"{ "formerly": ["crate"], "components": { "Name": "Chest" } }"#;
        library.set_source("chest.json", Some(chest));
        let text = r#"{
  "format": 2,
  "shared": {
    "00000000000000aa": { "gold": 3, "gokd": 4 }
  },
  "entities": [
    { "id": "0000000000000001", "archetype": "crate" },
    { "id": "0000000000000002", "components": { "Stash": { "$shared": "00000000000000aa" } } }
  ]
}"#;
        let (quick, careful) = warned_of_unknown_fields_in_one_pass(text, &library);
        assert_eq!(quick.changes(), careful.changes());
        let messages: Vec<_> = (quick.warnings().iter())
            .map(|warning| (warning.diagnostic.position.unwrap(), warning.to_string()))
            .collect();
        let at = |line, column| Position { line, column };
        assert_eq!(
            messages,
            [
                (at(4, 38), "warning[unknown-field]: shared value 00000000000000aa: unknown field `gokd` in `Purse`; did you mean `gold`?".to_string()),
                (at(7, 46), "warning[old-name]: archetype `crate` is now called `chest`: 1 entry loaded as `chest` (saving writes the new name)".to_string()),
            ]
        );
    }
}
