//! Peak memory of loading a big level: a JSON scene of `n` archetype instances (goblins; one in
//! five with a one-field override, `Health.current`), loaded into a fresh world.
//!
//! What is measured is the process's peak resident set during the load, above what it held
//! just before (the scene's text is already in memory then, and is reported on its own), and
//! what the loaded world still holds after. The peak is reset before the load through
//! `/proc/self/clear_refs` (Linux), so earlier workloads do not count; elsewhere the figure is
//! skipped.

use std::fmt::Write as _;
use std::fs;

use archetype_engine::{load_scene, ArchetypeLibrary, SceneLoadOptions, StableId};
use hecs::World;
use tempfile::TempDir;

use crate::bench::memory::status_bytes;
use crate::bench::reload::goblin_library;
use crate::bench::spawn::GOBLIN;

/// What one load of the instance scene took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadPeak {
    /// The highest resident set during the load, above the resident set before it, in bytes.
    pub peak: u64,
    /// What the loaded world holds (the resident set after the load, above the one before).
    pub held: u64,
    /// The size of the scene's text.
    pub input: u64,
}

/// The goblin library and the text of a scene of `n` instances of it.
pub struct InstanceScene {
    library: ArchetypeLibrary,
    text: String,
    n: usize,
    _dir: TempDir,
}

impl InstanceScene {
    /// Writes the goblin archetypes and generates the scene text (in the layout the library
    /// writes, sorted by stable ID).
    ///
    /// # Panics
    /// If the archetypes cannot be written or do not load.
    pub fn new(n: usize) -> Self {
        let (dir, library) = goblin_library(12);
        let mut text = String::with_capacity(n * 80 + 64);
        text.push_str("{\n  \"format\": 2,\n  \"entities\": [");
        for i in 0..n {
            let separator = if i == 0 { "" } else { "," };
            let id = StableId(i as u64 + 1);
            let _ = write!(
                text,
                "{separator}\n    {{\n      \"id\": \"{id}\",\n      \"archetype\": \"{GOBLIN}\""
            );
            if i % 5 == 0 {
                let current = (i % 11) as f32 + 0.5;
                let _ = write!(
                    text,
                    ",\n      \"components\": {{\n        \"Health\": {{\n          \"current\": {current:?}\n        }}\n      }}"
                );
            }
            text.push_str("\n    }");
        }
        text.push_str("\n  ]\n}\n");
        InstanceScene {
            library,
            text,
            n,
            _dir: dir,
        }
    }

    /// Instances in the scene.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the scene is empty.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Loads the scene into a fresh world, measuring the resident set; `None` where the peak
    /// cannot be measured (not Linux).
    ///
    /// # Panics
    /// If the scene does not load, or loads another number of entities.
    pub fn load_peak(&self) -> Option<LoadPeak> {
        fs::write("/proc/self/clear_refs", "5").ok()?;
        let before = status_bytes("VmRSS:")?;
        let mut world = World::new();
        let loaded = load_scene(
            self.text.as_bytes(),
            None,
            &mut world,
            &self.library,
            &SceneLoadOptions::default(),
        )
        .unwrap_or_else(|error| panic!("bench: the instance scene does not load: {error}"));
        assert_eq!(loaded.len(), self.n, "bench: instances loaded");
        let peak = status_bytes("VmHWM:")?;
        let held = status_bytes("VmRSS:")?;
        drop(loaded);
        drop(world);
        Some(LoadPeak {
            peak: peak.saturating_sub(before),
            held: held.saturating_sub(before),
            input: self.text.len() as u64,
        })
    }
}
