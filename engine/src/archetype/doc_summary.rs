//! [`DocSummary`]: what the library keeps of an archetype file's parsed content between
//! rebuilds. The full document (every component value) is large and read only while the
//! archetype is being resolved again, or to place a problem; it is parsed again from the kept
//! text then ([`SourceFile::written_doc`](crate::archetype::source::SourceFile::written_doc)).
//! The summary answers what is asked all the time: whether the archetype is abstract, what it
//! builds on, and its former names.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::archetype::file::{ArchetypeDoc, EntitySpec};

/// The archetypes a file builds on: its parents (`extends`, in order), then the archetypes of
/// its children (each once, in the order first met, skipping parents already listed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Dependencies {
    /// The parents, then the children's archetypes not among them (shared with each rebuild's
    /// dependency graph).
    names: Arc<[String]>,
    /// How many of `names` are parents.
    extends: usize,
}

impl Dependencies {
    /// The dependencies `doc` names.
    pub fn of(doc: &ArchetypeDoc) -> Dependencies {
        /// The archetypes of `spec`'s children (and theirs), in order, repeats included.
        fn children<'d>(spec: &'d EntitySpec, out: &mut Vec<&'d String>) {
            for child in spec.children.values().flatten() {
                out.extend(&child.archetype);
                children(child, out);
            }
        }
        let mut names = doc.extends.clone();
        let mut found = Vec::new();
        children(&doc.root, &mut found);
        if !found.is_empty() {
            // Each once: found through a set, not a scan of the names so far each.
            let mut listed: FxHashSet<&str> = doc.extends.iter().map(String::as_str).collect();
            for archetype in found {
                if listed.insert(archetype) {
                    names.push(archetype.clone());
                }
            }
        }
        Dependencies {
            names: names.into(),
            extends: doc.extends.len(),
        }
    }

    /// Every archetype named: parents first, then children's.
    pub fn all(&self) -> &[String] {
        &self.names
    }

    /// [`all`](Self::all), shared.
    pub fn shared(&self) -> Arc<[String]> {
        self.names.clone()
    }

    /// The parents, in the order they are applied.
    pub fn extends(&self) -> &[String] {
        &self.names[..self.extends]
    }
}

/// What is kept of a parsed archetype file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DocSummary {
    /// Whether it can only be extended.
    pub is_abstract: bool,
    /// The names the archetype was formerly known by.
    pub formerly: Vec<String>,
    /// The archetypes it names, as written.
    pub written: Dependencies,
    /// The archetypes it names with old names replaced by current ones, when it writes any
    /// old name ([`Renames::map_doc`](crate::archetype::renames::Renames::map_doc)).
    pub mapped: Option<Dependencies>,
}

impl DocSummary {
    /// The summary of `doc` as written (no old names mapped yet).
    pub fn of(doc: &ArchetypeDoc) -> DocSummary {
        let mut formerly = doc.formerly.clone();
        formerly.shrink_to_fit();
        DocSummary {
            is_abstract: doc.is_abstract,
            formerly,
            written: Dependencies::of(doc),
            mapped: None,
        }
    }

    /// The archetypes it names, by their current names (what resolution reads).
    pub fn current(&self) -> &Dependencies {
        self.mapped.as_ref().unwrap_or(&self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(archetype: &str) -> Option<EntitySpec> {
        Some(EntitySpec {
            archetype: Some(archetype.to_string()),
            ..EntitySpec::default()
        })
    }

    #[test]
    fn dependencies_list_parents_then_new_child_archetypes() {
        let mut doc = ArchetypeDoc {
            extends: vec!["base".into(), "mixin".into()],
            ..ArchetypeDoc::default()
        };
        doc.root.children.insert("a".into(), child("mixin"));
        doc.root.children.insert("b".into(), child("turret"));
        doc.root.children.insert("c".into(), child("turret"));
        let deps = Dependencies::of(&doc);
        assert_eq!(deps.extends(), ["base", "mixin"]);
        assert_eq!(deps.all(), ["base", "mixin", "turret"]);
    }

    #[test]
    fn current_names_are_the_mapped_ones_when_there_are_any() {
        let doc = ArchetypeDoc {
            extends: vec!["old".into()],
            ..ArchetypeDoc::default()
        };
        let mut summary = DocSummary::of(&doc);
        assert_eq!(summary.current().extends(), ["old"]);
        let mapped = ArchetypeDoc {
            extends: vec!["new".into()],
            ..ArchetypeDoc::default()
        };
        summary.mapped = Some(Dependencies::of(&mapped));
        assert_eq!(summary.current().extends(), ["new"]);
        assert_eq!(summary.written.extends(), ["old"]);
    }
}
