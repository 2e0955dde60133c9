//! `archetool bench`: the quick benchmarks, one stable line per figure.

use clap::Args;

use crate::bench::{run_quick_with, QuickSizes, FIGURES};
use crate::cli::{CliError, Context, Exit};

/// How to run the full benchmarks, printed by `archetool bench` without `--quick`.
const CRITERION: &str = "\
The full benchmarks use criterion (statistics, baselines side by side in every group):
  cargo bench -p archetool --bench engine            # every timing figure
  cargo bench -p archetool --bench engine -- scene   # the groups whose name contains `scene`
  cargo bench -p archetool --bench memory            # bytes per entity (counting allocator)
For one line per figure in about half a minute:
  cargo run --release -p archetool -- bench --quick [FILTER]";

/// Arguments of `archetool bench`.
#[derive(Clone, Debug, Args)]
pub struct BenchArgs {
    /// Run every comparison briefly and print one line per figure.
    #[arg(long)]
    pub quick: bool,
    /// Only the figures whose name contains FILTER (e.g. `scene`, `reload`, `spawn_many`).
    #[arg(value_name = "FILTER", requires = "quick")]
    pub filter: Option<String>,
}

/// Runs `archetool bench`.
///
/// With `--quick`: every comparison whose name contains FILTER, at the sizes the targets are
/// stated for, ours and the baseline alternating; each figure's line is printed as soon as it
/// is measured. Without: how to run the criterion benchmarks.
///
/// # Errors
/// [`CliError::Usage`] if FILTER matches no figure; [`CliError::Output`] if the output cannot
/// be written.
pub fn bench(args: &BenchArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    if !args.quick {
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
    let mut written = Ok(());
    run_quick_with(filter, &QuickSizes::standard(), &mut |figure| {
        if written.is_ok() {
            written = writeln!(context.out, "{figure}").and_then(|()| context.out.flush());
        }
    });
    written?;
    Ok(Exit::Success)
}
