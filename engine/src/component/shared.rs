//! [`Shared<T>`]: data several entities share through one allocation, written once in a scene.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::component::serde_context::{self, Recording, SharedValues};
use crate::json::FieldPath;

/// The key of a shared-data reference inside a component value (`{"$shared": "<key>"}`);
/// scene files list it as `scene_keys::SHARED_REF`.
pub(crate) const SHARED_REF: &str = "$shared";

/// Data shared by several entities (a loot table, a dialogue tree) through one `Arc`.
///
/// Cloning a `Shared` clones the handle, not the data, so every entity spawned from an
/// archetype shares the archetype's value. In a scene file the value is written once, in the
/// `shared` table, and each use refers to it as `{ "$shared": "<key>" }`; loading gives every
/// user the same allocation back. Everywhere else (archetype files, your own serde calls) a
/// `Shared<T>` reads and writes exactly like `T`.
///
/// # Example
/// ```
/// use archetype_engine::Shared;
/// # #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)] struct LootTable { gold: u32 }
/// let table = Shared::new(LootTable { gold: 5 });
/// let copy = table.clone();
/// assert!(Shared::ptr_eq(&table, &copy));
/// assert_eq!(serde_json::to_string(&table).unwrap(), r#"{"gold":5}"#);
/// ```
pub struct Shared<T>(pub Arc<T>);

impl<T> Shared<T> {
    /// Shares `value`.
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }

    /// Whether two handles share one allocation.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

#[cfg(feature = "schema")]
impl<T: schemars::JsonSchema> schemars::JsonSchema for Shared<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// How shared values are being written or read right now (per thread, for one scene
/// operation).
pub(crate) enum SharedContext {
    Save(SaveTable),
    Load(LoadTable),
    /// A component's binary layout is being traced: a `Shared` says where it stands.
    Trace,
}

/// Shared values met while saving: key → compact JSON, and which keys the output uses.
#[derive(Default)]
pub(crate) struct SaveTable {
    known: BTreeMap<u64, Vec<u8>>,
    used: BTreeSet<u64>,
}

/// The shared table of a scene being loaded, and what has been built from it.
pub(crate) struct LoadTable {
    entries: FxHashMap<u64, String>,
    built: FxHashMap<(u64, TypeId), Arc<dyn Any + Send + Sync>>,
    unknown: Vec<UnknownSharedField>,
}

/// A field of a shared value that its type does not have (skipped when it was built).
#[derive(Clone, Debug)]
pub(crate) struct UnknownSharedField {
    /// The shared value's key.
    pub key: u64,
    /// Where in the value.
    pub field: FieldPath,
    /// The Rust type the value was built as (its last path segment).
    pub type_name: &'static str,
    /// The closest field name the type has there.
    pub suggestion: Option<String>,
}

impl SaveTable {
    /// The entries the output refers to, by key.
    pub fn into_used(self) -> Vec<(u64, Vec<u8>)> {
        let used = self.used;
        self.known
            .into_iter()
            .filter(|(key, _)| used.contains(key))
            .collect()
    }

    /// Adds what another thread's table met and used while writing part of the same scene.
    pub fn absorb(&mut self, other: SaveTable) {
        for (key, bytes) in other.known {
            self.known.entry(key).or_insert(bytes);
        }
        self.used.extend(other.used);
    }

    /// Every entry met, used or not (binary scenes cannot tell keys from numbers in patches).
    #[cfg(feature = "binary")]
    pub fn into_all(self) -> Vec<(u64, Vec<u8>)> {
        self.known.into_iter().collect()
    }
}

impl LoadTable {
    pub fn new(entries: FxHashMap<u64, String>) -> Self {
        LoadTable {
            entries,
            built: FxHashMap::default(),
            unknown: Vec::new(),
        }
    }

    /// The fields of the values built that their types do not have, in the order met.
    pub fn unknown_fields(&self) -> &[UnknownSharedField] {
        &self.unknown
    }

    /// The JSON text of the value under `key`.
    pub fn text(&self, key: u64) -> Option<&str> {
        self.entries.get(&key).map(String::as_str)
    }
}

