//! [`SpawnTemplate`]: component values that hecs spawns, clone by clone, about as fast as a
//! static tuple. The one module of the engine with `unsafe` code: it implements
//! hecs's [`DynamicBundle`], an `unsafe` trait.
//!
//! hecs spawns a `&BuiltEntityClone` too, but finds its archetype by hashing the sorted list of
//! its component types on every spawn (its `key()` is `None`), hands each clone over through
//! two indirect calls, and a fresh `StableId` can only be written after the spawn. A
//! [`SpawnTemplate`] spawn instead
//! - clones every value into a buffer on the stack first, so nothing can panic once hecs has
//!   made room for the entity (hecs's own clone-on-put cannot promise that);
//! - gives hecs a key, so the archetype comes from a cached map as a static tuple's does;
//! - puts the fresh `StableId` among the values, and a caller's bundle after them.
//!
//! **Keys.** A key must name one set of component types and no other, in every world of the
//! process (hecs caches key → archetype per world, and fills the archetype's columns from what
//! `put` hands over). Keys are the `TypeId`s of the private marker types `Slot<0>` to
//! `Slot<1023>`: [`slot_key`] gives one per distinct sorted type list, process-wide, and never
//! gives it to another list. When they run out, templates have no key and hecs hashes their
//! type list as it does a `&BuiltEntityClone`'s.

use std::any::{Any, TypeId};
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex};

use hecs::{DynamicBundle, Entity, TypeInfo, World};
use rustc_hash::FxHashMap;

use crate::component::StableId;

/// Bytes of the stack buffer a spawn clones its values into. A template whose values need
/// more is not made (its spawns go through hecs's `BuiltEntityClone`).
const SCRATCH_BYTES: usize = 1024;

/// The buffer's alignment; a value needing more makes no template.
const SCRATCH_ALIGN: usize = 64;

/// The stack buffer one spawn clones its values into.
#[repr(C, align(64))]
struct Scratch([MaybeUninit<u8>; SCRATCH_BYTES]);

/// Writes a clone of the `T` at `source` to `target`.
///
/// # Safety
/// `source` points to a live `T`; `target` is valid for writing a `T` and aligned for it.
unsafe fn clone_into<T: Clone>(source: *const u8, target: *mut u8) {
    // SAFETY: as the caller promises.
    unsafe { target.cast::<T>().write((*source.cast::<T>()).clone()) }
}

/// How one value of a template is cloned and handed to hecs. The same for every template whose
/// values are of the same types in the same order (a library's templates are of a few such
/// lists), so kept once per list ([`part_types`]), not once per template.
struct PartType {
    /// The value's `TypeInfo`.
    info: TypeInfo,
    /// Writes a clone of a value of the type at the first pointer to the second.
    clone_into: unsafe fn(*const u8, *mut u8),
    /// Where in the [`Scratch`] the clone goes (aligned for the type).
    offset: usize,
}

/// One value added to a [`TemplateBuilder`], with its type.
struct Added {
    /// A `T` (by construction: [`TemplateBuilder::add`]).
    value: Box<dyn Any + Send + Sync>,
    info: TypeInfo,
    /// `clone_into::<T>`.
    clone_into: unsafe fn(*const u8, *mut u8),
}

/// The values of a template being made, in the order added.
#[derive(Default)]
pub(crate) struct TemplateBuilder {
    parts: Vec<Added>,
}

impl TemplateBuilder {
    /// A builder with room for `parts` values (so adding them does not grow it).
    pub fn with_capacity(parts: usize) -> Self {
        TemplateBuilder {
            parts: Vec::with_capacity(parts),
        }
    }

