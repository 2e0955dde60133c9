//! `archetool scene`: what a scene file holds (`info`), whether it loads (`check`), and how two
//! differ (`diff`, in [`scene_diff`]).
//!
//! A scene is read as the library's read model, a [`SceneDocument`], one of two ways:
//! - a JSON scene in the current format ([`SCENE_FORMAT_VERSION`]) is read as written; no
//!   archetypes are needed;
//! - a binary scene, a JSON scene in an older format, or one the read refuses, is loaded with
//!   the library into a scratch world (with the archetypes under `--dir`) and saved again as
//!   JSON ([`save_scene`]): what the game would load, in the current format and with current
//!   component names (or the load's error, as the game would see it).
//!
//! A scene that does not load is reported like `validate` reports archetypes (exit code 1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use archetype_engine::tooling::{read_regular_file, real_path_inside};
use archetype_engine::{
    load_scene_from_path, read_scene_header, save_scene, ArchetypeLibrary, ComponentRegistry,
    Diagnostic, LoadOptions, PlacedScenes, SceneDocument, SceneEncoding, SceneEntry, SceneError,
    SceneLoadOptions, SceneSaveOptions, SCENE_FORMAT_VERSION,
};
use clap::{Args, Subcommand};
use hecs::World;
use serde_json::Value;

use super::validate::{write_human, SourceTexts};
use super::{count, scene_diff, CliError, Context, DirArg, Exit};

/// Arguments of `archetool scene`.
#[derive(Debug, Args)]
pub struct SceneArgs {
    /// What to do with the scene.
    #[command(subcommand)]
    pub command: SceneCommand,
}

/// The `scene` subcommands.
#[derive(Debug, Subcommand)]
pub enum SceneCommand {
    /// Summarize a scene file (JSON or binary).
    ///
    /// Prints the encoding, the format version, the number of entities, how many come from
    /// each archetype (instances and their child entities) and how many from none, how many
    /// entities write each component (for archetype instances, what differs from the
    /// archetype; `removed from N` counts `null`s), and the number of shared entries. Binary
    /// and older-format scenes are read by loading them with the archetypes under DIR.
    Info(SceneFileArgs),
    /// Load scenes with the archetypes, as the game would; report every one that does not load.
    ///
    /// Loads the archetypes under DIR, then each scene (the files given, and every
    /// `*.scene.json` and `*.scene.bin` under the directories given) into a scratch world. A
    /// scene that loads prints `FILE: ok (N entities: A from archetypes, P plain)`; one that
    /// does not prints the error (file:line:column, or byte offset for binary scenes; entity,
    /// component and field in the message), or every field a component does not have: bad
    /// JSON, unknown archetypes or components, invalid values, references to entities not in
    /// the scene, duplicate IDs, ... With several scenes, a summary line follows. `--format`
    /// as for `validate` (json, github, sarif: only the problems). Exit code 1 if any scene
    /// does not load.
    Check(super::scene_check::SceneCheckArgs),
    /// Compare two scenes entity by entity, by stable ID.
    ///
    /// One line per entity added (`+ ID archetype`), removed (`- ID ...`) or changed
    /// (`~ ID ...`), sorted by ID; under a changed one, its components added (`+ C: value`),
    /// removed (`- C`) and changed (`~ C.field: old -> new`), then a summary line. For archetype
    /// instances the files store what differs from the archetype, and that is what is
    /// compared. Ends with the counts (`0 added, 0 removed, 0 changed` for the same scenes).
    /// Exit code 0 when the scenes are the same, 1 when they differ.
    Diff(scene_diff::DiffArgs),
}

