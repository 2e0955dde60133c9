//! Loading scenes into a world, transactional (any error leaves the world as it was): the
//! entry point ([`load_scene`]), the careful readers of both encodings, and the checks and
//! plans every entry goes through.
//!
//! This is the careful route: it reads the whole file before touching the world, checks it in
//! the order problems are reported (duplicate IDs, IDs already in the world, names: an entry's
//! components, archetype and child), and places every error at its file, line and column (or
//! byte offset), entity, component and field. The entities are then built by the back-end
//! every load goes through ([`back_end`](crate::scene::back_end)). Every load but check mode
//! ([`SceneLoadOptions::all_errors`]) first reads the file with the one-pass readers
//! ([`fast_load`](crate::scene::fast_load)) into the same back-end; whatever they give up on
//! comes here.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hecs::{Entity, EntityBuilder, World};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::archetype::read_limited;
use crate::archetype::resolve_ref_path;
use crate::archetype::ArchetypeLibrary;
use crate::archetype::SpawnError;
use crate::archetype::{override_shape, ArchetypeInstance, ShapesAtHand};
use crate::component::Layout;
use crate::component::Parent;
use crate::component::{with_load_table, LoadTable};
use crate::component::{with_mapper, EntityMapper, EntityRef, RefIn, RefOut, RefWire};
use crate::component::{ComponentId, ComponentRegistry, TypedValue};
use crate::component::{MapError, ReadOnly};
use crate::component::{ParseStableIdError, StableId};
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::json::did_you_mean;
use crate::json::merge_patch;
use crate::json::FieldPath;
use crate::json::{SourceText, TextError, TextLines};
use crate::limits::Limits;
use crate::scene::back_end::{build_checked, load_ids, Checked};
use crate::scene::binary_entry::{read_component_head, read_entry_head, MIN_ENTRY_BYTES};
use crate::scene::commit::{self, Identity};
use crate::scene::follow::Follow;
use crate::scene::format::{
    is_readable_binary, open_binary, BinaryReader, BINARY_FORMAT_JSON_PATCHES, BINARY_MAGIC,
    BINARY_SCENE_FORMAT_VERSION, SCENE_FORMAT_VERSION,
};
use crate::scene::header::ArchetypeNodes;
use crate::scene::id_index::IdIndex;
use crate::scene::instance_diff::{archetype_value_key, project, Diff};
use crate::scene::json_scan::{scan, JsonEntity, OverLimit, ScanError, Stop};
use crate::scene::migration::SceneMigration;
use crate::scene::scene_budget::SceneBudget;
use crate::scene::scene_ids::{InWorld, SceneIds};

/// What to do when an incoming stable ID is already used in the world. More choices may come:
/// a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdConflict {
    /// Refuse to load, naming the ID (the default).
    #[default]
    Error,
    /// Give every incoming entity a fresh stable ID (references are fixed up), so one scene can
    /// be instantiated several times.
    Remap,
}

/// Options for loading a scene.
///
/// New options may be added in minor versions: start from [`SceneLoadOptions::default`] and
/// set the fields you need.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct SceneLoadOptions {
    /// What to do with stable IDs already present in the world.
    pub on_id_conflict: IdConflict,
    /// Size limits (file size, entity count).
    pub limits: Limits,
    /// The game's own upgrade of scene documents, run on every load it applies to (see
    /// [`SceneMigration`]).
    pub migration: Option<SceneMigration>,
    /// What a field a component's type does not have is, in a component value, an archetype
    /// instance's patch or a shared value: an error (the default: it is usually a typo, and
    /// saving the world again would drop it), or a warning, listed in
    /// [`LoadedScene::warnings`], with the field skipped.
    pub unknown_fields: Severity,
    /// What an entry for a child its archetype no longer has is: a warning, listed in
    /// [`LoadedScene::warnings`] and [`LoadedScene::changes`], with the entry (and its own
    /// children) left out — the default, as hot reload despawns such children — or an error.
    pub removed_children: RemovedChildren,
    /// Check mode (`archetool scene check`): when the scene does not load, go on past each
    /// entity's problem to find the others, so the error lists them all
    /// ([`SceneError::others`]) instead of stopping at the first. Problems with the file as a
    /// whole (its syntax, its format, a limit) still stop at once. Off by default: a game
    /// wants the first error fast.
    pub all_errors: bool,
    /// Where the scene files a scene places (sub-scenes) may be read from: under the loaded
    /// scene's directory (the default), under a scenes root the game names, or nowhere (a
    /// scene from an untrusted source, such as a player's save). A path that leaves the root,
    /// by `..`, by being absolute or through a symbolic link, is refused without being opened.
    pub sub_scenes: SubScenes,
}

/// Where the scene files a scene places (its sub-scenes) may be read from
/// ([`SceneLoadOptions::sub_scenes`]). Whatever the root, a placed file's real path (links
/// resolved) must be inside it, the path is written relative to the placing file, and the file
/// must be a regular file within [`Limits::max_scene_bytes`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubScenes {
    /// Under the directory of the scene file being loaded (the default). A scene loaded from
    /// memory (no file) places none.
    #[default]
    InSceneDirectory,
    /// Under this directory, e.g. the game's `assets/scenes`.
    InRoot(PathBuf),
    /// Nowhere: a scene that places one is refused. For scenes from an untrusted source.
    Refused,
}

/// What to do with a scene entry for a child its archetype no longer has. More choices may
/// come: a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemovedChildren {
    /// Leave the entry out, and list it (the default).
    #[default]
    LeaveOut,
    /// Refuse the scene.
    Error,
}

/// A scene that was loaded: which entity each stable ID became.
#[derive(Clone, Debug, Default)]
pub struct LoadedScene {
    pub(super) entities: Vec<Entity>,
    pub(super) by_id: IdIndex,
    pub(super) remapped: FxHashMap<StableId, StableId>,
    pub(super) warnings: Vec<SceneError>,
    pub(super) changes: Vec<SceneChange>,
    pub(super) meta: Option<Map<String, Value>>,
    /// The sub-scene files the load read (each once, at any depth), as placements name them
    /// joined with their placing file's directory.
    pub(super) sub_scenes: Vec<std::path::PathBuf>,
}

/// What a load changed from the file because the archetypes changed since it was saved.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SceneChange {
    /// The archetype gained a child after the scene was saved: it was spawned (as hot reload
    /// spawns it), under the instance whose root has stable ID `instance`.
    ChildSpawned {
        /// The instance's root, as the scene wrote its ID.
        instance: StableId,
        /// The archetype.
        archetype: String,
        /// The child's path in it.
        child: String,
        /// The stable ID the new child got.
        id: StableId,
    },
    /// The archetype no longer has the child this entry was: the entry was left out.
    EntryLeftOut {
        /// The entry's stable ID.
        entity: StableId,
        /// The archetype.
        archetype: String,
        /// The child's path.
        child: String,
    },
    /// The scene names an archetype by a name it was formerly known by (its file lists it
    /// under `formerly`): its entries are instances of the archetype under its current name,
    /// which a save writes.
    ArchetypeRenamed {
        /// The name in the scene.
        from: String,
        /// The archetype's name now.
        to: String,
        /// How many entries name it so.
        entries: usize,
    },
    /// The scene names a child of an archetype by a path with a former name on it (`formerly`
    /// in a child entry): its entries are the child at its current path, which a save writes.
    ChildRenamed {
        /// The archetype (its current name).
        archetype: String,
        /// The child's path in the scene.
        from: String,
        /// Its path now.
        to: String,
        /// How many entries name it so.
        entries: usize,
    },
}

impl fmt::Display for SceneChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SceneChange::ChildSpawned {
                instance,
                archetype,
                child,
                id,
            } => write!(
                f,
                "entity {instance}: spawned child `{child}` ({id}), which archetype `{archetype}` gained since the scene was saved"
            ),
            SceneChange::EntryLeftOut {
                entity,
                archetype,
                child,
            } => write!(
                f,
                "entity {entity}: left out; archetype `{archetype}` has no child `{child}` any more"
            ),
            SceneChange::ArchetypeRenamed { from, to, entries } => write!(
                f,
                "archetype `{from}` is now called `{to}`: {} loaded as `{to}` (saving writes the new name)",
                entries_count(*entries)
            ),
            SceneChange::ChildRenamed {
                archetype,
                from,
                to,
                entries,
            } => write!(
                f,
                "child `{from}` of archetype `{archetype}` is now `{to}`: {} loaded as `{to}` (saving writes the new path)",
                entries_count(*entries)
            ),
        }
    }
}

/// "1 entry", "3 entries".
fn entries_count(count: usize) -> String {
    if count == 1 {
        "1 entry".to_string()
    } else {
        format!("{count} entries")
    }
}

impl LoadedScene {
    /// What the load changed because the archetypes changed since the scene was saved: old
    /// names read as current ones (one change per name, counting its entries), then entries
    /// left out, then children spawned; each in the file's order.
    pub fn changes(&self) -> &[SceneChange] {
        &self.changes
    }

    /// The game's own data about the file (`SceneSaveOptions::meta` when it was saved).
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// What the load skipped and reported instead of refusing the scene: fields a component's
    /// type does not have, when [`SceneLoadOptions::unknown_fields`] is
    /// [`Severity::Warning`]. In the file's order; each names the file, place, entity,
    /// component and field, like an error.
    pub fn warnings(&self) -> &[SceneError] {
        &self.warnings
    }

    /// The entity created for the stable ID written in the file.
    pub fn entity(&self, id: StableId) -> Option<Entity> {
        self.by_id.get(&id).copied()
    }

    /// The stable ID the entity written as `id` got in the world (differs from `id` only
    /// when loading with [`IdConflict::Remap`]).
    pub fn new_id(&self, id: StableId) -> Option<StableId> {
        if self.remapped.is_empty() {
            self.by_id.contains_key(&id).then_some(id)
        } else {
            self.remapped.get(&id).copied()
        }
    }

    /// Every entity created, in the file's order.
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// Number of entities created.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether the scene was empty.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }
}

/// Why a scene could not be loaded. The world is as it was before the attempt.
///
/// Displays like a compiler error: file, line and column (or byte offset for binary scenes),
/// the entity, component and field, and what is wrong.
///
/// Read through its methods; it gains more as the engine does (so its fields are private).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneError {
    pub(crate) diagnostic: Box<Diagnostic>,
    pub(crate) entity: Option<StableId>,
    pub(crate) offset: Option<usize>,
    pub(crate) others: Vec<SceneError>,
}

impl SceneError {
    /// Where and what: file, position, component, field, message, suggestion.
    pub fn diagnostic(&self) -> &Diagnostic {
        &self.diagnostic
    }

    /// The stable ID of the entity concerned, when known.
    pub fn entity(&self) -> Option<StableId> {
        self.entity
    }

    /// The byte offset of the problem in a binary scene (`None` for JSON scenes, which place
    /// problems by line and column in the [`diagnostic`](Self::diagnostic)).
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// With [`SceneLoadOptions::all_errors`], the scene's other problems (after this one, in
    /// the file's order); empty otherwise.
    pub fn others(&self) -> &[SceneError] {
        &self.others
    }

    /// This error followed by its [`others`](Self::others), each on its own (with no others
    /// of its own): every problem of the scene, in the file's order.
    pub fn into_all(mut self) -> Vec<SceneError> {
        let others = std::mem::take(&mut self.others);
        std::iter::once(self).chain(others).collect()
    }

    /// This error as a problem of another severity: a tool that holds a scene to a stricter
    /// standard than a game reports the warnings a load gives
    /// ([`LoadedScene::warnings`]) as errors.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.diagnostic.severity = severity;
        self
    }
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.offset, &self.diagnostic.file) {
            (Some(offset), Some(file)) => {
                let mut diagnostic = (*self.diagnostic).clone();
                diagnostic.file = None;
                write!(f, "{} (byte {offset}): {diagnostic}", file.display())
            }
            (Some(offset), None) => write!(f, "byte {offset}: {}", self.diagnostic),
            _ => write!(f, "{}", self.diagnostic),
        }
    }
}

impl std::error::Error for SceneError {}

