//! `archetool bench`: the quick benchmarks, one stable line per figure, run once or several
//! times; and `BENCHMARKS.md`, generated from several runs (`--markdown`).

use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use clap::Args;

use crate::bench::markdown::{self, Header, Run};
use crate::bench::{run_quick_with, QuickSizes, FIGURES};
use crate::cli::{CliError, Context, Exit};

/// How to run the full benchmarks, printed by `archetool bench` without `--quick`.
const CRITERION: &str = "\
The full benchmarks use criterion (statistics, baselines side by side in every group):
  cargo bench -p archetool --bench engine            # every timing figure
  cargo bench -p archetool --bench engine -- scene   # the groups whose name contains `scene`
  cargo bench -p archetool --bench memory            # bytes per entity (counting allocator)
For one line per figure in about half a minute:
  cargo run --release -p archetool -- bench --quick [FILTER]
For BENCHMARKS.md, from five runs:
  cargo run --release -p archetool -- bench --quick --runs 5 --markdown > BENCHMARKS.md";

/// Arguments of `archetool bench`.
#[derive(Clone, Debug, Args)]
pub struct BenchArgs {
    /// Run every comparison briefly and print one line per figure.
    #[arg(long)]
    pub quick: bool,
    /// With `--quick`: run the quick suite N times (default 1), each run after the first in a
    /// fresh process, and print every run's lines.
    #[arg(
        long,
        value_name = "N",
        requires = "quick",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub runs: Option<u32>,
    /// Print BENCHMARKS.md instead of the lines: each figure's median, range and target over
    /// the runs of `--quick`, or over the saved runs `--from` reads.
    #[arg(long)]
    pub markdown: bool,
    /// With `--markdown`: the saved runs, one file per run, each the output of
    /// `archetool bench --quick > runK.txt`.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 1..,
        requires = "markdown",
        conflicts_with = "quick"
    )]
    pub from: Vec<PathBuf>,
    /// With `--markdown`: the machine to name instead of the CPU model and number of logical
    /// CPUs in /proc/cpuinfo.
    #[arg(long, value_name = "TEXT", requires = "markdown")]
    pub machine: Option<String>,
    /// With `--markdown`: the commit to name instead of `git rev-parse --short HEAD`.
    #[arg(long, value_name = "TEXT", requires = "markdown")]
    pub commit: Option<String>,
    /// With `--markdown`: the date to name instead of today's (UTC).
    #[arg(long, value_name = "TEXT", requires = "markdown")]
    pub date: Option<String>,
    /// Only the figures whose name contains FILTER (e.g. `scene`, `reload`, `spawn_many`).
    #[arg(value_name = "FILTER", requires = "quick")]
    pub filter: Option<String>,
}

/// Runs `archetool bench`.
///
/// With `--quick`: every comparison whose name contains FILTER, at the sizes the targets are
/// stated for, ours and the baseline alternating; each figure's line is printed as soon as it
/// is measured. `--runs N` does that N times: the first run in this process, each later one in
/// a fresh `archetool bench --quick` (the memory figures are measured first in a process that
/// has freed little memory). With `--markdown`, the runs' lines are not printed: the document
/// of [`markdown::render`] is, once they are all done. `--markdown --from FILE...` renders the
/// saved runs instead of running any. Without `--quick` or `--from`: how to run the criterion
/// benchmarks.
///
/// # Errors
/// [`CliError::Usage`] if FILTER matches no figure, or `--markdown` has neither `--quick` nor
/// `--from`; [`CliError::Io`] if a saved run cannot be read or a later run cannot be started or
/// fails; [`CliError::Invalid`] if a saved run has a line that is not a figure's;
/// [`CliError::Output`] if the output cannot be written.
pub fn bench(args: &BenchArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    if !args.from.is_empty() {
        let mut runs = Vec::new();
        for path in &args.from {
            let text = std::fs::read_to_string(path).map_err(|error| {
                CliError::io(format!("cannot read `{}`", path.display()), error)
            })?;
            let parsed = markdown::parse_runs(&path.display().to_string(), &text)
                .map_err(|error| CliError::Invalid(error.to_string()))?;
            runs.extend(parsed);
        }
        return write_markdown(args, &runs, context);
    }
    if !args.quick {
        if args.markdown {
            return Err(CliError::Usage(
                "`--markdown` renders runs: give the saved ones (`--from FILE...`) or run them \
                 (`--quick [--runs N]`)"
                    .to_string(),
            ));
        }
        writeln!(context.out, "{CRITERION}")?;
        return Ok(Exit::Success);
    }
    let filter = args.filter.as_deref();
    if let Some(filter) = filter {
        if !FIGURES.iter().any(|name| name.contains(filter)) {
            return Err(CliError::Usage(format!(
                "no figure matches `{filter}`; the figures are: {}",
                FIGURES.join(", ")
            )));
        }
    }
    let count = args.runs.unwrap_or(1);
    let mut runs = Vec::new();
    for run in 1..=count {
        let mut lines = Vec::new();
        let mut print = |line: String| -> io::Result<()> {
            if !args.markdown {
                writeln!(context.out, "{line}")?;
                context.out.flush()?;
            }
            lines.push(line);
            Ok(())
        };
        if run == 1 {
            let mut written = Ok(());
            run_quick_with(filter, &QuickSizes::standard(), &mut |figure| {
                if written.is_ok() {
                    written = print(figure.to_string());
                }
            });
            written?;
        } else {
            run_in_a_fresh_process(filter, (run, count), &mut print)?;
        }
        let parsed = markdown::parse_runs(&format!("run {run}"), &lines.join("\n"))
            .map_err(|error| CliError::Invalid(error.to_string()))?;
        runs.extend(parsed);
    }
    if args.markdown {
        return write_markdown(args, &runs, context);
    }
    Ok(Exit::Success)
}

