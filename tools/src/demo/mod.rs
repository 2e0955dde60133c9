//! The demo game: a top-down arena whose entities are all data-driven.
//!
//! It shows the whole loop: the arena starts from a scene (`assets/scenes/arena.scene.json`),
//! spawners and guns spawn archetypes by name, squads follow their leader through entity
//! references, and every archetype file is hot-reloaded while the fight goes on: edit
//! `archetypes/enemies/goblin.json` (its glyph, colour or speed) and every goblin changes; break
//! it and the error shows in the log while the game runs on the last good version.
//!
//! # Entry points (for `archetool demo`)
//! ```text
//! pub fn run(options: DemoOptions) -> Result<(), DemoError>
//! pub fn run_headless(options: DemoOptions, frames: u64, out: &mut dyn std::io::Write)
//!     -> Result<HeadlessSummary, DemoError>
//!
//! pub struct DemoOptions {
//!     pub dir: PathBuf,            // --dir D    default "archetypes"
//!     pub scene: PathBuf,          // --scene F  default "assets/scenes/arena.scene.json"
//!     pub save: PathBuf,           // where `s` saves (a `--scene-out F`, if wanted);
//!                                  //            default "saves/arena.scene.json"
//!     pub seed: u64,               // default DemoOptions::DEFAULT_SEED
//!     pub fixed_step: Option<f32>, // seconds per frame; default None (real time;
//!                                  //            headless: HEADLESS_STEP, 1/30)
//!     pub inspect: Option<String>, // --inspect [ADDR]: serve the live inspector there
//! }
//! ```
//! Wiring `archetool demo [--headless --frames N] [--dir D] [--scene F]`:
//! ```no_run
//! use archetool::demo::{run, run_headless, DemoOptions};
//!
//! let headless: Option<u64> = None; // `--headless --frames N`
//! let options = DemoOptions {
//!     dir: "archetypes".into(),
//!     ..DemoOptions::default()
//! };
//! let result = match headless {
//!     Some(frames) => run_headless(options, frames, &mut std::io::stdout()).map(|_| ()),
//!     None => run(options),
//! };
//! if let Err(error) = result {
//!     eprintln!("error: {error}"); // exit code 2
//! }
//! ```
//!
//! # Codemap
//! - [`game`]: [`Game`], the state and its frame (hot reload, then the systems), the keys'
//!   commands, save and load.
//! - [`systems`]: movement, spawners, AI, turrets, projectiles, damage and death.
//! - [`arena`]: the arena's size and the level the checked-in scene holds
//!   ([`write_arena_scene`] regenerates it).
//! - [`ui`]: drawing a frame with ratatui; [`terminal`]: the interactive shell around it.
//! - [`components`]: the demo's components, registered with the archetype library.

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;

use archetype_engine::{
    CommitError, Diagnostic, InspectorError, PrepareError, SceneError, SceneSaveError, SpawnError,
    WatchError,
};

pub mod arena;
pub mod components;
pub mod event_log;
pub mod game;
pub mod rng;
pub mod systems;
pub mod terminal;
pub mod ui;

pub use arena::{build_arena, write_arena_scene, ARENA_HEIGHT, ARENA_SCENE, ARENA_WIDTH};
pub use event_log::{EventLog, LogEntry, LogKind};
pub use game::{ArchetypeCount, Command, Flow, Game, ShownPortrait};
pub use rng::Rng;

/// The time step of the headless mode when `fixed_step` is not given: 30 frames per second.
pub const HEADLESS_STEP: f32 = 1.0 / 30.0;

/// How to run the demo.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoOptions {
    /// The archetypes directory, watched for edits. Default `archetypes`.
    pub dir: PathBuf,
    /// The scene the arena starts from (and `l` loads when there is no save yet). Default
    /// `assets/scenes/arena.scene.json`.
    pub scene: PathBuf,
    /// Where `s` saves and `l` loads from. Default `saves/arena.scene.json`, so the checked-in
    /// scene is only overwritten when asked for (`--scene-out`).
    pub save: PathBuf,
    /// The seed of the simulation's randomness (spawn positions, wandering).
    pub seed: u64,
    /// Seconds per frame. `None`: real time in the terminal, [`HEADLESS_STEP`] headless.
    pub fixed_step: Option<f32>,
    /// Serve the live inspector at this address (`127.0.0.1:0`: a free port), its URL printed
    /// and logged; a headless run then paces its frames in real time, so the page can be
    /// used while it runs. Default `None`.
    pub inspect: Option<String>,
}

impl DemoOptions {
    /// The seed used unless another is given.
    pub const DEFAULT_SEED: u64 = 0x5EED;
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            dir: PathBuf::from("archetypes"),
            scene: PathBuf::from(ARENA_SCENE),
            save: PathBuf::from("saves/arena.scene.json"),
            seed: Self::DEFAULT_SEED,
            fixed_step: None,
            inspect: None,
        }
    }
}