/// Whether scene values are in binary form now (keys as plain numbers).
fn binary_form() -> bool {
    crate::component::entity_ref::current_wire()
        == Some(crate::component::entity_ref::RefWire::Number)
}

/// Runs `f` with a save table installed; returns the table with what it recorded.
pub(crate) fn with_save_table<R>(table: SaveTable, f: impl FnOnce() -> R) -> (R, SaveTable) {
    let (result, context) = with_context(SharedContext::Save(table), f);
    match context {
        Some(SharedContext::Save(table)) => (result, table),
        _ => (result, SaveTable::default()),
    }
}

/// Runs `f` (which traces a component's binary layout) with `Shared` values saying where
/// they stand (see [`SHARED_NEWTYPE`](crate::component::value_layout::SHARED_NEWTYPE)).
pub(super) fn with_trace<R>(f: impl FnOnce() -> R) -> R {
    with_context(SharedContext::Trace, f).0
}

/// Runs `f` with a load table installed; returns the table with what was built from it.
pub(crate) fn with_load_table<R>(table: LoadTable, f: impl FnOnce() -> R) -> (R, LoadTable) {
    match with_context(SharedContext::Load(table), f) {
        (result, Some(SharedContext::Load(table))) => (result, table),
        (result, _) => (result, LoadTable::new(FxHashMap::default())),
    }
}

fn with_context<R>(context: SharedContext, f: impl FnOnce() -> R) -> (R, Option<SharedContext>) {
    serde_context::scoped::<SharedValues, _>(Some(context), f)
}

/// Marks what is serialized during `f` as going to the output (its shared keys are used).
pub(super) fn recording<R>(f: impl FnOnce() -> R) -> R {
    serde_context::scoped::<Recording, _>(true, f).0
}

/// Marks the shared keys a JSON value (a merge patch about to be written) refers to as used.
pub(crate) fn mark_used_in(value: &serde_json::Value) {
    fn walk(value: &serde_json::Value, used: &mut BTreeSet<u64>) {
        match value {
            serde_json::Value::Object(map) => {
                if let (1, Some(serde_json::Value::String(key))) = (map.len(), map.get(SHARED_REF))
                {
                    if let Ok(key) = u64::from_str_radix(key, 16) {
                        used.insert(key);
                    }
                }
                map.values().for_each(|v| walk(v, used));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, used)),
            _ => {}
        }
    }
    serde_context::with::<SharedValues, _>(|slot| {
        if let Some(SharedContext::Save(table)) = slot.borrow_mut().as_mut() {
            walk(value, &mut table.used);
        }
    });
}

/// FNV-1a, 64 bits: a stable content hash (the same on every platform and version).
fn content_key(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let saving = serde_context::with::<SharedValues, _>(|slot| {
            matches!(*slot.borrow(), Some(SharedContext::Save(_)))
        });
        if !saving {
            return self.0.serialize(serializer);
        }
        // The value's own (compact) JSON names it; references inside it are written through
        // the scene's entity mapper like any other.
        let bytes = serde_json::to_vec(&*self.0).map_err(serde::ser::Error::custom)?;
        let key = content_key(&bytes);
        serde_context::with::<SharedValues, _>(|slot| {
            if let Some(SharedContext::Save(table)) = slot.borrow_mut().as_mut() {
                if serde_context::flag::<Recording>() {
                    table.used.insert(key);
                }
                table.known.entry(key).or_insert(bytes);
            }
        });
        if binary_form() {
            serializer.serialize_u64(key)
        } else {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(SHARED_REF, &format!("{key:016x}"))?;
            map.end()
        }
    }
}

