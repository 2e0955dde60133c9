//! Where the value at a JSON path is in a file's text: [`locate`] scans for one path, a
//! [`SpanIndex`] answers any number of them after one pass over the text. Errors are found in
//! the parsed value, by path; this is how they get a line and column.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::json::field_path::PathSegment;
use crate::json::text::{decoded_key, key_is, skip_whitespace, string_end, value_end, BOM};

/// Where the value at a path is in a JSON text; see [`locate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// Byte range of the member's key, quotes included, when the last matched
    /// segment was a key.
    pub key: Option<Range<usize>>,
    /// Byte range of the whole value text (brackets or quotes included).
    pub value: Range<usize>,
    /// How many segments of the path were found.
    pub matched: usize,
}

/// Finds the value at `path` in a JSON text, or the deepest value on the way
/// if the path goes further than the text does. A key repeated in one object
/// finds its first occurrence. Returns `None` only if there is no value at
/// the top level. Runs in linear time and never recurses.
///
/// For many paths in one text, [`SourceText::locate`](crate::json::text::SourceText::locate)
/// finds the same from an index, without a scan per path.
pub fn locate(text: &str, path: &[PathSegment]) -> Option<Located> {
    let bytes = text.as_bytes();
    let first = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let root = skip_whitespace(bytes, first);
    let (key, start, matched) = walk(path, root, |start, segment| {
        match (segment, bytes.get(start)) {
            (PathSegment::Key(name), Some(b'{')) => find_member(text, start, name),
            (PathSegment::Index(index), Some(b'[')) => {
                find_element(bytes, start, *index).map(|element| (None, element))
            }
            _ => None,
        }
    });
    let end = value_end(bytes, start)?;
    Some(Located {
        key,
        value: start..end,
        matched,
    })
}

/// Follows `path` from `root` for as long as `step` finds the next member or element: the one
/// definition of what [`locate`] finds, however a container's member is looked up. Returns the
/// key of the last step (`None` if it was an element, or there was none), the value reached,
/// and how many segments were followed.
fn walk<N: Copy>(
    path: &[PathSegment],
    root: N,
    mut step: impl FnMut(N, &PathSegment) -> Option<(Option<Range<usize>>, N)>,
) -> (Option<Range<usize>>, N, usize) {
    let (mut key, mut node, mut matched) = (None, root, 0);
    for segment in path {
        let Some((found_key, found)) = step(node, segment) else {
            break;
        };
        key = found_key;
        node = found;
        matched += 1;
    }
    (key, node, matched)
}

/// The key range and value start of member `name` of the object at `open`.
fn find_member(text: &str, open: usize, name: &str) -> Option<(Option<Range<usize>>, usize)> {
    let bytes = text.as_bytes();
    let mut i = skip_whitespace(bytes, open + 1);
    while bytes.get(i) == Some(&b'"') {
        let key_end = string_end(bytes, i)?;
        let colon = skip_whitespace(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        let value_start = skip_whitespace(bytes, colon + 1);
        if key_is(text, i..key_end, name) {
            return Some((Some(i..key_end), value_start));
        }
        i = skip_whitespace(bytes, value_end(bytes, value_start)?);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = skip_whitespace(bytes, i + 1);
    }
    None
}

/// The start of element `index` of the array at `open`.
fn find_element(bytes: &[u8], open: usize, index: usize) -> Option<usize> {
    let mut i = skip_whitespace(bytes, open + 1);
    for _ in 0..index {
        i = skip_whitespace(bytes, value_end(bytes, i)?);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = skip_whitespace(bytes, i + 1);
    }
    match bytes.get(i) {
        Some(b']') | None => None,
        Some(_) => Some(i),
    }
}

/// Objects with more members than this have their keys hashed; smaller ones are searched in
/// order, which is as fast and costs no memory.
const HASHED_MEMBERS: u32 = 8;

/// The key of a value that has none: an array element, or the top-level value.
const NO_KEY: (u32, u32) = (u32::MAX, u32::MAX);

/// Where every value of a JSON text is, found in one pass over it, so that placing the errors
/// of a file costs one scan of the file however many errors there are. Finds exactly what
/// [`locate`] finds, for texts that are well-formed JSON (others are not indexed).
///
/// Memory is linear in the text: 24 bytes per value, plus a hash table entry (16 bytes and the
/// table's slack) per member of the objects with more than [`HASHED_MEMBERS`] members: at most
/// a few times the size of a typical file, twelve times for an array of one-digit numbers. A
/// member is found in constant time whatever the number of its siblings; an element by its
/// index.
#[derive(Clone)]
pub(super) struct SpanIndex {
    /// Every value. The members or elements of one container are consecutive; the top-level
    /// value is the last.
    nodes: Vec<Node>,
    /// Hash of (the node index of an object's first member, a decoded key) → the object's first
    /// member with that key, for objects with more than [`HASHED_MEMBERS`] members.
    members: FxHashMap<u64, u32>,
    /// Randomly keyed, so that no file can be written whose keys all collide.
    hasher: RandomState,
}

/// One value of a [`SpanIndex`], as byte ranges (start, end) of the text.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The member's key, quotes included, or [`NO_KEY`].
    key: (u32, u32),
    /// The value, brackets or quotes included.
    value: (u32, u32),
    /// Its members or elements, as a range of [`SpanIndex::nodes`]; empty for scalars.
    children: (u32, u32),
}

