//! `archetool migrate`: bring files written for older versions up to date, in place.
//!
//! Archetype files (under `--dir`):
//! - a component written under an old name (a registry alias, e.g. `MoveSpeed` for `Speed` in
//!   the demo) is renamed to its current name, wherever it appears (`components` of the file
//!   and of child entries, at any depth);
//! - a `format` older than [`FORMAT_VERSION`] is raised to it. A file without `format` is left
//!   without one (it is read as the current version anyway); a file declaring a newer version
//!   than this tool knows is reported and left alone.
//!
//! Edits are made to the text itself, so the rest of the file (layout, number spelling) stays
//! as it was.
//!
//! Scene files (`*.scene.json` and `*.scene.bin` under `--scenes`, by default `assets/scenes`,
//! which is skipped if it does not exist): a JSON scene in a format older than
//! [`SCENE_FORMAT_VERSION`] or naming a component by an old name, and a binary scene whose
//! component table has an old name, is loaded with the archetypes into a scratch world and
//! saved again by the library in the same encoding. The new file is what any save writes: the
//! current format and names, the library's layout, and for archetype instances only what
//! differs from the archetype as it is now. Other scenes are left alone, unread by the library
//! (`archetool scene check` checks them); a scene that needs migrating but does not load is
//! reported and left alone.
//!
//! Every file is rewritten atomically.

use std::ops::Range;
use std::path::{Path, PathBuf};

use archetype_engine::{
    keys, scene_keys, ArchetypeLibrary, ComponentRegistry, SceneEncoding, FORMAT_VERSION,
    SCENE_FORMAT_VERSION,
};
use clap::Args;

use super::raw_json::{self, line_column, Member, Node, NodeKind};
use super::scene::{
    binary_header, is_binary, read_scene_file, resave, scene_error_line, scene_files,
};
use super::{
    count, rewritable_sources, write_atomically, CliError, Context, DirArg, Exit, Rewrites, Source,
};

/// Where a project keeps its scenes, unless `--scenes` says otherwise.
pub const DEFAULT_SCENES_DIR: &str = "assets/scenes";

/// Arguments of `archetool migrate`.
#[derive(Clone, Debug, Args)]
pub struct MigrateArgs {
    /// Only report what would change (exit code 1 if anything would); change nothing.
    #[arg(long)]
    pub check: bool,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
    /// The directory of the scene files to migrate (`*.scene.json`, `*.scene.bin`, in
    /// subdirectories too) [default: assets/scenes, skipped if it does not exist]
    #[arg(long, value_name = "DIR")]
    pub scenes: Option<PathBuf>,
}

/// One replacement in an archetype file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub span: Range<usize>,
    /// What replaces them.
    pub replacement: String,
    /// What the edit does, for the report (e.g. ``component `MoveSpeed` is now `Speed` ``).
    pub description: String,
}

/// One change migrating a file makes, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Where in the file (line and column), when the change is at one place of a text file.
    pub at: Option<(usize, usize)>,
    /// What changes, e.g. ``component `MoveSpeed` is now `Speed` ``.
    pub description: String,
}

/// What migrating one file takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMigration {
    /// The file, as messages show it.
    pub file: PathBuf,
    /// Where the new content is written: the file's real path for an archetype file read
    /// through a symbolic link (the link stays a link), else `file`.
    pub target: PathBuf,
    /// The changes, in file order.
    pub changes: Vec<Change>,
    /// Problems that keep part (or all) of the file from being migrated, one line each
    /// (`path:line:col: error[code]: message`).
    pub problems: Vec<String>,
    /// The file's new content, if it changes.
    pub migrated: Option<Vec<u8>>,
}

