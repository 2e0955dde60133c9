//! The layout of one entry of a binary scene's entity list, read once for both routes: the
//! careful loader (which places what it refuses at its byte offset) and the fast one (which
//! gives up on anything it refuses). Both call these readers; neither restates the layout.
//!
//! An entry is its stable ID (`u64` LE), its archetype (a varint: 0 for none, else an index
//! into the header's archetype table plus one), its child path (a string, empty for none) and
//! its component count (a varint), then that many components: the component's index into the
//! header's component table (a varint), the payload's kind (a byte) and the payload (a
//! length-prefixed byte string).

use std::sync::Arc;

use crate::component::{Layout, StableId};
use crate::scene::format::{
    BinaryError, BinaryReader, KIND_DIFF, KIND_PATCH, KIND_REMOVED, KIND_TYPED,
};
use crate::scene::instance_diff::read_diff;
use crate::scene::load::Payload;

/// The smallest an entry can be: an ID (8 bytes), an archetype index, a child path's length
/// and a component count (a byte each).
pub(super) const MIN_ENTRY_BYTES: usize = 11;

/// The smallest a component can be: its index, its kind and its payload's length.
const MIN_COMPONENT_BYTES: usize = 3;

/// The fixed part of an entry, before its components.
pub(super) struct EntryHead<'a> {
    /// Where the entry starts.
    pub offset: usize,
    pub id: StableId,
    /// The archetype's name from the header's table, if it is an instance.
    pub archetype: Option<&'a str>,
    /// The child path, empty for none.
    pub child: &'a str,
    /// How many components follow.
    pub components: usize,
}

/// One component of an entry, its payload not yet interpreted.
pub(super) struct ComponentHead<'a> {
    /// Where the component starts.
    pub offset: usize,
    /// Its index into the header's component table (checked against it).
    pub index: usize,
    /// Its payload kind (`KIND_*` of [`format`](crate::scene::format)).
    pub kind: u8,
    pub payload: &'a [u8],
    /// Where the payload's bytes start.
    pub payload_offset: usize,
}

/// Reads the fixed part of the next entry; `archetypes` is the header's archetype table.
///
/// Inlined into the loaders' loops: returned through memory, the entry's parts cost a plain
/// binary load a sixth of its time.
#[inline(always)]
pub(super) fn read_entry_head<'a>(
    reader: &mut BinaryReader<'a>,
    archetypes: &[&'a str],
) -> Result<EntryHead<'a>, BinaryError> {
    let offset = reader.offset;
    let id = StableId(reader.u64_le("entity id")?);
    let archetype = match reader.varint("archetype index")? {
        0 => None,
        n => match usize::try_from(n - 1).ok().and_then(|i| archetypes.get(i)) {
            Some(name) => Some(*name),
            None => return Err(out_of_range(offset, "archetype", n)),
        },
    };
    let child = reader.str("child path")?;
    let components = reader.count("component count", MIN_COMPONENT_BYTES)?;
    Ok(EntryHead {
        offset,
        id,
        archetype,
        child,
        components,
    })
}

/// Reads the next component of an entry; `table_len` is the length of the header's component
/// table. Inlined, as [`read_entry_head`].
#[inline(always)]
pub(super) fn read_component_head<'a>(
    reader: &mut BinaryReader<'a>,
    table_len: usize,
) -> Result<ComponentHead<'a>, BinaryError> {
    let offset = reader.offset;
    let index = reader.varint("component index")?;
    let index = match usize::try_from(index).ok().filter(|i| *i < table_len) {
        Some(index) => index,
        None => return Err(out_of_range(offset, "component", index)),
    };
    let kind = reader.u8("payload kind")?;
    let payload = reader.bytes("component value")?;
    Ok(ComponentHead {
        offset,
        index,
        kind,
        payload,
        payload_offset: reader.offset - payload.len(),
    })
}

