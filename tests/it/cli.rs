//! `archetool`, through the built binary, in temporary project directories: every subcommand's
//! output and exit codes (0 ok, 1 findings, 2 usage or I/O error), the JSON Schema against the
//! loader, and formatting that never changes meaning.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod bench_markdown; // bench --markdown --from: BENCHMARKS.md from saved runs, and the errors for a bad one
mod colour; // --color: colour for people on a terminal or when asked, never in machine formats
mod cook; // cook: the file a shipped game loads, the same bytes as the game's own cook, none for errors
mod explain; // explain CODE: the guide's entry for a code, or every code with its summary
mod file_rule; // files on disk: FIFOs never block, links kept, names refused
mod formats; // --format github and sarif: annotations and a SARIF log, places with their ends; a cycle's related places
mod game_archetool; // a game's own archetool (examples/my-game): no terminal UI or benchmark crates, and how many it pulls in
mod language; // the designer's language through the CLI: notes, operators, references, the schema
#[cfg(unix)] // the test client names files by `file://` + their Unix path
mod lsp; // `archetool lsp` over stdio: diagnostics, completion, hover, navigation, rename, fixes, formatting
#[cfg(target_os = "linux")] // reads the server's peak memory from /proc
mod lsp_input; // `archetool lsp` given frames it cannot read: a clear line and exit 2, never a hang or a big allocation
mod promote; // promote: a scene entity's differences into its archetype's file or a new one
mod readme; // the README's example of a mistake is what validate prints
mod renames; // archetype renames: old-name warnings, clashes, scene check, migrate
mod scene_check; // scene check over files and directories, every failing scene, every format
mod schema_agreement; // the editor schema and validate agree on a corpus of archetype files

// ---------------------------------------------------------------------------------------------
// Helpers

