//! Paths to a place inside a JSON value (`Health.max`, `waypoints[2].x`).

use std::fmt;

/// One step of a [`FieldPath`]: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathSegment {
    /// A key of a JSON object (a struct field, a map key, an enum variant).
    Key(String),
    /// An index into a JSON array.
    Index(usize),
}

/// A path from some JSON value down to a place inside it.
///
/// Displayed the way a Rust programmer reads a field access: `stats.hp`,
/// `waypoints[2].x`; the empty path displays as nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<PathSegment>);

impl FieldPath {
    /// The empty path (the value itself).
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// The path's segments, outermost first.
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    /// Whether this is the empty path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// This path with `key` appended.
    pub fn key(&self, key: impl Into<String>) -> Self {
        let mut segments = self.0.clone();
        segments.push(PathSegment::Key(key.into()));
        FieldPath(segments)
    }

    /// This path with `index` appended.
    pub fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(PathSegment::Index(index));
        FieldPath(segments)
    }

    /// Appends a segment in place.
    pub fn push(&mut self, segment: PathSegment) {
        self.0.push(segment);
    }

    /// The path without its last segment (the root stays the root).
    pub fn parent(&self) -> FieldPath {
        let mut segments = self.0.clone();
        segments.pop();
        FieldPath(segments)
    }

    /// The last segment, if any.
    pub fn last(&self) -> Option<&PathSegment> {
        self.0.last()
    }

    /// The place this path names in component `component`, as messages write it:
    /// `Health.max`, `Inventory[2]`, `Name` (the empty path).
    ///
    /// ```
    /// use archetype_engine::FieldPath;
    /// assert_eq!(FieldPath::root().key("max").in_component("Health"), "Health.max");
    /// assert_eq!(FieldPath::root().in_component("Name"), "Name");
    /// ```
    pub fn in_component(&self, component: &str) -> String {
        match self.0.first() {
            None => component.to_string(),
            Some(PathSegment::Index(_)) => format!("{component}{self}"),
            Some(PathSegment::Key(_)) => format!("{component}.{self}"),
        }
    }

    /// Renders the path as a JSON Pointer (RFC 6901): `/stats/hp`, `/waypoints/2/x`.
    pub fn to_json_pointer(&self) -> String {
        let mut out = String::new();
        for segment in &self.0 {
            out.push('/');
            match segment {
                PathSegment::Key(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
                PathSegment::Index(index) => out.push_str(&index.to_string()),
            }
        }
        out
    }
}

impl From<Vec<PathSegment>> for FieldPath {
    fn from(segments: Vec<PathSegment>) -> Self {
        FieldPath(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                PathSegment::Key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_a_field_access() {
        let path = FieldPath::root().key("waypoints").index(2).key("x");
        assert_eq!(path.to_string(), "waypoints[2].x");
        assert_eq!(path.to_json_pointer(), "/waypoints/2/x");
        assert_eq!(FieldPath::root().to_string(), "");
        assert_eq!(FieldPath::root().key("a/b~").to_json_pointer(), "/a~1b~0");
    }
}
