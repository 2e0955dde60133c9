//! The public scene read model: `SceneDocument` reads a scene file in
//! either encoding without a world, entries with their IDs, archetypes, children, sub-scene
//! placements and component values, and refuses a broken file as a load does, placed.

use std::path::Path;

use archetype_engine::{
    save_scene, ArchetypeLibrary, EntityRef, Name, SceneDocument, SceneEncoding, SceneSaveOptions,
    StableId,
};
use hecs::World;
use serde_json::json;

use crate::support::{ArchetypeDir, Health, Links};

fn setup() -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(&[(
        "goblin.json",
        r#"{ "components": { "Name": "goblin", "Health": { "current": 7, "max": 7 } } }"#,
    )]);
    let library = ArchetypeLibrary::load(dir.root(), crate::support::registry()).unwrap();
    (dir, library)
}

/// A world of a goblin mid-fight, a plain entity referring to it, and a pristine goblin.
fn world(library: &ArchetypeLibrary) -> World {
    let mut world = World::new();
    let hurt = library.spawn(&mut world, "goblin").unwrap();
    world.get::<&mut Health>(hurt).unwrap().current = 2.0;
    library.spawn(&mut world, "goblin").unwrap();
    world.spawn((
        StableId(0xb1),
        Name::from("banner"),
        Links {
            target: EntityRef(hurt),
            backup: None,
            all: Vec::new(),
        },
    ));
    world
}

fn read(bytes: &[u8], library: &ArchetypeLibrary) -> SceneDocument {
    SceneDocument::read(bytes, None, library).unwrap()
}

#[test]
fn json_and_binary_saves_of_one_world_read_as_the_same_entries() {
    let (_dir, library) = setup();
    let world = world(&library);
    let options = SceneSaveOptions::default();
    let json = save_scene(&world, &library, SceneEncoding::Json, &options).unwrap();
    let binary = save_scene(&world, &library, SceneEncoding::Binary, &options).unwrap();
    let (from_json, from_binary) = (read(&json, &library), read(&binary, &library));
    assert_eq!(from_json.encoding(), SceneEncoding::Json);
    assert_eq!(from_binary.encoding(), SceneEncoding::Binary);
    assert_eq!(from_json.entries(), from_binary.entries());

    // Saved in stable-ID order: the goblins' IDs are random, so entries are found by content.
    let entries = from_json.entries();
    assert_eq!(entries.len(), 3, "{}", String::from_utf8_lossy(&json));
    let goblins: Vec<_> = entries.iter().filter(|e| e.archetype.is_some()).collect();
    assert!(goblins
        .iter()
        .all(|e| e.archetype.as_deref() == Some("goblin") && e.child.is_none()));
    // An instance holds its diff from the archetype; an untouched one none.
    let mut diffs: Vec<_> = goblins.iter().map(|e| json!(e.components)).collect();
    diffs.sort_by_key(|diff| diff.to_string());
    assert_eq!(diffs, [json!({ "Health": { "current": 2.0 } }), json!({})]);
    let hurt = goblins.iter().find(|e| !e.components.is_empty()).unwrap();
    // A plain entity holds its values, its reference as the target's stable ID.
    let banner = entries.iter().find(|e| e.id == StableId(0xb1)).unwrap();
    assert_eq!(banner.archetype, None);
    assert_eq!(banner.components["Name"], "banner");
    assert_eq!(banner.components["Links"]["target"], hurt.id.to_string());
}

#[test]
fn a_scene_placing_sub_scenes_reads_with_its_placements_and_overrides() {
    let (_dir, library) = setup();
    let text = br#"{
  "format": 2,
  "meta": { "level": "cellar" },
  "entities": [
    { "id": "00000000000000c1", "scene": "rooms/armory.scene.json",
      "overrides": { "00000000000000a1": { "Name": "east guard" } } },
    { "id": "00000000000000c2", "archetype": "goblin", "child": "sword" }
  ]
}"#;
    let document = read(text, &library);
    assert_eq!(document.format(), 2);
    assert_eq!(document.meta().unwrap()["level"], "cellar");
    let [placing, child] = document.entries() else {
        panic!("two entries");
    };
    assert_eq!(placing.id, StableId(0xc1));
    assert_eq!(placing.scene.as_deref(), Some("rooms/armory.scene.json"));
    assert_eq!(
        json!(placing.overrides),
        json!({ "00000000000000a1": { "Name": "east guard" } })
    );
    assert_eq!(child.child.as_deref(), Some("sword"));
}

#[test]
fn a_format_one_scene_reads_upgraded_and_says_its_format() {
    let (_dir, library) = setup();
    let text = br#"{ "format": 1, "entities": [ { "uid": "00000000000000a1", "prefab": "goblin", "components": {} } ] }"#;
    let document = read(text, &library);
    assert_eq!(document.format(), 1);
    assert_eq!(document.entries()[0].id, StableId(0xa1));
    assert_eq!(document.entries()[0].archetype.as_deref(), Some("goblin"));
}

fn read_error(text: &str) -> String {
    let (_dir, library) = setup();
    let file = Path::new("level.scene.json");
    SceneDocument::read(text.as_bytes(), Some(file), &library)
        .unwrap_err()
        .to_string()
}

