//! The message loop: the initialize and shutdown handshake, the open buffers installed in the
//! library, and each request answered by the file that knows how.
//!
//! Every message is handled on the calling thread, one at a time: `archetool`'s `main` holds
//! standard output for the whole run, and an edit's diagnostics take milliseconds, so there is
//! nothing to gain from a second thread answering. Other threads only feed the loop: one reads
//! the frames ahead, and, for a client that does not watch files for the server, one hands in
//! the changes under the root as `workspace/didChangeWatchedFiles` (`watch.rs`). A request
//! before `initialize` gets the protocol's `ServerNotInitialized` error, one after `shutdown`
//! `InvalidRequest`, and any request the server cannot read (bad parameters, a URI it does not
//! serve) an error or an empty answer: nothing a client sends makes it panic or stop, except
//! `exit`, the end of its input, or input that breaks the framing (after which no message can
//! be found again).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{mpsc, Arc};
use std::thread;

use archetype_engine::tooling::check_archetype_name;
use archetype_engine::{ArchetypeLibrary, ComponentRegistry, HotReloader, LoadOptions, WatchError};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response, ResponseError};
use lsp_types::notification::{
    Cancel, DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidCreateFiles,
    DidDeleteFiles, DidOpenTextDocument, DidRenameFiles, DidSaveTextDocument, Initialized,
    Notification as _, Progress,
};
use lsp_types::request::{
    CodeActionRequest, CodeLensRequest, Completion, DocumentDiagnosticRequest, DocumentLinkRequest,
    Formatting, GotoDefinition, HoverRequest, Initialize, InlayHintRequest, PrepareRenameRequest,
    References, RegisterCapability, Rename, Request as _, Shutdown, WorkDoneProgressCreate,
    WorkspaceDiagnosticRefresh, WorkspaceDiagnosticRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    DiagnosticOptions, DiagnosticServerCapabilities, DidChangeWatchedFilesRegistrationOptions,
    FileOperationFilter, FileOperationPattern, FileOperationPatternKind,
    FileOperationRegistrationOptions, FileSystemWatcher, GlobPattern, InitializeParams,
    InitializeResult, NumberOrString, OneOf, ProgressParams, ProgressParamsValue, Registration,
    RegistrationParams, RenameOptions, ResourceOperationKind, SaveOptions, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkspaceDiagnosticParams,
    WorkspaceDiagnosticReportResult, WorkspaceFileOperationsServerCapabilities,
    WorkspaceServerCapabilities,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::super::{Context, Exit};
use super::documents::{is_scene, kind_of, path_of, uri_of, Document, Documents, FileKind};
use super::framing::{write_message, Frame, FrameError, FrameReader};
use super::watch::{self, OutsideChanges};
use super::{completion, diagnostics, edits, hover, navigation, pull, LspArgs};

/// What the load's thread gives.
struct Loaded {
    /// The library, or an empty one.
    library: ArchetypeLibrary,
    /// Why the directory could not be read.
    error: Option<String>,
    /// The watcher of the root, set up before the library was read, for a client that does not
    /// watch files for the server.
    watcher: Option<Result<HotReloader, WatchError>>,
}

/// The library loading on its own thread since `initialize`, and what the state will hold.
struct Loading {
    library: thread::JoinHandle<Loaded>,
    root: PathBuf,
    scenes: PathBuf,
    moves_files: bool,
    /// Whether the client shows the server's progress (`window.workDoneProgress`).
    shows_progress: bool,
}

/// The token of the load's progress.
fn progress_token() -> NumberOrString {
    NumberOrString::String("archetool-load".to_string())
}

/// A `$/progress` notification of the load.
fn progress(value: WorkDoneProgress) -> Message {
    let params = ProgressParams {
        token: progress_token(),
        value: ProgressParamsValue::WorkDone(value),
    };
    Notification::new(Progress::METHOD.to_string(), params).into()
}

/// Frames read ahead of the one being handled, at most.
const READ_AHEAD: usize = 64;

/// A frame as the reader thread read it (or a notification the server's watcher made).
pub(super) type FrameRead = Result<Option<Frame>, FrameError>;

/// Whether `message` is a buffer's `didChange` that a later one of the same buffer among
/// `waiting` replaces before any request is read (full synchronisation: each holds the whole
/// text), so it need not be processed.
fn superseded(message: &Message, waiting: &VecDeque<FrameRead>) -> bool {
    let Message::Notification(change) = message else {
        return false;
    };
    if change.method != DidChangeTextDocument::METHOD {
        return false;
    }
    let uri = |notification: &Notification| {
        notification
            .params
            .get("textDocument")?
            .get("uri")?
            .as_str()
            .map(str::to_owned)
    };
    let Some(edited) = uri(change) else {
        return false;
    };
    for read in waiting {
        match read {
            Ok(Some(Frame::Message(Message::Notification(later))))
                if later.method == DidChangeTextDocument::METHOD
                    && uri(later).as_deref() == Some(edited.as_str()) =>
            {
                return true;
            }
            Ok(Some(Frame::Message(Message::Request(_)))) => return false,
            _ => {}
        }
    }
    false
}

/// What a request that made the server fail is answered.
const INTERNAL: &str = "the server failed on this message (a bug: please report it)";

/// What every request is answered from.
pub(super) struct State {
    /// The archetypes, with the open buffers' text installed.
    pub library: ArchetypeLibrary,
    /// The archetypes root, absolute, links resolved (the paths diagnostics name start with it).
    pub root: PathBuf,
    /// Where scenes are looked for (references, renames).
    pub scenes: PathBuf,
    pub documents: Documents,
    /// Whether the client applies workspace edits that move files (`documentChanges` with the
    /// `rename` resource operation), as a rename needs.
    pub moves_files: bool,
}

impl State {
    /// What the file at `uri` is, and its path (an archetype's as the library names it).
    pub fn file(&self, uri: &Uri) -> Option<(PathBuf, FileKind)> {
        let path = path_of(uri)?;
        match kind_of(&path, &self.root) {
            FileKind::Archetype(relative) => {
                Some((self.root.join(&relative), FileKind::Archetype(relative)))
            }
            kind => Some((path, kind)),
        }
    }

    /// An archetype or scene file's path, kind and [text](Self::text), for a URI the server
    /// answers about; `None` for any other file.
    pub fn document(&self, uri: &Uri) -> Option<(PathBuf, FileKind, Cow<'_, str>)> {
        let (path, kind) = self.file(uri)?;
        if kind == FileKind::Other {
            return None;
        }
        let text = self.text(&path)?;
        Some((path, kind, text))
    }

    /// The text of a file: the open buffer's, else the library's, else the file's on disk (a
    /// scene; bounded by the engine's scene size limit).
    pub fn text(&self, path: &Path) -> Option<Cow<'_, str>> {
        if let Some(document) = self.documents.get(path) {
            return Some(Cow::Borrowed(&document.text));
        }
        if let FileKind::Archetype(relative) = kind_of(path, &self.root) {
            let name = archetype_name(&relative)?;
            return self.library.source_text(&name).map(Cow::Borrowed);
        }
        let limit = archetype_engine::SceneLoadOptions::default()
            .limits
            .max_scene_bytes;
        let bytes = archetype_engine::tooling::read_regular_file(path, limit).ok()?;
        String::from_utf8(bytes).ok().map(Cow::Owned)
    }

    /// The URI to name the file at `path` by: the editor's own for an open buffer.
    pub fn uri(&self, path: &Path) -> Option<Uri> {
        match self.documents.get(path) {
            Some(document) => Some(document.uri.clone()),
            None => uri_of(path),
        }
    }

    /// The name of the archetype at `path`, if it is one.
    pub fn name_at(&self, path: &Path) -> Option<String> {
        match kind_of(path, &self.root) {
            FileKind::Archetype(relative) => archetype_name(&relative),
            _ => None,
        }
    }
}

