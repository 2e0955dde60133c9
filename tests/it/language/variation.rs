//! Spawn-time variation: `{"$range": [low, high]}` and `{"$pick": [..]}` roll per spawned
//! entity from the library's seedable random numbers; scenes keep what was rolled, hot reload
//! leaves it alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use archetype_engine::{apply_update, load_scene, save_scene, SceneEncoding, StableId};
use archetype_engine::{SceneLoadOptions, SceneSaveOptions};
use hecs::{Entity, World};
use serde_json::json;

use crate::support::{assert_messages, load, load_errors, within, Health, Loot};

const GOBLIN: (&str, &str) = (
    "goblin.json",
    r#"{
  "components": {
    "Health": { "current": 10, "max": { "$range": [10, 20] } },
    "Loot": { "items": { "$pick": [["apple"], ["bone", "coin"]] }, "gold": { "$range": [5, 9] } }
  }
}"#,
);

fn rolls(
    library: &archetype_engine::ArchetypeLibrary,
    world: &mut World,
    count: usize,
) -> Vec<(f32, Vec<String>, u32)> {
    (0..count)
        .map(|_| {
            let goblin = library.spawn(world, "goblin").unwrap();
            let (health, loot) = (
                world.get::<&Health>(goblin).unwrap().max,
                (*world.get::<&Loot>(goblin).unwrap()).clone(),
            );
            (health, loot.items, loot.gold)
        })
        .collect()
}

#[test]
fn ranges_and_picks_roll_per_entity_within_their_bounds() {
    let (_dir, library) = load(&[GOBLIN]);
    let mut world = World::new();
    let rolled = rolls(&library, &mut world, 300);
    // `gold` is a whole number (u32): 5 to 9, both ends reached; `max` is an f32 in [10, 20].
    let golds: std::collections::BTreeSet<u32> = rolled.iter().map(|r| r.2).collect();
    assert_eq!(golds.into_iter().collect::<Vec<_>>(), vec![5, 6, 7, 8, 9]);
    assert!(rolled.iter().all(|r| (10.0..=20.0).contains(&r.0)));
    assert!(
        rolled.iter().any(|r| r.0.fract() != 0.0),
        "fractions, not only whole numbers"
    );
    assert!(rolled.iter().any(|r| r.1 == ["apple"]));
    assert!(rolled.iter().any(|r| r.1 == ["bone", "coin"]));
    // spawn_many rolls each entity too.
    let many = library.spawn_many(&mut world, "goblin", 200).unwrap();
    let golds: std::collections::BTreeSet<u32> = many
        .iter()
        .map(|e| world.get::<&Loot>(*e).unwrap().gold)
        .collect();
    assert_eq!(golds.len(), 5);
    // The archetype's own value (what `resolved` and scenes compare against) is untouched.
    let goblin = library.get("goblin").unwrap();
    let resolved = goblin.resolved();
    assert_eq!(
        resolved.components["Loot"]["gold"],
        json!({ "$range": [5, 9] })
    );
}

#[test]
fn the_same_seed_gives_the_same_world() {
    let (_dir, library) = load(&[GOBLIN]);
    let (_other_dir, other) = load(&[GOBLIN]);
    library.set_spawn_seed(1234);
    other.set_spawn_seed(1234);
    let first = rolls(&library, &mut World::new(), 50);
    assert_eq!(rolls(&other, &mut World::new(), 50), first);
    library.set_spawn_seed(1234);
    assert_eq!(rolls(&library, &mut World::new(), 50), first);
    library.set_spawn_seed(99);
    assert_ne!(rolls(&library, &mut World::new(), 50), first);
}

#[test]
fn inheritance_treats_a_variation_as_a_value() {
    let files = [
        GOBLIN,
        // Operators apply to both ends of a range (here 50 to 90), to each value of a pick.
        (
            "rich.json",
            r#"{ "extends": "goblin", "components": { "Loot": { "gold": { "$mul": 10 }, "items": { "$append": ["crown"] } } } }"#,
        ),
        // A plain value replaces a variation, and a variation replaces a plain value.
        (
            "fixed.json",
            r#"{ "extends": "goblin", "components": { "Loot": { "gold": 3 }, "Health": { "current": { "$pick": [1, 2] } } } }"#,
        ),
    ];
    let (_dir, library) = load(&files);
    let mut world = World::new();
    for _ in 0..40 {
        let rich = library.spawn(&mut world, "rich").unwrap();
        let loot = (*world.get::<&Loot>(rich).unwrap()).clone();
        assert!((50..=90).contains(&loot.gold), "{}", loot.gold);
        assert_eq!(loot.items.last().map(String::as_str), Some("crown"));
        let fixed = library.spawn(&mut world, "fixed").unwrap();
        assert_eq!(world.get::<&Loot>(fixed).unwrap().gold, 3);
        let current = world.get::<&Health>(fixed).unwrap().current;
        assert!(current == 1.0 || current == 2.0);
    }
}

