//! Every input the fuzzers (`fuzz/`) ever found a problem with, replayed with exactly the
//! checks the fuzz targets make (their code is included from `fuzz/src/lib.rs`).
//!
//! Inputs live in `tests/fixtures/fuzz/<target>/`, as the fuzzer wrote them (for
//! `scene_binary`, the bytes after the magic). `cargo test -p archetool --test it
//! fuzz_regressions -- --ignored write_fuzz_seeds` fills `fuzz/corpus/` with seeds from the
//! repository's data before a fuzzing session.

use std::path::{Path, PathBuf};

#[allow(dead_code, missing_docs)]
#[path = "../../fuzz/src/lib.rs"]
mod checks;

fn fixtures(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/fuzz")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).collect();
    paths.sort();
    paths
}

#[test]
fn archetype_inputs_found_by_fuzzing_are_handled() {
    for path in fixtures("archetype") {
        checks::archetype(&std::fs::read(&path).unwrap());
    }
}

#[test]
fn json_scene_inputs_found_by_fuzzing_are_handled() {
    for path in fixtures("scene_json") {
        checks::scene(&std::fs::read(&path).unwrap());
    }
}

#[test]
fn binary_scene_inputs_found_by_fuzzing_are_handled() {
    for path in fixtures("scene_binary") {
        let mut bytes = checks::BINARY_MAGIC.to_vec();
        bytes.extend_from_slice(&std::fs::read(&path).unwrap());
        checks::scene(&bytes);
    }
}

/// Writes seed corpora for the fuzz targets into `fuzz/corpus/<target>/` (ignored: run it by
/// hand before fuzzing; the corpus directory is not checked in).
#[test]
#[ignore = "writes fuzz/corpus; run by hand before fuzzing"]
fn write_fuzz_seeds() {
    use archetool::demo::components::registry;
    use archetype_engine::{
        load_scene_from_path, save_scene, ArchetypeLibrary, SceneEncoding, SceneLoadOptions,
        SceneSaveOptions,
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = repo.join("fuzz/corpus");
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    // Archetypes: every file alone, and every file that extends one parent after its parent,
    // renamed to the target's `a` and `b`.
    let library = ArchetypeLibrary::load(repo.join("archetypes"), registry()).unwrap();
    let names: Vec<String> = library.names().map(str::to_string).collect();
    for name in &names {
        let text = library.source_text(name).unwrap();
        let flat = name.replace('/', "_");
        write("archetype", &format!("{flat}.json"), text.as_bytes());
        if let Some((_, [parent])) = library.declared(name) {
            let parent_text = library.source_text(parent).unwrap();
            let child = text.replace(&format!("\"{parent}\""), "\"a\"");
            let pair = format!("{parent_text}\0{child}");
            write("archetype", &format!("{flat}_pair.json"), pair.as_bytes());
        }
    }
    // Scenes: the demo's arena, a world with one instance of every concrete archetype (with
    // runtime changes, so instances store patches), and the catalogue's bad scenes.
    let mut world = hecs::World::new();
    load_scene_from_path(
        repo.join("assets/scenes/arena.scene.json"),
        &mut world,
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap();
    let mut every = hecs::World::new();
    for name in &names {
        if library.get(name).is_some_and(|a| !a.is_abstract()) {
            let entity = library.spawn(&mut every, name).unwrap();
            if let Ok(mut health) = every.get::<&mut archetool::demo::components::Health>(entity) {
                health.current = 1.5;
            }
        }
    }
    for (label, world) in [("arena", &world), ("every_archetype", &every)] {
        for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
            let bytes =
                save_scene(world, &library, encoding, &SceneSaveOptions::default()).unwrap();
            match encoding {
                SceneEncoding::Json => write("scene_json", &format!("{label}.json"), &bytes),
                SceneEncoding::Binary => {
                    // As is (format 3, checksummed), and as format 2, which has no checksum:
                    // mutations of the latter reach the reader past the checksum check.
                    let body = &bytes[checks::BINARY_MAGIC.len()..];
                    write("scene_binary", &format!("{label}.bin"), body);
                    let mut unchecked = body[..body.len() - 4].to_vec();
                    unchecked[0] = 2;
                    write("scene_binary", &format!("{label}_format2.bin"), &unchecked);
                }
            }
        }
    }
    for entry in std::fs::read_dir(repo.join("tests/fixtures/bad/scenes")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".scene.json") {
            write("scene_json", &name, &bytes);
        } else if name.ends_with(".scene.bin") {
            let body = bytes.strip_prefix(checks::BINARY_MAGIC).unwrap_or(&bytes);
            write("scene_binary", &name, body);
        }
    }
}
