//! Rebuilding what an edit affects: each affected archetype resolved (leaves on other cores),
//! compiled and decided (its status, problems and the version in effect), in dependency order,
//! and the library's diagnostics gathered again for them.

use super::*;

impl ArchetypeLibrary {
    /// Resolves every archetype of `affected_sorted` that has a file, and compiles each
    /// concrete one that resolved. When there are many, other cores work while this thread
    /// goes on resolving: they compile what it resolved, and resolve and compile the leaves
    /// (see [`rebuild_job`](crate::archetype::rebuild_job)). What is found never depends on
    /// threads: a leaf that does not resolve on its own is resolved again here, in order.
    /// Slots must exist for all of them.
    fn resolve_and_compile(
        &self,
        affected: &FxHashSet<Arc<str>>,
        affected_sorted: &[Arc<str>],
        dependents: &Dependents,
    ) -> Resolution {
        let lookup = |name: &str| self.lookup(affected, name);
        let targets = self.reference_targets();
        let run = |job: RebuildJob| self.run_job(job, &targets);
        let threads = if affected_sorted.len() < PARALLEL_MIN_ITEMS {
            1
        } else {
            worker_threads()
        };

        let (jobs, queue) = mpsc::channel::<RebuildJob>();
        let queue = Mutex::new(queue);
        let work = || run_queued(&queue, &run);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let mut resolver = Resolver::new(lookup, &self.sorted_names, &*self.registry);
            let (mut outcomes, sent) =
                self.resolve_in_order(&mut resolver, affected_sorted, dependents, &jobs);
            drop(jobs);
            // This thread does what is left (everything, on one thread).
            let mut done = work();
            for worker in workers {
                // A panic in a worker is a bug. What it did is then missing: it is done again
                // on this thread (below, and in `rebuild`), where the panic surfaces.
                if let Ok(more) = worker.join() {
                    done.extend(more);
                }
            }
            let mut compiled = FxHashMap::default();
            compiled.reserve(done.len());
            for (name, done) in done {
                match done {
                    JobDone::Compiled(result) => {
                        compiled.insert(name, result);
                    }
                    JobDone::Leaf(leaf) => {
                        outcomes.insert(name.clone(), (Ok(leaf.tree), leaf.depth, leaf.unused));
                        compiled.insert(name, leaf.compiled);
                    }
                }
            }
            // Leaves that did not resolve on their own: resolved here, as any other.
            for name in sent {
                (outcomes.entry(name)).or_insert_with_key(|name| resolve_here(&mut resolver, name));
            }
            Resolution {
                outcomes,
                compiled,
                cycles: resolver.take_cycles(),
            }
        })
    }

    /// Does one job of a rebuild on whichever core runs it; `None` leaves it to the
    /// rebuild's thread.
    fn run_job(&self, job: RebuildJob, targets: &ReferenceTargets) -> Option<(Arc<str>, JobDone)> {
        match job {
            RebuildJob::Compile(name, resolved) => {
                let compiled = self.compile_one(&name, &resolved, targets)?;
                let done = JobDone::Compiled((compiled, TreeHash::of(&resolved)));
                Some((name, done))
            }
            RebuildJob::Leaf(name, deps) => {
                let cell = self.rebuild_docs.get(&name)?;
                let doc = cell.take_or_read(|| self.doc_from_text(&name))?;
                let resolved = resolve_alone(&name, &doc, &deps, &*self.registry);
                let Some((tree, depth, unused)) = resolved else {
                    // For the rebuild's thread to resolve it again, in order.
                    cell.put_back(doc);
                    return None;
                };
                let Some(compiled) = self.compile_one(&name, &tree, targets) else {
                    cell.put_back(doc);
                    return None;
                };
                if compiled.problems.is_empty() && unused.is_empty() {
                    // Freed here, while this core has it at hand (problems are placed in it).
                    drop(doc);
                } else {
                    cell.put_back(doc);
                }
                let hash = TreeHash::of(&tree);
                // A tree that can be built again is needed only to compare it with the one in
                // effect when their hashes are the same: else (a first load, an edit that
                // changed it) it is dropped here rather than on the rebuild's thread.
                let compared = (self.ids.get(&name)).is_some_and(|id| {
                    let slot = &self.slots[id.0 as usize];
                    (slot.current.as_ref()).is_some_and(|current| current.resolved.hashed_as(&hash))
                });
                let rebuildable = self.sources.get(&name).is_some_and(|s| s.text.is_some());
                let tree = (compared || !rebuildable).then_some(tree);
                let leaf = LeafDone {
                    tree,
                    depth,
                    unused,
                    compiled: (compiled, hash),
                };
                Some((name, JobDone::Leaf(leaf)))
            }
        }
    }

    /// How the resolver sees the archetype `name` while the archetypes of `affected` are
    /// resolved again: their files, and the others' current resolved values.
    fn lookup(&self, affected: &FxHashSet<Arc<str>>, name: &str) -> Lookup {
        if !self.sources.contains_key(name) {
            return Lookup::Missing;
        }
        if affected.contains(name) {
            let cell = self.rebuild_docs.get(name);
            return match cell.and_then(|cell| cell.get_or_read(|| self.doc_from_text(name))) {
                Some(doc) => Lookup::Doc(doc),
                None => Lookup::Broken,
            };
        }
        let ready = self
            .states
            .get(name)
            .is_some_and(|s| s.status == Status::Ready);
        let current = self
            .ids
            .get(name)
            .and_then(|id| self.slots[id.0 as usize].current.as_ref());
        match (ready, current) {
            (true, Some(current)) => {
                Lookup::Resolved(current.resolved.arc().clone(), current.depth)
            }
            _ => Lookup::Broken,
        }
    }

    /// Compiles the archetype `name` (resolved to `resolved`) without changing its slot; `None`
    /// if it has no file or no slot.
    fn compile_one(
        &self,
        name: &Arc<str>,
        resolved: &ResolvedEntity,
        targets: &ReferenceTargets,
    ) -> Option<Compiled> {
        let summary = self.sources.get(name)?.summary.as_deref()?;
        let id = *self.ids.get(name)?;
        let slot = &self.slots[id.0 as usize];
        Some(compile_with_slot(
            slot,
            id,
            summary.is_abstract,
            resolved,
            &self.registry,
            targets,
        ))
    }

    /// Resolves, in order, each archetype of `sorted` that has a file, and sends each one that
    /// resolved to `jobs` to be compiled. A leaf (nothing builds on it) whose dependencies are
    /// all resolved when its turn comes is instead sent to `jobs` to be resolved and compiled:
    /// resolving it here would read only their trees (see [`resolve_alone`]), so the outcome
    /// is the same. Returns the outcomes found here, and the leaves sent.
    fn resolve_in_order<'a, L: Fn(&str) -> Lookup>(
        &self,
        resolver: &mut Resolver<'a, L>,
        sorted: &[Arc<str>],
        dependents: &Dependents,
        jobs: &mpsc::Sender<RebuildJob>,
    ) -> (FxHashMap<Arc<str>, ResolveOutcome>, Vec<Arc<str>>) {
        let mut outcomes = FxHashMap::default();
        outcomes.reserve(sorted.len());
        let mut sent = Vec::new();
        for name in sorted {
            let Some(summary) = self.sources.get(name).and_then(|s| s.summary.as_deref()) else {
                continue;
            };
            if !dependents.contains_key(&**name) {
                if let Some(deps) = known_dependencies(resolver, summary) {
                    // Only fails if every receiver is gone, and this thread is one.
                    let _ = jobs.send(RebuildJob::Leaf(name.clone(), deps));
                    sent.push(name.clone());
                    continue;
                }
            }
            let outcome = resolve_here(resolver, name);
            if let (Ok(Some(resolved)), _, _) = &outcome {
                let _ = jobs.send(RebuildJob::Compile(name.clone(), resolved.clone()));
            }
            outcomes.insert(name.clone(), outcome);
        }
        (outcomes, sent)
    }

    /// Re-resolves `touched` archetypes and everything that depends on them.
    pub(super) fn rebuild(&mut self, touched: BTreeSet<Arc<str>>) -> LibraryUpdate {
        // Every archetype whose file or mapping changed is touched: their entries are set
        // again, and the graph is what the files say now.
        if self.graph.deps().is_empty() {
            self.graph.reserve(touched.len());
        }
        for name in &touched {
            let list = (self.sources.get(name))
                .map(|source| source.summary.as_deref().map(|s| s.current().shared()));
            self.graph.set(name, list.map(Option::unwrap_or_default));
        }
        // Out of `self` while the rebuild reads it beside `&mut self`.
        let graph = std::mem::take(&mut self.graph);
        let (deps, dependents) = (graph.deps(), graph.dependents());
        let affected = affected_by(touched, dependents);
        // Sorted, so the work and its report come out in the same order every time.
        let mut affected_sorted: Vec<Arc<str>> = affected.iter().cloned().collect();
        affected_sorted.sort_unstable();

        // Archetype IDs are given in dependency order before any work, so they never depend on
        // how the work was spread over threads.
        let order = dependency_order(&affected_sorted, &affected, deps);
        // On a first load every archetype is new: room for all, so they are not grown (and
        // rehashed) one doubling at a time.
        if self.slots.is_empty() {
            self.slots.reserve(order.len());
            self.ids.reserve(order.len());
            self.states.reserve(order.len());
        }
        for name in &order {
            if self.sources.contains_key(name) {
                self.take_over_former_slot(name);
                self.slot_id(name);
            }
        }
        self.refresh_targets();
        // Parsed now: the files others build on (read in order) and those just read. A leaf's
        // is parsed by its job.
        self.rebuild_docs = (affected_sorted.iter())
            .filter_map(|name| {
                let source = self.sources.get(name)?;
                let doc = if dependents.contains_key(&**name) || source.fresh.is_some() {
                    RebuildDoc::new(self.current_doc(name))
                } else {
                    RebuildDoc::unread()
                };
                Some((name.clone(), doc))
            })
            .collect();
        // The rebuild holds the files it read now (so a leaf's job can free its own).
        for name in &affected_sorted {
            if let Some(source) = self.sources.get_mut(name) {
                source.fresh = None;
            }
        }
        let Resolution {
            outcomes,
            compiled,
            cycles,
        } = self.resolve_and_compile(&affected, &affected_sorted, dependents);
        let mut work = Decisions {
            deps,
            dependents,
            outcomes,
            precompiled: compiled,
            cycle_errors: FxHashMap::default(),
            cycle_of: FxHashMap::default(),
            update: LibraryUpdate::default(),
        };
        // About one change per archetype decided (grown, the list is copied a few times over).
        work.update.changes.reserve(order.len());
        self.note_cycles(&cycles, &mut work);

        // Decide, dependencies first, what each affected archetype becomes.
        for name in order {
            if self.sources.contains_key(&name) {
                self.decide(name, &mut work);
            } else {
                self.mark_deleted(&name, &mut work.update);
            }
        }

        // The files the leaves' jobs did not free (those others build on, those with problems)
        // have served; what stays is their summary. A fresh map: a cleared one would keep its
        // capacity.
        let docs: Vec<RebuildDoc> = std::mem::take(&mut self.rebuild_docs)
            .into_values()
            .collect();
        drop_on_every_core(docs);
        let mut update = work.update;
        self.graph = graph;
        self.note_naming_missing(&affected_sorted);
        self.collect_diagnostics(&affected_sorted);
        self.report_errors(&affected_sorted, &mut update.errors);
        update
    }

    /// Makes each inheritance cycle one error, in the file of its member first in name order,
    /// and notes each member's cycle (`a -> b -> a`): every member is held back.
    fn note_cycles<'a>(&self, cycles: &'a [Cycle], work: &mut Decisions<'a>) {
        for cycle in cycles {
            for link in &cycle.links {
                work.cycle_of
                    .entry(link.from.as_str())
                    .or_insert_with(|| cycle.names());
            }
            if let Some((first, diagnostic)) = self.cycle_diagnostic(cycle) {
                work.cycle_errors.entry(first).or_default().push(diagnostic);
            }
        }
    }

    /// Forgets the state of the archetype `name`, whose file is gone, and marks it deleted
    /// (once): a change to nothing. A name whose slot its new name took over is nothing.
    fn mark_deleted(&mut self, name: &Arc<str>, update: &mut LibraryUpdate) {
        self.remove_state(name);
        let Some(&id) = self.ids.get(name) else {
            return;
        };
        let slot = &mut self.slots[id.0 as usize];
        if !slot.deleted {
            slot.deleted = true;
            update.changes.push(ArchetypeChange {
                id,
                name: name.clone(),
                old: slot.current.clone(),
                new: None,
            });
        }
    }

    /// Decides what the archetype `name` (which has a file) becomes: its status, its problems,
    /// and the version in effect.
    fn decide(&mut self, name: Arc<str>, work: &mut Decisions<'_>) {
        let id = self.slot_id(&name);
        let deps = work.deps.get(&name);
        let broken_dep = deps.and_then(|list| self.first_broken_dependency(list));
        // An archetype it names has no file: what it is built on is not known either.
        let names_missing = deps.is_some_and(|list| {
            list.iter()
                .any(|dep| !self.sources.contains_key(dep.as_str()))
        });
        let (outcome, depth, unused) = match work.outcomes.remove(&name) {
            Some((outcome, depth, unused)) => (Some(outcome), depth, unused),
            None => (None, 1, Vec::new()),
        };
        let mut found = Findings {
            name,
            id,
            problems: Vec::new(),
            references: Vec::new(),
            new_archetype: None,
        };
        let status = self.status_of(outcome, depth, broken_dep, work, &mut found);
        // Under a broken or missing dependency what the archetype is built on is not known: no
        // warnings about what it inherits (or lacks), whichever order the files came in.
        let unused = match status {
            Status::Dependency(_) => Vec::new(),
            _ if names_missing => Vec::new(),
            _ => unused,
        };
        let noted = self.options.same_as_inherited;
        let unused = (unused.into_iter())
            .filter(|left| noted || left.code != DiagnosticCode::SameAsInherited);
        let warnings: Vec<Diagnostic> = (unused.into_iter())
            .map(|left| self.place_compile_problem(&found.name, CompileProblem::warning(left)))
            .collect();
        found.problems.splice(0..0, warnings);
        if let Status::Dependency(dep) = &status {
            (work.update.held_back).push(HeldBack::broken_dependency(&*found.name, dep.as_str()));
            let (problems, named) = self.findings_despite(&found.name, dep);
            found.problems.extend(problems);
            found.references = named;
        }
        found
            .problems
            .extend(work.cycle_errors.remove(&found.name).unwrap_or_default());
        let Findings {
            name,
            id,
            problems,
            references,
            new_archetype,
        } = found;
        self.put_in_effect(id, &name, new_archetype, &mut work.update);
        let state = State {
            status,
            problems,
            references,
        };
        self.set_state(name, state);
    }

    /// The first of `deps` (in `extends` order, then children) that has a file but is not
    /// ready.
    fn first_broken_dependency(&self, deps: &[String]) -> Option<String> {
        deps.iter()
            .find(|dep| {
                !self
                    .states
                    .get(dep.as_str())
                    .is_some_and(|s| s.status == Status::Ready)
                    && self.sources.contains_key(dep.as_str())
            })
            .cloned()
    }

    /// The status resolving gave the archetype of `found` (`None`: it was not resolved),
    /// compiling it when it resolved and nothing it depends on is broken.
    fn status_of(
        &mut self,
        outcome: Option<Result<Option<Arc<ResolvedEntity>>, Failure>>,
        depth: usize,
        broken_dep: Option<String>,
        work: &mut Decisions<'_>,
        found: &mut Findings,
    ) -> Status {
        let summary = self.sources[&found.name].summary.as_deref();
        match (outcome, summary) {
            (None, _) | (_, None) => Status::Errors,
            (Some(Err(Failure::Problems(problems))), _) => {
                let source = &self.sources[&found.name];
                for problem in problems {
                    let diagnostic = source.place(
                        crate::archetype::file::DocProblem {
                            path: problem.path,
                            at_key: false,
                            diagnostic: problem.diagnostic,
                        },
                        &found.name,
                    );
                    found.problems.push(diagnostic);
                }
                Status::Errors
            }
            // The first dependency (in `extends` order, then children) known to be
            // broken, so the report does not depend on which were resolved in this
            // rebuild (the resolver only sees file-level breakage of those).
            (Some(Err(Failure::Dependency(dep))), _) => {
                Status::Dependency(broken_dep.unwrap_or(dep))
            }
            (Some(Err(Failure::InCycle)), _) => match work.cycle_of.get(&*found.name) {
                Some(names) => Status::Cycle(names.clone()),
                None => Status::Errors,
            },
            (Some(Err(Failure::Cycle(_))), _) => Status::Errors,
            (Some(Ok(_)), _) if broken_dep.is_some() => {
                Status::Dependency(broken_dep.unwrap_or_default())
            }
            (Some(Ok(resolved)), Some(summary)) => {
                let (compiled, hash) = match (work.precompiled.remove(&found.name), &resolved) {
                    (Some(done), _) => done,
                    (None, Some(resolved)) => (
                        compile_with_slot(
                            &self.slots[found.id.0 as usize],
                            found.id,
                            summary.is_abstract,
                            resolved,
                            &self.registry,
                            &self.reference_targets(),
                        ),
                        TreeHash::of(resolved),
                    ),
                    // A tree is dropped only where it was compiled; never reached.
                    (None, None) => return Status::Errors,
                };
                let keep_tree = work.dependents.contains_key(&*found.name);
                let Some(tree) = self.tree_of(&found.name, summary, (resolved, hash), keep_tree)
                else {
                    return Status::Errors;
                };
                let written = (summary.is_abstract, summary.current().extends().to_vec());
                self.accept_compiled(written, tree, depth, compiled, found)
            }
        }
    }

    /// Records what compiling the archetype of `found` gave (its entity paths, problems and
    /// references), and makes its new version when neither its file nor its values have errors.
    fn accept_compiled(
        &mut self,
        (is_abstract, extends): (bool, Vec<String>),
        resolved: ResolvedTree,
        depth: usize,
        compiled: Compiled,
        found: &mut Findings,
    ) -> Status {
        let Compiled {
            compiled,
            problems,
            new_nodes,
            references,
        } = compiled;
        found.references = references;
        let slot = &mut self.slots[found.id.0 as usize];
        for path in &new_nodes {
            let node = intern_node(slot, path);
            debug_assert_eq!(slot.node_paths.len() as u32, node + 1);
        }
        let mut hard = compiled.is_none() && !is_abstract;
        for problem in problems {
            let diagnostic = self.place_compile_problem(&found.name, problem);
            hard |= diagnostic.is_error();
            found.problems.push(diagnostic);
        }
        let source = &self.sources[&found.name];
        if source.has_errors() || hard {
            return Status::Errors;
        }
        found.new_archetype = Some(Arc::new(Archetype {
            id: found.id,
            name: found.name.clone(),
            file: source.file.clone(),
            is_abstract,
            extends,
            resolved,
            depth,
            compiled,
        }));
        Status::Ready
    }

    /// The resolved tree the archetype `name` keeps: `resolved` itself when `keep` (others
    /// build on it), else a tree built again when it is read, from the file's text and the
    /// trees of the archetypes it names (in effect now: they are what it resolved from).
    fn tree_of(
        &self,
        name: &Arc<str>,
        summary: &DocSummary,
        (resolved, hash): (Option<Arc<ResolvedEntity>>, TreeHash),
        keep: bool,
    ) -> Option<ResolvedTree> {
        let text = self.sources.get(name).and_then(|s| s.text.clone());
        let Some(text) = text.filter(|_| !keep) else {
            // A tree is dropped only where it can be built again; `None` is never reached.
            return Some(ResolvedTree::kept(resolved?, hash));
        };
        let deps = (summary.current().all().iter())
            .filter_map(|dep| {
                let slot = &self.slots[self.ids.get(dep.as_str())?.0 as usize];
                let current = slot.current.as_ref()?;
                Some((
                    slot.name.clone(),
                    current.resolved.arc().clone(),
                    current.depth,
                ))
            })
            .collect();
        let recipe = TreeRecipe {
            name: name.clone(),
            text,
            registry: self.registry.clone(),
            max_depth: self.options.limits.max_depth,
            max_children_depth: self.options.limits.max_children_depth,
            renames: summary.mapped.is_some().then(|| self.renames.clone()),
            deps,
        };
        Some(ResolvedTree::rebuildable(resolved, recipe, hash))
    }

    /// Puts `new` (when there is one) in effect in the slot `id` of `name`, a change when it
    /// differs from what was; the slot has a file, so it is no longer deleted.
    fn put_in_effect(
        &mut self,
        id: ArchetypeId,
        name: &Arc<str>,
        new: Option<Arc<Archetype>>,
        update: &mut LibraryUpdate,
    ) {
        let slot = &mut self.slots[id.0 as usize];
        // A file that came back broken changes nothing in effect, but it is no longer deleted,
        // so instances are not orphans; they keep the last good version.
        let was_deleted = std::mem::replace(&mut slot.deleted, false);
        let Some(mut new) = new else {
            return;
        };
        let changed = match &slot.current {
            None => true,
            Some(old) => {
                was_deleted
                    || !old.resolved.same_as(&new.resolved)
                    || old.is_abstract != new.is_abstract
            }
        };
        // Compared: a tree that can be built again is not kept.
        if let Some(new) = Arc::get_mut(&mut new) {
            new.resolved.release();
        }
        if changed {
            update.changes.push(ArchetypeChange {
                id,
                name: name.clone(),
                old: slot.current.clone(),
                new: Some(new.clone()),
            });
        }
        slot.current = Some(new);
    }

    /// Adds the current problems of the files and archetypes of `names` to `errors`, then sorts
    /// them and drops duplicates.
    fn report_errors(&self, names: &[Arc<str>], errors: &mut Vec<Diagnostic>) {
        for name in names {
            if let Some(source) = self.sources.get(name) {
                errors.extend(source.problems.iter().cloned());
                errors.extend(source.name_problems.iter().cloned());
            }
            if let Some(state) = self.states.get(name) {
                errors.extend(state.problems.iter().cloned());
            }
        }
        sort_and_dedup(errors);
    }

    /// What can be found in an archetype held back by a broken `dependency`: the problems of
    /// its own values, checked as partial values, and a note that says the check stopped
    /// short and why (see [`partial_check`](crate::archetype::partial_check)).
    /// Also returns the archetype names its values name.
    fn findings_despite(&self, name: &str, dependency: &str) -> (Vec<Diagnostic>, Vec<Arc<str>>) {
        let Some(source) = self.sources.get(name) else {
            return (Vec::new(), Vec::new());
        };
        let Some(doc) = self.current_doc(name) else {
            return (Vec::new(), Vec::new());
        };
        let own = own_values(&doc.root);
        let context = self.reference_targets().context();
        let problems = context.install(|| check_partial(&own, &self.registry));
        let mut found: Vec<Diagnostic> = problems
            .into_iter()
            .map(|problem| self.place_compile_problem(name, problem))
            .collect();
        let broken_through = |held: &str| match self.states.get(held).map(|s| &s.status) {
            Some(Status::Dependency(next)) => Some(next.clone()),
            _ => None,
        };
        let note = crate::archetype::file::DocProblem {
            path: where_named(&doc.extends, &doc.root, dependency),
            at_key: false,
            diagnostic: not_fully_checked(dependency, broken_through),
        };
        found.push(source.place(note, name));
        (found, context.take_named())
    }

    /// The one error of an inheritance cycle, and the member it belongs to: placed at the
    /// link of the member first in name order, in its file, with every member's link
    /// (`extends` entry or child's `archetype`) labelled in that member's file.
    fn cycle_diagnostic(&self, cycle: &Cycle) -> Option<(Arc<str>, Diagnostic)> {
        let first = cycle.links.first()?;
        let (owner, source) = self.sources.get_key_value(first.from.as_str())?;
        let problem = crate::archetype::file::DocProblem {
            path: first.path.clone(),
            at_key: false,
            diagnostic: Diagnostic::error(
                DiagnosticCode::InheritanceCycle,
                format!("inheritance cycle: {}", cycle.names()),
            ),
        };
        let mut diagnostic = source.place(problem, owner);
        for link in &cycle.links {
            let Some(source) = self.sources.get(link.from.as_str()) else {
                continue;
            };
            let (from, to) = (quoted(&link.from), quoted(&link.to));
            let label = match link.child() {
                None => format!("{from} extends {to} here"),
                Some(child) => {
                    format!(
                        "{from}'s child {} is an instance of {to} here",
                        quoted(&child)
                    )
                }
            };
            let mut related = Related::new(source.file.clone(), label);
            if let Some((position, span)) = source.locate(&link.path, false) {
                related.position = Some(position);
                related.span = Some(span);
            }
            diagnostic.related.push(related);
        }
        Some((owner.clone(), diagnostic))
    }

    fn place_compile_problem(&self, name: &str, problem: CompileProblem) -> Diagnostic {
        let severity = problem.severity_under(self.options.unknown_fields);
        // A field missing from a value an abstract parent left partial is the concrete
        // archetype's to complete: report it in its own file (at its own value of the
        // component, or else at its `extends`).
        let missing = problem.missing_field;
        let mut diagnostic = Diagnostic::error(problem.code, problem.message)
            .with_severity(severity)
            .with_archetype(name)
            .with_component(problem.component.to_string())
            .with_field(problem.field.clone())
            .with_suggestion(problem.suggestion);
        let docs = |n: &str| self.current_doc(n);
        let node: Vec<&str> = problem.node.iter().map(|n| &**n).collect();
        let written = problem.written.as_ref().unwrap_or(&problem.field);
        let found = supplier(&docs, name, &node, &problem.component, written.segments());
        let found = match found {
            Some(found) if missing && found.archetype != name => {
                let own_docs = |n: &str| if n == name { docs(n) } else { None };
                let own = supplier(&own_docs, name, &node, &problem.component, &[]);
                Some(own.unwrap_or(crate::archetype::resolver::Supplier {
                    archetype: name.to_string(),
                    path: FieldPath::root().key(crate::archetype::file::keys::EXTENDS),
                }))
            }
            other => other,
        };
        match found.and_then(|f| Some((self.sources.get(f.archetype.as_str())?, f.path))) {
            Some((source, path)) => {
                diagnostic.file = Some(source.file.clone());
                source.locate_into(
                    &mut diagnostic,
                    &path,
                    problem.unknown_field || problem.at_key,
                );
            }
            None => diagnostic.file = self.sources.get(name).map(|s| s.file.clone()),
        }
        diagnostic
    }

    /// Gathers the diagnostics of the archetypes `names` (those a rebuild decided) again, then
    /// the library's: the others' have not changed.
    fn collect_diagnostics(&mut self, names: &[Arc<str>]) {
        for name in names {
            let mut found = Vec::new();
            if let Some(source) = self.sources.get(name) {
                found.extend(source.problems.iter().cloned());
                found.extend(source.name_problems.iter().cloned());
                if let Some(state) = self.states.get(name) {
                    found.extend(state.problems.iter().cloned());
                }
            }
            if found.is_empty() {
                self.diagnosed.remove(name);
            } else {
                self.diagnosed.insert(name.clone(), found);
            }
        }
        let mut all = self.scan_problems.clone();
        all.extend(self.diagnosed.values().flatten().cloned());
        sort_and_dedup(&mut all);
        self.diagnostics = all;
    }
}

