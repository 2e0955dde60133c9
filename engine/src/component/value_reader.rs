//! Reading typed component values out of archetype JSON: the one deserializer every component
//! value of an archetype goes through (compiling, spawn-time overrides, checking partial values).
//!
//! It reads a `serde_json::Value` the way serde_json's own `&Value` deserializer does (same
//! visits, same messages), with three differences:
//! - a unit struct (a marker component, `struct Enemy;`) is read from `{}` as well as `null`;
//! - its errors are typed ([`ReadErrorKind`]): a missing field and an unknown enum variant are
//!   told apart without reading the message;
//! - *partial* reading: a value an abstract archetype (or a file whose parent is broken) wrote
//!   may lack fields its parents or children supply. In partial mode a struct's missing fields,
//!   an enum written as `{}` and an operator (`{"$add": 1}`, applied later) are stood in for by
//!   a *filler* that gives the visitor some plain value, so every field the file did write is
//!   still checked (its type, its name). A failure inside a filler (a type that refuses the
//!   made-up value) ends the check there, silently: the value is checked as far as it goes.
//!   Arrays replace whole when archetypes merge, so their elements are read in full.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Number, Value};

use crate::diagnostic::quoted;
use crate::json::{glam_axes, in_axis_order, AxisProblem};

/// What went wrong reading a value, by kind (the message says it for people).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReadErrorKind {
    /// A required field is absent (`missing field `max``).
    MissingField,
    /// An enum variant name the type does not have, and the names it has.
    UnknownVariant(String, &'static [&'static str]),
    /// A key of a vector's object form that is none of its axes, and the axes it has.
    UnknownAxis(String, &'static [&'static str]),
    /// A vector's object form without one of its axes, and the axes it has.
    MissingAxis(&'static [&'static str]),
    /// Anything else: a wrong type or value.
    Invalid,
}

/// The error of [`ValueReader`]: serde's message and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ReadError {
    pub kind: ReadErrorKind,
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    /// What is wrong with an object of `axes` (a vector's object form), as an error.
    pub(super) fn of_axes(problem: AxisProblem, axes: &'static [&'static str]) -> ReadError {
        let message = problem.message(axes);
        let kind = match problem {
            AxisProblem::Unknown(axis) => ReadErrorKind::UnknownAxis(axis, axes),
            AxisProblem::Missing(_) => ReadErrorKind::MissingAxis(axes),
        };
        ReadError { kind, message }
    }
}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        ReadError {
            kind: ReadErrorKind::Invalid,
            message: message.to_string(),
        }
    }

    // serde_json's wording for these two (`null`, shortest floats), as messages always had.
    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        let message = <serde_json::Error as de::Error>::invalid_type(unexpected, expected);
        de::Error::custom(message)
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        let message = <serde_json::Error as de::Error>::invalid_value(unexpected, expected);
        de::Error::custom(message)
    }

    fn missing_field(field: &'static str) -> Self {
        ReadError {
            kind: ReadErrorKind::MissingField,
            message: format!("missing field `{field}`"),
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        // serde's own wording, so messages read as they always have.
        let message = <de::value::Error as de::Error>::unknown_variant(variant, expected);
        ReadError {
            kind: ReadErrorKind::UnknownVariant(variant.to_string(), expected),
            message: message.to_string(),
        }
    }
}

/// State shared by every level of one read.
#[derive(Default)]
pub(super) struct Reading {
    /// A filler (partial mode) was refused: nothing after it was checked.
    filler_failed: Cell<bool>,
}

impl Reading {
    /// Whether the read stopped at a filler rather than at something the file wrote.
    pub fn stopped_at_filler(&self) -> bool {
        self.filler_failed.get()
    }
}

/// A deserializer over one JSON value (see the module docs).
#[derive(Clone, Copy)]
pub(super) struct ValueReader<'a> {
    value: &'a Value,
    reading: &'a Reading,
    /// Missing struct fields are stood in for (the value may be partial).
    partial: bool,
}

