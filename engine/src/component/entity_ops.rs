//! [`EntityOps`]: putting a component type's values into entities (templates, builders,
//! column batches) and editing them in place.

use hecs::{
    Archetype, ColumnBatchBuilder, ColumnBatchType, Entity, EntityBuilder, EntityBuilderClone,
    World,
};

use crate::component::dynamic_bundle::TemplateBuilder;
use crate::component::ops::{Ops, TypedValue};
use crate::component::registry::Component;

/// Building and editing entities with a component type's values.
pub(crate) trait EntityOps {
    /// Adds a clone of `value` to a spawn template.
    fn add_to_template(&self, value: &TypedValue, builder: &mut EntityBuilderClone);
    /// Adds a clone of `value` to a [`SpawnTemplate`](crate::component::SpawnTemplate) being
    /// made.
    fn add_to_spawn_template(&self, value: &TypedValue, template: &mut TemplateBuilder);
    /// Adds a clone of `value` to a one-off builder.
    fn add_to_builder(&self, value: &TypedValue, builder: &mut EntityBuilder);
    /// Adds this type's column to a batch type.
    fn add_column(&self, batch: &mut ColumnBatchType);
    /// Fills this type's column of `batch` with `count` clones of `value`.
    fn fill_column(&self, value: &TypedValue, batch: &mut ColumnBatchBuilder, count: u32);
    /// Adds `value` (which must hold this component's type) to a builder without cloning.
    fn add_owned(&self, value: TypedValue, builder: &mut EntityBuilder);
    /// Inserts (or replaces) the component on `entity` with a clone of `value`.
    fn insert_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool;
    /// Overwrites the component `entity` has with a clone of `value`, in place (inserts it if the
    /// entity lacks it).
    fn overwrite_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool;
    /// Removes the component from `entity`; `false` if it had none.
    fn remove(&self, world: &mut World, entity: Entity) -> bool;
    /// Whether `entity` has the component.
    fn has(&self, world: &World, entity: Entity) -> bool;
    /// Appends clones of the values in `rows` of `archetype`'s column of this type to the
    /// type's column of `batch` (a prepared scene's batches).
    fn copy_rows(
        &self,
        archetype: &Archetype,
        rows: &[u32],
        batch: &mut ColumnBatchBuilder,
    ) -> Result<(), CopyRowsError>;
}

/// Overwrites the `T` `entity` has with a clone of `value`, in place (inserts it if the entity
/// lacks it); `false` if the entity is gone.
#[inline]
pub(super) fn overwrite<T: Component>(world: &mut World, entity: Entity, value: &T) -> bool {
    match world.query_one_mut::<&mut T>(entity) {
        Ok(place) => {
            place.clone_from(value);
            true
        }
        Err(_) => world.insert_one(entity, value.clone()).is_ok(),
    }
}

/// Why rows were not copied into a batch column (never expected: the caller built both from
/// the same archetype).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyRowsError {
    /// The archetype has no column of the type.
    NoSourceColumn,
    /// The batch has no column of the type.
    NoBatchColumn,
    /// A row past the archetype's end.
    NoRow(u32),
    /// The batch's column already holds a value for every row.
    ColumnFull,
}

impl<T: Component> EntityOps for Ops<T> {
    fn add_to_template(&self, value: &TypedValue, builder: &mut EntityBuilderClone) {
        if let Some(typed) = Self::typed(value) {
            builder.add(typed.clone());
        }
    }

    fn add_to_spawn_template(&self, value: &TypedValue, template: &mut TemplateBuilder) {
        if let Some(typed) = Self::typed(value) {
            template.add(typed.clone());
        }
    }

    fn add_to_builder(&self, value: &TypedValue, builder: &mut EntityBuilder) {
        if let Some(typed) = Self::typed(value) {
            builder.add(typed.clone());
        }
    }

    fn add_column(&self, batch: &mut ColumnBatchType) {
        batch.add::<T>();
    }

    fn fill_column(&self, value: &TypedValue, batch: &mut ColumnBatchBuilder, count: u32) {
        let (Some(typed), Some(mut writer)) = (Self::typed(value), batch.writer::<T>()) else {
            return;
        };
        for _ in 0..count {
            if writer.push(typed.clone()).is_err() {
                break;
            }
        }
    }

    fn add_owned(&self, value: TypedValue, builder: &mut EntityBuilder) {
        match value.downcast::<T>() {
            Ok(typed) => {
                builder.add(*typed);
            }
            Err(_) => debug_assert!(false, "component value of the wrong type"),
        }
    }

    fn insert_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool {
        match Self::typed(value) {
            Some(typed) => world.insert_one(entity, typed.clone()).is_ok(),
            None => false,
        }
    }

    #[inline]
    fn overwrite_typed(&self, world: &mut World, entity: Entity, value: &TypedValue) -> bool {
        Self::typed(value).is_some_and(|typed| overwrite(world, entity, typed))
    }

    fn remove(&self, world: &mut World, entity: Entity) -> bool {
        world.remove_one::<T>(entity).is_ok()
    }

    fn has(&self, world: &World, entity: Entity) -> bool {
        world.satisfies::<&T>(entity)
    }

    fn copy_rows(
        &self,
        archetype: &Archetype,
        rows: &[u32],
        batch: &mut ColumnBatchBuilder,
    ) -> Result<(), CopyRowsError> {
        let column = archetype.get::<&T>().ok_or(CopyRowsError::NoSourceColumn)?;
        let mut writer = batch.writer::<T>().ok_or(CopyRowsError::NoBatchColumn)?;
        for &row in rows {
            let value = column.get(row as usize).ok_or(CopyRowsError::NoRow(row))?;
            writer
                .push(value.clone())
                .map_err(|_| CopyRowsError::ColumnFull)?;
        }
        Ok(())
    }
}
