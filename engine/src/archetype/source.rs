//! One archetype file: reading it within limits, and placing its problems at
//! `file:line:column`. Which files under the root are archetype files is
//! [`archetype_tree`](crate::archetype::tree)'s rule.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::archetype::doc_summary::DocSummary;
use crate::archetype::file::{parse_doc, ArchetypeDoc, DocProblem};
use crate::archetype::tree::FoundFile;
use crate::component::ComponentRegistry;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::fs::{read_regular_file, read_typed_file, FileKind, FileTooLarge, NotRegularFile};
use crate::json::FieldPath;
use crate::json::{parse_json, Position, SourceText, TextError};
use crate::limits::Limits;

/// One archetype file as last read: its text, its parsed content, and its own problems.
#[derive(Clone)]
pub(super) struct SourceFile {
    /// The path shown in messages: the root joined with the relative path.
    pub file: PathBuf,
    /// Where the file was read from: its real path (symbolic links resolved, inside the root).
    /// `None` for a text given without a file ([`from_bytes`](Self::from_bytes)).
    pub real: Option<PathBuf>,
    /// Whether the file is reached through a symbolic link (so its target may change under
    /// another name).
    pub linked: bool,
    /// The text, when it could be read as UTF-8.
    pub text: Option<Arc<SourceText>>,
    /// What is kept of the parsed file, when it is JSON (possibly with problems). The full
    /// document is parsed again from `text` when it is needed ([`written_doc`](Self::written_doc)):
    /// kept, it would hold every component value of every archetype twice over.
    pub summary: Option<Box<DocSummary>>,
    /// The parsed file, from the read until the end of the rebuild that installs it (so that
    /// rebuild does not parse it again).
    pub fresh: Option<Arc<ArchetypeDoc>>,
    /// Problems found in the file on its own.
    pub problems: Vec<Diagnostic>,
    /// Problems that depend on the other files' names: old names written, former names that
    /// clash.
    pub name_problems: Vec<Diagnostic>,
}

