//! [`Layout`]: the shape of a component type's binary (postcard) form — field names and
//! types, enum variants, sequences — traced from its `Deserialize` impl, so a binary scene can
//! say how its values were laid out when it was saved.
//!
//! Postcard is positional: a value saved before a field was added, removed or moved cannot be
//! read by the new type. A binary scene stores each component's layout in its table; when it
//! differs from the type's layout now, the bytes are read by the stored layout into JSON
//! ([`read_value`]), and the type reads that as it reads a JSON scene: new fields take their
//! defaults, renamed ones their aliases, and fields that are gone are dropped.
//!
//! Tracing ([`trace`]) runs the type's `Deserialize` against a deserializer that hands out
//! made-up values and records what was asked for; an enum is traced once per variant (a pass
//! per untraced variant). A type that inspects its input itself (`deserialize_any`: untagged
//! enums, `serde_json::Value`), validates the made-up values or nests too deep has no layout:
//! its values are read positionally, as before layouts existed.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json::glam_axes;

/// The name a `Shared<T>` asks for while a layout is traced: in binary scenes it is written
/// as the key of its value in the shared table.
pub(super) const SHARED_NEWTYPE: &str = "$shared";

/// The binary shape of a value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Layout {
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    Bytes,
    Unit,
    Option(#[serde(deserialize_with = "nested")] Box<Layout>),
    Seq(#[serde(deserialize_with = "nested")] Box<Layout>),
    Map(
        #[serde(deserialize_with = "nested")] Box<Layout>,
        #[serde(deserialize_with = "nested")] Box<Layout>,
    ),
    Tuple(#[serde(deserialize_with = "nested")] Vec<Layout>),
    Struct(#[serde(deserialize_with = "nested")] Vec<(String, Layout)>),
    Newtype(#[serde(deserialize_with = "nested")] Box<Layout>),
    Enum(#[serde(deserialize_with = "nested")] Vec<(String, Variant)>),
    /// A `Shared<T>`: the key of its value in the scene's shared table.
    Shared,
    /// While tracing: the enum of that name (filled in at the end).
    EnumRef(String),
    /// A glam vector or quaternion in its human-readable form: a tuple, also written as an
    /// object of these axes. Binary layouts never hold it (their vectors are tuples).
    Vector(
        #[serde(deserialize_with = "nested")] Vec<Layout>,
        Vec<String>,
    ),
}

/// The binary shape of one enum variant's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Variant {
    Unit,
    Newtype(Layout),
    Tuple(Vec<Layout>),
    Struct(Vec<(String, Layout)>),
}

/// Deepest nesting of a layout read back from bytes (a binary scene's table, a cook): twice
/// what tracing makes, so every layout written is read, and a crafted one nested a million
/// deep (one byte per level) is refused instead of overflowing the stack.
const MAX_STORED_DEPTH: usize = 2 * MAX_DEPTH;

thread_local! {
    /// How deep the layout being read on this thread is nested, at the point being read.
    static READ_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Reads a layout's nested part one level deeper, refused past [`MAX_STORED_DEPTH`].
fn nested<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<T, D::Error> {
    struct Level;
    impl Drop for Level {
        fn drop(&mut self) {
            READ_DEPTH.with(|depth| depth.set(depth.get().saturating_sub(1)));
        }
    }
    let deeper = READ_DEPTH.with(|depth| {
        depth.set(depth.get() + 1);
        depth.get()
    });
    let _level = Level;
    if deeper > MAX_STORED_DEPTH {
        let message = format!("a layout nested deeper than {MAX_STORED_DEPTH} levels");
        return Err(de::Error::custom(message));
    }
    T::deserialize(deserializer)
}

/// Passes over a type at most (one per enum variant it has, nested ones included).
const MAX_PASSES: usize = 256;
/// Deepest nesting traced.
const MAX_DEPTH: usize = 64;

/// The layout of `T`'s binary form, or `None` if it cannot be traced (see the module docs).
/// The caller installs what `T`'s own serde impls need (see
/// [`ValueOps::layout`](crate::component::value_ops::ValueOps::layout)).
pub(super) fn trace<T: DeserializeOwned>() -> Option<Layout> {
    trace_with::<T>(false)
}

/// As [`trace`], of the type's human-readable form (as JSON reads it) when `human_readable`:
/// types such as glam's ask their deserializer which form it reads.
pub(super) fn trace_with<T: DeserializeOwned>(human_readable: bool) -> Option<Layout> {
    let state = RefCell::new(TraceState {
        human_readable,
        ..TraceState::default()
    });
    let mut layout = None;
    for _ in 0..MAX_PASSES {
        state.borrow_mut().untraced = false;
        let slot = RefCell::new(Layout::Unit);
        let tracer = Tracer {
            state: &state,
            slot: &slot,
            depth: 0,
        };
        T::deserialize(tracer).ok()?;
        layout = Some(slot.into_inner());
        if !state.borrow().untraced {
            break;
        }
    }
    let state = state.into_inner();
    state
        .enums
        .values()
        .all(|variants| variants.iter().all(Option::is_some))
        .then_some(())?;
    materialize(layout?, &state.enums, 0)
}

/// Replaces the enum references of a traced layout by the enums' variants.
fn materialize(
    layout: Layout,
    enums: &BTreeMap<String, Vec<Option<(String, Variant)>>>,
    depth: usize,
) -> Option<Layout> {
    if depth > MAX_DEPTH {
        return None;
    }
    let go = |layout: Layout| materialize(layout, enums, depth + 1);
    let boxed = |layout: Layout| go(layout).map(Box::new);
    let fields = |fields: Vec<(String, Layout)>| {
        (fields.into_iter())
            .map(|(name, layout)| Some((name, go(layout)?)))
            .collect::<Option<Vec<_>>>()
    };
    Some(match layout {
        Layout::Option(inner) => Layout::Option(boxed(*inner)?),
        Layout::Seq(inner) => Layout::Seq(boxed(*inner)?),
        Layout::Newtype(inner) => Layout::Newtype(boxed(*inner)?),
        Layout::Map(key, value) => Layout::Map(boxed(*key)?, boxed(*value)?),
        Layout::Tuple(items) => Layout::Tuple(items.into_iter().map(go).collect::<Option<_>>()?),
        Layout::Vector(items, axes) => {
            Layout::Vector(items.into_iter().map(go).collect::<Option<_>>()?, axes)
        }
        Layout::Struct(items) => Layout::Struct(fields(items)?),
        Layout::EnumRef(name) => {
            let variants = enums.get(&name)?.iter().cloned().map(|variant| {
                let (name, variant) = variant?;
                let variant = match variant {
                    Variant::Unit => Variant::Unit,
                    Variant::Newtype(inner) => Variant::Newtype(go(inner)?),
                    Variant::Tuple(items) => {
                        Variant::Tuple(items.into_iter().map(go).collect::<Option<_>>()?)
                    }
                    Variant::Struct(items) => Variant::Struct(fields(items)?),
                };
                Some((name, variant))
            });
            Layout::Enum(variants.collect::<Option<_>>()?)
        }
        other => other,
    })
}

/// What the passes over a type learned: each enum's variants, traced or not yet.
#[derive(Default)]
struct TraceState {
    enums: BTreeMap<String, Vec<Option<(String, Variant)>>>,
    /// A variant was left untraced in this pass: another pass is needed.
    untraced: bool,
    /// Whether the deserializer says it reads a human-readable form.
    human_readable: bool,
}

/// The one error of tracing: the type cannot be traced.
#[derive(Debug)]
struct Untraceable;

impl fmt::Display for Untraceable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the type's layout cannot be traced")
    }
}

impl std::error::Error for Untraceable {}

impl de::Error for Untraceable {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Untraceable
    }
}

/// Stands for one value: hands the visitor a made-up value and records the layout asked for
/// in `slot`.
struct Tracer<'s> {
    state: &'s RefCell<TraceState>,
    slot: &'s RefCell<Layout>,
    depth: usize,
}

impl<'s> Tracer<'s> {
    fn record(&self, layout: Layout) {
        *self.slot.borrow_mut() = layout;
    }

    /// Traces one nested value with `trace`, returning its layout along with the result.
    fn nested<R>(
        &self,
        trace: impl FnOnce(Tracer<'_>) -> Result<R, Untraceable>,
    ) -> Result<(R, Layout), Untraceable> {
        if self.depth >= MAX_DEPTH {
            return Err(Untraceable);
        }
        let slot = RefCell::new(Layout::Unit);
        let value = trace(Tracer {
            state: self.state,
            slot: &slot,
            depth: self.depth + 1,
        })?;
        Ok((value, slot.into_inner()))
    }
}

macro_rules! trace_scalar {
    ($($method:ident => $layout:ident, $visit:ident($($value:expr)?);)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Untraceable> {
            self.record(Layout::$layout);
            visitor.$visit($($value)?)
        }
    )*};
}

impl<'de> Deserializer<'de> for Tracer<'_> {
    type Error = Untraceable;

    trace_scalar! {
        deserialize_bool => Bool, visit_bool(false);
        deserialize_i8 => I8, visit_i8(0);
        deserialize_i16 => I16, visit_i16(0);
        deserialize_i32 => I32, visit_i32(0);
        deserialize_i64 => I64, visit_i64(0);
        deserialize_i128 => I128, visit_i128(0);
        deserialize_u8 => U8, visit_u8(0);
        deserialize_u16 => U16, visit_u16(0);
        deserialize_u32 => U32, visit_u32(0);
        deserialize_u64 => U64, visit_u64(0);
        deserialize_u128 => U128, visit_u128(0);
        deserialize_f32 => F32, visit_f32(0.0);
        deserialize_f64 => F64, visit_f64(0.0);
        deserialize_char => Char, visit_char('a');
        deserialize_str => Str, visit_str("");
        deserialize_string => Str, visit_str("");
        deserialize_bytes => Bytes, visit_bytes(&[]);
        deserialize_byte_buf => Bytes, visit_bytes(&[]);
        deserialize_unit => Unit, visit_unit();
        deserialize_identifier => Str, visit_str("");
        deserialize_ignored_any => Unit, visit_unit();
    }

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Untraceable> {
        Err(Untraceable)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Untraceable> {
        let (value, inner) = self.nested(|tracer| visitor.visit_some(tracer))?;
        self.record(Layout::Option(Box::new(inner)));
        Ok(value)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        self.record(Layout::Unit);
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let (value, inner) = self.nested(|tracer| visitor.visit_newtype_struct(tracer))?;
        self.record(if name == SHARED_NEWTYPE {
            Layout::Shared
        } else {
            Layout::Newtype(Box::new(inner))
        });
        Ok(value)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Untraceable> {
        let mut items = Items::new(&self, 1);
        let value = visitor.visit_seq(&mut items)?;
        let item = items.layouts.pop().ok_or(Untraceable)?;
        self.record(Layout::Seq(Box::new(item)));
        Ok(value)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let mut items = Items::new(&self, len);
        let value = visitor.visit_seq(&mut items)?;
        self.record(Layout::Tuple(items.layouts));
        Ok(value)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let axes = glam_axes(name, len).filter(|_| self.state.borrow().human_readable);
        let Some(axes) = axes else {
            return self.deserialize_tuple(len, visitor);
        };
        let mut items = Items::new(&self, len);
        let value = visitor.visit_seq(&mut items)?;
        let axes = axes.iter().map(|axis| axis.to_string()).collect();
        self.record(Layout::Vector(items.layouts, axes));
        Ok(value)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Untraceable> {
        let mut entry = Entry {
            tracer: &self,
            key: None,
            value: None,
            done: false,
        };
        let value = visitor.visit_map(&mut entry)?;
        let (Some(key), Some(item)) = (entry.key, entry.value) else {
            return Err(Untraceable);
        };
        self.record(Layout::Map(Box::new(key), Box::new(item)));
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let mut members = Fields::new(&self, fields);
        let value = visitor.visit_map(&mut members)?;
        let names = fields.iter().map(|name| name.to_string());
        self.record(Layout::Struct(names.zip(members.layouts).collect()));
        Ok(value)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let index = {
            let mut state = self.state.borrow_mut();
            let traced = state
                .enums
                .entry(name.to_string())
                .or_insert_with(|| vec![None; variants.len()]);
            let index = traced.iter().position(Option::is_none).unwrap_or(0);
            if traced.iter().filter(|v| v.is_none()).count() > 1 {
                state.untraced = true;
            }
            index
        };
        let variant = variants.get(index).ok_or(Untraceable)?;
        let access = Choice {
            tracer: &self,
            variant,
        };
        let traced = RefCell::new(None);
        let value = visitor.visit_enum(ChoiceRef {
            choice: access,
            out: &traced,
        })?;
        let content = traced.into_inner().ok_or(Untraceable)?;
        let mut state = self.state.borrow_mut();
        if let Some(slot) = state.enums.get_mut(name).and_then(|v| v.get_mut(index)) {
            *slot = Some((variant.to_string(), content));
        }
        drop(state);
        self.record(Layout::EnumRef(name.to_string()));
        Ok(value)
    }

    fn is_human_readable(&self) -> bool {
        // Binary scenes are written by postcard, which is not; JSON is.
        self.state.borrow().human_readable
    }
}

/// The elements of a sequence or tuple: `len` made-up values.
struct Items<'t, 's> {
    tracer: &'t Tracer<'s>,
    left: usize,
    layouts: Vec<Layout>,
}

impl<'t, 's> Items<'t, 's> {
    fn new(tracer: &'t Tracer<'s>, len: usize) -> Self {
        Items {
            tracer,
            left: len,
            layouts: Vec::new(),
        }
    }
}

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = Untraceable;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Untraceable> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let (value, layout) = self.tracer.nested(|tracer| seed.deserialize(tracer))?;
        self.layouts.push(layout);
        Ok(Some(value))
    }
}

/// One made-up entry of a map.
struct Entry<'t, 's> {
    tracer: &'t Tracer<'s>,
    key: Option<Layout>,
    value: Option<Layout>,
    done: bool,
}

impl<'de> MapAccess<'de> for Entry<'_, '_> {
    type Error = Untraceable;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Untraceable> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        let (key, layout) = self.tracer.nested(|tracer| seed.deserialize(tracer))?;
        self.key = Some(layout);
        Ok(Some(key))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Untraceable> {
        let (value, layout) = self.tracer.nested(|tracer| seed.deserialize(tracer))?;
        self.value = Some(layout);
        Ok(value)
    }
}

/// A struct's fields, by name, in their declared order.
struct Fields<'t, 's> {
    tracer: &'t Tracer<'s>,
    names: &'static [&'static str],
    next: usize,
    layouts: Vec<Layout>,
}

