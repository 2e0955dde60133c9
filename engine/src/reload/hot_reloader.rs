//! [`HotReloader`]: watches the archetypes directory and applies edits to a running game.
//!
//! The watcher thread only records which files changed; the game calls
//! [`HotReloader::apply`] once per frame, which re-reads settled files, rebuilds the library
//! and patches live entities on the game's own thread. The world is never touched from
//! another thread.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hecs::World;
use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecursiveMode, Watcher};

use crate::archetype::is_archetype_file_name;
use crate::archetype::ArchetypeLibrary;
use crate::diagnostic::Severity;
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
    /// How often the polling watcher scans. Default 100 ms.
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

/// More changed files than this between two `apply` calls are read by a rescan of the whole
/// root (which reads every file once) rather than kept one by one: a flood of events costs
/// bounded memory.
const MAX_PENDING_PATHS: usize = 4096;

/// The most watcher errors kept between two `apply` calls (each is logged once).
const MAX_WATCH_ERRORS: usize = 64;

/// Changes seen by the watcher thread and not yet applied.
#[derive(Default)]
struct Pending {
    /// Changed archetype files, each once (at most [`MAX_PENDING_PATHS`]: past it, a rescan).
    paths: BTreeSet<PathBuf>,
    /// A directory appeared or vanished: rescan everything.
    rescan: bool,
    first_event: Option<Instant>,
    last_event: Option<Instant>,
    watch_errors: Vec<String>,
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
    // Kept alive for as long as we watch; dropping it stops the watcher thread.
    _watcher: Box<dyn Watcher + Send>,
    backend: WatchBackend,
    pending: Arc<Mutex<Pending>>,
    options: HotReloadOptions,
}

