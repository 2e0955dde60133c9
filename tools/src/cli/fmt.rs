//! `archetool fmt`: every archetype file in one canonical layout, so diffs show changes of
//! content, never of style.
//!
//! The canonical form:
//! - two-space indentation, `"key": value`, a newline at the end (`\n` line endings, no
//!   byte-order mark);
//! - top-level keys in the format's order: `$schema`, `format`, `abstract`, `formerly`,
//!   `extends`, `components`, `children`
//!   ([`keys::TOP_LEVEL`](archetype_engine::keys::TOP_LEVEL)); in child entries `archetype`,
//!   `formerly`, `components`, `children`
//!   ([`keys::CHILD`](archetype_engine::keys::CHILD)); keys the format does not know (the
//!   loader reports them) after those;
//! - every other object's keys (component names, the fields inside component values, child
//!   names) sorted by Unicode code point, which for ASCII names is alphabetical with capitals
//!   first, the order the engine itself uses; except that a vector written as an object of its
//!   axes (every key one of `x y z w`, or of `r g b a`) keeps axis order, as its array has;
//! - the file's structure (the top level, `components`, `children`, child entries) one member
//!   per line, so adding a component or a child is a one-line change;
//! - elsewhere (component values, and anything inside them), short values on one line when
//!   the line, with the comma that may follow, fits in 100 columns: an array of scalars
//!   (`[0, 1, 0]`), or an object whose members are all scalars or such arrays
//!   (`"Health": { "current": 12, "max": 12 }`, with a space inside the braces). `{}` and `[]`
//!   count as scalars. Anything else, or anything longer, one member or element per line;
//! - strings and numbers exactly as written: `1.0` stays `1.0`, `1e3` stays `1e3`, `"\u00e9"`
//!   stays `"\u00e9"`. Only whitespace and the order of object keys change.
//!
//! None of that changes what a file means: objects are unordered, and arrays keep their order.
//! Each formatted text is parsed again and compared with the original before it is written.
//! Formatting is idempotent.
//!
//! Files that are not JSON (or not UTF-8, or too large) are reported and left untouched; they
//! make the exit code 1. A symbolic link (inside the root, as the library requires) stays a
//! link: its target is formatted.

use archetype_engine::tooling::read_regular_file;
use clap::Args;
use serde_json::Value;

use super::raw_json::{self, line_column, to_canonical_string, Layout};
use super::{
    count, rewritable_sources, write_atomically, CliError, Context, DirArg, Exit, Rewrites,
};

/// Arguments of `archetool fmt`.
#[derive(Clone, Debug, Args)]
pub struct FmtArgs {
    /// Only list the files that are not formatted (exit code 1 if any); change nothing.
    #[arg(long)]
    pub check: bool,
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
}

/// Formats every archetype file under `--dir` in place (atomically), or with `--check` lists
/// those that are not formatted. When every file is formatted already, says so in one line
/// (`12 files checked, all formatted`).
///
/// # Errors
/// If the directory does not exist, or a file cannot be written.
pub fn fmt(args: &FmtArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let (sources, unreadable) = rewritable_sources(&library);
    let files = sources.len() + unreadable.len();
    let mut tally = Rewrites::starting_with(&unreadable, context.out)?;
    for source in sources {
        let formatted = match format_text(source.text) {
            Ok(formatted) => formatted,
            Err(message) => {
                writeln!(context.out, "{}:{message}", source.file.display())?;
                tally.problems += 1;
                continue;
            }
        };
        // Compare with the bytes on disk: a byte-order mark or `\r\n` is a difference too.
        let limit = library.options().limits.max_file_bytes;
        let on_disk = read_regular_file(source.real, limit).map_err(|error| {
            CliError::io(format!("cannot read `{}`", source.file.display()), error)
        })?;
        if on_disk == formatted.as_bytes() {
            continue;
        }
        tally.changed += 1;
        if args.check {
            writeln!(context.out, "{}", source.file.display())?;
        } else {
            // The file the library read: through a symbolic link, its target (the link stays).
            write_atomically(source.real, formatted.as_bytes())?;
            writeln!(context.out, "formatted {}", source.file.display())?;
        }
    }
    if args.check && tally.changed > 0 {
        writeln!(
            context.out,
            "{} not formatted; run `archetool fmt` to format {}",
            count(tally.changed, "file"),
            tally.them()
        )?;
    }
    if tally.all_done() {
        writeln!(
            context.out,
            "{} checked, all formatted",
            count(files, "file")
        )?;
    }
    Ok(tally.exit(args.check))
}

/// The canonical form of an archetype file's text.
///
/// # Errors
/// `line:column: error[code]: message` if the text is not JSON (without duplicate keys), or if
/// formatting would change its meaning (a bug; the file is then left alone).
pub fn format_text(text: &str) -> Result<String, String> {
    let node = raw_json::parse(text).map_err(|error| {
        let (line, column) = line_column(text, error.offset);
        format!("{line}:{column}: error[syntax]: {}", error.message)
    })?;
    let formatted = to_canonical_string(&node, Layout::Archetype);
    let before: Result<Value, _> = serde_json::from_str(text);
    let after: Result<Value, _> = serde_json::from_str(&formatted);
    match (before, after) {
        (Ok(before), Ok(after)) if before == after => Ok(formatted),
        _ => Err(
            "1:1: error[internal]: formatting would change the file's meaning; left as is (please report this)"
                .to_string(),
        ),
    }
}
