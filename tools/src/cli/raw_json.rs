//! JSON as written: a tree whose scalars keep their exact text and whose keys and values know
//! their byte spans, and the canonical printer `archetool fmt` writes files with.
//!
//! Why not `serde_json::Value`: without serde_json's `arbitrary_precision` a number loses its
//! spelling (`1e3` would come back as `1000.0`, `1.50` as `1.5`) and strings lose their escapes
//! (`"\u00e9"` would come back as `"é"`). Keeping the text of every scalar makes formatting a
//! pure layout change, and the spans let `migrate` edit a file in place without reformatting it.
//! The text is parsed by jsonc-parser (see [`parse`] for why, measured); this module keeps
//! the tree the commands use and the printer.

use std::collections::HashSet;
use std::ops::Range;

use archetype_engine::keys;
use archetype_engine::tooling::TextLines;
use jsonc_parser::ast;
use jsonc_parser::common::{Range as AstRange, Ranged};
use jsonc_parser::tokens::Token;
use jsonc_parser::{
    parse_to_ast, CollectOptions, CommentCollectionStrategy, ParseOptions, Scanner, ScannerOptions,
};
use serde_json::Value;

/// How deep objects and arrays may nest (the engine's own parser refuses deeper files before
/// this matters; the limit keeps the recursion bounded for any input).
const MAX_DEPTH: usize = 256;

/// The widest line a short array or object may take up when written on one line, counting the
/// comma that may follow it.
const MAX_INLINE_WIDTH: usize = 100;

/// A JSON value as written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    /// What the value is.
    pub kind: NodeKind,
    /// Byte range of the value in the text it was parsed from.
    pub span: Range<usize>,
}

/// The kinds of [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NodeKind {
    /// An object's members, in file order.
    Object(Vec<Member>),
    /// An array's elements.
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`, exactly as written (strings with quotes).
    Scalar(String),
}

/// One `"key": value` of an object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Member {
    /// The key, unescaped.
    pub key: String,
    /// The key as written, quotes and escapes included.
    pub key_text: String,
    /// Byte range of the key as written.
    pub key_span: Range<usize>,
    /// The value.
    pub value: Node,
}

impl Node {
    /// The members, if this is an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            NodeKind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The value of `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.members()?
            .iter()
            .find(|member| member.key == key)
            .map(|member| &member.value)
    }

    /// A tree for a parsed value (for printing values that were not read from a file).
    pub fn from_value(value: &Value) -> Node {
        let kind = match value {
            Value::Object(object) => NodeKind::Object(
                object
                    .iter()
                    .map(|(key, value)| Member {
                        key: key.clone(),
                        key_text: Value::String(key.clone()).to_string(),
                        key_span: 0..0,
                        value: Node::from_value(value),
                    })
                    .collect(),
            ),
            Value::Array(items) => NodeKind::Array(items.iter().map(Node::from_value).collect()),
            scalar => NodeKind::Scalar(scalar.to_string()),
        };
        Node { kind, span: 0..0 }
    }
}

/// Why a text is not JSON this module reads, and where (byte offset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParseError {
    /// What is wrong.
    pub message: String,
    /// Where, as a byte offset into the text.
    pub offset: usize,
}

/// Parses one JSON value (surrounded by optional whitespace), rejecting duplicate keys.
///
/// The parsing is jsonc-parser's, with every one of its JSONC extensions off (no comments,
/// trailing or missing commas, single quotes, bare keys, hexadecimal or non-finite numbers).
/// Measured against the hand-written parser this module had, parsing alone (a 12 MB object of
/// 200,000 members: 106 ms against 321 ms, medians of 11; the 20 demo archetype files ×50:
/// 1.24 ms against 1.71 ms, medians of 51) and as `archetool fmt --check` of the bench's
/// 2.3 MB, 200,000-key file (`diagnostics_fmt_check_200k_keys_ms`: 935 ms against 1,150 ms,
/// medians of 5 and 3), it is faster and well kept, and its tree keeps what `fmt` and
/// `migrate` need: each value's byte range and each number's text. What strict JSON
/// refuses and JSONC allows is checked on its tree here: a key twice in one object, a raw
/// control character in a string, nesting deeper than [`MAX_DEPTH`].
pub(crate) fn parse(text: &str) -> Result<Node, ParseError> {
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: false,
    };
    let parsed = parse_to_ast(text, &collect, &strict_json()).map_err(|error| ParseError {
        message: lowercase_first(&error.kind().to_string()),
        offset: error.range().start,
    })?;
    let Some(value) = parsed.value else {
        return Err(ParseError {
            message: "expected a JSON value".to_string(),
            offset: text.len(),
        });
    };
    node(&value, text, 0)
}

