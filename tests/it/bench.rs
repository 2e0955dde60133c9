//! The benchmark harness at tiny sizes: every quick-mode workload runs and prints its figure in
//! the stable line format, the load fixtures load with zero errors, and `archetool bench`
//! answers without `--quick` and for a filter that matches nothing. Nothing here is timed.

use std::process::Command;

use archetool::bench::cdda::{self, CddaFixture};
use archetool::bench::{
    run_quick_with, stated_target, Figure, Measured, QuickSizes, StatedTarget, FIGURES,
};

/// Checks that `line` is `name key=value ... (..., n=N)` in the form its kind prints.
fn check_line(figure: &Figure) {
    let line = figure.to_string();
    let rest = line
        .strip_prefix(&figure.name)
        .and_then(|rest| rest.strip_prefix(' '))
        .unwrap_or_else(|| panic!("`{line}` does not start with its name"));
    let number = |text: &str| {
        assert!(
            text.parse::<f64>().is_ok_and(f64::is_finite),
            "`{text}` in `{line}` is not a number"
        );
    };
    if let Measured::Skipped { .. } = figure.measured {
        assert!(
            rest.starts_with("skipped (") && rest.ends_with(')'),
            "{line}"
        );
        return;
    }
    let (values, details) = rest
        .split_once(" (")
        .unwrap_or_else(|| panic!("`{line}` has no details in parentheses"));
    assert!(details.ends_with(&format!("n={})", figure.n)), "{line}");
    let keys: Vec<&str> = values
        .split(' ')
        .map(|pair| {
            let (key, value) = pair
                .split_once('=')
                .unwrap_or_else(|| panic!("`{pair}` in `{line}` is not key=value"));
            number(value);
            key
        })
        .collect();
    let expected: &[&str] = match figure.measured {
        Measured::Ratio { .. } => &["ratio"],
        Measured::Time { .. } | Measured::Load { .. } => &["ms"],
        Measured::Latency { .. } => &["p50_ms", "p99_ms"],
        Measured::Bytes { .. } => &["bytes_per_entity"],
        Measured::Bounded { unit, .. } => &[unit],
        Measured::Scaling { .. } => &["exponent"],
        Measured::Skipped { .. } => &[],
    };
    assert_eq!(keys, expected, "{line}");
    for detail in details.trim_end_matches(')').split(", ") {
        if let Some(target) = detail.strip_prefix("target<=") {
            let (bound, verdict) = target.split_once(' ').unwrap_or_else(|| panic!("{line}"));
            number(bound);
            let met = if figure.meets_target() {
                "met"
            } else {
                "missed"
            };
            assert_eq!(verdict, met, "{line}");
            continue;
        }
        let value = match detail.split_once('=') {
            Some(("method", method)) => {
                assert!(["rss", "allocator"].contains(&method), "{line}");
                continue;
            }
            Some((_, value)) => value,
            None => detail
                .rsplit_once(' ')
                .and_then(|(label, unit)| ["ms", "MB"].contains(&unit).then_some(label))
                .and_then(|label| label.rsplit_once(' '))
                .map(|(_, value)| value)
                .unwrap_or_else(|| {
                    panic!("`{detail}` in `{line}` is neither key=value nor `what N ms` (or MB)")
                }),
        };
        number(value);
    }
}

#[test]
fn every_quick_workload_runs_and_prints_a_stable_line() {
    let mut printed = Vec::new();
    let figures = run_quick_with(None, &QuickSizes::tiny(), &mut |figure| {
        printed.push(figure.to_string());
    });
    let names: Vec<&str> = figures.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, FIGURES, "one figure per name, in order");
    assert_eq!(
        printed.len(),
        figures.len(),
        "each figure reported as measured"
    );
    for figure in &figures {
        check_line(figure);
    }
    // `BENCHMARKS.md` takes the targets the lines do not print from `stated_target`: the ones
    // the figures were measured against.
    for figure in &figures {
        let measured_against = match &figure.measured {
            Measured::Ratio { target, .. } => target.map(StatedTarget::Ratio),
            Measured::Time { target, .. } => target.map(StatedTarget::Time),
            Measured::Latency { target, .. } => {
                target.map(|(p50, p99)| StatedTarget::Latency(p50, p99))
            }
            _ => None,
        };
        assert_eq!(
            stated_target(&figure.name),
            measured_against,
            "{}",
            figure.name
        );
    }
    // Only the real data may be skipped, and only when it is not there.
    for figure in &figures {
        if let Measured::Skipped { reason } = &figure.measured {
            assert!(
                figure.name.starts_with("cdda") && cdda::data_dir().is_err(),
                "{} skipped: {reason}",
                figure.name
            );
        }
    }
}

