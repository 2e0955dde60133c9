//! `--color`: reports for people in colour when asked (or on a terminal without NO_COLOR),
//! plain otherwise; a file's own escape sequences are escaped whatever the choice.

use super::Project;

/// A goblin with an unknown component.
fn project() -> Project {
    Project::with(&[(
        "archetypes/goblin.json",
        "{\n  \"components\": {\n    \"Name\": \"gob\",\n    \"Helth\": {}\n  }\n}\n",
    )])
}

const PLAIN: &str =
    "archetypes/goblin.json:4:5: error[unknown-component]: unknown component `Helth`
  |
4 |     \"Helth\": {}
  |     ^^^^^^^
  |
  = help: did you mean `Health`?

1 archetype, 1 error, 0 warnings
";

const COLOURED: &str = "archetypes/goblin.json:4:5: \x1b[1;31merror[unknown-component]\x1b[0m\x1b[1m: unknown component `Helth`\x1b[0m
\x1b[1;34m  |\x1b[0m
\x1b[1;34m4 |\x1b[0m     \"Helth\": {}
\x1b[1;34m  |\x1b[0m\x1b[1;31m     ^^^^^^^\x1b[0m
\x1b[1;34m  |\x1b[0m
\x1b[1;34m  =\x1b[0m \x1b[1;36mhelp\x1b[0m: did you mean `Health`?

1 archetype, 1 error, 0 warnings
";

#[test]
fn always_colours_never_and_auto_off_a_terminal_do_not() {
    let project = project();
    let always = project.run(&["validate", "--color", "always"]);
    assert_eq!((always.code, always.stdout.as_str()), (1, COLOURED));
    for args in [
        &["validate", "--color", "never"][..],
        &["validate", "--color", "auto"],
        &["validate"],
    ] {
        // The tests' standard output is a file, not a terminal.
        let run = project.run(args);
        assert_eq!((run.code, run.stdout.as_str()), (1, PLAIN), "{args:?}");
    }
    // Machine formats never colour.
    let json = project.run(&["validate", "--format", "json", "--color", "always"]);
    assert!(!json.stdout.contains('\x1b'), "{}", json.stdout);
}

#[test]
fn no_color_turns_auto_off_and_an_explicit_flag_wins() {
    let project = project();
    let with = |value: &str, args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_archetool"));
        command
            .args(args)
            .current_dir(project.path("."))
            .env("NO_COLOR", value);
        let output = command.output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(with("1", &["validate"]), PLAIN);
    assert_eq!(with("1", &["validate", "--color", "always"]), COLOURED);
    // An empty NO_COLOR is as if unset (and off a terminal, auto is plain either way).
    assert_eq!(with("", &["validate", "--color", "always"]), COLOURED);
}

#[test]
fn a_files_escape_sequence_stays_escaped_in_colour() {
    // A component name with an escape character in it (written `\u001b` in the JSON).
    let project = Project::with(&[(
        "archetypes/goblin.json",
        "{ \"components\": { \"He\\u001b[2Jlth\": {} } }",
    )]);
    let run = project.run(&["validate", "--color", "always"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("unknown component `He\\u{1b}[2Jlth`"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("\x1b[2J"), "{}", run.stdout);
}

/// On a real terminal (a pseudo-terminal made by util-linux's `script`), `auto` colours
/// unless NO_COLOR is set.
#[cfg(unix)]
#[test]
fn auto_colours_on_a_terminal_unless_no_color_is_set() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let project = project();
    let on_a_terminal = |no_color: Option<&str>| {
        let archetool = env!("CARGO_BIN_EXE_archetool");
        let mut command = Command::new("script");
        // -q: no banner; -e: the command's exit code; output to /dev/null (we read stdout).
        command
            .args(["-qec", &format!("'{archetool}' validate"), "/dev/null"])
            .current_dir(project.path("."))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("NO_COLOR");
        if let Some(value) = no_color {
            command.env("NO_COLOR", value);
        }
        let mut child = command
            .spawn()
            .expect("`script` (util-linux) runs a command on a pseudo-terminal");
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("archetool on a terminal ran for more than 20 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        // A terminal ends lines with CR LF.
        String::from_utf8(output.stdout)
            .unwrap()
            .replace("\r\n", "\n")
    };
    assert_eq!(on_a_terminal(None), COLOURED);
    assert_eq!(on_a_terminal(Some("1")), PLAIN);
}

/// Every subcommand takes `--color`, and its help says so in one entry: the values in a
/// sentence, not a list repeated under each command.
#[test]
fn every_subcommands_help_shows_color_in_one_entry() {
    let project = project();
    let entry = "      --color <WHEN>
          Colour reports for people: `auto` when standard output is a terminal and NO_COLOR is not set, `always` (even with NO_COLOR), or `never`
          
          [default: auto]
";
    for command in [
        "validate", "fmt", "migrate", "new", "schema", "inspect", "tree",
    ] {
        let run = project.run(&[command, "--help"]);
        assert_eq!(run.code, 0, "{command}: {run:?}");
        assert_eq!(
            run.stdout.matches(entry).count(),
            1,
            "{command}:\n{}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("- always:"),
            "{command}:\n{}",
            run.stdout
        );
    }
    let refused = project.run(&["validate", "--color", "sometimes"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.starts_with(
            "error: invalid value 'sometimes' for '--color <WHEN>'\n  [possible values: auto, always, never]\n"
        ),
        "{}",
        refused.stderr
    );
}
