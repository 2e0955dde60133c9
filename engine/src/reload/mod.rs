//! Hot reload: what changed between two versions of an archetype (`diff`), carrying it into live
//! entities while keeping their runtime state and overrides (`patcher`), and watching the
//! archetypes directory (`hot_reloader`, feature `hot-reload`); what a reload did (`report`).

mod diff;
#[cfg(feature = "hot-reload")]
mod hot_reloader;
mod patcher;
mod report;

#[cfg(feature = "hot-reload")]
pub use hot_reloader::{HotReloadOptions, HotReloader, WatchBackend, WatchError};
pub use patcher::apply_update;
pub(crate) use patcher::{instance_entities, instance_root, LiveRefs};
pub use report::{PatchAction, PatchFailure, ReloadReport};
