//! The text of designer-edited JSON files: UTF-8 checking, byte offset to
//! line/column mapping (with [`crate::json::lines`]), a strict JSON parse (no duplicate keys, bounded
//! nesting) and finding the text of the value at a path (with [`crate::json::span_index`]).
//!
//! Offsets are byte offsets into [`SourceText::text`], which has any BOM
//! removed, so positions match what an editor shows.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::json::field_path::PathSegment;
use crate::json::lines::{LineIndex, TextLines};
use crate::json::serde_message::{
    explain_syntax_error, is_control_character, strip_position, syntax_error_kind,
};
use crate::json::span_index::SpanIndex;
pub(crate) use crate::json::span_index::{locate, Located};

pub(super) const BOM: &str = "\u{feff}";

/// serde_json refuses the 128th nested container on its own.
pub(super) const SERDE_RECURSION_LIMIT: usize = 128;

/// A place in a text: 1-based line, and 1-based column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Line number, starting at 1.
    pub line: usize,
    /// Column number in characters (Unicode scalar values), starting at 1.
    pub column: usize,
}

/// What kind of problem a [`TextError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextErrorKind {
    /// The bytes are not UTF-8.
    Encoding,
    /// Not valid JSON (or not the layout expected).
    Syntax,
    /// A key written twice in one object.
    DuplicateKey,
    /// Arrays and objects nested deeper than the limit.
    TooDeep,
}

/// A problem with a file's text (encoding or JSON syntax) and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// What kind of problem it is.
    pub kind: TextErrorKind,
    /// What is wrong, without any "at line X column Y" suffix.
    pub message: String,
    /// Byte offset of the problem in the text (BOM removed).
    pub offset: usize,
    /// Line and column of `offset`.
    pub position: Position,
    /// For a duplicate key: the key, and the byte offset of its first writing (a caller that
    /// parsed part of a file says that one's line in the file's terms: [`duplicate_key`]).
    pub first: Option<(String, usize)>,
}

/// The message of a key written twice, the first time on `line`.
pub fn duplicate_key(name: &str, line: usize) -> String {
    format!("duplicate key `{name}` (the first one is on line {line})")
}

/// A file's text, ready for parsing and for turning byte offsets into positions.
#[derive(Debug, Clone)]
pub struct SourceText {
    text: String,
    /// Where lines start. Built on first use: most files never need a position.
    lines: OnceLock<LineIndex>,
    /// Where every value is (`None` if the text is not well-formed JSON). Built on first use:
    /// only a file with errors needs it, and then for all of them at once.
    spans: OnceLock<Option<SpanIndex>>,
}

impl SourceText {
    /// Checks that `bytes` are UTF-8 (after removing a leading BOM).
    pub fn from_bytes(mut bytes: Vec<u8>) -> Result<SourceText, TextError> {
        if bytes.starts_with(BOM.as_bytes()) {
            bytes.drain(..BOM.len());
        }
        String::from_utf8(bytes).map(Self::new).map_err(|err| {
            let bytes = err.as_bytes();
            let valid = err.utf8_error().valid_up_to();
            let byte = bytes.get(valid).copied().unwrap_or_default();
            // The position of the bad byte is the end of the valid prefix.
            let prefix = String::from_utf8_lossy(bytes.get(..valid).unwrap_or_default());
            let prefix = Self::new(prefix.into_owned());
            TextError {
                kind: TextErrorKind::Encoding,
                message: format!(
                    "invalid UTF-8 (byte 0x{byte:02X}); archetype and scene files must be UTF-8"
                ),
                offset: valid,
                position: prefix.position(valid),
                first: None,
            }
        })
    }

    /// Wraps a string, removing a leading BOM.
    pub fn from_string(mut text: String) -> SourceText {
        if text.starts_with(BOM) {
            text.drain(..BOM.len());
        }
        Self::new(text)
    }

    fn new(text: String) -> SourceText {
        SourceText {
            text,
            lines: OnceLock::new(),
            spans: OnceLock::new(),
        }
    }

