//! The archetype file format (version 1): what a set of files means once loaded and spawned.

use archetype_engine::{EntityRef, Name};
use serde_json::json;

use crate::support::{
    load, spawn, Ai, AiStats, ArchetypeDir, Armor, Faction, Health, Links, Loot, Mode, Speed,
};

const CREATURE: (&str, &str) = (
    "base/creature.json",
    r#"{
  "abstract": true,
  "components": {
    "Health": { "current": 10, "max": 10 },
    "Speed": { "value": 1 },
    "Faction": "Hostile",
    "Ai": { "mode": "Wander", "stats": { "aggression": 1, "vision": 5 } },
    "Loot": { "items": ["bone", "rag", "tooth"], "gold": 5 }
  }
}"#,
);

fn creature_child(text: &str) -> [(&str, &str); 2] {
    [CREATURE, ("goblin.json", text)]
}

#[test]
fn parent_fields_merge_key_by_key() {
    let goblin = spawn(
        &creature_child(
            r#"{ "extends": "base/creature", "components": { "Health": { "max": 12 } } }"#,
        ),
        "goblin",
    );
    assert_eq!(
        goblin.get::<Health>(),
        Health {
            current: 10.0,
            max: 12.0
        }
    );
}

#[test]
fn nested_objects_merge_recursively() {
    let goblin = spawn(
        &creature_child(
            r#"{ "extends": "base/creature", "components": { "Ai": { "stats": { "vision": 9 } } } }"#,
        ),
        "goblin",
    );
    assert_eq!(
        goblin.get::<Ai>(),
        Ai {
            mode: Mode::Wander,
            stats: AiStats {
                aggression: 1.0,
                vision: 9.0
            }
        }
    );
}

#[test]
fn arrays_replace_whole() {
    let goblin = spawn(
        &creature_child(
            r#"{ "extends": "base/creature", "components": { "Loot": { "items": ["ear"] } } }"#,
        ),
        "goblin",
    );
    assert_eq!(
        goblin.get::<Loot>(),
        Loot {
            items: vec!["ear".to_string()],
            gold: 5
        }
    );
}

#[test]
fn scalars_and_enums_replace() {
    let goblin = spawn(
        &creature_child(
            r#"{ "extends": "base/creature", "components": { "Faction": "Friendly", "Speed": { "value": 2.5 } } }"#,
        ),
        "goblin",
    );
    assert_eq!(goblin.get::<Faction>(), Faction::Friendly);
    assert_eq!(goblin.get::<Speed>(), Speed { value: 2.5 });
}

#[test]
fn null_removes_an_inherited_component() {
    let goblin = spawn(
        &creature_child(r#"{ "extends": "base/creature", "components": { "Speed": null } }"#),
        "goblin",
    );
    assert!(!goblin.has::<Speed>());
    assert!(goblin.has::<Health>(), "other components stay");
    let resolved = goblin.library.get("goblin").unwrap().resolved().clone();
    assert!(!resolved.components.contains_key("Speed"));
}

#[test]
fn null_inside_a_value_removes_an_inherited_field() {
    let goblin = spawn(
        &creature_child(
            r#"{ "extends": "base/creature", "components": { "Loot": { "gold": null } } }"#,
        ),
        "goblin",
    );
    let resolved = goblin.library.get("goblin").unwrap().resolved().clone();
    assert_eq!(
        resolved.components["Loot"],
        json!({ "items": ["bone", "rag", "tooth"] })
    );
    // The field falls back to its serde default.
    assert_eq!(goblin.get::<Loot>().gold, 0);
}

#[test]
fn components_the_parent_lacks_are_added() {
    let goblin = spawn(
        &creature_child(
            r#"{ "extends": "base/creature", "components": { "Armor": { "value": 3 } } }"#,
        ),
        "goblin",
    );
    assert_eq!(goblin.get::<Armor>(), Armor { value: 3.0 });
    assert_eq!(goblin.get::<Speed>(), Speed { value: 1.0 });
}

const TRAITS: [(&str, &str); 2] = [
    (
        "traits/fast.json",
        r#"{ "abstract": true, "components": { "Speed": { "value": 5 }, "Health": { "max": 20 } } }"#,
    ),
    (
        "traits/tough.json",
        r#"{ "abstract": true, "components": { "Health": { "current": 30, "max": 30 }, "Armor": { "value": 2 } } }"#,
    ),
];

fn with_traits<'a>(name: &'a str, text: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut files = vec![CREATURE];
    files.extend(TRAITS);
    files.push((name, text));
    files
}

