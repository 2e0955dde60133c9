//! Scene workloads: one world of plain entities saved and loaded by the library
//! ([`save_scene`], [`load_scene`]) and by hecs's own serializers on the same world
//! (`hecs::serialize::row` with serde_json, `hecs::serialize::column` with postcard).
//!
//! The world: `n` entities, each with a [`StableId`] and six components — `Name` (a heap
//! string), `Transform`, [`Health`], [`Velocity`], [`Faction`], and either [`Loot`] (70%) or
//! [`Follow`] (30%), whose `leader` refers to another entity. They are plain entities, not
//! archetype instances, so both sides write every component in full.
//!
//! What each side writes:
//! - JSON: both through serde_json's pretty printer (two-space indent). The library writes
//!   `{"format", "entities": [{"id", "components": {..}}, ..]}` sorted by stable ID, with
//!   references as the target's stable ID (16 hex digits); hecs's row format writes
//!   `{"<entity bits>": {"<component>": value, ..}, ..}` in storage order, with references as
//!   raw entity bits and the stable ID as one more component.
//! - Binary: both with postcard for component values. The library wraps them in its scene
//!   container (per entity: ID, component count, per component: name index and length-prefixed
//!   bytes); hecs's column format writes each hecs archetype's entity IDs and then one column
//!   per component.
//!
//! Both sides know the same ten component types: the six above, `Parent`, `Children` and
//! `StableId` (hecs's contexts try each of them, as a game's would), plus the library's
//! runtime-only bookkeeping, which it skips.

use std::path::Path;
use std::sync::Arc;

use archetype_engine::{
    load_scene, save_scene, ArchetypeLibrary, Children, ComponentRegistry, EntityRef, LoadOptions,
    Name, Parent, SceneEncoding, SceneLoadOptions, SceneSaveOptions, StableId, Transform,
};
use glam::{Quat, Vec3};
use hecs::serialize::{column, row};
use hecs::{Archetype, ColumnBatchBuilder, ColumnBatchType, EntityBuilder, World};
use serde::de::{MapAccess, SeqAccess};
use serde::ser::{SerializeMap, SerializeTuple};
use serde::{Deserialize, Serialize, Serializer};

/// Hit points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Hit points left.
    pub current: f32,
    /// Hit points when unhurt.
    pub max: f32,
}

/// Movement per tick.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Velocity {
    /// Along x.
    pub x: f32,
    /// Along y.
    pub y: f32,
}

/// Which side an entity is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Faction {
    /// Attacks the player.
    Hostile,
    /// Fights for the player.
    Friendly,
    /// Minds its own business.
    Neutral,
}

/// What an entity drops (the 70% without a reference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loot {
    /// Coins dropped.
    pub gold: u32,
    /// 0 common .. 4 legendary.
    pub rarity: u8,
}

/// Keeps close to another entity (the 30% holding a reference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Follow {
    /// Whom to follow.
    pub leader: Option<EntityRef>,
    /// Preferred distance in tiles.
    pub distance: f32,
}

/// A registry with the built-ins and the scene workload's components.
pub fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    let results = [
        registry.register::<Health>(),
        registry.register::<Velocity>(),
        registry.register::<Faction>(),
        registry.register::<Loot>(),
        registry.register::<Follow>(),
    ];
    if let Some(Err(error)) = results.into_iter().find(Result::is_err) {
        unreachable!("bench components clash: {error}");
    }
    registry
}

/// A world of `n` plain entities (see the [module docs](self)), with an empty archetype library
/// holding the component registry, and the bytes each side wrote for it (so the load
/// workloads read what the save workloads write).
pub struct SceneFixture {
    world: World,
    library: ArchetypeLibrary,
    n: usize,
    json: Vec<u8>,
    /// The JSON scene as a tool that sorts keys and pretty-prints leaves it (`jq -S`, a
    /// merge tool, Python's `json.dump(sort_keys=True)`): the entity list before the format,
    /// each entry's ID after its components.
    json_reformatted: Vec<u8>,
    binary: Vec<u8>,
    hecs_json: Vec<u8>,
    hecs_binary: Vec<u8>,
    /// Where the library's archetype files are, when it has any.
    _dir: Option<tempfile::TempDir>,
}

