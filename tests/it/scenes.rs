//! Scenes: save and load entity graphs with stable IDs, archetype-relative diffs, shared
//! references, deterministic files, atomic saves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use archetool::demo::components::{registry, Door, Follow, Glyph, Health, Key, Turret};
use archetype_engine::{
    load_scene, load_scene_from_path, save_scene, save_scene_to_path, ArchetypeInstance,
    ArchetypeLibrary, Children, DanglingReferences, EntityRef, IdConflict, Name, Parent,
    SceneEncoding, SceneLoadOptions, SceneSaveError, SceneSaveOptions, Severity, StableId,
    Transform,
};
use glam::Vec3;
use hecs::{Entity, World};

fn demo_library() -> ArchetypeLibrary {
    ArchetypeLibrary::load(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../archetypes"),
        registry(),
    )
    .unwrap()
}

/// A copy of the demo archetypes in a temp dir, for tests that edit them.
fn editable_library() -> (tempfile::TempDir, ArchetypeLibrary) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../archetypes")),
        dir.path(),
    );
    let library = ArchetypeLibrary::load(dir.path(), registry()).unwrap();
    (dir, library)
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn set<T: hecs::Component>(world: &mut World, entity: Entity, value: T) {
    *world.get::<&mut T>(entity).unwrap() = value;
}

/// An arena: squads following their leader, doors and keys pointing at each other, a key
/// that points at itself, turrets (children with internal references), plain entities, and
/// runtime state that differs from the archetypes.
fn arena(library: &ArchetypeLibrary, world: &mut World, squads: usize) {
    for squad in 0..squads {
        let leader = library.spawn(world, "allies/squad_leader").unwrap();
        world.get::<&mut Transform>(leader).unwrap().translation =
            Vec3::new(squad as f32, 0.0, 1.5);
        for member in 0..4 {
            let soldier = library.spawn(world, "allies/soldier").unwrap();
            world.get::<&mut Follow>(soldier).unwrap().leader = Some(EntityRef(leader));
            world.get::<&mut Health>(soldier).unwrap().current = 10.0 - member as f32 * 0.1;
        }
        let door = library.spawn(world, "items/door").unwrap();
        let key = library.spawn(world, "items/key").unwrap();
        set(
            world,
            door,
            Door {
                key: Some(EntityRef(key)),
                open: squad % 2 == 0,
            },
        );
        set(
            world,
            key,
            Key {
                door: Some(EntityRef(door)),
            },
        );
        library.spawn(world, "structures/turret").unwrap();
        let goblin = library
            .spawn_with(
                world,
                "enemies/goblin",
                &serde_json::json!({ "Name": format!("Goblin {squad}") }),
            )
            .unwrap();
        world.get::<&mut Health>(goblin).unwrap().current = 0.3;
    }
    let lonely = library.spawn(world, "items/key").unwrap();
    set(world, lonely, Key { door: None });
    let selfish = library.spawn(world, "items/key").unwrap();
    set(
        world,
        selfish,
        Key {
            door: Some(EntityRef(selfish)),
        },
    );
    // Not from an archetype: every component is saved in full.
    world.spawn((
        StableId::generate(),
        Name("Rock".into()),
        Transform::from_translation(Vec3::new(3.25, 0.0, -1.0)),
    ));
}

/// Everything observable about a world, with references written as stable IDs, so two worlds
/// can be compared whatever their entity handles.
fn snapshot(world: &World, library: &ArchetypeLibrary) -> BTreeMap<StableId, Vec<String>> {
    let id = |entity: Entity| {
        world
            .get::<&StableId>(entity)
            .map(|id| id.to_string())
            .unwrap_or("?".into())
    };
    let reference = |r: Option<EntityRef>| r.map(|r| id(r.0)).unwrap_or("none".into());
    let mut out = BTreeMap::new();
    for (entity, stable) in world.query::<(Entity, &StableId)>().iter() {
        let mut facts = Vec::new();
        if let Ok(marker) = world.get::<&ArchetypeInstance>(entity) {
            facts.push(format!(
                "instance {} {:?}",
                library.name_of(marker.archetype).unwrap(),
                library.node_path(*marker).unwrap()
            ));
        }
        if let Ok(c) = world.get::<&Name>(entity) {
            facts.push(format!("{c:?}"));
        }
        if let Ok(c) = world.get::<&Transform>(entity) {
            facts.push(format!("{c:?}"));
        }
        if let Ok(c) = world.get::<&Health>(entity) {
            facts.push(format!("{c:?}"));
        }
        if let Ok(c) = world.get::<&Glyph>(entity) {
            facts.push(format!("{c:?}"));
        }
        if let Ok(c) = world.get::<&Follow>(entity) {
            facts.push(format!("follow {} {}", reference(c.leader), c.distance));
        }
        if let Ok(c) = world.get::<&Door>(entity) {
            facts.push(format!("door {} {}", reference(c.key), c.open));
        }
        if let Ok(c) = world.get::<&Key>(entity) {
            facts.push(format!("key {}", reference(c.door)));
        }
        if let Ok(c) = world.get::<&Turret>(entity) {
            facts.push(format!("turret {} {}", id(c.sensor.0), id(c.gun.0)));
        }
        if let Ok(c) = world.get::<&Parent>(entity) {
            facts.push(format!("parent {}", id(c.0 .0)));
        }
        if let Ok(c) = world.get::<&Children>(entity) {
            facts.push(format!(
                "children {:?}",
                c.0.iter().map(|c| id(c.0)).collect::<Vec<_>>()
            ));
        }
        out.insert(*stable, facts);
    }
    out
}

fn save_json(world: &World, library: &ArchetypeLibrary) -> String {
    String::from_utf8(
        save_scene(
            world,
            library,
            SceneEncoding::Json,
            &SceneSaveOptions::default(),
        )
        .unwrap(),
    )
    .unwrap()
}

