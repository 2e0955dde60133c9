//! Saves that survive game updates: scenes load after their archetypes changed (children
//! gained and lost), and carry the game's own `meta`, readable without loading them.

use std::path::Path;

use archetype_engine::{
    load_scene, read_scene_header, save_scene, ArchetypeInstance, ArchetypeLibrary, Children,
    LoadOptions, LoadedScene, Parent, RemovedChildren, SceneChange, SceneEncoding, SceneHeader,
    SceneLoadOptions, SceneMigration, SceneSaveOptions, StableId,
};
use hecs::{Entity, World};
use serde_json::json;

use crate::support::{registry, Health, Links};

/// A chest with a `lid` child, whose root links to it.
const CHEST: &str = r##"{
  "components": { "Links": { "target": "#lid" } },
  "children": { "lid": { "components": { "Armor": { "value": 1 } } } }
}"##;

/// The chest after an update: it gained a `lock` (which the root links to, and which links
/// back to the root) and a `hinge` under the lid.
const CHEST_GAINED: &str = r##"{
  "components": { "Links": { "target": "#lid", "all": ["#lock"] } },
  "children": {
    "lid": {
      "components": { "Armor": { "value": 1 } },
      "children": { "hinge": { "components": { "Armor": { "value": 2 } } } }
    },
    "lock": { "components": { "Links": { "target": "#" } } }
  }
}"##;

fn library(chest: &str) -> ArchetypeLibrary {
    let mut library = ArchetypeLibrary::empty("archetypes", registry(), LoadOptions::default());
    library.set_source("chest.json", Some(chest));
    assert_eq!(library.diagnostics(), &[]);
    library
}

fn save(world: &World, library: &ArchetypeLibrary, encoding: SceneEncoding) -> Vec<u8> {
    save_scene(world, library, encoding, &SceneSaveOptions::default()).unwrap()
}

