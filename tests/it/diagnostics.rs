//! What a designer is told when files are wrong: every problem of a load, each as
//! `file:line:column: severity[code]: message; did you mean ...?`.
//!
//! In the order of a load: the file's text, its keys, components, values, fields, `extends`,
//! cycles, names and paths, children and references, the format version, the limits.

use archetype_engine::{
    ArchetypeLibrary, Diagnostic, DiagnosticCode, Limits, LoadOptions, Position, Severity,
};

use crate::support::{
    assert_messages, get, load_errors, load_errors_with, load_partial, ArchetypeDir, Health, Loot,
};

/// Every diagnostic of loading `files`, which must fail.
#[track_caller]
fn check(files: &[(&str, &str)], expected: &[&str]) {
    assert_messages(&load_errors(files), expected);
}

/// Every diagnostic of loading one file `goblin.json`.
#[track_caller]
fn check_goblin(text: &str, expected: &str) {
    check(&[("goblin.json", text)], &[expected]);
}

const BASE: (&str, &str) = (
    "base/creature.json",
    r#"{ "abstract": true, "components": { "Health": { "current": 1, "max": 1 } } }"#,
);

// 1. Invalid JSON syntax.

#[test]
fn invalid_json_is_reported_where_the_parser_stopped() {
    check_goblin(
        r#"{
  "components": {
    "Health": { "current": 1 "max": 1 }
  }
}"#,
        "archetypes/goblin.json:3:29: error[syntax]: expected `,` or `}` after this value",
    );
    check_goblin(
        r#"{
  "components": {
    "Health": { "current": 1, "max": 1, }
  }
}"#,
        "archetypes/goblin.json:3:39: error[syntax]: trailing comma; remove the `,` after the last member",
    );
    check_goblin(
        "{\n  \"components\": {\n",
        "archetypes/goblin.json:3:1: error[syntax]: unexpected end of file while parsing an object",
    );
    check_goblin(
        "",
        "archetypes/goblin.json:1:1: error[syntax]: empty file; expected a JSON object",
    );
    check_goblin(
        r#"{ "components": { "Speed": { "value": NaN } } }"#,
        "archetypes/goblin.json:1:39: error[syntax]: `NaN` is not valid JSON; write a number or null",
    );
}

#[test]
fn a_key_written_twice_is_an_error() {
    check_goblin(
        r#"{
  "components": {
    "Health": { "current": 1, "max": 1 },
    "Health": { "current": 2, "max": 2 }
  }
}"#,
        "archetypes/goblin.json:4:5: error[duplicate-key]: duplicate key `Health` (the first one is on line 3)",
    );
}

#[test]
fn a_file_that_is_not_utf8_is_an_error() {
    let dir = ArchetypeDir::new(&[]);
    dir.write(
        "goblin.json",
        b"{\n  \"components\": { \"Name\": \"Gr\xFCkk\" }\n}",
    );
    assert_messages(
        &dir.errors(),
        &["archetypes/goblin.json:2:30: error[encoding]: invalid UTF-8 (byte 0xFC); archetype and scene files must be UTF-8"],
    );
}

#[test]
fn positions_ignore_a_byte_order_mark_and_count_characters() {
    let dir = ArchetypeDir::new(&[]);
    dir.write(
        "goblin.json",
        "\u{feff}{ \"components\": { \"Name\": \"Grükk\", \"Helth\": {} } }".as_bytes(),
    );
    assert_messages(
        &dir.errors(),
        &["archetypes/goblin.json:1:36: error[unknown-component]: unknown component `Helth`; did you mean `Health`?"],
    );
}

// 2. The top level is not an object, or has a key the format does not define.

#[test]
fn the_top_level_must_be_an_object() {
    check_goblin(
        r#"["Health"]"#,
        "archetypes/goblin.json:1:1: error[not-an-object]: expected a JSON object at the top level of an archetype file, found an array",
    );
    check_goblin(
        "\n  \"goblin\"",
        "archetypes/goblin.json:2:3: error[not-an-object]: expected a JSON object at the top level of an archetype file, found a string",
    );
}

#[test]
fn an_unknown_top_level_key_is_an_error_with_a_suggestion() {
    check(
        &[
            BASE,
            (
                "goblin.json",
                r#"{
  "extend": "base/creature",
  "component": {},
  "tags": ["green"]
}"#,
            ),
        ],
        &[
            "archetypes/goblin.json:2:3: error[unknown-key]: unknown key `extend` in an archetype file; expected one of `$schema`, `format`, `abstract`, `formerly`, `extends`, `components`, `children`; did you mean `extends`?",
            "archetypes/goblin.json:3:3: error[unknown-key]: unknown key `component` in an archetype file; expected one of `$schema`, `format`, `abstract`, `formerly`, `extends`, `components`, `children`; did you mean `components`?",
            "archetypes/goblin.json:4:3: error[unknown-key]: unknown key `tags` in an archetype file; expected one of `$schema`, `format`, `abstract`, `formerly`, `extends`, `components`, `children`",
        ],
    );
}

