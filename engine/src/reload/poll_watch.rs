//! [`PollWatch`]: the polling watcher, for when the operating system's file events are
//! unavailable (inotify's watch limit reached, network drives).
//!
//! A sweep reads the watched directories and compares every entry's metadata (kind, size,
//! modification time, inode) with the last sweep's; a file's contents are read (hashed) only
//! where the metadata cannot decide: a file modified within the last [`RECENT`], whose next
//! save may fall in the same tick of a coarse file system clock with the same size.
//!
//! Every poll interval only the directories and the [`HOT_FILES`] files modified last are
//! looked at (one `stat` each): a file created, deleted or renamed over (how most editors save)
//! changes its directory, a designer saves the file they work on again and again, and a sweep
//! follows at once. Any other file written in place changes only itself: the full sweeps that
//! find it are spaced so that they take at most 1/[`DUTY`] of one core, so a big tree costs
//! little while nobody edits it, and the first in-place write of a file there is seen later
//! (within 50 times a sweep).

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, Metadata};
use std::hash::Hasher;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use rustc_hash::FxHashMap;

/// The files modified last that every poll interval looks at (see [`QuickLook`]).
const HOT_FILES: usize = 64;

/// A file modified this recently is hashed as well: a second save within one tick of a coarse
/// modification time (one or two seconds on some file systems), of the same size, changes
/// only its contents.
const RECENT: Duration = Duration::from_secs(3);

/// The sweeps take at most one part in `DUTY` of a core: after a sweep that took `t`, the
/// next starts no sooner than `t × (DUTY − 1)` later (nor sooner than the poll interval).
const DUTY: u32 = 50;

/// What one sweep saw of an entry.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Seen {
    directory: bool,
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
    /// The contents' hash, for a file modified recently.
    hash: Option<u64>,
}

/// A polling watcher thread; dropping it stops the thread.
pub(crate) struct PollWatch {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl PollWatch {
    /// Sweeps `dirs` once (the baseline: nothing is reported for it), then on a thread every
    /// `interval` at the soonest, calling `report` with the paths that appeared, vanished or
    /// changed since the sweep before.
    ///
    /// # Errors
    /// If one of `dirs` cannot be read.
    pub(crate) fn start(
        dirs: Vec<PathBuf>,
        recursive: bool,
        interval: Duration,
        mut report: impl FnMut(Vec<PathBuf>) + Send + 'static,
    ) -> Result<PollWatch, (PathBuf, io::Error)> {
        for dir in &dirs {
            fs::read_dir(dir).map_err(|error| (dir.clone(), error))?;
        }
        let started = Instant::now();
        let mut seen = sweep(&dirs, recursive);
        let mut sweep_every = started.elapsed() * (DUTY - 1);
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            let mut quick = QuickLook::of(&dirs, &seen);
            let mut last_sweep = Instant::now();
            loop {
                match stopped.recv_timeout(interval) {
                    Err(RecvTimeoutError::Timeout) => {}
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                }
                match quick.moved() {
                    // Only files it watches changed (saved in place): they are the news.
                    Moved::Files(files) if last_sweep.elapsed() < sweep_every => {
                        for file in &files {
                            let entry = seen_now(file);
                            match entry {
                                Some(entry) => seen.insert(file.clone(), entry),
                                None => seen.remove(file),
                            };
                            quick.update(file, entry.as_ref().map(Stat::of));
                        }
                        report(files);
                        continue;
                    }
                    Moved::Nothing if last_sweep.elapsed() < sweep_every => continue,
                    _ => {}
                }
                let started = Instant::now();
                let now = sweep(&dirs, recursive);
                let changed = differences(&seen, &now);
                seen = now;
                quick = QuickLook::of(&dirs, &seen);
                if !changed.is_empty() {
                    report(changed);
                }
                last_sweep = Instant::now();
                sweep_every = started.elapsed() * (DUTY - 1);
            }
        });
        Ok(PollWatch {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for PollWatch {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // A panic on the watcher thread is a bug already logged by the panic hook.
            let _ = thread.join();
        }
    }
}

/// What is looked at every poll interval, between full sweeps: the directories (a file
/// created, deleted or renamed in one changes its modification time) and the [`HOT_FILES`]
/// files modified last (a designer saves the file they work on again and again, often in
/// place, which changes nothing but the file).
struct QuickLook {
    entries: Vec<(PathBuf, Option<Stat>)>,
}

/// What a quick look found.
enum Moved {
    Nothing,
    /// Only files, these: they are read again without a sweep.
    Files(Vec<PathBuf>),
    /// A directory (or something that was not there): a sweep finds what.
    Directories,
}

/// The metadata a quick look compares.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stat {
    directory: bool,
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl Stat {
    fn of(seen: &Seen) -> Self {
        Stat {
            directory: seen.directory,
            len: if seen.directory { 0 } else { seen.len },
            modified: seen.modified,
            inode: seen.inode,
        }
    }

    /// The entry at `path` now (`None`: gone, or unreadable).
    fn now(path: &Path) -> Option<Self> {
        let metadata = fs::symlink_metadata(path).ok()?;
        Some(Stat {
            directory: metadata.is_dir(),
            len: if metadata.is_dir() { 0 } else { metadata.len() },
            modified: metadata.modified().ok(),
            inode: inode(&metadata),
        })
    }
}

impl QuickLook {
    /// The watched directories as they are now, and the directories and most recently
    /// modified files of `seen` as the sweep saw them.
    fn of(dirs: &[PathBuf], seen: &FxHashMap<PathBuf, Seen>) -> Self {
        let mut entries: Vec<(PathBuf, Option<Stat>)> = (dirs.iter())
            .map(|dir| (dir.clone(), Stat::now(dir)))
            .collect();
        let mut files: Vec<(&PathBuf, &Seen)> = Vec::new();
        for (path, entry) in seen {
            if entry.directory {
                entries.push((path.clone(), Some(Stat::of(entry))));
            } else {
                files.push((path, entry));
            }
        }
        let hot = files.len().saturating_sub(HOT_FILES);
        if hot > 0 {
            files.select_nth_unstable_by_key(hot, |(_, entry)| entry.modified);
        }
        let files = files.into_iter().skip(hot);
        entries.extend(files.map(|(path, entry)| (path.clone(), Some(Stat::of(entry)))));
        QuickLook { entries }
    }