/// Loads a scene (JSON or binary, told apart by the binary magic bytes) into `world`.
///
/// First every entity is created (so references can point anywhere in the scene: many to one,
/// cycles, self-references), then component values are read with references resolved through
/// the scene's stable IDs. Archetype instances are rebuilt from their archetype's current
/// version plus the scene's patch, keep their instance marker, and record the patch as their
/// overrides, so hot reload treats them like freshly spawned ones.
///
/// `file` names the source in error messages.
///
/// # Errors
/// Bad JSON, an unknown archetype or component, a dangling reference, a stable ID already in
/// the world (unless [`IdConflict::Remap`]), ... The world is left exactly as it was.
pub fn load_scene(
    bytes: &[u8],
    file: Option<&Path>,
    world: &mut World,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Result<LoadedScene, SceneError> {
    // Checked references (`ArchetypeRef`, `AssetPath`) are read against the library.
    super::logging::scene_load(file, bytes.len(), || {
        let references = library.reference_targets().context();
        references.install(|| load_scene_untraced(bytes, file, world, library, options))
    })
}

/// [`load_scene`] without its log span (see `logging.rs`), with the reference context installed.
///
/// A file the loader refuses that has entries placing sub-scenes (`"scene"`) is loaded again
/// with them ([`sub_scene`](crate::scene::sub_scene)): files without any pay nothing for it.
pub(crate) fn load_scene_untraced(
    bytes: &[u8],
    file: Option<&Path>,
    world: &mut World,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Result<LoadedScene, SceneError> {
    let error = match load_scene_flat(bytes, file, world, library, options) {
        Err(error) => error,
        loaded => return loaded,
    };
    crate::scene::sub_scene::load_with_sub_scenes(bytes, file, world, library, options)
        .unwrap_or(Err(error))
}

/// [`load_scene_untraced`] of a scene placing no sub-scene.
pub(crate) fn load_scene_flat(
    bytes: &[u8],
    file: Option<&Path>,
    world: &mut World,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Result<LoadedScene, SceneError> {
    let context = Context::new(file, library, options);
    if let Some(loaded) = crate::scene::migration::load_migrated(&context, world, bytes) {
        return loaded;
    }
    #[cfg(feature = "binary")]
    if crate::scene::save::SceneEncoding::detect(bytes) == crate::scene::save::SceneEncoding::Binary
    {
        // Check mode goes the careful way, which finds every problem.
        let fast = (!options.all_errors)
            .then(|| crate::scene::fast_load::load_binary_fast(&context, world, bytes));
        if let Some(loaded) = fast.flatten() {
            return Ok(loaded);
        }
        return load_binary(&context, world, bytes);
    }
    #[cfg(not(feature = "binary"))]
    if bytes.starts_with(&BINARY_MAGIC[..BINARY_MAGIC.len() - 1]) {
        let mut error = context.error(
            DiagnosticCode::UnsupportedFormat,
            "binary scenes need archetype-engine's `binary` feature (on by default); this build reads JSON scenes only",
        );
        error.offset = Some(0);
        return Err(error);
    }
    // A `.bin` file, or one that starts like the magic bytes, is a binary scene whose start is
    // damaged: reading it as JSON text would only report a confusing syntax error.
    #[cfg(feature = "binary")]
    let named_binary = file.is_some_and(|file| {
        crate::scene::save::SceneEncoding::for_path(file)
            == crate::scene::save::SceneEncoding::Binary
    });
    #[cfg(feature = "binary")]
    if named_binary || bytes.starts_with(&BINARY_MAGIC[..BINARY_MAGIC.len() - 1]) {
        let mut error = context.error(
            DiagnosticCode::Malformed,
            "not a binary scene: the file does not start with the magic bytes `ARCHSCN\\0` (damaged, or not a scene)",
        );
        error.offset = Some(0);
        return Err(error);
    }
    // Most files are well formed: one pass reads them; anything else (or any error) is read
    // again carefully, to report it exactly.
    if let (Ok(text), false) = (std::str::from_utf8(bytes), options.all_errors) {
        if let Some(loaded) = crate::scene::fast_load::load_json_fast(&context, world, text) {
            return Ok(loaded);
        }
    }
    if crate::scene::prepare_progress::cancelled() {
        return Err(context.error(DiagnosticCode::Io, "scene preparation cancelled"));
    }
    let text = SourceText::from_bytes(bytes.to_vec()).map_err(|error| context.text_error(error))?;
    load_json_text(&context, world, &text)
}

/// Reads a scene file (within the size limit) and loads it; see [`load_scene`].
///
/// # Errors
/// As [`load_scene`], and if the file cannot be read.
pub fn load_scene_from_path(
    path: impl AsRef<Path>,
    world: &mut World,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Result<LoadedScene, SceneError> {
    let path = path.as_ref();
    let bytes =
        read_limited(path, options.limits.max_scene_bytes).map_err(|diagnostic| SceneError {
            diagnostic: Box::new(diagnostic.with_file(path)),
            entity: None,
            offset: None,
            others: Vec::new(),
        })?;
    load_scene(&bytes, Some(path), world, library, options)
}

pub(super) struct Context<'a> {
    file: Option<PathBuf>,
    pub(super) library: &'a ArchetypeLibrary,
    pub(super) registry: &'a ComponentRegistry,
    pub(super) options: &'a SceneLoadOptions,
    /// What the load reports without refusing the scene (see [`Context::unknown_field`]).
    warnings: RefCell<Vec<SceneError>>,
    /// With [`SceneLoadOptions::all_errors`], the entities' problems found so far.
    errors: RefCell<Vec<SceneError>>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        file: Option<&Path>,
        library: &'a ArchetypeLibrary,
        options: &'a SceneLoadOptions,
    ) -> Self {
        Context {
            file: file.map(Path::to_path_buf),
            library,
            registry: library.registry(),
            options,
            warnings: RefCell::new(Vec::new()),
            errors: RefCell::new(Vec::new()),
        }
    }

    /// One entity's outcome: its error is the load's, or, with
    /// [`SceneLoadOptions::all_errors`], kept to report with the others while the load goes on
    /// (`true`: the entity failed; the caller leaves it unfinished).
    pub(super) fn entity_result(&self, result: Result<(), SceneError>) -> Result<bool, SceneError> {
        match result {
            Ok(()) => Ok(false),
            Err(error) if self.options.all_errors => {
                self.errors.borrow_mut().push(error);
                Ok(true)
            }
            Err(error) => Err(error),
        }
    }

    /// The entities' problems kept so far, as one error (the first, the others in it), if any.
    pub(super) fn take_errors(&self) -> Option<SceneError> {
        let mut errors = self.errors.take();
        errors.sort_by_key(|error| (error.offset, error.diagnostic.position));
        let mut errors = errors.into_iter();
        let mut first = errors.next()?;
        first.others.extend(errors);
        Some(first)
    }

    /// A field a component's type does not have: returned as the load's error, or, with
    /// [`SceneLoadOptions::unknown_fields`] at [`Severity::Warning`], kept as a warning.
    pub(super) fn unknown_field(&self, mut error: SceneError) -> Result<(), SceneError> {
        match self.options.unknown_fields {
            Severity::Error => Err(error),
            Severity::Warning | Severity::Note => {
                error.diagnostic.severity = Severity::Warning;
                self.warnings.borrow_mut().push(error);
                Ok(())
            }
        }
    }

    /// The warnings so far, in the file's order; none are left.
    pub(super) fn take_warnings(&self) -> Vec<SceneError> {
        let mut warnings = self.warnings.take();
        warnings.sort_by_key(|warning| (warning.offset, warning.diagnostic.position));
        warnings
    }

    pub(super) fn error(&self, code: DiagnosticCode, message: impl Into<String>) -> SceneError {
        let mut diagnostic = Diagnostic::error(code, message);
        diagnostic.file = self.file.clone();
        SceneError {
            diagnostic: Box::new(diagnostic),
            entity: None,
            offset: None,
            others: Vec::new(),
        }
    }

    /// `error` (found without the context) as an error of this context's file.
    pub(super) fn refile(&self, mut error: SceneError) -> SceneError {
        error.diagnostic.file = self.file.clone();
        error
    }

    pub(super) fn text_error(&self, error: TextError) -> SceneError {
        let code = DiagnosticCode::from(error.kind);
        let mut scene_error = self.error(code, error.message);
        scene_error.diagnostic.position = Some(error.position);
        scene_error.diagnostic.span = Some(error.offset..error.offset);
        scene_error
    }
}

/// Where a component value came from, to place errors.
#[derive(Clone, Copy)]
pub(super) enum Source<'t> {
    Json(&'t SourceText),
    Binary,
    /// JSON read in one pass ([`load_json_fast`](crate::scene::fast_load::load_json_fast)),
    /// without its line index: a problem keeps its span (an empty one where it is placed, if it
    /// has none), and its line and column, those of the span's start, are worked out when it
    /// is reported ([`place_by_offsets`]).
    JsonOffsets,
}

/// A component value as read in phase one, not yet decoded.
pub(super) enum Payload<'a> {
    /// JSON text (a full value, or a merge patch for archetype instances); `null` removes.
    Json(&'a str),
    /// Postcard bytes of a full value.
    Postcard(&'a [u8]),
    /// Postcard bytes of a full value laid out as the component was when the scene was saved,
    /// which is not how it is now: read by that layout, as JSON.
    Evolved(&'a [u8], Arc<Layout>),
    /// A binary archetype instance's changed component (see
    /// [`instance_diff`](crate::scene::instance_diff)), with its saved layout where that is not
    /// its type's now.
    Diff(Diff<'a>, Option<Arc<Layout>>),
    /// The archetype's component is removed from this entity.
    Removed,
}

/// One entity as read in phase one.
pub(super) struct Entry<'a> {
    pub id: StableId,
    /// Where the entry is (byte offset), for errors.
    pub offset: usize,
    pub archetype: Option<Cow<'a, str>>,
    pub child: Option<Cow<'a, str>>,
    /// Where the archetype and child names are (byte spans), for errors.
    pub name_spans: (Range<usize>, Range<usize>),
    pub components: Vec<(Cow<'a, str>, usize, Payload<'a>)>,
}

struct Document<'a> {
    entries: Vec<Entry<'a>>,
    /// The shared table: key → the value's JSON text.
    shared: FxHashMap<u64, String>,
    /// Where each shared value is (byte offset), for errors.
    shared_at: FxHashMap<u64, usize>,
    /// The header: `meta`, and each archetype's child paths when the scene was saved.
    head: SceneHead,
}

/// What a scene says about itself before its entities.
#[derive(Default)]
pub(super) struct SceneHead {
    pub meta: Option<Map<String, Value>>,
    pub nodes: Option<ArchetypeNodes>,
}

/// Loads a JSON scene the careful way: the whole text read first (upgraded from an older
/// format if need be), then the entities built.
pub(super) fn load_json_text(
    context: &Context<'_>,
    world: &mut World,
    text: &SourceText,
) -> Result<LoadedScene, SceneError> {
    let source = text.text();
    check_top_level(context, text)?;
    // A file in the current format parses in one pass. Anything else (an older or newer
    // format, or any error) reads the `format` key alone first, as it always did, so problems
    // are reported in the same order: syntax and version before layout.
    let scanned = match scan(source, &context.options.limits) {
        Ok(scanned) if scanned.format == SCENE_FORMAT_VERSION => scanned,
        fast => {
            let version = checked_format(context, text)?;
            if version < SCENE_FORMAT_VERSION {
                return load_upgraded(context, world, text, version);
            }
            fast.map_err(|failure| scan_error(context, text, failure))?
        }
    };
    let mut entries = Vec::with_capacity(scanned.entities.len());
    for entity in scanned.entities {
        entries.push(json_entry(context, text, entity)?);
    }
    let (shared, shared_at) = json_shared(context, text, scanned.shared.unwrap_or_default())?;
    let document = Document {
        entries,
        shared,
        shared_at,
        head: SceneHead {
            meta: scanned.meta,
            nodes: scanned.archetypes,
        },
    };
    instantiate(context, world, document, Source::Json(text))
}

/// Refuses a scene file that is empty, or whose top level is not a JSON object. Checked
/// first: serde reads an array as a struct written positionally, and `[]` would pass as a
/// format-1 document that upgrades to itself forever.
fn check_top_level(context: &Context<'_>, text: &SourceText) -> Result<(), SceneError> {
    let source = text.text();
    if source.trim().is_empty() {
        let mut error = context.error(
            DiagnosticCode::Syntax,
            "empty file; expected a scene (a JSON object)",
        );
        error.diagnostic.position = Some(text.position(0));
        return Err(error);
    }
    let start = source.len() - source.trim_start().len();
    let found = match source.as_bytes().get(start) {
        Some(b'[') => Some("an array"),
        Some(b'"') => Some("a string"),
        Some(b't' | b'f') => Some("a boolean"),
        Some(b'n') => Some("null"),
        Some(b'-' | b'0'..=b'9') => Some("a number"),
        _ => None,
    };
    if let Some(found) = found {
        let mut error = context.error(
            DiagnosticCode::NotAnObject,
            format!("expected a JSON object at the top level of a scene file, found {found}"),
        );
        error.diagnostic.position = Some(text.position(start));
        return Err(error);
    }
    Ok(())
}

/// The scene's `format`, read alone, refused if this library does not read it (0, or newer
/// than it knows).
fn checked_format(context: &Context<'_>, text: &SourceText) -> Result<u64, SceneError> {
    let source = text.text();
    let version =
        peek_format(source).map_err(|error| context.text_error(json_error(text, source, error)))?;
    let format_error = |code: DiagnosticCode, message: String| {
        let mut error = context.error(code, message);
        let at = crate::json::locate(
            source,
            &[crate::json::PathSegment::Key("format".to_string())],
        )
        .map_or(0, |located| located.value.start);
        error.diagnostic.position = Some(text.position(at));
        error
    };
    if version == 0 {
        // Versions start at 1; archetype files refuse 0 the same way.
        return Err(format_error(
            DiagnosticCode::Malformed,
            format!("`format` must be a positive integer (the current version is {SCENE_FORMAT_VERSION})"),
        ));
    }
    if version > SCENE_FORMAT_VERSION {
        return Err(format_error(
            DiagnosticCode::UnsupportedFormat,
            format!("scene format {version} is newer than this library reads (up to {SCENE_FORMAT_VERSION}); update archetype-engine"),
        ));
    }
    Ok(version)
}

/// A JSON scene's document in the current format (upgraded from an older one if need be), the
/// format the file declares, and its text; refused as [`load_json_text`] refuses a file's
/// text, top level and format.
pub(super) fn json_document(
    context: &Context<'_>,
    bytes: &[u8],
) -> Result<(Value, u64, SourceText), SceneError> {
    let text = SourceText::from_bytes(bytes.to_vec()).map_err(|error| context.text_error(error))?;
    check_top_level(context, &text)?;
    let format = checked_format(context, &text)?;
    let document = current_document(context, &text, format)?;
    Ok((document, format, text))
}

/// Loads a scene written in an older format `version`, upgraded to the current one first.
fn load_upgraded(
    context: &Context<'_>,
    world: &mut World,
    text: &SourceText,
    version: u64,
) -> Result<LoadedScene, SceneError> {
    let upgraded = upgrade(context, text, version)?;
    let upgraded =
        SourceText::from_bytes(upgraded.into_bytes()).map_err(|error| context.text_error(error))?;
    // Its errors are placed in the upgraded text, not the file: no position.
    load_json_text(context, world, &upgraded).map_err(|mut error| {
        error.diagnostic.position = None;
        error.diagnostic.span = None;
        error
    })
}

/// One entity of a scanned JSON scene as an entry: its ID parsed, its names read.
fn json_entry<'t>(
    context: &Context<'_>,
    text: &'t SourceText,
    entity: JsonEntity<'t>,
) -> Result<Entry<'t>, SceneError> {
    let source = text.text();
    let offset = offset_in(source, entity.id.get());
    let id = parse_id(entity.id.get()).map_err(|bad| {
        let mut error = context.error(DiagnosticCode::Malformed, bad.to_string());
        error.diagnostic.position = Some(text.position(offset));
        error
    })?;
    let components = entity
        .components
        .0
        .into_iter()
        .map(|(name, raw)| {
            let offset = offset_in(source, raw.get());
            let payload = if raw.get() == "null" {
                Payload::Removed
            } else {
                Payload::Json(raw.get())
            };
            (name, offset, payload)
        })
        .collect();
    let name = |raw, what| entry_name(context, text, (id, offset), raw, what);
    let (archetype, archetype_span) = name(entity.archetype, "archetype")?;
    let (child, child_span) = name(entity.child, "child")?;
    Ok(Entry {
        id,
        offset,
        archetype,
        child,
        name_spans: (archetype_span, child_span),
        components,
    })
}

/// The name `what` (`archetype` or `child`) of entity `id` (at `offset`), if it has one, and
/// its span (or the entity's offset).
fn entry_name<'t>(
    context: &Context<'_>,
    text: &'t SourceText,
    (id, offset): (StableId, usize),
    raw: Option<&'t RawValue>,
    what: &str,
) -> Result<(Option<Cow<'t, str>>, Range<usize>), SceneError> {
    let Some(raw) = raw else {
        return Ok((None, offset..offset));
    };
    let at = offset_in(text.text(), raw.get());
    let name = serde_json::from_str::<String>(raw.get()).map_err(|_| {
        let mut error = context.error(
            DiagnosticCode::Malformed,
            format!("entity {id}: `{what}` must be a string"),
        );
        error.diagnostic.position = Some(text.position(at));
        error
    })?;
    Ok((Some(Cow::Owned(name)), at..at + raw.get().len()))
}

