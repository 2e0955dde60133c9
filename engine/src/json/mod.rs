//! JSON below the ECS: source text with positions, paths into values, merge patches, the field
//! names a serde type expects, and "did you mean" suggestions. Nothing here knows components,
//! archetypes or scenes.

pub(crate) mod field_path;
pub(crate) mod field_probe;
pub mod merge_patch;
pub(crate) mod span_index;
pub(crate) mod suggest;
pub(crate) mod text;
