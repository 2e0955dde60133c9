//! The demo game: a top-down arena whose entities are all data-driven.

pub mod components;
