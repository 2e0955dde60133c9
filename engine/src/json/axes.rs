//! Named axes: a vector written `[1, 2, 3]` or `{"x": 1, "y": 2, "z": 3}`.
//!
//! Known here by the names serde gives the types: glam's vectors and quaternions (`Vec2`, `Vec3`, `Vec3A`, `Vec4`, `DVec3`, `IVec2`, `Quat`,
//! ...) read only from their array form; the engine reads them from an object of named axes
//! too (`x y`, `x y z`, `x y z w`), and a component can name the axes of one of its fields
//! itself ([`ComponentOptions::axes`](crate::ComponentOptions::axes): `r g b a` for a colour).
//! Under inheritance an object form changes only the axes it names: the merge turns the
//! inherited array into an object of its axes first (`value_merge`), so both forms merge alike.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// `x y`, `x y z`, `x y z w`: the axes of glam's vectors by their length.
pub(crate) const XYZW: [&str; 4] = ["x", "y", "z", "w"];

/// The axes of the glam type serde names `name` (a tuple struct of `len` elements), if it is
/// a vector or a quaternion.
pub(crate) fn glam_axes(name: &str, len: usize) -> Option<&'static [&'static str]> {
    let axes = &XYZW[..len.min(4)];
    if len == 4 && matches!(name, "Quat" | "DQuat") {
        return Some(axes);
    }
    // `Vec3`, `DVec3`, `IVec3`, `U8Vec3`, `BVec3A`, ...: a known element prefix, `Vec`, the
    // length, and an optional `A` (aligned).
    let (prefix, rest) = name.split_once("Vec")?;
    let known = [
        "", "D", "I", "U", "B", "I8", "U8", "I16", "U16", "I64", "U64", "Usize",
    ];
    let size = rest.strip_suffix('A').unwrap_or(rest);
    let fits = size.parse::<usize>().ok() == Some(len) && (2..=4).contains(&len);
    (known.contains(&prefix) && fits).then_some(axes)
}

/// What is wrong with an object of named axes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AxisProblem {
    /// A key that is no axis of the vector.
    Unknown(String),
    /// An axis the object does not give (and nothing stands in for it).
    Missing(&'static str),
}

impl AxisProblem {
    /// The message, naming the axes the vector has (`unknown axis `q`; expected x, y, z`).
    pub(crate) fn message(&self, axes: &[&str]) -> String {
        let expected = axes.join(", ");
        match self {
            AxisProblem::Unknown(axis) => format!("unknown axis `{axis}`; expected {expected}"),
            AxisProblem::Missing(axis) => format!(
                "missing axis `{axis}`; expected {expected} (an object of axes leaves out only axes an inherited vector or the type's default gives)"
            ),
        }
    }
}

/// The first key of `object` that is not one of `axes`.
pub(crate) fn unknown_axis(object: &Map<String, Value>, axes: &[&str]) -> Option<String> {
    object
        .keys()
        .find(|key| !axes.contains(&key.as_str()))
        .cloned()
}

/// The values of `object` in the order of `axes`; `None` for an axis it does not give.
pub(crate) fn in_axis_order<'v>(
    object: &'v Map<String, Value>,
    axes: &[&'static str],
) -> Result<Vec<Option<&'v Value>>, AxisProblem> {
    if let Some(axis) = unknown_axis(object, axes) {
        return Err(AxisProblem::Unknown(axis));
    }
    Ok(axes.iter().map(|axis| object.get(*axis)).collect())
}

/// `items` (an array form) as an object of `axes`, if it has one item per axis.
pub(crate) fn axis_object(items: &[Value], axes: &[&str]) -> Option<Map<String, Value>> {
    (items.len() == axes.len()).then(|| {
        let named = axes.iter().map(|axis| axis.to_string());
        named.zip(items.iter().cloned()).collect()
    })
}