    /// The text and where its lines start (found the first time a position is asked for, and
    /// kept for the text's lifetime).
    pub fn lines(&self) -> TextLines<'_> {
        TextLines::shared(&self.text, &self.lines)
    }

    /// Finds the value at `path`, exactly as [`locate`] does, from an index of the whole text
    /// built the first time: placing every error of a file costs one pass over it, however
    /// many errors there are. A text that is not well-formed JSON is scanned once per call.
    pub fn locate(&self, path: &[PathSegment]) -> Option<Located> {
        match self.spans.get_or_init(|| SpanIndex::build(&self.text)) {
            Some(index) => index.locate(&self.text, path),
            None => locate(&self.text, path),
        }
    }

    /// Whether the text is well-formed JSON that [`locate`](Self::locate) finds paths in from
    /// an index (built now if it was not yet).
    pub(crate) fn is_indexed(&self) -> bool {
        self.spans
            .get_or_init(|| SpanIndex::build(&self.text))
            .is_some()
    }

    /// The text, without BOM.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line and column of a byte offset. An offset past the end maps to
    /// the end; one inside a multi-byte character maps to that character.
    pub fn position(&self, byte_offset: usize) -> Position {
        self.lines().position(byte_offset)
    }

    #[cfg(test)]
    /// The text of a 1-based line without its line ending; empty if there is no such line.
    pub fn line_text(&self, line: usize) -> &str {
        let lines = self.lines();
        let range = line.checked_sub(1).and_then(|i| lines.line_range(i));
        range
            .and_then(|range| self.text.get(range))
            .unwrap_or_default()
    }

    /// The byte offset of a serde_json error position: `line` is 1-based,
    /// `column` counts bytes since the last `\n` up to and including the byte
    /// at fault, and 0 means nothing on that line was read yet.
    pub fn offset_of_serde_position(&self, line: usize, column: usize) -> usize {
        // serde_json counts `\n` alone as a line end, whatever the text's line endings.
        let lines = self.lines();
        let Some(start) = lines.lf_line_start(line.saturating_sub(1)) else {
            return self.text.len();
        };
        lines.char_boundary_at_or_before(start.saturating_add(column.saturating_sub(1)))
    }

    fn error(&self, kind: TextErrorKind, offset: usize, message: String) -> TextError {
        TextError {
            kind,
            message,
            offset,
            position: self.position(offset),
            first: None,
        }
    }
}

/// Parses the whole text as one JSON value, rejecting duplicate keys and
/// objects or arrays nested deeper than `max_depth` levels.
pub fn parse_json(source: &SourceText, max_depth: usize) -> Result<Value, TextError> {
    let text = source.text();
    if text.bytes().all(is_json_whitespace) {
        let message = "empty file; expected a JSON object".to_owned();
        return Err(source.error(TextErrorKind::Syntax, 0, message));
    }
    let mut state = ParseState {
        depth: 0,
        max_depth,
        failure: None,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = ValueSeed { state: &mut state }.deserialize(&mut de);
    parsed
        .and_then(|value| de.end().map(|()| value))
        .map_err(|err| convert_error(source, &err, &state))
}

/// Why the parse stopped, when it was this module's checks rather than serde_json's.
enum Failure {
    TooDeep,
    DuplicateKey(String),
}

struct ParseState {
    depth: usize,
    max_depth: usize,
    failure: Option<Failure>,
}

impl ParseState {
    fn enter<E: de::Error>(&mut self) -> Result<(), E> {
        self.depth += 1;
        if self.depth > self.max_depth {
            self.failure = Some(Failure::TooDeep);
            return Err(E::custom("nesting too deep"));
        }
        Ok(())
    }
}

/// Builds a [`Value`] the way serde_json's own `Deserialize for Value` does,
/// plus the depth and duplicate-key checks.
struct ValueSeed<'a> {
    state: &'a mut ParseState,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let state = self.state;
        state.enter()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ValueSeed { state: &mut *state })? {
            items.push(item);
        }
        state.depth -= 1;
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let state = self.state;
        state.enter()?;
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // Looking up the key only once the value is read keeps this as fast
            // as serde_json's own Value; the error position is found by
            // rescanning the text, so it does not matter that serde_json has
            // moved past the key by then.
            let value = map.next_value_seed(ValueSeed { state: &mut *state })?;
            match members.entry(key) {
                Entry::Vacant(entry) => {
                    entry.insert(value);
                }
                Entry::Occupied(entry) => {
                    state.failure = Some(Failure::DuplicateKey(entry.key().clone()));
                    return Err(de::Error::custom("duplicate key"));
                }
            }
        }
        state.depth -= 1;
        Ok(Value::Object(members))
    }
}

