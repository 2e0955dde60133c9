//! Cooking a library ([`ArchetypeLibrary::cook`]) and starting from a cooked one
//! ([`ArchetypeLibrary::load_cooked`]); the format is in [`crate::archetype::cook`].
//!
//! A cooked library serves every archetype as the JSON library it was cooked from does. It
//! has no files' texts: the first reload ([`reload_files`](ArchetypeLibrary::reload_files),
//! [`set_source`](ArchetypeLibrary::set_source), [`reload_all`](ArchetypeLibrary::reload_all),
//! a `HotReloader`'s) reads every file under the root, and reports as changed only the
//! archetypes that differ from the cook; from then on it is a JSON library.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::archetype::compiled::{assemble, compile, CompiledArchetype, CookedNode};
use crate::archetype::cook::{
    self, read_cook, write_cook, Body, Bytes, CookError, CookErrorKind, CookedArchetype,
    CookedComponent,
};
use crate::archetype::loaded::Archetype;
use crate::archetype::reference_context::AssetIndex;
use crate::archetype::renames::Renames;
use crate::archetype::resolved_tree::{CookedTree, ResolvedTree};
use crate::component::{ArchetypeId, ComponentId, ComponentRegistry, Layout, TypedValue};
use crate::diagnostic::Severity;

use super::names::TargetsStale;
use super::{file_of_name, intern_node, parallel_map, ArchetypeLibrary, LoadOptions, Slot};

/// One archetype's part of a cook, owned while the cook is written.
struct Cooking {
    tree: String,
    /// Its entities' values; `None` when the archetype is compiled from its tree at load.
    nodes: Option<Vec<PlainNode>>,
}

/// One entity of an archetype whose values are all plain, owned while the cook is written.
struct PlainNode {
    path: String,
    parent: Option<u32>,
    base: u32,
    /// Each component with its value in postcard.
    values: Vec<(ComponentId, Vec<u8>)>,
}

