//! Archetype renames: an archetype file lists its former names under `formerly`; files and
//! scenes naming an old name load as the current archetype, with a warning; saving writes the
//! new name; a former name that could stand for two archetypes is an error. A child lists its
//! former local names the same way, for scenes saved before it was renamed.

use std::path::Path;

use archetype_engine::{
    load_scene, save_scene, ArchetypeLibrary, LoadOptions, SceneChange, SceneEncoding,
    SceneLoadOptions, SceneSaveOptions, SpawnError,
};
use hecs::World;

use crate::support::{
    assert_messages, load, load_partial, registry, ArchetypeDir, Armor, Health, Links,
};

/// The goblin, moved from `enemies/goblin` to `enemies/goblins/goblin`.
const GOBLIN_MOVED: &str = r#"{
  "formerly": ["enemies/goblin"],
  "components": { "Health": { "current": 7, "max": 7 } }
}"#;

/// Extends the goblin by its old name; a child is one by its old name too.
const ARCHER: &str = r#"{
  "extends": "enemies/goblin",
  "children": { "pet": { "archetype": "enemies/goblin" } }
}"#;

#[test]
fn old_names_in_extends_and_children_load_the_renamed_archetype_with_a_warning() {
    let dir = ArchetypeDir::new(&[
        ("enemies/goblins/goblin.json", GOBLIN_MOVED),
        ("enemies/archer.json", ARCHER),
    ]);
    let library = dir.load().unwrap();
    assert_messages(
        &dir.messages(&library),
        &[
            "archetypes/enemies/archer.json:2:14: warning[old-name]: archetype `enemies/goblin` is now called `enemies/goblins/goblin` (its `formerly` lists the old name); write the new name, or run `archetool migrate`; did you mean `enemies/goblins/goblin`?",
            "archetypes/enemies/archer.json:3:39: warning[old-name]: archetype `enemies/goblin` is now called `enemies/goblins/goblin` (its `formerly` lists the old name); write the new name, or run `archetool migrate`; did you mean `enemies/goblins/goblin`?",
        ],
    );
    let mut world = World::new();
    let archer = library.spawn(&mut world, "enemies/archer").unwrap();
    assert_eq!(crate::support::get::<Health>(&world, archer).max, 7.0);
    let pet = crate::support::child(&world, &library, archer, "pet");
    assert_eq!(crate::support::get::<Health>(&world, pet).max, 7.0);
    assert_eq!(
        library.declared("enemies/archer").unwrap().1,
        ["enemies/goblins/goblin"]
    );
    assert_eq!(
        library.renamed("enemies/goblin"),
        Some("enemies/goblins/goblin")
    );
    assert_eq!(library.renamed("enemies/archer"), None);
    assert_eq!(
        library.former_names("enemies/goblins/goblin"),
        ["enemies/goblin"]
    );
}

/// Names kept in component values (a spawner's archetype, in a save) keep working: spawning
/// takes a former name as the current one.
#[test]
fn spawning_by_a_former_name_spawns_the_renamed_archetype() {
    let (_dir, library) = load(&[("enemies/goblins/goblin.json", GOBLIN_MOVED)]);
    let mut world = World::new();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    assert_eq!(crate::support::get::<Health>(&world, goblin).max, 7.0);
    let marker = *world
        .get::<&archetype_engine::ArchetypeInstance>(goblin)
        .unwrap();
    assert_eq!(
        library.name_of(marker.archetype),
        Some("enemies/goblins/goblin")
    );
    assert!(matches!(
        library.spawn(&mut world, "enemies/goblim"),
        Err(SpawnError::UnknownArchetype { .. })
    ));
}

