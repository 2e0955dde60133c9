//! How archetype values merge: JSON Merge Patch (RFC 7396, [`merge_patch`](crate::json::merge_patch)) plus what the
//! component types say about enums. Used wherever a file's value is applied to an inherited one
//! (inheritance, children, spawn-time overrides).
//!
//! **Variant switch.** An enum value names one variant: `{"Patrol": {"radius": 4}}` (serde's
//! default, externally tagged) or `{"kind": "Patrol", "radius": 4}` (internally tagged,
//! `#[serde(tag = "kind")]`). Merging key by key, a patch naming another variant would keep the
//! old variant's fields beside the new one's. So when the type at that place is such an enum and
//! the patch names a different variant than the value it applies to, the patch replaces the
//! value instead; within the same variant, fields merge as usual. Other enum forms (adjacently
//! tagged, untagged) merge as objects.
//!
//! **Operators.** A patch value `{"$append": [..]}`, `{"$add": 1}`, ... changes the value it
//! applies to ([`operator`]).
//!
//! **Variations.** `{"$range": ..}` and `{"$pick": ..}` are whole values ([`variation`]): they
//! replace what they apply to, a plain value replaces them, and operators apply to their
//! outcomes.

use serde_json::{Map, Value};

use crate::archetype::file::keys;
use crate::archetype::operator::{self, KeyIndex, Operator, OperatorError};
use crate::archetype::variation;
use crate::component::{ComponentRegistry, Rounding};
use crate::diagnostic::DiagnosticCode;
use crate::json::did_you_mean;
use crate::json::{axis_array, axis_object, Shape};
use crate::json::{FieldPath, PathSegment};

/// What the merge needs to know of component types.
pub(crate) trait ValueShapes {
    /// Whether the value at `path` of `component` is an enum written `"Variant"` or
    /// `{"Variant": ...}`.
    fn is_enum(&self, component: &str, path: &[PathSegment]) -> bool;
    /// The tag field of the internally tagged enum at `path` of `component`, if it is one.
    fn tag(&self, component: &str, path: &[PathSegment]) -> Option<&'static str>;
    /// Whether the value at `path` of `component` is of an integer type.
    fn is_integer(&self, component: &str, path: &[PathSegment]) -> bool;
    /// How an operator's result at `path` of `component` is made whole when `$round` does not
    /// say: the field's own rounding, [`Rounding::Nearest`] for an integer type, else not.
    fn rounding(&self, component: &str, path: &[PathSegment]) -> Option<Rounding> {
        self.is_integer(component, path)
            .then_some(Rounding::Nearest)
    }
    /// The value the type of `component` gives the place `path` when `value` (a whole value of
    /// it, `null` for none) leaves it out, if the type has a default there.
    fn default_at(&self, component: &str, value: &Value, path: &[PathSegment]) -> Option<Value>;
    /// The axes of the vector at `path` of `component` (`x`, `y`, `z` of a glam `Vec3`, or
    /// what the component's options name), if it is one.
    fn axes(&self, component: &str, path: &[PathSegment]) -> Option<&'static [&'static str]>;
}

impl ValueShapes for ComponentRegistry {
    fn is_enum(&self, component: &str, path: &[PathSegment]) -> bool {
        self.id(component)
            .is_some_and(|id| matches!(self.ops(id).probe(path), Some(Shape::Enum { .. })))
    }

