//! The guide (`engine/src/guide/**/*.md`, published as `archetype_engine::guide`) and the README
//! say what is true: every JSON example in the guide is loaded the way a game loads it, with the
//! demo's components; every mistake it shows gives the code it names; the README stays short and
//! its links lead to files that exist. (The guide's Rust examples are doctests of the engine, and
//! its links into the API are checked by `cargo doc -D warnings`.)

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use archetype_engine::hecs::World;
use archetype_engine::{
    load_scene_from_path, ArchetypeLibrary, Diagnostic, SceneLoadOptions, Severity,
};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tools/ has a parent")
        .to_path_buf()
}

fn guide_root() -> PathBuf {
    repository().join("engine/src/guide")
}

/// Every chapter's Markdown file, in a stable order.
fn chapters() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![guide_root()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("the guide's directory reads") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// What a ` ```json ` block of the guide is.
#[derive(Debug, PartialEq)]
enum JsonBlock {
    /// A whole file of the chapter's example project.
    File { path: String },
    /// A file showing a mistake: loaded over the chapter's project, it gives `code`.
    Mistake { path: String, code: String },
    /// Part of a file, or JSON that is neither an archetype nor a scene: it parses.
    Fragment,
}

/// A fenced code block: its info string, first line (1-based, the fence's) and text.
struct Fenced {
    info: String,
    line: usize,
    text: String,
}

/// The fenced code blocks of a Markdown text that start at the beginning of a line (blocks
/// indented inside lists or quoted as examples of the format are not examples).
fn fenced_blocks(markdown: &str) -> Vec<Fenced> {
    let mut blocks = Vec::new();
    let mut open: Option<Fenced> = None;
    for (index, line) in markdown.lines().enumerate() {
        match open.as_mut() {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some(Fenced {
                        info: info.trim().to_owned(),
                        line: index + 1,
                        text: String::new(),
                    });
                }
            }
            Some(block) => {
                if line.trim_end() == "```" {
                    blocks.extend(open.take());
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                }
            }
        }
    }
    blocks
}

/// The kind of a ` ```json ` block from its info string, or why it has none.
fn json_block(info: &str) -> Option<Result<JsonBlock, String>> {
    let mut words = info.split_whitespace();
    if words.next() != Some("json") {
        return None;
    }
    let (mut path, mut code, mut fragment) = (None, None, false);
    for word in words {
        if let Some(value) = word.strip_prefix("file=") {
            path = Some(value.to_owned());
        } else if let Some(value) = word.strip_prefix("expect=") {
            code = Some(value.to_owned());
        } else if word == "fragment" {
            fragment = true;
        } else {
            return Some(Err(format!("unknown tag `{word}`")));
        }
    }
    Some(match (path, code, fragment) {
        (Some(path), None, false) => Ok(JsonBlock::File { path }),
        (Some(path), Some(code), false) => Ok(JsonBlock::Mistake { path, code }),
        (None, None, true) => Ok(JsonBlock::Fragment),
        _ => Err(
            "a json block is tagged `file=PATH`, `file=PATH expect=CODE` or `fragment`".to_owned(),
        ),
    })
}

/// A chapter's example project as files written so far (later blocks replace earlier ones).
#[derive(Default, Clone)]
struct Project {
    files: BTreeMap<String, String>,
}

impl Project {
    /// Writes the project into a fresh directory and loads it: the library from `archetypes/`
    /// with the demo's components, then every scene under `scenes/` into a world of its own.
    /// Returns every diagnostic (warnings too), each with the file it is in.
    fn diagnostics(&self) -> Vec<Diagnostic> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (path, text) in &self.files {
            let target = dir.path().join(path);
            std::fs::create_dir_all(target.parent().expect("a file has a directory"))
                .expect("the example's directory is created");
            std::fs::write(&target, text).expect("the example file is written");
        }
        let archetypes = dir.path().join("archetypes");
        std::fs::create_dir_all(&archetypes).expect("the archetypes directory");
        let (library, mut problems) =
            match ArchetypeLibrary::load(&archetypes, archetool::demo::components::registry()) {
                Ok(library) => {
                    let problems = library.diagnostics().to_vec();
                    (library, problems)
                }
                Err(error) => {
                    let problems = error.diagnostics().to_vec();
                    (error.into_partial(), problems)
                }
            };
        for path in self.files.keys().filter(|path| path.starts_with("scenes/")) {
            if !path.ends_with(".scene.json") {
                continue;
            }
            let mut world = World::new();
            let options = SceneLoadOptions::default();
            if let Err(error) =
                load_scene_from_path(dir.path().join(path), &mut world, &library, &options)
            {
                problems.push(error.diagnostic().clone());
            }
        }
        problems
    }
}

