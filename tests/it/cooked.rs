//! Cooked libraries: what `ArchetypeLibrary::cook` writes, `load_cooked` serves exactly as the
//! JSON library did; a cook for other component layouts, or a damaged one, is refused.

use std::sync::Arc;

use archetype_engine::{
    apply_update, save_scene, ArchetypeLibrary, ComponentRegistry, CookErrorKind, LoadOptions,
    SceneEncoding, SceneSaveOptions,
};
use hecs::World;

use crate::support::{self, registry, ArchetypeDir, Health};

/// Spawns every concrete archetype of `library` (twice) into a world of its own, with fixed
/// seeds, and returns the world saved as a JSON scene, each spawn error in its place.
fn every_spawn(library: &ArchetypeLibrary) -> String {
    library.set_id_seed(7);
    library.set_spawn_seed(11);
    let mut world = World::new();
    let mut failures = String::new();
    for name in library.names() {
        let Some(archetype) = library.get(name) else {
            continue;
        };
        if archetype.is_abstract() {
            continue;
        }
        for _ in 0..2 {
            if let Err(error) = library.spawn(&mut world, name) {
                failures.push_str(&format!("{name}: {error}\n"));
            }
        }
    }
    // Every value in full, then as instances of their archetypes (which reads the archetypes'
    // resolved trees).
    let mut full = SceneSaveOptions::default();
    full.full = true;
    let saved = [full, SceneSaveOptions::default()].map(|options| {
        save_scene(&world, library, SceneEncoding::Json, &options).map(String::from_utf8)
    });
    format!("{failures}{saved:?}")
}

/// The library cooked and loaded back with the same registry: its names, archetypes and every
/// spawn are the JSON library's. Called on every library a test loads cleanly
/// ([`support::load`]), so every archetype the suite spawns is spawned both ways.
#[track_caller]
pub fn assert_cooked_alike(library: &ArchetypeLibrary) {
    let registry = library.registry().clone();
    let options = library.options().clone();
    // A library of its own from the same files: the spawns below seed it.
    let library = &ArchetypeLibrary::load_with(library.root(), registry.clone(), options.clone())
        .unwrap_or_else(|error| panic!("loading again: {error}"));
    let cooked = library
        .cook()
        .unwrap_or_else(|error| panic!("cooking: {error}"));
    let loaded = ArchetypeLibrary::load_cooked(cooked, library.root(), registry, options)
        .unwrap_or_else(|error| panic!("loading the cook: {error}"));
    let names =
        |library: &ArchetypeLibrary| library.names().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(names(&loaded), names(library));
    for name in library.names() {
        let (Some(json), Some(cooked)) = (library.get(name), loaded.get(name)) else {
            assert_eq!(
                library.get(name).is_some(),
                loaded.get(name).is_some(),
                "{name}"
            );
            continue;
        };
        assert_eq!(cooked.resolved(), json.resolved(), "{name}");
        assert_eq!(cooked.extends(), json.extends(), "{name}");
        assert_eq!(cooked.is_abstract(), json.is_abstract(), "{name}");
        assert_eq!(cooked.file(), json.file(), "{name}");
        let paths = |a: &archetype_engine::Archetype| {
            a.entity_paths().map(str::to_string).collect::<Vec<_>>()
        };
        assert_eq!(paths(cooked), paths(json), "{name}");
        for former in library.former_names(name) {
            assert_eq!(loaded.renamed(former), Some(name));
        }
    }
    assert_eq!(every_spawn(&loaded), every_spawn(library));
}

const GOBLIN: &str =
    r#"{ "components": { "Health": { "current": 7, "max": 7 }, "Speed": { "value": 2.5 } } }"#;

/// A library of every kind of archetype: children, `#` references, variations, free-form
/// values, renames, an abstract parent.
const EVERY_KIND: &[(&str, &str)] = &[
    (
        "base/creature.json",
        r#"{ "abstract": true, "components": { "Health": { "current": 5, "max": 5 }, "Faction": "Hostile" } }"#,
    ),
    (
        "enemies/goblin.json",
        r#"{ "extends": ["base/creature"], "formerly": ["enemies/gobbo"], "components": { "Health": { "max": 9 }, "Speed": { "value": 2.5 }, "Notes": { "any": [1, "two", null] } } }"#,
    ),
    (
        "enemies/shaman.json",
        r#"{ "extends": ["enemies/goblin"], "components": { "Speed": { "value": { "$range": [1.0, 3.0] } } }, "children": { "staff": { "components": { "Speed": { "value": 0.5 } } } } }"#,
    ),
    (
        "structures/turret.json",
        r##"{ "components": { "Links": { "target": "#barrel" } }, "children": { "barrel": { "components": { "Health": { "current": 1, "max": 1 } } } } }"##,
    ),
    (
        "items/coin.json",
        r#"{ "components": { "Loot": { "gold": 1, "items": [] } } }"#,
    ),
];

