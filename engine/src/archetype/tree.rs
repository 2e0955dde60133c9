//! Which files under the archetypes root are archetype files: the one rule the initial load,
//! every rescan and hot reload apply, and the names those files give.
//!
//! An archetype file is a `*.json` entry, not hidden, under directories that are neither hidden
//! nor named `*.json`, whose real path (symbolic links resolved) stays inside the root's real
//! path, and whose path gives a valid archetype name. A link that leaves the root is refused
//! (`invalid-name`), never followed; a link inside the root is followed. A FIFO, socket or
//! device named `*.json` is an archetype file that cannot be read: reading it
//! ([`read_regular_file`](crate::tooling::read_regular_file)) refuses it (`io`) without opening it.

use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::archetype::name::name_from_relative_path;
use crate::archetype::{map_on_threads, worker_threads};
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::fs::{is_inside, FileKind};

/// What one path under the root is, by the rule.
pub(super) enum Entry {
    /// No archetype here: nothing there, a hidden entry, a file not named `*.json`, or a place
    /// under a directory the rule skips or refuses.
    Nothing,
    /// A directory to look into.
    Directory(Dir),
    /// An archetype file, with the archetype's name.
    File { name: String, found: FoundFile },
    /// An entry the rule refuses, with the problem (shown on the entry); it gives no archetype.
    Refused(Diagnostic),
}

/// Whether a file name is an archetype file: `*.json`, not hidden (editor lock and backup files
/// such as Emacs's `.#goblin.json` start with a dot).
#[cfg(feature = "hot-reload")]
pub(crate) fn is_archetype_file_name(file_name: &str) -> bool {
    file_name.ends_with(".json") && !file_name.starts_with('.')
}

/// A directory under the root, as the rule reaches it.
#[derive(Clone)]
pub(super) struct Dir {
    /// Its real path (symbolic links resolved).
    pub real: PathBuf,
    /// Whether it was reached through a symbolic link.
    pub linked: bool,
}

/// An archetype file found by the rule.
pub(super) struct FoundFile {
    /// The path shown in messages: the root joined with the relative path.
    pub file: PathBuf,
    /// The real path (inside the root), to read.
    pub real: PathBuf,
    /// What it is if not a regular file (it is then refused without being opened).
    pub special: Option<FileKind>,
    /// Whether it is reached through a symbolic link (to a file also under another name).
    pub linked: bool,
}

/// The rule for one entry: `path` (shown in messages), at `relative` under the root whose real
/// path is `real_root`, in `dir`. `file_type` is the entry's own type (a link is not
/// followed), `None` if nothing is there.
fn examine(
    real_root: &Path,
    path: &Path,
    relative: &Path,
    file_type: Option<fs::FileType>,
    dir: &Dir,
) -> Entry {
    let Some(file_name) = relative.file_name() else {
        return Entry::Nothing;
    };
    let file_name = file_name.to_string_lossy();
    let Some(file_type) = file_type.filter(|_| !file_name.starts_with('.')) else {
        return Entry::Nothing;
    };
    let json_name = file_name.ends_with(".json");
    let (real, kind) = if file_type.is_symlink() {
        match follow_link(real_root, path, json_name) {
            Ok(target) => target,
            Err(entry) => return *entry,
        }
    } else {
        (dir.real.join(&*file_name), FileKind::of(file_type))
    };
    let linked = dir.linked || file_type.is_symlink();
    match kind {
        Some(FileKind::Directory) if json_name => Entry::Refused(
            Diagnostic::error(
                DiagnosticCode::InvalidName,
                "directory name ends in `.json`; archetype files must be regular files (rename the directory)",
            )
            .with_file(path),
        ),
        Some(FileKind::Directory) => Entry::Directory(Dir { real, linked }),
        _ if !json_name => Entry::Nothing,
        special => match name_from_relative_path(relative) {
            Ok(name) => Entry::File {
                name,
                found: FoundFile {
                    file: path.to_path_buf(),
                    real,
                    special,
                    linked,
                },
            },
            Err(problem) => Entry::Refused(
                Diagnostic::error(DiagnosticCode::InvalidName, problem.message).with_file(path),
            ),
        },
    }
}

/// The real path of the link at `path` and what it points to (`None`: a regular file), if it
/// stays inside the root; else what the entry is (refused if it would be an archetype file or
/// a directory, else nothing).
fn follow_link(
    real_root: &Path,
    path: &Path,
    json_name: bool,
) -> Result<(PathBuf, Option<FileKind>), Box<Entry>> {
    let followed =
        fs::canonicalize(path).and_then(|target| Ok((fs::metadata(&target)?.file_type(), target)));
    match followed {
        Ok((file_type, target)) if is_inside(real_root, &target) => {
            Ok((target, FileKind::of(file_type)))
        }
        Ok((file_type, _)) if json_name || file_type.is_dir() => Err(Box::new(Entry::Refused(
            Diagnostic::error(
                DiagnosticCode::InvalidName,
                "symbolic link points outside the archetypes directory; archetypes must live under the root",
            )
            .with_file(path),
        ))),
        Err(error) if json_name => Err(Box::new(Entry::Refused(
            Diagnostic::error(
                DiagnosticCode::Io,
                format!("cannot follow symbolic link: {error}"),
            )
            .with_file(path),
        ))),
        _ => Err(Box::new(Entry::Nothing)),
    }
}

