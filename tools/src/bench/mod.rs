//! Benchmark workloads, each next to its baseline: the same functions drive the criterion
//! benchmarks (`cargo bench -p archetool --bench engine`) and the quick mode ([`run_quick`]).
//!
//! | figure | ours | baseline | target (issue 2) |
//! | --- | --- | --- | --- |
//! | `spawn_by_name_vs_static` | `library.spawn(world, name)` × n | `world.spawn(tuple)` × n | ≤ 1.3× |
//! | `spawn_many_vs_spawn_batch` | `library.spawn_many(world, name, n)` | `world.spawn_batch` of n tuples | ≤ 1.3× |
//! | `static_with_ids_vs_static` | `world.spawn(tuple + StableId + ArchetypeInstance)` × n | `world.spawn(tuple)` × n | — |
//! | `spawn_by_name_vs_static_with_ids` | `library.spawn(world, name)` × n | `world.spawn(tuple + StableId + ArchetypeInstance)` × n | — |
//! | `spawn_with_vs_spawn_by_name` | `library.spawn_with(world, name, overrides)` × n | `library.spawn(world, name)` × n | — |
//! | `load_vs_parse` | `ArchetypeLibrary::load` of 10,000 files | read + `serde_json::Value` parse of each | ≤ 2.5× |
//!
//! The spawn figures come twice: with the realistic goblin (its `Name` holds a `String`, so
//! every clone allocates on both sides) and, suffixed `_pod`, with six plain-old-data
//! components, where the library's own per-entity cost shows at its largest. The two
//! `with_ids` figures split `spawn_by_name_vs_static` in two: what the two components the library
//! puts on every entity cost by themselves, and what spawning by name costs on top of a static
//! tuple that has them too.

pub mod load;
mod quick;
pub mod spawn;

pub use load::LoadFixture;
pub use quick::{run_quick, Figure, LOAD_FILES, SPAWN_COUNT};
pub use spawn::{Goblin, PodGoblin, SixComponents, SpawnFixture};

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::time::Duration;

    use archetype_engine::StableId;
    use hecs::World;

    use super::*;
    use crate::demo::components::Health;

    #[test]
    fn spawn_workloads_spawn_the_same_values_with_fresh_ids() {
        let fixture = SpawnFixture::goblin();
        let mut ours = World::new();
        fixture.spawn_by_name(&mut ours, 10);
        fixture.spawn_many(&mut ours, 10);
        fixture.spawn_with_overrides(&mut ours, 1);
        let ids: HashSet<StableId> = ours.query_mut::<&StableId>().into_iter().copied().collect();
        assert_eq!(ids.len(), 21);
        let healths: Vec<f32> = ours
            .query_mut::<&Health>()
            .into_iter()
            .map(|h| h.max)
            .collect();
        assert_eq!(healths.iter().filter(|&&max| max == 12.0).count(), 20);
        assert_eq!(healths.iter().filter(|&&max| max == 50.0).count(), 1);

        let mut baseline = World::new();
        fixture.spawn_static(&mut baseline, 1);
        fixture.spawn_batch(&mut baseline, 1);
        fixture.spawn_static_with_library_components(&mut baseline, 1);
        assert_eq!(baseline.len(), 3);
        let values = fixture.values();
        assert!(baseline
            .query_mut::<&Health>()
            .into_iter()
            .all(|health| *health == values.2));
    }

    #[test]
    fn generated_files_load_without_errors() {
        let fixture = LoadFixture::generate(300);
        assert_eq!(fixture.files(), 300);
        assert_eq!(fixture.load().len(), 300);
        assert_eq!(fixture.read_and_parse().len(), 300);
    }

    #[test]
    fn a_figure_is_one_stable_line() {
        let figure = Figure {
            name: "spawn_by_name_vs_static".to_string(),
            ours: Duration::from_micros(1830),
            baseline: Duration::from_micros(1630),
            n: 100_000,
            target: Some(1.3),
            rounds: Vec::new(),
        };
        assert_eq!(
            figure.to_string(),
            "spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)"
        );
        assert!(figure.meets_target());
    }

    #[test]
    fn the_quick_run_can_be_filtered() {
        assert!(run_quick(Some("no such figure")).is_empty());
    }
}
