//! Spawn-time variation: `{"$range": [low, high]}` and `{"$pick": [a, b, ..]}` in component
//! values, rolled per spawned entity from the library's [`SpawnRng`].
//!
//! A variation stands for a whole value (at any depth of a component, list items included). A
//! `$range` in a place of an integer type rolls a whole number in `low..=high`; in any other
//! number place, a number in `[low, high]`. A `$pick` rolls one of its values, each as likely.
//!
//! Compiled once ([`Varied`]) so that spawning stays close to spawning a fixed value. The
//! archetype's own value (what scenes compare against and what a scene entry without changes
//! loads as) is the first outcome: each `$pick`'s first value, each `$range`'s low end; the
//! entity's spawn template holds it. A component's outcomes (each pick's values, each whole
//! number of a range) are decoded to typed values the first time it is spawned, kept side by
//! side in one list ([`TypedList`]), and a spawn clones the template with the rolled outcome
//! in place of the first ([`SpawnTemplate::spawn_replacing`]), as fast as a fixed entity's
//! spawn (an entity of more than four varied components, or of values too big for such a
//! template, is spawned and then has its rolled values written in place). A range of fractional numbers rolls one of evenly spaced values from its low end to
//! its high end, both included: 256 of them when it is the component's only variation; when a
//! component has several, they share that budget ([`MAX_OUTCOMES`] outcomes per component, e.g.
//! 16 steps each for two ranges), and a big component has fewer ([`MAX_OUTCOME_NODES`] values
//! in all its outcomes together). A component whose picks and whole-number ranges alone have
//! more outcomes than that is decoded per spawn instead, from its value with the rolls put in
//! (exact, ~10× slower, and independent of how long its picks are).
//!
//! **Memory.** On top of a fixed archetype's, each varied component of type `T` costs its
//! variations as written (the value with each first outcome, [`Spec`], plus each pick's values:
//! about what serde_json holds of the written value) and, once spawned, its kept outcomes:
//! `outcomes × (size_of::<T>() + the heap a T owns)`, where `outcomes` is at most
//! `min(256, 4096 / values in the component)` (the product of its variations' counts, 0 when
//! it decodes per spawn). A `Speed { value: f32 }` with a `$range` costs 256 × 4 bytes once
//! spawned; there is no template per combination of outcomes.
//!
//! **Time.** Loading checks every value a variation can roll by decoding the component with it
//! in place ([`Spec::check`]), in rounds: as many decodes as the longest variation has values,
//! each of the whole component, plus the values themselves. A component for which that would
//! decode more than [`MAX_CHECKED_NODES`] values is refused. Making each outcome, each roll and
//! each try starts from one copy of the value with the first outcomes in place, never from the
//! written value with its lists.
//!
//! Inheritance treats a variation like a value: a child's value replaces it, and `$add` or `$mul`
//! apply to both ends of a range or to each value of a pick. Hot reload leaves the places a
//! variation rolls alone on live entities (they keep what they rolled); later spawns roll from
//! the new version.

use std::any::Any;
use std::sync::OnceLock;

use hecs::{ColumnBatchBuilder, Entity, EntityBuilder, World};
use serde_json::{Map, Number, Value};

use crate::archetype::file::{keys, kind_of};
use crate::archetype::reference_context::{ReferenceContext, ReferenceTargets};
use crate::archetype::spawn_rng::SpawnRng;
use crate::archetype::value_merge::ValueShapes;
#[cfg(doc)]
use crate::component::SpawnTemplate;
use crate::component::{ComponentOps, TypedList, TypedValue, ValueError};
use crate::json::{FieldPath, PathSegment};

/// At most this many outcomes of one component are kept decoded (once, when first spawned).
pub(super) const MAX_OUTCOMES: u64 = 256;

/// At most this many values (JSON nodes: each object, list, number, string...) are in the
/// outcomes of one component kept decoded, together: a component of more than 16 values keeps
/// fewer than [`MAX_OUTCOMES`].
pub(super) const MAX_OUTCOME_NODES: u64 = 4096;

