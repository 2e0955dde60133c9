//! Hot reload, the core: an archetype edit reaches live entities field by field, without the
//! file system (files are replaced in memory with `set_source`).

use archetype_engine::{
    apply_update, ArchetypeInstance, ArchetypeLibrary, Children, ComponentRegistry, DiagnosticCode,
    EntityRef, HeldBackReason, LoadOptions, Parent, PatchAction, ReloadReport, SpawnError,
    StableId, Transform,
};
use glam::Vec3;
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Health {
    current: f32,
    max: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Speed {
    value: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Armor {
    value: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Aim {
    at: EntityRef,
}

fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Health>().unwrap();
    registry.register::<Speed>().unwrap();
    registry.register::<Armor>().unwrap();
    registry.register::<Aim>().unwrap();
    registry
}

const CREATURE: &str = r#"{ "abstract": true, "components": {
    "Transform": {}, "Health": { "current": 10, "max": 10 }, "Speed": { "value": 1 } } }"#;
const GOBLIN: &str = r#"{ "extends": "creature", "components": {
    "Health": { "current": 12, "max": 12 }, "Speed": { "value": 2 } } }"#;
const ARCHER: &str = r#"{ "extends": "goblin", "components": { "Speed": { "value": 3 } } }"#;
const TURRET: &str = r##"{ "components": { "Health": { "current": 40, "max": 40 }, "Aim": { "at": "#sensor" } },
    "children": {
        "sensor": { "components": { "Transform": { "translation": [0, 1, 0] } } },
        "gun": { "components": { "Transform": { "translation": [1, 0, 0] }, "Speed": { "value": 5 } } }
    } }"##;

/// A library of the standard test archetypes, all valid.
fn library() -> ArchetypeLibrary {
    let mut library = ArchetypeLibrary::empty("archetypes", registry(), LoadOptions::default());
    library.set_sources([
        ("creature.json", Some(CREATURE)),
        ("goblin.json", Some(GOBLIN)),
        ("goblin_archer.json", Some(ARCHER)),
        ("turret.json", Some(TURRET)),
    ]);
    assert_eq!(library.diagnostics(), &[]);
    library
}

/// Replaces one file and applies the result to the world.
fn edit(
    world: &mut World,
    library: &mut ArchetypeLibrary,
    file: &str,
    text: Option<&str>,
) -> ReloadReport {
    let update = library.set_source(file, text);
    apply_update(world, library, &update)
}

fn health(world: &World, entity: Entity) -> Health {
    (*world.get::<&Health>(entity).unwrap()).clone()
}

fn speed(world: &World, entity: Entity) -> f32 {
    world.get::<&Speed>(entity).unwrap().value
}

#[test]
fn edits_reach_every_instance_and_keep_runtime_state() {
    let mut library = library();
    let mut world = World::new();
    let goblins = library.spawn_many(&mut world, "goblin", 100).unwrap();
    // Runtime state: a goblin got hurt and moved.
    world.get::<&mut Health>(goblins[7]).unwrap().current = 3.0;
    world.get::<&mut Transform>(goblins[7]).unwrap().translation = Vec3::new(5.0, 0.0, 2.0);

    let report = edit(
        &mut world,
        &mut library,
        "goblin.json",
        Some(
            r#"{ "extends": "creature", "components": {
        "Health": { "current": 12, "max": 20 }, "Speed": { "value": 2.5 } } }"#,
        ),
    );

    assert_eq!(report.changed(), ["goblin", "goblin_archer"]);
    assert_eq!(report.entities_updated(), 100);
    assert!(report.errors().is_empty(), "{report}");
    assert_eq!(
        health(&world, goblins[7]),
        Health {
            current: 3.0,
            max: 20.0
        }
    );
    assert_eq!(
        health(&world, goblins[0]),
        Health {
            current: 12.0,
            max: 20.0
        }
    );
    assert_eq!(speed(&world, goblins[7]), 2.5);
    let moved = world.get::<&Transform>(goblins[7]).unwrap().translation;
    assert_eq!(moved, Vec3::new(5.0, 0.0, 2.0));
    // New spawns get the new version.
    let fresh = library.spawn(&mut world, "goblin").unwrap();
    assert_eq!(
        health(&world, fresh),
        Health {
            current: 12.0,
            max: 20.0
        }
    );
}

