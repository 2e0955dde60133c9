//! The live demo: the checked-in arena scene, the simulation driven frame by frame (hot reload
//! mid-run, a broken edit, the fix), the headless summary, save and load through the keys, and
//! what the terminal UI draws (rendered to ratatui's `TestBackend`).
//!
//! Every wait for the file watcher is bounded: `step_until` steps the game (as the demo does
//! each frame) until a condition holds, and fails with what it saw after `TIMEOUT`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use archetool::demo::components::{
    registry, Door, Follow, Glyph, Health, Key, Leader, Projectile, Speed, Turret,
};
use archetool::demo::terminal::command_for;
use archetool::demo::{
    arena, run_headless, ui, Command, DemoError, DemoOptions, Flow, Game, LogKind, ARENA_SCENE,
};
use archetype_engine::{
    load_scene_from_path, ArchetypeInstance, ArchetypeLibrary, Children, Name, Parent,
    SceneLoadOptions, StableId, Transform,
};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hecs::{Entity, World};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const TIMEOUT: Duration = Duration::from_secs(10);
const STEP: f32 = 1.0 / 30.0;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The demo as it ships: the repository's archetypes and scene, saving into `saves`.
fn shipped_options(saves: &Path) -> DemoOptions {
    DemoOptions {
        dir: repo().join("archetypes"),
        scene: repo().join(ARENA_SCENE),
        save: saves.join("arena.scene.json"),
        ..DemoOptions::default()
    }
}

