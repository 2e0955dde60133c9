//! The layering rule, checked: a module imports only from its own layer or lower ones.
//!
//! ```text
//! fs, json, diagnostic, limits, logging, guide  <-  component  <-  archetype  <-  reload  <-  scene  <-  tooling, lib.rs
//! ```
//!
//! `tools/` (archetool) sits above all of them, as a crate of its own. The bottom layer holds
//! what every subsystem uses and that itself uses nothing above it: files (`fs/`), JSON
//! (`json/`), problems (`diagnostic.rs`, which names JSON paths and positions and reads each
//! code's explanation from the guide), the input limits (`limits.rs`), the shared parts of the
//! log (`logging.rs`) and the guide (`guide/`, whose code only finds a code's entry). The
//! crate root (`lib.rs`) and `tooling.rs` re-export from every layer, so they are the top.
//!
//! The test reads every `.rs` file under `engine/src/` and looks at each `crate::` path in its
//! code (comments left out; `use crate::{a, b::c}` groups too). A path's first segment is a
//! module, whose layer is in [`LAYERS`], or a name the crate root re-exports, whose layer is
//! that of the module it comes from (`crate::ArchetypeInstance` is `component`'s). A path to
//! a higher layer is a failure naming the file, the line and the path. Unit tests are held to
//! the rule too: a test that needs a higher layer belongs to that layer.

use std::path::{Path, PathBuf};

/// Every top-level module of the engine with its layer, from the bottom (0) up. A new module
/// gets a place here (the test fails until it has one).
const LAYERS: &[(&str, u8)] = &[
    ("fs", 0),
    ("json", 0),
    ("diagnostic", 0),
    ("limits", 0),
    ("logging", 0),
    ("guide", 0),
    ("component", 1),
    ("archetype", 2),
    ("reload", 3),
    ("scene", 4),
    ("tooling", 5),
    ("inspector", 5),
    ("lib", 5),
    // This check itself: test code that reads files, above everything.
    ("layering", 5),
];

/// The layer names, from the bottom up, for messages.
const LAYER_NAMES: &[&str] = &[
    "fs, json, diagnostic, limits, logging, guide",
    "component",
    "archetype",
    "reload",
    "scene",
    "tooling and the crate root",
];

/// The layer of the top-level module `name`.
fn layer_of(name: &str) -> Option<u8> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

/// A `crate::` path to a higher layer than its file's.
#[derive(Debug, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    /// The path as written, up to its first segment (`crate::scene`, `crate::ArchetypeLibrary`).
    path: String,
    from: u8,
    to: u8,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{}` reaches up from the {} layer to the {} layer",
            self.file,
            self.line,
            self.path,
            LAYER_NAMES[usize::from(self.from)],
            LAYER_NAMES[usize::from(self.to)],
        )
    }
}

/// The top-level module a file under `src/` belongs to: `component` for
/// `component/builtin.rs`, `diagnostic` for `diagnostic.rs`, `lib` for `lib.rs`.
fn module_of(relative: &str) -> &str {
    let first = relative.split('/').next().unwrap_or(relative);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The names the crate root re-exports (`pub use scene::{SceneError, ...};`), each with the
/// top-level module it comes from.
fn root_exports(lib_rs: &str) -> Vec<(String, String)> {
    let code = without_comments(lib_rs);
    let mut exports = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub use ") {
        let statement = &rest[at + "pub use ".len()..];
        let end = statement.find(';').unwrap_or(statement.len());
        let statement = &statement[..end];
        rest = &rest[at + "pub use ".len() + end..];
        let mut names = identifiers(statement);
        if names.is_empty() {
            continue;
        }
        let module = names.remove(0);
        if module == "crate" {
            continue;
        }
        exports.extend(names.into_iter().map(|name| (name, module.clone())));
    }
    exports
}

/// `text` with its `//` comments (doc comments included) blanked out, lines kept. Block
/// comments are not used in the engine.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers in `text`, in order.
fn identifiers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with(|c: char| c.is_alphabetic() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// The first segments of the `crate::` paths in the code of `text`, each with its line
/// (1-based): `crate::json::FieldPath` gives `json`; `crate::{json::FieldPath, Limits}` gives
/// `json` and `Limits`.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code = without_comments(text);
    let mut found = Vec::new();
    let line_of = |offset: usize| code[..offset].matches('\n').count() + 1;
    let mut from = 0;
    while let Some(at) = code[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        // `pub(crate)`-like words and identifiers ending in `crate` are not paths.
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            // A group: the first segment of each of its items (nested groups are deeper).
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphabetic() || c == '_') => {
                        let word: String = group[i..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        found.push((line_of(from + 1 + i), word));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !word.is_empty() {
                found.push((line_of(start), word));
            }
        }
    }
    found
}

