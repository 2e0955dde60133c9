//! Resolution: turning archetype files (with `extends` and `children`) into the full JSON value
//! of each archetype, and finding which file supplied a given value.
//!
//! Pure functions over parsed files: no I/O, no world, no typed components.
//!
//! Rules (documented for designers in `guide::designer::inheritance`):
//! - parents are applied in `extends` order, each as its own resolved value, then the file's own
//!   components; component values merge as JSON Merge Patch (RFC 7396), except that a value
//!   naming another variant of an enum replaces the inherited one ([`value_merge`]);
//! - children merge by local name; a child entry naming an `archetype` starts over from that
//!   archetype (what the parents said about that child is replaced); `null` removes a child.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use crate::archetype::file::{keys, ArchetypeDoc, EntitySpec};
use crate::archetype::operator::{self, Operator};
use crate::archetype::value_merge::{self, MergeProblem, ValueShapes};
use crate::diagnostic::{quoted, Diagnostic, DiagnosticCode};
use crate::json::did_you_mean;
use crate::json::{FieldPath, PathSegment};

/// An archetype (or one of its children) with inheritance applied: every component's full JSON
/// value, and its children.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ResolvedEntity {
    /// The archetype this entity is an instance of: the archetype itself for a root, the
    /// `archetype` of a child entry, `None` for a child described inline.
    pub source: Option<Arc<str>>,
    /// Component name → full value.
    pub components: BTreeMap<Arc<str>, Value>,
    /// Local child name → child.
    pub children: BTreeMap<Arc<str>, ResolvedEntity>,
    /// For a child: the local names it was formerly known by (`formerly` in its entries).
    pub formerly: Vec<Arc<str>>,
}

impl ResolvedEntity {
    /// Applies `parent` under this entity (what this entity already has was applied first, and
    /// `parent` is merged on top of it, as the next parent in `extends` order). Returns the
    /// operators of `parent` that could not be applied here.
    fn overlay(&mut self, parent: &ResolvedEntity, shapes: &dyn ValueShapes) -> Vec<Misfit> {
        let mut misfits = Vec::new();
        self.overlay_at(parent, shapes, &mut Vec::new(), &mut misfits);
        misfits
    }

    fn overlay_at(
        &mut self,
        parent: &ResolvedEntity,
        shapes: &dyn ValueShapes,
        node: &mut Vec<Arc<str>>,
        misfits: &mut Vec<Misfit>,
    ) {
        if parent.source.is_some() {
            self.source = parent.source.clone();
        }
        for (name, value) in &parent.components {
            let target = self.components.entry(name.clone()).or_insert(Value::Null);
            for problem in value_merge::merge(target, value, name, shapes) {
                misfits.push(Misfit {
                    node: node.clone(),
                    component: name.clone(),
                    problem,
                });
            }
        }
        for (name, child) in &parent.children {
            node.push(name.clone());
            self.children
                .entry(name.clone())
                .or_default()
                .overlay_at(child, shapes, node, misfits);
            node.pop();
        }
        add_former_names(&mut self.formerly, &parent.formerly);
    }

    /// The path now of the child a scene saved at `path` (local names joined by `/`), when a
    /// name on it is a former one (`formerly` in a child entry): `guard/gun` for a saved
    /// `sentry/gun` whose `guard` was formerly `sentry`. `None` when the path names no former
    /// name, or leads nowhere.
    pub fn current_path(&self, path: &str) -> Option<String> {
        let mut entity = self;
        let mut current: Vec<&str> = Vec::new();
        let mut renamed = false;
        for segment in path.split('/') {
            let (name, child) = match entity.children.get_key_value(segment) {
                Some(found) => found,
                None => {
                    renamed = true;
                    entity
                        .children
                        .iter()
                        .find(|(_, child)| child.formerly.iter().any(|f| **f == *segment))?
                }
            };
            current.push(name);
            entity = child;
        }
        renamed.then(|| current.join("/"))
    }

