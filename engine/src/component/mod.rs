//! Components: the registry that turns a plain serde type into a named, type-erased component
//! (read, write, compare, patch, encode), the built-in components (`Name`, `Parent`,
//! `Children`, `Transform`, `StableId`), and the field types with meaning across entities
//! (`EntityRef`, `Shared<T>`). Knows JSON; does not know archetypes or scenes.

pub(crate) mod binary_codec;
pub(crate) mod builtin;
pub(crate) mod entity_ref;
pub(crate) mod ignored_fields;
pub(crate) mod registry;
#[cfg(feature = "schema")]
pub(crate) mod serde_schema;
pub(crate) mod shared;
pub(crate) mod stable_id;
pub(crate) mod transform;
pub(crate) mod value_check;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
pub(crate) mod value_layout;
pub(crate) mod value_reader;
