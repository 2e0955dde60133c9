//! `archetool lsp` through the built binary: a small client speaks JSON-RPC to it over stdio
//! (Content-Length frames), as an editor does, and each test asserts the whole answer.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use archetype_engine::DiagnosticCode;
use serde_json::{json, Value};

use super::Project;

/// How long any answer may take before the test fails (the server never hangs).
const WAIT: Duration = Duration::from_secs(10);

const BASE: &str = "{\n  \"abstract\": true,\n  \"components\": {\n    \"Health\": { \"current\": 10, \"max\": 10 }\n  }\n}\n";
const GOBLIN: &str = "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Health\": { \"current\": 5 }\n  }\n}\n";
const CAMP: &str = "{\n  \"children\": {\n    \"guard\": { \"archetype\": \"goblin\" }\n  }\n}\n";
const SCENE: &str = "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"00000000000000a1\", \"archetype\": \"goblin\" }\n  ]\n}\n";
const SCENE_FILE: &str = "assets/scenes/level.scene.json";

/// A project with a parent (`base`), a goblin that extends it, a camp whose child is a
/// goblin, and a scene with a goblin.
fn project() -> Project {
    Project::with(&[
        ("archetypes/base.json", BASE),
        ("archetypes/goblin.json", GOBLIN),
        ("archetypes/camp.json", CAMP),
        (SCENE_FILE, SCENE),
    ])
}

/// A language client talking to `archetool lsp` running in a project directory.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Notifications received while waiting for a response, oldest first.
    notifications: Vec<Value>,
    next_id: i64,
    root: String,
}

impl Client {
    fn start(project: &Project) -> Client {
        Client::start_in(project, project.dir.path())
    }

    /// A client whose server runs in `cwd` (the project is still the workspace).
    fn start_in(project: &Project, cwd: &std::path::Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_archetool"))
            .arg("lsp")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let root = std::fs::canonicalize(project.dir.path()).unwrap();
        Client {
            child,
            stdin,
            messages,
            notifications: Vec::new(),
            next_id: 0,
            root: root.to_str().unwrap().to_string(),
        }
    }

    /// A client that has initialized the server (and told it so), saying what editors say of
    /// workspace edits: it applies edits by document and moves files.
    fn initialized(project: &Project) -> Client {
        let capabilities = json!({ "workspace": { "workspaceEdit": {
            "documentChanges": true,
            "resourceOperations": ["create", "rename", "delete"]
        } } });
        Client::initialized_with(project, capabilities)
    }

    /// A client that has initialized the server with `capabilities` (and told it so).
    fn initialized_with(project: &Project, capabilities: Value) -> Client {
        let mut client = Client::start(project);
        let root = client.root.clone();
        let response = client.request(
            "initialize",
            json!({ "capabilities": capabilities, "rootUri": format!("file://{root}") }),
        );
        assert!(response["result"]["capabilities"].is_object(), "{response}");
        client.notify("initialized", json!({}));
        client
    }

    /// The URI of a file of the project.
    fn uri(&self, relative: &str) -> String {
        let mut uri = String::from("file://");
        for byte in format!("{}/{relative}", self.root).bytes() {
            match byte {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                    uri.push(byte as char)
                }
                _ => uri.push_str(&format!("%{byte:02X}")),
            }
        }
        uri
    }

    fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    fn next(&mut self) -> Value {
        self.next_within(WAIT)
    }

    /// The next message, waiting up to `wait` for it.
    fn next_within(&mut self, wait: Duration) -> Value {
        self.messages
            .recv_timeout(wait)
            .unwrap_or_else(|_| panic!("the server answers within {wait:?}"))
    }

    /// Sends a request and waits for its response (the whole message).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.next();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// A request's result; fails the test on an error.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// The next diagnostics published for `relative` (the params: uri, version, diagnostics).
    fn diagnostics(&mut self, relative: &str) -> Value {
        self.diagnostics_within(relative, WAIT)
    }

    /// [`diagnostics`](Self::diagnostics), waiting up to `wait` for each message. Every
    /// diagnostic must link its code to the code's entry in the guide
    /// (`codeDescription.href`); the link is checked and taken out, so expectations show the rest.
    fn diagnostics_within(&mut self, relative: &str, wait: Duration) -> Value {
        let mut params = self.diagnostics_with_links(relative, wait);
        for diagnostic in params["diagnostics"].as_array_mut().into_iter().flatten() {
            let code = diagnostic["code"]
                .as_str()
                .and_then(DiagnosticCode::from_name);
            let href =
                (diagnostic.as_object_mut()).and_then(|object| object.remove("codeDescription"));
            assert_eq!(
                href,
                code.map(|code| json!({ "href": code.help_uri() })),
                "{diagnostic}"
            );
        }
        params
    }

    fn diagnostics_with_links(&mut self, relative: &str, wait: Duration) -> Value {
        let uri = self.uri(relative);
        let matches = |message: &Value| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri.as_str()
        };
        if let Some(at) = self.notifications.iter().position(matches) {
            return self.notifications.remove(at)["params"].clone();
        }
        loop {
            let message = self.next_within(wait);
            if matches(&message) {
                return message["params"].clone();
            }
            self.notifications.push(message);
        }
    }

    fn open(&mut self, relative: &str, text: &str) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "json", "version": 1, "text": text } }),
        );
    }

    fn change(&mut self, relative: &str, version: i32, text: &str) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
    }

    /// `{textDocument, position}` for a request at a 0-based line and UTF-16 column.
    fn at(&self, relative: &str, line: u32, character: u32) -> Value {
        json!({ "textDocument": { "uri": self.uri(relative) }, "position": { "line": line, "character": character } })
    }

    /// Shuts the server down; returns its exit code.
    fn shut_down(mut self) -> i32 {
        assert_eq!(self.result("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        for _ in 0..1000 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the server did not exit within 10 s of `exit`");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One framed message, or `None` at the end of the stream.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// A protocol range.
fn range(line: u32, start: u32, end_line: u32, end: u32) -> Value {
    json!({ "start": { "line": line, "character": start }, "end": { "line": end_line, "character": end } })
}

/// The labels of a completion answer.
fn labels(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["label"].as_str().unwrap())
        .collect()
}

#[test]
fn lsp_initializes_with_its_capabilities_and_refuses_requests_before() {
    let project = project();
    let mut client = Client::start(&project);
    let early = client.request(
        "textDocument/hover",
        client.at("archetypes/goblin.json", 0, 0),
    );
    assert_eq!(
        early["error"],
        json!({ "code": -32002, "message": "not initialized yet" })
    );
    let root = client.root.clone();
    let response = client.result(
        "initialize",
        json!({ "capabilities": {}, "rootUri": format!("file://{root}") }),
    );
    let json_files = json!({ "filters": [
        { "scheme": "file", "pattern": { "glob": "**/*.json", "matches": "file" } },
        { "scheme": "file", "pattern": { "glob": "**", "matches": "folder" } }
    ] });
    assert_eq!(
        response,
        json!({
            "capabilities": {
                "codeActionProvider": { "codeActionKinds": ["quickfix"] },
                "codeLensProvider": { "resolveProvider": false },
                "completionProvider": { "triggerCharacters": ["\"", "/"] },
                "definitionProvider": true,
                "documentLinkProvider": { "resolveProvider": false },
                "documentFormattingProvider": true,
                "hoverProvider": true,
                "inlayHintProvider": true,
                "referencesProvider": true,
                "renameProvider": { "prepareProvider": true },
                "textDocumentSync": { "change": 1, "openClose": true, "save": { "includeText": true } },
                "workspaceSymbolProvider": true,
                "workspace": { "fileOperations": { "didCreate": json_files, "didRename": json_files, "didDelete": json_files } }
            },
            "serverInfo": { "name": "archetool", "version": env!("CARGO_PKG_VERSION") }
        })
    );
    let again = client.request("initialize", json!({ "capabilities": {} }));
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert_eq!(client.shut_down(), 0);
}

#[test]
fn lsp_publishes_validate_diagnostics_for_a_buffer_and_clears_them() {
    let project = project();
    let mut client = Client::initialized(&project);
    let typo = GOBLIN.replace("\"Health\"", "\"Helth\"");
    client.open("archetypes/goblin.json", &typo);
    let goblin = client.uri("archetypes/goblin.json");
    let place = range(3, 4, 3, 11);
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({
            "uri": goblin,
            "version": 1,
            "diagnostics": [{
                "range": place,
                "severity": 1,
                "code": "unknown-component",
                "source": "archetool",
                "message": "unknown component `Helth`",
                "relatedInformation": [{
                    "location": { "uri": goblin, "range": place },
                    "message": "did you mean `Health`?"
                }],
                "data": { "suggestion": "Health" }
            }]
        })
    );
    // The camp's guard is a goblin: the unsaved typo holds it back too.
    assert_eq!(
        client.diagnostics("archetypes/camp.json"),
        json!({
            "uri": client.uri("archetypes/camp.json"),
            "diagnostics": [{
                "range": range(2, 28, 2, 36),
                "severity": 3,
                "code": "broken-dependency",
                "source": "archetool",
                "message": "not fully checked: it depends on `goblin`, which has errors; its own values were checked as far as they go"
            }]
        })
    );
    // Nothing was written: `validate` still finds the files on disk clean.
    assert_eq!(project.run(&["validate"]).code, 0);

    client.change("archetypes/goblin.json", 2, GOBLIN);
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({ "uri": goblin, "version": 2, "diagnostics": [] })
    );
    assert_eq!(
        client.diagnostics("archetypes/camp.json"),
        json!({ "uri": client.uri("archetypes/camp.json"), "diagnostics": [] })
    );
    assert_eq!(client.shut_down(), 0);
}

/// Every archetype is a workspace symbol: a query matches names holding its letters in order,
/// whatever their case; abstract archetypes are interfaces, the others classes.
#[test]
fn lsp_lists_archetypes_as_workspace_symbols() {
    let project = project();
    let mut client = Client::initialized(&project);
    let symbol = |client: &Client, name: &str, kind: u32| {
        json!({
            "name": name,
            "kind": kind,
            "location": {
                "uri": client.uri(&format!("archetypes/{name}.json")),
                "range": range(0, 0, 0, 0)
            }
        })
    };
    assert_eq!(
        client.result("workspace/symbol", json!({ "query": "" })),
        json!([
            symbol(&client, "base", 11),
            symbol(&client, "camp", 5),
            symbol(&client, "goblin", 5)
        ])
    );
    assert_eq!(
        client.result("workspace/symbol", json!({ "query": "GBL" })),
        json!([symbol(&client, "goblin", 5)])
    );
    assert_eq!(
        client.result("workspace/symbol", json!({ "query": "troll" })),
        json!([])
    );
    assert_eq!(client.shut_down(), 0);
}

