//! `archetool scene check`: load scenes with the archetypes, as the game would, and report
//! every scene that does not load, for people or for CI (see `report.rs`).
//!
//! Each scene is loaded into its own scratch world, so one that fails does not stop the
//! others. A scene's problems are the loader's, in check mode (`SceneLoadOptions::all_errors`):
//! every entity's problem (the loader goes on past each), or the one problem with the file as
//! a whole that stops it (its syntax, format or size), and every field a component does not
//! have (read past, to list them all). What loading changes because the archetypes changed since
//! the save (entries left out, old names read as current ones, children spawned) is said as
//! warnings and notes: a scene that loads so is not a failure.

use std::path::{Path, PathBuf};

use archetype_engine::{
    load_scene_from_path, ArchetypeInstance, ArchetypeLibrary, Diagnostic, DiagnosticCode,
    LoadedScene, SceneChange, SceneError, SceneLoadOptions, Severity,
};
use clap::Args;
use hecs::World;

use super::report::{self, SarifLog};
use super::scene::{self, placed, require_file, write_scene_error, Archetypes};
use super::validate::{OutputFormat, SourceTexts};
use super::{count, CliError, Context, DirArg, Exit};

/// Arguments of `scene check`.
#[derive(Debug, Args)]
pub struct SceneCheckArgs {
    /// Scene files (`*.scene.json`, `*.scene.bin`) and directories to search for them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
    /// How to report the problems.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
}

/// What checking one scene found.
enum Outcome {
    /// It loads: entities from archetypes, plain entities; what loading changes, as warnings
    /// (entries left out, old names) and notes (children spawned).
    Loads {
        from_archetypes: usize,
        plain: usize,
        warnings: Vec<SceneError>,
        notes: Vec<String>,
    },
    /// It does not load: every entity's problem (the loader goes on past each to find the
    /// others), or the one that stops a load at once (the file's syntax, its format, a limit).
    Fails(Vec<SceneError>),
    /// It does not load as a game loads it: fields components do not have.
    UnknownFields(Vec<SceneError>),
}

/// Checks every scene named or found under the paths; exit code 1 if any does not load.
///
/// # Errors
/// [`CliError::Usage`] if a path does not exist, a directory holds no scene, or the
/// archetypes directory does not exist.
pub fn check(args: &SceneCheckArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let files = scene_files(&args.paths)?;
    let mut archetypes = Archetypes::new(&args.dir.dir);
    let library = archetypes.get(context)?;
    let outcomes: Vec<(PathBuf, Outcome)> = files
        .into_iter()
        .map(|file| {
            let outcome = check_one(&file, library);
            (file, outcome)
        })
        .collect();
    let archetype_errors = library.error_count();
    let failed = outcomes
        .iter()
        .filter(|(_, outcome)| !matches!(outcome, Outcome::Loads { .. }))
        .count();
    match args.format {
        OutputFormat::Human => {
            for (file, outcome) in &outcomes {
                write_outcome(context.out, file, outcome)?;
            }
            if outcomes.len() > 1 {
                let ok = outcomes.len() - failed;
                let scenes = count(outcomes.len(), "scene");
                writeln!(context.out, "{scenes}: {ok} ok, {failed} not loading")?;
            }
            if failed > 0 && archetype_errors > 0 {
                writeln!(
                    context.out,
                    "note: the archetypes have {}; `archetool validate --dir {}` lists them",
                    count(archetype_errors, "error"),
                    args.dir.dir.display()
                )?;
            }
        }
        format => write_problems(context.out, format, &outcomes)?,
    }
    Ok(if failed > 0 {
        Exit::Findings
    } else {
        Exit::Success
    })
}

fn check_one(file: &Path, library: &ArchetypeLibrary) -> Outcome {
    let mut world = World::new();
    let loaded = load_scene_from_path(file, &mut world, library, &check_options());
    outcome(loaded, &world)
}

/// The problems checking finds in a JSON scene's text that is not (or not yet) saved, as if
/// it were read from `file`: its errors when it does not load, else its warnings. For the
/// language server, which checks open buffers.
#[cfg(feature = "lsp")]
pub(crate) fn problems_in_text(
    text: &str,
    file: &Path,
    library: &ArchetypeLibrary,
) -> Vec<SceneError> {
    let mut world = World::new();
    let loaded = archetype_engine::load_scene(
        text.as_bytes(),
        Some(file),
        &mut world,
        library,
        &check_options(),
    );
    outcome(loaded, &world).problems().to_vec()
}

/// How checking loads a scene: unknown fields are errors when a game loads the scene; it
/// reads on past them, and past each entity's problem, to list every one at once.
fn check_options() -> SceneLoadOptions {
    let mut options = SceneLoadOptions::default();
    options.unknown_fields = Severity::Warning;
    options.all_errors = true;
    options
}

