//! The game's own `archetool`: the shipped one's data subcommands and its language server,
//! knowing the game's components (no `demo`, no `bench`: the manifest turns archetool's default
//! features off). `cargo run -p my-game --bin my-game-archetool -- validate --dir archetypes`.

use std::io::Write;
use std::process::ExitCode;

use archetype_engine::ComponentRegistry;

fn main() -> ExitCode {
    let mut registry = ComponentRegistry::new();
    if let Err(error) = my_game::register_components(&mut registry) {
        let _ = writeln!(std::io::stderr(), "error: {error}");
        return ExitCode::from(2);
    }
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    archetool::cli::run(std::env::args_os(), registry, &mut out, &mut err).into()
}
