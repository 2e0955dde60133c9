//! [`ComponentRegistry`]: which Rust types may appear in data files, and under which names.

use std::any::{type_name, Any, TypeId};
use std::fmt;
use std::sync::Arc;

use hecs::{
    Archetype, BatchWriter, ColumnBatchBuilder, ColumnBatchType, Entity, EntityBuilder,
    EntityBuilderClone, World,
};
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::component::ignored_fields::Strict;
use crate::component::shared::recording;
use crate::component::value_check::{self, CheckError, Checked};
use crate::component::value_layout::Layout;
use crate::component::value_reader::{ReadErrorKind, Reading, ValueReader};
use crate::json::field_path::{FieldPath, PathSegment};
use crate::json::field_probe::{self, Shape};
use crate::json::merge_patch;
use crate::scene::format::ScenePretty;

/// A type that can be a data-driven component.
///
/// Implemented automatically for every `Serialize + Deserialize + Clone + Send + Sync + 'static`
/// type: derive the serde traits and `Clone`, then [register](ComponentRegistry::register) it.
pub trait Component: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {}

impl<T> Component for T where T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {}

/// The index of a registered component type in its [`ComponentRegistry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentId(pub(crate) u32);

impl ComponentId {
    /// The raw index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a component is registered: its name, old names, and whether scenes save it.
///
/// # Example
/// ```
/// use archetype_engine::{ComponentOptions, ComponentRegistry};
/// # #[derive(Clone, serde::Serialize, serde::Deserialize)] struct Health { max: f32 }
/// let mut registry = ComponentRegistry::new();
/// registry
///     .register_with::<Health>(ComponentOptions::new().name("Health").alias("Hp"))
///     .unwrap();
/// assert_eq!(registry.canonical_name("Hp"), Some("Health"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ComponentOptions {
    name: Option<String>,
    aliases: Vec<String>,
    runtime_only: bool,
    #[cfg(feature = "schema")]
    schema: Option<SchemaFn>,
    /// Trace the schema from the type's `Deserialize` (see [`Self::json_schema_from_serde`]).
    #[cfg(feature = "schema")]
    serde_schema: bool,
    removed_fields: Vec<String>,
}

/// Produces a component's JSON Schema (see [`ComponentOptions::json_schema`]).
#[cfg(feature = "schema")]
pub type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

impl ComponentOptions {
    /// Default options: the type's own name, no aliases, saved in scenes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the component under `name` instead of its type name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds an old name that still loads (for renames); files are read as if they used the
    /// current name.
    pub fn alias(mut self, alias: impl Into<String>) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// Declares a field the type had and no longer has: scenes saved before it was removed
    /// still load, and the field's values are dropped (where any other field the type does
    /// not have is an error, being likely a typo). Binary scenes know their fields' layout and
    /// need no declaration; JSON scenes do.
    pub fn removed_field(mut self, field: impl Into<String>) -> Self {
        self.removed_fields.push(field.into());
        self
    }

    /// Marks the component as runtime-only (a cache, a handle): scenes skip it.
    pub fn runtime_only(mut self) -> Self {
        self.runtime_only = true;
        self
    }

    /// Describes the component's JSON form with `S`'s JSON Schema (usually the component type
    /// itself, deriving [`schemars::JsonSchema`]): field names, types, enum values and doc
    /// comments then appear in `archetool schema` output and in editor autocompletion.
    #[cfg(feature = "schema")]
    pub fn json_schema<S: schemars::JsonSchema>(mut self) -> Self {
        self.schema = Some(|generator| generator.subschema_for::<S>());
        self
    }

    /// Describes the component's JSON form with a schema traced from its `Deserialize` impl,
    /// for types that do not derive [`schemars::JsonSchema`] — in particular ones with glam
    /// fields (`Vec2`, `Vec3`, `Quat`, ... are described as glam writes them, `[x, y]`, with no
    /// attribute on the field). Field names, types and enum variants appear as with
    /// [`json_schema`](Self::json_schema); doc comments do not (they are not part of the serde
    /// form). A type that reads its input itself (an untagged enum, `serde_json::Value`) cannot
    /// be traced and gets no schema.
    ///
    /// ```
    /// # use archetype_engine::{ComponentOptions, ComponentRegistry};
    /// #[derive(Clone, serde::Serialize, serde::Deserialize)]
    /// struct Patrol { route: Vec<glam::Vec2>, pause: f32 }
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry.register_with::<Patrol>(ComponentOptions::new().json_schema_from_serde())?;
    /// let id = registry.id("Patrol").unwrap();
    /// let schema = registry.json_schema(id, &mut archetype_engine::schemars::SchemaGenerator::default()).unwrap();
    /// assert_eq!(schema.as_value()["properties"]["route"]["items"]["maxItems"], 2);
    /// # Ok::<(), archetype_engine::RegistryError>(())
    /// ```
    #[cfg(feature = "schema")]
    pub fn json_schema_from_serde(mut self) -> Self {
        self.serde_schema = true;
        self
    }
}

/// Why a component could not be registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name (or alias) is already used by another registration.
    #[error("component name `{name}` is already used by `{existing}`")]
    NameTaken {
        /// The name that was asked for.
        name: String,
        /// The type that already has it.
        existing: String,
    },
    /// The type is already registered.
    #[error("type `{type_name}` is already registered as component `{name}`")]
    TypeTaken {
        /// The Rust type.
        type_name: String,
        /// Its registered name.
        name: String,
    },
    /// The name is not usable in data files.
    #[error("`{name}` is not a valid component name: use ASCII letters, digits and `_`, starting with a letter")]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// A generic type needs an explicit name.
    #[error("cannot name generic type `{type_name}` automatically; register it with ComponentOptions::name")]
    GenericType {
        /// The Rust type.
        type_name: String,
    },
}

