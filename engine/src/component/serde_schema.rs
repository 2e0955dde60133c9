//! JSON Schemas traced from a component's `Deserialize` ([`ComponentOptions::json_schema_from_serde`]):
//! for types that do not derive `schemars::JsonSchema`, or hold fields whose types cannot (glam's
//! `Vec2`, `Quat`, ... have serde support but no schemars support, and the orphan rule keeps
//! anyone but the two crates from adding it).
//!
//! The type's human-readable form is traced as for binary layouts ([`value_layout`]), and each
//! shape becomes its schema: numbers with their range, strings, lists, tuples, glam's vectors
//! (`[x, y]` or an object of the axes it changes, `{"y": 2}`), structs with their fields (no others allowed), enums as serde writes them
//! (`"Idle"`, `{"Patrol": {..}}`). Doc comments are not part of a type's serde form, so
//! these schemas have no descriptions; a type that cannot be traced (one that inspects its
//! input itself, such as an untagged enum) gets none.
//!
//! [`ComponentOptions::json_schema_from_serde`]: crate::ComponentOptions::json_schema_from_serde
//! [`value_layout`]: crate::component::value_layout

use serde_json::{json, Map, Value};

use crate::component::value_layout::{Layout, Variant};

/// The JSON Schema of values of `layout`, as JSON writes them.
pub(super) fn schema_of(layout: &Layout) -> Value {
    match layout {
        Layout::Bool => json!({ "type": "boolean" }),
        Layout::I8 => integer(i8::MIN as f64, i8::MAX as f64),
        Layout::I16 => integer(i16::MIN as f64, i16::MAX as f64),
        Layout::I32 => integer(i32::MIN as f64, i32::MAX as f64),
        Layout::U8 => integer(0.0, u8::MAX as f64),
        Layout::U16 => integer(0.0, u16::MAX as f64),
        Layout::U32 => integer(0.0, u32::MAX as f64),
        Layout::I64 | Layout::I128 => json!({ "type": "integer" }),
        Layout::U64 | Layout::U128 => json!({ "type": "integer", "minimum": 0 }),
        Layout::F32 | Layout::F64 => json!({ "type": "number" }),
        Layout::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
        Layout::Str => json!({ "type": "string" }),
        Layout::Bytes => json!({ "type": "array", "items": integer(0.0, 255.0) }),
        // A unit struct (a marker) is written `{}`.
        Layout::Unit => json!({ "type": "object", "additionalProperties": false }),
        Layout::Option(inner) => json!({ "anyOf": [schema_of(inner), { "type": "null" }] }),
        Layout::Seq(item) => json!({ "type": "array", "items": schema_of(item) }),
        Layout::Map(_, value) => {
            json!({ "type": "object", "additionalProperties": schema_of(value) })
        }
        Layout::Tuple(items) => tuple(items),
        Layout::Vector(items, axes) => vector(items, axes),
        Layout::Struct(fields) => object(fields),
        Layout::Newtype(inner) => schema_of(inner),
        Layout::Enum(variants) => enumeration(variants),
        // A shared value, or what tracing left open: anything.
        Layout::Shared | Layout::EnumRef(_) => json!({}),
    }
}

/// Names the axes of the vector (or tuple) at `field` (keys of structs) of `layout` `axes`, as
/// a component's options declare them.
pub(super) fn name_axes(layout: &mut Layout, field: &[String], axes: &[&str]) {
    let mut place = layout;
    for key in field {
        let inner = match place {
            Layout::Struct(fields) => fields.iter_mut().find(|(name, _)| name == key),
            _ => None,
        };
        match inner {
            Some((_, inner)) => place = inner,
            None => return,
        }
    }
    let named = |items: &mut Vec<Layout>| {
        Layout::Vector(
            std::mem::take(items),
            axes.iter().map(|a| a.to_string()).collect(),
        )
    };
    let (Layout::Vector(items, _) | Layout::Tuple(items)) = place else {
        return;
    };
    if items.len() == axes.len() {
        *place = named(items);
    }
}

fn integer(minimum: f64, maximum: f64) -> Value {
    json!({ "type": "integer", "minimum": minimum as i64, "maximum": maximum as i64 })
}