impl std::fmt::Debug for HotReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotReloader")
            .field("backend", &self.backend)
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
        let pending = Arc::new(Mutex::new(Pending::default()));
        if !options.force_polling {
            match native_watcher(&root, &pending) {
                Ok(watcher) => {
                    return Ok(HotReloader {
                        _watcher: watcher,
                        backend: WatchBackend::Native,
                        pending,
                        options,
                    })
                }
                Err(error) => tracing::warn!(
                    "native file events unavailable for `{}` ({error}); falling back to polling every {} ms",
                    root.display(),
                    options.poll_interval.as_millis()
                ),
            }
        }
        let handler = event_handler(pending.clone());
        // notify's poller compares modification times in whole seconds, which misses a second
        // save within the same second; comparing contents (hashing each file per poll, a few
        // milliseconds for a typical archetypes tree) does not.
        let config = watch_config()
            .with_poll_interval(options.poll_interval)
            .with_compare_contents(true);
        let mut watcher =
            notify::PollWatcher::new(handler, config).map_err(|source| WatchError {
                root: root.clone(),
                source,
            })?;
        watcher
            .watch(&root, RecursiveMode::Recursive)
            .map_err(|source| WatchError {
                root: root.clone(),
                source,
            })?;
        Ok(HotReloader {
            _watcher: Box::new(watcher),
            backend: WatchBackend::Polling,
            pending,
            options,
        })
    }

    /// Whether native events or polling are in use.
    pub fn backend(&self) -> WatchBackend {
        self.backend
    }

    /// Whether changes have been seen that are not applied yet.
    pub fn has_pending(&self) -> bool {
        let pending = lock(&self.pending);
        !pending.paths.is_empty() || pending.rescan
    }

    /// Applies every settled change: re-reads the changed files, rebuilds the affected
    /// archetypes and patches their live instances. Call it once per frame; it returns at once
    /// (with an empty report) when nothing has settled yet.
    ///
    /// A file that fails to read, parse or validate changes nothing: its last good version
    /// stays in effect, and the report holds the error (which is also logged).
    pub fn apply(&mut self, world: &mut World, library: &mut ArchetypeLibrary) -> ReloadReport {
        let (paths, rescan, watch_errors) = {
            let mut pending = lock(&self.pending);
            let now = Instant::now();
            let settled = pending
                .last_event
                .is_some_and(|last| now.duration_since(last) >= self.options.debounce)
                || pending
                    .first_event
                    .is_some_and(|first| now.duration_since(first) >= self.options.max_wait);
            if !settled && pending.watch_errors.is_empty() {
                return ReloadReport::default();
            }
            let taken = std::mem::take(&mut *pending);
            if !settled {
                // Only watcher errors to report: keep the unsettled changes for later.
                pending.paths = taken.paths;
                pending.rescan = taken.rescan;
                pending.first_event = taken.first_event;
                pending.last_event = taken.last_event;
                (BTreeSet::new(), false, taken.watch_errors)
            } else {
                (taken.paths, taken.rescan, taken.watch_errors)
            }
        };
        for error in &watch_errors {
            tracing::warn!("file watcher: {error}");
        }
        if paths.is_empty() && !rescan {
            return ReloadReport::default();
        }
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

    /// Re-reads the whole directory now (whatever the watcher saw) and applies the result,
    /// with the same semantics as [`apply`](Self::apply).
    pub fn reload_all(
        &mut self,
        world: &mut World,
        library: &mut ArchetypeLibrary,
    ) -> ReloadReport {
        *lock(&self.pending) = Pending::default();
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

/// A poisoned lock only means the watcher thread panicked mid-update; the set of paths is still
/// usable (at worst it holds an extra path, which only costs a re-read).
fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn native_watcher(
    root: &Path,
    pending: &Arc<Mutex<Pending>>,
) -> notify::Result<Box<dyn Watcher + Send>> {
    let mut watcher =
        notify::RecommendedWatcher::new(event_handler(pending.clone()), watch_config())?;
    watcher.watch(root, RecursiveMode::Recursive)?;
    Ok(Box::new(watcher))
}

/// Links are not followed: a directory link out of the root is refused by the load, and must
/// not be watched (an edit there would otherwise reach the library). Directories inside the
/// root are watched under their own paths; the library re-reads archetypes read through a link
/// when their target changes.
fn watch_config() -> notify::Config {
    notify::Config::default().with_follow_symlinks(false)
}

fn event_handler(
    pending: Arc<Mutex<Pending>>,
) -> impl FnMut(notify::Result<Event>) + Send + 'static {
    move |result: notify::Result<Event>| {
        let mut pending = lock(&pending);
        match result {
            Ok(event) => {
                if matches!(
                    event.kind,
                    EventKind::Access(
                        AccessKind::Open(_)
                            | AccessKind::Read
                            | AccessKind::Close(AccessMode::Read)
                    )
                ) {
                    return;
                }
                let mut relevant = false;
                for path in event.paths {
                    match classify(&path) {
                        Relevance::Archetype => {
                            pending.paths.insert(path);
                            if pending.paths.len() > MAX_PENDING_PATHS {
                                pending.paths.clear();
                                pending.rescan = true;
                            }
                            relevant = true;
                        }
                        Relevance::Directory => {
                            pending.rescan = true;
                            relevant = true;
                        }
                        Relevance::Ignore => {}
                    }
                }
                if relevant {
                    let now = Instant::now();
                    pending.first_event.get_or_insert(now);
                    pending.last_event = Some(now);
                }
            }
            Err(error) if pending.watch_errors.len() < MAX_WATCH_ERRORS => {
                pending.watch_errors.push(error.to_string())
            }
            Err(_) => {}
        }
    }
}

enum Relevance {
    Archetype,
    Directory,
    Ignore,
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
            Relevance::Archetype
        } else {
            Relevance::Ignore
        };
    }
    if path.is_dir() || (!path.exists() && path.extension().is_none()) {
        return Relevance::Directory;
    }
    Relevance::Ignore
}

/// Temporary and backup files editors write next to the real one: vim (`.swp`, `~`, `4913`),
/// Emacs (`.#` locks, `#autosave#`), JetBrains (`___jb_tmp___`, `___jb_old___`), VS Code and
/// others' atomic-save temporaries (`.tmp`, hidden files).
pub(super) fn is_editor_scratch(name: &str) -> bool {
    name.starts_with('.')
        || name.starts_with('#')
        || name.ends_with('~')
        || name == "4913"
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".swo")
        || name.ends_with(".tmp")
        || name.contains("___jb_tmp___")
        || name.contains("___jb_old___")
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
            Relevance::Archetype
        ));
    }
}
