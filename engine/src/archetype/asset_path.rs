//! [`AssetPath`]: a component field naming a file under the assets root, checked when read.

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::archetype::reference_context::{RefFailure, ReferenceContext};
use crate::diagnostic::{quoted, DiagnosticCode};

/// What kind of file an [`AssetPath`] names: the extensions it may have.
///
/// # Example
/// ```
/// use archetype_engine::{AssetKind, AssetPath};
///
/// /// A sprite: a PNG image.
/// struct Image;
/// impl AssetKind for Image {
///     const EXTENSIONS: &'static [&'static str] = &["png"];
/// }
///
/// #[derive(Clone, serde::Serialize, serde::Deserialize)]
/// struct Sprite {
///     image: AssetPath<Image>,
/// }
/// ```
pub trait AssetKind: 'static {
    /// The extensions (without the dot) the file may have; empty for any.
    const EXTENSIONS: &'static [&'static str];
}

/// Any file, whatever its extension.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AnyAsset;

impl AssetKind for AnyAsset {
    const EXTENSIONS: &'static [&'static str] = &[];
}

/// A file under the assets root (a sprite, a sound), held in a component and checked when the
/// value is read.
///
/// Written as the file's path relative to the assets root, with `/` separators
/// (`"sprites/goblin.png"`). Read by the library (archetype files, spawn-time overrides,
/// scenes) with an assets root set ([`LoadOptions::assets_root`](crate::LoadOptions)), a file
/// that does not exist there is an error placed at the field, with "did you mean"
/// (`invalid-asset`); so is an extension `K` does not allow, and, with or without a root, a
/// path that leaves the root (`..`, an absolute path, `\` separators).
#[derive(Serialize)]
#[serde(transparent)]
pub struct AssetPath<K: AssetKind = AnyAsset> {
    path: Arc<str>,
    #[serde(skip)]
    kind: PhantomData<fn() -> K>,
}

impl<K: AssetKind> AssetPath<K> {
    /// A path, not checked.
    pub fn new(path: impl Into<Arc<str>>) -> Self {
        AssetPath {
            path: path.into(),
            kind: PhantomData,
        }
    }

    /// The path relative to the assets root.
    pub fn as_str(&self) -> &str {
        &self.path
    }

    /// The file under `root` (the assets root).
    pub fn under(&self, root: impl AsRef<Path>) -> PathBuf {
        let mut file = root.as_ref().to_path_buf();
        file.extend(self.path.split('/'));
        file
    }
}

impl<K: AssetKind> Clone for AssetPath<K> {
    fn clone(&self) -> Self {
        AssetPath::new(self.path.clone())
    }
}

impl<K: AssetKind> PartialEq for AssetPath<K> {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl<K: AssetKind> Eq for AssetPath<K> {}

impl<K: AssetKind> std::hash::Hash for AssetPath<K> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.hash(state);
    }
}

impl<K: AssetKind> fmt::Debug for AssetPath<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AssetPath({:?})", self.path)
    }
}

impl<'de, K: AssetKind> Deserialize<'de> for AssetPath<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PathVisitor<K>(PhantomData<fn() -> K>);
        impl<K: AssetKind> Visitor<'_> for PathVisitor<K> {
            type Value = AssetPath<K>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an asset path")
            }
            fn visit_str<E: de::Error>(self, path: &str) -> Result<AssetPath<K>, E> {
                read(path, K::EXTENSIONS)
                    .map(AssetPath::new)
                    .map_err(|failure| E::custom(failure.full_message()))
            }
        }
        deserializer.deserialize_str(PathVisitor(PhantomData))
    }
}

/// Checks `path`: its form always, and against the installed context (existence, extension).
fn read(path: &str, extensions: &[&str]) -> Result<String, RefFailure> {
    let context = ReferenceContext::current();
    if let Some(failure) = form_problem(path) {
        return Err(match &context {
            Some(context) => context.refuse(failure),
            None => failure,
        });
    }
    if let Some(context) = &context {
        context.asset(path, extensions)?;
    }
    Ok(path.to_string())
}

/// Why `path` cannot name a file under the root, if it cannot.
fn form_problem(path: &str) -> Option<RefFailure> {
    let fixed = path.replace('\\', "/");
    let leaves = fixed.starts_with('/')
        || fixed.split('/').any(|segment| segment == "..")
        || fixed.chars().nth(1) == Some(':');
    let message = if path.is_empty() {
        "asset path is empty".to_string()
    } else if leaves {
        format!(
            "asset path {} leaves the assets root; write it relative to the root",
            quoted(path)
        )
    } else if path.contains('\\') || path.split('/').any(str::is_empty) {
        format!("asset path {} must use single `/` separators", quoted(path))
    } else {
        return None;
    };
    let suggestion = (fixed != path && !leaves).then(|| fixed.clone());
    Some(RefFailure {
        code: DiagnosticCode::InvalidAsset,
        message,
        suggestion,
    })
}

#[cfg(feature = "schema")]
impl<K: AssetKind> schemars::JsonSchema for AssetPath<K> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AssetPath".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = schemars::json_schema!({
            "type": "string",
            "description": "A file under the assets root, relative to it, with `/` separators (`sprites/goblin.png`)."
        });
        if !K::EXTENSIONS.is_empty() {
            let alternatives: Vec<String> = K::EXTENSIONS.iter().map(|e| regex_escape(e)).collect();
            schema.insert(
                "pattern".into(),
                format!("\\.({})$", alternatives.join("|")).into(),
            );
        }
        schema
    }
}

#[cfg(feature = "schema")]
fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|ch| match ch.is_ascii_alphanumeric() {
            true => vec![ch],
            false => vec!['\\', ch],
        })
        .collect()
}