/// A scene's shared table: each value's text, and where it is (byte offset), by key.
type SharedTable = (FxHashMap<u64, String>, FxHashMap<u64, usize>);

/// A JSON scene's shared table: each value's text, and where it is, by key.
fn json_shared(
    context: &Context<'_>,
    text: &SourceText,
    table: BTreeMap<Cow<'_, str>, &RawValue>,
) -> Result<SharedTable, SceneError> {
    let source = text.text();
    let mut shared = FxHashMap::default();
    let mut shared_at = FxHashMap::default();
    for (key, value) in table {
        let Some(parsed) = shared_key(&key) else {
            let mut error = context.error(
                DiagnosticCode::Malformed,
                format!("shared value key `{key}` is not 16 hex digits"),
            );
            error.diagnostic.position =
                Some(text.position(key_before(source, offset_in(source, value.get()))));
            return Err(error);
        };
        shared.insert(parsed, value.get().to_string());
        shared_at.insert(parsed, offset_in(source, value.get()));
    }
    Ok((shared, shared_at))
}

/// The error of the careful reader's first pass: a syntax or layout error where serde_json
/// stopped, or a limit the scene goes over, at the first entry or component over it.
fn scan_error(context: &Context<'_>, text: &SourceText, failure: ScanError) -> SceneError {
    let source = text.text();
    let over = match failure.stop {
        None => return context.text_error(json_error(text, source, failure.error)),
        Some(Stop::UnknownKey(place, expected)) => {
            return unknown_scene_key(context, text, &failure.error, place, expected)
        }
        Some(Stop::Over(over)) => over,
    };
    let message = crate::json::strip_position(&failure.error.to_string()).to_string();
    let at = match over {
        OverLimit::Entities => {
            let limit = context.options.limits.max_scene_entities;
            let path = [
                crate::json::PathSegment::Key(
                    crate::scene::format::scene_keys::ENTITIES.to_string(),
                ),
                crate::json::PathSegment::Index(limit),
            ];
            crate::json::locate(source, &path).map_or(0, |located| located.value.start)
        }
        // serde_json stopped after the key of the value over the limit.
        OverLimit::Values => {
            let after = text.offset_of_serde_position(failure.error.line(), failure.error.column());
            key_before(source, after + 1)
        }
    };
    let mut error = context.error(DiagnosticCode::TooLarge, message);
    error.diagnostic.position = Some(text.position(at));
    error.diagnostic.span = Some(at..at);
    error
}

/// A key a scene's top level or entry does not have (serde stopped just after it), underlined,
/// with the keys it has and the nearest as a suggestion, as archetype files say it.
fn unknown_scene_key(
    context: &Context<'_>,
    text: &SourceText,
    error: &serde_json::Error,
    place: &str,
    expected: &[&str],
) -> SceneError {
    let source = text.text();
    let after = text.offset_of_serde_position(error.line(), error.column());
    let span = key_span(source, after + 1);
    let written = source.get(span.clone()).unwrap_or_default();
    let key = serde_json::from_str::<String>(written).unwrap_or_else(|_| written.to_string());
    let (message, suggestion) = crate::diagnostic::unknown_key(&key, expected, place);
    let mut scene_error = context.error(DiagnosticCode::UnknownKey, message);
    scene_error.diagnostic.position = Some(text.position(span.start));
    scene_error.diagnostic.suggestion = suggestion;
    scene_error.diagnostic.span = Some(span);
    scene_error
}

/// A shared-table key: 16 hex digits.
pub(super) fn shared_key(key: &str) -> Option<u64> {
    (key.len() == 16)
        .then(|| u64::from_str_radix(key, 16).ok())
        .flatten()
}

/// A component a scene may hold, by name: any registered one except those the library
/// manages itself, of which only `Parent` and `Children` are saved.
pub(super) fn scene_component(registry: &ComponentRegistry, name: &str) -> Option<ComponentId> {
    registry.id(name).filter(|id| {
        !registry.is_managed(*id) || matches!(registry.name(*id), "Parent" | "Children")
    })
}

/// The offset of the key (its opening quote) of the object member whose value starts at
/// `value_offset`: back over `:` and whitespace to the key's closing quote, then to its
/// opening quote.
fn key_before(text: &str, value_offset: usize) -> usize {
    key_span(text, value_offset).start
}

/// The span of the key (quotes included) of the member whose value starts at `value_offset`.
fn key_span(text: &str, value_offset: usize) -> std::ops::Range<usize> {
    let bytes = text.as_bytes();
    let mut i = value_offset.min(bytes.len());
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b':') {
        i -= 1;
    }
    // `i - 1` is the closing quote; find the opening one that is not escaped.
    let mut j = i.saturating_sub(1);
    while j > 0 {
        j -= 1;
        if bytes[j] == b'"' && (j == 0 || bytes[j - 1] != b'\\') {
            return j..i;
        }
    }
    value_offset..value_offset
}

/// The byte offset of `slice` (a sub-slice of `text`) in `text`.
fn offset_in(text: &str, slice: &str) -> usize {
    (slice.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len())
}

/// Why an entry's `"id"` is no stable ID.
pub(super) enum BadEntityId {
    /// Not a string.
    NotAString(String),
    /// A string, but not 16 hex digits.
    Parse(ParseStableIdError),
}

impl fmt::Display for BadEntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadEntityId::NotAString(text) => {
                write!(f, "entity id {text} must be a string of 16 hex digits")
            }
            BadEntityId::Parse(error) => write!(f, "entity id {error}"),
        }
    }
}

/// The stable ID an entry's `"id"` (its raw JSON text) holds; escapes are read as JSON reads
/// them (`"\u0030…"` is the ID `0…`).
fn parse_id(text: &str) -> Result<StableId, BadEntityId> {
    match crate::json::decoded_string(text) {
        Some(id) => id.parse::<StableId>().map_err(BadEntityId::Parse),
        None => Err(BadEntityId::NotAString(text.to_string())),
    }
}

fn json_error(text: &SourceText, source: &str, error: serde_json::Error) -> TextError {
    let mut offset = text.offset_of_serde_position(error.line(), error.column());
    let message = crate::json::strip_position(&error.to_string()).to_string();
    if crate::json::names_a_field(&message) {
        // serde_json stops at the key's closing quote; the key starts at its opening one.
        offset = key_before(source, offset + 1);
    }
    let kind = crate::json::syntax_error_kind(&message);
    let (offset, message) = crate::json::explain_syntax_error(source, offset, &message);
    TextError {
        kind,
        position: text.position(offset),
        offset,
        message,
        first: None,
    }
}

/// Reads only the `format` key (without building anything else).
fn peek_format(source: &str) -> Result<u64, serde_json::Error> {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(default)]
        format: Option<u64>,
    }
    // Unknown keys are skipped cheaply (IgnoredAny), so this is one fast scan.
    let peek: Peek = serde_json::from_str(source)?;
    Ok(peek.format.unwrap_or(1))
}

/// Upgrades an older document to the current layout.
///
/// Format 1 (before stable archetype instances): entities had `uid` instead of `id` and
/// `prefab` instead of `archetype`, and no `child` key (children were not instances).
fn upgrade(context: &Context<'_>, text: &SourceText, version: u64) -> Result<String, SceneError> {
    let document = current_document(context, text, version)?;
    serde_json::to_string(&document)
        .map_err(|error| context.error(DiagnosticCode::Malformed, error.to_string()))
}

/// The document of `text`, written in format `version`, brought to the current layout and
/// format.
/// How many levels of nesting a scene file puts around a component value at most (the top
/// level, `entities`, an entry, a placement's `overrides`, its entity, `components`, ...).
const SCENE_LEVELS: usize = 8;

fn current_document(
    context: &Context<'_>,
    text: &SourceText,
    version: u64,
) -> Result<Value, SceneError> {
    // Duplicate keys refused, as everywhere else (serde_json's `Value` keeps the last).
    let depth = context
        .options
        .limits
        .max_depth
        .saturating_add(SCENE_LEVELS);
    let mut document = crate::json::parse_json(text, depth).map_err(|e| context.text_error(e))?;
    upgrade_layout(&mut document, version);
    if let Value::Object(top) = &mut document {
        top.insert("format".to_string(), Value::from(SCENE_FORMAT_VERSION));
    }
    Ok(document)
}

/// Brings a document of format `version` to the current layout.
pub(super) fn upgrade_layout(document: &mut Value, version: u64) {
    if version <= 1 {
        if let Some(Value::Array(entities)) = document.get_mut("entities") {
            for entity in entities.iter_mut() {
                if let Value::Object(entity) = entity {
                    if let Some(uid) = entity.remove("uid") {
                        entity.insert("id".to_string(), uid);
                    }
                    if let Some(prefab) = entity.remove("prefab") {
                        entity.insert("archetype".to_string(), prefab);
                    }
                }
            }
        }
    }
}

// ---- phase one, binary ----

/// What the header of a binary scene says, read without loading the scene.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BinarySceneHeader {
    /// The format version.
    pub format: u64,
    /// The component names the scene's entries refer to (the registry that wrote it).
    pub components: Vec<String>,
    /// The archetypes its instances come from.
    pub archetypes: Vec<String>,
    /// Number of shared values.
    pub shared: usize,
    /// Number of entities.
    pub entities: usize,
    /// The game's own data about the file, if it gave some (binary format 3 on).
    pub meta: Option<Map<String, Value>>,
    /// Each archetype's child paths when the scene was saved (binary format 3 on).
    pub nodes: Option<ArchetypeNodes>,
}

/// Reads the header of a binary scene (`*.scene.bin`), for tools that describe or migrate
/// scenes without a library.
///
/// # Errors
/// If the bytes are not a binary scene or the header is cut short.
pub fn read_binary_scene_header(bytes: &[u8]) -> Result<BinarySceneHeader, SceneError> {
    let context_error = |message: String, offset: usize| {
        let mut diagnostic = Diagnostic::error(DiagnosticCode::Malformed, message);
        diagnostic.file = None;
        SceneError {
            diagnostic: Box::new(diagnostic),
            entity: None,
            offset: Some(offset),
            others: Vec::new(),
        }
    };
    if !bytes.starts_with(BINARY_MAGIC) {
        return Err(context_error(
            "not a binary scene (no `ARCHSCN` magic bytes)".to_string(),
            0,
        ));
    }
    let (mut reader, format) =
        open_binary(bytes).map_err(|e| context_error(e.message, e.offset))?;
    let header =
        read_tables(&mut reader, format).map_err(|e| context_error(e.message, e.offset))?;
    let entities = reader
        .count("entity count", MIN_ENTRY_BYTES)
        .map_err(|e| context_error(e.message, e.offset))?;
    Ok(BinarySceneHeader {
        format: header.format,
        components: header.components.iter().map(|c| c.to_string()).collect(),
        archetypes: header.archetypes.iter().map(|a| a.to_string()).collect(),
        shared: header.shared.len(),
        entities,
        meta: header.meta,
        nodes: header.nodes,
    })
}

pub(super) struct Header<'a> {
    pub format: u64,
    pub meta: Option<Map<String, Value>>,
    pub components: Vec<&'a str>,
    /// Each component's value layout when the scene was saved (empty: none, or before format 3).
    pub layouts: Vec<&'a [u8]>,
    pub archetypes: Vec<&'a str>,
    /// Each archetype's child paths when the scene was saved (`None` before format 3).
    pub nodes: Option<ArchetypeNodes>,
    pub shared: FxHashMap<u64, String>,
    /// Where each shared value is (byte offset), for errors.
    pub shared_at: FxHashMap<u64, usize>,
}

/// Reads everything between the version and the entities: name tables, shared table.
pub(super) fn read_tables<'a>(
    reader: &mut BinaryReader<'a>,
    format: u64,
) -> Result<Header<'a>, crate::scene::format::BinaryError> {
    // Format 3 added the meta, the value layouts and the child paths.
    let recorded = format >= BINARY_FORMAT_JSON_PATCHES;
    let meta = if recorded { binary_meta(reader)? } else { None };
    let count = reader.count("component table size", 1)?;
    let mut components = Vec::with_capacity(count);
    let mut layouts = Vec::with_capacity(count);
    for _ in 0..count {
        components.push(reader.str("component name")?);
        layouts.push(if recorded {
            reader.bytes("component layout")?
        } else {
            &[]
        });
    }
    let count = reader.count("archetype table size", 1)?;
    let mut archetypes = Vec::with_capacity(count);
    let mut nodes = recorded.then(ArchetypeNodes::new);
    for _ in 0..count {
        let name = reader.str("archetype name")?;
        archetypes.push(name);
        if let Some(nodes) = &mut nodes {
            let children = reader.count("child count", 1)?;
            let mut paths = Vec::with_capacity(children);
            for _ in 0..children {
                paths.push(reader.str("child path")?.to_string());
            }
            nodes.insert(name.to_string(), paths);
        }
    }
    let count = reader.count("shared table size", 9)?;
    let mut shared = FxHashMap::default();
    let mut shared_at = FxHashMap::default();
    for _ in 0..count {
        let key = reader.u64_le("shared key")?;
        let at = reader.offset;
        let bytes = reader.bytes("shared value")?;
        let text = std::str::from_utf8(bytes).map_err(|_| crate::scene::format::BinaryError {
            offset: at,
            message: "shared value is not valid UTF-8".to_string(),
        })?;
        shared.insert(key, text.to_string());
        shared_at.insert(key, reader.offset - bytes.len());
    }
    Ok(Header {
        format,
        meta,
        components,
        layouts,
        archetypes,
        nodes,
        shared,
        shared_at,
    })
}