#[test]
fn an_unknown_key_in_a_child_entry_is_an_error_with_a_suggestion() {
    check_goblin(
        r#"{
  "children": {
    "bow": { "archetyp": "bow" }
  }
}"#,
        "archetypes/goblin.json:3:14: error[unknown-key]: unknown key `archetyp` in a child entry; expected one of `archetype`, `formerly`, `components`, `children`; did you mean `archetype`?",
    );
}

#[test]
fn a_format_key_of_the_wrong_kind_is_an_error() {
    check(
        &[(
            "goblin.json",
            r#"{
  "abstract": "yes",
  "extends": 3,
  "components": [],
  "children": { "bow": 1 }
}"#,
        )],
        &[
            "archetypes/goblin.json:2:15: error[malformed]: `abstract` must be true or false, found a string",
            "archetypes/goblin.json:3:14: error[malformed]: `extends` must be an archetype name or a list of names, found a number",
            "archetypes/goblin.json:4:17: error[malformed]: `components` must be an object of component name to value, found an array",
            "archetypes/goblin.json:5:24: error[malformed]: child `bow` must be an object (or null to remove it), found a number",
        ],
    );
    check(
        &[
            BASE,
            (
                "goblin.json",
                r#"{ "extends": ["base/creature", 7, "base/creature"] }"#,
            ),
        ],
        &[
            "archetypes/goblin.json:1:32: error[malformed]: `extends` entries must be archetype names, found a number",
            "archetypes/goblin.json:1:35: error[malformed]: `base/creature` is listed twice in `extends`",
        ],
    );
}

// 3. Unknown component names.

#[test]
fn an_unknown_component_is_an_error_with_a_suggestion() {
    check(
        &[(
            "goblin.json",
            r#"{
  "components": {
    "Helth": { "current": 1, "max": 1 },
    "health": { "current": 1, "max": 1 },
    "Mana": { "points": 3 }
  },
  "children": {
    "bow": { "components": { "Sped": { "value": 1 } } }
  }
}"#,
        )],
        &[
            "archetypes/goblin.json:3:5: error[unknown-component]: unknown component `Helth`; did you mean `Health`?",
            "archetypes/goblin.json:4:5: error[unknown-component]: unknown component `health`; did you mean `Health`?",
            "archetypes/goblin.json:5:5: error[unknown-component]: unknown component `Mana`",
            "archetypes/goblin.json:8:30: error[unknown-component]: unknown component `Sped`; did you mean `Speed`?",
        ],
    );
}

#[test]
fn a_component_may_not_be_written_under_two_of_its_names() {
    let messages = load_errors(&[(
        "goblin.json",
        r#"{ "components": { "Speed": { "value": 1 }, "MoveSpeed": { "value": 2 } } }"#,
    )]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("archetypes/goblin.json:1:")
            && messages[0].contains("error[malformed]: ")
            && messages[0].ends_with(
                " both set component `Speed` (old names still load as the current one); keep one"
            ),
        "{}",
        messages[0]
    );
}

#[test]
fn a_component_written_under_its_name_and_an_old_name_is_an_error() {
    check_goblin(
        r#"{
  "components": {
    "Speed": { "value": 1 },
    "MoveSpeed": { "value": 2 }
  }
}"#,
        "archetypes/goblin.json:4:5: error[malformed]: `Speed` and `MoveSpeed` both set component `Speed` (old names still load as the current one); keep one",
    );
}

// 4. Component values of the wrong shape or type, or missing a field.

#[test]
fn a_value_of_the_wrong_type_names_the_field() {
    check(
        &[(
            "goblin.json",
            r#"{
  "components": {
    "Health": { "current": "full", "max": 10 },
    "Ai": { "mode": "Chase", "stats": { "aggression": 1, "vision": "far" } },
    "Transform": { "translation": [1, 2] }
  }
}"#,
        )],
        &[
            r#"archetypes/goblin.json:3:28: error[invalid-component]: invalid value for `Health.current`: invalid type: string "full", expected f32"#,
            r#"archetypes/goblin.json:4:68: error[invalid-component]: invalid value for `Ai.stats.vision`: invalid type: string "far", expected f32"#,
            "archetypes/goblin.json:5:35: error[invalid-component]: invalid value for `Transform.translation`: invalid length 2, expected a sequence of 3 f32 values",
        ],
    );
}

#[test]
fn a_bad_array_element_is_reported_at_the_element() {
    check_goblin(
        r#"{
  "components": {
    "Loot": { "items": ["ear", 3] }
  }
}"#,
        "archetypes/goblin.json:3:32: error[invalid-component]: invalid value for `Loot.items[1]`: invalid type: integer `3`, expected a string",
    );
}

#[test]
fn a_missing_field_is_reported_at_the_component() {
    check_goblin(
        r#"{
  "components": {
    "Health": { "current": 10 }
  }
}"#,
        "archetypes/goblin.json:3:15: error[invalid-component]: invalid value for `Health`: missing field `max`",
    );
}

#[test]
fn a_value_of_the_wrong_shape_is_reported_at_the_value() {
    check_goblin(
        r#"{
  "components": {
    "Health": 10
  }
}"#,
        "archetypes/goblin.json:3:15: error[invalid-component]: invalid value for `Health`: invalid type: integer `10`, expected struct Health",
    );
}

