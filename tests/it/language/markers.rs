//! Marker components: a unit struct (`struct Boss;`) is written `{}` in archetype files, like
//! an empty struct; `null` still removes an inherited one.

use archetype_engine::{
    load_scene, save_scene, ArchetypeLibrary, ComponentRegistry, LoadOptions, SceneEncoding,
    SceneLoadOptions, SceneSaveOptions, StableId,
};
use hecs::World;
use serde::{Deserialize, Serialize};

use crate::support::{assert_messages, ArchetypeDir, Health};

/// A unit struct: the common marker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Boss;

/// An empty struct with braces: the other form of marker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Undead {}

fn registry() -> ComponentRegistry {
    let mut registry = crate::support::registry();
    registry.register::<Boss>().unwrap();
    registry.register::<Undead>().unwrap();
    registry
}

const GOBLIN: (&str, &str) = (
    "goblin.json",
    r#"{ "components": { "Health": { "current": 5, "max": 5 }, "Boss": {}, "Undead": {} } }"#,
);

fn library(files: &[(&str, &str)]) -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(files);
    let library = ArchetypeLibrary::load(dir.root(), registry())
        .unwrap_or_else(|error| panic!("{}", dir.tidy(&error.to_string())));
    (dir, library)
}

#[test]
fn a_marker_is_written_as_an_empty_object() {
    let (_dir, library) = library(&[GOBLIN]);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    assert!(world.satisfies::<(&Boss, &Undead, &Health)>(goblin));
}

#[test]
fn null_removes_an_inherited_marker() {
    let (_dir, library) = library(&[
        GOBLIN,
        (
            "grunt.json",
            r#"{ "extends": "goblin", "components": { "Boss": null } }"#,
        ),
    ]);
    let mut world = World::new();
    let grunt = library.spawn(&mut world, "grunt").unwrap();
    assert!(!world.satisfies::<&Boss>(grunt));
    assert!(world.satisfies::<&Undead>(grunt));
}

#[test]
fn a_marker_with_anything_in_it_says_how_to_write_it() {
    let dir = ArchetypeDir::new(&[(
        "goblin.json",
        "{\n  \"components\": {\n    \"Boss\": true,\n    \"Undead\": { \"since\": 3 }\n  }\n}",
    )]);
    let error =
        ArchetypeLibrary::load_with(dir.root(), registry(), LoadOptions::default()).unwrap_err();
    let messages: Vec<String> = error
        .diagnostics()
        .iter()
        .map(|d| dir.tidy(&d.to_string()))
        .collect();
    assert_messages(
        &messages,
        &[
            "archetypes/goblin.json:3:13: error[invalid-component]: invalid value for `Boss`: invalid type: boolean `true`, expected unit struct Boss; did you mean `{}`?",
            "archetypes/goblin.json:4:17: error[unknown-field]: unknown field `since` in component `Undead`",
        ],
    );
}

#[test]
fn a_marker_gained_or_lost_at_run_time_survives_a_scene_round_trip() {
    let (_dir, library) = library(&[
        GOBLIN,
        (
            "orc.json",
            r#"{ "components": { "Health": { "current": 9, "max": 9 } } }"#,
        ),
    ]);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    let orc = library.spawn(&mut world, "orc").unwrap();
    world.remove_one::<Boss>(goblin).unwrap();
    world.insert_one(orc, Boss).unwrap();
    // A plain entity (no archetype) with a marker.
    world.spawn((
        StableId(0xb0),
        Boss,
        Health {
            current: 1.0,
            max: 1.0,
        },
    ));
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let bytes = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
        let mut loaded = World::new();
        let options = SceneLoadOptions::default();
        let scene = load_scene(&bytes, None, &mut loaded, &library, &options)
            .unwrap_or_else(|error| panic!("{error}"));
        let mut bosses: Vec<(bool, bool)> = scene
            .entities()
            .iter()
            .map(|&entity| {
                let max = loaded.get::<&Health>(entity).unwrap().max;
                (max == 9.0, loaded.satisfies::<&Boss>(entity))
            })
            .collect();
        bosses.sort();
        // The goblin lost its marker, the orc gained one, the plain entity kept its own.
        assert_eq!(
            bosses,
            [(false, false), (false, true), (true, true)],
            "{encoding:?}"
        );
    }
}
