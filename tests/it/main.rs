//! The integration tests: every capability through the public API, with real files, a real
//! watcher and real worlds. One test binary (`cargo test --workspace` runs it).

// A test fails by panicking; `unwrap` says so most plainly.
#![allow(clippy::unwrap_used)]

mod sub_scene_bounds; // sub-scenes bounded and contained: the file rule, depth, flattened size
mod sub_scenes; // scenes placed inside scenes: derived IDs, references, overrides, cycles
mod support; // shared test components, temp archetype dirs, check helpers

mod archetype_format; // the file format: merge-patch inheritance, children, `#` references
mod bad_inputs; // the bad-input catalogue (tests/fixtures/bad) and the limits
mod bench; // the benchmark harness runs (tiny sizes) and prints stable lines
mod binary_diffs; // binary scenes' instance diffs: no JSON text, loaded as JSON patches load
mod cli; // archetool through the built binary: every subcommand, exit codes, the schema
mod cooked; // cooked libraries: the same worlds as the JSON library; other layouts, damage refused
mod demo; // the live demo: headless run, hot reload mid-run, TUI rendering
mod demo_content; // the repo's own `archetypes/` load cleanly and behave as documented
mod diagnostics; // every error case, asserted in full with file:line:column
mod fuzz_regressions; // inputs the fuzzers found (tests/fixtures/fuzz), replayed
mod guide; // the guide's JSON examples load (or show their mistake); the README stays short
mod hot_reload; // hot reload's core: field-level patches, overrides, children, broken edits
mod inspector; // the live inspector over real HTTP: views, live edits, write-back, refusals
mod inspector_browser; // the inspector in headless Chromium: a goblin tuned and applied to its archetype
mod language; // the designer's language: markers, variant switches, operators, checked references, variation
mod live_scenes; // live scenes: a scene file's edits carried into the world, watched as editors save
mod logging; // what the library logs (spans and events), captured by a test subscriber
mod prepared_scenes; // scenes prepared off the game thread, committed whole or in slices
mod properties; // proptest: scene round trips of random graphs, RFC 7396, incremental = at once
mod registry; // ComponentRegistry: names, aliases, clashes, built-ins
mod renames; // archetype renames: `formerly`, old names in files and scenes, clashes
mod save_compat; // saves that survive updates: children gained and lost, the game's meta
mod scene_api; // Scenes: save_to_path / load_from_path / save_to_vec / load_from_slice
mod scene_documents; // SceneDocument: the read model of a scene file in either encoding, errors placed
mod scenes; // scenes: stable IDs, diffs, references, binary, atomic saves
mod soak; // hot-reload soak: random edits with the real watcher (ARCHETYPE_SOAK_EDITS)
mod spawning; // spawning by name: IDs, markers, children, references, overrides, batches
mod watcher; // hot reload with real files and the real watcher, saving as editors do
