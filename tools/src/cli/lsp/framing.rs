//! The protocol's framing, read within bounds: each message is header lines (`Name: value`,
//! each ended by CRLF; `Content-Length` is required), an empty line, then a body of exactly
//! `Content-Length` bytes holding one JSON-RPC message.
//!
//! What a client sends bounds nothing here: a header line is at most
//! [`MAX_HEADER_LINE_BYTES`] long, a message has at most [`MAX_HEADER_LINES`] of them, and a body
//! over the reader's limit (`archetool lsp --max-message-bytes`, [`DEFAULT_MAX_MESSAGE_BYTES`]
//! by default) is refused from its header, before any of it is read. A body is read as its bytes
//! arrive, its buffer growing with them: a length announced costs no memory until its bytes
//! come. After a frame that breaks these rules the reader cannot know where the next message
//! starts, so each is a [`FrameError`] that ends the session; a body framed correctly that is
//! not JSON-RPC is only that message's problem ([`Frame::NotJsonRpc`]).
//!
//! [`write_message`] frames what the server sends.

use std::fmt;
use std::io::{self, BufRead, Write};

use archetype_engine::printable;
use lsp_server::Message;
use serde::Serialize;

/// The largest message body read unless `--max-message-bytes` says otherwise: 64 MiB (a buffer
/// of an archetype file sixteen times over the library's own file size limit).
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// The longest header line, its CRLF included (the protocol's two headers take under 60).
pub const MAX_HEADER_LINE_BYTES: usize = 1024;

/// The most header lines one message may have, the empty line that ends them not counted.
pub const MAX_HEADER_LINES: usize = 32;

/// What one frame of the input held.
#[derive(Debug)]
pub enum Frame {
    /// A JSON-RPC message.
    Message(Message),
    /// A body framed correctly that is not a JSON-RPC message, and why (the next frame can
    /// still be read).
    NotJsonRpc(serde_json::Error),
}

/// Why the input cannot be read as messages: after any of these, where the next message
/// starts is unknown.
#[derive(Debug)]
#[non_exhaustive]
pub enum FrameError {
    /// A header line longer than [`MAX_HEADER_LINE_BYTES`].
    LineTooLong,
    /// More than [`MAX_HEADER_LINES`] header lines.
    TooManyHeaders,
    /// A header line ended by a bare line feed (shown without it).
    NoCrlf {
        /// The line.
        line: String,
    },
    /// A header line that is not `Name: value`.
    NoColon {
        /// The line.
        line: String,
    },
    /// A `Content-Length` that is not a decimal number.
    BadLength {
        /// The value as written.
        value: String,
    },
    /// A second `Content-Length` in one message's headers.
    SecondLength,
    /// Headers without `Content-Length`.
    MissingLength,
    /// A `Content-Length` over the limit.
    TooLarge {
        /// The length as written (digits, possibly more than any integer holds).
        length: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The input ended inside a message's headers.
    HeadersCutShort,
    /// The input ended inside a message's body.
    BodyCutShort {
        /// The bytes of the body that came.
        received: u64,
        /// Its length.
        length: u64,
    },
    /// Reading the input failed.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::LineTooLong => write!(
                f,
                "a header line is longer than {MAX_HEADER_LINE_BYTES} bytes"
            ),
            FrameError::TooManyHeaders => {
                write!(f, "a message has more than {MAX_HEADER_LINES} header lines")
            }
            FrameError::NoCrlf { line } => {
                write!(f, "header line `{line}` does not end with CRLF (`\\r\\n`)")
            }
            FrameError::NoColon { line } => write!(f, "header line `{line}` has no `:`"),
            FrameError::BadLength { value } => {
                write!(f, "Content-Length `{value}` is not a number of bytes")
            }
            FrameError::SecondLength => {
                f.write_str("a message's headers have a second Content-Length")
            }
            FrameError::MissingLength => f.write_str("a message's headers have no Content-Length"),
            FrameError::TooLarge { length, limit } => write!(
                f,
                "its Content-Length, {length} bytes, is over the limit of {limit} bytes (--max-message-bytes)"
            ),
            FrameError::HeadersCutShort => f.write_str("the input ended inside a message's headers"),
            FrameError::BodyCutShort { received, length } => write!(
                f,
                "the input ended after {received} of a message's {length} bytes"
            ),
            FrameError::Io(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Reads framed messages from `input`, each body at most `max_body` bytes.
pub struct FrameReader<R> {
    input: R,
    max_body: u64,
}

impl<R: BufRead> FrameReader<R> {
    /// A reader of `input` refusing bodies over `max_body` bytes.
    pub fn new(input: R, max_body: u64) -> Self {
        FrameReader { input, max_body }
    }

    /// The next frame, `None` at the end of the input between messages.
    ///
    /// # Errors
    /// A [`FrameError`] when the input is not a well-formed frame within the limits, or cannot
    /// be read.
    pub fn read(&mut self) -> Result<Option<Frame>, FrameError> {
        let Some(body) = self.read_body()? else {
            return Ok(None);
        };
        Ok(Some(match serde_json::from_slice::<Message>(&body) {
            Ok(message) => Frame::Message(message),
            Err(error) => Frame::NotJsonRpc(error),
        }))
    }

    /// The next frame's body, `None` at the end of the input between messages.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_body(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(length) = self.read_headers()? else {
            return Ok(None);
        };
        self.read_exactly(length).map(Some)
    }

