//! Operators as written: the problems a file's operators have on their own (an unknown `$`
//! key, an operator beside plain keys or beside one it cannot share an object with, an operand
//! of the wrong kind, `$round` / `$key` without what they go with, an operator inside a list),
//! found before anything is merged, and how a value with one is pruned to load the rest.

use serde_json::{Map, Value};

use crate::archetype::arithmetic::Rounding;
use crate::archetype::file::{keys, kind_of};
use crate::archetype::operator::Operator;
use crate::diagnostic::quoted;
use crate::json::did_you_mean;
use crate::json::{FieldPath, PathSegment};

/// A problem with an operator as written, found in one file on its own.
#[derive(Debug)]
pub(super) struct WrittenProblem {
    /// Where, inside the component value.
    pub field: FieldPath,
    /// Whether it is about the key (an unknown operator) rather than the value.
    pub at_key: bool,
    pub message: String,
    pub suggestion: Option<String>,
}

/// Every problem with the operators in a component value as written: a `$` key that is no
/// operator, an operator beside other keys, an operand of the wrong kind, an operator inside a
/// list (lists replace whole, so it would have nothing to work on).
pub(super) fn written_problems(value: &Value, field: &FieldPath, out: &mut Vec<WrittenProblem>) {
    walk_written(value, field, false, out);
}

fn walk_written(value: &Value, field: &FieldPath, in_list: bool, out: &mut Vec<WrittenProblem>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_written(item, &field.index(i), true, out);
            }
        }
        Value::Object(object) => {
            for (key, member) in object {
                let at = field.key(key.clone());
                if crate::archetype::variation::is_key(key) {
                    // A variation is a value (lists may hold them); its operand is data.
                    if let Some((at_key, message)) =
                        crate::archetype::variation::written_problem(object, key, member)
                    {
                        out.push(WrittenProblem {
                            field: at,
                            at_key,
                            message,
                            suggestion: None,
                        });
                    }
                } else if key.starts_with('$') {
                    if let Some(problem) = check_operator(object, key, member, in_list) {
                        out.push(WrittenProblem {
                            field: at,
                            ..problem
                        });
                        continue;
                    }
                    // What `$replace` gives is a value, written as any other; so are the
                    // records `$update` and `$upsert` give (their operators apply there).
                    if key == keys::REPLACE {
                        walk_written(member, &at, in_list, out);
                        continue;
                    }
                    if let (keys::UPDATE | keys::UPSERT, Value::Array(records)) =
                        (key.as_str(), member)
                    {
                        for (i, record) in records.iter().enumerate() {
                            walk_written(record, &at.index(i), false, out);
                        }
                        continue;
                    }
                    // An operand is data: only a list's items may hold (misplaced) operators.
                    if let Value::Array(items) = member {
                        for (i, item) in items.iter().enumerate() {
                            walk_written(item, &at.index(i), true, out);
                        }
                    }
                } else {
                    walk_written(member, &at, in_list, out);
                }
            }
        }
        _ => {}
    }
}

