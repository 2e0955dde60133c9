//! Scenes prepared off the game thread and committed into a world on it, in one call or in
//! slices: the same world as `load_scene`, the same errors, commit-time conflicts
//! and stale archetypes refused with the world unchanged, cancellation and progress; handles
//! reserved on the game thread and references resolved on a worker, so the commit decodes
//! nothing, with cleared worlds and lost handles refused and reservations released.

use archetype_engine::{
    load_scene, save_scene, ArchetypeLibrary, CommitError, IdConflict, LoadedScene, Name,
    PrepareError, PrepareProgress, PreparedScene, ResolvedScene, SceneEncoding, SceneLoadOptions,
    SceneSaveOptions, StableId,
};
use hecs::World;

use crate::support::{ArchetypeDir, Links};

/// A guard refers to itself and owns a lamp child; crates are plain instances.
const GUARD: &str = r##"{
  "components": { "Health": { "current": 10, "max": 10 }, "Links": { "target": "#" } },
  "children": { "lamp": { "components": { "Armor": { "value": 1 } } } }
}"##;
const CRATE: &str = r#"{ "components": { "Loot": { "items": ["gold"] } } }"#;

fn archetypes() -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(&[("guard.json", GUARD), ("crate.json", CRATE)]);
    let library = dir.load().unwrap();
    (dir, library)
}

/// `guards` guards (more than a batch holds, so slices split them), each guarding one of three
/// crates (a reference across archetypes), one hurt guard in seven.
fn level(library: &ArchetypeLibrary, guards: usize) -> World {
    let mut world = World::new();
    let crates = library.spawn_many(&mut world, "crate", 3).unwrap();
    let spawned = library.spawn_many(&mut world, "guard", guards).unwrap();
    for (i, guard) in spawned.iter().enumerate() {
        world.get::<&mut Links>(*guard).unwrap().backup = Some(crates[i % 3].into());
        if i % 7 == 0 {
            world
                .get::<&mut crate::support::Health>(*guard)
                .unwrap()
                .current = 3.0;
        }
    }
    world
}

fn save(world: &World, library: &ArchetypeLibrary, encoding: SceneEncoding) -> Vec<u8> {
    save_scene(world, library, encoding, &SceneSaveOptions::default()).unwrap()
}

fn prepare(bytes: &[u8], library: &ArchetypeLibrary) -> Result<PreparedScene, PrepareError> {
    let progress = PrepareProgress::new();
    PreparedScene::prepare(
        bytes,
        None,
        library,
        &SceneLoadOptions::default(),
        &progress,
    )
}

#[test]
fn prepared_on_a_worker_thread_commits_the_world_load_scene_loads() {
    let (_dir, library) = archetypes();
    let saved = level(&library, 1500);
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let bytes = save(&saved, &library, encoding);
        let progress = PrepareProgress::new();
        let prepared = std::thread::scope(|threads| {
            let (bytes, library, progress) = (&bytes, &library, progress.clone());
            threads
                .spawn(move || {
                    let options = SceneLoadOptions::default();
                    PreparedScene::prepare(bytes, None, library, &options, &progress)
                })
                .join()
                .unwrap()
        })
        .unwrap();
        assert_eq!(progress.bytes(), (bytes.len() as u64, bytes.len() as u64));
        assert_eq!(progress.entries(), (3003, 3003));
        assert_eq!(progress.fraction(), 1.0);
        assert_eq!(prepared.len(), 3003);

        // The game thread's world already has entities of its own.
        let mut world = World::new();
        world.spawn((7u8,));
        let loaded = prepared.commit(&mut world, &library).unwrap();
        assert_eq!(loaded.len(), 3003);
        assert_eq!(world.len(), 3004);
        let mut expected = World::new();
        expected.spawn((7u8,));
        load_scene(
            &bytes,
            None,
            &mut expected,
            &library,
            &SceneLoadOptions::default(),
        )
        .unwrap();
        // Saving both gives the same bytes: same IDs, values, instances, overrides, references.
        assert!(
            save(&world, &library, SceneEncoding::Json)
                == save(&expected, &library, SceneEncoding::Json),
            "{encoding:?}: the committed world differs from the loaded one"
        );
        assert_references_resolve(&world, &loaded);
    }
}