impl<'a> ValueReader<'a> {
    /// A reader of `value`; `partial` reads it as a value that may lack fields.
    pub fn new(value: &'a Value, reading: &'a Reading, partial: bool) -> Self {
        ValueReader {
            value,
            reading,
            partial,
        }
    }

    fn at(self, value: &'a Value, partial: bool) -> Self {
        ValueReader {
            value,
            partial,
            ..self
        }
    }

    fn invalid_type(self, expected: &dyn de::Expected) -> ReadError {
        de::Error::invalid_type(unexpected(self.value), expected)
    }

    fn filler(self) -> Filler<'a> {
        Filler {
            reading: self.reading,
        }
    }

    /// In partial mode, whether this value is left for later (an operator, applied when the
    /// archetype is complete) and so stood in for.
    fn is_deferred(self) -> bool {
        self.partial && is_operator_object(self.value)
    }
}

/// Whether `value` is an operator object: not empty, and every key starts with `$`.
pub(crate) fn is_operator_object(value: &Value) -> bool {
    match value {
        Value::Object(object) => {
            !object.is_empty() && object.keys().all(|key| key.starts_with('$'))
        }
        _ => false,
    }
}

/// An enum value naming several variants (`{"Chase": .., "Patrol": ..}`): the message says
/// how to write one, and that doing so switches from an inherited variant.
fn several_variants(name: &str, object: &Map<String, Value>) -> ReadError {
    let shown: Vec<String> = object.keys().take(4).map(|key| quoted(key)).collect();
    let listed = match shown.split_last() {
        Some((last, rest)) if object.len() <= 4 => format!("{} and {last}", rest.join(", ")),
        _ => format!("{}, …", shown.join(", ")),
    };
    let example = object
        .keys()
        .next()
        .and_then(|key| serde_json::to_string(key).ok())
        .unwrap_or_default();
    de::Error::custom(format!(
        "{listed} are {} variants of `{name}`, which holds one; write only the one you want, e.g. `{{{example}: ...}}`, and it replaces an inherited variant",
        object.len()
    ))
}

/// serde's description of what a JSON value is, for "invalid type" messages.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => number_unexpected(n),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

fn number_unexpected(n: &Number) -> Unexpected<'static> {
    if let Some(u) = n.as_u64() {
        Unexpected::Unsigned(u)
    } else if let Some(i) = n.as_i64() {
        Unexpected::Signed(i)
    } else {
        Unexpected::Float(n.as_f64().unwrap_or(0.0))
    }
}

fn visit_number<'de, V: Visitor<'de>>(n: &Number, visitor: V) -> Result<V::Value, ReadError> {
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(0.0))
    }
}

impl<'a> ValueReader<'a> {
    fn visit_array<V: Visitor<'a>>(
        self,
        items: &'a [Value],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let mut seq = SeqReader {
            items: items.iter().map(Some),
            reader: self,
            partial: false,
        };
        let value = visitor.visit_seq(&mut seq)?;
        match seq.items.len() {
            0 => Ok(value),
            _ => Err(de::Error::invalid_length(
                items.len(),
                &"fewer elements in array",
            )),
        }
    }

    /// Visits an object of named axes as the sequence of its values in the order of `axes`;
    /// in partial mode, an axis not written is stood in for.
    fn visit_axes<V: Visitor<'a>>(
        self,
        object: &'a Map<String, Value>,
        axes: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let problem = |problem: AxisProblem| ReadError::of_axes(problem, axes);
        let items = in_axis_order(object, axes).map_err(problem)?;
        if !self.partial {
            if let Some(i) = items.iter().position(Option::is_none) {
                return Err(problem(AxisProblem::Missing(axes[i])));
            }
        }
        // An axis merges as a field does: in partial mode it may be partial too.
        visitor.visit_seq(SeqReader {
            items: items.into_iter(),
            reader: self,
            partial: self.partial,
        })
    }

    /// Visits an object as a map; in partial mode, `fillers` are field names to stand in for
    /// after the entries written.
    fn visit_object<V: Visitor<'a>>(
        self,
        object: &'a Map<String, Value>,
        fillers: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let mut map = MapReader {
            entries: object.iter(),
            object,
            fillers: fillers.iter(),
            pending: None,
            in_fillers: false,
            reader: self,
        };
        let result = visitor.visit_map(&mut map);
        if result.is_err() && map.in_fillers {
            self.reading.filler_failed.set(true);
        }
        let value = result?;
        match map.entries.len() {
            0 => Ok(value),
            _ => Err(de::Error::invalid_length(
                object.len(),
                &"fewer elements in map",
            )),
        }
    }
}

