//! The language server's workload: how long after an edit of an open buffer its diagnostics
//! arrive, in the load workload's tree of generated archetype files ([`LoadFixture`]).
//!
//! The server (`archetool::cli::lsp::serve`, with the demo's components) runs on a thread of
//! this process, over pipes, exactly as `archetool lsp` runs over stdio ([`Session`]). The
//! buffer is a mid-level archetype that 1% of the tree (100 archetypes of 10,000) extends; each
//! edit alternately writes a component name wrong (an error in it, and its dependants held
//! back) and right again (every problem cleared). A sample runs from the `didChange` written to
//! the `publishDiagnostics` for the buffer read. The first two edits are not measured: the
//! first edit after the buffer opens takes about twice as long as the rest (56 ms against
//! 22–35 ms here), as the first round of every quick figure would.

use std::io::{self, BufReader, PipeReader, PipeWriter, Write};
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::bench::load::{leaf_path, mid_path, root_path, LoadFixture};
use crate::cli::lsp::framing::{Frame, FrameReader, DEFAULT_MAX_MESSAGE_BYTES};
use crate::cli::lsp::{serve, LspArgs};
use crate::cli::{DirArg, Exit};
use crate::demo::components;

/// Edits made before the measured ones.
const WARM_UP: usize = 2;

/// The latency of each of `edits` edits of a mid-level buffer (100 archetypes of 10,000
/// extend it) in a library of `files` generated archetype files.
///
/// # Errors
/// If the server stops answering or publishes nothing for the buffer (a bug).
pub fn diagnostics_after_edit(files: usize, edits: usize) -> Result<Vec<Duration>, String> {
    edit_latency(files, &mid_path(0), edits)
}

/// The latency of each of `edits` edits of a leaf buffer (nothing extends it) in a library of
/// `files` generated archetype files.
///
/// # Errors
/// As [`diagnostics_after_edit`].
pub fn leaf_diagnostics_after_edit(files: usize, edits: usize) -> Result<Vec<Duration>, String> {
    edit_latency(files, &leaf_path(0), edits)
}

/// The latency of each of `edits` edits of the buffer of the archetype at `relative`, each
/// from its `didChange` to the buffer's `publishDiagnostics`.
fn edit_latency(files: usize, relative: &str, edits: usize) -> Result<Vec<Duration>, String> {
    let fixture = LoadFixture::generate(files);
    let mut session = Session::start(fixture.root())?;
    let file: PathBuf = session.root().join(relative);
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let broken = text.replacen("\"Health\"", "\"Helth\"", 1);
    if broken == text {
        return Err(format!("bench setup: {relative} has no `Health`"));
    }
    let uri = session.open(&file, &text)?;
    let mut samples = Vec::with_capacity(edits);
    for version in 0..edits + WARM_UP {
        let text = if version % 2 == 0 { &broken } else { &text };
        let start = Instant::now();
        session.change(&uri, version as i32 + 2, text)?;
        session.diagnostics_for(&uri)?;
        // The first two edits (one break, one fix) warm the server up, unmeasured, as every
        // quick figure's first round is.
        if version >= WARM_UP {
            samples.push(start.elapsed());
        }
    }
    session.close()?;
    Ok(samples)
}

