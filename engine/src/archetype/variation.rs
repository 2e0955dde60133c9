//! Spawn-time variation: `{"$range": [low, high]}` and `{"$pick": [a, b, ..]}` in component
//! values, rolled per spawned entity from the library's [`SpawnRng`].
//!
//! A variation stands for a whole value (at any depth of a component, list items included). A
//! `$range` in a place of an integer type rolls a whole number in `low..=high`; in any other
//! number place, a number in `[low, high]`. A `$pick` rolls one of its values, each as likely.
//!
//! Compiled once ([`Varied`]) so that spawning stays close to spawning a fixed value: a
//! component's outcomes (each pick's values, each whole number of a range) are decoded to typed
//! values the first time it is spawned, and a spawn clones one. A range of fractional numbers
//! rolls one of evenly spaced values from its low end to its high end, both included: 256 of
//! them when it is the component's only variation; when a component has several, they share
//! that budget ([`MAX_OUTCOMES`] outcomes per component, e.g. 16 steps each for two ranges). A
//! component whose picks and whole-number ranges alone have more outcomes than that is decoded
//! per spawn instead, from its value with the rolls put in (exact, and ~10× slower). An entity
//! whose varied components have at most [`MAX_VARIANT_TEMPLATES`] combinations of outcomes
//! together gets a spawn template per combination ([`Variants`]), so a spawn clones one as a
//! fixed entity's spawn does; with more, the rolled values are written in place. The
//! archetype's own value (what scenes compare against and what a scene entry without changes
//! loads as) is the first outcome: each `$pick`'s first value, each `$range`'s low end.
//!
//! Inheritance treats a variation like a value: a child's value replaces it, and `$add` or `$mul`
//! apply to both ends of a range or to each value of a pick. Hot reload leaves the places a
//! variation rolls alone on live entities (they keep what they rolled); later spawns roll from
//! the new version.

use std::sync::OnceLock;

use serde_json::{Map, Number, Value};

use crate::archetype::compiled::NodeTemplate;
use crate::archetype::file::{keys, kind_of};
use crate::archetype::reference_context::{ReferenceContext, ReferenceTargets};
use crate::archetype::spawn_rng::SpawnRng;
use crate::archetype::value_merge::ValueShapes;
use crate::component::{ComponentOps, TypedValue, ValueError};
use crate::json::{FieldPath, PathSegment};

/// At most this many outcomes of one component are decoded (once, when first spawned).
pub(super) const MAX_OUTCOMES: u64 = 256;

/// Whether `key` writes a variation.
pub(super) fn is_key(key: &str) -> bool {
    keys::VARIATIONS.contains(&key)
}

/// Whether `value` is a variation object (`{"$range": ..}` or `{"$pick": ..}`, alone).
pub(super) fn is_variation(value: &Value) -> bool {
    match value {
        Value::Object(object) => object.len() == 1 && object.keys().all(|key| is_key(key)),
        _ => false,
    }
}

/// Whether `value` holds a variation anywhere.
pub(super) fn contains_variation(value: &Value) -> bool {
    match value {
        Value::Object(object) => is_variation(value) || object.values().any(contains_variation),
        Value::Array(items) => items.iter().any(contains_variation),
        _ => false,
    }
}

/// What is wrong with the variation `key` of `object` as written (operand `operand`), if
/// anything: the message, and whether it is about the key rather than the value.
pub(super) fn written_problem(
    object: &Map<String, Value>,
    key: &str,
    operand: &Value,
) -> Option<(bool, String)> {
    if let Some(other) = object.keys().find(|other| *other != key) {
        return Some((
            true,
            format!("`{key}` stands for the whole value, so it cannot be beside `{other}`"),
        ));
    }
    if key == keys::RANGE {
        let bounds = operand
            .as_array()
            .filter(|items| items.len() == 2)
            .and_then(|items| Some((finite(&items[0])?, finite(&items[1])?)));
        let Some((low, high)) = bounds else {
            return Some((
                false,
                format!(
                    "`$range` takes two numbers, the lowest and the highest (`[8, 12]`), found {}",
                    shape_of(operand)
                ),
            ));
        };
        // The numbers as written (`1e308`, not its 309 digits).
        let (first, second) = (&operand[0], &operand[1]);
        if !(high - low).is_finite() {
            return Some((
                false,
                format!("`$range` from {first} to {second} is too wide to roll a number in"),
            ));
        }
        if low > high {
            return Some((
                false,
                format!("`$range` goes from its lowest to its highest number, but {first} is above {second}; write `[{second}, {first}]`"),
            ));
        }
        return None;
    }
    match operand.as_array() {
        Some(items) if !items.is_empty() => None,
        _ => Some((
            false,
            format!(
                "`$pick` takes a list of the values to pick one from, found {}",
                shape_of(operand)
            ),
        )),
    }
}

