//! Edits to one file: formatting (`archetool fmt`'s layout, by its own function) and the
//! quick fixes of diagnostics that carry a suggestion.

use std::collections::HashMap;

use archetype_engine::tooling::TextLines;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    DocumentFormattingParams, TextEdit, WorkspaceEdit,
};

use super::super::fmt::format_text;
use super::diagnostics::SOURCE;
use super::documents::{FileKind, ProtocolPlaces};
use super::server::{Answer, State};

/// The edit that gives an archetype file its canonical layout: the whole text replaced, or
/// no edit if it has it. `None` for a file that is not JSON (its diagnostics say why) and for
/// other files.
pub(super) fn formatting(
    state: &mut State,
    params: DocumentFormattingParams,
) -> Answer<Option<Vec<TextEdit>>> {
    let Some((path, FileKind::Archetype(_))) = state.file(&params.text_document.uri) else {
        return Ok(None);
    };
    let Some(text) = state.text(&path) else {
        return Ok(None);
    };
    let Ok(formatted) = format_text(&text) else {
        return Ok(None);
    };
    if formatted == *text {
        return Ok(Some(Vec::new()));
    }
    let whole = TextLines::new(&text).lsp_whole();
    Ok(Some(vec![TextEdit::new(whole, formatted)]))
}

/// A quick fix for each of the server's diagnostics in the request that has a suggestion:
/// its place replaced by the suggestion (quoted where the place is a string).
pub(super) fn code_actions(
    state: &mut State,
    params: CodeActionParams,
) -> Answer<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    let Some((_, _, text)) = state.document(&uri) else {
        return Ok(None);
    };
    let index = TextLines::new(&text);
    let mut actions = Vec::new();
    for diagnostic in params.context.diagnostics {
        if diagnostic.source.as_deref() != Some(SOURCE) {
            continue;
        }
        let Some(suggestion) = (diagnostic.data.as_ref())
            .and_then(|data| data.get("suggestion"))
            .and_then(|suggestion| suggestion.as_str())
        else {
            continue;
        };
        let start = index.lsp_offset(diagnostic.range.start);
        let quoted = text.get(start..).is_some_and(|rest| rest.starts_with('"'));
        let replacement = match quoted {
            true => serde_json::Value::String(suggestion.to_string()).to_string(),
            false => suggestion.to_string(),
        };
        let edit = TextEdit::new(diagnostic.range, replacement);
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Replace with `{suggestion}`"),
            kind: Some(CodeActionKind::QUICKFIX),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                ..WorkspaceEdit::default()
            }),
            is_preferred: Some(true),
            diagnostics: Some(vec![diagnostic]),
            ..CodeAction::default()
        }));
    }
    Ok(Some(actions))
}
