//! # The archetype-engine guide
//!
//! How to make a game's entities data-driven with archetype files, scenes and `archetool`:
//! the chapters below, published with the crate so the guide always matches the version a game
//! depends on. Every Rust example in it is compiled and run by `cargo test`, every JSON example
//! is loaded by a test, and every link is checked when the documentation is built.
//!
//! **Designers** (no Rust needed) start with [archetype files](designer::archetype_files).
//! **Programmers** start with [components](programmer::components) and
//! [spawning](programmer::spawning). Everyone who edits files wants the
//! [editor set-up](tools::editors).
//!
//! | Part | Chapters |
//! | --- | --- |
//! | [Designers](designer) | [archetype files](designer::archetype_files), [inheritance](designer::inheritance), [operators](designer::operators), [variation](designer::variation), [children](designer::children), [scene files](designer::scene_files), [errors](designer::errors) |
//! | [Programmers](programmer) | [components](programmer::components), [spawning](programmer::spawning), [hot reload](programmer::hot_reload), [scenes](programmer::scenes), [prepared scenes](programmer::prepared_scenes), [save compatibility](programmer::save_compatibility), [shipping](programmer::shipping), [features](programmer::features), [logging](programmer::logging) |
//! | [Tools](tools) | [archetool](tools::archetool), [editors](tools::editors), [the live demo](tools::demo), [the live inspector](tools::inspector) |
//! | The project | [architecture], [performance], [reliability] |
//!
//! The chapters' sources are the Markdown files under `engine/src/guide/`;
//! `cargo doc -p archetype-engine --open` shows them locally.

// The JSON examples' fences say what each example is (`json file=archetypes/goblin.json`,
// `json fragment`: see `tests/it/guide.rs`, which loads them); rustdoc reads a fence's words as
// Rust code-block attributes and takes `=` for a mistake. JSON blocks are never Rust.
#![allow(rustdoc::invalid_codeblock_attributes)]

/// Designers: the archetype language and scene files, no Rust needed.
pub mod designer {
    #[doc = include_str!("designer/archetype_files.md")]
    pub mod archetype_files {}
    #[doc = include_str!("designer/inheritance.md")]
    pub mod inheritance {}
    #[doc = include_str!("designer/operators.md")]
    pub mod operators {}
    #[doc = include_str!("designer/variation.md")]
    pub mod variation {}
    #[doc = include_str!("designer/children.md")]
    pub mod children {}
    #[doc = include_str!("designer/scene_files.md")]
    pub mod scene_files {}
    #[doc = include_str!("designer/errors.md")]
    pub mod errors {}
}

/// Programmers: components, spawning, hot reload, scenes and the crate's features.
pub mod programmer {
    #[doc = include_str!("programmer/components.md")]
    pub mod components {}
    #[doc = include_str!("programmer/spawning.md")]
    pub mod spawning {}
    #[doc = include_str!("programmer/hot_reload.md")]
    pub mod hot_reload {}
    #[doc = include_str!("programmer/scenes.md")]
    pub mod scenes {}
    #[doc = include_str!("programmer/prepared_scenes.md")]
    pub mod prepared_scenes {}
    #[doc = include_str!("programmer/save_compatibility.md")]
    pub mod save_compatibility {}
    #[doc = include_str!("programmer/shipping.md")]
    pub mod shipping {}
    #[doc = include_str!("programmer/features.md")]
    pub mod features {}
    #[doc = include_str!("programmer/logging.md")]
    pub mod logging {}
}

/// Tools: the `archetool` command line, editor set-up, the live demo and the live inspector.
pub mod tools {
    #[doc = include_str!("tools/archetool.md")]
    pub mod archetool {}
    #[doc = include_str!("tools/editors.md")]
    pub mod editors {}
    #[doc = include_str!("tools/demo.md")]
    pub mod demo {}
    #[doc = include_str!("tools/inspector.md")]
    pub mod inspector {}
}

#[doc = include_str!("architecture.md")]
pub mod architecture {}
#[doc = include_str!("performance.md")]
pub mod performance {}
#[doc = include_str!("reliability.md")]
pub mod reliability {}

/// The errors chapter's source, read by [`DiagnosticCode::explanation`](crate::DiagnosticCode::explanation).
const ERRORS_CHAPTER: &str = include_str!("designer/errors.md");

/// The errors chapter's entry for the code named `code`: from its `` ### `code` `` heading up to
/// the next `##` or `###` heading, trimmed.
pub(crate) fn error_entry(code: &str) -> Option<&'static str> {
    entry_in(ERRORS_CHAPTER, code)
}

fn entry_in<'a>(chapter: &'a str, code: &str) -> Option<&'a str> {
    let heading = format!("### `{code}`");
    let mut offset = 0;
    let mut start = None;
    let mut in_code_block = false;
    for line in chapter.split_inclusive('\n') {
        let text = line.trim_end();
        if text.starts_with("```") {
            in_code_block = !in_code_block;
        } else if !in_code_block {
            match start {
                None if text == heading => start = Some(offset),
                Some(begin) if text.starts_with("## ") || text.starts_with("### ") => {
                    return Some(chapter[begin..offset].trim());
                }
                _ => {}
            }
        }
        offset += line.len();
    }
    start.map(|begin| chapter[begin..].trim())
}

/// The first paragraph after an entry's heading, its lines joined by spaces.
pub(crate) fn entry_summary(entry: &str) -> String {
    entry
        .lines()
        .skip(1)
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{entry_in, entry_summary};
    use crate::DiagnosticCode;

    #[test]
    fn every_code_has_an_entry_with_a_one_paragraph_summary() {
        let missing: Vec<&str> = DiagnosticCode::ALL
            .iter()
            .map(|code| code.as_str())
            .filter(|code| error_entry_summary(code).is_empty())
            .collect();
        assert!(
            missing.is_empty(),
            "codes without an entry (### `code` then a paragraph) in the errors chapter: {missing:?}"
        );
    }

    fn error_entry_summary(code: &str) -> String {
        super::error_entry(code)
            .map(entry_summary)
            .unwrap_or_default()
    }

    #[test]
    fn an_entry_runs_to_the_next_heading_and_skips_headings_inside_code_blocks() {
        let chapter = "# Errors\n\n## Reading\n\n### `io`\n\nThe file could not\nbe read.\n\n```text\n### `syntax`\n```\n\nMore.\n\n### `syntax`\n\nNot JSON.\n\n## Next\n";
        let io = entry_in(chapter, "io").expect("io has an entry");
        assert!(io.starts_with("### `io`") && io.ends_with("More."), "{io}");
        assert_eq!(entry_summary(io), "The file could not be read.");
        assert_eq!(
            entry_in(chapter, "syntax"),
            Some("### `syntax`\n\nNot JSON.")
        );
        assert_eq!(entry_in(chapter, "too-deep"), None);
    }

    #[test]
    fn every_code_is_listed_once_and_found_by_its_name() {
        for code in DiagnosticCode::ALL {
            assert_eq!(DiagnosticCode::from_name(code.as_str()), Some(*code));
        }
        let mut names: Vec<&str> = DiagnosticCode::ALL
            .iter()
            .map(|code| code.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), DiagnosticCode::ALL.len());
    }
}
