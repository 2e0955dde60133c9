//! `archetool schema`: the JSON Schema (draft 2020-12) of archetype files, for editors.
//!
//! The schema says what the loader says, as far as a schema can:
//! - the top-level keys (`additionalProperties: false`, as the loader rejects unknown keys);
//! - `format`: the versions this library reads;
//! - `extends`, a child's `archetype` and `ArchetypeRef` fields: any well-formed archetype name
//!   (so a file created since is never flagged), with the names that exist now as `examples`,
//!   which editors offer as completions;
//! - `components`: every registered component under its name and its old names (aliases,
//!   marked deprecated), nothing else; each value is the component's schema or `null`
//!   (which removes an inherited component); a component registered without a schema accepts
//!   any value; a marker (unit struct) takes `{}`;
//! - `children`: child names to child entries (or `null`), recursively.
//!
//! Component schemas come from the registry ([`ComponentRegistry::json_schema`]). Because a
//! file may give a component only partly (its parents supply the rest; only a concrete
//! archetype must be complete once merged), the schema requires no field: `required` is
//! removed everywhere in component schemas, and `oneOf` becomes `anyOf` (without `required`,
//! an empty object would match every variant of a `oneOf`). Unknown fields stay rejected
//! (`additionalProperties: false` on every struct), and types, enum values and doc comments
//! (as descriptions) stay. The schema cannot know that a concrete archetype is incomplete, nor
//! that `null` inside a component value removes an inherited field: `archetool validate` does.
//!
//! Every list and number a file may write (at any depth of a component, except inside lists,
//! which replace whole) may instead be an operator (`{"$append": [..]}`, `{"$add": 1}`, ...).
//!
//! The output is deterministic: keys sorted, two-space indentation, a final newline.

use std::path::Path;

use archetype_engine::schemars::generate::SchemaSettings;
use archetype_engine::tooling::ARCHETYPE_NAME_PATTERN;
use archetype_engine::{keys, ComponentRegistry, FORMAT_VERSION};
use clap::Args;
use serde_json::{json, Map, Value};

use super::raw_json::{to_canonical_string, Layout, Node};
use super::{write_atomically, CliError, Context, DirArg, Exit};

/// Arguments of `archetool schema`.
#[derive(Clone, Debug, Args)]
pub struct SchemaArgs {
    /// Write the schema to FILE (atomically) instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
    /// The archetypes root (its archetype names are suggested wherever an archetype is named).
    #[command(flatten)]
    pub dir: DirArg,
}

/// Prints (or writes to `--out`, creating its directory) the JSON Schema of archetype files
/// for the registry's components and the archetypes under `--dir`.
///
/// # Errors
/// If the directory does not exist, or the output cannot be written.
pub fn schema(args: &SchemaArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let names: Vec<&str> = library.names().collect();
    let text = schema_text(&context.registry, &names);
    match &args.out {
        Some(path) => write_schema(path, &text)?,
        None => context.out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Success)
}

/// Writes a schema to `path` atomically, creating the directories on its way.
///
/// # Errors
/// If a directory cannot be created or the file cannot be written.
pub(crate) fn write_schema(path: &Path, text: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|error| CliError::io(format!("cannot create `{}`", dir.display()), error))?;
    }
    write_atomically(path, text.as_bytes())
}

/// Where the definitions of the archetype format itself live under `$defs`. The names contain
/// `-`, so they cannot clash with the definitions of component types (named after Rust types).
const NAME_DEF: &str = "archetype-name";
const COMPONENTS_DEF: &str = "archetype-components";
const CHILDREN_DEF: &str = "archetype-children";
const CHILD_DEF: &str = "archetype-child";
const LIST_OPERATOR_DEF: &str = "list-operator";
const NUMBER_OPERATOR_DEF: &str = "number-operator";
const RANGE_DEF: &str = "range";
const PICK_DEF: &str = "pick";

fn def_ref(name: &str) -> Value {
    json!({ "$ref": format!("#/$defs/{name}") })
}

