//! Saving a world (or part of it) as a scene: JSON or binary, deterministic, atomic on disk.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use hecs::{Entity, World};
use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::Value;

use crate::archetype::{override_shape, ArchetypeId, ArchetypeInstance, OverridesId};
use crate::archetype::{worker_threads, ArchetypeLibrary};
use crate::component::MapError;
use crate::component::StableId;
use crate::component::{
    changed_fields, ComponentId, ComponentRegistry, Layout, LiveColumn, WriteError,
};
use crate::component::{mark_used_in, with_save_table, SaveTable};
use crate::component::{with_installed_mapper, with_mapper, EntityMapper, RefIn, RefOut, RefWire};
use crate::fs::write_atomically;
use crate::json::merge_patch;
use crate::json::FieldPath;
use crate::reload::{instance_entities, instance_root, LiveRefs};
use crate::scene::entity_table::EntityTable;
use crate::scene::format::{
    append_checksum, BinaryWriter, ScenePretty, BINARY_MAGIC, BINARY_SCENE_FORMAT_VERSION,
    KIND_DIFF, KIND_REMOVED, KIND_TYPED, SCENE_FORMAT_VERSION,
};
use crate::scene::header::{archetype_nodes, write_json_header, ArchetypeNodes};
use crate::scene::instance_diff::{archetype_value_key, write_diff, Leaves};

/// How a scene is encoded. More encodings may come: a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SceneEncoding {
    /// Pretty, deterministic, merge-friendly JSON (`*.scene.json`).
    Json,
    /// Compact binary: postcard for component values (`*.scene.bin`).
    #[cfg(feature = "binary")]
    Binary,
}

impl SceneEncoding {
    /// The encoding of a scene's bytes: binary scenes start with the magic bytes `ARCHSCN\0`.
    pub fn detect(bytes: &[u8]) -> Self {
        #[cfg(feature = "binary")]
        if bytes.starts_with(BINARY_MAGIC) {
            return SceneEncoding::Binary;
        }
        #[cfg(not(feature = "binary"))]
        let _ = bytes;
        SceneEncoding::Json
    }

    /// The format version this library writes in this encoding
    /// ([`SCENE_FORMAT_VERSION`] for JSON, [`BINARY_SCENE_FORMAT_VERSION`] for binary).
    pub fn current_format(self) -> u64 {
        match self {
            SceneEncoding::Json => SCENE_FORMAT_VERSION,
            #[cfg(feature = "binary")]
            SceneEncoding::Binary => BINARY_SCENE_FORMAT_VERSION,
        }
    }

    /// Binary for paths ending in `.bin`, JSON otherwise (always JSON without the `binary`
    /// feature).
    pub fn for_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            #[cfg(feature = "binary")]
            Some("bin") => SceneEncoding::Binary,
            _ => SceneEncoding::Json,
        }
    }
}

/// What to do with a reference to an entity that is not being saved. More choices may come: a
/// `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DanglingReferences {
    /// Refuse to save, naming the entity, component and field (the default).
    #[default]
    Error,
    /// Write `null` (loads back as `None` into `Option<EntityRef>` fields).
    WriteNull,
}

/// Options for saving a scene.
///
/// New options may be added in minor versions: start from [`SceneSaveOptions::default`] and
/// set the fields you need.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct SceneSaveOptions {
    /// Write every component in full, even for archetype instances (which normally store only
    /// their differences from the archetype).
    pub full: bool,
    /// What to do with references to entities outside the scene.
    pub dangling_references: DanglingReferences,
    /// Save only these entities (default: every entity that has a [`StableId`]).
    pub selection: Option<Vec<Entity>>,
    /// At most this many threads write a big JSON scene (4,096 entities or more); `0`, the
    /// default, means one per core (up to 8). The bytes are the same whatever it is.
    pub max_threads: usize,
    /// The game's own data about the save (its version, a save slot's title, ...), written as
    /// the file's `meta` and readable without loading the scene
    /// ([`read_scene_header`](crate::read_scene_header)); the migration hook is given it.
    pub meta: Option<serde_json::Map<String, Value>>,
}

/// Why a scene could not be saved. Nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SceneSaveError {
    /// A selected entity has no stable ID, so nothing could refer to it after loading.
    #[error("entity {entity:?} has no StableId; only entities with one can be saved (spawning from an archetype and loading a scene give them one)")]
    MissingStableId {
        /// The entity.
        entity: Entity,
    },
    /// Two entities share a stable ID.
    #[error("entities {first:?} and {second:?} share the stable ID {id}")]
    DuplicateStableId {
        /// The ID.
        id: StableId,
        /// One entity.
        first: Entity,
        /// The other.
        second: Entity,
    },
    /// A component refers to an entity that is not being saved.
    #[error("entity {id}: `{component}{}` refers to entity {target:?}, which is not being saved; save it too, or write such references as null (SceneSaveOptions::dangling_references)", field_suffix(field))]
    DanglingReference {
        /// The entity holding the reference.
        id: StableId,
        /// The component.
        component: String,
        /// The field.
        field: FieldPath,
        /// The entity referred to.
        target: Entity,
    },
    /// A component value cannot be written (e.g. a NaN float).
    #[error(
        "entity {id}: cannot write `{component}{}`: {message}",
        field_suffix(field)
    )]
    Unwritable {
        /// The entity.
        id: StableId,
        /// The component.
        component: String,
        /// The field.
        field: FieldPath,
        /// What is wrong.
        message: String,
    },
    /// The file could not be written; the previous file is intact.
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

fn field_suffix(field: &FieldPath) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!(".{field}")
    }
}

/// Saves `world` (or `options.selection`) as a scene in memory.
///
/// Entities are sorted by stable ID, components by name. Archetype instances store only the
/// merge patch from their archetype's current version (or everything, with
/// [`SceneSaveOptions::full`]); other entities store every component. References are written
/// as the target's stable ID. Runtime-only components are skipped.
///
/// # Errors
/// See [`SceneSaveError`].
pub fn save_scene(
    world: &World,
    library: &ArchetypeLibrary,
    encoding: SceneEncoding,
    options: &SceneSaveOptions,
) -> Result<Vec<u8>, SceneSaveError> {
    let selection = options.selection.as_deref();
    super::logging::scene_save(encoding, world, selection, || {
        save_scene_untraced(world, library, encoding, options)
    })
}