    /// Settles the operators still waiting in this entity and its children (a concrete
    /// archetype: see [`operator::settle`]); returns those that had nothing to work on.
    fn settle(
        &mut self,
        shapes: &dyn ValueShapes,
        node: &mut Vec<Arc<str>>,
    ) -> Vec<ResolveWarning> {
        let mut unused = Vec::new();
        self.components.retain(|name, value| {
            for left in operator::settle(value, name, shapes) {
                unused.push(ResolveWarning {
                    node: node.clone(),
                    component: name.clone(),
                    field: left.field,
                    code: DiagnosticCode::UnusedOperator,
                    message: left.message,
                    suggestion: None,
                });
            }
            !value.is_null()
        });
        for (name, child) in &mut self.children {
            node.push(name.clone());
            unused.extend(child.settle(shapes, node));
            node.pop();
        }
        unused
    }

    /// The entity as JSON in archetype-file form (`components`, `children`), for tools.
    pub fn to_json(&self) -> Value {
        let mut object = serde_json::Map::new();
        if let Some(source) = &self.source {
            object.insert(
                keys::ARCHETYPE.to_string(),
                Value::String(source.to_string()),
            );
        }
        let components = self
            .components
            .iter()
            .map(|(name, value)| (name.to_string(), value.clone()))
            .collect();
        object.insert(keys::COMPONENTS.to_string(), Value::Object(components));
        if !self.formerly.is_empty() {
            let formerly = self
                .formerly
                .iter()
                .map(|name| Value::String(name.to_string()))
                .collect();
            object.insert(keys::FORMERLY.to_string(), Value::Array(formerly));
        }
        if !self.children.is_empty() {
            let children = self
                .children
                .iter()
                .map(|(name, child)| (name.to_string(), child.to_json()))
                .collect();
            object.insert(keys::CHILDREN.to_string(), Value::Object(children));
        }
        Value::Object(object)
    }
}

/// Adds the former names of `more` not in `names` yet, in their order.
fn add_former_names(names: &mut Vec<Arc<str>>, more: &[Arc<str>]) {
    if more.is_empty() {
        return;
    }
    let mut known: FxHashSet<Arc<str>> = names.iter().cloned().collect();
    for name in more {
        if known.insert(name.clone()) {
            names.push(name.clone());
        }
    }
}

/// An operator of a parent that could not be applied to what the parents before it gave.
#[derive(Clone, Debug)]
pub(super) struct Misfit {
    /// Child names from the root to the entity.
    pub node: Vec<Arc<str>>,
    pub component: Arc<str>,
    pub problem: MergeProblem,
}

/// A warning resolving an archetype found: an operator a concrete archetype settled with
/// nothing to work on, or a value in its file that changes nothing.
#[derive(Clone, Debug)]
pub(super) struct ResolveWarning {
    /// Child names from the root to the entity.
    pub node: Vec<Arc<str>>,
    pub component: Arc<str>,
    pub field: FieldPath,
    pub code: DiagnosticCode,
    pub message: String,
    pub suggestion: Option<String>,
}

/// What the resolver knows about an archetype name.
pub(super) enum Lookup {
    /// Its file, to resolve now.
    Doc(Arc<ArchetypeDoc>),
    /// Its current resolved value, known good and not affected by the change being processed,
    /// and its depth (see [`MAX_ARCHETYPE_DEPTH`]).
    Resolved(Arc<ResolvedEntity>, usize),
    /// Its file exists but has errors.
    Broken,
    /// No such archetype.
    Missing,
}

/// Why an archetype could not be resolved.
#[derive(Clone, Debug)]
pub(super) enum Failure {
    /// Problems in the archetype's own file.
    Problems(Vec<ResolveProblem>),
    /// Something it depends on (named) has errors.
    Dependency(String),
    /// It is part of an inheritance cycle (or several), and has no other problem: the cycle
    /// is reported once for all its members ([`Resolver::take_cycles`]).
    InCycle,
    /// Internal: cycles being unwound, each still to reach its first member further up the
    /// stack.
    Cycle(Vec<PendingCycle>),
}

/// One link of an inheritance cycle: archetype `from` names `to` at `path` of its file (an
/// `extends` entry, or a child's `archetype`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct CycleLink {
    pub from: String,
    pub to: String,
    pub path: FieldPath,
}

impl CycleLink {
    /// For a link made by a child's `archetype`: the child's local names from the root, joined
    /// by `/` (`guard/gun`); `None` for an `extends` entry.
    pub fn child(&self) -> Option<String> {
        let segments = self.path.segments();
        if segments.first() == Some(&PathSegment::Key(keys::EXTENDS.to_string())) {
            return None;
        }
        // The path is `children.<name>(.children.<name>)*.archetype`, as `apply_spec` builds it.
        let names: Vec<&str> = segments
            .windows(2)
            .filter_map(|pair| match pair {
                [PathSegment::Key(key), PathSegment::Key(name)] if key == keys::CHILDREN => {
                    Some(name.as_str())
                }
                _ => None,
            })
            .collect();
        Some(names.join("/"))
    }
}