/// The most values (JSON nodes) checking a component's variations may decode, all tries
/// together ([`Spec::check`]): about a second.
pub(super) const MAX_CHECKED_NODES: u64 = 1 << 24;

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

    /// How many values checking the site tries: each value of a pick, both ends of a range
    /// (one for a range of one number).
    fn tries(&self) -> usize {
        match self {
            SiteKind::Pick(values) => values.len(),
            SiteKind::Whole(low, high) => 1 + usize::from(low != high),
            SiteKind::Fraction(low, high, _) => 1 + usize::from(low != high),
        }
    }

    /// Try `k` (of [`tries`](Self::tries)): value `k` of a pick, a range's low end then its high
    /// end.
    fn tried(&self, k: usize) -> Value {
        match self {
            SiteKind::Pick(values) => values.get(k).cloned().unwrap_or(Value::Null),
            SiteKind::Whole(low, high) => Value::from(if k == 0 { *low } else { *high }),
            SiteKind::Fraction(low, high, _) => number(if k == 0 { *low } else { *high }),
        }
    }

    /// How many values (JSON nodes) the tries other than the first hold together.
    fn tried_nodes(&self) -> u64 {
        match self {
            SiteKind::Pick(values) => values.iter().skip(1).map(nodes).sum(),
            _ => self.tries().saturating_sub(1) as u64,
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

/// How many values (JSON nodes) `value` is made of: itself and everything inside it.
fn nodes(value: &Value) -> u64 {
    match value {
        Value::Object(object) => 1 + object.values().map(nodes).sum::<u64>(),
        Value::Array(items) => 1 + items.iter().map(nodes).sum::<u64>(),
        _ => 1,
    }
}

/// The variations of one component value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Spec {
    sites: Vec<Site>,
    /// The value with each variation's first outcome in its place (the archetype's own
    /// value): what every outcome and every roll is made from, so none of them copies the
    /// lists of the picks.
    base: Value,
    /// How many values (JSON nodes) `base` is made of.
    nodes: u64,
}

/// A variation that cannot be rolled in its place.
#[derive(Debug)]
pub(crate) struct SpecProblem {
    pub field: FieldPath,
    pub message: String,
}

impl Spec {
    /// The variations of `value` (of `component`), `None` if it has none. Operands were checked
    /// when the file was read; a range of whole numbers holding none is a problem here, and so
    /// is a value too big to check with all its variations ([`MAX_CHECKED_NODES`]).
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
        let base = collect(value, component, shapes, &mut path, &mut sites)?;
        let nodes = self::nodes(&base);
        let mut spec = Spec { sites, base, nodes };
        spec.check_size(component)?;
        spec.plan_steps();
        Ok(Some(spec))
    }

    /// A problem if checking every value the variations can roll ([`check`](Self::check))
    /// would decode more than [`MAX_CHECKED_NODES`] values.
    fn check_size(&self, component: &str) -> Result<(), SpecProblem> {
        let rounds = self.sites.iter().map(|site| site.kind.tries()).max();
        let rounds = rounds.unwrap_or(1).saturating_sub(1) as u64;
        let tried: u64 = self.sites.iter().map(|site| site.kind.tried_nodes()).sum();
        let checked = rounds.saturating_mul(self.nodes).saturating_add(tried);
        if checked <= MAX_CHECKED_NODES {
            return Ok(());
        }
        let longest = self.sites.iter().max_by_key(|site| site.kind.tries());
        let field = FieldPath(longest.map(|site| site.path.clone()).unwrap_or_default());
        Err(SpecProblem {
            message: format!(
                "`{component}` is too big to check with its variations: each value a variation can roll is checked in the whole component, and {} values in a component of {} parts are more than {MAX_CHECKED_NODES} parts to read; give the longest `$pick` a component of its own, or shorten it",
                rounds + 1,
                self.nodes
            ),
            field,
        })
    }

    /// `self.base` with `outcomes` (one per site) put in place of its variations.
    fn filled(&self, outcomes: impl IntoIterator<Item = Value>) -> Value {
        let mut value = self.base.clone();
        for (site, outcome) in self.sites.iter().zip(outcomes) {
            if let Some(place) = place_mut(&mut value, &site.path) {
                *place = outcome;
            }
        }
        value
    }

    /// The archetype's own value: every variation's first outcome.
    pub fn first(&self) -> &Value {
        &self.base
    }

    /// A freshly rolled value.
    pub fn rolled(&self, rng: &SpawnRng) -> Value {
        self.filled(self.sites.iter().map(|site| site.kind.roll(rng)))
    }

    /// Gives each fractional range its steps, sharing the outcomes kept decoded
    /// ([`kept_outcomes`](Self::kept_outcomes)) with the other variations; if picks and
    /// whole-number ranges alone have more outcomes than that, every range stays exact (decoded
    /// per spawn).
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
        let budget = self.kept_outcomes() / others.max(1);
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

    /// How many outcomes of the value may be kept decoded: [`MAX_OUTCOMES`], fewer for a value
    /// so big that they would hold more than [`MAX_OUTCOME_NODES`] values together.
    fn kept_outcomes(&self) -> u64 {
        MAX_OUTCOMES.min(MAX_OUTCOME_NODES / self.nodes.max(1))
    }

    /// How many outcomes the value has, when they are few enough to keep decoded.
    fn enumerable(&self) -> Option<usize> {
        let mut total: u64 = 1;
        for site in &self.sites {
            total = total.checked_mul(site.kind.count()?)?;
        }
        (total <= self.kept_outcomes()).then_some(total as usize)
    }

    /// Outcome number `index` (mixed radix, the first site most significant).
    fn outcome(&self, mut index: u64) -> Value {
        let mut outcomes = vec![Value::Null; self.sites.len()];
        for (site, slot) in self.sites.iter().zip(&mut outcomes).rev() {
            let count = site.kind.count().unwrap_or(1).max(1);
            *slot = site.kind.outcome(index % count);
            index /= count;
        }
        self.filled(outcomes)
    }

    /// Calls `check` with values that between them try every value each variation can roll
    /// but its first: each value of a pick, the high end of a range. They are tried in rounds,
    /// round `k` putting every variation's value `k` in its place at once (a variation with no
    /// value `k` at its first), so a value with many variations is checked in as many rounds as
    /// its longest has values, not once per value of each. The value with every first outcome
    /// ([`first`](Self::first)) is the caller's to check. Stops at the first error, with the
    /// round it came in.
    ///
    /// One copy of the value is made; each round puts its values in their places in it.
    pub fn check<E>(
        &self,
        mut check: impl FnMut(&Value) -> Result<(), E>,
    ) -> Result<(), (E, usize)> {
        // The sites by how many values they try, most first: round `k` puts values in the
        // sites before the first with `k` tries, and puts back the first outcome of those with
        // exactly `k`.
        let mut order: Vec<usize> = (0..self.sites.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.sites[i].kind.tries()));
        let rounds = order.first().map_or(0, |&i| self.sites[i].kind.tries());
        let mut value = self.base.clone();
        let mut active = order.len();
        for k in 1..rounds {
            while active > 0 && self.sites[order[active - 1]].kind.tries() <= k {
                active -= 1;
                let site = &self.sites[order[active]];
                if let Some(place) = place_mut(&mut value, &site.path) {
                    *place = site.kind.first();
                }
            }
            for &i in &order[..active] {
                let site = &self.sites[i];
                if let Some(place) = place_mut(&mut value, &site.path) {
                    *place = site.kind.tried(k);
                }
            }
            check(&value).map_err(|error| (error, k))?;
        }
        Ok(())
    }

    /// Where the file writes the value round `round` of [`check`](Self::check) put in the
    /// variation holding `path` (a place in the component): the value of its `$pick`, or the
    /// end of its `$range`, and `path`'s place inside it. `None` when `path` is in no variation
    /// that round put a value in.
    pub fn written_at(&self, round: usize, path: &[PathSegment]) -> Option<FieldPath> {
        let site = self
            .sites
            .iter()
            .find(|site| path.starts_with(&site.path) && site.kind.tries() > round)?;
        let key = match site.kind {
            SiteKind::Pick(_) => keys::PICK,
            _ => keys::RANGE,
        };
        let mut written = site.path.clone();
        written.push(PathSegment::Key(key.to_string()));
        written.push(PathSegment::Index(round));
        written.extend(path[site.path.len()..].iter().cloned());
        Some(FieldPath(written))
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

/// Finds the variations of `value` (at `path` in `component`) into `sites`, and returns the
/// value with each one's first outcome in its place.
fn collect(
    value: &Value,
    component: &str,
    shapes: &dyn ValueShapes,
    path: &mut Vec<PathSegment>,
    sites: &mut Vec<Site>,
) -> Result<Value, SpecProblem> {
    if is_variation(value) {
        let Some((key, operand)) = value.as_object().and_then(|o| o.iter().next()) else {
            return Ok(value.clone());
        };
        let kind = site_kind(key, operand, component, shapes, path)?;
        let first = kind.first();
        sites.push(Site {
            path: path.clone(),
            kind,
        });
        return Ok(first);
    }
    match value {
        Value::Object(object) => {
            let mut base = Map::new();
            for (key, member) in object {
                path.push(PathSegment::Key(key.clone()));
                let found = collect(member, component, shapes, path, sites);
                path.pop();
                base.insert(key.clone(), found?);
            }
            Ok(Value::Object(base))
        }
        Value::Array(items) => {
            let mut base = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                path.push(PathSegment::Index(i));
                let found = collect(item, component, shapes, path, sites);
                path.pop();
                base.push(found?);
            }
            Ok(Value::Array(base))
        }
        other => Ok(other.clone()),
    }
}

