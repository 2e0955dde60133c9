//! Sub-scenes held to the rules every other file is: a placed file is read only from inside
//! the scenes root (no `..`, absolute path or symbolic link out, and nothing of a refused file
//! in any message), nesting is bounded, the size limits count the scene as it is once every
//! sub-scene is placed (before anything is spawned), and placing is linear in the placements.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use archetype_engine::{
    load_scene, load_scene_from_path, sub_scene_id, ArchetypeLibrary, IdConflict, Limits,
    PlacedScenes, SceneLoadOptions, StableId, SubScenes,
};
use hecs::World;

use crate::support::ArchetypeDir;

/// A file outside the scenes directory, in the shape of a scene, holding a secret.
const SECRET: &str = r#"{ "format": 2, "entities": [ { "id": "SECRET-TOKEN-42", "components": { "api_key": "hunter2" } } ] }"#;

fn library(dir: &ArchetypeDir) -> ArchetypeLibrary {
    ArchetypeLibrary::empty(dir.root(), crate::support::registry(), Default::default())
}

/// A level placing `scene` once, at line 2, column 40.
fn level_placing(scene: &str) -> String {
    format!(
        "{{ \"format\": 2, \"entities\": [\n  {{ \"id\": \"00000000000000c1\", \"scene\": \"{scene}\" }}\n] }}"
    )
}

/// The error of loading `scenes/level.scene.json` with `options`, its paths under the root
/// written from it; the world must keep nothing.
fn load_error(dir: &ArchetypeDir, options: &SceneLoadOptions) -> String {
    let mut world = World::new();
    let path = dir.root().join("scenes/level.scene.json");
    let library = library(dir);
    let error = load_scene_from_path(&path, &mut world, &library, options).unwrap_err();
    assert_eq!(world.len(), 0, "the world keeps nothing of a refused load");
    let message = error.to_string();
    assert!(
        !message.contains("SECRET") && !message.contains("api_key"),
        "{message}"
    );
    tidy(dir.root(), &message)
}

fn tidy(root: &Path, message: &str) -> String {
    let real = std::fs::canonicalize(root).unwrap();
    message
        .replace(&format!("{}/", real.display()), "<root>/")
        .replace(&format!("{}/", root.display()), "<root>/")
}

/// A project with the secret beside the scenes directory and a level placing `scene`.
fn project(scene: &str) -> ArchetypeDir {
    ArchetypeDir::new(&[
        ("secret.scene.json", SECRET),
        ("scenes/level.scene.json", &level_placing(scene)),
        (
            "scenes/rooms/hall.scene.json",
            r#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "components": { "Name": "hall" } } ] }"#,
        ),
    ])
}

#[test]
fn a_sub_scene_outside_the_scenes_directory_is_refused_unopened() {
    let dir = project("../secret.scene.json");
    assert_eq!(
        load_error(&dir, &SceneLoadOptions::default()),
        "<root>/scenes/level.scene.json:2:40: error[io]: entity 00000000000000c1: sub-scene `../secret.scene.json` leads outside the scenes root `<root>/scenes`; sub-scenes are read only from files under it (SceneLoadOptions::sub_scenes sets the root)"
    );
    // `..` that stays inside is fine.
    dir.write(
        "scenes/level.scene.json",
        level_placing("rooms/../rooms/hall.scene.json").as_bytes(),
    );
    let mut world = World::new();
    let path = dir.root().join("scenes/level.scene.json");
    let loaded = load_scene_from_path(
        &path,
        &mut world,
        &library(&dir),
        &SceneLoadOptions::default(),
    )
    .unwrap();
    assert_eq!(loaded.len(), 2);
}