    /// Reads the headers of the next message; returns its body's length, or `None` if the
    /// input ends before them.
    fn read_headers(&mut self) -> Result<Option<u64>, FrameError> {
        let mut length = None;
        let mut line = Vec::with_capacity(64);
        for index in 0..=MAX_HEADER_LINES {
            line.clear();
            if !self.read_line(&mut line)? {
                return match index {
                    0 => Ok(None),
                    _ => Err(FrameError::HeadersCutShort),
                };
            }
            let Some(text) = line.strip_suffix(b"\r\n") else {
                let shown = line.strip_suffix(b"\n").unwrap_or(&line);
                return Err(FrameError::NoCrlf {
                    line: shown_text(shown),
                });
            };
            if text.is_empty() {
                return length.map(Some).ok_or(FrameError::MissingLength);
            }
            if index == MAX_HEADER_LINES {
                break;
            }
            if let Some(value) = self.content_length(text)? {
                if length.replace(value).is_some() {
                    return Err(FrameError::SecondLength);
                }
            }
        }
        Err(FrameError::TooManyHeaders)
    }

    /// The length a header line gives, if it is `Content-Length`.
    fn content_length(&self, line: &[u8]) -> Result<Option<u64>, FrameError> {
        let Some(colon) = line.iter().position(|&byte| byte == b':') else {
            return Err(FrameError::NoColon {
                line: shown_text(line),
            });
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if !name.eq_ignore_ascii_case(b"Content-Length") {
            return Ok(None);
        }
        let value = value.trim_ascii();
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Err(FrameError::BadLength {
                value: shown_text(value),
            });
        }
        let too_large = || FrameError::TooLarge {
            length: shown_text(value),
            limit: self.max_body,
        };
        // Digits only: the one way this parse fails is a number past `u64`.
        let length: u64 = (std::str::from_utf8(value).ok())
            .and_then(|digits| digits.parse().ok())
            .ok_or_else(too_large)?;
        if length > self.max_body || usize::try_from(length).is_err() {
            return Err(too_large());
        }
        Ok(Some(length))
    }

    /// Reads one line, its line feed included, into `line`; `false` if the input ended before
    /// any of it.
    fn read_line(&mut self, line: &mut Vec<u8>) -> Result<bool, FrameError> {
        loop {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(FrameError::Io(error)),
            };
            if available.is_empty() {
                return match line.is_empty() {
                    true => Ok(false),
                    false => Err(FrameError::HeadersCutShort),
                };
            }
            let (taken, ended) = match available.iter().position(|&byte| byte == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if line.len() + taken > MAX_HEADER_LINE_BYTES {
                return Err(FrameError::LineTooLong);
            }
            line.extend_from_slice(&available[..taken]);
            self.input.consume(taken);
            if ended {
                return Ok(true);
            }
        }
    }

    /// Reads a body of `length` bytes as they arrive: the buffer grows (doubling, never past
    /// `length`) only as bytes come.
    fn read_exactly(&mut self, length: u64) -> Result<Vec<u8>, FrameError> {
        let mut body: Vec<u8> = Vec::new();
        let length_in_memory = usize::try_from(length).map_err(|_| FrameError::TooLarge {
            length: length.to_string(),
            limit: self.max_body,
        })?;
        while body.len() < length_in_memory {
            let available = match self.input.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(FrameError::Io(error)),
            };
            if available.is_empty() {
                return Err(FrameError::BodyCutShort {
                    received: body.len() as u64,
                    length,
                });
            }
            let taken = available.len().min(length_in_memory - body.len());
            if body.capacity() - body.len() < taken {
                let wanted = (body.capacity() * 2).max(body.len() + taken);
                body.reserve_exact(wanted.min(length_in_memory) - body.len());
            }
            body.extend_from_slice(&available[..taken]);
            self.input.consume(taken);
        }
        Ok(body)
    }
}