/// `object` (an object of `axes`) as its array form, if it gives exactly those axes.
pub(crate) fn axis_array(object: &Map<String, Value>, axes: &[&'static str]) -> Option<Vec<Value>> {
    let ordered = in_axis_order(object, axes).ok()?;
    ordered.into_iter().map(|value| value.cloned()).collect()
}

/// A field written as an array or as an object of these axes: its path (keys) in the
/// component and its axes, as a component's options declare it.
pub(crate) type DeclaredAxes = (Vec<String>, &'static [&'static str]);

/// A declared vector written wrong: its place (keys), what is wrong, and its axes.
pub(crate) type AxisMisfit = (Vec<String>, AxisProblem, &'static [&'static str]);

/// `value` with the objects at the `declared` places written in the order of their axes, as
/// the type reads them: an array where every axis is given; where some are not (a `partial`
/// value, that later files complete), an object of glam's axis names in their place.
/// `Err`: the place (keys) and what is wrong there.
pub(crate) fn normalize_declared<'v>(
    value: &'v Value,
    declared: &[DeclaredAxes],
    partial: bool,
) -> Result<Cow<'v, Value>, AxisMisfit> {
    let written = |path: &[String]| {
        let mut place = value;
        for key in path {
            place = place.get(key.as_str())?;
        }
        place.as_object()
    };
    if declared.iter().all(|(path, _)| written(path).is_none()) {
        return Ok(Cow::Borrowed(value));
    }
    let mut value = value.clone();
    for (path, axes) in declared {
        let Some(place) = path
            .iter()
            .try_fold(&mut value, |place, key| place.get_mut(key.as_str()))
        else {
            continue;
        };
        let Value::Object(object) = place else {
            continue;
        };
        let ordered =
            in_axis_order(object, axes).map_err(|problem| (path.clone(), problem, *axes))?;
        if let Some(items) = ordered
            .iter()
            .map(|item| item.cloned())
            .collect::<Option<Vec<_>>>()
        {
            *place = Value::Array(items);
            continue;
        }
        let missing = ordered.iter().position(Option::is_none).unwrap_or_default();
        if !partial || axes.len() > XYZW.len() {
            return Err((path.clone(), AxisProblem::Missing(axes[missing]), *axes));
        }
        let renamed = (axes.iter().zip(XYZW))
            .filter_map(|(axis, glam)| Some((glam.to_string(), object.get(*axis)?.clone())));
        *place = Value::Object(renamed.collect());
    }
    Ok(Cow::Owned(value))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn glam_vectors_and_quaternions_have_axes_and_matrices_do_not() {
        for (name, len) in [("Vec3", 3), ("Vec3A", 3), ("DVec2", 2), ("U8Vec4", 4)] {
            assert_eq!(glam_axes(name, len), Some(&XYZW[..len]), "{name}");
        }
        assert_eq!(glam_axes("Quat", 4), Some(&XYZW[..]));
        for (name, len) in [("Mat2", 4), ("Vec3", 4), ("MyVec3", 3), ("Affine2", 6)] {
            assert_eq!(glam_axes(name, len), None, "{name}");
        }
    }

    #[test]
    fn an_object_of_every_axis_becomes_the_array_and_back() {
        let object = json!({"z": 3, "x": 1, "y": 2});
        let array = axis_array(object.as_object().unwrap(), &XYZW[..3]).unwrap();
        assert_eq!(array, vec![json!(1), json!(2), json!(3)]);
        let back = axis_object(&array, &XYZW[..3]).unwrap();
        assert_eq!(Value::Object(back), json!({"x": 1, "y": 2, "z": 3}));
        let partial = json!({"z": 3});
        assert_eq!(axis_array(partial.as_object().unwrap(), &XYZW[..3]), None);
        let odd = json!({"q": 3});
        let problem = in_axis_order(odd.as_object().unwrap(), &XYZW[..3]).unwrap_err();
        assert_eq!(
            problem.message(&XYZW[..3]),
            "unknown axis `q`; expected x, y, z"
        );
    }
}
