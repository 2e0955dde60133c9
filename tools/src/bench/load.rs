//! Load workloads: a generated tree of archetype files with 3-level inheritance, loaded and
//! validated by the library, against just reading every file and parsing it into a
//! `serde_json::Value`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use archetype_engine::{ArchetypeLibrary, ComponentRegistry};
use serde_json::Value;
use tempfile::TempDir;

use crate::bench::spawn::write;
use crate::demo::components;

/// Abstract roots of the generated tree.
pub const ROOTS: usize = 10;
/// Abstract mid-level archetypes, each extending one root.
pub const MIDS: usize = 100;

/// A directory of generated archetype files: [`ROOTS`] abstract roots, [`MIDS`] abstract
/// mid-level archetypes extending them, and concrete leaves extending those, each file writing
/// 4–6 components (7–9 after inheritance) in 270–470 bytes (380 on average), as a game's
/// content would.
pub struct LoadFixture {
    registry: Arc<ComponentRegistry>,
    dir: TempDir,
    files: usize,
    bytes: u64,
}

impl LoadFixture {
    /// Writes `files` archetype files (at least `ROOTS + MIDS + 1`) into a temporary directory
    /// and warms the page cache by reading them all once.
    ///
    /// # Panics
    /// If the files cannot be written, or the library does not load them with zero errors.
    pub fn generate(files: usize) -> Self {
        assert!(
            files > ROOTS + MIDS,
            "bench setup: need more than {} files",
            ROOTS + MIDS
        );
        let dir = tempfile::tempdir().expect("bench setup: cannot create a temporary directory");
        for root in 0..ROOTS {
            write(dir.path(), &root_path(root), &root_file(root));
        }
        for mid in 0..MIDS {
            write(dir.path(), &mid_path(mid), &mid_file(mid));
        }
        for leaf in 0..files - ROOTS - MIDS {
            write(dir.path(), &leaf_path(leaf), &leaf_file(leaf));
        }
        let mut fixture = LoadFixture {
            registry: Arc::new(components::registry()),
            dir,
            files,
            bytes: 0,
        };
        let parsed = fixture.read_and_parse();
        assert_eq!(parsed.len(), files, "bench setup: files went missing");
        fixture.bytes = walk(fixture.dir.path())
            .iter()
            .filter_map(|path| fs::metadata(path).ok())
            .map(|metadata| metadata.len())
            .sum();
        let library = fixture.load();
        assert_eq!(library.len(), files, "bench setup: the library lost files");
        fixture
    }

    /// Where the files are.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Number of archetype files.
    pub fn files(&self) -> usize {
        self.files
    }

    /// Total size of the files in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Ours: `ArchetypeLibrary::load` of the whole tree (read, parse, resolve inheritance,
    /// deserialize every concrete archetype into typed values).
    ///
    /// # Panics
    /// If the load reports any error.
    pub fn load(&self) -> ArchetypeLibrary {
        ArchetypeLibrary::load(self.dir.path(), self.registry.clone())
            .unwrap_or_else(|error| panic!("bench: the generated files must load cleanly: {error}"))
    }

    /// The library cooked ([`ArchetypeLibrary::cook`]) into a file beside the tree; returns
    /// its path.
    ///
    /// # Panics
    /// If the library does not cook or the file cannot be written.
    pub fn cook(&self) -> std::path::PathBuf {
        let cooked = self
            .load()
            .cook()
            .unwrap_or_else(|error| panic!("bench: cooking: {error}"));
        let path = self.dir.path().join("library.cook");
        fs::write(&path, cooked).unwrap_or_else(|error| panic!("bench: writing the cook: {error}"));
        path
    }

    /// Ours, shipped: [`ArchetypeLibrary::load_cooked_file`] of the cook at `path` (read the
    /// file, check it, build every archetype's spawn templates).
    ///
    /// # Panics
    /// If the cook does not load.
    pub fn load_cooked(&self, path: &Path) -> ArchetypeLibrary {
        let options = archetype_engine::LoadOptions::default();
        ArchetypeLibrary::load_cooked_file(path, self.dir.path(), self.registry.clone(), options)
            .unwrap_or_else(|error| panic!("bench: the cook must load: {error}"))
    }