/// Arguments of `scene info`.
#[derive(Debug, Args)]
pub struct SceneFileArgs {
    /// The scene file (`*.scene.json` or `*.scene.bin`).
    pub file: PathBuf,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Runs a `scene` subcommand.
///
/// # Errors
/// If a file cannot be read, or the archetypes directory (when needed) does not exist.
pub fn scene(args: &SceneArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    match &args.command {
        SceneCommand::Info(args) => info(args, context),
        SceneCommand::Check(args) => super::scene_check::check(args, context),
        SceneCommand::Diff(args) => scene_diff::diff(args, context),
    }
}

/// `scene info`: see [`SceneCommand::Info`].
fn info(args: &SceneFileArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let mut archetypes = Archetypes::new(&args.dir.dir);
    let scene = match read_scene(&args.file, &mut archetypes, context)? {
        Ok(scene) => scene,
        Err(error) => return report_load_error(&error, &archetypes, context),
    };
    let summary = Summary::of(scene.document.entries());
    let out = &mut *context.out;
    writeln!(out, "file:      {}", args.file.display())?;
    let encoding = match scene.encoding {
        SceneEncoding::Json => "JSON".to_string(),
        SceneEncoding::Binary => "binary".to_string(),
        other => format!("{other:?}"),
    };
    writeln!(out, "encoding:  {encoding}")?;
    let current = scene.encoding.current_format();
    if scene.format == current {
        writeln!(out, "format:    {} (current)", scene.format)?;
    } else {
        writeln!(
            out,
            "format:    {} (current is {current}; `archetool migrate` upgrades the file)",
            scene.format
        )?;
    }
    writeln!(out, "entities:  {}", summary.entities)?;
    // Sub-scenes are read as a load reads them (the file rule, the limits), without archetypes:
    // counting their entries needs none.
    let placed = PlacedScenes::read(
        &scene.bytes,
        Some(&args.file),
        &as_written(Path::new(".")),
        &SceneLoadOptions::default(),
    );
    let placed_files = match &placed {
        Ok(Some(placed)) => {
            let total = placed.entities();
            writeln!(out, "flattened: {total} (with the sub-scenes placed)")?;
            Some(placed.placed().clone())
        }
        Ok(None) => None,
        Err(error) => {
            let why = &error.diagnostic().message;
            writeln!(out, "flattened: unknown ({why})")?;
            Some(placements_as_written(&scene.document))
        }
    };
    writeln!(
        out,
        "shared:    {}",
        count(scene.document.shared().len(), "entry")
    )?;
    if let Some(meta) = scene.document.meta() {
        writeln!(out, "meta:      {}", Value::Object(meta.clone()))?;
    }

    let mut rows: Vec<(String, String)> = summary
        .archetypes
        .iter()
        .map(|(name, &(instances, children))| {
            let total = (instances + children).to_string();
            let cell = if children == 0 {
                total
            } else {
                format!(
                    "{total} ({}, {})",
                    count(instances, "instance"),
                    count(children, "child entity")
                )
            };
            (name.to_string(), cell)
        })
        .collect();
    if summary.plain > 0 {
        rows.push(("(no archetype)".to_string(), summary.plain.to_string()));
    }
    write_table(out, "per archetype:", &rows)?;
    if let Some(placed) = &placed_files {
        let rows: Vec<(String, String)> = placed
            .iter()
            .map(|(file, &times)| (file.clone(), count(times, "placement")))
            .collect();
        write_table(out, "sub-scenes:", &rows)?;
    }

    let rows: Vec<(String, String)> = summary
        .components
        .iter()
        .map(|(name, &(written, removed))| {
            let mut cell = written.to_string();
            if removed > 0 {
                cell.push_str(&format!(", removed from {removed}"));
            }
            (name.to_string(), cell)
        })
        .collect();
    write_table(out, "components used (by how many entities):", &rows)?;
    Ok(Exit::Success)
}

/// Each sub-scene `document` places, as written, with how many times.
fn placements_as_written(document: &SceneDocument) -> BTreeMap<String, usize> {
    let mut placed = BTreeMap::new();
    for scene in document.entries().iter().filter_map(|e| e.scene.as_ref()) {
        *placed.entry(scene.clone()).or_insert(0) += 1;
    }
    placed
}

/// A heading, then `  name  value` rows with the values lined up (nothing if there are no rows).
fn write_table(
    out: &mut dyn std::io::Write,
    heading: &str,
    rows: &[(String, String)],
) -> Result<(), CliError> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "{heading}")?;
    let width = rows
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    for (name, value) in rows {
        writeln!(out, "  {name:width$}  {value}")?;
    }
    Ok(())
}

/// What `scene info` counts in a scene document.
#[derive(Default)]
struct Summary<'a> {
    entities: usize,
    /// Entities of no archetype.
    plain: usize,
    /// Archetype → (instances, child entities of instances).
    archetypes: BTreeMap<&'a str, (usize, usize)>,
    /// Component → (entities writing a value, entities writing `null`).
    components: BTreeMap<&'a str, (usize, usize)>,
}

impl<'a> Summary<'a> {
    fn of(entries: &'a [SceneEntry]) -> Self {
        let mut summary = Summary::default();
        for entry in entries {
            summary.entities += 1;
            match &entry.archetype {
                Some(archetype) => {
                    let counts = summary.archetypes.entry(archetype).or_default();
                    if entry.child.is_some() {
                        counts.1 += 1;
                    } else {
                        counts.0 += 1;
                    }
                }
                None => summary.plain += 1,
            }
            for (name, value) in &entry.components {
                let counts = summary.components.entry(name.as_str()).or_default();
                if value.is_null() {
                    counts.1 += 1;
                } else {
                    counts.0 += 1;
                }
            }
        }
        summary
    }
}