/// The archetype name of a path relative to the root (`enemies/goblin.json` →
/// `enemies/goblin`), if it is a valid one.
pub(super) fn archetype_name(relative: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = relative.iter().map(|part| part.to_str()).collect();
    let name = parts?.join("/");
    let name = name.strip_suffix(".json")?.to_string();
    check_archetype_name(&name).ok().map(|()| name)
}

/// The server: its state once initialized, and where messages go.
pub(super) struct Server<'a> {
    args: LspArgs,
    registry: Arc<ComponentRegistry>,
    state: Option<State>,
    published: diagnostics::Published,
    /// The library's diagnostics in the protocol's form, file by file.
    library_diagnostics: diagnostics::LibraryDiagnostics,
    /// The buffers open at the last publish.
    open_at_publish: Vec<PathBuf>,
    /// The library being loaded since `initialize` was answered.
    loading: Option<Loading>,
    /// Whether the client registers file watchers for the server when asked (then it tells of
    /// changes made outside the editor: a `git checkout`, `archetool new`).
    register_watchers: bool,
    /// Where the frames the loop reads are sent, for the server's own watcher (for a client
    /// that does not register watchers, or refuses the registration).
    frames: Option<mpsc::SyncSender<FrameRead>>,
    /// The server's own watcher of the root, handing its changes to the loop (stopped when the
    /// server is dropped).
    outside: Option<OutsideChanges>,
    /// Whether the client pulls diagnostics (`textDocument.diagnostic`): then none are pushed.
    pulls: bool,
    /// Whether the client pulls again when told to (`workspace.diagnostic.refreshSupport`).
    refreshes: bool,
    /// Refresh requests sent (each has its own ID).
    refreshes_sent: u64,
    /// Whether a change the client did not make in a buffer (a file written outside the
    /// editor, a buffer closed) is waiting to be published: a pulling client is told to pull.
    outside_change: bool,
    /// Whether a `workspace/diagnostic` was answered (the first one is answered at once).
    workspace_pulled: bool,
    /// A `workspace/diagnostic` held until something changes.
    held_pull: Option<pull::HeldPull>,
    shutdown: bool,
    output: &'a mut dyn Write,
    log: &'a mut dyn Write,
}

/// A request's answer, or the error to send instead.
pub(super) type Answer<T> = Result<T, ResponseError>;

