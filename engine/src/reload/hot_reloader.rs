//! [`HotReloader`]: watches the archetypes directory and applies edits to a running game.
//!
//! The watcher thread only records which files changed; the game calls
//! [`HotReloader::apply`] once per frame, which re-reads settled files, rebuilds the library
//! and patches live entities on the game's own thread. The world is never touched from
//! another thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hecs::World;
use notify::RecursiveMode;

use crate::archetype::is_archetype_file_name;
use crate::archetype::ArchetypeLibrary;
use crate::diagnostic::Severity;
use crate::reload::file_watch::{is_editor_scratch, Classify, FileWatch, Relevance, Settled};
use crate::reload::patcher::apply_update;
use crate::reload::report::ReloadReport;

/// How a [`HotReloader`] watches.
///
/// New options may be added in minor versions: start from [`HotReloadOptions::default`] and
/// set the fields you need.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use archetype_engine::HotReloadOptions;
/// let mut options = HotReloadOptions::default();
/// options.debounce = Duration::from_millis(50);
/// options.force_polling = true; // a network drive without file events
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HotReloadOptions {
    /// How long the files must be quiet before a change is applied: editors write a file in
    /// several steps, and one save should be one reload. Default 30 ms.
    pub debounce: Duration,
    /// Apply anyway once the first pending change is this old, even if writes keep coming.
    /// Default 500 ms.
    pub max_wait: Duration,
    /// Use polling instead of the operating system's file events (for network drives, or to
    /// test the fallback). Default `false`.
    pub force_polling: bool,
    /// How often the polling watcher looks at the directories and the files modified last
    /// (the full sweeps of a big tree are spaced further apart, to stay under 2% of a core).
    /// Default 100 ms.
    pub poll_interval: Duration,
}

impl Default for HotReloadOptions {
    fn default() -> Self {
        HotReloadOptions {
            debounce: Duration::from_millis(30),
            max_wait: Duration::from_millis(500),
            force_polling: false,
            poll_interval: Duration::from_millis(100),
        }
    }
}

/// How file changes are being noticed. More ways may come: a `match` needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WatchBackend {
    /// The operating system's file events (inotify, FSEvents, ReadDirectoryChangesW).
    Native,
    /// Scanning the directory on a timer (the fallback when native events are unavailable).
    Polling,
}

/// The archetypes directory could not be watched at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch `{}` for changes: {source}", root.display())]
#[non_exhaustive]
pub struct WatchError {
    /// The directory.
    pub root: PathBuf,
    /// What the file-event library said.
    #[source]
    pub source: notify::Error,
}

/// The archetype files a [`HotReloader`]'s watcher saw change, once they settled, as
/// [`HotReloader::take_changes`] hands them to a tool that reads them itself (a language
/// server updating its library) rather than applying them to a world.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchedChanges {
    /// The archetype files written, created or removed, each once, in path order.
    pub paths: Vec<PathBuf>,
    /// A directory came or went (its files may have moved in one step), or more files changed
    /// than are listed one by one: read every file again.
    pub rescan: bool,
}

/// Watches an archetypes directory and hot-reloads archetypes into a running world.
///
/// An edit changes only the fields it changed on each live instance: runtime state (the
/// goblin's current health below) is kept, and per-instance overrides win over the file.
///
/// # Example
/// ```
/// use std::time::{Duration, Instant};
/// use archetype_engine::{ArchetypeLibrary, ComponentRegistry, HotReloader};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Clone, Serialize, Deserialize)]
/// # struct Health { current: f32, max: f32 }
/// # let dir = tempfile::tempdir()?;
/// # let goblin_file = dir.path().join("goblin.json");
/// # std::fs::write(&goblin_file, r#"{ "components": { "Health": { "current": 10, "max": 10 } } }"#)?;
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Health>()?;
/// let mut library = ArchetypeLibrary::load(dir.path(), registry)?;
/// let mut world = hecs::World::new();
/// let goblin = library.spawn(&mut world, "goblin")?;
/// world.get::<&mut Health>(goblin)?.current = 4.0; // wounded
///
/// let mut reloader = HotReloader::new(&library)?;
/// // A designer saves the file...
/// std::fs::write(&goblin_file, r#"{ "components": { "Health": { "current": 10, "max": 25 } } }"#)?;
/// // ...and the game loop applies it on a later frame (once the file is quiet for 30 ms).
/// let deadline = Instant::now() + Duration::from_secs(20);
/// loop {
///     let report = reloader.apply(&mut world, &mut library); // never blocks
///     if !report.is_empty() {
///         println!("{report}"); // reloaded goblin: 1 entity updated ...
///         break;
///     }
///     assert!(Instant::now() < deadline, "the edit was not seen");
///     std::thread::sleep(Duration::from_millis(16)); // ... the rest of the frame ...
/// }
/// let health = world.get::<&Health>(goblin)?;
/// assert_eq!((health.current, health.max), (4.0, 25.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct HotReloader {
    watch: FileWatch,
    options: HotReloadOptions,
}

