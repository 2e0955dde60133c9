//! [`ValueOps`]: a component type's values as archetype files write them: decoding and checking
//! JSON values, the type's shape for suggestions, its traced layouts.

use hecs::Entity;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::component::map_error::{MapError, ReadOnly};
use crate::component::ops::{Ops, TypedValue};
use crate::component::registry::Component;
use crate::component::typed_list::TypedList;
use crate::component::value_layout::Layout;
use crate::component::value_reader::{ReadError, ReadErrorKind, Reading, ValueReader};
use crate::json::{normalize_declared, probe, tag_of, AxisMisfit, DeclaredAxes, Shape};
use crate::json::{FieldPath, PathSegment};

/// Why a JSON value is not a valid component value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValueError {
    /// Where in the value the problem is (empty: the value itself).
    pub path: FieldPath,
    /// serde's description of the problem.
    pub message: String,
    /// What kind of problem it is.
    pub kind: ReadErrorKind,
}

impl ValueError {
    /// A problem of no particular kind (a wrong type or value) at `path`.
    pub fn invalid(path: FieldPath, message: impl Into<String>) -> Self {
        ValueError {
            path,
            message: message.into(),
            kind: ReadErrorKind::Invalid,
        }
    }
}

/// Why a typed value could not be written as JSON.
#[derive(Debug)]
pub(crate) enum EncodeError {
    /// Its `Serialize` failed (a reference the installed mapper cannot write, say).
    Serialize(serde_json::Error),
    /// The value is not of the component's type.
    WrongType,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Serialize(error) => error.fmt(f),
            EncodeError::WrongType => f.write_str("component value of the wrong type"),
        }
    }
}

/// What the archetype subsystem does with a component type's values.
pub(crate) trait ValueOps {
    /// Deserializes a typed value; unknown fields are reported through `unknown`.
    fn decode(&self, value: &Value, unknown: &mut Vec<FieldPath>)
        -> Result<TypedValue, ValueError>;
    /// Deserializes each of `values` as [`decode`](Self::decode) does, into one list in their
    /// order; `None` if one does not decode.
    fn decode_list(&self, values: &mut dyn Iterator<Item = Value>) -> Option<Box<dyn TypedList>>;
    /// Whether the type is a unit struct (a marker component).
    fn is_marker(&self) -> bool;
    /// Checks a value that may be partial as far as it goes ([`check_partial_value`]).
    fn check_partial(&self, value: &Value, unknown: &mut Vec<FieldPath>) -> Result<(), ValueError>;
    /// The struct or enum shape at `path` inside the type (for suggestions).
    fn probe(&self, path: &[PathSegment]) -> Option<Shape>;
    /// The tag field of the internally tagged enum at `path` inside the type, if it is one.
    fn tag_of(&self, path: &[PathSegment]) -> Option<&'static str>;
    /// Serializes a typed value (the canonical JSON form of what a file wrote).
    fn encode(&self, value: &TypedValue) -> Result<Value, EncodeError>;
    /// Whether two typed values are known to be alike: they serialize to the same postcard
    /// bytes, so to the same canonical JSON. `false` when that is not known (a value that
    /// cannot be serialized, a build without the `binary` feature): compare them by
    /// [`encode`](Self::encode).
    fn known_alike(&self, a: &TypedValue, b: &TypedValue) -> bool;
    /// The fields whose axes the component's options name.
    fn declared_axes(&self) -> &[DeclaredAxes];
    /// The layout of the type's binary form (see [`Layout`]), if it can be traced (traced
    /// once, then kept).
    fn layout(&self) -> Option<&Layout>;
    /// The layout of the type's JSON form, if it can be traced.
    #[cfg(feature = "schema")]
    fn json_layout(&self) -> Option<Layout>;
}

/// An object of declared axes that is not one: where, and what is wrong.
fn axis_error((place, problem, axes): AxisMisfit) -> ValueError {
    let path = FieldPath(place.into_iter().map(PathSegment::Key).collect());
    let ReadError { kind, message } = ReadError::of_axes(problem, axes);
    ValueError {
        path,
        message,
        kind,
    }
}

/// How many vectors of one value [`read_completing_axes`] completes at most.
const MAX_COMPLETED_VECTORS: usize = 64;

