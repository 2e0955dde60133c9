//! Nothing hidden: a load (and so `validate`) reports the independent problems of archetypes
//! whose parent is broken, and notes each archetype it could not check fully.

use crate::support::{assert_messages, load_errors, load_partial};

/// A goblin whose file has an error: every archetype built on it is held back.
const BROKEN_GOBLIN: (&str, &str) = (
    "enemies/goblin.json",
    r#"{
  "components": {
    "Helth": { "current": 12, "max": 12 }
  }
}"#,
);

/// An archer on the broken goblin, with two problems of its own.
const ARCHER: (&str, &str) = (
    "enemies/archer.json",
    r#"{
  "extends": "enemies/goblin",
  "components": {
    "Speed": { "value": "fast" },
    "Health": { "maxx": 8 }
  }
}"#,
);

/// A chief on the archer (two levels above the broken goblin), with a problem of its own.
const CHIEF: (&str, &str) = (
    "enemies/chief.json",
    r#"{
  "extends": ["enemies/archer"],
  "components": { "Ai": { "mode": "Chse" } }
}"#,
);

#[test]
fn a_broken_parent_does_not_hide_its_descendants_own_problems() {
    assert_messages(
        &load_errors(&[BROKEN_GOBLIN, ARCHER, CHIEF]),
        &[
            "archetypes/enemies/archer.json:2:14: note[broken-dependency]: not fully checked: it depends on `enemies/goblin`, which has errors; its own values were checked as far as they go",
            "archetypes/enemies/archer.json:4:25: error[invalid-component]: invalid value for `Speed.value`: invalid type: string \"fast\", expected f32",
            "archetypes/enemies/archer.json:5:17: error[unknown-field]: unknown field `maxx` in component `Health`; did you mean `max`?",
            "archetypes/enemies/chief.json:2:15: note[broken-dependency]: not fully checked: it depends on `enemies/archer`, which depends on `enemies/goblin`, which has errors; its own values were checked as far as they go",
            "archetypes/enemies/chief.json:3:35: error[invalid-component]: invalid value for `Ai.mode`: unknown variant `Chse`, expected one of `Wander`, `Chase`, `Guard`; did you mean `Chase`?",
            "archetypes/enemies/goblin.json:3:5: error[unknown-component]: unknown component `Helth`; did you mean `Health`?",
        ],
    );
}

#[test]
fn an_archetype_without_problems_of_its_own_is_still_noted() {
    let clean_archer = (
        "enemies/archer.json",
        r#"{ "extends": "enemies/goblin", "components": { "Speed": { "value": 3 } } }"#,
    );
    assert_messages(
        &load_errors(&[BROKEN_GOBLIN, clean_archer]),
        &[
            "archetypes/enemies/archer.json:1:14: note[broken-dependency]: not fully checked: it depends on `enemies/goblin`, which has errors; its own values were checked as far as they go",
            "archetypes/enemies/goblin.json:3:5: error[unknown-component]: unknown component `Helth`; did you mean `Health`?",
        ],
    );
}

#[test]
fn a_broken_child_archetype_is_noted_where_the_child_names_it() {
    let camp = (
        "spawners/camp.json",
        r#"{
  "components": { "Health": { "current": 50, "max": 50 } },
  "children": {
    "guard": {
      "archetype": "enemies/goblin",
      "components": { "Speed": { "valeu": 1 } }
    }
  }
}"#,
    );
    assert_messages(
        &load_errors(&[BROKEN_GOBLIN, camp]),
        &[
            "archetypes/enemies/goblin.json:3:5: error[unknown-component]: unknown component `Helth`; did you mean `Health`?",
            "archetypes/spawners/camp.json:5:20: note[broken-dependency]: not fully checked: it depends on `enemies/goblin`, which has errors; its own values were checked as far as they go",
            "archetypes/spawners/camp.json:6:34: error[unknown-field]: unknown field `valeu` in component `Speed`; did you mean `value`?",
        ],
    );
}

#[test]
fn fixing_the_parent_clears_the_notes_and_checks_the_rest() {
    let (_dir, _, mut library) = load_partial(&[BROKEN_GOBLIN, ARCHER]);
    let update = library.set_source(
        "enemies/goblin.json",
        Some(r#"{ "components": { "Health": { "current": 12, "max": 12 } } }"#),
    );
    // The archer's own problems remain; the note is gone, and the archer is now checked in
    // full (its merged `Health` is complete, so only the unknown field is left).
    let messages: Vec<String> = update
        .errors
        .iter()
        .map(|d| {
            d.to_string()
                .replace(&_dir.root().display().to_string(), "archetypes")
        })
        .collect();
    assert_messages(
        &messages,
        &[
            "archetypes/enemies/archer.json:4:25: error[invalid-component]: invalid value for `Speed.value`: invalid type: string \"fast\", expected f32",
            "archetypes/enemies/archer.json:5:17: error[unknown-field]: unknown field `maxx` in component `Health`; did you mean `max`?",
        ],
    );
}
