//! The language server's workload: how long after an edit of an open buffer its diagnostics
//! arrive, in the load workload's tree of generated archetype files ([`LoadFixture`]).
//!
//! The server (`archetool::cli::lsp::serve`, with the demo's components) runs on a thread of
//! this process, over pipes, exactly as `archetool lsp` runs over stdio. The buffer is a
//! mid-level archetype that 1% of the tree (100 archetypes of 10,000) extends; each edit
//! alternately writes a component name wrong (an error in it, and its dependants held back)
//! and right again (every problem cleared). A sample runs from the `didChange` written to the
//! `publishDiagnostics` for the buffer read. The first two edits are not measured: the first
//! edit after the buffer opens takes about twice as long as the rest (56 ms against 22–35 ms
//! here), as the first round of every quick figure would.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification};
use serde_json::{json, Value};

use crate::bench::load::{mid_path, LoadFixture};
use crate::cli::lsp::framing::DEFAULT_MAX_MESSAGE_BYTES;
use crate::cli::lsp::{serve, LspArgs};
use crate::cli::DirArg;
use crate::demo::components;

/// Edits made before the measured ones.
const WARM_UP: usize = 2;

/// The latency of each of `edits` edits in a library of `files` generated archetype files.
///
/// # Errors
/// If the server stops answering or publishes nothing for the buffer (a bug).
pub fn diagnostics_after_edit(files: usize, edits: usize) -> Result<Vec<Duration>, String> {
    let fixture = LoadFixture::generate(files);
    let root = std::fs::canonicalize(fixture.root()).map_err(|e| e.to_string())?;
    let args = LspArgs {
        dir: DirArg { dir: root.clone() },
        scenes: root.join("no-scenes"),
        max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
    };
    let (server_in, mut to_server) = io::pipe().map_err(|e| e.to_string())?;
    let (from_server, server_out) = io::pipe().map_err(|e| e.to_string())?;
    let server = thread::spawn(move || {
        let mut input = BufReader::new(server_in);
        let mut output = server_out;
        serve(
            &args,
            components::registry(),
            &mut input,
            &mut output,
            &mut io::sink(),
        )
    });
    let mut from_server = BufReader::new(from_server);
    let mut send = |method: &str, id: Option<i32>, params: Value| -> Result<(), String> {
        let message = match id {
            Some(id) => {
                Message::Request(lsp_server::Request::new(id.into(), method.into(), params))
            }
            None => Message::Notification(Notification::new(method.into(), params)),
        };
        message.write(&mut to_server).map_err(|e| e.to_string())?;
        to_server.flush().map_err(|e| e.to_string())
    };
    let file: PathBuf = root.join(mid_path(0));
    let uri = format!("file://{}", file.display());
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let broken = text.replacen("\"Health\"", "\"Helth\"", 1);
    if broken == text {
        return Err("bench setup: the mid-level archetype has no `Health`".to_string());
    }
    send("initialize", Some(1), json!({ "capabilities": {} }))?;
    send("initialized", None, json!({}))?;
    let open =
        json!({ "textDocument": { "uri": uri, "languageId": "json", "version": 1, "text": text } });
    send("textDocument/didOpen", None, open)?;
    let mut samples = Vec::with_capacity(edits);
    // The answer to `initialize` comes once the library is loaded.
    loop {
        match Message::read(&mut from_server).map_err(|e| e.to_string())? {
            Some(Message::Response(_)) => break,
            Some(_) => {}
            None => return Err("the server stopped".to_string()),
        }
    }
    for version in 0..edits + WARM_UP {
        let text = if version % 2 == 0 { &broken } else { &text };
        let change = json!({
            "textDocument": { "uri": uri, "version": version + 2 },
            "contentChanges": [{ "text": text }]
        });
        let start = Instant::now();
        send("textDocument/didChange", None, change)?;
        diagnostics_for(&mut from_server, &uri)?;
        // The first two edits (one break, one fix) warm the server up, unmeasured, as every
        // quick figure's first round is.
        if version >= WARM_UP {
            samples.push(start.elapsed());
        }
    }
    send("shutdown", Some(2), Value::Null)?;
    send("exit", None, Value::Null)?;
    let _ = server.join();
    Ok(samples)
}

/// Reads messages until the diagnostics published for `uri`.
fn diagnostics_for(from_server: &mut impl BufRead, uri: &str) -> Result<(), String> {
    loop {
        match Message::read(from_server) {
            Ok(Some(Message::Notification(n))) if n.method == "textDocument/publishDiagnostics" => {
                if n.params["uri"] == uri {
                    return Ok(());
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => return Err("the server stopped".to_string()),
            Err(error) => return Err(error.to_string()),
        }
    }
}
