//! Cooked libraries: the resolved library of a shipped game in one binary file, so a game
//! starts without reading, parsing or resolving its JSON.
//!
//! ```text
//! "ARCHCOOK"  format version (u32 LE)  body length (u64 LE)  body (postcard)  CRC-32 (u32 LE)
//! ```
//!
//! The body ([`Body`]) lists, by name, every archetype in effect: its parents, depth, the hash of its resolved tree and the tree itself as JSON (read only
//! when something reads it: tools, spawns with overrides, saves), and for a concrete
//! archetype whose values are all plain (no `#` references, no per-spawn variation) each
//! entity's values, by the component's index in the component table: in postcard, or as JSON
//! for a type without a binary layout (one that inspects its input itself). That table holds
//! each component's name and binary layout ([`Layout`](crate::component::Layout))
//! as the cook saw it: a load compares it with the registry's, and refuses a cook made for
//! another layout rather than misread it (JSON values need no layout: a type that changed reads
//! them as it reads an archetype file, or the load fails naming the archetype). Other concrete archetypes are compiled from their
//! tree at load, as a JSON load compiles them.
//!
//! Everything is sorted (archetypes and components by name, renames by former name), so the
//! same library cooks to the same bytes.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::component::{crc32, from_bytes, to_allocvec};

/// The first bytes of a cooked library.
const MAGIC: &[u8; 8] = b"ARCHCOOK";

/// The version of the cooked format this engine writes and reads; a cook of another version is
/// refused (cook again: cooks are build products, not saves).
pub const COOK_FORMAT_VERSION: u32 = 1;

/// Magic, version and body length.
const HEADER_BYTES: usize = 8 + 4 + 8;

/// What a cooked library holds.
#[derive(Serialize, Deserialize)]
pub(super) struct Body<'a> {
    /// The components values are stored for, sorted by name.
    #[serde(borrow)]
    pub components: Vec<CookedComponent<'a>>,
    /// Every archetype in effect, sorted by name.
    #[serde(borrow)]
    pub archetypes: Vec<CookedArchetype<'a>>,
    /// Former names and the current name each stands for, sorted.
    #[serde(borrow)]
    pub renames: Vec<(&'a str, &'a str)>,
}

/// A component whose values the cook stores, and the layout they were stored in.
#[derive(Serialize, Deserialize)]
pub(super) struct CookedComponent<'a> {
    pub name: &'a str,
    /// Its layout, postcard-encoded as the registry encodes it; `None` for a type that has
    /// none (it inspects its input itself): its values are stored as JSON.
    #[serde(borrow)]
    pub layout: Option<Bytes<'a>>,
    /// Its top-level fields, each with its layout written out, so a load that finds the
    /// layout changed can say how without reading the cook's layout.
    pub fields: Vec<(String, String)>,
}

/// One archetype in effect.
#[derive(Serialize, Deserialize)]
pub(super) struct CookedArchetype<'a> {
    /// Its name (its file is the name's, under the root the cook is loaded with).
    pub name: &'a str,
    pub is_abstract: bool,
    #[serde(borrow)]
    pub extends: Vec<&'a str>,
    pub depth: u32,
    /// The hash of its resolved tree (so a reload from the files compares without reading it).
    pub hash: u64,
    /// Its resolved tree, as JSON ([`write_tree`]).
    pub tree: &'a str,
    /// Its entities' values, for a concrete archetype whose values are all plain.
    #[serde(borrow)]
    pub nodes: Option<Vec<CookedNode<'a>>>,
}

/// One entity of a concrete archetype, in node order.
#[derive(Serialize, Deserialize)]
pub(super) struct CookedNode<'a> {
    /// `""` for the root, `"turret/barrel"` for a grandchild.
    pub path: &'a str,
    pub parent: Option<u32>,
    /// The node `#` references are relative to.
    pub base: u32,
    /// Each component (its index in [`Body::components`]) with its value: in postcard when
    /// the component has a layout, else as JSON.
    #[serde(borrow)]
    pub values: Vec<(u32, Bytes<'a>)>,
}

