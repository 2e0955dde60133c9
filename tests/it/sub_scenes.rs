//! Scenes placed inside scenes: derived stable IDs, references kept inside
//! each copy, overrides by path, parents, cycles and missing files placed in the placing file.

use std::path::Path;

use archetype_engine::{
    load_scene, load_scene_from_path, save_scene, sub_scene_id, ArchetypeLibrary, Children, Name,
    Parent, PrepareProgress, PreparedScene, SceneEncoding, SceneLoadOptions, SceneSaveOptions,
    StableId,
};
use hecs::{Entity, World};

use crate::support::{ArchetypeDir, Health, Links};

/// Two levels down: a guard (referring to its post) and the post.
const GUARD_POST: &str = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "components": { "Name": "guard", "Health": { "current": 10, "max": 10 }, "Links": { "target": "00000000000000a2" } } },
    { "id": "00000000000000a2", "components": { "Name": "post" } }
  ]
}"#;

/// One level down: a rack referring to the guard post it places, whose guard it hurts.
const ARMORY: &str = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000b1", "components": { "Name": "rack", "Links": { "target": "00000000000000b2" } } },
    { "id": "00000000000000b2", "scene": "guard_post.scene.json", "components": { "Name": "post slot" },
      "overrides": { "00000000000000a1": { "Health": { "current": 4 } } } }
  ]
}"#;

/// The level: the armory twice (the east one's inner guard renamed), and a marker pointing at
/// the east armory.
const LEVEL: &str = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000c1", "scene": "rooms/armory.scene.json", "components": { "Name": "armory east" },
      "overrides": { "00000000000000b2/00000000000000a1": { "Name": "east guard" } } },
    { "id": "00000000000000c2", "scene": "rooms/armory.scene.json", "components": { "Name": "armory west" } },
    { "id": "00000000000000c3", "components": { "Name": "marker", "Links": { "target": "00000000000000c1" } } }
  ]
}"#;

fn setup() -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(&[
        ("scenes/rooms/guard_post.scene.json", GUARD_POST),
        ("scenes/rooms/armory.scene.json", ARMORY),
        ("scenes/level.scene.json", LEVEL),
    ]);
    let library =
        ArchetypeLibrary::empty(dir.root(), crate::support::registry(), Default::default());
    (dir, library)
}

fn entity(world: &World, id: StableId) -> Entity {
    world
        .query::<(Entity, &StableId)>()
        .iter()
        .find(|(_, own)| **own == id)
        .map(|(entity, _)| entity)
        .unwrap_or_else(|| panic!("no entity {id}"))
}

fn name(world: &World, id: StableId) -> String {
    world
        .get::<&Name>(entity(world, id))
        .unwrap()
        .as_str()
        .to_string()
}

fn save(world: &World, library: &ArchetypeLibrary) -> Vec<u8> {
    save_scene(
        world,
        library,
        SceneEncoding::Json,
        &SceneSaveOptions::default(),
    )
    .unwrap()
}

#[test]
fn nested_scenes_two_levels_deep_load_with_derived_ids_references_and_overrides() {
    let (dir, library) = setup();
    let level = dir.root().join("scenes/level.scene.json");
    let mut world = World::new();
    let loaded =
        load_scene_from_path(&level, &mut world, &library, &SceneLoadOptions::default()).unwrap();
    // 3 entries, and twice the armory's 2 and its guard post's 2.
    assert_eq!(loaded.len(), 11);
    assert_eq!(world.len(), 11);
    let id = |path: &[u64]| {
        path.iter()
            .rev()
            .copied()
            .map(StableId)
            .reduce(|own, placing| sub_scene_id(placing, own))
            .unwrap()
    };
    // Overrides: the armory hurts both guards; the level renames the east one only.
    let east_guard = id(&[0xc1, 0xb2, 0xa1]);
    let west_guard = id(&[0xc2, 0xb2, 0xa1]);
    assert_eq!(name(&world, east_guard), "east guard");
    assert_eq!(name(&world, west_guard), "guard");
    for guard in [east_guard, west_guard] {
        let health = world.get::<&Health>(entity(&world, guard)).unwrap().current;
        assert_eq!(health, 4.0);
    }
    assert_eq!(loaded.entity(east_guard), Some(entity(&world, east_guard)));
    // References stay inside each copy.
    let links = |id: StableId| {
        world
            .get::<&Links>(entity(&world, id))
            .unwrap()
            .target
            .entity()
    };
    assert_eq!(links(east_guard), entity(&world, id(&[0xc1, 0xb2, 0xa2])));
    assert_eq!(links(west_guard), entity(&world, id(&[0xc2, 0xb2, 0xa2])));
    assert_eq!(links(id(&[0xc2, 0xb1])), entity(&world, id(&[0xc2, 0xb2])));
    assert_eq!(links(StableId(0xc3)), entity(&world, StableId(0xc1)));
    // The sub-scenes' roots are children of their placing entries.
    let parent = |id: StableId| world.get::<&Parent>(entity(&world, id)).unwrap().0.entity();
    assert_eq!(parent(id(&[0xc1, 0xb1])), entity(&world, StableId(0xc1)));
    assert_eq!(parent(east_guard), entity(&world, id(&[0xc1, 0xb2])));
    let children = world
        .get::<&Children>(entity(&world, StableId(0xc2)))
        .unwrap()
        .0
        .len();
    assert_eq!(children, 2);
    assert_eq!(name(&world, id(&[0xc1, 0xb2])), "post slot");
}

