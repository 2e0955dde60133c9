//! [`ResolvedTree`]: an archetype's resolved content as a loaded [`Archetype`] holds it. The
//! tree of an archetype that nothing builds on (most archetypes: the leaves of the `extends`
//! tree) is read only by tools and hot reload, yet is the largest thing a library would keep
//! of it. Such a tree is dropped once the archetype is compiled, and built again, from the
//! file's kept text and its parents' trees, the first time it is read.
//!
//! [`Archetype`]: crate::archetype::loaded::Archetype

use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHasher;

use crate::archetype::file::parse_doc;
use crate::archetype::renames::Renames;
use crate::archetype::resolver::{resolve_alone, DependencyTree, ResolvedEntity};
use crate::component::ComponentRegistry;
use crate::json::{parse_json, SourceText};
#[cfg(doc)]
use crate::limits::Limits;

/// An archetype's resolved content: kept, or built on first read. Reads as the
/// [`ResolvedEntity`] itself.
pub(crate) struct ResolvedTree {
    /// The tree, once built (always, for a kept tree).
    tree: OnceLock<Arc<ResolvedEntity>>,
    /// How to build the tree again; `None` for a kept tree.
    recipe: Option<Box<Recipe>>,
    /// A hash of the tree ([`TreeHash`]): trees with different hashes differ, so telling
    /// whether a reload changed an archetype rarely builds a tree.
    hash: u64,
}

/// Where a dropped tree is built again from.
enum Recipe {
    /// Resolved again from the archetype's file.
    Resolve(TreeRecipe),
    /// Read from the JSON a cooked library holds it as.
    #[cfg(feature = "binary")]
    Cooked(CookedTree),
}

#[cfg(feature = "binary")]
/// An archetype's resolved tree as a cooked library holds it: JSON, inside the cook's bytes.
pub(super) struct CookedTree {
    /// The whole cook (shared by every archetype of it).
    pub bytes: Arc<Vec<u8>>,
    /// Where in it this tree's JSON is.
    pub range: std::ops::Range<usize>,
}

/// What building a dropped tree again reads: the same inputs resolving read the first time,
/// so it gives the same tree.
pub(super) struct TreeRecipe {
    /// The archetype's name.
    pub name: Arc<str>,
    /// Its file's text as it was resolved (shared with the library's copy while that is the
    /// same version).
    pub text: Arc<SourceText>,
    /// The registry it was read with.
    pub registry: Arc<ComponentRegistry>,
    /// The nesting limit of its JSON ([`Limits::max_depth`]) it was read with.
    pub max_depth: usize,
    /// The limit on nested children ([`Limits::max_children_depth`]) it was read with.
    pub max_children_depth: usize,
    /// The renames its old names were mapped with, when it writes any.
    pub renames: Option<Arc<Renames>>,
    /// Each archetype it names (parents, children's archetypes): its tree and depth.
    pub deps: Box<[DependencyTree]>,
}

impl ResolvedTree {
    /// A tree kept as it is; `hash` is [`TreeHash::of`] it.
    pub(super) fn kept(tree: Arc<ResolvedEntity>, hash: TreeHash) -> ResolvedTree {
        ResolvedTree {
            hash: hash.0,
            tree: OnceLock::from(tree),
            recipe: None,
        }
    }

    /// A tree dropped after [`release`](Self::release), built again from `recipe` when read;
    /// `hash` is [`TreeHash::of`] it. It holds `tree` (when given) until then, so the reload
    /// that made it compares it without building.
    pub(super) fn rebuildable(
        tree: Option<Arc<ResolvedEntity>>,
        recipe: TreeRecipe,
        hash: TreeHash,
    ) -> ResolvedTree {
        ResolvedTree {
            hash: hash.0,
            tree: tree.map_or_else(OnceLock::new, OnceLock::from),
            recipe: Some(Box::new(Recipe::Resolve(recipe))),
        }
    }

    #[cfg(feature = "binary")]
    /// A tree a cooked library holds as JSON, read the first time it is read; `hash` is the
    /// [`TreeHash`] the cook recorded.
    pub(super) fn cooked(tree: CookedTree, hash: u64) -> ResolvedTree {
        ResolvedTree {
            hash,
            tree: OnceLock::new(),
            recipe: Some(Box::new(Recipe::Cooked(tree))),
        }
    }