/// Migrates every archetype file under `--dir` and every scene file under `--scenes` in place,
/// printing each change as `path:line:col: what changed` (`path: what changed` where there is
/// no one place); with `--check` only prints.
///
/// Exit code 1 with `--check` when anything would change, and whenever a file cannot be read
/// or has a problem that blocks a migration. When nothing needs migrating, says so in one line
/// (`12 archetype files and 2 scene files checked, none to migrate`).
///
/// # Errors
/// If a directory does not exist, or a file cannot be read or written.
pub fn migrate(args: &MigrateArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let scenes_dir = match &args.scenes {
        Some(dir) if !dir.is_dir() => {
            return Err(CliError::Usage(format!(
                "scenes directory `{}` not found",
                dir.display()
            )))
        }
        Some(dir) => Some(dir.clone()),
        None => Some(PathBuf::from(DEFAULT_SCENES_DIR)).filter(|dir| dir.is_dir()),
    };
    let library = context.load(&args.dir.dir)?;
    let (sources, unreadable) = rewritable_sources(&library);
    let mut checked = count(sources.len() + unreadable.len(), "archetype file");
    let mut migrations = plan_sources(sources, &library);
    if let Some(dir) = &scenes_dir {
        let files = scene_files(dir)?;
        checked = format!("{checked} and {}", count(files.len(), "scene file"));
        migrations.extend(plan_scene_files(files, &library)?);
    }
    let mut tally = Rewrites::starting_with(&unreadable, context.out)?;
    for migration in &migrations {
        let file = migration.file.display();
        for change in &migration.changes {
            match change.at {
                Some((line, column)) => writeln!(
                    context.out,
                    "{file}:{line}:{column}: {}",
                    change.description
                )?,
                None => writeln!(context.out, "{file}: {}", change.description)?,
            }
        }
        for problem in &migration.problems {
            writeln!(context.out, "{problem}")?;
        }
        tally.problems += migration.problems.len();
        let Some(migrated) = &migration.migrated else {
            continue;
        };
        tally.changed += 1;
        if !args.check {
            write_atomically(&migration.target, migrated)?;
        }
    }
    if tally.changed > 0 {
        if args.check {
            writeln!(
                context.out,
                "{} to migrate; run `archetool migrate` to update {}",
                count(tally.changed, "file"),
                tally.them()
            )?;
        } else {
            writeln!(context.out, "migrated {}", count(tally.changed, "file"))?;
        }
    }
    if tally.all_done() {
        writeln!(context.out, "{checked} checked, none to migrate")?;
    }
    Ok(tally.exit(args.check))
}

/// The migrations the library's archetype files need (files needing none are left out), and
/// the one-line reports of the files that cannot be read.
pub fn plan_archetypes(library: &ArchetypeLibrary) -> (Vec<FileMigration>, Vec<String>) {
    let (sources, unreadable) = rewritable_sources(library);
    let unreadable = unreadable.iter().map(ToString::to_string).collect();
    (plan_sources(sources, library), unreadable)
}

/// The migrations `sources` (the library's readable archetype files) need.
fn plan_sources(sources: Vec<Source<'_>>, library: &ArchetypeLibrary) -> Vec<FileMigration> {
    let mut migrations = Vec::new();
    for source in sources {
        let file = source.file.display();
        let (mut edits, problems) = match raw_json::parse(source.text) {
            Ok(root) => archetype_edits(&root, source.text, library),
            Err(error) => {
                let (line, column) = line_column(source.text, error.offset);
                (
                    Vec::new(),
                    vec![format!("{line}:{column}: error[syntax]: {}", error.message)],
                )
            }
        };
        if edits.is_empty() && problems.is_empty() {
            continue;
        }
        edits.sort_by_key(|edit| edit.span.start);
        let changes = edits
            .iter()
            .map(|edit| Change {
                at: Some(line_column(source.text, edit.span.start)),
                description: edit.description.clone(),
            })
            .collect();
        let migrated = (!edits.is_empty()).then(|| {
            let mut text = source.text.to_string();
            for edit in edits.iter().rev() {
                text.replace_range(edit.span.clone(), &edit.replacement);
            }
            text.into_bytes()
        });
        migrations.push(FileMigration {
            file: source.file.to_path_buf(),
            target: source.real.to_path_buf(),
            changes,
            problems: problems
                .into_iter()
                .map(|problem| format!("{file}:{problem}"))
                .collect(),
            migrated,
        });
    }
    migrations
}