/// An instance whose value differs from the archetype's in one field takes the edit of
/// another field of the same component and keeps its own: a flat struct, a nested one and a
/// glam vector (a patch leaf taken whole), on many instances at once.
#[test]
fn an_edit_of_one_field_keeps_every_instances_own_other_fields() {
    let mut library = library();
    let mut world = World::new();
    let goblins = library.spawn_many(&mut world, "goblin", 50).unwrap();
    for (i, goblin) in goblins.iter().enumerate() {
        world.get::<&mut Health>(*goblin).unwrap().current = i as f32;
        world.get::<&mut Transform>(*goblin).unwrap().translation = Vec3::new(i as f32, 0.0, 1.0);
    }
    let report = edit(
        &mut world,
        &mut library,
        "creature.json",
        Some(
            r#"{ "abstract": true, "components": {
    "Transform": { "scale": [2, 2, 2] }, "Health": { "current": 10, "max": 40 }, "Speed": { "value": 1 } } }"#,
        ),
    );
    assert!(
        report.errors().is_empty() && report.patch_failures().is_empty(),
        "{report}"
    );
    for (i, goblin) in goblins.iter().enumerate() {
        // The goblin's own `Health.max` is 12: the creature's edit does not reach it.
        assert_eq!(
            health(&world, *goblin),
            Health {
                current: i as f32,
                max: 12.0
            }
        );
        let transform = *world.get::<&Transform>(*goblin).unwrap();
        assert_eq!(transform.translation, Vec3::new(i as f32, 0.0, 1.0));
        assert_eq!(transform.scale, Vec3::splat(2.0));
    }
    let report = edit(
        &mut world,
        &mut library,
        "goblin.json",
        Some(&GOBLIN.replace(r#""max": 12"#, r#""max": 30"#)),
    );
    assert!(report.patch_failures().is_empty(), "{report}");
    assert_eq!(health(&world, goblins[7]).max, 30.0);
    assert_eq!(health(&world, goblins[7]).current, 7.0);
}

#[test]
fn a_spelled_out_default_changes_nothing_live() {
    let mut library = library();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    world.get::<&mut Transform>(goblin).unwrap().translation = Vec3::new(4.0, 0.0, 4.0);
    // `translation: [0, 0, 0]` and `12.0` for `12` mean the same values: no field changed.
    let report = edit(
        &mut world,
        &mut library,
        "goblin.json",
        Some(
            r#"{ "extends": "creature", "components": {
        "Transform": { "translation": [0, 0, 0] },
        "Health": { "current": 12.0, "max": 12 }, "Speed": { "value": 2 } } }"#,
        ),
    );
    assert_eq!(report.changed(), ["goblin", "goblin_archer"]);
    assert_eq!(report.entities_updated(), 0);
    assert_eq!(
        world.get::<&Transform>(goblin).unwrap().translation,
        Vec3::new(4.0, 0.0, 4.0)
    );
}

#[test]
fn per_instance_overrides_win_over_archetype_edits() {
    let mut library = library();
    let mut world = World::new();
    let boss = library
        .spawn_with(
            &mut world,
            "goblin",
            &serde_json::json!({ "Health": { "max": 99 } }),
        )
        .unwrap();
    let plain = library.spawn(&mut world, "goblin").unwrap();

    edit(
        &mut world,
        &mut library,
        "goblin.json",
        Some(
            r#"{ "extends": "creature", "components": {
        "Health": { "current": 15, "max": 30 }, "Speed": { "value": 2 } } }"#,
        ),
    );

    // The override keeps `max`; the field it does not override follows the archetype.
    assert_eq!(
        health(&world, boss),
        Health {
            current: 15.0,
            max: 99.0
        }
    );
    assert_eq!(
        health(&world, plain),
        Health {
            current: 15.0,
            max: 30.0
        }
    );
}

#[test]
fn components_added_and_removed_by_an_edit() {
    let mut library = library();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    let removed_by_override = library
        .spawn_with(&mut world, "goblin", &serde_json::json!({ "Armor": null }))
        .unwrap();

    let report = edit(
        &mut world,
        &mut library,
        "goblin.json",
        Some(
            r#"{ "extends": "creature", "components": {
        "Health": { "current": 12, "max": 12 }, "Speed": null, "Armor": { "value": 2 } } }"#,
        ),
    );

    assert_eq!(report.entities_updated(), 2);
    assert_eq!(world.get::<&Armor>(goblin).unwrap().value, 2.0);
    assert!(world.get::<&Speed>(goblin).is_err());
    // An instance whose overrides removed the component does not get it back.
    assert!(world.get::<&Armor>(removed_by_override).is_err());
}

