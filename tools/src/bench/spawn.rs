//! Spawn workloads: an archetype loaded from files and spawned by name, against the same
//! component values spawned as a static tuple.

use std::fs;
use std::path::Path;

use archetype_engine::{ArchetypeInstance, ArchetypeLibrary, Name, StableId, Transform};
use hecs::{Bundle, Entity, World};
use serde_json::Value;
use tempfile::TempDir;

use crate::demo::components::{self, Faction, Glyph, Health, Speed, Velocity};

/// The archetype every spawn workload spawns.
pub const GOBLIN: &str = "enemies/goblin";

/// The six components of the realistic goblin, in the order the static baseline spawns them.
/// `Name` holds a `String`, so every clone allocates, in ours and in the baseline alike.
pub type Goblin = (Name, Transform, Health, Speed, Faction, Glyph);

/// Six plain-old-data components: the same goblin with `Velocity` instead of `Name`. Cloning is
/// a copy, so the library's own per-entity cost shows at its largest.
pub type PodGoblin = (Velocity, Transform, Health, Speed, Faction, Glyph);

/// A static six-component tuple, which the baselines spawn, and the same tuple with the two
/// components the library adds to every entity it spawns (a fresh [`StableId`] and the
/// [`ArchetypeInstance`] marker): spawning that one is the floor for any spawn by name.
pub trait SixComponents: Bundle + Clone + 'static {
    /// The tuple with a `StableId` and an `ArchetypeInstance` appended.
    type WithLibraryComponents: Bundle + 'static;

    /// A clone of the tuple with `id` and `marker` appended.
    fn with_library_components(
        &self,
        id: StableId,
        marker: ArchetypeInstance,
    ) -> Self::WithLibraryComponents;
}

impl<A, B, C, D, E, F> SixComponents for (A, B, C, D, E, F)
where
    A: Clone + Send + Sync + 'static,
    B: Clone + Send + Sync + 'static,
    C: Clone + Send + Sync + 'static,
    D: Clone + Send + Sync + 'static,
    E: Clone + Send + Sync + 'static,
    F: Clone + Send + Sync + 'static,
{
    type WithLibraryComponents = (A, B, C, D, E, F, StableId, ArchetypeInstance);

    fn with_library_components(
        &self,
        id: StableId,
        marker: ArchetypeInstance,
    ) -> Self::WithLibraryComponents {
        let (a, b, c, d, e, f) = self.clone();
        (a, b, c, d, e, f, id, marker)
    }
}

/// The common base, as a game would write it: abstract, complete values.
pub(crate) const CREATURE: &str = r#"{
  "abstract": true,
  "components": {
    "Transform": { "translation": [4.0, 0.0, -2.5], "rotation": [0, 0, 0, 1], "scale": [1, 1, 1] },
    "Health": { "current": 10, "max": 10 },
    "Speed": { "value": 1.0 },
    "Faction": "Neutral"
  }
}
"#;

const GOBLIN_FILE: &str = r#"{
  "extends": "base/creature",
  "components": {
    "Name": "Goblin",
    "Glyph": { "ch": "g", "color": "Green" },
    "Health": { "current": 12, "max": 12 },
    "Speed": { "value": 2.0 },
    "Faction": "Hostile"
  }
}
"#;

const POD_GOBLIN_FILE: &str = r#"{
  "extends": "base/creature",
  "components": {
    "Velocity": { "x": 0.5, "y": -0.25 },
    "Glyph": { "ch": "g", "color": "Green" },
    "Health": { "current": 12, "max": 12 },
    "Speed": { "value": 2.0 },
    "Faction": "Hostile"
  }
}
"#;

/// The goblin with spawn-time variation as a designer writes it: a fractional range and a pick
/// (one component each, so each has a few hundred outcomes at most, decoded once; a spawn
/// clones the goblin's template with the rolled outcomes in their places).
pub const VARIED_GOBLIN: &str = "enemies/varied_goblin";
const VARIED_GOBLIN_FILE: &str = r#"{
  "extends": "enemies/goblin",
  "components": {
    "Health": { "max": { "$range": [10, 14] } },
    "Faction": { "$pick": ["Hostile", "Neutral"] }
  }
}
"#;

/// The same two variations with more combinations (256 × 3): once more than templates were
/// kept for (one per combination, up to 512), so spawns wrote the rolled values in place. With
/// no template per combination any more it spawns as [`VARIED_GOBLIN`] does; its figure stays
/// for comparison with earlier runs.
pub const IN_PLACE_GOBLIN: &str = "enemies/in_place_goblin";
const IN_PLACE_GOBLIN_FILE: &str = r#"{
  "extends": "enemies/goblin",
  "components": {
    "Health": { "max": { "$range": [10, 14] } },
    "Faction": { "$pick": ["Hostile", "Neutral", "Friendly"] }
  }
}
"#;