impl<'a> ComponentHead<'a> {
    /// The payload as the loaders take it: `evolved` is the component's saved layout where it
    /// differs from its type's now, `max_depth` the deepest field path a diff may hold.
    pub(super) fn payload(
        &self,
        evolved: Option<&Arc<Layout>>,
        max_depth: usize,
    ) -> Result<Payload<'a>, BinaryError> {
        Ok(match (self.kind, evolved) {
            (KIND_TYPED, Some(layout)) => Payload::Evolved(self.payload, layout.clone()),
            (KIND_TYPED, None) => Payload::Postcard(self.payload),
            (KIND_PATCH, _) => match std::str::from_utf8(self.payload) {
                Ok(text) => Payload::Json(text),
                Err(_) => return Err(self.error("merge patch is not valid UTF-8".to_string())),
            },
            (KIND_REMOVED, _) => Payload::Removed,
            (KIND_DIFF, layout) => Payload::Diff(
                read_diff(self.payload, self.payload_offset, max_depth)?,
                layout.cloned(),
            ),
            (other, _) => return Err(self.error(format!("unknown payload kind {other}"))),
        })
    }

    #[cold]
    fn error(&self, message: String) -> BinaryError {
        BinaryError {
            offset: self.offset,
            message,
        }
    }
}

#[cold]
fn out_of_range(offset: usize, table: &str, index: u64) -> BinaryError {
    BinaryError {
        offset,
        message: format!("{table} index {index} is out of range"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::format::BinaryWriter;

    fn entry(archetype: u64, components: &[(u64, u8, &[u8])]) -> Vec<u8> {
        let mut out = BinaryWriter { out: Vec::new() };
        out.u64_le(7);
        out.varint(archetype);
        out.str("");
        out.varint(components.len() as u64);
        for (index, kind, payload) in components {
            out.varint(*index);
            out.out.push(*kind);
            out.bytes(payload);
        }
        out.out
    }

    fn read(bytes: &[u8]) -> Result<Vec<(usize, u8, usize)>, BinaryError> {
        let mut reader = BinaryReader::new(bytes);
        let head = read_entry_head(&mut reader, &["goblin"])?;
        assert_eq!(head.id, StableId(7));
        (0..head.components)
            .map(|_| {
                let component = read_component_head(&mut reader, 2)?;
                component.payload(None, 8)?;
                Ok((component.index, component.kind, component.payload_offset))
            })
            .collect()
    }

    #[test]
    fn reads_an_entry_and_places_what_it_refuses() {
        let ok = entry(1, &[(0, KIND_TYPED, &[1, 2]), (1, KIND_REMOVED, &[])]);
        assert_eq!(
            read(&ok),
            Ok(vec![(0, KIND_TYPED, 14), (1, KIND_REMOVED, 19)])
        );
        let refused = |bytes: &[u8]| read(bytes).map(|_| ()).unwrap_err();
        let error = refused(&entry(2, &[]));
        assert_eq!(
            (error.offset, error.message.as_str()),
            (0, "archetype index 2 is out of range")
        );
        let error = refused(&entry(0, &[(2, KIND_TYPED, &[])]));
        assert_eq!(
            (error.offset, error.message.as_str()),
            (11, "component index 2 is out of range")
        );
        let error = refused(&entry(0, &[(0, 9, &[])]));
        assert_eq!(
            (error.offset, error.message.as_str()),
            (11, "unknown payload kind 9")
        );
        let error = refused(&entry(0, &[(0, KIND_PATCH, &[0xff])]));
        assert_eq!(
            (error.offset, error.message.as_str()),
            (11, "merge patch is not valid UTF-8")
        );
        let mut cut = entry(0, &[(0, KIND_TYPED, &[1, 2])]);
        cut.pop();
        let error = refused(&cut);
        assert_eq!(
            (error.offset, error.message.as_str()),
            (
                14,
                "unexpected end of data reading component value (2 bytes needed, 1 left)"
            )
        );
    }
}