fn finite(value: &Value) -> Option<f64> {
    value.as_f64().filter(|x| x.is_finite())
}

fn shape_of(value: &Value) -> String {
    match value.as_array() {
        Some(items) if items.is_empty() => "an empty list".to_string(),
        Some(items) => format!("a list of {} values", items.len()),
        None => kind_of(value).to_string(),
    }
}

/// `operation` applied to each outcome of the variation `target` (both ends of a range, each
/// value of a pick); `None` if `target` is no variation.
pub(super) fn map_outcomes<E>(
    target: &Value,
    operation: impl Fn(&Value) -> Result<Value, E>,
) -> Option<Result<Value, E>> {
    if !is_variation(target) {
        return None;
    }
    let (key, operand) = target.as_object()?.iter().next()?;
    let items = operand.as_array()?;
    let mapped: Result<Vec<Value>, E> = items.iter().map(operation).collect();
    Some(mapped.map(|items| {
        let mut object = Map::new();
        object.insert(key.clone(), Value::Array(items));
        Value::Object(object)
    }))
}

/// One place of a component that varies.
#[derive(Clone, Debug, PartialEq)]
struct Site {
    path: Vec<PathSegment>,
    kind: SiteKind,
}

#[derive(Clone, Debug, PartialEq)]
enum SiteKind {
    Pick(Vec<Value>),
    Whole(i64, i64),
    /// Low, high, and the evenly spaced steps rolled from (0: any number, decoded per spawn).
    Fraction(f64, f64, u64),
}

impl SiteKind {
    /// How many outcomes, if countable.
    fn count(&self) -> Option<u64> {
        match self {
            SiteKind::Pick(values) => Some(values.len() as u64),
            SiteKind::Whole(low, high) => high.abs_diff(*low).checked_add(1),
            SiteKind::Fraction(.., 0) => None,
            SiteKind::Fraction(.., steps) => Some(*steps),
        }
    }

    /// Outcome `k` of a countable site.
    fn outcome(&self, k: u64) -> Value {
        match self {
            SiteKind::Pick(values) => values.get(k as usize).cloned().unwrap_or(Value::Null),
            SiteKind::Whole(low, _) => Value::from(low.wrapping_add(k as i64)),
            SiteKind::Fraction(low, high, steps) if *steps > 1 => {
                number(low + (high - low) * (k as f64 / (*steps - 1) as f64))
            }
            SiteKind::Fraction(low, ..) => number(*low),
        }
    }

    fn first(&self) -> Value {
        self.outcome(0)
    }

    fn last(&self) -> Value {
        match self {
            SiteKind::Pick(values) => values.last().cloned().unwrap_or(Value::Null),
            SiteKind::Whole(_, high) => Value::from(*high),
            SiteKind::Fraction(_, high, _) => number(*high),
        }
    }

    fn roll(&self, rng: &SpawnRng) -> Value {
        match (self, self.count()) {
            (SiteKind::Whole(low, high), _) => Value::from(rng.int_in(*low, *high)),
            (SiteKind::Fraction(low, high, _), None) => number(rng.float_in(*low, *high)),
            (_, Some(count)) => self.outcome(rng.below(count.max(1))),
            (SiteKind::Pick(_), None) => Value::Null,
        }
    }
}