/// An inheritance cycle: its links in order, each naming the archetype of the next; the last
/// names the first. The first link is that of the member first in name order, so a cycle
/// found from any member is the same.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Cycle {
    pub links: Vec<CycleLink>,
}

impl Cycle {
    /// The members' names in order, the first repeated at the end: `a -> b -> a`.
    pub fn names(&self) -> String {
        let mut names: Vec<&str> = self.links.iter().map(|link| link.from.as_str()).collect();
        names.extend(names.first().copied());
        names.join(" -> ")
    }
}

/// A cycle being unwound: its members from the one further up the stack (where it closes)
/// down, and the links found so far (the deepest member's first).
#[derive(Clone, Debug)]
pub(super) struct PendingCycle {
    members: Vec<String>,
    links: Vec<CycleLink>,
}

/// A problem in an archetype's own file found while resolving it.
#[derive(Clone, Debug)]
pub(super) struct ResolveProblem {
    /// Where in the file (from its top).
    pub path: FieldPath,
    /// What is wrong.
    pub diagnostic: Diagnostic,
}

type Outcome = Result<Arc<ResolvedEntity>, Failure>;

/// The longest chain of archetypes one may be built from, through `extends` and children's
/// `archetype`. Resolution recurses along the chain, so without a bound a generated chain of
/// thousands of files would overflow the stack.
pub(super) const MAX_ARCHETYPE_DEPTH: usize = 32;

/// The most entities an instance of one archetype may have. Children whose archetypes have
/// children multiply: twenty small files could otherwise describe a million entities.
pub(super) const MAX_INSTANCE_ENTITIES: usize = 10_000;

/// Up to this many dependencies, [`resolve_alone`] finds one by a scan of them.
const FEW_DEPENDENCIES: usize = 8;

/// An archetype a resolution alone ([`resolve_alone`]) reads: its name, resolved tree and depth.
pub(super) type DependencyTree = (Arc<str>, Arc<ResolvedEntity>, usize);

/// An archetype resolved on its own: its tree, its depth and the operators it settled with
/// nothing to work on.
pub(super) type ResolvedAlone = (Arc<ResolvedEntity>, usize, Vec<ResolveWarning>);

/// Resolves the archetype `name` from its file `doc` and the trees of the archetypes it names,
/// `deps`, without a library: what resolving it among all the others gives when each of those
/// resolved to its tree here. `None` when it does not resolve (a dependency missing from
/// `deps`, a problem in the file): the problem is then for a full resolution to report.
pub(super) fn resolve_alone(
    name: &str,
    doc: &Arc<ArchetypeDoc>,
    deps: &[DependencyTree],
    shapes: &dyn ValueShapes,
) -> Option<ResolvedAlone> {
    // An archetype extending many parents finds each by name in a map, not by a scan each.
    let index: Option<FxHashMap<&str, &DependencyTree>> =
        (deps.len() > FEW_DEPENDENCIES).then(|| {
            let mut index = FxHashMap::default();
            for dep in deps {
                index.entry(&*dep.0).or_insert(dep);
            }
            index
        });
    let lookup = |wanted: &str| {
        if wanted == name {
            return Lookup::Doc(doc.clone());
        }
        let found = match &index {
            Some(index) => index.get(wanted).copied(),
            None => deps.iter().find(|(dep, _, _)| &**dep == wanted),
        };
        match found {
            Some((_, tree, depth)) => Lookup::Resolved(tree.clone(), *depth),
            None => Lookup::Missing,
        }
    };
    let mut resolver = Resolver::new(lookup, &[], shapes);
    let tree = resolver.resolve(name).ok()?;
    let depth = resolver.depth(name)?;
    Some((tree, depth, resolver.take_unused(name)))
}

