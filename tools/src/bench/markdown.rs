//! `BENCHMARKS.md`, generated: the lines of several quick runs (`archetool bench --quick`, one
//! [`Figure`](crate::bench::Figure) per line) parsed back, aggregated per figure over the runs
//! and rendered as Markdown tables (`archetool bench --markdown`).
//!
//! Each run prints one value per figure (itself a median over that run's rounds). Over the
//! runs, the document gives each figure's median, its range (lowest–highest), in how many runs
//! it was measured, and its target with whether the median meets it. Targets come from the line
//! itself when it prints one (`target<=200 met`: bounded and scaling figures) and otherwise from
//! the bench's own constants ([`stated_target`]): ratio, time and latency figures.
//!
//! The output depends only on the runs and the [`Header`]: figures are in the order the quick
//! mode prints them ([`FIGURES`]), grouped by what they measure; figures the bench does not
//! know (from another version) come last in their group, in the order they first appear.

use std::fmt::{self, Write as _};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::bench::{stated_target, StatedTarget, FIGURES};

/// One figure's line of a quick run, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct FigureLine {
    /// The figure's name, e.g. `spawn_by_name_vs_static`.
    pub name: String,
    /// What the line says about it.
    pub outcome: Outcome,
}

/// What a figure's line says.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Measured: the values before the parenthesis (`ratio=1.12`; a latency has two).
    Measured {
        /// The values, in the order printed.
        values: Vec<Value>,
        /// The bound the line prints (`target<=200 met` gives 200), if it prints one.
        target: Option<f64>,
    },
    /// `name skipped (reason)`.
    Skipped {
        /// Why, as printed.
        reason: String,
    },
}

/// One `key=number` of a figure's line.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// `ratio`, `ms`, `p50_ms`, `bytes_per_entity`, `peak_mb`, `exponent`, ...
    pub key: String,
    /// The number.
    pub number: f64,
    /// Digits printed after the decimal point (the document prints as many).
    pub decimals: usize,
}

/// The figure lines of one quick run, in the order printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run {
    /// The figures.
    pub figures: Vec<FigureLine>,
}

/// A saved run that is not the output of `archetool bench --quick`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file (or run) it came from.
    pub source: String,
    /// The 1-based line, or `None` for the file as a whole.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.source, self.reason),
            None => write!(f, "{}: {}", self.source, self.reason),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses one line of `archetool bench --quick`: `name key=value... (details, n=N)` or
