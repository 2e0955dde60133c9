//! Compiled archetypes from a cooked library's values ([`assemble`]), without JSON.

use std::sync::{Arc, OnceLock};

use super::{
    link_children, node_index_of, root_path, CompiledArchetype, CompiledNode, NodeTemplate,
    ROOT_ONLY,
};
use crate::component::{ArchetypeId, ArchetypeInstance, ComponentId, OverridesId, TypedValue};

/// One entity of a concrete archetype as a cooked library keeps it: its place in the instance
/// and its component values, already typed.
pub(crate) struct CookedNode {
    /// `""` for the root, `"turret"` for a child.
    pub path: Arc<str>,
    pub parent: Option<usize>,
    /// The node `#` references written for this entity are relative to.
    pub base: usize,
    pub typed: Vec<(ComponentId, TypedValue)>,
}

/// Builds a concrete archetype from values a cooked library held (entities in node order, no
/// references, no variations: those are compiled from JSON), as [`compile`](super::compile) builds it but for
/// its spawn templates, made on first spawn.
pub(crate) fn assemble(
    archetype: ArchetypeId,
    cooked: Vec<CookedNode>,
    intern: &mut dyn FnMut(&str) -> u32,
) -> CompiledArchetype {
    let (paths, index) = match cooked.as_slice() {
        [root] if root.path.is_empty() => ROOT_ONLY
            .get_or_init(|| node_index_of(&[root_path()]))
            .clone(),
        _ => node_index_of(&cooked.iter().map(|n| n.path.clone()).collect::<Vec<_>>()),
    };
    let mut nodes: Vec<CompiledNode> = (cooked.into_iter().zip(paths.iter()))
        .map(|(node, path)| {
            let marker = ArchetypeInstance {
                archetype,
                node: intern(path),
                overrides: OverridesId::NONE,
            };
            CompiledNode {
                path: path.clone(),
                marker,
                parent: node.parent,
                children: Vec::new(),
                base: node.base,
                template: NodeTemplate::Later(OnceLock::new()),
                typed: node.typed,
                with_refs: Vec::new(),
                ref_specs: Vec::new(),
                varied: Vec::new(),
                varied_places: None,
            }
        })
        .collect();
    link_children(&mut nodes);
    CompiledArchetype {
        simple: nodes.len() == 1,
        nodes,
        paths,
        index,
        bundle_templates: OnceLock::new(),
    }
}

impl CompiledNode {
    /// Whether the entity's values are all typed: none holds `#` references or varies per
    /// spawn (what a cooked library keeps as values; the rest it compiles from JSON).
    pub(crate) fn is_plain(&self) -> bool {
        self.with_refs.is_empty() && self.varied.is_empty() && self.ref_specs.is_empty()
    }
}
