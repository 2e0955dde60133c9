//! Setting one value in a JSON text with the smallest edit: the value's own bytes replaced, or,
//! where the text does not have the place yet, one member added to the deepest object on the
//! way. Every other byte (formatting, key order, comments of the layout) stays as it was, so a
//! tool writing a value back into a designer's file changes only that value.

use std::ops::Range;

use serde_json::{Map, Value};

use crate::json::field_path::PathSegment;
use crate::json::span_index::locate;
use crate::json::text::{skip_whitespace, string_end, value_end};

/// Why a value could not be set in a text; the text was not changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ValueEditRefused {
    /// The text has no JSON value at its top level.
    NotJson,
    /// The path goes through a value that is not an object (an array element that is not
    /// there, a number, a string), so there is no member to add.
    NotAnObject {
        /// How many segments of the path the text has.
        matched: usize,
    },
}

/// `text` with the value at `path` set to `value`: its bytes replaced when the text has the
/// place, else a member added (holding the rest of the path as nested objects) to the deepest
/// object the text has on the way, laid out like that object's first member.
pub(crate) fn set_value_in_text(
    text: &str,
    path: &[PathSegment],
    value: &Value,
) -> Result<String, ValueEditRefused> {
    let located = locate(text, path).ok_or(ValueEditRefused::NotJson)?;
    if located.matched == path.len() {
        let old = &text[located.value.clone()];
        return Ok(replaced(text, located.value, &written_like(value, old)));
    }
    let not_object = ValueEditRefused::NotAnObject {
        matched: located.matched,
    };
    let object = located.value;
    if text.as_bytes().get(object.start) != Some(&b'{') {
        return Err(not_object);
    }
    let Some((PathSegment::Key(key), rest)) = path[located.matched..].split_first() else {
        return Err(not_object);
    };
    let mut nested = value.clone();
    for segment in rest.iter().rev() {
        let PathSegment::Key(inner) = segment else {
            return Err(not_object);
        };
        nested = Value::Object(Map::from_iter([(inner.clone(), nested)]));
    }
    let member = format!(
        "{}: {}",
        Value::String(key.clone()),
        serde_json::to_string(&nested).unwrap_or_else(|_| "null".to_string())
    );
    Ok(with_member(text, object, &member))
}

/// `text` without the member at `path` (its key, value and one separating comma, so the
/// members around it keep their layout); an object that loses its last member goes too, up to
/// `keep` segments of the path (the object at `path[..keep]` stays, emptied or not). `None`
/// when the text has no member there (nothing to remove).
pub(crate) fn remove_member_in_text(
    text: &str,
    path: &[PathSegment],
    keep: usize,
) -> Result<Option<String>, ValueEditRefused> {
    let mut depth = path.len();
    loop {
        let located = locate(text, &path[..depth]).ok_or(ValueEditRefused::NotJson)?;
        if located.matched < depth {
            return Ok(None);
        }
        let Some(key) = located.key else {
            return Err(ValueEditRefused::NotAnObject { matched: depth - 1 });
        };
        let parent = locate(text, &path[..depth - 1]).ok_or(ValueEditRefused::NotJson)?;
        let only_member = members_of(text, parent.value.clone()) == 1;
        if only_member && depth - 1 > keep {
            depth -= 1;
            continue;
        }
        return Ok(Some(without_member(
            text,
            parent.value,
            key.start..located.value.end,
        )));
    }
}

/// How many members the object at `object` (braces included) has.
fn members_of(text: &str, object: Range<usize>) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut at = skip_whitespace(bytes, object.start + 1);
    while at < object.end - 1 {
        let Some(key_end) = string_end(bytes, at) else {
            break;
        };
        let colon = skip_whitespace(bytes, key_end);
        let value = skip_whitespace(bytes, colon + 1);
        let Some(end) = value_end(bytes, value) else {
            break;
        };
        count += 1;
        at = skip_whitespace(bytes, end);
        if bytes.get(at) == Some(&b',') {
            at = skip_whitespace(bytes, at + 1);
        }
    }
    count
}

/// `text` without the member spanning `member` (key to value end) of the object at `object`:
/// with the comma after it and the space up to the next member, or, for the last member, the
/// comma and space before it; the object's only member leaves `{}`.
fn without_member(text: &str, object: Range<usize>, member: Range<usize>) -> String {
    let bytes = text.as_bytes();
    let after = skip_whitespace(bytes, member.end);
    if bytes.get(after) == Some(&b',') {
        let next = skip_whitespace(bytes, after + 1);
        return replaced(text, member.start..next, "");
    }
    let before = text[object.start + 1..member.start].trim_end();
    if before.ends_with(',') {
        let comma = object.start + before.len();
        return replaced(text, comma..member.end, "");
    }
    replaced(text, object, "{}")
}

