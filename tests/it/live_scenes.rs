//! Live scenes: a scene file (and every sub-scene it places) kept in step with the world it was
//! loaded into, with real files, the real watcher and editors' ways of saving.
//!
//! Every wait is bounded: `settle` polls `apply` (as a game does each frame) until the world
//! shows the expected state, and fails with what it saw after `TIMEOUT`.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use archetype_engine::{
    save_scene, sub_scene_id, ArchetypeInstance, ArchetypeLibrary, EntityRef, HotReloadOptions,
    IdConflict, LiveScene, LiveSceneReport, LoadOptions, Name, SceneEncoding, SceneLoadOptions,
    SceneSaveOptions, StableId,
};
use hecs::{Entity, World};

use crate::support::{registry, Armor, Health, Links};

const TIMEOUT: Duration = Duration::from_secs(10);

/// A guard (linked to its post), the post, and a crate of the `crate` archetype.
fn level(guard_max: u32, guard_name: &str, extra: &str) -> String {
    format!(
        r#"{{
  "format": 2,
  "entities": [
    {{ "id": "00000000000000a1", "components": {{ "Name": "{guard_name}", "Health": {{ "current": 10, "max": {guard_max} }}, "Links": {{ "target": "00000000000000a2" }} }} }},
    {{ "id": "00000000000000a2", "components": {{ "Name": "post" }} }},
    {{ "id": "00000000000000a3", "archetype": "crate" }}{extra}
  ]
}}"#
    )
}

const CRATE: &str =
    r#"{ "components": { "Name": "crate", "Health": { "current": 5, "max": 5 } } }"#;

/// A running "game": a directory with a library and a level, the world, the live scene.
struct Game {
    dir: tempfile::TempDir,
    library: ArchetypeLibrary,
    world: World,
    scene: LiveScene,
}

impl Game {
    fn start(files: &[(&str, &str)], top: &str, watch: bool) -> Game {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("archetypes")).unwrap();
        fs::write(dir.path().join("archetypes/crate.json"), CRATE).unwrap();
        for (path, text) in files {
            let path = dir.path().join("scenes").join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let library = ArchetypeLibrary::load(dir.path().join("archetypes"), registry()).unwrap();
        let mut world = World::new();
        let top = dir.path().join("scenes").join(top);
        let options = SceneLoadOptions::default();
        let (mut scene, _) = LiveScene::load(&top, &mut world, &library, &options).unwrap();
        if watch {
            scene.watch(HotReloadOptions::default()).unwrap();
        }
        Game {
            dir,
            library,
            world,
            scene,
        }
    }

    fn level(watch: bool) -> Game {
        Game::start(
            &[("level.scene.json", &level(10, "guard", ""))],
            "level.scene.json",
            watch,
        )
    }

