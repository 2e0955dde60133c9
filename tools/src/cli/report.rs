//! Problems written for machines, in the formats `validate` and `scene check` share: JSON Lines
//! (editors, scripts), GitHub workflow annotations (`::error file=...::...`, shown on the pull
//! request's diff) and SARIF 2.1.0 (code-scanning tools). People get
//! [`write_human`](super::validate::write_human).
//!
//! Every format gives the start and, where the file's text is known, the end of the place: the
//! position just after the underlined span (end-exclusive, as SARIF counts it), lines and
//! columns 1-based, columns in characters. The other places a problem concerns (an inheritance
//! cycle's links, [`Diagnostic::related`]) come with it, each with its label: a `related`
//! array in JSON, `relatedLocations` in SARIF, a line each in a GitHub annotation's message
//! (annotations have one place).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use archetype_engine::{Diagnostic, DiagnosticCode, Position, Related, Severity};
use serde::Serialize;
use serde_json::{json, Value};

use super::validate::SourceTexts;
use super::CliError;

/// One problem in `--format json`.
#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    suggestion: Option<&'a str>,
    archetype: Option<&'a str>,
    component: Option<&'a str>,
    field: Option<String>,
    related: Vec<JsonRelated<'a>>,
}

/// A related place of a problem in `--format json`.
#[derive(Serialize)]
struct JsonRelated<'a> {
    file: String,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    message: &'a str,
}

/// Writes one problem as a line of JSON.
pub(crate) fn write_json(
    out: &mut dyn Write,
    diagnostic: &Diagnostic,
    sources: &SourceTexts<'_>,
) -> Result<(), CliError> {
    let end = sources.end_of(diagnostic);
    let line = JsonDiagnostic {
        file: diagnostic.file.as_deref().map(shown_path),
        line: diagnostic.position.map(|position| position.line),
        column: diagnostic.position.map(|position| position.column),
        end_line: end.map(|end| end.line),
        end_column: end.map(|end| end.column),
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
        related: (diagnostic.related.iter())
            .map(|related| {
                let end = sources.related_end(related);
                JsonRelated {
                    file: shown_path(&related.file),
                    line: related.position.map(|position| position.line),
                    column: related.position.map(|position| position.column),
                    end_line: end.map(|end| end.line),
                    end_column: end.map(|end| end.column),
                    message: &related.message,
                }
            })
            .collect(),
    };
    let text = serde_json::to_string(&line).map_err(|error| CliError::Output(error.into()))?;
    writeln!(out, "{}", escape_c1(&text))?;
    Ok(())
}

/// Writes one problem as a GitHub Actions workflow command:
/// `::error file=F,line=L,col=C,endLine=L,endColumn=C,title=CODE::MESSAGE`; the message's
/// further lines are its related places (`file:line:col: label`), then the help.
pub(crate) fn write_github(
    out: &mut dyn Write,
    diagnostic: &Diagnostic,
    sources: &SourceTexts<'_>,
) -> Result<(), CliError> {
    let mut properties = Vec::new();
    if let Some(file) = &diagnostic.file {
        properties.push(format!("file={}", github_property(&shown_path(file))));
        if let Some(start) = diagnostic.position {
            properties.push(format!("line={},col={}", start.line, start.column));
            if let Some(end) = sources.end_of(diagnostic) {
                properties.push(format!("endLine={},endColumn={}", end.line, end.column));
            }
        }
    }
    properties.push(format!("title={}", diagnostic.code));
    let mut message = diagnostic.message.clone();
    for related in &diagnostic.related {
        message.push('\n');
        message.push_str(&shown_path(&related.file));
        if let Some(at) = related.position {
            message.push_str(&format!(":{}:{}", at.line, at.column));
        }
        message.push_str(&format!(": {}", related.message));
    }
    if let Some(help) = diagnostic.help() {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let command = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        // A note, and any severity a later engine adds.
        _ => "notice",
    };
    writeln!(
        out,
        "::{command} {}::{}",
        properties.join(","),
        github_data(&message)
    )?;
    Ok(())
}

