//! The commit of a prepared scene: the instance scene of
//! [`scene_instances`](crate::bench::scene_instances) (100,000 instances, 20% with a changed
//! field, 10% a reference), prepared once per round off the clock, its handles reserved in a
//! fresh world, its references resolved off the clock (a worker's step), then committed,
//! beside `world.spawn_batch` of the same component values (built off the clock too).

use std::time::{Duration, Instant};

use archetype_engine::{
    ArchetypeInstance, ArchetypeLibrary, Name, PrepareProgress, PreparedScene, SceneLoadOptions,
    StableId, Transform,
};
use hecs::World;

use crate::bench::scene::{Faction, Follow, Health, Loot, Velocity};
use crate::bench::scene_instances::{library as instance_library, save_json, spawn_instances};

/// An instance's components, as the scene's load gives them: `Own` is `Loot` (a unit) or
/// `Follow` (a follower).
pub type Instance<Own> = (
    Name,
    Transform,
    Health,
    Velocity,
    Faction,
    Own,
    StableId,
    ArchetypeInstance,
);
/// A unit's components.
pub type Unit = Instance<Loot>;
/// A follower's components.
pub type Follower = Instance<Follow>;
/// An untouched unit's: its marker names no overrides.
pub type Pristine = Instance<Loot>;

/// The scene's component values, by shape.
pub type Values = (Vec<Unit>, Vec<Follower>, Vec<Pristine>);

/// The instance scene saved as JSON, and its entities' component values.
pub struct CommitFixture {
    library: ArchetypeLibrary,
    json: Vec<u8>,
    units: Vec<Unit>,
    followers: Vec<Follower>,
    pristine: Vec<Pristine>,
    _dir: tempfile::TempDir,
}

impl CommitFixture {
    /// Spawns and saves the scene of `n` instances once, and takes its loaded values.
    ///
    /// # Panics
    /// If the archetypes do not load, or the scene does not save or load.
    pub fn new(n: usize) -> Self {
        let (dir, library) = instance_library();
        let mut world = World::new();
        spawn_instances(&library, &mut world, n);
        let json = save_json(&world, &library);
        let mut fixture = CommitFixture {
            library,
            json,
            units: Vec::new(),
            followers: Vec::new(),
            pristine: Vec::new(),
            _dir: dir,
        };
        let (loaded, ..) = fixture.commit(fixture.prepare());
        fixture.units = values::<Loot>(&loaded, true);
        fixture.followers = values::<Follow>(&loaded, true);
        fixture.pristine = values::<Loot>(&loaded, false);
        assert_eq!(
            fixture.entities(),
            n,
            "bench setup: the scene's entities are not all units and followers"
        );
        fixture
    }

    /// Entities in the scene.
    pub fn entities(&self) -> usize {
        self.units.len() + self.followers.len() + self.pristine.len()
    }

    /// Off the clock: the scene prepared.
    pub fn prepare(&self) -> PreparedScene {
        let options = SceneLoadOptions::default();
        PreparedScene::prepare(
            &self.json,
            None,
            &self.library,
            &options,
            &PrepareProgress::new(),
        )
        .unwrap_or_else(|error| panic!("bench: the scene does not prepare: {error}"))
    }

    /// Ours: the prepared scene's handles reserved in a fresh world, its references resolved
    /// (off the clock: a worker's step), then committed. Returns the world and the time the
    /// game thread spent: reserving, committing.
    pub fn commit(&self, prepared: PreparedScene) -> (World, Duration, Duration) {
        let mut world = World::new();
        let start = Instant::now();
        let reserved = std::hint::black_box(prepared.reserve(&mut world));
        let reserving = start.elapsed();
        let resolved = reserved.resolve();
        let start = Instant::now();
        resolved
            .commit(&mut world, &self.library)
            .unwrap_or_else(|error| panic!("bench: the scene does not commit: {error}"));
        (world, reserving, start.elapsed())
    }

    /// Off the clock: the component values, cloned.
    pub fn values(&self) -> Values {
        (
            self.units.clone(),
            self.followers.clone(),
            self.pristine.clone(),
        )
    }

    /// Baseline: `spawn_batch` of those values into a fresh world.
    pub fn spawn_batch(values: Values) -> World {
        let mut world = World::new();
        world.spawn_batch(values.0);
        world.spawn_batch(values.1);
        world.spawn_batch(values.2);
        world
    }
}

/// The values of the entities with `Own` (`Loot` or `Follow`) beside the shared components,
/// with overrides or without (`overridden`).
fn values<Own: hecs::Component + Clone>(world: &World, overridden: bool) -> Vec<Instance<Own>> {
    let mut query = world.query::<(
        &Name,
        &Transform,
        &Health,
        &Velocity,
        &Faction,
        &Own,
        &StableId,
        &ArchetypeInstance,
    )>();
    query
        .iter()
        .filter(|(.., instance)| instance.has_overrides() == overridden)
        .map(
            |(name, transform, health, velocity, faction, own, id, instance)| {
                (
                    name.clone(),
                    *transform,
                    health.clone(),
                    *velocity,
                    *faction,
                    own.clone(),
                    *id,
                    *instance,
                )
            },
        )
        .collect()
}
