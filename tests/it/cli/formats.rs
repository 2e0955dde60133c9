//! Output for CI and code scanning, through the built binary: `--format github` (workflow
//! annotations) and `--format sarif`, with the start and end of each place.

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
    assert_eq!(
        run0["tool"]["driver"]["rules"],
        json!([{ "id": "invalid-name" }, { "id": "unknown-component" }])
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
