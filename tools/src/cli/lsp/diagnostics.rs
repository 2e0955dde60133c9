//! The library's diagnostics and the open scenes' problems in the protocol's form, and the
//! bookkeeping of what was published where.
//!
//! A diagnostic keeps `validate`'s code, message and place (its start, and its end as
//! `--format json` gives it); its suggestion is related information at its own place
//! (`did you mean `Health`?`, as `validate` writes it after `help:`) and the `data` a quick
//! fix reads; its other places (an inheritance cycle's links) are related information too, and
//! a place in another file gets the problem too, so each file involved shows it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use archetype_engine::tooling::TextLines;
use archetype_engine::{ArchetypeLibrary, Diagnostic, Position, Related, Severity};
use lsp_types::notification::{Notification as _, PublishDiagnostics};
use lsp_types::{
    CodeDescription, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    Range, Uri,
};
use serde::Serialize;
use serde_json::json;

use super::super::scene_check;
use super::super::validate::SourceTexts;
use super::documents::{path_of, uri_of, ProtocolPlaces};

/// What the server says its diagnostics come from.
pub(super) const SOURCE: &str = "archetool";

/// The protocol's form of `diagnostic`, its places read in `sources`.
pub(super) fn to_lsp(diagnostic: &Diagnostic, sources: &SourceTexts<'_>) -> lsp_types::Diagnostic {
    let range = range_of(
        diagnostic
            .file
            .as_deref()
            .and_then(|file| sources.lines_of(file)),
        diagnostic.position,
        sources.span_of(diagnostic).map(|(_, span)| span.end),
    );
    let mut related = Vec::new();
    if let Some(help) = diagnostic.help() {
        if let Some(uri) = diagnostic.file.as_deref().and_then(uri_of) {
            related.push(DiagnosticRelatedInformation {
                location: Location::new(uri, range),
                message: help,
            });
        }
    }
    for place in &diagnostic.related {
        let Some(uri) = uri_of(&place.file) else {
            continue;
        };
        related.push(DiagnosticRelatedInformation {
            location: Location::new(uri, related_range(place, sources)),
            message: place.message.clone(),
        });
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(match diagnostic.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            // A note, and any severity a later engine adds: information.
            _ => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(diagnostic.code.as_str().to_string())),
        // The code's entry in the guide, which editors link from the code.
        code_description: (diagnostic.code.help_uri().parse::<Uri>().ok())
            .map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_string()),
        message: diagnostic.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        data: (diagnostic.suggestion.as_ref())
            .map(|suggestion| json!({ "suggestion": suggestion })),
        ..lsp_types::Diagnostic::default()
    }
}

/// The protocol range of a place: from its start (a line and a column in characters) to the
/// end of its span (a byte offset), in `lines`, the text of its file, when it is known.
/// Without the text the start is taken as it is and the range is empty.
fn range_of(lines: Option<&TextLines<'_>>, start: Option<Position>, end: Option<usize>) -> Range {
    let Some(lines) = lines else {
        let at = |position: Position| {
            let count = |n: usize| u32::try_from(n.saturating_sub(1)).unwrap_or(u32::MAX);
            lsp_types::Position::new(count(position.line), count(position.column))
        };
        let start = start.map(at).unwrap_or_default();
        return Range::new(start, start);
    };
    let start =
        (start.map(|position| lines.lsp_position(lines.offset(position)))).unwrap_or_default();
    let end = end.map(|offset| lines.lsp_position(offset));
    Range::new(start, end.filter(|end| *end >= start).unwrap_or(start))
}

/// The protocol range of a related place, in its file's text.
fn related_range(place: &Related, sources: &SourceTexts<'_>) -> Range {
    range_of(
        sources.lines_of(&place.file),
        place.position,
        sources.related_span(place).map(|(_, span)| span.end),
    )
}

/// The library's diagnostics by file.
pub(super) fn of_library(
    library: &ArchetypeLibrary,
) -> HashMap<PathBuf, Vec<lsp_types::Diagnostic>> {
    let sources = SourceTexts::named_in(library, library.diagnostics());
    let mut by_file: HashMap<PathBuf, Vec<lsp_types::Diagnostic>> = HashMap::new();
    for diagnostic in library.diagnostics() {
        // A problem with no file (none the loader reports today) has nowhere to be shown.
        let Some(file) = &diagnostic.file else {
            continue;
        };
        let shown = to_lsp(diagnostic, &sources);
        for place in diagnostic
            .related
            .iter()
            .filter(|place| place.file != *file)
        {
            let at = related_range(place, &sources);
            by_file
                .entry(place.file.clone())
                .or_default()
                .push(elsewhere(&shown, at, &place.message));
        }
        by_file.entry(file.clone()).or_default().push(shown);
    }
    by_file
}

