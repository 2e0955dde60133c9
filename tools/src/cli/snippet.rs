//! The source snippet under a diagnostic, rustc-style in ASCII: the lines of the problem's span,
//! the span underlined (`^^^` on one line; `/--^` … `\--^` over several) and labelled when the
//! diagnostic labels its own place, then each related place (` ::: file:line:col`, its line,
//! the place underlined `---` with its label), then the help note. Line numbers of all of them
//! share one column width.
//!
//! What is shown is bounded whatever the file: a line wider than [`WINDOW`] columns is cut to a
//! window around the place, with `…` where it was cut (a minified file is one long line, and a
//! snippet per problem must not repeat it); a span over many lines shows its first lines and
//! its last, with `.` for the rest. Tabs are expanded to the next multiple of [`TAB_WIDTH`]
//! columns, and control characters are shown escaped ([`printable`]), so the underline stays
//! under the right place and a file cannot drive the terminal.
//!
//! Why not a renderer crate (codespan-reporting, annotate-snippets, miette): each prints the
//! whole source line under a report, so one error in a minified 50 MB file prints 50 MB, and
//! 40,000 errors in it print it 40,000 times; none escapes the control characters a file may
//! hold; and colour and layout would have to be undone or cut out of their text (this module
//! once sliced codespan-reporting's output by string offsets to do that). The window, the
//! escaping and the underline under wide characters are the whole job, and they are here.

use std::fmt;
use std::io::{self, Write};
use std::ops::Range;

use archetype_engine::printable;
use archetype_engine::tooling::TextLines;
use unicode_width::UnicodeWidthChar;

use super::style::{paint, Style};

/// The widest a shown line gets, in columns; a wider line is cut to a window of this width
/// around the place.
pub(crate) const WINDOW: usize = 120;
/// Characters shown before the place when a line is cut.
const BEFORE: usize = 40;
/// Tab stops are every this many columns.
const TAB_WIDTH: usize = 4;
/// Lines shown after the first line of a span over many lines...
const START_CONTEXT: usize = 3;
/// ...and before its last.
const END_CONTEXT: usize = 1;
/// Marks where a line was cut.
const CUT: &str = "…";

/// Where line `index` of `file` starts, and its text without the line ending (the end of the
/// text, and nothing, past the last line).
fn line_at<'a>(file: &TextLines<'a>, index: usize) -> (usize, &'a str) {
    let text = file.text();
    match file.line_range(index) {
        Some(range) => (range.start, text.get(range).unwrap_or_default()),
        None => (text.len(), ""),
    }
}

/// `span` on character boundaries of `file`, if it is in the text.
fn checked(file: &TextLines<'_>, span: &Range<usize>) -> Option<Range<usize>> {
    if span.start > span.end || span.end > file.text().len() {
        return None;
    }
    Some(file.char_boundary_at_or_before(span.start)..file.char_boundary_at_or_before(span.end))
}

/// The snippet for `span` of `file`, ending with `help` as a note, its underline drawn in
/// `underline`'s colour (when colour is on). `None` if the span is not in the text.
#[cfg(test)]
fn snippet(
    file: &TextLines<'_>,
    span: Range<usize>,
    help: Option<&str>,
    underline: Style,
) -> Option<Snippet> {
    let mut snippets = Snippets::new(gutter_width(file, &span)?);
    let mark = Mark {
        label: None,
        primary: true,
        style: underline,
    };
    if !snippets.place(file, span, mark) {
        return None;
    }
    if let Some(help) = help {
        snippets.help(help);
    }
    Some(snippets.finish())
}

/// The width of the line-number column a snippet of `span` needs (the digits of its last
/// line's number); `None` if the span is not in the text.
pub(crate) fn gutter_width(file: &TextLines<'_>, span: &Range<usize>) -> Option<usize> {
    let span = checked(file, span)?;
    Some((file.line_of(span.end) + 1).to_string().len())
}

/// How a place is marked in a snippet.
#[derive(Clone, Copy)]
pub(crate) struct Mark<'a> {
    /// Written after the underline.
    pub(crate) label: Option<&'a str>,
    /// `^` under the problem's own place, `-` under a related one (as rustc draws them).
    pub(crate) primary: bool,
    /// The colour of the underline and the label (when colour is on).
    pub(crate) style: Style,
}