impl SceneFixture {
    /// Builds the world and saves it once each way.
    ///
    /// # Panics
    /// If a side cannot save the world or load back what it saved, with every entity.
    pub fn new(n: usize) -> Self {
        let library = ArchetypeLibrary::empty(
            Path::new("archetypes"),
            Arc::new(registry()),
            LoadOptions::default(),
        );
        let references = n / 10 * 3 + (n % 10).min(3);
        Self::with_world(world(n), library, None, references)
    }

    /// A fixture of any `world` of the workload's components, saved with `library` (whose
    /// archetype files are in `dir`), holding `references` `Follow` components that name a
    /// leader.
    ///
    /// # Panics
    /// If a side cannot save the world or load back every entity and reference of it.
    pub(crate) fn with_world(
        world: World,
        library: ArchetypeLibrary,
        dir: Option<tempfile::TempDir>,
        references: usize,
    ) -> Self {
        let n = world.len() as usize;
        let mut fixture = SceneFixture {
            world,
            library,
            n,
            json: Vec::new(),
            json_reformatted: Vec::new(),
            binary: Vec::new(),
            hecs_json: Vec::new(),
            hecs_binary: Vec::new(),
            _dir: dir,
        };
        fixture.json = fixture.save_json();
        fixture.json_reformatted = reformatted(&fixture.json);
        fixture.binary = fixture.save_binary();
        fixture.hecs_json = fixture.hecs_row_save();
        fixture.hecs_binary = fixture.hecs_column_save();
        for (side, loaded) in [
            ("json", fixture.load_json()),
            ("reformatted json", fixture.load_json_reformatted()),
            ("binary", fixture.load_binary()),
            ("hecs row", fixture.hecs_row_load()),
            ("hecs column", fixture.hecs_column_load()),
        ] {
            assert_eq!(
                loaded.len() as usize,
                n,
                "bench setup: {side} lost entities"
            );
            let leaders = loaded
                .query::<&Follow>()
                .iter()
                .filter(|follow| follow.leader.is_some())
                .count();
            assert_eq!(leaders, references, "bench setup: {side} lost references");
        }
        fixture
    }

    /// Entities in the world.
    pub fn entities(&self) -> usize {
        self.n
    }

    /// Sizes in bytes of what each side wrote: (JSON, binary, hecs row JSON, hecs column
    /// postcard).
    pub fn sizes(&self) -> (usize, usize, usize, usize) {
        (
            self.json.len(),
            self.binary.len(),
            self.hecs_json.len(),
            self.hecs_binary.len(),
        )
    }

    /// Ours: `save_scene(.., SceneEncoding::Json, ..)` of the whole world.
    ///
    /// # Panics
    /// If the save fails (it cannot: every reference points inside the world).
    pub fn save_json(&self) -> Vec<u8> {
        save_scene(
            &self.world,
            &self.library,
            SceneEncoding::Json,
            &SceneSaveOptions::default(),
        )
        .unwrap_or_else(|error| panic!("bench: the JSON save failed: {error}"))
    }

    /// Ours: [`save_json`](Self::save_json) on one thread (`max_threads: 1`), to show what
    /// the threads contribute.
    ///
    /// # Panics
    /// If the save fails.
    pub fn save_json_one_thread(&self) -> Vec<u8> {
        let mut options = SceneSaveOptions::default();
        options.max_threads = 1;
        save_scene(&self.world, &self.library, SceneEncoding::Json, &options)
            .unwrap_or_else(|error| panic!("bench: the JSON save failed: {error}"))
    }

