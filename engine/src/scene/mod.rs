//! Scenes: entity graphs with stable IDs in a file.
//!
//! - The format: `format` (keys, binary layout), `header`, `instance_diff` (binary instance
//!   diffs), and `document`, the read model tools use.
//! - Saving: `save`, with `entity_table` for its lookups by entity.
//! - `commit`: the one place a scene's entities enter a world (and leave it when a load is
//!   undone), their stable IDs, markers and parent links set there.
//! - Loading, two routes into one back-end: `load` (the entry point, the careful readers of
//!   both encodings, and the checks and plans of every entry), `json_scan` (the careful JSON
//!   reader's first pass), `fast_load` (the one-pass readers), `back_end` (what every load
//!   builds the world through), `follow` (the children archetypes gained), `sub_scene`
//!   (entries that place other scene files) with `sub_scene_plan` (the files they place, read
//!   first by the file rule and bounded), `migration` (old files), `logging`.
//! - The rules both routes apply, from one copy: `binary_entry` (a binary entry's layout),
//!   `scene_ids` (the stable ID each entity gets), `scene_budget` (the size limits),
//!   `id_index` (stable ID → entity).
//! - Preparing scenes off the game thread and committing them: `prepared`, `prepared_batch`,
//!   `prepare_progress`, `commit_error`; handles reserved before the commit so a worker
//!   decodes references: `reservation`, `reserved`.
//! - Live scenes, kept in step with their files' edits: `live`, with `live_edit` (what an edit
//!   changes, and writing it into the world).
//! - Tools' text edits of a scene file: `override_text` (an instance's overrides taken out).
//! - The `Scenes` facade: `api`.

// The scene modules' binary code stays compiled without `binary`, unreachable (see
// component/binary_codec.rs); the default build checks it for dead code.
mod api;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod back_end;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod binary_entry;
mod commit;
mod commit_error;
mod document;
mod entity_table;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod fast_load;
mod follow;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod format;
mod header;
mod id_index;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod instance_diff;
mod json_scan;
mod live;
mod live_edit;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod load;
mod logging;
mod migration;
mod override_text;
mod prepare_progress;
mod prepared;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod prepared_batch;
mod reservation;
mod reserved;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
mod save;
mod scene_budget;
mod scene_ids;
mod sub_scene;
mod sub_scene_plan;

pub use api::Scenes;
pub use commit_error::{CommitError, PrepareError};
pub use document::{SceneDocument, SceneEntry};
#[cfg(feature = "binary")]
pub use format::BINARY_SCENE_FORMAT_VERSION;
pub use format::{scene_keys, SCENE_FORMAT_VERSION};
pub use header::{read_scene_header, ArchetypeNodes, SceneHeader};
pub use live::{LiveScene, LiveSceneFailure, LiveSceneReport};
pub use load::{
    load_scene, load_scene_from_path, IdConflict, LoadedScene, RemovedChildren, SceneChange,
    SceneError, SceneLoadOptions, SubScenes,
};
#[cfg(feature = "binary")]
pub use load::{read_binary_scene_header, BinarySceneHeader};
pub use migration::{MigrateFn, SceneMigration};
pub use override_text::{scene_without_overrides, SceneTextEditError};
pub use prepare_progress::PrepareProgress;
pub use prepared::PreparedScene;
pub use reserved::{ReservedScene, ResolvedScene};
pub use save::{
    save_scene, save_scene_to_path, DanglingReferences, SceneEncoding, SceneSaveError,
    SceneSaveOptions,
};
pub use sub_scene::sub_scene_id;
pub use sub_scene_plan::PlacedScenes;
