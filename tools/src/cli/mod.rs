//! The `archetool` command line, as a library: a game with its own components builds its own
//! `archetool` by handing [`run`] its [`ComponentRegistry`].
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use archetype_engine::ComponentRegistry;
//!
//! fn main() -> ExitCode {
//!     let mut registry = ComponentRegistry::new();
//!     // registry.register_with_schema::<Health>().unwrap(); ... the game's components
//!     let mut out = std::io::stdout().lock();
//!     let mut err = std::io::stderr().lock();
//!     archetool::cli::run(std::env::args_os(), registry, &mut out, &mut err).into()
//! }
//! ```
//!
//! # Subcommands
//! One function per subcommand, one file each: [`validate`](validate::validate),
//! [`explain`](explain::explain), [`inspect`](inspect::inspect), [`tree`](tree::tree), [`schema`](schema::schema),
//! [`fmt`](fmt::fmt), [`new`](new::new), [`scene`](scene::scene) (`info`, `check`, and `diff`
//! in [`scene_diff`]), [`cook`](cook::cook), [`migrate`](migrate::migrate), [`promote`](promote::promote); with the crate's features of the same
//! names, `demo` (the live arena of `archetool::demo`), `bench` (the quick benchmarks of
//! `archetool::bench`) and `lsp` (a language server, in a folder of its own). A subcommand
//! whose feature is off is not built: `--help` does not list it. Every one that reads
//! archetypes takes `--dir DIR` (default `archetypes`).
//!
//! # Output and exit codes
//! What a command produces, its findings included, goes to `out`; an error that stops it is
//! printed once, to `err`, as `error: ...`. Control characters in either (from a key or a name
//! in a file) are escaped, shown as `\u{1b}` ([`printable`](archetype_engine::printable)), so
//! no file can drive the terminal. The exit code ([`Exit`]) is
//! - 0: success, nothing to report;
//! - 1: findings: validation errors, files `fmt --check` or `migrate --check` would change,
//!   files `fmt` or `migrate` could not read, an archetype `inspect` cannot resolve, a scene
//!   that does not load, scenes `scene diff` finds different;
//! - 2: usage or I/O errors: bad arguments, an unknown archetype name, a missing directory, a
//!   file that cannot be written.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use archetype_engine::tooling::did_you_mean;
use archetype_engine::{ArchetypeLibrary, ComponentRegistry, Diagnostic, LoadOptions};
use clap::{Args, Parser, Subcommand};
use serde_json::Value;

use printable_output::PrintableOutput;

#[cfg(feature = "bench")]
pub mod bench;
pub mod cook;
#[cfg(feature = "demo")]
pub mod demo;
pub mod explain;
pub mod fmt;
pub mod inspect;
#[cfg(feature = "lsp")]
pub mod lsp;
pub mod migrate;
pub mod new;
mod printable_output;
pub mod promote;
mod raw_json;
mod report;
pub mod scene;
pub mod scene_check;
pub mod scene_diff;
pub mod schema;
mod snippet;
pub mod style;
pub mod tree;
pub mod validate;

/// The exit codes, as `--help` shows them.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  findings: validation errors, files `fmt --check` or `migrate --check` would change,
     a scene that does not load, scenes that differ (`scene diff`)
  2  usage or I/O error";

/// `archetool`'s arguments.
#[derive(Debug, Parser)]
#[command(
    name = "archetool",
    version,
    about = "Validate, inspect, format and migrate archetype and scene files",
    after_help = EXIT_CODES,
    after_long_help = EXIT_CODES
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Colour reports for people: `auto` when standard output is a terminal and NO_COLOR is not
    /// set, `always` (even with NO_COLOR), or `never`.
    // Global, so every subcommand's help shows it: in one entry, its values said once above.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        hide_possible_values = true,
        default_value_t = style::ColorChoice::Auto
    )]
    pub color: style::ColorChoice,
}

