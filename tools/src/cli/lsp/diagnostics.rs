//! The library's diagnostics and the open scenes' problems in the protocol's form, and the
//! bookkeeping of what was published where.
//!
//! A diagnostic keeps `validate`'s code, message and place (its start, and its end as
//! `--format json` gives it); its suggestion is related information at its own place
//! (`did you mean `Health`?`, as `validate` writes it after `help:`) and the `data` a quick
//! fix reads; its other places (an inheritance cycle's links) are related information too, and
//! a place in another file gets the problem too, so each file involved shows it.

use std::collections::{BTreeSet, HashMap, HashSet};
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
use super::server::archetype_name;

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

/// The library's diagnostics in the protocol's form, kept file by file between publishes: a
/// publish converts only the files whose diagnostics changed, so an edit costs what it changed
/// (plus a comparison per file that has diagnostics), not the library's size.
#[derive(Default)]
pub(super) struct LibraryDiagnostics {
    /// Each file with diagnostics: what the library says of it, and what that shows, each
    /// with the file it is shown in (its own, or another one a related place is in).
    groups: HashMap<PathBuf, Group>,
    /// For each file, the files whose diagnostics show something in it (itself among them).
    shown_in: HashMap<PathBuf, BTreeSet<PathBuf>>,
}

/// One file's diagnostics, as the library gave them and as shown.
struct Group {
    found: Vec<Diagnostic>,
    shown: Vec<(PathBuf, lsp_types::Diagnostic)>,
}

impl LibraryDiagnostics {
    /// Takes the library's diagnostics as they are now. Returns each file whose shown
    /// diagnostics may have changed, with its whole new list.
    pub fn update(
        &mut self,
        library: &ArchetypeLibrary,
    ) -> HashMap<PathBuf, Vec<lsp_types::Diagnostic>> {
        let mut touched: BTreeSet<PathBuf> = BTreeSet::new();
        let mut present: HashSet<&Path> = HashSet::new();
        // Sorted by file: each file's diagnostics are one run.
        for run in library
            .diagnostics()
            .chunk_by(|a, b| same_file(a.file.as_deref(), b.file.as_deref()))
        {
            // A problem with no file (none the loader reports today) has nowhere to be shown.
            let Some(file) = run[0].file.as_deref() else {
                continue;
            };
            present.insert(file);
            if self
                .groups
                .get(file)
                .is_some_and(|group| group.found == run)
            {
                continue;
            }
            let sources = texts_named_in(library, run);
            let shown = shown_of(run, file, &sources);
            self.set(
                file,
                Some(Group {
                    found: run.to_vec(),
                    shown,
                }),
                &mut touched,
            );
        }
        let gone: Vec<PathBuf> = (self.groups.keys())
            .filter(|file| !present.contains(file.as_path()))
            .cloned()
            .collect();
        for file in gone {
            self.set(&file, None, &mut touched);
        }
        touched
            .into_iter()
            .map(|file| {
                let list = self.list_for(&file);
                (file, list)
            })
            .collect()
    }

    /// What is shown in `file`, in the library's order.
    pub fn list_for(&self, file: &Path) -> Vec<lsp_types::Diagnostic> {
        let Some(sources) = self.shown_in.get(file) else {
            return Vec::new();
        };
        (sources.iter())
            .filter_map(|source| self.groups.get(source))
            .flat_map(|group| &group.shown)
            .filter(|(shown_in, _)| shown_in == file)
            .map(|(_, shown)| shown.clone())
            .collect()
    }

    /// Sets the group of `file` (`None`: it has no diagnostics now), adding to `touched` every
    /// file it showed something in or now does.
    fn set(&mut self, file: &Path, group: Option<Group>, touched: &mut BTreeSet<PathBuf>) {
        let old = match group {
            Some(group) => self.groups.insert(file.to_path_buf(), group),
            None => self.groups.remove(file),
        };
        for (target, _) in old.iter().flat_map(|old| &old.shown) {
            if let Some(sources) = self.shown_in.get_mut(target) {
                sources.remove(file);
                if sources.is_empty() {
                    self.shown_in.remove(target);
                }
            }
            touched.insert(target.clone());
        }
        let new = self
            .groups
            .get(file)
            .into_iter()
            .flat_map(|group| &group.shown);
        for (target, _) in new {
            (self.shown_in.entry(target.clone()).or_default()).insert(file.to_path_buf());
            touched.insert(target.clone());
        }
        touched.insert(file.to_path_buf());
    }
}

/// The text of each archetype file `found` names (at their own places or related ones):
/// costs what the diagnostics name, not the library's size.
fn texts_named_in<'a>(library: &'a ArchetypeLibrary, found: &[Diagnostic]) -> SourceTexts<'a> {
    let files = found.iter().flat_map(|diagnostic| {
        let related = diagnostic.related.iter().map(|place| place.file.as_path());
        diagnostic.file.as_deref().into_iter().chain(related)
    });
    let names: BTreeSet<String> = files
        .filter_map(|file| archetype_name(file.strip_prefix(library.root()).ok()?))
        .collect();
    SourceTexts::of_names(library, names.iter().map(String::as_str))
}

/// Whether two diagnostics are in the same file (compared as bytes, not path components).
fn same_file(a: Option<&Path>, b: Option<&Path>) -> bool {
    a.map(Path::as_os_str) == b.map(Path::as_os_str)
}

/// What the diagnostics of `file` show, each with the file it is shown in: each one in `file`,
/// and at each of its places in another file.
fn shown_of(
    found: &[Diagnostic],
    file: &Path,
    sources: &SourceTexts<'_>,
) -> Vec<(PathBuf, lsp_types::Diagnostic)> {
    let mut shown = Vec::with_capacity(found.len());
    for diagnostic in found {
        let own = to_lsp(diagnostic, sources);
        for place in (diagnostic.related.iter()).filter(|place| place.file != *file) {
            let at = related_range(place, sources);
            shown.push((place.file.clone(), elsewhere(&own, at, &place.message)));
        }
        shown.push((file.to_path_buf(), own));
    }
    shown
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

/// What was last published for each file, so only changes are sent (for a client that pulls
/// diagnostics, what it is answered).
#[derive(Default)]
pub(super) struct Published {
    by_file: HashMap<PathBuf, Vec<lsp_types::Diagnostic>>,
}

impl Published {
    /// Takes each list of `changes` as what is published for its file (the other files keep
    /// theirs), and returns the files whose published diagnostics it changes, sorted: each is
    /// sent [`of`](Self::of) it.
    pub fn update(
        &mut self,
        changes: HashMap<PathBuf, Vec<lsp_types::Diagnostic>>,
    ) -> Vec<PathBuf> {
        let mut changed = Vec::new();
        for (file, diagnostics) in changes {
            if self.of(&file) == diagnostics.as_slice() {
                continue;
            }
            if diagnostics.is_empty() {
                self.by_file.remove(&file);
            } else {
                self.by_file.insert(file.clone(), diagnostics);
            }
            changed.push(file);
        }
        changed.sort();
        changed
    }

    /// The diagnostics published for `file`.
    pub fn of(&self, file: &Path) -> &[lsp_types::Diagnostic] {
        self.by_file.get(file).map_or(&[], Vec::as_slice)
    }

    /// Every file with diagnostics, and them, in no order.
    pub fn files(&self) -> impl Iterator<Item = (&PathBuf, &[lsp_types::Diagnostic])> {
        (self.by_file.iter()).map(|(file, found)| (file, found.as_slice()))
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
