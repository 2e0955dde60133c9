//! Data-driven entities for [hecs]: archetypes in JSON files, with inheritance, children and
//! entity references, validated with precise errors and spawned by name as fast as a static
//! `world.spawn(..)`.
//!
//! - Components are plain Rust types deriving `Serialize`, `Deserialize` and `Clone`,
//!   registered once in a [`ComponentRegistry`].
//! - An [`ArchetypeLibrary`] loads every `*.json` file under a directory: `enemies/goblin.json`
//!   defines the archetype `enemies/goblin`. Inheritance (`extends`) merges component values as
//!   JSON Merge Patch; every component value is deserialized up front, so spawning only clones.
//! - Every problem is reported at once, as `file:line:column` with a suggestion where one
//!   exists ([`Diagnostic`]).
//!
//! # Example
//! ```
//! use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! struct Health { current: f32, max: f32 }
//!
//! let mut registry = ComponentRegistry::new();
//! registry.register::<Health>().unwrap();
//!
//! // Usually `ArchetypeLibrary::load("archetypes", registry)`; here the files live in memory.
//! let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
//! library.set_sources([
//!     ("creature.json", Some(r#"{ "abstract": true, "components": { "Health": { "current": 10, "max": 10 } } }"#)),
//!     ("goblin.json", Some(r#"{ "extends": "creature", "components": { "Health": { "max": 12 } } }"#)),
//! ]);
//! assert!(library.diagnostics().is_empty());
//!
//! let mut world = hecs::World::new();
//! let goblin = library.spawn(&mut world, "goblin").unwrap();
//! assert_eq!(*world.get::<&Health>(goblin).unwrap(), Health { current: 10.0, max: 12.0 });
//! ```
//!
//! [hecs]: https://docs.rs/hecs

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod archetype;
mod archetype_diff;
mod archetype_file;
mod archetype_instance;
mod archetype_library;
mod archetype_name;
mod archetype_ref;
mod archetype_source;
mod archetype_tree;
mod asset_path;
mod atomic_file;
mod builtin;
mod compiled_archetype;
mod component_registry;
mod diagnostic;
mod entity_ref;
mod field_path;
mod field_probe;
mod hot_reloader;
mod ignored_fields;
mod instance_patcher;
mod json_text;
mod limits;
pub mod merge_patch;
mod operator;
mod partial_check;
mod reference_context;
mod regular_file;
mod resolver;
mod scene_fast_load;
mod scene_format;
mod scene_json_scan;
mod scene_load;
mod scene_save;
mod shared;
mod span_index;
mod spawn_error;
mod stable_id;
mod suggest;
mod transform;
mod value_check;
mod value_merge;
mod value_reader;

pub use archetype::Archetype;
pub use archetype_file::{keys, FORMAT_VERSION};
pub use archetype_instance::{ArchetypeId, ArchetypeInstance, InstanceOverrides};
pub use archetype_library::{
    ArchetypeChange, ArchetypeLibrary, LibraryUpdate, LoadError, LoadOptions,
};
pub use archetype_name::{
    check_archetype_name, NameProblem, NAME_PATTERN as ARCHETYPE_NAME_PATTERN,
};
pub use archetype_ref::ArchetypeRef;
pub use asset_path::{AnyAsset, AssetKind, AssetPath};
pub use atomic_file::{create_atomically, write_atomically};
pub use builtin::{Children, Name, Parent};
pub use component_registry::{
    Component, ComponentId, ComponentOptions, ComponentRegistry, RegistryError, SchemaFn,
};
pub use diagnostic::{printable, Diagnostic, DiagnosticCode, Diagnostics, Severity};
pub use entity_ref::EntityRef;
pub use field_path::{FieldPath, PathSegment};
pub use hot_reloader::{HotReloadOptions, HotReloader, WatchBackend, WatchError};
pub use instance_patcher::{apply_update, ReloadReport};
pub use json_text::Position;
pub use limits::Limits;
pub use regular_file::{read_regular_file, FileKind, FileTooLarge, NotRegularFile};
pub use resolver::ResolvedEntity;
pub use scene_format::{scene_keys, BINARY_SCENE_FORMAT_VERSION, SCENE_FORMAT_VERSION};
pub use scene_load::{
    load_scene, load_scene_from_path, read_binary_scene_header, BinarySceneHeader, IdConflict,
    LoadedScene, SceneError, SceneLoadOptions, SceneMigration,
};
pub use scene_save::{
    save_scene, save_scene_to_path, DanglingReferences, SceneEncoding, SceneSaveError,
    SceneSaveOptions,
};
pub use shared::Shared;
pub use spawn_error::SpawnError;
pub use stable_id::{ParseStableIdError, StableId};
pub use suggest::did_you_mean;
pub use transform::Transform;

/// The JSON Schema library component schemas are written with (re-exported so games and tools
/// use the same version).
pub use schemars;

/// The README's Rust examples, compiled by `cargo test` so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