/// The snippets of one report, drawn one after the other with line numbers in one column
/// width: the problem's place, related places, the help.
pub(crate) struct Snippets {
    out: Drawing,
}

impl Snippets {
    /// Snippets whose line numbers take `pad` columns (at least: see [`gutter_width`]).
    pub(crate) fn new(pad: usize) -> Self {
        Snippets {
            out: Drawing {
                lines: Vec::new(),
                pad,
                underline: Style::Gutter,
                marker: '^',
                label: None,
            },
        }
    }

    /// Draws the lines of `span` with the span underlined as `mark` says; `false` (and nothing
    /// drawn) if the span is not in the text.
    pub(crate) fn place(&mut self, file: &TextLines<'_>, span: Range<usize>, mark: Mark) -> bool {
        let Some(span) = checked(file, &span) else {
            return false;
        };
        let (first, last) = (file.line_of(span.start), file.line_of(span.end));
        let out = &mut self.out;
        out.pad = out.pad.max((last + 1).to_string().len());
        out.underline = mark.style;
        out.marker = if mark.primary { '^' } else { '-' };
        out.label = mark.label.map(|label| printable(label).into_owned());
        out.gutter(' ', "");
        if first == last {
            single_line(file, first, span, out);
        } else {
            several_lines(file, first..last, span, out);
        }
        true
    }

    /// The line that introduces a related place, ` ::: file:line:col` (after a blank gutter
    /// line when something was drawn before it).
    pub(crate) fn related(&mut self, location: &str) {
        let out = &mut self.out;
        if !out.lines.is_empty() {
            out.gutter(' ', "");
        }
        out.lines.push(vec![
            (
                Some(Style::Gutter),
                format!("{:pad$}:::", "", pad = out.pad),
            ),
            (None, format!(" {}", printable(location))),
        ]);
    }

    /// The help note: `= help: ...`.
    pub(crate) fn help(&mut self, help: &str) {
        let out = &mut self.out;
        out.gutter(' ', "");
        out.lines.push(vec![
            (Some(Style::Gutter), format!("{:pad$} =", "", pad = out.pad)),
            (None, " ".to_string()),
            (Some(Style::Help), "help".to_string()),
            (None, format!(": {}", printable(help))),
        ]);
    }

    /// The drawn snippets.
    pub(crate) fn finish(self) -> Snippet {
        Snippet {
            lines: self.out.lines,
        }
    }
}

/// A drawn snippet: lines of parts, each part plain or in a style.
pub(crate) struct Snippet {
    lines: Vec<Vec<(Option<Style>, String)>>,
}

impl Snippet {
    /// Writes the snippet, each line ending in `\n`, its parts in their styles when colour is
    /// on ([`paint`]).
    pub(crate) fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        for line in &self.lines {
            // Trailing spaces are not shown: the line ends where its last visible part does.
            let mut left =
                line.iter().map(|(_, text)| text.len()).sum::<usize>() - trailing_spaces(line);
            for (style, text) in line {
                let part = &text[..text.len().min(left)];
                left -= part.len();
                match style {
                    Some(style) => paint(out, *style, part)?,
                    None => out.write_all(part.as_bytes())?,
                }
            }
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl fmt::Display for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut bytes = Vec::new();
        self.write(&mut bytes).map_err(|_| fmt::Error)?;
        f.write_str(&String::from_utf8_lossy(&bytes))
    }
}

/// How many spaces end a line of parts.
fn trailing_spaces(line: &[(Option<Style>, String)]) -> usize {
    let mut count = 0;
    for (_, text) in line.iter().rev() {
        let trimmed = text.trim_end_matches(' ');
        count += text.len() - trimmed.len();
        if !trimmed.is_empty() {
            break;
        }
    }
    count
}

/// Lines being drawn, with the width of the line-number column, and the underline's style,
/// character (`^` or `-`) and label for the place being drawn.
struct Drawing {
    lines: Vec<Vec<(Option<Style>, String)>>,
    pad: usize,
    underline: Style,
    marker: char,
    label: Option<String>,
}