#[test]
fn spawn_time_overrides_take_variations() {
    let (_dir, library) = load(&[GOBLIN]);
    let mut world = World::new();
    let overrides = json!({ "Loot": { "gold": { "$range": [100, 101] } } });
    let golds: std::collections::BTreeSet<u32> = (0..40)
        .map(|_| {
            let goblin = library
                .spawn_with(&mut world, "goblin", &overrides)
                .unwrap();
            let loot = (*world.get::<&Loot>(goblin).unwrap()).clone();
            assert!(loot.items == ["apple"] || loot.items == ["bone", "coin"]);
            loot.gold
        })
        .collect();
    assert_eq!(golds.into_iter().collect::<Vec<_>>(), vec![100, 101]);
    let error = library
        .spawn_with(
            &mut world,
            "goblin",
            &json!({ "Loot": { "gold": { "$pick": [1, "lots"] } } }),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid overrides for `goblin`: invalid value for `Loot.gold`: invalid type: string \"lots\", expected u32"
    );
}

#[test]
fn variations_written_wrong_are_errors_where_they_are() {
    let base = (
        "base.json",
        r#"{ "components": { "Health": { "current": 1, "max": 1 }, "Loot": { "items": [] }, "Speed": { "value": 1 } } }"#,
    );
    let text = r#"{
  "extends": "base",
  "components": {
    "Health": { "current": { "$range": [12, 8] }, "max": { "$range": [1, "2"] } },
    "Loot": { "items": { "$pick": [] }, "gold": { "$range": [1, 2], "$add": 1 } },
    "Speed": { "value": { "$rnage": [1, 2] } }
  }
}"#;
    assert_messages(
        &load_errors(&[base, ("goblin.json", text)]),
        &[
            "archetypes/goblin.json:4:40: error[invalid-operator]: `$range` goes from its lowest to its highest number, but 12 is above 8; write `[8, 12]`",
            "archetypes/goblin.json:4:70: error[invalid-operator]: `$range` takes two numbers, the lowest and the highest (`[8, 12]`), found a list of 2 values",
            "archetypes/goblin.json:5:35: error[invalid-operator]: `$pick` takes a list of the values to pick one from, found an empty list",
            "archetypes/goblin.json:5:51: error[invalid-operator]: `$range` stands for the whole value, so it cannot be beside `$add`",
            "archetypes/goblin.json:6:27: error[invalid-operator]: unknown operator `$rnage`; keys starting with `$` are operators: `$append`, `$prepend`, `$union`, `$remove`, `$update`, `$upsert`, `$add`, `$mul`, `$replace`, `$range`, `$pick`, `$round`, `$key`; did you mean `$range`?",
        ],
    );
    // Checked against the component's type when the archetype compiles: every value a pick
    // could roll (an error placed at the value), and a range of whole numbers that holds one.
    let text = r#"{
  "components": {
    "Loot": { "items": { "$pick": [["apple"], "bone"] }, "gold": 1 },
    "Health": { "current": 1, "max": 1 }
  }
}"#;
    let wrong_pick = load_errors(&[("goblin.json", text)]);
    let text = r#"{
  "components": {
    "Loot": { "items": [], "gold": { "$range": [0.2, 0.8] } }
  }
}"#;
    let no_whole_number = load_errors(&[("goblin.json", text)]);
    assert_messages(
        &[wrong_pick, no_whole_number].concat(),
        &[
            "archetypes/goblin.json:3:47: error[invalid-component]: invalid value for `Loot.items`: invalid type: string \"bone\", expected a sequence",
            "archetypes/goblin.json:3:36: error[invalid-operator]: invalid value for `Loot.gold`: `$range` from 0.2 to 0.8 holds no whole number that fits, and `Loot.gold` takes whole numbers",
        ],
    );
}

/// Each goblin's `(max, items, gold)` by stable ID.
fn by_id(world: &World) -> BTreeMap<StableId, (f32, Vec<String>, u32)> {
    let mut query = world.query::<(&StableId, &Health, &Loot)>();
    query
        .iter()
        .map(|(id, health, loot)| (*id, (health.max, loot.items.clone(), loot.gold)))
        .collect()
}

#[test]
fn scenes_keep_the_rolled_values() {
    let (_dir, library) = load(&[GOBLIN]);
    let mut world = World::new();
    library.spawn_many(&mut world, "goblin", 60).unwrap();
    let before = by_id(&world);
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let bytes = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
        // Loading rolls nothing: a different seed changes nothing.
        library.set_spawn_seed(7);
        let mut loaded = World::new();
        load_scene(
            &bytes,
            None,
            &mut loaded,
            &library,
            &SceneLoadOptions::default(),
        )
        .unwrap();
        assert_eq!(by_id(&loaded), before, "{encoding:?}");
    }
}