/// A client that registers file watchers for its server is asked to, for JSON files under
/// the archetypes root and the scenes directory; a change made outside the editor (a file
/// written by another program) that it then reports is read and checked.
#[test]
fn lsp_asks_for_file_watchers_and_sees_changes_made_outside_the_editor() {
    let project = project();
    let mut client = Client::start(&project);
    let root = client.root.clone();
    let capabilities = json!({
        "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } }
    });
    client.result(
        "initialize",
        json!({ "capabilities": capabilities, "rootUri": format!("file://{root}") }),
    );
    client.notify("initialized", json!({}));
    let register = client.next();
    assert_eq!(
        register,
        json!({
            "jsonrpc": "2.0",
            "id": "archetool-register-watchers",
            "method": "client/registerCapability",
            "params": { "registrations": [{
                "id": "archetool-watched-files",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": { "watchers": [
                    { "globPattern": format!("{root}/archetypes/**/*.json") },
                    { "globPattern": format!("{root}/assets/scenes/**/*.json") }
                ] }
            }] }
        })
    );
    client.send(json!({ "jsonrpc": "2.0", "id": "archetool-register-watchers", "result": null }));
    // Another program writes a new archetype with a typo; the client reports it.
    let orc = GOBLIN.replace("\"Health\"", "\"Helth\"");
    std::fs::write(project.dir.path().join("archetypes/orc.json"), orc).unwrap();
    let changes = json!({ "changes": [{ "uri": client.uri("archetypes/orc.json"), "type": 1 }] });
    client.notify("workspace/didChangeWatchedFiles", changes);
    let published = client.diagnostics("archetypes/orc.json");
    assert_eq!(
        published["diagnostics"][0]["message"],
        "unknown component `Helth`"
    );
    assert_eq!(client.shut_down(), 0);
}

/// A client that does not watch files for its server (Neovim 0.7 cannot): the server watches
/// the archetypes root itself, so a file written, created or deleted by another program (a
/// `git checkout`, `archetool new`, a script) is read and checked, its dependants too.
#[test]
fn lsp_watches_the_root_itself_for_a_client_that_does_not() {
    let project = project();
    let mut client = Client::initialized(&project);
    // Answered once the library is loaded; the root was watched before it was read.
    client.result("workspace/symbol", json!({ "query": "goblin" }));
    let typo = GOBLIN.replace("\"Health\"", "\"Helth\"");
    project.write("archetypes/goblin.json", &typo);
    let goblin = client.uri("archetypes/goblin.json");
    let place = range(3, 4, 3, 11);
    let unknown = |uri: &str| {
        json!({
            "range": place,
            "severity": 1,
            "code": "unknown-component",
            "source": "archetool",
            "message": "unknown component `Helth`",
            "relatedInformation": [{
                "location": { "uri": uri, "range": place },
                "message": "did you mean `Health`?"
            }],
            "data": { "suggestion": "Health" }
        })
    };
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({ "uri": goblin, "diagnostics": [unknown(&goblin)] })
    );
    assert_eq!(
        client.diagnostics("archetypes/camp.json"),
        json!({
            "uri": client.uri("archetypes/camp.json"),
            "diagnostics": [{
                "range": range(2, 28, 2, 36),
                "severity": 3,
                "code": "broken-dependency",
                "source": "archetool",
                "message": "not fully checked: it depends on `goblin`, which has errors; its own values were checked as far as they go"
            }]
        })
    );
    // A new file in a new folder, then the goblin mended and the new file deleted.
    project.write("archetypes/orcs/orc.json", &typo);
    let orc = client.uri("archetypes/orcs/orc.json");
    assert_eq!(
        client.diagnostics("archetypes/orcs/orc.json"),
        json!({ "uri": orc, "diagnostics": [unknown(&orc)] })
    );
    project.write("archetypes/goblin.json", GOBLIN);
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({ "uri": goblin, "diagnostics": [] })
    );
    std::fs::remove_file(project.dir.path().join("archetypes/orcs/orc.json")).unwrap();
    assert_eq!(
        client.diagnostics("archetypes/orcs/orc.json"),
        json!({ "uri": orc, "diagnostics": [] })
    );
    // What the editor has open stays the editor's: a write to its file on disk is not read
    // (the orc written after it is, so the watcher's report of both was handled).
    client.open("archetypes/base.json", BASE);
    project.write(
        "archetypes/base.json",
        &BASE.replace("\"Health\"", "\"Helth\""),
    );
    project.write("archetypes/orcs/orc.json", &typo);
    assert_eq!(
        client.diagnostics("archetypes/orcs/orc.json"),
        json!({ "uri": orc, "diagnostics": [unknown(&orc)] })
    );
    let base = client.uri("archetypes/base.json");
    let about_base: Vec<&Value> = (client.notifications.iter())
        .filter(|message| message["params"]["uri"] == base.as_str())
        .collect();
    assert_eq!(about_base, Vec::<&Value>::new());
    assert_eq!(client.shut_down(), 0);
}

/// The server's own watcher lives as long as its session: `serve` (in-process, as the bench
/// and a game's tools run it) sees an outside change, and returns after `exit` with its input
/// still open, its watcher thread stopped and joined (it would hang otherwise).
#[test]
fn lsp_stops_watching_when_its_session_ends() {
    use archetool::cli::lsp::{serve, LspArgs};
    use archetool::cli::{DirArg, Exit};

    let project = project();
    let root = std::fs::canonicalize(project.dir.path()).unwrap();
    let args = LspArgs {
        dir: DirArg {
            dir: root.join("archetypes"),
        },
        scenes: root.join(SCENE_FILE).parent().unwrap().to_path_buf(),
        max_message_bytes: 1 << 20,
    };
    let (server_in, mut to_server) = std::io::pipe().unwrap();
    let (from_server, server_out) = std::io::pipe().unwrap();
    let (ended, exit) = mpsc::channel();
    std::thread::spawn(move || {
        let mut output = server_out;
        let input = Box::new(BufReader::new(server_in));
        let code = serve(
            &args,
            archetool::demo::components::registry(),
            input,
            &mut output,
            &mut std::io::sink(),
        );
        let _ = ended.send(matches!(code, Exit::Success));
    });
    let (sender, messages) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(from_server);
        while let Some(message) = read_message(&mut reader) {
            if sender.send(message).is_err() {
                return;
            }
        }
    });
    let mut send = |message: Value| {
        let body = message.to_string();
        write!(to_server, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        to_server.flush().unwrap();
    };
    let next = || messages.recv_timeout(WAIT).expect("the server answers");
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    );
    assert_eq!(next()["id"], 1);
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    send(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": { "query": "" } }),
    );
    assert_eq!(next()["id"], 2);
    project.write(
        "archetypes/orc.json",
        &GOBLIN.replace("\"Health\"", "\"Helth\""),
    );
    let published = next();
    assert_eq!(
        (
            &published["method"],
            &published["params"]["diagnostics"][0]["message"]
        ),
        (
            &json!("textDocument/publishDiagnostics"),
            &json!("unknown component `Helth`")
        )
    );
    send(json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }));
    assert_eq!(next(), json!({ "jsonrpc": "2.0", "id": 3, "result": null }));
    send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert_eq!(
        exit.recv_timeout(WAIT),
        Ok(true),
        "`serve` returned, exit code 0"
    );
    // Its output closed with it: nothing more comes, whatever changes on disk.
    project.write("archetypes/orc.json", GOBLIN);
    assert!(messages.recv_timeout(Duration::from_millis(500)).is_err());
    drop(to_server);
}

/// A client that offers to watch files for its server but refuses the registration: the
/// server watches the root itself.
#[test]
fn lsp_watches_the_root_itself_when_the_client_refuses_to() {
    let project = project();
    let capabilities = json!({
        "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } }
    });
    let mut client = Client::initialized_with(&project, capabilities);
    let register = client.next();
    assert_eq!(
        register["method"], "client/registerCapability",
        "{register}"
    );
    client.send(json!({
        "jsonrpc": "2.0", "id": "archetool-register-watchers",
        "error": { "code": -32601, "message": "no file watching here" }
    }));
    // Answered after the refusal was read: the server watches from here on.
    client.result("workspace/symbol", json!({ "query": "goblin" }));
    project.write(
        "archetypes/orc.json",
        &GOBLIN.replace("\"Health\"", "\"Helth\""),
    );
    let orc = client.uri("archetypes/orc.json");
    let place = range(3, 4, 3, 11);
    assert_eq!(
        client.diagnostics("archetypes/orc.json"),
        json!({ "uri": orc, "diagnostics": [{
            "range": place,
            "severity": 1,
            "code": "unknown-component",
            "source": "archetool",
            "message": "unknown component `Helth`",
            "relatedInformation": [{
                "location": { "uri": orc, "range": place },
                "message": "did you mean `Health`?"
            }],
            "data": { "suggestion": "Health" }
        }] })
    );
    assert_eq!(client.shut_down(), 0);
}

