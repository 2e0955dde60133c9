//! Output for CI and code scanning, through the built binary: `--format github` (workflow
//! annotations) and `--format sarif`, with the start and end of each place; an inheritance
//! cycle with its related places in every format.

use archetype_engine::DiagnosticCode;
use serde_json::{json, Value};

use super::{check, Project};

/// One file, two problems on one line (a wide character before them, so columns count
/// characters), one with a suggestion; a property value with `,` and `:` in its file name.
fn project() -> Project {
    Project::with(&[
        (
            "archetypes/goblin.json",
            "{\n  \"components\": {\n    \"Name\": \"ゴブリン\", \"Helth\": { \"max\": 1 }\n  }\n}\n",
        ),
        ("archetypes/a,b:c.json", "{ \"compnents\": {} }"),
    ])
}

#[test]
fn github_annotations_place_each_problem_and_escape_what_workflow_commands_reserve() {
    let run = project().run(&["validate", "--format", "github"]);
    check(
        &run,
        1,
        concat!(
            "::error file=archetypes/a%2Cb%3Ac.json,title=invalid-name::file `a,b:c.json` does not give a valid archetype name: archetype name `a,b:c` contains `,`; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`\n",
            "::error file=archetypes/goblin.json,line=3,col=21,endLine=3,endColumn=28,title=unknown-component::unknown component `Helth`%0Ahelp: did you mean `Health`?\n",
        ),
        "",
    );
}