impl fmt::Debug for SpanIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SpanIndex({} values)", self.nodes.len())
    }
}

impl SpanIndex {
    /// Indexes `text`, or `None` if it is not well-formed JSON or longer than 32-bit offsets
    /// reach (then [`locate`] finds what is asked, one scan per path).
    pub(super) fn build(text: &str) -> Option<SpanIndex> {
        u32::try_from(text.len()).ok()?;
        let mut builder = Builder {
            text,
            index: SpanIndex {
                nodes: Vec::new(),
                members: FxHashMap::default(),
                hasher: RandomState::new(),
            },
            pending: Vec::new(),
            open: Vec::new(),
        };
        builder.run().ok()?;
        let root = builder.pending.pop()?;
        builder.index.nodes.push(root);
        Some(builder.index)
    }

    /// The value at `path` in `text` (the text this index was built from), as [`locate`] finds
    /// it.
    pub(super) fn locate(&self, text: &str, path: &[PathSegment]) -> Option<Located> {
        let root = u32::try_from(self.nodes.len().checked_sub(1)?).ok()?;
        let (key, node, matched) = walk(path, root, |node, segment| {
            let node = self.nodes.get(node as usize)?;
            let found = match (segment, text.as_bytes().get(node.value.0 as usize)) {
                (PathSegment::Key(name), Some(b'{')) => self.member(text, node, name)?,
                (PathSegment::Index(index), Some(b'[')) => {
                    let element = node.children.0.checked_add(u32::try_from(*index).ok()?)?;
                    (element < node.children.1).then_some(element)?
                }
                _ => return None,
            };
            let key = self.nodes.get(found as usize)?.key;
            Some(((key != NO_KEY).then(|| span(key)), found))
        });
        let value = self.nodes.get(node as usize)?.value;
        Some(Located {
            key,
            value: span(value),
            matched,
        })
    }

    /// The first member of `object` whose key is `name`.
    fn member(&self, text: &str, object: &Node, name: &str) -> Option<u32> {
        let (first, end) = object.children;
        let is = |member: u32| {
            self.nodes
                .get(member as usize)
                .is_some_and(|node| key_is(text, span(node.key), name))
        };
        if end - first > HASHED_MEMBERS {
            match self.members.get(&self.hasher.hash_one((first, name))) {
                None => return None,
                Some(&member) if (first..end).contains(&member) && is(member) => {
                    return Some(member)
                }
                // Another key with the same hash came first: search in order.
                Some(_) => {}
            }
        }
        (first..end).find(|&member| is(member))
    }

