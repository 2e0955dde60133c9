//! Hot reload with real files and the real watcher, saving the ways real editors save.
//!
//! Every wait is bounded: `settle` polls `apply` (as a game does each frame) until the world
//! shows the expected state, and fails with what it saw after `TIMEOUT`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use archetype_engine::{
    ArchetypeLibrary, ComponentRegistry, Diagnostic, HotReloadOptions, HotReloader, ReloadReport,
    SpawnError, WatchBackend,
};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

#[cfg(unix)]
use crate::support::mkfifo;

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
        Game::start_with(options, |_| {})
    }

    /// A game whose archetypes directory `setup` adds to before the load (which may then have
    /// errors: the game runs with what is valid).
    fn start_with(options: HotReloadOptions, setup: impl FnOnce(&Path)) -> Game {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("enemies")).unwrap();
        fs::write(dir.path().join("enemies/goblin.json"), GOBLIN).unwrap();
        setup(dir.path());
        let mut registry = ComponentRegistry::new();
        registry.register::<Health>().unwrap();
        let library = ArchetypeLibrary::load(dir.path(), registry)
            .unwrap_or_else(|error| error.into_partial());
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

    /// Every current diagnostic of the library, the root shown as `archetypes`.
    fn diagnostics(&self) -> Vec<String> {
        self.shown(self.library.diagnostics())
    }

    /// Diagnostics as text, the root shown as `archetypes`.
    fn shown<'a>(&self, diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Vec<String> {
        let root = self.dir.path().display().to_string();
        diagnostics
            .into_iter()
            .map(|d| d.to_string().replace(&root, "archetypes"))
            .collect()
    }

    /// Every error the reports carry, the root shown as `archetypes`.
    fn report_errors(&self, reports: &[ReloadReport]) -> Vec<String> {
        self.shown(reports.iter().flat_map(|r| r.errors()))
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

/// More new files between two frames than the reloader keeps one by one: they are read by a
/// rescan of the root, and every one is in the library after.
#[test]
fn a_flood_of_new_files_is_applied_whole() {
    let mut game = game();
    for i in 0..4_200 {
        fs::write(game.path(&format!("enemies/imp{i}.json")), GOBLIN).unwrap();
    }
    game.settle("4,200 new archetypes", |game| game.library.len() == 4_201);
    assert!(game
        .library
        .spawn(&mut game.world, "enemies/imp4199")
        .is_ok());
}

#[test]
fn write_in_place() {
    let mut game = game();
    assert_eq!(game.reloader.backend(), WatchBackend::Native);
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(20)).unwrap();
    let reports = game.settle("max 20", |g| g.max() == 20.0);
    assert_eq!(reports.len(), 1, "one save, one reload: {reports:?}");
    assert_eq!(reports[0].changed(), ["enemies/goblin"]);
    assert_eq!(reports[0].entities_updated(), 50);
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
        reports.iter().all(|r| r.entities_orphaned() == 0),
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
    let orphaned: usize = reports.iter().map(|r| r.entities_orphaned()).sum();
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

/// A designer moves an archetype while the game runs: the file lists the name it has under
/// `formerly` (which changes nothing), then moves. Its live instances follow it to the new
/// name (patched by later edits), none is orphaned.
#[test]
fn a_moved_archetype_that_lists_its_former_name_keeps_its_instances() {
    let mut game = game();
    let listed = r#"{ "formerly": ["enemies/goblin"], "components": { "Health": { "current": 12, "max": 12 } } }"#;
    fs::write(game.path("enemies/goblin.json"), listed).unwrap();
    game.frames_for(Duration::from_millis(300));
    assert_eq!(game.diagnostics(), Vec::<String>::new());
    fs::create_dir(game.path("enemies/goblins")).unwrap();
    fs::rename(
        game.path("enemies/goblin.json"),
        game.path("enemies/goblins/goblin.json"),
    )
    .unwrap();
    let reports = game.settle("the goblin moved", |g| {
        g.library.get("enemies/goblins/goblin").is_some()
            && g.library.get("enemies/goblin").is_none()
    });
    let orphaned: usize = reports.iter().map(|r| r.entities_orphaned()).sum();
    assert_eq!(orphaned, 0, "{reports:?}");
    let marker = *game
        .world
        .get::<&archetype_engine::ArchetypeInstance>(game.goblins[0])
        .unwrap();
    assert_eq!(
        game.library.name_of(marker.archetype),
        Some("enemies/goblins/goblin")
    );
    assert!(!game.library.is_deleted(marker.archetype));

    let moved = listed.replace("\"max\": 12", "\"max\": 30");
    fs::write(game.path("enemies/goblins/goblin.json"), moved).unwrap();
    game.settle("the moved goblin edited", |g| g.max() == 30.0);
    assert_eq!(game.diagnostics(), Vec::<String>::new());
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
    let error = reports.last().unwrap().errors()[0].to_string();
    assert!(error.contains("goblin.json:1:"), "{error}");
    assert!(
        error.contains("error[syntax]: unexpected end of file while parsing"),
        "{error}"
    );
    assert_eq!(game.max(), 12.0, "the last good version stays in effect");

    fs::write(&file, &complete).unwrap();
    let reports = game.settle("max 25", |g| g.max() == 25.0);
    assert!(reports.iter().all(|r| r.errors().is_empty()), "{reports:?}");
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
    let mut polling = HotReloadOptions::default();
    polling.force_polling = true;
    polling.poll_interval = Duration::from_millis(20);
    let mut game = Game::start(polling);
    assert_eq!(game.reloader.backend(), WatchBackend::Polling);
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(26)).unwrap();
    game.settle("max 26", |g| g.max() == 26.0);
}