#[test]
fn a_filter_picks_figures_by_name() {
    let sizes = QuickSizes::tiny();
    let figures = run_quick_with(Some("scene_binary"), &sizes, &mut |_| {});
    let names: Vec<&str> = figures.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "scene_binary_save_vs_hecs_column",
            "scene_binary_load_vs_hecs_column",
            "scene_binary_load_vs_json_load"
        ]
    );
    assert!(run_quick_with(Some("no such figure"), &sizes, &mut |_| {}).is_empty());
}

#[test]
fn the_real_monster_data_converts_and_loads_with_zero_errors() {
    let dir = match cdda::data_dir() {
        Ok(dir) => dir,
        Err(reason) => return eprintln!("skipped: {reason}"),
    };
    let fixture = CddaFixture::convert(&dir, Some(60)).unwrap();
    assert!(fixture.archetypes() >= 60);
    assert_eq!(fixture.errors(), [] as [String; 0]);
    assert_eq!(fixture.mismatches(), [] as [String; 0]);
    // Every field as the monster writes it: nothing worked out from what it inherits.
    assert_eq!(fixture.pre_resolved(), [] as [String; 0]);
    let (library, errors) = fixture.load();
    assert!(errors.is_empty());
    // The monsters, and the archetype of the game's defaults.
    assert_eq!(library.len(), fixture.archetypes() + 1);
}

/// The real-data proof of the operators: every CDDA modifier of the whole corpus
/// becomes an operator, none is dropped, and every concrete monster spawns exactly as CDDA
/// resolves it. The corpus's two misspelt modifiers are `unused-operator` warnings, and its
/// `delete`s of items the parent does not hold `changes-nothing` ones.
#[test]
fn every_cdda_modifier_becomes_an_operator_and_every_monster_matches() {
    let dir = match cdda::data_dir() {
        Ok(dir) => dir,
        Err(reason) => return eprintln!("skipped: {reason}"),
    };
    let fixture = CddaFixture::convert(&dir, None).unwrap();
    assert_eq!((fixture.archetypes(), fixture.concrete()), (1176, 1143));
    assert_eq!(fixture.dropped(), [] as [String; 0]);
    assert_eq!(fixture.errors(), [] as [String; 0]);
    assert_eq!(fixture.mismatches(), [] as [String; 0]);
    // Every field as the monster writes it: nothing worked out from what it inherits.
    assert_eq!(fixture.pre_resolved(), [] as [String; 0]);
    // 1,240 modifier fields: 1,227 operators, and 13 `extend` / `delete` of a field the monster
    // sets itself, which the game ignores.
    assert_eq!((fixture.modifiers(), fixture.ignored().len()), (1227, 13));
    let (unused, changes_nothing): (Vec<&String>, Vec<&String>) = (fixture.warnings().iter())
        .partition(|warning| warning.contains("warning[unused-operator]"));
    assert_eq!(
        unused,
        [
            "cdda/zed_acid/mon_zombie_dog_brute_acidic.json:65:17: warning[unused-operator]: `$mul` has nothing to scale: nothing this archetype is built on sets `MonsterData.weigth`, and its type gives no default number there, so it is left out",
            "cdda/zed_survivor/mon_zombie_survivor.json:20:15: warning[unused-operator]: `$remove` has nothing to remove from: nothing this archetype is built on sets `MonsterData.flag`, and its type gives no default list there, so it is left out",
        ]
    );
    // The corpus's one `delete` of what the parent does not hold: a no-op in the game's data
    // too. (Attacks are deleted by name, whatever form the parent wrote them in: none left.)
    assert_eq!(
        changes_nothing,
        ["cdda/insect_spider/mon_spider_cellar_small.json:8:11: warning[changes-nothing]: `$remove` removes nothing here: the list it applies to holds no `\"HOSTILE_SEEN\"`"]
    );
}

fn archetool(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_archetool"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn bench_without_quick_says_how_to_run_criterion() {
    let (code, stdout, stderr) = archetool(&["bench"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(
        stdout.contains("cargo bench -p archetool --bench engine"),
        "{stdout}"
    );
    assert!(stdout.contains("bench --quick"), "{stdout}");
}

#[test]
fn bench_with_a_filter_that_matches_nothing_is_a_usage_error() {
    let (code, stdout, stderr) = archetool(&["bench", "--quick", "spawm"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.starts_with(
            "error: no figure matches `spawm`; the figures are: memory, memory_override_bytes, scene_load_peak_1m_instances, library_bytes_per_archetype, spawn_by_name_vs_static,"
        ),
        "{stderr}"
    );
}