#[test]
fn children_added_and_removed_by_an_edit() {
    let mut library = library();
    let mut world = World::new();
    let turrets = [
        library.spawn(&mut world, "turret").unwrap(),
        library.spawn(&mut world, "turret").unwrap(),
    ];
    let before = world.len();

    // `gun` goes, `radar` comes.
    let report = edit(
        &mut world,
        &mut library,
        "turret.json",
        Some(
            r##"{ "components": {
        "Health": { "current": 40, "max": 40 }, "Aim": { "at": "#sensor" } },
        "children": {
            "sensor": { "components": { "Transform": { "translation": [0, 1, 0] } } },
            "radar": { "components": { "Speed": { "value": 0 } } }
        } }"##,
        ),
    );

    assert_eq!(
        (report.entities_spawned(), report.entities_despawned()),
        (2, 2)
    );
    assert_eq!(world.len(), before);
    for turret in turrets {
        let children: Vec<Entity> = world
            .get::<&Children>(turret)
            .unwrap()
            .0
            .iter()
            .map(|c| c.0)
            .collect();
        let paths: Vec<&str> = children
            .iter()
            .map(|&c| {
                library
                    .node_path(*world.get::<&ArchetypeInstance>(c).unwrap())
                    .unwrap()
            })
            .collect();
        assert_eq!(paths, ["sensor", "radar"]);
        let radar = children[1];
        assert_eq!(world.get::<&Parent>(radar).unwrap().0, EntityRef(turret));
        assert!(world.get::<&StableId>(radar).is_ok());
        assert_eq!(speed(&world, radar), 0.0);
    }
}

#[test]
fn a_parent_edit_reaches_descendants_and_children_built_from_it() {
    let mut library = library();
    library.set_sources([(
        "fort.json",
        Some(
            r#"{ "components": { "Speed": { "value": 0 } },
            "children": { "guard": { "archetype": "goblin_archer" } } }"#,
        ),
    )]);
    let mut world = World::new();
    let archer = library.spawn(&mut world, "goblin_archer").unwrap();
    let fort = library.spawn(&mut world, "fort").unwrap();
    let guard = world.get::<&Children>(fort).unwrap().0[0].0;

    let report = edit(
        &mut world,
        &mut library,
        "creature.json",
        Some(
            r#"{ "abstract": true, "components": {
        "Transform": {}, "Health": { "current": 10, "max": 10 }, "Speed": { "value": 1 }, "Armor": { "value": 7 } } }"#,
        ),
    );

    assert_eq!(
        report.changed(),
        ["creature", "goblin", "goblin_archer", "fort"]
    );
    assert_eq!(world.get::<&Armor>(archer).unwrap().value, 7.0);
    assert_eq!(world.get::<&Armor>(guard).unwrap().value, 7.0);
}

#[test]
fn references_in_an_edit_resolve_within_each_instance() {
    let mut library = library();
    let mut world = World::new();
    let turrets = library.spawn_many(&mut world, "turret", 3).unwrap();
    edit(
        &mut world,
        &mut library,
        "turret.json",
        Some(&TURRET.replace("#sensor", "#gun")),
    );
    for turret in turrets {
        // Children are in name order: `gun`, then `sensor`.
        let gun = world.get::<&Children>(turret).unwrap().0[0];
        assert_eq!(
            library.node_path(*world.get::<&ArchetypeInstance>(gun.0).unwrap()),
            Some("gun")
        );
        assert_eq!(world.get::<&Aim>(turret).unwrap().at, gun);
    }
}

#[test]
fn a_broken_edit_keeps_the_last_good_version_and_the_fix_applies() {
    let mut library = library();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();

    let broken = "{ \"extends\": \"creature\", \"components\": {\n  \"Health\": { \"current\": 12, \"max\": 30 },\n  \"Speed\": { \"value\": \"fast\" } } }";
    let report = edit(&mut world, &mut library, "goblin.json", Some(broken));
    assert!(report.changed().is_empty());
    let errors: Vec<String> = report.errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "archetypes/goblin.json:3:23: error[invalid-component]: invalid value for `Speed.value`: invalid type: string \"fast\", expected f32",
            "archetypes/goblin_archer.json:1:14: note[broken-dependency]: not fully checked: it depends on `goblin`, which has errors; its own values were checked as far as they go",
        ]
    );
    assert_held_back_by_goblin(&report);
    assert_eq!(health(&world, goblin).max, 12.0);
    // The game keeps spawning the last good version.
    let spawned = library.spawn(&mut world, "goblin").unwrap();
    assert_eq!(health(&world, spawned).max, 12.0);

    let report = edit(
        &mut world,
        &mut library,
        "goblin.json",
        Some(&broken.replace("\"fast\"", "4")),
    );
    assert!(report.errors().is_empty(), "{report}");
    assert_eq!(report.changed(), ["goblin", "goblin_archer"]);
    assert_eq!(
        (health(&world, goblin).max, speed(&world, goblin)),
        (30.0, 4.0)
    );
    assert_eq!(library.diagnostics(), &[]);
}

