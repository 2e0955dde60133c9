//! `archetool promote`: a scene entity's differences from its archetype written back into
//! archetype files, the library's write-back as the live inspector uses it
//! ([`ArchetypeLibrary::write_to_archetype`](archetype_engine::ArchetypeLibrary::write_to_archetype),
//! [`write_derived_archetype`](archetype_engine::ArchetypeLibrary::write_derived_archetype)).
//!
//! ```text
//! $ archetool promote level.scene.json 00000000000000b2 --apply --field Health.max
//! wrote archetypes/enemies/goblin.json: Health.max = 30
//! $ archetool promote level.scene.json 00000000000000b2 --save-as enemies/goblin_brute
//! wrote archetypes/enemies/goblin_brute.json: extends enemies/goblin with Health, Speed
//! ```
//!
//! The scene file is not changed: its overrides now equal the archetype's values (`--apply`),
//! or the entity can be placed as the new archetype by hand (`--save-as`).

use std::path::{Path, PathBuf};

use archetype_engine::{FieldValue, PathSegment, SceneEntry, StableId};
use clap::Args;
use serde_json::Map;

use super::scene::{read_scene, report_load_error, Archetypes};
use super::{one_line, CliError, Context, DirArg, Exit};

/// Arguments of `archetool promote`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("to").required(true).args(["apply", "save_as"]))]
pub struct PromoteArgs {
    /// The scene file.
    pub scene: PathBuf,
    /// The entity's stable ID, as the scene writes it.
    pub id: String,
    /// Write the entity's values into its archetype's file (every value it overrides, or the
    /// `--field`s).
    #[arg(long)]
    pub apply: bool,
    /// Write a new archetype NAME extending the entity's with its differences.
    #[arg(long, value_name = "NAME")]
    pub save_as: Option<String>,
    /// With `--apply`: only this field (`Component` or `Component.field.inner`); repeatable.
    #[arg(long, value_name = "FIELD")]
    pub field: Vec<String>,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Promotes a scene entity's differences; see [`Command::Promote`](super::Command::Promote).
///
/// # Errors
/// [`CliError::Usage`] for an unknown ID, an entity that is not an archetype instance's root,
/// a `--field` the entity does not override, or a write the library refuses (a name its rules
/// refuse, a file it cannot edit); [`CliError::Io`] when a file cannot be read.
pub fn promote(args: &PromoteArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let mut archetypes = Archetypes::new(&args.dir.dir);
    let scene = match read_scene(&args.scene, &mut archetypes, context)? {
        Ok(scene) => scene,
        Err(error) => return report_load_error(&error, &archetypes, context),
    };
    let entry = find_entry(scene.document.entries(), &args.id)?;
    let archetype = match (&entry.archetype, &entry.child) {
        (Some(archetype), None) => archetype.clone(),
        (Some(_), Some(child)) => {
            return Err(CliError::Usage(format!(
                "entity {} is the child `{child}` of an archetype instance; edit its archetype's children by hand",
                args.id
            )))
        }
        _ => {
            return Err(CliError::Usage(format!(
                "entity {} is not an archetype instance",
                args.id
            )))
        }
    };
    let library = archetypes.get(context)?;
    let refused = |error: archetype_engine::WriteBackError| CliError::Usage(error.to_string());
    let shown = |file: PathBuf| file.display().to_string();
    if let Some(name) = &args.save_as {
        let file = (library)
            .write_derived_archetype(name, &archetype, &entry.components)
            .map_err(refused)?;
        let names: Vec<&str> = entry.components.keys().map(String::as_str).collect();
        let file = shown(file);
        let with = names.join(", ");
        writeln!(context.out, "wrote {file}: extends {archetype} with {with}")?;
        return Ok(Exit::Success);
    }
    let values = chosen_values(&entry.components, &args.field)?;
    library
        .write_to_archetype(&archetype, &values)
        .map_err(refused)?;
    // The file as the library names it (under `--dir`), not its resolved path.
    let file = (library.file_of(&archetype)).map_or_else(PathBuf::new, Path::to_path_buf);
    let file = shown(file);
    for value in &values {
        let place = place_name(value);
        writeln!(
            context.out,
            "wrote {file}: {place} = {}",
            one_line(&value.value)
        )?;
    }
    Ok(Exit::Success)
}

/// The scene's entry with stable ID `id`.
fn find_entry<'s>(entries: &'s [SceneEntry], id: &str) -> Result<&'s SceneEntry, CliError> {
    let wanted: StableId = id
        .parse()
        .map_err(|error| CliError::Usage(format!("`{id}` is not a stable ID: {error}")))?;
    (entries.iter())
        .find(|entry| entry.id == wanted)
        .ok_or_else(|| CliError::Usage(format!("no entity {id} in the scene")))
}

/// The values of the entity's patches that `fields` name (all of them without `fields`).
fn chosen_values(
    components: &Map<String, serde_json::Value>,
    fields: &[String],
) -> Result<Vec<FieldValue>, CliError> {
    let all: Vec<FieldValue> = (components.iter())
        .flat_map(|(component, patch)| FieldValue::from_patch(component, patch))
        .collect();
    if fields.is_empty() {
        return Ok(all);
    }
    let mut chosen = Vec::new();
    for field in fields {
        let before = chosen.len();
        let prefix = format!("{field}.");
        chosen.extend(
            (all.iter())
                .filter(|value| {
                    let name = place_name(value);
                    name == *field || name.starts_with(&prefix)
                })
                .cloned(),
        );
        if chosen.len() == before {
            return Err(CliError::Usage(format!(
                "the entity does not override `{field}`"
            )));
        }
    }
    Ok(chosen)
}

/// `Health.max`, `Name`.
fn place_name(value: &FieldValue) -> String {
    let mut name = value.component.clone();
    for segment in value.field.segments() {
        match segment {
            PathSegment::Key(key) => {
                name.push('.');
                name.push_str(key);
            }
            PathSegment::Index(index) => name.push_str(&format!("[{index}]")),
        }
    }
    name
}
