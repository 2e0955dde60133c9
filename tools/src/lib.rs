//! `archetool`: the command line for archetype-engine data, and the live demo.
//!
//! The demo's game components live in [`demo`]; a game with its own components builds its own
//! `archetool` on the same library.

#![warn(missing_docs)]

pub mod demo;
