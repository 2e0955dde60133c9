//! Archetype names: `enemies/goblin` for `archetypes/enemies/goblin.json`.
//!
//! A name is a path relative to the archetypes root, without `.json`, with `/` separators, at
//! most [`MAX_NAME_BYTES`] long. Each segment uses ASCII letters, digits, `_` and `-`, and is
//! not a device name Windows reserves (`con`, `nul`, `com1`, ...). That keeps names portable
//! (no `..`, no absolute paths, no Windows separators, no file Windows cannot create or a file
//! system cannot name, nothing a shell or URL would mangle).

use std::path::{Component, Path, PathBuf};

use super::tree::case_conflict_message;
use crate::diagnostic::quoted;

/// Why a string or a file path is not a usable archetype name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NameProblem {
    /// What is wrong, with the naming rule.
    pub message: String,
    /// The name probably meant (`enemies/goblin` for `enemies\\goblin` or
    /// `enemies/goblin.json`).
    pub suggestion: Option<String>,
}

impl std::fmt::Display for NameProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, "; did you mean `{suggestion}`?")?;
        }
        Ok(())
    }
}

impl std::error::Error for NameProblem {}

/// Why a new archetype, or an archetype renamed, cannot take a name in a library: what
/// [`ArchetypeLibrary::check_new_name`](crate::ArchetypeLibrary::check_new_name) and
/// [`check_rename`](crate::ArchetypeLibrary::check_rename) find. Each is an error the loader
/// would report once the file had the name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NewNameError {
    /// Not an archetype name: the naming rules of [`check_archetype_name`].
    Invalid(NameProblem),
    /// An archetype has the name already.
    Taken {
        /// The name.
        name: String,
        /// That archetype's file.
        file: PathBuf,
    },
    /// An archetype's name differs from it only in letter case (`enemies/Orc` beside
    /// `enemies/orc`): on a case-insensitive file system the two would be one file.
    CaseTwin {
        /// That archetype's name.
        existing: String,
        /// That archetype's file.
        file: PathBuf,
    },
    /// A directory on its path differs only in letter case from a directory of other
    /// archetypes (`Enemies/troll` beside `enemies/goblin`): on a case-insensitive file system
    /// the two would merge.
    DirectoryCase {
        /// The name.
        name: String,
        /// The directory, as the name spells it.
        directory: String,
        /// The other spellings of the directory, sorted.
        others: Vec<String>,
        /// The name with the directory spelt as the other archetypes spell it, when there is
        /// one other spelling and that name is free.
        suggestion: Option<String>,
    },
    /// It is a former name of another archetype (in that archetype's `formerly`), which it
    /// still names.
    FormerName {
        /// The name.
        name: String,
        /// The archetype it names.
        current: String,
    },
}

impl std::fmt::Display for NewNameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NewNameError::Invalid(problem) => write!(f, "{problem}"),
            NewNameError::Taken { name, file } => {
                write!(f, "archetype `{name}` already exists (`{}`)", file.display())
            }
            NewNameError::CaseTwin { existing, file } => write!(
                f,
                "archetype `{existing}` (`{}`) already exists; names that differ only in letter case clash on Windows and macOS",
                file.display()
            ),
            NewNameError::DirectoryCase {
                name,
                directory,
                others,
                suggestion,
            } => {
                f.write_str(&case_conflict_message(name, directory, true, others))?;
                match suggestion {
                    Some(suggestion) => write!(f, "; did you mean `{suggestion}`?"),
                    None => Ok(()),
                }
            }
            NewNameError::FormerName { name, current } => write!(
                f,
                "`{name}` is a former name of archetype `{current}` (in its `formerly`), so it still names that archetype; choose another name"
            ),
        }
    }
}

impl std::error::Error for NewNameError {}

