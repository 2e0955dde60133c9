//! Spawning archetypes by name: components, identities, instance markers, links, references,
//! overrides, batches and errors.

use std::collections::HashSet;

use archetype_engine::{
    load_scene, save_scene, ArchetypeInstance, ArchetypeLibrary, Children, EntityRef, Name, Parent,
    SceneEncoding, SceneLoadOptions, SceneSaveOptions, SpawnError, StableId,
};
use hecs::{Entity, World};
use serde_json::json;

use crate::support::{
    at, get, has, load, load_partial, overrides_of, ArchetypeDir, Armor, Faction, Health, Links,
    Speed,
};

const FILES: [(&str, &str); 5] = [
    (
        "base/creature.json",
        r#"{ "abstract": true, "components": { "Health": { "current": 10, "max": 10 }, "Speed": { "value": 1 }, "Faction": "Hostile" } }"#,
    ),
    (
        "enemies/goblin.json",
        r#"{ "extends": "base/creature", "components": { "Name": "Goblin", "Health": { "current": 12, "max": 12 }, "Speed": { "value": 2 } } }"#,
    ),
    (
        "parts/cannon.json",
        r#"{ "components": { "Name": "Cannon", "Armor": { "value": 9 } }, "children": { "barrel": { "components": { "Name": "Barrel" } } } }"#,
    ),
    (
        "structures/tower.json",
        r##"{
  "components": {
    "Name": "Tower",
    "Health": { "current": 50, "max": 50 },
    "Links": { "target": "#sensor", "backup": "#gun/barrel", "all": ["#", "#gun"] }
  },
  "children": {
    "sensor": { "components": { "Name": "Sensor", "Links": { "target": "#gun" } } },
    "gun": { "archetype": "parts/cannon" }
  }
}"##,
    ),
    (
        "structures/beacon.json",
        r##"{ "components": { "Name": "Beacon", "Links": { "target": "#" } } }"##,
    ),
];

fn library() -> (ArchetypeDir, ArchetypeLibrary) {
    load(&FILES)
}

/// Every entity of the world.
fn entities(world: &World) -> Vec<Entity> {
    world.iter().map(|entity| entity.entity()).collect()
}

#[test]
fn spawning_by_name_gives_the_archetypes_components() {
    let (_dir, library) = library();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(get::<Name>(&world, goblin), Name("Goblin".to_string()));
    assert_eq!(
        get::<Health>(&world, goblin),
        Health {
            current: 12.0,
            max: 12.0
        }
    );
    assert_eq!(get::<Speed>(&world, goblin), Speed { value: 2.0 });
    assert_eq!(get::<Faction>(&world, goblin), Faction::Hostile);
    assert!(!has::<Armor>(&world, goblin));
    assert!(!has::<Parent>(&world, goblin));
    assert!(!has::<Children>(&world, goblin));
    assert!(overrides_of(&world, &library, goblin).is_none());
    assert_eq!(world.len(), 1);
}

#[test]
fn every_spawned_entity_gets_a_unique_stable_id_written_as_16_hex_digits() {
    let (_dir, library) = library();
    let mut world = World::new();
    for _ in 0..3 {
        library.spawn(&mut world, "structures/tower").unwrap();
        library.spawn(&mut world, "enemies/goblin").unwrap();
    }
    library
        .spawn_many(&mut world, "enemies/goblin", 50)
        .unwrap();
    library
        .spawn_many(&mut world, "structures/tower", 5)
        .unwrap();
    let all = entities(&world);
    assert_eq!(all.len(), 3 * 4 + 3 + 50 + 5 * 4);
    let mut seen = HashSet::new();
    for entity in all {
        let id = get::<StableId>(&world, entity);
        assert!(seen.insert(id), "{id} is given twice");
        let hex = id.to_string();
        assert_eq!(hex.len(), 16, "{hex}");
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{hex}"
        );
        assert_eq!(serde_json::to_value(id).unwrap(), json!(hex));
        assert_eq!(hex.parse::<StableId>(), Ok(id));
    }
}

