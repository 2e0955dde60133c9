//! What a component's JSON Schema (from the registry, as `archetool schema` reads it) says of
//! a place in its value: the fields there, the enum variants, the doc comment, whether it
//! holds an archetype name (`ArchetypeRef`), an entity reference (`EntityRef`) or a file under
//! the assets root (`AssetPath`).

use archetype_engine::schemars::generate::SchemaSettings;
use archetype_engine::ComponentRegistry;
use serde_json::{Map, Value};

/// The engine's type of a field that names an archetype.
pub(super) const ARCHETYPE_REF: &str = "ArchetypeRef";
/// The engine's type of a field that names an entity of the instance (`#child`).
pub(super) const ENTITY_REF: &str = "EntityRef";
/// The engine's type of a field that names a file under the assets root, whatever kind of
/// file it allows (every `AssetPath<K>` has this schema name).
pub(super) const ASSET_PATH: &str = "AssetPath";

/// A component's schema with its definitions, to look places up in.
pub(super) struct ComponentSchema {
    root: Value,
    defs: Map<String, Value>,
}

/// A field a place can have.
#[derive(Clone, Debug)]
pub(super) struct Field {
    pub name: String,
    pub description: Option<String>,
}

impl ComponentSchema {
    /// The schema of component `name` (or an alias of it), if it was registered with one.
    pub fn of(registry: &ComponentRegistry, name: &str) -> Option<Self> {
        let id = registry.id(name)?;
        let mut generator = SchemaSettings::draft2020_12().into_generator();
        let root = registry.json_schema(id, &mut generator)?.to_value();
        let defs = generator.take_definitions(true);
        Some(ComponentSchema { root, defs })
    }

    /// The schema at `fields` (object keys; `None` for an array index) inside the value,
    /// following `$ref`s and looking into each alternative of `anyOf`/`oneOf`/`allOf`.
    pub fn at(&self, fields: &[Option<&str>]) -> Vec<&Value> {
        let mut found = self.expand(&self.root);
        for field in fields {
            let mut next = Vec::new();
            for schema in found {
                let inner = match field {
                    Some(key) => schema.get("properties").and_then(|p| p.get(*key)),
                    None => schema.get("items"),
                };
                if let Some(inner) = inner {
                    next.extend(self.expand(inner));
                }
            }
            found = next;
        }
        found
    }

    /// `schema` and its alternatives, with references followed (a bounded number of them).
    fn expand<'s>(&'s self, schema: &'s Value) -> Vec<&'s Value> {
        let mut out = Vec::new();
        let mut pending = vec![schema];
        while let Some(schema) = pending.pop() {
            if out.len() > 64 {
                break;
            }
            if let Some(target) = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| self.defs.get(name))
            {
                pending.push(target);
            }
            for key in ["anyOf", "oneOf", "allOf"] {
                if let Some(Value::Array(alternatives)) = schema.get(key) {
                    pending.extend(alternatives.iter().rev());
                }
            }
            out.push(schema);
        }
        out
    }

    /// Whether the place at `fields` holds a value of the engine's type `type_name`
    /// (`ArchetypeRef`, `EntityRef`, `AssetPath`), which the registry's schemas name as a definition.
    pub fn refers_to(&self, fields: &[Option<&str>], type_name: &str) -> bool {
        let target = format!("#/$defs/{type_name}");
        self.at(fields)
            .iter()
            .any(|schema| schema.get("$ref").and_then(Value::as_str) == Some(target.as_str()))
    }

    /// The fields an object at `fields` can have, sorted by name.
    pub fn fields(&self, fields: &[Option<&str>]) -> Vec<Field> {
        let mut found: Vec<Field> = Vec::new();
        for schema in self.at(fields) {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                continue;
            };
            for (name, property) in properties {
                if found.iter().any(|field| &field.name == name) {
                    continue;
                }
                found.push(Field {
                    name: name.clone(),
                    description: self.description(property),
                });
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        found
    }

    /// The string values a place at `fields` can take (an enum's unit variants), in the
    /// schema's order.
    pub fn variants(&self, fields: &[Option<&str>]) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for schema in self.at(fields) {
            let values = match (schema.get("enum"), schema.get("const")) {
                (Some(Value::Array(values)), _) => values.clone(),
                (_, Some(value)) => vec![value.clone()],
                _ => continue,
            };
            for value in values {
                if let Value::String(text) = value {
                    if !found.contains(&text) {
                        found.push(text);
                    }
                }
            }
        }
        found
    }

    /// The doc comment of the place at `fields`, if the schema has one.
    pub fn description_at(&self, fields: &[Option<&str>]) -> Option<String> {
        if fields.is_empty() {
            return self.description(&self.root);
        }
        // A field's own description sits on the property, before any `$ref` is followed.
        let (last, parent) = fields.split_last()?;
        for schema in self.at(parent) {
            let property = match last {
                Some(key) => schema.get("properties").and_then(|p| p.get(*key)),
                None => schema.get("items"),
            };
            if let Some(description) = property.and_then(|p| self.description(p)) {
                return Some(description);
            }
        }
        None
    }

    fn description(&self, schema: &Value) -> Option<String> {
        self.expand(schema)
            .into_iter()
            .find_map(|s| s.get("description").and_then(Value::as_str))
            .map(str::to_string)
    }
}