impl<'t, 's> Fields<'t, 's> {
    fn new(tracer: &'t Tracer<'s>, names: &'static [&'static str]) -> Self {
        Fields {
            tracer,
            names,
            next: 0,
            layouts: Vec::new(),
        }
    }
}

impl<'de> MapAccess<'de> for Fields<'_, '_> {
    type Error = Untraceable;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Untraceable> {
        let Some(name) = self.names.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(name.into_deserializer()).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Untraceable> {
        let (value, layout) = self.tracer.nested(|tracer| seed.deserialize(tracer))?;
        self.layouts.push(layout);
        Ok(value)
    }
}

/// The variant chosen for this pass over an enum.
struct Choice<'t, 's> {
    tracer: &'t Tracer<'s>,
    variant: &'static str,
}

/// A [`Choice`] handing its variant's layout to `out` once traced.
struct ChoiceRef<'t, 's, 'o> {
    choice: Choice<'t, 's>,
    out: &'o RefCell<Option<Variant>>,
}

impl<'de, 't, 's, 'o> EnumAccess<'de> for ChoiceRef<'t, 's, 'o> {
    type Error = Untraceable;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), Untraceable> {
        let value = seed.deserialize(self.choice.variant.into_deserializer())?;
        Ok((value, self))
    }
}

