//! serde's and serde_json's error messages, read: the one place the library looks at their
//! words. serde_json's error carries a category and a position but no typed reason (a missing
//! comma, a comment, its recursion limit, an unknown field all arrive as text), so what the
//! library says about them — where exactly, in which words, with which hint — starts from the
//! message here. Everywhere else, errors are classified by their types.

use crate::json::text::{is_json_whitespace, TextErrorKind, BOM, SERDE_RECURSION_LIMIT};

/// serde_json's message without the ` at line L column C` it appends (the library says where
/// in its own way).
pub(crate) fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(at) if message[at + " at line ".len()..].contains(" column ") => &message[..at],
        _ => message,
    }
}

/// Whether serde's message is about a key naming a field (an unknown or duplicate field),
/// which serde_json places at the key's closing quote.
pub(crate) fn names_a_field(message: &str) -> bool {
    message.starts_with("unknown field") || message.starts_with("duplicate field")
}

/// Whether serde_json's message is about a control character (a raw newline) in a string.
pub(crate) fn is_control_character(message: &str) -> bool {
    message.starts_with("control character")
}

/// The kind of a serde_json syntax error, from serde_json's own wording (its error has no
/// typed category for its recursion limit): too deep, or syntax.
pub(crate) fn syntax_error_kind(serde_message: &str) -> TextErrorKind {
    if serde_message == "recursion limit exceeded" {
        TextErrorKind::TooDeep
    } else {
        TextErrorKind::Syntax
    }
}

/// A syntax error in serde_json's words (`message`, at byte `offset` of `text`), said the way
/// this project says it: what the designer wrote (`NaN`, a comment, single quotes, a second
/// byte-order mark) when that is what the parser stumbled on, and the start of an
/// out-of-range number rather than its end. A missing comma is placed just after the value it
/// should follow and a trailing comma on the comma, not on the token after them (often on the
/// next line). Returns the offset to report and the message.
pub(crate) fn explain_syntax_error(text: &str, offset: usize, message: &str) -> (usize, String) {
    if let Some(placed) = place_comma_error(text, offset, message) {
        return placed;
    }
    if matches!(
        message,
        "expected value" | "invalid number" | "expected ident"
    ) {
        if let Some((start, literal)) = non_finite_literal(text, offset) {
            return (
                start,
                format!("`{literal}` is not valid JSON; write a number or null"),
            );
        }
    }
    if message == "recursion limit exceeded" {
        // serde_json's own limit, where a configured one is higher (or none applies).
        return (
            offset,
            format!("nesting deeper than {} levels", SERDE_RECURSION_LIMIT - 1),
        );
    }
    if message == "number out of range" {
        let bytes = text.as_bytes();
        let mut start = offset.min(bytes.len());
        while start > 0
            && matches!(
                bytes[start - 1],
                b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'
            )
        {
            start -= 1;
        }
        return (start, "number out of range".to_owned());
    }
    let rest = text.get(offset..).unwrap_or_default();
    let hint = if rest.starts_with("//") || rest.starts_with("/*") {
        Some("comments are not valid JSON; remove the comment")
    } else if rest.starts_with('\'') {
        Some("JSON strings and keys use double quotes (`\"`), not single quotes")
    } else if rest.starts_with(BOM) {
        Some("unexpected byte-order mark (U+FEFF); a file may start with one, but only one")
    } else {
        None
    };
    match hint {
        Some(hint) => (offset, format!("{} ({hint})", plain_message(message))),
        None => (offset, plain_message(message)),
    }
}

/// A comma error placed where the comma is (a trailing one) or belongs (a missing one), with
/// the end of the text before `offset` skipping whitespace; `None` for other errors.
fn place_comma_error(text: &str, offset: usize, message: &str) -> Option<(usize, String)> {
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let last = (0..end).rev().find(|&i| !is_json_whitespace(bytes[i]))?;
    match message {
        "trailing comma" if bytes[last] == b',' => Some((
            last,
            "trailing comma; remove the `,` after the last member".to_owned(),
        )),
        "expected `,` or `}`" | "expected `,` or `]`" if last + 1 < end => {
            Some((last + 1, format!("{message} after this value")))
        }
        _ => None,
    }
}

/// serde_json's wording, in the plain lowercase style of the project's other messages.
pub(crate) fn plain_message(message: &str) -> String {
    match message.strip_prefix("EOF while parsing") {
        Some(rest) => format!("unexpected end of file while parsing{rest}"),
        None => message.to_owned(),
    }
}

/// Finds a NaN or infinity literal covering `offset`. serde_json has already
/// consumed the `-` of `-Infinity` and the `n` of `nan` when it complains.
fn non_finite_literal(text: &str, offset: usize) -> Option<(usize, &'static str)> {
    const LITERALS: [&str; 6] = ["-Infinity", "+Infinity", "Infinity", "NaN", "nan", "inf"];
    [offset.checked_sub(1), Some(offset)]
        .into_iter()
        .flatten()
        .find_map(|start| {
            let rest = text.get(start..)?;
            let literal = LITERALS.into_iter().find(|literal| {
                let ends_word = !matches!(rest.as_bytes().get(literal.len()),
                Some(b) if b.is_ascii_alphanumeric() || *b == b'_');
                rest.starts_with(literal) && start + literal.len() > offset && ends_word
            })?;
            Some((start, literal))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_serde_json_appends_is_removed_and_nothing_else() {
        assert_eq!(
            strip_position("expected value at line 3 column 7"),
            "expected value"
        );
        assert_eq!(
            strip_position("unknown field `hp` at line 1 column 9"),
            "unknown field `hp`"
        );
        // A message that mentions a line without serde_json's suffix is kept whole.
        assert_eq!(strip_position("goblin at line 4"), "goblin at line 4");
        assert_eq!(strip_position("no position"), "no position");
    }

    #[test]
    fn serde_messages_are_classified_by_their_words() {
        assert!(names_a_field("unknown field `hp`, expected `max`"));
        assert!(names_a_field("duplicate field `max`"));
        assert!(!names_a_field("invalid type: string \"a\", expected f32"));
        assert!(is_control_character(
            "control character (\\u0000-\\u001F) found while parsing a string"
        ));
        assert_eq!(
            syntax_error_kind("recursion limit exceeded"),
            TextErrorKind::TooDeep
        );
        assert_eq!(syntax_error_kind("expected value"), TextErrorKind::Syntax);
        assert_eq!(
            plain_message("EOF while parsing a list"),
            "unexpected end of file while parsing a list"
        );
    }

    #[test]
    fn syntax_errors_are_explained_in_the_projects_words() {
        let text = "[1, NaN]";
        assert_eq!(
            explain_syntax_error(text, 5, "expected value"),
            (
                4,
                "`NaN` is not valid JSON; write a number or null".to_string()
            )
        );
        assert_eq!(
            explain_syntax_error("[1,]", 3, "trailing comma"),
            (
                2,
                "trailing comma; remove the `,` after the last member".to_string()
            )
        );
        assert_eq!(
            explain_syntax_error("[1 2]", 3, "expected `,` or `]`"),
            (2, "expected `,` or `]` after this value".to_string())
        );
    }
}
