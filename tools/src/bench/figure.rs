//! [`Figure`]: one measured result of the quick mode, printed as one stable, machine-readable
//! line.

use std::fmt;
use std::time::Duration;

/// One figure of the quick mode: what was measured, on how many items, and the result.
///
/// Displays as one stable line whose form depends on the kind of measurement:
///
/// ```text
/// spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)
/// reload_patch ms=9.84 (set_source 0.21 ms, apply_update 9.63 ms, n=100000)
/// reload_latency p50_ms=31.2 p99_ms=33.9 (max 35.0 ms, n=30)
/// cdda_load ms=48.10 (per_archetype_us=40.9, errors=0, warnings=2, mismatches=0, modifiers=1227, dropped_modifiers=0, n=1176)
/// memory bytes_per_entity=16.8 (method=allocator, n=1000000)
/// diagnostics_40k_errors_ms ms=112.40 (target<=200 met, file_bytes=760083, n=40000)
/// diagnostics_minified_2k_errors_bytes bytes=570000 (target<=1024000 met, file_bytes=22049, n=2000)
/// scene_load_peak_1m_instances peak_mb=934 (target<=1536 met, after_mb=740, input_mb=94, n=1000000)
/// scaling_pick_length exponent=1.02 (n 11.80 ms, 2n 23.90 ms, 4n 48.70 ms, target<=1.2 met, n=50000)
/// cdda_load skipped (no CDDA data at repo/../shared/data/cdda-monsters; set ARCHETOOL_CDDA_DIR to its directory)
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// What is measured, e.g. `spawn_by_name_vs_static`.
    pub name: String,
    /// Work items per run (entities spawned, files loaded, saves watched).
    pub n: usize,
    /// The result.
    pub measured: Measured,
}

