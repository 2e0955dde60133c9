//! [`SpawnRng`]: the library's seedable random numbers for spawn-time variation (`$range`,
//! `$pick`), and where its new stable IDs come from.
//!
//! SplitMix64 over an atomic counter: each draw adds a constant to the state and mixes the
//! result, so a draw is one atomic add and a few multiplications, the library stays `Sync`, and
//! the same seed gives the same sequence of draws (the same world, when spawns happen in the same
//! order).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::component::StableId;

/// SplitMix64's increment (the golden ratio in 64 bits).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The seed a library starts with; [`ArchetypeLibrary::set_spawn_seed`] sets another.
///
/// [`ArchetypeLibrary::set_spawn_seed`]: crate::ArchetypeLibrary::set_spawn_seed
pub const DEFAULT_SPAWN_SEED: u64 = 0;

/// Seedable random numbers, drawn through a shared reference.
#[derive(Debug)]
pub(crate) struct SpawnRng {
    state: AtomicU64,
    ids: IdSource,
}

/// Where new stable IDs come from: [`StableId::generate`] (random per process), or, once
/// seeded, a sequence of its own (SplitMix64 over a counter: distinct within the sequence, the
/// same for the same seed).
#[derive(Debug, Default)]
struct IdSource {
    seeded: AtomicBool,
    state: AtomicU64,
}

impl SpawnRng {
    pub fn new(seed: u64) -> Self {
        SpawnRng {
            state: AtomicU64::new(seed),
            ids: IdSource::default(),
        }
    }

    /// From now on, new stable IDs are the sequence of `seed`.
    pub fn seed_ids(&self, seed: u64) {
        self.ids.state.store(seed, Ordering::Relaxed);
        self.ids.seeded.store(true, Ordering::Relaxed);
    }

    /// A new stable ID for an entity the library creates.
    #[inline]
    pub fn next_id(&self) -> StableId {
        if !self.ids.seeded.load(Ordering::Relaxed) {
            return StableId::generate();
        }
        let n = self.ids.state.fetch_add(GAMMA, Ordering::Relaxed);
        StableId(mix(n.wrapping_add(GAMMA)))
    }

    /// Starts the sequence again from `seed`.
    pub fn reseed(&self, seed: u64) {
        self.state.store(seed, Ordering::Relaxed);
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&self) -> u64 {
        mix(self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA))
    }

    /// A number in `0..count` (`count` > 0), without modulo bias worth speaking of (Lemire's
    /// multiply-shift).
    #[inline]
    pub fn below(&self, count: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(count)) >> 64) as u64
    }

    /// A whole number in `low..=high` (`low <= high`).
    #[inline]
    pub fn int_in(&self, low: i64, high: i64) -> i64 {
        let span = high.wrapping_sub(low) as u64;
        match span.checked_add(1) {
            Some(count) => low.wrapping_add(self.below(count) as i64),
            // The whole i64 range.
            None => self.next_u64() as i64,
        }
    }

    /// A number in `low..=high` (`low <= high`), uniform.
    #[inline]
    pub fn float_in(&self, low: f64, high: f64) -> f64 {
        // 53 random bits as a fraction in [0, 1].
        let unit = (self.next_u64() >> 11) as f64 / ((1u64 << 53) - 1) as f64;
        (low + (high - low) * unit).clamp(low, high)
    }
}

/// The SplitMix64 finalizer (a bijection on `u64`).
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_draws() {
        let (a, b) = (SpawnRng::new(7), SpawnRng::new(7));
        let draws = |rng: &SpawnRng| (0..100).map(|_| rng.next_u64()).collect::<Vec<_>>();
        assert_eq!(draws(&a), draws(&b));
        a.reseed(7);
        assert_eq!(draws(&a), draws(&SpawnRng::new(7)));
        assert_ne!(draws(&SpawnRng::new(8)), draws(&SpawnRng::new(7)));
    }

    #[test]
    fn seeded_ids_repeat_for_a_seed_and_are_distinct_within_it() {
        let (a, b) = (SpawnRng::new(0), SpawnRng::new(0));
        let ids = |rng: &SpawnRng| (0..1000).map(|_| rng.next_id()).collect::<Vec<_>>();
        assert_ne!(ids(&a), ids(&b), "unseeded: the process's generator");
        a.seed_ids(7);
        b.seed_ids(7);
        let first = ids(&a);
        assert_eq!(first, ids(&b));
        let mut distinct = first.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), first.len());
        b.seed_ids(8);
        assert_ne!(ids(&b), ids(&a));
    }

    #[test]
    fn draws_stay_in_their_bounds_and_reach_both_ends() {
        let rng = SpawnRng::new(1);
        let ints: Vec<i64> = (0..1000).map(|_| rng.int_in(8, 12)).collect();
        assert!(ints.iter().all(|n| (8..=12).contains(n)));
        assert!(ints.contains(&8) && ints.contains(&12));
        assert_eq!(rng.int_in(3, 3), 3);
        let _ = rng.int_in(i64::MIN, i64::MAX);
        let floats: Vec<f64> = (0..1000).map(|_| rng.float_in(0.5, 1.5)).collect();
        assert!(floats.iter().all(|x| (0.5..=1.5).contains(x)));
        assert!(floats.iter().any(|x| *x < 0.6) && floats.iter().any(|x| *x > 1.4));
        assert_eq!(rng.float_in(2.0, 2.0), 2.0);
    }
}
