//! The demo arena's components: plain serde structs, registered once.

use archetype_engine::{
    ArchetypeRef, AssetKind, AssetPath, ComponentOptions, ComponentRegistry, EntityRef,
    RegistryError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an entity is drawn: one character in one colour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Glyph {
    /// The character drawn on the map.
    pub ch: char,
    /// Its colour.
    pub color: Color,
}

/// A terminal colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Color {
    /// Red.
    Red,
    /// Green.
    Green,
    /// Yellow.
    Yellow,
    /// Blue.
    Blue,
    /// Magenta.
    Magenta,
    /// Cyan.
    Cyan,
    /// White.
    White,
    /// Gray.
    Gray,
}

/// Hit points: `current` changes during play, `max` comes from the archetype.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    /// Hit points left.
    pub current: f32,
    /// Hit points when fully healed.
    pub max: f32,
}

/// Movement speed in tiles per second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Speed {
    /// Tiles per second.
    pub value: f32,
}

/// Which side an entity fights for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Faction {
    /// Attacks allies.
    Hostile,
    /// Attacks hostiles.
    Friendly,
    /// Attacks nobody.
    Neutral,
}

/// A close-range attack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Melee {
    /// Damage per hit.
    pub damage: f32,
    /// Seconds between hits.
    pub cooldown: f32,
}

/// A ranged attack that spawns a projectile archetype.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ranged {
    /// The archetype spawned per shot, e.g. `projectiles/arrow` (checked when read).
    pub projectile: ArchetypeRef,
    /// Maximum distance to a target, in tiles.
    pub range: f32,
    /// Seconds between shots.
    pub cooldown: f32,
}

/// A projectile in flight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Projectile {
    /// Damage on hit.
    pub damage: f32,
    /// Seconds before it disappears.
    pub lifetime: f32,
}

/// Current movement, in tiles per second (set by the AI and by projectiles).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Velocity {
    /// Horizontal component.
    pub x: f32,
    /// Vertical component.
    pub y: f32,
}

/// Damage taken is reduced by this much per hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Armor {
    /// Damage absorbed per hit.
    pub value: f32,
}

/// What a creature carries: named when a boss falls. A list, so archetypes can change what
/// they inherit with list operators (`{"$append": ["crown"]}`, `{"$remove": ["rag"]}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Loot {
    /// Item names.
    #[serde(default)]
    pub items: Vec<String>,
}

/// A squad leader: members within `radius` rally to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Leader {
    /// Rally radius in tiles.
    pub radius: f32,
}

/// Keeps close to another entity (a squad member following its leader).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Follow {
    /// Who to follow; `None` until assigned.
    #[serde(default)]
    pub leader: Option<EntityRef>,
    /// Preferred distance in tiles.
    pub distance: f32,
}

/// Spawns an archetype on a timer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Spawner {
    /// The archetype to spawn, e.g. `enemies/goblin` (checked when read).
    pub archetype: ArchetypeRef,
    /// Seconds between spawns.
    pub interval: f32,
    /// No more spawns while this many spawned entities are alive.
    pub max_alive: u32,
}

/// A turret's parts, wired by entity references to its own children.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Turret {
    /// The child that detects targets.
    pub sensor: EntityRef,
    /// The child that shoots.
    pub gun: EntityRef,
}

/// Detects hostiles within a range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sensor {
    /// Detection range in tiles.
    pub range: f32,
}

/// A door, locked by a key somewhere in the level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Door {
    /// The key that opens it.
    #[serde(default)]
    pub key: Option<EntityRef>,
    /// Whether it is open.
    #[serde(default)]
    pub open: bool,
}

/// A key that opens a door.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Key {
    /// The door it opens.
    #[serde(default)]
    pub door: Option<EntityRef>,
}

/// What a creature does when no enemy is in sight: an enum with data, so a child archetype
/// switches variant by naming another (`{"Guard": {"alert": 5}}` over an inherited
/// `{"Wander": {"pace": 0.35}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Stance {
    /// Roams the arena at `pace` times its speed, attacking any enemy it sees.
    Wander {
        /// Fraction of its speed it roams at.
        pace: f32,
    },
    /// Holds its ground, attacking only enemies within `alert` tiles.
    Guard {
        /// How near an enemy must come to be attacked.
        alert: f32,
    },
}

/// ASCII art in a text file: the kind of asset a [`Portrait`] names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TextArt;

impl AssetKind for TextArt {
    const EXTENSIONS: &'static [&'static str] = &["txt"];
}

/// How a creature looks up close: the side panel shows its art in a wide terminal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Portrait {
    /// A text file under the assets root, e.g. `portraits/goblin.txt` (checked when read).
    pub art: AssetPath<TextArt>,
}

/// Marks a boss: its fall is announced. A marker component, written `{}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Boss;

/// What the AI is attacking right now: runtime state, never saved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Target(pub Option<EntityRef>);

/// Registers every demo component.
///
/// # Errors
/// Only if a name is already taken in `registry`.
pub fn register(registry: &mut ComponentRegistry) -> Result<(), RegistryError> {
    registry.register_with_schema::<Glyph>()?;
    registry.register_with_schema::<Health>()?;
    registry.register_with::<Speed>(
        ComponentOptions::new()
            .alias("MoveSpeed")
            .json_schema::<Speed>(),
    )?;
    registry.register_with_schema::<Faction>()?;
    registry.register_with_schema::<Melee>()?;
    registry.register_with_schema::<Ranged>()?;
    registry.register_with_schema::<Projectile>()?;
    registry.register_with_schema::<Velocity>()?;
    registry.register_with_schema::<Armor>()?;
    registry.register_with_schema::<Loot>()?;
    registry.register_with_schema::<Leader>()?;
    registry.register_with_schema::<Follow>()?;
    registry.register_with_schema::<Spawner>()?;
    registry.register_with_schema::<Turret>()?;
    registry.register_with_schema::<Sensor>()?;
    registry.register_with_schema::<Door>()?;
    registry.register_with_schema::<Key>()?;
    registry.register_with_schema::<Stance>()?;
    registry.register_with_schema::<Portrait>()?;
    registry.register_with_schema::<Boss>()?;
    registry.register_with::<Target>(
        ComponentOptions::new()
            .runtime_only()
            .json_schema::<Target>(),
    )?;
    Ok(())
}

/// A registry with the built-in and demo components.
pub fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    // The demo's names are distinct from the built-ins by construction.
    if let Err(error) = register(&mut registry) {
        unreachable!("demo components clash: {error}");
    }
    registry
}
