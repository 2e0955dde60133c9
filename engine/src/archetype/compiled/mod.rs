//! Compiled archetypes: typed spawn templates built once per concrete archetype, so spawning
//! clones values instead of reading JSON.
//!
//! Three spawn paths, fastest first:
//! - a single entity without entity references spawns from a [`SpawnTemplate`] (hecs finds
//!   its archetype from a cached key, as for a static tuple; one clone per component, the
//!   fresh `StableId` put in place of the template's);
//! - many such entities spawn as one hecs column batch;
//! - anything with children, `#` references or overrides goes through an `EntityBuilder` per
//!   entity, with all entity handles reserved first so references can point anywhere.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};

use hecs::{ColumnBatchType, DynamicBundle, Entity, EntityBuilder, World};
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use crate::archetype::instance::{override_shape, OverrideOrigin, OverrideShapes};
use crate::archetype::name::check_local_name;
use crate::archetype::reference_context::ReferenceContext;
use crate::archetype::resolver::{ResolveWarning, ResolvedEntity};
use crate::archetype::spawn_rng::SpawnRng;
use crate::archetype::variation::{rolled_value, RollError, Rolled, Spec, SpecProblem, Varied};
use crate::component::ReadErrorKind;
use crate::component::StableId;
use crate::component::{
    with_installed_mapper, with_mapper, EntityMapper, EntityRef, RefIn, RefOut, RefWire,
};
use crate::component::{ArchetypeId, ArchetypeInstance, OverridesId};
use crate::component::{Children, Parent};
use crate::component::{ComponentId, ComponentRegistry, TypedValue, ValueError};
use crate::component::{MapError, ReadOnly, RefPathError};
use crate::component::{SpawnTemplate, TemplateBuilder};
use crate::diagnostic::{DiagnosticCode, Severity};
use crate::json::did_you_mean;
use crate::json::FieldPath;

#[cfg(feature = "binary")]
mod cooked;
mod template;

#[cfg(feature = "binary")]
pub(crate) use cooked::{assemble, CookedNode};
pub(crate) use template::NodeTemplate;

/// How many bundle types' templates an archetype keeps where they are read without a lock.
const RECENT_BUNDLES: usize = 8;

/// A concrete archetype ready to spawn.
pub(crate) struct CompiledArchetype {
    /// Entities of one instance: the root first, then children depth-first in name order.
    pub nodes: Vec<CompiledNode>,
    /// One entity, no references: the template fast path applies.
    pub simple: bool,
    /// Node paths in node order, and path → node index, for resolving `#` references.
    paths: Arc<[Arc<str>]>,
    index: Arc<FxHashMap<Arc<str>, usize>>,
    /// The templates of the bundle types given to `spawn_with_bundle`, made on the first
    /// such spawn: out of line, as most archetypes are never spawned with a bundle.
    bundle_templates: OnceLock<Box<BundleTemplates>>,
}

/// What an archetype keeps for spawns with a bundle.
#[derive(Default)]
struct BundleTemplates {
    /// Per bundle type given to `spawn_with_bundle`: the root's values but the bundle's types,
    /// with that bundle's override shape, which a spawn spawns together with the bundle;
    /// `None` for a bundle that cannot be (see
    /// [`bundle_template`](CompiledArchetype::bundle_template)). Built on first use.
    all: Mutex<FxHashMap<TypeId, Option<Arc<SpawnTemplate>>>>,
    /// The first few of those, each set once, read without the lock (a spawn with a bundle
    /// should cost about what a plain spawn costs).
    recent: [OnceLock<(TypeId, Option<Arc<SpawnTemplate>>)>; RECENT_BUNDLES],
}

/// One entity of an archetype instance.
pub(crate) struct CompiledNode {
    /// `""` for the root, `"turret"`, `"turret/barrel"` for children.
    pub path: Arc<str>,
    /// The instance marker every entity spawned from this node carries.
    pub marker: ArchetypeInstance,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// The node that `#` references written for this entity are relative to.
    pub base: usize,
    /// Every component without entity references, plus the instance marker (and a fresh
    /// `StableId` per spawn).
    template: NodeTemplate,
    /// The same component values, for builders and column batches.
    pub typed: Vec<(ComponentId, TypedValue)>,
    /// Components holding `#` references: decoded per spawn, once the entities exist (their
    /// variations rolled first, from `ref_specs`).
    pub with_refs: Vec<(ComponentId, Value)>,
    /// The variations of the components of `with_refs` that have some.
    ref_specs: Vec<(ComponentId, Spec)>,
    /// Components of `typed` whose values vary per spawn (`$range`, `$pick`): `typed` and the
    /// template hold their first outcome, each spawn rolls its own.
    pub varied: Vec<(ComponentId, Varied)>,
    /// Where in the template each component of `varied` is, in the same order (ascending), so a
    /// spawn clones the template with the rolled values in their places; `None` when the
    /// template cannot take them (hecs's own, for big values): spawns write them in place.
    varied_places: Option<Box<[usize]>>,
}

/// At most this many varied components of one entity are rolled into its template's places
/// without allocating; an entity with more writes its rolled values in place after the spawn.
const ROLLED_IN_TEMPLATE: usize = 4;

impl CompiledNode {
    /// The node's spawn template, made now if it is made on first spawn.
    #[inline]
    fn template(&self, registry: &ComponentRegistry) -> &NodeTemplate {
        match &self.template {
            NodeTemplate::Later(later) => later.get_or_init(|| {
                let values: Vec<(ComponentId, &TypedValue)> =
                    self.typed.iter().map(|(id, value)| (*id, value)).collect();
                Box::new(NodeTemplate::new(registry, &values, self.marker))
            }),
            made => made,
        }
    }

    /// The column layout of a batch of this entity: its components, the instance marker and
    /// `StableId`. Made for each batch rather than kept: a batch costs far more than listing
    /// its columns, and kept it would be a list of type infos for every entity of every
    /// archetype.
    pub(crate) fn batch_type(&self, registry: &ComponentRegistry) -> ColumnBatchType {
        let mut batch_type = ColumnBatchType::new();
        for (id, _) in &self.typed {
            registry.ops(*id).add_column(&mut batch_type);
        }
        batch_type.add::<ArchetypeInstance>();
        batch_type.add::<StableId>();
        batch_type
    }

