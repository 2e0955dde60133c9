//! Archetype names as links: go to the file an `extends`, a child's `archetype`, an
//! `ArchetypeRef` field or a scene's `archetype` names, and to the child a `#child` reference
//! names, and to the file under the assets root an `AssetPath` field names; find every place
//! that names an archetype (archetype files' `extends`, `archetype` and
//! `ArchetypeRef` fields, scenes' `archetype` and `archetypes` keys); rename one everywhere,
//! moving its file and keeping the old name under its `formerly`; list the archetypes whose
//! names match a query (`workspace/symbol`).
//!
//! Places are read from each file's text as written (the open buffer's where there is one),
//! with [`raw_json`](super::super::raw_json) for their spans; a file that is not JSON has no
//! places. A former name (`formerly`) counts as a name of the archetype it now is.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use archetype_engine::tooling::{real_path_inside, TextLines};
use archetype_engine::{keys, scene_keys, AssetPath};
use lsp_types::{
    CodeLens, CodeLensParams, Command, DocumentChangeOperation, DocumentChanges, DocumentLink,
    DocumentLinkParams, GotoDefinitionParams, GotoDefinitionResponse, Location, OneOf,
    OptionalVersionedTextDocumentIdentifier, Position, PrepareRenameResponse, Range as LspRange,
    ReferenceParams, RenameFile, RenameParams, ResourceOp, SymbolKind, TextDocumentEdit,
    TextDocumentPositionParams, TextEdit, WorkspaceEdit, WorkspaceSymbol, WorkspaceSymbolParams,
    WorkspaceSymbolResponse,
};

use super::super::raw_json::{self, Node, NodeKind};
use super::super::scene;
use super::component_schema::{ComponentSchema, ARCHETYPE_REF, ASSET_PATH, ENTITY_REF};
use super::cursor::{cursor_at, place_of, Place, Target};
use super::documents::{is_scene, uri_of, FileKind, ProtocolPlaces};
use super::server::{failed, Answer, State};

/// The file of the archetype named at the position.
pub(super) fn definition(
    state: &mut State,
    params: GotoDefinitionParams,
) -> Answer<Option<GotoDefinitionResponse>> {
    let position = &params.text_document_position_params;
    if let Some(location) = child_at(state, position) {
        return Ok(Some(GotoDefinitionResponse::Scalar(location)));
    }
    let Some(name) = named_at(state, position) else {
        return Ok(None);
    };
    Ok(file_location(state, &name).map(GotoDefinitionResponse::Scalar))
}

/// Every place that names the archetype named at the position (or, elsewhere in an
/// archetype's file, that archetype), and its file if the client asks for the declaration.
pub(super) fn references(
    state: &mut State,
    params: ReferenceParams,
) -> Answer<Option<Vec<Location>>> {
    let position = &params.text_document_position;
    let Some(name) = named_at(state, position).or_else(|| own_name(state, position)) else {
        return Ok(None);
    };
    let mut locations = Vec::new();
    if params.context.include_declaration {
        locations.extend(file_location(state, &name));
    }
    for (file, spans) in places_naming(state, &name) {
        let (Some(uri), Some(text)) = (state.uri(&file), state.text(&file)) else {
            continue;
        };
        let index = TextLines::new(&text);
        for span in spans {
            locations.push(Location::new(uri.clone(), index.lsp_range(span)));
        }
    }
    Ok(Some(locations))
}