/// A `RequestFailed` error with `message`.
pub(super) fn failed(message: impl Into<String>) -> ResponseError {
    ResponseError {
        code: ErrorCode::RequestFailed as i32,
        message: message.into(),
        data: None,
    }
}

impl<'a> Server<'a> {
    pub fn new(
        args: LspArgs,
        registry: ComponentRegistry,
        output: &'a mut dyn Write,
        log: &'a mut dyn Write,
    ) -> Self {
        Server {
            args,
            registry: Arc::new(registry),
            state: None,
            published: diagnostics::Published::default(),
            library_diagnostics: diagnostics::LibraryDiagnostics::default(),
            open_at_publish: Vec::new(),
            loading: None,
            register_watchers: false,
            frames: None,
            outside: None,
            pulls: false,
            refreshes: false,
            refreshes_sent: 0,
            outside_change: false,
            workspace_pulled: false,
            held_pull: None,
            shutdown: false,
            output,
            log,
        }
    }

    /// Serves until `exit`, the end of `input`, or a frame it cannot read.
    ///
    /// A thread reads the frames as they come ([`READ_AHEAD`] at most waiting), so the loop
    /// sees what has arrived while it worked: a buffer's `didChange` followed by another of the
    /// same buffer (with no request between them) is skipped, never processed, and the
    /// diagnostics are published once nothing more is waiting (or before a request is
    /// answered), for the newest text only.
    pub fn run(mut self, input: Box<dyn BufRead + Send>) -> Exit {
        let max = self.args.max_message_bytes;
        let (sender, frames) = mpsc::sync_channel::<FrameRead>(READ_AHEAD);
        self.frames = Some(sender.clone());
        // Not joined: after `exit` a client may keep its end open. The thread ends with the
        // input, a frame it cannot read, or the process. It always sends how the input ended
        // (the server's watcher holds a sender too, so the channel would not close).
        thread::spawn(move || {
            let mut reader = FrameReader::new(input, max);
            let read_all = panic::catch_unwind(AssertUnwindSafe(|| loop {
                let read = reader.read();
                let more = matches!(read, Ok(Some(_)));
                if sender.send(read).is_err() || !more {
                    return;
                }
            }));
            if read_all.is_err() {
                let _ = sender.send(Ok(None));
            }
        });
        let mut waiting: VecDeque<FrameRead> = VecDeque::new();
        let mut unpublished = false;
        loop {
            let read = match waiting.pop_front() {
                Some(read) => read,
                None => {
                    if std::mem::take(&mut unpublished) && self.logged(|server| server.publish()) {
                        return Exit::Error;
                    }
                    match frames.recv() {
                        Ok(read) => read,
                        Err(_) => return self.exit_code(),
                    }
                }
            };
            while waiting.len() < READ_AHEAD {
                match frames.try_recv() {
                    Ok(more) => waiting.push_back(more),
                    Err(_) => break,
                }
            }
            let message = match read {
                Ok(Some(Frame::Message(message))) => message,
                Ok(None) => return self.exit_code(),
                // Its frame was read whole, so the next one can be.
                Ok(Some(Frame::NotJsonRpc(error))) => {
                    let _ = writeln!(
                        self.log,
                        "archetool lsp: ignored a message that is not JSON-RPC: {error}"
                    );
                    continue;
                }
                Err(error) => {
                    let _ = writeln!(self.log, "archetool lsp: cannot read a message: {error}");
                    return Exit::Error;
                }
            };
            if superseded(&message, &waiting) {
                continue;
            }
            let initialize =
                matches!(&message, Message::Request(r) if r.method == Initialize::METHOD);
            if !initialize && self.loading.is_some() && self.logged(Self::finish_loading) {
                return Exit::Error;
            }
            // A bug in answering one message (a panic) costs that answer, not the session: the
            // editor keeps its server, and the panic's message is on standard error.
            let sent = match message {
                Message::Request(request) => {
                    // What the client saw last is published before it is answered.
                    if std::mem::take(&mut unpublished) && self.logged(|server| server.publish()) {
                        return Exit::Error;
                    }
                    let id = request.id.clone();
                    let response = panic::catch_unwind(AssertUnwindSafe(|| self.request(request)))
                        .unwrap_or_else(|_| Some(error(id, ErrorCode::InternalError, INTERNAL)));
                    // A workspace pull with nothing new is held, answered by a later publish.
                    let sent = match response {
                        Some(response) => self.send(response.into()),
                        None => Ok(()),
                    };
                    match initialize {
                        true => sent.and_then(|()| self.begin_loading_progress()),
                        false => sent,
                    }
                }
                Message::Notification(notification) if notification.method == "exit" => {
                    return self.exit_code();
                }
                Message::Notification(notification) => {
                    let method = notification.method.clone();
                    let changed =
                        panic::catch_unwind(AssertUnwindSafe(|| self.notification(notification)))
                            .unwrap_or_else(|_| {
                                let _ = writeln!(self.log, "archetool lsp: `{method}`: {INTERNAL}");
                                false
                            });
                    unpublished |= changed;
                    Ok(())
                }
                Message::Response(response) => {
                    self.registration_answered(&response);
                    Ok(())
                }
            };
            if self.logged(|_| sent) {
                return Exit::Error;
            }
        }
    }