#[test]
fn every_spawned_entity_is_marked_with_its_archetype_and_node() {
    let (_dir, library) = library();
    let mut world = World::new();
    let tower = library.spawn(&mut world, "structures/tower").unwrap();
    let tower_id = library.id("structures/tower").unwrap();
    assert_eq!(library.name_of(tower_id), Some("structures/tower"));

    let marker = get::<ArchetypeInstance>(&world, tower);
    assert_eq!(marker.archetype, tower_id);
    assert!(marker.is_root());
    assert_eq!(library.node_path(marker), Some(""));

    // Children record the archetype they were spawned as part of, and where in it they are,
    // even a child that is itself an instance of another archetype (`gun`).
    for path in ["sensor", "gun", "gun/barrel"] {
        let entity = at(&world, &library, tower, path);
        let marker = get::<ArchetypeInstance>(&world, entity);
        assert_eq!(marker.archetype, tower_id, "{path}");
        assert!(!marker.is_root(), "{path}");
        assert_eq!(library.node_path(marker), Some(path));
        assert_eq!(library.node_id(tower_id, path), Some(marker.node));
    }

    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    let marker = get::<ArchetypeInstance>(&world, goblin);
    assert_eq!(library.name_of(marker.archetype), Some("enemies/goblin"));
    assert!(marker.is_root());
}

#[test]
fn children_are_linked_to_their_parent() {
    let (_dir, library) = library();
    let mut world = World::new();
    let tower = library.spawn(&mut world, "structures/tower").unwrap();
    let sensor = at(&world, &library, tower, "sensor");
    let gun = at(&world, &library, tower, "gun");
    let barrel = at(&world, &library, tower, "gun/barrel");
    assert_eq!(world.len(), 4);

    // Children in the archetype's order: by local name.
    assert_eq!(
        get::<Children>(&world, tower).0,
        [EntityRef(gun), EntityRef(sensor)]
    );
    assert_eq!(get::<Children>(&world, gun).0, [EntityRef(barrel)]);
    assert!(!has::<Children>(&world, sensor));
    assert!(!has::<Children>(&world, barrel));

    assert!(!has::<Parent>(&world, tower));
    assert_eq!(get::<Parent>(&world, sensor), Parent(EntityRef(tower)));
    assert_eq!(get::<Parent>(&world, gun), Parent(EntityRef(tower)));
    assert_eq!(get::<Parent>(&world, barrel), Parent(EntityRef(gun)));

    assert_eq!(get::<Name>(&world, gun), Name("Cannon".to_string()));
    assert_eq!(get::<Armor>(&world, gun), Armor { value: 9.0 });
    assert_eq!(get::<Name>(&world, barrel), Name("Barrel".to_string()));
}

#[test]
fn references_resolve_to_the_entities_of_the_same_instance() {
    let (_dir, library) = library();
    let mut world = World::new();
    let towers = [
        library.spawn(&mut world, "structures/tower").unwrap(),
        library.spawn(&mut world, "structures/tower").unwrap(),
    ];
    for tower in towers {
        let sensor = at(&world, &library, tower, "sensor");
        let gun = at(&world, &library, tower, "gun");
        let barrel = at(&world, &library, tower, "gun/barrel");
        assert_eq!(
            get::<Links>(&world, tower),
            Links {
                target: EntityRef(sensor),
                backup: Some(EntityRef(barrel)),
                all: vec![EntityRef(tower), EntityRef(gun)],
            }
        );
        assert_eq!(get::<Links>(&world, sensor).target, EntityRef(gun));
    }
}

#[test]
fn a_single_entity_can_reference_itself() {
    let (_dir, library) = library();
    let mut world = World::new();
    let beacons = library
        .spawn_many(&mut world, "structures/beacon", 3)
        .unwrap();
    let beacon = library.spawn(&mut world, "structures/beacon").unwrap();
    for entity in beacons.into_iter().chain([beacon]) {
        assert_eq!(get::<Links>(&world, entity).target, EntityRef(entity));
    }
}

// Overrides

#[test]
fn overrides_merge_into_the_archetype_for_one_entity() {
    let (_dir, library) = library();
    let mut world = World::new();
    let boss = library
        .spawn_with(
            &mut world,
            "enemies/goblin",
            &json!({ "Health": { "max": 500 }, "Name": "Grukk", "Armor": { "value": 3 } }),
        )
        .unwrap();
    assert_eq!(
        get::<Health>(&world, boss),
        Health {
            current: 12.0,
            max: 500.0
        }
    );
    assert_eq!(get::<Name>(&world, boss), Name("Grukk".to_string()));
    assert_eq!(get::<Armor>(&world, boss), Armor { value: 3.0 });
    assert_eq!(get::<Speed>(&world, boss), Speed { value: 2.0 });
    assert!(has::<StableId>(&world, boss));
    assert_eq!(
        library.node_path(get::<ArchetypeInstance>(&world, boss)),
        Some("")
    );

    // The archetype itself is unchanged.
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(get::<Health>(&world, goblin).max, 12.0);
    assert!(!has::<Armor>(&world, goblin));
}

