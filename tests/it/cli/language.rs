//! The designer's language through `archetool`: what `validate` says of archetypes
//! held back by a broken parent, checked references, operators and the schema.

use super::{check, Project};

#[test]
fn validate_reports_what_a_broken_parent_hides_and_counts_what_it_could_not_check() {
    let project = Project::with(&[
        (
            "archetypes/enemies/goblin.json",
            "{\n  \"components\": {\n    \"Helth\": { \"max\": 12 }\n  }\n}\n",
        ),
        (
            "archetypes/enemies/archer.json",
            "{\n  \"extends\": \"enemies/goblin\",\n  \"components\": {\n    \"Speed\": { \"value\": \"fast\" }\n  }\n}\n",
        ),
    ]);
    let expected = r#"archetypes/enemies/archer.json:2:14: note[broken-dependency]: not fully checked: it depends on `enemies/goblin`, which has errors; its own values were checked as far as they go
  |
2 |   "extends": "enemies/goblin",
  |              ^^^^^^^^^^^^^^^^

archetypes/enemies/archer.json:4:25: error[invalid-component]: invalid value for `Speed.value`: invalid type: string "fast", expected f32
  |
4 |     "Speed": { "value": "fast" }
  |                         ^^^^^^

archetypes/enemies/goblin.json:3:5: error[unknown-component]: unknown component `Helth`
  |
3 |     "Helth": { "max": 12 }
  |     ^^^^^^^
  |
  = help: did you mean `Health`?

2 archetypes, 2 errors, 0 warnings, 1 not fully checked
"#;
    check(&project.run(&["validate"]), 1, expected, "");
    let json = project.run(&["validate", "--format", "json"]);
    let first = json.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        r#"{"file":"archetypes/enemies/archer.json","line":2,"column":14,"end_line":2,"end_column":30,"severity":"note","code":"broken-dependency","message":"not fully checked: it depends on `enemies/goblin`, which has errors; its own values were checked as far as they go","suggestion":null,"archetype":"enemies/archer","component":null,"field":null,"related":[]}"#
    );
}