impl<'a> Deserializer<'a> for ValueReader<'a> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        if self.is_deferred() {
            return self.filler().deserialize_any(visitor);
        }
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => self.at(self.value, false).visit_array(items, visitor),
            Value::Object(object) => self.visit_object(object, &[], visitor),
        }
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        if self.is_deferred() {
            return self.filler().deserialize_enum(name, variants, visitor);
        }
        match self.value {
            Value::String(variant) => visitor.visit_enum(VariantReader {
                variant,
                content: None,
                reader: self,
            }),
            Value::Object(object) if object.is_empty() && self.partial => {
                self.filler().deserialize_enum(name, variants, visitor)
            }
            Value::Object(object) => {
                let mut entries = object.iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, content)), None) => visitor.visit_enum(VariantReader {
                        variant,
                        content: Some(content),
                        reader: self,
                    }),
                    (Some(_), Some(_)) => Err(several_variants(name, object)),
                    _ => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            other => Err(de::Error::invalid_type(unexpected(other), &"string or map")),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            _ if self.is_deferred() => self.filler().deserialize_bool(visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ if self.is_deferred() => self.filler().deserialize_str(visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => self.at(self.value, false).visit_array(items, visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    /// A marker (`struct Enemy;`) is written `{}` in archetype files; `null` (serde's own form,
    /// what scenes write) reads too.
    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Object(object) if object.is_empty() => visitor.visit_unit(),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Array(items) => self.at(self.value, false).visit_array(items, visitor),
            _ if self.is_deferred() => self.filler().deserialize_seq(visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'a>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_seq(visitor)
    }

    /// A glam vector or quaternion reads from an object of its axes too (`{"x": 1, ...}`).
    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        // The name is looked at only for an object: arrays, the usual form, pay nothing.
        if let Value::Object(object) = self.value {
            if let Some(axes) = glam_axes(name, len).filter(|_| !self.is_deferred()) {
                return self.visit_axes(object, axes, visitor);
            }
        }
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            _ if self.is_deferred() => self.filler().deserialize_map(visitor),
            Value::Object(object) => self.visit_object(object, &[], visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.value {
            _ if self.is_deferred() => self.filler().deserialize_struct(name, fields, visitor),
            Value::Array(items) => self.at(self.value, false).visit_array(items, visitor),
            Value::Object(object) => {
                let fillers = if self.partial { fields } else { &[] };
                self.visit_object(object, fillers, visitor)
            }
            _ => Err(self.invalid_type(&visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_unit()
    }

    fn deserialize_i8<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i16<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u8<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u16<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_u64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_number(visitor)
    }
    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_any(visitor)
    }
    fn deserialize_u128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_any(visitor)
    }
}

impl<'a> ValueReader<'a> {
    fn deserialize_number<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.value {
            Value::Number(n) => visit_number(n, visitor),
            _ if self.is_deferred() => self.filler().deserialize_u64(visitor),
            _ => Err(self.invalid_type(&visitor)),
        }
    }
}

/// The elements of an array (each read in full), or the axes of a vector's object form in axis
/// order, partial as the vector is; `None` (an axis not written, partial mode) is stood in for.
struct SeqReader<'a, I> {
    items: I,
    reader: ValueReader<'a>,
    partial: bool,
}

impl<'a, I: ExactSizeIterator<Item = Option<&'a Value>>> SeqAccess<'a> for SeqReader<'a, I> {
    type Error = ReadError;