/// A temp dir with a copy of the archetypes and the arena scene, for tests that edit files.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&repo().join("archetypes"), &dir.path().join("archetypes"));
        fs::copy(
            repo().join(ARENA_SCENE),
            dir.path().join("arena.scene.json"),
        )
        .unwrap();
        Sandbox { dir }
    }

    fn options(&self) -> DemoOptions {
        DemoOptions {
            dir: self.dir.path().join("archetypes"),
            scene: self.dir.path().join("arena.scene.json"),
            save: self.dir.path().join("saves/arena.scene.json"),
            ..DemoOptions::default()
        }
    }

    fn game(&self) -> Game {
        Game::new(self.options()).unwrap()
    }

    /// Saves an archetype file the way many editors do: a hidden temporary file (which the
    /// watcher ignores), then a rename, so the game never reads half a file.
    fn write(&self, relative: &str, text: &str) {
        let path = self.dir.path().join("archetypes").join(relative);
        let temp = path.with_file_name(".demo-test.tmp");
        fs::write(&temp, text).unwrap();
        fs::rename(temp, path).unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Steps `game` until `done` holds, failing with `what` (and the log) after `TIMEOUT`.
fn step_until(game: &mut Game, what: &str, done: impl Fn(&Game) -> bool) {
    let started = Instant::now();
    while !done(game) {
        assert!(
            started.elapsed() < TIMEOUT,
            "timed out waiting for {what}; log:\n{}",
            log_text(game)
        );
        game.step(STEP);
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn log_text(game: &Game) -> String {
    game.log()
        .entries()
        .map(|entry| format!("{:?} {}", entry.kind, entry.text))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The live root instances of an archetype.
fn instances(game: &Game, name: &str) -> Vec<Entity> {
    let id = game.library().id(name).unwrap();
    game.world()
        .query::<(Entity, &ArchetypeInstance)>()
        .iter()
        .filter(|(_, marker)| marker.archetype == id && marker.is_root())
        .map(|(entity, _)| entity)
        .collect()
}

fn get<T: hecs::Component + Clone>(world: &World, entity: Entity) -> T {
    (*world.get::<&T>(entity).unwrap()).clone()
}

fn positions(world: &World) -> Vec<(u32, f32, f32)> {
    let mut out: Vec<_> = world
        .query::<(Entity, &Transform)>()
        .without::<&Parent>()
        .iter()
        .map(|(e, t)| (e.id(), t.translation.x, t.translation.y))
        .collect();
    out.sort_by_key(|(id, _, _)| *id);
    out
}

/// What a scene keeps of each entity, by stable ID: archetype, place, hit points, glyph.
fn saved_state(game: &Game) -> BTreeMap<StableId, String> {
    let world = game.world();
    let library = game.library();
    world
        .query::<(Entity, &StableId)>()
        .iter()
        .map(|(entity, id)| {
            let archetype = world
                .get::<&ArchetypeInstance>(entity)
                .ok()
                .and_then(|m| library.name_of(m.archetype).map(str::to_string));
            let transform = world.get::<&Transform>(entity).ok().map(|t| t.translation);
            let health = world.get::<&Health>(entity).ok().map(|h| (*h).clone());
            let glyph = world.get::<&Glyph>(entity).ok().map(|g| (*g).clone());
            let state = format!("{archetype:?} {transform:?} {health:?} {glyph:?}");
            (*id, state)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The checked-in scene

#[test]
fn the_arena_scene_is_up_to_date() {
    let library = ArchetypeLibrary::load(repo().join("archetypes"), registry()).unwrap();
    let expected = arena::arena_scene(&library).unwrap();
    let actual = fs::read(repo().join(ARENA_SCENE)).unwrap_or_default();
    assert!(
        actual == expected,
        "{ARENA_SCENE} is stale (the archetypes or the level in tools/src/demo/arena.rs changed); \
         regenerate it with:\n    cargo test -p archetool --test it -- --ignored demo::regenerate_arena_scene"
    );
}

/// Writes `assets/scenes/arena.scene.json` from `arena::build_arena` (run it by hand, see
/// `the_arena_scene_is_up_to_date`).
#[test]
#[ignore = "rewrites the checked-in scene"]
fn regenerate_arena_scene() {
    arena::write_arena_scene(&repo().join("archetypes"), &repo().join(ARENA_SCENE)).unwrap();
}

#[test]
fn regenerating_the_arena_scene_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (
        dir.path().join("a.scene.json"),
        dir.path().join("b/b.scene.json"),
    );
    arena::write_arena_scene(&repo().join("archetypes"), &first).unwrap();
    arena::write_arena_scene(&repo().join("archetypes"), &second).unwrap();
    assert_eq!(fs::read(first).unwrap(), fs::read(second).unwrap());
}

#[test]
fn the_arena_scene_uses_inheritance_children_references_and_overrides() {
    let library = ArchetypeLibrary::load(repo().join("archetypes"), registry()).unwrap();
    let mut world = World::new();
    load_scene_from_path(
        repo().join(ARENA_SCENE),
        &mut world,
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap();
    let named = |archetype: &str| -> Vec<Entity> {
        let id = library.id(archetype).unwrap();
        world
            .query::<(Entity, &ArchetypeInstance)>()
            .iter()
            .filter(|(_, m)| m.archetype == id && m.is_root())
            .map(|(e, _)| e)
            .collect()
    };

    // Inheritance: archers are goblins with a bow and their own glyph.
    let archers = named("enemies/goblin_archer");
    assert_eq!(archers.len(), 3);
    assert_eq!(get::<Glyph>(&world, archers[0]).ch, 'a');
    assert_eq!(get::<Speed>(&world, archers[0]).value, 2.0); // from enemies/goblin

    // Children: each turret's references point at its own sensor and gun.
    for turret in named("structures/turret")
        .into_iter()
        .chain(named("structures/heavy_turret"))
    {
        let parts = get::<Turret>(&world, turret);
        let children = get::<Children>(&world, turret).0;
        assert!(children.contains(&parts.sensor) && children.contains(&parts.gun));
        assert_eq!(get::<Parent>(&world, parts.gun.entity()).0.entity(), turret);
    }

    // References between instances: squads follow their leader; a door and its key.
    let leaders = named("allies/squad_leader");
    assert_eq!(leaders.len(), 2);
    let soldiers = named("allies/soldier");
    assert_eq!(soldiers.len(), 6);
    for soldier in soldiers {
        let leader = get::<Follow>(&world, soldier).leader.unwrap().entity();
        assert!(leaders.contains(&leader));
        assert!(world.get::<&Leader>(leader).is_ok());
    }
    let door = named("items/door")[0];
    let key = named("items/key")[0];
    assert_eq!(get::<Door>(&world, door).key.unwrap().entity(), key);
    assert_eq!(get::<Key>(&world, key).door.unwrap().entity(), door);

    // Overrides: the boss has more hit points and a name; the barracks spawn soldiers.
    let boss = named("enemies/goblin_chief")[0];
    assert_eq!(get::<Name>(&world, boss).0, "Grukk the Boss");
    assert_eq!(get::<Health>(&world, boss).max, 60.0);
    let overrides = crate::support::overrides_of(&world, &library, boss).unwrap();
    assert!(overrides.get("Health").is_some(), "{overrides:?}");
    let camps = named("spawners/goblin_camp");
    let barracks: Vec<Entity> = camps
        .into_iter()
        .filter(|&c| get::<Name>(&world, c).0 == "Barracks")
        .collect();
    assert_eq!(barracks.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// The simulation

#[test]
fn the_fight_plays_out_spawners_shots_and_deaths() {
    let saves = tempfile::tempdir().unwrap();
    let mut game = Game::new(shipped_options(saves.path())).unwrap();
    let start = game.world().len();
    let mut saw_projectiles = false;
    for _ in 0..30 * 40 {
        game.step(STEP);
        saw_projectiles |= game.world().query::<&Projectile>().iter().next().is_some();
    }
    let (friendly, hostile) = game.fallen();
    assert!(saw_projectiles, "nobody shot");
    assert!(friendly + hostile > 0, "nobody died in 40 s");
    assert!(
        game.world().len() != start || hostile > 0,
        "the world never changed"
    );
    assert_eq!(game.errors(), 0, "{}", log_text(&game));
    assert_eq!(game.frame(), 1200);
    assert!((game.clock() - 40.0).abs() < 1e-3, "{}", game.clock());
}

#[test]
fn the_simulation_is_deterministic_for_a_seed() {
    let saves = tempfile::tempdir().unwrap();
    let run = |seed: u64| {
        let mut game = Game::new(DemoOptions {
            seed,
            ..shipped_options(saves.path())
        })
        .unwrap();
        for _ in 0..300 {
            game.step(STEP);
        }
        positions(game.world())
    };
    assert_eq!(run(7), run(7));
}

#[test]
fn squad_members_follow_their_leader() {
    let saves = tempfile::tempdir().unwrap();
    let mut game = Game::new(shipped_options(saves.path())).unwrap();
    // Keep the fight away: remove every hostile, then move a leader far off.
    let hostiles: Vec<Entity> = game
        .world()
        .query::<(Entity, &archetool::demo::components::Faction)>()
        .iter()
        .filter(|(_, f)| **f == archetool::demo::components::Faction::Hostile)
        .map(|(e, _)| e)
        .collect();
    for hostile in hostiles {
        game.world_mut().despawn(hostile).unwrap();
    }
    let spawners: Vec<Entity> = instances(&game, "spawners/goblin_camp");
    for spawner in spawners {
        game.world_mut().despawn(spawner).unwrap();
    }
    let leader = instances(&game, "allies/squad_leader")[0];
    game.world_mut()
        .get::<&mut Transform>(leader)
        .unwrap()
        .translation = glam::Vec3::new(40.0, 10.0, 0.0);
    let followers: Vec<Entity> = instances(&game, "allies/soldier")
        .into_iter()
        .filter(|&s| get::<Follow>(game.world(), s).leader.map(|l| l.entity()) == Some(leader))
        .collect();
    assert_eq!(followers.len(), 3);
    for _ in 0..30 * 20 {
        game.step(STEP);
    }
    let at = |e: Entity| get::<Transform>(game.world(), e).translation.truncate();
    for follower in followers {
        let distance = at(follower).distance(at(leader));
        assert!(
            distance < 3.5,
            "a follower is {distance} tiles from its leader"
        );
    }
}

#[test]
fn hot_reload_mid_run_a_broken_edit_and_the_fix() {
    let sandbox = Sandbox::new();
    let mut game = sandbox.game();
    for _ in 0..30 {
        game.step(STEP);
    }
    assert_eq!(game.reloads(), 0);

    // A designer changes the goblin's glyph, colour and speed: every goblin changes, and so do
    // the archetypes that inherit from it (unless they set the field themselves).
    sandbox.write(
        "enemies/goblin.json",
        r#"{
  "extends": "enemies/enemy",
  "components": {
    "Name": "Goblin",
    "Glyph": { "ch": "x", "color": "Magenta" },
    "Health": { "current": 12, "max": 12 },
    "Speed": { "value": 3.5 }
  }
}
"#,
    );
    step_until(&mut game, "the goblin edit", |game| game.reloads() > 0);
    let goblins = instances(&game, "enemies/goblin");
    assert!(!goblins.is_empty());
    for &goblin in &goblins {
        assert_eq!(
            get::<Glyph>(game.world(), goblin),
            Glyph {
                ch: 'x',
                color: archetool::demo::components::Color::Magenta
            }
        );
        assert_eq!(get::<Speed>(game.world(), goblin).value, 3.5);
    }
    for archer in instances(&game, "enemies/goblin_archer") {
        let glyph = get::<Glyph>(game.world(), archer);
        assert_eq!(
            (glyph.ch, glyph.color),
            ('a', archetool::demo::components::Color::Magenta)
        );
    }
    let reload = game
        .log()
        .entries()
        .find(|e| e.kind == LogKind::Reload)
        .unwrap();
    assert!(
        reload.text.starts_with("reloaded enemies/goblin")
            && reload.text.contains("entities patched in")
            && reload.text.ends_with(" ms"),
        "{}",
        reload.text
    );

    // A broken edit: the error shows with file:line:col, the goblins keep the last good
    // version and the fight goes on.
    sandbox.write(
        "enemies/goblin.json",
        "{\n  \"extends\": \"enemies/enemy\",\n  \"components\": {\n    \"Glyph\": { \"ch\": \"y\" \n",
    );
    step_until(&mut game, "the error", |game| {
        game.current_errors().count() > 0
    });
    let error = game
        .log()
        .entries()
        .rfind(|e| e.kind == LogKind::Error)
        .unwrap()
        .text
        .clone();
    let file = sandbox.dir.path().join("archetypes/enemies/goblin.json");
    assert!(
        error.starts_with(&format!("{}:5:1: error[syntax]: ", file.display())),
        "{error}"
    );
    assert_eq!(game.current_errors().count(), 1);
    let frame = game.frame();
    let before = positions(game.world());
    for _ in 0..30 {
        game.step(STEP);
    }
    assert_eq!(game.frame(), frame + 30);
    assert_ne!(
        positions(game.world()),
        before,
        "nothing moved after the broken edit"
    );
    for goblin in instances(&game, "enemies/goblin") {
        assert_eq!(get::<Glyph>(game.world(), goblin).ch, 'x');
    }

    // The fix applies like any edit.
    sandbox.write(
        "enemies/goblin.json",
        r#"{
  "extends": "enemies/enemy",
  "components": {
    "Name": "Goblin",
    "Glyph": { "ch": "z", "color": "Green" },
    "Health": { "current": 12, "max": 12 },
    "Speed": { "value": 2.0 }
  }
}
"#,
    );
    let reloads = game.reloads();
    step_until(&mut game, "the fix", |game| game.reloads() > reloads);
    assert_eq!(game.current_errors().count(), 0);
    let goblins = instances(&game, "enemies/goblin");
    assert!(!goblins.is_empty());
    for goblin in goblins {
        assert_eq!(get::<Glyph>(game.world(), goblin).ch, 'z');
        assert_eq!(get::<Speed>(game.world(), goblin).value, 2.0);
    }
}

/// The live entity with `id`, if any.
fn by_id(world: &World, id: u64) -> Option<Entity> {
    (world.query::<(Entity, &StableId)>().iter())
        .find(|(_, own)| own.0 == id)
        .map(|(entity, _)| entity)
}

#[test]
fn editing_the_arena_scene_mid_run_moves_the_door_and_adds_a_goblin() {
    let sandbox = Sandbox::new();
    let mut game = sandbox.game();
    for _ in 0..10 {
        game.step(STEP);
    }
    let door = by_id(game.world(), 0x1bfd3af0dffc8630).unwrap();
    let scene = sandbox.dir.path().join("arena.scene.json");
    let text = fs::read_to_string(&scene).unwrap();
    let door_at = "\"translation\": [\n            30.0,\n            10.0,";
    assert!(text.contains(door_at), "the door is at (30, 10)");
    let moved = text.replacen(
        door_at,
        "\"translation\": [\n            33.0,\n            11.0,",
        1,
    );
    let goblin = r#"{
      "id": "00000000000000e1",
      "archetype": "enemies/goblin",
      "components": { "Transform": { "translation": [40.0, 12.0, 0.0] } }
    },
    {
      "id": "0638c2544ef198e3","#;
    let edited = moved.replacen("{\n      \"id\": \"0638c2544ef198e3\",", goblin, 1);
    assert_ne!(edited, moved, "the goblin went in");
    // Saved as editors save: a temporary file renamed over the scene.
    let temp = scene.with_file_name(".arena.scene.json.tmp");
    fs::write(&temp, edited).unwrap();
    fs::rename(temp, &scene).unwrap();
    step_until(&mut game, "the scene edit", |game| {
        by_id(game.world(), 0xe1).is_some()
    });
    let translation = get::<Transform>(game.world(), door).translation;
    assert_eq!((translation.x, translation.y), (33.0, 11.0));
    assert_eq!(game.reloads(), 1, "the panel counts the scene's reload");
    let added = by_id(game.world(), 0xe1).unwrap();
    assert_eq!(get::<Glyph>(game.world(), added).ch, 'g');
    assert!(instances(&game, "enemies/goblin").contains(&added));
    let reload = game
        .log()
        .entries()
        .rfind(|e| e.kind == LogKind::Reload)
        .unwrap()
        .text
        .clone();
    let expected = "reloaded arena.scene.json: 1 spawned, 0 despawned, 1 updated in ";
    assert!(
        reload.starts_with(expected) && reload.ends_with(" ms"),
        "{reload}"
    );
}

/// A tmux session running a command, killed when dropped.
struct Tmux {
    session: String,
}

impl Tmux {
    /// `None` when there is no tmux (CI installs it: `.ci/run`).
    fn start(command: &[&str], dir: &Path) -> Option<Tmux> {
        let found = std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|output| output.status.success());
        if !found {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI runs this test with tmux installed"
            );
            eprintln!("skipped: no `tmux` on PATH");
            return None;
        }
        let session = format!("archetool-demo-{}", std::process::id());
        let status = std::process::Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                "160",
                "-y",
                "48",
                "-c",
            ])
            .arg(dir)
            .args(command)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Some(Tmux { session })
    }

    fn screen(&self) -> String {
        let output = std::process::Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen shows `text`, failing with the screen after `TIMEOUT`.
    fn wait_for(&self, text: &str) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                started.elapsed() < TIMEOUT,
                "timed out waiting for {text:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .status();
    }
}

/// The real binary in a real terminal (tmux): a saved edit of the scene file shows up in the
/// running arena's log, and a broken one shows its error placed while the arena runs on.
#[test]
fn the_running_demo_follows_edits_of_its_scene_file_in_a_terminal() {
    let sandbox = Sandbox::new();
    let archetool = env!("CARGO_BIN_EXE_archetool");
    let command = [
        archetool,
        "demo",
        "--dir",
        "archetypes",
        "--scene",
        "arena.scene.json",
        "--scene-out",
        "saves/arena.scene.json",
    ];
    let Some(tmux) = Tmux::start(&command, sandbox.dir.path()) else {
        return;
    };
    tmux.wait_for("loaded");
    let scene = sandbox.dir.path().join("arena.scene.json");
    let text = fs::read_to_string(&scene).unwrap();
    let edited = text.replacen(
        "{\n      \"id\": \"0638c2544ef198e3\",",
        r#"{ "id": "00000000000000e1", "archetype": "enemies/goblin",
      "components": { "Transform": { "translation": [40.0, 12.0, 0.0] } } },
    {
      "id": "0638c2544ef198e3","#,
        1,
    );
    assert_ne!(edited, text);
    fs::write(&scene, &edited).unwrap();
    tmux.wait_for("reloaded arena.scene.json: 1 spawned, 0 despawned, 0 updated");
    fs::write(&scene, "{ \"format\": 2, \"entities\": [").unwrap();
    tmux.wait_for("arena.scene.json:1:28: error[syntax]");
}

#[test]
fn undoing_a_broken_edit_says_the_files_load_again() {
    let sandbox = Sandbox::new();
    let good = fs::read_to_string(sandbox.dir.path().join("archetypes/items/key.json")).unwrap();
    let mut game = sandbox.game();
    sandbox.write("items/key.json", "{ \"components\": ");
    step_until(&mut game, "the error", |game| {
        game.current_errors().count() > 0
    });
    let reloads = game.reloads();
    sandbox.write("items/key.json", &good);
    step_until(&mut game, "the undo", |game| {
        game.current_errors().count() == 0
    });
    // Nothing changed in effect, so no reload; the log still says the files are fine.
    assert_eq!(game.reloads(), reloads);
    let last = game.log().last().unwrap();
    assert_eq!(
        (last.kind, last.text.as_str()),
        (LogKind::Info, "every archetype file loads again")
    );
}

/// A name from a file reaches the log as text, never as terminal control sequences.
#[test]
fn control_characters_from_files_are_escaped_in_the_log() {
    let sandbox = Sandbox::new();
    let mut game = sandbox.game();
    sandbox.write(
        "spawners/goblin_camp.json",
        r#"{ "components": { "Name": "Goblin camp", "Transform": {}, "Glyph": { "ch": "^", "color": "Red" },
            "Spawner": { "archetype": "\u001b]0;pwned\u0007\u001b[2J", "interval": 0.5, "max_alive": 12 } } }"#,
    );
    step_until(&mut game, "the spawner's error", |game| game.errors() > 0);
    let error = game
        .log()
        .entries()
        .find(|e| e.kind == LogKind::Error)
        .unwrap();
    assert!(
        error.text.ends_with(r"error[invalid-name]: invalid value for `Spawner.archetype`: archetype name `\u{1b}]0;pwned\u{7}\u{1b}[2J` contains the character U+001B; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`"),
        "{}",
        error.text
    );
}

/// `Spawner.archetype` is an `ArchetypeRef`: a misspelt name is an error of the camp's file,
/// reported once, and the camp keeps spawning from its last good version.
#[test]
fn a_spawner_naming_a_missing_archetype_is_an_error_of_its_file_and_the_game_goes_on() {
    let sandbox = Sandbox::new();
    let mut game = sandbox.game();
    sandbox.write(
        "spawners/goblin_camp.json",
        r#"{ "components": { "Name": "Goblin camp", "Transform": {}, "Glyph": { "ch": "^", "color": "Red" },
            "Spawner": { "archetype": "enemies/goblinn", "interval": 0.5, "max_alive": 12 } } }"#,
    );
    step_until(&mut game, "the camp's error", |game| game.errors() > 0);
    for _ in 0..60 {
        game.step(STEP);
    }
    let errors: Vec<_> = game
        .log()
        .entries()
        .filter(|e| e.kind == LogKind::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{}", log_text(&game));
    assert!(
        errors[0].text.ends_with(
            "spawners/goblin_camp.json:2:39: error[unknown-archetype]: invalid value for `Spawner.archetype`: archetype `enemies/goblinn` does not exist; did you mean `enemies/goblin`?"
        ),
        "{}",
        errors[0].text
    );
}

