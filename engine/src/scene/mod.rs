//! Scenes: entity graphs with stable IDs in a file. The format (`format`, `header`), saving
//! (`save`), loading (`load`, with `fast_load` and `json_scan` for the one-pass routes and
//! `follow` for references), migrating old files (`migration`), preparing scenes off the game thread
//! and committing them (`prepared`, `prepared_batch`, `prepare_progress`, `commit_error`), and the `Scenes` facade (`api`).

// The scene modules' binary code stays compiled without `binary`, unreachable (see
// component/binary_codec.rs); the default build checks it for dead code.
pub(crate) mod api;
pub(crate) mod commit_error;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
pub(crate) mod fast_load;
pub(crate) mod follow;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
pub(crate) mod format;
pub(crate) mod header;
pub(crate) mod json_scan;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
pub(crate) mod load;
pub(crate) mod migration;
pub(crate) mod prepare_progress;
pub(crate) mod prepared;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
pub(crate) mod prepared_batch;
#[cfg_attr(not(feature = "binary"), allow(dead_code))]
pub(crate) mod save;
pub(crate) mod sub_scene;
