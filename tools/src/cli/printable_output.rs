//! [`PrintableOutput`]: everything `archetool` prints goes through it, so no text taken from a
//! file (a key, a name, a line of a snippet) reaches the terminal with its control characters.

use std::io::{self, Write};

use archetype_engine::printable;

use super::style::{take_style, RESET};

/// A writer that writes text with its control characters escaped ([`printable`]), except the
/// line breaks that end the lines written; `\r` is escaped too, so no line can overwrite
/// another. Bytes that are not UTF-8 are written as U+FFFD.
pub(crate) struct PrintableOutput<'a> {
    inner: &'a mut dyn Write,
    /// The start of a character split between two writes.
    pending: Vec<u8>,
}

impl<'a> PrintableOutput<'a> {
    pub(crate) fn new(inner: &'a mut dyn Write) -> Self {
        PrintableOutput {
            inner,
            pending: Vec::new(),
        }
    }

    fn write_text(&mut self, text: &str) -> io::Result<()> {
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.inner.write_all(b"\n")?;
            }
            self.inner.write_all(printable(line).as_bytes())?;
        }
        Ok(())
    }
}

impl Write for PrintableOutput<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // A write `style::paint` styled: the text (escaped as any) between the style's code
        // and a reset. Nothing else can put a code on the terminal.
        if let Some(style) = take_style() {
            self.inner.write_all(style.code())?;
            let written = self.write_unstyled(buf);
            self.inner.write_all(RESET)?;
            return written;
        }
        self.write_unstyled(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.write_text("\u{fffd}")?;
        }
        self.inner.flush()
    }
}

impl PrintableOutput<'_> {
    fn write_unstyled(&mut self, buf: &[u8]) -> io::Result<usize> {
        let joined;
        let mut rest = if self.pending.is_empty() {
            buf
        } else {
            joined = [std::mem::take(&mut self.pending).as_slice(), buf].concat();
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.write_text(text)?;
                    return Ok(buf.len());
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    self.write_text(std::str::from_utf8(valid).unwrap_or_default())?;
                    let Some(bad) = error.error_len() else {
                        // A character cut in two: its start waits for the next write.
                        self.pending = after.to_vec();
                        return Ok(buf.len());
                    };
                    self.write_text("\u{fffd}")?;
                    rest = after.get(bad..).unwrap_or_default();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(writes: &[&[u8]]) -> String {
        let mut bytes = Vec::new();
        let mut out = PrintableOutput::new(&mut bytes);
        for write in writes {
            out.write_all(write).expect("to a vector");
        }
        out.flush().expect("to a vector");
        String::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn control_characters_are_escaped_and_lines_kept() {
        let key = "\u{1b}]0;pwned\u{7}\u{1b}[2J";
        let text = format!("+ {key}: 1\r\n\tnext é 😀\n");
        assert_eq!(
            written(&[text.as_bytes()]),
            "+ \\u{1b}]0;pwned\\u{7}\\u{1b}[2J: 1\\r\n\tnext é 😀\n"
        );
    }

    #[test]
    fn characters_split_between_writes_are_joined() {
        let csi = "\u{9b}".as_bytes();
        let smile = "😀".as_bytes();
        let writes: [&[u8]; 5] = [b"a", &csi[..1], &csi[1..], &smile[..2], &smile[2..]];
        assert_eq!(written(&writes), "a\\u{9b}😀");
        assert_eq!(
            written(&[b"x\xff\x9by", &smile[..1]]),
            "x\u{fffd}\u{fffd}y\u{fffd}"
        );
    }
}