/// Resolves archetypes on demand, remembering results, detecting cycles.
pub(super) struct Resolver<'a, L: Fn(&str) -> Lookup> {
    lookup: L,
    names: &'a [Arc<str>],
    /// What component types say about merging their values (enum variants).
    shapes: &'a dyn ValueShapes,
    memo: FxHashMap<String, Option<Outcome>>,
    /// Archetypes cut short by the depth bound, with the shortest stack they were cut at: the
    /// chain below them is at least that long, so any visit from as deep or deeper is cut too
    /// (without this, archetypes that each extend two of the next would be re-resolved an
    /// exponential number of times).
    cut: FxHashMap<String, usize>,
    stack: Vec<String>,
    /// The depth (see [`MAX_ARCHETYPE_DEPTH`]) of every archetype resolved without errors.
    depths: FxHashMap<String, usize>,
    /// What the archetype being resolved (the top of `stack`) has found so far.
    frame: Frame,
    /// The operators each concrete archetype resolved here settled with nothing to work on.
    unused: FxHashMap<String, Vec<ResolveWarning>>,
    /// The values of the file being resolved that change nothing (see [`noop`]).
    noops: Vec<ResolveWarning>,
    /// Every inheritance cycle found, each once.
    cycles: BTreeSet<Cycle>,
}

/// Per archetype being resolved: the deepest dependency, whether a dependency was cut short by
/// the depth bound, the entities its children's archetypes brought, whether it is part of an
/// inheritance cycle, and the cycles through it still being unwound.
#[derive(Default)]
struct Frame {
    deepest: usize,
    cut: bool,
    entities: usize,
    in_cycle: bool,
    unwinding: Vec<PendingCycle>,
}

impl<'a, L: Fn(&str) -> Lookup> Resolver<'a, L> {
    /// A resolver reading archetypes through `lookup`; `names` (sorted) feed suggestions;
    /// `shapes` tells how component values merge.
    pub fn new(lookup: L, names: &'a [Arc<str>], shapes: &'a dyn ValueShapes) -> Self {
        Resolver {
            lookup,
            names,
            shapes,
            memo: FxHashMap::default(),
            cut: FxHashMap::default(),
            stack: Vec::new(),
            depths: FxHashMap::default(),
            frame: Frame::default(),
            unused: FxHashMap::default(),
            noops: Vec::new(),
            cycles: BTreeSet::new(),
        }
    }

    /// Every inheritance cycle found since the last call, in order, each once (however many
    /// of its members were resolved).
    pub fn take_cycles(&mut self) -> Vec<Cycle> {
        std::mem::take(&mut self.cycles).into_iter().collect()
    }

    /// The operators `name` (if concrete and resolved here) settled with nothing to work on.
    pub fn take_unused(&mut self, name: &str) -> Vec<ResolveWarning> {
        self.unused.remove(name).unwrap_or_default()
    }

    /// Resolves `name` (which must exist as a document or a resolved value).
    pub fn resolve(&mut self, name: &str) -> Outcome {
        // From the top of the stack a resolution is never cut short (see `resolve_nested`).
        self.resolve_nested(name)
            .unwrap_or_else(|| Err(Failure::Dependency(name.to_string())))
    }

    /// The depth of `name` (see [`MAX_ARCHETYPE_DEPTH`]) if it resolved without errors.
    pub fn depth(&self, name: &str) -> Option<usize> {
        self.depths.get(name).copied()
    }

    /// The tree and depth of `name` when they are known without resolving anything: it
    /// resolved here without errors, or the lookup gives it resolved.
    pub fn known(&self, name: &str) -> Option<(Arc<ResolvedEntity>, usize)> {
        match self.memo.get(name) {
            Some(Some(Ok(done))) => Some((done.clone(), self.depth(name)?)),
            Some(_) => None,
            None => match (self.lookup)(name) {
                Lookup::Resolved(tree, depth) => Some((tree, depth)),
                _ => None,
            },
        }
    }

