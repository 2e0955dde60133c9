//! `Scenes`: the path / slice / vec entry points give what the free functions give, with the
//! options set once.

use archetool::demo::components::{registry, Follow};
use archetype_engine::{
    save_scene, ArchetypeLibrary, IdConflict, SceneEncoding, SceneLoadOptions, SceneSaveOptions,
    Scenes, StableId,
};
use hecs::World;

fn demo_library() -> ArchetypeLibrary {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../archetypes");
    ArchetypeLibrary::load(root, registry()).unwrap()
}

/// A squad: a leader and two soldiers following it (references to keep).
fn squad(library: &ArchetypeLibrary) -> World {
    let mut world = World::new();
    let leader = library.spawn(&mut world, "allies/squad_leader").unwrap();
    for _ in 0..2 {
        let soldier = library.spawn(&mut world, "allies/soldier").unwrap();
        world.get::<&mut Follow>(soldier).unwrap().leader = Some(leader.into());
    }
    world
}

fn ids(world: &World) -> Vec<StableId> {
    let mut ids: Vec<StableId> = world.query::<&StableId>().iter().copied().collect();
    ids.sort();
    ids
}

#[test]
fn paths_and_slices_round_trip_in_both_encodings() {
    let library = demo_library();
    let world = squad(&library);
    let scenes = Scenes::new(&library);
    let dir = tempfile::tempdir().unwrap();
    for (file, encoding) in [
        ("squad.scene.json", SceneEncoding::Json),
        ("squad.scene.bin", SceneEncoding::Binary),
    ] {
        let path = dir.path().join(file);
        scenes.save_to_path(&path, &world).unwrap();
        let bytes = scenes.save_to_vec(&world, encoding).unwrap();
        let options = SceneSaveOptions::default();
        assert!(bytes == save_scene(&world, &library, encoding, &options).unwrap());
        assert!(
            bytes == std::fs::read(&path).unwrap(),
            "{file}: the file holds other bytes"
        );

        let mut from_path = World::new();
        let scene = scenes.load_from_path(&path, &mut from_path).unwrap();
        assert_eq!(scene.len(), 3);
        let mut from_slice = World::new();
        scenes.load_from_slice(&bytes, &mut from_slice).unwrap();
        assert_eq!(ids(&from_path), ids(&world));
        assert_eq!(ids(&from_slice), ids(&world));
        // References survive: both soldiers follow the loaded leader.
        let followed: Vec<_> = from_slice
            .query::<&Follow>()
            .iter()
            .filter_map(|f| f.leader)
            .collect();
        assert_eq!(followed.len(), 2);
        assert!(from_slice.contains(followed[0].entity()));
    }
}

#[test]
fn slice_errors_name_the_file_only_when_told() {
    let library = demo_library();
    let scenes = Scenes::new(&library);
    let text = br#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "components": { "Helth": {} } } ] }"#;
    let mut world = World::new();
    let unnamed = scenes.load_from_slice(text, &mut world).unwrap_err();
    assert_eq!(
        unnamed.to_string(),
        "error[unknown-component]: entity 00000000000000a1: unknown component `Helth`; did you mean `Health`?"
    );
    // The place is kept though a message without a file does not show it.
    let position = unnamed.diagnostic().position.unwrap();
    assert_eq!((position.line, position.column), (1, 74));
    let named = scenes
        .load_named_slice(text, "saves/slot1.scene.json", &mut world)
        .unwrap_err();
    assert_eq!(
        named.to_string(),
        "saves/slot1.scene.json:1:74: error[unknown-component]: entity 00000000000000a1: unknown component `Helth`; did you mean `Health`?"
    );
    assert_eq!(world.len(), 0);
}

#[test]
fn options_set_once_apply_to_every_call() {
    let library = demo_library();
    let world = squad(&library);
    let mut full = SceneSaveOptions::default();
    full.full = true;
    let mut remap = SceneLoadOptions::default();
    remap.on_id_conflict = IdConflict::Remap;
    let scenes = Scenes::new(&library)
        .with_save_options(full.clone())
        .with_load_options(remap);

    let bytes = scenes.save_to_vec(&world, SceneEncoding::Json).unwrap();
    assert!(bytes == save_scene(&world, &library, SceneEncoding::Json, &full).unwrap());
    // Loading twice into one world works only because the load options remap the IDs.
    let mut copies = World::new();
    scenes.load_from_slice(&bytes, &mut copies).unwrap();
    scenes.load_from_slice(&bytes, &mut copies).unwrap();
    assert_eq!(copies.len(), 6);
    assert!(Scenes::new(&library)
        .load_from_slice(&bytes, &mut copies)
        .is_err());
}