fn load_into(
    bytes: &[u8],
    world: &mut World,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> LoadedScene {
    let file = Some(Path::new("save.scene.json"));
    load_scene(bytes, file, world, library, options).unwrap()
}

/// The entity of the chest instance rooted at `root` at `path`.
fn at(world: &World, library: &ArchetypeLibrary, root: Entity, path: &str) -> Option<Entity> {
    let mut found = None;
    let mut stack = vec![root];
    while let Some(entity) = stack.pop() {
        let marker = *world.get::<&ArchetypeInstance>(entity).unwrap();
        if library.node_path(marker) == Some(path) {
            found = Some(entity);
        }
        if let Ok(children) = world.get::<&Children>(entity) {
            stack.extend(children.0.iter().map(|child| child.0));
        }
    }
    found
}

fn root_of(world: &World, loaded: &LoadedScene) -> Entity {
    *loaded
        .entities()
        .iter()
        .find(|e| world.get::<&ArchetypeInstance>(**e).unwrap().is_root())
        .unwrap()
}

/// A child the archetype gained after the scene was saved is spawned on load, linked to its
/// parent, with `#` references to and from it resolved — in JSON and binary, through the
/// one-pass and the careful reader (a hand-edited layout); saving again records it.
#[test]
fn children_gained_since_the_save_are_spawned_on_load() {
    let old = library(CHEST);
    let mut world = World::new();
    old.spawn(&mut world, "chest").unwrap();
    let new = library(CHEST_GAINED);
    let json = save(&world, &old, SceneEncoding::Json);
    let compact =
        serde_json::to_vec(&serde_json::from_slice::<serde_json::Value>(&json).unwrap()).unwrap();
    for bytes in [
        json.clone(),
        save(&world, &old, SceneEncoding::Binary),
        compact,
    ] {
        let mut loaded_world = World::new();
        let loaded = load_into(
            &bytes,
            &mut loaded_world,
            &new,
            &SceneLoadOptions::default(),
        );
        assert_eq!(loaded.len(), 4, "root, lid, hinge, lock");
        let world = &loaded_world;
        let root = root_of(world, &loaded);
        let [lid, hinge, lock] = ["lid", "lid/hinge", "lock"].map(|p| at(world, &new, root, p));
        let (lid, hinge, lock) = (lid.unwrap(), hinge.unwrap(), lock.unwrap());
        let links = world.get::<&Links>(root).unwrap().clone();
        assert_eq!((links.target.0, links.all.len()), (lid, 1));
        assert_eq!(
            links.all[0].0, lock,
            "the root's reference to the gained child"
        );
        assert_eq!(world.get::<&Links>(lock).unwrap().target.0, root);
        assert_eq!(world.get::<&Parent>(hinge).unwrap().0 .0, lid);
        assert!(world
            .get::<&Children>(lid)
            .unwrap()
            .0
            .iter()
            .any(|c| c.0 == hinge));
        let id = |entity| *world.get::<&StableId>(entity).unwrap();
        let root_id = id(root);
        let spawned: Vec<(String, StableId)> = loaded
            .changes()
            .iter()
            .map(|change| match change {
                SceneChange::ChildSpawned {
                    instance,
                    archetype,
                    child,
                    id,
                } => {
                    assert_eq!((*instance, archetype.as_str()), (root_id, "chest"));
                    (child.clone(), *id)
                }
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(
            spawned,
            [
                ("lid/hinge".to_string(), id(hinge)),
                ("lock".to_string(), id(lock))
            ]
        );
        assert_eq!(
            loaded.changes()[1].to_string(),
            format!("entity {root_id}: spawned child `lock` ({}), which archetype `chest` gained since the scene was saved", id(lock))
        );
        // Saved again, the scene records the new children: a load changes nothing more.
        let again = save(world, &new, SceneEncoding::Json);
        let mut third = World::new();
        let reloaded = load_into(&again, &mut third, &new, &SceneLoadOptions::default());
        assert!(reloaded.changes().is_empty(), "{:?}", reloaded.changes());
        assert_eq!(save(&third, &new, SceneEncoding::Json), again);
    }
}

/// A child the game despawned on purpose stays despawned: the scene's archetype table says
/// the archetype had it when it was saved. (A file without the table cannot tell, and gets
/// it back.)
#[test]
fn a_child_despawned_before_the_save_is_not_brought_back() {
    let library = library(r#"{ "children": { "lid": { "components": { "Armor": {} } } } }"#);
    let mut world = World::new();
    let chest = library.spawn(&mut world, "chest").unwrap();
    let lid = world.get::<&Children>(chest).unwrap().0[0].0;
    world.despawn(lid).unwrap();
    world.get::<&mut Children>(chest).unwrap().0.clear();
    let saved = String::from_utf8(save(&world, &library, SceneEncoding::Json)).unwrap();
    assert!(
        saved.contains("\"archetypes\": {\n    \"chest\": [\n      \"lid\"\n    ]\n  },"),
        "{saved}"
    );
    let mut loaded = World::new();
    let scene = load_into(
        saved.as_bytes(),
        &mut loaded,
        &library,
        &SceneLoadOptions::default(),
    );
    assert_eq!((scene.len(), loaded.len()), (1, 1));
    assert!(scene.changes().is_empty());

    let without_table = saved.replace(
        "\n  \"archetypes\": {\n    \"chest\": [\n      \"lid\"\n    ]\n  },",
        "",
    );
    let mut loaded = World::new();
    let scene = load_into(
        without_table.as_bytes(),
        &mut loaded,
        &library,
        &SceneLoadOptions::default(),
    );
    assert_eq!((scene.len(), scene.changes().len()), (2, 1));
}

/// An entry for a child its archetype lost is left out, with its own children, and listed;
/// `RemovedChildren::Error` refuses the scene instead.
#[test]
fn entries_of_children_the_archetype_lost_are_left_out_and_listed() {
    let old = library(CHEST_GAINED);
    let mut world = World::new();
    old.spawn(&mut world, "chest").unwrap();
    let saved = save(&world, &old, SceneEncoding::Json);
    let new = library(CHEST);
    let mut loaded = World::new();
    let scene = load_into(&saved, &mut loaded, &new, &SceneLoadOptions::default());
    assert_eq!((scene.len(), loaded.len()), (2, 2), "root and lid");
    let mut left_out: Vec<&str> = Vec::new();
    let lines: Vec<String> = scene.warnings().iter().map(|w| w.to_string()).collect();
    for line in &lines {
        assert!(line.starts_with("save.scene.json:"), "{line}");
        let (_, message) = line.split_once(": left out; ").unwrap();
        left_out.push(message);
    }
    left_out.sort_unstable();
    assert_eq!(
        left_out,
        [
            "archetype `chest` has no child `lid/hinge` any more",
            "archetype `chest` has no child `lock` any more"
        ]
    );
    assert_eq!(scene.changes().len(), 2);
    let root = root_of(&loaded, &scene);
    assert_eq!(
        loaded.get::<&Children>(root).unwrap().0.len(),
        1,
        "only the lid"
    );
    let mut strict = SceneLoadOptions::default();
    strict.removed_children = RemovedChildren::Error;
    let mut refused = World::new();
    let file = Some(Path::new("save.scene.json"));
    let error = load_scene(&saved, file, &mut refused, &new, &strict).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("save.scene.json:"), "{message}");
    assert!(
        message.contains(": error[unknown-child]: entity "),
        "{message}"
    );
    assert!(
        message.ends_with(" any more (it had when the scene was saved); RemovedChildren::LeaveOut loads the scene without it"),
        "{message}"
    );
    assert_eq!(refused.len(), 0);
}

/// The game's `meta` is saved with the scene, comes back with it, and is read without loading
/// the scene, in both encodings.
#[test]
fn the_games_meta_is_saved_and_read_back_without_loading() {
    let library = library(CHEST);
    let mut world = World::new();
    library.spawn(&mut world, "chest").unwrap();
    let meta = json!({ "game_version": "1.4.0", "slot": "Autosave" });
    let mut options = SceneSaveOptions::default();
    options.meta = meta.as_object().cloned();
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let bytes = save_scene(&world, &library, encoding, &options).unwrap();
        let header = read_scene_header(&bytes).unwrap();
        assert_eq!(header.encoding, encoding);
        assert_eq!(header.meta.as_ref(), meta.as_object());
        assert_eq!(
            header.archetypes.unwrap()["chest"],
            ["lid".to_string()],
            "{encoding:?}"
        );
        let mut loaded = World::new();
        let scene = load_into(&bytes, &mut loaded, &library, &SceneLoadOptions::default());
        assert_eq!(scene.meta(), meta.as_object());
    }
    let text =
        String::from_utf8(save_scene(&world, &library, SceneEncoding::Json, &options).unwrap())
            .unwrap();
    assert!(
        text.starts_with("{\n  \"format\": 2,\n  \"meta\": {\n    \"game_version\": \"1.4.0\",\n    \"slot\": \"Autosave\"\n  },\n  \"archetypes\": {"),
        "{text}"
    );
}

/// Saves before "1.4" stored `Health.hp`; it is `Health.current` now.
fn hp_to_current(document: &mut serde_json::Value, _: &SceneHeader) -> Result<(), String> {
    let entities = document["entities"].as_array_mut().ok_or("no entities")?;
    for entity in entities {
        if let Some(health) = entity["components"].get_mut("Health") {
            if let Some(hp) = health.as_object_mut().and_then(|h| h.remove("hp")) {
                health["current"] = hp;
            }
        }
    }
    Ok(())
}

fn before_1_4(header: &SceneHeader) -> bool {
    let version = header
        .meta
        .as_ref()
        .and_then(|m| m["game_version"].as_str());
    version.is_none_or(|version| version < "1.4")
}

fn migrating(migration: SceneMigration) -> SceneLoadOptions {
    let mut options = SceneLoadOptions::default();
    options.migration = Some(migration);
    options
}

/// The game's migration hook runs on files in the current format too, before anything is
/// decoded, and only on those its `when` accepts (here: by the game version in `meta`).
#[test]
fn the_migration_hook_runs_on_every_load_it_applies_to() {
    let library = library(CHEST);
    let scene = |version: &str| {
        format!(
            r#"{{ "format": 2, "meta": {{ "game_version": "{version}" }}, "entities": [
              {{ "id": "00000000000000a1", "components": {{ "Health": {{ "hp": 5, "max": 10 }} }} }} ] }}"#
        )
    };
    let options = migrating(SceneMigration::new(hp_to_current).when(before_1_4));
    let mut world = World::new();
    let old = scene("1.3.2");
    let loaded = load_into(old.as_bytes(), &mut world, &library, &options);
    let entity = loaded.entity(StableId(0xa1)).unwrap();
    let health = world.get::<&Health>(entity).unwrap().clone();
    assert_eq!((health.current, health.max), (5.0, 10.0));
    assert_eq!(loaded.meta().unwrap()["game_version"], "1.3.2");
    // A file the hook does not apply to is read as it is: here, `hp` is a field `Health` lacks.
    let new = scene("1.4.0");
    let file = Some(Path::new("save.scene.json"));
    let error =
        load_scene(new.as_bytes(), file, &mut World::new(), &library, &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        "save.scene.json:2:69: error[invalid-component]: entity 00000000000000a1: `Health`: missing field `current`"
    );
    // An error from the hook refuses the scene, naming it.
    let failing = migrating(SceneMigration::new(|_, _| Err("no save slot".to_string())));
    let error =
        load_scene(old.as_bytes(), file, &mut World::new(), &library, &failing).unwrap_err();
    assert_eq!(
        error.to_string(),
        "save.scene.json: error[malformed]: the game's migration (from scene format 2) failed: no save slot"
    );
}

