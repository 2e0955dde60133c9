//! [`EventLog`]: the demo's bounded log of reloads, errors and what the keys did.

use std::collections::VecDeque;

use archetype_engine::printable;

/// What a log entry reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// A hot reload applied archetype changes to live entities.
    Reload,
    /// Something went wrong: a broken archetype file (as `file:line:col: error[...]: ...`), a
    /// failed save or load, a spawn by a name that does not exist.
    Error,
    /// Anything else worth a line: a save, a load, a full reload that changed nothing.
    Info,
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// What it reports.
    pub kind: LogKind,
    /// The frame it happened on.
    pub frame: u64,
    /// The text, on one line, control characters escaped.
    pub text: String,
    /// How many times in a row the same text was logged (a spawner whose archetype is missing
    /// fails on every attempt; the log shows it once, with a count).
    pub repeats: u32,
}

/// The most recent log entries, oldest first; older ones are dropped past the capacity.
#[derive(Clone, Debug)]
pub struct EventLog {
    entries: VecDeque<LogEntry>,
    capacity: usize,
}

impl EventLog {
    /// An empty log keeping at most `capacity` entries.
    pub fn new(capacity: usize) -> EventLog {
        EventLog {
            entries: VecDeque::with_capacity(capacity.min(1024)),
            capacity: capacity.max(1),
        }
    }

    /// Adds an entry; the same kind and text as the newest entry only counts a repeat. Control
    /// characters in the text (a key or a file name from a broken file) are escaped
    /// ([`printable`]): the log is drawn on the terminal.
    pub fn push(&mut self, kind: LogKind, frame: u64, text: impl Into<String>) {
        let text = text.into();
        let text = match printable(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(escaped) => escaped,
        };
        if let Some(last) = self.entries.back_mut() {
            if last.kind == kind && last.text == text {
                last.repeats += 1;
                last.frame = frame;
                return;
            }
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back(LogEntry {
            kind,
            frame,
            text,
            repeats: 1,
        });
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &LogEntry> + ExactSizeIterator {
        self.entries.iter()
    }

    /// The newest entry.
    pub fn last(&self) -> Option<&LogEntry> {
        self.entries.back()
    }

    /// Number of entries kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