fn convert_error(source: &SourceText, err: &serde_json::Error, state: &ParseState) -> TextError {
    let text = source.text();
    let full = err.to_string();
    let message = strip_position(&full);
    let mut offset = source.offset_of_serde_position(err.line(), err.column());
    let too_deep = format!("nesting deeper than {} levels", state.max_depth);
    // serde_json positions an error raised by a visitor wherever it stopped
    // reading (after whitespace, a closing bracket, a whole value), so the
    // text is rescanned to find the place.
    match &state.failure {
        Some(Failure::TooDeep) => {
            let offset = first_too_deep(text.as_bytes(), state.max_depth).unwrap_or(offset);
            return source.error(TextErrorKind::TooDeep, offset, too_deep);
        }
        Some(Failure::DuplicateKey(name)) => {
            let duplicate = TextErrorKind::DuplicateKey;
            let Some((first, second)) = find_duplicate(text, name) else {
                return source.error(duplicate, offset, format!("duplicate key `{name}`"));
            };
            let line = source.position(first).line;
            let mut error = source.error(duplicate, second, duplicate_key(name, line));
            error.first = Some((name.clone(), first));
            return error;
        }
        None => {}
    }
    if err.column() == 0 && is_control_character(message) {
        // A raw newline in a string is reported at the start of the next
        // line; the newline itself, ending the string's line, is clearer.
        offset = offset.saturating_sub(1);
    }
    let kind = syntax_error_kind(message);
    if kind == TextErrorKind::TooDeep && state.max_depth < SERDE_RECURSION_LIMIT {
        return source.error(kind, offset, too_deep);
    }
    let (offset, message) = explain_syntax_error(text, offset, message);
    source.error(kind, offset, message)
}

/// The offset of the first `[` or `{`, in text order, nested deeper than `max_depth`.
fn first_too_deep(bytes: &[u8], max_depth: usize) -> Option<usize> {
    let mut depth = 0usize;
    structure(bytes, 0).find_map(|(at, byte, _)| {
        depth = nest(depth, byte);
        (depth > max_depth && matches!(byte, b'[' | b'{')).then_some(at)
    })
}

/// The offsets of the opening quotes of key `name` and of its first repetition
/// in the same object, for the first such repetition in the text. The parse
/// found a repetition, and everything before it parsed, so the scan reads
/// valid JSON.
fn find_duplicate(text: &str, name: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    // For each open container: where `name` first appeared as one of its keys.
    let mut open: Vec<Option<usize>> = Vec::new();
    structure(bytes, 0).find_map(|(at, byte, end)| {
        match byte {
            b'[' | b'{' => open.push(None),
            b']' | b'}' => _ = open.pop(),
            _ => {
                let is_key = bytes.get(skip_whitespace(bytes, end)) == Some(&b':');
                if is_key && key_is(text, at..end, name) {
                    match open.last_mut() {
                        Some(Some(first)) => return Some((*first, at)),
                        Some(slot) => *slot = Some(at),
                        None => {}
                    }
                }
            }
        }
        None
    })
}

/// Whether the quoted JSON string at `quoted` decodes to `name`.
pub(super) fn key_is(text: &str, quoted: Range<usize>, name: &str) -> bool {
    decoded_key(text, quoted).is_some_and(|decoded| decoded == name)
}

/// What the quoted JSON string at `quoted` decodes to; `None` if its escapes are invalid.
pub(super) fn decoded_key(text: &str, quoted: Range<usize>) -> Option<Cow<'_, str>> {
    decoded_string(text.get(quoted)?)
}

/// What `quoted`, a JSON string with its quotes, decodes to: borrowed when it has no escapes;
/// `None` if it is not quoted or its escapes are invalid.
pub(crate) fn decoded_string(quoted: &str) -> Option<Cow<'_, str>> {
    let raw = quoted.strip_prefix('"')?.strip_suffix('"')?;
    if raw.contains('\\') {
        let decoded = serde_json::from_str::<String>(quoted).ok()?;
        Some(Cow::Owned(decoded))
    } else {
        Some(Cow::Borrowed(raw))
    }
}

