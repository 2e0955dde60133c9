//! The game's own archetool, run as a built binary against the game's archetypes: it knows the
//! game's components (the shipped `archetool` would say `unknown component Motion`), their
//! old names, their fields and their schemas.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the game's archetool in `dir` with `args`; at most 20 s.
fn archetool(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_my-game-archetool"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the game's archetool starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("the archetool runs").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("archetool {args:?} ran for more than 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("the archetool's output")
}

fn game_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("UTF-8 output")
}

#[test]
fn the_games_archetypes_validate_and_are_formatted() {
    let validate = archetool(game_dir(), &["validate"]);
    assert_eq!(
        text(&validate.stdout),
        "2 archetypes, 0 errors, 0 warnings\n"
    );
    assert_eq!(text(&validate.stderr), "");
    assert_eq!(validate.status.code(), Some(0));

    let fmt = archetool(game_dir(), &["fmt", "--check"]);
    assert_eq!(text(&fmt.stdout), "2 files checked, all formatted\n");
    assert_eq!(fmt.status.code(), Some(0));
}

#[test]
fn inspect_resolves_the_games_inheritance_and_references() {
    let inspect = archetool(game_dir(), &["inspect", "enemies/alpha_wolf"]);
    assert_eq!(inspect.status.code(), Some(0), "{}", text(&inspect.stderr));
    let stdout = text(&inspect.stdout);
    assert!(
        stdout.contains(r#""Motion": { "max_speed": 6.0, "velocity": [0, 0] },"#),
        "{stdout}"
    );
    assert!(
        stdout.contains(r##""Hunts": { "target": "#.." },"##),
        "{stdout}"
    );
}

#[test]
fn mistakes_in_the_games_components_are_placed_with_suggestions() {
    let dir = tempfile::tempdir().unwrap();
    let archetypes = dir.path().join("archetypes");
    std::fs::create_dir_all(&archetypes).unwrap();
    let bad = "{\n  \"components\": {\n    \"Movement\": { \"velocity\": [1, \"x\"] },\n    \"Vitality\": { \"current\": 1, \"max\": 2, \"mx\": 3 }\n  }\n}\n";
    std::fs::write(archetypes.join("bad.json"), bad).unwrap();
    let validate = archetool(dir.path(), &["validate", "--format", "json"]);
    assert_eq!(
        text(&validate.stdout),
        concat!(
            r#"{"file":"archetypes/bad.json","line":3,"column":35,"end_line":3,"end_column":38,"severity":"error","code":"invalid-component","message":"invalid value for `Motion.velocity[1]`: invalid type: string \"x\", expected f32","suggestion":null,"archetype":"bad","component":"Motion","field":"velocity[1]","related":[]}"#,
            "\n",
            r#"{"file":"archetypes/bad.json","line":4,"column":43,"end_line":4,"end_column":47,"severity":"error","code":"unknown-field","message":"unknown field `mx` in component `Vitality`","suggestion":"max","archetype":"bad","component":"Vitality","field":"mx","related":[]}"#,
            "\n"
        )
    );
    assert_eq!(validate.status.code(), Some(1));
}

#[test]
fn the_schema_describes_the_games_components_glam_fields_included() {
    let schema = archetool(game_dir(), &["schema"]);
    assert_eq!(schema.status.code(), Some(0), "{}", text(&schema.stderr));
    let stdout = text(&schema.stdout);
    // `velocity` is a glam `Vec2`, described as its `schemars(with)` says: two numbers (or, as
    // any list in an archetype file, a list operator, or a `$pick` of such lists).
    let velocity = r##""velocity": {
          "anyOf": [
            {
              "items": { "format": "float", "type": "number" },
              "maxItems": 2,
              "minItems": 2,
              "type": "array"
            },
            { "$ref": "#/$defs/list-operator" },
            {
              "$ref": "#/$defs/pick",
              "properties": {
                "$pick": {
                  "items": {
                    "items": { "format": "float", "type": "number" },
                    "maxItems": 2,
                    "minItems": 2,
                    "type": "array"
                  }
                }
              }
            }
          ],
          "description": "Velocity, `[x, y]`."
        }"##;
    assert!(stdout.contains(velocity), "{stdout}");
    // `Patrol` derives no `JsonSchema`: its schema is traced from serde, its glam field
    // without any attribute.
    let schema: serde_json::Value = serde_json::from_str(stdout).expect("the schema is JSON");
    let patrol = find(&schema, "Patrol").expect("a schema for Patrol");
    // Each point an array or an object of its axes.
    assert_eq!(
        patrol["anyOf"][0]["properties"]["route"]["anyOf"][0],
        serde_json::json!({
            "type": "array",
            "items": { "anyOf": [
                { "type": "array", "items": { "type": "number" }, "minItems": 2, "maxItems": 2 },
                {
                    "type": "object",
                    "properties": { "x": { "type": "number" }, "y": { "type": "number" } },
                    "additionalProperties": false,
                    "minProperties": 1,
                },
            ] },
        })
    );
    assert!(stdout.contains(r#""description": "How an entity moves, in tiles per second.""#));
    assert!(stdout.contains(r#""Vitality": {"#));
}

/// The first member named `key` anywhere in `value`.
fn find<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v serde_json::Value> {
    match value {
        serde_json::Value::Object(object) => object
            .get(key)
            .or_else(|| object.values().find_map(|member| find(member, key))),
        serde_json::Value::Array(items) => items.iter().find_map(|item| find(item, key)),
        _ => None,
    }
}