/// Renames the archetype named at the position (or whose file it is): every place naming it,
/// and its file.
///
/// # Errors
/// If the library would refuse the new name for the archetype
/// ([`check_rename`](archetype_engine::ArchetypeLibrary::check_rename): the naming rules, a
/// name taken, a clash by letter case with an archetype or a directory, another archetype's
/// former name), saying why.
pub(super) fn rename(state: &mut State, params: RenameParams) -> Answer<Option<WorkspaceEdit>> {
    let position = &params.text_document_position;
    let Some(name) = named_at(state, position).or_else(|| own_name(state, position)) else {
        return Ok(None);
    };
    let new_name = params.new_name.as_str();
    if let Err(refusal) = state.library.check_rename(&name, new_name) {
        return Err(failed(refusal.to_string()));
    }
    let Some(old_file) = state.library.file_of(&name).map(Path::to_path_buf) else {
        return Ok(None);
    };
    if !state.moves_files {
        return Err(failed(format!(
            "cannot rename `{name}` here: a rename moves its file, and this editor does not say it applies file moves in a rename (workspace edit `documentChanges` with the `rename` resource operation)"
        )));
    }
    let mut new_file = state.root.clone();
    new_file.extend(new_name.split('/'));
    new_file.set_extension("json");
    let quoted = serde_json::Value::String(new_name.to_string()).to_string();
    let mut edits: BTreeMap<PathBuf, Vec<(Range<usize>, String)>> = BTreeMap::new();
    for (file, spans) in places_naming(state, &name) {
        let file_edits = edits.entry(file).or_default();
        file_edits.extend(spans.into_iter().map(|span| (span, quoted.clone())));
    }
    if let Some(edit) = state
        .text(&old_file)
        .and_then(|text| keep_former_name(&text, &name))
    {
        edits.entry(old_file.clone()).or_default().push(edit);
    }
    let mut operations = Vec::new();
    for (file, file_edits) in edits {
        let (Some(uri), Some(text)) = (state.uri(&file), state.text(&file)) else {
            continue;
        };
        let index = TextLines::new(&text);
        let edits = file_edits
            .into_iter()
            .map(|(span, new_text)| OneOf::Left(TextEdit::new(index.lsp_range(span), new_text)))
            .collect();
        let version = state.documents.get(&file).map(|document| document.version);
        operations.push(DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri, version },
            edits,
        }));
    }
    let (Some(old_uri), Some(new_uri)) = (state.uri(&old_file), uri_of(&new_file)) else {
        return Ok(None);
    };
    operations.push(DocumentChangeOperation::Op(ResourceOp::Rename(
        RenameFile {
            old_uri,
            new_uri,
            options: None,
            annotation_id: None,
        },
    )));
    Ok(Some(WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(operations)),
        ..WorkspaceEdit::default()
    }))
}

/// The edit that lists `old` under `formerly` in an archetype file's text, so what still names
/// it (a save game outside the project, a name kept in a component value) gets the archetype
/// under its new name: appended to a `formerly` there is, else a `formerly` before the first
/// key. `None` if the text is not an object, or already lists it.
fn keep_former_name(text: &str, old: &str) -> Option<(Range<usize>, String)> {
    let root = raw_json::parse(text).ok()?;
    let members = root.members()?;
    let quoted = serde_json::Value::String(old.to_string()).to_string();
    let Some(formerly) = root.get(keys::FORMERLY) else {
        return Some(match members.first() {
            // Before the first key, on a line of its own when that key starts one.
            Some(first) => {
                let line_start = text[..first.key_span.start]
                    .rfind('\n')
                    .map_or(0, |i| i + 1);
                let indent = &text[line_start..first.key_span.start];
                let separator = match indent.trim().is_empty() && line_start > 0 {
                    true => format!(",\n{indent}"),
                    false => ", ".to_string(),
                };
                let at = first.key_span.start;
                (
                    at..at,
                    format!("\"{}\": [{quoted}]{separator}", keys::FORMERLY),
                )
            }
            None => (
                root.span.clone(),
                format!("{{ \"{}\": [{quoted}] }}", keys::FORMERLY),
            ),
        });
    };
    match &formerly.kind {
        NodeKind::Scalar(_) if string_of(formerly).as_deref() == Some(old) => None,
        NodeKind::Scalar(written) => {
            Some((formerly.span.clone(), format!("[{written}, {quoted}]")))
        }
        NodeKind::Array(items)
            if items
                .iter()
                .any(|item| string_of(item).as_deref() == Some(old)) =>
        {
            None
        }
        NodeKind::Array(items) => match items.last() {
            Some(last) => Some((last.span.end..last.span.end, format!(", {quoted}"))),
            None => Some((formerly.span.clone(), format!("[{quoted}]"))),
        },
        NodeKind::Object(_) => None,
    }
}

/// The archetype (its current name) a name at the position names: an `extends`, a child's or
/// a scene entity's `archetype`, a key of a scene's `archetypes`.
pub(super) fn named_at(state: &State, position: &TextDocumentPositionParams) -> Option<String> {
    named_span_at(state, position).map(|(name, _)| name)
}

