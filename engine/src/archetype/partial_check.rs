//! Archetypes that cannot be checked in full: what is checked of them anyway, and the note
//! that says why the rest was not.
//!
//! An archetype whose parent (or child archetype) has errors cannot be resolved, so its merged
//! values cannot be checked. What its own file writes still can be, as partial values
//! ([`check_partial`](crate::archetype::compiled::check_partial)): a designer fixing errors
//! sees every independent problem at once, and a note on each archetype whose check had to
//! stop short, so nothing is hidden. Pure: no files, no world.

use std::sync::Arc;

use crate::archetype::file::{keys, EntitySpec};
use crate::archetype::resolver::{ResolvedEntity, MAX_ARCHETYPE_DEPTH};
use crate::diagnostic::{quoted, Diagnostic, DiagnosticCode, Severity};
use crate::json::merge_patch;
use crate::json::FieldPath;

/// The entity as its own file writes it, nothing inherited: each component value as written
/// (with `null` members dropped), children as their entries write them. Components the file
/// removes (`null`) and removed children are left out.
pub(super) fn own_values(spec: &EntitySpec) -> ResolvedEntity {
    let components = spec
        .components
        .iter()
        .filter(|(_, written)| !written.value.is_null())
        .map(|(name, written)| (name.clone(), merge_patch::merged(None, &written.value)))
        .collect();
    let children = spec
        .children
        .iter()
        .filter_map(|(name, entry)| Some((Arc::from(name.as_str()), own_values(entry.as_ref()?))))
        .collect();
    ResolvedEntity {
        source: spec.archetype.as_deref().map(Arc::from),
        components,
        children,
        formerly: spec
            .formerly
            .iter()
            .map(|f| Arc::from(f.as_str()))
            .collect(),
    }
}

/// The note on an archetype that could not be checked in full because `dependency` (a parent,
/// or a child's archetype) has errors or depends on one that has: `broken_through` gives, for
/// an archetype held back by a dependency, that dependency, so the note names the whole chain
/// down to the archetype with errors. Place it with [`where_named`].
pub(super) fn not_fully_checked(
    dependency: &str,
    broken_through: impl Fn(&str) -> Option<String>,
) -> Diagnostic {
    // The archetype with errors at the end of the chain (a chain is at most as long as the
    // depth bound allows; the bound also stops a cycle, which has its own error).
    let mut root = dependency.to_string();
    let mut between = 0;
    while let Some(next) = broken_through(&root) {
        if between >= MAX_ARCHETYPE_DEPTH {
            break;
        }
        root = next;
        between += 1;
    }
    let direct = quoted(dependency);
    let chain = match between {
        0 => direct,
        1 => format!("{direct}, which depends on {}", quoted(&root)),
        n => format!(
            "{direct}, which depends (through {} other archetype{}) on {}",
            n - 1,
            if n == 2 { "" } else { "s" },
            quoted(&root)
        ),
    };
    let message = format!(
        "not fully checked: it depends on {chain}, which has errors; its own values were checked as far as they go"
    );
    Diagnostic::error(DiagnosticCode::BrokenDependency, message).with_severity(Severity::Note)
}

/// Where `spec` names `dependency`: an `extends` entry, or a child's `archetype` (searched
/// depth first); the top of the file if it names it nowhere.
pub(super) fn where_named(extends: &[String], spec: &EntitySpec, dependency: &str) -> FieldPath {
    if let Some(i) = extends.iter().position(|parent| parent == dependency) {
        return FieldPath::root().key(keys::EXTENDS).index(i);
    }
    in_children(spec, &FieldPath::root(), dependency).unwrap_or_else(FieldPath::root)
}

fn in_children(spec: &EntitySpec, path: &FieldPath, dependency: &str) -> Option<FieldPath> {
    spec.children.iter().find_map(|(name, entry)| {
        let entry = entry.as_ref()?;
        let entry_path = path.key(keys::CHILDREN).key(name);
        if entry.archetype.as_deref() == Some(dependency) {
            return Some(entry_path.key(keys::ARCHETYPE));
        }
        in_children(entry, &entry_path, dependency)
    })
}
