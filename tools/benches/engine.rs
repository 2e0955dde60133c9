//! Criterion benchmarks: one group per comparison, `ours` and `baseline` in the same run.
//!
//! ```text
//! cargo bench -p archetool --bench engine
//! cargo bench -p archetool --bench engine -- spawn_many   # one group
//! ```
//!
//! The workloads are `archetool::bench`'s, shared with the quick mode. Each spawn run gets a
//! fresh `World`, dropped outside the timed part; so are the worlds the scene loads make.
//!
//! The watcher latency does not fit criterion's model (one sample is a file write followed by
//! a wait for the watcher, dominated by the debounce): it is measured once, over 100 saves,
//! and printed as the quick mode prints it (`reload_latency p50_ms=.. p99_ms=..`); so is the
//! language server's (`lsp_diagnostics_after_edit`, over 100 edits). The memory
//! figure has its own binary (`--bench memory`), with a counting allocator.

use std::time::{Duration, Instant};

use archetool::bench::cdda::{self, CddaFixture};
use archetool::bench::reload::PatchFixture;
use archetool::bench::scene::SceneFixture;
use archetool::bench::scene_instances::{instance_scene, PristineScene};
use archetool::bench::{
    latency_figure, lsp_figure, LoadFixture, SpawnFixture, LOAD_FILES, RELOAD_INSTANCES,
    SCENE_ENTITIES, SPAWN_COUNT,
};
use archetool::bench::{SixComponents, Varied};
use criterion::{criterion_group, criterion_main, BatchSize, Bencher, Criterion, Throughput};
use hecs::World;

fn spawn(c: &mut Criterion) {
    let groups = [
        "spawn_by_name_vs_static",
        "spawn_many_vs_spawn_batch",
        "spawn_with_vs_spawn_by_name",
        "spawn_with_bundle_vs_spawn_by_name",
        "spawn_varied_vs_spawn_by_name",
        "spawn_varied_in_place_vs_spawn_by_name",
        "spawn_varied_decoded_vs_spawn_by_name",
        "spawn_by_name_vs_static_pod",
        "spawn_many_vs_spawn_batch_pod",
    ];
    if !groups.iter().any(|group| selected(group)) {
        return;
    }
    let goblin = SpawnFixture::goblin();
    spawn_groups(c, &goblin, "");
    spawn_with(c, &goblin);
    spawn_with_bundle(c, &goblin);
    spawn_varied(c, &goblin);
    spawn_groups(c, &SpawnFixture::pod_goblin(), "_pod");
}

/// Times `work` on a new, empty world each iteration; the world and what `work` returns are
/// dropped outside the timed part.
fn in_fresh_world<R>(b: &mut Bencher<'_>, mut work: impl FnMut(&mut World) -> R) {
    b.iter_batched(
        World::new,
        |mut world| {
            let output = work(&mut world);
            (world, output)
        },
        BatchSize::PerIteration,
    );
}

fn spawn_groups<B: SixComponents>(c: &mut Criterion, fixture: &SpawnFixture<B>, suffix: &str) {
    let n = SPAWN_COUNT;
    let mut group = c.benchmark_group(format!("spawn_by_name_vs_static{suffix}"));
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("ours", |b| {
        in_fresh_world(b, |world| fixture.spawn_by_name(world, n))
    });
    group.bench_function("baseline", |b| {
        in_fresh_world(b, |world| fixture.spawn_static(world, n))
    });
    // Not a baseline for the target: the same static tuple plus the library's StableId and
    // ArchetypeInstance, which splits the ratio into their cost and the cost of spawning by name.
    group.bench_function("static_with_ids", |b| {
        in_fresh_world(b, |world| {
            fixture.spawn_static_with_library_components(world, n)
        })
    });
    group.finish();

    let mut group = c.benchmark_group(format!("spawn_many_vs_spawn_batch{suffix}"));
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("ours", |b| {
        in_fresh_world(b, |world| fixture.spawn_many(world, n))
    });
    group.bench_function("baseline", |b| {
        in_fresh_world(b, |world| fixture.spawn_batch(world, n))
    });
    group.finish();
}

fn spawn_with<B: SixComponents>(c: &mut Criterion, fixture: &SpawnFixture<B>) {
    let n = SPAWN_COUNT;
    let mut group = c.benchmark_group("spawn_with_vs_spawn_by_name");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.bench_function("ours", |b| {
        in_fresh_world(b, |world| fixture.spawn_with_overrides(world, n))
    });
    group.bench_function("baseline", |b| {
        in_fresh_world(b, |world| fixture.spawn_by_name(world, n))
    });
    group.finish();
}

