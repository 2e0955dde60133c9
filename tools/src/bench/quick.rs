//! The quick mode: every comparison run briefly, ours and the baseline alternating, one
//! [`Figure`] per comparison.

use std::time::{Duration, Instant};

use hecs::World;

use crate::bench::cdda::{self, CddaFixture};
use crate::bench::diagnostics::{FieldsFixture, Layout};
use crate::bench::figure::{median, percentile, Figure, Measured};
use crate::bench::inspector::InspectorFixture;
use crate::bench::library_edit::{LeafEditFixture, RootEditFixture};
use crate::bench::live_scene;
use crate::bench::load::LoadFixture;
use crate::bench::memory::{self, Meter};
use crate::bench::reload::{self, PatchFixture};
use crate::bench::scaling::{scaling_figure, DIMENSIONS};
use crate::bench::scene::SceneFixture;
use crate::bench::scene_commit::CommitFixture;
use crate::bench::scene_instances::{instance_scene, PristineScene};
use crate::bench::scene_peak::{InstanceScene, LoadPeak};
use crate::bench::spawn::Varied;
use crate::bench::spawn::{SixComponents, SpawnFixture};

/// Entities per spawn workload (the spawn targets are stated at this size).
pub const SPAWN_COUNT: usize = 100_000;
/// Archetype files in the load workload.
pub const LOAD_FILES: usize = 10_000;
/// Archetype files in the large load workload (`load_vs_parse_50k`).
pub const LOAD_FILES_LARGE: usize = 50_000;
/// The most bytes the library may hold per loaded archetype.
const LIBRARY_BYTES_TARGET: f64 = 3072.0;
/// Entities in the scene workloads' world (the scene targets are stated at this size).
pub const SCENE_ENTITIES: usize = 100_000;
/// Live instances patched by the reload workload.
pub const RELOAD_INSTANCES: usize = 100_000;
/// Entities per world in the memory workload.
pub const MEMORY_ENTITIES: usize = 1_000_000;
/// Archetype instances in the scene of the peak-memory workload.
pub const PEAK_INSTANCES: usize = 1_000_000;
/// The most the load of that scene may take at its peak: 1.5 GB.
const PEAK_TARGET_MB: f64 = 1536.0;
/// Unknown fields, one per line, in the file of `diagnostics_40k_errors_ms` (760 KB).
pub const ERROR_FIELDS: usize = 40_000;
/// Unknown fields on one line in the files of the 200k-keys figures (2.3 MB).
pub const WIDE_FIELDS: usize = 200_000;
/// Unknown fields on one line in the file of `diagnostics_minified_2k_errors_bytes` (22 KB).
pub const MINIFIED_FIELDS: usize = 2_000;

/// The highest ratio of ours to its baseline the load figures promise.
const LOAD_TARGET: f64 = 2.5;
/// The highest ratio of loading the load workload's cook to loading its JSON files.
const COOKED_LOAD_TARGET: f64 = 0.1;
/// The highest ratio of loading the load workload's cook to reading and parsing its files.
const COOKED_PARSE_TARGET: f64 = 0.3;
/// The highest ratio of committing the instance scene to `spawn_batch` of its values.
const COMMIT_TARGET: f64 = 1.5;
/// The longest a hot-reload patch of the reload workload's instances may take.
const RELOAD_PATCH_TARGET: Duration = Duration::from_millis(16);
/// The longest (p50, p99) from a file write to its change applied.
const RELOAD_LATENCY_TARGET: (Duration, Duration) =
    (Duration::from_millis(60), Duration::from_millis(120));
/// The longest (p50, p99) from an edit to the language server's diagnostics of it.
const LSP_TARGET: (Duration, Duration) = (Duration::from_millis(50), Duration::from_millis(50));
/// A scene file's edit of one entity in the world, from the write, 30 ms of it the debounce.
const LIVE_SCENE_TARGET: (Duration, Duration) =
    (Duration::from_millis(50), Duration::from_millis(50));
/// The inspector's cost per frame with nothing to answer (µs), 10,000 live entities.
const INSPECTOR_IDLE_TARGET_US: f64 = 20.0;
/// A filtered page of 100,000 entities, from the request to its answer (ms).
const INSPECTOR_PAGE_TARGET_MS: f64 = 20.0;
/// Typing in a root buffer: the last edit's diagnostics, at most this long after it (ms).
const LSP_TYPING_TARGET_MS: f64 = 250.0;
/// The polling watcher's share of one core while nothing changes (50,000 files), in percent.
const POLL_IDLE_TARGET_PERCENT: f64 = 2.0;
/// A leaf buffer's edit to its diagnostics in a 50,000-archetype library (p50 and p99).
const LSP_LEAF_TARGET: Duration = Duration::from_millis(20);
/// A root's edit with its ~1,000 descendants and 100,000 live instances.
const ROOT_EDIT_TARGET: Duration = Duration::from_millis(15);
/// One leaf's edit in a 50,000-archetype library, `set_source` + `apply_update`.
const LEAF_EDIT_TARGET: Duration = Duration::from_millis(2);
/// The game thread's share of that edit hot-reloaded: the `apply` calls that carried it.
const GAME_THREAD_TARGET: Duration = Duration::from_millis(1);
/// The 50,000-archetype leaf edit against the 1,000-archetype one (medians).
const LEAF_EDIT_GROWTH_TARGET: f64 = 1.5;
/// Live instances of the edited leaf.
const LEAF_EDIT_INSTANCES: usize = 1_000;
/// The 100,000-entity level's edit against the 10,000-entity one's (medians).
const LIVE_SCENE_GROWTH_TARGET: f64 = 1.5;
/// Entities in the live-scene levels.
pub const LIVE_ENTITIES: usize = 10_000;
pub const LIVE_ENTITIES_LARGE: usize = 100_000;

/// The figures in the order the quick mode prints them; a filter picks those whose name
/// contains it.
pub const FIGURES: &[&str] = &[
    "memory",
    "memory_override_bytes",
    "scene_load_peak_1m_instances",
    "library_bytes_per_archetype",
    "spawn_by_name_vs_static",
    "spawn_many_vs_spawn_batch",
    "static_with_ids_vs_static",
    "spawn_by_name_vs_static_with_ids",
    "spawn_by_name_vs_static_with_ids_warm",
    "spawn_with_vs_spawn_by_name",
    "spawn_with_bundle_vs_spawn_by_name",
    "spawn_varied_vs_spawn_by_name",
    "spawn_varied_in_place_vs_spawn_by_name",
    "spawn_varied_decoded_vs_spawn_by_name",
    "spawn_by_name_vs_static_pod",
    "spawn_many_vs_spawn_batch_pod",
    "static_with_ids_vs_static_pod",
    "spawn_by_name_vs_static_with_ids_pod",
    "load_vs_parse",
    "cooked_load_vs_load",
    "cooked_load_vs_parse",
    "scene_json_save_vs_hecs_row",
    "scene_json_save_one_thread_vs_hecs_row",
    "scene_json_load_vs_hecs_row",
    "scene_binary_save_vs_hecs_column",
    "scene_binary_load_vs_hecs_column",
    "scene_json_reformatted_load_vs_load",
    "scene_binary_load_vs_json_load",
    "scene_instances_json_save_vs_hecs_row",
    "scene_instances_json_load_vs_hecs_row",
    "scene_instances_json_reformatted_load_vs_load",
    "scene_instances_binary_save_vs_json_save",
    "scene_instances_binary_load_vs_json_load",
    "scene_instances_binary_load_vs_hecs_column",
    "scene_pristine_load_vs_spawn_many",
    "scene_pristine_binary_load_vs_spawn_many",
    "scene_commit_vs_spawn_batch",
    "load_vs_parse_50k",
    "reload_patch",
    "reload_patch_mid_fight",
    "reload_latency",
    "reload_leaf_edit_1k",
    "reload_leaf_edit_50k",
    "reload_leaf_edit_50k_vs_1k",
    "reload_new_file_1k",
    "reload_new_file_50k",
    "reload_new_file_50k_vs_1k",
    "reload_game_thread_50k",
    "reload_root_edit_1k_descendants",
    "watch_poll_idle_50k",
    "watch_poll_edit_50k",
    "scene_live_edit_one_entity",
    "scene_live_edit_one_entity_100k",
    "scene_live_edit_100k_vs_10k",
    "scene_live_write_100k_vs_10k",
    "lsp_diagnostics_after_edit",
    "lsp_leaf_edit_50k",
    "lsp_root_typing",
    "inspector_idle_apply",
    "inspector_entity_page",
    "cdda_load_vs_parse",
    "cdda_load",
    "diagnostics_40k_errors_ms",
    "diagnostics_200k_keys_ms",
    "diagnostics_fmt_check_200k_keys_ms",
    "diagnostics_minified_2k_errors_bytes",
    "scaling_scene_entities",
    "scaling_sub_scene_placements",
    "scaling_sub_scene_depth",
    "scaling_live_scene_entities",
    "scaling_validate_errors_per_file",
    "scaling_lsp_errors_per_file",
    "scaling_pick_length",
    "scaling_formerly_count",
    "scaling_renamed_archetypes",
    "scaling_extends_fanout",
    "scaling_extends_count",
    "scaling_children_count",
    "scaling_variation_sites",
    "scaling_keyed_records",
];

