//! Writing files so that a crash or a failure never leaves a half-written one.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a synced temporary file and a rename.
///
/// The temporary file (`.<name>.tmp-<pid>-<random>`, hidden, so loaders and watchers skip it)
/// is flushed and synced before the rename, the replaced file's permissions are kept, and
/// temporary files that killed processes left next to the target are removed.
///
/// The writing process holds an advisory lock on its temporary file until it is renamed, and
/// the lock goes when the process does, however it ends: a temporary file whose lock can be
/// taken has no writer left, and is removed. That holds for every process ID, 1 (a container's
/// main process) and recycled ones included.
///
/// A symbolic link at `path` stays a link: the file it points to is replaced (with the
/// temporary file next to that file, so the rename stays on one file system).
///
/// # Errors
/// Any I/O error; the previous file (if any) is then intact and the temporary file removed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = link_target(path);
    let path = target.as_deref().unwrap_or(path);
    let (directory, temp, file) = temporary_for(path, bytes)?;
    let result = (|| {
        if let Ok(metadata) = fs::metadata(path) {
            fs::set_permissions(&temp, metadata.permissions())?;
        }
        fs::rename(&temp, path)?;
        sync_directory(&directory);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    // The lock goes only now, once the temporary file is renamed or removed.
    drop(file);
    result
}

/// Like [`write_atomically`], but never replaces an existing file: returns `Ok(false)` (and
/// writes nothing) if `path` exists. The file appears complete or not at all.
///
/// # Errors
/// Any I/O error.
pub fn create_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let (directory, temp, file) = temporary_for(path, bytes)?;
    // A hard link publishes the complete file only if the name is free.
    let result = match fs::hard_link(&temp, path) {
        Ok(()) => {
            sync_directory(&directory);
            Ok(true)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(error) => Err(error),
    };
    let _ = fs::remove_file(&temp);
    drop(file);
    result
}

/// The file a symbolic link at `path` points to, or `None` if `path` is not a link (or a
/// dangling one, which the write then replaces).
fn link_target(path: &Path) -> Option<PathBuf> {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        fs::canonicalize(path).ok()
    } else {
        None
    }
}

/// How many times a save starts over with a fresh temporary file when a cleanup removed its
/// file before it could lock it (which takes a cleanup running in that very instant).
const ATTEMPTS: usize = 4;

/// The directory of `path`, a fresh temporary file next to it holding `bytes` (synced), and
/// its open handle, which holds the file's lock; after removing the temporaries killed
/// writers of the same file left behind.
fn temporary_for(path: &Path, bytes: &[u8]) -> std::io::Result<(PathBuf, PathBuf, fs::File)> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    remove_stale_temporaries(&directory, &file_name);
    let mut attempt = 0;
    loop {
        let temp = directory.join(format!(
            ".{file_name}.tmp-{}-{}",
            std::process::id(),
            unique_suffix()
        ));
        let file = create_locked(&temp)?;
        // Between creating and locking, another process's cleanup may have taken the
        // (not yet locked) file for a dead writer's and removed it. Once locked, it is ours.
        if fs::symlink_metadata(&temp).is_err() && attempt + 1 < ATTEMPTS {
            attempt += 1;
            continue;
        }
        let written = write_synced(&file, bytes);
        if let Err(error) = written {
            let _ = fs::remove_file(&temp);
            return Err(error);
        }
        return Ok((directory, temp, file));
    }
}

/// Creates `path` (which must not exist) and locks it for as long as the handle lives.
fn create_locked(path: &Path) -> std::io::Result<fs::File> {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    // A file system without locks (some network shares) only loses the cleanup of this file
    // if the process is killed: the save itself goes on.
    let _ = file.lock();
    Ok(file)
}

/// Writes `bytes` to the new, empty `file`, flushed to disk.
fn write_synced(mut file: &fs::File, bytes: &[u8]) -> std::io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes a rename in `directory` durable, where the platform allows syncing a directory.
fn sync_directory(directory: &Path) {
    if let Ok(dir) = fs::File::open(directory) {
        let _ = dir.sync_all();
    }
}

/// Deletes temporary files that earlier saves of `file_name` left behind when their process
/// was killed mid-save: those whose lock can be taken (a live writer holds its file's lock).
fn remove_stale_temporaries(directory: &Path, file_name: &str) {
    let prefix = format!(".{file_name}.tmp-");
    let Ok(entries) = fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with(&prefix)) {
            continue;
        }
        // Only regular files: opening anything else could block or touch a device.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = fs::File::open(&path) else {
            continue;
        };
        // Removed while the lock is held, so a writer that locks the file after us finds it
        // gone (and starts over) rather than writing to a file nobody will rename.
        if file.try_lock().is_ok() {
            let _ = fs::remove_file(&path);
        }
    }
}

/// 16 hex digits no other temporary of this process has: a counter mixed with a random key.
fn unique_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}", hasher.finish())
}