    fn next_element_seed<S: DeserializeSeed<'a>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ReadError> {
        match self.items.next() {
            Some(Some(item)) => seed
                .deserialize(self.reader.at(item, self.partial))
                .map(Some),
            Some(None) => {
                let filler = self.reader.filler();
                filler.note(seed.deserialize(filler)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of an object, then (partial mode) fillers for the struct fields not written.
struct MapReader<'a> {
    entries: serde_json::map::Iter<'a>,
    object: &'a Map<String, Value>,
    fillers: std::slice::Iter<'static, &'static str>,
    /// The value of the entry whose key was just read.
    pending: Option<&'a Value>,
    /// The entries are done; keys now come from `fillers`.
    in_fillers: bool,
    reader: ValueReader<'a>,
}

impl<'a> MapAccess<'a> for MapReader<'a> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        if let Some((key, value)) = self.entries.next() {
            self.pending = Some(value);
            return seed.deserialize(KeyReader { key }).map(Some);
        }
        self.pending = None;
        for field in self.fillers.by_ref() {
            if !self.object.contains_key(*field) {
                self.in_fillers = true;
                return seed.deserialize(KeyReader { key: field }).map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<S: DeserializeSeed<'a>>(&mut self, seed: S) -> Result<S::Value, ReadError> {
        match self.pending.take() {
            Some(value) => seed.deserialize(self.reader.at(value, self.reader.partial)),
            None if self.in_fillers => seed.deserialize(self.reader.filler()),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An object key, which may stand for a number, a bool or an enum variant (as serde_json reads
/// keys).
struct KeyReader<'a> {
    key: &'a str,
}

impl<'de> KeyReader<'de> {
    fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        let numeric = matches!(self.key.as_bytes().first(), Some(b'0'..=b'9' | b'-'));
        let parsed = numeric
            .then(|| serde_json::from_str::<Number>(self.key).ok())
            .flatten();
        match parsed {
            Some(n) => visit_number(&n, visitor),
            None => Err(de::Error::custom(
                "invalid value: expected key to be a number in quotes",
            )),
        }
    }
}

impl<'de> Deserializer<'de> for KeyReader<'de> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_borrowed_str(self.key)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.key {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(de::Error::invalid_type(Unexpected::Str(self.key), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let key: de::value::BorrowedStrDeserializer<'de, ReadError> =
            de::value::BorrowedStrDeserializer::new(self.key);
        key.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.number(visitor)
    }

    forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map
        struct identifier ignored_any
    }
}

/// An enum read from `"Variant"` or `{"Variant": content}`.
struct VariantReader<'a> {
    variant: &'a str,
    content: Option<&'a Value>,
    reader: ValueReader<'a>,
}

impl<'a> EnumAccess<'a> for VariantReader<'a> {
    type Error = ReadError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<(S::Value, Self), ReadError> {
        let key: de::value::BorrowedStrDeserializer<'a, ReadError> =
            de::value::BorrowedStrDeserializer::new(self.variant);
        Ok((seed.deserialize(key)?, self))
    }
}