    /// Records the members `first..end` of an object by key (the first of each).
    fn hash_members(&mut self, text: &str, first: u32, end: u32) {
        for member in first..end {
            let Some(node) = self.nodes.get(member as usize) else {
                continue;
            };
            // A key whose escapes are invalid equals no name; it is never looked up.
            if let Some(key) = decoded_key(text, span(node.key)) {
                let hash = self.hasher.hash_one((first, &*key));
                self.members.entry(hash).or_insert(member);
            }
        }
    }
}

fn span((start, end): (u32, u32)) -> Range<usize> {
    start as usize..end as usize
}

/// Offsets fit in 32 bits: [`SpanIndex::build`] refuses longer texts.
fn offset(at: usize) -> u32 {
    at as u32
}

/// A container whose members or elements are being read.
struct Open {
    key: (u32, u32),
    start: usize,
    object: bool,
    /// Where its members or elements start in [`Builder::pending`].
    first: usize,
}

/// The text is not well-formed JSON (the index gives up; [`locate`] scans instead).
struct Malformed;

/// Builds a [`SpanIndex`] in one pass, without recursion: the values of the containers still
/// open wait in `pending` until their container closes, then move to the index together.
struct Builder<'t> {
    text: &'t str,
    index: SpanIndex,
    pending: Vec<Node>,
    open: Vec<Open>,
}