impl ArchetypeLibrary {
    /// The library as a cooked library: one file a shipped game loads with
    /// [`load_cooked`](Self::load_cooked) instead of reading, parsing and resolving its JSON.
    /// The same library cooks to the same bytes.
    ///
    /// # Errors
    /// [`CookErrorKind::LibraryHasErrors`] for a library with errors (a cook holds every
    /// archetype its files describe, so a game never ships a broken one).
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions};
    /// # #[derive(Clone, serde::Serialize, serde::Deserialize)]
    /// # struct Health { max: u32 }
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Health>()?;
    /// let registry = std::sync::Arc::new(registry);
    /// let mut library = ArchetypeLibrary::empty("archetypes", registry.clone(), LoadOptions::default());
    /// library.set_source("goblin.json", Some(r#"{ "components": { "Health": { "max": 7 } } }"#));
    /// let cooked = library.cook()?;
    ///
    /// let shipped = ArchetypeLibrary::load_cooked(cooked, "archetypes", registry, LoadOptions::default())?;
    /// let mut world = hecs::World::new();
    /// let goblin = shipped.spawn(&mut world, "goblin")?;
    /// assert_eq!(world.get::<&Health>(goblin)?.max, 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cook(&self) -> Result<Vec<u8>, CookError> {
        let errors = self.error_count();
        if errors > 0 {
            return Err(CookError::new(CookErrorKind::LibraryHasErrors { errors }));
        }
        let registry = &*self.registry;
        let archetypes: Vec<&Arc<Archetype>> =
            self.names().filter_map(|name| self.get(name)).collect();
        let cooking: Vec<Cooking> = archetypes
            .iter()
            .map(|archetype| Cooking {
                tree: cook::write_tree(archetype.resolved()),
                nodes: plain_values(archetype, registry),
            })
            .collect();
        // The components values are stored for, by name.
        let mut used: BTreeMap<&str, ComponentId> = BTreeMap::new();
        for nodes in cooking.iter().filter_map(|c| c.nodes.as_ref()) {
            for node in nodes {
                for (id, _) in &node.values {
                    used.insert(registry.name(*id), *id);
                }
            }
        }
        let index: BTreeMap<ComponentId, u32> = (used.values().enumerate())
            .map(|(i, id)| (*id, i as u32))
            .collect();
        let components = (used.iter())
            .map(|(name, id)| {
                let layout = registry.layout_bytes(*id);
                CookedComponent {
                    name,
                    layout: layout.map(Bytes),
                    fields: layout.map(fields_of).unwrap_or_default(),
                }
            })
            .collect();
        let body = Body {
            components,
            archetypes: (archetypes.iter().zip(&cooking))
                .map(|(archetype, cooking)| CookedArchetype {
                    name: archetype.name(),
                    is_abstract: archetype.is_abstract,
                    extends: archetype.extends.iter().map(String::as_str).collect(),
                    depth: archetype.depth as u32,
                    hash: archetype.resolved.hash(),
                    tree: &cooking.tree,
                    nodes: cooking.nodes.as_ref().map(|nodes| {
                        (nodes.iter())
                            .map(|node| cook::CookedNode {
                                path: &node.path,
                                parent: node.parent,
                                base: node.base,
                                values: (node.values.iter())
                                    .map(|(id, bytes)| (index[id], Bytes(bytes)))
                                    .collect(),
                            })
                            .collect()
                    }),
                })
                .collect(),
            renames: {
                let mut renames: Vec<(&str, &str)> =
                    (self.renames.iter()).map(|(f, c)| (&**f, &**c)).collect();
                renames.sort_unstable();
                renames
            },
        };
        write_cook(&body)
    }

    /// A library from a cooked library's bytes (see [`cook`](Self::cook)), reading its
    /// archetype files from `root` once it is reloaded (in development: a `HotReloader` on
    /// `root` works as on a JSON library). `registry` must have the components the cook was
    /// made with, with the same fields.
    ///
    /// # Errors
    /// A [`CookError`]: bytes that are not a cook, of another format version, or damaged
    /// (their checksum); a component the cook uses that is not registered, or whose fields
    /// changed since the cook ([`CookErrorKind::LayoutChanged`], naming it): its values are
    /// never misread.
    pub fn load_cooked(
        cooked: Vec<u8>,
        root: impl AsRef<Path>,
        registry: impl Into<Arc<ComponentRegistry>>,
        options: LoadOptions,
    ) -> Result<Self, CookError> {
        // Kept whole (not copied): the archetypes' trees are read from it when first read.
        let bytes = Arc::new(cooked);
        let body = read_cook(&bytes)?;
        let mut library = Self::empty(root, registry, options);
        let registry = library.registry.clone();
        let components = registered_components(&registry, &body)?;
        // Names first: compiling an archetype from its tree checks the archetype names its
        // values name.
        let count = body.archetypes.len();
        library.sorted_names.reserve(count);
        library.slots.reserve(count);
        library.ids.reserve(count);
        for archetype in &body.archetypes {
            let name: Arc<str> = Arc::from(archetype.name);
            library.slot_id(&name);
            library.sorted_names.push(name);
        }
        library.sorted_names.sort_unstable();
        library.renames = Arc::new(Renames::from_pairs(
            (body.renames.iter())
                .map(|(former, current)| (Arc::from(*former), Arc::from(*current))),
        ));
        if let Some(twice) = library.sorted_names.windows(2).find(|w| w[0] == w[1]) {
            let archetype = twice[0].to_string();
            let message = "it is listed twice".to_string();
            return Err(CookError::new(CookErrorKind::Archetype {
                archetype,
                message,
            }));
        }
        library.targets = Arc::new(library.archetype_targets());
        library.targets_stale = TargetsStale::Fresh;
        // `AssetPath`s (of values read here, and of scenes loaded later) are checked as a JSON
        // load checks them.
        library.assets = (library.options.assets_root.as_deref())
            .and_then(AssetIndex::scan)
            .map(Arc::new);
        // Each archetype built on its own (on every core), then numbered and installed here.
        let cooked: Vec<(&CookedArchetype<'_>, ArchetypeId)> = (body.archetypes.iter())
            .filter_map(|archetype| Some((archetype, *library.ids.get(archetype.name)?)))
            .collect();
        let targets = library.reference_targets();
        let unknown_fields = library.options.unknown_fields;
        let built = parallel_map(&cooked, |(archetype, id)| {
            let build = || build(archetype, *id, &components, &registry, unknown_fields);
            // Values read from JSON check the archetype names and assets they name, as a load
            // does; postcard values were checked when the library was cooked.
            let all_postcard = (archetype.nodes.iter().flatten())
                .flat_map(|node| &node.values)
                .all(|(component, _)| components.get(*component as usize).is_some_and(|c| !c.1));
            match archetype.nodes.is_some() && all_postcard {
                true => build(),
                false => targets.context().install(build),
            }
        });
        for ((archetype, id), built) in cooked.iter().zip(built) {
            let Built { compiled, paths } = built?;
            library.install_cooked(archetype, *id, compiled, &paths, &bytes);
        }
        library.cooked = true;
        Ok(library)
    }

    /// [`load_cooked`](Self::load_cooked) of the file `path` (a regular file, at most
    /// [`Limits::max_cook_bytes`](crate::Limits::max_cook_bytes) long).
    ///
    /// # Errors
    /// As [`load_cooked`](Self::load_cooked), naming the file; an I/O error reading it.
    pub fn load_cooked_file(
        path: impl AsRef<Path>,
        root: impl AsRef<Path>,
        registry: impl Into<Arc<ComponentRegistry>>,
        options: LoadOptions,
    ) -> Result<Self, CookError> {
        let path = path.as_ref();
        let span = tracing::info_span!("load_cooked", file = %path.display());
        let _entered = span.enter();
        let started = std::time::Instant::now();
        let in_file = |error: CookError| error.in_file(path.to_path_buf());
        let bytes = crate::fs::read_regular_file(path, options.limits.max_cook_bytes)
            .map_err(|error| in_file(CookError::new(CookErrorKind::Io(error))))?;
        let library = Self::load_cooked(bytes, root, registry, options).map_err(in_file)?;
        let ms = crate::logging::ms_since(started);
        tracing::info!(archetypes = library.len(), ms, "loaded cooked library");
        Ok(library)
    }

    /// Puts the cooked `archetype` (of the cook `bytes`, built as `compiled`, numbering the
    /// entity paths `paths`) in effect in its slot `id`.
    fn install_cooked(
        &mut self,
        archetype: &CookedArchetype<'_>,
        id: ArchetypeId,
        compiled: Option<CompiledArchetype>,
        paths: &[Arc<str>],
        bytes: &Arc<Vec<u8>>,
    ) {
        let slot: &mut Slot = &mut self.slots[id.0 as usize];
        for path in paths {
            intern_node(slot, path);
        }
        let start = archetype.tree.as_ptr() as usize - bytes.as_ptr() as usize;
        let tree = CookedTree {
            bytes: bytes.clone(),
            range: start..start + archetype.tree.len(),
        };
        let file = file_of_name(&self.root, &slot.name);
        slot.current = Some(Arc::new(Archetype {
            id,
            name: slot.name.clone(),
            file,
            is_abstract: archetype.is_abstract,
            extends: archetype.extends.iter().map(|s| s.to_string()).collect(),
            resolved: ResolvedTree::cooked(tree, archetype.hash),
            depth: archetype.depth as usize,
            compiled,
        }));
    }
}

