//! Pull diagnostics, for a client that asks for them (`textDocument.diagnostic`) rather than
//! being sent them: `textDocument/diagnostic` and `workspace/diagnostic` answered from what the
//! server would have published (the same lists, kept up to date the same way), each file's
//! report with a result ID, so a report the client already has is answered `unchanged`.
//!
//! A workspace pull is a long poll: the first is answered at once with every file that has
//! diagnostics; a later one, whose previous result IDs are all still current, is held until a
//! file's diagnostics change (or the client cancels it, or the server shuts down).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use lsp_server::RequestId;
use lsp_types::{
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult,
    FullDocumentDiagnosticReport, PreviousResultId, RelatedFullDocumentDiagnosticReport,
    RelatedUnchangedDocumentDiagnosticReport, UnchangedDocumentDiagnosticReport,
    WorkspaceDiagnosticReport, WorkspaceDocumentDiagnosticReport,
    WorkspaceFullDocumentDiagnosticReport,
};

use super::diagnostics::Published;
use super::documents::path_of;
use super::server::{Answer, State};

/// The result ID of a file's diagnostics: the same for the same list (within a session).
pub(super) fn result_id(items: &[lsp_types::Diagnostic]) -> String {
    let mut hasher = DefaultHasher::new();
    // Serialized, as the client gets it: a list with the same text has the same ID.
    serde_json::to_string(items)
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// `textDocument/diagnostic`: the file's diagnostics, or `unchanged` when the client's previous
/// result ID is still theirs.
pub(super) fn document(
    state: &State,
    published: &Published,
    params: DocumentDiagnosticParams,
) -> Answer<DocumentDiagnosticReportResult> {
    let uri = &params.text_document.uri;
    let path = state
        .file(uri)
        .map(|(path, _)| path)
        .or_else(|| path_of(uri));
    let items = path.as_deref().map_or(&[][..], |path| published.of(path));
    let id = result_id(items);
    let report = if params.previous_result_id.as_deref() == Some(id.as_str()) {
        DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
            related_documents: None,
            unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                result_id: id,
            },
        })
    } else {
        DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport {
                result_id: Some(id),
                items: items.to_vec(),
            },
        })
    };
    Ok(DocumentDiagnosticReportResult::Report(report))
}

/// A `workspace/diagnostic` request not answered yet: nothing had changed since the client's
/// previous results.
pub(super) struct HeldPull {
    pub id: RequestId,
    /// The client's result ID of each file it has a report of.
    previous: HashMap<PathBuf, String>,
}

impl HeldPull {
    pub fn new(id: RequestId, state: &State, previous: Vec<PreviousResultId>) -> Self {
        let previous = (previous.into_iter())
            .filter_map(|known| {
                let path = state.file(&known.uri).map(|(path, _)| path)?;
                Some((path, known.value))
            })
            .collect();
        HeldPull { id, previous }
    }

    /// The report of every file whose diagnostics are not what the client has: those with
    /// diagnostics it has no current report of, and those it has a report of whose diagnostics
    /// went away (an empty list), in path order. `changed`: only these files can differ (the
    /// pull was held with nothing to report, and these changed since), so only they are looked
    /// at: a publish costs what it changed, not every file with diagnostics.
    pub fn report(
        &self,
        state: &State,
        published: &Published,
        changed: Option<&[PathBuf]>,
    ) -> WorkspaceDiagnosticReport {
        let mut files: Vec<(PathBuf, &[lsp_types::Diagnostic])> = match changed {
            Some(changed) => (changed.iter())
                .map(|path| (path.clone(), published.of(path)))
                .collect(),
            None => {
                let mut files: Vec<_> = (published.files())
                    .map(|(path, items)| (path.clone(), items))
                    .collect();
                for path in self.previous.keys() {
                    if published.of(path).is_empty() {
                        files.push((path.clone(), &[][..]));
                    }
                }
                files
            }
        };
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut items = Vec::new();
        for (path, found) in files {
            let id = result_id(found);
            if self.previous.get(&path) == Some(&id) {
                continue;
            }
            let Some(uri) = state.uri(&path) else {
                continue;
            };
            let version = (state.documents.get(&path)).map(|document| i64::from(document.version));
            let full = WorkspaceFullDocumentDiagnosticReport {
                uri,
                version,
                full_document_diagnostic_report: FullDocumentDiagnosticReport {
                    result_id: Some(id),
                    items: found.to_vec(),
                },
            };
            items.push(WorkspaceDocumentDiagnosticReport::Full(full));
        }
        WorkspaceDiagnosticReport { items }
    }
}
