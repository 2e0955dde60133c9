//! `archetool promote`: a scene entity's differences written into its archetype's file (only
//! those values' text changed) or into a new archetype extending it; refusals change nothing.

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
        "wrote archetypes/enemies/goblin.json: Health.max = 30\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        before.replace("\"max\": 12 }", "\"max\": 30 }")
    );
    assert_eq!(project.read("levels/camp.scene.json"), SCENE);
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
                    wrote archetypes/enemies/goblin.json: Speed.value = 3.5\n";
    check(&run, 0, expected, "");
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        before
            .replace("\"max\": 12 }", "\"max\": 30 }")
            .replace("\"value\": 2.0 }", "\"value\": 3.5 }")
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
        "error: the entity does not override `Armor`\n",
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
