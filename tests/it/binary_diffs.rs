//! Binary instance diffs: a binary scene writes an archetype instance's
//! changed component in binary (the value whole, the shape of its difference, the key of the
//! archetype value it was taken against), never as JSON text; it loads as the JSON scene of
//! the same world loads, also after the archetype changed. Changed instances of one-entity
//! archetypes load in column batches, in both encodings, as the careful reader builds them.

use archetype_engine::{
    load_scene, save_scene, ArchetypeLibrary, EntityRef, LoadedScene, SceneEncoding,
    SceneLoadOptions, SceneSaveOptions, StableId,
};
use hecs::{Entity, World};
use serde_json::json;

use crate::support::{overrides_of, ArchetypeDir, Health, Links};

const GOBLIN: &str = r#"{ "components": { "Health": { "current": 7, "max": 7 } } }"#;
/// A squad whose leader links to its guard child: a value holding a `#` reference.
const SQUAD: &str = r##"{
    "components": { "Links": { "target": "#guard" } },
    "children": { "guard": { "components": { "Health": { "current": 3, "max": 3 } } } }
}"##;

fn library(goblin: &str) -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(&[("goblin.json", goblin), ("squad.json", SQUAD)]);
    let library = ArchetypeLibrary::load(dir.root(), crate::support::registry()).unwrap();
    (dir, library)
}

/// A hurt goblin, a pristine one, and a squad whose leader links to another squad's guard
/// (as well as its own) and lost its guard's health.
fn mid_fight(library: &ArchetypeLibrary) -> World {
    let mut world = World::new();
    let hurt = library.spawn(&mut world, "goblin").unwrap();
    world.insert_one(hurt, StableId(0xa1)).unwrap();
    world.get::<&mut Health>(hurt).unwrap().current = 2.0;
    let pristine = library.spawn(&mut world, "goblin").unwrap();
    world.insert_one(pristine, StableId(0xa2)).unwrap();
    let other = library.spawn(&mut world, "squad").unwrap();
    let squad = library.spawn(&mut world, "squad").unwrap();
    let other_guard = crate::support::child(&world, library, other, "guard");
    world.get::<&mut Links>(squad).unwrap().backup = Some(EntityRef(other_guard));
    world.insert_one(squad, StableId(0xc1)).unwrap();
    world
}

fn save(world: &World, library: &ArchetypeLibrary, encoding: SceneEncoding) -> Vec<u8> {
    save_scene(world, library, encoding, &SceneSaveOptions::default()).unwrap()
}

fn load(bytes: &[u8], library: &ArchetypeLibrary) -> (World, LoadedScene) {
    let mut world = World::new();
    let loaded = load_scene(
        bytes,
        None,
        &mut world,
        library,
        &SceneLoadOptions::default(),
    )
    .unwrap();
    (world, loaded)
}

/// An entity's health, links (as the stable IDs they name) and override record.
fn state(
    world: &World,
    library: &ArchetypeLibrary,
    loaded: &LoadedScene,
    id: u64,
) -> (Option<Health>, String, String) {
    let entity = loaded.entity(StableId(id)).unwrap();
    let id_of = |e: Entity| world.get::<&StableId>(e).map(|id| id.to_string()).unwrap();
    let links = world.get::<&Links>(entity).ok().map(|links| {
        let backup = links.backup.map(|b| id_of(b.0));
        format!("{} {backup:?}", id_of(links.target.0))
    });
    (
        world.get::<&Health>(entity).ok().map(|h| (*h).clone()),
        format!("{links:?}"),
        format!("{:?}", overrides_of(world, library, entity)),
    )
}

#[test]
fn a_binary_save_writes_changed_instance_values_without_json_and_loads_as_json_does() {
    let (_dir, library) = library(GOBLIN);
    let world = mid_fight(&library);
    let binary = save(&world, &library, SceneEncoding::Binary);
    let json = save(&world, &library, SceneEncoding::Json);
    assert_eq!(binary[8], 4, "binary format 4");
    // The field names are in the diffs' shapes, but no JSON text is.
    for text in [&b"\"current\""[..], b"{\"", b"\"backup\""] {
        assert!(
            !binary.windows(text.len()).any(|w| w == text),
            "{}",
            String::from_utf8_lossy(text)
        );
    }
    let (from_binary, binary_scene) = load(&binary, &library);
    let (from_json, json_scene) = load(&json, &library);
    for id in [0xa1, 0xa2, 0xc1] {
        assert_eq!(
            state(&from_binary, &library, &binary_scene, id),
            state(&from_json, &library, &json_scene, id)
        );
    }
    let (health, _, overrides) = state(&from_binary, &library, &binary_scene, 0xa1);
    assert_eq!(health.unwrap().current, 2.0);
    assert_eq!(
        overrides,
        format!("{:?}", Some(json!({ "Health": { "current": true } })))
    );
    let (_, links, overrides) = state(&from_binary, &library, &binary_scene, 0xc1);
    assert!(links.contains("Some("), "the backup link survives: {links}");
    assert_eq!(
        overrides,
        format!("{:?}", Some(json!({ "Links": { "backup": true } })))
    );
    // Saved again, the loaded world writes the same bytes.
    assert_eq!(save(&from_binary, &library, SceneEncoding::Binary), binary);
}

