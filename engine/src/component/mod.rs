//! Components: the registry that turns a plain serde type into a named, type-erased component
//! (read, write, compare, patch, encode), the built-in components (`Name`, `Parent`,
//! `Children`, `Transform`, `StableId`), and the field types with meaning across entities
//! (`EntityRef`, `Shared<T>`). Knows JSON; does not know archetypes or scenes.

mod binary_codec;
mod builtin;
// The engine's only `unsafe` code: hecs's `DynamicBundle` for spawn templates.
#[allow(unsafe_code)]
mod dynamic_bundle;
mod entity_ops;
mod entity_ref;
mod ignored_fields;
mod instance_marker;
mod map_error;
mod ops;
mod registry;
mod reload_ops;
mod rounding;
mod scene_ops;
// The context serde impls read (entity mapper, shared values, checked references): used by
// the archetype and scene subsystems to enter it.
pub(crate) mod serde_context;
#[cfg(feature = "schema")]
mod serde_schema;
mod shared;
mod stable_id;
mod transform;
mod typed_list;
mod value_check;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod value_layout;
mod value_ops;
mod value_reader;

#[cfg(feature = "binary")]
pub(crate) use binary_codec::to_allocvec;
pub(crate) use binary_codec::{crc32, from_bytes};
pub use builtin::{Children, Name, Parent};
pub(crate) use dynamic_bundle::{SpawnTemplate, TemplateBuilder};
pub use entity_ref::EntityRef;
pub(crate) use entity_ref::{
    with_installed_mapper, with_mapper, EntityMapper, RefIn, RefOut, RefWire,
};
pub use instance_marker::{ArchetypeId, ArchetypeInstance, OverridesId};
pub(crate) use map_error::{MapError, ReadOnly, RefPathError};
pub(crate) use ops::{ComponentOps, TypedValue};
#[cfg(feature = "schema")]
pub use registry::SchemaFn;
pub use registry::{Component, ComponentId, ComponentOptions, ComponentRegistry, RegistryError};
pub use rounding::Rounding;
pub(crate) use scene_ops::{LiveColumn, PushError, WriteError};
pub use shared::Shared;
pub(crate) use shared::{
    mark_used_in, with_load_table, with_save_table, LoadTable, SaveTable, SHARED_REF,
};
pub use stable_id::{ParseStableIdError, StableId};
pub use transform::Transform;
pub(crate) use typed_list::TypedList;
pub(crate) use value_check::CheckError;
pub(crate) use value_layout::{changed_fields, read_value, Layout};
pub(crate) use value_ops::ValueError;
pub(crate) use value_reader::{is_operator_object, ReadErrorKind};
