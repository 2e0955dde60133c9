//! The scene dimensions: entities in one scene, placements of a sub-scene, nesting depth, and
//! entities in a live scene an edit is carried from.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use archetype_engine::{load_scene_from_path, ArchetypeLibrary, LoadOptions, SceneLoadOptions};
use hecs::World;

use crate::bench::scaling::{time, Run};
use crate::bench::scene::{registry, SceneFixture};

/// `scaling_scene_entities`: `load_scene` of a JSON scene of `n` plain entities (the scene
/// workloads' world) into a fresh world.
pub fn scene_entities(n: usize) -> Run {
    let fixture = SceneFixture::new(n);
    Box::new(move || {
        let mut world = None;
        let elapsed = time(|| world = Some(fixture.load_json()));
        drop(world);
        elapsed
    })
}

/// `scaling_sub_scene_placements`: a level of `n` entries each placing the same room of three
/// entities, loaded into a fresh world.
pub fn sub_scene_placements(n: usize) -> Run {
    let room = r#"{ "format": 2, "entities": [
  { "id": "00000000000000a1", "components": { "Name": "door" } },
  { "id": "00000000000000a2", "components": { "Name": "lamp" } },
  { "id": "00000000000000a3", "components": { "Name": "chest" } }
] }"#;
    let entries: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{ "id": "{:016x}", "scene": "room.scene.json" }}"#,
                i + 1
            )
        })
        .collect();
    let level = format!(
        r#"{{ "format": 2, "entities": [{}] }}"#,
        entries.join(",\n")
    );
    scene_files(
        vec![
            ("room.scene.json", room.to_string()),
            ("level.scene.json", level),
        ],
        4 * n,
        1,
    )
}

/// `scaling_sub_scene_depth`: a chain of `n` scenes (at most 64, the most the depth limit
/// can be raised to), each placing the next, loaded 20 times into fresh worlds.
pub fn sub_scene_depth(n: usize) -> Run {
    let mut files = Vec::new();
    for level in 0..n {
        let name = if level == 0 {
            "level.scene.json".to_string()
        } else {
            format!("{level}.scene.json")
        };
        let text = format!(
            r#"{{ "format": 2, "entities": [ {{ "id": "{:016x}", "components": {{ "Name": "x" }}, "scene": "{}.scene.json" }} ] }}"#,
            level + 1,
            level + 1
        );
        files.push((name, text));
    }
    files.push((
        format!("{n}.scene.json"),
        r#"{ "format": 2, "entities": [ { "id": "00000000000000a1" } ] }"#.to_string(),
    ));
    let files = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.clone()))
        .collect();
    scene_files(files, n + 1, 20)
}

/// Writes `files` into a temporary scenes directory and returns a run that loads
/// `level.scene.json` `times` times, each into a fresh world holding `entities` entities after.
fn scene_files(files: Vec<(&str, String)>, entities: usize, times: usize) -> Run {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("bench setup: {error}"));
    for (name, text) in &files {
        std::fs::write(dir.path().join(name), text)
            .unwrap_or_else(|error| panic!("bench setup: {error}"));
    }
    let level: PathBuf = dir.path().join("level.scene.json");
    let library = ArchetypeLibrary::empty(dir.path(), Arc::new(registry()), LoadOptions::default());
    let mut options = SceneLoadOptions::default();
    options.limits.max_sub_scene_depth = 64;
    Box::new(move || {
        let _keep = &dir;
        let mut total = Duration::ZERO;
        for _ in 0..times {
            let mut world = World::new();
            total += time(|| {
                let loaded = load_scene_from_path(&level, &mut world, &library, &options)
                    .unwrap_or_else(|error| panic!("bench: the level did not load: {error}"));
                assert_eq!(loaded.len(), entities, "bench setup: entities");
            });
        }
        total
    })
}

/// `scaling_live_scene_entities`: one entity of a live level of `n` entities moved in the file,
/// carried into the world by `LiveScene::reload` (the file read again, compared, applied).
pub fn live_scene_entities(n: usize) -> Run {
    let mut level = crate::bench::live_scene::LiveLevel::new(n)
        .unwrap_or_else(|error| panic!("bench setup: {error}"));
    let mut x = 0.0;
    Box::new(move || {
        x -= 1.0;
        level
            .move_probe(x)
            .unwrap_or_else(|error| panic!("bench setup: {error}"));
        let elapsed = time(|| {
            let report = level.scene.reload(&mut level.world, &level.library);
            assert!(report.error().is_none(), "bench: {report}");
        });
        assert!(level.probe_at(x), "bench: the edit was not applied");
        elapsed
    })
}