/// A client that pulls diagnostics (LSP 3.17) is told the server answers pulls, is sent no
/// `publishDiagnostics`, and pulls each file's report (`unchanged` when its result ID is still
/// current) and the workspace's (held while nothing is new, answered when a change comes; a
/// change made outside the editor also asks the client to pull again).
#[test]
fn lsp_answers_pulled_diagnostics_and_pushes_none() {
    let project = project();
    let mut client = Client::start(&project);
    let root = client.root.clone();
    let capabilities = json!({
        "textDocument": { "diagnostic": { "dynamicRegistration": false } },
        "workspace": { "diagnostic": { "refreshSupport": true } }
    });
    let initialized = client.result(
        "initialize",
        json!({ "capabilities": capabilities, "rootUri": format!("file://{root}") }),
    );
    assert_eq!(
        initialized["capabilities"]["diagnosticProvider"],
        json!({
            "identifier": "archetool",
            "interFileDependencies": true,
            "workspaceDiagnostics": true
        })
    );
    client.notify("initialized", json!({}));
    let typo = GOBLIN.replace("\"Health\"", "\"Helth\"");
    client.open("archetypes/goblin.json", &typo);
    let goblin = client.uri("archetypes/goblin.json");
    let camp = client.uri("archetypes/camp.json");
    let place = range(3, 4, 3, 11);
    let unknown = |uri: &str| {
        json!({
            "range": place,
            "severity": 1,
            "code": "unknown-component",
            "codeDescription": { "href": DiagnosticCode::UnknownComponent.help_uri() },
            "source": "archetool",
            "message": "unknown component `Helth`",
            "relatedInformation": [{
                "location": { "uri": uri, "range": place },
                "message": "did you mean `Health`?"
            }],
            "data": { "suggestion": "Health" }
        })
    };
    let held_back = json!({
        "range": range(2, 28, 2, 36),
        "severity": 3,
        "code": "broken-dependency",
        "codeDescription": { "href": DiagnosticCode::BrokenDependency.help_uri() },
        "source": "archetool",
        "message": "not fully checked: it depends on `goblin`, which has errors; its own values were checked as far as they go"
    });
    let pull = |client: &mut Client, uri: &str, previous: Option<&Value>| {
        let mut params = json!({ "textDocument": { "uri": uri } });
        if let Some(previous) = previous {
            params["previousResultId"] = previous.clone();
        }
        client.result("textDocument/diagnostic", params)
    };
    let report = pull(&mut client, &goblin, None);
    let goblin_id = report["resultId"].clone();
    assert!(goblin_id.is_string(), "{report}");
    assert_eq!(
        report,
        json!({ "kind": "full", "resultId": goblin_id, "items": [unknown(&goblin)] })
    );
    assert_eq!(
        pull(&mut client, &goblin, Some(&goblin_id)),
        json!({ "kind": "unchanged", "resultId": goblin_id })
    );
    // The first workspace pull: every file with diagnostics, an open buffer with its version.
    let workspace = client.result("workspace/diagnostic", json!({ "previousResultIds": [] }));
    let camp_id = workspace["items"][0]["resultId"].clone();
    assert!(camp_id.is_string() && camp_id != goblin_id, "{workspace}");
    assert_eq!(
        workspace,
        json!({ "items": [
            { "kind": "full", "uri": camp, "version": null, "resultId": camp_id, "items": [held_back] },
            { "kind": "full", "uri": goblin, "version": 1, "resultId": goblin_id, "items": [unknown(&goblin)] }
        ] })
    );
    // Knowing both, the next pull is held: a later request is answered first.
    client.next_id += 1;
    let held = client.next_id;
    let previous =
        json!([{ "uri": camp, "value": camp_id }, { "uri": goblin, "value": goblin_id }]);
    client.send(json!({
        "jsonrpc": "2.0", "id": held, "method": "workspace/diagnostic",
        "params": { "previousResultIds": previous }
    }));
    assert_eq!(
        pull(&mut client, &camp, Some(&camp_id)),
        json!({ "kind": "unchanged", "resultId": camp_id })
    );
    // The goblin mended in its buffer: the held pull is answered with the two files' new (empty)
    // reports; the client made the change, so it is not asked to pull again.
    client.change("archetypes/goblin.json", 2, GOBLIN);
    let empty = pull(&mut client, &goblin, Some(&goblin_id));
    let empty_id = empty["resultId"].clone();
    assert_eq!(
        empty,
        json!({ "kind": "full", "resultId": empty_id, "items": [] })
    );
    let answered = client.notifications.remove(0);
    assert_eq!(
        answered,
        json!({ "jsonrpc": "2.0", "id": held, "result": { "items": [
            { "kind": "full", "uri": camp, "version": null, "resultId": empty_id, "items": [] },
            { "kind": "full", "uri": goblin, "version": 2, "resultId": empty_id, "items": [] }
        ] } })
    );
    // A file written outside the editor: the client is asked to pull again.
    project.write("archetypes/orc.json", &typo);
    let refresh = client.next();
    assert_eq!(
        refresh,
        json!({ "jsonrpc": "2.0", "id": "archetool-refresh-1", "method": "workspace/diagnostic/refresh" })
    );
    client.send(json!({ "jsonrpc": "2.0", "id": "archetool-refresh-1", "result": null }));
    let orc = client.uri("archetypes/orc.json");
    let report = pull(&mut client, &orc, None);
    assert_eq!(
        report,
        json!({ "kind": "full", "resultId": report["resultId"], "items": [unknown(&orc)] })
    );
    // A held pull the client cancels is answered so.
    let workspace = client.result("workspace/diagnostic", json!({ "previousResultIds": [] }));
    let previous: Vec<Value> = (workspace["items"].as_array().unwrap().iter())
        .map(|item| json!({ "uri": item["uri"], "value": item["resultId"] }))
        .collect();
    client.next_id += 1;
    let cancelled = client.next_id;
    client.send(json!({
        "jsonrpc": "2.0", "id": cancelled, "method": "workspace/diagnostic",
        "params": { "previousResultIds": previous }
    }));
    client.notify("$/cancelRequest", json!({ "id": cancelled }));
    assert_eq!(
        client.next(),
        json!({ "jsonrpc": "2.0", "id": cancelled, "error": { "code": -32800, "message": "cancelled" } })
    );
    assert_eq!(
        client.notifications,
        Vec::<Value>::new(),
        "nothing was pushed"
    );
    assert_eq!(client.shut_down(), 0);
}

/// Before a rename the editor asks what would be renamed: the archetype name under the cursor
/// (its range inside the quotes, its current name), else the archetype whose file it is.
#[test]
fn lsp_prepares_a_rename_at_a_name_or_in_an_archetypes_file() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/camp.json", CAMP);
    let line = CAMP.lines().nth(2).unwrap();
    let start = line.find("goblin").unwrap() as u32;
    let at_name = client.at("archetypes/camp.json", 2, start + 2);
    assert_eq!(
        client.result("textDocument/prepareRename", at_name),
        json!({ "range": range(2, start, 2, start + 6), "placeholder": "goblin" })
    );
    let in_file = client.at("archetypes/camp.json", 0, 0);
    assert_eq!(
        client.result("textDocument/prepareRename", in_file),
        json!({ "range": range(0, 0, 0, 0), "placeholder": "camp" })
    );
    let in_scene = client.at(SCENE_FILE, 0, 0);
    assert_eq!(
        client.result("textDocument/prepareRename", in_scene),
        Value::Null
    );
    assert_eq!(client.shut_down(), 0);
}

/// Above an archetype's file: how many archetypes extend it, how many scene entities are its
/// instances, whether it is abstract.
#[test]
fn lsp_shows_how_an_archetype_is_used_above_its_file() {
    let project = project();
    let mut client = Client::initialized(&project);
    let lens = |client: &mut Client, relative: &str| {
        let document = json!({ "textDocument": { "uri": client.uri(relative) } });
        client.result("textDocument/codeLens", document)
    };
    let shown = |title: &str| json!([{ "range": range(0, 0, 0, 0), "command": { "title": title, "command": "" } }]);
    assert_eq!(
        lens(&mut client, "archetypes/base.json"),
        shown("extended by 1 · placed in 0 scene entities · abstract")
    );
    assert_eq!(
        lens(&mut client, "archetypes/goblin.json"),
        shown("extended by 0 · placed in 1 scene entity")
    );
    assert_eq!(lens(&mut client, SCENE_FILE), Value::Null);
    assert_eq!(client.shut_down(), 0);
}

/// After a component a file writes in part, each field it inherits: its value and the
/// archetype that gives it.
#[test]
fn lsp_hints_the_inherited_fields_after_a_partial_override() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/goblin.json", GOBLIN);
    let line = GOBLIN.lines().nth(3).unwrap();
    let end = line.rfind('}').unwrap() as u32 + 1;
    let whole = json!({
        "textDocument": { "uri": client.uri("archetypes/goblin.json") },
        "range": range(0, 0, 6, 0)
    });
    assert_eq!(
        client.result("textDocument/inlayHint", whole),
        json!([{
            "position": { "line": 3, "character": end },
            "label": "max: 10 ← base",
            "paddingLeft": true
        }])
    );
    // Outside the range asked for: nothing.
    let first_line = json!({
        "textDocument": { "uri": client.uri("archetypes/goblin.json") },
        "range": range(0, 0, 1, 0)
    });
    assert_eq!(
        client.result("textDocument/inlayHint", first_line),
        json!([])
    );
    assert_eq!(client.shut_down(), 0);
}

/// Every name of an existing archetype links to its file: a parent, a child's archetype, a
/// scene entity's archetype.
#[test]
fn lsp_links_archetype_names_to_their_files() {
    let project = project();
    let mut client = Client::initialized(&project);
    let links = |client: &mut Client, relative: &str| {
        let document = json!({ "textDocument": { "uri": client.uri(relative) } });
        client.result("textDocument/documentLink", document)
    };
    let at = |text: &str, line: usize, word: &str| {
        let start = text.lines().nth(line).unwrap().find(word).unwrap() as u32;
        range(line as u32, start, line as u32, start + word.len() as u32)
    };
    let link = |client: &Client, range: Value, name: &str| {
        json!({
            "range": range,
            "target": client.uri(&format!("archetypes/{name}.json")),
            "tooltip": name
        })
    };
    assert_eq!(
        links(&mut client, "archetypes/goblin.json"),
        json!([link(&client, at(GOBLIN, 1, "\"base\""), "base")])
    );
    assert_eq!(
        links(&mut client, "archetypes/camp.json"),
        json!([link(&client, at(CAMP, 2, "\"goblin\""), "goblin")])
    );
    assert_eq!(
        links(&mut client, SCENE_FILE),
        json!([link(&client, at(SCENE, 3, "\"goblin\""), "goblin")])
    );
    assert_eq!(client.shut_down(), 0);
}

/// The demo's `Portrait.art`, an `AssetPath`, in an archetype and in its child, beside
/// archetype names: links in file order.
const PORTRAITS: &str = "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Portrait\": { \"art\": \"portraits/goblin.txt\" }\n  },\n  \"children\": {\n    \"shadow\": {\n      \"archetype\": \"goblin\",\n      \"components\": { \"Portrait\": { \"art\": \"portraits/goblin.txt\" } }\n    }\n  }\n}\n";