/// [`named_at`], with the protocol range of the name as written (inside its quotes).
fn named_span_at(
    state: &State,
    position: &TextDocumentPositionParams,
) -> Option<(String, LspRange)> {
    let (_, kind, text) = state.document(&position.text_document.uri)?;
    let index = TextLines::new(&text);
    let cursor = cursor_at(&text, index.lsp_offset(position.position));
    let keys = cursor.keys();
    let (name, span) = match (place_of(&keys, kind == FileKind::Scene), &cursor.target) {
        (Place::Extends | Place::Archetype, Target::String { text, span }) => (text, span),
        (Place::SceneArchetypes, Target::Key { text, span }) => (text, span),
        (
            Place::Component {
                component, fields, ..
            },
            Target::String { text, span },
        ) => {
            let schema = ComponentSchema::of(state.library.registry(), component)?;
            if !schema.refers_to(&fields, ARCHETYPE_REF) {
                return None;
            }
            (text, span)
        }
        _ => return None,
    };
    // Inside the quotes.
    let inside = span.start + 1..span.end.saturating_sub(1).max(span.start + 1);
    let range = LspRange::new(
        index.lsp_position(inside.start),
        index.lsp_position(inside.end),
    );
    Some((current_name(state, name)?, range))
}

/// Whether a rename can start at the position, and what: the archetype name under it (its
/// range, the current name as placeholder), else the archetype whose file it is (an empty
/// range at the position); `None` anywhere else.
pub(super) fn prepare_rename(
    state: &mut State,
    params: TextDocumentPositionParams,
) -> Answer<Option<PrepareRenameResponse>> {
    if let Some((name, range)) = named_span_at(state, &params) {
        return Ok(Some(PrepareRenameResponse::RangeWithPlaceholder {
            range,
            placeholder: name,
        }));
    }
    Ok(own_name(state, &params).map(|name| {
        let here = LspRange::new(params.position, params.position);
        PrepareRenameResponse::RangeWithPlaceholder {
            range: here,
            placeholder: name,
        }
    }))
}

/// Where the child an `EntityRef` at the position names (`#gun`, `#turret/barrel`, `#..`) is
/// declared: its key under `children`, in the archetype's file or the first of its parents'
/// (or a child's archetype's) that declares it.
fn child_at(state: &State, position: &TextDocumentPositionParams) -> Option<Location> {
    let (path, kind) = state.file(&position.text_document.uri)?;
    let name = state.name_at(&path)?;
    let text = state.text(&path)?;
    let index = TextLines::new(&text);
    let cursor = cursor_at(&text, index.lsp_offset(position.position));
    let keys = cursor.keys();
    let (
        Place::Component {
            entity,
            component,
            fields,
        },
        Target::String {
            text: reference, ..
        },
    ) = (place_of(&keys, kind == FileKind::Scene), &cursor.target)
    else {
        return None;
    };
    let schema = ComponentSchema::of(state.library.registry(), component)?;
    if !schema.refers_to(&fields, ENTITY_REF) {
        return None;
    }
    let mut target: Vec<&str> = entity.clone();
    for step in reference
        .strip_prefix('#')?
        .split('/')
        .filter(|s| !s.is_empty())
    {
        match step {
            ".." => {
                target.pop()?;
            }
            child => target.push(child),
        }
    }
    if target.is_empty() {
        return file_location(state, &name);
    }
    let (file, span) = declared_child(state, &name, &target, 0)?;
    let text = state.text(&file)?;
    Some(Location::new(
        state.uri(&file)?,
        TextLines::new(&text).lsp_range(span),
    ))
}

