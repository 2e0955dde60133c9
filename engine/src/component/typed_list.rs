//! [`TypedList`]: values of one component type kept side by side, each put into entities by its
//! place in the list. A varied component's outcomes are kept this way: a list of
//! [`TypedValue`](crate::component::TypedValue)s would cost a box (a pointer and an allocation)
//! per value on top of the value.

use std::any::Any;

use hecs::{ColumnBatchBuilder, Entity, EntityBuilder, World};

use crate::component::entity_ops::overwrite;
use crate::component::registry::Component;

/// Values of one component type, in order.
pub(crate) trait TypedList: Send + Sync {
    /// How many values.
    #[cfg(test)]
    fn len(&self) -> usize;
    /// The bytes the list holds for its values (not the heap the values own).
    #[cfg(test)]
    fn bytes(&self) -> usize;
    /// Value `i` (`None` past the end), for a spawn template to clone in place of its own.
    fn value(&self, i: usize) -> Option<&(dyn Any + Send + Sync)>;
    /// Adds a clone of value `i` to a builder (nothing past the end).
    fn add_to_builder(&self, i: usize, builder: &mut EntityBuilder);
    /// Appends a clone of value `i` to the type's column of `batch` (nothing past the end).
    fn push_to_column(&self, i: usize, batch: &mut ColumnBatchBuilder);
    /// Overwrites the component `entity` has with a clone of value `i`, in place (inserts it if
    /// the entity lacks it); `false` past the end or if the entity is gone.
    fn overwrite(&self, i: usize, world: &mut World, entity: Entity) -> bool;
}

impl<T: Component> TypedList for Vec<T> {
    #[cfg(test)]
    fn len(&self) -> usize {
        Vec::len(self)
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }

    #[inline]
    fn value(&self, i: usize) -> Option<&(dyn Any + Send + Sync)> {
        self.as_slice()
            .get(i)
            .map(|value| value as &(dyn Any + Send + Sync))
    }

    fn add_to_builder(&self, i: usize, builder: &mut EntityBuilder) {
        if let Some(value) = self.as_slice().get(i) {
            builder.add(value.clone());
        }
    }

    fn push_to_column(&self, i: usize, batch: &mut ColumnBatchBuilder) {
        if let (Some(value), Some(mut writer)) = (self.as_slice().get(i), batch.writer::<T>()) {
            let _ = writer.push(value.clone());
        }
    }

    #[inline]
    fn overwrite(&self, i: usize, world: &mut World, entity: Entity) -> bool {
        (self.as_slice().get(i)).is_some_and(|value| overwrite(world, entity, value))
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn values_go_into_entities_by_their_place() {
        let list: Box<dyn TypedList> = Box::new(vec![3u8, 5, 7]);
        assert_eq!(list.len(), 3);
        assert_eq!(list.value(1).unwrap().downcast_ref::<u8>(), Some(&5));
        assert!(list.value(3).is_none());
        let mut world = World::new();
        let mut builder = EntityBuilder::new();
        list.add_to_builder(2, &mut builder);
        let entity = world.spawn(builder.build());
        assert_eq!(*world.get::<&u8>(entity).unwrap(), 7);
        assert!(list.overwrite(0, &mut world, entity));
        assert_eq!(*world.get::<&u8>(entity).unwrap(), 3);
        assert!(!list.overwrite(9, &mut world, entity));
        let mut batch_type = hecs::ColumnBatchType::new();
        batch_type.add::<u8>();
        let mut batch = batch_type.into_batch(2);
        list.push_to_column(1, &mut batch);
        list.push_to_column(0, &mut batch);
        let spawned: Vec<Entity> = world.spawn_column_batch(batch.build().unwrap()).collect();
        assert_eq!(*world.get::<&u8>(spawned[0]).unwrap(), 5);
        assert_eq!(*world.get::<&u8>(spawned[1]).unwrap(), 3);
    }
}