/// Checks an archetype name (as written in `extends`, or for a new file) against the naming
/// rules the loader applies.
///
/// # Errors
/// A [`NameProblem`] saying what is wrong, with the fixed name when there is an obvious one.
///
/// # Example
/// ```
/// use archetype_engine::tooling::check_archetype_name;
/// assert!(check_archetype_name("enemies/goblin").is_ok());
/// let problem = check_archetype_name("enemies\\goblin").unwrap_err();
/// assert_eq!(problem.suggestion.as_deref(), Some("enemies/goblin"));
/// ```
pub fn check_archetype_name(name: &str) -> Result<(), NameProblem> {
    check_name(name)
}

/// A regular expression (JSON Schema dialect) every well-formed archetype name matches: `/`
/// separated segments of ASCII letters, digits, `_` and `-` (the loader also refuses device
/// names Windows reserves, which a schema need not know).
pub const NAME_PATTERN: &str = "^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$";

const RULE: &str = "names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`";

/// The longest archetype name, in bytes: the file of a name this long, `.json` added, fits in
/// the 255 bytes file systems allow for one file name (ext4, NTFS, APFS), whatever its
/// directories.
pub const MAX_NAME_BYTES: usize = 250;

/// Checks a name as written in `extends` or a child's `archetype`.
pub(super) fn check_name(name: &str) -> Result<(), NameProblem> {
    if name.is_empty() {
        return problem("archetype name is empty".to_string(), None);
    }
    if name.len() > MAX_NAME_BYTES {
        return problem(
            format!(
                "archetype name {} is over the limit of {MAX_NAME_BYTES} bytes; a name's file, `.json` added, must fit in the 255 bytes file systems allow for a file name",
                quoted(name)
            ),
            None,
        );
    }
    if name.contains('\\') {
        let fixed = name.replace('\\', "/");
        return problem(
            format!("archetype name {} uses `\\`; {RULE}", quoted(name)),
            check_name(&fixed).is_ok().then_some(fixed),
        );
    }
    if name.starts_with('/') || (name.len() > 1 && name.as_bytes()[1] == b':') {
        return problem(
            format!(
                "archetype name {} is an absolute path; {RULE}",
                quoted(name)
            ),
            None,
        );
    }
    if let Some(stem) = name.strip_suffix(".json") {
        return problem(
            format!(
                "archetype name {} includes the `.json` extension; {RULE}",
                quoted(name)
            ),
            check_name(stem).is_ok().then(|| stem.to_string()),
        );
    }
    if name
        .split('/')
        .any(|segment| segment == ".." || segment == ".")
    {
        return problem(
            format!(
                "archetype name {} leaves the archetypes root; {RULE}",
                quoted(name)
            ),
            None,
        );
    }
    name.split('/')
        .try_for_each(|segment| check_segment(name, segment))
}

/// Checks one `/`-separated segment of the archetype name `name`: not empty, made of name
/// characters, not a device name Windows reserves.
fn check_segment(name: &str, segment: &str) -> Result<(), NameProblem> {
    if segment.is_empty() {
        return problem(
            format!(
                "archetype name {} has an empty segment; {RULE}",
                quoted(name)
            ),
            None,
        );
    }
    if let Some(bad) = segment.chars().find(|c| !is_name_char(*c)) {
        let what = match bad {
            ' ' => "a space".to_string(),
            c if c.is_whitespace() || c.is_control() => {
                format!("the character U+{:04X}", c as u32)
            }
            c => format!("`{c}`"),
        };
        return problem(
            format!("archetype name {} contains {what}; {RULE}", quoted(name)),
            None,
        );
    }
    if is_reserved_device_name(segment) {
        return problem(
            format!(
                "archetype name {} has the segment `{segment}`, a device name Windows reserves ({RESERVED}, in any letter case, with or without an extension); choose another name",
                quoted(name)
            ),
            None,
        );
    }
    Ok(())
}

/// A name refused: what is wrong, and the name probably meant.
fn problem(message: String, suggestion: Option<String>) -> Result<(), NameProblem> {
    Err(NameProblem {
        message,
        suggestion,
    })
}

const RESERVED: &str = "`con`, `prn`, `aux`, `nul`, `com0`-`com9`, `lpt0`-`lpt9`";