/// A cooked archetype built: its spawn templates (none for an abstract one) and the entity
/// paths its slot is to number, in order (past the root's).
struct Built {
    compiled: Option<CompiledArchetype>,
    paths: Vec<Arc<str>>,
}

/// Builds the cooked `archetype`, whose slot `id` is fresh: from its values, or compiled
/// from its tree as a JSON load compiles it.
fn build(
    archetype: &CookedArchetype<'_>,
    id: ArchetypeId,
    components: &[(ComponentId, bool)],
    registry: &ComponentRegistry,
    unknown_fields: Severity,
) -> Result<Built, CookError> {
    let refused = |message: String| {
        let archetype = archetype.name.to_string();
        CookError::new(CookErrorKind::Archetype { archetype, message })
    };
    // A fresh slot numbers the root 0 and each new path the next number.
    let mut paths: Vec<Arc<str>> = Vec::new();
    let mut numbers: FxHashMap<Arc<str>, u32> = FxHashMap::default();
    let mut intern = |path: &str| -> u32 {
        if path.is_empty() {
            return 0;
        }
        if let Some(&number) = numbers.get(path) {
            return number;
        }
        let path: Arc<str> = Arc::from(path);
        paths.push(path.clone());
        numbers.insert(path, paths.len() as u32);
        paths.len() as u32
    };
    let compiled = match (&archetype.nodes, archetype.is_abstract) {
        (_, true) => None,
        (Some(nodes), false) => {
            let nodes =
                cooked_nodes(nodes, components, registry, unknown_fields).map_err(refused)?;
            Some(assemble(id, nodes, &mut intern))
        }
        (None, false) => {
            let tree = cook::read_tree(archetype.tree.as_bytes())
                .map_err(|error| refused(format!("its resolved tree does not read: {error}")))?;
            let (compiled, problems) = compile(id, &tree, registry, &mut intern);
            let error = (problems.into_iter())
                .find(|p| p.severity_under(unknown_fields) == Severity::Error);
            if let Some(problem) = error {
                let component = problem.component;
                return Err(refused(format!(
                    "component `{component}`: {}",
                    problem.message
                )));
            }
            Some(compiled.ok_or_else(|| refused("it does not compile".to_string()))?)
        }
    };
    Ok(Built { compiled, paths })
}

