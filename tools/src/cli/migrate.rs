//! `archetool migrate`: bring files written for older versions up to date, in place.
//!
//! For archetype files:
//! - a component written under an old name (a registry alias, e.g. `MoveSpeed` for `Speed` in
//!   the demo) is renamed to its current name, wherever it appears (`components` of the file
//!   and of child entries, at any depth);
//! - a `format` older than [`FORMAT_VERSION`] is raised to it. A file without `format` is left
//!   without one (it is read as the current version anyway); a file declaring a newer version
//!   than this tool knows is reported and left alone.
//!
//! Edits are made to the text itself, so the rest of the file (layout, comments-free JSON
//! formatting, number spelling) stays as it was; each file is written atomically.
//!
//! Migrating another kind of file (scenes) means planning its [`FileMigration`]s next to
//! [`plan_archetypes`]; reporting and applying them is shared.

use std::ops::Range;
use std::path::PathBuf;

use archetype_engine::{keys, ArchetypeLibrary, ComponentRegistry, FORMAT_VERSION};
use clap::Args;

use super::raw_json::{self, line_column, Node, NodeKind};
use super::{count, rewritable_sources, write_atomically, CliError, Context, DirArg, Exit};

/// Arguments of `archetool migrate`.
#[derive(Clone, Debug, Args)]
pub struct MigrateArgs {
    /// Only report what would change (exit code 1 if anything would); change nothing.
    #[arg(long)]
    pub check: bool,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// One replacement in a file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub span: Range<usize>,
    /// What replaces them.
    pub replacement: String,
    /// What the edit does, for the report (e.g. ``component `MoveSpeed` is now `Speed` ``).
    pub description: String,
}

/// What migrating one file takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMigration {
    /// The file, as messages show it.
    pub file: PathBuf,
    /// Its current text.
    pub text: String,
    /// The edits to make, in any order (they do not overlap).
    pub edits: Vec<Edit>,
    /// Problems that keep part (or all) of the file from being migrated.
    pub problems: Vec<String>,
}

impl FileMigration {
    /// The text with every edit made.
    pub fn migrated_text(&self) -> String {
        let mut edits: Vec<&Edit> = self.edits.iter().collect();
        edits.sort_by_key(|edit| std::cmp::Reverse(edit.span.start));
        let mut text = self.text.clone();
        for edit in edits {
            text.replace_range(edit.span.clone(), &edit.replacement);
        }
        text
    }
}

/// Migrates every archetype file under `--dir` in place, printing each change as
/// `path:line:col: what changed`; with `--check` only prints.
///
/// Exit code 1 with `--check` when anything would change, and whenever a file cannot be read
/// or has a problem that blocks a migration.
///
/// # Errors
/// If the directory does not exist, or a file cannot be written.
pub fn migrate(args: &MigrateArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let (migrations, unreadable) = plan_archetypes(&library);
    let mut problems = unreadable.len();
    for message in unreadable {
        writeln!(context.out, "{message}")?;
    }
    let mut changed = 0;
    for migration in &migrations {
        let mut edits: Vec<&Edit> = migration.edits.iter().collect();
        edits.sort_by_key(|edit| edit.span.start);
        for edit in &edits {
            let (line, column) = line_column(&migration.text, edit.span.start);
            writeln!(
                context.out,
                "{}:{line}:{column}: {}",
                migration.file.display(),
                edit.description
            )?;
        }
        for problem in &migration.problems {
            writeln!(context.out, "{}:{problem}", migration.file.display())?;
        }
        problems += migration.problems.len();
        if edits.is_empty() {
            continue;
        }
        changed += 1;
        if !args.check {
            write_atomically(&migration.file, &migration.migrated_text())?;
        }
    }
    if changed > 0 {
        if args.check {
            writeln!(
                context.out,
                "{} to migrate; run `archetool migrate` to update {}",
                count(changed, "file"),
                if changed == 1 { "it" } else { "them" }
            )?;
        } else {
            writeln!(context.out, "migrated {}", count(changed, "file"))?;
        }
    }
    Ok(if problems > 0 || (args.check && changed > 0) {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// The migrations the library's archetype files need (files needing none are left out), and
/// the one-line reports of the files that cannot be read.
pub fn plan_archetypes(library: &ArchetypeLibrary) -> (Vec<FileMigration>, Vec<String>) {
    let (sources, unreadable) = rewritable_sources(library);
    let mut migrations = Vec::new();
    for source in sources {
        let (edits, problems) = match raw_json::parse(source.text) {
            Ok(root) => archetype_edits(&root, source.text, library.registry()),
            Err(error) => {
                let (line, column) = line_column(source.text, error.offset);
                (
                    Vec::new(),
                    vec![format!("{line}:{column}: error[syntax]: {}", error.message)],
                )
            }
        };
        if !edits.is_empty() || !problems.is_empty() {
            migrations.push(FileMigration {
                file: source.file.to_path_buf(),
                text: source.text.to_string(),
                edits,
                problems,
            });
        }
    }
    let unreadable = unreadable.iter().map(ToString::to_string).collect();
    (migrations, unreadable)
}

/// The edits one archetype file needs, and what blocks others (as `line:col: message`).
fn archetype_edits(
    root: &Node,
    text: &str,
    registry: &ComponentRegistry,
) -> (Vec<Edit>, Vec<String>) {
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
    (edits, problems)
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
        for member in components {
            let Some(current) = registry.canonical_name(&member.key) else {
                continue;
            };
            if current == member.key {
                continue;
            }
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
                description: format!("component `{}` is now `{current}`", member.key),
            });
        }
    }
    if let Some(children) = entity.get(keys::CHILDREN).and_then(Node::members) {
        for child in children {
            entity_edits(&child.value, registry, edits, problems, at);
        }
    }
}