/// [`save_scene`] without its log span (see `logging.rs`).
fn save_scene_untraced(
    world: &World,
    library: &ArchetypeLibrary,
    encoding: SceneEncoding,
    options: &SceneSaveOptions,
) -> Result<Vec<u8>, SceneSaveError> {
    let entities = collect_entities(world, options)?;
    let ids = EntityTable::new(entities.iter().map(|(id, e)| (e.id(), (*e, *id))));
    let config = save_config(world, library, encoding, options, ids);
    let mut saver = Saver::new(&config);
    saver.archetypes = saver.instanced_archetypes(&entities, options.selection.is_none());
    let nodes = archetype_nodes(library, &saver.archetypes);
    let mapper = saver.mapper();
    // The shared table comes before the entities in the file, but is only known once they are
    // written: write the entities first, then put the document together.
    let ((bytes, _), mut table) = with_save_table(SaveTable::default(), || {
        with_mapper(mapper, || match encoding {
            SceneEncoding::Json => {
                let mut out = json_head().into_bytes();
                saver
                    .json(&entities, &mut out)
                    .map(|workers| (out, workers))
            }
            #[cfg(feature = "binary")]
            SceneEncoding::Binary => saver.binary(&entities),
        })
    });
    let (mut bytes, workers) = bytes?;
    for worker in workers {
        table.absorb(worker);
    }
    Ok(match encoding {
        SceneEncoding::Json => {
            let mut header = Vec::new();
            write_json_header(options.meta.as_ref(), &nodes, &mut header);
            let shared = table.into_used();
            finish_json_document(header, &shared, &mut bytes, !entities.is_empty());
            bytes
        }
        #[cfg(feature = "binary")]
        SceneEncoding::Binary => {
            let meta = options.meta.as_ref();
            saver.binary_document(meta, &nodes, &table.into_all(), &bytes)
        }
    })
}

/// Where a JSON scene's entity list starts.
const ENTITIES_KEY: &str = "\n  \"entities\": [";

/// The start of a JSON scene, up to its entity list: `finish_json_document` puts the shared
/// table (known only once the entities are written) between the `format` line and the list.
fn json_head() -> String {
    format!("{{\n  \"format\": {SCENE_FORMAT_VERSION},{ENTITIES_KEY}")
}

/// Closes the entity list `out` holds after [`json_head`] and puts `header` (the `meta` and
/// `archetypes` members) and the shared table in front of it, if there are any (moving the
/// list once, only then).
fn finish_json_document(
    mut table: Vec<u8>,
    shared: &[(u64, Vec<u8>)],
    out: &mut Vec<u8>,
    has_entities: bool,
) {
    out.extend_from_slice(if has_entities {
        b"\n  ]\n}\n"
    } else {
        b"]\n}\n"
    });
    if shared.is_empty() {
        splice_head(table, out);
        return;
    }
    table.extend_from_slice(b"\n  \"shared\": {");
    for (i, (key, bytes)) in shared.iter().enumerate() {
        table.extend_from_slice(if i == 0 { b"\n    \"" } else { b",\n    \"" });
        table.extend_from_slice(format!("{key:016x}\": ").as_bytes());
        // The value's own compact JSON, re-indented to sit in the document.
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => {
                let mut serializer =
                    serde_json::Serializer::with_formatter(&mut table, ScenePretty::at(2));
                let _ = value.serialize(&mut serializer);
            }
            Err(_) => table.extend_from_slice(bytes),
        }
    }
    table.extend_from_slice(b"\n  },");
    splice_head(table, out);
}

/// Puts `members` between the `format` line and the entity list of the document in `out`.
fn splice_head(members: Vec<u8>, out: &mut Vec<u8>) {
    if members.is_empty() {
        return;
    }
    let at = json_head().len() - ENTITIES_KEY.len();
    out.splice(at..at, members);
}

/// Saves a scene to `path` atomically: the bytes go to a temporary file in the same directory,
/// which is flushed to disk and then renamed over `path`. A failure (or a crash) at any point
/// leaves the previous file intact. The encoding follows the extension (`.bin`: binary).
///
/// # Errors
/// See [`SceneSaveError`].
pub fn save_scene_to_path(
    path: impl AsRef<Path>,
    world: &World,
    library: &ArchetypeLibrary,
    options: &SceneSaveOptions,
) -> Result<(), SceneSaveError> {
    let path = path.as_ref();
    super::logging::scene_save_file(path, || {
        let bytes = save_scene(world, library, SceneEncoding::for_path(path), options)?;
        write_atomically(path, &bytes).map_err(|source| SceneSaveError::Io {
            path: path.to_path_buf(),
            source,
        })
    })
}

fn collect_entities(
    world: &World,
    options: &SceneSaveOptions,
) -> Result<Vec<(StableId, Entity)>, SceneSaveError> {
    let mut entities: Vec<(StableId, Entity)> = match &options.selection {
        Some(selection) => {
            let mut out = Vec::with_capacity(selection.len());
            for &entity in selection {
                let id = world
                    .get::<&StableId>(entity)
                    .map_err(|_| SceneSaveError::MissingStableId { entity })?;
                out.push((*id, entity));
            }
            out.sort_unstable_by_key(|(id, e)| (*id, e.to_bits()));
            out.dedup_by_key(|(_, e)| *e);
            out
        }
        None => world
            .query::<(Entity, &StableId)>()
            .iter()
            .map(|(e, id)| (*id, e))
            .collect(),
    };
    entities.sort_unstable_by_key(|(id, e)| (*id, e.to_bits()));
    for pair in entities.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(SceneSaveError::DuplicateStableId {
                id: pair[0].0,
                first: pair[0].1,
                second: pair[1].1,
            });
        }
    }
    Ok(entities)
}