impl<'de> VariantAccess<'de> for ChoiceRef<'_, '_, '_> {
    type Error = Untraceable;

    fn unit_variant(self) -> Result<(), Untraceable> {
        *self.out.borrow_mut() = Some(Variant::Unit);
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Untraceable> {
        let (value, layout) = self
            .choice
            .tracer
            .nested(|tracer| seed.deserialize(tracer))?;
        *self.out.borrow_mut() = Some(Variant::Newtype(layout));
        Ok(value)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let mut items = Items::new(self.choice.tracer, len);
        let value = visitor.visit_seq(&mut items)?;
        *self.out.borrow_mut() = Some(Variant::Tuple(items.layouts));
        Ok(value)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Untraceable> {
        let mut members = Fields::new(self.choice.tracer, fields);
        let value = visitor.visit_map(&mut members)?;
        let names = fields.iter().map(|name| name.to_string());
        *self.out.borrow_mut() = Some(Variant::Struct(names.zip(members.layouts).collect()));
        Ok(value)
    }
}

// ---- reading postcard bytes by a layout ----
/// Why postcard bytes could not be read (or skipped) by a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BadBytes {
    /// The layout nests deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A 128-bit integer (never read: JSON numbers cannot hold them).
    Wide128,
    /// An enum variant index that does not fit a `usize`.
    VariantOutOfRange,
    /// An enum variant index past the enum's variants.
    NoSuchVariant,
    /// An enum the layout names but does not hold (a recursive type's unresolved reference).
    UnresolvedEnum,
    /// The bytes end before the value does.
    EndsEarly,
    /// A varint longer than a `u64`'s ten bytes.
    LongVarint,
    /// A length that does not fit a `usize`.
    LengthTooLarge,
    /// A length larger than the bytes left, so it cannot be honest.
    LengthBeyondValue,
    /// A string whose bytes are not UTF-8.
    NotUtf8,
    /// A float that is infinite or NaN, which JSON cannot hold.
    NotFinite,
}

