//! Hover on a component or a field: its Rust type and doc comment (from the registry's
//! schema), and in an archetype file its resolved value there with the file, line and column
//! that supplied each field (`archetool inspect --provenance`'s rows). On an archetype's name:
//! its file, whether it is abstract, its parents. Inlay hints: after a component an archetype
//! writes in part, each field it inherits, with its value and the archetype it comes from.

use std::path::Path;

use archetype_engine::keys;
use archetype_engine::tooling::TextLines;
use archetype_engine::{FieldPath, ResolvedEntity};
use lsp_types::{
    Hover, HoverContents, HoverParams, InlayHint, InlayHintLabel, InlayHintParams, MarkupContent,
    MarkupKind,
};
use serde_json::Value;

use super::super::inspect::leaves_of;
use super::super::one_line;
use super::super::raw_json::{self, Node};
use super::component_schema::ComponentSchema;
use super::cursor::{cursor_at, place_of, Place, Target};
use super::documents::{FileKind, ProtocolPlaces};
use super::navigation;
use super::server::{Answer, State};

/// The hover text at the position, or `None` where there is nothing to say.
pub(super) fn hover(state: &mut State, params: HoverParams) -> Answer<Option<Hover>> {
    let place = params.text_document_position_params;
    let Some((path, kind, text)) = state.document(&place.text_document.uri) else {
        return Ok(None);
    };
    let index = TextLines::new(&text);
    let cursor = cursor_at(&text, index.lsp_offset(place.position));
    if let Target::String { span, .. } = &cursor.target {
        let named = navigation::named_at(state, &place);
        return Ok(named.map(|name| archetype_hover(state, &name, index.lsp_range(span.clone()))));
    }
    let Target::Key { text: key, span } = &cursor.target else {
        return Ok(None);
    };
    let keys = cursor.keys();
    let (entity, component, fields) = match place_of(&keys, kind == FileKind::Scene) {
        Place::Components { entity } => (entity, key.as_str(), Vec::new()),
        Place::Component {
            entity,
            component,
            mut fields,
        } => {
            fields.push(Some(key.as_str()));
            (entity, component, fields)
        }
        _ => return Ok(None),
    };
    let registry = state.library.registry();
    let Some(id) = registry.id(component) else {
        return Ok(None);
    };
    let mut title = format!("**{}", registry.name(id));
    for field in fields.iter().flatten() {
        title.push('.');
        title.push_str(field);
    }
    title.push_str(&format!("** · `{}`", registry.type_name(id)));
    let mut sections = vec![title];
    if let Some(doc) =
        ComponentSchema::of(registry, component).and_then(|s| s.description_at(&fields))
    {
        sections.push(doc);
    }
    if let Some(name) = state.name_at(&path) {
        sections.extend(resolved(state, &name, &entity, registry.name(id), &fields));
    }
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n"),
        }),
        range: Some(index.lsp_range(span.clone())),
    }))
}

/// What an archetype name names: the archetype's file, whether it is abstract, its parents.
fn archetype_hover(state: &State, name: &str, range: lsp_types::Range) -> Hover {
    let library = &state.library;
    let base = state.root.parent().unwrap_or(&state.root);
    let mut text = format!("**{name}**");
    if let Some(file) = library.file_of(name) {
        text.push_str(&format!(" · `{}`", shown(file, base)));
    }
    if let Some((is_abstract, parents)) = library.declared(name) {
        if is_abstract {
            text.push_str("\n\nabstract");
        }
        if !parents.is_empty() {
            let parents: Vec<String> = parents.iter().map(|p| format!("`{p}`")).collect();
            text.push_str(&format!("\n\nextends {}", parents.join(", ")));
        }
    }
    if library.get(name).is_none() {
        text.push_str("\n\ndoes not resolve: see its problems");
    }
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: Some(range),
    }
}

