//! The careful reader's first pass over a JSON scene in the current format: the document's
//! structure, with every component value borrowed as raw text (decoded in the second pass).
//!
//! The scene's limits are enforced while it is read: the entry past
//! [`Limits::max_scene_entities`], or the component value past
//! [`Limits::max_scene_values`], stops the pass there, so a refused file never costs more
//! memory than the limits allow.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use serde_json::{Map, Value};

use crate::limits::Limits;
use crate::scene::format::scene_keys as keys;
use crate::scene::header::ArchetypeNodes;
pub(super) use crate::scene::scene_budget::OverLimit;
use crate::scene::scene_budget::SceneBudget;

/// A JSON scene as the first pass reads it.
pub(super) struct JsonScene<'a> {
    pub format: u64,
    pub meta: Option<Map<String, Value>>,
    pub archetypes: Option<ArchetypeNodes>,
    pub shared: Option<BTreeMap<Cow<'a, str>, &'a RawValue>>,
    pub entities: Vec<JsonEntity<'a>>,
}

/// One entry of the entity list.
pub(super) struct JsonEntity<'a> {
    pub id: &'a RawValue,
    pub archetype: Option<&'a RawValue>,
    pub child: Option<&'a RawValue>,
    pub components: RawComponents<'a>,
}

/// An entry's components: name and raw value, in the file's order (names unique).
#[derive(Default)]
pub(super) struct RawComponents<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

/// Why the first pass stopped: serde_json's error (which says where), and the reason when it
/// is one the scene's messages say their own way.
pub(super) struct ScanError {
    pub error: serde_json::Error,
    pub stop: Option<Stop>,
}

/// A reason the first pass stopped, told apart without reading serde's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// The scene went over a limit.
    Over(OverLimit),
    /// A key the object does not have (serde stopped just after it): what the object is ("a
    /// scene file"), and the keys it has.
    UnknownKey(&'static str, &'static [&'static str]),
}

/// Records that the object being read (`place`) has no key `key` (it has `expected`).
fn unknown_key<E: de::Error>(
    stop: &Cell<Option<Stop>>,
    key: &str,
    place: &'static str,
    expected: &'static [&'static str],
) -> E {
    stop.set(Some(Stop::UnknownKey(place, expected)));
    E::unknown_field(key, expected)
}

/// Reads `source` (a whole JSON scene) within `limits`.
pub(super) fn scan<'a>(source: &'a str, limits: &Limits) -> Result<JsonScene<'a>, ScanError> {
    let stop = Cell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(source);
    let seed = SceneSeed {
        limits,
        stop: &stop,
    };
    seed.deserialize(&mut deserializer)
        .and_then(|scene| deserializer.end().map(|()| scene))
        .map_err(|error| ScanError {
            error,
            stop: stop.get(),
        })
}

/// The top-level keys, in the order they are written.
const FIELDS: &[&str] = &keys::TOP_LEVEL;

/// Reads the top level (`format`, `shared`, `entities`; any other key is an error).
struct SceneSeed<'l> {
    limits: &'l Limits,
    stop: &'l Cell<Option<Stop>>,
}

impl<'de> DeserializeSeed<'de> for SceneSeed<'_> {
    type Value = JsonScene<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_struct("JsonScene", FIELDS, self)
    }
}

impl<'de> Visitor<'de> for SceneSeed<'_> {
    type Value = JsonScene<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct JsonScene")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut format, mut meta, mut archetypes) = (None, None, None);
        let mut shared = None;
        let mut entities = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                keys::FORMAT => once(&mut format, keys::FORMAT, || map.next_value())?,
                keys::META => once(&mut meta, keys::META, || map.next_value())?,
                keys::ARCHETYPES => once(&mut archetypes, keys::ARCHETYPES, || map.next_value())?,
                keys::SHARED => once(&mut shared, keys::SHARED, || map.next_value())?,
                keys::ENTITIES => once(&mut entities, keys::ENTITIES, || {
                    map.next_value_seed(EntitiesSeed {
                        limits: self.limits,
                        stop: self.stop,
                    })
                })?,
                other => return Err(unknown_key(self.stop, other, "a scene file", FIELDS)),
            }
        }
        Ok(JsonScene {
            format: format.ok_or_else(|| de::Error::missing_field(keys::FORMAT))?,
            meta,
            archetypes,
            shared: shared.flatten(),
            entities: entities.ok_or_else(|| de::Error::missing_field(keys::ENTITIES))?,
        })
    }
}

/// Reads a key's value into `slot`, refusing a key written twice (as serde's derive does).
fn once<T, E: de::Error>(
    slot: &mut Option<T>,
    key: &'static str,
    read: impl FnOnce() -> Result<T, E>,
) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(key));
    }
    *slot = Some(read()?);
    Ok(())
}

