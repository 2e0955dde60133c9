//! Scaling workloads of the designer's language: how loading (and spawning, and a hot-reload
//! edit) grows with the counts archetype files write: the values of a `$pick`, the former
//! names of an archetype, the archetypes with former names, the archetypes extending one root,
//! the parents one archetype extends, the children of one archetype, the variations in one
//! component value and the records of a list edited by key.
//!
//! Each workload builds its library in memory ([`ArchetypeLibrary::empty`] and
//! [`set_sources`](ArchetypeLibrary::set_sources)), so the disk is off the clock, and checks
//! what it built.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use archetype_engine::{apply_update, ArchetypeLibrary, ComponentRegistry, LoadOptions, Name};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

use crate::bench::scaling::{time, Dimension, Run};
use crate::demo::components::{self, Health};

/// One archetype whose `Name` is a `$pick` of n names: load and first spawn.
pub const PICK_LENGTH: Dimension = Dimension {
    name: "scaling_pick_length",
    n: 50_000,
    setup: pick_length,
};

/// One archetype with n former names: load.
pub const FORMERLY_COUNT: Dimension = Dimension {
    name: "scaling_formerly_count",
    n: 10_000,
    setup: formerly_count,
};

/// n archetypes, each with a former name: load.
pub const RENAMED_ARCHETYPES: Dimension = Dimension {
    name: "scaling_renamed_archetypes",
    n: 1_000,
    setup: renamed_archetypes,
};

/// One root extended by n archetypes: load, and an edit of the root reaching an instance of
/// each.
pub const EXTENDS_FANOUT: Dimension = Dimension {
    name: "scaling_extends_fanout",
    n: 1_000,
    setup: extends_fanout,
};

/// One archetype extending n parents: load and first spawn.
pub const EXTENDS_COUNT: Dimension = Dimension {
    name: "scaling_extends_count",
    n: 1_000,
    setup: extends_count,
};

/// One archetype with n children, each an instance of an archetype of its own: load and first
/// spawn. (At most 2,500: an instance holds at most 10,000 entities.)
pub const CHILDREN_COUNT: Dimension = Dimension {
    name: "scaling_children_count",
    n: 1_000,
    setup: children_count,
};

/// One component value with n variations: load and first spawn.
pub const VARIATION_SITES: Dimension = Dimension {
    name: "scaling_variation_sites",
    n: 4_000,
    setup: variation_sites,
};

/// A list of n records inherited and edited by key (`$key`: `$remove` of a quarter, `$update`
/// of the rest, `$upsert` of a quarter): load and first spawn.
pub const KEYED_RECORDS: Dimension = Dimension {
    name: "scaling_keyed_records",
    n: 10_000,
    setup: keyed_records,
};

/// A record of a [`Roster`], named by `name`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Member {
    name: String,
    level: i32,
}

/// A list of records: what the keyed workload edits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Roster(Vec<Member>);

/// A list of items: what the workloads that write lists write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Stash {
    items: Vec<String>,
}

/// The demo's components and [`Stash`].
fn registry() -> Arc<ComponentRegistry> {
    let mut registry = components::registry();
    registry
        .register::<Stash>()
        .expect("bench setup: `Stash` is no demo component");
    registry
        .register::<Roster>()
        .expect("bench setup: `Roster` is no demo component");
    Arc::new(registry)
}

/// A library of `files` (path, text) built in memory, checked to have no errors.
fn build(registry: &Arc<ComponentRegistry>, files: &[(String, String)]) -> ArchetypeLibrary {
    let mut library = ArchetypeLibrary::empty("bench", registry.clone(), LoadOptions::default());
    library.set_sources(files.iter().map(|(path, text)| (path, Some(text))));
    assert_eq!(
        library.error_count(),
        0,
        "bench setup: the generated archetypes have errors: {:?}",
        library.diagnostics().first()
    );
    library
}

/// `item(i)` for each `i` in `0..n`, comma-separated.
fn list(n: usize, item: impl Fn(&mut String, usize)) -> String {
    let mut list = String::new();
    for i in 0..n {
        if i > 0 {
            list.push_str(", ");
        }
        item(&mut list, i);
    }
    list
}

/// `n` JSON strings `"<prefix><i>"`, comma-separated.
fn numbered(prefix: &str, n: usize) -> String {
    list(n, |out, i| {
        let _ = write!(out, "\"{prefix}{i}\"");
    })
}