/// What is wrong with the operator `key` (whose operand is `operand`) of `object`, if anything.
/// The problem's `field` is left for the caller to set.
fn check_operator(
    object: &Map<String, Value>,
    key: &str,
    operand: &Value,
    in_list: bool,
) -> Option<WrittenProblem> {
    let problem = |at_key: bool, message: String, suggestion: Option<String>| {
        Some(WrittenProblem {
            field: FieldPath::root(),
            at_key,
            message,
            suggestion,
        })
    };
    if key == keys::KEY {
        return check_key(object, operand, in_list).map(|(at_key, message)| WrittenProblem {
            field: FieldPath::root(),
            at_key,
            message,
            suggestion: None,
        });
    }
    if key == keys::ROUND {
        return check_round(object, operand, in_list).map(|(at_key, message, suggestion)| {
            WrittenProblem {
                field: FieldPath::root(),
                at_key,
                message,
                suggestion,
            }
        });
    }
    let Some(operator) = Operator::from_key(key) else {
        let names = keys::OPERATORS.iter().chain(&keys::VARIATIONS).copied();
        let names = names.chain([keys::ROUND, keys::KEY]);
        let message = format!(
            "unknown operator {}; keys starting with `$` are operators: {}",
            quoted(key),
            operator_list()
        );
        return problem(true, message, did_you_mean(key, names));
    };
    if in_list {
        let message = format!("{} inside a list has nothing to work on (lists are replaced whole); write it in place of the list", quoted(key));
        return problem(true, message, None);
    }
    if let Some(plain) = object.keys().find(|other| !other.starts_with('$')) {
        let message = format!(
            "{} cannot be beside {}: an object of operators stands for the value they change",
            quoted(key),
            quoted(plain)
        );
        return problem(true, message, None);
    }
    if operator == Operator::Replace {
        return check_replace(object, operand).map(|(at_key, message)| WrittenProblem {
            field: FieldPath::root(),
            at_key,
            message,
            suggestion: None,
        });
    }
    if object.contains_key(keys::REPLACE) {
        // Reported once, at `$replace`.
        return None;
    }
    if let Some((at_key, message)) = check_keyed(object, operator, operand) {
        return problem(at_key, message, None);
    }
    let other_kind = object.keys().filter_map(|other| Operator::from_key(other));
    if let Some(other) = other_kind
        .into_iter()
        .find(|other| other.on_lists() != operator.on_lists())
    {
        // Reported once, at the list operator.
        if operator.on_lists() {
            let message = format!(
                "{} and `{}` cannot change one value: one works on lists, the other on numbers",
                quoted(key),
                other.key()
            );
            return problem(true, message, None);
        }
    }
    let (fits, wanted) = match operator.on_lists() {
        true => (operand.is_array(), "a list"),
        false => (operand.as_f64().is_some_and(f64::is_finite), "a number"),
    };
    (!fits).then(|| WrittenProblem {
        field: FieldPath::root(),
        at_key: false,
        message: format!("`{key}` takes {wanted}, found {}", kind_of(operand)),
        suggestion: None,
    })
}

/// What is wrong with a list operator written beside `$key`, or with `$update` / `$upsert`
/// (which need it), if anything: whether it is about the key, and the message.
fn check_keyed(
    object: &Map<String, Value>,
    operator: Operator,
    operand: &Value,
) -> Option<(bool, String)> {
    let key = object.get(keys::KEY).and_then(Value::as_str);
    let at_key = |message: String| Some((true, message));
    let at_value = |message: String| Some((false, message));
    match (operator, key) {
        (Operator::Append | Operator::Prepend | Operator::Union, Some(_)) => at_key(format!(
            "`{}` cannot be beside `$key`: to add a record by its key, use `$upsert`",
            operator.key()
        )),
        (Operator::Update | Operator::Upsert, None) => at_key(format!(
            "`{0}` needs `$key` beside it, naming the field that names each record (`{{\"$key\": \"id\", \"{0}\": [..]}}`)",
            operator.key()
        )),
        (Operator::Update | Operator::Upsert, Some(key)) => {
            let items = operand.as_array()?;
            let (i, _) = items.iter().enumerate().find(|(_, item)| {
                !item.get(key).is_some_and(|name| name.is_string() || name.is_number())
            })?;
            at_value(format!(
                "`{}` item {i} has no `{key}` (its `$key`) naming the record it is for",
                operator.key()
            ))
        }
        (Operator::Remove, Some(_)) => {
            let items = operand.as_array()?;
            let (i, _) = (items.iter().enumerate())
                .find(|(_, item)| !(item.is_string() || item.is_number()))?;
            at_value(format!("with `$key`, `$remove` takes the keys of the records to remove (strings or numbers); item {i} is not one"))
        }
        _ => None,
    }
}

/// What is wrong with `$key` (whose operand is `operand`) in `object`: whether it is about the
/// key, and the message.
fn check_key(
    object: &Map<String, Value>,
    operand: &Value,
    in_list: bool,
) -> Option<(bool, String)> {
    if in_list {
        return Some((true, "`$key` inside a list has nothing to work on (lists are replaced whole); write it in place of the list".to_string()));
    }
    if let Some(plain) = object.keys().find(|other| !other.starts_with('$')) {
        return Some((
            true,
            format!(
                "`$key` cannot be beside {}: it goes in an object of list operators",
                quoted(plain)
            ),
        ));
    }
    let keyed = [keys::UPDATE, keys::UPSERT, keys::REMOVE];
    let unkeyed = [keys::APPEND, keys::PREPEND, keys::UNION];
    // Beside `$append`: reported there.
    let reported = unkeyed.iter().any(|op| object.contains_key(*op));
    if !reported && !keyed.iter().any(|op| object.contains_key(*op)) {
        return Some((true, "`$key` names the field that names each record of a list, for `$update`, `$upsert` and `$remove`; write it beside one of them".to_string()));
    }
    match operand.as_str() {
        Some(name) if !name.is_empty() => None,
        _ => Some((
            false,
            format!(
                "`$key` takes the name of the field that names each record (`\"id\"`), found {}",
                kind_of(operand)
            ),
        )),
    }
}