    /// Baseline: walk the tree the way the library does (sorted, recursive, `*.json`), read
    /// every file and parse it into a `serde_json::Value`.
    ///
    /// # Panics
    /// If a file cannot be read or parsed.
    pub fn read_and_parse(&self) -> Vec<Value> {
        read_and_parse_dir(self.dir.path())
    }
}

/// Walks `root` the way the library does (sorted, recursive, `*.json`), reads every file and
/// parses it into a `serde_json::Value`: the baseline of the load figures.
///
/// # Panics
/// If a file cannot be read or parsed.
pub(crate) fn read_and_parse_dir(root: &Path) -> Vec<Value> {
    walk(root)
        .iter()
        .map(|path| {
            let bytes = fs::read(path)
                .unwrap_or_else(|error| panic!("bench: cannot read {}: {error}", path.display()));
            serde_json::from_slice::<Value>(&bytes)
                .unwrap_or_else(|error| panic!("bench: cannot parse {}: {error}", path.display()))
        })
        .collect()
}

/// Every `*.json` file under `root` that is not hidden, directories in sorted order, as the
/// library's own scan finds them.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                Ok(_) if name.ends_with(".json") => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files
}

const COLORS: [&str; 8] = [
    "Red", "Green", "Yellow", "Blue", "Magenta", "Cyan", "White", "Gray",
];
const CLANS: [&str; 8] = [
    "Bloodfang",
    "Ashen",
    "Greymoss",
    "Ironjaw",
    "Duskwater",
    "Thornback",
    "Ember",
    "Saltmarsh",
];
const FACTIONS: [&str; 3] = ["Hostile", "Friendly", "Neutral"];
const KINDS: [&str; 10] = [
    "goblin", "orc", "kobold", "skeleton", "bandit", "wolf", "spider", "cultist", "golem", "imp",
];
const RANKS: [&str; 10] = [
    "scout", "brute", "archer", "shaman", "captain", "runner", "guard", "elder", "whelp",
    "champion",
];