/// Builds `files` and spawns `name` from them once, timed together (the library is dropped
/// off the clock); the world and the entity spawned.
fn load_and_spawn(
    registry: &Arc<ComponentRegistry>,
    files: &[(String, String)],
    name: &str,
) -> (Duration, World, Entity) {
    let mut world = World::new();
    let (took, (_library, spawned)) = timed(|| {
        let library = build(registry, files);
        let spawned = library.spawn(&mut world, name);
        (library, spawned)
    });
    let entity = spawned.unwrap_or_else(|error| panic!("bench: `{name}` does not spawn: {error}"));
    (took, world, entity)
}

/// One archetype whose `Name` is a `$pick` of `n` names: loading it (which checks every name)
/// and spawning it once.
fn pick_length(n: usize) -> Run {
    let registry = registry();
    let text = format!(
        r#"{{ "components": {{ "Name": {{ "$pick": [{}] }} }} }}"#,
        numbered("goblin ", n)
    );
    let files = vec![("picked.json".to_string(), text)];
    Box::new(move || {
        let (took, world, entity) = load_and_spawn(&registry, &files, "picked");
        let name = world.get::<&Name>(entity).map(|name| name.0.clone());
        assert!(
            name.is_ok_and(|name| name.starts_with("goblin ")),
            "bench: the spawned name is none of the picks"
        );
        took
    })
}

/// A root holding `n` records and a child editing them by key: the first quarter removed, every
/// other record's `level` raised (`$update` with `$add`), the last quarter replaced
/// (`$upsert`); loading both and spawning the child once.
fn keyed_records(n: usize) -> Run {
    let registry = registry();
    let records = list(n, |out, i| {
        let _ = write!(out, r#"{{ "name": "m{i}", "level": {i} }}"#);
    });
    let root = format!(r#"{{ "components": {{ "Roster": [{records}] }} }}"#);
    let quarter = n / 4;
    let updates = list(n - quarter, |out, i| {
        let _ = write!(
            out,
            r#"{{ "name": "m{}", "level": {{ "$add": 1 }} }}"#,
            quarter + i
        );
    });
    let removed = numbered("m", quarter);
    let upserts = list(quarter, |out, i| {
        let _ = write!(out, r#"{{ "name": "m{}", "level": 0 }}"#, n - 1 - i);
    });
    let child = format!(
        r#"{{ "extends": "roster", "components": {{ "Roster": {{ "$key": "name", "$remove": [{removed}], "$update": [{updates}], "$upsert": [{upserts}] }} }} }}"#
    );
    let files = vec![
        ("roster.json".to_string(), root),
        ("edited.json".to_string(), child),
    ];
    Box::new(move || {
        let (took, world, entity) = load_and_spawn(&registry, &files, "edited");
        let roster = world.get::<&Roster>(entity).map(|roster| roster.0.clone());
        let roster = roster.unwrap_or_else(|_| panic!("bench: the child has no `Roster`"));
        assert_eq!(
            roster.len(),
            n - quarter,
            "bench: the keyed edit lost records"
        );
        assert_eq!(
            (roster[0].level, roster[n - quarter - 1].level),
            (quarter as i32 + 1, 0),
            "bench: the keyed edit did not apply"
        );
        took
    })
}

/// One archetype with `n` former names: loading it.
fn formerly_count(n: usize) -> Run {
    let registry = registry();
    let text = format!(
        r#"{{ "formerly": [{}], "components": {{ "Health": {{ "current": 1, "max": 1 }} }} }}"#,
        numbered("old/goblin_", n)
    );
    let files = vec![("goblin.json".to_string(), text)];
    Box::new(move || {
        let (took, library) = timed(|| build(&registry, &files));
        assert_eq!(
            library.renamed(&format!("old/goblin_{}", n - 1)),
            Some("goblin"),
            "bench: the last former name does not stand for the archetype"
        );
        took
    })
}

/// `n` archetypes, each with a former name: loading them.
fn renamed_archetypes(n: usize) -> Run {
    let registry = registry();
    let files: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("kin/goblin_{i}.json"),
                format!(
                    r#"{{ "formerly": ["old/goblin_{i}"], "components": {{ "Name": "goblin {i}" }} }}"#
                ),
            )
        })
        .collect();
    Box::new(move || {
        let (took, library) = timed(|| build(&registry, &files));
        assert_eq!(
            library.renamed(&format!("old/goblin_{}", n - 1)),
            Some(format!("kin/goblin_{}", n - 1).as_str()),
            "bench: a former name does not stand for its archetype"
        );
        took
    })
}

/// The root of the fan-out, with `Health.max` = `max`.
fn fanout_root(max: u32) -> String {
    format!(
        r#"{{ "abstract": true, "components": {{ "Health": {{ "current": 1, "max": {max} }}, "Speed": {{ "value": 1.0 }} }} }}"#
    )
}

