//! `archetool explain CODE`: the guide's entry for a code, one command away from the
//! `error[code]` that named it.

use archetype_engine::DiagnosticCode;

use super::{check, Project};

#[test]
fn explain_prints_the_guides_entry_for_a_code_and_its_address() {
    let project = Project::with(&[]);
    let run = project.run(&["explain", "unknown-component"]);
    let entry = DiagnosticCode::UnknownComponent.explanation();
    assert!(entry.starts_with("### `unknown-component`\n"), "{entry}");
    let expected = format!(
        "{entry}\n\nOnline: https://docs.rs/archetype-engine/{}/archetype_engine/guide/designer/errors/index.html#unknown-component\n",
        env!("CARGO_PKG_VERSION")
    );
    check(&run, 0, &expected, "");
    // The code as a diagnostic prints it is accepted too.
    check(
        &project.run(&["explain", "error[unknown-component]"]),
        0,
        &expected,
        "",
    );
    let old_name = project.run(&["explain", "warning[old-name]"]);
    assert!(
        old_name.stdout.starts_with("### `old-name`\n"),
        "{}",
        old_name.stdout
    );
}

#[test]
fn explain_without_a_code_lists_every_code_with_its_summary() {
    let run = Project::with(&[]).run(&["explain"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), DiagnosticCode::ALL.len(), "{}", run.stdout);
    for (line, code) in lines.iter().zip(DiagnosticCode::ALL) {
        assert_eq!(*line, format!("{:<20} {}", code.as_str(), code.summary()));
        assert!(!code.summary().is_empty(), "`{code}` has no summary");
    }
}

#[test]
fn explain_refuses_an_unknown_code_with_the_nearest_one() {
    check(
        &Project::with(&[]).run(&["explain", "unknown-compnent"]),
        2,
        "",
        "error: unknown code `unknown-compnent`; did you mean `unknown-component`? (`archetool explain` lists every code)\n",
    );
}