/// `name skipped (reason)`.
///
/// # Errors
/// Why the line is not a figure's line.
pub fn parse_line(text: &str) -> Result<FigureLine, String> {
    let text = text.trim();
    let (name, rest) = text
        .split_once(' ')
        .ok_or("not a figure's line (`name key=value (...)`)")?;
    let valid_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.is_empty() || !name.chars().all(valid_name) {
        return Err(format!("`{name}` is not a figure's name"));
    }
    if let Some(reason) = rest.strip_prefix("skipped (") {
        let reason = reason
            .strip_suffix(')')
            .ok_or("`skipped (` without its closing parenthesis")?;
        return Ok(FigureLine {
            name: name.to_string(),
            outcome: Outcome::Skipped {
                reason: reason.to_string(),
            },
        });
    }
    let (values, details) = rest
        .split_once(" (")
        .ok_or("no details in parentheses after the values")?;
    let details = details
        .strip_suffix(')')
        .ok_or("the details do not end with `)`")?;
    let values = values
        .split(' ')
        .map(|pair| {
            let (key, number) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}` is not key=value"))?;
            if key.is_empty() || !key.chars().all(valid_name) {
                return Err(format!("`{key}` is not a value's name"));
            }
            Ok(Value {
                key: key.to_string(),
                number: number_of(number)
                    .ok_or_else(|| format!("`{number}` (the value of `{key}`) is not a number"))?,
                decimals: number.split_once('.').map_or(0, |(_, digits)| digits.len()),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut target = None;
    for detail in details.split(", ") {
        if let Some(bound) = detail.strip_prefix("target<=") {
            let bound = bound.split(' ').next().unwrap_or_default();
            target =
                Some(number_of(bound).ok_or_else(|| format!("`target<={bound}`: not a number"))?);
        }
    }
    Ok(FigureLine {
        name: name.to_string(),
        outcome: Outcome::Measured { values, target },
    })
}

/// A finite number, or `None`.
fn number_of(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|number| number.is_finite())
}

/// Parses the saved output of quick runs, `source` naming it in errors. Blank lines are
/// skipped. A file normally holds one run; a figure that comes again starts the next run, so
/// the output of `archetool bench --quick --runs N` reads as its N runs.
///
/// # Errors
/// The first line that is not a figure's line (with its file and line number), or a text with
/// no figure at all.
pub fn parse_runs(source: &str, text: &str) -> Result<Vec<Run>, ParseError> {
    let mut runs = Vec::new();
    let mut run = Run::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let figure = parse_line(line).map_err(|reason| ParseError {
            source: source.to_string(),
            line: Some(index + 1),
            reason: format!("{reason}: `{}`", shortened(line.trim())),
        })?;
        if run.figures.iter().any(|seen| seen.name == figure.name) {
            runs.push(std::mem::take(&mut run));
        }
        run.figures.push(figure);
    }
    if run.figures.is_empty() && runs.is_empty() {
        return Err(ParseError {
            source: source.to_string(),
            line: None,
            reason: "no figure lines (expected the output of `archetool bench --quick`)"
                .to_string(),
        });
    }
    if !run.figures.is_empty() {
        runs.push(run);
    }
    Ok(runs)
}

/// `text`, cut to 100 characters for an error message.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(100) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// What the document says about how and where it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The command that generated it, e.g. `archetool bench --markdown --from run1.txt`.
    pub command: String,
    /// The machine the runs were measured on, e.g. `AMD EPYC 7B13, 2 logical CPUs`.
    pub machine: String,
    /// The commit measured, e.g. `277ce88`.
    pub commit: String,
    /// The day it was generated, e.g. `2026-11-29`.
    pub date: String,
}

/// The median of `values` (the mean of the two middle ones for an even count; `NaN` for none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        len if len % 2 == 1 => sorted[len / 2],
        len => (sorted[len / 2 - 1] + sorted[len / 2]) / 2.0,
    }
}

/// The lowest and highest of `values` (`None` for none).
pub fn range(values: &[f64]) -> Option<(f64, f64)> {
    values.iter().fold(None, |range, &v| match range {
        None => Some((v, v)),
        Some((low, high)) => Some((low.min(v), high.max(v))),
    })
}

/// One figure over the runs.
struct Aggregate<'a> {
    name: &'a str,
    /// Its values by key, in the order the keys first appear: (number, decimals) per run that
    /// measured it.
    keys: Vec<(&'a str, Vec<(f64, usize)>)>,
    /// The bound the lines print, from the first run that prints one.
    line_target: Option<f64>,
    /// Per run (by index): measured, skipped with a reason, or absent.
    status: Vec<Status<'a>>,
}

#[derive(Clone, Copy)]
enum Status<'a> {
    Absent,
    Measured,
    Skipped(&'a str),
}

/// One row of a table: one value of one figure.
struct Row {
    label: String,
    median: String,
    range: String,
    runs: String,
    target: String,
    met: String,
    unit: &'static str,
    /// `Some(met)` when the row has a target.
    verdict: Option<bool>,
}

/// Renders the document for `runs` (in the order they ran): the header, then a table per
/// group of figures.
pub fn render(header: &Header, runs: &[Run]) -> String {
    let aggregates = aggregate(runs);
    let total = runs.len();
    let mut groups: Vec<(&'static str, Vec<Row>, Vec<String>)> = Vec::new();
    // `aggregate` keeps each group's figures together.
    for aggregate in &aggregates {
        let group = group_of(aggregate.name);
        if groups.last().is_none_or(|(last, ..)| *last != group) {
            groups.push((group, Vec::new(), Vec::new()));
        }
        if let Some((_, rows, notes)) = groups.last_mut() {
            rows.extend(rows_of(aggregate, total));
            notes.extend(note_of(aggregate));
        }
    }

    let mut out = String::new();
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("1 {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let _ = writeln!(out, "# Benchmarks\n");
    let _ = writeln!(
        out,
        "Generated by `{}` from {} of `archetool bench --quick`; do not edit by hand.\n",
        header.command,
        plural(total, "run")
    );
    let _ = writeln!(out, "- Machine: {}", header.machine);
    let _ = writeln!(out, "- Commit: {}", header.commit);
    let _ = writeln!(out, "- Date: {}\n", header.date);
    let _ = writeln!(
        out,
        "Each run prints one value per figure, itself a median over that run's rounds; the \
         median and the range here are over the runs. A ratio is ours / baseline: below 1× \
         ours is faster. What each figure measures: the `archetool::bench` module documentation.\n"
    );
    let verdicts: Vec<bool> = (groups.iter())
        .flat_map(|(_, rows, _)| rows.iter().filter_map(|row| row.verdict))
        .collect();
    if !verdicts.is_empty() {
        let met = verdicts.iter().filter(|met| **met).count();
        let _ = writeln!(
            out,
            "Targets: {met} met, {} missed (of {} with a target).\n",
            verdicts.len() - met,
            plural(verdicts.len(), "value")
        );
    }
    for (group, rows, notes) in &groups {
        let _ = writeln!(out, "## {group}\n");
        let _ = writeln!(
            out,
            "| figure | median | range | runs | target | met | unit |"
        );
        let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | --- | --- |");
        for row in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                row.label, row.median, row.range, row.runs, row.target, row.met, row.unit
            );
        }
        out.push('\n');
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
        if !notes.is_empty() {
            out.push('\n');
        }
    }
    // One final newline, not a blank line.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// Every figure of `runs`, in the order the quick mode prints them (figures it does not know
/// last, in the order they first appear).
fn aggregate(runs: &[Run]) -> Vec<Aggregate<'_>> {
    let mut aggregates: Vec<Aggregate<'_>> = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        for figure in &run.figures {
            let position = aggregates.iter().position(|a| a.name == figure.name);
            let aggregate = match position {
                Some(position) => &mut aggregates[position],
                None => {
                    aggregates.push(Aggregate {
                        name: figure.name.as_str(),
                        keys: Vec::new(),
                        line_target: None,
                        status: vec![Status::Absent; runs.len()],
                    });
                    let last = aggregates.len() - 1;
                    &mut aggregates[last]
                }
            };
            match &figure.outcome {
                Outcome::Skipped { reason } => aggregate.status[index] = Status::Skipped(reason),
                Outcome::Measured { values, target } => {
                    aggregate.status[index] = Status::Measured;
                    aggregate.line_target = aggregate.line_target.or(*target);
                    for value in values {
                        let entry = aggregate.keys.iter().position(|(key, _)| *key == value.key);
                        let entry = match entry {
                            Some(entry) => entry,
                            None => {
                                aggregate.keys.push((value.key.as_str(), Vec::new()));
                                aggregate.keys.len() - 1
                            }
                        };
                        aggregate.keys[entry].1.push((value.number, value.decimals));
                    }
                }
            }
        }
    }
    // Stable: figures the bench does not know keep the order they first appeared in.
    aggregates.sort_by_key(|a| {
        FIGURES
            .iter()
            .position(|name| *name == a.name)
            .unwrap_or(usize::MAX)
    });
    let mut grouped: Vec<Aggregate<'_>> = Vec::with_capacity(aggregates.len());
    for aggregate in aggregates {
        let group = group_of(aggregate.name);
        let at = grouped
            .iter()
            .rposition(|a| group_of(a.name) == group)
            .map_or(grouped.len(), |last| last + 1);
        grouped.insert(at, aggregate);
    }
    grouped
}

/// The rows of one figure: one per value key (a latency has p50 and p99), or one saying it was
/// skipped.
fn rows_of(aggregate: &Aggregate<'_>, total: usize) -> Vec<Row> {
    let measured = (aggregate.status.iter())
        .filter(|status| matches!(status, Status::Measured))
        .count();
    let runs = format!("{measured}/{total}");
    if aggregate.keys.is_empty() {
        return vec![Row {
            label: format!("`{}`", aggregate.name),
            median: "skipped".to_string(),
            range: "—".to_string(),
            runs,
            target: "—".to_string(),
            met: "—".to_string(),
            unit: "—",
            verdict: None,
        }];
    }
    let several = aggregate.keys.len() > 1;
    (aggregate.keys.iter())
        .map(|(key, values)| {
            let key: &str = key;
            let (suffix, unit) = unit_of(key);
            let decimals = values.iter().map(|(_, d)| *d).max().unwrap_or(0);
            let numbers: Vec<f64> = values.iter().map(|(number, _)| *number).collect();
            let middle = median(&numbers);
            let (low, high) = range(&numbers).unwrap_or((f64::NAN, f64::NAN));
            let target = row_target(aggregate.name, key, aggregate.line_target);
            let verdict = target.map(|target| middle <= target);
            Row {
                label: if several {
                    format!(
                        "`{}` {}",
                        aggregate.name,
                        key.strip_suffix("_ms").unwrap_or(key)
                    )
                } else {
                    format!("`{}`", aggregate.name)
                },
                median: format!("{middle:.decimals$}{suffix}"),
                range: format!("{low:.decimals$}–{high:.decimals$}{suffix}"),
                runs: runs.clone(),
                target: target
                    .map_or_else(|| "—".to_string(), |t| format!("≤ {}{suffix}", bound(t))),
                met: match verdict {
                    Some(true) => "met",
                    Some(false) => "missed",
                    None => "—",
                }
                .to_string(),
                unit,
                verdict,
            }
        })
        .collect()
}

/// A note under the table for a figure not measured in every run: which runs skipped it (and
/// why, as the first of them said) and which do not have it.
fn note_of(aggregate: &Aggregate<'_>) -> Option<String> {
    let (mut skipped, mut absent) = (Vec::new(), Vec::new());
    for (index, status) in aggregate.status.iter().enumerate() {
        match status {
            Status::Skipped(_) => skipped.push((index + 1).to_string()),
            Status::Absent => absent.push((index + 1).to_string()),
            Status::Measured => {}
        }
    }
    let listed = |runs: &[String]| match runs {
        [one] => format!("run {one}"),
        more => format!("runs {}", more.join(", ")),
    };
    let mut parts = Vec::new();
    if !skipped.is_empty() {
        let reason = aggregate.status.iter().find_map(|status| match status {
            Status::Skipped(reason) => Some(*reason),
            _ => None,
        });
        parts.push(format!(
            "skipped in {} ({})",
            listed(&skipped),
            reason.unwrap_or_default()
        ));
    }
    if !absent.is_empty() {
        parts.push(format!("not in {}", listed(&absent)));
    }
    (!parts.is_empty()).then(|| format!("`{}`: {}.", aggregate.name, parts.join("; ")))
}

/// The target of one value of a figure, in the value's unit: the bound its line prints, else
/// what the bench states for it.
fn row_target(name: &str, key: &str, line_target: Option<f64>) -> Option<f64> {
    if line_target.is_some() {
        return line_target;
    }
    let ms = |time: Duration| time.as_secs_f64() * 1e3;
    match (stated_target(name)?, key) {
        (StatedTarget::Ratio(ratio), "ratio") => Some(ratio),
        (StatedTarget::Time(time), "ms") => Some(ms(time)),
        (StatedTarget::Latency(p50, _), "p50_ms") => Some(ms(p50)),
        (StatedTarget::Latency(_, p99), "p99_ms") => Some(ms(p99)),
        _ => None,
    }
}

/// What a value's number is followed by in the table, and the unit column's words.
fn unit_of(key: &str) -> (&'static str, &'static str) {
    match key {
        "ratio" => ("×", "ratio"),
        "ms" | "p50_ms" | "p99_ms" => (" ms", "ms"),
        "us" => (" µs", "µs"),
        "peak_mb" => (" MB", "MB"),
        "bytes" => ("", "bytes"),
        "bytes_per_entity" => ("", "bytes per entity"),
        "bytes_per_archetype" => ("", "bytes per archetype"),
        "exponent" => ("", "growth exponent"),
        _ => ("", "—"),
    }
}

/// A bound as the bench states it (`1.3`, `16`, `3072`), at most two decimals (`0.33` for ⅓).
fn bound(value: f64) -> String {
    let shortest = value.to_string();
    match shortest.split_once('.') {
        Some((_, decimals)) if decimals.len() > 2 => format!("{value:.2}"),
        _ => shortest,
    }
}

/// The group (and table heading) of a figure, by its name.
pub fn group_of(name: &str) -> &'static str {
    const MEMORY: [&str; 3] = [
        "memory",
        "scene_load_peak_1m_instances",
        "library_bytes_per_archetype",
    ];
    if MEMORY.contains(&name) || name.starts_with("memory_") {
        "Memory"
    } else if name.starts_with("spawn_") || name.starts_with("static_") {
        "Spawning"
    } else if name.starts_with("load_") || name.starts_with("cooked_load") {
        "Loading archetypes"
    } else if name.starts_with("scene_") {
        "Scenes"
    } else if ["reload_", "lsp_", "watch_"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        "Hot reload and the language server"
    } else if name.starts_with("cdda_") {
        "Real data: the CDDA monsters"
    } else if name.starts_with("diagnostics_") {
        "Reporting problems"
    } else if name.starts_with("scaling_") {
        "Scaling"
    } else {
        "Other"
    }
}

/// The machine this runs on: the CPU model (`model name` in `/proc/cpuinfo`) and how many
/// logical CPUs there are.
pub fn detect_machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let fallback = std::thread::available_parallelism().map_or(0, usize::from);
    machine_from_cpuinfo(&cpuinfo, fallback)
}

/// [`detect_machine`] from the text of `/proc/cpuinfo` (`fallback` CPUs when it lists none).
pub fn machine_from_cpuinfo(cpuinfo: &str, fallback: usize) -> String {
    fn field(line: &str) -> Option<(&str, &str)> {
        line.split_once(':').map(|(k, v)| (k.trim(), v.trim()))
    }
    let model = (cpuinfo.lines())
        .filter_map(field)
        .find(|(key, _)| *key == "model name")
        .map_or("unknown CPU", |(_, value)| value);
    let listed = (cpuinfo.lines())
        .filter_map(field)
        .filter(|(key, _)| *key == "processor")
        .count();
    let cpus = if listed > 0 { listed } else { fallback };
    if cpus == 1 {
        format!("{model}, 1 logical CPU")
    } else {
        format!("{model}, {cpus} logical CPUs")
    }
}

/// The commit checked out in the current directory (`git rev-parse --short HEAD`), marked when
/// tracked files have uncommitted changes; `unknown` without git or a repository.
pub fn detect_commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]).filter(|hash| !hash.is_empty()) {
        Some(hash) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if !changes.is_empty() => format!("{hash} (with uncommitted changes)"),
            _ => hash,
        },
        None => "unknown".to_string(),
    }
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    date_of_day(i64::try_from(seconds / 86_400).unwrap_or(0))
}

/// The date `days` after 1970-01-01, `YYYY-MM-DD` (the proleptic Gregorian calendar).
fn date_of_day(days: i64) -> String {
    // Howard Hinnant's `civil_from_days`: eras of 400 years from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            command: "archetool bench --markdown --from a.txt b.txt".to_string(),
            machine: "Test CPU, 2 logical CPUs".to_string(),
            commit: "abc1234".to_string(),
            date: "2026-11-29".to_string(),
        }
    }

    fn runs(texts: &[&str]) -> Vec<Run> {
        (texts.iter().enumerate())
            .flat_map(|(i, text)| parse_runs(&format!("run{}.txt", i + 1), text).unwrap())
            .collect()
    }

    /// The table rows of the document (lines starting with `` | ` ``).
    fn rows(document: &str) -> Vec<&str> {
        document
            .lines()
            .filter(|line| line.starts_with("| `"))
            .collect()
    }

    #[test]
    fn the_median_of_an_odd_count_is_the_middle_one() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[1.5]), 1.5);
        assert_eq!(median(&[5.0, 1.0, 4.0, 2.0, 3.0]), 3.0);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_two_middle_ones() {
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[1.0, 2.0]), 1.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn the_range_is_the_lowest_and_highest() {
        assert_eq!(range(&[1.2, 0.9, 1.5, 1.1]), Some((0.9, 1.5)));
        assert_eq!(range(&[7.0]), Some((7.0, 7.0)));
        assert_eq!(range(&[]), None);
    }

    #[test]
    fn every_kind_of_line_parses() {
        let ratio = parse_line(
            "spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)",
        )
        .unwrap();
        assert_eq!(ratio.name, "spawn_by_name_vs_static");
        assert_eq!(
            ratio.outcome,
            Outcome::Measured {
                values: vec![Value {
                    key: "ratio".into(),
                    number: 1.12,
                    decimals: 2
                }],
                target: None
            }
        );
        let latency =
            parse_line("reload_latency p50_ms=31.2 p99_ms=33.9 (max 35.0 ms, n=30)").unwrap();
        let Outcome::Measured { values, .. } = latency.outcome else {
            panic!("measured")
        };
        let keys: Vec<(&str, f64, usize)> = (values.iter())
            .map(|v| (v.key.as_str(), v.number, v.decimals))
            .collect();
        assert_eq!(keys, [("p50_ms", 31.2, 1), ("p99_ms", 33.9, 1)]);
        let bounded = parse_line(
            "diagnostics_minified_2k_errors_bytes bytes=570000 (target<=1024000 met, file_bytes=22049, n=2000)",
        )
        .unwrap();
        assert!(matches!(
            bounded.outcome,
            Outcome::Measured { target: Some(t), ref values } if t == 1_024_000.0 && values[0].decimals == 0
        ));
        let scaling = parse_line(
            "scaling_pick_length exponent=1.02 (n 11.80 ms, 2n 23.90 ms, 4n 48.70 ms, target<=1.2 met, n=50000)",
        )
        .unwrap();
        assert!(matches!(scaling.outcome, Outcome::Measured { target: Some(t), .. } if t == 1.2));
        let skipped =
            parse_line("cdda_load skipped (no CDDA data at x; set ARCHETOOL_CDDA_DIR (a dir))")
                .unwrap();
        assert_eq!(
            skipped.outcome,
            Outcome::Skipped {
                reason: "no CDDA data at x; set ARCHETOOL_CDDA_DIR (a dir)".into()
            }
        );
    }

    #[test]
    fn an_unparsable_line_is_an_error_naming_its_file_and_line() {
        let text = "memory bytes_per_entity=16.8 (method=rss, n=1000000)\n\
                    \n\
                    spawn_by_name_vs_static ratio=fast (ours 1.83 ms, baseline 1.63 ms, n=100000)\n";
        let error = parse_runs("runs/run2.txt", text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "runs/run2.txt:3: `fast` (the value of `ratio`) is not a number: \
             `spawn_by_name_vs_static ratio=fast (ours 1.83 ms, baseline 1.63 ms, n=100000)`"
        );
        let error = parse_runs("run1.txt", "Compiling archetool v0.2.0\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "run1.txt:1: no details in parentheses after the values: `Compiling archetool v0.2.0`"
        );
        assert_eq!(
            parse_runs("empty.txt", "\n \n").unwrap_err().to_string(),
            "empty.txt: no figure lines (expected the output of `archetool bench --quick`)"
        );
    }

    #[test]
    fn a_figure_that_comes_again_starts_the_next_run() {
        let text = "load_vs_parse ratio=2.00 (ours 2 ms, baseline 1 ms, n=10)\n\
                    reload_patch ms=9.00 (set_source 1.00 ms, apply_update 8.00 ms, n=10)\n\
                    load_vs_parse ratio=2.20 (ours 2 ms, baseline 1 ms, n=10)\n";
        let runs = parse_runs("all.txt", text).unwrap();
        let names: Vec<Vec<&str>> = (runs.iter())
            .map(|run| run.figures.iter().map(|f| f.name.as_str()).collect())
            .collect();
        assert_eq!(
            names,
            [vec!["load_vs_parse", "reload_patch"], vec!["load_vs_parse"]]
        );
    }

    #[test]
    fn targets_are_met_or_missed_by_the_median() {
        // load_vs_parse: ≤ 2.5× (stated by the bench); reload_patch: ≤ 16 ms; the 40k errors
        // print their own bound.
        let document = render(
            &header(),
            &runs(&[
                "load_vs_parse ratio=2.40 (ours 2 ms, baseline 1 ms, n=10)\n\
                 reload_patch ms=17.00 (set_source 1.00 ms, apply_update 16.00 ms, n=10)\n\
                 diagnostics_40k_errors_ms ms=150.00 (target<=200 met, file_bytes=1, n=4)\n",
                "load_vs_parse ratio=2.70 (ours 2 ms, baseline 1 ms, n=10)\n\
                 reload_patch ms=15.00 (set_source 1.00 ms, apply_update 14.00 ms, n=10)\n\
                 diagnostics_40k_errors_ms ms=250.00 (target<=200 missed, file_bytes=1, n=4)\n",
                "load_vs_parse ratio=2.60 (ours 2 ms, baseline 1 ms, n=10)\n\
                 reload_patch ms=16.50 (set_source 1.00 ms, apply_update 15.50 ms, n=10)\n\
                 diagnostics_40k_errors_ms ms=190.00 (target<=200 met, file_bytes=1, n=4)\n",
            ]),
        );
        assert_eq!(
            rows(&document),
            [
                "| `load_vs_parse` | 2.60× | 2.40–2.70× | 3/3 | ≤ 2.5× | missed | ratio |",
                "| `reload_patch` | 16.50 ms | 15.00–17.00 ms | 3/3 | ≤ 16 ms | missed | ms |",
                "| `diagnostics_40k_errors_ms` | 190.00 ms | 150.00–250.00 ms | 3/3 | ≤ 200 ms | met | ms |",
            ]
        );
        assert!(document.contains("\nTargets: 1 met, 2 missed (of 3 values with a target).\n"));
    }

    #[test]
    fn a_figure_missing_from_a_run_counts_the_runs_that_have_it() {
        let document = render(
            &header(),
            &runs(&[
                "spawn_many_vs_spawn_batch ratio=1.10 (ours 1 ms, baseline 1 ms, n=1)\n\
                 cdda_load skipped (no data)\n",
                "spawn_many_vs_spawn_batch ratio=1.30 (ours 1 ms, baseline 1 ms, n=1)\n\
                 static_with_ids_vs_static ratio=1.05 (ours 1 ms, baseline 1 ms, n=1)\n\
                 cdda_load skipped (no data)\n",
            ]),
        );
        assert_eq!(
            rows(&document),
            [
                "| `spawn_many_vs_spawn_batch` | 1.20× | 1.10–1.30× | 2/2 | ≤ 1.3× | met | ratio |",
                "| `static_with_ids_vs_static` | 1.05× | 1.05–1.05× | 1/2 | — | — | ratio |",
                "| `cdda_load` | skipped | — | 0/2 | — | — | — |",
            ]
        );
        assert!(document.contains("\n- `static_with_ids_vs_static`: not in run 1.\n"));
        assert!(document.contains("\n- `cdda_load`: skipped in runs 1, 2 (no data).\n"));
    }

    #[test]
    fn the_document_has_its_header_and_a_table_per_group_in_the_order_printed() {
        let run = "memory bytes_per_entity=16.8 (method=rss, n=1000000)\n\
                   spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)\n\
                   load_vs_parse ratio=2.00 (ours 2 ms, baseline 1 ms, n=10)\n\
                   scene_binary_load_vs_json_load ratio=0.33 (ours 1 ms, baseline 3 ms, n=1)\n\
                   load_vs_parse_50k ratio=2.10 (ours 2 ms, baseline 1 ms, n=10)\n\
                   reload_latency p50_ms=31.2 p99_ms=130.0 (max 135.0 ms, n=30)\n\
                   scene_load_peak_1m_instances peak_mb=934 (target<=1536 met, after_mb=740, input_mb=94, n=1000000)\n\
                   a_new_figure widgets=3 (n=1)\n";
        let document = render(&header(), &runs(&[run]));
        assert_eq!(
            document,
            "# Benchmarks\n\
             \n\
             Generated by `archetool bench --markdown --from a.txt b.txt` from 1 run of `archetool bench --quick`; do not edit by hand.\n\
             \n\
             - Machine: Test CPU, 2 logical CPUs\n\
             - Commit: abc1234\n\
             - Date: 2026-11-29\n\
             \n\
             Each run prints one value per figure, itself a median over that run's rounds; the median and the range here are over the runs. A ratio is ours / baseline: below 1× ours is faster. What each figure measures: the `archetool::bench` module documentation.\n\
             \n\
             Targets: 6 met, 1 missed (of 7 values with a target).\n\
             \n\
             ## Memory\n\
             \n\
             | figure | median | range | runs | target | met | unit |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | `memory` | 16.8 | 16.8–16.8 | 1/1 | — | — | bytes per entity |\n\
             | `scene_load_peak_1m_instances` | 934 MB | 934–934 MB | 1/1 | ≤ 1536 MB | met | MB |\n\
             \n\
             ## Spawning\n\
             \n\
             | figure | median | range | runs | target | met | unit |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | `spawn_by_name_vs_static` | 1.12× | 1.12–1.12× | 1/1 | ≤ 1.3× | met | ratio |\n\
             \n\
             ## Loading archetypes\n\
             \n\
             | figure | median | range | runs | target | met | unit |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | `load_vs_parse` | 2.00× | 2.00–2.00× | 1/1 | ≤ 2.5× | met | ratio |\n\
             | `load_vs_parse_50k` | 2.10× | 2.10–2.10× | 1/1 | ≤ 2.5× | met | ratio |\n\
             \n\
             ## Scenes\n\
             \n\
             | figure | median | range | runs | target | met | unit |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | `scene_binary_load_vs_json_load` | 0.33× | 0.33–0.33× | 1/1 | ≤ 0.33× | met | ratio |\n\
             \n\
             ## Hot reload and the language server\n\
             \n\
             | figure | median | range | runs | target | met | unit |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | `reload_latency` p50 | 31.2 ms | 31.2–31.2 ms | 1/1 | ≤ 60 ms | met | ms |\n\
             | `reload_latency` p99 | 130.0 ms | 130.0–130.0 ms | 1/1 | ≤ 120 ms | missed | ms |\n\
             \n\
             ## Other\n\
             \n\
             | figure | median | range | runs | target | met | unit |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | `a_new_figure` | 3 | 3–3 | 1/1 | — | — | — |\n"
        );
    }

    #[test]
    fn the_machine_is_the_cpu_model_and_the_logical_cpus() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\n\
                       processor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(
            machine_from_cpuinfo(cpuinfo, 8),
            "AMD EPYC 7B13, 2 logical CPUs"
        );
        assert_eq!(machine_from_cpuinfo("", 1), "unknown CPU, 1 logical CPU");
    }

    #[test]
    fn days_become_dates() {
        assert_eq!(date_of_day(0), "1970-01-01");
        assert_eq!(date_of_day(11_016), "2000-02-29");
        assert_eq!(date_of_day(20_786), "2026-11-29");
        assert_eq!(today().len(), 10);
    }
}
