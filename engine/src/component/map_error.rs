//! [`MapError`]: why an entity mapper could not turn a written reference into an entity, or
//! an entity into its written form; and [`RefPathError`], why a `#` reference is malformed.
//! Each mapper reports one of these; the message serde carries is its `Display`.

use std::fmt;

use hecs::Entity;

use crate::component::stable_id::{ParseStableIdError, StableId};

/// The operation a mapper serves, where references are only read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadOnly {
    /// Checking or spawning archetype values.
    Archetype,
    /// Loading a scene.
    Loading,
    /// Tracing a type's layout.
    Tracing,
}

/// Why a reference could not be mapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MapError {
    /// An entity was to be written where references are only read.
    NotWritten(ReadOnly),
    /// A reference was to be read where references are only written.
    NotRead,
    /// A reference was to be read while saving a scene.
    NotReadWhileSaving,
    /// A number where an archetype file needs `#` or `#child`.
    NumberInArchetype(u64),
    /// A malformed `#` reference.
    Path(RefPathError),
    /// A `#` reference to no child of the archetype being compiled.
    NoChild(String),
    /// A `#` reference to no child of a live instance being patched.
    NoInstanceChild(String),
    /// A `#` reference to no entity of an archetype instance a scene places.
    NoInstanceEntity(String),
    /// A `#` reference in a scene value that is no archetype instance's.
    ArchetypeRelative(String),
    /// Raw entity bits that name no entity.
    InvalidBits(u64),
    /// A text reference read with no mapper installed.
    TextOutsideSpawn(String),
    /// A reference of the wrong form for the scene's encoding.
    NotAStableId,
    /// A text reference that is not 16 hex digits.
    BadStableId(ParseStableIdError),
    /// A stable ID no entity of the scene has.
    NotInScene(StableId),
    /// More referenced IDs than handles reserved for them (the caller reserves more).
    NoHandleReserved,
    /// An entity of no prepared scene.
    OutsideScene,
    /// An index that names no entity of the prepared scene.
    NotPrepared,
    /// An entity the scene being saved does not hold.
    NotSaved(Entity),
    /// An entity the scene being written does not hold.
    NotInWrittenScene(Entity),
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::NotWritten(ReadOnly::Archetype) => {
                f.write_str("entity references cannot be written here")
            }
            MapError::NotWritten(ReadOnly::Loading) => {
                f.write_str("references are not written while loading")
            }
            MapError::NotWritten(ReadOnly::Tracing) => {
                f.write_str("references are not written while tracing")
            }
            MapError::NotRead => f.write_str("references are not read here"),
            MapError::NotReadWhileSaving => f.write_str("references are not read while saving"),
            MapError::NumberInArchetype(n) => {
                write!(f, "entity reference {n} must be written as `#` or `#child`")
            }
            MapError::Path(error) => error.fmt(f),
            MapError::NoChild(text) => {
                write!(f, "entity reference `{text}` names no child of this archetype")
            }
            MapError::NoInstanceChild(text) => {
                write!(f, "entity reference `{text}` names no child of this instance")
            }
            MapError::NoInstanceEntity(text) => write!(
                f,
                "entity reference `{text}` names no entity of this archetype instance in the scene"
            ),
            MapError::ArchetypeRelative(text) => write!(
                f,
                "`{text}` is an archetype-relative reference; scenes refer to entities by stable ID"
            ),
            MapError::InvalidBits(bits) => write!(f, "{bits} is not a valid entity"),
            MapError::TextOutsideSpawn(text) => write!(
                f,
                "entity reference `{text}` can only be read while spawning an archetype or loading a scene"
            ),
            MapError::NotAStableId => f.write_str("not a stable ID"),
            MapError::BadStableId(error) => error.fmt(f),
            MapError::NotInScene(id) => {
                write!(f, "refers to entity {id}, which is not in this scene")
            }
            MapError::NoHandleReserved => f.write_str("no handle reserved"),
            MapError::OutsideScene => f.write_str("refers to an entity outside the scene"),
            MapError::NotPrepared => f.write_str("refers to no entity of the prepared scene"),
            MapError::NotSaved(entity) => {
                write!(f, "refers to entity {entity:?}, which is not being saved")
            }
            MapError::NotInWrittenScene(entity) => write!(f, "entity {entity:?} is not in this scene"),
        }
    }
}

impl From<RefPathError> for MapError {
    fn from(error: RefPathError) -> Self {
        MapError::Path(error)
    }
}

impl From<ParseStableIdError> for MapError {
    fn from(error: ParseStableIdError) -> Self {
        MapError::BadStableId(error)
    }
}

/// Why a `#` reference (`#`, `#child/grandchild`, `#../sibling`) is malformed; each holds the
/// reference as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RefPathError {
    /// It does not start with `#`.
    NotAReference(String),
    /// Its `..` segments go above the root.
    AboveRoot(String),
    /// A segment is no valid local name.
    Invalid(String),
}

impl fmt::Display for RefPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefPathError::NotAReference(text) => write!(
                f,
                "`{text}` is not an entity reference; in archetype files write `#` for the archetype's root or `#child` (`#child/grandchild`) for one of its children"
            ),
            RefPathError::AboveRoot(text) => write!(f, "`{text}` goes above the archetype's root"),
            RefPathError::Invalid(text) => write!(f, "`{text}` is not a valid entity reference"),
        }
    }
}