/// `value` as JSON text; a whole float where `old` is an integer literal is written as an
/// integer (`30`, not `30.0`: a float component reads its value back as `30.0`, and the
/// designer wrote `12`).
fn written_like(value: &Value, old: &str) -> String {
    let integer_text = !old.is_empty() && old.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    if let Some(float) = value.as_f64().filter(|_| integer_text && value.is_f64()) {
        if float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0 {
            return format!("{}", float as i64);
        }
    }
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// `text` with `range` replaced by `with`.
fn replaced(text: &str, range: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// `text` with `member` added last to the object at `object` (braces included).
fn with_member(text: &str, object: Range<usize>, member: &str) -> String {
    let inside = &text[object.start + 1..object.end - 1];
    let lead_len = inside.len() - inside.trim_start().len();
    if inside.trim().is_empty() {
        return replaced(text, object, &format!("{{ {member} }}"));
    }
    // The whitespace before the first member: a line break and its indentation, or a space.
    let separator = &inside[..lead_len];
    let separator = if separator.is_empty() { " " } else { separator };
    let last_value_end = object.start + 1 + inside.trim_end().len();
    let insertion = format!(",{separator}{member}");
    replaced(text, last_value_end..last_value_end, &insertion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(path: &[&str]) -> Vec<PathSegment> {
        path.iter()
            .map(|k| PathSegment::Key(k.to_string()))
            .collect()
    }

    #[test]
    fn replaces_only_the_value_bytes() {
        let text =
            "{\n  \"components\": {\n    \"Health\": { \"current\": 12, \"max\": 12 }\n  }\n}\n";
        let path = keys(&["components", "Health", "max"]);
        let edited = set_value_in_text(text, &path, &json!(30)).expect("edited");
        assert_eq!(
            edited,
            "{\n  \"components\": {\n    \"Health\": { \"current\": 12, \"max\": 30 }\n  }\n}\n"
        );
        let whole_float = set_value_in_text(text, &path, &json!(30.0)).expect("edited");
        assert_eq!(whole_float, edited);
        let fraction = set_value_in_text(text, &path, &json!(30.5)).expect("edited");
        assert!(fraction.contains("\"max\": 30.5 }"));
    }

    #[test]
    fn adds_a_member_laid_out_like_the_first() {
        let text = "{\n  \"components\": {\n    \"Name\": \"Goblin\"\n  }\n}\n";
        let path = keys(&["components", "Health", "max"]);
        let edited = set_value_in_text(text, &path, &json!(30)).expect("edited");
        assert_eq!(
            edited,
            "{\n  \"components\": {\n    \"Name\": \"Goblin\",\n    \"Health\": {\"max\":30}\n  }\n}\n"
        );
        let one_line = "{ \"a\": 1 }";
        let edited = set_value_in_text(one_line, &keys(&["b"]), &json!("x")).expect("edited");
        assert_eq!(edited, "{ \"a\": 1, \"b\": \"x\" }");
        let empty = "{ \"components\": {} }";
        let edited =
            set_value_in_text(empty, &keys(&["components", "Speed"]), &json!(2)).expect("edited");
        assert_eq!(edited, "{ \"components\": { \"Speed\": 2 } }");
    }

    #[test]
    fn refuses_a_path_through_a_scalar() {
        let text = "{ \"components\": { \"Name\": \"Goblin\" } }";
        let path = keys(&["components", "Name", "first"]);
        assert_eq!(
            set_value_in_text(text, &path, &json!(1)),
            Err(ValueEditRefused::NotAnObject { matched: 2 })
        );
        assert_eq!(
            set_value_in_text("", &path, &json!(1)),
            Err(ValueEditRefused::NotJson)
        );
    }

    #[test]
    fn removes_a_member_and_one_comma() {
        let text = "{\n  \"a\": 1,\n  \"b\": { \"x\": 2, \"y\": 3 },\n  \"c\": 4\n}\n";
        let first = remove_member_in_text(text, &keys(&["a"]), 0).expect("json");
        assert_eq!(
            first.as_deref(),
            Some("{\n  \"b\": { \"x\": 2, \"y\": 3 },\n  \"c\": 4\n}\n")
        );
        let last = remove_member_in_text(text, &keys(&["c"]), 0).expect("json");
        assert_eq!(
            last.as_deref(),
            Some("{\n  \"a\": 1,\n  \"b\": { \"x\": 2, \"y\": 3 }\n}\n")
        );
        let inner = remove_member_in_text(text, &keys(&["b", "y"]), 0).expect("json");
        assert_eq!(
            inner.as_deref(),
            Some("{\n  \"a\": 1,\n  \"b\": { \"x\": 2 },\n  \"c\": 4\n}\n")
        );
        assert_eq!(remove_member_in_text(text, &keys(&["b", "z"]), 0), Ok(None));
        assert_eq!(remove_member_in_text(text, &keys(&["d"]), 0), Ok(None));
    }

    #[test]
    fn removes_objects_left_empty_up_to_the_kept_one() {
        let text = "{ \"c\": { \"H\": { \"max\": 3 } }, \"n\": 1 }";
        let pruned = remove_member_in_text(text, &keys(&["c", "H", "max"]), 1).expect("json");
        assert_eq!(pruned.as_deref(), Some("{ \"c\": {}, \"n\": 1 }"));
        let kept = remove_member_in_text(text, &keys(&["c", "H", "max"]), 2).expect("json");
        assert_eq!(kept.as_deref(), Some("{ \"c\": { \"H\": {} }, \"n\": 1 }"));
        let all = remove_member_in_text(text, &keys(&["c", "H", "max"]), 0).expect("json");
        assert_eq!(all.as_deref(), Some("{ \"n\": 1 }"));
        let through_scalar = remove_member_in_text(text, &keys(&["n", "x"]), 0);
        assert_eq!(through_scalar, Ok(None));
    }
}