/// What is wrong with `$replace` (whose operand is `operand`) in `object`: whether it is about
/// the key, and the message.
fn check_replace(object: &Map<String, Value>, operand: &Value) -> Option<(bool, String)> {
    let replace = quoted(keys::REPLACE);
    if let Some(other) = object.keys().find(|other| *other != keys::REPLACE) {
        let message = format!(
            "{replace} stands for the whole value, so it cannot be beside {}",
            quoted(other)
        );
        return Some((true, message));
    }
    operand.is_null().then(|| {
        let message = format!("{replace} takes the value that replaces the inherited one, found null; to remove the inherited value, write `null` in place of the object");
        (false, message)
    })
}

/// What is wrong with `$round` (whose operand is `operand`) in `object`: whether it is about
/// the key, the message and a suggestion.
fn check_round(
    object: &Map<String, Value>,
    operand: &Value,
    in_list: bool,
) -> Option<(bool, String, Option<String>)> {
    let round = quoted(keys::ROUND);
    if in_list {
        let message = format!("{round} inside a list has nothing to round (lists are replaced whole); write it beside the `$add` or `$mul` in place of the number");
        return Some((true, message, None));
    }
    if let Some(plain) = object.keys().find(|other| !other.starts_with('$')) {
        let message = format!(
            "{round} cannot be beside {}: it goes in an object of `$add` or `$mul`",
            quoted(plain)
        );
        return Some((true, message, None));
    }
    let mut operators = object.keys().filter_map(|other| Operator::from_key(other));
    if !operators.any(Operator::on_numbers) {
        let message = format!("{round} says how the result of `$add` or `$mul` is made a whole number; write it beside one of them (`{{\"$mul\": 0.5, \"$round\": \"trunc\"}}`)");
        return Some((true, message, None));
    }
    let modes = Rounding::NAMES;
    let listed = modes.map(|name| format!("`{name}`"));
    let listed = format!("{} or {}", listed[..4].join(", "), listed[4]);
    match operand.as_str() {
        Some(name) if Rounding::from_name(name).is_some() => None,
        Some(name) => Some((
            false,
            format!("unknown rounding {}; {round} takes {listed}", quoted(name)),
            did_you_mean(name, modes.iter().copied()),
        )),
        None => Some((
            false,
            format!(
                "{round} takes a string: {listed}; found {}",
                kind_of(operand)
            ),
            None,
        )),
    }
}

/// Removes from `value` the object member holding the wrong operator found at `field` (the
/// nearest member of an object above it, so a list holding one goes whole). Returns `true`
/// when that is the whole value (the component is left out).
pub(super) fn prune(value: &mut Value, field: &FieldPath) -> bool {
    // The operator object is `field` without its `$` key; its member is the last key before it
    // that names an object member.
    let segments = &field.segments()[..field.segments().len().saturating_sub(1)];
    let mut cut = None;
    let mut at = &*value;
    for (i, segment) in segments.iter().enumerate() {
        let next = match (at, segment) {
            (Value::Object(object), PathSegment::Key(key)) => {
                cut = Some(i);
                object.get(key)
            }
            (Value::Array(items), PathSegment::Index(index)) => items.get(*index),
            _ => None,
        };
        let Some(next) = next else { return false };
        at = next;
    }
    let Some(cut) = cut else { return true };
    let mut parent = &mut *value;
    for segment in &segments[..cut] {
        let next = match (parent, segment) {
            (Value::Object(object), PathSegment::Key(key)) => object.get_mut(key),
            (Value::Array(items), PathSegment::Index(index)) => items.get_mut(*index),
            _ => None,
        };
        let Some(next) = next else { return false };
        parent = next;
    }
    if let (Value::Object(object), PathSegment::Key(key)) = (parent, &segments[cut]) {
        object.remove(key);
    }
    false
}

fn operator_list() -> String {
    keys::OPERATORS
        .iter()
        .chain(&keys::VARIATIONS)
        .chain(&[keys::ROUND, keys::KEY])
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
