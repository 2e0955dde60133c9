//! Archetype files on disk: finding them under a root, reading them within limits, and placing
//! problems at `file:line:column`.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::archetype_file::{parse_doc, ArchetypeDoc, DocProblem};
use crate::archetype_name::name_from_relative_path;
use crate::component_registry::ComponentRegistry;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::field_path::FieldPath;
use crate::json_text::{parse_json, SourceText, TextError};
use crate::limits::Limits;

/// One archetype file as last read: its text, its parsed content, and its own problems.
#[derive(Clone)]
pub(crate) struct SourceFile {
    /// The path shown in messages: the root joined with the relative path.
    pub file: PathBuf,
    /// The text, when it could be read as UTF-8.
    pub text: Option<Arc<SourceText>>,
    /// The parsed file, when it is JSON (possibly with problems).
    pub doc: Option<Arc<ArchetypeDoc>>,
    /// Problems found in the file on its own.
    pub problems: Vec<Diagnostic>,
}

impl SourceFile {
    /// Whether the file itself has errors (its archetype cannot be used).
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(Diagnostic::is_error)
    }

    /// Reads an archetype from `bytes` (the content of `file`).
    pub fn from_bytes(
        file: PathBuf,
        name: &str,
        bytes: Vec<u8>,
        registry: &ComponentRegistry,
        limits: &Limits,
    ) -> SourceFile {
        let mut source = SourceFile {
            file,
            text: None,
            doc: None,
            problems: Vec::new(),
        };
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
                let code = if error.message.starts_with("duplicate key") {
                    DiagnosticCode::DuplicateKey
                } else if error.message.starts_with("nesting deeper")
                    || error.message.starts_with("recursion limit")
                {
                    DiagnosticCode::TooDeep
                } else {
                    DiagnosticCode::Syntax
                };
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
        source.doc = Some(Arc::new(doc));
        source
    }

    /// Reads the file at `path`, refusing files over the size limit. Problems reading it become
    /// the source's problems.
    pub fn read(
        file: PathBuf,
        path: &Path,
        name: &str,
        registry: &ComponentRegistry,
        limits: &Limits,
    ) -> SourceFile {
        match read_limited(path, limits.max_file_bytes) {
            Ok(bytes) => SourceFile::from_bytes(file, name, bytes, registry, limits),
            Err(diagnostic) => SourceFile {
                problems: vec![diagnostic.with_file(file.clone()).with_archetype(name)],
                file,
                text: None,
                doc: None,
            },
        }
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
        let Some(text) = &self.text else { return };
        let Some(located) = text.locate(path.segments()) else {
            return;
        };
        let full = located.matched == path.segments().len();
        let span = match (&located.key, at_key && full) {
            (Some(key), true) => key.clone(),
            _ => located.value.clone(),
        };
        diagnostic.position = Some(text.position(span.start));
        diagnostic.span = Some(span);
    }
}

