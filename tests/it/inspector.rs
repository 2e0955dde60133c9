//! The live inspector through real HTTP over loopback: what the page reads (entities, one
//! entity's fields and their sources, the archetype tree, diagnostics), live edits, the
//! write-back to archetype files (full texts asserted, other instances hot-reloaded), and every
//! refusal of the guard with nothing changed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use archetype_engine::{
    ArchetypeLibrary, FieldValue, Inspector, InspectorOptions, PathSegment, WriteBackError,
};
use hecs::{Entity, World};
use serde_json::{json, Value};

use crate::support::{get, ArchetypeDir, Health};

const CREATURE: &str = "{\n  \"abstract\": true,\n  \"components\": {\n    \"Health\": { \"current\": 10, \"max\": 10 }\n  }\n}\n";
const GOBLIN: &str = "{\n  \"extends\": \"enemies/creature\",\n  \"components\": {\n    \"Name\": \"Goblin\",\n    \"Health\": { \"current\": 12, \"max\": 12 },\n    \"Speed\": { \"value\": 2.5 }\n  }\n}\n";

/// A quiet level: four goblins and an archer, nobody to fight (in the arena, goblins fall
/// within seconds, faster than a designer clicks).
pub(super) const CAMP: &str = r#"{ "format": 2, "entities": [
  { "id": "00000000000000a1", "archetype": "enemies/goblin", "components": { "Transform": { "translation": [40, 5, 0] } } },
  { "id": "00000000000000a2", "archetype": "enemies/goblin", "components": { "Transform": { "translation": [44, 7, 0] } } },
  { "id": "00000000000000a3", "archetype": "enemies/goblin", "components": { "Transform": { "translation": [48, 9, 0] } } },
  { "id": "00000000000000a4", "archetype": "enemies/goblin", "components": { "Transform": { "translation": [52, 11, 0] } } },
  { "id": "00000000000000a5", "archetype": "enemies/goblin_archer", "components": { "Transform": { "translation": [56, 13, 0] } } }
] }
"#;

/// A game: archetypes on disk, a world of goblins, and its inspector.
struct Game {
    dir: ArchetypeDir,
    library: ArchetypeLibrary,
    world: World,
    goblins: Vec<Entity>,
    inspector: Inspector,
}

impl Game {
    fn new(options: InspectorOptions) -> Game {
        let dir = ArchetypeDir::new(&[
            ("enemies/creature.json", CREATURE),
            ("enemies/goblin.json", GOBLIN),
        ]);
        let library = dir.load().unwrap();
        let mut world = World::new();
        let goblins = (0..3)
            .map(|_| library.spawn(&mut world, "enemies/goblin").unwrap())
            .collect();
        let inspector = Inspector::bind("127.0.0.1:0", options).unwrap();
        Game {
            dir,
            library,
            world,
            goblins,
            inspector,
        }
    }

    fn token(&self) -> String {
        let url = self.inspector.url();
        url[url.find("token=").unwrap() + 6..].to_string()
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.inspector.local_addr().port())
    }

    /// Sends `raw` (a whole request) and polls the inspector as a game's frames would until
    /// the answer comes: its status and body.
    fn raw(&mut self, raw: Vec<u8>) -> (u16, String) {
        let addr = self.inspector.local_addr();
        let (done, answer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(exchange(addr, &raw));
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            self.inspector.apply(&mut self.world, &mut self.library);
            if let Ok(result) = answer.try_recv() {
                return result;
            }
            assert!(Instant::now() < deadline, "no answer after 10 seconds");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A request with the token, the right host and, for a body, JSON.
    fn request(&mut self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let raw = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nX-Inspector-Token: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.host(),
            self.token(),
            body.len()
        );
        let (status, text) = self.raw(raw.into_bytes());
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    fn goblin_id(&self, index: usize) -> String {
        self.goblins[index].to_bits().get().to_string()
    }

    fn file(&self, relative: &str) -> String {
        std::fs::read_to_string(self.dir.root().join(relative)).unwrap()
    }
}

/// Sends `raw` (a whole request) to `addr`: the answer's status and body (reads bounded by a
/// timeout).
fn exchange(addr: SocketAddr, raw: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(raw).unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text[text.find("\r\n\r\n").unwrap() + 4..].to_string();
    (status, body)
}

/// A request with `token` and the host of `addr`, its answer's status and JSON body.
fn call(
    addr: SocketAddr,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let raw = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nX-Inspector-Token: {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, text) = exchange(addr, raw.as_bytes());
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A goblin spawned with its own `Health.max` (40, an override).
fn spawn_chief(game: &mut Game) -> hecs::Entity {
    let overrides = json!({ "Health": { "max": 40 } });
    let spawned = (game.library).spawn_with(&mut game.world, "enemies/goblin", &overrides);
    spawned.unwrap()
}

/// The component `name` of an entity as the API answers it.
fn component<'a>(entity: &'a Value, name: &str) -> &'a Value {
    let components = entity["components"].as_array().unwrap();
    let found = components.iter().find(|c| c["name"] == name);
    found.unwrap_or_else(|| panic!("no {name} in {entity}"))
}