    /// Tells a client that shows progress that the library is loading (the load started with
    /// `initialize`).
    fn begin_loading_progress(&mut self) -> io::Result<()> {
        let Some(loading) = self
            .loading
            .as_ref()
            .filter(|loading| loading.shows_progress)
        else {
            return Ok(());
        };
        let message = format!("{}", loading.root.display());
        let create = Request::new(
            RequestId::from("archetool-progress".to_string()),
            WorkDoneProgressCreate::METHOD.to_string(),
            WorkDoneProgressCreateParams {
                token: progress_token(),
            },
        );
        self.send(create.into())?;
        let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: "Loading archetypes".to_string(),
            message: Some(message),
            ..WorkDoneProgressBegin::default()
        });
        self.send(progress(begin))
    }

    /// Waits for the library the load started with `initialize`, and takes it as the state
    /// answers come from (an empty one, the error logged, if the directory cannot be read).
    fn finish_loading(&mut self) -> io::Result<()> {
        let Some(loading) = self.loading.take() else {
            return Ok(());
        };
        let library = match loading.library.join() {
            Ok(loaded) => {
                if let Some(error) = loaded.error {
                    let _ = writeln!(self.log, "archetool lsp: {error}");
                }
                if let Some(watcher) = loaded.watcher {
                    self.watch_outside(watcher, &loading.root);
                }
                loaded.library
            }
            Err(_) => {
                let _ = writeln!(
                    self.log,
                    "archetool lsp: loading the archetypes: {INTERNAL}"
                );
                ArchetypeLibrary::empty(
                    &loading.root,
                    Arc::clone(&self.registry),
                    LoadOptions::default(),
                )
            }
        };
        let loaded = format!(
            "loaded {} archetypes, {} errors",
            library.len(),
            library.error_count()
        );
        self.state = Some(State {
            library,
            root: loading.root,
            scenes: loading.scenes,
            documents: Documents::default(),
            moves_files: loading.moves_files,
        });
        if !loading.shows_progress {
            return Ok(());
        }
        let end = WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(loaded),
        });
        self.send(progress(end))
    }

    /// Hands the changes `watcher` sees under `root` to the loop (a failure to watch is
    /// logged: changes made outside the editor are then not seen).
    fn watch_outside(&mut self, watcher: Result<HotReloader, WatchError>, root: &Path) {
        match (watcher, self.frames.take()) {
            (Ok(watcher), Some(frames)) => {
                let root = root.to_path_buf();
                self.outside = Some(OutsideChanges::start(watcher, root, frames));
            }
            (Err(error), _) => {
                let _ = writeln!(
                    self.log,
                    "archetool lsp: {error}: changes made outside the editor are not seen"
                );
            }
            (Ok(_), None) => {}
        }
    }

    /// A client that offered to watch files but refused the registration: the server watches
    /// the root itself.
    fn registration_answered(&mut self, response: &Response) {
        let registration = RequestId::from(WATCHERS_REGISTRATION.to_string());
        if response.id != registration || response.response_result.is_ok() || self.outside.is_some()
        {
            return;
        }
        let Some(root) = self.state.as_ref().map(|state| state.root.clone()) else {
            return;
        };
        self.watch_outside(watch::watch_root(&root), &root);
    }

    /// Runs `write`, logging a failure to write; whether it failed (the session then ends).
    fn logged(&mut self, write: impl FnOnce(&mut Self) -> io::Result<()>) -> bool {
        let Err(error) = write(self) else {
            return false;
        };
        let _ = writeln!(self.log, "archetool lsp: cannot write output: {error}");
        true
    }

    fn exit_code(&self) -> Exit {
        if self.shutdown {
            Exit::Success
        } else {
            Exit::Error
        }
    }

    fn send(&mut self, message: Message) -> io::Result<()> {
        write_message(&mut *self.output, &message)
    }

    /// Answers `request`, or holds it (a workspace pull with nothing new: `None`).
    fn request(&mut self, request: Request) -> Option<Response> {
        let ready = self.state.is_some() && !self.shutdown;
        if ready && request.method == WorkspaceDiagnosticRequest::METHOD {
            return self.workspace_pull(request);
        }
        if ready && request.method == Shutdown::METHOD {
            // A held pull gets its answer now: nothing more will change.
            self.answer_held_pull(None);
        }
        Some(self.answer(request))
    }

    /// `workspace/diagnostic`: the reports the client does not have; held while there are
    /// none (after the first pull), until a publish finds some.
    fn workspace_pull(&mut self, request: Request) -> Option<Response> {
        let state = self.state.as_ref()?;
        let id = request.id;
        let params = match serde_json::from_value::<WorkspaceDiagnosticParams>(request.params) {
            Ok(params) => params,
            Err(problem) => {
                return Some(error(id, ErrorCode::InvalidParams, &problem.to_string()));
            }
        };
        let held = pull::HeldPull::new(id, state, params.previous_result_ids);
        let report = held.report(state, &self.published, None);
        let first = !std::mem::replace(&mut self.workspace_pulled, true);
        if report.items.is_empty() && !first {
            // A client pulls again only once answered; an older held pull is answered with
            // what it has.
            self.answer_held_pull(None);
            self.held_pull = Some(held);
            return None;
        }
        Some(Response::new_ok(
            held.id,
            WorkspaceDiagnosticReportResult::Report(report),
        ))
    }

    /// Answers the held workspace pull, if any: with what it has to report (`changed: None`),
    /// or, after a publish that changed the files `changed`, if one of them is not what the
    /// client has.
    fn answer_held_pull(&mut self, changed: Option<&[PathBuf]>) {
        let (Some(held), Some(state)) = (&self.held_pull, &self.state) else {
            return;
        };
        let report = held.report(state, &self.published, changed);
        if report.items.is_empty() && changed.is_some() {
            return;
        }
        let Some(held) = self.held_pull.take() else {
            return;
        };
        let response = Response::new_ok(held.id, WorkspaceDiagnosticReportResult::Report(report));
        // A failure is logged; the loop ends the session at its next write.
        self.logged(|server| server.send(response.into()));
    }

    fn answer(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        if request.method == Initialize::METHOD {
            return match (&self.state, &self.loading) {
                (None, None) => {
                    respond::<Initialize, _>(request, |params| Ok(self.initialize(params)))
                }
                _ => error(id, ErrorCode::InvalidRequest, "already initialized"),
            };
        }
        if self.shutdown {
            return error(id, ErrorCode::InvalidRequest, "the server is shutting down");
        }
        let Some(state) = &mut self.state else {
            return error(id, ErrorCode::ServerNotInitialized, "not initialized yet");
        };
        match request.method.as_str() {
            Shutdown::METHOD => {
                self.shutdown = true;
                Response {
                    id,
                    response_result: Ok(serde_json::Value::Null),
                }
            }
            Completion::METHOD => {
                respond::<Completion, _>(request, |params| completion::completion(state, params))
            }
            HoverRequest::METHOD => {
                respond::<HoverRequest, _>(request, |params| hover::hover(state, params))
            }
            GotoDefinition::METHOD => respond::<GotoDefinition, _>(request, |params| {
                navigation::definition(state, params)
            }),
            References::METHOD => {
                respond::<References, _>(request, |params| navigation::references(state, params))
            }
            Rename::METHOD => {
                respond::<Rename, _>(request, |params| navigation::rename(state, params))
            }
            PrepareRenameRequest::METHOD => respond::<PrepareRenameRequest, _>(request, |params| {
                navigation::prepare_rename(state, params)
            }),
            Formatting::METHOD => {
                respond::<Formatting, _>(request, |params| edits::formatting(state, params))
            }
            CodeActionRequest::METHOD => respond::<CodeActionRequest, _>(request, |params| {
                edits::code_actions(state, params)
            }),
            InlayHintRequest::METHOD => {
                respond::<InlayHintRequest, _>(request, |params| hover::inlay_hints(state, params))
            }
            DocumentLinkRequest::METHOD => respond::<DocumentLinkRequest, _>(request, |params| {
                navigation::document_links(state, params)
            }),
            CodeLensRequest::METHOD => respond::<CodeLensRequest, _>(request, |params| {
                navigation::code_lens(state, params)
            }),
            DocumentDiagnosticRequest::METHOD => {
                let published = &self.published;
                respond::<DocumentDiagnosticRequest, _>(request, |params| {
                    pull::document(state, published, params)
                })
            }
            WorkspaceSymbolRequest::METHOD => {
                respond::<WorkspaceSymbolRequest, _>(request, |params| {
                    navigation::workspace_symbols(state, params)
                })
            }
            method => error(
                id,
                ErrorCode::MethodNotFound,
                &format!("no method `{method}`"),
            ),
        }
    }

    fn initialize(&mut self, params: InitializeParams) -> InitializeResult {
        self.register_watchers = (params.capabilities.workspace.as_ref())
            .and_then(|workspace| workspace.did_change_watched_files)
            .and_then(|watched| watched.dynamic_registration)
            .unwrap_or(false);
        self.pulls = (params.capabilities.text_document.as_ref())
            .is_some_and(|document| document.diagnostic.is_some());
        self.refreshes = (params.capabilities.workspace.as_ref())
            .and_then(|workspace| workspace.diagnostic.as_ref())
            .and_then(|diagnostic| diagnostic.refresh_support)
            .unwrap_or(false);
        #[allow(deprecated)] // `root_uri`: older clients send only it.
        let workspace = (params.workspace_folders.as_ref())
            .and_then(|folders| folders.first())
            .map(|folder| &folder.uri)
            .or(params.root_uri.as_ref())
            .and_then(path_of);
        let resolve = |dir: &Path| match &workspace {
            Some(workspace) if dir.is_relative() && workspace.join(dir).is_dir() => {
                workspace.join(dir)
            }
            _ => std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
        };
        let dir = resolve(&self.args.dir.dir);
        let root = std::fs::canonicalize(&dir).unwrap_or(dir);
        let scenes = resolve(&self.args.scenes);
        let edits = (params.capabilities.workspace.as_ref())
            .and_then(|workspace| workspace.workspace_edit.as_ref());
        let moves_files = edits.is_some_and(|edits| {
            edits.document_changes == Some(true)
                && (edits.resource_operations.as_deref())
                    .is_some_and(|operations| operations.contains(&ResourceOperationKind::Rename))
        });
        let shows_progress = (params.capabilities.window.as_ref())
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false);
        // Loaded on a thread of its own, so the answer goes at once; the next message waits
        // for it.
        let registry = Arc::clone(&self.registry);
        let dir = root.clone();
        let watches_itself = !self.register_watchers;
        let library = thread::spawn(move || {
            // Watching first: a change made while the files are read is seen.
            let watcher = watches_itself.then(|| watch::watch_root(&dir));
            let mut sink = io::sink();
            let context = Context {
                registry: Arc::clone(&registry),
                out: &mut sink,
            };
            // The editor notes values equal to what is inherited: that is where they are fixed.
            let (library, error) = match context.load_with(&dir, true) {
                Ok(library) => (library, None),
                Err(error) => {
                    let empty = ArchetypeLibrary::empty(&dir, registry, LoadOptions::default());
                    (empty, Some(error.to_string()))
                }
            };
            Loaded {
                library,
                error,
                watcher,
            }
        });
        self.loading = Some(Loading {
            library,
            root,
            scenes,
            moves_files,
            shows_progress,
        });
        InitializeResult {
            capabilities: capabilities(self.pulls),
            server_info: Some(ServerInfo {
                name: "archetool".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
        }
    }

    /// Handles a notification; whether the diagnostics may have changed (they are published
    /// by the message loop).
    fn notification(&mut self, notification: Notification) -> bool {
        if notification.method == Cancel::METHOD {
            let cancelled = params::<Cancel>(notification).map(|params| match params.id {
                NumberOrString::Number(id) => RequestId::from(id),
                NumberOrString::String(id) => RequestId::from(id),
            });
            let held = self.held_pull.as_ref().map(|held| &held.id);
            if cancelled.is_some() && cancelled.as_ref() == held {
                if let Some(held) = self.held_pull.take() {
                    let cancel = error(held.id, ErrorCode::RequestCanceled, "cancelled");
                    self.logged(|server| server.send(cancel.into()));
                }
            }
            return false;
        }
        // Changes the client did not make in a buffer: a pulling client does not know to pull.
        self.outside_change |= matches!(
            notification.method.as_str(),
            DidCloseTextDocument::METHOD
                | DidRenameFiles::METHOD
                | DidCreateFiles::METHOD
                | DidDeleteFiles::METHOD
                | DidChangeWatchedFiles::METHOD
        );
        if notification.method == Initialized::METHOD && self.register_watchers {
            if let Some(register) = self.state.as_ref().and_then(watchers_registration) {
                // A failure is logged; the loop ends the session at its next write.
                self.logged(|server| server.send(register.into()));
            }
        }
        let Some(state) = &mut self.state else {
            return false;
        };
        let method = notification.method.as_str();
        let changed =
            match method {
                Initialized::METHOD => true,
                DidOpenTextDocument::METHOD => params::<DidOpenTextDocument>(notification)
                    .is_some_and(|params| {
                        let document = params.text_document;
                        let Some((path, kind)) = state.file(&document.uri) else {
                            return false;
                        };
                        let text = document.text;
                        install(state, &kind, Some(&text));
                        state.documents.open(
                            path,
                            Document {
                                uri: document.uri,
                                text,
                                version: document.version,
                            },
                        );
                        kind != FileKind::Other
                    }),
                DidChangeTextDocument::METHOD => params::<DidChangeTextDocument>(notification)
                    .is_some_and(|params| {
                        let Some((path, kind)) = state.file(&params.text_document.uri) else {
                            return false;
                        };
                        // Full synchronisation: the last change holds the whole text.
                        let Some(change) = params.content_changes.into_iter().last() else {
                            return false;
                        };
                        let Some(document) = state.documents.get_mut(&path) else {
                            return false;
                        };
                        document.text = change.text;
                        document.version = params.text_document.version;
                        let text = document.text.clone();
                        install(state, &kind, Some(&text));
                        kind != FileKind::Other
                    }),
                DidSaveTextDocument::METHOD => params::<DidSaveTextDocument>(notification)
                    .is_some_and(|params| {
                        let Some((path, kind)) = state.file(&params.text_document.uri) else {
                            return false;
                        };
                        let Some(text) = params.text else {
                            return kind != FileKind::Other;
                        };
                        if let Some(document) = state.documents.get_mut(&path) {
                            document.text = text.clone();
                        }
                        install(state, &kind, Some(&text));
                        kind != FileKind::Other
                    }),
                DidCloseTextDocument::METHOD => params::<DidCloseTextDocument>(notification)
                    .is_some_and(|params| {
                        let Some((path, kind)) = state.file(&params.text_document.uri) else {
                            return false;
                        };
                        state.documents.close(&path);
                        // The file as saved, which the closed buffer's unsaved text may not be.
                        if let FileKind::Archetype(_) = kind {
                            state.library.reload_files(&[&path]);
                        }
                        kind != FileKind::Other
                    }),
                // Files changed on disk by the editor (a rename's move) or by anything else: the
                // ones not open are read again.
                DidRenameFiles::METHOD => params::<DidRenameFiles>(notification).is_some_and(|p| {
                    let uris = p
                        .files
                        .into_iter()
                        .flat_map(|file| [file.old_uri, file.new_uri]);
                    reload_from_disk(state, uris.filter_map(|uri| Uri::from_str(&uri).ok()))
                }),
                DidCreateFiles::METHOD => params::<DidCreateFiles>(notification).is_some_and(|p| {
                    let uris = p.files.into_iter().map(|file| file.uri);
                    reload_from_disk(state, uris.filter_map(|uri| Uri::from_str(&uri).ok()))
                }),
                DidDeleteFiles::METHOD => params::<DidDeleteFiles>(notification).is_some_and(|p| {
                    let uris = p.files.into_iter().map(|file| file.uri);
                    reload_from_disk(state, uris.filter_map(|uri| Uri::from_str(&uri).ok()))
                }),
                DidChangeWatchedFiles::METHOD => params::<DidChangeWatchedFiles>(notification)
                    .is_some_and(|p| {
                        reload_from_disk(state, p.changes.into_iter().map(|change| change.uri))
                    }),
                _ => false,
            };
        changed
    }

    /// Sends the diagnostics that changed: the library's, and each open scene's.
    fn publish(&mut self) -> io::Result<()> {
        let Some(state) = &self.state else {
            return Ok(());
        };
        let mut now = self.library_diagnostics.update(&state.library);
        // The open buffers' lists are made again each time (they are few): a buffer's byte-order
        // mark moves its first line's places.
        for (path, document) in state.documents.iter() {
            let found = if is_scene(path) {
                diagnostics::of_scene(path, &document.text, &state.library)
            } else {
                self.library_diagnostics.list_for(path)
            };
            now.insert(path.clone(), found);
        }
        // A buffer closed since: a scene's problems are no longer shown, an archetype's are the
        // library's again, without the buffer's byte-order mark.
        for path in std::mem::take(&mut self.open_at_publish) {
            if state.documents.get(&path).is_none() {
                let found = if is_scene(&path) {
                    Vec::new()
                } else {
                    self.library_diagnostics.list_for(&path)
                };
                now.insert(path, found);
            }
        }
        self.open_at_publish = state
            .documents
            .iter()
            .map(|(path, _)| path.clone())
            .collect();
        for (path, found) in &mut now {
            if let Some(document) = state.documents.get(path) {
                diagnostics::count_bom(path, &document.text, found);
            }
        }
        let mut changed = self.published.update(now);
        let outside_change = std::mem::take(&mut self.outside_change);
        if self.pulls {
            // Pulled, not pushed: a held workspace pull is answered, and a client that pulls
            // again when told is told of changes it did not make.
            if changed.is_empty() {
                return Ok(());
            }
            self.answer_held_pull(Some(&changed));
            if outside_change && self.refreshes {
                self.refreshes_sent += 1;
                let refresh = Request::new(
                    RequestId::from(format!("archetool-refresh-{}", self.refreshes_sent)),
                    WorkspaceDiagnosticRefresh::METHOD.to_string(),
                    serde_json::Value::Null,
                );
                return self.send(refresh.into());
            }
            return Ok(());
        }
        // The open buffers' first: the one just edited is what the designer is looking at.
        changed.sort_by_key(|path| state.documents.get(path).is_none());
        for path in changed {
            // An open buffer under the URI the editor gave it.
            let (uri, version) = match state.documents.get(&path) {
                Some(document) => (document.uri.clone(), Some(document.version)),
                None => match uri_of(&path) {
                    Some(uri) => (uri, None),
                    None => continue,
                },
            };
            let publish = diagnostics::Publish::new(&uri, self.published.of(&path), version);
            write_message(&mut *self.output, &publish)?;
        }
        Ok(())
    }
}

