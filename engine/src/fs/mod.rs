//! Files: reading a data file that must be a regular file within a size limit, and writing one
//! so that a failure never leaves it half-written.

pub(crate) mod atomic_file;
pub(crate) mod regular_file;
