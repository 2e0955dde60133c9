//! Problems found in archetype and scene files, with the place they were found.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

use crate::json::FieldPath;
use crate::json::{Position, TextErrorKind};

/// How serious a [`Diagnostic`] is. More may come: a `match` needs a `_` arm (treat what it
/// does not know as a note).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Severity {
    /// The file (or the archetype it defines) cannot be used.
    #[default]
    Error,
    /// Worth fixing, but the data still loads.
    Warning,
    /// Information that changes nothing: what could not be checked, and why.
    Note,
}

impl Severity {
    /// `"error"`, `"warning"` or `"note"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of problem a [`Diagnostic`] reports.
///
/// Each code has a stable kebab-case name ([`as_str`](Self::as_str)) used in messages, in
/// `archetool validate --format json` and in the guide's [errors chapter](crate::guide::designer::errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DiagnosticCode {
    /// The file could not be read.
    Io,
    /// The file is not valid UTF-8.
    Encoding,
    /// The file is not valid JSON.
    Syntax,
    /// An object has the same key twice.
    DuplicateKey,
    /// The file is larger than the configured limit.
    TooLarge,
    /// Values or children are nested deeper than the configured limit.
    TooDeep,
    /// The top level of the file is not a JSON object.
    NotAnObject,
    /// A key the format does not define (a typo such as `"extend"`).
    UnknownKey,
    /// A format key holds the wrong kind of value (`"abstract": "yes"`).
    Malformed,
    /// The file declares a format version newer than this library reads.
    UnsupportedFormat,
    /// An archetype or child name escapes the root or uses characters outside the allowed set.
    InvalidName,
    /// Two files whose names differ only in letter case.
    CaseConflict,
    /// A component name that is not registered.
    UnknownComponent,
    /// A component the library manages itself (`Parent`, `StableId`, ...) written by hand.
    ReservedComponent,
    /// A component value of the wrong shape or type, or missing a required field.
    InvalidComponent,
    /// A field the component type does not have (usually a typo).
    UnknownField,
    /// `extends` or a child names an archetype that does not exist.
    UnknownArchetype,
    /// Archetypes that extend (or contain) each other in a loop.
    InheritanceCycle,
    /// An entity reference (`"#name"`) to a child the archetype does not have.
    UnknownChild,
    /// The archetype cannot be built because something it depends on has errors.
    BrokenDependency,
    /// A name an archetype (or a child) was formerly known by, used where its current name
    /// belongs: it still works (a warning), `archetool migrate` writes the current name.
    OldName,
    /// A former name (`formerly`) that is the name of a live archetype, or a former name of
    /// two archetypes: it could stand for either.
    FormerNameClash,
    /// An operator (`{"$append": [..]}`, ...) that is unknown, malformed, or cannot apply to
    /// the value it changes.
    InvalidOperator,
    /// An operator that had nothing to work on in a concrete archetype (a warning).
    UnusedOperator,
    /// A value that changes nothing: a `null` where nothing is inherited to remove, a
    /// `$remove` item the inherited list does not hold (a warning).
    ChangesNothing,
    /// A value a file writes that equals what the archetype inherits there (a note, when
    /// [`LoadOptions::same_as_inherited`](crate::LoadOptions::same_as_inherited) asks for it).
    SameAsInherited,
    /// An [`AssetPath`](crate::AssetPath) naming no file under the assets root, a file of the
    /// wrong kind, or a path that leaves the root.
    InvalidAsset,
}

impl DiagnosticCode {
    /// Whether the file could not be read as JSON at all (I/O, encoding, syntax, duplicate keys,
    /// size and depth limits): tools that rewrite files leave such files alone.
    pub fn is_unreadable(self) -> bool {
        use DiagnosticCode::*;
        matches!(
            self,
            Io | Encoding | Syntax | DuplicateKey | TooLarge | TooDeep
        )
    }

