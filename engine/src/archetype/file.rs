//! The archetype file format, version 1: the data model of one file and how it is read from JSON.
//!
//! This module only checks what one file can tell on its own (its keys, their kinds, component
//! names). Inheritance, children's archetypes and component values are checked by resolution.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

use crate::archetype::name::{check_local_name, check_name};
use crate::component::ComponentRegistry;
use crate::diagnostic::{quoted, Diagnostic, DiagnosticCode};
use crate::json::did_you_mean;
use crate::json::FieldPath;
use crate::json::SourceText;

/// The key names of the archetype file format.
pub mod keys {
    /// Editor support: the JSON Schema the file follows. Ignored by the loader.
    pub const SCHEMA: &str = "$schema";
    /// The file format version (an integer; `1` today).
    pub const FORMAT: &str = "format";
    /// `true`: the archetype can be extended but not spawned.
    pub const ABSTRACT: &str = "abstract";
    /// The names an archetype (at the top level) or a child (in a child entry) was formerly
    /// known by: a list. Scenes and files naming an old name load as the current one, with a
    /// warning; `archetool migrate` rewrites them.
    pub const FORMERLY: &str = "formerly";
    /// A parent archetype name, or a list of them.
    pub const EXTENDS: &str = "extends";
    /// Component name → value (`null` removes an inherited component).
    pub const COMPONENTS: &str = "components";
    /// Local child name → child entry (`null` removes an inherited child).
    pub const CHILDREN: &str = "children";
    /// In a child entry: the archetype the child is an instance of.
    pub const ARCHETYPE: &str = "archetype";
    /// Every key allowed at the top level of an archetype file, in canonical order.
    pub const TOP_LEVEL: [&str; 7] = [
        SCHEMA, FORMAT, ABSTRACT, FORMERLY, EXTENDS, COMPONENTS, CHILDREN,
    ];
    /// Every key allowed in a child entry, in canonical order.
    pub const CHILD: [&str; 4] = [ARCHETYPE, FORMERLY, COMPONENTS, CHILDREN];

    /// Operator, in a component value: appends a list's items to the inherited list.
    pub const APPEND: &str = "$append";
    /// Operator: puts a list's items before the inherited list's.
    pub const PREPEND: &str = "$prepend";
    /// Operator: appends each item the inherited list does not have yet.
    pub const UNION: &str = "$union";
    /// Operator: removes every item of the inherited list equal to one given (an object given
    /// removes every object holding its members).
    pub const REMOVE: &str = "$remove";
    /// Operator: adds a number to the inherited number.
    pub const ADD: &str = "$add";
    /// Operator: multiplies the inherited number.
    pub const MUL: &str = "$mul";
    /// Beside `$add` or `$mul`: how the result is made a whole number (`nearest`, `even`,
    /// `trunc`, `floor` or `ceil`).
    pub const ROUND: &str = "$round";
    /// The ways `$round` makes a result whole: to the nearest with halves away from zero, to the
    /// nearest with halves to even, toward zero, down, up.
    pub const ROUNDINGS: [&str; 5] = crate::component::Rounding::NAMES;
    /// Operator, in place of any value: the inherited value is replaced whole by the one given
    /// (objects are not merged into it).
    pub const REPLACE: &str = "$replace";
    /// Operator, on a list of records named by a `$key` field: merges each record given into
    /// the record with the same key (its operators apply to that record's values).
    pub const UPDATE: &str = "$update";
    /// Operator, on a list of records named by a `$key` field: each record given replaces the
    /// record with the same key, or is appended when there is none.
    pub const UPSERT: &str = "$upsert";
    /// Beside `$update`, `$upsert` or `$remove`: the field that names each record of the list
    /// (`"id"`); `$remove` then takes key values.
    pub const KEY: &str = "$key";
    /// Every operator. In component values, keys starting with `$` are operators.
    pub const OPERATORS: [&str; 9] = [
        APPEND, PREPEND, UNION, REMOVE, UPDATE, UPSERT, ADD, MUL, REPLACE,
    ];
    /// Spawn-time variation, in place of a number: rolls one in `[low, high]` per spawned
    /// entity (a whole number where the field takes whole numbers).
    pub const RANGE: &str = "$range";
    /// Spawn-time variation, in place of any value: rolls one of the values listed per spawned
    /// entity.
    pub const PICK: &str = "$pick";
    /// Every spawn-time variation.
    pub const VARIATIONS: [&str; 2] = [RANGE, PICK];
}

