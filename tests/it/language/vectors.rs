//! Vectors written as arrays or as objects of named axes: glam's vectors and quaternions
//! (`x y z w`), and axes a component names itself (`r g b a`). An object changes only the
//! axes it names of an inherited vector, so a child moves an archetype up without restating
//! where it stands.

use archetype_engine::Transform;
use glam::{IVec2, Quat, Vec3, Vec4};

use crate::support::{assert_messages, load_errors, spawn, Sprite};

const BASE: (&str, &str) = (
    "base.json",
    r#"{
  "components": {
    "Transform": { "translation": [1, 2, 3], "scale": { "x": 2, "y": 2, "z": 2 } },
    "Sprite": { "tint": [1, 1, 1, 1], "size": [16, 24] }
  }
}"#,
);

fn child(components: &str) -> (&'static str, String) {
    (
        "child.json",
        format!("{{\n  \"extends\": \"base\",\n  \"components\": {components}\n}}"),
    )
}

fn spawned_child(components: &str) -> (Transform, Sprite) {
    let (name, text) = child(components);
    let spawned = spawn(&[BASE, (name, &text)], "child");
    (spawned.get::<Transform>(), spawned.get::<Sprite>())
}

#[test]
fn a_vector_reads_from_an_array_or_an_object_of_its_axes() {
    let spawned = spawn(
        &[(
            "statue.json",
            r#"{ "components": {
                "Transform": { "translation": { "x": 1, "y": 2, "z": 3 }, "rotation": { "w": 1, "x": 0, "y": 0, "z": 0 } },
                "Sprite": { "tint": { "r": 1, "g": 0.5, "b": 0, "a": 1 }, "size": { "x": 8, "y": 8 } }
            } }"#,
        )],
        "statue",
    );
    let transform = spawned.get::<Transform>();
    assert_eq!(transform.translation, Vec3::new(1.0, 2.0, 3.0));
    assert_eq!(transform.rotation, Quat::IDENTITY);
    let sprite = spawned.get::<Sprite>();
    assert_eq!(sprite.tint, Vec4::new(1.0, 0.5, 0.0, 1.0));
    assert_eq!(sprite.size, IVec2::new(8, 8));
}

#[test]
fn an_object_of_axes_changes_only_the_axes_it_names() {
    let (transform, sprite) = spawned_child(
        r#"{ "Transform": { "translation": { "z": 5 }, "scale": { "y": 3 } }, "Sprite": { "tint": { "a": 0.5 } } }"#,
    );
    // Inherited as an array (translation) or as an object (scale): merged alike.
    assert_eq!(transform.translation, Vec3::new(1.0, 2.0, 5.0));
    assert_eq!(transform.scale, Vec3::new(2.0, 3.0, 2.0));
    assert_eq!(sprite.tint, Vec4::new(1.0, 1.0, 1.0, 0.5));
    assert_eq!(sprite.size, IVec2::new(16, 24));

    // An array replaces the whole vector, whichever form it replaces.
    let (transform, _) =
        spawned_child(r#"{ "Transform": { "translation": [0, 0, 1], "scale": [1, 1, 1] } }"#);
    assert_eq!(transform.translation, Vec3::new(0.0, 0.0, 1.0));
    assert_eq!(transform.scale, Vec3::ONE);
}

#[test]
fn operators_apply_to_single_axes_and_keep_whole_numbers_whole() {
    let (transform, sprite) = spawned_child(
        r#"{ "Transform": { "translation": { "y": { "$add": 0.5 } } }, "Sprite": { "size": { "x": { "$mul": 1.5 }, "y": { "$mul": 0.3, "$round": "trunc" } } } }"#,
    );
    assert_eq!(transform.translation, Vec3::new(1.0, 2.5, 3.0));
    // `IVec2`'s axes are whole numbers: 16 × 1.5 = 24, 24 × 0.3 = 7.2 truncated to 7.
    assert_eq!(sprite.size, IVec2::new(24, 7));
}

#[test]
fn an_axis_the_vector_does_not_have_is_an_error_at_the_key() {
    let (name, text) = child(
        "{\n    \"Transform\": { \"translation\": { \"q\": 5 } },\n    \"Sprite\": { \"tint\": { \"A\": 0.5 } }\n  }",
    );
    assert_messages(
        &load_errors(&[BASE, (name, &text)]),
        &[
            "archetypes/child.json:4:37: error[invalid-component]: invalid value for `Transform.translation`: unknown axis `q`; expected x, y, z",
            "archetypes/child.json:5:27: error[invalid-component]: invalid value for `Sprite.tint`: unknown axis `A`; expected r, g, b, a; did you mean `a`?",
        ],
    );
}

#[test]
fn axes_left_out_with_nothing_inherited_take_the_type_default_or_are_an_error() {
    // `Transform` defaults every field (translation 0, scale 1): the axes left out are those.
    let spawned = spawn(
        &[(
            "statue.json",
            r#"{ "components": { "Transform": { "translation": { "x": 1, "z": 3 }, "scale": { "y": 2 } } } }"#,
        )],
        "statue",
    );
    let transform = spawned.get::<Transform>();
    assert_eq!(transform.translation, Vec3::new(1.0, 0.0, 3.0));
    assert_eq!(transform.scale, Vec3::new(1.0, 2.0, 1.0));
    // An operator on one axis works on the default's axis.
    let spawned = spawn(
        &[(
            "statue.json",
            r#"{ "components": { "Transform": { "scale": { "y": { "$mul": 3 } } } } }"#,
        )],
        "statue",
    );
    assert_eq!(spawned.get::<Transform>().scale, Vec3::new(1.0, 3.0, 1.0));
    // `Sprite.tint` has no default: every axis is needed.
    let errors = load_errors(&[(
        "statue.json",
        "{\n  \"components\": {\n    \"Sprite\": { \"tint\": { \"r\": 1, \"g\": 1, \"a\": 1 } }\n  }\n}",
    )]);
    assert_messages(
        &errors,
        &["archetypes/statue.json:3:25: error[invalid-component]: invalid value for `Sprite.tint`: missing axis `b`; expected r, g, b, a (an object of axes leaves out only axes an inherited vector or the type's default gives)"],
    );
}

#[test]
fn an_object_of_axes_in_a_trait_changes_the_vector_it_is_combined_with() {
    let files = [
        BASE,
        (
            "traits/raised.json",
            r#"{ "abstract": true, "components": { "Transform": { "translation": { "y": { "$add": 10 } } } } }"#,
        ),
        ("tower.json", r#"{ "extends": ["base", "traits/raised"] }"#),
    ];
    let transform = spawn(&files, "tower").get::<Transform>();
    assert_eq!(transform.translation, Vec3::new(1.0, 12.0, 3.0));
}
