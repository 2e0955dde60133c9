//! CDDA's own inheritance rules for `MONSTER` objects: the reference the converted archetype
//! files are checked against (see [`cdda`](super::cdda)). Independent of the library: plain
//! functions over `serde_json` maps.
//!
//! - A monster starts from its `copy-from` parent's resolved fields, or from the game's built-in
//!   defaults ([`defaults`]); each field it sets replaces the parent's whole.
//! - Then its modifiers, in this order: `relative` adds (numbers; objects key by key, a key the
//!   parent's object lacks counting as 0), `proportional` multiplies (numbers; an object key by
//!   key, or every number in it by one factor), `extend` appends to lists the items not there
//!   yet and merges objects, `delete` removes list items (equal ones; objects whose `id` is a
//!   given string, or that hold every member of a given object; lists whose first item is a
//!   given string) and object keys. A modifier of a field the parent lacks: `relative` and
//!   `extend` start from nothing, `proportional` and `delete` leave it absent.
//! - `extend` and `delete` of a field the monster itself sets are ignored: the game reads the
//!   member whole and applies them only to an inherited one.
//! - The integer stats ([`INTEGER_FIELDS`]) are truncated toward zero at each level, as the game
//!   stores them as integers (`int *= double`: speed 130 × 0.25 is 32).
//!
//! - `relative` of a list of records keyed by [`DAMAGE_TYPE`] (`melee_damage`: `{"damage_type":
//!   "cut", "amount": 2}`, one record or a list) adds each number of a record to the record of
//!   the list with its damage type; one the list lacks is a shape the rules do not cover.
//!
//! - `special_attacks` is a list of attacks named by their `id`: `extend` replaces the attack
//!   of each name it gives (in place) or appends it, `delete` removes the attacks it names.
//!
//! Before any of it, fields are given the form the components hold ([`normalize`]): `weight`
//! and `volume` strings (`"62 kg"`, `"500 ml"`) numbers of grams and millilitres, and every
//! `special_attacks` entry a record with its name as `id` (`["GRAB", 10]` is
//! `{"id": "GRAB", "cooldown": 10}`; `{"type": "bite"}` without an `id` is named `bite`, as the
//! game names it).

use serde_json::{Map, Number, Value};

/// Keys that steer inheritance rather than describe the monster.
pub const META: [&str; 8] = [
    "id",
    "abstract",
    "type",
    "copy-from",
    "relative",
    "proportional",
    "extend",
    "delete",
];

/// The field naming a record of a `melee_damage` list.
pub const DAMAGE_TYPE: &str = "damage_type";

/// The list of records named by their `id` (see the module docs).
pub const ATTACKS: &str = "special_attacks";

/// The modifier keys, in the order the game applies them.
pub const MODIFIERS: [(&str, Modifier); 4] = [
    ("relative", Modifier::Add),
    ("proportional", Modifier::Multiply),
    ("extend", Modifier::Extend),
    ("delete", Modifier::Delete),
];

/// The fields the game keeps as integers (they go to the typed `MonsterStats`).
pub const INTEGER_FIELDS: [&str; 11] = [
    "hp",
    "speed",
    "melee_skill",
    "melee_dice",
    "melee_dice_sides",
    "dodge",
    "morale",
    "aggression",
    "vision_day",
    "vision_night",
    "attack_cost",
];

/// The game's built-in defaults (`mtype`) of the integer fields: what a modifier of a field no
/// monster in the chain sets works on.
pub fn defaults() -> Map<String, Value> {
    INTEGER_FIELDS
        .iter()
        .map(|field| {
            let value = match *field {
                "vision_day" => 40,
                "vision_night" => 1,
                "attack_cost" => 100,
                _ => 0,
            };
            (field.to_string(), Value::from(value))
        })
        .collect()
}

/// A modifier kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modifier {
    /// `relative`.
    Add,
    /// `proportional`.
    Multiply,
    /// `extend`.
    Extend,
    /// `delete`.
    Delete,
}

/// What resolving one monster did with its modifiers.
#[derive(Debug, Default)]
pub struct Tally {
    /// Modifiers applied (one per field of a modifier object).
    pub applied: usize,
    /// `extend` / `delete` of a field the monster sets itself: ignored, as by the game.
    pub ignored: Vec<String>,
    /// Modifiers of a shape the rules do not cover.
    pub dropped: Vec<String>,
}

