//! `archetool cook`: the library as one cooked file, for a shipped game to load instead of
//! its JSON ([`ArchetypeLibrary::load_cooked_file`](archetype_engine::ArchetypeLibrary::load_cooked_file)).

use std::path::PathBuf;

use clap::Args;

use super::{write_atomically, CliError, Context, DirArg, Exit};

/// Arguments of `archetool cook`.
#[derive(Clone, Debug, Args)]
pub struct CookArgs {
    /// Where to write the cooked library (replaced atomically).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Loads the library, cooks it and writes the cook to `--out`, then prints
/// `cooked N archetypes into FILE (B bytes)`. A library with errors is not cooked: its
/// errors are printed as `validate` prints them (one line each) and nothing is written.
///
/// # Errors
/// [`CliError::Usage`] for a missing archetypes directory; [`CliError::Invalid`] (exit code
/// 1) for a library with errors; [`CliError::Io`] if the file cannot be written.
pub fn cook(args: &CookArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let errors: Vec<_> = (library.diagnostics().iter())
        .filter(|d| d.is_error())
        .collect();
    if !errors.is_empty() {
        for error in &errors {
            writeln!(context.out, "{error}")?;
        }
        return Err(CliError::Invalid(format!(
            "not cooked: `{}` has {} error{} (see `archetool validate`)",
            args.dir.dir.display(),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        )));
    }
    let cooked = library
        .cook()
        .map_err(|error| CliError::Invalid(format!("not cooked: {error}")))?;
    write_atomically(&args.out, &cooked)?;
    writeln!(
        context.out,
        "cooked {} archetypes into {} ({} bytes)",
        library.len(),
        args.out.display(),
        cooked.len()
    )?;
    Ok(Exit::Success)
}
