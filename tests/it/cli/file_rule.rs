//! The one rule for files on disk, through `archetool`: every subcommand that reads archetype
//! or scene files refuses a FIFO without hanging; `fmt` and `migrate` keep symbolic links;
//! `new` refuses names and places a load would refuse. (The rule in the library: `bad_inputs`
//! at load, `watcher` at run time.)
//!
//! Every run of the tool is bounded (see `run_in`): one that blocks (on a FIFO) is killed and
//! fails the test.

use std::path::Path;

use super::{check, none_to_migrate, Project};

#[cfg(unix)]
use crate::support::mkfifo;

const GOBLIN: &str = r#"{"components":{"Name":"Goblin"}}"#;
const GOBLIN_FORMATTED: &str = "{\n  \"components\": {\n    \"Name\": \"Goblin\"\n  }\n}\n";
const FIFO: &str = "is a FIFO (named pipe), not a regular file; only regular files are read (replace it with a file or remove it)";

/// A project directory with `archetypes/` (a goblin).
fn project() -> Project {
    Project::with(&[("archetypes/enemies/goblin.json", GOBLIN)])
}

#[cfg(unix)]
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[cfg(unix)]
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_symlink()
}

#[cfg(unix)]
#[test]
fn archetype_commands_refuse_a_fifo_without_hanging() {
    let project = project();
    project.write("archetypes/enemies/goblin.json", GOBLIN_FORMATTED);
    mkfifo(&project.path("archetypes/x.json"));
    let refused = format!("archetypes/x.json: error[io]: {FIFO}\n");
    check(
        &project.run(&["validate"]),
        1,
        &format!("{refused}\n2 archetypes, 1 error, 0 warnings\n"),
        "",
    );
    check(&project.run(&["fmt", "--check"]), 1, &refused, "");
    check(&project.run(&["fmt"]), 1, &refused, "");
    check(&project.run(&["migrate", "--check"]), 1, &refused, "");
    check(
        &project.run(&["inspect", "x"]),
        1,
        "",
        "error: archetype `x` cannot be resolved because of errors; `archetool validate --dir archetypes` lists them\n",
    );
    check(
        &project.run(&["inspect", "enemies/goblin"]),
        0,
        "{\n  \"archetype\": \"enemies/goblin\",\n  \"components\": {\n    \"Name\": \"Goblin\"\n  }\n}\n",
        "",
    );
}