    /// Resolves `name`; `None` when the chain below it reaches [`MAX_ARCHETYPE_DEPTH`] counted
    /// from the top of the stack: whether `name` itself is too deep is then not known here, so
    /// nothing is remembered, and the archetype at the top reports the error.
    fn resolve_nested(&mut self, name: &str) -> Option<Outcome> {
        match self.memo.get(name) {
            Some(Some(done)) => return Some(done.clone()),
            Some(None) => {
                // `name` is being resolved further up the stack: a cycle.
                let start = self.stack.iter().position(|n| n == name).unwrap_or(0);
                return Some(Err(Failure::Cycle(vec![PendingCycle {
                    members: self.stack[start..].to_vec(),
                    links: Vec::new(),
                }])));
            }
            None => {}
        }
        if self.stack.len() >= MAX_ARCHETYPE_DEPTH
            || self.cut.get(name).is_some_and(|&at| self.stack.len() >= at)
        {
            return None;
        }
        let doc = match (self.lookup)(name) {
            Lookup::Doc(doc) => doc,
            Lookup::Resolved(resolved, depth) => {
                self.depths.insert(name.to_string(), depth);
                return Some(Ok(resolved));
            }
            Lookup::Broken | Lookup::Missing => {
                return Some(Err(Failure::Dependency(name.to_string())))
            }
        };
        self.memo.insert(name.to_string(), None);
        self.stack.push(name.to_string());
        let outer = std::mem::take(&mut self.frame);
        let outcome = self.resolve_doc(name, &doc);
        let frame = std::mem::replace(&mut self.frame, outer);
        self.stack.pop();
        let depth = frame.deepest + 1;
        let outcome = if depth > MAX_ARCHETYPE_DEPTH || (frame.cut && self.stack.is_empty()) {
            Err(Failure::Problems(vec![too_deep(&doc)]))
        } else if frame.cut {
            self.memo.remove(name);
            self.cut.insert(name.to_string(), self.stack.len());
            return None;
        } else {
            outcome
        };
        if outcome.is_ok() {
            self.depths.insert(name.to_string(), depth);
        }
        self.memo.insert(name.to_string(), Some(outcome.clone()));
        Some(match frame.unwinding.is_empty() {
            true => outcome,
            // Members further up the stack are in these cycles too: they add their links.
            false => Err(Failure::Cycle(frame.unwinding)),
        })
    }

    /// Resolves one file. Cycles through it that close further up the stack are left in
    /// `self.frame.unwinding`.
    fn resolve_doc(&mut self, name: &str, doc: &ArchetypeDoc) -> Outcome {
        // The no-ops found so far are those of an archetype that named this one (a child
        // entry's archetype is resolved in the middle of its file): kept for it, not this one.
        let outer = std::mem::take(&mut self.noops);
        let mut problems = Vec::new();
        let mut dependency = None;
        let mut entity = ResolvedEntity::default();
        for (i, parent) in doc.extends.iter().enumerate() {
            let path = FieldPath::root().key(keys::EXTENDS).index(i);
            match self.dependency(name, parent, path.clone(), &mut problems) {
                Some(Ok(resolved)) => {
                    for misfit in entity.overlay(&resolved, self.shapes) {
                        problems.push(misfit_problem(parent, path.clone(), misfit));
                    }
                    if entity.count_up_to(MAX_INSTANCE_ENTITIES) > MAX_INSTANCE_ENTITIES {
                        problems.push(too_many_entities(path));
                        break;
                    }
                }
                Some(Err(dep)) => dependency = dependency.or(Some(dep)),
                None => {}
            }
        }
        self.apply_spec(
            name,
            &mut entity,
            &doc.root,
            &FieldPath::root(),
            &mut problems,
            &mut dependency,
        );
        entity.source = Some(Arc::from(name));
        // Under a broken parent the archetype is not built (and the library reports no
        // warnings about what it inherits): nothing to settle.
        let mut warnings = std::mem::replace(&mut self.noops, outer);
        if !doc.is_abstract && problems.is_empty() && dependency.is_none() {
            warnings.extend(entity.settle(self.shapes, &mut Vec::new()));
        }
        if !warnings.is_empty() {
            self.unused.insert(name.to_string(), warnings);
        }
        if problems.is_empty() && entity.count_up_to(MAX_INSTANCE_ENTITIES) > MAX_INSTANCE_ENTITIES
        {
            problems.push(too_many_entities(FieldPath::root().key(keys::CHILDREN)));
        }
        if !problems.is_empty() {
            Err(Failure::Problems(problems))
        } else if self.frame.in_cycle {
            Err(Failure::InCycle)
        } else if let Some(dependency) = dependency {
            Err(Failure::Dependency(dependency))
        } else {
            Ok(Arc::new(entity))
        }
    }

