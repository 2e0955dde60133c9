//! The cost of one designer's edit in a big library: an archetype with live instances is
//! edited in the load workload's generated tree ([`LoadFixture`]), and the edit is applied
//! ([`ArchetypeLibrary::set_source`] + [`apply_update`]). An edit should cost what it touches:
//! a leaf's (nothing extends it) at 50,000 archetypes is held to the same at 1,000, and a
//! root's to what its ~1,000 descendants and their instances cost.

use std::time::{Duration, Instant};

use archetype_engine::{apply_update, ArchetypeLibrary, ReloadReport};
use hecs::World;

use crate::bench::load::{leaf_path, root_path, LoadFixture};

/// A generated library with live instances (spawned by the fixture that owns it), and one of
/// its files edited back and forth between two texts.
struct EditedFile {
    library: ArchetypeLibrary,
    world: World,
    /// The edited file, relative to the root.
    path: String,
    /// The edited text, then the generated one.
    texts: [String; 2],
    turn: usize,
    _fixture: LoadFixture,
}

impl EditedFile {
    /// Generates and loads `files` archetype files; the file at `path` is edited by replacing
    /// `from` with `to` (its first occurrence), and back.
    ///
    /// # Panics
    /// If the files cannot be written or read, or the file at `path` has no `from`.
    fn new(files: usize, path: String, from: &str, to: &str) -> Self {
        let fixture = LoadFixture::generate(files);
        let library = fixture.load();
        let text = std::fs::read_to_string(fixture.root().join(&path))
            .unwrap_or_else(|error| panic!("bench setup: cannot read {path}: {error}"));
        let edited = text.replacen(from, to, 1);
        assert_ne!(edited, text, "bench setup: {path} has no `{from}`");
        EditedFile {
            library,
            world: World::new(),
            path,
            texts: [edited, text],
            turn: 0,
            _fixture: fixture,
        }
    }

    /// Spawns `count` instances of archetype `name`.
    ///
    /// # Panics
    /// If it does not spawn.
    fn spawn(&mut self, name: &str, count: usize) {
        self.library
            .spawn_many(&mut self.world, name, count)
            .unwrap_or_else(|error| panic!("bench setup: cannot spawn {name}: {error}"));
    }

    /// One edit, applied to the world: the time `set_source` took, `apply_update`'s, and its
    /// report.
    ///
    /// # Panics
    /// If the library reports an error.
    fn edit(&mut self) -> (Duration, Duration, ReloadReport) {
        let text = &self.texts[self.turn % 2];
        self.turn += 1;
        let start = Instant::now();
        let update = self.library.set_source(&self.path, Some(text));
        let resolved = start.elapsed();
        let report = apply_update(&mut self.world, &self.library, &update);
        let applied = start.elapsed() - resolved;
        assert!(
            update.errors.is_empty(),
            "bench: the edit of {} has errors: {report}",
            self.path
        );
        (resolved, applied, report)
    }
}

/// A generated library with `instances` live instances of one leaf; each
/// [`edit`](Self::edit) changes the leaf's `Health.max` (alternating between two values) and
/// applies it.
pub struct LeafEditFixture {
    file: EditedFile,
    instances: usize,
}

impl LeafEditFixture {
    /// Generates and loads `files` archetype files and spawns `instances` of the first leaf.
    ///
    /// # Panics
    /// If the files cannot be written, or the leaf does not load or spawn.
    pub fn new(files: usize, instances: usize) -> Self {
        let path = leaf_path(0);
        let name = path.trim_end_matches(".json").to_string();
        let mut file = EditedFile::new(files, path, "\"max\": ", "\"max\": 1");
        file.spawn(&name, instances);
        LeafEditFixture { file, instances }
    }

    /// Archetypes in the library.
    pub fn archetypes(&self) -> usize {
        self.file.library.len()
    }

    /// One edit of the leaf, applied to its instances: the time `set_source` took, and
    /// `apply_update`.
    ///
    /// # Panics
    /// If the edit is not applied to every instance, or the library reports an error.
    pub fn edit(&mut self) -> (Duration, Duration) {
        let (resolved, applied, report) = self.file.edit();
        assert_eq!(
            report.entities_updated(),
            self.instances,
            "bench: the edit did not reach every instance: {report}"
        );
        (resolved, applied)
    }

