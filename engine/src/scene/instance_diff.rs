//! Binary instance diffs: how a binary scene writes the component of an archetype instance
//! that differs from its archetype's value.
//!
//! A JSON scene writes such a component as a merge patch. A binary scene writes, in a
//! [`KIND_DIFF`](crate::scene::format::KIND_DIFF) payload:
//!
//! 1. the *key* of the archetype's value the difference was taken against (a content hash of
//!    it, as JSON);
//! 2. the *shape* of the difference: the field paths it sets, and those it removes (the
//!    fields the instance overrides, as [`InstanceOverrides`](crate::InstanceOverrides)
//!    records them);
//! 3. the live value, whole, in postcard.
//!
//! Loading takes the value as it is when the archetype's value is still the one it was saved
//! against (the keys match) and the component's layout has not changed: no JSON is made, and
//! the shape becomes the instance's override record. When the archetype or the component
//! changed since the save, the value is read as JSON, cut down to the shape's fields (which
//! gives back the merge patch a JSON scene holds), and merged onto the archetype's value of
//! now, as a JSON scene's patch is: what the instance did not override follows the archetype.
//!
//! Payload layout: `u64` key (little-endian), varint leaf count, then per leaf a varint
//! segment count, the segments (varint length + UTF-8 each) and one byte (`1` sets, `0`
//! removes); the rest of the payload is the postcard value.

use serde_json::{Map, Value};

use crate::archetype::CompiledNode;
use crate::component::{with_save_table, ComponentId, ComponentRegistry, SaveTable};
use crate::scene::format::{BinaryError, BinaryReader, BinaryWriter};

/// A leaf of a diff's shape that sets a value.
const LEAF_SET: u8 = 1;
/// A leaf of a diff's shape that removes a field.
const LEAF_REMOVED: u8 = 0;

/// A binary instance diff as read from its payload (checked whole).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Diff<'a> {
    /// The key of the archetype value the difference was taken against.
    pub key: u64,
    /// The shape's leaves as written ([`shape`](Self::shape) reads them): equal bytes are an
    /// equal shape (a load meets the same few shapes again and again, and knows them by these).
    pub leaves: &'a [u8],
    /// How many leaves.
    count: usize,
    /// The live value, whole, in postcard.
    pub value: &'a [u8],
}

impl Diff<'_> {
    /// The difference's shape, as [`override_shape`](crate::archetype::override_shape) makes
    /// it from a merge patch. Made when asked: a load that knows the shape by its bytes never
    /// makes it.
    pub fn shape(&self) -> Value {
        let mut reader = BinaryReader::new(self.leaves);
        // The leaves were checked when the diff was read: nothing here fails.
        read_shape(&mut reader, self.count, usize::MAX, true)
            .ok()
            .flatten()
            .unwrap_or_else(|| Value::Object(Map::new()))
    }
}

/// The key of the archetype value a diff of `component` is taken against on `node`: a
/// content hash of the value as the scene compares it (the typed value as its type writes
/// it, or, for a value holding `#` references, as the archetype wrote it). `None` if the node
/// has no such component.
pub(super) fn archetype_value_key(
    registry: &ComponentRegistry,
    node: &CompiledNode,
    component: ComponentId,
) -> Option<u64> {
    let json = match node.typed.iter().find(|(c, _)| *c == component) {
        // A table of its own: shared values are written by their key, as a save writes
        // them, and the save under way does not learn of them.
        Some((_, typed)) => {
            let (encoded, _) = with_save_table(SaveTable::default(), || {
                registry.ops(component).encode(typed)
            });
            serde_json::to_vec(&encoded.ok()?).ok()?
        }
        None => {
            let (_, value) = node.with_refs.iter().find(|(c, _)| *c == component)?;
            serde_json::to_vec(value).ok()?
        }
    };
    Some(content_key(&json))
}