#[test]
fn a_broken_scene_is_refused_with_the_problem_placed() {
    let cases = [
        (
            "{ \"format\": 2, \"entities\": [\n  { \"id\": \"00000000000000a1\", \"archtype\": \"goblin\" }\n] }",
            "level.scene.json:2:31: error[unknown-key]: entity 0: unknown key `archtype`; did you mean `archetype`?",
        ),
        (
            "{ \"format\": 2, \"entities\": [\n  { \"id\": \"00000000000000a1\" },\n  { \"id\": \"00000000000000a1\" }\n] }",
            "level.scene.json:3:11: error[duplicate-key]: entity 00000000000000a1 appears twice in the scene (first on line 2)",
        ),
        (
            "{ \"format\": 2, \"entities\": [\n  { \"id\": \"a1\" }\n] }",
            "level.scene.json:2:11: error[malformed]: entity id `a1` is not a stable ID: expected exactly 16 hex digits",
        ),
        (
            "{ \"format\": 2, \"entities\": [\n  { \"id\": \"00000000000000a1\", \"components\": [] }\n] }",
            "level.scene.json:2:45: error[malformed]: entity 0: `components` must be an object",
        ),
        (
            "{ \"format\": 2, \"entities\": [\n  { \"id\": \"00000000000000a1\" \n] }",
            "level.scene.json:2:29: error[syntax]: expected `,` or `}` after this value",
        ),
        (
            "{ \"format\": 9, \"entities\": [] }",
            "level.scene.json:1:13: error[unsupported-format]: scene format 9 is newer than this library reads (up to 2); update archetype-engine",
        ),
    ];
    let got: Vec<String> = cases.iter().map(|(text, _)| read_error(text)).collect();
    let expected: Vec<&str> = cases.iter().map(|(_, expected)| *expected).collect();
    assert_eq!(got, expected);
}

/// A free-form value (`serde_json::Value`, a map) with a key written twice is refused as a
/// struct's duplicate field is, not read keeping the last: through the one-pass reader and the
/// careful one, at any depth.
#[test]
fn a_duplicate_key_in_a_free_form_value_is_refused_not_last_wins() {
    let (_dir, library) = setup();
    let load = |notes: &str| {
        let text = format!(
            "{{ \"format\": 2, \"entities\": [\n  {{ \"id\": \"00000000000000a1\", \"components\": {{ \"Notes\": {notes} }} }}\n] }}"
        );
        let file = Some(Path::new("level.scene.json"));
        let options = archetype_engine::SceneLoadOptions::default();
        archetype_engine::load_scene(text.as_bytes(), file, &mut World::new(), &library, &options)
            .map(|scene| scene.len())
            .map_err(|error| error.to_string())
    };
    assert_eq!(
        load(r#"{ "mood": "calm", "tags": { "a": 1, "b": 2 } }"#),
        Ok(1)
    );
    assert_eq!(
        load(r#"{ "mood": "calm", "mood": "angry" }"#),
        Err("level.scene.json:2:56: error[invalid-component]: entity 00000000000000a1: `Notes`: duplicate key `mood`".to_string())
    );
    assert_eq!(
        load(r#"{ "tags": [{ "a": 1, "a": 2 }] }"#),
        Err("level.scene.json:2:67: error[invalid-component]: entity 00000000000000a1: `Notes.tags[0]`: duplicate key `a`".to_string())
    );
    // The read model refuses it too.
    let text = "{ \"format\": 2, \"entities\": [\n  { \"id\": \"00000000000000a1\", \"components\": { \"Notes\": { \"a\": 1, \"a\": 2 } } }\n] }";
    assert_eq!(
        read_error(text),
        "level.scene.json:2:66: error[duplicate-key]: duplicate key `a` (the first one is on line 2)"
    );
}

/// `tooling::scene_without_overrides`: the scene's text with one entry's overrides taken out,
/// every other byte kept (a BOM, escapes in the ID, the other entries' layout), and each
/// refusal named.
#[test]
fn overrides_are_taken_out_of_a_scene_s_text_and_nothing_else() {
    use archetype_engine::tooling::{scene_without_overrides, SceneTextEditError};
    use archetype_engine::{FieldPath, StableId};
    let text = "\u{feff}{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"00000000000000a1\", \"archetype\": \"goblin\", \"components\": { \"Health\": { \"max\": 30 } } },\n    { \"id\": \"\\u0030\\u0030000000000000b2\", \"archetype\": \"goblin\",\n      \"components\": {\n        \"Health\": { \"current\": 3, \"max\": 30 },\n        \"Name\": \"Grukk\"\n      }\n    }\n  ]\n}\n";
    let b2: StableId = "00000000000000b2".parse().unwrap();
    let max = FieldPath::root().key("max");
    let places = [
        ("Health".to_string(), max.clone()),
        ("Name".to_string(), FieldPath::root()),
    ];
    assert_eq!(
        scene_without_overrides(text, b2, &places),
        Ok(text.replace(
            "{ \"current\": 3, \"max\": 30 },\n        \"Name\": \"Grukk\"",
            "{ \"current\": 3 }"
        ))
    );
    let missing: StableId = "00000000000000ff".parse().unwrap();
    assert_eq!(
        scene_without_overrides(text, missing, &places),
        Err(SceneTextEditError::NoEntity { id: missing })
    );
    let speed = [("Speed".to_string(), FieldPath::root())];
    let refused = scene_without_overrides(text, b2, &speed).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "entity 00000000000000b2 does not override `Speed`"
    );
    assert_eq!(
        scene_without_overrides("{ \"entities\": [", b2, &speed),
        Err(SceneTextEditError::NotJson)
    );
}
