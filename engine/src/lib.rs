#![doc = include_str!("crate_docs.md")]
//!
//! # Cargo features
//!
//! All on by default; a game that does not need a part turns it off
//! (`default-features = false, features = [...]`) and does not compile its dependencies.
//!
//! | feature | gives | dependency |
//! |---|---|---|
//! | `hot-reload` | `HotReloader`, `HotReloadOptions`: watching the archetypes directory. Reloading by hand (`ArchetypeLibrary::reload_all`, `apply_update`) needs no feature. | notify |
//! | `binary` | `SceneEncoding::Binary` (`*.scene.bin`), `tooling::read_binary_scene_header`. Without it, loading a binary scene is an `unsupported-format` error naming the feature, and hot reload patches every instance through JSON. | postcard, crc32fast |
//! | `inspector` (off by default) | `Inspector`, `InspectorOptions`: the live inspector, a web page on loopback showing the running world and writing values back into archetype files. Nothing of it is compiled without the feature. | none (a bounded HTTP/1.1 server on `std::net`) |
//! | `schema` | `ComponentRegistry::register_with_schema`, `ComponentOptions::json_schema`, the `schemars` re-export: component JSON Schemas for `archetool schema` and editors. | schemars |
//!
//! # Logging
//!
//! The library logs through [`tracing`](https://docs.rs/tracing) (target `archetype_engine`):
//! a span per operation a game notices and one event when it ends, with its figures as
//! fields. Nothing is logged per entity or per frame; a frame with no settled change logs
//! nothing. A game sees the logs once it installs a subscriber, for example
//! [tracing-subscriber](https://docs.rs/tracing-subscriber)'s:
//!
//! ```ignore
//! // Cargo.toml: tracing-subscriber = "0.3"
//! tracing_subscriber::fmt().with_max_level(tracing::Level::INFO).init();
//! // INFO load_archetypes{root=archetypes}: loaded archetypes files=20 archetypes=20 errors=0 warnings=0 ms=3.1
//! ```
//!
//! | span | level | fields | closing event and its fields |
//! |---|---|---|---|
//! | `load_archetypes` | info | `root` | `loaded archetypes`: `files`, `archetypes` (usable), `errors`, `warnings`, `ms`; at warn when `errors` > 0 |
//! | `hot_reload` | info | `files` (changed), `rescan` | `reloaded archetypes` when any changed: `archetypes`, `names`, `entities` (updated), `spawned`, `despawned`, `orphaned`, `ms`; a warn per held-back edit, an error per problem |
//! | `save_scene` | info | `encoding` | `saved scene`: `entities`, `bytes`, `ms`; on failure `scene not saved` (warn) with `error` |
//! | `save_scene_file` | info | `file` | holds `save_scene`; `scene not written` (warn) with `error` when the write fails |
//! | `load_scene` | info | `file` (`-` for bytes from memory), `bytes` | `loaded scene`: `entities`, `warnings`, `ms`; on failure `scene not loaded` (warn) with `error` |
//!
//! [hecs]: https://docs.rs/hecs

#![warn(missing_docs)]
#![deny(unsafe_code)]

mod archetype;
mod component;
mod diagnostic;
mod fs;
pub mod guide;
#[cfg(feature = "inspector")]
mod inspector;
mod json;
#[cfg(test)]
mod layering;
mod limits;
mod logging;
mod reload;
mod scene;
pub mod tooling;

pub use json::merge_patch;

pub use archetype::Archetype;
pub use archetype::ArchetypeRef;
pub use archetype::ResolvedEntity;
pub use archetype::SpawnError;
pub use archetype::DEFAULT_SPAWN_SEED;
pub use archetype::{keys, FORMAT_VERSION};
pub use archetype::{AnyAsset, AssetKind, AssetPath};
pub use archetype::{ArchetypeChange, ArchetypeLibrary, LibraryUpdate, LoadError, LoadOptions};
pub use archetype::{
    ArchetypeId, ArchetypeInstance, InstanceOverrides, OverrideOrigin, OverridesId,
};
#[cfg(feature = "binary")]
pub use archetype::{CookError, CookErrorKind, COOK_FORMAT_VERSION};
pub use archetype::{FieldValue, WriteBackError};
pub use archetype::{HeldBack, HeldBackReason};
pub use component::EntityRef;
#[cfg(feature = "schema")]
pub use component::SchemaFn;
pub use component::Shared;
pub use component::Transform;
pub use component::{Children, Name, Parent};
pub use component::{
    Component, ComponentId, ComponentOptions, ComponentRegistry, RegistryError, Rounding,
};
pub use component::{ParseStableIdError, StableId};
pub use diagnostic::{printable, Diagnostic, DiagnosticCode, Diagnostics, Related, Severity};
#[cfg(feature = "inspector")]
pub use inspector::{Inspector, InspectorError, InspectorOptions};
pub use json::Position;
pub use json::{FieldPath, PathSegment};
pub use limits::Limits;
pub use reload::{apply_update, PatchAction, PatchFailure, ReloadReport};
#[cfg(feature = "hot-reload")]
pub use reload::{HotReloadOptions, HotReloader, WatchBackend, WatchError, WatchedChanges};
pub use scene::Scenes;
#[cfg(feature = "binary")]
pub use scene::BINARY_SCENE_FORMAT_VERSION;
pub use scene::{
    load_scene, load_scene_from_path, IdConflict, LoadedScene, RemovedChildren, SceneChange,
    SceneError, SceneLoadOptions,
};
pub use scene::{read_scene_header, ArchetypeNodes, SceneHeader};
pub use scene::{
    save_scene, save_scene_to_path, DanglingReferences, SceneEncoding, SceneSaveError,
    SceneSaveOptions,
};
pub use scene::{scene_keys, SCENE_FORMAT_VERSION};
pub use scene::{sub_scene_id, PlacedScenes, SubScenes};
pub use scene::{
    CommitError, PrepareError, PrepareProgress, PreparedScene, ReservedScene, ResolvedScene,
};
pub use scene::{LiveScene, LiveSceneFailure, LiveSceneReport};
pub use scene::{MigrateFn, SceneMigration};
pub use scene::{SceneDocument, SceneEntry};