    /// Every code, in the order the guide's errors chapter explains them.
    pub const ALL: &'static [DiagnosticCode] = {
        use DiagnosticCode::*;
        &[
            Io,
            Encoding,
            Syntax,
            DuplicateKey,
            TooLarge,
            TooDeep,
            NotAnObject,
            UnknownKey,
            Malformed,
            UnsupportedFormat,
            InvalidName,
            CaseConflict,
            UnknownComponent,
            ReservedComponent,
            InvalidComponent,
            UnknownField,
            UnknownArchetype,
            InheritanceCycle,
            UnknownChild,
            BrokenDependency,
            OldName,
            FormerNameClash,
            InvalidOperator,
            UnusedOperator,
            ChangesNothing,
            SameAsInherited,
            InvalidAsset,
        ]
    };

    /// The code whose [`as_str`](Self::as_str) name is `name`, e.g. `unknown-component`.
    ///
    /// ```
    /// use archetype_engine::DiagnosticCode;
    ///
    /// assert_eq!(DiagnosticCode::from_name("unknown-component"), Some(DiagnosticCode::UnknownComponent));
    /// assert_eq!(DiagnosticCode::from_name("UnknownComponent"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|code| code.as_str() == name)
    }

    /// The code's entry in the guide's errors chapter
    /// ([`guide::designer::errors`](crate::guide::designer::errors)), in Markdown: what the
    /// problem is, an example, the message and how to fix it (`archetool explain CODE` prints it).
    pub fn explanation(self) -> &'static str {
        crate::guide::error_entry(self.as_str()).unwrap_or("")
    }

    /// The first sentence of the code's [`explanation`](Self::explanation), on one line: a
    /// short description for a rule list (SARIF's `shortDescription`).
    ///
    /// ```
    /// use archetype_engine::DiagnosticCode;
    ///
    /// assert!(!DiagnosticCode::UnknownComponent.summary().is_empty());
    /// ```
    pub fn summary(self) -> String {
        crate::guide::entry_summary(self.explanation())
    }

    /// Where the code's explanation is published: its entry in the guide on docs.rs, for the
    /// version of the crate that reported it.
    ///
    /// ```
    /// use archetype_engine::DiagnosticCode;
    ///
    /// assert!(DiagnosticCode::UnknownField.help_uri().ends_with("/guide/designer/errors/index.html#unknown-field"));
    /// ```
    pub fn help_uri(self) -> String {
        format!(
            "https://docs.rs/archetype-engine/{}/archetype_engine/guide/designer/errors/index.html#{}",
            env!("CARGO_PKG_VERSION"),
            self.as_str()
        )
    }

    /// The stable kebab-case name of the code, e.g. `unknown-component`.
    pub fn as_str(self) -> &'static str {
        use DiagnosticCode::*;
        match self {
            Io => "io",
            Encoding => "encoding",
            Syntax => "syntax",
            DuplicateKey => "duplicate-key",
            TooLarge => "too-large",
            TooDeep => "too-deep",
            NotAnObject => "not-an-object",
            UnknownKey => "unknown-key",
            Malformed => "malformed",
            UnsupportedFormat => "unsupported-format",
            InvalidName => "invalid-name",
            CaseConflict => "case-conflict",
            UnknownComponent => "unknown-component",
            ReservedComponent => "reserved-component",
            InvalidComponent => "invalid-component",
            UnknownField => "unknown-field",
            UnknownArchetype => "unknown-archetype",
            InheritanceCycle => "inheritance-cycle",
            UnknownChild => "unknown-child",
            BrokenDependency => "broken-dependency",
            OldName => "old-name",
            FormerNameClash => "former-name-clash",
            InvalidOperator => "invalid-operator",
            UnusedOperator => "unused-operator",
            ChangesNothing => "changes-nothing",
            SameAsInherited => "same-as-inherited",
            InvalidAsset => "invalid-asset",
        }
    }
}