fn save_binary(world: &World, library: &ArchetypeLibrary) -> Vec<u8> {
    save_scene(
        world,
        library,
        SceneEncoding::Binary,
        &SceneSaveOptions::default(),
    )
    .unwrap()
}

fn load(
    text: &[u8],
    world: &mut World,
    library: &ArchetypeLibrary,
) -> archetype_engine::LoadedScene {
    load_scene(
        text,
        Some(Path::new("arena.scene.json")),
        world,
        library,
        &SceneLoadOptions::default(),
    )
    .unwrap()
}

/// Loads `text` (as `arena.scene.json`) with fields a component lacks as warnings; returns the
/// scene and its warnings as printed.
fn load_warning(
    text: &str,
    world: &mut World,
    library: &ArchetypeLibrary,
) -> (archetype_engine::LoadedScene, Vec<String>) {
    let mut warn = SceneLoadOptions::default();
    warn.unknown_fields = Severity::Warning;
    let file = Some(Path::new("arena.scene.json"));
    let scene = load_scene(text.as_bytes(), file, world, library, &warn).unwrap();
    let warnings = scene.warnings().iter().map(|w| w.to_string()).collect();
    (scene, warnings)
}

fn load_err(text: &str, world: &mut World, library: &ArchetypeLibrary) -> String {
    load_scene(
        text.as_bytes(),
        Some(Path::new("arena.scene.json")),
        world,
        library,
        &SceneLoadOptions::default(),
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn json_round_trip_is_byte_identical_and_keeps_the_reference_graph() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 5);
    let saved = save_json(&world, &library);
    assert_eq!(
        saved,
        save_json(&world, &library),
        "saving is deterministic"
    );

    let mut loaded = World::new();
    let scene = load(saved.as_bytes(), &mut loaded, &library);
    assert_eq!(scene.len(), world.len() as usize);
    assert_eq!(snapshot(&loaded, &library), snapshot(&world, &library));
    assert_eq!(
        save_json(&loaded, &library),
        saved,
        "load -> save gives the same bytes"
    );
}

#[test]
fn a_hand_edited_layout_loads_the_same_world() {
    // Files the library writes are read in one pass; anything else in another way. Both must
    // build the same world: here the same document with its keys sorted, compact, and names
    // written with escapes.
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 3);
    let saved = save_json(&world, &library);
    let document: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let edited = serde_json::to_string(&document)
        .unwrap()
        .replace("\"Health\"", "\"\\u0048ealth\"");
    // Sorted keys: `archetypes` and `entities` before `format`, an entry's `id` after its other
    // keys (the first entry is a plain entity or an instance, as the random IDs fall).
    assert!(edited.starts_with("{\"archetypes\":{"), "{edited}");
    assert!(edited.contains("]},\"entities\":[{\""), "{edited}");
    assert!(edited.contains("},\"id\":\""), "{edited}");
    assert!(edited.contains("\"\\u0048ealth\":{"), "{edited}");

    let mut loaded = World::new();
    load(edited.as_bytes(), &mut loaded, &library);
    assert_eq!(snapshot(&loaded, &library), snapshot(&world, &library));
    assert_eq!(save_json(&loaded, &library), saved);
}

#[test]
fn an_entity_id_written_with_escapes_is_the_id_it_spells() {
    // `\u0030` is `0`: JSON reads the string as the 16 hex digits it spells.
    let library = demo_library();
    let text = r#"{ "format": 2, "entities": [
        { "id": "\u0030\u0030000000000000a1", "components": { "Name": "escaped" } }
    ] }"#;
    let mut world = World::new();
    let scene = load(text.as_bytes(), &mut world, &library);
    let entity = scene
        .entity(StableId(0xa1))
        .expect("the ID 00000000000000a1");
    assert_eq!(world.get::<&Name>(entity).unwrap().0, "escaped");
}

#[test]
fn the_file_is_sorted_and_stores_differences_from_archetypes() {
    let library = demo_library();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    world.get::<&mut Health>(goblin).unwrap().current = 4.5;
    let id = *world.get::<&StableId>(goblin).unwrap();
    let rock = world.spawn((StableId(1), Name("Rock".into())));
    let text = save_json(&world, &library);
    let _ = rock;
    assert_eq!(
        text,
        format!(
            r#"{{
  "format": 2,
  "entities": [
    {{
      "id": "0000000000000001",
      "components": {{
        "Name": "Rock"
      }}
    }},
    {{
      "id": "{id}",
      "archetype": "enemies/goblin",
      "components": {{
        "Health": {{
          "current": 4.5
        }}
      }}
    }}
  ]
}}
"#
        )
    );
}

#[test]
fn binary_round_trip_equals_json() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 3);
    let json = save_json(&world, &library);
    let binary = save_binary(&world, &library);
    assert!(
        binary.len() < json.len() / 2,
        "binary {} vs json {}",
        binary.len(),
        json.len()
    );
    let mut loaded = World::new();
    load_scene(
        &binary,
        None,
        &mut loaded,
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap();
    assert_eq!(snapshot(&loaded, &library), snapshot(&world, &library));
    assert_eq!(save_json(&loaded, &library), json);
    let again = save_binary(&loaded, &library);
    assert_eq!(
        again, binary,
        "re-saving the loaded world in binary changed bytes"
    );
}