/// The ID of the request asking the client to watch files.
const WATCHERS_REGISTRATION: &str = "archetool-register-watchers";

/// The request asking the client to tell the server of every change to a JSON file under the
/// archetypes root and the scenes directory, whoever makes it (`None` if a root is not a path
/// a glob can name).
fn watchers_registration(state: &State) -> Option<Request> {
    let watcher = |dir: &Path| {
        let glob = format!("{}/**/*.json", dir.to_str()?);
        Some(FileSystemWatcher {
            glob_pattern: GlobPattern::String(glob),
            kind: None,
        })
    };
    let watchers = vec![watcher(&state.root)?, watcher(&state.scenes)?];
    let options = DidChangeWatchedFilesRegistrationOptions { watchers };
    let registration = Registration {
        id: "archetool-watched-files".to_string(),
        method: DidChangeWatchedFiles::METHOD.to_string(),
        register_options: serde_json::to_value(options).ok(),
    };
    let params = RegistrationParams {
        registrations: vec![registration],
    };
    Some(Request::new(
        RequestId::from(WATCHERS_REGISTRATION.to_string()),
        RegisterCapability::METHOD.to_string(),
        params,
    ))
}

/// Installs a buffer's text (`None`: the file on disk) in the library, if it is an archetype.
fn install(state: &mut State, kind: &FileKind, text: Option<&str>) {
    if let FileKind::Archetype(relative) = kind {
        state.library.set_sources([(relative, text)]);
    }
}