fn number(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The variations of one component value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Spec {
    sites: Vec<Site>,
}

/// A variation that cannot be rolled in its place.
#[derive(Debug)]
pub(crate) struct SpecProblem {
    pub field: FieldPath,
    pub message: String,
}

impl Spec {
    /// The variations of `value` (of `component`), `None` if it has none. Operands were checked
    /// when the file was read; a range of whole numbers holding none is a problem here.
    pub fn find(
        value: &Value,
        component: &str,
        shapes: &dyn ValueShapes,
    ) -> Result<Option<Spec>, SpecProblem> {
        if !contains_variation(value) {
            return Ok(None);
        }
        let mut sites = Vec::new();
        let mut path = Vec::new();
        collect(value, component, shapes, &mut path, &mut sites)?;
        let mut spec = Spec { sites };
        spec.plan_steps();
        Ok(Some(spec))
    }

    /// `template` with `outcomes` (one per site) put in place of its variations.
    fn filled(&self, template: &Value, outcomes: impl IntoIterator<Item = Value>) -> Value {
        let mut value = template.clone();
        for (site, outcome) in self.sites.iter().zip(outcomes) {
            if let Some(place) = place_mut(&mut value, &site.path) {
                *place = outcome;
            }
        }
        value
    }

    /// The archetype's own value: every variation's first outcome.
    pub fn first(&self, template: &Value) -> Value {
        self.filled(template, self.sites.iter().map(|site| site.kind.first()))
    }

    /// A freshly rolled value.
    pub fn rolled(&self, template: &Value, rng: &SpawnRng) -> Value {
        self.filled(template, self.sites.iter().map(|site| site.kind.roll(rng)))
    }

    /// Gives each fractional range its steps, sharing [`MAX_OUTCOMES`] with the other
    /// variations; if picks and whole-number ranges alone have more outcomes than that, every
    /// range stays exact (decoded per spawn).
    fn plan_steps(&mut self) {
        let fractions = self
            .sites
            .iter()
            .filter(|site| matches!(site.kind, SiteKind::Fraction(..)))
            .count() as u32;
        let mut others: u64 = 1;
        for site in &self.sites {
            if !matches!(site.kind, SiteKind::Fraction(..)) {
                others = others.saturating_mul(site.kind.count().unwrap_or(u64::MAX));
            }
        }
        let budget = MAX_OUTCOMES / others.max(1);
        let mut steps = 0;
        if fractions > 0 && budget >= 2 {
            steps = (1..=budget)
                .rev()
                .find(|s| {
                    s.checked_pow(fractions)
                        .is_some_and(|total| total <= budget)
                })
                .unwrap_or(0);
        }
        for site in &mut self.sites {
            if let SiteKind::Fraction(low, high, n) = &mut site.kind {
                // Fewer than two steps cannot span a range: such a component is decoded per
                // spawn, its ranges exact (a range of one number has one outcome either way).
                *n = match (steps, *low == *high) {
                    (_, true) => 1,
                    (0 | 1, false) => 0,
                    (steps, false) => steps,
                };
            }
        }
    }

    /// How many outcomes the value has, when they are few enough to decode each once.
    fn enumerable(&self) -> Option<usize> {
        let mut total: u64 = 1;
        for site in &self.sites {
            total = total.checked_mul(site.kind.count()?)?;
        }
        (total <= MAX_OUTCOMES).then_some(total as usize)
    }

    /// Outcome number `index` (mixed radix, the first site most significant).
    fn outcome(&self, template: &Value, mut index: u64) -> Value {
        let mut outcomes = vec![Value::Null; self.sites.len()];
        for (site, slot) in self.sites.iter().zip(&mut outcomes).rev() {
            let count = site.kind.count().unwrap_or(1).max(1);
            *slot = site.kind.outcome(index % count);
            index /= count;
        }
        self.filled(template, outcomes)
    }

    /// Values that between them try every outcome of a site that cannot be enumerated: each
    /// site's ends and picks in turn, the others at their first outcome.
    pub fn probes(&self, template: &Value) -> Vec<Value> {
        let mut probes = Vec::new();
        for (i, site) in self.sites.iter().enumerate() {
            let mut tries = match &site.kind {
                SiteKind::Pick(values) => values.clone(),
                _ => vec![site.kind.first(), site.kind.last()],
            };
            for outcome in tries.drain(..) {
                let outcomes = self
                    .sites
                    .iter()
                    .enumerate()
                    .map(|(j, other)| match i == j {
                        true => outcome.clone(),
                        false => other.kind.first(),
                    });
                probes.push(self.filled(template, outcomes.collect::<Vec<_>>()));
            }
        }
        probes
    }

    /// The places that vary, as an object with `true` at each (for leaving them out of hot-reload
    /// patches; a place inside a list marks the whole list, which patches replace whole).
    pub fn mask(&self) -> Value {
        // A variation of the whole value (or of a list item at the top) leaves nothing to patch.
        if self
            .sites
            .iter()
            .any(|site| !matches!(site.path.first(), Some(PathSegment::Key(_))))
        {
            return Value::Bool(true);
        }
        let mut mask = Value::Object(Map::new());
        for site in &self.sites {
            let mut at = &mut mask;
            let keys: Vec<&String> = site
                .path
                .iter()
                .map_while(|segment| match segment {
                    PathSegment::Key(key) => Some(key),
                    PathSegment::Index(_) => None,
                })
                .collect();
            for (i, key) in keys.iter().enumerate() {
                let Value::Object(object) = at else { break };
                let last = i + 1 == keys.len();
                at = object.entry((*key).clone()).or_insert_with(|| match last {
                    true => Value::Bool(true),
                    false => Value::Object(Map::new()),
                });
            }
        }
        mask
    }
}

fn collect(
    value: &Value,
    component: &str,
    shapes: &dyn ValueShapes,
    path: &mut Vec<PathSegment>,
    sites: &mut Vec<Site>,
) -> Result<(), SpecProblem> {
    if is_variation(value) {
        let Some((key, operand)) = value.as_object().and_then(|o| o.iter().next()) else {
            return Ok(());
        };
        let items = operand.as_array().cloned().unwrap_or_default();
        let kind = if key == keys::PICK {
            SiteKind::Pick(items)
        } else {
            let bound = |i: usize| items.get(i).and_then(Value::as_f64).unwrap_or(0.0);
            let (low, high) = (bound(0), bound(1));
            if shapes.is_integer(component, path) {
                let exact = |i: usize| items.get(i).and_then(Value::as_i64);
                if let (Some(low), Some(high)) = (exact(0), exact(1)) {
                    SiteKind::Whole(low, high)
                } else {
                    let (whole_low, whole_high) = (low.ceil(), high.floor());
                    let fits = |x: f64| x >= -(2f64.powi(63)) && x < 2f64.powi(63);
                    if whole_low > whole_high || !fits(whole_low) || !fits(whole_high) {
                        let field = FieldPath(path.clone());
                        let place = match field.is_empty() {
                            true => format!("`{component}`"),
                            false => format!("`{component}.{field}`"),
                        };
                        let (first, second) = (&operand[0], &operand[1]);
                        return Err(SpecProblem {
                            message: format!("`$range` from {first} to {second} holds no whole number that fits, and {place} takes whole numbers"),
                            field,
                        });
                    }
                    SiteKind::Whole(whole_low as i64, whole_high as i64)
                }
            } else {
                SiteKind::Fraction(low, high, 0)
            }
        };
        sites.push(Site {
            path: path.clone(),
            kind,
        });
        return Ok(());
    }
    match value {
        Value::Object(object) => {
            for (key, member) in object {
                path.push(PathSegment::Key(key.clone()));
                let found = collect(member, component, shapes, path, sites);
                path.pop();
                found?;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathSegment::Index(i));
                let found = collect(item, component, shapes, path, sites);
                path.pop();
                found?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn place_mut<'v>(value: &'v mut Value, path: &[PathSegment]) -> Option<&'v mut Value> {
    let mut at = value;
    for segment in path {
        at = match (at, segment) {
            (Value::Object(object), PathSegment::Key(key)) => object.get_mut(key)?,
            (Value::Array(items), PathSegment::Index(i)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

/// A component of a compiled entity whose value varies: what a spawn clones or decodes.
pub(crate) struct Varied {
    spec: Spec,
    /// The value with its variations in place.
    template: Value,
    /// Outcomes per site (mixed radix, the first site most significant); empty when every spawn
    /// decodes.
    counts: Vec<u64>,
    /// Every outcome, decoded the first time one is rolled (`None` for one that does not
    /// decode: rolling it decodes again, for the error).
    outcomes: OnceLock<Vec<Option<TypedValue>>>,
    /// What `ArchetypeRef` and `AssetPath` fields were read against when the archetype
    /// compiled, so outcomes decoded later hold the same (an `ArchetypeRef` its ID).
    references: Option<ReferenceTargets>,
}

impl Varied {
    /// Compiles the variations `spec` of `template` for the component of `ops`, checking what
    /// each variation can roll (each value of a pick, both ends of a range, the other
    /// variations at their first outcome). The first error found is returned (its path is
    /// inside the component).
    pub fn compile(
        spec: Spec,
        template: &Value,
        ops: &dyn ComponentOps,
    ) -> Result<Varied, ValueError> {
        for value in spec.probes(template) {
            ops.decode(&value, &mut Vec::new())?;
        }
        let counts = match spec.enumerable() {
            Some(_) => spec
                .sites
                .iter()
                .map(|site| site.kind.count().unwrap_or(1).max(1))
                .collect(),
            None => Vec::new(),
        };
        Ok(Varied {
            spec,
            template: template.clone(),
            counts,
            outcomes: OnceLock::new(),
            references: ReferenceContext::current().map(|context| context.targets()),
        })
    }

    /// Decodes an outcome as the archetype's values were read.
    fn decode(&self, ops: &dyn ComponentOps, value: &Value) -> Result<TypedValue, ValueError> {
        let decode = || ops.decode(value, &mut Vec::new());
        match &self.references {
            Some(targets) => targets.context().install(decode),
            None => decode(),
        }
    }

    /// The places that vary (see [`Spec::mask`]).
    pub fn mask(&self) -> Value {
        self.spec.mask()
    }

    /// How many outcomes the component has, when each is decoded once (else `None`).
    pub fn outcome_count(&self) -> Option<u64> {
        (!self.counts.is_empty()).then(|| self.counts.iter().product())
    }

    /// Every outcome, decoded (the first call decodes them), in the order of
    /// [`outcome_count`](Self::outcome_count); `None` when they are decoded per spawn.
    pub fn outcomes(&self, ops: &dyn ComponentOps) -> Option<&[Option<TypedValue>]> {
        let total = self.outcome_count()?;
        let outcomes = self.outcomes.get_or_init(|| {
            let decode_all = || {
                (0..total)
                    .map(|i| {
                        ops.decode(&self.spec.outcome(&self.template, i), &mut Vec::new())
                            .ok()
                    })
                    .collect()
            };
            match &self.references {
                Some(targets) => targets.context().install(decode_all),
                None => decode_all(),
            }
        });
        Some(outcomes)
    }

    /// A value for one spawned entity: one of the outcomes decoded once, or one decoded now.
    #[inline]
    pub fn roll(&self, ops: &dyn ComponentOps, rng: &SpawnRng) -> Result<Rolled<'_>, ValueError> {
        if self.counts.is_empty() {
            let value = self.spec.rolled(&self.template, rng);
            return self.decode(ops, &value).map(Rolled::Decoded);
        }
        let mut index = 0u64;
        for count in &self.counts {
            index = index * count + rng.below(*count);
        }
        let outcomes = self.outcomes(ops).unwrap_or_default();
        match outcomes.get(index as usize) {
            Some(Some(outcome)) => Ok(Rolled::Compiled(outcome)),
            _ => self
                .decode(ops, &self.spec.outcome(&self.template, index))
                .map(Rolled::Decoded),
        }
    }
}

/// At most this many templates are kept for one entity whose components vary (one per
/// combination of their outcomes); with more, spawns write the rolled values in place.
pub(super) const MAX_VARIANT_TEMPLATES: u64 = 512;

/// The templates of an entity whose varied components have few outcomes together.
pub(crate) struct Variants {
    /// Outcomes of each varied component, in the entity's order.
    pub counts: Vec<u64>,
    /// One per combination, built when first spawned (`None` if an outcome does not decode).
    pub(super) templates: OnceLock<Option<Vec<NodeTemplate>>>,
}

impl Variants {
    /// Templates for `varied`, if it has any and their combinations are few enough.
    pub fn plan<C>(varied: &[(C, Varied)]) -> Option<Variants> {
        if varied.is_empty() {
            return None;
        }
        let counts: Vec<u64> = varied
            .iter()
            .map(|(_, varied)| varied.outcome_count())
            .collect::<Option<_>>()?;
        let total = counts
            .iter()
            .try_fold(1u64, |total, count| total.checked_mul(*count))?;
        (total <= MAX_VARIANT_TEMPLATES).then(|| Variants {
            counts,
            templates: OnceLock::new(),
        })
    }
}

/// A rolled value: borrowed from the outcomes compiled up front, or decoded for this spawn.
pub(crate) enum Rolled<'a> {
    Compiled(&'a TypedValue),
    Decoded(TypedValue),
}

impl Rolled<'_> {
    pub fn typed(&self) -> &TypedValue {
        match self {
            Rolled::Compiled(value) => value,
            Rolled::Decoded(value) => value,
        }
    }
}

/// `value` with its variations rolled (for values decoded per spawn: components holding `#`
/// references, spawn-time overrides); `value` itself when it has none.
pub(crate) fn rolled_value<'v>(
    value: &'v Value,
    component: &str,
    shapes: &dyn ValueShapes,
    rng: &SpawnRng,
) -> std::borrow::Cow<'v, Value> {
    match Spec::find(value, component, shapes) {
        Ok(Some(spec)) => std::borrow::Cow::Owned(spec.rolled(value, rng)),
        _ => std::borrow::Cow::Borrowed(value),
    }
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Integers;
    impl ValueShapes for Integers {
        fn is_enum(&self, _: &str, _: &[PathSegment]) -> bool {
            false
        }
        fn tag(&self, _: &str, _: &[PathSegment]) -> Option<&'static str> {
            None
        }
        fn is_integer(&self, _: &str, path: &[PathSegment]) -> bool {
            path.last() == Some(&PathSegment::Key("hp".into()))
        }
    }

    #[test]
    fn sites_outcomes_and_masks() {
        let value = json!({ "hp": { "$range": [8.5, 12] }, "speed": { "$range": [1, 2] }, "tags": ["a", { "$pick": ["b", "c"] }] });
        let spec = Spec::find(&value, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(
            spec.first(&value),
            json!({ "hp": 9, "speed": 1.0, "tags": ["a", "b"] })
        );
        // 4 whole numbers × 2 picks leave 256 / 8 = 32 steps for the fractional range.
        assert_eq!(spec.enumerable(), Some(256));
        assert_eq!(
            spec.outcome(&value, 255),
            json!({ "hp": 12, "speed": 2.0, "tags": ["a", "c"] })
        );
        assert_eq!(
            spec.outcome(&value, 2),
            json!({ "hp": 9, "speed": 1.0 + 1.0 / 31.0, "tags": ["a", "b"] })
        );
        assert_eq!(
            spec.mask(),
            json!({ "hp": true, "speed": true, "tags": true })
        );
        let rng = SpawnRng::new(3);
        for _ in 0..50 {
            let rolled = spec.rolled(&value, &rng);
            let hp = rolled["hp"].as_i64().unwrap();
            assert!((9..=12).contains(&hp));
            let speed = rolled["speed"].as_f64().unwrap();
            assert!((1.0..=2.0).contains(&speed));
        }
        let whole = json!({ "hp": { "$range": [1, 3] }, "kind": { "$pick": ["x", "y"] } });
        let spec = Spec::find(&whole, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(spec.enumerable(), Some(6));
        // Too many outcomes of whole numbers: every spawn decodes, ranges exact.
        let many = json!({ "hp": { "$range": [1, 1000] }, "speed": { "$range": [0, 1] } });
        let spec = Spec::find(&many, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(spec.enumerable(), None);
        // Two fractional ranges share the budget: 16 steps each.
        let two = json!({ "a": { "$range": [0, 1] }, "b": { "$range": [0, 1] } });
        let spec = Spec::find(&two, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(spec.enumerable(), Some(256));
        assert_eq!(
            spec.outcome(&two, 17),
            json!({ "a": 1.0 / 15.0, "b": 1.0 / 15.0 })
        );
        let whole = json!({ "hp": { "$range": [1, 3] }, "kind": { "$pick": ["x", "y"] } });
        let spec = Spec::find(&whole, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(spec.outcome(&whole, 5), json!({ "hp": 3, "kind": "y" }));
        assert_eq!(spec.outcome(&whole, 1), json!({ "hp": 1, "kind": "y" }));
        let empty = json!({ "hp": { "$range": [0.2, 0.8] } });
        let problem = Spec::find(&empty, "Stats", &Integers).unwrap_err();
        assert_eq!(
            problem.message,
            "`$range` from 0.2 to 0.8 holds no whole number that fits, and `Stats.hp` takes whole numbers"
        );
    }

    #[test]
    fn written_problems() {
        let check = |key: &str, value: Value| {
            let object = value.as_object().unwrap().clone();
            written_problem(&object, key, &object[key]).map(|(_, message)| message)
        };
        assert_eq!(check("$range", json!({ "$range": [1, 2] })), None);
        assert_eq!(
            check("$range", json!({ "$range": [1, 2, 3] })).unwrap(),
            "`$range` takes two numbers, the lowest and the highest (`[8, 12]`), found a list of 3 values"
        );
        assert_eq!(
            check("$range", json!({ "$range": [12, 8] })).unwrap(),
            "`$range` goes from its lowest to its highest number, but 12 is above 8; write `[8, 12]`"
        );
        assert_eq!(
            check("$range", json!({ "$range": [-1e308, 1e308] })).unwrap(),
            "`$range` from -1e+308 to 1e+308 is too wide to roll a number in"
        );
        assert_eq!(
            check("$pick", json!({ "$pick": [] })).unwrap(),
            "`$pick` takes a list of the values to pick one from, found an empty list"
        );
        assert_eq!(
            check("$pick", json!({ "$pick": [1], "$add": 2 })).unwrap(),
            "`$pick` stands for the whole value, so it cannot be beside `$add`"
        );
    }
}