/// Why the demo could not start or had to stop.
#[derive(Debug)]
#[non_exhaustive]
pub enum DemoError {
    /// The archetypes directory does not exist.
    MissingArchetypes {
        /// The directory.
        dir: PathBuf,
    },
    /// The archetypes have errors where the demo needs them clean (regenerating the arena
    /// scene).
    BrokenArchetypes {
        /// The directory.
        dir: PathBuf,
        /// Every error.
        errors: Vec<Diagnostic>,
    },
    /// The archetypes directory cannot be watched.
    Watch(WatchError),
    /// A scene does not load.
    Scene(SceneError),
    /// A scene's preparation stopped (it was cancelled).
    Prepare(PrepareError),
    /// A prepared scene does not go into the world (an archetype was reloaded meanwhile).
    Commit(CommitError),
    /// The scene cannot be saved.
    SaveScene(SceneSaveError),
    /// The arena level cannot be built.
    Spawn(SpawnError),
    /// A file or directory cannot be written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The terminal cannot be set up or drawn to.
    Terminal(io::Error),
    /// The headless summary cannot be written.
    Output(io::Error),
    /// The live inspector cannot listen at the address given.
    Inspect(InspectorError),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::MissingArchetypes { dir } => write!(
                f,
                "no archetypes directory at `{}`; run the demo from the repository root or pass --dir",
                dir.display()
            ),
            DemoError::BrokenArchetypes { dir, errors } => {
                write!(f, "the archetypes in `{}` have errors:", dir.display())?;
                for error in errors {
                    write!(f, "\n{error}")?;
                }
                Ok(())
            }
            DemoError::Watch(error) => write!(f, "{error}"),
            DemoError::Scene(error) => write!(f, "cannot load the scene: {error}"),
            DemoError::Prepare(error) => write!(f, "cannot load the scene: {error}"),
            DemoError::Commit(error) => write!(f, "cannot load the scene: {error}"),
            DemoError::SaveScene(error) => write!(f, "cannot save the scene: {error}"),
            DemoError::Spawn(error) => write!(f, "cannot build the arena: {error}"),
            DemoError::Io { path, source } => {
                write!(f, "cannot write `{}`: {source}", path.display())
            }
            DemoError::Terminal(error) => write!(f, "terminal: {error}"),
            DemoError::Inspect(error) => write!(f, "cannot start the inspector: {error}"),
            DemoError::Output(error) => write!(f, "cannot write the summary: {error}"),
        }
    }
}

impl std::error::Error for DemoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DemoError::Watch(error) => Some(error),
            DemoError::Scene(error) => Some(error),
            DemoError::Prepare(error) => Some(error),
            DemoError::Commit(error) => Some(error),
            DemoError::SaveScene(error) => Some(error),
            DemoError::Spawn(error) => Some(error),
            DemoError::Inspect(error) => Some(error),
            DemoError::Io { source, .. } => Some(source),
            DemoError::Terminal(error) | DemoError::Output(error) => Some(error),
            DemoError::MissingArchetypes { .. } | DemoError::BrokenArchetypes { .. } => None,
        }
    }
}

/// Where a headless run ended (also what each summary line shows).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadlessSummary {
    /// Frames stepped.
    pub frames: u64,
    /// Simulated seconds.
    pub seconds: f64,
    /// Live entities.
    pub entities: u32,
    /// Hot reloads that changed archetypes.
    pub reloads: u64,
    /// Errors logged (broken archetype edits, failed spawns).
    pub errors: u64,
}

/// One summary line: `t=3s frame=90 entities=41 reloads=1 errors=0`.
impl fmt::Display for HeadlessSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t={:.0}s frame={} entities={} reloads={} errors={}",
            self.seconds, self.frames, self.entities, self.reloads, self.errors
        )
    }
}

/// Runs the demo interactively in the terminal (see the [module docs](self) for the keys).
/// The terminal is restored on exit, on error and on panic.
///
/// # Errors
/// If the game cannot start (see [`Game::new`]) or the terminal cannot be used.
pub fn run(options: DemoOptions) -> Result<(), DemoError> {
    terminal::run(options)
}

/// Runs the same simulation without a terminal for `frames` frames of `options.fixed_step`
/// (default [`HEADLESS_STEP`]) as fast as it can, writing a [`HeadlessSummary`] line to `out`
/// after each simulated second and one for the last frame. Hot reload stays on.
///
/// # Errors
/// If the game cannot start (see [`Game::new`]) or `out` cannot be written.
pub fn run_headless(
    options: DemoOptions,
    frames: u64,
    out: &mut dyn Write,
) -> Result<HeadlessSummary, DemoError> {
    let step = options
        .fixed_step
        .filter(|step| step.is_finite() && *step > 0.0)
        .unwrap_or(HEADLESS_STEP);
    let mut game = Game::new(options)?;
    if let Some(url) = game.inspector_url() {
        writeln!(out, "{url}").map_err(DemoError::Output)?;
        out.flush().map_err(DemoError::Output)?;
    }
    // With the inspector, frames take real time: the page is for a person.
    let pace = game
        .inspector_url()
        .is_some()
        .then(|| std::time::Duration::from_secs_f32(step));
    let mut next_second = 1.0;
    let mut printed = false;
    for _ in 0..frames {
        let started = std::time::Instant::now();
        game.step(step);
        if let Some(pace) = pace {
            std::thread::sleep(pace.saturating_sub(started.elapsed()));
        }
        printed = false;
        // A small tolerance: thirty steps of 1/30 s add up to 0.99999... seconds.
        if game.clock() + 1e-6 >= next_second {
            writeln!(out, "{}", game.summary()).map_err(DemoError::Output)?;
            printed = true;
            next_second = (game.clock() + 1e-6).floor() + 1.0;
        }
    }
    if !printed {
        writeln!(out, "{}", game.summary()).map_err(DemoError::Output)?;
    }
    Ok(game.summary())
}