    /// Drops the tree if it can be built again.
    pub fn release(&mut self) {
        if self.recipe.is_some() {
            self.tree.take();
        }
    }

    /// The tree, built now if it was dropped.
    pub fn arc(&self) -> &Arc<ResolvedEntity> {
        self.tree.get_or_init(|| match self.recipe.as_deref() {
            Some(Recipe::Resolve(recipe)) => Arc::new(recipe.build()),
            #[cfg(feature = "binary")]
            Some(Recipe::Cooked(cooked)) => Arc::new(cooked.read()),
            // A kept tree is set when it is made; this is never reached.
            None => Arc::default(),
        })
    }

    /// Whether the tree is built (kept, or read since it was dropped).
    #[cfg(test)]
    pub fn is_built(&self) -> bool {
        self.tree.get().is_some()
    }

    /// The [`TreeHash`] of the tree.
    #[cfg(feature = "binary")]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Whether `hash` is the tree's hash (then the trees may be equal).
    pub(super) fn hashed_as(&self, hash: &TreeHash) -> bool {
        self.hash == hash.0
    }

    /// Whether the two trees are equal: by hash when that tells them apart, else built and
    /// compared (equal hashes do not prove equal trees).
    pub fn same_as(&self, other: &ResolvedTree) -> bool {
        self.hash == other.hash && **self.arc() == **other.arc()
    }
}

impl Deref for ResolvedTree {
    type Target = ResolvedEntity;

    fn deref(&self) -> &ResolvedEntity {
        self.arc()
    }
}

impl TreeRecipe {
    /// Resolves the archetype again from its text and its dependencies' trees. It resolved
    /// from the same inputs before, so this cannot fail; if it did (a bug), the tree is empty
    /// and the failure logged, rather than a panic in a reader.
    fn build(&self) -> ResolvedEntity {
        let built = self.resolve();
        debug_assert!(built.is_some(), "archetype `{}` resolved again", self.name);
        built.unwrap_or_else(|| {
            tracing::error!(archetype = %self.name, "archetype did not resolve again");
            ResolvedEntity::default()
        })
    }

    fn resolve(&self) -> Option<ResolvedEntity> {
        let mut value = parse_json(&self.text, self.max_depth).ok()?;
        let max_children = self.max_children_depth;
        let (mut doc, _) = parse_doc(&mut value, &self.text, &self.registry, max_children);
        if let Some((mapped, _)) = (self.renames.as_deref()).and_then(|r| r.map_doc(&doc)) {
            doc = mapped;
        }
        let doc = Arc::new(doc);
        let (tree, _, _) = resolve_alone(&self.name, &doc, &self.deps, &*self.registry)?;
        Some(Arc::unwrap_or_clone(tree))
    }
}

#[cfg(feature = "binary")]
impl CookedTree {
    /// The tree. The cook's checksum held when it was loaded, so this cannot fail unless the
    /// cook was made by hand; then the tree is empty and the failure logged, rather than a
    /// panic in a reader.
    fn read(&self) -> ResolvedEntity {
        let json = self.bytes.get(self.range.clone()).unwrap_or_default();
        crate::archetype::cook::read_tree(json).unwrap_or_else(|error| {
            tracing::error!(%error, "a cooked archetype's resolved tree did not read");
            ResolvedEntity::default()
        })
    }
}

/// A hash of everything a tree's equality compares: a walk of the whole tree, so a load takes
/// it where the archetype is compiled (on any core), not where the tree is installed.
#[derive(Clone, Copy, Debug)]
pub(super) struct TreeHash(u64);

impl TreeHash {
    /// The hash of `tree`.
    pub fn of(tree: &ResolvedEntity) -> TreeHash {
        TreeHash(tree_hash(tree))
    }
}

fn tree_hash(tree: &ResolvedEntity) -> u64 {
    fn entity(tree: &ResolvedEntity, hasher: &mut FxHasher) {
        tree.source.hash(hasher);
        tree.components.hash(hasher);
        tree.formerly.hash(hasher);
        tree.children.len().hash(hasher);
        for (name, child) in &tree.children {
            name.hash(hasher);
            entity(child, hasher);
        }
    }
    let mut hasher = FxHasher::default();
    entity(tree, &mut hasher);
    hasher.finish()
}