/// Binary scenes are given to the hook as the same JSON document (values read by their
/// registered types, references as stable IDs), and load to the same world as JSON does.
#[test]
fn the_migration_hook_sees_binary_scenes_as_json() {
    fn double_max(document: &mut serde_json::Value, _: &SceneHeader) -> Result<(), String> {
        for entity in document["entities"].as_array_mut().ok_or("no entities")? {
            if let Some(max) = entity["components"]["Health"]["max"].as_f64() {
                entity["components"]["Health"]["max"] = json!(max * 2.0);
            }
        }
        Ok(())
    }
    let library = library(CHEST);
    let mut world = World::new();
    let chest = library.spawn(&mut world, "chest").unwrap();
    world.spawn((
        StableId(0xb2),
        Health {
            current: 1.0,
            max: 4.0,
        },
    ));
    world
        .insert_one(
            chest,
            Health {
                current: 2.0,
                max: 3.0,
            },
        )
        .unwrap();
    let options = migrating(SceneMigration::new(double_max));
    let loaded = [SceneEncoding::Json, SceneEncoding::Binary].map(|encoding| {
        let mut loaded = World::new();
        let bytes = save(&world, &library, encoding);
        load_into(&bytes, &mut loaded, &library, &options);
        loaded
    });
    for world in &loaded {
        let mut maxes: Vec<f32> = world.query::<&Health>().iter().map(|h| h.max).collect();
        maxes.sort_by(f32::total_cmp);
        assert_eq!(maxes, [6.0, 8.0]);
    }
    let json = |world: &World| save(world, &library, SceneEncoding::Json);
    assert_eq!(json(&loaded[0]), json(&loaded[1]));
}