/// A binary save ends with a checksum of everything before it: a single flipped bit anywhere is
/// an error naming the file, never a world with an altered value (format 2 files, which have no
/// checksum, loaded 46 of 100 random flips with altered data).
#[test]
fn every_single_bit_flip_of_a_binary_save_is_refused() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 1);
    let binary = save_binary(&world, &library);
    let file = Path::new("saves/arena.scene.bin");
    let mut checksum_errors = 0;
    for bit in 0..binary.len() * 8 {
        let mut flipped = binary.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        let mut loaded = World::new();
        let options = SceneLoadOptions::default();
        let Err(error) = load_scene(&flipped, Some(file), &mut loaded, &library, &options) else {
            panic!("bit {bit} flipped: the scene loaded");
        };
        assert_eq!(loaded.len(), 0, "bit {bit}: the failed load left entities");
        let message = error.to_string();
        assert!(message.starts_with("saves/arena.scene.bin"), "{message}");
        // Past the magic bytes and the version, it is always the checksum that says so.
        if bit / 8 > 8 {
            checksum_errors += 1;
            let offset = binary.len() - 4;
            let expected = format!("saves/arena.scene.bin (byte {offset}): error[malformed]: checksum mismatch: the file is damaged (its contents give CRC-32 ");
            assert!(message.starts_with(&expected), "bit {bit}: {message}");
        }
    }
    assert_eq!(checksum_errors, (binary.len() - 9) * 8);
}

/// A scene instance of an archetype that exists but has errors says so (it is not "unknown").
#[test]
fn an_instance_of_an_archetype_with_errors_names_the_errors_not_an_unknown_archetype() {
    let (dir, _errors, library) = crate::support::load_partial(&[
        (
            "broken.json",
            r#"{ "components": { "Health": { "current": "x" } } }"#,
        ),
        ("child.json", r#"{ "extends": "broken" }"#),
    ]);
    let scene = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "archetype": "broken" },
    { "id": "00000000000000b2", "archetype": "child" }
  ]
}"#;
    let mut world = World::new();
    let error = |text: &str, world: &mut World| load_err(text, world, &library);
    assert_eq!(
        error(scene, &mut world),
        "arena.scene.json:4:46: error[broken-dependency]: entity 00000000000000a1: archetype `broken` cannot be instantiated: its file has errors (`archetool validate` lists them)"
    );
    let child = scene.replace(r#"a1", "archetype": "broken""#, r#"a1""#);
    assert_eq!(
        error(&child, &mut world),
        "arena.scene.json:5:46: error[broken-dependency]: entity 00000000000000b2: archetype `child` cannot be instantiated: it depends on `broken`, which has errors (`archetool validate` lists them)"
    );
    assert_eq!(world.len(), 0);
    drop(dir);
}

/// A field a component does not have is an error by default (it is a typo, and a re-save would
/// drop it): in plain entities' values and in instances' patches, through the fast and careful
/// readers. As warnings, every one is listed (placed) and the scene loads.
#[test]
fn unknown_fields_are_errors_or_listed_warnings_never_silent() {
    let library = demo_library();
    let text = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "archetype": "enemies/goblin", "components": { "Health": { "curent": 1.0 } } },
    { "id": "00000000000000b2", "components": { "Follow": { "leadr": "00000000000000a1", "distance": 2.0 } } }
  ]
}"#;
    let mut world = World::new();
    assert_eq!(
        load_err(text, &mut world, &library),
        "arena.scene.json:5:61: error[unknown-field]: entity 00000000000000b2: unknown field `leadr` in component `Follow`; did you mean `leader`?"
    );
    assert_eq!(world.len(), 0);
    let (scene, warnings) = load_warning(text, &mut world, &library);
    assert_eq!(
        warnings,
        [
            "arena.scene.json:4:92: warning[unknown-field]: entity 00000000000000a1: unknown field `curent` in component `Health`; did you mean `current`?",
            "arena.scene.json:5:61: warning[unknown-field]: entity 00000000000000b2: unknown field `leadr` in component `Follow`; did you mean `leader`?",
        ]
    );
    assert_eq!(scene.len(), 2);
    let follower = scene.entity(StableId(0xb2)).unwrap();
    assert_eq!(world.get::<&Follow>(follower).unwrap().leader, None);

    // A scene without unknown fields has no warnings (the fast path's result).
    let clean = save_json(&world, &library);
    assert!(load_warning(&clean, &mut World::new(), &library)
        .1
        .is_empty());
}

/// Plain entities (not from an archetype) holding references: squad members following their
/// leader, doors and keys pointing at each other, a key pointing at itself.
fn plain_level(world: &mut World, squads: usize) {
    for squad in 0..squads {
        let leader = world.spawn((
            StableId::generate(),
            Name(format!("Leader {squad}")),
            Health {
                current: 9.5,
                max: 10.0,
            },
        ));
        for member in 0..4 {
            world.spawn((
                StableId::generate(),
                Follow {
                    leader: Some(EntityRef(leader)),
                    distance: 1.0 + member as f32,
                },
                Health {
                    current: 10.0 - member as f32 * 0.1,
                    max: 10.0,
                },
            ));
        }
        let door = world.reserve_entity();
        let key = world.spawn((
            StableId::generate(),
            Key {
                door: Some(EntityRef(door)),
            },
        ));
        let open = squad % 2 == 0;
        let door_parts = (
            StableId::generate(),
            Door {
                key: Some(EntityRef(key)),
                open,
            },
        );
        world.insert(door, door_parts).unwrap();
    }
    let selfish = world.reserve_entity();
    let key = Key {
        door: Some(EntityRef(selfish)),
    };
    world.insert(selfish, (StableId::generate(), key)).unwrap();
}

