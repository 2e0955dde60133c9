//! `archetool explain CODE`: a diagnostic code's entry in the guide's errors chapter — what the
//! problem is, an example, the message and how to fix it — so the explanation is one command
//! away from the `error[code]` that named it.
//!
//! ```text
//! $ archetool explain unknown-component
//! ### `unknown-component`
//!
//! A component name that no component of the game is registered under.
//! ...
//! ```
//!
//! Without a code it lists every code with its one-line summary.

use archetype_engine::tooling::did_you_mean;
use archetype_engine::DiagnosticCode;
use clap::Args;

use super::{CliError, Context, Exit};

/// Arguments of `archetool explain`.
#[derive(Clone, Debug, Args)]
pub struct ExplainArgs {
    /// The code, as diagnostics print it in `error[CODE]` (e.g. `unknown-component`). Without
    /// it, every code is listed with its summary.
    #[arg(value_name = "CODE")]
    pub code: Option<String>,
}

/// Prints the errors chapter's entry for `CODE` and the address of the guide's page for it,
/// or every code with its summary.
///
/// # Errors
/// [`CliError::Usage`] for a code that does not exist (with the nearest one as a suggestion).
pub fn explain(args: &ExplainArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let Some(name) = &args.code else {
        for code in DiagnosticCode::ALL {
            writeln!(context.out, "{:<20} {}", code.as_str(), code.summary())?;
        }
        return Ok(Exit::Success);
    };
    // `error[unknown-component]`, as a diagnostic prints it, names the code too.
    let bare = (name.split_once('[')).map_or(name.as_str(), |(_, code)| code.trim_end_matches(']'));
    let Some(code) = DiagnosticCode::from_name(bare) else {
        let names = DiagnosticCode::ALL.iter().map(|code| code.as_str());
        let hint = match did_you_mean(name, names) {
            Some(near) => format!("; did you mean `{near}`?"),
            None => String::new(),
        };
        return Err(CliError::Usage(format!(
            "unknown code `{name}`{hint} (`archetool explain` lists every code)"
        )));
    };
    writeln!(context.out, "{}", code.explanation())?;
    writeln!(context.out)?;
    writeln!(context.out, "Online: {}", code.help_uri())?;
    Ok(Exit::Success)
}
