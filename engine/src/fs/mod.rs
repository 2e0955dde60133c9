//! Files: reading a data file that must be a regular file within a size limit, and writing one
//! so that a failure never leaves it half-written.

mod atomic_file;
mod regular_file;

pub use atomic_file::{create_atomically, write_atomically};
pub(crate) use regular_file::read_typed_file;
pub use regular_file::{read_regular_file, FileKind, FileTooLarge, NotRegularFile};