    /// A rolled value of each component that varies per spawn.
    pub(crate) fn rolled<'a>(
        &'a self,
        registry: &ComponentRegistry,
        rng: &SpawnRng,
    ) -> Result<Vec<(ComponentId, Rolled<'a>)>, ValueError> {
        self.varied
            .iter()
            .map(|(id, varied)| Ok((*id, varied.roll(registry.ops(*id), rng)?)))
            .collect()
    }

    /// Adds the node's component values to `builder` (each varied one as `rolled` has it),
    /// except those `skip` names.
    pub(crate) fn add_values(
        &self,
        registry: &ComponentRegistry,
        rolled: &[(ComponentId, Rolled<'_>)],
        builder: &mut EntityBuilder,
        skip: impl Fn(ComponentId) -> bool,
    ) {
        for (id, value) in &self.typed {
            if skip(*id) {
                continue;
            }
            let ops = registry.ops(*id);
            match rolled.iter().find(|(varied, _)| varied == id) {
                Some((_, value)) => value.add_to_builder(ops, builder),
                None => ops.add_to_builder(value, builder),
            }
        }
    }

    /// The value of `component` (held in `with_refs` as `value`) for one spawn: its variations
    /// rolled when it has some.
    pub(crate) fn ref_value<'v>(
        &self,
        component: ComponentId,
        value: &'v Value,
        rng: &SpawnRng,
    ) -> Cow<'v, Value> {
        match self.ref_specs.iter().find(|(id, _)| *id == component) {
            Some((_, spec)) => Cow::Owned(spec.rolled(rng)),
            None => Cow::Borrowed(value),
        }
    }

    /// Spawns one entity of this node (the root of a simple archetype) with its varied
    /// components rolled: the template cloned with each rolled value in its place, or, when the
    /// template cannot take them, spawned and then written over. Kept out of
    /// [`CompiledArchetype::spawn`], so the common spawn stays small enough to inline.
    fn spawn_rolled(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        rng: &SpawnRng,
    ) -> Result<Entity, ValueError> {
        let made = self.template(registry);
        let (NodeTemplate::Fast(template), Some(places)) = (made, &self.varied_places) else {
            let entity = made.spawn(world, rng)?;
            return roll_in_place(self, world, registry, entity, rng);
        };
        if places.len() > ROLLED_IN_TEMPLATE {
            let entity = made.spawn(world, rng)?;
            return roll_in_place(self, world, registry, entity, rng);
        }
        let mut rolled: [Option<Rolled<'_>>; ROLLED_IN_TEMPLATE] = Default::default();
        for (slot, (id, varied)) in rolled.iter_mut().zip(&self.varied) {
            *slot = Some(varied.roll(registry.ops(*id), rng)?);
        }
        let mut replaced: [(usize, &(dyn Any + Send + Sync)); ROLLED_IN_TEMPLATE] =
            [(0, &()); ROLLED_IN_TEMPLATE];
        for ((slot, place), value) in replaced.iter_mut().zip(places.iter()).zip(&rolled) {
            let value = value.as_ref().and_then(Rolled::value);
            *slot = (*place, value.ok_or_else(misplaced_outcome)?);
        }
        template
            .spawn_replacing(world, || rng.next_id(), &replaced[..places.len()])
            .ok_or_else(misplaced_outcome)
    }

    /// The changes of `component` that hot reload leaves to the values each entity rolled.
    pub(crate) fn varied_mask(&self, component: ComponentId) -> Option<Value> {
        self.varied
            .iter()
            .find(|(id, _)| *id == component)
            .map(|(_, varied)| varied.mask())
    }
}

/// The error of a rolled value that its spawn template does not take (a bug, not bad data).
#[cold]
fn misplaced_outcome() -> ValueError {
    ValueError::invalid(
        FieldPath::root(),
        "internal error: a rolled value that does not fit its spawn template",
    )
}

/// The problem of a component value that does not decode: an entity reference naming no child
/// (what the reference checker noted, `failure`), or what serde said.
fn decode_problem(
    registry: &ComponentRegistry,
    id: ComponentId,
    node: &LayoutNode<'_>,
    name: &str,
    error: ValueError,
    failure: Option<(String, Option<String>)>,
) -> CompileProblem {
    match failure {
        Some((message, suggestion)) => {
            let message = format!("invalid value for {}: {message}", place(name, &error.path));
            problem(
                node,
                name,
                error.path,
                DiagnosticCode::UnknownChild,
                message,
                suggestion,
            )
        }
        None => value_problem(registry, id, node, name, error),
    }
}

/// A problem compiling one component of one entity of an archetype.
#[derive(Clone, Debug)]
pub(super) struct CompileProblem {
    /// Child names from the root to the entity (empty for the root).
    pub node: Vec<Arc<str>>,
    pub component: Arc<str>,
    pub field: FieldPath,
    /// Where in the component as written the problem is, when that is more precise than
    /// `field`: the value of a `$pick` (or the end of a `$range`) that does not decode.
    pub written: Option<FieldPath>,
    pub code: DiagnosticCode,
    pub message: String,
    pub suggestion: Option<String>,
    /// Unknown fields: an error or a warning depending on the library's settings.
    pub unknown_field: bool,
    /// A required field is absent (the concrete archetype's to complete).
    pub missing_field: bool,
    /// Shown at the key `field` ends with rather than at its value (an unknown axis).
    pub at_key: bool,
    /// An error, or (an operator with nothing to work on) a warning.
    pub severity: Severity,
}

impl CompileProblem {
    /// Its severity in a library whose unknown fields are `unknown_fields`
    /// ([`LoadOptions::unknown_fields`](crate::LoadOptions::unknown_fields)).
    pub fn severity_under(&self, unknown_fields: Severity) -> Severity {
        match self.unknown_field {
            true => unknown_fields,
            false => self.severity,
        }
    }

