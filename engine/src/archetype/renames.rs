//! Archetype renames: an archetype file lists the names it was formerly known by
//! (`"formerly": ["enemies/goblin"]`), and every other file, scene and tool that still names an
//! old name gets the archetype under its current one.
//!
//! - [`Renames::find`] reads the former names of every file into one map, former → current.
//!   A former name that is the name of a live archetype, or a former name of two archetypes,
//!   is an error in the file that lists it (`former-name-clash`) and stands for nothing.
//! - [`Renames::map_doc`] gives a file with its old names (in `extends` and children's
//!   `archetype`) replaced by current ones, which is what resolution reads, and a warning
//!   (`old-name`) at each old name.
//!
//! A child's former local names (`formerly` in a child entry) are for scenes saved before the
//! child was renamed: see [`ResolvedEntity::current_path`](crate::ResolvedEntity::current_path).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::archetype::file::{keys, ArchetypeDoc, DocProblem, EntitySpec};
use crate::archetype::source::SourceFile;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::json::FieldPath;

/// Former archetype names and what each is called now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Renames {
    current: FxHashMap<Arc<str>, Arc<str>>,
    /// The other way round: each current name with its former names, sorted.
    formers: FxHashMap<Arc<str>, Vec<Arc<str>>>,
}

/// The archetypes whose `formerly` lists one name, each with the name's place in the list: the
/// first found, and any more (a clash).
struct Claims<'a> {
    first: (&'a Arc<str>, usize),
    more: Vec<(&'a Arc<str>, usize)>,
}

/// How many of the other archetypes claiming a former name its clash error lists; the rest are
/// counted (so the errors of k claimants cost k times this much, not k × k).
const CLAIMANTS_LISTED: usize = 8;

impl Renames {
    /// The renames the files in `sources` declare, and per archetype the problems with its
    /// `formerly` list (names that clash). `listing` names every file of `sources` whose
    /// `formerly` lists a name (others may be among them): only they are read.
    pub fn find<'a>(
        sources: &'a FxHashMap<Arc<str>, SourceFile>,
        listing: impl IntoIterator<Item = &'a Arc<str>> + Clone,
    ) -> (Renames, FxHashMap<Arc<str>, Vec<DocProblem>>) {
        let summaries = || {
            (listing.clone().into_iter()).filter_map(|name| {
                let (name, source) = sources.get_key_value(name)?;
                Some((name, source.summary.as_deref()?))
            })
        };
        let listed: usize = summaries().map(|(_, summary)| summary.formerly.len()).sum();
        let mut claims: FxHashMap<&str, Claims<'_>> = FxHashMap::default();
        claims.reserve(listed);
        for (name, summary) in summaries() {
            for (index, former) in summary.formerly.iter().enumerate() {
                // Its own name stands for itself already: a file may list the name it has
                // before it is moved.
                if **name == **former {
                    continue;
                }
                match claims.get_mut(former.as_str()) {
                    Some(claims) => claims.more.push((name, index)),
                    None => {
                        let first = (name, index);
                        claims.insert(
                            former,
                            Claims {
                                first,
                                more: Vec::new(),
                            },
                        );
                    }
                }
            }
        }
        let mut renames = Renames::default();
        renames.current.reserve(claims.len());
        let mut problems: FxHashMap<Arc<str>, Vec<DocProblem>> = FxHashMap::default();
        for (former, claims) in claims {
            let live = sources.contains_key(former);
            if !live && claims.more.is_empty() {
                renames.insert(Arc::from(former), claims.first.0.clone());
                continue;
            }
            // By name, so each clash error lists the others in the same order.
            let mut claimants: Vec<(&Arc<str>, usize)> =
                std::iter::once(claims.first).chain(claims.more).collect();
            claimants.sort_unstable();
            for (at, &(name, index)) in claimants.iter().enumerate() {
                let message = match live {
                    true => format!(
                        "former name `{former}` is the name of a live archetype, so it cannot also stand for this one; remove it from `formerly`, or rename that archetype"
                    ),
                    false => format!(
                        "former name `{former}` is also a former name of {}: it cannot stand for both; keep it in one `formerly`",
                        other_claimants(&claimants, at)
                    ),
                };
                problems.entry(name.clone()).or_default().push(DocProblem {
                    path: FieldPath::root().key(keys::FORMERLY).index(index),
                    at_key: false,
                    diagnostic: Diagnostic::error(DiagnosticCode::FormerNameClash, message),
                });
            }
        }
        for formers in renames.formers.values_mut() {
            formers.sort_unstable();
        }
        (renames, problems)
    }

    #[cfg(feature = "binary")]
    /// The renames `pairs` (former, current) say, as a cooked library lists them.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Arc<str>, Arc<str>)>) -> Renames {
        let mut renames = Renames::default();
        for (former, current) in pairs {
            renames.insert(former, current);
        }
        for formers in renames.formers.values_mut() {
            formers.sort_unstable();
        }
        renames
    }

    /// Records that `former` stands for `current`.
    fn insert(&mut self, former: Arc<str>, current: Arc<str>) {
        self.formers
            .entry(current.clone())
            .or_default()
            .push(former.clone());
        self.current.insert(former, current);
    }

    /// Every former name with the current one.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &Arc<str>)> {
        self.current.iter()
    }

    /// The current name of the archetype formerly called `former`.
    pub fn current(&self, former: &str) -> Option<&Arc<str>> {
        self.current.get(former)
    }

    /// The former names whose meaning differs between `self` and `other`.
    pub fn differences<'a>(&'a self, other: &'a Renames) -> Vec<&'a str> {
        let mut changed: Vec<&str> = Vec::new();
        for (former, current) in &self.current {
            if other.current.get(former) != Some(current) {
                changed.push(former);
            }
        }
        for former in other.current.keys() {
            if !self.current.contains_key(former) {
                changed.push(former);
            }
        }
        changed
    }

    /// The former names of the archetype now called `name`, sorted.
    pub fn former_names(&self, name: &str) -> Vec<&str> {
        self.formers
            .get(name)
            .map(|formers| formers.iter().map(|former| &**former).collect())
            .unwrap_or_default()
    }

    /// Whether no archetype has a former name.
    pub fn is_empty(&self) -> bool {
        self.current.is_empty()
    }

    /// `doc` with every old name replaced by the current one, and a warning at each, or
    /// `None` if it names no old name.
    pub fn map_doc(&self, doc: &ArchetypeDoc) -> Option<(ArchetypeDoc, Vec<DocProblem>)> {
        if self.current.is_empty() || !names_any(doc, &|name| self.current.contains_key(name)) {
            return None;
        }
        let mut mapped = doc.clone();
        let mut warnings = Vec::new();
        let root = FieldPath::root();
        for (index, parent) in mapped.extends.iter_mut().enumerate() {
            self.map_name(parent, root.key(keys::EXTENDS).index(index), &mut warnings);
        }
        self.map_children(&mut mapped.root, &root, &mut warnings);
        Some((mapped, warnings))
    }

    fn map_children(
        &self,
        spec: &mut EntitySpec,
        path: &FieldPath,
        warnings: &mut Vec<DocProblem>,
    ) {
        for (name, entry) in spec.children.iter_mut() {
            let Some(entry) = entry else { continue };
            let entry_path = path.key(keys::CHILDREN).key(name);
            if let Some(archetype) = &mut entry.archetype {
                self.map_name(archetype, entry_path.key(keys::ARCHETYPE), warnings);
            }
            self.map_children(entry, &entry_path, warnings);
        }
    }

    fn map_name(&self, name: &mut String, path: FieldPath, warnings: &mut Vec<DocProblem>) {
        let Some(current) = self.current.get(name.as_str()) else {
            return;
        };
        warnings.push(DocProblem {
            path,
            at_key: false,
            diagnostic: old_name_warning(name, current),
        });
        *name = current.to_string();
    }
}