/// The subcommands: the data ones always; `demo`, `bench` and `lsp` with the crate's features of
/// those names.
#[derive(Debug, Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Load every archetype and report every problem.
    ///
    /// Human form: `path:line:col: error[code]: message`, the source line with the place
    /// underlined, `= help: did you mean ...?` where there is a suggestion, and a summary line
    /// `N archetypes, E errors, W warnings`. `--format json`: one object per line, with the end
    /// of each place; `github`: workflow annotations; `sarif`: a SARIF 2.1.0 log. Exit code 1
    /// if there is any error.
    Validate(validate::ValidateArgs),
    /// Explain a diagnostic code: what the problem is, an example, and how to fix it.
    ///
    /// Prints the code's entry of the guide's errors chapter (the code as diagnostics print it
    /// in `error[CODE]`, e.g. `unknown-component`) and the address of its page online. Without
    /// CODE, lists every code with a one-line summary.
    Explain(explain::ExplainArgs),
    /// Print an archetype fully resolved, as JSON, or where each value comes from.
    ///
    /// The JSON has the archetype-file form (`archetype`, `components`, `children`) with every
    /// parent applied. `--provenance` prints one line per field instead:
    /// `[#child ]Component.field  value  file:line:col`. An unknown NAME exits with 2, an
    /// archetype with errors with 1.
    Inspect(inspect::InspectArgs),
    /// Draw the inheritance tree, with each archetype's children.
    ///
    /// Roots are the archetypes without parents. Under each archetype: its child entities
    /// (`#name`, `#name -> archetype`), then the archetypes that extend it. Marks: `(abstract)`;
    /// `(*)` for an archetype with several parents already drawn in full above; `(errors)` for
    /// one that does not load.
    Tree(tree::TreeArgs),
    /// Print the JSON Schema of archetype files (for editors).
    ///
    /// Draft 2020-12: top-level keys, every registered component with its fields, types, enum
    /// values and doc comments, `extends` limited to the archetypes under DIR. No field is
    /// required (a file may give a component partly; its parents give the rest).
    Schema(schema::SchemaArgs),
    /// Format archetype files canonically.
    ///
    /// Two-space indentation; top-level keys in the order `$schema`, `format`, `abstract`,
    /// `extends`, `components`, `children` (child entries: `archetype`, `components`,
    /// `children`); every other object's keys sorted, but a vector's axes (`x y z w`, `r g b a`)
    /// in axis order; numbers and strings exactly as written; a final newline.
    ///
    /// One line per member for the file's structure (the top level, `components`, `children`,
    /// child entries). Elsewhere, a value whose line fits in 100 columns stays on one line if
    /// it is an array of scalars (`[0, 1, 0]`) or an object whose members are scalars or such
    /// arrays (`"Health": { "current": 12, "max": 12 }`); `{}` and `[]` count as scalars.
    ///
    /// Files that are not JSON are reported (exit code 1) and left alone. A symbolic link
    /// stays a link: the file it points to is formatted.
    Fmt(fmt::FmtArgs),
    /// Create a new archetype file.
    ///
    /// Writes DIR/NAME.json with `$schema` (relative to the new file), `extends` if given and
    /// empty `components`, and prints its path. Never overwrites a file. When the `--schema`
    /// file exists, it is generated again, so editors suggest the new archetype too.
    New(new::NewArgs),
    /// Summarize, check or compare scene files.
    Scene(scene::SceneArgs),
    /// Write the library as one cooked file for a shipped game.
    ///
    /// Every archetype resolved and compiled, with its names and former names, in one
    /// versioned, checksummed binary file (the same library gives the same bytes), which
    /// `ArchetypeLibrary::load_cooked_file` loads instead of reading, parsing and resolving
    /// the JSON. A library with errors is not cooked (exit code 1, its errors printed).
    Cook(cook::CookArgs),
    /// Upgrade archetype and scene files: current component names, current format version.
    ///
    /// Archetype files under DIR: renames components written under old names (registry
    /// aliases) and raises an older `format` to the current version, editing the text in place
    /// (an archetype file without `format` keeps none). Scene files under the scenes directory
    /// (`*.scene.json`, `*.scene.bin`) in an older format or with old component names: loaded
    /// with the archetypes and saved again, as the library saves scenes. Files are rewritten
    /// atomically, and each change is printed.
    Migrate(migrate::MigrateArgs),
    /// Write a scene entity's differences from its archetype back into archetype files.
    ///
    /// The entity is named by its stable ID. `--apply` writes the values it overrides (or the
    /// `--field`s: `Health.max`, `Speed`) into its archetype's file, each as the smallest text
    /// edit (the rest of the file byte for byte), atomically. `--save-as NAME` writes a new
    /// archetype NAME (held to the loader's name rules) that `extends` the entity's with its
    /// differences. Prints each value written. The scene file is not changed.
    Promote(promote::PromoteArgs),
    /// Play the live demo: a terminal arena whose entities all come from `archetypes/`.
    ///
    /// Edit an archetype file while it runs (a goblin's glyph, colour or speed) and every live
    /// instance changes; edit the scene file (move the door, add a goblin) and the arena
    /// follows; break the JSON and the error shows in the side panel while the game runs on the
    /// last good version. Keys: `s` save the scene, `l` load it, `r` reload every
    /// file, `p` pause, `q` quit. `--headless --frames N` runs the same simulation without a
    /// terminal and prints a summary line per simulated second.
    #[cfg(feature = "demo")]
    Demo(demo::DemoArgs),
    /// Run the benchmarks briefly: one machine-readable line per figure, or BENCHMARKS.md.
    ///
    /// `--quick` runs every comparison (ours against its baseline, alternating) in about half
    /// a minute and prints lines such as
    /// `spawn_by_name_vs_static ratio=1.12 (ours 1.83 ms, baseline 1.63 ms, n=100000)` or
    /// `reload_latency p50_ms=31.2 p99_ms=33.9 (max 35.0 ms, n=30)`. FILTER keeps the figures
    /// whose name contains it; `--runs N` runs the suite N times (each run after the first in
    /// a fresh process) and prints every run's lines.
    ///
    /// `--markdown` prints BENCHMARKS.md instead: for each figure, the median and range over
    /// the runs, in how many it was measured, and its target with whether the median meets it;
    /// with a header naming the command, the machine, the commit and the date. With
    /// `--quick [--runs N]`, of the runs it makes; with `--from FILE...`, of saved runs, one file
    /// per run as `archetool bench --quick > runK.txt` wrote it. `--machine`, `--commit` and
    /// `--date` replace what it finds (/proc/cpuinfo, `git rev-parse --short HEAD`, today).
    ///
    /// Without `--quick` or `--from`, prints how to run the criterion benchmarks. Build with
    /// `--release` for meaningful numbers.
    #[cfg(feature = "bench")]
    Bench(bench::BenchArgs),
    /// Serve the Language Server Protocol on standard input and output, for editors.
    ///
    /// For archetype files under DIR and scene files (`*.scene.json`): `validate`'s and
    /// `scene check`'s diagnostics as the buffer changes (unsaved text included, across files),
    /// completion of component, field, variant and archetype names, hover with resolved values
    /// and where they come from, go to definition, references and rename of archetypes, quick
    /// fixes for suggestions, and `fmt`'s formatting. The guide's editors chapter
    /// (`archetype_engine::guide::tools::editors`) shows how to start it from VS Code, Neovim
    /// and Helix.
    #[cfg(feature = "lsp")]
    Lsp(lsp::LspArgs),
}