/// The field at `path` of a component as the API answers it.
fn field<'a>(component: &'a Value, path: &[&str]) -> &'a Value {
    let fields = component["fields"].as_array().unwrap();
    let found = fields.iter().find(|f| f["path"] == json!(path));
    found.unwrap_or_else(|| panic!("no {path:?} in {component}"))
}

fn health_max() -> Value {
    json!([{ "component": "Health", "path": ["max"] }])
}

#[test]
fn lists_entities_filtered_and_paginated() {
    let mut game = Game::new(InspectorOptions::default());
    let (status, page) = game.request(
        "GET",
        "/api/entities?archetype=enemies/goblin&limit=2",
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(page["total"], 3);
    assert_eq!(page["entities"].as_array().unwrap().len(), 2);
    assert_eq!(page["entities"][0]["name"], "Goblin");
    assert_eq!(page["entities"][0]["archetype"], "enemies/goblin");
    let (_, page) = game.request("GET", "/api/entities?name=gob&offset=2", None);
    assert_eq!(page["entities"].as_array().unwrap().len(), 1);
    let (_, page) = game.request("GET", "/api/entities?component=Armor", None);
    assert_eq!(page["total"], 0);
    let (status, error) = game.request("GET", "/api/entities?component=Armour", None);
    assert_eq!(
        (status, error),
        (400, json!({ "error": "no component `Armour`" }))
    );
}

#[test]
fn shows_each_field_with_its_source() {
    let mut game = Game::new(InspectorOptions::default());
    let id = game.goblin_id(0);
    let body = json!({ "id": id, "component": "Health", "path": ["current"], "value": 5 });
    let (status, _) = game.request("POST", "/api/set", Some(body));
    assert_eq!(status, 200);
    assert_eq!(get::<Health>(&game.world, game.goblins[0]).current, 5.0);
    let (status, entity) = game.request("GET", &format!("/api/entity?id={id}"), None);
    assert_eq!(status, 200);
    assert_eq!(entity["archetype"], "enemies/goblin");
    let health = component(&entity, "Health");
    let file = game.dir.root().join("enemies/goblin.json");
    assert_eq!(
        health["fields"],
        json!([
            { "path": ["current"], "value": 5.0, "source": { "kind": "runtime" } },
            { "path": ["max"], "value": 12.0, "source": {
                "kind": "archetype", "archetype": "enemies/goblin",
                "file": file.to_string_lossy(), "line": 5 } },
        ])
    );
}

#[test]
fn shows_overrides_of_a_spawn() {
    let mut game = Game::new(InspectorOptions::default());
    let chief = spawn_chief(&mut game);
    let id = chief.to_bits().get();
    let (_, entity) = game.request("GET", &format!("/api/entity?id={id}"), None);
    let health = component(&entity, "Health");
    let spawned = json!({ "kind": "override", "from": "spawn" });
    assert_eq!(health["fields"][1]["source"], spawned);
}

#[test]
fn tells_an_override_of_the_scene_from_one_of_a_spawn() {
    let mut game = Game::new(InspectorOptions::default());
    let scene = r#"{ "format": 2, "entities": [
      { "id": "00000000000000b2", "archetype": "enemies/goblin", "components": { "Health": { "max": 40 } } }
    ] }"#;
    let options = archetype_engine::SceneLoadOptions::default();
    let file = std::path::Path::new("camp.scene.json");
    let loaded = archetype_engine::load_scene(
        scene.as_bytes(),
        Some(file),
        &mut game.world,
        &game.library,
        &options,
    );
    let placed = loaded.unwrap().entity("00000000000000b2".parse().unwrap());
    let chief = spawn_chief(&mut game);
    let fields_of = |game: &mut Game, entity: Entity| {
        let path = format!("/api/entity?id={}", entity.to_bits().get());
        let (_, answer) = game.request("GET", &path, None);
        component(&answer, "Health")["fields"].clone()
    };
    let scene_fields = fields_of(&mut game, placed.unwrap());
    let spawn_fields = fields_of(&mut game, chief);
    assert_eq!(scene_fields[1]["value"], 40.0);
    assert_eq!(
        scene_fields[1]["source"],
        json!({ "kind": "override", "from": "scene" })
    );
    assert_eq!(spawn_fields[1]["value"], 40.0);
    assert_eq!(
        spawn_fields[1]["source"],
        json!({ "kind": "override", "from": "spawn" })
    );
}