/// How a varied goblin is spawned (see [`SpawnFixture::spawn_varied`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Varied {
    /// [`VARIED_GOBLIN`]: the template with the rolled outcomes in their places.
    Templates,
    /// [`IN_PLACE_GOBLIN`]: the same, with more combinations of outcomes.
    InPlace,
    /// [`DECODED_GOBLIN`]: a component decoded per spawn.
    Decoded,
}

/// The goblin with a variation whose outcomes are too many to decode once (36 glyphs × 8
/// colours in one component): every spawn decodes that component.
pub const DECODED_GOBLIN: &str = "enemies/decoded_goblin";
const DECODED_GOBLIN_FILE: &str = r#"{
  "extends": "enemies/goblin",
  "components": {
    "Glyph": {
      "ch": { "$pick": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"] },
      "color": { "$pick": ["Red", "Green", "Yellow", "Blue", "Magenta", "Cyan", "White", "Gray"] }
    }
  }
}
"#;

/// An archetype library holding [`GOBLIN`] (loaded from files in a temporary directory) and the
/// same six component values as a static tuple `B`, taken from a spawned goblin so both sides
/// spawn identical values.
///
/// Every workload spawns into the `world` it is given; the benchmarks pass a fresh
/// [`World`] per run and drop it outside the timed part.
pub struct SpawnFixture<B> {
    library: ArchetypeLibrary,
    values: B,
    marker: ArchetypeInstance,
    overrides: Value,
    _dir: TempDir,
}

impl SpawnFixture<Goblin> {
    /// The realistic goblin: `Name`, `Transform`, `Health`, `Speed`, `Faction`, `Glyph`.
    ///
    /// # Panics
    /// If the temporary files cannot be written or the archetype does not load cleanly.
    pub fn goblin() -> Self {
        Self::new(GOBLIN_FILE, |world, entity| {
            Some((
                (*world.get::<&Name>(entity).ok()?).clone(),
                *world.get::<&Transform>(entity).ok()?,
                (*world.get::<&Health>(entity).ok()?).clone(),
                (*world.get::<&Speed>(entity).ok()?).clone(),
                *world.get::<&Faction>(entity).ok()?,
                (*world.get::<&Glyph>(entity).ok()?).clone(),
            ))
        })
    }
}

impl SpawnFixture<PodGoblin> {
    /// The plain-old-data goblin: `Velocity`, `Transform`, `Health`, `Speed`, `Faction`,
    /// `Glyph`.
    ///
    /// # Panics
    /// If the temporary files cannot be written or the archetype does not load cleanly.
    pub fn pod_goblin() -> Self {
        Self::new(POD_GOBLIN_FILE, |world, entity| {
            Some((
                (*world.get::<&Velocity>(entity).ok()?).clone(),
                *world.get::<&Transform>(entity).ok()?,
                (*world.get::<&Health>(entity).ok()?).clone(),
                (*world.get::<&Speed>(entity).ok()?).clone(),
                *world.get::<&Faction>(entity).ok()?,
                (*world.get::<&Glyph>(entity).ok()?).clone(),
            ))
        })
    }
}

impl<B: SixComponents> SpawnFixture<B> {
    fn new(goblin_file: &str, values: impl FnOnce(&World, Entity) -> Option<B>) -> Self {
        let dir = tempfile::tempdir().expect("bench setup: cannot create a temporary directory");
        write(dir.path(), "base/creature.json", CREATURE);
        write(dir.path(), "enemies/goblin.json", goblin_file);
        write(dir.path(), "enemies/varied_goblin.json", VARIED_GOBLIN_FILE);
        write(
            dir.path(),
            "enemies/decoded_goblin.json",
            DECODED_GOBLIN_FILE,
        );
        write(
            dir.path(),
            "enemies/in_place_goblin.json",
            IN_PLACE_GOBLIN_FILE,
        );
        let library = ArchetypeLibrary::load(dir.path(), components::registry())
            .unwrap_or_else(|error| panic!("bench setup: the goblin does not load: {error}"));

        let mut world = World::new();
        let goblin = library
            .spawn(&mut world, GOBLIN)
            .unwrap_or_else(|error| panic!("bench setup: cannot spawn the goblin: {error}"));
        let values = values(&world, goblin)
            .expect("bench setup: the spawned goblin lacks one of the six components");
        // The six components plus the library's StableId and ArchetypeInstance, nothing else:
        // both sides of every comparison spawn the same values.
        let count = world
            .entity(goblin)
            .map(|entity| entity.component_types().count())
            .unwrap_or_default();
        assert_eq!(
            count, 8,
            "bench setup: the goblin should have 6 components plus 2 of the library's"
        );

        let marker = *world
            .get::<&ArchetypeInstance>(goblin)
            .expect("bench setup: the spawned goblin has no ArchetypeInstance");
        SpawnFixture {
            library,
            values,
            marker,
            overrides: serde_json::json!({ "Health": { "max": 50 } }),
            _dir: dir,
        }
    }