/// The ECS the library spawns into, re-exported so a game uses the same hecs version as the
/// engine (`archetype_engine::hecs::World`).
pub use hecs;

/// The JSON Schema library component schemas are written with (re-exported so games and tools
/// use the same version).
#[cfg(feature = "schema")]
pub use schemars;

/// The README's Rust examples, compiled by `cargo test` so they stay true (they use every
/// feature).
#[cfg(all(
    doctest,
    feature = "hot-reload",
    feature = "binary",
    feature = "schema"
))]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// Option structs grow in minor versions, so code outside the crate cannot build them with a
/// struct literal (it would break when a field is added); `Default` and field assignment work.
///
/// ```compile_fail,E0639
/// let _ = archetype_engine::LoadOptions { limits: Default::default(), unknown_fields: archetype_engine::Severity::Error };
/// ```
/// ```compile_fail,E0639
/// use std::time::Duration;
/// let _ = archetype_engine::HotReloadOptions { debounce: Duration::ZERO, max_wait: Duration::ZERO, force_polling: false, poll_interval: Duration::ZERO };
/// ```
/// ```compile_fail,E0639
/// let _ = archetype_engine::Limits { max_file_bytes: 1, max_depth: 1, max_children_depth: 1, max_scene_entities: 1, max_scene_values: 1, max_scene_bytes: 1, max_sub_scene_depth: 1 };
/// ```
/// ```compile_fail,E0639
/// let _ = archetype_engine::SceneLoadOptions { on_id_conflict: Default::default(), limits: Default::default(), migration: None, unknown_fields: archetype_engine::Severity::Error, removed_children: Default::default(), all_errors: false, sub_scenes: Default::default() };
/// ```
/// ```compile_fail,E0639
/// let _ = archetype_engine::SceneSaveOptions { full: false, dangling_references: Default::default(), selection: None, max_threads: 0 };
/// ```
#[cfg(all(doctest, feature = "hot-reload"))]
struct OptionStructsAreNonExhaustive;

/// Reports and errors grow in minor versions too: their fields are read through methods
/// (`ReloadReport`, `SceneError`), or code outside the crate cannot build them or match them
/// without a `_` arm (`#[non_exhaustive]`).
///
/// ```compile_fail,E0616
/// fn updated(report: &archetype_engine::ReloadReport) -> usize { report.entities_updated }
/// ```
/// ```compile_fail,E0616
/// fn offset(error: &archetype_engine::SceneError) -> Option<usize> { error.offset }
/// ```
/// ```compile_fail,E0639
/// use archetype_engine::{HeldBack, HeldBackReason};
/// let reason = HeldBackReason::BrokenDependency { dependency: String::new() };
/// let _ = HeldBack { archetype: String::new(), reason };
/// ```
/// ```compile_fail,E0639
/// let _ = archetype_engine::ArchetypeInstance { archetype: archetype_engine::ArchetypeId(0), node: 0, overrides: Default::default() };
/// ```
/// ```compile_fail,E0004
/// use archetype_engine::SceneEncoding;
/// fn name(encoding: SceneEncoding) -> &'static str {
///     match encoding {
///         SceneEncoding::Json => "JSON",
///         SceneEncoding::Binary => "binary",
///     }
/// }
/// ```
#[cfg(all(doctest, feature = "hot-reload"))]
struct ReportsAndErrorsAreNonExhaustive;

/// The crate's own README (the crates.io page), compiled by `cargo test` too.
#[cfg(all(doctest, feature = "hot-reload"))]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;