#[test]
fn shows_the_archetype_tree_and_diagnostics() {
    let mut game = Game::new(InspectorOptions::default());
    let (_, tree) = game.request("GET", "/api/archetypes", None);
    let creature = game.dir.root().join("enemies/creature.json");
    let goblin = game.dir.root().join("enemies/goblin.json");
    assert_eq!(
        tree,
        json!({ "archetypes": [
            { "name": "enemies/creature", "extends": [], "abstract": true,
              "file": creature.to_string_lossy(), "instances": 0 },
            { "name": "enemies/goblin", "extends": ["enemies/creature"], "abstract": false,
              "file": goblin.to_string_lossy(), "instances": 3 },
        ] })
    );
    let (_, diagnostics) = game.request("GET", "/api/diagnostics", None);
    assert_eq!(diagnostics, json!({ "diagnostics": [] }));
}

#[test]
fn apply_to_archetype_edits_only_the_value_and_reloads_every_instance() {
    let mut game = Game::new(InspectorOptions::default());
    let id = game.goblin_id(0);
    let body = json!({ "id": id, "component": "Health", "path": ["max"], "value": 30 });
    game.request("POST", "/api/set", Some(body));
    let (status, answer) = game.request(
        "POST",
        "/api/apply",
        Some(json!({ "id": id, "fields": health_max() })),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["entities_updated"], 3);
    assert_eq!(
        game.file("enemies/goblin.json"),
        GOBLIN.replace("\"max\": 12 }", "\"max\": 30 }")
    );
    for goblin in &game.goblins {
        assert_eq!(get::<Health>(&game.world, *goblin).max, 30.0);
    }
    // The goblin's value is now the archetype's.
    let (_, entity) = game.request("GET", &format!("/api/entity?id={id}"), None);
    let health = component(&entity, "Health");
    let source = &health["fields"][1]["source"];
    assert_eq!(
        (source["kind"].clone(), source["line"].clone()),
        (json!("archetype"), json!(5))
    );
}

#[test]
fn apply_to_archetype_adds_an_inherited_field_to_the_archetype_file() {
    let mut game = Game::new(InspectorOptions::default());
    let id = game.goblin_id(1);
    let body = json!({ "id": id, "component": "Speed", "path": ["value"], "value": 4.0 });
    game.request("POST", "/api/set", Some(body));
    let fields = json!([{ "component": "Speed", "path": ["value"] }]);
    let (status, _) = game.request(
        "POST",
        "/api/apply",
        Some(json!({ "id": id, "fields": fields })),
    );
    assert_eq!(status, 200);
    assert_eq!(
        game.file("enemies/goblin.json"),
        GOBLIN.replace("\"value\": 2.5 }", "\"value\": 4.0 }")
    );
}

#[test]
fn revert_to_archetype_restores_the_archetype_value() {
    let mut game = Game::new(InspectorOptions::default());
    let id = game.goblin_id(2);
    let body = json!({ "id": id, "component": "Health", "path": ["max"], "value": 99 });
    game.request("POST", "/api/set", Some(body));
    assert_eq!(get::<Health>(&game.world, game.goblins[2]).max, 99.0);
    let (status, answer) = game.request(
        "POST",
        "/api/revert",
        Some(json!({ "id": id, "fields": health_max() })),
    );
    assert_eq!((status, answer), (200, json!({ "reverted": 1 })));
    assert_eq!(get::<Health>(&game.world, game.goblins[2]).max, 12.0);
    assert_eq!(game.file("enemies/goblin.json"), GOBLIN);
}

