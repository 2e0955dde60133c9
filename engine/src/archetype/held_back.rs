//! [`HeldBack`]: an archetype a reload touched that keeps its last good version, and why.

use std::fmt;

use crate::diagnostic::DiagnosticCode;

/// An archetype that a reload touched but that keeps its last good version, with the reason.
///
/// Displays as the hot reload log says it:
/// ``kept the last good version of `enemies/goblin_archer`: it depends on `enemies/goblin`, which has errors``.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeldBack {
    /// The archetype held back, e.g. `enemies/goblin_archer`.
    pub archetype: String,
    /// Why it keeps its last good version.
    pub reason: HeldBackReason,
}

/// Why an archetype keeps its last good version through a reload. More reasons may come: a
/// `match` needs a `_` arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeldBackReason {
    /// It depends (through `extends` or a child) on an archetype that has errors.
    BrokenDependency {
        /// The archetype with errors, e.g. `enemies/goblin`.
        dependency: String,
    },
}

impl HeldBack {
    /// The archetype `archetype` keeps its last good version because it depends on
    /// `dependency`, which has errors.
    pub(crate) fn broken_dependency(
        archetype: impl Into<String>,
        dependency: impl Into<String>,
    ) -> Self {
        HeldBack {
            archetype: archetype.into(),
            reason: HeldBackReason::BrokenDependency {
                dependency: dependency.into(),
            },
        }
    }
}

impl HeldBackReason {
    /// The diagnostic code of the problem that holds the archetype back
    /// ([`DiagnosticCode::BrokenDependency`] for a broken dependency).
    pub fn code(&self) -> DiagnosticCode {
        match self {
            HeldBackReason::BrokenDependency { .. } => DiagnosticCode::BrokenDependency,
        }
    }
}

impl fmt::Display for HeldBackReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeldBackReason::BrokenDependency { dependency } => {
                write!(f, "it depends on `{dependency}`, which has errors")
            }
        }
    }
}

impl fmt::Display for HeldBack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kept the last good version of `{}`: {}",
            self.archetype, self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_back_archetype_says_what_it_keeps_and_why() {
        let held = HeldBack::broken_dependency("enemies/goblin_archer", "enemies/goblin");
        assert_eq!(held.reason.code(), DiagnosticCode::BrokenDependency);
        assert_eq!(
            held.to_string(),
            "kept the last good version of `enemies/goblin_archer`: it depends on `enemies/goblin`, which has errors"
        );
    }
}
