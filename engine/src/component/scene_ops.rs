//! [`SceneOps`]: a component type in scene files: its live values written (JSON or postcard,
//! checked first) and values read straight from a file's text or bytes into entities.

use std::fmt;

use hecs::{Archetype, BatchWriter, ColumnBatchBuilder, Entity, EntityBuilder, World};
use serde::Serialize;
use serde_json::Value;

use crate::component::ignored_fields::{deserialize_noting_maps, unique_keys, Strict};
use crate::component::ops::{Ops, TypedValue};
use crate::component::registry::Component;
use crate::component::shared::recording;
use crate::component::value_check::{self, CheckError, Checked};
use crate::component::value_ops::{convert_path, field_path_of};
use crate::component::value_reader::ReadErrorKind;
use crate::json::{DeclaredAxes, FieldPath, Pretty};

/// Why a live component could not be written.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The value holds something a scene cannot hold (see [`value_check::check`]).
    Check(CheckError),
    /// Serializing failed (the component's own `Serialize` refused).
    Write(String),
}

impl WriteError {
    fn write(error: impl fmt::Display) -> Self {
        WriteError::Write(error.to_string())
    }
}

/// A component type's column in one hecs archetype, borrowed for reading while a scene is
/// saved: each entity's value is read by its row, without looking the entity up.
pub(crate) trait LiveColumn {
    /// Writes the value in `row` as pretty JSON whose first line continues the current one and
    /// whose nesting starts at `depth` (see `Pretty`), recording the shared values it
    /// writes. The value is checked first (see [`value_check::check`]); values holding maps
    /// are written through a JSON value, which sorts their keys.
    fn write_json(&self, row: usize, out: &mut Vec<u8>, depth: usize) -> Result<(), WriteError>;
    /// Appends the value in `row` in postcard's binary form, checking it first.
    fn write_postcard(&self, row: usize, out: &mut Vec<u8>) -> Result<(), WriteError>;
    /// Whether the value in `row` has exactly the postcard bytes `expected`, compared as it is
    /// serialized, without writing it. Unchecked: to compare with the bytes of a value known
    /// good (a value that fails the check serializes differently from any such value, or not
    /// at all).
    fn has_postcard(&self, row: usize, expected: &[u8]) -> bool;
}

impl<T: Component> LiveColumn for hecs::ArchetypeColumn<'_, T> {
    fn write_json(&self, row: usize, out: &mut Vec<u8>, depth: usize) -> Result<(), WriteError> {
        let component = self.get(row).ok_or(WriteError::Write(NO_ROW.to_string()))?;
        let checked = value_check::check(component).map_err(WriteError::Check)?;
        let mut serializer = serde_json::Serializer::with_formatter(out, Pretty::at(depth));
        recording(|| {
            if checked.has_map {
                let value = serde_json::to_value(component).map_err(WriteError::write)?;
                value.serialize(&mut serializer).map_err(WriteError::write)
            } else {
                component
                    .serialize(&mut serializer)
                    .map_err(WriteError::write)
            }
        })
    }

    fn write_postcard(&self, row: usize, out: &mut Vec<u8>) -> Result<(), WriteError> {
        let component = self.get(row).ok_or(WriteError::Write(NO_ROW.to_string()))?;
        value_check::check(component).map_err(WriteError::Check)?;
        let bytes = crate::component::binary_codec::to_extend(component, std::mem::take(out))
            .map_err(WriteError::write)?;
        *out = bytes;
        Ok(())
    }

    fn has_postcard(&self, row: usize, expected: &[u8]) -> bool {
        self.get(row).is_some_and(|component| {
            crate::component::binary_codec::serializes_to(component, expected)
        })
    }
}