/// A target the quick mode holds a ratio, time or latency figure to, which its line does not
/// print (a bounded or scaling figure prints its own, `target<=...`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatedTarget {
    /// The highest `ours / baseline` ratio.
    Ratio(f64),
    /// The longest median time.
    Time(Duration),
    /// The longest p50 and p99.
    Latency(Duration, Duration),
}

/// The target the quick mode holds the ratio, time or latency figure `name` to (`_pod`
/// spawn figures have their goblin's), or `None` when it promises none or the figure is of
/// another kind. The same constants the workloads are measured against.
pub fn stated_target(name: &str) -> Option<StatedTarget> {
    let spawn = SPAWN_FIGURES.iter().find(|figure| {
        figure.name == name || (figure.also_pod && name.strip_suffix("_pod") == Some(figure.name))
    });
    if let Some(figure) = spawn {
        return figure.target.map(StatedTarget::Ratio);
    }
    let scene = (SCENE_FIGURES.iter())
        .chain(&INSTANCE_FIGURES)
        .chain(&PRISTINE_FIGURES)
        .find(|(figure, ..)| *figure == name);
    if let Some((.., target)) = scene {
        return target.map(StatedTarget::Ratio);
    }
    match name {
        "load_vs_parse" | "load_vs_parse_50k" => Some(StatedTarget::Ratio(LOAD_TARGET)),
        "cooked_load_vs_load" => Some(StatedTarget::Ratio(COOKED_LOAD_TARGET)),
        "cooked_load_vs_parse" => Some(StatedTarget::Ratio(COOKED_PARSE_TARGET)),
        "scene_commit_vs_spawn_batch" => Some(StatedTarget::Ratio(COMMIT_TARGET)),
        "reload_patch" | "reload_patch_mid_fight" => Some(StatedTarget::Time(RELOAD_PATCH_TARGET)),
        "reload_leaf_edit_50k" => Some(StatedTarget::Time(LEAF_EDIT_TARGET)),
        "reload_game_thread_50k" => Some(StatedTarget::Time(GAME_THREAD_TARGET)),
        "reload_root_edit_1k_descendants" => Some(StatedTarget::Time(ROOT_EDIT_TARGET)),
        "reload_leaf_edit_50k_vs_1k" | "reload_new_file_50k_vs_1k" => {
            Some(StatedTarget::Ratio(LEAF_EDIT_GROWTH_TARGET))
        }
        "reload_latency" => Some(StatedTarget::Latency(
            RELOAD_LATENCY_TARGET.0,
            RELOAD_LATENCY_TARGET.1,
        )),
        "lsp_diagnostics_after_edit" => Some(StatedTarget::Latency(LSP_TARGET.0, LSP_TARGET.1)),
        "lsp_leaf_edit_50k" => Some(StatedTarget::Latency(LSP_LEAF_TARGET, LSP_LEAF_TARGET)),
        "scene_live_edit_one_entity" => Some(StatedTarget::Latency(
            LIVE_SCENE_TARGET.0,
            LIVE_SCENE_TARGET.1,
        )),
        "scene_live_edit_100k_vs_10k" | "scene_live_write_100k_vs_10k" => {
            Some(StatedTarget::Ratio(LIVE_SCENE_GROWTH_TARGET))
        }
        _ => None,
    }
}

/// How big each workload of the quick mode is and how often it runs.
#[derive(Clone, Debug)]
pub struct QuickSizes {
    /// Entities per spawn workload.
    pub spawn: usize,
    /// Archetype files in the load workload.
    pub load_files: usize,
    /// Archetype files in the large load workload.
    pub load_files_large: usize,
    /// Entities in the scene workloads' world.
    pub scene_entities: usize,
    /// Live instances the reload patch reaches.
    pub reload_instances: usize,
    /// Archetype files in the small and the large library of the leaf-edit figures.
    pub leaf_edit_files: (usize, usize),
    /// How long the polling watcher's idle cost is measured over.
    pub poll_idle: Duration,
    /// Versions typed into the root buffer of the typing figure.
    pub typing_edits: usize,
    /// Saves the watcher latency is measured over.
    pub latency_saves: usize,
    /// Live instances during the latency measurement.
    pub latency_instances: usize,
    /// Entities in the live-scene levels: the standard one and the large one.
    pub live_entities: (usize, usize),
    /// Saves of each live-scene level the latency is measured over.
    pub live_saves: (usize, usize),
    /// Entities per world in the memory workload.
    pub memory_entities: usize,
    /// Archetype instances in the scene whose peak load memory is measured.
    pub peak_instances: usize,
    /// Load only the first this many monsters of the real data (and their parents).
    pub cdda_limit: Option<usize>,
    /// Unknown fields, one per line, in the file of the 40k-errors figure.
    pub error_fields: usize,
    /// Unknown fields on one line in the files of the 200k-keys figures.
    pub wide_fields: usize,
    /// Unknown fields on one line in the file of the output-size figure.
    pub minified_fields: usize,
    /// Live entities of the inspector's idle figure and of its page figure.
    pub inspector_entities: (usize, usize),
    /// Measured rounds of the fast comparisons (after one unmeasured warm-up round each).
    pub rounds: usize,
    /// Measured rounds of the slow ones.
    pub slow_rounds: usize,
    /// What the scaling dimensions' own `n` is divided by (1 at the standard sizes).
    pub scaling_divisor: usize,
    /// Measured rounds of the scene workloads (each round saves or loads the whole world once
    /// per side and format).
    pub scene_rounds: usize,
}

impl QuickSizes {
    /// The sizes the targets are stated for (the latency over 30 saves rather than 100):
    /// about 40 seconds in all on a busy two-core machine.
    pub fn standard() -> Self {
        QuickSizes {
            spawn: SPAWN_COUNT,
            load_files: LOAD_FILES,
            load_files_large: LOAD_FILES_LARGE,
            scene_entities: SCENE_ENTITIES,
            reload_instances: RELOAD_INSTANCES,
            leaf_edit_files: (1_000, LOAD_FILES_LARGE),
            typing_edits: 100,
            poll_idle: Duration::from_secs(5),
            latency_saves: 30,
            latency_instances: 1_000,
            live_entities: (LIVE_ENTITIES, LIVE_ENTITIES_LARGE),
            live_saves: (30, 7),
            inspector_entities: (10_000, 100_000),
            memory_entities: MEMORY_ENTITIES,
            peak_instances: PEAK_INSTANCES,
            cdda_limit: None,
            error_fields: ERROR_FIELDS,
            wide_fields: WIDE_FIELDS,
            minified_fields: MINIFIED_FIELDS,
            rounds: 11,
            slow_rounds: 5,
            scaling_divisor: 1,
            scene_rounds: 3,
        }
    }