    /// Resolves a dependency of `name` written at `path`. `Some(Err(dep))`: a broken
    /// dependency; `None`: a problem was recorded, or `name` is in a cycle through `target`.
    fn dependency(
        &mut self,
        name: &str,
        target: &str,
        path: FieldPath,
        problems: &mut Vec<ResolveProblem>,
    ) -> Option<Result<Arc<ResolvedEntity>, String>> {
        if matches!((self.lookup)(target), Lookup::Missing) {
            let suggestion = did_you_mean(target, self.names.iter().map(|name| &**name));
            problems.push(ResolveProblem {
                path,
                diagnostic: Diagnostic::error(
                    DiagnosticCode::UnknownArchetype,
                    format!("archetype {} does not exist", quoted(target)),
                )
                .with_suggestion(suggestion),
            });
            return None;
        }
        let Some(outcome) = self.resolve_nested(target) else {
            self.frame.cut = true;
            return None;
        };
        match outcome {
            Ok(resolved) => {
                let depth = self.depths.get(target).copied().unwrap_or(1);
                self.frame.deepest = self.frame.deepest.max(depth);
                Some(Ok(resolved))
            }
            Err(Failure::Cycle(cycles)) => {
                // Every cycle unwinding through `target` goes through `name`, just below it on
                // the stack: this is its link.
                for mut cycle in cycles {
                    cycle.links.push(CycleLink {
                        from: name.to_string(),
                        to: target.to_string(),
                        path: path.clone(),
                    });
                    if cycle.members.first().map(String::as_str) == Some(name) {
                        self.cycles.insert(closed(cycle.links));
                    } else {
                        self.frame.unwinding.push(cycle);
                    }
                }
                self.frame.in_cycle = true;
                None
            }
            Err(Failure::Problems(_) | Failure::Dependency(_) | Failure::InCycle) => {
                Some(Err(target.to_string()))
            }
        }
    }

    fn apply_spec(
        &mut self,
        name: &str,
        entity: &mut ResolvedEntity,
        spec: &EntitySpec,
        path: &FieldPath,
        problems: &mut Vec<ResolveProblem>,
        dependency: &mut Option<String>,
    ) {
        for (component, written) in &spec.components {
            if written.value.is_null() {
                if entity.components.remove(component).is_none() {
                    let message = format!("`null` removes `{component}`, but nothing this archetype is built on gives it: this changes nothing");
                    self.noops
                        .push(noop(path, component, FieldPath::root(), message, None));
                }
                continue;
            }
            // Patched in place: no copy of the inherited value.
            let target = entity
                .components
                .entry(component.clone())
                .or_insert(Value::Null);
            let mut lints = Vec::new();
            let merged = value_merge::merge_linted(
                target,
                &written.value,
                component,
                self.shapes,
                &mut lints,
            );
            for lint in lints {
                let mut warning = noop(path, component, lint.field, lint.message, lint.suggestion);
                warning.code = lint.code;
                self.noops.push(warning);
            }
            for problem in merged {
                let mut at = path.key(keys::COMPONENTS).key(written.key.clone());
                at.0.extend(problem.field.0.iter().cloned());
                problems.push(ResolveProblem {
                    path: at,
                    diagnostic: Diagnostic::error(
                        DiagnosticCode::InvalidOperator,
                        problem.error.to_string(),
                    )
                    .with_component(component.to_string())
                    .with_field(problem.field),
                });
            }
        }
        for (child_name, entry) in &spec.children {
            let key: Arc<str> = Arc::from(child_name.as_str());
            let Some(entry) = entry else {
                entity.children.remove(&key);
                continue;
            };
            let entry_path = path.key(keys::CHILDREN).key(child_name);
            let mut child = match &entry.archetype {
                Some(archetype) => {
                    match self.dependency(
                        name,
                        archetype,
                        entry_path.key(keys::ARCHETYPE),
                        problems,
                    ) {
                        Some(Ok(resolved)) => {
                            // Counted before it is copied: copies are what multiply.
                            let size = resolved.count_up_to(MAX_INSTANCE_ENTITIES);
                            self.frame.entities = self.frame.entities.saturating_add(size);
                            if self.frame.entities > MAX_INSTANCE_ENTITIES {
                                problems.push(too_many_entities(entry_path.key(keys::ARCHETYPE)));
                                continue;
                            }
                            (*resolved).clone()
                        }
                        Some(Err(dep)) => {
                            *dependency = dependency.take().or(Some(dep));
                            continue;
                        }
                        None => continue,
                    }
                }
                None => entity.children.remove(&key).unwrap_or_default(),
            };
            let former: Vec<Arc<str>> = entry
                .formerly
                .iter()
                .map(|f| Arc::from(f.as_str()))
                .collect();
            add_former_names(&mut child.formerly, &former);
            self.apply_spec(name, &mut child, entry, &entry_path, problems, dependency);
            entity.children.insert(key, child);
        }
    }
}