#[cfg(unix)]
#[test]
fn scene_commands_refuse_a_fifo_without_hanging() {
    let project = project();
    mkfifo(&project.path("level.scene.json"));
    project.write("other.scene.json", r#"{ "format": 2, "entities": [] }"#);
    check(
        &project.run(&["scene", "check", "level.scene.json"]),
        1,
        &format!("level.scene.json: error[io]: {FIFO}\n"),
        "",
    );
    let cannot_read = format!("error: cannot read `level.scene.json`: {FIFO}\n");
    check(
        &project.run(&["scene", "info", "level.scene.json"]),
        2,
        "",
        &cannot_read,
    );
    check(
        &project.run(&["scene", "diff", "other.scene.json", "level.scene.json"]),
        2,
        "",
        &cannot_read,
    );
    // A scenes directory holding a FIFO: `migrate` reads each scene file.
    std::fs::create_dir(project.path("scenes")).unwrap();
    mkfifo(&project.path("scenes/old.scene.json"));
    check(
        &project.run(&["migrate", "--check", "--scenes", "scenes"]),
        2,
        "",
        &format!("error: cannot read `scenes/old.scene.json`: {FIFO}\n"),
    );
}

/// A scene file linked from outside the scenes directory is not one of its scenes: `migrate`
/// never rewrites it and `scene check` never reads it.
#[cfg(unix)]
#[test]
fn scene_links_out_of_the_scenes_directory_are_neither_read_nor_rewritten() {
    let project = project();
    let old = include_str!("../../fixtures/scenes/format1.scene.json");
    project.write("outside/old.scene.json", old);
    project.write(
        "scenes/level.scene.json",
        r#"{ "format": 2, "entities": [] }"#,
    );
    symlink(
        "../outside/old.scene.json",
        project.path("scenes/old.scene.json"),
    );
    check(
        &project.run(&["migrate", "--scenes", "scenes"]),
        0,
        &none_to_migrate(&project, Some(1)),
        "",
    );
    let outside = std::fs::read_to_string(project.path("outside/old.scene.json")).unwrap();
    assert_eq!(outside, old);
    check(
        &project.run(&["scene", "check", "scenes"]),
        0,
        "scenes/level.scene.json: ok (0 entities: 0 from archetypes, 0 plain)\n",
        "",
    );
}

/// `fmt` and `migrate` write the file a link points to; the link stays a link. A file read
/// under two names (its own and a link's) is formatted once, under its own.
#[cfg(unix)]
#[test]
fn fmt_and_migrate_keep_symbolic_links() {
    let project = project();
    symlink("enemies/goblin.json", project.path("archetypes/alias.json"));
    symlink("enemies", project.path("archetypes/also"));
    check(
        &project.run(&["fmt", "--check"]),
        1,
        "archetypes/enemies/goblin.json\n1 file not formatted; run `archetool fmt` to format it\n",
        "",
    );
    check(
        &project.run(&["fmt"]),
        0,
        "formatted archetypes/enemies/goblin.json\n",
        "",
    );
    assert!(is_link(&project.path("archetypes/alias.json")));
    assert!(is_link(&project.path("archetypes/also")));
    assert_eq!(
        project.read("archetypes/enemies/goblin.json"),
        GOBLIN_FORMATTED
    );
    // The file and the two links to it are one file.
    check(
        &project.run(&["fmt", "--check"]),
        0,
        "1 file checked, all formatted\n",
        "",
    );

    // Only a link: the target is formatted through it.
    std::fs::remove_file(project.path("archetypes/alias.json")).unwrap();
    std::fs::remove_file(project.path("archetypes/also")).unwrap();
    project.write("archetypes/files/orc.txt", GOBLIN);
    symlink(
        "../files/orc.txt",
        project.path("archetypes/enemies/orc.json"),
    );
    check(
        &project.run(&["fmt"]),
        0,
        "formatted archetypes/enemies/orc.json\n",
        "",
    );
    assert!(is_link(&project.path("archetypes/enemies/orc.json")));
    assert_eq!(project.read("archetypes/files/orc.txt"), GOBLIN_FORMATTED);

    let old_name = r#"{ "components": { "MoveSpeed": { "value": 2.5 } } }"#;
    project.write("archetypes/files/orc.txt", old_name);
    check(
        &project.run(&["migrate"]),
        0,
        "archetypes/enemies/orc.json:1:19: component `MoveSpeed` is now `Speed`\nmigrated 1 file\n",
        "",
    );
    assert!(is_link(&project.path("archetypes/enemies/orc.json")));
    assert_eq!(
        project.read("archetypes/files/orc.txt"),
        old_name.replace("MoveSpeed", "Speed")
    );
}

#[test]
fn new_refuses_device_names_and_directories_differing_in_case() {
    let project = project();
    check(
        &project.run(&["new", "enemies/con"]),
        2,
        "",
        "error: archetype name `enemies/con` has the segment `con`, a device name Windows reserves (`con`, `prn`, `aux`, `nul`, `com0`-`com9`, `lpt0`-`lpt9`, in any letter case, with or without an extension); choose another name\n",
    );
    check(
        &project.run(&["new", "Enemies/troll"]),
        2,
        "",
        "error: archetype `Enemies/troll` is in directory `Enemies`, which differs from `enemies` only in letter case; directory names must stay distinct on case-insensitive file systems, where the two would merge; did you mean `enemies/troll`?\n",
    );
    assert!(!project.path("archetypes/Enemies").exists());
}

#[cfg(unix)]
#[test]
fn new_refuses_to_create_a_file_through_a_link_out_of_the_root() {
    let project = project();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), project.path("archetypes/more"));
    check(
        &project.run(&["new", "more/troll"]),
        2,
        "",
        "error: cannot create `archetypes/more/troll.json`: archetypes/more: error[invalid-name]: symbolic link points outside the archetypes directory; archetypes must live under the root\n",
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}