    /// Tiny sizes that check every workload runs (a test's: no figure means anything).
    pub fn tiny() -> Self {
        QuickSizes {
            spawn: 200,
            load_files: 120,
            load_files_large: 240,
            scene_entities: 200,
            reload_instances: 200,
            leaf_edit_files: (120, 240),
            typing_edits: 3,
            poll_idle: Duration::from_millis(200),
            latency_saves: 2,
            latency_instances: 10,
            live_entities: (20, 200),
            live_saves: (2, 2),
            inspector_entities: (100, 1_000),
            memory_entities: 1_000,
            peak_instances: 1_000,
            cdda_limit: Some(40),
            error_fields: 40,
            wide_fields: 200,
            minified_fields: 20,
            rounds: 1,
            slow_rounds: 1,
            scaling_divisor: 100,
            scene_rounds: 1,
        }
    }
}

/// Runs every comparison whose name contains `filter` (all of them for `None`) at the
/// [standard](QuickSizes::standard) sizes and returns one [`Figure`] each, in the order of
/// [`FIGURES`].
///
/// Ours and the baseline alternate within each comparison (AB BA AB ..., after a warm-up
/// round), so machine noise affects both; the figure holds the medians.
///
/// # Panics
/// If a workload cannot be set up (temporary files cannot be written) or fails.
pub fn run_quick(filter: Option<&str>) -> Vec<Figure> {
    run_quick_with(filter, &QuickSizes::standard(), &mut |_| {})
}

/// [`run_quick`] at the given sizes, calling `on_figure` with each figure as soon as it is
/// measured (so a command line can print it at once).
///
/// # Panics
/// As [`run_quick`].
pub fn run_quick_with(
    filter: Option<&str>,
    sizes: &QuickSizes,
    on_figure: &mut dyn FnMut(&Figure),
) -> Vec<Figure> {
    let wanted = |name: &str| filter.is_none_or(|f| name.contains(f));
    let mut figures = Vec::new();
    let mut push = |figure: Figure| {
        on_figure(&figure);
        figures.push(figure);
    };

    // First, while the process has freed little memory the allocator could hand out again
    // without the resident set growing.
    if wanted("memory") {
        push(match Meter::resident_set() {
            Some(meter) => memory_figure(sizes.memory_entities, 3, &meter),
            None => Figure::skipped(
                "memory",
                "no /proc/self/status to read the resident set from; run `cargo bench -p archetool --bench memory`",
            ),
        });
    }

    if wanted("memory_override_bytes") {
        push(match Meter::resident_set() {
            Some(meter) => override_memory_figure(sizes.memory_entities, 3, &meter),
            None => Figure::skipped(
                "memory_override_bytes",
                "no /proc/self/status to read the resident set from; run `cargo bench -p archetool --bench memory`",
            ),
        });
    }

    // Early too: the peak is the resident set's growth, and memory other workloads freed (the
    // allocator keeps it) would be reused instead of showing.
    if wanted("scene_load_peak_1m_instances") {
        push(scene_peak_figure(sizes.peak_instances));
    }

    if wanted("library_bytes_per_archetype") {
        push(match Meter::resident_set() {
            Some(meter) => library_memory_figure(sizes.load_files, 3, &meter),
            None => Figure::skipped(
                "library_bytes_per_archetype",
                "no /proc/self/status to read the resident set from; run `cargo bench -p archetool --bench memory`",
            ),
        });
    }

    for pod in [false, true] {
        let list: Vec<(String, &SpawnFigure)> = SPAWN_FIGURES
            .iter()
            .filter(|f| !pod || f.also_pod)
            .map(|f| {
                let name = if pod {
                    format!("{}_pod", f.name)
                } else {
                    f.name.to_string()
                };
                (name, f)
            })
            .filter(|(name, _)| wanted(name))
            .collect();
        if list.is_empty() {
            continue;
        }
        if pod {
            spawn_figures(&SpawnFixture::pod_goblin(), list, sizes, &mut push);
        } else {
            spawn_figures(&SpawnFixture::goblin(), list, sizes, &mut push);
        }
    }

    if wanted("load_vs_parse") {
        push(load_figure("load_vs_parse", sizes.load_files, sizes));
    }
    if wanted("cooked_load_vs_load") || wanted("cooked_load_vs_parse") {
        for figure in cooked_load_figures(sizes.load_files, sizes) {
            if wanted(&figure.name) {
                push(figure);
            }
        }
    }

    scene_figures(sizes, &wanted, &mut push);
    if wanted("load_vs_parse_50k") {
        push(load_figure(
            "load_vs_parse_50k",
            sizes.load_files_large,
            sizes,
        ));
    }
    reload_figures(sizes, &wanted, &mut push);
    inspector_figures(sizes, &wanted, &mut push);

    cdda_figures(sizes, &wanted, &mut push);
    diagnostics_figures(sizes, &wanted, &mut push);
    for dimension in DIMENSIONS {
        if wanted(dimension.name) {
            push(scaling_figure(
                dimension,
                sizes.scaling_divisor,
                sizes.rounds,
            ));
        }
    }
    figures
}

/// The memory figure from [`memory::library_overhead`].
pub fn memory_figure(n: usize, rounds: usize, meter: &Meter) -> Figure {
    let overhead = memory::library_overhead(n, rounds, meter);
    Figure {
        name: "memory".to_string(),
        n,
        measured: Measured::Bytes {
            per_item: overhead.per_entity,
            method: meter.method,
        },
    }
}

/// `ArchetypeLibrary::load` of `files` generated files against reading and parsing them.
fn load_figure(name: &str, files: usize, sizes: &QuickSizes) -> Figure {
    let fixture = LoadFixture::generate(files);
    let (ours, baseline) = alternate(
        sizes.slow_rounds,
        || fixture.load(),
        || fixture.read_and_parse(),
    );
    Figure::ratio(name, files, Some(LOAD_TARGET), ours, baseline)
}

/// A cooked library of the load workload loaded, against loading its JSON files
/// (`cooked_load_vs_load`) and against merely reading and parsing them
/// (`cooked_load_vs_parse`); the three alternate in one set of rounds.
fn cooked_load_figures(files: usize, sizes: &QuickSizes) -> [Figure; 2] {
    let fixture = LoadFixture::generate(files);
    let cook = fixture.cook();
    let (cooked, load) = alternate(
        sizes.slow_rounds,
        || fixture.load_cooked(&cook),
        || fixture.load(),
    );
    let (cooked_again, parse) = alternate(
        sizes.slow_rounds,
        || fixture.load_cooked(&cook),
        || fixture.read_and_parse(),
    );
    [
        Figure::ratio(
            "cooked_load_vs_load",
            files,
            Some(COOKED_LOAD_TARGET),
            cooked,
            load,
        ),
        Figure::ratio(
            "cooked_load_vs_parse",
            files,
            Some(COOKED_PARSE_TARGET),
            cooked_again,
            parse,
        ),
    ]
}

/// The bytes the library holds per loaded archetype (its bound: 3 KB), from
/// [`memory::library_bytes`] over the load workload's generated files.
pub fn library_memory_figure(files: usize, rounds: usize, meter: &Meter) -> Figure {
    let fixture = LoadFixture::generate(files);
    let per_round = memory::library_bytes(&fixture, rounds, meter);
    Figure {
        name: "library_bytes_per_archetype".to_string(),
        n: files,
        measured: Measured::Bounded {
            value: median_of(&per_round),
            unit: "bytes_per_archetype",
            bound: LIBRARY_BYTES_TARGET,
            counts: Vec::new(),
            rounds: per_round,
        },
    }
}

