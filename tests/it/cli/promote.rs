//! `archetool promote`: a scene entity's differences written into its archetype's file (only
//! those values' text changed) and taken out of the scene, taken out only (revert), or written
//! into a new archetype extending it; refusals change nothing.

use super::{check, Project};

const SCENE: &str = r#"{ "format": 2, "entities": [
  { "id": "00000000000000b2", "archetype": "enemies/goblin",
    "components": { "Health": { "max": 30 }, "Speed": { "value": 3.5 } } },
  { "id": "00000000000000c3", "components": { "Name": "rock" } }
] }
"#;

fn project() -> Project {
    let project = Project::demo();
    project.write("levels/camp.scene.json", SCENE);
    project
}

#[test]
fn apply_writes_the_chosen_field_into_the_archetype_file() {
    let project = project();
    let before = project.read("archetypes/enemies/goblin.json");
    let run = project.run(&[
        "promote",
        "levels/camp.scene.json",
        "00000000000000b2",
        "--apply",
        "--field",
        "Health.max",
    ]);
    check(
        &run,
        0,
        "wrote archetypes/enemies/goblin.json: Health.max = 30\n\
         wrote levels/camp.scene.json: entity 00000000000000b2 no longer overrides Health.max\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        before.replace("\"max\": 12 }", "\"max\": 30 }")
    );
    assert_eq!(
        project.read("levels/camp.scene.json"),
        SCENE.replace("{ \"Health\": { \"max\": 30 }, \"Speed\"", "{ \"Speed\"")
    );
}

#[test]
fn apply_without_fields_writes_every_override() {
    let project = project();
    let before = project.read("archetypes/enemies/goblin.json");
    let run = project.run(&[
        "promote",
        "levels/camp.scene.json",
        "00000000000000b2",
        "--apply",
    ]);
    let expected = "wrote archetypes/enemies/goblin.json: Health.max = 30\n\
                    wrote archetypes/enemies/goblin.json: Speed.value = 3.5\n\
                    wrote levels/camp.scene.json: entity 00000000000000b2 no longer overrides Health.max, Speed.value\n";
    check(&run, 0, expected, "");
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        before
            .replace("\"max\": 12 }", "\"max\": 30 }")
            .replace("\"value\": 2.0 }", "\"value\": 3.5 }")
    );
    assert_eq!(
        project.read("levels/camp.scene.json"),
        SCENE.replace(
            "{ \"Health\": { \"max\": 30 }, \"Speed\": { \"value\": 3.5 } }",
            "{}"
        )
    );
    // The entity now loads with the archetype's values, which are the ones it had.
    check(
        &project.run(&["scene", "check", "levels/camp.scene.json"]),
        0,
        "levels/camp.scene.json: ok (2 entities: 1 from archetypes, 1 plain)\n",
        "",
    );
}

#[test]
fn revert_takes_the_chosen_overrides_out_of_the_scene_only() {
    let project = project();
    let files = project.archetype_files();
    let goblin = project.read("archetypes/enemies/goblin.json");
    let revert = |extra: &[&str]| {
        let mut args = vec![
            "promote",
            "levels/camp.scene.json",
            "00000000000000b2",
            "--revert",
        ];
        args.extend_from_slice(extra);
        project.run(&args)
    };
    check(
        &revert(&["--field", "Speed"]),
        0,
        "wrote levels/camp.scene.json: entity 00000000000000b2 no longer overrides Speed\n",
        "",
    );
    assert_eq!(
        project.read("levels/camp.scene.json"),
        SCENE.replace(
            "{ \"max\": 30 }, \"Speed\": { \"value\": 3.5 } }",
            "{ \"max\": 30 } }"
        )
    );
    check(
        &revert(&[]),
        0,
        "wrote levels/camp.scene.json: entity 00000000000000b2 no longer overrides Health\n",
        "",
    );
    assert_eq!(
        project.read("levels/camp.scene.json"),
        SCENE.replace(
            "{ \"Health\": { \"max\": 30 }, \"Speed\": { \"value\": 3.5 } }",
            "{}"
        )
    );
    check(
        &revert(&[]),
        2,
        "",
        "error: entity 00000000000000b2 overrides nothing\n",
    );
    assert_eq!(project.archetype_files(), files);
    assert_eq!(project.read("archetypes/enemies/goblin.json"), goblin);
}

const TURRET_SCENE: &str = r#"{
  "format": 2,
  "entities": [
    {
      "id": "00000000000000a1",
      "archetype": "structures/turret",
      "components": {
        "Children": ["00000000000000a2", "00000000000000a3"],
        "Transform": { "translation": [7.0, 4.0, 0.0] }
      }
    },
    {
      "id": "00000000000000a2",
      "archetype": "structures/turret",
      "child": "gun",
      "components": { "Parent": "00000000000000a1" }
    },
    {
      "id": "00000000000000a3",
      "archetype": "structures/turret",
      "child": "sensor",
      "components": {
        "Parent": "00000000000000a1",
        "Sensor": { "range": 12 }
      }
    }
  ]
}
"#;