/// The edits one archetype file needs, and what blocks others (as `line:col: message`).
fn archetype_edits(
    root: &Node,
    text: &str,
    library: &ArchetypeLibrary,
) -> (Vec<Edit>, Vec<String>) {
    let registry = library.registry();
    let mut edits = Vec::new();
    let mut problems = Vec::new();
    let at = |offset: usize| {
        let (line, column) = line_column(text, offset);
        format!("{line}:{column}")
    };
    if let Some(format) = root.get(keys::FORMAT) {
        if let NodeKind::Scalar(written) = &format.kind {
            match written.parse::<u64>() {
                Ok(version) if version > FORMAT_VERSION => {
                    problems.push(format!(
                        "{}: error[unsupported-format]: format version {version} is newer than this tool knows (up to {FORMAT_VERSION}); left as is",
                        at(format.span.start)
                    ));
                    return (Vec::new(), problems);
                }
                // Version 0 was never a format; `validate` reports it.
                Ok(version) if (1..FORMAT_VERSION).contains(&version) => edits.push(Edit {
                    span: format.span.clone(),
                    replacement: FORMAT_VERSION.to_string(),
                    description: format!("format {version} is now {FORMAT_VERSION}"),
                }),
                _ => {}
            }
        }
    }
    entity_edits(root, registry, &mut edits, &mut problems, &at);
    match root.get(keys::EXTENDS).map(|node| &node.kind) {
        Some(NodeKind::Array(parents)) => {
            for parent in parents {
                archetype_name_edit(parent, library, &mut edits);
            }
        }
        Some(_) | None => {
            if let Some(parent) = root.get(keys::EXTENDS) {
                archetype_name_edit(parent, library, &mut edits);
            }
        }
    }
    child_archetype_edits(root, library, &mut edits);
    (edits, problems)
}

/// Renames the archetypes children are instances of (`archetype` in child entries, at any
/// depth) written under former names.
fn child_archetype_edits(entity: &Node, library: &ArchetypeLibrary, edits: &mut Vec<Edit>) {
    for child in entity
        .get(keys::CHILDREN)
        .and_then(Node::members)
        .unwrap_or(&[])
    {
        if let Some(archetype) = child.value.get(keys::ARCHETYPE) {
            archetype_name_edit(archetype, library, edits);
        }
        child_archetype_edits(&child.value, library, edits);
    }
}

/// The edit of `node` if it is a string naming an archetype by a former name.
fn archetype_name_edit(node: &Node, library: &ArchetypeLibrary, edits: &mut Vec<Edit>) {
    let Some(name) = string_of(node) else { return };
    if let Some(current) = library.renamed(&name) {
        edits.push(Edit {
            span: node.span.clone(),
            replacement: serde_json::Value::String(current.to_string()).to_string(),
            description: format!("archetype `{name}` is now `{current}`"),
        });
    }
}

/// The string `node` holds, unescaped.
fn string_of(node: &Node) -> Option<String> {
    match &node.kind {
        NodeKind::Scalar(written) => serde_json::from_str(written).ok(),
        _ => None,
    }
}

/// Renames components written under old names in `entity` (the top level or a child entry)
/// and in its children, recursively.
fn entity_edits(
    entity: &Node,
    registry: &ComponentRegistry,
    edits: &mut Vec<Edit>,
    problems: &mut Vec<String>,
    at: &dyn Fn(usize) -> String,
) {
    if let Some(components) = entity.get(keys::COMPONENTS).and_then(Node::members) {
        for (member, current) in old_names(components, registry) {
            if components.iter().any(|other| other.key == current) {
                problems.push(format!(
                    "{}: error[malformed]: `{}` and `{current}` both set component `{current}`; keep one",
                    at(member.key_span.start),
                    member.key
                ));
                continue;
            }
            edits.push(Edit {
                span: member.key_span.clone(),
                replacement: serde_json::Value::String(current.to_string()).to_string(),
                description: renamed(&member.key, current),
            });
        }
    }
    if let Some(children) = entity.get(keys::CHILDREN).and_then(Node::members) {
        for child in children {
            entity_edits(&child.value, registry, edits, problems, at);
        }
    }
}

