//! [`ReloadReport`]: what a reload did, with what went wrong as typed values
//! ([`HeldBack`], [`Diagnostic`], [`PatchFailure`]).

use std::fmt;
use std::time::Duration;

use hecs::Entity;

use crate::archetype::HeldBack;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::json::FieldPath;

/// What a reload did: which archetypes changed, how many live entities were touched, and what
/// went wrong.
///
/// Read through its methods; it gains more as the engine does (so its fields are private).
/// Displays as the hot reload log says it: a summary line, then one line per held-back
/// archetype, problem and patch failure.
#[derive(Clone, Debug, Default)]
pub struct ReloadReport {
    pub(crate) changed: Vec<String>,
    pub(crate) entities_updated: usize,
    pub(crate) entities_spawned: usize,
    pub(crate) entities_despawned: usize,
    pub(crate) entities_orphaned: usize,
    pub(crate) held_back: Vec<HeldBack>,
    pub(crate) errors: Vec<Diagnostic>,
    pub(crate) patch_failures: Vec<PatchFailure>,
    pub(crate) elapsed: Duration,
}

impl ReloadReport {
    /// Whether the reload did nothing and found nothing wrong.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
            && self.held_back.is_empty()
            && self.errors.is_empty()
            && self.patch_failures.is_empty()
    }

    /// Archetypes whose content in effect changed (new, edited and deleted ones), by name.
    pub fn changed(&self) -> &[String] {
        &self.changed
    }

    /// Live entities that had at least one component written, inserted or removed.
    pub fn entities_updated(&self) -> usize {
        self.entities_updated
    }

    /// Child entities spawned because archetypes gained children.
    pub fn entities_spawned(&self) -> usize {
        self.entities_spawned
    }

    /// Child entities despawned because archetypes lost children.
    pub fn entities_despawned(&self) -> usize {
        self.entities_despawned
    }

    /// Live instances of archetypes whose file was deleted: they keep their components.
    pub fn entities_orphaned(&self) -> usize {
        self.entities_orphaned
    }

    /// Archetypes that were edited but keep their last good version, with the reason.
    pub fn held_back(&self) -> &[HeldBack] {
        &self.held_back
    }

    /// Problems in the files the reload touched (the last good versions stay in effect).
    pub fn errors(&self) -> &[Diagnostic] {
        &self.errors
    }

    /// Live components a patch could not be applied to (each is left as it was).
    pub fn patch_failures(&self) -> &[PatchFailure] {
        &self.patch_failures
    }

    /// Time spent reading files again and patching the world.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

impl fmt::Display for ReloadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reloaded {} archetype{}",
            self.changed.len(),
            if self.changed.len() == 1 { "" } else { "s" }
        )?;
        if !self.changed.is_empty() {
            write!(f, " ({})", self.changed.join(", "))?;
        }
        write!(
            f,
            ": {} entities updated, {} spawned, {} despawned, {} orphaned in {:.1} ms",
            self.entities_updated,
            self.entities_spawned,
            self.entities_despawned,
            self.entities_orphaned,
            self.elapsed.as_secs_f64() * 1000.0
        )?;
        for held in &self.held_back {
            write!(f, "\n{held}")?;
        }
        for error in &self.errors {
            write!(f, "\n{error}")?;
        }
        for failure in &self.patch_failures {
            write!(f, "\n{failure}")?;
        }
        Ok(())
    }
}

/// A live component a reload could not change: the archetype's edit did not give a valid
/// value for this entity's component (its own runtime value, patched, no longer deserializes,
/// say). The component is left as it was.
///
/// Displays as the hot reload log says it:
/// ``could not patch `Health` on entity 7v1 of `enemies/goblin`: max: invalid type: string "x", expected f32``.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PatchFailure {
    /// The live entity.
    pub entity: Entity,
    /// The archetype it is an instance of, e.g. `enemies/goblin`.
    pub archetype: String,
    /// The component, e.g. `Health`.
    pub component: String,
    /// What the reload tried to do to the component.
    pub action: PatchAction,
    /// What is wrong ([`DiagnosticCode::InvalidComponent`]): serde's message, with the
    /// archetype, the component and the field inside it ([`Diagnostic::field`]) when known.
    pub error: Diagnostic,
}

/// What a reload tried to do to a live component when it failed. More may come: a `match`
/// needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PatchAction {
    /// Change the fields the archetype's edit changed, keeping the others.
    Patch,
    /// Add a component the archetype gained.
    Add,
}

impl PatchFailure {
    /// A failure of `action` on `component` of `entity`, an instance of `archetype`: serde's
    /// `message` about the value at `field` (empty: the value itself).
    pub(crate) fn new(
        entity: Entity,
        archetype: &str,
        component: &str,
        action: PatchAction,
        field: FieldPath,
        message: &str,
    ) -> Self {
        let mut error = Diagnostic::error(DiagnosticCode::InvalidComponent, message)
            .with_archetype(archetype)
            .with_component(component);
        if !field.is_empty() {
            error = error.with_field(field);
        }
        PatchFailure {
            entity,
            archetype: archetype.to_string(),
            component: component.to_string(),
            action,
            error,
        }
    }
}

impl fmt::Display for PatchFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (entity, component) = (self.entity, &self.component);
        match self.action {
            PatchAction::Patch => {
                write!(
                    f,
                    "could not patch `{component}` on entity {entity:?} of `{}`: ",
                    self.archetype
                )?;
                if let Some(field) = &self.error.field {
                    write!(f, "{field}: ")?;
                }
            }
            PatchAction::Add => write!(f, "could not add `{component}` to entity {entity:?}: ")?,
        }
        f.write_str(&self.error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::PathSegment;

    #[test]
    fn patch_failures_say_what_could_not_be_done_to_which_entity() {
        let mut world = hecs::World::new();
        let entity = world.spawn(());
        let field = FieldPath(vec![PathSegment::Key("max".into())]);
        let failure = PatchFailure::new(
            entity,
            "enemies/goblin",
            "Health",
            PatchAction::Patch,
            field.clone(),
            "invalid type: string \"x\", expected f32",
        );
        assert_eq!(failure.error.code, DiagnosticCode::InvalidComponent);
        assert_eq!(failure.error.archetype.as_deref(), Some("enemies/goblin"));
        assert_eq!(failure.error.field, Some(field));
        assert_eq!(
            failure.to_string(),
            format!("could not patch `Health` on entity {entity:?} of `enemies/goblin`: max: invalid type: string \"x\", expected f32")
        );
        let added = PatchFailure::new(
            entity,
            "enemies/goblin",
            "Target",
            PatchAction::Add,
            FieldPath::default(),
            "no child `#bow`",
        );
        assert_eq!(added.error.field, None);
        assert_eq!(
            added.to_string(),
            format!("could not add `Target` to entity {entity:?}: no child `#bow`")
        );
    }
}
