//! The two libraries binary scenes use, behind the `binary` feature: postcard for component
//! values and a CRC-32 for the checksum.
//!
//! Without the feature the public API has no binary encoding (`SceneEncoding::Binary`,
//! `read_binary_scene_header` are absent) and `load_scene` refuses a binary file before reading
//! it, so the scene code's binary paths are never reached. They stay compiled, calling the
//! stand-ins below, rather than being cut out item by item across the scene files; the default
//! build checks them as usual.

#[cfg(feature = "binary")]
pub(crate) use postcard::{from_bytes, to_allocvec, to_extend};

/// The CRC-32 (IEEE) of `bytes`, as binary scenes end with.
#[cfg(feature = "binary")]
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(not(feature = "binary"))]
pub(crate) use stand_ins::*;

/// Whether `value` serializes to exactly `expected` in postcard: each byte is compared as it
/// is made, nothing is written, and the comparison stops at the first that differs. `false`
/// also for a value that cannot be serialized.
#[cfg(feature = "binary")]
pub(crate) fn serializes_to<T: serde::Serialize + ?Sized>(value: &T, expected: &[u8]) -> bool {
    postcard::serialize_with_flavor(value, Compare { rest: expected }).unwrap_or(false)
}

/// A postcard output that compares what is written with the bytes still expected, and fails
/// at the first that differs (which ends the serialization).
#[cfg(feature = "binary")]
struct Compare<'e> {
    rest: &'e [u8],
}

#[cfg(feature = "binary")]
impl postcard::ser_flavors::Flavor for Compare<'_> {
    /// Whether every expected byte was written.
    type Output = bool;

    #[inline]
    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        match self.rest.split_first() {
            Some((&expected, rest)) if expected == byte => {
                self.rest = rest;
                Ok(())
            }
            _ => Err(postcard::Error::SerializeBufferFull),
        }
    }

    #[inline]
    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        let (expected, rest) =
            (self.rest.split_at_checked(data.len())).ok_or(postcard::Error::SerializeBufferFull)?;
        // Postcard writes a few bytes at a time (a varint, a float): compared in place, not by
        // a call to compare memory.
        let same = match data.len() {
            0..=16 => expected.iter().zip(data).all(|(a, b)| a == b),
            _ => expected == data,
        };
        if !same {
            return Err(postcard::Error::SerializeBufferFull);
        }
        self.rest = rest;
        Ok(())
    }

    fn finalize(self) -> postcard::Result<bool> {
        Ok(self.rest.is_empty())
    }
}

#[cfg(not(feature = "binary"))]
mod stand_ins {
    use std::fmt;

    /// What a stand-in says if it is ever reached.
    #[derive(Debug)]
    pub(crate) struct Unavailable;

    impl fmt::Display for Unavailable {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("binary scenes need archetype-engine's `binary` feature")
        }
    }

    pub(crate) fn to_extend<T: serde::Serialize + ?Sized>(
        _: &T,
        _: Vec<u8>,
    ) -> Result<Vec<u8>, Unavailable> {
        Err(Unavailable)
    }

    /// Always fails, so the hot-reload shortcut that compares values by their bytes is skipped
    /// and every instance is patched through JSON (the same result, more slowly).
    pub(crate) fn to_allocvec<T: serde::Serialize + ?Sized>(_: &T) -> Result<Vec<u8>, Unavailable> {
        Err(Unavailable)
    }

    pub(crate) fn from_bytes<'a, T: serde::Deserialize<'a>>(_: &'a [u8]) -> Result<T, Unavailable> {
        Err(Unavailable)
    }

    /// Never true, so a save writes every instance's component it compares through JSON (the
    /// same result, more slowly).
    pub(crate) fn serializes_to<T: serde::Serialize + ?Sized>(_: &T, _: &[u8]) -> bool {
        false
    }

    /// Never called: nothing writes or opens a binary scene in this build.
    pub(crate) fn crc32(_: &[u8]) -> u32 {
        0
    }
}

#[cfg(all(test, feature = "binary"))]
mod compare_tests {
    use super::*;

    #[test]
    fn a_value_serializes_to_its_own_bytes_and_to_no_others() {
        let value = ("goblin", 7u32, [1.5f32, -2.0]);
        let bytes = to_allocvec(&value).unwrap();
        assert!(serializes_to(&value, &bytes));
        assert!(!serializes_to(&value, &bytes[..bytes.len() - 1]));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(!serializes_to(&value, &longer));
        let mut changed = bytes.clone();
        changed[1] ^= 1;
        assert!(!serializes_to(&value, &changed));
        assert!(!serializes_to(&value, &[]));
    }
}
