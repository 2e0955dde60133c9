//! [`ComponentRegistry`]: which Rust types may appear in data files, and under which names.

use std::any::{type_name, TypeId};
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::component::ops::{ComponentOps, Ops};
use crate::component::Rounding;
use crate::json::{DeclaredAxes, FieldPath, PathSegment};

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
    axes: Vec<DeclaredAxes>,
    roundings: Vec<(Vec<String>, Rounding)>,
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

    /// Names the axes of the vector at `field` (a `.`-separated path of fields, `""` for the
    /// component itself): data files may write it as an array or as an object of these axes,
    /// and an object changes only the axes it names of an inherited value. glam's vectors and
    /// quaternions have `x`, `y`, `z`, `w` without this; a colour says so here.
    ///
    /// ```
    /// # use archetype_engine::{ComponentOptions, ComponentRegistry};
    /// #[derive(Clone, serde::Serialize, serde::Deserialize)]
    /// struct Sprite { tint: glam::Vec4 }
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry.register_with::<Sprite>(ComponentOptions::new().axes("tint", &["r", "g", "b", "a"]))?;
    /// # Ok::<(), archetype_engine::RegistryError>(())
    /// ```
    pub fn axes(mut self, field: impl Into<String>, axes: &'static [&'static str]) -> Self {
        let field: String = field.into();
        let path = field.split('.').filter(|key| !key.is_empty());
        self.axes.push((path.map(str::to_string).collect(), axes));
        self
    }

    /// Says how the result of a number operator (`$add`, `$mul`) at `field` (a `.`-separated
    /// path of fields) is made a whole number when the file does not say it with `$round`:
    /// a game whose rules truncate (`130 × 0.25` is 32) says [`Rounding::Trunc`] here once
    /// instead of every designer writing `"$round": "trunc"`. Without it, a field of an integer
    /// type rounds to the nearest; a float field given a rounding here is made whole too.
    ///
    /// ```
    /// # use archetype_engine::{ComponentOptions, ComponentRegistry, Rounding};
    /// #[derive(Clone, serde::Serialize, serde::Deserialize)]
    /// struct Stats { speed: i32 }
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry.register_with::<Stats>(ComponentOptions::new().rounding("speed", Rounding::Trunc))?;
    /// # Ok::<(), archetype_engine::RegistryError>(())
    /// ```
    pub fn rounding(mut self, field: impl Into<String>, rounding: Rounding) -> Self {
        let field: String = field.into();
        let path = field.split('.').filter(|key| !key.is_empty());
        self.roundings
            .push((path.map(str::to_string).collect(), rounding));
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
    /// fields (`Vec2`, `Vec3`, `Quat`, ... are described as arrays, `[x, y]`, or objects of
    /// their axes, `{"y": 2}`, with no attribute on the field). Field names, types and enum variants appear as with
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
    /// assert_eq!(schema.as_value()["properties"]["route"]["items"]["anyOf"][0]["maxItems"], 2);
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

pub(super) struct Entry {
    pub(super) name: Arc<str>,
    pub(super) aliases: Vec<Arc<str>>,
    pub(super) type_name: &'static str,
    pub(super) runtime_only: bool,
    /// Fields the type no longer has (see [`ComponentOptions::removed_field`]).
    pub(super) removed_fields: Vec<String>,
    /// Fields' roundings (see [`ComponentOptions::rounding`]).
    pub(super) roundings: Vec<(Vec<String>, Rounding)>,
    #[cfg(feature = "schema")]
    pub(super) schema: Option<SchemaFn>,
    /// Whether the schema is traced from the type's `Deserialize`.
    #[cfg(feature = "schema")]
    pub(super) serde_schema: bool,
    /// Set by the library itself (`Parent`, `StableId`, ...); data files may not write it.
    pub(super) managed: bool,
    pub(super) ops: Box<dyn ComponentOps>,
    /// The type's binary layout (postcard-encoded [`Layout`](crate::component::value_layout::Layout)), traced on first use; `None`
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

    pub(super) fn insert<T: Component>(
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
            roundings: options.roundings,
            #[cfg(feature = "schema")]
            schema: options.schema,
            #[cfg(feature = "schema")]
            serde_schema: options.serde_schema,
            managed,
            ops: Box::new(Ops::<T>::new(options.axes)),
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
        let mut layout = entry.ops.json_layout()?;
        // Axes the options name replace the ones the type's name gives (`r g b a` for `x y z w`).
        for (field, axes) in entry.ops.declared_axes() {
            crate::component::serde_schema::name_axes(&mut layout, field, axes);
        }
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

    /// The rounding a component's options give the number at `path`, if they give one.
    pub(crate) fn declared_rounding(
        &self,
        id: ComponentId,
        path: &[PathSegment],
    ) -> Option<Rounding> {
        let roundings = &self.entries[id.index()].roundings;
        (roundings.iter())
            .find(|(field, _)| keys_are(field, path))
            .map(|(_, rounding)| *rounding)
    }

    /// The axes a component's options name for the vector at `path`, if they name it.
    pub(crate) fn declared_axes(
        &self,
        id: ComponentId,
        path: &[PathSegment],
    ) -> Option<&'static [&'static str]> {
        let declared = self.entries[id.index()].ops.declared_axes();
        (declared.iter())
            .find(|(field, _)| keys_are(field, path))
            .map(|(_, axes)| *axes)
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
            crate::component::binary_codec::to_allocvec(layout).ok()
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

pub(super) fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `path` is the field `keys` (a field an option names).
fn keys_are(keys: &[String], path: &[PathSegment]) -> bool {
    keys.len() == path.len()
        && (keys.iter().zip(path))
            .all(|(key, segment)| matches!(segment, PathSegment::Key(written) if written == key))
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
