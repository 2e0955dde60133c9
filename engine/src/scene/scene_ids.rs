//! Which stable ID each entity of a scene gets in the world, for both loading routes (the
//! careful loader places a refusal at its entry; the fast one gives up on it): one copy of the
//! rule of [`IdConflict`].
//!
//! Loading into a world without stable IDs, every entity keeps its own. Into a world that
//! holds some: with [`IdConflict::Error`], an ID already there is refused and the others kept;
//! with [`IdConflict::Remap`], every entity gets a fresh ID, drawn in the file's order (so two
//! loads of one file into equal worlds give the same IDs), and the scene's own is recorded.

use hecs::World;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::archetype::SpawnRng;
use crate::component::StableId;
use crate::scene::load::IdConflict;

/// The world's stable IDs as a load found them, and the fresh ones it gave.
pub(super) struct SceneIds<'r> {
    /// With [`IdConflict::Error`], the stable IDs in the world before the load (a remapping
    /// load needs only to know whether there are any: it does not look at each, so its cost
    /// does not grow with the world).
    existing: FxHashSet<StableId>,
    /// Whether the world held any stable ID before the load.
    any: bool,
    policy: IdConflict,
    rng: &'r SpawnRng,
    /// Scene ID → the fresh ID it got.
    remapped: FxHashMap<StableId, StableId>,
}

/// An entity's stable ID is already in the world, and the load does not remap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct InWorld(pub StableId);

impl<'r> SceneIds<'r> {
    /// The rule for a load into `world` by `policy`, fresh IDs drawn from `rng`.
    pub fn new(world: &World, policy: IdConflict, rng: &'r SpawnRng) -> Self {
        let existing: FxHashSet<StableId> = match policy {
            IdConflict::Error => world.query::<&StableId>().iter().copied().collect(),
            IdConflict::Remap => FxHashSet::default(),
        };
        let any = !existing.is_empty() || world.query::<&StableId>().iter().next().is_some();
        SceneIds {
            existing,
            any,
            policy,
            rng,
            remapped: FxHashMap::default(),
        }
    }

    /// The stable ID the scene's entity `id` gets (call once per entity, in the file's order).
    #[inline]
    pub fn assign(&mut self, id: StableId) -> Result<StableId, InWorld> {
        if !self.any {
            return Ok(id);
        }
        self.check(id)?;
        match self.policy {
            IdConflict::Remap => {
                let fresh = self.rng.next_id();
                self.remapped.insert(id, fresh);
                Ok(fresh)
            }
            IdConflict::Error => Ok(id),
        }
    }

    /// Whether [`assign`](Self::assign) will refuse the scene's entity `id` (without giving
    /// it an ID: the careful loader checks every entry before the entities are built).
    #[inline]
    pub fn check(&self, id: StableId) -> Result<(), InWorld> {
        match self.policy {
            IdConflict::Error if self.existing.contains(&id) => Err(InWorld(id)),
            IdConflict::Error | IdConflict::Remap => Ok(()),
        }
    }

    /// The ID [`assign`](Self::assign) gave the scene's entity `id`.
    #[inline]
    pub fn get(&self, id: StableId) -> StableId {
        match self.remapped.is_empty() {
            true => id,
            false => self.remapped.get(&id).copied().unwrap_or(id),
        }
    }

    /// Scene ID → fresh ID, for every entity given one so far.
    pub fn remapped(&self) -> &FxHashMap<StableId, StableId> {
        &self.remapped
    }

    /// Scene ID → fresh ID, for every entity given one.
    pub fn into_remapped(self) -> FxHashMap<StableId, StableId> {
        self.remapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world_with(id: u64) -> World {
        let mut world = World::new();
        world.spawn((StableId(id),));
        world
    }

    #[test]
    fn keeps_refuses_or_remaps_by_the_policy() {
        let rng = SpawnRng::new(1);
        let empty = World::new();
        let mut ids = SceneIds::new(&empty, IdConflict::Error, &rng);
        assert_eq!(ids.assign(StableId(5)), Ok(StableId(5)));
        assert!(ids.into_remapped().is_empty());

        let world = world_with(5);
        let mut ids = SceneIds::new(&world, IdConflict::Error, &rng);
        assert_eq!(ids.assign(StableId(6)), Ok(StableId(6)));
        assert_eq!(ids.check(StableId(5)), Err(InWorld(StableId(5))));
        assert_eq!(ids.assign(StableId(5)), Err(InWorld(StableId(5))));

        let mut ids = SceneIds::new(&world, IdConflict::Remap, &rng);
        assert_eq!(ids.check(StableId(5)), Ok(()));
        let fresh = ids.assign(StableId(6)).expect("remapped");
        assert_ne!(fresh, StableId(6));
        assert_eq!(ids.get(StableId(6)), fresh);
        assert_eq!(ids.get(StableId(9)), StableId(9));
        assert_eq!(ids.into_remapped().len(), 1);
    }
}