/// The file and key span declaring the child at `path` of archetype `name`.
fn declared_child(
    state: &State,
    name: &str,
    path: &[&str],
    depth: usize,
) -> Option<(PathBuf, Range<usize>)> {
    // Archetypes nest and inherit only so deep; this bounds a cycle's walk too.
    if depth > 32 {
        return None;
    }
    let mut queue = std::collections::VecDeque::from([name.to_string()]);
    let mut seen = std::collections::HashSet::new();
    while let Some(candidate) = queue.pop_front() {
        if !seen.insert(candidate.clone()) || seen.len() > 256 {
            continue;
        }
        if let Some((_, parents)) = state.library.declared(&candidate) {
            queue.extend(parents.iter().cloned());
        }
        let Some(file) = state.library.file_of(&candidate) else {
            continue;
        };
        let Some(root) = state
            .text(file)
            .and_then(|text| raw_json::parse(&text).ok())
        else {
            continue;
        };
        let mut node = &root;
        for (i, step) in path.iter().enumerate() {
            let members = node
                .get(keys::CHILDREN)
                .and_then(Node::members)
                .unwrap_or_default();
            let Some(member) = members.iter().find(|member| member.key == *step) else {
                break;
            };
            if i + 1 == path.len() {
                return Some((file.to_path_buf(), member.key_span.clone()));
            }
            node = &member.value;
            let declares_next = (node.get(keys::CHILDREN).and_then(Node::members))
                .is_some_and(|members| members.iter().any(|m| m.key == path[i + 1]));
            if !declares_next {
                if let Some(archetype) = node.get(keys::ARCHETYPE).and_then(string_of) {
                    let found = declared_child(state, &archetype, &path[i + 1..], depth + 1);
                    if found.is_some() {
                        return found;
                    }
                }
            }
        }
    }
    None
}

/// The archetype whose file the position is in.
fn own_name(state: &State, position: &TextDocumentPositionParams) -> Option<String> {
    let (path, _) = state.file(&position.text_document.uri)?;
    state.name_at(&path)
}

/// The current name of an archetype named `name` (its name or a former one), if it has a
/// file.
fn current_name(state: &State, name: &str) -> Option<String> {
    let library = &state.library;
    let name = library.renamed(name).unwrap_or(name);
    library.file_of(name).map(|_| name.to_string())
}

/// Most symbols a `workspace/symbol` answer lists (the first ones by name).
const MAX_SYMBOLS: usize = 500;

/// Every archetype whose name holds the query's characters in order, ignoring letter case
/// (`gobch` finds `enemies/goblin_chief`), by name, at the start of its file: abstract ones as
/// interfaces, the others as classes, each with its directory as container.
pub(super) fn workspace_symbols(
    state: &mut State,
    params: WorkspaceSymbolParams,
) -> Answer<Option<WorkspaceSymbolResponse>> {
    let query: Vec<char> = params.query.to_lowercase().chars().collect();
    let library = &state.library;
    let symbols = (library.names())
        .filter(|name| holds_in_order(name, &query))
        .filter_map(|name| {
            let location = file_location(state, name)?;
            let is_abstract = library
                .declared(name)
                .is_some_and(|(is_abstract, _)| is_abstract);
            Some(WorkspaceSymbol {
                name: name.to_string(),
                kind: if is_abstract {
                    SymbolKind::INTERFACE
                } else {
                    SymbolKind::CLASS
                },
                tags: None,
                container_name: name.rsplit_once('/').map(|(dir, _)| dir.to_string()),
                location: OneOf::Left(location),
                data: None,
            })
        })
        .take(MAX_SYMBOLS)
        .collect();
    Ok(Some(WorkspaceSymbolResponse::Nested(symbols)))
}

/// Whether `name` holds the (lowercase) characters of `query` in order.
fn holds_in_order(name: &str, query: &[char]) -> bool {
    let mut wanted = query.iter().peekable();
    for c in name.chars().flat_map(char::to_lowercase) {
        if wanted.peek() == Some(&&c) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}

/// The start of an archetype's file.
fn file_location(state: &State, name: &str) -> Option<Location> {
    let uri = state.uri(state.library.file_of(name)?)?;
    Some(Location::new(
        uri,
        LspRange::new(Position::new(0, 0), Position::new(0, 0)),
    ))
}

/// Every file with places naming archetype `name`, and their spans, by file.
fn places_naming(state: &State, name: &str) -> BTreeMap<PathBuf, Vec<Range<usize>>> {
    let mut found: BTreeMap<PathBuf, Vec<Range<usize>>> = BTreeMap::new();
    let mut schemas = Schemas::new(state);
    let names_it = |written: &str| current_name(state, written).as_deref() == Some(name);
    let archetype_files = (state.library.names()).filter_map(|n| state.library.file_of(n));
    for file in archetype_files {
        let Some(root) = state
            .text(file)
            .and_then(|text| raw_json::parse(&text).ok())
        else {
            continue;
        };
        let spans = archetype_file_places(&root, &mut schemas, &names_it);
        if !spans.is_empty() {
            found.insert(file.to_path_buf(), spans);
        }
    }
    for file in scene_files(state) {
        let Some(root) = state
            .text(&file)
            .and_then(|text| raw_json::parse(&text).ok())
        else {
            continue;
        };
        let spans = scene_file_places(&root, &names_it);
        if !spans.is_empty() {
            found.insert(file, spans);
        }
    }
    found
}

/// The places in an archetype file naming an archetype `names_it` accepts (its `extends`,
/// its children's `archetype`, `ArchetypeRef` fields), in file order.
fn archetype_file_places(
    root: &Node,
    schemas: &mut Schemas<'_>,
    names_it: &dyn Fn(&str) -> bool,
) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    if let Some(extends) = root.get(keys::EXTENDS) {
        let items = match &extends.kind {
            NodeKind::Array(items) => items.iter().collect(),
            _ => vec![extends],
        };
        spans.extend(
            items
                .into_iter()
                .filter(|n| string_of(n).is_some_and(|s| names_it(&s)))
                .map(|n| n.span.clone()),
        );
    }
    child_places(root, names_it, &mut spans);
    component_places(root, schemas, ARCHETYPE_REF, names_it, &mut spans);
    spans.sort_by_key(|span| span.start);
    spans
}