/// The schema as canonical JSON text.
pub fn schema_text(registry: &ComponentRegistry, archetype_names: &[&str]) -> String {
    let value = schema_value(registry, archetype_names);
    to_canonical_string(&Node::from_value(&value), Layout::Value)
}

/// The schema for archetype files using the components of `registry`, suggesting
/// `archetype_names` wherever an archetype is named.
pub fn schema_value(registry: &ComponentRegistry, archetype_names: &[&str]) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut components = Map::new();
    for id in registry.ids() {
        if registry.is_managed(id) {
            continue;
        }
        let name = registry.name(id);
        let mut value = match registry.json_schema(id, &mut generator) {
            // A marker (unit struct) is written `{}` in archetype files.
            _ if registry.is_marker(id) => {
                json!({ "type": "object", "maxProperties": 0, "description": format!("Marker component `{name}`: write `{{}}`.") })
            }
            Some(schema) => schema.to_value(),
            None => json!({}),
        };
        relax_component_schema(&mut value);
        allow_operators(&mut value, true);
        let with_null = json!({ "anyOf": [value, { "type": "null" }] });
        let mut property = with_null.clone();
        if let Value::Object(object) = &mut property {
            object.insert(
                "description".into(),
                format!("Component `{name}`; `null` removes it when a parent has it.").into(),
            );
        }
        components.insert(name.to_string(), property);
        for alias in registry.aliases(id) {
            let mut property = with_null.clone();
            if let Value::Object(object) = &mut property {
                object.insert(
                    "description".into(),
                    format!("Old name of component `{name}`; `archetool migrate` renames it.")
                        .into(),
                );
                object.insert("deprecated".into(), true.into());
            }
            components.insert(alias.to_string(), property);
        }
    }

    let mut defs = generator.take_definitions(true);
    for definition in defs.values_mut() {
        relax_component_schema(definition);
        allow_operators(definition, true);
    }
    insert_operator_defs(&mut defs);
    insert_variation_defs(&mut defs);
    // Any well-formed name is accepted (a file created since is never flagged); the names
    // that exist now are suggested.
    let name_schema = json!({
        "type": "string",
        "pattern": ARCHETYPE_NAME_PATTERN,
        "examples": archetype_names,
        "description": "An archetype: the path of its file under the archetypes root, without `.json` (`enemies/goblin`).",
    });
    defs.insert(NAME_DEF.into(), name_schema);
    // `ArchetypeRef` fields take the same names.
    if let Some(Value::Object(archetype_ref)) = defs.get_mut("ArchetypeRef") {
        archetype_ref.insert("examples".into(), json!(archetype_names));
    }
    defs.insert(
        COMPONENTS_DEF.into(),
        json!({
            "description": "Component name to value. Values merge with the parents' (JSON Merge Patch): give only what differs.",
            "type": "object",
            "properties": components,
            "additionalProperties": false,
        }),
    );
    defs.insert(
        CHILDREN_DEF.into(),
        json!({
            "description": "Child entities by local name; `null` removes a child a parent has.",
            "type": "object",
            "propertyNames": { "pattern": "^[A-Za-z0-9_-]+$" },
            "additionalProperties": { "anyOf": [def_ref(CHILD_DEF), { "type": "null" }] },
        }),
    );
    defs.insert(
        CHILD_DEF.into(),
        json!({
            "description": "A child entity: an instance of `archetype` (if given) with these components and children.",
            "type": "object",
            "properties": {
                (keys::ARCHETYPE): with_description(def_ref(NAME_DEF), "The archetype this child is an instance of."),
                (keys::FORMERLY): {
                    "description": "The names this child was formerly known by: scenes saved under them still load.",
                    "anyOf": [
                        { "type": "string", "pattern": "^[A-Za-z0-9_-]+$" },
                        { "type": "array", "items": { "type": "string", "pattern": "^[A-Za-z0-9_-]+$" }, "uniqueItems": true },
                    ],
                },
                (keys::COMPONENTS): def_ref(COMPONENTS_DEF),
                (keys::CHILDREN): def_ref(CHILDREN_DEF),
            },
            "additionalProperties": false,
        }),
    );

    let versions: Vec<u64> = (1..=FORMAT_VERSION).collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "archetype-engine archetype file",
        "description": "One archetype. Generated by `archetool schema`: regenerate rather than edit.",
        "type": "object",
        "properties": {
            (keys::SCHEMA): { "description": "The JSON Schema this file follows (for editors; the loader ignores it).", "type": "string" },
            (keys::FORMAT): { "description": "The file format version.", "enum": versions },
            (keys::ABSTRACT): { "description": "`true`: the archetype can be extended but not spawned.", "type": "boolean" },
            (keys::FORMERLY): {
                "description": "The names this archetype was formerly known by: scenes and files naming them still load (with a warning), and `archetool migrate` rewrites them.",
                "anyOf": [
                    def_ref(NAME_DEF),
                    { "type": "array", "items": def_ref(NAME_DEF), "uniqueItems": true },
                ],
            },
            (keys::EXTENDS): {
                "description": "The parent archetype, or a list of them, applied in order.",
                "anyOf": [
                    def_ref(NAME_DEF),
                    { "type": "array", "items": def_ref(NAME_DEF), "uniqueItems": true },
                ],
            },
            (keys::COMPONENTS): def_ref(COMPONENTS_DEF),
            (keys::CHILDREN): def_ref(CHILDREN_DEF),
        },
        "additionalProperties": false,
        "$defs": defs,
    })
}