/// Maps component names used in data files to Rust types, and knows how to read, write, spawn
/// and patch each of them.
///
/// A new registry already holds the built-in components: [`Name`](crate::Name),
/// [`Transform`](crate::Transform), [`Parent`](crate::Parent), [`Children`](crate::Children),
/// [`StableId`](crate::StableId) and [`ArchetypeInstance`](crate::ArchetypeInstance).
///
/// # Example
/// ```
/// use archetype_engine::ComponentRegistry;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// struct Health { current: f32, max: f32 }
///
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Health>().unwrap();
/// assert!(registry.id("Health").is_some());
/// ```
pub struct ComponentRegistry {
    entries: Vec<Entry>,
    by_name: FxHashMap<Arc<str>, ComponentId>,
    by_type: FxHashMap<TypeId, ComponentId>,
}

pub(crate) struct Entry {
    pub(crate) name: Arc<str>,
    pub(crate) aliases: Vec<Arc<str>>,
    pub(crate) type_name: &'static str,
    pub(crate) runtime_only: bool,
    /// Fields the type no longer has (see [`ComponentOptions::removed_field`]).
    pub(crate) removed_fields: Vec<String>,
    #[cfg(feature = "schema")]
    pub(crate) schema: Option<SchemaFn>,
    /// Whether the schema is traced from the type's `Deserialize`.
    #[cfg(feature = "schema")]
    pub(crate) serde_schema: bool,
    /// Set by the library itself (`Parent`, `StableId`, ...); data files may not write it.
    pub(crate) managed: bool,
    pub(crate) ops: Box<dyn ComponentOps>,
    /// The type's binary layout (postcard-encoded [`Layout`]), traced on first use; `None`
    /// for a type that cannot be traced.
    layout: std::sync::OnceLock<Option<Vec<u8>>>,
}

impl fmt::Debug for ComponentRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| (&*e.name, e.type_name)))
            .finish()
    }
}

impl Default for ComponentRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ComponentRegistry {
    /// A registry holding the built-in components.
    pub fn new() -> Self {
        let mut registry = ComponentRegistry {
            entries: Vec::new(),
            by_name: FxHashMap::default(),
            by_type: FxHashMap::default(),
        };
        crate::component::builtin::register_builtins(&mut registry);
        registry
    }

    /// Registers `T` under its type name (`game::Health` becomes `Health`).
    ///
    /// # Errors
    /// If the name or the type is already registered, or `T` is generic.
    pub fn register<T: Component>(&mut self) -> Result<ComponentId, RegistryError> {
        self.register_with::<T>(ComponentOptions::new())
    }

    /// Registers `T` under its type name, with its JSON Schema (`T` derives
    /// [`schemars::JsonSchema`]), so tools can describe and autocomplete it.
    ///
    /// # Errors
    /// As [`register`](Self::register).
    ///
    /// # Example
    /// ```
    /// use archetype_engine::{schemars, ComponentRegistry};
    /// use serde::{Deserialize, Serialize};
    ///
    /// /// Which side an entity fights on.
    /// #[derive(Clone, Serialize, Deserialize, schemars::JsonSchema)]
    /// #[schemars(crate = "archetype_engine::schemars")] // no schemars dependency needed
    /// enum Faction {
    ///     Allied,
    ///     Hostile,
    /// }
    ///
    /// let mut registry = ComponentRegistry::new();
    /// let id = registry.register_with_schema::<Faction>()?;
    /// let mut generator = schemars::SchemaGenerator::default();
    /// let schema = registry.json_schema(id, &mut generator).unwrap();
    /// assert_eq!(schema.get("$ref"), Some(&serde_json::json!("#/$defs/Faction")));
    /// let faction = &generator.definitions()["Faction"];
    /// assert_eq!(faction["description"], "Which side an entity fights on.");
    /// assert_eq!(faction["enum"], serde_json::json!(["Allied", "Hostile"]));
    /// # Ok::<(), archetype_engine::RegistryError>(())
    /// ```
    #[cfg(feature = "schema")]
    pub fn register_with_schema<T: Component + schemars::JsonSchema>(
        &mut self,
    ) -> Result<ComponentId, RegistryError> {
        self.register_with::<T>(ComponentOptions::new().json_schema::<T>())
    }

    /// Registers `T` with explicit [`ComponentOptions`].
    ///
    /// # Errors
    /// If the name, an alias or the type is already registered, or a name is not valid.
    pub fn register_with<T: Component>(
        &mut self,
        options: ComponentOptions,
    ) -> Result<ComponentId, RegistryError> {
        self.insert::<T>(options, false)
    }

