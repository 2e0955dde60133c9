//! `scene check` over many scenes: files and directories, every scene that does not load
//! reported (not only the first), a summary, and the machine formats of `validate`.

use serde_json::Value;

use super::{check, Project};

const OK: &str = r#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "archetype": "enemies/goblin" } ] }
"#;
const UNKNOWN_COMPONENT: &str = r#"{ "format": 2, "entities": [ { "id": "00000000000000b1", "components": { "Helth": {} } } ] }
"#;
const UNKNOWN_FIELD: &str = r#"{ "format": 2, "entities": [ { "id": "00000000000000c1", "components": { "Speed": { "value": 1, "valu": 2 } } } ] }
"#;

/// The demo's archetypes and three scenes under `levels/` (one loads, two do not), plus a
/// hidden file and a file that is not a scene, which the search skips.
fn project() -> Project {
    let project = Project::demo();
    project.write("levels/a_ok.scene.json", OK);
    project.write("levels/b/broken.scene.json", UNKNOWN_COMPONENT);
    project.write("levels/c_typo.scene.json", UNKNOWN_FIELD);
    project.write("levels/.d_hidden.scene.json", "not json");
    project.write("levels/notes.json", "not json");
    project
}

#[test]
fn every_scene_under_a_directory_is_checked_and_each_failure_reported() {
    let expected = r#"levels/a_ok.scene.json: ok (1 entity: 1 from archetypes, 0 plain)
levels/b/broken.scene.json:1:74: error[unknown-component]: entity 00000000000000b1: unknown component `Helth`
  |
1 | { "format": 2, "entities": [ { "id": "00000000000000b1", "components": { "Helth": {} } } ] }
  |                                                                          ^^^^^^^
  |
  = help: did you mean `Health`?
levels/c_typo.scene.json:1:97: error[unknown-field]: entity 00000000000000c1: unknown field `valu` in component `Speed`
  |
1 | { "format": 2, "entities": [ { "id": "00000000000000c1", "components": { "Speed": { "value": 1, "valu": 2 } } } ] }
  |                                                                                                 ^^^^^^
  |
  = help: did you mean `value`?

levels/c_typo.scene.json: does not load: 1 unknown field (a game can skip them with `SceneLoadOptions::unknown_fields`)
3 scenes: 1 ok, 2 not loading
"#;
    check(
        &project().run(&["scene", "check", "levels"]),
        1,
        expected,
        "",
    );
}

#[test]
fn files_and_directories_mix_in_the_order_given() {
    let project = project();
    let run = project.run(&["scene", "check", "levels/c_typo.scene.json", "levels/b"]);
    assert_eq!(run.code, 1);
    let firsts: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("levels/"))
        .collect();
    assert_eq!(
        firsts,
        [
            "levels/c_typo.scene.json:1:97: error[unknown-field]: entity 00000000000000c1: unknown field `valu` in component `Speed`",
            "levels/c_typo.scene.json: does not load: 1 unknown field (a game can skip them with `SceneLoadOptions::unknown_fields`)",
            "levels/b/broken.scene.json:1:74: error[unknown-component]: entity 00000000000000b1: unknown component `Helth`",
        ]
    );
    assert!(run.stdout.ends_with("2 scenes: 0 ok, 2 not loading\n"));
    check(
        &project.run(&["scene", "check", "levels/a_ok.scene.json", "levels/a_ok.scene.json"]),
        0,
        "levels/a_ok.scene.json: ok (1 entity: 1 from archetypes, 0 plain)\nlevels/a_ok.scene.json: ok (1 entity: 1 from archetypes, 0 plain)\n2 scenes: 2 ok, 0 not loading\n",
        "",
    );
}

#[test]
fn json_lists_every_problem_of_every_scene_with_its_end() {
    let run = project().run(&["scene", "check", "levels", "--format", "json"]);
    check(
        &run,
        1,
        concat!(
            r#"{"file":"levels/b/broken.scene.json","line":1,"column":74,"end_line":1,"end_column":81,"severity":"error","code":"unknown-component","message":"entity 00000000000000b1: unknown component `Helth`","suggestion":"Health","archetype":null,"component":null,"field":null,"related":[]}"#,
            "\n",
            r#"{"file":"levels/c_typo.scene.json","line":1,"column":97,"end_line":1,"end_column":103,"severity":"error","code":"unknown-field","message":"entity 00000000000000c1: unknown field `valu` in component `Speed`","suggestion":"value","archetype":null,"component":"Speed","field":"valu","related":[]}"#,
            "\n",
        ),
        "",
    );
}

