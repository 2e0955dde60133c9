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
//!
//! Releasing a reservation despawns what is the scene's and nothing else: the entities its
//! commit spawned on its handles (recorded as each slice goes in) and the handles still empty.
//! A handle the game gave components to is the game's entity now, and stays as the game left
//! it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use hecs::{Entity, World};

use crate::scene::commit;
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
    committed: Arc<[AtomicBool]>,
}

/// Handles reserved in a world for every entity of a scene (by scene index), and the sentinel
/// that says whether they are still the scene's.
pub(super) struct Reservation {
    pub(super) handles: Arc<[Entity]>,
    /// Per handle, whether the scene's commit spawned its entity on it.
    committed: Arc<[AtomicBool]>,
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
        let committed: Arc<[AtomicBool]> = (0..count).map(|_| AtomicBool::new(false)).collect();
        let mark = ReservationMark {
            token,
            owner: Arc::downgrade(&owner),
            handles: handles.clone(),
            committed: committed.clone(),
        };
        let sentinel = world.spawn((mark,));
        Reservation {
            handles,
            committed,
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

    /// Records that the commit spawned the scene's entities at the scene indices `indices` on
    /// their handles.
    pub(super) fn committed(&self, indices: &[u32]) {
        for &index in indices {
            if let Some(flag) = self.committed.get(index as usize) {
                flag.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The scene is in the world: its handles are its entities now; the sentinel goes.
    pub(super) fn finish(&self, world: &mut World) {
        if self.intact(world) {
            commit::roll_back(world, [self.sentinel]);
        }
    }

    /// Despawns the scene's entities (those its commit spawned, and the handles still empty)
    /// and the sentinel, unless the world was cleared since: then none of them is the scene's
    /// any more, and nothing is despawned. A handle the game gave components to stays.
    pub(super) fn release(&self, world: &mut World) {
        if self.intact(world) {
            despawn_ours(world, self.sentinel, &self.handles, &self.committed);
        }
    }
}

/// Releases the reservations of scenes dropped without being committed or abandoned: their
/// entities committed in slices and their handles still empty are despawned.
pub(super) fn release_dropped(world: &mut World) {
    let dropped: Vec<Entity> = world
        .query::<(Entity, &ReservationMark)>()
        .iter()
        .filter(|(_, mark)| mark.owner.strong_count() == 0)
        .map(|(sentinel, _)| sentinel)
        .collect();
    for sentinel in dropped {
        let Ok(mark) = world.get::<&ReservationMark>(sentinel) else {
            continue;
        };
        let (handles, committed) = (mark.handles.clone(), mark.committed.clone());
        drop(mark);
        despawn_ours(world, sentinel, &handles, &committed);
    }
}

/// Despawns each handle the commit spawned on or that is still empty, then the sentinel.
fn despawn_ours(world: &mut World, sentinel: Entity, handles: &[Entity], committed: &[AtomicBool]) {
    for (handle, committed) in handles.iter().zip(committed) {
        let empty = world.entity(*handle).is_ok_and(|entity| entity.is_empty());
        if empty || committed.load(Ordering::Relaxed) {
            commit::roll_back(world, [*handle]);
        }
    }
    commit::roll_back(world, [sentinel]);
}
