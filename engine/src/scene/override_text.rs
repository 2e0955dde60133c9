//! An archetype instance's overrides taken out of a JSON scene's text with the smallest edit,
//! so the archetype's values reach the entity again (Revert to archetype, for a scene file):
//! each override's member removed with one separating comma, a component patch left empty
//! removed with it, every other byte of the file as it was.

use crate::component::StableId;
use crate::json::{decoded_string, remove_member_in_text, FieldPath, PathSegment, SourceText};
use crate::scene::scene_keys;

/// Why a scene's text was not edited; it is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SceneTextEditError {
    /// The text is not a JSON scene (a binary scene, or not well-formed JSON).
    #[error("the scene is not JSON text; save it as JSON to edit it")]
    NotJson,
    /// No entry of the scene has the ID.
    #[error("no entity {id} in the scene")]
    NoEntity {
        /// The ID asked for.
        id: StableId,
    },
    /// The entity's entry does not override the place.
    #[error("entity {id} does not override `{place}`")]
    NotOverridden {
        /// The entity.
        id: StableId,
        /// The place, `Component` or `Component.field`.
        place: String,
    },
}

/// `text` (a JSON scene) without entity `id`'s overrides of `places` (each a component as the
/// entry names it and a field in it; the empty path: the whole component patch). A component
/// patch left empty goes; the entry's `components` stays.
///
/// # Errors
/// A [`SceneTextEditError`]: the text is not a JSON scene, has no entity `id`, or the entry
/// does not override one of the places.
///
/// # Example
/// ```
/// use archetype_engine::{tooling::scene_without_overrides, FieldPath, StableId};
/// let text = r#"{ "format": 2, "entities": [
///   { "id": "00000000000000b2", "archetype": "goblin",
///     "components": { "Health": { "max": 30 }, "Name": "Grukk" } }
/// ] }"#;
/// let id: StableId = "00000000000000b2".parse()?;
/// let max = FieldPath::root().key("max");
/// let reverted = scene_without_overrides(text, id, &[("Health".to_string(), max)])?;
/// assert!(reverted.contains(r#""components": { "Name": "Grukk" }"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scene_without_overrides(
    text: &str,
    id: StableId,
    places: &[(String, FieldPath)],
) -> Result<String, SceneTextEditError> {
    let index = entry_index(text, id)?;
    let mut text = text.to_string();
    for (component, field) in places {
        let mut path = vec![
            PathSegment::Key(scene_keys::ENTITIES.to_string()),
            PathSegment::Index(index),
            PathSegment::Key(scene_keys::COMPONENTS.to_string()),
            PathSegment::Key(component.clone()),
        ];
        path.extend(field.segments().iter().cloned());
        let not_overridden = || SceneTextEditError::NotOverridden {
            id,
            place: field.in_component(component),
        };
        text = remove_member_in_text(&text, &path, 3)
            .map_err(|_| not_overridden())?
            .ok_or_else(not_overridden)?;
    }
    Ok(text)
}

/// The position of entity `id`'s entry in the scene's `entities`: one pass over the entries,
/// each found in constant time from the text's index.
fn entry_index(text: &str, id: StableId) -> Result<usize, SceneTextEditError> {
    // A text that is not well-formed JSON is refused before it is searched (a search without
    // the index would scan the text once per entry).
    let source = SourceText::from_string(text.to_string());
    if !source.is_indexed() {
        return Err(SceneTextEditError::NotJson);
    }
    let entities = PathSegment::Key(scene_keys::ENTITIES.to_string());
    let id_key = PathSegment::Key(scene_keys::ID.to_string());
    let listed = source.locate(std::slice::from_ref(&entities));
    let bytes = source.text().as_bytes();
    if !listed.is_some_and(|l| l.matched == 1 && bytes.get(l.value.start) == Some(&b'[')) {
        return Err(SceneTextEditError::NotJson);
    }
    for index in 0.. {
        let path = [entities.clone(), PathSegment::Index(index), id_key.clone()];
        let Some(found) = source.locate(&path) else {
            return Err(SceneTextEditError::NotJson);
        };
        match found.matched {
            3 => {}
            2 => continue,
            _ => break,
        }
        let written = decoded_string(&source.text()[found.value]);
        if written.and_then(|w| w.parse::<StableId>().ok()) == Some(id) {
            return Ok(index);
        }
    }
    Err(SceneTextEditError::NoEntity { id })
}
