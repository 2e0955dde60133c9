//! The set of names: what an archetype file coming or going changes beyond itself (the
//! `ArchetypeRef`s naming it, "did you mean" suggestions, case conflicts, what references are
//! checked against), found from indices kept up to date rather than by a pass over every file,
//! so adding or deleting one file in a big library costs what the name touches.

use super::*;

/// What changed since the library's [`ArchetypeTargets`] were made.
#[derive(Debug, Default)]
pub(super) enum TargetsStale {
    /// Nothing.
    #[default]
    Fresh,
    /// These names came or went.
    Names(FxHashSet<Arc<str>>),
    /// Too much to follow name by name (former names changed meaning, a first load).
    All,
}

impl TargetsStale {
    /// Notes that `names` came or went.
    fn add_names(&mut self, names: &FxHashSet<Arc<str>>) {
        match self {
            TargetsStale::Fresh => *self = TargetsStale::Names(names.clone()),
            TargetsStale::Names(known) => known.extend(names.iter().cloned()),
            TargetsStale::All => {}
        }
    }
}

/// More names than this fraction of the library coming or going at once (a first load, a
/// branch checked out) are handled by passes over every name: cheaper than one by one.
const WHOLESALE_FRACTION: usize = 16;

impl ArchetypeLibrary {
    /// What names appearing or disappearing changes: the `ArchetypeRef`s naming them and the
    /// archetypes naming a missing one are checked again, and case conflicts found again.
    pub(super) fn names_came_or_went(
        &mut self,
        comings_and_goings: &FxHashSet<Arc<str>>,
        touched: &mut BTreeSet<Arc<str>>,
    ) {
        self.targets_stale.add_names(comings_and_goings);
        touched.extend(self.referring_to(comings_and_goings.iter().map(|name| &**name)));
        let wholesale = comings_and_goings.len() * WHOLESALE_FRACTION >= self.sources.len();
        let case_checked = if wholesale {
            self.sorted_names = self.sources.keys().cloned().collect();
            self.sorted_names.sort_unstable();
            self.case_index = CaseIndex::of(self.sorted_names.iter().map(|name| &**name));
            self.find_naming_missing();
            self.sorted_names.clone()
        } else {
            let changed = self.follow_names(comings_and_goings);
            self.names_with_parts(&changed, comings_and_goings)
        };
        // "Did you mean" for a parent or child archetype that does not exist draws on the
        // set of names: check the archetypes that name a missing one again.
        touched.extend(self.naming_missing.iter().cloned());
        for name in case_checked {
            let conflict = self.case_index.conflict_of(&name);
            let Some(source) = self.sources.get_mut(&name) else {
                continue;
            };
            let had = source.problems.iter().any(is_case_conflict);
            source.problems.retain(|d| !is_case_conflict(d));
            if let Some(conflict) = conflict {
                let problem = case_conflict_problem(&source.file, &name, &conflict);
                source.problems.push(problem);
                touched.insert(name);
            } else if had {
                touched.insert(name);
            }
        }
    }

    /// Keeps the sorted names and the case index in step with `sources` for each name of
    /// `names` (which came or went); returns the folded name parts that gained or lost a
    /// spelling.
    fn follow_names(&mut self, names: &FxHashSet<Arc<str>>) -> FxHashSet<Box<str>> {
        let mut changed = FxHashSet::default();
        for name in names {
            let present = self.sources.contains_key(name);
            match (self.sorted_names.binary_search(name), present) {
                (Err(at), true) => {
                    self.sorted_names.insert(at, name.clone());
                    self.case_index.add(name, Some(&mut changed));
                }
                (Ok(at), false) => {
                    self.sorted_names.remove(at);
                    self.case_index.remove(name, &mut changed);
                }
                // Listed already (a cooked library's names), or never listed.
                _ => {}
            }
        }
        changed
    }

