//! Helpers for tools built on the library: `archetool`, editor integrations, a game's own
//! asset tool. A game does not need them to load archetypes, spawn, hot-reload or load and save
//! scenes; they are here so that tools follow the library's own rules (archetype names, reading
//! and writing files, suggestions) instead of restating them.
//!
//! ```
//! use archetype_engine::tooling::{check_archetype_name, did_you_mean};
//!
//! assert!(check_archetype_name("enemies/goblin").is_ok());
//! assert!(check_archetype_name("enemies/../goblin").is_err());
//! assert_eq!(did_you_mean("healht", ["health", "speed"]).as_deref(), Some("health"));
//! ```

pub use crate::archetype::{
    check_archetype_name, NameProblem, NewNameError, MAX_NAME_BYTES as MAX_ARCHETYPE_NAME_BYTES,
    NAME_PATTERN as ARCHETYPE_NAME_PATTERN,
};
pub use crate::fs::{
    create_atomically, read_regular_file, real_path_inside, write_atomically, FileKind,
    FileTooLarge, NotRegularFile,
};
pub use crate::json::{did_you_mean, TextLines};
#[cfg(feature = "binary")]
pub use crate::scene::{read_binary_scene_header, BinarySceneHeader};
pub use crate::scene::{scene_without_overrides, SceneTextEditError};
