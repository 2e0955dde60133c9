//! [`Reservation`]: the handles a prepared scene's entities will have, reserved in the world
//! before they are spawned (by [`PreparedScene::reserve`](crate::PreparedScene::reserve), or by
//! the first [`commit_slice`](crate::PreparedScene::commit_slice)), and how the commit knows they
//! are still the scene's.
//!
//! Reserved handles are empty entities in the world. Beside them a *sentinel* entity holds a
//! private [`ReservationMark`]. `World::clear` hands out the same handles again from the start,
//! so after a clear a reserved handle may name someone else's entity; the clear also removes
//! the sentinel, which no one else can recreate. While the sentinel is there, a reserved handle
//! the world still contains was never despawned (a despawn changes the handle's generation), so
//! it is the scene's; if it is still empty, nothing was put on it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use hecs::{Entity, World};

use crate::scene::commit_error::CommitError;

/// Tells reservations apart (a world may hold several at once).
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The sentinel's component: which reservation, its handles, and whether a scene still holds it.
struct ReservationMark {
    token: u64,
    /// Dead once the scene holding the reservation was dropped without being committed or
    /// abandoned: the next reservation or commit into the world releases the handles.
    owner: Weak<()>,
    handles: Arc<[Entity]>,
}

/// Handles reserved in a world for every entity of a scene (by scene index), and the sentinel
/// that says whether they are still the scene's.
pub(super) struct Reservation {
    pub(super) handles: Arc<[Entity]>,
    sentinel: Entity,
    token: u64,
    /// Keeps the sentinel's `owner` alive while the scene holds the reservation.
    _owner: Arc<()>,
}

impl Reservation {
    /// Reserves `count` handles in `world` (empty entities at once) and spawns the sentinel.
    /// Releases first the reservations of scenes that were dropped.
    pub(super) fn new(world: &mut World, count: usize) -> Reservation {
        release_dropped(world);
        let owner = Arc::new(());
        let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        let handles: Arc<[Entity]> = world.reserve_entities(count as u32).collect();
        world.flush();
        let mark = ReservationMark {
            token,
            owner: Arc::downgrade(&owner),
            handles: handles.clone(),
        };
        let sentinel = world.spawn((mark,));
        Reservation {
            handles,
            sentinel,
            token,
            _owner: owner,
        }
    }

    /// Whether the sentinel is in the world as this reservation left it: the world was not
    /// cleared since.
    fn intact(&self, world: &World) -> bool {
        world
            .get::<&ReservationMark>(self.sentinel)
            .is_ok_and(|mark| mark.token == self.token)
    }

    /// `Ok` if the world was not cleared and the handles at the scene indices `pending` (those
    /// not spawned yet) are still empty entities.
    pub(super) fn check(
        &self,
        world: &World,
        mut pending: impl Iterator<Item = u32>,
    ) -> Result<(), CommitError> {
        if !self.intact(world) {
            return Err(CommitError::WorldCleared);
        }
        let lost = pending.find_map(|index| {
            let entity = self.handles[index as usize];
            let empty = world.entity(entity).is_ok_and(|entity| entity.is_empty());
            (!empty).then_some(entity)
        });
        match lost {
            Some(entity) => Err(CommitError::ReservedEntityLost { entity }),
            None => Ok(()),
        }
    }

    /// The scene is in the world: its handles are its entities now; the sentinel goes.
    pub(super) fn finish(&self, world: &mut World) {
        if self.intact(world) {
            let _ = world.despawn(self.sentinel);
        }
    }

    /// Despawns every handle (spawned or still empty) and the sentinel, unless the world was
    /// cleared since: then none of them is the scene's any more, and nothing is despawned.
    pub(super) fn release(&self, world: &mut World) {
        if self.intact(world) {
            despawn_all(world, self.sentinel, &self.handles);
        }
    }
}

/// Releases the reservations of scenes dropped without being committed or abandoned: their
/// handles (and entities committed in slices) are despawned.
pub(super) fn release_dropped(world: &mut World) {
    let dropped: Vec<(Entity, Arc<[Entity]>)> = world
        .query::<(Entity, &ReservationMark)>()
        .iter()
        .filter(|(_, mark)| mark.owner.strong_count() == 0)
        .map(|(sentinel, mark)| (sentinel, mark.handles.clone()))
        .collect();
    for (sentinel, handles) in dropped {
        despawn_all(world, sentinel, &handles);
    }
}

fn despawn_all(world: &mut World, sentinel: Entity, handles: &[Entity]) {
    for handle in handles {
        let _ = world.despawn(*handle);
    }
    let _ = world.despawn(sentinel);
}
