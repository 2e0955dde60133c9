//! What every test area shares: test components, archetype directories in temp dirs, and the
//! `check`-style helpers, so a change of the library's API touches this file only.

use std::path::{Path, PathBuf};

use archetype_engine::{
    ArchetypeInstance, ArchetypeLibrary, Children, ComponentOptions, ComponentRegistry, EntityRef,
    LoadOptions,
};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Test components

/// Hit points: both fields required.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub current: f32,
    pub max: f32,
}

/// A one-field struct, registered with the old name `MoveSpeed` as an alias.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub value: f32,
}

/// An enum written as a string (`"Hostile"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Faction {
    Hostile,
    Friendly,
}

/// Nested structs, for recursive merging and field paths such as `Ai.stats.vision`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ai {
    pub mode: Mode,
    pub stats: AiStats,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    Wander,
    Chase,
    Guard,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiStats {
    pub aggression: f32,
    pub vision: f32,
}

/// An array field (arrays replace whole) and a defaulted field (so `null` can remove it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loot {
    pub items: Vec<String>,
    #[serde(default)]
    pub gold: u32,
}

/// Every shape of entity reference a component can hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Links {
    pub target: EntityRef,
    #[serde(default)]
    pub backup: Option<EntityRef>,
    #[serde(default)]
    pub all: Vec<EntityRef>,
}

/// A marker-like component with only a defaulted field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Armor {
    pub value: f32,
}

/// Whole and fractional numbers side by side, for arithmetic that keeps each field's kind; every
/// field has a default (`hp` 10, `speed` 1.0, `seed` 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    pub hp: i32,
    pub speed: f32,
    pub seed: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            hp: 10,
            speed: 1.0,
            seed: 0,
        }
    }
}

/// A record of a list named by its `name` (for keyed list operators).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attack {
    pub name: String,
    pub damage: i32,
    #[serde(default)]
    pub cooldown: f32,
}

/// A list of records, written as the list itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Attacks(pub Vec<Attack>);

/// A colour (axes named `r g b a` by its registration) and a whole-number size (glam's
/// `IVec2`, axes `x y`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprite {
    pub tint: glam::Vec4,
    #[serde(default)]
    pub size: glam::IVec2,
}

/// Free-form data: any JSON value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notes(pub serde_json::Value);

/// The registry every test loads with: built-ins plus the test components.
pub fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Health>().unwrap();
    registry
        .register_with::<Speed>(ComponentOptions::new().alias("MoveSpeed"))
        .unwrap();
    registry.register::<Faction>().unwrap();
    registry.register::<Ai>().unwrap();
    registry.register::<Loot>().unwrap();
    registry.register::<Links>().unwrap();
    registry.register::<Armor>().unwrap();
    registry.register::<Stats>().unwrap();
    registry.register::<Attacks>().unwrap();
    registry.register::<Notes>().unwrap();
    registry
        .register_with::<Sprite>(ComponentOptions::new().axes("tint", &["r", "g", "b", "a"]))
        .unwrap();
    registry
}

// ---------------------------------------------------------------------------------------------
// Archetype directories

/// A fresh archetypes directory in a temp dir, deleted when dropped.
pub struct ArchetypeDir {
    dir: tempfile::TempDir,
}