    /// The names (with a file) that have a part among the folded parts `changed`, and those
    /// of `also` that have a file: each name whose case conflicts may have changed.
    fn names_with_parts(
        &self,
        changed: &FxHashSet<Box<str>>,
        also: &FxHashSet<Arc<str>>,
    ) -> Vec<Arc<str>> {
        let mut found: FxHashSet<Arc<str>> = (also.iter())
            .filter(|name| self.sources.contains_key(*name))
            .cloned()
            .collect();
        for folded in changed {
            for spelling in self.case_index.spellings(folded) {
                // Names under a directory are side by side in sorted order.
                let from = self.sorted_names.partition_point(|name| **name < *spelling);
                let under = self.sorted_names[from..].iter();
                let with = under.take_while(|name| match spelling.ends_with('/') {
                    true => name.starts_with(spelling),
                    false => ***name == *spelling,
                });
                found.extend(with.cloned());
            }
        }
        let mut found: Vec<Arc<str>> = found.into_iter().collect();
        found.sort_unstable();
        found
    }

    /// Records what the archetype `name` was found to be, and which archetypes its values name.
    pub(super) fn set_state(&mut self, name: Arc<str>, state: State) {
        let before = self.states.insert(name.clone(), state);
        let before = before.map(|state| state.references).unwrap_or_default();
        let now = &self.states[&name].references;
        if before == *now {
            return;
        }
        let now = now.clone();
        for named in &before {
            self.forget_referrer(named, &name);
        }
        for named in now {
            let referrers = self.referrers.entry(named).or_default();
            referrers.insert(name.clone());
        }
    }

    /// Forgets what the archetype `name` (whose file is gone) was found to be.
    pub(super) fn remove_state(&mut self, name: &Arc<str>) {
        let Some(state) = self.states.remove(name) else {
            return;
        };
        for named in &state.references {
            self.forget_referrer(named, name);
        }
    }

    /// Forgets that `referrer`'s values name `named`.
    fn forget_referrer(&mut self, named: &Arc<str>, referrer: &Arc<str>) {
        if let Some(referrers) = self.referrers.get_mut(named) {
            referrers.remove(referrer);
            if referrers.is_empty() {
                self.referrers.remove(named);
            }
        }
    }

    /// The archetypes whose values name one of `names`.
    pub(super) fn referring_to<'a>(
        &'a self,
        names: impl Iterator<Item = &'a str> + 'a,
    ) -> impl Iterator<Item = Arc<str>> + 'a {
        names
            .filter_map(|name| self.referrers.get(name))
            .flatten()
            .cloned()
    }

    /// Finds the archetypes that name one without a file, in a pass over every file.
    fn find_naming_missing(&mut self) {
        self.naming_missing = (self.sources.iter())
            .filter(|(_, source)| self.names_missing(source))
            .map(|(name, _)| name.clone())
            .collect();
    }

    /// Notes again whether each of `names` (those a rebuild decided) names an archetype
    /// without a file.
    pub(super) fn note_naming_missing(&mut self, names: &[Arc<str>]) {
        for name in names {
            match self.sources.get(name) {
                Some(source) if self.names_missing(source) => {
                    self.naming_missing.insert(name.clone());
                }
                _ => {
                    self.naming_missing.remove(name);
                }
            }
        }
    }

    /// Whether the file of `source` names an archetype without a file.
    fn names_missing(&self, source: &SourceFile) -> bool {
        source.summary.as_deref().is_some_and(|summary| {
            (summary.current().all().iter()).any(|dep| !self.sources.contains_key(dep.as_str()))
        })
    }

    /// Makes what `ArchetypeRef`s are checked against current: name by name when only some
    /// came or went. Slots must exist for every name with a file.
    pub(super) fn refresh_targets(&mut self) {
        match std::mem::take(&mut self.targets_stale) {
            TargetsStale::Fresh => {}
            TargetsStale::All => self.targets = Arc::new(self.archetype_targets()),
            TargetsStale::Names(names) => {
                let targets = Arc::make_mut(&mut self.targets);
                for name in names {
                    let id = (self.sorted_names.binary_search(&name).ok())
                        .and_then(|_| self.ids.get(&name).copied());
                    let at = targets.sorted.binary_search(&name);
                    match (id, at) {
                        (Some(id), Err(at)) => {
                            targets.sorted.insert(at, name.clone());
                            targets.ids.insert(name, id);
                        }
                        (Some(id), Ok(_)) => {
                            targets.ids.insert(name, id);
                        }
                        (None, Ok(at)) => {
                            targets.sorted.remove(at);
                            targets.ids.remove(&name);
                        }
                        (None, Err(_)) => {}
                    }
                }
            }
        }
    }
}
