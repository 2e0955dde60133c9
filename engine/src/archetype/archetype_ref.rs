//! [`ArchetypeRef`]: a component field naming an archetype, checked when it is read.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::archetype::name::check_name;
use crate::archetype::reference_context::{RefFailure, ReferenceContext};
use crate::component::ArchetypeId;
use crate::diagnostic::DiagnosticCode;

/// The name of an archetype, held in a component (a spawner's archetype, a weapon's
/// projectile), checked when the value is read.
///
/// Written as the archetype's name (`"enemies/goblin"`). Read by the library (archetype files,
/// spawn-time overrides, scenes, hot reload), a name the library does not have is an error
/// placed at the field, with "did you mean" (`unknown-archetype`); an archetype holding one is
/// checked again when its target appears or disappears. The value keeps the target's
/// [`ArchetypeId`], so [`ArchetypeLibrary::spawn_ref`](crate::ArchetypeLibrary::spawn_ref)
/// spawns it without looking the name up. Read by anything else (`serde_json::from_str` in your
/// own code), only the form of the name is checked.
///
/// # Example
/// ```
/// use archetype_engine::ArchetypeRef;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// struct Spawner {
///     archetype: ArchetypeRef,
///     interval: f32,
/// }
///
/// let spawner: Spawner = serde_json::from_str(r#"{ "archetype": "enemies/goblin", "interval": 4 }"#).unwrap();
/// assert_eq!(spawner.archetype.name(), "enemies/goblin");
/// ```
#[derive(Clone)]
pub struct ArchetypeRef {
    name: Arc<str>,
    id: Option<ArchetypeId>,
}

impl ArchetypeRef {
    /// A reference to the archetype `name`, not checked (it is when spawned).
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        ArchetypeRef {
            name: name.into(),
            id: None,
        }
    }

    /// The archetype's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The archetype's ID in the library that read the value, if one did.
    pub fn id(&self) -> Option<ArchetypeId> {
        self.id
    }
}

/// Two references are equal when they name the same archetype.
impl PartialEq for ArchetypeRef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ArchetypeRef {}

impl std::hash::Hash for ArchetypeRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl fmt::Debug for ArchetypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArchetypeRef({:?})", self.name)
    }
}

impl fmt::Display for ArchetypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl Serialize for ArchetypeRef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for ArchetypeRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl Visitor<'_> for NameVisitor {
            type Value = ArchetypeRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an archetype name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ArchetypeRef, E> {
                read(name).map_err(|failure| E::custom(failure.full_message()))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// Checks `name` against the installed context (or only its form, without one).
fn read(name: &str) -> Result<ArchetypeRef, RefFailure> {
    let context = ReferenceContext::current();
    if let Err(problem) = check_name(name) {
        let failure = RefFailure {
            code: DiagnosticCode::InvalidName,
            message: problem.message,
            suggestion: problem.suggestion,
        };
        return Err(match &context {
            Some(context) => context.refuse(failure),
            None => failure,
        });
    }
    let id = match &context {
        Some(context) => Some(context.archetype(name)?),
        None => None,
    };
    Ok(ArchetypeRef {
        name: Arc::from(name),
        id,
    })
}

/// In archetype files an archetype name; `archetool schema` adds the names that exist as
/// suggestions.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for ArchetypeRef {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ArchetypeRef".into()
    }

    fn inline_schema() -> bool {
        false
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": crate::archetype::name::NAME_PATTERN,
            "description": "An archetype: the path of its file under the archetypes root, without `.json` (`enemies/goblin`)."
        })
    }
}