/// The components a scene writes, in name order: everything but runtime-only components and
/// the bookkeeping a scene entry carries in its header.
pub(super) fn component_order(registry: &ComponentRegistry) -> Vec<ComponentId> {
    let mut order: Vec<ComponentId> = registry
        .ids()
        .filter(|id| !registry.is_runtime_only(*id))
        .filter(|id| {
            !registry.is_managed(*id) || matches!(registry.name(*id), "Parent" | "Children")
        })
        .collect();
    order.sort_by(|a, b| registry.name(*a).cmp(registry.name(*b)));
    order
}

/// Writes references as stable IDs (hex text in JSON, numbers in binary).
struct SaveRefs {
    ids: Arc<EntityTable<(Entity, StableId)>>,
    wire: RefWire,
    policy: DanglingReferences,
    /// The entity the last reference that could not be written pointed at.
    dangling: Option<Entity>,
}

impl EntityMapper for SaveRefs {
    fn wire(&self) -> RefWire {
        self.wire
    }
    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        match (self.ids.of(entity), self.policy) {
            (Some(id), _) => Ok(match self.wire {
                RefWire::Number => RefOut::Number(id.0),
                _ => RefOut::Hex(id),
            }),
            (None, DanglingReferences::WriteNull) => Ok(RefOut::Null),
            (None, DanglingReferences::Error) => {
                self.dangling = Some(entity);
                Err(MapError::NotSaved(entity))
            }
        }
    }
    fn read(&mut self, _reference: RefIn<'_>) -> Result<Entity, MapError> {
        Err(MapError::NotReadWhileSaving)
    }
}

/// An archetype entity's canonical component values, as the scene compares them.
struct Canonical {
    values: BTreeMap<ComponentId, Value>,
    /// The values without references in postcard, to tell an untouched component from the
    /// live bytes alone (no JSON made).
    bytes: BTreeMap<ComponentId, Vec<u8>>,
    /// Each value's key, which a binary diff taken against it carries.
    keys: BTreeMap<ComponentId, u64>,
    /// Components whose values hold `#` references (resolved per instance).
    with_refs: Vec<ComponentId>,
    /// The node `#` references are relative to.
    base: String,
}

/// How one entity is written.
enum Entry {
    Plain,
    Instance {
        archetype: ArchetypeId,
        node: u32,
        canonical: Rc<Canonical>,
    },
}

/// What every part of a save reads: the world and library, each component's rank and JSON
/// key, the options, and the saved entities' stable IDs (`ids`).
fn save_config<'a>(
    world: &'a World,
    library: &'a ArchetypeLibrary,
    encoding: SceneEncoding,
    options: &SceneSaveOptions,
    ids: EntityTable<(Entity, StableId)>,
) -> SaveConfig<'a> {
    let order = component_order(library.registry());
    let mut rank = vec![None; library.registry().len()];
    for (position, component) in order.iter().enumerate() {
        rank[component.index()] = Some(position);
    }
    SaveConfig {
        world,
        library,
        registry: library.registry(),
        rank,
        keys: library
            .registry()
            .ids()
            .map(|id| {
                let mut key = Vec::new();
                write_json_string(&mut key, library.registry().name(id));
                key.extend_from_slice(b": ");
                key
            })
            .collect(),
        full: options.full,
        threads: match options.max_threads {
            0 => worker_threads(),
            n => n.min(worker_threads()),
        },
        ids: Arc::new(ids),
        wire: match encoding {
            SceneEncoding::Json => RefWire::Text,
            #[cfg(feature = "binary")]
            SceneEncoding::Binary => RefWire::Number,
        },
        policy: options.dangling_references,
    }
}

/// What every thread writing part of a save shares.
struct SaveConfig<'a> {
    world: &'a World,
    library: &'a ArchetypeLibrary,
    registry: &'a ComponentRegistry,
    full: bool,
    /// How many threads a big JSON scene is written on.
    threads: usize,
    /// A component's place in `order` (by `ComponentId`), `None` for those scenes skip.
    rank: Vec<Option<usize>>,
    /// A component's key in a JSON scene (`"Name": `, by `ComponentId`).
    keys: Vec<Vec<u8>>,
    /// The stable ID of every entity saved, and how references are written.
    ids: Arc<EntityTable<(Entity, StableId)>>,
    wire: RefWire,
    policy: DanglingReferences,
}

/// One thread's writer: the shared configuration and what it caches and learns as it goes.
struct Saver<'a> {
    config: &'a SaveConfig<'a>,
    canonical: FxHashMap<(ArchetypeId, u32), Option<Rc<Canonical>>>,
    /// Archetypes the scene has instances of, in table order (sorted by name).
    archetypes: Vec<ArchetypeId>,
    /// Component layouts met in binary diffs (`None`: the type has none).
    layouts: FxHashMap<ComponentId, Option<Layout>>,
}

/// One component of one entity, as it will be written.
enum Written {
    /// The live value (in the entity's archetype's `k`th column), written through its own
    /// serde impl and checked as it is written.
    Typed(usize),
    /// A merge patch from the archetype; the live value is in the `column`th column.
    Patch { column: usize, patch: Value },
    /// A binary diff found from the bytes: the fields set, and the live value's bytes.
    Diff { leaves: Leaves, value: Vec<u8> },
    /// The archetype has it, the entity does not.
    Removed,
}

impl<'a> Saver<'a> {
    fn new(config: &'a SaveConfig<'a>) -> Self {
        Saver {
            config,
            canonical: FxHashMap::default(),
            archetypes: Vec::new(),
            layouts: FxHashMap::default(),
        }
    }

    /// The entity mapper to install on this saver's thread while it writes.
    fn mapper(&self) -> SaveRefs {
        SaveRefs {
            ids: self.config.ids.clone(),
            wire: self.config.wire,
            policy: self.config.policy,
            dangling: None,
        }
    }