/// Every guard's `Links` point into the world: at itself, and at a crate.
fn assert_references_resolve(world: &World, loaded: &LoadedScene) {
    let mut links = 0;
    for (entity, link) in world.query::<(hecs::Entity, &Links)>().iter() {
        assert_eq!(link.target.entity(), entity);
        let backup = link.backup.unwrap().entity();
        assert!(world.get::<&crate::support::Loot>(backup).is_ok());
        links += 1;
    }
    assert_eq!(links, loaded.len() / 2 - 1);
}

#[test]
fn preparation_reports_the_loads_errors_in_full() {
    let (dir, library) = archetypes();
    let path = dir.write(
        "arena.scene.json",
        br#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "archetype": "guard", "components": { "Helth": {} } }
  ]
}"#,
    );
    let options = SceneLoadOptions::default();
    let error = PreparedScene::prepare_path(&path, &library, &options, &PrepareProgress::new())
        .unwrap_err();
    let PrepareError::Scene(error) = error else {
        panic!("expected a scene error, got {error:?}");
    };
    assert_eq!(
        dir.tidy(&error.to_string()),
        "archetypes/arena.scene.json:4:71: error[unknown-component]: entity 00000000000000a1: unknown component `Helth`; did you mean `Health`?"
    );
    let loaded =
        archetype_engine::load_scene_from_path(&path, &mut World::new(), &library, &options);
    assert_eq!(loaded.unwrap_err(), error);
}

#[test]
fn a_cancelled_preparation_stops_with_cancelled() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 10), &library, SceneEncoding::Json);
    let progress = PrepareProgress::new();
    let worker = progress.clone();
    progress.cancel();
    let options = SceneLoadOptions::default();
    let result = PreparedScene::prepare(&bytes, None, &library, &options, &worker);
    assert_eq!(result.unwrap_err(), PrepareError::Cancelled);
    assert_eq!(progress.entries(), (0, 0));
}

#[test]
fn an_id_already_in_the_world_is_the_loads_error_and_leaves_the_world_unchanged() {
    let (dir, library) = archetypes();
    let bytes = save(&level(&library, 2), &library, SceneEncoding::Json);
    let path = dir.write("arena.scene.json", &bytes);
    let mut world = World::new();
    load_scene(
        &bytes,
        None,
        &mut world,
        &library,
        &SceneLoadOptions::default(),
    )
    .unwrap();
    let before = save(&world, &library, SceneEncoding::Json);

    let options = SceneLoadOptions::default();
    let progress = PrepareProgress::new();
    let error = PreparedScene::prepare_path(&path, &library, &options, &progress)
        .unwrap()
        .commit(&mut world, &library)
        .unwrap_err();
    let expected =
        archetype_engine::load_scene_from_path(&path, &mut world, &library, &options).unwrap_err();
    assert_eq!(error, CommitError::Scene(expected));
    let CommitError::Scene(error) = error else {
        unreachable!()
    };
    let first = error.entity().unwrap();
    let line = String::from_utf8(bytes.clone())
        .unwrap()
        .lines()
        .position(|line| line.contains(&first.to_string()))
        .unwrap()
        + 1;
    assert_eq!(
        dir.tidy(&error.to_string()),
        format!("archetypes/arena.scene.json:{line}:13: error[duplicate-key]: entity {first} is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs")
    );
    assert_eq!(world.len(), 7);
    assert!(save(&world, &library, SceneEncoding::Json) == before);

    // With Remap: a second copy, fresh IDs, references inside the copy.
    let mut options = SceneLoadOptions::default();
    options.on_id_conflict = IdConflict::Remap;
    let progress = PrepareProgress::new();
    let prepared = PreparedScene::prepare(&bytes, None, &library, &options, &progress).unwrap();
    let copy = prepared.commit(&mut world, &library).unwrap();
    assert_eq!(world.len(), 14);
    let new_id = copy.new_id(first).unwrap();
    assert_ne!(new_id, first);
    let entity = copy.entity(first).unwrap();
    assert_eq!(*world.get::<&StableId>(entity).unwrap(), new_id);
    assert_references_resolve_in(&world, &copy);
}

/// The copy's guards refer to the copy's own entities.
fn assert_references_resolve_in(world: &World, copy: &LoadedScene) {
    let ours: std::collections::HashSet<hecs::Entity> = copy.entities().iter().copied().collect();
    for entity in copy.entities() {
        if let Ok(links) = world.get::<&Links>(*entity) {
            assert_eq!(links.target.entity(), *entity);
            assert!(ours.contains(&links.backup.unwrap().entity()));
        }
    }
}