    /// Adds `value`; a value of the same type added before is replaced.
    pub fn add<T: Clone + Send + Sync + 'static>(&mut self, value: T) -> &mut Self {
        let part = Added {
            value: Box::new(value),
            info: TypeInfo::of::<T>(),
            clone_into: clone_into::<T>,
        };
        match (self.parts.iter_mut()).find(|p| p.info.id() == part.info.id()) {
            Some(same) => *same = part,
            None => self.parts.push(part),
        }
        self
    }

    /// The template: its spawns get these values, a fresh `StableId`, and the components of a
    /// bundle with the types of `extra` (a value of the bundle's type; `()` for none). `None`
    /// when a type would be there twice (a `StableId` added, one of `extra`'s added, `extra`
    /// repeating one) or the values do not fit the buffer a spawn clones them into.
    pub fn build(self, extra: &impl DynamicBundle) -> Option<SpawnTemplate> {
        let mut parts = Vec::with_capacity(self.parts.len());
        let mut end = 0usize;
        for part in &self.parts {
            let layout = part.info.layout();
            if layout.align() > SCRATCH_ALIGN {
                return None;
            }
            let offset = end.next_multiple_of(layout.align());
            end = offset.checked_add(layout.size())?;
            parts.push(PartType {
                info: part.info,
                clone_into: part.clone_into,
                offset,
            });
        }
        if end > SCRATCH_BYTES {
            return None;
        }
        let extra_types = extra.type_info();
        let mut infos = Vec::with_capacity(self.parts.len() + 1 + extra_types.len());
        infos.extend(self.parts.iter().map(|p| p.info));
        infos.push(TypeInfo::of::<StableId>());
        infos.extend(extra_types);
        infos.sort_unstable();
        if infos.windows(2).any(|pair| pair[0].id() == pair[1].id()) {
            return None;
        }
        let (key, types) = slot_key(infos);
        Some(SpawnTemplate {
            values: self.parts.into_iter().map(|part| part.value).collect(),
            parts: part_types(parts),
            key,
            types,
            extra: extra.with_ids(|ids| ids.into()),
        })
    }
}

/// Values cloned for every spawn, with what hecs needs to place them.
pub(crate) struct SpawnTemplate {
    /// The values, each of the type of the part at the same place in `parts`: a library keeps
    /// a template for every entity of every archetype, so a value costs it its box alone.
    values: Box<[Box<dyn Any + Send + Sync>]>,
    /// How each value is cloned and handed over, shared by the templates of the same types in
    /// the same order.
    parts: Arc<[PartType]>,
    /// The component types of a spawned entity (the parts', `StableId`, `extra`'s), shared by
    /// the templates of the same types.
    types: Arc<TypeSet>,
    /// The component types a caller's bundle must have, as its `with_ids` lists them.
    extra: Box<[TypeId]>,
    /// hecs's archetype key for `types`, if a slot was free.
    key: Option<TypeId>,
}

/// A set of component types in hecs's order (alignment descending, then `TypeId`), each once:
/// their IDs and their infos, in the same order. A library's templates are of a few sets (its
/// archetypes' component lists), so each set is kept once, beside its key.
#[derive(Debug)]
struct TypeSet {
    ids: Box<[TypeId]>,
    infos: Box<[TypeInfo]>,
}

impl SpawnTemplate {
    /// Spawns one entity of the template's values, `id()` as its `StableId`, and `extra`'s
    /// components. `extra` back (and `id` not called) when its component types are not the
    /// ones the template was made for.
    #[inline]
    pub fn spawn<B: DynamicBundle>(
        &self,
        world: &mut World,
        id: impl FnOnce() -> StableId,
        extra: B,
    ) -> Result<Entity, B> {
        if !extra.with_ids(|ids| ids == &*self.extra) {
            return Err(extra);
        }
        let mut scratch = Scratch([MaybeUninit::uninit(); SCRATCH_BYTES]);
        let base = scratch.0.as_mut_ptr().cast::<u8>();
        for (value, part) in self.values.iter().zip(self.parts.iter()) {
            let source = (&**value as *const (dyn Any + Send + Sync)).cast::<u8>();
            // SAFETY: `value` holds the type `part.clone_into` was made for (`build` made the
            // parts of the added values' types, in their order, and `part_types` hands back
            // parts equal to those), and `build` placed `offset` inside the buffer, aligned
            // for that type, apart from every other part's. A panicking clone leaks the clones
            // made before it; nothing has been handed to the world yet.
            unsafe { (part.clone_into)(source, base.add(part.offset)) };
        }
        Ok(world.spawn(TemplateSpawn {
            template: self,
            clones: base,
            id: id(),
            extra,
        }))
    }
}

