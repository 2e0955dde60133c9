//! Stable ID → entity for the entities of a loaded scene.
//!
//! A scene file lists its entities sorted by stable ID (the library writes them so), and a
//! stable ID is random: a hash map of a big scene's IDs touches a random place of a big table
//! per entity, which is most of what loading an untouched instance costs. So the index is a
//! list while the IDs come in ascending order, looked up by binary search, and becomes a hash
//! map at the first ID out of order (a file written by hand, a gained child, a sub-scene). A
//! long list (4,096 entries on) also keeps a small table of where its IDs start by their top
//! bits, so a lookup reads about one cache line of the list: a reference is looked up this
//! way as each value that holds one is decoded.

use std::cmp::Ordering;

use hecs::Entity;
use rustc_hash::FxHashMap;

use crate::component::StableId;

/// How many times [`IdIndex::position`] guesses before it searches by halves.
const GUESSES: usize = 6;

/// A list shorter than this is searched without a [`Directory`].
const DIRECTORY_FROM: usize = 4096;

/// Stable ID → entity (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct IdIndex {
    /// Every entry while `map` is empty, strictly ascending by ID; empty after.
    sorted: Vec<(StableId, Entity)>,
    /// Where the list's IDs start by their top bits, once the list is long.
    directory: Option<Directory>,
    /// Every entry, once one came out of order.
    map: FxHashMap<StableId, Entity>,
}

/// Where the IDs of a long sorted list start, by their top `bits` bits (a bucket), so that a
/// lookup reads one entry of this small table and then a few neighbouring entries of the list:
/// about one cache miss, where guessing its place in the whole list costs two or three.
/// Stable IDs are random, so a bucket holds about two; IDs bunched otherwise (written by hand,
/// all small) fall in few buckets, each searched by halves.
#[derive(Clone, Debug)]
struct Directory {
    /// How many top bits of an ID make its bucket.
    bits: u32,
    /// Per bucket (up to the last entry's): the position of its first entry, or of the next
    /// bucket's when it has none.
    starts: Vec<u32>,
}

impl Directory {
    /// An empty directory for a list of about `len` entries (two per bucket).
    fn new(len: usize) -> Self {
        let bits = (len / 2).max(2).ilog2().min(24);
        Directory {
            bits,
            starts: Vec::with_capacity(1 << bits),
        }
    }

    /// The bucket of `id`.
    #[inline]
    fn bucket(&self, id: StableId) -> usize {
        (id.0 >> (64 - self.bits)) as usize
    }

    /// Notes the entry appended at `position` with `id` (after every other).
    #[inline]
    fn push(&mut self, id: StableId, position: usize) {
        let bucket = self.bucket(id);
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        while self.starts.len() <= bucket {
            self.starts.push(position);
        }
    }

    /// The part of a list of `len` entries where `id` would be.
    #[inline]
    fn range(&self, id: StableId, len: usize) -> std::ops::Range<usize> {
        let bucket = self.bucket(id);
        let Some(&start) = self.starts.get(bucket) else {
            // After the last entry's bucket: not in the list.
            return len..len;
        };
        let end = self.starts.get(bucket + 1).map_or(len, |end| *end as usize);
        start as usize..end
    }
}

impl IdIndex {
    /// An empty index with room for `count` entries.
    pub fn with_capacity(count: usize) -> Self {
        IdIndex {
            sorted: Vec::with_capacity(count),
            directory: (count >= DIRECTORY_FROM).then(|| Directory::new(count)),
            map: FxHashMap::default(),
        }
    }

    /// The entity of `id`.
    #[inline]
    pub fn get(&self, id: &StableId) -> Option<&Entity> {
        if !self.map.is_empty() {
            return self.map.get(id);
        }
        let at = self.position(*id)?;
        self.sorted.get(at).map(|(_, entity)| entity)
    }

    /// Where `id` is in the list: in a long list, among the few entries of its bucket of the
    /// [`Directory`], searched by halves. In a shorter one (stable IDs are random, evenly
    /// spread) it is found by interpolation: its place guessed from its value between the IDs
    /// at the ends of the range left, a few times (each a cache line or two, where a binary
    /// search misses the cache at most of its steps); then, for IDs bunched otherwise, a
    /// binary search of what is left.
    #[inline]
    fn position(&self, id: StableId) -> Option<usize> {
        let list = &self.sorted;
        if let Some(directory) = &self.directory {
            let range = directory.range(id, list.len());
            let start = range.start;
            let at = list.get(range)?.binary_search_by_key(&id, |(key, _)| *key);
            return Some(start + at.ok()?);
        }
        let (mut low, mut high) = (0, list.len().checked_sub(1)?);
        for _ in 0..GUESSES {
            let (first, last) = (list.get(low)?.0, list.get(high)?.0);
            if id < first || id > last {
                return None;
            }
            if first == last {
                return Some(low);
            }
            let fraction = (id.0 - first.0) as f64 / (last.0 - first.0) as f64;
            let guess = (low + (fraction * (high - low) as f64) as usize).min(high);
            match list.get(guess)?.0.cmp(&id) {
                Ordering::Equal => return Some(guess),
                Ordering::Less => low = guess + 1,
                Ordering::Greater => high = guess.checked_sub(1)?,
            }
            if low > high {
                return None;
            }
        }
        let rest = list.get(low..=high)?;
        let at = rest.binary_search_by_key(&id, |(key, _)| *key).ok()?;
        Some(low + at)
    }

