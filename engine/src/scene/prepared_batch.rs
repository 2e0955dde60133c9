//! [`PreparedBatch`]: one hecs column batch of a prepared scene — entities with the same
//! components, their values built off the game thread — and what committing it does.
//!
//! A column whose values hold no entity reference is cloned into the batch when the scene is
//! prepared. A column with references keeps its values encoded (postcard, or JSON without the
//! `binary` feature) with each reference written as the target's index in the scene;
//! [`PreparedBatch::resolve`] decodes them once handles are reserved (on a worker thread after
//! [`PreparedScene::reserve`](crate::PreparedScene::reserve), else at commit), and
//! [`PreparedBatch::finish`] only writes stable IDs and builds the batch. Stable IDs are written at commit too, so
//! [`IdConflict::Remap`](crate::IdConflict::Remap) can give fresh ones.

use std::sync::Arc;

use hecs::{Archetype, ColumnBatch, ColumnBatchBuilder, ColumnBatchType, Entity};
use rustc_hash::FxHashMap;

use crate::component::MapError;
use crate::component::StableId;
use crate::component::{with_mapper, EntityMapper, RefIn, RefOut, RefWire};
use crate::component::{ComponentId, ComponentRegistry};
use crate::scene::commit;

/// One batch: its rows' scene indices, the builder with the cloned columns filled, and the
/// columns left for the commit.
pub(super) struct PreparedBatch {
    /// The scene index of each row.
    pub(super) indices: Vec<u32>,
    builder: ColumnBatchBuilder,
    /// Whether the entities have a `StableId` (written at commit).
    ids: bool,
    deferred: Vec<Deferred>,
}

/// A column with references: its values encoded, one after the other.
struct Deferred {
    component: ComponentId,
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

/// Writes references as the target's index in the scene (preparation), or reads them back as
/// the reserved handles (commit).
struct IndexRefs {
    index_of: Arc<FxHashMap<Entity, u32>>,
    handles: Arc<[Entity]>,
    wrote: bool,
}

impl EntityMapper for IndexRefs {
    fn wire(&self) -> RefWire {
        if cfg!(feature = "binary") {
            RefWire::Number
        } else {
            RefWire::Any
        }
    }
    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        self.wrote = true;
        let index = self.index_of.get(&entity).copied();
        index
            .map(|index| RefOut::Number(u64::from(index)))
            .ok_or(MapError::OutsideScene)
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        let index = match reference {
            RefIn::Number(index) => usize::try_from(index).ok(),
            RefIn::Text(text) => text.parse().ok(),
        };
        index
            .and_then(|index| self.handles.get(index).copied())
            .ok_or(MapError::NotPrepared)
    }
}

/// Why a prepared batch could not be built or finished: never expected (its values were
/// cloned, or encoded from decoded values), so reported as a bug naming what failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum BatchError {
    /// A staging column of a type the registry does not know.
    UnknownType,
    /// The values of a component (its name) did not copy, encode or decode.
    Component(String),
    /// The batch has no stable-ID column to write.
    NoStableIds,
    /// A column of the batch is left incomplete.
    Incomplete,
}

impl BatchError {
    fn of(registry: &ComponentRegistry, component: ComponentId) -> Self {
        BatchError::Component(registry.name(component).to_string())
    }
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchError::UnknownType => f.write_str(
                "a prepared column of a component type the registry does not know did not commit",
            ),
            BatchError::Component(name) => {
                write!(
                    f,
                    "the prepared values of component `{name}` did not commit"
                )
            }
            BatchError::NoStableIds => {
                f.write_str("a prepared batch without its `StableId` column did not commit")
            }
            BatchError::Incomplete => {
                f.write_str("a prepared batch with a column left incomplete did not commit")
            }
        }
    }
}

/// What building batches needs: the registry, and each staging entity's scene index.
pub(super) struct BatchContext<'a> {
    pub registry: &'a ComponentRegistry,
    pub index_of: Arc<FxHashMap<Entity, u32>>,
    /// Staging entity ID (hecs's index part) to scene index.
    pub by_id: &'a FxHashMap<u32, u32>,
}

impl PreparedBatch {
    /// The batches of one staging archetype, at most `chunk` rows each; `Err` names the
    /// component whose values could not be encoded.
    pub(super) fn from_archetype(
        context: &BatchContext<'_>,
        archetype: &Archetype,
        chunk: usize,
        progress: &mut dyn FnMut(usize) -> bool,
    ) -> Result<Vec<PreparedBatch>, BatchError> {
        let mut components = Vec::new();
        for type_id in archetype.component_types() {
            let component = context
                .registry
                .id_of_type_id(type_id)
                .ok_or(BatchError::UnknownType)?;
            components.push(component);
        }
        let stable_id = context.registry.id_of::<StableId>();
        let mut copied = Vec::new();
        let mut encoded = Vec::new();
        for &component in &components {
            if Some(component) == stable_id {
                continue;
            }
            match encode_column(context, archetype, component)? {
                Some(values) => encoded.push(values),
                None => copied.push(component),
            }
        }
        let mut batch_type = ColumnBatchType::new();
        for &component in &components {
            context.registry.ops(component).add_column(&mut batch_type);
        }
        let rows: Vec<u32> = (0..archetype.len()).collect();
        let mut batches = Vec::new();
        for rows in rows.chunks(chunk.max(1)) {
            let mut builder = batch_type.clone().into_batch(rows.len() as u32);
            for &component in &copied {
                context
                    .registry
                    .ops(component)
                    .copy_rows(archetype, rows, &mut builder)
                    .map_err(|_| BatchError::of(context.registry, component))?;
            }
            let indices = rows
                .iter()
                .map(|&row| context.by_id[&archetype.ids()[row as usize]])
                .collect();
            let deferred = encoded.iter().map(|values| values.rows(rows)).collect();
            batches.push(PreparedBatch {
                indices,
                builder,
                ids: components.iter().any(|c| Some(*c) == stable_id),
                deferred,
            });
            if !progress(rows.len()) {
                return Ok(Vec::new());
            }
        }
        Ok(batches)
    }