impl Drawing {
    /// A line of the gutter (`  |`), then `underline` (carets, in the underline's style); or
    /// a break (`  .`) when `border` is `.`.
    fn gutter(&mut self, border: char, underline: &str) {
        let border = if border == ' ' { '|' } else { border };
        let gutter = format!("{:pad$} {border}", "", pad = self.pad);
        let style = if border == '.' {
            Style::Gutter
        } else {
            self.underline
        };
        self.lines.push(vec![
            (Some(Style::Gutter), gutter),
            (Some(style), underline.to_string()),
        ]);
    }

    /// An underline drawn with `^` (the point) and `-` (a span's side), as the place's marker
    /// draws it: unchanged for the problem's own place; `-` for the point and `_` for the side
    /// for a related place (as rustc draws one).
    fn marked(&self, underline: &str) -> String {
        match self.marker {
            '^' => underline.to_string(),
            marker => underline
                .replace('-', "_")
                .replace('^', &marker.to_string()),
        }
    }

    /// The underline's last line: `underline` as the place's marker draws it ([`marked`]),
    /// then the label.
    ///
    /// [`marked`]: Self::marked
    fn underline_end(&mut self, underline: &str) {
        let mut underline = self.marked(underline);
        if let Some(label) = &self.label {
            underline.push(' ');
            underline.push_str(label);
        }
        self.gutter(' ', &underline);
    }

    /// A source line: its number, the left column of a span over several lines, the text.
    fn source(&mut self, index: usize, left: &str, shown: &Shown) {
        let number = index + 1;
        let pad = self.pad;
        self.lines.push(vec![
            (Some(Style::Gutter), format!("{number:>pad$} |")),
            (Some(self.underline), left.to_string()),
            (None, format!(" {}", shown.text)),
        ]);
    }
}

/// A span on one line: the line, then `^` under the span.
fn single_line(file: &TextLines<'_>, index: usize, span: Range<usize>, out: &mut Drawing) {
    let (start, line) = line_at(file, index);
    let (from, to) = (span.start - start, span.end - start);
    let shown = Shown::around(line, from);
    out.source(index, "", &shown);
    // At least one caret, under the end of the line if that is where the span is.
    let to = to.max(from + 1);
    let (before, under) = shown.underline(from..to);
    out.underline_end(&format!(
        " {}{}",
        " ".repeat(before),
        "^".repeat(under.max(1))
    ));
}

/// A span over lines `lines.start..=lines.end`: the first line with `/` and `-` up to the
/// start, the lines between (some, with `|`), the last line with `\` and `-` up to the end.
fn several_lines(file: &TextLines<'_>, lines: Range<usize>, span: Range<usize>, out: &mut Drawing) {
    let (first, last) = (lines.start, lines.end);
    let (start, line) = line_at(file, first);
    let from = span.start - start;
    let shown = Shown::around(line, from);
    let indent = line.len() - line.trim_start().len();
    if from <= indent {
        // The span starts the line: the `/` goes right beside it.
        out.source(first, " /", &shown);
    } else {
        out.source(first, "  ", &shown);
        // Up to and including the first character of the span (not the end of the line).
        let (before, under) = shown.underline(from..from + 1);
        let under = if from < line.len() { under } else { 0 };
        let start = out.marked(&format!(" /{}^", "-".repeat(before + under)));
        out.gutter(' ', &start);
    }
    let shown_lines: Vec<usize> = (first + 1..last)
        .filter(|&i| i - first <= START_CONTEXT || last - i <= END_CONTEXT)
        .collect();
    let mut previous = first;
    for &index in &shown_lines {
        between(file, previous, index, out);
        out.source(index, " |", &Shown::around(line_at(file, index).1, 0));
        previous = index;
    }
    between(file, previous, last, out);
    let (start, line) = line_at(file, last);
    let to = span.end - start;
    let shown = Shown::around(line, to.saturating_sub(1));
    out.source(last, " |", &shown);
    let (before, _) = shown.underline(to..to + 1);
    out.underline_end(&format!(" \\{}^", "-".repeat(before)));
}

