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
//! `abstract` id an abstract archetype; a monster without `copy-from` extends
//! [`DEFAULTS_ARCHETYPE`], which holds the game's built-in defaults of the integer stats. Fields
//! go to four components: [`MonsterInfo`] (name, description, symbol, colour), [`MonsterStats`]
//! (eleven integer stats), [`MonsterFlags`] and [`MonsterData`], which holds every other field
//! as JSON (`weight` and `volume` as numbers: see [`cdda_rules::normalize`]).
//!
//! Every monster is resolved the CDDA way first ([`cdda_rules`]), as the reference. Each file
//! then says what the monster itself says, in the archetype language:
//! - a field it sets replaces the parent's whole in CDDA, so it is written as it is, an object
//!   under `$replace` (never worked out from the parent's value: `pre_resolved` counts any);
//! - every modifier becomes an operator on the inherited value, never a value worked out from
//!   the parent: `relative` → `$add` (key by key in objects; on `melee_damage`, a list of
//!   records, `$update` of the record with its `$key` `damage_type`), `proportional` → `$mul` (key by
//!   key, or on a whole object; the integer stats truncate, as in the game, because
//!   `MonsterStats` is registered with [`Rounding::Trunc`] for them), `extend` → `$union` on lists and a plain object on objects,
//!   `delete` → `$remove` on lists and `null` on object keys; on `special_attacks`, records
//!   named by `id`, `$key: "id"` with `$upsert` (`extend`) and `$remove` by name (`delete`).
//!   `extend` and `delete` of one field are one object (the game applies `extend` first; the
//!   corpus never extends and deletes one name).
//!
//! Loading the files through `extends` then gives exactly the CDDA-resolved values, which
//! [`CddaFixture::convert`] checks for every concrete monster (numbers compared by value).
//! `extend` / `delete` of a field the monster sets itself are ignored by the game, and so by the
//! conversion ([`CddaFixture::ignored`]); a modifier of a field nothing in the chain sets and the
//! game has no default for (`proportional.weigth`, `delete.flag`: misspellings) works on
//! nothing, which the library reports as an `unused-operator` warning; a `delete` of an item
//! the parent's list does not hold is a `changes-nothing` warning ([`CddaFixture::warnings`]).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use archetype_engine::{keys, ArchetypeLibrary, ComponentOptions, ComponentRegistry, Rounding};
use hecs::World;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tempfile::TempDir;

use crate::bench::cdda_rules::{self, Modifier, Tally};
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
    /// Moves a melee attack takes (100 is a turn).
    pub attack_cost: i32,
}

/// A monster's flags (`SEES`, `HEARS`, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MonsterFlags(pub Vec<String>);

/// Every other field of a monster, as JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MonsterData(pub Map<String, Value>);

