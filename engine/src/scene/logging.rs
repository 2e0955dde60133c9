//! The scene operations' log spans (`load_scene`, `save_scene`, `save_scene_file`; see
//! `# Logging` in the crate documentation).

use std::path::Path;
use std::time::Instant;

use hecs::{Entity, World};

use crate::component::StableId;
use crate::logging::{ms_since, shown};

use super::{LoadedScene, SceneEncoding, SceneError, SceneSaveError};

/// Runs a scene load inside its span and logs how it ended.
pub(super) fn scene_load(
    file: Option<&Path>,
    bytes: usize,
    load: impl FnOnce() -> Result<LoadedScene, SceneError>,
) -> Result<LoadedScene, SceneError> {
    let span = tracing::info_span!("load_scene", file = %shown(file), bytes);
    let _entered = span.enter();
    let started = Instant::now();
    let result = load();
    let ms = ms_since(started);
    match &result {
        Ok(scene) => {
            let warnings = scene.warnings().len();
            tracing::info!(entities = scene.len(), warnings, ms, "loaded scene");
        }
        Err(error) => tracing::warn!(error = %error, ms, "scene not loaded"),
    }
    result
}

/// Runs a scene save (to bytes) of `world` (or of `selection`) inside its span and logs how it
/// ended.
pub(super) fn scene_save(
    encoding: SceneEncoding,
    world: &World,
    selection: Option<&[Entity]>,
    save: impl FnOnce() -> Result<Vec<u8>, SceneSaveError>,
) -> Result<Vec<u8>, SceneSaveError> {
    let span = tracing::info_span!("save_scene", encoding = ?encoding);
    let _entered = span.enter();
    let started = Instant::now();
    let result = save();
    let ms = ms_since(started);
    match &result {
        Ok(bytes) => {
            // What a save writes: the selection, or every entity with a stable ID.
            let entities =
                selection.map_or_else(|| world.query::<&StableId>().iter().len(), <[Entity]>::len);
            tracing::info!(entities, bytes = bytes.len(), ms, "saved scene");
        }
        Err(error) => tracing::warn!(error = %error, ms, "scene not saved"),
    }
    result
}

/// Runs a save to a file inside its span (the save's own span nests in it) and logs a failed
/// write.
pub(super) fn scene_save_file(
    file: &Path,
    save: impl FnOnce() -> Result<(), SceneSaveError>,
) -> Result<(), SceneSaveError> {
    let span = tracing::info_span!("save_scene_file", file = %file.display());
    let _entered = span.enter();
    let result = save();
    if let Err(error @ SceneSaveError::Io { .. }) = &result {
        tracing::warn!(error = %error, "scene not written");
    }
    result
}
