//! `archetool`: the command line for archetype-engine data, and the live demo.
//!
//! The command line lives in [`cli`]; the demo's game components in [`demo`]. A game with its own
//! components builds its own `archetool` on the same library ([`cli::run`] with its registry).

#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod demo;