/// The places in a scene file naming an archetype `names_it` accepts (the keys of its
/// `archetypes` table, its entities' `archetype`), in file order.
fn scene_file_places(root: &Node, names_it: &dyn Fn(&str) -> bool) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    for member in root
        .get(scene_keys::ARCHETYPES)
        .and_then(Node::members)
        .unwrap_or_default()
    {
        if names_it(&member.key) {
            spans.push(member.key_span.clone());
        }
    }
    scene_entity_places(root, names_it, &mut spans);
    spans.sort_by_key(|span| span.start);
    spans
}

/// A link from every name of an existing archetype in an archetype or scene file (where go to
/// definition goes) to the archetype's file, and from every `AssetPath` value in an archetype
/// file to the file it names under the assets root (see [`asset_file`]), in file order.
pub(super) fn document_links(
    state: &mut State,
    params: DocumentLinkParams,
) -> Answer<Option<Vec<DocumentLink>>> {
    let Some((_, kind, text)) = state.document(&params.text_document.uri) else {
        return Ok(None);
    };
    let Ok(root) = raw_json::parse(&text) else {
        return Ok(None);
    };
    let exists = |written: &str| current_name(state, written).is_some();
    let mut schemas = Schemas::new(state);
    let spans = match kind {
        FileKind::Scene => scene_file_places(&root, &exists),
        _ => archetype_file_places(&root, &mut schemas, &exists),
    };
    let index = TextLines::new(&text);
    let mut links: Vec<(usize, DocumentLink)> = spans
        .into_iter()
        .filter_map(|span| {
            let written: String = serde_json::from_str(text.get(span.clone())?).ok()?;
            let name = current_name(state, &written)?;
            let target = state.uri(state.library.file_of(&name)?)?;
            Some((
                span.start,
                DocumentLink {
                    range: index.lsp_range(span),
                    target: Some(target),
                    tooltip: Some(name),
                    data: None,
                },
            ))
        })
        .collect();
    if kind != FileKind::Scene {
        links.extend(asset_links(state, &mut schemas, &root, &text, &index));
    }
    links.sort_by_key(|(start, _)| *start);
    Ok(Some(links.into_iter().map(|(_, link)| link).collect()))
}

/// The links from the `AssetPath` values of an archetype file's components (its children's
/// too) to their files, each with the byte offset it starts at.
fn asset_links(
    state: &State,
    schemas: &mut Schemas<'_>,
    root: &Node,
    text: &str,
    index: &TextLines,
) -> Vec<(usize, DocumentLink)> {
    let Some(assets) = state.library.options().assets_root.as_deref() else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    let any = |_: &str| true;
    component_places(root, schemas, ASSET_PATH, &any, &mut spans);
    spans
        .into_iter()
        .filter_map(|span| {
            let written: String = serde_json::from_str(text.get(span.clone())?).ok()?;
            let target = state.uri(&asset_file(assets, &written)?)?;
            Some((
                span.start,
                DocumentLink {
                    range: index.lsp_range(span),
                    target: Some(target),
                    tooltip: Some(written),
                    data: None,
                },
            ))
        })
        .collect()
}

