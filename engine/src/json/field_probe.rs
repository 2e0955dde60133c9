//! Finds the field names (or variant names) serde expects at a path inside a
//! type, using nothing but its `Deserialize` impl, so that a misspelled key in
//! a designer's JSON can be answered with "did you mean `max`?".
//!
//! The trick: [`probe`] runs `T::deserialize` against a fake deserializer that
//! feeds in just enough input to walk down the path, then catches the
//! `deserialize_struct`/`deserialize_enum` call made there, whose arguments
//! list the names, and aborts. Nothing is ever really deserialized.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, value::StrDeserializer, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;

use crate::json::axes::glam_axes;
use crate::json::field_path::{FieldPath, PathSegment};
use crate::json::suggest::did_you_mean;

/// What the probe learned about the type found at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A struct (or struct variant) with these field names, as serde sees
    /// them: after `rename`/`rename_all`, aliases included, skipped fields left
    /// out. For a struct variant, `name` is the variant's name.
    Struct {
        /// The struct's (or struct variant's) name.
        name: &'static str,
        /// The names serde accepts as keys.
        fields: &'static [&'static str],
    },
    /// A unit struct (`struct Boss;`) at the top of the type probed (not inside an `Option`
    /// or a newtype): a marker component, written `{}` in data files.
    Unit {
        /// The struct's name.
        name: &'static str,
    },
    /// A number: an integer type (`i32`, `u8`, ...) or a float (`f32`, `f64`).
    Number {
        /// Whether the type takes only integers.
        integer: bool,
    },
    /// A vector or quaternion (glam's), written as an array or as an object of these axes.
    Vector {
        /// Its axes in order: `x`, `y`, ...
        axes: &'static [&'static str],
    },
    /// An enum with these variant names.
    Enum {
        /// The enum's name.
        name: &'static str,
        /// The names serde accepts as variants.
        variants: &'static [&'static str],
    },
}

/// "Did you mean": the name closest to the last key of `field` among the field (or variant)
/// names serde accepts at that place of `T`.
pub(crate) fn suggest_field_in<T: de::DeserializeOwned>(field: &FieldPath) -> Option<String> {
    suggest_with(field, probe::<T>)
}

/// [`suggest_field_in`] for a type known through `probe` (which finds the shape at a path).
pub(crate) fn suggest_with(
    field: &FieldPath,
    probe: impl FnOnce(&[PathSegment]) -> Option<Shape>,
) -> Option<String> {
    let PathSegment::Key(key) = field.last()? else {
        return None;
    };
    match probe(field.parent().segments())? {
        Shape::Struct { fields, .. } => did_you_mean(key, fields.iter().copied()),
        Shape::Enum { variants, .. } => did_you_mean(key, variants.iter().copied()),
        Shape::Vector { axes } => did_you_mean(key, axes.iter().copied()),
        Shape::Unit { .. } | Shape::Number { .. } => None,
    }
}

/// Finds the shape of the struct or enum at `path` inside `T`.
///
/// `Key` segments are struct fields, map keys or enum variants (externally
/// tagged, as in `{"Variant": {..}}`); `Index` segments are elements of
/// sequences, tuples and arrays. `Option`, `Box`, newtypes and
/// `#[serde(transparent)]`/`#[serde(from)]` wrappers are seen through.
///
/// Returns `None` when the path does not exist in `T`, or ends at something
/// that is not a struct or enum with known names: primitives, sequences,
/// maps, structs containing `#[serde(flatten)]`, and any type that inspects
/// its input itself (`deserialize_any`: `serde_json::Value`, untagged and
/// internally tagged enums).
///
/// To reach element `i` of a tuple, the elements before it must be given some
/// value. Plain ones (numbers, strings, options, sequences, maps) get a made-up
/// one; a struct, enum or tuple before the target makes the probe give up
/// (`None`) rather than guess: a wrong suggestion is worse than none.
pub fn probe<T: de::DeserializeOwned>(path: &[PathSegment]) -> Option<Shape> {
    let found = Cell::new(None);
    // The outcome is always an error (or a stray success); only `found` matters.
    let _ = T::deserialize(Probe {
        path,
        found: &found,
        filler: false,
        depth: 0,
        tag_step: None,
    });
    found.into_inner()
}