#[test]
fn save_as_new_archetype_writes_the_differences_and_loads_it() {
    let mut game = Game::new(InspectorOptions::default());
    let id = game.goblin_id(0);
    let body = json!({ "id": id, "component": "Health", "path": ["max"], "value": 50 });
    game.request("POST", "/api/set", Some(body));
    let (status, answer) = game.request(
        "POST",
        "/api/save-as",
        Some(json!({ "id": id, "name": "enemies/goblin_brute" })),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        game.file("enemies/goblin_brute.json"),
        "{\n  \"extends\": \"enemies/goblin\",\n  \"components\": {\n    \"Health\": {\n      \"max\": 50.0\n    }\n  }\n}\n"
    );
    let brute = game
        .library
        .spawn(&mut game.world, "enemies/goblin_brute")
        .unwrap();
    assert_eq!(get::<Health>(&game.world, brute).max, 50.0);
    assert_eq!(get::<Health>(&game.world, brute).current, 12.0);
}

#[test]
fn refuses_a_request_without_the_token() {
    let mut game = Game::new(InspectorOptions::default());
    let raw = format!(
        "GET /api/entities HTTP/1.1\r\nHost: {}\r\n\r\n",
        game.host()
    );
    let (status, body) = game.raw(raw.into_bytes());
    assert_eq!(
        (status, body.as_str()),
        (401, r#"{"error":"missing or wrong token"}"#)
    );
    let raw = format!("GET /?token=0000 HTTP/1.1\r\nHost: {}\r\n\r\n", game.host());
    assert_eq!(game.raw(raw.into_bytes()).0, 401);
}

/// A write refused: the status and message, and neither the world nor the file changed.
fn assert_write_refused(game: &mut Game, raw: String, status: u16, message: &str) {
    let (got, body) = game.raw(raw.into_bytes());
    assert_eq!(
        (got, body.as_str()),
        (status, format!(r#"{{"error":"{message}"}}"#).as_str())
    );
    assert_eq!(get::<Health>(&game.world, game.goblins[0]).max, 12.0);
    assert_eq!(game.file("enemies/goblin.json"), GOBLIN);
}

fn set_request(game: &Game, host: &str, extra: &str) -> String {
    let body =
        json!({ "id": game.goblin_id(0), "component": "Health", "path": ["max"], "value": 1 })
            .to_string();
    format!(
        "POST /api/set HTTP/1.1\r\nHost: {host}\r\nX-Inspector-Token: {}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        game.token(),
        body.len()
    )
}

#[test]
fn refuses_a_foreign_host() {
    let mut game = Game::new(InspectorOptions::default());
    let port = game.inspector.local_addr().port();
    let raw = set_request(&game, &format!("evil.example:{port}"), "");
    let message = format!("host `evil.example:{port}` is not allowed");
    assert_write_refused(&mut game, raw, 403, &message);
}

#[test]
fn refuses_a_foreign_origin() {
    let mut game = Game::new(InspectorOptions::default());
    let raw = set_request(&game, &game.host(), "Origin: http://evil.example\r\n");
    let message = "origin `http://evil.example` is not allowed";
    assert_write_refused(&mut game, raw, 403, message);
}

#[test]
fn refuses_an_oversized_body() {
    let mut options = InspectorOptions::default();
    options.max_body_bytes = 16;
    let mut game = Game::new(options);
    let raw = set_request(&game, &game.host(), "");
    assert_write_refused(&mut game, raw, 413, "request body too large");
}

#[test]
fn refuses_writes_in_read_only_mode() {
    let mut options = InspectorOptions::default();
    options.read_only = true;
    let mut game = Game::new(options);
    let raw = set_request(&game, &game.host(), "");
    assert_write_refused(&mut game, raw, 403, "the inspector is read-only");
    let (status, _) = game.request("GET", "/api/entities", None);
    assert_eq!(status, 200);
}

#[test]
fn refuses_a_new_archetype_outside_the_root() {
    let mut game = Game::new(InspectorOptions::default());
    let id = game.goblin_id(0);
    let (status, answer) = game.request(
        "POST",
        "/api/save-as",
        Some(json!({ "id": id, "name": "../outside" })),
    );
    assert_eq!(status, 409);
    assert_eq!(
        answer["error"],
        "archetype name `../outside` leaves the archetypes root; names are paths relative to the archetypes root, like `enemies/goblin`, made of ASCII letters, digits, `_` and `-`"
    );
    let parent = game.dir.root().parent().unwrap();
    assert!(!parent.join("outside.json").exists());
}

#[test]
fn refuses_to_bind_beyond_loopback_unless_allowed() {
    let error = Inspector::bind("0.0.0.0:0", InspectorOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "0.0.0.0:0 is not a loopback address; set InspectorOptions::allow_remote to serve other machines"
    );
}

#[test]
fn serves_the_page_with_the_token() {
    let mut game = Game::new(InspectorOptions::default());
    let raw = format!(
        "GET /?token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
        game.token(),
        game.host()
    );
    let (status, page) = game.raw(raw.into_bytes());
    assert_eq!(status, 200);
    assert!(page.contains("<title>archetype-engine inspector</title>"));
}

#[test]
fn write_back_through_the_library_api() {
    let dir = ArchetypeDir::new(&[
        ("enemies/creature.json", CREATURE),
        ("enemies/goblin.json", GOBLIN),
    ]);
    let library = dir.load().unwrap();
    let max = vec![PathSegment::Key("max".into())].into();
    let file = (library)
        .write_to_archetype(
            "enemies/goblin",
            &[FieldValue::new("Health", max, json!(20))],
        )
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        GOBLIN.replace("\"max\": 12 }", "\"max\": 20 }")
    );
    let name = vec![PathSegment::Key("first".into())].into();
    let error = (library)
        .write_to_archetype(
            "enemies/goblin",
            &[FieldValue::new("Name", name, json!("x"))],
        )
        .unwrap_err();
    assert!(matches!(error, WriteBackError::NoPlace { .. }));
    assert_eq!(
        dir.tidy(&error.to_string()),
        "`archetypes/enemies/goblin.json` has no object at `/components/Name` to hold Name.first; edit it by hand"
    );
    let error = library
        .write_to_archetype("enemies/troll", &[])
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "no archetype `enemies/troll` in the library"
    );
}

/// The demo's process, killed and waited for when dropped.
pub(super) struct DemoProcess(std::process::Child);

impl Drop for DemoProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `archetool demo --headless --inspect` in a copy of the repository's archetypes under
/// `sandbox`, starting from `scene` (the text of a scene file), for
/// `frames` frames: the process and the URL it printed first. Its output is read to the end
/// on a thread of its own (a closed pipe would stop the demo).
pub(super) fn start_demo(
    sandbox: &std::path::Path,
    scene: &str,
    frames: u64,
) -> (DemoProcess, String) {
    use std::io::BufRead;
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    crate::support::copy_tree(&repo.join("archetypes"), &sandbox.join("archetypes"));
    std::fs::write(sandbox.join("arena.scene.json"), scene).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_archetool"))
        .args(["demo", "--headless", "--frames", &frames.to_string()])
        .args(["--inspect", "127.0.0.1:0"])
        .args([
            "--scene",
            "arena.scene.json",
            "--scene-out",
            "saves/arena.scene.json",
        ])
        .current_dir(sandbox)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut demo = DemoProcess(child);
    let stdout = demo.0.stdout.take().unwrap();
    let (first, url) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(stdout).lines();
        let _ = first.send(lines.next().and_then(Result::ok).unwrap_or_default());
        lines.for_each(drop);
    });
    let url = url
        .recv_timeout(Duration::from_secs(20))
        .expect("the demo prints its URL");
    (demo, url)
}