#[test]
fn apply_writes_a_child_entity_s_values_into_its_archetype_s_children() {
    let project = Project::demo();
    project.write("levels/towers.scene.json", TURRET_SCENE);
    let before = project.read("archetypes/structures/turret.json");
    let run = project.run(&[
        "promote",
        "levels/towers.scene.json",
        "00000000000000a3",
        "--apply",
    ]);
    check(
        &run,
        0,
        "wrote archetypes/structures/turret.json: Sensor.range = 12\n\
         wrote levels/towers.scene.json: entity 00000000000000a3 no longer overrides Sensor.range\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/structures/turret.json"),
        before.replace(
            "\"Sensor\": { \"range\": 9 }",
            "\"Sensor\": { \"range\": 12 }"
        )
    );
    assert_eq!(
        project.read("levels/towers.scene.json"),
        TURRET_SCENE.replace(
            "\"Parent\": \"00000000000000a1\",\n        \"Sensor\": { \"range\": 12 }",
            "\"Parent\": \"00000000000000a1\""
        )
    );
    check(
        &project.run(&["validate"]),
        0,
        "20 archetypes, 0 errors, 0 warnings\n",
        "",
    );
    check(
        &project.run(&["scene", "check", "levels/towers.scene.json"]),
        0,
        "levels/towers.scene.json: ok (3 entities: 3 from archetypes, 0 plain)\n",
        "",
    );
    // The library's bookkeeping (`Children`, `Parent`) is never written back or taken out.
    check(
        &project.run(&[
            "promote",
            "levels/towers.scene.json",
            "00000000000000a2",
            "--apply",
        ]),
        2,
        "",
        "error: entity 00000000000000a2 overrides nothing\n",
    );
    check(
        &project.run(&["promote", "levels/towers.scene.json", "00000000000000a3", "--save-as", "structures/eye"]),
        2,
        "",
        "error: entity 00000000000000a3 is the child `sensor` of an archetype instance; save its instance's root as a new archetype\n",
    );
    let root = project.run(&[
        "promote",
        "levels/towers.scene.json",
        "00000000000000a1",
        "--save-as",
        "structures/placed_turret",
    ]);
    check(
        &root,
        0,
        "wrote archetypes/structures/placed_turret.json: extends structures/turret with Transform\n",
        "",
    );
}

#[test]
fn save_as_writes_a_new_archetype_extending_the_entity_s() {
    let project = project();
    let run = project.run(&[
        "promote",
        "levels/camp.scene.json",
        "00000000000000b2",
        "--save-as",
        "enemies/goblin_brute",
    ]);
    check(
        &run,
        0,
        "wrote archetypes/enemies/goblin_brute.json: extends enemies/goblin with Health, Speed\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/enemies/goblin_brute.json"),
        "{\n  \"extends\": \"enemies/goblin\",\n  \"components\": {\n    \"Health\": {\n      \"max\": 30\n    },\n    \"Speed\": {\n      \"value\": 3.5\n    }\n  }\n}\n"
    );
    check(
        &project.run(&["validate"]),
        0,
        "21 archetypes, 0 errors, 0 warnings\n",
        "",
    );
}

#[test]
fn refusals_change_nothing() {
    let project = project();
    let files = project.archetype_files();
    let goblin = project.read("archetypes/enemies/goblin.json");
    let promote = |extra: &[&str]| {
        let mut args = vec!["promote", "levels/camp.scene.json"];
        args.extend_from_slice(extra);
        project.run(&args)
    };
    check(
        &promote(&["00000000000000ff", "--apply"]),
        2,
        "",
        "error: no entity 00000000000000ff in the scene\n",
    );
    check(
        &promote(&["00000000000000c3", "--apply"]),
        2,
        "",
        "error: entity 00000000000000c3 is not an archetype instance\n",
    );
    check(
        &promote(&["00000000000000b2", "--apply", "--field", "Armor"]),
        2,
        "",
        "error: entity 00000000000000b2 does not override `Armor`\n",
    );
    check(
        &promote(&["00000000000000b2", "--save-as", "../outside"]),
        2,
        "",
        "error: archetype name `../outside` leaves the archetypes root; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`\n",
    );
    check(
        &promote(&["00000000000000b2", "--save-as", "enemies/goblin"]),
        2,
        "",
        "error: archetype `enemies/goblin` already exists (`archetypes/enemies/goblin.json`)\n",
    );
    assert_eq!(project.archetype_files(), files);
    assert_eq!(project.read("archetypes/enemies/goblin.json"), goblin);
    assert!(!project.path("outside.json").exists());
}

#[test]
fn a_scene_not_in_the_current_json_format_is_not_edited_as_text() {
    let project = Project::demo();
    let old = SCENE.replace("\"format\": 2", "\"format\": 1");
    project.write("levels/old.scene.json", &old);
    check(
        &project.run(&["promote", "levels/old.scene.json", "00000000000000b2", "--revert"]),
        2,
        "",
        "error: `levels/old.scene.json` is in scene format 1, not 2; `archetool migrate` upgrades it\n",
    );
    let before = project.read("archetypes/enemies/goblin.json");
    check(
        &project.run(&["promote", "levels/old.scene.json", "00000000000000b2", "--apply", "--field", "Speed"]),
        0,
        "wrote archetypes/enemies/goblin.json: Speed.value = 3.5\n\
         left the overrides in levels/old.scene.json: `levels/old.scene.json` is in scene format 1, not 2; `archetool migrate` upgrades it\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        before.replace("\"value\": 2.0 }", "\"value\": 3.5 }")
    );
    assert_eq!(project.read("levels/old.scene.json"), old);
}