/// What a load's result says of the scene.
fn outcome(loaded: Result<LoadedScene, SceneError>, world: &World) -> Outcome {
    let loaded = match loaded {
        Err(error) => return Outcome::Fails(error.into_all()),
        Ok(loaded) => loaded,
    };
    let (unknown, warnings): (Vec<SceneError>, Vec<SceneError>) = (loaded.warnings().iter())
        .cloned()
        .partition(|warning| warning.diagnostic().code == DiagnosticCode::UnknownField);
    if !unknown.is_empty() {
        let errors = unknown.into_iter();
        let errors = errors.map(|error| error.with_severity(Severity::Error));
        return Outcome::UnknownFields(errors.collect());
    }
    let notes = (loaded.changes().iter())
        .filter(|change| matches!(change, SceneChange::ChildSpawned { .. }))
        .map(ToString::to_string)
        .collect();
    let from_archetypes = loaded
        .entities()
        .iter()
        .filter(|entity| world.get::<&ArchetypeInstance>(**entity).is_ok())
        .count();
    Outcome::Loads {
        from_archetypes,
        plain: loaded.len() - from_archetypes,
        warnings,
        notes,
    }
}

impl Outcome {
    /// The problems found: the errors of a scene that does not load, the warnings of one
    /// that does.
    fn problems(&self) -> &[SceneError] {
        match self {
            Outcome::Loads { warnings, .. } => warnings,
            Outcome::Fails(errors) | Outcome::UnknownFields(errors) => errors,
        }
    }
}

/// One scene's result for people: `FILE: ok (...)`, or each problem as `validate` shows one.
fn write_outcome(
    out: &mut dyn std::io::Write,
    file: &Path,
    outcome: &Outcome,
) -> Result<(), CliError> {
    match outcome {
        Outcome::Loads {
            from_archetypes,
            plain,
            warnings,
            notes,
        } => {
            for warning in warnings {
                write_scene_error(out, warning)?;
                writeln!(out)?;
            }
            for note in notes {
                writeln!(out, "note: {note}")?;
            }
            writeln!(
                out,
                "{}: ok ({}: {from_archetypes} from archetypes, {plain} plain)",
                file.display(),
                count(from_archetypes + plain, "entity"),
            )?;
        }
        Outcome::Fails(errors) => {
            for (i, error) in errors.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                write_scene_error(out, error)?;
            }
            if errors.len() > 1 {
                writeln!(out)?;
                let problems = count(errors.len(), "problem");
                writeln!(out, "{}: does not load: {problems}", file.display())?;
            }
        }
        Outcome::UnknownFields(errors) => {
            for error in errors {
                write_scene_error(out, error)?;
                writeln!(out)?;
            }
            writeln!(
                out,
                "{}: does not load: {} (a game can skip them with `SceneLoadOptions::unknown_fields`)",
                file.display(),
                count(errors.len(), "unknown field"),
            )?;
        }
    }
    Ok(())
}

/// Every problem of every scene in a machine format.
fn write_problems(
    out: &mut dyn std::io::Write,
    format: OutputFormat,
    outcomes: &[(PathBuf, Outcome)],
) -> Result<(), CliError> {
    let mut sarif = SarifLog::default();
    for (_, outcome) in outcomes {
        for error in outcome.problems() {
            let (diagnostic, text) =
                placed(error).unwrap_or_else(|| (error.diagnostic().clone(), None));
            let diagnostic = with_offset(diagnostic, error);
            let file = diagnostic.file.clone().unwrap_or_default();
            let sources = match &text {
                Some(text) => SourceTexts::one(&file, text),
                None => SourceTexts::none(),
            };
            match format {
                OutputFormat::Json => report::write_json(out, &diagnostic, &sources)?,
                OutputFormat::Github => report::write_github(out, &diagnostic, &sources)?,
                OutputFormat::Sarif | OutputFormat::Human => sarif.push(&diagnostic, &sources),
            }
        }
    }
    if format == OutputFormat::Sarif {
        sarif.write(out)?;
    }
    Ok(())
}

/// A binary scene's error names the byte in its message (machine formats have no offset field).
fn with_offset(mut diagnostic: Diagnostic, error: &SceneError) -> Diagnostic {
    if let Some(offset) = error.offset() {
        diagnostic.message = format!("at byte {offset}: {}", diagnostic.message);
    }
    diagnostic
}

/// The scene files among `paths` and under the directories among them (recursively, sorted,
/// hidden entries skipped), in the order given.
///
/// # Errors
/// [`CliError::Usage`] if a path does not exist or a directory holds no scene file.
fn scene_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = scene::scene_files(path)?;
            if found.is_empty() {
                return Err(CliError::Usage(format!(
                    "no scene files (`*.scene.json`, `*.scene.bin`) under `{}`",
                    path.display()
                )));
            }
            files.extend(found);
        } else {
            require_file(path)?;
            files.push(path.clone());
        }
    }
    Ok(files)
}