/// The directory beside the archetypes root that `AssetPath` fields are relative to.
pub const ASSETS_DIR: &str = "assets";

/// The archetypes root, shared by the subcommands that read archetypes.
#[derive(Clone, Debug, Args)]
pub struct DirArg {
    /// The archetypes root directory.
    #[arg(long, value_name = "DIR", default_value = "archetypes")]
    pub dir: PathBuf,
}

/// How a command ended, as a process exit code (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: success, nothing to report.
    Success,
    /// 1: the command found problems in the data (or changes to make, with `--check`).
    Findings,
    /// 2: bad arguments, or a file that could not be read or written.
    Error,
}

impl Exit {
    /// The numeric exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Findings => 1,
            Exit::Error => 2,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

/// Why a command stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// The arguments do not make sense (an unknown archetype, a file that already exists, ...).
    /// Exit code 2.
    Usage(String),
    /// A file or directory could not be read or written. Exit code 2.
    Io {
        /// What was being done, e.g. "cannot write `archetypes/goblin.json`".
        action: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The data has problems that keep the command from doing its job (the message says
    /// which). Exit code 1.
    Invalid(String),
    /// Writing the command's output failed (e.g. the reader of a pipe went away).
    Output(io::Error),
}

impl CliError {
    /// An I/O error while doing `action`.
    pub(crate) fn io(action: impl Into<String>, source: io::Error) -> Self {
        CliError::Io {
            action: action.into(),
            source,
        }
    }

    /// The exit code the error maps to.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Invalid(_) => Exit::Findings,
            CliError::Usage(_) | CliError::Io { .. } | CliError::Output(_) => Exit::Error,
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(message) | CliError::Invalid(message) => f.write_str(message),
            CliError::Io { action, source } => write!(f, "{action}: {source}"),
            CliError::Output(source) => write!(f, "cannot write output: {source}"),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CliError::Io { source, .. } | CliError::Output(source) => Some(source),
            CliError::Usage(_) | CliError::Invalid(_) => None,
        }
    }
}