/// What a [`LiveColumn`] says of a row past its end (a bug, not bad data).
const NO_ROW: &str = "the entity is not in the archetype column being saved";
/// What [`SceneOps::write_postcard_typed`] says of a value of another type (a bug).
const NOT_THIS_TYPE: &str = "the value is not of the component's type";
/// Reading and writing a component type's values in scene files.
pub(crate) trait SceneOps {
    /// Serializes the live component of `entity`, if it has one.
    fn to_json(&self, world: &World, entity: Entity) -> Option<Result<Value, serde_json::Error>>;
    /// Appends the live component of `entity` in postcard's binary form (references as the
    /// installed mapper writes them) to `out`; `None` if it has none. For comparing values:
    /// two values are the same if their bytes are.
    fn postcard_of(&self, world: &World, entity: Entity, out: &mut Vec<u8>) -> Option<bool>;
    /// Checks the live component of `entity` can be written (no non-finite floats, every
    /// entity reference mappable under the installed mapper). `None` if it has none.
    fn check_live(&self, world: &World, entity: Entity) -> Option<Result<Checked, CheckError>>;
    /// This type's column in a hecs archetype, if the archetype has it, for saving.
    fn column<'w>(&self, archetype: &'w Archetype) -> Option<Box<dyn LiveColumn + 'w>>;
    /// Deserializes a value from JSON text straight into `builder`. Fields the type does not
    /// have are skipped and reported through `unknown` (the caller decides whether that is an
    /// error: it is the place of a typo, and saving the value again would drop them).
    fn read_json_into(
        &self,
        text: &str,
        builder: &mut EntityBuilder,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<(), (FieldPath, serde_json::Error)>;
    /// Deserializes a value from the start of `text` (JSON, after optional whitespace), checked
    /// as [`read_json_into`](Self::read_json_into) checks it, into `builder`; returns how many
    /// bytes of `text` the value took. `None` when it does not decode or has a field the type
    /// does not have: the caller reads it again the careful way to say why.
    fn read_json_prefix_into(&self, text: &str, builder: &mut EntityBuilder) -> Option<usize>;
    /// Deserializes a value from postcard bytes; an error says where in the value, if known.
    fn read_postcard(&self, bytes: &[u8]) -> Result<TypedValue, (FieldPath, String)>;
    /// As [`read_postcard`](Self::read_postcard), adding the value to `builder`.
    fn read_postcard_into(
        &self,
        bytes: &[u8],
        builder: &mut EntityBuilder,
    ) -> Result<(), (FieldPath, String)>;
    /// A writer of this type's column of `batch` that decodes postcard bytes; `None` if the
    /// batch has no such column.
    fn postcard_sink<'b>(
        &self,
        batch: &'b ColumnBatchBuilder,
    ) -> Option<Box<dyn PostcardSink + 'b>>;
    /// Appends `value` (of this type) in postcard's binary form, as
    /// [`LiveColumn::write_postcard`] writes a live one.
    fn write_postcard_typed(&self, value: &TypedValue, out: &mut Vec<u8>)
        -> Result<(), WriteError>;
}

impl<T: Component> SceneOps for Ops<T> {
    fn to_json(&self, world: &World, entity: Entity) -> Option<Result<Value, serde_json::Error>> {
        let component = world.get::<&T>(entity).ok()?;
        Some(serde_json::to_value(&*component))
    }

    fn postcard_of(&self, world: &World, entity: Entity, out: &mut Vec<u8>) -> Option<bool> {
        let component = world.get::<&T>(entity).ok()?;
        match crate::component::binary_codec::to_extend(&*component, std::mem::take(out)) {
            Ok(bytes) => {
                *out = bytes;
                Some(true)
            }
            Err(_) => Some(false),
        }
    }

    fn check_live(&self, world: &World, entity: Entity) -> Option<Result<Checked, CheckError>> {
        let component = world.get::<&T>(entity).ok()?;
        Some(value_check::check(&*component))
    }