fn spawn_with_bundle<B: SixComponents>(c: &mut Criterion, fixture: &SpawnFixture<B>) {
    let n = SPAWN_COUNT;
    let mut group = c.benchmark_group("spawn_with_bundle_vs_spawn_by_name");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("ours", |b| {
        in_fresh_world(b, |world| fixture.spawn_with_bundle(world, n))
    });
    group.bench_function("baseline", |b| {
        in_fresh_world(b, |world| fixture.spawn_by_name(world, n))
    });
    group.finish();
}

fn spawn_varied<B: SixComponents>(c: &mut Criterion, fixture: &SpawnFixture<B>) {
    let n = SPAWN_COUNT;
    for (name, which) in [
        ("spawn_varied_vs_spawn_by_name", Varied::Templates),
        ("spawn_varied_in_place_vs_spawn_by_name", Varied::InPlace),
        ("spawn_varied_decoded_vs_spawn_by_name", Varied::Decoded),
    ] {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        group.bench_function("ours", |b| {
            in_fresh_world(b, |world| fixture.spawn_varied(world, n, which))
        });
        group.bench_function("baseline", |b| {
            in_fresh_world(b, |world| fixture.spawn_by_name(world, n))
        });
        group.finish();
    }
}

fn load(c: &mut Criterion) {
    if !selected("load_vs_parse") {
        return;
    }
    let fixture = LoadFixture::generate(LOAD_FILES);
    let mut group = c.benchmark_group("load_vs_parse");
    group.throughput(Throughput::Bytes(fixture.bytes()));
    group.sample_size(10);
    group.bench_function("ours", |b| {
        b.iter_batched(|| (), |()| fixture.load(), BatchSize::PerIteration)
    });
    group.bench_function("baseline", |b| {
        b.iter_batched(
            || (),
            |()| fixture.read_and_parse(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// One side of a scene comparison; its output is dropped outside the timed part.
type SceneRun = Run<SceneFixture>;

/// One workload of a fixture, boxed so its output drops after timing.
type Run<F> = fn(&F) -> Box<dyn std::any::Any>;

/// One criterion group per comparison: ours and the baseline on `fixture`, `entities` each.
fn compare<F>(
    c: &mut Criterion,
    fixture: &F,
    entities: usize,
    comparisons: &[(&str, Run<F>, Run<F>)],
) {
    for (name, ours, baseline) in comparisons {
        let mut group = c.benchmark_group(*name);
        group.throughput(Throughput::Elements(entities as u64));
        group.sample_size(10);
        group.bench_function("ours", |b| b.iter_with_large_drop(|| ours(fixture)));
        group.bench_function("baseline", |b| b.iter_with_large_drop(|| baseline(fixture)));
        group.finish();
    }
}

/// The scene groups: name, ours, baseline.
const SCENE_COMPARISONS: [(&str, SceneRun, SceneRun); 6] = [
    (
        "scene_json_save_vs_hecs_row",
        |f| Box::new(f.save_json()),
        |f| Box::new(f.hecs_row_save()),
    ),
    (
        "scene_json_save_one_thread_vs_hecs_row",
        |f| Box::new(f.save_json_one_thread()),
        |f| Box::new(f.hecs_row_save()),
    ),
    (
        "scene_json_load_vs_hecs_row",
        |f| Box::new(f.load_json()),
        |f| Box::new(f.hecs_row_load()),
    ),
    (
        "scene_binary_save_vs_hecs_column",
        |f| Box::new(f.save_binary()),
        |f| Box::new(f.hecs_column_save()),
    ),
    (
        "scene_binary_load_vs_hecs_column",
        |f| Box::new(f.load_binary()),
        |f| Box::new(f.hecs_column_load()),
    ),
    (
        "scene_binary_load_vs_json_load",
        |f| Box::new(f.load_binary()),
        |f| Box::new(f.load_json()),
    ),
];

fn scene(c: &mut Criterion) {
    if !SCENE_COMPARISONS.iter().any(|(group, ..)| selected(group)) {
        return;
    }
    let fixture = SceneFixture::new(SCENE_ENTITIES);
    let (json, binary, hecs_json, hecs_binary) = fixture.sizes();
    println!(
        "scene sizes: json {json} B, hecs row json {hecs_json} B, binary {binary} B, hecs column postcard {hecs_binary} B"
    );
    compare(c, &fixture, fixture.entities(), &SCENE_COMPARISONS);
}

/// The instance-scene comparisons.
const INSTANCE_COMPARISONS: [(&str, SceneRun, SceneRun); 5] = [
    (
        "scene_instances_json_save_vs_hecs_row",
        |f| Box::new(f.save_json()),
        |f| Box::new(f.hecs_row_save()),
    ),
    (
        "scene_instances_json_load_vs_hecs_row",
        |f| Box::new(f.load_json()),
        |f| Box::new(f.hecs_row_load()),
    ),
    (
        "scene_instances_binary_save_vs_json_save",
        |f| Box::new(f.save_binary()),
        |f| Box::new(f.save_json()),
    ),
    (
        "scene_instances_binary_load_vs_json_load",
        |f| Box::new(f.load_binary()),
        |f| Box::new(f.load_json()),
    ),
    (
        "scene_instances_binary_load_vs_hecs_column",
        |f| Box::new(f.load_binary()),
        |f| Box::new(f.hecs_column_load()),
    ),
];

fn scene_instances(c: &mut Criterion) {
    if INSTANCE_COMPARISONS
        .iter()
        .any(|(group, ..)| selected(group))
    {
        let fixture = instance_scene(SCENE_ENTITIES);
        compare(c, &fixture, fixture.entities(), &INSTANCE_COMPARISONS);
    }
    let pristine: [(&str, Run<PristineScene>, Run<PristineScene>); 2] = [
        (
            "scene_pristine_load_vs_spawn_many",
            |f| Box::new(f.load()),
            |f| Box::new(f.spawn_many()),
        ),
        (
            "scene_pristine_binary_load_vs_spawn_many",
            |f| Box::new(f.load_binary()),
            |f| Box::new(f.spawn_many()),
        ),
    ];
    if pristine.iter().any(|(group, ..)| selected(group)) {
        let fixture = PristineScene::new(SCENE_ENTITIES);
        compare(c, &fixture, fixture.entities(), &pristine);
    }
}

fn reload(c: &mut Criterion) {
    if selected("reload_patch") {
        reload_patch(c);
    }
    if selected("reload_latency") {
        let start = Instant::now();
        let figure = latency_figure(100, 1_000);
        println!(
            "{figure}\n  (measured once over 100 saves outside criterion, in {:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
}

fn lsp(_: &mut Criterion) {
    if selected("lsp_diagnostics_after_edit") {
        let start = Instant::now();
        let figure = lsp_figure(LOAD_FILES, 100);
        println!(
            "{figure}\n  (measured once over 100 edits outside criterion, in {:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
}

fn reload_patch(c: &mut Criterion) {
    let mut fixture = PatchFixture::new(RELOAD_INSTANCES);
    let mut group = c.benchmark_group("reload_patch");
    group.throughput(Throughput::Elements(fixture.instances() as u64));
    group.sample_size(20);
    // set_source + apply_update, as HotReloader::apply runs them (less the file read).
    group.bench_function("ours", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (resolve, apply) = fixture.patch();
                    resolve + apply
                })
                .sum()
        })
    });
    group.bench_function("apply_update", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| fixture.patch().1).sum())
    });
    // The same edit on goblins that have all taken damage: none equals the archetype's
    // `Health`, so every one is patched field by field.
    let mut hurt = PatchFixture::mid_fight(RELOAD_INSTANCES);
    group.bench_function("mid_fight", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let (resolve, apply) = hurt.patch();
                    resolve + apply
                })
                .sum()
        })
    });
    // Not a baseline for the target: the same field written by a hand-written query, the
    // floor for any patch.
    group.bench_function("by_hand", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| fixture.write_by_hand()).sum())
    });
    group.finish();
}