    /// How many entities the batch holds.
    pub(super) fn len(&self) -> usize {
        self.indices.len()
    }

    /// Whether some of its values hold references (decoded at commit, with the handles).
    pub(super) fn has_references(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Decodes the values that hold references (if any), each reference mapped to the handle
    /// at its scene index in `handles`; the batch then holds only built values. Runs on any
    /// thread. `Err` names a component whose prepared values did not decode (which would be a
    /// bug: they were encoded from decoded values).
    pub(super) fn resolve(
        &mut self,
        registry: &ComponentRegistry,
        handles: &Arc<[Entity]>,
    ) -> Result<(), BatchError> {
        if self.deferred.is_empty() {
            return Ok(());
        }
        let deferred = std::mem::take(&mut self.deferred);
        let mapper = IndexRefs {
            index_of: Arc::default(),
            handles: handles.clone(),
            wrote: false,
        };
        let builder = &self.builder;
        let (decoded, _) = with_mapper(mapper, || {
            for column in &deferred {
                column.decode_into(registry, builder)?;
            }
            Ok::<(), BatchError>(())
        });
        decoded
    }

    /// The finished batch of a [`resolve`](Self::resolve)d batch, with each entity's stable ID
    /// from `ids` (by scene index), and its rows' scene indices. Decodes nothing. `Err` names a
    /// component left unresolved or incomplete (a bug).
    pub(super) fn finish(
        self,
        registry: &ComponentRegistry,
        ids: &[StableId],
    ) -> Result<(Vec<u32>, ColumnBatch), BatchError> {
        let PreparedBatch {
            indices,
            builder,
            ids: has_ids,
            deferred,
        } = self;
        if let Some(column) = deferred.first() {
            return Err(BatchError::of(registry, column.component));
        }
        if has_ids {
            let ids = indices.iter().map(|&index| ids[index as usize]);
            commit::stable_ids(&builder, ids).map_err(|_| BatchError::NoStableIds)?;
        }
        let batch = builder.build().map_err(|_| BatchError::Incomplete)?;
        Ok((indices, batch))
    }
}

/// The values of `component`'s column encoded with references as scene indices, if any value
/// holds a reference (`None`: the column is cloned as it is).
fn encode_column(
    context: &BatchContext<'_>,
    archetype: &Archetype,
    component: ComponentId,
) -> Result<Option<Deferred>, BatchError> {
    let name = || BatchError::of(context.registry, component);
    let column = context
        .registry
        .ops(component)
        .column(archetype)
        .ok_or_else(name)?;
    let mapper = IndexRefs {
        index_of: context.index_of.clone(),
        handles: Arc::from(Vec::new()),
        wrote: false,
    };
    let (encoded, mapper) = with_mapper(mapper, || {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(archetype.len() as usize);
        for row in 0..archetype.len() as usize {
            let written = if cfg!(feature = "binary") {
                column.write_postcard(row, &mut bytes)
            } else {
                column.write_json(row, &mut bytes, 0)
            };
            written.map_err(|_| name())?;
            ends.push(bytes.len());
        }
        Ok::<_, BatchError>((bytes, ends))
    });
    let (bytes, ends) = encoded?;
    Ok(mapper.wrote.then_some(Deferred {
        component,
        bytes,
        ends,
    }))
}

impl Deferred {
    /// The values of `rows` only (one batch's).
    fn rows(&self, rows: &[u32]) -> Deferred {
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(rows.len());
        for &row in rows {
            let row = row as usize;
            let start = if row == 0 { 0 } else { self.ends[row - 1] };
            bytes.extend_from_slice(&self.bytes[start..self.ends[row]]);
            ends.push(bytes.len());
        }
        Deferred {
            component: self.component,
            bytes,
            ends,
        }
    }

    /// Decodes every value onto the end of its column of `builder` (under the commit's mapper).
    fn decode_into(
        &self,
        registry: &ComponentRegistry,
        builder: &ColumnBatchBuilder,
    ) -> Result<(), BatchError> {
        let failed = || BatchError::of(registry, self.component);
        let ops = registry.ops(self.component);
        let mut sink = ops.postcard_sink(builder).ok_or_else(failed)?;
        let mut start = 0;
        for &end in &self.ends {
            let value = self.bytes.get(start..end).ok_or_else(failed)?;
            let pushed = if cfg!(feature = "binary") {
                sink.push_postcard(value)
            } else {
                let text = std::str::from_utf8(value).map_err(|_| failed())?;
                sink.push_json(text)
            };
            pushed.map_err(|_| failed())?;
            start = end;
        }
        Ok(())
    }
}