/// The rule for one path under `root` (real path `real_root`), given relative to the root:
/// the path's directories are checked as a scan would reach them (none hidden or named
/// `*.json`, their real path inside the root), then the entry itself.
pub(super) fn examine_path(root: &Path, real_root: &Path, relative: &Path) -> Entry {
    let Some(parent) = relative.parent() else {
        return Entry::Nothing;
    };
    let skipped_dir = parent.components().any(|part| {
        let part = part.as_os_str().to_string_lossy();
        part.starts_with('.') || part.ends_with(".json")
    });
    if skipped_dir {
        return Entry::Nothing;
    }
    // A directory that is gone took the file with it; one reached through a link out of the
    // root is not looked into (the link itself is what gets reported).
    let dir = match fs::canonicalize(root.join(parent)) {
        Ok(real) if is_inside(real_root, &real) => Dir {
            linked: real != real_root.join(parent),
            real,
        },
        _ => return Entry::Nothing,
    };
    let path = root.join(relative);
    let file_type = fs::symlink_metadata(&path).ok().map(|m| m.file_type());
    examine(real_root, &path, relative, file_type, &dir)
}

/// The archetype files found under a root.
pub(super) struct Scan {
    /// Archetype name → the file.
    pub files: BTreeMap<String, FoundFile>,
    /// Problems with files or directories that give no archetype.
    pub problems: Vec<Diagnostic>,
}

/// Finds every archetype file under `root`, recursively, by the rule. The directories under
/// the root are walked on every core, each on its own, unless one is reached through a link
/// (links are followed once: [`walk`]); what is found is the same either way.
pub(super) fn scan(root: &Path) -> Scan {
    let mut scan = Scan {
        files: BTreeMap::new(),
        problems: Vec::new(),
    };
    let real_root = match fs::canonicalize(root) {
        Ok(path) => path,
        Err(error) => {
            scan.problems.push(
                Diagnostic::error(
                    DiagnosticCode::Io,
                    format!("cannot read the archetypes directory: {error}"),
                )
                .with_file(root),
            );
            return scan;
        }
    };
    let top = Dir {
        real: real_root.clone(),
        linked: false,
    };
    let subdirs = visit_dir(
        &real_root,
        (root.to_path_buf(), PathBuf::new(), top),
        &mut scan,
    );
    let threads = worker_threads().min(subdirs.len());
    if threads > 1 && !subdirs.iter().any(|sub| sub.link) {
        if let Some(parts) = walk_apart(&real_root, &subdirs, threads) {
            // In the order a walk of them all visits them: the last pushed first.
            for part in parts.into_iter().rev() {
                scan.files.extend(part.files);
                scan.problems.extend(part.problems);
            }
            return scan;
        }
    }
    // Directories reached through links, so a link to a directory above it is not followed
    // round and round.
    let mut visited: FxHashSet<PathBuf> = std::iter::once(real_root.clone()).collect();
    let mut pending = Vec::new();
    enqueue(subdirs, Some(&mut visited), &mut pending);
    walk(&real_root, pending, Some(&mut visited), &mut scan);
    scan
}

/// A directory found under the root, to look into.
#[derive(Clone)]
struct Subdir {
    /// Its path (the root joined with `relative`), its path under the root, and how it is
    /// reached.
    at: (PathBuf, PathBuf, Dir),
    /// Whether the entry is a symbolic link.
    link: bool,
}

/// Walks each of `subdirs` on its own, on `threads` threads: a walk per directory, in their
/// order. `None` if one of them reaches a directory through a link (a walk of them all then
/// decides which links are followed).
fn walk_apart(real_root: &Path, subdirs: &[Subdir], threads: usize) -> Option<Vec<Scan>> {
    let walk_one = |sub: &Subdir| {
        let mut part = Scan {
            files: BTreeMap::new(),
            problems: Vec::new(),
        };
        walk(real_root, vec![sub.clone()], None, &mut part).then_some(part)
    };
    map_on_threads(subdirs, threads, walk_one)
        .into_iter()
        .collect()
}