pub(super) fn is_json_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first byte at or after `i` that is not JSON whitespace (or the text's length). A run
/// of spaces, as indentation is, is skipped eight bytes at a time.
#[inline]
pub(crate) fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    loop {
        match bytes.get(i) {
            Some(b' ') => {
                i += match eight(bytes, i) {
                    Some(word) => leading_bytes(word ^ repeated(b' ')).max(1),
                    None => 1,
                }
            }
            Some(b'\t' | b'\n' | b'\r') => i += 1,
            _ => return i,
        }
    }
}

/// One past the closing quote of the string opening at `open` (escapes skipped over, nothing
/// else checked).
pub(crate) fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        i = string_stop(bytes, i)?;
        i += match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => 2,
            _ => 1,
        };
    }
}

/// The first byte at or after `from` that ends a plain run of a JSON string's contents: its
/// closing quote, a backslash or a control character (`None`: the text ends first). Eight
/// bytes are looked at a time.
#[inline]
pub(crate) fn string_stop(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(word) = eight(bytes, from) {
        // A byte's high bit flagged where it is `"`, `\` or below 0x20; the lowest flag is
        // exact (a borrow only spreads upwards).
        let flags = zero_bytes(word ^ repeated(b'"'))
            | zero_bytes(word ^ repeated(b'\\'))
            | (word.wrapping_sub(repeated(0x20)) & !word & repeated(0x80));
        if flags != 0 {
            return Some(from + leading_bytes(flags));
        }
        from += 8;
    }
    let rest = bytes.get(from..)?;
    let at = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    Some(from + at)
}

/// The eight bytes from `at`, as a little-endian word (the first byte lowest).
#[inline(always)]
fn eight(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(chunk.try_into().ok()?))
}

/// `byte` in every byte of a word.
#[inline(always)]
const fn repeated(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// High bits flagging the zero bytes of `word` (exact up to the lowest one).
#[inline(always)]
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(repeated(1)) & !word & repeated(0x80)
}

/// How many of a word's bytes, lowest first, come before its first non-zero one (8 if none).
#[inline(always)]
fn leading_bytes(word: u64) -> usize {
    word.trailing_zeros() as usize / 8
}

/// The brackets and strings of a JSON text from `from` on, as (offset, first
/// byte, offset after it); stops at an unterminated string.
fn structure(bytes: &[u8], from: usize) -> impl Iterator<Item = (usize, u8, usize)> + '_ {
    let mut next = from;
    std::iter::from_fn(move || loop {
        let at = next;
        let byte = *bytes.get(at)?;
        next = if byte == b'"' {
            string_end(bytes, at)?
        } else {
            at + 1
        };
        if matches!(byte, b'"' | b'[' | b'{' | b']' | b'}') {
            return Some((at, byte, next));
        }
    })
}

/// The nesting depth after `byte`, if it was at `depth`.
fn nest(depth: usize, byte: u8) -> usize {
    match byte {
        b'[' | b'{' => depth + 1,
        b']' | b'}' => depth.saturating_sub(1),
        _ => depth,
    }
}