/// Reads at most `limit` bytes of a file; a larger file is an error (not a truncated read).
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, Box<Diagnostic>> {
    let too_large = |size: u64| {
        Box::new(Diagnostic::error(
            DiagnosticCode::TooLarge,
            format!("file is {size} bytes, over the limit of {limit} bytes"),
        ))
    };
    let io = |error: std::io::Error| {
        Box::new(Diagnostic::error(
            DiagnosticCode::Io,
            format!("cannot read file: {error}"),
        ))
    };
    let directory = || {
        Box::new(Diagnostic::error(
            DiagnosticCode::Io,
            "is a directory, not a file; rename it so its name does not end in `.json`",
        ))
    };
    // Open first and ask the open file for its size: one path lookup, not two.
    let file = match fs::File::open(path) {
        Ok(file) => file,
        // Some systems refuse to open a directory at all.
        Err(_) if path.is_dir() => return Err(directory()),
        Err(error) => return Err(io(error)),
    };
    let metadata = file.metadata().map_err(io)?;
    if metadata.is_dir() {
        return Err(directory());
    }
    if metadata.len() > limit {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    // The file may have grown since we looked at its size.
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Whether a file name is an archetype file: `*.json`, not hidden (editor lock and backup files
/// such as Emacs's `.#goblin.json` start with a dot).
pub(crate) fn is_archetype_file_name(file_name: &str) -> bool {
    file_name.ends_with(".json") && !file_name.starts_with('.')
}

/// The archetype files found under a root.
pub(crate) struct Scan {
    /// Archetype name → (path shown in messages, path to read).
    pub files: BTreeMap<String, (PathBuf, PathBuf)>,
    /// Problems with files or directories that give no archetype.
    pub problems: Vec<Diagnostic>,
}

/// Finds every archetype file under `root`, recursively. Symbolic links are followed only
/// when they stay inside the root.
pub(crate) fn scan(root: &Path) -> Scan {
    let mut scan = Scan {
        files: BTreeMap::new(),
        problems: Vec::new(),
    };
    let canonical_root = match fs::canonicalize(root) {
        Ok(path) => path,
        Err(error) => {
            scan.problems.push(
                Diagnostic::error(
                    DiagnosticCode::Io,
                    format!("cannot read the archetypes directory: {error}"),
                )
                .with_file(root),
            );
            return scan;
        }
    };
    let mut visited = vec![canonical_root.clone()];
    let mut pending = vec![(root.to_path_buf(), PathBuf::new())];
    while let Some((dir, relative_dir)) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                scan.problems.push(
                    Diagnostic::error(
                        DiagnosticCode::Io,
                        format!("cannot read directory: {error}"),
                    )
                    .with_file(&dir),
                );
                continue;
            }
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        // `file_name()` allocates: compute each key once, not once per comparison.
        entries.sort_by_cached_key(|entry| entry.file_name());
        for entry in entries {
            let path = entry.path();
            let relative = relative_dir.join(entry.file_name());
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if file_name.starts_with('.') {
                continue;
            }
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let mut is_dir = file_type.is_dir();
            if file_type.is_symlink() {
                match fs::canonicalize(&path) {
                    Ok(target) if target.starts_with(&canonical_root) => {
                        is_dir = target.is_dir();
                        if is_dir && visited.contains(&target) {
                            continue;
                        }
                        if is_dir {
                            visited.push(target);
                        }
                    }
                    Ok(_) => {
                        if is_archetype_file_name(&file_name) || path.is_dir() {
                            scan.problems.push(
                                Diagnostic::error(
                                    DiagnosticCode::InvalidName,
                                    "symbolic link points outside the archetypes directory; archetypes must live under the root",
                                )
                                .with_file(&path),
                            );
                        }
                        continue;
                    }
                    Err(error) => {
                        if is_archetype_file_name(&file_name) {
                            scan.problems.push(
                                Diagnostic::error(
                                    DiagnosticCode::Io,
                                    format!("cannot follow symbolic link: {error}"),
                                )
                                .with_file(&path),
                            );
                        }
                        continue;
                    }
                }
            }
            if is_dir {
                if file_name.ends_with(".json") {
                    scan.problems.push(
                        Diagnostic::error(
                            DiagnosticCode::InvalidName,
                            "directory name ends in `.json`; archetype files must be regular files (rename the directory)",
                        )
                        .with_file(&path),
                    );
                    continue;
                }
                pending.push((path, relative));
                continue;
            }
            if !is_archetype_file_name(&file_name) {
                continue;
            }
            match name_from_relative_path(&relative) {
                Ok(name) => {
                    scan.files.insert(name, (root.join(&relative), path));
                }
                Err(problem) => scan.problems.push(
                    Diagnostic::error(DiagnosticCode::InvalidName, problem.message)
                        .with_file(root.join(&relative)),
                ),
            }
        }
    }
    scan
}

/// Reports archetype names that differ only in letter case: such files collide on Windows and
/// macOS file systems, so each of them gets an error.
pub(crate) fn case_conflicts<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, String)> {
    let mut by_folded: rustc_hash::FxHashMap<String, Vec<&str>> = Default::default();
    for name in names {
        by_folded.entry(name.to_lowercase()).or_default().push(name);
    }
    let mut conflicts = Vec::new();
    for group in by_folded.values_mut().filter(|group| group.len() > 1) {
        group.sort_unstable();
        for name in group.iter() {
            let others: Vec<String> = group
                .iter()
                .filter(|other| *other != name)
                .map(|other| format!("`{other}`"))
                .collect();
            conflicts.push((name.to_string(), others.join(", ")));
        }
    }
    conflicts.sort();
    conflicts
}

/// The diagnostic for a case conflict on `name`.
pub(crate) fn case_conflict_problem(file: &Path, name: &str, others: &str) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::CaseConflict,
        format!(
            "archetype `{name}` differs from {others} only in letter case; file names must stay distinct on case-insensitive file systems"
        ),
    )
    .with_file(file)
    .with_archetype(name)
    .with_severity(Severity::Error)
}
