//! `ComponentRegistry`: which Rust types data files may name, and under which names.

use archetype_engine::{
    ArchetypeInstance, Children, ComponentOptions, ComponentRegistry, Name, Parent, StableId,
    Transform,
};
use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::support::{self, assert_messages, get, load, load_errors, Faction, Health, Speed};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Mana {
    points: u32,
}

/// A second type that wants the name `Health`.
mod other {
    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    pub struct Health(pub u8);
}

#[derive(Clone, Serialize, Deserialize)]
struct Wrapper<T>(T);

#[test]
fn a_component_is_named_after_its_type_by_default() {
    let mut registry = ComponentRegistry::new();
    let id = registry.register::<Mana>().unwrap();
    assert_eq!(registry.name(id), "Mana");
    assert_eq!(registry.id("Mana"), Some(id));
    assert_eq!(registry.id_of::<Mana>(), Some(id));
    assert_eq!(registry.type_name(id), "it::registry::Mana");
}

#[test]
fn an_explicit_name_replaces_the_type_name() {
    let mut registry = ComponentRegistry::new();
    let id = registry
        .register_with::<Mana>(ComponentOptions::new().name("Magic"))
        .unwrap();
    assert_eq!(registry.name(id), "Magic");
    assert_eq!(registry.id("Magic"), Some(id));
    assert_eq!(registry.id("Mana"), None);
}

#[test]
fn files_use_the_explicit_name() {
    let mut registry = ComponentRegistry::new();
    registry
        .register_with::<Mana>(ComponentOptions::new().name("Magic"))
        .unwrap();
    let dir = support::ArchetypeDir::new(&[(
        "mage.json",
        r#"{ "components": { "Magic": { "points": 7 } } }"#,
    )]);
    let library = archetype_engine::ArchetypeLibrary::load(dir.root(), registry).unwrap();
    let mut world = hecs::World::new();
    let mage = library.spawn(&mut world, "mage").unwrap();
    assert_eq!(get::<Mana>(&world, mage), Mana { points: 7 });
}

#[test]
fn an_alias_is_an_old_name_that_still_loads_as_the_current_one() {
    let registry = support::registry();
    let speed = registry.id("Speed").unwrap();
    assert_eq!(registry.id("MoveSpeed"), Some(speed));
    assert_eq!(registry.canonical_name("MoveSpeed"), Some("Speed"));
    assert_eq!(registry.aliases(speed).collect::<Vec<_>>(), ["MoveSpeed"]);
    // Suggestions and listings offer only current names.
    assert!(registry.names().contains(&"Speed"));
    assert!(!registry.names().contains(&"MoveSpeed"));

    let (_dir, library) = load(&[(
        "runner.json",
        r#"{ "components": { "MoveSpeed": { "value": 3 } } }"#,
    )]);
    let mut world = hecs::World::new();
    let runner = library.spawn(&mut world, "runner").unwrap();
    assert_eq!(get::<Speed>(&world, runner), Speed { value: 3.0 });
}

#[test]
fn two_types_under_one_name_is_an_error() {
    let mut registry = ComponentRegistry::new();
    registry.register::<Health>().unwrap();
    let error = registry.register::<other::Health>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "component name `Health` is already used by `it::support::Health`"
    );
}

