//! The one file rule's root: a data file is read only if its real path (every symbolic link
//! resolved, every `..` applied) is inside the real path of the root it belongs to. Archetype
//! files belong to the archetypes root; the scene files a scene places (sub-scenes) to the
//! scenes root of the load.
//!
//! A path written in a file (a sub-scene's `scene`) is judged before anything is opened:
//! absolute paths are refused, a relative one is first applied to the placing file's directory
//! by its text alone (so `../../etc/passwd` is refused without asking the file system whether
//! it exists), then resolved (links followed) and held against the root again. What the rule
//! refuses is never opened, so no message can quote a byte of it.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Whether `real` (a path with its links resolved) is inside `real_root` (the same), or is it.
/// The one containment test of the file rule: the archetype scan and sub-scenes use it.
pub(crate) fn is_inside(real_root: &Path, real: &Path) -> bool {
    real.starts_with(real_root)
}

/// The real path of `path` (every link followed), if it is inside the real path of `root`: the
/// file rule's test, for a tool that lists files under a root (`archetool`'s scene search)
/// and must not read or rewrite one that leads out of it.
///
/// # Example
/// ```
/// # let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("level.scene.json"), "{}")?;
/// let inside = archetype_engine::tooling::real_path_inside(dir.path(), &dir.path().join("level.scene.json"));
/// assert!(inside.is_some());
/// assert_eq!(archetype_engine::tooling::real_path_inside(dir.path(), std::path::Path::new("/")), None);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn real_path_inside(root: &Path, path: &Path) -> Option<PathBuf> {
    let real_root = std::fs::canonicalize(root).ok()?;
    let real = std::fs::canonicalize(path).ok()?;
    is_inside(&real_root, &real).then_some(real)
}

/// A directory files are read under, by its real path.
#[derive(Clone, Debug)]
pub(crate) struct Root {
    real: PathBuf,
}

/// Why the rule refused a path written in a file; nothing was opened.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The path is absolute; paths in files are relative to the file.
    Absolute,
    /// The path leads outside the root, by its text (`..`) or through a symbolic link.
    Outside,
    /// The path cannot be resolved (nothing there, or a directory on the way cannot be read).
    Unresolved(io::Error),
}

impl Root {
    /// The root at `dir`, by its real path.
    ///
    /// # Errors
    /// If `dir` cannot be resolved (it does not exist).
    pub fn new(dir: &Path) -> io::Result<Root> {
        Ok(Root {
            real: std::fs::canonicalize(dir)?,
        })
    }

    /// The root's real path.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The real path of `written` (a path written in a file whose directory's real path is
    /// `real_dir`), if the rule lets it be read: relative, inside the root by its text and
    /// once its links are resolved.
    pub fn resolve(&self, real_dir: &Path, written: &Path) -> Result<PathBuf, Refused> {
        if written.is_absolute() || written.has_root() {
            return Err(Refused::Absolute);
        }
        let lexical = apply(real_dir, written).ok_or(Refused::Outside)?;
        if !is_inside(&self.real, &lexical) {
            return Err(Refused::Outside);
        }
        let real = std::fs::canonicalize(&lexical).map_err(Refused::Unresolved)?;
        if !is_inside(&self.real, &real) {
            return Err(Refused::Outside);
        }
        Ok(real)
    }
}

/// `relative` applied to `dir` by its text: `.` skipped, `..` taking the last component off
/// (`None` past the file system's root), no link looked at.
fn apply(dir: &Path, relative: &Path) -> Option<PathBuf> {
    let mut path = dir.to_path_buf();
    for component in relative.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !path.pop() {
                    return None;
                }
            }
            Component::Normal(part) => path.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_paths_inside_the_root_and_refuses_the_others_unopened() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root_dir = dir.path().join("scenes");
        std::fs::create_dir_all(root_dir.join("rooms")).expect("directories");
        std::fs::write(root_dir.join("hall.json"), "{}").expect("file");
        std::fs::write(dir.path().join("secret.json"), "{}").expect("file");
        let root = Root::new(&root_dir).expect("root");
        let rooms = root.real().join("rooms");
        let resolve = |written: &str| root.resolve(&rooms, Path::new(written));
        assert_eq!(
            resolve("../hall.json").ok(),
            Some(root.real().join("hall.json"))
        );
        assert!(matches!(
            resolve("../../secret.json"),
            Err(Refused::Outside)
        ));
        assert!(matches!(
            resolve("../../nothing.json"),
            Err(Refused::Outside)
        ));
        assert!(matches!(resolve("/etc/passwd"), Err(Refused::Absolute)));
        assert!(matches!(
            resolve("missing.json"),
            Err(Refused::Unresolved(_))
        ));
        #[cfg(unix)]
        {
            let link = root_dir.join("rooms/link.json");
            std::os::unix::fs::symlink(dir.path().join("secret.json"), &link).expect("link");
            assert!(matches!(resolve("link.json"), Err(Refused::Outside)));
            let inside = root_dir.join("rooms/inside.json");
            std::os::unix::fs::symlink(root_dir.join("hall.json"), &inside).expect("link");
            assert_eq!(
                resolve("inside.json").ok(),
                Some(root.real().join("hall.json"))
            );
        }
    }
}
