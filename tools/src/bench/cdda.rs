//! Real data: the monster definitions of Cataclysm: Dark Days Ahead (about 1,200 `MONSTER`
//! objects with `copy-from` inheritance up to depth 5), converted in memory into archetype files
//! and loaded by the library.
//!
//! The data is read at run time from `../shared/data/cdda-monsters/` next to the repository
//! (or from `$ARCHETOOL_CDDA_DIR`) and never copied into the project; without it the figures
//! say they were skipped.
//!
//! # The conversion
//! Each `MONSTER` becomes `<source file stem>/<id>.json`; `copy-from` becomes `extends`, an
//! `abstract` id an abstract archetype. Fields go to four components: [`MonsterInfo`] (name,
//! description, symbol, colour), [`MonsterStats`] (ten integer stats), [`MonsterFlags`] and
//! [`MonsterData`], which holds every other field as JSON.
//!
//! CDDA's inheritance differs from ours: a field a child sets replaces the parent's whole
//! (ours merges objects), and `relative`, `proportional`, `extend` and `delete` modify the
//! parent's values. The converter first resolves every monster the CDDA way, applying those
//! modifiers against the resolved parent, then writes each file as the JSON merge patch from
//! its parent's components to its own — `null` where a replaced object lost a key — so loading
//! the files through `extends` gives exactly the CDDA-resolved values, which
//! [`CddaFixture::convert`] checks for every concrete monster. Approximations:
//! - `relative` adds numbers (also inside objects such as `armor`, and to the `melee_damage`
//!   entry of the same `damage_type`); `proportional` multiplies them, and the number in a
//!   `"62 kg"` string; integer stats are rounded to the nearest integer.
//! - `extend` appends to arrays (skipping strings already there) and merges objects; `delete`
//!   removes array elements equal to, or with the `id` (or first element) of, a given value,
//!   and object keys.
//! - A key missing from an object the parent has, or from one it lacks, counts as 0 (`relative`
//!   armor against a type the parent does not list). A modifier of a field the parent lacks altogether (CDDA would
//!   use the game's built-in default, which the data does not say) or of a shape that does
//!   not fit is dropped and counted: [`CddaFixture::dropped`].
//! - `//` comment keys are dropped; `name` and `description` objects become their `str` (or
//!   `str_sp`) text.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use archetype_engine::{merge_patch, ArchetypeLibrary, ComponentRegistry};
use hecs::World;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use tempfile::TempDir;

use crate::bench::load::read_and_parse_dir;
use crate::bench::spawn::write;

/// Where the data is looked for, relative to the repository root.
pub const CDDA_RELATIVE_DIR: &str = "../shared/data/cdda-monsters";

/// A monster's name, description and look.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MonsterInfo {
    /// Display name.
    pub name: String,
    /// Flavour text.
    pub description: String,
    /// Map symbol.
    pub symbol: String,
    /// Map colour, e.g. `light_green`.
    pub color: String,
}

/// A monster's numeric stats.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MonsterStats {
    /// Hit points.
    pub hp: i32,
    /// Speed (100 is a human's).
    pub speed: i32,
    /// Melee skill.
    pub melee_skill: i32,
    /// Melee damage dice.
    pub melee_dice: i32,
    /// Sides of each melee damage die.
    pub melee_dice_sides: i32,
    /// Dodge skill.
    pub dodge: i32,
    /// Morale.
    pub morale: i32,
    /// Aggression.
    pub aggression: i32,
    /// Sight range by day.
    pub vision_day: i32,
    /// Sight range by night.
    pub vision_night: i32,
}

/// The fields of [`MonsterStats`], as CDDA names them.
const STATS: [&str; 10] = [
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
];

/// A monster's flags (`SEES`, `HEARS`, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MonsterFlags(pub Vec<String>);

/// Every other field of a monster, as JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MonsterData(pub Map<String, Value>);

/// A registry with the built-ins and the four monster components.
pub fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    let results = [
        registry.register::<MonsterInfo>(),
        registry.register::<MonsterStats>(),
        registry.register::<MonsterFlags>(),
        registry.register::<MonsterData>(),
    ];
    if let Some(Err(error)) = results.into_iter().find(Result::is_err) {
        unreachable!("monster components clash: {error}");
    }
    registry
}

