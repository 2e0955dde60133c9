//! The open buffers, what file a URI names, and positions between the protocol's and ours.
//!
//! The protocol counts columns in UTF-16 code units; the library counts bytes (spans) and
//! characters (diagnostic columns). [`LineIndex`] converts between them for one text.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

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

/// Where each line of a text starts, to convert positions.
pub(super) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The text of 0-based line `line` (without its line break), and where it starts.
    fn line(&self, line: usize) -> Option<(usize, &'a str)> {
        let start = *self.starts.get(line)?;
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let text = self.text.get(start..end)?;
        Some((start, text.trim_end_matches(['\n', '\r'])))
    }

    /// The protocol position of a byte offset (clamped to the text).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let before = self.text.get(self.starts[line]..offset).unwrap_or_default();
        Position::new(line as u32, utf16_len(before))
    }

    /// The protocol range of a byte range.
    pub fn range(&self, span: std::ops::Range<usize>) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The protocol position of a 1-based line and column counted in characters (a
    /// diagnostic's), clamped to the line.
    pub fn position_of_column(&self, line: usize, column: usize) -> Position {
        let index = line.saturating_sub(1);
        let Some((_, text)) = self.line(index) else {
            return Position::new(index as u32, column.saturating_sub(1) as u32);
        };
        let before: String = text.chars().take(column.saturating_sub(1)).collect();
        Position::new(index as u32, utf16_len(&before))
    }

    /// The byte offset of a protocol position (clamped to its line, and to the text).
    pub fn offset(&self, position: Position) -> usize {
        let Some((start, text)) = self.line(position.line as usize) else {
            return self.text.len();
        };
        let mut units = 0;
        for (at, c) in text.char_indices() {
            if units >= position.character as usize {
                return start + at;
            }
            units += c.len_utf16();
        }
        start + text.len()
    }

    /// The range of the whole text.
    pub fn whole(&self) -> Range {
        Range::new(Position::new(0, 0), self.position(self.text.len()))
    }
}

fn utf16_len(text: &str) -> u32 {
    text.chars().map(char::len_utf16).sum::<usize>() as u32
}
