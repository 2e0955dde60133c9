//! `archetool tree`: the inheritance tree, with each archetype's child entities.
//!
//! ```text
//! base/creature (abstract)
//! ├── allies/soldier
//! │   └── allies/squad_leader
//! └── enemies/enemy (abstract)
//! structures/turret
//! ├── #gun -> structures/gun
//! ├── #sensor
//! └── structures/heavy_turret
//! ```
//!
//! Roots are the archetypes without parents. An archetype with several parents appears under
//! each; after its first appearance it is marked `(*)` and not expanded again. Under each
//! archetype come its child entities (`#name`, `-> archetype` when the child is an instance of
//! one; inherited children included), then the archetypes that extend it. Archetypes that do
//! not load are marked `(errors)` and placed by what their file's `extends` says.

use std::collections::{BTreeMap, BTreeSet};

use archetype_engine::{ArchetypeLibrary, ResolvedEntity};
use clap::Args;

use super::{unknown_archetype, CliError, Context, DirArg, Exit};

/// Arguments of `archetool tree`.
#[derive(Clone, Debug, Args)]
pub struct TreeArgs {
    /// Show only this archetype: what it extends (up to the roots), then its own subtree.
    pub name: Option<String>,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Draws the inheritance tree of every archetype under `--dir`, or the ancestry and subtree of
/// `NAME`.
///
/// # Errors
/// [`CliError::Usage`] if there is no archetype `NAME`.
pub fn tree(args: &TreeArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let graph = Graph::of(&library);
    let mut drawing = Drawing::default();
    match &args.name {
        None => {
            for root in graph.roots() {
                drawing.archetype(&graph, root, "", "", &mut Vec::new());
            }
            // Archetypes not reachable from a root: parents that do not exist, cycles.
            for name in graph.nodes.keys() {
                if !drawing.expanded.contains(name.as_str()) {
                    drawing.archetype(&graph, name, "", "", &mut Vec::new());
                }
            }
        }
        Some(name) => {
            let Some(node) = graph.nodes.get(name.as_str()) else {
                return Err(unknown_archetype(name, &library));
            };
            if !node.parents.is_empty() {
                drawing.line(format!("{name} extends:"));
                drawing.ancestors(&graph, name, "", &mut vec![name.as_str()]);
                drawing.line(String::new());
            }
            drawing.archetype(&graph, name, "", "", &mut Vec::new());
        }
    }
    if drawing.repeats {
        drawing.line("(*) shown in full above".to_string());
    }
    context.out.write_all(drawing.text.as_bytes())?;
    Ok(Exit::Success)
}

/// What the tree shows of one archetype.
struct ArchetypeNode<'a> {
    parents: Vec<String>,
    is_abstract: bool,
    /// `None` if the archetype does not load.
    resolved: Option<&'a ResolvedEntity>,
}

/// Every archetype, its parents and the archetypes that extend it.
struct Graph<'a> {
    nodes: BTreeMap<String, ArchetypeNode<'a>>,
    derived: BTreeMap<String, Vec<String>>,
}

impl<'a> Graph<'a> {
    fn of(library: &'a ArchetypeLibrary) -> Self {
        let mut nodes = BTreeMap::new();
        for name in library.names() {
            // What the file declares, even if the archetype does not load; nothing if the
            // file is not even JSON.
            let (is_abstract, parents) = library
                .declared(name)
                .map_or((false, Vec::new()), |(is_abstract, parents)| {
                    (is_abstract, parents.to_vec())
                });
            let resolved = library.get(name).map(|archetype| archetype.resolved());
            nodes.insert(
                name.to_string(),
                ArchetypeNode {
                    parents,
                    is_abstract,
                    resolved,
                },
            );
        }
        let mut derived: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, node) in &nodes {
            for parent in &node.parents {
                derived
                    .entry(parent.clone())
                    .or_default()
                    .push(name.clone());
            }
        }
        Graph { nodes, derived }
    }

    fn roots(&self) -> impl Iterator<Item = &str> {
        self.nodes
            .iter()
            .filter(|(_, node)| node.parents.is_empty())
            .map(|(name, _)| name.as_str())
    }

    fn label(&self, name: &str) -> String {
        let mut label = name.to_string();
        if let Some(node) = self.nodes.get(name) {
            if node.is_abstract {
                label.push_str(" (abstract)");
            }
            if node.resolved.is_none() {
                label.push_str(" (errors)");
            }
        } else {
            label.push_str(" (missing)");
        }
        label
    }
}

