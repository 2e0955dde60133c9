//! Bytes the library keeps per live entity, counted by a global allocator installed in this
//! binary only (the library and the `archetool` binary keep the system allocator).
//!
//! ```text
//! cargo bench -p archetool --bench memory
//! ```
//!
//! Not a criterion benchmark: the figure is a byte count, the same every run. It spawns
//! 1,000,000 goblins by name and 1,000,000 static tuples of the same six components (each
//! world reserved for exactly that many entities) and prints the live bytes ours holds more,
//! per entity, in the quick mode's line format. A separate binary, so the counting (an atomic
//! add per allocation) does not slow the timing benchmarks of `--bench engine`.

use std::alloc::System;

use archetool::bench::memory::{Meter, BOOKKEEPING_BYTES};
use archetool::bench::{
    library_memory_figure, memory_figure, override_memory_figure, scene_memory_figure, LOAD_FILES,
    MEMORY_ENTITIES, SCENE_ENTITIES,
};
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes currently allocated and not freed.
fn live_bytes() -> u64 {
    let stats = ALLOCATOR.stats();
    stats
        .bytes_allocated
        .saturating_sub(stats.bytes_deallocated) as u64
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that does not match `memory` skips the figure.
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let wanted = |name: &str| {
        filter
            .as_ref()
            .is_none_or(|filter| name.contains(filter.as_str()))
    };
    let meter = Meter {
        method: "allocator",
        read: live_bytes,
    };
    if wanted("memory") {
        println!("{}", memory_figure(MEMORY_ENTITIES, 1, &meter));
        println!(
            "  (the two components the library adds to every entity, StableId and \
             ArchetypeInstance, are {BOOKKEEPING_BYTES} bytes)"
        );
    }
    if wanted("memory_override_bytes") {
        println!("{}", override_memory_figure(MEMORY_ENTITIES, 1, &meter));
    }
    if wanted("library_bytes_per_archetype") {
        println!("{}", library_memory_figure(LOAD_FILES, 1, &meter));
    }
    if wanted("memory_scene_loaded_vs_spawned") {
        println!("{}", scene_memory_figure(SCENE_ENTITIES, 1, &meter));
    }
}
