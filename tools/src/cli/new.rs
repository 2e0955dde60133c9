//! `archetool new`: scaffold an archetype file.

use std::path::{Component, Path, PathBuf};

use archetype_engine::tooling::check_archetype_name;
use archetype_engine::{keys, ArchetypeLibrary};
use clap::Args;
use serde_json::{Map, Value};

use super::raw_json::{to_canonical_string, Layout, Node};
use super::schema::{schema_text, write_schema};
use super::{create_atomically, unknown_archetype, CliError, Context, DirArg, Exit};

/// Where `archetool schema` output is kept in a project (the default `$schema` of new files).
pub const DEFAULT_SCHEMA_PATH: &str = "assets/schema/archetype.schema.json";

/// Arguments of `archetool new`.
#[derive(Clone, Debug, Args)]
pub struct NewArgs {
    /// The new archetype, e.g. `enemies/troll` (creates DIR/enemies/troll.json).
    pub name: String,
    /// A parent archetype; repeat the option for several (applied in the order given).
    #[arg(long, value_name = "PARENT")]
    pub extends: Vec<String>,
    /// The JSON Schema file the new file's `$schema` points to (written relative to the new
    /// file); generated, with its directory, when it does not exist.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_SCHEMA_PATH)]
    pub schema: PathBuf,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Creates `DIR/NAME.json` with `$schema`, `extends` (if given) and empty `components`, and
/// prints its path. Never overwrites a file. The `--schema` file is generated (again, when it
/// exists; as `archetool schema --out` would), so the new file's `$schema` names a file that
/// exists and editors suggest the new archetype too.
///
/// # Errors
/// [`CliError::Usage`] if the library refuses the name for a new archetype
/// ([`check_new_name`](archetype_engine::ArchetypeLibrary::check_new_name): not a valid
/// archetype name, the archetype or one whose name, or a directory on whose path, differs only
/// in letter case already exists, another archetype's former name), a directory on its path is
/// one a load refuses (a symbolic link out of the root), or a parent does not exist;
/// [`CliError::Io`] if the file cannot be written.
pub fn new(args: &NewArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    check_archetype_name(&args.name).map_err(|problem| CliError::Usage(problem.to_string()))?;
    let library = context.load(&args.dir.dir)?;
    library
        .check_new_name(&args.name)
        .map_err(|refusal| CliError::Usage(refusal.to_string()))?;
    for parent in &args.extends {
        if !library.names().any(|name| name == parent) {
            return Err(unknown_archetype(parent, &library));
        }
    }

    let mut path = args.dir.dir.clone();
    for segment in args.name.split('/') {
        path.push(segment);
    }
    path.set_extension("json");
    refuse_refused_directories(&library, &args.dir.dir, &args.name, &path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|error| CliError::io(format!("cannot create `{}`", dir.display()), error))?;

    let mut object = Map::new();
    object.insert(
        keys::SCHEMA.to_string(),
        Value::String(relative_path(dir, &args.schema)),
    );
    match args.extends.as_slice() {
        [] => {}
        [parent] => {
            object.insert(keys::EXTENDS.to_string(), Value::String(parent.clone()));
        }
        parents => {
            object.insert(keys::EXTENDS.to_string(), parents.to_vec().into());
        }
    }
    object.insert(keys::COMPONENTS.to_string(), Value::Object(Map::new()));
    let text = to_canonical_string(&Node::from_value(&Value::Object(object)), Layout::Archetype);

    if !create_atomically(&path, text.as_bytes())? {
        return Err(CliError::Usage(format!(
            "`{}` already exists",
            path.display()
        )));
    }
    writeln!(context.out, "{}", path.display())?;
    refresh_schema(args, &library, context)?;
    Ok(Exit::Success)
}

/// Writes the project's schema (the `--schema` file) so the new file's `$schema` names a file
/// that exists and editors suggest the new archetype too: `refreshed` when it was there,
/// `wrote` when this made it.
fn refresh_schema(
    args: &NewArgs,
    library: &ArchetypeLibrary,
    context: &mut Context<'_>,
) -> Result<(), CliError> {
    let existed = args.schema.is_file();
    let mut names: Vec<&str> = library.names().collect();
    if let Err(at) = names.binary_search(&args.name.as_str()) {
        names.insert(at, &args.name);
    }
    let text = schema_text(&context.registry, &names);
    write_schema(&args.schema, &text)?;
    let done = if existed { "refreshed" } else { "wrote" };
    writeln!(context.out, "{done} {}", args.schema.display())?;
    Ok(())
}

/// [`CliError::Usage`] if a directory on the way to the new file is one the library refuses
/// (a symbolic link out of the root): the file would land where no load reads it.
fn refuse_refused_directories(
    library: &ArchetypeLibrary,
    root: &Path,
    name: &str,
    path: &Path,
) -> Result<(), CliError> {
    let mut dir = root.to_path_buf();
    let segments: Vec<&str> = name.split('/').collect();
    for segment in &segments[..segments.len().saturating_sub(1)] {
        dir.push(segment);
        let refused = library
            .diagnostics()
            .iter()
            .find(|d| d.is_error() && d.file.as_deref() == Some(dir.as_path()));
        if let Some(problem) = refused {
            return Err(CliError::Usage(format!(
                "cannot create `{}`: {problem}",
                path.display()
            )));
        }
    }
    Ok(())
}

/// `target` relative to the directory `from`, with `/` separators (as JSON Schema references
/// are URIs). Falls back to `target` as given when no relative path exists (another drive).
fn relative_path(from: &Path, target: &Path) -> String {
    let as_given = || target.to_string_lossy().replace('\\', "/");
    let (Ok(from), Ok(target)) = (std::path::absolute(from), std::path::absolute(target)) else {
        return as_given();
    };
    let from: Vec<Component> = normalized(&from);
    let target: Vec<Component> = normalized(&target);
    if from.first() != target.first() {
        return as_given();
    }
    let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        target[common..]
            .iter()
            .map(|part| part.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// The components of an absolute path with `.` dropped and `..` applied.
fn normalized(path: &Path) -> Vec<Component<'_>> {
    let mut parts = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(parts.last(), Some(Component::Normal(_))) {
                    parts.pop();
                }
            }
            other => parts.push(other),
        }
    }
    parts
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_out_of_the_new_file_directory() {
        let root = std::path::absolute("project").unwrap();
        assert_eq!(
            relative_path(
                &root.join("archetypes/enemies"),
                &root.join("assets/schema/archetype.schema.json")
            ),
            "../../assets/schema/archetype.schema.json"
        );
        assert_eq!(
            relative_path(&root.join("archetypes"), &root.join("archetypes/../s.json")),
            "../s.json"
        );
    }
}
