//! JSON below the ECS: source text with positions, paths into values, merge patches, the field
//! names a serde type expects, and "did you mean" suggestions. Nothing here knows components,
//! archetypes or scenes.

pub(crate) mod axes;
mod field_path;
mod field_probe;
mod lines;
pub mod merge_patch;
mod pretty;
mod serde_message;
mod span_index;
mod suggest;
mod text;
mod value_edit;

pub(crate) use axes::{
    axis_array, axis_object, glam_axes, in_axis_order, normalize_declared, AxisMisfit, AxisProblem,
    DeclaredAxes,
};
pub use field_path::{FieldPath, PathSegment};
pub(crate) use field_probe::{probe, suggest_field_in, suggest_with, tag_of, Shape};
pub use lines::TextLines;
pub(crate) use merge_patch::remove_overridden;
pub(crate) use pretty::Pretty;
pub(crate) use serde_message::{
    explain_syntax_error, names_a_field, plain_message, strip_position, syntax_error_kind,
};
pub use suggest::did_you_mean;
pub use text::Position;
pub(crate) use text::{
    decoded_string, duplicate_key, locate, parse_json, skip_whitespace, string_end, string_stop,
    value_end, SourceText, TextError, TextErrorKind,
};
pub(crate) use value_edit::{remove_member_in_text, set_value_in_text, ValueEditRefused};
