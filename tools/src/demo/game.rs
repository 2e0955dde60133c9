//! [`Game`]: the demo's state and its frame: hot reload (archetype files and the scene file the
//! world came from), then the systems.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use archetype_engine::tooling::{read_regular_file, real_path_inside};
use archetype_engine::{
    save_scene_to_path, ArchetypeInstance, ArchetypeLibrary, AssetPath, CommitError,
    DanglingReferences, Diagnostic, HotReloadOptions, HotReloader, Inspector, InspectorOptions,
    LiveScene, LiveSceneReport, LoadOptions, LoadedScene, Name, PrepareError, PrepareProgress,
    PreparedScene, ReloadReport, SceneLoadOptions, SceneSaveOptions, Severity,
};
use hecs::{Entity, World};

use crate::cli::ASSETS_DIR;

use super::components::{registry, Boss, Glyph, Health, Portrait, TextArt};
use super::event_log::{EventLog, LogKind};
use super::rng::Rng;
use super::systems;
use super::{DemoError, DemoOptions, HeadlessSummary};

/// The longest step the simulation takes at once: after a stall (a suspended terminal, a slow
/// reload) the game resumes instead of teleporting everything.
pub const MAX_STEP: f32 = 0.25;
/// How many log entries the game keeps.
const LOG_CAPACITY: usize = 200;
/// The largest portrait file read, in bytes; the panel shows a few short lines of it.
const MAX_ART_BYTES: u64 = 4096;
/// The most lines of a portrait kept.
const MAX_ART_LINES: usize = 16;

/// A key's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `s`: save the scene to the save path.
    Save,
    /// `l`: load the save (or the starting scene when there is no save yet).
    Load,
    /// `r`: re-read every archetype file now.
    Reload,
    /// `p`: pause or resume the simulation (hot reload goes on).
    Pause,
    /// `q` (also Esc and Ctrl-C in the terminal): quit.
    Quit,
}

impl Command {
    /// The command bound to a key, if any (`s`, `l`, `r`, `p`, `q`; either case).
    pub fn from_key(key: char) -> Option<Command> {
        match key.to_ascii_lowercase() {
            's' => Some(Command::Save),
            'l' => Some(Command::Load),
            'r' => Some(Command::Reload),
            'p' => Some(Command::Pause),
            'q' => Some(Command::Quit),
            _ => None,
        }
    }
}

/// Whether the game goes on after a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep running.
    Continue,
    /// Quit.
    Quit,
}

/// How many live instances an archetype has, and how it is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchetypeCount {
    /// The archetype, e.g. `enemies/goblin`.
    pub name: String,
    /// Its glyph as the library serves it now (`None` if it has none or never loaded).
    pub glyph: Option<Glyph>,
    /// Live instances (roots only: a turret counts once, not once per part).
    pub live: usize,
}

/// The creature whose portrait the side panel shows (see [`Game::portrait`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ShownPortrait<'g> {
    /// Its `Name`, if it has one.
    pub name: Option<String>,
    /// Its `Health`: hit points left and the most it has.
    pub health: Option<(f32, f32)>,
    /// The lines of its art file, control characters blanked.
    pub art: &'g [String],
}

/// The demo game: a world started from a scene, the archetype library it spawns from, the
/// watcher that hot-reloads that library, the live scene that follows the scene file's edits,
/// and what happened so far.
///
/// [`step`](Self::step) is one frame: apply settled archetype and scene edits to the live
/// entities, then run the systems for `dt` seconds (unless paused). The simulation depends only on the scene,
/// the seed and the steps, so a test can drive it frame by frame.
pub struct Game {
    world: World,
    library: ArchetypeLibrary,
    reloader: HotReloader,
    /// The live inspector, when asked for (`DemoOptions::inspect`).
    inspector: Option<Inspector>,
    /// The scene file the world was loaded from, followed (`None` if it cannot be watched).
    scene: Option<LiveScene>,
    rng: Rng,
    options: DemoOptions,
    frame: u64,
    clock: f64,
    paused: bool,
    log: EventLog,
    reloads: u64,
    errors: u64,
    /// Whether the library had errors after the last reload.
    broken: bool,
    fallen_friendly: u64,
    fallen_hostile: u64,
    /// The portraits' art, by the file each `Portrait` names, read once each (`None`: it could
    /// not be read, which was logged).
    art: HashMap<AssetPath<TextArt>, Option<Vec<String>>>,
}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Game")
            .field("frame", &self.frame)
            .field("entities", &self.world.len())
            .field("paused", &self.paused)
            .finish_non_exhaustive()
    }
}