/// The file an asset path as written names under the assets root `assets`: `None` unless the
/// path has the form the engine reads (relative, `/` separators, no `..`: `AssetPath`'s own
/// check) and the file rule finds a regular file there, its real path inside the root. A path
/// to no file has no link; the loader reports it.
fn asset_file(assets: &Path, written: &str) -> Option<PathBuf> {
    let path: AssetPath = serde_json::from_value(serde_json::Value::from(written)).ok()?;
    real_path_inside(assets, &path.under(assets)).filter(|real| real.is_file())
}

/// The `archetype` places of a scene's entities that name an archetype `names_it` accepts.
fn scene_entity_places(
    root: &Node,
    names_it: &dyn Fn(&str) -> bool,
    spans: &mut Vec<Range<usize>>,
) {
    if let Some(NodeKind::Array(entities)) = root.get(scene_keys::ENTITIES).map(|n| &n.kind) {
        for entity in entities {
            if let Some(archetype) = entity.get(scene_keys::ARCHETYPE) {
                if string_of(archetype).is_some_and(|s| names_it(&s)) {
                    spans.push(archetype.span.clone());
                }
            }
        }
    }
}

/// What an archetype's file shows above its first line: how many archetypes extend it, how
/// many scene entities (in the scenes directory) are instances of it, and whether it is
/// abstract (`extended by 1 · placed in 2 scene entities · abstract`).
pub(super) fn code_lens(
    state: &mut State,
    params: CodeLensParams,
) -> Answer<Option<Vec<CodeLens>>> {
    let Some(name) = own_name(
        state,
        &TextDocumentPositionParams::new(params.text_document, Position::new(0, 0)),
    ) else {
        return Ok(None);
    };
    let library = &state.library;
    let Some((is_abstract, _)) = library.declared(&name) else {
        return Ok(None);
    };
    let extended = (library.names())
        .filter(|other| {
            (library.declared(other)).is_some_and(|(_, parents)| parents.contains(&name))
        })
        .count();
    let names_it = |written: &str| current_name(state, written).as_deref() == Some(name.as_str());
    let mut placed = Vec::new();
    for file in scene_files(state) {
        let root = state
            .text(&file)
            .and_then(|text| raw_json::parse(&text).ok());
        if let Some(root) = root {
            scene_entity_places(&root, &names_it, &mut placed);
        }
    }
    let entities = if placed.len() == 1 {
        "entity"
    } else {
        "entities"
    };
    let mut title = format!(
        "extended by {extended} · placed in {} scene {entities}",
        placed.len()
    );
    if is_abstract {
        title.push_str(" · abstract");
    }
    let top = LspRange::new(Position::new(0, 0), Position::new(0, 0));
    let command = Command::new(title, String::new(), None);
    Ok(Some(vec![CodeLens {
        range: top,
        command: Some(command),
        data: None,
    }]))
}

/// Component schemas by name, each looked up once.
struct Schemas<'s> {
    state: &'s State,
    by_name: HashMap<String, Option<ComponentSchema>>,
}

impl<'s> Schemas<'s> {
    fn new(state: &'s State) -> Self {
        Schemas {
            state,
            by_name: HashMap::new(),
        }
    }

    fn get(&mut self, component: &str) -> Option<&ComponentSchema> {
        let registry = self.state.library.registry();
        self.by_name
            .entry(component.to_string())
            .or_insert_with(|| ComponentSchema::of(registry, component))
            .as_ref()
    }
}

/// The strings of the engine's type `type_name` (`ArchetypeRef`, `AssetPath`) that `accepts`
/// takes, in the components of an entity and of its children (at any depth).
fn component_places(
    entity: &Node,
    schemas: &mut Schemas<'_>,
    type_name: &str,
    accepts: &dyn Fn(&str) -> bool,
    spans: &mut Vec<Range<usize>>,
) {
    for member in entity
        .get(keys::COMPONENTS)
        .and_then(Node::members)
        .unwrap_or_default()
    {
        if let Some(schema) = schemas.get(&member.key) {
            let mut fields = Vec::new();
            value_places(
                &member.value,
                schema,
                type_name,
                &mut fields,
                accepts,
                spans,
            );
        }
    }
    for member in entity
        .get(keys::CHILDREN)
        .and_then(Node::members)
        .unwrap_or_default()
    {
        component_places(&member.value, schemas, type_name, accepts, spans);
    }
}