#[test]
fn an_unknown_enum_variant_gets_a_suggestion() {
    check(
        &[(
            "goblin.json",
            r#"{
  "components": {
    "Faction": "Hostle",
    "Ai": { "mode": "chase", "stats": { "aggression": 1, "vision": 1 } }
  }
}"#,
        )],
        &[
            "archetypes/goblin.json:3:16: error[invalid-component]: invalid value for `Faction`: unknown variant `Hostle`, expected `Hostile` or `Friendly`; did you mean `Hostile`?",
            "archetypes/goblin.json:4:21: error[invalid-component]: invalid value for `Ai.mode`: unknown variant `chase`, expected one of `Wander`, `Chase`, `Guard`; did you mean `Chase`?",
        ],
    );
}

// 5. Unknown fields inside a component.

const TYPO: &str = r#"{
  "components": {
    "Loot": { "items": [], "glod": 3 }
  }
}"#;

/// The message of the one diagnostic for `TYPO`, after `file:line:column: `.
const TYPO_MESSAGE: &str =
    "[unknown-field]: unknown field `glod` in component `Loot`; did you mean `gold`?";

#[test]
fn an_unknown_field_is_an_error_with_a_suggestion() {
    check_goblin(
        TYPO,
        "archetypes/goblin.json:3:28: error[unknown-field]: unknown field `glod` in component `Loot`; did you mean `gold`?",
    );
}

#[test]
fn an_unknown_field_is_an_error_by_default() {
    let messages = load_errors(&[("goblin.json", TYPO)]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("archetypes/goblin.json:3:")
            && messages[0].ends_with(&format!("error{TYPO_MESSAGE}")),
        "{}",
        messages[0]
    );
}

#[test]
fn an_unknown_field_is_a_warning_when_the_library_says_so() {
    let dir = ArchetypeDir::new(&[("goblin.json", TYPO)]);
    let mut options = LoadOptions::default();
    options.unknown_fields = Severity::Warning;
    let library = dir.load_with(options).unwrap();
    let messages = dir.messages(&library);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("archetypes/goblin.json:3:")
            && messages[0].ends_with(&format!("warning{TYPO_MESSAGE}")),
        "{}",
        messages[0]
    );
    assert_eq!(library.error_count(), 0);
    let mut world = hecs::World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    assert_eq!(get::<Loot>(&world, goblin).gold, 0);
}

#[test]
fn an_unknown_nested_field_names_its_path() {
    check_goblin(
        r#"{
  "components": {
    "Ai": { "mode": "Chase", "stats": { "aggression": 1, "vision": 2, "visoin": 3 } }
  }
}"#,
        "archetypes/goblin.json:3:71: error[unknown-field]: unknown field `stats.visoin` in component `Ai`; did you mean `vision`?",
    );
}

// 6. `extends` naming a missing archetype.

#[test]
fn extending_a_missing_archetype_is_an_error_with_a_suggestion() {
    check(
        &[
            BASE,
            ("goblin.json", r#"{ "extends": "base/creatur" }"#),
            (
                "orc.json",
                r#"{
  "extends": [
    "base/creature",
    "traits/armored"
  ]
}"#,
            ),
        ],
        &[
            "archetypes/goblin.json:1:14: error[unknown-archetype]: archetype `base/creatur` does not exist; did you mean `base/creature`?",
            "archetypes/orc.json:4:5: error[unknown-archetype]: archetype `traits/armored` does not exist",
        ],
    );
}

// 7. Inheritance cycles.

/// Every diagnostic of loading `files` (which must fail), each followed by its related
/// places, indented (`  file:line:col: label`); and the partial library.
#[track_caller]
fn load_with_related(files: &[(&str, &str)]) -> (Vec<String>, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(files);
    let (_, library) = dir.load_partial_with(LoadOptions::default());
    (with_related(&dir, library.diagnostics()), library)
}

/// `diagnostics` one per line, each followed by its related places, indented, tidied.
fn with_related(dir: &ArchetypeDir, diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut lines = Vec::new();
    for diagnostic in diagnostics {
        lines.push(dir.tidy(&diagnostic.to_string()));
        for related in &diagnostic.related {
            lines.push(format!("  {}", dir.tidy(&related.to_string())));
        }
    }
    lines
}