    fn column<'w>(&self, archetype: &'w Archetype) -> Option<Box<dyn LiveColumn + 'w>> {
        Some(Box::new(archetype.get::<&T>()?))
    }

    fn read_json_into(
        &self,
        text: &str,
        builder: &mut EntityBuilder,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<(), (FieldPath, serde_json::Error)> {
        builder.add(Self::read_json_typed(
            self.marker_text(text),
            &self.axes,
            unknown,
        )?);
        Ok(())
    }

    fn read_json_prefix_into(&self, text: &str, builder: &mut EntityBuilder) -> Option<usize> {
        if self.marker {
            // Scenes write markers `{}` (serde would read only `null`).
            let rest = text.trim_start();
            if let Some(after) = rest.strip_prefix("{}") {
                builder.add(serde_json::from_str::<T>("null").ok()?);
                return Some(text.len() - after.len());
            }
        }
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<Strict<T>>();
        let Strict(typed, maps) = values.next()?.ok()?;
        let end = values.byte_offset();
        // A map keeps the last of two equal keys: refused, the careful reader says where.
        if maps && unique_keys(text.get(..end)?).is_err() {
            return None;
        }
        crate::component::value_check::check_read(&typed).ok()?;
        builder.add(typed);
        Some(end)
    }

    fn read_postcard(&self, bytes: &[u8]) -> Result<TypedValue, (FieldPath, String)> {
        Ok(Box::new(Self::read_postcard_typed(bytes)?))
    }

    fn read_postcard_into(
        &self,
        bytes: &[u8],
        builder: &mut EntityBuilder,
    ) -> Result<(), (FieldPath, String)> {
        builder.add(Self::read_postcard_typed(bytes)?);
        Ok(())
    }

    fn postcard_sink<'b>(
        &self,
        batch: &'b ColumnBatchBuilder,
    ) -> Option<Box<dyn PostcardSink + 'b>> {
        Some(Box::new(batch.writer::<T>()?))
    }

    fn write_postcard_typed(
        &self,
        value: &TypedValue,
        out: &mut Vec<u8>,
    ) -> Result<(), WriteError> {
        let value = Self::typed(value).ok_or(WriteError::Write(NOT_THIS_TYPE.to_string()))?;
        value_check::check(value).map_err(WriteError::Check)?;
        *out = crate::component::binary_codec::to_extend(value, std::mem::take(out))
            .map_err(WriteError::write)?;
        Ok(())
    }
}

/// One column of a hecs column batch being filled with values decoded from postcard bytes.
pub(crate) trait PostcardSink {
    /// Decodes `bytes`, checked as [`SceneOps::read_postcard`] checks them, onto the end of
    /// the column.
    fn push_postcard(&mut self, bytes: &[u8]) -> Result<(), PushError>;
    /// Decodes JSON `text` (as [`LiveColumn::write_json`] wrote it) onto the end of the column.
    fn push_json(&mut self, text: &str) -> Result<(), PushError>;
    /// Puts a value decoded already onto the end of the column.
    fn push_typed(&mut self, value: TypedValue) -> Result<(), PushError>;
}

/// Why a value was not pushed onto a batch column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The value does not decode, or fails its checks: where, and why.
    Invalid(FieldPath, String),
    /// The column already holds a value for every row of its batch.
    ColumnFull,
    /// A value decoded already is not of the column's type (a bug).
    WrongType,
}

impl<T: Component> PostcardSink for BatchWriter<'_, T> {
    fn push_postcard(&mut self, bytes: &[u8]) -> Result<(), PushError> {
        let value = Ops::<T>::read_postcard_typed(bytes)
            .map_err(|(path, why)| PushError::Invalid(path, why))?;
        self.push(value).map_err(|_| PushError::ColumnFull)
    }

    fn push_json(&mut self, text: &str) -> Result<(), PushError> {
        let value = Ops::<T>::read_json_typed(text, &[], &mut Vec::new())
            .map_err(|(path, why)| PushError::Invalid(path, why.to_string()))?;
        self.push(value).map_err(|_| PushError::ColumnFull)
    }

    fn push_typed(&mut self, value: TypedValue) -> Result<(), PushError> {
        let value = value.downcast::<T>().map_err(|_| PushError::WrongType)?;
        self.push(*value).map_err(|_| PushError::ColumnFull)
    }
}