/// The archetypes of `claimants` but the one at `at`, quoted and joined for a clash error: the
/// first [`CLAIMANTS_LISTED`], and how many more.
fn other_claimants(claimants: &[(&Arc<str>, usize)], at: usize) -> String {
    let others = claimants.len().saturating_sub(1);
    let listed: Vec<String> = (claimants.iter().enumerate())
        .filter(|(i, _)| *i != at)
        .take(CLAIMANTS_LISTED)
        .map(|(_, (other, _))| format!("`{other}`"))
        .collect();
    match others.saturating_sub(listed.len()) {
        0 => listed.join(", "),
        more => format!("{} and {more} more", listed.join(", ")),
    }
}

/// The warning for an old archetype name used in an archetype file.
fn old_name_warning(former: &str, current: &str) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::OldName,
        format!(
            "archetype `{former}` is now called `{current}` (its `formerly` lists the old name); write the new name, or run `archetool migrate`"
        ),
    )
    .with_severity(Severity::Warning)
    .with_suggestion(Some(current.to_string()))
}

/// Whether `doc` names an archetype `matches` (in `extends` or a child's `archetype`).
fn names_any(doc: &ArchetypeDoc, matches: &dyn Fn(&str) -> bool) -> bool {
    fn children(spec: &EntitySpec, matches: &dyn Fn(&str) -> bool) -> bool {
        spec.children.values().flatten().any(|entry| {
            entry.archetype.as_deref().is_some_and(matches) || children(entry, matches)
        })
    }
    doc.extends.iter().any(|name| matches(name)) || children(&doc.root, matches)
}