/// Loads the archetypes under `dir` with the demo's components, keeping the valid part of a
/// library with errors (the demo shows them and runs on). Asset paths (portraits) are checked
/// against the `assets` directory beside `dir`, when there is one, as `archetool` does.
pub(crate) fn load_library(dir: &Path) -> Result<ArchetypeLibrary, DemoError> {
    if !dir.is_dir() {
        return Err(DemoError::MissingArchetypes {
            dir: dir.to_path_buf(),
        });
    }
    let assets = dir.parent().map(|parent| parent.join(ASSETS_DIR));
    let mut options = LoadOptions::default();
    options.assets_root = assets.filter(|assets| assets.is_dir());
    Ok(ArchetypeLibrary::load_with(dir, registry(), options)
        .unwrap_or_else(|error| error.into_partial()))
}

/// The lines of a portrait's text as the panel draws them: at most [`MAX_ART_LINES`], each
/// control character (a tab, an escape sequence's) a space, trailing spaces dropped.
fn art_lines(text: &str) -> Vec<String> {
    (text.lines().take(MAX_ART_LINES))
        .map(|line| {
            let line: String = line
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            line.trim_end().to_string()
        })
        .collect()
}

impl Game {
    /// Loads the archetypes (`options.dir`), starts watching them and loads the starting scene
    /// (`options.scene`). Archetype files with errors do not stop the game: their errors are
    /// the first lines of the log.
    ///
    /// # Errors
    /// If the archetypes directory is missing or cannot be watched, or the scene does not load.
    pub fn new(options: DemoOptions) -> Result<Game, DemoError> {
        let library = load_library(&options.dir)?;
        let reloader = HotReloader::with_options(&options.dir, HotReloadOptions::default())
            .map_err(DemoError::Watch)?;
        let inspector = match &options.inspect {
            Some(addr) => Some(
                Inspector::bind(addr.as_str(), InspectorOptions::default())
                    .map_err(DemoError::Inspect)?,
            ),
            None => None,
        };
        let mut game = Game {
            world: World::new(),
            library,
            reloader,
            inspector,
            scene: None,
            rng: Rng::new(options.seed),
            options,
            frame: 0,
            clock: 0.0,
            paused: false,
            log: EventLog::new(LOG_CAPACITY),
            reloads: 0,
            errors: 0,
            broken: false,
            fallen_friendly: 0,
            fallen_hostile: 0,
            art: HashMap::new(),
        };
        for diagnostic in game.library.diagnostics().to_vec() {
            game.log_diagnostic(&diagnostic);
        }
        game.broken = game.library.error_count() > 0;
        let scene = game.options.scene.clone();
        game.world = game.read_scene(&scene)?;
        let loaded = format!(
            "loaded {} entities from {}",
            game.world.len(),
            scene.display()
        );
        game.log.push(LogKind::Info, 0, loaded);
        if let Some(url) = game.inspector_url().map(str::to_string) {
            game.log.push(LogKind::Info, 0, format!("inspector: {url}"));
        }
        game.read_art();
        Ok(game)
    }

    /// One frame: applies the archetype edits the watcher has seen (logging what changed and
    /// any error), then, unless paused, runs every system for `dt` seconds (at most
    /// [`MAX_STEP`]).
    pub fn step(&mut self, dt: f32) {
        let report = self.reloader.apply(&mut self.world, &mut self.library);
        if let Some(inspector) = &mut self.inspector {
            inspector.apply(&mut self.world, &mut self.library);
        }
        let fixed = self.broken && self.library.error_count() == 0;
        if !report.is_empty() || fixed {
            self.record(&report, false);
        }
        if let Some(scene) = &mut self.scene {
            let report = scene.apply(&mut self.world, &self.library);
            if !report.is_empty() {
                self.record_scene(&report);
            }
        }
        if !self.paused {
            let dt = if dt.is_finite() {
                dt.clamp(0.0, MAX_STEP)
            } else {
                0.0
            };
            let tick = systems::run(&mut self.world, &self.library, &mut self.rng, dt);
            for problem in tick.problems {
                self.errors += 1;
                self.log.push(LogKind::Error, self.frame, problem);
            }
            for note in tick.notes {
                self.log.push(LogKind::Info, self.frame, note);
            }
            self.fallen_friendly += u64::from(tick.fallen_friendly);
            self.fallen_hostile += u64::from(tick.fallen_hostile);
            self.clock += f64::from(dt);
        }
        self.read_art();
        self.frame += 1;
    }

