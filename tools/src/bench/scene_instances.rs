//! Instance scenes: the realistic level, every entity an archetype instance, saved and loaded
//! by the library beside hecs's own serializers on the same world.
//!
//! The world: `n` instances of two archetypes with the components of the plain-entity scene
//! ([`crate::bench::scene`]): `unit` (90%: `Name`, `Transform`, `Health`, `Velocity`, `Faction`,
//! `Loot`) and `follower` (10%: `Follow` instead of `Loot`, its `leader` set at run time to
//! another entity, so every follower differs from its archetype by a reference). One entity in
//! five has one changed field (`Health.current`, as after a fight). The library saves each
//! instance's differences from its archetype; hecs's baselines write every component of every
//! entity, as they know no archetypes.
//!
//! Beside it, [`PristineScene`]: `n` untouched instances of `unit`, whose load is compared with
//! `spawn_many` of the same archetype.

use std::fs;

use archetype_engine::{
    load_scene, save_scene, ArchetypeLibrary, EntityRef, SceneEncoding, SceneLoadOptions,
    SceneSaveOptions,
};
use hecs::{Entity, World};
use tempfile::TempDir;

use crate::bench::scene::{registry, spread, Follow, Health, SceneFixture};

const UNIT: &str = r#"{
  "components": {
    "Faction": "Hostile",
    "Health": { "current": 100, "max": 100 },
    "Loot": { "gold": 25, "rarity": 1 },
    "Name": "unit",
    "Transform": { "translation": [4.0, 0.0, -2.5] },
    "Velocity": { "x": 0.5, "y": -0.25 }
  }
}
"#;

const FOLLOWER: &str = r#"{
  "components": {
    "Faction": "Friendly",
    "Follow": { "distance": 2.0, "leader": null },
    "Health": { "current": 80, "max": 80 },
    "Name": "follower",
    "Transform": { "translation": [1.0, 0.0, 1.0] },
    "Velocity": { "x": 0.0, "y": 0.0 }
  }
}
"#;

/// The two archetypes in a temporary directory, loaded.
pub(crate) fn library() -> (TempDir, ArchetypeLibrary) {
    let dir = tempfile::tempdir().expect("bench setup: cannot create a temporary directory");
    for (name, text) in [("unit.json", UNIT), ("follower.json", FOLLOWER)] {
        fs::write(dir.path().join(name), text)
            .unwrap_or_else(|error| panic!("bench setup: cannot write {name}: {error}"));
    }
    let library = ArchetypeLibrary::load(dir.path(), registry())
        .unwrap_or_else(|error| panic!("bench setup: the archetypes do not load: {error}"));
    (dir, library)
}

/// The scene fixture of `n` archetype instances (see the module docs): the workloads of
/// [`SceneFixture`] on that world.
///
/// # Panics
/// If the archetypes do not load, or a side cannot save the world or load back every entity
/// of it.
pub fn instance_scene(n: usize) -> SceneFixture {
    let (dir, library) = library();
    let mut world = World::new();
    spawn_instances(&library, &mut world, n);
    SceneFixture::with_world(world, library, Some(dir), n / 10)
}

/// Spawns the `n` instances of the instance scene into `world`, as a game would have them
/// mid-level (followers following, one entity in five hurt).
pub(crate) fn spawn_instances(library: &ArchetypeLibrary, world: &mut World, n: usize) {
    let followers = library
        .spawn_many(world, "follower", n / 10)
        .unwrap_or_else(|error| panic!("bench setup: {error}"));
    let units = library
        .spawn_many(world, "unit", n - n / 10)
        .unwrap_or_else(|error| panic!("bench setup: {error}"));
    let all: Vec<Entity> = followers.iter().chain(&units).copied().collect();
    for (i, follower) in followers.iter().enumerate() {
        if let Ok(follow) = world.query_one_mut::<&mut Follow>(*follower) {
            follow.leader = Some(EntityRef(all[spread(i, 8, all.len())]));
        }
    }
    for (i, entity) in all.iter().enumerate().filter(|(i, _)| i % 5 == 0) {
        if let Ok(health) = world.query_one_mut::<&mut Health>(*entity) {
            health.current = (spread(i, 4, 60) + 1) as f32;
        }
    }
}