/// The file of an archetype a rebuild resolves again, which the job of a leaf takes. A leaf's
/// file not parsed yet is parsed by whoever needs it first: its job, on whichever core runs
/// it, so a root's edit does not parse its thousand descendants one after another.
pub(super) struct RebuildDoc(Mutex<HeldDoc>);

/// What a [`RebuildDoc`] holds.
enum HeldDoc {
    /// Not parsed yet (parsed again from the kept text when needed).
    Unread,
    /// Parsed; `None` when the archetype has no file that is JSON.
    Read(Option<Arc<ArchetypeDoc>>),
    /// Taken by a leaf's job.
    Taken,
}

impl HeldDoc {
    /// The file, if it is parsed and not taken.
    fn parsed(&self) -> Option<Arc<ArchetypeDoc>> {
        match self {
            HeldDoc::Read(doc) => doc.clone(),
            HeldDoc::Unread | HeldDoc::Taken => None,
        }
    }
}

impl RebuildDoc {
    fn new(doc: Option<Arc<ArchetypeDoc>>) -> Self {
        RebuildDoc(Mutex::new(HeldDoc::Read(doc)))
    }

    fn unread() -> Self {
        RebuildDoc(Mutex::new(HeldDoc::Unread))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HeldDoc> {
        // Changed by whole assignments only, which leave it whole if a panic poisons it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The file, if it is parsed and no leaf's job took it.
    pub(super) fn get(&self) -> Option<Arc<ArchetypeDoc>> {
        self.lock().parsed()
    }

    /// The file, parsed now with `read` if it was not; `None` if a leaf's job took it.
    fn get_or_read(
        &self,
        read: impl FnOnce() -> Option<Arc<ArchetypeDoc>>,
    ) -> Option<Arc<ArchetypeDoc>> {
        let mut held = self.lock();
        if let HeldDoc::Unread = *held {
            *held = HeldDoc::Read(read());
        }
        held.parsed()
    }

    /// Takes the file for a leaf's job, parsed with `read` (outside the lock) if it was not.
    fn take_or_read(
        &self,
        read: impl FnOnce() -> Option<Arc<ArchetypeDoc>>,
    ) -> Option<Arc<ArchetypeDoc>> {
        let held = std::mem::replace(&mut *self.lock(), HeldDoc::Taken);
        match held {
            HeldDoc::Read(doc) => doc,
            HeldDoc::Unread => read(),
            HeldDoc::Taken => None,
        }
    }

    fn put_back(&self, doc: Arc<ArchetypeDoc>) {
        *self.lock() = HeldDoc::Read(Some(doc));
    }
}

/// Drops `items` on every core (up to 8) when there are at least [`PARALLEL_MIN_ITEMS`]:
/// freeing a library's worth of parsed documents is a walk of every tree in them.
fn drop_on_every_core<T: Send>(mut items: Vec<T>) {
    if items.len() < PARALLEL_MIN_ITEMS {
        return;
    }
    let threads = worker_threads();
    if threads < 2 {
        return;
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        while items.len() > chunk {
            let part = items.split_off(items.len() - chunk);
            scope.spawn(move || drop(part));
        }
        drop(std::mem::take(&mut items));
    });
}

/// What [`ArchetypeLibrary::resolve_and_compile`] found: each archetype's outcome, what was
/// compiled, and every inheritance cycle.
struct Resolution {
    outcomes: FxHashMap<Arc<str>, ResolveOutcome>,
    compiled: FxHashMap<Arc<str>, CompileDone>,
    cycles: Vec<Cycle>,
}

/// What resolving one archetype gave, its depth, and the operators it settled with nothing to
/// work on. A tree resolved and dropped on another core (see [`LeafDone::tree`]) is `Ok(None)`;
/// what compiling it gave is then among the compiled ones.
type ResolveOutcome = (
    Result<Option<Arc<ResolvedEntity>>, Failure>,
    usize,
    Vec<ResolveWarning>,
);

/// The trees and depths of every archetype the file of `summary` names, when all of them are
/// known to `resolver` without resolving anything.
fn known_dependencies<'a, L: Fn(&str) -> Lookup>(
    resolver: &Resolver<'a, L>,
    summary: &DocSummary,
) -> Option<Box<[DependencyTree]>> {
    (summary.current().all().iter())
        .map(|dep| {
            let (tree, depth) = resolver.known(dep)?;
            Some((Arc::from(dep.as_str()), tree, depth))
        })
        .collect()
}

