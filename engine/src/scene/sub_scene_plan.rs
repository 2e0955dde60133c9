//! The files a scene places, read before anything is spawned: each sub-scene path judged by
//! the file rule ([`Root`]: relative, inside the scenes root, no link out, a regular file
//! within the size limit), each file read once however often it is placed, the nesting depth
//! bounded ([`Limits::max_sub_scene_depth`]), cycles refused, and the scene's size counted as
//! it will be once every sub-scene is placed ([`Limits::max_scene_entities`] and
//! [`Limits::max_scene_values`] on the flattened total), so a few kilobytes that place each
//! other ten times over are refused before the first entity exists.
//!
//! The files are visited depth first without recursion; the flattened counts are summed once
//! per file (a file placed many times is counted once and multiplied), so reading the plan is
//! linear in the files and placements, however large the flattened scene would be.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::archetype::read_limited;
use crate::archetype::ArchetypeLibrary;
use crate::component::StableId;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::fs::{Refused, Root};
use crate::json::{PathSegment, SourceText};
use crate::limits::Limits;
use crate::scene::format::scene_keys as keys;
use crate::scene::load::{SceneError, SceneLoadOptions, SubScenes};
use crate::scene::save::SceneEncoding;

/// The deepest [`Limits::max_sub_scene_depth`] is taken as: placing is a recursion over the
/// chain, and this many levels fit a thread's stack of 2 MiB many times over.
pub(super) const MAX_SUB_SCENE_DEPTH: usize = 64;

/// How many entities and component values a scene holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    entities: usize,
    values: usize,
}

impl Counts {
    /// `self` plus `times` copies of `other`, saturating (an overflow is over every limit).
    fn plus(self, other: Counts, times: usize) -> Counts {
        Counts {
            entities: (self.entities).saturating_add(other.entities.saturating_mul(times)),
            values: (self.values).saturating_add(other.values.saturating_mul(times)),
        }
    }
}

/// One override of a placement: the sub-scene entity's path, its key's offset, and component →
/// merge patch.
pub(super) type Override = (String, usize, Map<String, Value>);

/// One entry placing a sub-scene.
pub(super) struct Placement {
    /// The placing entry's stable ID, as the file writes it.
    pub id: StableId,
    /// The `scene` value as written, and where it is (byte offset of the value).
    pub scene: String,
    pub scene_at: usize,
    /// The `overrides`: entity path, its key's offset, and component → merge patch, in the
    /// file's order.
    pub overrides: Vec<Override>,
    /// The placed file ([`Plan::files`] index), once it is read.
    pub file: usize,
}

/// One file of a plan.
pub(super) struct PlanFile {
    /// The path shown in messages: the placing file's directory joined with the path as
    /// written (the top file's path as given).
    pub path: Option<PathBuf>,
    /// Its real path (`None` for a top file read from memory).
    real: Option<PathBuf>,
    /// Its bytes (`None` for the top file: the caller holds them).
    pub bytes: Option<Vec<u8>>,
    /// For a file that places scenes: its text (errors are placed in it) and the text with
    /// every `scene` and `overrides` member blanked out, which loads as an ordinary scene.
    pub placing: Option<(SourceText, Vec<u8>)>,
    pub placements: Vec<Placement>,
    own: Counts,
    /// With every sub-scene placed (set once the file's placements are counted).
    flattened: Counts,
}

/// A scene file and the files it places.
pub(super) struct Plan {
    /// The top file first.
    pub files: Vec<PlanFile>,
}

/// The rule sub-scene paths are read by, for one load.
enum Rule {
    /// Inside this root; the top file's directory by its real path.
    Root(Root, Option<PathBuf>),
    /// Sub-scenes are refused, and why.
    Refused(String),
}

