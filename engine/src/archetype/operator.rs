//! Operators: values in archetype files that change an inherited value instead of replacing it.
//!
//! `{"$append": [..]}`, `{"$prepend": [..]}`, `{"$union": [..]}` and `{"$remove": [..]}` edit an
//! inherited list; beside `"$key": "name"`, `$update`, `$upsert` and `$remove` edit a list of
//! records by key (`$update` is merged in [`value_merge`](crate::archetype::value_merge), where
//! the operators inside its records apply); `{"$add": n}` and `{"$mul": n}` change an inherited
//! number, made whole as `$round` says ([`arithmetic`](crate::archetype::arithmetic));
//! `{"$replace": value}` puts a value in place of the inherited one. Operators are written as
//! an object of them, in place of the value they change, at any depth of a component; several
//! in one object apply in a fixed order: `$prepend`, `$append`, `$union`, `$remove`,
//! `$update`, `$upsert` on lists, `$add` then `$mul` on numbers. What is wrong with them as
//! written is found first ([`written_operator`](crate::archetype::written_operator)).
//! They are applied when archetypes are resolved, so everything after resolution (compiling,
//! scenes, hot reload, provenance) sees plain values.
//!
//! An operator with nothing to work on yet (the archetype it is written in, or a parent, has no
//! value there) waits: in an abstract archetype (a trait such as "fast": `{"$mul": 1.5}`) it
//! applies to the value of whatever the trait is combined with. In a concrete archetype it is
//! settled ([`settle`]): list operators start from an empty list, `$add` from 0, `$replace`
//! gives its value, and `$mul`, `$remove` and `$update` work on the type's default, or, where it
//! has none, leave nothing (a warning says so).

use std::fmt;
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};
use serde_json::{Map, Number, Value};

use crate::archetype::arithmetic::{Num, Rounding};
use crate::archetype::file::{keys, kind_of};
use crate::archetype::value_merge::{merged_into_nothing, ValueShapes};
use crate::component::is_operator_object;
use crate::json::{FieldPath, PathSegment};

/// One operator, in the order several in one object apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Operator {
    Prepend,
    Append,
    Union,
    Remove,
    Update,
    Upsert,
    Add,
    Mul,
    Replace,
}

/// The operators of an operator object, in the order they apply.
pub(super) type Operators<'a> = Vec<(Operator, &'a Value)>;

impl Operator {
    /// The operator written under `key` (`$append`, ...).
    pub fn from_key(key: &str) -> Option<Operator> {
        Some(match key {
            keys::APPEND => Operator::Append,
            keys::PREPEND => Operator::Prepend,
            keys::UNION => Operator::Union,
            keys::REMOVE => Operator::Remove,
            keys::UPDATE => Operator::Update,
            keys::UPSERT => Operator::Upsert,
            keys::ADD => Operator::Add,
            keys::MUL => Operator::Mul,
            keys::REPLACE => Operator::Replace,
            _ => return None,
        })
    }

    /// The key it is written under.
    pub fn key(self) -> &'static str {
        match self {
            Operator::Append => keys::APPEND,
            Operator::Prepend => keys::PREPEND,
            Operator::Union => keys::UNION,
            Operator::Remove => keys::REMOVE,
            Operator::Update => keys::UPDATE,
            Operator::Upsert => keys::UPSERT,
            Operator::Add => keys::ADD,
            Operator::Mul => keys::MUL,
            Operator::Replace => keys::REPLACE,
        }
    }

    pub fn on_lists(self) -> bool {
        !matches!(self, Operator::Add | Operator::Mul | Operator::Replace)
    }

    pub fn on_numbers(self) -> bool {
        matches!(self, Operator::Add | Operator::Mul)
    }

    /// The operators of an operator object (`{"$op": operand, ...}`, every key an operator or
    /// `$round`, at least one an operator), in the order they apply.
    pub fn of(value: &Value) -> Option<Operators<'_>> {
        if !is_operator_object(value) {
            return None;
        }
        let mut operators = value
            .as_object()?
            .iter()
            .filter(|(key, _)| *key != keys::ROUND && *key != keys::KEY)
            .map(|(key, operand)| Some((Operator::from_key(key)?, operand)))
            .collect::<Option<Operators<'_>>>()?;
        operators.sort_by_key(|(operator, _)| *operator);
        (!operators.is_empty()).then_some(operators)
    }
}

