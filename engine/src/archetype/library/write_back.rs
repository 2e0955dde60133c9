//! Writing values back into archetype files, the designer's loop closed: a value found by
//! play-testing becomes the archetype's value (the file edited only where that value is), or
//! an entity's differences become a new archetype that `extends` its own.
//!
//! Files are read and written through the one file rule (a regular file within the size limit,
//! inside the archetypes root, replaced atomically); names are held to the loader's rules
//! ([`ArchetypeLibrary::check_new_name`]). Nothing here reloads: the caller reloads the written
//! file ([`ArchetypeLibrary::reload_files`], or the hot reloader sees it), and every instance
//! follows as if the designer had typed the change.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{file_of_name, ArchetypeLibrary};
use crate::archetype::file::keys;
use crate::archetype::name::NewNameError;
use crate::fs::{create_atomically, read_regular_file, real_path_inside, write_atomically};
use crate::json::{parse_json, set_value_in_text, SourceText, ValueEditRefused};
use crate::json::{FieldPath, PathSegment, Pretty};

/// One value to write into an archetype: `component`'s `field` (the empty path: the whole
/// value) set to `value`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldValue {
    /// The component's name as registered (or one of its aliases).
    pub component: String,
    /// The place inside the component's value.
    pub field: FieldPath,
    /// The value to write there.
    pub value: Value,
}

impl FieldValue {
    /// `component`'s `field` set to `value`.
    pub fn new(component: impl Into<String>, field: FieldPath, value: Value) -> Self {
        FieldValue {
            component: component.into(),
            field,
            value,
        }
    }
}

impl FieldValue {
    /// The values a merge patch of `component` sets (a scene's difference of an instance from
    /// its archetype), one per leaf: a scalar or an array at its path (the whole value when the
    /// patch is not an object). The places it removes (`null`) are left out: an archetype file
    /// removes nothing by a value.
    ///
    /// # Example
    /// ```
    /// use archetype_engine::FieldValue;
    /// let patch = serde_json::json!({ "max": 30, "regen": null });
    /// let values = FieldValue::from_patch("Health", &patch);
    /// assert_eq!(values.len(), 1);
    /// assert_eq!(values[0].field.to_string(), "max");
    /// ```
    pub fn from_patch(component: &str, patch: &Value) -> Vec<FieldValue> {
        let mut values = Vec::new();
        collect_leaves(component, patch, &mut FieldPath::root(), &mut values);
        values
    }
}

fn collect_leaves(component: &str, patch: &Value, at: &mut FieldPath, out: &mut Vec<FieldValue>) {
    match patch {
        Value::Null => {}
        Value::Object(members) if !members.is_empty() => {
            for (key, member) in members {
                at.push(PathSegment::Key(key.clone()));
                collect_leaves(component, member, at, out);
                at.0.pop();
            }
        }
        leaf => out.push(FieldValue::new(component, at.clone(), leaf.clone())),
    }
}