/// A registry with the built-ins and the four monster components.
pub fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    // The game keeps its stats as integers, truncating what it multiplies into them.
    let truncating = (cdda_rules::INTEGER_FIELDS.iter())
        .fold(ComponentOptions::new(), |options, field| {
            options.rounding(*field, Rounding::Trunc)
        });
    let results = [
        registry.register::<MonsterInfo>(),
        registry.register_with::<MonsterStats>(truncating),
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

/// The archetype every monster without `copy-from` extends: the game's built-in defaults.
pub const DEFAULTS_ARCHETYPE: &str = "builtin/monster_defaults";

/// The monsters converted into archetype files in a temporary directory, loaded once and
/// checked against the CDDA resolution.
pub struct CddaFixture {
    dir: TempDir,
    registry: Arc<ComponentRegistry>,
    archetypes: usize,
    concrete: usize,
    modifiers: usize,
    ignored: Vec<String>,
    dropped: Vec<String>,
    errors: Vec<String>,
    warnings: Vec<String>,
    mismatches: Vec<String>,
    pre_resolved: Vec<String>,
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
        let index: HashMap<&str, usize> = monsters
            .iter()
            .enumerate()
            .map(|(i, m)| (m.key.as_str(), i))
            .collect();
        let mut tally = Tally::default();
        let mut pre_resolved = Vec::new();
        let resolved = resolve_all(&monsters, &index, &mut tally)?;
        let dir =
            tempfile::tempdir().map_err(|error| format!("no temporary directory: {error}"))?;
        let defaults = split(&cdda_rules::defaults());
        let text = file_text(&defaults, None, true);
        write(dir.path(), &format!("{DEFAULTS_ARCHETYPE}.json"), &text);
        for monster in &monsters {
            let parent = monster
                .parent
                .as_deref()
                .and_then(|p| index.get(p).copied());
            let own = own_components(&monster.raw, &mut pre_resolved);
            let parent_name = parent.map_or(DEFAULTS_ARCHETYPE, |p| monsters[p].name.as_str());
            let text = file_text(&own, Some(parent_name), monster.is_abstract);
            write(dir.path(), &format!("{}.json", monster.name), &text);
        }

        let mut fixture = CddaFixture {
            dir,
            registry: Arc::new(registry()),
            archetypes: monsters.len(),
            concrete: monsters.iter().filter(|m| !m.is_abstract).count(),
            modifiers: tally.applied,
            ignored: tally.ignored,
            dropped: tally.dropped,
            errors: Vec::new(),
            warnings: Vec::new(),
            mismatches: Vec::new(),
            pre_resolved,
        };
        let (library, problems) = fixture.load_with_warnings();
        (fixture.errors, fixture.warnings) = problems;
        let mut world = World::new();
        for (monster, fields) in monsters.iter().zip(&resolved) {
            if monster.is_abstract {
                continue;
            }
            if let Some(problem) = check(&library, &mut world, &monster.name, &split(fields)) {
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

    /// Archetype files written for monsters (one per monster, abstract ones included; the
    /// defaults archetype is not counted).
    pub fn archetypes(&self) -> usize {
        self.archetypes
    }

    /// Concrete (spawnable) monsters.
    pub fn concrete(&self) -> usize {
        self.concrete
    }

    /// CDDA modifiers converted into operators (one per field of a modifier object).
    pub fn modifiers(&self) -> usize {
        self.modifiers
    }

    /// `extend` / `delete` of a field the monster sets itself: the game ignores them, and so
    /// does the conversion (see the [module docs](self)).
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }

    /// CDDA modifiers the conversion could not express (see the [module docs](self)).
    pub fn dropped(&self) -> &[String] {
        &self.dropped
    }

    /// The library's errors on loading the files (`file:line:col: message`).
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// The library's warnings on loading the files: operators with nothing to work on.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Concrete monsters whose spawned components differ from the CDDA resolution.
    pub fn mismatches(&self) -> &[String] {
        &self.mismatches
    }

    /// The fields a file could only say by working a value out from another (see
    /// `own_components`): none in the corpus.
    pub fn pre_resolved(&self) -> &[String] {
        &self.pre_resolved
    }

    /// Ours: `ArchetypeLibrary::load` of the converted files, with its errors (a library with
    /// errors still serves every valid archetype).
    pub fn load(&self) -> (ArchetypeLibrary, Vec<String>) {
        let (library, (errors, _)) = self.load_with_warnings();
        (library, errors)
    }

    /// [`load`](Self::load), with the errors and the warnings apart.
    fn load_with_warnings(&self) -> (ArchetypeLibrary, (Vec<String>, Vec<String>)) {
        let root = self.dir.path().display().to_string();
        let tidy = |d: &archetype_engine::Diagnostic| d.to_string().replace(&root, "cdda");
        let (library, diagnostics) =
            match ArchetypeLibrary::load(self.dir.path(), self.registry.clone()) {
                Ok(library) => {
                    let diagnostics = library.diagnostics().to_vec();
                    (library, diagnostics)
                }
                Err(error) => {
                    let diagnostics = error.diagnostics().to_vec();
                    (error.into_partial(), diagnostics)
                }
            };
        let (errors, warnings) = diagnostics.iter().partition::<Vec<_>, _>(|d| d.is_error());
        let errors = errors.into_iter().map(tidy).collect();
        let warnings = warnings.into_iter().map(tidy).collect();
        (library, (errors, warnings))
    }

    /// Baseline: read every converted file and parse it into a `serde_json::Value`.
    pub fn read_and_parse(&self) -> Vec<Value> {
        read_and_parse_dir(self.dir.path())
    }
}

/// Every monster resolved the CDDA way, in order (parents first, wherever they are).
fn resolve_all(
    monsters: &[Monster],
    index: &HashMap<&str, usize>,
    tally: &mut Tally,
) -> Result<Vec<Map<String, Value>>, String> {
    let mut resolved: Vec<Option<Map<String, Value>>> = vec![None; monsters.len()];
    for start in 0..monsters.len() {
        // The chain up to a resolved ancestor (or a root), then resolved back down.
        let mut chain = vec![start];
        while let Some(parent) = monsters[chain[chain.len() - 1]].parent.as_deref() {
            let &p = index.get(parent).ok_or_else(|| {
                let key = &monsters[chain[chain.len() - 1]].key;
                format!("{key}: copy-from `{parent}` names no monster")
            })?;
            if resolved[p].is_some() {
                break;
            }
            if chain.contains(&p) || chain.len() > 32 {
                return Err(format!("{}: copy-from cycle", monsters[start].key));
            }
            chain.push(p);
        }
        for &i in chain.iter().rev() {
            if resolved[i].is_some() {
                continue;
            }
            let parent = monsters[i]
                .parent
                .as_deref()
                .and_then(|p| index.get(p).copied());
            let inherited = parent.and_then(|p| resolved[p].as_ref());
            let fields = cdda_rules::resolve(inherited, &monsters[i].raw, tally);
            resolved[i] = Some(fields);
        }
    }
    Ok(resolved
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
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
                raw: cdda_rules::normalize(&raw),
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

/// Which component a field goes to.
fn component_of(field: &str) -> &'static str {
    match field {
        "name" | "description" | "symbol" | "color" => "MonsterInfo",
        "flags" => "MonsterFlags",
        _ if cdda_rules::INTEGER_FIELDS.contains(&field) => "MonsterStats",
        _ => "MonsterData",
    }
}

/// A resolved monster's fields as component values (empty ones left out).
fn split(fields: &Map<String, Value>) -> BTreeMap<&'static str, Value> {
    let mut out: BTreeMap<&'static str, Value> = BTreeMap::new();
    for (key, value) in fields {
        let value = match key.as_str() {
            "name" | "description" => text(value),
            _ => value.clone(),
        };
        put(&mut out, component_of(key), key, value);
    }
    out
}

/// Puts `value` as field `key` of `component` (the whole value of `MonsterFlags`).
fn put(out: &mut BTreeMap<&'static str, Value>, component: &'static str, key: &str, value: Value) {
    if component == "MonsterFlags" {
        out.insert(component, value);
        return;
    }
    if let Value::Object(fields) = out
        .entry(component)
        .or_insert_with(|| Value::Object(Map::new()))
    {
        fields.insert(key.to_string(), value);
    }
}

/// What a monster's own file says (see the [module docs](self)): its own fields as written (an
/// object under `$replace`, as the game replaces it whole), then its modifiers as operators.
/// Nothing is worked out from what it inherits; `pre_resolved` counts the fields that would
/// need it (a field the monster both sets and modifies: none in the corpus).
fn own_components(
    raw: &Map<String, Value>,
    pre_resolved: &mut Vec<String>,
) -> BTreeMap<&'static str, Value> {
    let mut fields: Map<String, Value> = Map::new();
    for (key, value) in cdda_rules::own_fields(raw) {
        let value = match (key.as_str(), value) {
            ("name" | "description", _) => text(value),
            (_, Value::Object(_)) => {
                let mut replace = Map::new();
                replace.insert(keys::REPLACE.to_string(), value.clone());
                Value::Object(replace)
            }
            _ => value.clone(),
        };
        fields.insert(key.clone(), value);
    }
    for (name, modifier) in cdda_rules::MODIFIERS {
        let Some(Value::Object(changes)) = raw.get(name) else {
            continue;
        };
        for (field, change) in changes {
            let set_here = cdda_rules::own_fields(raw).any(|(key, _)| key == field);
            if set_here && matches!(modifier, Modifier::Extend | Modifier::Delete) {
                continue;
            }
            if set_here {
                // The game modifies the monster's own value: only working it out here (from
                // the file itself) would say it in one value.
                pre_resolved.push(field.clone());
            }
            let operator = operator_for(modifier, field, change);
            let slot = fields.entry(field.clone()).or_insert(Value::Null);
            combine(slot, operator);
        }
    }
    let mut out = BTreeMap::new();
    for (key, value) in fields {
        put(&mut out, component_of(&key), &key, value);
    }
    out
}

/// A CDDA modifier of `field` as the archetype language's operators.
fn operator_for(modifier: Modifier, field: &str, change: &Value) -> Value {
    let one = |key: &str, operand: Value| {
        let mut object = Map::new();
        object.insert(key.to_string(), operand);
        Value::Object(object)
    };
    match (modifier, change) {
        // Records of a list by their damage type: `$add` on each number of the matching one.
        (Modifier::Add, _) if field == "melee_damage" => {
            let records = match change {
                Value::Array(records) => records.clone(),
                record => vec![record.clone()],
            };
            let updates = records.iter().map(|record| match record {
                Value::Object(fields) => Value::Object(
                    (fields.iter())
                        .map(|(key, value)| match key.as_str() {
                            cdda_rules::DAMAGE_TYPE => (key.clone(), value.clone()),
                            _ => (key.clone(), operator_for(modifier, key, value)),
                        })
                        .collect(),
                ),
                other => other.clone(),
            });
            let updates = Value::Array(updates.collect());
            keyed(cdda_rules::DAMAGE_TYPE, keys::UPDATE, updates)
        }
        (Modifier::Add, Value::Object(changes)) | (Modifier::Multiply, Value::Object(changes)) => {
            Value::Object(
                changes
                    .iter()
                    .map(|(key, change)| (key.clone(), operator_for(modifier, field, change)))
                    .collect(),
            )
        }
        (Modifier::Add, _) => one(keys::ADD, change.clone()),
        (Modifier::Multiply, _) => one(keys::MUL, change.clone()),
        // Attacks by name: each given replaces the one of its name, or is appended.
        (Modifier::Extend, Value::Array(_)) if field == cdda_rules::ATTACKS => {
            keyed("id", keys::UPSERT, change.clone())
        }
        (Modifier::Extend, Value::Array(_)) => one(keys::UNION, change.clone()),
        (Modifier::Extend, _) => change.clone(),
        (Modifier::Delete, Value::Object(gone)) => {
            Value::Object(gone.keys().map(|key| (key.clone(), Value::Null)).collect())
        }
        (Modifier::Delete, _) => {
            let items: Vec<Value> = match change {
                Value::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            match field {
                // Attacks by name.
                cdda_rules::ATTACKS => keyed("id", keys::REMOVE, Value::Array(items)),
                _ => one(keys::REMOVE, Value::Array(items)),
            }
        }
    }
}

/// `{"$key": key, operator: operand}`: a keyed list operator on records named by `key`.
fn keyed(key: &str, operator: &str, operand: Value) -> Value {
    let mut object = Map::new();
    object.insert(keys::KEY.to_string(), Value::from(key));
    object.insert(operator.to_string(), operand);
    Value::Object(object)
}

/// Adds `more` (an operator object, an object of them, or a plain object) to what a field of
/// the file already says: operators of one value go into one object (the library applies them
/// in the order CDDA does), objects merge key by key.
fn combine(slot: &mut Value, more: Value) {
    match (&mut *slot, more) {
        (Value::Object(existing), Value::Object(more)) => {
            for (key, value) in more {
                if key.starts_with('$') {
                    existing.insert(key, value);
                } else {
                    combine(existing.entry(key).or_insert(Value::Null), value);
                }
            }
        }
        (_, more) => *slot = more,
    }
}

/// An archetype file with `components`, extending `parent` (if any).
fn file_text(
    components: &BTreeMap<&'static str, Value>,
    parent: Option<&str>,
    is_abstract: bool,
) -> String {
    let mut file = Map::new();
    file.insert("format".into(), Value::from(1));
    if is_abstract {
        file.insert("abstract".into(), Value::Bool(true));
    }
    if let Some(name) = parent {
        file.insert("extends".into(), Value::String(name.to_string()));
    }
    let components = components
        .iter()
        .map(|(name, value)| ((*name).to_string(), value.clone()))
        .collect();
    file.insert("components".into(), Value::Object(components));
    let mut text = serde_json::to_string_pretty(&Value::Object(file)).unwrap_or_default();
    text.push('\n');
    text
}

/// Spawns `name` and compares its components with `expected` (numbers by value); `None` if
/// they match.
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
    fn same<T>(
        world: &World,
        entity: hecs::Entity,
        name: &str,
        expected: Option<&Value>,
    ) -> Result<(), String>
    where
        T: hecs::Component + Serialize + for<'de> Deserialize<'de> + Default,
    {
        let live = world
            .get::<&T>(entity)
            .ok()
            .map(|live| serde_json::to_value(&*live).unwrap_or_default());
        // What the reference leaves out, the component's default gives.
        let wanted = match expected {
            Some(value) => serde_json::from_value::<T>(value.clone())
                .and_then(|typed| serde_json::to_value(typed))
                .map_err(|error| format!("expected value does not parse: {error}"))?,
            None => serde_json::to_value(T::default()).unwrap_or_default(),
        };
        let live = live.unwrap_or_else(|| serde_json::to_value(T::default()).unwrap_or_default());
        match same_json(&live, &wanted) {
            true => Ok(()),
            false => Err(format!("{name}: spawned {live}, CDDA resolves {wanted}")),
        }
    }
    let result = same::<MonsterInfo>(world, entity, "MonsterInfo", expected.get("MonsterInfo"))
        .and_then(|()| {
            same::<MonsterStats>(world, entity, "MonsterStats", expected.get("MonsterStats"))
        })
        .and_then(|()| {
            same::<MonsterFlags>(world, entity, "MonsterFlags", expected.get("MonsterFlags"))
        })
        .and_then(|()| {
            same::<MonsterData>(world, entity, "MonsterData", expected.get("MonsterData"))
        });
    let _ = world.despawn(entity);
    result.err()
}

/// JSON equality with numbers compared by value (`120` is `120.0`).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn modifiers_become_operators_on_the_inherited_value() {
        let raw = cdda_rules::normalize(
            json!({
                "id": "child", "copy-from": "base", "hp": 50, "armor": { "bash": 1 },
                "relative": { "speed": 10,
                              "melee_damage": { "damage_type": "cut", "amount": 2 } },
                "proportional": { "weight": 0.5, "attack_cost": 1.2 },
                "extend": { "flags": ["FLIES"] },
                "delete": { "flags": ["HEARS"], "special_attacks": ["bite"] }
            })
            .as_object()
            .unwrap(),
        );
        let mut pre_resolved = Vec::new();
        let own = own_components(&raw, &mut pre_resolved);
        assert_eq!(
            own["MonsterStats"],
            json!({
                "hp": 50,
                "speed": { "$add": 10 },
                // Truncated, as the game does: `MonsterStats` says so for its fields.
                "attack_cost": { "$mul": 1.2 }
            })
        );
        assert_eq!(
            own["MonsterData"],
            json!({
                // Set here: the game replaces the whole object.
                "armor": { "$replace": { "bash": 1 } },
                "melee_damage": {
                    "$key": "damage_type",
                    "$update": [{ "damage_type": "cut", "amount": { "$add": 2 } }]
                },
                "special_attacks": { "$key": "id", "$remove": ["bite"] },
                "weight": { "$mul": 0.5 }
            })
        );
        assert_eq!(
            own["MonsterFlags"],
            json!({ "$union": ["FLIES"], "$remove": ["HEARS"] })
        );
        assert!(pre_resolved.is_empty());
        // A field the monster both sets and modifies is counted: one value cannot say both.
        let both = cdda_rules::normalize(
            json!({ "id": "x", "hp": 50, "relative": { "hp": 10 } })
                .as_object()
                .unwrap(),
        );
        own_components(&both, &mut pre_resolved);
        assert_eq!(pre_resolved, ["hp"]);
    }
}