/// The `crate::` paths in `text` (the file `relative` under `src/`) that reach a layer above
/// the file's. `exports` are the crate root's re-exports ([`root_exports`]).
fn violations(relative: &str, text: &str, exports: &[(String, String)]) -> Vec<Violation> {
    let Some(from) = layer_of(module_of(relative)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (line, first) in crate_paths(text) {
        let target = match layer_of(&first) {
            Some(_) => Some(first.as_str()),
            None => exports
                .iter()
                .find(|(name, _)| *name == first)
                .map(|(_, module)| module.as_str()),
        };
        let Some(to) = target.and_then(layer_of) else {
            continue;
        };
        if to > from {
            found.push(Violation {
                file: format!("engine/src/{relative}"),
                line,
                path: format!("crate::{first}"),
                from,
                to,
            });
        }
    }
    found
}

/// Every `.rs` file under `dir`, as paths relative to `root`, sorted.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
    out.sort();
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let read = |relative: &Path| {
        std::fs::read_to_string(src.join(relative))
            .unwrap_or_else(|error| panic!("reading {}: {error}", relative.display()))
    };
    let exports = root_exports(&read(Path::new("lib.rs")));
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut unplaced = Vec::new();
    let mut found = Vec::new();
    for relative in &files {
        let relative_text = relative.to_string_lossy().replace('\\', "/");
        let module = module_of(&relative_text).to_string();
        if layer_of(&module).is_none() {
            unplaced.push(relative_text);
            continue;
        }
        found.extend(violations(&relative_text, &read(relative), &exports));
    }
    assert!(
        unplaced.is_empty(),
        "top-level modules without a layer (give each one in `LAYERS`, engine/src/layering.rs): {unplaced:?}"
    );
    let listed: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(
        found.is_empty(),
        "imports from a higher layer (layers, bottom up: {}):\n{}",
        LAYER_NAMES.join(" <- "),
        listed.join("\n")
    );
}

#[test]
fn the_check_finds_upward_paths_written_every_way() {
    let lib_rs = "pub use archetype::{ArchetypeLibrary, LoadOptions};\n\
                  pub use component::{ArchetypeInstance, StableId};\n\
                  pub use scene::{\n    load_scene, SceneError,\n};\n\
                  pub use hecs;\n";
    let exports = root_exports(lib_rs);
    assert!(exports.contains(&("SceneError".to_string(), "scene".to_string())));
    let component = "//! Says crate::scene in a comment: not a path.\n\
                     use crate::json::FieldPath;\n\
                     use crate::scene::SceneError;\n\
                     use crate::{ArchetypeInstance, StableId};\n\
                     use crate::{\n    json::Position,\n    reload::ReloadReport,\n};\n\
                     pub(crate) fn f() -> crate::ArchetypeLibrary { todo!() } // crate::reload\n";
    let found = violations("component/example.rs", component, &exports);
    let described: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(
        described,
        [
            "engine/src/component/example.rs:3: `crate::scene` reaches up from the component layer to the scene layer",
            "engine/src/component/example.rs:7: `crate::reload` reaches up from the component layer to the reload layer",
            "engine/src/component/example.rs:9: `crate::ArchetypeLibrary` reaches up from the component layer to the archetype layer",
        ]
    );
    // The same code one layer up names only what is above that layer; at the top, nothing.
    let found = violations("archetype/example.rs", component, &exports);
    let paths: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, ["crate::scene", "crate::reload"]);
    assert!(violations("scene/example.rs", component, &exports).is_empty());
    assert!(violations("tooling.rs", component, &exports).is_empty());
}