/// Resolves `name` on the rebuild's thread: its outcome, depth and unused operators.
fn resolve_here<'a, L: Fn(&str) -> Lookup>(
    resolver: &mut Resolver<'a, L>,
    name: &str,
) -> ResolveOutcome {
    let outcome = resolver.resolve(name).map(Some);
    let depth = resolver.depth(name).unwrap_or(1);
    (outcome, depth, resolver.take_unused(name))
}

/// `touched` and every archetype that depends on one of them, directly or not.
fn affected_by(touched: BTreeSet<Arc<str>>, dependents: &Dependents) -> FxHashSet<Arc<str>> {
    let mut affected: FxHashSet<Arc<str>> = FxHashSet::default();
    let mut queue: Vec<Arc<str>> = touched.into_iter().collect();
    while let Some(name) = queue.pop() {
        if affected.insert(name.clone()) {
            if let Some(list) = dependents.get(&*name) {
                queue.extend(list.iter().cloned());
            }
        }
    }
    affected
}

/// What [`ArchetypeLibrary::rebuild`] carries from resolving to deciding, archetype by
/// archetype, what each becomes.
struct Decisions<'a> {
    /// Each archetype's dependencies.
    deps: &'a DependencyLists,
    /// For each name, the archetypes that depend on it: an archetype none depends on keeps no
    /// resolved tree ([`ResolvedTree`]).
    dependents: &'a Dependents,
    /// What resolving gave, taken as each archetype is decided.
    outcomes: FxHashMap<Arc<str>, ResolveOutcome>,
    /// What other threads compiled, taken as each archetype is decided.
    precompiled: FxHashMap<Arc<str>, CompileDone>,
    /// Each inheritance cycle's error, by the member whose file it goes in.
    cycle_errors: FxHashMap<Arc<str>, Vec<Diagnostic>>,
    /// Each cycle member's cycle (`a -> b -> a`).
    cycle_of: FxHashMap<&'a str, String>,
    /// What the rebuild changed and found so far.
    update: LibraryUpdate,
}

