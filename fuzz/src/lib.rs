//! What the fuzz targets check, shared with the test suite: `tests/it/fuzz_regressions.rs`
//! includes this file, so every input the fuzzers ever found is replayed by `cargo test` with
//! exactly the checks the fuzzers made.
//!
//! Every function must return normally for any input: an `Err` from the library is fine (that
//! is the clear error a bad file gets); a panic, a hang or a failed assertion is a bug.

use std::path::Path;

use archetool::demo::components::registry;
use archetype_engine::{
    apply_update, load_scene, save_scene, ArchetypeLibrary, LoadOptions, SceneEncoding,
    SceneLoadOptions, SceneSaveOptions,
};
use hecs::World;

/// The magic bytes a binary scene starts with (the `scene_binary` target prepends them, so the
/// fuzzer spends its time on what follows).
pub const BINARY_MAGIC: &[u8] = b"ARCHSCN\0";

thread_local! {
    /// The fixed library scenes load against: the demo's components and the repository's
    /// `archetypes/`.
    static DEMO: ArchetypeLibrary = ArchetypeLibrary::load(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../archetypes"),
        registry(),
    )
    .unwrap_or_else(|error| panic!("the demo archetypes must load: {error}"));
}

/// The `archetype` target: the input is one archetype file `a.json`, or two (`a.json`, then
/// `b.json` after the first NUL byte). Loads them, spawns every concrete archetype, then edits
/// the files (swap, delete, restore) and applies each reload to the live instances, and finally
/// saves the world as a scene and loads it back.
pub fn archetype(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (a, b) = match text.split_once('\0') {
        Some((a, b)) => (a, Some(b)),
        None => (&*text, None),
    };
    let mut library = ArchetypeLibrary::empty("fuzz", registry(), LoadOptions::default());
    library.set_sources([("a.json", Some(a)), ("b.json", b)]);
    let mut world = World::new();
    spawn_every_concrete(&library, &mut world);
    let edits: [(&str, Option<&str>); 4] = [
        ("a.json", Some(b.unwrap_or(""))),
        ("b.json", Some(a)),
        ("a.json", None),
        ("a.json", Some(a)),
    ];
    for (file, text) in edits {
        let update = library.set_source(file, text);
        apply_update(&mut world, &library, &update);
        spawn_every_concrete(&library, &mut world);
    }
    // Whatever hot reload did to the instances, a world that saves must load again.
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        if let Ok(saved) = save_scene(&world, &library, encoding, &SceneSaveOptions::default()) {
            let mut loaded = World::new();
            if let Err(error) = load_scene(
                &saved,
                None,
                &mut loaded,
                &library,
                &SceneLoadOptions::default(),
            ) {
                panic!(
                    "a saved {encoding:?} scene does not load: {error}\n{}",
                    String::from_utf8_lossy(&saved)
                );
            }
        }
    }
}

fn spawn_every_concrete(library: &ArchetypeLibrary, world: &mut World) {
    let names: Vec<String> = library.names().map(str::to_string).collect();
    for name in names {
        if library.get(&name).is_some_and(|a| !a.is_abstract()) {
            let _ = library.spawn(world, &name);
        }
    }
}

/// The `scene_json` and `scene_binary` targets: loads `bytes` as a scene with the demo library;
/// if it loads, it must save, the save must load, and saving that must give the same bytes.
pub fn scene(bytes: &[u8]) {
    DEMO.with(|library| {
        let options = SceneLoadOptions::default();
        let mut world = World::new();
        if load_scene(bytes, None, &mut world, library, &options).is_err() {
            return;
        }
        let encoding = SceneEncoding::detect(bytes);
        let save = |world: &World| {
            save_scene(world, library, encoding, &SceneSaveOptions::default())
                .unwrap_or_else(|error| panic!("a loaded scene does not save: {error}"))
        };
        let saved = save(&world);
        let mut again = World::new();
        if let Err(error) = load_scene(&saved, None, &mut again, library, &options) {
            panic!(
                "a saved scene does not load: {error}\n{}",
                String::from_utf8_lossy(&saved)
            );
        }
        let resaved = save(&again);
        assert!(
            saved == resaved,
            "load -> save -> load -> save changed the bytes:\n{}\n---\n{}",
            String::from_utf8_lossy(&saved),
            String::from_utf8_lossy(&resaved)
        );
    });
}