#[test]
fn a_binary_level_of_plain_entities_loads_wherever_it_is_loaded() {
    let library = demo_library();
    let mut world = World::new();
    plain_level(&mut world, 40);
    let json = save_json(&world, &library);
    let binary = save_binary(&world, &library);
    let load_binary = |into: &mut World, options: &SceneLoadOptions| {
        load_scene(&binary, None, into, &library, options).unwrap()
    };

    // Into a fresh world.
    let mut fresh = World::new();
    load_binary(&mut fresh, &SceneLoadOptions::default());
    assert_eq!(snapshot(&fresh, &library), snapshot(&world, &library));
    assert_eq!(save_json(&fresh, &library), json);

    // Into a world where a bigger level was despawned (its freed IDs outlast the scene's).
    let mut cleared = World::new();
    plain_level(&mut cleared, 100);
    let gone: Vec<Entity> = cleared.iter().map(|entity| entity.entity()).collect();
    for entity in gone {
        cleared.despawn(entity).unwrap();
    }
    load_binary(&mut cleared, &SceneLoadOptions::default());
    assert_eq!(snapshot(&cleared, &library), snapshot(&world, &library));
    assert_eq!(save_json(&cleared, &library), json);

    // Twice more into the fresh world, remapped: three copies, each following its own leaders.
    let mut remap = SceneLoadOptions::default();
    remap.on_id_conflict = IdConflict::Remap;
    let second = load_binary(&mut fresh, &remap);
    let third = load_binary(&mut fresh, &remap);
    assert_eq!(fresh.len(), 3 * world.len());
    for (original, follow) in world.query::<(&StableId, &Follow)>().iter() {
        let leader = *world.get::<&StableId>(follow.leader.unwrap().0).unwrap();
        for copy in [&second, &third] {
            let entity = copy.entity(*original).unwrap();
            let copied = fresh.get::<&Follow>(entity).unwrap().leader.unwrap();
            assert_eq!(copied.0, copy.entity(leader).unwrap());
            assert_eq!(
                *fresh.get::<&StableId>(copied.0).unwrap(),
                copy.new_id(leader).unwrap()
            );
        }
    }
}

#[test]
fn full_saves_store_every_component_and_load_the_same_world() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 2);
    let mut options = SceneSaveOptions::default();
    options.full = true;
    let full = save_scene(&world, &library, SceneEncoding::Json, &options).unwrap();
    assert!(full.len() > save_json(&world, &library).len());
    let mut loaded = World::new();
    load(&full, &mut loaded, &library);
    assert_eq!(snapshot(&loaded, &library), snapshot(&world, &library));
}

#[test]
fn loading_into_a_world_that_has_the_ids_is_an_error_unless_remapped() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 2);
    let saved = save_json(&world, &library);
    let before = snapshot(&world, &library);

    let error = load_err(&saved, &mut world, &library);
    let first_id = &saved[saved.find("\"id\": \"").unwrap() + 7..][..16];
    let line = saved
        .lines()
        .position(|l| l.contains("\"id\": \""))
        .unwrap()
        + 1;
    assert_eq!(
        error,
        format!("arena.scene.json:{line}:13: error[duplicate-key]: entity {first_id} is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs")
    );
    assert_eq!(snapshot(&world, &library), before, "the world is unchanged");

    // Remapping instantiates the scene again (twice here), with references inside each copy.
    let mut options = SceneLoadOptions::default();
    options.on_id_conflict = IdConflict::Remap;
    let copies: Vec<_> = (0..2)
        .map(|_| load_scene(saved.as_bytes(), None, &mut world, &library, &options).unwrap())
        .collect();
    assert_eq!(world.len() as usize, before.len() * 3);
    for copy in &copies {
        for &entity in copy.entities() {
            if let Ok(follow) = world.get::<&Follow>(entity) {
                let leader = follow.leader.unwrap().0;
                assert!(
                    copy.entities().contains(&leader),
                    "a copy's soldiers follow the copy's leader"
                );
            }
        }
    }
    let original_id = *world.get::<&StableId>(copies[0].entities()[0]).unwrap();
    assert_ne!(Some(original_id), copies[1].new_id(original_id));
}

#[test]
fn a_failed_load_leaves_the_world_exactly_as_it_was() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 1);
    let saved = save_json(&world, &library);
    let mut target = World::new();
    let existing = library.spawn(&mut target, "enemies/orc").unwrap();
    let before = (
        target.len(),
        target.iter().map(|e| e.entity()).collect::<Vec<_>>(),
    );

    // Break one value near the end of the file (everything before it is valid).
    let broken = saved.replacen("\"Name\": \"Rock\"", "\"Name\": [\"Rock\"]", 1);
    let at = broken.find("[\"Rock\"]").unwrap();
    let line = broken[..at].lines().count();
    let column = at - broken[..at].rfind('\n').unwrap();
    let error = load_err(&broken, &mut target, &library);
    assert!(
        error.starts_with(&format!(
            "arena.scene.json:{line}:{column}: error[invalid-component]: entity "
        )),
        "{error}"
    );
    assert!(
        error.ends_with(": `Name`: invalid type: sequence, expected a string"),
        "{error}"
    );
    assert_eq!(
        (
            target.len(),
            target.iter().map(|e| e.entity()).collect::<Vec<_>>()
        ),
        before
    );
    assert!(target.get::<&ArchetypeInstance>(existing).is_ok());
}

/// A `Follow` whose leader is no longer in `world`.
fn follow_a_despawned_entity(world: &mut World) -> Follow {
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    Follow {
        leader: Some(EntityRef(gone)),
        distance: 1.0,
    }
}

/// Saving `world` fails in each encoding, naming entity 1's dangling `Follow.leader`.
fn assert_save_names_entity_one(
    world: &World,
    library: &ArchetypeLibrary,
    encodings: &[SceneEncoding],
) {
    for encoding in encodings {
        let error = save_scene(world, library, *encoding, &SceneSaveOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("entity 0000000000000001: `Follow.leader` refers to entity"),
            "{encoding:?}: {error}"
        );
    }
}

#[test]
fn a_failed_save_names_the_entity_first_in_stable_id_order_whatever_the_storage_order() {
    let library = demo_library();
    let mut world = World::new();
    let follow = follow_a_despawned_entity(&mut world);
    // The higher ID is stored first (its hecs archetype was made first).
    world.spawn((StableId(0xff), follow.clone()));
    world.spawn((StableId(0x01), follow, Name("low".to_string())));
    assert_save_names_entity_one(
        &world,
        &library,
        &[SceneEncoding::Json, SceneEncoding::Binary],
    );
}