/// What goes between two shown lines of a span over several lines: nothing when they follow
/// each other, the one line between them, or a break (`.`) for more.
fn between(file: &TextLines<'_>, previous: usize, next: usize, out: &mut Drawing) {
    match next - previous {
        0 | 1 => {}
        2 => out.source(
            previous + 1,
            " |",
            &Shown::around(line_at(file, previous + 1).1, 0),
        ),
        _ => out.gutter('.', " |"),
    }
}

/// A line as shown: the text (cut to a window, tabs expanded, control characters escaped), and
/// where each shown character of the line is.
struct Shown {
    text: String,
    /// The characters shown, in order; the end of the line too when it is shown.
    cells: Vec<Cell>,
    /// Whether the start of the line is cut off (the text starts with [`CUT`]).
    cut_before: bool,
}

/// One shown character: its bytes in the line and the columns it takes.
#[derive(Clone, Copy)]
struct Cell {
    offset: usize,
    len: usize,
    width: usize,
}

impl Shown {
    /// `line`, or a window of it around byte `at` if it is wider than [`WINDOW`] columns. Only
    /// the characters near the window are looked at, however long the line.
    fn around(line: &str, at: usize) -> Shown {
        let whole = fits(line);
        let start = if whole { 0 } else { window_start(line, at) };
        let mut shown = Shown {
            text: String::new(),
            cells: Vec::new(),
            cut_before: start > 0,
        };
        if shown.cut_before {
            shown.text.push_str(CUT);
        }
        let mut column = usize::from(shown.cut_before);
        for (offset, ch) in line.get(start..).unwrap_or_default().char_indices() {
            let width = cell_width(ch, column);
            // Room for the mark of the cut at the end.
            if !whole && column + width >= WINDOW {
                shown.text.push_str(CUT);
                return shown;
            }
            push_cell(&mut shown.text, ch, column);
            let (offset, len) = (start + offset, ch.len_utf8());
            shown.cells.push(Cell { offset, len, width });
            column += width;
        }
        // The end of the line, where a span that reaches it is underlined.
        shown.cells.push(Cell {
            offset: line.len(),
            len: 1,
            width: 1,
        });
        shown
    }

    /// For the bytes `range` of the line: the columns before it, and the columns of its shown
    /// characters.
    fn underline(&self, range: Range<usize>) -> (usize, usize) {
        let mut before = usize::from(self.cut_before);
        let mut under = 0;
        for cell in &self.cells {
            if cell.offset < range.end && range.start < cell.offset + cell.len {
                under += cell.width;
            } else if cell.offset < range.start {
                before += cell.width;
            }
        }
        (before, under)
    }
}

/// Whether `line` is at most [`WINDOW`] columns wide (looking at no more of it than that).
fn fits(line: &str) -> bool {
    width_up_to(line, WINDOW).is_some()
}

/// The columns `text` takes, if no more than `most`.
fn width_up_to(text: &str, most: usize) -> Option<usize> {
    let mut column = 0;
    for ch in text.chars() {
        column += cell_width(ch, column);
        if column > most {
            return None;
        }
    }
    Some(column)
}

/// Where the window of a long `line` around byte `at` starts: [`BEFORE`] characters before
/// `at`, or earlier when the rest of the line is short, so that the window is full.
fn window_start(line: &str, at: usize) -> usize {
    let before = line.get(..at.min(line.len())).unwrap_or_default();
    let start = before
        .char_indices()
        .rev()
        .take(BEFORE)
        .last()
        .map_or(0, |(i, _)| i);
    // Both marks of a cut take a column; a tab may take all of its stop.
    let room = WINDOW - 2;
    let Some(tail) = width_up_to(line.get(start..).unwrap_or_default(), room) else {
        return start;
    };
    let mut width = tail;
    let mut start = start;
    for (i, ch) in line.get(..start).unwrap_or_default().char_indices().rev() {
        width += if ch == '\t' {
            TAB_WIDTH
        } else {
            cell_width(ch, 0)
        };
        if width > room {
            break;
        }
        start = i;
    }
    start
}

/// The columns `ch` takes when it starts at `column`.
fn cell_width(ch: char, column: usize) -> usize {
    match ch {
        '\t' => TAB_WIDTH - column % TAB_WIDTH,
        _ => match printable(ch.encode_utf8(&mut [0; 4])) {
            std::borrow::Cow::Owned(escaped) => escaped.len(),
            std::borrow::Cow::Borrowed(_) => ch.width().unwrap_or(0),
        },
    }
}

