//! [`SpawnError`]: why an archetype could not be spawned.

use crate::component::ValueError;
use crate::json::FieldPath;

/// Why [`ArchetypeLibrary::spawn`](crate::ArchetypeLibrary::spawn) (or one of its siblings)
/// failed. Nothing was spawned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No archetype has that name.
    #[error("unknown archetype `{name}`{}", help(suggestion))]
    UnknownArchetype {
        /// The name asked for.
        name: String,
        /// The closest existing name.
        suggestion: Option<String>,
    },
    /// The archetype is abstract.
    #[error("archetype `{name}` is abstract; spawn an archetype that extends it")]
    Abstract {
        /// The archetype.
        name: String,
    },
    /// The archetype has no version without errors to spawn.
    #[error("archetype `{name}` cannot be spawned: {reason}")]
    Unavailable {
        /// The archetype.
        name: String,
        /// Why, e.g. "its file has errors".
        reason: String,
    },
    /// The archetype's file was deleted.
    #[error("archetype `{name}` was deleted (its file is gone)")]
    Deleted {
        /// The archetype.
        name: String,
    },
    /// A spawn-time override was rejected.
    #[error("invalid overrides for `{name}`: {message}{}", help(suggestion))]
    InvalidOverride {
        /// The archetype.
        name: String,
        /// The component concerned, if any.
        component: Option<String>,
        /// The place inside the component.
        field: FieldPath,
        /// What is wrong.
        message: String,
        /// The closest valid name.
        suggestion: Option<String>,
    },
    /// More entities than one batch can hold (`u32::MAX`).
    #[error("cannot spawn {count} entities at once (at most {})", u32::MAX)]
    TooMany {
        /// The count asked for.
        count: usize,
    },
    /// A value that passed validation failed to build (a bug in a component's serde impl).
    #[error("archetype `{name}` failed to spawn: {message}")]
    Internal {
        /// The archetype.
        name: String,
        /// What went wrong.
        message: String,
    },
}

fn help(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(suggestion) => format!("; did you mean `{suggestion}`?"),
        None => String::new(),
    }
}

impl SpawnError {
    pub(super) fn internal(name: &str, error: ValueError) -> Self {
        SpawnError::Internal {
            name: name.to_string(),
            message: if error.path.is_empty() {
                error.message
            } else {
                format!("{}: {}", error.path, error.message)
            },
        }
    }
}
