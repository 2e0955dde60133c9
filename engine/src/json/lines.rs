//! Where the lines of a text start, and how to count columns on them quickly: [`TextLines`]
//! turns byte offsets into lines and columns (in characters, as diagnostics count them, or in
//! UTF-16 code units, as the Language Server Protocol does) and back.
//!
//! One index per text, built on first use: placing any number of problems in a text costs one
//! pass over it, then a binary search and at most [`CHECKPOINT`] bytes of counting per place,
//! however long its line (a minified file is one long line).

use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use crate::json::text::Position;

/// Bytes between two checkpoints: a column is counted from the nearest checkpoint before it.
const CHECKPOINT: usize = 256;

/// Where the lines of a text start, and what precedes each checkpoint.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    /// Byte offset of the start of each line; the first is always 0. A line ends at `\n`,
    /// `\r\n` or a lone `\r`, as editors and the Language Server Protocol count them.
    starts: Vec<usize>,
    /// Where each line starts counting `\n` alone, as serde_json's positions do; `None` when
    /// that is `starts` (no lone `\r` in the text).
    lf_starts: Option<Vec<usize>>,
    /// Characters before byte `k * CHECKPOINT`, for each `k` up to the end of the text.
    chars: Vec<usize>,
    /// UTF-16 code units before byte `k * CHECKPOINT`, likewise.
    units: Vec<usize>,
    /// Whether the text is ASCII (then a byte is a character and a code unit).
    ascii: bool,
}

/// What a column counts.
#[derive(Clone, Copy)]
enum Unit {
    /// Characters (Unicode scalar values).
    Char,
    /// UTF-16 code units (two for a character outside the Basic Multilingual Plane).
    Utf16,
}

impl Unit {
    /// How many of these the character whose UTF-8 encoding starts with `byte` counts for;
    /// 0 for a continuation byte.
    fn of(self, byte: u8) -> usize {
        let starts = usize::from(byte & 0xC0 != 0x80);
        match self {
            Unit::Char => starts,
            // A four-byte character (lead byte 0xF0 and up) is a surrogate pair.
            Unit::Utf16 => starts + usize::from(byte >= 0xF0),
        }
    }

    /// How many of these `bytes` hold (the characters starting in them).
    fn count(self, bytes: &[u8]) -> usize {
        bytes.iter().map(|&byte| self.of(byte)).sum()
    }
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let lone_cr = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
        let breaks = bytes
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' || lone_cr(i));
        let mut starts = vec![0];
        starts.extend(breaks.map(|(i, _)| i + 1));
        let lf_starts = (starts.len() > 1 && (0..bytes.len()).any(lone_cr)).then(|| {
            let mut lf = vec![0];
            lf.extend(text.match_indices('\n').map(|(i, _)| i + 1));
            lf
        });
        let blocks = text.len() / CHECKPOINT + 1;
        let (mut chars, mut units) = (Vec::with_capacity(blocks), Vec::with_capacity(blocks));
        let (mut char_count, mut unit_count) = (0, 0);
        for block in text.as_bytes().chunks(CHECKPOINT) {
            chars.push(char_count);
            units.push(unit_count);
            char_count += Unit::Char.count(block);
            unit_count += Unit::Utf16.count(block);
        }
        chars.push(char_count);
        units.push(unit_count);
        LineIndex {
            starts,
            lf_starts,
            chars,
            units,
            ascii: char_count == text.len(),
        }
    }

    fn table(&self, unit: Unit) -> &[usize] {
        match unit {
            Unit::Char => &self.chars,
            Unit::Utf16 => &self.units,
        }
    }

    /// `unit`s before the byte `offset` (at most the text's length) of `text`.
    fn before(&self, text: &str, offset: usize, unit: Unit) -> usize {
        if self.ascii {
            return offset;
        }
        let checkpoint = offset / CHECKPOINT;
        let counted = self
            .table(unit)
            .get(checkpoint)
            .copied()
            .unwrap_or_default();
        let rest = text.as_bytes().get(checkpoint * CHECKPOINT..offset);
        counted + rest.map_or(0, |bytes| unit.count(bytes))
    }

    /// `unit`s between the byte offsets `start` and `end` (`start <= end`) of `text`.
    fn between(&self, text: &str, start: usize, end: usize, unit: Unit) -> usize {
        if self.ascii {
            return end - start;
        }
        if end - start <= CHECKPOINT {
            return text
                .as_bytes()
                .get(start..end)
                .map_or(0, |bytes| unit.count(bytes));
        }
        self.before(text, end, unit) - self.before(text, start, unit)
    }

    /// The byte offset of the first character of `line` (a byte range of `text`, a line's)
    /// preceded by at least `count` `unit`s of it; the line's end if there is none.
    fn offset_in(&self, text: &str, line: Range<usize>, count: usize, unit: Unit) -> usize {
        if self.ascii {
            return line.start.saturating_add(count).min(line.end);
        }
        let target = self.before(text, line.start, unit).saturating_add(count);
        // The last checkpoint before the target, not past the line's end: the target's
        // character is at most a checkpoint (and one character) after it.
        let table = self.table(unit);
        let checkpoint = (table.partition_point(|&counted| counted <= target))
            .saturating_sub(1)
            .min(line.end / CHECKPOINT);
        let from = line.start.max(checkpoint * CHECKPOINT);
        let mut counted = self.before(text, from, unit);
        let bytes = text.as_bytes();
        for at in from..line.end {
            let Some(&byte) = bytes.get(at) else { break };
            let weight = unit.of(byte);
            if weight > 0 {
                if counted >= target {
                    return at;
                }
                counted += weight;
            }
        }
        line.end
    }
}