/// Writes `ch`, starting at `column`, as it is shown.
fn push_cell(text: &mut String, ch: char, column: usize) {
    match ch {
        '\t' => text.extend(std::iter::repeat_n(' ', cell_width(ch, column))),
        _ => text.push_str(&printable(ch.encode_utf8(&mut [0; 4]))),
    }
}

#[cfg(test)]
mod tests {
    use archetype_engine::Position;

    use super::*;

    /// The snippet of the first occurrence of `what` in `text`.
    fn shown(text: &str, what: &str, help: Option<&str>) -> String {
        let start = text.find(what).expect("in the text");
        snippet(
            &TextLines::new(text),
            start..start + what.len(),
            help,
            Style::Error,
        )
        .expect("a span")
        .to_string()
    }

    #[test]
    fn underlines_a_span_on_one_line() {
        let text = "{\"a\": 1, \"bad\": 2}\n";
        let expected = "  |\n1 | {\"a\": 1, \"bad\": 2}\n  |          ^^^^^\n  |\n  = help: did you mean `a`?\n";
        assert_eq!(shown(text, "\"bad\"", Some("did you mean `a`?")), expected);
        // An empty span at the end of a line is underlined there.
        let file = TextLines::new("{\n  \"a\": 1\r\n}");
        let expected = "  |\n2 |   \"a\": 1\n  |         ^\n";
        assert_eq!(
            snippet(&file, 10..10, None, Style::Error)
                .map(|s| s.to_string())
                .as_deref(),
            Some(expected)
        );
        assert!(snippet(&file, 12..40, None, Style::Error).is_none());
    }

    #[test]
    fn related_places_follow_with_their_labels_and_one_gutter_width() {
        let a = "{ \"extends\": \"b\" }\n";
        let b = format!("{}{{ \"extends\": [\n  \"a\"\n] }}\n", "\n".repeat(9));
        let (a_lines, b_lines) = (TextLines::new(a), TextLines::new(&b));
        let a_span = a.find("\"b\"").expect("b")..a.find("\"b\"").expect("b") + 3;
        let b_span = b.find('[').expect("[")..b.find(']').expect("]") + 1;
        let pad = [(&a_lines, &a_span), (&b_lines, &b_span)]
            .into_iter()
            .filter_map(|(file, span)| gutter_width(file, span))
            .max()
            .expect("in the text");
        assert_eq!(pad, 2);
        let mut snippets = Snippets::new(pad);
        let own = Mark {
            label: Some("`a` extends `b` here"),
            primary: true,
            style: Style::Error,
        };
        assert!(snippets.place(&a_lines, a_span, own));
        snippets.related("b.json:10:13");
        let related = Mark {
            label: Some("`b` extends \u{1b}[2J here"),
            primary: false,
            style: Style::Gutter,
        };
        assert!(snippets.place(&b_lines, b_span, related));
        assert!(!snippets.place(&b_lines, 0..999, related));
        snippets.help("fix it");
        let expected = r#"   |
 1 | { "extends": "b" }
   |              ^^^ `a` extends `b` here
   |
  ::: b.json:10:13
   |
10 |   { "extends": [
   | /______________-
11 | |   "a"
12 | | ] }
   | \_- `b` extends \u{1b}[2J here
   |
   = help: fix it
"#;
        assert_eq!(snippets.finish().to_string(), expected);
    }

    #[test]
    fn draws_a_span_over_several_lines() {
        let text = "[\n{\n  \"a\": 1\n}\n]";
        let expected = "  |\n2 | / {\n3 | |   \"a\": 1\n4 | | }\n  | \\-^\n";
        assert_eq!(shown(text, "{\n  \"a\": 1\n}", None), expected);
        let text = "{\n    \"Glyph\": {\n      \"color\": \"Green\"\n    }\n}";
        let expected = r#"  |
2 |       "Glyph": {
  | /--------------^
3 | |       "color": "Green"
4 | |     }
  | \-----^
"#;
        let start = text.find("{\n      ").expect("the value");
        let span = start..text.rfind('}').expect("the end") - 1;
        assert_eq!(
            snippet(&TextLines::new(text), span, None, Style::Error)
                .map(|s| s.to_string())
                .as_deref(),
            Some(expected)
        );
    }

    #[test]
    fn a_span_over_many_lines_shows_its_first_and_last_lines() {
        let items: Vec<String> = (0..10).map(|i| format!("\n  {i}")).collect();
        let text = format!("[{}]", items.join(","));
        let expected = r#"   |
 2 | /   0,
 3 | |   1,
 4 | |   2,
 5 | |   3,
   . |
10 | |   8,
11 | |   9]
   | \---^
   |
   = help: remove some
"#;
        let span = text.find('0').expect("0")..text.find(']').expect("]");
        let file = TextLines::new(&text);
        assert_eq!(
            snippet(&file, span, Some("remove some"), Style::Error)
                .map(|s| s.to_string())
                .as_deref(),
            Some(expected)
        );
    }