#[test]
fn an_absolute_sub_scene_path_is_refused_unopened() {
    for absolute in ["/etc/passwd", "/proc/self/environ"] {
        let dir = project(absolute);
        assert_eq!(
            load_error(&dir, &SceneLoadOptions::default()),
            format!("<root>/scenes/level.scene.json:2:40: error[io]: entity 00000000000000c1: sub-scene `{absolute}` is an absolute path; a sub-scene is written relative to the file that places it")
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_out_of_the_scenes_directory_is_refused_unopened() {
    let dir = project("rooms/link.scene.json");
    std::os::unix::fs::symlink(
        dir.root().join("secret.scene.json"),
        dir.root().join("scenes/rooms/link.scene.json"),
    )
    .unwrap();
    assert_eq!(
        load_error(&dir, &SceneLoadOptions::default()),
        "<root>/scenes/level.scene.json:2:40: error[io]: entity 00000000000000c1: sub-scene `rooms/link.scene.json` leads outside the scenes root `<root>/scenes`; sub-scenes are read only from files under it (SceneLoadOptions::sub_scenes sets the root)"
    );
}

#[test]
fn a_scenes_root_the_game_names_bounds_sub_scenes_and_they_can_be_refused_altogether() {
    let dir = project("../secret.scene.json");
    let mut options = SceneLoadOptions::default();
    options.sub_scenes = SubScenes::InRoot(dir.root().to_path_buf());
    let mut world = World::new();
    let path = dir.root().join("scenes/level.scene.json");
    // The secret is under this root: it is read as a scene (and refused as one).
    let error = load_scene_from_path(&path, &mut world, &library(&dir), &options).unwrap_err();
    assert!(error.to_string().contains("SECRET-TOKEN-42"), "{error}");

    let dir = project("rooms/hall.scene.json");
    options.sub_scenes = SubScenes::Refused;
    assert_eq!(
        load_error(&dir, &options),
        "<root>/scenes/level.scene.json:2:40: error[io]: entity 00000000000000c1: places sub-scene `rooms/hall.scene.json`, but this load refuses sub-scenes (SceneLoadOptions::sub_scenes is SubScenes::Refused)"
    );
}

#[test]
fn a_scene_from_memory_places_sub_scenes_only_under_a_root_it_is_given() {
    let dir = project("rooms/hall.scene.json");
    let bytes = level_placing("rooms/hall.scene.json");
    let mut world = World::new();
    let error = load_scene(
        bytes.as_bytes(),
        None,
        &mut world,
        &library(&dir),
        &SceneLoadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "error[io]: entity 00000000000000c1: places sub-scene `rooms/hall.scene.json`, but the scene was not read from a file, so it has no directory to read sub-scenes from; set SceneLoadOptions::sub_scenes to SubScenes::InRoot(the scenes directory)"
    );
    let position = error.diagnostic().position.unwrap();
    assert_eq!((position.line, position.column), (2, 40));
    let mut options = SceneLoadOptions::default();
    options.sub_scenes = SubScenes::InRoot(dir.root().join("scenes"));
    let loaded = load_scene(bytes.as_bytes(), None, &mut world, &library(&dir), &options).unwrap();
    assert_eq!(loaded.len(), 2);
}

/// A chain of `levels` scenes, `scenes/0.scene.json` placing `1.scene.json`, and so on.
fn chain(levels: usize) -> ArchetypeDir {
    let dir = ArchetypeDir::new(&[]);
    std::fs::create_dir(dir.root().join("archetypes")).unwrap();
    for level in 0..levels {
        let text = format!(
            "{{ \"format\": 2, \"entities\": [\n  {{ \"id\": \"{:016x}\", \"scene\": \"{}.scene.json\" }}\n] }}",
            level + 1,
            level + 1
        );
        dir.write(&format!("scenes/{level}.scene.json"), text.as_bytes());
    }
    dir.write(
        &format!("scenes/{levels}.scene.json"),
        br#"{ "format": 2, "entities": [ { "id": "00000000000000a1" } ] }"#,
    );
    dir
}

/// What `work` gives, run on a thread with a 2 MiB stack (as `std::thread::spawn` gives a game's
/// worker), within `seconds`: a stack overflow there aborts the test process, a hang fails it.
fn on_a_small_thread<T: Send + 'static>(
    seconds: u64,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, result) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || done.send(work()))
        .unwrap();
    result
        .recv_timeout(Duration::from_secs(seconds))
        .expect("no answer in time")
}