    /// Whether `id` is in the index.
    pub fn contains_key(&self, id: &StableId) -> bool {
        self.get(id).is_some()
    }

    /// Whether `id` is not in the index: at once for an ID after every one in the list (the
    /// next of a file in order), by a lookup otherwise.
    #[inline]
    pub fn is_new(&self, id: &StableId) -> bool {
        match self.sorted.last() {
            Some((last, _)) if self.map.is_empty() && last < id => true,
            _ => !self.contains_key(id),
        }
    }

    /// Puts `entity` under `id`; the entity it replaces, if `id` was there.
    #[inline]
    pub fn insert(&mut self, id: StableId, entity: Entity) -> Option<Entity> {
        if self.map.is_empty() {
            match self.sorted.last() {
                Some((last, _)) if *last >= id => self.spill(),
                _ => {
                    self.push(id, entity);
                    return None;
                }
            }
        }
        self.map.insert(id, entity)
    }

    /// Takes `id` out; its entity, if it was there.
    pub fn remove(&mut self, id: &StableId) -> Option<Entity> {
        self.spill();
        self.map.remove(id)
    }

    /// Every (ID, entity), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&StableId, &Entity)> {
        (self.sorted.iter().map(|(id, entity)| (id, entity))).chain(self.map.iter())
    }

    /// Every entity, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &Entity> {
        self.iter().map(|(_, entity)| entity)
    }

    /// Appends an entry after every other, keeping the directory: made once the list is
    /// long, made again when the list has grown to four times what it was made for.
    #[inline]
    fn push(&mut self, id: StableId, entity: Entity) {
        let position = self.sorted.len();
        self.sorted.push((id, entity));
        match &mut self.directory {
            // Made for two per bucket: eight is four times that.
            Some(directory) if position < 8 << directory.bits => directory.push(id, position),
            _ if position + 1 >= DIRECTORY_FROM => {
                let mut directory = Directory::new(position + 1);
                for (at, (id, _)) in self.sorted.iter().enumerate() {
                    directory.push(*id, at);
                }
                self.directory = Some(directory);
            }
            _ => {}
        }
    }

    /// Moves the list into the hash map (once an entry comes out of order).
    fn spill(&mut self) {
        self.directory = None;
        if !self.sorted.is_empty() {
            self.map.reserve(self.sorted.len());
            self.map.extend(self.sorted.drain(..));
            self.sorted = Vec::new();
        }
    }
}

