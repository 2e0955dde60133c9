//! [`DependencyGraph`]: who builds on whom in a library, kept up to date file by file, so an
//! edit finds what it affects without a pass over every archetype.
//!
//! Invariant: for every archetype with a file, `deps` holds the archetypes its file (old names
//! mapped) names, and each of those names lists it in `dependents`, once; nothing else is in
//! either map. The library sets an archetype's entry whenever its file or its mapping changes
//! (every such name is among a rebuild's touched names).

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Each archetype's dependencies (see
/// [`Dependencies`](crate::archetype::doc_summary::Dependencies)).
pub(super) type DependencyLists = FxHashMap<Arc<str>, Arc<[String]>>;

/// For each archetype name (whether or not it has a file), the archetypes that depend on it.
pub(super) type Dependents = FxHashMap<String, Vec<Arc<str>>>;

/// The dependencies of every archetype with a file, both ways.
#[derive(Debug, Default)]
pub(super) struct DependencyGraph {
    deps: DependencyLists,
    dependents: Dependents,
}

impl DependencyGraph {
    /// Sets the dependencies of `name` (each named once; `None`: it has no file, or no
    /// readable one), in time
    /// proportional to its old and new lists and their dependents' lists.
    pub fn set(&mut self, name: &Arc<str>, list: Option<Arc<[String]>>) {
        if let Some(old) = self.deps.remove(name) {
            for dep in old.iter() {
                if let Some(names) = self.dependents.get_mut(dep.as_str()) {
                    names.retain(|other| other != name);
                    if names.is_empty() {
                        self.dependents.remove(dep.as_str());
                    }
                }
            }
        }
        let Some(list) = list else {
            return;
        };
        for dep in list.iter() {
            match self.dependents.get_mut(dep.as_str()) {
                Some(names) => names.push(name.clone()),
                None => {
                    self.dependents.insert(dep.clone(), vec![name.clone()]);
                }
            }
        }
        self.deps.insert(name.clone(), list);
    }

    /// Room for `additional` more archetypes (a first load).
    pub fn reserve(&mut self, additional: usize) {
        self.deps.reserve(additional);
    }

    /// Each archetype's dependencies.
    pub fn deps(&self) -> &DependencyLists {
        &self.deps
    }

    /// The archetypes that depend on each name.
    pub fn dependents(&self) -> &Dependents {
        &self.dependents
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Option<Arc<[String]>> {
        Some(names.iter().map(|name| name.to_string()).collect())
    }

    fn dependents_of(graph: &DependencyGraph, name: &str) -> Vec<String> {
        let mut names: Vec<String> = (graph.dependents().get(name).into_iter().flatten())
            .map(|name| name.to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_archetype_set_again_leaves_no_trace_of_its_old_dependencies() {
        let mut graph = DependencyGraph::default();
        let (goblin, orc) = (Arc::from("goblin"), Arc::from("orc"));
        graph.set(&goblin, list(&["creature", "weapon"]));
        graph.set(&orc, list(&["creature"]));
        assert_eq!(dependents_of(&graph, "creature"), ["goblin", "orc"]);
        graph.set(&goblin, list(&["monster"]));
        assert_eq!(dependents_of(&graph, "creature"), ["orc"]);
        assert!(!graph.dependents().contains_key("weapon"));
        assert_eq!(dependents_of(&graph, "monster"), ["goblin"]);
        graph.set(&orc, None);
        assert!(!graph.dependents().contains_key("creature"));
        assert!(!graph.deps().contains_key("orc"));
    }
}
