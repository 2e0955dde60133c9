//! The arena: its size, and the level the checked-in scene (`assets/scenes/arena.scene.json`)
//! holds, built in code so the file can be regenerated when the archetypes change.
//!
//! The level shows every feature of the format in one scene: inheritance (goblin archers and
//! the goblin chief extend the goblin), children (turrets with a sensor and a gun, wired by
//! entity references), references between instances (squads following their leader, a door
//! and its key pointing at each other) and per-instance overrides (a goblin boss with more
//! hit points; a goblin camp turned into the allies' barracks).

use std::path::Path;

use archetype_engine::tooling::write_atomically;
use archetype_engine::{
    save_scene, ArchetypeLibrary, Children, EntityRef, SceneEncoding, SceneSaveOptions, SpawnError,
    StableId, Transform,
};
use glam::Vec3;
use hecs::{Entity, World};
use serde_json::{json, Value};

use super::components::{Door, Follow, Key};
use super::rng::Rng;
use super::DemoError;

/// The arena's width in tiles (`x` runs from 0 to `ARENA_WIDTH - 1`).
pub const ARENA_WIDTH: u16 = 60;
/// The arena's height in tiles (`y` runs from 0 to `ARENA_HEIGHT - 1`, top to bottom).
pub const ARENA_HEIGHT: u16 = 20;
/// Where the checked-in arena scene lives, relative to the repository root.
pub const ARENA_SCENE: &str = "assets/scenes/arena.scene.json";
/// The seed of the checked-in scene's stable IDs, so regenerating it gives the same file.
pub const ARENA_SCENE_SEED: u64 = 0x00A7_E7A5_CE7E;

/// Builds the arena level in `world`: two allied squads with turrets and a barracks on the
/// left, a goblin camp with its warband and their boss on the right, a door and its key in
/// between.
///
/// Every spawned entity (children included) gets a stable ID drawn from `seed`, so the level
/// saves to the same scene file every time.
///
/// # Errors
/// If an archetype the level uses cannot be spawned (missing, abstract or broken).
pub fn build_arena(
    world: &mut World,
    library: &ArchetypeLibrary,
    seed: u64,
) -> Result<(), SpawnError> {
    let mut level = Level {
        world,
        library,
        ids: Rng::new(seed),
    };

    // The allies: a barracks (a goblin camp with overrides), two turrets, two squads.
    level.spawn_with(
        "spawners/goblin_camp",
        &json!({
            "Name": "Barracks",
            "Glyph": { "ch": "^", "color": "Cyan" },
            "Spawner": { "archetype": "allies/soldier", "interval": 8.0, "max_alive": 4 }
        }),
        (2.0, 10.0),
    )?;
    level.spawn("structures/turret", (7.0, 4.0))?;
    level.spawn("structures/heavy_turret", (7.0, 15.0))?;
    for (leader_at, members) in [
        ((13.0, 6.0), [(11.0, 5.0), (11.0, 7.0), (10.0, 6.0)]),
        ((13.0, 14.0), [(11.0, 13.0), (11.0, 15.0), (10.0, 14.0)]),
    ] {
        let leader = level.spawn("allies/squad_leader", leader_at)?;
        for at in members {
            let soldier = level.spawn("allies/soldier", at)?;
            if let Ok(mut follow) = level.world.get::<&mut Follow>(soldier) {
                follow.leader = Some(EntityRef(leader));
            }
        }
    }

    // A door in the middle of the arena and its key on the allies' side.
    let door = level.spawn("items/door", (30.0, 10.0))?;
    let key = level.spawn("items/key", (21.0, 8.0))?;
    if let Ok(mut door) = level.world.get::<&mut Door>(door) {
        door.key = Some(EntityRef(key));
    }
    if let Ok(mut key) = level.world.get::<&mut Key>(key) {
        key.door = Some(EntityRef(door));
    }

    // The goblins: their camp, a warband, archers, an orc and the boss.
    level.spawn("spawners/goblin_camp", (57.0, 10.0))?;
    for at in [
        (45.0, 4.0),
        (47.0, 7.0),
        (44.0, 12.0),
        (47.0, 15.0),
        (50.0, 8.0),
        (50.0, 12.0),
    ] {
        level.spawn("enemies/goblin", at)?;
    }
    for at in [(53.0, 5.0), (53.0, 15.0), (52.0, 10.0)] {
        level.spawn("enemies/goblin_archer", at)?;
    }
    level.spawn("enemies/orc", (46.0, 10.0))?;
    level.spawn_with(
        "enemies/goblin_chief",
        &json!({ "Name": "Grukk the Boss", "Health": { "current": 60, "max": 60 } }),
        (54.0, 10.0),
    )?;
    Ok(())
}

/// The arena level as a scene file's bytes (see [`build_arena`]).
///
/// # Errors
/// If the level cannot be built or saved.
pub fn arena_scene(library: &ArchetypeLibrary) -> Result<Vec<u8>, DemoError> {
    let mut world = World::new();
    build_arena(&mut world, library, ARENA_SCENE_SEED).map_err(DemoError::Spawn)?;
    save_scene(
        &world,
        library,
        SceneEncoding::Json,
        &SceneSaveOptions::default(),
    )
    .map_err(DemoError::SaveScene)
}

/// Regenerates the arena scene: builds the level with the archetypes under `archetypes` and
/// writes it to `path` (atomically). The checked-in file is written this way; a test fails
/// when it is stale.
///
/// # Errors
/// If the archetypes do not load cleanly, the level cannot be built, or the file cannot be
/// written.
pub fn write_arena_scene(archetypes: &Path, path: &Path) -> Result<(), DemoError> {
    let library = super::game::load_library(archetypes)?;
    if library.error_count() > 0 {
        return Err(DemoError::BrokenArchetypes {
            dir: archetypes.to_path_buf(),
            errors: library.diagnostics().to_vec(),
        });
    }
    let bytes = arena_scene(&library)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| DemoError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    write_atomically(path, &bytes).map_err(|source| DemoError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Spawns the level's entities at their places, with stable IDs from a seeded generator.
struct Level<'a> {
    world: &'a mut World,
    library: &'a ArchetypeLibrary,
    ids: Rng,
}

impl Level<'_> {
    fn spawn(&mut self, name: &str, at: (f32, f32)) -> Result<Entity, SpawnError> {
        let entity = self.library.spawn(self.world, name)?;
        self.finish(entity, at);
        Ok(entity)
    }

    fn spawn_with(
        &mut self,
        name: &str,
        overrides: &Value,
        at: (f32, f32),
    ) -> Result<Entity, SpawnError> {
        let entity = self.library.spawn_with(self.world, name, overrides)?;
        self.finish(entity, at);
        Ok(entity)
    }

    /// Places the root and replaces the random stable IDs spawning gave the instance (root
    /// first, then children depth-first in archetype order) with seeded ones.
    fn finish(&mut self, root: Entity, (x, y): (f32, f32)) {
        let at = Vec3::new(x, y, 0.0);
        let mut transform = self
            .world
            .get::<&Transform>(root)
            .map_or(Transform::IDENTITY, |transform| *transform);
        transform.translation = at;
        let _ = self.world.insert_one(root, transform);
        let mut stack = vec![root];
        while let Some(entity) = stack.pop() {
            let _ = self.world.insert_one(entity, StableId(self.ids.next_u64()));
            if let Ok(children) = self.world.get::<&Children>(entity) {
                stack.extend(children.0.iter().rev().map(|child| child.entity()));
            }
        }
    }
}