#[test]
fn a_difference_json_cannot_see_is_no_override_in_binary_either() {
    // `-0.0` and `0.0` are one JSON number: the JSON scene records no override for a goblin
    // whose health went from one to the other, and the binary scene, which finds its diffs
    // from the bytes, records none either.
    let (_dir, library) = library(r#"{ "components": { "Health": { "current": 0, "max": 7 } } }"#);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    world.insert_one(goblin, StableId(0xa1)).unwrap();
    world.get::<&mut Health>(goblin).unwrap().current = -0.0;
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let (loaded, scene) = load(&save(&world, &library, encoding), &library);
        let (_, _, overrides) = state(&loaded, &library, &scene, 0xa1);
        assert_eq!(overrides, "None", "{encoding:?}");
    }
}

#[test]
fn a_binary_diff_follows_an_archetype_changed_since_the_save_as_a_json_patch_does() {
    let (_dir, library) = library(GOBLIN);
    let world = mid_fight(&library);
    let binary = save(&world, &library, SceneEncoding::Binary);
    let json = save(&world, &library, SceneEncoding::Json);
    // The game ships a tougher goblin: what the save did not override follows it.
    let (_new_dir, updated) =
        self::library(r#"{ "components": { "Health": { "current": 7, "max": 20 } } }"#);
    let (from_binary, binary_scene) = load(&binary, &updated);
    let (from_json, json_scene) = load(&json, &updated);
    for id in [0xa1, 0xa2, 0xc1] {
        assert_eq!(
            state(&from_binary, &updated, &binary_scene, id),
            state(&from_json, &updated, &json_scene, id)
        );
    }
    let (health, _, overrides) = state(&from_binary, &updated, &binary_scene, 0xa1);
    assert_eq!(
        health.unwrap(),
        Health {
            current: 2.0,
            max: 20.0
        }
    );
    assert_eq!(
        overrides,
        format!("{:?}", Some(json!({ "Health": { "current": true } })))
    );
    let (health, _, _) = state(&from_binary, &updated, &binary_scene, 0xa2);
    assert_eq!(
        health.unwrap(),
        Health {
            current: 7.0,
            max: 20.0
        }
    );
}

#[test]
fn a_damaged_diff_is_refused_at_its_byte() {
    let (_dir, library) = library(GOBLIN);
    let mut world = World::new();
    let hurt = library.spawn(&mut world, "goblin").unwrap();
    world.insert_one(hurt, StableId(0xa1)).unwrap();
    world.get::<&mut Health>(hurt).unwrap().current = 2.0;
    let binary = save(&world, &library, SceneEncoding::Binary);
    // The diff's one path, `current` (the last one in the file: the header's value layouts
    // name the field too): its length byte, after the leaf count and the segment count.
    let at = binary
        .windows(8)
        .rposition(|w| w == b"\x07current")
        .unwrap();
    let leaf_count = at - 2;
    assert_eq!(binary[leaf_count..at], [1, 1]);
    let damaged = crate::support::edit_binary(&binary, |body| body[leaf_count] = 0x7f);
    let error = load_scene(
        &damaged,
        None,
        &mut World::new(),
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("byte {leaf_count}: error[malformed]: diff leaf count 127 is larger than the data could hold")
    );
}

fn load_with(
    bytes: &[u8],
    library: &ArchetypeLibrary,
    world: &mut World,
    careful: bool,
) -> LoadedScene {
    let mut options = SceneLoadOptions::default();
    // `all_errors` takes the careful reader always.
    options.all_errors = careful;
    load_scene(bytes, None, world, library, &options).unwrap()
}

#[test]
fn changed_instances_load_the_same_batched_one_by_one_and_the_careful_way() {
    let (_dir, library) = library(GOBLIN);
    let mut world = mid_fight(&library);
    // More hurt goblins than one: the fast reader puts them in as one batch.
    for _ in 0..5 {
        let goblin = library.spawn(&mut world, "goblin").unwrap();
        world.get::<&mut Health>(goblin).unwrap().current = 4.0;
    }
    for encoding in [SceneEncoding::Binary, SceneEncoding::Json] {
        let saved = save(&world, &library, encoding);
        let mut batched = World::new();
        let batched_scene = load_with(&saved, &library, &mut batched, false);
        let mut careful = World::new();
        let careful_scene = load_with(&saved, &library, &mut careful, true);
        // A world whose handles were freed: the fast reader puts instances in one at a time.
        let mut reused = World::new();
        let freed: Vec<Entity> = (0..20).map(|_| reused.spawn(())).collect();
        freed.into_iter().for_each(|e| reused.despawn(e).unwrap());
        let reused_scene = load_with(&saved, &library, &mut reused, false);
        for id in [0xa1, 0xa2, 0xc1] {
            let expected = state(&careful, &library, &careful_scene, id);
            assert_eq!(
                state(&batched, &library, &batched_scene, id),
                expected,
                "{encoding:?}"
            );
            assert_eq!(
                state(&reused, &library, &reused_scene, id),
                expected,
                "{encoding:?}"
            );
        }
        // Every entity alike: the three worlds save the same scene.
        let resaved = save(&careful, &library, encoding);
        assert_eq!(save(&batched, &library, encoding), resaved, "{encoding:?}");
        assert_eq!(save(&reused, &library, encoding), resaved, "{encoding:?}");
        assert_eq!(resaved, saved, "{encoding:?}");
    }
}