#[test]
fn a_former_name_that_could_stand_for_two_archetypes_is_an_error() {
    let (dir, messages, library) = load_partial(&[
        // A live archetype has the name.
        ("enemies/goblin.json", r#"{ "components": {} }"#),
        ("enemies/goblins/goblin.json", GOBLIN_MOVED),
        // Two archetypes claim one former name.
        ("a.json", r#"{ "formerly": "old", "components": {} }"#),
        (
            "b.json",
            r#"{ "formerly": ["x", "old"], "components": {} }"#,
        ),
        // Its own name stands for itself: not a clash (a file may list it before it moves).
        ("c.json", r#"{ "formerly": ["c"], "components": {} }"#),
        // A child's former name that is its sibling's.
        (
            "d.json",
            r#"{ "children": { "gun": {}, "barrel": { "formerly": ["gun"] } } }"#,
        ),
        ("uses.json", r#"{ "extends": "old" }"#),
    ]);
    let _ = dir;
    assert_messages(
        &messages,
        &[
            "archetypes/a.json:1:15: error[former-name-clash]: former name `old` is also a former name of `b`: it cannot stand for both; keep it in one `formerly`",
            "archetypes/b.json:1:21: error[former-name-clash]: former name `old` is also a former name of `a`: it cannot stand for both; keep it in one `formerly`",
            "archetypes/d.json:1:53: error[former-name-clash]: former name `gun` of child `barrel` is the name of another child here, so it cannot also stand for this one; remove it from `formerly`",
            "archetypes/enemies/goblins/goblin.json:2:16: error[former-name-clash]: former name `enemies/goblin` is the name of a live archetype, so it cannot also stand for this one; remove it from `formerly`, or rename that archetype",
            "archetypes/uses.json:1:14: error[unknown-archetype]: archetype `old` does not exist",
        ],
    );
    // The name stands for the live archetype only; the clashing files are not served.
    assert_eq!(library.renamed("enemies/goblin"), None);
    assert_eq!(library.renamed("old"), None);
    assert_eq!(library.renamed("x"), Some("b"));
    assert!(library.get("enemies/goblin").is_some());
    assert!(library.get("enemies/goblins/goblin").is_none());
    assert!(library.get("c").is_some());
}

/// A former name many archetypes claim is an error in each, listing the first eight others by
/// name and counting the rest (each listing all of them made the errors of k claimants k × k
/// names long).
#[test]
fn a_former_name_claimed_by_many_archetypes_lists_a_few_of_the_others() {
    let files: Vec<(String, String)> = (0..12)
        .map(|i| {
            let text = r#"{ "formerly": ["old"], "components": {} }"#.to_string();
            (format!("claim_{i:02}.json"), text)
        })
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (&**p, &**t)).collect();
    let (_dir, messages, library) = load_partial(&files);
    assert_eq!(messages.len(), 12);
    assert_eq!(
        messages[0],
        "archetypes/claim_00.json:1:16: error[former-name-clash]: former name `old` is also a former name of `claim_01`, `claim_02`, `claim_03`, `claim_04`, `claim_05`, `claim_06`, `claim_07`, `claim_08` and 3 more: it cannot stand for both; keep it in one `formerly`"
    );
    assert_eq!(
        messages[11],
        "archetypes/claim_11.json:1:16: error[former-name-clash]: former name `old` is also a former name of `claim_00`, `claim_01`, `claim_02`, `claim_03`, `claim_04`, `claim_05`, `claim_06`, `claim_07` and 3 more: it cannot stand for both; keep it in one `formerly`"
    );
    assert_eq!(library.renamed("old"), None);
}

/// A `formerly` list of 300,000 names (3 MB) loads in the time of its names: each stands for
/// the archetype, and a name listed twice is an error at its second place. (Finding the
/// repeats compared each name with those before it: minutes.)
#[test]
fn a_formerly_list_of_hundreds_of_thousands_of_names_loads_and_places_a_repeat() {
    const NAMES: usize = 300_000;
    let mut text = String::from("{\n  \"formerly\": [");
    for i in 0..NAMES {
        if i % 1000 == 0 {
            text.push_str("\n    ");
        }
        text.push_str(&format!("\"o{i}\", "));
    }
    text.push_str("\"o7\"\n  ],\n  \"components\": {}\n}\n");
    let at = text.rfind("\"o7\"").unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let column = at - text[..at].rfind('\n').unwrap();
    let (messages, renamed) = crate::support::within(60, move || {
        let (_dir, messages, library) = load_partial(&[("goblin.json", &text)]);
        let renamed = [0, NAMES / 2, NAMES - 1]
            .map(|i| (library.renamed(&format!("o{i}"))).map(str::to_string));
        (messages, renamed)
    });
    assert_messages(
        &messages,
        &[&format!("archetypes/goblin.json:{line}:{column}: error[malformed]: `o7` is listed twice in `formerly`")],
    );
    assert_eq!(renamed, [0, 1, 2].map(|_| Some("goblin".to_string())));
}

/// The library follows renames as files change: a dependent that named a missing archetype
/// resolves once a file lists that name under `formerly`, and breaks again when it no longer
/// does.
#[test]
fn renames_are_followed_as_files_change() {
    let mut library = ArchetypeLibrary::empty("archetypes", registry(), LoadOptions::default());
    library.set_source("enemies/archer.json", Some(ARCHER));
    library.set_source(
        "enemies/goblins/goblin.json",
        Some(r#"{ "components": { "Health": { "current": 7, "max": 7 } } }"#),
    );
    assert!(library.get("enemies/archer").is_none());
    assert_eq!(library.error_count(), 2, "{:?}", library.diagnostics());

    let update = library.set_source("enemies/goblins/goblin.json", Some(GOBLIN_MOVED));
    assert!(update.changes.iter().any(|c| &*c.name == "enemies/archer"));
    assert_eq!(library.error_count(), 0);
    assert!(library.get("enemies/archer").is_some());

    let update = library.set_source(
        "enemies/goblins/goblin.json",
        Some(r#"{ "components": { "Health": { "current": 7, "max": 7 } } }"#),
    );
    assert!(update
        .errors
        .iter()
        .any(|d| d.message == "archetype `enemies/goblin` does not exist"));
    assert_eq!(library.error_count(), 2);
}

/// Moved in one update (the old file gone, the new one listing the old name), an archetype
/// keeps its ID: the update is a change of the archetype, not a deletion and a new one.
#[test]
fn a_moved_archetype_keeps_its_id() {
    let mut library = ArchetypeLibrary::empty("archetypes", registry(), LoadOptions::default());
    library.set_source(
        "enemies/goblin.json",
        Some(r#"{ "components": { "Health": { "current": 5, "max": 5 } } }"#),
    );
    let id = library.id("enemies/goblin").unwrap();
    let update = library.set_sources([
        ("enemies/goblin.json", None),
        ("enemies/goblins/goblin.json", Some(GOBLIN_MOVED)),
    ]);
    assert_eq!(update.changes.len(), 1, "{:?}", update.changes);
    let change = &update.changes[0];
    assert_eq!((change.id, &*change.name), (id, "enemies/goblins/goblin"));
    assert!(change.old.is_some() && change.new.is_some());
    assert_eq!(library.id("enemies/goblins/goblin"), Some(id));
    assert_eq!(library.id("enemies/goblin"), None);
    assert_eq!(library.name_of(id), Some("enemies/goblins/goblin"));
}

// ---------------------------------------------------------------------------------------------
// scenes

/// Before the update: a goblin, and a turret with a `gun` its root links to.
fn before() -> ArchetypeLibrary {
    let mut library = ArchetypeLibrary::empty("archetypes", registry(), LoadOptions::default());
    library.set_source(
        "enemies/goblin.json",
        Some(r#"{ "components": { "Health": { "current": 7, "max": 7 } } }"#),
    );
    library.set_source(
        "turret.json",
        Some(
            r##"{
  "components": { "Links": { "target": "#gun" } },
  "children": { "gun": { "components": { "Armor": { "value": 3 } } } }
}"##,
        ),
    );
    assert_eq!(library.diagnostics(), &[]);
    library
}

/// After the update: the goblin moved, the turret's `gun` is its `barrel`.
fn after() -> ArchetypeLibrary {
    let mut library = ArchetypeLibrary::empty("archetypes", registry(), LoadOptions::default());
    library.set_source("enemies/goblins/goblin.json", Some(GOBLIN_MOVED));
    library.set_source(
        "turret.json",
        Some(
            r##"{
  "components": { "Links": { "target": "#barrel" } },
  "children": {
    "barrel": { "formerly": ["gun"], "components": { "Armor": { "value": 4 } } }
  }
}"##,
        ),
    );
    assert_eq!(library.diagnostics(), &[]);
    library
}

fn saved(encoding: SceneEncoding) -> Vec<u8> {
    let library = before();
    let mut world = World::new();
    for name in ["enemies/goblin", "enemies/goblin", "turret"] {
        library.spawn(&mut world, name).unwrap();
    }
    save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap()
}

#[test]
fn scenes_naming_old_archetype_and_child_names_load_and_save_the_new_ones() {
    let library = after();
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let bytes = saved(encoding);
        let mut world = World::new();
        let file = Some(Path::new("level.scene.json"));
        let options = SceneLoadOptions::default();
        let loaded = load_scene(&bytes, file, &mut world, &library, &options).unwrap();
        // In the file's order, which follows the entities' random IDs.
        let mut changes = loaded.changes().to_vec();
        changes.sort_by_key(|change| matches!(change, SceneChange::ChildRenamed { .. }));
        assert_eq!(
            changes,
            [
                SceneChange::ArchetypeRenamed {
                    from: "enemies/goblin".into(),
                    to: "enemies/goblins/goblin".into(),
                    entries: 2
                },
                SceneChange::ChildRenamed {
                    archetype: "turret".into(),
                    from: "gun".into(),
                    to: "barrel".into(),
                    entries: 1
                },
            ],
            "{encoding:?}"
        );
        let mut warnings: Vec<String> = loaded.warnings().iter().map(ToString::to_string).collect();
        warnings.sort_by_key(|warning| warning.contains("child `gun`"));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].ends_with("warning[old-name]: archetype `enemies/goblin` is now called `enemies/goblins/goblin`: 2 entries loaded as `enemies/goblins/goblin` (saving writes the new name)"), "{warnings:?}");
        assert!(warnings[1].ends_with("warning[old-name]: child `gun` of archetype `turret` is now `barrel`: 1 entry loaded as `barrel` (saving writes the new path)"), "{warnings:?}");
        if encoding == SceneEncoding::Json {
            assert!(warnings[0].starts_with("level.scene.json:"), "{warnings:?}");
        }
        // The instances are the current archetypes': they take its values, and the turret's
        // root links to its barrel.
        let healths: Vec<f32> = world.query::<&Health>().iter().map(|h| h.max).collect();
        assert_eq!(healths, [7.0, 7.0]);
        let barrel = world
            .query::<(hecs::Entity, &Armor)>()
            .iter()
            .map(|(e, a)| (e, a.value))
            .next()
            .unwrap();
        assert_eq!(barrel.1, 4.0);
        let links: Vec<hecs::Entity> = world.query::<&Links>().iter().map(|l| l.target.0).collect();
        assert_eq!(links, [barrel.0]);

        // Saving writes the new names; loading that has nothing to say.
        let again = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
        if encoding == SceneEncoding::Json {
            let text = String::from_utf8(again.clone()).unwrap();
            assert!(
                !text.contains("\"enemies/goblin\"") && !text.contains("\"gun\""),
                "{text}"
            );
            assert!(text.contains("\"enemies/goblins/goblin\"") && text.contains("\"barrel\""));
        }
        let mut world = World::new();
        let loaded = load_scene(&again, file, &mut world, &library, &options).unwrap();
        assert_eq!((loaded.changes(), loaded.warnings().len()), (&[][..], 0));
        assert_eq!(loaded.len(), 4);
    }
}
