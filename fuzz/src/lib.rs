//! What the fuzz targets check, shared with the test suite: `tests/it/fuzz_regressions.rs`
//! includes this file, so every input the fuzzers ever found is replayed by `cargo test` with
//! exactly the checks the fuzzers made.
//!
//! Every function must return normally for any input: an `Err` from the library is fine (that
//! is the clear error a bad file gets); a panic, a hang or a failed assertion is a bug.

use std::path::{Path, PathBuf};

use archetool::cli::lsp::framing::FrameReader;
use archetool::cli::lsp::{serve, LspArgs};
use archetool::cli::DirArg;
use archetool::demo::components::registry;
use archetype_engine::{
    apply_update, load_scene, save_scene, ArchetypeLibrary, LoadOptions, LoadedScene, SceneChange,
    SceneEncoding, SceneLoadOptions, SceneSaveOptions,
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

/// The largest message body in the `lsp_frames` target: small, so that a reader allocating
/// past its limit shows at once (run with `-malloc_limit_mb`, libFuzzer fails on any
/// allocation over it).
pub const LSP_MAX_BODY: u64 = 4096;

/// The `lsp_frames` target: the input as what a client writes to `archetool lsp`. The framed
/// reader reads every frame it holds, each body within the limit (its buffer too), up to the
/// end or the first frame it refuses; then the server's own loop serves the whole input, its
/// output and log in memory, with a library from a directory that does not exist (an empty
/// one, read in no time). Neither may panic.
pub fn lsp_frames(data: &[u8]) {
    let mut frames = FrameReader::new(data, LSP_MAX_BODY);
    while let Ok(Some(body)) = frames.read_body() {
        assert!(
            body.len() as u64 <= LSP_MAX_BODY && body.capacity() as u64 <= LSP_MAX_BODY,
            "a body of {} bytes (capacity {}) over the limit of {LSP_MAX_BODY}",
            body.len(),
            body.capacity()
        );
    }
    let nowhere = PathBuf::from("/nonexistent/archetool-fuzz");
    let args = LspArgs {
        dir: DirArg {
            dir: nowhere.join("archetypes"),
        },
        scenes: nowhere.join("scenes"),
        max_message_bytes: LSP_MAX_BODY,
    };
    let (mut output, mut log) = (Vec::new(), Vec::new());
    let input = Box::new(std::io::Cursor::new(data.to_vec()));
    serve(&args, registry(), input, &mut output, &mut log);
}

/// The `scene_binary_checked` target's input as a binary scene: the magic bytes, then `body`
/// (the format version onwards, without the checksum), then the checksum of both, so
/// mutations reach the reader past the checksum check of formats 3 and 4.
pub fn checked_binary(body: &[u8]) -> Vec<u8> {
    let mut bytes = BINARY_MAGIC.to_vec();
    bytes.extend_from_slice(body);
    let checksum = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    bytes
}

/// The scene targets: loads `bytes` as a scene with the demo library. The careful reader
/// (check mode, `all_errors`, always takes it) must agree with the default load, which takes
/// the one-pass reader where it can: both refuse the scene, or both load it into the same world
/// (see [`comparable`]) with as many warnings and changes. A scene that loads must save, the
/// save must load, and saving that must give the same bytes. Returns whether the scene loaded.
pub fn scene(bytes: &[u8]) -> bool {
    DEMO.with(|library| {
        let options = SceneLoadOptions::default();
        let mut world = World::new();
        let loaded = load_scene(bytes, None, &mut world, library, &options);
        let mut check = SceneLoadOptions::default();
        check.all_errors = true;
        let mut careful = World::new();
        let checked = load_scene(bytes, None, &mut careful, library, &check);
        let (loaded, checked) = match (loaded, checked) {
            (Ok(loaded), Ok(checked)) => (loaded, checked),
            (Err(_), Err(_)) => return false,
            (Ok(_), Err(error)) => {
                panic!("the default load accepts a scene check mode refuses: {error}")
            }
            (Err(error), Ok(_)) => {
                panic!("check mode accepts a scene the default load refuses: {error}")
            }
        };
        let said = |loaded: &LoadedScene| (loaded.warnings().len(), loaded.changes().len());
        assert_eq!(
            said(&loaded),
            said(&checked),
            "the default load and check mode warn of or report different numbers of changes"
        );
        let (ours, theirs) = (
            comparable(&world, &loaded, library),
            comparable(&careful, &checked, library),
        );
        assert!(
            ours == theirs,
            "the default load and check mode build different worlds:\n{ours:#?}\n---\n{theirs:#?}"
        );
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
        true
    })
}

/// `world` (just loaded as `loaded`) saved as JSON, in the form two loads of one file must
/// agree on: a child its archetype gained since the scene was saved gets a fresh stable ID at
/// each load, so each such ID is named by its instance and child instead, and the entities are
/// put in the order of those names. A world JSON cannot hold (a NaN read from a binary scene)
/// is its save's error message.
fn comparable(
    world: &World,
    loaded: &LoadedScene,
    library: &ArchetypeLibrary,
) -> Result<serde_json::Value, String> {
    let saved = save_scene(
        world,
        library,
        SceneEncoding::Json,
        &SceneSaveOptions::default(),
    )
    .map_err(|error| error.to_string())?;
    let mut text = String::from_utf8(saved)
        .unwrap_or_else(|error| panic!("a JSON save is not UTF-8: {error}"));
    for change in loaded.changes() {
        if let SceneChange::ChildSpawned {
            instance,
            child,
            id,
            ..
        } = change
        {
            text = text.replace(&id.to_string(), &format!("{instance}/{child}"));
        }
    }
    let mut value: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("a JSON save does not parse: {error}"));
    if let Some(serde_json::Value::Array(entities)) = value.get_mut("entities") {
        entities.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    }
    Ok(value)
}