/// Each entity's values of `archetype` in postcard, when all are plain and each reads back
/// as itself: `None` when the archetype is to be compiled from its tree at load.
fn plain_values(archetype: &Archetype, registry: &ComponentRegistry) -> Option<Vec<PlainNode>> {
    let compiled = archetype.compiled.as_ref()?;
    if !compiled.nodes.iter().all(|node| node.is_plain()) {
        return None;
    }
    let mut nodes = Vec::with_capacity(compiled.nodes.len());
    for node in &compiled.nodes {
        let mut values = Vec::with_capacity(node.typed.len());
        for (id, value) in &node.typed {
            if registry.layout_bytes(*id).is_none() {
                // Its value as resolved: what compiling decoded it from.
                let entity = archetype.resolved().entity_at(&node.path)?;
                let written = entity.components.get(registry.name_arc(*id))?;
                values.push((*id, serde_json::to_vec(written).ok()?));
                continue;
            }
            let ops = registry.ops(*id);
            let mut bytes = Vec::new();
            ops.write_postcard_typed(value, &mut bytes).ok()?;
            // What does not read back as the same bytes is compiled from JSON instead.
            let read = ops.read_postcard(&bytes).ok()?;
            let mut again = Vec::new();
            ops.write_postcard_typed(&read, &mut again).ok()?;
            if again != bytes {
                return None;
            }
            values.push((*id, bytes));
        }
        nodes.push(PlainNode {
            path: node.path.to_string(),
            parent: node.parent.map(|p| p as u32),
            base: node.base as u32,
            values,
        });
    }
    Some(nodes)
}

/// The registry's ID of each component of the cook's table, its layout checked, and whether
/// its values are stored as JSON.
fn registered_components(
    registry: &ComponentRegistry,
    body: &Body<'_>,
) -> Result<Vec<(ComponentId, bool)>, CookError> {
    (body.components.iter())
        .map(|component| {
            let name = component.name.to_string();
            let Some(id) = registry.id(component.name) else {
                return Err(CookError::new(CookErrorKind::UnknownComponent {
                    component: name,
                }));
            };
            let Some(cooked) = component.layout else {
                // Values as JSON: read as an archetype file's are.
                return Ok((id, true));
            };
            let now = registry.layout_bytes(id);
            if now != Some(cooked.0) {
                let change = match now {
                    Some(now) => describe_change(&component.fields, &fields_of(now)),
                    None => "its layout can no longer be traced".to_string(),
                };
                return Err(CookError::new(CookErrorKind::LayoutChanged {
                    component: name,
                    change,
                }));
            }
            Ok((id, false))
        })
        .collect()
}

