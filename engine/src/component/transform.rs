//! [`Transform`]: position, rotation and scale.

use glam::{Mat4, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Where an entity is: translation, rotation and scale, in glam's types.
///
/// In data files every field is optional (missing fields keep the identity value) and uses
/// glam's array forms: `{ "translation": [1, 0, 2], "rotation": [0, 0, 0, 1], "scale": [1, 1, 1] }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default)]
pub struct Transform {
    /// Position, `[x, y, z]`.
    #[cfg_attr(feature = "schema", schemars(with = "[f32; 3]"))]
    pub translation: Vec3,
    /// Orientation as a unit quaternion, `[x, y, z, w]`.
    #[cfg_attr(feature = "schema", schemars(with = "[f32; 4]"))]
    pub rotation: Quat,
    /// Scale per axis, `[x, y, z]`.
    #[cfg_attr(feature = "schema", schemars(with = "[f32; 3]"))]
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
