//! Operators: `$append`, `$prepend`, `$union`, `$remove` on inherited lists; `$add`, `$mul` on
//! inherited numbers. Applied when archetypes resolve, so spawning, provenance, hot reload and
//! scenes see plain values.

use archetype_engine::{apply_update, load_scene, save_scene, FieldPath, SceneEncoding};
use archetype_engine::{SceneLoadOptions, SceneSaveOptions};
use hecs::World;
use serde_json::json;

use crate::support::{
    assert_messages, load, load_errors, spawn, Attack, Attacks, Health, Loot, Speed, Stats,
};

const BASE: (&str, &str) = (
    "base.json",
    r#"{
  "components": {
    "Health": { "current": 10, "max": 10 },
    "Loot": { "items": ["apple", "bone", "coin"], "gold": 7 },
    "Speed": { "value": 2 }
  }
}"#,
);

fn child(components: &str) -> (&'static str, String) {
    (
        "child.json",
        format!("{{\n  \"extends\": \"base\",\n  \"components\": {components}\n}}"),
    )
}

fn loot(components: &str) -> Loot {
    let (name, text) = child(components);
    spawn(&[BASE, (name, &text)], "child").get::<Loot>()
}

#[test]
fn list_operators_edit_the_inherited_list() {
    let cases = [
        (
            r#"{ "$append": ["dart", "apple"] }"#,
            vec!["apple", "bone", "coin", "dart", "apple"],
        ),
        (
            r#"{ "$prepend": ["dart"] }"#,
            vec!["dart", "apple", "bone", "coin"],
        ),
        (
            r#"{ "$union": ["dart", "apple"] }"#,
            vec!["apple", "bone", "coin", "dart"],
        ),
        (r#"{ "$remove": ["bone"] }"#, vec!["apple", "coin"]),
    ];
    for (operator, items) in cases {
        let loot = loot(&format!(r#"{{ "Loot": {{ "items": {operator} }} }}"#));
        assert_eq!(loot.items, items, "{operator}");
        assert_eq!(loot.gold, 7, "other fields merge as usual");
    }
}

#[test]
fn several_operators_in_one_object_apply_in_a_fixed_order() {
    // Additions, then removals; `$add`, then `$mul`.
    let loot = loot(
        r#"{ "Loot": { "items": { "$remove": ["apple", "dart"], "$union": ["dart", "egg"] }, "gold": { "$mul": 2, "$add": 1 } } }"#,
    );
    assert_eq!(
        (loot.items, loot.gold),
        (
            vec!["bone".to_string(), "coin".to_string(), "egg".to_string()],
            16
        )
    );
}

#[test]
fn number_operators_change_the_inherited_number() {
    let (name, text) = child(
        r#"{ "Health": { "max": { "$mul": 1.5 }, "current": { "$add": -2.5 } }, "Speed": { "value": { "$add": 1 } } }"#,
    );
    let spawned = spawn(&[BASE, (name, &text)], "child");
    assert_eq!(
        spawned.get::<Health>(),
        Health {
            current: 7.5,
            max: 15.0
        }
    );
    assert_eq!(spawned.get::<Speed>().value, 3.0);
    // An integer field stays an integer: rounded to the nearest.
    assert_eq!(loot(r#"{ "Loot": { "gold": { "$mul": 1.5 } } }"#).gold, 11);
}

#[test]
fn an_operator_in_a_trait_applies_to_what_the_trait_is_combined_with() {
    let files = [
        BASE,
        (
            "traits/rich.json",
            r#"{ "abstract": true, "components": { "Loot": { "gold": { "$mul": 10 }, "items": { "$append": ["crown"] } } } }"#,
        ),
        ("king.json", r#"{ "extends": ["base", "traits/rich"] }"#),
        ("emperor.json", r#"{ "extends": ["king", "traits/rich"] }"#),
    ];
    let king = spawn(&files, "king").get::<Loot>();
    assert_eq!((king.gold, king.items.len()), (70, 4));
    let emperor = spawn(&files, "emperor").get::<Loot>();
    assert_eq!(
        (emperor.gold, emperor.items),
        (
            700,
            vec!["apple", "bone", "coin", "crown", "crown"]
                .into_iter()
                .map(String::from)
                .collect()
        )
    );
}

#[test]
fn an_operator_with_nothing_to_work_on_settles_in_a_concrete_archetype() {
    let (_dir, library) = load(&[(
        "goblin.json",
        r#"{ "components": { "Loot": { "items": { "$append": ["apple"] }, "gold": { "$add": 3 } } } }"#,
    )]);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    let loot: Loot = (*world.get::<&Loot>(goblin).unwrap()).clone();
    assert_eq!((loot.items, loot.gold), (vec!["apple".to_string()], 3));

    // `$mul` and `$remove` work on the type's default: `Stats` has one for every field, and
    // for itself (hp 10, speed 1.0).
    let stats = stats(
        r#"{ "seed": 1 }"#,
        r#"{ "hp": { "$mul": 3 }, "speed": { "$mul": 2.5, "$round": "floor" } }"#,
    );
    assert_eq!((stats.hp, stats.speed, stats.seed), (30, 2.0, 1));
    let (_dir, library) = load(&[(
        "goblin.json",
        r#"{ "components": { "Stats": { "$mul": 2 } } }"#,
    )]);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    assert_eq!(world.get::<&Stats>(goblin).unwrap().hp, 20);

    // Where the type gives no default, a warning; the component is left out. Every other
    // archetype's problem (a broken file) is no reason for it.
    let (dir, messages, library) = crate::support::load_partial(&[
        (
            "goblin.json",
            "{\n  \"components\": {\n    \"Loot\": { \"items\": [], \"gold\": { \"$mul\": 2 } },\n    \"Health\": { \"$mul\": 2 }\n  }\n}",
        ),
        ("broken.json", "{"),
    ]);
    drop(dir);
    assert_messages(
        &messages,
        &[
            "archetypes/broken.json:1:1: error[syntax]: unexpected end of file while parsing an object",
            "archetypes/goblin.json:4:15: warning[unused-operator]: `$mul` has nothing to scale: nothing this archetype is built on sets `Health`, and its type gives no default number there, so it is left out",
        ],
    );
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "goblin").unwrap();
    assert_eq!(world.get::<&Loot>(goblin).unwrap().gold, 0);
    assert!(world.get::<&Health>(goblin).is_err());
}

#[test]
fn operators_written_wrong_are_errors_with_the_fix() {
    let (name, text) = child(
        r##"{
    "Loot": { "items": { "$apend": ["x"] }, "gold": { "$add": "3" } },
    "Health": { "max": { "$mul": 2, "min": 1 }, "current": { "$add": 1, "$union": [1] } },
    "Links": { "target": "#", "all": [{ "$append": ["#"] }] }
  }"##,
    );
    assert_messages(
        &load_errors(&[BASE, (name, &text)]),
        &[
            "archetypes/child.json:4:26: error[invalid-operator]: unknown operator `$apend`; keys starting with `$` are operators: `$append`, `$prepend`, `$union`, `$remove`, `$update`, `$upsert`, `$add`, `$mul`, `$replace`, `$range`, `$pick`, `$round`, `$key`; did you mean `$append`?",
            "archetypes/child.json:4:63: error[invalid-operator]: `$add` takes a number, found a string",
            "archetypes/child.json:5:26: error[invalid-operator]: `$mul` cannot be beside `min`: an object of operators stands for the value they change",
            "archetypes/child.json:5:73: error[invalid-operator]: `$union` and `$add` cannot change one value: one works on lists, the other on numbers",
            "archetypes/child.json:6:41: error[invalid-operator]: `$append` inside a list has nothing to work on (lists are replaced whole); write it in place of the list",
        ],
    );
}

#[test]
fn an_operator_on_the_wrong_kind_of_value_is_an_error_where_it_is_written() {
    let (name, text) =
        child(r#"{ "Loot": { "gold": { "$append": [1] }, "items": { "$mul": 2 } } }"#);
    assert_messages(
        &load_errors(&[BASE, (name, &text)]),
        &[
            "archetypes/child.json:3:37: error[invalid-operator]: `$append` needs a list to work on, but the value it applies to is a number",
            "archetypes/child.json:3:66: error[invalid-operator]: `$mul` needs a number (or an object of numbers) to work on, but the value it applies to is an array",
        ],
    );
}

#[test]
fn a_traits_operator_that_does_not_fit_is_an_error_at_its_name_in_extends() {
    let errors = load_errors(&[
        BASE,
        (
            "traits/listy.json",
            r#"{ "abstract": true, "components": { "Speed": { "value": { "$append": [1] } } } }"#,
        ),
        ("odd.json", r#"{ "extends": ["base", "traits/listy"] }"#),
    ]);
    assert_messages(
        &errors,
        &["archetypes/odd.json:1:23: error[invalid-operator]: `Speed.value` of `traits/listy`: `$append` needs a list to work on, but the value it applies to is a number"],
    );
}

#[test]
fn provenance_names_the_file_with_the_operator() {
    let (name, text) = child(r#"{ "Loot": { "gold": { "$mul": 2 } } }"#);
    let (dir, library) = load(&[BASE, (name, &text)]);
    let (file, position) = library
        .provenance("child", "", "Loot", &FieldPath::root().key("gold"))
        .unwrap();
    assert_eq!(file, dir.root().join("child.json"));
    let position = position.unwrap();
    assert_eq!((position.line, position.column), (3, 37));
    let (file, _) = library
        .provenance("child", "", "Loot", &FieldPath::root().key("items"))
        .unwrap();
    assert_eq!(file, dir.root().join("base.json"));
}

#[test]
fn hot_reload_and_scenes_see_the_results_as_values() {
    let (name, text) = child(r#"{ "Loot": { "gold": { "$mul": 2 } } }"#);
    let (_dir, mut library) = load(&[BASE, (name, &text)]);
    let mut world = World::new();
    let entity = library.spawn(&mut world, "child").unwrap();
    // The parent's number changes: the child's result follows on live instances.
    let update = library.set_source(
        "base.json",
        Some(r#"{ "components": { "Loot": { "items": [], "gold": 20 } } }"#),
    );
    let report = apply_update(&mut world, &library, &update);
    assert!(report.errors().is_empty(), "{report}");
    assert_eq!(world.get::<&Loot>(entity).unwrap().gold, 40);
    // A scene stores the instance's difference from the result: none, so no components.
    let bytes = save_scene(
        &world,
        &library,
        SceneEncoding::Json,
        &SceneSaveOptions::default(),
    )
    .unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\"components\": {}"), "{text}");
    let mut loaded = World::new();
    let options = SceneLoadOptions::default();
    let scene = load_scene(&bytes, None, &mut loaded, &library, &options).unwrap();
    let gold = loaded.get::<&Loot>(scene.entities()[0]).unwrap().gold;
    assert_eq!(gold, 40);
}

#[test]
fn spawn_time_overrides_take_operators() {
    let (_dir, library) = load(&[BASE]);
    let mut world = World::new();
    let overrides = json!({ "Loot": { "items": { "$remove": ["coin"] }, "gold": { "$add": 1 } } });
    let entity = library.spawn_with(&mut world, "base", &overrides).unwrap();
    let loot: Loot = (*world.get::<&Loot>(entity).unwrap()).clone();
    assert_eq!((loot.items.len(), loot.gold), (2, 8));
}

/// `$union` and `$remove` find the values they compare through a hash: a long list edited by
/// long operands costs their lengths, not their product (a minute and more, compared pair by
/// pair).
#[test]
fn long_lists_are_united_and_removed_from_in_time() {
    const ITEMS: usize = 60_000;
    let quoted = |range: std::ops::Range<usize>| {
        let names: Vec<String> = range.map(|i| format!("\"i{i}\"")).collect();
        names.join(", ")
    };
    let base = format!(
        r#"{{ "components": {{ "Loot": {{ "items": [{}], "gold": 1 }} }} }}"#,
        quoted(0..ITEMS)
    );
    // Half of the union is there already; the removal takes every other one of the first half.
    let removed: Vec<String> = (0..ITEMS / 2)
        .step_by(2)
        .map(|i| format!("\"i{i}\""))
        .collect();
    let child = format!(
        r#"{{ "extends": "base", "components": {{ "Loot": {{ "items": {{ "$union": [{}], "$remove": [{}] }} }} }} }}"#,
        quoted(ITEMS / 2..ITEMS + ITEMS / 2),
        removed.join(", ")
    );
    let items = crate::support::within(60, move || {
        spawn(&[("base.json", &base), ("child.json", &child)], "child")
            .get::<Loot>()
            .items
    });
    let expected: Vec<String> = (0..ITEMS + ITEMS / 2)
        .filter(|&i| i >= ITEMS / 2 || i % 2 == 1)
        .map(|i| format!("i{i}"))
        .collect();
    assert_eq!(items, expected);
}

/// The `Stats` a child of a base holding `base` gets from `written`.
fn stats(base: &str, written: &str) -> Stats {
    let base = format!(r#"{{ "components": {{ "Stats": {base} }} }}"#);
    let child = format!(r#"{{ "extends": "base", "components": {{ "Stats": {written} }} }}"#);
    spawn(&[("base.json", &base), ("child.json", &child)], "child").get::<Stats>()
}

#[test]
fn scaling_a_whole_object_keeps_each_whole_number_field_whole() {
    let base = r#"{ "hp": 7, "speed": 3, "seed": 18446744073709551615 }"#;
    let scaled = stats(base, r#"{ "$mul": 0.5 }"#);
    // 3.5 rounds to 4; the float halves; u64::MAX / 2 = …807.5 rounds up, worked exactly.
    assert_eq!(
        scaled,
        Stats {
            hp: 4,
            speed: 1.5,
            seed: 9_223_372_036_854_775_808,
        }
    );
    let truncated = stats(base, r#"{ "$mul": 0.5, "$round": "trunc" }"#);
    assert_eq!(
        (truncated.hp, truncated.speed, truncated.seed),
        (3, 1.0, u64::MAX / 2)
    );
}

#[test]
fn round_says_how_a_result_is_made_whole() {
    // Each mode on 2.5, -2.5 and 0.5 (65 × 0.3 is 19.5 as written, not 19.4999…).
    let cases = [
        ("nearest", [3, -3, 1, 20]),
        ("even", [2, -2, 0, 20]),
        ("trunc", [2, -2, 0, 19]),
        ("floor", [2, -3, 0, 19]),
        ("ceil", [3, -2, 1, 20]),
    ];
    for (mode, expected) in cases {
        let got = [(5, 0.5), (-5, 0.5), (1, 0.5), (65, 0.3)].map(|(hp, factor)| {
            let written = format!(r#"{{ "hp": {{ "$mul": {factor}, "$round": "{mode}" }} }}"#);
            stats(&format!(r#"{{ "hp": {hp} }}"#), &written).hp
        });
        assert_eq!(got, expected, "{mode}");
    }
    // Without `$round` an integer field rounds to the nearest, halves away from zero.
    assert_eq!(
        stats(r#"{ "hp": -5 }"#, r#"{ "hp": { "$mul": 0.5 } }"#).hp,
        -3
    );
    // On a field of floats `$round` makes the result whole too.
    let speed = stats(
        r#"{ "speed": 2 }"#,
        r#"{ "speed": { "$add": 0.7, "$round": "floor" } }"#,
    );
    assert_eq!(speed.speed, 2.0);
}

#[test]
fn whole_numbers_are_exact_across_the_u64_range() {
    let max = r#"{ "seed": 18446744073709551615 }"#;
    for written in [
        r#"{ "$add": 0 }"#,
        r#"{ "$mul": 1 }"#,
        r#"{ "$add": -1, "$mul": 1 }"#,
    ] {
        let expected = match written.contains("-1") {
            true => u64::MAX - 1,
            false => u64::MAX,
        };
        let seed = stats(max, &format!(r#"{{ "seed": {written} }}"#)).seed;
        assert_eq!(seed, expected, "{written}");
    }
    let (name, text) = (
        "child.json",
        "{\n  \"extends\": \"base\",\n  \"components\": { \"Stats\": { \"seed\": { \"$add\": 1 } } }\n}",
    );
    assert_messages(
        &load_errors(&[("base.json", &format!(r#"{{ "components": {{ "Stats": {max} }} }}"#)), (name, text)]),
        &["archetypes/child.json:3:38: error[invalid-operator]: `$add` gives a number out of range"],
    );
}

#[test]
fn a_result_its_field_refuses_is_an_error_at_the_operator() {
    let (name, text) = child(r#"{ "Loot": { "$mul": -1 } }"#);
    assert_messages(
        &load_errors(&[BASE, (name, &text)]),
        &["archetypes/child.json:3:27: error[invalid-component]: invalid value for `Loot.gold`: invalid value: integer `-7`, expected u32"],
    );
}

#[test]
fn rounding_written_wrong_is_an_error_with_the_fix() {
    let (name, text) = child(
        r#"{
    "Stats": { "hp": { "$mul": 0.5, "$round": "trunk" }, "speed": { "$round": "floor" } },
    "Loot": { "items": { "$append": ["x"], "$round": "ceil" }, "gold": { "$add": 1, "$round": 0 } }
  }"#,
    );
    let base = r#"{ "components": { "Stats": {}, "Loot": { "items": [] } } }"#;
    assert_messages(
        &load_errors(&[("base.json", base), (name, &text)]),
        &[
            "archetypes/child.json:4:47: error[invalid-operator]: unknown rounding `trunk`; `$round` takes `nearest`, `even`, `trunc`, `floor` or `ceil`; did you mean `trunc`?",
            "archetypes/child.json:4:69: error[invalid-operator]: `$round` says how the result of `$add` or `$mul` is made a whole number; write it beside one of them (`{\"$mul\": 0.5, \"$round\": \"trunc\"}`)",
            "archetypes/child.json:5:44: error[invalid-operator]: `$round` says how the result of `$add` or `$mul` is made a whole number; write it beside one of them (`{\"$mul\": 0.5, \"$round\": \"trunc\"}`)",
            "archetypes/child.json:5:95: error[invalid-operator]: `$round` takes a string: `nearest`, `even`, `trunc`, `floor` or `ceil`; found a number",
        ],
    );
}

#[test]
fn replace_puts_its_value_in_place_of_the_inherited_one_instead_of_merging() {
    let base = r#"{ "hp": 7, "speed": 3, "seed": 9 }"#;
    let merged = stats(base, r#"{ "hp": 1 }"#);
    assert_eq!((merged.hp, merged.speed, merged.seed), (1, 3.0, 9));
    // The fields it does not give take the type's defaults, not the inherited values.
    let replaced = stats(base, r#"{ "$replace": { "hp": 1 } }"#);
    assert_eq!((replaced.hp, replaced.speed, replaced.seed), (1, 1.0, 0));

    // In a trait it waits for the value it replaces; files built on the trait change the value
    // it gives, by merging or by operators.
    let files = [
        (
            "base.json",
            r#"{ "components": { "Stats": { "hp": 7, "speed": 3, "seed": 9 } } }"#,
        ),
        (
            "traits/reset.json",
            r#"{ "abstract": true, "components": { "Stats": { "$replace": { "hp": 2 } } } }"#,
        ),
        (
            "traits/fast_reset.json",
            r#"{ "abstract": true, "extends": "traits/reset", "components": { "Stats": { "speed": 5, "hp": { "$add": 1 } } } }"#,
        ),
        (
            "knight.json",
            r#"{ "extends": ["base", "traits/fast_reset"] }"#,
        ),
        ("squire.json", r#"{ "extends": "traits/reset" }"#),
    ];
    let knight = spawn(&files, "knight").get::<Stats>();
    assert_eq!((knight.hp, knight.speed, knight.seed), (3, 5.0, 0));
    // With nothing to replace, it is its value.
    let squire = spawn(&files, "squire").get::<Stats>();
    assert_eq!((squire.hp, squire.speed, squire.seed), (2, 1.0, 0));
}

#[test]
fn replace_written_wrong_is_an_error_where_it_is() {
    let (name, text) = child(
        r#"{
    "Stats": { "$replace": { "hp": 1 }, "$add": 1 },
    "Loot": { "$replace": null },
    "Health": { "$replace": { "max": { "$ad": 1 }, "current": 1 } }
  }"#,
    );
    assert_messages(
        &load_errors(&[BASE, (name, &text)]),
        &[
            "archetypes/child.json:4:16: error[invalid-operator]: `$replace` stands for the whole value, so it cannot be beside `$add`",
            "archetypes/child.json:5:27: error[invalid-operator]: `$replace` takes the value that replaces the inherited one, found null; to remove the inherited value, write `null` in place of the object",
            // The value it gives is checked as any other: without the broken operator's member,
            // `Health` lacks `max`.
            "archetypes/child.json:6:15: error[invalid-component]: invalid value for `Health`: missing field `max`",
            "archetypes/child.json:6:40: error[invalid-operator]: unknown operator `$ad`; keys starting with `$` are operators: `$append`, `$prepend`, `$union`, `$remove`, `$update`, `$upsert`, `$add`, `$mul`, `$replace`, `$range`, `$pick`, `$round`, `$key`; did you mean `$add`?",
        ],
    );
}

#[test]
fn a_null_or_a_remove_that_changes_nothing_is_a_warning_with_the_nearest_item() {
    let (name, text) = child(
        r#"{
    "Armor": null,
    "Loot": { "silver": null, "items": { "$remove": ["bone", "coins", { "id": "x" }, "bone"] } }
  }"#,
    );
    let dir = crate::support::ArchetypeDir::new(&[BASE, (name, &text)]);
    let library = dir.load().expect("warnings only");
    assert_messages(
        &dir.messages(&library),
        &[
            "archetypes/child.json:4:14: warning[changes-nothing]: `null` removes `Armor`, but nothing this archetype is built on gives it: this changes nothing",
            "archetypes/child.json:5:25: warning[changes-nothing]: `null` removes `Loot.silver`, but nothing this archetype is built on gives it: this changes nothing",
            "archetypes/child.json:5:62: warning[changes-nothing]: `$remove` removes nothing here: the list it applies to holds no `\"coins\"`; did you mean `coin`?",
            "archetypes/child.json:5:71: warning[changes-nothing]: `$remove` removes nothing here: the list it applies to holds no `{\"id\":\"x\"}`",
        ],
    );
    // Warnings: the child loads, with what the rest of its file says.
    let mut world = World::new();
    let child = library.spawn(&mut world, "child").unwrap();
    assert_eq!(world.get::<&Loot>(child).unwrap().items, ["apple", "coin"]);
}

#[test]
fn an_archetype_under_a_broken_parent_gets_no_warning_about_what_it_inherits() {
    let (dir, messages, _library) = crate::support::load_partial(&[
        ("base.json", r#"{ "components": { "Loot": { "items": [] }"#),
        (
            "child.json",
            r#"{ "extends": "base", "components": { "Loot": { "gold": { "$mul": 2 }, "items": { "$remove": ["x"] } }, "Armor": null } }"#,
        ),
    ]);
    drop(dir);
    assert_messages(
        &messages,
        &[
            "archetypes/base.json:1:41: error[syntax]: unexpected end of file while parsing an object",
            "archetypes/child.json:1:14: note[broken-dependency]: not fully checked: it depends on `base`, which has errors; its own values were checked as far as they go",
        ],
    );
}

#[test]
fn a_value_the_same_as_inherited_is_noted_only_when_asked() {
    let (name, text) = child(
        r#"{
    "Health": { "current": 10, "max": 12 },
    "Speed": { "value": 2.0 },
    "Loot": { "items": ["apple", "bone", "coin"] }
  }"#,
    );
    let dir = crate::support::ArchetypeDir::new(&[BASE, (name, &text)]);
    let library = dir.load().unwrap();
    assert_messages(&dir.messages(&library), &[]);
    let mut options = archetype_engine::LoadOptions::default();
    options.same_as_inherited = true;
    let library = dir.load_with(options).unwrap();
    assert_messages(
        &dir.messages(&library),
        &[
            "archetypes/child.json:4:28: note[same-as-inherited]: `Health.current` is already `10` in what this archetype is built on: this changes nothing",
            // Numbers compare by value (2.0 is 2), lists item by item.
            "archetypes/child.json:5:25: note[same-as-inherited]: `Speed.value` is already `2.0` in what this archetype is built on: this changes nothing",
            "archetypes/child.json:6:24: note[same-as-inherited]: `Loot.items` is already `[\"apple\",\"bone\",\"coin\"]` in what this archetype is built on: this changes nothing",
        ],
    );
}

const ATTACKS: (&str, &str) = (
    "base.json",
    r#"{
  "components": {
    "Attacks": [
      { "name": "bite", "damage": 3, "cooldown": 1.5 },
      { "name": "claw", "damage": 2 }
    ]
  }
}"#,
);

/// The attacks a child of [`ATTACKS`] gets from writing `written` as its `Attacks`.
fn attacks(written: &str) -> Vec<(String, i32, f32)> {
    let child = format!(r#"{{ "extends": "base", "components": {{ "Attacks": {written} }} }}"#);
    let attacks = spawn(&[ATTACKS, ("child.json", &child)], "child").get::<Attacks>();
    (attacks.0.into_iter())
        .map(
            |Attack {
                 name,
                 damage,
                 cooldown,
             }| (name, damage, cooldown),
        )
        .collect()
}

#[test]
fn keyed_operators_change_add_replace_and_remove_records_by_their_key() {
    let named = |list: &[(&str, i32, f32)]| -> Vec<(String, i32, f32)> {
        list.iter()
            .map(|(n, d, c)| (n.to_string(), *d, *c))
            .collect()
    };
    // `$update` merges into the record with the key: its operators apply to that record.
    assert_eq!(
        attacks(r#"{ "$key": "name", "$update": [{ "name": "bite", "damage": { "$add": 2 } }] }"#),
        named(&[("bite", 5, 1.5), ("claw", 2, 0.0)])
    );
    // `$upsert` replaces the record with the key whole, or appends one.
    assert_eq!(
        attacks(
            r#"{ "$key": "name", "$upsert": [{ "name": "bite", "damage": 9 }, { "name": "gore", "damage": 4 }] }"#
        ),
        named(&[("bite", 9, 0.0), ("claw", 2, 0.0), ("gore", 4, 0.0)])
    );
    // `$remove` takes keys; removals first, then updates, then upserts.
    assert_eq!(
        attacks(
            r#"{ "$key": "name", "$upsert": [{ "name": "claw", "damage": 7 }], "$remove": ["claw"], "$update": [{ "name": "bite", "cooldown": { "$mul": 2 } }] }"#
        ),
        named(&[("bite", 3, 3.0), ("claw", 7, 0.0)])
    );
}

#[test]
fn a_keyed_operation_that_matches_nothing_is_a_warning_with_the_nearest_key() {
    let (name, text) = (
        "child.json",
        "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Attacks\": { \"$key\": \"name\", \"$update\": [{ \"name\": \"bitee\", \"damage\": 1 }], \"$remove\": [\"clow\"] }\n  }\n}",
    );
    let dir = crate::support::ArchetypeDir::new(&[ATTACKS, (name, text)]);
    let library = dir.load().expect("warnings only");
    assert_messages(
        &dir.messages(&library),
        &[
            "archetypes/child.json:4:56: warning[changes-nothing]: `$update` changes nothing here: the list holds no record whose `name` is `\"bitee\"`; did you mean `bite`?",
            "archetypes/child.json:4:93: warning[changes-nothing]: `$remove` changes nothing here: the list holds no record whose `name` is `\"clow\"`; did you mean `claw`?",
        ],
    );
}

#[test]
fn keyed_operators_written_wrong_are_errors_with_the_fix() {
    let (name, text) = child(
        r#"{
    "Attacks": { "$update": [{ "name": "bite" }] },
    "Loot": { "items": { "$key": "name", "$append": ["x"] } },
    "Health": { "$key": "name", "$upsert": [{ "damage": 1 }] },
    "Speed": { "value": { "$key": 3, "$remove": [] } }
  }"#,
    );
    assert_messages(
        &load_errors(&[BASE, (name, &text)]),
        &[
            "archetypes/child.json:4:18: error[invalid-operator]: `$update` needs `$key` beside it, naming the field that names each record (`{\"$key\": \"id\", \"$update\": [..]}`)",
            "archetypes/child.json:5:42: error[invalid-operator]: `$append` cannot be beside `$key`: to add a record by its key, use `$upsert`",
            "archetypes/child.json:6:44: error[invalid-operator]: `$upsert` item 0 has no `name` (its `$key`) naming the record it is for",
            "archetypes/child.json:7:35: error[invalid-operator]: `$key` takes the name of the field that names each record (`\"id\"`), found a number",
        ],
    );
}

/// A file's no-ops are its own, even when an archetype one of its children names is resolved
/// in the middle of reading it.
#[test]
fn a_no_op_is_reported_in_its_own_file_when_a_child_archetype_is_resolved_meanwhile() {
    let dir = crate::support::ArchetypeDir::new(&[
        ("a_camp.json", "{\n  \"components\": {\n    \"Armor\": null\n  },\n  \"children\": {\n    \"guard\": { \"archetype\": \"z_guard\" }\n  }\n}"),
        ("z_guard.json", r#"{ "components": { "Health": { "current": 1, "max": 1 } } }"#),
    ]);
    let library = dir.load().expect("warnings only");
    assert_messages(
        &dir.messages(&library),
        &["archetypes/a_camp.json:3:14: warning[changes-nothing]: `null` removes `Armor`, but nothing this archetype is built on gives it: this changes nothing"],
    );
}

/// A programmer gives a field its rounding once (`ComponentOptions::rounding`); a `$round`
/// written beside an operator still decides for that operator.
#[test]
fn a_field_rounds_as_its_component_says_unless_the_file_says_otherwise() {
    use archetype_engine::{ArchetypeLibrary, ComponentOptions, ComponentRegistry, Rounding};

    let mut registry = ComponentRegistry::new();
    let truncating = ComponentOptions::new()
        .rounding("hp", Rounding::Trunc)
        .rounding("speed", Rounding::Floor);
    registry.register_with::<Stats>(truncating).unwrap();
    let dir = crate::support::ArchetypeDir::new(&[
        (
            "base.json",
            r#"{ "components": { "Stats": { "hp": 130, "speed": 2.5, "seed": 7 } } }"#,
        ),
        (
            "slow.json",
            r#"{ "extends": "base", "components": { "Stats": { "hp": { "$mul": 0.25 }, "speed": { "$mul": 0.5 } } } }"#,
        ),
        (
            "round.json",
            r#"{ "extends": "base", "components": { "Stats": { "hp": { "$mul": 0.25, "$round": "nearest" }, "seed": { "$mul": 1.5 } } } }"#,
        ),
    ]);
    let library = ArchetypeLibrary::load(dir.root(), registry).unwrap();
    let mut world = World::new();
    let mut stats = |name: &str| -> Stats {
        let entity = library.spawn(&mut world, name).unwrap();
        let stats: Stats = (*world.get::<&Stats>(entity).unwrap()).clone();
        stats
    };
    // 130 × 0.25 = 32.5: truncated to 32 by the component's word; 2.5 × 0.5 = 1.25, floored
    // (a float field given a rounding is made whole too).
    let slow = stats("slow");
    assert_eq!((slow.hp, slow.speed), (32, 1.0));
    // The file's `$round` wins; a field the options do not name rounds as its type does.
    let round = stats("round");
    assert_eq!((round.hp, round.seed), (33, 11));
}
