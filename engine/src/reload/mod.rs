//! Hot reload: what changed between two versions of an archetype (`diff`), carrying it into live
//! entities while keeping their runtime state and overrides (`patcher`), and watching the
//! archetypes directory (`hot_reloader`, feature `hot-reload`).

mod diff;
#[cfg(feature = "hot-reload")]
mod hot_reloader;
mod patcher;

#[cfg(feature = "hot-reload")]
pub use hot_reloader::{HotReloadOptions, HotReloader, WatchBackend, WatchError};
pub use patcher::{apply_update, ReloadReport};
pub(crate) use patcher::{instance_entities, instance_root, LiveRefs};