/// The members of a `components` object written under an old name, with the current name.
fn old_names<'a>(
    components: &'a [Member],
    registry: &'a ComponentRegistry,
) -> impl Iterator<Item = (&'a Member, &'a str)> {
    components.iter().filter_map(|member| {
        let current = registry.canonical_name(&member.key)?;
        (current != member.key).then_some((member, current))
    })
}

/// The report of a rename.
fn renamed(old: &str, current: &str) -> String {
    format!("component `{old}` is now `{current}`")
}

/// What a scene needs.
enum SceneNeeds {
    /// Nothing: current format, current names.
    Nothing,
    /// Loading and saving again, which makes these changes.
    Migration(Vec<Change>),
    /// The scene cannot be read here (not JSON, a format this tool does not know, ...): the
    /// library says what is wrong when it loads it.
    Loading,
}

impl From<Vec<Change>> for SceneNeeds {
    /// Nothing without changes, else a migration making them.
    fn from(changes: Vec<Change>) -> Self {
        if changes.is_empty() {
            SceneNeeds::Nothing
        } else {
            SceneNeeds::Migration(changes)
        }
    }
}

/// The migrations the scene files under `dir` need (scenes needing none are left out).
///
/// # Errors
/// If a directory or file cannot be read, or a loaded scene cannot be saved again.
pub fn plan_scenes(dir: &Path, library: &ArchetypeLibrary) -> Result<Vec<FileMigration>, CliError> {
    plan_scene_files(scene_files(dir)?, library)
}

/// The migrations the scene `files` need.
fn plan_scene_files(
    files: Vec<PathBuf>,
    library: &ArchetypeLibrary,
) -> Result<Vec<FileMigration>, CliError> {
    let mut migrations = Vec::new();
    for file in files {
        let bytes = read_scene_file(&file)?;
        let (encoding, needs) = if is_binary(&bytes) {
            (SceneEncoding::Binary, binary_scene_needs(&bytes, library))
        } else {
            (SceneEncoding::Json, json_scene_needs(&bytes, library))
        };
        let changes = match needs {
            SceneNeeds::Nothing => continue,
            SceneNeeds::Migration(changes) => changes,
            SceneNeeds::Loading => Vec::new(),
        };
        let mut migration = FileMigration {
            file: file.clone(),
            target: file.clone(),
            changes: Vec::new(),
            problems: Vec::new(),
            migrated: None,
        };
        match resave(&file, library, encoding)? {
            Err(error) => migration.problems.push(scene_error_line(&error)),
            Ok(saved) if changes.is_empty() || saved == bytes => continue,
            Ok(saved) => {
                migration.changes = changes;
                migration.migrated = Some(saved);
            }
        }
        migrations.push(migration);
    }
    Ok(migrations)
}