#[test]
fn the_demo_serves_the_inspector_and_applies_to_the_goblin_archetype() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sandbox = tempfile::tempdir().unwrap();
    let (_demo, url) = start_demo(sandbox.path(), CAMP, 900);
    let url = url.as_str();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    let host = &url["http://".len()..];
    let addr: SocketAddr = host[..host.find('/').unwrap()].parse().unwrap();
    let token = &url[url.find("token=").unwrap() + 6..];

    let (status, page) = call(
        addr,
        token,
        "GET",
        "/api/entities?archetype=enemies/goblin",
        None,
    );
    assert_eq!(status, 200, "{page}");
    let goblins: Vec<String> = (page["entities"].as_array().unwrap().iter())
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(goblins.len() >= 2, "{page}");
    let (_, entity) = call(
        addr,
        token,
        "GET",
        &format!("/api/entity?id={}", goblins[0]),
        None,
    );
    let health = component(&entity, "Health");
    let max = field(health, &["max"]);
    assert_eq!(max["source"]["kind"], "archetype", "{max}");
    assert!(max["source"]["file"]
        .as_str()
        .unwrap()
        .ends_with("enemies/goblin.json"));
    assert_eq!(max["source"]["line"], 5);

    let set = json!({ "id": goblins[0], "component": "Health", "path": ["max"], "value": 31 });
    assert_eq!(call(addr, token, "POST", "/api/set", Some(set)).0, 200);
    let apply = json!({ "id": goblins[0], "fields": health_max() });
    let (status, answer) = call(addr, token, "POST", "/api/apply", Some(apply));
    assert_eq!(status, 200, "{answer}");
    let goblin_file = repo.join("archetypes/enemies/goblin.json");
    let before = std::fs::read_to_string(goblin_file).unwrap();
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join("archetypes/enemies/goblin.json")).unwrap(),
        before.replace("\"max\": 12 }", "\"max\": 31 }")
    );
    let (_, other) = call(
        addr,
        token,
        "GET",
        &format!("/api/entity?id={}", goblins[1]),
        None,
    );
    let health = component(&other, "Health");
    let max = field(health, &["max"]);
    assert_eq!(max["value"], 31.0, "{other}");
}