impl From<TextErrorKind> for DiagnosticCode {
    fn from(kind: TextErrorKind) -> Self {
        match kind {
            TextErrorKind::Encoding => DiagnosticCode::Encoding,
            TextErrorKind::Syntax => DiagnosticCode::Syntax,
            TextErrorKind::DuplicateKey => DiagnosticCode::DuplicateKey,
            TextErrorKind::TooDeep => DiagnosticCode::TooDeep,
        }
    }
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in a data file: what is wrong, where, and what to do about it.
///
/// Displays on one line, the way compilers print errors:
///
/// ```text
/// archetypes/enemies/goblin.json:12:7: error[unknown-component]: unknown component `Helth`; did you mean `Health`?
/// ```
///
/// A problem that concerns other places too (the [`related`](Self::related) ones, an
/// inheritance cycle's links) names them at the end, without their labels:
///
/// ```text
/// archetypes/a.json:1:14: error[inheritance-cycle]: inheritance cycle: a -> b -> a; see also archetypes/b.json:1:14
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The kind of problem.
    pub code: DiagnosticCode,
    /// A plain, lowercase description of the problem.
    pub message: String,
    /// The file the problem is in, as it was found (root joined with the relative path).
    pub file: Option<PathBuf>,
    /// Line and column (both 1-based, column in characters) where the problem is.
    pub position: Option<Position>,
    /// Byte range in the file's text (after any byte-order mark) to underline.
    pub span: Option<Range<usize>>,
    /// The archetype concerned, e.g. `enemies/goblin`.
    pub archetype: Option<String>,
    /// The component concerned, e.g. `Health`.
    pub component: Option<String>,
    /// The place inside the component, e.g. `max` for `Health.max`.
    pub field: Option<FieldPath>,
    /// A replacement that is probably what was meant (rendered as "did you mean `...`?").
    pub suggestion: Option<String>,
    /// Other places the problem concerns, each with a short label: every link of an
    /// inheritance cycle, in the file of the archetype that makes it. May include the
    /// diagnostic's own place, labelled ([`own_label`](Self::own_label)); empty for most
    /// problems.
    pub related: Vec<Related>,
}

/// A place a [`Diagnostic`] concerns besides its own, with what happens there: a link of an
/// inheritance cycle (``"`b` extends `a` here"``).
///
/// Displays on one line: `file:line:col: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Related {
    /// The file, as the diagnostic names files (root joined with the relative path).
    pub file: PathBuf,
    /// Line and column (both 1-based, column in characters), when known.
    pub position: Option<Position>,
    /// Byte range in the file's text (after any byte-order mark) to underline, when known.
    pub span: Option<Range<usize>>,
    /// A short label for the place, e.g. ``"`b` extends `a` here"``.
    pub message: String,
}

impl Related {
    /// A place in `file` (not located further yet) with its label. Control characters in the
    /// label are escaped, as in [`Diagnostic::error`].
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Related {
            file: file.into(),
            position: None,
            span: None,
            message: printable(&message.into()).into_owned(),
        }
    }
}