impl Plan {
    /// The plan of the scene in `bytes` (read from `file`): `None` if it places no scene (or
    /// is not JSON a placement can be found in), an error placed at the placement the rule or
    /// a limit refuses.
    pub fn read(
        bytes: &[u8],
        file: Option<&Path>,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Result<Option<Plan>, SceneError> {
        let top = match analyse(bytes, file, library, options)? {
            Some(top) if !top.placements.is_empty() => top,
            _ => return Ok(None),
        };
        let mut plan = Plan { files: vec![top] };
        let rule = rule(file, options);
        plan.files[0].real = file.and_then(|file| std::fs::canonicalize(file).ok());
        plan.visit(&rule, library, options)?;
        plan.check_limits(&options.limits)?;
        Ok(Some(plan))
    }

    /// Reads every file the top file places, depth first, without recursion.
    fn visit(
        &mut self,
        rule: &Rule,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Result<(), SceneError> {
        let max_depth = options.limits.max_sub_scene_depth.min(MAX_SUB_SCENE_DEPTH);
        let mut by_real: FxHashMap<PathBuf, usize> = FxHashMap::default();
        if let Some(real) = &self.files[0].real {
            by_real.insert(real.clone(), 0);
        }
        let mut done = vec![false];
        // (file, its next placement to read)
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        while let Some(&(f, next)) = stack.last() {
            if next == self.files[f].placements.len() {
                self.flatten(f);
                done[f] = true;
                stack.pop();
                continue;
            }
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            let real = self.resolve(f, next, rule)?;
            let placed = match by_real.get(&real) {
                Some(&i) if !done[i] => return Err(self.cycle(f, next, &stack, i)),
                Some(&i) => i,
                None if stack.len() > max_depth => {
                    return Err(self.too_deep(f, next, max_depth));
                }
                None => {
                    let sub = self.read_placed(f, next, real.clone(), library, options)?;
                    self.files.push(sub);
                    done.push(false);
                    let i = self.files.len() - 1;
                    by_real.insert(real, i);
                    stack.push((i, 0));
                    i
                }
            };
            self.files[f].placements[next].file = placed;
        }
        Ok(())
    }

    /// The real path of placement `p` of file `f`, if the rule lets it be read.
    fn resolve(&self, f: usize, p: usize, rule: &Rule) -> Result<PathBuf, SceneError> {
        let placement = &self.files[f].placements[p];
        let (root, top_dir) = match rule {
            Rule::Root(root, top_dir) => (root, top_dir),
            Rule::Refused(why) => {
                let message = format!(
                    "entity {}: places sub-scene `{}`, but {why}",
                    placement.id, placement.scene
                );
                return Err(self.error(f, p, DiagnosticCode::Io, message));
            }
        };
        let dir = match (f, top_dir) {
            (0, Some(dir)) => dir.clone(),
            _ => (self.files[f].real.as_deref())
                .and_then(Path::parent)
                .map_or_else(|| root.real().to_path_buf(), Path::to_path_buf),
        };
        root.resolve(&dir, Path::new(&placement.scene)).map_err(|refused| {
            let why = match refused {
                Refused::Absolute => "is an absolute path; a sub-scene is written relative to the file that places it".to_string(),
                Refused::Outside => format!(
                    "leads outside the scenes root `{}`; sub-scenes are read only from files under it (SceneLoadOptions::sub_scenes sets the root)",
                    root.real().display()
                ),
                Refused::Unresolved(error) => format!("cannot be read: cannot read file: {error}"),
            };
            let message = format!("entity {}: sub-scene `{}` {why}", placement.id, placement.scene);
            self.error(f, p, DiagnosticCode::Io, message)
        })
    }

    /// Reads the file placement `p` of file `f` places (at `real`, inside the root).
    fn read_placed(
        &self,
        f: usize,
        p: usize,
        real: PathBuf,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Result<PlanFile, SceneError> {
        let placement = &self.files[f].placements[p];
        let base = self.files[f].path.as_deref().and_then(Path::parent);
        let shown = base.unwrap_or_else(|| Path::new("")).join(&placement.scene);
        let bytes = read_limited(&real, options.limits.max_scene_bytes).map_err(|problem| {
            let message = format!(
                "entity {}: sub-scene `{}` cannot be read: {}",
                placement.id, placement.scene, problem.message
            );
            self.error(f, p, problem.code, message)
        })?;
        let mut sub = analyse(&bytes, Some(&shown), library, options)?.unwrap_or_else(|| {
            let own = count(&bytes, library, &options.limits);
            PlanFile::leaf(own)
        });
        sub.path = Some(shown);
        sub.real = Some(real);
        sub.bytes = Some(bytes);
        Ok(sub)
    }

    /// Sums file `f`'s flattened counts (its placed files' are summed already).
    fn flatten(&mut self, f: usize) {
        let mut placed: FxHashMap<usize, usize> = FxHashMap::default();
        for placement in &self.files[f].placements {
            *placed.entry(placement.file).or_default() += 1;
        }
        let mut total = self.files[f].own;
        for (file, times) in placed {
            total = total.plus(self.files[file].flattened, times);
        }
        self.files[f].flattened = total;
    }

    /// The scene's size limits, on the flattened scene.
    fn check_limits(&self, limits: &Limits) -> Result<(), SceneError> {
        let Counts { entities, values } = self.files[0].flattened;
        let over = if entities > limits.max_scene_entities {
            Some(("entities", entities, limits.max_scene_entities))
        } else if values > limits.max_scene_values {
            Some(("component values", values, limits.max_scene_values))
        } else {
            None
        };
        let Some((what, count, limit)) = over else {
            return Ok(());
        };
        // Placed at the placement that brings the most.
        let top = &self.files[0];
        let brings = |p: &Placement| {
            let placed = self.files[p.file].flattened;
            (placed.entities, placed.values)
        };
        let largest = (0..top.placements.len())
            .max_by_key(|&p| (brings(&top.placements[p]), std::cmp::Reverse(p)))
            .unwrap_or(0);
        let message = format!(
            "scene holds {} {what} once its sub-scenes are placed, over the limit of {limit}",
            at_least(count)
        );
        Err(self.error(0, largest, DiagnosticCode::TooLarge, message))
    }

    /// Placement `p` of file `f` closes a cycle back to file `i` (on the stack).
    fn cycle(&self, f: usize, p: usize, stack: &[(usize, usize)], i: usize) -> SceneError {
        let start = stack.iter().position(|(file, _)| *file == i).unwrap_or(0);
        let mut names: Vec<String> = stack[start..]
            .iter()
            .map(|(file, _)| self.shown_real(*file))
            .collect();
        names.push(self.shown_real(i));
        let placement = &self.files[f].placements[p];
        let message = format!(
            "entity {}: scene cycle: {}",
            placement.id,
            names.join(" → ")
        );
        self.error(f, p, DiagnosticCode::InheritanceCycle, message)
    }

    /// Placement `p` of file `f` would place a file deeper than `max_depth`.
    fn too_deep(&self, f: usize, p: usize, max_depth: usize) -> SceneError {
        let placement = &self.files[f].placements[p];
        let message = format!(
            "entity {}: sub-scene `{}` would be placed {} levels deep, past the limit of {max_depth} (Limits::max_sub_scene_depth)",
            placement.id,
            placement.scene,
            max_depth + 1
        );
        self.error(f, p, DiagnosticCode::TooDeep, message)
    }

    /// A file's real path for a message (its shown path if it has none).
    fn shown_real(&self, f: usize) -> String {
        let file = &self.files[f];
        (file.real.as_deref().or(file.path.as_deref()))
            .map_or_else(|| "-".to_string(), |path| path.display().to_string())
    }

    /// An error of file `f` placed at its placement `p`'s `scene` value (its file when it has
    /// none).
    fn error(&self, f: usize, p: usize, code: DiagnosticCode, message: String) -> SceneError {
        let file = &self.files[f];
        let mut error = scene_error(file.path.as_deref(), code, message);
        if let (Some((text, _)), Some(placement)) = (&file.placing, file.placements.get(p)) {
            error.diagnostic.position = Some(text.position(placement.scene_at));
            error.entity = Some(placement.id);
        }
        error
    }
}

/// A count as a message says it: `usize::MAX` stands for every count too large to hold.
fn at_least(count: usize) -> String {
    match count {
        usize::MAX => format!("more than {}", usize::MAX - 1),
        count => count.to_string(),
    }
}

impl PlanFile {
    /// A file that places no scene.
    fn leaf(own: Counts) -> PlanFile {
        PlanFile {
            path: None,
            real: None,
            bytes: None,
            placing: None,
            placements: Vec::new(),
            own,
            flattened: own,
        }
    }
}

/// Which rule sub-scene paths are read by in a load of `file` with `options`.
fn rule(file: Option<&Path>, options: &SceneLoadOptions) -> Rule {
    let dir_of = |file: &Path| match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let top_dir = file.and_then(|file| std::fs::canonicalize(dir_of(file)).ok());
    let root = match &options.sub_scenes {
        SubScenes::Refused => {
            return Rule::Refused(
                "this load refuses sub-scenes (SceneLoadOptions::sub_scenes is SubScenes::Refused)"
                    .to_string(),
            )
        }
        SubScenes::InSceneDirectory => match file {
            Some(file) => Root::new(&dir_of(file)),
            None => {
                return Rule::Refused(
                    "the scene was not read from a file, so it has no directory to read sub-scenes from; set SceneLoadOptions::sub_scenes to SubScenes::InRoot(the scenes directory)"
                        .to_string(),
                )
            }
        },
        SubScenes::InRoot(dir) => Root::new(dir),
    };
    match root {
        Ok(root) => Rule::Root(root, top_dir),
        Err(error) => Rule::Refused(format!("the scenes root cannot be read: {error}")),
    }
}

/// The placements and counts of a JSON scene that places scenes; `None` for one that places
/// none (or that is not JSON a placement can be found in: the loader reports what is wrong).
fn analyse(
    bytes: &[u8],
    file: Option<&Path>,
    library: &ArchetypeLibrary,
    options: &SceneLoadOptions,
) -> Result<Option<PlanFile>, SceneError> {
    let needle = format!("\"{}\"", keys::SCENE);
    if SceneEncoding::detect(bytes) != SceneEncoding::Json
        || !bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    {
        return Ok(None);
    }
    let Ok(text) = SourceText::from_bytes(bytes.to_vec()) else {
        return Ok(None);
    };
    let Ok(document) = serde_json::from_str::<Value>(text.text()) else {
        return Ok(None);
    };
    let entries = document.get(keys::ENTITIES).and_then(Value::as_array);
    let Some(entries) = entries else {
        return Ok(None);
    };
    let placements = placements(&text, entries, file)?;
    if placements.is_empty() {
        let own = count(bytes, library, &options.limits);
        return Ok(Some(PlanFile::leaf(own)));
    }
    let own = Counts {
        entities: entries.len(),
        values: entries
            .iter()
            .filter_map(|entry| entry.get(keys::COMPONENTS).and_then(Value::as_object))
            .map(Map::len)
            .sum(),
    };
    let rest = blank_members(&text, &placements);
    Ok(Some(PlanFile {
        path: file.map(Path::to_path_buf),
        real: None,
        bytes: None,
        placing: Some((text, rest)),
        placements,
        own,
        flattened: own,
    }))
}

/// The entries that place a sub-scene, in the file's order.
fn placements(
    text: &SourceText,
    entries: &[Value],
    file: Option<&Path>,
) -> Result<Vec<Placement>, SceneError> {
    let mut placements = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(scene) = entry.get(keys::SCENE) else {
            continue;
        };
        let at = |key: &str| {
            let path = [
                PathSegment::Key(keys::ENTITIES.to_string()),
                PathSegment::Index(i),
                PathSegment::Key(key.to_string()),
            ];
            text.locate(&path).map_or(0, |located| located.value.start)
        };
        let error = |key: &str, message: String| {
            let mut error = scene_error(file, DiagnosticCode::Malformed, message);
            error.diagnostic.position = Some(text.position(at(key)));
            error
        };
        let id = entry
            .get(keys::ID)
            .and_then(Value::as_str)
            .and_then(|id| id.parse::<StableId>().ok())
            .ok_or_else(|| {
                error(
                    keys::ID,
                    format!("entity {i}: an entry placing a scene needs an `id` (16 hex digits)"),
                )
            })?;
        let scene = scene.as_str().ok_or_else(|| {
            error(keys::SCENE, format!("entity {id}: `scene` must be a string (a scene file's path, relative to this file)"))
        })?;
        let overrides = overrides(text, entry, i)
            .map_err(|problem| error(keys::OVERRIDES, format!("entity {id}: {problem}")))?;
        placements.push(Placement {
            id,
            scene: scene.to_string(),
            scene_at: at(keys::SCENE),
            overrides,
            file: 0,
        });
    }
    Ok(placements)
}

/// Why an entry's `overrides` are not path → component → patch.
enum BadOverrides {
    /// `overrides` is not an object.
    NotAnObject,
    /// The components of an override path are not an object.
    EntityNotAnObject { path: String },
}

impl std::fmt::Display for BadOverrides {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadOverrides::NotAnObject => {
                f.write_str("`overrides` must be an object: entity path → components")
            }
            BadOverrides::EntityNotAnObject { path } => {
                write!(f, "override `{path}` must be an object: component → value")
            }
        }
    }
}