/// A marker component takes `{}` (and `null`, which removes it) in the schema, as in files.
#[test]
fn the_schema_describes_a_marker_as_an_empty_object() {
    use archetool::cli::schema::schema_value;
    use archetype_engine::ComponentRegistry;

    #[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Boss;
    let mut registry = ComponentRegistry::new();
    registry.register_with_schema::<Boss>().unwrap();
    let schema = schema_value(&registry, &[]);
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (text, valid) in [
        (r#"{ "components": { "Boss": {} } }"#, true),
        (r#"{ "components": { "Boss": null } }"#, true),
        (r#"{ "components": { "Boss": { "hp": 1 } } }"#, false),
        (r#"{ "components": { "Boss": true } }"#, false),
    ] {
        let instance: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(validator.is_valid(&instance), valid, "{text}");
    }
}

/// Operators and variations are in the schema: a list or a number may be written as an
/// operator, a number as a `$range`, most values as a `$pick`, and a misspelt or misplaced one
/// is flagged as the loader flags it.
#[test]
fn the_schema_accepts_operators_and_variations_where_they_go() {
    let validator = jsonschema::validator_for(&super::shipped_schema()).unwrap();
    for (text, valid) in [
        (
            r#"{ "components": { "Health": { "max": { "$mul": 1.5 } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Speed": { "value": { "$add": -1 } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$append": [1] } } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$mull": 2 } } } }"#,
            false,
        ),
        // Both number operators in one object, as the engine takes them; `$round` beside them.
        (
            r#"{ "components": { "Health": { "max": { "$add": 1, "$mul": 2 } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$mul": 0.5, "$round": "trunc" } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$round": "trunc" } } } }"#,
            false,
        ),
        // Several list operators in one object, as the engine takes them; keyed ones with `$key`.
        (
            r#"{ "components": { "Loot": { "items": { "$union": ["bow"], "$remove": ["club"] } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Loot": { "items": { "$key": "id", "$update": [{ "id": "bow" }] } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Loot": { "items": { "$update": [{ "id": "bow" }] } } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Loot": { "items": { "$key": "id", "$append": ["bow"] } } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Loot": { "items": { "$key": "id" } } } }"#,
            false,
        ),
        // An object or a list replaced whole.
        (
            r#"{ "components": { "Health": { "$replace": { "max": 3, "current": 3 } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Health": { "$replace": 3 } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Health": { "$replace": { "max": 3 }, "$mul": 2 } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$mul": 0.5, "$round": "trunk" } } } }"#,
            false,
        ),
        // Spawn-time variation: a range where a number goes, a pick where a number, list,
        // string or boolean goes.
        (
            r#"{ "components": { "Health": { "max": { "$range": [8, 12] } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$range": [8] } } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Health": { "max": { "$pick": [8, 12] } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Glyph": { "ch": { "$pick": ["g", "G"] } } } }"#,
            true,
        ),
        (
            r#"{ "components": { "Glyph": { "ch": { "$pick": [] } } } }"#,
            false,
        ),
        (
            r#"{ "components": { "Glyph": { "ch": { "$range": [1, 2] } } } }"#,
            false,
        ),
    ] {
        let instance: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(validator.is_valid(&instance), valid, "{text}");
    }
}

/// `Spawner.archetype` is an `ArchetypeRef`: `validate` and `scene check` both refuse a name
/// that does not exist, at its place, with "did you mean".
#[test]
fn validate_and_scene_check_refuse_an_archetype_name_that_does_not_exist() {
    let project = Project::demo();
    let camp = project.read("archetypes/spawners/goblin_camp.json");
    project.write(
        "archetypes/spawners/goblin_camp.json",
        &camp.replace("\"enemies/goblin\"", "\"enemies/gobln\""),
    );
    let run = project.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("archetypes/spawners/goblin_camp.json:5:31: error[unknown-archetype]: invalid value for `Spawner.archetype`: archetype `enemies/gobln` does not exist\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("  = help: did you mean `enemies/goblin`?"),
        "{}",
        run.stdout
    );

    let project = Project::demo();
    project.write(
        "s.scene.json",
        r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "archetype": "spawners/goblin_camp", "components": { "Spawner": { "archetype": "allies/soldierr" } } }
  ]
}
"#,
    );
    let run = project.run(&["scene", "check", "s.scene.json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("s.scene.json:4:112: error[invalid-component]: entity 00000000000000a1: `Spawner.archetype`: archetype `allies/soldierr` does not exist; did you mean `allies/soldier`?\n"),
        "{}",
        run.stdout
    );
}

/// The schema never goes stale: archetype names are suggested (`examples`), not enforced, so a
/// file extending an archetype created since is not flagged; `archetool new` refreshes the
/// schema all the same, so the new name is suggested too.
#[test]
fn the_schema_suggests_archetype_names_and_new_refreshes_it() {
    let schema_path = "assets/schema/archetype.schema.json";
    let project = Project::demo();
    project.write(schema_path, &project_file(schema_path));
    let before = jsonschema::validator_for(&super::parse(&project.read(schema_path))).unwrap();
    let troll_child = super::parse(
        r#"{ "extends": "enemies/troll", "components": { "Spawner": { "archetype": "enemies/troll", "interval": 1, "max_alive": 1 } }, "children": { "pet": { "archetype": "enemies/troll" } } }"#,
    );
    assert!(
        before.is_valid(&troll_child),
        "an unknown but well-formed name is accepted"
    );
    let malformed = super::parse(r#"{ "extends": "enemies/troll.json" }"#);
    assert!(!before.is_valid(&malformed));

    check(
        &project.run(&["new", "enemies/troll", "--extends", "enemies/goblin"]),
        0,
        &format!("archetypes/enemies/troll.json\nrefreshed {schema_path}\n"),
        "",
    );
    let after = super::parse(&project.read(schema_path));
    for place in ["archetype-name", "ArchetypeRef"] {
        let examples = after["$defs"][place]["examples"].as_array().unwrap();
        assert!(
            examples.contains(&serde_json::json!("enemies/troll")),
            "{place}"
        );
    }
    // The refreshed schema is what `archetool schema` prints.
    let printed = project.run(&["schema"]);
    assert_eq!(project.read(schema_path), printed.stdout);
}

fn project_file(relative: &str) -> String {
    std::fs::read_to_string(super::repo_root().join(relative)).unwrap()
}