#[test]
fn a_failed_big_save_names_the_entity_first_in_stable_id_order_whichever_thread_wrote_it() {
    // Big enough to be written on several threads where there are several cores: the
    // failing entity with the higher ID is stored first, the one with the lower ID last.
    let library = demo_library();
    let mut world = World::new();
    let follow = follow_a_despawned_entity(&mut world);
    world.spawn((StableId(0xffff_0000), follow.clone()));
    for i in 0..9_000 {
        world.spawn((StableId(0x10_0000 + i), Name(format!("filler {i}"))));
    }
    world.spawn((StableId(0x01), follow, Name("low".to_string())));
    assert_save_names_entity_one(&world, &library, &[SceneEncoding::Json]);
}

#[test]
fn dangling_references_name_the_entity_component_and_field() {
    let library = demo_library();
    let mut world = World::new();
    let leader = library.spawn(&mut world, "allies/squad_leader").unwrap();
    let soldier = library.spawn(&mut world, "allies/soldier").unwrap();
    world.get::<&mut Follow>(soldier).unwrap().leader = Some(EntityRef(leader));
    let soldier_id = *world.get::<&StableId>(soldier).unwrap();

    let mut only_soldier = SceneSaveOptions::default();
    only_soldier.selection = Some(vec![soldier]);
    let error = save_scene(&world, &library, SceneEncoding::Json, &only_soldier).unwrap_err();
    assert!(matches!(error, SceneSaveError::DanglingReference { .. }));
    assert_eq!(
        error.to_string(),
        format!("entity {soldier_id}: `Follow.leader` refers to entity {leader:?}, which is not being saved; save it too, or write such references as null (SceneSaveOptions::dangling_references)")
    );

    let mut as_null = only_soldier.clone();
    as_null.dangling_references = DanglingReferences::WriteNull;
    let text = save_scene(&world, &library, SceneEncoding::Json, &as_null).unwrap();
    let mut loaded = World::new();
    let scene = load(&text, &mut loaded, &library);
    let loaded_soldier = scene.entity(soldier_id).unwrap();
    assert_eq!(loaded.get::<&Follow>(loaded_soldier).unwrap().leader, None);

    // A reference to an entity missing from a scene file is an error on load.
    let leader_id = *world.get::<&StableId>(leader).unwrap();
    let both = save_json(&world, &library);
    let missing = both.replace(
        &format!("\"leader\": \"{leader_id}\""),
        "\"leader\": \"00000000000000ff\"",
    );
    assert_ne!(missing, both);
    let error = load_err(&missing, &mut World::new(), &library);
    assert!(error.ends_with(&format!("error[invalid-component]: entity {soldier_id}: `Follow.leader`: refers to entity 00000000000000ff, which is not in this scene")), "{error}");
}

#[test]
fn values_json_cannot_hold_are_refused() {
    let library = demo_library();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    world.get::<&mut Health>(goblin).unwrap().current = f32::NAN;
    let id = *world.get::<&StableId>(goblin).unwrap();
    let error = save_scene(
        &world,
        &library,
        SceneEncoding::Json,
        &SceneSaveOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("entity {id}: cannot write `Health.current`: NaN cannot be written to a data file (JSON has no NaN or infinity)")
    );
}

#[test]
fn an_old_scene_picks_up_archetype_edits_except_where_it_overrides_them() {
    let (dir, mut library) = editable_library();
    let mut world = World::new();
    let plain = library.spawn(&mut world, "enemies/goblin").unwrap();
    let tough = library.spawn(&mut world, "enemies/goblin").unwrap();
    world.get::<&mut Health>(tough).unwrap().max = 50.0;
    let ids = [
        *world.get::<&StableId>(plain).unwrap(),
        *world.get::<&StableId>(tough).unwrap(),
    ];
    let saved = save_json(&world, &library);

    // A designer raises the goblin's health and speed.
    let goblin = dir.path().join("enemies/goblin.json");
    let text = std::fs::read_to_string(&goblin).unwrap();
    std::fs::write(&goblin, text.replace("\"max\": 12", "\"max\": 20")).unwrap();
    library.reload_all();
    assert_eq!(library.error_count(), 0);

    let mut loaded = World::new();
    let scene = load(saved.as_bytes(), &mut loaded, &library);
    let health = |e| (*loaded.get::<&Health>(scene.entity(e).unwrap()).unwrap()).clone();
    assert_eq!(
        health(ids[0]),
        Health {
            current: 12.0,
            max: 20.0
        }
    );
    assert_eq!(
        health(ids[1]),
        Health {
            current: 12.0,
            max: 50.0
        },
        "the scene's override wins"
    );
    assert_eq!(
        crate::support::overrides_of(&loaded, &library, scene.entity(ids[1]).unwrap()),
        Some(serde_json::json!({ "Health": { "max": true } }))
    );
}

#[test]
fn loaded_instances_are_hot_reloaded_like_spawned_ones() {
    let (dir, mut library) = editable_library();
    let mut world = World::new();
    let tough = library.spawn(&mut world, "enemies/goblin").unwrap();
    world.get::<&mut Health>(tough).unwrap().max = 50.0;
    library.spawn(&mut world, "structures/turret").unwrap();
    let saved = save_json(&world, &library);
    let mut loaded = World::new();
    let scene = load(saved.as_bytes(), &mut loaded, &library);

    let goblin = dir.path().join("enemies/goblin.json");
    let text = std::fs::read_to_string(&goblin).unwrap();
    std::fs::write(
        &goblin,
        text.replace("\"max\": 12", "\"max\": 20")
            .replace("\"current\": 12", "\"current\": 9"),
    )
    .unwrap();
    let update = library.reload_all();
    archetype_engine::apply_update(&mut loaded, &library, &update);
    let entity = scene
        .entities()
        .iter()
        .copied()
        .find(|e| loaded.get::<&Health>(*e).is_ok_and(|h| h.max == 50.0))
        .unwrap();
    assert_eq!(
        *loaded.get::<&Health>(entity).unwrap(),
        Health {
            current: 9.0,
            max: 50.0
        }
    );
}