#[test]
fn hot_reload_keeps_what_each_entity_rolled() {
    let (_dir, mut library) = load(&[GOBLIN]);
    let mut world = World::new();
    let goblins: Vec<Entity> = library.spawn_many(&mut world, "goblin", 40).unwrap();
    let before = by_id(&world);
    // The range changes and so does a plain field: live goblins take the plain change and keep
    // their rolls; goblins spawned from now on roll from the new range.
    let update = library.set_source(
        "goblin.json",
        Some(r#"{ "components": { "Health": { "current": 4, "max": { "$range": [10, 20] } }, "Loot": { "items": { "$pick": [["apple"], ["bone", "coin"]] }, "gold": { "$range": [50, 59] } } } }"#),
    );
    let report = apply_update(&mut world, &library, &update);
    assert!(
        report.errors().is_empty() && report.patch_failures().is_empty(),
        "{report}"
    );
    assert_eq!(report.entities_updated(), 40);
    for goblin in &goblins {
        assert_eq!(world.get::<&Health>(*goblin).unwrap().current, 4.0);
    }
    let after: BTreeMap<_, _> = by_id(&world);
    assert_eq!(after, before);
    let new = library.spawn(&mut world, "goblin").unwrap();
    assert!((50..=59).contains(&world.get::<&Loot>(new).unwrap().gold));
}

/// An entity whose variations have few combinations spawns from a template per combination
/// (as fast as a fixed one); one with many writes its rolls in place. Both roll every outcome,
/// the same seed giving the same values.
#[test]
fn few_and_many_combinations_roll_alike() {
    let few = (
        "few.json",
        r#"{ "components": { "Loot": { "items": { "$pick": [["apple"], ["bone"]] }, "gold": { "$range": [1, 3] } } } }"#,
    );
    let (_dir, library) = load(&[GOBLIN, few]);
    for name in ["few", "goblin"] {
        let roll = |library: &archetype_engine::ArchetypeLibrary| {
            library.set_spawn_seed(5);
            let mut world = World::new();
            (0..200)
                .map(|_| {
                    let entity = library.spawn(&mut world, name).unwrap();
                    (*world.get::<&Loot>(entity).unwrap()).clone()
                })
                .collect::<Vec<Loot>>()
        };
        let loots = roll(&library);
        assert_eq!(
            roll(&library),
            loots,
            "{name}: the same seed, the same values"
        );
        let golds: std::collections::BTreeSet<u32> = loots.iter().map(|l| l.gold).collect();
        let items: std::collections::BTreeSet<Vec<String>> =
            loots.iter().map(|l| l.items.clone()).collect();
        let expected_golds = if name == "few" {
            vec![1, 2, 3]
        } else {
            vec![5, 6, 7, 8, 9]
        };
        assert_eq!(
            golds.into_iter().collect::<Vec<_>>(),
            expected_golds,
            "{name}"
        );
        assert_eq!(items.len(), 2, "{name}");
    }
}

/// A component holding `#` references rolls when it is decoded for each spawn; every value it
/// can roll is still checked when the archetype loads (an error placed at the value).
#[test]
fn components_holding_references_roll_too() {
    let (_dir, library) = load(&[(
        "linked.json",
        r##"{ "components": { "Links": { "target": "#", "all": { "$pick": [[], ["#"]] } } } }"##,
    )]);
    let mut world = World::new();
    let kinds: std::collections::BTreeSet<usize> = (0..40)
        .map(|_| {
            let entity = library.spawn(&mut world, "linked").unwrap();
            let links = (*world.get::<&crate::support::Links>(entity).unwrap()).clone();
            assert_eq!(links.target.entity(), entity);
            assert!(links.all.iter().all(|r| r.entity() == entity));
            links.all.len()
        })
        .collect();
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    let errors = load_errors(&[(
        "linked.json",
        r##"{ "components": { "Links": { "target": { "$pick": ["#", "#nowhere"] } } } }"##,
    )]);
    assert_messages(
        &errors,
        &["archetypes/linked.json:1:57: error[unknown-child]: invalid value for `Links.target`: entity reference `#nowhere` names no child of this archetype"],
    );
}

/// Line and column (1-based, in characters) where `needle` first starts in `text`.
fn line_and_column(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).unwrap();
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, column)
}