impl SpawnTemplate {
    /// The place among the template's values of the value of type `type_id`, if it has one:
    /// where [`spawn_replacing`](Self::spawn_replacing) puts another value of that type.
    pub fn part_of(&self, type_id: TypeId) -> Option<usize> {
        self.parts.iter().position(|part| part.info.id() == type_id)
    }

    /// Spawns one entity as [`spawn`](Self::spawn) does with no bundle, but with each value of
    /// `replaced` (place, value; places ascending) cloned in place of the template's own at
    /// that place: a varied component's rolled outcome, spawned as fast as the template's own.
    /// `None`, nothing spawned and `id` not called, when the template was made for a bundle or
    /// a place is out of order, past the end, or given a value of another type.
    #[inline]
    pub fn spawn_replacing(
        &self,
        world: &mut World,
        id: impl FnOnce() -> StableId,
        replaced: &[(usize, &(dyn Any + Send + Sync))],
    ) -> Option<Entity> {
        if !self.extra.is_empty() {
            return None;
        }
        let mut after = None;
        for &(place, value) in replaced {
            let part = self.parts.get(place)?;
            if part.info.id() != Any::type_id(value) || after.is_some_and(|after| place <= after) {
                return None;
            }
            after = Some(place);
        }
        let mut scratch = Scratch([MaybeUninit::uninit(); SCRATCH_BYTES]);
        let base = scratch.0.as_mut_ptr().cast::<u8>();
        let mut replaced = replaced.iter().peekable();
        for (place, (own, part)) in self.values.iter().zip(self.parts.iter()).enumerate() {
            let value: &(dyn Any + Send + Sync) = match replaced.next_if(|(at, _)| *at == place) {
                Some((_, value)) => *value,
                None => &**own,
            };
            let source = (value as *const (dyn Any + Send + Sync)).cast::<u8>();
            // SAFETY: as in `spawn`: `own` holds the type `part.clone_into` was made for, and a
            // value of `replaced` at this place was checked above to be of the part's type
            // (its `TypeId` is the part's); `offset` is inside the buffer, aligned for that
            // type, apart from every other part's.
            unsafe { (part.clone_into)(source, base.add(part.offset)) };
        }
        Some(world.spawn(TemplateSpawn {
            template: self,
            clones: base,
            id: id(),
            extra: (),
        }))
    }
}

/// One spawn of a [`SpawnTemplate`]: the clones of its values (at their offsets from `clones`),
/// the stable ID, and the bundle `extra` (whose types [`SpawnTemplate::spawn`] checked).
struct TemplateSpawn<'a, B> {
    template: &'a SpawnTemplate,
    clones: *mut u8,
    id: StableId,
    extra: B,
}