impl From<io::Error> for CliError {
    /// Errors of `write!` to the output.
    fn from(error: io::Error) -> Self {
        CliError::Output(error)
    }
}

/// What every subcommand works with: the registry and where its output goes.
pub struct Context<'a> {
    /// The components archetype files may use.
    pub registry: Arc<ComponentRegistry>,
    /// Where the command's output (its findings included) goes.
    pub out: &'a mut dyn Write,
}

impl Context<'_> {
    /// Loads every archetype under `dir`. A library with errors is returned all the same (it
    /// serves whatever is valid; its diagnostics say what is not). `AssetPath` fields are
    /// checked against the `assets` directory beside `dir`, when there is one.
    ///
    /// # Errors
    /// [`CliError::Usage`] if `dir` is not a directory.
    pub fn load(&self, dir: &Path) -> Result<ArchetypeLibrary, CliError> {
        self.load_with(dir, false)
    }

    /// [`load`](Self::load), noting each value equal to what is inherited there when
    /// `same_as_inherited` (see [`LoadOptions::same_as_inherited`]).
    ///
    /// # Errors
    /// [`CliError::Usage`] if `dir` is not a directory.
    pub fn load_with(
        &self,
        dir: &Path,
        same_as_inherited: bool,
    ) -> Result<ArchetypeLibrary, CliError> {
        if !dir.is_dir() {
            return Err(CliError::Usage(format!(
                "archetypes directory `{}` not found (run from the project root or pass --dir)",
                dir.display()
            )));
        }
        let assets = dir.parent().map(|parent| parent.join(ASSETS_DIR));
        let mut options = LoadOptions::default();
        options.assets_root = assets.filter(|assets| assets.is_dir());
        options.same_as_inherited = same_as_inherited;
        Ok(
            match ArchetypeLibrary::load_with(dir, Arc::clone(&self.registry), options) {
                Ok(library) => library,
                Err(error) => error.into_partial(),
            },
        )
    }
}

/// Parses `args` (the program name first, as [`std::env::args_os`] gives them), runs the
/// subcommand with `registry`, writes its output to `out` and any error, once, to `err`.
///
/// `--help` and `--version` print to `out` and succeed; argument errors print clap's message to
/// `err` and give [`Exit::Error`].
pub fn run<I, T>(
    args: I,
    registry: ComponentRegistry,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args);
    // The language server's messages are JSON-RPC for an editor, written as they are (serde_json
    // escapes control characters inside strings; the framing's `\r\n` must stay).
    #[cfg(feature = "lsp")]
    if let Ok(Cli {
        command: Command::Lsp(args),
        ..
    }) = &cli
    {
        let mut err = PrintableOutput::new(err);
        let input = Box::new(io::BufReader::new(io::stdin()));
        return lsp::serve(args, registry, input, out, &mut err);
    }
    let (mut out, mut err) = (PrintableOutput::new(out), PrintableOutput::new(err));
    let (out, err): (&mut dyn Write, &mut dyn Write) = (&mut out, &mut err);
    let cli = match cli {
        Ok(cli) => cli,
        Err(error) => {
            let text = error.render().to_string();
            // Nothing sensible is left to do if even these writes fail.
            return if error.use_stderr() {
                let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
                Exit::Error
            } else {
                let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
                Exit::Success
            };
        }
    };
    let _colour = style::ColourGuard::set(cli.color.enabled());
    let mut context = Context {
        registry: Arc::new(registry),
        out,
    };
    let result = execute(cli.command, &mut context).and_then(|exit| {
        context.out.flush()?;
        Ok(exit)
    });
    match result {
        Ok(exit) => exit,
        // The reader went away (`archetool tree | head`): not worth a message.
        Err(CliError::Output(error)) if error.kind() == io::ErrorKind::BrokenPipe => Exit::Success,
        Err(error) => {
            let _ = writeln!(err, "error: {error}").and_then(|()| err.flush());
            error.exit()
        }
    }
}