#[test]
fn an_override_of_null_leaves_a_component_out() {
    let (_dir, library) = library();
    let mut world = World::new();
    let still = library
        .spawn_with(&mut world, "enemies/goblin", &json!({ "Speed": null }))
        .unwrap();
    assert!(!has::<Speed>(&world, still));
    assert!(has::<Health>(&world, still));
}

#[test]
fn overrides_are_recorded_in_the_instance_marker() {
    let (_dir, library) = library();
    let mut world = World::new();
    let patch = json!({ "Health": { "max": 500 }, "Speed": null });
    let boss = library
        .spawn_with(&mut world, "enemies/goblin", &patch)
        .unwrap();
    // Which places were set (the values are in the components), shared by entities alike.
    assert_eq!(
        overrides_of(&world, &library, boss).unwrap(),
        json!({ "Health": { "max": true }, "Speed": null })
    );
    let recorded = get::<ArchetypeInstance>(&world, boss);
    let twin = library
        .spawn_with(
            &mut world,
            "enemies/goblin",
            &json!({ "Health": { "max": 7 }, "Speed": null }),
        )
        .unwrap();
    let shared = get::<ArchetypeInstance>(&world, twin);
    assert!(recorded.has_overrides());
    assert_eq!(recorded.overrides, shared.overrides);
    assert!(std::sync::Arc::ptr_eq(
        &library.instance_overrides(&recorded).unwrap().0,
        &library.instance_overrides(&shared).unwrap().0
    ));
}

#[test]
fn instances_with_and_without_overrides_share_one_hecs_archetype() {
    let (_dir, library) = library();
    let mut world = World::new();
    let plain = library.spawn(&mut world, "enemies/goblin").unwrap();
    let patched = library
        .spawn_with(
            &mut world,
            "enemies/goblin",
            &json!({ "Health": { "max": 500 } }),
        )
        .unwrap();
    let bundled = library
        .spawn_with_bundle(&mut world, "enemies/goblin", (Speed { value: 3.0 },))
        .unwrap();
    assert_eq!(overrides_of(&world, &library, plain), None);
    assert_eq!(
        overrides_of(&world, &library, patched),
        Some(json!({ "Health": { "max": true } }))
    );
    assert_eq!(
        overrides_of(&world, &library, bundled),
        Some(json!({ "Speed": true }))
    );
    // The overrides are named by the marker: no component of their own, the same columns.
    let holding = |world: &World| world.archetypes().filter(|a| !a.is_empty()).count();
    assert_eq!(holding(&world), 1);
    // So are they when a scene brings them back.
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let saved = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
        let mut loaded = World::new();
        let scene = load_scene(
            &saved,
            None,
            &mut loaded,
            &library,
            &SceneLoadOptions::default(),
        )
        .unwrap();
        assert_eq!(holding(&loaded), 1, "{encoding:?}");
        for (entity, expected) in [
            (plain, None),
            (patched, Some(json!({ "Health": { "max": true } }))),
        ] {
            let id = get::<StableId>(&world, entity);
            let back = scene.entity(id).unwrap();
            assert_eq!(
                overrides_of(&loaded, &library, back),
                expected,
                "{encoding:?}"
            );
        }
    }
}

#[test]
fn overrides_apply_to_the_root_of_an_archetype_with_children() {
    let (_dir, library) = library();
    let mut world = World::new();
    let tower = library
        .spawn_with(
            &mut world,
            "structures/tower",
            &json!({ "Links": { "target": "#gun/barrel", "all": [] } }),
        )
        .unwrap();
    let sensor = at(&world, &library, tower, "sensor");
    let gun = at(&world, &library, tower, "gun");
    let barrel = at(&world, &library, tower, "gun/barrel");
    assert_eq!(
        get::<Links>(&world, tower),
        Links {
            target: EntityRef(barrel),
            backup: Some(EntityRef(barrel)),
            all: vec![],
        }
    );
    assert_eq!(get::<Links>(&world, sensor).target, EntityRef(gun));
    assert!(overrides_of(&world, &library, sensor).is_none());
    assert_eq!(world.len(), 4);
}