    /// Handles a key press (see [`Command::from_key`]); other keys are ignored.
    pub fn handle_key(&mut self, key: char) -> Flow {
        match Command::from_key(key) {
            Some(command) => self.run_command(command),
            None => Flow::Continue,
        }
    }

    /// Carries out a command. Failures (a save that cannot be written, a broken save file) go
    /// to the log; the game goes on.
    pub fn run_command(&mut self, command: Command) -> Flow {
        match command {
            Command::Save => {
                if let Err(error) = self.save() {
                    self.log_error(error.to_string());
                }
            }
            Command::Load => {
                if let Err(error) = self.load() {
                    self.log_error(error.to_string());
                }
            }
            Command::Reload => self.reload_all(),
            Command::Pause => self.paused = !self.paused,
            Command::Quit => return Flow::Quit,
        }
        Flow::Continue
    }

    /// Saves every entity to the save path (`options.save`), creating its directory. References
    /// to entities that are gone (a dead squad leader) are written as `null`.
    ///
    /// # Errors
    /// If the scene cannot be written.
    pub fn save(&mut self) -> Result<PathBuf, DemoError> {
        let path = self.options.save.clone();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| DemoError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let mut options = SceneSaveOptions::default();
        options.dangling_references = DanglingReferences::WriteNull;
        save_scene_to_path(&path, &self.world, &self.library, &options)
            .map_err(DemoError::SaveScene)?;
        let text = format!("saved {} entities to {}", self.world.len(), path.display());
        self.log.push(LogKind::Info, self.frame, text);
        Ok(path)
    }

    /// Replaces the world with the save (`options.save`) if there is one, otherwise with the
    /// starting scene (`options.scene`). Returns the file loaded.
    ///
    /// # Errors
    /// If the file does not load; the world is left as it was.
    pub fn load(&mut self) -> Result<PathBuf, DemoError> {
        let path = if self.options.save.is_file() {
            self.options.save.clone()
        } else {
            self.options.scene.clone()
        };
        self.world = self.read_scene(&path)?;
        let text = format!(
            "loaded {} entities from {}",
            self.world.len(),
            path.display()
        );
        self.log.push(LogKind::Info, self.frame, text);
        self.read_art();
        Ok(path)
    }

    /// Reads a scene as a game would without stopping its frames: prepared on a worker thread
    /// (a loading screen would draw `progress` meanwhile), its handles reserved here, its
    /// references resolved on a worker, then committed here in one go, decoding nothing; logs
    /// the progress the worker reported.
    fn read_scene(&mut self, path: &Path) -> Result<World, DemoError> {
        let progress = PrepareProgress::new();
        let mut world = World::new();
        let resolved = std::thread::scope(|threads| {
            let (library, progress) = (&self.library, &progress);
            let options = SceneLoadOptions::default();
            let prepared = threads
                .spawn(move || PreparedScene::prepare_path(path, library, &options, progress))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            let reserved = prepared.reserve(&mut world);
            let resolved = threads
                .spawn(move || reserved.resolve())
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Ok(resolved)
        })
        .map_err(|error| match error {
            PrepareError::Scene(error) => DemoError::Scene(error),
            other => DemoError::Prepare(other),
        })?;
        let ((entries, total), (bytes, _)) = (progress.entries(), progress.bytes());
        let text = format!(
            "prepared {} off the game thread: {entries}/{total} entities, {bytes} bytes ({:.0}%)",
            path.display(),
            progress.fraction() * 100.0
        );
        self.log.push(LogKind::Info, self.frame, text);
        let loaded = resolved
            .commit(&mut world, &self.library)
            .map_err(|error| match error {
                CommitError::Scene(error) => DemoError::Scene(error),
                other => DemoError::Commit(other),
            })?;
        self.follow_scene(path, &loaded);
        Ok(world)
    }