/// The data directory: `$ARCHETOOL_CDDA_DIR` if set, else [`CDDA_RELATIVE_DIR`] next to this
/// repository.
///
/// # Errors
/// When the directory does not exist, a message naming where it was looked for.
pub fn data_dir() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("ARCHETOOL_CDDA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let tools = Path::new(env!("CARGO_MANIFEST_DIR"));
            tools.parent().unwrap_or(tools).join(CDDA_RELATIVE_DIR)
        }
    };
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "no CDDA data at {}; set ARCHETOOL_CDDA_DIR to its directory",
            dir.display()
        ))
    }
}

/// One `MONSTER` object as read.
struct Monster {
    /// `id`, or the `abstract` name.
    key: String,
    /// The archetype name: `<file stem>/<key>`.
    name: String,
    is_abstract: bool,
    parent: Option<String>,
    raw: Map<String, Value>,
}

/// The monsters converted into archetype files in a temporary directory, loaded once and
/// checked against the CDDA resolution.
pub struct CddaFixture {
    dir: TempDir,
    registry: Arc<ComponentRegistry>,
    archetypes: usize,
    concrete: usize,
    dropped: Vec<String>,
    errors: Vec<String>,
    mismatches: Vec<String>,
}

impl CddaFixture {
    /// Reads every `MONSTER` from the `*.json` files in `data` (only the first `limit` ones and
    /// the ones they inherit from, if given), converts them, writes the archetype files, loads
    /// them, and checks every concrete monster spawned from the library against the CDDA
    /// resolution.
    ///
    /// # Errors
    /// If the data cannot be read or parsed, or a `copy-from` names no monster.
    ///
    /// # Panics
    /// If the temporary files cannot be written.
    pub fn convert(data: &Path, limit: Option<usize>) -> Result<Self, String> {
        let mut monsters = read_monsters(data)?;
        if let Some(limit) = limit {
            monsters = with_ancestors(monsters, limit);
        }
        let mut converter = Converter::default();
        let index: HashMap<&str, usize> = monsters
            .iter()
            .enumerate()
            .map(|(i, m)| (m.key.as_str(), i))
            .collect();
        let mut resolved: Vec<Option<Map<String, Value>>> = vec![None; monsters.len()];
        for i in 0..monsters.len() {
            converter.resolve(i, &monsters, &index, &mut resolved, 0)?;
        }
        let split: Vec<BTreeMap<&'static str, Value>> = resolved
            .iter()
            .map(|r| components(r.as_ref().unwrap_or(&Map::new())))
            .collect();

        let dir =
            tempfile::tempdir().map_err(|error| format!("no temporary directory: {error}"))?;
        for (i, monster) in monsters.iter().enumerate() {
            let parent = monster
                .parent
                .as_deref()
                .and_then(|p| index.get(p).copied());
            let text = archetype_file(
                &split[i],
                parent.map(|p| (&split[p], monsters[p].name.as_str())),
                monster.is_abstract,
            );
            write(dir.path(), &format!("{}.json", monster.name), &text);
        }

        let mut fixture = CddaFixture {
            dir,
            registry: Arc::new(registry()),
            archetypes: monsters.len(),
            concrete: monsters.iter().filter(|m| !m.is_abstract).count(),
            dropped: converter.dropped,
            errors: Vec::new(),
            mismatches: Vec::new(),
        };
        let (library, errors) = fixture.load();
        fixture.errors = errors;
        let mut world = World::new();
        for (i, monster) in monsters.iter().enumerate() {
            if monster.is_abstract {
                continue;
            }
            if let Some(problem) = check(&library, &mut world, &monster.name, &split[i]) {
                fixture
                    .mismatches
                    .push(format!("{}: {problem}", monster.name));
            }
        }
        Ok(fixture)
    }

    /// Where the archetype files are.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Archetype files written (one per monster, abstract ones included).
    pub fn archetypes(&self) -> usize {
        self.archetypes
    }

    /// Concrete (spawnable) monsters.
    pub fn concrete(&self) -> usize {
        self.concrete
    }

    /// CDDA modifiers the converter could not apply (see the [module docs](self)).
    pub fn dropped(&self) -> &[String] {
        &self.dropped
    }

    /// The library's errors on loading the files (`file:line:col: message`).
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Concrete monsters whose spawned components differ from the CDDA resolution.
    pub fn mismatches(&self) -> &[String] {
        &self.mismatches
    }