/// What one run of `archetool` gave.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A project directory (with `archetypes/` inside) in a temporary directory.
struct Project {
    dir: tempfile::TempDir,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl Project {
    /// A project with an empty `archetypes/`.
    fn empty() -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("archetypes")).unwrap();
        Project { dir }
    }

    /// A project with a copy of the repository's demo archetypes and the assets they name
    /// (`assets/portraits`).
    fn demo() -> Project {
        let project = Project::empty();
        copy_dir(&repo_root().join("archetypes"), &project.path("archetypes"));
        copy_dir(
            &repo_root().join("assets/portraits"),
            &project.path("assets/portraits"),
        );
        project
    }

    /// A project with these files (paths relative to the project).
    fn with(files: &[(&str, &str)]) -> Project {
        let project = Project::empty();
        for (path, text) in files {
            project.write(path, text);
        }
        project
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    /// Runs `archetool ARGS` in the project directory.
    fn run(&self, args: &[&str]) -> Run {
        run_in(self.dir.path(), args)
    }

    /// Every archetype file, relative to the project, sorted.
    fn archetype_files(&self) -> Vec<String> {
        let mut files = Vec::new();
        collect_json(&self.path("archetypes"), &mut files);
        let mut files: Vec<String> = files
            .into_iter()
            .map(|file| {
                file.strip_prefix(self.dir.path())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        files.sort();
        files
    }
}

/// Runs `archetool ARGS` in `dir`; fails the test if it takes more than twenty seconds (and
/// kills it): a command that blocks (on a FIFO, say) is a bug, not a hung test run.
fn run_in(dir: &Path, args: &[&str]) -> Run {
    let output = tempfile::tempdir().unwrap();
    let (out, err) = (output.path().join("stdout"), output.path().join("stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_archetool"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`archetool {}` still running after 20 s", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code: status.code().unwrap(),
        stdout: std::fs::read_to_string(out).unwrap(),
        stderr: std::fs::read_to_string(err).unwrap(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn collect_json(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_json(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
}

/// What `scene diff` prints for two scenes holding the same entities.
const SAME_SCENES: &str = "0 added, 0 removed, 0 changed\n";

/// `n` `thing`s, in the tool's words (`1 file`, `2 files`).
fn counted(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// What `fmt` prints when every archetype file of `project` is formatted.
fn all_formatted(project: &Project) -> String {
    let files = counted(project.archetype_files().len(), "file");
    format!("{files} checked, all formatted\n")
}

/// What `migrate` prints when nothing needs migrating: every archetype file of `project`
/// checked, and `scenes` scene files (`None`: no scenes directory to read).
fn none_to_migrate(project: &Project, scenes: Option<usize>) -> String {
    let archetypes = counted(project.archetype_files().len(), "archetype file");
    match scenes {
        Some(scenes) => format!(
            "{archetypes} and {} checked, none to migrate\n",
            counted(scenes, "scene file")
        ),
        None => format!("{archetypes} checked, none to migrate\n"),
    }
}

/// Asserts the exit code and the whole of stdout and stderr.
#[track_caller]
fn check(run: &Run, code: i32, stdout: &str, stderr: &str) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (code, stdout, stderr),
        "\n--- stdout:\n{}\n--- stderr:\n{}",
        run.stdout,
        run.stderr
    );
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

// ---------------------------------------------------------------------------------------------
// The command line itself

#[test]
fn help_lists_the_subcommands_and_the_exit_codes() {
    let run = Project::empty().run(&["--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    for expected in [
        "Usage: archetool [OPTIONS] <COMMAND>",
        "validate",
        "inspect",
        "tree",
        "schema",
        "fmt",
        "new",
        "scene",
        "migrate",
        "Exit codes:\n  0  success\n  1  findings: validation errors, files `fmt --check` or `migrate --check` would change,\n     a scene that does not load, scenes that differ (`scene diff`)\n  2  usage or I/O error\n",
    ] {
        assert!(run.stdout.contains(expected), "{expected:?} in\n{}", run.stdout);
    }
    let run = Project::empty().run(&["validate", "--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("--dir <DIR>"), "{}", run.stdout);
    assert!(
        run.stdout.contains("[default: archetypes]"),
        "{}",
        run.stdout
    );
}

#[test]
fn usage_errors_exit_with_2() {
    let project = Project::empty();
    let run = project.run(&[]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr.contains("Usage: archetool [OPTIONS] <COMMAND>"),
        "{}",
        run.stderr
    );

    let run = project.run(&["valdate"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unrecognized subcommand 'valdate'")
            && run
                .stderr
                .contains("a similar subcommand exists: 'validate'"),
        "{}",
        run.stderr
    );

    let run = project.run(&["validate", "--format", "xml"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("invalid value 'xml'"), "{}", run.stderr);
}

#[test]
fn a_missing_archetypes_directory_is_an_error_for_every_subcommand() {
    let project = Project::with(&[("level.scene.bin", "ARCHSCN\0")]);
    let message = "error: archetypes directory `nowhere` not found (run from the project root or pass --dir)\n";
    for args in [
        &["validate", "--dir", "nowhere"][..],
        &["inspect", "x", "--dir", "nowhere"],
        &["tree", "--dir", "nowhere"],
        &["schema", "--dir", "nowhere"],
        &["fmt", "--dir", "nowhere"],
        &["new", "x", "--dir", "nowhere"],
        &["scene", "check", "level.scene.bin", "--dir", "nowhere"],
        // Binary scenes are read through the archetypes.
        &["scene", "info", "level.scene.bin", "--dir", "nowhere"],
        &["migrate", "--dir", "nowhere"],
    ] {
        check(&project.run(args), 2, "", message);
    }
}

/// A game's own `archetool` is `archetool::cli::run` with the game's registry.
#[test]
fn the_command_line_runs_in_process_with_any_registry() {
    use archetool::cli::{run, Exit};
    use archetype_engine::ComponentRegistry;

    #[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Mana {
        points: u32,
    }
    let project = Project::with(&[(
        "archetypes/mage.json",
        r#"{ "components": { "Mana": { "points": 5 } } }"#,
    )]);
    let dir = project.path("archetypes");
    let dir = dir.to_str().unwrap();
    let mut registry = ComponentRegistry::new();
    registry.register_with_schema::<Mana>().unwrap();

    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = run(
        ["my-tool", "validate", "--dir", dir],
        registry,
        &mut out,
        &mut err,
    );
    assert_eq!(exit, Exit::Success);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "1 archetype, 0 errors, 0 warnings\n"
    );
    assert!(err.is_empty());

    // Without the game's components, the same file is wrong.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = run(
        ["my-tool", "validate", "--dir", dir],
        ComponentRegistry::new(),
        &mut out,
        &mut err,
    );
    assert_eq!((exit, exit.code()), (Exit::Findings, 1));
    assert!(String::from_utf8(out)
        .unwrap()
        .contains("error[unknown-component]: unknown component `Mana`"));
}

// ---------------------------------------------------------------------------------------------
// validate

/// Broken files: an unknown component, a typo'd field, a value of the wrong type, a syntax
/// error, and a file whose name is not an archetype name.
fn broken_project() -> Project {
    Project::with(&[
        (
            "archetypes/creature.json",
            r#"{
  "abstract": true,
  "components": {
    "Health": { "current": 10, "max": 10 }
  }
}
"#,
        ),
        (
            "archetypes/goblin.json",
            r#"{
  "extends": "creature",
  "components": {
    "Helth": { "max": 12 },
    "Speed": { "valeu": 2.0 },
    "Glyph": {
      "ch": "g",
      "color": "Green"
    },
    "Health": { "max": "twelve" }
  }
}
"#,
        ),
        (
            "archetypes/orc.json",
            r#"{
  "extends": "creature"
  "components": {}
}
"#,
        ),
        ("archetypes/bad name.json", "{}"),
    ])
}

#[test]
fn validate_prints_rustc_style_reports_and_a_summary() {
    let expected = r#"archetypes/bad name.json: error[invalid-name]: file `bad name.json` does not give a valid archetype name: archetype name `bad name` contains a space; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`

archetypes/goblin.json:4:5: error[unknown-component]: unknown component `Helth`
  |
4 |     "Helth": { "max": 12 },
  |     ^^^^^^^
  |
  = help: did you mean `Health`?

archetypes/goblin.json:5:14: error[invalid-component]: invalid value for `Speed`: missing field `value`
  |
5 |     "Speed": { "valeu": 2.0 },
  |              ^^^^^^^^^^^^^^^^

archetypes/goblin.json:5:16: error[unknown-field]: unknown field `valeu` in component `Speed`
  |
5 |     "Speed": { "valeu": 2.0 },
  |                ^^^^^^^
  |
  = help: did you mean `value`?

archetypes/goblin.json:10:24: error[invalid-component]: invalid value for `Health.max`: invalid type: string "twelve", expected f32
   |
10 |     "Health": { "max": "twelve" }
   |                        ^^^^^^^^

archetypes/orc.json:2:24: error[syntax]: expected `,` or `}` after this value
  |
2 |   "extends": "creature"
  |                        ^

3 archetypes, 6 errors, 0 warnings
"#;
    check(&broken_project().run(&["validate"]), 1, expected, "");
}

#[test]
fn validate_underlines_a_value_over_several_lines() {
    let project = Project::with(&[(
        "archetypes/goblin.json",
        "{\n  \"components\": {\n    \"Glyph\": {\n      \"color\": \"Green\"\n    }\n  }\n}\n",
    )]);
    let expected = r#"archetypes/goblin.json:3:14: error[invalid-component]: invalid value for `Glyph`: missing field `ch`
  |
3 |       "Glyph": {
  | /--------------^
4 | |       "color": "Green"
5 | |     }
  | \-----^

1 archetype, 1 error, 0 warnings
"#;
    check(&project.run(&["validate"]), 1, expected, "");
}

#[test]
fn validate_notes_values_the_same_as_inherited_when_asked() {
    let project = Project::with(&[
        (
            "archetypes/goblin.json",
            "{\n  \"components\": {\n    \"Name\": \"Goblin\"\n  }\n}\n",
        ),
        (
            "archetypes/scout.json",
            "{\n  \"extends\": \"goblin\",\n  \"components\": {\n    \"Name\": \"Goblin\"\n  }\n}\n",
        ),
    ]);
    check(
        &project.run(&["validate"]),
        0,
        "2 archetypes, 0 errors, 0 warnings\n",
        "",
    );
    let expected = r#"archetypes/scout.json:4:13: note[same-as-inherited]: `Name` is already `"Goblin"` in what this archetype is built on: this changes nothing
  |
4 |     "Name": "Goblin"
  |             ^^^^^^^^

2 archetypes, 0 errors, 0 warnings, 1 same as inherited
"#;
    check(
        &project.run(&["validate", "--same-as-inherited"]),
        0,
        expected,
        "",
    );
}

#[test]
fn validate_in_json_prints_one_object_per_problem() {
    let run = broken_project().run(&["validate", "--format", "json"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    let problems: Vec<Value> = run.stdout.lines().map(parse).collect();
    let expected = [
        json!({"file": "archetypes/bad name.json", "line": null, "column": null, "end_line": null, "end_column": null, "severity": "error", "code": "invalid-name", "message": "file `bad name.json` does not give a valid archetype name: archetype name `bad name` contains a space; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`", "suggestion": null, "archetype": null, "component": null, "field": null, "related": []}),
        json!({"file": "archetypes/goblin.json", "line": 4, "column": 5, "end_line": 4, "end_column": 12, "severity": "error", "code": "unknown-component", "message": "unknown component `Helth`", "suggestion": "Health", "archetype": "goblin", "component": "Helth", "field": null, "related": []}),
        json!({"file": "archetypes/goblin.json", "line": 5, "column": 14, "end_line": 5, "end_column": 30, "severity": "error", "code": "invalid-component", "message": "invalid value for `Speed`: missing field `value`", "suggestion": null, "archetype": "goblin", "component": "Speed", "field": null, "related": []}),
        json!({"file": "archetypes/goblin.json", "line": 5, "column": 16, "end_line": 5, "end_column": 23, "severity": "error", "code": "unknown-field", "message": "unknown field `valeu` in component `Speed`", "suggestion": "value", "archetype": "goblin", "component": "Speed", "field": "valeu", "related": []}),
        json!({"file": "archetypes/goblin.json", "line": 10, "column": 24, "end_line": 10, "end_column": 32, "severity": "error", "code": "invalid-component", "message": "invalid value for `Health.max`: invalid type: string \"twelve\", expected f32", "suggestion": null, "archetype": "goblin", "component": "Health", "field": "max", "related": []}),
        json!({"file": "archetypes/orc.json", "line": 2, "column": 24, "end_line": 2, "end_column": 24, "severity": "error", "code": "syntax", "message": "expected `,` or `}` after this value", "suggestion": null, "archetype": "orc", "component": null, "field": null, "related": []}),
    ];
    assert_eq!(problems, expected);
    // Keys in the documented order, one object per line.
    assert!(run
        .stdout
        .lines()
        .all(|line| line.starts_with("{\"file\":")));
}

#[test]
fn validate_accepts_the_demo_archetypes() {
    let project = Project::demo();
    let count = project.archetype_files().len();
    check(
        &project.run(&["validate"]),
        0,
        &format!("{count} archetypes, 0 errors, 0 warnings\n"),
        "",
    );
    check(&project.run(&["validate", "--format", "json"]), 0, "", "");
    // `--dir` from elsewhere; paths are shown as given.
    let run = run_in(
        &repo_root().join("tools"),
        &["validate", "--dir", "../archetypes"],
    );
    check(
        &run,
        0,
        &format!("{count} archetypes, 0 errors, 0 warnings\n"),
        "",
    );
}

/// Why a game builds its own archetool (`examples/my-game`): the shipped one knows only the
/// demo's components.
#[test]
fn the_shipped_archetool_does_not_know_a_games_components() {
    let run = run_in(
        &repo_root().join("examples/my-game"),
        &["validate", "--format", "json"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let vitality = r#"{"file":"archetypes/enemies/alpha_wolf.json","line":5,"column":5,"end_line":5,"end_column":15,"severity":"error","code":"unknown-component","message":"unknown component `Vitality`","suggestion":null,"archetype":"enemies/alpha_wolf","component":"Vitality","field":null,"related":[]}"#;
    assert!(
        run.stdout.lines().any(|line| line == vitality),
        "{}",
        run.stdout
    );
    let motion = r#"{"file":"archetypes/enemies/wolf.json","line":4,"column":5,"end_line":4,"end_column":13,"severity":"error","code":"unknown-component","message":"unknown component `Motion`","suggestion":null,"archetype":"enemies/wolf","component":"Motion","field":null,"related":[]}"#;
    assert!(
        run.stdout.lines().any(|line| line == motion),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// inspect

#[test]
fn inspect_prints_the_resolved_archetype() {
    let expected = r#"{
  "archetype": "enemies/goblin_archer",
  "components": {
    "Faction": "Hostile",
    "Glyph": { "ch": "a", "color": "Green" },
    "Health": { "current": 8, "max": 8 },
    "Loot": { "items": ["bone", "rag"] },
    "Name": "Goblin archer",
    "Portrait": { "art": "portraits/goblin.txt" },
    "Ranged": {
      "cooldown": { "$range": [1.5, 2.0] },
      "projectile": "projectiles/arrow",
      "range": 8
    },
    "Speed": { "value": 2.0 },
    "Stance": {
      "Wander": { "pace": 0.35 }
    },
    "Transform": {},
    "Velocity": {}
  }
}
"#;
    check(
        &Project::demo().run(&["inspect", "enemies/goblin_archer"]),
        0,
        expected,
        "",
    );
}

#[test]
fn inspect_shows_children_with_their_archetypes() {
    let run = Project::demo().run(&["inspect", "structures/heavy_turret"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let resolved = parse(&run.stdout);
    assert_eq!(resolved["archetype"], "structures/heavy_turret");
    assert_eq!(
        resolved["components"]["Health"],
        json!({"current": 80, "max": 80})
    );
    assert_eq!(resolved["children"]["gun"]["archetype"], "structures/gun");
    assert_eq!(
        resolved["children"]["gun"]["components"]["Ranged"],
        json!({"cooldown": 1.2, "projectile": "projectiles/shell", "range": 10})
    );
    assert_eq!(
        resolved["children"]["sensor"]["components"]["Sensor"],
        json!({"range": 12})
    );
}

#[test]
fn inspect_provenance_names_the_file_of_every_field() {
    let expected = "\
Faction             \"Hostile\"               archetypes/enemies/enemy.json:5:16
Glyph.ch            \"a\"                     archetypes/enemies/goblin_archer.json:4:22
Glyph.color         \"Green\"                 archetypes/enemies/goblin.json:4:36
Health.current      8                       archetypes/enemies/goblin_archer.json:5:28
Health.max          8                       archetypes/enemies/goblin_archer.json:5:38
Loot.items          [\"bone\", \"rag\"]         archetypes/enemies/goblin.json:6:24
Name                \"Goblin archer\"         archetypes/enemies/goblin_archer.json:7:13
Portrait.art        \"portraits/goblin.txt\"  archetypes/enemies/goblin.json:8:26
Ranged.cooldown     {\"$range\": [1.5, 2.0]}  archetypes/enemies/goblin_archer.json:9:19
Ranged.projectile   \"projectiles/arrow\"     archetypes/enemies/goblin_archer.json:10:21
Ranged.range        8                       archetypes/enemies/goblin_archer.json:11:16
Speed.value         2.0                     archetypes/enemies/goblin.json:9:25
Stance.Wander.pace  0.35                    archetypes/base/creature.json:9:27
Transform           {}                      archetypes/base/creature.json:11:18
Velocity            {}                      archetypes/base/creature.json:12:17
";
    check(
        &Project::demo().run(&["inspect", "enemies/goblin_archer", "--provenance"]),
        0,
        expected,
        "",
    );
}

#[test]
fn inspect_provenance_covers_children() {
    let run = Project::demo().run(&["inspect", "--provenance", "structures/heavy_turret"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with('#'))
        .collect();
    assert_eq!(
        lines,
        [
            "#gun Glyph.ch                  \"=\"                  archetypes/structures/gun.json:4:22",
            "#gun Glyph.color               \"Gray\"               archetypes/structures/gun.json:4:36",
            "#gun Ranged.cooldown           1.2                  archetypes/structures/heavy_turret.json:11:33",
            "#gun Ranged.projectile         \"projectiles/shell\"  archetypes/structures/heavy_turret.json:11:52",
            "#gun Ranged.range              10                   archetypes/structures/gun.json:5:77",
            "#gun Transform.translation     [1, 0, 0]            archetypes/structures/turret.json:14:39",
            "#sensor Sensor.range           12                   archetypes/structures/heavy_turret.json:16:30",
            "#sensor Transform.translation  [0, 1, 0]            archetypes/structures/turret.json:20:39",
        ]
    );
}

#[test]
fn inspect_an_unknown_archetype_suggests_one_and_exits_with_2() {
    check(
        &Project::demo().run(&["inspect", "enemies/goblin_arhcer"]),
        2,
        "",
        "error: no archetype `enemies/goblin_arhcer` in `archetypes`; did you mean `enemies/goblin_archer`?\n",
    );
}

#[test]
fn inspect_an_archetype_with_errors_exits_with_1() {
    let project = broken_project();
    check(
        &project.run(&["inspect", "goblin"]),
        1,
        "",
        "error: archetype `goblin` cannot be resolved because of errors; `archetool validate --dir archetypes` lists them\n",
    );
    // Its valid parent is still served.
    assert_eq!(project.run(&["inspect", "creature"]).code, 0);
}

// ---------------------------------------------------------------------------------------------
// tree

#[test]
fn tree_draws_every_archetype_under_its_parents() {
    let expected = "\
base/creature (abstract)
├── allies/soldier
│   └── allies/squad_leader
└── enemies/enemy (abstract)
    ├── enemies/goblin
    │   ├── enemies/goblin_archer
    │   └── enemies/goblin_chief
    └── enemies/orc
items/door
items/key
projectiles/projectile (abstract)
├── projectiles/arrow
└── projectiles/bolt
    └── projectiles/shell
spawners/goblin_camp
structures/gun (abstract)
structures/turret
├── #gun -> structures/gun
├── #sensor
└── structures/heavy_turret
    ├── #gun -> structures/gun
    └── #sensor
traits/armored (abstract)
├── enemies/goblin_chief (*)
└── enemies/orc (*)
traits/leader (abstract)
├── allies/squad_leader (*)
└── enemies/goblin_chief (*)
(*) shown in full above
";
    check(&Project::demo().run(&["tree"]), 0, expected, "");
}

#[test]
fn tree_of_one_archetype_shows_its_ancestry_and_subtree() {
    check(
        &Project::demo().run(&["tree", "enemies/goblin_chief"]),
        0,
        "\
enemies/goblin_chief extends:
├── enemies/goblin
│   └── enemies/enemy (abstract)
│       └── base/creature (abstract)
├── traits/leader (abstract)
└── traits/armored (abstract)

enemies/goblin_chief
",
        "",
    );
    check(
        &Project::demo().run(&["tree", "enemies/enemy"]),
        0,
        "\
enemies/enemy extends:
└── base/creature (abstract)

enemies/enemy (abstract)
├── enemies/goblin
│   ├── enemies/goblin_archer
│   └── enemies/goblin_chief
└── enemies/orc
",
        "",
    );
    check(
        &Project::demo().run(&["tree", "structures/turret"]),
        0,
        "\
structures/turret
├── #gun -> structures/gun
├── #sensor
└── structures/heavy_turret
    ├── #gun -> structures/gun
    └── #sensor
",
        "",
    );
}

#[test]
fn tree_shows_nested_children_and_broken_archetypes() {
    let project = Project::with(&[
        (
            "archetypes/ship.json",
            r##"{ "components": { "Name": "Ship" }, "children": { "hull": { "children": { "gun": { "archetype": "gun" } } } } }"##,
        ),
        (
            "archetypes/gun.json",
            r#"{ "abstract": true, "components": { "Name": "Gun" } }"#,
        ),
        (
            "archetypes/wreck.json",
            r#"{ "extends": "ship", "components": { "Nmae": "Wreck" } }"#,
        ),
    ]);
    check(
        &project.run(&["tree"]),
        0,
        "\
gun (abstract)
ship
├── #hull
│   └── #gun -> gun
└── wreck (errors)
",
        "",
    );
}

#[test]
fn tree_of_an_unknown_archetype_exits_with_2() {
    check(
        &Project::demo().run(&["tree", "enemies/goblim"]),
        2,
        "",
        "error: no archetype `enemies/goblim` in `archetypes`; did you mean `enemies/goblin`?\n",
    );
}

// ---------------------------------------------------------------------------------------------
// schema

const SCHEMA_PATH: &str = "assets/schema/archetype.schema.json";

fn shipped_schema() -> Value {
    parse(&std::fs::read_to_string(repo_root().join(SCHEMA_PATH)).unwrap())
}

#[test]
fn the_checked_in_schema_is_up_to_date() {
    let run = run_in(&repo_root(), &["schema"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let checked_in = std::fs::read_to_string(repo_root().join(SCHEMA_PATH)).unwrap();
    assert!(
        run.stdout == checked_in,
        "{SCHEMA_PATH} is stale (the components or the archetypes changed). Regenerate it with\n\n    cargo run -p archetool -- schema --out {SCHEMA_PATH}\n"
    );
}

#[test]
fn schema_out_writes_the_same_text_as_stdout_making_its_directory() {
    let project = Project::demo();
    let printed = project.run(&["schema"]);
    check(&project.run(&["schema", "--out", "schema.json"]), 0, "", "");
    assert_eq!(project.read("schema.json"), printed.stdout);
    assert!(printed.stdout.ends_with("}\n"));
    // A directory that does not exist yet is made.
    check(
        &project.run(&["schema", "--out", "editor/schemas/archetype.json"]),
        0,
        "",
        "",
    );
    assert_eq!(
        project.read("editor/schemas/archetype.json"),
        printed.stdout
    );
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema() {
    let schema = shipped_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(jsonschema::meta::is_valid(&schema));
    // Archetype names are suggested, not enforced (see `cli::language`).
    let names = &schema["$defs"]["archetype-name"]["examples"];
    assert!(names.as_array().unwrap().contains(&json!("enemies/goblin")));
    // Field descriptions come from the components' doc comments.
    assert_eq!(
        schema["$defs"]["Health"]["properties"]["max"]["description"],
        "Hit points when fully healed."
    );
}

#[test]
fn every_demo_archetype_file_follows_the_schema() {
    let validator = jsonschema::validator_for(&shipped_schema()).unwrap();
    let project = Project::demo();
    for file in project.archetype_files() {
        let instance = parse(&project.read(&file));
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|error| error.to_string())
            .collect();
        assert!(errors.is_empty(), "{file}: {errors:?}");
    }
}

/// Files the schema and the loader both accept: partial component values (the parent has the
/// rest), `null` removing a component, old component names, every top-level key.
#[test]
fn the_schema_accepts_what_the_loader_accepts() {
    let validator = jsonschema::validator_for(&shipped_schema()).unwrap();
    for text in [
        r#"{ "extends": "enemies/goblin", "components": { "Health": { "max": 20 } } }"#,
        r#"{ "extends": ["enemies/goblin", "traits/leader"], "components": { "Melee": null } }"#,
        r#"{ "extends": "enemies/goblin", "components": { "MoveSpeed": { "value": 3 } } }"#,
        r#"{ "$schema": "x.json", "format": 1, "abstract": true, "components": { "Glyph": { "color": "Red" } } }"#,
        r##"{ "extends": "structures/turret", "components": { "Turret": null }, "children": { "gun": { "archetype": "structures/gun" }, "sensor": null, "lamp": { "components": { "Transform": { "translation": [0, 2, 0] } } } } }"##,
    ] {
        let project = Project::demo();
        project.write("archetypes/test/new.json", text);
        let errors: Vec<String> = validator
            .iter_errors(&parse(text))
            .map(|error| error.to_string())
            .collect();
        assert!(errors.is_empty(), "schema rejects {text}: {errors:?}");
        let run = project.run(&["validate"]);
        assert_eq!(run.code, 0, "loader rejects {text}: {}", run.stdout);
    }
}

/// Typical mistakes: the schema (what the editor underlines) and the loader (what `validate`
/// reports) both reject them.
#[test]
fn the_schema_and_the_loader_reject_typical_mistakes() {
    let validator = jsonschema::validator_for(&shipped_schema()).unwrap();
    for (text, code) in [
        // An unknown component.
        (
            r#"{ "extends": "enemies/goblin", "components": { "Helth": { "max": 20 } } }"#,
            "unknown-component",
        ),
        // A typo'd field.
        (
            r#"{ "extends": "enemies/goblin", "components": { "Health": { "maxx": 20 } } }"#,
            "unknown-field",
        ),
        // A value of the wrong type.
        (
            r#"{ "extends": "enemies/goblin", "components": { "Health": { "max": "lots" } } }"#,
            "invalid-component",
        ),
        // An unknown enum value.
        (
            r#"{ "extends": "enemies/goblin", "components": { "Faction": "Hostle" } }"#,
            "invalid-component",
        ),
        // A typo'd top-level key.
        (
            r#"{ "extend": "enemies/goblin", "components": {} }"#,
            "unknown-key",
        ),
        // A parent whose name is not a name (one that is well formed but does not exist is
        // only the loader's to refuse: the schema never flags a file created since).
        (
            r#"{ "extends": "enemies/goblin.json", "components": {} }"#,
            "invalid-name",
        ),
        // A component the library sets itself.
        (
            r##"{ "extends": "enemies/goblin", "components": { "Parent": "#" } }"##,
            "reserved-component",
        ),
        // A typo'd key in a child entry.
        (
            r#"{ "extends": "structures/turret", "children": { "gun": { "archetyp": "structures/gun" } } }"#,
            "unknown-key",
        ),
        // A format version that does not exist.
        (
            r#"{ "format": 2, "extends": "enemies/goblin" }"#,
            "unsupported-format",
        ),
    ] {
        assert!(!validator.is_valid(&parse(text)), "schema accepts {text}");
        let project = Project::demo();
        project.write("archetypes/test/new.json", text);
        let run = project.run(&["validate", "--format", "json"]);
        assert_eq!(run.code, 1, "loader accepts {text}");
        let codes: Vec<Value> = run
            .stdout
            .lines()
            .map(|line| parse(line)["code"].clone())
            .collect();
        assert!(codes.contains(&json!(code)), "{text}: {codes:?}");
    }
}

#[test]
fn the_vscode_settings_map_archetype_files_to_the_schema() {
    let settings =
        parse(&std::fs::read_to_string(repo_root().join(".vscode/settings.json")).unwrap());
    assert_eq!(
        settings["json.schemas"],
        json!([{ "fileMatch": ["/archetypes/**/*.json"], "url": "./assets/schema/archetype.schema.json" }])
    );
}

// ---------------------------------------------------------------------------------------------
// fmt

/// Every archetype file's parsed content, by path.
fn contents(project: &Project) -> Vec<(String, Value)> {
    project
        .archetype_files()
        .into_iter()
        .map(|file| {
            let value = parse(&project.read(&file));
            (file, value)
        })
        .collect()
}

#[test]
fn fmt_keeps_the_meaning_of_every_demo_file_and_is_idempotent() {
    let project = Project::demo();
    let before = contents(&project);
    let run = project.run(&["fmt"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(contents(&project), before);
    let once: Vec<String> = project
        .archetype_files()
        .iter()
        .map(|f| project.read(f))
        .collect();

    check(
        &project.run(&["fmt", "--check"]),
        0,
        &all_formatted(&project),
        "",
    );
    check(&project.run(&["fmt"]), 0, &all_formatted(&project), "");
    let twice: Vec<String> = project
        .archetype_files()
        .iter()
        .map(|f| project.read(f))
        .collect();
    assert_eq!(twice, once);
    check(
        &project.run(&["validate"]),
        0,
        &format!("{} archetypes, 0 errors, 0 warnings\n", before.len()),
        "",
    );
}

#[test]
fn fmt_writes_the_canonical_layout() {
    let project = Project::with(&[(
        "archetypes/turret.json",
        "{\"children\":{\"sensor\":{\"components\":{\"Sensor\":{\"range\":9}}},\"gun\":{\"components\":{\"Transform\":{\"translation\":[1,0,0]}},\"archetype\":\"gun\"}},\r\n\"components\":{\"Turret\":{\"sensor\":\"#sensor\",\"gun\":\"#gun\"},\"Name\":\"Turret\",\"Health\":{\"max\":40.0,\"current\":4e1}},\"extends\":[\"a\",\"b\"],\"abstract\":false,\"$schema\":\"s.json\"}",
    )]);
    check(
        &project.run(&["fmt"]),
        0,
        "formatted archetypes/turret.json\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/turret.json"),
        r##"{
  "$schema": "s.json",
  "abstract": false,
  "extends": ["a", "b"],
  "components": {
    "Health": { "current": 4e1, "max": 40.0 },
    "Name": "Turret",
    "Turret": { "gun": "#gun", "sensor": "#sensor" }
  },
  "children": {
    "gun": {
      "archetype": "gun",
      "components": {
        "Transform": { "translation": [1, 0, 0] }
      }
    },
    "sensor": {
      "components": {
        "Sensor": { "range": 9 }
      }
    }
  }
}
"##
    );
}

#[test]
fn fmt_keeps_the_meaning_of_tricky_files() {
    let long_array: Vec<String> = (0..60).map(|i| format!("{i}.5")).collect();
    let tricky = [
        // Numbers keep their spelling.
        r#"{"components":{"A":{"x":1.0,"y":1,"z":-0.0,"e":1E+2,"f":1.5e-3,"big":12345678901234567890123,"neg":-7}}}"#.to_string(),
        // Strings keep their escapes; keys too.
        r#"{"components":{"Name":"caf\u00e9 \"q\" \/ \\ \n\t☃","B":{"k\u0065y":"\ud83d\ude00"}}}"#.to_string(),
        // Empty containers, nested arrays of objects, arrays of arrays.
        r#"{"components":{"A":{},"B":[],"C":[{"x":[1,[2,3],{}]},[]],"D":[[1,2],[3]]}}"#.to_string(),
        // Null everywhere it may appear.
        r#"{"components":{"Melee":null,"B":{"x":null}},"children":{"a":null}}"#.to_string(),
        // Unknown top-level keys (the loader reports them) come last, sorted.
        r#"{"zeta":1,"components":{},"alpha":{"b":1,"a":2},"extends":"x"}"#.to_string(),
        // Deeply nested children.
        r#"{"children":{"a":{"children":{"b":{"children":{"c":{"archetype":"x","components":{"Z":1,"A":2}}}}}}}}"#.to_string(),
        // A long array of scalars (one element per line) and a short one.
        format!(r#"{{"components":{{"A":{{"long":[{}],"short":[true,false,null,"s"]}}}}}}"#, long_array.join(",")),
        // Whitespace of every kind, a byte-order mark, CRLF.
        "\u{feff}{ \t\"components\" :\r\n {\r\n\"A\" : [ 1 , 2 ] } }\r\n".to_string(),
        // Not an object at the top level (the loader reports it; fmt still formats it).
        r#"[{"b":1,"a":2},3]"#.to_string(),
    ];
    for (i, text) in tricky.iter().enumerate() {
        let project = Project::with(&[("archetypes/tricky.json", text)]);
        let run = project.run(&["fmt"]);
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{text}: {run:?}");
        let once = project.read("archetypes/tricky.json");
        assert_eq!(
            parse(&once),
            parse(text.trim_start_matches('\u{feff}')),
            "case {i}: {once}"
        );
        assert!(once.ends_with("}\n") || once.ends_with("]\n"), "{once}");
        assert!(
            !once.contains('\r') && !once.starts_with('\u{feff}'),
            "{once:?}"
        );
        check(
            &project.run(&["fmt", "--check"]),
            0,
            &all_formatted(&project),
            "",
        );
        check(&project.run(&["fmt"]), 0, &all_formatted(&project), "");
        assert_eq!(project.read("archetypes/tricky.json"), once);
    }
    // Spelling kept, exactly.
    let project = Project::with(&[("archetypes/tricky.json", &tricky[0])]);
    project.run(&["fmt"]);
    let text = project.read("archetypes/tricky.json");
    for spelling in [
        "\"x\": 1.0,",
        "\"e\": 1E+2,",
        "\"z\": -0.0\n",
        "\"f\": 1.5e-3,",
        "\"big\": 12345678901234567890123,",
        "\"neg\": -7,",
    ] {
        assert!(text.contains(spelling), "{spelling} in {text}");
    }
    let project = Project::with(&[("archetypes/tricky.json", &tricky[1])]);
    project.run(&["fmt"]);
    let text = project.read("archetypes/tricky.json");
    assert!(text.contains(r#""k\u0065y": "\ud83d\ude00""#), "{text}");
    assert!(
        text.contains(r#""Name": "caf\u00e9 \"q\" \/ \\ \n\t☃""#),
        "{text}"
    );
}

/// CI runs the tests: the repository's own data stays formatted.
#[test]
fn the_repository_archetypes_are_formatted() {
    let dir = repo_root().join("archetypes");
    let mut files = Vec::new();
    collect_json(&dir, &mut files);
    check(
        &run_in(
            &repo_root(),
            &["fmt", "--check", "--dir", dir.to_str().unwrap()],
        ),
        0,
        &format!("{} checked, all formatted\n", counted(files.len(), "file")),
        "",
    );
}

#[test]
fn fmt_puts_short_component_values_on_one_line() {
    let long = "x".repeat(70);
    let text = format!(
        r#"{{"components":{{"Path":{{"points":[{{"y":2,"x":1}},{{"x":3,"y":4}}],"closed":false}},"Health":{{"max":12,"current":12}},"Name":"{long}","Spawner":{{"archetype":"{long}","interval":4.0}},"Velocity":{{}}}}}}"#
    );
    let project = Project::with(&[("archetypes/a.json", &text)]);
    check(
        &project.run(&["fmt"]),
        0,
        "formatted archetypes/a.json\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/a.json"),
        format!(
            r#"{{
  "components": {{
    "Health": {{ "current": 12, "max": 12 }},
    "Name": "{long}",
    "Path": {{
      "closed": false,
      "points": [
        {{ "x": 1, "y": 2 }},
        {{ "x": 3, "y": 4 }}
      ]
    }},
    "Spawner": {{
      "archetype": "{long}",
      "interval": 4.0
    }},
    "Velocity": {{}}
  }}
}}
"#
        )
    );
}

#[test]
fn fmt_check_lists_unformatted_files_and_changes_nothing() {
    let ugly = r#"{"components":{"Name":"Goblin"}}"#;
    let pretty = "{\n  \"components\": {\n    \"Name\": \"Goblin\"\n  }\n}\n";
    let project = Project::with(&[
        ("archetypes/a.json", ugly),
        ("archetypes/b.json", pretty),
        ("archetypes/c/d.json", ugly),
    ]);
    check(
        &project.run(&["fmt", "--check"]),
        1,
        "archetypes/a.json\narchetypes/c/d.json\n2 files not formatted; run `archetool fmt` to format them\n",
        "",
    );
    assert_eq!(project.read("archetypes/a.json"), ugly);
    check(
        &project.run(&["fmt"]),
        0,
        "formatted archetypes/a.json\nformatted archetypes/c/d.json\n",
        "",
    );
    assert_eq!(project.read("archetypes/a.json"), pretty);
    check(
        &project.run(&["fmt", "--check"]),
        0,
        &all_formatted(&project),
        "",
    );
}

#[test]
fn fmt_reports_files_that_are_not_json_and_leaves_them_alone() {
    let broken = "{\n  \"components\": {\n    \"Name\": \"Orc\",\n  }\n}\n";
    let twice = "{ \"components\": {}, \"components\": {} }";
    let project = Project::with(&[
        ("archetypes/orc.json", broken),
        ("archetypes/twice.json", twice),
        (
            "archetypes/goblin.json",
            r#"{"components":{"Name":"Goblin"}}"#,
        ),
    ]);
    check(
        &project.run(&["fmt"]),
        1,
        "archetypes/orc.json:3:18: error[syntax]: trailing comma; remove the `,` after the last member\n\
         archetypes/twice.json:1:21: error[duplicate-key]: duplicate key `components` (the first one is on line 1)\n\
         formatted archetypes/goblin.json\n",
        "",
    );
    assert_eq!(project.read("archetypes/orc.json"), broken);
    assert_eq!(project.read("archetypes/twice.json"), twice);
    let run = project.run(&["fmt", "--check"]);
    assert_eq!(run.code, 1);
}

// ---------------------------------------------------------------------------------------------
// new

#[test]
fn new_scaffolds_a_file_that_loads() {
    let project = Project::demo();
    check(
        &project.run(&["new", "enemies/troll", "--extends", "enemies/goblin"]),
        0,
        "archetypes/enemies/troll.json\nwrote assets/schema/archetype.schema.json\n",
        "",
    );
    // The `$schema` it writes names a file that exists: the schema, made with its directory.
    assert!(project
        .path("archetypes/enemies/../../assets/schema/archetype.schema.json")
        .is_file());
    assert_eq!(
        project.read("archetypes/enemies/troll.json"),
        "{\n  \"$schema\": \"../../assets/schema/archetype.schema.json\",\n  \"extends\": \"enemies/goblin\",\n  \"components\": {}\n}\n"
    );
    check(
        &project.run(&[
            "new",
            "bosses/ogre/king",
            "--extends",
            "enemies/orc",
            "--extends",
            "traits/leader",
        ]),
        0,
        "archetypes/bosses/ogre/king.json\nrefreshed assets/schema/archetype.schema.json\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/bosses/ogre/king.json"),
        "{\n  \"$schema\": \"../../../assets/schema/archetype.schema.json\",\n  \"extends\": [\"enemies/orc\", \"traits/leader\"],\n  \"components\": {}\n}\n"
    );
    check(
        &project.run(&["new", "rock"]),
        0,
        "archetypes/rock.json\nrefreshed assets/schema/archetype.schema.json\n",
        "",
    );
    assert_eq!(
        project.read("archetypes/rock.json"),
        "{\n  \"$schema\": \"../assets/schema/archetype.schema.json\",\n  \"components\": {}\n}\n"
    );
    // The new files load, are formatted, and follow the schema.
    let count = project.archetype_files().len();
    check(
        &project.run(&["validate"]),
        0,
        &format!("{count} archetypes, 0 errors, 0 warnings\n"),
        "",
    );
    let unformatted = project.run(&["fmt", "--check"]).stdout;
    for new in ["enemies/troll.json", "bosses/ogre/king.json", "rock.json"] {
        assert!(!unformatted.contains(new), "{new} in {unformatted}");
    }
    let validator = jsonschema::validator_for(&shipped_schema()).unwrap();
    assert!(validator.is_valid(&parse(&project.read("archetypes/enemies/troll.json"))));
}

#[test]
fn new_refuses_existing_names_bad_names_and_unknown_parents() {
    let project = Project::demo();
    let goblin = project.read("archetypes/enemies/goblin.json");
    check(
        &project.run(&["new", "enemies/goblin"]),
        2,
        "",
        "error: archetype `enemies/goblin` already exists (`archetypes/enemies/goblin.json`)\n",
    );
    assert_eq!(project.read("archetypes/enemies/goblin.json"), goblin);
    check(
        &project.run(&["new", "enemies/Goblin"]),
        2,
        "",
        "error: archetype `enemies/goblin` (`archetypes/enemies/goblin.json`) already exists; names that differ only in letter case clash on Windows and macOS\n",
    );
    check(
        &project.run(&["new", "enemies/troll.json"]),
        2,
        "",
        "error: archetype name `enemies/troll.json` includes the `.json` extension; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`; did you mean `enemies/troll`?\n",
    );
    check(
        &project.run(&["new", "../troll"]),
        2,
        "",
        "error: archetype name `../troll` leaves the archetypes root; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`\n",
    );
    check(
        &project.run(&["new", "big troll"]),
        2,
        "",
        "error: archetype name `big troll` contains a space; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`\n",
    );
    check(
        &project.run(&["new", "enemies/troll", "--extends", "enemies/gobiln"]),
        2,
        "",
        "error: no archetype `enemies/gobiln` in `archetypes`; did you mean `enemies/goblin`?\n",
    );
    assert!(!project.path("archetypes/enemies/troll.json").exists());
    // What the loader would refuse in the new file: a name over the length limit, another
    // archetype's former name.
    check(
        &project.run(&["new", &"t".repeat(251)]),
        2,
        "",
        &format!("error: archetype name `{}…` (251 bytes) is over the limit of 250 bytes; a name's file, `.json` added, must fit in the 255 bytes file systems allow for a file name\n", "t".repeat(64)),
    );
    project.write(
        "archetypes/enemies/orc.json",
        "{ \"formerly\": [\"enemies/grunt\"] }",
    );
    check(
        &project.run(&["new", "enemies/grunt"]),
        2,
        "",
        "error: `enemies/grunt` is a former name of archetype `enemies/orc` (in its `formerly`), so it still names that archetype; choose another name\n",
    );
    assert!(!project.path("archetypes/enemies/grunt.json").exists());
}

// ---------------------------------------------------------------------------------------------
// migrate

#[test]
fn migrate_renames_components_written_under_old_names() {
    let old = r#"{
  "format": 1,
  "extends": "enemies/enemy",
  "components": { "Name": "Goblin", "MoveSpeed": { "value": 2.50 } },
  "children": {
    "torch": { "components": { "MoveSpeed": { "value": 1e0 } } }
  }
}
"#;
    let project = Project::demo();
    project.write("archetypes/enemies/goblin.json", old);
    let report = "\
archetypes/enemies/goblin.json:4:37: component `MoveSpeed` is now `Speed`
archetypes/enemies/goblin.json:6:32: component `MoveSpeed` is now `Speed`
";
    check(
        &project.run(&["migrate", "--check"]),
        1,
        &format!("{report}1 file to migrate; run `archetool migrate` to update it\n"),
        "",
    );
    assert_eq!(project.read("archetypes/enemies/goblin.json"), old);

    check(
        &project.run(&["migrate"]),
        0,
        &format!("{report}migrated 1 file\n"),
        "",
    );
    // Only the names change: layout and number spelling stay.
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        old.replace("MoveSpeed", "Speed")
    );
    check(
        &project.run(&["migrate"]),
        0,
        &none_to_migrate(&project, None),
        "",
    );
    check(
        &project.run(&["migrate", "--check"]),
        0,
        &none_to_migrate(&project, None),
        "",
    );
    assert_eq!(project.run(&["validate"]).code, 0);
}

#[test]
fn migrate_leaves_the_demo_alone() {
    let project = Project::demo();
    let nothing = none_to_migrate(&project, None);
    check(&project.run(&["migrate", "--check"]), 0, &nothing, "");
    check(&project.run(&["migrate"]), 0, &nothing, "");
}

#[test]
fn migrate_reports_what_it_cannot_migrate() {
    let project = Project::with(&[
        (
            "archetypes/both.json",
            r#"{ "components": { "MoveSpeed": { "value": 1 }, "Speed": { "value": 2 } } }"#,
        ),
        (
            "archetypes/future.json",
            r#"{ "format": 7, "components": { "MoveSpeed": { "value": 1 } } }"#,
        ),
        (
            "archetypes/broken.json",
            r#"{ "components": { "MoveSpeed": { "value": 1 }, } }"#,
        ),
    ]);
    check(
        &project.run(&["migrate"]),
        1,
        "\
archetypes/broken.json:1:46: error[syntax]: trailing comma; remove the `,` after the last member
archetypes/both.json:1:19: error[malformed]: `MoveSpeed` and `Speed` both set component `Speed`; keep one
archetypes/future.json:1:13: error[unsupported-format]: format version 7 is newer than this tool knows (up to 1); left as is
",
        "",
    );
    assert!(project.read("archetypes/both.json").contains("MoveSpeed"));
    assert!(project.read("archetypes/future.json").contains("MoveSpeed"));
}

// ---------------------------------------------------------------------------------------------
// scene

use archetool::demo::components::{registry, Armor, Health, Speed};
use archetype_engine::{
    load_scene, save_scene, ArchetypeInstance, ArchetypeLibrary, Children, ComponentOptions,
    ComponentRegistry, LoadOptions, Name, SceneEncoding, SceneLoadOptions, SceneSaveOptions,
    StableId,
};
use hecs::{Entity, World};

const LEVEL: &str = "assets/scenes/level.scene.json";

impl Project {
    /// The project's archetypes, loaded with the demo's components.
    fn library(&self) -> ArchetypeLibrary {
        ArchetypeLibrary::load(self.path("archetypes"), registry()).unwrap()
    }

    /// Saves `world` as the scene file `relative` (binary for `.bin`).
    fn save(&self, relative: &str, world: &World, library: &ArchetypeLibrary) {
        let path = self.path(relative);
        let encoding = SceneEncoding::for_path(&path);
        let bytes = save_scene(world, library, encoding, &SceneSaveOptions::default()).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// Loads the scene file `relative` into a new world.
    fn load(&self, relative: &str, library: &ArchetypeLibrary) -> World {
        let mut world = World::new();
        let bytes = std::fs::read(self.path(relative)).unwrap();
        load_scene(
            &bytes,
            None,
            &mut world,
            library,
            &SceneLoadOptions::default(),
        )
        .unwrap();
        world
    }
}

fn set_id(world: &mut World, entity: Entity, id: u64) {
    *world.get::<&mut StableId>(entity).unwrap() = StableId(id);
}

/// The entity with stable ID `id`.
fn by_id(world: &World, id: u64) -> Entity {
    world
        .query::<(Entity, &StableId)>()
        .iter()
        .find(|(_, found)| found.0 == id)
        .map(|(entity, _)| entity)
        .unwrap()
}

/// A small level: a turret (0x10, with its child entities `gun` 0x11 and `sensor` 0x12), two
/// goblins (0x20, and 0x21 hurt) and a rock that is no archetype's (0x30). IDs are fixed so
/// files and reports are too.
fn level(library: &ArchetypeLibrary) -> World {
    let mut world = World::new();
    let turret = library.spawn(&mut world, "structures/turret").unwrap();
    let children: Vec<Entity> = world
        .get::<&Children>(turret)
        .unwrap()
        .0
        .iter()
        .map(|child| child.0)
        .collect();
    set_id(&mut world, turret, 0x10);
    for child in children {
        let marker = *world.get::<&ArchetypeInstance>(child).unwrap();
        let id = match library.node_path(marker).unwrap() {
            "gun" => 0x11,
            _ => 0x12,
        };
        set_id(&mut world, child, id);
    }
    for (id, current) in [(0x20, 12.0), (0x21, 5.0)] {
        let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
        set_id(&mut world, goblin, id);
        world.get::<&mut Health>(goblin).unwrap().current = current;
    }
    world.spawn((
        StableId(0x30),
        Name("Rock".to_string()),
        Health {
            current: 100.0,
            max: 100.0,
        },
    ));
    world
}

/// The demo project with the level saved as `assets/scenes/level.scene.json`.
fn level_project() -> (Project, ArchetypeLibrary) {
    let project = Project::demo();
    let library = project.library();
    project.save(LEVEL, &level(&library), &library);
    (project, library)
}

#[test]
fn scene_info_summarizes_json_and_binary_scenes() {
    let (project, library) = level_project();
    let summary = "\
encoding:  JSON
format:    2 (current)
entities:  6
shared:    0 entries
per archetype:
  enemies/goblin     2
  structures/turret  3 (1 instance, 2 child entities)
  (no archetype)     1
components used (by how many entities):
  Children  1
  Health    2
  Name      1
  Parent    2
";
    check(
        &project.run(&["scene", "info", LEVEL]),
        0,
        &format!("file:      {LEVEL}\n{summary}"),
        "",
    );
    // The same world saved as binary: the same summary.
    let binary = "assets/scenes/level.scene.bin";
    project.save(binary, &level(&library), &library);
    check(
        &project.run(&["scene", "info", binary]),
        0,
        &format!(
            "file:      {binary}\n{}",
            summary
                .replace("encoding:  JSON", "encoding:  binary")
                .replace("format:    2 (current)", "format:    4 (current)")
        ),
        "",
    );
}

/// A JSON scene in the current format is summarized as written, without the archetypes.
#[test]
fn scene_info_counts_removed_components() {
    let project = Project::with(&[(
        "s.scene.json",
        r#"{ "format": 2, "entities": [
            { "id": "0000000000000001", "archetype": "enemies/goblin", "components": { "Melee": null, "Health": { "max": 3 } } },
            { "id": "0000000000000002", "archetype": "enemies/goblin", "components": { "Melee": { "damage": 9 } } },
            { "id": "0000000000000003", "archetype": "enemies/orc", "components": { "Melee": null } }
        ] }"#,
    )]);
    std::fs::remove_dir(project.path("archetypes")).unwrap();
    check(
        &project.run(&["scene", "info", "s.scene.json"]),
        0,
        "\
file:      s.scene.json
encoding:  JSON
format:    2 (current)
entities:  3
shared:    0 entries
per archetype:
  enemies/goblin  2
  enemies/orc     1
components used (by how many entities):
  Health  1
  Melee   1, removed from 2
",
        "",
    );
}

#[test]
fn scene_info_of_an_older_scene_says_it_needs_migrating() {
    let project = Project::demo();
    let fixture = repo_root().join("tests/fixtures/scenes/format1.scene.json");
    check(
        &project.run(&["scene", "info", fixture.to_str().unwrap()]),
        0,
        &format!(
            "\
file:      {}
encoding:  JSON
format:    1 (current is 2; `archetool migrate` upgrades the file)
entities:  3
shared:    0 entries
per archetype:
  enemies/goblin  1
  items/door      1
  items/key       1
components used (by how many entities):
  Door    1
  Health  1
  Key     1
  Speed   1
",
            fixture.display()
        ),
        "",
    );
}

#[test]
fn scene_check_loads_the_scene_with_the_archetypes() {
    let (project, library) = level_project();
    check(
        &project.run(&["scene", "check", LEVEL]),
        0,
        &format!("{LEVEL}: ok (6 entities: 5 from archetypes, 1 plain)\n"),
        "",
    );
    project.save("assets/scenes/level.scene.bin", &level(&library), &library);
    check(
        &project.run(&["scene", "check", "assets/scenes/level.scene.bin"]),
        0,
        "assets/scenes/level.scene.bin: ok (6 entities: 5 from archetypes, 1 plain)\n",
        "",
    );
}

/// A game refuses a scene with fields its components do not have (a re-save would lose them);
/// `scene check` lists every one at once.
#[test]
fn scene_check_lists_every_unknown_field() {
    let project = Project::demo();
    project.write(
        "s.scene.json",
        r#"{
  "format": 2,
  "entities": [
    { "id": "00000000000000a1", "components": { "Health": { "current": 1, "max": 2, "maxx": 12 } } },
    { "id": "00000000000000b2", "archetype": "enemies/goblin", "components": { "Health": { "curent": 1.0 } } }
  ]
}
"#,
    );
    let expected = r#"s.scene.json:4:85: error[unknown-field]: entity 00000000000000a1: unknown field `maxx` in component `Health`
  |
4 |     { "id": "00000000000000a1", "components": { "Health": { "current": 1, "max": 2, "maxx": 12 } } },
  |                                                                                     ^^^^^^
  |
  = help: did you mean `max`?

s.scene.json:5:92: error[unknown-field]: entity 00000000000000b2: unknown field `curent` in component `Health`
  |
5 |     { "id": "00000000000000b2", "archetype": "enemies/goblin", "components": { "Health": { "curent": 1.0 } } }
  |                                                                                            ^^^^^^^^
  |
  = help: did you mean `current`?

s.scene.json: does not load: 2 unknown fields (a game can skip them with `SceneLoadOptions::unknown_fields`)
"#;
    check(
        &project.run(&["scene", "check", "s.scene.json"]),
        1,
        expected,
        "",
    );
}

/// `scene check` says what loading changes because the archetypes changed since the save
/// (a child gained, an entry left out), and exits with 0: those are not errors.
#[test]
fn scene_check_says_what_loading_changes_after_an_archetype_update() {
    let (project, library) = level_project();
    let gun = std::fs::read_to_string(project.path("archetypes/structures/turret.json")).unwrap();
    // The update: the sensor is gone (the turret aims with its gun) and a scope is new.
    let updated = gun
        .replace("\"sensor\": \"#sensor\"", "\"sensor\": \"#gun\"")
        .replace("\"sensor\": {", "\"scope\": {");
    assert_ne!(updated, gun);
    project.write("archetypes/structures/turret.json", &updated);
    let run = project.run(&["scene", "check", LEVEL]);
    let stdout = run.stdout.replace(char::is_whitespace, " ");
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{}", run.stdout);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("{LEVEL}:"))
            && lines[0].ends_with(": warning[unknown-child]: entity 0000000000000012: left out; archetype `structures/turret` has no child `sensor` any more"),
        "{}",
        run.stdout
    );
    let note = lines.iter().find(|l| l.starts_with("note: ")).unwrap();
    assert!(
        note.starts_with("note: entity 0000000000000010: spawned child `scope` (")
            && note.ends_with(
                "), which archetype `structures/turret` gained since the scene was saved"
            ),
        "{note}"
    );
    assert_eq!(
        lines.last().unwrap(),
        &format!("{LEVEL}: ok (6 entities: 5 from archetypes, 1 plain)"),
        "{stdout}"
    );
    let _ = library;
}

/// `scene info` shows the game's `meta`; `migrate` keeps it.
#[test]
fn scene_info_shows_the_games_meta() {
    let project = Project::demo();
    project.write(
        "m.scene.json",
        r#"{ "format": 1, "meta": { "game_version": "1.4.0", "slot": 2 }, "entities": [] }"#,
    );
    let run = project.run(&["scene", "info", "m.scene.json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("shared:    0 entries\nmeta:      {\"game_version\":\"1.4.0\",\"slot\":2}\n"),
        "{}",
        run.stdout
    );
    check(
        &project.run(&["migrate", "--scenes", "."]),
        0,
        "./m.scene.json:1:13: format 1 is now 2\nmigrated 1 file\n",
        "",
    );
    assert_eq!(
        project.read("m.scene.json"),
        "{\n  \"format\": 2,\n  \"meta\": {\n    \"game_version\": \"1.4.0\",\n    \"slot\": 2\n  },\n  \"entities\": []\n}\n"
    );
}

#[test]
fn scene_check_reports_where_a_scene_goes_wrong() {
    let scene =
        |entity: &str| format!("{{\n  \"format\": 2,\n  \"entities\": [\n    {entity}\n  ]\n}}\n");
    let cases = [
        (
            r#"{ "id": "000000000000000a", "components": { "Helth": { "max": 3 } } }"#,
            r#"s.scene.json:4:49: error[unknown-component]: entity 000000000000000a: unknown component `Helth`
  |
4 |     { "id": "000000000000000a", "components": { "Helth": { "max": 3 } } }
  |                                                 ^^^^^^^
  |
  = help: did you mean `Health`?
"#,
        ),
        (
            r#"{ "id": "000000000000000a", "components": { "Health": { "current": 1, "max": "lots" } } }"#,
            r#"s.scene.json:4:82: error[invalid-component]: entity 000000000000000a: `Health.max`: invalid type: string "lots", expected f32
  |
4 |     { "id": "000000000000000a", "components": { "Health": { "current": 1, "max": "lots" } } }
  |                                                                                  ^^^^^^
"#,
        ),
        (
            r#"{ "id": "000000000000000b", "archetype": "items/key", "components": { "Key": { "door": "00000000000000ff" } } }"#,
            r#"s.scene.json:4:92: error[invalid-component]: entity 000000000000000b: `Key.door`: refers to entity 00000000000000ff, which is not in this scene
  |
4 |     { "id": "000000000000000b", "archetype": "items/key", "components": { "Key": { "door": "00000000000000ff" } } }
  |                                                                                            ^^^^^^^^^^^^^^^^^^
"#,
        ),
        (
            r#"{ "id": "000000000000000a", "archetype": "enemies/gobln" }"#,
            r#"s.scene.json:4:46: error[unknown-archetype]: entity 000000000000000a: unknown archetype `enemies/gobln`
  |
4 |     { "id": "000000000000000a", "archetype": "enemies/gobln" }
  |                                              ^^^^^^^^^^^^^^^
  |
  = help: did you mean `enemies/goblin`?
"#,
        ),
    ];
    let project = Project::demo();
    for (entity, expected) in cases {
        project.write("s.scene.json", &scene(entity));
        check(
            &project.run(&["scene", "check", "s.scene.json"]),
            1,
            expected,
            "",
        );
    }
    // A binary scene's problems are placed by byte offset.
    let library = project.library();
    project.save("s.scene.bin", &level(&library), &library);
    let bytes = std::fs::read(project.path("s.scene.bin")).unwrap();
    std::fs::write(project.path("s.scene.bin"), &bytes[..bytes.len() - 3]).unwrap();
    let run = project.run(&["scene", "check", "s.scene.bin"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    assert!(
        run.stdout.starts_with("s.scene.bin (byte ") && run.stdout.contains("error[malformed]"),
        "{}",
        run.stdout
    );
    // Archetypes with errors may be why; they are mentioned.
    project.write(
        "archetypes/enemies/goblin.json",
        r#"{ "extends": "enemies/enemy", "components": { "Helth": {} } }"#,
    );
    project.write(
        "s.scene.json",
        &scene(r#"{ "id": "000000000000000a", "archetype": "enemies/goblin" }"#),
    );
    let run = project.run(&["scene", "check", "s.scene.json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.ends_with(
            "note: the archetypes have 1 error; `archetool validate --dir archetypes` lists them\n"
        ),
        "{}",
        run.stdout
    );
    check(
        &project.run(&["scene", "check", "nope.scene.json"]),
        2,
        "",
        "error: scene file `nope.scene.json` not found\n",
    );
}

#[test]
fn scene_diff_lists_entity_differences_by_id() {
    let (project, library) = level_project();
    let mut world = level(&library);
    world.despawn(by_id(&world, 0x20)).unwrap();
    let hurt = by_id(&world, 0x21);
    world.get::<&mut Health>(hurt).unwrap().current = 9.0;
    world.insert_one(hurt, Armor { value: 1.0 }).unwrap();
    let rock = by_id(&world, 0x30);
    world.get::<&mut Name>(rock).unwrap().0 = "Boulder".to_string();
    world.remove_one::<Health>(rock).unwrap();
    let goblin = library.spawn(&mut world, "enemies/goblin").unwrap();
    set_id(&mut world, goblin, 0x22);
    project.save("assets/scenes/after.scene.json", &world, &library);

    check(
        &project.run(&["scene", "diff", LEVEL, "assets/scenes/after.scene.json"]),
        1,
        r#"- 0000000000000020 enemies/goblin
~ 0000000000000021 enemies/goblin
    + Armor: {"value": 1.0}
    ~ Health.current: 5.0 -> 9.0
+ 0000000000000022 enemies/goblin
~ 0000000000000030 (no archetype)
    - Health
    ~ Name: "Rock" -> "Boulder"
1 added, 1 removed, 2 changed
"#,
        "",
    );
    check(
        &project.run(&["scene", "diff", LEVEL, LEVEL]),
        0,
        SAME_SCENES,
        "",
    );
    // A binary scene of the same world is the same scene.
    project.save("assets/scenes/level.scene.bin", &level(&library), &library);
    check(
        &project.run(&["scene", "diff", LEVEL, "assets/scenes/level.scene.bin"]),
        0,
        SAME_SCENES,
        "",
    );
    project.save("assets/scenes/after.scene.bin", &world, &library);
    let run = project.run(&[
        "scene",
        "diff",
        "assets/scenes/level.scene.bin",
        "assets/scenes/after.scene.bin",
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.ends_with("1 added, 1 removed, 2 changed\n"),
        "{run:?}"
    );
}

/// Shared values are compared by content: their keys are content hashes.
#[test]
fn scene_diff_compares_shared_values_by_content() {
    let scene = |key: &str, gold: u32, gold_key: &str| {
        format!(
            r#"{{
  "format": 2,
  "shared": {{ "{key}": {{ "gold": {gold} }} }},
  "entities": [
    {{ "id": "0000000000000001", "components": {{ "Loot": {{ "table": {{ "$shared": "{gold_key}" }} }} }} }}
  ]
}}
"#
        )
    };
    let project = Project::with(&[
        (
            "a.scene.json",
            &scene("00000000000000aa", 5, "00000000000000aa"),
        ),
        (
            "b.scene.json",
            &scene("00000000000000bb", 6, "00000000000000bb"),
        ),
        (
            "c.scene.json",
            &scene("00000000000000cc", 5, "00000000000000cc"),
        ),
    ]);
    check(
        &project.run(&["scene", "diff", "a.scene.json", "b.scene.json"]),
        1,
        "~ 0000000000000001 (no archetype)\n    ~ Loot.table.gold: 5 -> 6\n0 added, 0 removed, 1 changed\n",
        "",
    );
    check(
        &project.run(&["scene", "diff", "a.scene.json", "c.scene.json"]),
        0,
        SAME_SCENES,
        "",
    );
    let run = project.run(&["scene", "info", "a.scene.json"]);
    assert!(
        run.stdout.contains("\nshared:    1 entry\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn scene_diff_lists_a_changed_sub_scene_placement() {
    let scene = |file: &str, name: &str| {
        format!(
            r#"{{ "format": 2, "entities": [
    {{ "id": "00000000000000c1", "scene": "{file}", "overrides": {{ "00000000000000a1": {{ "Name": "{name}" }} }} }}
] }}"#
        )
    };
    let project = Project::with(&[
        (
            "a.scene.json",
            &scene("rooms/armory.scene.json", "east guard"),
        ),
        (
            "b.scene.json",
            &scene("rooms/vault.scene.json", "west guard"),
        ),
    ]);
    check(
        &project.run(&["scene", "diff", "a.scene.json", "b.scene.json"]),
        1,
        r#"~ 00000000000000c1 (no archetype)
    scene: "rooms/armory.scene.json" -> "rooms/vault.scene.json"
    overrides: {"00000000000000a1": {"Name": "east guard"}} -> {"00000000000000a1": {"Name": "west guard"}}
0 added, 0 removed, 1 changed
"#,
        "",
    );
}

#[test]
fn scene_diff_reports_a_scene_that_does_not_load() {
    let (project, _) = level_project();
    project.write(
        "broken.scene.json",
        "{ \"format\": 1, \"entities\": [ { \"uid\": 7 } ] }",
    );
    let run = project.run(&["scene", "diff", LEVEL, "broken.scene.json"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{run:?}");
    assert!(
        run.stdout.starts_with("broken.scene.json:"),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// migrate: scenes

const FIXTURE: &str = "assets/scenes/format1.scene.json";

/// The demo project with the engine's scene fixture in the old format.
fn old_scene_project() -> Project {
    let project = Project::demo();
    project.write(
        FIXTURE,
        &std::fs::read_to_string(repo_root().join("tests/fixtures/scenes/format1.scene.json"))
            .unwrap(),
    );
    project
}

#[test]
fn migrate_upgrades_old_scenes_through_the_library() {
    let project = old_scene_project();
    let old = project.read(FIXTURE);
    let report = format!(
        "{FIXTURE}:2:13: format 1 is now 2\n{FIXTURE}:9:9: component `MoveSpeed` is now `Speed`\n"
    );
    check(
        &project.run(&["migrate", "--check"]),
        1,
        &format!("{report}1 file to migrate; run `archetool migrate` to update it\n"),
        "",
    );
    assert_eq!(project.read(FIXTURE), old);

    check(
        &project.run(&["migrate"]),
        0,
        &format!("{report}migrated 1 file\n"),
        "",
    );
    let migrated = parse(&project.read(FIXTURE));
    assert_eq!(migrated["format"], 2);
    assert_eq!(migrated["entities"][0]["id"], "00000000000000c0");
    assert_eq!(migrated["entities"][0]["archetype"], "items/key");
    assert_eq!(
        migrated["entities"][0]["components"]["Speed"],
        json!({"value": 0.5})
    );
    assert!(!project.read(FIXTURE).contains("MoveSpeed"));
    // What loads is what loaded before.
    let original = repo_root().join("tests/fixtures/scenes/format1.scene.json");
    check(
        &project.run(&["scene", "diff", original.to_str().unwrap(), FIXTURE]),
        0,
        SAME_SCENES,
        "",
    );
    check(
        &project.run(&["scene", "check", FIXTURE]),
        0,
        &format!("{FIXTURE}: ok (3 entities: 3 from archetypes, 0 plain)\n"),
        "",
    );
    let nothing = none_to_migrate(&project, Some(1));
    check(&project.run(&["migrate", "--check"]), 0, &nothing, "");
    check(&project.run(&["migrate"]), 0, &nothing, "");
}

#[test]
fn migrate_renames_components_in_binary_scenes() {
    // A binary scene written when `Speed` was called `MoveSpeed`.
    let project = Project::demo();
    let mut old_registry = ComponentRegistry::new();
    old_registry
        .register_with::<Speed>(ComponentOptions::new().name("MoveSpeed"))
        .unwrap();
    let old_library = ArchetypeLibrary::empty(
        project.path("archetypes"),
        old_registry,
        LoadOptions::default(),
    );
    let mut world = World::new();
    world.spawn((
        StableId(0x40),
        Name("Snail".to_string()),
        Speed { value: 0.5 },
    ));
    project.save("assets/scenes/old.scene.bin", &world, &old_library);
    let old = std::fs::read(project.path("assets/scenes/old.scene.bin")).unwrap();

    let report = "assets/scenes/old.scene.bin: component `MoveSpeed` is now `Speed`\n";
    check(
        &project.run(&["migrate", "--check"]),
        1,
        &format!("{report}1 file to migrate; run `archetool migrate` to update it\n"),
        "",
    );
    assert_eq!(
        std::fs::read(project.path("assets/scenes/old.scene.bin")).unwrap(),
        old
    );
    check(
        &project.run(&["migrate"]),
        0,
        &format!("{report}migrated 1 file\n"),
        "",
    );
    let library = project.library();
    let world = project.load("assets/scenes/old.scene.bin", &library);
    let snail = by_id(&world, 0x40);
    assert_eq!(world.get::<&Speed>(snail).unwrap().value, 0.5);
    check(
        &project.run(&["migrate"]),
        0,
        &none_to_migrate(&project, Some(1)),
        "",
    );
}

/// Binary format 2 had no checksum: it still loads, and `migrate` rewrites it in the current
/// format, which has one.
#[test]
fn migrate_adds_a_checksum_to_binary_scenes_of_format_2() {
    let (project, library) = level_project();
    let path = "assets/scenes/old.scene.bin";
    project.save(path, &level(&library), &library);
    let current = std::fs::read(project.path(path)).unwrap();
    let old = crate::support::binary_format_2(&current);
    std::fs::write(project.path(path), &old).unwrap();
    let loaded_old = project.load(path, &library);
    let report =
        format!("{path}: format 2 is now 4 (with a checksum, the archetypes' children and binary instance diffs)\n");
    check(
        &project.run(&["migrate", "--check"]),
        1,
        &format!("{report}1 file to migrate; run `archetool migrate` to update it\n"),
        "",
    );
    check(
        &project.run(&["migrate"]),
        0,
        &format!("{report}migrated 1 file\n"),
        "",
    );
    assert_eq!(std::fs::read(project.path(path)).unwrap(), current);
    let loaded = project.load(path, &library);
    assert_eq!(loaded.len(), loaded_old.len());
    check(
        &project.run(&["migrate"]),
        0,
        &none_to_migrate(&project, Some(2)),
        "",
    );
}

#[test]
fn migrate_leaves_current_scenes_alone() {
    let (project, library) = level_project();
    project.save(
        "assets/scenes/nested/level.scene.bin",
        &level(&library),
        &library,
    );
    // Hand-written, not in the library's layout: still nothing to migrate.
    project.write(
        "assets/scenes/hand.scene.json",
        r#"{"format":2,"entities":[{"id":"0000000000000001","components":{"Name":"x"}}]}"#,
    );
    let files = [
        "assets/scenes/hand.scene.json",
        "assets/scenes/nested/level.scene.bin",
        LEVEL,
    ];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(project.path(f)).unwrap())
        .collect();
    check(
        &project.run(&["migrate", "--check"]),
        0,
        &none_to_migrate(&project, Some(3)),
        "",
    );
    check(
        &project.run(&["migrate"]),
        0,
        &none_to_migrate(&project, Some(3)),
        "",
    );
    let after: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(project.path(f)).unwrap())
        .collect();
    assert_eq!(after, before);
}

#[test]
fn migrate_reports_old_scenes_that_do_not_load_and_leaves_them() {
    let project = old_scene_project();
    let broken = project.read(FIXTURE).replace("\"Key\":", "\"Kye\":");
    project.write(FIXTURE, &broken);
    check(
        &project.run(&["migrate"]),
        1,
        // The library places errors in an older scene in the upgraded text, not in the file:
        // no position is better than a wrong one.
        &format!("{FIXTURE}: error[unknown-component]: entity 00000000000000c0: unknown component `Kye`; did you mean `Key`?\n"),
        "",
    );
    assert_eq!(project.read(FIXTURE), broken);
    check(
        &project.run(&["scene", "check", FIXTURE]),
        1,
        &format!("{FIXTURE}: error[unknown-component]: entity 00000000000000c0: unknown component `Kye`\n  = help: did you mean `Key`?\n"),
        "",
    );
}

#[test]
fn migrate_takes_the_scenes_directory_from_scenes() {
    let project = old_scene_project();
    std::fs::rename(project.path("assets/scenes"), project.path("levels")).unwrap();
    check(
        &project.run(&["migrate", "--check"]),
        0,
        &none_to_migrate(&project, None),
        "",
    );
    let run = project.run(&["migrate", "--check", "--scenes", "levels"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .starts_with("levels/format1.scene.json:2:13: format 1 is now 2\n"),
        "{}",
        run.stdout
    );
    check(
        &project.run(&["migrate", "--scenes", "nowhere"]),
        2,
        "",
        "error: scenes directory `nowhere` not found\n",
    );
}

// ---------------------------------------------------------------------------------------------
// Output from huge and hostile files: bounded, and never a terminal control sequence

/// 2,000 unknown fields on one 22 KB line: each snippet shows a window of the line around its
/// field, never the whole line (which made 60 MB of output); the bench figure
/// `diagnostics_minified_2k_errors_bytes` measures the size.
#[test]
fn validate_shows_a_window_of_a_long_line() {
    use archetool::bench::diagnostics::{fields_file, Layout};
    let text = fields_file(2_000, Layout::Minified);
    let project = Project::with(&[("archetypes/goblin.json", &text)]);
    let run = project.run(&["validate"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    let first = r#"archetypes/goblin.json:1:48: error[unknown-field]: unknown field `x00000` in component `Health`
  |
1 | …nents":{"Health":{"current":10,"max":10,"x00000":0,"x00001":0,"x00002":0,"x00003":0,"x00004":0,"x00005":0,"x00006":0,"…
  |                                          ^^^^^^^^

"#;
    let last = r#"archetypes/goblin.json:1:22037: error[unknown-field]: unknown field `x01999` in component `Health`
  |
1 | …89":0,"x01990":0,"x01991":0,"x01992":0,"x01993":0,"x01994":0,"x01995":0,"x01996":0,"x01997":0,"x01998":0,"x01999":0}}}
  |                                                                                                           ^^^^^^^^

1 archetype, 2000 errors, 0 warnings
"#;
    assert!(run.stdout.starts_with(first), "{}", &run.stdout[..1000]);
    assert!(
        run.stdout.ends_with(last),
        "{}",
        &run.stdout[run.stdout.len() - 1000..]
    );
    assert_eq!(run.stdout.lines().count(), 2_000 * 5 + 1);
    let widest = run.stdout.lines().map(|line| line.chars().count()).max();
    assert_eq!(widest, Some(4 + 120));
}

/// A scene on one 5 MB line with one error at its end: the error's line is shown as a window.
#[test]
fn scene_check_shows_a_window_of_a_long_line() {
    let entities: Vec<String> = (1..=50_000)
        .map(|i| {
            format!(
                r#"{{"id":"{i:016x}","components":{{"Name":"{}"}}}}"#,
                "n".repeat(40)
            )
        })
        .collect();
    let text = format!(
        r#"{{"format":2,"entities":[{},{{"id":"00000000000fffff","components":{{"Helth":{{"max":3}}}}}}]}}"#,
        entities.join(",")
    );
    let column = text.find("\"Helth\"").unwrap() + 1;
    let project = Project::demo();
    project.write("big.scene.json", &text);
    let expected = format!(
        r#"big.scene.json:1:{column}: error[unknown-component]: entity 00000000000fffff: unknown component `Helth`
  |
1 | …nts":{{"Name":"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"}}}},{{"id":"00000000000fffff","components":{{"Helth":{{"max":3}}}}}}]}}
  |                                                                                                   ^^^^^^^
  |
  = help: did you mean `Health`?
"#
    );
    check(
        &project.run(&["scene", "check", "big.scene.json"]),
        1,
        &expected,
        "",
    );
}

/// Keys and names from files reach the terminal escaped (`\u{1b}`), whichever command prints
/// them: messages, snippets, JSON lines, `fmt`, `scene check`, `scene info`.
#[test]
fn control_characters_from_files_are_escaped_in_every_output() {
    let pwned = r"\u001b]0;pwned\u0007\u001b[2J";
    let shown = r"\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let goblin = format!("{{\n  \"components\": {{ \"{pwned}\": {{}}, \"Health\": {{ \"current\": 1, \"max\": 1, \"\u{9b}x\": 1 }} }}\n}}\n");
    let twice = format!("{{ \"{pwned}\": 1, \"{pwned}\": 2 }}");
    let scene = format!("{{\n  \"format\": 2,\n  \"entities\": [\n    {{ \"id\": \"00000000000000a1\", \"components\": {{ \"{pwned}\": {{}} }} }}\n  ]\n}}\n");
    let project = Project::with(&[
        ("archetypes/goblin.json", &goblin),
        ("archetypes/twice.json", &twice),
        ("s.scene.json", &scene),
    ]);
    let expected = format!(
        r#"archetypes/goblin.json:2:19: error[unknown-component]: unknown component `{shown}`
  |
2 |   "components": {{ "{pwned}": {{}}, "Health": {{ "current": 1, "max": 1, "\u{{9b}}x": 1 }} }}
  |                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

archetypes/goblin.json:2:92: error[unknown-field]: unknown field `\u{{9b}}x` in component `Health`
  |
2 |   "components": {{ "{pwned}": {{}}, "Health": {{ "current": 1, "max": 1, "\u{{9b}}x": 1 }} }}
  |                                                                                            ^^^^^^^^^

archetypes/twice.json:1:39: error[duplicate-key]: duplicate key `{shown}` (the first one is on line 1)
  |
1 | {{ "{pwned}": 1, "{pwned}": 2 }}
  |                                       ^

2 archetypes, 3 errors, 0 warnings
"#
    );
    check(&project.run(&["validate"]), 1, &expected, "");
    let json = project.run(&["validate", "--format", "json"]);
    let lines: Vec<&str> = json.stdout.lines().collect();
    assert!(
        lines[0].contains(r#""message":"unknown component `\\u{1b}]0;pwned\\u{7}\\u{1b}[2J`""#),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(r#""component":"\u001b]0;pwned\u0007\u001b[2J""#),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains(r#""field":"\u009bx""#), "{}", lines[1]);
    assert_eq!(parse(lines[1])["field"], "\u{9b}x");
    let fmt = project.run(&["fmt", "--check"]);
    assert!(
        fmt.stdout.starts_with(&format!(
            "archetypes/twice.json:1:39: error[duplicate-key]: duplicate key `{shown}`"
        )),
        "{}",
        fmt.stdout
    );
    check(
        &project.run(&["scene", "check", "s.scene.json"]),
        1,
        &format!(
            r#"s.scene.json:4:49: error[unknown-component]: entity 00000000000000a1: unknown component `{shown}`
  |
4 |     {{ "id": "00000000000000a1", "components": {{ "{pwned}": {{}} }} }}
  |                                                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
note: the archetypes have 3 errors; `archetool validate --dir archetypes` lists them
"#
        ),
        "",
    );
    let info = project.run(&["scene", "info", "s.scene.json"]);
    assert!(
        info.stdout.contains(&format!("  {shown}  1\n")),
        "{}",
        info.stdout
    );
    assert!(!info.stdout.contains('\u{1b}'), "{}", info.stdout);
}

/// A level placing a room twice, the room placing a guard post.
fn nested_project(room_places: &str) -> Project {
    let project = Project::demo();
    for (path, text) in [
        (
            "level.scene.json",
            r#"{ "format": 2, "entities": [
    { "id": "00000000000000c1", "scene": "rooms/room.scene.json", "components": { "Name": "east" } },
    { "id": "00000000000000c2", "scene": "rooms/room.scene.json" },
    { "id": "00000000000000c3", "archetype": "enemies/goblin" }
] }"#
                .to_string(),
        ),
        (
            "rooms/room.scene.json",
            format!(
                r#"{{ "format": 2, "entities": [
    {{ "id": "00000000000000b1", "archetype": "enemies/goblin" }},
    {{ "id": "00000000000000b2", "scene": "{room_places}" }}
] }}"#
            ),
        ),
        (
            "rooms/post.scene.json",
            r#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "components": { "Name": "post" } } ] }"#.to_string(),
        ),
    ] {
        project.write(path, &text);
    }
    project
}

#[test]
fn scene_info_shows_sub_scenes_and_the_flattened_entity_count() {
    let project = nested_project("post.scene.json");
    check(
        &project.run(&["scene", "info", "level.scene.json"]),
        0,
        "\
file:      level.scene.json
encoding:  JSON
format:    2 (current)
entities:  3
flattened: 9 (with the sub-scenes placed)
shared:    0 entries
per archetype:
  enemies/goblin  1
  (no archetype)  2
sub-scenes:
  rooms/room.scene.json  2 placements
components used (by how many entities):
  Name  1
",
        "",
    );
}

#[test]
fn scene_check_checks_sub_scenes() {
    let project = nested_project("post.scene.json");
    check(
        &project.run(&["scene", "check", "level.scene.json"]),
        0,
        "level.scene.json: ok (9 entities: 3 from archetypes, 6 plain)\n",
        "",
    );
    let project = nested_project("pots.scene.json");
    let output = project.run(&["scene", "check", "level.scene.json"]);
    assert!(
        output.stdout.starts_with("rooms/room.scene.json:3:42: error[io]: entity 00000000000000b2: sub-scene `pots.scene.json` cannot be read:"),
        "{}",
        output.stdout
    );
    assert_eq!(output.code, 1);
}
