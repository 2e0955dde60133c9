//! [`Pretty`]: serde_json's pretty printer (two-space indent) able to start at a nesting depth,
//! so that a value written on its own lines up with the document around it (scene files write
//! each component value this way).

use std::io;

use serde_json::ser::Formatter;

/// serde_json's pretty printer (two-space indent), but able to start at a nesting depth, so a
/// value written on its own lines up with the document around it.
pub(crate) struct Pretty {
    current_indent: usize,
    has_value: bool,
}

impl Pretty {
    /// A printer for a value that sits `depth` levels deep.
    pub fn at(depth: usize) -> Self {
        Pretty {
            current_indent: depth,
            has_value: false,
        }
    }
}

/// A comma, a line break and indentation for up to 32 levels: each new line is written with
/// one call, not one per level.
const LINE: &[u8; 66] = b",\n                                                                ";

/// A line break (after a comma if `comma`) and the indentation of `depth` levels.
fn new_line<W: ?Sized + io::Write>(writer: &mut W, comma: bool, depth: usize) -> io::Result<()> {
    let start = usize::from(!comma);
    let spaces = 2 * depth;
    match LINE.get(start..2 + spaces) {
        Some(line) => writer.write_all(line),
        None => {
            writer.write_all(&LINE[start..2])?;
            for _ in 0..depth {
                writer.write_all(b"  ")?;
            }
            Ok(())
        }
    }
}

impl Pretty {
    fn open<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.current_indent += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.current_indent -= 1;
        if self.has_value {
            new_line(writer, false, self.current_indent)?;
        }
        writer.write_all(bracket)
    }

    fn next_line<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        new_line(writer, !first, self.current_indent)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.next_line(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.next_line(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
