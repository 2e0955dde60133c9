//! A serializer that writes nothing and checks what a value would write: JSON cannot hold
//! `NaN` or infinities (serde_json silently writes `null`, which would lose data), and maps
//! (`HashMap` fields) need their keys sorted for deterministic files.

use std::fmt;

use serde::ser::{self, Serialize};

use crate::json::FieldPath;

/// What [`check`] found in a value that serializes cleanly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Checked {
    /// The value contains at least one map (its key order is not under our control).
    pub has_map: bool,
}

/// A value that cannot be written faithfully.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CheckError {
    pub path: FieldPath,
    pub message: String,
    pub kind: CheckErrorKind,
}

/// What [`check`] found wrong, known from where it was found (never from the message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CheckErrorKind {
    /// A float that is NaN (`nan`) or infinite.
    NotFinite { nan: bool },
    /// The component's own `Serialize` refused the value; the message is what it said.
    Refused,
}

/// Serializes `value` into nothing, reporting non-finite floats (with their field path) and
/// whether maps occur.
pub(super) fn check<T: Serialize + ?Sized>(value: &T) -> Result<Checked, CheckError> {
    let mut found = Checked::default();
    // Almost every value is fine: check without tracking the path (tracking costs more than
    // the check), and check again with it only to say where a problem is.
    if value.serialize(Checker { found: &mut found }).is_ok() {
        return Ok(found);
    }
    let result = serde_path_to_error::serialize(value, Checker { found: &mut found });
    match result {
        Ok(()) => Ok(found),
        Err(error) => {
            let path = crate::component::value_ops::convert_path(error.path());
            let Error { message, kind } = error.into_inner();
            Err(CheckError {
                path,
                message,
                kind,
            })
        }
    }
}

/// Checks a value just read from a file: serde turns a number too large for an `f32` (`1e39`)
/// into an infinity without complaint, and binary data may hold NaN or infinity bits. Neither
/// could be saved again, so both are refused: an infinity as "number out of range" (serde_json's
/// words for the same mistake in JSON text). References are written as raw bits meanwhile,
/// whatever the caller's mapper would do with them.
pub(super) fn check_read<T: Serialize + ?Sized>(value: &T) -> Result<(), CheckError> {
    let result = crate::component::entity_ref::writing_raw_bits(|| check(value));
    result.map(|_| ()).map_err(|error| CheckError {
        message: match error.kind {
            // A component's own `Serialize` refused the value: say what it said.
            CheckErrorKind::Refused => error.message,
            CheckErrorKind::NotFinite { nan: true } => "not a number (NaN)".to_string(),
            CheckErrorKind::NotFinite { nan: false } => "number out of range".to_string(),
        },
        path: error.path,
        kind: error.kind,
    })
}

/// What [`finite`]'s message says after the value.
const NOT_FINITE: &str = " cannot be written to a data file (JSON has no NaN or infinity)";

/// The checker's error: its message and what it is.
#[derive(Debug)]
struct Error {
    message: String,
    kind: CheckErrorKind,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error {
            message: message.to_string(),
            kind: CheckErrorKind::Refused,
        }
    }
}

struct Checker<'a> {
    found: &'a mut Checked,
}

fn finite(value: f64) -> Result<(), Error> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(Error {
            message: format!("{value}{NOT_FINITE}"),
            kind: CheckErrorKind::NotFinite {
                nan: value.is_nan(),
            },
        })
    }
}

impl<'a> ser::Serializer for Checker<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, _: bool) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_i8(self, _: i8) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_i16(self, _: i16) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_i32(self, _: i32) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_i64(self, _: i64) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_i128(self, _: i128) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_u8(self, _: u8) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_u16(self, _: u16) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_u32(self, _: u32) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_u64(self, _: u64) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_u128(self, _: u128) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        finite(f64::from(value))
    }
    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        finite(value)
    }
    fn serialize_char(self, _: char) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_str(self, _: &str) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Error> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Error> {
        self.found.has_map = true;
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, Error> {
        Ok(self)
    }
}

impl Checker<'_> {
    fn nested(&mut self) -> Checker<'_> {
        Checker { found: self.found }
    }
}

impl ser::SerializeSeq for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeTuple for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeMap for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        key.serialize(self.nested())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeStruct for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeStructVariant for Checker<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self.nested())
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(serde::Serialize)]
    struct Stats {
        hp: f32,
        speeds: Vec<f64>,
    }

    #[test]
    fn finds_non_finite_floats_and_maps() {
        let ok = Stats {
            hp: 1.0,
            speeds: vec![2.0],
        };
        assert_eq!(check(&ok), Ok(Checked { has_map: false }));
        let bad = Stats {
            hp: 1.0,
            speeds: vec![2.0, f64::NAN],
        };
        let error = check(&bad).unwrap_err();
        assert_eq!(error.path.to_string(), "speeds[1]");
        assert_eq!(
            error.message,
            "NaN cannot be written to a data file (JSON has no NaN or infinity)"
        );
        assert_eq!(error.kind, CheckErrorKind::NotFinite { nan: true });
        let read = check_read(&bad).unwrap_err();
        assert_eq!(read.message, "not a number (NaN)");
        let infinite = check_read(&vec![f32::INFINITY]).unwrap_err();
        assert_eq!(
            (infinite.message.as_str(), infinite.kind),
            (
                "number out of range",
                CheckErrorKind::NotFinite { nan: false }
            )
        );
        let map: HashMap<String, u8> = HashMap::new();
        assert_eq!(check(&map), Ok(Checked { has_map: true }));
    }

    /// A component whose own `Serialize` refuses: its words, classified as refused even when
    /// they read like ours.
    #[test]
    fn a_refusal_is_the_components_own_whatever_it_says() {
        struct Picky;
        impl Serialize for Picky {
            fn serialize<S: ser::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(ser::Error::custom(format!("NaN{NOT_FINITE}")))
            }
        }
        let error = check_read(&Picky).unwrap_err();
        assert_eq!(error.kind, CheckErrorKind::Refused);
        assert_eq!(error.message, format!("NaN{NOT_FINITE}"));
    }
}