/// The error of spawning `goblin` with `overrides`, which must fail and spawn nothing.
#[track_caller]
fn override_error(overrides: serde_json::Value) -> SpawnError {
    let (_dir, library) = library();
    let mut world = World::new();
    let error = library
        .spawn_with(&mut world, "enemies/goblin", &overrides)
        .unwrap_err();
    assert_eq!(world.len(), 0, "a failed spawn leaves nothing behind");
    error
}

#[test]
fn an_override_naming_an_unknown_component_is_an_error_with_a_suggestion() {
    assert_eq!(
        override_error(json!({ "Helth": { "max": 500 } })).to_string(),
        "invalid overrides for `enemies/goblin`: unknown component `Helth`; did you mean `Health`?"
    );
}

#[test]
fn an_override_with_an_unknown_field_is_an_error_with_a_suggestion() {
    assert_eq!(
        override_error(json!({ "Health": { "maxx": 500 } })).to_string(),
        "invalid overrides for `enemies/goblin`: unknown field `maxx` in component `Health`; did you mean `max`?"
    );
}

#[test]
fn an_override_with_a_bad_value_names_the_component_and_field() {
    let error = override_error(json!({ "Health": { "max": "lots" } }));
    let SpawnError::InvalidOverride {
        name,
        component,
        field,
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(name, "enemies/goblin");
    assert_eq!(component.as_deref(), Some("Health"));
    assert_eq!(field.to_string(), "max");
}

#[test]
fn an_override_with_a_bad_value_says_which_field() {
    assert_eq!(
        override_error(json!({ "Health": { "max": "lots" } })).to_string(),
        r#"invalid overrides for `enemies/goblin`: invalid value for `Health.max`: invalid type: string "lots", expected f32"#
    );
}

#[test]
fn an_override_of_a_component_the_library_sets_is_an_error() {
    assert_eq!(
        override_error(json!({ "StableId": "00ab12cd34ef5678" })).to_string(),
        "invalid overrides for `enemies/goblin`: component `StableId` is set by the library when entities are spawned; remove it from the overrides"
    );
}

#[test]
fn overrides_must_be_an_object() {
    assert_eq!(
        override_error(json!([{ "Health": { "max": 1 } }])).to_string(),
        "invalid overrides for `enemies/goblin`: overrides must be an object of component name to merge patch, found an array"
    );
}

#[test]
fn an_override_with_a_bad_reference_is_rejected() {
    let (_dir, library) = library();
    let mut world = World::new();
    let error = library
        .spawn_with(
            &mut world,
            "structures/tower",
            &json!({ "Links": { "target": "#snesor" } }),
        )
        .unwrap_err();
    let SpawnError::InvalidOverride {
        component, field, ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(component.as_deref(), Some("Links"));
    assert_eq!(field.to_string(), "target");
    assert_eq!(world.len(), 0);
}

#[test]
fn an_override_with_a_bad_reference_is_an_error_with_a_suggestion() {
    let (_dir, library) = library();
    let mut world = World::new();
    let error = library
        .spawn_with(
            &mut world,
            "structures/tower",
            &json!({ "Links": { "target": "#snesor" } }),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid overrides for `structures/tower`: invalid value for `Links.target`: entity reference `#snesor` names no child of this archetype; did you mean `#sensor`?"
    );
    assert_eq!(world.len(), 0);
}

// Many at once

#[test]
fn spawn_many_spawns_count_independent_copies() {
    let (_dir, library) = library();
    let mut world = World::new();
    let goblins = library
        .spawn_many(&mut world, "enemies/goblin", 100)
        .unwrap();
    assert_eq!(goblins.len(), 100);
    assert_eq!(world.len(), 100);
    let goblin_id = library.id("enemies/goblin").unwrap();
    let mut ids = HashSet::new();
    for &goblin in &goblins {
        assert_eq!(
            get::<Health>(&world, goblin),
            Health {
                current: 12.0,
                max: 12.0
            }
        );
        assert_eq!(get::<Name>(&world, goblin), Name("Goblin".to_string()));
        let marker = get::<ArchetypeInstance>(&world, goblin);
        assert_eq!(marker.archetype, goblin_id);
        assert!(marker.is_root());
        assert!(ids.insert(get::<StableId>(&world, goblin)));
    }
    // Copies, not shared state.
    world.get::<&mut Health>(goblins[0]).unwrap().current = 1.0;
    assert_eq!(get::<Health>(&world, goblins[1]).current, 12.0);

    assert_eq!(
        library.spawn_many(&mut world, "enemies/goblin", 0).unwrap(),
        []
    );
    assert_eq!(world.len(), 100);
}

#[test]
fn spawn_many_spawns_whole_instances_of_archetypes_with_children() {
    let (_dir, library) = library();
    let mut world = World::new();
    let towers = library
        .spawn_many(&mut world, "structures/tower", 10)
        .unwrap();
    assert_eq!(towers.len(), 10);
    assert_eq!(world.len(), 40);
    let tower_id = library.id("structures/tower").unwrap();
    let mut ids = HashSet::new();
    for &tower in &towers {
        assert_eq!(
            library.node_path(get::<ArchetypeInstance>(&world, tower)),
            Some("")
        );
        let sensor = at(&world, &library, tower, "sensor");
        assert_eq!(get::<Links>(&world, tower).target, EntityRef(sensor));
        assert_eq!(get::<Parent>(&world, sensor), Parent(EntityRef(tower)));
        for path in ["", "sensor", "gun", "gun/barrel"] {
            let entity = at(&world, &library, tower, path);
            assert_eq!(get::<ArchetypeInstance>(&world, entity).archetype, tower_id);
            assert!(ids.insert(get::<StableId>(&world, entity)));
        }
    }
}

#[test]
fn ten_thousand_goblins() {
    let (_dir, library) = library();
    let mut world = World::new();
    for _ in 0..10_000 {
        library.spawn(&mut world, "enemies/goblin").unwrap();
    }
    library
        .spawn_many(&mut world, "enemies/goblin", 10_000)
        .unwrap();
    let mut ids = HashSet::new();
    let mut count = 0;
    for (health, name, id) in world.query_mut::<(&Health, &Name, &StableId)>() {
        assert_eq!(health.max, 12.0);
        assert_eq!(name.as_str(), "Goblin");
        assert!(ids.insert(*id));
        count += 1;
    }
    assert_eq!(count, 20_000);
}

// Errors

#[test]
fn an_unknown_name_is_an_error_with_a_suggestion() {
    let (_dir, library) = library();
    let mut world = World::new();
    assert_eq!(
        library
            .spawn(&mut world, "enemies/goblni")
            .unwrap_err()
            .to_string(),
        "unknown archetype `enemies/goblni`; did you mean `enemies/goblin`?"
    );
    assert_eq!(
        library.spawn(&mut world, "dragon").unwrap_err(),
        SpawnError::UnknownArchetype {
            name: "dragon".to_string(),
            suggestion: None
        }
    );
    assert_eq!(
        library.spawn(&mut world, "dragon").unwrap_err().to_string(),
        "unknown archetype `dragon`"
    );
    assert_eq!(
        library
            .spawn_many(&mut world, "Enemies/Goblin", 2)
            .unwrap_err()
            .to_string(),
        "unknown archetype `Enemies/Goblin`; did you mean `enemies/goblin`?"
    );
    assert_eq!(world.len(), 0);
}

#[test]
fn a_name_written_as_a_file_name_gets_a_suggestion() {
    let (_dir, library) = library();
    assert_eq!(
        library
            .spawn(&mut World::new(), "enemies/goblin.json")
            .unwrap_err()
            .to_string(),
        "unknown archetype `enemies/goblin.json`; did you mean `enemies/goblin`?"
    );
}

#[test]
fn an_abstract_archetype_cannot_be_spawned() {
    let (_dir, library) = library();
    let mut world = World::new();
    let expected = "archetype `base/creature` is abstract; spawn an archetype that extends it";
    assert_eq!(
        library
            .spawn(&mut world, "base/creature")
            .unwrap_err()
            .to_string(),
        expected
    );
    assert_eq!(
        library
            .spawn_with(&mut world, "base/creature", &json!({}))
            .unwrap_err()
            .to_string(),
        expected
    );
    assert_eq!(
        library
            .spawn_many(&mut world, "base/creature", 3)
            .unwrap_err()
            .to_string(),
        expected
    );
    assert_eq!(world.len(), 0);
}

#[test]
fn an_archetype_whose_file_is_broken_cannot_be_spawned() {
    let mut files = FILES.to_vec();
    files.push((
        "enemies/troll.json",
        r#"{ "extends": "base/creature", "components": { "Health": { "max": "big" } } }"#,
    ));
    let (_dir, messages, library) = load_partial(&files);
    assert_eq!(messages.len(), 1, "{messages:?}");
    let mut world = World::new();
    let expected = "archetype `enemies/troll` cannot be spawned: its file has errors";
    assert_eq!(
        library
            .spawn(&mut world, "enemies/troll")
            .unwrap_err()
            .to_string(),
        expected
    );
    assert_eq!(
        library
            .spawn_with(
                &mut world,
                "enemies/troll",
                &json!({ "Health": { "max": 1 } })
            )
            .unwrap_err()
            .to_string(),
        expected
    );
    assert_eq!(
        library
            .spawn_many(&mut world, "enemies/troll", 2)
            .unwrap_err()
            .to_string(),
        expected
    );
    assert_eq!(world.len(), 0);
    // The rest of the library still spawns.
    library.spawn(&mut world, "enemies/goblin").unwrap();
}

#[test]
fn spawning_never_reads_the_files_again() {
    let (dir, library) = library();
    std::fs::remove_dir_all(dir.root().join("enemies")).unwrap();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(get::<Name>(&world, goblin), Name("Goblin".to_string()));
}

/// Typed spawn parameters: components of the caller's replace or add to the archetype's,
/// recorded as overrides (hot reload leaves them, scenes save them).
#[test]
fn spawn_with_bundle_sets_typed_components_that_hot_reload_leaves_and_scenes_save() {
    let (_dir, mut library) = load(&[(
        "goblin.json",
        r#"{ "components": { "Health": { "current": 10, "max": 10 }, "Speed": { "value": 2 } } }"#,
    )]);
    let mut world = World::new();
    let goblin = library
        .spawn_with_bundle(
            &mut world,
            "goblin",
            (Speed { value: 9.0 }, Armor { value: 2.0 }),
        )
        .unwrap();
    let plain = library.spawn(&mut world, "goblin").unwrap();
    // A bundle of components the archetype has: spawned from a template made for its type.
    let fast = library
        .spawn_with_bundle(&mut world, "goblin", (Speed { value: 7.0 },))
        .unwrap();
    assert_eq!(get::<Speed>(&world, fast).value, 7.0);
    assert_eq!(get::<Health>(&world, fast).max, 10.0);
    assert_eq!(
        overrides_of(&world, &library, fast).unwrap(),
        json!({ "Speed": true })
    );
    assert!(has::<ArchetypeInstance>(&world, fast));
    assert_ne!(
        get::<StableId>(&world, fast),
        get::<StableId>(&world, plain)
    );
    assert_eq!(get::<Speed>(&world, goblin).value, 9.0);
    assert_eq!(get::<Armor>(&world, goblin).value, 2.0);
    assert_eq!(
        overrides_of(&world, &library, goblin).unwrap(),
        json!({ "Armor": true, "Speed": true })
    );
    // The archetype's speed and health change: the plain goblin takes both, the other keeps
    // the speed it was given.
    let update = library.set_source(
        "goblin.json",
        Some(r#"{ "components": { "Health": { "current": 10, "max": 20 }, "Speed": { "value": 3 } } }"#),
    );
    let report = archetype_engine::apply_update(&mut world, &library, &update);
    assert!(report.errors().is_empty(), "{report}");
    assert_eq!(get::<Speed>(&world, plain).value, 3.0);
    assert_eq!(get::<Speed>(&world, goblin).value, 9.0);
    assert_eq!(get::<Health>(&world, goblin).max, 20.0);
    assert_eq!(get::<Speed>(&world, fast).value, 7.0);
    assert_eq!(get::<Health>(&world, fast).max, 20.0);
    // The template follows the archetype's new version.
    let later = library
        .spawn_with_bundle(&mut world, "goblin", (Speed { value: 5.0 },))
        .unwrap();
    assert_eq!(get::<Speed>(&world, later).value, 5.0);
    assert_eq!(get::<Health>(&world, later).max, 20.0);
    // Saved as the instance's differences, loaded back as they were.
    let id = get::<StableId>(&world, goblin);
    let mut options = archetype_engine::SceneSaveOptions::default();
    options.selection = Some(vec![goblin]);
    let bytes = archetype_engine::save_scene(
        &world,
        &library,
        archetype_engine::SceneEncoding::Json,
        &options,
    )
    .unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.contains("\"Armor\": {\n          \"value\": 2.0\n        }"),
        "{text}"
    );
    let mut loaded = World::new();
    let scene = archetype_engine::load_scene(
        &bytes,
        None,
        &mut loaded,
        &library,
        &archetype_engine::SceneLoadOptions::default(),
    )
    .unwrap();
    let entity = scene.entity(id).unwrap();
    assert_eq!(get::<Speed>(&loaded, entity).value, 9.0);
    assert_eq!(get::<Armor>(&loaded, entity).value, 2.0);
    // An unknown archetype is the same error as for `spawn`.
    let error = library
        .spawn_with_bundle(&mut world, "gobin", (Speed { value: 1.0 },))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown archetype `gobin`; did you mean `goblin`?"
    );
}

#[test]
fn spawn_with_bundle_takes_bundles_whose_types_change_between_values() {
    let (_dir, library) = load(&[(
        "goblin.json",
        r#"{ "components": { "Health": { "current": 10, "max": 10 }, "Speed": { "value": 2 } } }"#,
    )]);
    let mut world = World::new();
    // One bundle type, `&'static BuiltEntityClone`, holding other components in each value:
    // the template made for the first value's types does not serve the second.
    let mut first = hecs::EntityBuilderClone::new();
    first.add(Speed { value: 9.0 });
    let first: &'static _ = Box::leak(Box::new(first.build()));
    let mut second = hecs::EntityBuilderClone::new();
    second.add(Armor { value: 3.0 });
    let second: &'static _ = Box::leak(Box::new(second.build()));
    let fast = library
        .spawn_with_bundle(&mut world, "goblin", first)
        .unwrap();
    let other = library
        .spawn_with_bundle(&mut world, "goblin", second)
        .unwrap();
    let again = library
        .spawn_with_bundle(&mut world, "goblin", first)
        .unwrap();
    for entity in [fast, again] {
        assert_eq!(get::<Speed>(&world, entity).value, 9.0);
        assert!(!has::<Armor>(&world, entity));
        assert_eq!(
            overrides_of(&world, &library, entity).unwrap(),
            json!({ "Speed": true })
        );
    }
    assert_eq!(get::<Speed>(&world, other).value, 2.0);
    assert_eq!(get::<Armor>(&world, other).value, 3.0);
    assert_eq!(
        overrides_of(&world, &library, other).unwrap(),
        json!({ "Armor": true })
    );
    let ids: HashSet<StableId> = [fast, other, again]
        .iter()
        .map(|&entity| get::<StableId>(&world, entity))
        .collect();
    assert_eq!(ids.len(), 3);
}

#[test]
fn spawning_the_same_name_again_follows_deletes_and_new_versions() {
    let (_dir, mut library) = library();
    let mut world = World::new();
    let first = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(get::<Health>(&world, first).max, 12.0);
    let update = library.set_source(
        "enemies/goblin.json",
        Some(r#"{ "extends": "base/creature", "components": { "Name": "Goblin", "Health": { "current": 20, "max": 20 } } }"#),
    );
    archetype_engine::apply_update(&mut world, &library, &update);
    let second = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(get::<Health>(&world, second).max, 20.0);
    // Another name in between, then the first again.
    library.spawn(&mut world, "structures/beacon").unwrap();
    let third = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(get::<Name>(&world, third).as_str(), "Goblin");
    let update = library.set_source("enemies/goblin.json", None);
    archetype_engine::apply_update(&mut world, &library, &update);
    assert_eq!(
        library.spawn(&mut world, "enemies/goblin").unwrap_err(),
        SpawnError::Deleted {
            name: "enemies/goblin".to_string()
        }
    );
    assert!(matches!(
        library.spawn(&mut world, "base/creature").unwrap_err(),
        SpawnError::Abstract { .. }
    ));
}

/// The tree of entities under `root`: each entity's path, name and what its `Links` point at
/// (as paths), so two instances can be compared whatever their handles.
fn shape(world: &World, library: &ArchetypeLibrary, root: Entity) -> Vec<String> {
    let paths = ["", "sensor", "gun", "gun/barrel"];
    let path_of = |entity: Entity| {
        paths
            .iter()
            .find(|path| at(world, library, root, path) == entity)
            .map_or("?".to_string(), |path| format!("#{path}"))
    };
    paths
        .iter()
        .map(|path| {
            let entity = at(world, library, root, path);
            let links = world
                .get::<&Links>(entity)
                .map(|links| {
                    let target = path_of(links.target.entity());
                    let backup = links.backup.map(|b| path_of(b.entity()));
                    let all: Vec<String> = links.all.iter().map(|e| path_of(e.entity())).collect();
                    format!("-> {target} {backup:?} {all:?}")
                })
                .unwrap_or_default();
            format!("{path}: {} {links}", get::<Name>(world, entity).0)
        })
        .collect()
}

#[test]
fn spawning_through_a_command_buffer_while_iterating_builds_what_spawn_builds() {
    let (_dir, library) = library();
    let mut world = World::new();
    let direct = library.spawn(&mut world, "structures/tower").unwrap();
    library.spawn_many(&mut world, "enemies/goblin", 2).unwrap();
    let mut commands = hecs::CommandBuffer::new();
    let mut deferred = Vec::new();
    for name in world.query::<&Name>().iter() {
        if name.0 == "Goblin" {
            let tower = library
                .spawn_deferred(&world, &mut commands, "structures/tower")
                .unwrap();
            deferred.push(tower);
        }
    }
    let error = library
        .spawn_deferred(&world, &mut commands, "structures/towr")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown archetype `structures/towr`; did you mean `structures/tower`?"
    );
    // Reserved at once: a handle to store before the buffer runs.
    assert_eq!(deferred.len(), 2);
    assert!(deferred
        .iter()
        .all(|tower| world.get::<&Name>(*tower).is_err()));
    commands.run_on(&mut world);
    // 4 entities per tower, 2 goblins; the failed spawn recorded nothing.
    assert_eq!(world.len(), 3 * 4 + 2);
    let expected = shape(&world, &library, direct);
    assert_eq!(
        expected,
        [
            r##": Tower -> #sensor Some("#gun/barrel") ["#", "#gun"]"##,
            r##"sensor: Sensor -> #gun None []"##,
            "gun: Cannon ",
            "gun/barrel: Barrel ",
        ]
    );
    let mut ids = HashSet::new();
    for tower in deferred {
        assert_eq!(shape(&world, &library, tower), expected);
        for path in ["", "sensor", "gun", "gun/barrel"] {
            let entity = at(&world, &library, tower, path);
            assert!(
                ids.insert(get::<StableId>(&world, entity)),
                "a fresh ID each"
            );
            assert!(has::<ArchetypeInstance>(&world, entity));
        }
    }
}

#[test]
fn a_seeded_library_gives_the_same_ids_so_two_runs_save_the_same_bytes() {
    let run = |seed: Option<u64>| {
        let (_dir, library) = library();
        if let Some(seed) = seed {
            library.set_id_seed(seed);
        }
        let mut world = World::new();
        library.spawn(&mut world, "enemies/goblin").unwrap();
        library.spawn(&mut world, "structures/tower").unwrap();
        library.spawn_many(&mut world, "enemies/goblin", 3).unwrap();
        library
            .spawn_with(
                &mut world,
                "enemies/goblin",
                &json!({ "Health": { "max": 50 } }),
            )
            .unwrap();
        let mut commands = hecs::CommandBuffer::new();
        library
            .spawn_deferred(&world, &mut commands, "structures/beacon")
            .unwrap();
        commands.run_on(&mut world);
        assert_eq!(world.len(), 1 + 4 + 3 + 1 + 1);
        archetype_engine::save_scene(
            &world,
            &library,
            archetype_engine::SceneEncoding::Json,
            &archetype_engine::SceneSaveOptions::default(),
        )
        .unwrap()
    };
    let first = run(Some(42));
    assert!(run(Some(42)) == first, "the same seed, other bytes");
    assert!(run(Some(43)) != first, "another seed, the same IDs");
    let unseeded = run(None);
    assert!(
        unseeded != first && run(None) != unseeded,
        "unseeded runs repeat IDs"
    );
}