/// Bytes written as postcard writes a byte string, read without copying.
#[derive(Clone, Copy)]
pub(super) struct Bytes<'a>(pub &'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Bytes<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'de [u8]>::deserialize(deserializer).map(Bytes)
    }
}

/// Why a library could not be cooked, or a cooked library could not be loaded.
#[derive(Debug)]
pub struct CookError {
    file: Option<PathBuf>,
    kind: CookErrorKind,
}

/// What kind of problem a [`CookError`] is.
#[derive(Debug)]
#[non_exhaustive]
pub enum CookErrorKind {
    /// The library has errors: a cook is made from a library without any, so a shipped game
    /// has every archetype its files describe.
    LibraryHasErrors {
        /// How many.
        errors: usize,
    },
    /// The file cannot be read (or written), or is over [`Limits::max_cook_bytes`](crate::Limits::max_cook_bytes).
    Io(std::io::Error),
    /// The bytes are not a cooked library (they do not start with `ARCHCOOK`).
    NotCooked,
    /// A cook of another format version.
    Version {
        /// The version the file has.
        found: u32,
    },
    /// The bytes end early, or their checksum does not match: the file is damaged.
    Damaged {
        /// What does not hold.
        problem: String,
    },
    /// The cook names a component the registry does not have.
    UnknownComponent {
        /// The component.
        component: String,
    },
    /// A component's layout (its fields and their types) is not what it was when the library
    /// was cooked: its values would be misread.
    LayoutChanged {
        /// The component.
        component: String,
        /// What differs: `field `armor` added`, `field `hp` is now a f32`.
        change: String,
    },
    /// An archetype of the cook does not build with the components as they are now (a value no
    /// longer reads).
    Archetype {
        /// The archetype.
        archetype: String,
        /// Why.
        message: String,
    },
}

impl CookError {
    pub(super) fn new(kind: CookErrorKind) -> CookError {
        CookError { file: None, kind }
    }

    /// The error, said of the file `file`.
    pub(super) fn in_file(mut self, file: PathBuf) -> CookError {
        self.file = Some(file);
        self
    }

    /// The cooked library's file, when the error is about one.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &CookErrorKind {
        &self.kind
    }
}

impl fmt::Display for CookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        match &self.kind {
            CookErrorKind::LibraryHasErrors { errors } => write!(
                f,
                "the library has {errors} error{}; fix {} before cooking",
                if *errors == 1 { "" } else { "s" },
                if *errors == 1 { "it" } else { "them" }
            ),
            CookErrorKind::Io(error) => write!(f, "{error}"),
            CookErrorKind::NotCooked => {
                f.write_str("not a cooked archetype library (it does not start with `ARCHCOOK`)")
            }
            CookErrorKind::Version { found } => write!(
                f,
                "cooked library format {found}, but this engine reads format {COOK_FORMAT_VERSION}; cook the library again"
            ),
            CookErrorKind::Damaged { problem } => {
                write!(f, "the cooked library is damaged ({problem}); cook the library again")
            }
            CookErrorKind::UnknownComponent { component } => write!(
                f,
                "the cooked library uses component `{component}`, which is not registered; register it, or cook the library again"
            ),
            CookErrorKind::LayoutChanged { component, change } => write!(
                f,
                "component `{component}` changed since the library was cooked ({change}): its cooked values would be misread; cook the library again"
            ),
            CookErrorKind::Archetype { archetype, message } => write!(
                f,
                "archetype `{archetype}` does not build with the components as they are now: {message}; cook the library again"
            ),
        }
    }
}

impl std::error::Error for CookError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CookErrorKind::Io(error) => Some(error),
            _ => None,
        }
    }
}