/// The field naming the records of a list an operator object edits by key (`$key`), if any.
pub(super) fn key_of(value: &Value) -> Option<&str> {
    value.get(keys::KEY)?.as_str()
}

/// The rounding an operator object asks for with `$round`, if any.
fn rounding_of(value: &Value) -> Option<Rounding> {
    Rounding::from_name(value.get(keys::ROUND)?.as_str()?)
}

/// Why an operator could not be applied.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum OperatorError {
    /// The operator met a value of the wrong kind.
    NothingToWorkOn {
        operator: Operator,
        /// What the operator works on, as a phrase.
        wanted: &'static str,
        /// The kind of value it met.
        found: &'static str,
    },
    /// Operators followed waiting operators they cannot combine with.
    CannotFollow {
        later: Vec<Operator>,
        earlier: Vec<Operator>,
    },
    /// The arithmetic overflowed, or its result does not fit the place.
    OutOfRange(Operator),
}

impl fmt::Display for OperatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperatorError::NothingToWorkOn {
                operator,
                wanted,
                found,
            } => write!(
                f,
                "`{}` needs {wanted} to work on, but the value it applies to is {found}",
                operator.key()
            ),
            OperatorError::CannotFollow { later, earlier } => write!(
                f,
                "{} cannot follow the {} it applies to, which has no value to work on yet; give a value first",
                names(later),
                names(earlier)
            ),
            OperatorError::OutOfRange(operator) => {
                write!(f, "`{}` gives a number out of range", operator.key())
            }
        }
    }
}

/// Operators by key, quoted and joined with "and".
fn names(operators: &[Operator]) -> String {
    let keys: Vec<String> = operators
        .iter()
        .map(|operator| format!("`{}`", operator.key()))
        .collect();
    keys.join(" and ")
}

/// The items of a `$remove` that matched nothing in the list it applied to, by their places in
/// its operand.
pub(super) type Unmatched = Vec<usize>;

/// How a number at a path (relative to where the operators are) is made whole when `$round`
/// does not say: its field's rounding, or [`Rounding::Nearest`] for an integer type; `None`
/// for a float.
pub(super) type RoundingAt<'a> = &'a dyn Fn(&[PathSegment]) -> Option<Rounding>;

/// Applies the operators of `patch` (an operator object) to `target`, in place. `target` is
/// `null` when there is nothing there: the operators then wait (they become the value, to be
/// applied or settled later). A number result is made whole where `$round` says so, or where
/// `integer` says the place is made whole (an integer type, or a field's own rounding).
pub(super) fn apply(
    target: &mut Value,
    patch: &Value,
    integer: RoundingAt<'_>,
) -> Result<Unmatched, OperatorError> {
    let Some(operators) = Operator::of(patch) else {
        return Ok(Unmatched::new());
    };
    if target.is_null() {
        *target = patch.clone();
        return Ok(Unmatched::new());
    }
    if let [(Operator::Replace, operand)] = operators.as_slice() {
        // Over operators still waiting for a value, it waits too: it replaces that value.
        *target = match Operator::of(target) {
            Some(_) => patch.clone(),
            None => merged_into_nothing(operand),
        };
        return Ok(Unmatched::new());
    }
    if let Some(replaced) = waiting_replace(target) {
        return apply(replaced, patch, integer);
    }
    if Operator::of(target).is_some() {
        let rounding = patch.get(keys::ROUND).and_then(Value::as_str);
        return combine(target, &operators, rounding).map(|()| Unmatched::new());
    }
    if !operators[0].0.on_lists() {
        *target = numbers(target, &operators, rounding_of(patch), integer)?;
        return Ok(Unmatched::new());
    }
    // On a spawn-time variation: each value of a pick.
    let each = |outcome: &Value| {
        let mut outcome = outcome.clone();
        apply(&mut outcome, patch, integer).map(|_| outcome)
    };
    if let Some(result) = crate::archetype::variation::map_outcomes(target, each) {
        *target = result?;
        return Ok(Unmatched::new());
    }
    let mut unmatched = Unmatched::new();
    for (operator, operand) in operators {
        // A list is edited in place: a chain of parents appending to one list costs what they
        // append, not a copy of the list each.
        let Value::Array(items) = target else {
            return Err(OperatorError::NothingToWorkOn {
                operator,
                wanted: "a list",
                found: kind_of(target),
            });
        };
        unmatched.extend(edit_list(operator, items, operand, key_of(patch)));
    }
    Ok(unmatched)
}

