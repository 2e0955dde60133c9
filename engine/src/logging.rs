//! What the library logs through `tracing`: a span per operation a game notices and an event
//! when it ends, with its figures as fields. The crate documentation (`# Logging` in lib.rs)
//! lists every span, level and field; keep it in step. The spans are opened where the
//! operations are (`archetype::library` for `load_archetypes`, `scene::logging` for scenes,
//! `reload::hot_reloader` for `hot_reload`); this module holds what they share.

use std::path::Path;
use std::time::{Duration, Instant};

/// A duration in milliseconds, to a tenth (what a person reading a log compares).
pub(crate) fn ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 10_000.0).round() / 10.0
}

pub(crate) fn ms_since(started: Instant) -> f64 {
    ms(started.elapsed())
}

/// How a file is named in a log: its path, or `-` for bytes from memory.
pub(crate) fn shown(file: Option<&Path>) -> String {
    file.map_or_else(|| "-".to_string(), |file| file.display().to_string())
}