    /// Ours: `save_scene(.., SceneEncoding::Binary, ..)` of the whole world.
    ///
    /// # Panics
    /// If the save fails.
    pub fn save_binary(&self) -> Vec<u8> {
        save_scene(
            &self.world,
            &self.library,
            SceneEncoding::Binary,
            &SceneSaveOptions::default(),
        )
        .unwrap_or_else(|error| panic!("bench: the binary save failed: {error}"))
    }

    /// Ours: `load_scene` of the JSON scene into a fresh world.
    ///
    /// # Panics
    /// If the load fails.
    pub fn load_json(&self) -> World {
        self.load(&self.json)
    }

    /// Ours: `load_scene` of the JSON scene with its keys sorted and pretty-printed again
    /// into a fresh world.
    ///
    /// # Panics
    /// If the load fails.
    pub fn load_json_reformatted(&self) -> World {
        self.load(&self.json_reformatted)
    }

    /// Ours: `load_scene` of the binary scene into a fresh world.
    ///
    /// # Panics
    /// If the load fails.
    pub fn load_binary(&self) -> World {
        self.load(&self.binary)
    }

    fn load(&self, bytes: &[u8]) -> World {
        let mut world = World::new();
        load_scene(
            bytes,
            None,
            &mut world,
            &self.library,
            &SceneLoadOptions::default(),
        )
        .unwrap_or_else(|error| panic!("bench: the scene does not load: {error}"));
        world
    }

    /// Baseline: `hecs::serialize::row::serialize` of the same world through serde_json's
    /// pretty printer, into a buffer that starts at 256 bytes per entity and grows as a `Vec`
    /// does (serde_json's own `to_vec_pretty` starts at 128 bytes). The library sizes its
    /// buffer from the first entities it writes; given an exact-sized buffer instead, this
    /// baseline measured about 5% faster.
    ///
    /// # Panics
    /// If serde_json fails (it cannot for these components).
    pub fn hecs_row_save(&self) -> Vec<u8> {
        hecs_row_save(&self.world, self.n)
    }

    /// Baseline: `hecs::serialize::row::deserialize` of what
    /// [`hecs_row_save`](Self::hecs_row_save) wrote, with serde_json.
    ///
    /// # Panics
    /// If the bytes do not deserialize.
    pub fn hecs_row_load(&self) -> World {
        hecs_row_load(&self.hecs_json)
    }

    /// Baseline: `hecs::serialize::column::serialize` of the same world with postcard.
    ///
    /// # Panics
    /// If postcard fails (it cannot for these components).
    pub fn hecs_column_save(&self) -> Vec<u8> {
        hecs_column_save(&self.world)
    }

    /// Baseline: `hecs::serialize::column::deserialize` of what
    /// [`hecs_column_save`](Self::hecs_column_save) wrote, with postcard.
    ///
    /// # Panics
    /// If the bytes do not deserialize.
    pub fn hecs_column_load(&self) -> World {
        hecs_column_load(&self.hecs_binary)
    }
}

/// `hecs::serialize::row` of `world` (`n` entities) through serde_json's pretty printer.
fn hecs_row_save(world: &World, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 256 + 64);
    let mut serializer = serde_json::Serializer::pretty(&mut out);
    row::serialize(world, &mut RowContext, &mut serializer)
        .unwrap_or_else(|error| panic!("bench: hecs row serialize failed: {error}"));
    out
}

/// `hecs::serialize::row::deserialize` of `bytes` with serde_json.
fn hecs_row_load(bytes: &[u8]) -> World {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    row::deserialize(&mut RowContext, &mut deserializer)
        .unwrap_or_else(|error| panic!("bench: hecs row deserialize failed: {error}"))
}

/// `hecs::serialize::column` of `world` with postcard.
fn hecs_column_save(world: &World) -> Vec<u8> {
    postcard::to_allocvec(&ColumnWorld(world))
        .unwrap_or_else(|error| panic!("bench: hecs column serialize failed: {error}"))
}