/// A `$pick` of 400,000 values (2.8 MB) loads with every value checked against the component's
/// type, each in the time of one value: spawns roll its values, and a wrong value at its very
/// end is an error placed where it is written. (Checking once copied the whole list per value:
/// minutes.)
#[test]
fn a_pick_of_hundreds_of_thousands_of_values_loads_rolls_and_places_its_errors() {
    const VALUES: usize = 400_000;
    let file = |last: &str| {
        let mut text = String::from(
            "{\n  \"components\": {\n    \"Health\": { \"current\": 1, \"max\": { \"$pick\": [",
        );
        for i in 0..VALUES - 1 {
            if i % 1000 == 0 {
                text.push_str("\n      ");
            }
            let _ = write!(text, "{i}, ");
        }
        text.push_str(last);
        text.push_str("] } }\n  }\n}\n");
        text
    };
    let (good, bad) = (file("399999"), file("\"lots\""));
    let place = line_and_column(&bad, "\"lots\"");
    let (maxes, messages) = within(60, move || {
        let (_dir, library) = load(&[("hoard.json", &good)]);
        let mut world = World::new();
        let maxes: Vec<f32> = (0..1000)
            .map(|_| {
                let hoard = library.spawn(&mut world, "hoard").unwrap();
                world.get::<&Health>(hoard).unwrap().max
            })
            .collect();
        (maxes, load_errors(&[("hoard.json", &bad)]))
    });
    assert!(maxes
        .iter()
        .all(|max| max.fract() == 0.0 && (0.0..VALUES as f32).contains(max)));
    let distinct: BTreeSet<u32> = maxes.iter().map(|max| *max as u32).collect();
    assert!(distinct.len() > 900, "{} distinct rolls", distinct.len());
    assert_messages(
        &messages,
        &[&format!(
            "archetypes/hoard.json:{}:{}: error[invalid-component]: invalid value for `Health.max`: invalid type: string \"lots\", expected f32",
            place.0, place.1
        )],
    );
}

/// A component with 20,000 variations is checked in as many decodes as its longest variation
/// has values (here two), not one per value of each (minutes); every spawn rolls each of them,
/// and a wrong value in the last is placed where it is written.
#[test]
fn a_component_of_thousands_of_variations_loads_and_rolls_each() {
    const PICKS: usize = 20_000;
    let file = |last: &str| {
        let mut items = String::new();
        for i in 0..PICKS - 1 {
            let _ = write!(items, "\n        {{ \"$pick\": [\"a{i}\", \"b{i}\"] }},");
        }
        format!(
            "{{\n  \"components\": {{\n    \"Loot\": {{\n      \"items\": [{items}\n        {{ \"$pick\": [\"a\", {last}] }}\n      ]\n    }}\n  }}\n}}\n"
        )
    };
    let (good, bad) = (file("\"b\""), file("5"));
    let place = line_and_column(&bad, "5] }");
    let (items, messages) = within(60, move || {
        let (_dir, library) = load(&[("stash.json", &good)]);
        let mut world = World::new();
        let items: Vec<Vec<String>> = (0..3)
            .map(|_| {
                let stash = library.spawn(&mut world, "stash").unwrap();
                world.get::<&Loot>(stash).unwrap().items.clone()
            })
            .collect();
        (items, load_errors(&[("stash.json", &bad)]))
    });
    for rolled in &items {
        assert_eq!(rolled.len(), PICKS);
        for (i, item) in rolled[..PICKS - 1].iter().enumerate() {
            assert!(
                *item == format!("a{i}") || *item == format!("b{i}"),
                "{item}"
            );
        }
        assert!(rolled.iter().any(|item| item.starts_with('a')));
        assert!(rolled.iter().any(|item| item.starts_with('b')));
    }
    assert_messages(
        &messages,
        &[&format!(
            "archetypes/stash.json:{}:{}: error[invalid-component]: invalid value for `Loot.items[{}]`: invalid type: integer `5`, expected a string",
            place.0, place.1, PICKS - 1
        )],
    );
}

/// Checking a component's variations decodes the whole component once per value of its longest
/// variation: a component for which that would read more than 16,777,216 values is refused
/// where its longest `$pick` is, instead of taking minutes to load.
#[test]
fn a_component_too_big_to_check_with_its_variations_is_refused() {
    let items: Vec<String> = (0..20_000).map(|i| format!("\"i{i}\"")).collect();
    let golds: Vec<String> = (0..1_000).map(|i| i.to_string()).collect();
    let text = format!(
        "{{\n  \"components\": {{\n    \"Loot\": {{ \"items\": [{}],\n      \"gold\": {{ \"$pick\": [{}] }} }}\n  }}\n}}\n",
        items.join(", "),
        golds.join(", ")
    );
    let messages = within(60, move || load_errors(&[("hoard.json", &text)]));
    assert_messages(
        &messages,
        &["archetypes/hoard.json:4:15: error[invalid-operator]: invalid value for `Loot.gold`: `Loot` is too big to check with its variations: each value a variation can roll is checked in the whole component, and 1000 values in a component of 20003 parts are more than 16777216 parts to read; give the longest `$pick` a component of its own, or shorten it"],
    );
}