    /// A new archetype file (the leaf's text under a name of its own, which nothing names)
    /// added to the library, then removed: the time each `set_source` took. What a designer's
    /// `archetool new` or delete costs, which should grow with what the name touches, not with
    /// the library.
    ///
    /// # Panics
    /// If the file is not added and removed as one archetype, or the library reports an error.
    pub fn add_and_remove(&mut self) -> (Duration, Duration) {
        let file = &mut self.file;
        let text = &file.texts[1];
        let start = Instant::now();
        let added = file.library.set_source(ADDED_PATH, Some(text));
        let adding = start.elapsed();
        let removed = file.library.set_source(ADDED_PATH, None::<&str>);
        let removing = start.elapsed() - adding;
        for (update, what) in [(added, "adding"), (removed, "removing")] {
            assert!(
                update.errors.is_empty() && update.changes.len() == 1,
                "bench: {what} {ADDED_PATH} changed {} archetypes, errors: {:?}",
                update.changes.len(),
                update.errors
            );
        }
        (adding, removing)
    }
}

/// The file [`LeafEditFixture::add_and_remove`] adds and removes.
const ADDED_PATH: &str = "added/newcomer.json";

/// A root archetype that about 1,000 archetypes build on (one of the load workload's ten roots
/// in a library of 10,000), with `instances` live instances spread over its concrete
/// descendants; each [`edit`](Self::edit) changes the root's `Transform.rotation`
/// (alternating between two values), which every descendant inherits, and applies it.
pub struct RootEditFixture {
    file: EditedFile,
    descendants: usize,
}

impl RootEditFixture {
    /// Generates and loads `files` archetype files and spawns `instances` of the first root's
    /// concrete descendants, as evenly as they go.
    ///
    /// # Panics
    /// If the files cannot be written, or the root's descendants do not load or spawn.
    pub fn new(files: usize, instances: usize) -> Self {
        let path = root_path(0);
        let root = path.trim_end_matches(".json").to_string();
        let rotation = ("\"rotation\": [0, 0, 0, 1]", "\"rotation\": [0, 0, 1, 0]");
        let mut file = EditedFile::new(files, path, rotation.0, rotation.1);
        let leaves = concrete_descendants(&file.library, &root);
        assert!(!leaves.is_empty(), "bench setup: nothing builds on {root}");
        for (i, leaf) in leaves.iter().enumerate() {
            let count = instances / leaves.len() + usize::from(i < instances % leaves.len());
            file.spawn(leaf, count);
        }
        RootEditFixture {
            file,
            descendants: leaves.len(),
        }
    }

    /// The concrete archetypes built on the root.
    pub fn descendants(&self) -> usize {
        self.descendants
    }

    /// One edit of the root, applied to every instance of its descendants: the time
    /// `set_source` took, and `apply_update`.
    ///
    /// # Panics
    /// If the library reports an error, or nothing was updated.
    pub fn edit(&mut self) -> (Duration, Duration) {
        let (resolved, applied, report) = self.file.edit();
        assert!(
            report.entities_updated() > 0,
            "bench: nothing updated: {report}"
        );
        (resolved, applied)
    }
}

/// The concrete archetypes whose chain of first parents reaches `root` (the generated tree
/// is three levels deep; eight are followed at most).
fn concrete_descendants(library: &ArchetypeLibrary, root: &str) -> Vec<String> {
    let reaches = |name: &str| {
        let mut current = name.to_string();
        for _ in 0..8 {
            match library
                .declared(&current)
                .and_then(|(_, parents)| parents.first())
            {
                Some(parent) if parent == root => return true,
                Some(parent) => current = parent.clone(),
                None => return false,
            }
        }
        false
    };
    (library.names())
        .filter(|name| {
            let concrete = library
                .declared(name)
                .is_some_and(|(is_abstract, _)| !is_abstract);
            concrete && library.get(name).is_some() && reaches(name)
        })
        .map(str::to_string)
        .collect()
}