impl ArchetypeDir {
    /// Writes `files` (paths relative to the root, e.g. `enemies/goblin.json`).
    pub fn new(files: &[(&str, &str)]) -> ArchetypeDir {
        let dir = tempfile::tempdir().unwrap();
        let archetypes = ArchetypeDir { dir };
        for (path, text) in files {
            archetypes.write(path, text.as_bytes());
        }
        archetypes
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, relative: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Loads with the test registry and default options.
    pub fn load(&self) -> Result<ArchetypeLibrary, archetype_engine::LoadError> {
        ArchetypeLibrary::load(self.root(), registry())
    }

    pub fn load_with(
        &self,
        options: LoadOptions,
    ) -> Result<ArchetypeLibrary, archetype_engine::LoadError> {
        ArchetypeLibrary::load_with(self.root(), registry(), options)
    }

    /// A message with the temp dir shown as `archetypes`, as a designer would see it.
    pub fn tidy(&self, message: &str) -> String {
        message.replace(&self.root().display().to_string(), "archetypes")
    }

    /// Every diagnostic of `library`, tidied.
    pub fn messages(&self, library: &ArchetypeLibrary) -> Vec<String> {
        library
            .diagnostics()
            .iter()
            .map(|diagnostic| self.tidy(&diagnostic.to_string()))
            .collect()
    }

    /// Loads with `options`; the load must fail. Returns every diagnostic, tidied, and the
    /// partial library.
    #[track_caller]
    pub fn load_partial_with(&self, options: LoadOptions) -> (Vec<String>, ArchetypeLibrary) {
        match self.load_with(options) {
            Ok(library) => panic!(
                "expected the load to fail; diagnostics: {:?}",
                self.messages(&library)
            ),
            Err(error) => {
                let library = error.into_partial();
                (self.messages(&library), library)
            }
        }
    }

    /// Every diagnostic of a default load, which must fail.
    #[track_caller]
    pub fn errors(&self) -> Vec<String> {
        self.load_partial_with(LoadOptions::default()).0
    }
}

/// A library that must load without any diagnostic (not even a warning). Also returns the
/// directory, which must outlive the library's use.
#[track_caller]
pub fn load(files: &[(&str, &str)]) -> (ArchetypeDir, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(files);
    let library = match dir.load() {
        Ok(library) => library,
        Err(error) => panic!(
            "expected a clean load, got:\n{}",
            dir.tidy(&error.to_string())
        ),
    };
    assert_eq!(dir.messages(&library), Vec::<String>::new());
    crate::cooked::assert_cooked_alike(&library);
    (dir, library)
}

/// Every diagnostic (`to_string()`, temp dir shown as `archetypes`) of a load that must fail.
#[track_caller]
pub fn load_errors(files: &[(&str, &str)]) -> Vec<String> {
    load_errors_with(LoadOptions::default(), files)
}

#[track_caller]
pub fn load_errors_with(options: LoadOptions, files: &[(&str, &str)]) -> Vec<String> {
    ArchetypeDir::new(files).load_partial_with(options).0
}

/// A load that must fail: every diagnostic and the partial library.
#[track_caller]
pub fn load_partial(files: &[(&str, &str)]) -> (ArchetypeDir, Vec<String>, ArchetypeLibrary) {
    let dir = ArchetypeDir::new(files);
    let (messages, library) = dir.load_partial_with(LoadOptions::default());
    (dir, messages, library)
}

/// Asserts a list of messages, one per line on failure, so a mismatch is easy to read.
#[track_caller]
pub fn assert_messages(actual: &[String], expected: &[&str]) {
    let actual = actual.join("\n");
    let expected = expected.join("\n");
    assert!(
        actual == expected,
        "diagnostics differ\n--- expected\n{expected}\n--- actual\n{actual}\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Spawned entities

/// A component of an entity, cloned (panics with the component's type if missing).
#[track_caller]
pub fn get<T: hecs::Component + Clone>(world: &World, entity: Entity) -> T {
    match world.get::<&T>(entity) {
        Ok(component) => (*component).clone(),
        Err(error) => panic!("{}: {error}", std::any::type_name::<T>()),
    }
}

pub fn has<T: hecs::Component>(world: &World, entity: Entity) -> bool {
    world.satisfies::<&T>(entity)
}

/// The shape of `entity`'s overrides as `library` keeps it (`{"Health": {"max": true}}`),
/// `None` for an instance without overrides.
#[track_caller]
pub fn overrides_of(
    world: &World,
    library: &ArchetypeLibrary,
    entity: Entity,
) -> Option<serde_json::Value> {
    let marker = get::<ArchetypeInstance>(world, entity);
    let shape = library.instance_overrides(&marker)?;
    Some(serde_json::Value::Object((*shape.0).clone()))
}

/// The child of `parent` spawned from the archetype entity at `path` (e.g. `"gun"`), found
/// through the `Children` links and the instance markers.
#[track_caller]
pub fn child(world: &World, library: &ArchetypeLibrary, parent: Entity, path: &str) -> Entity {
    let children = get::<Children>(world, parent);
    let found: Vec<Entity> = children
        .0
        .iter()
        .map(|child| child.entity())
        .filter(|&child| {
            let marker = get::<ArchetypeInstance>(world, child);
            library.node_path(marker) == Some(path)
        })
        .collect();
    assert_eq!(found.len(), 1, "children at `{path}`: {found:?}");
    found[0]
}

/// The entity at `path` (`""` for the root, `"gun/barrel"` for a grandchild) of the instance
/// rooted at `root`.
#[track_caller]
pub fn at(world: &World, library: &ArchetypeLibrary, root: Entity, path: &str) -> Entity {
    let mut entity = root;
    let mut walked = String::new();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(segment);
        entity = child(world, library, entity, &walked);
    }
    entity
}

/// One instance of an archetype spawned into a fresh world, with the library it came from.
pub struct Spawned {
    pub world: World,
    pub root: Entity,
    pub library: ArchetypeLibrary,
    _dir: ArchetypeDir,
}

/// Loads `files` (which must load cleanly) and spawns one `name`.
#[track_caller]
pub fn spawn(files: &[(&str, &str)], name: &str) -> Spawned {
    let (dir, library) = load(files);
    let mut world = World::new();
    let root = match library.spawn(&mut world, name) {
        Ok(root) => root,
        Err(error) => panic!("spawning `{name}`: {error}"),
    };
    Spawned {
        world,
        root,
        library,
        _dir: dir,
    }
}

impl Spawned {
    /// A component of the root.
    #[track_caller]
    pub fn get<T: hecs::Component + Clone>(&self) -> T {
        get::<T>(&self.world, self.root)
    }

    /// Whether the root has a component.
    pub fn has<T: hecs::Component>(&self) -> bool {
        has::<T>(&self.world, self.root)
    }

    /// The entity at `path` (`""` for the root, `"bridge/captain"` for a grandchild).
    #[track_caller]
    pub fn at(&self, path: &str) -> Entity {
        at(&self.world, &self.library, self.root, path)
    }

    /// A component of the entity at `path`.
    #[track_caller]
    pub fn get_at<T: hecs::Component + Clone>(&self, path: &str) -> T {
        get::<T>(&self.world, self.at(path))
    }

    /// Whether the entity at `path` has a component.
    pub fn has_at<T: hecs::Component>(&self, path: &str) -> bool {
        has::<T>(&self.world, self.at(path))
    }
}

/// A FIFO (named pipe) at `path`.
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

// ---------------------------------------------------------------------------------------------
// Binary scenes, edited by tests

/// A binary scene with `edit` applied to its contents, and its checksum made right again (so
/// the edit reaches the reader past the checksum).
pub fn edit_binary(binary: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut body = binary[..binary.len() - 4].to_vec();
    edit(&mut body);
    let checksum = crc32fast::hash(&body);
    body.extend_from_slice(&checksum.to_le_bytes());
    body
}

/// The same scene as binary format 2 wrote it: no `meta`, no value layouts in the component
/// table, no child paths in the archetype table, no checksum. (Its instances' changed
/// components stay binary diffs, which format 2 wrote as merge patches.)
pub fn binary_format_2(binary: &[u8]) -> Vec<u8> {
    assert_eq!(binary[8], 4, "a binary scene of format 4");
    let body = &binary[..binary.len() - 4];
    let mut at = 9;
    let mut out = body[..8].to_vec();
    out.push(2);
    let skip = |at: &mut usize| {
        let length = varint(body, at);
        *at += length;
    };
    skip(&mut at); // meta
    let count_at = at;
    let components = varint(body, &mut at);
    out.extend_from_slice(&body[count_at..at]);
    for _ in 0..components {
        let name = at;
        skip(&mut at);
        out.extend_from_slice(&body[name..at]);
        skip(&mut at); // the value layout
    }
    let count_at = at;
    let archetypes = varint(body, &mut at);
    out.extend_from_slice(&body[count_at..at]);
    for _ in 0..archetypes {
        let name = at;
        skip(&mut at);
        out.extend_from_slice(&body[name..at]);
        for _ in 0..varint(body, &mut at) {
            skip(&mut at); // child paths
        }
    }
    out.extend_from_slice(&body[at..]);
    out
}

/// What `work` gives, run on another thread; fails the test if it takes over `seconds`: a hang
/// guard, never a timing (a blocked or runaway thread is left behind and ends with the test
/// process).
pub fn within<T: Send + 'static>(seconds: u64, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(work()));
    result
        .recv_timeout(std::time::Duration::from_secs(seconds))
        .unwrap_or_else(|_| panic!("not finished after {seconds} seconds"))
}

/// A LEB128 varint at `at` (moved past it).
pub fn varint(bytes: &[u8], at: &mut usize) -> usize {
    let mut value = 0usize;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return value;
        }
    }
}

/// Copies the files under `from` into `to` (directories created as needed).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
