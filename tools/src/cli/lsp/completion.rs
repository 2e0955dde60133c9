//! Completion: the names that fit where the cursor is, from the registry and the live
//! library (so never stale): component names in `components`, a component's field names, an
//! enum's variants, the format's keys, archetype names in `extends` and `archetype`.

use archetype_engine::{keys, scene_keys};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, CompletionTextEdit,
    Documentation, TextEdit,
};

use super::component_schema::ComponentSchema;
use super::cursor::{cursor_at, place_of, Place, Target};
use super::documents::{FileKind, LineIndex};
use super::server::{Answer, State};

/// The completions at the position, or `None` where the server has none.
pub(super) fn completion(
    state: &mut State,
    params: CompletionParams,
) -> Answer<Option<CompletionResponse>> {
    let place = params.text_document_position;
    let Some((path, kind)) = state.file(&place.text_document.uri) else {
        return Ok(None);
    };
    if kind == FileKind::Other {
        return Ok(None);
    }
    let Some(text) = state.text(&path) else {
        return Ok(None);
    };
    let index = LineIndex::new(&text);
    let offset = index.offset(place.position);
    let cursor = cursor_at(&text, offset);
    let keys = cursor.keys();
    let scene = kind == FileKind::Scene;
    let names: Vec<Candidate> = match (&place_of(&keys, scene), &cursor.target) {
        (Place::Entity { entity }, Target::Key { .. } | Target::NewKey) => {
            let keys: &[&str] = match (scene, entity.is_empty()) {
                (true, _) => &scene_keys::ENTITY,
                (false, true) => &keys::TOP_LEVEL,
                (false, false) => &keys::CHILD,
            };
            keys.iter()
                .map(|key| Candidate::plain(key, CompletionItemKind::PROPERTY))
                .collect()
        }
        (Place::Components { .. }, Target::Key { .. } | Target::NewKey) => components(state),
        (
            Place::Component {
                component, fields, ..
            },
            Target::Key { .. } | Target::NewKey,
        ) => {
            let registry = state.library.registry();
            let Some(schema) = ComponentSchema::of(registry, component) else {
                return Ok(None);
            };
            let fields = schema.fields(fields).into_iter().map(|field| Candidate {
                label: field.name,
                kind: CompletionItemKind::FIELD,
                detail: None,
                documentation: field.description,
            });
            fields.collect()
        }
        (
            Place::Component {
                component, fields, ..
            },
            Target::String { .. } | Target::NewValue,
        ) => {
            let registry = state.library.registry();
            let Some(schema) = ComponentSchema::of(registry, component) else {
                return Ok(None);
            };
            let variants = schema
                .variants(fields)
                .into_iter()
                .map(|variant| Candidate::plain(&variant, CompletionItemKind::ENUM_MEMBER));
            variants.collect()
        }
        (Place::Extends | Place::Archetype, Target::String { .. } | Target::NewValue)
        | (Place::SceneArchetypes, Target::Key { .. } | Target::NewKey) => {
            let own = state.name_at(&path);
            let names = (state.library.names())
                .filter(|name| Some(*name) != own.as_deref())
                .map(|name| Candidate::plain(name, CompletionItemKind::FILE));
            names.collect()
        }
        _ => return Ok(None),
    };
    // Inside a string the name replaces it, quotes and all; elsewhere it is inserted quoted.
    let span = match &cursor.target {
        Target::Key { span, .. } | Target::String { span, .. } => span.clone(),
        Target::NewKey | Target::NewValue => offset..offset,
    };
    let range = index.range(span);
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
    Ok(Some(CompletionResponse::Array(items)))
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
