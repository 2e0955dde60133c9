//! A game's own archetool, as `examples/my-game` builds it: archetool's library without its
//! default features (no demo, no benchmarks), plus the language server. What it pulls in is
//! read from the lockfile with `cargo tree`, offline.

use std::collections::BTreeSet;
use std::process::Command;

use super::repo_root;

/// The distinct crates (name and version) `my-game` pulls in as normal dependencies on
/// [`TARGET`], itself not counted. The README states this count.
const RECIPE_CRATES: usize = 63;

/// The platform the counts are for: fixed, so they do not depend on the machine running the
/// test (file watching and the terminal pull in different crates on each platform).
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// The distinct crates `package` pulls in as normal dependencies on [`TARGET`], as
/// `name vX.Y.Z`, `package` itself excluded; from the lockfile, without the network.
fn normal_dependencies(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = [
        "tree",
        "--frozen",
        "--package",
        package,
        "--edges",
        "normal",
        "--target",
        TARGET,
        "--prefix",
        "none",
    ];
    let output = Command::new(&cargo)
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {cargo:?}: {error}"));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "`cargo {}` failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    // One package a line, `name vX.Y.Z` and then its path, `(proc-macro)` or `(*)` (already
    // listed); the first line is `package` itself.
    let mut crates = stdout.lines().filter_map(|line| {
        let mut words = line.split_whitespace();
        Some(format!("{} {}", words.next()?, words.next()?))
    });
    let root = crates.next().unwrap_or_default();
    assert!(root.starts_with(&format!("{package} v")), "{stdout}");
    crates.filter(|name| *name != root).collect()
}

/// The names in `crates` (`name vX.Y.Z`).
fn names(crates: &BTreeSet<String>) -> BTreeSet<&str> {
    crates
        .iter()
        .filter_map(|name| name.split(' ').next())
        .collect()
}

#[test]
fn the_games_archetool_pulls_in_no_terminal_ui_and_no_benchmarks() {
    let crates = normal_dependencies("my-game");
    let names = names(&crates);
    for left_out in ["ratatui", "crossterm", "criterion"] {
        assert!(
            !names.contains(left_out),
            "a game's own archetool pulls in {left_out}:\n{crates:#?}"
        );
    }
    for wanted in ["archetool", "archetype-engine", "lsp-server", "lsp-types"] {
        assert!(
            names.contains(wanted),
            "a game's own archetool (with `lsp`) lacks {wanted}:\n{crates:#?}"
        );
    }
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README reads");
    let stated = format!("it pulls in {RECIPE_CRATES} crates");
    assert!(
        readme.contains(&stated),
        "the README's recipe states how many crates a game's own archetool pulls in: \
         `{stated}` is not in README.md"
    );
    assert_eq!(
        crates.len(),
        RECIPE_CRATES,
        "a game's own archetool (examples/my-game) now pulls in {} crates, not {RECIPE_CRATES}: \
         set RECIPE_CRATES to the new count and update the count the README states. The \
         crates:\n{crates:#?}",
        crates.len()
    );
}

#[test]
fn the_shipped_archetool_has_the_terminal_ui_a_games_leaves_out() {
    let shipped = normal_dependencies("archetool");
    let game = normal_dependencies("my-game");
    let names = names(&shipped);
    for terminal in ["ratatui", "crossterm"] {
        assert!(
            names.contains(terminal),
            "the shipped archetool lacks {terminal}:\n{shipped:#?}"
        );
    }
    let only_in_game: Vec<&String> = game
        .iter()
        .filter(|name| !shipped.contains(*name) && !name.starts_with("archetool "))
        .collect();
    assert!(
        only_in_game.is_empty(),
        "a game's own archetool pulls in crates the shipped one does not: {only_in_game:?}"
    );
}