impl<'a> VariantAccess<'a> for VariantReader<'a> {
    type Error = ReadError;

    fn unit_variant(self) -> Result<(), ReadError> {
        match self.content {
            Some(content) => de::Deserialize::deserialize(self.reader.at(content, false)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<S::Value, ReadError> {
        match self.content {
            Some(content) => seed.deserialize(self.reader.at(content, self.reader.partial)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, ReadError> {
        match self.content {
            Some(content @ Value::Array(items)) => {
                let reader = self.reader.at(content, false);
                if items.is_empty() {
                    visitor.visit_unit()
                } else {
                    reader.visit_array(items, visitor)
                }
            }
            Some(other) => Err(de::Error::invalid_type(unexpected(other), &"tuple variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.content {
            Some(content) => {
                let reader = self.reader.at(content, self.reader.partial);
                reader.deserialize_struct("", fields, visitor)
            }
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

/// Stands in for a value a partial value does not have: gives every visitor some plain value
/// of the kind it asks for. A visitor that refuses it marks the read as stopped at a filler.
#[derive(Clone, Copy)]
struct Filler<'a> {
    reading: &'a Reading,
}

impl Filler<'_> {
    fn note<T>(self, result: Result<T, ReadError>) -> Result<T, ReadError> {
        if result.is_err() {
            self.reading.filler_failed.set(true);
        }
        result
    }
}

/// Filler methods that visit one plain value.
macro_rules! filler_scalars {
    ($($method:ident => $visit:ident($($value:expr)?),)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            self.note(visitor.$visit($($value)?))
        }
    )*};
}

impl<'de> Deserializer<'de> for Filler<'_> {
    type Error = ReadError;

    filler_scalars! {
        deserialize_any => visit_unit(), deserialize_bool => visit_bool(false),
        deserialize_char => visit_char(' '), deserialize_str => visit_str(""),
        deserialize_string => visit_str(""), deserialize_identifier => visit_str(""),
        deserialize_bytes => visit_bytes(&[]), deserialize_byte_buf => visit_bytes(&[]),
        deserialize_unit => visit_unit(), deserialize_ignored_any => visit_unit(),
        deserialize_option => visit_none(),
        // Every number visitor takes a `u64` that fits; 1 fits all, `NonZero*` too.
        deserialize_i8 => visit_u64(1), deserialize_i16 => visit_u64(1),
        deserialize_i32 => visit_u64(1), deserialize_i64 => visit_u64(1),
        deserialize_i128 => visit_u64(1), deserialize_u8 => visit_u64(1),
        deserialize_u16 => visit_u64(1), deserialize_u32 => visit_u64(1),
        deserialize_u64 => visit_u64(1), deserialize_u128 => visit_u64(1),
        deserialize_f32 => visit_u64(1), deserialize_f64 => visit_u64(1),
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.note(visitor.visit_unit())
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.note(visitor.visit_newtype_struct(self))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.note(visitor.visit_seq(Fillers {
            left: 0,
            filler: self,
        }))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.note(visitor.visit_seq(Fillers {
            left: len,
            filler: self,
        }))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.note(visitor.visit_map(FillerFields {
            fields: [].iter(),
            filler: self,
        }))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.note(visitor.visit_map(FillerFields {
            fields: fields.iter(),
            filler: self,
        }))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match variants.first() {
            Some(first) => self.note(visitor.visit_enum(FillerVariant {
                variant: first,
                filler: self,
            })),
            None => self.note(Err(de::Error::custom("an enum without variants"))),
        }
    }
}

/// `left` fillers as a sequence.
struct Fillers<'a> {
    left: usize,
    filler: Filler<'a>,
}

impl<'de> SeqAccess<'de> for Fillers<'_> {
    type Error = ReadError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ReadError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(self.filler).map(Some)
    }
}

/// Every field of a struct, each a filler.
struct FillerFields<'a> {
    fields: std::slice::Iter<'static, &'static str>,
    filler: Filler<'a>,
}

impl<'de> MapAccess<'de> for FillerFields<'_> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ReadError> {
        match self.fields.next() {
            Some(field) => {
                let key: de::value::StrDeserializer<'_, ReadError> = field.into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, ReadError> {
        seed.deserialize(self.filler)
    }
}

/// The first variant of an enum, with filler content.
struct FillerVariant<'a> {
    variant: &'static str,
    filler: Filler<'a>,
}

impl<'de> EnumAccess<'de> for FillerVariant<'_> {
    type Error = ReadError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), ReadError> {
        let key: de::value::StrDeserializer<'_, ReadError> = self.variant.into_deserializer();
        Ok((seed.deserialize(key)?, self))
    }
}

impl<'de> VariantAccess<'de> for FillerVariant<'_> {
    type Error = ReadError;

    fn unit_variant(self) -> Result<(), ReadError> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, ReadError> {
        seed.deserialize(self.filler)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, ReadError> {
        self.filler.deserialize_tuple(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.filler.deserialize_struct("", fields, visitor)
    }
}
