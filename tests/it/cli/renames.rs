//! Archetype renames through `archetool`: `validate` warns of old names and refuses former
//! names that clash, `scene check` says which old names a scene uses and exits 0, `migrate`
//! rewrites archetype files and scenes (JSON and binary) to the current names.

use archetype_engine::{ArchetypeLibrary, LoadOptions, SceneLoadOptions};
use hecs::World;

use super::{check, none_to_migrate, Project};
use crate::support::{registry, Health};

const GOBLIN: &str =
    "{\n  \"components\": {\n    \"Health\": { \"current\": 7, \"max\": 7 }\n  }\n}\n";
const GOBLIN_MOVED: &str = "{\n  \"formerly\": [\"enemies/goblin\"],\n  \"components\": {\n    \"Health\": { \"current\": 7, \"max\": 7 }\n  }\n}\n";
const ARCHER: &str = "{\n  \"extends\": \"enemies/goblin\",\n  \"children\": { \"pet\": { \"archetype\": \"enemies/goblin\" } }\n}\n";
const WARNING: &str = "warning[old-name]: archetype `enemies/goblin` is now called `enemies/goblins/goblin` (its `formerly` lists the old name); write the new name, or run `archetool migrate`";

/// A project whose goblin moved from `enemies/goblin` to `enemies/goblins/goblin`, with an
/// archer and two scenes (JSON and binary) saved before the move.
fn moved_project() -> Project {
    let project = Project::with(&[
        ("archetypes/enemies/goblin.json", GOBLIN),
        ("archetypes/enemies/archer.json", ARCHER),
    ]);
    let library = project.library();
    let mut world = World::new();
    library.spawn(&mut world, "enemies/goblin").unwrap();
    library.spawn(&mut world, "enemies/goblin").unwrap();
    library.spawn(&mut world, "enemies/archer").unwrap();
    project.save("assets/scenes/level.scene.json", &world, &library);
    project.save("assets/scenes/level.scene.bin", &world, &library);
    std::fs::remove_file(project.path("archetypes/enemies/goblin.json")).unwrap();
    project.write("archetypes/enemies/goblins/goblin.json", GOBLIN_MOVED);
    project
}

#[test]
fn validate_warns_of_old_names_and_exits_zero() {
    let project = moved_project();
    let expected = format!(
        r#"archetypes/enemies/archer.json:2:14: {WARNING}
  |
2 |   "extends": "enemies/goblin",
  |              ^^^^^^^^^^^^^^^^
  |
  = help: did you mean `enemies/goblins/goblin`?

archetypes/enemies/archer.json:3:39: {WARNING}
  |
3 |   "children": {{ "pet": {{ "archetype": "enemies/goblin" }} }}
  |                                       ^^^^^^^^^^^^^^^^
  |
  = help: did you mean `enemies/goblins/goblin`?

2 archetypes, 0 errors, 2 warnings
"#
    );
    check(&project.run(&["validate"]), 0, &expected, "");
}

#[test]
fn validate_refuses_a_former_name_that_is_a_live_archetypes() {
    let project = moved_project();
    project.write("archetypes/enemies/goblin.json", GOBLIN);
    let expected = r#"archetypes/enemies/goblins/goblin.json:2:16: error[former-name-clash]: former name `enemies/goblin` is the name of a live archetype, so it cannot also stand for this one; remove it from `formerly`, or rename that archetype
  |
2 |   "formerly": ["enemies/goblin"],
  |                ^^^^^^^^^^^^^^^^

3 archetypes, 1 error, 0 warnings
"#;
    check(&project.run(&["validate"]), 1, expected, "");
}