    /// The library holding [`GOBLIN`].
    pub fn library(&self) -> &ArchetypeLibrary {
        &self.library
    }

    /// The six values the static baselines spawn.
    pub fn values(&self) -> &B {
        &self.values
    }

    /// Ours: `n` times `library.spawn(world, "enemies/goblin")`.
    ///
    /// # Panics
    /// If a spawn fails (it cannot once the fixture is built).
    pub fn spawn_by_name(&self, world: &mut World, n: usize) {
        for _ in 0..n {
            self.library
                .spawn(world, GOBLIN)
                .expect("bench: spawn by name failed");
        }
    }

    /// Ours, with spawn-time variation: `n` times `library.spawn(world, name)` of a goblin
    /// with variations (`which` says which), the same eight components as the goblin, some
    /// values rolled per entity.
    ///
    /// # Panics
    /// If a spawn fails (it cannot once the fixture is built).
    pub fn spawn_varied(&self, world: &mut World, n: usize, which: Varied) {
        let name = match which {
            Varied::Templates => VARIED_GOBLIN,
            Varied::InPlace => IN_PLACE_GOBLIN,
            Varied::Decoded => DECODED_GOBLIN,
        };
        for _ in 0..n {
            self.library
                .spawn(world, name)
                .expect("bench: spawning the varied goblin failed");
        }
    }

    /// Ours, with a typed spawn parameter: `n` times
    /// `library.spawn_with_bundle(world, "enemies/goblin", (Transform::from_translation(at),))`,
    /// each at its own place.
    ///
    /// # Panics
    /// If a spawn fails (it cannot once the fixture is built).
    pub fn spawn_with_bundle(&self, world: &mut World, n: usize) {
        for i in 0..n {
            let at = glam::Vec3::new(i as f32, 0.0, 0.0);
            self.library
                .spawn_with_bundle(world, GOBLIN, (Transform::from_translation(at),))
                .expect("bench: spawn with a bundle failed");
        }
    }

    /// Baseline: `n` times `world.spawn(values.clone())`, the six values as a static tuple.
    pub fn spawn_static(&self, world: &mut World, n: usize) {
        for _ in 0..n {
            world.spawn(self.values.clone());
        }
    }

    /// Reference: `n` times `world.spawn(..)` of the six values plus a fresh `StableId` and the
    /// `ArchetypeInstance` marker as a static 8-tuple: the same entities spawn by name makes,
    /// with no dynamic typing at all.
    pub fn spawn_static_with_library_components(&self, world: &mut World, n: usize) {
        for _ in 0..n {
            world.spawn(
                self.values
                    .with_library_components(StableId::generate(), self.marker),
            );
        }
    }

    /// Ours: `library.spawn_many(world, "enemies/goblin", n)`, which returns the handles.
    ///
    /// # Panics
    /// If the spawn fails (it cannot once the fixture is built).
    pub fn spawn_many(&self, world: &mut World, n: usize) -> Vec<Entity> {
        self.library
            .spawn_many(world, GOBLIN, n)
            .expect("bench: spawn_many failed")
    }

    /// Baseline: `world.spawn_batch` of `n` static tuples, collecting the handles as
    /// [`spawn_many`](Self::spawn_many) does.
    pub fn spawn_batch(&self, world: &mut World, n: usize) -> Vec<Entity> {
        world
            .spawn_batch((0..n).map(|_| self.values.clone()))
            .collect()
    }

    /// Ours, with per-entity overrides: `n` times
    /// `library.spawn_with(world, "enemies/goblin", {"Health": {"max": 50}})`.
    ///
    /// # Panics
    /// If a spawn fails (it cannot once the fixture is built).
    pub fn spawn_with_overrides(&self, world: &mut World, n: usize) {
        for _ in 0..n {
            self.library
                .spawn_with(world, GOBLIN, &self.overrides)
                .expect("bench: spawn with overrides failed");
        }
    }
}

/// Writes `text` to `relative` under `root`, creating directories.
///
/// # Panics
/// If the file cannot be written.
pub(crate) fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|error| {
            panic!("bench setup: cannot create {}: {error}", parent.display())
        });
    }
    fs::write(&path, text)
        .unwrap_or_else(|error| panic!("bench setup: cannot write {}: {error}", path.display()));
}