// SAFETY: hecs relies on `with_ids` and `type_info` listing, in its order, exactly the types
// `put` hands over, each once, on `put` handing each over as a valid pointer to a value of it
// whose ownership passes to hecs, and on `key` naming that set and no other.
// - `put` hands over each part's clone (made by `SpawnTemplate::spawn` at the part's offset,
//   with the part's type), the stable ID, and each of `extra`'s components (its own `put`,
//   under the same contract). `SpawnTemplate::spawn` checked that `extra`'s types are those the
//   template was made for, and `TemplateBuilder::build` that the parts, `StableId` and those
//   types are all distinct, and made the `TypeSet`'s `ids` and `infos` of exactly them, sorted
//   as hecs sorts (the `Ord` of `TypeInfo`); `slot_key` hands back a set equal to the one it
//   was given.
// - The clones are handed over once and never used or dropped here again; a `TemplateSpawn`
//   not put (hecs always puts it) would leak them, which is safe.
// - `key` is the slot `slot_key` gave those `ids`, which it gives no other list (see there).
unsafe impl<B: DynamicBundle> DynamicBundle for TemplateSpawn<'_, B> {
    #[inline]
    fn key(&self) -> Option<TypeId> {
        self.template.key
    }

    #[inline]
    fn with_ids<T>(&self, f: impl FnOnce(&[TypeId]) -> T) -> T {
        f(&self.template.types.ids)
    }

    fn type_info(&self) -> Vec<TypeInfo> {
        self.template.types.infos.to_vec()
    }

    #[inline]
    unsafe fn put(self, mut f: impl FnMut(*mut u8, TypeInfo)) {
        for part in self.template.parts.iter() {
            // SAFETY: the clone `SpawnTemplate::spawn` wrote there, of type `part.info`.
            f(unsafe { self.clones.add(part.offset) }, part.info);
        }
        let mut id = self.id;
        f(
            (&mut id as *mut StableId).cast(),
            TypeInfo::of::<StableId>(),
        );
        // SAFETY: `f` is hecs's callback, which `extra`'s `put` calls as its contract says.
        unsafe { self.extra.put(f) };
    }
}

/// The marker types whose `TypeId`s are the archetype keys handed out.
struct Slot<const N: usize>;

/// How many keys there are: distinct component sets spawned from templates in one process
/// beyond this spawn without a key.
const SLOTS: usize = 32 * 32;

/// `TypeId::of::<Slot<32 * hi + lo>>` at `[hi][lo]`.
macro_rules! slot_keys {
    ($($hi:literal)*) => { [$(slot_keys!(@row $hi; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)),*] };
    (@row $hi:literal; $($lo:literal)*) => { [$(TypeId::of::<Slot<{ 32 * $hi + $lo }>>),*] };
}

/// The `TypeId` of each slot's marker type.
static SLOT_KEYS: [[fn() -> TypeId; 32]; 32] = slot_keys!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
);

/// The type lists given slots so far, process-wide. Only grows.
static GIVEN: Mutex<Option<SlotTable>> = Mutex::new(None);

/// The archetype key of the sorted type list `infos`, with its shared [`TypeSet`]: the same
/// key for the same list, never the same for two lists (a list keeps its slot for the life of
/// the process), `None` once every slot is taken (the set is then the template's own).
fn slot_key(infos: Vec<TypeInfo>) -> (Option<TypeId>, Arc<TypeSet>) {
    let ids: Box<[TypeId]> = infos.iter().map(TypeInfo::id).collect();
    let mut given = match GIVEN.lock() {
        Ok(given) => given,
        // The table is changed by one `insert`, which leaves it whole if it panics.
        Err(poisoned) => poisoned.into_inner(),
    };
    let table = given.get_or_insert_with(SlotTable::default);
    match table.slot(ids, infos, SLOTS) {
        Ok((slot, types)) => (Some(SLOT_KEYS[slot / 32][slot % 32]()), types),
        Err(types) => (None, types),
    }
}

/// How many lists of part types are kept to be shared; beyond, a template keeps its own.
const SHARED_PART_LISTS: usize = 4096;

/// Lists of part types by their types' IDs in order.
type PartLists = FxHashMap<Box<[TypeId]>, Arc<[PartType]>>;

/// The lists of part types made so far, process-wide.
static PART_LISTS: Mutex<Option<PartLists>> = Mutex::new(None);