/// How many levels deep the probe goes, counting path segments and wrappers
/// (`Option`, newtypes), so that neither a long path nor a type such as
/// `struct Chain(Option<Box<Chain>>)` can exhaust the stack.
const MAX_DEPTH: usize = 256;

/// The one error of the probe: "stop here". Both finding the shape and
/// failing to reach it end the deserialization with it. It carries what a visitor said when
/// it stopped ([`tag_of`] asks): the field it missed, the variants it expected (serde reports
/// both through the error type, the probe's only channel back).
#[derive(Debug, Default)]
struct Stop {
    missed: Option<&'static str>,
    expected: Option<&'static [&'static str]>,
}

impl Stop {
    /// Stopped, nothing said.
    const HERE: Stop = Stop {
        missed: None,
        expected: None,
    };
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field probe stopped")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Stop::HERE
    }

    fn missing_field(field: &'static str) -> Self {
        Stop {
            missed: Some(field),
            expected: None,
        }
    }

    fn unknown_variant(_variant: &str, expected: &'static [&'static str]) -> Self {
        Stop {
            missed: None,
            expected: Some(expected),
        }
    }
}

/// The tag field of the internally tagged enum (`#[serde(tag = "type")]`) at `path` inside
/// `T`, or `None` if there is none there.
///
/// Such an enum reads itself through `deserialize_any`, so [`probe`] cannot see it. This asks
/// its visitor twice: given an empty map, it says which field it misses (the tag); given that
/// field with a name no variant has, it lists its variants. Only an enum's tag does both.
pub(crate) fn tag_of<T: de::DeserializeOwned>(path: &[PathSegment]) -> Option<&'static str> {
    let ask = |tag: Option<&'static str>| {
        let found = Cell::new(None);
        let stopped = T::deserialize(Probe {
            path,
            found: &found,
            filler: false,
            depth: 0,
            tag_step: Some(tag),
        });
        stopped.err().unwrap_or_default()
    };
    let tag = ask(None).missed?;
    match ask(Some(tag)).expected {
        Some(variants) if !variants.is_empty() => Some(tag),
        _ => None,
    }
}

/// The map a visitor reading itself through `deserialize_any` is given by [`tag_of`]: empty,
/// or the candidate tag with a name no variant has.
struct TagMap {
    tag: Option<&'static str>,
    value_next: bool,
}

impl<'de> MapAccess<'de> for TagMap {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        match self.tag.take() {
            Some(tag) => {
                self.value_next = true;
                seed.deserialize(Key(tag)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Stop> {
        match std::mem::take(&mut self.value_next) {
            true => seed.deserialize(Key("\u{0}")),
            false => Err(Stop::HERE),
        }
    }
}

/// The deserializer standing for the value at the not-yet-walked `path`.
///
/// As a `filler` it stands for a tuple element before the one on the path,
/// and gives plain values a made-up value instead of giving up.
#[derive(Clone, Copy)]
struct Probe<'a> {
    path: &'a [PathSegment],
    found: &'a Cell<Option<Shape>>,
    filler: bool,
    depth: usize,
    /// Set by [`tag_of`]: at the end of the path, a visitor reading itself through
    /// `deserialize_any` is given an empty map (`Some(None)`) or the candidate tag.
    tag_step: Option<Option<&'static str>>,
}

impl<'a> Probe<'a> {
    /// The probe one level further in, at `path`.
    fn deeper(self, path: &'a [PathSegment]) -> Result<Self, Stop> {
        match self.depth < MAX_DEPTH {
            true => Ok(Probe {
                path,
                depth: self.depth + 1,
                ..self
            }),
            false => Err(Stop::HERE),
        }
    }