#[test]
fn a_nested_level_saves_and_reloads_byte_identically() {
    let (dir, library) = setup();
    let level = dir.root().join("scenes/level.scene.json");
    let options = SceneLoadOptions::default();
    let mut first = World::new();
    load_scene_from_path(&level, &mut first, &library, &options).unwrap();
    let saved = save(&first, &library);
    // Loading the nested level again gives the same IDs, so the same bytes.
    let mut again = World::new();
    load_scene_from_path(&level, &mut again, &library, &options).unwrap();
    assert!(save(&again, &library) == saved);
    // The save (flat: every entity with its derived ID) loads back to the same bytes.
    let mut reloaded = World::new();
    load_scene(&saved, None, &mut reloaded, &library, &options).unwrap();
    assert!(save(&reloaded, &library) == saved);
    // Prepared off the game thread, it commits the same world.
    let prepared =
        PreparedScene::prepare_path(&level, &library, &options, &PrepareProgress::new()).unwrap();
    let mut committed = World::new();
    assert_eq!(prepared.commit(&mut committed, &library).unwrap().len(), 11);
    assert!(save(&committed, &library) == saved);
}

fn load_error(dir: &ArchetypeDir, library: &ArchetypeLibrary, file: &str) -> String {
    let path = dir.root().join(file);
    let mut world = World::new();
    let error =
        load_scene_from_path(&path, &mut world, library, &SceneLoadOptions::default()).unwrap_err();
    assert_eq!(world.len(), 0, "the world keeps nothing of a failed load");
    tidy(dir.root(), &error.to_string())
}

fn tidy(root: &Path, message: &str) -> String {
    let root = std::fs::canonicalize(root).unwrap();
    message
        .replace(&format!("{}/", root.display()), "")
        .replace(&format!("{}/", root.display()), "")
}

#[test]
fn a_cycle_of_scenes_is_an_error_naming_it() {
    let (dir, library) = setup();
    dir.write(
        "scenes/rooms/guard_post.scene.json",
        br#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "scene": "armory.scene.json" }
  ]
}"#,
    );
    assert_eq!(
        load_error(&dir, &library, "scenes/level.scene.json"),
        "scenes/rooms/guard_post.scene.json:4:42: error[inheritance-cycle]: entity 00000000000000a1: scene cycle: scenes/rooms/armory.scene.json → scenes/rooms/guard_post.scene.json → scenes/rooms/armory.scene.json"
    );
}

#[test]
fn a_missing_sub_scene_is_an_error_placed_in_the_placing_file() {
    let (dir, library) = setup();
    dir.write(
        "scenes/level.scene.json",
        LEVEL
            .replace(
                "rooms/armory.scene.json\", \"components\": { \"Name\": \"armory west\" }",
                "rooms/amory.scene.json\", \"components\": { \"Name\": \"armory west\" }",
            )
            .as_bytes(),
    );
    assert_eq!(
        load_error(&dir, &library, "scenes/level.scene.json"),
        "scenes/level.scene.json:6:42: error[io]: entity 00000000000000c2: sub-scene `rooms/amory.scene.json` cannot be read: cannot read file: No such file or directory (os error 2)"
    );
}

#[test]
fn an_override_naming_no_entity_of_the_sub_scene_is_placed_at_its_path() {
    let (dir, library) = setup();
    dir.write(
        "scenes/level.scene.json",
        LEVEL
            .replace(
                "00000000000000b2/00000000000000a1",
                "00000000000000b2/00000000000000a9",
            )
            .as_bytes(),
    );
    assert_eq!(
        load_error(&dir, &library, "scenes/level.scene.json"),
        "scenes/level.scene.json:5:22: error[unknown-child]: entity 00000000000000c1: override `00000000000000b2/00000000000000a9` names no entity of sub-scene `rooms/armory.scene.json`"
    );
}

#[test]
fn an_override_naming_an_unknown_component_is_an_unknown_component_error_at_its_path() {
    let (dir, library) = setup();
    dir.write(
        "scenes/level.scene.json",
        LEVEL
            .replace(
                "{ \"Name\": \"east guard\" }",
                "{ \"Nmae\": \"east guard\" }",
            )
            .as_bytes(),
    );
    assert_eq!(
        load_error(&dir, &library, "scenes/level.scene.json"),
        "scenes/level.scene.json:5:22: error[unknown-component]: entity 00000000000000c1: override `00000000000000b2/00000000000000a1`: unknown component `Nmae`"
    );
}

#[test]
fn an_id_a_placement_gives_that_is_already_in_the_world_is_an_error() {
    let (dir, library) = setup();
    let mut world = World::new();
    let taken = sub_scene_id(StableId(0xc2), StableId(0xb1));
    world.spawn((taken,));
    let path = dir.root().join("scenes/level.scene.json");
    let error = load_scene_from_path(&path, &mut world, &library, &SceneLoadOptions::default())
        .unwrap_err();
    assert_eq!(
        tidy(dir.root(), &error.to_string()),
        format!("scenes/level.scene.json:6:42: error[duplicate-key]: entity 00000000000000c2: sub-scene `rooms/armory.scene.json` gives entity {taken}, which is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs")
    );
    assert_eq!(world.len(), 1);
}