/// FNV-1a, 64 bits: the same on every platform and version.
fn content_key(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A diff's leaves (the paths of its shape, each setting or removing a value), encoded as its
/// payload holds them.
pub(super) struct Leaves(Vec<u8>);

impl Leaves {
    /// The leaves of an override shape.
    pub(super) fn of_shape(shape: &Value) -> Leaves {
        let mut leaves = Vec::new();
        collect_leaves(shape, &mut Vec::new(), &mut leaves);
        Leaves::encode(leaves.iter().map(|(path, kind)| (path.as_slice(), *kind)))
    }

    /// Leaves that set the fields at `paths` (in the order a shape lists them, its keys sorted
    /// at every level).
    pub(super) fn setting(paths: &[Vec<&str>]) -> Leaves {
        Leaves::encode(paths.iter().map(|path| (path.as_slice(), LEAF_SET)))
    }

    /// Whether there are none (the value is its archetype's).
    pub(super) fn is_empty(&self) -> bool {
        self.0.first() == Some(&0)
    }

    fn encode<'p>(leaves: impl ExactSizeIterator<Item = (&'p [&'p str], u8)>) -> Leaves {
        let mut out = BinaryWriter { out: Vec::new() };
        out.varint(leaves.len() as u64);
        for (path, kind) in leaves {
            out.varint(path.len() as u64);
            for segment in path {
                out.str(segment);
            }
            out.out.push(kind);
        }
        Leaves(out.out)
    }
}

/// Writes a diff's payload: `key`, its `leaves`, then the postcard `value`.
pub(super) fn write_diff(out: &mut BinaryWriter, key: u64, leaves: &Leaves, value: &[u8]) {
    let mut payload = BinaryWriter {
        out: Vec::with_capacity(8 + leaves.0.len() + value.len()),
    };
    payload.u64_le(key);
    payload.out.extend_from_slice(&leaves.0);
    payload.out.extend_from_slice(value);
    out.bytes(&payload.out);
}

fn collect_leaves<'s>(
    shape: &'s Value,
    path: &mut Vec<&'s str>,
    out: &mut Vec<(Vec<&'s str>, u8)>,
) {
    match shape {
        Value::Object(members) => {
            for (key, member) in members {
                path.push(key);
                collect_leaves(member, path, out);
                path.pop();
            }
        }
        Value::Null => out.push((path.clone(), LEAF_REMOVED)),
        _ => out.push((path.clone(), LEAF_SET)),
    }
}

/// Reads a diff's payload (`bytes`, which start at byte `base` of the file: errors name file
/// offsets). A shape nested deeper than `max_depth` is refused, and so are overlapping paths.
pub(super) fn read_diff(
    bytes: &[u8],
    base: usize,
    max_depth: usize,
) -> Result<Diff<'_>, BinaryError> {
    let mut reader = BinaryReader::new(bytes);
    let at_file = |mut error: BinaryError| {
        error.offset += base;
        error
    };
    let key = reader.u64_le("diff key").map_err(at_file)?;
    // Each leaf takes at least two bytes: its segment count and its kind.
    let count = reader.count("diff leaf count", 2).map_err(at_file)?;
    let start = reader.offset;
    // One leaf cannot overlap another: it is checked without making the shape.
    read_shape(&mut reader, count, max_depth, count > 1).map_err(at_file)?;
    Ok(Diff {
        key,
        leaves: &bytes[start..reader.offset],
        count,
        value: &bytes[reader.offset..],
    })
}

/// Reads `count` leaves of a shape, each checked (no deeper than `max_depth`, of a known
/// kind); with `make`, the shape they make (refusing paths that overlap).
fn read_shape(
    reader: &mut BinaryReader<'_>,
    count: usize,
    max_depth: usize,
    make: bool,
) -> Result<Option<Value>, BinaryError> {
    let mut shape = make.then(|| Value::Object(Map::new()));
    let mut path = Vec::new();
    for _ in 0..count {
        let start = reader.offset;
        let segments = reader.count("diff path length", 1)?;
        if segments > max_depth {
            return Err(BinaryError {
                offset: start,
                message: format!(
                    "diff path of {segments} fields is deeper than the limit of {max_depth}"
                ),
            });
        }
        path.clear();
        for _ in 0..segments {
            let segment = reader.str("diff path field")?;
            if make {
                path.push(segment);
            }
        }
        let leaf = match reader.u8("diff leaf kind")? {
            LEAF_SET => Value::Bool(true),
            LEAF_REMOVED => Value::Null,
            other => {
                return Err(BinaryError {
                    offset: reader.offset - 1,
                    message: format!("unknown diff leaf kind {other}"),
                })
            }
        };
        if let Some(shape) = &mut shape {
            if !insert_leaf(shape, &path, leaf) {
                return Err(BinaryError {
                    offset: start,
                    message: format!(
                        "diff path `{}` overlaps another path of the same diff",
                        path.join(".")
                    ),
                });
            }
        }
    }
    Ok(shape)
}