impl fmt::Display for BadBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BadBytes::TooDeep => "nested too deep",
            BadBytes::Wide128 => "128-bit integers are not read",
            BadBytes::VariantOutOfRange => "variant out of range",
            BadBytes::NoSuchVariant => "variant index out of range",
            BadBytes::UnresolvedEnum => "an unresolved enum in a layout",
            BadBytes::EndsEarly => "the value ends early",
            BadBytes::LongVarint => "a varint is too long",
            BadBytes::LengthTooLarge => "a length is too large",
            BadBytes::LengthBeyondValue => "a length is larger than the value",
            BadBytes::NotUtf8 => "a string is not UTF-8",
            BadBytes::NotFinite => "a number that is not finite",
        })
    }
}

/// Reads one postcard value laid out as `layout` from the front of `bytes` (moved past it) as
/// JSON: structs as objects, enums externally tagged, references and shared values as the
/// numbers binary scenes write.
pub(crate) fn read_value(layout: &Layout, bytes: &mut &[u8]) -> Result<Value, BadBytes> {
    read_at(layout, bytes, 0)
}

fn read_at(layout: &Layout, bytes: &mut &[u8], depth: usize) -> Result<Value, BadBytes> {
    if depth > MAX_DEPTH {
        return Err(BadBytes::TooDeep);
    }
    let next = |layout: &Layout, bytes: &mut &[u8]| read_at(layout, bytes, depth + 1);
    Ok(match layout {
        Layout::Bool => Value::Bool(take(bytes, 1)?[0] != 0),
        Layout::U8 => Value::from(take(bytes, 1)?[0]),
        Layout::I8 => Value::from(take(bytes, 1)?[0] as i8),
        Layout::U16 | Layout::U32 | Layout::U64 => Value::from(varint(bytes)?),
        Layout::I16 | Layout::I32 | Layout::I64 => Value::from(zigzag(varint(bytes)?)),
        Layout::U128 | Layout::I128 => return Err(BadBytes::Wide128),
        Layout::F32 => number(f64::from(f32::from_le_bytes(array(bytes)?)))?,
        Layout::F64 => number(f64::from_le_bytes(array(bytes)?))?,
        Layout::Char | Layout::Str => Value::String(string(bytes)?),
        Layout::Bytes => {
            let length = length(bytes)?;
            Value::from(take(bytes, length)?.to_vec())
        }
        Layout::Unit => Value::Null,
        Layout::Option(inner) => match take(bytes, 1)?[0] {
            0 => Value::Null,
            _ => next(inner, bytes)?,
        },
        Layout::Newtype(inner) => next(inner, bytes)?,
        Layout::Seq(item) => {
            let count = length(bytes)?;
            let items = (0..count).map(|_| next(item, bytes));
            Value::Array(items.collect::<Result<_, _>>()?)
        }
        Layout::Tuple(items) | Layout::Vector(items, _) => {
            let items = items.iter().map(|item| next(item, bytes));
            Value::Array(items.collect::<Result<_, _>>()?)
        }
        Layout::Map(key, value) => {
            let count = length(bytes)?;
            let mut map = Map::new();
            for _ in 0..count {
                let key = match next(key, bytes)? {
                    Value::String(key) => key,
                    other => other.to_string(),
                };
                map.insert(key, next(value, bytes)?);
            }
            Value::Object(map)
        }
        Layout::Struct(fields) => Value::Object(read_fields(fields, bytes, depth)?),
        Layout::Enum(variants) => {
            let index = usize::try_from(varint(bytes)?).map_err(|_| BadBytes::VariantOutOfRange)?;
            let (name, variant) = variants.get(index).ok_or(BadBytes::NoSuchVariant)?;
            let content = match variant {
                Variant::Unit => return Ok(Value::String(name.clone())),
                Variant::Newtype(inner) => next(inner, bytes)?,
                Variant::Tuple(items) => {
                    let items = items.iter().map(|item| next(item, bytes));
                    Value::Array(items.collect::<Result<_, _>>()?)
                }
                Variant::Struct(fields) => Value::Object(read_fields(fields, bytes, depth)?),
            };
            let mut map = Map::new();
            map.insert(name.clone(), content);
            Value::Object(map)
        }
        // The key, as binary scenes write it (JSON ones accept it too).
        Layout::Shared => Value::from(varint(bytes)?),
        Layout::EnumRef(_) => return Err(BadBytes::UnresolvedEnum),
    })
}

fn read_fields(
    fields: &[(String, Layout)],
    bytes: &mut &[u8],
    depth: usize,
) -> Result<Map<String, Value>, BadBytes> {
    let mut map = Map::new();
    for (name, layout) in fields {
        map.insert(name.clone(), read_at(layout, bytes, depth + 1)?);
    }
    Ok(map)
}

// ---- patching postcard bytes by a layout ----

/// How to apply one merge patch to postcard values of one layout, planned once for many
/// values: which fields to keep, and the bytes of each patched leaf (taken from the value the
/// patch leads to). Only plain struct paths are planned (see [`Splice::plan`]).
#[derive(Debug)]
pub(super) enum Splice<'l> {
    /// A patched leaf: the live value's bytes are replaced by these.
    Take(&'l Layout, Vec<u8>),
    /// A struct: per field, kept as it is (`None`) or patched.
    Fields(Vec<(&'l Layout, Option<Splice<'l>>)>),
}