    /// The probe for the rest of the path, past a segment.
    fn rest(self, path: &'a [PathSegment]) -> Result<Self, Stop> {
        let deeper = self.deeper(path)?;
        Ok(Probe {
            filler: false,
            ..deeper
        })
    }

    fn record(self, shape: Shape) -> Stop {
        // Keep the first finding, in case some impl swallows our error and goes on.
        let first = self.found.take().unwrap_or(shape);
        self.found.set(Some(first));
        Stop::HERE
    }

    /// Walks into an element of a tuple of `len` elements, or of a sequence
    /// (`None`), where the first element has the type of all of them.
    fn element<'de, V>(self, len: Option<usize>, visitor: V) -> Result<V::Value, Stop>
    where
        V: Visitor<'de>,
    {
        if self.filler {
            return Err(Stop::HERE);
        }
        let Some((PathSegment::Index(index), rest)) = self.path.split_first() else {
            return Err(Stop::HERE);
        };
        let skip = match len {
            None => 0,
            Some(len) if *index < len => *index,
            Some(_) => return Err(Stop::HERE),
        };
        visitor.visit_seq(Element {
            skip,
            value: Some(self.rest(rest)?),
        })
    }

    /// Walks into one key of a struct or map.
    fn entry<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            Some((PathSegment::Key(key), rest)) => visitor.visit_map(Entry {
                key: Some(key),
                value: self.rest(rest)?,
            }),
            _ => Err(Stop::HERE),
        }
    }
}

/// Methods for plain values, which end the walk, or as a filler get `$value`.
macro_rules! scalar {
    ($($method:ident => $visit:ident($($value:expr)?),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
            match self.filler {
                true => visitor.$visit($($value)?),
                false => Err(Stop::HERE),
            }
        }
    )*};
}

