//! The open buffers, what file a URI names, and positions between the protocol's and ours.
//!
//! The protocol counts columns in UTF-16 code units; the library counts bytes (spans) and
//! characters (diagnostic columns). [`ProtocolPlaces`] converts between them, with the engine's
//! index of a text's lines.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use archetype_engine::tooling::TextLines;
use lsp_types::{Position, Range, Uri};

/// A buffer the editor has open: its unsaved text.
pub(super) struct Document {
    /// The URI the editor names it by.
    pub uri: Uri,
    /// Its text as the editor has it now.
    pub text: String,
    /// The editor's version of it.
    pub version: i32,
}

/// The open buffers, by path.
#[derive(Default)]
pub(super) struct Documents {
    open: HashMap<PathBuf, Document>,
}

impl Documents {
    pub fn open(&mut self, path: PathBuf, document: Document) {
        self.open.insert(path, document);
    }

    pub fn close(&mut self, path: &Path) -> Option<Document> {
        self.open.remove(path)
    }

    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.open.get(path)
    }

    pub fn get_mut(&mut self, path: &Path) -> Option<&mut Document> {
        self.open.get_mut(path)
    }

    /// The open buffers.
    pub fn iter(&self) -> impl Iterator<Item = (&PathBuf, &Document)> {
        self.open.iter()
    }
}

/// What a file is to the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FileKind {
    /// An archetype file: its path relative to the archetypes root.
    Archetype(PathBuf),
    /// A JSON scene file (`*.scene.json`), anywhere.
    Scene,
    /// Anything else: the server has nothing to say about it.
    Other,
}

/// Whether `path` is a JSON scene file.
pub(super) fn is_scene(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.ends_with(".scene.json"))
}

/// What `path` is, with `root` the archetypes root (absolute, its links resolved).
pub(super) fn kind_of(path: &Path, root: &Path) -> FileKind {
    if is_scene(path) {
        return FileKind::Scene;
    }
    if path.extension().and_then(|e| e.to_str()) != Some("json") {
        return FileKind::Other;
    }
    match relative_to(path, root) {
        Some(relative) => FileKind::Archetype(relative),
        None => FileKind::Other,
    }
}

/// `path` relative to `root`, when it is inside (also through a link to a directory on the
/// way, as the editor may name the file by another path than the library does).
pub(super) fn relative_to(path: &Path, root: &Path) -> Option<PathBuf> {
    let plain = |relative: &Path| {
        relative
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
    };
    if let Ok(relative) = path.strip_prefix(root) {
        return plain(relative).then(|| relative.to_path_buf());
    }
    let parent = std::fs::canonicalize(path.parent()?).ok()?;
    let relative = parent.strip_prefix(root).ok()?.join(path.file_name()?);
    plain(&relative).then_some(relative)
}

/// The path of a `file:` URI, percent-decoded; `None` for other schemes.
pub(super) fn path_of(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().is_none_or(|scheme| scheme.as_str() != "file") {
        return None;
    }
    let bytes = percent_decode(uri.path().as_str())?;
    let text = String::from_utf8(bytes).ok()?;
    // `file:///C:/x` on Windows.
    let text = match text.strip_prefix('/') {
        Some(rest) if cfg!(windows) && rest.get(1..2) == Some(":") => rest.to_string(),
        _ => text,
    };
    let path = PathBuf::from(text);
    path.is_absolute().then_some(path)
}

/// The `file:` URI of an absolute path.
pub(super) fn uri_of(path: &Path) -> Option<Uri> {
    let text = path.to_str()?.replace('\\', "/");
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~:".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&uri).ok()
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, after)) = rest.split_first() {
        if byte == b'%' {
            let hex = std::str::from_utf8(after.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &after[2..];
        } else {
            bytes.push(byte);
            rest = after;
        }
    }
    Some(bytes)
}

/// The protocol's places in a text: 0-based lines, columns in UTF-16 code units, converted by
/// the engine's index of the text's lines ([`TextLines`]), in a binary search and a few hundred
/// bytes of counting each, however long the line.
pub(super) trait ProtocolPlaces {
    /// The protocol position of a byte offset (clamped to the text).
    fn lsp_position(&self, offset: usize) -> Position;

    /// The protocol range of a byte range.
    fn lsp_range(&self, span: std::ops::Range<usize>) -> Range {
        Range::new(self.lsp_position(span.start), self.lsp_position(span.end))
    }

    /// The byte offset of a protocol position (clamped to its line, and to the text).
    fn lsp_offset(&self, position: Position) -> usize;

    /// The range of the whole text.
    fn lsp_whole(&self) -> Range;
}

impl ProtocolPlaces for TextLines<'_> {
    fn lsp_position(&self, offset: usize) -> Position {
        let line = saturated(self.line_of(offset));
        Position::new(line, saturated(self.utf16_column(offset)))
    }

    fn lsp_offset(&self, position: Position) -> usize {
        self.utf16_offset(position.line as usize, position.character as usize)
    }

    fn lsp_whole(&self) -> Range {
        Range::new(Position::new(0, 0), self.lsp_position(self.text().len()))
    }
}

/// A count as the protocol's `u32` (the largest one for a count past it).
fn saturated(count: usize) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}