#[test]
fn files_in_the_older_format_load() {
    let library = demo_library();
    let fixture = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/scenes/format1.scene.json"
    ));
    let mut world = World::new();
    let scene =
        load_scene_from_path(fixture, &mut world, &library, &SceneLoadOptions::default()).unwrap();
    assert_eq!(scene.len(), 3);
    let goblin = scene.entity("1a2b3c4d5e6f7a8b".parse().unwrap()).unwrap();
    assert_eq!(
        *world.get::<&Health>(goblin).unwrap(),
        Health {
            current: 5.0,
            max: 12.0
        }
    );
    let door = scene.entity("00000000000000d0".parse().unwrap()).unwrap();
    let key = scene.entity("00000000000000c0".parse().unwrap()).unwrap();
    assert_eq!(world.get::<&Door>(door).unwrap().key, Some(EntityRef(key)));
    // `MoveSpeed` is an old name of `Speed`: it loads as `Speed`.
    assert_eq!(
        world
            .get::<&archetool::demo::components::Speed>(key)
            .unwrap()
            .value,
        0.5
    );
}

#[test]
fn scene_errors_name_the_file_position_entity_and_component() {
    let library = demo_library();
    let cases = [
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"12\", \"components\": {} }\n  ]\n}\n",
            "arena.scene.json:4:13: error[malformed]: entity id `12` is not a stable ID: expected exactly 16 hex digits",
        ),
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"000000000000000a\", \"components\": { \"Helth\": {} } }\n  ]\n}\n",
            "arena.scene.json:4:49: error[unknown-component]: entity 000000000000000a: unknown component `Helth`; did you mean `Health`?",
        ),
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"000000000000000a\", \"archetype\": \"enemies/gobln\" }\n  ]\n}\n",
            "arena.scene.json:4:46: error[unknown-archetype]: entity 000000000000000a: unknown archetype `enemies/gobln`; did you mean `enemies/goblin`?",
        ),
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"000000000000000a\" },\n    { \"id\": \"000000000000000a\" }\n  ]\n}\n",
            "arena.scene.json:5:13: error[duplicate-key]: entity 000000000000000a appears twice in the scene (first on line 4)",
        ),
        (
            "{\n  \"format\": 9,\n  \"entities\": []\n}\n",
            "arena.scene.json:2:13: error[unsupported-format]: scene format 9 is newer than this library reads (up to 2); update archetype-engine",
        ),
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"000000000000000a\", \"components\": { \"Name\": 5 } }\n  ]\n}\n",
            "arena.scene.json:4:57: error[invalid-component]: entity 000000000000000a: `Name`: invalid type: integer `5`, expected a string",
        ),
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"000000000000000a\", \"name\": \"x\" }\n  ]\n}\n",
            "arena.scene.json:4:33: error[unknown-key]: unknown key `name` in an entity entry; expected one of `id`, `archetype`, `child`, `components`",
        ),
        (
            "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"000000000000000a\"\n  ]\n}\n",
            "arena.scene.json:4:31: error[syntax]: expected `,` or `}` after this value",
        ),
    ];
    for (text, expected) in cases {
        let mut world = World::new();
        assert_eq!(load_err(text, &mut world, &library), expected, "{text}");
        assert_eq!(world.len(), 0);
    }
}

#[test]
fn saving_to_a_path_is_atomic_and_leaves_no_temporary_files() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arena.scene.json");
    save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["arena.scene.json"]);

    // A failed save (the target directory is gone) leaves nothing behind and reports the path.
    let missing = dir.path().join("no/such/dir/arena.scene.json");
    let error =
        save_scene_to_path(&missing, &world, &library, &SceneSaveOptions::default()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot write `{}`: ", missing.display())),
        "{error}"
    );
}

/// The child process of `killing_a_save_midway_never_corrupts_the_previous_file`: saves a
/// large scene to the given path over and over until killed.
#[test]
#[ignore = "run as a child process by killing_a_save_midway_never_corrupts_the_previous_file"]
fn crash_child_saves_forever() {
    let Some(path) = std::env::var_os("ARCHETYPE_CRASH_CHILD_PATH") else {
        return;
    };
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 400);
    std::fs::write(PathBuf::from(&path).with_extension("ready"), b"").unwrap();
    loop {
        save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    }
}

#[test]
fn killing_a_save_midway_never_corrupts_the_previous_file() {
    let library = demo_library();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arena.scene.json");
    let mut world = World::new();
    arena(&library, &mut world, 1);
    save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    let ready = path.with_extension("ready");
    for round in 0..8 {
        let _ = std::fs::remove_file(&ready);
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "scenes::crash_child_saves_forever",
                "--ignored",
                "--nocapture",
            ])
            .env("ARCHETYPE_CRASH_CHILD_PATH", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while !ready.exists() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "child never got ready"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Kill at a different moment of the save loop each round.
        std::thread::sleep(std::time::Duration::from_millis(7 + round * 13));
        child.kill().unwrap();
        child.wait().unwrap();
        let mut loaded = World::new();
        let scene =
            load_scene_from_path(&path, &mut loaded, &library, &SceneLoadOptions::default());
        assert!(scene.is_ok(), "round {round}: {:?}", scene.err());
        // The next save cleans up the temporary file the killed process left behind.
        save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
        let leftovers: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "round {round}: {leftovers:?}");
    }
}

/// The names of the save temporaries in `dir`, sorted.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp-"))
        .collect();
    names.sort();
    names
}

/// Whether a save's temporary file is a dead one is decided by its lock, never by the process
/// ID in its name: PID 1 (the game as a container's main process) is always alive, and PIDs
/// are reused.
#[test]
fn stray_temporaries_are_judged_by_their_lock_not_their_process_id() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arena.scene.json");
    // Left by a killed save of PID 1: nobody holds it.
    let dead = ".arena.scene.json.tmp-1-00000000000000a1";
    std::fs::write(dir.path().join(dead), b"half a sce").unwrap();
    // Held by a save still running (its lock held), though no process has the PID in its name.
    let live = ".arena.scene.json.tmp-4000000000-00000000000000b2";
    let writer = std::fs::File::create(dir.path().join(live)).unwrap();
    writer.lock().unwrap();

    save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    assert_eq!(temporaries(dir.path()), [live]);
    // The writer goes (as a killed process's files close): its temporary file goes next.
    drop(writer);
    save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
    let mut loaded = World::new();
    load_scene_from_path(&path, &mut loaded, &library, &SceneLoadOptions::default()).unwrap();
}