/// Reads again, from disk, the archetype files among `uris` that are not open (an open
/// buffer's text stays what the editor has); a directory among them (a folder moved) reads
/// every file again. Whether anything was read.
fn reload_from_disk(state: &mut State, uris: impl Iterator<Item = Uri>) -> bool {
    let mut paths = Vec::new();
    let mut everything = false;
    for uri in uris {
        let Some((path, kind)) = state.file(&uri) else {
            continue;
        };
        match kind {
            FileKind::Archetype(_) if state.documents.get(&path).is_none() => paths.push(path),
            FileKind::Other if path.starts_with(&state.root) => everything = true,
            _ => {}
        }
    }
    if everything {
        state.library.reload_all();
        return true;
    }
    if !paths.is_empty() {
        state.library.reload_files(&paths);
    }
    !paths.is_empty()
}

/// What the server can do (`pulls`: diagnostics too, for a client that pulls them).
fn capabilities(pulls: bool) -> ServerCapabilities {
    let diagnostics = DiagnosticOptions {
        identifier: Some(diagnostics::SOURCE.to_string()),
        // An archetype's diagnostics change with its parents', children's and referents'.
        inter_file_dependencies: true,
        workspace_diagnostics: true,
        work_done_progress_options: Default::default(),
    };
    ServerCapabilities {
        diagnostic_provider: pulls.then_some(DiagnosticServerCapabilities::Options(diagnostics)),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(true),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["\"".to_string(), "/".to_string()]),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        document_formatting_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        document_link_provider: Some(lsp_types::DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: Default::default(),
        }),
        code_lens_provider: Some(lsp_types::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: None,
            file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                did_create: Some(json_files()),
                did_rename: Some(json_files()),
                did_delete: Some(json_files()),
                ..WorkspaceFileOperationsServerCapabilities::default()
            }),
        }),
        ..ServerCapabilities::default()
    }
}