/// Writes `message` (a [`Message`], or any value that serializes as one) framed as the
/// protocol says: its JSON, with `"jsonrpc": "2.0"`, after its `Content-Length` header; then
/// flushes `output`. The message is serialized straight to its bytes, through no
/// `serde_json::Value`.
///
/// # Errors
/// If `output` cannot be written (or `message` does not serialize: a bug).
pub fn write_message(output: &mut dyn Write, message: &impl Serialize) -> io::Result<()> {
    #[derive(Serialize)]
    struct JsonRpc<'a, T> {
        jsonrpc: &'static str,
        #[serde(flatten)]
        message: &'a T,
    }
    let body = serde_json::to_vec(&JsonRpc {
        jsonrpc: "2.0",
        message,
    })?;
    write!(output, "Content-Length: {}\r\n\r\n", body.len())?;
    output.write_all(&body)?;
    output.flush()
}

/// Bytes of a header as they may be shown in a log line: as UTF-8 (a byte that is not, as
/// U+FFFD), control characters escaped.
fn shown_text(bytes: &[u8]) -> String {
    printable(&String::from_utf8_lossy(bytes)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every body `input` holds up to the first error, and that error.
    fn bodies(input: &[u8], max_body: u64) -> (Vec<Vec<u8>>, Option<String>) {
        let mut reader = FrameReader::new(input, max_body);
        let mut found = Vec::new();
        loop {
            match reader.read_body() {
                Ok(Some(body)) => found.push(body),
                Ok(None) => return (found, None),
                Err(error) => return (found, Some(error.to_string())),
            }
        }
    }

    #[test]
    fn reads_messages_one_after_another() {
        let input = b"Content-Length: 2\r\ncontent-type: x\r\n\r\n{}content-length:\t3 \r\n\r\n[1]";
        assert_eq!(
            bodies(input, 100),
            (vec![b"{}".to_vec(), b"[1]".to_vec()], None)
        );
        assert_eq!(
            bodies(b"Content-Length: 0\r\n\r\n", 0),
            (vec![Vec::new()], None)
        );
    }

    #[test]
    fn refuses_what_breaks_the_framing() {
        let refused = |input: &[u8]| bodies(input, 10).1;
        assert_eq!(
            refused(b"Content-Length: 11\r\n\r\n"),
            Some(
                "its Content-Length, 11 bytes, is over the limit of 10 bytes (--max-message-bytes)"
                    .to_string()
            )
        );
        assert_eq!(
            refused(b"Content-Length: 1\x1b\r\n\r\n"),
            Some("Content-Length `1\\u{1b}` is not a number of bytes".to_string())
        );
        assert_eq!(
            refused(b"\xffbad\r\n\r\n"),
            Some("header line `\u{fffd}bad` has no `:`".to_string())
        );
        assert_eq!(
            refused(b"Content-Length: 1\r\n"),
            Some("the input ended inside a message's headers".to_string())
        );
    }

    #[test]
    fn a_message_written_reads_back() {
        let message = Message::Notification(lsp_server::Notification::new(
            "exit".to_string(),
            serde_json::json!({ "a": [1] }),
        ));
        let mut written = Vec::new();
        write_message(&mut written, &message).unwrap();
        let body = r#"{"jsonrpc":"2.0","method":"exit","params":{"a":[1]}}"#;
        assert_eq!(
            String::from_utf8(written.clone()).unwrap(),
            format!("Content-Length: {}\r\n\r\n{body}", body.len())
        );
        let read = FrameReader::new(&written[..], 100).read().unwrap();
        assert!(
            matches!(read, Some(Frame::Message(Message::Notification(n))) if n.method == "exit")
        );
    }

    #[test]
    fn a_body_grows_with_its_bytes_never_past_its_length() {
        let body = vec![b'x'; 5000];
        let mut input = b"Content-Length: 5000\r\n\r\n".to_vec();
        input.extend_from_slice(&body);
        // One byte at a time, as a slow pipe gives them.
        let mut reader = FrameReader::new(io::BufReader::with_capacity(1, &input[..]), 10_000);
        let length = reader.read_headers().unwrap().unwrap();
        let read = reader.read_exactly(length).unwrap();
        assert_eq!((read.len(), read.capacity()), (5000, 5000));
        assert_eq!(read, body);
    }
}
