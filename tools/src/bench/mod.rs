//! Benchmark workloads, each next to its baseline: the same functions drive the criterion
//! benchmarks (`cargo bench -p archetool --bench engine`, and `--bench memory` for the bytes
//! per entity) and the quick mode ([`run_quick`], `archetool bench --quick`).
//!
//! | figure | ours | baseline | target (issue) |
//! | --- | --- | --- | --- |
//! | `spawn_by_name_vs_static` | `library.spawn(world, name)` × n | `world.spawn(tuple)` × n | ≤ 1.3× (2) |
//! | `spawn_many_vs_spawn_batch` | `library.spawn_many(world, name, n)` | `world.spawn_batch` of n tuples | ≤ 1.3× (2) |
//! | `static_with_ids_vs_static` | `world.spawn(tuple + StableId + ArchetypeInstance)` × n | `world.spawn(tuple)` × n | — |
//! | `spawn_by_name_vs_static_with_ids` | `library.spawn(world, name)` × n, every round's world kept (fresh pages each round, as in a fresh process) | `world.spawn(tuple + StableId + ArchetypeInstance)` × n, the same | ≤ 1.15× (19) |
//! | `spawn_by_name_vs_static_with_ids_warm` | the same, each world dropped after its round (the next reuses its memory: a warmed allocator) | the same | ≤ 1.15× (19) |
//! | `spawn_with_vs_spawn_by_name` | `library.spawn_with(world, name, overrides)` × n | `library.spawn(world, name)` × n | — |
//! | `spawn_with_bundle_vs_spawn_by_name` | `library.spawn_with_bundle(world, name, (Transform,))` × n | `library.spawn(world, name)` × n | ≤ 1.15× (19) |
//! | `spawn_varied_vs_spawn_by_name` | `library.spawn(world, name)` × n of the goblin with a `$range` and a `$pick` | `library.spawn(world, name)` × n of the goblin | ≤ 1.3× (18) |
//! | `spawn_varied_in_place_vs_spawn_by_name` | the same with 768 combinations of outcomes (written in place when a template was kept per combination, up to 512; now spawned as the one above) | the same | — |
//! | `spawn_varied_decoded_vs_spawn_by_name` | the same with a component of more than 256 outcomes (decoded per spawn) | the same | — |
//! | `load_vs_parse` | `ArchetypeLibrary::load` of 10,000 files | read + `serde_json::Value` parse of each | ≤ 2.5× (2) |
//! | `load_vs_parse_50k` | the same at 50,000 files | the same | ≤ 2.5× (19) |
//! | `library_bytes_per_archetype` | resident bytes a loaded library of the 10,000 files holds, per archetype | — | ≤ 3,072 (19) |
//! | `scene_json_save_vs_hecs_row` | `save_scene` JSON, 100,000 entities | `hecs::serialize::row` + serde_json, pretty | ≤ 1.2× (4) |
//! | `scene_json_load_vs_hecs_row` | `load_scene` JSON | `hecs::serialize::row` deserialize | ≤ 1.5× (4) |
//! | `scene_binary_save_vs_hecs_column` | `save_scene` binary | `hecs::serialize::column` + postcard | — |
//! | `scene_binary_load_vs_hecs_column` | `load_scene` binary | `hecs::serialize::column` deserialize | — |
//! | `scene_json_reformatted_load_vs_load` | `load_scene` of the JSON with its keys sorted, pretty (as `jq -S` or a merge tool leaves it) | `load_scene` of the JSON as saved | ≤ 1.3× (40) |
//! | `scene_binary_load_vs_json_load` | `load_scene` binary | `load_scene` JSON | ≤ 0.33× (4) |
//! | `scene_instances_json_save_vs_hecs_row` | `save_scene` JSON of 100,000 archetype instances (20% with a changed field, 10% a reference) | hecs row + serde_json of the same world | ≤ 1.2× (16) |
//! | `scene_instances_json_load_vs_hecs_row` | `load_scene` of that JSON | hecs row deserialize | ≤ 1.5× (16) |
//! | `scene_instances_json_reformatted_load_vs_load` | `load_scene` of that JSON, keys sorted, pretty | `load_scene` of it as saved | ≤ 1.3× (40) |
//! | `scene_instances_binary_save_vs_json_save` | `save_scene` binary of it | `save_scene` JSON | ≤ 0.5× (16) |
//! | `scene_instances_binary_load_vs_json_load` | `load_scene` binary | `load_scene` JSON | ≤ 0.33× (16) |
//! | `scene_instances_binary_load_vs_hecs_column` | `load_scene` binary | hecs column deserialize | — |
//! | `scene_commit_vs_spawn_batch` | the game thread's part of committing the instance scene: `PreparedScene::reserve`, then `ResolvedScene::commit` (prepared and resolved off the clock) | `world.spawn_batch` of the same component values | ≤ 1.5× (23) |
//! | `scene_pristine_load_vs_spawn_many` | `load_scene` of 100,000 untouched instances, JSON | `spawn_many` of as many | ≤ 2× (16) |
//! | `scene_pristine_binary_load_vs_spawn_many` | the same, binary | `spawn_many` of as many | ≤ 2× (16) |
//! | `reload_patch` | `set_source` + `apply_update`, 100,000 instances | — | ≤ 16 ms (3) |
//! | `reload_latency` | file write → `HotReloader::apply` applied it | — | p50 ≤ 60 ms, p99 ≤ 120 ms (3) |
//! | `reload_leaf_edit_1k` | `set_source` + `apply_update` of one leaf archetype (nothing extends it) with 1,000 live instances, in a library of 1,000 generated archetypes | — | — |
//! | `reload_leaf_edit_50k` | the same in a library of 50,000 | — | ≤ 2 ms (41) |
//! | `reload_leaf_edit_50k_vs_1k` | the 50,000-archetype edit's median | the 1,000-archetype one's | ≤ 1.5× (41) |
//! | `reload_new_file_1k` | `set_source` of a new leaf file (nothing names it) in the 1,000-archetype library (`added`), then of its removal (`removed`) | — | — |
//! | `reload_new_file_50k` | the same in the 50,000-archetype library | — | — |
//! | `reload_new_file_50k_vs_1k` | the 50,000-archetype median | the 1,000-archetype one | ≤ 1.5× (41) |
//! | `reload_game_thread_50k` | the game thread's share of that edit hot-reloaded: a real `HotReloader` watches the 50,000 files, the leaf's file is written and `apply` called every millisecond until its instances have the edit; the time of the `apply` calls that carried it (`reload`: what the reloader timed of them; `idle_polls`, not in the figure: the calls before the write settled) | — | ≤ 1 ms (41) |
//! | `reload_root_edit_1k_descendants` | `set_source` + `apply_update` of a root that the ~1,000 archetypes of one of the load workload's ten trees (10,000 files) build on, 100,000 live instances of them | — | ≤ 15 ms (41) |
//! | `watch_poll_idle_50k` | the process's CPU time over 5 s while the polling watcher watches 50,000 generated files nobody edits, in percent of one core | — | ≤ 2 (41) |
//! | `watch_poll_edit_50k` | a leaf's file written in place there (30 times) → `HotReloader::apply` applied it | — | — |
//! | `scene_live_edit_one_entity` | a 10,000-entity level file's write (one entity moved) → `LiveScene::apply` applied it | — | p50, p99 ≤ 50 ms (40) |
//! | `scene_live_edit_one_entity_100k` | the same, 100,000 entities | — | — |
//! | `scene_live_edit_100k_vs_10k` | the 100k edit's median | the 10k edit's | ≤ 1.5× (40) |
//! | `scene_live_write_100k_vs_10k` | writing the 100k edit into the world (`LiveSceneReport::written_in`), median | the 10k one's | ≤ 1.5× (40) |
//! | `lsp_diagnostics_after_edit` | `didChange` of a buffer 100 archetypes of 10,000 extend → its `publishDiagnostics` from `archetool lsp` | — | p50, p99 ≤ 50 ms (22) |
//! | `lsp_leaf_edit_50k` | `didChange` of a leaf buffer in a library of 50,000 → its `publishDiagnostics` | — | p50, p99 ≤ 20 ms (41) |
//! | `lsp_root_typing` | 100 versions of a root buffer (990 archetypes of 10,000 extend it) written 50 ms apart → the last one's `publishDiagnostics`, measured from its `didChange` (`published`: how many versions were checked) | — | ≤ 250 ms (41) |
//! | `inspector_idle_apply` | `Inspector::apply` with no request waiting, 10,000 live entities (µs per call, the mean of 10,000 calls) | — | ≤ 20 µs (42) |
//! | `inspector_entity_page` | a filtered page (archetype and name, the last 100) of 100,000 entities requested over loopback → its answer, `apply` answering on the game thread | — | ≤ 20 ms (42) |
//! | `memory` | bytes per entity spawned by name | the same six components as a tuple | — |
//! | `memory_override_bytes` | bytes per entity spawned with a one-field override | spawned by name | ≤ 64 (16) |
//! | `memory_scene_loaded_vs_spawned` (memory benchmark only) | bytes of the instance scene's world loaded from JSON | the same world spawned | ≤ 1.25× (16) |
//! | `scene_load_peak_1m_instances` | peak resident set of loading a JSON scene of 1,000,000 goblin instances (20% with an override) | — | ≤ 1.5 GB (24) |
//! | `cdda_load_vs_parse`, `cdda_load` | `ArchetypeLibrary::load` of the converted CDDA monsters | read + parse | — |
//! | `diagnostics_40k_errors_ms` | `ArchetypeLibrary::load` of one 760 KB file with 40,000 unknown fields, one per line | — | ≤ 200 ms (24) |
//! | `diagnostics_200k_keys_ms` | the same with 200,000 unknown fields on one 2.3 MB line | — | ≤ 1,000 ms |
//! | `diagnostics_fmt_check_200k_keys_ms` | `archetool fmt --check` of that directory | — | ≤ 2,000 ms |
//! | `diagnostics_minified_2k_errors_bytes` | bytes `archetool validate` prints for 2,000 unknown fields on one 22 KB line | — | ≤ 512 per error |
//!
//! The spawn figures come twice: with the realistic goblin (its `Name` holds a `String`, so
//! every clone allocates on both sides) and, suffixed `_pod`, with six plain-old-data
//! components, where the library's own per-entity cost shows at its largest. The two
//! `with_ids` figures split `spawn_by_name_vs_static` in two: what the two components the library
//! puts on every entity cost by themselves, and what spawning by name costs on top of a static
//! tuple that has them too.
//!
//! `BENCHMARKS.md` is generated from the quick mode's lines: [`markdown`] parses several runs
//! back and renders each figure's median, range and target over them
//! (`archetool bench --quick --runs 5 --markdown`, or `--markdown --from FILE...` for saved
//! runs). The targets its lines do not print come from [`stated_target`].