/// Why an archetype file was not written; nothing was changed on disk.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteBackError {
    /// The library has no archetype of that name.
    #[error("no archetype `{name}` in the library")]
    UnknownArchetype {
        /// The name asked for.
        name: String,
    },
    /// The archetype's text was given without a file
    /// ([`set_source`](ArchetypeLibrary::set_source)), so there is none to write.
    #[error("archetype `{name}` has no file to write (its text was given without one)")]
    NoFile {
        /// The archetype.
        name: String,
    },
    /// The file to write is not inside the archetypes root (a directory on its way is a
    /// symbolic link out of it).
    #[error("`{file}` is outside the archetypes root `{root}`; nothing was written")]
    OutsideRoot {
        /// The file.
        file: PathBuf,
        /// The root.
        root: PathBuf,
    },
    /// The file's text has no object to hold the value at that place (the path goes through
    /// a number, a string or an array element the file does not have).
    #[error("`{file}` has no object at `{place}` to hold {component}.{field}; edit it by hand")]
    NoPlace {
        /// The file.
        file: PathBuf,
        /// The component.
        component: String,
        /// The field.
        field: FieldPath,
        /// As much of the place as the file has, as a JSON pointer.
        place: String,
    },
    /// The component is one the library sets itself (`Parent`, `Children`, the instance
    /// marker): archetype files do not write it.
    #[error("`{component}` is set by the library; archetype files do not write it")]
    Managed {
        /// The component.
        component: String,
    },
    /// The new archetype's name breaks a naming rule or is taken.
    #[error("{0}")]
    Name(NewNameError),
    /// A file of the new archetype's name appeared meanwhile; it was left as it is.
    #[error("`{file}` exists already; it was left as it is")]
    Exists {
        /// The file.
        file: PathBuf,
    },
    /// The text to write would be over the file size limit
    /// ([`Limits::max_file_bytes`](crate::Limits::max_file_bytes)).
    #[error("`{file}` would be {bytes} bytes, over the limit of {limit}; nothing was written")]
    TooLarge {
        /// The file.
        file: PathBuf,
        /// Its size with the values written.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The text to write would not load: the file is not JSON as it is (a designer's edit in
    /// progress), or the values nest deeper than
    /// [`Limits::max_depth`](crate::Limits::max_depth).
    #[error("`{file}` would not load ({message} at line {line}); nothing was written")]
    WouldNotLoad {
        /// The file.
        file: PathBuf,
        /// The line of the problem in the text to write.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing the file failed.
    #[error("cannot write `{file}`: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
}

impl ArchetypeLibrary {
    /// Writes `values` into archetype `name`'s own file, each at its place under
    /// `components`, with the smallest text edit: an existing value's bytes replaced, a
    /// missing one added to the deepest object the file has on the way. The rest of the file
    /// stays byte for byte; the file is replaced atomically. Returns the file written.
    ///
    /// The library does not change until the file is reloaded
    /// ([`reload_files`](Self::reload_files), or the hot reloader).
    ///
    /// # Errors
    /// A [`WriteBackError`]; the file is then unchanged.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, FieldPath, FieldValue};
    /// # let dir = tempfile::tempdir()?;
    /// let text = "{\n  \"components\": { \"Name\": \"Goblin\" }\n}\n";
    /// std::fs::write(dir.path().join("goblin.json"), text)?;
    /// let library = ArchetypeLibrary::load(dir.path(), ComponentRegistry::new())?;
    /// let name = FieldValue::new("Name", FieldPath::root(), serde_json::json!("Grukk"));
    /// library.write_to_archetype("goblin", &[name])?;
    /// assert_eq!(
    ///     std::fs::read_to_string(dir.path().join("goblin.json"))?,
    ///     "{\n  \"components\": { \"Name\": \"Grukk\" }\n}\n"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to_archetype(
        &self,
        name: &str,
        values: &[FieldValue],
    ) -> Result<PathBuf, WriteBackError> {
        self.write_to_archetype_child(name, "", values)
    }

    /// Writes `values` into the child entity `child` (its path in the archetype's `children`,
    /// names joined by `/`; `""`: the root) of archetype `name`, in `name`'s own file, as
    /// [`write_to_archetype`](Self::write_to_archetype) writes a root's: under
    /// `children.<child>.components`, added where the file does not have it yet (a child the
    /// archetype inherits gets its override there, as a designer would write it).
    ///
    /// # Errors
    /// A [`WriteBackError`]; the file is then unchanged.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry, FieldPath, FieldValue};
    /// # let dir = tempfile::tempdir()?;
    /// let text = r#"{ "components": {}, "children": { "gun": { "components": { "Name": "Gun" } } } }"#;
    /// std::fs::write(dir.path().join("turret.json"), text)?;
    /// let library = ArchetypeLibrary::load(dir.path(), ComponentRegistry::new())?;
    /// let name = FieldValue::new("Name", FieldPath::root(), serde_json::json!("Cannon"));
    /// library.write_to_archetype_child("turret", "gun", &[name])?;
    /// assert_eq!(
    ///     std::fs::read_to_string(dir.path().join("turret.json"))?,
    ///     r#"{ "components": {}, "children": { "gun": { "components": { "Name": "Cannon" } } } }"#
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_to_archetype_child(
        &self,
        name: &str,
        child: &str,
        values: &[FieldValue],
    ) -> Result<PathBuf, WriteBackError> {
        let file = self.writable_file_of(name)?;
        self.check_writable_components(values.iter().map(|value| value.component.as_str()))?;
        let mut node = Vec::new();
        for step in child.split('/').filter(|step| !step.is_empty()) {
            node.push(PathSegment::Key(keys::CHILDREN.to_string()));
            node.push(PathSegment::Key(step.to_string()));
        }
        let io_error = |source| WriteBackError::Io {
            file: file.clone(),
            source,
        };
        let bytes =
            read_regular_file(&file, self.options().limits.max_file_bytes).map_err(io_error)?;
        let mut text = String::from_utf8(bytes)
            .map_err(|error| io_error(io::Error::new(io::ErrorKind::InvalidData, error)))?;
        for value in values {
            text = self.with_value(&text, &file, &node, value)?;
        }
        self.check_loadable(&file, &text)?;
        write_atomically(&file, text.as_bytes()).map_err(io_error)?;
        Ok(file)
    }

    /// Creates archetype `name`'s file: `{ "extends": base, "components": components }`
    /// (the components as merge patches onto `base`'s, typically an entity's differences from
    /// it), laid out as `archetool fmt` would. `name` is held to the rules a load holds a
    /// file's name to ([`check_new_name`](Self::check_new_name)); an existing file is never
    /// replaced. Returns the file written.
    ///
    /// # Errors
    /// [`WriteBackError::Name`] for a name the rules refuse (`../outside` included),
    /// [`WriteBackError::UnknownArchetype`] for an unknown `base`, and the others of
    /// [`WriteBackError`]; nothing is then written.
    ///
    /// # Example
    /// ```
    /// # use archetype_engine::{ArchetypeLibrary, ComponentRegistry};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("goblin.json"), r#"{ "components": { "Name": "Goblin" } }"#)?;
    /// let library = ArchetypeLibrary::load(dir.path(), ComponentRegistry::new())?;
    /// let differences = serde_json::json!({ "Name": "Grukk" });
    /// library.write_derived_archetype("grukk", "goblin", differences.as_object().unwrap())?;
    /// assert_eq!(
    ///     std::fs::read_to_string(dir.path().join("grukk.json"))?,
    ///     "{\n  \"extends\": \"goblin\",\n  \"components\": {\n    \"Name\": \"Grukk\"\n  }\n}\n"
    /// );
    /// assert!(library.write_derived_archetype("../grukk", "goblin", &Default::default()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_derived_archetype(
        &self,
        name: &str,
        base: &str,
        components: &Map<String, Value>,
    ) -> Result<PathBuf, WriteBackError> {
        if self.get(base).is_none() {
            let name = base.to_string();
            return Err(WriteBackError::UnknownArchetype { name });
        }
        self.check_new_name(name).map_err(WriteBackError::Name)?;
        self.check_writable_components(components.keys().map(String::as_str))?;
        let file = file_of_name(self.root(), name);
        let io_error = |source| WriteBackError::Io {
            file: file.clone(),
            source,
        };
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(io_error)?;
            self.check_inside_root(parent, &file)?;
        }
        let text = derived_text(base, components);
        self.check_loadable(&file, &text)?;
        match create_atomically(&file, text.as_bytes()).map_err(io_error)? {
            true => Ok(file),
            false => Err(WriteBackError::Exists { file }),
        }
    }

    /// The real path of archetype `name`'s file, checked to be inside the root.
    fn writable_file_of(&self, name: &str) -> Result<PathBuf, WriteBackError> {
        if self.get(name).is_none() && self.file_of(name).is_none() {
            let name = name.to_string();
            return Err(WriteBackError::UnknownArchetype { name });
        }
        let Some(real) = self.real_file_of(name) else {
            let name = name.to_string();
            return Err(WriteBackError::NoFile { name });
        };
        let real = real.to_path_buf();
        self.check_inside_root(&real, &real)?;
        Ok(real)
    }

    /// Whether `text` (to be written to `file`) is within the limits a load holds the file to
    /// and parses as JSON, by the loader's own parser.
    fn check_loadable(&self, file: &Path, text: &str) -> Result<(), WriteBackError> {
        let limits = &self.options().limits;
        let bytes = text.len() as u64;
        if bytes > limits.max_file_bytes {
            let (file, limit) = (file.to_path_buf(), limits.max_file_bytes);
            return Err(WriteBackError::TooLarge { file, bytes, limit });
        }
        let parsed = SourceText::from_bytes(text.as_bytes().to_vec())
            .and_then(|source| parse_json(&source, limits.max_depth));
        match parsed {
            Ok(_) => Ok(()),
            Err(error) => Err(WriteBackError::WouldNotLoad {
                file: file.to_path_buf(),
                line: error.position.line,
                message: error.message,
            }),
        }
    }

    /// [`WriteBackError::OutsideRoot`] unless `path`'s real path is inside the root.
    fn check_inside_root(&self, path: &Path, file: &Path) -> Result<(), WriteBackError> {
        match real_path_inside(self.root(), path) {
            Some(_) => Ok(()),
            None => Err(WriteBackError::OutsideRoot {
                file: file.to_path_buf(),
                root: self.root().to_path_buf(),
            }),
        }
    }

    /// [`WriteBackError::Managed`] for the first of `components` the library sets itself.
    fn check_writable_components<'c>(
        &self,
        mut components: impl Iterator<Item = &'c str>,
    ) -> Result<(), WriteBackError> {
        let registry = self.registry();
        let managed = |name: &&str| registry.id(name).is_some_and(|id| registry.is_managed(id));
        match components.find(managed) {
            Some(component) => Err(WriteBackError::Managed {
                component: component.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// `text` (of `file`) with `value` set at its place in the entity at `node` (the path of
    /// its `children` members; empty: the root).
    fn with_value(
        &self,
        text: &str,
        file: &Path,
        node: &[PathSegment],
        value: &FieldValue,
    ) -> Result<String, WriteBackError> {
        let mut path = node.to_vec();
        path.push(PathSegment::Key(keys::COMPONENTS.to_string()));
        let key = self.component_key_in(text, &path, &value.component);
        path.push(PathSegment::Key(key));
        path.extend(value.field.segments().iter().cloned());
        set_value_in_text(text, &path, &value.value).map_err(|refused| {
            let matched = match refused {
                ValueEditRefused::NotJson => 0,
                ValueEditRefused::NotAnObject { matched } => matched,
            };
            WriteBackError::NoPlace {
                file: file.to_path_buf(),
                component: value.component.clone(),
                field: value.field.clone(),
                place: FieldPath::from(path[..matched].to_vec()).to_json_pointer(),
            }
        })
    }

    /// The key `text` writes `component` under in the object at `components`: its registered
    /// name or the alias the file uses (so a value is never added beside the component under a
    /// second key).
    fn component_key_in(&self, text: &str, components: &[PathSegment], component: &str) -> String {
        let registry = self.registry();
        let Some(id) = registry.id(component) else {
            return component.to_string();
        };
        let canonical = registry.name(id);
        let names = std::iter::once(canonical).chain(registry.aliases(id));
        for name in names {
            let mut path = components.to_vec();
            path.push(PathSegment::Key(name.to_string()));
            let found = crate::json::locate(text, &path).is_some_and(|l| l.matched == path.len());
            if found {
                return name.to_string();
            }
        }
        canonical.to_string()
    }
}

/// The text of a new archetype file extending `base` with `components`.
fn derived_text(base: &str, components: &Map<String, Value>) -> String {
    use serde::Serialize;
    let mut written = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut written, Pretty::at(1));
    // A map of JSON values always serializes.
    let _ = components.serialize(&mut serializer);
    format!(
        "{{\n  \"{}\": {},\n  \"{}\": {}\n}}\n",
        keys::EXTENDS,
        Value::String(base.to_string()),
        keys::COMPONENTS,
        String::from_utf8_lossy(&written)
    )
}