/// What a scene file outside the scenes directory holds in the `sub_scenes` target: a refused
/// load must never quote it.
pub const OUTSIDE_MARKER: &str = "OUTSIDE-MARKER";

/// The `sub_scenes` target: the input is up to eight scene files separated by NUL bytes,
/// written as `scenes/0.scene.json`, `scenes/1.scene.json`, ... beside a scene outside the
/// scenes directory (`outside.scene.json`) and, on Unix, a link to it
/// (`scenes/link.scene.json`). Loads `scenes/0.scene.json` with small limits, by default and
/// in check mode. Both refuse it or both load it; a refused load leaves the world empty and no
/// message quotes the outside file; [`PlacedScenes`](archetype_engine::PlacedScenes) refuses
/// with the load's own error where the plan of sub-scenes is what is wrong; a scene that
/// loads saves, and the save (its sub-scenes placed) loads into as many entities.
pub fn sub_scenes(data: &[u8]) {
    use archetype_engine::{load_scene_from_path, PlacedScenes};

    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let scenes = dir.path().join("scenes");
    if std::fs::create_dir(&scenes).is_err() {
        return;
    }
    let outside = format!(
        r#"{{ "format": 2, "entities": [ {{ "id": "{OUTSIDE_MARKER}", "components": {{ "{OUTSIDE_MARKER}": 1 }} }} ] }}"#
    );
    let _ = std::fs::write(dir.path().join("outside.scene.json"), outside);
    #[cfg(unix)]
    let _ = std::os::unix::fs::symlink(
        dir.path().join("outside.scene.json"),
        scenes.join("link.scene.json"),
    );
    for (i, file) in data.split(|b| *b == 0).take(8).enumerate() {
        let _ = std::fs::write(scenes.join(format!("{i}.scene.json")), file);
    }
    let top = scenes.join("0.scene.json");
    DEMO.with(|library| {
        let mut options = SceneLoadOptions::default();
        options.limits.max_scene_entities = 5_000;
        options.limits.max_scene_values = 50_000;
        let mut world = World::new();
        let loaded = load_scene_from_path(&top, &mut world, library, &options);
        let mut check = options.clone();
        check.all_errors = true;
        let checked = load_scene_from_path(&top, &mut World::new(), library, &check);
        assert_eq!(
            loaded.is_ok(),
            checked.is_ok(),
            "the default load and check mode disagree: {loaded:?} / {checked:?}"
        );
        let bytes = std::fs::read(&top).unwrap_or_default();
        let placed = PlacedScenes::read(&bytes, Some(&top), library, &options);
        let loaded = match loaded {
            Err(error) => {
                assert_eq!(world.len(), 0, "a refused load left entities: {error}");
                let message = format!("{error} {:?}", error.others());
                assert!(
                    !message.contains(OUTSIDE_MARKER),
                    "a message quotes a file outside the root: {message}"
                );
                if let Err(refused) = placed {
                    assert_eq!(refused, error, "the plan and the load refuse differently");
                }
                return;
            }
            Ok(loaded) => loaded,
        };
        if let Err(refused) = placed {
            panic!("the load accepts sub-scenes the plan refuses: {refused}");
        }
        let saved = save_scene(
            &world,
            library,
            SceneEncoding::Json,
            &SceneSaveOptions::default(),
        );
        let Ok(saved) = saved else {
            return; // a value JSON cannot hold, as in `scene`
        };
        let mut again = World::new();
        match load_scene(
            &saved,
            None,
            &mut again,
            library,
            &SceneLoadOptions::default(),
        ) {
            Ok(reloaded) => assert_eq!(reloaded.len(), loaded.len()),
            Err(error) => panic!("a saved scene with its sub-scenes placed does not load: {error}"),
        }
    });
}