/// What deciding one archetype found: its problems, the names its values name, and its new
/// version when it has one.
struct Findings {
    name: Arc<str>,
    id: ArchetypeId,
    problems: Vec<Diagnostic>,
    references: Vec<Arc<str>>,
    new_archetype: Option<Arc<Archetype>>,
}

/// Compiles `resolved` without changing `slot`: entity paths the slot does not know yet get the
/// next numbers, and are returned for [`intern_node`] to record in the same order. An abstract
/// archetype is not compiled, only checked as far as its partial values go.
fn compile_with_slot(
    slot: &Slot,
    id: ArchetypeId,
    is_abstract: bool,
    resolved: &ResolvedEntity,
    registry: &ComponentRegistry,
    targets: &ReferenceTargets,
) -> Compiled {
    let context = targets.context();
    if is_abstract {
        let problems = context.install(|| check_partial(resolved, registry));
        return Compiled {
            compiled: None,
            problems,
            new_nodes: Vec::new(),
            references: context.take_named(),
        };
    }
    let mut new_nodes: Vec<Arc<str>> = Vec::new();
    let mut new_ids: FxHashMap<Arc<str>, u32> = FxHashMap::default();
    let mut intern = |path: &str| -> u32 {
        if let Some(node) = node_number(slot, path).or_else(|| new_ids.get(path).copied()) {
            return node;
        }
        let node = (slot.node_paths.len() + new_nodes.len()) as u32;
        let path: Arc<str> = Arc::from(path);
        new_nodes.push(path.clone());
        new_ids.insert(path, node);
        node
    };
    let (compiled, problems) = context.install(|| compile(id, resolved, registry, &mut intern));
    Compiled {
        compiled,
        problems,
        new_nodes,
        references: context.take_named(),
    }
}