impl<T: Component> Ops<T> {
    /// Deserializes `T` from postcard bytes, then checks it as
    /// [`check_read`](crate::component::value_check::check_read) does.
    #[inline]
    fn read_postcard_typed(bytes: &[u8]) -> Result<T, (FieldPath, String)> {
        crate::component::entity_ref::take_last_read_error();
        let typed = crate::component::binary_codec::from_bytes::<T>(bytes).map_err(|error| {
            // Postcard drops custom messages: a reference's own reason is kept aside.
            let message = match crate::component::entity_ref::take_last_read_error() {
                Some(reason) => reason.to_string(),
                None => format!("corrupt binary value ({error})"),
            };
            (FieldPath::root(), message)
        })?;
        crate::component::value_check::check_read(&typed)
            .map_err(|error| (error.path, error.message))?;
        Ok(typed)
    }

    /// Deserializes `T` from JSON text (fields `T` does not have go to `unknown`), then checks
    /// it as [`check_read`](crate::component::value_check::check_read) does.
    ///
    /// A vector written as an object of its axes (glam's, or `axes` the component's options
    /// name) is read as archetype values read it, past the first, direct attempt.
    fn read_json_typed(
        text: &str,
        axes: &[DeclaredAxes],
        unknown: &mut Vec<FieldPath>,
    ) -> Result<T, (FieldPath, serde_json::Error)> {
        // Decode without tracking the path first; track it only to report an error.
        let mut found = Vec::new();
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let mut record = |path: serde_ignored::Path<'_>| found.push(field_path_of(&path));
        let ignoring = serde_ignored::Deserializer::new(&mut deserializer, &mut record);
        let decoded = deserialize_noting_maps::<T, _>(ignoring)
            .and_then(|typed| deserializer.end().map(|()| typed));
        if let Ok((typed, maps)) = decoded {
            // A map keeps the last of two equal keys, where a struct refuses them: so do we.
            if maps {
                unique_keys(text).map_err(|error| {
                    let path = convert_path(error.path());
                    (path, error.into_inner())
                })?;
            }
            crate::component::value_check::check_read(&typed)
                .map_err(|error| (error.path, serde::de::Error::custom(error.message)))?;
            unknown.append(&mut found);
            return Ok(typed);
        }
        if let Some(read) = read_with_axes::<T>(text, axes, unknown) {
            return read;
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            let path = convert_path(error.path());
            (path, error.into_inner())
        })
    }
}

/// How deep a component value read as a whole JSON value may nest (serde_json's own limit).
const MAX_VALUE_DEPTH: usize = 128;

/// `T` read from `text` as an archetype value is read, when that is what makes it readable (a
/// vector written as an object of its axes): `None` when the text is no valid JSON value (no
/// duplicate keys) or the reason it does not read is not an axis.
fn read_with_axes<T: Component>(
    text: &str,
    axes: &[DeclaredAxes],
    unknown: &mut Vec<FieldPath>,
) -> Option<Result<T, (FieldPath, serde_json::Error)>> {
    let source = crate::json::SourceText::from_bytes(text.as_bytes().to_vec()).ok()?;
    let value = crate::json::parse_json(&source, MAX_VALUE_DEPTH).ok()?;
    let mut found = Vec::new();
    let read =
        match crate::component::value_ops::read_completing_axes::<T>(&value, axes, &mut found) {
            Ok(typed) => crate::component::value_check::check_read(&typed)
                .map(|()| typed)
                .map_err(|error| (error.path, serde::de::Error::custom(error.message))),
            Err(error) => match error.kind {
                ReadErrorKind::UnknownAxis(..) | ReadErrorKind::MissingAxis(_) => {
                    Err((error.path, serde::de::Error::custom(error.message)))
                }
                _ => return None,
            },
        };
    if read.is_ok() {
        unknown.append(&mut found);
    }
    Some(read)
}