impl<'de, T: DeserializeOwned + Send + Sync + 'static> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (loading, tracing) =
            serde_context::with::<SharedValues, _>(|slot| match *slot.borrow() {
                Some(SharedContext::Load(_)) => (true, false),
                Some(SharedContext::Trace) => (false, true),
                _ => (false, false),
            });
        if tracing {
            return deserializer.deserialize_newtype_struct(
                crate::component::value_layout::SHARED_NEWTYPE,
                TraceVisitor(std::marker::PhantomData),
            );
        }
        if !loading {
            return T::deserialize(deserializer).map(Shared::new);
        }
        let key = if binary_form() {
            u64::deserialize(deserializer)?
        } else {
            // JSON: `{ "$shared": "<key>" }`, a bare key (from binary patches), or, for a
            // value an archetype wrote, the value itself.
            let value = serde_json::Value::deserialize(deserializer)?;
            match shared_key(&value) {
                Some(key) => key.map_err(de::Error::custom)?,
                None => {
                    return T::deserialize(value)
                        .map(Shared::new)
                        .map_err(de::Error::custom)
                }
            }
        };
        let cached = serde_context::with::<SharedValues, _>(|slot| match &*slot.borrow() {
            Some(SharedContext::Load(table)) => table.built.get(&(key, TypeId::of::<T>())).cloned(),
            _ => None,
        });
        if let Some(built) = cached {
            // Keyed by type too, so the downcast cannot fail.
            return built
                .downcast::<T>()
                .map(Shared)
                .map_err(|_| de::Error::custom("shared value built with another type"));
        }
        let text = serde_context::with::<SharedValues, _>(|slot| match &*slot.borrow() {
            Some(SharedContext::Load(table)) => table.entries.get(&key).cloned(),
            _ => None,
        });
        let text = text.ok_or_else(|| {
            de::Error::custom(format!(
                "shared value {key:016x} is not in the scene's shared table"
            ))
        })?;
        let mut unknown = Vec::new();
        let mut deserializer = serde_json::Deserializer::from_str(&text);
        let value: T = serde_ignored::deserialize(&mut deserializer, |path| {
            unknown.push(crate::component::value_ops::field_path_of(&path));
        })
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| de::Error::custom(format!("shared value {key:016x}: {e}")))?;
        let unknown = unknown.into_iter().map(|field| UnknownSharedField {
            key,
            suggestion: crate::json::suggest_field_in::<T>(&field),
            type_name: short_type_name::<T>(),
            field,
        });
        let value = Arc::new(value);
        serde_context::with::<SharedValues, _>(|slot| {
            if let Some(SharedContext::Load(table)) = slot.borrow_mut().as_mut() {
                table.built.insert((key, TypeId::of::<T>()), value.clone());
                table.unknown.extend(unknown);
            }
        });
        Ok(Shared(value))
    }
}

/// Reads a `Shared<T>` as the newtype a layout trace looks for.
struct TraceVisitor<T>(std::marker::PhantomData<fn() -> T>);

impl<'de, T: DeserializeOwned> de::Visitor<'de> for TraceVisitor<T> {
    type Value = Shared<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a shared value")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<Shared<T>, D::Error> {
        T::deserialize(inner).map(Shared::new)
    }
}

/// `game::loot::LootTable` → `LootTable` (generic arguments kept: `Table<u8>`).
fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let path_end = full.find('<').unwrap_or(full.len());
    let start = full[..path_end].rfind("::").map_or(0, |at| at + 2);
    &full[start..]
}

/// A `{"$shared": ...}` whose key is not 16 hex digits (holds the key as written).
struct BadSharedKey(serde_json::Value);

impl fmt::Display for BadSharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a shared value key (16 hex digits)", self.0)
    }
}

/// The key a JSON value refers to, if it is a shared-value reference.
fn shared_key(value: &serde_json::Value) -> Option<Result<u64, BadSharedKey>> {
    match value {
        serde_json::Value::Number(number) => number.as_u64().map(Ok),
        serde_json::Value::Object(map) if map.len() == 1 => {
            let text = map.get(SHARED_REF)?;
            let parsed = text
                .as_str()
                .filter(|t| t.len() == 16)
                .and_then(|t| u64::from_str_radix(t, 16).ok())
                .ok_or_else(|| BadSharedKey(text.clone()));
            Some(parsed)
        }
        _ => None,
    }
}