/// The bytes a one-field override adds to an entity, from [`memory::override_overhead`],
/// against its bound of 64.
pub fn override_memory_figure(n: usize, rounds: usize, meter: &Meter) -> Figure {
    let overhead = memory::override_overhead(n, rounds, meter);
    let per_round: Vec<f64> = (overhead.rounds.iter())
        .map(|(ours, baseline)| (ours - baseline) as f64 / n.max(1) as f64)
        .collect();
    Figure {
        name: "memory_override_bytes".to_string(),
        n,
        measured: Measured::Bounded {
            value: overhead.per_entity,
            unit: "bytes_per_entity",
            bound: 64.0,
            counts: Vec::new(),
            rounds: per_round,
        },
    }
}

/// The bytes a world loaded from the instance scene holds against the same world spawned, from
/// [`memory::scene_loaded_overhead`], against its bound of 1.25×. Only in the memory
/// benchmark (`cargo bench -p archetool --bench memory`), which counts allocations: loading and
/// spawning reuse what saving the scene freed, which the quick mode's resident set cannot tell
/// from nothing.
pub fn scene_memory_figure(n: usize, rounds: usize, meter: &Meter) -> Figure {
    let overhead = memory::scene_loaded_overhead(n, rounds, meter);
    let ratios: Vec<f64> = (overhead.rounds.iter())
        .map(|(ours, baseline)| *ours as f64 / (*baseline).max(1) as f64)
        .collect();
    Figure {
        name: "memory_scene_loaded_vs_spawned".to_string(),
        n,
        measured: Measured::Bounded {
            value: median_of(&ratios),
            unit: "ratio",
            bound: 1.25,
            counts: Vec::new(),
            rounds: ratios,
        },
    }
}

fn median_of(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The peak memory of loading a scene of `instances` archetype instances
/// ([`scene_peak::InstanceScene`]).
pub fn scene_peak_figure(instances: usize) -> Figure {
    let name = "scene_load_peak_1m_instances";
    let scene = InstanceScene::new(instances);
    match scene.load_peak() {
        Some(LoadPeak { peak, held, input }) => Figure {
            name: name.to_string(),
            n: scene.len(),
            measured: Measured::Bounded {
                value: mb(peak),
                unit: "peak_mb",
                bound: PEAK_TARGET_MB,
                counts: vec![
                    ("after_mb", mb(held) as usize),
                    ("input_mb", mb(input) as usize),
                ],
                rounds: vec![mb(peak)],
            },
        },
        None => Figure::skipped(
            name,
            "no /proc/self/clear_refs and status to measure the peak resident set with (Linux only)",
        ),
    }
}

/// Bytes in MiB.
fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The scene comparisons: (figure, ours, baseline, target), naming workloads of
/// [`scene_workloads`].
const SCENE_FIGURES: [(&str, &str, &str, Option<f64>); 7] = [
    (
        "scene_json_save_vs_hecs_row",
        "save_json",
        "hecs_row_save",
        Some(1.2),
    ),
    (
        "scene_json_save_one_thread_vs_hecs_row",
        "save_json_one_thread",
        "hecs_row_save",
        None,
    ),
    (
        "scene_json_load_vs_hecs_row",
        "load_json",
        "hecs_row_load",
        Some(1.5),
    ),
    (
        "scene_binary_save_vs_hecs_column",
        "save_binary",
        "hecs_column_save",
        None,
    ),
    (
        "scene_binary_load_vs_hecs_column",
        "load_binary",
        "hecs_column_load",
        None,
    ),
    // A scene laid out by another tool (keys sorted, pretty) reads in the same one pass.
    (
        "scene_json_reformatted_load_vs_load",
        "load_json_reformatted",
        "load_json",
        Some(1.3),
    ),
    // Binary at least 3× faster to load than JSON, i.e. a ratio of at most 1/3.
    (
        "scene_binary_load_vs_json_load",
        "load_binary",
        "load_json",
        Some(1.0 / 3.0),
    ),
];

/// A workload whose output is dropped after the clock stops.
type Workload<'a> = Box<dyn Fn() -> Box<dyn std::any::Any> + 'a>;

/// Every scene workload by name.
fn scene_workloads(fixture: &SceneFixture) -> Vec<(&'static str, Workload<'_>)> {
    vec![
        ("save_json", Box::new(|| Box::new(fixture.save_json()) as _)),
        (
            "save_json_one_thread",
            Box::new(|| Box::new(fixture.save_json_one_thread()) as _),
        ),
        (
            "hecs_row_save",
            Box::new(|| Box::new(fixture.hecs_row_save()) as _),
        ),
        (
            "save_binary",
            Box::new(|| Box::new(fixture.save_binary()) as _),
        ),
        (
            "hecs_column_save",
            Box::new(|| Box::new(fixture.hecs_column_save()) as _),
        ),
        ("load_json", Box::new(|| Box::new(fixture.load_json()) as _)),
        (
            "load_json_reformatted",
            Box::new(|| Box::new(fixture.load_json_reformatted()) as _),
        ),
        (
            "hecs_row_load",
            Box::new(|| Box::new(fixture.hecs_row_load()) as _),
        ),
        (
            "load_binary",
            Box::new(|| Box::new(fixture.load_binary()) as _),
        ),
        (
            "hecs_column_load",
            Box::new(|| Box::new(fixture.hecs_column_load()) as _),
        ),
    ]
}

/// The instance-scene comparisons, as [`SCENE_FIGURES`], on the instance scene.
const INSTANCE_FIGURES: [(&str, &str, &str, Option<f64>); 6] = [
    (
        "scene_instances_json_save_vs_hecs_row",
        "save_json",
        "hecs_row_save",
        Some(1.2),
    ),
    (
        "scene_instances_json_load_vs_hecs_row",
        "load_json",
        "hecs_row_load",
        Some(1.5),
    ),
    (
        "scene_instances_json_reformatted_load_vs_load",
        "load_json_reformatted",
        "load_json",
        Some(1.3),
    ),
    (
        "scene_instances_binary_save_vs_json_save",
        "save_binary",
        "save_json",
        Some(0.5),
    ),
    (
        "scene_instances_binary_load_vs_json_load",
        "load_binary",
        "load_json",
        Some(1.0 / 3.0),
    ),
    (
        "scene_instances_binary_load_vs_hecs_column",
        "load_binary",
        "hecs_column_load",
        None,
    ),
];

/// The pristine-scene comparisons, as [`SCENE_FIGURES`], naming the workloads of
/// [`PristineScene`]: loading untouched instances against `spawn_many` of as many.
const PRISTINE_FIGURES: [(&str, &str, &str, Option<f64>); 2] = [
    (
        "scene_pristine_load_vs_spawn_many",
        "load",
        "spawn_many",
        Some(2.0),
    ),
    (
        "scene_pristine_binary_load_vs_spawn_many",
        "load_binary",
        "spawn_many",
        Some(2.0),
    ),
];

/// The scene figures. The saves run in one rotation and the loads in another (ABCD, BCDA, ...),
/// each workload once per round, so the figures share their measurements; building the
/// fixture already ran every workload once, which serves as the warm-up.
fn scene_figures(sizes: &QuickSizes, wanted: &dyn Fn(&str) -> bool, push: &mut dyn FnMut(Figure)) {
    let figures: Vec<_> = SCENE_FIGURES
        .iter()
        .filter(|(name, ..)| wanted(name))
        .collect();
    if !figures.is_empty() {
        let fixture = SceneFixture::new(sizes.scene_entities);
        let workloads = scene_workloads(&fixture);
        rotated_figures(sizes, &figures, workloads, fixture.entities(), push);
    }
    let figures: Vec<_> = INSTANCE_FIGURES
        .iter()
        .filter(|(name, ..)| wanted(name))
        .collect();
    if !figures.is_empty() {
        let fixture = instance_scene(sizes.scene_entities);
        let workloads = scene_workloads(&fixture);
        rotated_figures(sizes, &figures, workloads, fixture.entities(), push);
    }
    let figures: Vec<_> = PRISTINE_FIGURES.iter().filter(|f| wanted(f.0)).collect();
    if !figures.is_empty() {
        let fixture = PristineScene::new(sizes.scene_entities);
        let workloads: Vec<(&str, Workload<'_>)> = vec![
            ("load", Box::new(|| Box::new(fixture.load()) as _)),
            (
                "load_binary",
                Box::new(|| Box::new(fixture.load_binary()) as _),
            ),
            (
                "spawn_many",
                Box::new(|| Box::new(fixture.spawn_many()) as _),
            ),
        ];
        // The fixture loads nothing: one unmeasured round warms both up.
        rotate(
            1,
            &workloads.iter().map(|(_, work)| work).collect::<Vec<_>>(),
        );
        rotated_figures(sizes, &figures, workloads, fixture.entities(), push);
    }
    let commit = "scene_commit_vs_spawn_batch";
    if wanted(commit) {
        push(commit_figure(commit, sizes));
    }
}

/// `scene_commit_vs_spawn_batch`: each round prepares the scene and clones the
/// values off the clock, then times the game thread's part of the commit (reserving handles,
/// then committing the scene whose references were resolved off the clock) and `spawn_batch`,
/// alternating which goes first.
fn commit_figure(name: &str, sizes: &QuickSizes) -> Figure {
    let fixture = CommitFixture::new(sizes.scene_entities);
    let rounds = sizes.scene_rounds * 3;
    let (mut ours, mut baseline) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for side in [round % 2, 1 - round % 2] {
            if side == 0 {
                let prepared = fixture.prepare();
                let (world, reserving, committing) = fixture.commit(prepared);
                ours.push(reserving + committing);
                drop(std::hint::black_box(world));
            } else {
                let values = fixture.values();
                let start = Instant::now();
                let world = std::hint::black_box(CommitFixture::spawn_batch(values));
                baseline.push(start.elapsed());
                drop(world);
            }
        }
    }
    Figure::ratio(
        name,
        fixture.entities(),
        Some(COMMIT_TARGET),
        ours,
        baseline,
    )
}