/// Why a patch is not spliced into postcard bytes (the caller patches through JSON instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoSplice {
    /// The patch goes into something other than a struct field (a map, an enum, an option,
    /// a sequence): only plain struct paths are planned.
    NotAStructPath,
    /// The patch removes a value (`null`).
    Removes,
    /// The patch names a field the struct does not have.
    UnknownField,
    /// Bytes (the value the patch leads to, or a live value) do not fit the layout.
    BytesDoNotFit,
    /// The layout nests deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl<'l> Splice<'l> {
    /// Plans `patch` for values laid out as `layout`; `after` is the postcard value the patch
    /// leads to (so it holds every patched leaf as the patch writes it). Refused for anything
    /// but plain struct paths, with the reason.
    pub(super) fn plan(layout: &'l Layout, patch: &Value, after: &[u8]) -> Result<Self, NoSplice> {
        let mut after = after;
        let plan = plan_at(layout, patch, &mut after, 0)?;
        match after.is_empty() {
            true => Ok(plan),
            false => Err(NoSplice::BytesDoNotFit),
        }
    }

    /// Writes `live` (a postcard value of the planned layout) with the patch applied to `out`;
    /// refused if `live` does not fit the layout.
    pub(super) fn apply(&self, live: &[u8], out: &mut Vec<u8>) -> Result<(), NoSplice> {
        let mut live = live;
        self.apply_at(&mut live, out)?;
        match live.is_empty() {
            true => Ok(()),
            false => Err(NoSplice::BytesDoNotFit),
        }
    }

    fn apply_at(&self, live: &mut &[u8], out: &mut Vec<u8>) -> Result<(), NoSplice> {
        match self {
            Splice::Take(layout, bytes) => {
                skip(layout, live)?;
                out.extend_from_slice(bytes);
            }
            Splice::Fields(fields) => {
                for (layout, patched) in fields {
                    match patched {
                        Some(splice) => splice.apply_at(live, out)?,
                        None => out.extend_from_slice(skipped(layout, live)?),
                    }
                }
            }
        }
        Ok(())
    }
}

fn plan_at<'l>(
    layout: &'l Layout,
    patch: &Value,
    after: &mut &[u8],
    depth: usize,
) -> Result<Splice<'l>, NoSplice> {
    if depth > MAX_DEPTH {
        return Err(NoSplice::TooDeep);
    }
    let Value::Object(map) = patch else {
        // A leaf: the value the patch leads to, as it is.
        return match patch {
            Value::Null => Err(NoSplice::Removes),
            _ => Ok(Splice::Take(layout, skipped(layout, after)?.to_vec())),
        };
    };
    match layout {
        // Postcard writes a newtype as its content.
        Layout::Newtype(inner) => plan_at(inner, patch, after, depth + 1),
        Layout::Struct(fields) => {
            if map
                .keys()
                .any(|key| !fields.iter().any(|(name, _)| name == key))
            {
                return Err(NoSplice::UnknownField);
            }
            let mut planned = Vec::with_capacity(fields.len());
            for (name, field) in fields {
                let patched = match map.get(name) {
                    Some(sub) => Some(plan_at(field, sub, after, depth + 1)?),
                    None => {
                        skip(field, after)?;
                        None
                    }
                };
                planned.push((field, patched));
            }
            Ok(Splice::Fields(planned))
        }
        _ => Err(NoSplice::NotAStructPath),
    }
}

// ---- the fields two values differ in ----

/// The fields in which postcard value `new` differs from `old` (both laid out as `layout`),
/// each as its path of field names, in the order the JSON merge patch from one value to the
/// other lists them: what that patch sets, found from the bytes alone. Refused (the caller
/// diffs through JSON) where the values differ in anything but struct fields holding numbers,
/// strings, booleans, characters, or sequences and tuples of those: an option, a map, an enum
/// or a shared value is compared by its JSON.
pub(crate) fn changed_fields<'l>(
    layout: &'l Layout,
    old: &[u8],
    new: &[u8],
) -> Result<Vec<Vec<&'l str>>, NoSplice> {
    let (mut old, mut new) = (old, new);
    let mut changed = Vec::new();
    changed_at(
        layout,
        (&mut old, &mut new),
        &mut Vec::new(),
        &mut changed,
        0,
    )?;
    if !old.is_empty() || !new.is_empty() {
        return Err(NoSplice::BytesDoNotFit);
    }
    // A merge patch's members are sorted by key at every level.
    changed.sort_unstable();
    Ok(changed)
}

fn changed_at<'l>(
    layout: &'l Layout,
    (old, new): (&mut &[u8], &mut &[u8]),
    path: &mut Vec<&'l str>,
    changed: &mut Vec<Vec<&'l str>>,
    depth: usize,
) -> Result<(), NoSplice> {
    if depth > MAX_DEPTH {
        return Err(NoSplice::TooDeep);
    }
    match layout {
        // JSON writes a newtype as its content, a struct as an object the patch goes into.
        Layout::Newtype(inner) => changed_at(inner, (old, new), path, changed, depth + 1),
        Layout::Struct(fields) => {
            for (name, field) in fields {
                path.push(name);
                changed_at(field, (&mut *old, &mut *new), path, changed, depth + 1)?;
                path.pop();
            }
            Ok(())
        }
        leaf => {
            let (before, after) = (skipped(leaf, old)?, skipped(leaf, new)?);
            if !same_json(leaf, before, after)? {
                changed.push(path.clone());
            }
            Ok(())
        }
    }
}