#[test]
fn a_cooked_library_spawns_every_archetype_as_the_json_library_does() {
    let (_dir, library) = support::load(EVERY_KIND);
    // `support::load` compared them already; this says which library it was.
    assert_eq!(library.len(), 5);
    assert_cooked_alike(&library);
    let registry = library.registry().clone();
    let cooked = ArchetypeLibrary::load_cooked(
        library.cook().unwrap(),
        "archetypes",
        registry,
        LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(cooked.renamed("enemies/gobbo"), Some("enemies/goblin"));
    assert_eq!(cooked.former_names("enemies/goblin"), ["enemies/gobbo"]);
}

#[test]
fn the_same_library_cooks_to_the_same_bytes() {
    let (_dir, first) = support::load(EVERY_KIND);
    let (_other, second) = support::load(EVERY_KIND);
    assert_eq!(first.cook().unwrap(), second.cook().unwrap());
    // Cooked, loaded and cooked again: the same bytes.
    let registry = Arc::new(registry());
    let loaded = ArchetypeLibrary::load_cooked(
        first.cook().unwrap(),
        "archetypes",
        registry,
        LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(loaded.cook().unwrap(), first.cook().unwrap());
}

#[test]
fn a_library_with_errors_is_not_cooked() {
    let (_dir, _, library) = support::load_partial(&[
        ("enemies/goblin.json", GOBLIN),
        ("enemies/orc.json", r#"{ "components": { "Helth": {} } }"#),
    ]);
    let error = library.cook().unwrap_err();
    assert_eq!(
        error.to_string(),
        "the library has 1 error; fix it before cooking"
    );
}

mod changed {
    /// `Health` with a field more than the cook's.
    #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
    pub struct Health {
        pub current: f32,
        pub max: f32,
        #[serde(default)]
        pub armor: f32,
    }
}

#[test]
fn a_cook_for_another_layout_of_a_component_is_refused_naming_it() {
    let (dir, library) = support::load(&[("enemies/goblin.json", GOBLIN)]);
    let cooked = library.cook().unwrap();
    let mut other = ComponentRegistry::new();
    other.register::<changed::Health>().unwrap();
    other.register::<support::Speed>().unwrap();
    let error = ArchetypeLibrary::load_cooked(cooked, dir.root(), other, LoadOptions::default())
        .unwrap_err();
    assert!(
        matches!(error.kind(), CookErrorKind::LayoutChanged { component, .. } if component == "Health")
    );
    assert_eq!(
        error.to_string(),
        "component `Health` changed since the library was cooked (field `armor` added): its cooked values would be misread; cook the library again"
    );
}

#[test]
fn a_cook_naming_a_component_the_game_no_longer_has_is_refused() {
    let (dir, library) = support::load(&[("enemies/goblin.json", GOBLIN)]);
    let mut other = ComponentRegistry::new();
    other.register::<Health>().unwrap();
    let error = ArchetypeLibrary::load_cooked(
        library.cook().unwrap(),
        dir.root(),
        other,
        LoadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the cooked library uses component `Speed`, which is not registered; register it, or cook the library again"
    );
}

#[test]
fn a_damaged_cook_is_refused_never_misread() {
    let (dir, library) = support::load(&[("enemies/goblin.json", GOBLIN)]);
    let cooked = library.cook().unwrap();
    let path = dir.root().join("library.cook");
    let load = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let error = ArchetypeLibrary::load_cooked_file(
            &path,
            dir.root(),
            registry(),
            LoadOptions::default(),
        )
        .unwrap_err();
        dir.tidy(&error.to_string())
    };
    let mut flipped = cooked.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x20;
    assert_eq!(
        load(&flipped),
        "archetypes/library.cook: the cooked library is damaged (its checksum does not match its content); cook the library again"
    );
    assert_eq!(
        load(&cooked[..cooked.len() - 1]),
        format!(
            "archetypes/library.cook: the cooked library is damaged (its header says {} bytes of content, and {} follow); cook the library again",
            cooked.len() - 24,
            cooked.len() - 25
        )
    );
    assert_eq!(
        load(b"{ \"components\": {} }"),
        "archetypes/library.cook: not a cooked archetype library (it does not start with `ARCHCOOK`)"
    );
    let mut version = cooked.clone();
    version[8] = 9;
    assert_eq!(
        load(&version),
        "archetypes/library.cook: cooked library format 9, but this engine reads format 1; cook the library again"
    );
    let mut options = LoadOptions::default();
    options.limits.max_cook_bytes = 16;
    std::fs::write(&path, &cooked).unwrap();
    let error =
        ArchetypeLibrary::load_cooked_file(&path, dir.root(), registry(), options).unwrap_err();
    assert_eq!(
        dir.tidy(&error.to_string()),
        format!(
            "archetypes/library.cook: file is {} bytes, over the limit of 16 bytes",
            cooked.len()
        )
    );
}

#[test]
fn a_game_started_from_a_cook_hot_reloads_the_json_files() {
    let dir = ArchetypeDir::new(&[
        ("enemies/goblin.json", GOBLIN),
        (
            "enemies/orc.json",
            r#"{ "components": { "Health": { "current": 20, "max": 20 } } }"#,
        ),
    ]);
    let cooked = dir.load().unwrap().cook().unwrap();
    let mut library =
        ArchetypeLibrary::load_cooked(cooked, dir.root(), registry(), LoadOptions::default())
            .unwrap();
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    let orc = library.spawn(&mut world, "enemies/orc").unwrap();
    world.get::<&mut Health>(orc).unwrap().current = 3.0; // runtime state
    let edited = dir.write(
        "enemies/goblin.json",
        br#"{ "components": { "Health": { "current": 7, "max": 12 }, "Speed": { "value": 2.5 } } }"#,
    );
    let update = library.reload_files(&[edited]);
    // Only the edited archetype differs from the cook.
    let changed: Vec<&str> = update.changes.iter().map(|c| &*c.name).collect();
    assert_eq!(changed, ["enemies/goblin"]);
    apply_update(&mut world, &library, &update);
    assert_eq!(world.get::<&Health>(goblin).unwrap().max, 12.0);
    assert_eq!(world.get::<&Health>(orc).unwrap().current, 3.0);
    // The library now reads the files, as one loaded from them does.
    assert_eq!(
        library.source_text("enemies/orc"),
        Some(r#"{ "components": { "Health": { "current": 20, "max": 20 } } }"#)
    );
}