/// The resolved value at the place in archetype `name`, and where each of its fields comes
/// from; nothing if the archetype does not resolve (its diagnostics say why).
fn resolved(
    state: &State,
    name: &str,
    entity: &[&str],
    component: &str,
    fields: &[Option<&str>],
) -> Vec<String> {
    let library = &state.library;
    let Some(archetype) = library.get(name) else {
        return vec![format!("`{name}` does not resolve: see its problems")];
    };
    let mut node: &ResolvedEntity = archetype.resolved();
    for child in entity {
        match node.children.get(*child) {
            Some(found) => node = found,
            None => return Vec::new(),
        }
    }
    let mut value = node.components.get(component);
    let mut path = FieldPath::root();
    for field in fields {
        let Some(key) = field else {
            return Vec::new();
        };
        value = value.and_then(|v| v.get(*key));
        path = path.key(*key);
    }
    let Some(value) = value else {
        return vec![format!("not in `{name}` once resolved")];
    };
    let entity_path = entity.join("/");
    let mut leaves = Vec::new();
    leaves_of(value, path, &mut leaves);
    let base = state.root.parent().unwrap_or(&state.root);
    let rows: Vec<String> = leaves
        .into_iter()
        .map(|(field, leaf)| {
            let origin = match library.provenance(name, &entity_path, component, &field) {
                Some((file, Some(at))) => {
                    format!("{}:{}:{}", shown(&file, base), at.line, at.column)
                }
                Some((file, None)) => shown(&file, base),
                None => "(no file)".to_string(),
            };
            let field = match field.is_empty() {
                true => component.to_string(),
                false => format!("{component}.{field}"),
            };
            format!("- `{field}` = `{}` from `{origin}`", one_line(leaf))
        })
        .collect();
    vec![
        format!("In `{name}`: `{}`", one_line(value as &Value)),
        rows.join("\n"),
    ]
}

/// A path as the project shows it: relative to the directory holding the archetypes root.
fn shown(file: &Path, base: &Path) -> String {
    file.strip_prefix(base)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Most hints one answer gives (a file's components' inherited fields).
const MAX_HINTS: usize = 1_000;

/// After each component an archetype's file writes as an object, a hint for each field it
/// inherits without writing: its value and the archetype that gives it
/// (`color: "Green" ← enemies/goblin`), within the range asked for. The root entity's
/// components; nothing if the archetype does not resolve.
pub(super) fn inlay_hints(
    state: &mut State,
    params: InlayHintParams,
) -> Answer<Option<Vec<InlayHint>>> {
    let Some((path, FileKind::Archetype(_), text)) = state.document(&params.text_document.uri)
    else {
        return Ok(None);
    };
    let Some(name) = state.name_at(&path) else {
        return Ok(None);
    };
    let library = &state.library;
    let (Some(archetype), Ok(root)) = (library.get(&name), raw_json::parse(&text)) else {
        return Ok(None);
    };
    let index = TextLines::new(&text);
    let mut hints = Vec::new();
    let written = root
        .get(keys::COMPONENTS)
        .and_then(Node::members)
        .unwrap_or_default();
    for component in written {
        let (Some(fields), Some(Value::Object(resolved))) = (
            component.value.members(),
            archetype.resolved().components.get(component.key.as_str()),
        ) else {
            continue;
        };
        let position = index.lsp_position(component.value.span.end);
        if position < params.range.start || position > params.range.end {
            continue;
        }
        for (field, value) in resolved {
            if fields.iter().any(|written| written.key == *field) {
                continue;
            }
            let at = FieldPath::root().key(field);
            let Some((file, _)) = library.provenance(&name, "", &component.key, &at) else {
                continue;
            };
            let Some(source) = state.name_at(&file).filter(|source| *source != name) else {
                continue;
            };
            hints.push(InlayHint {
                position,
                label: InlayHintLabel::String(format!("{field}: {} ← {source}", one_line(value))),
                kind: None,
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: None,
                data: None,
            });
        }
        if hints.len() >= MAX_HINTS {
            hints.truncate(MAX_HINTS);
            break;
        }
    }
    Ok(Some(hints))
}
