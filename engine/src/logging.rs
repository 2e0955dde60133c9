//! What the library logs through `tracing`: a span per operation a game notices and an event
//! when it ends, with its figures as fields. The crate documentation (`# Logging` in lib.rs)
//! lists every span, level and field; keep it in step.

use std::path::Path;
use std::time::{Duration, Instant};

use hecs::{Entity, World};

use crate::archetype::ArchetypeLibrary;
use crate::component::StableId;
use crate::scene::{LoadedScene, SceneError};
use crate::scene::{SceneEncoding, SceneSaveError};

/// A duration in milliseconds, to a tenth (what a person reading a log compares).
pub(crate) fn ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 10_000.0).round() / 10.0
}

fn ms_since(started: Instant) -> f64 {
    ms(started.elapsed())
}

/// Logs the end of a library load (inside its `load_archetypes` span).
pub(crate) fn archetypes_loaded(library: &ArchetypeLibrary, started: Instant) {
    let ms = ms_since(started);
    let files = library.len();
    let archetypes = library
        .names()
        .filter(|name| library.get(name).is_some())
        .count();
    let errors = library.error_count();
    let warnings = library.diagnostics().len() - errors;
    if errors > 0 {
        tracing::warn!(files, archetypes, errors, warnings, ms, "loaded archetypes");
    } else {
        tracing::info!(files, archetypes, errors, warnings, ms, "loaded archetypes");
    }
}

/// How a file is named in a log: its path, or `-` for bytes from memory.
fn shown(file: Option<&Path>) -> String {
    file.map_or_else(|| "-".to_string(), |file| file.display().to_string())
}

/// Runs a scene load inside its span and logs how it ended.
pub(crate) fn scene_load(
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
pub(crate) fn scene_save(
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
pub(crate) fn scene_save_file(
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