impl std::fmt::Debug for HotReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotReloader")
            .field("backend", &self.watch.backend())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl HotReloader {
    /// Watches the library's archetypes directory with default options.
    ///
    /// # Errors
    /// If neither native file events nor polling can watch the directory (e.g. it does not
    /// exist).
    pub fn new(library: &ArchetypeLibrary) -> Result<Self, WatchError> {
        Self::with_options(library.root(), HotReloadOptions::default())
    }

    /// Watches `root` (recursively). Falls back to polling, with a warning in the log, when
    /// native file events cannot be set up (for example when inotify's watch limit is reached).
    ///
    /// Symbolic links are not followed: a directory link out of the root is never watched (a
    /// load refuses it, and so does every reload). An archetype read through a link inside the
    /// root is re-read when the file it points to changes.
    ///
    /// # Errors
    /// If polling cannot watch the directory either.
    pub fn with_options(
        root: impl AsRef<Path>,
        options: HotReloadOptions,
    ) -> Result<Self, WatchError> {
        let root = root.as_ref().to_path_buf();
        let classify: Classify = Arc::new(classify);
        let watch = FileWatch::new(&[root], RecursiveMode::Recursive, &options, classify)?;
        Ok(HotReloader { watch, options })
    }

    /// Whether native events or polling are in use.
    pub fn backend(&self) -> WatchBackend {
        self.watch.backend()
    }

    /// Whether changes have been seen that are not applied yet.
    pub fn has_pending(&self) -> bool {
        self.watch.has_pending()
    }

    /// Applies every settled change: re-reads the changed files, rebuilds the affected
    /// archetypes and patches their live instances. Call it once per frame; it returns at once
    /// (with an empty report) when nothing has settled yet.
    ///
    /// A file that fails to read, parse or validate changes nothing: its last good version
    /// stays in effect, and the report holds the error (which is also logged).
    pub fn apply(&mut self, world: &mut World, library: &mut ArchetypeLibrary) -> ReloadReport {
        let Some(Settled { paths, rescan }) = self.watch.take_settled(&self.options) else {
            return ReloadReport::default();
        };
        let span = tracing::info_span!("hot_reload", files = paths.len(), rescan);
        let _entered = span.enter();
        let started = Instant::now();
        let update = if rescan {
            library.reload_all()
        } else {
            let paths: Vec<PathBuf> = paths.into_iter().collect();
            library.reload_files(&paths)
        };
        let mut report = apply_update(world, library, &update);
        report.elapsed = started.elapsed();
        log_report(&report);
        report
    }

    /// Takes the changes that settled (quiet for [`debounce`](HotReloadOptions::debounce), or
    /// pending for [`max_wait`](HotReloadOptions::max_wait)) without reading them: for a tool
    /// that keeps its own [`ArchetypeLibrary`] and no world, which reads them with
    /// [`ArchetypeLibrary::reload_files`] (or [`reload_all`](ArchetypeLibrary::reload_all) on a
    /// rescan). `None` while writes are still coming or when nothing changed. Never blocks;
    /// what it takes, [`apply`](Self::apply) no longer sees.
    pub fn take_changes(&mut self) -> Option<WatchedChanges> {
        let Settled { paths, rescan } = self.watch.take_settled(&self.options)?;
        Some(WatchedChanges {
            paths: paths.into_iter().collect(),
            rescan,
        })
    }

    /// Re-reads the whole directory now (whatever the watcher saw) and applies the result,
    /// with the same semantics as [`apply`](Self::apply).
    pub fn reload_all(
        &mut self,
        world: &mut World,
        library: &mut ArchetypeLibrary,
    ) -> ReloadReport {
        self.watch.clear();
        let span = tracing::info_span!("hot_reload", files = 0, rescan = true);
        let _entered = span.enter();
        let started = Instant::now();
        let update = library.reload_all();
        let mut report = apply_update(world, library, &update);
        report.elapsed = started.elapsed();
        log_report(&report);
        report
    }
}

fn log_report(report: &ReloadReport) {
    if !report.changed.is_empty() {
        tracing::info!(
            archetypes = report.changed.len(),
            names = %report.changed.join(", "),
            entities = report.entities_updated,
            spawned = report.entities_spawned,
            despawned = report.entities_despawned,
            orphaned = report.entities_orphaned,
            ms = crate::logging::ms(report.elapsed),
            "reloaded archetypes"
        );
    }
    for held in &report.held_back {
        tracing::warn!("{held}");
    }
    for diagnostic in &report.errors {
        match diagnostic.severity {
            Severity::Error => tracing::error!("{diagnostic}"),
            Severity::Warning => tracing::warn!("{diagnostic}"),
            Severity::Note => tracing::info!("{diagnostic}"),
        }
    }
    for failure in &report.patch_failures {
        tracing::error!("{failure}");
    }
}

/// Which file events matter: archetype files, and directories (whose contents may have come
/// or gone in one move). Editor scratch files never do.
fn classify(path: &Path) -> Relevance {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Relevance::Ignore;
    };
    if is_editor_scratch(name) {
        return Relevance::Ignore;
    }
    if name.ends_with(".json") {
        return if is_archetype_file_name(name) {
            Relevance::File
        } else {
            Relevance::Ignore
        };
    }
    if path.is_dir() || (!path.exists() && path.extension().is_none()) {
        return Relevance::Directory;
    }
    Relevance::Ignore
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_scratch_files_are_ignored() {
        for name in [
            ".goblin.json.swp",
            "goblin.json~",
            "4913",
            ".#goblin.json",
            "goblin.json___jb_tmp___",
            "goblin.json___jb_old___",
            "goblin.json.tmp",
            ".goblin.json.1234",
        ] {
            assert!(
                matches!(classify(Path::new(name)), Relevance::Ignore),
                "{name}"
            );
        }
        assert!(matches!(
            classify(Path::new("/nonexistent/goblin.json")),
            Relevance::File
        ));
    }
}