    pub(crate) fn insert<T: Component>(
        &mut self,
        options: ComponentOptions,
        managed: bool,
    ) -> Result<ComponentId, RegistryError> {
        let type_name = type_name::<T>();
        if let Some(&existing) = self.by_type.get(&TypeId::of::<T>()) {
            return Err(RegistryError::TypeTaken {
                type_name: type_name.to_string(),
                name: self.entries[existing.index()].name.to_string(),
            });
        }
        let name = match options.name {
            Some(name) => name,
            None => short_type_name(type_name)?,
        };
        let mut names = vec![name.clone()];
        names.extend(options.aliases.iter().cloned());
        for (i, candidate) in names.iter().enumerate() {
            if !is_valid_name(candidate) {
                return Err(RegistryError::InvalidName {
                    name: candidate.clone(),
                });
            }
            if let Some(&existing) = self.by_name.get(candidate.as_str()) {
                return Err(RegistryError::NameTaken {
                    name: candidate.clone(),
                    existing: self.entries[existing.index()].type_name.to_string(),
                });
            }
            if names[..i].contains(candidate) {
                return Err(RegistryError::NameTaken {
                    name: candidate.clone(),
                    existing: type_name.to_string(),
                });
            }
        }
        let id = ComponentId(self.entries.len() as u32);
        let mut interned: Vec<Arc<str>> = names.into_iter().map(Arc::from).collect();
        for name in &interned {
            self.by_name.insert(name.clone(), id);
        }
        let name = interned.remove(0);
        self.by_type.insert(TypeId::of::<T>(), id);
        self.entries.push(Entry {
            name,
            aliases: interned,
            type_name,
            runtime_only: options.runtime_only,
            removed_fields: options.removed_fields,
            #[cfg(feature = "schema")]
            schema: options.schema,
            #[cfg(feature = "schema")]
            serde_schema: options.serde_schema,
            managed,
            ops: Box::new(Ops::<T>::new()),
            layout: std::sync::OnceLock::new(),
        });
        Ok(id)
    }

    /// The component registered under `name` or under an alias `name`.
    pub fn id(&self, name: &str) -> Option<ComponentId> {
        self.by_name.get(name).copied()
    }

    /// The component registered for type `T`.
    pub fn id_of<T: 'static>(&self) -> Option<ComponentId> {
        self.by_type.get(&TypeId::of::<T>()).copied()
    }

    /// The component registered for the Rust type with `type_id`.
    pub(crate) fn id_of_type_id(&self, type_id: TypeId) -> Option<ComponentId> {
        self.by_type.get(&type_id).copied()
    }

    /// The current name for `name`, which may be an alias (an old name).
    pub fn canonical_name(&self, name: &str) -> Option<&str> {
        self.id(name).map(|id| self.name(id))
    }

    /// The registered name of a component.
    pub fn name(&self, id: ComponentId) -> &str {
        &self.entries[id.index()].name
    }

    /// The registered name as a shared string (cheap to clone).
    pub(crate) fn name_arc(&self, id: ComponentId) -> &Arc<str> {
        &self.entries[id.index()].name
    }

    /// Whether `field` is one the component's type no longer has (a top-level field declared
    /// with [`ComponentOptions::removed_field`]).
    pub fn is_removed_field(&self, id: ComponentId, field: &FieldPath) -> bool {
        match field.segments() {
            [PathSegment::Key(name)] => self.entries[id.index()].removed_fields.contains(name),
            _ => false,
        }
    }

    /// The old names that still load as this component.
    pub fn aliases(&self, id: ComponentId) -> impl Iterator<Item = &str> {
        self.entries[id.index()].aliases.iter().map(|a| &**a)
    }

    /// The Rust type name behind a component, e.g. `game::components::Health`.
    pub fn type_name(&self, id: ComponentId) -> &'static str {
        self.entries[id.index()].type_name
    }

    /// The component's JSON Schema, if it was registered with one.
    #[cfg(feature = "schema")]
    pub fn json_schema(
        &self,
        id: ComponentId,
        generator: &mut schemars::SchemaGenerator,
    ) -> Option<schemars::Schema> {
        let entry = &self.entries[id.index()];
        if let Some(schema) = entry.schema {
            return Some(schema(generator));
        }
        if !entry.serde_schema {
            return None;
        }
        let layout = entry.ops.json_layout()?;
        schemars::Schema::try_from(crate::component::serde_schema::schema_of(&layout)).ok()
    }

    /// Whether scenes skip this component.
    pub fn is_runtime_only(&self, id: ComponentId) -> bool {
        self.entries[id.index()].runtime_only
    }

    /// Whether the component is a marker: a unit struct (`struct Boss;`), written `{}` in
    /// archetype files and JSON scenes.
    pub fn is_marker(&self, id: ComponentId) -> bool {
        self.entries[id.index()].ops.is_marker()
    }

    /// Whether the library sets this component itself (data files may not write it).
    pub fn is_managed(&self, id: ComponentId) -> bool {
        self.entries[id.index()].managed
    }

    /// All registered components, in registration order.
    pub fn ids(&self) -> impl Iterator<Item = ComponentId> + '_ {
        (0..self.entries.len() as u32).map(ComponentId)
    }

    /// All component names that data files may use (current names, not aliases), sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| !e.managed)
            .map(|e| &*e.name)
            .collect();
        names.sort_unstable();
        names
    }

    /// Number of registered components.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no component is registered (never true: built-ins are always there).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn ops(&self, id: ComponentId) -> &dyn ComponentOps {
        &*self.entries[id.index()].ops
    }

    /// The component's binary layout, encoded as binary scenes store it (traced once, then
    /// kept); `None` if the type cannot be traced.
    pub(crate) fn layout_bytes(&self, id: ComponentId) -> Option<&[u8]> {
        let entry = &self.entries[id.index()];
        let encoded = entry.layout.get_or_init(|| {
            let layout = entry.ops.layout()?;
            crate::component::binary_codec::to_allocvec(&layout).ok()
        });
        encoded.as_deref()
    }
}

/// `game::Health` → `Health`; generic types need an explicit name.
fn short_type_name(full: &str) -> Result<String, RegistryError> {
    if full.contains('<') {
        return Err(RegistryError::GenericType {
            type_name: full.to_string(),
        });
    }
    Ok(full.rsplit("::").next().unwrap_or(full).to_string())
}

