//! `archetool validate`: load every archetype and report every problem, for people (rustc-style,
//! with the source line underlined) or for editors and CI (JSON Lines, GitHub annotations,
//! SARIF: see `report.rs`).

use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

use archetype_engine::tooling::TextLines;
use archetype_engine::{ArchetypeLibrary, Diagnostic, DiagnosticCode, Position, Related, Severity};
use clap::{Args, ValueEnum};

use super::raw_json::value_span_at;
use super::snippet::{gutter_width, Mark, Snippets};
use super::style::{paint, Style};
use super::{count, report, CliError, Context, DirArg, Exit};

/// Arguments of `archetool validate`.
#[derive(Clone, Debug, Args)]
pub struct ValidateArgs {
    /// The archetypes root.
    #[command(flatten)]
    pub dir: DirArg,
    /// How to report the problems.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
    /// Also note each value a file writes that equals what the archetype inherits there
    /// (`same-as-inherited`; the language server always does).
    #[arg(long)]
    pub same_as_inherited: bool,
}

/// How `validate` and `scene check` report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people: `path:line:col: error[code]: message`, the source line underlined, `help:`.
    Human,
    /// For editors and scripts: JSON Lines, one object per problem: file, line, column,
    /// end_line, end_column, severity, code, message, suggestion, archetype, component, field
    /// (null when unknown), related (the other places it concerns: file, line, column,
    /// end_line, end_column, message).
    Json,
    /// For GitHub Actions: one workflow command per problem
    /// (`::error file=...,line=...,col=...,endLine=...,endColumn=...,title=CODE::MESSAGE`),
    /// shown as annotations on the pull request.
    Github,
    /// For code-scanning tools: one SARIF 2.1.0 log with a result per problem.
    Sarif,
}

/// Loads every archetype under `--dir` and prints every problem.
///
/// Exit code: 1 if there is any error (warnings alone do not fail).
///
/// # Errors
/// If the directory does not exist, or the output cannot be written.
pub fn validate(args: &ValidateArgs, context: &mut Context<'_>) -> Result<Exit, CliError> {
    let library = context.load_with(&args.dir.dir, args.same_as_inherited)?;
    let diagnostics = library.diagnostics();
    let sources = SourceTexts::of(&library);
    match args.format {
        OutputFormat::Human => {
            for diagnostic in diagnostics {
                write_human(context.out, diagnostic, &sources)?;
                writeln!(context.out)?;
            }
            let errors = library.error_count();
            let notes = diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Note)
                .count();
            let same = (diagnostics.iter())
                .filter(|d| d.code == DiagnosticCode::SameAsInherited)
                .count();
            write!(
                context.out,
                "{}, {}, {}",
                count(library.len(), "archetype"),
                count(errors, "error"),
                count(diagnostics.len() - errors - notes, "warning"),
            )?;
            // Archetypes held back by a broken dependency: said only when there are some.
            if notes > same {
                write!(context.out, ", {} not fully checked", notes - same)?;
            }
            match same {
                0 => writeln!(context.out)?,
                _ => writeln!(context.out, ", {same} same as inherited")?,
            }
        }
        OutputFormat::Json => {
            for diagnostic in diagnostics {
                report::write_json(context.out, diagnostic, &sources)?;
            }
        }
        OutputFormat::Github => {
            for diagnostic in diagnostics {
                report::write_github(context.out, diagnostic, &sources)?;
            }
        }
        OutputFormat::Sarif => {
            let mut log = report::SarifLog::default();
            for diagnostic in diagnostics {
                log.push(diagnostic, &sources);
            }
            log.write(context.out)?;
        }
    }
    Ok(if library.error_count() > 0 {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// The text of every file the library read, by the path diagnostics name it with, each with
/// where its lines start (the library's own index of it, built once, whatever the number of
/// problems placed in it).
pub(crate) struct SourceTexts<'a>(HashMap<&'a Path, TextLines<'a>>);

impl<'a> SourceTexts<'a> {
    pub(crate) fn of(library: &'a ArchetypeLibrary) -> Self {
        Self::of_names(library, library.names())
    }

    /// The text of the archetypes `names` (those with a file the library read).
    pub(crate) fn of_names<'n>(
        library: &'a ArchetypeLibrary,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Self {
        SourceTexts(
            names
                .into_iter()
                .filter_map(|name| Some((library.file_of(name)?, library.source_lines(name)?)))
                .collect(),
        )
    }

    /// No file's text (a binary scene's error).
    pub(crate) fn none() -> Self {
        SourceTexts(HashMap::new())
    }

    /// Just one file's text (a scene's).
    pub(crate) fn one(file: &'a Path, text: &'a str) -> Self {
        SourceTexts(HashMap::from([(file, TextLines::new(text))]))
    }

    /// The text of `file` and where its lines start, if it is one of these.
    #[cfg(feature = "lsp")]
    pub(crate) fn lines_of(&self, file: &Path) -> Option<&TextLines<'a>> {
        self.0.get(file)
    }

    /// The file's lines and the byte range a diagnostic points at, when the file is known.
    /// Without a span (scene errors have only a position), the JSON value or key at the
    /// position.
    pub(crate) fn span_of(
        &self,
        diagnostic: &Diagnostic,
    ) -> Option<(&TextLines<'a>, Range<usize>)> {
        let file = diagnostic.file.as_deref()?;
        self.place(file, diagnostic.span.as_ref(), diagnostic.position)
    }

    /// [`span_of`](Self::span_of) for a related place.
    pub(crate) fn related_span(&self, related: &Related) -> Option<(&TextLines<'a>, Range<usize>)> {
        self.place(&related.file, related.span.as_ref(), related.position)
    }

    fn place(
        &self,
        file: &Path,
        span: Option<&Range<usize>>,
        position: Option<Position>,
    ) -> Option<(&TextLines<'a>, Range<usize>)> {
        let file = self.0.get(file)?;
        let span = match (span, position) {
            (Some(span), _) => span.clone(),
            (None, Some(position)) => value_span_at(file.text(), file.offset(position)),
            (None, None) => return None,
        };
        Some((file, span))
    }

    /// Where a diagnostic's place ends: the position just after its span.
    pub(crate) fn end_of(&self, diagnostic: &Diagnostic) -> Option<Position> {
        let (file, span) = self.span_of(diagnostic)?;
        Some(file.position(span.end))
    }

    /// Where a related place ends: the position just after its span.
    pub(crate) fn related_end(&self, related: &Related) -> Option<Position> {
        let (file, span) = self.related_span(related)?;
        Some(file.position(span.end))
    }
}