/// The `overrides` of entry `i`: path → component → patch, with the offset of each path key.
fn overrides(text: &SourceText, entry: &Value, i: usize) -> Result<Vec<Override>, BadOverrides> {
    let Some(overrides) = entry.get(keys::OVERRIDES) else {
        return Ok(Vec::new());
    };
    let Some(overrides) = overrides.as_object() else {
        return Err(BadOverrides::NotAnObject);
    };
    let mut all = Vec::new();
    for (path, components) in overrides {
        let Some(components) = components.as_object() else {
            return Err(BadOverrides::EntityNotAnObject { path: path.clone() });
        };
        let located = text.locate(&[
            PathSegment::Key(keys::ENTITIES.to_string()),
            PathSegment::Index(i),
            PathSegment::Key(keys::OVERRIDES.to_string()),
            PathSegment::Key(path.clone()),
        ]);
        let at = located.and_then(|l| l.key).map_or(0, |key| key.start);
        all.push((path.clone(), at, components.clone()));
    }
    Ok(all)
}

/// The text with every `scene` and `overrides` member of the placing entries blanked out
/// (spaces, and the comma before each), so the rest loads as an ordinary scene at the same
/// positions.
fn blank_members(text: &SourceText, placements: &[Placement]) -> Vec<u8> {
    let mut bytes = text.text().as_bytes().to_vec();
    let mut found = 0;
    for i in 0.. {
        if found == placements.len() {
            break;
        }
        let entry = [
            PathSegment::Key(keys::ENTITIES.to_string()),
            PathSegment::Index(i),
        ];
        let Some(located) = text.locate(&entry) else {
            break;
        };
        if located.matched < entry.len() {
            break;
        }
        for key in [keys::SCENE, keys::OVERRIDES] {
            let mut path = entry.to_vec();
            path.push(PathSegment::Key(key.to_string()));
            let Some(member) = text.locate(&path).filter(|l| l.matched == path.len()) else {
                continue;
            };
            if key == keys::SCENE {
                found += 1;
            }
            let Some(start) = member.key.map(|key| key.start) else {
                continue;
            };
            // From the comma before the member (an entry's first key is its `id`) to its end.
            let comma = bytes[..start]
                .iter()
                .rposition(|b| *b == b',')
                .unwrap_or(start);
            for byte in &mut bytes[comma..member.value.end] {
                if *byte != b'\n' {
                    *byte = b' ';
                }
            }
        }
    }
    bytes
}

