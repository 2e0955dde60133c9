//! `archetool lsp` given input that is not a well-formed message frame, through the built
//! binary: a length over the limit, a malformed header, input that ends inside a message. Each
//! ends the server with one log line on standard error naming what was wrong and exit code 2,
//! without waiting for more input; a body is read as it arrives, so a large length costs no
//! memory until its bytes come.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::Project;

/// How long the server may take to exit after what ends it (the test kills it after this and
/// fails: a server that hangs is the bug).
const WAIT: Duration = Duration::from_secs(10);

/// `archetool lsp` (with `args`) running in an empty project, its standard error captured.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    _project: Project,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let project = Project::empty();
        let mut child = Command::new(env!("CARGO_BIN_EXE_archetool"))
            .arg("lsp")
            .args(args)
            .current_dir(project.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            _project: project,
        }
    }

    /// Writes `bytes` to the server's input (a write the server no longer reads is ignored:
    /// it may have stopped already, which is what the tests check).
    fn send(&mut self, bytes: &[u8]) {
        if let Some(stdin) = &mut self.stdin {
            let _ = stdin.write_all(bytes).and_then(|()| stdin.flush());
        }
    }

    /// Closes the server's input.
    fn close(&mut self) {
        self.stdin = None;
    }

    /// The server's peak resident set (`VmHWM`), in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status
            .lines()
            .find(|line| line.starts_with("VmHWM:"))
            .unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Waits for the server to exit on its own (its input left open); returns its exit code
    /// and what it wrote on standard error. Kills it and fails the test after [`WAIT`].
    fn exit(mut self) -> (Option<i32>, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the server did not exit within {WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut log = String::new();
        let mut stderr = self.child.stderr.take().unwrap();
        stderr.read_to_string(&mut log).unwrap();
        (status.code(), log)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the server logs and exits with after `input` (its input left open).
fn ends_with(args: &[&str], input: &[u8]) -> (Option<i32>, String) {
    let mut server = Server::start(args);
    server.send(input);
    server.exit()
}

/// The log line a frame the server cannot read ends it with.
fn cannot_read(reason: &str) -> (Option<i32>, String) {
    (
        Some(2),
        format!("archetool lsp: cannot read a message: {reason}\n"),
    )
}

/// A length over the limit (64 MiB by default) is refused from its header, before any of its
/// body: the server neither allocates it nor waits for it.
#[test]
fn lsp_refuses_a_length_over_the_limit_from_its_header() {
    for length in [
        "1099511627776",
        "18446744073709551615",
        "2000000000",
        "67108865",
    ] {
        let header = format!("Content-Length: {length}\r\n\r\n");
        assert_eq!(
            ends_with(&[], header.as_bytes()),
            cannot_read(&format!(
                "its Content-Length, {length} bytes, is over the limit of 67108864 bytes (--max-message-bytes)"
            )),
            "{length}"
        );
    }
    // A length past every integer type is over the limit too, not a number it cannot read.
    let huge = "9".repeat(100);
    assert_eq!(
        ends_with(&[], format!("Content-Length: {huge}\r\n\r\n").as_bytes()),
        cannot_read(&format!(
            "its Content-Length, {huge} bytes, is over the limit of 67108864 bytes (--max-message-bytes)"
        ))
    );
}

/// Headers that do not read as `Name: value` lines ending in CRLF, and a length that is not a
/// number or is missing, end the server: after them it cannot know where the next message
/// starts.
#[test]
fn lsp_refuses_a_malformed_header() {
    let long = format!("X-Padding: {}\r\n", "x".repeat(2000));
    let many = "X-Padding: x\r\n".repeat(40);
    let cases: [(&str, &str); 9] = [
        (
            "Content-Length: 2\n\n{}",
            "header line `Content-Length: 2` does not end with CRLF (`\\r\\n`)",
        ),
        (
            "Content-Length 2\r\n\r\n{}",
            "header line `Content-Length 2` has no `:`",
        ),
        (
            "Content-Length: two\r\n\r\n{}",
            "Content-Length `two` is not a number of bytes",
        ),
        (
            "Content-Length: -2\r\n\r\n{}",
            "Content-Length `-2` is not a number of bytes",
        ),
        (
            "Content-Length: \r\n\r\n{}",
            "Content-Length `` is not a number of bytes",
        ),
        (
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
            "a message's headers have no Content-Length",
        ),
        (
            "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "a message's headers have a second Content-Length",
        ),
        (&long, "a header line is longer than 1024 bytes"),
        (&many, "a message has more than 32 header lines"),
    ];
    for (input, reason) in cases {
        assert_eq!(
            ends_with(&[], input.as_bytes()),
            cannot_read(reason),
            "{input:?}"
        );
    }
}

/// Input that ends inside a message (in its headers, or before its body's last byte) ends the
/// server with a line saying so; input that ends between messages ends it without one.
#[test]
fn lsp_says_where_its_input_ended_inside_a_message() {
    let cases: [(&str, Option<&str>); 4] = [
        ("", None),
        (
            "Content-Length: 10",
            Some("the input ended inside a message's headers"),
        ),
        (
            "Content-Length: 10\r\n",
            Some("the input ended inside a message's headers"),
        ),
        (
            "Content-Length: 10\r\n\r\n{\"a\"",
            Some("the input ended after 4 of a message's 10 bytes"),
        ),
    ];
    for (input, reason) in cases {
        let mut server = Server::start(&[]);
        server.send(input.as_bytes());
        server.close();
        let expected = match reason {
            Some(reason) => cannot_read(reason),
            // No `shutdown` came first: the protocol's exit code for that is this command's 2.
            None => (Some(2), String::new()),
        };
        assert_eq!(server.exit(), expected, "{input:?}");
    }
}

/// Announces a body of `length` bytes to a server started with `args` and sends a megabyte of
/// it; returns the server's peak resident set (KiB) while it waits for the rest. Then ends the
/// input, and checks the server says how much came.
fn peak_waiting_for(args: &[&str], length: u64) -> u64 {
    let mut server = Server::start(args);
    server.send(format!("Content-Length: {length}\r\n\r\n").as_bytes());
    server.send(&vec![b' '; 1 << 20]);
    // Long enough for a server that allocates the length on reading the header to have done
    // so (the old one made 2,000,000,000 bytes 1.96 GB at once).
    std::thread::sleep(Duration::from_millis(500));
    let peak = server.peak_kib();
    server.close();
    assert_eq!(
        server.exit(),
        cannot_read(&format!(
            "the input ended after 1048576 of a message's {length} bytes"
        ))
    );
    peak
}

/// A message under the limit is read as its bytes arrive: with a length of 2,000,000,000 (the
/// limit raised over it) and a megabyte of its body sent, the server's peak memory stays
/// small.
#[test]
fn lsp_reads_a_body_as_it_arrives_without_allocating_its_length() {
    let peak = peak_waiting_for(&["--max-message-bytes", "4000000000"], 2_000_000_000);
    assert!(peak < 64 * 1024, "peak resident set {peak} KiB");
}

/// The same under the default limit: a 60,000,000-byte message announced, a megabyte sent.
#[test]
fn lsp_waits_for_a_body_under_the_default_limit_in_little_memory() {
    let peak = peak_waiting_for(&[], 60_000_000);
    assert!(peak < 40 * 1024, "peak resident set {peak} KiB");
}

/// One message framed as a client frames it.
fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// `--max-message-bytes` sets the limit: a message one byte over it is refused, one under it
/// is read (a body that is not JSON-RPC is skipped with a line saying so, and the server reads
/// on).
#[test]
fn lsp_max_message_bytes_sets_the_limit() {
    let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
    assert_eq!(exit.len(), 33);
    let mut input = frame("{ not j }");
    input.extend(frame(exit));
    assert_eq!(
        ends_with(&["--max-message-bytes", "33"], &input),
        (
            Some(2),
            "archetool lsp: ignored a message that is not JSON-RPC: key must be a string at line 1 column 3\n"
                .to_string()
        )
    );
    assert_eq!(
        ends_with(&["--max-message-bytes", "32"], &frame(exit)),
        cannot_read(
            "its Content-Length, 33 bytes, is over the limit of 32 bytes (--max-message-bytes)"
        )
    );
}