/// Measures the `workloads` the `figures` name (saves in one rotation, loads in another) and
/// pushes each figure's ratio.
fn rotated_figures(
    sizes: &QuickSizes,
    figures: &[&(&str, &str, &str, Option<f64>)],
    workloads: Vec<(&'static str, Workload<'_>)>,
    entities: usize,
    push: &mut dyn FnMut(Figure),
) {
    let needed = |workload: &str| {
        figures
            .iter()
            .any(|(_, ours, baseline, _)| *ours == workload || *baseline == workload)
    };
    let mut times: Vec<(&str, Vec<Duration>)> = Vec::new();
    let (saves, loads): (Vec<_>, Vec<_>) = workloads
        .into_iter()
        .filter(|(name, _)| needed(name))
        .partition(|(name, _)| name.contains("save"));
    for group in [saves, loads] {
        let work: Vec<&Workload<'_>> = group.iter().map(|(_, work)| work).collect();
        let measured = rotate(sizes.scene_rounds, &work);
        times.extend(group.iter().map(|(name, _)| *name).zip(measured));
    }
    let times_of = |workload: &str| {
        times
            .iter()
            .find(|(name, _)| *name == workload)
            .map(|(_, times)| times.clone())
            .unwrap_or_default()
    };
    for (name, ours, baseline, target) in figures {
        push(Figure::ratio(
            *name,
            entities,
            *target,
            times_of(ours),
            times_of(baseline),
        ));
    }
}

