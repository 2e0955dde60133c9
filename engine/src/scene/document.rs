//! [`SceneDocument`]: a scene file as written, read without a world — its header and its
//! entries, each with its ID, archetype, child, sub-scene placement and component values as
//! JSON. The public read model for tools (`archetool scene info` and `scene diff` read scenes
//! through it), in either encoding.
//!
//! A JSON scene is read by the loader's own first steps (text, top level, `format`, upgrades
//! from older formats), so a broken file gets the loader's diagnostic, placed. A binary scene's
//! values are decoded by their registered types (or by the layout they were saved with, for a
//! component that changed since) and written as JSON with references as stable IDs, as a
//! migration hook sees them.

use std::path::Path;

use serde_json::{Map, Value};

use crate::archetype::ArchetypeLibrary;
use crate::component::StableId;
use crate::diagnostic::DiagnosticCode;
use crate::json::{did_you_mean, PathSegment, SourceText};
use crate::scene::format::scene_keys as keys;
use crate::scene::header::ArchetypeNodes;
use crate::scene::load::{BadEntityId, Context, SceneError, SceneLoadOptions};
use crate::scene::save::SceneEncoding;

/// A scene file as written: its header and entries, read without a world.
///
/// Values are not checked against the component types of a JSON scene (a load does that);
/// every other problem of the file is reported as [`load_scene`](crate::load_scene) reports
/// it.
///
/// # Example
/// ```
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, LoadOptions, SceneDocument};
/// let library = ArchetypeLibrary::empty("archetypes", ComponentRegistry::new(), LoadOptions::default());
/// let text = br#"{ "format": 2, "entities": [
///     { "id": "00000000000000a1", "archetype": "goblin", "components": { "Name": "Grip" } },
///     { "id": "00000000000000a2", "scene": "rooms/armory.scene.json" }
/// ] }"#;
/// let document = SceneDocument::read(text, None, &library)?;
/// assert_eq!(document.entries().len(), 2);
/// let goblin = &document.entries()[0];
/// assert_eq!(goblin.archetype.as_deref(), Some("goblin"));
/// assert_eq!(goblin.components["Name"], "Grip");
/// assert_eq!(document.entries()[1].scene.as_deref(), Some("rooms/armory.scene.json"));
/// # Ok::<(), archetype_engine::SceneError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SceneDocument {
    encoding: SceneEncoding,
    format: u64,
    meta: Option<Map<String, Value>>,
    archetypes: Option<ArchetypeNodes>,
    shared: Map<String, Value>,
    entries: Vec<SceneEntry>,
}

/// One entry of a [`SceneDocument`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SceneEntry {
    /// The entity's stable ID.
    pub id: StableId,
    /// The archetype it is an instance of (or an entity of, with `child`).
    pub archetype: Option<String>,
    /// Its path in its archetype instance, for an instance's child entity.
    pub child: Option<String>,
    /// The scene file it places (a sub-scene), relative to the placing file.
    pub scene: Option<String>,
    /// A placement's overrides: sub-scene entity path → component → patch.
    pub overrides: Map<String, Value>,
    /// Component name → its value: a full value for a plain entity, the diff from the
    /// archetype (a merge patch) for an instance; `null` removes the archetype's component.
    pub components: Map<String, Value>,
}

impl SceneDocument {
    /// Reads the scene in `bytes` (JSON or binary, told apart as a load tells them); `file`
    /// names it in errors. A binary scene's values are decoded with `library`'s components.
    ///
    /// # Errors
    /// What [`load_scene`](crate::load_scene) reports for the file's text, format, header and
    /// entry layout (an ID twice, an unknown key, ...), and, for a binary scene, for its values.
    pub fn read(
        bytes: &[u8],
        file: Option<&Path>,
        library: &ArchetypeLibrary,
    ) -> Result<SceneDocument, SceneError> {
        let options = SceneLoadOptions::default();
        let context = Context::new(file, library, &options);
        let references = library.reference_targets().context();
        references.install(|| read_with(&context, bytes))
    }

    /// Reads the scene file at `path` (within the default size limit); see [`read`](Self::read).
    ///
    /// # Errors
    /// As [`read`](Self::read), and if the file cannot be read.
    pub fn read_path(
        path: impl AsRef<Path>,
        library: &ArchetypeLibrary,
    ) -> Result<SceneDocument, SceneError> {
        let path = path.as_ref();
        let limit = SceneLoadOptions::default().limits.max_scene_bytes;
        let bytes =
            crate::archetype::read_limited(path, limit).map_err(|diagnostic| SceneError {
                diagnostic: Box::new(diagnostic.with_file(path)),
                entity: None,
                offset: None,
                others: Vec::new(),
            })?;
        SceneDocument::read(&bytes, Some(path), library)
    }