/// How many entities and component values a scene that places none holds, as the loader
/// counts them (entries, and the components of each), read without building a value. What
/// cannot be read counts as nothing: the load reports it.
fn count(bytes: &[u8], library: &ArchetypeLibrary, limits: &Limits) -> Counts {
    #[cfg(not(feature = "binary"))]
    let _ = (library, limits);
    match SceneEncoding::detect(bytes) {
        SceneEncoding::Json => {
            let mut counts = Counts::default();
            let mut deserializer = serde_json::Deserializer::from_slice(bytes);
            let _ = deserializer.deserialize_map(TopCounter(&mut counts));
            counts
        }
        #[cfg(feature = "binary")]
        SceneEncoding::Binary => binary_counts(bytes, library, limits),
    }
}

/// The counts of a binary scene: its entry count, and each entry's component count, read
/// without decoding a value.
#[cfg(feature = "binary")]
fn binary_counts(bytes: &[u8], library: &ArchetypeLibrary, limits: &Limits) -> Counts {
    use crate::scene::binary_entry::{read_component_head, read_entry_head};
    use crate::scene::load::{open_scene_binary, NotOpened, OpenedBinary};
    use crate::scene::scene_budget::SceneBudget;

    let mut budget = SceneBudget::new(limits);
    let opened = open_scene_binary(library.registry(), bytes, &mut budget);
    let OpenedBinary {
        mut reader,
        header,
        count,
        ..
    } = match opened {
        Ok(opened) => opened,
        Err(NotOpened::TooMany(count)) => {
            return Counts {
                entities: count,
                values: 0,
            }
        }
        Err(_) => return Counts::default(),
    };
    let mut counts = Counts {
        entities: count,
        values: 0,
    };
    for _ in 0..count {
        let Ok(head) = read_entry_head(&mut reader, &header.archetypes) else {
            break;
        };
        counts.values = counts.values.saturating_add(head.components);
        for _ in 0..head.components {
            if read_component_head(&mut reader, header.components.len()).is_err() {
                return counts;
            }
        }
    }
    counts
}