fn real_data(c: &mut Criterion) {
    if !selected("cdda_load_vs_parse") {
        return;
    }
    let fixture = match cdda::data_dir().and_then(|dir| CddaFixture::convert(&dir, None)) {
        Ok(fixture) => fixture,
        Err(error) => {
            println!("cdda_load skipped ({error})");
            return;
        }
    };
    println!(
        "cdda: {} archetypes ({} concrete), {} load errors, {} warnings, {} mismatches against the CDDA resolution, {} modifiers as operators, {} dropped",
        fixture.archetypes(),
        fixture.concrete(),
        fixture.errors().len(),
        fixture.warnings().len(),
        fixture.mismatches().len(),
        fixture.modifiers(),
        fixture.dropped().len()
    );
    let mut group = c.benchmark_group("cdda_load_vs_parse");
    group.throughput(Throughput::Elements(fixture.archetypes() as u64));
    group.sample_size(20);
    group.bench_function("ours", |b| b.iter_with_large_drop(|| fixture.load()));
    group.bench_function("baseline", |b| {
        b.iter_with_large_drop(|| fixture.read_and_parse())
    });
    group.finish();
}

/// Whether criterion's command-line filter (the first argument that is not an option) may
/// select the group `name` (it contains the filter, or the filter starts with it): fixtures
/// are only built, and the measurements made outside criterion only run, when it does.
fn selected(name: &str) -> bool {
    const WITH_VALUE: [&str; 8] = [
        "--save-baseline",
        "--baseline",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--profile-time",
        "--color",
    ];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return name.contains(&arg) || arg.starts_with(name);
        }
    }
    true
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = spawn, load, scene, scene_instances, reload, lsp, real_data
}
criterion_main!(benches);
