//! The editor schema and the loader agree: a corpus of archetype files (every operator alone
//! and combined, variation, markers, `formerly`, children), each judged by `validate`'s loader
//! and by a JSON Schema validator with the shipped schema. Where the schema cannot say a rule
//! (names of other archetypes, the order of a range), the file is listed
//! as engine only: the loader refuses it, the schema lets it through.

use archetool::demo::components::registry;
use archetype_engine::{ArchetypeLibrary, LoadOptions, Severity};

use super::shipped_schema;

/// How a file of the corpus is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Verdict {
    /// Both accept it.
    Valid,
    /// Both refuse it.
    Invalid,
    /// The loader refuses it; the schema cannot tell.
    EngineOnly,
}

use Verdict::{EngineOnly, Invalid, Valid};

/// `components` of a goblin's child, as a whole file.
fn child(components: &str) -> String {
    format!(r#"{{ "extends": "enemies/goblin", "components": {components} }}"#)
}

fn corpus() -> Vec<(String, Verdict)> {
    let children = [
        // Plain values and every number operator, alone and combined.
        (r#"{ "Health": { "max": 20 } }"#, Valid),
        (r#"{ "Health": { "current": 5 } }"#, Valid),
        (r#"{ "Name": "Bob" }"#, Valid),
        (r#"{ "Transform": {} }"#, Valid),
        (r#"{ "Health": { "max": { "$add": 2 } } }"#, Valid),
        (r#"{ "Melee": { "damage": { "$add": -1 } } }"#, Valid),
        (r#"{ "Health": { "max": { "$mul": 1.5 } } }"#, Valid),
        (r#"{ "Speed": { "value": { "$mul": 0.75 } } }"#, Valid),
        (
            r#"{ "Health": { "max": { "$add": 1, "$mul": 2 } } }"#,
            Valid,
        ),
        (
            r#"{ "Health": { "max": { "$mul": 0.5, "$round": "trunc" } } }"#,
            Valid,
        ),
        (r#"{ "Health": { "$mul": 2 } }"#, Valid),
        (r#"{ "Health": { "$mul": 2, "$round": "floor" } }"#, Valid),
        // List operators, alone, combined and by key.
        (r#"{ "Loot": { "items": { "$append": ["x"] } } }"#, Valid),
        (r#"{ "Loot": { "items": { "$prepend": ["x"] } } }"#, Valid),
        (r#"{ "Loot": { "items": { "$union": ["x"] } } }"#, Valid),
        (r#"{ "Loot": { "items": { "$remove": ["bone"] } } }"#, Valid),
        (
            r#"{ "Loot": { "items": { "$union": ["bow"], "$remove": ["bone"] } } }"#,
            Valid,
        ),
        (
            r#"{ "Loot": { "items": { "$append": ["a"], "$prepend": ["b"] } } }"#,
            Valid,
        ),
        (r#"{ "Loot": { "items": [] } }"#, Valid),
        // Replacing, variants, markers, variation.
        (r#"{ "Velocity": { "$replace": { "x": 1 } } }"#, Valid),
        (r#"{ "Stance": { "Guard": { "alert": 3 } } }"#, Valid),
        (r#"{ "Boss": {} }"#, Valid),
        (r#"{ "Health": { "max": { "$range": [8, 12] } } }"#, Valid),
        (r#"{ "Health": { "max": { "$pick": [8, 12] } } }"#, Valid),
        (r#"{ "Glyph": { "ch": { "$pick": ["g", "G"] } } }"#, Valid),
        (
            r#"{ "Faction": { "$pick": ["Hostile", "Neutral"] } }"#,
            Valid,
        ),
        (
            r#"{ "Loot": { "items": { "$pick": [["bone"], []] } } }"#,
            Valid,
        ),
        (
            r#"{ "Spawner": { "archetype": "enemies/goblin", "interval": 2, "max_alive": 3 } }"#,
            Valid,
        ),
        // Vectors: arrays or objects of their axes, an axis alone, an operator on an axis.
        (r#"{ "Transform": { "translation": [1, 2, 3] } }"#, Valid),
        (
            r#"{ "Transform": { "translation": { "x": 1, "y": 2, "z": 3 } } }"#,
            Valid,
        ),
        (r#"{ "Transform": { "translation": { "z": 5 } } }"#, Valid),
        (
            r#"{ "Transform": { "scale": { "y": { "$mul": 2 } } } }"#,
            Valid,
        ),
        (
            r#"{ "Transform": { "rotation": { "x": 0, "y": 0, "z": 0, "w": 1 } } }"#,
            Valid,
        ),
        (r#"{ "Transform": { "translation": { "q": 5 } } }"#, Invalid),
        (r#"{ "Transform": { "translation": [1, 2] } }"#, Invalid),
        (
            r#"{ "Transform": { "translation": { "z": "up" } } }"#,
            Invalid,
        ),
        // Mistakes both catch.
        (r#"{ "Helth": {} }"#, Invalid),
        (r#"{ "Health": { "maks": 3 } }"#, Invalid),
        (r#"{ "Health": { "max": "lots" } }"#, Invalid),
        (r#"{ "Glyph": { "color": "Purple" } }"#, Invalid),
        (r#"{ "Health": { "max": { "$mull": 2 } } }"#, Invalid),
        (r#"{ "Health": { "max": { "$append": [1] } } }"#, Invalid),
        (r#"{ "Health": { "max": { "$add": "3" } } }"#, Invalid),
        (
            r#"{ "Health": { "max": { "$mul": 2, "min": 1 } } }"#,
            Invalid,
        ),
        (
            r#"{ "Health": { "max": { "$add": 1, "$append": [1] } } }"#,
            Invalid,
        ),
        (r#"{ "Health": { "max": { "$round": "trunc" } } }"#, Invalid),
        (
            r#"{ "Health": { "max": { "$mul": 2, "$round": "trunk" } } }"#,
            Invalid,
        ),
        (r#"{ "Health": { "$round": "trunc" } }"#, Invalid),
        (r#"{ "Health": { "$mul": 2, "max": 3 } }"#, Invalid),
        (r#"{ "Loot": { "items": { "$append": "x" } } }"#, Invalid),
        (
            r#"{ "Loot": { "items": [{ "$append": ["x"] }] } }"#,
            Invalid,
        ),
        (
            r#"{ "Loot": { "items": { "$update": [{ "id": "x" }] } } }"#,
            Invalid,
        ),
        (
            r#"{ "Loot": { "items": { "$key": "id", "$append": ["x"] } } }"#,
            Invalid,
        ),
        (r#"{ "Loot": { "items": { "$key": "id" } } }"#, Invalid),
        (
            r#"{ "Velocity": { "$replace": { "x": 1 }, "x": 2 } }"#,
            Invalid,
        ),
        (r#"{ "Health": { "max": { "$range": [8] } } }"#, Invalid),
        (r#"{ "Glyph": { "ch": { "$pick": [] } } }"#, Invalid),
        (r#"{ "Glyph": { "ch": { "$range": [1, 2] } } }"#, Invalid),
        (r#"{ "Boss": true }"#, Invalid),
        (r#"{ "Boss": { "x": 1 } }"#, Invalid),
        (r#"{ "Velocity": { "$replace": null } }"#, Invalid),
        (
            r#"{ "Stance": { "Guard": { "alert": 3 }, "Wander": { "pace": 1 } } }"#,
            Invalid,
        ),
        // Mistakes only the loader can see.
        (
            r#"{ "Health": { "max": { "$range": [12, 8] } } }"#,
            EngineOnly,
        ),
        (r#"{ "Glyph": { "ch": { "$pick": [1, 2] } } }"#, Invalid),
        (
            r#"{ "Faction": { "$pick": ["Hostile", "Hostyle"] } }"#,
            Invalid,
        ),
        (
            r#"{ "Loot": { "items": { "$pick": [["bone"], [3]] } } }"#,
            Invalid,
        ),
        (
            r#"{ "Spawner": { "archetype": "enemies/nope", "interval": 1, "max_alive": 1 } }"#,
            EngineOnly,
        ),
    ];
    let whole_files = [
        (
            r#"{ "abstract": true, "components": { "Speed": { "value": { "$mul": 2 } } } }"#,
            Valid,
        ),
        (
            r#"{ "formerly": ["enemies/old_goblin"], "extends": "enemies/goblin" }"#,
            Valid,
        ),
        (
            r#"{ "extends": "enemies/goblin", "children": { "pet": { "archetype": "items/key" } } }"#,
            Valid,
        ),
        (
            r#"{ "extends": ["enemies/goblin", "traits/armored"] }"#,
            Valid,
        ),
        (
            r#"{ "extends": "enemies/goblin", "component": {} }"#,
            Invalid,
        ),
        (r#"{ "extends": 3 }"#, Invalid),
        (r#"{ "abstract": "yes" }"#, Invalid),
        (
            r#"{ "extends": "enemies/goblin", "children": { "pet": 3 } }"#,
            Invalid,
        ),
        (
            r#"{ "formerly": ["enemies/orc"], "extends": "enemies/goblin" }"#,
            EngineOnly,
        ),
        (r#"{ "extends": "enemies/nope" }"#, EngineOnly),
    ];
    let children = children
        .into_iter()
        .map(|(components, verdict)| (child(components), verdict));
    let whole_files = (whole_files.into_iter()).map(|(text, verdict)| (text.to_string(), verdict));
    children.chain(whole_files).collect()
}

/// Whether the loader refuses `text` as `archetypes/corpus/case.json` beside the demo's
/// archetypes (an error in that file; warnings do not count).
fn engine_refuses(text: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("archetypes");
    crate::support::copy_tree(&super::repo_root().join("archetypes"), &root);
    std::fs::create_dir_all(root.join("corpus")).unwrap();
    std::fs::write(root.join("corpus/case.json"), text).unwrap();
    let library = match ArchetypeLibrary::load_with(&root, registry(), LoadOptions::default()) {
        Ok(library) => library,
        Err(error) => error.into_partial(),
    };
    let case = root.join("corpus/case.json");
    (library.diagnostics().iter())
        .any(|d| d.severity == Severity::Error && d.file.as_deref() == Some(case.as_path()))
}

#[test]
fn the_schema_and_validate_agree_on_a_corpus_of_archetype_files() {
    let validator = jsonschema::validator_for(&shipped_schema()).unwrap();
    let corpus = corpus();
    assert!(corpus.len() >= 60, "{} files", corpus.len());
    let mut disagreements = Vec::new();
    for (text, verdict) in &corpus {
        let instance: serde_json::Value = serde_json::from_str(text).unwrap();
        let schema_accepts = validator.is_valid(&instance);
        let engine_accepts = !engine_refuses(text);
        let expected = match verdict {
            Valid => (true, true),
            Invalid => (false, false),
            EngineOnly => (false, true),
        };
        if (engine_accepts, schema_accepts) != expected {
            disagreements.push(format!(
                "{text}: {verdict:?}, but validate {} and the schema {}",
                if engine_accepts { "accepts" } else { "refuses" },
                if schema_accepts { "accepts" } else { "refuses" },
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