/// Whether two postcard values of a leaf layout are the same JSON value, as a merge patch
/// compares them (`-0.0` is `0.0`).
fn same_json(layout: &Layout, old: &[u8], new: &[u8]) -> Result<bool, NoSplice> {
    if old == new {
        return Ok(true);
    }
    match layout {
        // One encoding per value.
        Layout::Bool | Layout::Char | Layout::Str => Ok(false),
        Layout::U8 | Layout::U16 | Layout::U32 | Layout::U64 => Ok(false),
        Layout::I8 | Layout::I16 | Layout::I32 | Layout::I64 => Ok(false),
        // Floats, and sequences that may hold them: by their JSON.
        _ if plain(layout, 0) => {
            let read = |mut bytes: &[u8]| read_value(layout, &mut bytes);
            let (old, new) = (read(old), read(new));
            old.and_then(|old| Ok(old == new?))
                .map_err(|_| NoSplice::BytesDoNotFit)
        }
        _ => Err(NoSplice::NotAStructPath),
    }
}

/// Whether values of `layout` are JSON numbers, strings, booleans, or arrays and objects of
/// those, with one postcard encoding per JSON value but for the sign of a zero.
fn plain(layout: &Layout, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match layout {
        Layout::Bool | Layout::Char | Layout::Str | Layout::F32 | Layout::F64 => true,
        Layout::U8 | Layout::U16 | Layout::U32 | Layout::U64 => true,
        Layout::I8 | Layout::I16 | Layout::I32 | Layout::I64 => true,
        Layout::Newtype(inner) | Layout::Seq(inner) => plain(inner, depth + 1),
        Layout::Tuple(items) | Layout::Vector(items, _) => {
            items.iter().all(|item| plain(item, depth + 1))
        }
        Layout::Struct(fields) => fields.iter().all(|(_, field)| plain(field, depth + 1)),
        _ => false,
    }
}

/// Moves `bytes` past one value laid out as `layout`; returns the bytes it took.
fn skipped<'a>(layout: &Layout, bytes: &mut &'a [u8]) -> Result<&'a [u8], NoSplice> {
    let start = *bytes;
    skip(layout, bytes)?;
    Ok(&start[..start.len() - bytes.len()])
}

/// Moves `bytes` past one value laid out as `layout`, without reading it.
fn skip(layout: &Layout, bytes: &mut &[u8]) -> Result<(), NoSplice> {
    skip_at(layout, bytes, 0).map_err(|_| NoSplice::BytesDoNotFit)
}

fn skip_at(layout: &Layout, bytes: &mut &[u8], depth: usize) -> Result<(), BadBytes> {
    if depth > MAX_DEPTH {
        return Err(BadBytes::TooDeep);
    }
    let next = |layout: &Layout, bytes: &mut &[u8]| skip_at(layout, bytes, depth + 1);
    match layout {
        Layout::Bool | Layout::U8 | Layout::I8 => {
            take(bytes, 1)?;
        }
        Layout::U16 | Layout::U32 | Layout::U64 | Layout::I16 | Layout::I32 | Layout::I64 => {
            varint(bytes)?;
        }
        Layout::U128 | Layout::I128 => return Err(BadBytes::Wide128),
        Layout::F32 => {
            take(bytes, 4)?;
        }
        Layout::F64 => {
            take(bytes, 8)?;
        }
        Layout::Char | Layout::Str | Layout::Bytes => {
            let length = length(bytes)?;
            take(bytes, length)?;
        }
        Layout::Unit => {}
        Layout::Option(inner) => {
            if take(bytes, 1)?[0] != 0 {
                next(inner, bytes)?;
            }
        }
        Layout::Newtype(inner) => next(inner, bytes)?,
        Layout::Seq(item) => {
            for _ in 0..length(bytes)? {
                next(item, bytes)?;
            }
        }
        Layout::Tuple(items) | Layout::Vector(items, _) => {
            for item in items {
                next(item, bytes)?;
            }
        }
        Layout::Map(key, value) => {
            for _ in 0..length(bytes)? {
                next(key, bytes)?;
                next(value, bytes)?;
            }
        }
        Layout::Struct(fields) => {
            for (_, field) in fields {
                next(field, bytes)?;
            }
        }
        Layout::Enum(variants) => {
            let index = usize::try_from(varint(bytes)?).map_err(|_| BadBytes::VariantOutOfRange)?;
            match &variants.get(index).ok_or(BadBytes::NoSuchVariant)?.1 {
                Variant::Unit => {}
                Variant::Newtype(inner) => next(inner, bytes)?,
                Variant::Tuple(items) => {
                    for item in items {
                        next(item, bytes)?;
                    }
                }
                Variant::Struct(fields) => {
                    for (_, field) in fields {
                        next(field, bytes)?;
                    }
                }
            }
        }
        Layout::Shared => {
            varint(bytes)?;
        }
        Layout::EnumRef(_) => return Err(BadBytes::UnresolvedEnum),
    }
    Ok(())
}

fn take<'a>(bytes: &mut &'a [u8], count: usize) -> Result<&'a [u8], BadBytes> {
    if bytes.len() < count {
        return Err(BadBytes::EndsEarly);
    }
    let (taken, rest) = bytes.split_at(count);
    *bytes = rest;
    Ok(taken)
}

fn array<const N: usize>(bytes: &mut &[u8]) -> Result<[u8; N], BadBytes> {
    let mut out = [0; N];
    out.copy_from_slice(take(bytes, N)?);
    Ok(out)
}

fn varint(bytes: &mut &[u8]) -> Result<u64, BadBytes> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = take(bytes, 1)?[0];
        value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(BadBytes::LongVarint)
}

fn zigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

fn length(bytes: &mut &[u8]) -> Result<usize, BadBytes> {
    let length = usize::try_from(varint(bytes)?).map_err(|_| BadBytes::LengthTooLarge)?;
    // Each element takes at least a byte, except units: a corrupt length never allocates more
    // than the data could hold.
    if length > bytes.len() {
        return Err(BadBytes::LengthBeyondValue);
    }
    Ok(length)
}