    /// The warning about an operator a concrete archetype settled with nothing to work on.
    pub fn warning(unused: ResolveWarning) -> Self {
        CompileProblem {
            node: unused.node,
            component: unused.component,
            field: unused.field,
            written: None,
            severity: match unused.code {
                DiagnosticCode::SameAsInherited => Severity::Note,
                _ => Severity::Warning,
            },
            code: unused.code,
            message: unused.message,
            suggestion: unused.suggestion,
            unknown_field: false,
            missing_field: false,
            at_key: false,
        }
    }
}

/// Builds the spawn templates of a concrete archetype. `intern` maps a node path to the number
/// stored in instance markers. Returns the compiled archetype (if it has no errors) and every
/// problem found, unknown fields included.
pub(super) fn compile(
    archetype: ArchetypeId,
    resolved: &ResolvedEntity,
    registry: &ComponentRegistry,
    intern: &mut dyn FnMut(&str) -> u32,
) -> (Option<CompiledArchetype>, Vec<CompileProblem>) {
    let mut layout = Vec::new();
    flatten(resolved, None, Vec::new(), &mut layout);
    let (paths, index) = node_index(&mut layout);

    let mut nodes = Vec::with_capacity(layout.len());
    // One mapper checks the `#` references of every value (installing one per value would
    // cost an allocation each); `base` and the findings are reset per value.
    let mut compiler = NodeCompiler {
        archetype,
        registry,
        paths: &paths,
        problems: Vec::new(),
        hard_error: false,
    };
    let ((), _) = with_mapper(CheckRefs::new(paths.clone(), index.clone()), || {
        for (i, node) in layout.iter().enumerate() {
            nodes.push(compiler.node(node, base_of(&layout, i), intern));
        }
    });
    let NodeCompiler {
        problems,
        hard_error,
        ..
    } = compiler;
    link_children(&mut nodes);
    if hard_error {
        return (None, problems);
    }
    let simple = nodes.len() == 1 && nodes[0].with_refs.is_empty();
    (
        Some(CompiledArchetype {
            nodes,
            simple,
            paths,
            index,
            bundle_templates: OnceLock::new(),
        }),
        problems,
    )
}

/// Lists each node's children (in node order) in its `children`.
fn link_children(nodes: &mut [CompiledNode]) {
    for i in 0..nodes.len() {
        if let Some(parent) = nodes[i].parent {
            nodes[parent].children.push(i);
        }
    }
}

/// What [`compile`] works with while it compiles an archetype's entities one by one, and what
/// it found so far.
struct NodeCompiler<'a> {
    archetype: ArchetypeId,
    registry: &'a ComponentRegistry,
    /// The archetype's node paths, in node order.
    paths: &'a Arc<[Arc<str>]>,
    problems: Vec<CompileProblem>,
    /// A problem keeps the archetype from compiling.
    hard_error: bool,
}

/// The parts of a [`CompiledNode`] its components add to, one by one.
struct NodeParts {
    typed: Vec<(ComponentId, TypedValue)>,
    with_refs: Vec<(ComponentId, Value)>,
    ref_specs: Vec<(ComponentId, Spec)>,
    varied: Vec<(ComponentId, Varied)>,
}

impl NodeParts {
    /// Adds the value of component `id` (without references) to the values, with its
    /// variations (`varied`) when it has some.
    fn add(&mut self, id: ComponentId, typed: TypedValue, varied: Option<Varied>) {
        if let Some(varied) = varied {
            self.varied.push((id, varied));
        }
        self.typed.push((id, typed));
    }
}

impl NodeCompiler<'_> {
    /// Records a problem that keeps the archetype from compiling.
    fn refuse(&mut self, problem: CompileProblem) {
        self.hard_error = true;
        self.problems.push(problem);
    }

    /// Makes the installed [`CheckRefs`] read references as written for the node `base`, with
    /// nothing found yet.
    fn check_refs_from(&self, base: usize) {
        with_installed_mapper(|check: &mut CheckRefs| {
            check.base = self.paths[base].clone();
            check.used = false;
            check.failure = None;
        });
    }

    /// Compiles the entity `node`, whose `#` references are relative to the node `base`.
    fn node(
        &mut self,
        node: &LayoutNode<'_>,
        base: usize,
        intern: &mut dyn FnMut(&str) -> u32,
    ) -> CompiledNode {
        let mut parts = NodeParts {
            typed: Vec::with_capacity(node.entity.components.len()),
            with_refs: Vec::new(),
            ref_specs: Vec::new(),
            varied: Vec::new(),
        };
        for (name, value) in &node.entity.components {
            self.component(node, base, name, value, &mut parts);
        }
        let NodeParts {
            typed,
            with_refs,
            ref_specs,
            varied,
        } = parts;
        let marker = ArchetypeInstance {
            archetype: self.archetype,
            node: intern(&node.path),
            overrides: OverridesId::NONE,
        };
        let values: Vec<(ComponentId, &TypedValue)> =
            typed.iter().map(|(id, value)| (*id, value)).collect();
        let template = NodeTemplate::new(self.registry, &values, marker);
        let varied_types = (varied.iter()).filter_map(|(varied, _)| {
            let (_, value) = typed.iter().find(|(id, _)| id == varied)?;
            Some(Any::type_id(&**value))
        });
        let varied_places = match varied.is_empty() {
            true => None,
            false => template.places(varied_types),
        };
        CompiledNode {
            path: node.path.clone(),
            marker,
            parent: node.parent,
            children: Vec::new(),
            base,
            template,
            typed,
            with_refs,
            ref_specs,
            varied,
            varied_places,
        }
    }

    /// Compiles the component `name` of the entity `node` (written `value`) into `parts`, or
    /// records why it does not compile.
    fn component(
        &mut self,
        node: &LayoutNode<'_>,
        base: usize,
        name: &str,
        value: &Value,
        parts: &mut NodeParts,
    ) {
        let registry = self.registry;
        let Some(id) = registry.id(name) else {
            // Names were checked when the file was read; an unregistered name here means
            // the registry changed under us. Report rather than panic.
            self.refuse(problem(
                node,
                name,
                FieldPath::root(),
                DiagnosticCode::UnknownComponent,
                format!("unknown component `{name}`"),
                None,
            ));
            return;
        };
        self.check_refs_from(base);
        let spec = match Spec::find(value, name, registry) {
            Ok(spec) => spec,
            Err(SpecProblem { field, message }) => {
                let message = format!("invalid value for {}: {message}", place(name, &field));
                self.refuse(problem(
                    node,
                    name,
                    field,
                    DiagnosticCode::InvalidOperator,
                    message,
                    None,
                ));
                return;
            }
        };
        // A varying value is checked and kept as its first outcome.
        let checked = spec.as_ref().map_or(value, Spec::first);
        let mut unknown = Vec::new();
        forget_reference_failure();
        let decoded = registry.ops(id).decode(checked, &mut unknown);
        let (used, failure) =
            with_installed_mapper(|check: &mut CheckRefs| (check.used, check.failure.take()))
                .unwrap_or_default();
        self.problems
            .extend(unknown_field_problems(registry, id, node, name, unknown));
        match decoded {
            Ok(typed) => {
                // Every value a variation can roll is checked now; a component holding
                // references rolls when it is decoded, per spawn.
                let compiled = spec.map(|spec| Varied::compile(spec, registry.ops(id)));
                match compiled {
                    Some(Err(RollError { error, written })) => {
                        let failure =
                            with_installed_mapper(|check: &mut CheckRefs| check.failure.take())
                                .flatten();
                        let problem = decode_problem(registry, id, node, name, error, failure);
                        self.refuse(CompileProblem { written, ..problem });
                    }
                    compiled if used => {
                        parts.with_refs.push((id, value.clone()));
                        if let Some(Ok(varied)) = compiled {
                            parts.ref_specs.push((id, varied.into_spec()));
                        }
                    }
                    compiled => parts.add(id, typed, compiled.and_then(Result::ok)),
                }
            }
            Err(error) => self.refuse(decode_problem(registry, id, node, name, error, failure)),
        }
    }
}