/// The component as an older version of the game had it.
mod v1 {
    #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
    pub struct Stats {
        pub hp: f32,
        pub armor: u8,
        pub speed: f32,
        pub mood: Mood,
    }

    #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
    pub enum Mood {
        Calm,
        Angry { at: String },
    }
}

/// The component now: `hp` renamed `health` (with an alias), `armor` gone (declared), a new
/// `luck` with a default, a new enum variant before the others, and the component itself
/// renamed `Attributes` (with its old name as an alias).
mod v2 {
    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    pub struct Attributes {
        #[serde(alias = "hp")]
        pub health: f32,
        pub speed: f32,
        #[serde(default)]
        pub luck: u8,
        pub mood: Mood,
    }

    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    pub enum Mood {
        Sleepy,
        Calm,
        Angry { at: String },
    }
}

fn stats_library(new: bool) -> ArchetypeLibrary {
    let mut registry = archetype_engine::ComponentRegistry::new();
    if new {
        let options = archetype_engine::ComponentOptions::new()
            .alias("Stats")
            .removed_field("armor");
        registry.register_with::<v2::Attributes>(options).unwrap();
    } else {
        registry.register::<v1::Stats>().unwrap();
    }
    ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default())
}

/// A component that gained a defaulted field, lost one, renamed one (serde alias), gained an
/// enum variant and was itself renamed (registry alias) loads from old saves, in JSON and
/// binary alike, to the same world. (Binary scenes keep each component's layout: the old
/// bytes are read by it.)
#[test]
fn an_evolved_component_loads_from_old_saves_in_both_encodings() {
    let old = stats_library(false);
    let mut world = World::new();
    for (id, angry) in [(1, false), (2, true)] {
        let mood = if angry {
            v1::Mood::Angry { at: "rats".into() }
        } else {
            v1::Mood::Calm
        };
        let stats = v1::Stats {
            hp: 10.0 + id as f32,
            armor: 3,
            speed: 2.5,
            mood,
        };
        world.spawn((StableId(id), stats));
    }
    let new = stats_library(true);
    let loaded = [SceneEncoding::Json, SceneEncoding::Binary].map(|encoding| {
        let bytes = save(&world, &old, encoding);
        let mut loaded = World::new();
        let scene = load_into(&bytes, &mut loaded, &new, &SceneLoadOptions::default());
        let mut attributes: Vec<(StableId, v2::Attributes)> = loaded
            .query::<(&StableId, &v2::Attributes)>()
            .iter()
            .map(|(id, a)| (*id, a.clone()))
            .collect();
        attributes.sort_by_key(|(id, _)| *id);
        assert_eq!(scene.len(), 2);
        attributes
    });
    let expected = [
        (StableId(1), 11.0, v2::Mood::Calm),
        (StableId(2), 12.0, v2::Mood::Angry { at: "rats".into() }),
    ]
    .map(|(id, health, mood)| {
        let attributes = v2::Attributes {
            health,
            speed: 2.5,
            luck: 0,
            mood,
        };
        (id, attributes)
    });
    assert_eq!(loaded[0], expected, "JSON");
    assert_eq!(loaded[1], expected, "binary");
}