/// Resolves one monster the CDDA way: `parent` is its parent's resolved fields (`None` for a
/// root), `raw` its object as written (normalized).
pub fn resolve(
    parent: Option<&Map<String, Value>>,
    raw: &Map<String, Value>,
    tally: &mut Tally,
) -> Map<String, Value> {
    let mut fields = parent.cloned().unwrap_or_else(defaults);
    for (key, value) in own_fields(raw) {
        fields.insert(key.clone(), value.clone());
    }
    let key = raw
        .get("id")
        .or_else(|| raw.get("abstract"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    for (name, modifier) in MODIFIERS {
        let Some(Value::Object(changes)) = raw.get(name) else {
            continue;
        };
        for (field, change) in changes {
            let set_here = raw.contains_key(field) && !META.contains(&field.as_str());
            if set_here && matches!(modifier, Modifier::Extend | Modifier::Delete) {
                tally.ignored.push(format!("{key}: {name}.{field}"));
                continue;
            }
            let applied = match field.as_str() {
                ATTACKS => modifier.apply_by_id(fields.get(field), change),
                _ => modifier.apply(fields.get(field), change),
            };
            match applied {
                Ok(Some(value)) => {
                    fields.insert(field.clone(), value);
                }
                Ok(None) => {}
                Err(()) => {
                    tally.dropped.push(format!("{key}: {name}.{field}"));
                    continue;
                }
            }
            tally.applied += 1;
        }
    }
    for field in INTEGER_FIELDS {
        if let Some(truncated) = fields.get(field).and_then(Value::as_f64) {
            fields.insert(field.to_string(), Value::from(truncated.trunc() as i64));
        }
    }
    fields
}

/// The fields a monster sets itself (not inheritance keys, not `//` comments).
pub fn own_fields(raw: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    raw.iter()
        .filter(|(key, _)| !META.contains(&key.as_str()) && !key.starts_with("//"))
}

impl Modifier {
    /// The field's value (`None`: absent) changed by `change`: `Ok(None)` leaves it as it is,
    /// `Err` is a shape the rules do not cover.
    fn apply(self, current: Option<&Value>, change: &Value) -> Result<Option<Value>, ()> {
        match (self, current) {
            (Modifier::Add, None) => add(&Value::Null, change).map(Some),
            (Modifier::Add, Some(current)) => add(current, change).map(Some),
            (Modifier::Multiply, None) | (Modifier::Delete, None) => Ok(None),
            (Modifier::Multiply, Some(current)) => multiply(current, change).map(Some),
            (Modifier::Extend, current) => extend(current, change).map(Some),
            (Modifier::Delete, Some(current)) => Ok(Some(delete(current, change))),
        }
    }
}

impl Modifier {
    /// [`apply`](Self::apply) to a list of records named by their `id`: `extend` replaces the
    /// record of each name given or appends it; `delete` as on any list.
    fn apply_by_id(self, current: Option<&Value>, change: &Value) -> Result<Option<Value>, ()> {
        let (Modifier::Extend, Some(Value::Array(items)), Value::Array(records)) =
            (self, current, change)
        else {
            return self.apply(current, change);
        };
        let mut out = items.clone();
        for record in records {
            let name = record.get("id").ok_or(())?;
            match out.iter_mut().find(|item| item.get("id") == Some(name)) {
                Some(item) => *item = record.clone(),
                None => out.push(record.clone()),
            }
        }
        Ok(Some(Value::Array(out)))
    }
}

/// `a + b` or `a * b`: exact while both are integers, else floating point.
fn arithmetic(a: &Number, b: &Number, multiply: bool) -> Result<Value, ()> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        let exact = if multiply {
            x.checked_mul(y)
        } else {
            x.checked_add(y)
        };
        return exact.map(Value::from).ok_or(());
    }
    let (x, y) = (a.as_f64().ok_or(())?, b.as_f64().ok_or(())?);
    let result = if multiply { x * y } else { x + y };
    Number::from_f64(result).map(Value::Number).ok_or(())
}

/// Numbers add; objects add key by key (what the current lacks counts as 0, or `{}`).
fn add(current: &Value, change: &Value) -> Result<Value, ()> {
    match (current, change) {
        (Value::Null, Value::Number(_)) => Ok(change.clone()),
        (Value::Number(a), Value::Number(b)) => arithmetic(a, b, false),
        (Value::Null, Value::Object(_)) => add(&Value::Object(Map::new()), change),
        (Value::Array(items), _) => add_by_damage_type(items, change),
        (Value::Object(fields), Value::Object(changes)) => {
            let mut out = fields.clone();
            for (key, change) in changes {
                let sum = add(fields.get(key).unwrap_or(&Value::Null), change)?;
                out.insert(key.clone(), sum);
            }
            Ok(Value::Object(out))
        }
        _ => Err(()),
    }
}