    fn tag(&self, component: &str, path: &[PathSegment]) -> Option<&'static str> {
        self.ops(self.id(component)?).tag_of(path)
    }

    fn is_integer(&self, component: &str, path: &[PathSegment]) -> bool {
        self.id(component).is_some_and(|id| {
            matches!(
                self.ops(id).probe(path),
                Some(Shape::Number { integer: true })
            )
        })
    }

    fn rounding(&self, component: &str, path: &[PathSegment]) -> Option<Rounding> {
        let declared = self
            .id(component)
            .and_then(|id| self.declared_rounding(id, path));
        declared.or_else(|| {
            self.is_integer(component, path)
                .then_some(Rounding::Nearest)
        })
    }

    fn default_at(&self, component: &str, value: &Value, path: &[PathSegment]) -> Option<Value> {
        // The type read without the place, and written back: what it filled in is its default.
        let ops = self.ops(self.id(component)?);
        let empty = Value::Object(Map::new());
        let value = if value.is_null() { &empty } else { value };
        let typed = ops.decode(value, &mut Vec::new()).ok()?;
        let mut written = ops.encode(&typed).ok()?;
        for (depth, segment) in path.iter().enumerate() {
            written = match (written, segment) {
                (Value::Object(mut object), PathSegment::Key(key)) => object.remove(key)?,
                // An axis of a vector (`scale.y`).
                (Value::Array(mut items), PathSegment::Key(key)) => {
                    let axes = self.axes(component, &path[..depth])?;
                    let index = axes.iter().position(|axis| axis == key)?;
                    (index < items.len()).then(|| items.swap_remove(index))?
                }
                _ => return None,
            };
        }
        Some(written)
    }

    fn axes(&self, component: &str, path: &[PathSegment]) -> Option<&'static [&'static str]> {
        let id = self.id(component)?;
        self.declared_axes(id, path)
            .or_else(|| match self.ops(id).probe(path) {
                Some(Shape::Vector { axes }) => Some(axes),
                _ => None,
            })
    }
}

/// An operator that could not be applied: where inside the component, and why.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct MergeProblem {
    pub field: FieldPath,
    pub error: OperatorError,
}

/// A part of a file's value that changed nothing: a `null` with nothing to remove, a
/// `$remove` item the list did not hold.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct MergeLint {
    /// `changes-nothing` or `same-as-inherited`.
    pub code: DiagnosticCode,
    /// Where inside the component (at the `null`, at the `$remove` item, at the value).
    pub field: FieldPath,
    pub message: String,
    pub suggestion: Option<String>,
}

/// Applies `patch` (a file's value of `component`) to `target` (the inherited value, `null`
/// for none), in place. Returns the operators that could not be applied.
pub(super) fn merge(
    target: &mut Value,
    patch: &Value,
    component: &str,
    shapes: &dyn ValueShapes,
) -> Vec<MergeProblem> {
    merge_linted(target, patch, component, shapes, &mut Vec::new())
}

/// [`merge`], adding to `lints` the parts of `patch` that changed nothing.
pub(super) fn merge_linted(
    target: &mut Value,
    patch: &Value,
    component: &str,
    shapes: &dyn ValueShapes,
    lints: &mut Vec<MergeLint>,
) -> Vec<MergeProblem> {
    let mut place = Place {
        component,
        shapes,
        path: Vec::new(),
        problems: Vec::new(),
        lints,
    };
    place.merge(target, patch);
    place.problems
}

/// What merging `patch` into nothing (`null`) gives, by the rules of [`Place::merge`], without
/// tracking the place (nothing can go wrong): `patch` without the `null`s of its objects, an
/// operator or a spawn-time variation whole (an operator waits for a value).
pub(super) fn merged_into_nothing(patch: &Value) -> Value {
    match patch {
        Value::Object(object)
            if !variation::is_variation(patch) && Operator::of(patch).is_none() =>
        {
            let kept = object.iter().filter(|(_, value)| !value.is_null());
            Value::Object(
                kept.map(|(key, value)| (key.clone(), merged_into_nothing(value)))
                    .collect(),
            )
        }
        _ => patch.clone(),
    }
}

/// How many items of one list operator that match nothing get a "did you mean" (each reads
/// the whole list: more would make the lints grow with the product of the two).
const MAX_SUGGESTED: usize = 8;

/// `item` as JSON in backticks, cut short past 40 characters.
fn shown(item: &Value) -> String {
    let text = item.to_string();
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("`{}…`", &text[..end]),
        None => format!("`{text}`"),
    }
}

