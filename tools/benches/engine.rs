//! Criterion benchmarks: one group per comparison, `ours` and `baseline` in the same run.
//!
//! ```text
//! cargo bench -p archetool --bench engine
//! cargo bench -p archetool --bench engine -- spawn_many   # one group
//! ```
//!
//! The workloads are `archetool::bench`'s, shared with the quick mode. Each spawn run gets a
//! fresh `World`, dropped outside the timed part.

use std::time::Duration;

use archetool::bench::SixComponents;
use archetool::bench::{LoadFixture, SpawnFixture, LOAD_FILES, SPAWN_COUNT};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hecs::World;

fn spawn(c: &mut Criterion) {
    let goblin = SpawnFixture::goblin();
    spawn_groups(c, &goblin, "");
    spawn_with(c, &goblin);
    spawn_groups(c, &SpawnFixture::pod_goblin(), "_pod");
}

fn spawn_groups<B: SixComponents>(c: &mut Criterion, fixture: &SpawnFixture<B>, suffix: &str) {
    let n = SPAWN_COUNT;
    let mut group = c.benchmark_group(format!("spawn_by_name_vs_static{suffix}"));
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("ours", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                fixture.spawn_by_name(&mut world, n);
                world
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("baseline", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                fixture.spawn_static(&mut world, n);
                world
            },
            BatchSize::PerIteration,
        )
    });
    // Not a baseline for the target: the same static tuple plus the library's StableId and
    // ArchetypeInstance, which splits the ratio into their cost and the cost of spawning by name.
    group.bench_function("static_with_ids", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                fixture.spawn_static_with_library_components(&mut world, n);
                world
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();

    let mut group = c.benchmark_group(format!("spawn_many_vs_spawn_batch{suffix}"));
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("ours", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                let entities = fixture.spawn_many(&mut world, n);
                (world, entities)
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("baseline", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                let entities = fixture.spawn_batch(&mut world, n);
                (world, entities)
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn spawn_with<B: SixComponents>(c: &mut Criterion, fixture: &SpawnFixture<B>) {
    let n = SPAWN_COUNT;
    let mut group = c.benchmark_group("spawn_with_vs_spawn_by_name");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.bench_function("ours", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                fixture.spawn_with_overrides(&mut world, n);
                world
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("baseline", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                fixture.spawn_by_name(&mut world, n);
                world
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn load(c: &mut Criterion) {
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = spawn, load
}
criterion_main!(benches);
