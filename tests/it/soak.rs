//! Hot-reload soak: many random edits to a real archetypes directory, seen by the real watcher,
//! while a "game" keeps live instances and changes their state.
//!
//! Edits are valid versions, broken versions, half-written files (a prefix, then the rest),
//! atomic saves (a temporary file renamed over), deletes, renames and new files. After each
//! edit settles, the live world must equal what a fresh load of the last good files gives, plus
//! the game's runtime changes (those the archetype has not changed since): no panic, no missed
//! change, no stale entity.
//!
//! 100 edits by default; `ARCHETYPE_SOAK_EDITS=3000` runs more, `ARCHETYPE_SOAK_SEED=N` picks
//! another random sequence (the seed is printed when a run fails).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use archetype_engine::{
    ArchetypeInstance, ArchetypeLibrary, Children, ComponentRegistry, HotReloadOptions,
    HotReloader, LoadOptions,
};
use hecs::{Entity, World};
use serde::{Deserialize, Serialize};

use crate::support::{Health, Speed};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Label(String);

/// The test's own handle on an instance root (not registered: the library never touches it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tracker(u32);

fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Health>().unwrap();
    registry.register::<Speed>().unwrap();
    registry.register::<Label>().unwrap();
    registry
}

const TIMEOUT: Duration = Duration::from_secs(10);
/// Archetype names the edits use: `base` (abstract) and the units that may extend it.
const UNITS: [&str; 5] = ["unit0", "unit1", "unit2", "unit3", "unit4"];

/// SplitMix64: a small deterministic generator, so a failing run can be repeated by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn base_text(rng: &mut Rng) -> String {
    format!(
        r#"{{ "abstract": true, "components": {{ "Health": {{ "current": {}, "max": {} }}, "Speed": {{ "value": {} }} }} }}"#,
        rng.below(20) + 1,
        rng.below(20) + 10,
        rng.below(4)
    )
}

