//! Hot reload with real files and the real watcher, saving the ways real editors save.
//!
//! Every wait is bounded: `settle` polls `apply` (as a game does each frame) until the world
//! shows the expected state, and fails with what it saw after `TIMEOUT`.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use archetype_engine::{
    ArchetypeLibrary, ComponentRegistry, HotReloadOptions, HotReloader, ReloadReport, SpawnError,
    WatchBackend,
};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Health {
    current: f32,
    max: f32,
}

const TIMEOUT: Duration = Duration::from_secs(10);
const GOBLIN: &str = r#"{ "components": { "Health": { "current": 12, "max": 12 } } }"#;

fn goblin_with_max(max: u32) -> String {
    format!(r#"{{ "components": {{ "Health": {{ "current": 12, "max": {max} }} }} }}"#)
}

/// A running "game": an archetypes directory, a library, a world with goblins, a watcher.
struct Game {
    dir: tempfile::TempDir,
    library: ArchetypeLibrary,
    world: World,
    reloader: HotReloader,
    goblins: Vec<Entity>,
}

impl Game {
    fn start(options: HotReloadOptions) -> Game {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("enemies")).unwrap();
        fs::write(dir.path().join("enemies/goblin.json"), GOBLIN).unwrap();
        let mut registry = ComponentRegistry::new();
        registry.register::<Health>().unwrap();
        let library = ArchetypeLibrary::load(dir.path(), registry).unwrap();
        let reloader = HotReloader::with_options(dir.path(), options).unwrap();
        let mut world = World::new();
        let goblins = library
            .spawn_many(&mut world, "enemies/goblin", 50)
            .unwrap();
        Game {
            dir,
            library,
            world,
            reloader,
            goblins,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn max(&self) -> f32 {
        self.world.get::<&Health>(self.goblins[0]).unwrap().max
    }

    /// Runs frames until `done` holds; returns every non-empty report seen.
    fn settle(&mut self, what: &str, done: impl Fn(&Game) -> bool) -> Vec<ReloadReport> {
        let started = Instant::now();
        let mut reports = Vec::new();
        loop {
            let report = self.reloader.apply(&mut self.world, &mut self.library);
            if !report.is_empty() {
                reports.push(report);
            }
            if done(self) {
                return reports;
            }
            let seen: Vec<String> = reports.iter().map(|r| r.to_string()).collect();
            assert!(
                started.elapsed() < TIMEOUT,
                "timed out waiting for {what}; reports: {seen:#?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Runs frames for `duration` and returns whatever was applied (to show nothing was).
    fn frames_for(&mut self, duration: Duration) -> Vec<ReloadReport> {
        let started = Instant::now();
        let mut reports = Vec::new();
        while started.elapsed() < duration {
            let report = self.reloader.apply(&mut self.world, &mut self.library);
            if !report.is_empty() {
                reports.push(report);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        reports
    }
}

fn game() -> Game {
    Game::start(HotReloadOptions::default())
}

#[test]
fn write_in_place() {
    let mut game = game();
    assert_eq!(game.reloader.backend(), WatchBackend::Native);
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(20)).unwrap();
    let reports = game.settle("max 20", |g| g.max() == 20.0);
    assert_eq!(reports.len(), 1, "one save, one reload: {reports:?}");
    assert_eq!(reports[0].changed, ["enemies/goblin"]);
    assert_eq!(reports[0].entities_updated, 50);
}

#[test]
fn write_temp_then_rename_over() {
    // VS Code and many tools: write a temporary file, rename it over the target.
    let mut game = game();
    let temp = game.path("enemies/goblin.json.tmp");
    fs::write(&temp, goblin_with_max(21)).unwrap();
    fs::rename(&temp, game.path("enemies/goblin.json")).unwrap();
    game.settle("max 21", |g| g.max() == 21.0);
}

#[test]
fn vim_backup_then_write() {
    // vim (backupcopy=no): probe file 4913, rename the original to `goblin.json~`, write a new
    // file, delete the backup.
    let mut game = game();
    let file = game.path("enemies/goblin.json");
    let probe = game.path("enemies/4913");
    fs::write(&probe, "").unwrap();
    fs::remove_file(&probe).unwrap();
    let backup = game.path("enemies/goblin.json~");
    fs::rename(&file, &backup).unwrap();
    fs::write(&file, goblin_with_max(22)).unwrap();
    fs::remove_file(&backup).unwrap();
    let reports = game.settle("max 22", |g| g.max() == 22.0);
    assert!(
        reports.iter().all(|r| r.entities_orphaned == 0),
        "{reports:?}"
    );
}

#[test]
fn jetbrains_safe_write() {
    // IntelliJ: write `___jb_tmp___`, move the original to `___jb_old___`, move the new file
    // in, delete the old one.
    let mut game = game();
    let file = game.path("enemies/goblin.json");
    let tmp = game.path("enemies/goblin.json___jb_tmp___");
    let old = game.path("enemies/goblin.json___jb_old___");
    fs::write(&tmp, goblin_with_max(23)).unwrap();
    fs::rename(&file, &old).unwrap();
    fs::rename(&tmp, &file).unwrap();
    fs::remove_file(&old).unwrap();
    game.settle("max 23", |g| g.max() == 23.0);
}

#[test]
fn delete_then_recreate() {
    let mut game = game();
    let file = game.path("enemies/goblin.json");
    fs::remove_file(&file).unwrap();
    fs::write(&file, goblin_with_max(24)).unwrap();
    game.settle("max 24", |g| g.max() == 24.0);
    assert!(game
        .library
        .spawn(&mut game.world, "enemies/goblin")
        .is_ok());
}

#[test]
fn new_files_and_directories_become_spawnable() {
    let mut game = game();
    fs::write(game.path("enemies/orc.json"), goblin_with_max(30)).unwrap();
    fs::create_dir_all(game.path("bosses/big")).unwrap();
    fs::write(game.path("bosses/big/troll.json"), goblin_with_max(300)).unwrap();
    game.settle("orc and troll", |g| {
        g.library.get("enemies/orc").is_some() && g.library.get("bosses/big/troll").is_some()
    });
    let troll = game
        .library
        .spawn(&mut game.world, "bosses/big/troll")
        .unwrap();
    assert_eq!(game.world.get::<&Health>(troll).unwrap().max, 300.0);
}

#[test]
fn deleted_file_orphans_instances() {
    let mut game = game();
    fs::remove_file(game.path("enemies/goblin.json")).unwrap();
    let reports = game.settle("goblin gone", |g| g.library.get("enemies/goblin").is_none());
    let orphaned: usize = reports.iter().map(|r| r.entities_orphaned).sum();
    assert_eq!(orphaned, 50);
    assert_eq!(game.max(), 12.0, "orphans keep their components");
    assert_eq!(
        game.library
            .spawn(&mut game.world, "enemies/goblin")
            .unwrap_err()
            .to_string(),
        "archetype `enemies/goblin` was deleted (its file is gone)"
    );
    assert!(matches!(
        game.library.spawn(&mut game.world, "enemies/goblin"),
        Err(SpawnError::Deleted { .. })
    ));
}

#[test]
fn half_written_file_then_complete() {
    let mut game = game();
    let file = game.path("enemies/goblin.json");
    let complete = goblin_with_max(25);
    fs::write(&file, &complete[..complete.len() / 2]).unwrap();
    let reports = game.settle("the half-written file's error", |g| {
        g.library.error_count() > 0
    });
    let error = reports.last().unwrap().errors[0].to_string();
    assert!(error.contains("goblin.json:1:"), "{error}");
    assert!(
        error.contains("error[syntax]: unexpected end of file while parsing"),
        "{error}"
    );
    assert_eq!(game.max(), 12.0, "the last good version stays in effect");

    fs::write(&file, &complete).unwrap();
    let reports = game.settle("max 25", |g| g.max() == 25.0);
    assert!(reports.iter().all(|r| r.errors.is_empty()), "{reports:?}");
    assert_eq!(game.library.error_count(), 0);
}

#[test]
fn editor_scratch_files_are_ignored() {
    let mut game = game();
    for scratch in [
        "enemies/.goblin.json.swp",
        "enemies/goblin.json~",
        "enemies/.#goblin.json",
        "enemies/4913",
    ] {
        fs::write(game.path(scratch), "{ not json").unwrap();
    }
    let reports = game.frames_for(Duration::from_millis(200));
    assert!(reports.is_empty(), "{reports:?}");
    assert!(!game.reloader.has_pending());
}

#[test]
fn polling_fallback_applies_edits() {
    let mut game = Game::start(HotReloadOptions {
        force_polling: true,
        poll_interval: Duration::from_millis(20),
        ..HotReloadOptions::default()
    });
    assert_eq!(game.reloader.backend(), WatchBackend::Polling);
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(26)).unwrap();
    game.settle("max 26", |g| g.max() == 26.0);
}

#[test]
fn reload_all_without_the_watcher() {
    let mut game = game();
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(27)).unwrap();
    let report = game.reloader.reload_all(&mut game.world, &mut game.library);
    assert_eq!(report.changed, ["enemies/goblin"]);
    assert_eq!(game.max(), 27.0);
}