fn string(bytes: &mut &[u8]) -> Result<String, BadBytes> {
    let length = length(bytes)?;
    let text = take(bytes, length)?;
    String::from_utf8(text.to_vec()).map_err(|_| BadBytes::NotUtf8)
}

fn number(value: f64) -> Result<Value, BadBytes> {
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or(BadBytes::NotFinite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    enum Mode {
        Idle,
        Chase(u32),
        Guard { radius: f32, post: Option<String> },
        Pair(i16, bool),
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Brain {
        mode: Mode,
        memory: Vec<(u8, char)>,
        weights: BTreeMap<String, f64>,
        name: Option<String>,
        tag: Wrapper,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Wrapper(i64);

    #[test]
    #[cfg(feature = "binary")]
    fn traces_every_variant_and_reads_postcard_by_the_layout() {
        let layout = trace::<Brain>().expect("traceable");
        let Layout::Struct(fields) = &layout else {
            panic!("{layout:?}")
        };
        let names: Vec<&str> = fields.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["mode", "memory", "weights", "name", "tag"]);
        let Layout::Enum(variants) = &fields[0].1 else {
            panic!("{:?}", fields[0].1)
        };
        assert_eq!(variants.len(), 4);
        for mode in [
            Mode::Idle,
            Mode::Chase(7),
            Mode::Guard {
                radius: 2.5,
                post: Some("gate".into()),
            },
            Mode::Pair(-3, true),
        ] {
            let brain = Brain {
                mode,
                memory: vec![(1, 'x'), (200, 'é')],
                weights: [("a".to_string(), 0.5)].into_iter().collect(),
                name: None,
                tag: Wrapper(-42),
            };
            let bytes = postcard::to_allocvec(&brain).unwrap();
            let mut rest = &bytes[..];
            let json = read_value(&layout, &mut rest).unwrap();
            assert!(rest.is_empty());
            assert_eq!(serde_json::from_value::<Brain>(json).unwrap(), brain);
        }
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Stats {
        hp: u32,
        speed: f32,
        label: String,
        brain: Brain,
        limits: Limits,
        bonus: Option<u16>,
        tags: Vec<String>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Limits(Range);

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Range {
        low: i32,
        high: i32,
    }

    /// Splicing the patched fields' bytes gives what applying the patch through JSON gives,
    /// wherever it answers; it declines what is not a plain struct path.
    #[test]
    #[cfg(feature = "binary")]
    fn splicing_a_patch_gives_what_the_patch_through_json_gives() {
        use serde_json::json;
        let layout = trace::<Stats>().expect("traceable");
        let brain = |radius: f32| Brain {
            mode: Mode::Guard { radius, post: None },
            memory: vec![(1, 'x')],
            weights: BTreeMap::new(),
            name: Some("ann".into()),
            tag: Wrapper(3),
        };
        let stats = |hp: u32, low: i32, label: &str, radius: f32| Stats {
            hp,
            speed: 1.5,
            label: label.to_string(),
            brain: brain(radius),
            limits: Limits(Range { low, high: 10 }),
            bonus: None,
            tags: vec!["a".into()],
        };
        // The live value (mid-fight: hp and label its own) and the value the patch leads to.
        let live = stats(3, -1, "hurt", 2.0);
        let mut after = stats(50, 4, "fresh", 9.0);
        after.bonus = Some(7);
        after.tags = vec!["b".into(), "c".into()];
        let through_json = |patch: &Value| {
            let mut value = serde_json::to_value(&live).unwrap();
            crate::json::merge_patch::apply(&mut value, patch);
            serde_json::from_value::<Stats>(value).unwrap()
        };
        let spliced = |patch: &Value| {
            let (live, after) = (
                postcard::to_allocvec(&live).unwrap(),
                postcard::to_allocvec(&after).unwrap(),
            );
            let mut out = Vec::new();
            Splice::plan(&layout, patch, &after)
                .and_then(|plan| plan.apply(&live, &mut out))
                .ok()?;
            Some(postcard::from_bytes::<Stats>(&out).unwrap())
        };
        for patch in [
            json!({ "hp": 50 }),
            json!({ "limits": { "low": 4 } }),
            json!({ "bonus": 7, "tags": ["b", "c"], "label": "fresh" }),
            json!({ "brain": { "mode": { "Guard": { "radius": 9.0, "post": null } } } }),
            json!({}),
        ] {
            let expected = through_json(&patch);
            match spliced(&patch) {
                Some(got) => assert_eq!(got, expected, "{patch}"),
                // Only a patch into an enum is declined here.
                None => assert!(patch.get("brain").is_some(), "declined {patch}"),
            }
        }
        assert_eq!(spliced(&json!({ "hp": 50 })).unwrap().hp, 50);
        assert_eq!(
            spliced(&json!({ "limits": { "low": 4 } }))
                .unwrap()
                .limits
                .0
                .low,
            4
        );
        for declined in [
            json!({ "bonus": null }),
            json!({ "hpp": 1 }),
            json!({ "brain": { "weights": { "a": 1.0 } } }),
        ] {
            assert_eq!(spliced(&declined), None, "{declined}");
        }
    }

    /// A patch that is not an object replaces the whole value (an enum component switching
    /// variant): splicing gives the value it leads to, as it is; a patch into an enum is
    /// declined.
    /// Each way a patch is declined says why.
    #[test]
    #[cfg(feature = "binary")]
    fn a_declined_splice_says_why() {
        use serde_json::json;
        let layout = trace::<Limits>().expect("traceable");
        let after = postcard::to_allocvec(&Limits(Range { low: 1, high: 2 })).unwrap();
        let plan = |patch: Value, after: &[u8]| Splice::plan(&layout, &patch, after).err();
        assert_eq!(
            plan(json!({ "low": null }), &after),
            Some(NoSplice::Removes)
        );
        assert_eq!(
            plan(json!({ "lo": 3 }), &after),
            Some(NoSplice::UnknownField)
        );
        assert_eq!(
            plan(json!({ "low": 3 }), &after[..1]),
            Some(NoSplice::BytesDoNotFit)
        );
        let planned = Splice::plan(&layout, &json!({ "low": 1 }), &after).unwrap();
        assert_eq!(
            planned.apply(&after[..1], &mut Vec::new()),
            Err(NoSplice::BytesDoNotFit)
        );
    }

    #[test]
    #[cfg(feature = "binary")]
    fn splicing_a_whole_value_patch_gives_the_value_it_leads_to() {
        use serde_json::json;
        let mode = trace::<Mode>().expect("traceable");
        let (live, after) = (Mode::Chase(3), Mode::Pair(-1, true));
        let (live, after) = (
            postcard::to_allocvec(&live).unwrap(),
            postcard::to_allocvec(&after).unwrap(),
        );
        let patch = json!({ "Pair": [-1, true] });
        assert_eq!(
            Splice::plan(&mode, &patch, &after).err(),
            Some(NoSplice::NotAStructPath),
            "a patch into an enum is declined"
        );
        let mut out = Vec::new();
        let plan = Splice::plan(&mode, &json!("Idle"), &after).unwrap();
        plan.apply(&live, &mut out).unwrap();
        assert_eq!(out, after);
    }

    #[test]
    fn types_that_inspect_their_input_have_no_layout() {
        assert_eq!(trace::<serde_json::Value>(), None);
        #[derive(Deserialize)]
        #[serde(untagged)]
        #[allow(dead_code)]
        enum Either {
            A(u8),
            B(String),
        }
        assert_eq!(trace::<Either>(), None);
        assert_eq!(trace::<u32>(), Some(Layout::U32));
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Fighter {
        health: Vitals,
        speed: f32,
        name: String,
        path: Vec<(f32, f32)>,
        level: Wrapper,
        alive: bool,
        target: Option<u32>,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Vitals {
        max: u32,
        current: f64,
    }

    /// The fields the JSON merge patch from `old` to `new` sets, as paths.
    fn patched_fields(old: &Fighter, new: &Fighter) -> Vec<Vec<String>> {
        let (old, new) = (serde_json::to_value(old), serde_json::to_value(new));
        let patch = crate::json::merge_patch::diff(&old.unwrap(), &new.unwrap());
        let mut fields = Vec::new();
        fn walk(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            match value {
                Value::Object(members) => members.iter().for_each(|(key, member)| {
                    path.push(key.clone());
                    walk(member, path, out);
                    path.pop();
                }),
                _ => out.push(path.clone()),
            }
        }
        if let Some(patch) = patch {
            walk(&patch, &mut Vec::new(), &mut fields);
        }
        fields
    }

    #[test]
    #[cfg(feature = "binary")]
    fn the_fields_found_from_the_bytes_are_those_the_json_patch_sets() {
        let layout = trace::<Fighter>().expect("traceable");
        let base = Fighter {
            health: Vitals {
                max: 10,
                current: 10.0,
            },
            speed: 0.0,
            name: "goblin".into(),
            path: vec![(1.0, 2.0)],
            level: Wrapper(3),
            alive: true,
            target: None,
        };
        let changes: [fn(&mut Fighter); 8] = [
            |s| s.health.current = 4.5,
            |s| (s.health.max, s.alive) = (12, false),
            |s| s.speed = -0.0,
            |s| s.path = vec![(1.0, -0.0)],
            |s| s.path.push((0.0, 0.0)),
            |s| (s.name, s.level) = ("hobgoblin".into(), Wrapper(-4)),
            |s| s.health.current = -0.0,
            |_| {},
        ];
        let bytes = |stats: &Fighter| postcard::to_allocvec(stats).unwrap();
        for change in changes {
            let mut live = base.clone();
            change(&mut live);
            let found = changed_fields(&layout, &bytes(&base), &bytes(&live)).unwrap();
            let found: Vec<Vec<String>> = (found.iter())
                .map(|path| path.iter().map(|s| s.to_string()).collect())
                .collect();
            assert_eq!(found, patched_fields(&base, &live), "{live:?}");
        }
        // An option that changed is compared by its JSON.
        let mut live = base.clone();
        live.target = Some(7);
        assert_eq!(
            changed_fields(&layout, &bytes(&base), &bytes(&live)),
            Err(NoSplice::NotAStructPath)
        );
        assert_eq!(
            changed_fields(&layout, &bytes(&base), &bytes(&base)[1..]),
            Err(NoSplice::BytesDoNotFit)
        );
    }

    #[cfg(feature = "binary")]
    #[test]
    fn a_stored_layout_nested_past_the_limit_is_refused_not_overflowing() {
        use crate::component::{from_bytes, to_allocvec};
        // `Option` is the 18th variant: one byte per level, then `Bool`.
        let option = to_allocvec(&Layout::Option(Box::new(Layout::Bool))).expect("encodes");
        assert_eq!(option, [17, 0]);
        let mut crafted = vec![17u8; 1_000_000];
        crafted.push(0);
        assert!(from_bytes::<Layout>(&crafted).is_err());
        // What tracing makes (at most MAX_DEPTH deep) reads back.
        let mut deep = Layout::Bool;
        for _ in 0..MAX_DEPTH {
            deep = Layout::Seq(Box::new(deep));
        }
        let bytes = to_allocvec(&deep).expect("encodes");
        assert_eq!(from_bytes::<Layout>(&bytes).ok(), Some(deep));
        // The depth count starts again after a refusal.
        let brain = trace::<Brain>().expect("traced");
        let bytes = to_allocvec(&brain).expect("encodes");
        assert_eq!(from_bytes::<Layout>(&bytes).ok(), Some(brain));
    }
}