/// When an old binary value truly cannot be read by the type now, the error names the file,
/// the entity, the component and what changed, never "corrupt binary value".
#[test]
fn an_old_value_the_type_cannot_read_any_more_is_named() {
    #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
    struct Stats {
        hp: f32,
        armor: u8,
        speed: String,
        mood: v2::Mood,
    }
    let old = stats_library(false);
    let mut world = World::new();
    let stats = v1::Stats {
        hp: 1.0,
        armor: 3,
        speed: 2.5,
        mood: v1::Mood::Calm,
    };
    world.spawn((StableId(7), stats));
    let bytes = save(&world, &old, SceneEncoding::Binary);
    let mut registry = archetype_engine::ComponentRegistry::new();
    registry.register::<Stats>().unwrap();
    let new = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
    let file = Some(Path::new("old.scene.bin"));
    let options = SceneLoadOptions::default();
    let error = load_scene(&bytes, file, &mut World::new(), &new, &options).unwrap_err();
    let offset = error.offset().unwrap();
    assert_eq!(
        error.to_string(),
        format!("old.scene.bin (byte {offset}): error[invalid-component]: entity 0000000000000007: `Stats.speed`: invalid type: floating point `2.5`, expected a string (the component changed since the scene was saved)")
    );
}

// ---------------------------------------------------------------------------------------------
// The save-compatibility suite: saves written by the demo as it was, loaded after the kind of
// changes a game update makes. These fixtures are never regenerated: they are the promise to
// players that their saves keep loading.

mod suite {
    use std::path::{Path, PathBuf};

    use archetool::demo::components as demo;
    use archetype_engine::{
        load_scene, save_scene, ArchetypeLibrary, ComponentOptions, ComponentRegistry, LoadOptions,
        SceneChange, SceneEncoding, SceneLoadOptions, SceneSaveOptions, StableId,
    };
    use hecs::World;
    use serde::{Deserialize, Serialize};

    /// The saves: the demo's arena as a game saves it (instances as patches) and as a full
    /// save (every value written), each in JSON and binary.
    const SAVES: [&str; 4] = [
        "arena.scene.json",
        "arena.scene.bin",
        "arena-full.scene.json",
        "arena-full.scene.bin",
    ];