/// The child names from the root to the entity written at `path` of a file
/// (`children.turret.children.barrel` is `turret/barrel`).
fn node_of(path: &FieldPath) -> Vec<Arc<str>> {
    // The path is `children`, a name, `children`, a name, ... (a child may be named `children`).
    (path.segments().chunks(2))
        .filter_map(|pair| match pair {
            [PathSegment::Key(children), PathSegment::Key(name)] if children == keys::CHILDREN => {
                Some(Arc::from(name.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// The `changes-nothing` warning for a value at `field` of `component`, written for the entity
/// at `path` of the file, that changes nothing.
fn noop(
    path: &FieldPath,
    component: &Arc<str>,
    field: FieldPath,
    message: String,
    suggestion: Option<String>,
) -> ResolveWarning {
    ResolveWarning {
        node: node_of(path),
        component: component.clone(),
        field,
        code: DiagnosticCode::ChangesNothing,
        message,
        suggestion,
    }
}

/// The cycle made of `links` as found while unwinding (the deepest member's first), in order
/// from the member first in name order.
fn closed(mut links: Vec<CycleLink>) -> Cycle {
    links.reverse();
    let first = (0..links.len())
        .min_by(|&a, &b| links[a].from.cmp(&links[b].from))
        .unwrap_or(0);
    links.rotate_left(first);
    Cycle { links }
}

/// The problem of a parent's operator that could not be applied, placed at the parent's name
/// in `extends`.
fn misfit_problem(parent: &str, path: FieldPath, misfit: Misfit) -> ResolveProblem {
    let mut place = String::new();
    for child in &misfit.node {
        place.push_str(&format!("child `{child}`, "));
    }
    place.push_str(&match misfit.problem.field.is_empty() {
        true => format!("`{}`", misfit.component),
        false => format!("`{}.{}`", misfit.component, misfit.problem.field),
    });
    ResolveProblem {
        path,
        diagnostic: Diagnostic::error(
            DiagnosticCode::InvalidOperator,
            format!("{place} of {}: {}", quoted(parent), misfit.problem.error),
        )
        .with_component(misfit.component.to_string())
        .with_field(misfit.problem.field),
    }
}

/// The problem of an archetype built from a chain longer than [`MAX_ARCHETYPE_DEPTH`].
fn too_deep(doc: &ArchetypeDoc) -> ResolveProblem {
    let key = if doc.extends.is_empty() {
        keys::CHILDREN
    } else {
        keys::EXTENDS
    };
    ResolveProblem {
        path: FieldPath::root().key(key),
        diagnostic: Diagnostic::error(
            DiagnosticCode::TooDeep,
            format!(
                "this archetype is built on a chain of more than {MAX_ARCHETYPE_DEPTH} archetypes (through `extends` and children's `archetype`); make the chain shorter"
            ),
        ),
    }
}

/// The problem of an archetype whose instances would have more than [`MAX_INSTANCE_ENTITIES`].
fn too_many_entities(path: FieldPath) -> ResolveProblem {
    ResolveProblem {
        path,
        diagnostic: Diagnostic::error(
            DiagnosticCode::TooLarge,
            format!(
                "an instance of this archetype would have more than {MAX_INSTANCE_ENTITIES} entities (children whose archetypes have children multiply)"
            ),
        ),
    }
}

impl ResolvedEntity {
    /// The number of entities (this one and every descendant), counting no further than
    /// `limit + 1`.
    fn count_up_to(&self, limit: usize) -> usize {
        let mut count = 0;
        let mut pending = vec![self];
        while let Some(entity) = pending.pop() {
            count += 1;
            if count > limit {
                break;
            }
            pending.extend(entity.children.values());
        }
        count
    }
}

/// Where a value came from: the archetype whose file wrote it, and the path inside that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Supplier {
    pub archetype: String,
    pub path: FieldPath,
}

/// Finds which file supplied `field` of `component` on the entity at `node` (child names from
/// the root) of archetype `name`: the last writer in resolution order. Used to point errors in
/// merged values at the right file, and by provenance tooling.
pub(super) fn supplier<D: std::ops::Deref<Target = ArchetypeDoc>>(
    docs: &impl Fn(&str) -> Option<D>,
    name: &str,
    node: &[&str],
    component: &str,
    field: &[PathSegment],
) -> Option<Supplier> {
    search_archetype(docs, name, node, component, field, 0)
}

enum Search {
    Found(FieldPath),
    /// This file did not write the place; ask the parents.
    NotHere,
}

const MAX_SEARCH_DEPTH: usize = 64;

fn search_archetype<D: std::ops::Deref<Target = ArchetypeDoc>>(
    docs: &impl Fn(&str) -> Option<D>,
    name: &str,
    node: &[&str],
    component: &str,
    field: &[PathSegment],
    depth: usize,
) -> Option<Supplier> {
    if depth > MAX_SEARCH_DEPTH {
        return None;
    }
    let doc = docs(name)?;
    match search_spec(
        docs,
        &doc.root,
        FieldPath::root(),
        node,
        component,
        field,
        depth,
    ) {
        SearchIn::Here(path) => Some(Supplier {
            archetype: name.to_string(),
            path,
        }),
        SearchIn::Elsewhere(found) => Some(found),
        SearchIn::Stop => None,
        SearchIn::NotHere => {
            doc.extends.iter().rev().find_map(|parent| {
                search_archetype(docs, parent, node, component, field, depth + 1)
            })
        }
    }
}

enum SearchIn {
    Here(FieldPath),
    Elsewhere(Supplier),
    NotHere,
    Stop,
}

fn search_spec<D: std::ops::Deref<Target = ArchetypeDoc>>(
    docs: &impl Fn(&str) -> Option<D>,
    spec: &EntitySpec,
    spec_path: FieldPath,
    node: &[&str],
    component: &str,
    field: &[PathSegment],
    depth: usize,
) -> SearchIn {
    let Some((first, rest)) = node.split_first() else {
        return match find_written(spec, spec_path, component, field) {
            Search::Found(path) => SearchIn::Here(path),
            Search::NotHere => SearchIn::NotHere,
        };
    };
    match spec.children.get(*first) {
        None => SearchIn::NotHere,
        Some(None) => SearchIn::Stop,
        Some(Some(entry)) => {
            let entry_path = spec_path.key(keys::CHILDREN).key(*first);
            match search_spec(docs, entry, entry_path, rest, component, field, depth) {
                SearchIn::NotHere => match &entry.archetype {
                    // The child starts over from its archetype: look there, not in our parents.
                    Some(archetype) => {
                        match search_archetype(docs, archetype, rest, component, field, depth + 1) {
                            Some(found) => SearchIn::Elsewhere(found),
                            None => SearchIn::Stop,
                        }
                    }
                    None => SearchIn::NotHere,
                },
                other => other,
            }
        }
    }
}

fn find_written(
    spec: &EntitySpec,
    spec_path: FieldPath,
    component: &str,
    field: &[PathSegment],
) -> Search {
    let Some(written) = spec.components.get(component) else {
        return Search::NotHere;
    };
    let mut path = spec_path.key(keys::COMPONENTS).key(written.key.clone());
    let mut value = &written.value;
    for (depth, segment) in field.iter().enumerate() {
        let next = match (value, segment) {
            // An operator wrote everything below it (`"Spawner": {"$mul": 0.5}` each number);
            // a path into the operator itself (`$remove[1]`) goes on to its place.
            (value, PathSegment::Key(key))
                if !key.starts_with('$') && Operator::of(value).is_some() =>
            {
                return Search::Found(path)
            }
            (value, PathSegment::Index(_)) if Operator::of(value).is_some() => {
                return Search::Found(path)
            }
            (Value::Object(object), PathSegment::Key(key)) => match object.get(key) {
                Some(next) => next,
                // Objects merge: a key this file doesn't mention came from further up.
                None => return Search::NotHere,
            },
            // Anything else replaces whole: this file wrote everything below here (the rest
            // of the path still places the error inside it, e.g. at an array element).
            _ => {
                path.0.extend(field[depth..].iter().cloned());
                return Search::Found(path);
            }
        };
        path.push(segment.clone());
        value = next;
    }
    Search::Found(path)
}
