//! [`StableId`]: an entity's identity that survives saving and loading.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A 64-bit identity that stays with an entity across scene saves and loads, written as 16
/// lowercase hex digits (`"3f9a0c41d2e87b65"`).
///
/// IDs are random-looking and drawn from a per-process random seed, so two people adding
/// entities on two branches do not collide; within one process they are guaranteed distinct
/// (a counter fed through a bijective mixer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StableId(pub u64);

impl StableId {
    /// A fresh ID, distinct from every other ID this process generated.
    pub fn generate() -> StableId {
        static SEED: OnceLock<u64> = OnceLock::new();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let seed = *SEED.get_or_init(|| {
            let mut hasher = RandomState::new().build_hasher();
            if let Ok(elapsed) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)
            {
                hasher.write_u128(elapsed.as_nanos());
            }
            hasher.write_u32(std::process::id());
            hasher.finish()
        });
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        StableId(mix(seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15))))
    }

    /// The ID as 16 lowercase hex digits.
    pub fn to_hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// The ID's 16 lowercase hex digits, without allocating (scenes write one per entity and
    /// per reference).
    pub(crate) fn hex_digits(self) -> [u8; 16] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0; 16];
        for (i, digit) in out.iter_mut().enumerate() {
            *digit = DIGITS[((self.0 >> ((15 - i) * 4)) & 0xf) as usize];
        }
        out
    }

    /// [`hex_digits`](Self::hex_digits) as text.
    pub(super) fn with_hex<R>(self, f: impl FnOnce(&str) -> R) -> R {
        let digits = self.hex_digits();
        // Hex digits are ASCII.
        f(std::str::from_utf8(&digits).unwrap_or_default())
    }
}

/// The SplitMix64 finalizer: a bijection on `u64`, so distinct inputs give distinct IDs.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl fmt::Display for StableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Why a string is not a stable ID.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a stable ID: expected exactly 16 hex digits")]
pub struct ParseStableIdError(pub(crate) String);

impl ParseStableIdError {
    /// The text that is not a stable ID.
    pub fn text(&self) -> &str {
        &self.0
    }
}

impl FromStr for StableId {
    type Err = ParseStableIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        // One pass without a branch per digit (every entry and reference in a scene file is
        // one of these, and random hex digits defeat branch prediction).
        let bytes: &[u8; 16] = match text.as_bytes().try_into() {
            Ok(bytes) => bytes,
            Err(_) => return Err(ParseStableIdError(text.to_string())),
        };
        let (mut value, mut invalid) = (0u64, 0u8);
        for byte in bytes {
            let digit = HEX_DIGITS[usize::from(*byte)];
            invalid |= digit;
            value = value << 4 | u64::from(digit & 0x0f);
        }
        match invalid & NOT_HEX {
            0 => Ok(StableId(value)),
            _ => Err(ParseStableIdError(text.to_string())),
        }
    }
}

/// Marks a byte that is not a hex digit in [`HEX_DIGITS`].
const NOT_HEX: u8 = 0x80;

/// Each byte's value as a hex digit (`0`–`9`, `a`–`f`, `A`–`F`), [`NOT_HEX`] for any other.
const HEX_DIGITS: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

impl Serialize for StableId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            self.with_hex(|hex| serializer.serialize_str(hex))
        } else {
            serializer.serialize_u64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for StableId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = StableId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a stable ID (16 hex digits)")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<StableId, E> {
                text.parse().map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, id: u64) -> Result<StableId, E> {
                Ok(StableId(id))
            }
        }
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(IdVisitor)
        } else {
            deserializer.deserialize_u64(IdVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_strict_parsing() {
        let id = StableId(0x00ab_12cd_34ef_5678);
        assert_eq!(id.to_string(), "00ab12cd34ef5678");
        assert_eq!(&id.hex_digits(), b"00ab12cd34ef5678");
        assert_eq!(&StableId(u64::MAX).hex_digits(), b"ffffffffffffffff");
        assert_eq!(
            serde_json::to_string(&StableId(0xf00d)).ok().as_deref(),
            Some("\"000000000000f00d\"")
        );
        assert_eq!("00ab12cd34ef5678".parse::<StableId>(), Ok(id));
        assert_eq!(
            "ab12".parse::<StableId>().unwrap_err().to_string(),
            "`ab12` is not a stable ID: expected exactly 16 hex digits"
        );
        assert!("+0ab12cd34ef5678".parse::<StableId>().is_err());
        assert!("00ab12cd34ef567g".parse::<StableId>().is_err());
        assert!("00ab12cd34ef56\u{e9}".parse::<StableId>().is_err());
        assert_eq!("00AB12CD34EF5678".parse::<StableId>(), Ok(id));
        assert_eq!(
            "ffffffffffffffff".parse::<StableId>(),
            Ok(StableId(u64::MAX))
        );
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"00ab12cd34ef5678\"");
        // Every byte, first and last: exactly the hex digits are taken, at their value.
        for byte in 0..=u8::MAX {
            let Ok(digit) = std::str::from_utf8(&[byte]).map(str::to_string) else {
                continue;
            };
            let value = (byte as char).to_digit(16).map(u64::from);
            let last = format!("000000000000000{digit}").parse::<StableId>();
            assert_eq!(last.ok(), value.map(StableId), "{byte:#x} last");
            let first = format!("{digit}000000000000000").parse::<StableId>();
            assert_eq!(
                first.ok(),
                value.map(|v| StableId(v << 60)),
                "{byte:#x} first"
            );
        }
    }

    #[test]
    fn generated_ids_are_distinct() {
        let ids: std::collections::HashSet<_> = (0..10_000).map(|_| StableId::generate()).collect();
        assert_eq!(ids.len(), 10_000);
    }
}