pub(crate) fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A component value deserialized from data, ready to be cloned into entities.
pub(crate) type TypedValue = Box<dyn Any + Send + Sync>;

/// Why a JSON value is not a valid component value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValueError {
    /// Where in the value the problem is (empty: the value itself).
    pub path: FieldPath,
    /// serde's description of the problem.
    pub message: String,
    /// What kind of problem it is.
    pub kind: ReadErrorKind,
}

impl ValueError {
    /// A problem of no particular kind (a wrong type or value) at `path`.
    pub fn invalid(path: FieldPath, message: impl Into<String>) -> Self {
        ValueError {
            path,
            message: message.into(),
            kind: ReadErrorKind::Invalid,
        }
    }
}

/// Why a live component could not be written.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The value holds something a scene cannot hold (see [`value_check::check`]).
    Check(CheckError),
    /// Serializing failed (the component's own `Serialize` refused).
    Write(String),
}

impl WriteError {
    fn write(error: impl fmt::Display) -> Self {
        WriteError::Write(error.to_string())
    }
}

/// A component type's column in one hecs archetype, borrowed for reading while a scene is
/// saved: each entity's value is read by its row, without looking the entity up.
pub(crate) trait LiveColumn {
    /// Writes the value in `row` as pretty JSON whose first line continues the current one and
    /// whose nesting starts at `depth` (see `ScenePretty`), recording the shared values it
    /// writes. The value is checked first (see [`value_check::check`]); values holding maps
    /// are written through a JSON value, which sorts their keys.
    fn write_json(&self, row: usize, out: &mut Vec<u8>, depth: usize) -> Result<(), WriteError>;
    /// Appends the value in `row` in postcard's binary form, checking it first.
    fn write_postcard(&self, row: usize, out: &mut Vec<u8>) -> Result<(), WriteError>;
}

impl<T: Component> LiveColumn for hecs::ArchetypeColumn<'_, T> {
    fn write_json(&self, row: usize, out: &mut Vec<u8>, depth: usize) -> Result<(), WriteError> {
        let component = self.get(row).ok_or(WriteError::Write(NO_ROW.to_string()))?;
        let checked = value_check::check(component).map_err(WriteError::Check)?;
        let mut serializer = serde_json::Serializer::with_formatter(out, ScenePretty::at(depth));
        recording(|| {
            if checked.has_map {
                let value = serde_json::to_value(component).map_err(WriteError::write)?;
                value.serialize(&mut serializer).map_err(WriteError::write)
            } else {
                component
                    .serialize(&mut serializer)
                    .map_err(WriteError::write)
            }
        })
    }

    fn write_postcard(&self, row: usize, out: &mut Vec<u8>) -> Result<(), WriteError> {
        let component = self.get(row).ok_or(WriteError::Write(NO_ROW.to_string()))?;
        value_check::check(component).map_err(WriteError::Check)?;
        let bytes = crate::component::binary_codec::to_extend(component, std::mem::take(out))
            .map_err(WriteError::write)?;
        *out = bytes;
        Ok(())
    }
}

/// What a [`LiveColumn`] says of a row past its end (a bug, not bad data).
const NO_ROW: &str = "the entity is not in the archetype column being saved";

