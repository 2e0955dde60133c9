//! Changes made outside the editor, for a client that does not watch files for the server
//! (it does not offer to register `workspace/didChangeWatchedFiles`, as Neovim 0.7 does not):
//! the server watches the archetypes root itself, with the engine's watcher (a
//! [`HotReloader`]'s, which hot reload uses: native file events or polling, debounced,
//! bounded), and hands each settled set of changed files to the message loop as the
//! `workspace/didChangeWatchedFiles` notification a watching client would have sent, so both
//! take one path.
//!
//! Scene files are not watched: the server reads them from disk each time it needs them
//! (references, renames, code lenses), and an open scene's diagnostics come from its buffer.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::thread;
use std::time::Duration;

use archetype_engine::{HotReloadOptions, HotReloader, WatchError, WatchedChanges};
use lsp_server::{Message, Notification};
use lsp_types::notification::{DidChangeWatchedFiles, Notification as _};
use lsp_types::{DidChangeWatchedFilesParams, FileChangeType, FileEvent};

use super::documents::uri_of;
use super::framing::Frame;
use super::server::FrameRead;

/// How often the watcher thread looks for settled changes (and whether to stop).
const TICK: Duration = Duration::from_millis(25);

/// More changed files than this waiting to be handed over (the message loop busy) are sent as
/// a change of the root: every file is read again.
const MAX_HELD_PATHS: usize = 4096;

/// Starts watching `root` (recursively): the watcher is set up before the library is read, so
/// no change made while it loads is missed. Debounced more than a game's hot reload: a
/// `git checkout` writes many files, and one read of them all is cheaper than many.
pub(super) fn watch_root(root: &Path) -> Result<HotReloader, WatchError> {
    let mut options = HotReloadOptions::default();
    options.debounce = Duration::from_millis(50);
    options.max_wait = Duration::from_millis(500);
    HotReloader::with_options(root, options)
}

/// The thread handing the watcher's changes to the message loop; stopped (and joined) when
/// dropped, which the server is when its loop ends.
pub(super) struct OutsideChanges {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl OutsideChanges {
    /// Hands the changes `watcher` sees under `root` to the message loop through `frames`.
    pub fn start(watcher: HotReloader, root: PathBuf, frames: SyncSender<FrameRead>) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::spawn(move || forward(watcher, &root, &frames, &stopped));
        OutsideChanges {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for OutsideChanges {
    fn drop(&mut self) {
        // The thread sees the channel close at its next tick at the latest, and never waits
        // on the message loop (it only tries to send), so the join is bounded.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The watcher thread: every tick, the settled changes (with any the loop had no room for)
/// are offered to the loop; it ends when told to stop or when the loop is gone, dropping the
/// watcher (which stops watching).
fn forward(
    mut watcher: HotReloader,
    root: &Path,
    frames: &SyncSender<FrameRead>,
    stopped: &mpsc::Receiver<()>,
) {
    let mut held = WatchedChanges::default();
    loop {
        match stopped.recv_timeout(TICK) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        if let Some(changes) = watcher.take_changes() {
            held = merge(held, changes);
        }
        if held.paths.is_empty() && !held.rescan {
            continue;
        }
        let message = Frame::Message(notification(root, &held));
        match frames.try_send(Ok(Some(message))) {
            Ok(()) => held = WatchedChanges::default(),
            // The loop has [`READ_AHEAD`](super::server) frames waiting: offered again later.
            Err(TrySendError::Full(_)) => {}
            Err(TrySendError::Disconnected(_)) => return,
        }
    }
}

/// Changes not handed over yet, and newer ones: each file once, at most [`MAX_HELD_PATHS`].
fn merge(held: WatchedChanges, newer: WatchedChanges) -> WatchedChanges {
    let rescan = held.rescan || newer.rescan;
    let paths: BTreeSet<PathBuf> = held.paths.into_iter().chain(newer.paths).collect();
    let mut merged = WatchedChanges::default();
    if rescan || paths.len() > MAX_HELD_PATHS {
        merged.rescan = true;
    } else {
        merged.paths = paths.into_iter().collect();
    }
    merged
}

/// The `workspace/didChangeWatchedFiles` a watching client would send for `changes`: each
/// file changed (or deleted, if it is gone); a rescan as a change of the root itself, which
/// reads every file again.
fn notification(root: &Path, changes: &WatchedChanges) -> Message {
    let event = |path: &Path| {
        let typ = match path.exists() {
            true => FileChangeType::CHANGED,
            false => FileChangeType::DELETED,
        };
        Some(FileEvent::new(uri_of(path)?, typ))
    };
    let changes = match changes.rescan {
        true => event(root).into_iter().collect(),
        false => (changes.paths.iter())
            .filter_map(|path| event(path))
            .collect(),
    };
    let params = DidChangeWatchedFilesParams { changes };
    Notification::new(DidChangeWatchedFiles::METHOD.to_string(), params).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(paths: &[&str], rescan: bool) -> WatchedChanges {
        let mut changes = WatchedChanges::default();
        changes.paths = paths.iter().map(PathBuf::from).collect();
        changes.rescan = rescan;
        changes
    }

    #[test]
    fn held_changes_keep_each_file_once_and_a_rescan_wins() {
        let merged = merge(
            changes(&["/r/b.json", "/r/a.json"], false),
            changes(&["/r/a.json"], false),
        );
        assert_eq!(merged, changes(&["/r/a.json", "/r/b.json"], false));
        let merged = merge(changes(&["/r/a.json"], false), changes(&[], true));
        assert_eq!(merged, changes(&[], true));
        let many: Vec<String> = (0..=MAX_HELD_PATHS)
            .map(|i| format!("/r/{i}.json"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            merge(changes(&many, false), changes(&[], false)),
            changes(&[], true)
        );
    }
}