/// Every `AssetPath` value naming a file under the assets root (`assets/` beside the
/// archetypes) links to that file; one written with `..`, an absolute one, one through a
/// link that leads out of the root and one naming no file do not, though each names a file
/// that exists.
#[test]
fn lsp_links_asset_paths_to_their_files_inside_the_assets_root() {
    let project = project();
    project.write("assets/portraits/goblin.txt", " o o\n  ^\n");
    project.write("secret.txt", "outside the assets root\n");
    project.write("archetypes/portraits.json", PORTRAITS);
    let root = std::fs::canonicalize(project.dir.path()).unwrap();
    let absolute = root.join("assets/portraits/goblin.txt");
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        root.join("secret.txt"),
        root.join("assets/portraits/link.txt"),
    )
    .unwrap();
    let refused = [
        "../secret.txt",
        "portraits/../portraits/goblin.txt",
        absolute.to_str().unwrap(),
        "portraits/link.txt",
        "portraits/missing.txt",
    ];
    let bad = |art: &str| {
        let art = serde_json::Value::from(art).to_string();
        format!("{{\n  \"extends\": \"base\",\n  \"components\": {{\n    \"Portrait\": {{ \"art\": {art} }}\n  }}\n}}\n")
    };
    for (i, art) in refused.iter().enumerate() {
        project.write(&format!("archetypes/refused_{i}.json"), &bad(art));
    }
    let mut client = Client::initialized(&project);
    let links = |client: &mut Client, relative: &str| {
        let document = json!({ "textDocument": { "uri": client.uri(relative) } });
        client.result("textDocument/documentLink", document)
    };
    let at = |text: &str, line: usize, word: &str| {
        let start = text.lines().nth(line).unwrap().find(word).unwrap() as u32;
        range(line as u32, start, line as u32, start + word.len() as u32)
    };
    let archetype = |client: &Client, range: Value, name: &str| {
        json!({
            "range": range,
            "target": client.uri(&format!("archetypes/{name}.json")),
            "tooltip": name
        })
    };
    let asset = |client: &Client, range: Value| {
        json!({
            "range": range,
            "target": client.uri("assets/portraits/goblin.txt"),
            "tooltip": "portraits/goblin.txt"
        })
    };
    let art = "\"portraits/goblin.txt\"";
    assert_eq!(
        links(&mut client, "archetypes/portraits.json"),
        json!([
            archetype(&client, at(PORTRAITS, 1, "\"base\""), "base"),
            asset(&client, at(PORTRAITS, 3, art)),
            archetype(&client, at(PORTRAITS, 7, "\"goblin\""), "goblin"),
            asset(&client, at(PORTRAITS, 8, art)),
        ])
    );
    let parent_only =
        |client: &Client, text: &str| json!([archetype(client, at(text, 1, "\"base\""), "base")]);
    for (i, art) in refused.iter().enumerate() {
        if cfg!(not(unix)) && art.ends_with("link.txt") {
            continue;
        }
        assert_eq!(
            links(&mut client, &format!("archetypes/refused_{i}.json")),
            parent_only(&client, &bad(art)),
            "{art}"
        );
    }
    assert_eq!(client.shut_down(), 0);
}

/// A rename moves the archetype's file: a client that does not apply file moves in workspace
/// edits gets a refusal saying so, and nothing changes.
#[test]
fn lsp_refuses_a_rename_the_client_cannot_apply() {
    let project = project();
    let mut client = Client::initialized_with(&project, json!({}));
    let mut params = client.at("archetypes/camp.json", 0, 0);
    params["newName"] = json!("camps/big");
    let refused = client.request("textDocument/rename", params);
    assert_eq!(
        refused["error"],
        json!({
            "code": -32803,
            "message": "cannot rename `camp` here: a rename moves its file, and this editor does not say it applies file moves in a rename (workspace edit `documentChanges` with the `rename` resource operation)"
        })
    );
    assert_eq!(client.shut_down(), 0);
}

/// `initialize` is answered before the library is loaded; a client that shows progress is
/// told the load began and how it ended.
#[test]
fn lsp_loads_the_archetypes_after_answering_initialize_and_shows_the_progress() {
    let project = project();
    let mut client = Client::start(&project);
    let root = client.root.clone();
    let capabilities = json!({ "window": { "workDoneProgress": true } });
    client.result(
        "initialize",
        json!({ "capabilities": capabilities, "rootUri": format!("file://{root}") }),
    );
    assert_eq!(
        client.next(),
        json!({
            "jsonrpc": "2.0",
            "id": "archetool-progress",
            "method": "window/workDoneProgress/create",
            "params": { "token": "archetool-load" }
        })
    );
    client.send(json!({ "jsonrpc": "2.0", "id": "archetool-progress", "result": null }));
    assert_eq!(
        client.next(),
        json!({
            "jsonrpc": "2.0",
            "method": "$/progress",
            "params": { "token": "archetool-load", "value": {
                "kind": "begin",
                "title": "Loading archetypes",
                "message": format!("{root}/archetypes")
            } }
        })
    );
    client.notify("initialized", json!({}));
    assert_eq!(
        client.next(),
        json!({
            "jsonrpc": "2.0",
            "method": "$/progress",
            "params": { "token": "archetool-load", "value": {
                "kind": "end",
                "message": "loaded 3 archetypes, 0 errors"
            } }
        })
    );
    assert_eq!(client.shut_down(), 0);
}

/// Typing faster than the server checks: the versions of a buffer that a newer one replaced
/// before the server got to them are skipped, and the newest one's diagnostics come last.
#[test]
fn lsp_skips_the_versions_of_a_buffer_typing_has_replaced() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/goblin.json", GOBLIN);
    let goblin = client.uri("archetypes/goblin.json");
    // Forty versions at once, each with its own typo (so each one checked publishes).
    let mut burst = String::new();
    for version in 2..=41 {
        let text = GOBLIN.replace("\"Health\"", &format!("\"Helth{version}\""));
        let change = json!({
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": { "uri": goblin, "version": version },
                "contentChanges": [{ "text": text }]
            }
        })
        .to_string();
        burst.push_str(&format!("Content-Length: {}\r\n\r\n{change}", change.len()));
    }
    client.stdin.write_all(burst.as_bytes()).unwrap();
    client.stdin.flush().unwrap();
    let mut versions = Vec::new();
    let last = loop {
        let published = client.diagnostics("archetypes/goblin.json");
        versions.push(published["version"].as_i64().unwrap());
        if published["version"] == 41 {
            break published;
        }
    };
    assert_eq!(
        last["diagnostics"][0]["message"],
        "unknown component `Helth41`"
    );
    assert!(
        versions.windows(2).all(|pair| pair[0] < pair[1]),
        "{versions:?}"
    );
    assert!(
        versions.len() < 40,
        "every version was checked, none skipped: {versions:?}"
    );
    assert_eq!(client.shut_down(), 0);
}

/// A buffer the editor sends with its byte-order mark: the mark is the first line's first
/// character there, so a first-line problem is placed one character further right than in the
/// same text without it; other lines are unaffected.
#[test]
fn lsp_places_first_line_problems_in_a_buffer_with_a_byte_order_mark() {
    let project = project();
    let mut client = Client::initialized(&project);
    let typo = r#"{ "components": { "Helth": { "current": 5.0, "max": 5.0 } } }"#;
    let buffers = [
        ("archetypes/plain.json", typo.to_string(), 18),
        ("archetypes/marked.json", format!("\u{feff}{typo}"), 19),
    ];
    for (file, text, start) in buffers {
        client.open(file, &text);
        let found = client.diagnostics(file);
        let place = range(0, start, 0, start + 7);
        assert_eq!(found["diagnostics"][0]["range"], place, "{found}");
        assert_eq!(
            found["diagnostics"][0]["relatedInformation"][0]["location"]["range"],
            place
        );
    }
    assert_eq!(client.shut_down(), 0);
}

/// The same problems, places and ends as `validate --format json`.
#[test]
fn lsp_diagnostics_are_validates() {
    let project = project();
    let broken = "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Helth\": {},\n    \"Health\": { \"current\": 5, \"maks\": 3 },\n    \"Name\": 5\n  }\n}\n";
    project.write("archetypes/goblin.json", broken);
    let mut client = Client::initialized(&project);
    let published = client.diagnostics("archetypes/goblin.json");
    let run = project.run(&["validate", "--format", "json"]);
    let expected: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|d| d["file"] == "archetypes/goblin.json")
        .collect();
    assert_eq!(expected.len(), 3, "{}", run.stdout);
    let published = published["diagnostics"].as_array().unwrap().clone();
    assert_eq!(published.len(), expected.len(), "{published:?}");
    for (lsp, cli) in published.iter().zip(&expected) {
        assert_eq!(lsp["code"], cli["code"]);
        assert_eq!(lsp["message"], cli["message"]);
        let as_cli = |p: &Value| {
            (
                p["line"].as_u64().unwrap() + 1,
                p["character"].as_u64().unwrap() + 1,
            )
        };
        assert_eq!(
            (as_cli(&lsp["range"]["start"]), as_cli(&lsp["range"]["end"])),
            (
                (
                    cli["line"].as_u64().unwrap(),
                    cli["column"].as_u64().unwrap()
                ),
                (
                    cli["end_line"].as_u64().unwrap(),
                    cli["end_column"].as_u64().unwrap()
                )
            )
        );
    }
}

/// The editor notes a value equal to what is inherited (`validate` only when asked).
#[test]
fn lsp_notes_a_value_the_same_as_inherited() {
    let project = project();
    let mut client = Client::initialized(&project);
    let same = GOBLIN.replace("\"current\": 5", "\"current\": 5, \"max\": 10");
    client.open("archetypes/goblin.json", &same);
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({
            "uri": client.uri("archetypes/goblin.json"),
            "version": 1,
            "diagnostics": [{
                "range": range(3, 37, 3, 39),
                "severity": 3,
                "code": "same-as-inherited",
                "source": "archetool",
                "message": "`Health.max` is already `10` in what this archetype is built on: this changes nothing"
            }]
        })
    );
    assert_eq!(client.shut_down(), 0);
}

#[test]
fn lsp_rechecks_open_children_when_a_parent_changes() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/goblin.json", GOBLIN);
    client.open("archetypes/base.json", BASE);
    // The parent no longer gives `max`; the goblin, which is concrete, is now incomplete.
    client.change(
        "archetypes/base.json",
        2,
        &BASE.replace(", \"max\": 10", ""),
    );
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({
            "uri": client.uri("archetypes/goblin.json"),
            "version": 1,
            "diagnostics": [{
                "range": range(3, 14, 3, 30),
                "severity": 1,
                "code": "invalid-component",
                "source": "archetool",
                "message": "invalid value for `Health`: missing field `max`"
            }]
        })
    );
    client.change("archetypes/base.json", 3, BASE);
    assert_eq!(
        client.diagnostics("archetypes/goblin.json")["diagnostics"],
        json!([])
    );
}

#[test]
fn lsp_checks_scene_buffers_against_the_archetypes() {
    let project = project();
    let mut client = Client::initialized(&project);
    let typo = SCENE.replace(
        "\"archetype\": \"goblin\" }",
        "\"archetype\": \"goblin\", \"components\": { \"Helth\": { \"max\": 3 } } }",
    );
    client.open(SCENE_FILE, &typo);
    let scene = client.uri(SCENE_FILE);
    let place = range(3, 71, 3, 78);
    assert_eq!(
        client.diagnostics(SCENE_FILE),
        json!({
            "uri": scene,
            "version": 1,
            "diagnostics": [{
                "range": place,
                "severity": 1,
                "code": "unknown-component",
                "source": "archetool",
                "message": "entity 00000000000000a1: unknown component `Helth`",
                "relatedInformation": [{
                    "location": { "uri": scene, "range": place },
                    "message": "did you mean `Health`?"
                }],
                "data": { "suggestion": "Health" }
            }]
        })
    );
    client.change(SCENE_FILE, 2, SCENE);
    assert_eq!(client.diagnostics(SCENE_FILE)["diagnostics"], json!([]));
}