/// Checks the component values of an archetype that cannot be compiled (it is abstract, or
/// something it depends on has errors) as far as they go: the fields each value has must have
/// the right types and names, fields it lacks are not errors, and entity references need only
/// be well formed (the children they name may come from elsewhere).
pub(super) fn check_partial(
    resolved: &ResolvedEntity,
    registry: &ComponentRegistry,
) -> Vec<CompileProblem> {
    let mut layout = Vec::new();
    flatten(resolved, None, Vec::new(), &mut layout);
    let mut problems = Vec::new();
    let ((), _) = with_mapper(WellFormedRefs, || {
        for node in &layout {
            for (name, value) in &node.entity.components {
                let Some(id) = registry.id(name) else {
                    continue;
                };
                let mut unknown = Vec::new();
                forget_reference_failure();
                let checked = registry.ops(id).check_partial(value, &mut unknown);
                problems.extend(unknown_field_problems(registry, id, node, name, unknown));
                if let Err(error) = checked {
                    problems.push(value_problem(registry, id, node, name, error));
                }
            }
        }
    });
    problems
}

/// The problems of the fields a value has that its type does not.
fn unknown_field_problems(
    registry: &ComponentRegistry,
    id: ComponentId,
    node: &LayoutNode<'_>,
    name: &str,
    unknown: Vec<FieldPath>,
) -> Vec<CompileProblem> {
    unknown
        .into_iter()
        .map(|field| {
            let suggestion = suggest_field(registry, id, &field);
            let message = format!("unknown field `{field}` in component `{name}`");
            let mut p = problem(
                node,
                name,
                field,
                DiagnosticCode::UnknownField,
                message,
                suggestion,
            );
            p.unknown_field = true;
            p
        })
        .collect()
}

/// Accepts every well-formed `#` reference (for partial values: the child it names may be
/// added by another archetype).
struct WellFormedRefs;

impl EntityMapper for WellFormedRefs {
    fn wire(&self) -> RefWire {
        RefWire::Text
    }
    fn write(&mut self, _entity: Entity) -> Result<RefOut, MapError> {
        Err(MapError::NotWritten(ReadOnly::Archetype))
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        match reference {
            // Checked against a deep base, so `..` is judged only by its form.
            RefIn::Text(text) => resolve_ref_path(text, WELL_FORMED_BASE)
                .map(|_| Entity::DANGLING)
                .map_err(MapError::from),
            RefIn::Number(n) => Err(MapError::NumberInArchetype(n)),
        }
    }
}

/// A base deeper than any children limit, for checking the form of references alone.
const WELL_FORMED_BASE: &str = "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p";

/// The entity paths of `layout` in order, and path → node number. An archetype of one entity
/// (most are) shares the one list of just the root, and its root's path.
fn node_index(layout: &mut [LayoutNode<'_>]) -> NodeIndex {
    if let [root] = layout {
        if root.path.is_empty() {
            let (paths, index) = ROOT_ONLY.get_or_init(|| node_index_of(&[root_path()]));
            root.path = paths[0].clone();
            return (paths.clone(), index.clone());
        }
    }
    let paths: Vec<Arc<str>> = layout.iter().map(|n| n.path.clone()).collect();
    node_index_of(&paths)
}

/// [`node_index`] of the entity paths `paths`.
fn node_index_of(paths: &[Arc<str>]) -> NodeIndex {
    let index = paths.iter().enumerate().map(|(i, p)| (p.clone(), i));
    (paths.into(), Arc::new(index.collect()))
}

/// Entity paths in node order, and path → node number.
type NodeIndex = (Arc<[Arc<str>]>, Arc<FxHashMap<Arc<str>, usize>>);

/// See [`node_index`].
static ROOT_ONLY: OnceLock<NodeIndex> = OnceLock::new();

/// The root's entity path, `""`, shared by every archetype.
pub(super) fn root_path() -> Arc<str> {
    static ROOT: OnceLock<Arc<str>> = OnceLock::new();
    ROOT.get_or_init(|| Arc::from("")).clone()
}

struct LayoutNode<'a> {
    path: Arc<str>,
    names: Vec<Arc<str>>,
    parent: Option<usize>,
    entity: &'a ResolvedEntity,
}