/// The files whose creation, move or deletion the server wants to hear of: JSON files, and
/// folders (a folder of archetypes moved).
fn json_files() -> FileOperationRegistrationOptions {
    let filter = |glob: &str, matches| FileOperationFilter {
        scheme: Some("file".to_string()),
        pattern: FileOperationPattern {
            glob: glob.to_string(),
            matches: Some(matches),
            options: None,
        },
    };
    FileOperationRegistrationOptions {
        filters: vec![
            filter("**/*.json", FileOperationPatternKind::File),
            filter("**", FileOperationPatternKind::Folder),
        ],
    }
}

/// A notification's parameters, `None` if they do not read as its type.
fn params<N: lsp_types::notification::Notification>(notification: Notification) -> Option<N::Params>
where
    N::Params: DeserializeOwned,
{
    serde_json::from_value(notification.params).ok()
}

/// Answers `request` of type `R` with `answer`, or with `InvalidParams` if its parameters do
/// not read as `R`'s.
fn respond<R, F>(request: Request, answer: F) -> Response
where
    R: lsp_types::request::Request,
    R::Params: DeserializeOwned,
    R::Result: Serialize,
    F: FnOnce(R::Params) -> Answer<R::Result>,
{
    let id = request.id;
    let params = match serde_json::from_value::<R::Params>(request.params) {
        Ok(params) => params,
        Err(problem) => return error(id, ErrorCode::InvalidParams, &problem.to_string()),
    };
    let response_result = answer(params).and_then(|result| {
        serde_json::to_value(result).map_err(|problem| failed(problem.to_string()))
    });
    Response {
        id,
        response_result,
    }
}

fn error(id: RequestId, code: ErrorCode, message: &str) -> Response {
    Response {
        id,
        response_result: Err(ResponseError {
            code: code as i32,
            message: message.to_string(),
            data: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(uri: &str) -> Message {
        let params = serde_json::json!({ "textDocument": { "uri": uri, "version": 2 } });
        Notification::new(DidChangeTextDocument::METHOD.to_string(), params).into()
    }

    fn waiting(messages: Vec<Message>) -> VecDeque<FrameRead> {
        messages
            .into_iter()
            .map(|message| Ok(Some(Frame::Message(message))))
            .collect()
    }

    #[test]
    fn a_change_is_superseded_only_by_a_later_change_of_its_buffer_before_any_request() {
        let hover = Request::new(
            7.into(),
            HoverRequest::METHOD.to_string(),
            serde_json::Value::Null,
        );
        let first = change("file:///a.json");
        let later = waiting(vec![change("file:///b.json"), change("file:///a.json")]);
        assert!(superseded(&first, &later));
        let other = waiting(vec![change("file:///b.json")]);
        assert!(!superseded(&first, &other));
        let asked = waiting(vec![hover.into(), change("file:///a.json")]);
        assert!(!superseded(&first, &asked));
    }
}