/// A scene buffer is checked as a load checks it: a sub-scene outside the scenes' directory is
/// refused without being opened, and nothing of that file reaches the editor.
#[test]
fn lsp_refuses_a_scene_buffers_sub_scene_outside_its_directory_unopened() {
    let project = project();
    project.write(
        "secret.scene.json",
        r#"{ "format": 2, "entities": [ { "id": "SECRET-TOKEN-42", "components": { "api_key": "x" } } ] }"#,
    );
    let mut client = Client::initialized(&project);
    let escape = "{\n  \"format\": 2,\n  \"entities\": [\n    { \"id\": \"00000000000000c1\", \"scene\": \"../../secret.scene.json\" }\n  ]\n}\n";
    client.open(SCENE_FILE, escape);
    let scene = client.uri(SCENE_FILE);
    let root = client.root.clone();
    assert_eq!(
        client.diagnostics(SCENE_FILE),
        json!({
            "uri": scene,
            "version": 1,
            "diagnostics": [{
                "range": range(3, 41, 3, 66),
                "severity": 1,
                "code": "io",
                "source": "archetool",
                "message": format!("entity 00000000000000c1: sub-scene `../../secret.scene.json` leads outside the scenes root `{root}/assets/scenes`; sub-scenes are read only from files under it (SceneLoadOptions::sub_scenes sets the root)"),
            }]
        })
    );
}

/// Every component the demo registers, in the order completion lists them.
const DEMO_COMPONENTS: [&str; 23] = [
    "Armor",
    "Boss",
    "Door",
    "Faction",
    "Follow",
    "Glyph",
    "Health",
    "Key",
    "Leader",
    "Loot",
    "Melee",
    "Name",
    "Portrait",
    "Projectile",
    "Ranged",
    "Sensor",
    "Spawner",
    "Speed",
    "Stance",
    "Target",
    "Transform",
    "Turret",
    "Velocity",
];

#[test]
fn lsp_completes_names_from_the_registry_and_the_library() {
    let project = project();
    let mut client = Client::initialized(&project);
    let text = "{\n  \"extends\": \"b\",\n  \"components\": {\n    \"Hea\": {},\n    \"Health\": { \"c\" },\n    \"Glyph\": { \"color\": \"\" }\n  },\n  \"children\": { \"x\": { \"archetype\": \"\" } }\n}\n";
    client.open("archetypes/goblin.json", text);
    // A component name, replacing the key typed so far (quotes included).
    let components = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 3, 7),
    );
    assert_eq!(labels(&components), DEMO_COMPONENTS);
    let health = &components[6];
    assert_eq!(
        health,
        &json!({
            "label": "Health",
            "kind": 22,
            "detail": "archetool::demo::components::Health",
            "documentation": "Hit points: `current` changes during play, `max` comes from the archetype.",
            "filterText": "\"Health\"",
            "textEdit": { "range": range(3, 4, 3, 9), "newText": "\"Health\"" }
        })
    );
    // A field of the component.
    let fields = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 4, 19),
    );
    assert_eq!(labels(&fields), ["current", "max"]);
    assert_eq!(fields[0]["documentation"], "Hit points left.");
    // An enum's variants.
    let variants = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 5, 24),
    );
    assert_eq!(
        labels(&variants),
        ["Red", "Green", "Yellow", "Blue", "Magenta", "Cyan", "White", "Gray"]
    );
    // Archetype names (not the file's own) in `extends` and in a child's `archetype`.
    let parents = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 1, 15),
    );
    assert_eq!(labels(&parents), ["base", "camp"]);
    assert_eq!(
        parents[0]["textEdit"],
        json!({ "range": range(1, 13, 1, 16), "newText": "\"base\"" })
    );
    let child = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 7, 38),
    );
    assert_eq!(labels(&child), ["base", "camp"]);
    // The format's keys at the top level.
    let keys = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 1, 3),
    );
    assert_eq!(
        labels(&keys),
        [
            "$schema",
            "format",
            "abstract",
            "formerly",
            "extends",
            "components",
            "children"
        ]
    );
}

#[test]
fn lsp_goes_to_archetypes_and_finds_their_references() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/goblin.json", GOBLIN);
    let start = range(0, 0, 0, 0);
    assert_eq!(
        client.result(
            "textDocument/definition",
            client.at("archetypes/goblin.json", 1, 15)
        ),
        json!({ "uri": client.uri("archetypes/base.json"), "range": start })
    );
    // From the camp's child to the goblin.
    assert_eq!(
        client.result(
            "textDocument/definition",
            client.at("archetypes/camp.json", 2, 31)
        ),
        json!({ "uri": client.uri("archetypes/goblin.json"), "range": start })
    );
    // Nothing names an archetype at a component.
    assert_eq!(
        client.result(
            "textDocument/definition",
            client.at("archetypes/goblin.json", 3, 6)
        ),
        Value::Null
    );
    // The goblin's references, asked from its own file: the camp's child and the scene.
    let mut params = client.at("archetypes/goblin.json", 0, 0);
    params["context"] = json!({ "includeDeclaration": true });
    assert_eq!(
        client.result("textDocument/references", params),
        json!([
            { "uri": client.uri("archetypes/goblin.json"), "range": start },
            { "uri": client.uri("archetypes/camp.json"), "range": range(2, 28, 2, 36) },
            { "uri": client.uri(SCENE_FILE), "range": range(3, 45, 3, 53) }
        ])
    );
}

#[test]
fn lsp_hover_shows_the_resolved_value_and_where_it_comes_from() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/goblin.json", GOBLIN);
    assert_eq!(
        client.result(
            "textDocument/hover",
            client.at("archetypes/goblin.json", 3, 7)
        ),
        json!({
            "contents": {
                "kind": "markdown",
                "value": "**Health** · `archetool::demo::components::Health`\n\n\
                    Hit points: `current` changes during play, `max` comes from the archetype.\n\n\
                    In `goblin`: `{\"current\": 5, \"max\": 10}`\n\n\
                    - `Health.current` = `5` from `archetypes/goblin.json:4:28`\n\
                    - `Health.max` = `10` from `archetypes/base.json:4:39`"
            },
            "range": range(3, 4, 3, 12)
        })
    );
    assert_eq!(
        client.result(
            "textDocument/hover",
            client.at("archetypes/goblin.json", 3, 18)
        ),
        json!({
            "contents": {
                "kind": "markdown",
                "value": "**Health.current** · `archetool::demo::components::Health`\n\n\
                    Hit points left.\n\n\
                    In `goblin`: `5`\n\n\
                    - `Health.current` = `5` from `archetypes/goblin.json:4:28`"
            },
            "range": range(3, 16, 3, 25)
        })
    );
}

/// On an archetype's name: its file, whether it is abstract, its parents.
#[test]
fn lsp_hover_on_an_archetype_name_says_what_it_is() {
    let project = project();
    let mut client = Client::initialized(&project);
    let hover = |value: &str, range: Value| json!({ "contents": { "kind": "markdown", "value": value }, "range": range });
    assert_eq!(
        client.result(
            "textDocument/hover",
            client.at("archetypes/goblin.json", 1, 15)
        ),
        hover(
            "**base** · `archetypes/base.json`\n\nabstract",
            range(1, 13, 1, 19)
        )
    );
    assert_eq!(
        client.result(
            "textDocument/hover",
            client.at("archetypes/camp.json", 2, 31)
        ),
        hover(
            "**goblin** · `archetypes/goblin.json`\n\nextends `base`",
            range(2, 28, 2, 36)
        )
    );
}

#[test]
fn lsp_quick_fix_replaces_a_typo_with_the_suggestion() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open(
        "archetypes/goblin.json",
        &GOBLIN.replace("\"Health\"", "\"Helth\""),
    );
    let diagnostics = client.diagnostics("archetypes/goblin.json")["diagnostics"].clone();
    let goblin = client.uri("archetypes/goblin.json");
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": goblin },
            "range": range(3, 4, 3, 11),
            "context": { "diagnostics": diagnostics }
        }),
    );
    assert_eq!(
        actions,
        json!([{
            "title": "Replace with `Health`",
            "kind": "quickfix",
            "diagnostics": diagnostics,
            "edit": { "changes": { goblin.clone(): [{ "range": range(3, 4, 3, 11), "newText": "\"Health\"" }] } },
            "isPreferred": true
        }])
    );
}