/// Prints why a scene does not load, rustc-style (with the source line for JSON scenes), and a
/// note if the archetypes themselves have errors (which may be why).
pub(crate) fn report_load_error(
    error: &SceneError,
    archetypes: &Archetypes<'_>,
    context: &mut Context<'_>,
) -> Result<Exit, CliError> {
    write_scene_error(context.out, error)?;
    if let Some(library) = &archetypes.library {
        let errors = library.error_count();
        if errors > 0 {
            writeln!(
                context.out,
                "note: the archetypes have {}; `archetool validate --dir {}` lists them",
                count(errors, "error"),
                archetypes.dir.display()
            )?;
        }
    }
    Ok(Exit::Findings)
}

/// Writes a scene error: as `validate` writes diagnostics for JSON scenes, on one line (with
/// the byte offset) for binary ones.
pub(crate) fn write_scene_error(
    out: &mut dyn std::io::Write,
    error: &SceneError,
) -> Result<(), CliError> {
    let Some((diagnostic, text)) = placed(error) else {
        return Ok(writeln!(out, "{}", scene_error_line(error))?);
    };
    match (&diagnostic.file, &text) {
        (Some(file), Some(text)) => write_human(out, &diagnostic, &SourceTexts::one(file, text)),
        _ => Ok(writeln!(out, "{diagnostic}")?),
    }
}

/// A scene error on one line: `path:line:col: error[code]: message` (`path (byte N): ...` for
/// binary scenes).
pub(crate) fn scene_error_line(error: &SceneError) -> String {
    match placed(error) {
        Some((diagnostic, _)) => diagnostic.to_string(),
        None => error.to_string(),
    }
}

/// For an error in a JSON scene: its diagnostic and the file's text (without a byte-order
/// mark). `None` for binary scenes. (An error the library finds in the upgraded text of an older
/// format has no position.)
pub(crate) fn placed(error: &SceneError) -> Option<(Diagnostic, Option<String>)> {
    if error.offset().is_some() {
        return None;
    }
    let diagnostic = error.diagnostic().clone();
    let bytes = diagnostic
        .file
        .as_ref()
        .and_then(|file| read_regular_file(file, scene_size_limit()).ok());
    let text = bytes
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(|text| {
            text.strip_prefix('\u{feff}')
                .map(str::to_string)
                .unwrap_or(text)
        });
    Some((diagnostic, text))
}

/// The archetypes, loaded the first time a scene needs them.
pub(crate) struct Archetypes<'d> {
    dir: &'d Path,
    library: Option<ArchetypeLibrary>,
}

impl<'d> Archetypes<'d> {
    pub(crate) fn new(dir: &'d Path) -> Self {
        Archetypes { dir, library: None }
    }

    /// The library (loaded now if it was not yet).
    ///
    /// # Errors
    /// If the directory does not exist.
    pub(crate) fn get(&mut self, context: &Context<'_>) -> Result<&ArchetypeLibrary, CliError> {
        let library = match self.library.take() {
            Some(library) => library,
            None => context.load(self.dir)?,
        };
        Ok(self.library.insert(library))
    }
}

/// A scene file read (see the module docs).
pub(crate) struct ReadScene {
    /// How the file is encoded.
    pub encoding: SceneEncoding,
    /// The format version the file declares.
    pub format: u64,
    /// What it holds, in the current format.
    pub document: SceneDocument,
    /// The file's bytes, as read.
    pub bytes: Vec<u8>,
}

/// Reads a scene file as a [`ReadScene`]; `Ok(Err(..))` if it does not load.
///
/// # Errors
/// If the file cannot be read, or the archetypes are needed and their directory does not exist.
pub(crate) fn read_scene(
    path: &Path,
    archetypes: &mut Archetypes<'_>,
    context: &Context<'_>,
) -> Result<Result<ReadScene, SceneError>, CliError> {
    let bytes = read_scene_file(path)?;
    if let Some(document) = current_json(&bytes, path, archetypes.dir) {
        return Ok(Ok(ReadScene {
            encoding: SceneEncoding::Json,
            format: SCENE_FORMAT_VERSION,
            document,
            bytes,
        }));
    }
    let library = archetypes.get(context)?;
    let json = match resave(path, library, SceneEncoding::Json)? {
        Ok(json) => json,
        Err(error) => return Ok(Err(error)),
    };
    let document = SceneDocument::read(&json, Some(path), library).map_err(|error| {
        CliError::Invalid(format!(
            "cannot read back `{}` as saved by the library: {error}",
            path.display()
        ))
    })?;
    // It loaded: the format as the file declares it.
    let header = read_scene_header(&bytes).ok();
    Ok(Ok(ReadScene {
        encoding: SceneEncoding::detect(&bytes),
        format: header.map_or(1, |header| header.format),
        document,
        bytes,
    }))
}