/// `hecs::serialize::column::deserialize` of `bytes` with postcard.
fn hecs_column_load(bytes: &[u8]) -> World {
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    column::deserialize(&mut ColumnContext::default(), &mut deserializer)
        .unwrap_or_else(|error| panic!("bench: hecs column deserialize failed: {error}"))
}

/// The world of [`SceneFixture`]: entity `i` follows another entity (picked by a fixed spread)
/// when `i % 10 < 3`, and carries loot otherwise.
///
/// The followers are spawned first, then the others, so each hecs archetype holds a run of
/// ascending entity IDs, the order hecs's deserializers spawn them back in (`spawn_at`). With
/// the two kinds interleaved, every `spawn_at` of the second archetype searches hecs's free
/// list linearly (quadratic in all: about a second more for 100,000 entities), which would
/// make the baselines look far slower than they are.
fn world(n: usize) -> World {
    const FACTIONS: [Faction; 3] = [Faction::Hostile, Faction::Friendly, Faction::Neutral];
    let mut world = World::new();
    let mut entities = Vec::with_capacity(n);
    for follows in [true, false] {
        for i in (0..n).filter(|i| (i % 10 < 3) == follows) {
            let mut builder = EntityBuilder::new();
            builder.add_bundle((
                StableId::generate(),
                Name(format!("unit {i:06}")),
                Transform {
                    translation: Vec3::new(
                        spread(i, 1, 4000) as f32 / 8.0,
                        0.0,
                        spread(i, 2, 4000) as f32 / 8.0,
                    ),
                    rotation: Quat::from_rotation_y(spread(i, 3, 360) as f32 * 0.017_453_3),
                    scale: Vec3::ONE,
                },
                Health {
                    current: (spread(i, 4, 100) + 1) as f32,
                    max: 100.0,
                },
                Velocity {
                    x: spread(i, 5, 64) as f32 / 32.0 - 1.0,
                    y: spread(i, 6, 64) as f32 / 32.0 - 1.0,
                },
                FACTIONS[i % 3],
            ));
            if follows {
                builder.add(Follow {
                    leader: None,
                    distance: 1.0 + (i % 4) as f32,
                });
            } else {
                builder.add(Loot {
                    gold: spread(i, 7, 500) as u32,
                    rarity: (i % 5) as u8,
                });
            }
            entities.push(world.spawn(builder.build()));
        }
    }
    for (i, follow) in world.query_mut::<&mut Follow>().into_iter().enumerate() {
        follow.leader = Some(EntityRef(entities[spread(i, 8, n)]));
    }
    world
}

/// A deterministic spread of small numbers, so entities differ without a random generator.
pub(crate) fn spread(i: usize, salt: u64, modulus: usize) -> usize {
    let x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (salt << 17);
    ((x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 33) as usize % modulus
}

/// The component keys of the hecs baselines (serialized by name, like the library's).
#[derive(Clone, Copy, Serialize, Deserialize)]
enum ComponentKey {
    Name,
    Transform,
    Health,
    Velocity,
    Faction,
    Loot,
    Follow,
    Parent,
    Children,
    StableId,
}

/// Calls `$action!(Type, ComponentKey::Type)` for every component the baselines know.
macro_rules! for_each_component {
    ($action:ident) => {
        $action!(Name, ComponentKey::Name);
        $action!(Transform, ComponentKey::Transform);
        $action!(Health, ComponentKey::Health);
        $action!(Velocity, ComponentKey::Velocity);
        $action!(Faction, ComponentKey::Faction);
        $action!(Loot, ComponentKey::Loot);
        $action!(Follow, ComponentKey::Follow);
        $action!(Parent, ComponentKey::Parent);
        $action!(Children, ComponentKey::Children);
        $action!(StableId, ComponentKey::StableId);
    };
}

/// hecs's row (de)serialization context for the workload's components.
struct RowContext;

impl row::SerializeContext for RowContext {
    fn serialize_entity<S: SerializeMap>(
        &mut self,
        entity: hecs::EntityRef<'_>,
        mut map: S,
    ) -> Result<S::Ok, S::Error> {
        macro_rules! put {
            ($ty:ty, $key:expr) => {
                row::try_serialize::<$ty, _, _>(&entity, &$key, &mut map)?;
            };
        }
        for_each_component!(put);
        map.end()
    }
}

impl row::DeserializeContext for RowContext {
    fn deserialize_entity<'de, M: MapAccess<'de>>(
        &mut self,
        mut map: M,
        entity: &mut EntityBuilder,
    ) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<ComponentKey>()? {
            macro_rules! read {
                ($ty:ty, $key:pat) => {
                    if let $key = key {
                        entity.add::<$ty>(map.next_value()?);
                        continue;
                    }
                };
            }
            for_each_component!(read);
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

/// The world as hecs's column format, for postcard's `to_allocvec`.
struct ColumnWorld<'a>(&'a World);

impl Serialize for ColumnWorld<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        column::serialize(self.0, &mut ColumnContext::default(), serializer)
    }
}