/// Each record of `change` (one, or a list) added field by field to the record of `items` with
/// its damage type.
fn add_by_damage_type(items: &[Value], change: &Value) -> Result<Value, ()> {
    let records = match change {
        Value::Array(records) => records.iter().collect(),
        record => vec![record],
    };
    let mut out = items.to_vec();
    for record in records {
        let kind = record.get(DAMAGE_TYPE).ok_or(())?;
        let target = (out.iter_mut())
            .find(|item| item.get(DAMAGE_TYPE) == Some(kind))
            .ok_or(())?;
        let mut numbers = record.as_object().cloned().ok_or(())?;
        numbers.remove(DAMAGE_TYPE);
        *target = add(target, &Value::Object(numbers))?;
    }
    Ok(Value::Array(out))
}

/// Numbers multiply; an object times a number scales every number in it; objects multiply key
/// by key (a key the current lacks stays absent).
fn multiply(current: &Value, change: &Value) -> Result<Value, ()> {
    match (current, change) {
        (Value::Number(a), Value::Number(b)) => arithmetic(a, b, true),
        (Value::Object(fields), Value::Number(b)) => {
            let mut out = fields.clone();
            for value in out.values_mut() {
                if let Value::Number(a) = value {
                    *value = arithmetic(a, b, true)?;
                }
            }
            Ok(Value::Object(out))
        }
        (Value::Object(fields), Value::Object(changes)) => {
            let mut out = fields.clone();
            for (key, change) in changes {
                if let Some(current) = fields.get(key) {
                    out.insert(key.clone(), multiply(current, change)?);
                }
            }
            Ok(Value::Object(out))
        }
        _ => Err(()),
    }
}

/// Lists get the items they lack appended; objects merge.
fn extend(current: Option<&Value>, change: &Value) -> Result<Value, ()> {
    match (current, change) {
        (None, Value::Array(_) | Value::Object(_)) => Ok(change.clone()),
        (Some(Value::Array(items)), Value::Array(more)) => {
            let mut out = items.clone();
            for item in more {
                if !out.contains(item) {
                    out.push(item.clone());
                }
            }
            Ok(Value::Array(out))
        }
        (Some(Value::Object(fields)), Value::Object(more)) => {
            let mut out = fields.clone();
            out.extend(more.iter().map(|(k, v)| (k.clone(), v.clone())));
            Ok(Value::Object(out))
        }
        _ => Err(()),
    }
}

/// Whether the `delete` item `gone` removes the list item `item`.
fn deletes(item: &Value, gone: &Value) -> bool {
    match (item, gone) {
        _ if item == gone => true,
        (Value::Object(fields), Value::String(_)) => fields.get("id") == Some(gone),
        (Value::Array(items), Value::String(_)) => items.first() == Some(gone),
        (Value::Object(fields), Value::Object(wanted)) => wanted
            .iter()
            .all(|(key, value)| fields.get(key) == Some(value)),
        _ => false,
    }
}