    /// How the file is encoded.
    pub fn encoding(&self) -> SceneEncoding {
        self.encoding
    }

    /// The format version the file declares (its contents are read into the current one).
    pub fn format(&self) -> u64 {
        self.format
    }

    /// The game's own data about the file, if it gave some.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// Each archetype's child paths when the scene was saved, if the file records them.
    pub fn archetypes(&self) -> Option<&ArchetypeNodes> {
        self.archetypes.as_ref()
    }

    /// The shared values (`Shared<T>`): key (16 hex digits) → value.
    pub fn shared(&self) -> &Map<String, Value> {
        &self.shared
    }

    /// The entries, in the file's order.
    pub fn entries(&self) -> &[SceneEntry] {
        &self.entries
    }
}

/// Reads `bytes` into a document, with `context` for errors.
fn read_with(context: &Context<'_>, bytes: &[u8]) -> Result<SceneDocument, SceneError> {
    #[cfg(feature = "binary")]
    if SceneEncoding::detect(bytes) == SceneEncoding::Binary {
        let header = crate::scene::load::read_binary_scene_header(bytes)
            .map_err(|error| context.refile(error))?;
        let value = crate::scene::load::binary_document(context, bytes)?;
        let reader = Reader {
            context,
            text: None,
        };
        return reader.document(value, SceneEncoding::Binary, header.format);
    }
    let (value, format, text) = crate::scene::load::json_document(context, bytes)?;
    let reader = Reader {
        context,
        text: Some(&text),
    };
    reader.document(value, SceneEncoding::Json, format)
}

/// Reads a document's JSON value (the current format) into its parts; `text` (a JSON file's,
/// when it is in the current format) places errors.
struct Reader<'r> {
    context: &'r Context<'r>,
    text: Option<&'r SourceText>,
}