/// The value a `$replace` still waiting for what it replaces will put there (`target` is
/// `{"$replace": value}`), if `target` is one: later files change that value.
pub(super) fn waiting_replace(target: &mut Value) -> Option<&mut Value> {
    match Operator::of(target).as_deref() {
        Some([(Operator::Replace, _)]) => target.get_mut(keys::REPLACE),
        _ => None,
    }
}

/// `target` changed by number operators: a number, each outcome of a spawn-time variation, or
/// (`$mul` alone) each number member of an object, each made whole by its own type.
fn numbers(
    target: &Value,
    operators: &Operators<'_>,
    rounding: Option<Rounding>,
    integer: RoundingAt<'_>,
) -> Result<Value, OperatorError> {
    // On a spawn-time variation: both ends of a range, each value of a pick.
    let each = |outcome: &Value| numbers(outcome, operators, rounding, integer);
    if let Some(result) = crate::archetype::variation::map_outcomes(target, each) {
        return result;
    }
    let whole = |path: &[PathSegment]| rounding.or(integer(path));
    let only_mul = operators
        .iter()
        .all(|(operator, _)| *operator == Operator::Mul);
    match target {
        Value::Number(base) => Ok(Value::Number(arithmetic(base, operators, whole(&[]))?)),
        // Scaling an object scales every number in it (`"armor": {"$mul": 0.5}`).
        Value::Object(members) if only_mul => {
            let mut scaled = members.clone();
            for (key, member) in &mut scaled {
                if let Value::Number(base) = member {
                    let rounding = whole(&[PathSegment::Key(key.clone())]);
                    *member = Value::Number(arithmetic(base, operators, rounding)?);
                }
            }
            Ok(Value::Object(scaled))
        }
        other => {
            let (operator, wanted) = match only_mul {
                true => (Operator::Mul, "a number (or an object of numbers)"),
                false => (Operator::Add, "a number"),
            };
            Err(OperatorError::NothingToWorkOn {
                operator,
                wanted,
                found: kind_of(other),
            })
        }
    }
}

/// Waiting operators (`target`) followed by more: one operator of one kind each combine (`$add
/// 1` then `$add 2` is `$add 3`, `$append [a]` then `$append [b]` is `$append [a, b]`, made
/// in place); anything else is an error. A later `$round` replaces an earlier one.
fn combine(
    target: &mut Value,
    later: &Operators<'_>,
    rounding: Option<&str>,
) -> Result<(), OperatorError> {
    let earlier = Operator::of(target).unwrap_or_default();
    let (then, base) = match (earlier.as_slice(), later.as_slice()) {
        (&[(first, first_operand)], &[(then, _)]) if first == then => {
            (then, first_operand.as_number().cloned())
        }
        _ => {
            return Err(OperatorError::CannotFollow {
                later: later.iter().map(|(operator, _)| *operator).collect(),
                earlier: earlier.iter().map(|(operator, _)| *operator).collect(),
            })
        }
    };
    let operand = later[0].1;
    if let Operator::Add | Operator::Mul = then {
        let base = base.unwrap_or(Number::from(0));
        let rounding = rounding
            .or_else(|| target.get(keys::ROUND).and_then(Value::as_str))
            .map(str::to_string);
        let combined = Value::Number(arithmetic(&base, &vec![(then, operand)], None)?);
        let mut object = Map::new();
        object.insert(then.key().to_string(), combined);
        if let Some(rounding) = rounding {
            object.insert(keys::ROUND.to_string(), Value::String(rounding));
        }
        *target = Value::Object(object);
        return Ok(());
    }
    let given = operand.as_array().map(Vec::as_slice).unwrap_or_default();
    // Operands were checked when the files were read: a list operator's is a list.
    if let Some(Value::Array(items)) = target.get_mut(then.key()) {
        match then {
            Operator::Prepend => drop(items.splice(0..0, given.iter().cloned())),
            _ => items.extend(given.iter().cloned()),
        }
    }
    Ok(())
}