/// Reads `T` from `value`, where an object of axes that leaves some out takes them from the
/// type's default for that place (the value read without it, and written back): `{"z": 5}`
/// for a `translation` the type defaults to `[0, 0, 0]` is `[0, 0, 5]`. Where the type has no
/// default there, the missing axis is the error.
pub(super) fn read_completing_axes<T: Component>(
    value: &Value,
    axes: &[DeclaredAxes],
    unknown: &mut Vec<FieldPath>,
) -> Result<T, ValueError> {
    let read = |value: &Value, unknown: &mut Vec<FieldPath>| {
        let value = normalize_declared(value, axes, false).map_err(axis_error)?;
        deserialize_value::<T>(&value, unknown)
    };
    let mut error = match read(value, unknown) {
        Ok(typed) => return Ok(typed),
        Err(error) => error,
    };
    let mut completed = value.clone();
    for _ in 0..MAX_COMPLETED_VECTORS {
        let ReadErrorKind::MissingAxis(names) = error.kind else {
            return Err(error);
        };
        if !complete_from_default::<T>(&mut completed, &error.path, names, axes) {
            return Err(error);
        }
        match read(&completed, unknown) {
            Ok(typed) => return Ok(typed),
            Err(next) => error = next,
        }
    }
    Err(error)
}

/// Gives the object of `names` at `path` in `value` the axes it leaves out, from the type's
/// default there; `false` if the type has none (or the place is not a field of fields).
fn complete_from_default<T: Component>(
    value: &mut Value,
    path: &FieldPath,
    names: &[&str],
    axes: &[DeclaredAxes],
) -> bool {
    let Some(keys) = keys_of(path) else {
        return false;
    };
    // The value read without the vector, and without any other one missing axes.
    let mut without = value.clone();
    let mut removed = keys.clone();
    let mut typed = None;
    for _ in 0..MAX_COMPLETED_VECTORS {
        if !remove_at(&mut without, &removed) {
            return false;
        }
        let read = normalize_declared(&without, axes, false)
            .map_err(axis_error)
            .and_then(|without| deserialize_value::<T>(&without, &mut Vec::new()));
        match read {
            Ok(read) => {
                typed = Some(read);
                break;
            }
            Err(ValueError {
                kind: ReadErrorKind::MissingAxis(_),
                path,
                ..
            }) => match keys_of(&path) {
                Some(other) => removed = other,
                None => return false,
            },
            Err(_) => return false,
        }
    }
    let Some(Ok(written)) = typed.map(|typed| serde_json::to_value(&typed)) else {
        return false;
    };
    let default = keys
        .iter()
        .try_fold(&written, |at, key| at.get(key.as_str()));
    let Some(Value::Array(default)) = default else {
        return false;
    };
    let place = keys
        .iter()
        .try_fold(value, |at, key| at.get_mut(key.as_str()));
    let (Some(Value::Object(object)), true) = (place, default.len() == names.len()) else {
        return false;
    };
    for (name, item) in names.iter().zip(default) {
        object
            .entry(name.to_string())
            .or_insert_with(|| item.clone());
    }
    true
}

/// The keys of `path`, if it is only keys and not empty.
fn keys_of(path: &FieldPath) -> Option<Vec<String>> {
    let keys: Option<Vec<String>> = (path.segments().iter())
        .map(|segment| match segment {
            PathSegment::Key(key) => Some(key.clone()),
            PathSegment::Index(_) => None,
        })
        .collect();
    keys.filter(|keys| !keys.is_empty())
}

/// Removes the field at `keys` from `value`; `false` if there is none.
fn remove_at(value: &mut Value, keys: &[String]) -> bool {
    let Some((last, parents)) = keys.split_last() else {
        return false;
    };
    let parent = parents
        .iter()
        .try_fold(value, |at, key| at.get_mut(key.as_str()));
    parent
        .and_then(Value::as_object_mut)
        .and_then(|parent| parent.remove(last))
        .is_some()
}

impl<T: Component> ValueOps for Ops<T> {
    fn decode(
        &self,
        value: &Value,
        unknown: &mut Vec<FieldPath>,
    ) -> Result<TypedValue, ValueError> {
        let typed = read_completing_axes::<T>(value, &self.axes, unknown)?;
        check_read_value(&typed)?;
        Ok(Box::new(typed))
    }