#[test]
fn a_scene_prepared_before_a_hot_reload_is_refused_at_commit() {
    let (dir, mut library) = archetypes();
    let bytes = save(&level(&library, 4), &library, SceneEncoding::Binary);
    let prepared = prepare(&bytes, &library).unwrap();
    dir.write("guard.json", GUARD.replace("10", "12").as_bytes());
    library.reload_all();
    let mut world = World::new();
    let error = prepared.commit(&mut world, &library).unwrap_err();
    assert_eq!(
        error,
        CommitError::Stale {
            archetype: "guard".to_string()
        }
    );
    assert_eq!(
        error.to_string(),
        "archetype `guard` was reloaded after the scene was prepared; prepare the scene again"
    );
    assert_eq!(world.len(), 0);
    // Prepared again, it commits, built from the new version.
    let loaded = prepare(&bytes, &library)
        .unwrap()
        .commit(&mut world, &library)
        .unwrap();
    assert_eq!(loaded.len(), 11);
}

#[test]
fn a_sliced_commit_resolves_references_across_slices() {
    let (_dir, library) = archetypes();
    let saved = level(&library, 1500);
    let bytes = save(&saved, &library, SceneEncoding::Json);
    let mut prepared = prepare(&bytes, &library).unwrap();
    let mut world = World::new();
    let mut slices = Vec::new();
    let loaded = loop {
        let before = prepared.remaining();
        let done = prepared.commit_slice(&mut world, &library, 1024).unwrap();
        slices.push(before - prepared.remaining());
        if let Some(loaded) = done {
            break loaded;
        }
    };
    // Batches: 1024 + 476 guards, as many lamps, 3 crates; a slice takes whole ones.
    assert!(slices.len() >= 3, "{slices:?}");
    assert!(slices.iter().all(|slice| *slice <= 1024), "{slices:?}");
    assert_eq!(slices.iter().sum::<usize>(), 3003);
    assert_eq!(world.len(), 3003);
    assert_references_resolve(&world, &loaded);
    assert!(save(&world, &library, SceneEncoding::Json) == bytes);
    assert_eq!(
        prepared.commit_slice(&mut world, &library, 1).unwrap_err(),
        CommitError::Finished
    );
}

#[test]
fn a_failure_in_the_last_slice_undoes_the_earlier_ones() {
    let (dir, mut library) = archetypes();
    let bytes = save(&level(&library, 1500), &library, SceneEncoding::Binary);
    let mut prepared = prepare(&bytes, &library).unwrap();
    let mut world = World::new();
    let mine = world.spawn((7u8,));
    while prepared.remaining() > 1024 {
        assert!(prepared
            .commit_slice(&mut world, &library, 1024)
            .unwrap()
            .is_none());
    }
    assert!(world.len() > 1000);
    assert!(prepared.remaining() > 0);
    // Between frames, the guard archetype is hot-reloaded: the last slice is refused.
    dir.write("guard.json", GUARD.replace("10", "12").as_bytes());
    library.reload_all();
    let error = prepared
        .commit_slice(&mut world, &library, 1024)
        .unwrap_err();
    assert_eq!(
        error,
        CommitError::Stale {
            archetype: "guard".to_string()
        }
    );
    assert_eq!(world.len(), 1);
    assert!(world.contains(mine));
    assert_eq!(world.query::<&StableId>().iter().count(), 0);
    assert_eq!(
        prepared
            .commit_slice(&mut world, &library, 1024)
            .unwrap_err(),
        CommitError::Finished
    );
}

/// The preparation to cancel when a [`Tripwire`] is decoded.
static TRIPPED: std::sync::Mutex<Option<PrepareProgress>> = std::sync::Mutex::new(None);

/// A component whose decoding cancels the preparation in [`TRIPPED`]: a cancel that arrives
/// in the middle of the decoding, at a known entry.
#[derive(Clone, Debug, serde::Serialize)]
struct Tripwire;

impl<'de> serde::Deserialize<'de> for Tripwire {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer)?;
        if let Some(progress) = TRIPPED.lock().unwrap().as_ref() {
            progress.cancel();
        }
        Ok(Tripwire)
    }
}