/// A problem shown at one of its places in another file (the second archetype of an
/// inheritance cycle): the same code, severity and message, at that place, with the place's
/// own label and every place of the problem as related information.
fn elsewhere(
    diagnostic: &lsp_types::Diagnostic,
    range: Range,
    label: &str,
) -> lsp_types::Diagnostic {
    let mut shown = diagnostic.clone();
    shown.range = range;
    shown.message = format!("{} ({label})", diagnostic.message);
    shown.data = None;
    shown
}

/// The library places problems in a file's text without its byte-order mark; an editor that
/// keeps the mark in the buffer it sends counts it as the first line's first character, so
/// first-line places in such a buffer (`file`'s) move one character right.
pub(super) fn count_bom(file: &Path, buffer: &str, found: &mut [lsp_types::Diagnostic]) {
    if !buffer.starts_with('\u{feff}') {
        return;
    }
    let shift = |range: &mut Range| {
        for position in [&mut range.start, &mut range.end] {
            if position.line == 0 {
                position.character += 1;
            }
        }
    };
    for diagnostic in found {
        shift(&mut diagnostic.range);
        for related in diagnostic.related_information.iter_mut().flatten() {
            if path_of(&related.location.uri).as_deref() == Some(file) {
                shift(&mut related.location.range);
            }
        }
    }
}

/// What `scene check` finds in a scene's text (a buffer's), loaded against `library`.
pub(super) fn of_scene(
    file: &Path,
    text: &str,
    library: &ArchetypeLibrary,
) -> Vec<lsp_types::Diagnostic> {
    let shown = text.strip_prefix('\u{feff}').unwrap_or(text);
    let sources = SourceTexts::one(file, shown);
    scene_check::problems_in_text(text, file, library)
        .iter()
        .map(|error| {
            let mut diagnostic = error.diagnostic().clone();
            diagnostic.file = Some(file.to_path_buf());
            to_lsp(&diagnostic, &sources)
        })
        .collect()
}

/// What was last published for each file, so only changes are sent.
#[derive(Default)]
pub(super) struct Published {
    by_file: HashMap<PathBuf, Vec<lsp_types::Diagnostic>>,
}

impl Published {
    /// Takes `now` as what is published, and returns the files whose diagnostics it changes
    /// (a file that has none any more among them), sorted: each is sent
    /// [`of`](Self::of) it.
    pub fn update(
        &mut self,
        mut now: HashMap<PathBuf, Vec<lsp_types::Diagnostic>>,
    ) -> Vec<PathBuf> {
        let mut changed: Vec<PathBuf> = (self.by_file.keys())
            .filter(|file| !now.contains_key(*file))
            .cloned()
            .collect();
        for (file, diagnostics) in &now {
            if self.by_file.get(file) != Some(diagnostics) {
                changed.push(file.clone());
            }
        }
        now.retain(|_, diagnostics| !diagnostics.is_empty());
        self.by_file = now;
        changed.sort();
        changed
    }

    /// The diagnostics published for `file`.
    pub fn of(&self, file: &Path) -> &[lsp_types::Diagnostic] {
        self.by_file.get(file).map_or(&[], Vec::as_slice)
    }
}

/// A `textDocument/publishDiagnostics` notification, borrowing what it sends: serialized
/// straight from the published lists, which are neither copied nor made a `serde_json::Value`
/// first.
#[derive(Serialize)]
pub(super) struct Publish<'a> {
    method: &'static str,
    params: PublishParams<'a>,
}

/// [`Publish`]'s parameters, as `lsp_types::PublishDiagnosticsParams` writes them.
#[derive(Serialize)]
struct PublishParams<'a> {
    uri: &'a Uri,
    diagnostics: &'a [lsp_types::Diagnostic],
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i32>,
}

impl<'a> Publish<'a> {
    /// The diagnostics of the file at `uri` (an open buffer's `version`).
    pub fn new(
        uri: &'a Uri,
        diagnostics: &'a [lsp_types::Diagnostic],
        version: Option<i32>,
    ) -> Self {
        Publish {
            method: PublishDiagnostics::METHOD,
            params: PublishParams {
                uri,
                diagnostics,
                version,
            },
        }
    }
}