/// Walks the directories `pending` and everything under them, depth first (the last first),
/// into `scan`. A directory reached through a link is looked into once (`visited`: the real
/// paths of those seen); with no `visited`, the walk stops there and gives `false`.
fn walk(
    real_root: &Path,
    mut pending: Vec<Subdir>,
    mut visited: Option<&mut FxHashSet<PathBuf>>,
    scan: &mut Scan,
) -> bool {
    while let Some(Subdir { at, .. }) = pending.pop() {
        let found = visit_dir(real_root, at, scan);
        if !enqueue(found, visited.as_deref_mut(), &mut pending) {
            return false;
        }
    }
    true
}

/// Adds the directories `found` to `pending`, in order; one reached through a link only if
/// `visited` has not seen its real path (which it then has). With no `visited`, `false` at the
/// first link.
fn enqueue(
    found: Vec<Subdir>,
    mut visited: Option<&mut FxHashSet<PathBuf>>,
    pending: &mut Vec<Subdir>,
) -> bool {
    for sub in found {
        if sub.link {
            let Some(visited) = visited.as_deref_mut() else {
                return false;
            };
            if !visited.insert(sub.at.2.real.clone()) {
                continue;
            }
        }
        pending.push(sub);
    }
    true
}

/// Reads the directory `dir` (at `relative` under the root, reached as `real_dir`): its
/// archetype files and problems go into `scan`, and its directories come back, in name order.
fn visit_dir(
    real_root: &Path,
    (dir, relative_dir, real_dir): (PathBuf, PathBuf, Dir),
    scan: &mut Scan,
) -> Vec<Subdir> {
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) => {
            scan.problems.push(
                Diagnostic::error(
                    DiagnosticCode::Io,
                    format!("cannot read directory: {error}"),
                )
                .with_file(&dir),
            );
            return Vec::new();
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    // `file_name()` allocates: compute each key once, not once per comparison.
    entries.sort_by_cached_key(|entry| entry.file_name());
    let mut subdirs = Vec::new();
    for entry in entries {
        let path = entry.path();
        let relative = relative_dir.join(entry.file_name());
        let file_type = entry.file_type().ok();
        match examine(real_root, &path, &relative, file_type, &real_dir) {
            Entry::Nothing => {}
            Entry::Directory(sub) => subdirs.push(Subdir {
                at: (path, relative, sub),
                link: file_type.is_some_and(|t| t.is_symlink()),
            }),
            Entry::File { name, found } => {
                scan.files.insert(name, found);
            }
            Entry::Refused(problem) => scan.problems.push(problem),
        }
    }
    subdirs
}

/// How an archetype's path clashes with another's on a case-insensitive file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CaseConflict {
    /// The clashing part of the name: a directory (`Enemies`) or the whole name.
    pub part: String,
    /// Whether `part` is a directory.
    pub directory: bool,
    /// The other spellings of `part`, sorted.
    pub others: Vec<String>,
}

/// A name prefix compared without regard to ASCII letter case (names are ASCII).
#[derive(Clone, Copy)]
struct Folded<'a>(&'a str);

impl PartialEq for Folded<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(other.0)
    }
}

impl Eq for Folded<'_> {}

impl Hash for Folded<'_> {
    /// The lowercase bytes, eight at a time.
    fn hash<H: Hasher>(&self, state: &mut H) {
        for chunk in self.0.as_bytes().chunks(8) {
            let mut word = [0u8; 8];
            for (folded, byte) in word.iter_mut().zip(chunk) {
                *folded = byte.to_ascii_lowercase();
            }
            state.write_u64(u64::from_le_bytes(word));
        }
        state.write_usize(self.0.len());
    }
}

/// The parts of a name a file system sees: each directory (`enemies/`, `enemies/big/`, with
/// the slash), shallowest first, then the whole name.
pub(super) fn parts(name: &str) -> impl Iterator<Item = &str> {
    name.match_indices('/')
        .map(move |(at, _)| &name[..=at])
        .chain(std::iter::once(name))
}

/// Reports names whose files would clash on Windows and macOS file systems: a directory on
/// their path, or the name itself, differs only in letter case from another's
/// (`Enemies/goblin` beside `enemies/orc`, `Goblin` beside `goblin`). Each of them gets an
/// error, for its shallowest clashing part.
pub(super) fn case_conflicts<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, CaseConflict)> {
    let names: Vec<&str> = names.into_iter().collect();
    // Each part's spellings: the first, then any other (most parts have one, and no list).
    let mut spellings: FxHashMap<Folded<'_>, (&str, Vec<&str>)> = FxHashMap::default();
    spellings.reserve(names.len());
    let mut any = false;
    for name in &names {
        for part in parts(name) {
            let (first, others) = spellings.entry(Folded(part)).or_insert((part, Vec::new()));
            if *first != part && !others.contains(&part) {
                others.push(part);
                any = true;
            }
        }
    }
    let mut conflicts = Vec::new();
    if !any {
        return conflicts;
    }
    for name in names {
        let clash = parts(name).find_map(|part| {
            let (first, others) = &spellings[&Folded(part)];
            let group = || std::iter::once(*first).chain(others.iter().copied());
            (!others.is_empty()).then(|| (part, group().collect::<Vec<&str>>()))
        });
        let Some((part, group)) = clash else { continue };
        let mut others: Vec<String> = group
            .iter()
            .filter(|other| **other != part)
            .map(|other| other.trim_end_matches('/').to_string())
            .collect();
        others.sort();
        let directory = part.ends_with('/');
        let conflict = CaseConflict {
            part: part.trim_end_matches('/').to_string(),
            directory,
            others,
        };
        conflicts.push((name.to_string(), conflict));
    }
    conflicts.sort_by(|a, b| a.0.cmp(&b.0));
    conflicts
}