    fn decode_list(&self, values: &mut dyn Iterator<Item = Value>) -> Option<Box<dyn TypedList>> {
        let mut list: Vec<T> = Vec::with_capacity(values.size_hint().0);
        for value in values {
            let typed = read_completing_axes::<T>(&value, &self.axes, &mut Vec::new()).ok()?;
            check_read_value(&typed).ok()?;
            list.push(typed);
        }
        list.shrink_to_fit();
        Some(Box::new(list))
    }

    fn is_marker(&self) -> bool {
        self.marker
    }

    fn check_partial(&self, value: &Value, unknown: &mut Vec<FieldPath>) -> Result<(), ValueError> {
        let value = normalize_declared(value, &self.axes, true).map_err(axis_error)?;
        check_partial_value::<T>(&value, unknown)
    }

    fn declared_axes(&self) -> &[DeclaredAxes] {
        &self.axes
    }

    fn probe(&self, path: &[PathSegment]) -> Option<Shape> {
        probe::<T>(path)
    }

    fn tag_of(&self, path: &[PathSegment]) -> Option<&'static str> {
        tag_of::<T>(path)
    }

    fn encode(&self, value: &TypedValue) -> Result<Value, EncodeError> {
        match Self::typed(value) {
            Some(typed) => serde_json::to_value(typed).map_err(EncodeError::Serialize),
            None => Err(EncodeError::WrongType),
        }
    }

    fn known_alike(&self, a: &TypedValue, b: &TypedValue) -> bool {
        let (Some(a), Some(b)) = (Self::typed(a), Self::typed(b)) else {
            return false;
        };
        thread_local! {
            static BYTES: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
        }
        BYTES.with(|cell| {
            let mut bytes = cell.take();
            bytes.clear();
            let alike = match crate::component::binary_codec::to_extend(a, bytes) {
                Ok(written) => {
                    let alike = crate::component::binary_codec::serializes_to(b, &written);
                    bytes = written;
                    alike
                }
                Err(_) => return false,
            };
            cell.set(bytes);
            alike
        })
    }

    fn layout(&self) -> Option<&Layout> {
        // Traced once: a type's layout never changes.
        let layout = self.layout.get_or_init(|| {
            // As a binary load reads it: references as numbers, shared values as keys.
            let refs = TraceRefs(crate::component::entity_ref::RefWire::Number);
            let (layout, _) = crate::component::entity_ref::with_mapper(refs, || {
                crate::component::shared::with_trace(crate::component::value_layout::trace::<T>)
            });
            layout
        });
        layout.as_ref()
    }

    #[cfg(feature = "schema")]
    fn json_layout(&self) -> Option<Layout> {
        // As an archetype file reads it: references as text.
        let refs = TraceRefs(crate::component::entity_ref::RefWire::Text);
        let (layout, _) = crate::component::entity_ref::with_mapper(refs, || {
            crate::component::value_layout::trace_with::<T>(true)
        });
        layout
    }
}

/// Deserializes `T` from an archetype's JSON value ([`ValueReader`]: markers read from `{}`,
/// errors typed), recording where an error is and which fields were ignored (serde skips
/// unknown fields unless the type denies them; we report them).
pub(super) fn deserialize_value<T: DeserializeOwned>(
    value: &Value,
    unknown: &mut Vec<FieldPath>,
) -> Result<T, ValueError> {
    // Most values are fine: decode without tracking where we are (tracking costs as much as
    // the decoding), and only decode again with tracking to say where an error is.
    let reading = Reading::default();
    let mut found = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| found.push(field_path_of(&path));
    if let Ok(typed) =
        serde_ignored::deserialize(ValueReader::new(value, &reading, false), &mut record)
    {
        unknown.append(&mut found);
        return Ok(typed);
    }
    // A full read stands in for nothing, so it never stops at a filler.
    tracked::<T>(value, false, unknown)
        .map_err(|error| error.unwrap_or_else(|| ValueError::invalid(FieldPath::root(), "")))
}

/// Reads `T` from `value` with the path tracked, for the error's place. `Err(None)`: a partial
/// read stopped at a filler (nothing the file wrote is wrong).
fn tracked<T: DeserializeOwned>(
    value: &Value,
    partial: bool,
    unknown: &mut Vec<FieldPath>,
) -> Result<T, Option<ValueError>> {
    let reading = Reading::default();
    let mut record = |path: serde_ignored::Path<'_>| unknown.push(field_path_of(&path));
    let reader = ValueReader::new(value, &reading, partial);
    let ignored = serde_ignored::Deserializer::new(reader, &mut record);
    serde_path_to_error::deserialize(ignored).map_err(|error| {
        if reading.stopped_at_filler() {
            return None;
        }
        let path = convert_path(error.path());
        let inner = error.into_inner();
        Some(ValueError {
            path,
            message: inner.message,
            kind: inner.kind,
        })
    })
}

