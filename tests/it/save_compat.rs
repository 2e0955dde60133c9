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
    let offset = error.offset.unwrap();
    assert_eq!(
        error.to_string(),
        format!("old.scene.bin (byte {offset}): error[invalid-component]: entity 0000000000000007: `Stats.speed`: invalid type: floating point `2.5`, expected a string (the component changed since the scene was saved)")
    );
}