    /// How the entity at `row` of `columns` is written: as an instance of the archetype its
    /// marker names (read from the marker column, not looked up by entity), or plain.
    fn entry(&mut self, (columns, row): (&Columns<'_>, usize)) -> Entry {
        // Full saves still name the archetype, so instances stay instances on load.
        let Some(&marker) = columns
            .markers
            .as_ref()
            .and_then(|markers| markers.get(row))
        else {
            return Entry::Plain;
        };
        let canonical = self
            .canonical
            .entry((marker.archetype, marker.node))
            .or_insert_with(|| canonical_for(self.config.library, self.config.registry, marker))
            .clone();
        match canonical {
            Some(canonical) => Entry::Instance {
                archetype: marker.archetype,
                node: marker.node,
                canonical,
            },
            None => Entry::Plain,
        }
    }

    /// What to write for each component of `entity` (whose values are in `columns`), in
    /// name order, into `out`.
    fn components(
        &mut self,
        id: StableId,
        entity: Entity,
        entry: &Entry,
        (columns, row): (&Columns<'_>, usize),
        out: &mut Vec<(ComponentId, Written)>,
    ) -> Result<(), SceneSaveError> {
        out.clear();
        let Entry::Instance {
            archetype,
            node,
            canonical,
        } = entry
        else {
            out.extend((0..columns.of.len()).map(|k| (columns.of[k].0, Written::Typed(k))));
            return Ok(());
        };
        let plan = columns.plan((*archetype, *node), canonical, self.config);
        for step in plan.iter() {
            match *step {
                Step::Removed(component) => out.push((component, Written::Removed)),
                Step::Own(component, k) => out.push((component, Written::Typed(k))),
                Step::Compare(component, k) => {
                    let column = &*columns.of[k].1;
                    if self.untouched(canonical, component, column, row) {
                        continue;
                    }
                    if let Some((leaves, value)) = self.byte_diff(canonical, component, column, row)
                    {
                        if !leaves.is_empty() {
                            out.push((component, Written::Diff { leaves, value }));
                        }
                        continue;
                    }
                    if let Some(patch) = self.patch(id, entity, entry, canonical, component)? {
                        out.push((component, Written::Patch { column: k, patch }));
                    }
                }
            }
        }
        Ok(())
    }

    /// The merge patch from the archetype's value of `component` to the live one of `entity`
    /// (`None`: they are the same, or the entity has no such component).
    fn patch(
        &self,
        id: StableId,
        entity: Entity,
        entry: &Entry,
        canonical: &Canonical,
        component: ComponentId,
    ) -> Result<Option<Value>, SceneSaveError> {
        let Some(value) = canonical.values.get(&component) else {
            return Ok(None);
        };
        let archetype_value = if canonical.with_refs.contains(&component) {
            Cow::Owned(self.resolve_for_instance(entity, entry, component, value, &canonical.base))
        } else {
            Cow::Borrowed(value)
        };
        // The patch is made from a JSON value, which has no NaN: check first.
        let ops = self.config.registry.ops(component);
        if let Some(Err(error)) = ops.check_live(self.config.world, entity) {
            return Err(self.check_failed(id, component, error));
        }
        let live_value = match ops.to_json(self.config.world, entity) {
            Some(Ok(value)) => value,
            Some(Err(message)) => return Err(self.unwritable(id, component, message.to_string())),
            None => return Ok(None),
        };
        Ok(merge_patch::diff(&archetype_value, &live_value))
    }

    /// Whether the live value of `component` (in `column`, at `row`) has the archetype's
    /// postcard bytes: then it is the archetype's value, with nothing to write. `false` also
    /// when the bytes cannot be made: the JSON comparison then decides, and reports the
    /// problem.
    fn untouched(
        &self,
        canonical: &Canonical,
        component: ComponentId,
        column: &dyn LiveColumn,
        row: usize,
    ) -> bool {
        let Some(archetype_bytes) = canonical.bytes.get(&component) else {
            return false;
        };
        column.has_postcard(row, archetype_bytes)
    }

    /// For a binary scene: the fields in which the live value of `component` (in `column`, at
    /// `row`) differs from the archetype's, found from the bytes of both by the component's
    /// layout, with the live value's bytes. `None` where the JSON comparison decides: in a JSON
    /// scene, without a layout or the archetype's bytes, for a difference the bytes do not
    /// place (see [`changed_fields`]), or a value that cannot be written (the JSON path
    /// reports why).
    fn byte_diff(
        &mut self,
        canonical: &Canonical,
        component: ComponentId,
        column: &dyn LiveColumn,
        row: usize,
    ) -> Option<(Leaves, Vec<u8>)> {
        if self.config.wire != RefWire::Number {
            return None;
        }
        let archetype_bytes = canonical.bytes.get(&component)?;
        let mut live = Vec::new();
        column.write_postcard(row, &mut live).ok()?;
        let layout = self.layout(component)?;
        let fields = changed_fields(layout, archetype_bytes, &live).ok()?;
        Some((Leaves::setting(&fields), live))
    }

    /// The layout of `component`'s values, decoded once per save and thread.
    fn layout(&mut self, component: ComponentId) -> Option<&Layout> {
        let registry = self.config.registry;
        let layout = self.layouts.entry(component).or_insert_with(|| {
            let bytes = registry.layout_bytes(component)?;
            crate::component::from_bytes(bytes).ok()
        });
        layout.as_ref()
    }

    /// An archetype value holding `#` references, with the references pointing at this
    /// instance's entities, in the form the scene writes (stable IDs).
    fn resolve_for_instance(
        &self,
        entity: Entity,
        entry: &Entry,
        component: ComponentId,
        value: &Value,
        base: &str,
    ) -> Value {
        let Entry::Instance { archetype, .. } = entry else {
            return value.clone();
        };
        let root = instance_root(self.config.world, *archetype, entity);
        let mapper = LiveRefs {
            paths: instance_entities(self.config.world, self.config.library, *archetype, root),
            base: base.to_string(),
        };
        let ops = self.config.registry.ops(component);
        let (decoded, _) = with_mapper(mapper, || ops.decode(value, &mut Vec::new()));
        match decoded.ok().map(|typed| ops.encode(&typed)) {
            Some(Ok(resolved)) => resolved,
            // The instance lost the entity a reference names: compare against the raw value,
            // so the live value is written whole.
            _ => value.clone(),
        }
    }

    fn check_failed(
        &self,
        id: StableId,
        component: ComponentId,
        error: crate::component::CheckError,
    ) -> SceneSaveError {
        let name = self.config.registry.name(component).to_string();
        // The entity this thread's mapper (installed while it writes) could not write.
        match with_installed_mapper(|refs: &mut SaveRefs| refs.dangling.take()).flatten() {
            Some(target) => SceneSaveError::DanglingReference {
                id,
                component: name,
                field: error.path,
                target,
            },
            None => SceneSaveError::Unwritable {
                id,
                component: name,
                field: error.path,
                message: error.message,
            },
        }
    }

    fn write_failed(
        &self,
        id: StableId,
        component: ComponentId,
        error: WriteError,
    ) -> SceneSaveError {
        match error {
            WriteError::Check(error) => self.check_failed(id, component, error),
            WriteError::Write(message) => self.unwritable(id, component, message),
        }
    }

    fn unwritable(&self, id: StableId, component: ComponentId, message: String) -> SceneSaveError {
        SceneSaveError::Unwritable {
            id,
            component: self.config.registry.name(component).to_string(),
            field: FieldPath::root(),
            message,
        }
    }

    /// The entity list of a JSON scene (without its brackets), appended to `out`, and the
    /// shared tables of the worker threads that wrote part of it (for the caller to merge
    /// into its own).
    fn json(
        &mut self,
        entities: &[(StableId, Entity)],
        out: &mut Vec<u8>,
    ) -> Result<Vec<SaveTable>, SceneSaveError> {
        let write = |saver: &mut Saver<'_>, run: &[(usize, Place)]| saver.json_blocks(run);
        let (parts, placed, tables) = self.blocks(entities, &write)?;
        out.reserve(parts.iter().map(|p| p.blocks.len()).sum::<usize>() + entities.len() * 8);
        for (index, (number, range)) in placed.into_iter().enumerate() {
            out.extend_from_slice(if index == 0 { b"\n    " } else { b",\n    " });
            out.extend_from_slice(&parts[number].blocks[range]);
        }
        Ok(tables)
    }

    /// Every entity's block, written by `write` a run at a time, and where each is (the part
    /// and the range in it), in the order of `entities`; with the shared tables of the workers.
    ///
    /// Each entity's block is written in the order hecs stores entities (its components are
    /// then read sequentially; in stable-ID order they are read all over memory, which costs
    /// more than copying the blocks once), and the blocks are put in stable-ID order after. A
    /// big world is cut in as many runs as there are cores, each written on its own thread; a
    /// block does not depend on which thread wrote it.
    #[allow(clippy::type_complexity)]
    fn blocks(
        &mut self,
        entities: &[(StableId, Entity)],
        write: &(dyn Fn(&mut Saver<'_>, &[(usize, Place)]) -> Blocks + Sync),
    ) -> Result<(Vec<Blocks>, Vec<(usize, Range<usize>)>, Vec<SaveTable>), SceneSaveError> {
        let order = storage_order(self.config.world, entities);
        let threads = if order.len() < PARALLEL_MIN_ENTITIES {
            1
        } else {
            self.config.threads.max(1)
        };
        let run = order.len().div_ceil(threads).max(1);
        let mut runs = order.chunks(run);
        let first = runs.next().unwrap_or_default();
        let config = self.config;
        let (mut parts, tables) = std::thread::scope(|scope| {
            let workers: Vec<_> = runs
                .map(|run| {
                    scope.spawn(move || {
                        let mut saver = Saver::new(config);
                        let mapper = saver.mapper();
                        let ((part, _), table) = with_save_table(SaveTable::default(), || {
                            with_mapper(mapper, || write(&mut saver, run))
                        });
                        (part, table)
                    })
                })
                .collect();
            let mut parts = vec![write(self, first)];
            let mut tables = Vec::new();
            for worker in workers {
                match worker.join() {
                    Ok((part, table)) => {
                        parts.push(part);
                        tables.push(table);
                    }
                    // A panic in a worker is a bug: let it surface here, with its message.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            (parts, tables)
        });
        let mut failure = FirstFailure::default();
        let mut placed = vec![(0, 0..0); entities.len()];
        for (number, (part, run)) in parts.iter_mut().zip(order.chunks(run)).enumerate() {
            if let Some((index, error)) = part.failure.0.take() {
                failure.record(index, error);
            }
            for ((index, _), range) in run.iter().zip(&part.ranges) {
                placed[*index] = (number, range.clone());
            }
        }
        failure.into_result()?;
        Ok((parts, placed, tables))
    }

    /// The blocks of a run of entities (indices into `entities`, with where their values are),
    /// written one after the other, with the range of each.
    fn json_blocks(&mut self, run: &[(usize, Place)]) -> Blocks {
        let tables = columns(self.config, run);
        let mut blocks = Blocks {
            blocks: Vec::new(),
            ranges: Vec::with_capacity(run.len()),
            failure: FirstFailure::default(),
        };
        let mut written = Vec::new();
        for (k, &(index, place)) in run.iter().enumerate() {
            if k == ESTIMATE_AFTER {
                // Room for the rest at the size so far, with a margin (pages never written
                // are never touched), so the buffer is not grown and copied again and again.
                let estimate = blocks.blocks.len() / k * (run.len() - k) * 3 / 2;
                blocks.blocks.reserve(estimate);
            }
            let (id, entity) = (place.id, place.entity);
            let start = blocks.blocks.len();
            // `columns` borrowed every archetype the run reads from.
            if let Some(columns) = &tables[place.archetype] {
                let out = &mut blocks.blocks;
                if let Err(error) =
                    self.json_entity(id, entity, columns, place.row, &mut written, out)
                {
                    blocks.failure.record(index, error);
                }
            }
            blocks.ranges.push(start..blocks.blocks.len());
        }
        blocks
    }

    /// One entity of a JSON scene, from its `{` to its `}`; its values are in `row` of
    /// `columns`.
    fn json_entity(
        &mut self,
        id: StableId,
        entity: Entity,
        columns: &Columns<'_>,
        row: usize,
        written: &mut Vec<(ComponentId, Written)>,
        out: &mut Vec<u8>,
    ) -> Result<(), SceneSaveError> {
        let entry = self.entry((columns, row));
        self.components(id, entity, &entry, (columns, row), written)?;
        out.extend_from_slice(b"{");
        out.extend_from_slice(b"\n      \"id\": \"");
        out.extend_from_slice(&id.hex_digits());
        out.push(b'"');
        if let Entry::Instance {
            archetype, node, ..
        } = &entry
        {
            write_key_string(
                out,
                "archetype",
                self.config.library.name_of(*archetype).unwrap_or_default(),
            );
            if let Some(path) = self.node_path(*archetype, *node) {
                write_key_string(out, "child", path);
            }
        }
        out.extend_from_slice(b",\n      \"components\": {");
        for (i, (component, value)) in written.iter().enumerate() {
            out.extend_from_slice(if i == 0 {
                b"\n        "
            } else {
                b",\n        "
            });
            out.extend_from_slice(&self.config.keys[component.index()]);
            match value {
                // A marker serializes as `null`, which in a scene entry means "removed":
                // write it as archetype files do.
                Written::Typed(_) if self.config.registry.is_marker(*component) => {
                    out.extend_from_slice(b"{}")
                }
                Written::Typed(k) => columns.of[*k]
                    .1
                    .write_json(row, out, 4)
                    .map_err(|error| self.write_failed(id, *component, error))?,
                Written::Patch { patch, .. } => {
                    mark_used_in(patch);
                    let mut serializer =
                        serde_json::Serializer::with_formatter(&mut *out, ScenePretty::at(4));
                    patch
                        .serialize(&mut serializer)
                        .map_err(|e| self.unwritable(id, *component, e.to_string()))?;
                }
                Written::Removed => out.extend_from_slice(b"null"),
                // Only a binary save finds its diffs from the bytes.
                Written::Diff { .. } => {
                    let message = "a binary diff in a JSON scene (internal error)".to_string();
                    return Err(self.unwritable(id, *component, message));
                }
            }
        }
        out.extend_from_slice(if written.is_empty() {
            b"}"
        } else {
            b"\n      }"
        });
        out.extend_from_slice(b"\n    }");
        Ok(())
    }

    /// The archetypes the scene has instances of, sorted by name (the binary archetype table's
    /// order, so the bytes do not depend on the world's storage order).
    ///
    /// `whole`: `entities` is every entity with a stable ID (no selection), whose markers are
    /// then read column by column instead of looked up one entity at a time.
    fn instanced_archetypes(
        &self,
        entities: &[(StableId, Entity)],
        whole: bool,
    ) -> Vec<ArchetypeId> {
        let (world, library) = (self.config.world, self.config.library);
        let mut archetypes: Vec<ArchetypeId> = Vec::new();
        let mut note = |marker: &ArchetypeInstance| {
            // Those an entry can be an instance of (see `canonical_for`); the values
            // themselves are read later, with the save's shared table installed.
            let usable = !library.is_deleted(marker.archetype)
                && library
                    .get_by_id(marker.archetype)
                    .is_some_and(|archetype| archetype.compiled.is_some());
            if usable && archetypes.last() != Some(&marker.archetype) {
                archetypes.push(marker.archetype);
            }
        };
        if whole {
            let mut markers = world.query::<&ArchetypeInstance>().with::<&StableId>();
            markers.iter().for_each(&mut note);
        } else {
            for &(_, entity) in entities {
                if let Ok(marker) = world.get::<&ArchetypeInstance>(entity) {
                    note(&marker);
                }
            }
        }
        archetypes.sort_unstable_by(|a, b| library.name_of(*a).cmp(&library.name_of(*b)));
        archetypes.dedup();
        archetypes
    }

    /// The entity section of a binary scene, naming archetypes by their place in
    /// `self.archetypes`.
    fn binary(
        &mut self,
        entities: &[(StableId, Entity)],
    ) -> Result<(Vec<u8>, Vec<SaveTable>), SceneSaveError> {
        let archetype_index: FxHashMap<ArchetypeId, u64> = self
            .archetypes
            .iter()
            .enumerate()
            .map(|(i, archetype)| (*archetype, i as u64 + 1))
            .collect();
        let write = |saver: &mut Saver<'_>, run: &[(usize, Place)]| {
            saver.binary_blocks(run, &archetype_index)
        };
        // As for JSON: blocks written in storage order (on every core), put in stable-ID order
        // afterwards.
        let (parts, placed, tables) = self.blocks(entities, &write)?;
        let mut body = BinaryWriter {
            out: Vec::with_capacity(parts.iter().map(|p| p.blocks.len()).sum::<usize>() + 8),
        };
        body.varint(entities.len() as u64);
        for (number, range) in placed {
            body.out.extend_from_slice(&parts[number].blocks[range]);
        }
        Ok((body.out, tables))
    }

    /// The binary blocks of a run of entities, as [`json_blocks`](Self::json_blocks) writes
    /// JSON ones.
    fn binary_blocks(
        &mut self,
        run: &[(usize, Place)],
        archetype_index: &FxHashMap<ArchetypeId, u64>,
    ) -> Blocks {
        let tables = columns(self.config, run);
        let mut out = BinaryWriter {
            out: Vec::with_capacity(run.len() * 96),
        };
        let mut ranges = Vec::with_capacity(run.len());
        let mut failure = FirstFailure::default();
        let mut scratch = Vec::new();
        let mut written = Vec::new();
        for &(index, place) in run {
            let (id, entity) = (place.id, place.entity);
            let start = out.out.len();
            if let Some(columns) = &tables[place.archetype] {
                let at = (columns, place.row);
                let scratch = (&mut written, &mut scratch);
                if let Err(error) =
                    self.binary_entity(id, entity, at, archetype_index, &mut out, scratch)
                {
                    failure.record(index, error);
                }
            }
            ranges.push(start..out.out.len());
        }
        Blocks {
            blocks: out.out,
            ranges,
            failure,
        }
    }

    /// One entity of a binary scene.
    fn binary_entity(
        &mut self,
        id: StableId,
        entity: Entity,
        (columns, row): (&Columns<'_>, usize),
        archetype_index: &FxHashMap<ArchetypeId, u64>,
        body: &mut BinaryWriter,
        (components, scratch): (&mut Vec<(ComponentId, Written)>, &mut Vec<u8>),
    ) -> Result<(), SceneSaveError> {
        let entry = self.entry((columns, row));
        self.components(id, entity, &entry, (columns, row), components)?;
        body.u64_le(id.0);
        match &entry {
            Entry::Instance {
                archetype, node, ..
            } => {
                body.varint(archetype_index.get(archetype).copied().unwrap_or(0));
                body.str(self.node_path(*archetype, *node).unwrap_or(""));
            }
            Entry::Plain => {
                body.varint(0);
                body.str("");
            }
        }
        body.varint(components.len() as u64);
        for (component, written) in components.iter() {
            body.varint(u64::from(component.0));
            match written {
                Written::Typed(k) => {
                    scratch.clear();
                    columns.of[*k]
                        .1
                        .write_postcard(row, scratch)
                        .map_err(|error| self.write_failed(id, *component, error))?;
                    body.out.push(KIND_TYPED);
                    body.bytes(scratch);
                }
                Written::Patch { column, patch } => {
                    scratch.clear();
                    columns.of[*column]
                        .1
                        .write_postcard(row, scratch)
                        .map_err(|error| self.write_failed(id, *component, error))?;
                    let key = canonical_key(&entry, *component);
                    body.out.push(KIND_DIFF);
                    write_diff(
                        body,
                        key,
                        &Leaves::of_shape(&override_shape(patch)),
                        scratch,
                    );
                }
                Written::Diff { leaves, value } => {
                    let key = canonical_key(&entry, *component);
                    body.out.push(KIND_DIFF);
                    write_diff(body, key, leaves, value);
                }
                Written::Removed => {
                    body.out.push(KIND_REMOVED);
                    body.bytes(&[]);
                }
            }
        }
        Ok(())
    }

    /// The header (magic, version, meta, name tables, shared table), the entity section
    /// `body` and the checksum.
    fn binary_document(
        &self,
        meta: Option<&serde_json::Map<String, Value>>,
        nodes: &ArchetypeNodes,
        shared: &[(u64, Vec<u8>)],
        body: &[u8],
    ) -> Vec<u8> {
        let mut out = BinaryWriter {
            out: Vec::with_capacity(body.len() + 1024),
        };
        out.out.extend_from_slice(BINARY_MAGIC);
        out.varint(BINARY_SCENE_FORMAT_VERSION);
        let meta = meta.and_then(|meta| serde_json::to_vec(meta).ok());
        out.bytes(meta.as_deref().unwrap_or_default());
        out.varint(self.config.registry.len() as u64);
        for component in self.config.registry.ids() {
            out.str(self.config.registry.name(component));
            // How its values are laid out, so a later version of the type can still read them.
            out.bytes(
                self.config
                    .registry
                    .layout_bytes(component)
                    .unwrap_or_default(),
            );
        }
        out.varint(self.archetypes.len() as u64);
        for archetype in &self.archetypes {
            let name = self.config.library.name_of(*archetype).unwrap_or_default();
            out.str(name);
            let children = nodes.get(name).map_or(&[][..], Vec::as_slice);
            out.varint(children.len() as u64);
            for child in children {
                out.str(child);
            }
        }
        out.varint(shared.len() as u64);
        for (key, bytes) in shared {
            out.u64_le(*key);
            out.bytes(bytes);
        }
        out.out.extend_from_slice(body);
        append_checksum(&mut out.out);
        out.out
    }

    /// The child path of a node (`None` for the root).
    fn node_path(&self, archetype: ArchetypeId, node: u32) -> Option<&str> {
        if node == ArchetypeInstance::ROOT {
            return None;
        }
        self.config.library.node_path(ArchetypeInstance {
            archetype,
            node,
            overrides: OverridesId::NONE,
        })
    }
}

/// The error of the entity first in stable-ID order, while entities are written in storage
/// order: which entity a failed save names must not depend on the world's history.
#[derive(Default)]
struct FirstFailure(Option<(usize, SceneSaveError)>);

impl FirstFailure {
    fn record(&mut self, index: usize, error: SceneSaveError) {
        if self.0.as_ref().is_none_or(|(first, _)| index < *first) {
            self.0 = Some((index, error));
        }
    }

    fn into_result(self) -> Result<(), SceneSaveError> {
        self.0.map_or(Ok(()), |(_, error)| Err(error))
    }
}

/// Entities from [`ESTIMATE_AFTER`] on are written into a buffer sized from the first ones.
const ESTIMATE_AFTER: usize = 64;

/// Below this many entities a JSON scene is written on one thread: starting threads would
/// cost more than it saves.
const PARALLEL_MIN_ENTITIES: usize = 4096;

/// The JSON blocks one thread wrote for a run of entities.
struct Blocks {
    blocks: Vec<u8>,
    /// Where each entity's block is, in the order of the run.
    ranges: Vec<Range<usize>>,
    failure: FirstFailure,
}

/// One hecs archetype as a scene reads it.
struct Columns<'w> {
    /// The columns of the components scenes write, in name order.
    of: Vec<(ComponentId, Box<dyn LiveColumn + 'w>)>,
    /// Its entities' archetype-instance markers, where it has them.
    markers: Option<hecs::ArchetypeColumn<'w, ArchetypeInstance>>,
    /// How its instances of each archetype entity are written, made at the first one.
    plans: RefCell<Plans>,
}

/// How the instances of each archetype entity (archetype, node) are written.
type Plans = FxHashMap<(ArchetypeId, u32), Rc<[Step]>>;

/// What a save does with one component of an archetype instance, the same for every instance
/// of that archetype entity in one hecs archetype.
#[derive(Clone, Copy)]
enum Step {
    /// The archetype has it, the instance does not.
    Removed(ComponentId),
    /// Written whole from the `k`th column: the archetype lacks it, or the save is full.
    Own(ComponentId, usize),
    /// Compared with the archetype's value (the `k`th column).
    Compare(ComponentId, usize),
}

impl Columns<'_> {
    /// How the instances of archetype entity `at` (whose values are `canonical`) in this hecs
    /// archetype are written: their components and their archetype's, in name order.
    fn plan(
        &self,
        at: (ArchetypeId, u32),
        canonical: &Canonical,
        config: &SaveConfig<'_>,
    ) -> Rc<[Step]> {
        if let Some(plan) = self.plans.borrow().get(&at) {
            return plan.clone();
        }
        let mut candidates: Vec<ComponentId> = self.of.iter().map(|(c, _)| *c).collect();
        candidates.extend((canonical.values.keys()).filter(|c| config.rank[c.index()].is_some()));
        candidates.sort_unstable_by_key(|c| config.rank[c.index()]);
        candidates.dedup();
        let plan: Rc<[Step]> = candidates
            .into_iter()
            .map(|component| {
                let column = self.of.iter().position(|(c, _)| *c == component);
                let in_archetype = canonical.values.contains_key(&component);
                match (column, in_archetype) {
                    (None, _) => Step::Removed(component),
                    (Some(k), true) if !config.full => Step::Compare(component, k),
                    (Some(k), _) => Step::Own(component, k),
                }
            })
            .collect();
        self.plans.borrow_mut().insert(at, plan.clone());
        plan
    }
}

/// A saved entity (its stable ID and handle) and where its values are: its hecs archetype (by
/// its place in [`World::archetypes`]) and its row there.
#[derive(Clone, Copy)]
struct Place {
    id: StableId,
    entity: Entity,
    archetype: usize,
    row: usize,
}

/// The entities to save in the order hecs stores them, as indices into `entities` with where
/// their values are. Reading components in this order walks memory sequentially, where the
/// file's stable-ID order jumps around it; each entity's ID and handle come along, so nothing
/// is looked up in `entities` in that order.
fn storage_order(world: &World, entities: &[(StableId, Entity)]) -> Vec<(usize, Place)> {
    // Every entity to save is alive (it has a stable ID), so it is in exactly one archetype,
    // under its index.
    let position = EntityTable::new(
        (entities.iter().enumerate()).map(|(i, &(id, entity))| (entity.id(), (i, id, entity))),
    );
    let mut order = Vec::with_capacity(entities.len());
    for (archetype, table) in world.archetypes().enumerate() {
        for (row, index) in table.ids().iter().enumerate() {
            if let Some((index, id, entity)) = position.get(*index) {
                let place = Place {
                    id,
                    entity,
                    archetype,
                    row,
                };
                order.push((index, place));
            }
        }
    }
    debug_assert_eq!(order.len(), entities.len());
    order
}

/// The columns of the hecs archetypes `run` reads from (by their place in
/// [`World::archetypes`]; `None` for the others), borrowed on the calling thread: each
/// component is then read from its column by row, without looking the entity up.
fn columns<'w>(config: &SaveConfig<'w>, run: &[(usize, Place)]) -> Vec<Option<Columns<'w>>> {
    let world = config.world;
    let mut used = vec![false; world.archetypes().len()];
    for (_, place) in run {
        used[place.archetype] = true;
    }
    world
        .archetypes()
        .zip(used)
        .map(|(archetype, used)| {
            if !used {
                return None;
            }
            let registry = config.registry;
            let rank = &config.rank;
            let mut of: Vec<(ComponentId, Box<dyn LiveColumn + 'w>)> = archetype
                .component_types()
                .filter_map(|type_id| registry.id_of_type_id(type_id))
                .filter(|c| rank[c.index()].is_some())
                .filter_map(|c| Some((c, registry.ops(c).column(archetype)?)))
                .collect();
            of.sort_unstable_by_key(|(c, _)| rank[c.index()]);
            Some(Columns {
                plans: RefCell::default(),
                of,
                markers: archetype.get::<&ArchetypeInstance>(),
            })
        })
        .collect()
}

/// The key of the archetype value a diff of `component` on `entry` is taken against.
fn canonical_key(entry: &Entry, component: ComponentId) -> u64 {
    match entry {
        Entry::Instance { canonical, .. } => {
            canonical.keys.get(&component).copied().unwrap_or_default()
        }
        Entry::Plain => 0,
    }
}

/// The canonical values of one entity of an archetype, or `None` if the archetype (or that
/// entity of it) is gone or abstract: such entities are saved as plain entities.
fn canonical_for(
    library: &ArchetypeLibrary,
    registry: &ComponentRegistry,
    marker: ArchetypeInstance,
) -> Option<Rc<Canonical>> {
    if library.is_deleted(marker.archetype) {
        return None;
    }
    let archetype = library.get_by_id(marker.archetype)?;
    let compiled = archetype.compiled.as_ref()?;
    let node = compiled
        .nodes
        .iter()
        .find(|n| n.marker.node == marker.node)?;
    let mut values = BTreeMap::new();
    let mut bytes = BTreeMap::new();
    for (id, typed) in &node.typed {
        values.insert(*id, registry.ops(*id).encode(typed).ok()?);
        // Shared values by their key, as the live values are written, but not recorded as
        // met by this save.
        let mut out = Vec::new();
        let (written, _) = with_save_table(SaveTable::default(), || {
            registry.ops(*id).write_postcard_typed(typed, &mut out)
        });
        if written.is_ok() {
            bytes.insert(*id, out);
        }
    }
    for (id, value) in &node.with_refs {
        values.insert(*id, value.clone());
    }
    let keys = (values.keys())
        .filter_map(|id| Some((*id, archetype_value_key(registry, node, *id)?)))
        .collect();
    Some(Rc::new(Canonical {
        with_refs: node.with_refs.iter().map(|(id, _)| *id).collect(),
        values,
        bytes,
        keys,
        base: compiled.nodes[node.base].path.to_string(),
    }))
}

fn write_key_string(out: &mut Vec<u8>, key: &str, value: &str) {
    out.extend_from_slice(b",\n      ");
    write_json_string(out, key);
    out.extend_from_slice(b": ");
    write_json_string(out, value);
}

fn write_json_string(out: &mut Vec<u8>, text: &str) {
    // Names are validated to a safe character set, but escape anyway.
    let _ = serde_json::to_writer(&mut *out, text);
}