/// The file of a cooked `body`: header, body, checksum.
pub(super) fn write_cook(body: &Body<'_>) -> Result<Vec<u8>, CookError> {
    let encoded = to_allocvec(body).map_err(|error| {
        CookError::new(CookErrorKind::Io(std::io::Error::other(error.to_string())))
    })?;
    let mut out = Vec::with_capacity(HEADER_BYTES + encoded.len() + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&COOK_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(encoded.len() as u64).to_le_bytes());
    out.extend_from_slice(&encoded);
    let checksum = crc32(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    Ok(out)
}

/// The body of the cooked library `bytes`, its header and checksum checked.
pub(super) fn read_cook(bytes: &[u8]) -> Result<Body<'_>, CookError> {
    let damaged = |problem: &str| {
        CookError::new(CookErrorKind::Damaged {
            problem: problem.to_string(),
        })
    };
    if !bytes.starts_with(MAGIC) {
        return Err(CookError::new(CookErrorKind::NotCooked));
    }
    let (header, rest) = bytes
        .split_at_checked(HEADER_BYTES)
        .ok_or_else(|| damaged("it ends inside its header"))?;
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if version != COOK_FORMAT_VERSION {
        return Err(CookError::new(CookErrorKind::Version { found: version }));
    }
    let mut length = [0; 8];
    length.copy_from_slice(&header[12..20]);
    let length = usize::try_from(u64::from_le_bytes(length)).unwrap_or(usize::MAX);
    if rest.len() != length.saturating_add(4) || length > rest.len() {
        return Err(damaged(&format!(
            "its header says {length} bytes of content, and {} follow",
            rest.len().saturating_sub(4)
        )));
    }
    let (body, checksum) = rest.split_at(length);
    let stored = u32::from_le_bytes([checksum[0], checksum[1], checksum[2], checksum[3]]);
    if crc32(&bytes[..HEADER_BYTES + length]) != stored {
        return Err(damaged("its checksum does not match its content"));
    }
    from_bytes(body).map_err(|error| damaged(&format!("its content does not read: {error}")))
}

/// A resolved tree as the cook stores it: short keys, empty parts left out.
#[derive(Serialize, Deserialize)]
struct TreeJson {
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    source: Option<std::sync::Arc<str>>,
    #[serde(rename = "c", default)]
    components: std::collections::BTreeMap<std::sync::Arc<str>, serde_json::Value>,
    #[serde(
        rename = "k",
        default,
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    children: std::collections::BTreeMap<std::sync::Arc<str>, TreeJson>,
    #[serde(rename = "f", default, skip_serializing_if = "Vec::is_empty")]
    formerly: Vec<std::sync::Arc<str>>,
}

impl TreeJson {
    fn of(tree: &crate::archetype::ResolvedEntity) -> TreeJson {
        TreeJson {
            source: tree.source.clone(),
            components: tree.components.clone(),
            children: (tree.children.iter())
                .map(|(name, child)| (name.clone(), TreeJson::of(child)))
                .collect(),
            formerly: tree.formerly.clone(),
        }
    }

    fn into_tree(self) -> crate::archetype::ResolvedEntity {
        crate::archetype::ResolvedEntity {
            source: self.source,
            components: self.components,
            children: (self.children.into_iter())
                .map(|(name, child)| (name, child.into_tree()))
                .collect(),
            formerly: self.formerly,
        }
    }
}

/// `tree` as the cook stores it.
pub(super) fn write_tree(tree: &crate::archetype::ResolvedEntity) -> String {
    // Strings and maps of JSON values always serialize.
    serde_json::to_string(&TreeJson::of(tree)).unwrap_or_default()
}

/// A tree [`write_tree`] wrote. Nesting is bounded by serde_json's recursion limit.
pub(crate) fn read_tree(
    json: &[u8],
) -> Result<crate::archetype::ResolvedEntity, serde_json::Error> {
    serde_json::from_slice::<TreeJson>(json).map(TreeJson::into_tree)
}