/// Everything the library does with a component type without knowing it statically.
pub(crate) trait ComponentOps: Send + Sync {
    /// Deserializes a typed value; unknown fields are reported through `unknown`.
    fn decode(&self, value: &Value, unknown: &mut Vec<FieldPath>)
        -> Result<TypedValue, ValueError>;
    /// Whether the type is a unit struct (a marker component).
    fn is_marker(&self) -> bool;
    /// Checks a value that may be partial as far as it goes ([`check_partial_value`]).
    fn check_partial(&self, value: &Value, unknown: &mut Vec<FieldPath>) -> Result<(), ValueError>;
    /// Adds a clone of `value` to a spawn template.
    fn add_to_template(&self, value: &TypedValue, builder: &mut EntityBuilderClone);
    /// Adds a clone of `value` to a one-off builder.
    fn add_to_builder(&self, value: &TypedValue, builder: &mut EntityBuilder);
    /// Adds this type's column to a batch type.
    fn add_column(&self, batch: &mut ColumnBatchType);
    /// Fills this type's column of `batch` with `count` clones of `value`.
    fn fill_column(&self, value: &TypedValue, batch: &mut ColumnBatchBuilder, count: u32);
    /// Appends clones of the values in `rows` of `archetype`'s column of this type to the
    /// type's column of `batch` (a prepared scene's batches, issue 23). `None` if either has
    /// no such column or the batch's column is full.
    fn copy_rows(
        &self,
        archetype: &Archetype,
        rows: &[u32],
        batch: &mut ColumnBatchBuilder,
    ) -> Option<()>;
    /// The struct or enum shape at `path` inside the type (for suggestions).
    fn probe(&self, path: &[PathSegment]) -> Option<Shape>;
    /// The tag field of the internally tagged enum at `path` inside the type, if it is one.
    fn tag_of(&self, path: &[PathSegment]) -> Option<&'static str>;
    /// Serializes a typed value (the canonical JSON form of what a file wrote).
    fn encode(&self, value: &TypedValue) -> Result<Value, String>;
    /// Serializes the live component of `entity`, if it has one.
    fn to_json(&self, world: &World, entity: Entity) -> Option<Result<Value, String>>;
    /// Applies a merge patch to the live component of each entity that has one, keeping every
    /// field the patch does not mention. Returns, per entity, whether it was patched, and the
    /// failures.
    ///
    /// `shortcut` is the archetype's value before and after the edit (the patch being their
    /// difference): a live component still serializing exactly as `before` becomes a clone of
    /// `after`, which is what patching it would give, without the JSON round trip.
    fn patch_entities(
        &self,
        world: &mut World,
        entities: &[Entity],
        patch: &Value,
        shortcut: Option<(&TypedValue, &TypedValue)>,
    ) -> (Vec<bool>, Vec<(Entity, ValueError)>);
    /// Checks the live component of `entity` can be written (no non-finite floats, every
    /// entity reference mappable under the installed mapper). `None` if it has none.
    fn check_live(&self, world: &World, entity: Entity) -> Option<Result<Checked, CheckError>>;
    /// This type's column in a hecs archetype, if the archetype has it, for saving.
    fn column<'w>(&self, archetype: &'w Archetype) -> Option<Box<dyn LiveColumn + 'w>>;
    /// Deserializes a value from JSON text straight into `builder`. Fields the type does not
    /// have are skipped and reported through `unknown` (the caller decides whether that is an
    /// error: it is the place of a typo, and saving the value again would drop them).
    fn read_json_into(
        &self,
        text: &str,
        builder: &mut EntityBuilder,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<(), (FieldPath, serde_json::Error)>;
    /// Deserializes a value from the start of `text` (JSON, after optional whitespace), checked
    /// as [`read_json_into`](Self::read_json_into) checks it, into `builder`; returns how many
    /// bytes of `text` the value took. `None` when it does not decode or has a field the type
    /// does not have: the caller reads it again the careful way to say why.
    fn read_json_prefix_into(&self, text: &str, builder: &mut EntityBuilder) -> Option<usize>;
    /// Deserializes a value from postcard bytes; an error says where in the value, if known.
    fn read_postcard(&self, bytes: &[u8]) -> Result<TypedValue, (FieldPath, String)>;
    /// As [`read_postcard`](Self::read_postcard), adding the value to `builder`.
    fn read_postcard_into(
        &self,
        bytes: &[u8],
        builder: &mut EntityBuilder,
    ) -> Result<(), (FieldPath, String)>;
    /// A writer of this type's column of `batch` that decodes postcard bytes; `None` if the
    /// batch has no such column.
    fn postcard_sink<'b>(
        &self,
        batch: &'b ColumnBatchBuilder,
    ) -> Option<Box<dyn PostcardSink + 'b>>;
    /// Adds `value` (which must hold this component's type) to a builder without cloning.
    fn add_owned(&self, value: TypedValue, builder: &mut EntityBuilder);
    /// Inserts (or replaces) the component on `entity` with a clone of `value`.
    fn insert_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool;
    /// Overwrites the component `entity` has with a clone of `value`, in place (inserts it if the
    /// entity lacks it).
    fn overwrite_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool;
    /// Removes the component from `entity`; `false` if it had none.
    fn remove(&self, world: &mut World, entity: Entity) -> bool;
    /// Whether `entity` has the component.
    fn has(&self, world: &World, entity: Entity) -> bool;
    /// The layout of the type's binary form (see [`Layout`]), if it can be traced.
    fn layout(&self) -> Option<Layout>;
    /// The layout of the type's JSON form, if it can be traced.
    #[cfg(feature = "schema")]
    fn json_layout(&self) -> Option<Layout>;
}

/// One column of a hecs column batch being filled with values decoded from postcard bytes.
pub(crate) trait PostcardSink {
    /// Decodes `bytes`, checked as [`ComponentOps::read_postcard`] checks them, onto the end of
    /// the column. `None` if they do not decode (the caller reads them again the careful way to
    /// say why) or the column is full.
    fn push_postcard(&mut self, bytes: &[u8]) -> Option<()>;
    /// Decodes JSON `text` (as [`LiveColumn::write_json`] wrote it) onto the end of the column;
    /// `None` as [`push_postcard`](Self::push_postcard).
    fn push_json(&mut self, text: &str) -> Option<()>;
}

impl<T: Component> PostcardSink for BatchWriter<'_, T> {
    fn push_postcard(&mut self, bytes: &[u8]) -> Option<()> {
        self.push(Ops::<T>::read_postcard_typed(bytes).ok()?).ok()
    }
    fn push_json(&mut self, text: &str) -> Option<()> {
        self.push(Ops::<T>::read_json_typed(text, &mut Vec::new()).ok()?)
            .ok()
    }
}

struct Ops<T> {
    /// `T` is a unit struct (a marker): JSON scenes write it `{}`, as archetype files do,
    /// since `null` in a scene entry means "removed".
    marker: bool,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<T: Component> Ops<T> {
    fn new() -> Self {
        Ops {
            marker: matches!(field_probe::probe::<T>(&[]), Some(Shape::Unit { .. })),
            _type: std::marker::PhantomData,
        }
    }

    /// For a marker written `{}` (any spacing), the text serde reads it from (`null`).
    fn marker_text<'t>(&self, text: &'t str) -> &'t str {
        match self.marker && is_empty_object(text) {
            true => "null",
            false => text,
        }
    }
}

/// Whether `text` is `{}`, with any whitespace around and inside.
fn is_empty_object(text: &str) -> bool {
    text.trim()
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|inside| inside.trim().is_empty())
}