/// The text being drawn, and what was drawn already.
#[derive(Default)]
struct Drawing {
    text: String,
    expanded: BTreeSet<String>,
    repeats: bool,
}

/// One entry under a node: `(label, what to draw under it)`.
enum Item<'a> {
    Child(String, &'a ResolvedEntity),
    Archetype(&'a str),
}

impl Drawing {
    fn line(&mut self, line: String) {
        self.text.push_str(&line);
        self.text.push('\n');
    }

    /// Draws archetype `name` (its line starts with `prefix` + `connector`), its child
    /// entities and its derived archetypes; `indent` continues the lines under it.
    fn archetype<'g>(
        &mut self,
        graph: &'g Graph<'_>,
        name: &'g str,
        indent: &str,
        connector: &str,
        path: &mut Vec<&'g str>,
    ) {
        let mut label = graph.label(name);
        if path.contains(&name) {
            self.line(format!("{indent}{connector}{label} (cycle)"));
            return;
        }
        if self.expanded.contains(name) {
            self.repeats = true;
            label.push_str(" (*)");
            self.line(format!("{indent}{connector}{label}"));
            return;
        }
        self.expanded.insert(name.to_string());
        self.line(format!("{indent}{connector}{label}"));
        let mut items: Vec<Item<'g>> = Vec::new();
        if let Some(resolved) = graph.nodes.get(name).and_then(|node| node.resolved) {
            items.extend(child_items(resolved));
        }
        if let Some(derived) = graph.derived.get(name) {
            items.extend(derived.iter().map(|name| Item::Archetype(name.as_str())));
        }
        let indent = format!("{indent}{}", continuation(connector));
        path.push(name);
        let count = items.len();
        for (item, connector) in items.into_iter().zip(connectors(count)) {
            match item {
                Item::Archetype(derived) => {
                    self.archetype(graph, derived, &indent, connector, path)
                }
                Item::Child(label, entity) => self.child(&label, entity, &indent, connector),
            }
        }
        path.pop();
    }

    /// Draws a child entity and its own children.
    fn child(&mut self, label: &str, entity: &ResolvedEntity, indent: &str, connector: &str) {
        self.line(format!("{indent}{connector}{label}"));
        let indent = format!("{indent}{}", continuation(connector));
        let count = entity.children.len();
        for (item, connector) in child_items(entity).zip(connectors(count)) {
            if let Item::Child(label, entity) = item {
                self.child(&label, entity, &indent, connector);
            }
        }
    }

    /// Draws what `name` extends, recursively, parents in `extends` order.
    fn ancestors<'g>(
        &mut self,
        graph: &'g Graph<'_>,
        name: &str,
        indent: &str,
        path: &mut Vec<&'g str>,
    ) {
        let Some(node) = graph.nodes.get(name) else {
            return;
        };
        for (parent, connector) in node.parents.iter().zip(connectors(node.parents.len())) {
            let label = graph.label(parent);
            if path.contains(&parent.as_str()) {
                self.line(format!("{indent}{connector}{label} (cycle)"));
                continue;
            }
            self.line(format!("{indent}{connector}{label}"));
            path.push(parent);
            self.ancestors(
                graph,
                parent,
                &format!("{indent}{}", continuation(connector)),
                path,
            );
            path.pop();
        }
    }
}

/// `#name`, or `#name -> archetype` for a child that is an instance of an archetype.
fn child_items(entity: &ResolvedEntity) -> impl Iterator<Item = Item<'_>> {
    entity.children.iter().map(|(name, child)| {
        let label = match &child.source {
            Some(archetype) => format!("#{name} -> {archetype}"),
            None => format!("#{name}"),
        };
        Item::Child(label, child)
    })
}

/// The connectors of `count` entries under one node: `├── ` for each but the last, `└── `.
fn connectors(count: usize) -> impl Iterator<Item = &'static str> {
    (1..=count).map(move |i| {
        if i == count {
            "└── "
        } else {
            "├── "
        }
    })
}

/// What continues the lines under an entry drawn with `connector`.
fn continuation(connector: &str) -> &'static str {
    match connector {
        "├── " => "│   ",
        "└── " => "    ",
        _ => "",
    }
}
