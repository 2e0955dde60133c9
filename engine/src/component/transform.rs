//! [`Transform`]: position, rotation and scale.

use glam::{Mat4, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Where an entity is: translation, rotation and scale, in glam's types.
///
/// In data files every field is optional (missing fields keep the identity value) and is
/// written as glam's array (`{ "translation": [1, 0, 2], "rotation": [0, 0, 0, 1] }`) or as an
/// object of its axes, which over an inherited value changes only the axes it names
/// (`{ "translation": { "y": 3 } }`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Transform {
    /// Position, `[x, y, z]` or `{"x": .., "y": .., "z": ..}`.
    #[cfg_attr(feature = "schema", schemars(schema_with = "xyz_schema"))]
    pub translation: Vec3,
    /// Orientation as a unit quaternion, `[x, y, z, w]` or `{"x": .., "y": .., "z": .., "w": ..}`.
    #[cfg_attr(feature = "schema", schemars(schema_with = "xyzw_schema"))]
    pub rotation: Quat,
    /// Scale per axis, `[x, y, z]` or `{"x": .., "y": .., "z": ..}`.
    #[cfg_attr(feature = "schema", schemars(schema_with = "xyz_schema"))]
    pub scale: Vec3,
}

impl Transform {
    /// No translation, no rotation, scale one.
    pub const IDENTITY: Transform = Transform {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// The identity transform moved to `translation`.
    pub fn from_translation(translation: Vec3) -> Self {
        Transform {
            translation,
            ..Self::IDENTITY
        }
    }

    /// The transform as a matrix (scale, then rotation, then translation).
    pub fn to_matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// A vector of floats with these axes: its array, or an object of the axes it changes.
#[cfg(feature = "schema")]
fn axes_schema(axes: &[&str]) -> schemars::Schema {
    use serde_json::{json, Map, Value};
    let number = json!({ "type": "number" });
    let properties: Map<String, Value> = (axes.iter())
        .map(|axis| (axis.to_string(), number.clone()))
        .collect();
    let schema = json!({ "anyOf": [
        { "type": "array", "items": number, "minItems": axes.len(), "maxItems": axes.len() },
        { "type": "object", "properties": properties, "additionalProperties": false, "minProperties": 1 },
    ] });
    match schema {
        Value::Object(schema) => schemars::Schema::from(schema),
        _ => schemars::Schema::default(),
    }
}

#[cfg(feature = "schema")]
fn xyz_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    axes_schema(&crate::json::axes::XYZW[..3])
}

#[cfg(feature = "schema")]
fn xyzw_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    axes_schema(&crate::json::axes::XYZW)
}