#[test]
fn nesting_past_the_depth_limit_is_refused_at_the_placement_too_deep() {
    let dir = chain(33);
    let message = on_a_small_thread(60, move || {
        let path = dir.root().join("scenes/0.scene.json");
        let mut world = World::new();
        let library = library(&dir);
        let error = load_scene_from_path(&path, &mut world, &library, &SceneLoadOptions::default())
            .unwrap_err();
        assert_eq!(world.len(), 0);
        tidy(dir.root(), &error.to_string())
    });
    assert_eq!(
        message,
        "<root>/scenes/32.scene.json:2:40: error[too-deep]: entity 0000000000000021: sub-scene `33.scene.json` would be placed 33 levels deep, past the limit of 32 (Limits::max_sub_scene_depth)"
    );
    // 32 levels load: one placing entry per file and the last file's entity.
    let dir = chain(32);
    let loaded = on_a_small_thread(60, move || {
        let path = dir.root().join("scenes/0.scene.json");
        let mut world = World::new();
        load_scene_from_path(
            &path,
            &mut world,
            &library(&dir),
            &SceneLoadOptions::default(),
        )
        .map(|loaded| loaded.len())
    });
    assert_eq!(loaded, Ok(33));
}

#[test]
fn a_chain_of_thousands_of_scenes_is_a_clean_error_on_a_small_stack_and_in_scene_check() {
    let dir = chain(5_000);
    let root = dir.root().to_path_buf();
    let message = on_a_small_thread(120, move || {
        let mut limits = Limits::default();
        // Raised as far as the library takes it.
        limits.max_sub_scene_depth = usize::MAX;
        let mut options = SceneLoadOptions::default();
        options.limits = limits;
        let path = root.join("scenes/0.scene.json");
        let mut world = World::new();
        let library =
            ArchetypeLibrary::empty(&root, crate::support::registry(), Default::default());
        let error = load_scene_from_path(&path, &mut world, &library, &options).unwrap_err();
        error.diagnostic().message.clone()
    });
    assert_eq!(
        message,
        "entity 0000000000000041: sub-scene `65.scene.json` would be placed 65 levels deep, past the limit of 64 (Limits::max_sub_scene_depth)"
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_archetool"))
        .args(["scene", "check", "scenes/0.scene.json"])
        .current_dir(dir.root())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "scenes/32.scene.json:2:40: error[too-deep]: entity 0000000000000021: sub-scene `33.scene.json` would be placed 33 levels deep, past the limit of 32 (Limits::max_sub_scene_depth)\n  |\n2 |   { \"id\": \"0000000000000021\", \"scene\": \"33.scene.json\" }\n  |                                        ^^^^^^^^^^^^^^^\n"
    );
    assert_eq!(output.status.code(), Some(1));
}