/// Checks a value that may be partial (an abstract archetype's, or one whose parent is broken)
/// as far as it goes: every field it has must have the right type and a name the type knows;
/// missing fields are not errors. `Ok` when nothing wrong was found.
pub(super) fn check_partial_value<T: DeserializeOwned + Serialize>(
    value: &Value,
    unknown: &mut Vec<FieldPath>,
) -> Result<(), ValueError> {
    let reading = Reading::default();
    let mut found = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| found.push(field_path_of(&path));
    let result: Result<T, _> =
        serde_ignored::deserialize(ValueReader::new(value, &reading, true), &mut record);
    unknown.append(&mut found);
    match result {
        Ok(typed) => check_read_value(&typed),
        Err(_) if reading.stopped_at_filler() => Ok(()),
        Err(error) if error.kind == ReadErrorKind::MissingField => Ok(()),
        // Again with the path tracked, to say where (unknown fields were recorded above).
        Err(_) => match tracked::<T>(value, true, &mut Vec::new()) {
            Err(Some(error)) if error.kind != ReadErrorKind::MissingField => Err(error),
            _ => Ok(()),
        },
    }
}

fn check_read_value<T: Serialize>(typed: &T) -> Result<(), ValueError> {
    crate::component::value_check::check_read(typed)
        .map_err(|error| ValueError::invalid(error.path, error.message))
}

/// serde_path_to_error's path as ours.
pub(super) fn convert_path(path: &serde_path_to_error::Path) -> FieldPath {
    FieldPath(
        path.iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => Some(PathSegment::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(PathSegment::Key(key.clone())),
                serde_path_to_error::Segment::Enum { variant } => {
                    Some(PathSegment::Key(variant.clone()))
                }
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect(),
    )
}

/// serde_ignored's path of a skipped field as ours.
pub(super) fn field_path_of(path: &serde_ignored::Path<'_>) -> FieldPath {
    let mut segments = Vec::new();
    ignored_path(path, &mut segments);
    FieldPath(segments)
}

fn ignored_path(path: &serde_ignored::Path<'_>, out: &mut Vec<PathSegment>) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            ignored_path(parent, out);
            out.push(PathSegment::Index(*index));
        }
        Path::Map { parent, key } => {
            ignored_path(parent, out);
            out.push(PathSegment::Key(key.clone()));
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_path(parent, out),
    }
}

/// The entity mapper of a layout trace: references are numbers, read as a stand-in entity.
struct TraceRefs(crate::component::entity_ref::RefWire);

impl crate::component::entity_ref::EntityMapper for TraceRefs {
    fn wire(&self) -> crate::component::entity_ref::RefWire {
        self.0
    }
    fn write(&mut self, _entity: Entity) -> Result<crate::component::entity_ref::RefOut, MapError> {
        Err(MapError::NotWritten(ReadOnly::Tracing))
    }
    fn read(
        &mut self,
        _reference: crate::component::entity_ref::RefIn<'_>,
    ) -> Result<Entity, MapError> {
        Ok(Entity::DANGLING)
    }
}

#[cfg(test)]
mod tests {
    use crate::component::{ComponentRegistry, TypedValue};

    #[derive(Clone, serde::Serialize, serde::Deserialize)]
    struct Health {
        max: f32,
        tags: Vec<String>,
    }

    fn health(max: f32, tag: &str) -> TypedValue {
        Box::new(Health {
            max,
            tags: vec![tag.to_string()],
        })
    }

    #[test]
    fn values_are_known_alike_only_when_they_serialize_alike() {
        let mut registry = ComponentRegistry::new();
        let id = registry.register::<Health>().unwrap();
        let ops = registry.ops(id);
        let alike = ops.known_alike(&health(10.0, "orc"), &health(10.0, "orc"));
        // Without the binary feature nothing is known alike: values are compared as JSON.
        assert_eq!(alike, cfg!(feature = "binary"));
        assert!(!ops.known_alike(&health(10.0, "orc"), &health(12.0, "orc")));
        assert!(!ops.known_alike(&health(10.0, "orc"), &health(10.0, "orcs")));
    }
}