/// `affected` ordered so that every archetype comes after the affected archetypes it depends
/// on (cycles, already reported as errors, are broken arbitrarily).
fn dependency_order(
    sorted: &[Arc<str>],
    affected: &FxHashSet<Arc<str>>,
    deps: &DependencyLists,
) -> Vec<Arc<str>> {
    let mut seen = FxHashSet::default();
    let mut out = Vec::with_capacity(sorted.len());
    // Depth first, each archetype after its dependencies, with a stack of our own (archetype,
    // next dependency to visit): a chain of thousands of files must not overflow the call stack.
    let mut stack: Vec<(Arc<str>, usize)> = Vec::new();
    for name in sorted {
        if !seen.insert(name.clone()) {
            continue;
        }
        stack.push((name.clone(), 0));
        while let Some((current, next)) = stack.last_mut() {
            match deps.get(&**current).and_then(|list| list.get(*next)) {
                Some(dep) => {
                    *next += 1;
                    if let Some(dep) = affected.get(dep.as_str()) {
                        if seen.insert(dep.clone()) {
                            stack.push((dep.clone(), 0));
                        }
                    }
                }
                None => {
                    out.push(current.clone());
                    stack.pop();
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every diagnostic of `library`, as printed.
    fn messages(library: &ArchetypeLibrary) -> Vec<String> {
        library
            .diagnostics()
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    fn library(files: &[(&str, &str)]) -> ArchetypeLibrary {
        let mut library =
            ArchetypeLibrary::empty("root", ComponentRegistry::new(), LoadOptions::default());
        library.set_sources(files.iter().map(|(path, text)| (*path, Some(*text))));
        library
    }

    /// An archetype with a fractional `$range` keeps its one spawn template, and the 256
    /// outcomes of the range side by side, each the size of the component: spawns clone the
    /// template with a rolled outcome in its place (there was a template per outcome, each a
    /// copy of every component: a gigabyte for 10,000 such archetypes spawned once).
    #[test]
    fn a_varied_archetype_keeps_its_outcomes_side_by_side_and_no_template_per_outcome() {
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Speed {
            value: f32,
        }
        let mut registry = ComponentRegistry::new();
        registry.register::<Speed>().unwrap();
        let mut library = ArchetypeLibrary::empty("root", registry, LoadOptions::default());
        library.set_source(
            "runner.json",
            Some(r#"{ "components": { "Name": "runner", "Speed": { "value": { "$range": [0.0, 1.0] } } } }"#),
        );
        let mut world = World::new();
        let speeds: Vec<f32> = (0..2000)
            .map(|_| {
                let runner = library.spawn(&mut world, "runner").unwrap();
                world.get::<&Speed>(runner).unwrap().value
            })
            .collect();
        let distinct: BTreeSet<u32> = speeds.iter().map(|speed| speed.to_bits()).collect();
        assert!(distinct.len() > 200, "{} distinct speeds", distinct.len());
        assert!(speeds.iter().all(|speed| (0.0..=1.0).contains(speed)));
        let runner = library.get("runner").unwrap();
        let node = &runner.compiled.as_ref().unwrap().nodes[0];
        let (_, varied) = &node.varied[0];
        assert_eq!(varied.kept(), (256, 256 * std::mem::size_of::<Speed>()));
    }

    #[test]
    fn documents_are_not_kept_after_a_rebuild() {
        let library = library(&[("base.json", r#"{ "components": { "Name": "x" } }"#)]);
        assert!(library.sources.values().all(|s| s.fresh.is_none()));
        assert!(library.rebuild_docs.is_empty());
        assert!(library.sources.values().all(|s| s.summary.is_some()));
    }

    #[test]
    fn a_document_parsed_again_places_provenance_as_the_first_read() {
        let base = "{\n  \"abstract\": true,\n  \"components\": { \"Name\": \"x\" }\n}";
        let library = library(&[
            ("base.json", base),
            ("goblin.json", r#"{ "extends": ["base"] }"#),
        ]);
        let (file, position) = library
            .provenance("goblin", "", "Name", &FieldPath::root())
            .unwrap();
        assert_eq!(file, Path::new("root").join("base.json"));
        let position = position.unwrap();
        assert_eq!((position.line, position.column), (3, 27));
        assert_eq!(library.declared("base"), Some((true, &[][..])));
        assert_eq!(
            library.declared("goblin"),
            Some((false, &["base".to_string()][..]))
        );
    }

    #[test]
    fn declared_parents_are_current_names_after_a_rename() {
        let library = library(&[
            (
                "monster.json",
                r#"{ "formerly": ["beast"], "abstract": true }"#,
            ),
            ("goblin.json", r#"{ "extends": ["beast"] }"#),
        ]);
        assert_eq!(
            library.declared("goblin"),
            Some((false, &["monster".to_string()][..]))
        );
        let doc = library.current_doc("goblin").unwrap();
        assert_eq!(doc.extends, ["monster"]);
        assert!(library.get("goblin").is_some());
    }

    const BASE: &str = r#"{ "abstract": true, "components": { "Name": "base" } }"#;

    #[test]
    fn a_leaf_tree_is_built_on_first_read_as_it_was_resolved() {
        let goblin = r#"{ "extends": ["base"], "children": { "hat": { "components": { "Name": "hat" } } } }"#;
        let lazy = library(&[("base.json", BASE), ("goblin.json", goblin)]);
        // Here something builds on the goblin, so its tree is kept as resolved.
        let kept = library(&[
            ("base.json", BASE),
            ("goblin.json", goblin),
            ("chief.json", r#"{ "extends": ["goblin"] }"#),
        ]);
        let (lazy, kept) = (lazy.get("goblin").unwrap(), kept.get("goblin").unwrap());
        assert!(!lazy.resolved.is_built());
        assert!(kept.resolved.is_built());
        assert_eq!(lazy.resolved(), kept.resolved());
        assert!(lazy.resolved.is_built());
        assert_eq!(lazy.resolved().components["Name"], "base");
    }

    #[test]
    fn an_edit_to_a_parent_changes_a_leaf_built_on_first_read() {
        let mut library = library(&[
            ("base.json", BASE),
            ("goblin.json", r#"{ "extends": ["base"] }"#),
        ]);
        let before = library.get("goblin").unwrap().clone();
        let update = library.set_source(
            "base.json",
            Some(r#"{ "abstract": true, "components": { "Name": "changed" } }"#),
        );
        let changed: Vec<&str> = update.changes.iter().map(|c| &*c.name).collect();
        assert_eq!(changed, ["base", "goblin"]);
        let goblin = library.get("goblin").unwrap();
        assert!(!goblin.resolved.is_built());
        assert_eq!(goblin.resolved().components["Name"], "changed");
        assert_eq!(before.resolved().components["Name"], "base");
    }

    #[test]
    fn an_edit_that_resolves_the_same_is_no_change() {
        let mut library = library(&[
            ("base.json", BASE),
            ("goblin.json", r#"{ "extends": ["base"] }"#),
        ]);
        let update = library.set_source("goblin.json", Some("{\n  \"extends\": [\"base\"]\n}"));
        assert!(update.changes.is_empty());
        let update = library.set_source(
            "goblin.json",
            Some(r#"{ "extends": ["base"], "components": { "Name": "g" } }"#),
        );
        assert_eq!(update.changes.len(), 1);
    }

    #[test]
    fn a_leaf_resolved_as_a_job_is_the_one_resolved_in_order() {
        let goblin = r#"{ "extends": ["BASE"], "components": { "Name": "g" }, "children": { "hat": { "components": { "Name": "hat" } } } }"#;
        // `base` sorts before `goblin`: when the goblin's turn comes its parent is resolved,
        // so it is resolved as a job. `zbase` sorts after it: resolved in order, here.
        let as_job = library(&[
            ("base.json", BASE),
            ("goblin.json", &goblin.replace("BASE", "base")),
        ]);
        let in_order = library(&[
            ("zbase.json", BASE),
            ("goblin.json", &goblin.replace("BASE", "zbase")),
        ]);
        let (as_job, in_order) = (
            as_job.get("goblin").unwrap(),
            in_order.get("goblin").unwrap(),
        );
        // Either way the tree was dropped once compiled (a first load), and builds the same.
        assert!(!as_job.resolved.is_built());
        assert!(!in_order.resolved.is_built());
        assert_eq!(as_job.resolved(), in_order.resolved());
        assert_eq!(as_job.depth, in_order.depth);
        assert_eq!(as_job.resolved().children["hat"].components["Name"], "hat");
    }

    #[test]
    fn a_leaf_that_does_not_resolve_as_a_job_is_resolved_in_order() {
        // `a0` … `a31`: the deepest chain allowed. `a32` sorts after its parent `a31`, so it is
        // sent as a job, where it is one too deep: it is resolved again here, and reported.
        let texts: Vec<(String, String)> = (0..=32)
            .map(|k| {
                let text = match k {
                    0 => r#"{ "components": { "Name": "a" } }"#.to_string(),
                    _ => format!(r#"{{ "extends": "a{}" }}"#, k - 1),
                };
                (format!("a{k}.json"), text)
            })
            .collect();
        let files: Vec<(&str, &str)> = texts.iter().map(|(p, t)| (&**p, &**t)).collect();
        let library = library(&files);
        let messages = messages(&library);
        let file = Path::new("root").join("a32.json");
        assert_eq!(
            messages,
            [format!(
                "{}:1:14: error[too-deep]: this archetype is built on a chain of more than 32 \
                 archetypes (through `extends` and children's `archetype`); make the chain \
                 shorter",
                file.display()
            )]
        );
        assert!(library.get("a31").is_some());
        assert!(library.get("a32").is_none());
    }

    #[test]
    fn a_leaf_resolved_as_a_job_has_its_problems_placed_in_its_file() {
        // `leaf` sorts after its parent, so it is resolved as a job, which keeps its file for
        // the problems to be placed in.
        let leaf = "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Name\": { \"$mul\": 2 },\n    \"Transform\": { \"speed\": 1 }\n  }\n}";
        let library = library(&[
            ("base.json", r#"{ "abstract": true }"#),
            ("leaf.json", leaf),
        ]);
        let messages = messages(&library);
        let file = Path::new("root").join("leaf.json");
        let file = file.display();
        assert_eq!(
            messages,
            [
                format!(
                    "{file}:4:13: warning[unused-operator]: `$mul` has nothing to scale: nothing \
                     this archetype is built on sets `Name`, and its type gives no default number there, so it \
                     is left out"
                ),
                format!(
                    "{file}:5:20: error[unknown-field]: unknown field `speed` in component \
                     `Transform`"
                ),
            ]
        );
    }

    #[test]
    fn a_leaf_naming_an_old_name_is_built_with_the_current_one() {
        let library = library(&[
            (
                "monster.json",
                r#"{ "formerly": ["beast"], "abstract": true, "components": { "Name": "m" } }"#,
            ),
            ("goblin.json", r#"{ "extends": ["beast"] }"#),
        ]);
        let goblin = library.get("goblin").unwrap();
        assert!(!goblin.resolved.is_built());
        assert_eq!(goblin.resolved().components["Name"], "m");
    }
}