/// Writes the first line of a report: `path:line:col: error[code]: message` (as much of the
/// place as is known), so editors and CI logs can jump to it.
fn write_header(out: &mut dyn Write, diagnostic: &Diagnostic) -> Result<(), CliError> {
    if let Some(file) = &diagnostic.file {
        write!(out, "{}", file.display())?;
        if let Some(position) = diagnostic.position {
            write!(out, ":{}:{}", position.line, position.column)?;
        }
        write!(out, ": ")?;
    }
    let kind = format!("{}[{}]", diagnostic.severity, diagnostic.code);
    paint(out, severity_style(diagnostic.severity), &kind)?;
    paint(out, Style::Emphasis, &format!(": {}", diagnostic.message))?;
    writeln!(out)?;
    Ok(())
}

fn severity_style(severity: Severity) -> Style {
    match severity {
        Severity::Error => Style::Error,
        Severity::Warning => Style::Warning,
        // A note, and any severity a later engine adds.
        _ => Style::Help,
    }
}

/// Writes one diagnostic: the header, then (when the file and the place are known) the source
/// line with the place underlined (and labelled, when the diagnostic labels it), then each
/// related place rustc-style (` ::: file:line:col`, its line, the place underlined `---` with
/// its label), then the suggestion as `= help: did you mean ...?`.
pub(crate) fn write_human(
    out: &mut dyn Write,
    diagnostic: &Diagnostic,
    sources: &SourceTexts<'_>,
) -> Result<(), CliError> {
    write_header(out, diagnostic)?;
    let own = sources.span_of(diagnostic);
    let related: Vec<(&Related, _)> = diagnostic
        .related_elsewhere()
        .map(|related| (related, sources.related_span(related)))
        .collect();
    let places = own
        .iter()
        .chain(related.iter().filter_map(|(_, place)| place.as_ref()));
    let pad = places
        .filter_map(|(file, span)| gutter_width(file, span))
        .max()
        .unwrap_or(1);
    let mut snippets = Snippets::new(pad);
    let mut drawn = false;
    if let Some((file, span)) = own {
        let mark = Mark {
            label: diagnostic.own_label(),
            primary: true,
            style: severity_style(diagnostic.severity),
        };
        drawn = snippets.place(file, span, mark);
    }
    for (related, place) in related {
        let location = match related.position {
            Some(at) => format!("{}:{}:{}", related.file.display(), at.line, at.column),
            None => related.file.display().to_string(),
        };
        let mark = Mark {
            label: Some(&related.message),
            primary: false,
            style: Style::Gutter,
        };
        match place {
            Some((file, span)) if gutter_width(file, &span).is_some() => {
                snippets.related(&location);
                snippets.place(file, span, mark);
            }
            // No text to show: the label goes on the place's line.
            _ => snippets.related(&format!("{location}: {}", related.message)),
        }
        drawn = true;
    }
    match diagnostic.help() {
        Some(help) if drawn => snippets.help(&help),
        Some(help) => {
            paint(out, Style::Gutter, "  =")?;
            write!(out, " ")?;
            paint(out, Style::Help, "help")?;
            writeln!(out, ": {help}")?;
        }
        None => {}
    }
    Ok(snippets.finish().write(out)?)
}