    fn saves() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/saves/demo-0.1")
    }

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// Writes the saves, once: it refuses to replace one (they must never change).
    #[test]
    #[ignore = "writes tests/fixtures/saves once; they are never regenerated"]
    fn write_compat_saves() {
        let library = ArchetypeLibrary::load(repo().join("archetypes"), demo::registry()).unwrap();
        let mut world = World::new();
        let options = SceneLoadOptions::default();
        let arena = std::fs::read(repo().join("assets/scenes/arena.scene.json")).unwrap();
        load_scene(&arena, None, &mut world, &library, &options).unwrap();
        std::fs::create_dir_all(saves()).unwrap();
        for name in SAVES {
            let path = saves().join(name);
            assert!(
                !path.exists(),
                "{} exists: saves are never regenerated",
                path.display()
            );
            let mut options = SceneSaveOptions::default();
            options.full = name.contains("full");
            options.meta = serde_json::json!({ "game_version": "0.1.0" })
                .as_object()
                .cloned();
            let encoding = SceneEncoding::for_path(&path);
            let bytes = save_scene(&world, &library, encoding, &options).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }

    /// Loads a save with `library`; returns the world and what the load changed.
    fn load(name: &str, library: &ArchetypeLibrary) -> (World, Vec<SceneChange>, usize) {
        let bytes = std::fs::read(saves().join(name)).unwrap();
        let mut world = World::new();
        let file = Some(Path::new(name));
        let loaded = load_scene(
            &bytes,
            file,
            &mut world,
            library,
            &SceneLoadOptions::default(),
        )
        .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!(loaded.meta().unwrap()["game_version"], "0.1.0", "{name}");
        (world, loaded.changes().to_vec(), loaded.warnings().len())
    }

    /// The world as JSON (a full save, so every value shows), to compare worlds.
    fn as_json(world: &World, library: &ArchetypeLibrary) -> String {
        let mut options = SceneSaveOptions::default();
        options.full = true;
        String::from_utf8(save_scene(world, library, SceneEncoding::Json, &options).unwrap())
            .unwrap()
    }

    /// A copy of the demo's archetypes, with `edit` applied to the named files.
    fn archetypes(edits: &[(&str, &dyn Fn(String) -> String)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        crate::support::copy_tree(&repo().join("archetypes"), dir.path());
        for (file, edit) in edits {
            let path = dir.path().join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let edited = edit(text.clone());
            assert_ne!(edited, text, "{file}: the edit changed nothing");
            std::fs::write(path, edited).unwrap();
        }
        dir
    }

    #[test]
    fn the_saves_load_today_and_every_encoding_gives_the_same_world() {
        let library = ArchetypeLibrary::load(repo().join("archetypes"), demo::registry()).unwrap();
        let worlds: Vec<String> = SAVES
            .iter()
            .map(|name| {
                let (world, changes, warnings) = load(name, &library);
                assert!(changes.is_empty() && warnings == 0, "{name}: {changes:?}");
                as_json(&world, &library)
            })
            .collect();
        assert!(worlds.iter().all(|world| *world == worlds[0]));
        assert!(worlds[0].matches("\"id\": ").count() > 20);
    }

    /// The update: the turret lost its sensor (it aims with its gun) and gained a scope.
    #[test]
    fn the_saves_load_after_their_archetypes_gained_and_lost_children() {
        let sensor_gone = |text: String| {
            text.replace("\"sensor\": \"#sensor\"", "\"sensor\": \"#gun\"")
                .replace("\"sensor\": {", "\"scope\": {")
        };
        let heavy_sensor_gone = |text: String| {
            text.replace(
                ",\n    \"sensor\": {\n      \"components\": {\n        \"Sensor\": { \"range\": 12 }\n      }\n    }",
                "",
            )
        };
        let dir = archetypes(&[
            ("structures/turret.json", &sensor_gone),
            ("structures/heavy_turret.json", &heavy_sensor_gone),
        ]);
        let library = ArchetypeLibrary::load(dir.path(), demo::registry()).unwrap();
        let mut worlds = Vec::new();
        for name in SAVES {
            let (world, changes, warnings) = load(name, &library);
            let spawned = changes
                .iter()
                .filter(
                    |c| matches!(c, SceneChange::ChildSpawned { child, .. } if child == "scope"),
                )
                .count();
            let left_out = changes
                .iter()
                .filter(
                    |c| matches!(c, SceneChange::EntryLeftOut { child, .. } if child == "sensor"),
                )
                .count();
            // The arena has turrets and a heavy turret, which extends the turret.
            assert!(spawned >= 1 && spawned == left_out, "{name}: {changes:?}");
            assert_eq!(warnings, left_out, "{name}");
            for turret in world.query::<&demo::Turret>().iter() {
                if name.contains("full") {
                    // A full save keeps the value it saved: its reference to the sensor now
                    // points at no entity, as if the game had despawned the sensor.
                    assert!(!world.contains(turret.sensor.0), "{name}");
                } else {
                    // A save of differences takes the archetype's new value.
                    assert_eq!(turret.sensor, turret.gun, "{name}: it aims with its gun");
                }
            }
            worlds.push(world);
        }
        // Every save, whatever its encoding, gives a world of the same shape.
        let counts: Vec<u32> = worlds.iter().map(World::len).collect();
        assert!(counts.iter().all(|count| *count == counts[0]), "{counts:?}");
    }

    /// The update: the goblin moved to `enemies/goblins/goblin` (listing its old name under
    /// `formerly`; the archetypes that extend it still name the old one), and the turret's
    /// `gun` is its `barrel` (listing `gun`). Every save loads, to the world it gives today
    /// under the new names; saving it again writes them.
    #[test]
    fn the_saves_load_after_an_archetype_and_a_child_were_renamed() {
        let gun_to_barrel = |text: String| {
            text.replace("\"#gun\"", "\"#barrel\"").replace(
                "\"gun\": {\n      \"archetype\"",
                "\"barrel\": {\n      \"formerly\": [\"gun\"],\n      \"archetype\"",
            )
        };
        let heavy_gun_to_barrel = |text: String| text.replace("\"gun\": {", "\"barrel\": {");
        let dir = archetypes(&[
            ("structures/turret.json", &gun_to_barrel),
            ("structures/heavy_turret.json", &heavy_gun_to_barrel),
        ]);
        let goblin = std::fs::read_to_string(dir.path().join("enemies/goblin.json")).unwrap();
        std::fs::remove_file(dir.path().join("enemies/goblin.json")).unwrap();
        std::fs::create_dir(dir.path().join("enemies/goblins")).unwrap();
        std::fs::write(
            dir.path().join("enemies/goblins/goblin.json"),
            goblin.replacen('{', "{\n  \"formerly\": [\"enemies/goblin\"],", 1),
        )
        .unwrap();
        let library = ArchetypeLibrary::load(dir.path(), demo::registry()).unwrap();
        let old_names = library
            .diagnostics()
            .iter()
            .filter(|d| d.code == archetype_engine::DiagnosticCode::OldName)
            .count();
        assert_eq!(
            old_names, 2,
            "goblin_archer and goblin_chief extend the old name"
        );
        let today = ArchetypeLibrary::load(repo().join("archetypes"), demo::registry()).unwrap();
        for name in SAVES {
            let (world, changes, warnings) = load(name, &library);
            let renamed = |change: &SceneChange| match change {
                SceneChange::ArchetypeRenamed { from, to, .. } => {
                    format!("{from} -> {to}")
                }
                SceneChange::ChildRenamed {
                    archetype,
                    from,
                    to,
                    ..
                } => format!("{archetype}: {from} -> {to}"),
                other => panic!("{name}: {other}"),
            };
            let mut changes: Vec<String> = changes.iter().map(renamed).collect();
            changes.sort();
            assert_eq!(
                changes,
                [
                    "enemies/goblin -> enemies/goblins/goblin",
                    "structures/heavy_turret: gun -> barrel",
                    "structures/turret: gun -> barrel",
                ],
                "{name}"
            );
            assert_eq!(warnings, 3, "{name}");
            let (world_today, ..) = load(name, &today);
            let mut expected: serde_json::Value =
                serde_json::from_str(&as_json(&world_today, &today)).unwrap();
            for entity in expected["entities"].as_array_mut().unwrap() {
                if entity["archetype"] == "enemies/goblin" {
                    entity["archetype"] = "enemies/goblins/goblin".into();
                }
                if entity["child"] == "gun" {
                    entity["child"] = "barrel".into();
                }
            }
            let saved = as_json(&world, &library);
            let actual: serde_json::Value = serde_json::from_str(&saved).unwrap();
            assert_eq!(actual["entities"], expected["entities"], "{name}");
            let table = actual["archetypes"].as_object().unwrap();
            assert!(!table.contains_key("enemies/goblin"), "{name}");
            assert_eq!(
                table["structures/turret"],
                serde_json::json!(["barrel", "sensor"]),
                "{name}"
            );
        }
    }

    /// The components after the update.
    mod update {
        use super::*;
        use archetype_engine::EntityRef;

        /// `regen` is new (with a default).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct Health {
            pub current: f32,
            pub max: f32,
            #[serde(default)]
            pub regen: f32,
        }

        /// `distance` is gone (declared removed).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct Follow {
            #[serde(default)]
            pub leader: Option<EntityRef>,
        }

        /// `ch` is now `symbol` (with the old name as an alias).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct Glyph {
            #[serde(alias = "ch")]
            pub symbol: char,
            pub color: demo::Color,
        }

        /// `Speed` is now `Pace` (registered with the old name as an alias).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct Pace {
            pub value: f32,
        }

        /// `Hostile` is now `Enemy` (with the old name as an alias).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum Faction {
            #[serde(alias = "Hostile")]
            Enemy,
            Friendly,
            Neutral,
        }

        /// The demo's registry after the update.
        pub fn registry() -> ComponentRegistry {
            let mut registry = ComponentRegistry::new();
            let named = |name: &str| ComponentOptions::new().name(name);
            registry.register_with::<Glyph>(named("Glyph")).unwrap();
            registry.register_with::<Health>(named("Health")).unwrap();
            let pace = ComponentOptions::new().alias("Speed").alias("MoveSpeed");
            registry.register_with::<Pace>(pace).unwrap();
            registry.register_with::<Faction>(named("Faction")).unwrap();
            let follow = named("Follow").removed_field("distance");
            registry.register_with::<Follow>(follow).unwrap();
            registry.register::<demo::Melee>().unwrap();
            registry.register::<demo::Ranged>().unwrap();
            registry.register::<demo::Projectile>().unwrap();
            registry.register::<demo::Velocity>().unwrap();
            registry.register::<demo::Armor>().unwrap();
            registry.register::<demo::Loot>().unwrap();
            registry.register::<demo::Leader>().unwrap();
            registry.register::<demo::Spawner>().unwrap();
            registry.register::<demo::Turret>().unwrap();
            registry.register::<demo::Sensor>().unwrap();
            registry.register::<demo::Door>().unwrap();
            registry.register::<demo::Key>().unwrap();
            registry.register::<demo::Stance>().unwrap();
            registry.register::<demo::Portrait>().unwrap();
            registry.register::<demo::Boss>().unwrap();
            let target = ComponentOptions::new().runtime_only();
            registry.register_with::<demo::Target>(target).unwrap();
            registry
        }
    }

    /// The update: a field added (`Health.regen`), a field removed (`Follow.distance`), a
    /// field renamed (`Glyph.ch` → `symbol`), a component renamed (`Speed` → `Pace`), an enum
    /// variant renamed (`Hostile` → `Enemy`). Every save loads, each encoding to the same world.
    #[test]
    fn the_saves_load_after_their_components_changed() {
        let no_distance =
            |text: String| text.replace("\"Follow\": { \"distance\": 2 }", "\"Follow\": {}");
        let dir = archetypes(&[("allies/soldier.json", &no_distance)]);
        let library = ArchetypeLibrary::load(dir.path(), update::registry()).unwrap();
        let worlds: Vec<String> = SAVES
            .iter()
            .map(|name| {
                let (world, changes, warnings) = load(name, &library);
                assert!(changes.is_empty() && warnings == 0, "{name}: {changes:?}");
                let factions: Vec<update::Faction> =
                    world.query::<&update::Faction>().iter().copied().collect();
                assert!(factions.contains(&update::Faction::Enemy), "{name}");
                let glyphs: Vec<char> = world
                    .query::<&update::Glyph>()
                    .iter()
                    .map(|g| g.symbol)
                    .collect();
                assert!(glyphs.contains(&'g'), "{name}: the goblins' glyph");
                assert!(world.query::<&update::Pace>().iter().count() > 10, "{name}");
                assert!(world
                    .query::<&update::Health>()
                    .iter()
                    .all(|h| h.regen == 0.0));
                assert!(world
                    .query::<&update::Follow>()
                    .iter()
                    .any(|f| f.leader.is_some()));
                as_json(&world, &library)
            })
            .collect();
        for (name, world) in SAVES.iter().zip(&worlds) {
            assert!(*world == worlds[0], "{name} differs from {}", SAVES[0]);
        }
        let _ = StableId(0);
        let _ = LoadOptions::default();
    }
}
