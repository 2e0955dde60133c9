//! `archetool`: the command line for archetype-engine data, and the live demo.
//!
//! The command line lives in [`cli`]. A game with its own components builds its own `archetool`
//! on the same library ([`cli::run`] with its registry).
//!
//! # Features
//! All on by default (the shipped `archetool` has every subcommand); a game's own archetool
//! turns them off and picks what it wants:
//! `archetool = { version = "0.1", default-features = false, features = ["lsp"] }`.
//! - `lsp`: `archetool lsp`, the language server for editors (`archetool::cli::lsp`).
//! - `demo`: `archetool demo`, the live terminal arena, and the demo's game components
//!   (`archetool::demo`), with its terminal UI (ratatui, crossterm).
//! - `bench`: `archetool bench`, and the benchmark workloads (`archetool::bench`) the criterion
//!   benchmarks share; needs `demo` and `lsp`, whose components and server it measures.
//!
//! Without a feature its subcommand is not built: `--help` does not list it, and running it is
//! an unknown subcommand.

#![warn(missing_docs)]

#[cfg(feature = "bench")]
pub mod bench;
pub mod cli;
#[cfg(feature = "demo")]
pub mod demo;