/// Runs one parsed subcommand.
///
/// # Errors
/// Whatever stops the subcommand; its findings are not errors (they give [`Exit::Findings`]).
pub fn execute(command: Command, context: &mut Context<'_>) -> Result<Exit, CliError> {
    match command {
        Command::Validate(args) => validate::validate(&args, context),
        Command::Explain(args) => explain::explain(&args, context),
        Command::Inspect(args) => inspect::inspect(&args, context),
        Command::Tree(args) => tree::tree(&args, context),
        Command::Schema(args) => schema::schema(&args, context),
        Command::Fmt(args) => fmt::fmt(&args, context),
        Command::New(args) => new::new(&args, context),
        Command::Scene(args) => scene::scene(&args, context),
        Command::Cook(args) => cook::cook(&args, context),
        Command::Migrate(args) => migrate::migrate(&args, context),
        Command::Promote(args) => promote::promote(&args, context),
        #[cfg(feature = "demo")]
        Command::Demo(args) => demo::demo(&args, context),
        #[cfg(feature = "bench")]
        Command::Bench(args) => bench::bench(&args, context),
        // The protocol is not text for a terminal: `run` serves it on the raw streams.
        #[cfg(feature = "lsp")]
        Command::Lsp(_) => Err(CliError::Usage(
            "`lsp` serves standard input and output; start it through `archetool::cli::run`"
                .to_string(),
        )),
    }
}

/// The error for an archetype name the library does not have.
pub(crate) fn unknown_archetype(name: &str, library: &ArchetypeLibrary) -> CliError {
    let mut message = format!("no archetype `{name}` in `{}`", library.root().display());
    if let Some(suggestion) = did_you_mean(name, library.names()) {
        message.push_str(&format!("; did you mean `{suggestion}`?"));
    }
    CliError::Usage(message)
}

/// Writes `bytes` to `path` atomically (the engine's [`write_atomically`]: a synced temporary
/// file renamed over `path`), so a reader or the hot reloader never sees half a file.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    archetype_engine::tooling::write_atomically(path, bytes)
        .map_err(|error| CliError::io(format!("cannot write `{}`", path.display()), error))
}

/// Like [`write_atomically`], but never replaces a file: `Ok(false)` if `path` exists.
pub(crate) fn create_atomically(path: &Path, bytes: &[u8]) -> Result<bool, CliError> {
    archetype_engine::tooling::create_atomically(path, bytes)
        .map_err(|error| CliError::io(format!("cannot write `{}`", path.display()), error))
}

/// A value on one line: `[0, 1, 0]`, `{"a": 1}`.
pub(crate) fn one_line(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(one_line).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(object) => {
            let mut members: Vec<(&String, &Value)> = object.iter().collect();
            members.sort_by_key(|(key, _)| *key);
            let members: Vec<String> = members
                .into_iter()
                .map(|(key, value)| format!("{}: {}", Value::String(key.clone()), one_line(value)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

/// `n thing` or `n things` (`n entities` for `entity`).
pub(crate) fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        return format!("{n} {thing}");
    }
    match thing.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{n} {stem}ies"),
        _ => format!("{n} {thing}s"),
    }
}

/// An archetype file as the library read it.
pub(crate) struct Source<'a> {
    /// The path, as diagnostics show it.
    pub file: &'a Path,
    /// Where the library read it: its real path (links resolved, inside the root). Rewrites go
    /// there, so a symbolic link stays a link.
    pub real: &'a Path,
    /// The text (without a byte-order mark).
    pub text: &'a str,
}

/// The library's files that `fmt` and `migrate` can rewrite, and the problems of those they
/// cannot even read as JSON (which they leave alone). A file read under several names (through
/// symbolic links inside the root) is listed once, under its own path where it has one.
pub(crate) fn rewritable_sources(
    library: &ArchetypeLibrary,
) -> (Vec<Source<'_>>, Vec<&Diagnostic>) {
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    let root = library.root();
    // Names read through a link last, so a file is listed under its own path.
    let mut names: Vec<&str> = library.names().collect();
    names.sort_by_key(|name| {
        let real = library.real_file_of(name);
        let file = library
            .file_of(name)
            .and_then(|file| file.strip_prefix(root).ok());
        !matches!((real, file), (Some(real), Some(file)) if real.ends_with(file))
    });
    let mut seen = std::collections::HashSet::new();
    for name in names {
        if library
            .real_file_of(name)
            .is_some_and(|real| !seen.insert(real))
        {
            continue;
        }
        let Some(file) = library.file_of(name) else {
            continue;
        };
        let found: Vec<&Diagnostic> = library
            .diagnostics()
            .iter()
            .filter(|d| d.file.as_deref() == Some(file) && d.code.is_unreadable())
            .collect();
        let real = library.real_file_of(name).unwrap_or(file);
        match library.source_text(name) {
            Some(text) if found.is_empty() => sources.push(Source { file, real, text }),
            _ => problems.extend(found),
        }
    }
    (sources, problems)
}