/// Loads the scene at `path` into a scratch world and saves it again with `encoding`: the file
/// the library writes for what it read. `Ok(Err(..))` if it does not load.
///
/// # Errors
/// If the loaded world cannot be saved (which would be a bug in the library).
pub(crate) fn resave(
    path: &Path,
    library: &ArchetypeLibrary,
    encoding: SceneEncoding,
) -> Result<Result<Vec<u8>, SceneError>, CliError> {
    let mut world = World::new();
    let loaded = match load_scene_from_path(path, &mut world, library, &SceneLoadOptions::default())
    {
        Ok(loaded) => loaded,
        Err(error) => return Ok(Err(error)),
    };
    // The game's `meta` is the file's, not the tool's: it is kept.
    let mut options = SceneSaveOptions::default();
    options.meta = loaded.meta().cloned();
    save_scene(&world, library, encoding, &options)
        .map(Ok)
        .map_err(|error| {
            CliError::Invalid(format!(
                "`{}` loads but cannot be saved again: {error}",
                path.display()
            ))
        })
}

/// [`CliError::Usage`] if there is nothing at `path`. Anything else there that is not a
/// regular file (a directory, a FIFO) the library's reader refuses, saying what it is.
pub(crate) fn require_file(path: &Path) -> Result<(), CliError> {
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(not_found(path)),
        _ => Ok(()),
    }
}

fn not_found(path: &Path) -> CliError {
    CliError::Usage(format!("scene file `{}` not found", path.display()))
}

/// The size limit the library loads scenes with by default.
fn scene_size_limit() -> u64 {
    SceneLoadOptions::default().limits.max_scene_bytes
}

/// Reads a scene file as the library reads one ([`read_regular_file`]): a regular file (never
/// a FIFO or a device, which would block or never end) within the default size limit.
///
/// # Errors
/// [`CliError::Usage`] if there is nothing at `path`; [`CliError::Io`] if it cannot be read,
/// is not a regular file or is over the limit.
pub(crate) fn read_scene_file(path: &Path) -> Result<Vec<u8>, CliError> {
    read_regular_file(path, scene_size_limit()).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            not_found(path)
        } else {
            CliError::io(format!("cannot read `{}`", path.display()), error)
        }
    })
}

/// The document, if `bytes` are a JSON scene in the current format that reads as written (no
/// archetypes needed). Anything else goes through the library, which says what is wrong with
/// it as the game would.
fn current_json(bytes: &[u8], path: &Path, dir: &Path) -> Option<SceneDocument> {
    let header = read_scene_header(bytes).ok()?;
    if header.encoding != SceneEncoding::Json || header.format != SCENE_FORMAT_VERSION {
        return None;
    }
    SceneDocument::read(bytes, Some(path), &as_written(dir)).ok()
}

/// A library with no archetypes or components, for reading JSON scenes as written: a JSON
/// document's values are kept as they are, so no components are needed to read one.
pub(crate) fn as_written(dir: &Path) -> ArchetypeLibrary {
    ArchetypeLibrary::empty(dir, ComponentRegistry::new(), LoadOptions::default())
}

/// The header of a binary scene, or `None` if `bytes` are not one.
pub(crate) fn binary_header(bytes: &[u8]) -> Option<archetype_engine::tooling::BinarySceneHeader> {
    archetype_engine::tooling::read_binary_scene_header(bytes).ok()
}

/// Whether `bytes` are a binary scene (rather than JSON text).
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    SceneEncoding::detect(bytes) == SceneEncoding::Binary
}

/// The scene files under `dir` (`*.scene.json`, `*.scene.bin`, recursively; hidden files and
/// directories skipped, directory links not followed), sorted.
///
/// # Errors
/// If a directory cannot be read.
pub(crate) fn scene_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    collect_scene_files(dir, &mut files)?;
    files.sort();
    Ok(files)
}

/// Adds the scene files under `dir` to `files` (in no particular order), without recursion. A
/// symbolic link named like a scene file counts only if its target is inside `dir` (the file
/// rule): one leading out is never read or rewritten.
fn collect_scene_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let root = dir;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let read = std::fs::read_dir(&dir)
            .map_err(|error| CliError::io(format!("cannot read `{}`", dir.display()), error))?;
        for entry in read.filter_map(Result::ok) {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            // Not following directory links: a link back up would never end.
            let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
            if is_dir {
                pending.push(path);
            } else if name.ends_with(".scene.json") || name.ends_with(".scene.bin") {
                let link = entry.file_type().is_ok_and(|kind| kind.is_symlink());
                if !link || real_path_inside(root, &path).is_some() {
                    files.push(path);
                }
            }
        }
    }
    Ok(())
}