/// Deserializes `T` from an archetype's JSON value ([`ValueReader`]: markers read from `{}`,
/// errors typed), recording where an error is and which fields were ignored (serde skips
/// unknown fields unless the type denies them; we report them).
pub(crate) fn deserialize_value<T: DeserializeOwned>(
    value: &Value,
    unknown: &mut Vec<FieldPath>,
) -> Result<T, ValueError> {
    // Most values are fine: decode without tracking where we are (tracking costs as much as
    // the decoding), and only decode again with tracking to say where an error is.
    let reading = Reading::default();
    let mut found = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| found.push(field_path_of(&path));
    if let Ok(typed) =
        serde_ignored::deserialize(ValueReader::new(value, &reading, false), &mut record)
    {
        unknown.append(&mut found);
        return Ok(typed);
    }
    // A full read stands in for nothing, so it never stops at a filler.
    tracked::<T>(value, false, unknown)
        .map_err(|error| error.unwrap_or_else(|| ValueError::invalid(FieldPath::root(), "")))
}

/// Reads `T` from `value` with the path tracked, for the error's place. `Err(None)`: a partial
/// read stopped at a filler (nothing the file wrote is wrong).
fn tracked<T: DeserializeOwned>(
    value: &Value,
    partial: bool,
    unknown: &mut Vec<FieldPath>,
) -> Result<T, Option<ValueError>> {
    let reading = Reading::default();
    let mut record = |path: serde_ignored::Path<'_>| unknown.push(field_path_of(&path));
    let reader = ValueReader::new(value, &reading, partial);
    let ignored = serde_ignored::Deserializer::new(reader, &mut record);
    serde_path_to_error::deserialize(ignored).map_err(|error| {
        if reading.stopped_at_filler() {
            return None;
        }
        let path = convert_path(error.path());
        let inner = error.into_inner();
        Some(ValueError {
            path,
            message: inner.message,
            kind: inner.kind,
        })
    })
}

/// Checks a value that may be partial (an abstract archetype's, or one whose parent is broken)
/// as far as it goes: every field it has must have the right type and a name the type knows;
/// missing fields are not errors. `Ok` when nothing wrong was found.
pub(crate) fn check_partial_value<T: DeserializeOwned + Serialize>(
    value: &Value,
    unknown: &mut Vec<FieldPath>,
) -> Result<(), ValueError> {
    let reading = Reading::default();
    let mut found = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| found.push(field_path_of(&path));
    let result: Result<T, _> =
        serde_ignored::deserialize(ValueReader::new(value, &reading, true), &mut record);
    unknown.append(&mut found);
    match result {
        Ok(typed) => check_read_value(&typed),
        Err(_) if reading.stopped_at_filler() => Ok(()),
        Err(error) if error.kind == ReadErrorKind::MissingField => Ok(()),
        // Again with the path tracked, to say where (unknown fields were recorded above).
        Err(_) => match tracked::<T>(value, true, &mut Vec::new()) {
            Err(Some(error)) if error.kind != ReadErrorKind::MissingField => Err(error),
            _ => Ok(()),
        },
    }
}

fn check_read_value<T: Serialize>(typed: &T) -> Result<(), ValueError> {
    crate::component::value_check::check_read(typed)
        .map_err(|error| ValueError::invalid(error.path, error.message))
}

/// serde_path_to_error's path as ours.
pub(crate) fn convert_path(path: &serde_path_to_error::Path) -> FieldPath {
    FieldPath(
        path.iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => Some(PathSegment::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(PathSegment::Key(key.clone())),
                serde_path_to_error::Segment::Enum { variant } => {
                    Some(PathSegment::Key(variant.clone()))
                }
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect(),
    )
}

/// serde_ignored's path of a skipped field as ours.
pub(crate) fn field_path_of(path: &serde_ignored::Path<'_>) -> FieldPath {
    let mut segments = Vec::new();
    ignored_path(path, &mut segments);
    FieldPath(segments)
}

fn ignored_path(path: &serde_ignored::Path<'_>, out: &mut Vec<PathSegment>) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            ignored_path(parent, out);
            out.push(PathSegment::Index(*index));
        }
        Path::Map { parent, key } => {
            ignored_path(parent, out);
            out.push(PathSegment::Key(key.clone()));
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_path(parent, out),
    }
}

impl<T: Component> Ops<T> {
    fn typed(value: &TypedValue) -> Option<&T> {
        let typed = value.downcast_ref::<T>();
        debug_assert!(typed.is_some(), "component value of the wrong type");
        typed
    }

    /// Deserializes `T` from postcard bytes, then checks it as
    /// [`check_read`](crate::component::value_check::check_read) does.
    fn read_postcard_typed(bytes: &[u8]) -> Result<T, (FieldPath, String)> {
        crate::component::entity_ref::take_last_read_error();
        let typed = crate::component::binary_codec::from_bytes::<T>(bytes).map_err(|error| {
            // Postcard drops custom messages: a reference's own reason is kept aside.
            let message = crate::component::entity_ref::take_last_read_error()
                .unwrap_or_else(|| format!("corrupt binary value ({error})"));
            (FieldPath::root(), message)
        })?;
        crate::component::value_check::check_read(&typed)
            .map_err(|error| (error.path, error.message))?;
        Ok(typed)
    }

    /// Deserializes `T` from JSON text (fields `T` does not have go to `unknown`), then checks
    /// it as [`check_read`](crate::component::value_check::check_read) does.
    fn read_json_typed(
        text: &str,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<T, (FieldPath, serde_json::Error)> {
        // Decode without tracking the path first; track it only to report an error.
        let mut found = Vec::new();
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let decoded = serde_ignored::deserialize(&mut deserializer, |path| {
            found.push(field_path_of(&path));
        })
        .and_then(|typed: T| deserializer.end().map(|()| typed));
        if let Ok(typed) = decoded {
            crate::component::value_check::check_read(&typed)
                .map_err(|error| (error.path, serde::de::Error::custom(error.message)))?;
            unknown.append(&mut found);
            return Ok(typed);
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            let path = convert_path(error.path());
            (path, error.into_inner())
        })
    }
}

