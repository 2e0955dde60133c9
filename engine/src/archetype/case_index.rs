//! [`CaseIndex`]: the spellings of every part of the library's archetype names, kept up to
//! date as names come and go, so a new or deleted file finds its case conflicts (see
//! [`case_conflicts`](crate::archetype::tree::case_conflicts)) by what it shares with others,
//! not by a pass over every name.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::archetype::tree::{parts, CaseConflict};

/// For each part of a name (each directory with its slash, then the whole name), folded to
/// ASCII lowercase: its spellings, and how many names have each.
#[derive(Debug, Default)]
pub(super) struct CaseIndex {
    parts: FxHashMap<Box<str>, Vec<(Box<str>, usize)>>,
}

impl CaseIndex {
    /// The index of `names` (each once).
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> CaseIndex {
        let mut index = CaseIndex::default();
        for name in names {
            index.add(name, None);
        }
        index
    }

    /// Adds `name` (not in the index), and to `changed` (when given) each folded part that
    /// gained a spelling.
    pub fn add(&mut self, name: &str, mut changed: Option<&mut FxHashSet<Box<str>>>) {
        for part in parts(name) {
            let spellings = self.parts.entry(folded(part)).or_default();
            match spellings
                .iter_mut()
                .find(|(spelling, _)| **spelling == *part)
            {
                Some((_, count)) => *count += 1,
                None => {
                    spellings.push((Box::from(part), 1));
                    if let Some(changed) = changed.as_deref_mut() {
                        changed.insert(folded(part));
                    }
                }
            }
        }
    }

    /// Removes `name` (in the index), and adds to `changed` each folded part that lost a
    /// spelling.
    pub fn remove(&mut self, name: &str, changed: &mut FxHashSet<Box<str>>) {
        for part in parts(name) {
            let folded = folded(part);
            let Some(spellings) = self.parts.get_mut(&folded) else {
                continue;
            };
            let Some(at) = spellings
                .iter()
                .position(|(spelling, _)| **spelling == *part)
            else {
                continue;
            };
            spellings[at].1 -= 1;
            if spellings[at].1 == 0 {
                spellings.swap_remove(at);
                if spellings.is_empty() {
                    self.parts.remove(&folded);
                }
                changed.insert(folded);
            }
        }
    }

    /// The spellings of the folded part `folded`.
    pub fn spellings<'a>(&'a self, folded: &str) -> impl Iterator<Item = &'a str> {
        (self.parts.get(folded).into_iter().flatten()).map(|(spelling, _)| &**spelling)
    }

    /// How `name` (in the index) clashes by letter case with other names: at its shallowest
    /// part with another spelling, as [`case_conflicts`](crate::archetype::tree::case_conflicts)
    /// finds it.
    pub fn conflict_of(&self, name: &str) -> Option<CaseConflict> {
        parts(name).find_map(|part| {
            let spellings = self.parts.get(&folded(part))?;
            if spellings.len() < 2 {
                return None;
            }
            let mut others: Vec<String> = (spellings.iter())
                .filter(|(spelling, _)| **spelling != *part)
                .map(|(spelling, _)| spelling.trim_end_matches('/').to_string())
                .collect();
            others.sort();
            Some(CaseConflict {
                part: part.trim_end_matches('/').to_string(),
                directory: part.ends_with('/'),
                others,
            })
        })
    }
}

/// `part` in ASCII lowercase (names are ASCII).
pub(super) fn folded(part: &str) -> Box<str> {
    part.to_ascii_lowercase().into_boxed_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archetype::tree::case_conflicts;

    /// Every name's conflict, as the index finds it and as a pass over every name does.
    fn both_ways(index: &CaseIndex, names: &[&str]) -> (Vec<String>, Vec<String>) {
        let mut indexed: Vec<String> = (names.iter())
            .filter_map(|name| Some(format!("{name}: {:?}", index.conflict_of(name)?)))
            .collect();
        indexed.sort();
        let passed: Vec<String> = (case_conflicts(names.iter().copied()).into_iter())
            .map(|(name, conflict)| format!("{name}: {conflict:?}"))
            .collect();
        (indexed, passed)
    }

    #[test]
    fn names_coming_and_going_give_the_conflicts_a_pass_over_every_name_gives() {
        let mut names = vec!["enemies/goblin", "enemies/orc", "props/door"];
        let mut index = CaseIndex::of(names.iter().copied());
        let (indexed, passed) = both_ways(&index, &names);
        assert!(indexed.is_empty() && passed.is_empty());

        let mut changed = FxHashSet::default();
        index.add("Enemies/troll", Some(&mut changed));
        names.push("Enemies/troll");
        assert_eq!(
            changed,
            FxHashSet::from_iter([folded("enemies/"), folded("enemies/troll")])
        );
        let (indexed, passed) = both_ways(&index, &names);
        assert_eq!(indexed.len(), 3);
        assert_eq!(indexed, passed);
        let spellings: FxHashSet<&str> = index.spellings("enemies/").collect();
        assert_eq!(spellings, FxHashSet::from_iter(["enemies/", "Enemies/"]));

        index.add("props/Door", None);
        names.push("props/Door");
        let (indexed, passed) = both_ways(&index, &names);
        assert_eq!(indexed.len(), 5);
        assert_eq!(indexed, passed);

        let mut changed = FxHashSet::default();
        index.remove("Enemies/troll", &mut changed);
        names.retain(|name| *name != "Enemies/troll");
        assert_eq!(
            changed,
            FxHashSet::from_iter([folded("enemies/"), folded("enemies/troll")])
        );
        let (indexed, passed) = both_ways(&index, &names);
        assert_eq!(indexed.len(), 2);
        assert_eq!(indexed, passed);

        // A spelling others share changes nothing when one of its names goes.
        let mut changed = FxHashSet::default();
        index.remove("enemies/orc", &mut changed);
        assert_eq!(changed, FxHashSet::from_iter([folded("enemies/orc")]));
    }
}