/// Puts `leaf` at `path` in `shape`; `false` if the path runs into or through another leaf.
fn insert_leaf(shape: &mut Value, path: &[&str], leaf: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        // The whole value: only as the only leaf.
        let alone = matches!(shape, Value::Object(members) if members.is_empty());
        if alone {
            *shape = leaf;
        }
        return alone;
    };
    let mut at = shape;
    for segment in parents {
        let Value::Object(members) = at else {
            return false;
        };
        at = members
            .entry(segment.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    match at {
        Value::Object(members) if !members.contains_key(*last) => {
            members.insert(last.to_string(), leaf);
            true
        }
        _ => false,
    }
}

/// The merge patch a diff stands for: `whole` (the saved value, as JSON) cut down to the
/// places `shape` sets, with `null` where it removes. For a value made with the shape of its
/// own difference from an archetype value, this is that difference.
pub(super) fn project(whole: &Value, shape: &Value) -> Value {
    match (shape, whole) {
        (Value::Object(members), Value::Object(fields)) => Value::Object(
            members
                .iter()
                .map(|(key, member)| {
                    let value = match (member, fields.get(key)) {
                        (Value::Null, _) | (_, None) => Value::Null,
                        (member, Some(field)) => project(field, member),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        _ => whole.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(shape: &Value) -> Diff<'static> {
        let mut out = BinaryWriter { out: Vec::new() };
        write_diff(&mut out, 7, &Leaves::of_shape(shape), &[1, 2, 3]);
        let bytes: &'static [u8] = Vec::leak(out.out);
        let mut reader = BinaryReader::new(bytes);
        let payload = reader.bytes("payload").unwrap();
        read_diff(payload, 0, 64).unwrap()
    }

    #[test]
    fn a_shape_reads_back_as_written() {
        for shape in [
            json!({"current": true}),
            json!({"a": {"b": true, "c": null}, "d": true}),
            json!(true),
            json!({}),
        ] {
            let diff = round_trip(&shape);
            assert_eq!(
                (diff.key, &diff.shape(), diff.value),
                (7, &shape, &[1u8, 2, 3][..])
            );
        }
    }

    #[test]
    fn project_gives_back_the_patch_a_shape_was_made_from() {
        let archetype = json!({"max": 10, "current": 10, "tags": ["a"], "inner": {"x": 1, "y": 2}});
        let live = json!({"max": 10, "current": 3, "tags": ["b"], "inner": {"x": 1}});
        let patch = crate::json::merge_patch::diff(&archetype, &live).unwrap();
        let shape = crate::archetype::override_shape(&patch);
        assert_eq!(project(&live, &shape), patch);
    }

    #[test]
    fn overlapping_and_deep_paths_are_refused_with_their_offset() {
        let mut out = BinaryWriter { out: Vec::new() };
        out.u64_le(0);
        out.varint(2);
        for path in [&["a"][..], &["a", "b"]] {
            out.varint(path.len() as u64);
            path.iter().for_each(|s| out.str(s));
            out.out.push(LEAF_SET);
        }
        let error = read_diff(&out.out, 100, 64).unwrap_err();
        assert_eq!(
            (error.offset, error.message.as_str()),
            (
                100 + 13,
                "diff path `a.b` overlaps another path of the same diff"
            )
        );
        let error = read_diff(&out.out, 0, 1).unwrap_err();
        assert_eq!(
            (error.offset, error.message.as_str()),
            (13, "diff path of 2 fields is deeper than the limit of 1")
        );
    }
}
