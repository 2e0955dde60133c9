//! Scenes follow their archetypes' current structure: each archetype instance a scene holds
//! gets the children its archetype gained since the scene was saved, as hot reload would have
//! given them (entries for children it lost are left out while planning).
//!
//! The scene's archetype table says which children each archetype had when it was saved, so a
//! child the game despawned on purpose (a turret's destroyed gun) is not brought back. Files
//! written before scenes had the table cannot tell the two apart: every child the instance
//! lacks is spawned.
//!
//! A gained child gets its handle before the instance is built ([`Follow::reserve_gained`]),
//! so `#` references to it (from its parent's components, say) resolve like any other; its
//! entity is built with the instance ([`build_instances`](crate::scene::load::build_instances))
//! and linked to its parent once the scene is in the world ([`follow_archetypes`]).

use std::borrow::Cow;
use std::sync::Arc;

use hecs::{Entity, World};
use rustc_hash::FxHashMap;

use crate::archetype::Archetype;
use crate::archetype::ArchetypeId;
use crate::component::StableId;
use crate::scene::commit;
use crate::scene::header::ArchetypeNodes;
use crate::scene::load::{saved_children, Context, LoadedScene, Plan, SceneChange};

/// What a load does about children the archetypes gained.
pub(super) struct Follow<'n> {
    /// Each archetype's children when the scene was saved (`None`: a file without the table).
    nodes: Option<&'n ArchetypeNodes>,
    /// Per archetype: the children (node indices) an instance may lack because they were gained.
    candidates: FxHashMap<ArchetypeId, Vec<usize>>,
    /// Handles reserved for gained children; what is left is released after the load.
    pub spare: Vec<Entity>,
    /// The gained children given handles so far.
    pub gained: Vec<Gained>,
}

/// A child an archetype gained, to be spawned under one instance.
pub(super) struct Gained {
    /// The entry index of the instance's root, and its entity.
    pub root: usize,
    pub root_entity: Entity,
    pub archetype: Arc<Archetype>,
    /// The child's node index.
    pub node: usize,
    pub handle: Entity,
    pub parent: Entity,
    pub id: StableId,
}

/// What [`Follow`] reserved and found, once the instances are built.
#[derive(Default)]
pub(super) struct Followed {
    /// Handles reserved and not needed.
    pub spare: Vec<Entity>,
    pub gained: Vec<Gained>,
}

impl Followed {
    /// Every handle it holds (to undo a load that gives up).
    pub fn handles(&self) -> impl Iterator<Item = Entity> + '_ {
        (self.spare.iter().copied()).chain(self.gained.iter().map(|gained| gained.handle))
    }
}

impl<'n> Follow<'n> {
    /// What was reserved and found.
    pub fn finish(self) -> Followed {
        Followed {
            spare: self.spare,
            gained: self.gained,
        }
    }

    /// For a scene with the archetype table `nodes` whose entries were planned as `plans`.
    pub fn new(context: &Context<'_>, nodes: Option<&'n ArchetypeNodes>, plans: &[Plan]) -> Self {
        let mut follow = Follow {
            nodes,
            candidates: FxHashMap::default(),
            spare: Vec::new(),
            gained: Vec::new(),
        };
        for plan in plans {
            if let Some((marker, archetype, _)) = &plan.instance {
                if marker.is_root() && !follow.candidates.contains_key(&marker.archetype) {
                    let candidates = follow.gained_children(context, marker.archetype, archetype);
                    follow.candidates.insert(marker.archetype, candidates);
                }
            }
        }
        follow
    }

    /// How many handles the gained children could need at most.
    pub fn handles_needed(&self, plans: &[Plan]) -> u32 {
        let needed: usize = plans
            .iter()
            .filter_map(|plan| plan.instance.as_ref())
            .filter(|(marker, ..)| marker.is_root())
            .map(|(marker, ..)| self.candidates.get(&marker.archetype).map_or(0, Vec::len))
            .sum();
        u32::try_from(needed).unwrap_or(u32::MAX)
    }

