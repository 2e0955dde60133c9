//! `archetool validate`: load every archetype and report every problem, for people (rustc-style,
//! with the source line underlined) or for editors and CI (JSON, one object per line).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use archetype_engine::{ArchetypeLibrary, Diagnostic, Severity};
use clap::{Args, ValueEnum};
use serde::Serialize;

use super::raw_json::value_span_at;
use super::snippet::{snippet, FileLines};
use super::{count, CliError, Context, DirArg, Exit};

/// Arguments of `archetool validate`.
#[derive(Clone, Debug, Args)]
pub struct ValidateArgs {
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
    /// How to report the problems.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
}

/// How `validate` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people: `path:line:col: error[code]: message`, the source line underlined, `help:`.
    Human,
    /// For editors and CI: JSON Lines, one object per problem: file, line, column, severity,
    /// code, message, suggestion, archetype, component, field (null when unknown).
    Json,
}

/// Loads every archetype under `--dir` and prints every problem.
///
/// Exit code: 1 if there is any error (warnings alone do not fail).
///
/// # Errors
/// If the directory does not exist, or the output cannot be written.
pub fn validate(args: &ValidateArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load(&args.dir.dir)?;
    let diagnostics = library.diagnostics();
    match args.format {
        OutputFormat::Human => {
            let sources = SourceTexts::of(&library);
            for diagnostic in diagnostics {
                write_human(context.out, diagnostic, &sources)?;
                writeln!(context.out)?;
            }
            let errors = library.error_count();
            let notes = diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Note)
                .count();
            write!(
                context.out,
                "{}, {}, {}",
                count(library.len(), "archetype"),
                count(errors, "error"),
                count(diagnostics.len() - errors - notes, "warning"),
            )?;
            // Archetypes held back by a broken dependency: said only when there are some.
            match notes {
                0 => writeln!(context.out)?,
                _ => writeln!(context.out, ", {} not fully checked", notes)?,
            }
        }
        OutputFormat::Json => {
            for diagnostic in diagnostics {
                let line = serde_json::to_string(&JsonDiagnostic::from(diagnostic))
                    .map_err(|error| CliError::Output(error.into()))?;
                writeln!(context.out, "{}", escape_c1(&line))?;
            }
        }
    }
    Ok(if library.error_count() > 0 {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// serde_json leaves the control characters U+007F to U+009F as they are (JSON allows them
/// raw); written as `\u00XX` escapes they mean the same and cannot drive a terminal.
fn escape_c1(line: &str) -> String {
    line.chars()
        .fold(String::with_capacity(line.len()), |mut out, ch| {
            if ch.is_control() {
                out.push_str(&format!("\\u{:04x}", u32::from(ch)));
            } else {
                out.push(ch);
            }
            out
        })
}

/// The text of every file the library read, by the path diagnostics name it with.
pub(crate) struct SourceTexts<'a>(HashMap<&'a Path, FileLines<'a>>);

impl<'a> SourceTexts<'a> {
    pub(crate) fn of(library: &'a ArchetypeLibrary) -> Self {
        SourceTexts(
            library
                .names()
                .filter_map(|name| {
                    let text = library.source_text(name)?;
                    Some((library.file_of(name)?, FileLines::new(text)))
                })
                .collect(),
        )
    }

    /// Just one file's text (a scene's).
    pub(crate) fn one(file: &'a Path, text: &'a str) -> Self {
        SourceTexts(HashMap::from([(file, FileLines::new(text))]))
    }
}

/// The first line of a report: `path:line:col: error[code]: message` (as much of the place as
/// is known), so editors and CI logs can jump to it.
fn header(diagnostic: &Diagnostic) -> String {
    let mut header = String::new();
    if let Some(file) = &diagnostic.file {
        header.push_str(&file.display().to_string());
        if let Some(position) = diagnostic.position {
            header.push_str(&format!(":{}:{}", position.line, position.column));
        }
        header.push_str(": ");
    }
    header.push_str(&format!(
        "{}[{}]: {}",
        diagnostic.severity, diagnostic.code, diagnostic.message
    ));
    header
}

/// Writes one diagnostic: the header, then (when the file and the place are known) the source
/// line with the place underlined, then the suggestion as `= help: did you mean ...?`.
pub(crate) fn write_human(
    out: &mut dyn Write,
    diagnostic: &Diagnostic,
    sources: &SourceTexts<'_>,
) -> Result<(), CliError> {
    writeln!(out, "{}", header(diagnostic))?;
    if let Some(snippet) = snippet_of(diagnostic, sources) {
        out.write_all(snippet.as_bytes())?;
    } else if let Some(help) = diagnostic.help() {
        writeln!(out, "  = help: {help}")?;
    }
    Ok(())
}

/// The source snippet of a diagnostic ([`snippet`]), or `None` when there is no place to show.
/// Without a span (scene errors have only a position), the JSON value or key at the position
/// is underlined.
fn snippet_of(diagnostic: &Diagnostic, sources: &SourceTexts<'_>) -> Option<String> {
    let file = sources.0.get(diagnostic.file.as_deref()?)?;
    let span = match (&diagnostic.span, diagnostic.position) {
        (Some(span), _) => span.clone(),
        (None, Some(position)) => {
            value_span_at(file.text(), file.offset_of(position.line, position.column))
        }
        (None, None) => return None,
    };
    snippet(file, span, diagnostic.help().as_deref())
}

/// One problem in `--format json`.
#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    suggestion: Option<&'a str>,
    archetype: Option<&'a str>,
    component: Option<&'a str>,
    field: Option<String>,
}

impl<'a> From<&'a Diagnostic> for JsonDiagnostic<'a> {
    fn from(diagnostic: &'a Diagnostic) -> Self {
        JsonDiagnostic {
            file: diagnostic
                .file
                .as_ref()
                .map(|file| file.display().to_string()),
            line: diagnostic.position.map(|position| position.line),
            column: diagnostic.position.map(|position| position.column),
            severity: diagnostic.severity.as_str(),
            code: diagnostic.code.as_str(),
            message: &diagnostic.message,
            suggestion: diagnostic.suggestion.as_deref(),
            archetype: diagnostic.archetype.as_deref(),
            component: diagnostic.component.as_deref(),
            field: diagnostic
                .field
                .as_ref()
                .filter(|field| !field.is_empty())
                .map(ToString::to_string),
        }
    }
}