    /// Ours: `ArchetypeLibrary::load` of the converted files, with its errors (a library with
    /// errors still serves every valid archetype).
    pub fn load(&self) -> (ArchetypeLibrary, Vec<String>) {
        match ArchetypeLibrary::load(self.dir.path(), self.registry.clone()) {
            Ok(library) => (library, Vec::new()),
            Err(error) => {
                let errors = error
                    .diagnostics()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                (error.into_partial(), errors)
            }
        }
    }

    /// Baseline: read every converted file and parse it into a `serde_json::Value`.
    pub fn read_and_parse(&self) -> Vec<Value> {
        read_and_parse_dir(self.dir.path())
    }
}

/// Every `MONSTER` object of the `*.json` files directly in `data`, in file-name order.
fn read_monsters(data: &Path) -> Result<Vec<Monster>, String> {
    let entries =
        fs::read_dir(data).map_err(|error| format!("cannot read {}: {error}", data.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut monsters = Vec::new();
    for file in files {
        let text =
            fs::read(&file).map_err(|error| format!("cannot read {}: {error}", file.display()))?;
        let objects: Vec<Value> = serde_json::from_slice(&text)
            .map_err(|error| format!("cannot parse {}: {error}", file.display()))?;
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for object in objects {
            let Value::Object(raw) = object else { continue };
            if raw.get("type").and_then(Value::as_str) != Some("MONSTER") {
                continue;
            }
            let (key, is_abstract) = match (raw.get("id"), raw.get("abstract")) {
                (Some(Value::String(id)), _) => (id.clone(), false),
                (_, Some(Value::String(name))) => (name.clone(), true),
                _ => return Err(format!("{}: a MONSTER without id", file.display())),
            };
            monsters.push(Monster {
                name: format!("{stem}/{key}"),
                key,
                is_abstract,
                parent: raw
                    .get("copy-from")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                raw,
            });
        }
    }
    Ok(monsters)
}

/// The first `limit` monsters and every monster they inherit from, in the original order.
fn with_ancestors(monsters: Vec<Monster>, limit: usize) -> Vec<Monster> {
    let index: HashMap<&str, usize> = monsters
        .iter()
        .enumerate()
        .map(|(i, m)| (m.key.as_str(), i))
        .collect();
    let mut keep = vec![false; monsters.len()];
    for start in 0..limit.min(monsters.len()) {
        let mut at = Some(start);
        while let Some(i) = at.filter(|&i| !keep[i]) {
            keep[i] = true;
            at = monsters[i]
                .parent
                .as_deref()
                .and_then(|p| index.get(p).copied());
        }
    }
    monsters
        .into_iter()
        .zip(keep)
        .filter_map(|(m, keep)| keep.then_some(m))
        .collect()
}

/// Keys that steer inheritance rather than describe the monster.
const META: [&str; 8] = [
    "id",
    "abstract",
    "type",
    "copy-from",
    "relative",
    "proportional",
    "extend",
    "delete",
];

/// Resolves monsters the CDDA way and records what it could not apply.
#[derive(Default)]
struct Converter {
    dropped: Vec<String>,
}

impl Converter {
    fn resolve(
        &mut self,
        i: usize,
        monsters: &[Monster],
        index: &HashMap<&str, usize>,
        resolved: &mut Vec<Option<Map<String, Value>>>,
        depth: usize,
    ) -> Result<(), String> {
        if resolved[i].is_some() {
            return Ok(());
        }
        let monster = &monsters[i];
        if depth > 32 {
            return Err(format!("{}: copy-from cycle", monster.key));
        }
        let mut fields = match &monster.parent {
            Some(parent) => {
                let &p = index.get(parent.as_str()).ok_or_else(|| {
                    format!("{}: copy-from `{parent}` names no monster", monster.key)
                })?;
                self.resolve(p, monsters, index, resolved, depth + 1)?;
                resolved[p].clone().unwrap_or_default()
            }
            None => Map::new(),
        };
        for (key, value) in &monster.raw {
            if !META.contains(&key.as_str()) && !key.starts_with("//") {
                fields.insert(key.clone(), value.clone());
            }
        }
        for (modifier, apply) in [
            ("relative", Modifier::Add),
            ("proportional", Modifier::Multiply),
            ("extend", Modifier::Extend),
            ("delete", Modifier::Delete),
        ] {
            let Some(Value::Object(changes)) = monster.raw.get(modifier) else {
                continue;
            };
            for (key, change) in changes {
                let current = fields.get(key);
                match apply.apply(current, change) {
                    Some(value) => {
                        fields.insert(key.clone(), value);
                    }
                    None => self
                        .dropped
                        .push(format!("{}: {modifier}.{key}", monster.key)),
                }
            }
        }
        resolved[i] = Some(fields);
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Modifier {
    Add,
    Multiply,
    Extend,
    Delete,
}

impl Modifier {
    /// The parent's `current` value with `change` applied, or `None` if it does not apply.
    fn apply(self, current: Option<&Value>, change: &Value) -> Option<Value> {
        match self {
            // An object of numbers the parent lacks (armor) is all zeros.
            Modifier::Add if current.is_none() && change.is_object() => {
                add(&Value::Object(Map::new()), change)
            }
            Modifier::Add => add(current?, change),
            Modifier::Multiply => multiply(current?, change),
            Modifier::Extend => extend(current, change),
            Modifier::Delete => Some(delete(current?, change)),
        }
    }
}

/// `value` as JSON: rounded to an integer if `like_integer`.
fn number(value: f64, like_integer: bool) -> Value {
    if like_integer {
        Value::from(value.round() as i64)
    } else {
        Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// Numbers add; objects add per key; a `melee_damage`-style list of `{damage_type, ..}` adds
/// to the entry of the same damage type.
fn add(current: &Value, change: &Value) -> Option<Value> {
    combine(current, change, &|a, b| a + b, false)
}

/// Numbers multiply (integers stay integers, rounded); `"62 kg"` scales its number; an object
/// times a number scales every number in it.
fn multiply(current: &Value, change: &Value) -> Option<Value> {
    if let (Value::String(text), Some(factor)) = (current, change.as_f64()) {
        let (amount, unit) = text.split_once(' ')?;
        let amount: f64 = amount.parse().ok()?;
        let scaled = (amount * factor * 1000.0).round() / 1000.0;
        return Some(Value::String(format!("{scaled} {unit}")));
    }
    combine(current, change, &|a, b| a * b, true)
}

fn combine(
    current: &Value,
    change: &Value,
    op: &dyn Fn(f64, f64) -> f64,
    scale_all: bool,
) -> Option<Value> {
    match (current, change) {
        (Value::Number(a), Value::Number(b)) => {
            let integer = a.is_i64() || a.is_u64();
            Some(number(op(a.as_f64()?, b.as_f64()?), integer))
        }
        (Value::Object(fields), Value::Number(_)) if scale_all => {
            let mut out = fields.clone();
            for value in out.values_mut() {
                if value.is_number() {
                    *value = combine(value, change, op, scale_all)?;
                }
            }
            Some(Value::Object(out))
        }
        (Value::Object(fields), Value::Object(changes)) => {
            let mut out = fields.clone();
            for (key, change) in changes {
                // A key the parent's object lacks (an armor type) is 0: adding to it works,
                // scaling it stays 0.
                let zero = Value::from(0);
                let combined = match fields.get(key) {
                    Some(current) => combine(current, change, op, scale_all)?,
                    None if scale_all => continue,
                    None => combine(&zero, change, op, scale_all)?,
                };
                out.insert(key.clone(), combined);
            }
            Some(Value::Object(out))
        }
        (Value::Array(_), Value::Object(_)) => {
            combine(current, &Value::Array(vec![change.clone()]), op, scale_all)
        }
        (Value::Array(entries), Value::Array(changes)) => {
            let mut out = entries.clone();
            for change in changes {
                let kind = change.get("damage_type")?;
                let entry = out
                    .iter_mut()
                    .find(|entry| entry.get("damage_type") == Some(kind))?;
                let mut fields = change.as_object()?.clone();
                fields.remove("damage_type");
                *entry = combine(entry, &Value::Object(fields), op, scale_all)?;
            }
            Some(Value::Array(out))
        }
        _ => None,
    }
}

/// Arrays append (strings already there are skipped); objects merge.
fn extend(current: Option<&Value>, change: &Value) -> Option<Value> {
    match (current, change) {
        (None, Value::Array(_) | Value::Object(_)) => Some(change.clone()),
        (Some(Value::Array(items)), Value::Array(more)) => {
            let mut out = items.clone();
            for item in more {
                if !(item.is_string() && out.contains(item)) {
                    out.push(item.clone());
                }
            }
            Some(Value::Array(out))
        }
        (Some(Value::Object(fields)), Value::Object(more)) => {
            let mut out = fields.clone();
            out.extend(more.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(Value::Object(out))
        }
        _ => None,
    }
}

/// Removes array elements equal to (or identified by) an item of `change`, or object keys.
fn delete(current: &Value, change: &Value) -> Value {
    fn id(value: &Value) -> Option<&Value> {
        match value {
            Value::Object(fields) => fields.get("id"),
            Value::Array(items) => items.first(),
            _ => None,
        }
    }
    let gone: Vec<&Value> = match change {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    match (current, change) {
        (Value::Array(items), _) => Value::Array(
            items
                .iter()
                .filter(|item| !gone.iter().any(|g| *item == *g || id(item) == Some(*g)))
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

/// A CDDA text: a string, or an object with `str` / `str_sp`.
fn text(value: &Value) -> Value {
    match value {
        Value::Object(fields) => fields
            .get("str")
            .or_else(|| fields.get("str_sp"))
            .cloned()
            .unwrap_or_default(),
        other => other.clone(),
    }
}

/// A resolved monster's fields, split into the four components (as JSON values; empty ones
/// left out).
fn components(fields: &Map<String, Value>) -> BTreeMap<&'static str, Value> {
    let mut info = Map::new();
    let mut stats = Map::new();
    let mut data = Map::new();
    let mut out = BTreeMap::new();
    for (key, value) in fields {
        match key.as_str() {
            "name" | "description" => {
                info.insert(key.clone(), text(value));
            }
            "symbol" | "color" => {
                info.insert(key.clone(), value.clone());
            }
            "flags" => {
                out.insert("MonsterFlags", value.clone());
            }
            stat if STATS.contains(&stat) => {
                let rounded = value.as_f64().map_or(Value::Null, |v| number(v, true));
                stats.insert(key.clone(), rounded);
            }
            _ => {
                data.insert(key.clone(), value.clone());
            }
        }
    }
    for (name, fields) in [
        ("MonsterInfo", info),
        ("MonsterStats", stats),
        ("MonsterData", data),
    ] {
        if !fields.is_empty() {
            out.insert(name, Value::Object(fields));
        }
    }
    out
}

/// An archetype file: each component as the merge patch from the parent's value (whole if the
/// parent lacks it).
fn archetype_file(
    own: &BTreeMap<&'static str, Value>,
    parent: Option<(&BTreeMap<&'static str, Value>, &str)>,
    is_abstract: bool,
) -> String {
    let mut components = Map::new();
    for (name, value) in own {
        let patch = match parent.and_then(|(parent, _)| parent.get(name)) {
            Some(inherited) => merge_patch::diff(inherited, value),
            None => Some(value.clone()),
        };
        if let Some(patch) = patch {
            components.insert((*name).to_string(), patch);
        }
    }
    if let Some((parent, _)) = parent {
        for name in parent.keys().filter(|name| !own.contains_key(*name)) {
            components.insert((*name).to_string(), Value::Null);
        }
    }
    let mut file = Map::new();
    file.insert("format".into(), Value::from(1));
    if is_abstract {
        file.insert("abstract".into(), Value::Bool(true));
    }
    if let Some((_, name)) = parent {
        file.insert("extends".into(), Value::String(name.to_string()));
    }
    file.insert("components".into(), Value::Object(components));
    let mut text = serde_json::to_string_pretty(&Value::Object(file)).unwrap_or_default();
    text.push('\n');
    text
}

/// Spawns `name` and compares its components with `expected`; `None` if they match.
fn check(
    library: &ArchetypeLibrary,
    world: &mut World,
    name: &str,
    expected: &BTreeMap<&'static str, Value>,
) -> Option<String> {
    let entity = match library.spawn(world, name) {
        Ok(entity) => entity,
        Err(error) => return Some(format!("does not spawn: {error}")),
    };
    fn same<T>(world: &World, entity: hecs::Entity, expected: Option<&Value>) -> Result<(), String>
    where
        T: hecs::Component + PartialEq + for<'de> Deserialize<'de> + std::fmt::Debug,
    {
        let live = world.get::<&T>(entity).ok();
        let wanted: Option<T> = expected
            .map(|value| serde_json::from_value(value.clone()))
            .transpose()
            .map_err(|error| format!("expected value does not parse: {error}"))?;
        match (live.as_deref(), wanted.as_ref()) {
            (Some(live), Some(wanted)) if live == wanted => Ok(()),
            (None, None) => Ok(()),
            (live, wanted) => Err(format!(
                "{}: spawned {live:?}, CDDA resolves {wanted:?}",
                std::any::type_name::<T>()
                    .rsplit("::")
                    .next()
                    .unwrap_or("?")
            )),
        }
    }
    let result = same::<MonsterInfo>(world, entity, expected.get("MonsterInfo"))
        .and_then(|()| same::<MonsterStats>(world, entity, expected.get("MonsterStats")))
        .and_then(|()| same::<MonsterFlags>(world, entity, expected.get("MonsterFlags")))
        .and_then(|()| same::<MonsterData>(world, entity, expected.get("MonsterData")));
    let _ = world.despawn(entity);
    result.err()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn resolved(monsters: Value) -> Vec<Map<String, Value>> {
        let monsters: Vec<Monster> = monsters
            .as_array()
            .unwrap()
            .iter()
            .map(|raw| {
                let raw = raw.as_object().unwrap().clone();
                let key = raw["id"].as_str().unwrap().to_string();
                Monster {
                    name: format!("m/{key}"),
                    key,
                    is_abstract: false,
                    parent: raw
                        .get("copy-from")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    raw,
                }
            })
            .collect();
        let index: HashMap<&str, usize> = monsters
            .iter()
            .enumerate()
            .map(|(i, m)| (m.key.as_str(), i))
            .collect();
        let mut out = vec![None; monsters.len()];
        let mut converter = Converter::default();
        for i in 0..monsters.len() {
            converter
                .resolve(i, &monsters, &index, &mut out, 0)
                .unwrap();
        }
        out.into_iter().map(Option::unwrap).collect()
    }

    #[test]
    fn modifiers_apply_against_the_resolved_parent() {
        let monsters = resolved(json!([
            {
                "id": "base", "hp": 100, "speed": 90, "weight": "80 kg",
                "armor": { "bash": 4, "cut": 2 },
                "melee_damage": [ { "damage_type": "cut", "amount": 4 } ],
                "flags": [ "SEES", "HEARS" ],
                "special_attacks": [ [ "GRAB", 10 ], { "id": "bite" } ]
            },
            {
                "id": "child", "copy-from": "base", "//": "a comment",
                "relative": { "hp": 10, "armor": { "bash": 1, "acid": 3 },
                              "melee_damage": { "damage_type": "cut", "amount": 2 } },
                "proportional": { "speed": 1.5, "weight": 0.5 },
                "extend": { "flags": [ "SEES", "FLIES" ] },
                "delete": { "flags": [ "HEARS" ], "special_attacks": [ "GRAB", "bite" ] }
            }
        ]));
        assert_eq!(
            Value::Object(monsters[1].clone()),
            json!({
                "hp": 110, "speed": 135, "weight": "40 kg",
                "armor": { "bash": 5, "cut": 2, "acid": 3 },
                "melee_damage": [ { "damage_type": "cut", "amount": 6 } ],
                "flags": [ "SEES", "FLIES" ],
                "special_attacks": []
            })
        );
    }

    #[test]
    fn a_replaced_object_is_written_as_the_merge_patch_from_the_parent() {
        let parent = components(
            &json!({ "hp": 100, "armor": { "bash": 4, "cut": 2 } })
                .as_object()
                .unwrap()
                .clone(),
        );
        let child = components(
            &json!({ "hp": 100, "armor": { "bash": 1 } })
                .as_object()
                .unwrap()
                .clone(),
        );
        let text = archetype_file(&child, Some((&parent, "m/base")), false);
        let file: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            file,
            json!({
                "format": 1,
                "extends": "m/base",
                "components": { "MonsterData": { "armor": { "bash": 1, "cut": null } } }
            })
        );
    }
}