/// Runs `archetool bench --quick [FILTER]` as a child process of the running executable,
/// handing `print` each line it prints as it comes.
fn run_in_a_fresh_process(
    filter: Option<&str>,
    (run, count): (u32, u32),
    print: &mut dyn FnMut(String) -> io::Result<()>,
) -> Result<(), CliError> {
    let what = format!("run {run} of {count} (`archetool bench --quick` in a fresh process)");
    let exe = std::env::current_exe()
        .map_err(|error| CliError::io(format!("cannot start {what}"), error))?;
    let mut command = Command::new(exe);
    command.args(["bench", "--quick"]).args(filter);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|error| CliError::io(format!("cannot start {what}"), error))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(CliError::io(
            format!("cannot read {what}"),
            io::Error::other("no standard output"),
        ));
    };
    let mut forwarded = Ok(());
    for line in BufReader::new(stdout).lines() {
        match line {
            Ok(line) => forwarded = print(line).map_err(CliError::Output),
            Err(error) => forwarded = Err(CliError::io(format!("cannot read {what}"), error)),
        }
        if forwarded.is_err() {
            break;
        }
    }
    if forwarded.is_err() {
        // Nothing will read the rest of its output.
        let _ = child.kill();
    }
    let status = child
        .wait()
        .map_err(|error| CliError::io(format!("cannot wait for {what}"), error))?;
    forwarded?;
    if !status.success() {
        return Err(CliError::io(
            format!("{what} failed"),
            io::Error::other(status.to_string()),
        ));
    }
    Ok(())
}

/// Prints the document of `runs`, its header from `args` and the machine it runs on.
fn write_markdown(
    args: &BenchArgs,
    runs: &[Run],
    context: &mut Context<'_>,
) -> Result<Exit, CliError> {
    let header = Header {
        command: command_line(args),
        machine: args
            .machine
            .clone()
            .unwrap_or_else(markdown::detect_machine),
        commit: args.commit.clone().unwrap_or_else(markdown::detect_commit),
        date: args.date.clone().unwrap_or_else(markdown::today),
    };
    write!(context.out, "{}", markdown::render(&header, runs))?;
    Ok(Exit::Success)
}

/// The command that gave `args`, as a shell would take it.
fn command_line(args: &BenchArgs) -> String {
    let mut words = vec!["archetool".to_string(), "bench".to_string()];
    if args.quick {
        words.push("--quick".to_string());
    }
    if let Some(runs) = args.runs {
        words.extend(["--runs".to_string(), runs.to_string()]);
    }
    words.push("--markdown".to_string());
    if !args.from.is_empty() {
        words.push("--from".to_string());
        words.extend(
            args.from
                .iter()
                .map(|path| shell_word(&path.to_string_lossy())),
        );
    }
    for (flag, value) in [
        ("--machine", &args.machine),
        ("--commit", &args.commit),
        ("--date", &args.date),
    ] {
        if let Some(value) = value {
            words.extend([flag.to_string(), shell_word(value)]);
        }
    }
    words.extend(args.filter.as_deref().map(shell_word));
    words.join(" ")
}

/// `word` as a shell takes it: as it is when it has no special characters, otherwise in single
/// quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_special_characters_are_quoted() {
        assert_eq!(shell_word("runs/run1.txt"), "runs/run1.txt");
        assert_eq!(shell_word("AMD EPYC, 2 cores"), "'AMD EPYC, 2 cores'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