/// jsonc-parser reading JSON, none of JSONC.
fn strict_json() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_extended_string_escapes: false,
        allow_non_finite_numbers: false,
    }
}

/// jsonc-parser's messages start with a capital; the project's are lowercase.
fn lowercase_first(message: &str) -> String {
    let mut chars = message.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// The text of `range` in `text`.
fn slice(text: &str, range: AstRange) -> &str {
    text.get(range.start..range.end).unwrap_or_default()
}

/// Our tree for jsonc-parser's, checking what JSONC allows and JSON does not.
fn node(value: &ast::Value<'_>, text: &str, depth: usize) -> Result<Node, ParseError> {
    let range = value.range();
    if depth >= MAX_DEPTH {
        return Err(ParseError {
            message: format!("nested deeper than {MAX_DEPTH} levels"),
            offset: range.start,
        });
    }
    let kind = match value {
        ast::Value::Object(object) => NodeKind::Object(members(object, text, depth)?),
        ast::Value::Array(array) => NodeKind::Array(
            array
                .elements
                .iter()
                .map(|element| node(element, text, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        ast::Value::StringLit(string) => NodeKind::Scalar(string_text(text, string.range)?),
        other => NodeKind::Scalar(slice(text, other.range()).to_string()),
    };
    Ok(Node {
        kind,
        span: range.start..range.end,
    })
}

fn members(object: &ast::Object<'_>, text: &str, depth: usize) -> Result<Vec<Member>, ParseError> {
    let mut members = Vec::with_capacity(object.properties.len());
    // The keys seen so far, so that a repeated key is found in constant time however wide
    // the object (std's hasher is randomly keyed: no file can make its keys collide).
    let mut keys: HashSet<&str> = HashSet::with_capacity(object.properties.len());
    for property in &object.properties {
        let ast::ObjectPropName::String(name) = &property.name else {
            // Bare keys are refused by the options; a word here would be a parser change.
            return Err(ParseError {
                message: "expected a string for an object key".to_string(),
                offset: property.range.start,
            });
        };
        let key_text = string_text(text, name.range)?;
        if !keys.insert(&name.value) {
            return Err(ParseError {
                message: format!("key `{}` appears twice in one object", name.value),
                offset: name.range.start,
            });
        }
        members.push(Member {
            key: name.value.to_string(),
            key_text,
            key_span: name.range.start..name.range.end,
            value: node(&property.value, text, depth + 1)?,
        });
    }
    Ok(members)
}

/// A string as written, refusing the raw control characters JSON does not allow in one.
fn string_text(text: &str, range: AstRange) -> Result<String, ParseError> {
    let written = slice(text, range);
    match written.bytes().position(|byte| byte < 0x20) {
        Some(at) => Err(ParseError {
            message: "control character in a string; write it escaped (`\\n`, `\\u0000`)"
                .to_string(),
            offset: range.start + at,
        }),
        None => Ok(written.to_string()),
    }
}

/// The 1-based line and column (in characters) of a byte offset in `text` (the one rule of
/// `archetool`'s reports, [`TextLines::position`]).
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let position = TextLines::new(text).position(offset);
    (position.line, position.column)
}

/// The span of the JSON value (or object key) that starts at `offset`, or an empty span there
/// if none does.
pub(crate) fn value_span_at(text: &str, offset: usize) -> Range<usize> {
    let offset = offset.min(text.len());
    let rest = text.get(offset..).unwrap_or_default();
    match value_end(rest) {
        Some(end) => offset..offset + end,
        None => offset..offset,
    }
}

/// Where the value (or key) at the very start of `text` ends: its first token, or up to the
/// bracket that closes it. Tokens are scanned only as far as the value goes.
fn value_end(text: &str) -> Option<usize> {
    let options = ScannerOptions {
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let mut scanner = Scanner::new(text, &options);
    let mut depth = 0usize;
    loop {
        let token = scanner.scan().ok()??;
        if depth == 0 && scanner.token_start() != 0 {
            return None;
        }
        match token {
            Token::OpenBrace | Token::OpenBracket => depth += 1,
            Token::CloseBrace | Token::CloseBracket => depth = depth.checked_sub(1)?,
            // Not JSON (`tru`, a bare word): no value starts here.
            Token::Word(_) if depth == 0 => return None,
            _ => {}
        }
        if depth == 0 {
            return Some(scanner.token_end());
        }
    }
}

/// The place of an object in an archetype file, which decides the order of its keys and whether
/// it may be written on one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// The top level of an archetype file: keys in [`keys::TOP_LEVEL`] order.
    Archetype,
    /// A child entry: keys in [`keys::CHILD`] order.
    Child,
    /// A `children` object: child names sorted, each value a child entry.
    ChildMap,
    /// A `components` object: component names sorted, each value a [`Layout::Value`].
    Components,
    /// Anything else (component values and what is inside them, JSON that is not an archetype
    /// file): keys sorted; short objects on one line.
    Value,
}

impl Layout {
    /// Where `key` comes in an object of this layout: its rank in the format's key order (keys
    /// the format does not know come last), then the key itself.
    fn rank(self, key: &str) -> (usize, &str) {
        let order: &[&str] = match self {
            Layout::Archetype => &keys::TOP_LEVEL,
            Layout::Child => &keys::CHILD,
            Layout::ChildMap | Layout::Components | Layout::Value => &[],
        };
        let rank = order
            .iter()
            .position(|known| *known == key)
            .unwrap_or(order.len());
        (rank, key)
    }

    /// The layout of the value under `key` in an object of this layout.
    fn of_value(self, key: &str) -> Layout {
        match self {
            Layout::Archetype | Layout::Child if key == keys::CHILDREN => Layout::ChildMap,
            Layout::Archetype | Layout::Child if key == keys::COMPONENTS => Layout::Components,
            Layout::ChildMap => Layout::Child,
            _ => Layout::Value,
        }
    }

    /// Whether an object of this layout may be written on one line. The file's structure (the
    /// top level, `components`, `children`, child entries) is always one member per line, so
    /// adding a component or a child is a one-line change.
    fn may_inline(self) -> bool {
        self == Layout::Value
    }
}

/// Writes `node` in canonical form: two-space indentation, object keys in `layout` order, short
/// arrays and objects on one line (see [`inline`]), scalars exactly as written, and a final
/// newline.
pub(crate) fn to_canonical_string(node: &Node, layout: Layout) -> String {
    let mut out = String::new();
    write_node(&mut out, node, layout, 0, 0);
    out.push('\n');
    out
}

/// Writes `node` at `indent` levels; `column` is where on its line it starts.
fn write_node(out: &mut String, node: &Node, layout: Layout, indent: usize, column: usize) {
    if let Some(inline) = inline(node, layout) {
        // The comma that may follow must fit too.
        if column + inline.chars().count() < MAX_INLINE_WIDTH {
            out.push_str(&inline);
            return;
        }
    }
    match &node.kind {
        NodeKind::Scalar(text) => out.push_str(text),
        NodeKind::Object(members) => {
            out.push('{');
            for (i, member) in sorted(members, layout).iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                push_indent(out, indent + 1);
                out.push_str(&member.key_text);
                out.push_str(": ");
                let column = (indent + 1) * 2 + member.key_text.chars().count() + 2;
                let value_layout = layout.of_value(&member.key);
                write_node(out, &member.value, value_layout, indent + 1, column);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push('}');
        }
        NodeKind::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                push_indent(out, indent + 1);
                write_node(out, item, Layout::Value, indent + 1, (indent + 1) * 2);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push(']');
        }
    }
}

/// The orders of a vector's axes, for a value written as an object of its axes.
const AXIS_ORDERS: [&[&str]; 2] = [&["x", "y", "z", "w"], &["r", "g", "b", "a"]];

/// An object's members in `layout` order; in a value, an object whose keys are all axes of
/// one kind (`x y z w`, `r g b a`) in axis order, as the vector's array form has them.
fn sorted(members: &[Member], layout: Layout) -> Vec<&Member> {
    let mut sorted: Vec<&Member> = members.iter().collect();
    let axes = AXIS_ORDERS.into_iter().find(|axes| {
        layout == Layout::Value && sorted.iter().all(|m| axes.contains(&m.key.as_str()))
    });
    match axes {
        Some(axes) => sorted.sort_by_key(|m| axes.iter().position(|axis| *axis == m.key)),
        None => sorted.sort_by(|a, b| layout.rank(&a.key).cmp(&layout.rank(&b.key))),
    }
    sorted
}

/// `node` on one line, if it may be written so (whether the line is short enough is for the
/// caller to say):
/// - an atom: a scalar, `{}` or `[]`;
/// - an array of atoms: `[0, 1, 0]`;
/// - an object of this layout (see [`Layout::may_inline`]) whose values are atoms or arrays of
///   atoms: `{ "current": 12, "max": 12 }`.
fn inline(node: &Node, layout: Layout) -> Option<String> {
    if let Some(atom) = atom(node) {
        return Some(atom.to_string());
    }
    match &node.kind {
        NodeKind::Array(items) => {
            let items: Option<Vec<&str>> = items.iter().map(atom).collect();
            Some(format!("[{}]", items?.join(", ")))
        }
        NodeKind::Object(members) if layout.may_inline() => {
            let mut texts = Vec::with_capacity(members.len());
            for member in sorted(members, layout) {
                let value = match &member.value.kind {
                    NodeKind::Array(_) => inline(&member.value, Layout::Value)?,
                    _ => atom(&member.value)?.to_string(),
                };
                texts.push(format!("{}: {value}", member.key_text));
            }
            Some(format!("{{ {} }}", texts.join(", ")))
        }
        _ => None,
    }
}

/// The text of a value that is always written on one line: a scalar, `{}` or `[]`.
fn atom(node: &Node) -> Option<&str> {
    match &node.kind {
        NodeKind::Scalar(text) => Some(text),
        NodeKind::Object(members) if members.is_empty() => Some("{}"),
        NodeKind::Array(items) if items.is_empty() => Some("[]"),
        _ => None,
    }
}

fn push_indent(out: &mut String, levels: usize) {
    for _ in 0..levels {
        out.push_str("  ");
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        to_canonical_string(&parse(text).unwrap(), Layout::Archetype)
    }

    #[test]
    fn scalars_keep_their_text() {
        let text = r#"{"components":{"A":{"x":1.0,"y":1e3,"z":-0.50,"s":"\u00e9\/"}}}"#;
        assert_eq!(
            canonical(text),
            "{\n  \"components\": {\n    \"A\": { \"s\": \"\\u00e9\\/\", \"x\": 1.0, \"y\": 1e3, \"z\": -0.50 }\n  }\n}\n"
        );
    }

    #[test]
    fn keys_follow_the_format_order() {
        let text = r#"{"children":{"b":{"components":{},"archetype":"x"},"a":null},"components":{"B":1,"A":2},"extends":"p","abstract":true,"format":1,"$schema":"s"}"#;
        assert_eq!(
            canonical(text),
            r#"{
  "$schema": "s",
  "format": 1,
  "abstract": true,
  "extends": "p",
  "components": {
    "A": 2,
    "B": 1
  },
  "children": {
    "a": null,
    "b": {
      "archetype": "x",
      "components": {}
    }
  }
}
"#
        );
    }

    #[test]
    fn short_arrays_of_scalars_stay_on_one_line() {
        let long: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let text = format!(r#"{{"a":[0,1,0],"b":[[1],[2]],"c":[{}]}}"#, long.join(","));
        let out = to_canonical_string(&parse(&text).unwrap(), Layout::Value);
        assert!(out.contains("\"a\": [0, 1, 0],\n"), "{out}");
        assert!(out.contains("\"b\": [\n    [1],\n    [2]\n  ],\n"), "{out}");
        assert!(out.contains("\"c\": [\n    0,\n    1,\n"), "{out}");
    }

    #[test]
    fn objects_of_axes_keep_axis_order() {
        let text = r#"{"components": {"Transform": {"rotation": {"w": 1, "z": 0, "y": 0, "x": 0}, "translation": [0, 1, 0]}, "Sprite": {"tint": {"a": 1, "b": 0, "g": 1, "r": 1}}}}"#;
        assert_eq!(
            canonical(text),
            r#"{
  "components": {
    "Sprite": {
      "tint": { "r": 1, "g": 1, "b": 0, "a": 1 }
    },
    "Transform": {
      "rotation": { "x": 0, "y": 0, "z": 0, "w": 1 },
      "translation": [0, 1, 0]
    }
  }
}
"#
        );
    }

    #[test]
    fn short_objects_of_scalars_stay_on_one_line() {
        let text = r#"{"components":{"Health":{"max":12,"current":12},"Transform":{"translation":[0,1,0]},"Nested":{"a":{"b":1}},"Empty":{},"Name":"x"},"children":{"a":null}}"#;
        assert_eq!(
            canonical(text),
            r#"{
  "components": {
    "Empty": {},
    "Health": { "current": 12, "max": 12 },
    "Name": "x",
    "Nested": {
      "a": { "b": 1 }
    },
    "Transform": { "translation": [0, 1, 0] }
  },
  "children": {
    "a": null
  }
}
"#
        );
        // A line of exactly 100 columns (with its comma) fits; one more does not.
        let line = |value: &str| format!(r#"{{"components":{{"A":{{"s":"{value}"}},"B":1}}}}"#);
        let fits = canonical(&line(&"x".repeat(79)));
        assert!(
            fits.lines()
                .any(|l| l.chars().count() == 100 && l.ends_with("},")),
            "{fits}"
        );
        let wraps = canonical(&line(&"x".repeat(80)));
        assert!(wraps.contains("\"A\": {\n      \"s\": "), "{wraps}");
        // Formatting the output again changes nothing.
        for out in [fits, wraps] {
            assert_eq!(canonical(&out), out);
        }
    }

    #[test]
    fn spans_of_values() {
        let text = "{\n  \"é\": { \"x\": 1 },\n  \"b\": tru\n}";
        assert_eq!(&text[value_span_at(text, 4)], "\"é\"");
        assert_eq!(&text[value_span_at(text, 10)], "{ \"x\": 1 }");
        assert_eq!(value_span_at(text, 29), 29..29);
    }

    #[test]
    fn rejects_what_is_not_json() {
        for bad in [
            "",
            "{",
            "{\"a\":1,}",
            "[1,]",
            "{\"a\" 1}",
            "nul",
            "01x",
            "\"\\x\"",
            "{\"a\":1,\"a\":2}",
            "1 2",
            // JSONC, which the parser underneath reads when asked: refused.
            "{\"a\":1 // c\n}",
            "{\"a\":1 /* c */}",
            "['a']",
            "{a:1}",
            "[0x1]",
            "[+1]",
            "[.5]",
            "[5.]",
            "[NaN]",
            "[Infinity]",
            "[\"\\x41\"]",
            "[1 2]",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        // What JSONC allows and JSON does not, checked on the tree.
        assert_eq!(
            parse("{\"a\": \"x\ny\"}").unwrap_err(),
            ParseError {
                message: "control character in a string; write it escaped (`\\n`, `\\u0000`)"
                    .to_string(),
                offset: 8
            }
        );
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert_eq!(
            parse(&deep).unwrap_err(),
            ParseError {
                message: format!("nested deeper than {MAX_DEPTH} levels"),
                offset: MAX_DEPTH
            }
        );
        assert_eq!(
            parse("{\"a\":1,\"a\":2}").unwrap_err(),
            ParseError {
                message: "key `a` appears twice in one object".to_string(),
                offset: 7
            }
        );
    }

    #[test]
    fn spans_cover_keys_and_values() {
        let text = r#"{ "a": [1, 2], "b": "x" }"#;
        let node = parse(text).unwrap();
        let members = node.members().unwrap();
        assert_eq!(&text[members[0].key_span.clone()], "\"a\"");
        assert_eq!(&text[members[0].value.span.clone()], "[1, 2]");
        assert_eq!(&text[members[1].value.span.clone()], "\"x\"");
        assert_eq!(node.span, 0..text.len());
    }
}