#[test]
fn parents_apply_in_list_order_then_the_files_own_components() {
    let brute = spawn(
        &with_traits(
            "brute.json",
            r#"{ "extends": ["base/creature", "traits/fast", "traits/tough"], "components": { "Armor": { "value": 4 } } }"#,
        ),
        "brute",
    );
    // tough comes last among the parents: its Health wins over fast's.
    assert_eq!(
        brute.get::<Health>(),
        Health {
            current: 30.0,
            max: 30.0
        }
    );
    assert_eq!(brute.get::<Speed>(), Speed { value: 5.0 });
    // The file's own components win over every parent.
    assert_eq!(brute.get::<Armor>(), Armor { value: 4.0 });
    // What no later parent touches comes from the first.
    assert_eq!(brute.get::<Faction>(), Faction::Hostile);

    let sprinter = spawn(
        &with_traits(
            "sprinter.json",
            r#"{ "extends": ["traits/tough", "traits/fast", "base/creature"] }"#,
        ),
        "sprinter",
    );
    // creature comes last now: its Health and Speed win.
    assert_eq!(
        sprinter.get::<Health>(),
        Health {
            current: 10.0,
            max: 10.0
        }
    );
    assert_eq!(sprinter.get::<Speed>(), Speed { value: 1.0 });
    assert_eq!(sprinter.get::<Armor>(), Armor { value: 2.0 });
}

#[test]
fn later_parents_merge_into_earlier_ones_key_by_key() {
    let runner = spawn(
        &with_traits(
            "runner.json",
            r#"{ "extends": ["base/creature", "traits/fast"] }"#,
        ),
        "runner",
    );
    // fast only sets `max`; `current` still comes from creature.
    assert_eq!(
        runner.get::<Health>(),
        Health {
            current: 10.0,
            max: 20.0
        }
    );
    assert_eq!(
        runner.library.get("runner").unwrap().extends(),
        ["base/creature", "traits/fast"]
    );
}