#[test]
fn a_cancel_during_the_decoding_stops_it_at_the_next_report() {
    let mut registry = archetype_engine::ComponentRegistry::new();
    registry.register::<Tripwire>().unwrap();
    let library = ArchetypeLibrary::empty("archetypes", registry, Default::default());
    // 3,000 plain entities; the 300th trips the wire.
    let entries: Vec<String> = (1..=3000)
        .map(|i| {
            let components = if i == 300 {
                r#""Tripwire": null, "Name": "trip""#.replace("null", "{}")
            } else {
                format!(r#""Name": "e{i}""#)
            };
            format!(r#"    {{ "id": "{i:016x}", "components": {{ {components} }} }}"#)
        })
        .collect();
    let text = format!(
        "{{\n  \"format\": 2,\n  \"entities\": [\n{}\n  ]\n}}\n",
        entries.join(",\n")
    );
    for careful in [false, true] {
        let progress = PrepareProgress::new();
        *TRIPPED.lock().unwrap() = Some(progress.clone());
        let mut options = SceneLoadOptions::default();
        options.all_errors = careful; // the careful path (check mode) reports too
        let result = PreparedScene::prepare(text.as_bytes(), None, &library, &options, &progress);
        *TRIPPED.lock().unwrap() = None;
        assert_eq!(
            result.unwrap_err(),
            PrepareError::Cancelled,
            "careful: {careful}"
        );
        let (done, total) = progress.bytes();
        assert_eq!(total, text.len() as u64);
        assert!(
            done > 0 && done < total / 2,
            "careful: {careful}: {done} of {total}"
        );
        assert_eq!(progress.entries(), (0, 0));
    }
}

// ---------------------------------------------------------------------------------------------
// Handles reserved on the game thread, references resolved on a worker, a commit that decodes
// nothing.

/// Prepares `bytes` on a worker, reserves on this thread, resolves on another worker.
fn reserve_and_resolve(
    bytes: &[u8],
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
    world: &mut World,
) -> ResolvedScene {
    std::thread::scope(|threads| {
        let prepared = threads
            .spawn(|| {
                PreparedScene::prepare(bytes, None, library, options, &PrepareProgress::new())
            })
            .join()
            .unwrap()
            .unwrap();
        let reserved = prepared.reserve(world);
        threads.spawn(move || reserved.resolve()).join().unwrap()
    })
}

/// The entities that are empty: the handles reserved and not committed.
fn empty_entities(world: &World) -> Vec<hecs::Entity> {
    world
        .iter()
        .filter(|entity| entity.is_empty())
        .map(|entity| entity.entity())
        .collect()
}

#[test]
fn reserved_on_the_game_thread_and_resolved_on_a_worker_commits_the_world_load_scene_loads() {
    let (_dir, library) = archetypes();
    let saved = level(&library, 1500);
    let options = SceneLoadOptions::default();
    for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
        let bytes = save(&saved, &library, encoding);
        let mut world = World::new();
        world.spawn((7u8,));
        let resolved = reserve_and_resolve(&bytes, &library, &options, &mut world);
        // Until the commit: a handle per entity (empty), and the reservation's mark.
        assert_eq!(resolved.len(), 3003);
        assert_eq!(world.len(), 1 + 3003 + 1);
        assert_eq!(empty_entities(&world).len(), 3003);
        let loaded = resolved.commit(&mut world, &library).unwrap();
        assert_eq!(loaded.len(), 3003);
        assert_eq!(world.len(), 3004);
        assert!(empty_entities(&world).is_empty());
        let mut expected = World::new();
        expected.spawn((7u8,));
        load_scene(&bytes, None, &mut expected, &library, &options).unwrap();
        assert!(
            save(&world, &library, SceneEncoding::Json)
                == save(&expected, &library, SceneEncoding::Json),
            "{encoding:?}: the committed world differs from the loaded one"
        );
        assert_references_resolve(&world, &loaded);
    }
}

/// The threads that decoded a [`Witness`].
static DECODED_ON: std::sync::Mutex<Vec<std::thread::ThreadId>> = std::sync::Mutex::new(Vec::new());

/// A component holding a reference, whose decoding records the thread it ran on.
#[derive(Clone, Debug, serde::Serialize)]
struct Witness {
    at: archetype_engine::EntityRef,
}

impl<'de> serde::Deserialize<'de> for Witness {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Fields {
            at: archetype_engine::EntityRef,
        }
        let fields = Fields::deserialize(deserializer)?;
        DECODED_ON.lock().unwrap().push(std::thread::current().id());
        Ok(Witness { at: fields.at })
    }
}