/// What the variation `key` (`$range` or `$pick`) with `operand`, at `path` in `component`,
/// rolls.
fn site_kind(
    key: &str,
    operand: &Value,
    component: &str,
    shapes: &dyn ValueShapes,
    path: &[PathSegment],
) -> Result<SiteKind, SpecProblem> {
    let items = operand.as_array().map(Vec::as_slice).unwrap_or_default();
    if key == keys::PICK {
        return Ok(SiteKind::Pick(items.to_vec()));
    }
    let bound = |i: usize| items.get(i).and_then(Value::as_f64).unwrap_or(0.0);
    let (low, high) = (bound(0), bound(1));
    if !shapes.is_integer(component, path) {
        return Ok(SiteKind::Fraction(low, high, 0));
    }
    let exact = |i: usize| items.get(i).and_then(Value::as_i64);
    if let (Some(low), Some(high)) = (exact(0), exact(1)) {
        return Ok(SiteKind::Whole(low, high));
    }
    let (whole_low, whole_high) = (low.ceil(), high.floor());
    let fits = |x: f64| x >= -(2f64.powi(63)) && x < 2f64.powi(63);
    if whole_low > whole_high || !fits(whole_low) || !fits(whole_high) {
        let field = FieldPath(path.to_vec());
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
    Ok(SiteKind::Whole(whole_low as i64, whole_high as i64))
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

/// A value a variation can roll that does not decode: the error, and where the file writes the
/// value rolled ([`Spec::written_at`]) when the error is inside it.
pub(crate) struct RollError {
    pub error: ValueError,
    pub written: Option<FieldPath>,
}

/// A component of a compiled entity whose value varies: what a spawn clones or decodes.
pub(crate) struct Varied {
    spec: Spec,
    /// Outcomes per site (mixed radix, the first site most significant); empty when every spawn
    /// decodes.
    counts: Vec<u64>,
    /// Every outcome, decoded the first time one is rolled (`None` if one does not decode:
    /// then every spawn decodes its own, for the error).
    outcomes: OnceLock<Option<Box<dyn TypedList>>>,
    /// What `ArchetypeRef` and `AssetPath` fields were read against when the archetype
    /// compiled, so outcomes decoded later hold the same (an `ArchetypeRef` its ID).
    references: Option<ReferenceTargets>,
}

impl Varied {
    /// Compiles the variations `spec` of a value of the component of `ops`, checking what each
    /// variation can roll ([`Spec::check`]; the value with every first outcome is the caller's
    /// to check). The first error found is returned (its path is inside the component), with
    /// where the file writes the value that gave it.
    pub fn compile(spec: Spec, ops: &dyn ComponentOps) -> Result<Varied, RollError> {
        let checked = spec.check(|value| ops.decode(value, &mut Vec::new()).map(drop));
        if let Err((error, round)) = checked {
            let written = spec.written_at(round, error.path.segments());
            return Err(RollError { error, written });
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
            counts,
            outcomes: OnceLock::new(),
            references: ReferenceContext::current().map(|context| context.targets()),
        })
    }

    /// The variations, for a component holding references, which rolls from them per spawn.
    pub fn into_spec(self) -> Spec {
        self.spec
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
    fn outcome_count(&self) -> Option<u64> {
        (!self.counts.is_empty()).then(|| self.counts.iter().product())
    }

    /// Every outcome, decoded (the first call decodes them), in the order of
    /// [`outcome_count`](Self::outcome_count); `None` when they are decoded per spawn.
    fn outcomes(&self, ops: &dyn ComponentOps) -> Option<&dyn TypedList> {
        let total = self.outcome_count()?;
        let outcomes = self.outcomes.get_or_init(|| {
            let decode_all = || {
                let mut values = (0..total).map(|i| self.spec.outcome(i));
                ops.decode_list(&mut values)
            };
            match &self.references {
                Some(targets) => targets.context().install(decode_all),
                None => decode_all(),
            }
        });
        outcomes.as_deref()
    }

    /// A value for one spawned entity: one of the outcomes decoded once, or one decoded now.
    #[inline]
    pub fn roll(&self, ops: &dyn ComponentOps, rng: &SpawnRng) -> Result<Rolled<'_>, ValueError> {
        if self.counts.is_empty() {
            let value = self.spec.rolled(rng);
            return self.decode(ops, &value).map(Rolled::Decoded);
        }
        let mut index = 0u64;
        for count in &self.counts {
            index = index * count + rng.below(*count);
        }
        match self.outcomes(ops) {
            Some(outcomes) => Ok(Rolled::Kept(outcomes, index as usize)),
            None => self
                .decode(ops, &self.spec.outcome(index))
                .map(Rolled::Decoded),
        }
    }

    /// How many outcomes are kept decoded now, and the bytes their list holds for them (none
    /// before the first roll, nor when every spawn decodes its own).
    #[cfg(test)]
    pub fn kept(&self) -> (usize, usize) {
        match self.outcomes.get() {
            Some(Some(outcomes)) => (outcomes.len(), outcomes.bytes()),
            _ => (0, 0),
        }
    }
}

/// A rolled value: one of the outcomes kept decoded, or one decoded for this spawn.
pub(crate) enum Rolled<'a> {
    /// Outcome `.1` of the kept outcomes `.0`.
    Kept(&'a dyn TypedList, usize),
    Decoded(TypedValue),
}

impl Rolled<'_> {
    /// The value, for a spawn template to clone (`None` only for an outcome past the end).
    #[inline]
    pub fn value(&self) -> Option<&(dyn Any + Send + Sync)> {
        match self {
            Rolled::Kept(outcomes, i) => outcomes.value(*i),
            Rolled::Decoded(value) => Some(&**value),
        }
    }

    /// Adds a clone of the value (of the component of `ops`) to a builder.
    pub fn add_to_builder(&self, ops: &dyn ComponentOps, builder: &mut EntityBuilder) {
        match self {
            Rolled::Kept(outcomes, i) => outcomes.add_to_builder(*i, builder),
            Rolled::Decoded(value) => ops.add_to_builder(value, builder),
        }
    }

    /// Appends a clone of the value (of the component of `ops`) to its column of `batch`.
    pub fn push_to_column(&self, ops: &dyn ComponentOps, batch: &mut ColumnBatchBuilder) {
        match self {
            Rolled::Kept(outcomes, i) => outcomes.push_to_column(*i, batch),
            Rolled::Decoded(value) => ops.fill_column(value, batch, 1),
        }
    }

    /// Overwrites the component (of `ops`) of `entity` with a clone of the value.
    #[inline]
    pub fn overwrite(&self, ops: &dyn ComponentOps, world: &mut World, entity: Entity) -> bool {
        match self {
            Rolled::Kept(outcomes, i) => outcomes.overwrite(*i, world, entity),
            Rolled::Decoded(value) => ops.overwrite_typed(world, entity, value),
        }
    }
}