/// Whether `segment` (letters, digits, `_` and `-` only) is a device name Windows reserves in
/// every directory: no file or directory of that name, with any extension, can exist there, so
/// a project using it cannot be checked out on Windows.
fn is_reserved_device_name(segment: &str) -> bool {
    let lower = segment.to_ascii_lowercase();
    match lower.as_bytes() {
        [b'c', b'o', b'n'] | [b'p', b'r', b'n'] | [b'a', b'u', b'x'] | [b'n', b'u', b'l'] => true,
        [b'c', b'o', b'm', digit] | [b'l', b'p', b't', digit] => digit.is_ascii_digit(),
        _ => false,
    }
}

/// Checks a local name (a child's key, a segment of an entity reference).
pub(super) fn check_local_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(is_name_char)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The archetype name of a `.json` file at `relative` (a path inside the root).
pub(super) fn name_from_relative_path(relative: &Path) -> Result<String, NameProblem> {
    let mut segments = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => match part.to_str() {
                Some(part) => segments.push(part.to_string()),
                None => {
                    return Err(NameProblem {
                        message: format!(
                            "file name `{}` is not valid UTF-8; {RULE}",
                            relative.display()
                        ),
                        suggestion: None,
                    })
                }
            },
            _ => {
                return Err(NameProblem {
                    message: format!("`{}` is not inside the archetypes root", relative.display()),
                    suggestion: None,
                })
            }
        }
    }
    let Some(last) = segments.last_mut() else {
        return Err(NameProblem {
            message: "empty file path".to_string(),
            suggestion: None,
        });
    };
    if let Some(stem) = last.strip_suffix(".json") {
        *last = stem.to_string();
    }
    let name = segments.join("/");
    check_name(&name).map_err(|problem| NameProblem {
        message: format!(
            "file `{}` does not give a valid archetype name: {}",
            relative.display(),
            problem.message
        ),
        suggestion: None,
    })?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_portable_relative_names() {
        assert!(check_name("enemies/goblin").is_ok());
        assert!(check_name("Boss_2/big-troll").is_ok());
        for bad in [
            "", "../x", "a/../b", "/abs", "C:/x", "a//b", "a b", "a.b", "ü",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn refuses_names_over_the_length_limit() {
        let longest = format!("{}/{}", "a".repeat(124), "b".repeat(125));
        assert_eq!(longest.len(), MAX_NAME_BYTES);
        assert!(check_name(&longest).is_ok());
        let problem = check_name(&format!("{longest}c")).unwrap_err();
        assert_eq!(
            problem.message,
            format!(
                "archetype name `{}…` (251 bytes) is over the limit of 250 bytes; a name's file, `.json` added, must fit in the 255 bytes file systems allow for a file name",
                "a".repeat(64)
            )
        );
    }

    #[test]
    fn suggests_the_fixed_name() {
        let problem = check_name("enemies\\goblin").unwrap_err();
        assert_eq!(problem.suggestion.as_deref(), Some("enemies/goblin"));
        let problem = check_name("enemies/goblin.json").unwrap_err();
        assert_eq!(problem.suggestion.as_deref(), Some("enemies/goblin"));
        assert_eq!(
            check_name("../x").unwrap_err().message,
            format!("archetype name `../x` leaves the archetypes root; {RULE}")
        );
    }

    #[test]
    fn names_files() {
        assert_eq!(
            name_from_relative_path(Path::new("enemies/goblin.json")).unwrap(),
            "enemies/goblin"
        );
        assert!(name_from_relative_path(Path::new("enemies/gob lin.json")).is_err());
    }

    #[test]
    fn refuses_reserved_device_names_in_any_segment() {
        for bad in [
            "con",
            "CON",
            "enemies/Nul",
            "aux/goblin",
            "com1",
            "LPT9",
            "com0/x",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        for good in [
            "cons",
            "console",
            "com",
            "com10",
            "lpt",
            "nul_",
            "auxiliary/x",
        ] {
            assert!(check_name(good).is_ok(), "{good}");
        }
    }
}