    /// Follows the scene file the world was just loaded from: its saved edits reach the world
    /// from the next frame on. A file that cannot be followed is logged; the game goes on.
    fn follow_scene(&mut self, path: &Path, loaded: &LoadedScene) {
        let options = SceneLoadOptions::default();
        self.scene = match LiveScene::follow(path, loaded, &self.library, &options) {
            Ok(mut scene) => match scene.watch(HotReloadOptions::default()) {
                Ok(()) => Some(scene),
                Err(error) => {
                    self.log_error(error.to_string());
                    None
                }
            },
            Err(error) => {
                self.log_error(error.to_string());
                None
            }
        };
    }

    /// Logs what a scene edit did, or why it was not applied.
    fn record_scene(&mut self, report: &LiveSceneReport) {
        let file = (self.scene.as_ref())
            .and_then(|scene| scene.file().file_name())
            .map(|name| name.to_string_lossy().into_owned());
        if let Some(error) = report.error() {
            self.log_error(error.to_string());
            return;
        }
        self.reloads += 1;
        let ms = report.elapsed().as_secs_f64() * 1000.0;
        let text = format!(
            "reloaded {}: {} spawned, {} despawned, {} updated in {ms:.1} ms",
            file.unwrap_or_default(),
            report.spawned(),
            report.despawned(),
            report.updated()
        );
        self.log.push(LogKind::Reload, self.frame, text);
        for failure in report.failures() {
            self.log_error(failure.to_string());
        }
    }

    /// Re-reads every archetype file now and applies the result (the `r` key); the portraits'
    /// art is read again too.
    pub fn reload_all(&mut self) {
        let report = self.reloader.reload_all(&mut self.world, &mut self.library);
        self.record(&report, true);
        self.art.clear();
        self.read_art();
    }

    /// Reads the art of every portrait in the world not read yet, from the assets root the
    /// library checks asset paths against (the file rule: a regular file whose real path is
    /// inside the root). Without an assets root there is no art.
    fn read_art(&mut self) {
        let unread: Vec<AssetPath<TextArt>> = (self.world.query::<&Portrait>().iter())
            .map(|portrait| portrait.art.clone())
            .filter(|art| !self.art.contains_key(art))
            .collect();
        let root = self.library.options().assets_root.clone();
        for art in unread {
            let lines = match &root {
                Some(root) => self.read_art_file(root, &art),
                None => None,
            };
            self.art.insert(art, lines);
        }
    }