/// A deterministic spread of small numbers, so files differ without a random generator.
fn spread(i: usize, salt: usize, modulus: usize) -> usize {
    let x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (salt as u64) << 17;
    ((x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 33) as usize % modulus
}

pub(crate) fn root_path(root: usize) -> String {
    format!("base/{}.json", KINDS[root % KINDS.len()])
}

fn mid_name(mid: usize) -> String {
    let root = mid % ROOTS;
    format!(
        "{}/{}_{:02}",
        KINDS[root % KINDS.len()],
        RANKS[(mid / ROOTS) % RANKS.len()],
        mid
    )
}

pub(crate) fn mid_path(mid: usize) -> String {
    format!("{}.json", mid_name(mid))
}

pub(crate) fn leaf_path(leaf: usize) -> String {
    let mid = leaf % MIDS;
    format!("{}/unit_{leaf:05}.json", mid_name(mid))
}

/// One archetype file as a person writes it: format version, editor schema, then the keys.
fn file(depth: usize, extends: Option<&str>, is_abstract: bool, components: &[String]) -> String {
    let mut text = String::from("{\n");
    let _ = writeln!(
        text,
        "  \"$schema\": \"{}schema/archetype.schema.json\",",
        "../".repeat(depth + 1)
    );
    text.push_str("  \"format\": 1,\n");
    if is_abstract {
        text.push_str("  \"abstract\": true,\n");
    }
    if let Some(parent) = extends {
        let _ = writeln!(text, "  \"extends\": \"{parent}\",");
    }
    text.push_str("  \"components\": {\n    ");
    text.push_str(&components.join(",\n    "));
    text.push_str("\n  }\n}\n");
    text
}

/// Abstract root: complete values for 4–5 components.
fn root_file(root: usize) -> String {
    let hp = 8 + spread(root, 1, 20);
    let mut components = vec![
        "\"Transform\": { \"translation\": [0, 0, 0], \"rotation\": [0, 0, 0, 1], \"scale\": [1, 1, 1] }".to_string(),
        format!("\"Health\": {{ \"current\": {hp}, \"max\": {hp} }}"),
        format!("\"Speed\": {{ \"value\": {:.2} }}", 0.5 + spread(root, 2, 40) as f32 / 16.0),
        format!("\"Faction\": \"{}\"", FACTIONS[spread(root, 3, FACTIONS.len())]),
    ];
    if root.is_multiple_of(2) {
        components.push("\"Velocity\": { \"x\": 0.0, \"y\": 0.0 }".to_string());
    }
    file(1, None, true, &components)
}

/// Abstract mid-level: extends a root, overrides two components, adds two.
fn mid_file(mid: usize) -> String {
    let root = mid % ROOTS;
    let kind = KINDS[root % KINDS.len()];
    let attack = if mid.is_multiple_of(2) {
        format!(
            "\"Melee\": {{ \"damage\": {:.1}, \"cooldown\": {:.2} }}",
            1.0 + spread(mid, 7, 40) as f32 / 4.0,
            0.5 + spread(mid, 8, 8) as f32 / 8.0
        )
    } else {
        format!(
            "\"Armor\": {{ \"value\": {:.1} }}",
            spread(mid, 9, 20) as f32 / 2.0
        )
    };
    let components = [
        format!("\"Health\": {{ \"max\": {} }}", 10 + spread(mid, 4, 90)),
        format!(
            "\"Glyph\": {{ \"ch\": \"{}\", \"color\": \"{}\" }}",
            kind.chars().next().unwrap_or('?'),
            COLORS[spread(mid, 5, COLORS.len())]
        ),
        format!(
            "\"Faction\": \"{}\"",
            FACTIONS[spread(mid, 6, FACTIONS.len())]
        ),
        attack,
    ];
    file(
        1,
        Some(root_path(root).trim_end_matches(".json")),
        true,
        &components,
    )
}

/// Concrete leaf: extends a mid-level archetype, adds its name and overrides a few fields of
/// 3–5 inherited or new components (4–6 in all).
fn leaf_file(leaf: usize) -> String {
    let mid = leaf % MIDS;
    let root = mid % ROOTS;
    let hp = 5 + spread(leaf, 12, 200);
    let mut components = vec![
        format!(
            "\"Name\": \"{} {} of the {} clan, no. {leaf}\"",
            capitalized(KINDS[root % KINDS.len()]),
            RANKS[(mid / ROOTS) % RANKS.len()],
            CLANS[spread(leaf, 17, CLANS.len())]
        ),
        format!(
            "\"Transform\": {{ \"translation\": [{:.2}, 0.0, {:.2}], \"scale\": [1.1, 1.1, 1.1] }}",
            spread(leaf, 10, 6400) as f32 / 16.0 - 200.0,
            spread(leaf, 11, 6400) as f32 / 16.0 - 200.0
        ),
        format!(
            "\"Glyph\": {{ \"ch\": \"{}\" }}",
            char::from(b'a' + spread(leaf, 16, 26) as u8)
        ),
        format!("\"Health\": {{ \"current\": {hp}, \"max\": {hp} }}"),
    ];
    let extras = [
        leaf.is_multiple_of(3).then(|| {
            format!(
                "\"Speed\": {{ \"value\": {:.2} }}",
                0.5 + spread(leaf, 13, 64) as f32 / 16.0
            )
        }),
        leaf.is_multiple_of(2).then(|| {
            if mid.is_multiple_of(2) {
                format!(
                    "\"Melee\": {{ \"damage\": {:.1} }}",
                    1.0 + spread(leaf, 14, 80) as f32 / 4.0
                )
            } else {
                format!(
                    "\"Armor\": {{ \"value\": {:.1} }}",
                    spread(leaf, 15, 40) as f32 / 2.0
                )
            }
        }),
        (leaf % 5 == 1).then(|| {
            // The projectile is an `ArchetypeRef`, checked at load: name one that exists.
            format!(
                "\"Ranged\": {{ \"projectile\": \"{}\", \"range\": {:.1}, \"cooldown\": 1.25 }}",
                mid_name(mid),
                4.0 + spread(leaf, 18, 16) as f32 / 2.0
            )
        }),
    ];
    components.extend(extras.into_iter().flatten().take(2));
    file(2, Some(&mid_name(mid)), false, &components)
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