/// Where in a component the merge is, and what went wrong so far.
struct Place<'a> {
    component: &'a str,
    shapes: &'a dyn ValueShapes,
    path: Vec<PathSegment>,
    problems: Vec<MergeProblem>,
    lints: &'a mut Vec<MergeLint>,
}

impl Place<'_> {
    fn merge(&mut self, target: &mut Value, patch: &Value) {
        if target.is_null() {
            // Nothing to merge with (most merges: each parent's value into a new archetype).
            *target = merged_into_nothing(patch);
            return;
        }
        let Value::Object(patch_object) = patch else {
            if operator::same(target, patch) {
                self.note_same(patch);
            }
            *target = patch.clone();
            return;
        };
        // A spawn-time variation is a whole value: it replaces, and is replaced by, any value
        // but an operator (which applies to its outcomes).
        if variation::is_variation(patch) {
            *target = patch.clone();
            return;
        }
        if Operator::of(patch).is_some() {
            // Records of a list by key: merged here, where their operators apply.
            if let (Some(key), Value::Array(items)) = (operator::key_of(patch), &mut *target) {
                self.keyed(items, patch, key);
                return;
            }
            let (shapes, component, path) = (self.shapes, self.component, &self.path);
            let integer = |below: &[PathSegment]| {
                let place = [path.as_slice(), below].concat();
                shapes.rounding(component, &place)
            };
            match operator::apply(target, patch, &integer) {
                Ok(unmatched) => self.lint_unmatched(target, patch, &unmatched),
                Err(error) => self.problems.push(MergeProblem {
                    field: FieldPath(self.path.clone()),
                    error,
                }),
            }
            return;
        }
        // A `$replace` waiting for what it replaces: a later file changes the value it gives.
        if let Some(replaced) = operator::waiting_replace(target) {
            self.merge(replaced, patch);
            return;
        }
        if variation::is_variation(target) {
            *target = Value::Null;
        }
        if let Value::Object(target_object) = target {
            if self.switches_variant(target_object, patch_object) {
                // The new variant starts from nothing (its operators wait, as on a new value).
                *target = Value::Null;
            }
        }
        // A vector written as an object of its axes changes the axes it names.
        let axes = self.vector_axes(target);
        if let (Some(axes), Value::Array(items)) = (axes, &*target) {
            if let Some(object) = axis_object(items, axes) {
                *target = Value::Object(object);
            }
        }
        if !target.is_object() {
            *target = Value::Object(Map::new());
        }
        let Value::Object(target_object) = target else {
            return;
        };
        for (key, value) in patch_object {
            if value.is_null() {
                if target_object.remove(key).is_none() {
                    let field = FieldPath(self.path.clone()).key(key.clone());
                    let message = format!("`null` removes `{}.{field}`, but nothing this archetype is built on gives it: this changes nothing", self.component);
                    self.lints.push(MergeLint {
                        code: DiagnosticCode::ChangesNothing,
                        field,
                        message,
                        suggestion: None,
                    });
                }
                continue;
            }
            self.path.push(PathSegment::Key(key.clone()));
            self.merge(
                target_object.entry(key.clone()).or_insert(Value::Null),
                value,
            );
            self.path.pop();
        }
        // Back to the array form the type has, unless an axis is amiss (the reader says which).
        if let (Some(axes), Value::Object(object)) = (axes, &*target) {
            if let Some(items) = axis_array(object, axes) {
                *target = Value::Array(items);
            }
        }
    }

    /// The axes of the vector here, when `target` is its array form (the types are asked only
    /// then: most merges never ask).
    fn vector_axes(&self, target: &Value) -> Option<&'static [&'static str]> {
        match target {
            Value::Array(items) if !items.is_empty() => {
                let axes = self.shapes.axes(self.component, &self.path)?;
                (axes.len() == items.len()).then_some(axes)
            }
            _ => None,
        }
    }

    /// The keyed operators of `patch` (`$key` names the records' key field) on `items`, in
    /// order: `$remove` by key, `$update` (each record merged into the one with its key, as any
    /// value merges), `$upsert` (each record replaces the one with its key, or is appended).
    fn keyed(&mut self, items: &mut Vec<Value>, patch: &Value, key: &str) {
        let given = |name: &str| {
            let list = patch.get(name).and_then(Value::as_array);
            list.map(Vec::as_slice).unwrap_or_default()
        };
        let names = given(keys::REMOVE);
        let unmatched = operator::remove_by_key(items, names, key);
        let missing: Vec<(usize, &Value)> = unmatched.iter().map(|&i| (i, &names[i])).collect();
        self.lint_missing(items, keys::REMOVE, key, &missing);
        let mut index = KeyIndex::of(items, key);
        let mut missing = Vec::new();
        for (j, record) in given(keys::UPDATE).iter().enumerate() {
            let (Some(name), Value::Object(fields)) = (record.get(key), record) else {
                continue;
            };
            let Some(i) = index.find(items, key, name) else {
                missing.push((j, name));
                continue;
            };
            // The key names the record: it is not a change to it.
            let mut change = fields.clone();
            change.remove(key);
            self.path.push(PathSegment::Index(i));
            self.merge(&mut items[i], &Value::Object(change));
            self.path.pop();
        }
        self.lint_missing(items, keys::UPDATE, key, &missing);
        for record in given(keys::UPSERT) {
            operator::upsert(items, &mut index, key, record);
        }
    }

    /// Lints each name of `operator`'s records (`(place in the operand, key value)`) that no
    /// record of `items` has, with the nearest key it holds as a suggestion.
    fn lint_missing(
        &mut self,
        items: &[Value],
        operator: &str,
        key: &str,
        missing: &[(usize, &Value)],
    ) {
        let names = || items.iter().filter_map(|item| item.get(key)?.as_str());
        for (n, &(j, name)) in missing.iter().enumerate() {
            // Each suggestion reads the whole list: only the first few get one.
            let suggest = n < MAX_SUGGESTED;
            let mut field = FieldPath(self.path.clone()).key(operator).index(j);
            if operator != keys::REMOVE {
                field = field.key(key);
            }
            self.lints.push(MergeLint {
                code: DiagnosticCode::ChangesNothing,
                message: format!(
                    "`{operator}` changes nothing here: the list holds no record whose `{key}` is {}",
                    shown(name)
                ),
                suggestion: (name.as_str().filter(|_| suggest))
                    .and_then(|name| did_you_mean(name, names())),
                field,
            });
        }
    }

    /// Notes that `patch`, written here, is what is inherited here.
    fn note_same(&mut self, patch: &Value) {
        let field = FieldPath(self.path.clone());
        let place = match field.is_empty() {
            true => format!("`{}`", self.component),
            false => format!("`{}.{field}`", self.component),
        };
        self.lints.push(MergeLint {
            code: DiagnosticCode::SameAsInherited,
            message: format!(
                "{place} is already {} in what this archetype is built on: this changes nothing",
                shown(patch)
            ),
            suggestion: None,
            field,
        });
    }

    /// Lints the items of `patch`'s `$remove` (at `unmatched`) that removed nothing from the
    /// list `target` now is, each with the nearest item it holds as a suggestion.
    fn lint_unmatched(&mut self, target: &Value, patch: &Value, unmatched: &[usize]) {
        let given = patch.get(keys::REMOVE).and_then(Value::as_array);
        let (Some(given), Value::Array(items)) = (given, target) else {
            return;
        };
        let names = || items.iter().filter_map(Value::as_str);
        for (n, &i) in unmatched.iter().enumerate() {
            let suggest = n < MAX_SUGGESTED;
            let Some(item) = given.get(i) else { continue };
            let field = FieldPath(self.path.clone()).key(keys::REMOVE).index(i);
            let shown = shown(item);
            self.lints.push(MergeLint {
                code: DiagnosticCode::ChangesNothing,
                message: format!(
                    "`$remove` removes nothing here: the list it applies to holds no {shown}"
                ),
                suggestion: (item.as_str().filter(|_| suggest))
                    .and_then(|name| did_you_mean(name, names())),
                field,
            });
        }
    }

    /// Whether `patch` names another variant of an enum than `target` holds (the types are
    /// asked only when the values look like it: most merges never ask).
    fn switches_variant(&self, target: &Map<String, Value>, patch: &Map<String, Value>) -> bool {
        // Externally tagged: one key each (not counting `null`s, which remove), different.
        let mut named = patch.iter().filter(|(_, value)| !value.is_null());
        if let (Some((variant, _)), None, 1) = (named.next(), named.next(), target.len()) {
            if !target.contains_key(variant) {
                return self.shapes.is_enum(self.component, &self.path);
            }
        }
        // Internally tagged: a string field both have, changed, that is the enum's tag.
        let changed_string = patch.iter().any(|(key, value)| {
            value.is_string()
                && target
                    .get(key)
                    .is_some_and(|old| old.is_string() && old != value)
        });
        changed_string
            && self
                .shapes
                .tag(self.component, &self.path)
                .is_some_and(|tag| match (target.get(tag), patch.get(tag)) {
                    (Some(old), Some(new)) => new.is_string() && old != new,
                    _ => false,
                })
    }
}