fn tuple(items: &[Layout]) -> Value {
    let schemas: Vec<Value> = items.iter().map(schema_of).collect();
    // One schema for every item when they agree (glam's `[f32; N]`-like vectors).
    let first = schemas.first().cloned().unwrap_or_else(|| json!({}));
    if schemas.iter().all(|schema| *schema == first) {
        return json!({
            "type": "array",
            "items": first,
            "minItems": items.len(),
            "maxItems": items.len(),
        });
    }
    json!({
        "type": "array",
        "prefixItems": schemas,
        "items": false,
        "minItems": items.len(),
        "maxItems": items.len(),
    })
}

/// A vector: its array, or an object of the axes it changes (`{"z": 5}`).
fn vector(items: &[Layout], axes: &[String]) -> Value {
    let properties: Map<String, Value> = (axes.iter().cloned())
        .zip(items.iter().map(schema_of))
        .collect();
    json!({ "anyOf": [
        tuple(items),
        { "type": "object", "properties": properties, "additionalProperties": false, "minProperties": 1 },
    ] })
}

fn object(fields: &[(String, Layout)]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(name, layout)| (name.clone(), schema_of(layout)))
        .collect();
    json!({ "type": "object", "properties": properties, "additionalProperties": false })
}

fn enumeration(variants: &[(String, Variant)]) -> Value {
    let units: Vec<&String> = variants
        .iter()
        .filter(|(_, variant)| matches!(variant, Variant::Unit))
        .map(|(name, _)| name)
        .collect();
    let mut alternatives = Vec::new();
    if !units.is_empty() {
        alternatives.push(json!({ "type": "string", "enum": units }));
    }
    for (name, variant) in variants {
        let content = match variant {
            Variant::Unit => continue,
            Variant::Newtype(inner) => schema_of(inner),
            Variant::Tuple(items) => tuple(items),
            Variant::Struct(fields) => object(fields),
        };
        let mut properties = Map::new();
        properties.insert(name.clone(), content);
        alternatives.push(json!({
            "type": "object",
            "properties": properties,
            "required": [name],
            "additionalProperties": false,
        }));
    }
    match alternatives.len() {
        1 => alternatives.remove(0),
        _ => json!({ "oneOf": alternatives }),
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use glam::{Quat, Vec2};
    use serde::Deserialize;

    use super::*;
    use crate::component::value_layout::trace_with;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    enum Mode {
        Idle,
        Patrol { radius: f32 },
        Chase(u8),
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Patrol {
        route: Vec<Vec2>,
        facing: Quat,
        mode: Mode,
        pause: Option<f32>,
        name: String,
    }

    #[test]
    fn glam_fields_and_enums_are_described_as_json_writes_them() {
        let schema = schema_of(&trace_with::<Patrol>(true).unwrap());
        let number = json!({ "type": "number" });
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "route": {
                        "type": "array",
                        "items": { "anyOf": [
                            { "type": "array", "items": number, "minItems": 2, "maxItems": 2 },
                            {
                                "type": "object",
                                "properties": { "x": number, "y": number },
                                "additionalProperties": false,
                                "minProperties": 1,
                            },
                        ] },
                    },
                    "facing": { "anyOf": [
                        { "type": "array", "items": number, "minItems": 4, "maxItems": 4 },
                        {
                            "type": "object",
                            "properties": { "x": number, "y": number, "z": number, "w": number },
                            "additionalProperties": false,
                            "minProperties": 1,
                        },
                    ] },
                    "mode": { "oneOf": [
                        { "type": "string", "enum": ["Idle"] },
                        {
                            "type": "object",
                            "properties": { "Patrol": {
                                "type": "object",
                                "properties": { "radius": number },
                                "additionalProperties": false,
                            } },
                            "required": ["Patrol"],
                            "additionalProperties": false,
                        },
                        {
                            "type": "object",
                            "properties": { "Chase": { "type": "integer", "minimum": 0, "maximum": 255 } },
                            "required": ["Chase"],
                            "additionalProperties": false,
                        },
                    ] },
                    "pause": { "anyOf": [number, { "type": "null" }] },
                    "name": { "type": "string" },
                },
            })
        );
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Sprite {
        tint: glam::Vec4,
    }

    #[test]
    fn axes_a_component_names_replace_the_vectors_own() {
        let mut layout = trace_with::<Sprite>(true).unwrap();
        name_axes(&mut layout, &["tint".to_string()], &["r", "g", "b", "a"]);
        let schema = schema_of(&layout);
        let axes = &schema["properties"]["tint"]["anyOf"][1]["properties"];
        let names: Vec<&String> = axes.as_object().unwrap().keys().collect();
        assert_eq!(names, ["a", "b", "g", "r"]);
    }
}
