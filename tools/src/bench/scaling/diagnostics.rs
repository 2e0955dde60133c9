//! How reporting the problems of one archetype file grows with their number: `n` unknown fields
//! on one line of one file (a minified file, where every problem shares the longest line there
//! is), reported by `archetool validate` and published by the language server. Both place
//! every problem in the file's text, so both must stay linear in `n`.

use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::{time, Run};
use crate::bench::diagnostics::{fields_file, FieldsFixture, Layout};
use crate::bench::lsp::Session;
use crate::bench::spawn::write;

/// `archetool validate` of a directory whose one archetype file has `n` unknown fields on one
/// line: loading it, placing every problem and printing each with its snippet.
///
/// # Panics
/// If the fixture cannot be written, or validate prints nothing.
pub fn validate_errors_per_file(n: usize) -> Run {
    let fixture = FieldsFixture::new(n, Layout::Minified);
    Box::new(move || {
        time(|| {
            let printed = fixture.run(&["validate"]);
            assert!(!printed.is_empty(), "bench: validate printed nothing");
        })
    })
}

/// The language server's diagnostics for the same file in an open buffer: from the `didChange`
/// that writes the `n` fields into it to the `publishDiagnostics` that lists them read. Each
/// run first clears the buffer (off the clock), so every measured edit publishes all `n`.
///
/// # Panics
/// If the server cannot be started or stops answering, or publishes another count.
pub fn lsp_errors_per_file(n: usize) -> Run {
    let text = fields_file(n, Layout::Minified);
    let mut buffer = Buffer::open(&text);
    assert_eq!(
        buffer.published, n,
        "bench: every unknown field is published"
    );
    Box::new(move || {
        buffer.edit("{}");
        let elapsed = buffer.edit(&text);
        assert_eq!(
            buffer.published, n,
            "bench: every unknown field is published"
        );
        elapsed
    })
}

/// An archetype file open in a language server's buffer.
struct Buffer {
    session: Session,
    uri: String,
    version: i32,
    /// How many diagnostics were published for it last.
    published: usize,
    /// The archetypes directory (kept as long as the server reads it).
    _dir: TempDir,
}

impl Buffer {
    /// The buffer of `goblin.json`, alone in its directory, opened with `text`.
    fn open(text: &str) -> Buffer {
        let dir = tempfile::tempdir().expect("bench setup: cannot create a temporary directory");
        write(dir.path(), "goblin.json", "{}");
        let mut session = Session::start(dir.path()).expect("bench setup: the server starts");
        let file = session.root().join("goblin.json");
        let uri = session
            .open(&file, text)
            .expect("bench setup: the buffer opens");
        let published = session
            .diagnostics_for(&uri)
            .expect("bench: the server answers");
        Buffer {
            session,
            uri,
            version: 1,
            published,
            _dir: dir,
        }
    }

    /// Replaces the buffer's text (it must give other diagnostics than the last, or nothing
    /// is published) and waits for its diagnostics; returns how long that took.
    fn edit(&mut self, text: &str) -> Duration {
        self.version += 1;
        let start = Instant::now();
        let published = (self.session.change(&self.uri, self.version, text))
            .and_then(|()| self.session.diagnostics_for(&self.uri));
        let elapsed = start.elapsed();
        self.published = published.expect("bench: the server answers");
        elapsed
    }
}