#[test]
fn extends_takes_one_name_or_a_list() {
    let (_dir, library) = load(&[
        CREATURE,
        ("a.json", r#"{ "extends": "base/creature" }"#),
        ("b.json", r#"{ "extends": ["base/creature"] }"#),
    ]);
    let a = library.get("a").unwrap();
    let b = library.get("b").unwrap();
    assert_eq!(a.extends(), ["base/creature"]);
    assert_eq!(a.resolved().components, b.resolved().components);
    assert_eq!(a.resolved().components.len(), 5);
}

#[test]
fn inheritance_goes_any_depth() {
    let archer = spawn(
        &[
            CREATURE,
            (
                "enemies/enemy.json",
                r#"{ "abstract": true, "extends": "base/creature", "components": { "Ai": { "mode": "Chase" } } }"#,
            ),
            (
                "enemies/goblin.json",
                r#"{ "extends": "enemies/enemy", "components": { "Health": { "current": 12, "max": 12 } } }"#,
            ),
            (
                "enemies/goblin_archer.json",
                r#"{ "extends": "enemies/goblin", "components": { "Health": { "max": 8 }, "Ai": { "stats": { "vision": 12 } } } }"#,
            ),
        ],
        "enemies/goblin_archer",
    );
    assert_eq!(
        archer.get::<Health>(),
        Health {
            current: 12.0,
            max: 8.0
        }
    );
    assert_eq!(
        archer.get::<Ai>(),
        Ai {
            mode: Mode::Chase,
            stats: AiStats {
                aggression: 1.0,
                vision: 12.0
            }
        }
    );
    assert_eq!(archer.get::<Faction>(), Faction::Hostile);
}

#[test]
fn an_abstract_archetype_may_hold_partial_values() {
    let (_dir, library) = load(&[
        (
            "base.json",
            r#"{ "abstract": true, "components": { "Health": { "max": 10 }, "Ai": { "mode": "Guard" } } }"#,
        ),
        (
            "guard.json",
            r#"{ "extends": "base", "components": { "Health": { "current": 4 }, "Ai": { "stats": { "aggression": 0, "vision": 3 } } } }"#,
        ),
    ]);
    assert!(library.get("base").unwrap().is_abstract());
    assert!(!library.get("guard").unwrap().is_abstract());
    assert_eq!(
        library.get("base").unwrap().entity_paths().count(),
        0,
        "abstract archetypes are not compiled"
    );
    let mut world = hecs::World::new();
    let guard = library.spawn(&mut world, "guard").unwrap();
    assert_eq!(
        *world.get::<&Health>(guard).unwrap(),
        Health {
            current: 4.0,
            max: 10.0
        }
    );
}

#[test]
fn abstract_false_is_concrete() {
    let (_dir, library) = load(&[(
        "rock.json",
        r#"{ "abstract": false, "components": { "Name": "Rock" } }"#,
    )]);
    assert!(!library.get("rock").unwrap().is_abstract());
    assert!(library.spawn(&mut hecs::World::new(), "rock").is_ok());
}

#[test]
fn an_archetypes_name_is_its_path_under_the_root_without_json() {
    let dir = ArchetypeDir::new(&[
        ("top.json", "{}"),
        ("enemies/goblin.json", "{}"),
        ("a/b/c.json", "{}"),
        ("notes.txt", "not an archetype"),
        (
            "enemies/.#goblin.json",
            "editor lock file, not an archetype",
        ),
        (".hidden/x.json", "not an archetype either"),
    ]);
    let library = dir.load().unwrap();
    assert_eq!(
        library.names().collect::<Vec<_>>(),
        ["a/b/c", "enemies/goblin", "top"]
    );
    assert_eq!(
        library.file_of("enemies/goblin"),
        Some(dir.root().join("enemies/goblin.json").as_path())
    );
}

#[test]
fn format_1_and_schema_are_accepted() {
    let rock = spawn(
        &[(
            "rock.json",
            r#"{
  "$schema": "https://example.invalid/archetype.schema.json",
  "format": 1,
  "components": { "Name": "Rock" }
}"#,
        )],
        "rock",
    );
    assert_eq!(rock.get::<Name>(), Name("Rock".to_string()));
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let dir = ArchetypeDir::new(&[]);
    dir.write(
        "rock.json",
        "\u{feff}{ \"components\": { \"Name\": \"Rock\" } }".as_bytes(),
    );
    let library = dir.load().unwrap();
    let mut world = hecs::World::new();
    let rock = library.spawn(&mut world, "rock").unwrap();
    assert_eq!(*world.get::<&Name>(rock).unwrap(), Name("Rock".to_string()));
}

#[test]
fn an_alias_in_a_file_is_the_current_component() {
    let files = [
        (
            "old.json",
            r#"{ "abstract": true, "components": { "MoveSpeed": { "value": 1 }, "Health": { "current": 1, "max": 1 } } }"#,
        ),
        (
            "renamed.json",
            r#"{ "extends": "old", "components": { "Speed": { "value": 2 } } }"#,
        ),
        (
            "removed.json",
            r#"{ "extends": "renamed", "components": { "MoveSpeed": null } }"#,
        ),
    ];
    let renamed = spawn(&files, "renamed");
    assert_eq!(renamed.get::<Speed>(), Speed { value: 2.0 });
    let resolved = renamed.library.get("old").unwrap().resolved().clone();
    assert_eq!(
        resolved.components.keys().map(|k| &**k).collect::<Vec<_>>(),
        ["Health", "Speed"]
    );
    let removed = spawn(&files, "removed");
    assert!(!removed.has::<Speed>());
}

// Children

const TOWER: (&str, &str) = (
    "tower.json",
    r#"{
  "components": { "Name": "Tower", "Health": { "current": 50, "max": 50 } },
  "children": {
    "sensor": { "components": { "Name": "Sensor", "Ai": { "mode": "Guard", "stats": { "aggression": 0, "vision": 8 } } } },
    "gun": { "components": { "Name": "Gun", "Loot": { "items": ["shell"] }, "Speed": { "value": 0 } } }
  }
}"#,
);