    /// A file under the scenes directory.
    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join("scenes").join(relative)
    }

    fn entity(&self, id: u64) -> Entity {
        self.scene
            .entity(StableId(id))
            .unwrap_or_else(|| panic!("no entity {id:x} in the scene"))
    }

    fn name(&self, entity: Entity) -> String {
        self.world
            .get::<&Name>(entity)
            .unwrap()
            .as_str()
            .to_string()
    }

    fn health(&self, entity: Entity) -> (f32, f32) {
        let health = self.world.get::<&Health>(entity).unwrap();
        (health.current, health.max)
    }

    fn reload(&mut self) -> LiveSceneReport {
        self.scene.reload(&mut self.world, &self.library)
    }

    /// Runs frames until `done` holds; returns every non-empty report seen.
    fn settle(&mut self, what: &str, done: impl Fn(&Game) -> bool) -> Vec<String> {
        let started = Instant::now();
        let mut reports = Vec::new();
        loop {
            let report = self.scene.apply(&mut self.world, &self.library);
            if !report.is_empty() {
                reports.push(report.to_string());
            }
            if done(self) {
                return reports;
            }
            assert!(
                started.elapsed() < TIMEOUT,
                "timed out waiting for {what}; reports: {reports:#?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The report text with the temp dir shown as `game`.
    fn shown(&self, text: &str) -> String {
        text.replace(&self.dir.path().display().to_string(), "game")
    }
}

#[test]
fn an_edit_writes_only_the_fields_the_file_changed_and_keeps_runtime_state() {
    let mut game = Game::level(false);
    let guard = game.entity(0xa1);
    // Play: the guard is wounded.
    game.world.get::<&mut Health>(guard).unwrap().current = 3.0;
    fs::write(game.path("level.scene.json"), level(25, "captain", "")).unwrap();
    let report = game.reload();
    assert_eq!(
        report.to_string(),
        "scene edit applied: 0 spawned, 0 despawned, 1 updated"
    );
    // Same entity, new max and name, still wounded.
    assert_eq!(game.entity(0xa1), guard);
    assert_eq!(game.health(guard), (3.0, 25.0));
    assert_eq!(game.name(guard), "captain");
    // The untouched crate kept its values.
    assert_eq!(game.health(game.entity(0xa3)), (5.0, 5.0));
    // Nothing changed in the file: nothing to do.
    assert!(game.reload().is_empty());
}

#[test]
fn entities_added_to_the_file_are_spawned_and_removed_ones_despawned() {
    let mut game = Game::level(false);
    let post = game.entity(0xa2);
    let extra = r#",
    { "id": "00000000000000b1", "components": { "Name": "beacon", "Links": { "target": "00000000000000a2" } } },
    { "id": "00000000000000b2", "archetype": "crate", "components": { "Name": "big crate" } }"#;
    fs::write(game.path("level.scene.json"), level(10, "guard", extra)).unwrap();
    let report = game.reload();
    assert_eq!(
        (report.spawned(), report.despawned(), report.updated()),
        (2, 0, 0)
    );
    let beacon = game.entity(0xb1);
    assert_eq!(game.name(beacon), "beacon");
    assert_eq!(
        *game.world.get::<&StableId>(beacon).unwrap(),
        StableId(0xb1)
    );
    // The new entity's reference is to the live post.
    assert_eq!(
        game.world.get::<&Links>(beacon).unwrap().target,
        EntityRef(post)
    );
    let big = game.entity(0xb2);
    assert_eq!(game.name(big), "big crate");
    assert_eq!(game.health(big), (5.0, 5.0));
    assert_eq!(game.world.len(), 5);

    // Taken out again, with the crate.
    let without_crate = level(10, "guard", "").replace(
        r#",
    { "id": "00000000000000a3", "archetype": "crate" }"#,
        "",
    );
    fs::write(game.path("level.scene.json"), without_crate).unwrap();
    let report = game.reload();
    assert_eq!((report.spawned(), report.despawned()), (0, 3));
    assert!(!game.world.contains(beacon) && !game.world.contains(big));
    assert_eq!(game.scene.entity(StableId(0xa3)), None);
    assert_eq!(game.world.len(), 2);
}

#[test]
fn a_reference_changed_to_an_added_entity_points_at_it_live() {
    let mut game = Game::level(false);
    let guard = game.entity(0xa1);
    let text = level(
        10,
        "guard",
        r#",
    { "id": "00000000000000c1", "components": { "Name": "tower" } }"#,
    )
    .replace(
        r#""Links": { "target": "00000000000000a2" }"#,
        r#""Links": { "target": "00000000000000c1" }"#,
    );
    fs::write(game.path("level.scene.json"), text).unwrap();
    let report = game.reload();
    assert_eq!((report.spawned(), report.updated()), (1, 1), "{report}");
    let tower = game.entity(0xc1);
    assert_eq!(
        game.world.get::<&Links>(guard).unwrap().target,
        EntityRef(tower)
    );
}

#[test]
fn the_games_own_entities_are_never_touched_and_a_despawned_one_is_not_brought_back() {
    let mut game = Game::level(false);
    // The game's own entity, with a stable ID and a name like the scene's.
    let health = Health {
        current: 1.0,
        max: 1.0,
    };
    let own = game
        .world
        .spawn((StableId(0xf1), Name::from("guard"), health));
    // And one of the scene's entities it destroyed.
    let post = game.entity(0xa2);
    game.world.despawn(post).unwrap();
    // A reference from the game's entity to the guard stays valid across the edit.
    let guard = game.entity(0xa1);
    game.world
        .insert_one(
            own,
            Links {
                target: EntityRef(guard),
                backup: None,
                all: Vec::new(),
            },
        )
        .unwrap();
    let text = level(99, "guard", "").replace(r#""Name": "post""#, r#""Name": "ruined post""#);
    fs::write(game.path("level.scene.json"), text).unwrap();
    let report = game.reload();
    assert!(report.error().is_none(), "{report}");
    assert_eq!(game.health(own), (1.0, 1.0));
    assert_eq!(game.name(own), "guard");
    assert_eq!(
        game.world.get::<&Links>(own).unwrap().target,
        EntityRef(guard)
    );
    assert!(!game.world.contains(post));
    assert_eq!(game.health(guard), (10.0, 99.0));
    assert_eq!(game.world.len(), 3);
}

#[test]
fn a_broken_edit_changes_nothing_and_says_where_then_the_fix_applies() {
    let mut game = Game::level(false);
    let guard = game.entity(0xa1);
    let broken = level(25, "guard", "").replace(r#""max": 25"#, r#""max": "lots""#);
    fs::write(game.path("level.scene.json"), broken).unwrap();
    let report = game.reload();
    let error = report.error().expect("the edit is refused");
    assert_eq!(
        game.shown(&error.to_string()),
        "game/scenes/level.scene.json:4:100: error[invalid-component]: entity 00000000000000a1: `Health.max`: invalid type: string \"lots\", expected f32"
    );
    assert_eq!(game.health(guard), (10.0, 10.0));
    // The last good version stays the baseline: the fix applies against it.
    fs::write(game.path("level.scene.json"), level(25, "guard", "")).unwrap();
    let report = game.reload();
    assert_eq!(report.updated(), 1, "{report}");
    assert_eq!(game.health(guard), (10.0, 25.0));
}

#[test]
fn editors_saves_are_seen_by_the_watcher_and_applied_within_frames() {
    let mut game = Game::level(true);
    let guard = game.entity(0xa1);
    let file = game.path("level.scene.json");
    // Written in place.
    fs::write(&file, level(11, "guard", "")).unwrap();
    game.settle("a write in place", |g| g.health(guard).1 == 11.0);
    // A new file renamed over the old one (VS Code, JetBrains, most atomic saves).
    let temporary = game.path(".level.scene.json.tmp");
    fs::write(&temporary, level(12, "guard", "")).unwrap();
    fs::rename(&temporary, &file).unwrap();
    game.settle("a rename over", |g| g.health(guard).1 == 12.0);
    // Deleted, then created again.
    fs::remove_file(&file).unwrap();
    fs::write(&file, level(13, "guard", "")).unwrap();
    game.settle("a delete and create", |g| g.health(guard).1 == 13.0);
    // A broken save keeps the scene running, and the report says why.
    fs::write(&file, "{ \"format\": 2, \"entities\": [").unwrap();
    let started = Instant::now();
    let error = loop {
        let report = game.scene.apply(&mut game.world, &game.library);
        if let Some(error) = report.error() {
            break error.to_string();
        }
        assert!(
            started.elapsed() < TIMEOUT,
            "the broken save was not reported"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(
        game.shown(&error),
        "game/scenes/level.scene.json:1:28: error[syntax]: unexpected end of file while parsing a list"
    );
    assert_eq!(game.health(guard), (10.0, 13.0));
    // The fix applies.
    fs::write(&file, level(14, "sentry", "")).unwrap();
    game.settle("the fix", |g| {
        g.health(guard).1 == 14.0 && g.name(guard) == "sentry"
    });
}

/// The post, placed twice by the level: its guard links to it.
const POST: &str = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "components": { "Name": "guard", "Health": { "current": 10, "max": 10 }, "Links": { "target": "00000000000000a2" } } },
    { "id": "00000000000000a2", "components": { "Name": "post" } }
  ]
}"#;

const TWO_POSTS: &str = r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000c1", "scene": "rooms/post.scene.json", "components": { "Name": "east" } },
    { "id": "00000000000000c2", "scene": "rooms/post.scene.json", "components": { "Name": "west" } }
  ]
}"#;

#[test]
fn an_edit_of_a_sub_scene_placed_twice_updates_both_placements() {
    let mut game = Game::start(
        &[
            ("rooms/post.scene.json", POST),
            ("level.scene.json", TWO_POSTS),
        ],
        "level.scene.json",
        true,
    );
    assert_eq!(game.scene.files().len(), 2);
    let guards: Vec<Entity> = [0xc1, 0xc2]
        .iter()
        .map(|placing| game.entity(sub_scene_id(StableId(*placing), StableId(0xa1)).0))
        .collect();
    game.world.get::<&mut Health>(guards[0]).unwrap().current = 2.0;
    let edited = POST.replace(r#""max": 10"#, r#""max": 30"#).replace(
        r#"{ "id": "00000000000000a2", "components": { "Name": "post" } }"#,
        r#"{ "id": "00000000000000a2", "components": { "Name": "post" } },
    { "id": "00000000000000a3", "components": { "Name": "flag" } }"#,
    );
    fs::write(game.path("rooms/post.scene.json"), edited).unwrap();
    game.settle("both placements", |g| {
        guards.iter().all(|guard| g.health(*guard).1 == 30.0)
    });
    assert_eq!(game.health(guards[0]), (2.0, 30.0));
    assert_eq!(game.health(guards[1]), (10.0, 30.0));
    // Each placement got its flag, under its derived ID, and links stay inside each copy.
    for placing in [0xc1, 0xc2] {
        let flag = game.entity(sub_scene_id(StableId(placing), StableId(0xa3)).0);
        assert_eq!(game.name(flag), "flag");
        let guard = game.entity(sub_scene_id(StableId(placing), StableId(0xa1)).0);
        let post = game.entity(sub_scene_id(StableId(placing), StableId(0xa2)).0);
        assert_eq!(
            game.world.get::<&Links>(guard).unwrap().target,
            EntityRef(post)
        );
    }
    assert_eq!(game.world.len(), 2 + 2 * 3);
}

#[test]
fn a_scene_not_watched_applies_nothing_and_says_so_by_an_empty_report() {
    let mut game = Game::level(false);
    fs::write(game.path("level.scene.json"), level(25, "guard", "")).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(game.scene.apply(&mut game.world, &game.library).is_empty());
    let guard = game.entity(0xa1);
    assert_eq!(game.health(guard), (10.0, 10.0));
}

#[test]
fn an_added_entity_whose_id_the_game_took_is_refused_by_name_and_the_rest_applies() {
    let mut game = Game::level(false);
    let own = game.world.spawn((StableId(0xb1), Name::from("the game's")));
    let extra = r#",
    { "id": "00000000000000b1", "components": { "Name": "beacon" } },
    { "id": "00000000000000b2", "components": { "Name": "flare" } }"#;
    fs::write(game.path("level.scene.json"), level(10, "guard", extra)).unwrap();
    let report = game.reload();
    let failures: Vec<String> = report.failures().iter().map(|f| f.to_string()).collect();
    assert_eq!(
        failures,
        ["entity 00000000000000b1: the world has an entity with this stable ID already; load with IdConflict::Remap to give new entities fresh IDs"]
    );
    assert_eq!(report.spawned(), 1);
    assert_eq!(game.name(game.entity(0xb2)), "flare");
    assert_eq!(game.scene.entity(StableId(0xb1)), None);
    assert_eq!(game.name(own), "the game's");
    assert_eq!(game.world.len(), 5);
}

const BARREL: &str = r#"{ "components": { "Name": "barrel", "Armor": { "value": 2 } } }"#;

#[test]
fn an_instances_override_and_archetype_edits_reach_its_marker_and_components() {
    let mut game = Game::start(
        &[("level.scene.json", &level(10, "guard", ""))],
        "level.scene.json",
        false,
    );
    fs::write(game.dir.path().join("archetypes/barrel.json"), BARREL).unwrap();
    game.library = ArchetypeLibrary::load(game.dir.path().join("archetypes"), registry()).unwrap();
    let crate_ = game.entity(0xa3);
    game.world.get::<&mut Health>(crate_).unwrap().current = 1.0;
    // An override of the instance's name.
    let renamed = level(10, "guard", "").replace(
        r#"{ "id": "00000000000000a3", "archetype": "crate" }"#,
        r#"{ "id": "00000000000000a3", "archetype": "crate", "components": { "Name": "big crate" } }"#,
    );
    fs::write(game.path("level.scene.json"), &renamed).unwrap();
    let report = game.reload();
    assert_eq!(report.updated(), 1, "{report}");
    assert_eq!(game.name(crate_), "big crate");
    assert_eq!(game.health(crate_), (1.0, 5.0));
    let marker = *game.world.get::<&ArchetypeInstance>(crate_).unwrap();
    let overrides = game
        .library
        .instance_overrides(&marker)
        .expect("an override");
    assert_eq!(
        serde_json::to_string(&*overrides.0).unwrap(),
        r#"{"Name":true}"#
    );
    // The same entry, now a barrel: its marker and components follow the new archetype.
    let barrel = renamed.replace(
        r#""archetype": "crate", "components": { "Name": "big crate" }"#,
        r#""archetype": "barrel""#,
    );
    fs::write(game.path("level.scene.json"), barrel).unwrap();
    let report = game.reload();
    assert_eq!(report.updated(), 1, "{report}");
    let marker = *game.world.get::<&ArchetypeInstance>(crate_).unwrap();
    assert_eq!(game.library.name_of(marker.archetype), Some("barrel"));
    assert_eq!(game.name(crate_), "barrel");
    assert!(
        game.world.get::<&Health>(crate_).is_err(),
        "a barrel has no health"
    );
    assert_eq!(game.world.get::<&Armor>(crate_).unwrap().value, 2.0);
}

#[test]
fn a_binary_level_follows_its_edits_too() {
    let dir = tempfile::tempdir().unwrap();
    let library = ArchetypeLibrary::empty(dir.path(), registry(), LoadOptions::default());
    let mut authored = World::new();
    let post = authored.spawn((StableId(0xa2), Name::from("post")));
    let guard = Health {
        current: 10.0,
        max: 10.0,
    };
    authored.spawn((StableId(0xa1), Name::from("guard"), guard));
    let save = |world: &World| {
        save_scene(
            world,
            &library,
            SceneEncoding::Binary,
            &SceneSaveOptions::default(),
        )
        .unwrap()
    };
    let file = dir.path().join("level.scene.bin");
    fs::write(&file, save(&authored)).unwrap();
    let mut world = World::new();
    let options = SceneLoadOptions::default();
    let (mut scene, _) = LiveScene::load(&file, &mut world, &library, &options).unwrap();
    let live_guard = scene.entity(StableId(0xa1)).unwrap();
    world.get::<&mut Health>(live_guard).unwrap().current = 4.0;
    // The authoring tool renames the post and raises the guard's max, then saves.
    *authored.get::<&mut Name>(post).unwrap() = Name::from("watchtower");
    for health in authored.query_mut::<&mut Health>() {
        health.max = 40.0;
    }
    fs::write(&file, save(&authored)).unwrap();
    let report = scene.reload(&mut world, &library);
    assert_eq!(report.updated(), 2, "{report}");
    let live_post = scene.entity(StableId(0xa2)).unwrap();
    assert_eq!(
        world.get::<&Name>(live_post).unwrap().as_str(),
        "watchtower"
    );
    let health = world.get::<&Health>(live_guard).unwrap();
    assert_eq!((health.current, health.max), (4.0, 40.0));
}

#[test]
fn a_level_loaded_twice_with_fresh_ids_follows_its_file_in_both_copies() {
    let mut game = Game::level(false);
    let mut options = SceneLoadOptions::default();
    options.on_id_conflict = IdConflict::Remap;
    let file = game.path("level.scene.json");
    let (mut copy, loaded) =
        LiveScene::load(&file, &mut game.world, &game.library, &options).unwrap();
    let copied_guard = copy.entity(StableId(0xa1)).unwrap();
    assert_ne!(copied_guard, game.entity(0xa1));
    let fresh = *game.world.get::<&StableId>(copied_guard).unwrap();
    assert_eq!(loaded.new_id(StableId(0xa1)), Some(fresh));
    let extra = r#",
    { "id": "00000000000000b1", "components": { "Name": "beacon", "Links": { "target": "00000000000000a1" } } }"#;
    fs::write(&file, level(30, "guard", extra)).unwrap();
    let first = game.reload();
    let second = copy.reload(&mut game.world, &game.library);
    for report in [&first, &second] {
        assert_eq!((report.spawned(), report.updated()), (1, 1), "{report}");
        assert!(report.failures().is_empty(), "{report}");
    }
    assert_eq!(game.health(game.entity(0xa1)), (10.0, 30.0));
    assert_eq!(game.health(copied_guard), (10.0, 30.0));
    // Each copy's beacon links to its own guard; the copy's got a fresh ID, as its load did.
    let beacon = game.entity(0xb1);
    let copied_beacon = copy.entity(StableId(0xb1)).unwrap();
    assert_eq!(
        game.world.get::<&Links>(beacon).unwrap().target,
        EntityRef(game.entity(0xa1))
    );
    let copied_link = game.world.get::<&Links>(copied_beacon).unwrap().target;
    assert_eq!(copied_link, EntityRef(copied_guard));
    assert_eq!(
        *game.world.get::<&StableId>(beacon).unwrap(),
        StableId(0xb1)
    );
    assert_ne!(
        *game.world.get::<&StableId>(copied_beacon).unwrap(),
        StableId(0xb1)
    );
    assert_eq!(game.world.len(), 8);
}
