//! Reading a data file that must be a regular file: never blocking on a FIFO, never opening a
//! device, never reading past a size limit.
//!
//! Every file the library and `archetool` read (archetype files, scene files) goes through
//! [`read_regular_file`]. It asks for the file's type before opening it, opens it without
//! blocking, and asks the open handle again, so a FIFO swapped in between cannot hang it.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// What a path names when it is not a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A FIFO (named pipe): reading it would wait for a writer.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device (a terminal, `/dev/zero`, ...).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Something else that is not a regular file.
    Other,
}

impl FileKind {
    /// The kind of `file_type`, or `None` for a regular file.
    pub(crate) fn of(file_type: fs::FileType) -> Option<FileKind> {
        if file_type.is_file() {
            return None;
        }
        if file_type.is_dir() {
            return Some(FileKind::Directory);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_fifo() {
                return Some(FileKind::Fifo);
            }
            if file_type.is_socket() {
                return Some(FileKind::Socket);
            }
            if file_type.is_char_device() {
                return Some(FileKind::CharDevice);
            }
            if file_type.is_block_device() {
                return Some(FileKind::BlockDevice);
            }
        }
        Some(FileKind::Other)
    }

    /// `a FIFO (named pipe)`, `a socket`, ...
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "a special file",
        }
    }
}

/// A path refused because it is not a regular file; it was not read.
///
/// [`read_regular_file`] returns it inside an [`io::Error`]; find it with
/// `error.get_ref().and_then(|e| e.downcast_ref::<NotRegularFile>())`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("is {}, not a regular file; only regular files are read (replace it with a file or remove it)", kind.describe())]
#[non_exhaustive]
pub struct NotRegularFile {
    /// What the path is instead.
    pub kind: FileKind,
}

/// A file refused because it is larger than the limit; it was not read.
///
/// [`read_regular_file`] returns it inside an [`io::Error`] (of kind
/// [`io::ErrorKind::FileTooLarge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("file is {size} bytes, over the limit of {limit} bytes")]
#[non_exhaustive]
pub struct FileTooLarge {
    /// The file's size (or what was read of it, if it grew while being read).
    pub size: u64,
    /// The limit.
    pub limit: u64,
}

/// Reads the whole file at `path` (symbolic links followed), which must be a regular file of
/// at most `limit` bytes.
///
/// The type is checked before the file is opened, so a FIFO, a socket or a device is never
/// opened; the file is opened without blocking (on Unix), and the open handle is checked again,
/// so a FIFO put in its place in between is refused too, not waited on.
///
/// # Errors
/// The [`io::Error`] of looking the file up, opening or reading it; one holding
/// [`NotRegularFile`] (kind [`io::ErrorKind::InvalidInput`], or
/// [`io::ErrorKind::IsADirectory`]) for anything but a regular file; one holding
/// [`FileTooLarge`] for a file over `limit`.
///
/// # Example
/// ```
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("goblin.json");
/// std::fs::write(&path, "{}")?;
/// assert_eq!(archetype_engine::tooling::read_regular_file(&path, 1024)?, b"{}");
/// let error = archetype_engine::tooling::read_regular_file(dir.path(), 1024).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "is a directory, not a regular file; only regular files are read (replace it with a file or remove it)"
/// );
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_regular_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    refuse_special(fs::metadata(path)?.file_type())?;
    read_typed_file(path, limit)
}

/// [`read_regular_file`] for a path whose type the caller has just checked (the archetype
/// scan knows it from the directory entry, without a system call): opens it without blocking
/// and checks the open handle.
pub(crate) fn read_typed_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_nonblocking(path)?;
    let metadata = file.metadata()?;
    refuse_special(metadata.file_type())?;
    let too_large =
        |size: u64| io::Error::new(io::ErrorKind::FileTooLarge, FileTooLarge { size, limit });
    if metadata.len() > limit {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    // The file may have grown since we looked at its size.
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The error for a file of type `file_type`, unless it is a regular file.
fn refuse_special(file_type: fs::FileType) -> io::Result<()> {
    match FileKind::of(file_type) {
        None => Ok(()),
        Some(kind) => Err(NotRegularFile { kind }.into()),
    }
}

impl From<NotRegularFile> for io::Error {
    fn from(refusal: NotRegularFile) -> io::Error {
        let kind = if refusal.kind == FileKind::Directory {
            io::ErrorKind::IsADirectory
        } else {
            io::ErrorKind::InvalidInput
        };
        io::Error::new(kind, refusal)
    }
}

/// Opens `path` for reading. On Unix without blocking: opening a FIFO for reading otherwise
/// waits until some process opens it for writing, which may be never.
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}
