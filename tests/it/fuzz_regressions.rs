//! Every input the fuzzers (`fuzz/`) ever found a problem with, replayed with exactly the
//! checks the fuzz targets make (their code is included from `fuzz/src/lib.rs`).
//!
//! Inputs live in `tests/fixtures/fuzz/<target>/`, as the fuzzer wrote them (for
//! `scene_binary`, the bytes after the magic). `cargo test -p archetool --test it
//! fuzz_regressions -- --ignored write_fuzz_seeds` fills `fuzz/corpus/` with seeds from the
//! repository's data (and, for `lsp_frames`, a session and every kind of frame the server
//! refuses) before a fuzzing session.

use std::path::{Path, PathBuf};

#[allow(dead_code, missing_docs)]
#[path = "../../fuzz/src/lib.rs"]
mod checks;

fn fixtures(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/fuzz")
        .join(target);
    // A folder that is missing or empty would make its test check nothing.
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
    let mut paths: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).collect();
    assert!(!paths.is_empty(), "{} holds no inputs", dir.display());
    paths.sort();
    paths
}

/// Spawn-time variations written every which way (operands of every shape, in every kind of
/// place, combined with operators and inheritance), through the archetype fuzz target's
/// checks: loading, spawning, hot reload, saving and loading again never panic.
#[test]
fn variations_written_any_way_are_handled() {
    let operands = [
        "[]",
        "[1]",
        "[1, 2]",
        "[2, 1]",
        "[\"a\", 1]",
        "[-1e308, 1e308]",
        "[0.5, 0.5]",
        "[-9223372036854775808, 9223372036854775807]",
        "[0.2, 0.8]",
        "[[1], [2, 3]]",
        "[\"g\", \"G\"]",
        "[\"Hostile\", \"Nobody\"]",
        "[{}, null]",
        "{}",
        "\"x\"",
        "null",
    ];
    let places = [
        |v: &str| format!(r#"{{ "Health": {{ "current": 1, "max": {v} }} }}"#),
        |v: &str| format!(r#"{{ "Health": {v} }}"#),
        |v: &str| format!(r#"{{ "Glyph": {{ "ch": {v}, "color": "Red" }} }}"#),
        |v: &str| format!(r#"{{ "Faction": {v} }}"#),
        |v: &str| {
            format!(r#"{{ "Spawner": {{ "archetype": {v}, "interval": 1, "max_alive": 2 }} }}"#)
        },
        |v: &str| {
            format!(
                r#"{{ "Speed": {{ "value": {v} }}, "Melee": {{ "damage": 1, "cooldown": [{v}] }} }}"#
            )
        },
    ];
    let children = [
        r#"{ "extends": "a", "components": { "Health": { "max": { "$mul": 2 } } } }"#,
        r#"{ "extends": "a", "components": { "Health": { "max": { "$add": 1.5 } }, "Speed": { "value": { "$range": [1, 3] } } } }"#,
        r#"{ "extends": "a", "components": { "Health": null, "Glyph": { "ch": "x" } } }"#,
        r#"{ "extends": "a", "components": { "Faction": { "$append": [1] } } }"#,
    ];
    let mut inputs = 0;
    for (p, place) in places.iter().enumerate() {
        for (o, operand) in operands.iter().enumerate() {
            for key in ["$range", "$pick"] {
                let components = place(&format!("{{ \"{key}\": {operand} }}"));
                let parent = format!(r#"{{ "components": {components} }}"#);
                let child = children[(p + o) % children.len()];
                checks::archetype(format!("{parent}\0{child}").as_bytes());
                inputs += 1;
            }
        }
    }
    assert_eq!(inputs, places.len() * operands.len() * 2);
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

/// Inputs of the `sub_scenes` target, each the top scene and the files it places (split at NUL
/// bytes): a level placing a room twice, a path out of the scenes directory, an absolute
/// path, a link out, a cycle, files placing each other over the entity limit, and a placing
/// entry without an ID. The target's checks hold on each, and on every input the fuzzer found
/// a problem with.
pub(crate) const SUB_SCENE_INPUTS: [&str; 7] = [
    "{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000c1\", \"scene\": \"1.scene.json\" }, { \"id\": \"00000000000000c2\", \"scene\": \"1.scene.json\", \"overrides\": { \"00000000000000a1\": { \"Name\": \"west\" } } } ] }\0{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000a1\", \"components\": { \"Name\": \"room\" } } ] }",
    "{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000c1\", \"scene\": \"../outside.scene.json\" } ] }",
    "{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000c1\", \"scene\": \"/etc/passwd\" } ] }",
    "{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000c1\", \"scene\": \"link.scene.json\" } ] }",
    "{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000c1\", \"scene\": \"1.scene.json\" } ] }\0{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000b1\", \"scene\": \"0.scene.json\" } ] }",
    "{ \"format\": 2, \"entities\": [ { \"id\": \"0000000000000001\", \"scene\": \"1.scene.json\" }, { \"id\": \"0000000000000002\", \"scene\": \"1.scene.json\" }, { \"id\": \"0000000000000003\", \"scene\": \"1.scene.json\" } ] }\0{ \"format\": 2, \"entities\": [ { \"id\": \"0000000000000001\", \"scene\": \"2.scene.json\" }, { \"id\": \"0000000000000002\", \"scene\": \"2.scene.json\" } ] }\0{ \"format\": 2, \"entities\": [ { \"id\": \"0000000000000001\", \"scene\": \"3.scene.json\" } ] }\0{ \"format\": 2, \"entities\": [ { \"id\": \"00000000000000a1\", \"components\": { \"Name\": \"x\" } } ] }",
    "{ \"format\": 2, \"entities\": [ { \"scene\": \"1.scene.json\" } ] }\0{ \"format\": 2, \"entities\": [] }",
];

#[test]
fn sub_scene_inputs_pass_the_sub_scene_checks() {
    for input in SUB_SCENE_INPUTS {
        checks::sub_scenes(input.as_bytes());
    }
    let found = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/fuzz/sub_scenes");
    if found.is_dir() {
        for path in fixtures("sub_scenes") {
            checks::sub_scenes(&std::fs::read(&path).unwrap());
        }
    }
}

/// Inputs of the `lsp_frames` target, by name: a whole session as an editor writes it (every
/// request the server answers, a buffer with problems), a body that is not JSON-RPC, and each
/// kind of frame the reader refuses. The seeds of its corpus, and a test of their own.
fn lsp_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let uri = "file:///nonexistent/archetool-fuzz/archetypes/goblin.json";
    let at = format!(
        r#""textDocument": {{ "uri": "{uri}" }}, "position": {{ "line": 0, "character": 20 }}"#
    );
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#
            .to_string(),
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#.to_string(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"json","version":1,"text":"{{ \"extends\": \"base\", \"components\": {{ \"Helth\": {{}} }} }}"}}}}}}"#
        ),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{{{at}}}}}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"textDocument/completion","params":{{{at}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"textDocument/rename","params":{{{at},"newName":"Enemies/goblin"}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"textDocument/formatting","params":{{"textDocument":{{"uri":"{uri}"}},"options":{{"tabSize":2,"insertSpaces":true}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":6,"method":"shutdown"}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"exit"}"#.to_string(),
    ];
    let session: String = requests.iter().map(|body| frame(body)).collect();
    let inputs: [(&str, String); 9] = [
        ("session", session),
        (
            "not_json_rpc",
            frame("{ not json") + &frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ),
        (
            "over_the_limit",
            "Content-Length: 18446744073709551615\r\n\r\n".to_string(),
        ),
        ("bare_line_feed", "Content-Length: 2\n\n{}".to_string()),
        ("no_colon", "Content-Length 2\r\n\r\n{}".to_string()),
        (
            "length_not_a_number",
            "Content-Length: two\r\n\r\n{}".to_string(),
        ),
        ("no_length", "Content-Type: x\r\n\r\n{}".to_string()),
        (
            "body_cut_short",
            "Content-Length: 100\r\n\r\n{}".to_string(),
        ),
        ("header_cut_short", "Content-Length: 10".to_string()),
    ];
    inputs
        .into_iter()
        .map(|(name, text)| (name, text.into_bytes()))
        .collect()
}

/// The `lsp_frames` target's checks over a whole session and every kind of frame the reader
/// refuses: the reader keeps each body within its limit, and neither it nor the server's loop
/// panics.
#[test]
fn language_server_inputs_pass_the_frame_checks() {
    for (_, input) in lsp_inputs() {
        checks::lsp_frames(&input);
    }
}

/// The scene targets' checks over every scene file of the repository: the bad-input
/// catalogue, the demo's arena, the old saves and the old format. The default load and check
/// mode (which always reads the careful way) agree on each, refusing it or building the same
/// world, and each that loads saves stably.
#[test]
fn every_scene_of_the_repository_passes_the_scene_checks() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let folders = [
        "tests/fixtures/bad/scenes",
        "tests/fixtures/saves/demo-0.1",
        "tests/fixtures/scenes",
        "assets/scenes",
    ];
    let (mut scenes, mut loaded) = (0, Vec::new());
    for folder in folders {
        let entries = std::fs::read_dir(repo.join(folder)).unwrap();
        let mut paths: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !(name.ends_with(".scene.json") || name.ends_with(".scene.bin")) {
                continue;
            }
            scenes += 1;
            if checks::scene(&std::fs::read(&path).unwrap()) {
                loaded.push(format!("{folder}/{name}"));
            }
        }
    }
    assert!(scenes > 80, "{scenes} scenes");
    assert_eq!(
        loaded,
        [
            // The catalogue's scenes that load (with warnings, or to show what is accepted).
            "tests/fixtures/bad/scenes/bin_checked_valid.scene.bin",
            "tests/fixtures/bad/scenes/bin_valid.scene.bin",
            "tests/fixtures/bad/scenes/bom_accepted.scene.json",
            "tests/fixtures/bad/scenes/removed_child.scene.json",
            "tests/fixtures/bad/scenes/removed_child_without_table.scene.json",
            "tests/fixtures/saves/demo-0.1/arena-full.scene.bin",
            "tests/fixtures/saves/demo-0.1/arena-full.scene.json",
            "tests/fixtures/saves/demo-0.1/arena.scene.bin",
            "tests/fixtures/saves/demo-0.1/arena.scene.json",
            "tests/fixtures/scenes/format1.scene.json",
            "assets/scenes/arena.scene.json",
        ]
    );
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
                    // As is (format 4, checksummed), and as format 2, which has no checksum:
                    // mutations of the latter reach the reader past the checksum check.
                    let body = &bytes[checks::BINARY_MAGIC.len()..];
                    write("scene_binary", &format!("{label}.bin"), body);
                    // Without its checksum, which `scene_binary_checked` appends itself.
                    let unsummed = &body[..body.len() - 4];
                    write("scene_binary_checked", &format!("{label}.bin"), unsummed);
                    let mut unchecked = unsummed.to_vec();
                    unchecked[0] = 2;
                    write("scene_binary", &format!("{label}_format2.bin"), &unchecked);
                }
                other => unreachable!("only JSON and binary are listed, not {other:?}"),
            }
        }
    }
    for (name, input) in lsp_inputs() {
        write("lsp_frames", name, &input);
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
    for (i, input) in SUB_SCENE_INPUTS.iter().enumerate() {
        write("sub_scenes", &format!("input{i}"), input.as_bytes());
    }
}
