//! The quick mode: every comparison run briefly, ours and the baseline alternating, one
//! [`Figure`] per comparison.

use std::fmt;
use std::time::{Duration, Instant};

use hecs::World;

use crate::bench::load::LoadFixture;
use crate::bench::spawn::{SixComponents, SpawnFixture};

/// Entities per spawn workload, as issue 2 states the targets.
pub const SPAWN_COUNT: usize = 100_000;
/// Archetype files in the load workload.
pub const LOAD_FILES: usize = 10_000;

/// Measured rounds per spawn comparison (after one unmeasured warm-up round).
const SPAWN_ROUNDS: usize = 11;
/// Measured rounds of the slower comparisons.
const SLOW_ROUNDS: usize = 5;

/// One comparison of ours against its baseline: medians over alternating rounds.
///
/// Displays as one stable, machine-readable line:
/// `spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// What is compared, e.g. `spawn_by_name_vs_static`.
    pub name: String,
    /// Median time of ours.
    pub ours: Duration,
    /// Median time of the baseline.
    pub baseline: Duration,
    /// Work items per run (entities spawned, files loaded).
    pub n: usize,
    /// The highest ratio the project promises, if it promises one.
    pub target: Option<f64>,
    /// Every measured round: (ours, baseline), in the order they ran.
    pub rounds: Vec<(Duration, Duration)>,
}

impl Figure {
    /// `ours / baseline` of the medians.
    pub fn ratio(&self) -> f64 {
        self.ours.as_secs_f64() / self.baseline.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// Whether the ratio is within the target (`true` when there is no target).
    pub fn meets_target(&self) -> bool {
        self.target.is_none_or(|target| self.ratio() <= target)
    }

    /// The lowest and highest per-round ratio: how noisy the run was.
    pub fn ratio_range(&self) -> (f64, f64) {
        let ratios = self
            .rounds
            .iter()
            .map(|(ours, baseline)| ours.as_secs_f64() / baseline.as_secs_f64());
        ratios.fold((f64::INFINITY, 0.0), |(low, high), r| {
            (low.min(r), high.max(r))
        })
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ratio={:.2} (ours {:.2} ms, baseline {:.2} ms, n={})",
            self.name,
            self.ratio(),
            self.ours.as_secs_f64() * 1e3,
            self.baseline.as_secs_f64() * 1e3,
            self.n
        )
    }
}

/// Runs every comparison whose name contains `filter` (all of them for `None`) briefly and
/// returns one [`Figure`] each, in a fixed order. Takes 10–15 seconds in all on a busy
/// two-core machine.
///
/// Ours and the baseline alternate within each comparison (AB BA AB ..., after a warm-up
/// round), so machine noise affects both; the figure holds the medians.
///
/// # Panics
/// If a workload cannot be set up (temporary files cannot be written) or fails.
pub fn run_quick(filter: Option<&str>) -> Vec<Figure> {
    let wanted = |name: &str| filter.is_none_or(|filter| name.contains(filter));
    let mut figures = Vec::new();

    let named: Vec<_> = SPAWN_FIGURES
        .iter()
        .map(|f| (f.name.to_string(), f))
        .collect();
    let pod: Vec<_> = SPAWN_FIGURES
        .iter()
        .filter(|f| f.also_pod)
        .map(|f| (format!("{}_pod", f.name), f))
        .collect();
    for (pod, list) in [(false, named), (true, pod)] {
        let list: Vec<_> = list.into_iter().filter(|(name, _)| wanted(name)).collect();
        if list.is_empty() {
            continue;
        }
        if pod {
            spawn_figures(&SpawnFixture::pod_goblin(), list, &mut figures);
        } else {
            spawn_figures(&SpawnFixture::goblin(), list, &mut figures);
        }
    }

    if wanted("load_vs_parse") {
        let fixture = LoadFixture::generate(LOAD_FILES);
        let (ours, baseline) =
            alternate(SLOW_ROUNDS, || fixture.load(), || fixture.read_and_parse());
        figures.push(figure(
            "load_vs_parse",
            LOAD_FILES,
            Some(2.5),
            ours,
            baseline,
        ));
    }
    figures
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
}

/// A spawn comparison: ours, its baseline, the target ratio.
struct SpawnFigure {
    name: &'static str,
    ours: Spawn,
    baseline: Spawn,
    target: Option<f64>,
    /// Measured for the plain-old-data goblin too (suffixed `_pod`).
    also_pod: bool,
}

/// The spawn comparisons, measured for the realistic goblin and most of them for the
/// plain-old-data one. The two `with_ids` figures split the first one: the
/// cost of the library's `StableId` and `ArchetypeInstance` on their own, and the cost of
/// spawning by name over a static tuple that has them too.
const SPAWN_FIGURES: [SpawnFigure; 5] = [
    SpawnFigure {
        name: "spawn_by_name_vs_static",
        ours: Spawn::ByName,
        baseline: Spawn::Static,
        target: Some(1.3),
        also_pod: true,
    },
    SpawnFigure {
        name: "spawn_many_vs_spawn_batch",
        ours: Spawn::Many,
        baseline: Spawn::Batch,
        target: Some(1.3),
        also_pod: true,
    },
    SpawnFigure {
        name: "static_with_ids_vs_static",
        ours: Spawn::StaticWithIds,
        baseline: Spawn::Static,
        target: None,
        also_pod: true,
    },
    SpawnFigure {
        name: "spawn_by_name_vs_static_with_ids",
        ours: Spawn::ByName,
        baseline: Spawn::StaticWithIds,
        target: None,
        also_pod: true,
    },
    SpawnFigure {
        name: "spawn_with_vs_spawn_by_name",
        ours: Spawn::WithOverrides,
        baseline: Spawn::ByName,
        target: None,
        also_pod: false,
    },
];

fn spawn_figures<B: SixComponents>(
    fixture: &SpawnFixture<B>,
    list: Vec<(String, &SpawnFigure)>,
    figures: &mut Vec<Figure>,
) {
    let n = SPAWN_COUNT;
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
            }
            world
        }
    };
    for (name, spawn) in list {
        let rounds = match spawn.ours {
            Spawn::WithOverrides => SLOW_ROUNDS,
            _ => SPAWN_ROUNDS,
        };
        let (ours, baseline) = alternate(rounds, run(spawn.ours), run(spawn.baseline));
        figures.push(figure(name, n, spawn.target, ours, baseline));
    }
}

fn figure(
    name: impl Into<String>,
    n: usize,
    target: Option<f64>,
    ours: Vec<Duration>,
    baseline: Vec<Duration>,
) -> Figure {
    Figure {
        name: name.into(),
        ours: median(&ours),
        baseline: median(&baseline),
        n,
        target,
        rounds: ours.into_iter().zip(baseline).collect(),
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

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    match sorted.len() {
        0 => Duration::ZERO,
        len if len % 2 == 1 => sorted[len / 2],
        len => (sorted[len / 2 - 1] + sorted[len / 2]) / 2,
    }
}
