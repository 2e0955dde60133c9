//! Property tests (proptest): random worlds round-trip through scenes, and every way of loading
//! a scene (either reader, a file written another way, check mode) gives the world it was saved
//! from; random merge patches obey RFC 7396; random archetype trees resolve the same loaded at
//! once or edit by edit.
//!
//! Each property runs 64 cases by default, to keep CI quick; `PROPTEST_CASES=5000 cargo test
//! -p archetool --test it properties` runs more. A failure prints the shrunk input.

use std::collections::BTreeMap;

use archetype_engine::{
    load_scene, load_scene_from_path, merge_patch, save_scene, sub_scene_id, ArchetypeInstance,
    ArchetypeLibrary, ComponentRegistry, EntityRef, LoadOptions, SceneDocument, SceneEncoding,
    SceneLoadOptions, SceneSaveOptions, StableId,
};
use hecs::{Entity, World};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// 64 cases unless `PROPTEST_CASES` says otherwise.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// (a) Worlds with random reference graphs round-trip through scenes.

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Link {
    target: EntityRef,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct MaybeLink {
    target: Option<EntityRef>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Links {
    all: Vec<EntityRef>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Tag {
    label: String,
    weight: f32,
    count: u32,
}

fn graph_registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Link>().unwrap();
    registry.register::<MaybeLink>().unwrap();
    registry.register::<Links>().unwrap();
    registry.register::<Tag>().unwrap();
    registry
}

/// Archetypes whose instances hold references among their own entities.
fn graph_library() -> ArchetypeLibrary {
    let mut library =
        ArchetypeLibrary::empty("archetypes", graph_registry(), LoadOptions::default());
    library.set_sources([
        (
            "node.json",
            Some(r#"{ "components": { "Tag": { "label": "node", "weight": 1.5, "count": 1 } } }"#),
        ),
        (
            "pair.json",
            Some(
                r##"{
                "components": { "Link": { "target": "#left" }, "Tag": { "label": "pair" } },
                "children": {
                    "left": { "components": { "MaybeLink": { "target": "#right" } } },
                    "right": { "components": { "Links": { "all": ["#", "#left", "#right"] } } }
                }
            }"##,
            ),
        ),
    ]);
    assert!(
        library.diagnostics().is_empty(),
        "{:?}",
        library.diagnostics()
    );
    library
}

/// One entity of a random world: an archetype instance or a plain entity, and what it gets.
#[derive(Clone, Debug)]
struct EntityPlan {
    /// `None`: plain; `Some(0)`: `node`; `Some(1)`: `pair` (three entities).
    archetype: Option<u8>,
    /// Targets are indices into every entity of the world (taken modulo its size).
    link: Option<usize>,
    maybe_link: Option<Option<usize>>,
    links: Option<Vec<usize>>,
    tag: Option<(String, f32, u32)>,
}

fn entity_plan() -> impl Strategy<Value = EntityPlan> {
    (
        prop_oneof![3 => Just(None), 1 => Just(Some(0u8)), 1 => Just(Some(1u8))],
        proptest::option::of(0usize..64),
        proptest::option::of(proptest::option::of(0usize..64)),
        proptest::option::of(proptest::collection::vec(0usize..64, 0..4)),
        proptest::option::of(("[a-z]{0,6}", -1000.0f32..1000.0, any::<u32>())),
    )
        .prop_map(|(archetype, link, maybe_link, links, tag)| EntityPlan {
            archetype,
            link,
            maybe_link,
            links,
            tag,
        })
}

/// Builds the world: instances and plain entities first, then the random references (which
/// may point anywhere, the entity itself included).
fn build_world(library: &ArchetypeLibrary, plans: &[EntityPlan]) -> World {
    let mut world = World::new();
    let mut roots = Vec::new();
    for plan in plans {
        let root = match plan.archetype {
            Some(0) => library.spawn(&mut world, "node").unwrap(),
            Some(_) => library.spawn(&mut world, "pair").unwrap(),
            None => world.spawn((StableId::generate(),)),
        };
        roots.push(root);
    }
    let mut all: Vec<Entity> = world.iter().map(|e| e.entity()).collect();
    all.sort_by_key(|e| e.to_bits());
    let pick = |i: usize| EntityRef(all[i % all.len()]);
    for (plan, &entity) in plans.iter().zip(&roots) {
        if let Some(target) = plan.link {
            world
                .insert_one(
                    entity,
                    Link {
                        target: pick(target),
                    },
                )
                .unwrap();
        }
        if let Some(target) = plan.maybe_link {
            let target = target.map(pick);
            world.insert_one(entity, MaybeLink { target }).unwrap();
        }
        if let Some(targets) = &plan.links {
            let all = targets.iter().map(|&t| pick(t)).collect();
            world.insert_one(entity, Links { all }).unwrap();
        }
        if let Some((label, weight, count)) = &plan.tag {
            let tag = Tag {
                label: label.clone(),
                weight: *weight,
                count: *count,
            };
            world.insert_one(entity, tag).unwrap();
        }
    }
    world
}

/// The reference graph by stable ID, with every entity's other data.
type Graph = BTreeMap<
    StableId,
    (
        Option<StableId>,
        Option<Option<StableId>>,
        Option<Vec<StableId>>,
        Option<Tag>,
    ),
>;

fn graph(world: &World) -> Graph {
    let id = |r: &EntityRef| *world.get::<&StableId>(r.entity()).unwrap();
    world
        .query::<(
            &StableId,
            Option<&Link>,
            Option<&MaybeLink>,
            Option<&Links>,
            Option<&Tag>,
        )>()
        .iter()
        .map(|(stable, link, maybe, links, tag)| {
            (
                *stable,
                (
                    link.map(|l| id(&l.target)),
                    maybe.map(|m| m.target.as_ref().map(id)),
                    links.map(|l| l.all.iter().map(id).collect()),
                    tag.cloned(),
                ),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_reference_graphs_round_trip_through_scenes(
        plans in proptest::collection::vec(entity_plan(), 1..10)
    ) {
        let library = graph_library();
        let world = build_world(&library, &plans);
        let expected = graph(&world);
        for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
            let saved = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
            let mut loaded = World::new();
            load_scene(&saved, None, &mut loaded, &library, &SceneLoadOptions::default()).unwrap();
            prop_assert_eq!(&graph(&loaded), &expected, "{:?}", encoding);
            let again = save_scene(&loaded, &library, encoding, &SceneSaveOptions::default()).unwrap();
            prop_assert!(saved == again, "{:?} load -> save changed the bytes", encoding);
        }
    }
}

/// Each instance's override shape (by stable ID) as the library keeps it: which places its
/// overrides set.
fn override_shapes(world: &World, library: &ArchetypeLibrary) -> BTreeMap<StableId, Value> {
    world
        .query::<(&StableId, &ArchetypeInstance)>()
        .iter()
        .filter_map(|(id, marker)| {
            let shape = library.instance_overrides(marker)?;
            Some((*id, Value::Object((*shape.0).clone())))
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    /// The one-pass reader (taken whenever a file is as the library writes it) and the careful
    /// one (`all_errors` takes it always) build the same world from the same scene: instances
    /// with overrides, plain entities and references, in both encodings.
    #[test]
    fn fast_and_careful_readers_build_the_same_world(
        plans in proptest::collection::vec(entity_plan(), 1..10)
    ) {
        let library = graph_library();
        let world = build_world(&library, &plans);
        for encoding in [SceneEncoding::Json, SceneEncoding::Binary] {
            let saved = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
            let mut fast = World::new();
            load_scene(&saved, None, &mut fast, &library, &SceneLoadOptions::default()).unwrap();
            let mut careful = World::new();
            let mut options = SceneLoadOptions::default();
            options.all_errors = true;
            load_scene(&saved, None, &mut careful, &library, &options).unwrap();
            prop_assert_eq!(graph(&fast), graph(&careful), "{:?}", encoding);
            prop_assert_eq!(fast.len(), careful.len(), "{:?}", encoding);
            prop_assert_eq!(
                override_shapes(&fast, &library),
                override_shapes(&careful, &library),
                "{:?}",
                encoding
            );
            // Instances, their archetypes and overrides: what a save writes of each world.
            let resave = |world: &World| {
                save_scene(world, &library, encoding, &SceneSaveOptions::default()).unwrap()
            };
            prop_assert!(resave(&fast) == resave(&careful), "{:?}: the worlds save differently", encoding);
        }
    }
}

/// The same JSON document written another way than the library writes it: keys sorted and
/// pretty-printed (`escaped == false`), or keys in reverse order, compact, with every string's
/// characters written as `\u` escapes (`escaped == true`). A reader may not count on the
/// library's layout.
fn written_another_way(saved: &[u8], escaped: bool) -> Vec<u8> {
    let value: Value = serde_json::from_slice(saved).unwrap();
    if !escaped {
        return serde_json::to_vec_pretty(&value).unwrap();
    }
    fn string(out: &mut String, text: &str) {
        out.push('"');
        for unit in text.encode_utf16() {
            out.push_str(&format!("\\u{unit:04x}"));
        }
        out.push('"');
    }
    fn write(out: &mut String, value: &Value) {
        match value {
            Value::Object(members) => {
                out.push('{');
                for (i, (key, member)) in members.iter().rev().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    string(out, key);
                    out.push(':');
                    write(out, member);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(out, item);
                }
                out.push(']');
            }
            Value::String(text) => string(out, text),
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(&mut out, &value);
    out.into_bytes()
}

proptest! {
    #![proptest_config(config())]

    /// The world a scene was saved from is the reference every way of loading the scene is held
    /// to: the file as saved, written another way (key order, whitespace, escapes), and in
    /// check mode. Each loads the saved world's entities, references and data, and saves again
    /// to the very bytes first saved (instances, archetypes and overrides included).
    #[test]
    fn every_way_of_loading_a_scene_gives_the_world_it_was_saved_from(
        plans in proptest::collection::vec(entity_plan(), 1..10)
    ) {
        let library = graph_library();
        let world = build_world(&library, &plans);
        let expected = graph(&world);
        let save = |world: &World, encoding| {
            save_scene(world, &library, encoding, &SceneSaveOptions::default()).unwrap()
        };
        let mut check_mode = SceneLoadOptions::default();
        check_mode.all_errors = true;
        let saved_json = save(&world, SceneEncoding::Json);
        let files = [
            (SceneEncoding::Json, saved_json.clone(), "as saved"),
            (SceneEncoding::Json, written_another_way(&saved_json, false), "sorted, pretty"),
            (SceneEncoding::Json, written_another_way(&saved_json, true), "reversed, escaped"),
            (SceneEncoding::Binary, save(&world, SceneEncoding::Binary), "as saved"),
        ];
        for (encoding, file, how) in &files {
            // The model tools read holds the same entities.
            let document = SceneDocument::read(file, None, &library);
            prop_assert!(document.is_ok(), "{:?} {}: {:?}", encoding, how, document.err());
            let ids = document.iter().flat_map(|d| d.entries()).map(|entry| entry.id);
            prop_assert!(ids.eq(expected.keys().copied()), "{:?} {}: document IDs", encoding, how);
            for options in [&SceneLoadOptions::default(), &check_mode] {
                let mut loaded = World::new();
                let scene = load_scene(file, None, &mut loaded, &library, options);
                prop_assert!(scene.is_ok(), "{:?} {}: {:?}", encoding, how, scene.err());
                prop_assert_eq!(&graph(&loaded), &expected, "{:?} {}", encoding, how);
                prop_assert_eq!(loaded.len(), world.len(), "{:?} {}", encoding, how);
                prop_assert!(
                    save(&loaded, *encoding) == save(&world, *encoding),
                    "{:?} {} (all_errors: {}): the loaded world saves differently",
                    encoding,
                    how,
                    options.all_errors
                );
            }
        }
    }
}

/// `graph` with every stable ID as the entity gets it placed by `placing` (a sub-scene).
fn placed_graph(graph: &Graph, placing: StableId) -> Graph {
    let id = |own: StableId| sub_scene_id(placing, own);
    graph
        .iter()
        .map(|(own, (link, maybe, links, tag))| {
            let links = links
                .as_ref()
                .map(|all| all.iter().copied().map(id).collect());
            (
                id(*own),
                (link.map(id), maybe.map(|m| m.map(id)), links, tag.clone()),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    /// A saved world placed twice as a sub-scene (JSON or binary) by a level loads as two copies
    /// of that world, each entity with the ID its placement derives and its references inside
    /// its copy, beside the two placing entities.
    #[test]
    fn a_scene_placed_twice_loads_as_two_copies_of_the_world_it_was_saved_from(
        plans in proptest::collection::vec(entity_plan(), 1..8)
    ) {
        let library = graph_library();
        let world = build_world(&library, &plans);
        let dir = tempfile::tempdir().unwrap();
        let (east, west) = (StableId(0xc1), StableId(0xc2));
        for (encoding, part) in [(SceneEncoding::Json, "part.scene.json"), (SceneEncoding::Binary, "part.scene.bin")] {
            let saved = save_scene(&world, &library, encoding, &SceneSaveOptions::default()).unwrap();
            std::fs::write(dir.path().join(part), saved).unwrap();
            let level = format!(
                r#"{{ "format": 2, "entities": [
                    {{ "id": "{east}", "scene": "{part}" }},
                    {{ "id": "{west}", "scene": "{part}" }}
                ] }}"#
            );
            let path = dir.path().join("level.scene.json");
            std::fs::write(&path, level).unwrap();
            let mut expected = placed_graph(&graph(&world), east);
            expected.extend(placed_graph(&graph(&world), west));
            expected.insert(east, (None, None, None, None));
            expected.insert(west, (None, None, None, None));
            let mut loaded = World::new();
            let scene = load_scene_from_path(&path, &mut loaded, &library, &SceneLoadOptions::default());
            prop_assert!(scene.is_ok(), "{:?}: {:?}", encoding, scene.err());
            prop_assert_eq!(&graph(&loaded), &expected, "{:?}", encoding);
            prop_assert_eq!(loaded.len(), 2 * world.len() + 2, "{:?}", encoding);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (b) Merge patches (RFC 7396).

/// JSON values over a few keys, so that patches and targets overlap.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(Value::from),
        prop_oneof![Just("x"), Just("y")].prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![Just("a"), Just("b"), Just("c"), Just("d")],
                inner,
                0..4
            )
            .prop_map(|members| Value::Object(
                members
                    .into_iter()
                    .map(|(key, value)| (key.to_string(), value))
                    .collect::<Map<String, Value>>()
            )),
        ]
    })
}

/// `value` without `null` object members (anywhere, arrays included): what merge patch can
/// produce.
fn without_null_members(value: Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_null_members(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_null_members).collect()),
        other => other,
    }
}

/// Whether an object (or an object inside it) has a `null` member; arrays are not looked
/// into (a patch replaces arrays whole, nulls and all).
fn has_null_members(value: &Value) -> bool {
    match value {
        Value::Object(members) => members.values().any(|v| v.is_null() || has_null_members(v)),
        _ => false,
    }
}

fn applied(target: &Value, patch: &Value) -> Value {
    merge_patch::merged(Some(target), patch)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn applying_a_patch_twice_is_applying_it_once(target in json_value(), patch in json_value()) {
        let once = applied(&target, &patch);
        prop_assert_eq!(applied(&once, &patch), once);
    }

    #[test]
    fn the_diff_of_two_values_turns_one_into_the_other(a in json_value(), b in json_value()) {
        let b = without_null_members(b);
        match merge_patch::diff(&a, &b) {
            Some(patch) => prop_assert_eq!(applied(&a, &patch), b),
            None => prop_assert_eq!(a, b),
        }
    }

    #[test]
    fn a_value_has_no_diff_with_itself(a in json_value()) {
        prop_assert_eq!(merge_patch::diff(&a, &a), None);
    }

    #[test]
    fn patches_never_add_null_members(target in json_value(), patch in json_value()) {
        let target = without_null_members(target);
        let result = applied(&target, &patch);
        prop_assert!(!has_null_members(&result), "{} + {} = {}", target, patch, result);
    }

    #[test]
    fn apply_in_place_is_merged(target in json_value(), patch in json_value()) {
        let mut in_place = target.clone();
        merge_patch::apply(&mut in_place, &patch);
        prop_assert_eq!(in_place, applied(&target, &patch));
    }
}

#[test]
fn a_non_object_patch_replaces_the_target() {
    for patch in [json!(1), json!([1, null]), json!("x"), json!(null)] {
        assert_eq!(applied(&json!({"a": 1}), &patch), patch);
    }
}

// ---------------------------------------------------------------------------------------------
// (c) Archetype trees resolve the same loaded at once or edit by edit.

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Stat {
    hp: u32,
    speed: f32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Flags {
    a: bool,
    b: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Label(String);

fn tree_registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Stat>().unwrap();
    registry.register::<Flags>().unwrap();
    registry.register::<Label>().unwrap();
    registry
}

/// Component values, some partial (merged over the parents'), some `null` (removing).
fn components() -> impl Strategy<Value = Map<String, Value>> {
    let stat = prop_oneof![
        Just(Value::Null),
        (
            proptest::option::of(0u32..100),
            proptest::option::of(0u32..8)
        )
            .prop_map(|(hp, speed)| {
                let mut stat = Map::new();
                if let Some(hp) = hp {
                    stat.insert("hp".into(), json!(hp));
                }
                if let Some(speed) = speed {
                    stat.insert("speed".into(), json!(f64::from(speed) / 2.0));
                }
                Value::Object(stat)
            }),
    ];
    let flags = prop_oneof![
        Just(Value::Null),
        (any::<bool>(), proptest::option::of(any::<bool>())).prop_map(|(a, b)| match b {
            Some(b) => json!({ "a": a, "b": b }),
            None => json!({ "a": a }),
        }),
    ];
    let label = prop_oneof![Just(Value::Null), "[a-z]{1,4}".prop_map(Value::from)];
    (
        proptest::option::of(stat),
        proptest::option::of(flags),
        proptest::option::of(label),
    )
        .prop_map(|(stat, flags, label)| {
            let mut out = Map::new();
            for (name, value) in [("Stat", stat), ("Flags", flags), ("Label", label)] {
                if let Some(value) = value {
                    out.insert(name.to_string(), value);
                }
            }
            out
        })
}

/// One archetype file of a tree of `count` archetypes `a0`, `a1`, ...: archetype `index` may
/// extend and contain (as children) only archetypes with a lower index, so the tree is a DAG.
/// It may list a former name (`old{index}`), and name its parents by their former names.
fn archetype_file(index: usize) -> impl Strategy<Value = Value> {
    let parents = proptest::sample::subsequence((0..index).collect::<Vec<_>>(), 0..=index.min(2));
    let child = (
        proptest::option::of(proptest::sample::select(
            (0..index.max(1)).collect::<Vec<_>>(),
        )),
        components(),
    );
    let children = proptest::collection::btree_map(
        prop_oneof![Just("x"), Just("y")],
        proptest::option::of(child),
        0..3,
    );
    let names = (any::<bool>(), any::<bool>());
    (any::<bool>(), parents, components(), children, names).prop_map(
        move |(is_abstract, parents, components, children, (formerly, old_parents))| {
            let mut file = Map::new();
            if is_abstract {
                file.insert("abstract".into(), json!(true));
            }
            if formerly {
                file.insert("formerly".into(), json!([format!("old{index}")]));
            }
            if !parents.is_empty() {
                let prefix = if old_parents { "old" } else { "a" };
                let names: Vec<String> = parents.iter().map(|p| format!("{prefix}{p}")).collect();
                file.insert("extends".into(), json!(names));
            }
            file.insert("components".into(), Value::Object(components));
            let mut entries = Map::new();
            for (name, child) in children {
                let entry = match child {
                    None => Value::Null,
                    Some((archetype, components)) => {
                        let mut entry = Map::new();
                        // Only lower indices: `a0` has no archetype to name.
                        if let Some(archetype) = archetype.filter(|_| index > 0) {
                            entry.insert("archetype".into(), json!(format!("a{archetype}")));
                        }
                        entry.insert("components".into(), Value::Object(components));
                        Value::Object(entry)
                    }
                };
                entries.insert(name.to_string(), entry);
            }
            file.insert("children".into(), Value::Object(entries));
            Value::Object(file)
        },
    )
}

/// What happens to one file on the way to its final version: broken texts and other valid
/// versions it goes through first.
#[derive(Clone, Debug)]
enum Detour {
    Broken(&'static str),
    Other(Value),
    Deleted,
    /// A file whose name differs from this one's only in letter case (`A1.json` beside
    /// `a1.json`, a case conflict) comes, this file is edited meanwhile, and it goes.
    CaseTwin(Value),
}

/// Broken versions of a file: a syntax error, a wrong type, missing parents (one whose "did
/// you mean" depends on whether `a0` exists), (for `a0`) a cycle, and a former name another
/// file may claim too.
const BROKEN: [&str; 6] = [
    "{ \"components\": ",
    r#"{ "components": { "Stat": { "hp": "lots" } } }"#,
    r#"{ "extends": "nowhere" }"#,
    r#"{ "extends": "aa0" }"#,
    r#"{ "extends": "a0", "children": { "z": { "archetype": "a0" } } }"#,
    r#"{ "formerly": ["old0"], "extends": "old1" }"#,
];

fn detour(index: usize) -> impl Strategy<Value = Detour> {
    prop_oneof![
        proptest::sample::select(BROKEN.to_vec()).prop_map(Detour::Broken),
        archetype_file(index).prop_map(Detour::Other),
        Just(Detour::Deleted),
        archetype_file(index).prop_map(Detour::CaseTwin),
    ]
}

/// A tree of 2..6 archetypes as file texts (the final version of a few files broken), the
/// order its files are edited in, and each file's detours.
fn tree_and_edits() -> impl Strategy<Value = (Vec<String>, Vec<(usize, Vec<Detour>)>)> {
    (2usize..6).prop_flat_map(|count| {
        let files: Vec<_> = (0..count)
            .map(|i| {
                let broken =
                    proptest::option::weighted(0.15, proptest::sample::select(BROKEN.to_vec()));
                (archetype_file(i), broken).prop_map(|(file, broken)| match broken {
                    Some(text) => text.to_string(),
                    None => serde_json::to_string_pretty(&file).unwrap(),
                })
            })
            .collect();
        let detours: Vec<_> = (0..count)
            .map(|i| proptest::collection::vec(detour(i), 0..3).prop_map(move |d| (i, d)))
            .collect();
        (files, detours.prop_shuffle())
    })
}

fn file_name(index: usize) -> String {
    format!("a{index}.json")
}

/// Every diagnostic (errors and warnings) as text.
fn diagnostics(library: &ArchetypeLibrary) -> Vec<String> {
    (library.diagnostics().iter())
        .map(|d| d.to_string())
        .collect()
}

/// Every diagnostic as text, and every archetype's resolved content, where it has one.
fn library_state(library: &ArchetypeLibrary) -> (Vec<String>, BTreeMap<String, Value>) {
    let diagnostics = library
        .diagnostics()
        .iter()
        .map(|d| d.to_string())
        .collect();
    let resolved = library
        .names()
        .filter_map(|name| Some((name.to_string(), library.get(name)?.resolved().to_json())))
        .collect();
    (diagnostics, resolved)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn archetype_trees_resolve_the_same_at_once_or_edit_by_edit(
        (texts, edits) in tree_and_edits()
    ) {
        let at_once = |files: &BTreeMap<String, String>| {
            let mut library = ArchetypeLibrary::empty("archetypes", tree_registry(), LoadOptions::default());
            library.set_sources(files.iter().map(|(name, text)| (name, Some(text.as_str()))));
            library
        };
        let mut by_edits = ArchetypeLibrary::empty("archetypes", tree_registry(), LoadOptions::default());
        // The files as they are after each edit: first, files that take no part, so that one
        // file coming or going is a small part of the library (which follows it name by name,
        // rather than in passes over every name).
        let mut files: BTreeMap<String, String> = padding();
        by_edits.set_sources(files.iter().map(|(name, text)| (name, Some(text.as_str()))));
        // Each edit, checked against the library loaded at once from the files it leaves: the
        // library kept up to date edit by edit finds the errors and warnings a fresh load
        // finds, whatever the order of the edits.
        let mut edit = |by_edits: &mut ArchetypeLibrary, name: String, text: Option<String>| {
            by_edits.set_source(&name, text.as_deref());
            match text {
                Some(text) => files.insert(name, text),
                None => files.remove(&name),
            };
            prop_assert_eq!(diagnostics(by_edits), diagnostics(&at_once(&files)));
            Ok(())
        };
        // First every file's detours, in the shuffled order, then every final version.
        for (index, detours) in &edits {
            for detour in detours {
                let name = file_name(*index);
                match detour {
                    Detour::Broken(text) => edit(&mut by_edits, name, Some(text.to_string()))?,
                    Detour::Other(file) => {
                        edit(&mut by_edits, name, Some(serde_json::to_string(file).unwrap()))?
                    }
                    Detour::Deleted => edit(&mut by_edits, name, None)?,
                    Detour::CaseTwin(file) => {
                        let twin = name.to_uppercase().replace(".JSON", ".json");
                        edit(&mut by_edits, twin.clone(), Some("{}".to_string()))?;
                        edit(&mut by_edits, name, Some(serde_json::to_string(file).unwrap()))?;
                        edit(&mut by_edits, twin, None)?;
                    }
                }
            }
        }
        for (index, _) in &edits {
            edit(&mut by_edits, file_name(*index), Some(texts[*index].clone()))?;
        }

        let (expected_diagnostics, expected_resolved) = library_state(&at_once(&files));
        let (diagnostics, resolved) = library_state(&by_edits);
        prop_assert_eq!(diagnostics, expected_diagnostics);
        // Where the final files have an archetype in effect, the edited library has the same
        // one (where they do not, it may still serve a last good version).
        for (name, value) in &expected_resolved {
            prop_assert_eq!(resolved.get(name), Some(value), "{}", name);
        }
    }
}

/// Forty files of plain archetypes under `padding/`, which no other file names.
fn padding() -> BTreeMap<String, String> {
    (0..40)
        .map(|i| (format!("padding/p{i}.json"), "{}".to_string()))
        .collect()
}

#[test]
fn a_new_file_updates_the_suggestions_for_missing_parents() {
    // Alone, and among many files (where a new name is followed name by name).
    for padding in [BTreeMap::new(), padding()] {
        let goblin = r#"{ "extends": "bsae" }"#;
        let base = r#"{ "abstract": true }"#;
        let pads = || {
            padding
                .iter()
                .map(|(name, text)| (name.as_str(), Some(text.as_str())))
        };
        let mut edited =
            ArchetypeLibrary::empty("archetypes", tree_registry(), LoadOptions::default());
        edited.set_sources(pads());
        edited.set_source("goblin.json", Some(goblin));
        edited.set_source("base.json", Some(base));
        let mut at_once =
            ArchetypeLibrary::empty("archetypes", tree_registry(), LoadOptions::default());
        let files = [("goblin.json", Some(goblin)), ("base.json", Some(base))];
        at_once.set_sources(pads().chain(files));
        let help: Vec<_> = edited.diagnostics().iter().map(|d| d.help()).collect();
        assert_eq!(help, [Some("did you mean `base`?".to_string())]);
        assert_eq!(edited.diagnostics(), at_once.diagnostics());
        edited.set_source("base.json", None);
        assert_eq!(edited.diagnostics()[0].help(), None);
    }
}