/// A text and the index of where its lines start, built on first use: the one conversion
/// between byte offsets and lines and columns the library and its tools place problems with.
///
/// Lines end at `\n`; a `\r` before it is not part of the line's text. Every method is
/// clamped to the text: an offset past its end is its end, an offset inside a multi-byte
/// character is that character, a column past a line's end is that end. Nothing here panics.
///
/// # Example
/// ```
/// use archetype_engine::tooling::TextLines;
/// use archetype_engine::Position;
///
/// let lines = TextLines::new("{\n  \"name\": \"é😀\", \"x\": 1\n}");
/// let x = lines.text().find("\"x\"").unwrap();
/// assert_eq!(lines.position(x), Position { line: 2, column: 17 });
/// assert_eq!((lines.line_of(x), lines.utf16_column(x)), (1, 17));
/// assert_eq!(lines.offset(Position { line: 2, column: 17 }), x);
/// assert_eq!(lines.utf16_offset(1, 17), x);
/// ```
pub struct TextLines<'a> {
    text: &'a str,
    index: Index<'a>,
}

/// A [`TextLines`]'s index: its own, or one kept with the text (the library's, built when it
/// placed its own problems in the text).
enum Index<'a> {
    Own(OnceLock<LineIndex>),
    Shared(&'a OnceLock<LineIndex>),
}

impl fmt::Debug for TextLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TextLines({} bytes)", self.text.len())
    }
}

impl<'a> TextLines<'a> {
    /// `text`, its index to be built the first time a method needs it.
    pub fn new(text: &'a str) -> TextLines<'a> {
        TextLines {
            text,
            index: Index::Own(OnceLock::new()),
        }
    }

    /// `text` with the index kept beside it in `index` (built there on first use).
    pub(crate) fn shared(text: &'a str, index: &'a OnceLock<LineIndex>) -> TextLines<'a> {
        TextLines {
            text,
            index: Index::Shared(index),
        }
    }

