//! The scene file formats' constants and low-level pieces: key names, versions, the JSON pretty
//! printer, and the binary container's primitives.
//!
//! JSON layout (`*.scene.json`):
//! ```text
//! {
//!   "format": 2,
//!   "meta": { ... },                           (the game's own, only when it gave one)
//!   "archetypes": { "turrets/turret": ["gun", "sensor"], ... },
//!                                              (each archetype with instances here: its
//!                                               child paths when the scene was saved)
//!   "shared": { "<16 hex>": <value>, ... },     (only when shared data exists)
//!   "entities": [
//!     {
//!       "id": "<16 hex>",
//!       "archetype": "enemies/goblin",            (archetype instances only)
//!       "child": "turret",                        (children of an instance only)
//!       "components": { "Health": { ... }, ... }  (sorted by name)
//!     },
//!     ...                                          (sorted by id)
//!   ]
//! }
//! ```
//!
//! Binary layout (`*.scene.bin`), integers as LEB128 varints unless noted:
//! magic `ARCHSCN\0`, format, (format 3 on:) meta (JSON text, empty for none), component
//! table (count, then per component its name and, from format 3, its value layout: postcard
//! bytes of `value_layout::Layout`, empty when the type has none), archetype table (count,
//! then per archetype its name and, from format 3, its child paths: count, strings), shared
//! table (count, then key u64 LE + bytes), entity count, then per entity: id (u64 LE),
//! archetype (0 = none, else table index + 1), child path (string, empty = none), component
//! count, then per component: name index, kind (0 typed postcard, 1 JSON merge patch,
//! 2 removed, 3 binary instance diff: see `instance_diff`), payload bytes. Strings and byte
//! strings are a varint length and the bytes. Format 4 writes an instance's changed
//! components as kind 3, format 3 wrote them as kind 1. Formats 3 and 4 end with a checksum:
//! the CRC-32 (IEEE, as zip and PNG use it; little endian) of every byte before it, magic
//! included. Format 2 is the same layout without it. Every earlier format still loads.

/// Key names of the JSON scene format.
pub mod scene_keys {
    /// The format version.
    pub const FORMAT: &str = "format";
    /// The game's own data about the file (its version, a save slot's title, ...).
    pub const META: &str = "meta";
    /// Each archetype the scene has instances of, with its child paths when it was saved.
    pub const ARCHETYPES: &str = "archetypes";
    /// Data shared by several entities, written once: key → value.
    pub const SHARED: &str = "shared";
    /// The entity list.
    pub const ENTITIES: &str = "entities";
    /// An entity's stable ID.
    pub const ID: &str = "id";
    /// The archetype an entity is an instance of.
    pub const ARCHETYPE: &str = "archetype";
    /// Which entity of the archetype instance (its path), for children.
    pub const CHILD: &str = "child";
    /// Component name → value (full) or merge patch (archetype instances).
    pub const COMPONENTS: &str = "components";
    /// In an entry placing another scene: the scene file's path, relative to the
    /// placing file. The entry is an entity of its own; the sub-scene's entities are loaded
    /// with IDs derived from its ID and theirs.
    pub const SCENE: &str = "scene";
    /// In an entry placing another scene: entity path (sub-scene IDs joined by `/`) →
    /// component → merge patch.
    pub const OVERRIDES: &str = "overrides";
    /// The key of a shared-data reference inside a component value.
    pub const SHARED_REF: &str = crate::component::SHARED_REF;
    /// Keys allowed in an entity entry, in the order they are written.
    pub const ENTITY: [&str; 4] = [ID, ARCHETYPE, CHILD, COMPONENTS];
    /// Keys allowed at the top level, in the order they are written.
    pub const TOP_LEVEL: [&str; 5] = [FORMAT, META, ARCHETYPES, SHARED, ENTITIES];
}

/// The scene format version this library writes.
pub const SCENE_FORMAT_VERSION: u64 = 2;

