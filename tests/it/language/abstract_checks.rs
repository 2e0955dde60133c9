//! Abstract archetypes are checked as far as they go: a partial value whose present fields have
//! the wrong type or an unknown name is an error in the abstract file, even before any concrete
//! archetype inherits it. Fields it leaves out are its descendants' to give.

use crate::support::{assert_messages, load, load_errors};

/// Loads one abstract file `base.json` with `components`; every diagnostic.
fn abstract_base(components: &str) -> Vec<String> {
    let text = format!("{{\n  \"abstract\": true,\n  \"components\": {components}\n}}");
    load_errors(&[("base.json", &text)])
}

#[test]
fn a_field_of_the_wrong_type_is_an_error_in_the_abstract_file() {
    assert_messages(
        &abstract_base(r#"{ "Speed": { "value": "fast" } }"#),
        &["archetypes/base.json:3:39: error[invalid-component]: invalid value for `Speed.value`: invalid type: string \"fast\", expected f32"],
    );
}

#[test]
fn an_unknown_field_is_an_error_with_a_suggestion() {
    assert_messages(
        &abstract_base(r#"{ "Health": { "currnt": 3 } }"#),
        &["archetypes/base.json:3:31: error[unknown-field]: unknown field `currnt` in component `Health`; did you mean `current`?"],
    );
}

#[test]
fn nested_fields_and_enum_variants_are_checked_where_they_are() {
    assert_messages(
        &abstract_base(r#"{ "Ai": { "mode": "Chse", "stats": { "vision": "far" } } }"#),
        &["archetypes/base.json:3:35: error[invalid-component]: invalid value for `Ai.mode`: unknown variant `Chse`, expected one of `Wander`, `Chase`, `Guard`; did you mean `Chase`?"],
    );
    assert_messages(
        &abstract_base(r#"{ "Ai": { "stats": { "vision": "far" } } }"#),
        &["archetypes/base.json:3:48: error[invalid-component]: invalid value for `Ai.stats.vision`: invalid type: string \"far\", expected f32"],
    );
}

#[test]
fn children_of_an_abstract_archetype_are_checked_too() {
    let errors = load_errors(&[(
        "base.json",
        r#"{
  "abstract": true,
  "children": { "sensor": { "components": { "Speed": { "value": [1] } } } }
}"#,
    )]);
    assert_messages(
        &errors,
        &["archetypes/base.json:3:65: error[invalid-component]: invalid value for `Speed.value`: invalid type: sequence, expected f32"],
    );
}

#[test]
fn what_an_abstract_archetype_leaves_out_is_not_an_error() {
    // Missing fields, and references to children a descendant adds.
    let (_dir, library) = load(&[
        (
            "base.json",
            r##"{ "abstract": true, "components": { "Health": { "current": 3 }, "Links": { "target": "#sensor" }, "Ai": { "stats": { "vision": 2 } } } }"##,
        ),
        (
            "turret.json",
            r#"{ "extends": "base", "components": { "Health": { "max": 3 }, "Ai": { "mode": "Guard", "stats": { "aggression": 1 } } }, "children": { "sensor": {} } }"#,
        ),
    ]);
    let mut world = hecs::World::new();
    library.spawn(&mut world, "turret").unwrap();
}

#[test]
fn a_malformed_reference_is_an_error_even_in_an_abstract_archetype() {
    assert_messages(
        &abstract_base(r#"{ "Links": { "target": "sensor" } }"#),
        &["archetypes/base.json:3:40: error[invalid-component]: invalid value for `Links.target`: `sensor` is not an entity reference; in archetype files write `#` for the archetype's root or `#child` (`#child/grandchild`) for one of its children"],
    );
}

#[test]
fn a_concrete_archetype_on_a_broken_abstract_one_is_held_back_with_a_note() {
    let errors = load_errors(&[
        (
            "base.json",
            r#"{ "abstract": true, "components": { "Speed": { "value": "fast" } } }"#,
        ),
        ("goblin.json", r#"{ "extends": "base" }"#),
    ]);
    assert_messages(
        &errors,
        &[
            "archetypes/base.json:1:57: error[invalid-component]: invalid value for `Speed.value`: invalid type: string \"fast\", expected f32",
            "archetypes/goblin.json:1:14: note[broken-dependency]: not fully checked: it depends on `base`, which has errors; its own values were checked as far as they go",
        ],
    );
}