/// Checks one chapter's JSON blocks; returns a line per failure, `chapter.md:LINE: what`:
/// every version of the chapter's files loads without an error, and each mistake it shows
/// gives the code it names.
fn check_chapter(chapter: &Path) -> Vec<String> {
    let name = chapter
        .strip_prefix(repository())
        .unwrap_or(chapter)
        .display()
        .to_string();
    let markdown = std::fs::read_to_string(chapter).expect("the chapter reads");
    let mut failures = Vec::new();
    let mut project = Project::default();
    let mut mistakes = Vec::new();
    let check_project = |project: &Project, line: usize, failures: &mut Vec<String>| {
        let diagnostics = project.diagnostics();
        let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error);
        for problem in errors {
            failures.push(format!(
                "{name}:{line}: the chapter's example files do not load: {problem}"
            ));
        }
    };
    for block in fenced_blocks(&markdown) {
        let kind = match json_block(&block.info) {
            None => continue,
            Some(Err(why)) => {
                failures.push(format!("{name}:{}: {why}", block.line));
                continue;
            }
            Some(Ok(kind)) => kind,
        };
        match kind {
            JsonBlock::Fragment => {
                if let Err(error) = serde_json::from_str::<serde_json::Value>(&block.text) {
                    failures.push(format!(
                        "{name}:{}: a json fragment does not parse: {error}",
                        block.line
                    ));
                }
            }
            JsonBlock::File { path } => {
                // Each version of a file is checked before a later block replaces it.
                if project.files.contains_key(&path) {
                    check_project(&project, block.line, &mut failures);
                }
                project.files.insert(path, block.text);
            }
            JsonBlock::Mistake { path, code } => {
                mistakes.push((block.line, path, code, block.text))
            }
        }
    }
    if !project.files.is_empty() {
        check_project(&project, markdown.lines().count(), &mut failures);
    }
    for (line, path, code, text) in mistakes {
        let mut with_mistake = project.clone();
        with_mistake.files.insert(path.clone(), text);
        // The code is shown: in the file itself, or, for a code reported where the mistake
        // has its effect (`broken-dependency`), in another file of the project.
        let problems = with_mistake.diagnostics();
        let shown = problems.iter().any(|problem| problem.code.as_str() == code);
        if !shown {
            let mut found = String::new();
            for problem in &problems {
                let _ = write!(found, "\n    {problem}");
            }
            failures.push(format!(
                "{name}:{line}: `{path}` should give `{code}` but gives:{}",
                if found.is_empty() { " nothing" } else { &found }
            ));
        }
    }
    failures
}

#[test]
fn every_json_example_in_the_guide_loads_or_shows_the_mistake_it_names() {
    let chapters = chapters();
    assert!(
        chapters.len() >= 20,
        "the guide's chapters are found: {chapters:?}"
    );
    let failures: Vec<String> = chapters.iter().flat_map(|c| check_chapter(c)).collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_json_example_in_the_readme_loads() {
    let readme = repository().join("README.md");
    let markdown = std::fs::read_to_string(&readme).expect("README reads");
    let examples = fenced_blocks(&markdown)
        .iter()
        .filter(|block| json_block(&block.info).is_some())
        .count();
    assert!(examples >= 2, "the README's JSON examples are found");
    let failures = check_chapter(&readme);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_checker_tells_a_good_file_from_a_mistake_and_refuses_untagged_blocks() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let chapter = dir.path().join("chapter.md");
    std::fs::write(
        &chapter,
        concat!(
            "# A chapter\n\n",
            "```json file=archetypes/goblin.json\n",
            "{ \"components\": { \"Health\": { \"current\": 5, \"max\": 5 } } }\n",
            "```\n\n",
            "```json file=archetypes/orc.json expect=unknown-component\n",
            "{ \"components\": { \"Helth\": {} } }\n",
            "```\n\n",
            "```json file=archetypes/troll.json expect=unknown-component\n",
            "{ \"components\": {} }\n",
            "```\n\n",
            "```json\n{}\n```\n\n",
            "```json fragment\n{ \"max\": 5, }\n```\n",
        ),
    )
    .expect("the chapter is written");
    let failures = check_chapter(&chapter);
    let failures: Vec<String> = failures
        .iter()
        .map(|failure| {
            failure
                .rsplit_once("chapter.md:")
                .map_or(failure.clone(), |(_, rest)| rest.to_owned())
        })
        .collect();
    assert_eq!(failures.len(), 3, "{failures:#?}");
    assert_eq!(
        failures[0],
        "15: a json block is tagged `file=PATH`, `file=PATH expect=CODE` or `fragment`"
    );
    assert!(
        failures[1].starts_with("19: a json fragment does not parse: trailing comma"),
        "{}",
        failures[1]
    );
    assert_eq!(
        failures[2],
        "11: `archetypes/troll.json` should give `unknown-component` but gives: nothing"
    );
}

#[test]
fn the_readme_is_short_and_its_links_lead_to_files_that_exist() {
    let readme = std::fs::read_to_string(repository().join("README.md")).expect("README reads");
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; at most 300 (the rest belongs in the guide)"
    );
    let mut missing = Vec::new();
    for (index, line) in readme.lines().enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            rest = &rest[end..];
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let file = target.split('#').next().unwrap_or(target);
            if !repository().join(file).exists() {
                missing.push(format!(
                    "README.md:{}: `{target}` does not exist",
                    index + 1
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
