//! Bevy's scene round trip on the world of archetool's plain-entity scene benchmark
//! (`tools/src/bench/scene.rs`): `n` entities (default 100,000), each with a stable ID, a name,
//! a transform, health, velocity and a faction, and either loot (70%) or a `Follow` whose
//! `leader` refers to another entity (30%), built with the same deterministic spread.
//!
//! Measured, after one unmeasured round, over `ROUNDS` rounds (median):
//! - save: `DynamicScene::from_world` + `serialize` (RON, Bevy's pretty printer);
//! - load: deserializing that RON into a `DynamicScene` (`SceneDeserializer`), then
//!   `write_to_world` into a fresh world (entity references mapped to the new entities).
//!
//! Prints one line per figure in the form of `archetool bench --quick`:
//! `bevy_scene_ron_load ms=... (deserialize ... ms, write_to_world ... ms, bytes=..., n=...)`.

use std::time::{Duration, Instant};

use bevy_ecs::entity::{Entity, EntityHashMap};
use bevy_ecs::prelude::*;
use bevy_ecs::reflect::{AppTypeRegistry, ReflectComponent};
use bevy_reflect::Reflect;
use bevy_scene::serde::SceneDeserializer;
use bevy_scene::DynamicScene;
use serde::de::DeserializeSeed;

const ROUNDS: usize = 3;

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct StableId(u64);

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct UnitName(String);

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct Transform {
    translation: [f32; 3],
    rotation: [f32; 4],
    scale: [f32; 3],
}

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct Health {
    current: f32,
    max: f32,
}

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Component, Reflect, Clone, Copy)]
#[reflect(Component)]
enum Faction {
    Hostile,
    Friendly,
    Neutral,
}

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct Loot {
    gold: u32,
    rarity: u8,
}

#[derive(Component, Reflect, Clone)]
#[reflect(Component)]
struct Follow {
    #[entities]
    leader: Option<Entity>,
    distance: f32,
}

/// archetool's `spread`: a deterministic spread of small numbers.
fn spread(i: usize, salt: u64, modulus: usize) -> usize {
    let x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (salt << 17);
    ((x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 33) as usize % modulus
}

fn registry() -> AppTypeRegistry {
    let registry = AppTypeRegistry::default();
    {
        let mut types = registry.write();
        types.register::<StableId>();
        types.register::<UnitName>();
        types.register::<Transform>();
        types.register::<Health>();
        types.register::<Velocity>();
        types.register::<Faction>();
        types.register::<Loot>();
        types.register::<Follow>();
        types.register::<Option<Entity>>();
    }
    registry
}

/// The world of archetool's `SceneFixture`: followers first, then the others.
fn world(n: usize, registry: &AppTypeRegistry) -> World {
    const FACTIONS: [Faction; 3] = [Faction::Hostile, Faction::Friendly, Faction::Neutral];
    let mut world = World::new();
    world.insert_resource(registry.clone());
    let mut entities = Vec::with_capacity(n);
    for follows in [true, false] {
        for i in (0..n).filter(|i| (i % 10 < 3) == follows) {
            let half_angle = spread(i, 3, 360) as f32 * 0.017_453_3 / 2.0;
            let mut entity = world.spawn((
                StableId(spread(i, 9, usize::MAX) as u64),
                UnitName(format!("unit {i:06}")),
                Transform {
                    translation: [
                        spread(i, 1, 4000) as f32 / 8.0,
                        0.0,
                        spread(i, 2, 4000) as f32 / 8.0,
                    ],
                    rotation: [0.0, half_angle.sin(), 0.0, half_angle.cos()],
                    scale: [1.0, 1.0, 1.0],
                },
                Health {
                    current: (spread(i, 4, 100) + 1) as f32,
                    max: 100.0,
                },
                Velocity {
                    x: spread(i, 5, 64) as f32 / 32.0 - 1.0,
                    y: spread(i, 6, 64) as f32 / 32.0 - 1.0,
                },
                FACTIONS[i % 3],
            ));
            if follows {
                entity.insert(Follow {
                    leader: None,
                    distance: 1.0 + (i % 4) as f32,
                });
            } else {
                entity.insert(Loot {
                    gold: spread(i, 7, 500) as u32,
                    rarity: (i % 5) as u8,
                });
            }
            entities.push(entity.id());
        }
    }
    let mut query = world.query::<&mut Follow>();
    for (i, mut follow) in query.iter_mut(&mut world).enumerate() {
        follow.leader = Some(entities[spread(i, 8, n)]);
    }
    world
}

fn save(world: &World, registry: &AppTypeRegistry) -> String {
    let scene = DynamicScene::from_world(world);
    scene
        .serialize(&registry.read())
        .unwrap_or_else(|error| panic!("the scene does not serialize: {error}"))
}

/// Deserializes `ron` and writes it into a fresh world: (world, deserialize, write_to_world).
fn load(ron: &str, registry: &AppTypeRegistry) -> (World, Duration, Duration) {
    let start = Instant::now();
    let scene: DynamicScene = {
        let types = registry.read();
        let seed = SceneDeserializer {
            type_registry: &types,
        };
        let mut deserializer = ron::de::Deserializer::from_str(ron)
            .unwrap_or_else(|error| panic!("the RON does not parse: {error}"));
        seed.deserialize(&mut deserializer)
            .unwrap_or_else(|error| panic!("the scene does not deserialize: {error}"))
    };
    let deserialized = start.elapsed();
    let start = Instant::now();
    let mut world = World::new();
    world.insert_resource(registry.clone());
    scene
        .write_to_world(&mut world, &mut EntityHashMap::default())
        .unwrap_or_else(|error| panic!("the scene does not spawn: {error}"));
    (world, deserialized, start.elapsed())
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

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("the entity count is a number"))
        .unwrap_or(100_000);
    let registry = registry();
    let source = world(n, &registry);
    let ron = save(&source, &registry);

    // Checked once: every entity and every reference comes back.
    let (mut loaded, _, _) = load(&ron, &registry);
    let followers: Vec<Entity> = {
        let mut query = loaded.query::<&Follow>();
        query
            .iter(&loaded)
            .filter_map(|follow| follow.leader)
            .collect()
    };
    let ids = loaded.query::<&StableId>().iter(&loaded).count();
    assert_eq!(ids, n, "entities lost");
    assert_eq!(
        followers.len(),
        n / 10 * 3 + (n % 10).min(3),
        "references lost"
    );
    assert!(followers
        .iter()
        .all(|leader| loaded.get_entity(*leader).is_ok()));
    drop(loaded);

    let (mut saves, mut loads, mut parse, mut write) = (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let text = std::hint::black_box(save(&source, &registry));
        saves.push(start.elapsed());
        drop(text);
        let (world, deserialized, written) = load(&ron, &registry);
        drop(std::hint::black_box(world));
        loads.push(deserialized + written);
        parse.push(deserialized);
        write.push(written);
    }
    println!(
        "bevy_scene_ron_save ms={:.2} (from_world + serialize, bytes={}, n={n})",
        ms(median(&mut saves)),
        ron.len()
    );
    println!(
        "bevy_scene_ron_load ms={:.2} (deserialize {:.2} ms, write_to_world {:.2} ms, bytes={}, n={n})",
        ms(median(&mut loads)),
        ms(median(&mut parse)),
        ms(median(&mut write)),
        ron.len()
    );
}