#[test]
fn reload_all_without_the_watcher() {
    let mut game = game();
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(27)).unwrap();
    let report = game.reloader.reload_all(&mut game.world, &mut game.library);
    assert_eq!(report.changed(), ["enemies/goblin"]);
    assert_eq!(game.max(), 27.0);
}

// ---------------------------------------------------------------------------------------------
// The file rule at run time: what a load refuses, hot reload refuses too.

const LINK_OUT: &str =
    "error[invalid-name]: symbolic link points outside the archetypes directory; archetypes must live under the root";
const JSON_DIRECTORY: &str = "archetypes/y.json: error[invalid-name]: directory name ends in `.json`; archetype files must be regular files (rename the directory)";

/// A directory outside the game's root holding `secret.json` and `more/troll.json`, both valid
/// archetypes.
#[cfg(unix)]
fn outside() -> tempfile::TempDir {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.json"), goblin_with_max(666)).unwrap();
    fs::create_dir(outside.path().join("more")).unwrap();
    fs::write(outside.path().join("more/troll.json"), goblin_with_max(666)).unwrap();
    outside
}

#[cfg(unix)]
#[test]
fn a_file_link_out_of_the_root_created_at_run_time_is_refused() {
    let outside = outside();
    let mut game = game();
    std::os::unix::fs::symlink(
        outside.path().join("secret.json"),
        game.path("escaped.json"),
    )
    .unwrap();
    let reports = game.settle("the refused link", |g| !g.diagnostics().is_empty());
    let refused = format!("archetypes/escaped.json: {LINK_OUT}");
    assert_eq!(game.diagnostics(), std::slice::from_ref(&refused));
    assert_eq!(game.report_errors(&reports), [refused]);
    assert!(game.library.get("escaped").is_none());
    assert_eq!(game.library.source_text("escaped"), None);
    assert_eq!(
        game.library
            .spawn(&mut game.world, "escaped")
            .unwrap_err()
            .to_string(),
        "unknown archetype `escaped`"
    );

    // Pointed inside the root, the same link is followed; pointed out again, refused again
    // (and its archetype goes, as a load would not have it).
    fs::remove_file(game.path("escaped.json")).unwrap();
    std::os::unix::fs::symlink(game.path("enemies/goblin.json"), game.path("escaped.json"))
        .unwrap();
    game.settle("the link inside", |g| g.library.get("escaped").is_some());
    assert!(game.diagnostics().is_empty(), "{:?}", game.diagnostics());
    let temp = game.path(".escaped.json.new");
    std::os::unix::fs::symlink(outside.path().join("secret.json"), &temp).unwrap();
    fs::rename(&temp, game.path("escaped.json")).unwrap();
    game.settle("the link out again", |g| g.library.get("escaped").is_none());
    assert_eq!(game.library.source_text("escaped"), None);
    assert_eq!(
        game.diagnostics(),
        [format!("archetypes/escaped.json: {LINK_OUT}")]
    );
}

#[cfg(unix)]
#[test]
fn a_file_link_inside_the_root_follows_its_target() {
    let mut game = game();
    std::os::unix::fs::symlink(game.path("enemies/goblin.json"), game.path("alias.json")).unwrap();
    game.settle("the alias", |g| g.library.get("alias").is_some());
    // The watcher sees only the target change; the archetype read through the link follows.
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(40)).unwrap();
    game.settle("the alias at max 40", |g| {
        g.library
            .source_text("alias")
            .is_some_and(|text| text.contains("40"))
    });
    assert_eq!(game.max(), 40.0);
    let alias = game.library.spawn(&mut game.world, "alias").unwrap();
    assert_eq!(game.world.get::<&Health>(alias).unwrap().max, 40.0);
    assert!(game.diagnostics().is_empty(), "{:?}", game.diagnostics());
}