    /// Which of the entries are not as they were.
    fn moved(&self) -> Moved {
        let mut files = Vec::new();
        for (path, was) in &self.entries {
            if Stat::now(path) == *was {
                continue;
            }
            if was.is_none_or(|was| was.directory) {
                return Moved::Directories;
            }
            files.push(path.clone());
        }
        if files.is_empty() {
            Moved::Nothing
        } else {
            Moved::Files(files)
        }
    }

    /// Takes `now` as what the file at `path` is.
    fn update(&mut self, path: &Path, now: Option<Stat>) {
        if let Some((_, was)) = self.entries.iter_mut().find(|(entry, _)| entry == path) {
            *was = now;
        }
    }
}

/// Every entry under `dirs` (into subdirectories if `recursive`; links are not followed), as
/// it is now. An entry that cannot be read is left out (it is seen as gone, then back).
fn sweep(dirs: &[PathBuf], recursive: bool) -> FxHashMap<PathBuf, Seen> {
    let mut seen = FxHashMap::default();
    let now = SystemTime::now();
    let mut pending: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            // The entry itself, not what a link points at.
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            let path = entry.path();
            if metadata.is_dir() && recursive {
                pending.push(path.clone());
            }
            let entry = seen_of(&path, &metadata, now);
            seen.insert(path, entry);
        }
    }
    seen
}

/// What a sweep would see of the one entry at `path` now (`None`: gone, or unreadable).
fn seen_now(path: &Path) -> Option<Seen> {
    let metadata = fs::symlink_metadata(path).ok()?;
    Some(seen_of(path, &metadata, SystemTime::now()))
}

/// What a sweep at `now` sees of the entry at `path` with `metadata`.
fn seen_of(path: &Path, metadata: &Metadata, now: SystemTime) -> Seen {
    let modified = metadata.modified().ok();
    let recent = modified.is_none_or(|modified| {
        now.duration_since(modified)
            .map_or(true, |age| age < RECENT)
    });
    let hash = (recent && metadata.is_file())
        .then(|| contents_hash(path))
        .flatten();
    Seen {
        directory: metadata.is_dir(),
        len: metadata.len(),
        modified,
        inode: inode(metadata),
        hash,
    }
}

/// The paths that appeared, vanished or changed between two sweeps, sorted.
fn differences(before: &FxHashMap<PathBuf, Seen>, now: &FxHashMap<PathBuf, Seen>) -> Vec<PathBuf> {
    let mut changed: Vec<PathBuf> = Vec::new();
    for (path, seen) in now {
        let differs = match before.get(path) {
            None => true,
            Some(old) if seen.directory && old.directory => false,
            Some(old) => {
                old.directory != seen.directory
                    || old.len != seen.len
                    || old.modified != seen.modified
                    || old.inode != seen.inode
                    || matches!((old.hash, seen.hash), (Some(a), Some(b)) if a != b)
            }
        };
        if differs {
            changed.push(path.clone());
        }
    }
    changed.extend(
        before
            .keys()
            .filter(|path| !now.contains_key(*path))
            .cloned(),
    );
    changed.sort();
    changed
}

/// A hash of the file's contents, read in pieces (nothing kept); `None` if it cannot be read.
fn contents_hash(path: &Path) -> Option<u64> {
    let mut file = fs::File::open(path).ok()?;
    let mut hasher = DefaultHasher::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = file.read(&mut buffer).ok()?;
        if read == 0 {
            return Some(hasher.finish());
        }
        hasher.write(&buffer[..read]);
    }
}

#[cfg(unix)]
fn inode(metadata: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(metadata)
}

#[cfg(not(unix))]
fn inode(_metadata: &Metadata) -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_same_size_rewrite_within_one_clock_tick_is_seen_by_its_contents() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("goblin.json");
        fs::write(&file, "{ \"max\": 10 }").unwrap();
        let before = sweep(&[dir.path().to_path_buf()], true);
        let modified = fs::metadata(&file).unwrap().modified().unwrap();
        fs::write(&file, "{ \"max\": 20 }").unwrap();
        // A coarse clock: the second save has the first one's modification time.
        let reopened = fs::File::options().write(true).open(&file).unwrap();
        reopened.set_modified(modified).unwrap();
        let now = sweep(&[dir.path().to_path_buf()], true);
        assert_eq!(differences(&before, &now), [file]);
    }

    #[test]
    fn an_old_file_is_judged_by_its_metadata_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (old, moved) = (dir.path().join("old.json"), dir.path().join("sub/new.json"));
        fs::write(&old, "{}").unwrap();
        let long_ago = SystemTime::now() - Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let dirs = [dir.path().to_path_buf()];
        let before = sweep(&dirs, true);
        assert_eq!(before[&old].hash, None, "an old file is not read");
        assert!(differences(&before, &sweep(&dirs, true)).is_empty());
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::rename(&old, &moved).unwrap();
        let now = sweep(&dirs, true);
        assert_eq!(
            differences(&before, &now),
            [old, dir.path().join("sub"), moved]
        );
    }
}