impl fmt::Display for Related {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", printable(&self.file.display().to_string()))?;
        if let Some(position) = self.position {
            write!(f, ":{}:{}", position.line, position.column)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl Diagnostic {
    /// A new error with just a code and a message; fill in the rest with the `with_*` methods.
    ///
    /// Control characters in the message (from names and keys quoted from a file) are escaped
    /// with [`printable`], so every message is safe to print on a terminal.
    pub fn error(code: DiagnosticCode, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = match printable(&message) {
            Cow::Borrowed(_) => message,
            Cow::Owned(escaped) => escaped,
        };
        Diagnostic {
            severity: Severity::Error,
            code,
            message,
            file: None,
            position: None,
            span: None,
            archetype: None,
            component: None,
            field: None,
            suggestion: None,
            related: Vec::new(),
        }
    }

    /// Sets the file.
    pub fn with_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// Sets the archetype name.
    pub fn with_archetype(mut self, archetype: impl Into<String>) -> Self {
        self.archetype = Some(archetype.into());
        self
    }

    /// Sets the component name.
    pub fn with_component(mut self, component: impl Into<String>) -> Self {
        self.component = Some(component.into());
        self
    }

    /// Sets the field path inside the component.
    pub fn with_field(mut self, field: FieldPath) -> Self {
        self.field = Some(field);
        self
    }

    /// Sets the suggestion.
    pub fn with_suggestion(mut self, suggestion: Option<String>) -> Self {
        self.suggestion = suggestion;
        self
    }

    /// Adds a related place.
    pub fn with_related(mut self, related: Related) -> Self {
        self.related.push(related);
        self
    }

    /// Whether `related` is this diagnostic's own place.
    fn is_own_place(&self, related: &Related) -> bool {
        self.file.as_deref() == Some(related.file.as_path())
            && self.position == related.position
            && self.span == related.span
    }

    /// The label of the diagnostic's own place, when one of [`related`](Self::related) is
    /// there (a report shows it under the place, as rustc labels its primary span).
    pub fn own_label(&self) -> Option<&str> {
        self.related
            .iter()
            .find(|related| self.is_own_place(related))
            .map(|related| related.message.as_str())
    }

    /// The [`related`](Self::related) places other than the diagnostic's own, in order.
    pub fn related_elsewhere(&self) -> impl Iterator<Item = &Related> {
        self.related
            .iter()
            .filter(|related| !self.is_own_place(related))
    }

    /// Sets the severity.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Whether this is an error (as opposed to a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The help line for the suggestion, e.g. ``did you mean `Health`?``.
    pub fn help(&self) -> Option<String> {
        self.suggestion
            .as_ref()
            .map(|suggestion| format!("did you mean `{suggestion}`?"))
    }

    /// The order diagnostics are reported in: by file, then position, then message. Most
    /// neighbours are in the same file: equal paths are told by their bytes, without the
    /// component-wise comparison that orders different ones.
    pub(crate) fn report_order(&self, other: &Diagnostic) -> std::cmp::Ordering {
        let files = match (&self.file, &other.file) {
            (Some(a), Some(b)) if a.as_os_str() == b.as_os_str() => std::cmp::Ordering::Equal,
            (a, b) => a.cmp(b),
        };
        let place = |d: &Diagnostic| d.position.map(|p| (p.line, p.column));
        files
            .then_with(|| place(self).cmp(&place(other)))
            .then_with(|| self.message.cmp(&other.message))
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", printable(&file.display().to_string()))?;
            if let Some(position) = self.position {
                write!(f, ":{}:{}", position.line, position.column)?;
            }
            f.write_str(": ")?;
        }
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)?;
        if let Some(help) = self.help() {
            write!(f, "; {help}")?;
        }
        for (i, related) in self.related_elsewhere().enumerate() {
            f.write_str(if i == 0 { "; see also " } else { ", " })?;
            write!(f, "{}", printable(&related.file.display().to_string()))?;
            if let Some(position) = related.position {
                write!(f, ":{}:{}", position.line, position.column)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// The message and the suggestion for a key `key` that an object (`place`: "an archetype
/// file", "a scene file") does not have, `allowed` being the keys it has.
pub(crate) fn unknown_key(key: &str, allowed: &[&str], place: &str) -> (String, Option<String>) {
    let list: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
    let message = format!(
        "unknown key {} in {place}; expected one of {}",
        quoted(key),
        list.join(", ")
    );
    (
        message,
        crate::json::did_you_mean(key, allowed.iter().copied()),
    )
}

/// `name` in backticks, for a message. A name longer than 64 characters is cut, with its
/// length in bytes, so a runaway key or name (a megabyte is under the file size limit) does
/// not make a megabyte-long message; control characters are escaped ([`printable`]).
pub(crate) fn quoted(name: &str) -> String {
    const SHOWN: usize = 64;
    match name.char_indices().nth(SHOWN) {
        None => format!("`{}`", printable(name)),
        Some((cut, _)) => format!("`{}…` ({} bytes)", printable(&name[..cut]), name.len()),
    }
}

/// `text` as it may be printed on a terminal: every control character but tab is written as
/// its Rust escape (`\u{1b}`, `\n`, `\r`, `\0`, `\u{9b}`), so text taken from a file cannot
/// move the cursor, retitle the window or clear the screen. Everything else, Unicode text
/// included, is unchanged; text without control characters is returned as it is.
///
/// The library applies it to every message it builds ([`Diagnostic::error`]); `archetool`
/// applies it to everything it prints.
///
/// # Example
/// ```
/// use archetype_engine::printable;
///
/// assert_eq!(printable("\u{1b}]0;pwned\u{7}é"), "\\u{1b}]0;pwned\\u{7}é");
/// assert_eq!(printable("goblin\tarcher"), "goblin\tarcher");
/// ```
pub fn printable(text: &str) -> Cow<'_, str> {
    let escaped = |ch: char| ch.is_control() && ch != '\t';
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        if escaped(ch) {
            out.extend(ch.escape_debug());
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// Sorts diagnostics into reporting order and drops exact duplicates (an abstract parent's
/// mistake is found once per concrete descendant, but reported once).
pub(crate) fn sort_and_dedup(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(Diagnostic::report_order);
    diagnostics
        .dedup_by(|a, b| a.file == b.file && a.position == b.position && a.message == b.message);
}

/// A list of diagnostics that displays one per line, e.g. as the error of a failed load.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Number of errors (not counting warnings).
    pub fn error_count(&self) -> usize {
        self.0.iter().filter(|d| d.is_error()).count()
    }

    /// Number of warnings.
    pub fn warning_count(&self) -> usize {
        self.count(Severity::Warning)
    }

    /// Number of notes.
    pub fn note_count(&self) -> usize {
        self.count(Severity::Note)
    }

    fn count(&self, severity: Severity) -> usize {
        self.0.iter().filter(|d| d.severity == severity).count()
    }

    /// Iterates over the diagnostics in reporting order.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, diagnostic) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{diagnostic}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_in_messages() {
        assert_eq!(quoted("goblin"), "`goblin`");
        let long = "é".repeat(100);
        assert_eq!(quoted(&long), format!("`{}…` (200 bytes)", "é".repeat(64)));
        assert_eq!(quoted(&"a".repeat(64)), format!("`{}`", "a".repeat(64)));
    }

    #[test]
    fn control_characters_are_escaped_in_messages() {
        #[rustfmt::skip]
        let cases = [
            ("\u{1b}]0;pwned\u{7}\u{1b}[2J", r"\u{1b}]0;pwned\u{7}\u{1b}[2J"),
            ("a\nb\rc\0d\u{7f}e\u{9b}f", r"a\nb\rc\0d\u{7f}e\u{9b}f"),
            ("tab\tstays, é and 😀 too", "tab\tstays, é and 😀 too"),
        ];
        for (text, escaped) in cases {
            assert_eq!(printable(text), escaped);
            assert_eq!(
                printable(escaped),
                escaped,
                "escaping twice changes nothing"
            );
        }
        assert!(matches!(printable("goblin"), Cow::Borrowed("goblin")));
        assert_eq!(quoted("\u{1b}[2J"), r"`\u{1b}[2J`");
        let long = format!("{}\u{1b}", "a".repeat(63));
        assert_eq!(quoted(&long), format!("`{}\\u{{1b}}`", "a".repeat(63)));
        let diagnostic = Diagnostic::error(DiagnosticCode::UnknownKey, "unknown key `\u{1b}[2J`")
            .with_file("archetypes/\u{7}.json");
        let expected = r"archetypes/\u{7}.json: error[unknown-key]: unknown key `\u{1b}[2J`";
        assert_eq!(diagnostic.to_string(), expected);
        let related = Related::new("archetypes/\u{7}.json", "`\u{1b}` here");
        assert_eq!(related.to_string(), r"archetypes/\u{7}.json: `\u{1b}` here");
    }

    #[test]
    fn related_places_other_than_its_own_end_the_one_line_form() {
        let place = |file: &str, line: usize, column: usize, message: &str| {
            let mut related = Related::new(file, message);
            related.position = Some(Position { line, column });
            related.span = Some(column..column + 3);
            related
        };
        let mut diagnostic = Diagnostic::error(DiagnosticCode::InheritanceCycle, "cycle")
            .with_file("a.json")
            .with_related(place("a.json", 1, 14, "`a` extends `b` here"))
            .with_related(place("b.json", 2, 5, "`b` extends `c` here"))
            .with_related(Related::new("c.json", "`c` extends `a` here"));
        assert_eq!(diagnostic.own_label(), None);
        diagnostic.position = Some(Position {
            line: 1,
            column: 14,
        });
        diagnostic.span = Some(14..17);
        assert_eq!(diagnostic.own_label(), Some("`a` extends `b` here"));
        let elsewhere: Vec<String> = diagnostic
            .related_elsewhere()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            elsewhere,
            [
                "b.json:2:5: `b` extends `c` here",
                "c.json: `c` extends `a` here"
            ]
        );
        assert_eq!(
            diagnostic.to_string(),
            "a.json:1:14: error[inheritance-cycle]: cycle; see also b.json:2:5, c.json"
        );
        // Its own place alone adds nothing.
        diagnostic.related.truncate(1);
        assert_eq!(
            diagnostic.to_string(),
            "a.json:1:14: error[inheritance-cycle]: cycle"
        );
    }
}