/// One past the last byte of the value starting at `start` (brackets and strings matched,
/// nothing else checked).
pub(crate) fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'[' | b'{' => {
            // A tight loop: scene readers skip whole entity lists with it.
            let mut depth = 0usize;
            let mut at = start;
            loop {
                let rest = bytes.get(at..)?;
                at += rest.iter().position(|b| b"\"[]{}".contains(b))?;
                match bytes.get(at)? {
                    b'"' => at = string_end(bytes, at)?,
                    b'[' | b'{' => {
                        depth += 1;
                        at += 1;
                    }
                    _ => {
                        depth -= 1;
                        at += 1;
                        if depth == 0 {
                            return Some(at);
                        }
                    }
                }
            }
        }
        _ => {
            let scalar = bytes.get(start..)?;
            let is_end = |b: &u8| is_json_whitespace(*b) || b",:]}[{\"".contains(b);
            let len = scalar.iter().position(is_end).unwrap_or(scalar.len());
            (len > 0).then_some(start + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placement of each stop byte among plain bytes, at every alignment and near the
    /// end: the word-at-a-time scans agree with a byte-by-byte reading.
    #[test]
    fn word_scans_agree_with_byte_by_byte_ones() {
        for len in 0..24 {
            for at in 0..=len {
                for stop in [
                    b'"', b'\\', 0x00, 0x1f, b'\n', b'\t', b' ', b'a', 0xc3, 0x7f,
                ] {
                    let mut bytes = vec![b'x'; len];
                    if let Some(byte) = bytes.get_mut(at) {
                        *byte = stop;
                    }
                    for from in 0..=len {
                        let naive =
                            (from..len).find(|&i| matches!(bytes[i], b'"' | b'\\' | 0..=0x1f));
                        assert_eq!(string_stop(&bytes, from), naive, "{bytes:?} from {from}");
                    }
                }
                let mut spaces = vec![b' '; len];
                if let Some(byte) = spaces.get_mut(at) {
                    *byte = b'x';
                }
                spaces.extend(b"\n \t\r y");
                let naive = spaces.iter().position(|&b| b == b'x' || b == b'y');
                assert_eq!(Some(skip_whitespace(&spaces, 0)), naive, "{spaces:?}");
            }
        }
    }

    #[test]
    fn a_string_ends_after_its_escapes_and_control_characters() {
        // `  "a\"b\\\u0022`, a control character, `é"x`.
        let text = b"  \"a\\\"b\\\\\\u0022\x01\xc3\xa9\"x";
        assert_eq!(string_end(text, 2), Some(text.len() - 1));
        assert_eq!(string_end(br#""never closed\""#, 0), None);
    }

    fn at(line: usize, column: usize) -> Position {
        Position { line, column }
    }

    /// Test texts write `'` for `"` to stay readable.
    fn json(text: &str) -> String {
        text.replace('\'', "\"")
    }

    /// Parses `text` (quotes as in [`json`]), expecting an error at `position`.
    fn assert_error(text: &str, max_depth: usize, message: &str, position: Position) {
        let text = json(text);
        let source = SourceText::from_string(text.clone());
        let err = parse_json(&source, max_depth).expect_err(&text);
        let got = (err.message.as_str(), err.position);
        assert_eq!(got, (message, position), "{text:?}");
        assert_eq!(source.position(err.offset), position, "{text:?}");
    }

    #[test]
    fn maps_offsets_to_lines_and_character_columns() {
        let source = SourceText::from_string("a\néb\r\nc".to_owned());
        #[rustfmt::skip]
        let positions = [
            (0, 1, 1), (1, 1, 2), (2, 2, 1), (3, 2, 1), (4, 2, 2), (6, 2, 4), (7, 3, 1), (99, 3, 2),
        ];
        for (offset, line, column) in positions {
            assert_eq!(source.position(offset), at(line, column), "offset {offset}");
        }
        let lines = [0, 1, 2, 3, 4].map(|line| source.line_text(line));
        assert_eq!(lines, ["", "a", "éb", "c", ""]);
        // (line, column) as serde_json reports them, and the byte they mean.
        let serde = [
            (1, 0, 0),
            (1, 1, 0),
            (2, 3, 4),
            (2, 2, 2),
            (3, 0, 7),
            (9, 9, 8),
        ];
        for (line, column, offset) in serde {
            let got = source.offset_of_serde_position(line, column);
            assert_eq!(got, offset, "{line}:{column}");
        }
    }

    #[test]
    fn counts_columns_on_long_lines_with_wide_characters() {
        let line = "aé€😀".repeat(300);
        let text = format!("{{\n{line}\n{line}x");
        let source = SourceText::from_string(text.clone());
        for offset in (0..=text.len()).filter(|&at| text.is_char_boundary(at)) {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[start..].chars().count() + 1;
            assert_eq!(source.position(offset), at(line, column), "offset {offset}");
        }
    }

    #[test]
    fn strips_bom_and_rejects_invalid_utf8() {
        let source = SourceText::from_bytes(b"\xEF\xBB\xBF{}".to_vec()).expect("valid");
        assert_eq!(source.text(), "{}");
        assert_eq!(SourceText::from_string("\u{feff}[]".into()).text(), "[]");
        #[rustfmt::skip]
        let cases: [(&[u8], u8, usize, Position); 3] = [
            (b"\xEF\xBB\xBF{\"a\": \"\xC3\xA9\xFF\"}", 0xFF, 9, at(1, 9)),
            (b"{\n  \"\xC3\xA9\": \"\x80", 0x80, 11, at(2, 9)),
            (b"\xC3", 0xC3, 0, at(1, 1)),
        ];
        for (bytes, byte, offset, position) in cases {
            let err = SourceText::from_bytes(bytes.to_vec()).expect_err("invalid");
            let message = format!(
                "invalid UTF-8 (byte 0x{byte:02X}); archetype and scene files must be UTF-8"
            );
            assert_eq!(
                err,
                TextError {
                    kind: TextErrorKind::Encoding,
                    message,
                    offset,
                    position,
                    first: None,
                }
            );
        }
    }

    #[test]
    fn reports_syntax_errors_without_the_position_suffix() {
        let control = "control character (\\u0000-\\u001F) found while parsing a string";
        let empty = "empty file; expected a JSON object";
        const TRAILING: &str = "trailing comma; remove the `,` after the last member";
        #[rustfmt::skip]
        let cases = [
            ("{'a': 1 'b': 2}", "expected `,` or `}` after this value", at(1, 8)),
            ("{\r\n  'a': 1\r\n  'b': 2\r\n}", "expected `,` or `}` after this value", at(2, 9)),
            ("{'é': 'ü' 'b': 2}", "expected `,` or `}` after this value", at(1, 10)),
            ("{'a': 1'b': 2}", "expected `,` or `}`", at(1, 8)),
            ("[1, 2 3]", "expected `,` or `]` after this value", at(1, 6)),
            ("{'a': 1,}", TRAILING, at(1, 8)),
            ("[1, 2 ,\n ]", TRAILING, at(1, 7)),
            ("{'a': 1", "unexpected end of file while parsing an object", at(1, 7)),
            ("{'a': [1\n", "unexpected end of file while parsing a list", at(2, 1)),
            ("{1: 2}", "key must be a string", at(1, 2)),
            ("{} x", "trailing characters", at(1, 4)),
            ("[]\n]", "trailing characters", at(2, 1)),
            ("{'a': }", "expected value", at(1, 7)),
            ("[information]", "expected value", at(1, 2)),
            ("[tru]", "expected ident", at(1, 5)),
            ("[01]", "invalid number", at(1, 3)),
            ("'a\\qb'", "invalid escape", at(1, 4)),
            ("['é\u{1}']", control, at(1, 4)),
            ("['ab\ncd']", control, at(1, 5)),
            ("", empty, at(1, 1)),
            (" \r\n\t\n ", empty, at(1, 1)),
        ];
        for (text, message, position) in cases {
            assert_error(text, 64, message, position);
        }
        let bom = SourceText::from_bytes(b"\xEF\xBB\xBF{\n\"a\": 1 }}".to_vec()).expect("utf-8");
        let err = parse_json(&bom, 64).expect_err("trailing");
        let got = (err.message.as_str(), err.position, err.offset);
        assert_eq!(got, ("trailing characters", at(2, 9), 10));
    }

    #[test]
    fn names_non_finite_numbers() {
        #[rustfmt::skip]
        let cases = [
            ("{'a': NaN}", "NaN", at(1, 7)),
            ("[1, -Infinity]", "-Infinity", at(1, 5)),
            ("[+Infinity]", "+Infinity", at(1, 2)),
            ("[\n  Infinity\n]", "Infinity", at(2, 3)),
            ("{'x': nan}", "nan", at(1, 7)),
            ("[inf, 1]", "inf", at(1, 2)),
        ];
        for (text, literal, position) in cases {
            let message = format!("`{literal}` is not valid JSON; write a number or null");
            assert_error(text, 64, &message, position);
        }
    }

    #[test]
    fn explains_what_designers_write_that_json_has_no_place_for() {
        #[rustfmt::skip]
        let cases = [
            ("{\n  // a comment\n}", "key must be a string (comments are not valid JSON; remove the comment)", at(2, 3)),
            ("[1, /* two */ 2]", "expected value (comments are not valid JSON; remove the comment)", at(1, 5)),
            ("\u{feff}\u{feff}[]", "expected value (unexpected byte-order mark (U+FEFF); a file may start with one, but only one)", at(1, 1)),
            ("[1, -1e400]", "number out of range", at(1, 5)),
        ];
        for (text, message, position) in cases {
            assert_error(text, 64, message, position);
        }
        // Written without the `'` → `"` helper.
        let single = SourceText::from_string("{'a': 1}".to_owned());
        let err = parse_json(&single, 64).expect_err("single quotes");
        assert_eq!(
            (err.message.as_str(), err.position),
            (
                "key must be a string (JSON strings and keys use double quotes (`\"`), not single quotes)",
                at(1, 2)
            )
        );
    }

    #[test]
    fn rejects_duplicate_keys_at_the_second_key() {
        #[rustfmt::skip]
        let cases = [
            ("{\n  'a': 1,\n  'a': 2\n}", "a", 2, at(3, 3)),
            ("{'a':1, 'a'  : 2}", "a", 1, at(1, 9)),
            ("{'o': {'k': [{'k': 0}]},\n 'k': 1,\n 'p': {'k': 2,\n  'k': 3}}", "k", 3, at(4, 3)),
            ("[{'k': 1}, {'k': {'k': 2}, 'j': 0,\n'k': 3}]", "k", 1, at(2, 1)),
            ("{'a\\'b': 1,\n 'x\\\\': 0, 'a\\u0022b': 2}", "a\"b", 1, at(2, 12)),
            ("{'é': 1, '\\u00e9': 2}", "é", 1, at(1, 10)),
            // The inner repetition is found first: keys are checked after their value.
            ("{'a': 1, 'a': {'b': 1,\n'b': 2}}", "b", 1, at(2, 1)),
        ];
        for (text, key, first_line, position) in cases {
            let message = format!("duplicate key `{key}` (the first one is on line {first_line})");
            assert_error(text, 64, &message, position);
        }
        let ok = json("{'a': {'a': 1}, 'b': [{'a': 2}, {'a': 3}]}");
        let expected = serde_json::from_str(&ok).expect("valid");
        assert_eq!(parse_json(&SourceText::from_string(ok), 64), Ok(expected));
    }

    #[test]
    fn limits_nesting_depth() {
        let deep = "[".repeat(100_000);
        #[rustfmt::skip]
        let cases = [
            ("[[[[1]]]]", 3, at(1, 4)),
            ("[[[ [ ]]]]", 3, at(1, 5)),
            ("['[[[[', {'{': [[{}]]}]", 3, at(1, 17)),
            ("{'a': {'b': {'c': {}}}}", 3, at(1, 19)),
            ("[]", 0, at(1, 1)),
            (&deep, 64, at(1, 65)),
            (&deep, 127, at(1, 128)),
        ];
        for (text, max_depth, position) in cases {
            let message = format!("nesting deeper than {max_depth} levels");
            assert_error(text, max_depth, &message, position);
        }
        assert_error(&deep, 500, "nesting deeper than 127 levels", at(1, 128));
        assert!(parse_json(&SourceText::from_string("[[[1]]]".into()), 3).is_ok());
    }

    #[test]
    fn builds_the_same_values_as_serde_json() {
        let texts = [
            r#"{"u": 18446744073709551615, "i": -9223372036854775808, "f": 0.1, "e": 1e-7}"#,
            r#"[1.7976931348623157e308, -0.0, 3, -4, 2.5e3, 123456789012345678901234567890]"#,
            r#"{"s": "tab\t \u00e9 \ud83d\ude00 \"q\" \\", "n": null, "b": [true, false]}"#,
            "\u{feff} {\"nested\": {\"deeper\": [[], {}, [{}]]}} \n",
        ];
        for text in texts {
            let expected: Value =
                serde_json::from_str(text.trim_start_matches('\u{feff}')).expect("valid");
            let got = parse_json(&SourceText::from_string(text.to_owned()), 64);
            assert_eq!(got, Ok(expected), "{text:?}");
        }
    }
}
