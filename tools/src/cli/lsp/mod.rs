//! `archetool lsp`: a language server for archetype and scene files, over standard input and
//! output, so any editor with a Language Server Protocol client gets the engine's own checks
//! while a designer types.
//!
//! The server holds one [`ArchetypeLibrary`](archetype_engine::ArchetypeLibrary), loaded once
//! from `--dir` (on a thread, after `initialize` is answered, with `$/progress` for a client
//! that shows it); an open buffer's unsaved text is installed in it with `set_sources` (only the
//! file that changed: the library rebuilds its dependants, and no other file is read again),
//! and every answer comes from it. Closing a buffer, and files the editor creates, moves or
//! deletes (a rename's move), read those files from disk again. Nothing here checks, formats
//! or resolves on its own: the
//! diagnostics are `validate`'s, the scene problems `scene check`'s, the layout `fmt`'s, the
//! provenance `inspect`'s.
//!
//! The files:
//! - `framing.rs`: the messages read from the input (JSON-RPC framed by `Content-Length`
//!   headers) within bounds: header lines bounded in length and number, a body over the limit
//!   refused from its header and any other read as it arrives; a frame it cannot read ends
//!   the session with a line saying why;
//! - `server.rs`: the message loop (on the calling thread, the frames read ahead by a
//!   thread of their own, so a buffer's superseded versions are skipped and diagnostics are
//!   published for the newest), the initialize and shutdown handshake, and the dispatch of each request and notification to the file that answers it
//!   (a panic answering one costs that answer, not the session);
//! - `documents.rs`: the open buffers, which file a URI is (an archetype under the root, a
//!   scene, or neither), and positions between the protocol's (UTF-16) and byte offsets;
//! - `diagnostics.rs`: the library's diagnostics and the open scenes' problems as the
//!   protocol's, and which files to publish them for (every file that has some; an empty list
//!   for a file whose problems went away);
//! - `pull.rs`: the same lists for a client that pulls them (`textDocument/diagnostic`,
//!   `workspace/diagnostic`, with result IDs), pushed to no such client;
//! - `cursor.rs`: where in a JSON text a position is (the keys leading to it, and the key or
//!   value under it), read tolerantly, as a buffer being typed is often not JSON;
//! - `component_schema.rs`: a component's fields, enum variants and doc comments, and which of
//!   its fields name archetypes (`ArchetypeRef`), entities (`EntityRef`) or files under the
//!   assets root (`AssetPath`), from the registry's JSON Schemas;
//! - `completion.rs`: component, field, variant, key and archetype names, `#child` paths;
//! - `hover.rs`: a component's or field's resolved value, the file that supplied it, its Rust
//!   type and doc comment; an archetype name's file and parents;
//! - `navigation.rs`: go to definition (of archetypes and `#child` references), find
//!   references and rename of archetypes, document links (to archetypes and to assets);
//! - `edits.rs`: formatting and the quick fixes of diagnostics that carry a suggestion;
//! - `watch.rs`: changes made outside the editor, for a client that does not watch files for
//!   the server: the engine's watcher on the root, its changes handed to the loop as a
//!   watching client's `workspace/didChangeWatchedFiles`.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use archetype_engine::ComponentRegistry;
use clap::Args;

use super::{DirArg, Exit};

mod completion;
mod component_schema;
mod cursor;
mod diagnostics;
mod documents;
mod edits;
pub mod framing;
mod hover;
mod navigation;
mod pull;
mod server;
mod watch;

/// Arguments of `archetool lsp`.
#[derive(Clone, Debug, Args)]
pub struct LspArgs {
    /// The archetypes root. A relative path is taken from the editor's workspace folder when
    /// it has one there, else from the current directory.
    #[command(flatten)]
    pub dir: DirArg,
    /// Where scene files are searched for references to archetypes (and rewritten by a
    /// rename), relative like `--dir`.
    #[arg(long, value_name = "DIR", default_value = super::migrate::DEFAULT_SCENES_DIR)]
    pub scenes: PathBuf,
    /// The largest message read, in bytes. A longer one ends the session (exit code 2), refused
    /// from its header before any of its body is read.
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = framing::DEFAULT_MAX_MESSAGE_BYTES,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_message_bytes: u64,
}

/// Serves the protocol: messages are read from `input` and written to `output` until the
/// client sends `exit` (or closes `input`); what the server has to say outside the protocol
/// (a message it skips, a frame it cannot read) goes to `log`, a line each.
///
/// Exit code 0 after `shutdown` then `exit`; 2 otherwise, and when the input is not framed as
/// the protocol says or holds a message over `--max-message-bytes` (the protocol asks for 1;
/// 2 is this command line's code for an I/O error).
pub fn serve(
    args: &LspArgs,
    registry: ComponentRegistry,
    input: Box<dyn BufRead + Send>,
    output: &mut dyn Write,
    log: &mut dyn Write,
) -> Exit {
    server::Server::new(args.clone(), registry, output, log).run(input)
}