/// Methods for numbers, which at the end of the path record whether the type wants an integer.
macro_rules! number {
    ($integer:expr => $($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
            match (self.filler, self.path.is_empty()) {
                (true, _) => visitor.visit_u64(1),
                (false, true) => Err(self.record(Shape::Number { integer: $integer })),
                (false, false) => Err(Stop::HERE),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.tag_step {
            Some(tag) if self.path.is_empty() && !self.filler => visitor.visit_map(TagMap {
                tag,
                value_next: false,
            }),
            _ => Err(Stop::HERE),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.filler {
            true => visitor.visit_none(),
            false => visitor.visit_some(self.deeper(self.path)?),
        }
    }

    scalar! {
        deserialize_bool => visit_bool(false), deserialize_char => visit_char(' '),
        deserialize_str => visit_str(""), deserialize_string => visit_str(""),
        deserialize_bytes => visit_bytes(&[]), deserialize_byte_buf => visit_bytes(&[]),
        deserialize_unit => visit_unit(), deserialize_ignored_any => visit_unit(),
    }

    // As fillers: every number visitor takes a `u64` that fits; 1 fits all, `NonZero*` too.
    number! { true =>
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }
    number! { false => deserialize_f32 deserialize_f64 }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        // Only the type itself: inside an `Option` a unit struct is not a marker (`None` is
        // written `null` too).
        if !self.filler && self.path.is_empty() && self.depth == 0 {
            return Err(self.record(Shape::Unit { name }));
        }
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self.deeper(self.path)?)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.filler {
            true => visitor.visit_seq(Element {
                skip: 0,
                value: None,
            }),
            false => self.element(None, visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Stop> {
        self.element(Some(len), visitor)
    }

    /// A glam vector or quaternion: its axes at the end of the path, and an axis (`z`) on the
    /// path is its element.
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        let Some(axes) = (!self.filler).then(|| glam_axes(name, len)).flatten() else {
            return self.element(Some(len), visitor);
        };
        match self.path.split_first() {
            None => Err(self.record(Shape::Vector { axes })),
            Some((PathSegment::Key(key), rest)) => {
                let Some(index) = axes.iter().position(|axis| axis == key) else {
                    return Err(Stop::HERE);
                };
                visitor.visit_seq(Element {
                    skip: index,
                    value: Some(self.rest(rest)?),
                })
            }
            Some(_) => self.element(Some(len), visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.filler {
            true => visitor.visit_map(Entry {
                key: None,
                value: self,
            }),
            false => self.entry(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        if self.filler {
            return Err(Stop::HERE);
        }
        if self.path.is_empty() {
            return Err(self.record(Shape::Struct { name, fields }));
        }
        self.entry(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        if self.filler {
            return Err(Stop::HERE);
        }
        match self.path.split_first() {
            None => Err(self.record(Shape::Enum { name, variants })),
            Some((PathSegment::Key(key), rest)) => {
                // A struct variant's shape is named after the variant.
                let variant = variants.iter().find(|v| **v == key);
                visitor.visit_enum(Variant {
                    key,
                    name: variant.copied().unwrap_or(name),
                    rest: self.rest(rest)?,
                })
            }
            Some((PathSegment::Index(_), _)) => Err(Stop::HERE),
        }
    }

    forward_to_deserialize_any! { identifier }
}

/// A sequence of `skip` fillers, then the probe `value`, then its end.
struct Element<'a> {
    skip: usize,
    value: Option<Probe<'a>>,
}

impl<'de> SeqAccess<'de> for Element<'_> {
    type Error = Stop;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Stop> {
        let Some(value) = self.value else {
            return Ok(None);
        };
        if self.skip > 0 {
            self.skip -= 1;
            let filler = Probe {
                filler: true,
                ..value
            };
            return seed.deserialize(filler).map(Some);
        }
        self.value = None;
        seed.deserialize(value).map(Some)
    }
}

/// A map with the single entry `key` → probe `value` (no entry if no key).
struct Entry<'a> {
    key: Option<&'a str>,
    value: Probe<'a>,
}

impl<'de> MapAccess<'de> for Entry<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        self.key
            .take()
            .map(|key| seed.deserialize(Key(key)))
            .transpose()
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Stop> {
        seed.deserialize(self.value)
    }
}

/// The variant `key` of an enum, whose content is the probe.
struct Variant<'a> {
    key: &'a str,
    name: &'static str,
    rest: Probe<'a>,
}

impl<'de> EnumAccess<'de> for Variant<'_> {
    type Error = Stop;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), Stop> {
        Ok((seed.deserialize(Key(self.key))?, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'_> {
    type Error = Stop;

    fn unit_variant(self) -> Result<(), Stop> {
        Err(Stop::HERE)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Stop> {
        seed.deserialize(self.rest)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Stop> {
        self.rest.element(Some(len), visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.rest.deserialize_struct(self.name, fields, visitor)
    }
}

/// A map key or variant name read from a JSON key, which is always a string
/// but may stand for an integer (`HashMap<u32, _>`), as serde_json allows.
struct Key<'a>(&'a str);

macro_rules! integer_key {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
            match (self.0.parse::<u64>(), self.0.parse::<i64>()) {
                (Ok(n), _) => visitor.visit_u64(n),
                (_, Ok(n)) => visitor.visit_i64(n),
                _ => visitor.visit_str(self.0),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Key<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_str(self.0)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        StrDeserializer::<Stop>::new(self.0).deserialize_enum(name, variants, visitor)
    }

    integer_key! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    forward_to_deserialize_any! {
        bool f32 f64 char str string bytes byte_buf option unit unit_struct
        newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    // The test types are only ever probed, never built or read.
    #![allow(dead_code)]

    use std::collections::HashMap;

    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    struct Health {
        current: f32,
        max: f32,
    }

    #[derive(Deserialize)]
    struct Waypoint {
        x: f32,
        y: f32,
    }

    #[derive(Deserialize)]
    enum Faction {
        Hostile,
        Friendly,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Action {
        Wait,
        MoveTo { target: Waypoint, speed: f32 },
        Heal(Health),
    }

    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase", default)]
    struct Loot {
        drop_chance: f32,
        #[serde(rename = "gold")]
        gold_amount: u32,
        #[serde(alias = "qty")]
        quantity: u32,
        #[serde(skip)]
        cache: u32,
    }

    #[derive(Deserialize)]
    struct Armor(Health);

    #[derive(Deserialize)]
    #[serde(transparent)]
    struct Shield {
        inner: Health,
    }

    #[derive(Deserialize)]
    struct Boss {
        armor: Armor,
        #[serde(flatten)]
        health: Health,
    }

    #[derive(Deserialize)]
    struct Stats {
        hp: Health,
        faction: Faction,
        waypoints: Vec<Waypoint>,
        shield: Option<Box<Health>>,
        loot_by_level: HashMap<u32, Loot>,
        corners: [Waypoint; 2],
        loot_table: Vec<(f32, Option<String>, Loot)>,
        plan: Vec<Action>,
        position: glam::Vec3,
    }

    /// `"waypoints.3.x"` → `[Key("waypoints"), Index(3), Key("x")]`.
    fn path(path: &str) -> Vec<PathSegment> {
        let segment = |s: &str| match s.parse() {
            Ok(index) => PathSegment::Index(index),
            Err(_) => PathSegment::Key(s.to_owned()),
        };
        path.split('.')
            .filter(|s| !s.is_empty())
            .map(segment)
            .collect()
    }

    /// The field or variant names found at `at` inside `T`.
    fn names<T: de::DeserializeOwned>(at: &str) -> Option<Vec<&'static str>> {
        match probe::<T>(&path(at))? {
            Shape::Struct { fields, .. } => Some(fields.to_vec()),
            Shape::Enum { variants, .. } => Some(variants.to_vec()),
            Shape::Vector { axes } => Some(axes.to_vec()),
            Shape::Unit { .. } | Shape::Number { .. } => None,
        }
    }

    #[test]
    fn structs() {
        let health = Shape::Struct {
            name: "Health",
            fields: &["current", "max"],
        };
        assert_eq!(probe::<Health>(&[]), Some(health.clone()));
        assert_eq!(probe::<Stats>(&path("hp")), Some(health.clone()));
        assert_eq!(probe::<Stats>(&path("shield")), Some(health));
        assert_eq!(names::<Stats>("waypoints.3"), Some(vec!["x", "y"]));
        assert_eq!(names::<Stats>("corners.0"), Some(vec!["x", "y"]));
        // Arrays are tuples to serde: later elements would need a guess, so no answer.
        assert_eq!(names::<Stats>("corners.1"), None);
        assert_eq!(names::<Stats>("loot_table.4.2"), names::<Loot>(""));
        // Aliases are listed (sorted after their field), skipped fields are not.
        let loot = Some(vec!["dropChance", "gold", "qty", "quantity"]);
        assert_eq!(names::<Loot>(""), loot);
        assert_eq!(names::<HashMap<String, Loot>>("chest"), loot);
        let level_7 = [
            PathSegment::Key("loot_by_level".into()),
            PathSegment::Key("7".into()),
        ];
        assert_eq!(probe::<Stats>(&level_7), probe::<Loot>(&[]));
    }

    #[test]
    fn enums() {
        let faction = Shape::Enum {
            name: "Faction",
            variants: &["Hostile", "Friendly"],
        };
        assert_eq!(probe::<Faction>(&[]), Some(faction.clone()));
        assert_eq!(probe::<Stats>(&path("faction")), Some(faction));
        assert_eq!(
            names::<Stats>("plan.0"),
            Some(vec!["wait", "move_to", "heal"])
        );
        let move_to = Shape::Struct {
            name: "move_to",
            fields: &["target", "speed"],
        };
        assert_eq!(probe::<Action>(&path("move_to")), Some(move_to));
        assert_eq!(names::<Action>("move_to.target"), Some(vec!["x", "y"]));
        assert_eq!(names::<Action>("heal"), Some(vec!["current", "max"]));
        // Elements after a struct or enum can't be reached without guessing: no answer.
        assert_eq!(names::<(Faction, Health)>("1"), None);
    }

    #[derive(Deserialize)]
    struct Marker;

    #[test]
    fn unit_structs_are_markers() {
        assert_eq!(probe::<Marker>(&[]), Some(Shape::Unit { name: "Marker" }));
        assert_eq!(probe::<()>(&[]), None);
        assert_eq!(probe::<Option<Marker>>(&[]), None);
    }

    #[derive(Deserialize)]
    #[serde(tag = "kind")]
    enum Order {
        Patrol { radius: f32 },
        Chase { speed: f32 },
    }

    #[derive(Deserialize)]
    struct Orders {
        current: Order,
        plan: Health,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Number(f32),
        Pair { a: f32, b: f32 },
    }

    #[test]
    fn numbers_say_whether_they_are_integers() {
        let integer = Some(Shape::Number { integer: true });
        let float = Some(Shape::Number { integer: false });
        assert_eq!(probe::<Health>(&path("max")), float);
        assert_eq!(probe::<Loot>(&path("gold")), integer);
        assert_eq!(probe::<Loot>(&path("qty")), integer, "an alias");
        assert_eq!(probe::<Stats>(&path("position.0")), float);
        assert_eq!(probe::<Option<u8>>(&[]), integer);
    }

    #[test]
    fn internally_tagged_enums_give_their_tag() {
        assert_eq!(tag_of::<Order>(&[]), Some("kind"));
        assert_eq!(tag_of::<Orders>(&path("current")), Some("kind"));
        assert_eq!(tag_of::<Orders>(&path("plan")), None);
        assert_eq!(tag_of::<Orders>(&[]), None);
        assert_eq!(tag_of::<Loose>(&[]), None);
        assert_eq!(tag_of::<serde_json::Value>(&[]), None);
        assert_eq!(tag_of::<Faction>(&[]), None);
    }

    #[test]
    fn wrappers_are_seen_through() {
        let health = Some(vec!["current", "max"]);
        assert_eq!(names::<Armor>(""), health);
        assert_eq!(names::<Shield>(""), health);
        assert_eq!(names::<Boss>("armor"), health);
    }

    #[test]
    fn a_vector_has_axes_and_an_axis_on_the_path_is_its_element() {
        // glam's vectors deserialize as tuple structs (`[1, 2, 3]`), named by their type.
        let xyz = Some(vec!["x", "y", "z"]);
        assert_eq!(names::<glam::Vec3>(""), xyz);
        assert_eq!(names::<Stats>("position"), xyz);
        assert_eq!(
            probe::<glam::IVec2>(&path("y")),
            Some(Shape::Number { integer: true })
        );
        assert_eq!(probe::<glam::IVec2>(&path("q")), None);
    }

    #[test]
    fn nothing_to_find() {
        assert_eq!(names::<String>(""), None);
        assert_eq!(names::<HashMap<String, u32>>(""), None);
        assert_eq!(names::<HashMap<String, u32>>("a"), None);
        assert_eq!(names::<serde_json::Value>(""), None);
        assert_eq!(names::<serde_json::Value>("a"), None);
        // A struct with a flattened field asks for "a map", not for fields.
        assert_eq!(names::<Boss>(""), None);
        assert_eq!(names::<Boss>("current"), None);
    }

    #[test]
    fn paths_that_are_not_there() {
        assert_eq!(names::<Health>("nope"), None);
        assert_eq!(names::<Health>("0"), None);
        assert_eq!(names::<Stats>("hp.max"), None);
        assert_eq!(names::<Stats>("corners.2"), None);
        assert_eq!(names::<Stats>("loot_by_level.seven"), None);
        assert_eq!(names::<Faction>("Hostile"), None);
        assert_eq!(names::<Action>("wait"), None);
        assert_eq!(names::<Action>("MoveTo"), None);
    }
}