/// Typing in a root buffer that about 1% of `files` archetypes extend (990 of 10,000):
/// `edits` versions written `gap` apart without waiting for the server, each with its own
/// typo. Returns the time from the last version's `didChange` to its diagnostics, and how many
/// versions of the buffer were published (each one checked is: the typos differ).
///
/// # Errors
/// If the server stops answering, or the pipe to it breaks.
pub fn root_typing(files: usize, edits: usize, gap: Duration) -> Result<(Duration, usize), String> {
    let fixture = LoadFixture::generate(files);
    let mut session = Session::start(fixture.root())?;
    let file: PathBuf = session.root().join(root_path(0));
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let uri = session.open(&file, &text)?;
    let versions: Vec<String> = (0..edits)
        .map(|k| text.replacen("\"Health\"", &format!("\"Helth{k}\""), 1))
        .collect();
    if versions.first() == Some(&text) {
        return Err("bench setup: the root has no `Health`".to_string());
    }
    let last = edits as i64 + 1;
    let mut writer = session.to_server.try_clone().map_err(|e| e.to_string())?;
    let typed_uri = uri.clone();
    // The typist writes on its own thread while this one reads what the server publishes.
    let typist = thread::spawn(move || -> Result<Instant, String> {
        let mut sent = Instant::now();
        for (k, text) in versions.iter().enumerate() {
            let started = Instant::now();
            let change = json!({
                "textDocument": { "uri": typed_uri, "version": k + 2 },
                "contentChanges": [{ "text": text }]
            });
            let message: Message =
                Notification::new("textDocument/didChange".into(), change).into();
            message.write(&mut writer).map_err(|e| e.to_string())?;
            writer.flush().map_err(|e| e.to_string())?;
            sent = Instant::now();
            thread::sleep(gap.saturating_sub(started.elapsed()));
        }
        Ok(sent)
    });
    let mut published = 1;
    while session.version_published_for(&uri)? != Some(last) {
        published += 1;
    }
    let arrived = Instant::now();
    let sent = typist
        .join()
        .map_err(|_| "the typist panicked".to_string())??;
    session.close()?;
    Ok((arrived.saturating_duration_since(sent), published))
}

/// A language server serving an archetypes directory on a thread of this process, over pipes,
/// initialized; it is shut down when the session is closed or dropped, its output read to the
/// end first (a server blocked writing to a full pipe never stops).
pub struct Session {
    root: PathBuf,
    to_server: PipeWriter,
    from_server: FrameReader<BufReader<PipeReader>>,
    server: Option<JoinHandle<Exit>>,
}

impl Session {
    /// Starts a server for the archetypes in `root`, as a client that registers file watchers
    /// for it, and waits for the library to be loaded (the server's request to register its
    /// watchers, answered).
    ///
    /// # Errors
    /// If the pipes cannot be made or the server stops answering.
    pub fn start(root: &Path) -> Result<Session, String> {
        let root = std::fs::canonicalize(root).map_err(|e| e.to_string())?;
        let args = LspArgs {
            dir: DirArg { dir: root.clone() },
            scenes: root.join("no-scenes"),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        };
        let (server_in, to_server) = io::pipe().map_err(|e| e.to_string())?;
        let (from_server, server_out) = io::pipe().map_err(|e| e.to_string())?;
        let server = thread::spawn(move || {
            let input = Box::new(BufReader::new(server_in));
            let mut output = server_out;
            serve(
                &args,
                components::registry(),
                input,
                &mut output,
                &mut io::sink(),
            )
        });
        let mut session = Session {
            root,
            to_server,
            // The server's own output: no limit but memory.
            from_server: FrameReader::new(BufReader::new(from_server), u64::MAX),
            server: Some(server),
        };
        // A client that registers file watchers for its server, as VS Code does: given a client
        // that does not offer to, the server watches the whole root itself, which is not the
        // workload measured.
        let capabilities = json!({
            "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } }
        });
        let initialize = Request::new(
            1.into(),
            "initialize".into(),
            json!({ "capabilities": capabilities }),
        );
        session.send(initialize.into())?;
        session.notify("initialized", json!({}))?;
        // The server answers `initialize` at once and loads the library on a thread; it handles
        // `initialized` once the library is loaded, asking then to register its watchers. The
        // registration answered, the library is loaded and nothing more is asked of the client.
        let mut initialized = false;
        loop {
            match session.next()? {
                Message::Response(response) if response.id == 1.into() => {
                    if let Err(error) = response.response_result {
                        return Err(format!("initialize failed: {}", error.message));
                    }
                    initialized = true;
                }
                Message::Request(request) if request.method == "client/registerCapability" => {
                    // Accepted, and nothing watched: the bench changes no file behind the
                    // server's back.
                    session.send(Response::new_ok(request.id, Value::Null).into())?;
                    break;
                }
                Message::Request(request) => {
                    let refused = Response::new_err(
                        request.id,
                        ErrorCode::MethodNotFound as i32,
                        format!("the bench's client does not handle `{}`", request.method),
                    );
                    session.send(refused.into())?;
                }
                Message::Response(_) | Message::Notification(_) => {}
            }
        }
        if !initialized {
            return Err(
                "the server asked to register watchers before answering `initialize`".into(),
            );
        }
        Ok(session)
    }