impl<T: Component> ComponentOps for Ops<T> {
    fn decode(
        &self,
        value: &Value,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<TypedValue, ValueError> {
        let typed = deserialize_value::<T>(value, unknown)?;
        check_read_value(&typed)?;
        Ok(Box::new(typed))
    }

    fn is_marker(&self) -> bool {
        self.marker
    }

    fn check_partial(&self, value: &Value, unknown: &mut Vec<FieldPath>) -> Result<(), ValueError> {
        check_partial_value::<T>(value, unknown)
    }

    fn add_to_template(&self, value: &TypedValue, builder: &mut EntityBuilderClone) {
        if let Some(typed) = Self::typed(value) {
            builder.add(typed.clone());
        }
    }

    fn add_to_builder(&self, value: &TypedValue, builder: &mut EntityBuilder) {
        if let Some(typed) = Self::typed(value) {
            builder.add(typed.clone());
        }
    }

    fn add_column(&self, batch: &mut ColumnBatchType) {
        batch.add::<T>();
    }

    fn fill_column(&self, value: &TypedValue, batch: &mut ColumnBatchBuilder, count: u32) {
        let (Some(typed), Some(mut writer)) = (Self::typed(value), batch.writer::<T>()) else {
            return;
        };
        for _ in 0..count {
            if writer.push(typed.clone()).is_err() {
                break;
            }
        }
    }

    fn copy_rows(
        &self,
        archetype: &Archetype,
        rows: &[u32],
        batch: &mut ColumnBatchBuilder,
    ) -> Option<()> {
        let column = archetype.get::<&T>()?;
        let mut writer = batch.writer::<T>()?;
        for &row in rows {
            writer.push(column.get(row as usize)?.clone()).ok()?;
        }
        Some(())
    }

    fn probe(&self, path: &[PathSegment]) -> Option<Shape> {
        field_probe::probe::<T>(path)
    }

    fn tag_of(&self, path: &[PathSegment]) -> Option<&'static str> {
        field_probe::tag_of::<T>(path)
    }

    fn encode(&self, value: &TypedValue) -> Result<Value, String> {
        match Self::typed(value) {
            Some(typed) => serde_json::to_value(typed).map_err(|e| e.to_string()),
            None => Err("component value of the wrong type".to_string()),
        }
    }

    fn to_json(&self, world: &World, entity: Entity) -> Option<Result<Value, String>> {
        let component = world.get::<&T>(entity).ok()?;
        Some(serde_json::to_value(&*component).map_err(|e| e.to_string()))
    }

    fn patch_entities(
        &self,
        world: &mut World,
        entities: &[Entity],
        patch: &Value,
        shortcut: Option<(&TypedValue, &TypedValue)>,
    ) -> (Vec<bool>, Vec<(Entity, ValueError)>) {
        let mut patched = vec![false; entities.len()];
        let mut failures = Vec::new();
        // Untouched instances (most of them, often) serialize exactly as the archetype's old
        // value: postcard's bytes are a cheap, exact comparison of the serialized form.
        let shortcut = shortcut.and_then(|(before, after)| {
            let before =
                crate::component::binary_codec::to_allocvec(before.downcast_ref::<T>()?).ok()?;
            Some((before, after.downcast_ref::<T>()?))
        });
        // Instances whose value differs from the archetype's (a goblin mid-fight): the patched
        // fields' bytes from the archetype's new value spliced into the live value's, decoded
        // once (no JSON). Only for patches of plain struct fields (`value_layout::Splice`).
        let layout = shortcut.as_ref().and_then(|_| self.layout());
        let splice = shortcut
            .as_ref()
            .zip(layout.as_ref())
            .and_then(|((_, after), layout)| {
                let after = crate::component::binary_codec::to_allocvec(*after).ok()?;
                crate::component::value_layout::Splice::plan(layout, patch, &after)
            });
        let mut spliced = Vec::new();
        let mut live_bytes = Vec::new();
        // A view finds each entity's column without looking the type up in its archetype.
        let mut view = world.view_mut::<&mut T>();
        for (i, &entity) in entities.iter().enumerate() {
            let Some(component) = view.get_mut(entity) else {
                continue;
            };
            if let Some((before, after)) = &shortcut {
                live_bytes.clear();
                // A value that cannot be serialized takes the slow path, which reports why.
                if let Ok(bytes) = crate::component::binary_codec::to_extend(
                    &*component,
                    std::mem::take(&mut live_bytes),
                ) {
                    live_bytes = bytes;
                    if live_bytes == *before {
                        *component = (*after).clone();
                        patched[i] = true;
                        continue;
                    }
                    if let Some(splice) = &splice {
                        spliced.clear();
                        // Both parts are values already checked (the live one and the
                        // archetype's): read back as they are.
                        let updated = splice.apply(&live_bytes, &mut spliced).and_then(|()| {
                            crate::component::binary_codec::from_bytes::<T>(&spliced).ok()
                        });
                        if let Some(updated) = updated {
                            *component = updated;
                            patched[i] = true;
                            continue;
                        }
                    }
                }
            }
            // Through JSON: the patch names fields, and serde is the only view of them.
            let result = serde_json::to_value(&*component)
                .map_err(|e| ValueError::invalid(FieldPath::root(), e.to_string()))
                .and_then(|mut value| {
                    merge_patch::apply(&mut value, patch);
                    // Plain serde first; the tracking decoder only to say where it failed.
                    let reading = Reading::default();
                    T::deserialize(ValueReader::new(&value, &reading, false))
                        .or_else(|_| deserialize_value::<T>(&value, &mut Vec::new()))
                });
            match result {
                Ok(updated) => {
                    *component = updated;
                    patched[i] = true;
                }
                Err(error) => failures.push((entity, error)),
            }
        }
        (patched, failures)
    }