#[test]
fn a_resolved_scene_commits_without_decoding_on_the_game_thread() {
    let mut registry = archetype_engine::ComponentRegistry::new();
    registry.register::<Witness>().unwrap();
    let library = ArchetypeLibrary::empty("archetypes", registry, Default::default());
    // Each entity watches the next one; the last watches the first.
    let entries: Vec<String> = (1..=100)
        .map(|i| {
            let at = i % 100 + 1;
            format!(
                r#"{{ "id": "{i:016x}", "components": {{ "Witness": {{ "at": "{at:016x}" }} }} }}"#
            )
        })
        .collect();
    let text = format!(r#"{{ "format": 2, "entities": [{}] }}"#, entries.join(", "));
    let options = SceneLoadOptions::default();
    let game_thread = std::thread::current().id();
    let decoded_here = || DECODED_ON.lock().unwrap().contains(&game_thread);

    // Without `reserve`, the commit decodes the values holding references here.
    let prepared = std::thread::scope(|threads| {
        threads
            .spawn(|| prepare(text.as_bytes(), &library).unwrap())
            .join()
            .unwrap()
    });
    let mut world = World::new();
    prepared.commit(&mut world, &library).unwrap();
    assert!(
        decoded_here(),
        "the plain commit decodes on the game thread"
    );

    DECODED_ON.lock().unwrap().clear();
    let mut world = World::new();
    let resolved = reserve_and_resolve(text.as_bytes(), &library, &options, &mut world);
    let decoded = DECODED_ON.lock().unwrap().len();
    // Loading decodes each value once; resolving, once more.
    assert_eq!(decoded, 200);
    let loaded = resolved.commit(&mut world, &library).unwrap();
    assert_eq!(
        DECODED_ON.lock().unwrap().len(),
        decoded,
        "the commit decoded"
    );
    assert!(!decoded_here());
    for i in 1..=100u64 {
        let entity = loaded.entity(StableId(i)).unwrap();
        let at = loaded.entity(StableId(i % 100 + 1)).unwrap();
        assert_eq!(world.get::<&Witness>(entity).unwrap().at.entity(), at);
    }
}

#[test]
fn a_cleared_world_is_refused_and_nothing_of_the_worlds_is_despawned() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 4), &library, SceneEncoding::Binary);
    let options = SceneLoadOptions::default();
    let mut world = World::new();
    let first = reserve_and_resolve(&bytes, &library, &options, &mut world);
    world.clear();
    // After the clear, hecs hands the same handles out again: here to a second scene's
    // reservation, and to the game's own entities.
    let second = reserve_and_resolve(&bytes, &library, &options, &mut world);
    let mine: Vec<hecs::Entity> = (0..5u8).map(|i| world.spawn((i,))).collect();
    let before = world.len();
    let error = first.commit(&mut world, &library).unwrap_err();
    assert_eq!(error, CommitError::WorldCleared);
    assert_eq!(
        error.to_string(),
        "the world was cleared after handles were reserved for the scene; prepare the scene again"
    );
    assert_eq!(world.len(), before);
    for (i, entity) in mine.iter().enumerate() {
        assert_eq!(*world.get::<&u8>(*entity).unwrap(), i as u8);
    }
    // The second scene's reservation is intact: it commits.
    let loaded = second.commit(&mut world, &library).unwrap();
    assert_eq!(loaded.len(), 11);
    assert_eq!(world.len(), 11 + 5);
    assert_references_resolve(&world, &loaded);
}

#[test]
fn a_reserved_entity_despawned_or_given_components_is_refused_and_the_rest_released() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 4), &library, SceneEncoding::Json);
    let options = SceneLoadOptions::default();
    for given_components in [false, true] {
        let mut world = World::new();
        let mine = world.spawn((7u8,));
        let resolved = reserve_and_resolve(&bytes, &library, &options, &mut world);
        let taken = empty_entities(&world)[3];
        if given_components {
            world.insert_one(taken, Name::from("squatter")).unwrap();
        } else {
            world.despawn(taken).unwrap();
        }
        let error = resolved.commit(&mut world, &library).unwrap_err();
        assert_eq!(error, CommitError::ReservedEntityLost { entity: taken });
        assert_eq!(
            error.to_string(),
            format!("entity {taken:?}, reserved for the scene, was despawned or given components before the commit; prepare the scene again")
        );
        // The scene's handles are released; what the game made of one is the game's.
        assert!(world.contains(mine));
        if given_components {
            assert_eq!(world.len(), 2);
            assert_eq!(world.get::<&Name>(taken).unwrap().as_str(), "squatter");
            assert_eq!(world.entity(taken).unwrap().len(), 1);
        } else {
            assert_eq!(world.len(), 1);
        }
    }
}

