//! HTTP/1.1, as little as the inspector needs and all of it bounded: one request per
//! connection (`Connection: close`), a request head of at most [`MAX_HEAD_BYTES`] with at most
//! [`MAX_HEADERS`] headers, a body only with `Content-Length` and never over the inspector's
//! limit (no chunked bodies), every read and write under the connection's timeouts.

use std::io::{self, Read, Write};

/// Largest request head (request line and headers) read, in bytes.
pub(super) const MAX_HEAD_BYTES: usize = 8 * 1024;
/// Most headers a request may have.
pub(super) const MAX_HEADERS: usize = 64;

/// A request as read: method, path and query (percent-decoded), headers, body.
#[derive(Debug, Default)]
pub(super) struct Request {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Header names in lower case, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first query parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        (self.query.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response: status, content type and body.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response {
            status,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
        }
    }

    /// A JSON error response: `{"error": message}`.
    pub fn error(status: u16, message: impl Into<String>) -> Response {
        Response::json(status, &serde_json::json!({ "error": message.into() }))
    }
}

/// Why a request was not read; each is answered with its status, then the connection closed.
#[derive(Debug)]
pub(super) enum ReadRefused {
    /// The head is not HTTP/1.x, or a header is malformed (400).
    Malformed,
    /// The head is over [`MAX_HEAD_BYTES`] or has over [`MAX_HEADERS`] headers (431).
    HeadTooLarge,
    /// The body is over the limit (413).
    BodyTooLarge,
    /// A body without `Content-Length` (chunked) (411).
    LengthRequired,
    /// The connection failed or timed out.
    Io,
}

impl ReadRefused {
    /// The response saying why, `None` when the connection itself failed.
    pub fn response(&self) -> Option<Response> {
        let (status, message) = match self {
            ReadRefused::Malformed => (400, "malformed request"),
            ReadRefused::HeadTooLarge => (431, "request head too large"),
            ReadRefused::BodyTooLarge => (413, "request body too large"),
            ReadRefused::LengthRequired => (411, "a body needs Content-Length"),
            ReadRefused::Io => return None,
        };
        Some(Response::error(status, message))
    }
}

/// Reads one request from `stream`, with a body of at most `max_body` bytes.
pub(super) fn read_request(
    stream: &mut impl Read,
    max_body: usize,
) -> Result<Request, ReadRefused> {
    let (head, rest) = read_head(stream)?;
    let mut request = parse_head(&head)?;
    if request.header("transfer-encoding").is_some() {
        return Err(ReadRefused::LengthRequired);
    }
    let length = match request.header("content-length") {
        None => 0,
        Some(text) => text.parse::<usize>().map_err(|_| ReadRefused::Malformed)?,
    };
    if length > max_body {
        return Err(ReadRefused::BodyTooLarge);
    }
    let mut body = rest;
    body.truncate(length);
    let missing = length - body.len();
    let mut tail = Vec::with_capacity(missing);
    (stream.take(missing as u64))
        .read_to_end(&mut tail)
        .map_err(|_| ReadRefused::Io)?;
    if tail.len() != missing {
        return Err(ReadRefused::Malformed);
    }
    body.extend(tail);
    request.body = body;
    Ok(request)
}

/// The head (up to the blank line, excluded) and the bytes read after it.
fn read_head(stream: &mut impl Read) -> Result<(Vec<u8>, Vec<u8>), ReadRefused> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = find_blank_line(&buffer) {
            if end > MAX_HEAD_BYTES {
                return Err(ReadRefused::HeadTooLarge);
            }
            let rest = buffer.split_off(end + 4);
            buffer.truncate(end);
            return Ok((buffer, rest));
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err(ReadRefused::HeadTooLarge);
        }
        let read = stream.read(&mut chunk).map_err(|_| ReadRefused::Io)?;
        if read == 0 {
            return Err(ReadRefused::Malformed);
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    bytes.windows(4).position(|w| w == b"\r\n\r\n")
}

/// The request line and headers of `head`.
fn parse_head(head: &[u8]) -> Result<Request, ReadRefused> {
    let head = std::str::from_utf8(head).map_err(|_| ReadRefused::Malformed)?;
    let mut lines = head.split("\r\n");
    let line = lines.next().ok_or(ReadRefused::Malformed)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadRefused::Malformed);
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(ReadRefused::Malformed);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut request = Request {
        method: method.to_string(),
        path: percent_decoded(path).ok_or(ReadRefused::Malformed)?,
        query: parse_query(query).ok_or(ReadRefused::Malformed)?,
        ..Request::default()
    };
    for line in lines {
        if request.headers.len() == MAX_HEADERS {
            return Err(ReadRefused::HeadTooLarge);
        }
        let (name, value) = line.split_once(':').ok_or(ReadRefused::Malformed)?;
        request
            .headers
            .push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(request)
}

/// `a=1&b=x%20y` as pairs, decoded (`+` is a space).
fn parse_query(query: &str) -> Option<Vec<(String, String)>> {
    (query.split('&').filter(|pair| !pair.is_empty()))
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = value.replace('+', " ");
            Some((percent_decoded(name)?, percent_decoded(&value)?))
        })
        .collect()
}

/// `text` with `%XX` escapes decoded; `None` for a bad escape or bytes that are not UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Writes `response` to `stream`, closing the exchange.
pub(super) fn write_response(stream: &mut impl Write, response: &Response) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nConnection: close\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&response.body)?;
    stream.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_request_with_its_query_headers_and_body() {
        let raw =
            b"POST /api/set?id=4&name=a%20b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
        let request = read_request(&mut &raw[..], 10).expect("read");
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/api/set");
        assert_eq!(request.param("name"), Some("a b"));
        assert_eq!(request.header("host"), Some("x"));
        assert_eq!(request.body, b"{}");
    }

    #[test]
    fn refuses_what_is_over_its_bounds() {
        let big = b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n";
        assert!(matches!(
            read_request(&mut &big[..], 10),
            Err(ReadRefused::BodyTooLarge)
        ));
        let chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(
            read_request(&mut &chunked[..], 10),
            Err(ReadRefused::LengthRequired)
        ));
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_HEAD_BYTES + 1));
        assert!(matches!(
            read_request(&mut long.as_bytes(), 10),
            Err(ReadRefused::HeadTooLarge)
        ));
        assert!(matches!(
            read_request(&mut &b"hello\r\n\r\n"[..], 10),
            Err(ReadRefused::Malformed)
        ));
    }
}