const CANNON: (&str, &str) = (
    "parts/cannon.json",
    r#"{ "components": { "Name": "Cannon", "Armor": { "value": 9 }, "Health": { "current": 5, "max": 5 } } }"#,
);

#[test]
fn children_are_spawned_with_their_components() {
    let tower = spawn(&[TOWER], "tower");
    assert_eq!(
        tower
            .library
            .get("tower")
            .unwrap()
            .entity_paths()
            .collect::<Vec<_>>(),
        ["", "gun", "sensor"]
    );
    assert_eq!(tower.get_at::<Name>("sensor"), Name("Sensor".to_string()));
    assert_eq!(tower.get_at::<Ai>("sensor").stats.vision, 8.0);
    assert_eq!(tower.get_at::<Name>("gun"), Name("Gun".to_string()));
    assert!(
        !tower.has_at::<Health>("gun"),
        "children do not inherit the root's components"
    );
}

#[test]
fn inherited_children_merge_by_name() {
    let tower = spawn(
        &[
            TOWER,
            (
                "big_tower.json",
                r#"{
  "extends": "tower",
  "children": {
    "sensor": { "components": { "Ai": { "stats": { "vision": 12 } }, "Armor": { "value": 1 } } },
    "radar": { "components": { "Name": "Radar" } }
  }
}"#,
            ),
        ],
        "big_tower",
    );
    assert_eq!(
        tower
            .library
            .get("big_tower")
            .unwrap()
            .entity_paths()
            .collect::<Vec<_>>(),
        ["", "gun", "radar", "sensor"]
    );
    assert_eq!(tower.get_at::<Name>("sensor"), Name("Sensor".to_string()));
    assert_eq!(
        tower.get_at::<Ai>("sensor"),
        Ai {
            mode: Mode::Guard,
            stats: AiStats {
                aggression: 0.0,
                vision: 12.0
            }
        }
    );
    assert_eq!(tower.get_at::<Armor>("sensor"), Armor { value: 1.0 });
    assert_eq!(tower.get_at::<Name>("gun"), Name("Gun".to_string()));
    assert_eq!(tower.get_at::<Name>("radar"), Name("Radar".to_string()));
}

#[test]
fn null_removes_an_inherited_child() {
    let tower = spawn(
        &[
            TOWER,
            (
                "blind_tower.json",
                r#"{ "extends": "tower", "children": { "sensor": null } }"#,
            ),
        ],
        "blind_tower",
    );
    assert_eq!(
        tower
            .library
            .get("blind_tower")
            .unwrap()
            .entity_paths()
            .collect::<Vec<_>>(),
        ["", "gun"]
    );
    assert_eq!(
        tower.get::<archetype_engine::Children>().0,
        [EntityRef(tower.at("gun"))]
    );
}

#[test]
fn a_child_entry_with_an_archetype_is_an_instance_of_it() {
    let fort = spawn(
        &[
            CANNON,
            (
                "fort.json",
                r#"{ "children": { "cannon": { "archetype": "parts/cannon", "components": { "Health": { "max": 7 } } } } }"#,
            ),
        ],
        "fort",
    );
    assert_eq!(fort.get_at::<Name>("cannon"), Name("Cannon".to_string()));
    assert_eq!(fort.get_at::<Armor>("cannon"), Armor { value: 9.0 });
    assert_eq!(
        fort.get_at::<Health>("cannon"),
        Health {
            current: 5.0,
            max: 7.0
        }
    );
}

#[test]
fn naming_an_archetype_for_an_inherited_child_starts_over_from_it() {
    let tower = spawn(
        &[
            TOWER,
            CANNON,
            (
                "cannon_tower.json",
                r#"{ "extends": "tower", "children": { "gun": { "archetype": "parts/cannon", "components": { "Speed": { "value": 1 } } } } }"#,
            ),
        ],
        "cannon_tower",
    );
    // What the tower said about its gun is gone; the cannon and this entry remain.
    assert_eq!(tower.get_at::<Name>("gun"), Name("Cannon".to_string()));
    assert!(!tower.has_at::<Loot>("gun"));
    assert_eq!(tower.get_at::<Armor>("gun"), Armor { value: 9.0 });
    assert_eq!(tower.get_at::<Speed>("gun"), Speed { value: 1.0 });
    // Other children are inherited as usual.
    assert_eq!(tower.get_at::<Name>("sensor"), Name("Sensor".to_string()));
}