#[test]
fn lsp_formats_as_fmt_does() {
    let project = project();
    let messy = "{\"components\":{\"Health\":{\"max\":12,\"current\":12}},\"extends\":\"base\"}";
    project.write("archetypes/goblin.json", messy);
    let mut client = Client::initialized(&project);
    client.open("archetypes/goblin.json", messy);
    let edits = client.result(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": client.uri("archetypes/goblin.json") }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(project.run(&["fmt"]).code, 0);
    let formatted = project.read("archetypes/goblin.json");
    assert_eq!(
        formatted,
        "{\n  \"extends\": \"base\",\n  \"components\": {\n    \"Health\": { \"current\": 12, \"max\": 12 }\n  }\n}\n"
    );
    assert_eq!(
        edits,
        json!([{ "range": range(0, 0, 0, messy.len() as u32), "newText": formatted }])
    );
    client.change("archetypes/goblin.json", 2, &formatted);
    let none = client.result(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": client.uri("archetypes/goblin.json") }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(none, json!([]));
}

#[test]
fn lsp_renames_an_archetype_in_files_and_scenes_and_moves_its_file() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open("archetypes/camp.json", CAMP);
    let mut params = client.at("archetypes/camp.json", 2, 31);
    params["newName"] = json!("enemies/goblin");
    assert_eq!(
        client.result("textDocument/rename", params),
        json!({
            "documentChanges": [
                {
                    "textDocument": { "uri": client.uri("archetypes/camp.json"), "version": 1 },
                    "edits": [{ "range": range(2, 28, 2, 36), "newText": "\"enemies/goblin\"" }]
                },
                {
                    // The old name kept, for what names it outside the project (save games).
                    "textDocument": { "uri": client.uri("archetypes/goblin.json"), "version": null },
                    "edits": [{ "range": range(1, 2, 1, 2), "newText": "\"formerly\": [\"goblin\"],\n  " }]
                },
                {
                    "textDocument": { "uri": client.uri(SCENE_FILE), "version": null },
                    "edits": [{ "range": range(3, 45, 3, 53), "newText": "\"enemies/goblin\"" }]
                },
                {
                    "kind": "rename",
                    "oldUri": client.uri("archetypes/goblin.json"),
                    "newUri": client.uri("archetypes/enemies/goblin.json")
                }
            ]
        })
    );
    // The editor applies the edit: the camp's buffer changes, the file moves, and the server
    // hears of the move. The camp's child is a goblin again, under its new name.
    let renamed = CAMP.replace("\"goblin\"", "\"enemies/goblin\"");
    client.change("archetypes/camp.json", 2, &renamed);
    let camp = client.diagnostics("archetypes/camp.json")["diagnostics"].clone();
    assert_eq!(camp[0]["code"], "unknown-archetype", "{camp}");
    let moved = GOBLIN.replacen("{\n", "{\n  \"formerly\": [\"goblin\"],\n", 1);
    project.write("archetypes/enemies/goblin.json", &moved);
    std::fs::remove_file(project.path("archetypes/goblin.json")).unwrap();
    client.notify(
        "workspace/didRenameFiles",
        json!({ "files": [{
            "oldUri": client.uri("archetypes/goblin.json"),
            "newUri": client.uri("archetypes/enemies/goblin.json")
        }] }),
    );
    assert_eq!(
        client.diagnostics("archetypes/camp.json")["diagnostics"],
        json!([])
    );
    assert_eq!(
        client.result(
            "textDocument/definition",
            client.at("archetypes/camp.json", 2, 31)
        ),
        json!({ "uri": client.uri("archetypes/enemies/goblin.json"), "range": range(0, 0, 0, 0) })
    );
    // A file still naming the old name gets the goblin, with a warning naming the new one.
    client.open("archetypes/outpost.json", "{ \"extends\": \"goblin\" }");
    let outpost = client.diagnostics("archetypes/outpost.json")["diagnostics"].clone();
    assert_eq!(
        (&outpost[0]["code"], &outpost[0]["severity"]),
        (&json!("old-name"), &json!(2)),
        "{outpost}"
    );
    let mut taken = client.at("archetypes/camp.json", 2, 31);
    taken["newName"] = json!("base");
    let refused = client.request("textDocument/rename", taken);
    assert_eq!(
        refused["error"],
        json!({ "code": -32803, "message": format!("archetype `base` already exists (`{}/archetypes/base.json`)", client.root) })
    );
}

/// Buffers that are not archetypes (broken JSON, deep nesting, a byte-order mark, a huge
/// line), requests at every odd place, URIs the server does not serve and a message that is
/// not JSON: the server answers each and stays up.
#[test]
fn lsp_survives_malformed_buffers_and_requests() {
    let project = project();
    let mut client = Client::initialized(&project);
    let deep = "[".repeat(100_000);
    let long = format!("{{\"components\": {{\"Name\": \"{}\"", "x".repeat(200_000));
    let buffers = [
        "",
        "{",
        "{\"components\": {\"Health\": {\"current\": ",
        "\u{feff}{\"extends\": [\"base\", ",
        "{\"children\": {\"a\": {\"children\": {\"b\": {\"archetype\": \"",
        "\"\\u",
        "}}]]::,,\"",
        "{\"components\": {\"Glyph\": {\"ch\": \"é\u{1F600}\", \"color\": \"",
        deep.as_str(),
        long.as_str(),
    ];
    for (i, text) in buffers.iter().enumerate() {
        client.change("archetypes/goblin.json", i as i32 + 2, text);
        client.open("archetypes/goblin.json", text);
        for (line, character) in [(0, 0), (0, 1), (0, 20), (0, 60), (3, 2), (1000, 1000)] {
            for method in [
                "textDocument/completion",
                "textDocument/hover",
                "textDocument/definition",
            ] {
                let response =
                    client.request(method, client.at("archetypes/goblin.json", line, character));
                assert!(
                    response.get("error").is_none(),
                    "{method} in buffer {i}: {response}"
                );
            }
        }
        let formatting = client.request(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": client.uri("archetypes/goblin.json") }, "options": { "tabSize": 2, "insertSpaces": true } }),
        );
        assert!(formatting.get("error").is_none(), "{formatting}");
    }
    // A file outside the root, another scheme, a path that is not a file.
    for uri in [
        "file:///etc/passwd",
        "untitled:Untitled-1",
        "file:///",
        "file:///%ZZ",
    ] {
        let response = client.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 0 } }),
        );
        assert_eq!(response["result"], Value::Null, "{uri}: {response}");
    }
    // Parameters of the wrong shape, an unknown method, a body that is not JSON.
    let bad = client.request("textDocument/hover", json!({ "position": 3 }));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let unknown = client.request("textDocument/colour", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    client.send_raw("{ not json");
    // Still answering: the goblin's buffer is back to the file, and its diagnostics clear.
    client.change("archetypes/goblin.json", 100, GOBLIN);
    let hover = client.result(
        "textDocument/hover",
        client.at("archetypes/goblin.json", 3, 7),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .starts_with("**Health**"),
        "{hover}"
    );
    assert_eq!(client.shut_down(), 0);
}

/// What the Neovim end-to-end test does in the editor: open the goblin (with a typo) under
/// `archetool lsp` with Neovim's built-in client (the calls of Neovim 0.7, which later versions
/// keep), wait for its diagnostics, ask for completions at the typo, and write both to `OUT`.
const NEOVIM_SCRIPT: &str = r#"
local root = os.getenv("PROJECT")
local lines = {}
vim.cmd("edit " .. vim.fn.fnameescape(root .. "/archetypes/goblin.json"))
local client = vim.lsp.start_client({ name = "archetool", cmd = { os.getenv("ARCHETOOL"), "lsp" }, root_dir = root })
vim.lsp.buf_attach_client(0, client)
vim.wait(10000, function() return #vim.diagnostic.get(0) > 0 end, 20)
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
  table.insert(lines, string.format("diagnostic %d:%d-%d:%d severity %d [%s] %s", d.lnum, d.col, d.end_lnum, d.end_col, d.severity, code, d.message))
end
local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = 3, character = 7 } }
for _, response in pairs(vim.lsp.buf_request_sync(0, "textDocument/completion", params, 10000) or {}) do
  local items = response.result or {}
  if items.items then items = items.items end
  for _, item in ipairs(items) do table.insert(lines, "completion " .. item.label) end
end
vim.fn.writefile(lines, os.getenv("OUT"))
vim.cmd("qa!")
"#;

/// Whether Neovim is installed. CI installs it (`.ci/run`): there a missing `nvim` fails the
/// test; elsewhere the test is skipped, saying so.
fn neovim_found() -> bool {
    let found = Command::new("nvim")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs this test with Neovim installed"
        );
        eprintln!("skipped: no `nvim` on PATH");
    }
    found
}

