//! [`SubScenes`]: the scenes a scene file places (issue 23), for `archetool scene info`: each
//! placed file with how many times, and the entities the scene holds once they are placed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use archetype_engine::tooling::read_regular_file;
use archetype_engine::{ArchetypeLibrary, SceneDocument, SceneEntry};

/// How deep sub-scenes are followed (a cycle stops sooner; the load reports it).
const MAX_DEPTH: usize = 32;

/// The largest sub-scene file read (as the library's default scene limit).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The scenes a scene places.
pub(crate) struct SubScenes {
    /// Each placed file as written (relative to the placing file) → placements.
    pub placed: BTreeMap<String, usize>,
    /// Entities once every sub-scene is placed (the placing entries count as entities), or why
    /// that cannot be counted.
    pub flattened: Result<usize, String>,
}

impl SubScenes {
    /// The sub-scenes of `entries`, read from `file`; `None` if it places none.
    pub fn of(file: &Path, entries: &[SceneEntry]) -> Option<SubScenes> {
        let mut placed = BTreeMap::new();
        for scene in entries.iter().filter_map(|entry| entry.scene.as_ref()) {
            *placed.entry(scene.clone()).or_insert(0) += 1;
        }
        if placed.is_empty() {
            return None;
        }
        // Sub-scenes are read as written: no components are needed to count their entries.
        let library = super::scene::as_written(Path::new("."));
        let mut stack = vec![canonical(file)];
        let flattened = flattened(file, entries, &library, &mut stack);
        Some(SubScenes { placed, flattened })
    }
}

/// The entities `entries` (read from `file`) hold with their sub-scenes placed.
fn flattened(
    file: &Path,
    entries: &[SceneEntry],
    library: &ArchetypeLibrary,
    stack: &mut Vec<PathBuf>,
) -> Result<usize, String> {
    let mut total = 0;
    for entry in entries {
        total += 1;
        let Some(scene) = &entry.scene else {
            continue;
        };
        let path = file.parent().unwrap_or_else(|| Path::new("")).join(scene);
        let key = canonical(&path);
        if stack.contains(&key) || stack.len() >= MAX_DEPTH {
            return Err(format!("`{scene}` places a scene that places it (a cycle)"));
        }
        let bytes = read_regular_file(&path, MAX_BYTES)
            .map_err(|error| format!("`{}` cannot be read: {error}", path.display()))?;
        let sub = SceneDocument::read(&bytes, Some(&path), library)
            .map_err(|error| format!("`{}` cannot be read: {error}", path.display()))?;
        stack.push(key);
        let count = flattened(&path, sub.entries(), library, stack);
        stack.pop();
        total += count?;
    }
    Ok(total)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