/// Counts a JSON scene's top level: only `entities` is looked into.
struct TopCounter<'c>(&'c mut Counts);

impl<'de> Visitor<'de> for TopCounter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a scene")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == keys::ENTITIES {
                map.next_value_seed(EntitiesCounter(self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// Counts the entries and their components.
struct EntitiesCounter<'c>(&'c mut Counts);

impl<'de> DeserializeSeed<'de> for EntitiesCounter<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EntitiesCounter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of entities")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(EntryCounter(&mut *self.0))?.is_some() {
            self.0.entities += 1;
        }
        Ok(())
    }
}

/// Counts one entry's components.
struct EntryCounter<'c>(&'c mut Counts);

impl<'de> DeserializeSeed<'de> for EntryCounter<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntryCounter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an entity")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == keys::COMPONENTS {
                let components = map.next_value::<ComponentCount>()?;
                self.0.values = self.0.values.saturating_add(components.0);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// How many members an object has, read without building them.
struct ComponentCount(usize);

impl<'de> de::Deserialize<'de> for ComponentCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = ComponentCount;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of components")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ComponentCount, A::Error> {
                let mut count = 0;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    count += 1;
                }
                Ok(ComponentCount(count))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// An error of `file` (no position yet).
pub(super) fn scene_error(
    file: Option<&Path>,
    code: DiagnosticCode,
    message: String,
) -> SceneError {
    let mut diagnostic = Diagnostic::error(code, message);
    diagnostic.file = file.map(Path::to_path_buf);
    SceneError {
        diagnostic: Box::new(diagnostic),
        entity: None,
        offset: None,
        others: Vec::new(),
    }
}