/// The result of one [`Figure`].
#[derive(Clone, Debug, PartialEq)]
pub enum Measured {
    /// Ours against a baseline: medians over alternating rounds.
    Ratio {
        /// Median time of ours.
        ours: Duration,
        /// Median time of the baseline.
        baseline: Duration,
        /// The highest `ours / baseline` the project promises, if it promises one.
        target: Option<f64>,
        /// Every measured round: (ours, baseline), in the order they ran.
        rounds: Vec<(Duration, Duration)>,
    },
    /// A time on its own (median over rounds), split into named parts.
    Time {
        /// Median of the whole.
        median: Duration,
        /// Medians of the parts, in the order they run.
        parts: Vec<(String, Duration)>,
        /// The longest time the project promises, if it promises one.
        target: Option<Duration>,
        /// Every measured round's whole time.
        rounds: Vec<Duration>,
    },
    /// A latency distribution.
    Latency {
        /// Median.
        p50: Duration,
        /// 99th percentile (nearest rank).
        p99: Duration,
        /// Slowest sample.
        max: Duration,
        /// The promised (p50, p99), if any.
        target: Option<(Duration, Duration)>,
    },
    /// Loading a data set: the median time, per item, and counts of what went wrong.
    Load {
        /// Median time of the whole load.
        median: Duration,
        /// What an item is, for the per-item key (`archetype`: `per_archetype_us=`).
        item: &'static str,
        /// Named counts, e.g. `("errors", 0)`.
        counts: Vec<(&'static str, usize)>,
        /// Every measured round.
        rounds: Vec<Duration>,
    },
    /// Memory per item.
    Bytes {
        /// Bytes ours holds per item more than the baseline.
        per_item: f64,
        /// How the bytes were measured: `allocator` (a counting global allocator) or `rss`
        /// (resident set size from `/proc/self/status`, page-granular and noisier).
        method: &'static str,
    },
    /// A worst case, measured against the most the project promises it costs: a median time
    /// or a number of bytes.
    Bounded {
        /// The median over the rounds, in `unit`.
        value: f64,
        /// `ms` or `bytes`.
        unit: &'static str,
        /// The most `value` may be.
        bound: f64,
        /// Named counts that describe the input, e.g. `("file_bytes", 760083)`.
        counts: Vec<(&'static str, usize)>,
        /// Every measured round, in `unit`.
        rounds: Vec<f64>,
    },
    /// How a cost grows with one input dimension: the median time at `n`, `2n` and `4n` items,
    /// and the growth exponent they give (1 for linear, 2 for quadratic).
    Scaling {
        /// The medians at `n`, `2n` and `4n`.
        times: [Duration; 3],
        /// The highest exponent the project promises (1.2: linear, with room for noise).
        bound: f64,
        /// Every measured round: the times at `n`, `2n` and `4n`, run one after the other.
        rounds: Vec<[Duration; 3]>,
    },
    /// Not measured, and why (e.g. the data it needs is missing).
    Skipped {
        /// Why, for the reader.
        reason: String,
    },
}

impl Figure {
    /// A ratio figure from the two sides' per-round times (paired in the order they ran).
    pub fn ratio(
        name: impl Into<String>,
        n: usize,
        target: Option<f64>,
        ours: Vec<Duration>,
        baseline: Vec<Duration>,
    ) -> Self {
        Figure {
            name: name.into(),
            n,
            measured: Measured::Ratio {
                ours: median(&ours),
                baseline: median(&baseline),
                target,
                rounds: ours.into_iter().zip(baseline).collect(),
            },
        }
    }

    /// A figure that was not measured.
    pub fn skipped(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Figure {
            name: name.into(),
            n: 0,
            measured: Measured::Skipped {
                reason: reason.into(),
            },
        }
    }

    /// `ours / baseline` of the medians, for ratio figures.
    pub fn ratio_value(&self) -> Option<f64> {
        match &self.measured {
            Measured::Ratio { ours, baseline, .. } => {
                Some(ours.as_secs_f64() / baseline.as_secs_f64().max(f64::MIN_POSITIVE))
            }
            _ => None,
        }
    }

    /// The growth exponent of a scaling figure: the slope of log(time) against log(n) through
    /// the medians at `n` and `4n` (the least-squares slope of the three evenly spaced points).
    pub fn exponent(&self) -> Option<f64> {
        match &self.measured {
            Measured::Scaling { times, .. } => Some(exponent_of(times)),
            _ => None,
        }
    }

    /// Whether the result is within its target (`true` when there is none, or it was skipped).
    pub fn meets_target(&self) -> bool {
        match &self.measured {
            Measured::Ratio { target, .. } => target
                .zip(self.ratio_value())
                .is_none_or(|(target, ratio)| ratio <= target),
            Measured::Time { median, target, .. } => target.is_none_or(|target| *median <= target),
            Measured::Latency {
                p50, p99, target, ..
            } => target.is_none_or(|(t50, t99)| *p50 <= t50 && *p99 <= t99),
            Measured::Bounded { value, bound, .. } => value <= bound,
            Measured::Scaling { bound, .. } => self.exponent().is_some_and(|e| e <= *bound),
            Measured::Load { .. } | Measured::Bytes { .. } | Measured::Skipped { .. } => true,
        }
    }

    /// The lowest and highest per-round ratio (ratio figures) or time in ms (time figures): how
    /// noisy the run was.
    pub fn spread(&self) -> Option<(f64, f64)> {
        let values: Vec<f64> = match &self.measured {
            Measured::Ratio { rounds, .. } => rounds
                .iter()
                .map(|(ours, baseline)| ours.as_secs_f64() / baseline.as_secs_f64())
                .collect(),
            Measured::Time { rounds, .. } | Measured::Load { rounds, .. } => {
                rounds.iter().map(|t| ms(*t)).collect()
            }
            Measured::Bounded { rounds, .. } => rounds.clone(),
            Measured::Scaling { rounds, .. } => rounds.iter().map(exponent_of).collect(),
            _ => return None,
        };
        values.iter().fold(None, |range, &v| match range {
            None => Some((v, v)),
            Some((low, high)) => Some((f64::min(low, v), f64::max(high, v))),
        })
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// log₂(t(4n) / t(n)) / 2: the growth exponent of three times at `n`, `2n` and `4n`.
fn exponent_of(times: &[Duration; 3]) -> f64 {
    let first = times[0].as_secs_f64().max(1e-9);
    let last = times[2].as_secs_f64().max(1e-9);
    (last / first).log2() / 2.0
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.measured {
            Measured::Ratio { ours, baseline, .. } => write!(
                f,
                "{} ratio={:.2} (ours {:.2} ms, baseline {:.2} ms, n={})",
                self.name,
                self.ratio_value().unwrap_or(f64::NAN),
                ms(*ours),
                ms(*baseline),
                self.n
            ),
            Measured::Time { median, parts, .. } => {
                write!(f, "{} ms={:.2} (", self.name, ms(*median))?;
                for (part, time) in parts {
                    write!(f, "{part} {:.2} ms, ", ms(*time))?;
                }
                write!(f, "n={})", self.n)
            }
            Measured::Load {
                median,
                item,
                counts,
                ..
            } => {
                write!(
                    f,
                    "{} ms={:.2} (per_{item}_us={:.1}, ",
                    self.name,
                    ms(*median),
                    median.as_secs_f64() * 1e6 / self.n.max(1) as f64
                )?;
                for (what, count) in counts {
                    write!(f, "{what}={count}, ")?;
                }
                write!(f, "n={})", self.n)
            }
            Measured::Latency { p50, p99, max, .. } => write!(
                f,
                "{} p50_ms={:.1} p99_ms={:.1} (max {:.1} ms, n={})",
                self.name,
                ms(*p50),
                ms(*p99),
                ms(*max),
                self.n
            ),
            Measured::Bytes { per_item, method } => write!(
                f,
                "{} bytes_per_entity={per_item:.1} (method={method}, n={})",
                self.name, self.n
            ),
            Measured::Bounded {
                value,
                unit,
                bound,
                counts,
                ..
            } => {
                let met = if self.meets_target() { "met" } else { "missed" };
                let precision = match *unit {
                    "ms" | "us" | "last_ms" | "cpu_percent" | "ratio" => 2,
                    _ => 0,
                };
                write!(
                    f,
                    "{} {unit}={value:.precision$} (target<={bound} {met}, ",
                    self.name
                )?;
                for (what, count) in counts {
                    write!(f, "{what}={count}, ")?;
                }
                write!(f, "n={})", self.n)
            }
            Measured::Scaling { times, bound, .. } => {
                let met = if self.meets_target() { "met" } else { "missed" };
                write!(
                    f,
                    "{} exponent={:.2} (n {:.2} ms, 2n {:.2} ms, 4n {:.2} ms, target<={bound} {met}, n={})",
                    self.name,
                    exponent_of(times),
                    ms(times[0]),
                    ms(times[1]),
                    ms(times[2]),
                    self.n
                )
            }
            Measured::Skipped { reason } => write!(f, "{} skipped ({reason})", self.name),
        }
    }
}

/// The median of `times` (zero for none).
pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    match sorted.len() {
        0 => Duration::ZERO,
        len if len % 2 == 1 => sorted[len / 2],
        len => (sorted[len / 2 - 1] + sorted[len / 2]) / 2,
    }
}

/// The `p`-th percentile of `samples` by nearest rank (zero for none): the smallest sample
/// that at least `p` percent of the samples do not exceed.
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