fn flatten<'a>(
    entity: &'a ResolvedEntity,
    parent: Option<usize>,
    names: Vec<Arc<str>>,
    out: &mut Vec<LayoutNode<'a>>,
) {
    let index = out.len();
    out.push(LayoutNode {
        path: Arc::from(names.iter().map(|n| &**n).collect::<Vec<_>>().join("/")),
        names: names.clone(),
        parent,
        entity,
    });
    for (name, child) in &entity.children {
        let mut child_names = names.clone();
        child_names.push(name.clone());
        flatten(child, Some(index), child_names, out);
    }
}

/// References inside an entity are relative to the nearest entity (itself or an ancestor) that
/// is an archetype's root: the instance root, or a child declared with `"archetype"`.
fn base_of(layout: &[LayoutNode<'_>], mut i: usize) -> usize {
    loop {
        if layout[i].entity.source.is_some() {
            return i;
        }
        match layout[i].parent {
            Some(parent) => i = parent,
            None => return i,
        }
    }
}

fn problem(
    node: &LayoutNode<'_>,
    component: &str,
    field: FieldPath,
    code: DiagnosticCode,
    message: String,
    suggestion: Option<String>,
) -> CompileProblem {
    CompileProblem {
        node: node.names.clone(),
        component: Arc::from(component),
        field,
        written: None,
        code,
        message,
        suggestion,
        unknown_field: false,
        missing_field: false,
        at_key: false,
        severity: Severity::Error,
    }
}

/// Turns a serde error into a message that names the field, with a suggestion for unknown enum
/// variants.
/// `` `Health` `` or `` `Health.max` ``.
fn place(component: &str, field: &FieldPath) -> String {
    if field.is_empty() {
        format!("`{component}`")
    } else {
        format!("`{component}.{field}`")
    }
}

/// Forgets a refused `ArchetypeRef` or `AssetPath` of an earlier value, so one refused now is
/// told from it.
fn forget_reference_failure() {
    if let Some(context) = ReferenceContext::current() {
        context.take_failure();
    }
}

fn value_problem(
    registry: &ComponentRegistry,
    id: ComponentId,
    node: &LayoutNode<'_>,
    name: &str,
    error: ValueError,
) -> CompileProblem {
    let place = place(name, &error.path);
    // A checked reference refused: its own code and suggestion.
    if let Some(failure) = ReferenceContext::current().and_then(|c| c.take_failure()) {
        let message = format!("invalid value for {place}: {}", failure.message);
        return problem(
            node,
            name,
            error.path,
            failure.code,
            message,
            failure.suggestion,
        );
    }
    let suggestion = match &error.kind {
        // The names the type has, as serde lists them (an internally tagged enum's tag too).
        ReadErrorKind::UnknownVariant(variant, expected)
        | ReadErrorKind::UnknownAxis(variant, expected) => {
            did_you_mean(variant, expected.iter().copied())
        }
        // A marker holding something: it is written `{}`.
        _ if error.path.is_empty() && registry.is_marker(id) => Some("{}".to_string()),
        _ => None,
    };
    let message = format!("invalid value for {place}: {}", error.message);
    // An axis the vector does not have is shown where it is written.
    let field = match &error.kind {
        ReadErrorKind::UnknownAxis(axis, _) => error.path.clone().key(axis.clone()),
        _ => error.path.clone(),
    };
    let mut problem = problem(
        node,
        name,
        field,
        DiagnosticCode::InvalidComponent,
        message,
        suggestion,
    );
    problem.missing_field = error.kind == ReadErrorKind::MissingField;
    problem.at_key = matches!(error.kind, ReadErrorKind::UnknownAxis(..));
    problem
}

/// The closest real field name to an unknown one, from the type's own field list.
pub(crate) fn suggest_field(
    registry: &ComponentRegistry,
    id: ComponentId,
    field: &FieldPath,
) -> Option<String> {
    crate::json::suggest_with(field, |parent| registry.ops(id).probe(parent))
}

/// The entity path a `#` reference written for an entity based at `base` points to:
/// `#` is the base itself, `#turret/barrel` a descendant, `..` goes up one level.
pub(crate) fn resolve_ref_path(text: &str, base: &str) -> Result<String, RefPathError> {
    let Some(rest) = text.strip_prefix('#') else {
        return Err(RefPathError::NotAReference(text.to_string()));
    };
    let mut segments: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for segment in rest.split('/').filter(|s| !s.is_empty()) {
        if segment == ".." {
            if segments.pop().is_none() {
                return Err(RefPathError::AboveRoot(text.to_string()));
            }
        } else if check_local_name(segment) {
            segments.push(segment);
        } else {
            return Err(RefPathError::Invalid(text.to_string()));
        }
    }
    Ok(segments.join("/"))
}

/// Resolves a `#` reference to a node index of an instance.
fn resolve_ref(
    text: &str,
    base: &str,
    index: &FxHashMap<Arc<str>, usize>,
) -> Result<usize, MapError> {
    let path = resolve_ref_path(text, base)?;
    index
        .get(path.as_str())
        .copied()
        .ok_or_else(|| MapError::NoChild(text.to_string()))
}

/// Checks `#` references while compiling; references resolve to a placeholder. What it found
/// is read from it between values (`with_installed_mapper`) or when it is handed back.
struct CheckRefs {
    paths: Arc<[Arc<str>]>,
    index: Arc<FxHashMap<Arc<str>, usize>>,
    /// The entity path references are relative to.
    base: Arc<str>,
    /// A reference was read (the value must be decoded again per spawn).
    used: bool,
    /// The first bad reference: message and suggestion.
    failure: Option<(String, Option<String>)>,
}

impl CheckRefs {
    /// A checker of references among the nodes `paths` (`index`: path → node), from the root.
    fn new(paths: Arc<[Arc<str>]>, index: Arc<FxHashMap<Arc<str>, usize>>) -> Self {
        CheckRefs {
            paths,
            index,
            base: Arc::from(""),
            used: false,
            failure: None,
        }
    }
}

impl EntityMapper for CheckRefs {
    fn wire(&self) -> RefWire {
        RefWire::Text
    }
    fn write(&mut self, _entity: Entity) -> Result<RefOut, MapError> {
        Err(MapError::NotWritten(ReadOnly::Archetype))
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        let text = match reference {
            RefIn::Text(text) => text,
            RefIn::Number(n) => {
                let error = MapError::NumberInArchetype(n);
                self.failure = Some((error.to_string(), None));
                return Err(error);
            }
        };
        match resolve_ref(text, &self.base, &self.index) {
            Ok(_) => {
                self.used = true;
                Ok(Entity::DANGLING)
            }
            Err(error) => {
                let prefix = if self.base.is_empty() {
                    String::new()
                } else {
                    format!("{}/", self.base)
                };
                let candidates: Vec<String> = self
                    .paths
                    .iter()
                    .filter_map(|p| {
                        p.strip_prefix(prefix.as_str())
                            .or((prefix.is_empty()).then_some(&**p))
                    })
                    .map(|p| format!("#{p}"))
                    .collect();
                let suggestion = did_you_mean(text, candidates.iter().map(String::as_str));
                self.failure = Some((error.to_string(), suggestion));
                Err(error)
            }
        }
    }
}

/// Resolves `#` references to the entities of the instance being spawned.
struct SpawnRefs {
    index: Arc<FxHashMap<Arc<str>, usize>>,
    base: Arc<str>,
    entities: Arc<[Entity]>,
}

impl EntityMapper for SpawnRefs {
    fn wire(&self) -> RefWire {
        RefWire::Text
    }
    fn write(&mut self, _entity: Entity) -> Result<RefOut, MapError> {
        Err(MapError::NotWritten(ReadOnly::Archetype))
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        match reference {
            RefIn::Text(text) => {
                resolve_ref(text, &self.base, &self.index).map(|i| self.entities[i])
            }
            RefIn::Number(n) => Err(MapError::NumberInArchetype(n)),
        }
    }
}

/// Writes `root`'s values that vary per spawn over the template's first outcome in `entity`,
/// just spawned (in place: same components); on a failed roll the entity is despawned.
fn roll_in_place(
    root: &CompiledNode,
    world: &mut World,
    registry: &ComponentRegistry,
    entity: Entity,
    rng: &SpawnRng,
) -> Result<Entity, ValueError> {
    for (component, varied) in &root.varied {
        let ops = registry.ops(*component);
        match varied.roll(ops, rng) {
            Ok(value) => {
                value.overwrite(ops, world, entity);
            }
            Err(error) => {
                let _ = world.despawn(entity);
                return Err(error);
            }
        }
    }
    Ok(entity)
}

/// Overrides for one spawn, already checked: component → merged value to use instead (or
/// `None` to leave the component out), plus the shape of the patch, recorded in the entity's
/// marker.
pub(super) struct CheckedOverrides {
    pub replace: Vec<(ComponentId, Option<Value>)>,
    pub record: OverridesId,
}

impl CompiledArchetype {
    /// Spawns one instance. `overrides` apply to the root.
    #[inline]
    pub(super) fn spawn(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        overrides: Option<&CheckedOverrides>,
        rng: &SpawnRng,
    ) -> Result<Entity, ValueError> {
        if self.simple && overrides.is_none() {
            let root = &self.nodes[0];
            if root.varied.is_empty() {
                return root.template(registry).spawn(world, rng);
            }
            return root.spawn_rolled(world, registry, rng);
        }
        self.spawn_general(world, registry, overrides, rng)
    }

    /// The template a `spawn_with_bundle` of bundle type `bundle` spawns from, with `shape` (a
    /// bundle of that type) on top: the root's own values but those of the bundle's types, the
    /// marker and the override shape `overrides` gives (and a fresh `StableId` per spawn).
    /// `None` when a spawn cannot be made that way: the archetype is not `simple`, its values
    /// vary per spawn, the bundle holds a component the library manages (`components`: the
    /// bundle's registered components, `None` for a managed one) or a type twice, or the
    /// values are too big for a [`SpawnTemplate`]. Made once per bundle type.
    pub(super) fn bundle_template(
        &self,
        registry: &ComponentRegistry,
        bundle: TypeId,
        shape: &impl DynamicBundle,
        components: impl FnOnce() -> Option<Vec<ComponentId>>,
        overrides: impl FnOnce(&[ComponentId]) -> OverridesId,
    ) -> Option<Arc<SpawnTemplate>> {
        let cache = self.bundle_templates.get_or_init(Box::default);
        let mut templates = match cache.all.lock() {
            Ok(templates) => templates,
            Err(poisoned) => poisoned.into_inner(),
        };
        let template = templates
            .entry(bundle)
            .or_insert_with(|| {
                let root = &self.nodes[0];
                if !self.simple || !root.varied.is_empty() {
                    return None;
                }
                let components = components()?;
                // The values and the marker, naming the overrides.
                let mut template = TemplateBuilder::with_capacity(root.typed.len() + 1);
                for (id, value) in &root.typed {
                    if !components.contains(id) {
                        registry
                            .ops(*id)
                            .add_to_spawn_template(value, &mut template);
                    }
                }
                template.add(ArchetypeInstance {
                    overrides: overrides(&components),
                    ..root.marker
                });
                template.build(shape).map(Arc::new)
            })
            .clone();
        drop(templates);
        // Published for lock-free reads if there is room; a slot another thread took first is
        // skipped.
        for slot in &cache.recent {
            match slot.get() {
                Some((known, _)) if *known == bundle => break,
                Some(_) => continue,
                None => {
                    if slot.set((bundle, template.clone())).is_ok() {
                        break;
                    }
                }
            }
        }
        template
    }

    /// The template of bundle type `bundle` as [`bundle_template`](Self::bundle_template)
    /// gave it, if it is one of the first few made: `None` if not found there, `Some(None)` if
    /// the bundle type has none.
    #[inline]
    pub(super) fn recent_bundle_template(&self, bundle: TypeId) -> Option<Option<&SpawnTemplate>> {
        for slot in &self.bundle_templates.get()?.recent {
            match slot.get() {
                Some((known, template)) if *known == bundle => return Some(template.as_deref()),
                Some(_) => continue,
                None => return None,
            }
        }
        None
    }

    /// Spawns one instance of a single-entity archetype without references (`simple`) whose
    /// root takes `bundle` in place of the archetype's components of the same types, plus
    /// `overrides`: one entity built once, not spawned and then changed. `None` (and the bundle
    /// back) when the archetype is not simple.
    pub(super) fn spawn_simple_with<B: hecs::DynamicBundle>(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        rng: &SpawnRng,
        bundle: B,
        replaced: &[ComponentId],
        overrides: OverridesId,
    ) -> Result<Result<Entity, ValueError>, B> {
        if !self.simple {
            return Err(bundle);
        }
        let root = &self.nodes[0];
        let rolled = match root.rolled(registry, rng) {
            Ok(rolled) => rolled,
            Err(error) => return Ok(Err(error)),
        };
        let mut builder = EntityBuilder::new();
        root.add_values(registry, &rolled, &mut builder, |id| replaced.contains(&id));
        builder.add(rng.next_id());
        builder.add(ArchetypeInstance {
            overrides,
            ..root.marker
        });
        // Last, so the caller's components win (a `StableId` of its own too).
        builder.add_bundle(bundle);
        Ok(Ok(world.spawn(builder.build())))
    }

    fn spawn_general(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        overrides: Option<&CheckedOverrides>,
        rng: &SpawnRng,
    ) -> Result<Entity, ValueError> {
        let entities: Arc<[Entity]> = world.reserve_entities(self.nodes.len() as u32).collect();
        // Decode everything before touching the world, so a failure leaves it as it was.
        match self.build_entities(&entities, registry, overrides, rng) {
            Ok(builders) => {
                for (entity, mut builder) in entities.iter().zip(builders) {
                    let _ = world.insert(*entity, builder.build());
                }
                Ok(entities[0])
            }
            Err(error) => {
                for &entity in entities.iter() {
                    let _ = world.despawn(entity);
                }
                Err(error)
            }
        }
    }

    /// Spawns one instance through `commands`: its entities are reserved in `world` now (the
    /// root's handle is returned) and get their components when the buffer runs. A failure
    /// records nothing but the release of the reserved handles.
    pub(super) fn spawn_deferred(
        &self,
        world: &World,
        commands: &mut hecs::CommandBuffer,
        registry: &ComponentRegistry,
        rng: &SpawnRng,
    ) -> Result<Entity, ValueError> {
        let entities: Arc<[Entity]> = world.reserve_entities(self.nodes.len() as u32).collect();
        match self.build_entities(&entities, registry, None, rng) {
            Ok(builders) => {
                for (entity, mut builder) in entities.iter().zip(builders) {
                    commands.insert(*entity, builder.build());
                }
                Ok(entities[0])
            }
            Err(error) => {
                for &entity in entities.iter() {
                    commands.despawn(entity);
                }
                Err(error)
            }
        }
    }

    /// Every entity of one instance, built for `entities` (one handle per node, in node order):
    /// values rolled where they vary, references decoded to those handles, a fresh stable ID,
    /// the marker and the parent/children links; `overrides` on the root.
    fn build_entities(
        &self,
        entities: &Arc<[Entity]>,
        registry: &ComponentRegistry,
        overrides: Option<&CheckedOverrides>,
        rng: &SpawnRng,
    ) -> Result<Vec<EntityBuilder>, ValueError> {
        let mut builders = Vec::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            let mut builder = EntityBuilder::new();
            let replaced = |id: ComponentId| {
                i == 0 && overrides.is_some_and(|o| o.replace.iter().any(|(r, _)| *r == id))
            };
            let rolled = node.rolled(registry, rng)?;
            node.add_values(registry, &rolled, &mut builder, replaced);
            let mut decode_list: Vec<(ComponentId, Cow<'_, Value>)> = node
                .with_refs
                .iter()
                .filter(|(id, _)| !replaced(*id))
                .map(|(id, value)| (*id, node.ref_value(*id, value, rng)))
                .collect();
            if let (0, Some(overrides)) = (i, overrides) {
                let overridden = overrides.replace.iter();
                decode_list.extend(overridden.filter_map(|(id, value)| {
                    let value = value.as_ref()?;
                    Some((*id, rolled_value(value, registry.name(*id), registry, rng)))
                }));
            }
            for (id, value) in decode_list {
                let mapper = SpawnRefs {
                    index: self.index.clone(),
                    base: self.nodes[node.base].path.clone(),
                    entities: entities.clone(),
                };
                let (decoded, _) =
                    with_mapper(mapper, || registry.ops(id).decode(&value, &mut Vec::new()));
                registry.ops(id).add_to_builder(&decoded?, &mut builder);
            }
            builder.add(rng.next_id());
            builder.add(match (i, overrides) {
                (0, Some(overrides)) => ArchetypeInstance {
                    overrides: overrides.record,
                    ..node.marker
                },
                _ => node.marker,
            });
            if let Some(parent) = node.parent {
                builder.add(Parent(EntityRef(entities[parent])));
            }
            if !node.children.is_empty() {
                builder.add(Children(
                    node.children
                        .iter()
                        .map(|&c| EntityRef(entities[c]))
                        .collect(),
                ));
            }
            builders.push(builder);
        }
        Ok(builders)
    }

    /// Spawns `count` instances, as one column batch when the archetype is simple.
    pub(super) fn spawn_many(
        &self,
        world: &mut World,
        registry: &ComponentRegistry,
        count: u32,
        rng: &SpawnRng,
    ) -> Result<Vec<Entity>, ValueError> {
        if !self.simple {
            return (0..count)
                .map(|_| self.spawn(world, registry, None, rng))
                .collect();
        }
        let root = &self.nodes[0];
        let mut batch = root.batch_type(registry).into_batch(count);
        for (id, value) in &root.typed {
            let ops = registry.ops(*id);
            match root.varied.iter().find(|(varied, _)| varied == id) {
                Some((_, varied)) => {
                    for _ in 0..count {
                        varied.roll(ops, rng)?.push_to_column(ops, &mut batch);
                    }
                }
                None => ops.fill_column(value, &mut batch, count),
            }
        }
        if let Some(mut ids) = batch.writer::<StableId>() {
            for _ in 0..count {
                let _ = ids.push(rng.next_id());
            }
        }
        if let Some(mut markers) = batch.writer::<ArchetypeInstance>() {
            for _ in 0..count {
                let _ = markers.push(root.marker);
            }
        }
        match batch.build() {
            Ok(batch) => Ok(world.spawn_column_batch(batch).collect()),
            // Every column was filled above; an incomplete batch is a bug, not bad data.
            Err(incomplete) => Err(ValueError::invalid(
                FieldPath::root(),
                format!("internal error: incomplete spawn batch ({incomplete:?})"),
            )),
        }
    }
}

/// Why spawn-time overrides were rejected.
pub(super) struct OverrideProblem {
    pub component: Option<String>,
    pub field: FieldPath,
    pub message: String,
    pub suggestion: Option<String>,
}

impl CompiledArchetype {
    /// Checks spawn-time overrides against the archetype's root (`root` is its resolved value):
    /// component names, and each merged value must deserialize. Returns the merged values to spawn
    /// with.
    pub(super) fn check_overrides(
        &self,
        registry: &ComponentRegistry,
        root: &ResolvedEntity,
        overrides: &Value,
        shapes: &OverrideShapes,
    ) -> Result<CheckedOverrides, OverrideProblem> {
        let Value::Object(object) = overrides else {
            return refused(
                None,
                FieldPath::root(),
                format!(
                    "overrides must be an object of component name to merge patch, found {}",
                    crate::archetype::file::kind_of(overrides)
                ),
                None,
            );
        };
        let mut replace = Vec::new();
        let mut record = Map::new();
        for (key, patch) in object {
            let id = overridable(registry, key)?;
            let name = registry.name_arc(id).clone();
            if patch.is_null() {
                replace.push((id, None));
            } else {
                let merged = self.overridden_value(registry, root, id, &name, patch)?;
                replace.push((id, Some(merged)));
            }
            record.insert(name.to_string(), override_shape(patch));
        }
        Ok(CheckedOverrides {
            replace,
            record: shapes.intern(record, OverrideOrigin::Spawn),
        })
    }

    /// The value of component `id` (called `name`) that the override `patch` (not `null`)
    /// gives: merged over the root's value, operators settled, each value it can roll
    /// checked.
    fn overridden_value(
        &self,
        registry: &ComponentRegistry,
        root: &ResolvedEntity,
        id: ComponentId,
        name: &Arc<str>,
        patch: &Value,
    ) -> Result<Value, OverrideProblem> {
        let mut merged = root.components.get(name).cloned().unwrap_or(Value::Null);
        let misfits = crate::archetype::value_merge::merge(&mut merged, patch, name, registry);
        if let Some(misfit) = misfits.into_iter().next() {
            let message = format!(
                "invalid value for {}: {}",
                place(name, &misfit.field),
                misfit.error
            );
            return refused(Some(name.to_string()), misfit.field, message, None);
        }
        // An operator with nothing to work on settles as in a concrete archetype.
        crate::archetype::operator::settle(&mut merged, name, registry);
        // Variations are rolled when spawning; their first outcome is checked here.
        let spec = match Spec::find(&merged, name, registry) {
            Ok(spec) => spec,
            Err(SpecProblem { field, message }) => {
                let message = format!("invalid value for {}: {message}", place(name, &field));
                return refused(Some(name.to_string()), field, message, None);
            }
        };
        let checked = spec.as_ref().map_or(&merged, Spec::first);
        let unknown = self.decode_override(registry, id, name, checked)?;
        // Every other value a variation could roll.
        let others = spec.as_ref().map_or(Ok(()), |spec| {
            spec.check(|other| registry.ops(id).decode(other, &mut Vec::new()).map(drop))
        });
        if let Err((error, _)) = others {
            let message = format!(
                "invalid value for {}: {}",
                place(name, &error.path),
                error.message
            );
            return refused(Some(name.to_string()), error.path, message, None);
        }
        if let Some(field) = unknown.into_iter().next() {
            let suggestion = suggest_field(registry, id, &field);
            return refused(
                Some(name.to_string()),
                field.clone(),
                format!("unknown field `{field}` in component `{name}`"),
                suggestion,
            );
        }
        Ok(merged)
    }

    /// Decodes `checked`, an overridden value of component `id` (called `name`), with its `#`
    /// references checked against this archetype's entities. Returns its unknown fields.
    fn decode_override(
        &self,
        registry: &ComponentRegistry,
        id: ComponentId,
        name: &str,
        checked: &Value,
    ) -> Result<Vec<FieldPath>, OverrideProblem> {
        let mut unknown = Vec::new();
        let checker = CheckRefs::new(self.paths.clone(), self.index.clone());
        forget_reference_failure();
        let (decoded, mut checker) =
            with_mapper(checker, || registry.ops(id).decode(checked, &mut unknown));
        if let Err(error) = decoded {
            let refused_reference = ReferenceContext::current()
                .and_then(|c| c.take_failure())
                .map(|failure| (failure.message, failure.suggestion));
            let failure = checker.failure.take().or(refused_reference);
            let (message, suggestion) = failure.unwrap_or((error.message, None));
            let message = format!("invalid value for {}: {message}", place(name, &error.path));
            return refused(Some(name.to_string()), error.path, message, suggestion);
        }
        Ok(unknown)
    }
}

/// The component an override's `key` names, if overrides may set it.
fn overridable(registry: &ComponentRegistry, key: &str) -> Result<ComponentId, OverrideProblem> {
    let Some(id) = registry.id(key) else {
        let suggestion = did_you_mean(key, registry.names());
        return refused(
            Some(key.to_string()),
            FieldPath::root(),
            format!("unknown component `{key}`"),
            suggestion,
        );
    };
    if registry.is_managed(id) {
        let message = format!("component `{key}` is set by the library when entities are spawned; remove it from the overrides");
        return refused(Some(key.to_string()), FieldPath::root(), message, None);
    }
    Ok(id)
}

/// Overrides refused: the component, the field, what is wrong, and the likely fix.
fn refused<T>(
    component: Option<String>,
    field: FieldPath,
    message: String,
    suggestion: Option<String>,
) -> Result<T, OverrideProblem> {
    Err(OverrideProblem {
        component,
        field,
        message,
        suggestion,
    })
}
