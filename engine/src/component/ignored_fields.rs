//! Whether a deserialization skipped a field its type does not have, found without tracking
//! where: for the one-pass scene reader, which hands such values to the careful reader (which
//! says where, through `serde_ignored`, at the cost of a string per key).
//!
//! serde's derive skips an unknown field by deserializing its value as `IgnoredAny`, which
//! asks the deserializer for `deserialize_ignored_any`. [`Detect`] wraps a deserializer and
//! everything it hands out (visitors, map, sequence and enum accesses, nested deserializers),
//! notes that call, and otherwise forwards every call unchanged.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

/// A `T` that fails to deserialize when the input has a field `T` does not have; with whether
/// `T` read a map or a value of any shape, whose keys serde does not check for duplicates (see
/// [`unique_keys`]).
pub(super) struct Strict<T>(pub T, pub bool);

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for Strict<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (typed, skipped, maps) = detected(deserializer)?;
        if skipped {
            return Err(de::Error::custom("a field the type does not have"));
        }
        Ok(Strict(typed, maps))
    }
}

/// `T` from `deserializer`, and whether it read a map or a value of any shape (a `HashMap`, a
/// `serde_json::Value`): one whose keys serde does not check for duplicates.
pub(super) fn deserialize_noting_maps<'de, T, D>(deserializer: D) -> Result<(T, bool), D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    detected(deserializer).map(|(typed, _, maps)| (typed, maps))
}

/// `T` from `deserializer`, whether a field was skipped, and whether a map was read.
fn detected<'de, T, D>(deserializer: D) -> Result<(T, bool, bool), D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    let (skipped, maps) = (Cell::new(false), Cell::new(false));
    let typed = T::deserialize(Detect {
        inner: deserializer,
        skipped: &skipped,
        maps: &maps,
    })?;
    Ok((typed, skipped.get(), maps.get()))
}

/// A deserializer, visitor, access or seed (`inner`) that sets `skipped` when a value is
/// deserialized as ignored, and `maps` when one is read as a map or as any shape.
struct Detect<'f, X> {
    inner: X,
    skipped: &'f Cell<bool>,
    maps: &'f Cell<bool>,
}

impl<'f, X> Detect<'f, X> {
    fn wrap<Y>(&self, inner: Y) -> Detect<'f, Y> {
        Detect {
            inner,
            skipped: self.skipped,
            maps: self.maps,
        }
    }
}

/// The first duplicate key of any object in the JSON `text` (a whole value), as serde's error
/// with the path to the object: `Err` for `{"a": 1, "a": 2}`. For values whose type does not
/// check it itself (maps, `serde_json::Value`), which would keep the last of the two.
pub(super) fn unique_keys(text: &str) -> Result<(), serde_path_to_error::Error<serde_json::Error>> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize::<_, UniqueKeys>(&mut deserializer).map(drop)
}

/// Any JSON value, refused where an object has a key twice.
struct UniqueKeys;

impl<'de> de::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeys)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut seen = rustc_hash::FxHashSet::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if !seen.insert(key.clone()) {
                let key = crate::diagnostic::quoted(&key);
                return Err(de::Error::custom(format!("duplicate key {key}")));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(self)
    }
}

/// Forwards `deserialize_*` methods that take only a visitor.
macro_rules! forward_visitor {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            let visitor = self.wrap(visitor);
            self.inner.$method(visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Detect<'_, D> {
    type Error = D::Error;

    forward_visitor! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq
        deserialize_identifier
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.maps.set(true);
        let visitor = self.wrap(visitor);
        self.inner.deserialize_any(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.maps.set(true);
        let visitor = self.wrap(visitor);
        self.inner.deserialize_map(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.skipped.set(true);
        self.inner.deserialize_ignored_any(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Forwards `visit_*` methods that take a plain value.
macro_rules! forward_value {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, value: $ty) -> Result<V::Value, E> {
            self.inner.$method(value)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Detect<'_, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(formatter)
    }

    forward_value! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let deserializer = self.wrap(deserializer);
        self.inner.visit_some(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let deserializer = self.wrap(deserializer);
        self.inner.visit_newtype_struct(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let seq = self.wrap(seq);
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let map = self.wrap(map);
        self.inner.visit_map(map)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        let data = self.wrap(data);
        self.inner.visit_enum(data)
    }
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for Detect<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Value, D::Error> {
        let deserializer = self.wrap(deserializer);
        self.inner.deserialize(deserializer)
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Detect<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let seed = self.wrap(seed);
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Detect<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        // Keys are read as field names (an unknown one is matched to "ignore", then its value
        // is skipped): only values need watching.
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let seed = self.wrap(seed);
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, 'f, A: EnumAccess<'de>> EnumAccess<'de> for Detect<'f, A> {
    type Error = A::Error;
    type Variant = Detect<'f, A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (skipped, maps) = (self.skipped, self.maps);
        let (value, variant) = self.inner.variant_seed(seed)?;
        Ok((
            value,
            Detect {
                inner: variant,
                skipped,
                maps,
            },
        ))
    }
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Detect<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        let seed = self.wrap(seed);
        self.inner.newtype_variant_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let visitor = self.wrap(visitor);
        self.inner.tuple_variant(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = self.wrap(visitor);
        self.inner.struct_variant(fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Inner {
        a: u8,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    enum Shape {
        Dot,
        Circle { r: f32 },
        Boxed(Inner),
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Outer {
        inner: Inner,
        list: Vec<Inner>,
        maybe: Option<Inner>,
        shape: Shape,
        #[serde(default)]
        map: std::collections::BTreeMap<String, u8>,
    }

    fn strict(text: &str) -> bool {
        serde_json::from_str::<Strict<Outer>>(text)
            .is_ok_and(|Strict(_, maps)| !maps || unique_keys(text).is_ok())
    }

    #[test]
    fn finds_a_field_the_type_does_not_have_at_any_depth() {
        let ok = r#"{"inner": {"a": 1}, "list": [{"a": 2}], "maybe": {"a": 3}, "shape": {"Circle": {"r": 1}}, "map": {"x": 1}}"#;
        assert!(strict(ok));
        assert!(strict(
            r#"{"inner": {"a": 1}, "list": [], "maybe": null, "shape": "Dot"}"#
        ));
        assert!(strict(
            r#"{"inner": {"a": 1}, "list": [], "maybe": null, "shape": {"Boxed": {"a": 1}}}"#
        ));
        for typo in [
            r#"{"inner": {"a": 1, "b": 0}, "list": [], "maybe": null, "shape": "Dot"}"#,
            r#"{"inner": {"a": 1}, "list": [{"a": 2, "b": 0}], "maybe": null, "shape": "Dot"}"#,
            r#"{"inner": {"a": 1}, "list": [], "maybe": {"a": 3, "b": 0}, "shape": "Dot"}"#,
            r#"{"inner": {"a": 1}, "list": [], "maybe": null, "shape": {"Circle": {"r": 1, "b": 0}}}"#,
            r#"{"inner": {"a": 1}, "list": [], "maybe": null, "shape": {"Boxed": {"a": 1, "b": 0}}}"#,
            r#"{"inner": {"a": 1}, "list": [], "maybe": null, "shape": "Dot", "extra": [1, {"x": 2}]}"#,
        ] {
            assert!(!strict(typo), "{typo}");
            // Plain serde takes it, skipping the field.
            assert!(serde_json::from_str::<Outer>(typo).is_ok(), "{typo}");
        }
    }
}