/// The values of cooked entities, read.
fn cooked_nodes(
    nodes: &[cook::CookedNode<'_>],
    components: &[(ComponentId, bool)],
    registry: &ComponentRegistry,
    unknown_fields: Severity,
) -> Result<Vec<CookedNode>, String> {
    (nodes.iter().enumerate())
        .map(|(i, node)| {
            let parent_ok = node.parent.is_none_or(|p| (p as usize) < i);
            if !parent_ok || node.base as usize >= nodes.len() {
                return Err(format!("entity `{}` has no place in it", node.path));
            }
            let typed = (node.values.iter())
                .map(|(component, bytes)| {
                    let Some(&(id, json)) = components.get(*component as usize) else {
                        return Err(format!("entity `{}` names no component", node.path));
                    };
                    let value = match json {
                        true => json_value(registry, id, bytes.0, unknown_fields),
                        false => postcard_value(registry, id, bytes.0),
                    };
                    Ok((id, value?))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(CookedNode {
                path: match node.path {
                    "" => crate::archetype::compiled::root_path(),
                    path => Arc::from(path),
                },
                parent: node.parent.map(|p| p as usize),
                base: node.base as usize,
                typed,
            })
        })
        .collect()
}

/// A value of component `id` the cook holds in postcard.
fn postcard_value(
    registry: &ComponentRegistry,
    id: ComponentId,
    bytes: &[u8],
) -> Result<TypedValue, String> {
    registry
        .ops(id)
        .read_postcard(bytes)
        .map_err(|(field, message)| {
            let name = registry.name(id);
            match field.segments().is_empty() {
                true => format!("component `{name}`: {message}"),
                false => format!("component `{name}`, field `{field}`: {message}"),
            }
        })
}

/// A value of component `id` the cook holds as JSON, decoded as compiling decodes one (a
/// field the type does not have refused when `unknown_fields` makes it an error).
fn json_value(
    registry: &ComponentRegistry,
    id: ComponentId,
    json: &[u8],
    unknown_fields: Severity,
) -> Result<TypedValue, String> {
    let name = registry.name(id);
    let value: serde_json::Value = serde_json::from_slice(json)
        .map_err(|error| format!("component `{name}` does not read: {error}"))?;
    let mut unknown = Vec::new();
    let typed = (registry.ops(id).decode(&value, &mut unknown))
        .map_err(|error| format!("component `{name}`: {}", error.message))?;
    match unknown.first() {
        Some(field) if unknown_fields == Severity::Error => {
            Err(format!("component `{name}` has no field `{field}`"))
        }
        _ => Ok(typed),
    }
}

/// A layout's fields for people: each top-level field's name with its layout written out
/// (one entry, named `""`, for a value that is not a struct).
fn fields_of(layout_bytes: &[u8]) -> Vec<(String, String)> {
    let Ok(layout) = crate::component::from_bytes::<Layout>(layout_bytes) else {
        return Vec::new();
    };
    let fields = match &layout {
        Layout::Struct(fields) => fields,
        Layout::Newtype(inner) => match &**inner {
            Layout::Struct(fields) => fields,
            other => return vec![(String::new(), format!("{other:?}"))],
        },
        other => return vec![(String::new(), format!("{other:?}"))],
    };
    (fields.iter())
        .map(|(name, layout)| (name.clone(), format!("{layout:?}")))
        .collect()
}

/// The first difference between the fields a cook recorded (`before`) and a layout's now.
fn describe_change(before: &[(String, String)], now: &[(String, String)]) -> String {
    let find = |fields: &[(String, String)], name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, l)| l.clone())
    };
    for (name, layout) in now {
        match find(before, name) {
            None if name.is_empty() => return format!("was {}, is now {layout}", short(before)),
            None => return format!("field `{name}` added"),
            Some(old) if old != *layout => {
                return format!("field `{name}` was {old}, is now {layout}")
            }
            Some(_) => {}
        }
    }
    if let Some((name, _)) = before.iter().find(|(name, _)| find(now, name).is_none()) {
        return format!("field `{name}` removed");
    }
    if before.iter().map(|(n, _)| n).ne(now.iter().map(|(n, _)| n)) {
        return "its fields were reordered".to_string();
    }
    "a field's type changed".to_string()
}

/// The layout of a value that is not a struct, as [`fields_of`] lists it.
fn short(fields: &[(String, String)]) -> String {
    match fields {
        [(name, layout)] if name.is_empty() => layout.clone(),
        _ => "a struct".to_string(),
    }
}