/// `parts` as a shared list: the one kept for the same types in the same order (whose parts
/// are equal to these: the same types, so the same infos and clone functions, laid out by the
/// same rule), or these, kept for the next template.
fn part_types(parts: Vec<PartType>) -> Arc<[PartType]> {
    let ids: Box<[TypeId]> = parts.iter().map(|part| part.info.id()).collect();
    let mut lists = match PART_LISTS.lock() {
        Ok(lists) => lists,
        // The table is changed by one `insert`, which leaves it whole if it panics.
        Err(poisoned) => poisoned.into_inner(),
    };
    let lists = lists.get_or_insert_with(PartLists::default);
    if let Some(shared) = lists.get(&ids) {
        return shared.clone();
    }
    let parts: Arc<[PartType]> = parts.into();
    if lists.len() < SHARED_PART_LISTS {
        lists.insert(ids, parts.clone());
    }
    parts
}

/// Type lists, each with the slot number it was given (in the order asked for) and its set.
#[derive(Default)]
struct SlotTable(FxHashMap<Box<[TypeId]>, (usize, Arc<TypeSet>)>);

impl SlotTable {
    /// The slot and set of `ids` (whose infos are `infos`): the ones it was given, or the next
    /// slot of `0..limit`; the set alone, unshared, when all are given.
    fn slot(
        &mut self,
        ids: Box<[TypeId]>,
        infos: Vec<TypeInfo>,
        limit: usize,
    ) -> Result<(usize, Arc<TypeSet>), Arc<TypeSet>> {
        if let Some((slot, types)) = self.0.get(&ids) {
            return Ok((*slot, types.clone()));
        }
        let slot = self.0.len();
        let types = Arc::new(TypeSet {
            ids: ids.clone(),
            infos: infos.into(),
        });
        if slot >= limit {
            return Err(types);
        }
        self.0.insert(ids, (slot, types.clone()));
        Ok((slot, types))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Debug, PartialEq)]
    struct Name(String);
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Health(u8);
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Place([f64; 2]);
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(align(32))]
    struct Wide(u8);

    fn goblin(name: &str, extra: &impl DynamicBundle) -> SpawnTemplate {
        let mut values = TemplateBuilder::default();
        values
            .add(Health(7))
            .add(Name(name.to_string()))
            .add(Wide(1));
        values.build(extra).expect("no type twice")
    }

    #[test]
    fn templates_of_the_same_types_in_the_same_order_share_their_parts() {
        let a = goblin("a", &());
        let b = goblin("b", &());
        assert!(Arc::ptr_eq(&a.parts, &b.parts));
        let mut reversed = TemplateBuilder::default();
        reversed.add(Wide(1)).add(Name("c".into())).add(Health(7));
        let c = reversed.build(&()).expect("no type twice");
        assert!(!Arc::ptr_eq(&a.parts, &c.parts));
        // Each spawns its own values.
        let mut world = World::new();
        let spawned = c.spawn(&mut world, || StableId(1), ()).expect("same types");
        assert_eq!(world.get::<&Name>(spawned).expect("name").0, "c");
        assert_eq!(*world.get::<&Wide>(spawned).expect("wide"), Wide(1));
    }

    #[test]
    fn spawns_clones_with_the_stable_id_given() {
        let goblin = goblin("goblin", &());
        let mut world = World::new();
        let a = goblin
            .spawn(&mut world, || StableId(1), ())
            .expect("same types");
        let b = goblin
            .spawn(&mut world, || StableId(2), ())
            .expect("same types");
        for (entity, id) in [(a, 1), (b, 2)] {
            let entity = world.entity(entity).expect("spawned");
            assert_eq!(*entity.get::<&Name>().expect("name"), Name("goblin".into()));
            assert_eq!(*entity.get::<&Health>().expect("health"), Health(7));
            assert_eq!(*entity.get::<&Wide>().expect("wide"), Wide(1));
            assert_eq!(*entity.get::<&StableId>().expect("id"), StableId(id));
            assert_eq!(entity.component_types().count(), 4);
        }
        // Dropping the world drops each clone once, and the template keeps its own.
        drop(world);
        let mut world = World::new();
        let c = goblin
            .spawn(&mut world, || StableId(3), ())
            .expect("same types");
        assert_eq!(world.get::<&Name>(c).expect("name").0, "goblin");
    }

    #[test]
    fn each_spawn_clones_and_each_clone_is_dropped_once() {
        // A value counting its live clones through its `Arc`.
        #[derive(Clone)]
        struct Counted(#[allow(dead_code)] Arc<()>);
        let count = Arc::new(());
        let mut values = TemplateBuilder::default();
        values.add(Counted(count.clone()));
        let template = values.build(&()).expect("no type twice");
        let mut world = World::new();
        for i in 0..3 {
            template
                .spawn(&mut world, || StableId(i), ())
                .expect("same types");
        }
        assert_eq!(Arc::strong_count(&count), 1 + 1 + 3);
        drop(world);
        assert_eq!(Arc::strong_count(&count), 2);
        drop(template);
        assert_eq!(Arc::strong_count(&count), 1);
    }

    #[test]
    fn values_given_for_a_spawn_are_cloned_in_place_of_the_templates() {
        let template = goblin("goblin", &());
        let (health, name) = (Health(9), Name("grukk".into()));
        let places = [
            template.part_of(TypeId::of::<Health>()).expect("a Health"),
            template.part_of(TypeId::of::<Name>()).expect("a Name"),
        ];
        assert_eq!(places, [0, 1]);
        let mut world = World::new();
        let replaced: [(usize, &(dyn Any + Send + Sync)); 2] = [(0, &health), (1, &name)];
        let rolled = template
            .spawn_replacing(&mut world, || StableId(1), &replaced)
            .expect("values of the parts' types");
        let entity = world.entity(rolled).expect("spawned");
        assert_eq!(*entity.get::<&Health>().expect("health"), Health(9));
        assert_eq!(entity.get::<&Name>().expect("name").0, "grukk");
        assert_eq!(*entity.get::<&Wide>().expect("wide"), Wide(1));
        assert_eq!(*entity.get::<&StableId>().expect("id"), StableId(1));
        // The template keeps its own values.
        let plain = template.spawn_replacing(&mut world, || StableId(2), &[]);
        let plain = plain.expect("nothing replaced");
        assert_eq!(*world.get::<&Health>(plain).expect("health"), Health(7));
        // A value of another type, a place past the end or out of order spawns nothing.
        let refused: [&[(usize, &(dyn Any + Send + Sync))]; 3] =
            [&[(0, &name)], &[(3, &health)], &[(1, &name), (0, &health)]];
        for replaced in refused {
            let spawned = template.spawn_replacing(&mut world, || unreachable!(), replaced);
            assert!(spawned.is_none());
        }
        // A template made for a bundle takes one.
        let placed = goblin("placed", &(Place([0.0; 2]),));
        assert!(placed
            .spawn_replacing(&mut world, || unreachable!(), &[])
            .is_none());
        assert_eq!(world.len(), 2);
    }

    #[test]
    fn spawns_take_the_bundle_the_template_was_made_for() {
        let placed = goblin("goblin", &(Place([0.0; 2]),));
        let mut world = World::new();
        let at = placed
            .spawn(&mut world, || StableId(3), (Place([1.0, 2.0]),))
            .expect("the bundle's types");
        assert_eq!(*world.get::<&Place>(at).expect("place"), Place([1.0, 2.0]));
        assert_eq!(world.get::<&Name>(at).expect("name").0, "goblin");
        // Another bundle type is handed back, nothing spawned and no ID drawn.
        let refused = placed.spawn(&mut world, || unreachable!(), (Health(1),));
        assert!(matches!(refused, Err((Health(1),))));
        assert!(placed.spawn(&mut world, || unreachable!(), ()).is_err());
        assert_eq!(world.len(), 1);
    }

    #[test]
    fn a_type_twice_or_too_big_makes_no_template() {
        let mut values = TemplateBuilder::default();
        values.add(Health(1));
        assert!(values.build(&(Health(2),)).is_none());
        assert!(TemplateBuilder::default()
            .build(&(Health(2), Health(3)))
            .is_none());
        let mut values = TemplateBuilder::default();
        values.add(StableId(1));
        assert!(values.build(&()).is_none());
        let mut values = TemplateBuilder::default();
        values.add([0u8; SCRATCH_BYTES]).add(Health(1));
        assert!(values.build(&()).is_none());
        #[derive(Clone)]
        #[repr(align(128))]
        struct Aligned;
        let mut values = TemplateBuilder::default();
        values.add(Aligned);
        assert!(values.build(&()).is_none());
        // Adding a type again replaces its value.
        let mut values = TemplateBuilder::default();
        values.add(Health(1)).add(Health(2));
        let template = values.build(&()).expect("no type twice");
        let mut world = World::new();
        let one = template
            .spawn(&mut world, || StableId(1), ())
            .expect("same types");
        assert_eq!(*world.get::<&Health>(one).expect("health"), Health(2));
    }

    #[test]
    fn one_key_per_type_set_shared_with_no_other() {
        let a = goblin("a", &());
        let b = goblin("b", &());
        let mut plain = TemplateBuilder::default();
        plain.add(Health(7)).add(Name(String::new()));
        let c = plain.build(&()).expect("no type twice");
        let d = goblin("d", &(Place([0.0; 2]),));
        assert!(a.key.is_some());
        assert_eq!(a.key, b.key);
        assert_ne!(a.key, c.key);
        assert_ne!(a.key, d.key);
        assert_ne!(c.key, d.key);
        // The same set, added in another order, has the same key.
        let mut reversed = TemplateBuilder::default();
        reversed.add(Wide(1)).add(Name("e".into())).add(Health(7));
        let e = reversed.build(&()).expect("no type twice");
        assert_eq!(e.key, a.key);
        // Entities of one set share a hecs archetype, whichever template or tuple made them.
        let mut world = World::new();
        a.spawn(&mut world, || StableId(1), ()).expect("same types");
        e.spawn(&mut world, || StableId(2), ()).expect("same types");
        world.spawn((Name("static".into()), Health(1), StableId(3), Wide(0)));
        c.spawn(&mut world, || StableId(4), ()).expect("same types");
        let mut sizes: Vec<u32> = world.archetypes().map(|a| a.len()).collect();
        sizes.retain(|&n| n > 0);
        sizes.sort_unstable();
        assert_eq!(sizes, [1, 3]);
    }

    #[test]
    fn keys_are_distinct_and_run_out_into_none() {
        let keys: Vec<TypeId> = (0..SLOTS).map(|i| SLOT_KEYS[i / 32][i % 32]()).collect();
        let mut distinct = keys.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), SLOTS);
        // A table of its own (the process's is shared by every test): each new list gets the
        // next slot, a list seen before its own, and none once the limit is reached.
        let mut table = SlotTable::default();
        let mut slot = |n: usize| table.slot(keys[..n].into(), Vec::new(), 3);
        let first = slot(1).expect("a slot");
        assert_eq!(slot(2).expect("a slot").0, 1);
        let again = slot(1).expect("a slot");
        // The same list, the same slot and the very same set.
        assert_eq!(again.0, first.0);
        assert!(Arc::ptr_eq(&again.1, &first.1));
        assert_eq!(slot(3).expect("a slot").0, 2);
        let none = slot(4).expect_err("no slot left");
        assert_eq!(&*none.ids, &keys[..4]);
        assert_eq!(slot(2).expect("a slot").0, 1);
        // A template without a key spawns as `&BuiltEntityClone` does.
        let mut late = goblin("late", &(Place([0.0; 2]),));
        late.key = None;
        let mut world = World::new();
        let spawned = late
            .spawn(&mut world, || StableId(5), (Place([3.0; 2]),))
            .ok();
        let spawned = spawned.expect("a template without a key still spawns");
        assert_eq!(
            *world.get::<&Place>(spawned).expect("place"),
            Place([3.0; 2])
        );
        assert_eq!(world.get::<&Name>(spawned).expect("name").0, "late");
    }
}