#[test]
fn scene_check_says_which_old_names_a_scene_uses_and_exits_zero() {
    let project = moved_project();
    let run = project.run(&["scene", "check", "assets/scenes/level.scene.json"]);
    let text = project.read("assets/scenes/level.scene.json");
    let line = text
        .lines()
        .position(|line| line.contains("\"enemies/goblin\""))
        .unwrap();
    let source = text.lines().nth(line).unwrap();
    let column = source.find("\"enemies/goblin\"").unwrap() + 1;
    let underline = format!("{}{}", " ".repeat(column - 1), "^".repeat(16));
    let expected = format!(
        "assets/scenes/level.scene.json:{line}:{column}: warning[old-name]: archetype `enemies/goblin` is now called `enemies/goblins/goblin`: 2 entries loaded as `enemies/goblins/goblin` (saving writes the new name)\n   |\n{line:>2} | {source}\n   | {underline}\n\nassets/scenes/level.scene.json: ok (4 entities: 4 from archetypes, 0 plain)\n",
        line = line + 1
    );
    check(&run, 0, &expected, "");
    let run = project.run(&["scene", "check", "assets/scenes/level.scene.bin"]);
    // A binary scene's warning is placed at the byte of the first entry naming the archetype
    // (where that is depends on the entities' random IDs).
    let (place, rest) = run.stdout.split_once("): ").unwrap();
    assert!(
        place.starts_with("assets/scenes/level.scene.bin (byte "),
        "{place}"
    );
    assert_eq!(
        (run.code, rest, run.stderr.as_str()),
        (
            0,
            "warning[old-name]: archetype `enemies/goblin` is now called `enemies/goblins/goblin`: 2 entries loaded as `enemies/goblins/goblin` (saving writes the new name)\n\nassets/scenes/level.scene.bin: ok (4 entities: 4 from archetypes, 0 plain)\n",
            ""
        )
    );
}

#[test]
fn migrate_rewrites_archetype_files_and_scenes_to_current_names() {
    let project = moved_project();
    let scene = project.read("assets/scenes/level.scene.json");
    let first = scene
        .lines()
        .position(|line| line.contains("\"enemies/goblin\""))
        .unwrap();
    let run = project.run(&["migrate", "--check"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "archetypes/enemies/archer.json:2:14: archetype `enemies/goblin` is now `enemies/goblins/goblin`",
            "archetypes/enemies/archer.json:3:39: archetype `enemies/goblin` is now `enemies/goblins/goblin`",
        ]
    );
    assert_eq!(
        lines[2],
        "assets/scenes/level.scene.bin: archetype `enemies/goblin` is now `enemies/goblins/goblin`"
    );
    assert!(
        lines[3].starts_with(&format!("assets/scenes/level.scene.json:{}:", first + 1))
            && lines[3].ends_with(
                ": archetype `enemies/goblin` is now `enemies/goblins/goblin` (2 entries)"
            ),
        "{}",
        lines[3]
    );
    assert_eq!(
        lines[4..],
        ["3 files to migrate; run `archetool migrate` to update them"]
    );

    let run = project.run(&["migrate"]);
    assert_eq!(
        (run.code, run.stdout.lines().last()),
        (0, Some("migrated 3 files"))
    );
    assert_eq!(
        project.read("archetypes/enemies/archer.json"),
        ARCHER.replace("\"enemies/goblin\"", "\"enemies/goblins/goblin\"")
    );
    check(
        &project.run(&["validate"]),
        0,
        "2 archetypes, 0 errors, 0 warnings\n",
        "",
    );
    check(
        &project.run(&["migrate", "--check"]),
        0,
        &none_to_migrate(&project, Some(2)),
        "",
    );
    // The scenes load with nothing to say, as the goblins they were.
    let library = ArchetypeLibrary::load_with(
        project.path("archetypes"),
        registry(),
        LoadOptions::default(),
    )
    .unwrap();
    for file in ["level.scene.json", "level.scene.bin"] {
        let bytes = std::fs::read(project.path(&format!("assets/scenes/{file}"))).unwrap();
        let mut world = World::new();
        let options = SceneLoadOptions::default();
        let loaded =
            archetype_engine::load_scene(&bytes, None, &mut world, &library, &options).unwrap();
        assert_eq!((loaded.changes(), loaded.warnings().len()), (&[][..], 0));
        assert_eq!(world.query::<&Health>().iter().count(), 4, "{file}");
    }
}
