//! flecs's JSON world load on the worlds of archetool's scene benchmarks
//! (`tools/src/bench/scene.rs` and `scene_instances.rs`), `n` entities each (default 100,000).
//!
//! - Plain entities: each named (`unit_000042`: flecs identifies entities in JSON by name, as
//!   archetool's scenes do by stable ID), with a transform, health, velocity, a faction, and
//!   either loot (70%) or `Follow` plus a `(FollowsLeader, leader)` pair naming another entity
//!   (30%): flecs's way of holding a reference.
//! - Prefab instances: two prefabs, `unit` (90%) and `follower` (10%, its `(FollowsLeader, ..)`
//!   pair set per instance), every instance `(IsA, prefab)`, one in five with its own `Health`
//!   (an override). The prefabs' components are inherited (`(OnInstantiate, Inherit)`), so an
//!   instance stores only what differs, as archetool's scenes save an instance's differences
//!   from its archetype.
//!
//! Each world is written with `to_json_world` once; measured, after one unmeasured round,
//! over `ROUNDS` rounds (median): `from_json_world` of that text into a fresh world with the
//! components registered. Prints lines in the form of `archetool bench --quick`.

use std::time::{Duration, Instant};

use flecs_ecs::prelude::*;

const ROUNDS: usize = 3;

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Vec3 {
    x: f32,
    y: f32,
    z: f32,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Quat {
    x: f32,
    y: f32,
    z: f32,
    w: f32,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Transform {
    translation: Vec3,
    rotation: Quat,
    scale: Vec3,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Health {
    current: f32,
    max: f32,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Faction {
    /// 0 hostile, 1 friendly, 2 neutral.
    side: u8,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Loot {
    gold: u32,
    rarity: u8,
}

#[derive(Component, Clone, Copy, Debug, Default)]
#[flecs(meta)]
struct Follow {
    distance: f32,
}

/// The relationship whose target is the entity followed.
#[derive(Component, Clone, Copy, Debug)]
struct FollowsLeader;

/// archetool's `spread`: a deterministic spread of small numbers.
fn spread(i: usize, salt: u64, modulus: usize) -> usize {
    let x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (salt << 17);
    ((x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 33) as usize % modulus
}

/// A world with the components registered (and, for prefabs, inherited by instances).
fn new_world(inherit: bool) -> World {
    let world = World::new();
    world.component::<Vec3>();
    world.component::<Quat>();
    world.component::<FollowsLeader>();
    macro_rules! data {
        ($($ty:ty),*) => {$(
            let component = world.component::<$ty>();
            if inherit {
                component.add_trait::<(flecs::OnInstantiate, flecs::Inherit)>();
            }
        )*};
    }
    data!(Transform, Health, Velocity, Faction, Loot, Follow);
    world
}

fn transform(i: usize) -> Transform {
    let half_angle = spread(i, 3, 360) as f32 * 0.017_453_3 / 2.0;
    Transform {
        translation: Vec3 {
            x: spread(i, 1, 4000) as f32 / 8.0,
            y: 0.0,
            z: spread(i, 2, 4000) as f32 / 8.0,
        },
        rotation: Quat {
            x: 0.0,
            y: half_angle.sin(),
            z: 0.0,
            w: half_angle.cos(),
        },
        scale: Vec3 {
            x: 1.0,
            y: 1.0,
            z: 1.0,
        },
    }
}

/// The plain-entity world of archetool's `SceneFixture`.
fn plain_world(n: usize) -> World {
    let world = new_world(false);
    let entities: Vec<Entity> = (0..n)
        .map(|i| world.entity_named(&format!("unit_{i:06}")).id())
        .collect();
    let mut follower = 0;
    for (i, &id) in entities.iter().enumerate() {
        let entity = world.entity_from_id(id);
        entity
            .set(transform(i))
            .set(Health {
                current: (spread(i, 4, 100) + 1) as f32,
                max: 100.0,
            })
            .set(Velocity {
                x: spread(i, 5, 64) as f32 / 32.0 - 1.0,
                y: spread(i, 6, 64) as f32 / 32.0 - 1.0,
            })
            .set(Faction {
                side: (i % 3) as u8,
            });
        if i % 10 < 3 {
            let leader = entities[spread(follower, 8, n)];
            follower += 1;
            entity
                .set(Follow {
                    distance: 1.0 + (i % 4) as f32,
                })
                .add((FollowsLeader, leader));
        } else {
            entity.set(Loot {
                gold: spread(i, 7, 500) as u32,
                rarity: (i % 5) as u8,
            });
        }
    }
    world
}

/// The instance world of archetool's `instance_scene`: prefab instances, 10% followers, one in
/// five hurt.
fn instance_world(n: usize) -> World {
    let world = new_world(true);
    let unit = world
        .prefab_named("unit")
        .set(Faction { side: 0 })
        .set(Health {
            current: 100.0,
            max: 100.0,
        })
        .set(Loot {
            gold: 25,
            rarity: 1,
        })
        .set(Transform {
            translation: Vec3 {
                x: 4.0,
                y: 0.0,
                z: -2.5,
            },
            ..transform(0)
        })
        .set(Velocity { x: 0.5, y: -0.25 })
        .id();
    let follower = world
        .prefab_named("follower")
        .set(Faction { side: 1 })
        .set(Follow { distance: 2.0 })
        .set(Health {
            current: 80.0,
            max: 80.0,
        })
        .set(transform(1))
        .set(Velocity { x: 0.0, y: 0.0 })
        .id();
    let followers = n / 10;
    let all: Vec<Entity> = (0..n)
        .map(|i| {
            let prefab = if i < followers { follower } else { unit };
            world
                .entity_named(&format!("instance_{i:06}"))
                .is_a(prefab)
                .id()
        })
        .collect();
    for (i, &id) in all.iter().enumerate() {
        let entity = world.entity_from_id(id);
        if i < followers {
            entity.add((FollowsLeader, all[spread(i, 8, all.len())]));
        }
        if i % 5 == 0 {
            let max = if i < followers { 80.0 } else { 100.0 };
            entity.set(Health {
                current: (spread(i, 4, 60) + 1) as f32,
                max,
            });
        }
    }
    world
}

/// Entities that have `id` themselves (not through a prefab).
fn count(world: &World, id: impl IntoId) -> usize {
    world.count(id) as usize
}

/// `from_json_world` of `json` into a fresh world: (world, time).
fn load(json: &str, inherit: bool) -> (World, Duration) {
    let world = new_world(inherit);
    let start = Instant::now();
    world.from_json_world(json, None);
    let elapsed = start.elapsed();
    (world, elapsed)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    let len = times.len();
    if len % 2 == 1 {
        times[len / 2]
    } else {
        (times[len / 2 - 1] + times[len / 2]) / 2
    }
}

fn measure(name: &str, source: &World, inherit: bool, n: usize, check: impl Fn(&World)) {
    let json = source.to_json_world(None);
    let (loaded, _) = load(&json, inherit);
    check(&loaded);
    drop(loaded);
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let (world, elapsed) = load(&json, inherit);
        drop(std::hint::black_box(world));
        times.push(elapsed);
    }
    println!(
        "{name} ms={:.2} (from_json_world, bytes={}, n={n})",
        median(&mut times).as_secs_f64() * 1e3,
        json.len()
    );
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("the entity count is a number"))
        .unwrap_or(100_000);
    let plain = plain_world(n);
    measure("flecs_json_load", &plain, false, n, |world| {
        assert_eq!(count(world, Transform::id()), n, "entities lost");
        let followers = (0..n).filter(|i| i % 10 < 3).count();
        assert_eq!(count(world, Follow::id()), followers, "followers lost");
        let leaders = count(world, (FollowsLeader::id(), flecs::Wildcard::ID));
        assert_eq!(leaders, followers, "references lost");
    });
    drop(plain);
    let instances = instance_world(n);
    measure(
        "flecs_prefab_instances_json_load",
        &instances,
        true,
        n,
        |world| {
            // Instances own only their overrides and their leader.
            let hurt = (0..n).filter(|i| i % 5 == 0).count();
            assert!(count(world, Health::id()) >= hurt, "overrides lost");
            let leaders = count(world, (FollowsLeader::id(), flecs::Wildcard::ID));
            assert_eq!(leaders, n / 10, "references lost");
        },
    );
}
