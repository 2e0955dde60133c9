//! Checked references: `ArchetypeRef` (an archetype name held in a component, checked against
//! the library when read, spawnable without a lookup) and `AssetPath` (a file under the assets
//! root). Checked at load, by hot reload when the target comes or goes, in overrides and in
//! scenes.

use std::path::PathBuf;

use archetype_engine::{
    apply_update, load_scene, AnyAsset, ArchetypeLibrary, ArchetypeRef, AssetKind, AssetPath,
    ComponentRegistry, LoadOptions, SceneLoadOptions,
};
use hecs::World;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{assert_messages, ArchetypeDir, Health};

/// Spawns an archetype named in data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Spawner {
    archetype: ArchetypeRef,
    #[serde(default)]
    also: Vec<ArchetypeRef>,
}

/// A PNG image.
struct Image;

impl AssetKind for Image {
    const EXTENSIONS: &'static [&'static str] = &["png"];
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Look {
    image: AssetPath<Image>,
    #[serde(default)]
    sound: Option<AssetPath<AnyAsset>>,
}

fn registry() -> ComponentRegistry {
    let mut registry = crate::support::registry();
    registry.register::<Spawner>().unwrap();
    registry.register::<Look>().unwrap();
    registry
}

const GOBLIN: (&str, &str) = (
    "enemies/goblin.json",
    r#"{ "components": { "Health": { "current": 5, "max": 5 } } }"#,
);

fn camp(archetype: &str) -> (&'static str, String) {
    (
        "camp.json",
        format!("{{\n  \"components\": {{\n    \"Spawner\": {{ \"archetype\": \"{archetype}\" }}\n  }}\n}}"),
    )
}

/// Loads `files`; the library (partial if it has errors) and every diagnostic, tidied.
fn load_with(
    files: &[(&str, &str)],
    options: LoadOptions,
) -> (ArchetypeDir, ArchetypeLibrary, Vec<String>) {
    let dir = ArchetypeDir::new(files);
    let library = match ArchetypeLibrary::load_with(dir.root(), registry(), options) {
        Ok(library) => library,
        Err(error) => error.into_partial(),
    };
    let messages = dir.messages(&library);
    (dir, library, messages)
}

fn load(files: &[(&str, &str)]) -> (ArchetypeDir, ArchetypeLibrary, Vec<String>) {
    load_with(files, LoadOptions::default())
}

#[test]
fn an_archetype_name_that_does_not_exist_is_an_error_at_the_field() {
    let (name, text) = camp("enemies/gobln");
    let (_dir, _, messages) = load(&[GOBLIN, (name, &text)]);
    assert_messages(
        &messages,
        &["archetypes/camp.json:3:31: error[unknown-archetype]: invalid value for `Spawner.archetype`: archetype `enemies/gobln` does not exist; did you mean `enemies/goblin`?"],
    );
    let (name, text) = camp("enemies/goblin.json");
    let (_dir, _, messages) = load(&[GOBLIN, (name, &text)]);
    assert_messages(
        &messages,
        &["archetypes/camp.json:3:31: error[invalid-name]: invalid value for `Spawner.archetype`: archetype name `enemies/goblin.json` includes the `.json` extension; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`; did you mean `enemies/goblin`?"],
    );
}

#[test]
fn a_reference_spawns_its_archetype_without_a_lookup() {
    let (name, text) = camp("enemies/goblin");
    let (_dir, library, messages) = load(&[GOBLIN, (name, &text)]);
    assert_messages(&messages, &[]);
    let mut world = World::new();
    let camp = library.spawn(&mut world, "camp").unwrap();
    let spawner: Spawner = (*world.get::<&Spawner>(camp).unwrap()).clone();
    assert_eq!(spawner.archetype.id(), library.id("enemies/goblin"));
    let goblin = library.spawn_ref(&mut world, &spawner.archetype).unwrap();
    assert_eq!(world.get::<&Health>(goblin).unwrap().max, 5.0);
    // A reference read by anything else is spawned by its name.
    let unchecked: Spawner =
        serde_json::from_value(json!({ "archetype": "enemies/goblin" })).unwrap();
    assert_eq!(unchecked.archetype.id(), None);
    assert!(library.spawn_ref(&mut world, &unchecked.archetype).is_ok());
    let missing = ArchetypeRef::new("enemies/troll");
    assert_eq!(
        library
            .spawn_ref(&mut world, &missing)
            .unwrap_err()
            .to_string(),
        "unknown archetype `enemies/troll`"
    );
}

