//! `archetool promote`: a scene entity's differences written back into archetype files, the
//! library's write-back as the live inspector uses it
//! ([`ArchetypeLibrary::write_to_archetype_child`](archetype_engine::ArchetypeLibrary::write_to_archetype_child),
//! [`write_derived_archetype`](archetype_engine::ArchetypeLibrary::write_derived_archetype)),
//! or its overrides taken out of the scene
//! ([`scene_without_overrides`]).
//!
//! ```text
//! $ archetool promote level.scene.json 00000000000000b2 --apply --field Health.max
//! wrote archetypes/enemies/goblin.json: Health.max = 30
//! wrote level.scene.json: entity 00000000000000b2 no longer overrides Health.max
//! $ archetool promote level.scene.json 00000000000000b2 --revert --field Speed
//! wrote level.scene.json: entity 00000000000000b2 no longer overrides Speed
//! $ archetool promote level.scene.json 00000000000000b2 --save-as enemies/goblin_brute
//! wrote archetypes/enemies/goblin_brute.json: extends enemies/goblin with Health, Speed
//! ```
//!
//! `--apply` writes the values into the archetype's file (a child entity's into the
//! archetype's `children`) and takes the overrides out of the scene, whose entity then has the
//! archetype's values and follows its later edits; `--revert` only takes them out. Both edit
//! the two files where the values are and leave every other byte. `--save-as` leaves the scene
//! as it is. Components the library sets itself (`Parent`, `Children`) are never written.

use std::path::{Path, PathBuf};

use archetype_engine::tooling::scene_without_overrides;
use archetype_engine::{
    ArchetypeLibrary, FieldPath, FieldValue, PathSegment, SceneEncoding, SceneEntry, StableId,
    SCENE_FORMAT_VERSION,
};
use clap::Args;
use serde_json::{Map, Value};

use super::scene::{read_scene, report_load_error, Archetypes, ReadScene};
use super::{one_line, write_atomically, CliError, Context, DirArg, Exit};