impl SourceFile {
    /// Whether the file itself has errors (its archetype cannot be used).
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Diagnostic::is_error)
            || self.name_problems.iter().any(Diagnostic::is_error)
    }

    /// The parsed file as written (old archetype names not replaced): the one read last, or
    /// the kept text parsed again (as it was read: same registry, same limits, so the same
    /// document). `None` when the file is not JSON.
    pub fn written_doc(
        &self,
        registry: &ComponentRegistry,
        limits: &Limits,
    ) -> Option<Arc<ArchetypeDoc>> {
        self.summary.as_ref()?;
        if let Some(doc) = &self.fresh {
            return Some(doc.clone());
        }
        let text = self.text.as_ref()?;
        let mut value = parse_json(text, limits.max_depth).ok()?;
        let (doc, _) = parse_doc(&mut value, text, registry, limits.max_children_depth);
        Some(Arc::new(doc))
    }

    /// Reads an archetype from `bytes` (the content of `file`).
    pub fn from_bytes(
        file: PathBuf,
        name: &str,
        bytes: Vec<u8>,
        registry: &ComponentRegistry,
        limits: &Limits,
    ) -> SourceFile {
        let mut source = SourceFile::unread(file);
        let text = match SourceText::from_bytes(bytes) {
            Ok(text) => Arc::new(text),
            Err(error) => {
                source
                    .problems
                    .push(source.text_problem(DiagnosticCode::Encoding, &error, name));
                return source;
            }
        };
        source.text = Some(text.clone());
        let mut value = match parse_json(&text, limits.max_depth) {
            Ok(value) => value,
            Err(error) => {
                let code = DiagnosticCode::from(error.kind);
                source
                    .problems
                    .push(source.text_problem(code, &error, name));
                return source;
            }
        };
        let (doc, problems) = parse_doc(&mut value, &text, registry, limits.max_children_depth);
        for problem in problems {
            let diagnostic = source.place(problem, name);
            source.problems.push(diagnostic);
        }
        source.summary = Some(Box::new(DocSummary::of(&doc)));
        source.fresh = Some(Arc::new(doc));
        source
    }

    /// Reads an archetype from `text` given for `file` without reading the file (an editor's
    /// unsaved buffer, a generated file): as [`from_bytes`](Self::from_bytes), held to the size
    /// limit a file read from disk is (a text over it is refused as that file would be).
    pub fn from_text(
        file: PathBuf,
        name: &str,
        text: &str,
        registry: &ComponentRegistry,
        limits: &Limits,
    ) -> SourceFile {
        let size = text.len() as u64;
        if size > limits.max_file_bytes {
            let too_large = FileTooLarge {
                size,
                limit: limits.max_file_bytes,
            };
            let problem = Diagnostic::error(DiagnosticCode::TooLarge, too_large.to_string());
            return SourceFile::refused(file, name, problem);
        }
        SourceFile::from_bytes(file, name, text.as_bytes().to_vec(), registry, limits)
    }

    /// An archetype of `file` with nothing read yet, and no problems.
    fn unread(file: PathBuf) -> SourceFile {
        SourceFile {
            file,
            real: None,
            linked: false,
            text: None,
            summary: None,
            fresh: None,
            problems: Vec::new(),
            name_problems: Vec::new(),
        }
    }

    /// An archetype of `file` that is not read, for `problem`.
    fn refused(file: PathBuf, name: &str, problem: Diagnostic) -> SourceFile {
        let mut source = SourceFile::unread(file);
        let problem = problem.with_file(source.file.clone()).with_archetype(name);
        source.problems.push(problem);
        source
    }

    /// Reads the file the rule found (whose type it checked: a special file is refused
    /// without being opened). Anything but a regular file within the size limit is refused;
    /// problems reading it become the source's problems.
    pub fn read(
        found: &FoundFile,
        name: &str,
        registry: &ComponentRegistry,
        limits: &Limits,
    ) -> SourceFile {
        let read = match found.special {
            Some(kind) => Err(NotRegularFile { kind }.into()),
            None => read_typed_file(&found.real, limits.max_file_bytes),
        };
        let file = found.file.clone();
        let mut source = match read {
            Ok(bytes) => SourceFile::from_bytes(file, name, bytes, registry, limits),
            Err(error) => SourceFile::refused(file, name, read_problem(&error)),
        };
        source.real = Some(found.real.clone());
        source.linked = found.linked;
        source
    }

    fn text_problem(&self, code: DiagnosticCode, error: &TextError, name: &str) -> Diagnostic {
        let mut diagnostic = Diagnostic::error(code, error.message.clone())
            .with_file(self.file.clone())
            .with_archetype(name);
        diagnostic.position = Some(error.position);
        diagnostic.span = Some(error.offset..error.offset);
        diagnostic
    }

    /// Turns a problem placed by its JSON path into a diagnostic placed at `file:line:column`.
    pub fn place(&self, problem: DocProblem, name: &str) -> Diagnostic {
        let mut diagnostic = problem
            .diagnostic
            .with_file(self.file.clone())
            .with_archetype(name);
        self.locate_into(&mut diagnostic, &problem.path, problem.at_key);
        diagnostic
    }

    /// Sets the position and span of `diagnostic` to the place at `path` in this file. The
    /// first call indexes the file, so placing all of its problems costs one pass over it.
    pub fn locate_into(&self, diagnostic: &mut Diagnostic, path: &FieldPath, at_key: bool) {
        if let Some((position, span)) = self.locate(path, at_key) {
            diagnostic.position = Some(position);
            diagnostic.span = Some(span);
        }
    }

    /// The position and span of the place at `path` in this file (its key, when `at_key` and
    /// the whole path is found), or of as much of the path as is found; `None` without text.
    pub fn locate(&self, path: &FieldPath, at_key: bool) -> Option<(Position, Range<usize>)> {
        let text = self.text.as_ref()?;
        let located = text.locate(path.segments())?;
        let full = located.matched == path.segments().len();
        let span = match (&located.key, at_key && full) {
            (Some(key), true) => key.clone(),
            _ => located.value.clone(),
        };
        Some((text.position(span.start), span))
    }
}

/// Reads at most `limit` bytes of a regular file ([`read_regular_file`]); a larger file is an
/// error (not a truncated read), and so is anything but a regular file.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, Box<Diagnostic>> {
    read_regular_file(path, limit).map_err(|error| Box::new(read_problem(&error)))
}

/// The diagnostic for an error of [`read_regular_file`], by the error's type.
fn read_problem(error: &std::io::Error) -> Diagnostic {
    let inner = error.get_ref();
    if let Some(too_large) = inner.and_then(|e| e.downcast_ref::<FileTooLarge>()) {
        return Diagnostic::error(DiagnosticCode::TooLarge, too_large.to_string());
    }
    match inner.and_then(|e| e.downcast_ref::<NotRegularFile>()) {
        Some(NotRegularFile {
            kind: FileKind::Directory,
        }) => Diagnostic::error(
            DiagnosticCode::Io,
            "is a directory, not a file; rename it so its name does not end in `.json`",
        ),
        Some(refusal) => Diagnostic::error(DiagnosticCode::Io, refusal.to_string()),
        None => Diagnostic::error(DiagnosticCode::Io, format!("cannot read file: {error}")),
    }
}
