//! Worst cases of reporting problems: one archetype file with thousands of unknown fields,
//! loaded by the library, checked by `archetool fmt --check`, reported by `archetool validate`.
//! Each must cost time linear in the file and print output linear in the number of problems.

use std::path::Path;
use std::sync::Arc;

use archetype_engine::{ArchetypeLibrary, ComponentRegistry};
use tempfile::TempDir;

use crate::bench::spawn::write;
use crate::cli;
use crate::demo::components;

/// How the fields of a [`FieldsFixture`] file are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One field per line, indented: a file as an editor writes it.
    Pretty,
    /// The whole file on one line: a file written by a program.
    Minified,
}

/// An archetypes directory with one file, `goblin.json`, whose `Health` holds its two fields
/// and `fields` more that `Health` does not have (`"x00000": 0`): one `unknown-field` error
/// each. Pretty, 40,000 of them make 760 KB; minified, 200,000 make 2.3 MB.
pub struct FieldsFixture {
    registry: Arc<ComponentRegistry>,
    dir: TempDir,
    fields: usize,
    bytes: usize,
}

impl FieldsFixture {
    /// Writes the file.
    ///
    /// # Panics
    /// If the file cannot be written.
    pub fn new(fields: usize, layout: Layout) -> Self {
        let text = fields_file(fields, layout);
        let dir = tempfile::tempdir().expect("bench setup: cannot create a temporary directory");
        write(dir.path(), "goblin.json", &text);
        FieldsFixture {
            registry: Arc::new(components::registry()),
            dir,
            fields,
            bytes: text.len(),
        }
    }

    /// The archetypes directory.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Unknown fields in the file (and so errors).
    pub fn fields(&self) -> usize {
        self.fields
    }

    /// Size of the file in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Loads the directory with the library and returns how many diagnostics it has.
    pub fn load(&self) -> usize {
        match ArchetypeLibrary::load(self.root(), Arc::clone(&self.registry)) {
            Ok(library) => library.diagnostics().len(),
            Err(error) => error.diagnostics().len(),
        }
    }

    /// Runs `archetool` with `args` (and `--dir` the directory) and returns what it printed
    /// on its standard output.
    pub fn run(&self, args: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        let dir = self.root().to_string_lossy().into_owned();
        let mut all = vec!["archetool"];
        all.extend(args);
        all.extend(["--dir", dir.as_str()]);
        cli::run(all, components::registry(), &mut out, &mut std::io::sink());
        out
    }
}

/// The text of a [`FieldsFixture`] file.
pub fn fields_file(fields: usize, layout: Layout) -> String {
    let names = (0..fields).map(|i| format!("\"x{i:05}\": 0"));
    match layout {
        Layout::Pretty => {
            let mut members = vec!["\"current\": 10".to_string(), "\"max\": 10".to_string()];
            members.extend(names);
            format!(
                "{{\n  \"components\": {{\n    \"Health\": {{\n      {}\n    }}\n  }}\n}}\n",
                members.join(",\n      ")
            )
        }
        Layout::Minified => {
            let mut members = vec!["\"current\":10".to_string(), "\"max\":10".to_string()];
            members.extend(names.map(|name| name.replace(": ", ":")));
            format!(
                "{{\"components\":{{\"Health\":{{{}}}}}}}",
                members.join(",")
            )
        }
    }
}
