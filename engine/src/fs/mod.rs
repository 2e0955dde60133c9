//! Files: the one file rule (a data file is a regular file within a size limit, inside the root
//! it belongs to), and writing one so that a failure never leaves it half-written.

mod atomic_file;
mod regular_file;
mod root;

pub use atomic_file::{create_atomically, write_atomically};
pub(crate) use regular_file::read_typed_file;
pub use regular_file::{read_regular_file, FileKind, FileTooLarge, NotRegularFile};
pub use root::real_path_inside;
pub(crate) use root::{is_inside, Refused, Root};
