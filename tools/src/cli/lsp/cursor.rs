//! Where a position is in a JSON text: the keys that lead to it and the key or value under
//! it. Read with a small tolerant scanner rather than a parser, because a buffer being typed
//! is seldom JSON (`"components": { "Hea` has no end); it needs only strings, brackets, `:`
//! and `,`.

use std::ops::Range;

use archetype_engine::{keys, scene_keys};

/// One step of the path to a place: an object's key or an array's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// What is at the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// An object key (possibly still being typed): its text without quotes, and its span
    /// with them.
    Key { text: String, span: Range<usize> },
    /// A string value: its text without quotes, and its span with them.
    String { text: String, span: Range<usize> },
    /// Nothing yet, where a key is expected (inside an object, before its colon).
    NewKey,
    /// Nothing yet, or a number, literal or bracket, where a value is expected.
    NewValue,
}

/// A place in a JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Cursor {
    /// The keys and indices leading to the place: for a key, to the object holding it.
    pub path: Vec<Step>,
    pub target: Target,
}

impl Cursor {
    /// The path's keys, with each index as `None`.
    pub fn keys(&self) -> Vec<Option<&str>> {
        self.path
            .iter()
            .map(|step| match step {
                Step::Key(key) => Some(key.as_str()),
                Step::Index(_) => None,
            })
            .collect()
    }
}

enum Frame {
    Object { key: Option<String>, value: bool },
    Array { index: usize },
}

/// Where `offset` (a byte offset) is in `text`. A position inside a string, or just after its
/// last character, is on that string.
pub(super) fn cursor_at(text: &str, offset: usize) -> Cursor {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    let path = |stack: &[Frame], inner: bool| -> Vec<Step> {
        let last = stack.len().saturating_sub(1);
        stack
            .iter()
            .enumerate()
            .filter_map(|(i, frame)| match frame {
                Frame::Object {
                    key: Some(key),
                    value: true,
                } if inner || i < last => Some(Step::Key(key.clone())),
                Frame::Array { index } if inner || i < last => Some(Step::Index(*index)),
                _ => None,
            })
            .collect()
    };
    let expecting_key =
        |stack: &[Frame]| matches!(stack.last(), Some(Frame::Object { value: false, .. }));
    while at < bytes.len() {
        if at >= offset {
            break;
        }
        match bytes[at] {
            b'"' => {
                let (end, closed) = string_end(bytes, at);
                let inside = offset > at && (offset < end || (!closed && offset <= end));
                let raw = text
                    .get(at + 1..if closed { end - 1 } else { end })
                    .unwrap_or_default();
                let content = unescape(raw);
                let is_key = expecting_key(&stack);
                if inside || offset == end {
                    let span = at..end;
                    let target = if is_key {
                        Target::Key {
                            text: content,
                            span,
                        }
                    } else {
                        Target::String {
                            text: content,
                            span,
                        }
                    };
                    return Cursor {
                        path: path(&stack, !is_key),
                        target,
                    };
                }
                if is_key {
                    if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                        *key = Some(content);
                    }
                }
                at = end;
                continue;
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                value: false,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { value, .. }) = stack.last_mut() {
                    *value = true;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, value }) => {
                    *key = None;
                    *value = false;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
        at += 1;
    }
    let is_key = expecting_key(&stack);
    Cursor {
        path: path(&stack, !is_key),
        target: if is_key {
            Target::NewKey
        } else {
            Target::NewValue
        },
    }
}

/// Where the string starting at `start` ends (after its closing quote), and whether it is
/// closed; an unclosed string ends at the end of its line.
fn string_end(bytes: &[u8], start: usize) -> (usize, bool) {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return (at + 1, true),
            b'\n' | b'\r' => return (at, false),
            _ => at += 1,
        }
    }
    (bytes.len(), false)
}

/// A string's content as a value: escapes read where they are complete.
fn unescape(raw: &str) -> String {
    serde_json::from_str(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string())
}

/// What a path of keys leads to in an archetype or scene file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Place<'k> {
    /// An entity's own object: the top level of an archetype file, a child entry, a scene's
    /// entity. `entity` is the child path (`["turret", "gun"]`; empty for the top level).
    Entity { entity: Vec<&'k str> },
    /// An entity's `components` object.
    Components { entity: Vec<&'k str> },
    /// Inside the value of `component`, at `fields` (keys; `None` for an index).
    Component {
        entity: Vec<&'k str>,
        component: &'k str,
        fields: Vec<Option<&'k str>>,
    },
    /// An archetype file's `extends` (the value, or an element of the list).
    Extends,
    /// The `archetype` of a child entry or of a scene's entity.
    Archetype,
    /// The `archetypes` object of a scene (its keys are archetype names).
    SceneArchetypes,
    /// Anywhere else.
    Other,
}

/// Where `keys` (a [`Cursor::keys`]) lead, in a scene file if `scene`.
pub(super) fn place_of<'k>(keys: &[Option<&'k str>], scene: bool) -> Place<'k> {
    let mut rest = keys;
    if scene {
        match rest {
            [Some(scene_keys::ARCHETYPES)] => return Place::SceneArchetypes,
            [Some(scene_keys::ENTITIES), None, entity @ ..] => rest = entity,
            _ => return Place::Other,
        }
    }
    let mut entity = Vec::new();
    loop {
        match rest {
            [] => return Place::Entity { entity },
            [Some(keys::COMPONENTS)] => return Place::Components { entity },
            [Some(keys::COMPONENTS), Some(component), fields @ ..] => {
                return Place::Component {
                    entity,
                    component,
                    fields: fields.to_vec(),
                }
            }
            [Some(keys::EXTENDS)] | [Some(keys::EXTENDS), None] if entity.is_empty() && !scene => {
                return Place::Extends
            }
            [Some(keys::ARCHETYPE)] if !entity.is_empty() || scene => return Place::Archetype,
            [Some(keys::CHILDREN), Some(child), after @ ..] if !scene => {
                entity.push(*child);
                rest = after;
            }
            _ => return Place::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Cursor {
        let offset = text.find('|').expect("a | marks the place");
        let text = text.replacen('|', "", 1);
        cursor_at(&text, offset)
    }

    fn keys(path: &[&str]) -> Vec<Step> {
        path.iter().map(|key| Step::Key(key.to_string())).collect()
    }

    #[test]
    fn a_key_being_typed() {
        let cursor = at("{ \"components\": { \"Name\": \"x\", \"Hea|");
        assert_eq!(cursor.path, keys(&["components"]));
        assert_eq!(
            cursor.target,
            Target::Key {
                text: "Hea".into(),
                span: 31..35
            }
        );
    }

    #[test]
    fn a_value_in_a_list() {
        let cursor = at("{ \"extends\": [\"a\", \"enemies/go|blin\"] }");
        assert_eq!(
            cursor.path,
            vec![Step::Key("extends".into()), Step::Index(1)]
        );
        assert_eq!(
            cursor.target,
            Target::String {
                text: "enemies/goblin".into(),
                span: 19..35
            }
        );
    }

    #[test]
    fn places_with_nothing_yet() {
        let cursor = at("{ \"components\": { \"Health\": { | } } }");
        assert_eq!(cursor.path, keys(&["components", "Health"]));
        assert_eq!(cursor.target, Target::NewKey);
        let cursor = at("{ \"components\": { \"Ai\": | } }");
        assert_eq!(cursor.path, keys(&["components", "Ai"]));
        assert_eq!(cursor.target, Target::NewValue);
    }
}