/// The binary scene format this library writes: the JSON layout's content in the binary
/// container, ending with a checksum, with archetype instances' changed components as binary
/// diffs (the value whole, the shape of its difference from the archetype, and the key of the
/// archetype value it was taken against).
pub const BINARY_SCENE_FORMAT_VERSION: u64 = 4;

/// The binary format before binary diffs: the same, with instances' changed components as
/// JSON merge patches ([`KIND_PATCH`]).
pub(super) const BINARY_FORMAT_JSON_PATCHES: u64 = 3;

/// The binary format before checksums: the same layout, without the last four bytes.
const BINARY_FORMAT_UNCHECKED: u64 = 2;

/// Bytes of the checksum at the end of a binary scene.
const CHECKSUM_BYTES: usize = 4;

/// The magic bytes that start a binary scene.
pub(super) const BINARY_MAGIC: &[u8; 8] = b"ARCHSCN\0";

/// Payload kinds in the binary format.
pub(super) const KIND_TYPED: u8 = 0;
pub(super) const KIND_PATCH: u8 = 1;
pub(super) const KIND_REMOVED: u8 = 2;
/// An archetype instance's changed component: see [`instance_diff`](crate::scene::instance_diff).
pub(super) const KIND_DIFF: u8 = 3;

/// The scene files' pretty printer: serde_json's, able to start at a nesting depth.
pub(crate) use crate::json::Pretty as ScenePretty;

/// Appends the pieces of the binary container.
pub(super) struct BinaryWriter {
    pub out: Vec<u8>,
}

impl BinaryWriter {
    pub fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.out.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.out.push(value as u8);
    }

    pub fn u64_le(&mut self, value: u64) {
        self.out.extend_from_slice(&value.to_le_bytes());
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        self.varint(bytes.len() as u64);
        self.out.extend_from_slice(bytes);
    }

    pub fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }
}

/// Appends the checksum of everything written so far (see the module docs).
pub(crate) fn append_checksum(out: &mut Vec<u8>) {
    let checksum = crate::component::crc32(out);
    out.extend_from_slice(&checksum.to_le_bytes());
}

/// The part of a binary scene its entries are read from (without the checksum), and its
/// format version, once the magic bytes, the version and the checksum are found good.
///
/// A binary scene whose checksum does not match is damaged: it is refused, whichever byte
/// changed, before anything is decoded.
fn checked_binary(bytes: &[u8]) -> Result<(&[u8], u64), BinaryError> {
    let mut reader = BinaryReader::new(bytes);
    reader.take(BINARY_MAGIC.len(), "magic")?;
    let version = reader.varint("format version")?;
    match version {
        BINARY_FORMAT_UNCHECKED => Ok((bytes, version)),
        BINARY_FORMAT_JSON_PATCHES | BINARY_SCENE_FORMAT_VERSION => {
            let Some(split) = bytes
                .len()
                .checked_sub(CHECKSUM_BYTES)
                .filter(|s| *s >= reader.offset)
            else {
                return Err(BinaryError {
                    offset: reader.offset,
                    message: "unexpected end of data reading the checksum (the file is cut short)"
                        .to_string(),
                });
            };
            let (body, stored) = bytes.split_at(split);
            let mut word = [0u8; CHECKSUM_BYTES];
            word.copy_from_slice(stored);
            let stored = u32::from_le_bytes(word);
            let computed = crate::component::crc32(body);
            if stored != computed {
                return Err(BinaryError {
                    offset: split,
                    message: format!(
                        "checksum mismatch: the file is damaged (its contents give CRC-32 {computed:08x}, the file says {stored:08x}); load an older copy of the save"
                    ),
                });
            }
            Ok((body, version))
        }
        // Not one this library reads: the caller says so.
        _ => Ok((bytes, version)),
    }
}

/// Opens a binary scene: checks its magic bytes and, in the formats that have one, its
/// checksum. Returns a reader over the checked part, past the format version, and the version
/// (which the caller checks with [`is_readable_binary`]).
pub(super) fn open_binary(bytes: &[u8]) -> Result<(BinaryReader<'_>, u64), BinaryError> {
    let (body, version) = checked_binary(bytes)?;
    let mut reader = BinaryReader::new(body);
    reader.take(BINARY_MAGIC.len(), "magic")?;
    reader.varint("format version")?;
    Ok((reader, version))
}