/// A workflow command's message: `%`, CR and LF escaped, so one problem stays one command.
fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as a message, and `:` and `,` too.
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Problems gathered for one SARIF log, written at the end (SARIF is one JSON document).
#[derive(Default)]
pub(crate) struct SarifLog {
    rules: BTreeSet<DiagnosticCode>,
    results: Vec<Value>,
}

impl SarifLog {
    /// Adds a problem.
    pub(crate) fn push(&mut self, diagnostic: &Diagnostic, sources: &SourceTexts<'_>) {
        let code = diagnostic.code.as_str();
        self.rules.insert(diagnostic.code);
        let mut text = diagnostic.message.clone();
        if let Some(help) = diagnostic.help() {
            text.push_str(&format!("; {help}"));
        }
        let mut result = json!({
            "ruleId": code,
            "level": diagnostic.severity.as_str(),
            "message": { "text": text },
        });
        if let Some(file) = &diagnostic.file {
            let end = sources.end_of(diagnostic);
            let location = physical_location(file, diagnostic.position, end);
            result["locations"] = json!([{ "physicalLocation": location }]);
        }
        if !diagnostic.related.is_empty() {
            let related: Vec<Value> = (diagnostic.related.iter().enumerate())
                .map(|(id, related)| related_location(id, related, sources))
                .collect();
            result["relatedLocations"] = Value::Array(related);
        }
        self.results.push(result);
    }

    /// Writes the log: one run of `archetool`, its rules (the codes met, each with the first
    /// sentence of its entry in the guide's errors chapter and the address of that entry) and
    /// results.
    pub(crate) fn write(self, out: &mut dyn Write) -> Result<(), CliError> {
        let rules: Vec<Value> = (self.rules.iter())
            .map(|code| {
                json!({
                    "id": code.as_str(),
                    "shortDescription": { "text": code.summary() },
                    "helpUri": code.help_uri(),
                })
            })
            .collect();
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "archetool",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                } },
                "columnKind": "unicodeCodePoints",
                "results": self.results,
            }],
        });
        let text =
            serde_json::to_string_pretty(&log).map_err(|error| CliError::Output(error.into()))?;
        writeln!(out, "{}", escape_c1(&text))?;
        Ok(())
    }
}

/// A SARIF `physicalLocation`: the file, and the region when the start is known.
fn physical_location(file: &Path, start: Option<Position>, end: Option<Position>) -> Value {
    let mut location = json!({ "artifactLocation": { "uri": file_uri(file) } });
    if let Some(start) = start {
        location["region"] = region(start, end);
    }
    location
}

/// A SARIF related location: its `id` (its index), place and label.
fn related_location(id: usize, related: &Related, sources: &SourceTexts<'_>) -> Value {
    let end = sources.related_end(related);
    json!({
        "id": id,
        "physicalLocation": physical_location(&related.file, related.position, end),
        "message": { "text": related.message },
    })
}

fn region(start: Position, end: Option<Position>) -> Value {
    let mut region = json!({ "startLine": start.line, "startColumn": start.column });
    if let Some(end) = end {
        region["endLine"] = json!(end.line);
        region["endColumn"] = json!(end.column);
    }
    region
}

/// A path as a relative URI reference (`archetypes/enemies/goblin.json`) or, when absolute, a
/// `file://` URI: `/` separators, anything outside the unreserved characters percent-encoded.
fn file_uri(path: &Path) -> String {
    let shown = shown_path(path);
    let mut uri = String::with_capacity(shown.len());
    if path.is_absolute() {
        uri.push_str("file://");
        if !shown.starts_with('/') {
            uri.push('/');
        }
    }
    for byte in shown.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(byte));
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

/// A path as the reports show it: `/` separators on every system.
fn shown_path(path: &Path) -> String {
    let shown = path.display().to_string();
    if std::path::MAIN_SEPARATOR == '/' {
        shown
    } else {
        shown.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

/// serde_json leaves the control characters U+007F to U+009F as they are (JSON allows them
/// raw); written as `\u00XX` escapes they mean the same and cannot drive a terminal.
fn escape_c1(line: &str) -> String {
    line.chars()
        .fold(String::with_capacity(line.len()), |mut out, ch| {
            if ch.is_control() && ch != '\n' {
                out.push_str(&format!("\\u{:04x}", u32::from(ch)));
            } else {
                out.push(ch);
            }
            out
        })
}