/// Times every workload `rounds` times, rotating which goes first each round (ABC, BCA, CAB,
/// ...), without a warm-up; returns each workload's times in `work`'s order.
fn rotate(rounds: usize, work: &[&Workload<'_>]) -> Vec<Vec<Duration>> {
    let mut times = vec![Vec::with_capacity(rounds); work.len()];
    for round in 0..rounds {
        for k in 0..work.len() {
            let i = (round + k) % work.len();
            let start = Instant::now();
            let output = std::hint::black_box(work[i]());
            times[i].push(start.elapsed());
            drop(output);
        }
    }
    times
}

fn reload_figures(sizes: &QuickSizes, wanted: &dyn Fn(&str) -> bool, push: &mut dyn FnMut(Figure)) {
    for (name, hurt) in [("reload_patch", false), ("reload_patch_mid_fight", true)] {
        if !wanted(name) {
            continue;
        }
        let mut fixture = if hurt {
            PatchFixture::mid_fight(sizes.reload_instances)
        } else {
            PatchFixture::new(sizes.reload_instances)
        };
        let rounds = edit_rounds(sizes.rounds, || fixture.patch());
        let target = Some(RELOAD_PATCH_TARGET);
        push(reload_figure(name, fixture.instances(), &rounds, target));
    }
    if wanted("reload_latency") {
        push(latency_figure(sizes.latency_saves, sizes.latency_instances));
    }
    leaf_edit_figures(sizes, wanted, push);
    if wanted("reload_game_thread_50k") {
        push(game_thread_figure(sizes));
    }
    if wanted("reload_root_edit_1k_descendants") {
        push(root_edit_figure(sizes));
    }
    polling_figures(sizes, wanted, push);
    live_scene_figures(sizes, wanted, push);
    // As many edits as the watcher's latency has saves, in a library as big as the load's.
    if wanted("lsp_diagnostics_after_edit") {
        push(lsp_figure(sizes.load_files, sizes.latency_saves));
    }
    if wanted("lsp_leaf_edit_50k") {
        push(lsp_leaf_figure(sizes.load_files_large, sizes.latency_saves));
    }
    if wanted("lsp_root_typing") {
        push(lsp_typing_figure(sizes.load_files, sizes.typing_edits));
    }
}

/// The leaf-edit figures ([`LeafEditFixture`]): one leaf's edit applied to its 1,000 live
/// instances in a library of 1,000 archetypes and in one of 50,000, and how the two compare;
/// then, in the same libraries, a new file added and removed.
fn leaf_edit_figures(
    sizes: &QuickSizes,
    wanted: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(Figure),
) {
    let edits = [
        "reload_leaf_edit_1k",
        "reload_leaf_edit_50k",
        "reload_leaf_edit_50k_vs_1k",
    ];
    let files = [
        "reload_new_file_1k",
        "reload_new_file_50k",
        "reload_new_file_50k_vs_1k",
    ];
    if !edits.iter().chain(&files).any(|name| wanted(name)) {
        return;
    }
    let (small, large) = sizes.leaf_edit_files;
    let runs = [small, large].map(|files| {
        let mut fixture = LeafEditFixture::new(files, LEAF_EDIT_INSTANCES);
        let edited = edit_rounds(sizes.rounds, || fixture.edit());
        let added = edit_rounds(
            std::env::var("ROUNDS")
                .ok()
                .and_then(|r| r.parse().ok())
                .unwrap_or(sizes.rounds),
            || fixture.add_and_remove(),
        );
        (fixture.archetypes(), edited, added)
    });
    for (group, names) in [edits, files].iter().enumerate() {
        for (size, name) in names[..2].iter().enumerate() {
            if !wanted(name) {
                continue;
            }
            let (archetypes, rounds) = (runs[size].0, rounds_of(&runs[size], group));
            push(match group {
                0 => reload_figure(
                    name,
                    archetypes,
                    rounds,
                    [None, Some(LEAF_EDIT_TARGET)][size],
                ),
                _ => timed_pair_figure(name, archetypes, rounds, None, ["added", "removed"]),
            });
        }
        if wanted(names[2]) {
            push(Figure::ratio(
                names[2],
                runs[1].0,
                Some(LEAF_EDIT_GROWTH_TARGET),
                whole_edits(rounds_of(&runs[1], group)),
                whole_edits(rounds_of(&runs[0], group)),
            ));
        }
    }
}

/// Rounds timed in two parts.
type Rounds = Vec<(Duration, Duration)>;

/// The rounds of `group` (0: the leaf's edits, 1: the new file's) in a leaf-edit run.
fn rounds_of(run: &(usize, Rounds, Rounds), group: usize) -> &Rounds {
    match group {
        0 => &run.1,
        _ => &run.2,
    }
}

/// The game thread's share of a leaf's hot reload in the large leaf-edit library
/// ([`reload::game_thread_share`]): the `apply` calls that carried each save, split into what
/// the reloader timed itself (`reload`: read, rebuild, patch), and, apart from the figure (not
/// in its time, no target), the `idle_polls` before the save settled.
fn game_thread_figure(sizes: &QuickSizes) -> Figure {
    let files = sizes.leaf_edit_files.1;
    let (archetypes, rounds) = reload::game_thread_share(files, LEAF_EDIT_INSTANCES, sizes.rounds);
    let part = |pick: fn(&reload::GameThreadRound) -> Duration| {
        median(&rounds.iter().map(pick).collect::<Vec<Duration>>())
    };
    let carrying: Vec<Duration> = rounds.iter().map(|round| round.carrying).collect();
    Figure {
        name: "reload_game_thread_50k".to_string(),
        n: archetypes,
        measured: Measured::Time {
            median: median(&carrying),
            parts: vec![
                ("reload".to_string(), part(|round| round.reloading)),
                ("idle_polls".to_string(), part(|round| round.idle)),
            ],
            target: Some(GAME_THREAD_TARGET),
            rounds: carrying,
        },
    }
}

/// A root that the ~1,000 archetypes of one of the load workload's ten trees build on is
/// edited, with `reload_instances` live instances of them ([`RootEditFixture`]).
fn root_edit_figure(sizes: &QuickSizes) -> Figure {
    let mut fixture = RootEditFixture::new(sizes.load_files, sizes.reload_instances);
    let rounds = edit_rounds(sizes.rounds, || fixture.edit());
    let name = "reload_root_edit_1k_descendants";
    reload_figure(name, fixture.descendants(), &rounds, Some(ROOT_EDIT_TARGET))
}

/// One unmeasured edit, then `rounds` measured ones, each timed as (`set_source`,
/// `apply_update`).
fn edit_rounds(
    rounds: usize,
    mut edit: impl FnMut() -> (Duration, Duration),
) -> Vec<(Duration, Duration)> {
    edit();
    (0..rounds).map(|_| edit()).collect()
}

/// Each edit's whole time.
fn whole_edits(rounds: &[(Duration, Duration)]) -> Vec<Duration> {
    rounds
        .iter()
        .map(|(resolved, applied)| *resolved + *applied)
        .collect()
}

/// A reload figure: the median whole edit, split into `set_source` and `apply_update`.
fn reload_figure(
    name: &str,
    n: usize,
    rounds: &[(Duration, Duration)],
    target: Option<Duration>,
) -> Figure {
    timed_pair_figure(name, n, rounds, target, ["set_source", "apply_update"])
}

/// A figure of rounds timed in two parts: the median of their sums, and of each part
/// (`labels`).
fn timed_pair_figure(
    name: &str,
    n: usize,
    rounds: &[(Duration, Duration)],
    target: Option<Duration>,
    labels: [&str; 2],
) -> Figure {
    let part = |pick: fn(&(Duration, Duration)) -> Duration| {
        median(&rounds.iter().map(pick).collect::<Vec<Duration>>())
    };
    let whole = whole_edits(rounds);
    Figure {
        name: name.to_string(),
        n,
        measured: Measured::Time {
            median: median(&whole),
            parts: vec![
                (labels[0].to_string(), part(|round| round.0)),
                (labels[1].to_string(), part(|round| round.1)),
            ],
            target,
            rounds: whole,
        },
    }
}

/// The live inspector's figures ([`inspector`](crate::bench::inspector)): an idle `apply`
/// with 10,000 live entities, and a filtered page of 100,000 over loopback.
fn inspector_figures(
    sizes: &QuickSizes,
    wanted: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(Figure),
) {
    let bounded = |name: &str, n: usize, unit, bound, rounds: Vec<f64>| Figure {
        name: name.to_string(),
        n,
        measured: Measured::Bounded {
            value: median_of(&rounds),
            unit,
            bound,
            counts: Vec::new(),
            rounds,
        },
    };
    if wanted("inspector_idle_apply") {
        let n = sizes.inspector_entities.0;
        let mut fixture = InspectorFixture::new(n);
        fixture.idle_apply();
        let rounds = (0..sizes.rounds)
            .map(|_| fixture.idle_apply().as_secs_f64() * 1e6)
            .collect();
        push(bounded(
            "inspector_idle_apply",
            n,
            "us",
            INSPECTOR_IDLE_TARGET_US,
            rounds,
        ));
    }
    if wanted("inspector_entity_page") {
        let n = sizes.inspector_entities.1;
        let mut fixture = InspectorFixture::new(n);
        fixture.entity_page(n);
        let rounds = (0..sizes.rounds)
            .map(|_| fixture.entity_page(n).as_secs_f64() * 1e3)
            .collect();
        push(bounded(
            "inspector_entity_page",
            n,
            "ms",
            INSPECTOR_PAGE_TARGET_MS,
            rounds,
        ));
    }
}

/// The polling watcher's figures ([`reload::polling_watch`]) over the large load workload's
/// tree: its idle cost, and how long an edit takes to apply.
fn polling_figures(
    sizes: &QuickSizes,
    wanted: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(Figure),
) {
    let names = ["watch_poll_idle_50k", "watch_poll_edit_50k"];
    if !names.iter().any(|name| wanted(name)) {
        return;
    }
    let run = reload::polling_watch(sizes.load_files_large, sizes.poll_idle, sizes.latency_saves);
    let run = match run {
        Ok(run) => run,
        Err(error) => {
            for name in names.into_iter().filter(|name| wanted(name)) {
                push(Figure::skipped(name, format!("failed: {error}")));
            }
            return;
        }
    };
    if wanted(names[0]) {
        push(Figure {
            name: names[0].to_string(),
            n: sizes.load_files_large,
            measured: Measured::Bounded {
                value: run.idle_cpu_percent,
                unit: "cpu_percent",
                bound: POLL_IDLE_TARGET_PERCENT,
                counts: vec![("idle_ms", sizes.poll_idle.as_millis() as usize)],
                rounds: vec![run.idle_cpu_percent],
            },
        });
    }
    if wanted(names[1]) {
        push(latency_of(names[1], Ok(run.samples), None));
    }
}

/// The live-scene figures ([`live_scene::edit_latency`]): one entity's edit in a level of
/// 10,000 entities, the same in one of 100,000, and how the two compare.
fn live_scene_figures(
    sizes: &QuickSizes,
    wanted: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(Figure),
) {
    let names = [
        "scene_live_edit_one_entity",
        "scene_live_edit_one_entity_100k",
        "scene_live_edit_100k_vs_10k",
        "scene_live_write_100k_vs_10k",
    ];
    if !names.iter().any(|name| wanted(name)) {
        return;
    }
    let runs = [
        live_scene::edit_latency(sizes.live_entities.0, sizes.live_saves.0),
        live_scene::edit_latency(sizes.live_entities.1, sizes.live_saves.1),
    ];
    let targets = [Some(LIVE_SCENE_TARGET), None];
    for ((name, run), target) in names.iter().zip(&runs).zip(targets) {
        if !wanted(name) {
            continue;
        }
        push(match run {
            Ok((samples, _)) => Figure {
                name: name.to_string(),
                n: samples.len(),
                measured: Measured::Latency {
                    p50: percentile(samples, 50.0),
                    p99: percentile(samples, 99.0),
                    max: samples.iter().max().copied().unwrap_or_default(),
                    target,
                },
            },
            Err(error) => Figure::skipped(*name, format!("failed: {error}")),
        });
    }
    // The whole edit, then writing it into the world alone (the rest is reading and comparing
    // the files).
    let parts: [fn(&LiveRun) -> &Vec<Duration>; 2] = [|run| &run.0, |run| &run.1];
    for (name, part) in names[2..].iter().zip(parts) {
        if !wanted(name) {
            continue;
        }
        push(match &runs {
            [Ok(small), Ok(large)] => Figure {
                name: name.to_string(),
                n: sizes.live_entities.1,
                measured: Measured::Ratio {
                    ours: median(part(large)),
                    baseline: median(part(small)),
                    target: Some(LIVE_SCENE_GROWTH_TARGET),
                    rounds: (part(large).iter().copied())
                        .zip(part(small).iter().copied())
                        .collect(),
                },
            },
            _ => Figure::skipped(*name, "failed: a level did not apply its edits".to_string()),
        });
    }
}

/// A live-scene latency run: each save's latency, and the part of it spent writing.
type LiveRun = (Vec<Duration>, Vec<Duration>);

/// The language server's figure from [`lsp::diagnostics_after_edit`](crate::bench::lsp).
pub fn lsp_figure(files: usize, edits: usize) -> Figure {
    let samples = crate::bench::lsp::diagnostics_after_edit(files, edits);
    latency_of("lsp_diagnostics_after_edit", samples, Some(LSP_TARGET))
}

/// The language server's leaf-edit figure from
/// [`lsp::leaf_diagnostics_after_edit`](crate::bench::lsp).
pub fn lsp_leaf_figure(files: usize, edits: usize) -> Figure {
    let samples = crate::bench::lsp::leaf_diagnostics_after_edit(files, edits);
    let target = (LSP_LEAF_TARGET, LSP_LEAF_TARGET);
    latency_of("lsp_leaf_edit_50k", samples, Some(target))
}

/// A latency figure of `samples` (or skipped, saying why there are none) against the promised
/// (p50, p99), if any.
fn latency_of(
    name: &str,
    samples: Result<Vec<Duration>, String>,
    target: Option<(Duration, Duration)>,
) -> Figure {
    match samples {
        Ok(samples) => Figure {
            name: name.to_string(),
            n: samples.len(),
            measured: Measured::Latency {
                p50: percentile(&samples, 50.0),
                p99: percentile(&samples, 99.0),
                max: samples.iter().max().copied().unwrap_or_default(),
                target,
            },
        },
        Err(error) => Figure::skipped(name, format!("failed: {error}")),
    }
}

/// The language server's typing figure from [`lsp::root_typing`](crate::bench::lsp): edits
/// 50 ms apart in a root buffer, the last one's diagnostics measured from its `didChange`.
pub fn lsp_typing_figure(files: usize, edits: usize) -> Figure {
    let name = "lsp_root_typing";
    match crate::bench::lsp::root_typing(files, edits, Duration::from_millis(50)) {
        Ok((last, published)) => Figure {
            name: name.to_string(),
            n: edits,
            measured: Measured::Bounded {
                value: last.as_secs_f64() * 1e3,
                unit: "last_ms",
                bound: LSP_TYPING_TARGET_MS,
                counts: vec![("published", published)],
                rounds: vec![last.as_secs_f64() * 1e3],
            },
        },
        Err(error) => Figure::skipped(name, format!("failed: {error}")),
    }
}

/// The watcher latency figure from [`reload::watch_latency`].
pub fn latency_figure(saves: usize, instances: usize) -> Figure {
    match reload::watch_latency(saves, instances) {
        Ok(run) => Figure {
            name: "reload_latency".to_string(),
            n: run.samples.len(),
            measured: Measured::Latency {
                p50: percentile(&run.samples, 50.0),
                p99: percentile(&run.samples, 99.0),
                max: run.samples.iter().max().copied().unwrap_or_default(),
                target: Some(RELOAD_LATENCY_TARGET),
            },
        },
        Err(error) => Figure::skipped("reload_latency", format!("failed: {error}")),
    }
}

fn cdda_figures(sizes: &QuickSizes, wanted: &dyn Fn(&str) -> bool, push: &mut dyn FnMut(Figure)) {
    let names = ["cdda_load_vs_parse", "cdda_load"];
    if !names.iter().any(|name| wanted(name)) {
        return;
    }
    let fixture = cdda::data_dir().and_then(|dir| CddaFixture::convert(&dir, sizes.cdda_limit));
    let fixture = match fixture {
        Ok(fixture) => fixture,
        Err(reason) => {
            for name in names.into_iter().filter(|name| wanted(name)) {
                push(Figure::skipped(name, reason.clone()));
            }
            return;
        }
    };
    let n = fixture.archetypes();
    let (ours, baseline) = alternate(
        sizes.slow_rounds,
        || fixture.load(),
        || fixture.read_and_parse(),
    );
    if wanted("cdda_load_vs_parse") {
        push(Figure::ratio(
            "cdda_load_vs_parse",
            n,
            None,
            ours.clone(),
            baseline,
        ));
    }
    if wanted("cdda_load") {
        push(Figure {
            name: "cdda_load".to_string(),
            n,
            measured: Measured::Load {
                median: median(&ours),
                item: "archetype",
                counts: vec![
                    ("errors", fixture.errors().len()),
                    ("warnings", fixture.warnings().len()),
                    ("mismatches", fixture.mismatches().len()),
                    ("modifiers", fixture.modifiers()),
                    ("dropped_modifiers", fixture.dropped().len()),
                    ("pre_resolved", fixture.pre_resolved().len()),
                ],
                rounds: ours,
            },
        });
    }
}

/// One spawn workload of [`SpawnFixture`].
#[derive(Clone, Copy)]
enum Spawn {
    ByName,
    Static,
    StaticWithIds,
    Many,
    Batch,
    WithOverrides,
    WithBundle,
    Varied,
    VariedInPlace,
    VariedDecoded,
}

/// A spawn comparison: ours, its baseline, the target ratio.
struct SpawnFigure {
    name: &'static str,
    ours: Spawn,
    baseline: Spawn,
    target: Option<f64>,
    /// Measured for the plain-old-data goblin too (suffixed `_pod`).
    also_pod: bool,
    /// Every round's world stays alive until the figure is measured, so each round takes fresh
    /// pages from the system, as a fresh process does; otherwise each world is dropped after
    /// its round and the next reuses its memory (a warmed allocator).
    fresh: bool,
}

/// The spawn comparisons, measured for the realistic goblin and most of them for the
/// plain-old-data one. The two `with_ids` figures split the first one: the
/// cost of the library's `StableId` and `ArchetypeInstance` on their own, and the cost of
/// spawning by name over a static tuple that has them too.
const SPAWN_FIGURES: [SpawnFigure; 10] = [
    SpawnFigure {
        name: "spawn_by_name_vs_static",
        ours: Spawn::ByName,
        baseline: Spawn::Static,
        target: Some(1.3),
        also_pod: true,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_many_vs_spawn_batch",
        ours: Spawn::Many,
        baseline: Spawn::Batch,
        target: Some(1.3),
        also_pod: true,
        fresh: false,
    },
    SpawnFigure {
        name: "static_with_ids_vs_static",
        ours: Spawn::StaticWithIds,
        baseline: Spawn::Static,
        target: None,
        also_pod: true,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_by_name_vs_static_with_ids",
        ours: Spawn::ByName,
        baseline: Spawn::StaticWithIds,
        target: Some(1.15),
        also_pod: true,
        fresh: true,
    },
    SpawnFigure {
        name: "spawn_by_name_vs_static_with_ids_warm",
        ours: Spawn::ByName,
        baseline: Spawn::StaticWithIds,
        target: Some(1.15),
        also_pod: false,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_with_vs_spawn_by_name",
        ours: Spawn::WithOverrides,
        baseline: Spawn::ByName,
        target: None,
        also_pod: false,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_with_bundle_vs_spawn_by_name",
        ours: Spawn::WithBundle,
        baseline: Spawn::ByName,
        target: Some(1.15),
        also_pod: false,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_varied_vs_spawn_by_name",
        ours: Spawn::Varied,
        baseline: Spawn::ByName,
        target: Some(1.3),
        also_pod: false,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_varied_in_place_vs_spawn_by_name",
        ours: Spawn::VariedInPlace,
        baseline: Spawn::ByName,
        target: None,
        also_pod: false,
        fresh: false,
    },
    SpawnFigure {
        name: "spawn_varied_decoded_vs_spawn_by_name",
        ours: Spawn::VariedDecoded,
        baseline: Spawn::ByName,
        target: None,
        also_pod: false,
        fresh: false,
    },
];

fn spawn_figures<B: SixComponents>(
    fixture: &SpawnFixture<B>,
    list: Vec<(String, &SpawnFigure)>,
    sizes: &QuickSizes,
    push: &mut dyn FnMut(Figure),
) {
    let n = sizes.spawn;
    let run = |which: Spawn| {
        move || {
            let mut world = World::new();
            match which {
                Spawn::ByName => fixture.spawn_by_name(&mut world, n),
                Spawn::Static => fixture.spawn_static(&mut world, n),
                Spawn::StaticWithIds => fixture.spawn_static_with_library_components(&mut world, n),
                Spawn::Many => drop(fixture.spawn_many(&mut world, n)),
                Spawn::Batch => drop(fixture.spawn_batch(&mut world, n)),
                Spawn::WithOverrides => fixture.spawn_with_overrides(&mut world, n),
                Spawn::WithBundle => fixture.spawn_with_bundle(&mut world, n),
                Spawn::Varied => fixture.spawn_varied(&mut world, n, Varied::Templates),
                Spawn::VariedInPlace => fixture.spawn_varied(&mut world, n, Varied::InPlace),
                Spawn::VariedDecoded => fixture.spawn_varied(&mut world, n, Varied::Decoded),
            }
            world
        }
    };
    for (name, spawn) in list {
        let rounds = match spawn.ours {
            Spawn::WithOverrides | Spawn::VariedDecoded => sizes.slow_rounds,
            _ => sizes.rounds,
        };
        let (ours, baseline) = if spawn.fresh {
            let kept = std::cell::RefCell::new(Vec::with_capacity(2 * rounds + 2));
            let keep = |which: Spawn| {
                let run = run(which);
                let kept = &kept;
                move || kept.borrow_mut().push(run())
            };
            alternate(rounds, keep(spawn.ours), keep(spawn.baseline))
        } else {
            alternate(rounds, run(spawn.ours), run(spawn.baseline))
        };
        push(Figure::ratio(name, n, spawn.target, ours, baseline));
    }
}

/// Times `ours` and `baseline` `rounds` times each, alternating which goes first, after one
/// unmeasured round of each. What they return is dropped after the clock stops.
fn alternate<A, B>(
    rounds: usize,
    ours: impl Fn() -> A,
    baseline: impl Fn() -> B,
) -> (Vec<Duration>, Vec<Duration>) {
    fn time<T>(work: &impl Fn() -> T) -> Duration {
        let start = Instant::now();
        let output = std::hint::black_box(work());
        let elapsed = start.elapsed();
        drop(output);
        elapsed
    }
    time(&ours);
    time(&baseline);
    let mut times = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        if round % 2 == 0 {
            times.0.push(time(&ours));
            times.1.push(time(&baseline));
        } else {
            times.1.push(time(&baseline));
            times.0.push(time(&ours));
        }
    }
    times
}