/// A binary scene opened ([`open_scene_binary`]): its reader at the first entry, its header,
/// each component's saved layout where it differs from its type's now, and its entry count.
pub(super) struct OpenedBinary<'a> {
    pub reader: BinaryReader<'a>,
    pub header: Header<'a>,
    pub evolved: Vec<Option<Arc<Layout>>>,
    pub count: usize,
}

/// Why a binary scene does not open.
pub(super) enum NotOpened {
    /// Bytes the format refuses: no magic, a bad checksum, tables cut short, ...
    Malformed(crate::scene::format::BinaryError),
    /// A format version this library does not read.
    Version(u64),
    /// More entries than [`Limits::max_scene_entities`](crate::Limits::max_scene_entities).
    TooMany(usize),
}

/// Opens a binary scene as both routes read it: the container and its checksum, the version,
/// the tables, the layouts that changed, and the entry count, taken from `budget`.
pub(super) fn open_scene_binary<'a>(
    registry: &ComponentRegistry,
    bytes: &'a [u8],
    budget: &mut SceneBudget,
) -> Result<OpenedBinary<'a>, NotOpened> {
    let (mut reader, version) = open_binary(bytes).map_err(NotOpened::Malformed)?;
    if !is_readable_binary(version) {
        return Err(NotOpened::Version(version));
    }
    let header = read_tables(&mut reader, version).map_err(NotOpened::Malformed)?;
    let evolved = evolved_layouts(registry, &header.components, &header.layouts);
    let count = reader
        .count("entity count", MIN_ENTRY_BYTES)
        .map_err(NotOpened::Malformed)?;
    (budget.take_entities(count)).map_err(|_| NotOpened::TooMany(count))?;
    Ok(OpenedBinary {
        reader,
        header,
        evolved,
        count,
    })
}

/// The `meta` of a binary scene: JSON text, empty for none.
fn binary_meta(
    reader: &mut BinaryReader<'_>,
) -> Result<Option<Map<String, Value>>, crate::scene::format::BinaryError> {
    let at = reader.offset;
    let bytes = reader.bytes("meta")?;
    if bytes.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice(bytes)
        .map(Some)
        .map_err(|error| crate::scene::format::BinaryError {
            offset: at,
            message: format!("`meta` is not a JSON object: {error}"),
        })
}

/// Loads a binary scene the careful way: every entry read first, then the entities built.
pub(super) fn load_binary(
    context: &Context<'_>,
    world: &mut World,
    bytes: &[u8],
) -> Result<LoadedScene, SceneError> {
    let document = parse_binary(context, bytes)?;
    instantiate(context, world, document, Source::Binary)
}

/// Reads a binary scene whole: the header, the tables, every entry (its values left as bytes).
fn parse_binary<'a>(context: &Context<'_>, bytes: &'a [u8]) -> Result<Document<'a>, SceneError> {
    let mut budget = SceneBudget::new(&context.options.limits);
    let opened = open_scene_binary(context.registry, bytes, &mut budget);
    let OpenedBinary {
        reader,
        header,
        evolved,
        count,
    } = opened.map_err(|why| match why {
        NotOpened::Malformed(error) => binary_error(context, error),
        NotOpened::Version(version) => {
            let mut error = context.error(
                DiagnosticCode::UnsupportedFormat,
                format!("binary scene format {version} is not one this library reads (up to {BINARY_SCENE_FORMAT_VERSION}); convert it with a matching version"),
            );
            error.offset = Some(BINARY_MAGIC.len());
            error
        }
        NotOpened::TooMany(count) => too_many(context, count),
    })?;
    let Header {
        meta,
        components,
        archetypes,
        nodes,
        shared,
        shared_at,
        ..
    } = header;
    let mut body = BinaryBody {
        context,
        reader,
        components,
        archetypes,
        evolved,
        budget,
    };
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        entries.push(body.entry()?);
    }
    if !body.reader.is_at_end() {
        let mut error = context.error(
            DiagnosticCode::Malformed,
            "trailing bytes after the last entity",
        );
        error.offset = Some(body.reader.offset);
        return Err(error);
    }
    Ok(Document {
        entries,
        shared,
        shared_at,
        head: SceneHead { meta, nodes },
    })
}

/// A binary scene's malformed bytes, as the load's error at their offset.
fn binary_error(context: &Context<'_>, error: crate::scene::format::BinaryError) -> SceneError {
    let mut scene_error = context.error(DiagnosticCode::Malformed, error.message);
    scene_error.offset = Some(error.offset);
    scene_error
}

/// Reading a binary scene's entries: the reader, and the tables the entries index.
struct BinaryBody<'a, 'c> {
    context: &'c Context<'c>,
    reader: BinaryReader<'a>,
    /// The component table.
    components: Vec<&'a str>,
    /// The archetype table.
    archetypes: Vec<&'a str>,
    /// Each component's saved layout, where it differs from its type's now.
    evolved: Vec<Option<Arc<Layout>>>,
    /// What the scene may still hold.
    budget: SceneBudget,
}

impl<'a> BinaryBody<'a, '_> {
    /// Reads the next entry.
    fn entry(&mut self) -> Result<Entry<'a>, SceneError> {
        let context = self.context;
        let fail = |error| binary_error(context, error);
        let head = read_entry_head(&mut self.reader, &self.archetypes).map_err(fail)?;
        let offset = head.offset;
        if let Err(over) = self.budget.take_values(head.components) {
            let message = over.message(&context.options.limits);
            let mut error = context.error(DiagnosticCode::TooLarge, message);
            error.offset = Some(offset);
            return Err(error);
        }
        let mut components = Vec::with_capacity(head.components);
        for _ in 0..head.components {
            components.push(self.component()?);
        }
        Ok(Entry {
            id: head.id,
            offset,
            archetype: head.archetype.map(Cow::Borrowed),
            child: (!head.child.is_empty()).then_some(Cow::Borrowed(head.child)),
            name_spans: (offset..offset, offset..offset),
            components,
        })
    }

    /// Reads the next component value of an entry: its name, offset and payload.
    fn component(&mut self) -> Result<(Cow<'a, str>, usize, Payload<'a>), SceneError> {
        let fail = |error| binary_error(self.context, error);
        let head = read_component_head(&mut self.reader, self.components.len()).map_err(fail)?;
        let max_depth = self.context.options.limits.max_depth;
        let evolved = self.evolved.get(head.index).and_then(Option::as_ref);
        let payload = head.payload(evolved, max_depth).map_err(fail)?;
        let name = self.components.get(head.index).copied().unwrap_or_default();
        Ok((Cow::Borrowed(name), head.offset, payload))
    }
}

/// A binary scene as the JSON document of the current format (for a migration hook): typed
/// values decoded by their registered types and written as JSON, references as stable IDs,
/// shared values inline.
pub(super) fn binary_document(context: &Context<'_>, bytes: &[u8]) -> Result<Value, SceneError> {
    let document = parse_binary(context, bytes)?;
    // Each entry gets a stand-in handle, so references read from the bytes can be written
    // back as stable IDs.
    let handles: Vec<Entity> = (0..document.entries.len() as u64)
        .filter_map(|index| Entity::from_bits((1 << 32) | index))
        .collect();
    let ids: IdIndex = (document.entries.iter().map(|e| e.id))
        .zip(handles.iter().copied())
        .collect();
    let reverse: Arc<FxHashMap<Entity, StableId>> =
        Arc::new(ids.iter().map(|(id, entity)| (*entity, *id)).collect());
    let stand_ins = StandIns {
        ids: Arc::new(ids),
        reverse,
    };
    let (entities, _) = with_load_table(LoadTable::new(document.shared.clone()), || {
        let entries = document.entries.iter();
        entries
            .map(|entry| entry_document(context, entry, &stand_ins))
            .collect::<Result<Vec<Value>, SceneError>>()
    });
    let mut top = Map::new();
    top.insert("format".into(), Value::from(SCENE_FORMAT_VERSION));
    if let Some(meta) = document.head.meta {
        top.insert("meta".into(), Value::Object(meta));
    }
    if let Some(nodes) = document.head.nodes {
        top.insert("archetypes".into(), serde_json::json!(nodes));
    }
    top.insert("entities".into(), Value::Array(entities?));
    Ok(Value::Object(top))
}

/// The stand-in handles of a binary scene's entries (see [`binary_document`]), both ways.
struct StandIns {
    /// Each entry's stand-in handle, by its stable ID.
    ids: Arc<IdIndex>,
    /// Each entry's stable ID, by its stand-in handle.
    reverse: Arc<FxHashMap<Entity, StableId>>,
}

/// One entry of a binary scene as a JSON entry (see [`binary_document`]).
fn entry_document(
    context: &Context<'_>,
    entry: &Entry<'_>,
    stand_ins: &StandIns,
) -> Result<Value, SceneError> {
    let mut components = Map::new();
    for (name, offset, payload) in &entry.components {
        let postcard_json = |bytes: &[u8], layout: Option<&Arc<Layout>>| match layout {
            None => {
                let at = ValueAt {
                    entry,
                    name,
                    offset: *offset,
                };
                typed_to_json(context, at, bytes, stand_ins)
            }
            // Read by its saved layout: no type needed (the component may be gone).
            Some(layout) => {
                let mut rest = bytes;
                crate::component::read_value(layout, &mut rest).map_err(|message| {
                    let mut error = component_error(
                        context,
                        entry,
                        name,
                        FieldPath::root(),
                        message.to_string(),
                    );
                    error.offset = Some(*offset);
                    error
                })
            }
        };
        let value = match payload {
            Payload::Removed => Value::Null,
            Payload::Json(text) => serde_json::from_str(text).map_err(|error| {
                let mut error =
                    component_error(context, entry, name, FieldPath::root(), error.to_string());
                error.offset = Some(*offset);
                error
            })?,
            Payload::Postcard(bytes) => postcard_json(bytes, None)?,
            Payload::Evolved(bytes, layout) => postcard_json(bytes, Some(layout))?,
            // The merge patch a JSON scene would hold.
            Payload::Diff(diff, layout) => {
                project(&postcard_json(diff.value, layout.as_ref())?, &diff.shape())
            }
        };
        components.insert(name.to_string(), value);
    }
    let mut out = Map::new();
    out.insert("id".into(), Value::String(entry.id.to_string()));
    if let Some(archetype) = &entry.archetype {
        out.insert("archetype".into(), Value::String(archetype.to_string()));
    }
    if let Some(child) = &entry.child {
        out.insert("child".into(), Value::String(child.to_string()));
    }
    out.insert("components".into(), Value::Object(components));
    Ok(Value::Object(out))
}

/// A postcard value of component `name` as JSON, read by the component's registered type.
fn typed_to_json(
    context: &Context<'_>,
    at: ValueAt<'_>,
    bytes: &[u8],
    stand_ins: &StandIns,
) -> Result<Value, SceneError> {
    let ValueAt {
        entry,
        name,
        offset,
    } = at;
    let fail = |message: String| {
        let mut error = component_error(context, entry, name, FieldPath::root(), message);
        error.offset = Some(offset);
        error
    };
    let component = scene_component(context.registry, name).ok_or_else(|| {
        fail(format!(
            "unknown component `{name}`; a binary value is read by its registered type"
        ))
    })?;
    let ops = context.registry.ops(component);
    let mapper = LoadRefs {
        ids: stand_ins.ids.clone(),
        wire: RefWire::Number,
        instance: None,
    };
    let (typed, _) = with_mapper(mapper, || ops.read_postcard(bytes));
    let typed = typed.map_err(|(_, message)| fail(message))?;
    let writer = WriteIds {
        ids: stand_ins.reverse.clone(),
    };
    let (value, _) = with_mapper(writer, || ops.encode(&typed));
    value.map_err(|error| fail(error.to_string()))
}

/// For each component of a binary scene's table: its layout when the scene was saved, where
/// that differs from the layout of the type registered under its name now (`None`: the same,
/// or unknown, and the values are read as they are).
pub(super) fn evolved_layouts(
    registry: &ComponentRegistry,
    names: &[&str],
    layouts: &[&[u8]],
) -> Vec<Option<Arc<Layout>>> {
    names
        .iter()
        .zip(layouts)
        .map(|(name, stored)| {
            if stored.is_empty() {
                return None;
            }
            let current = registry.id(name).and_then(|id| registry.layout_bytes(id));
            if current == Some(*stored) {
                return None;
            }
            crate::component::from_bytes::<Layout>(stored)
                .ok()
                .map(Arc::new)
        })
        .collect()
}

/// Reads a value saved with an older layout as JSON, then decodes it by the type registered
/// now under the component's name; fields the type no longer has are dropped (they are the
/// old layout's, not typos). References and shared values are read as numbers, through the
/// binary load's entity mapper and shared table.
pub(super) fn decode_evolved(
    context: &Context<'_>,
    component: ComponentId,
    bytes: &[u8],
    layout: &Layout,
) -> Result<TypedValue, (FieldPath, String)> {
    let mut rest = bytes;
    let value = crate::component::read_value(layout, &mut rest).map_err(|message| {
        let message = format!("the value does not match its saved layout: {message}");
        (FieldPath::root(), message)
    })?;
    let decoded = context
        .registry
        .ops(component)
        .decode(&value, &mut Vec::new());
    decoded.map_err(|error| {
        let message = format!(
            "{} (the component changed since the scene was saved)",
            error.message
        );
        (error.path, message)
    })
}