/// Arguments of `archetool promote`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("to").required(true).args(["apply", "revert", "save_as"]))]
pub struct PromoteArgs {
    /// The scene file.
    pub scene: PathBuf,
    /// The entity's stable ID, as the scene writes it.
    pub id: String,
    /// Write the entity's values into its archetype's file (every value it overrides, or the
    /// `--field`s) and take those overrides out of the scene.
    #[arg(long)]
    pub apply: bool,
    /// Take the entity's overrides (all, or the `--field`s) out of the scene, so it has its
    /// archetype's values.
    #[arg(long)]
    pub revert: bool,
    /// Write a new archetype NAME extending the entity's with its differences.
    #[arg(long, value_name = "NAME")]
    pub save_as: Option<String>,
    /// With `--apply` or `--revert`: only this field (`Component` or `Component.field.inner`);
    /// repeatable.
    #[arg(long, value_name = "FIELD")]
    pub field: Vec<String>,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Promotes a scene entity's differences; see [`Command::Promote`](super::Command::Promote).
///
/// # Errors
/// [`CliError::Usage`] for an unknown ID, an entity that is not an archetype instance (or,
/// for `--save-as`, a child of one), a `--field` the entity does not override, a scene that is
/// not JSON in the current format where it is to be edited, or a write the library refuses (a
/// name its rules refuse, a file it cannot edit); [`CliError::Io`] when a file cannot be read
/// or written.
pub fn promote(args: &PromoteArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let mut archetypes = Archetypes::new(&args.dir.dir);
    let scene = match read_scene(&args.scene, &mut archetypes, context)? {
        Ok(scene) => scene,
        Err(error) => return report_load_error(&error, &archetypes, context),
    };
    let entry = find_entry(scene.document.entries(), &args.id)?;
    let Some(archetype) = entry.archetype.clone() else {
        return Err(CliError::Usage(format!(
            "entity {} is not an archetype instance",
            args.id
        )));
    };
    let library = archetypes.get(context)?;
    let overrides = written_overrides(library, &entry.components);
    if let Some(name) = &args.save_as {
        if let Some(child) = &entry.child {
            return Err(CliError::Usage(format!(
                "entity {} is the child `{child}` of an archetype instance; save its instance's root as a new archetype",
                args.id
            )));
        }
        let file = (library)
            .write_derived_archetype(name, &archetype, &overrides)
            .map_err(refused)?;
        let names: Vec<&str> = overrides.keys().map(String::as_str).collect();
        let (file, with) = (file.display(), names.join(", "));
        writeln!(context.out, "wrote {file}: extends {archetype} with {with}")?;
        return Ok(Exit::Success);
    }
    let places = if args.revert {
        chosen_places(&overrides, &args.field, entry.id)?
    } else {
        let values = chosen_values(&overrides, &args.field, entry.id)?;
        let child = entry.child.as_deref().unwrap_or("");
        (library)
            .write_to_archetype_child(&archetype, child, &values)
            .map_err(refused)?;
        // The file as the library names it (under `--dir`), not its resolved path.
        let file = (library.file_of(&archetype)).map_or_else(PathBuf::new, Path::to_path_buf);
        for value in &values {
            let (file, place) = (file.display(), value.field.in_component(&value.component));
            let value = one_line(&value.value);
            writeln!(context.out, "wrote {file}: {place} = {value}")?;
        }
        values
            .into_iter()
            .map(|value| (value.component, value.field))
            .collect()
    };
    take_out_of_scene(&args.scene, &scene, entry.id, &places, args.apply, context)?;
    Ok(Exit::Success)
}

fn refused(error: archetype_engine::WriteBackError) -> CliError {
    CliError::Usage(error.to_string())
}

/// The entry's components a write-back may write: all but those the library sets itself.
fn written_overrides(
    library: &ArchetypeLibrary,
    components: &Map<String, Value>,
) -> Map<String, Value> {
    let registry = library.registry();
    (components.iter())
        .filter(|(name, _)| !registry.id(name).is_some_and(|id| registry.is_managed(id)))
        .map(|(name, patch)| (name.clone(), patch.clone()))
        .collect()
}

/// Writes the scene without entity `id`'s overrides of `places`. A scene the library cannot
/// edit as text (binary, or an older format) is refused for `--revert`; after `--apply` it is
/// left, and said.
fn take_out_of_scene(
    path: &Path,
    scene: &ReadScene,
    id: StableId,
    places: &[(String, FieldPath)],
    applied: bool,
    context: &mut Context<'_>,
) -> Result<(), CliError> {
    let file = path.display();
    let why = match (scene.encoding, scene.format) {
        (SceneEncoding::Json, SCENE_FORMAT_VERSION) => None,
        (SceneEncoding::Json, format) => Some(format!(
            "`{file}` is in scene format {format}, not {SCENE_FORMAT_VERSION}; `archetool migrate` upgrades it"
        )),
        _ => Some(format!("`{file}` is a binary scene; only JSON scenes are edited as text")),
    };
    let text = std::str::from_utf8(&scene.bytes)
        .ok()
        .filter(|_| why.is_none());
    let Some(text) = text else {
        let why = why.unwrap_or_else(|| format!("`{file}` is not UTF-8 text"));
        if applied {
            writeln!(context.out, "left the overrides in {file}: {why}")?;
            return Ok(());
        }
        return Err(CliError::Usage(why));
    };
    let edited = scene_without_overrides(text, id, places)
        .map_err(|error| CliError::Usage(format!("`{file}`: {error}")))?;
    write_atomically(path, edited.as_bytes())?;
    let names: Vec<String> = (places.iter())
        .map(|(component, field)| field.in_component(component))
        .collect();
    let names = names.join(", ");
    writeln!(
        context.out,
        "wrote {file}: entity {id} no longer overrides {names}"
    )?;
    Ok(())
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
    components: &Map<String, Value>,
    fields: &[String],
    id: StableId,
) -> Result<Vec<FieldValue>, CliError> {
    let all: Vec<FieldValue> = (components.iter())
        .flat_map(|(component, patch)| FieldValue::from_patch(component, patch))
        .collect();
    if all.is_empty() {
        return Err(CliError::Usage(format!("entity {id} overrides nothing")));
    }
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
                    let name = value.field.in_component(&value.component);
                    name == *field || name.starts_with(&prefix)
                })
                .cloned(),
        );
        if chosen.len() == before {
            return Err(not_overridden(id, field));
        }
    }
    Ok(chosen)
}

/// The places `fields` name (`Component` or `Component.field.inner`), each one the entity
/// overrides; every overridden component without `fields`.
fn chosen_places(
    components: &Map<String, Value>,
    fields: &[String],
    id: StableId,
) -> Result<Vec<(String, FieldPath)>, CliError> {
    if fields.is_empty() {
        if components.is_empty() {
            return Err(CliError::Usage(format!("entity {id} overrides nothing")));
        }
        let whole = |name: &String| (name.clone(), FieldPath::root());
        return Ok(components.keys().map(whole).collect());
    }
    let mut places = Vec::with_capacity(fields.len());
    for field in fields {
        let mut keys = field.split('.');
        let component = keys.next().unwrap_or_default().to_string();
        let path: Vec<PathSegment> = keys.map(|key| PathSegment::Key(key.to_string())).collect();
        let mut reached = components.get(&component);
        for segment in &path {
            let PathSegment::Key(key) = segment else {
                break;
            };
            reached = reached.and_then(|value| value.get(key));
        }
        if reached.is_none() {
            return Err(not_overridden(id, field));
        }
        places.push((component, FieldPath::from(path)));
    }
    Ok(places)
}

fn not_overridden(id: StableId, field: &str) -> CliError {
    CliError::Usage(format!("entity {id} does not override `{field}`"))
}
