//! Writing files so that a crash or a failure never leaves a half-written one.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::stable_id::StableId;

/// Writes `bytes` to `path` through a synced temporary file and a rename.
///
/// The temporary file (`.<name>.tmp-<pid>-<random>`, hidden, so loaders and watchers skip it)
/// is flushed and synced before the rename, the replaced file's permissions are kept, and
/// temporary files that killed processes left next to the target are removed.
///
/// # Errors
/// Any I/O error; the previous file (if any) is then intact and the temporary file removed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (directory, temp) = temporary_for(path);
    let result = (|| {
        write_synced(&temp, bytes)?;
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
    result
}

/// Like [`write_atomically`], but never replaces an existing file: returns `Ok(false)` (and
/// writes nothing) if `path` exists. The file appears complete or not at all.
///
/// # Errors
/// Any I/O error.
pub fn create_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let (directory, temp) = temporary_for(path);
    let result = (|| {
        write_synced(&temp, bytes)?;
        // A hard link publishes the complete file only if the name is free.
        match fs::hard_link(&temp, path) {
            Ok(()) => {
                sync_directory(&directory);
                Ok(true)
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(error) => Err(error),
        }
    })();
    let _ = fs::remove_file(&temp);
    result
}

/// The directory of `path` and a fresh temporary file name next to it (after removing the
/// temporaries killed writers of the same file left behind).
fn temporary_for(path: &Path) -> (PathBuf, PathBuf) {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    remove_stale_temporaries(&directory, &file_name);
    let temp = directory.join(format!(
        ".{file_name}.tmp-{}-{}",
        std::process::id(),
        StableId::generate()
    ));
    (directory, temp)
}

/// Creates `path` (which must not exist) holding `bytes`, flushed to disk.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
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
/// was killed mid-save (a live process's temporary file is left alone).
fn remove_stale_temporaries(directory: &Path, file_name: &str) {
    let prefix = format!(".{file_name}.tmp-");
    let Ok(entries) = fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = rest
            .split('-')
            .next()
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !process_is_alive(pid, &entry.path())) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether the process that wrote `temp` may still be writing it. On Linux, whether the
/// process exists; elsewhere, whether the file was touched in the last hour.
fn process_is_alive(pid: u32, temp: &Path) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    fs::metadata(temp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_none_or(|age| age < std::time::Duration::from_secs(3600))
}
