//! Enum variant switch: a value naming another variant of an enum than the inherited value
//! replaces it; within the same variant, fields merge. Externally tagged enums (serde's default)
//! and internally tagged ones (`#[serde(tag = "kind")]`).

use archetype_engine::{apply_update, ArchetypeLibrary, ComponentRegistry, LoadOptions};
use hecs::World;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{assert_messages, ArchetypeDir};

/// Externally tagged: `"Idle"`, `{"Patrol": {...}}`, `{"Guard": {"x": .., "y": ..}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Order {
    Idle,
    Patrol {
        radius: f32,
        #[serde(default)]
        waypoints: Vec<f32>,
    },
    Chase {
        speed: f32,
    },
    Guard(Post),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Post {
    x: f32,
    y: f32,
}

/// Internally tagged: `{"kind": "Calm", "patience": 3}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
enum Stance {
    Calm {
        patience: f32,
    },
    Angry {
        fury: f32,
        #[serde(default)]
        shout: bool,
    },
}

/// Enums inside a struct.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Brain {
    order: Order,
    stance: Stance,
    memory: u32,
}

fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Order>().unwrap();
    registry.register::<Stance>().unwrap();
    registry.register::<Brain>().unwrap();
    registry
}

fn library(files: &[(&str, &str)]) -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(files);
    let library = ArchetypeLibrary::load(dir.root(), registry())
        .unwrap_or_else(|error| panic!("{}", dir.tidy(&error.to_string())));
    (dir, library)
}

/// Spawns `name` from `files` and returns its component `T`.
fn spawned<T: hecs::Component + Clone>(files: &[(&str, &str)], name: &str) -> T {
    let (_dir, library) = library(files);
    let mut world = World::new();
    let entity = library.spawn(&mut world, name).unwrap();
    let value: T = (*world.get::<&T>(entity).unwrap()).clone();
    value
}

const PATROL: (&str, &str) = (
    "guard.json",
    r#"{ "components": { "Order": { "Patrol": { "radius": 4, "waypoints": [1, 2] } } } }"#,
);