#[test]
fn revert_drops_the_override_so_archetype_changes_reach_it_again() {
    let mut game = Game::new(InspectorOptions::default());
    let chief = spawn_chief(&mut game);
    let chief_id = chief.to_bits().get().to_string();
    let (status, _) = game.request(
        "POST",
        "/api/revert",
        Some(json!({ "id": chief_id, "fields": health_max() })),
    );
    assert_eq!(status, 200);
    assert_eq!(get::<Health>(&game.world, chief).max, 12.0);
    let id = game.goblin_id(0);
    let body = json!({ "id": id, "component": "Health", "path": ["max"], "value": 25 });
    game.request("POST", "/api/set", Some(body));
    game.request(
        "POST",
        "/api/apply",
        Some(json!({ "id": id, "fields": health_max() })),
    );
    assert_eq!(get::<Health>(&game.world, chief).max, 25.0);
}

#[test]
fn apply_drops_the_entity_s_override_so_later_archetype_edits_reach_it() {
    let mut game = Game::new(InspectorOptions::default());
    let chief = spawn_chief(&mut game);
    let chief_id = chief.to_bits().get().to_string();
    let (status, answer) = game.request(
        "POST",
        "/api/apply",
        Some(json!({ "id": chief_id, "fields": health_max() })),
    );
    assert_eq!(status, 200, "{answer}");
    let with_40 = GOBLIN.replace("\"max\": 12 }", "\"max\": 40 }");
    assert_eq!(game.file("enemies/goblin.json"), with_40);
    for goblin in &game.goblins {
        assert_eq!(get::<Health>(&game.world, *goblin).max, 40.0);
    }
    let (_, entity) = game.request("GET", &format!("/api/entity?id={chief_id}"), None);
    let source = &field(component(&entity, "Health"), &["max"])["source"];
    assert_eq!(source["kind"], "archetype", "{entity}");
    // A designer's next edit of the archetype reaches the chief like every other goblin.
    let file = game.dir.root().join("enemies/goblin.json");
    std::fs::write(&file, with_40.replace("\"max\": 40 }", "\"max\": 45 }")).unwrap();
    let update = game.library.reload_files(&[file.as_path()]);
    archetype_engine::apply_update(&mut game.world, &game.library, &update);
    assert_eq!(get::<Health>(&game.world, chief).max, 45.0);
}

const TOWER: &str = "{\n  \"components\": { \"Name\": \"Tower\" },\n  \"children\": {\n    \"guard\": {\n      \"archetype\": \"enemies/goblin\",\n      \"components\": { \"Name\": \"Guard\" }\n    }\n  }\n}\n";