/// The instance scene's world two ways, for the memory figure: loaded from its JSON scene, or
/// spawned as the game spawned it.
pub struct InstanceWorlds {
    library: ArchetypeLibrary,
    n: usize,
    json: Vec<u8>,
    /// The world the scene was saved from, kept so that the memory it holds is not handed out
    /// again while the figures are measured.
    _saved: World,
    _dir: TempDir,
}

impl InstanceWorlds {
    /// The archetypes, and the scene of `n` instances saved once.
    ///
    /// # Panics
    /// If the archetypes do not load or the save fails.
    pub fn new(n: usize) -> Self {
        let (dir, library) = library();
        let mut world = World::new();
        spawn_instances(&library, &mut world, n);
        let json = save_json(&world, &library);
        InstanceWorlds {
            library,
            n,
            json,
            _saved: world,
            _dir: dir,
        }
    }

    /// Loads the scene into `world`.
    pub fn load(&self, world: &mut World) {
        load_scene(
            &self.json,
            None,
            world,
            &self.library,
            &SceneLoadOptions::default(),
        )
        .unwrap_or_else(|error| panic!("bench: the scene does not load: {error}"));
    }

    /// Spawns the same world into `world`.
    pub fn spawn(&self, world: &mut World) {
        spawn_instances(&self.library, world, self.n);
    }
}

/// `world` saved as a JSON scene.
pub(crate) fn save_json(world: &World, library: &ArchetypeLibrary) -> Vec<u8> {
    save_scene(
        world,
        library,
        SceneEncoding::Json,
        &SceneSaveOptions::default(),
    )
    .unwrap_or_else(|error| panic!("bench setup: the save failed: {error}"))
}

fn load_into_fresh_world(bytes: &[u8], library: &ArchetypeLibrary) -> World {
    let mut world = World::new();
    load_scene(
        bytes,
        None,
        &mut world,
        library,
        &SceneLoadOptions::default(),
    )
    .unwrap_or_else(|error| panic!("bench: the scene does not load: {error}"));
    world
}

/// `n` untouched instances of `unit`, saved as JSON and as binary, beside `spawn_many` of the
/// same.
pub struct PristineScene {
    library: ArchetypeLibrary,
    n: usize,
    json: Vec<u8>,
    binary: Vec<u8>,
    _dir: TempDir,
}

impl PristineScene {
    /// Spawns and saves the scene once.
    ///
    /// # Panics
    /// If the archetypes do not load or the save fails.
    pub fn new(n: usize) -> Self {
        let (dir, library) = library();
        let mut world = World::new();
        library
            .spawn_many(&mut world, "unit", n)
            .unwrap_or_else(|error| panic!("bench setup: {error}"));
        let json = save_json(&world, &library);
        let binary = save_scene(
            &world,
            &library,
            SceneEncoding::Binary,
            &SceneSaveOptions::default(),
        )
        .unwrap_or_else(|error| panic!("bench setup: the save failed: {error}"));
        PristineScene {
            library,
            n,
            json,
            binary,
            _dir: dir,
        }
    }

    /// Entities in the scene.
    pub fn entities(&self) -> usize {
        self.n
    }

    /// Ours: `load_scene` of the JSON scene of untouched instances.
    pub fn load(&self) -> World {
        load_into_fresh_world(&self.json, &self.library)
    }

    /// Ours: `load_scene` of the binary scene of untouched instances.
    pub fn load_binary(&self) -> World {
        load_into_fresh_world(&self.binary, &self.library)
    }

    /// Baseline: `spawn_many` of the same archetype, as many.
    pub fn spawn_many(&self) -> World {
        let mut world = World::new();
        self.library
            .spawn_many(&mut world, "unit", self.n)
            .unwrap_or_else(|error| panic!("bench: spawn_many failed: {error}"));
        world
    }
}