/// The diagnostic for a case conflict of archetype `name` (in `file`).
pub(super) fn case_conflict_problem(
    file: &Path,
    name: &str,
    conflict: &CaseConflict,
) -> Diagnostic {
    let message = case_conflict_message(name, &conflict.part, conflict.directory, &conflict.others);
    Diagnostic::error(DiagnosticCode::CaseConflict, message)
        .with_file(file)
        .with_archetype(name)
        .with_severity(Severity::Error)
}

/// What is wrong with archetype `name` whose `part` (a directory on its path, or the whole
/// name) differs from `others` only in letter case.
pub(super) fn case_conflict_message(
    name: &str,
    part: &str,
    directory: bool,
    others: &[String],
) -> String {
    let others: Vec<String> = others.iter().map(|other| format!("`{other}`")).collect();
    let others = others.join(", ");
    if directory {
        format!(
            "archetype `{name}` is in directory `{part}`, which differs from {others} only in letter case; directory names must stay distinct on case-insensitive file systems, where the two would merge"
        )
    } else {
        format!(
            "archetype `{name}` differs from {others} only in letter case; file names must stay distinct on case-insensitive file systems"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_files_differing_in_case_conflict() {
        let conflicts = case_conflicts(["Enemies/goblin", "enemies/orc", "Goblin", "goblin", "x"]);
        let found: Vec<(&str, &str, bool)> = conflicts
            .iter()
            .map(|(name, c)| (name.as_str(), c.part.as_str(), c.directory))
            .collect();
        assert_eq!(
            found,
            [
                ("Enemies/goblin", "Enemies", true),
                ("Goblin", "Goblin", false),
                ("enemies/orc", "enemies", true),
                ("goblin", "goblin", false),
            ]
        );
        // A file and a directory of the same letters do not clash: `enemies.json` is not
        // `Enemies/`.
        assert!(case_conflicts(["enemies", "Enemies/orc"]).is_empty());
    }

    /// The names `scan` found, and the directory each problem is about (under `root`).
    fn found(root: &Path) -> (Vec<String>, Vec<PathBuf>) {
        let scan = scan(root);
        let names = scan.files.keys().cloned().collect();
        let places = (scan.problems.iter())
            .filter_map(|p| {
                p.file
                    .as_deref()?
                    .strip_prefix(root)
                    .ok()
                    .map(Path::to_path_buf)
            })
            .collect();
        (names, places)
    }

    #[test]
    fn directories_walked_apart_give_what_one_walk_gives() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path();
        for (path, is_dir) in [
            ("top.json", false),
            ("a/one.json", false),
            ("a/deep/three.json", false),
            ("b/two.json", false),
            ("c/bad.json", true),
            ("d/bad.json", true),
        ] {
            let path = root.join(path);
            fs::create_dir_all(if is_dir {
                &path
            } else {
                path.parent().expect("a parent")
            })
            .expect("directory");
            if !is_dir {
                fs::write(&path, "{}").expect("file");
            }
        }
        // Walked apart (no links): the problems come in the order one walk meets them, the
        // last directory first.
        let names = ["a/deep/three", "a/one", "b/two", "top"].map(String::from);
        let places = [PathBuf::from("d/bad.json"), PathBuf::from("c/bad.json")];
        assert_eq!(found(root), (names.to_vec(), places.to_vec()));
        // A link back to the root inside `b`: one walk decides which links are followed, and
        // this one is not (its target, the root, is walked already).
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root, root.join("b/up")).expect("link");
            assert_eq!(found(root), (names.to_vec(), places.to_vec()));
            // A link to `a` beside it is followed, once.
            std::os::unix::fs::symlink(root.join("a"), root.join("b/also")).expect("link");
            let (with_link, _) = found(root);
            assert_eq!(
                with_link,
                [
                    "a/deep/three",
                    "a/one",
                    "b/also/deep/three",
                    "b/also/one",
                    "b/two",
                    "top"
                ]
            );
        }
    }
}