#[test]
fn an_alias_may_not_take_another_components_name() {
    let mut registry = ComponentRegistry::new();
    registry.register::<Health>().unwrap();
    let error = registry
        .register_with::<Mana>(ComponentOptions::new().alias("Health"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "component name `Health` is already used by `it::support::Health`"
    );
    // The failed registration left nothing behind.
    assert_eq!(registry.id_of::<Mana>(), None);
    assert_eq!(registry.id("Mana"), None);
}

#[test]
fn a_name_may_not_take_another_components_alias() {
    let mut registry = ComponentRegistry::new();
    registry
        .register_with::<Speed>(ComponentOptions::new().alias("Haste"))
        .unwrap();
    let error = registry
        .register_with::<Mana>(ComponentOptions::new().name("Haste"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "component name `Haste` is already used by `it::support::Speed`"
    );
}

#[test]
fn a_type_is_registered_once() {
    let mut registry = ComponentRegistry::new();
    registry.register::<Mana>().unwrap();
    let error = registry
        .register_with::<Mana>(ComponentOptions::new().name("Magic"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "type `it::registry::Mana` is already registered as component `Mana`"
    );
}

#[test]
fn names_must_be_usable_in_data_files() {
    let mut registry = ComponentRegistry::new();
    for bad in ["9lives", "has space", "", "enemies/Health"] {
        let error = registry
            .register_with::<Mana>(ComponentOptions::new().name(bad))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("`{bad}` is not a valid component name: use ASCII letters, digits and `_`, starting with a letter")
        );
    }
    let error = registry
        .register_with::<Mana>(ComponentOptions::new().alias("old-mana"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`old-mana` is not a valid component name: use ASCII letters, digits and `_`, starting with a letter"
    );
}

#[test]
fn a_generic_type_needs_an_explicit_name() {
    let mut registry = ComponentRegistry::new();
    let error = registry.register::<Wrapper<u8>>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot name generic type `it::registry::Wrapper<u8>` automatically; register it with ComponentOptions::name"
    );
    let id = registry
        .register_with::<Wrapper<u8>>(ComponentOptions::new().name("Wrapped"))
        .unwrap();
    assert_eq!(registry.name(id), "Wrapped");
}

#[test]
fn a_new_registry_holds_the_builtins() {
    let registry = ComponentRegistry::new();
    for (name, id) in [
        ("Name", registry.id_of::<Name>()),
        ("Transform", registry.id_of::<Transform>()),
        ("Parent", registry.id_of::<Parent>()),
        ("Children", registry.id_of::<Children>()),
        ("StableId", registry.id_of::<StableId>()),
        ("ArchetypeInstance", registry.id_of::<ArchetypeInstance>()),
    ] {
        let id = id.unwrap_or_else(|| panic!("built-in `{name}` is not registered"));
        assert_eq!(registry.name(id), name);
    }
    // Files may write `Name` and `Transform`; the library sets the others itself.
    assert_eq!(registry.names(), ["Name", "Transform"]);
}

#[test]
fn a_builtin_name_cannot_be_taken() {
    #[derive(Clone, Serialize, Deserialize)]
    struct Name(String);
    let mut registry = ComponentRegistry::new();
    let error = registry.register::<Name>().unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "component name `Name` is already used by `{}`",
            std::any::type_name::<archetype_engine::Name>()
        )
    );
}

#[test]
fn builtins_and_enums_read_their_documented_forms() {
    let (_dir, library) = load(&[(
        "thing.json",
        r#"{
  "components": {
    "Name": "Grukk",
    "Transform": { "translation": [1, 2, 3], "rotation": [0, 0, 1, 0], "scale": [2, 2, 2] },
    "Faction": "Hostile"
  }
}"#,
    )]);
    let mut world = hecs::World::new();
    let thing = library.spawn(&mut world, "thing").unwrap();
    assert_eq!(get::<Name>(&world, thing), Name("Grukk".to_string()));
    assert_eq!(
        get::<Transform>(&world, thing),
        Transform {
            translation: Vec3::new(1.0, 2.0, 3.0),
            rotation: Quat::from_xyzw(0.0, 0.0, 1.0, 0.0),
            scale: Vec3::splat(2.0),
        }
    );
    assert_eq!(get::<Faction>(&world, thing), Faction::Hostile);
}

#[test]
fn transform_fields_left_out_keep_the_identity() {
    let (_dir, library) = load(&[(
        "marker.json",
        r#"{ "components": { "Transform": { "translation": [0, 5, 0] } } }"#,
    )]);
    let mut world = hecs::World::new();
    let marker = library.spawn(&mut world, "marker").unwrap();
    assert_eq!(
        get::<Transform>(&world, marker),
        Transform::from_translation(Vec3::new(0.0, 5.0, 0.0))
    );
    assert_eq!(
        get::<Transform>(&world, marker).rotation,
        Quat::IDENTITY,
        "rotation"
    );
}

#[test]
fn components_the_library_sets_may_not_be_written_in_files() {
    assert_messages(
        &load_errors(&[(
            "thing.json",
            r#"{
  "components": {
    "Parent": 1,
    "StableId": "00ab12cd34ef5678"
  }
}"#,
        )]),
        &[
            "archetypes/thing.json:3:5: error[reserved-component]: component `Parent` is set by the library when entities are spawned; describe child entities under `children`",
            "archetypes/thing.json:4:5: error[reserved-component]: component `StableId` is set by the library when entities are spawned; remove it from the file",
        ],
    );
}