#[test]
fn an_edit_elsewhere_applies_while_one_file_is_broken() {
    let mut library = library();
    let mut world = World::new();
    let turret = library.spawn(&mut world, "turret").unwrap();
    let archer = library.spawn(&mut world, "goblin_archer").unwrap();
    edit(&mut world, &mut library, "goblin.json", Some("{ oops"));

    // The turret does not depend on the goblin: its edit goes through.
    edit(
        &mut world,
        &mut library,
        "turret.json",
        Some(&TURRET.replace("40", "45")),
    );
    assert_eq!(health(&world, turret).max, 45.0);

    // The archer does: its edit waits for the goblin to be fixed.
    let report = edit(
        &mut world,
        &mut library,
        "goblin_archer.json",
        Some(&ARCHER.replace("3", "9")),
    );
    assert_held_back_by_goblin(&report);
    assert_eq!(speed(&world, archer), 3.0);
    edit(&mut world, &mut library, "goblin.json", Some(GOBLIN));
    assert_eq!(speed(&world, archer), 9.0);
}

#[test]
fn deleted_archetypes_orphan_their_instances_and_come_back() {
    let mut library = library();
    let mut world = World::new();
    let turret = library.spawn(&mut world, "turret").unwrap();

    let report = edit(&mut world, &mut library, "turret.json", None);
    assert_eq!(report.changed(), ["turret"]);
    assert_eq!(report.entities_orphaned(), 3);
    assert_eq!(
        health(&world, turret).max,
        40.0,
        "orphans keep their components"
    );
    assert_eq!(
        library.spawn(&mut world, "turret").unwrap_err(),
        SpawnError::Deleted {
            name: "turret".to_string()
        }
    );

    let report = edit(
        &mut world,
        &mut library,
        "turret.json",
        Some(&TURRET.replace("40", "50")),
    );
    assert_eq!(report.entities_updated(), 1);
    assert_eq!(health(&world, turret).max, 50.0);
}

#[test]
fn new_files_become_spawnable() {
    let mut library = library();
    let mut world = World::new();
    assert!(library.spawn(&mut world, "orc").is_err());
    let report = edit(
        &mut world,
        &mut library,
        "orc.json",
        Some(r#"{ "extends": "creature" }"#),
    );
    assert_eq!(report.changed(), ["orc"]);
    let orc = library.spawn(&mut world, "orc").unwrap();
    assert_eq!(health(&world, orc).max, 10.0);
}

/// The report holds `goblin_archer` back, and only it, because `goblin` has errors.
fn assert_held_back_by_goblin(report: &ReloadReport) {
    let [held] = report.held_back() else {
        panic!("one archetype held back: {report}");
    };
    assert_eq!(held.archetype, "goblin_archer");
    let dependency = "goblin".to_string();
    assert_eq!(held.reason, HeldBackReason::BrokenDependency { dependency });
    assert_eq!(held.reason.code(), DiagnosticCode::BrokenDependency);
    assert_eq!(
        held.to_string(),
        "kept the last good version of `goblin_archer`: it depends on `goblin`, which has errors"
    );
}

/// A value that must stay under its cap: a patch can give a live value that is not valid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawCapped")]
struct Capped {
    value: f32,
    cap: f32,
}

#[derive(Deserialize)]
struct RawCapped {
    value: f32,
    cap: f32,
}

impl TryFrom<RawCapped> for Capped {
    type Error = String;
    fn try_from(raw: RawCapped) -> Result<Self, String> {
        if raw.value > raw.cap {
            return Err(format!("value {} is above cap {}", raw.value, raw.cap));
        }
        Ok(Capped {
            value: raw.value,
            cap: raw.cap,
        })
    }
}

#[test]
fn a_patch_a_live_value_cannot_take_is_a_typed_failure() {
    let mut registry = ComponentRegistry::new();
    registry.register::<Capped>().unwrap();
    let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
    let file = r#"{ "components": { "Capped": { "value": 5, "cap": 10 } } }"#;
    library.set_sources([("charm.json", Some(file))]);
    let mut world = World::new();
    let charm = library.spawn(&mut world, "charm").unwrap();
    let untouched = library.spawn(&mut world, "charm").unwrap();
    world.get::<&mut Capped>(charm).unwrap().value = 9.0;

    let edited = file.replace("10", "8");
    let report = edit(&mut world, &mut library, "charm.json", Some(&edited));
    let [failure] = report.patch_failures() else {
        panic!("one patch failure: {report}");
    };
    assert_eq!(failure.entity, charm);
    assert_eq!(failure.archetype, "charm");
    assert_eq!(failure.component, "Capped");
    assert_eq!(failure.action, PatchAction::Patch);
    assert_eq!(failure.error.code, DiagnosticCode::InvalidComponent);
    assert_eq!(failure.error.component.as_deref(), Some("Capped"));
    assert_eq!(
        failure.to_string(),
        format!("could not patch `Capped` on entity {charm:?} of `charm`: value 9 is above cap 8")
    );
    // The failed component is left as it was; the others take the edit.
    assert_eq!(world.get::<&Capped>(charm).unwrap().cap, 10.0);
    assert_eq!(world.get::<&Capped>(untouched).unwrap().cap, 8.0);
}
