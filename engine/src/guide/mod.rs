//! # The archetype-engine guide
//!
//! How to make a game's entities data-driven with archetype files, scenes and `archetool`:
//! the chapters below, published with the crate so the guide always matches the version a game
//! depends on. Every Rust example in it is compiled and run by `cargo test`, every JSON example
//! is loaded by a test, and every link is checked when the documentation is built.
//!
//! **Designers** (no Rust needed) start with [archetype files](designer::archetype_files).
//! **Programmers** start with [components](programmer::components) and
//! [spawning](programmer::spawning). Everyone who edits files wants the
//! [editor set-up](tools::editors).
//!
//! | Part | Chapters |
//! | --- | --- |
//! | [Designers](designer) | [archetype files](designer::archetype_files), [inheritance](designer::inheritance), [operators](designer::operators), [variation](designer::variation), [children](designer::children), [scene files](designer::scene_files), [errors](designer::errors) |
//! | [Programmers](programmer) | [components](programmer::components), [spawning](programmer::spawning), [hot reload](programmer::hot_reload), [scenes](programmer::scenes), [prepared scenes](programmer::prepared_scenes), [save compatibility](programmer::save_compatibility), [features](programmer::features), [logging](programmer::logging) |
//! | [Tools](tools) | [archetool](tools::archetool), [editors](tools::editors), [the live demo](tools::demo) |
//! | The project | [architecture](architecture), [performance](performance), [reliability](reliability) |
//!
//! The chapters' sources are the Markdown files under `engine/src/guide/`;
//! `cargo doc -p archetype-engine --open` shows them locally.

/// Designers: the archetype language and scene files, no Rust needed.
pub mod designer {
    #[doc = include_str!("designer/archetype_files.md")]
    pub mod archetype_files {}
    #[doc = include_str!("designer/inheritance.md")]
    pub mod inheritance {}
    #[doc = include_str!("designer/operators.md")]
    pub mod operators {}
    #[doc = include_str!("designer/variation.md")]
    pub mod variation {}
    #[doc = include_str!("designer/children.md")]
    pub mod children {}
    #[doc = include_str!("designer/scene_files.md")]
    pub mod scene_files {}
    #[doc = include_str!("designer/errors.md")]
    pub mod errors {}
}

/// Programmers: components, spawning, hot reload, scenes and the crate's features.
pub mod programmer {
    #[doc = include_str!("programmer/components.md")]
    pub mod components {}
    #[doc = include_str!("programmer/spawning.md")]
    pub mod spawning {}
    #[doc = include_str!("programmer/hot_reload.md")]
    pub mod hot_reload {}
    #[doc = include_str!("programmer/scenes.md")]
    pub mod scenes {}
    #[doc = include_str!("programmer/prepared_scenes.md")]
    pub mod prepared_scenes {}
    #[doc = include_str!("programmer/save_compatibility.md")]
    pub mod save_compatibility {}
    #[doc = include_str!("programmer/features.md")]
    pub mod features {}
    #[doc = include_str!("programmer/logging.md")]
    pub mod logging {}
}

/// Tools: the `archetool` command line, editor set-up and the live demo.
pub mod tools {
    #[doc = include_str!("tools/archetool.md")]
    pub mod archetool {}
    #[doc = include_str!("tools/editors.md")]
    pub mod editors {}
    #[doc = include_str!("tools/demo.md")]
    pub mod demo {}
}

#[doc = include_str!("architecture.md")]
pub mod architecture {}
#[doc = include_str!("performance.md")]
pub mod performance {}
#[doc = include_str!("reliability.md")]
pub mod reliability {}
