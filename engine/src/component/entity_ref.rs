//! [`EntityRef`]: the component field type for references between entities.
//!
//! A reference is written differently depending on where it is read or written:
//! - in an archetype file, `"#"` is the archetype instance's root and `"#turret"` (or
//!   `"#turret/barrel"` for nested children) one of its children by local name;
//! - in a scene file, it is the target's stable ID (`"00ab12cd34ef5678"`);
//! - anywhere else (e.g. `serde_json::to_value` in your own code) it is the raw `Entity` bits,
//!   which are only meaningful inside the running process.
//!
//! The library decides which form applies by installing an *entity mapper* for the duration of
//! an operation (spawning, saving a scene, ...), as a part of the serde context
//! (`serde_context.rs`): serde gives a `Deserialize` impl no other way to receive context.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;

use hecs::Entity;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::component::map_error::MapError;
use crate::component::serde_context::{self, Mapper, RawBits, ReferenceError};
use crate::component::stable_id::StableId;

/// A reference from one entity to another, usable as (part of) a component field.
///
/// Use `EntityRef`, `Option<EntityRef>` or `Vec<EntityRef>` fields for references that should
/// survive archetype spawning and scene save/load. A reference is written according to where
/// it is:
///
/// - **in an archetype file**, relative to the archetype instance being spawned: `"#"` is its
///   root, `"#sensor"` its child named `sensor`, `"#gun/barrel"` a grandchild, and `..` goes up
///   a level (`"#../sensor"` from inside the `gun` child). Inside a child declared with its own
///   `"archetype"`, `#` is that child. Spawning turns each into the spawned entity; a name that
///   matches no child is an `unknown-child` error when the library loads.
/// - **in a scene file**, the target's stable ID (`"00ab12cd34ef5678"`).
/// - **anywhere else** (`serde_json::to_value` in your own code, say), the raw `Entity` bits,
///   meaningful only inside the running process.
///
/// # Example
/// ```
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, EntityRef, LoadOptions};
/// use serde::{Deserialize, Serialize};
///
/// /// A turret aims through its sensor child.
/// #[derive(Clone, Serialize, Deserialize)]
/// struct Turret {
///     sensor: EntityRef,
///     owner: Option<EntityRef>,
/// }
///
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Turret>()?;
/// let mut library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
/// library.set_sources([(
///     "turret.json",
///     Some(r##"{
///         "components": { "Turret": { "sensor": "#sensor", "owner": "#" } },
///         "children": { "sensor": { "components": { "Name": "sensor" } } }
///     }"##),
/// )]);
/// assert!(library.diagnostics().is_empty());
///
/// let mut world = hecs::World::new();
/// let turret = library.spawn(&mut world, "turret")?;
/// let aim = world.get::<&Turret>(turret)?.clone();
/// assert_eq!(world.get::<&archetype_engine::Name>(aim.sensor.entity())?.as_str(), "sensor");
/// assert_eq!(aim.owner, Some(EntityRef(turret)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityRef(pub Entity);

impl EntityRef {
    /// The referenced entity.
    pub fn entity(self) -> Entity {
        self.0
    }
}

impl From<Entity> for EntityRef {
    fn from(entity: Entity) -> Self {
        EntityRef(entity)
    }
}

impl From<EntityRef> for Entity {
    fn from(entity: EntityRef) -> Self {
        entity.0
    }
}

impl std::ops::Deref for EntityRef {
    type Target = Entity;
    fn deref(&self) -> &Entity {
        &self.0
    }
}

/// How an installed mapper writes a reference.
pub(crate) enum RefOut {
    /// As a string: a stable ID's 16 hex digits.
    Hex(StableId),
    /// As a number (raw entity bits, or a stable ID in binary encodings).
    Number(u64),
    /// As nothing (`null`): a reference to an entity a scene does not save.
    Null,
}

/// The form a mapper reads references in; tells `Deserialize` which serde method to call, so
/// non-self-describing formats (postcard) work too.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefWire {
    Text,
    Number,
    /// Either form, chosen by the data (only for self-describing formats: patching live
    /// components mixes raw bits with `#child` text).
    Any,
}

/// A reference as read from the data, before the mapper turns it into an entity.
pub(crate) enum RefIn<'a> {
    Text(&'a str),
    Number(u64),
}

/// Turns entities into their written form and back for one operation.
pub(crate) trait EntityMapper: Any {
    /// The form references are read in.
    fn wire(&self) -> RefWire;
    /// The written form of a reference to `entity`, or a message saying why it can't be written.
    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError>;
    /// The entity a written reference means, or a message saying why it means none.
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError>;
}

/// Takes the message of the last reference that could not be read on this thread (and
/// forgets it).
pub(super) fn take_last_read_error() -> Option<MapError> {
    serde_context::with::<ReferenceError, _>(RefCell::take)
}