/// Saving to a symbolic link replaces the file it points to; the link stays.
#[cfg(unix)]
#[test]
fn saving_through_a_symbolic_link_keeps_the_link() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("saves")).unwrap();
    let target = dir.path().join("saves/slot1.scene.json");
    std::fs::write(&target, b"{}").unwrap();
    let link = dir.path().join("current.scene.json");
    std::os::unix::fs::symlink("saves/slot1.scene.json", &link).unwrap();
    save_scene_to_path(&link, &world, &library, &SceneSaveOptions::default()).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let mut loaded = World::new();
    let scene =
        load_scene_from_path(&target, &mut loaded, &library, &SceneLoadOptions::default()).unwrap();
    assert_eq!(scene.len(), world.len() as usize);
    assert_eq!(temporaries(&dir.path().join("saves")), Vec::<String>::new());
    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
}

#[test]
fn a_level_of_twenty_thousand_entities_round_trips() {
    let library = demo_library();
    let mut world = World::new();
    arena(&library, &mut world, 1850);
    assert!(world.len() > 20_000, "{}", world.len());
    let saved = save_json(&world, &library);
    let mut loaded = World::new();
    load(saved.as_bytes(), &mut loaded, &library);
    assert_eq!(save_json(&loaded, &library), saved);
    assert_eq!(snapshot(&loaded, &library), snapshot(&world, &library));
    // Written on one thread, the same bytes as on every core.
    let mut one_thread = SceneSaveOptions::default();
    one_thread.max_threads = 1;
    let on_one = save_scene(&world, &library, SceneEncoding::Json, &one_thread).unwrap();
    assert!(on_one == saved.as_bytes(), "one thread wrote other bytes");
    // Binary too: written on every core, the bytes of one thread, and the same world.
    let binary = save_scene(
        &world,
        &library,
        SceneEncoding::Binary,
        &SceneSaveOptions::default(),
    )
    .unwrap();
    let binary_on_one = save_scene(&world, &library, SceneEncoding::Binary, &one_thread).unwrap();
    assert!(
        binary_on_one == binary,
        "one thread wrote other binary bytes"
    );
    let mut from_binary = World::new();
    load(&binary, &mut from_binary, &library);
    assert_eq!(save_json(&from_binary, &library), saved);
}

mod shared_data {
    use super::*;
    use archetype_engine::{ComponentRegistry, LoadOptions, Shared};
    use serde::{Deserialize, Serialize};

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct LootTable {
        gold: u32,
        items: Vec<String>,
    }

    #[derive(Clone, Debug, Serialize, Deserialize)]
    struct Loot(Shared<LootTable>);