fn too_many(context: &Context<'_>, count: usize) -> SceneError {
    context.error(
        DiagnosticCode::TooLarge,
        format!(
            "scene has {count} entities, over the limit of {}",
            context.options.limits.max_scene_entities
        ),
    )
}

// ---- phase two: create entities, decode components, insert ----

/// Resolves references by stable ID (and `#` paths inside archetype instances).
pub(super) struct LoadRefs {
    pub ids: Arc<IdIndex>,
    pub wire: RefWire,
    /// For archetype values: the instance's entities by path, and the base path.
    pub instance: Option<(Arc<FxHashMap<String, Entity>>, String)>,
}

impl EntityMapper for LoadRefs {
    fn wire(&self) -> RefWire {
        self.wire
    }
    fn write(&mut self, _entity: Entity) -> Result<RefOut, MapError> {
        Err(MapError::NotWritten(ReadOnly::Loading))
    }
    fn read(&mut self, reference: RefIn<'_>) -> Result<Entity, MapError> {
        if let (RefIn::Text(text), Some((paths, base))) = (&reference, &self.instance) {
            if text.starts_with('#') {
                let path = resolve_ref_path(text, base)?;
                return paths
                    .get(&path)
                    .copied()
                    .ok_or_else(|| MapError::NoInstanceEntity(text.to_string()));
            }
        }
        let id = scene_ref_id(reference)?;
        self.ids.get(&id).copied().ok_or(MapError::NotInScene(id))
    }
}

/// The stable ID a scene's reference names: a number in binary, the ID's text in JSON. Both
/// loading routes read a reference by this. A `#` path names an entity of an archetype's own
/// instance, which only the archetype's values may do (their mapper resolves it first).
#[inline]
pub(super) fn scene_ref_id(reference: RefIn<'_>) -> Result<StableId, MapError> {
    Ok(match reference {
        RefIn::Number(id) => StableId(id),
        RefIn::Text(text) if text.starts_with('#') => {
            return Err(MapError::ArchetypeRelative(text.to_string()))
        }
        RefIn::Text(text) => text.parse::<StableId>()?,
    })
}

impl Source<'_> {
    /// How references are written in values from this source: as stable IDs' text in JSON, as
    /// numbers in binary.
    pub(super) fn wire(self) -> RefWire {
        match self {
            Source::Json(_) | Source::JsonOffsets => RefWire::Text,
            Source::Binary => RefWire::Number,
        }
    }

    /// Places `error` at byte `offset` of the file: its line and column in JSON text (and an
    /// empty span there, unless it has one), its byte offset in a binary scene.
    pub(super) fn place(self, error: &mut SceneError, offset: usize) {
        match self {
            Source::Json(text) => {
                error.diagnostic.position = Some(text.position(offset));
                error.diagnostic.span.get_or_insert(offset..offset);
            }
            Source::Binary => error.offset = Some(offset),
            Source::JsonOffsets => {
                error.diagnostic.span.get_or_insert(offset..offset);
            }
        }
    }

    /// Places `error` at `span` of the file (the span kept only in JSON text).
    fn place_span(self, error: &mut SceneError, span: Range<usize>) {
        if matches!(self, Source::Json(_) | Source::JsonOffsets) {
            error.diagnostic.span = Some(span.clone());
        }
        self.place(error, span.start);
    }
}

/// Builds a read scene's entities into the world (all of them, or none: the world is left as
/// it was on any error). Every problem is checked for in the order it is reported in
/// (duplicate IDs, IDs already in the world, names) before the world is touched; the entities
/// are then built by the back-end every load goes through ([`build_checked`]), which places
/// each value's error.
fn instantiate(
    context: &Context<'_>,
    world: &mut World,
    document: Document<'_>,
    source: Source<'_>,
) -> Result<LoadedScene, SceneError> {
    let Document {
        entries,
        shared,
        shared_at,
        head,
    } = document;
    let mut budget = SceneBudget::new(&context.options.limits);
    if budget.take_entities(entries.len()).is_err() {
        return Err(too_many(context, entries.len()));
    }
    // Check IDs and resolve names before touching the world.
    check_duplicate_ids(context, &entries, source)?;
    let ids = check_ids_in_world(context, world, &entries, source)?;
    let (plans, changes) = plan_all(context, &entries, head.nodes.as_ref(), source)?;
    let place = |error: &mut SceneError, offset: usize| source.place(error, offset);
    let checked = Checked {
        entries: &entries,
        plans: &plans,
        source,
        place: &place,
        shared_at: &shared_at,
    };
    let mut loaded = build_checked(context, world, ids, &checked, shared, head)?;
    if !changes.is_empty() {
        let LoadedScene {
            entities, by_id, ..
        } = &mut loaded;
        leave_out(world, &entries, &plans, entities, by_id);
    }
    loaded.changes.splice(0..0, changes);
    loaded.warnings = context.take_warnings();
    Ok(loaded)
}

/// Refuses a scene that has an entity twice.
fn check_duplicate_ids(
    context: &Context<'_>,
    entries: &[Entry<'_>],
    source: Source<'_>,
) -> Result<(), SceneError> {
    let mut seen: FxHashMap<StableId, usize> = FxHashMap::default();
    for entry in entries {
        if let Some(first) = seen.insert(entry.id, entry.offset) {
            let line = match source {
                Source::Json(text) => format!(" (first on line {})", text.position(first).line),
                Source::Binary | Source::JsonOffsets => String::new(),
            };
            let mut error = context.error(
                DiagnosticCode::DuplicateKey,
                format!("entity {} appears twice in the scene{line}", entry.id),
            );
            error.entity = Some(entry.id);
            source.place(&mut error, entry.offset);
            return Err(error);
        }
    }
    Ok(())
}

/// Refuses a scene with an entity whose stable ID is already in the world, unless the load
/// gives every entity a fresh one (by [`SceneLoadOptions::on_id_conflict`], see [`SceneIds`]).
/// Returns the rule, which the back-end then gives the IDs by.
fn check_ids_in_world<'c>(
    context: &'c Context<'c>,
    world: &World,
    entries: &[Entry<'_>],
    source: Source<'_>,
) -> Result<SceneIds<'c>, SceneError> {
    let ids = load_ids(context, world);
    for entry in entries {
        if let Err(InWorld(id)) = ids.check(entry.id) {
            let mut error = context.error(
                DiagnosticCode::DuplicateKey,
                format!("entity {id} is already in the world; load with IdConflict::Remap to give the scene's entities fresh IDs"),
            );
            error.entity = Some(id);
            source.place(&mut error, entry.offset);
            return Err(error);
        }
    }
    Ok(ids)
}