/// The strings of the engine's type `type_name` that `accepts` takes, in a component's value
/// (`fields`: the keys from the component's value to `node`, `None` for an array index).
fn value_places<'n>(
    node: &'n Node,
    schema: &ComponentSchema,
    type_name: &str,
    fields: &mut Vec<Option<&'n str>>,
    accepts: &dyn Fn(&str) -> bool,
    spans: &mut Vec<Range<usize>>,
) {
    match &node.kind {
        NodeKind::Scalar(_) => {
            if string_of(node).is_some_and(|s| accepts(&s)) && schema.refers_to(fields, type_name) {
                spans.push(node.span.clone());
            }
        }
        NodeKind::Object(members) => {
            for member in members {
                fields.push(Some(&member.key));
                value_places(&member.value, schema, type_name, fields, accepts, spans);
                fields.pop();
            }
        }
        NodeKind::Array(items) => {
            for item in items {
                fields.push(None);
                value_places(item, schema, type_name, fields, accepts, spans);
                fields.pop();
            }
        }
    }
}

/// The `archetype` places of the children of an entity (at any depth).
fn child_places(entity: &Node, names_it: &dyn Fn(&str) -> bool, spans: &mut Vec<Range<usize>>) {
    for member in entity
        .get(keys::CHILDREN)
        .and_then(Node::members)
        .unwrap_or_default()
    {
        if let Some(archetype) = member.value.get(keys::ARCHETYPE) {
            if string_of(archetype).is_some_and(|s| names_it(&s)) {
                spans.push(archetype.span.clone());
            }
        }
        child_places(&member.value, names_it, spans);
    }
}

/// The scene files: under the scenes directory, and the open ones.
fn scene_files(state: &State) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match state.scenes.is_dir() {
        true => scene::scene_files(&state.scenes).unwrap_or_default(),
        false => Vec::new(),
    };
    files.retain(|file| is_scene(file));
    let files = files
        .into_iter()
        .map(|file| std::path::absolute(&file).unwrap_or(file));
    let mut files: Vec<PathBuf> = files.collect();
    for (path, _) in state.documents.iter() {
        if is_scene(path) && !files.contains(path) {
            files.push(path.clone());
        }
    }
    files
}

/// The string a scalar node holds.
fn string_of(node: &Node) -> Option<String> {
    match &node.kind {
        NodeKind::Scalar(text) if text.starts_with('"') => serde_json::from_str(text).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::keep_former_name;

    /// The text with the edit applied.
    fn kept(text: &str) -> Option<String> {
        let (span, new_text) = keep_former_name(text, "goblin")?;
        Some(format!(
            "{}{new_text}{}",
            &text[..span.start],
            &text[span.end..]
        ))
    }

    #[test]
    fn a_renamed_archetype_keeps_its_old_name() {
        assert_eq!(
            kept("{\n  \"extends\": \"base\"\n}\n").as_deref(),
            Some("{\n  \"formerly\": [\"goblin\"],\n  \"extends\": \"base\"\n}\n")
        );
        assert_eq!(
            kept("{\"extends\": \"base\"}").as_deref(),
            Some("{\"formerly\": [\"goblin\"], \"extends\": \"base\"}")
        );
        assert_eq!(
            kept("{}").as_deref(),
            Some("{ \"formerly\": [\"goblin\"] }")
        );
        assert_eq!(
            kept("{ \"formerly\": \"orc\" }").as_deref(),
            Some("{ \"formerly\": [\"orc\", \"goblin\"] }")
        );
        assert_eq!(
            kept("{ \"formerly\": [\"orc\"] }").as_deref(),
            Some("{ \"formerly\": [\"orc\", \"goblin\"] }")
        );
        assert_eq!(
            kept("{ \"formerly\": [] }").as_deref(),
            Some("{ \"formerly\": [\"goblin\"] }")
        );
        assert_eq!(kept("{ \"formerly\": [\"goblin\"] }"), None);
        assert_eq!(kept("[1, 2]"), None);
        assert_eq!(kept("{ \"extends\": "), None);
    }
}