impl FromIterator<(StableId, Entity)> for IdIndex {
    fn from_iter<I: IntoIterator<Item = (StableId, Entity)>>(entries: I) -> Self {
        let entries = entries.into_iter();
        let mut index = IdIndex::with_capacity(entries.size_hint().0);
        for (id, entity) in entries {
            index.insert(id, entity);
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift generator of pseudo-random IDs from `state` (not zero).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    fn entities(count: usize) -> Vec<Entity> {
        let mut world = hecs::World::new();
        (0..count).map(|_| world.spawn(())).collect()
    }

    #[test]
    fn a_list_while_ascending_a_map_after_and_the_same_answers_either_way() {
        let e = entities(4);
        let mut index: IdIndex = [(StableId(10), e[0]), (StableId(20), e[1])]
            .into_iter()
            .collect();
        assert!(index.map.is_empty(), "ascending: still a list");
        assert_eq!(index.get(&StableId(20)), Some(&e[1]));
        assert_eq!(index.get(&StableId(15)), None);
        assert!(index.is_new(&StableId(25)) && index.is_new(&StableId(15)));
        assert!(!index.is_new(&StableId(10)));
        assert_eq!(index.insert(StableId(30), e[2]), None);
        // A duplicate, then one out of order: a map, with every entry kept.
        assert_eq!(index.insert(StableId(30), e[3]), Some(e[2]));
        assert!(index.sorted.is_empty() && index.map.len() == 3);
        assert_eq!(index.insert(StableId(5), e[2]), None);
        assert_eq!(index.get(&StableId(10)), Some(&e[0]));
        assert_eq!(index.get(&StableId(30)), Some(&e[3]));
        assert_eq!(index.iter().count(), 4);
        assert_eq!(index.remove(&StableId(5)), Some(e[2]));
        assert!(!index.contains_key(&StableId(5)));
        // Evenly spread IDs and bunched ones are all found, and no other.
        let many = entities(3000);
        for spread in [u64::MAX / 3001, 1, 7] {
            let ids: Vec<u64> = (1..=3000u64)
                .map(|i| {
                    if spread == 7 && i > 2990 {
                        u64::MAX - 3000 + i
                    } else {
                        i * spread
                    }
                })
                .collect();
            let index: IdIndex = ids
                .iter()
                .map(|i| StableId(*i))
                .zip(many.iter().copied())
                .collect();
            assert!(index.map.is_empty());
            for (i, id) in ids.iter().enumerate() {
                assert_eq!(index.get(&StableId(*id)), Some(&many[i]), "{spread} {id}");
                let next = id.wrapping_add(1);
                assert_eq!(
                    index.get(&StableId(next)).is_some(),
                    ids.get(i + 1) == Some(&next)
                );
            }
            assert_eq!(index.get(&StableId(0)), None);
        }
        let mut values: Vec<Entity> = index.values().copied().collect();
        values.sort_by_key(|entity| entity.to_bits());
        assert_eq!(values, vec![e[0], e[1], e[3]]);
    }

    #[test]
    fn a_long_list_is_searched_through_its_directory_with_the_same_answers() {
        let handles = entities(64);
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let random: Vec<u64> = {
            let mut ids: Vec<u64> = (0..20_000).map(|_| next()).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let small: Vec<u64> = (1..=20_000).collect();
        // Random IDs, then a run of small ones at the top (bunched in the last bucket).
        let mixed: Vec<u64> = (random.iter().copied().take(10_000))
            .chain((1..=10_000).map(|i| u64::MAX - 10_000 + i))
            .collect();
        for ids in [&random, &small, &mixed] {
            let entity = |i: usize| handles[i % 64];
            // Sized ahead (the binary reader), and grown one by one (the JSON reader): the
            // directory is made at 4,096 entries and made again as the list grows.
            let sized: IdIndex = (ids.iter().enumerate())
                .map(|(i, id)| (StableId(*id), entity(i)))
                .collect();
            let mut grown = IdIndex::default();
            for (i, id) in ids.iter().enumerate() {
                assert_eq!(grown.insert(StableId(*id), entity(i)), None);
                if i % 997 == 0 {
                    // Found while the list grows, and the next ID not yet.
                    assert_eq!(grown.get(&StableId(*id)), Some(&entity(i)));
                    if let Some(later) = ids.get(i + 1) {
                        assert!(grown.is_new(&StableId(*later)));
                    }
                }
            }
            for index in [&sized, &grown] {
                assert!(index.directory.is_some() && index.map.is_empty());
                for (i, id) in ids.iter().enumerate() {
                    assert_eq!(index.get(&StableId(*id)), Some(&entity(i)), "{id}");
                    let next = id.wrapping_add(1);
                    let listed = ids.get(i + 1) == Some(&next);
                    assert_eq!(index.get(&StableId(next)).is_some(), listed, "{next}");
                }
                assert_eq!(index.get(&StableId(0)), None);
                let last = ids.last() == Some(&u64::MAX);
                assert_eq!(index.get(&StableId(u64::MAX)).is_some(), last);
            }
        }
        // Out of order: a map, the directory dropped, every entry still found.
        let mut index: IdIndex = (random.iter().enumerate())
            .map(|(i, id)| (StableId(*id), handles[i % 64]))
            .collect();
        index.insert(StableId(random[0] - 1), handles[0]);
        assert!(index.directory.is_none() && index.sorted.is_empty());
        assert_eq!(
            index.get(&StableId(random[5000])),
            Some(&handles[5000 % 64])
        );
    }

    #[test]
    fn answers_as_a_hash_map_does_whatever_the_order() {
        let handles = entities(64);
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for round in 0..200 {
            let mut index = IdIndex::default();
            let mut model = FxHashMap::default();
            let mut id = 0u64;
            for step in 0..300 {
                let roll = next();
                // Mostly ascending (a file as written); now and then anywhere, or a removal.
                let key = match (roll % 23, round % 2) {
                    (0, _) => StableId(next() % (id + 2)),
                    (1, 1) => {
                        let gone = StableId(next() % (id + 2));
                        assert_eq!(index.remove(&gone), model.remove(&gone), "{round}/{step}");
                        continue;
                    }
                    _ => {
                        id += 1 + next() % 1_000_000_007;
                        StableId(id)
                    }
                };
                let entity = handles[(roll % 64) as usize];
                assert_eq!(index.insert(key, entity), model.insert(key, entity));
                let probe = StableId(next() % (id + 2));
                assert_eq!(index.get(&probe), model.get(&probe), "{round}/{step}");
                assert_eq!(index.is_new(&probe), !model.contains_key(&probe));
            }
            let mut all: Vec<_> = index.iter().map(|(k, v)| (*k, *v)).collect();
            let mut expected: Vec<_> = model.iter().map(|(k, v)| (*k, *v)).collect();
            all.sort_by_key(|(k, _)| *k);
            expected.sort_by_key(|(k, _)| *k);
            assert_eq!(all, expected);
        }
    }
}
