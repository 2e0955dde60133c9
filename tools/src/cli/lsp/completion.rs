//! Completion: the names that fit where the cursor is, from the registry and the live
//! library (so never stale): component names in `components`, a component's field names, an
//! enum's variants, the format's keys, archetype names in `extends`, `archetype` and
//! `ArchetypeRef` fields, and `#child` paths in `EntityRef` fields.

use std::path::Path;

use archetype_engine::tooling::TextLines;
use archetype_engine::{keys, scene_keys, ResolvedEntity};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, CompletionTextEdit,
    Documentation, TextEdit,
};

use super::component_schema::{ComponentSchema, ARCHETYPE_REF, ENTITY_REF};
use super::cursor::{cursor_at, place_of, Place, Target};
use super::documents::{FileKind, ProtocolPlaces};
use super::server::{Answer, State};

/// The completions at the position, or `None` where the server has none.
pub(super) fn completion(
    state: &mut State,
    params: CompletionParams,
) -> Answer<Option<CompletionResponse>> {
    let place = params.text_document_position;
    let Some((path, kind, text)) = state.document(&place.text_document.uri) else {
        return Ok(None);
    };
    let index = TextLines::new(&text);
    let offset = index.lsp_offset(place.position);
    let cursor = cursor_at(&text, offset);
    let keys = cursor.keys();
    let scene = kind == FileKind::Scene;
    let on_key = matches!(cursor.target, Target::Key { .. } | Target::NewKey);
    let names = match place_of(&keys, scene) {
        Place::Entity { entity } if on_key => {
            let keys: &[&str] = match (scene, entity.is_empty()) {
                (true, _) => &scene_keys::ENTITY,
                (false, true) => &keys::TOP_LEVEL,
                (false, false) => &keys::CHILD,
            };
            let keys = keys.iter();
            keys.map(|key| Candidate::plain(key, CompletionItemKind::PROPERTY))
                .collect()
        }
        Place::Components { .. } if on_key => components(state),
        Place::Component {
            entity,
            component,
            fields,
        } => {
            let Some(schema) = ComponentSchema::of(state.library.registry(), component) else {
                return Ok(None);
            };
            if on_key {
                let fields = schema.fields(&fields).into_iter();
                fields
                    .map(|field| Candidate {
                        label: field.name,
                        kind: CompletionItemKind::FIELD,
                        detail: None,
                        documentation: field.description,
                    })
                    .collect()
            } else if schema.refers_to(&fields, ARCHETYPE_REF) {
                archetype_names(state, None)
            } else if schema.refers_to(&fields, ENTITY_REF) {
                let paths = entity_paths(state, &path, &entity).into_iter();
                paths
                    .map(|path| Candidate::plain(&path, CompletionItemKind::REFERENCE))
                    .collect()
            } else {
                let variants = schema.variants(&fields).into_iter();
                variants
                    .map(|variant| Candidate::plain(&variant, CompletionItemKind::ENUM_MEMBER))
                    .collect()
            }
        }
        Place::Extends | Place::Archetype if !on_key => {
            archetype_names(state, state.name_at(&path).as_deref())
        }
        Place::SceneArchetypes if on_key => archetype_names(state, None),
        _ => return Ok(None),
    };
    Ok(Some(items(&cursor.target, offset, &index, names)))
}

/// The completion items: inside a string each name replaces it, quotes and all; elsewhere it
/// is inserted quoted.
fn items(
    target: &Target,
    offset: usize,
    index: &TextLines<'_>,
    names: Vec<Candidate>,
) -> CompletionResponse {
    let span = match target {
        Target::Key { span, .. } | Target::String { span, .. } => span.clone(),
        Target::NewKey | Target::NewValue => offset..offset,
    };
    let range = index.lsp_range(span);
    let items = names
        .into_iter()
        .map(|candidate| {
            let quoted = serde_json::Value::String(candidate.label.clone()).to_string();
            CompletionItem {
                filter_text: Some(quoted.clone()),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, quoted))),
                kind: Some(candidate.kind),
                detail: candidate.detail,
                documentation: candidate.documentation.map(Documentation::String),
                label: candidate.label,
                ..CompletionItem::default()
            }
        })
        .collect();
    CompletionResponse::Array(items)
}

/// A name to offer.
struct Candidate {
    label: String,
    kind: CompletionItemKind,
    detail: Option<String>,
    documentation: Option<String>,
}

impl Candidate {
    fn plain(label: &str, kind: CompletionItemKind) -> Self {
        Candidate {
            label: label.to_string(),
            kind,
            detail: None,
            documentation: None,
        }
    }
}

/// The archetypes' names, but `own` (an archetype does not extend itself).
fn archetype_names(state: &State, own: Option<&str>) -> Vec<Candidate> {
    (state.library.names())
        .filter(|name| Some(*name) != own)
        .map(|name| Candidate::plain(name, CompletionItemKind::FILE))
        .collect()
}

/// The components a file may name (not the engine-managed ones), with their Rust types and
/// doc comments.
fn components(state: &State) -> Vec<Candidate> {
    let registry = state.library.registry();
    let mut found: Vec<Candidate> = registry
        .ids()
        .filter(|id| !registry.is_managed(*id))
        .map(|id| {
            let name = registry.name(id);
            let documentation =
                ComponentSchema::of(registry, name).and_then(|schema| schema.description_at(&[]));
            Candidate {
                label: name.to_string(),
                kind: CompletionItemKind::STRUCT,
                detail: Some(registry.type_name(id).to_string()),
                documentation,
            }
        })
        .collect();
    found.sort_by(|a, b| a.label.cmp(&b.label));
    found
}

/// The references an entity of an archetype can make to the entities of its instance: `#`
/// (itself), then `#child`, `#child/grandchild`, ... for its children as the archetype
/// resolves (its own and its parents'), sorted.
fn entity_paths(state: &State, path: &Path, entity: &[&str]) -> Vec<String> {
    let mut paths = vec!["#".to_string()];
    let Some(archetype) = state
        .name_at(path)
        .and_then(|name| state.library.get(&name))
    else {
        return paths;
    };
    let mut node = archetype.resolved();
    for child in entity {
        match node.children.get(*child) {
            Some(found) => node = found,
            None => return paths,
        }
    }
    let mut pending: Vec<(String, &ResolvedEntity)> = vec![(String::new(), node)];
    while let Some((prefix, node)) = pending.pop() {
        for (name, child) in &node.children {
            let path = format!("{prefix}{name}");
            paths.push(format!("#{path}"));
            pending.push((format!("{path}/"), child));
        }
    }
    paths[1..].sort();
    paths
}
