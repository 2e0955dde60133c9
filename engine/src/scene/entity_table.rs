//! [`EntityTable`]: values by entity index, for a save's lookups by entity.

use hecs::Entity;
use rustc_hash::FxHashMap;

/// Values by entity index ([`Entity::id`]): a list where the indices are dense (a whole world:
/// hecs hands indices out from 0 and reuses freed ones), a hash map where they are not (a few
/// entities of a big world).
pub(super) enum EntityTable<T> {
    Dense(Vec<Option<T>>),
    Sparse(FxHashMap<u32, T>),
}

impl<T: Copy> EntityTable<T> {
    /// The table of `pairs` (entity index, value); an index given twice keeps its last value.
    pub(super) fn new(pairs: impl Iterator<Item = (u32, T)> + Clone) -> Self {
        let (count, highest) = pairs
            .clone()
            .fold((0usize, 0u32), |(count, highest), (index, _)| {
                (count + 1, highest.max(index))
            });
        let slots = highest as usize + 1;
        // A list costs a slot per index up to the highest: taken when most slots are used.
        if count > 0 && slots <= count.saturating_mul(2).saturating_add(1024) {
            let mut dense = vec![None; slots];
            for (index, value) in pairs {
                dense[index as usize] = Some(value);
            }
            return EntityTable::Dense(dense);
        }
        EntityTable::Sparse(pairs.collect())
    }

    /// The value at `index`.
    #[inline]
    pub(super) fn get(&self, index: u32) -> Option<T> {
        match self {
            EntityTable::Dense(dense) => dense.get(index as usize).copied().flatten(),
            EntityTable::Sparse(sparse) => sparse.get(&index).copied(),
        }
    }
}

impl<T: Copy> EntityTable<(Entity, T)> {
    /// The value of `entity` (its index holding that entity, not an earlier one there).
    #[inline]
    pub(super) fn of(&self, entity: Entity) -> Option<T> {
        self.get(entity.id())
            .and_then(|(held, value)| (held == entity).then_some(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_tables_give_the_same_values() {
        let dense = EntityTable::new((0..100u32).map(|i| (i, i * 2)));
        let sparse = EntityTable::new([(5u32, 10u32), (1_000_000, 7)].into_iter());
        assert!(matches!(dense, EntityTable::Dense(_)));
        assert!(matches!(sparse, EntityTable::Sparse(_)));
        assert_eq!((dense.get(7), dense.get(100)), (Some(14), None));
        assert_eq!(
            (sparse.get(5), sparse.get(1_000_000), sparse.get(6)),
            (Some(10), Some(7), None)
        );
        assert!(matches!(
            EntityTable::<u32>::new(std::iter::empty()),
            EntityTable::Sparse(_)
        ));
    }

    #[test]
    fn an_entity_is_found_only_under_its_own_generation() {
        let mut world = hecs::World::new();
        let old = world.spawn(());
        world.despawn(old).unwrap();
        let new = world.spawn(());
        assert_eq!(old.id(), new.id());
        let table = EntityTable::new([(new.id(), (new, 'n'))].into_iter());
        assert_eq!((table.of(new), table.of(old)), (Some('n'), None));
    }
}