/// `base` changed by the number operators in turn (`$add`, then `$mul`), then made whole by
/// `rounding` if given: whole numbers stay whole (exactly) while the operands are.
fn arithmetic(
    base: &Number,
    operators: &Operators<'_>,
    rounding: Option<Rounding>,
) -> Result<Number, OperatorError> {
    let mut result = Num::of(base);
    let mut last = Operator::Add;
    for (operator, operand) in operators {
        last = *operator;
        let out_of_range = || OperatorError::OutOfRange(*operator);
        let operand = Num::of(operand.as_number().ok_or_else(out_of_range)?);
        let next = match operator {
            Operator::Add => result.add(operand),
            _ => result.mul(operand),
        };
        result = next.ok_or_else(out_of_range)?;
    }
    result
        .finish(rounding)
        .ok_or(OperatorError::OutOfRange(last))
}

/// Edits `items` in place by a list operator. `$union` and `$remove` find the values they
/// compare by a hash of what [`same`] compares, so they cost the lists' lengths, not their
/// product (but for `$remove`'s object patterns, each tried on every object of the list).
fn edit_list(
    operator: Operator,
    items: &mut Vec<Value>,
    operand: &Value,
    key: Option<&str>,
) -> Unmatched {
    let given = operand.as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(key) = key {
        return edit_records(operator, items, given, key);
    }
    match operator {
        Operator::Append => items.extend(given.iter().cloned()),
        Operator::Prepend => drop(items.splice(0..0, given.iter().cloned())),
        Operator::Union => {
            let mut known = SameIndex::default();
            for (i, item) in items.iter().enumerate() {
                known.insert(item, i);
            }
            for item in given {
                if !known.find(item).any(|i| same(&items[i], item)) {
                    known.insert(item, items.len());
                    items.push(item.clone());
                }
            }
        }
        _ => return remove_items(items, given),
    }
    Unmatched::new()
}

/// A keyed operator (`$key` names the records' key field) on `items`: `$remove` by key,
/// `$upsert`, and `$update` as a plain merge patch (the archetype merge, which applies the
/// operators inside its records, does `$update` itself: [`value_merge`]).
///
/// [`value_merge`]: crate::archetype::value_merge
fn edit_records(
    operator: Operator,
    items: &mut Vec<Value>,
    given: &[Value],
    key: &str,
) -> Unmatched {
    if operator == Operator::Remove {
        return remove_by_key(items, given, key);
    }
    let mut index = KeyIndex::of(items, key);
    let mut unmatched = Unmatched::new();
    for (j, record) in given.iter().enumerate() {
        let Some(name) = record.get(key) else {
            continue;
        };
        match (index.find(items, key, name), operator) {
            (Some(i), Operator::Update) => crate::json::merge_patch::apply(&mut items[i], record),
            (None, Operator::Update) => unmatched.push(j),
            _ => upsert(items, &mut index, key, record),
        }
    }
    unmatched
}

/// `$upsert` of one `record`: it replaces the record of `items` with its key, or is appended.
pub(super) fn upsert(items: &mut Vec<Value>, index: &mut KeyIndex, key: &str, record: &Value) {
    let Some(name) = record.get(key) else {
        return;
    };
    match index.find(items, key, name) {
        Some(i) => items[i] = merged_into_nothing(record),
        None => {
            index.insert(name, items.len());
            items.push(merged_into_nothing(record));
        }
    }
}

/// `$remove` with `$key`: takes out of `items` every record whose key is one of `names`;
/// returns the places of the names that matched none.
pub(super) fn remove_by_key(items: &mut Vec<Value>, names: &[Value], key: &str) -> Unmatched {
    let mut wanted = SameIndex::default();
    for (i, name) in names.iter().enumerate() {
        wanted.insert(name, i);
    }
    let mut matched = vec![false; names.len()];
    items.retain(|item| {
        let Some(name) = item.get(key) else {
            return true;
        };
        let mut found = false;
        for i in wanted.find(name) {
            if same(name, &names[i]) {
                matched[i] = true;
                found = true;
            }
        }
        !found
    });
    (0..names.len()).filter(|&i| !matched[i]).collect()
}

/// The places of a list's records by their key (`$key`) value.
pub(super) struct KeyIndex(SameIndex);