#[test]
fn an_inheritance_cycle_is_reported_once_with_every_member_labelled() {
    let (messages, library) = load_with_related(&[
        ("a.json", r#"{ "extends": "b" }"#),
        ("b.json", "{\n  \"extends\": [\"c\"]\n}"),
        ("c.json", r#"{ "extends": "a" }"#),
        ("me.json", r#"{ "extends": "me" }"#),
    ]);
    assert_messages(
        &messages,
        &[
            "archetypes/a.json:1:14: error[inheritance-cycle]: inheritance cycle: a -> b -> c -> a; see also archetypes/b.json:2:15, archetypes/c.json:1:14",
            "  archetypes/a.json:1:14: `a` extends `b` here",
            "  archetypes/b.json:2:15: `b` extends `c` here",
            "  archetypes/c.json:1:14: `c` extends `a` here",
            "archetypes/me.json:1:14: error[inheritance-cycle]: inheritance cycle: me -> me",
            "  archetypes/me.json:1:14: `me` extends `me` here",
        ],
    );
    // One error per cycle; every member is held back, and says why.
    assert_eq!(library.error_count(), 2);
    for (name, cycle) in [
        ("a", "a -> b -> c -> a"),
        ("b", "a -> b -> c -> a"),
        ("me", "me -> me"),
    ] {
        let error = library.spawn(&mut hecs::World::new(), name).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("archetype `{name}` cannot be spawned: it is part of an inheritance cycle ({cycle})")
        );
    }
    // Its place and its related places are typed: file, line and column, span.
    let cycle = &library.diagnostics()[0];
    assert_eq!(cycle.code, DiagnosticCode::InheritanceCycle);
    assert_eq!(cycle.archetype.as_deref(), Some("a"));
    assert_eq!(cycle.own_label(), Some("`a` extends `b` here"));
    let b = &cycle.related[1];
    assert!(b.file.ends_with("b.json"), "{}", b.file.display());
    assert_eq!(
        b.position,
        Some(Position {
            line: 2,
            column: 15
        })
    );
    assert_eq!(b.span, Some(16..19));
}

#[test]
fn a_two_member_cycle_is_placed_in_its_first_member_by_name_whichever_is_met_first() {
    // `a` is resolved first and meets the cycle at `z`: the cycle is still `m`'s.
    let (messages, _) = load_with_related(&[
        ("a.json", r#"{ "extends": "z" }"#),
        ("m.json", r#"{ "extends": "z" }"#),
        ("z.json", r#"{ "extends": ["m"] }"#),
    ]);
    assert_messages(
        &messages,
        &[
            "archetypes/a.json:1:14: note[broken-dependency]: not fully checked: it depends on `z`, which has errors; its own values were checked as far as they go",
            "archetypes/m.json:1:14: error[inheritance-cycle]: inheritance cycle: m -> z -> m; see also archetypes/z.json:1:15",
            "  archetypes/m.json:1:14: `m` extends `z` here",
            "  archetypes/z.json:1:15: `z` extends `m` here",
        ],
    );
}

#[test]
fn an_archetype_containing_itself_as_a_child_is_a_cycle() {
    let (messages, _) = load_with_related(&[(
        "nest.json",
        r#"{ "children": { "egg": { "archetype": "nest" } } }"#,
    )]);
    assert_messages(
        &messages,
        &[
            "archetypes/nest.json:1:39: error[inheritance-cycle]: inheritance cycle: nest -> nest",
            "  archetypes/nest.json:1:39: `nest`'s child `egg` is an instance of `nest` here",
        ],
    );
}

#[test]
fn a_cycle_through_a_childs_archetype_labels_the_child() {
    let (messages, library) = load_with_related(&[
        (
            "rider.json",
            r#"{ "children": { "mount": { "children": { "pet": { "archetype": "wolf" } } } } }"#,
        ),
        ("wolf.json", r#"{ "extends": "animal" }"#),
        (
            "animal.json",
            r#"{ "children": { "owner": { "archetype": "rider" } } }"#,
        ),
    ]);
    assert_messages(
        &messages,
        &[
            "archetypes/animal.json:1:41: error[inheritance-cycle]: inheritance cycle: animal -> rider -> wolf -> animal; see also archetypes/rider.json:1:64, archetypes/wolf.json:1:14",
            "  archetypes/animal.json:1:41: `animal`'s child `owner` is an instance of `rider` here",
            "  archetypes/rider.json:1:64: `rider`'s child `mount/pet` is an instance of `wolf` here",
            "  archetypes/wolf.json:1:14: `wolf` extends `animal` here",
        ],
    );
    assert_eq!(library.error_count(), 1);
}

#[test]
fn an_archetype_in_two_cycles_is_in_both_reports() {
    let (messages, library) = load_with_related(&[
        ("a.json", r#"{ "extends": "b" }"#),
        ("b.json", r#"{ "extends": ["a", "c"] }"#),
        ("c.json", r#"{ "extends": "b" }"#),
    ]);
    assert_messages(
        &messages,
        &[
            "archetypes/a.json:1:14: error[inheritance-cycle]: inheritance cycle: a -> b -> a; see also archetypes/b.json:1:15",
            "  archetypes/a.json:1:14: `a` extends `b` here",
            "  archetypes/b.json:1:15: `b` extends `a` here",
            "archetypes/b.json:1:20: error[inheritance-cycle]: inheritance cycle: b -> c -> b; see also archetypes/c.json:1:14",
            "  archetypes/b.json:1:20: `b` extends `c` here",
            "  archetypes/c.json:1:14: `c` extends `b` here",
        ],
    );
    assert_eq!(library.error_count(), 2);
}

#[test]
fn a_reload_touching_a_member_reports_the_cycle_again() {
    let dir = ArchetypeDir::new(&[
        ("a.json", r#"{ "extends": "b" }"#),
        (
            "b.json",
            r#"{ "components": { "Health": { "current": 1, "max": 1 } } }"#,
        ),
    ]);
    let mut library = dir.load().unwrap();
    let cycle = [
        "archetypes/a.json:1:14: error[inheritance-cycle]: inheritance cycle: a -> b -> a; see also archetypes/b.json:1:15",
        "  archetypes/a.json:1:14: `a` extends `b` here",
        "  archetypes/b.json:1:15: `b` extends `a` here",
    ];
    // The edit closing the cycle is `b`'s; the error is `a`'s, and the update has it.
    let update = library.set_source("b.json", Some(r#"{ "extends": ["a"] }"#));
    assert_messages(&with_related(&dir, &update.errors), &cycle);
    assert_messages(&with_related(&dir, library.diagnostics()), &cycle);
    // Touching either member again reports it again, once.
    let update = library.set_source("b.json", Some(r#"{ "extends": ["a"] } "#));
    assert_messages(&with_related(&dir, &update.errors), &cycle);
    let update = library.set_source("a.json", Some(r#"{ "extends": "b" } "#));
    assert_messages(&with_related(&dir, &update.errors), &cycle);
    assert_eq!(library.error_count(), 1);
    // Both keep their last good version; breaking the cycle clears the error.
    assert!(library.spawn(&mut hecs::World::new(), "a").is_ok());
    let update = library.set_source("b.json", Some("{}"));
    assert_messages(&with_related(&dir, &update.errors), &[]);
    assert_eq!(library.error_count(), 0);
}

// 8. Names that differ only in case.

#[test]
fn files_whose_names_differ_only_in_case_are_errors() {
    check(
        &[("enemies/Goblin.json", "{}"), ("enemies/goblin.json", "{}")],
        &[
            "archetypes/enemies/Goblin.json: error[case-conflict]: archetype `enemies/Goblin` differs from `enemies/goblin` only in letter case; file names must stay distinct on case-insensitive file systems",
            "archetypes/enemies/goblin.json: error[case-conflict]: archetype `enemies/goblin` differs from `enemies/Goblin` only in letter case; file names must stay distinct on case-insensitive file systems",
        ],
    );
}

// 9. Names that escape the root or use characters outside the allowed set.

const NAME_RULE: &str = "names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`";

#[test]
fn a_name_must_stay_under_the_root_and_use_portable_characters() {
    let expected = [
        format!("archetypes/goblin.json:3:5: error[invalid-name]: archetype name `../outside` leaves the archetypes root; {NAME_RULE}"),
        format!("archetypes/goblin.json:4:5: error[invalid-name]: archetype name `/etc/creature` is an absolute path; {NAME_RULE}"),
        format!("archetypes/goblin.json:5:5: error[invalid-name]: archetype name `base/big creature` contains a space; {NAME_RULE}"),
        format!("archetypes/goblin.json:6:5: error[invalid-name]: archetype name `base\\creature` uses `\\`; {NAME_RULE}; did you mean `base/creature`?"),
        format!("archetypes/goblin.json:7:5: error[invalid-name]: archetype name `base/creature.json` includes the `.json` extension; {NAME_RULE}; did you mean `base/creature`?"),
    ];
    check(
        &[
            BASE,
            (
                "goblin.json",
                r#"{
  "extends": [
    "../outside",
    "/etc/creature",
    "base/big creature",
    "base\\creature",
    "base/creature.json"
  ]
}"#,
            ),
        ],
        &expected.iter().map(String::as_str).collect::<Vec<_>>(),
    );
}

#[test]
fn a_file_name_must_give_a_valid_archetype_name() {
    check(
        &[("enemies/big goblin.json", "{}")],
        &[&format!("archetypes/enemies/big goblin.json: error[invalid-name]: file `enemies/big goblin.json` does not give a valid archetype name: archetype name `enemies/big goblin` contains a space; {NAME_RULE}")],
    );
}

#[test]
fn a_child_name_and_a_child_archetype_must_be_valid() {
    check(
        &[(
            "goblin.json",
            r#"{
  "children": {
    "left hand": {},
    "bow": { "archetype": "../bow" }
  }
}"#,
        )],
        &[
            "archetypes/goblin.json:3:5: error[invalid-name]: child name `left hand` must be made of ASCII letters, digits, `_` and `-`",
            &format!("archetypes/goblin.json:4:27: error[invalid-name]: archetype name `../bow` leaves the archetypes root; {NAME_RULE}"),
        ],
    );
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_may_not_lead_out_of_the_root() {
    let outside = ArchetypeDir::new(&[("goblin.json", "{}")]);
    let dir = ArchetypeDir::new(&[("inside.json", "{}")]);
    std::os::unix::fs::symlink(
        outside.root().join("goblin.json"),
        dir.root().join("goblin.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        dir.root().join("inside.json"),
        dir.root().join("alias.json"),
    )
    .unwrap();
    let (messages, library) = dir.load_partial_with(LoadOptions::default());
    assert_messages(
        &messages,
        &["archetypes/goblin.json: error[invalid-name]: symbolic link points outside the archetypes directory; archetypes must live under the root"],
    );
    assert_eq!(library.names().collect::<Vec<_>>(), ["alias", "inside"]);
}

// 10. Children naming a missing archetype, references to missing children.

#[test]
fn a_child_naming_a_missing_archetype_is_an_error_with_a_suggestion() {
    check(
        &[
            ("parts/bow.json", r#"{ "components": { "Name": "Bow" } }"#),
            (
                "goblin.json",
                r#"{
  "children": {
    "bow": { "archetype": "parts/bwo" }
  }
}"#,
            ),
        ],
        &["archetypes/goblin.json:3:27: error[unknown-archetype]: archetype `parts/bwo` does not exist; did you mean `parts/bow`?"],
    );
}

#[test]
fn a_reference_to_a_missing_child_is_an_error_with_a_suggestion() {
    check(
        &[(
            "goblin.json",
            r##"{
  "components": {
    "Links": { "target": "#snesor" }
  },
  "children": {
    "sensor": {
      "components": { "Links": { "target": "#.." } }
    },
    "hand": {
      "components": { "Links": { "target": "sensor" } }
    }
  }
}"##,
        )],
        &[
            "archetypes/goblin.json:3:26: error[unknown-child]: invalid value for `Links.target`: entity reference `#snesor` names no child of this archetype; did you mean `#sensor`?",
            "archetypes/goblin.json:7:44: error[unknown-child]: invalid value for `Links.target`: `#..` goes above the archetype's root",
            "archetypes/goblin.json:10:44: error[unknown-child]: invalid value for `Links.target`: `sensor` is not an entity reference; in archetype files write `#` for the archetype's root or `#child` (`#child/grandchild`) for one of its children; did you mean `#sensor`?",
        ],
    );
}

#[test]
fn a_bad_reference_in_an_array_is_reported_at_the_element() {
    check_goblin(
        r##"{
  "components": {
    "Links": { "target": "#", "all": ["#", "#snesor"] }
  },
  "children": { "sensor": {} }
}"##,
        "archetypes/goblin.json:3:44: error[unknown-child]: invalid value for `Links.all[1]`: entity reference `#snesor` names no child of this archetype; did you mean `#sensor`?",
    );
}

// 11. A newer format version.

#[test]
fn a_newer_format_version_is_rejected() {
    // Nothing else in the file is checked: a newer version may use syntax this one lacks.
    check_goblin(
        r#"{
  "format": 2,
  "components": { "Helth": {} },
  "whatever": true
}"#,
        "archetypes/goblin.json:2:13: error[unsupported-format]: format version 2 is newer than this library reads (up to 1); update archetype-engine",
    );
    check_goblin(
        r#"{ "format": "1" }"#,
        "archetypes/goblin.json:1:13: error[malformed]: `format` must be a positive integer (the current version is 1)",
    );
}

// 12. Files that are too large or too deep.

fn limits(change: impl FnOnce(&mut Limits)) -> LoadOptions {
    let mut options = LoadOptions::default();
    change(&mut options.limits);
    options
}

#[test]
fn a_file_over_the_size_limit_is_rejected() {
    let options = limits(|limits| limits.max_file_bytes = 64);
    let big = format!(r#"{{ "components": {{ "Name": "{}" }} }}"#, "x".repeat(50));
    assert_eq!(big.len(), 82);
    assert_messages(
        &load_errors_with(options, &[("big.json", &big), ("small.json", "{}")]),
        &["archetypes/big.json: error[too-large]: file is 82 bytes, over the limit of 64 bytes"],
    );
}

#[test]
fn the_default_size_limit_is_a_few_mebibytes() {
    let max = Limits::default().max_file_bytes;
    assert!((1 << 20..=16 << 20).contains(&max), "{max}");
    let huge = format!(
        r#"{{ "components": {{ "Name": "{}" }} }}"#,
        "x".repeat(max as usize)
    );
    assert_messages(
        &load_errors(&[("huge.json", &huge)]),
        &[&format!(
            "archetypes/huge.json: error[too-large]: file is {} bytes, over the limit of {max} bytes",
            huge.len()
        )],
    );
}

#[test]
fn a_file_nested_deeper_than_the_limit_is_rejected() {
    let options = limits(|limits| limits.max_depth = 4);
    assert_messages(
        &load_errors_with(
            options,
            &[(
                "deep.json",
                r#"{
  "components": {
    "Loot": { "items": [["a"]] }
  }
}"#,
            )],
        ),
        &["archetypes/deep.json:3:25: error[too-deep]: nesting deeper than 4 levels"],
    );
}

#[test]
fn the_default_depth_limit_stops_absurd_nesting() {
    let deep = format!(
        r#"{{ "components": {{ "Loot": {{ "items": {}{} }} }} }}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    // The 65th level: the 62nd `[` after `"items": ` at column 38.
    assert_messages(
        &load_errors(&[("deep.json", &deep)]),
        &["archetypes/deep.json:1:99: error[too-deep]: nesting deeper than 64 levels"],
    );
}

#[test]
fn children_nested_deeper_than_the_limit_are_rejected() {
    let options = limits(|limits| limits.max_children_depth = 2);
    assert_messages(
        &load_errors_with(
            options,
            &[(
                "tree.json",
                r#"{
  "children": {
    "a": { "children": {
      "b": { "children": {
        "c": {}
      } }
    } }
  }
}"#,
            )],
        ),
        &["archetypes/tree.json:4:26: error[too-deep]: children are nested deeper than the limit of 2 levels"],
    );
}

// Reporting.

#[test]
fn every_problem_of_a_load_is_reported_sorted_by_file_and_position() {
    check(
        &[
            ("z.json", r#"{ "components": { "Helth": {} } }"#),
            (
                "m/b.json",
                r#"{
  "components": {
    "Speed": { "value": "fast" },
    "Faction": "Hostle"
  },
  "extend": "a"
}"#,
            ),
            ("a.json", "[]"),
        ],
        &[
            "archetypes/a.json:1:1: error[not-an-object]: expected a JSON object at the top level of an archetype file, found an array",
            r#"archetypes/m/b.json:3:25: error[invalid-component]: invalid value for `Speed.value`: invalid type: string "fast", expected f32"#,
            "archetypes/m/b.json:4:16: error[invalid-component]: invalid value for `Faction`: unknown variant `Hostle`, expected `Hostile` or `Friendly`; did you mean `Hostile`?",
            "archetypes/m/b.json:6:3: error[unknown-key]: unknown key `extend` in an archetype file; expected one of `$schema`, `format`, `abstract`, `formerly`, `extends`, `components`, `children`; did you mean `extends`?",
            "archetypes/z.json:1:19: error[unknown-component]: unknown component `Helth`; did you mean `Health`?",
        ],
    );
}

#[test]
fn a_diagnostic_names_the_archetype_component_and_field() {
    let dir = ArchetypeDir::new(&[(
        "goblin.json",
        r#"{ "components": { "Ai": { "mode": "Chase", "stats": { "aggression": 1, "vision": "far" } } } }"#,
    )]);
    let error = dir.load().unwrap_err();
    let [diagnostic] = error.diagnostics() else {
        panic!("{error}");
    };
    assert_eq!(diagnostic.severity, Severity::Error);
    assert_eq!(diagnostic.code, DiagnosticCode::InvalidComponent);
    assert_eq!(diagnostic.archetype.as_deref(), Some("goblin"));
    assert_eq!(diagnostic.component.as_deref(), Some("Ai"));
    assert_eq!(
        diagnostic
            .field
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("stats.vision")
    );
    assert_eq!(
        diagnostic.file.as_deref(),
        Some(dir.root().join("goblin.json").as_path())
    );
    assert_eq!(
        diagnostic.position,
        Some(Position {
            line: 1,
            column: 82
        })
    );
}

#[test]
fn an_error_in_an_inherited_value_is_reported_in_the_file_that_wrote_it() {
    check(
        &[
            (
                "base.json",
                r#"{
  "abstract": true,
  "components": {
    "Health": { "current": "ten", "max": 10 }
  }
}"#,
            ),
            ("goblin.json", r#"{ "extends": "base" }"#),
            (
                "orc.json",
                r#"{ "extends": "base", "components": { "Health": { "max": 20 } } }"#,
            ),
            (
                "troll.json",
                r#"{ "extends": "base", "components": { "Health": { "current": 5, "max": "lots" } } }"#,
            ),
        ],
        &[
            // The abstract base is checked on its own: the bad `current` is its error, reported
            // once; goblin, orc and troll are held back by it, and troll's own error still shows.
            r#"archetypes/base.json:4:28: error[invalid-component]: invalid value for `Health.current`: invalid type: string "ten", expected f32"#,
            "archetypes/goblin.json:1:14: note[broken-dependency]: not fully checked: it depends on `base`, which has errors; its own values were checked as far as they go",
            "archetypes/orc.json:1:14: note[broken-dependency]: not fully checked: it depends on `base`, which has errors; its own values were checked as far as they go",
            "archetypes/troll.json:1:14: note[broken-dependency]: not fully checked: it depends on `base`, which has errors; its own values were checked as far as they go",
            r#"archetypes/troll.json:1:71: error[invalid-component]: invalid value for `Health.max`: invalid type: string "lots", expected f32"#,
        ],
    );
}

const PARTIAL_BASE: (&str, &str) = (
    "base.json",
    r#"{
  "abstract": true,
  "components": {
    "Health": { "current": 10 }
  }
}"#,
);

#[test]
fn a_field_missing_from_a_partial_value_is_reported_where_the_value_is_written() {
    check(
        &[
            PARTIAL_BASE,
            (
                "orc.json",
                r#"{ "extends": "base", "components": { "Health": { "current": 20 } } }"#,
            ),
            (
                "troll.json",
                r#"{ "extends": "base", "components": { "Health": { "max": 30 } } }"#,
            ),
        ],
        &["archetypes/orc.json:1:48: error[invalid-component]: invalid value for `Health`: missing field `max`"],
    );
}

#[test]
fn a_field_missing_from_an_inherited_value_is_reported_in_the_concrete_archetype() {
    check(
        &[PARTIAL_BASE, ("goblin.json", r#"{ "extends": "base" }"#)],
        &["archetypes/goblin.json:1:14: error[invalid-component]: invalid value for `Health`: missing field `max`"],
    );
}

#[test]
fn an_archetype_extending_a_cycle_is_not_served() {
    let (_dir, messages, library) = load_partial(&[
        ("a.json", r#"{ "extends": "b" }"#),
        ("b.json", r#"{ "extends": "a" }"#),
        ("c.json", r#"{ "extends": "a" }"#),
    ]);
    assert_messages(
        &messages,
        &[
            "archetypes/a.json:1:14: error[inheritance-cycle]: inheritance cycle: a -> b -> a; see also archetypes/b.json:1:14",
            "archetypes/c.json:1:14: note[broken-dependency]: not fully checked: it depends on `a`, which has errors; its own values were checked as far as they go",
        ],
    );
    let error = library
        .spawn(&mut hecs::World::new(), "c")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "archetype `c` cannot be spawned: it depends on `a`, which has errors"
    );
}

#[test]
fn a_load_error_lists_every_problem() {
    let dir = ArchetypeDir::new(&[
        ("a.json", "[]"),
        ("b.json", r#"{ "components": { "Helth": {} } }"#),
    ]);
    let error = dir.load().unwrap_err();
    assert_eq!(
        dir.tidy(&error.to_string()),
        "2 errors loading archetypes from `archetypes`:
archetypes/a.json:1:1: error[not-an-object]: expected a JSON object at the top level of an archetype file, found an array
archetypes/b.json:1:19: error[unknown-component]: unknown component `Helth`; did you mean `Health`?"
    );
}

#[test]
fn a_partial_library_serves_what_does_not_depend_on_broken_files() {
    let (_dir, messages, library) = load_partial(&[
        BASE,
        (
            "broken.json",
            r#"{ "extends": "base/creature", "components": { "Helth": {} } }"#,
        ),
        ("heir.json", r#"{ "extends": "broken" }"#),
        (
            "holder.json",
            r#"{ "children": { "part": { "archetype": "broken" } } }"#,
        ),
        ("fine.json", r#"{ "extends": "base/creature" }"#),
    ]);
    assert_messages(
        &messages,
        &[
            "archetypes/broken.json:1:47: error[unknown-component]: unknown component `Helth`; did you mean `Health`?",
            "archetypes/heir.json:1:14: note[broken-dependency]: not fully checked: it depends on `broken`, which has errors; its own values were checked as far as they go",
            "archetypes/holder.json:1:40: note[broken-dependency]: not fully checked: it depends on `broken`, which has errors; its own values were checked as far as they go",
        ],
    );
    let mut world = hecs::World::new();
    let fine = library.spawn(&mut world, "fine").unwrap();
    assert_eq!(
        get::<Health>(&world, fine),
        Health {
            current: 1.0,
            max: 1.0
        }
    );
    assert!(library.get("fine").is_some());
    for name in ["broken", "heir", "holder"] {
        assert!(library.get(name).is_none(), "{name}");
    }
    let errors: Vec<String> = ["broken", "heir", "holder"]
        .iter()
        .map(|name| library.spawn(&mut world, name).unwrap_err().to_string())
        .collect();
    assert_messages(
        &errors,
        &[
            "archetype `broken` cannot be spawned: its file has errors",
            "archetype `heir` cannot be spawned: it depends on `broken`, which has errors",
            "archetype `holder` cannot be spawned: it depends on `broken`, which has errors",
        ],
    );
    assert_eq!(world.len(), 1, "failed spawns leave nothing behind");
}

/// Big enough that the loader works on several threads (from 256 archetypes it compiles
/// while it resolves): the same problems, in the same order, and spawnable archetypes whose
/// children are numbered as in a small library.
#[test]
fn a_library_loaded_on_several_threads_reports_and_spawns_like_a_small_one() {
    fn unit(i: usize) -> (String, String) {
        let speed = if i.is_multiple_of(100) {
            r#""fast""#
        } else {
            "1.5"
        };
        let text = format!(
            "{{\n  \"extends\": \"base/creature\",\n  \"components\": {{ \"Speed\": {{ \"value\": {speed} }} }},\n  \"children\": {{ \"arm\": {{ \"components\": {{ \"Speed\": {{ \"value\": 2 }} }} }}, \"hand\": {{ \"components\": {{}} }} }}\n}}\n"
        );
        (format!("units/u{i:03}.json"), text)
    }
    let files: Vec<(String, String)> = (0..300).map(unit).collect();
    let mut all: Vec<(&str, &str)> = files.iter().map(|(p, t)| (&**p, &**t)).collect();
    all.push(BASE);
    let dir = ArchetypeDir::new(&all);
    let messages = dir.errors();
    let expected: Vec<String> = [0, 100, 200]
        .iter()
        .map(|i| format!(r#"archetypes/units/u{i:03}.json:3:39: error[invalid-component]: invalid value for `Speed.value`: invalid type: string "fast", expected f32"#))
        .collect();
    assert_eq!(messages, expected);

    // The same broken file alone, loaded on one thread, says the same.
    let small = ArchetypeDir::new(&[(&*files[100].0, &*files[100].1), BASE]);
    assert_eq!(small.errors(), [expected[1].clone()]);

    let library = ArchetypeDir::load(&dir).unwrap_err().into_partial();
    assert_eq!(library.len(), 301);
    let mut world = hecs::World::new();
    for i in [1, 150, 299] {
        let name = format!("units/u{i:03}");
        let root = library.spawn(&mut world, &name).unwrap();
        let id = library.id(&name).unwrap();
        for (path, node) in [("", 0), ("arm", 1), ("hand", 2)] {
            assert_eq!(library.node_id(id, path), Some(node), "{name} {path}");
        }
        assert_eq!(get::<Health>(&world, root).max, 1.0);
    }
    assert_eq!(
        library
            .spawn(&mut hecs::World::new(), "units/u200")
            .unwrap_err()
            .to_string(),
        "archetype `units/u200` cannot be spawned: its file has errors"
    );
}