    /// The lines of the art file `art` names under `root`; `None`, logged, if it cannot be read.
    fn read_art_file(&mut self, root: &Path, art: &AssetPath<TextArt>) -> Option<Vec<String>> {
        let file = art.under(root);
        let bytes = match real_path_inside(root, &file) {
            Some(real) => read_regular_file(&real, MAX_ART_BYTES),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a file inside the assets root",
            )),
        };
        match bytes {
            Ok(bytes) => Some(art_lines(&String::from_utf8_lossy(&bytes))),
            Err(error) => {
                let text = format!("cannot read portrait `{}`: {error}", file.display());
                self.log_error(text);
                None
            }
        }
    }

    /// The creature the side panel's portrait shows: the boss while one with a portrait
    /// lives, else the first creature with one (the lowest entity ID); `None` when no
    /// creature's portrait could be read.
    pub fn portrait(&self) -> Option<ShownPortrait<'_>> {
        let mut query = self.world.query::<(Entity, &Portrait, Option<&Boss>)>();
        let (entity, art) = (query.iter())
            .filter_map(|(entity, portrait, boss)| {
                let art = self.art.get(&portrait.art)?.as_deref()?;
                Some(((boss.is_none(), entity.id()), entity, art))
            })
            .min_by_key(|(order, _, _)| *order)
            .map(|(_, entity, art)| (entity, art))?;
        let name = self.world.get::<&Name>(entity).ok();
        let health = self.world.get::<&Health>(entity).ok();
        Some(ShownPortrait {
            name: name.map(|name| name.as_str().to_string()),
            health: health.map(|health| (health.current, health.max)),
            art,
        })
    }

    /// Logs a reload: what changed, how many entities were patched and how long it took; then
    /// each error (`file:line:col: error[code]: message`).
    fn record(&mut self, report: &ReloadReport, full: bool) {
        let ms = report.elapsed().as_secs_f64() * 1000.0;
        let was_broken = self.broken;
        self.broken = self.library.error_count() > 0;
        if !report.changed().is_empty() {
            self.reloads += 1;
            let patched = report.entities_updated();
            let mut text = format!(
                "reloaded {}: {patched} {} patched",
                report.changed().join(", "),
                if patched == 1 { "entity" } else { "entities" }
            );
            if report.entities_spawned() > 0 {
                text.push_str(&format!(", {} spawned", report.entities_spawned()));
            }
            if report.entities_despawned() > 0 {
                text.push_str(&format!(", {} despawned", report.entities_despawned()));
            }
            text.push_str(&format!(" in {ms:.1} ms"));
            self.log.push(LogKind::Reload, self.frame, text);
        } else if full {
            let text = format!("full reload: nothing changed ({ms:.1} ms)");
            self.log.push(LogKind::Info, self.frame, text);
        }
        for diagnostic in report.errors() {
            self.log_diagnostic(diagnostic);
        }
        for failure in report.patch_failures() {
            self.log_error(failure.to_string());
        }
        if !report.held_back().is_empty() {
            let held_back = report.held_back().iter();
            let names: Vec<&str> = held_back.map(|held| held.archetype.as_str()).collect();
            let text = format!("kept the last good version of {}", names.join(", "));
            self.log.push(LogKind::Info, self.frame, text);
        }
        if was_broken && !self.broken {
            // A fix that restores the last good version changes nothing, so say so.
            let text = "every archetype file loads again";
            self.log.push(LogKind::Info, self.frame, text);
        }
    }

    fn log_diagnostic(&mut self, diagnostic: &Diagnostic) {
        match diagnostic.severity {
            Severity::Error => self.log_error(diagnostic.to_string()),
            Severity::Warning => self
                .log
                .push(LogKind::Info, self.frame, diagnostic.to_string()),
            // Notes: "kept the last good version of ..." says it in one line for all of them.
            _ => {}
        }
    }

    fn log_error(&mut self, text: String) {
        self.errors += 1;
        self.log.push(LogKind::Error, self.frame, text);
    }

    /// The live inspector's URL (with its token), when it serves one.
    pub fn inspector_url(&self) -> Option<&str> {
        self.inspector.as_ref().map(Inspector::url)
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, to change it (tests set up situations this way).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// The archetype library the game spawns from.
    pub fn library(&self) -> &ArchetypeLibrary {
        &self.library
    }

    /// What the game was started with.
    pub fn options(&self) -> &DemoOptions {
        &self.options
    }

    /// The log of reloads, errors and commands.
    pub fn log(&self) -> &EventLog {
        &self.log
    }

    /// Frames stepped so far (paused frames included).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Simulated seconds so far (paused frames excluded).
    pub fn clock(&self) -> f64 {
        self.clock
    }

    /// Whether the simulation is paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Hot reloads that changed archetypes or the scene, so far.
    pub fn reloads(&self) -> u64 {
        self.reloads
    }

    /// Errors logged so far (broken archetype edits, failed saves and loads, failed spawns).
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// Friendly and hostile entities that died so far.
    pub fn fallen(&self) -> (u64, u64) {
        (self.fallen_friendly, self.fallen_hostile)
    }

    /// The archetype files' current errors (the last good versions are in effect meanwhile).
    pub fn current_errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.library.diagnostics().iter().filter(|d| d.is_error())
    }

    /// Every spawnable archetype, in name order, with its live instance count and glyph.
    pub fn archetype_counts(&self) -> Vec<ArchetypeCount> {
        let mut live: HashMap<_, usize> = HashMap::new();
        for marker in self.world.query::<&ArchetypeInstance>().iter() {
            if marker.is_root() {
                *live.entry(marker.archetype).or_default() += 1;
            }
        }
        let mut counts = Vec::new();
        for name in self.library.names() {
            let archetype = self.library.get(name);
            if archetype.is_some_and(|a| a.is_abstract()) {
                continue;
            }
            let glyph = archetype
                .and_then(|a| a.resolved().components.get("Glyph"))
                .and_then(|value| serde_json::from_value::<Glyph>(value.clone()).ok());
            let count = self
                .library
                .id(name)
                .and_then(|id| live.get(&id))
                .copied()
                .unwrap_or(0);
            counts.push(ArchetypeCount {
                name: name.to_string(),
                glyph,
                live: count,
            });
        }
        counts
    }

    /// The figures the headless mode prints.
    pub fn summary(&self) -> HeadlessSummary {
        HeadlessSummary {
            frames: self.frame,
            seconds: self.clock,
            entities: self.world.len(),
            reloads: self.reloads,
            errors: self.errors,
        }
    }
}