/// The worst cases of reporting problems, each against its bound: placing 40,000
/// errors in a 760 KB file, 200,000 in a 2.3 MB one-line file (loading it, and `fmt --check`),
/// and the bytes `validate` prints for 2,000 errors on one 22 KB line (without a window around
/// the place, each snippet would repeat the whole line: 60 MB in all).
fn diagnostics_figures(
    sizes: &QuickSizes,
    wanted: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(Figure),
) {
    if wanted("diagnostics_40k_errors_ms") {
        let fixture = FieldsFixture::new(sizes.error_fields, Layout::Pretty);
        let load = || assert_eq!(fixture.load(), fixture.fields(), "bench setup: errors");
        push(timed(
            "diagnostics_40k_errors_ms",
            &fixture,
            200.0,
            sizes,
            &load,
        ));
    }
    if wanted("diagnostics_200k_keys_ms") || wanted("diagnostics_fmt_check_200k_keys_ms") {
        let fixture = FieldsFixture::new(sizes.wide_fields, Layout::Minified);
        if wanted("diagnostics_200k_keys_ms") {
            let load = || assert_eq!(fixture.load(), fixture.fields(), "bench setup: errors");
            push(timed(
                "diagnostics_200k_keys_ms",
                &fixture,
                1000.0,
                sizes,
                &load,
            ));
        }
        if wanted("diagnostics_fmt_check_200k_keys_ms") {
            // The file is on one line, so not formatted: `--check` lists it.
            let check = || {
                assert!(
                    !fixture.run(&["fmt", "--check"]).is_empty(),
                    "bench setup: fmt"
                )
            };
            push(timed(
                "diagnostics_fmt_check_200k_keys_ms",
                &fixture,
                2000.0,
                sizes,
                &check,
            ));
        }
    }
    if wanted("diagnostics_minified_2k_errors_bytes") {
        let fixture = FieldsFixture::new(sizes.minified_fields, Layout::Minified);
        let printed = fixture.run(&["validate"]).len() as f64;
        // A header, the window of the line with its underline, and a blank line: at most 512
        // bytes per error, whatever the length of the line.
        let bound = (512 * fixture.fields()) as f64;
        let name = "diagnostics_minified_2k_errors_bytes";
        push(bounded(
            name,
            &fixture,
            ("bytes", printed),
            bound,
            vec![printed],
        ));
    }
}

/// A time figure: `work` on `fixture` run once unmeasured, then timed in the slow rounds.
fn timed(
    name: &str,
    fixture: &FieldsFixture,
    bound_ms: f64,
    sizes: &QuickSizes,
    work: &dyn Fn(),
) -> Figure {
    work();
    let rounds: Vec<Duration> = (0..sizes.slow_rounds)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    let ms = |time: &Duration| time.as_secs_f64() * 1e3;
    let value = ("ms", ms(&median(&rounds)));
    bounded(
        name,
        fixture,
        value,
        bound_ms,
        rounds.iter().map(ms).collect(),
    )
}

/// A [`Measured::Bounded`] figure of `fixture`: `value` is (unit, median).
fn bounded(
    name: &str,
    fixture: &FieldsFixture,
    (unit, value): (&'static str, f64),
    bound: f64,
    rounds: Vec<f64>,
) -> Figure {
    Figure {
        name: name.to_string(),
        n: fixture.fields(),
        measured: Measured::Bounded {
            value,
            unit,
            bound,
            counts: vec![("file_bytes", fixture.bytes())],
            rounds,
        },
    }
}