    #[test]
    fn a_long_line_is_cut_to_a_window_around_the_span() {
        let fields: Vec<String> = (0..40).map(|i| format!("\"x{i:04}\":0")).collect();
        let text = format!("{{\"components\":{{\"Health\":{{{}}}}}}}", fields.join(","));
        #[rustfmt::skip]
        let cases = [
            ("\"x0001\"", r#"  |
1 | {"components":{"Health":{"x0000":0,"x0001":0,"x0002":0,"x0003":0,"x0004":0,"x0005":0,"x0006":0,"x0007":0,"x0008":0,"x00…
  |                                    ^^^^^^^
"#),
            ("\"x0020\"", r#"  |
1 | …"x0016":0,"x0017":0,"x0018":0,"x0019":0,"x0020":0,"x0021":0,"x0022":0,"x0023":0,"x0024":0,"x0025":0,"x0026":0,"x0027":…
  |                                          ^^^^^^^
"#),
            ("\"x0039\":0}}}", r#"  |
1 | …28":0,"x0029":0,"x0030":0,"x0031":0,"x0032":0,"x0033":0,"x0034":0,"x0035":0,"x0036":0,"x0037":0,"x0038":0,"x0039":0}}}
  |                                                                                                            ^^^^^^^^^^^^
"#),
            // A span longer than the window is underlined as far as the window goes.
            ("{\"x0000\"", r#"  |
1 | {"components":{"Health":{"x0000":0,"x0001":0,"x0002":0,"x0003":0,"x0004":0,"x0005":0,"x0006":0,"x0007":0,"x0008":0,"x00…
  |                         ^^^^^^^^
"#),
        ];
        for (what, expected) in cases {
            assert_eq!(shown(&text, what, None), expected, "{what}");
        }
        let start = text.find("{\"Health").expect("Health");
        let whole = snippet(
            &TextLines::new(&text),
            start..text.len() - 1,
            None,
            Style::Error,
        )
        .expect("span")
        .to_string();
        let carets = whole
            .lines()
            .last()
            .expect("carets")
            .trim_start_matches([' ', '|']);
        assert_eq!(carets, "^".repeat(WINDOW - 1 - "{\"components\":".len()));
    }

    #[test]
    fn a_fifty_megabyte_line_shows_a_window_of_it() {
        let text = format!("{{\"a\": \"{}\", \"bad\": 1}}", "x".repeat(50 << 20));
        let shown = shown(&text, "\"bad\"", None);
        let expected = format!(
            "  |\n1 | …{}\", \"bad\": 1}}\n  | {}^^^^^\n",
            "x".repeat(106),
            " ".repeat(110)
        );
        assert_eq!(shown, expected);
    }

    #[test]
    fn tabs_wide_and_control_characters_keep_the_underline_in_place() {
        let text = "{\n\t\"é\u{1b}]0;x\u{7}漢\": tru\n}";
        let expected =
            "  |\n2 |     \"é\\u{1b}]0;x\\u{7}漢\": tru\n  |                           ^^^\n";
        assert_eq!(shown(text, "tru", None), expected);
        let file = TextLines::new(text);
        let at = |line, column| file.offset(Position { line, column });
        assert_eq!(at(2, 10), text.find('漢').expect("漢"));
        assert_eq!((at(2, 99), at(9, 1)), (text.len() - 2, text.len()));
    }
}