/// The definitions of the operators a list or a number may be written as.
fn insert_operator_defs(defs: &mut Map<String, Value>) {
    let list = json!({ "type": "array" });
    let records = json!({ "type": "array", "items": { "type": "object" } });
    let number = json!({ "type": "number" });
    defs.insert(
        LIST_OPERATOR_DEF.into(),
        json!({
            "description": "Changes the inherited list: `$append` or `$prepend` items, `$union` (append those not there yet), `$remove` items (an object removes every object holding its members). On a list of records named by a `$key` field: `$update` merges into the record with a key, `$upsert` replaces it (or appends), `$remove` takes keys.",
            "type": "object",
            "properties": {
                (keys::APPEND): list, (keys::PREPEND): list, (keys::UNION): list, (keys::REMOVE): list,
                (keys::UPDATE): records, (keys::UPSERT): records,
                (keys::KEY): { "type": "string", "minLength": 1, "description": "The field that names each record of the list." },
            },
            "minProperties": 1,
            "additionalProperties": false,
            "not": { "required": [keys::KEY], "anyOf": [
                { "required": [keys::APPEND] }, { "required": [keys::PREPEND] }, { "required": [keys::UNION] },
            ] },
            "dependentRequired": { (keys::UPDATE): [keys::KEY], (keys::UPSERT): [keys::KEY] },
            "dependentSchemas": { (keys::KEY): { "anyOf": [
                { "required": [keys::UPDATE] }, { "required": [keys::UPSERT] }, { "required": [keys::REMOVE] },
            ] } },
        }),
    );
    defs.insert(
        NUMBER_OPERATOR_DEF.into(),
        json!({
            "description": "Changes the inherited number: `$add` to it, then `$mul` (multiply) it; `$round` says how the result is made a whole number (a field of an integer type rounds to the nearest without it).",
            "type": "object",
            "properties": {
                (keys::ADD): number,
                (keys::MUL): number,
                (keys::ROUND): {
                    "description": "How the result is made whole: `nearest` (halves away from zero), `even` (halves to the even neighbour), `trunc` (toward zero), `floor` (down), `ceil` (up).",
                    "enum": keys::ROUNDINGS,
                },
            },
            "anyOf": [{ "required": [keys::ADD] }, { "required": [keys::MUL] }],
            "additionalProperties": false,
        }),
    );
}

