//! Memory workload: the bytes the library keeps per live entity (the `ArchetypeInstance`
//! marker, the `StableId`, any index entries), measured as the difference between `n` goblins
//! spawned by name and the same six components spawned as a static tuple.
//!
//! The library cannot count allocations itself (the workspace forbids `unsafe`, and a global
//! allocator belongs to the binary): the caller passes a [`Meter`]. The memory benchmark
//! (`cargo bench -p archetool --bench memory`) installs a counting global allocator and reads
//! its live byte count; the quick mode, inside the `archetool` binary, reads the resident set
//! size from `/proc/self/status` instead, which is page-granular and also sees memory the
//! allocator reuses or keeps, so it is the rougher of the two.
//!
//! Both worlds reserve room for exactly `n` entities of their hecs archetype first, so the
//! figure is the per-entity cost without hecs's growth slack (a world that grew by doubling
//! holds up to twice the bytes per entity, on both sides alike). Every world stays alive until
//! all rounds are measured, so no round reuses memory another one freed.

use std::fs;

use archetype_engine::{ArchetypeInstance, StableId};
use hecs::World;

use crate::bench::load::LoadFixture;
use crate::bench::scene_instances::InstanceWorlds;
use crate::bench::spawn::{PodGoblin, SixComponents, SpawnFixture};

/// Reads how much memory the process holds, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Meter {
    /// How it measures, as the figure line names it (`allocator`, `rss`).
    pub method: &'static str,
    /// The current value in bytes.
    pub read: fn() -> u64,
}

impl Meter {
    /// The resident set size (`VmRSS` of `/proc/self/status`), or `None` where there is no
    /// such file (not Linux).
    pub fn resident_set() -> Option<Meter> {
        resident_bytes().map(|_| Meter {
            method: "rss",
            read: || resident_bytes().unwrap_or(0),
        })
    }
}

fn resident_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// A `kB` line of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in bytes.
pub(crate) fn status_bytes(key: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(key))?;
    let kib: u64 = line
        .trim_start_matches(key)
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// What [`library_overhead`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Overhead {
    /// Entities per world.
    pub n: usize,
    /// Bytes the library's world held more than the baseline's, per entity (medians).
    pub per_entity: f64,
    /// Per round: bytes each world took, (ours, baseline).
    pub rounds: Vec<(i64, i64)>,
}

/// Spawns `n` plain-old-data goblins by name, and `n` static six-tuples of the same values,
/// each into a fresh world reserved for `n` entities, `rounds` times alternating which goes
/// first; reads `meter` before and after each world is built and returns the median difference
/// per entity.
///
/// # Panics
/// If the goblin fixture cannot be built, or `n` does not fit in a `u32`.
pub fn library_overhead(n: usize, rounds: usize, meter: &Meter) -> Overhead {
    type Ours = <PodGoblin as SixComponents>::WithLibraryComponents;
    let fixture = SpawnFixture::pod_goblin();
    let reserve = u32::try_from(n).expect("bench: too many entities");
    compare(n, rounds, meter, |ours, world| {
        if ours {
            world.reserve::<Ours>(reserve);
            fixture.spawn_by_name(world, n);
        } else {
            world.reserve::<PodGoblin>(reserve);
            fixture.spawn_static(world, n);
        }
    })
}

/// What an override costs an entity: `n` plain-old-data goblins spawned with a
/// one-field override (`spawn_with(.., {"Health": {"max": 50}})`) against `n` spawned by name,
/// each world reserved for its entities; the median difference per entity.
///
/// # Panics
/// As [`library_overhead`].
pub fn override_overhead(n: usize, rounds: usize, meter: &Meter) -> Overhead {
    type Plain = <PodGoblin as SixComponents>::WithLibraryComponents;
    // The overrides' shape is named by the marker: the same columns as a plain spawn.
    type Overridden = Plain;
    let fixture = SpawnFixture::pod_goblin();
    let reserve = u32::try_from(n).expect("bench: too many entities");
    compare(n, rounds, meter, |ours, world| {
        if ours {
            world.reserve::<Overridden>(reserve);
            fixture.spawn_with_overrides(world, n);
        } else {
            world.reserve::<Plain>(reserve);
            fixture.spawn_by_name(world, n);
        }
    })
}

/// What a world loaded from a scene holds against the same world spawned: the
/// instance scene's `n` entities loaded from JSON, and spawned as the game spawned them.
///
/// # Panics
/// If the scene's archetypes do not load or the scene does not load.
pub fn scene_loaded_overhead(n: usize, rounds: usize, meter: &Meter) -> Overhead {
    let worlds = InstanceWorlds::new(n);
    compare(n, rounds, meter, |ours, world| match ours {
        true => worlds.load(world),
        false => worlds.spawn(world),
    })
}

/// The bytes the library holds per archetype: `fixture`'s files loaded `rounds` times, each
/// library kept alive until all are measured, reading `meter` around each load; per round.
pub fn library_bytes(fixture: &LoadFixture, rounds: usize, meter: &Meter) -> Vec<f64> {
    let mut alive = Vec::with_capacity(rounds.max(1));
    let mut per_round = Vec::with_capacity(rounds.max(1));
    for _ in 0..rounds.max(1) {
        let before = (meter.read)();
        let library = fixture.load();
        let after = (meter.read)();
        alive.push(library);
        per_round.push((after as f64 - before as f64) / fixture.files().max(1) as f64);
    }
    per_round
}

/// Builds a world with `build(true, ..)` (ours) and one with `build(false, ..)` (the
/// baseline), `rounds` times alternating which goes first, reading `meter` around each; every
/// world stays alive until all are measured. The median difference per entity.
fn compare(n: usize, rounds: usize, meter: &Meter, build: impl Fn(bool, &mut World)) -> Overhead {
    let mut alive = Vec::with_capacity(2 * rounds.max(1));
    let mut measure = |ours: bool| {
        let before = (meter.read)();
        let mut world = World::new();
        build(ours, &mut world);
        let after = (meter.read)();
        alive.push(world);
        after as i64 - before as i64
    };
    let mut measured = Vec::with_capacity(rounds.max(1));
    for round in 0..rounds.max(1) {
        measured.push(if round % 2 == 0 {
            let ours = measure(true);
            (ours, measure(false))
        } else {
            let baseline = measure(false);
            (measure(true), baseline)
        });
    }
    drop(alive);
    let median = |side: fn(&(i64, i64)) -> i64| {
        let mut values: Vec<i64> = measured.iter().map(side).collect();
        values.sort_unstable();
        values[values.len() / 2]
    };
    let difference = median(|r| r.0) - median(|r| r.1);
    Overhead {
        n,
        per_entity: difference as f64 / n.max(1) as f64,
        rounds: measured,
    }
}

/// The bookkeeping the library adds to every entity it spawns, by type: what the memory figure
/// is expected to find (plus any index the library keeps).
pub const BOOKKEEPING_BYTES: usize =
    std::mem::size_of::<StableId>() + std::mem::size_of::<ArchetypeInstance>();
