//! `archetool cook`: the file a shipped game loads, the same bytes a game's own cook gives, and
//! no file for a library with errors.

use archetool::demo::components::registry;
use archetype_engine::{ArchetypeLibrary, LoadOptions};

use super::Project;

#[test]
fn cook_writes_the_demo_library_a_game_loads_in_place_of_its_json() {
    let project = Project::demo();
    let run = project.run(&["cook", "--out", "game.cook"]);
    let cooked = std::fs::read(project.path("game.cook")).unwrap();
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            format!(
                "cooked 20 archetypes into game.cook ({} bytes)\n",
                cooked.len()
            )
            .as_str(),
            ""
        )
    );
    // The game's own cook of the same files: the same bytes.
    let json = ArchetypeLibrary::load(project.path("archetypes"), registry()).unwrap();
    assert_eq!(json.cook().unwrap(), cooked);
    let shipped = ArchetypeLibrary::load_cooked_file(
        project.path("game.cook"),
        project.path("archetypes"),
        registry(),
        LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(
        shipped.names().collect::<Vec<_>>(),
        json.names().collect::<Vec<_>>()
    );
    let mut world = hecs::World::new();
    shipped.spawn(&mut world, "enemies/goblin").unwrap();
}

#[test]
fn cook_refuses_a_library_with_errors_and_writes_nothing() {
    let project = Project::with(&[
        (
            "archetypes/goblin.json",
            r#"{ "components": { "Helth": {} } }"#,
        ),
        ("archetypes/orc.json", r#"{ "components": {} }"#),
    ]);
    let run = project.run(&["cook", "--out", "game.cook"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "archetypes/goblin.json:1:19: error[unknown-component]: unknown component `Helth`; did you mean `Health`?\n"
    );
    assert_eq!(
        run.stderr,
        "error: not cooked: `archetypes` has 1 error (see `archetool validate`)\n"
    );
    assert!(!project.path("game.cook").exists());
}