fn child(components: &str) -> (&'static str, String) {
    (
        "child.json",
        format!(r#"{{ "extends": "guard", "components": {components} }}"#),
    )
}

#[test]
fn a_child_naming_another_variant_replaces_the_inherited_one() {
    for (components, expected) in [
        (
            r#"{ "Order": { "Chase": { "speed": 3 } } }"#,
            Order::Chase { speed: 3.0 },
        ),
        (r#"{ "Order": "Idle" }"#, Order::Idle),
        (
            r#"{ "Order": { "Guard": { "x": 1, "y": 2 } } }"#,
            Order::Guard(Post { x: 1.0, y: 2.0 }),
        ),
    ] {
        let (name, text) = child(components);
        assert_eq!(
            spawned::<Order>(&[PATROL, (name, &text)], "child"),
            expected
        );
    }
}

#[test]
fn within_the_same_variant_fields_merge() {
    let (name, text) = child(r#"{ "Order": { "Patrol": { "radius": 6 } } }"#);
    assert_eq!(
        spawned::<Order>(&[PATROL, (name, &text)], "child"),
        Order::Patrol {
            radius: 6.0,
            waypoints: vec![1.0, 2.0]
        }
    );
}

#[test]
fn a_unit_variant_switches_to_a_struct_variant() {
    let files = [
        ("idle.json", r#"{ "components": { "Order": "Idle" } }"#),
        (
            "busy.json",
            r#"{ "extends": "idle", "components": { "Order": { "Chase": { "speed": 1 } } } }"#,
        ),
    ];
    assert_eq!(
        spawned::<Order>(&files, "busy"),
        Order::Chase { speed: 1.0 }
    );
}

#[test]
fn internally_tagged_enums_switch_on_their_tag() {
    let calm = (
        "calm.json",
        r#"{ "components": { "Stance": { "kind": "Calm", "patience": 3 } } }"#,
    );
    let angry = (
        "angry.json",
        r#"{ "extends": "calm", "components": { "Stance": { "kind": "Angry", "fury": 9 } } }"#,
    );
    let shouting = (
        "shouting.json",
        r#"{ "extends": "angry", "components": { "Stance": { "shout": true } } }"#,
    );
    let files = [calm, angry, shouting];
    assert_eq!(
        spawned::<Stance>(&files, "angry"),
        Stance::Angry {
            fury: 9.0,
            shout: false
        }
    );
    assert_eq!(
        spawned::<Stance>(&files, "shouting"),
        Stance::Angry {
            fury: 9.0,
            shout: true
        }
    );
}

#[test]
fn a_switch_deep_in_a_component_keeps_the_other_fields() {
    let files = [
        (
            "base.json",
            r#"{ "components": { "Brain": { "memory": 5, "order": { "Patrol": { "radius": 2 } }, "stance": { "kind": "Calm", "patience": 1 } } } }"#,
        ),
        (
            "hunter.json",
            r#"{ "extends": "base", "components": { "Brain": { "order": { "Chase": { "speed": 4 } }, "stance": { "kind": "Angry", "fury": 2 } } } }"#,
        ),
    ];
    assert_eq!(
        spawned::<Brain>(&files, "hunter"),
        Brain {
            order: Order::Chase { speed: 4.0 },
            stance: Stance::Angry {
                fury: 2.0,
                shout: false
            },
            memory: 5,
        }
    );
}

#[test]
fn later_parents_switch_the_variant_of_earlier_ones() {
    let files = [
        PATROL,
        (
            "hunter.json",
            r#"{ "components": { "Order": { "Chase": { "speed": 2 } } } }"#,
        ),
        ("both.json", r#"{ "extends": ["guard", "hunter"] }"#),
    ];
    assert_eq!(
        spawned::<Order>(&files, "both"),
        Order::Chase { speed: 2.0 }
    );
}

#[test]
fn spawn_time_overrides_switch_variants_too() {
    let (_dir, library) = library(&[PATROL]);
    let mut world = World::new();
    let overrides = json!({ "Order": { "Chase": { "speed": 7 } } });
    let entity = library.spawn_with(&mut world, "guard", &overrides).unwrap();
    assert_eq!(
        *world.get::<&Order>(entity).unwrap(),
        Order::Chase { speed: 7.0 }
    );
}

#[test]
fn hot_reload_switches_live_instances_to_the_new_variant() {
    let (_dir, mut library) = library(&[PATROL]);
    let mut world = World::new();
    let entity = library.spawn(&mut world, "guard").unwrap();
    let update = library.set_source(
        "guard.json",
        Some(r#"{ "components": { "Order": { "Chase": { "speed": 5 } } } }"#),
    );
    let report = apply_update(&mut world, &library, &update);
    assert!(report.errors().is_empty(), "{report}");
    assert_eq!(
        *world.get::<&Order>(entity).unwrap(),
        Order::Chase { speed: 5.0 }
    );
}

#[test]
fn two_variants_in_one_value_say_how_to_write_one() {
    let dir = ArchetypeDir::new(&[(
        "guard.json",
        "{\n  \"components\": {\n    \"Order\": { \"Patrol\": { \"radius\": 4 }, \"Chase\": { \"speed\": 3 } }\n  }\n}",
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
            r#"archetypes/guard.json:3:14: error[invalid-component]: invalid value for `Order`: `Chase` and `Patrol` are 2 variants of `Order`, which holds one; write only the one you want, e.g. `{"Chase": ...}`, and it replaces an inherited variant"#,
        ],
    );
}

#[test]
fn null_for_the_old_variant_still_works() {
    let (name, text) = child(r#"{ "Order": { "Patrol": null, "Chase": { "speed": 3 } } }"#);
    assert_eq!(
        spawned::<Order>(&[PATROL, (name, &text)], "child"),
        Order::Chase { speed: 3.0 }
    );
}

#[test]
fn a_tag_in_the_wrong_case_gets_the_variant_it_means() {
    let dir = ArchetypeDir::new(&[(
        "guard.json",
        "{\n  \"components\": {\n    \"Stance\": { \"kind\": \"calm\", \"patience\": 3 }\n  }\n}",
    )]);
    let error = ArchetypeLibrary::load(dir.root(), registry()).unwrap_err();
    let messages: Vec<String> = (error.diagnostics().iter())
        .map(|diagnostic| dir.tidy(&diagnostic.to_string()))
        .collect();
    assert_eq!(
        messages,
        ["archetypes/guard.json:3:25: error[invalid-component]: invalid value for `Stance.kind`: unknown variant `calm`, expected `Calm` or `Angry`; did you mean `Calm`?"]
    );
}