/// Reads the entity list, stopping at the first entry or value over the limits.
struct EntitiesSeed<'l> {
    limits: &'l Limits,
    stop: &'l Cell<Option<Stop>>,
}

impl<'de> DeserializeSeed<'de> for EntitiesSeed<'_> {
    type Value = Vec<JsonEntity<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EntitiesSeed<'_> {
    type Value = Vec<JsonEntity<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entities = Vec::new();
        let mut budget = Budget {
            left: SceneBudget::new(self.limits),
            limits: self.limits,
            stop: self.stop,
        };
        loop {
            if budget.left.entities_spent() {
                // One more entry is one too many: stop before reading it.
                return match seq.next_element::<de::IgnoredAny>()? {
                    Some(_) => Err(budget.exceeded(OverLimit::Entities)),
                    None => Ok(entities),
                };
            }
            match seq.next_element_seed(EntitySeed {
                values: &mut budget,
            })? {
                Some(entity) => {
                    budget.take(SceneBudget::take_entities)?;
                    entities.push(entity);
                }
                None => return Ok(entities),
            }
        }
    }
}

/// What the scene may still hold, and where to say which limit it went over.
struct Budget<'l> {
    left: SceneBudget,
    limits: &'l Limits,
    stop: &'l Cell<Option<Stop>>,
}

impl Budget<'_> {
    /// Takes one entry or value (by `take`) from the budget; an error once there is none left.
    fn take<E: de::Error>(
        &mut self,
        take: fn(&mut SceneBudget, usize) -> Result<(), OverLimit>,
    ) -> Result<(), E> {
        take(&mut self.left, 1).map_err(|over| self.exceeded(over))
    }

    fn exceeded<E: de::Error>(&self, over: OverLimit) -> E {
        self.stop.set(Some(Stop::Over(over)));
        E::custom(over.message(self.limits))
    }
}

/// The keys of an entry, in the order they are written.
const ENTITY_FIELDS: &[&str] = &keys::ENTITY;

/// Reads one entry (`id`, `archetype`, `child`, `components`; any other key is an error).
struct EntitySeed<'b, 'l> {
    values: &'b mut Budget<'l>,
}

impl<'de> DeserializeSeed<'de> for EntitySeed<'_, '_> {
    type Value = JsonEntity<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_struct("JsonEntity", ENTITY_FIELDS, self)
    }
}

impl<'de> Visitor<'de> for EntitySeed<'_, '_> {
    type Value = JsonEntity<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct JsonEntity")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut id, mut archetype, mut child, mut components) = (None, None, None, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                keys::ID => once(&mut id, keys::ID, || map.next_value())?,
                keys::ARCHETYPE => once(&mut archetype, keys::ARCHETYPE, || map.next_value())?,
                keys::CHILD => once(&mut child, keys::CHILD, || map.next_value())?,
                keys::COMPONENTS => once(&mut components, keys::COMPONENTS, || {
                    map.next_value_seed(ComponentsVisitor {
                        values: &mut *self.values,
                    })
                })?,
                other => {
                    let place = "an entity entry";
                    return Err(unknown_key(self.values.stop, other, place, ENTITY_FIELDS));
                }
            }
        }
        Ok(JsonEntity {
            id: id.ok_or_else(|| de::Error::missing_field(keys::ID))?,
            archetype: archetype.flatten(),
            child: child.flatten(),
            components: components.unwrap_or_default(),
        })
    }
}

/// Reads an entry's components, each value taken from the scene's budget.
struct ComponentsVisitor<'b, 'l> {
    values: &'b mut Budget<'l>,
}

impl<'de> DeserializeSeed<'de> for ComponentsVisitor<'_, '_> {
    type Value = RawComponents<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// Up to this many components, a name is checked against the others one by one.
const FEW_COMPONENTS: usize = 16;

impl<'de> Visitor<'de> for ComponentsVisitor<'_, '_> {
    type Value = RawComponents<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of component name to value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::new();
        // Names seen, once there are many (a hostile entry may have thousands).
        let mut seen: FxHashSet<Cow<'de, str>> = FxHashSet::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let duplicate = if out.len() < FEW_COMPONENTS {
                out.iter().any(|(existing, _)| *existing == key)
            } else {
                if seen.is_empty() {
                    seen.extend(out.iter().map(|(name, _)| name.clone()));
                }
                !seen.insert(key.clone())
            };
            if duplicate {
                return Err(de::Error::custom(format_args!(
                    "duplicate component `{key}`"
                )));
            }
            self.values.take(SceneBudget::take_values)?;
            let value: &'de RawValue = map.next_value()?;
            out.push((key, value));
        }
        Ok(RawComponents(out))
    }
}
