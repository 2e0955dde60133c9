//! JSON Merge Patch (RFC 7396): how archetypes inherit, how overrides apply, and how a change
//! between two versions of an archetype is expressed.
//!
//! Objects merge key by key, recursively; anything else (numbers, strings, arrays) replaces;
//! `null` deletes. These functions are pure: no I/O, no registry.

use serde_json::{Map, Value};

/// Applies `patch` to `target` in place (RFC 7396, section 2).
///
/// # Example
/// ```
/// use archetype_engine::merge_patch;
/// use serde_json::json;
/// let mut health = json!({ "current": 10, "max": 10 });
/// merge_patch::apply(&mut health, &json!({ "max": 20, "current": null }));
/// assert_eq!(health, json!({ "max": 20 }));
/// ```
pub fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                apply(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// The result of applying `patch` to `target`, where a missing target is `null`.
pub fn merged(target: Option<&Value>, patch: &Value) -> Value {
    let mut result = target.cloned().unwrap_or(Value::Null);
    apply(&mut result, patch);
    result
}

/// The smallest merge patch that turns `old` into `new`, or `None` when they are equal.
///
/// Only objects are diffed key by key; a changed array or scalar is replaced whole. `new` must
/// not contain `null` object members (merge patch cannot express them); values produced by
/// [`apply`] never do.
///
/// # Example
/// ```
/// use archetype_engine::merge_patch;
/// use serde_json::json;
/// let old = json!({ "current": 10, "max": 10, "regen": 1 });
/// let new = json!({ "current": 10, "max": 25 });
/// let patch = merge_patch::diff(&old, &new).unwrap();
/// assert_eq!(patch, json!({ "max": 25, "regen": null }));
/// ```
pub fn diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            let mut patch = Map::new();
            for (key, old_value) in old {
                match new.get(key) {
                    None => {
                        patch.insert(key.clone(), Value::Null);
                    }
                    Some(new_value) => {
                        if let Some(change) = diff(old_value, new_value) {
                            patch.insert(key.clone(), change);
                        }
                    }
                }
            }
            for (key, new_value) in new {
                if !old.contains_key(key) {
                    patch.insert(key.clone(), new_value.clone());
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ if old == new => None,
        _ => Some(new.clone()),
    }
}

/// Removes from `patch` every place that `overrides` sets, so a per-instance override keeps
/// winning over a change to the archetype. Returns `false` when nothing is left to apply.
///
/// A place is set by `overrides` when the override has a non-object value there (or `null`,
/// which removed it); objects in both are narrowed key by key.
pub fn remove_overridden(patch: &mut Value, overrides: &Value) -> bool {
    match (patch, overrides) {
        (Value::Object(patch), Value::Object(overrides)) => {
            patch.retain(|key, value| match overrides.get(key) {
                None => true,
                Some(Value::Object(inner)) if value.is_object() => {
                    remove_overridden(value, &Value::Object(inner.clone()))
                }
                Some(_) => false,
            });
            !patch.is_empty()
        }
        // The override sets this whole value: nothing of the patch applies.
        (_, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The examples of RFC 7396, appendix A.
    #[test]
    fn rfc_7396_examples() {
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":"b","b":"c"}),
                json!({"a":null}),
                json!({"b":"c"}),
            ),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (
                json!({}),
                json!({"a":{"bb":{"ccc":null}}}),
                json!({"a":{"bb":{}}}),
            ),
        ];
        for (target, patch, expected) in cases {
            assert_eq!(merged(Some(&target), &patch), expected, "patch {patch}");
        }
    }

    #[test]
    fn diff_is_the_inverse_of_apply() {
        let old = json!({"hp": {"max": 10, "cur": 10}, "tags": [1, 2], "gone": true});
        let new = json!({"hp": {"max": 12, "cur": 10}, "tags": [1], "new": {"x": 1}});
        let patch = diff(&old, &new).unwrap();
        assert_eq!(
            patch,
            json!({"hp": {"max": 12}, "tags": [1], "gone": null, "new": {"x": 1}})
        );
        assert_eq!(merged(Some(&old), &patch), new);
        assert_eq!(diff(&new, &new), None);
    }

    #[test]
    fn overrides_win_over_patches() {
        let mut patch = json!({"max": 20, "regen": 2, "pos": {"x": 1, "y": 2}});
        assert!(remove_overridden(
            &mut patch,
            &json!({"max": 5, "pos": {"x": 0}})
        ));
        assert_eq!(patch, json!({"regen": 2, "pos": {"y": 2}}));
        let mut patch = json!({"max": 20});
        assert!(!remove_overridden(&mut patch, &json!({"max": 1})));
        let mut whole = json!({"max": 20});
        assert!(!remove_overridden(&mut whole, &json!(7)));
    }
}