/// A valid unit: extends `base` or not (then its values are complete), with or without a
/// child.
fn unit_text(rng: &mut Rng) -> String {
    let mut components = Vec::new();
    let extends = rng.chance(70);
    if extends {
        match rng.below(4) {
            0 => components.push(format!(r#""Health": {{ "max": {} }}"#, rng.below(50) + 1)),
            1 => components.push(r#""Health": null"#.to_string()),
            _ => {}
        }
        if rng.chance(40) {
            components.push(format!(r#""Speed": {{ "value": {} }}"#, rng.below(8)));
        }
    } else if rng.chance(80) {
        components.push(format!(
            r#""Health": {{ "current": {}, "max": {} }}"#,
            rng.below(20),
            rng.below(50)
        ));
    }
    if rng.chance(50) {
        components.push(format!(r#""Label": "l{}""#, rng.below(5)));
    }
    let children = match rng.below(3) {
        0 => String::new(),
        1 => format!(
            r#", "children": {{ "arm": {{ "components": {{ "Label": "arm{}" }} }} }}"#,
            rng.below(3)
        ),
        _ => format!(
            r#", "children": {{ "arm": {{ "components": {{ "Speed": {{ "value": {} }} }} }}, "leg": {{}} }}"#,
            rng.below(3)
        ),
    };
    format!(
        r#"{{ {}"components": {{ {} }}{children} }}"#,
        if extends {
            r#""extends": "base", "#
        } else {
            ""
        },
        components.join(", ")
    )
}

/// Broken versions of a file: each is an error in the file itself.
const BROKEN: [&str; 5] = [
    r#"{ "extends": "base", "components": "#,
    r#"{ "components": { "Health": { "current": "full", "max": 1 } } }"#,
    r#"{ "components": { "Helth": {} } }"#,
    r#"{ "extends": "bsae" }"#,
    r#"{ "components": {}, "components": {} }"#,
];

/// What the test knows about a file: its text, and whether it is a valid version.
#[derive(Clone, Debug, PartialEq)]
struct File {
    text: String,
    valid: bool,
}

/// One live instance: the tracker on its root, and the archetype it was spawned from.
struct Instance {
    tracker: u32,
    name: String,
    root: Entity,
}

/// The texts an archetype was in effect with: its own file and the files it depends on.
type Snapshot = BTreeMap<String, String>;

struct Soak {
    dir: tempfile::TempDir,
    library: ArchetypeLibrary,
    world: World,
    reloader: HotReloader,
    rng: Rng,
    /// File name (`unit0.json`) → what is on disk.
    files: BTreeMap<String, File>,
    /// Archetype name → the files it is in effect with (its last good version).
    effective: BTreeMap<String, Snapshot>,
    instances: Vec<Instance>,
    /// Tracker → `Health.current` the game set (dropped when the archetype changes it).
    runtime: BTreeMap<u32, f32>,
    next_tracker: u32,
}

fn file_of(name: &str) -> String {
    format!("{name}.json")
}

impl Soak {
    fn start(seed: u64) -> Soak {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng(seed);
        let mut files = BTreeMap::new();
        files.insert(
            file_of("base"),
            File {
                text: base_text(&mut rng),
                valid: true,
            },
        );
        for name in &UNITS[..3] {
            files.insert(
                file_of(name),
                File {
                    text: unit_text(&mut rng),
                    valid: true,
                },
            );
        }
        for (file, content) in &files {
            fs::write(dir.path().join(file), &content.text).unwrap();
        }
        let library = ArchetypeLibrary::load(dir.path(), registry()).unwrap();
        let mut options = HotReloadOptions::default();
        options.debounce = Duration::from_millis(20);
        let reloader = HotReloader::with_options(dir.path(), options).unwrap();
        let mut soak = Soak {
            dir,
            library,
            world: World::new(),
            reloader,
            rng,
            files,
            effective: BTreeMap::new(),
            instances: Vec::new(),
            runtime: BTreeMap::new(),
            next_tracker: 0,
        };
        soak.update_effective();
        soak.spawn_missing();
        soak
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The files `name` depends on, itself included (`None` if one is missing).
    fn closure(&self, name: &str) -> Option<Vec<String>> {
        let own = self.files.get(&file_of(name))?;
        let mut closure = vec![file_of(name)];
        if own.text.contains(r#""extends": "base""#) {
            self.files.get(&file_of("base"))?;
            closure.push(file_of("base"));
        }
        Some(closure)
    }

    /// Whether `name` and everything it depends on are valid now.
    fn is_good(&self, name: &str) -> bool {
        self.closure(name)
            .is_some_and(|files| files.iter().all(|f| self.files[f].valid))
    }

    /// Records the new last good version of every archetype whose files are all valid, and
    /// drops runtime changes the new version overwrites.
    fn update_effective(&mut self) {
        let names: Vec<String> = self
            .files
            .keys()
            .map(|f| f.trim_end_matches(".json").to_string())
            .collect();
        for name in names {
            if name == "base" || !self.is_good(&name) {
                continue;
            }
            let snapshot: Snapshot = self
                .closure(&name)
                .unwrap()
                .into_iter()
                .map(|file| {
                    let text = self.files[&file].text.clone();
                    (file, text)
                })
                .collect();
            let old = self.effective.insert(name.clone(), snapshot.clone());
            if let Some(old) = old.filter(|old| *old != snapshot) {
                // Hot reload writes the fields whose value changed: a runtime change to a
                // field the new version changes is overwritten.
                let before = root_health(&old, &name);
                let after = root_health(&snapshot, &name);
                let overwritten = match (before, after) {
                    (Some(before), Some(after)) => before.current != after.current,
                    _ => true,
                };
                if overwritten {
                    for instance in self.instances.iter().filter(|i| i.name == name) {
                        self.runtime.remove(&instance.tracker);
                    }
                }
            }
        }
    }

    fn spawn_missing(&mut self) {
        let names: Vec<String> = self.effective.keys().cloned().collect();
        for name in names {
            let live = self.instances.iter().filter(|i| i.name == name).count();
            if live >= 2 || !self.is_good(&name) {
                continue;
            }
            let root = self
                .library
                .spawn(&mut self.world, &name)
                .unwrap_or_else(|error| panic!("spawning {name}: {error}"));
            self.world
                .insert_one(root, Tracker(self.next_tracker))
                .unwrap();
            self.instances.push(Instance {
                tracker: self.next_tracker,
                name,
                root,
            });
            self.next_tracker += 1;
        }
    }

    /// The game changes `Health.current` on a random instance.
    fn runtime_change(&mut self) {
        if self.instances.is_empty() {
            return;
        }
        let index = self.rng.below(self.instances.len());
        let (tracker, root) = (self.instances[index].tracker, self.instances[index].root);
        let value = self.rng.below(1000) as f32 / 10.0;
        if let Ok(mut health) = self.world.get::<&mut Health>(root) {
            health.current = value;
            self.runtime.insert(tracker, value);
        }
    }

    fn write(&self, file: &str, text: &str) {
        fs::write(self.root().join(file), text).unwrap();
    }

    /// One random edit of the directory.
    fn edit(&mut self) -> String {
        let present: Vec<String> = self.files.keys().cloned().collect();
        let absent: Vec<String> = UNITS
            .iter()
            .map(|n| file_of(n))
            .chain(std::iter::once(file_of("base")))
            .filter(|f| !self.files.contains_key(f))
            .collect();
        let valid_text = |rng: &mut Rng, file: &str| {
            if file == "base.json" {
                base_text(rng)
            } else {
                unit_text(rng)
            }
        };
        if present.is_empty() {
            // Everything was deleted: start again.
            let to = self.rng.pick(&absent).clone();
            let text = valid_text(&mut self.rng, &to);
            self.write(&to, &text);
            self.files.insert(to.clone(), File { text, valid: true });
            return format!("new file {to}");
        }
        let kind = self.rng.below(100);
        let file = self.rng.pick(&present).clone();
        match kind {
            // A valid edit, written in place.
            0..=34 => {
                let text = valid_text(&mut self.rng, &file);
                self.write(&file, &text);
                self.files.insert(file.clone(), File { text, valid: true });
                format!("valid edit of {file}")
            }
            // A broken edit.
            35..=49 => {
                let text = self.rng.pick(&BROKEN).to_string();
                self.write(&file, &text);
                self.files.insert(file.clone(), File { text, valid: false });
                format!("broken edit of {file}")
            }
            // Half written: a prefix, a pause (sometimes longer than the debounce), the rest.
            50..=64 => {
                let text = valid_text(&mut self.rng, &file);
                let cut = self.rng.below(text.len());
                fs::write(self.root().join(&file), &text.as_bytes()[..cut]).unwrap();
                std::thread::sleep(Duration::from_millis(self.rng.below(40) as u64));
                let mut handle = fs::OpenOptions::new()
                    .append(true)
                    .open(self.root().join(&file))
                    .unwrap();
                std::io::Write::write_all(&mut handle, &text.as_bytes()[cut..]).unwrap();
                drop(handle);
                self.files.insert(file.clone(), File { text, valid: true });
                format!("half-written edit of {file}")
            }
            // An atomic save: a temporary file renamed over the target.
            65..=74 => {
                let text = valid_text(&mut self.rng, &file);
                let temp = self.root().join(format!("{file}.tmp"));
                fs::write(&temp, &text).unwrap();
                fs::rename(&temp, self.root().join(&file)).unwrap();
                self.files.insert(file.clone(), File { text, valid: true });
                format!("atomic save of {file}")
            }
            // A delete (the base only rarely).
            75..=82 if file != "base.json" || self.rng.chance(20) => {
                fs::remove_file(self.root().join(&file)).unwrap();
                self.files.remove(&file);
                format!("delete of {file}")
            }
            // A rename to a free name.
            83..=89 if !absent.is_empty() && file != "base.json" => {
                let to = self.rng.pick(&absent).clone();
                if to == "base.json" {
                    return self.edit();
                }
                fs::rename(self.root().join(&file), self.root().join(&to)).unwrap();
                let content = self.files.remove(&file).unwrap();
                self.files.insert(to.clone(), content);
                format!("rename of {file} to {to}")
            }
            // A new file.
            _ if !absent.is_empty() => {
                let to = self.rng.pick(&absent).clone();
                let text = valid_text(&mut self.rng, &to);
                self.write(&to, &text);
                self.files.insert(to.clone(), File { text, valid: true });
                format!("new file {to}")
            }
            _ => {
                let text = valid_text(&mut self.rng, &file);
                self.write(&file, &text);
                self.files.insert(file.clone(), File { text, valid: true });
                format!("valid edit of {file}")
            }
        }
    }

    /// Runs frames until the library is in the state a fresh load of the files on disk gives
    /// (the same diagnostics, the same content for every archetype whose files are valid).
    fn settle(&mut self, what: &str) {
        let started = Instant::now();
        loop {
            self.reloader.apply(&mut self.world, &mut self.library);
            let fresh = match ArchetypeLibrary::load(self.root(), registry()) {
                Ok(library) => library,
                Err(error) => error.into_partial(),
            };
            let diagnostics = |library: &ArchetypeLibrary| -> Vec<String> {
                library
                    .diagnostics()
                    .iter()
                    .map(|d| d.to_string())
                    .collect()
            };
            let same_content = self
                .effective
                .keys()
                .filter(|n| self.is_good(n))
                .all(|name| {
                    let resolved = |library: &ArchetypeLibrary| {
                        library.get(name).map(|a| a.resolved().to_json())
                    };
                    resolved(&self.library).is_some() && resolved(&self.library) == resolved(&fresh)
                });
            if same_content && diagnostics(&self.library) == diagnostics(&fresh) {
                return;
            }
            assert!(
                started.elapsed() < TIMEOUT,
                "timed out after {what}: the library never matched the files on disk\nlive: {:#?}\nfresh: {:#?}",
                diagnostics(&self.library),
                diagnostics(&fresh)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The live world equals a fresh spawn of each instance from its last good files, plus the
    /// runtime changes; and it holds no other entity.
    fn check(&self, what: &str) {
        let mut expected_entities = 0;
        for instance in &self.instances {
            let snapshot = &self.effective[&instance.name];
            let (library, world, root) = fresh_instance(snapshot, &instance.name);
            if let Some(current) = self.runtime.get(&instance.tracker) {
                if let Ok(mut health) = world.get::<&mut Health>(root) {
                    health.current = *current;
                }
            }
            let expected = describe(&world, &library, root);
            expected_entities += expected.len();
            let live = describe(&self.world, &self.library, instance.root);
            assert_eq!(
                live, expected,
                "after {what}: instance {} of `{}` differs from a fresh load of\n{snapshot:#?}",
                instance.tracker, instance.name
            );
        }
        assert_eq!(
            self.world.len() as usize,
            expected_entities,
            "after {what}: stale or missing entities"
        );
    }
}

/// A library of just `snapshot`'s files, and one instance of `name` spawned from it.
fn fresh_instance(snapshot: &Snapshot, name: &str) -> (ArchetypeLibrary, World, Entity) {
    let mut library = ArchetypeLibrary::empty("fresh", registry(), LoadOptions::default());
    library.set_sources(snapshot.iter().map(|(f, t)| (f.as_str(), Some(t.as_str()))));
    let mut world = World::new();
    let root = library
        .spawn(&mut world, name)
        .unwrap_or_else(|error| panic!("{name} from {snapshot:#?}: {error}"));
    (library, world, root)
}

/// The root `Health` an archetype's instance gets from `snapshot`.
fn root_health(snapshot: &Snapshot, name: &str) -> Option<Health> {
    let (_, world, root) = fresh_instance(snapshot, name);
    let health = world.get::<&Health>(root).ok().map(|h| (*h).clone());
    health
}

/// Every entity of an instance by path, with its components, for comparison.
fn describe(world: &World, library: &ArchetypeLibrary, root: Entity) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root];
    while let Some(entity) = stack.pop() {
        let marker = *world.get::<&ArchetypeInstance>(entity).unwrap();
        let path = library.node_path(marker).unwrap().to_string();
        let components = format!(
            "{:?} {:?} {:?}",
            world.get::<&Health>(entity).ok().map(|h| (*h).clone()),
            world.get::<&Speed>(entity).ok().map(|s| (*s).clone()),
            world.get::<&Label>(entity).ok().map(|l| (*l).clone()),
        );
        assert!(out.insert(path, components).is_none(), "a path twice");
        if let Ok(children) = world.get::<&Children>(entity) {
            stack.extend(children.0.iter().map(|c| c.entity()));
        }
    }
    out
}

#[test]
fn random_edits_with_the_real_watcher_keep_the_world_consistent() {
    let edits: usize = std::env::var("ARCHETYPE_SOAK_EDITS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let seed: u64 = std::env::var("ARCHETYPE_SOAK_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    let started = Instant::now();
    let mut soak = Soak::start(seed);
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    for step in 0..edits {
        for _ in 0..3 {
            soak.runtime_change();
        }
        let what = format!("edit {step} (seed {seed}): {}", soak.edit());
        // "valid edit of unit1.json", "new file unit3.json": the kind is what precedes the file.
        let done = what.split(": ").nth(1).unwrap();
        let kind = done
            .split([' '])
            .take_while(|w| !w.ends_with(".json") && *w != "of");
        kinds.insert(kind.collect::<Vec<_>>().join(" "));
        soak.update_effective();
        soak.settle(&what);
        soak.check(&what);
        soak.spawn_missing();
    }
    eprintln!(
        "soak: {edits} edits (seed {seed}) in {:.1} s, {} instances, kinds {kinds:?}",
        started.elapsed().as_secs_f64(),
        soak.instances.len()
    );
}
