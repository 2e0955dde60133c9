//! The scaling figures: how a cost grows with one input dimension a designer, a level file or
//! an editor controls. Each dimension is timed at `n`, `2n` and `4n` items and printed with the
//! growth exponent the three times give (`scaling_<dimension> exponent=1.03 (n 12.10 ms, 2n
//! 24.31 ms, 4n 49.02 ms, target<=1.2 met, n=5000)`); every one must stay linear (≤ 1.2).
//!
//! A new surface that takes a count from its input adds its dimension to [`DIMENSIONS`], with a
//! workload in the file of its subsystem.

use std::time::{Duration, Instant};

use crate::bench::figure::{median, Figure, Measured};

pub mod diagnostics;
mod language;
mod scenes;

/// The highest growth exponent a dimension may show: linear, with room for noise.
pub const LINEAR: f64 = 1.2;

/// One timed run of a workload at its size, set up beforehand; returns the time the measured
/// part took (setting up and tearing down are off the clock).
pub type Run = Box<dyn FnMut() -> Duration>;

/// One input dimension.
pub struct Dimension {
    /// The figure's name, `scaling_<dimension>`.
    pub name: &'static str,
    /// `n` at the standard sizes: large enough that the time at `n` is well above the clock's
    /// noise, small enough that `4n` takes under a second or two.
    pub n: usize,
    /// Sets up the workload for `n` items.
    pub setup: fn(usize) -> Run,
}

/// Every dimension, in the order the quick mode prints them.
pub const DIMENSIONS: &[Dimension] = &[
    Dimension {
        name: "scaling_scene_entities",
        n: 25_000,
        setup: scenes::scene_entities,
    },
    Dimension {
        name: "scaling_sub_scene_placements",
        n: 5_000,
        setup: scenes::sub_scene_placements,
    },
    // The depth limit (at most 64) bounds the chain: 16, 32 and 64 levels.
    Dimension {
        name: "scaling_sub_scene_depth",
        n: 16,
        setup: scenes::sub_scene_depth,
    },
    Dimension {
        name: "scaling_live_scene_entities",
        n: 10_000,
        setup: scenes::live_scene_entities,
    },
    Dimension {
        name: "scaling_validate_errors_per_file",
        n: 4_000,
        setup: diagnostics::validate_errors_per_file,
    },
    Dimension {
        name: "scaling_lsp_errors_per_file",
        n: 4_000,
        setup: diagnostics::lsp_errors_per_file,
    },
    language::PICK_LENGTH,
    language::FORMERLY_COUNT,
    language::RENAMED_ARCHETYPES,
    language::EXTENDS_FANOUT,
    language::EXTENDS_COUNT,
    language::CHILDREN_COUNT,
    language::VARIATION_SITES,
    language::KEYED_RECORDS,
];

/// Times `dimension` at `n`, `2n` and `4n` (`n` is the dimension's own divided by `divisor`,
/// at least 1): one unmeasured round, then `rounds` rounds (the quick mode's 11) of the three
/// sizes one after the other, so machine noise reaches all three alike.
pub fn scaling_figure(dimension: &Dimension, divisor: usize, rounds: usize) -> Figure {
    let n = (dimension.n / divisor.max(1)).max(1);
    let mut runs: Vec<Run> = [n, 2 * n, 4 * n]
        .into_iter()
        .map(|size| (dimension.setup)(size))
        .collect();
    for run in &mut runs {
        run();
    }
    let mut measured: Vec<[Duration; 3]> = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        let mut times = [Duration::ZERO; 3];
        for (time, run) in times.iter_mut().zip(&mut runs) {
            *time = run();
        }
        measured.push(times);
    }
    let at = |i: usize| median(&measured.iter().map(|times| times[i]).collect::<Vec<_>>());
    Figure {
        name: dimension.name.to_string(),
        n,
        measured: Measured::Scaling {
            times: [at(0), at(1), at(2)],
            bound: LINEAR,
            rounds: measured,
        },
    }
}

/// Times `work` once.
pub fn time(work: impl FnOnce()) -> Duration {
    let start = Instant::now();
    work();
    start.elapsed()
}