/// Component types with no enums, integers or defaults, for tests of merging.
#[cfg(test)]
pub(super) struct NoShapes;

#[cfg(test)]
impl ValueShapes for NoShapes {
    fn is_enum(&self, _: &str, _: &[PathSegment]) -> bool {
        false
    }
    fn tag(&self, _: &str, _: &[PathSegment]) -> Option<&'static str> {
        None
    }
    fn is_integer(&self, _: &str, _: &[PathSegment]) -> bool {
        false
    }
    fn default_at(&self, _: &str, _: &Value, _: &[PathSegment]) -> Option<Value> {
        None
    }
    fn axes(&self, _: &str, _: &[PathSegment]) -> Option<&'static [&'static str]> {
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_value_merged_into_nothing_loses_the_nulls_of_its_objects_only() {
        let patch = json!({
            "hp": 10,
            "gone": null,
            "stats": { "speed": null, "armour": { "head": 1, "legs": null } },
            "list": [null, { "kept": null }],
            "scaled": { "$mul": 1.5 },
            "rolled": { "$range": [1, 3] },
        });
        let mut target = Value::Null;
        assert!(merge(&mut target, &patch, "C", &NoShapes).is_empty());
        assert_eq!(
            target,
            json!({
                "hp": 10,
                "stats": { "armour": { "head": 1 } },
                "list": [null, { "kept": null }],
                "scaled": { "$mul": 1.5 },
                "rolled": { "$range": [1, 3] },
            })
        );
        // As merging into an empty object does, key by key.
        let mut object = json!({});
        assert!(merge(&mut object, &patch, "C", &NoShapes).is_empty());
        assert_eq!(object, target);
    }

    #[test]
    fn only_the_first_few_items_that_match_nothing_get_a_suggestion() {
        let mut target = json!(["rag", "bone"]);
        let gone: Vec<String> = (0..20).map(|i| format!("rags{i}")).collect();
        let patch = json!({ "$remove": gone });
        let mut lints = Vec::new();
        assert!(merge_linted(&mut target, &patch, "Loot", &NoShapes, &mut lints).is_empty());
        assert_eq!(lints.len(), 20);
        let suggested = lints
            .iter()
            .filter(|lint| lint.suggestion.is_some())
            .count();
        assert_eq!(suggested, MAX_SUGGESTED);
    }
}
