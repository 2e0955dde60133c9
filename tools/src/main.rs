//! The `archetool` binary: the command line of [`archetool::cli`] with the demo's components.
//!
//! Exit codes: 0 success, 1 findings (validation errors, files `fmt --check` or
//! `migrate --check` would change, a scene that does not load, scenes that differ), 2 usage or
//! I/O error.

use std::process::ExitCode;

fn main() -> ExitCode {
    let registry = archetool::demo::components::registry();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    archetool::cli::run(std::env::args_os(), registry, &mut out, &mut err).into()
}
