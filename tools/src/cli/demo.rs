//! `archetool demo`: the live terminal arena ([`crate::demo`]).

use std::path::PathBuf;

use clap::Args;

use super::{CliError, Context, DirArg, Exit};
use crate::demo::{run, run_headless, DemoOptions};

/// Arguments of `archetool demo`.
#[derive(Clone, Debug, Args)]
pub struct DemoArgs {
    /// Run the simulation without a terminal UI and print a summary line per simulated second.
    #[arg(long)]
    pub headless: bool,
    /// With `--headless`: how many frames to run (at 30 frames per simulated second).
    #[arg(long, value_name = "N", default_value_t = 300, requires = "headless")]
    pub frames: u64,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub dir: DirArg,
    /// The scene the arena starts from (and `l` loads when there is no save yet).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "assets/scenes/arena.scene.json"
    )]
    pub scene: PathBuf,
    /// Where `s` saves the scene (and `l` loads it from).
    #[arg(long, value_name = "FILE", default_value = "saves/arena.scene.json")]
    pub scene_out: PathBuf,
    /// Serve the live inspector (a web page showing and editing the running world) at ADDR,
    /// on loopback by default with a free port, and print its URL (with the run's token) on a
    /// line of its own. Headless, frames then take real time.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub inspect: Option<String>,
    /// The seed of the simulation's random choices.
    #[arg(long, default_value_t = DemoOptions::DEFAULT_SEED)]
    pub seed: u64,
}

/// Runs the demo: interactive, or headless for `--frames` frames.
///
/// # Errors
/// If the archetypes or the scene cannot be loaded, or the terminal cannot be set up.
pub fn demo(args: &DemoArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let options = DemoOptions {
        dir: args.dir.dir.clone(),
        scene: args.scene.clone(),
        save: args.scene_out.clone(),
        seed: args.seed,
        inspect: args.inspect.clone(),
        ..DemoOptions::default()
    };
    let result = if args.headless {
        run_headless(options, args.frames, context.out).map(|_| ())
    } else {
        run(options)
    };
    result.map_err(|error| CliError::Usage(error.to_string()))?;
    Ok(Exit::Success)
}
