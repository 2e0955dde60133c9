//! Hot reload: what changed between two versions of an archetype (`diff`; an update's changes on
//! other cores, `diffs`), carrying it into live
//! entities while keeping their runtime state and overrides (`patcher`), and watching the
//! archetypes directory (`hot_reloader` over `file_watch`, the watcher scene files share, and `poll_watch`, its
//! polling fallback; feature `hot-reload`); what a reload did (`report`).

mod diff;
mod diffs;
#[cfg(feature = "hot-reload")]
mod file_watch;
#[cfg(feature = "hot-reload")]
mod hot_reloader;
mod patcher;
#[cfg(feature = "hot-reload")]
mod poll_watch;
mod report;

#[cfg(feature = "hot-reload")]
pub(crate) use file_watch::{is_editor_scratch, Classify, FileWatch, Relevance};
#[cfg(feature = "hot-reload")]
pub use hot_reloader::{HotReloadOptions, HotReloader, WatchBackend, WatchError, WatchedChanges};
pub use patcher::apply_update;
pub(crate) use patcher::{instance_entities, instance_root, LiveRefs};
pub use report::{PatchAction, PatchFailure, ReloadReport};
