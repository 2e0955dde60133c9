//! [`Rng`]: the demo's tiny seeded random number generator.

/// A xorshift64* generator: a few lines, no dependency, and the same sequence for the same seed
/// on every platform, which is what keeps the simulation (and the generated arena scene)
/// reproducible.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`. Every seed is usable (zero included): the seed goes through the
    /// SplitMix64 finalizer first, which never yields the one state xorshift cannot leave.
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng {
            state: if z == 0 { 0x2545_F491_4F6C_DD1D } else { z },
        }
    }

    /// The next 64 random bits. Successive outputs never repeat within the generator's period
    /// (2^64 - 1), so they also serve as distinct IDs.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A float in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        // The top 24 bits: exactly representable in an f32.
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A float in `[low, high)`.
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.next_f32()
    }
}
