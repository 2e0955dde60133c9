//! What the library logs: spans and closing events with their fields, captured by a small
//! `tracing` subscriber that keeps what the test's own thread logs.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use archetype_engine::{
    load_scene_from_path, save_scene_to_path, ArchetypeLibrary, HotReloader, SceneLoadOptions,
    SceneSaveOptions,
};
use hecs::World;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::support::{registry, ArchetypeDir};

/// What one capturing thread has seen: the spans it opened, the ones it is in, the events.
#[derive(Default)]
struct Capture {
    spans: HashMap<u64, String>,
    stack: Vec<u64>,
    lines: Vec<String>,
}

thread_local! {
    /// The capture of this thread, while `captured` runs.
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

/// Records each event of a capturing thread as
/// `LEVEL span{fields} > span{fields}: message field=value ...`, with `ms` shown as `_` (it
/// varies from run to run). Installed once, as the global subscriber: one that is always there
/// keeps `tracing`'s per-call-site cache from remembering "nobody listens" while other tests
/// run in parallel; threads that are not capturing are ignored.
struct Recorder {
    next_id: AtomicU64,
}

/// The fields of a span or event as `name=value`, the message apart.
#[derive(Default)]
struct Fields {
    message: String,
    pairs: Vec<String>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "ms" => self.pairs.push("ms=_".to_string()),
            name => self.pairs.push(format!("{name}={value:?}")),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }
}

fn with_capture(f: impl FnOnce(&mut Capture)) {
    CAPTURE.with(|capture| {
        if let Some(capture) = capture.borrow_mut().as_mut() {
            f(capture);
        }
    });
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        with_capture(|capture| {
            let mut fields = Fields::default();
            span.record(&mut fields);
            let shown = format!("{}{{{}}}", span.metadata().name(), fields.pairs.join(" "));
            capture.spans.insert(id, shown);
        });
        Id::from_u64(id)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        with_capture(|capture| {
            let mut fields = Fields::default();
            event.record(&mut fields);
            let path: Vec<&str> = capture
                .stack
                .iter()
                .map(|id| capture.spans[id].as_str())
                .collect();
            let level = event.metadata().level();
            let mut line = format!("{level} {}: {}", path.join(" > "), fields.message);
            for pair in &fields.pairs {
                let _ = write!(line, " {pair}");
            }
            capture.lines.push(line);
        });
    }

    fn enter(&self, span: &Id) {
        with_capture(|capture| capture.stack.push(span.into_u64()));
    }

    fn exit(&self, _: &Id) {
        with_capture(|capture| {
            capture.stack.pop();
        });
    }
}

/// Runs `f` capturing what this thread logs; returns the lines, with `dir`'s path shown as
/// `DIR`.
fn captured(dir: &std::path::Path, f: impl FnOnce()) -> Vec<String> {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let recorder = Recorder {
            next_id: AtomicU64::new(0),
        };
        tracing::subscriber::set_global_default(recorder).unwrap();
    });
    CAPTURE.with(|capture| *capture.borrow_mut() = Some(Capture::default()));
    f();
    let lines = CAPTURE.with(|capture| capture.borrow_mut().take().unwrap_or_default().lines);
    let dir = dir.display().to_string();
    lines.iter().map(|line| line.replace(&dir, "DIR")).collect()
}

const GOBLIN: &str = r#"{ "components": { "Health": { "current": 10, "max": 10 } } }"#;

#[test]
fn a_load_logs_its_files_archetypes_problems_and_time() {
    let dir = ArchetypeDir::new(&[("goblin.json", GOBLIN), ("orc.json", GOBLIN)]);
    let lines = captured(dir.root(), || {
        ArchetypeLibrary::load(dir.root(), registry()).unwrap();
    });
    assert_eq!(
        lines,
        ["INFO load_archetypes{root=DIR}: loaded archetypes files=2 archetypes=2 errors=0 warnings=0 ms=_"]
    );

    dir.write("troll.json", br#"{ "components": { "Helth": {} } }"#);
    let lines = captured(dir.root(), || {
        let _ = ArchetypeLibrary::load(dir.root(), registry()).unwrap_err();
    });
    assert_eq!(
        lines,
        ["WARN load_archetypes{root=DIR}: loaded archetypes files=3 archetypes=2 errors=1 warnings=0 ms=_"]
    );
}

#[test]
fn a_hot_reload_logs_what_it_changed_and_each_problem() {
    let dir = ArchetypeDir::new(&[("goblin.json", GOBLIN)]);
    let mut library = ArchetypeLibrary::load(dir.root(), registry()).unwrap();
    let mut world = World::new();
    library.spawn_many(&mut world, "goblin", 3).unwrap();
    let mut reloader = HotReloader::new(&library).unwrap();

    dir.write(
        "goblin.json",
        br#"{ "components": { "Health": { "current": 10, "max": 12 } } }"#,
    );
    let lines = captured(dir.root(), || {
        reloader.reload_all(&mut world, &mut library);
    });
    assert_eq!(
        lines,
        ["INFO hot_reload{files=0 rescan=true}: reloaded archetypes archetypes=1 names=goblin entities=3 spawned=0 despawned=0 orphaned=0 ms=_"]
    );

    dir.write(
        "goblin.json",
        br#"{ "components": { "Health": { "current": 10, "max": 12 }, } }"#,
    );
    let lines = captured(dir.root(), || {
        reloader.reload_all(&mut world, &mut library);
    });
    assert_eq!(
        lines,
        ["ERROR hot_reload{files=0 rescan=true}: DIR/goblin.json:1:57: error[syntax]: trailing comma; remove the `,` after the last member"]
    );
}

#[test]
fn scene_saves_and_loads_log_file_entities_bytes_and_time() {
    let dir = ArchetypeDir::new(&[("goblin.json", GOBLIN)]);
    let library = ArchetypeLibrary::load(dir.root(), registry()).unwrap();
    let mut world = World::new();
    library.spawn_many(&mut world, "goblin", 2).unwrap();
    let path = dir.root().join("arena.scene.json");

    let lines = captured(dir.root(), || {
        save_scene_to_path(&path, &world, &library, &SceneSaveOptions::default()).unwrap();
    });
    let bytes = std::fs::metadata(&path).unwrap().len();
    assert_eq!(
        lines,
        [format!("INFO save_scene_file{{file=DIR/arena.scene.json}} > save_scene{{encoding=Json}}: saved scene entities=2 bytes={bytes} ms=_")]
    );

    let lines = captured(dir.root(), || {
        let mut loaded = World::new();
        load_scene_from_path(&path, &mut loaded, &library, &SceneLoadOptions::default()).unwrap();
    });
    assert_eq!(
        lines,
        [format!("INFO load_scene{{file=DIR/arena.scene.json bytes={bytes}}}: loaded scene entities=2 warnings=0 ms=_")]
    );

    // A scene that does not load: the error, once, at warn.
    let text = r#"{ "format": 2, "entities": [ { "id": "00000000000000a1", "components": { "Helth": {} } } ] }"#;
    let broken = dir.write("broken.scene.json", text.as_bytes());
    let lines = captured(dir.root(), || {
        let mut loaded = World::new();
        let options = SceneLoadOptions::default();
        load_scene_from_path(&broken, &mut loaded, &library, &options).unwrap_err();
    });
    assert_eq!(
        lines,
        ["WARN load_scene{file=DIR/broken.scene.json bytes=92}: scene not loaded error=DIR/broken.scene.json:1:74: error[unknown-component]: entity 00000000000000a1: unknown component `Helth`; did you mean `Health`? ms=_"]
    );
}
