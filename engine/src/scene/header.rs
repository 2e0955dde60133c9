//! What a scene says about itself before its entities: the game's own `meta` data, and the
//! child paths each archetype it has instances of had when it was saved (so a load can tell a
//! child the archetype gained since from one the game despawned). Readable without loading
//! the scene ([`read_scene_header`]).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::archetype::ArchetypeId;
use crate::archetype::ArchetypeLibrary;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::scene::format::{scene_keys as keys, ScenePretty};
use crate::scene::load::SceneError;
use crate::scene::save::SceneEncoding;

/// Each archetype's child paths (the root left out), by archetype name.
pub type ArchetypeNodes = BTreeMap<String, Vec<String>>;

/// What a scene file says about itself, read without loading it ([`read_scene_header`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SceneHeader {
    /// How the file is encoded.
    pub encoding: SceneEncoding,
    /// The format version the file declares.
    pub format: u64,
    /// The game's own data about the file (`SceneSaveOptions::meta`), if it gave some.
    pub meta: Option<Map<String, Value>>,
    /// Each archetype with children the scene has instances of, with its child paths when the
    /// scene was saved (an archetype it does not name had none); `None` for files written
    /// before scenes recorded them, or whose archetypes had no children.
    pub archetypes: Option<ArchetypeNodes>,
}

/// Reads a scene's header — its encoding, format, `meta` and archetype table — without
/// loading the scene (the entities are skipped, not decoded).
///
/// # Errors
/// If the bytes are not a scene (not JSON with a top-level object, or a binary scene whose
/// header is damaged).
///
/// # Example
/// ```
/// use archetype_engine::{read_scene_header, SceneEncoding};
/// let text = br#"{ "format": 2, "meta": { "game_version": "1.4.0" }, "entities": [] }"#;
/// let header = read_scene_header(text)?;
/// assert_eq!(header.encoding, SceneEncoding::Json);
/// assert_eq!(header.meta.unwrap()["game_version"], "1.4.0");
/// # Ok::<(), archetype_engine::SceneError>(())
/// ```
pub fn read_scene_header(bytes: &[u8]) -> Result<SceneHeader, SceneError> {
    #[cfg(feature = "binary")]
    if SceneEncoding::detect(bytes) == SceneEncoding::Binary {
        let binary = crate::scene::load::read_binary_scene_header(bytes)?;
        return Ok(SceneHeader {
            encoding: SceneEncoding::Binary,
            format: binary.format,
            meta: binary.meta,
            archetypes: binary.nodes,
        });
    }
    /// The header keys alone; the entity list is skipped without being built.
    #[derive(Deserialize)]
    struct Head {
        format: Option<u64>,
        meta: Option<Map<String, Value>>,
        archetypes: Option<ArchetypeNodes>,
    }
    let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let head: Head = serde_json::from_slice(text).map_err(|error| {
        let message = format!("not a readable scene header: {error}");
        SceneError {
            diagnostic: Box::new(Diagnostic::error(DiagnosticCode::Syntax, message)),
            entity: None,
            offset: None,
            others: Vec::new(),
        }
    })?;
    Ok(SceneHeader {
        encoding: SceneEncoding::Json,
        format: head.format.unwrap_or(1),
        meta: head.meta,
        archetypes: head.archetypes,
    })
}

/// The child paths each of `archetypes` that has children has in `library` now (for a scene
/// being saved).
pub(super) fn archetype_nodes(
    library: &ArchetypeLibrary,
    archetypes: &[ArchetypeId],
) -> ArchetypeNodes {
    archetypes
        .iter()
        .filter_map(|id| {
            let name = library.name_of(*id)?;
            let compiled = library.get_by_id(*id)?.compiled.as_ref()?;
            // Without children there is nothing to record: an archetype the table does not
            // name had none when the scene was saved.
            let children: Vec<String> = compiled.nodes[1..]
                .iter()
                .map(|n| n.path.to_string())
                .collect();
            (!children.is_empty()).then(|| (name.to_string(), children))
        })
        .collect()
}

/// The `meta` and `archetypes` members of a JSON scene (each line-broken and indented as the
/// rest of the file, each followed by a comma), written in front of the shared table.
pub(super) fn write_json_header(
    meta: Option<&Map<String, Value>>,
    nodes: &ArchetypeNodes,
    out: &mut Vec<u8>,
) {
    if let Some(meta) = meta {
        write_member(keys::META, meta, out);
    }
    if !nodes.is_empty() {
        write_member(keys::ARCHETYPES, nodes, out);
    }
}

/// `\n  "key": value,` with the value in the scene's pretty layout.
fn write_member(key: &str, value: &impl serde::Serialize, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("\n  \"{key}\": ").as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, ScenePretty::at(1));
    // Maps of strings to JSON values, and lists of strings, always serialize.
    let _ = value.serialize(&mut serializer);
    out.push(b',');
}