/// Plans every entry (see [`plan_entry`]): the plans, and what the load changed from the file
/// (renamed archetypes and children first, then the entries left out), each reported as a
/// warning.
fn plan_all(
    context: &Context<'_>,
    entries: &[Entry<'_>],
    nodes: Option<&ArchetypeNodes>,
    source: Source<'_>,
) -> Result<(Vec<Plan>, Vec<SceneChange>), SceneError> {
    let mut plans = Vec::with_capacity(entries.len());
    let mut changes = Vec::new();
    for entry in entries {
        let planned = plan_entry(context, entry, nodes)
            .map_err(|(error, at)| place_plan_error(entry, at, source, error));
        let plan = match planned {
            Ok(plan) => plan,
            Err(error) => {
                context.entity_result(Err(error))?;
                plans.push(Plan::failed());
                continue;
            }
        };
        if let Some(change) = &plan.left_out {
            warn_left_out(context, entry, change, source)?;
            changes.push(change.clone());
        }
        plans.push(plan);
    }
    changes.splice(0..0, report_renames(context, entries, &plans, source));
    Ok((plans, changes))
}

/// The archetypes and children the plans of `entries` found by a former name: one change per
/// old name, each reported as a warning placed at the first entry that wrote it.
pub(super) fn report_renames(
    context: &Context<'_>,
    entries: &[Entry<'_>],
    plans: &[Plan],
    source: Source<'_>,
) -> Vec<SceneChange> {
    let mut renames: Vec<(SceneChange, usize)> = Vec::new();
    for (index, plan) in plans.iter().enumerate() {
        for change in &plan.renamed {
            count_rename(&mut renames, change, index);
        }
    }
    rename_warnings(context, entries, renames, source)
}

/// Works out the line and column of each of `warnings` (placed by [`Source::JsonOffsets`] in
/// a file whose document starts at byte `start`, after a byte order mark) from its span, with
/// the span made relative to the document as [`Source::Json`] places it; then puts them in the
/// order [`Context::take_warnings`] does.
pub(super) fn place_by_offsets(file: &str, start: usize, warnings: &mut [SceneError]) {
    let lines = TextLines::new(file.get(start..).unwrap_or_default());
    for warning in warnings.iter_mut() {
        let diagnostic = &mut warning.diagnostic;
        if let (None, Some(span)) = (&diagnostic.position, &mut diagnostic.span) {
            *span = span.start.saturating_sub(start)..span.end.saturating_sub(start);
            diagnostic.position = Some(lines.position(span.start));
        }
    }
    warnings.sort_by_key(|warning| (warning.offset, warning.diagnostic.position));
}

/// Places an entry's planning error at the offending key or value where the text has one.
fn place_plan_error(
    entry: &Entry<'_>,
    at: At,
    source: Source<'_>,
    mut error: SceneError,
) -> SceneError {
    let span = match (at, source) {
        (At::Component(i), Source::Json(text)) => key_span(text.text(), entry.components[i].1),
        (At::Component(i), Source::Binary | Source::JsonOffsets) => {
            let offset = entry.components[i].1;
            offset..offset
        }
        (At::Archetype, _) => entry.name_spans.0.clone(),
        (At::Child, _) => entry.name_spans.1.clone(),
    };
    source.place_span(&mut error, span);
    error
}

/// Reports an entry for a child its archetype no longer has: a warning, or, with
/// [`RemovedChildren::Error`], the load's error.
pub(super) fn warn_left_out(
    context: &Context<'_>,
    entry: &Entry<'_>,
    change: &SceneChange,
    source: Source<'_>,
) -> Result<(), SceneError> {
    let mut warning = left_out_warning(context, entry, change);
    source.place_span(&mut warning, entry.name_spans.1.clone());
    if context.options.removed_children == RemovedChildren::Error {
        let SceneChange::EntryLeftOut {
            archetype, child, ..
        } = change
        else {
            return Err(warning);
        };
        warning.diagnostic.message = format!(
            "entity {}: archetype `{archetype}` has no child `{child}` any more (it had when the scene was saved); RemovedChildren::LeaveOut loads the scene without it",
            entry.id
        );
        return Err(warning);
    }
    warning.diagnostic.severity = Severity::Warning;
    context.warnings.borrow_mut().push(warning);
    Ok(())
}

/// Reports each rename (counted by [`count_rename`]) as a warning at the first entry that
/// wrote the old name; the changes, in that order.
fn rename_warnings(
    context: &Context<'_>,
    entries: &[Entry<'_>],
    renames: Vec<(SceneChange, usize)>,
    source: Source<'_>,
) -> Vec<SceneChange> {
    let mut renamed = Vec::with_capacity(renames.len());
    for (change, first) in renames {
        let entry = &entries[first];
        let mut warning = context.error(DiagnosticCode::OldName, change.to_string());
        warning.entity = Some(entry.id);
        warning.diagnostic.severity = Severity::Warning;
        let span = match change {
            SceneChange::ArchetypeRenamed { .. } => entry.name_spans.0.clone(),
            _ => entry.name_spans.1.clone(),
        };
        source.place_span(&mut warning, span);
        context.warnings.borrow_mut().push(warning);
        renamed.push(change);
    }
    renamed
}

/// Counts `change` (a rename of entry `index`) into `renames`: one change per old name, with
/// the first entry that wrote it.
fn count_rename(renames: &mut Vec<(SceneChange, usize)>, change: &SceneChange, index: usize) {
    use SceneChange::{ArchetypeRenamed, ChildRenamed};
    for (seen, _) in renames.iter_mut() {
        match (seen, change) {
            (ArchetypeRenamed { from, entries, .. }, ArchetypeRenamed { from: other, .. })
                if from == other =>
            {
                *entries += 1;
                return;
            }
            (
                ChildRenamed {
                    archetype,
                    from,
                    entries,
                    ..
                },
                ChildRenamed {
                    archetype: other_archetype,
                    from: other,
                    ..
                },
            ) if archetype == other_archetype && from == other => {
                *entries += 1;
                return;
            }
            _ => {}
        }
    }
    renames.push((change.clone(), index));
}

/// The warning (or, by policy, the error) for an entry whose child its archetype no longer has.
fn left_out_warning(context: &Context<'_>, entry: &Entry<'_>, change: &SceneChange) -> SceneError {
    let mut error = context.error(DiagnosticCode::UnknownChild, change.to_string());
    error.entity = Some(entry.id);
    error
}

/// Takes the entries planned as left out out of the world (their handles were reserved) and
/// out of the scene's lists, and the links to them out of their parents' `Children`.
pub(super) fn leave_out(
    world: &mut World,
    entries: &[Entry<'_>],
    plans: &[Plan],
    entities: &mut Vec<Entity>,
    by_id: &mut IdIndex,
) {
    let mut gone = Vec::new();
    for (entry, plan) in entries.iter().zip(plans) {
        if plan.left_out.is_some() {
            if let Some(handle) = by_id.remove(&entry.id) {
                gone.push(handle);
            }
        }
    }
    commit::roll_back(world, gone.iter().copied());
    let gone: FxHashSet<Entity> = gone.into_iter().collect();
    entities.retain(|entity| !gone.contains(entity));
    commit::unlink(world, entities, &gone);
}

/// Reports the fields of shared values their types do not have (met while the values were
/// built), at their place in the shared table; see [`Context::unknown_field`].
pub(super) fn report_unknown_shared_fields(
    context: &Context<'_>,
    table: &LoadTable,
    shared_at: &FxHashMap<u64, usize>,
    place: &dyn Fn(&mut SceneError, usize),
) -> Result<(), SceneError> {
    for unknown in table.unknown_fields() {
        let mut error = context.error(
            DiagnosticCode::UnknownField,
            format!(
                "shared value {:016x}: unknown field `{}` in `{}`",
                unknown.key, unknown.field, unknown.type_name
            ),
        );
        error.diagnostic.field = Some(unknown.field.clone());
        error.diagnostic.suggestion = unknown.suggestion.clone();
        let at = shared_at.get(&unknown.key).copied().unwrap_or_default();
        let key = table
            .text(unknown.key)
            .and_then(|text| key_of(text, &unknown.field));
        place_in_value(&mut error, at, key, place);
        context.unknown_field(error)?;
    }
    Ok(())
}

/// The span of the key of `field` in the JSON value `text`, if the text has it.
fn key_of(text: &str, field: &FieldPath) -> Option<Range<usize>> {
    let located = crate::json::locate(text, field.segments())?;
    (located.matched == field.segments().len())
        .then_some(located.key)
        .flatten()
}

/// Places `error` at `key` (a span inside the value that starts at byte `at` of the file), or
/// at the value when the key is not known (binary values).
fn place_in_value(
    error: &mut SceneError,
    at: usize,
    key: Option<Range<usize>>,
    place: &dyn Fn(&mut SceneError, usize),
) {
    match key {
        Some(key) => {
            let span = at + key.start..at + key.end;
            error.diagnostic.span = Some(span.clone());
            place(error, span.start);
        }
        None => place(error, at),
    }
}

/// What an entry is, once names are resolved.
pub(super) struct Plan {
    /// The components the entry names, in its order.
    pub components: Vec<ComponentId>,
    /// For archetype instances: the marker, and the archetype entity's values.
    pub instance: Option<(ArchetypeInstance, Arc<crate::archetype::Archetype>, usize)>,
    /// For an entry of a child its archetype no longer has: why it is left out.
    pub left_out: Option<SceneChange>,
    /// Names of the entry's that were former ones (each change counts this one entry).
    pub renamed: Vec<SceneChange>,
    /// The entry has a problem (kept with [`SceneLoadOptions::all_errors`]): nothing more is
    /// read of it.
    pub failed: bool,
}

impl Plan {
    /// The plan of an entry that has a problem.
    fn failed() -> Plan {
        Plan {
            components: Vec::new(),
            instance: None,
            left_out: None,
            renamed: Vec::new(),
            failed: true,
        }
    }
}

/// Where in an entry a problem is.
#[derive(Clone, Copy)]
pub(super) enum At {
    Component(usize),
    Archetype,
    Child,
}

/// Resolves an entry's names: its components, and, for an archetype instance, the archetype
/// and child (current names for former ones, each such rename listed in the plan). An entry
/// for a child its archetype had when the scene was saved but has no longer is planned as left
/// out.
pub(super) fn plan_entry(
    context: &Context<'_>,
    entry: &Entry<'_>,
    nodes: Option<&ArchetypeNodes>,
) -> Result<Plan, (SceneError, At)> {
    let components = entry_components(context, entry)?;
    let mut renamed = Vec::new();
    let instance = match &entry.archetype {
        None => None,
        Some(written) => match plan_instance(context, entry, written, nodes, &mut renamed)? {
            Planned::Instance(instance) => Some(instance),
            Planned::LeftOut(left_out) => {
                return Ok(Plan {
                    components,
                    instance: None,
                    left_out: Some(left_out),
                    renamed,
                    failed: false,
                })
            }
        },
    };
    Ok(Plan {
        components,
        instance,
        left_out: None,
        renamed,
        failed: false,
    })
}

/// What an archetype instance entry is: an instance, or an entry to leave out.
enum Planned {
    Instance(PlannedInstance),
    LeftOut(SceneChange),
}

/// An error of entry `entry`, with its ID in front of `message`.
fn entity_error(
    context: &Context<'_>,
    entry: &Entry<'_>,
    code: DiagnosticCode,
    message: String,
    suggestion: Option<String>,
) -> SceneError {
    let mut error = context.error(code, format!("entity {}: {message}", entry.id));
    error.entity = Some(entry.id);
    error.diagnostic.suggestion = suggestion;
    error
}

/// The registered components an entry names, in its order; refused at the first unknown one.
fn entry_components(
    context: &Context<'_>,
    entry: &Entry<'_>,
) -> Result<Vec<ComponentId>, (SceneError, At)> {
    let mut components = Vec::with_capacity(entry.components.len());
    for (index, (name, _, _)) in entry.components.iter().enumerate() {
        match scene_component(context.registry, name) {
            Some(id) => components.push(id),
            None => {
                let suggestion = did_you_mean(name, context.registry.names());
                let message = format!("unknown component `{name}`");
                let error = entity_error(
                    context,
                    entry,
                    DiagnosticCode::UnknownComponent,
                    message,
                    suggestion,
                );
                return Err((error, At::Component(index)));
            }
        }
    }
    Ok(components)
}

/// Resolves the archetype (`written` in the scene) and child of an instance entry to its
/// node, listing the renames in `renamed`.
fn plan_instance(
    context: &Context<'_>,
    entry: &Entry<'_>,
    written: &str,
    nodes: Option<&ArchetypeNodes>,
    renamed: &mut Vec<SceneChange>,
) -> Result<Planned, (SceneError, At)> {
    // A former name stands for the archetype under its current name.
    let name = match context.library.renamed(written) {
        Some(current) => {
            renamed.push(SceneChange::ArchetypeRenamed {
                from: written.to_string(),
                to: current.to_string(),
                entries: 1,
            });
            current
        }
        None => written,
    };
    let archetype = (context.library.spawnable(name))
        .map_err(|refused| (spawn_refusal(context, entry, name, refused), At::Archetype))?;
    let Some(compiled) = &archetype.compiled else {
        let message = format!("archetype `{name}` is abstract");
        let error = entity_error(
            context,
            entry,
            DiagnosticCode::UnknownArchetype,
            message,
            None,
        );
        return Err((error, At::Archetype));
    };
    let written_path = entry.child.as_deref().unwrap_or("");
    let (index, path) = child_node(name, archetype, compiled, written_path, renamed);
    let path = &*path;
    let Some(index) = index else {
        if had_child(context, nodes, name, path) {
            return Ok(Planned::LeftOut(SceneChange::EntryLeftOut {
                entity: entry.id,
                archetype: name.to_string(),
                child: path.to_string(),
            }));
        }
        let paths: Vec<&str> = compiled.nodes.iter().map(|n| &*n.path).collect();
        let suggestion = did_you_mean(path, paths.iter().copied());
        let message = format!("archetype `{name}` has no child `{path}`");
        let error = entity_error(
            context,
            entry,
            DiagnosticCode::UnknownChild,
            message,
            suggestion,
        );
        let at = if entry.child.is_some() {
            At::Child
        } else {
            At::Archetype
        };
        return Err((error, at));
    };
    let marker = compiled.nodes[index].marker;
    Ok(Planned::Instance((marker, archetype.clone(), index)))
}

/// The node of the child at `written_path` of archetype `name` (`None`: it has none), and its path
/// now: a former path stands for the child at its current one (the rename listed in
/// `renamed`).
fn child_node<'p>(
    name: &str,
    archetype: &crate::archetype::Archetype,
    compiled: &crate::archetype::CompiledArchetype,
    written_path: &'p str,
    renamed: &mut Vec<SceneChange>,
) -> (Option<usize>, Cow<'p, str>) {
    let mut path = Cow::Borrowed(written_path);
    let mut index = compiled.nodes.iter().position(|n| *n.path == *path);
    if let (None, Some(now)) = (index, archetype.resolved.current_path(written_path)) {
        index = compiled.nodes.iter().position(|n| *n.path == *now);
        renamed.push(SceneChange::ChildRenamed {
            archetype: name.to_string(),
            from: written_path.to_string(),
            to: now.clone(),
            entries: 1,
        });
        path = Cow::Owned(now);
    }
    (index, path)
}

/// The error for an entry whose archetype `name` cannot be spawned.
fn spawn_refusal(
    context: &Context<'_>,
    entry: &Entry<'_>,
    name: &str,
    refused: SpawnError,
) -> SceneError {
    let (code, message, suggestion) = match refused {
        SpawnError::UnknownArchetype { suggestion, .. } => (
            DiagnosticCode::UnknownArchetype,
            format!("unknown archetype `{name}`"),
            suggestion,
        ),
        SpawnError::Abstract { .. } => (
            DiagnosticCode::UnknownArchetype,
            format!("archetype `{name}` is abstract"),
            None,
        ),
        // It exists, but has no version without errors: say so, not "unknown".
        SpawnError::Unavailable { reason, .. } => (
            DiagnosticCode::BrokenDependency,
            format!("archetype `{name}` cannot be instantiated: {reason} (`archetool validate` lists them)"),
            None,
        ),
        other => (DiagnosticCode::UnknownArchetype, other.to_string(), None),
    };
    entity_error(context, entry, code, message, suggestion)
}

/// Whether archetype `name` had the child `path` when the scene was saved: its archetype
/// table says so, or (files written before scenes had one) it cannot tell, and assumes so.
fn had_child(
    context: &Context<'_>,
    nodes: Option<&ArchetypeNodes>,
    name: &str,
    path: &str,
) -> bool {
    if path.is_empty() {
        return false;
    }
    match nodes {
        Some(nodes) => saved_children(context, nodes, name)
            .is_some_and(|children| children.iter().any(|child| child == path)),
        None => true,
    }
}

/// The children archetype `name` had when the scene was saved, by the scene's archetype table,
/// which may know it by a former name.
pub(super) fn saved_children<'n>(
    context: &Context<'_>,
    nodes: &'n ArchetypeNodes,
    name: &str,
) -> Option<&'n Vec<String>> {
    nodes.get(name).or_else(|| {
        (context.library.former_names(name).into_iter()).find_map(|former| nodes.get(former))
    })
}

/// What building a scene's entities reads and does not change: the load's context, the entries
/// with their plans and reserved handles, where the values came from and how their errors are
/// placed, and the fresh stable IDs that replace the scene's (with [`IdConflict::Remap`]).
pub(super) struct Build<'b> {
    /// The load's context.
    pub context: &'b Context<'b>,
    /// The scene's entries, in the file's order.
    pub entries: &'b [Entry<'b>],
    /// Each entry's plan.
    pub plans: &'b [Plan],
    /// Each entry's reserved handle.
    pub handles: &'b [Entity],
    /// Where the values came from.
    pub source: Source<'b>,
    /// Places an error at a byte offset of the file.
    pub place: &'b dyn Fn(&mut SceneError, usize),
    /// The fresh stable ID of each entry, by its own (empty: no remap).
    pub remapped: &'b FxHashMap<StableId, StableId>,
}

impl Build<'_> {
    /// How references are written in the scene's values.
    fn wire(&self) -> RefWire {
        self.source.wire()
    }

    /// The stable ID `entry` gets in the world: a fresh one if remapped, else its own.
    fn stable_id(&self, entry: &Entry<'_>) -> StableId {
        self.remapped.get(&entry.id).copied().unwrap_or(entry.id)
    }
}

/// Where a component value of an entry is, to place its errors: the entry, the component's
/// name, and the value's byte offset in the file.
#[derive(Clone, Copy)]
pub(super) struct ValueAt<'v> {
    pub entry: &'v Entry<'v>,
    pub name: &'v str,
    pub offset: usize,
}

/// Builds the archetype instance entries (those whose plan has an instance; the others are
/// skipped): the archetype's values with the scene's patch applied, the instance marker and
/// the overrides. Hands each entity's handle, identity and builder to `sink` (the commit) as
/// soon as it is complete,
/// in the order of `entries` (one builder serves them all, so memory does not grow with the
/// number of instances).
pub(super) fn build_instances(
    build: &Build<'_>,
    ids: &Arc<IdIndex>,
    follow: &mut Follow<'_>,
    sink: &mut dyn FnMut(Entity, Identity, &mut EntityBuilder),
) -> Result<(), SceneError> {
    let (context, plans) = (build.context, build.plans);
    // Children the archetypes gained since the scene was saved get their handles first, so
    // `#` references to them resolve like any other.
    let instance_paths = instance_paths(build.entries, plans, build.handles, &mut |root, paths| {
        follow.reserve_gained(context, root, &plans[root], paths);
    });
    let mut instances = Instances {
        build,
        ids,
        wire: build.wire(),
        reverse: None,
        paths: &instance_paths,
        keys: FxHashMap::default(),
        shapes: ShapesAtHand::default(),
    };
    let mut owned = EntityBuilder::new();
    for (i, plan) in plans.iter().enumerate() {
        let Some(instance) = &plan.instance else {
            continue;
        };
        let built = instances.build_one(i, instance, &mut owned, sink);
        if context.entity_result(built)? {
            owned.clear();
        }
    }
    build_gained(context, build.entries, &instance_paths, follow, sink)
}

/// What an archetype instance entry's plan says it is: the marker, the archetype, the node.
type PlannedInstance = (ArchetypeInstance, Arc<crate::archetype::Archetype>, usize);

/// Building the archetype instance entries of a scene: the load, and what the instances share.
struct Instances<'i, 'b> {
    build: &'i Build<'b>,
    /// The entities by stable ID, for references in binary values.
    ids: &'i Arc<IdIndex>,
    /// How references are written in the scene's values.
    wire: RefWire,
    /// The entities' stable IDs by entity, made at the first binary value that needs them.
    reverse: Option<Arc<FxHashMap<Entity, StableId>>>,
    /// For each instance entry (by index): its instance's entities, by path.
    paths: &'i FxHashMap<usize, Arc<FxHashMap<String, Entity>>>,
    /// The key of each archetype value binary diffs are checked against, made at the first
    /// diff of that archetype entity and component.
    keys: FxHashMap<(ArchetypeInstance, ComponentId), Option<u64>>,
    /// The override shapes met last, with their shared records.
    shapes: ShapesAtHand,
}

/// The scene's values of one archetype instance entry, by component.
struct Patches<'t> {
    /// The patch (`None`: the component is removed), with its byte offset in the file.
    values: BTreeMap<ComponentId, (usize, Option<Value>)>,
    /// The patch's JSON text, to place an error inside it.
    texts: BTreeMap<ComponentId, &'t str>,
    /// Components whose value the scene holds whole (binary typed values), not as a patch.
    whole: Vec<ComponentId>,
    /// Binary diffs taken against the archetype's value of now: each value decoded, with the
    /// shape of its difference (the instance's override of the component).
    exact: BTreeMap<ComponentId, (Value, TypedValue)>,
}