/// The definitions of spawn-time variations: `$range` in place of a number, `$pick` in place
/// of any value.
fn insert_variation_defs(defs: &mut Map<String, Value>) {
    defs.insert(
        RANGE_DEF.into(),
        json!({
            "description": "Rolled per spawned entity: a number from the lowest to the highest, both included (a whole number where the field takes whole numbers).",
            "type": "object",
            "properties": {
                (keys::RANGE): { "type": "array", "items": { "type": "number" }, "minItems": 2, "maxItems": 2 },
            },
            "required": [keys::RANGE],
            "additionalProperties": false,
        }),
    );
    defs.insert(
        PICK_DEF.into(),
        json!({
            "description": "Rolled per spawned entity: one of the values listed, each as likely.",
            "type": "object",
            "properties": {
                (keys::PICK): { "type": "array", "minItems": 1 },
            },
            "required": [keys::PICK],
            "additionalProperties": false,
        }),
    );
}

/// Lets every list and number a file may write (not those inside lists, which replace whole)
/// be an operator instead, a number a `$range`, and a list, number, string or boolean a
/// `$pick`.
///
/// `pick`: whether this place may be a `$pick` by itself (not when it is one alternative of a
/// choice of plain values, such as an enum's variants: the `$pick` is the whole choice's).
fn allow_operators(schema: &mut Value, pick: bool) {
    let Value::Object(object) = schema else {
        return;
    };
    // A choice of plain values (an enum's variants, each a `const`): picked among as a whole.
    let choice = (!object.contains_key("type"))
        .then(|| plain_choice(object))
        .flatten();
    for (keyword, value) in object.iter_mut() {
        match keyword.as_str() {
            "properties" | "patternProperties" => {
                if let Value::Object(map) = value {
                    map.values_mut()
                        .for_each(|value| allow_operators(value, true));
                }
            }
            "additionalProperties" => allow_operators(value, true),
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(items) = value {
                    let pick = choice.is_none();
                    items
                        .iter_mut()
                        .for_each(|item| allow_operators(item, pick));
                }
            }
            _ => {}
        }
    }
    if let Some(original) = choice.filter(|_| pick) {
        let description = object.remove("description");
        let any_of = vec![Value::Object(std::mem::take(object)), pick_of(&original)];
        if let Some(description) = description {
            object.insert("description".into(), description);
        }
        object.insert("anyOf".into(), Value::Array(any_of));
        return;
    }
    let types: Vec<&str> = match object.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => return,
    };
    let alternatives: &[&str] = if types.contains(&"array") {
        &[LIST_OPERATOR_DEF, PICK_DEF]
    } else if types.iter().any(|t| matches!(*t, "number" | "integer")) {
        &[NUMBER_OPERATOR_DEF, RANGE_DEF, PICK_DEF]
    } else if types.iter().any(|t| matches!(*t, "string" | "boolean")) {
        &[PICK_DEF]
    } else {
        // An object may be replaced whole: `$replace` alone, its value checked by the engine
        // (a copy of the schema per level would grow with the depth of nesting). Kept in the
        // object's own schema, so editors find its fields where they were. (A list is replaced
        // whole by writing it: the schema offers no `$replace` there.)
        // So may every number in it be scaled (`$mul`, and `$round` beside it).
        if types.contains(&"object") && object.contains_key("properties") {
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                properties.insert(
                    keys::REPLACE.into(),
                    json!({
                        "description": "Replaces the inherited value whole instead of merging into it.",
                        "type": "object",
                    }),
                );
                properties.insert(
                    keys::MUL.into(),
                    json!({ "description": "Multiplies every number in it.", "type": "number" }),
                );
                properties.insert(
                    keys::ROUND.into(),
                    json!({ "description": "How `$mul` makes a whole number.", "enum": keys::ROUNDINGS }),
                );
            }
            object.insert(
                "dependentSchemas".into(),
                json!({
                    (keys::REPLACE): { "maxProperties": 1 },
                    (keys::MUL): { "propertyNames": { "enum": [keys::MUL, keys::ROUND] } },
                    (keys::ROUND): { "required": [keys::MUL] },
                }),
            );
        }
        return;
    };
    let mut original = std::mem::take(object);
    // The description stays on top, for hovers.
    if let Some(description) = original.remove("description") {
        object.insert("description".into(), description);
    }
    let mut any_of = vec![];
    for def in alternatives {
        match *def {
            PICK_DEF if pick => any_of.push(pick_of(&original)),
            PICK_DEF => {}
            other => any_of.push(def_ref(other)),
        }
    }
    if any_of.is_empty() {
        // Nothing to offer beside the value itself (a variant of a choice).
        let description = object.remove("description");
        *object = original;
        if let Some(description) = description {
            object.insert("description".into(), description);
        }
        return;
    }
    any_of.insert(0, Value::Object(original));
    object.insert("anyOf".into(), Value::Array(any_of));
}