/// The newest archetype file format version this library reads.
pub const FORMAT_VERSION: u64 = 1;

/// One archetype file, as written (component names already mapped from aliases to their
/// current names).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ArchetypeDoc {
    pub is_abstract: bool,
    /// The names the archetype was formerly known by.
    pub formerly: Vec<String>,
    /// Parent names, in the order they are applied.
    pub extends: Vec<String>,
    /// The root entity's components and the children.
    pub root: EntitySpec,
}

/// An entity as a file describes it: the root of an archetype, or a child entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct EntitySpec {
    /// For children only: the archetype the child is an instance of.
    pub archetype: Option<String>,
    /// For children only: the local names the child was formerly known by.
    pub formerly: Vec<String>,
    /// Current component name → value as written (`Value::Null` removes).
    pub components: BTreeMap<Arc<str>, WrittenValue>,
    /// Local name → entry, `None` removing an inherited child.
    pub children: BTreeMap<String, Option<EntitySpec>>,
}

/// A component value and the key it was written under (which may be an alias), so errors can
/// point at the file's own text.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct WrittenValue {
    pub key: String,
    pub value: Value,
}

/// A problem found in one file, placed by its path inside the file's JSON.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DocProblem {
    /// Path from the top of the file to the offending key or value.
    pub path: FieldPath,
    /// Whether to point at the key itself (unknown keys) rather than its value.
    pub at_key: bool,
    /// What is wrong (without file and position).
    pub diagnostic: Diagnostic,
}

/// Reads an archetype file's JSON into its data model, collecting every problem.
/// `text` is the file's JSON text, used to tell which of two keys comes first.
/// Component values are moved out of `value` (which is left holding `null`s), not copied.
pub(super) fn parse_doc(
    value: &mut Value,
    text: &SourceText,
    registry: &ComponentRegistry,
    max_children_depth: usize,
) -> (ArchetypeDoc, Vec<DocProblem>) {
    let mut reader = Reader {
        registry,
        text,
        problems: Vec::new(),
        max_children_depth,
    };
    let doc = reader.doc(value);
    (doc, reader.problems)
}

struct Reader<'a> {
    registry: &'a ComponentRegistry,
    text: &'a SourceText,
    problems: Vec<DocProblem>,
    max_children_depth: usize,
}