    fn library() -> ArchetypeLibrary {
        let mut registry = ComponentRegistry::new();
        registry.register::<Loot>().unwrap();
        let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        library.set_source(
            "chest.json",
            Some(r#"{ "components": { "Loot": { "gold": 5, "items": ["rope"] } } }"#),
        );
        assert_eq!(library.diagnostics(), &[]);
        library
    }

    /// How many distinct allocations the entities' loot tables use.
    fn allocations(world: &World) -> usize {
        let mut seen: Vec<*const LootTable> = world
            .query::<&Loot>()
            .iter()
            .map(|l| std::sync::Arc::as_ptr(&l.0 .0))
            .collect();
        seen.sort();
        seen.dedup();
        seen.len()
    }

    fn world_with_two_tables() -> World {
        let mut world = World::new();
        let common = Shared::new(LootTable {
            gold: 3,
            items: vec!["apple".into(), "coin".into()],
        });
        let rare = Shared::new(LootTable {
            gold: 90,
            items: vec!["crown".into()],
        });
        for i in 0..30 {
            let loot = if i % 3 == 0 {
                rare.clone()
            } else {
                common.clone()
            };
            world.spawn((StableId(i + 1), Loot(loot)));
        }
        world
    }

    #[test]
    fn shared_values_are_written_once_and_load_back_shared() {
        let library = library();
        let world = world_with_two_tables();
        assert_eq!(allocations(&world), 2);
        let text = save_json(&world, &library);
        assert_eq!(text.matches("\"$shared\"").count(), 30);
        assert_eq!(
            text.matches("\"crown\"").count(),
            1,
            "each table is written once:\n{text}"
        );
        assert!(
            text.starts_with("{\n  \"format\": 2,\n  \"shared\": {\n    \""),
            "{text}"
        );

        let mut loaded = World::new();
        load(text.as_bytes(), &mut loaded, &library);
        assert_eq!(loaded.len(), 30);
        assert_eq!(
            allocations(&loaded),
            2,
            "loaded back shared: one allocation per table"
        );
        assert_eq!(save_json(&loaded, &library), text);
    }

    #[test]
    fn a_big_world_writes_each_shared_value_once_whichever_thread_met_it() {
        // Big enough to be written on several threads where there are several cores; the
        // rare table is met only by the last entities stored, the other only by the first.
        let library = library();
        let mut world = World::new();
        let first = Shared::new(LootTable {
            gold: 1,
            items: vec!["first".into()],
        });
        let last = Shared::new(LootTable {
            gold: 2,
            items: vec!["last".into()],
        });
        for i in 0..10_000 {
            let loot = if i < 5_000 {
                first.clone()
            } else {
                last.clone()
            };
            world.spawn((StableId(i + 1), Loot(loot)));
        }
        let text = save_json(&world, &library);
        assert_eq!(text.matches("\"$shared\"").count(), 10_000);
        for item in ["\"first\"", "\"last\""] {
            assert_eq!(text.matches(item).count(), 1, "{item} is written once");
        }
        let mut loaded = World::new();
        load(text.as_bytes(), &mut loaded, &library);
        assert_eq!(allocations(&loaded), 2);
        assert_eq!(save_json(&loaded, &library), text);
        let mut one_thread = SceneSaveOptions::default();
        one_thread.max_threads = 1;
        let on_one = save_scene(&world, &library, SceneEncoding::Json, &one_thread).unwrap();
        assert!(on_one == text.as_bytes(), "one thread wrote other bytes");
        let binary = save_binary(&world, &library);
        let on_one = save_scene(&world, &library, SceneEncoding::Binary, &one_thread).unwrap();
        assert!(on_one == binary, "one thread wrote other binary bytes");
        let mut loaded = World::new();
        load(&binary, &mut loaded, &library);
        assert_eq!(allocations(&loaded), 2);
        assert_eq!(save_json(&loaded, &library), text);
    }

    #[test]
    fn shared_values_survive_the_binary_encoding() {
        let library = library();
        let world = world_with_two_tables();
        let binary = save_binary(&world, &library);
        let mut loaded = World::new();
        load_scene(
            &binary,
            None,
            &mut loaded,
            &library,
            &SceneLoadOptions::default(),
        )
        .unwrap();
        assert_eq!(allocations(&loaded), 2);
        assert_eq!(save_json(&loaded, &library), save_json(&world, &library));
    }

    /// A field a shared value's type does not have is an error at its place in the shared
    /// table (or, as a warning, listed and skipped), in JSON and binary scenes alike.
    #[test]
    fn unknown_fields_in_shared_values_are_reported_where_they_are() {
        let library = library();
        let world = world_with_two_tables();
        let text = save_json(&world, &library).replacen("\"gold\"", "\"golld\": 0, \"gold\"", 1);
        let key_line = text.lines().position(|l| l.contains("golld")).unwrap() + 1;
        let key = &text[text.find("\"shared\": {\n    \"").unwrap() + 17..][..16];
        let message = "unknown field `golld` in `LootTable`; did you mean `gold`?";
        let mut loaded = World::new();
        assert_eq!(
            load_err(&text, &mut loaded, &library),
            format!("arena.scene.json:{key_line}:7: error[unknown-field]: shared value {key}: {message}")
        );
        assert_eq!(loaded.len(), 0);
        let (_, warnings) = load_warning(&text, &mut loaded, &library);
        assert_eq!(
            warnings,
            [format!("arena.scene.json:{key_line}:7: warning[unknown-field]: shared value {key}: {message}")]
        );
        assert_eq!(loaded.len(), 30);

        // Binary scenes keep shared values as JSON text: the same check, placed by byte.
        let binary = save_binary(&world, &library);
        // Insert a field into the first shared value (its one-byte length goes up with it).
        let value = binary.windows(8).position(|w| w == b"{\"gold\":").unwrap();
        let damaged = crate::support::edit_binary(&binary, |body| {
            body[value - 1] += 9;
            body.splice(value + 1..value + 1, b"\"gokd\":0,".iter().copied());
        });
        let error = load_scene(
            &damaged,
            None,
            &mut World::new(),
            &library,
            &SceneLoadOptions::default(),
        )
        .unwrap_err()
        .to_string();
        let key = u64::from_le_bytes(damaged[value - 9..value - 1].try_into().unwrap());
        assert_eq!(
            error,
            format!("byte {}: error[unknown-field]: shared value {key:016x}: unknown field `gokd` in `LootTable`; did you mean `gold`?", value + 1)
        );
    }

    #[test]
    fn archetype_instances_share_their_archetype_value() {
        let library = library();
        let mut world = World::new();
        library.spawn_many(&mut world, "chest", 10).unwrap();
        library.spawn(&mut world, "chest").unwrap();
        assert_eq!(
            allocations(&world),
            1,
            "spawning clones the handle, not the table"
        );
        let text = save_json(&world, &library);
        assert!(
            !text.contains("\"shared\""),
            "the archetype holds the value:\n{text}"
        );
        let mut loaded = World::new();
        load(text.as_bytes(), &mut loaded, &library);
        assert_eq!(allocations(&loaded), 1);
    }
}

/// A vector in a scene is written as an array or as an object of its axes; an instance's
/// object changes only the axes it names of its archetype's vector.
#[test]
fn scene_vectors_read_from_objects_of_axes() {
    let library = demo_library();
    let text = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "archetype": "enemies/goblin", "components": { "Transform": { "translation": { "y": 7 } } } },
    { "id": "00000000000000b2", "components": { "Transform": { "translation": { "x": 1, "y": 2, "z": 3 }, "scale": [2, 2, 2] } } }
  ]
}"#;
    let mut world = World::new();
    let scene = load(text.as_bytes(), &mut world, &library);
    let mut plain = World::new();
    let goblin = library.spawn(&mut plain, "enemies/goblin").unwrap();
    let inherited = plain.get::<&Transform>(goblin).unwrap().translation;
    let at = |id: u64| {
        *world
            .get::<&Transform>(scene.entity(StableId(id)).unwrap())
            .unwrap()
    };
    assert_eq!(
        at(0xa1).translation,
        Vec3::new(inherited.x, 7.0, inherited.z)
    );
    assert_eq!(at(0xb2).translation, Vec3::new(1.0, 2.0, 3.0));
    assert_eq!(at(0xb2).scale, Vec3::splat(2.0));

    let wrong = text.replace(r#"{ "y": 7 }"#, r#"{ "why": 7 }"#);
    assert_eq!(
        load_err(&wrong, &mut World::new(), &library),
        "arena.scene.json:4:110: error[invalid-component]: entity 00000000000000a1: `Transform.translation`: unknown axis `why`; expected x, y, z"
    );
}