impl KeyIndex {
    pub fn of(items: &[Value], key: &str) -> KeyIndex {
        let mut index = SameIndex::default();
        for (i, item) in items.iter().enumerate() {
            if let Some(name) = item.get(key) {
                index.insert(name, i);
            }
        }
        KeyIndex(index)
    }

    /// The first record of `items` whose key is `name`.
    pub fn find(&self, items: &[Value], key: &str, name: &Value) -> Option<usize> {
        (self.0.find(name)).find(|&i| items[i].get(key).is_some_and(|found| same(found, name)))
    }

    pub fn insert(&mut self, name: &Value, i: usize) {
        self.0.insert(name, i);
    }
}

/// `$remove`: takes out of `items` every item equal to one `given` (an object given: every
/// object holding its members); returns the places of those given that matched none.
fn remove_items(items: &mut Vec<Value>, given: &[Value]) -> Unmatched {
    let mut patterns = SameIndex::default();
    let mut objects = Vec::new();
    for (i, pattern) in given.iter().enumerate() {
        match pattern {
            Value::Object(_) => objects.push(i),
            _ => patterns.insert(pattern, i),
        }
    }
    let mut matched = vec![false; given.len()];
    items.retain(|item| {
        let found = match item {
            Value::Object(_) => (objects.iter().copied()).find(|&i| matches(item, &given[i])),
            _ => patterns.find(item).find(|&i| same(item, &given[i])),
        };
        if let Some(i) = found {
            matched[i] = true;
        }
        found.is_none()
    });
    // A pattern given twice matched what the first of the two did.
    let mut all = SameIndex::default();
    for (i, pattern) in given.iter().enumerate() {
        all.insert(pattern, i);
    }
    let twin_matched = |j: usize| {
        all.find(&given[j])
            .any(|k| matched[k] && same(&given[k], &given[j]))
    };
    (0..given.len())
        .filter(|&j| !matched[j] && !twin_matched(j))
        .collect()
}

/// Places of values by a hash of what [`same`] compares: the values it finds for a value are
/// those that may be the same (each to be compared).
#[derive(Default)]
struct SameIndex(FxHashMap<u64, Vec<usize>>);

impl SameIndex {
    /// Records `value` at place `i`.
    fn insert(&mut self, value: &Value, i: usize) {
        self.0.entry(same_hash(value)).or_default().push(i);
    }

    /// The places of the values recorded that may be the same as `value`.
    fn find(&self, value: &Value) -> impl Iterator<Item = usize> + '_ {
        let found = self.0.get(&same_hash(value));
        found.into_iter().flatten().copied()
    }
}