impl Reader<'_> {
    fn document(
        &self,
        value: Value,
        encoding: SceneEncoding,
        format: u64,
    ) -> Result<SceneDocument, SceneError> {
        let Value::Object(mut top) = value else {
            return Err(self.error(&[], DiagnosticCode::NotAnObject, "a scene is a JSON object"));
        };
        let meta = match top.remove(keys::META) {
            None | Some(Value::Null) => None,
            Some(Value::Object(meta)) => Some(meta),
            Some(_) => return Err(self.not_an_object(keys::META, "the game's data")),
        };
        let archetypes = match top.remove(keys::ARCHETYPES) {
            None | Some(Value::Null) => None,
            Some(nodes) => Some(serde_json::from_value(nodes).map_err(|_| {
                self.not_an_object(keys::ARCHETYPES, "archetype → its child paths")
            })?),
        };
        let shared = match top.remove(keys::SHARED) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(shared)) => shared,
            Some(_) => return Err(self.not_an_object(keys::SHARED, "key → value")),
        };
        let Some(Value::Array(list)) = top.remove(keys::ENTITIES) else {
            let message = "a scene lists its entities in `entities`, an array";
            return Err(self.error(&[key(keys::ENTITIES)], DiagnosticCode::Malformed, message));
        };
        let entries = self.entries(list)?;
        Ok(SceneDocument {
            encoding,
            format,
            meta,
            archetypes,
            shared,
            entries,
        })
    }

    /// The entries of the entity list; an ID twice is an error at its second entry (naming
    /// the line of the first, as the loader does).
    fn entries(&self, list: Vec<Value>) -> Result<Vec<SceneEntry>, SceneError> {
        let mut seen = rustc_hash::FxHashMap::default();
        let mut entries = Vec::with_capacity(list.len());
        for (i, value) in list.into_iter().enumerate() {
            let entry = self.entry(i, value)?;
            if let Some(first) = seen.insert(entry.id, i) {
                let line = self.line_of(&at(first, keys::ID));
                let line = line.map_or(String::new(), |line| format!(" (first on line {line})"));
                let message = format!("entity {} appears twice in the scene{line}", entry.id);
                let path = at(i, keys::ID);
                let mut error = self.value_error(&path, DiagnosticCode::DuplicateKey, message);
                error.entity = Some(entry.id);
                return Err(error);
            }
            entries.push(entry);
        }
        Ok(entries)
    }

    /// The line of the value at `path`, in a JSON file read as written.
    fn line_of(&self, path: &[PathSegment]) -> Option<usize> {
        let offset = self.offset_of(path, Place::Value)?;
        Some(self.text?.position(offset).line)
    }

    fn entry(&self, i: usize, value: Value) -> Result<SceneEntry, SceneError> {
        let Value::Object(members) = value else {
            let path = [key(keys::ENTITIES), PathSegment::Index(i)];
            let message = format!("entity {i}: an entry is a JSON object");
            return Err(self.error(&path, DiagnosticCode::Malformed, message));
        };
        let mut entry = SceneEntry {
            id: StableId(0),
            archetype: None,
            child: None,
            scene: None,
            overrides: Map::new(),
            components: Map::new(),
        };
        let mut id = None;
        for (name, value) in members {
            match name.as_str() {
                keys::ID => id = Some(self.id(i, &value)?),
                keys::ARCHETYPE => entry.archetype = Some(self.string(i, &name, value)?),
                keys::CHILD => entry.child = Some(self.string(i, &name, value)?),
                keys::SCENE => entry.scene = Some(self.string(i, &name, value)?),
                keys::OVERRIDES => entry.overrides = self.object(i, &name, value)?,
                keys::COMPONENTS => entry.components = self.object(i, &name, value)?,
                _ => return Err(self.unknown_key(i, &name)),
            }
        }
        entry.id = id.ok_or_else(|| {
            let path = [key(keys::ENTITIES), PathSegment::Index(i)];
            let message = format!("entity {i}: an entry needs an `id` (16 hex digits)");
            self.error(&path, DiagnosticCode::Malformed, message)
        })?;
        Ok(entry)
    }

    fn id(&self, i: usize, value: &Value) -> Result<StableId, SceneError> {
        let parsed = match value.as_str() {
            Some(text) => text.parse::<StableId>().map_err(BadEntityId::Parse),
            None => Err(BadEntityId::NotAString(value.to_string())),
        };
        parsed.map_err(|bad| {
            let message = bad.to_string();
            self.value_error(&at(i, keys::ID), DiagnosticCode::Malformed, message)
        })
    }

    fn string(&self, i: usize, name: &str, value: Value) -> Result<String, SceneError> {
        match value {
            Value::String(text) => Ok(text),
            _ => {
                let message = format!("entity {i}: `{name}` must be a string");
                Err(self.value_error(&at(i, name), DiagnosticCode::Malformed, message))
            }
        }
    }

    fn object(&self, i: usize, name: &str, value: Value) -> Result<Map<String, Value>, SceneError> {
        match value {
            Value::Object(members) => Ok(members),
            _ => {
                let message = format!("entity {i}: `{name}` must be an object");
                Err(self.value_error(&at(i, name), DiagnosticCode::Malformed, message))
            }
        }
    }

    fn unknown_key(&self, i: usize, name: &str) -> SceneError {
        let known = keys::ENTITY
            .into_iter()
            .chain([keys::SCENE, keys::OVERRIDES]);
        let suggestion = did_you_mean(name, known);
        let message = format!("entity {i}: unknown key `{name}`");
        let mut error = self.error(&at(i, name), DiagnosticCode::UnknownKey, message);
        error.diagnostic.suggestion = suggestion;
        error
    }

    fn not_an_object(&self, name: &str, holding: &str) -> SceneError {
        let message = format!("`{name}` must be an object: {holding}");
        self.error(&[key(name)], DiagnosticCode::Malformed, message)
    }

    /// An error at the key of `path` in the file (placed when the file is JSON text in the
    /// current format: an upgraded or binary file's document is not the file).
    fn error(
        &self,
        path: &[PathSegment],
        code: DiagnosticCode,
        message: impl Into<String>,
    ) -> SceneError {
        self.placed(path, code, message.into(), Place::Key)
    }

    /// An error at the value of `path` (as [`error`](Self::error) places one at its key).
    fn value_error(
        &self,
        path: &[PathSegment],
        code: DiagnosticCode,
        message: String,
    ) -> SceneError {
        self.placed(path, code, message, Place::Value)
    }

    fn placed(
        &self,
        path: &[PathSegment],
        code: DiagnosticCode,
        message: String,
        place: Place,
    ) -> SceneError {
        let mut error = self.context.error(code, message);
        if let (Some(text), Some(start)) = (self.text, self.offset_of(path, place)) {
            error.diagnostic.position = Some(text.position(start));
        }
        error
    }

    /// Where the key (if it has one) or the value at `path` starts in a JSON file read as
    /// written.
    fn offset_of(&self, path: &[PathSegment], place: Place) -> Option<usize> {
        let located = self.text?.locate(path)?;
        Some(match (place, located.key) {
            (Place::Key, Some(key)) => key.start,
            _ => located.value.start,
        })
    }
}

/// Which end of a member an error is placed at.
#[derive(Clone, Copy)]
enum Place {
    Key,
    Value,
}

fn key(name: &str) -> PathSegment {
    PathSegment::Key(name.to_string())
}

/// The path of member `name` of entry `i`.
fn at(i: usize, name: &str) -> [PathSegment; 3] {
    [key(keys::ENTITIES), PathSegment::Index(i), key(name)]
}