// ---------------------------------------------------------------------------------------------
// Headless mode

#[test]
fn run_headless_prints_a_summary_line_per_second() {
    let saves = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let summary = run_headless(shipped_options(saves.path()), 95, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    for (line, (seconds, frame)) in lines.iter().zip([(1, 30), (2, 60), (3, 90), (3, 95)]) {
        let prefix = format!("t={seconds}s frame={frame} entities=");
        assert!(
            line.starts_with(&prefix),
            "{line:?} should start with {prefix:?}"
        );
        let rest = &line[prefix.len()..];
        let (entities, rest) = rest.split_once(' ').unwrap();
        assert!(entities.parse::<u32>().unwrap() > 10, "{line}");
        assert_eq!(rest, "reloads=0 errors=0");
    }
    assert_eq!(summary.frames, 95);
    assert_eq!(lines[3], summary.to_string());
}

#[test]
fn the_demo_says_where_the_archetypes_should_be() {
    let mut out = Vec::new();
    let error = run_headless(
        DemoOptions {
            dir: PathBuf::from("no/such/dir"),
            ..DemoOptions::default()
        },
        1,
        &mut out,
    )
    .unwrap_err();
    assert!(matches!(error, DemoError::MissingArchetypes { .. }));
    assert_eq!(
        error.to_string(),
        "no archetypes directory at `no/such/dir`; run the demo from the repository root or pass --dir"
    );
}

// ---------------------------------------------------------------------------------------------
// Keys: save and load, pause, quit

#[test]
fn save_then_load_round_trips_the_world_through_the_user_save() {
    let sandbox = Sandbox::new();
    let checked_in = fs::read(sandbox.dir.path().join("arena.scene.json")).unwrap();
    let mut game = sandbox.game();
    for _ in 0..90 {
        game.step(STEP);
    }
    assert_eq!(game.handle_key('s'), Flow::Continue);
    let save = sandbox.dir.path().join("saves/arena.scene.json");
    assert!(save.is_file());
    let saved = saved_state(&game);
    assert!(game.log().last().unwrap().text.starts_with("saved "));

    for _ in 0..90 {
        game.step(STEP);
    }
    assert_ne!(saved_state(&game), saved, "the world should have moved on");
    assert_eq!(game.handle_key('l'), Flow::Continue);
    assert_eq!(saved_state(&game), saved);
    let loaded = &game.log().last().unwrap().text;
    assert_eq!(
        loaded,
        &format!("loaded {} entities from {}", saved.len(), save.display())
    );
    // The loaded world plays on, and the checked-in scene was never written.
    for _ in 0..30 {
        game.step(STEP);
    }
    assert_eq!(game.errors(), 0, "{}", log_text(&game));
    assert_eq!(
        fs::read(sandbox.dir.path().join("arena.scene.json")).unwrap(),
        checked_in
    );
}

#[test]
fn load_without_a_save_restarts_from_the_scene() {
    let sandbox = Sandbox::new();
    let mut game = sandbox.game();
    let start = saved_state(&game);
    for _ in 0..60 {
        game.step(STEP);
    }
    assert_ne!(saved_state(&game), start);
    game.handle_key('l');
    assert_eq!(saved_state(&game), start);
}

#[test]
fn pause_stops_the_simulation_but_not_the_frames() {
    let saves = tempfile::tempdir().unwrap();
    let mut game = Game::new(shipped_options(saves.path())).unwrap();
    game.step(STEP);
    assert_eq!(game.handle_key('p'), Flow::Continue);
    assert!(game.is_paused());
    let before = positions(game.world());
    for _ in 0..30 {
        game.step(STEP);
    }
    assert_eq!(positions(game.world()), before);
    assert_eq!(game.frame(), 31);
    game.handle_key('p');
    assert!(!game.is_paused());
}

#[test]
fn reload_key_rereads_every_file() {
    let saves = tempfile::tempdir().unwrap();
    let mut game = Game::new(shipped_options(saves.path())).unwrap();
    game.handle_key('r');
    let last = game.log().last().unwrap();
    assert_eq!(last.kind, LogKind::Info);
    assert!(
        last.text.starts_with("full reload: nothing changed ("),
        "{}",
        last.text
    );
}

#[test]
fn keys_quit_with_q_esc_and_ctrl_c() {
    let key = |code, modifiers| command_for(&KeyEvent::new(code, modifiers));
    assert_eq!(
        key(KeyCode::Char('q'), KeyModifiers::NONE),
        Some(Command::Quit)
    );
    assert_eq!(key(KeyCode::Esc, KeyModifiers::NONE), Some(Command::Quit));
    assert_eq!(
        key(KeyCode::Char('c'), KeyModifiers::CONTROL),
        Some(Command::Quit)
    );
    assert_eq!(
        key(KeyCode::Char('s'), KeyModifiers::NONE),
        Some(Command::Save)
    );
    assert_eq!(key(KeyCode::Char('s'), KeyModifiers::CONTROL), None);
    assert_eq!(key(KeyCode::Char('x'), KeyModifiers::NONE), None);
    let saves = tempfile::tempdir().unwrap();
    let mut game = Game::new(shipped_options(saves.path())).unwrap();
    assert_eq!(game.handle_key('q'), Flow::Quit);
}

// ---------------------------------------------------------------------------------------------
// The terminal UI

/// Renders one frame of `game` at `width`×`height` and returns the screen as lines of text.
fn render(game: &Game, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| ui::draw(frame, game)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

/// The live count the panel shows on the line starting with `label` (frame borders aside).
fn live(screen: &[String], label: &str) -> Option<usize> {
    screen.iter().find_map(|line| {
        let start = line.find(label)?;
        let rest = &line[start + label.len()..];
        rest.split('│').next()?.trim().parse().ok()
    })
}

fn char_at(screen: &[String], x: usize, y: usize) -> char {
    screen[y].chars().nth(x).unwrap()
}

#[test]
fn the_ui_draws_map_panel_log_and_help_in_80x24() {
    let saves = tempfile::tempdir().unwrap();
    let game = Game::new(shipped_options(saves.path())).unwrap();
    let screen = render(&game, 80, 24);
    // The map, unframed: tiles at their coordinates.
    assert_eq!(char_at(&screen, 45, 4), 'g', "\n{}", screen.join("\n"));
    assert_eq!(char_at(&screen, 7, 4), 'T');
    assert_eq!(char_at(&screen, 8, 4), '='); // the turret's gun, one tile right of it
    assert_eq!(char_at(&screen, 54, 10), 'G');
    assert_eq!(char_at(&screen, 30, 10), '+');
    assert_eq!(char_at(&screen, 0, 0), '·');
    // The side panel: archetypes with live counts.
    let panel: Vec<String> = screen[..20]
        .iter()
        .map(|l| l.chars().skip(61).collect())
        .collect();
    assert_eq!(panel[0], "archetypes     live");
    assert_eq!(live(&panel, "g goblin "), Some(6), "{panel:#?}");
    assert_eq!(live(&panel, "a goblin_archer "), Some(3), "{panel:#?}");
    assert_eq!(live(&panel, "G goblin_chief "), Some(1), "{panel:#?}");
    assert!(
        panel.iter().any(|l| l.starts_with("entities ")),
        "{panel:#?}"
    );
    // The log and the help line.
    assert!(
        screen[20..23]
            .iter()
            .any(|l| l.contains("· loaded 29 entities from ")),
        "{screen:#?}"
    );
    for help in ["s save", "l load", "r reload", "p pause", "q quit"] {
        assert!(screen[23].contains(help), "{:?}", screen[23]);
    }
}

#[test]
fn the_ui_frames_everything_in_a_larger_terminal() {
    let saves = tempfile::tempdir().unwrap();
    let game = Game::new(shipped_options(saves.path())).unwrap();
    let screen = render(&game, 120, 40);
    let text = screen.join("\n");
    assert!(
        screen[0].contains(" arena ") && screen[0].contains(" archetypes "),
        "{text}"
    );
    // Inside the frame the map moves by one cell.
    assert_eq!(char_at(&screen, 46, 5), 'g', "{text}");
    assert_eq!(live(&screen, "a enemies/goblin_archer "), Some(3), "{text}");
    assert_eq!(live(&screen, "s allies/soldier "), Some(6), "{text}");
    assert!(screen.iter().any(|l| l.contains(" log ")), "{text}");
    for help in ["s save", "l load", "r reload", "p pause", "q quit"] {
        assert!(screen[39].contains(help), "{:?}", screen[39]);
    }
    assert!(
        screen[39].contains("enemies/goblin.json"),
        "{:?}",
        screen[39]
    );
}

/// The lines of an art file under the repository's `assets/`.
fn art(relative: &str) -> Vec<String> {
    let text = fs::read_to_string(repo().join("assets").join(relative)).unwrap();
    text.lines()
        .map(|line| line.trim_end().to_string())
        .collect()
}

/// A panel wide enough for both shows, beside the archetype list, the portrait of the boss
/// (its `Portrait.art` file under `assets/`, with its scene name and health); none in 80×24.
#[test]
fn the_ui_shows_the_boss_portrait_beside_the_list_in_a_wide_terminal() {
    let saves = tempfile::tempdir().unwrap();
    let game = Game::new(shipped_options(saves.path())).unwrap();
    let screen = render(&game, 120, 40);
    let text = screen.join("\n");
    // The panel's box starts at column 62; the list takes 34 columns, then the portrait's line.
    let beside: Vec<String> = screen[1..12]
        .iter()
        .map(|line| line.chars().skip(97).collect::<String>())
        .collect();
    let mut expected = vec![
        "│Grukk the Boss       │".to_string(),
        "│health 60/60         │".to_string(),
        "│                     │".to_string(),
    ];
    for line in art("portraits/goblin_chief.txt") {
        expected.push(format!("│{line:<21}│"));
    }
    while expected.len() < beside.len() {
        expected.push(format!("│{:<21}│", ""));
    }
    assert_eq!(beside, expected, "{text}");
    // The list beside it keeps its counts.
    assert_eq!(live(&screen, "G enemies/goblin_chief "), Some(1), "{text}");
    let small = render(&game, 80, 24).join("\n");
    assert!(!small.contains("Grukk the Boss"), "{small}");
}

/// When the boss is gone, the portrait is the first creature's with one: a goblin's, the
/// art its archetype names.
#[test]
fn the_portrait_falls_back_to_a_goblin_when_the_boss_is_gone() {
    let saves = tempfile::tempdir().unwrap();
    let mut game = Game::new(shipped_options(saves.path())).unwrap();
    let shown = game.portrait().unwrap();
    assert_eq!(
        (shown.name.as_deref(), shown.health, shown.art),
        (
            Some("Grukk the Boss"),
            Some((60.0, 60.0)),
            &art("portraits/goblin_chief.txt")[..]
        )
    );
    let boss = instances(&game, "enemies/goblin_chief")[0];
    game.world_mut().despawn(boss).unwrap();
    let shown = game.portrait().unwrap();
    assert_eq!(
        (shown.name.as_deref(), shown.health, shown.art),
        (
            Some("Goblin"),
            Some((12.0, 12.0)),
            &art("portraits/goblin.txt")[..]
        )
    );
    // Without an assets directory beside the archetypes there is no art, and no portrait.
    assert_eq!(Sandbox::new().game().portrait(), None);
}

/// Art the panel cannot draw as it is: a control character (an escape sequence's) is drawn as
/// a space; a file over the size limit is not read, its error logged once, and the game goes on
/// without that portrait.
#[test]
fn portrait_art_is_read_within_bounds_and_drawn_without_control_characters() {
    let sandbox = Sandbox::new();
    let portraits = sandbox.dir.path().join("assets/portraits");
    fs::create_dir_all(&portraits).unwrap();
    fs::write(portraits.join("goblin_chief.txt"), "\u{1b}[31m(o o)\tX\n").unwrap();
    fs::write(portraits.join("goblin.txt"), "g".repeat(5000)).unwrap();
    let mut game = sandbox.game();
    let shown = game.portrait().unwrap();
    assert_eq!(shown.art, [" [31m(o o) X"]);
    let boss = instances(&game, "enemies/goblin_chief")[0];
    game.world_mut().despawn(boss).unwrap();
    game.step(STEP);
    assert_eq!(game.portrait(), None);
    let errors: Vec<&str> = (game.log().entries())
        .filter(|entry| entry.kind == LogKind::Error)
        .map(|entry| entry.text.as_str())
        .collect();
    let file = portraits.join("goblin.txt");
    assert_eq!(
        errors,
        [format!(
            "cannot read portrait `{}`: file is 5000 bytes, over the limit of 4096 bytes",
            file.display()
        )]
    );
}

#[test]
fn the_ui_shows_a_broken_edit_in_the_log_and_the_panel() {
    let sandbox = Sandbox::new();
    let mut game = sandbox.game();
    sandbox.write(
        "enemies/goblin.json",
        "{ \"extends\": \"enemies/enemy\", \"components\": { \"Glyph\": 3 } }",
    );
    step_until(&mut game, "the error", |game| game.errors() > 0);
    let screen = render(&game, 80, 24);
    let text = screen.join("\n");
    assert!(text.contains("1 archetype error"), "{text}");
    assert!(text.contains("error[invalid-component]"), "{text}");
}

#[test]
fn the_arena_scene_is_prepared_off_the_game_thread_with_a_progress_line() {
    let saves = tempfile::tempdir().unwrap();
    let game = Game::new(shipped_options(saves.path())).unwrap();
    let scene = repo().join(ARENA_SCENE);
    let bytes = std::fs::metadata(&scene).unwrap().len();
    let lines: Vec<&str> = game.log().entries().map(|e| e.text.as_str()).collect();
    let n = lines.len();
    assert_eq!(
        lines[n - 2..],
        [
            format!(
                "prepared {} off the game thread: 29/29 entities, {bytes} bytes (100%)",
                scene.display()
            ),
            format!("loaded 29 entities from {}", scene.display()),
        ]
    );
    // The world is the one load_scene gives.
    let mut loaded = World::new();
    let library = ArchetypeLibrary::load(repo().join("archetypes"), registry()).unwrap();
    load_scene_from_path(&scene, &mut loaded, &library, &SceneLoadOptions::default()).unwrap();
    let mut ids: Vec<StableId> = game.world().query::<&StableId>().iter().copied().collect();
    let mut expected: Vec<StableId> = loaded.query::<&StableId>().iter().copied().collect();
    ids.sort();
    expected.sort();
    assert_eq!(ids, expected);
}