/// One abstract root extended by `n` archetypes: loading them, then an edit of the root
/// (`set_source` and `apply_update`) reaching one live instance of each (spawned off the
/// clock).
fn extends_fanout(n: usize) -> Run {
    let registry = registry();
    let mut files = vec![("root.json".to_string(), fanout_root(1))];
    for i in 0..n {
        files.push((
            format!("kin/child_{i}.json"),
            format!(r#"{{ "extends": "root", "components": {{ "Name": "child {i}" }} }}"#),
        ));
    }
    Box::new(move || {
        let (loaded, mut library) = timed(|| build(&registry, &files));
        let mut world = World::new();
        let spawned: Vec<Entity> = (0..n)
            .map(|i| {
                library
                    .spawn(&mut world, &format!("kin/child_{i}"))
                    .expect("bench: a child does not spawn")
            })
            .collect();
        let (edited, report) = timed(|| {
            let update = library.set_source("root.json", Some(&fanout_root(2)));
            apply_update(&mut world, &library, &update)
        });
        assert_eq!(
            report.entities_updated(),
            n,
            "bench: the edit of the root did not reach every child: {report}"
        );
        let max = world
            .get::<&Health>(spawned[n - 1])
            .map(|health| health.max);
        assert_eq!(max.ok(), Some(2.0), "bench: the edit was not applied");
        loaded + edited
    })
}

/// One archetype extending an empty list and `n` abstract parents, each appending an item to
/// it: loading them and spawning it once.
fn extends_count(n: usize) -> Run {
    let registry = registry();
    let mut files = Vec::with_capacity(n + 2);
    files.push((
        "parts/empty.json".to_string(),
        r#"{ "abstract": true, "components": { "Stash": { "items": [] } } }"#.to_string(),
    ));
    for i in 0..n {
        files.push((
            format!("parts/part_{i}.json"),
            format!(
                r#"{{ "abstract": true, "components": {{ "Stash": {{ "items": {{ "$append": ["item {i}"] }} }} }} }}"#
            ),
        ));
    }
    let parents = numbered("parts/part_", n);
    files.push((
        "whole.json".to_string(),
        format!(r#"{{ "extends": ["parts/empty", {parents}] }}"#),
    ));
    Box::new(move || {
        let (took, world, whole) = load_and_spawn(&registry, &files, "whole");
        let items = world.get::<&Stash>(whole).map(|stash| stash.items.len());
        assert_eq!(items.ok(), Some(n), "bench: a parent's item is missing");
        took
    })
}

/// One archetype with `n` children, child `i` an instance of archetype `parts/part_i`: loading
/// them and spawning it once.
fn children_count(n: usize) -> Run {
    let registry = registry();
    let mut files = Vec::with_capacity(n + 1);
    for i in 0..n {
        files.push((
            format!("parts/part_{i}.json"),
            format!(r#"{{ "components": {{ "Name": "part {i}" }} }}"#),
        ));
    }
    let children = list(n, |out, i| {
        let _ = write!(out, r#""c{i}": {{ "archetype": "parts/part_{i}" }}"#);
    });
    files.push((
        "whole.json".to_string(),
        format!(r#"{{ "components": {{ "Name": "whole" }}, "children": {{ {children} }} }}"#),
    ));
    Box::new(move || {
        let (took, world, _) = load_and_spawn(&registry, &files, "whole");
        assert_eq!(world.len() as usize, n + 1, "bench: a child is missing");
        took
    })
}

/// One archetype whose `Stash.items` is a list of `n` picks of two items each: loading it
/// (which checks every value each pick can roll) and spawning it once.
fn variation_sites(n: usize) -> Run {
    let registry = registry();
    let items = list(n, |out, i| {
        let _ = write!(out, r#"{{ "$pick": ["a{i}", "b{i}"] }}"#);
    });
    let text = format!(r#"{{ "components": {{ "Stash": {{ "items": [{items}] }} }} }}"#);
    let files = vec![("stash.json".to_string(), text)];
    Box::new(move || {
        let (took, world, entity) = load_and_spawn(&registry, &files, "stash");
        let items = world.get::<&Stash>(entity).map(|stash| stash.items.len());
        assert_eq!(items.ok(), Some(n), "bench: the stash lost items");
        took
    })
}

/// The time `work` takes, and what it gives.
fn timed<T>(work: impl FnOnce() -> T) -> (Duration, T) {
    let mut out = None;
    let took = time(|| out = Some(work()));
    match out {
        Some(out) => (took, out),
        None => unreachable!("`time` runs its work"),
    }
}