/// `files` scenes of `entries` entries each (plus one plain entity), each entry placing the
/// next file: the flattened scene holds about `entries^files` entities.
fn laughs(files: usize, entries: usize) -> ArchetypeDir {
    let dir = ArchetypeDir::new(&[]);
    for file in 0..files {
        let mut lines =
            vec![r#"  { "id": "00000000000000ff", "components": { "Name": "x" } }"#.to_string()];
        for entry in 0..entries {
            lines.push(format!(
                "  {{ \"id\": \"{:016x}\", \"scene\": \"{}.scene.json\" }}",
                entry + 1,
                file + 1
            ));
        }
        let text = format!(
            "{{ \"format\": 2, \"entities\": [\n{}\n] }}",
            lines.join(",\n")
        );
        dir.write(&format!("scenes/{file}.scene.json"), text.as_bytes());
    }
    dir.write(
        &format!("scenes/{files}.scene.json"),
        br#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "components": { "Name": "leaf" } } ] }"#,
    );
    dir
}

#[test]
fn a_few_kilobytes_placing_each_other_ten_times_are_refused_before_anything_is_spawned() {
    let dir = laughs(8, 10);
    let message = on_a_small_thread(60, move || {
        let path = dir.root().join("scenes/0.scene.json");
        let mut world = World::new();
        let library = library(&dir);
        let error = load_scene_from_path(&path, &mut world, &library, &SceneLoadOptions::default())
            .unwrap_err();
        assert_eq!(world.len(), 0);
        let placed = PlacedScenes::read(
            &std::fs::read(&path).unwrap(),
            Some(&path),
            &library,
            &SceneLoadOptions::default(),
        );
        assert_eq!(placed.unwrap_err(), error);
        tidy(dir.root(), &error.to_string())
    });
    // Each file's 11 entries, and 10 times the next file's: 222,222,221 entities.
    assert_eq!(
        message,
        "<root>/scenes/0.scene.json:3:40: error[too-large]: scene holds 222222221 entities once its sub-scenes are placed, over the limit of 1000000"
    );
}

#[test]
fn the_flattened_scene_counts_every_placement_of_a_file_read_once() {
    let dir = laughs(3, 4);
    let path = dir.root().join("scenes/0.scene.json");
    let library = library(&dir);
    let placed = PlacedScenes::read(
        &std::fs::read(&path).unwrap(),
        Some(&path),
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap()
    .unwrap();
    // 5 + 4 (5 + 4 (5 + 4 · 1)) entities; each file's one `Name` as often as it is placed.
    assert_eq!(
        (placed.entities(), placed.values(), placed.files()),
        (169, 85, 3)
    );
    assert_eq!(placed.placed().get("1.scene.json"), Some(&4));
    let mut limits = Limits::default();
    limits.max_scene_entities = 168;
    let mut options = SceneLoadOptions::default();
    options.limits = limits;
    let mut world = World::new();
    let error = load_scene_from_path(&path, &mut world, &library, &options).unwrap_err();
    assert_eq!(
        tidy(dir.root(), &error.to_string()),
        "<root>/scenes/0.scene.json:3:40: error[too-large]: scene holds 169 entities once its sub-scenes are placed, over the limit of 168"
    );
    options.limits.max_scene_entities = 169;
    assert_eq!(
        load_scene_from_path(&path, &mut world, &library, &options).map(|loaded| loaded.len()),
        Ok(169)
    );
}

#[test]
fn a_hundred_thousand_placements_load_in_linear_time() {
    const PLACEMENTS: usize = 100_000;
    let dir = ArchetypeDir::new(&[(
        "scenes/room.scene.json",
        r#"{ "format": 2, "entities": [
  { "id": "00000000000000a1", "components": { "Name": "a" } },
  { "id": "00000000000000a2", "components": { "Name": "b" } },
  { "id": "00000000000000a3", "components": { "Name": "c" } }
] }"#,
    )]);
    let entries: Vec<String> = (0..PLACEMENTS)
        .map(|i| {
            format!(
                "{{ \"id\": \"{:016x}\", \"scene\": \"room.scene.json\" }}",
                i + 1
            )
        })
        .collect();
    let level = format!(
        "{{ \"format\": 2, \"entities\": [\n{}\n] }}",
        entries.join(",\n")
    );
    dir.write("scenes/level.scene.json", level.as_bytes());
    // Quadratic placement (each placement looking at every stable ID in the world) took minutes
    // here; linear takes well under the bound, which only guards against a hang.
    let (count, last) = on_a_small_thread(300, move || {
        let path = dir.root().join("scenes/level.scene.json");
        let mut world = World::new();
        let library = library(&dir);
        let loaded =
            load_scene_from_path(&path, &mut world, &library, &SceneLoadOptions::default())
                .unwrap();
        let last = sub_scene_id(StableId(PLACEMENTS as u64), StableId(0xa3));
        (loaded.len(), loaded.entity(last).is_some())
    });
    assert_eq!((count, last), (4 * PLACEMENTS, true));
}

#[test]
fn a_level_placed_twice_with_remap_gives_its_sub_scenes_distinct_ids() {
    let dir = project("rooms/hall.scene.json");
    let path = dir.root().join("scenes/level.scene.json");
    let library = library(&dir);
    let mut options = SceneLoadOptions::default();
    options.on_id_conflict = IdConflict::Remap;
    let mut world = World::new();
    let first = load_scene_from_path(&path, &mut world, &library, &options).unwrap();
    let second = load_scene_from_path(&path, &mut world, &library, &options).unwrap();
    let hall = sub_scene_id(StableId(0xc1), StableId(0xa1));
    let ids = |loaded: &archetype_engine::LoadedScene| {
        let entity = loaded.entity(hall).unwrap();
        *world.get::<&StableId>(entity).unwrap()
    };
    assert_ne!(ids(&first), ids(&second));
    assert_eq!(second.new_id(hall), Some(ids(&second)));
    let mut all: Vec<StableId> = world.query::<&StableId>().iter().copied().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 4, "every entity has its own stable ID");
}