    /// The children of `archetype` (node indices) it may have gained since the scene was
    /// saved: those not in the scene's table for it (an archetype the table does not name had
    /// none), or all of them in a file without a table.
    fn gained_children(
        &self,
        context: &Context<'_>,
        id: ArchetypeId,
        archetype: &Archetype,
    ) -> Vec<usize> {
        let (Some(compiled), Some(name)) = (&archetype.compiled, context.library.name_of(id))
        else {
            return Vec::new();
        };
        // The table may know the archetype, and its children, by former names.
        let saved: Option<Vec<Cow<'_, str>>> = self.nodes.map(|nodes| {
            let children = saved_children(context, nodes, name).map_or(&[][..], Vec::as_slice);
            children
                .iter()
                .map(|child| match archetype.resolved.current_path(child) {
                    Some(now) => Cow::Owned(now),
                    None => Cow::Borrowed(child.as_str()),
                })
                .collect()
        });
        (1..compiled.nodes.len())
            .filter(|&index| {
                let path = &*compiled.nodes[index].path;
                saved
                    .as_ref()
                    .is_none_or(|children| !children.iter().any(|child| child == path))
            })
            .collect()
    }

    /// Gives handles to the gained children the instance rooted at entry `root` (planned as
    /// `plan`, its entities by path in `paths`) lacks, adding them to `paths`.
    pub fn reserve_gained(
        &mut self,
        context: &Context<'_>,
        root: usize,
        plan: &Plan,
        paths: &mut FxHashMap<String, Entity>,
    ) {
        let Some((marker, archetype, _)) = &plan.instance else {
            return;
        };
        let (true, Some(candidates), Some(compiled)) = (
            marker.is_root(),
            self.candidates.get(&marker.archetype),
            &archetype.compiled,
        ) else {
            return;
        };
        for &node in candidates {
            let path = &*compiled.nodes[node].path;
            if paths.contains_key(path) {
                continue;
            }
            let parent = compiled.nodes[node]
                .parent
                .and_then(|parent| paths.get(&*compiled.nodes[parent].path).copied());
            let (Some(parent), Some(&root_entity)) = (parent, paths.get("")) else {
                continue;
            };
            let Some(handle) = self.spare.pop() else {
                return;
            };
            paths.insert(path.to_string(), handle);
            self.gained.push(Gained {
                root,
                root_entity,
                archetype: archetype.clone(),
                node,
                handle,
                parent,
                id: context.library.spawn_rng().next_id(),
            });
        }
    }
}

/// Once the scene is in `world`: links the gained children to their parents, adds them to
/// `loaded` with a change each, releases the handles not needed, and hands `loaded` the
/// file's `meta`.
pub(super) fn follow_archetypes(
    context: &Context<'_>,
    world: &mut World,
    loaded: &mut LoadedScene,
    follow: Followed,
    meta: Option<serde_json::Map<String, serde_json::Value>>,
) {
    loaded.meta = meta;
    commit::roll_back(world, follow.spare);
    for gained in follow.gained {
        commit::link_child(world, gained.parent, gained.handle);
        let instance = world
            .get::<&StableId>(gained.root_entity)
            .map_or(StableId(0), |id| *id);
        let archetype = context.library.name_of(gained.archetype_id());
        let child = gained
            .archetype
            .compiled
            .as_ref()
            .map(|compiled| compiled.nodes[gained.node].path.to_string());
        loaded.entities.push(gained.handle);
        loaded.by_id.insert(gained.id, gained.handle);
        loaded.changes.push(SceneChange::ChildSpawned {
            instance,
            archetype: archetype.unwrap_or_default().to_string(),
            child: child.unwrap_or_default(),
            id: gained.id,
        });
    }
}

impl Gained {
    fn archetype_id(&self) -> ArchetypeId {
        self.archetype
            .compiled
            .as_ref()
            .map_or(ArchetypeId(u32::MAX), |compiled| {
                compiled.nodes[self.node].marker.archetype
            })
    }
}