/// A `$pick` of values of `schema` (a `$pick`'s values are values of the field).
fn pick_of(schema: &Map<String, Value>) -> Value {
    let mut pick = def_ref(PICK_DEF);
    if let Value::Object(pick) = &mut pick {
        let items = json!({ (keys::PICK): { "items": Value::Object(schema.clone()) } });
        pick.insert("properties".into(), items);
    }
    pick
}

/// `object` (before operators are allowed in it) if it is a choice among plain values: an
/// `anyOf` or `oneOf` whose every alternative is a string, number or boolean.
fn plain_choice(object: &Map<String, Value>) -> Option<Map<String, Value>> {
    let alternatives = object
        .get("anyOf")
        .or_else(|| object.get("oneOf"))?
        .as_array()?;
    let plain = |alternative: &Value| {
        let kind = alternative.get("type").and_then(Value::as_str);
        matches!(kind, Some("string" | "number" | "integer" | "boolean"))
    };
    (!alternatives.is_empty() && alternatives.iter().all(plain)).then(|| {
        let mut choice = object.clone();
        choice.remove("description");
        choice
    })
}

fn with_description(mut schema: Value, description: &str) -> Value {
    if let Value::Object(object) = &mut schema {
        object.insert("description".into(), description.into());
    }
    schema
}

/// Makes a component schema accept partial values (see the module docs): no `required`,
/// `anyOf` for `oneOf`, and `additionalProperties: false` on every struct.
fn relax_component_schema(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    object.remove("required");
    if let Some(one_of) = object.remove("oneOf") {
        object.insert("anyOf".into(), one_of);
    }
    if object.contains_key("properties") && !object.contains_key("additionalProperties") {
        object.insert("additionalProperties".into(), false.into());
    }
    for (keyword, value) in object.iter_mut() {
        match keyword.as_str() {
            // Keywords whose value is a schema.
            "additionalProperties"
            | "items"
            | "contains"
            | "not"
            | "if"
            | "then"
            | "else"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                relax_component_schema(value);
            }
            // Keywords whose value is a list of schemas.
            "allOf" | "anyOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    items.iter_mut().for_each(relax_component_schema);
                }
            }
            // Keywords whose value maps names to schemas.
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(map) = value {
                    map.values_mut().for_each(relax_component_schema);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn component_schemas_require_nothing_and_reject_unknown_fields() {
        let mut schema = json!({
            "type": "object",
            "required": ["a"],
            "properties": {
                "required": { "type": "array", "items": { "type": "object", "properties": { "x": {} }, "required": ["x"] } },
                "a": { "oneOf": [{ "const": "A" }, { "type": "object", "properties": { "B": {} }, "required": ["B"], "additionalProperties": false }] }
            }
        });
        relax_component_schema(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "required": { "type": "array", "items": { "type": "object", "properties": { "x": {} }, "additionalProperties": false } },
                    "a": { "anyOf": [{ "const": "A" }, { "type": "object", "properties": { "B": {} }, "additionalProperties": false }] }
                }
            })
        );
    }
}