/// What a JSON scene needs: a newer `format`, current component, archetype and child names.
fn json_scene_needs(bytes: &[u8], library: &ArchetypeLibrary) -> SceneNeeds {
    let registry = library.registry();
    let Ok(text) = std::str::from_utf8(bytes) else {
        return SceneNeeds::Loading;
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Ok(root) = raw_json::parse(text) else {
        return SceneNeeds::Loading;
    };
    let mut changes = Vec::new();
    let format_node = root.get(scene_keys::FORMAT);
    // A scene without `format` is format 1, as the library reads it.
    let format = match format_node.map(|node| &node.kind) {
        None => 1,
        Some(NodeKind::Scalar(written)) => match written.parse::<u64>() {
            Ok(format) if format <= SCENE_FORMAT_VERSION => format,
            _ => return SceneNeeds::Loading,
        },
        Some(_) => return SceneNeeds::Loading,
    };
    if format < SCENE_FORMAT_VERSION {
        changes.push(Change {
            at: format_node.map(|node| line_column(text, node.span.start)),
            description: format!("format {format} is now {SCENE_FORMAT_VERSION}"),
        });
    }
    let entities = match root.get(scene_keys::ENTITIES).map(|node| &node.kind) {
        Some(NodeKind::Array(entities)) => entities.as_slice(),
        _ => &[],
    };
    let mut names = OldNames::default();
    for entity in entities {
        let archetype = entity.get(scene_keys::ARCHETYPE);
        if let Some((node, name)) = archetype.and_then(|node| Some((node, string_of(node)?))) {
            let at = line_column(text, node.span.start);
            names.archetype(library, &name, Some(at));
            let child = entity.get(scene_keys::CHILD);
            if let Some((node, path)) = child.and_then(|node| Some((node, string_of(node)?))) {
                names.child(
                    library,
                    &name,
                    &path,
                    Some(line_column(text, node.span.start)),
                );
            }
        }
        let Some(components) = entity.get(scene_keys::COMPONENTS).and_then(Node::members) else {
            continue;
        };
        for (member, current) in old_names(components, registry) {
            changes.push(Change {
                at: Some(line_column(text, member.key_span.start)),
                description: renamed(&member.key, current),
            });
        }
    }
    changes.extend(names.changes());
    changes.sort_by_key(|change| change.at);
    SceneNeeds::from(changes)
}

/// The archetype and child names a scene writes under former names: each reported once, at its
/// first place, with how many entries write it.
#[derive(Default)]
struct OldNames {
    /// In the order found.
    found: Vec<OldName>,
}

/// What changes, where first (line, column), how many times.
type OldName = (String, Option<(usize, usize)>, usize);

impl OldNames {
    fn archetype(&mut self, library: &ArchetypeLibrary, name: &str, at: Option<(usize, usize)>) {
        if let Some(current) = library.renamed(name) {
            self.count(format!("archetype `{name}` is now `{current}`"), at);
        }
    }

    fn child(
        &mut self,
        library: &ArchetypeLibrary,
        archetype: &str,
        path: &str,
        at: Option<(usize, usize)>,
    ) {
        if let Some(current) = library.renamed_child(archetype, path) {
            let archetype = library.renamed(archetype).unwrap_or(archetype);
            self.count(
                format!("child `{path}` of archetype `{archetype}` is now `{current}`"),
                at,
            );
        }
    }

    fn count(&mut self, description: String, at: Option<(usize, usize)>) {
        match self
            .found
            .iter_mut()
            .find(|(seen, ..)| *seen == description)
        {
            Some((_, _, times)) => *times += 1,
            None => self.found.push((description, at, 1)),
        }
    }

    fn changes(self) -> impl Iterator<Item = Change> {
        self.found
            .into_iter()
            .map(|(description, at, times)| Change {
                at,
                description: match times {
                    1 => description,
                    _ => format!("{description} ({times} entries)"),
                },
            })
    }
}

/// What a binary scene needs: the current format (an older one is loaded and saved again, which
/// also adds the checksum format 2 lacks) and current component, archetype and child names in
/// its tables.
fn binary_scene_needs(bytes: &[u8], library: &ArchetypeLibrary) -> SceneNeeds {
    let registry = library.registry();
    let current = SceneEncoding::Binary.current_format();
    let Some(header) = binary_header(bytes).filter(|h| h.format <= current) else {
        return SceneNeeds::Loading;
    };
    let mut changes = Vec::new();
    if header.format < current {
        changes.push(Change {
            at: None,
            description: format!("format {} is now {current} ({})", header.format, {
                if header.format < 3 {
                    "with a checksum, the archetypes' children and binary instance diffs"
                } else {
                    "with binary instance diffs"
                }
            }),
        });
    }
    changes.extend(header.components.iter().filter_map(|name| {
        let current = registry.canonical_name(name)?;
        (current != *name).then(|| Change {
            at: None,
            description: renamed(name, current),
        })
    }));
    let mut names = OldNames::default();
    for archetype in &header.archetypes {
        names.archetype(library, archetype, None);
    }
    for (archetype, children) in header.nodes.iter().flatten() {
        for child in children {
            names.child(library, archetype, child, None);
        }
    }
    changes.extend(names.changes());
    SceneNeeds::from(changes)
}