#[test]
fn hot_reload_checks_again_when_the_target_goes_and_comes_back() {
    let (name, text) = camp("enemies/goblin");
    let (_dir, mut library, _) = load(&[GOBLIN, (name, &text)]);
    let mut world = World::new();
    let update = library.set_source("enemies/goblin.json", None::<&str>);
    let report = apply_update(&mut world, &library, &update);
    let errors: Vec<String> = report
        .errors()
        .iter()
        .map(|d| _dir.tidy(&d.to_string()))
        .collect();
    assert_messages(
        &errors,
        &["archetypes/camp.json:3:31: error[unknown-archetype]: invalid value for `Spawner.archetype`: archetype `enemies/goblin` does not exist"],
    );
    // The camp keeps its last good version.
    assert!(library.spawn(&mut world, "camp").is_ok());
    let update = library.set_source("enemies/goblin.json", Some(GOBLIN.1));
    assert!(update.errors.is_empty(), "{:?}", update.errors);
    assert!(library.diagnostics().is_empty());
}

#[test]
fn a_target_created_later_satisfies_the_reference() {
    let (name, text) = camp("enemies/troll");
    let (_dir, mut library, messages) = load(&[GOBLIN, (name, &text)]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    let update = library.set_source(
        "enemies/troll.json",
        Some(r#"{ "components": { "Health": { "current": 50, "max": 50 } } }"#),
    );
    assert!(update.errors.is_empty(), "{:?}", update.errors);
    assert!(update.changes.iter().any(|change| &*change.name == "camp"));
    let mut world = World::new();
    assert!(library.spawn(&mut world, "camp").is_ok());
}

#[test]
fn overrides_and_scenes_check_references_too() {
    let (name, text) = camp("enemies/goblin");
    let (_dir, library, _) = load(&[GOBLIN, (name, &text)]);
    let mut world = World::new();
    let error = library
        .spawn_with(
            &mut world,
            "camp",
            &json!({ "Spawner": { "archetype": "enemies/gobln" } }),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid overrides for `camp`: invalid value for `Spawner.archetype`: archetype `enemies/gobln` does not exist; did you mean `enemies/goblin`?"
    );
    let scene = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "components": { "Spawner": { "archetype": "enemies/gobln" } } }
  ]
}"#;
    let error = load_scene(
        scene.as_bytes(),
        None,
        &mut world,
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "error[invalid-component]: entity 00000000000000a1: `Spawner.archetype`: archetype `enemies/gobln` does not exist; did you mean `enemies/goblin`?"
    );
    assert_eq!(world.len(), 0, "a failed load leaves the world as it was");
}

fn assets_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("assets");
    std::fs::create_dir_all(root.join("sprites")).unwrap();
    std::fs::write(root.join("sprites/goblin.png"), b"png").unwrap();
    std::fs::write(root.join("growl.ogg"), b"ogg").unwrap();
    (dir, root)
}

#[test]
fn asset_paths_name_files_under_the_assets_root() {
    let (_assets, root) = assets_root();
    let options = || {
        let mut options = LoadOptions::default();
        options.assets_root = Some(root.clone());
        options
    };
    let good = (
        "goblin.json",
        r#"{ "components": { "Look": { "image": "sprites/goblin.png", "sound": "growl.ogg" } } }"#,
    );
    let (_dir, library, messages) = load_with(&[good], options());
    assert_messages(&messages, &[]);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    let look: Look = (*world.get::<&Look>(goblin).unwrap()).clone();
    assert_eq!(
        look.image.under(&root),
        root.join("sprites").join("goblin.png")
    );
    // A cooked library with the same assets root serves the same paths.
    let registry = library.registry().clone();
    let cooked =
        ArchetypeLibrary::load_cooked(library.cook().unwrap(), library.root(), registry, options())
            .unwrap();
    let goblin = cooked.spawn(&mut world, "goblin").unwrap();
    assert_eq!(*world.get::<&Look>(goblin).unwrap(), look);

    let bad = (
        "goblin.json",
        "{\n  \"components\": {\n    \"Look\": { \"image\": \"sprites/gobln.png\", \"sound\": \"../growl.ogg\" }\n  },\n  \"children\": { \"shadow\": { \"components\": { \"Look\": { \"image\": \"growl.ogg\" } } } }\n}",
    );
    let (_dir, _, messages) = load_with(&[bad], options());
    let shown = root.display().to_string();
    let messages: Vec<String> = messages
        .iter()
        .map(|m| m.replace(&shown, "assets"))
        .collect();
    assert_messages(
        &messages,
        &[
            "archetypes/goblin.json:3:24: error[invalid-asset]: invalid value for `Look.image`: asset `sprites/gobln.png` does not exist in `assets`; did you mean `sprites/goblin.png`?",
            "archetypes/goblin.json:5:64: error[invalid-asset]: invalid value for `Look.image`: asset `growl.ogg` must be a `.png` file",
        ],
    );
    // Without an assets root, only the form is checked.
    let (_dir, _, messages) = load(&[bad]);
    assert_messages(
        &messages,
        &[
            "archetypes/goblin.json:3:54: error[invalid-asset]: invalid value for `Look.sound`: asset path `../growl.ogg` leaves the assets root; write it relative to the root",
            "archetypes/goblin.json:5:64: error[invalid-asset]: invalid value for `Look.image`: asset `growl.ogg` must be a `.png` file",
        ],
    );
}