/// Whether this library reads binary scenes of format `version`.
pub(super) fn is_readable_binary(version: u64) -> bool {
    matches!(
        version,
        BINARY_FORMAT_UNCHECKED | BINARY_FORMAT_JSON_PATCHES | BINARY_SCENE_FORMAT_VERSION
    )
}

/// Why a binary scene could not be read: what was expected, at which byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BinaryError {
    pub offset: usize,
    pub message: String,
}

/// Reads the pieces of the binary container, never past its end.
#[derive(Clone)]
pub(super) struct BinaryReader<'a> {
    bytes: &'a [u8],
    pub offset: usize,
}

impl<'a> BinaryReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        BinaryReader { bytes, offset: 0 }
    }

    #[cold]
    fn fail<T>(&self, message: impl Into<String>) -> Result<T, BinaryError> {
        Err(BinaryError {
            offset: self.offset,
            message: message.into(),
        })
    }

    #[inline]
    pub fn is_at_end(&self) -> bool {
        self.offset == self.bytes.len()
    }

    #[inline]
    pub fn take(&mut self, count: usize, what: &str) -> Result<&'a [u8], BinaryError> {
        let end = self
            .offset
            .checked_add(count)
            .filter(|end| *end <= self.bytes.len());
        match end {
            Some(end) => {
                let slice = &self.bytes[self.offset..end];
                self.offset = end;
                Ok(slice)
            }
            None => self.fail(format!(
                "unexpected end of data reading {what} ({count} bytes needed, {} left)",
                self.bytes.len() - self.offset
            )),
        }
    }

    #[inline]
    pub fn varint(&mut self, what: &str) -> Result<u64, BinaryError> {
        // Most varints (counts, indices, short lengths) are one byte.
        match self.bytes.get(self.offset) {
            Some(&byte) if byte < 0x80 => {
                self.offset += 1;
                Ok(u64::from(byte))
            }
            _ => self.long_varint(what),
        }
    }

    fn long_varint(&mut self, what: &str) -> Result<u64, BinaryError> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.offset) else {
                return self.fail(format!("unexpected end of data reading {what}"));
            };
            self.offset += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.fail(format!("{what} is not a valid varint"))
    }

    /// A varint that counts things, each taking at least `min_size` bytes: a count larger than
    /// the rest of the data could hold is corrupt (and would otherwise allocate unboundedly).
    #[inline]
    pub fn count(&mut self, what: &str, min_size: usize) -> Result<usize, BinaryError> {
        let start = self.offset;
        let count = self.varint(what)?;
        let left = (self.bytes.len() - self.offset) as u64;
        if count.saturating_mul(min_size.max(1) as u64) > left {
            return Err(BinaryError {
                offset: start,
                message: format!("{what} {count} is larger than the data could hold"),
            });
        }
        Ok(count as usize)
    }

    #[inline]
    pub fn u64_le(&mut self, what: &str) -> Result<u64, BinaryError> {
        let bytes = self.take(8, what)?;
        let mut array = [0u8; 8];
        array.copy_from_slice(bytes);
        Ok(u64::from_le_bytes(array))
    }

    #[inline]
    pub fn u8(&mut self, what: &str) -> Result<u8, BinaryError> {
        Ok(self.take(1, what)?[0])
    }

    #[inline(always)]
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], BinaryError> {
        // `take` checks the length against the data before anything is allocated.
        let length = self.varint(what)?;
        self.take(usize::try_from(length).unwrap_or(usize::MAX), what)
    }

    /// A length-prefixed UTF-8 string. Inlined: every binary entry has one (its child path,
    /// mostly empty), and returned through memory it cost a binary load a tenth of its time.
    #[inline(always)]
    pub fn str(&mut self, what: &str) -> Result<&'a str, BinaryError> {
        if self.bytes.get(self.offset) == Some(&0) {
            self.offset += 1;
            return Ok("");
        }
        let start = self.offset;
        let bytes = self.bytes(what)?;
        std::str::from_utf8(bytes).map_err(|_| BinaryError {
            offset: start,
            message: format!("{what} is not valid UTF-8"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[test]
    fn pretty_printer_matches_serde_json_at_depth_zero() {
        let value = serde_json::json!({"a": [1, {"b": null}], "c": {}, "d": []});
        assert_eq!(
            ours_at_depth_zero(&value),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }

    fn ours_at_depth_zero(value: &serde_json::Value) -> String {
        let mut ours = Vec::new();
        value
            .serialize(&mut serde_json::Serializer::with_formatter(
                &mut ours,
                ScenePretty::at(0),
            ))
            .unwrap();
        String::from_utf8(ours).unwrap()
    }

    #[test]
    fn pretty_printer_indents_deep_values_like_serde_json() {
        // Past the 32 levels one write covers, and at every depth up to there.
        let mut value = serde_json::json!({"leaf": [1.5, null]});
        for depth in 0..40 {
            value = serde_json::json!({"k": value, "n": depth, "a": [[], {}]});
            assert_eq!(
                ours_at_depth_zero(&value),
                serde_json::to_string_pretty(&value).unwrap(),
                "depth {depth}"
            );
        }
    }

    #[test]
    fn binary_primitives_round_trip_and_reject_truncation() {
        let mut writer = BinaryWriter { out: Vec::new() };
        writer.varint(300);
        writer.str("goblin");
        writer.u64_le(u64::MAX);
        let mut reader = BinaryReader::new(&writer.out);
        assert_eq!(reader.varint("n"), Ok(300));
        assert_eq!(reader.str("name"), Ok("goblin"));
        assert_eq!(reader.u64_le("id"), Ok(u64::MAX));
        assert!(reader.is_at_end());
        let mut truncated = BinaryReader::new(&writer.out[..4]);
        truncated.varint("n").unwrap();
        assert_eq!(
            truncated.str("name").unwrap_err().message,
            "unexpected end of data reading name (6 bytes needed, 1 left)"
        );
        let mut huge = BinaryReader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(
            huge.count("entity count", 9).unwrap_err().message,
            "entity count 4294967295 is larger than the data could hold"
        );
    }
}

// Scenes as a build without the `binary` feature reads them (the codec is
// `component/binary_codec.rs`).
#[cfg(all(test, not(feature = "binary")))]
mod without_the_binary_feature {
    use std::path::Path;

    use crate::{
        load_scene, ArchetypeLibrary, ComponentRegistry, DiagnosticCode, LoadOptions, Name,
        SceneLoadOptions,
    };

    #[test]
    fn a_binary_scene_is_refused_naming_the_feature() {
        let registry = ComponentRegistry::new();
        let library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        let mut world = hecs::World::new();
        let file = Some(Path::new("saves/arena.scene.bin"));
        let bytes = b"ARCHSCN\0\x03\x00\x00";
        let options = SceneLoadOptions::default();
        let error = load_scene(bytes, file, &mut world, &library, &options).unwrap_err();
        assert_eq!(
            error.to_string(),
            "saves/arena.scene.bin (byte 0): error[unsupported-format]: binary scenes need archetype-engine's `binary` feature (on by default); this build reads JSON scenes only"
        );
        assert_eq!(error.diagnostic.code, DiagnosticCode::UnsupportedFormat);
        assert_eq!(error.offset, Some(0));
        assert_eq!(world.len(), 0);
    }

    #[test]
    fn a_json_scene_loads_without_the_feature() {
        let registry = ComponentRegistry::new();
        let library = ArchetypeLibrary::empty("archetypes", registry, LoadOptions::default());
        let mut world = hecs::World::new();
        let text = r#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "components": { "Name": "Grukk" } } ] }"#;
        let options = SceneLoadOptions::default();
        let scene = load_scene(text.as_bytes(), None, &mut world, &library, &options).unwrap();
        assert_eq!(scene.len(), 1);
        let entity = scene.entities()[0];
        assert_eq!(world.get::<&Name>(entity).unwrap().as_str(), "Grukk");
    }
}