#[test]
fn a_child_archetype_brings_its_own_children() {
    let fort = spawn(
        &[
            TOWER,
            (
                "fort.json",
                r#"{ "children": { "north": { "archetype": "tower" }, "south": { "archetype": "tower", "children": { "gun": null } } } }"#,
            ),
        ],
        "fort",
    );
    assert_eq!(
        fort.library
            .get("fort")
            .unwrap()
            .entity_paths()
            .collect::<Vec<_>>(),
        [
            "",
            "north",
            "north/gun",
            "north/sensor",
            "south",
            "south/sensor"
        ]
    );
    assert_eq!(fort.get_at::<Name>("north/gun"), Name("Gun".to_string()));
    assert_eq!(fort.get_at::<Name>("south"), Name("Tower".to_string()));
}

// Entity references

const SHIP: (&str, &str) = (
    "ship.json",
    r##"{
  "components": {
    "Name": "Ship",
    "Links": { "target": "#bridge/captain", "backup": "#", "all": ["#bridge", "#engine"] }
  },
  "children": {
    "bridge": {
      "components": { "Name": "Bridge" },
      "children": { "captain": { "components": { "Name": "Captain", "Links": { "target": "#" } } } }
    },
    "engine": { "components": { "Name": "Engine", "Links": { "target": "#bridge" } } }
  }
}"##,
);

#[test]
fn references_point_at_the_root_children_and_grandchildren() {
    let ship = spawn(&[SHIP], "ship");
    assert_eq!(
        ship.get::<Links>(),
        Links {
            target: EntityRef(ship.at("bridge/captain")),
            backup: Some(EntityRef(ship.root)),
            all: vec![EntityRef(ship.at("bridge")), EntityRef(ship.at("engine"))],
        }
    );
    assert_eq!(
        ship.get_at::<Name>("bridge/captain"),
        Name("Captain".to_string())
    );
}

#[test]
fn references_inside_an_inline_child_are_relative_to_the_archetypes_root() {
    let ship = spawn(&[SHIP], "ship");
    assert_eq!(
        ship.get_at::<Links>("bridge/captain").target,
        EntityRef(ship.root)
    );
    assert_eq!(
        ship.get_at::<Links>("engine").target,
        EntityRef(ship.at("bridge"))
    );
}

#[test]
fn references_in_a_child_archetype_are_relative_to_it_and_dot_dot_climbs_out() {
    let fort = spawn(
        &[
            (
                "parts/barrel.json",
                r##"{ "abstract": true, "components": { "Name": "Barrel", "Links": { "target": "#..", "backup": "#", "all": ["#../flag"] } } }"##,
            ),
            (
                "fort.json",
                r#"{ "components": { "Name": "Fort" }, "children": { "flag": { "components": { "Name": "Flag" } }, "barrel": { "archetype": "parts/barrel" } } }"#,
            ),
        ],
        "fort",
    );
    assert_eq!(
        fort.get_at::<Links>("barrel"),
        Links {
            target: EntityRef(fort.root),
            backup: Some(EntityRef(fort.at("barrel"))),
            all: vec![EntityRef(fort.at("flag"))],
        }
    );
}

#[test]
fn inherited_references_point_into_each_new_instance() {
    let files = [
        SHIP,
        (
            "big_ship.json",
            r#"{ "extends": "ship", "components": { "Name": "Big ship" } }"#,
        ),
    ];
    let (_dir, library) = load(&files);
    let mut world = hecs::World::new();
    let first = library.spawn(&mut world, "big_ship").unwrap();
    let second = library.spawn(&mut world, "big_ship").unwrap();
    for ship in [first, second] {
        let captain = crate::support::at(&world, &library, ship, "bridge/captain");
        let links = crate::support::get::<Links>(&world, ship);
        assert_eq!(links.target, EntityRef(captain));
        assert_eq!(links.backup, Some(EntityRef(ship)));
    }
}