/// The scenes a scene file places, read as a load reads them (see [`load_scene`]): each
/// sub-scene by the file rule, once, with the depth and size limits on the flattened scene.
/// For tools that describe a scene (`archetool scene info`) without loading it.
///
/// [`load_scene`]: crate::load_scene
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedScenes {
    placed: BTreeMap<String, usize>,
    files: usize,
    entities: usize,
    values: usize,
}

impl PlacedScenes {
    /// The scenes the scene in `bytes` (read from `file`) places, by the rules of a load with
    /// `options`; `None` if it places none.
    ///
    /// # Errors
    /// What a load would report about them: a path the file rule refuses, a file that cannot
    /// be read, a cycle, nesting past [`Limits::max_sub_scene_depth`], a flattened scene over
    /// the size limits.
    pub fn read(
        bytes: &[u8],
        file: Option<&Path>,
        library: &ArchetypeLibrary,
        options: &SceneLoadOptions,
    ) -> Result<Option<PlacedScenes>, SceneError> {
        let Some(plan) = Plan::read(bytes, file, library, options)? else {
            return Ok(None);
        };
        let mut placed = BTreeMap::new();
        for placement in &plan.files[0].placements {
            *placed.entry(placement.scene.clone()).or_insert(0) += 1;
        }
        let Counts { entities, values } = plan.files[0].flattened;
        Ok(Some(PlacedScenes {
            placed,
            files: plan.files.len() - 1,
            entities,
            values,
        }))
    }

    /// Each sub-scene the file places itself, as written, with how many times.
    pub fn placed(&self) -> &BTreeMap<String, usize> {
        &self.placed
    }

    /// How many distinct files are placed, at every depth.
    pub fn files(&self) -> usize {
        self.files
    }

    /// The entities of the scene once every sub-scene is placed (placing entries count as
    /// entities).
    pub fn entities(&self) -> usize {
        self.entities
    }

    /// The component values of the scene once every sub-scene is placed.
    pub fn values(&self) -> usize {
        self.values
    }
}