#[test]
fn a_failed_commit_after_a_first_slice_takes_back_the_slice_and_leaves_the_games_entity() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 4), &library, SceneEncoding::Json);
    let mut world = World::new();
    let mut resolved =
        reserve_and_resolve(&bytes, &library, &SceneLoadOptions::default(), &mut world);
    assert!(resolved
        .commit_slice(&mut world, &library, 1)
        .unwrap()
        .is_none());
    let committed = world.iter().filter(|entity| !entity.is_empty()).count();
    assert!(committed > 1, "the slice and the reservation's mark");
    let squatter = empty_entities(&world)[0];
    world.insert_one(squatter, Name::from("squatter")).unwrap();
    let error = resolved
        .commit_slice(&mut world, &library, usize::MAX)
        .unwrap_err();
    assert_eq!(error, CommitError::ReservedEntityLost { entity: squatter });
    assert_eq!(world.len(), 1, "the slice and the empty handles are gone");
    assert_eq!(world.get::<&Name>(squatter).unwrap().as_str(), "squatter");

    // The same when the scene is dropped after its first slice: the next reservation releases
    // it and leaves the game's entity.
    let mut world = World::new();
    let mut resolved =
        reserve_and_resolve(&bytes, &library, &SceneLoadOptions::default(), &mut world);
    assert!(resolved
        .commit_slice(&mut world, &library, 1)
        .unwrap()
        .is_none());
    let squatter = empty_entities(&world)[0];
    world.insert_one(squatter, Name::from("squatter")).unwrap();
    drop(resolved);
    let next = reserve_and_resolve(&bytes, &library, &SceneLoadOptions::default(), &mut world);
    assert!(world.contains(squatter));
    next.commit(&mut world, &library).unwrap();
    assert_eq!(world.get::<&Name>(squatter).unwrap().as_str(), "squatter");
}

#[test]
fn a_resolved_scene_refuses_what_a_prepared_one_refuses_with_the_world_as_before_the_reservation() {
    let (dir, mut library) = archetypes();
    let bytes = save(&level(&library, 2), &library, SceneEncoding::Json);
    let options = SceneLoadOptions::default();
    let mut world = World::new();
    load_scene(&bytes, None, &mut world, &library, &options).unwrap();
    let before = save(&world, &library, SceneEncoding::Json);

    // An ID already in the world: the load's own error.
    let resolved = reserve_and_resolve(&bytes, &library, &options, &mut world);
    let error = resolved.commit(&mut world, &library).unwrap_err();
    let expected = load_scene(&bytes, None, &mut world, &library, &options).unwrap_err();
    assert_eq!(error, CommitError::Scene(expected.clone()));
    let first = expected.entity().unwrap();
    assert_eq!(
        error.to_string(),
        format!("error[duplicate-key]: entity {first} is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs")
    );
    assert_eq!(world.len(), 7);
    assert!(save(&world, &library, SceneEncoding::Json) == before);

    // With Remap: fresh IDs, references inside the copy.
    let mut remap = SceneLoadOptions::default();
    remap.on_id_conflict = IdConflict::Remap;
    let resolved = reserve_and_resolve(&bytes, &library, &remap, &mut world);
    let copy = resolved.commit(&mut world, &library).unwrap();
    assert_eq!(world.len(), 14);
    assert_references_resolve_in(&world, &copy);

    // An archetype hot-reloaded between the reservation and the commit.
    let mut world = World::new();
    let resolved = reserve_and_resolve(&bytes, &library, &options, &mut world);
    dir.write("guard.json", GUARD.replace("10", "12").as_bytes());
    library.reload_all();
    let error = resolved.commit(&mut world, &library).unwrap_err();
    assert_eq!(
        error.to_string(),
        "archetype `guard` was reloaded after the scene was prepared; prepare the scene again"
    );
    assert_eq!(world.len(), 0);
}