impl Builder<'_> {
    /// Reads the top-level value, leaving it as the one pending node.
    fn run(&mut self) -> Result<(), Malformed> {
        let bytes = self.text.as_bytes();
        let first = if self.text.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let mut i = skip_whitespace(bytes, first);
        let mut key = NO_KEY;
        loop {
            // A value starts at `i`.
            let byte = *bytes.get(i).ok_or(Malformed)?;
            if matches!(byte, b'{' | b'[') {
                let object = byte == b'{';
                self.open.push(Open {
                    key,
                    start: i,
                    object,
                    first: self.pending.len(),
                });
                i = skip_whitespace(bytes, i + 1);
                if bytes.get(i) != Some(if object { &b'}' } else { &b']' }) {
                    (key, i) = self.entry(i, object).ok_or(Malformed)?;
                    continue;
                }
                i = self.close(i);
            } else {
                let end = value_end(bytes, i).ok_or(Malformed)?;
                self.pending.push(Node {
                    key,
                    value: (offset(i), offset(end)),
                    children: (0, 0),
                });
                i = end;
            }
            // A value ended at `i`: a comma or its container's closing bracket follows.
            loop {
                let object = self.open.last().map(|open| open.object);
                let Some(object) = object else {
                    return Ok(());
                };
                i = skip_whitespace(bytes, i);
                match (bytes.get(i).ok_or(Malformed)?, object) {
                    (b',', _) => {
                        let next = skip_whitespace(bytes, i + 1);
                        (key, i) = self.entry(next, object).ok_or(Malformed)?;
                        break;
                    }
                    (b'}', true) | (b']', false) => i = self.close(i),
                    _ => return Err(Malformed),
                }
            }
        }
    }

    /// Reads up to the start of the next member's value (its key and the colon) or element,
    /// at `i`; returns the key and where the value starts.
    fn entry(&self, i: usize, object: bool) -> Option<((u32, u32), usize)> {
        if !object {
            return Some((NO_KEY, i));
        }
        let bytes = self.text.as_bytes();
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, i)?;
        let colon = skip_whitespace(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        Some((
            (offset(i), offset(key_end)),
            skip_whitespace(bytes, colon + 1),
        ))
    }

    /// Closes the innermost open container at its closing bracket `at`; returns the offset
    /// after it.
    fn close(&mut self, at: usize) -> usize {
        let Some(open) = self.open.pop() else {
            return at + 1;
        };
        let first = offset(self.index.nodes.len());
        let children = self.pending.drain(open.first..);
        self.index.nodes.extend(children);
        let end = offset(self.index.nodes.len());
        if open.object && end - first > HASHED_MEMBERS {
            self.index.hash_members(self.text, first, end);
        }
        self.pending.push(Node {
            key: open.key,
            value: (offset(open.start), offset(at + 1)),
            children: (first, end),
        });
        at + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathSegment::{Index, Key};

    /// Test texts write `'` for `"` to stay readable.
    fn json(text: &str) -> String {
        text.replace('\'', "\"")
    }

    #[test]
    fn locates_values_by_path() {
        let doc = json(
            "{\n  'name' : 'orc {[\\']}' ,\n  'stats': { 'hp': 10, 'm\\u0061x'\n    \
             : [ 1, { 'x': 2.5 } , ']' ] },\n  'tags': [ ],\n  'a\\'b': {'a': true}\n}",
        );
        let k = |name: &str| Key(name.to_owned());
        let (max_key, max, orc) = ("'m\\u0061x'", "[ 1, { 'x': 2.5 } , ']' ]", "'orc {[\\']}'");
        #[rustfmt::skip]
        let cases = [
            (vec![], None, doc.as_str(), 0),
            (vec![k("name")], Some("'name'"), orc, 1),
            (vec![k("stats"), k("hp")], Some("'hp'"), "10", 2),
            (vec![k("stats"), k("max")], Some(max_key), max, 2),
            (vec![k("stats"), k("max"), Index(1), k("x")], Some("'x'"), "2.5", 4),
            (vec![k("stats"), k("max"), Index(2)], None, "']'", 3),
            (vec![k("stats"), k("max"), Index(3)], Some(max_key), max, 2),
            (vec![k("tags"), Index(0)], Some("'tags'"), "[ ]", 1),
            (vec![k("name"), k("x")], Some("'name'"), orc, 1),
            (vec![k("a\"b"), k("a")], Some("'a'"), "true", 2),
            (vec![k("missing")], None, doc.as_str(), 0),
            (vec![Index(0)], None, doc.as_str(), 0),
        ];
        for (path, key, value, matched) in cases {
            let located = locate(&doc, &path).expect("top-level value");
            let key_text = located.key.map(|range| doc[range].to_owned());
            let got = (key_text, &doc[located.value], located.matched);
            let expected = (key.map(json), json(value), matched);
            assert_eq!(
                got,
                (expected.0, expected.1.as_str(), expected.2),
                "{path:?}"
            );
        }
    }

    #[test]
    fn locate_survives_bad_and_deep_input() {
        let path = [Key("a".to_owned()), Index(1)];
        for text in ["", " \n ", "[1, 2", "{'a': [1, ", "'abc", "['\\", "}"] {
            assert_eq!(locate(&json(text), &path), None, "{text:?}");
        }
        // Malformed but closed: whatever is found, nothing panics.
        for text in ["{'a' 1}", "{'a':}", "{,}", "[1 2]", "{'a': [}}", "['\\']"] {
            let _ = locate(&json(text), &path);
        }
        assert_eq!(locate(&"[".repeat(100_000), &[]), None);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let located = locate(&deep, &vec![Index(0); 50]).expect("valid");
        assert_eq!((located.value, located.matched), (50..deep.len() - 50, 50));
    }
    /// Every path of up to three segments over `keys` and a few indexes.
    fn paths(keys: &[&str]) -> Vec<Vec<PathSegment>> {
        let mut segments: Vec<PathSegment> = keys.iter().map(|k| Key(k.to_string())).collect();
        segments.extend((0..4).map(Index));
        let mut paths = vec![vec![]];
        let mut last = vec![vec![]];
        for _ in 0..3 {
            last = last
                .iter()
                .flat_map(|path: &Vec<PathSegment>| {
                    segments.iter().map(move |segment| {
                        let mut path = path.clone();
                        path.push(segment.clone());
                        path
                    })
                })
                .collect();
            paths.extend(last.iter().cloned());
        }
        paths
    }

    #[test]
    fn the_index_finds_what_locate_finds() {
        let many: Vec<String> = (0..20)
            .map(|i| format!("'k{}': [{i}, {{'x': {i}}}]", i % 12))
            .collect();
        let docs = [
            json(
                "{\n  'name' : 'orc {[\\']}' ,\n  'stats': { 'hp': 10, 'm\\u0061x'\n    \
                 : [ 1, { 'x': 2.5 } , ']' ] },\n  'tags': [ ],\n  'a\\'b': {'a': true}\n}",
            ),
            // More members than are searched in order, keys repeated and escaped.
            json(&format!(
                "{{ {}, 'k\\u0031': 'escaped', 'bad\\q': 0 }}",
                many.join(", ")
            )),
            json("\u{feff} [ {'x': [[], {}]}, 'k1', -2.5e3, null, {'k1': {'k1': 1}} ] trailing"),
            json("'a scalar'"),
            json("{'x': {'x': {'x': {'x': 1}}}, 'k1': []}"),
        ];
        let keys = [
            "name", "stats", "hp", "max", "x", "tags", "a'b", "a", "k1", "k5", "k11", "bad\\q",
            "missing",
        ];
        for doc in &docs {
            assert!(SpanIndex::build(doc).is_some(), "{doc:?} is indexed");
            let source = crate::json::text::SourceText::from_string(doc.clone());
            let doc = doc.trim_start_matches(BOM);
            for path in paths(&keys) {
                assert_eq!(source.locate(&path), locate(doc, &path), "{doc:?} {path:?}");
            }
        }
    }

    #[test]
    fn malformed_texts_are_located_without_an_index() {
        let texts = [
            "",
            " ",
            "[1, 2",
            "{'a': [1, ",
            "'abc",
            "}",
            "{'a' 1}",
            "{'a':}",
            "{,}",
            "[1 2]",
            "{'a': [}}",
            "[1,]",
            "{'a': 1,}",
            "{'a': {'b': 1} 'c': 2}",
            "[tru e]",
        ];
        let keys = ["a", "b", "c"];
        for text in texts.map(json) {
            assert!(SpanIndex::build(&text).is_none(), "{text:?} is not indexed");
            let source = crate::json::text::SourceText::from_string(text.clone());
            for path in paths(&keys) {
                assert_eq!(
                    source.locate(&path),
                    locate(&text, &path),
                    "{text:?} {path:?}"
                );
            }
        }
    }

    #[test]
    fn a_member_among_forty_thousand_is_found_by_its_key() {
        let members: Vec<String> = (0..40_000).map(|i| format!("\"f{i}\": {i}")).collect();
        let text = format!("{{\"c\": {{{}, \"f7\": \"again\"}}}}", members.join(", "));
        let index = SpanIndex::build(&text).expect("well-formed");
        let path = |key: &str| [Key("c".to_owned()), Key(key.to_owned())];
        for (key, value) in [("f0", "0"), ("f7", "7"), ("f39999", "39999")] {
            let located = index.locate(&text, &path(key)).expect("found");
            assert_eq!(&text[located.value.clone()], value);
            assert_eq!(
                &text[located.key.clone().expect("a key")],
                format!("\"{key}\"")
            );
            assert_eq!(located, locate(&text, &path(key)).expect("found"));
        }
        let missing = index.locate(&text, &path("f40000")).expect("the object");
        assert_eq!(
            (missing.matched, &text[missing.key.expect("c")]),
            (1, "\"c\"")
        );
        // A hash that leads to another key (a collision) still finds the right one.
        let first = index
            .nodes
            .last()
            .map(|root| root.children.0)
            .expect("root");
        let object = index.nodes[first as usize].children.0;
        index_with_wrong_entry(&index, object, "f9", object + 3, &text);
    }

    fn index_with_wrong_entry(index: &SpanIndex, object: u32, key: &str, wrong: u32, text: &str) {
        let mut index = index.clone();
        let hash = index.hasher.hash_one((object, key));
        index.members.insert(hash, wrong);
        let located = index.locate(text, &[Key("c".to_owned()), Key(key.to_owned())]);
        assert_eq!(&text[located.expect("found").value], "9");
    }

    #[test]
    fn deep_texts_are_indexed_without_recursion() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let source = crate::json::text::SourceText::from_string(deep.clone());
        let located = source.locate(&vec![Index(0); 50]).expect("valid");
        assert_eq!((located.value, located.matched), (50..deep.len() - 50, 50));
        let open = crate::json::text::SourceText::from_string("[".repeat(100_000));
        assert_eq!(open.locate(&[Index(0)]), None);
    }
}