#[test]
fn apply_writes_a_child_entity_s_values_into_its_archetype_s_children() {
    let mut game = Game::new(InspectorOptions::default());
    game.dir.write("towers/tower.json", TOWER.as_bytes());
    let tower_file = game.dir.root().join("towers/tower.json");
    let update = game.library.reload_files(&[tower_file.as_path()]);
    assert!(update.errors.is_empty(), "{:?}", update.errors);
    let towers: Vec<Entity> = (0..2)
        .map(|_| game.library.spawn(&mut game.world, "towers/tower").unwrap())
        .collect();
    let guards: Vec<Entity> = (towers.iter())
        .map(|tower| get::<archetype_engine::Children>(&game.world, *tower).0[0].entity())
        .collect();
    let guard_id = guards[0].to_bits().get().to_string();
    let body = json!({ "id": guard_id, "component": "Health", "path": ["max"], "value": 20 });
    assert_eq!(game.request("POST", "/api/set", Some(body)).0, 200);
    let (status, answer) = game.request(
        "POST",
        "/api/apply",
        Some(json!({ "id": guard_id, "fields": health_max() })),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["archetype"], "towers/tower");
    assert_eq!(
        game.file("towers/tower.json"),
        TOWER.replace(
            "\"Name\": \"Guard\" }",
            "\"Name\": \"Guard\", \"Health\": {\"max\":20.0} }"
        )
    );
    // Both towers' guards have it; the goblins outside towers do not.
    for guard in &guards {
        assert_eq!(get::<Health>(&game.world, *guard).max, 20.0);
    }
    assert_eq!(get::<Health>(&game.world, game.goblins[0]).max, 12.0);
    assert_eq!(game.file("enemies/goblin.json"), GOBLIN);
    // A new archetype extends a root, not a child.
    let (status, answer) = game.request(
        "POST",
        "/api/save-as",
        Some(json!({ "id": guard_id, "name": "towers/guard" })),
    );
    assert_eq!(
        (status, answer),
        (
            400,
            json!({ "error": "the entity is a child of an archetype instance; save its instance's root as a new archetype" })
        )
    );
}

#[cfg(unix)]
#[test]
fn refuses_a_new_archetype_through_a_link_out_of_the_root() {
    let mut game = Game::new(InspectorOptions::default());
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), game.dir.root().join("evil")).unwrap();
    let id = game.goblin_id(0);
    let (status, answer) = game.request(
        "POST",
        "/api/save-as",
        Some(json!({ "id": id, "name": "evil/goblin" })),
    );
    assert_eq!(status, 409);
    assert_eq!(
        game.dir.tidy(answer["error"].as_str().unwrap()),
        "`archetypes/evil/goblin.json` is outside the archetypes root `archetypes`; nothing was written"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn write_back_refuses_what_a_load_would_refuse() {
    let dir = ArchetypeDir::new(&[
        ("enemies/creature.json", CREATURE),
        ("enemies/goblin.json", GOBLIN),
    ]);
    let library = dir.load().unwrap();
    let mut deep = json!(1);
    for _ in 0..70 {
        deep = json!([deep]);
    }
    let notes = FieldValue::new("Notes", Default::default(), deep);
    let error = library
        .write_to_archetype("enemies/goblin", &[notes])
        .unwrap_err();
    assert!(matches!(error, WriteBackError::WouldNotLoad { .. }));
    assert_eq!(
        dir.tidy(&error.to_string()),
        "`archetypes/enemies/goblin.json` would not load (nesting deeper than 64 levels at line 7); nothing was written"
    );
    dir.write(
        "enemies/goblin.json",
        b"{ \"components\": { \"Health\": { \"max\": 12, } } }",
    );
    let max = vec![PathSegment::Key("max".into())].into();
    let error = (library)
        .write_to_archetype(
            "enemies/goblin",
            &[FieldValue::new("Health", max, json!(20))],
        )
        .unwrap_err();
    assert!(
        matches!(error, WriteBackError::WouldNotLoad { .. }),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.root().join("enemies/goblin.json")).unwrap(),
        "{ \"components\": { \"Health\": { \"max\": 12, } } }"
    );
}
