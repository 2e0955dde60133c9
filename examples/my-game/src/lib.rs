//! A game's own components, registered in one place: the game and its `archetool` both call
//! [`register_components`], so the tool validates exactly what the game loads.

use archetype_engine::{schemars, ComponentOptions, ComponentRegistry, EntityRef, RegistryError};
use glam::Vec2;
use serde::{Deserialize, Serialize};

/// How an entity moves, in tiles per second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
// The derive names schemars through the engine's re-export: the game needs no schemars
// dependency of its own.
#[schemars(crate = "archetype_engine::schemars")]
pub struct Motion {
    /// Velocity, `[x, y]`.
    // glam has no schemars support (and the orphan rule keeps either crate's users from adding
    // it), so each glam field says which JSON form it has: glam's serde form is an array.
    #[schemars(with = "[f32; 2]")]
    pub velocity: Vec2,
    /// Top speed.
    #[serde(default = "default_max_speed")]
    pub max_speed: f32,
}

fn default_max_speed() -> f32 {
    4.0
}

/// Hit points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "archetype_engine::schemars")]
pub struct Vitality {
    /// Current hit points.
    pub current: u32,
    /// Maximum hit points.
    pub max: u32,
}

/// Whom an entity hunts: another entity, by reference (`"#"` is itself, `"#child"` a child).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "archetype_engine::schemars")]
pub struct Hunts {
    /// The target, if any.
    #[serde(default)]
    pub target: Option<EntityRef>,
}

/// A route walked between fights: its schema is traced from serde (no `JsonSchema` derive, no
/// attribute on the glam field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Patrol {
    /// Points walked in turn, `[x, y]` each.
    pub route: Vec<Vec2>,
    /// Seconds waited at each point.
    #[serde(default)]
    pub pause: f32,
}

/// Registers every component of the game, with its schema (for `archetool schema` and editor
/// autocompletion). `Motion` was called `Movement` once: old files still load.
///
/// # Errors
/// If two components clash (a bug in this function).
pub fn register_components(registry: &mut ComponentRegistry) -> Result<(), RegistryError> {
    registry.register_with::<Motion>(
        ComponentOptions::new()
            .alias("Movement")
            .json_schema::<Motion>(),
    )?;
    registry.register_with_schema::<Vitality>()?;
    registry.register_with_schema::<Hunts>()?;
    registry.register_with::<Patrol>(ComponentOptions::new().json_schema_from_serde())?;
    Ok(())
}