/// One archetype instance entry being built: the entry, its archetype node and resolved
/// values, the scene's patches, and its instance's entities for `#` references.
struct InstanceValues<'v> {
    entry: &'v Entry<'v>,
    node: &'v crate::archetype::CompiledNode,
    resolved: Option<&'v crate::archetype::ResolvedEntity>,
    patches: Patches<'v>,
    /// The instance's entities, by path.
    paths: Arc<FxHashMap<String, Entity>>,
    /// The path of the node's base entity, `#` references are relative to.
    base: String,
}

impl Instances<'_, '_> {
    /// Builds instance entry `i` into `builder` and hands it to the sink with its identity.
    fn build_one(
        &mut self,
        i: usize,
        (marker, archetype, node_index): &PlannedInstance,
        builder: &mut EntityBuilder,
        sink: &mut dyn FnMut(Entity, Identity, &mut EntityBuilder),
    ) -> Result<(), SceneError> {
        let build = self.build;
        let (context, entry, handle) = (build.context, &build.entries[i], build.handles[i]);
        let id = build.stable_id(entry);
        let Some(compiled) = &archetype.compiled else {
            // Not reached: planning refuses abstract archetypes.
            sink(handle, Identity::plain(id), builder);
            return Ok(());
        };
        let node = &compiled.nodes[*node_index];
        if entry.components.is_empty() && node.with_refs.is_empty() {
            // An untouched instance: the archetype's values as they are, as spawning
            // clones them.
            for (component, typed) in &node.typed {
                context
                    .registry
                    .ops(*component)
                    .add_to_builder(typed, builder);
            }
            sink(handle, Identity::instance(id, *marker), builder);
            return Ok(());
        }
        let resolved = archetype.resolved.entity_at(&node.path);
        let patches = self.read_patches(entry, &build.plans[i], (*marker, node))?;
        let mut values = InstanceValues {
            entry,
            node,
            resolved,
            patches,
            // An instance of one entity alone has no map made ahead: it is just itself.
            paths: (self.paths.get(&i).cloned())
                .unwrap_or_else(|| Arc::new([(String::new(), handle)].into_iter().collect())),
            base: compiled.nodes[node.base].path.to_string(),
        };
        let mut overrides = Map::new();
        for component in values.components(context) {
            if let Some((shape, typed)) = values.patches.exact.remove(&component) {
                let name = context.registry.name(component);
                if !matches!(name, "Parent" | "Children") {
                    overrides.insert(name.to_string(), shape);
                }
                context.registry.ops(component).add_owned(typed, builder);
                continue;
            }
            self.add_component(&values, component, &mut overrides, builder)?;
        }
        let shapes = context.library.override_shapes();
        let marker = ArchetypeInstance {
            overrides: self.shapes.intern(shapes, overrides),
            ..*marker
        };
        sink(handle, Identity::instance(id, marker), builder);
        Ok(())
    }

    /// Reads the scene's values of an instance entry: JSON patches parsed, binary typed values
    /// decoded and expressed as JSON.
    fn read_patches<'t>(
        &mut self,
        entry: &'t Entry<'t>,
        plan: &Plan,
        node: (ArchetypeInstance, &crate::archetype::CompiledNode),
    ) -> Result<Patches<'t>, SceneError> {
        let mut patches = Patches {
            values: BTreeMap::new(),
            texts: BTreeMap::new(),
            whole: Vec::new(),
            exact: BTreeMap::new(),
        };
        for ((name, offset, payload), component) in entry.components.iter().zip(&plan.components) {
            let at = ValueAt {
                entry,
                name,
                offset: *offset,
            };
            let patch = match payload {
                Payload::Removed => None,
                Payload::Json(text) => Some(self.parse_patch(at, text)?),
                Payload::Postcard(bytes) => {
                    // Binary scenes store full values typed; decode and express as JSON.
                    patches.whole.push(*component);
                    Some(self.binary_value(at, (bytes, None), *component)?)
                }
                Payload::Evolved(bytes, layout) => {
                    patches.whole.push(*component);
                    Some(self.binary_value(at, (bytes, Some(layout)), *component)?)
                }
                Payload::Diff(diff, layout) => {
                    match self.read_diff(at, diff, layout.as_ref(), node, *component)? {
                        Ok(exact) => {
                            patches.exact.insert(*component, exact);
                            continue;
                        }
                        Err(patch) => Some(patch),
                    }
                }
            };
            if let (Payload::Json(text), Source::Json(_) | Source::JsonOffsets) =
                (payload, self.build.source)
            {
                patches.texts.insert(*component, *text);
            }
            patches.values.insert(*component, (*offset, patch));
        }
        Ok(patches)
    }

    /// A binary diff of `component` on an instance of `node`: its value decoded with its
    /// shape, if it was taken against the archetype's value of now and the component's layout
    /// is its type's; else the merge patch it stands for, to merge onto the archetype's value.
    fn read_diff(
        &mut self,
        at: ValueAt<'_>,
        diff: &Diff<'_>,
        layout: Option<&Arc<Layout>>,
        (marker, node): (ArchetypeInstance, &crate::archetype::CompiledNode),
        component: ComponentId,
    ) -> Result<Result<(Value, TypedValue), Value>, SceneError> {
        let registry = self.build.context.registry;
        let key = *self
            .keys
            .entry((marker, component))
            .or_insert_with(|| archetype_value_key(registry, node, component));
        if layout.is_none() && key == Some(diff.key) {
            let typed = self.binary_typed(at, (diff.value, None), component)?;
            return Ok(Ok((diff.shape(), typed)));
        }
        let whole = self.binary_value(at, (diff.value, layout), component)?;
        Ok(Err(project(&whole, &diff.shape())))
    }

    /// Decodes a binary scene's postcard value of `component` (laid out as `layout` says, when
    /// that is not its type's layout now), references read as stable IDs.
    fn binary_typed(
        &self,
        at: ValueAt<'_>,
        (bytes, layout): (&[u8], Option<&Arc<Layout>>),
        component: ComponentId,
    ) -> Result<TypedValue, SceneError> {
        let build = self.build;
        let context = build.context;
        let mapper = LoadRefs {
            ids: self.ids.clone(),
            wire: self.wire,
            instance: None,
        };
        let (typed, _) = with_mapper(mapper, || match layout {
            Some(layout) => decode_evolved(context, component, bytes, layout),
            None => context.registry.ops(component).read_postcard(bytes),
        });
        typed.map_err(|(path, message)| binary_value_error(context, at, build.place, path, message))
    }

    /// Parses an instance's JSON patch (strictly: a duplicate key is an error, not last-wins).
    fn parse_patch(&self, at: ValueAt<'_>, text: &str) -> Result<Value, SceneError> {
        let context = self.build.context;
        let parsed = parse_patch(text, context.options.limits.max_depth);
        parsed.map_err(|e| {
            let placed = |message: String, offset: usize| {
                let mut error =
                    component_error(context, at.entry, at.name, FieldPath::root(), message);
                (self.build.place)(&mut error, at.offset + offset);
                error
            };
            // A key written twice: the first one's line in the file, not in the value.
            let message = match &e.first {
                Some((name, first)) => match placed(String::new(), *first).diagnostic.position {
                    Some(position) => crate::json::duplicate_key(name, position.line),
                    None => e.message,
                },
                None => e.message,
            };
            placed(message, e.offset)
        })
    }

    /// A binary scene's typed value of an instance entry, decoded and written as JSON (with
    /// references as stable IDs).
    fn binary_value(
        &mut self,
        at: ValueAt<'_>,
        value: (&[u8], Option<&Arc<Layout>>),
        component: ComponentId,
    ) -> Result<Value, SceneError> {
        let context = self.build.context;
        let typed = self.binary_typed(at, value, component)?;
        let ids = self.ids;
        let reverse = self
            .reverse
            .get_or_insert_with(|| Arc::new(ids.iter().map(|(id, e)| (*e, *id)).collect()))
            .clone();
        let mapper = WriteIds { ids: reverse };
        let (value, _) = with_mapper(mapper, || context.registry.ops(component).encode(&typed));
        value.map_err(|message| {
            component_error(
                context,
                at.entry,
                at.name,
                FieldPath::root(),
                message.to_string(),
            )
        })
    }

    /// Adds component `component` of an instance entry to `builder`: the archetype's value
    /// with the scene's patch merged onto it (or the scene's whole value), decoded; the patch's
    /// shape goes into `overrides`.
    fn add_component(
        &self,
        values: &InstanceValues<'_>,
        component: ComponentId,
        overrides: &mut Map<String, Value>,
        builder: &mut EntityBuilder,
    ) -> Result<(), SceneError> {
        let context = self.build.context;
        let name = context.registry.name(component);
        let (offset, patch) = match values.patches.values.get(&component) {
            Some((offset, patch)) => (*offset, Some(patch.clone())),
            None => (values.entry.offset, None),
        };
        let typed = values.node.typed.iter().find(|(c, _)| *c == component);
        let archetype_value = values.resolved.and_then(|r| r.components.get(name));
        if patch.is_none() {
            // Untouched by the scene: clone the archetype's own value, as spawning does
            // (no decoding, and shared data stays shared).
            if let Some((_, typed)) = typed {
                context
                    .registry
                    .ops(component)
                    .add_to_builder(typed, builder);
                return Ok(());
            }
        }
        let merged = match (&patch, archetype_value) {
            (Some(None), _) => {
                overrides.insert(name.to_string(), Value::Null);
                return Ok(());
            }
            // A binary scene's typed value is whole: nothing to merge it onto.
            (Some(Some(value)), _) if values.patches.whole.contains(&component) => value.clone(),
            (Some(Some(patch)), base_value) => merge_patch::merged(base_value, patch),
            (None, Some(base_value)) => base_value.clone(),
            (None, None) => return Ok(()),
        };
        let patch_value = patch.as_ref().and_then(Option::as_ref);
        let at = ValueAt {
            entry: values.entry,
            name,
            offset,
        };
        let (decoded, unknown) = self.decode_merged(
            values,
            component,
            &merged,
            patch_value,
            typed.map(|(_, t)| t),
        );
        let typed = decoded.map_err(|error| self.decode_error(values, component, at, error))?;
        self.report_unknown_fields(values, component, at, patch_value, unknown)?;
        if let Some(Some(patch)) = patch {
            if !matches!(name, "Parent" | "Children") {
                overrides.insert(name.to_string(), override_shape(&patch));
            }
        }
        context.registry.ops(component).add_owned(typed, builder);
        Ok(())
    }

    /// Decodes an instance's merged value of `component` (`#` references resolved in its
    /// instance), with the fields its type does not have. If that fails and there is a patch,
    /// tries the patch onto the archetype's value as the type writes it.
    fn decode_merged(
        &self,
        values: &InstanceValues<'_>,
        component: ComponentId,
        merged: &Value,
        patch: Option<&Value>,
        typed: Option<&TypedValue>,
    ) -> (
        Result<TypedValue, crate::component::ValueError>,
        Vec<FieldPath>,
    ) {
        let context = self.build.context;
        let decode = |value: &Value, unknown: &mut Vec<FieldPath>| {
            let mapper = LoadRefs {
                ids: self.ids.clone(),
                wire: RefWire::Any,
                instance: Some((values.paths.clone(), values.base.clone())),
            };
            let ops = context.registry.ops(component);
            with_mapper(mapper, || ops.decode(value, unknown)).0
        };
        decode_instance_value(context.registry, component, merged, patch, typed, decode)
    }

    /// The error for an instance's value that did not decode: inside the scene's patch if the
    /// bad field is there; else at the component.
    fn decode_error(
        &self,
        values: &InstanceValues<'_>,
        component: ComponentId,
        at: ValueAt<'_>,
        error: crate::component::ValueError,
    ) -> SceneError {
        let located = (values.patches.texts.get(&component))
            .and_then(|text| crate::json::locate(text, error.path.segments()))
            .map(|located| at.offset + located.value.start..at.offset + located.value.end);
        let mut scene_error = component_error(
            self.build.context,
            at.entry,
            at.name,
            error.path,
            error.message,
        );
        if let Some(span) = &located {
            scene_error.diagnostic.span = Some(span.clone());
        }
        (self.build.place)(
            &mut scene_error,
            located.map_or(at.offset, |span| span.start),
        );
        scene_error
    }

    /// Reports the fields of an instance's value its type does not have; only the scene's own
    /// fields (in its patch) are the scene's to report (the archetype's are reported where it
    /// is loaded).
    fn report_unknown_fields(
        &self,
        values: &InstanceValues<'_>,
        component: ComponentId,
        at: ValueAt<'_>,
        patch: Option<&Value>,
        unknown: Vec<FieldPath>,
    ) -> Result<(), SceneError> {
        let context = self.build.context;
        for field in unknown {
            let removed = context.registry.is_removed_field(component, &field);
            if removed || !patch.is_some_and(|patch| has_path(patch, &field)) {
                continue;
            }
            let mut error = unknown_field_error(context, at.entry, at.name, component, field);
            let key = (error.diagnostic.field.as_ref())
                .and_then(|f| key_of(values.patches.texts.get(&component)?, f));
            place_in_value(&mut error, at.offset, key, self.build.place);
            context.unknown_field(error)?;
        }
        Ok(())
    }
}

impl InstanceValues<'_> {
    /// The components an instance entry gets: its archetype entity's, then those only the
    /// scene's patches name.
    fn components(&self, context: &Context<'_>) -> Vec<ComponentId> {
        let mut names: Vec<ComponentId> = self
            .resolved
            .map(|r| {
                r.components
                    .keys()
                    .filter_map(|n| context.registry.id(n))
                    .collect()
            })
            .unwrap_or_default();
        for component in self.patches.values.keys() {
            if !names.contains(component) {
                names.push(*component);
            }
        }
        names
    }
}

/// An instance's merge patch as a scene holds it (JSON text, in either encoding), parsed with
/// values no deeper than `max_depth`. Both loading routes read a patch by this.
pub(super) fn parse_patch(text: &str, max_depth: usize) -> Result<Value, TextError> {
    SourceText::from_bytes(text.as_bytes().to_vec())
        .and_then(|patch| crate::json::parse_json(&patch, max_depth))
}