/// Runs `f` with every reference serialized as raw entity bits (cheaper than installing a
/// mapper, for checks that run on every value read).
pub(super) fn writing_raw_bits<R>(f: impl FnOnce() -> R) -> R {
    serde_context::scoped::<RawBits, _>(true, f).0
}

/// The reference form the installed mapper uses (`None` when none is installed). Other
/// scene-aware types ([`Shared`](crate::Shared)) follow the same form.
pub(super) fn current_wire() -> Option<RefWire> {
    serde_context::with::<Mapper, _>(|slot| slot.borrow().as_ref().map(|m| m.wire()))
}

/// Runs `f` with `mapper` installed for this thread, then hands the mapper back (with whatever
/// it recorded). The previous mapper is restored even if `f` panics, so operations nest.
pub(crate) fn with_mapper<M: EntityMapper, R>(mapper: M, f: impl FnOnce() -> R) -> (R, M) {
    let (result, ours) = serde_context::scoped::<Mapper, _>(Some(Box::new(mapper)), f);
    // An entity mapper is an `Any`: the box it was installed in gives back the concrete type.
    let ours = ours.and_then(|boxed| -> Option<Box<M>> {
        let any: Box<dyn Any> = boxed;
        any.downcast::<M>().ok()
    });
    match ours {
        Some(mapper) => (result, *mapper),
        None => mapper_slot_corrupted(),
    }
}

/// Gives `f` the mapper installed on this thread if it is an `M`: for an operation that
/// installs one mapper for many values and, between them, resets it or reads what it found.
pub(crate) fn with_installed_mapper<M: EntityMapper, R>(f: impl FnOnce(&mut M) -> R) -> Option<R> {
    serde_context::with::<Mapper, _>(|slot| {
        let mut slot = slot.borrow_mut();
        let mapper: &mut dyn Any = slot.as_deref_mut()?;
        mapper.downcast_mut::<M>().map(f)
    })
}

/// Every `with_mapper` restores what it replaced, so the slot holds our mapper when `f` returns.
#[cold]
fn mapper_slot_corrupted() -> ! {
    panic!("entity mapper slot changed during an operation (internal error)")
}

/// Reads raw entity bits: the in-process form used when no mapper is installed.
fn read_raw(reference: RefIn<'_>) -> Result<Entity, MapError> {
    match reference {
        RefIn::Number(bits) => Entity::from_bits(bits).ok_or(MapError::InvalidBits(bits)),
        RefIn::Text(text) => Err(MapError::TextOutsideSpawn(text.to_string())),
    }
}

/// In archetype files (the documents the schema describes) a reference is `#` or `#child/...`.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for EntityRef {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EntityRef".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^#(/?([A-Za-z0-9_-]+|\\.\\.))*$",
            "description": "An entity of this archetype instance: `#` for the root, `#child` or `#child/grandchild` for a child by local name, `..` to go up."
        })
    }
}

impl Serialize for EntityRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serde_context::flag::<RawBits>() {
            return serializer.serialize_u64(self.0.to_bits().get());
        }
        let written = serde_context::with::<Mapper, _>(|slot| match slot.borrow_mut().as_mut() {
            Some(mapper) => mapper.write(self.0),
            None => Ok(RefOut::Number(self.0.to_bits().get())),
        });
        match written.map_err(serde::ser::Error::custom)? {
            RefOut::Hex(id) => id.with_hex(|hex| serializer.serialize_str(hex)),
            RefOut::Number(bits) => serializer.serialize_u64(bits),
            RefOut::Null => serializer.serialize_none(),
        }
    }
}

impl<'de> Deserialize<'de> for EntityRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RefVisitor;
        impl Visitor<'_> for RefVisitor {
            type Value = EntityRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an entity reference")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<EntityRef, E> {
                read(RefIn::Text(text))
            }
            fn visit_u64<E: de::Error>(self, bits: u64) -> Result<EntityRef, E> {
                read(RefIn::Number(bits))
            }
        }
        fn read<E: de::Error>(reference: RefIn<'_>) -> Result<EntityRef, E> {
            serde_context::with::<Mapper, _>(|slot| match slot.borrow_mut().as_mut() {
                Some(mapper) => mapper.read(reference),
                None => read_raw(reference),
            })
            .map(EntityRef)
            .map_err(|error| {
                let message = error.to_string();
                serde_context::with::<ReferenceError, _>(|last| *last.borrow_mut() = Some(error));
                E::custom(message)
            })
        }
        let wire = current_wire();
        match wire {
            Some(RefWire::Text) => deserializer.deserialize_str(RefVisitor),
            Some(RefWire::Any) => deserializer.deserialize_any(RefVisitor),
            Some(RefWire::Number) | None => deserializer.deserialize_u64(RefVisitor),
        }
    }
}
