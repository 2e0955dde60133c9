//! The cost of one designer's edit in a big library: a leaf archetype (nothing extends it)
//! with live instances is edited in the load workload's generated tree ([`LoadFixture`]), and
//! the edit is applied ([`ArchetypeLibrary::set_source`] + [`apply_update`]). An edit should
//! cost what it touches, so the figure at 50,000 archetypes is held to the one at 1,000.

use std::time::{Duration, Instant};

use archetype_engine::{apply_update, ArchetypeLibrary};
use hecs::World;

use crate::bench::load::{leaf_path, root_path, LoadFixture};

/// A generated library with `instances` live instances of one leaf; each [`edit`](Self::edit)
/// changes the leaf's `Health.max` (alternating between two values) and applies it.
pub struct LeafEditFixture {
    library: ArchetypeLibrary,
    world: World,
    path: String,
    texts: [String; 2],
    turn: usize,
    instances: usize,
    _fixture: LoadFixture,
}

impl LeafEditFixture {
    /// Generates and loads `files` archetype files and spawns `instances` of the first leaf.
    ///
    /// # Panics
    /// If the files cannot be written, or the leaf does not load or spawn.
    pub fn new(files: usize, instances: usize) -> Self {
        let fixture = LoadFixture::generate(files);
        let library = fixture.load();
        let path = leaf_path(0);
        let text = std::fs::read_to_string(fixture.root().join(&path))
            .unwrap_or_else(|error| panic!("bench setup: cannot read the leaf {path}: {error}"));
        let edited = text.replacen("\"max\": ", "\"max\": 1", 1);
        assert_ne!(edited, text, "bench setup: the leaf has no `Health.max`");
        let name = path.trim_end_matches(".json").to_string();
        let mut world = World::new();
        library
            .spawn_many(&mut world, &name, instances)
            .unwrap_or_else(|error| panic!("bench setup: cannot spawn {name}: {error}"));
        LeafEditFixture {
            library,
            world,
            path,
            texts: [edited, text],
            turn: 0,
            instances,
            _fixture: fixture,
        }
    }

    /// Archetypes in the library.
    pub fn archetypes(&self) -> usize {
        self.library.len()
    }

    /// One edit of the leaf, applied to its instances: the time `set_source` took, and
    /// `apply_update`.
    ///
    /// # Panics
    /// If the edit is not applied to every instance, or the library reports an error.
    pub fn edit(&mut self) -> (Duration, Duration) {
        let text = &self.texts[self.turn % 2];
        self.turn += 1;
        let start = Instant::now();
        let update = self.library.set_source(&self.path, Some(text));
        let resolved = start.elapsed();
        let report = apply_update(&mut self.world, &self.library, &update);
        let applied = start.elapsed() - resolved;
        assert!(
            update.errors.is_empty(),
            "bench: the leaf's edit has errors: {report}"
        );
        assert_eq!(
            report.entities_updated(),
            self.instances,
            "bench: the edit did not reach every instance: {report}"
        );
        (resolved, applied)
    }
}

/// A root archetype that about 1,000 archetypes build on (one of the load workload's ten roots
/// in a library of 10,000), with `instances` live instances spread over its concrete
/// descendants; each [`edit`](Self::edit) changes the root's `Transform.rotation`
/// (alternating between two values), which every descendant inherits, and applies it.
pub struct RootEditFixture {
    library: ArchetypeLibrary,
    world: World,
    path: String,
    texts: [String; 2],
    turn: usize,
    descendants: usize,
    _fixture: LoadFixture,
}

impl RootEditFixture {
    /// Generates and loads `files` archetype files and spawns `instances` of the first root's
    /// concrete descendants, as evenly as they go.
    ///
    /// # Panics
    /// If the files cannot be written, or the root's descendants do not load or spawn.
    pub fn new(files: usize, instances: usize) -> Self {
        let fixture = LoadFixture::generate(files);
        let library = fixture.load();
        let path = root_path(0);
        let root = path.trim_end_matches(".json");
        let text = std::fs::read_to_string(fixture.root().join(&path))
            .unwrap_or_else(|error| panic!("bench setup: cannot read the root {path}: {error}"));
        let edited = text.replacen(
            "\"rotation\": [0, 0, 0, 1]",
            "\"rotation\": [0, 0, 1, 0]",
            1,
        );
        assert_ne!(
            edited, text,
            "bench setup: the root has no `Transform.rotation`"
        );
        // The concrete archetypes whose chain of parents reaches the root.
        let reaches = |name: &str| {
            let mut current = name.to_string();
            for _ in 0..8 {
                let Some((_, parents)) = library.declared(&current) else {
                    return false;
                };
                match parents.first() {
                    Some(parent) if parent == root => return true,
                    Some(parent) => current = parent.clone(),
                    None => return false,
                }
            }
            false
        };
        let leaves: Vec<String> = (library.names())
            .filter(|name| {
                let concrete = library
                    .declared(name)
                    .is_some_and(|(is_abstract, _)| !is_abstract);
                concrete && library.get(name).is_some() && reaches(name)
            })
            .map(str::to_string)
            .collect();
        assert!(!leaves.is_empty(), "bench setup: nothing builds on {root}");
        let mut world = World::new();
        for (i, leaf) in leaves.iter().enumerate() {
            let count = instances / leaves.len() + usize::from(i < instances % leaves.len());
            library
                .spawn_many(&mut world, leaf, count)
                .unwrap_or_else(|error| panic!("bench setup: cannot spawn {leaf}: {error}"));
        }
        RootEditFixture {
            library,
            world,
            path,
            texts: [edited, text],
            turn: 0,
            descendants: leaves.len(),
            _fixture: fixture,
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
        let text = &self.texts[self.turn % 2];
        self.turn += 1;
        let start = Instant::now();
        let update = self.library.set_source(&self.path, Some(text));
        let resolved = start.elapsed();
        let report = apply_update(&mut self.world, &self.library, &update);
        let applied = start.elapsed() - resolved;
        assert!(
            update.errors.is_empty(),
            "bench: the root's edit has errors: {report}"
        );
        assert!(
            report.entities_updated() > 0,
            "bench: nothing updated: {report}"
        );
        (resolved, applied)
    }
}