/// Decodes an instance's `merged` value of `component` (its scene `patch`, if any, merged
/// onto its archetype's value) by `decode`, with the fields its type does not have. If that
/// fails and there is a patch, decodes the patch merged onto the archetype's value as the type
/// writes it (`typed`, encoded) instead: the patch may name fields as the type does now and
/// the archetype's file as it did (a field renamed, with an alias). Both loading routes decode
/// an instance's patched value by this rule.
pub(super) fn decode_instance_value(
    registry: &ComponentRegistry,
    component: ComponentId,
    merged: &Value,
    patch: Option<&Value>,
    typed: Option<&TypedValue>,
    decode: impl Fn(&Value, &mut Vec<FieldPath>) -> Result<TypedValue, crate::component::ValueError>,
) -> (
    Result<TypedValue, crate::component::ValueError>,
    Vec<FieldPath>,
) {
    let mut unknown = Vec::new();
    let mut decoded = decode(merged, &mut unknown);
    if let (Err(_), Some(patch), Some(typed)) = (&decoded, patch, typed) {
        if let Ok(canonical) = registry.ops(component).encode(typed) {
            let mut again = Vec::new();
            let retried = decode(&merge_patch::merged(Some(&canonical), patch), &mut again);
            if retried.is_ok() {
                (decoded, unknown) = (retried, again);
            }
        }
    }
    (decoded, unknown)
}

/// Builds the entities of the children the archetypes gained (their handles reserved by
/// [`Follow::reserve_gained`]), as spawning builds them, each with a fresh stable ID.
fn build_gained(
    context: &Context<'_>,
    entries: &[Entry<'_>],
    instance_paths: &FxHashMap<usize, Arc<FxHashMap<String, Entity>>>,
    follow: &Follow<'_>,
    sink: &mut dyn FnMut(Entity, Identity, &mut EntityBuilder),
) -> Result<(), SceneError> {
    let mut builder = EntityBuilder::new();
    for gained in &follow.gained {
        let Some(paths) = instance_paths.get(&gained.root) else {
            continue;
        };
        let Some(compiled) = &gained.archetype.compiled else {
            continue;
        };
        let node = &compiled.nodes[gained.node];
        for (component, typed) in &node.typed {
            context
                .registry
                .ops(*component)
                .add_to_builder(typed, &mut builder);
        }
        for (component, value) in &node.with_refs {
            let mapper = LoadRefs {
                ids: Arc::default(),
                wire: RefWire::Any,
                instance: Some((paths.clone(), compiled.nodes[node.base].path.to_string())),
            };
            let (decoded, _) = with_mapper(mapper, || {
                context
                    .registry
                    .ops(*component)
                    .decode(value, &mut Vec::new())
            });
            let typed = decoded.map_err(|error| {
                let name = context.registry.name(*component);
                component_error(
                    context,
                    &entries[gained.root],
                    name,
                    error.path,
                    error.message,
                )
            })?;
            context
                .registry
                .ops(*component)
                .add_owned(typed, &mut builder);
        }
        builder.add(Parent(EntityRef(gained.parent)));
        sink(
            gained.handle,
            Identity::instance(gained.id, node.marker),
            &mut builder,
        );
    }
    Ok(())
}

/// Decodes one component value of a plain entity from the file's text or bytes straight into
/// `builder` (no box in between); `Removed` adds nothing.
pub(super) fn decode_payload_into(
    (context, checked): (&Context<'_>, &Checked<'_>),
    at: ValueAt<'_>,
    payload: &Payload<'_>,
    component: ComponentId,
    builder: &mut EntityBuilder,
) -> Result<(), SceneError> {
    let ops = context.registry.ops(component);
    match payload {
        Payload::Removed => Ok(()),
        Payload::Json(text) => {
            let mut unknown = Vec::new();
            ops.read_json_into(text, builder, &mut unknown)
                .map_err(|(path, error)| {
                    json_value_error((context, checked), at, text, path, error)
                })?;
            for field in unknown {
                if context.registry.is_removed_field(component, &field) {
                    continue;
                }
                let mut error = unknown_field_error(context, at.entry, at.name, component, field);
                let key = error
                    .diagnostic
                    .field
                    .as_ref()
                    .and_then(|f| key_of(text, f));
                place_in_value(&mut error, at.offset, key, checked.place);
                context.unknown_field(error)?;
            }
            Ok(())
        }
        // A diff holds its value whole: on an entity that is no instance (its archetype
        // gone), that value is the entity's.
        Payload::Postcard(bytes) | Payload::Diff(Diff { value: bytes, .. }, None) => ops
            .read_postcard_into(bytes, builder)
            .map_err(|(path, message)| {
                binary_value_error(context, at, checked.place, path, message)
            }),
        Payload::Evolved(bytes, layout)
        | Payload::Diff(Diff { value: bytes, .. }, Some(layout)) => {
            let typed =
                decode_evolved(context, component, bytes, layout).map_err(|(path, message)| {
                    binary_value_error(context, at, checked.place, path, message)
                })?;
            ops.add_owned(typed, builder);
            Ok(())
        }
    }
}

/// The error for a binary component value (at `at`) that did not decode.
fn binary_value_error(
    context: &Context<'_>,
    at: ValueAt<'_>,
    place: &dyn Fn(&mut SceneError, usize),
    path: FieldPath,
    message: String,
) -> SceneError {
    let mut scene_error = component_error(context, at.entry, at.name, path, message);
    place(&mut scene_error, at.offset);
    scene_error
}

/// The error for a component value `text` (at `at` in the file) that did not decode.
fn json_value_error(
    (context, checked): (&Context<'_>, &Checked<'_>),
    at: ValueAt<'_>,
    text: &str,
    path: FieldPath,
    error: serde_json::Error,
) -> SceneError {
    let offset = at.offset;
    // Point at the start of the offending value (serde_json stops at its end); a syntax error
    // has no value, so its own position is used.
    let located = (error.classify() == serde_json::error::Category::Data)
        .then(|| crate::json::locate(text, path.segments()))
        .flatten()
        .filter(|located| located.matched == path.segments().len());
    let message = crate::json::strip_position(&error.to_string()).to_string();
    let (span, message) = match located {
        Some(located) => (
            offset + located.value.start..offset + located.value.end,
            crate::json::plain_message(&message),
        ),
        None => {
            let at = offset_of_line_column(text, error.line(), error.column());
            let (at, message) = crate::json::explain_syntax_error(text, at, &message);
            (offset + at..offset + at, message)
        }
    };
    let mut scene_error = component_error(context, at.entry, at.name, path, message);
    (checked.place)(&mut scene_error, span.start);
    if matches!(checked.source, Source::Json(_)) {
        scene_error.diagnostic.span = Some(span);
    }
    scene_error
}

/// The error for a field `field` of component `name` (`component`) that its type does not have.
fn unknown_field_error(
    context: &Context<'_>,
    entry: &Entry<'_>,
    name: &str,
    component: ComponentId,
    field: FieldPath,
) -> SceneError {
    let suggestion = crate::archetype::suggest_field(context.registry, component, &field);
    let message = format!("unknown field `{field}` in component `{name}`");
    let mut error = value_error(
        context,
        entry,
        DiagnosticCode::UnknownField,
        message,
        name,
        field,
    );
    error.diagnostic.suggestion = suggestion;
    error
}

fn component_error(
    context: &Context<'_>,
    entry: &Entry<'_>,
    name: &str,
    field: FieldPath,
    message: String,
) -> SceneError {
    let place = if field.is_empty() {
        format!("`{name}`")
    } else {
        format!("`{name}.{field}`")
    };
    let message = format!("{place}: {message}");
    // A marker holding something: it is written `{}`, as in archetype files.
    let marker = (scene_component(context.registry, name))
        .is_some_and(|id| field.is_empty() && context.registry.is_marker(id));
    let mut error = value_error(
        context,
        entry,
        DiagnosticCode::InvalidComponent,
        message,
        name,
        field,
    );
    if marker {
        error.diagnostic.suggestion = Some("{}".to_string());
    }
    error
}

/// An error in the value of component `name` of an entry, at `field`.
fn value_error(
    context: &Context<'_>,
    entry: &Entry<'_>,
    code: DiagnosticCode,
    message: String,
    name: &str,
    field: FieldPath,
) -> SceneError {
    let mut error = context.error(code, format!("entity {}: {message}", entry.id));
    error.entity = Some(entry.id);
    error.diagnostic.component = Some(name.to_string());
    error.diagnostic.field = Some(field);
    error
}

/// Whether the JSON value has a member or element at `path`.
fn has_path(value: &Value, path: &FieldPath) -> bool {
    let mut at = value;
    for segment in path.segments() {
        let next = match (segment, at) {
            (crate::json::PathSegment::Key(key), Value::Object(map)) => map.get(key),
            (crate::json::PathSegment::Index(index), Value::Array(items)) => items.get(*index),
            _ => None,
        };
        match next {
            Some(next) => at = next,
            None => return false,
        }
    }
    true
}

/// The byte offset of a serde_json (line, column) inside `text`.
fn offset_of_line_column(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (index, piece) in text.split_inclusive('\n').enumerate() {
        if index + 1 == line {
            return (offset + column.saturating_sub(1)).min(text.len());
        }
        offset += piece.len();
    }
    text.len()
}

/// The index of the root entry of the archetype instance entry `i` belongs to, following
/// `Parent` references up as many levels as its child path is deep.
fn instance_root_index(
    entries: &[Entry<'_>],
    plans: &[Plan],
    index_of: &FxHashMap<StableId, usize>,
    mut i: usize,
) -> usize {
    let depth = entries[i]
        .child
        .as_deref()
        .map_or(0, |path| path.split('/').count());
    for _ in 0..depth {
        let parent = entries[i]
            .components
            .iter()
            .zip(&plans[i].components)
            .find_map(|((name, _, payload), _)| {
                if name != "Parent" {
                    return None;
                }
                match payload {
                    Payload::Json(text) => serde_json::from_str::<StableId>(text).ok(),
                    Payload::Postcard(bytes) | Payload::Diff(Diff { value: bytes, .. }, None) => {
                        crate::component::from_bytes::<u64>(bytes)
                            .ok()
                            .map(StableId)
                    }
                    Payload::Evolved(bytes, layout)
                    | Payload::Diff(Diff { value: bytes, .. }, Some(layout)) => {
                        let value = crate::component::read_value(layout, &mut &bytes[..]);
                        value.ok()?.as_u64().map(StableId)
                    }
                    Payload::Removed => None,
                }
            });
        match parent.and_then(|id| index_of.get(&id)) {
            Some(&parent) => i = parent,
            None => break,
        }
    }
    i
}

/// For every archetype instance entry: the entities of its instance, by path (shared by the
/// instance's entries), each instance's map given to `extend` first (by its root's index, in
/// the file's order). One pass over the entries.
fn instance_paths(
    entries: &[Entry<'_>],
    plans: &[Plan],
    handles: &[Entity],
    extend: &mut dyn FnMut(usize, &mut FxHashMap<String, Entity>),
) -> FxHashMap<usize, Arc<FxHashMap<String, Entity>>> {
    // Only archetype instance entries: an instance's entities are all instances. Needed only
    // to find the roots of child entries.
    let mut index_of: Option<FxHashMap<StableId, usize>> = None;
    let mut root_of = Vec::new();
    let mut members_of: FxHashMap<usize, usize> = FxHashMap::default();
    for (i, entry) in entries.iter().enumerate() {
        if plans[i].instance.is_none() {
            continue;
        }
        let root = match entry.child {
            None => i,
            Some(_) => {
                let index_of = index_of.get_or_insert_with(|| instance_indices(entries, plans));
                instance_root_index(entries, plans, index_of, i)
            }
        };
        *members_of.entry(root).or_default() += 1;
        root_of.push((i, root));
    }
    let mut members: FxHashMap<usize, FxHashMap<String, Entity>> = FxHashMap::default();
    for &(i, root) in &root_of {
        let Some((_, archetype, node)) = &plans[i].instance else {
            continue;
        };
        // An instance of one entity alone, whose archetype has no other: no children to gain,
        // none to find by path (see `Instances::build_one`).
        let one_node = archetype
            .compiled
            .as_ref()
            .is_some_and(|c| c.nodes.len() == 1);
        if one_node && members_of.get(&root) == Some(&1) {
            continue;
        }
        // The child's path now (the entry may name it by a former one).
        let path = match &archetype.compiled {
            Some(compiled) => compiled.nodes[*node].path.to_string(),
            None => entries[i].child.as_deref().unwrap_or("").to_string(),
        };
        members.entry(root).or_default().insert(path, handles[i]);
    }
    let mut roots: Vec<usize> = members.keys().copied().collect();
    roots.sort_unstable();
    for root in roots {
        if let Some(paths) = members.get_mut(&root) {
            extend(root, paths);
        }
    }
    let shared: FxHashMap<usize, Arc<FxHashMap<String, Entity>>> = members
        .into_iter()
        .map(|(root, paths)| (root, Arc::new(paths)))
        .collect();
    root_of
        .into_iter()
        .filter_map(|(i, root)| Some((i, shared.get(&root)?.clone())))
        .collect()
}

/// The archetype instance entries' indices, by stable ID.
fn instance_indices(entries: &[Entry<'_>], plans: &[Plan]) -> FxHashMap<StableId, usize> {
    entries
        .iter()
        .zip(plans)
        .enumerate()
        .filter(|(_, (_, plan))| plan.instance.is_some())
        .map(|(i, (e, _))| (e.id, i))
        .collect()
}

/// Writes entities back as their stable IDs (to express a binary value as a JSON patch).
struct WriteIds {
    ids: Arc<FxHashMap<Entity, StableId>>,
}

impl EntityMapper for WriteIds {
    fn wire(&self) -> RefWire {
        RefWire::Any
    }
    fn write(&mut self, entity: Entity) -> Result<RefOut, MapError> {
        let id = self.ids.get(&entity);
        id.map(|id| RefOut::Hex(*id))
            .ok_or(MapError::NotInWrittenScene(entity))
    }
    fn read(&mut self, _reference: RefIn<'_>) -> Result<Entity, MapError> {
        Err(MapError::NotRead)
    }
}