#[cfg(unix)]
#[test]
fn a_directory_link_out_of_the_root_refused_at_load_is_not_watched() {
    let mut polling = HotReloadOptions::default();
    polling.force_polling = true;
    polling.poll_interval = Duration::from_millis(20);
    for options in [HotReloadOptions::default(), polling] {
        let outside = outside();
        let mut game = Game::start_with(options, |root| {
            std::os::unix::fs::symlink(outside.path().join("more"), root.join("more")).unwrap();
        });
        let backend = game.reloader.backend();
        assert_eq!(game.diagnostics(), [format!("archetypes/more: {LINK_OUT}")]);
        fs::write(outside.path().join("more/troll.json"), goblin_with_max(667)).unwrap();
        fs::write(outside.path().join("more/orc.json"), goblin_with_max(668)).unwrap();
        // An edit inside the root afterwards: once it is applied, anything the outside edits
        // caused would have been applied too.
        fs::write(game.path("enemies/goblin.json"), goblin_with_max(41)).unwrap();
        let reports = game.settle("max 41", |g| g.max() == 41.0);
        let changed: Vec<&String> = reports.iter().flat_map(|r| r.changed()).collect();
        assert_eq!(changed, ["enemies/goblin"], "{backend:?}");
        let names: Vec<&str> = game.library.names().collect();
        assert_eq!(names, ["enemies/goblin"], "{backend:?}");
        assert_eq!(game.library.source_text("more/troll"), None);
    }
}

#[cfg(unix)]
#[test]
fn directory_links_created_at_run_time_are_judged_as_a_load_judges_them() {
    let outside = outside();
    let mut game = game();
    std::os::unix::fs::symlink(outside.path().join("more"), game.path("more")).unwrap();
    std::os::unix::fs::symlink(game.path("enemies"), game.path("inner")).unwrap();
    let reports = game.settle("the refused link and the followed one", |g| {
        !g.diagnostics().is_empty() && g.library.get("inner/goblin").is_some()
    });
    let refused = format!("archetypes/more: {LINK_OUT}");
    assert_eq!(game.diagnostics(), std::slice::from_ref(&refused));
    assert_eq!(game.report_errors(&reports), [refused]);
    assert!(game.library.get("more/troll").is_none());

    fs::write(outside.path().join("more/troll.json"), goblin_with_max(667)).unwrap();
    // An edit of a file also read through the followed link: both names follow it.
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(42)).unwrap();
    game.settle("inner/goblin at max 42", |g| {
        g.max() == 42.0
            && g.library
                .source_text("inner/goblin")
                .is_some_and(|text| text.contains("42"))
    });
    let names: Vec<&str> = game.library.names().collect();
    assert_eq!(names, ["enemies/goblin", "inner/goblin"]);
}

#[cfg(unix)]
#[test]
fn a_fifo_appearing_while_the_game_runs_is_an_error_not_a_hang() {
    const FIFO: &str = "error[io]: is a FIFO (named pipe), not a regular file; only regular files are read (replace it with a file or remove it)";
    let mut game = game();
    // A new FIFO named like an archetype file.
    mkfifo(&game.path("x.json"));
    let reports = game.settle("the FIFO's error", |g| !g.diagnostics().is_empty());
    assert_eq!(
        game.report_errors(&reports),
        [format!("archetypes/x.json: {FIFO}")]
    );

    // A FIFO in place of a good file: the last good version stays in effect.
    let temp = game.path(".goblin.fifo");
    mkfifo(&temp);
    fs::rename(&temp, game.path("enemies/goblin.json")).unwrap();
    let reports = game.settle("the goblin's error", |g| g.diagnostics().len() == 2);
    assert_eq!(
        game.report_errors(&reports),
        [format!("archetypes/enemies/goblin.json: {FIFO}")]
    );
    assert_eq!(game.max(), 12.0);
    let goblin = game
        .library
        .spawn(&mut game.world, "enemies/goblin")
        .unwrap();
    assert_eq!(game.world.get::<&Health>(goblin).unwrap().max, 12.0);

    // A full rescan reads the directory with both FIFOs in it, and returns.
    let report = game.reloader.reload_all(&mut game.world, &mut game.library);
    assert!(report.changed().is_empty(), "{report}");
    assert_eq!(
        game.diagnostics(),
        [
            format!("archetypes/enemies/goblin.json: {FIFO}"),
            format!("archetypes/x.json: {FIFO}"),
        ]
    );

    fs::remove_file(game.path("enemies/goblin.json")).unwrap();
    fs::write(game.path("enemies/goblin.json"), goblin_with_max(43)).unwrap();
    game.settle("max 43", |g| g.max() == 43.0);
}

#[test]
fn a_directory_named_json_created_at_run_time_is_reported() {
    let mut game = game();
    fs::create_dir(game.path("y.json")).unwrap();
    let reports = game.settle("the directory's error", |g| !g.diagnostics().is_empty());
    assert_eq!(game.diagnostics(), [JSON_DIRECTORY]);
    assert_eq!(game.report_errors(&reports), [JSON_DIRECTORY]);
    fs::remove_dir(game.path("y.json")).unwrap();
    game.settle("the error gone", |g| g.diagnostics().is_empty());
}