    /// The text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    fn index(&self) -> &LineIndex {
        let cell = match &self.index {
            Index::Own(cell) => cell,
            Index::Shared(cell) => cell,
        };
        cell.get_or_init(|| LineIndex::new(self.text))
    }

    /// How many lines the text has (an empty text, or one ending in `\n`, has an empty last
    /// line).
    pub fn line_count(&self) -> usize {
        self.index().starts.len()
    }

    /// The byte offset where 0-based line `line` starts counting `\n` alone as a line end (as
    /// serde_json's positions count lines); `None` past the last such line.
    pub(crate) fn lf_line_start(&self, line: usize) -> Option<usize> {
        let index = self.index();
        index
            .lf_starts
            .as_ref()
            .unwrap_or(&index.starts)
            .get(line)
            .copied()
    }

    /// The byte range of 0-based line `line`, without its line ending (`\n`, `\r\n` or a lone
    /// `\r`); `None` past the last line.
    pub fn line_range(&self, line: usize) -> Option<Range<usize>> {
        let starts = &self.index().starts;
        let start = *starts.get(line)?;
        let end = starts.get(line + 1).copied().unwrap_or(self.text.len());
        let text = self.text.get(start..end)?;
        let kept = text.trim_end_matches('\n');
        let kept = kept.strip_suffix('\r').unwrap_or(kept);
        Some(start..start + kept.len())
    }

    /// The 0-based line holding byte `offset` (the last line for an offset past the end).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = self.char_boundary_at_or_before(offset);
        (self.index().starts)
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// The line and column (1-based, the column in characters) of byte `offset`.
    pub fn position(&self, offset: usize) -> Position {
        let offset = self.char_boundary_at_or_before(offset);
        let line = self.line_of(offset);
        let start = self.index().starts.get(line).copied().unwrap_or_default();
        let column = self.index().between(self.text, start, offset, Unit::Char);
        Position {
            line: line + 1,
            column: column + 1,
        }
    }

    /// The byte offset of a line and column (1-based, the column in characters, as
    /// [`position`](Self::position) gives them): the inverse of `position`. A column past the
    /// line's end is its end; a line past the last is the end of the text.
    pub fn offset(&self, position: Position) -> usize {
        self.offset_in_line(
            position.line.saturating_sub(1),
            position.column.saturating_sub(1),
            Unit::Char,
        )
    }

    /// UTF-16 code units from the start of the line holding byte `offset` to it: the
    /// protocol's `character` of that place (its `line` is [`line_of`](Self::line_of)).
    pub fn utf16_column(&self, offset: usize) -> usize {
        let offset = self.char_boundary_at_or_before(offset);
        let line = self.line_of(offset);
        let start = self.index().starts.get(line).copied().unwrap_or_default();
        self.index().between(self.text, start, offset, Unit::Utf16)
    }

    /// The byte offset of the character `units` UTF-16 code units into 0-based line `line`:
    /// the inverse of [`utf16_column`](Self::utf16_column). A place inside a surrogate pair is
    /// the character after it; one past the line's end is its end; a line past the last is
    /// the end of the text.
    pub fn utf16_offset(&self, line: usize, units: usize) -> usize {
        self.offset_in_line(line, units, Unit::Utf16)
    }

    fn offset_in_line(&self, line: usize, count: usize, unit: Unit) -> usize {
        match self.line_range(line) {
            Some(range) => self.index().offset_in(self.text, range, count, unit),
            None => self.text.len(),
        }
    }

    /// The last character boundary at or before `offset`, clamped to the text.
    pub fn char_boundary_at_or_before(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position of every character boundary of `text`, counted the slow way.
    fn every_place(text: &str) -> Vec<(usize, Position, usize, usize)> {
        let mut places = Vec::new();
        let (mut line, mut column, mut units) = (1, 1, 0);
        for (offset, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), '\0')))
        {
            places.push((offset, Position { line, column }, line - 1, units));
            let lone_cr = c == '\r' && !text[offset..].starts_with("\r\n");
            if c == '\n' || lone_cr {
                (line, column, units) = (line + 1, 1, 0);
            } else {
                column += 1;
                units += c.len_utf16();
            }
        }
        places
    }

    fn texts() -> Vec<String> {
        let wide = "é😀漢a".repeat(300);
        vec![
            String::new(),
            "\n".to_string(),
            "a\r\nbc\n\nd".to_string(),
            "a\rbc\r\rd\r\ne\r".to_string(),
            "x".repeat(1000),
            wide.clone(),
            format!("{wide}\n{wide}\r\n{}\n😀", "b".repeat(700)),
            format!("{}😀{}", "a".repeat(255), "é".repeat(300)),
        ]
    }

    #[test]
    fn converts_every_place_both_ways() {
        for text in texts() {
            let lines = TextLines::new(&text);
            for (offset, position, line, units) in every_place(&text) {
                assert_eq!(lines.position(offset), position, "{offset} in {text:?}");
                assert_eq!(lines.line_of(offset), line, "{offset}");
                assert_eq!(lines.utf16_column(offset), units, "{offset}");
                // A `\r\n` ends its line: the column of its `\n` is the line's end, its `\r`.
                let crlf = text[..offset].ends_with('\r') && text[offset..].starts_with('\n');
                let back = if crlf { offset - 1 } else { offset };
                assert_eq!(lines.offset(position), back, "{position:?}");
                assert_eq!(lines.utf16_offset(line, units), back, "{line}:{units}");
            }
        }
    }

    #[test]
    fn clamps_places_outside_the_text() {
        let text = "ab\r\n😀c\n";
        let lines = TextLines::new(text);
        assert_eq!(lines.line_count(), 3);
        assert_eq!(lines.line_range(0), Some(0..2));
        assert_eq!(lines.line_range(1), Some(4..9));
        assert_eq!(lines.line_range(2), Some(10..10));
        assert_eq!(lines.line_range(3), None);
        // Inside the emoji: that character; past the end: the end.
        assert_eq!(lines.position(6), Position { line: 2, column: 1 });
        assert_eq!(lines.position(99), Position { line: 3, column: 1 });
        assert_eq!(lines.utf16_column(6), 0);
        // A column past the line's end, a line past the last, inside the surrogate pair.
        assert_eq!(lines.offset(Position { line: 1, column: 9 }), 2);
        assert_eq!(lines.offset(Position { line: 7, column: 1 }), text.len());
        assert_eq!(lines.offset(Position { line: 0, column: 0 }), 0);
        assert_eq!(lines.utf16_offset(1, 1), 8);
        assert_eq!(lines.utf16_offset(1, 99), 9);
        assert_eq!(lines.utf16_offset(9, 0), text.len());
    }

    #[test]
    fn a_shared_index_is_built_once_and_kept() {
        let text = "a\nb";
        let kept = OnceLock::new();
        assert_eq!(TextLines::shared(text, &kept).line_of(2), 1);
        assert_eq!(
            kept.get().map(|index| index.starts.clone()),
            Some(vec![0, 2])
        );
        assert_eq!(TextLines::shared(text, &kept).line_count(), 2);
    }
}