pub mod cdda;
pub mod cdda_rules;
pub mod diagnostics;
mod figure;
pub mod inspector;
pub mod library_edit;
pub mod live_scene;
pub mod load;
pub mod lsp;
pub mod markdown;
pub mod memory;
mod quick;
pub mod reload;
pub mod scaling;
pub mod scene;
pub mod scene_commit;
pub mod scene_instances;
pub mod scene_peak;
pub mod spawn;

pub use figure::{median, percentile, Figure, Measured};
pub use load::LoadFixture;
pub use quick::{
    latency_figure, library_memory_figure, lsp_figure, memory_figure, override_memory_figure,
    run_quick, run_quick_with, scene_memory_figure, stated_target, QuickSizes, StatedTarget,
    ERROR_FIELDS, FIGURES, LOAD_FILES, MEMORY_ENTITIES, MINIFIED_FIELDS, RELOAD_INSTANCES,
    SCENE_ENTITIES, SPAWN_COUNT, WIDE_FIELDS,
};
pub use spawn::{Goblin, PodGoblin, SixComponents, SpawnFixture, Varied};

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
        let figure = Figure::ratio(
            "spawn_by_name_vs_static",
            100_000,
            Some(1.3),
            vec![Duration::from_micros(1830)],
            vec![Duration::from_micros(1630)],
        );
        assert_eq!(
            figure.to_string(),
            "spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)"
        );
        assert!(figure.meets_target());
    }

    #[test]
    fn every_kind_of_figure_is_one_stable_line() {
        let ms = Duration::from_millis;
        let lines = [
            Figure {
                name: "reload_patch".into(),
                n: 100_000,
                measured: Measured::Time {
                    median: ms(10),
                    parts: vec![("set_source".into(), ms(1)), ("apply_update".into(), ms(9))],
                    target: Some(ms(16)),
                    rounds: vec![ms(10)],
                },
            },
            Figure {
                name: "reload_latency".into(),
                n: 30,
                measured: Measured::Latency {
                    p50: ms(31),
                    p99: ms(58),
                    max: ms(60),
                    target: Some((ms(60), ms(120))),
                },
            },
            Figure {
                name: "memory".into(),
                n: 1_000_000,
                measured: Measured::Bytes {
                    per_item: 16.0,
                    method: "allocator",
                },
            },
            Figure {
                name: "cdda_load".into(),
                n: 1176,
                measured: Measured::Load {
                    median: ms(47),
                    item: "archetype",
                    counts: vec![("errors", 0), ("dropped_modifiers", 15)],
                    rounds: vec![ms(47)],
                },
            },
            Figure {
                name: "diagnostics_40k_errors_ms".into(),
                n: 40_000,
                measured: Measured::Bounded {
                    value: 212.5,
                    unit: "ms",
                    bound: 200.0,
                    counts: vec![("file_bytes", 760_083)],
                    rounds: vec![212.5],
                },
            },
            Figure {
                name: "diagnostics_minified_2k_errors_bytes".into(),
                n: 2_000,
                measured: Measured::Bounded {
                    value: 569_170.0,
                    unit: "bytes",
                    bound: 1_024_000.0,
                    counts: vec![("file_bytes", 22_049)],
                    rounds: vec![569_170.0],
                },
            },
            Figure::skipped(
                "cdda_load_vs_parse",
                "no data at ../shared/data/cdda-monsters",
            ),
        ]
        .map(|figure| (figure.to_string(), figure.meets_target()));
        assert_eq!(
            lines,
            [
                ("reload_patch ms=10.00 (set_source 1.00 ms, apply_update 9.00 ms, n=100000)".to_string(), true),
                ("reload_latency p50_ms=31.0 p99_ms=58.0 (max 60.0 ms, n=30)".to_string(), true),
                ("memory bytes_per_entity=16.0 (method=allocator, n=1000000)".to_string(), true),
                ("cdda_load ms=47.00 (per_archetype_us=40.0, errors=0, dropped_modifiers=15, n=1176)".to_string(), true),
                ("diagnostics_40k_errors_ms ms=212.50 (target<=200 missed, file_bytes=760083, n=40000)".to_string(), false),
                ("diagnostics_minified_2k_errors_bytes bytes=569170 (target<=1024000 met, file_bytes=22049, n=2000)".to_string(), true),
                ("cdda_load_vs_parse skipped (no data at ../shared/data/cdda-monsters)".to_string(), true),
            ]
        );
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&samples, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&samples[..30], 99.0), Duration::from_millis(30));
        assert_eq!(median(&samples[..4]), Duration::from_micros(2500));
    }

    #[test]
    fn the_quick_run_can_be_filtered() {
        assert!(run_quick(Some("no such figure")).is_empty());
    }
}