impl Reader<'_> {
    fn problem(&mut self, path: FieldPath, at_key: bool, diagnostic: Diagnostic) {
        self.problems.push(DocProblem {
            path,
            at_key,
            diagnostic,
        });
    }

    fn malformed(&mut self, path: FieldPath, message: String) {
        self.problem(
            path,
            false,
            Diagnostic::error(DiagnosticCode::Malformed, message),
        );
    }

    fn doc(&mut self, value: &mut Value) -> ArchetypeDoc {
        let mut doc = ArchetypeDoc::default();
        let Value::Object(object) = value else {
            self.problem(
                FieldPath::root(),
                false,
                Diagnostic::error(
                    DiagnosticCode::NotAnObject,
                    format!(
                        "expected a JSON object at the top level of an archetype file, found {}",
                        kind_of(value)
                    ),
                ),
            );
            return doc;
        };
        let root = FieldPath::root();
        if let Some(format) = object.get(keys::FORMAT) {
            match format.as_u64() {
                Some(version) if (1..=FORMAT_VERSION).contains(&version) => {}
                Some(version) if version > FORMAT_VERSION => {
                    self.problem(
                        root.key(keys::FORMAT),
                        false,
                        Diagnostic::error(
                            DiagnosticCode::UnsupportedFormat,
                            format!(
                                "format version {version} is newer than this library reads (up to {FORMAT_VERSION}); update archetype-engine"
                            ),
                        ),
                    );
                    // The rest may use syntax we don't know: don't report it as mistakes.
                    return doc;
                }
                _ => self.malformed(
                    root.key(keys::FORMAT),
                    format!("`format` must be a positive integer (the current version is {FORMAT_VERSION})"),
                ),
            }
        }
        for key in object.keys() {
            if !keys::TOP_LEVEL.contains(&key.as_str()) {
                self.unknown_key(root.key(key), key, &keys::TOP_LEVEL, "an archetype file");
            }
        }
        if let Some(value) = object.get(keys::ABSTRACT) {
            match value {
                Value::Bool(flag) => doc.is_abstract = *flag,
                _ => self.malformed(
                    root.key(keys::ABSTRACT),
                    format!("`abstract` must be true or false, found {}", kind_of(value)),
                ),
            }
        }
        if let Some(value) = object.get(keys::FORMERLY) {
            doc.formerly = self.names(value, &root.key(keys::FORMERLY), NameKind::Former);
        }
        if let Some(value) = object.get(keys::EXTENDS) {
            doc.extends = self.names(value, &root.key(keys::EXTENDS), NameKind::Parent);
        }
        doc.root = self.entity(object, &root, false, 0);
        doc
    }

    /// A list of names (`extends`, `formerly`), or a single name.
    fn names(&mut self, value: &Value, path: &FieldPath, kind: NameKind) -> Vec<String> {
        let key = kind.key();
        // A single name may be a plain string; its path is still `extends[0]`, which the
        // locator resolves to the string itself.
        let names: Vec<(&Value, FieldPath)> = match value {
            Value::String(_) => vec![(value, path.index(0))],
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| (item, path.index(i)))
                .collect(),
            _ => {
                self.malformed(
                    path.clone(),
                    format!(
                        "`{key}` must be {}, found {}",
                        kind.expected(),
                        kind_of(value)
                    ),
                );
                return Vec::new();
            }
        };
        let mut out: Vec<String> = Vec::new();
        // The names kept so far, so a repeated one is found without a scan of `out`.
        let mut kept: FxHashSet<&str> = FxHashSet::default();
        for (item, item_path) in names {
            let Value::String(name) = item else {
                self.malformed(
                    item_path,
                    format!(
                        "`{key}` entries must be {} names, found {}",
                        kind.what(),
                        kind_of(item)
                    ),
                );
                continue;
            };
            let checked = match kind {
                NameKind::FormerChild if !check_local_name(name) => Err(Diagnostic::error(
                    DiagnosticCode::InvalidName,
                    format!(
                        "child name {} must be made of ASCII letters, digits, `_` and `-`",
                        quoted(name)
                    ),
                )),
                NameKind::FormerChild => Ok(()),
                _ => check_name(name).map_err(|problem| {
                    Diagnostic::error(DiagnosticCode::InvalidName, problem.message)
                        .with_suggestion(problem.suggestion)
                }),
            };
            if let Err(diagnostic) = checked {
                self.problem(item_path, false, diagnostic);
            } else if !kept.insert(name) {
                self.malformed(item_path, format!("`{name}` is listed twice in `{key}`"));
            } else {
                out.push(name.clone());
            }
        }
        out
    }

    /// Reads `components` and `children` (and, for child entries, `archetype`) of `object`.
    fn entity(
        &mut self,
        object: &mut Map<String, Value>,
        path: &FieldPath,
        is_child: bool,
        depth: usize,
    ) -> EntitySpec {
        let mut spec = EntitySpec::default();
        if is_child {
            self.child_entry_keys(object, path, &mut spec);
        }
        match object.get_mut(keys::COMPONENTS) {
            None => {}
            Some(Value::Object(components)) => {
                spec.components = self.components(components, &path.key(keys::COMPONENTS));
            }
            Some(other) => self.malformed(
                path.key(keys::COMPONENTS),
                format!(
                    "`components` must be an object of component name to value, found {}",
                    kind_of(other)
                ),
            ),
        }
        match object.get_mut(keys::CHILDREN) {
            None => {}
            Some(Value::Object(children)) => {
                let children_path = path.key(keys::CHILDREN);
                if depth >= self.max_children_depth && !children.is_empty() {
                    self.problem(
                        children_path,
                        false,
                        Diagnostic::error(
                            DiagnosticCode::TooDeep,
                            format!(
                                "children are nested deeper than the limit of {} levels",
                                self.max_children_depth
                            ),
                        ),
                    );
                    return spec;
                }
                spec.children = self.children(children, &children_path, depth);
            }
            Some(other) => self.malformed(
                path.key(keys::CHILDREN),
                format!(
                    "`children` must be an object of child name to entry, found {}",
                    kind_of(other)
                ),
            ),
        }
        self.former_names_of_siblings(&spec, path);
        spec
    }

    /// Reads what only a child entry (`object`, at `path`) has: its keys are checked, and its
    /// `formerly` and `archetype` go into `spec`.
    fn child_entry_keys(
        &mut self,
        object: &Map<String, Value>,
        path: &FieldPath,
        spec: &mut EntitySpec,
    ) {
        for key in object.keys() {
            if !keys::CHILD.contains(&key.as_str()) {
                self.unknown_key(path.key(key), key, &keys::CHILD, "a child entry");
            }
        }
        if let Some(value) = object.get(keys::FORMERLY) {
            spec.formerly = self.names(value, &path.key(keys::FORMERLY), NameKind::FormerChild);
        }
        match object.get(keys::ARCHETYPE) {
            None => {}
            Some(Value::String(name)) => match check_name(name) {
                Ok(()) => spec.archetype = Some(name.clone()),
                Err(problem) => self.problem(
                    path.key(keys::ARCHETYPE),
                    false,
                    Diagnostic::error(DiagnosticCode::InvalidName, problem.message)
                        .with_suggestion(problem.suggestion),
                ),
            },
            Some(other) => self.malformed(
                path.key(keys::ARCHETYPE),
                format!(
                    "`archetype` must be an archetype name, found {}",
                    kind_of(other)
                ),
            ),
        }
    }

    /// Reads the child entries of `children` (at `path`) of an entity `depth` levels down.
    fn children(
        &mut self,
        children: &mut Map<String, Value>,
        path: &FieldPath,
        depth: usize,
    ) -> BTreeMap<String, Option<EntitySpec>> {
        let mut out = BTreeMap::new();
        for (name, entry) in children {
            let entry_path = path.key(name);
            if !check_local_name(name) {
                self.problem(
                    entry_path.clone(),
                    true,
                    Diagnostic::error(
                        DiagnosticCode::InvalidName,
                        format!(
                            "child name {} must be made of ASCII letters, digits, `_` and `-`",
                            quoted(name)
                        ),
                    ),
                );
                continue;
            }
            match entry {
                Value::Null => {
                    out.insert(name.clone(), None);
                }
                Value::Object(entry) => {
                    let child = self.entity(entry, &entry_path, true, depth + 1);
                    out.insert(name.clone(), Some(child));
                }
                other => self.malformed(
                    entry_path,
                    format!(
                        "child `{name}` must be an object (or null to remove it), found {}",
                        kind_of(other)
                    ),
                ),
            }
        }
        out
    }

    /// A child's former name that is the name of a sibling stands for the sibling: an error.
    fn former_names_of_siblings(&mut self, spec: &EntitySpec, path: &FieldPath) {
        for (name, entry) in &spec.children {
            let Some(entry) = entry else { continue };
            for (index, former) in entry.formerly.iter().enumerate() {
                if spec.children.contains_key(former) {
                    self.problem(
                        path.key(keys::CHILDREN).key(name).key(keys::FORMERLY).index(index),
                        false,
                        Diagnostic::error(
                            DiagnosticCode::FormerNameClash,
                            format!("former name `{former}` of child `{name}` is the name of another child here, so it cannot also stand for this one; remove it from `formerly`"),
                        ),
                    );
                }
            }
        }
    }

    /// Reads `components` (at `path`): each value under its component's current name, the
    /// value moved out of `components`. Unknown, reserved and doubly set components and wrong
    /// operators are problems.
    fn components(
        &mut self,
        components: &mut Map<String, Value>,
        path: &FieldPath,
    ) -> BTreeMap<Arc<str>, WrittenValue> {
        let mut out: BTreeMap<Arc<str>, WrittenValue> = BTreeMap::new();
        for (key, value) in components.iter_mut() {
            let Some(name) = self.component_name(key, path) else {
                continue;
            };
            if let Some(previous) = out.get(&name) {
                self.set_twice(&previous.key, key, &name, path);
                continue;
            }
            if self.operator_problems(value, path, key, &name) {
                continue;
            }
            out.insert(
                name,
                WrittenValue {
                    key: key.clone(),
                    value: std::mem::take(value),
                },
            );
        }
        out
    }

    /// The current name of the component written `key` in `components` (at `path`), or `None`
    /// (a problem) if it is unknown or set by the library.
    fn component_name(&mut self, key: &str, path: &FieldPath) -> Option<Arc<str>> {
        let Some(id) = self.registry.id(key) else {
            let suggestion = did_you_mean(key, self.registry.names());
            self.problem(
                path.key(key),
                true,
                Diagnostic::error(
                    DiagnosticCode::UnknownComponent,
                    format!("unknown component {}", quoted(key)),
                )
                .with_component(key.to_string())
                .with_suggestion(suggestion),
            );
            return None;
        };
        let name = self.registry.name_arc(id).clone();
        if self.registry.is_managed(id) {
            self.problem(
                path.key(key),
                true,
                Diagnostic::error(
                    DiagnosticCode::ReservedComponent,
                    format!(
                        "component `{name}` is set by the library when entities are spawned; {}",
                        if matches!(&*name, "Parent" | "Children") {
                            "describe child entities under `children`"
                        } else {
                            "remove it from the file"
                        }
                    ),
                )
                .with_component(name.to_string()),
            );
            return None;
        }
        Some(name)
    }

    /// The problem of component `name` set under two keys of `components` (at `path`),
    /// `previous` and `key`: reported at the one written second.
    fn set_twice(&mut self, previous: &str, key: &str, name: &str, path: &FieldPath) {
        // Keys arrive sorted; report the one written second.
        let offset = |key: &str| {
            self.text
                .locate(path.key(key).segments())
                .and_then(|located| located.key)
                .map_or(0, |span| span.start)
        };
        let (first, second) = if offset(previous) <= offset(key) {
            (previous, key)
        } else {
            (key, previous)
        };
        let message = format!(
            "`{first}` and `{second}` both set component `{name}` (old names still load as the current one); keep one"
        );
        self.problem(
            path.key(second),
            true,
            Diagnostic::error(DiagnosticCode::Malformed, message).with_component(name.to_string()),
        );
    }

    /// Reports the wrong operators of `value`, component `name` written `key` in `components`
    /// (at `path`), and leaves out what each stands in, so it is reported once, as itself.
    /// Returns whether something was left out (the value is then dropped).
    fn operator_problems(
        &mut self,
        value: &mut Value,
        path: &FieldPath,
        key: &str,
        name: &str,
    ) -> bool {
        let mut problems = Vec::new();
        crate::archetype::written_operator::written_problems(
            value,
            &FieldPath::root(),
            &mut problems,
        );
        // What a wrong operator stands in is left out, so it is reported once, as itself.
        let dropped = problems
            .iter()
            .any(|problem| crate::archetype::written_operator::prune(value, &problem.field));
        for problem in problems {
            let mut place = path.key(key);
            place.0.extend(problem.field.0.iter().cloned());
            let diagnostic = Diagnostic::error(DiagnosticCode::InvalidOperator, problem.message)
                .with_component(name.to_string())
                .with_field(problem.field)
                .with_suggestion(problem.suggestion);
            self.problem(place, problem.at_key, diagnostic);
        }
        dropped
    }

    fn unknown_key(&mut self, path: FieldPath, key: &str, allowed: &[&str], place: &str) {
        let (message, suggestion) = crate::diagnostic::unknown_key(key, allowed, place);
        let diagnostic = Diagnostic::error(DiagnosticCode::UnknownKey, message);
        self.problem(path, true, diagnostic.with_suggestion(suggestion));
    }
}

/// What a list of names names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NameKind {
    /// `extends`.
    Parent,
    /// `formerly` at the top level.
    Former,
    /// `formerly` in a child entry.
    FormerChild,
}

impl NameKind {
    fn key(self) -> &'static str {
        match self {
            NameKind::Parent => keys::EXTENDS,
            NameKind::Former | NameKind::FormerChild => keys::FORMERLY,
        }
    }

    fn what(self) -> &'static str {
        match self {
            NameKind::Parent | NameKind::Former => "archetype",
            NameKind::FormerChild => "child",
        }
    }

    fn expected(self) -> &'static str {
        match self {
            NameKind::Parent => "an archetype name or a list of names",
            NameKind::Former => "the archetype's former name or a list of them",
            NameKind::FormerChild => "the child's former name or a list of them",
        }
    }
}

/// "an array", "a string", ... for messages.
pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