/// A hash of `value` equal for values [`same`] finds the same: numbers by value (`1` is
/// `1.0`), objects whatever the order of their members.
fn same_hash(value: &Value) -> u64 {
    let mut hasher = FxHasher::default();
    match value {
        Value::Null => 0u8.hash(&mut hasher),
        Value::Bool(flag) => (1u8, flag).hash(&mut hasher),
        Value::Number(number) => {
            // `0.0` and `-0.0` are the same number.
            let x = number.as_f64().unwrap_or(0.0);
            (2u8, if x == 0.0 { 0 } else { x.to_bits() }).hash(&mut hasher);
        }
        Value::String(text) => (3u8, text).hash(&mut hasher),
        Value::Array(items) => {
            4u8.hash(&mut hasher);
            for item in items {
                same_hash(item).hash(&mut hasher);
            }
        }
        Value::Object(members) => {
            let mut sum = 0u64;
            for (key, member) in members {
                let mut entry = FxHasher::default();
                (key, same_hash(member)).hash(&mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            (5u8, members.len(), sum).hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// JSON equality with numbers compared by value (`1` is `1.0`).
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `$remove`'s `pattern` removes `item`: an equal value, or, for an object pattern, an
/// object holding every member of the pattern (`{"id": "bite"}` removes `{"id": "bite", ..}`).
fn matches(item: &Value, pattern: &Value) -> bool {
    match (item, pattern) {
        (Value::Object(fields), Value::Object(wanted)) => wanted
            .iter()
            .all(|(key, value)| fields.get(key).is_some_and(|field| same(field, value))),
        _ => same(item, pattern),
    }
}

/// An operator settled in a concrete archetype with nothing to work on: where, and why it
/// left nothing.
#[derive(Clone, Debug)]
pub(super) struct Unused {
    /// The place inside the component.
    pub field: FieldPath,
    pub message: String,
}

/// Settles the operators still waiting in a concrete archetype's `value` of `component` (see
/// the module docs); `shapes` says which places hold integers and what the type's defaults are.
pub(super) fn settle(value: &mut Value, component: &str, shapes: &dyn ValueShapes) -> Vec<Unused> {
    let integer = |path: &[PathSegment]| shapes.rounding(component, path);
    let mut alone = Vec::new();
    let mut path = Vec::new();
    if settle_at(value, &integer, &mut path, &mut alone) {
        *value = Value::Null;
    }
    let mut unused = Vec::new();
    for (path, operators) in alone {
        // The type's default, where it has one, is what they work on.
        let start = shapes.default_at(component, value, &path);
        let Some(mut start) = start.filter(|start| !start.is_null()) else {
            unused.push(nothing_to_work_on(component, path, &operators));
            continue;
        };
        let below = |rest: &[PathSegment]| integer(&[path.as_slice(), rest].concat());
        match apply(&mut start, &operators, &below) {
            Ok(_) => set_at(value, &path, start),
            Err(_) => unused.push(nothing_to_work_on(component, path, &operators)),
        }
    }
    unused
}

/// The warning for operators (`$mul` or `$remove` alone) left with nothing to work on at `path`.
fn nothing_to_work_on(component: &str, path: Vec<PathSegment>, operators: &Value) -> Unused {
    let field = FieldPath(path);
    let first = Operator::of(operators).and_then(|found| found.first().map(|(op, _)| *op));
    let operator = first.unwrap_or(Operator::Mul);
    let (what, kind) = match operator {
        Operator::Mul => ("scale", "number"),
        Operator::Update => ("update", "list"),
        _ => ("remove from", "list"),
    };
    let place = match field.is_empty() {
        true => format!("`{component}`"),
        false => format!("`{component}.{field}`"),
    };
    Unused {
        message: format!(
            "`{}` has nothing to {what}: nothing this archetype is built on sets {place}, and its type gives no default {kind} there, so it is left out",
            operator.key()
        ),
        field,
    }
}

/// Puts `new` at `path` inside `value`, making the objects on the way.
fn set_at(value: &mut Value, path: &[PathSegment], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        *value = new;
        return;
    };
    let mut at = value;
    for segment in parents {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let (Value::Object(object), PathSegment::Key(key)) = (at, segment) else {
            return;
        };
        at = object.entry(key.clone()).or_insert(Value::Null);
    }
    if !at.is_object() {
        *at = Value::Object(Map::new());
    }
    if let (Value::Object(object), PathSegment::Key(key)) = (at, last) {
        object.insert(key.clone(), new);
    }
}

/// Settles `value`; `true` when it settled to nothing (the caller removes it). Operators with
/// nothing to start from (`$mul` or `$remove` alone) are taken out into `alone`, by place.
fn settle_at(
    value: &mut Value,
    integer: RoundingAt<'_>,
    path: &mut Vec<PathSegment>,
    alone: &mut Vec<(Vec<PathSegment>, Value)>,
) -> bool {
    if let Some(operators) = Operator::of(value) {
        if let [(Operator::Replace, operand)] = operators.as_slice() {
            // What it replaces is nothing: its value, settled as any other.
            *value = merged_into_nothing(operand);
            return settle_at(value, integer, path, alone);
        }
        // Lists start empty, numbers at 0; `$mul` or `$remove` alone have nothing to work on.
        let lists = operators.iter().any(|(operator, _)| operator.on_lists());
        let nothing = (operators.iter()).all(|(operator, _)| {
            matches!(
                operator,
                Operator::Mul | Operator::Remove | Operator::Update
            )
        });
        if nothing {
            alone.push((path.clone(), value.take()));
            return true;
        }
        let settled = match lists {
            true => {
                let mut items = Vec::new();
                for (operator, operand) in operators {
                    edit_list(operator, &mut items, operand, key_of(value));
                }
                Value::Array(items)
            }
            // Operands were checked when the file was read: this cannot fail but on overflow,
            // which leaves 0.
            false => {
                let rounding = rounding_of(value).or(integer(path));
                let result = arithmetic(&Number::from(0), &operators, rounding);
                Value::Number(result.unwrap_or(Number::from(0)))
            }
        };
        *value = settled;
        return false;
    }
    if let Value::Object(object) = value {
        object.retain(|key, member| {
            path.push(PathSegment::Key(key.clone()));
            let gone = settle_at(member, integer, path, alone);
            path.pop();
            !gone
        });
    }
    false
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::archetype::value_merge::NoShapes;

    /// The value applied, or the error's full message.
    fn applied(target: Value, patch: Value, integer: bool) -> Result<Value, String> {
        let mut target = target;
        let rounding = integer.then_some(Rounding::Nearest);
        apply(&mut target, &patch, &|_| rounding).map_err(|error| error.to_string())?;
        Ok(target)
    }

    #[test]
    fn lists() {
        let list = json!(["a", "b", { "id": "bite", "cooldown": 5 }]);
        let cases = [
            (
                json!({ "$append": ["c", "a"] }),
                json!(["a", "b", { "id": "bite", "cooldown": 5 }, "c", "a"]),
            ),
            (
                json!({ "$prepend": ["c"] }),
                json!(["c", "a", "b", { "id": "bite", "cooldown": 5 }]),
            ),
            (
                json!({ "$union": ["c", "a", "c"] }),
                json!(["a", "b", { "id": "bite", "cooldown": 5 }, "c"]),
            ),
            (
                json!({ "$remove": ["a", { "id": "bite" }, "zzz"] }),
                json!(["b"]),
            ),
        ];
        for (patch, expected) in cases {
            assert_eq!(
                applied(list.clone(), patch.clone(), false),
                Ok(expected),
                "{patch}"
            );
        }
        assert_eq!(
            applied(json!([1, 2.0, 3]), json!({ "$remove": [2] }), false),
            Ok(json!([1, 3]))
        );
        // Numbers compare by value and objects whatever the order of their members, as the
        // hash that finds them says.
        assert_eq!(
            applied(
                json!([1, -0.0, { "a": 1, "b": [2] }]),
                json!({ "$union": [1.0, 0, { "b": [2.0], "a": 1 }, { "a": 1 }] }),
                false
            ),
            Ok(json!([1, -0.0, { "a": 1, "b": [2] }, { "a": 1 }]))
        );
        assert_eq!(
            applied(
                json!([1, 0.0, [1, 2], { "a": 1, "b": 2 }, "x"]),
                json!({ "$remove": [1.0, -0.0, [1.0, 2], { "b": 2 }] }),
                false
            ),
            Ok(json!(["x"]))
        );
    }

    #[test]
    fn waiting_list_operators_combine_in_order() {
        let waiting = applied(Value::Null, json!({ "$append": ["a"] }), false).unwrap();
        let twice = applied(waiting, json!({ "$append": ["b", "c"] }), false).unwrap();
        assert_eq!(twice, json!({ "$append": ["a", "b", "c"] }));
        let waiting = applied(Value::Null, json!({ "$prepend": ["a"] }), false).unwrap();
        let twice = applied(waiting, json!({ "$prepend": ["b", "c"] }), false).unwrap();
        assert_eq!(twice, json!({ "$prepend": ["b", "c", "a"] }));
        assert_eq!(
            applied(twice, json!({ "$append": ["d"] }), false),
            Err("`$append` cannot follow the `$prepend` it applies to, which has no value to work on yet; give a value first".to_string())
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            applied(json!(10), json!({ "$add": 5 }), false),
            Ok(json!(15))
        );
        assert_eq!(
            applied(json!(10), json!({ "$add": -2.5 }), false),
            Ok(json!(7.5))
        );
        assert_eq!(
            applied(json!(10), json!({ "$mul": 1.5 }), false),
            Ok(json!(15.0))
        );
        assert_eq!(
            applied(json!(7), json!({ "$mul": 1.5 }), true),
            Ok(json!(11))
        );
        assert_eq!(
            applied(json!(2.5), json!({ "$mul": 2 }), false),
            Ok(json!(5.0))
        );
        assert_eq!(
            applied(json!(2), json!({ "$mul": 3, "$add": 1 }), false),
            Ok(json!(9))
        );
        assert_eq!(
            applied(
                json!({ "cut": 4, "bash": 2.5, "note": "x" }),
                json!({ "$mul": 2 }),
                false
            ),
            Ok(json!({ "cut": 8, "bash": 5.0, "note": "x" }))
        );
        assert_eq!(
            applied(json!(i64::MAX), json!({ "$add": 1 }), false),
            Ok(json!(i64::MAX as u64 + 1))
        );
        assert_eq!(
            applied(json!(u64::MAX), json!({ "$add": 1 }), false),
            Err("`$add` gives a number out of range".to_string())
        );
        assert_eq!(
            applied(json!(u64::MAX), json!({ "$add": 0, "$mul": 1 }), true),
            Ok(json!(u64::MAX))
        );
        assert_eq!(
            applied(json!(130), json!({ "$mul": 0.25, "$round": "trunc" }), true),
            Ok(json!(32))
        );
        assert_eq!(
            applied(json!(130), json!({ "$mul": 0.25 }), true),
            Ok(json!(33))
        );
        // `$round` on a field of floats makes the result whole too.
        assert_eq!(
            applied(json!(2.5), json!({ "$add": 1, "$round": "floor" }), false),
            Ok(json!(3))
        );
        assert_eq!(
            applied(json!("fast"), json!({ "$mul": 2 }), false),
            Err(
                "`$mul` needs a number (or an object of numbers) to work on, but the value it applies to is a string"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_whole_object_scaled_keeps_each_member_of_an_integer_type_whole() {
        let mut target = json!({ "hp": 7, "weight": 7, "speed": 2.5, "name": "x" });
        let integer = |path: &[PathSegment]| {
            (path == [PathSegment::Key("hp".to_string())]).then_some(Rounding::Nearest)
        };
        apply(&mut target, &json!({ "$mul": 0.5 }), &integer).unwrap();
        assert_eq!(
            target,
            json!({ "hp": 4, "weight": 3.5, "speed": 1.25, "name": "x" })
        );
        let mut target = json!({ "hp": 7, "weight": 7 });
        apply(
            &mut target,
            &json!({ "$mul": 0.5, "$round": "trunc" }),
            &integer,
        )
        .unwrap();
        assert_eq!(target, json!({ "hp": 3, "weight": 3 }));
    }

    #[test]
    fn a_waiting_rounding_is_kept_and_a_later_one_wins() {
        let waiting = json!({ "$mul": 0.5, "$round": "trunc" });
        let mut target = Value::Null;
        apply(&mut target, &waiting, &|_| None).unwrap();
        apply(&mut target, &json!({ "$mul": 3 }), &|_| None).unwrap();
        assert_eq!(target, json!({ "$mul": 1.5, "$round": "trunc" }));
        apply(
            &mut target,
            &json!({ "$mul": 1, "$round": "ceil" }),
            &|_| None,
        )
        .unwrap();
        assert_eq!(target, json!({ "$mul": 1.5, "$round": "ceil" }));
        let mut value = json!({ "a": target, "b": { "$add": 2.5, "$round": "even" } });
        assert_eq!(settle(&mut value, "Stats", &NoShapes).len(), 1);
        assert_eq!(value, json!({ "b": 2 }));
        let mut placed = json!(5);
        apply(
            &mut placed,
            &json!({ "$mul": 1.5, "$round": "ceil" }),
            &|_| None,
        )
        .unwrap();
        assert_eq!(placed, json!(8));
    }

    #[test]
    fn operators_wait_and_combine_until_they_have_a_value() {
        let waiting = applied(Value::Null, json!({ "$mul": 1.5 }), false).unwrap();
        assert_eq!(waiting, json!({ "$mul": 1.5 }));
        let twice = applied(waiting.clone(), json!({ "$mul": 2 }), false).unwrap();
        assert_eq!(twice, json!({ "$mul": 3.0 }));
        assert_eq!(
            applied(waiting, json!({ "$add": 1 }), false),
            Err("`$add` cannot follow the `$mul` it applies to, which has no value to work on yet; give a value first".to_string())
        );
        let mut value =
            json!({ "a": { "$add": 2 }, "b": { "$mul": 2 }, "c": { "$union": [1, 1] } });
        let unused = settle(&mut value, "Stats", &NoShapes);
        assert_eq!(value, json!({ "a": 2, "c": [1] }));
        assert_eq!(unused[0].message, "`$mul` has nothing to scale: nothing this archetype is built on sets `Stats.b`, and its type gives no default number there, so it is left out");
    }
}