#[test]
fn sarif_is_one_log_with_a_rule_per_code_and_a_region_per_problem() {
    let run = project().run(&["validate", "--format", "sarif"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let run0 = &log["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "archetool");
    // Each rule carries its code's summary and the address of its entry in the guide.
    let rule = |code: DiagnosticCode| json!({ "id": code.as_str(), "shortDescription": { "text": code.summary() }, "helpUri": code.help_uri() });
    assert_eq!(
        run0["tool"]["driver"]["rules"],
        json!([
            rule(DiagnosticCode::InvalidName),
            rule(DiagnosticCode::UnknownComponent)
        ])
    );
    assert_eq!(
        run0["tool"]["driver"]["rules"][1]["helpUri"],
        format!(
            "https://docs.rs/archetype-engine/{}/archetype_engine/guide/designer/errors/index.html#unknown-component",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert!(
        DiagnosticCode::UnknownComponent.summary().len() > 20,
        "{}",
        DiagnosticCode::UnknownComponent.summary()
    );
    assert_eq!(run0["columnKind"], "unicodeCodePoints");
    assert_eq!(
        run0["results"][1],
        json!({
            "ruleId": "unknown-component",
            "level": "error",
            "message": { "text": "unknown component `Helth`; did you mean `Health`?" },
            "locations": [{ "physicalLocation": {
                "artifactLocation": { "uri": "archetypes/goblin.json" },
                "region": { "startLine": 3, "startColumn": 21, "endLine": 3, "endColumn": 28 }
            } }]
        })
    );
    // A file name outside the URI's unreserved characters is percent-encoded.
    assert_eq!(
        run0["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "archetypes/a%2Cb%3Ac.json"
    );
    assert!(run0["results"][0]["locations"][0]["physicalLocation"]
        .get("region")
        .is_none());
}

#[test]
fn a_clean_project_gives_no_annotation_and_an_empty_log() {
    let clean = Project::with(&[("archetypes/goblin.json", "{ \"components\": {} }")]);
    check(&clean.run(&["validate", "--format", "github"]), 0, "", "");
    let run = clean.run(&["validate", "--format", "sarif"]);
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(log["runs"][0]["results"], json!([]));
    assert_eq!(run.code, 0);
}

/// Two archetypes extending each other: one cycle, reported once in `a.json` (first by name),
/// every member's link labelled.
fn cycle() -> Project {
    Project::with(&[
        ("archetypes/a.json", "{ \"extends\": \"b\" }\n"),
        ("archetypes/b.json", "{\n  \"extends\": [\"a\"]\n}\n"),
    ])
}

#[test]
fn a_cycle_is_one_error_with_each_link_shown_under_its_own_file() {
    check(
        &cycle().run(&["validate"]),
        1,
        r#"archetypes/a.json:1:14: error[inheritance-cycle]: inheritance cycle: a -> b -> a
  |
1 | { "extends": "b" }
  |              ^^^ `a` extends `b` here
  |
 ::: archetypes/b.json:2:15
  |
2 |   "extends": ["a"]
  |               --- `b` extends `a` here

2 archetypes, 1 error, 0 warnings
"#,
        "",
    );
    // In colour, a related place is drawn in the gutter's colour, as rustc draws it.
    let coloured = cycle().run(&["validate", "--color", "always"]);
    assert!(
        coloured.stdout.contains(concat!(
            "\x1b[1;34m  |\x1b[0m\x1b[1;31m              ^^^ `a` extends `b` here\x1b[0m\n",
            "\x1b[1;34m  |\x1b[0m\n",
            "\x1b[1;34m :::\x1b[0m archetypes/b.json:2:15\n",
        )),
        "{}",
        coloured.stdout
    );
    assert!(
        coloured.stdout.contains(
            "\x1b[1;34m  |\x1b[0m\x1b[1;34m               --- `b` extends `a` here\x1b[0m\n"
        ),
        "{}",
        coloured.stdout
    );
}

#[test]
fn a_cycle_in_json_lists_each_link_in_related() {
    check(
        &cycle().run(&["validate", "--format", "json"]),
        1,
        concat!(
            r#"{"file":"archetypes/a.json","line":1,"column":14,"end_line":1,"end_column":17,"severity":"error","code":"inheritance-cycle","message":"inheritance cycle: a -> b -> a","suggestion":null,"archetype":"a","component":null,"field":null,"related":["#,
            r#"{"file":"archetypes/a.json","line":1,"column":14,"end_line":1,"end_column":17,"message":"`a` extends `b` here"},"#,
            r#"{"file":"archetypes/b.json","line":2,"column":15,"end_line":2,"end_column":18,"message":"`b` extends `a` here"}]}"#,
            "\n",
        ),
        "",
    );
}

#[test]
fn a_cycle_annotation_names_each_link_on_a_line_of_its_message() {
    check(
        &cycle().run(&["validate", "--format", "github"]),
        1,
        concat!(
            "::error file=archetypes/a.json,line=1,col=14,endLine=1,endColumn=17,title=inheritance-cycle::",
            "inheritance cycle: a -> b -> a",
            "%0Aarchetypes/a.json:1:14: `a` extends `b` here",
            "%0Aarchetypes/b.json:2:15: `b` extends `a` here\n",
        ),
        "",
    );
}

#[test]
fn a_cycle_in_sarif_has_each_link_as_a_related_location() {
    let run = cycle().run(&["validate", "--format", "sarif"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    let location = |uri: &str, line: usize, column: usize| {
        json!({
            "artifactLocation": { "uri": uri },
            "region": {
                "startLine": line, "startColumn": column, "endLine": line, "endColumn": column + 3
            }
        })
    };
    assert_eq!(
        log["runs"][0]["results"],
        json!([{
            "ruleId": "inheritance-cycle",
            "level": "error",
            "message": { "text": "inheritance cycle: a -> b -> a" },
            "locations": [{ "physicalLocation": location("archetypes/a.json", 1, 14) }],
            "relatedLocations": [
                {
                    "id": 0,
                    "physicalLocation": location("archetypes/a.json", 1, 14),
                    "message": { "text": "`a` extends `b` here" }
                },
                {
                    "id": 1,
                    "physicalLocation": location("archetypes/b.json", 2, 15),
                    "message": { "text": "`b` extends `a` here" }
                }
            ]
        }])
    );
}
