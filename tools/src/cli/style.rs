//! Colour in `archetool`'s reports for people: `--color auto|always|never`.
//!
//! Everything printed goes through `PrintableOutput`, which escapes
//! control characters, so no file can drive the terminal; colour codes are control sequences
//! too. A report asks for colour out of band: `paint` marks the one write that follows as
//! styled (a thread-local slot, set only by this module), and the output writes that text
//! between the style's code and a reset. Text from a file cannot set the slot, so it never
//! gets a colour code through; it is escaped as always.

use std::cell::Cell;
use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;

/// When reports are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When standard output is a terminal and `NO_COLOR` is not set (or empty).
    #[default]
    Auto,
    /// Always, even with `NO_COLOR` (an explicit flag wins over the environment).
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether this choice colours, given the environment.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
                !no_color && io::stdout().is_terminal()
            }
        }
    }
}

/// A part of a report that can be coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// `error[code]` and the underline of an error.
    Error,
    /// `warning[code]` and the underline of a warning.
    Warning,
    /// The message on the first line of a report.
    Emphasis,
    /// Line numbers and the `|` border of a snippet.
    Gutter,
    /// `help`.
    Help,
}

impl Style {
    /// The style's Select Graphic Rendition code.
    pub(crate) fn code(self) -> &'static [u8] {
        match self {
            Style::Error => b"\x1b[1;31m",
            Style::Warning => b"\x1b[1;33m",
            Style::Emphasis => b"\x1b[1m",
            Style::Gutter => b"\x1b[1;34m",
            Style::Help => b"\x1b[1;36m",
        }
    }
}

/// Ends a style.
pub(crate) const RESET: &[u8] = b"\x1b[0m";

thread_local! {
    /// Whether the command running on this thread colours (set by `run`).
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    /// The style of the next write, set by [`paint`] only.
    static NEXT: Cell<Option<Style>> = const { Cell::new(None) };
}

/// Colours this thread's reports (or not) until the guard is dropped.
pub(crate) struct ColourGuard(bool);

impl ColourGuard {
    pub(crate) fn set(enabled: bool) -> Self {
        ColourGuard(ENABLED.with(|cell| cell.replace(enabled)))
    }
}

impl Drop for ColourGuard {
    fn drop(&mut self) {
        ENABLED.with(|cell| cell.set(self.0));
    }
}

/// Writes `text` to `out` in `style` when colour is on (plainly otherwise).
pub(crate) fn paint(out: &mut dyn Write, style: Style, text: &str) -> io::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    if ENABLED.with(Cell::get) {
        NEXT.with(|next| next.set(Some(style)));
    }
    let written = out.write_all(text.as_bytes());
    NEXT.with(|next| next.set(None));
    written
}

/// The style [`paint`] asked for the write being made, taken (so only that write has it).
pub(crate) fn take_style() -> Option<Style> {
    NEXT.with(Cell::take)
}