/// hecs's column (de)serialization context: the component keys of the archetype being read.
#[derive(Default)]
struct ColumnContext {
    components: Vec<ComponentKey>,
}

impl column::SerializeContext for ColumnContext {
    fn component_count(&self, archetype: &Archetype) -> usize {
        let mut count = 0;
        macro_rules! count {
            ($ty:ty, $key:expr) => {
                count += usize::from(archetype.has::<$ty>());
            };
        }
        for_each_component!(count);
        count
    }

    fn serialize_component_ids<S: SerializeTuple>(
        &mut self,
        archetype: &Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        macro_rules! id {
            ($ty:ty, $key:expr) => {
                column::try_serialize_id::<$ty, _, _>(archetype, &$key, &mut out)?;
            };
        }
        for_each_component!(id);
        out.end()
    }

    fn serialize_components<S: SerializeTuple>(
        &mut self,
        archetype: &Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        macro_rules! values {
            ($ty:ty, $key:expr) => {
                column::try_serialize::<$ty, _>(archetype, &mut out)?;
            };
        }
        for_each_component!(values);
        out.end()
    }
}

impl column::DeserializeContext for ColumnContext {
    fn deserialize_component_ids<'de, A: SeqAccess<'de>>(
        &mut self,
        mut seq: A,
    ) -> Result<ColumnBatchType, A::Error> {
        self.components.clear();
        let mut batch = ColumnBatchType::new();
        while let Some(key) = seq.next_element::<ComponentKey>()? {
            macro_rules! add {
                ($ty:ty, $key:pat) => {
                    if let $key = key {
                        batch.add::<$ty>();
                    }
                };
            }
            for_each_component!(add);
            self.components.push(key);
        }
        Ok(batch)
    }

    fn deserialize_components<'de, A: SeqAccess<'de>>(
        &mut self,
        entity_count: u32,
        mut seq: A,
        batch: &mut ColumnBatchBuilder,
    ) -> Result<(), A::Error> {
        for &key in &self.components {
            macro_rules! column {
                ($ty:ty, $key:pat) => {
                    if let $key = key {
                        column::deserialize_column::<$ty, _>(entity_count, &mut seq, batch)?;
                    }
                };
            }
            for_each_component!(column);
        }
        Ok(())
    }
}

/// `json` with every object's keys sorted, pretty-printed.
fn reformatted(json: &[u8]) -> Vec<u8> {
    let value: serde_json::Value = serde_json::from_slice(json)
        .unwrap_or_else(|error| panic!("bench setup: the saved scene is not JSON: {error}"));
    serde_json::to_vec_pretty(&value)
        .unwrap_or_else(|error| panic!("bench setup: serde_json failed: {error}"))
}