    /// The archetypes root, its links resolved (as the server names files).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens `file` in a buffer holding `text`; returns its URI.
    ///
    /// # Errors
    /// If the server no longer reads.
    pub fn open(&mut self, file: &Path, text: &str) -> Result<String, String> {
        let uri = format!("file://{}", file.display());
        let document = json!({ "uri": uri, "languageId": "json", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": document }))?;
        Ok(uri)
    }

    /// Replaces the text of the buffer at `uri` (version `version`).
    ///
    /// # Errors
    /// If the server no longer reads.
    pub fn change(&mut self, uri: &str, version: i32, text: &str) -> Result<(), String> {
        let change = json!({
            "textDocument": { "uri": uri, "version": version },
            "contentChanges": [{ "text": text }]
        });
        self.notify("textDocument/didChange", change)
    }

    /// Reads messages until the diagnostics published for `uri`; returns how many there are.
    ///
    /// # Errors
    /// If the server stops.
    pub fn diagnostics_for(&mut self, uri: &str) -> Result<usize, String> {
        let published = self.published_for(uri)?;
        Ok(published.diagnostics.map_or(0, |found| found.len()))
    }

    /// Reads messages until the diagnostics published for `uri`; returns their version.
    ///
    /// # Errors
    /// If the server stops.
    pub fn version_published_for(&mut self, uri: &str) -> Result<Option<i64>, String> {
        Ok(self.published_for(uri)?.version)
    }

    /// Reads messages until the diagnostics published for `uri`.
    fn published_for(&mut self, uri: &str) -> Result<PublishedParams, String> {
        loop {
            let body = match self.from_server.read_body() {
                Ok(Some(body)) => body,
                Ok(None) => return Err("the server stopped".to_string()),
                Err(error) => return Err(error.to_string()),
            };
            // The diagnostics are counted, not built: the figure is the server's time.
            let message: Published = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            if let (Some("textDocument/publishDiagnostics"), Some(params)) =
                (message.method.as_deref(), message.params)
            {
                if params.uri.as_deref() == Some(uri) {
                    return Ok(params);
                }
            }
        }
    }

    /// Shuts the server down: `shutdown` and `exit`, its output read to the end, its thread
    /// joined.
    ///
    /// # Errors
    /// If the server did not exit cleanly.
    pub fn close(&mut self) -> Result<(), String> {
        let Some(server) = self.server.take() else {
            return Ok(());
        };
        let shutdown = Request::new(2.into(), "shutdown".into(), Value::Null);
        let sent = self.send(shutdown.into());
        let sent = sent.and_then(|()| self.notify("exit", Value::Null));
        while let Ok(Some(_)) = self.from_server.read() {}
        let exit = server
            .join()
            .map_err(|_| "the server panicked".to_string())?;
        sent?;
        match exit {
            Exit::Success => Ok(()),
            exit => Err(format!("the server exited with code {}", exit.code())),
        }
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.send(Notification::new(method.into(), params).into())
    }

    fn send(&mut self, message: Message) -> Result<(), String> {
        message
            .write(&mut self.to_server)
            .map_err(|e| e.to_string())?;
        self.to_server.flush().map_err(|e| e.to_string())
    }

    /// The server's next message.
    fn next(&mut self) -> Result<Message, String> {
        match self.from_server.read() {
            Ok(Some(Frame::Message(message))) => Ok(message),
            Ok(Some(Frame::NotJsonRpc(error))) => Err(error.to_string()),
            Ok(None) => Err("the server stopped".to_string()),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// What [`Session::diagnostics_for`] reads of a message from the server: which notification
/// it is, and of a `publishDiagnostics` its file and how many diagnostics it lists.
#[derive(Deserialize)]
struct Published {
    method: Option<String>,
    params: Option<PublishedParams>,
}

/// [`Published`]'s parameters.
#[derive(Deserialize)]
struct PublishedParams {
    uri: Option<String>,
    version: Option<i64>,
    diagnostics: Option<Vec<IgnoredAny>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // A failure to shut down was the caller's to see by closing; here only the thread
        // matters, and it is joined.
        let _ = self.close();
    }
}
