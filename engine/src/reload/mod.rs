//! Hot reload: what changed between two versions of an archetype (`diff`), carrying it into live
//! entities while keeping their runtime state and overrides (`patcher`), and watching the
//! archetypes directory (`hot_reloader`, feature `hot-reload`).

pub(crate) mod diff;
#[cfg(feature = "hot-reload")]
pub(crate) mod hot_reloader;
pub(crate) mod patcher;