    fn check_live(&self, world: &World, entity: Entity) -> Option<Result<Checked, CheckError>> {
        let component = world.get::<&T>(entity).ok()?;
        Some(value_check::check(&*component))
    }

    fn column<'w>(&self, archetype: &'w Archetype) -> Option<Box<dyn LiveColumn + 'w>> {
        Some(Box::new(archetype.get::<&T>()?))
    }

    fn read_json_into(
        &self,
        text: &str,
        builder: &mut EntityBuilder,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<(), (FieldPath, serde_json::Error)> {
        builder.add(Self::read_json_typed(self.marker_text(text), unknown)?);
        Ok(())
    }

    fn read_json_prefix_into(&self, text: &str, builder: &mut EntityBuilder) -> Option<usize> {
        if self.marker {
            // Scenes write markers `{}` (serde would read only `null`).
            let rest = text.trim_start();
            if let Some(after) = rest.strip_prefix("{}") {
                builder.add(serde_json::from_str::<T>("null").ok()?);
                return Some(text.len() - after.len());
            }
        }
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<Strict<T>>();
        let Strict(typed) = values.next()?.ok()?;
        crate::component::value_check::check_read(&typed).ok()?;
        builder.add(typed);
        Some(values.byte_offset())
    }

    fn read_postcard(&self, bytes: &[u8]) -> Result<TypedValue, (FieldPath, String)> {
        Ok(Box::new(Self::read_postcard_typed(bytes)?))
    }

    fn read_postcard_into(
        &self,
        bytes: &[u8],
        builder: &mut EntityBuilder,
    ) -> Result<(), (FieldPath, String)> {
        builder.add(Self::read_postcard_typed(bytes)?);
        Ok(())
    }

    fn postcard_sink<'b>(
        &self,
        batch: &'b ColumnBatchBuilder,
    ) -> Option<Box<dyn PostcardSink + 'b>> {
        Some(Box::new(batch.writer::<T>()?))
    }

    fn add_owned(&self, value: TypedValue, builder: &mut EntityBuilder) {
        match value.downcast::<T>() {
            Ok(typed) => {
                builder.add(*typed);
            }
            Err(_) => debug_assert!(false, "component value of the wrong type"),
        }
    }

    fn insert_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool {
        match Self::typed(value) {
            Some(typed) => world.insert_one(entity, typed.clone()).is_ok(),
            None => false,
        }
    }

    #[inline]
    fn overwrite_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool {
        let Some(typed) = Self::typed(value) else {
            return false;
        };
        match world.query_one_mut::<&mut T>(entity) {
            Ok(place) => {
                place.clone_from(typed);
                true
            }
            Err(_) => world.insert_one(entity, typed.clone()).is_ok(),
        }
    }

    fn remove(&self, world: &mut World, entity: Entity) -> bool {
        world.remove_one::<T>(entity).is_ok()
    }

    fn has(&self, world: &World, entity: Entity) -> bool {
        world.satisfies::<&T>(entity)
    }

    fn layout(&self) -> Option<Layout> {
        // As a binary load reads it: references as numbers, shared values as keys.
        let refs = TraceRefs(crate::component::entity_ref::RefWire::Number);
        let (layout, _) = crate::component::entity_ref::with_mapper(refs, || {
            crate::component::shared::with_trace(crate::component::value_layout::trace::<T>)
        });
        layout
    }

    #[cfg(feature = "schema")]
    fn json_layout(&self) -> Option<Layout> {
        // As an archetype file reads it: references as text.
        let refs = TraceRefs(crate::component::entity_ref::RefWire::Text);
        let (layout, _) = crate::component::entity_ref::with_mapper(refs, || {
            crate::component::value_layout::trace_with::<T>(true)
        });
        layout
    }
}

/// The entity mapper of a layout trace: references are numbers, read as a stand-in entity.
struct TraceRefs(crate::component::entity_ref::RefWire);

impl crate::component::entity_ref::EntityMapper for TraceRefs {
    fn wire(&self) -> crate::component::entity_ref::RefWire {
        self.0
    }
    fn write(&mut self, _entity: Entity) -> Result<crate::component::entity_ref::RefOut, String> {
        Err("references are not written while tracing".to_string())
    }
    fn read(
        &mut self,
        _reference: crate::component::entity_ref::RefIn<'_>,
    ) -> Result<Entity, String> {
        Ok(Entity::DANGLING)
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Health {
        max: f32,
    }
    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Wrapper<T>(T);

    #[test]
    fn names_types_and_aliases_are_unique() {
        let mut registry = ComponentRegistry::new();
        let id = registry.register::<Health>().unwrap();
        assert_eq!(registry.name(id), "Health");
        assert_eq!(
            registry.register::<Health>().unwrap_err().to_string(),
            format!(
                "type `{}` is already registered as component `Health`",
                type_name::<Health>()
            )
        );
        let err = registry
            .register_with::<u32>(ComponentOptions::new().name("Health"))
            .unwrap_err();
        assert!(matches!(err, RegistryError::NameTaken { .. }), "{err}");
        let err = registry.register::<Wrapper<u8>>().unwrap_err();
        assert!(matches!(err, RegistryError::GenericType { .. }), "{err}");
        let err = registry
            .register_with::<u8>(ComponentOptions::new().name("9lives"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`9lives` is not a valid component name: use ASCII letters, digits and `_`, starting with a letter"
        );
    }
}