/// What a command that rewrites files (`fmt`, `migrate`) found, and the exit code it makes.
#[derive(Debug)]
pub(crate) struct Rewrites {
    /// Files it could not handle (not readable, or with a problem that blocks the rewrite).
    pub problems: usize,
    /// Files it rewrote, or with `--check` would rewrite.
    pub changed: usize,
}

impl Rewrites {
    /// A tally that starts with the files that cannot be read, each reported on a line of
    /// `out`.
    pub fn starting_with<T: std::fmt::Display>(
        unreadable: &[T],
        out: &mut dyn Write,
    ) -> Result<Self, CliError> {
        for problem in unreadable {
            writeln!(out, "{problem}")?;
        }
        Ok(Rewrites {
            problems: unreadable.len(),
            changed: 0,
        })
    }

    /// 1 if anything could not be handled, or (with `--check`) if anything would change.
    pub fn exit(&self, check: bool) -> Exit {
        if self.problems > 0 || (check && self.changed > 0) {
            Exit::Findings
        } else {
            Exit::Success
        }
    }

    /// Nothing to change and nothing in the way: the command says so in one line.
    pub fn all_done(&self) -> bool {
        self.problems == 0 && self.changed == 0
    }

    /// "it" or "them", for the changed files.
    pub fn them(&self) -> &'static str {
        if self.changed == 1 {
            "it"
        } else {
            "them"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `archetool ARGS` with no components: the exit code, standard output and standard error.
    fn run_with(args: &[&str]) -> (Exit, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = std::iter::once("archetool").chain(args.iter().copied());
        let exit = run(args, ComponentRegistry::new(), &mut out, &mut err);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8 output");
        (exit, text(out), text(err))
    }

    #[test]
    fn help_lists_the_subcommands_this_build_has() {
        let (exit, help, err) = run_with(&["--help"]);
        assert_eq!((exit, err.as_str()), (Exit::Success, ""), "{help}");
        let (_, commands) = help
            .split_once("\nCommands:\n")
            .unwrap_or_else(|| panic!("no `Commands:` section in\n{help}"));
        // Each subcommand's line starts with two spaces and its name.
        let listed: Vec<&str> = commands
            .lines()
            .take_while(|line| !line.is_empty())
            .filter_map(|line| line.strip_prefix("  "))
            .filter(|line| !line.starts_with(' '))
            .filter_map(|line| line.split_whitespace().next())
            .collect();
        let mut expected = vec![
            "validate", "explain", "inspect", "tree", "schema", "fmt", "new", "scene", "cook",
            "migrate", "promote",
        ];
        if cfg!(feature = "demo") {
            expected.push("demo");
        }
        if cfg!(feature = "bench") {
            expected.push("bench");
        }
        if cfg!(feature = "lsp") {
            expected.push("lsp");
        }
        expected.push("help");
        assert_eq!(listed, expected, "the subcommands in\n{help}");
    }

    /// Running `archetool NAME`, a subcommand this build leaves out, is a usage error that
    /// names it.
    #[cfg(not(all(feature = "demo", feature = "bench", feature = "lsp")))]
    fn assert_unknown_subcommand(name: &str) {
        let (exit, out, err) = run_with(&[name]);
        assert_eq!((exit, out.as_str()), (Exit::Error, ""), "{err}");
        let expected = format!("error: unrecognized subcommand '{name}'\n");
        assert!(err.starts_with(&expected), "{err}");
    }

    #[cfg(not(feature = "demo"))]
    #[test]
    fn without_the_demo_feature_demo_is_an_unknown_subcommand() {
        assert_unknown_subcommand("demo");
    }

    #[cfg(not(feature = "bench"))]
    #[test]
    fn without_the_bench_feature_bench_is_an_unknown_subcommand() {
        assert_unknown_subcommand("bench");
    }

    #[cfg(not(feature = "lsp"))]
    #[test]
    fn without_the_lsp_feature_lsp_is_an_unknown_subcommand() {
        assert_unknown_subcommand("lsp");
    }
}