/// `value` with its variations rolled (for spawn-time overrides, decoded per spawn); `value`
/// itself when it has none.
pub(crate) fn rolled_value<'v>(
    value: &'v Value,
    component: &str,
    shapes: &dyn ValueShapes,
    rng: &SpawnRng,
) -> std::borrow::Cow<'v, Value> {
    match Spec::find(value, component, shapes) {
        Ok(Some(spec)) => std::borrow::Cow::Owned(spec.rolled(rng)),
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
        fn default_at(&self, _: &str, _: &Value, _: &[PathSegment]) -> Option<Value> {
            None
        }
        fn axes(&self, _: &str, _: &[PathSegment]) -> Option<&'static [&'static str]> {
            None
        }
    }

    #[test]
    fn sites_outcomes_and_masks() {
        let value = json!({ "hp": { "$range": [8.5, 12] }, "speed": { "$range": [1, 2] }, "tags": ["a", { "$pick": ["b", "c"] }] });
        let spec = Spec::find(&value, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(
            *spec.first(),
            json!({ "hp": 9, "speed": 1.0, "tags": ["a", "b"] })
        );
        // 4 whole numbers × 2 picks leave 256 / 8 = 32 steps for the fractional range.
        assert_eq!(spec.enumerable(), Some(256));
        assert_eq!(
            spec.outcome(255),
            json!({ "hp": 12, "speed": 2.0, "tags": ["a", "c"] })
        );
        assert_eq!(
            spec.outcome(2),
            json!({ "hp": 9, "speed": 1.0 + 1.0 / 31.0, "tags": ["a", "b"] })
        );
        assert_eq!(
            spec.mask(),
            json!({ "hp": true, "speed": true, "tags": true })
        );
        let rng = SpawnRng::new(3);
        for _ in 0..50 {
            let rolled = spec.rolled(&rng);
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
            spec.outcome(17),
            json!({ "a": 1.0 / 15.0, "b": 1.0 / 15.0 })
        );
        let whole = json!({ "hp": { "$range": [1, 3] }, "kind": { "$pick": ["x", "y"] } });
        let spec = Spec::find(&whole, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(spec.outcome(5), json!({ "hp": 3, "kind": "y" }));
        assert_eq!(spec.outcome(1), json!({ "hp": 1, "kind": "y" }));
        let empty = json!({ "hp": { "$range": [0.2, 0.8] } });
        let problem = Spec::find(&empty, "Stats", &Integers).unwrap_err();
        assert_eq!(
            problem.message,
            "`$range` from 0.2 to 0.8 holds no whole number that fits, and `Stats.hp` takes whole numbers"
        );
    }

    #[test]
    fn checks_try_every_value_in_rounds_and_say_where_each_is_written() {
        let value = json!({ "hp": { "$range": [1, 3] }, "tags": [{ "$pick": ["a", "b", "c"] }, { "$pick": ["x"] }] });
        let spec = Spec::find(&value, "Stats", &Integers).unwrap().unwrap();
        let mut tried = Vec::new();
        let checked = spec.check(|value| {
            tried.push(value.clone());
            Ok::<(), ()>(())
        });
        assert_eq!(checked, Ok(()));
        // Round 1 puts every variation's second value in; round 2 the pick's third, the range
        // back at its low end.
        assert_eq!(
            tried,
            [
                json!({ "hp": 3, "tags": ["b", "x"] }),
                json!({ "hp": 1, "tags": ["c", "x"] }),
            ]
        );
        let refused = spec.check(|value| match value["tags"][0] == "c" {
            true => Err("c"),
            false => Ok(()),
        });
        assert_eq!(refused, Err(("c", 2)));
        let at = |round, path: &[PathSegment]| spec.written_at(round, path).map(|p| p.to_string());
        let tag = [PathSegment::Key("tags".into()), PathSegment::Index(0)];
        assert_eq!(at(2, &tag).as_deref(), Some("tags[0].$pick[2]"));
        assert_eq!(
            at(1, &[PathSegment::Key("hp".into())]).as_deref(),
            Some("hp.$range[1]")
        );
        // The range has no third value; the root is in no variation.
        assert_eq!(at(2, &[PathSegment::Key("hp".into())]), None);
        assert_eq!(at(1, &[]), None);
    }

    #[test]
    fn a_value_too_big_to_check_with_its_variations_is_a_problem() {
        let picks: Vec<u64> = (0..1000).collect();
        let big = json!({ "list": vec![0; 20_000], "hp": { "$pick": picks } });
        let problem = Spec::find(&big, "Stats", &Integers).unwrap_err();
        assert_eq!(problem.field.to_string(), "hp");
        // A component of 20,000 values with a pick of two, or 400,000 values picked from in a
        // small component, is checked.
        let two = json!({ "list": vec![0; 20_000], "hp": { "$pick": [1, 2] } });
        assert!(Spec::find(&two, "Stats", &Integers).is_ok());
        let picks: Vec<u64> = (0..400_000).collect();
        let long = json!({ "hp": { "$pick": picks } });
        let spec = Spec::find(&long, "Stats", &Integers).unwrap().unwrap();
        // Too many to keep decoded: every spawn decodes its own.
        assert_eq!(spec.enumerable(), None);
    }

    #[test]
    fn big_values_keep_fewer_outcomes() {
        // The object, `x`, the list and its 100 values: 4096 / 103 = 39 outcomes kept, all for
        // the one range.
        let value = json!({ "x": { "$range": [0, 1] }, "list": vec![0; 100] });
        let spec = Spec::find(&value, "Stats", &Integers).unwrap().unwrap();
        assert_eq!(spec.enumerable(), Some(39));
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