/// Runs `script` in a headless Neovim in the project (`ARCHETOOL`: the server, `PROJECT`: the
/// project's root, `OUT`: where the script writes what it saw), within 60 s, and returns what
/// it wrote. When the script creates the file `ready` in the project, `on_ready` runs (once).
fn run_neovim(project: &Project, script: &str, on_ready: impl FnOnce()) -> String {
    project.write("neovim.lua", script);
    let root = std::fs::canonicalize(project.dir.path()).unwrap();
    let out = root.join("out.txt");
    let mut nvim = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-c", "luafile neovim.lua"])
        .current_dir(&root)
        .env("ARCHETOOL", env!("CARGO_BIN_EXE_archetool"))
        .env("PROJECT", &root)
        .env("OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut on_ready = Some(on_ready);
    let mut waited = Duration::ZERO;
    while nvim.try_wait().unwrap().is_none() {
        if waited > Duration::from_secs(60) {
            let _ = nvim.kill();
            let _ = nvim.wait();
            panic!("Neovim still running after 60 s");
        }
        if root.join("ready").exists() {
            if let Some(on_ready) = on_ready.take() {
                on_ready();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
        waited += Duration::from_millis(20);
    }
    std::fs::read_to_string(&out).unwrap_or_default()
}

/// A real editor: Neovim, headless, shows the typo's diagnostic and completes component names.
#[test]
fn lsp_in_neovim_shows_a_typo_and_completes_components() {
    if !neovim_found() {
        return;
    }
    let project = project();
    project.write(
        "archetypes/goblin.json",
        &GOBLIN.replace("\"Health\"", "\"Helth\""),
    );
    let mut expected = String::from(
        "diagnostic 3:4-3:11 severity 1 [unknown-component] unknown component `Helth`\n",
    );
    for name in DEMO_COMPONENTS {
        expected.push_str(&format!("completion {name}\n"));
    }
    assert_eq!(run_neovim(&project, NEOVIM_SCRIPT, || {}), expected);
}

/// What the second Neovim test does: open the goblin with `archetool lsp` (sending each change
/// at once, `debounce_text_changes = 0`, so the server meets the burst, not Neovim's own
/// debounce), note each diagnostics publish for it, and write to `OUT`:
/// - once the server answers, it creates `ready` (the test then writes `archetypes/orc.json`,
///   with a typo, on disk) and waits for the orc's diagnostics, a file not open in the editor;
/// - then it types forty versions of the goblin's component line in one go, each with its own
///   typo, waits for the diagnostics of the last version, and says what was published.
const NEOVIM_OUTSIDE_AND_TYPING_SCRIPT: &str = r#"
local root = os.getenv("PROJECT")
local lines = {}
local published = {}
vim.cmd("edit " .. vim.fn.fnameescape(root .. "/archetypes/goblin.json"))
local goblin = vim.api.nvim_get_current_buf()
local goblin_uri = vim.uri_from_bufnr(goblin)
local function on_publish(err, result, ctx, config)
  if result and result.uri == goblin_uri then
    local first = result.diagnostics[1]
    table.insert(published, { version = result.version, message = first and first.message or "" })
  end
  return vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
end
local client = vim.lsp.start_client({
  name = "archetool",
  cmd = { os.getenv("ARCHETOOL"), "lsp" },
  root_dir = root,
  flags = { debounce_text_changes = 0 },
  handlers = { ["textDocument/publishDiagnostics"] = on_publish },
})
vim.lsp.buf_attach_client(goblin, client)
local function describe(prefix, bufnr)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
    table.insert(lines, string.format("%s %d:%d-%d:%d severity %d [%s] %s", prefix, d.lnum, d.col, d.end_lnum, d.end_col, d.severity, code, d.message))
  end
end
-- Requests go to a client once it is initialized; answered once the library is loaded (the
-- server watches the root from before it reads it).
vim.wait(10000, function() return #vim.lsp.buf_get_clients(goblin) > 0 end, 20)
vim.lsp.buf_request_sync(goblin, "workspace/symbol", { query = "goblin" }, 10000)
local ready = io.open(root .. "/ready", "w")
ready:close()
local orc = vim.uri_to_bufnr(vim.uri_from_fname(root .. "/archetypes/orc.json"))
vim.wait(10000, function() return #vim.diagnostic.get(orc) > 0 end, 20)
describe("outside orc.json", orc)

published = {}
for i = 1, 40 do
  vim.api.nvim_buf_set_lines(goblin, 3, 4, true, { string.format('    "Helth%d": { "current": 5 }', i) })
end
local final = vim.lsp.util.buf_versions[goblin]
vim.wait(10000, function()
  local last = published[#published]
  return last ~= nil and last.version == final
end, 20)
local increasing = true
for i = 2, #published do
  if published[i].version <= published[i - 1].version then increasing = false end
end
local last = published[#published] or { version = -1, message = "" }
table.insert(lines, string.format("typing last published: %s", last.message))
table.insert(lines, string.format("typing last published is the last version: %s", tostring(last.version == final)))
table.insert(lines, string.format("typing versions published in order: %s", tostring(increasing)))
table.insert(lines, string.format("typing publishes: %d", #published))
describe("typing goblin.json", goblin)
vim.fn.writefile(lines, os.getenv("OUT"))
vim.cmd("qa!")
"#;

/// Neovim 0.7 watches no files for its server: a file written outside the editor still shows
/// its problems there (the server watches the root itself); and a burst of typing is coalesced:
/// the last version's diagnostics arrive, versions in order, fewer publishes than versions.
#[test]
fn lsp_in_neovim_sees_outside_changes_and_keeps_up_with_typing() {
    if !neovim_found() {
        return;
    }
    let project = project();
    let orc = GOBLIN.replace("\"Health\"", "\"Helth\"");
    let out = run_neovim(&project, NEOVIM_OUTSIDE_AND_TYPING_SCRIPT, || {
        project.write("archetypes/orc.json", &orc)
    });
    let mut lines: Vec<&str> = out.lines().collect();
    let count = lines
        .iter()
        .position(|line| line.starts_with("typing publishes: "))
        .unwrap_or_else(|| panic!("{out}"));
    let publishes: usize = lines.remove(count)["typing publishes: ".len()..]
        .parse()
        .unwrap();
    assert!(
        (1..40).contains(&publishes),
        "forty versions typed, {publishes} published: none was skipped"
    );
    assert_eq!(
        lines,
        [
            "outside orc.json 3:4-3:11 severity 1 [unknown-component] unknown component `Helth`",
            "typing last published: unknown component `Helth40`",
            "typing last published is the last version: true",
            "typing versions published in order: true",
            "typing goblin.json 3:4-3:13 severity 1 [unknown-component] unknown component `Helth40`",
        ]
    );
}

/// What the third Neovim test does: open the goblin, then its parent, with `archetool lsp`;
/// ask for the goblin's inlay hints (Neovim 0.7 has no inlay-hint display: the request, as a
/// plugin makes it); show each buffer's code lenses with Neovim's own `vim.lsp.codelens`, and
/// write both, with the text Neovim shows for the lens, to `OUT`.
const NEOVIM_HINTS_AND_LENSES_SCRIPT: &str = r#"
local root = os.getenv("PROJECT")
local lines = {}
local client = vim.lsp.start_client({ name = "archetool", cmd = { os.getenv("ARCHETOOL"), "lsp" }, root_dir = root })
local range = { start = { line = 0, character = 0 }, ["end"] = { line = 6, character = 0 } }
for _, name in ipairs({ "goblin", "base" }) do
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/archetypes/" .. name .. ".json"))
  local buffer = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buffer, client)
  -- Requests go to a client once it is initialized.
  vim.wait(10000, function() return #vim.lsp.buf_get_clients(buffer) > 0 end, 20)
  local params = { textDocument = { uri = vim.uri_from_bufnr(buffer) }, range = range }
  for _, response in pairs(vim.lsp.buf_request_sync(buffer, "textDocument/inlayHint", params, 10000) or {}) do
    for _, hint in ipairs(response.result or {}) do
      table.insert(lines, string.format("%s inlay hint %d:%d %s (padding left: %s)", name, hint.position.line, hint.position.character, hint.label, tostring(hint.paddingLeft)))
    end
  end
  vim.lsp.codelens.refresh()
  vim.wait(10000, function() return #vim.lsp.codelens.get(buffer) > 0 end, 20)
  for _, lens in ipairs(vim.lsp.codelens.get(buffer)) do
    local r = lens.range
    table.insert(lines, string.format("%s code lens %d:%d-%d:%d %s", name, r.start.line, r.start.character, r["end"].line, r["end"].character, lens.command.title))
  end
  local namespace = vim.api.nvim_create_namespace("vim_lsp_codelens:" .. client)
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buffer, namespace, 0, -1, { details = true })) do
    local text = {}
    for _, chunk in ipairs(mark[4].virt_text or {}) do table.insert(text, chunk[1]) end
    table.insert(lines, string.format("%s shown on line %d: %s", name, mark[2], table.concat(text)))
  end
end
vim.fn.writefile(lines, os.getenv("OUT"))
vim.cmd("qa!")
"#;

/// In Neovim: the goblin's inlay hint (the inherited field after its partial override) and
/// each file's code lens, in full, as the editor holds and shows them.
#[test]
fn lsp_in_neovim_shows_inlay_hints_and_code_lenses() {
    if !neovim_found() {
        return;
    }
    let project = project();
    let line = GOBLIN.lines().nth(3).unwrap();
    let end = line.rfind('}').unwrap() + 1;
    let out = run_neovim(&project, NEOVIM_HINTS_AND_LENSES_SCRIPT, || {});
    assert_eq!(
        out,
        format!(
            "goblin inlay hint 3:{end} max: 10 ← base (padding left: true)\n\
             goblin code lens 0:0-0:0 extended by 0 · placed in 1 scene entity\n\
             goblin shown on line 0: extended by 0 · placed in 1 scene entity\n\
             base code lens 0:0-0:0 extended by 1 · placed in 0 scene entities · abstract\n\
             base shown on line 0: extended by 1 · placed in 0 scene entities · abstract\n"
        )
    );
}

/// Component fields that name archetypes (`ArchetypeRef`) and entities of the instance
/// (`EntityRef`, `#child`), in the demo's archetypes: completion, definition, references.
#[test]
fn lsp_follows_references_in_component_values() {
    let project = Project::demo();
    let mut client = Client::initialized(&project);
    let turret = "archetypes/structures/turret.json";
    let archer = "archetypes/enemies/goblin_archer.json";
    // `"Turret": { "gun": "#gun", ... }`: the child's key under `children`.
    assert_eq!(
        client.result("textDocument/definition", client.at(turret, 7, 25)),
        json!({ "uri": client.uri(turret), "range": range(10, 4, 10, 9) })
    );
    let paths = client.result("textDocument/completion", client.at(turret, 7, 25));
    assert_eq!(labels(&paths), ["#", "#gun", "#sensor"]);
    assert_eq!(
        paths[1]["textEdit"],
        json!({ "range": range(7, 23, 7, 29), "newText": "\"#gun\"" })
    );
    // `"Ranged": { "projectile": "projectiles/arrow", ... }`.
    assert_eq!(
        client.result("textDocument/definition", client.at(archer, 9, 24)),
        json!({ "uri": client.uri("archetypes/projectiles/arrow.json"), "range": range(0, 0, 0, 0) })
    );
    let names = client.result("textDocument/completion", client.at(archer, 9, 24));
    assert_eq!(labels(&names).len(), 20);
    assert!(labels(&names).contains(&"projectiles/bolt"));
    let mut params = client.at("archetypes/projectiles/arrow.json", 0, 0);
    params["context"] = json!({ "includeDeclaration": false });
    assert_eq!(
        client.result("textDocument/references", params),
        json!([{ "uri": client.uri(archer), "range": range(9, 20, 9, 39) }])
    );
}

/// An inheritance cycle made in a buffer is shown in both files of the cycle, each at its own
/// `extends`, with both places as related information.
#[test]
fn lsp_shows_a_cycle_in_each_file_involved() {
    let project = project();
    let mut client = Client::initialized(&project);
    client.open(
        "archetypes/base.json",
        &BASE.replacen("{\n", "{\n  \"extends\": \"goblin\",\n", 1),
    );
    let base = client.uri("archetypes/base.json");
    let goblin = client.uri("archetypes/goblin.json");
    let related = json!([
        { "location": { "uri": base, "range": range(1, 13, 1, 21) }, "message": "`base` extends `goblin` here" },
        { "location": { "uri": goblin, "range": range(1, 13, 1, 19) }, "message": "`goblin` extends `base` here" }
    ]);
    let shown = |range: Value, message: &str| {
        json!([{
            "range": range,
            "severity": 1,
            "code": "inheritance-cycle",
            "source": "archetool",
            "message": message,
            "relatedInformation": related
        }])
    };
    assert_eq!(
        client.diagnostics("archetypes/base.json")["diagnostics"],
        shown(
            range(1, 13, 1, 21),
            "inheritance cycle: base -> goblin -> base"
        )
    );
    assert_eq!(
        client.diagnostics("archetypes/goblin.json")["diagnostics"],
        shown(
            range(1, 13, 1, 19),
            "inheritance cycle: base -> goblin -> base (`goblin` extends `base` here)"
        )
    );
}

/// Every file of the bad-input catalogue (`tests/fixtures/bad`), opened as a buffer, edited
/// and closed, with requests at its start, middle and end: the server answers each, and shuts
/// down cleanly at the end.
#[test]
fn lsp_survives_the_bad_input_catalogue_as_buffers() {
    let project = project();
    let mut client = Client::initialized(&project);
    let fixtures = super::repo_root().join("tests/fixtures/bad");
    let mut files = Vec::new();
    let mut archetype_files = Vec::new();
    super::collect_json(&fixtures.join("archetypes"), &mut archetype_files);
    for file in archetype_files {
        let case = file.strip_prefix(fixtures.join("archetypes")).unwrap();
        let relative: PathBuf = case.components().skip(1).collect();
        files.push((file.clone(), format!("archetypes/{}", relative.display())));
    }
    let mut scene_files = Vec::new();
    super::collect_json(&fixtures.join("scenes"), &mut scene_files);
    for file in scene_files {
        let name = file.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".scene.json") {
            files.push((file.clone(), format!("assets/scenes/{name}")));
        }
    }
    assert!(files.len() > 100, "{}", files.len());
    for (file, relative) in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        let lines = text.lines().count() as u32;
        client.open(&relative, &text);
        client.change(&relative, 2, &text.replacen('"', "", 1));
        for (line, character) in [(0, 0), (0, 5), (lines / 2, 8), (lines, 0)] {
            for method in [
                "textDocument/completion",
                "textDocument/hover",
                "textDocument/definition",
            ] {
                let response = client.request(method, client.at(&relative, line, character));
                assert!(
                    response.get("error").is_none(),
                    "{method} in {}: {response}",
                    file.display()
                );
            }
        }
        let formatting = client.request(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": client.uri(&relative) }, "options": { "tabSize": 2, "insertSpaces": true } }),
        );
        assert!(
            formatting.get("error").is_none(),
            "{}: {formatting}",
            file.display()
        );
        client.notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": client.uri(&relative) } }),
        );
    }
    assert_eq!(client.shut_down(), 0);
}

/// Editors may start the server anywhere: a relative `--dir` is found in the workspace folder
/// the client names.
#[test]
fn lsp_finds_the_archetypes_from_the_workspace_folder() {
    let project = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut client = Client::start_in(&project, elsewhere.path());
    let root = client.root.clone();
    client.result(
        "initialize",
        json!({ "capabilities": {}, "workspaceFolders": [{ "uri": format!("file://{root}"), "name": "game" }] }),
    );
    client.notify("initialized", json!({}));
    assert_eq!(
        client.result(
            "textDocument/definition",
            client.at("archetypes/goblin.json", 1, 15)
        ),
        json!({ "uri": client.uri("archetypes/base.json"), "range": range(0, 0, 0, 0) })
    );
    assert_eq!(client.shut_down(), 0);
}

/// Closing a buffer goes back to the file on disk: its unsaved problems go; a save with text
/// is the buffer's text.
#[test]
fn lsp_forgets_unsaved_text_when_a_buffer_closes() {
    let project = project();
    let mut client = Client::initialized(&project);
    let typo = GOBLIN.replace("\"Health\"", "\"Helth\"");
    client.open("archetypes/goblin.json", &typo);
    let found = client.diagnostics("archetypes/goblin.json")["diagnostics"].clone();
    assert_eq!(found[0]["code"], "unknown-component", "{found}");
    let goblin = client.uri("archetypes/goblin.json");
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": goblin } }),
    );
    assert_eq!(
        client.diagnostics("archetypes/goblin.json"),
        json!({ "uri": goblin, "diagnostics": [] })
    );
    // Saved with the typo (the editor sends the text, as the server asks): the problem is back.
    client.open("archetypes/goblin.json", GOBLIN);
    project.write("archetypes/goblin.json", &typo);
    client.notify(
        "textDocument/didSave",
        json!({ "textDocument": { "uri": goblin }, "text": typo }),
    );
    let found = client.diagnostics("archetypes/goblin.json")["diagnostics"].clone();
    assert_eq!(found[0]["message"], "unknown component `Helth`", "{found}");
}

/// In a scene, a component's hover gives its Rust type and doc comment (a scene entity has no
/// archetype file to resolve in), and completion offers the scene entity's keys.
#[test]
fn lsp_hovers_and_completes_in_scenes() {
    let project = project();
    let mut client = Client::initialized(&project);
    let text = SCENE.replace(
        "\"archetype\": \"goblin\" }",
        "\"archetype\": \"goblin\", \"components\": { \"Health\": { \"max\": 3 } } }",
    );
    client.open(SCENE_FILE, &text);
    assert_eq!(
        client.result("textDocument/hover", client.at(SCENE_FILE, 3, 74)),
        json!({
            "contents": {
                "kind": "markdown",
                "value": "**Health** · `archetool::demo::components::Health`\n\n\
                    Hit points: `current` changes during play, `max` comes from the archetype."
            },
            "range": range(3, 71, 3, 79)
        })
    );
    let keys = client.result("textDocument/completion", client.at(SCENE_FILE, 3, 8));
    assert_eq!(labels(&keys), ["id", "archetype", "child", "components"]);
    let names = client.result("textDocument/completion", client.at(SCENE_FILE, 3, 50));
    assert_eq!(labels(&names), ["base", "camp", "goblin"]);
}

/// Columns are the protocol's UTF-16 code units: after `é` (one) and `😀` (two), the typo's
/// place is where the editor shows it.
#[test]
fn lsp_places_are_in_utf16_columns() {
    let project = project();
    let mut client = Client::initialized(&project);
    let text = "{ \"components\": { \"Name\": \"é😀\", \"Helth\": {} } }";
    client.open("archetypes/goblin.json", text);
    let found = client.diagnostics("archetypes/goblin.json")["diagnostics"].clone();
    assert_eq!(found[0]["range"], range(0, 33, 0, 40), "{found}");
    let hover = client.result(
        "textDocument/hover",
        client.at("archetypes/goblin.json", 0, 28),
    );
    assert_eq!(hover, Value::Null);
    let names = client.result(
        "textDocument/completion",
        client.at("archetypes/goblin.json", 0, 36),
    );
    assert_eq!(names[0]["textEdit"]["range"], range(0, 33, 0, 40));
}

/// 65,536 unknown fields on one line after a string of wide characters (a minified file): every
/// problem is published, each at its place in UTF-16 columns. The wait is a guard against a
/// hang, not a speed target (the bench's `scaling_lsp_errors_per_file` is that).
#[test]
fn lsp_publishes_every_problem_of_a_minified_file_at_its_place() {
    let project = project();
    let mut client = Client::initialized(&project);
    let fields: Vec<String> = (0..65_536).map(|i| format!("\"x{i:05}\":0")).collect();
    let text = format!(
        "{{\"components\":{{\"Name\":\"é😀\",\"Health\":{{\"current\":10,\"max\":10,{}}}}}}}",
        fields.join(",")
    );
    client.open("archetypes/goblin.json", &text);
    let published = client.diagnostics_within("archetypes/goblin.json", Duration::from_secs(120));
    let found = published["diagnostics"].as_array().unwrap();
    assert_eq!(found.len(), 65_536);
    // `{"components":{"Name":"é😀","Health":{"current":10,"max":10,` is 60 UTF-16 units; each
    // field (`"x00000":0,`) 11.
    let unknown = |range: Value, field: &str| {
        json!({
            "range": range,
            "severity": 1,
            "code": "unknown-field",
            "source": "archetool",
            "message": format!("unknown field `{field}` in component `Health`"),
        })
    };
    assert_eq!(found[0], unknown(range(0, 60, 0, 68), "x00000"));
    let last = 60 + 65_535 * 11;
    assert_eq!(
        found[65_535],
        unknown(range(0, last, 0, last + 8), "x65535")
    );
}
/// Rename refuses a name the loader would refuse, saying why: one differing only in letter
/// case from an archetype's or from a directory's, one over the length limit, one breaking the
/// character rule, one taken, and another archetype's former name. A name differing from the
/// renamed archetype's own only in case is its to take.
#[test]
fn lsp_rename_refuses_names_the_loader_refuses() {
    let project = project();
    project.write("archetypes/enemies/orc.json", "{ \"formerly\": \"grunt\" }");
    let mut client = Client::initialized(&project);
    let root = client.root.clone();
    let refusal = |client: &mut Client, new_name: &str| {
        let mut params = client.at("archetypes/goblin.json", 1, 2);
        params["newName"] = json!(new_name);
        client.request("textDocument/rename", params)["error"].clone()
    };
    let clash = "names that differ only in letter case clash on Windows and macOS";
    let rule = "names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`";
    let long = "g".repeat(5_000);
    let cases = [
        ("enemies/Orc", format!("archetype `enemies/orc` (`{root}/archetypes/enemies/orc.json`) already exists; {clash}")),
        ("Base", format!("archetype `base` (`{root}/archetypes/base.json`) already exists; {clash}")),
        (
            "Enemies/goblin",
            "archetype `Enemies/goblin` is in directory `Enemies`, which differs from `enemies` only in letter case; directory names must stay distinct on case-insensitive file systems, where the two would merge; did you mean `enemies/goblin`?".to_string(),
        ),
        (
            &long,
            format!("archetype name `{}…` (5000 bytes) is over the limit of 250 bytes; a name's file, `.json` added, must fit in the 255 bytes file systems allow for a file name", "g".repeat(64)),
        ),
        (
            "enemies\\goblin",
            format!("archetype name `enemies\\goblin` uses `\\`; {rule}; did you mean `enemies/goblin`?"),
        ),
        ("camp", format!("archetype `camp` already exists (`{root}/archetypes/camp.json`)")),
        (
            "grunt",
            "`grunt` is a former name of archetype `enemies/orc` (in its `formerly`), so it still names that archetype; choose another name".to_string(),
        ),
    ];
    for (new_name, message) in cases {
        assert_eq!(
            refusal(&mut client, new_name),
            json!({ "code": -32803, "message": message }),
            "{new_name}"
        );
    }
    // The goblin's own name in other letters: nothing else has it.
    let mut params = client.at("archetypes/goblin.json", 1, 2);
    params["newName"] = json!("Goblin");
    let renamed = client.result("textDocument/rename", params);
    assert_eq!(
        renamed["documentChanges"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["newUri"],
        json!(client.uri("archetypes/Goblin.json"))
    );
}

/// A buffer over the library's file size limit (4 MiB) is refused as `validate` refuses the
/// file: one `too-large` error, and nothing read from it.
#[test]
fn lsp_refuses_a_buffer_over_the_file_size_limit_as_validate_does() {
    let project = project();
    let mut client = Client::initialized(&project);
    let start = "{\"components\": {\"Helth\": {}, \"Name\": \"";
    let padding = 4 * 1024 * 1024 + 1 - start.len() - 3;
    let text = format!("{start}{}\"}}}}", "a".repeat(padding));
    assert_eq!(text.len(), 4 * 1024 * 1024 + 1);
    client.open("archetypes/goblin.json", &text);
    assert_eq!(
        client.diagnostics("archetypes/goblin.json")["diagnostics"],
        json!([{
            "range": range(0, 0, 0, 0),
            "severity": 1,
            "code": "too-large",
            "source": "archetool",
            "message": "file is 4194305 bytes, over the limit of 4194304 bytes"
        }])
    );
    project.write("archetypes/goblin.json", &text);
    let validated = super::run_in(project.dir.path(), &["validate", "--format", "json"]);
    assert!(
        validated
            .stdout
            .contains("\"message\":\"file is 4194305 bytes, over the limit of 4194304 bytes\""),
        "{}",
        validated.stdout
    );
}
