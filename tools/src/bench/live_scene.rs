//! Live scenes: a level of plain entities, followed by a [`LiveScene`]; one entity's field is
//! changed in the file, and the time until the world has it is measured (through the real
//! watcher for the latency figures, by [`LiveScene::reload`] alone for the scaling one).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use archetype_engine::{
    ArchetypeLibrary, HotReloadOptions, LiveScene, LoadOptions, SceneLoadOptions, StableId,
    Transform,
};
use hecs::{Entity, World};

use crate::bench::reload::until_applied;
use crate::bench::scene::registry;

/// How long one save may take to show up before the run gives up.
const SAVE_TIMEOUT: Duration = Duration::from_secs(20);

/// A level of `entities` plain entities, each with a name and a position; entity `moved` is at
/// `x` instead of its index.
pub fn level(entities: usize, moved: usize, x: f32) -> String {
    let mut text = String::with_capacity(entities * 120 + 64);
    text.push_str("{\n  \"format\": 2,\n  \"entities\": [\n");
    for i in 0..entities {
        let at = if i == moved { x } else { i as f32 };
        text.push_str(&format!(
            "    {{ \"id\": \"{:016x}\", \"components\": {{ \"Name\": \"e{i}\", \"Transform\": {{ \"translation\": [{at:?}, 0.0, 0.0] }} }} }}{}\n",
            i + 1,
            if i + 1 == entities { "" } else { "," }
        ));
    }
    text.push_str("  ]\n}\n");
    text
}

/// A level on disk, loaded and followed.
pub struct LiveLevel {
    _dir: tempfile::TempDir,
    /// The level's file.
    pub path: PathBuf,
    /// An empty library (the level's entities are plain).
    pub library: ArchetypeLibrary,
    /// The world the level is in.
    pub world: World,
    /// The level, followed.
    pub scene: LiveScene,
    /// The entity whose position the edits change (the middle one).
    pub probe: Entity,
    /// How many entities the level has.
    pub entities: usize,
}

impl LiveLevel {
    /// Writes a level of `entities` entities and loads it.
    ///
    /// # Errors
    /// If the files cannot be written or the level does not load.
    pub fn new(entities: usize) -> Result<LiveLevel, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
        let path = dir.path().join("level.scene.json");
        write(&path, &level(entities, 0, 0.0))?;
        let library =
            ArchetypeLibrary::empty(dir.path(), Arc::new(registry()), LoadOptions::default());
        let mut world = World::new();
        let options = SceneLoadOptions::default();
        let (scene, _) = LiveScene::load(&path, &mut world, &library, &options)
            .map_err(|e| format!("the level did not load: {e}"))?;
        let probe = scene
            .entity(StableId(entities as u64 / 2 + 1))
            .ok_or("the level has no middle entity")?;
        Ok(LiveLevel {
            _dir: dir,
            path,
            library,
            world,
            scene,
            probe,
            entities,
        })
    }

    /// Writes the level with its middle entity at `x`.
    pub fn move_probe(&self, x: f32) -> Result<(), String> {
        write(&self.path, &level(self.entities, self.entities / 2, x))
    }

    /// Whether the probe is at `x` in the world.
    pub fn probe_at(&self, x: f32) -> bool {
        self.world
            .get::<&Transform>(self.probe)
            .is_ok_and(|transform| transform.translation.x == x)
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Saves the level `saves` times, each with the middle entity moved, and measures each save
/// from the write until `LiveScene::apply` (polled every millisecond, as a game's frames
/// would) has it in the world; with the time writing the edit into the world took each time
/// (`LiveSceneReport::written_in`).
///
/// # Errors
/// If the level cannot be set up or watched, or a save does not apply.
pub fn edit_latency(
    entities: usize,
    saves: usize,
) -> Result<(Vec<Duration>, Vec<Duration>), String> {
    let mut level = LiveLevel::new(entities)?;
    level
        .scene
        .watch(HotReloadOptions::default())
        .map_err(|e| format!("cannot watch the level: {e}"))?;
    let mut samples = Vec::with_capacity(saves);
    let mut writes = Vec::with_capacity(saves);
    for save in 0..saves {
        let x = -1.0 - save as f32;
        level.move_probe(x)?;
        let written = Instant::now();
        let latency = until_applied(save, written, SAVE_TIMEOUT, || {
            let report = level.scene.apply(&mut level.world, &level.library);
            if let Some(error) = report.error() {
                return Err(format!("save {save} did not apply: {error}"));
            }
            if !report.is_empty() {
                writes.push(report.written_in());
            }
            Ok(level.probe_at(x))
        })?;
        samples.push(latency);
    }
    Ok((samples, writes))
}