#[test]
fn github_and_sarif_report_the_same_problems() {
    let project = project();
    check(
        &project.run(&["scene", "check", "levels", "--format", "github"]),
        1,
        concat!(
            "::error file=levels/b/broken.scene.json,line=1,col=74,endLine=1,endColumn=81,title=unknown-component::entity 00000000000000b1: unknown component `Helth`%0Ahelp: did you mean `Health`?\n",
            "::error file=levels/c_typo.scene.json,line=1,col=97,endLine=1,endColumn=103,title=unknown-field::entity 00000000000000c1: unknown field `valu` in component `Speed`%0Ahelp: did you mean `value`?\n",
        ),
        "",
    );
    let run = project.run(&["scene", "check", "levels", "--format", "sarif"]);
    assert_eq!(run.code, 1);
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let rules: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["unknown-component", "unknown-field"]);
    assert_eq!(
        results[1]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({ "startLine": 1, "startColumn": 97, "endLine": 1, "endColumn": 103 })
    );
}

#[test]
fn a_binary_scene_problem_names_its_byte_in_machine_formats() {
    let project = Project::demo();
    project.write("levels/damaged.scene.bin", "ARCHSCN\0\u{3}xx");
    let run = project.run(&["scene", "check", "levels", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let problem: Value = serde_json::from_str(run.stdout.trim_end()).unwrap();
    assert_eq!(problem["file"], "levels/damaged.scene.bin");
    assert_eq!(problem["line"], Value::Null);
    assert!(
        problem["message"].as_str().unwrap().starts_with("at byte "),
        "{problem}"
    );
}

#[test]
fn a_missing_path_or_a_directory_without_scenes_is_a_usage_error() {
    let project = project();
    check(
        &project.run(&["scene", "check", "levels", "nope.scene.json"]),
        2,
        "",
        "error: scene file `nope.scene.json` not found\n",
    );
    check(
        &project.run(&["scene", "check", "archetypes/items"]),
        2,
        "",
        "error: no scene files (`*.scene.json`, `*.scene.bin`) under `archetypes/items`\n",
    );
}

/// One scene with a problem in each of four entities (a plain entity's unknown component, a
/// plain value of the wrong type, an instance's patch of the wrong type, a reference to an
/// entity the scene does not have): `scene check` reports all four, in the file's order, and
/// the same in JSON.
#[test]
fn every_problem_of_one_scene_is_reported() {
    let project = Project::demo();
    project.write(
        "level.scene.json",
        r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "components": { "Helth": {} } },
    { "id": "00000000000000a2", "components": { "Speed": { "value": "fast" } } },
    { "id": "00000000000000a3", "archetype": "enemies/goblin", "components": { "Health": { "max": true } } },
    { "id": "00000000000000a4", "components": { "Target": "00000000000000ff" } },
    { "id": "00000000000000a5", "archetype": "enemies/goblin" }
  ]
}
"#,
    );
    let run = project.run(&["scene", "check", "level.scene.json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let firsts: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("level.scene.json"))
        .collect();
    assert_eq!(
        firsts,
        [
            "level.scene.json:4:49: error[unknown-component]: entity 00000000000000a1: unknown component `Helth`",
            "level.scene.json:5:69: error[invalid-component]: entity 00000000000000a2: `Speed.value`: invalid type: string \"fast\", expected f32",
            "level.scene.json:6:99: error[invalid-component]: entity 00000000000000a3: `Health.max`: invalid type: boolean `true`, expected f32",
            "level.scene.json:7:59: error[invalid-component]: entity 00000000000000a4: `Target`: refers to entity 00000000000000ff, which is not in this scene",
            "level.scene.json: does not load: 4 problems",
        ]
    );
    let json = project.run(&["scene", "check", "level.scene.json", "--format", "json"]);
    assert_eq!(json.stdout.lines().count(), 4, "{}", json.stdout);
    // A game's load stops at the first.
    let mut world = hecs::World::new();
    let library = archetype_engine::ArchetypeLibrary::load(
        project.path("archetypes"),
        archetool::demo::components::registry(),
    )
    .unwrap();
    let error = archetype_engine::load_scene_from_path(
        project.path("level.scene.json"),
        &mut world,
        &library,
        &archetype_engine::SceneLoadOptions::default(),
    )
    .unwrap_err();
    assert!(error.others().is_empty());
    assert_eq!(world.len(), 0);
}