/// Removes list items (see [`deletes`]) or object keys.
fn delete(current: &Value, change: &Value) -> Value {
    let gone: Vec<&Value> = match change {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    match (current, change) {
        (Value::Array(items), _) => Value::Array(
            items
                .iter()
                .filter(|item| !gone.iter().any(|g| deletes(item, g)))
                .cloned()
                .collect(),
        ),
        (Value::Object(fields), Value::Object(keys)) => Value::Object(
            fields
                .iter()
                .filter(|(key, _)| !keys.contains_key(*key))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        _ => current.clone(),
    }
}

/// A monster object with its fields (and its modifiers' fields) in the components' form:
/// `weight` and `volume` as numbers (see the module docs).
pub fn normalize(raw: &Map<String, Value>) -> Map<String, Value> {
    let mut out = normalize_fields(raw);
    for (name, _) in MODIFIERS {
        if let Some(Value::Object(changes)) = raw.get(name) {
            out.insert(name.to_string(), Value::Object(normalize_fields(changes)));
        }
    }
    out
}

fn normalize_fields(fields: &Map<String, Value>) -> Map<String, Value> {
    fields
        .iter()
        .map(|(key, value)| {
            let value = match key.as_str() {
                ATTACKS => named_attacks(value),
                "weight" => quantity(value, &[("mg", 0.001), ("g", 1.0), ("kg", 1000.0)]),
                "volume" => quantity(value, &[("ml", 1.0), ("L", 1000.0)]),
                _ => value.clone(),
            };
            (key.clone(), value)
        })
        .collect()
}

/// Every entry of a `special_attacks` list as a record named by its `id`: `["GRAB", 10]` as
/// `{"id": "GRAB", "cooldown": 10}`, `{"type": "bite"}` as `{"id": "bite", "type": "bite"}`.
/// Names (`delete`'s strings) stay as they are.
fn named_attacks(value: &Value) -> Value {
    let Value::Array(entries) = value else {
        return value.clone();
    };
    let named = entries.iter().map(|entry| match entry {
        Value::Array(pair) if pair.len() == 2 => {
            let mut record = Map::new();
            record.insert("id".into(), pair[0].clone());
            record.insert("cooldown".into(), pair[1].clone());
            Value::Object(record)
        }
        Value::Object(fields) if !fields.contains_key("id") => {
            let mut record = fields.clone();
            if let Some(kind) = fields.get("type") {
                record.insert("id".into(), kind.clone());
            }
            Value::Object(record)
        }
        other => other.clone(),
    });
    Value::Array(named.collect())
}

/// `"62 kg"` as a number of the base unit (`62000` grams), given the units and their factors.
fn quantity(value: &Value, units: &[(&str, f64)]) -> Value {
    let Value::String(text) = value else {
        return value.clone();
    };
    let parsed = text.split_once(' ').and_then(|(amount, unit)| {
        let factor = units.iter().find(|(name, _)| *name == unit)?.1;
        Some(amount.parse::<f64>().ok()? * factor)
    });
    match parsed {
        Some(amount) if amount.fract() == 0.0 && amount.abs() < 1e15 => Value::from(amount as i64),
        Some(amount) => Number::from_f64(amount).map_or(value.clone(), Value::Number),
        None => value.clone(),
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn modifiers_apply_against_the_resolved_parent() {
        let mut tally = Tally::default();
        let base = resolve(
            None,
            &normalize(&object(json!({
                "id": "base", "hp": 100, "speed": 90, "weight": "80 kg",
                "armor": { "bash": 4, "cut": 2 },
                "melee_damage": [ { "damage_type": "cut", "amount": 4 } ],
                "flags": [ "SEES", "HEARS" ],
                "special_attacks": [ [ "GRAB", 10 ], { "id": "bite" }, { "type": "leap" } ]
            }))),
            &mut tally,
        );
        let child = resolve(
            Some(&base),
            &normalize(&object(json!({
                "id": "child", "copy-from": "base", "//": "a comment",
                "relative": { "hp": 10, "armor": { "bash": 1, "acid": 3 },
                              "melee_damage": { "damage_type": "cut", "amount": 2 } },
                "proportional": { "speed": 1.5, "weight": 0.5, "attack_cost": 1.2 },
                "extend": { "flags": [ "SEES", "FLIES" ],
                            "special_attacks": [ [ "GRAB", 20 ], { "type": "spit" } ] },
                "delete": { "flags": [ "HEARS" ], "special_attacks": [ "leap", "bite" ] }
            }))),
            &mut tally,
        );
        assert_eq!(child["hp"], json!(110));
        assert_eq!(child["speed"], json!(135));
        assert_eq!(child["attack_cost"], json!(120));
        assert_eq!(child["vision_day"], json!(40));
        assert_eq!(child["weight"], json!(40000.0));
        assert_eq!(child["armor"], json!({ "bash": 5, "cut": 2, "acid": 3 }));
        assert_eq!(
            child["melee_damage"],
            json!([{ "damage_type": "cut", "amount": 6 }])
        );
        assert_eq!(child["flags"], json!(["SEES", "FLIES"]));
        // `GRAB` replaced in place, `spit` appended; `leap` and `bite` deleted by name.
        assert_eq!(
            child["special_attacks"],
            json!([{ "id": "GRAB", "cooldown": 20 }, { "id": "spit", "type": "spit" }])
        );
        assert_eq!(
            (tally.applied, tally.ignored.len(), tally.dropped.len()),
            (10, 0, 0)
        );
    }

    #[test]
    fn extend_and_delete_of_a_field_set_here_are_ignored() {
        let mut tally = Tally::default();
        let child = resolve(
            Some(&object(json!({ "flags": ["A"] }))),
            &object(json!({ "id": "c", "flags": ["B"], "extend": { "flags": ["C"] } })),
            &mut tally,
        );
        assert_eq!(child["flags"], json!(["B"]));
        assert_eq!(tally.ignored, ["c: extend.flags"]);
    }
}
