//! [`FileWatch`]: the one file watcher behind every hot reload (archetype files by
//! [`HotReloader`](crate::HotReloader), scene files by [`LiveScene`](crate::LiveScene)).
//!
//! A watcher thread (native file events, or polling when they are unavailable: see
//! [`poll_watch`](crate::reload::poll_watch)) only records
//! which relevant paths changed, in bounded memory; the game takes the settled set once per
//! frame ([`FileWatch::take_settled`]) and re-reads those files on its own thread.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{Event, EventKind, RecursiveMode, Watcher};

use crate::reload::hot_reloader::{HotReloadOptions, WatchBackend, WatchError};
use crate::reload::poll_watch::PollWatch;

/// More changed files than this between two takes are read by a rescan of everything watched
/// (which reads every file once) rather than kept one by one: a flood of events costs bounded
/// memory.
const MAX_PENDING_PATHS: usize = 4096;

/// The most watcher errors kept between two takes (each is logged once).
const MAX_WATCH_ERRORS: usize = 64;

/// What a changed path means to the reload that watches it.
pub(crate) enum Relevance {
    /// A file it reads: re-read it.
    File,
    /// A directory that appeared or vanished (its files may have come or gone in one move):
    /// read everything again.
    Directory,
    /// Nothing it reads (editor scratch files, other files).
    Ignore,
}

/// Decides what a changed path means; runs on the watcher thread.
pub(crate) type Classify = Arc<dyn Fn(&Path) -> Relevance + Send + Sync>;

/// Changes seen by the watcher thread and not yet taken.
#[derive(Default)]
struct Pending {
    /// Changed files, each once (at most [`MAX_PENDING_PATHS`]: past it, a rescan).
    paths: BTreeSet<PathBuf>,
    /// A directory appeared or vanished, or too many files changed: read everything again.
    rescan: bool,
    first_event: Option<Instant>,
    last_event: Option<Instant>,
    watch_errors: Vec<String>,
}

/// The changes that settled: quiet for the debounce, or pending for the longest wait.
pub(crate) struct Settled {
    pub paths: BTreeSet<PathBuf>,
    pub rescan: bool,
}

/// Watches directories for changes to the files a reload reads.
pub(crate) struct FileWatch {
    // Kept alive for as long as we watch; dropping it stops the watcher thread.
    _watcher: Box<dyn Send>,
    backend: WatchBackend,
    pending: Arc<Mutex<Pending>>,
}

impl FileWatch {
    /// Watches each of `dirs` (recursively or not) for the paths `classify` finds relevant.
    /// Falls back to polling, with a warning in the log, when native file events cannot be set
    /// up (for example when inotify's watch limit is reached).
    ///
    /// Symbolic links are not followed: a directory link out of a watched directory is never
    /// watched.
    pub(crate) fn new(
        dirs: &[PathBuf],
        mode: RecursiveMode,
        options: &HotReloadOptions,
        classify: Classify,
    ) -> Result<FileWatch, WatchError> {
        let pending = Arc::new(Mutex::new(Pending::default()));
        if !options.force_polling {
            match native_watcher(dirs, mode, &pending, classify.clone()) {
                Ok(watcher) => {
                    return Ok(FileWatch {
                        _watcher: watcher,
                        backend: WatchBackend::Native,
                        pending,
                    })
                }
                Err((dir, error)) => tracing::warn!(
                    "native file events unavailable for `{}` ({error}); falling back to polling every {} ms",
                    dir.display(),
                    options.poll_interval.as_millis()
                ),
            }
        }
        let mut handler = event_handler(pending.clone(), classify);
        let report = move |paths: Vec<PathBuf>| {
            let mut event = Event::new(EventKind::Modify(ModifyKind::Any));
            event.paths = paths;
            handler(Ok(event));
        };
        let recursive = mode == RecursiveMode::Recursive;
        let poller = PollWatch::start(dirs.to_vec(), recursive, options.poll_interval, report)
            .map_err(|(root, error)| WatchError {
                root,
                source: notify::Error::io(error),
            })?;
        Ok(FileWatch {
            _watcher: Box::new(poller),
            backend: WatchBackend::Polling,
            pending,
        })
    }

    /// Whether native events or polling are in use.
    pub(crate) fn backend(&self) -> WatchBackend {
        self.backend
    }

    /// Whether changes have been seen that are not taken yet.
    pub(crate) fn has_pending(&self) -> bool {
        let pending = lock(&self.pending);
        !pending.paths.is_empty() || pending.rescan
    }

    /// Forgets every change seen so far (everything is about to be read anyway).
    pub(crate) fn clear(&self) {
        *lock(&self.pending) = Pending::default();
    }

    /// The changes that settled (`None` while writes are still coming, or if none were seen),
    /// logging the watcher's errors met since the last take.
    pub(crate) fn take_settled(&self, options: &HotReloadOptions) -> Option<Settled> {
        let (settled, watch_errors) = {
            let mut pending = lock(&self.pending);
            let now = Instant::now();
            let settled = pending
                .last_event
                .is_some_and(|last| now.duration_since(last) >= options.debounce)
                || pending
                    .first_event
                    .is_some_and(|first| now.duration_since(first) >= options.max_wait);
            let watch_errors = std::mem::take(&mut pending.watch_errors);
            let settled = settled.then(|| {
                let taken = std::mem::take(&mut *pending);
                Settled {
                    paths: taken.paths,
                    rescan: taken.rescan,
                }
            });
            (settled, watch_errors)
        };
        for error in &watch_errors {
            tracing::warn!("file watcher: {error}");
        }
        settled.filter(|settled| !settled.paths.is_empty() || settled.rescan)
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
    dirs: &[PathBuf],
    mode: RecursiveMode,
    pending: &Arc<Mutex<Pending>>,
    classify: Classify,
) -> Result<Box<dyn Watcher + Send>, (PathBuf, notify::Error)> {
    let first = dirs.first().cloned().unwrap_or_default();
    let handler = event_handler(pending.clone(), classify);
    let mut watcher =
        notify::RecommendedWatcher::new(handler, watch_config()).map_err(|e| (first, e))?;
    for dir in dirs {
        watcher.watch(dir, mode).map_err(|e| (dir.clone(), e))?;
    }
    Ok(Box::new(watcher))
}

/// Links are not followed: a directory link out of the root is refused by the load, and must
/// not be watched (an edit there would otherwise reach the game). Directories inside the root
/// are watched under their own paths.
fn watch_config() -> notify::Config {
    notify::Config::default().with_follow_symlinks(false)
}

fn event_handler(
    pending: Arc<Mutex<Pending>>,
    classify: Classify,
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
                        Relevance::File => {
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

/// Temporary and backup files editors write next to the real one: vim (`.swp`, `~`, `4913`),
/// Emacs (`.#` locks, `#autosave#`), JetBrains (`___jb_tmp___`, `___jb_old___`), VS Code and
/// others' atomic-save temporaries (`.tmp`, hidden files).
pub(crate) fn is_editor_scratch(name: &str) -> bool {
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
