//! `archetool inspect`: what an archetype resolves to, and which file supplied each value.

use archetype_engine::{keys, ArchetypeLibrary, FieldPath, ResolvedEntity};
use clap::Args;
use serde_json::Value;

use super::raw_json::{to_canonical_string, Layout, Node};
use super::{one_line, unknown_archetype, CliError, Context, DirArg, Exit};

/// Arguments of `archetool inspect`.
#[derive(Clone, Debug, Args)]
pub struct InspectArgs {
    /// The archetype, e.g. `enemies/goblin_archer`.
    pub name: String,
    /// Instead of the JSON, list every component field (the root's, then each child's) with
    /// its value and the file, line and column that supplied it.
    #[arg(long)]
    pub provenance: bool,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Prints the archetype `NAME` with inheritance applied, as JSON in archetype-file form
/// (`archetype`, `components`, `children`; keys sorted as `archetool fmt` sorts them), or with
/// `--provenance` one line per field: `[#child ]Component.field  value  file:line:column`.
///
/// # Errors
/// [`CliError::Usage`] (exit 2) if there is no such archetype; [`CliError::Invalid`] (exit 1)
/// if it has errors, or depends on an archetype that has.
pub fn inspect(args: &InspectArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let name = args.name.as_str();
    if !library.names().any(|known| known == name) {
        return Err(unknown_archetype(name, &library));
    }
    let Some(archetype) = library.get(name) else {
        return Err(CliError::Invalid(format!(
            "archetype `{name}` cannot be resolved because of errors; `archetool validate --dir {}` lists them",
            args.dir.dir.display()
        )));
    };
    if !args.provenance {
        let json = archetype.resolved().to_json();
        let text = to_canonical_string(&Node::from_value(&json), Layout::Child);
        context.out.write_all(text.as_bytes())?;
        return Ok(Exit::Success);
    }
    let mut rows = Vec::new();
    provenance_rows(&library, name, "", archetype.resolved(), &mut rows);
    let width = |column: fn(&Row) -> &str| {
        rows.iter()
            .map(|row| column(row).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (field_width, value_width) = (width(|row| &row.field), width(|row| &row.value));
    for row in &rows {
        let line = format!(
            "{:field_width$}  {:value_width$}  {}",
            row.field, row.value, row.origin
        );
        writeln!(context.out, "{}", line.trim_end())?;
    }
    Ok(Exit::Success)
}

/// One line of `--provenance`.
struct Row {
    field: String,
    value: String,
    origin: String,
}

/// The rows of `entity` (at `entity_path` in archetype `name`) and of its children.
fn provenance_rows(
    library: &ArchetypeLibrary,
    name: &str,
    entity_path: &str,
    entity: &ResolvedEntity,
    rows: &mut Vec<Row>,
) {
    let prefix = if entity_path.is_empty() {
        String::new()
    } else {
        format!("#{entity_path} ")
    };
    for (component, value) in &entity.components {
        let mut leaves = Vec::new();
        leaves_of(value, FieldPath::root(), &mut leaves);
        for (field, value) in leaves {
            let origin = match library.provenance(name, entity_path, component, &field) {
                Some((file, Some(position))) => {
                    format!("{}:{}:{}", file.display(), position.line, position.column)
                }
                Some((file, None)) => file.display().to_string(),
                None => "(no file)".to_string(),
            };
            let field = if field.is_empty() {
                format!("{prefix}{component}")
            } else {
                format!("{prefix}{component}.{field}")
            };
            rows.push(Row {
                field,
                value: one_line(value),
                origin,
            });
        }
    }
    for (child, entity) in &entity.children {
        let path = if entity_path.is_empty() {
            child.to_string()
        } else {
            format!("{entity_path}/{child}")
        };
        provenance_rows(library, name, &path, entity, rows);
    }
}

/// The places a single file can supply: scalars, arrays (merging replaces them whole), empty
/// objects and spawn-time variations (`{"$range": ..}`, a whole value); other objects are
/// walked into.
pub(crate) fn leaves_of<'a>(
    value: &'a Value,
    path: FieldPath,
    leaves: &mut Vec<(FieldPath, &'a Value)>,
) {
    let variation = |object: &serde_json::Map<String, Value>| {
        object.len() == 1
            && object
                .keys()
                .all(|key| keys::VARIATIONS.contains(&key.as_str()))
    };
    match value {
        Value::Object(object) if !object.is_empty() && !variation(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort();
            for key in keys {
                leaves_of(&object[key.as_str()], path.key(key.as_str()), leaves);
            }
        }
        _ => leaves.push((path, value)),
    }
}
