//! The README's example of a mistake is what `archetool validate` prints for it.

use super::{repo_root, Project};

/// The text of the README's first fenced block whose opening line is `fence`.
fn block<'a>(readme: &'a str, fence: &str) -> &'a str {
    let start = readme
        .find(&format!("{fence}\n"))
        .unwrap_or_else(|| panic!("README.md has no block opened by {fence:?}"));
    let text = &readme[start + fence.len() + 1..];
    let end = text.find("\n```").expect("the block is closed");
    &text[..end + 1]
}

#[test]
fn the_readmes_validate_example_is_what_validate_prints() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README reads");
    let goblin = block(&readme, "```json file=archetypes/enemies/goblin.json");
    let shown = block(&readme, "```text");
    let expected = shown
        .strip_prefix("$ archetool validate\n")
        .unwrap_or_else(|| panic!("the README's first text block shows validate:\n{shown}"));
    // The mistake the README shows: `Health` misspelt in its goblin.
    assert!(goblin.contains("\"Health\""), "{goblin}");
    let misspelt = goblin.replacen("\"Health\"", "\"Helth\"", 1);
    let project = Project::with(&[("archetypes/enemies/goblin.json", &misspelt)]);
    let run = project.run(&["validate"]);
    assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{}", run.stdout);
    assert_eq!(run.stdout, expected);
}