#[test]
fn a_resolved_scene_commits_in_slices_and_abandon_takes_it_back() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 1500), &library, SceneEncoding::Binary);
    let options = SceneLoadOptions::default();
    let mut world = World::new();
    let mine = world.spawn((7u8,));
    let mut resolved = reserve_and_resolve(&bytes, &library, &options, &mut world);
    let mut slices = 0;
    let loaded = loop {
        slices += 1;
        if let Some(loaded) = resolved.commit_slice(&mut world, &library, 1024).unwrap() {
            break loaded;
        }
        assert!(resolved.remaining() > 0);
    };
    assert!(slices >= 3, "{slices}");
    assert_eq!(world.len(), 3004);
    assert_references_resolve(&world, &loaded);
    assert!(save(&world, &library, SceneEncoding::Binary) == bytes);
    // Abandoned after the last slice: the scene's entities go.
    resolved.abandon(&mut world);
    assert_eq!(world.len(), 1);
    assert!(world.contains(mine));
}

#[test]
fn a_scene_reserved_after_its_first_slices_keeps_their_handles_and_commits_the_rest() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 1500), &library, SceneEncoding::Binary);
    let mut world = World::new();
    let mut prepared = prepare(&bytes, &library).unwrap();
    assert!(prepared
        .commit_slice(&mut world, &library, 1024)
        .unwrap()
        .is_none());
    let reserved = prepared.reserve(&mut world);
    let resolved = std::thread::spawn(move || reserved.resolve())
        .join()
        .unwrap();
    let loaded = resolved.commit(&mut world, &library).unwrap();
    assert_eq!(world.len(), 3003);
    assert_references_resolve(&world, &loaded);
    assert!(save(&world, &library, SceneEncoding::Binary) == bytes);
}

#[test]
fn reserved_handles_are_released_by_abandon_and_after_a_drop() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 4), &library, SceneEncoding::Json);
    let mut world = World::new();
    world.spawn((7u8,));
    let reserved = prepare(&bytes, &library).unwrap().reserve(&mut world);
    assert_eq!(reserved.len(), 11);
    assert_eq!(world.len(), 1 + 11 + 1);
    reserved.abandon(&mut world);
    assert_eq!(world.len(), 1);

    // Dropped, reserved or resolved: the next reservation (or commit) releases the handles.
    drop(prepare(&bytes, &library).unwrap().reserve(&mut world));
    assert_eq!(world.len(), 1 + 11 + 1);
    let reserved = prepare(&bytes, &library).unwrap().reserve(&mut world);
    assert_eq!(
        world.len(),
        1 + 11 + 1,
        "the dropped scene's handles are released"
    );
    drop(reserved.resolve());
    assert_eq!(world.len(), 1 + 11 + 1);
    let loaded = prepare(&bytes, &library)
        .unwrap()
        .commit(&mut world, &library)
        .unwrap();
    assert_eq!(world.len(), 1 + 11);
    assert_references_resolve(&world, &loaded);
}

#[test]
fn a_world_cleared_between_slices_is_refused_and_a_scene_dropped_between_slices_is_taken_back() {
    let (_dir, library) = archetypes();
    let bytes = save(&level(&library, 1500), &library, SceneEncoding::Binary);
    let mut world = World::new();
    let mut prepared = prepare(&bytes, &library).unwrap();
    assert!(prepared
        .commit_slice(&mut world, &library, 1024)
        .unwrap()
        .is_none());
    world.clear();
    // The game's entity gets the first handle the scene reserved.
    let mine = world.spawn((7u8,));
    let error = prepared
        .commit_slice(&mut world, &library, 1024)
        .unwrap_err();
    assert_eq!(error, CommitError::WorldCleared);
    assert_eq!(world.len(), 1);
    assert_eq!(*world.get::<&u8>(mine).unwrap(), 7);

    // Dropped between slices: the next commit into the world takes its entities back.
    let mut dropped = prepare(&bytes, &library).unwrap();
    assert!(dropped
        .commit_slice(&mut world, &library, 1024)
        .unwrap()
        .is_none());
    assert!(world.len() > 1000);
    drop(dropped);
    let loaded = prepare(&bytes, &library)
        .unwrap()
        .commit(&mut world, &library)
        .unwrap();
    assert_eq!(world.len(), 1 + 3003);
    assert_references_resolve(&world, &loaded);
}
