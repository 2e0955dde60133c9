//! The live inspector in a real browser: Debian's headless Chromium driven through ChromeDriver
//! (WebDriver's JSON over HTTP, spoken here with `std::net`), against `archetool demo
//! --headless --inspect`. A designer's loop: open the printed URL, find a goblin, see
//! `Health.max` attributed to `enemies/goblin.json` line 5, change it live, apply it to the
//! archetype (the file's text changes in that value only, every goblin follows, the page shows
//! it), then save the goblin as a new archetype and spawn that by name.
//!
//! CI installs Chromium and ChromeDriver (`.ci/run`): there a missing one fails the test;
//! elsewhere it is skipped, saying so. Every wait is bounded; the browser, the driver and the
//! demo are ended when the test ends, however it ends. Everything talks over loopback only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use archetype_engine::ArchetypeLibrary;
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A child process, killed and waited for when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether Chromium and ChromeDriver are installed (see the module docs).
fn browser_found() -> bool {
    let found = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs this test with Chromium and ChromeDriver installed"
        );
        eprintln!("skipped: no {CHROMIUM} or {CHROMEDRIVER}");
    }
    found
}

/// A free loopback port (taken and given back; the driver binds it right after).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// One HTTP/1.1 exchange with `addr`: the status and the JSON body (read by its
/// `Content-Length`: the driver keeps connections open).
fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line[9..12].parse().unwrap();
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap();
            }
        }
    }
    let mut answer = vec![0; length];
    reader.read_exact(&mut answer).unwrap();
    (
        status,
        serde_json::from_slice(&answer).unwrap_or(Value::Null),
    )
}

/// A WebDriver session of a headless Chromium, deleted when dropped.
struct Browser {
    driver: SocketAddr,
    session: String,
    /// Dropped after the session is deleted.
    _driver: Driver,
}

/// ChromeDriver's process: asked to shut down (which quits every browser it started, even one
/// whose session was never made) and then killed, when dropped.
struct Driver {
    addr: SocketAddr,
    _process: Process,
}

impl Drop for Driver {
    fn drop(&mut self) {
        send_quietly(self.addr, "GET", "/shutdown");
    }
}

/// Sends a request to `addr` and waits (at most 10 s) for its answer's first bytes, never
/// failing: for cleaning up.
fn send_quietly(addr: SocketAddr, method: &str, path: &str) {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n");
    let _ = stream.write_all(request.as_bytes());
    let _ = stream.read(&mut [0; 512]);
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        let port = free_port();
        let process = Process(
            Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let driver: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let guard = Driver {
            addr: driver,
            _process: process,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(driver).is_err() {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not start in 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1400,900",
        ];
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
        } } });
        let (status, answer) = http(driver, "POST", "/session", Some(&capabilities));
        assert_eq!(status, 200, "no browser session: {answer}");
        let session = answer["value"]["sessionId"].as_str().unwrap().to_string();
        Browser {
            driver,
            session,
            _driver: guard,
        }
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.try_command(method, path, body.as_ref());
        assert_eq!(status, 200, "{method} {path}: {answer}");
        answer["value"].clone()
    }

    fn try_command(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let path = format!("/session/{}{path}", self.session);
        http(self.driver, method, &path, body)
    }

    /// Finds the element `css` selects and does `action` to it (`/element/ID` + `action`),
    /// finding it again when the page redrew it meanwhile (it refreshes every second).
    fn on_element(&self, css: &str, action: &str, body: Value) {
        for _ in 0..5 {
            let element = self.element(css);
            let path = format!("/element/{element}{action}");
            let (status, answer) = self.try_command("POST", &path, Some(&body));
            match status {
                200 => return,
                404 if answer["value"]["error"] == "stale element reference" => continue,
                _ => panic!("POST {path}: {answer}"),
            }
        }
        panic!("`{css}` kept being redrawn");
    }

    fn open(&self, url: &str) {
        self.command("POST", "/url", Some(json!({ "url": url })));
    }

    /// Runs `script` (a function body; `arguments` as given) in the page.
    fn run(&self, script: &str, args: Value) -> Value {
        let body = json!({ "script": script, "args": args });
        self.command("POST", "/execute/sync", Some(body))
    }

    /// The element `css` selects (the first).
    fn element(&self, css: &str) -> String {
        let found = self.command(
            "POST",
            "/element",
            Some(json!({ "using": "css selector", "value": css })),
        );
        let key = "element-6066-11e4-a52e-4f735466cecf";
        found[key].as_str().unwrap().to_string()
    }

    fn click(&self, css: &str) {
        self.on_element(css, "/click", json!({}));
    }

    /// Types `text` into the input `css` selects: its value selected first, so the text
    /// replaces it (as a person would), and it keeps the focus while it is typed.
    fn type_into(&self, css: &str, text: &str) {
        self.on_element(css, "/click", json!({}));
        self.run(
            "const input = document.querySelector(arguments[0]); input.focus(); input.select();",
            json!([css]),
        );
        self.on_element(css, "/value", json!({ "text": text }));
    }

    /// Waits (at most 20 s) until `script` returns something other than `null` or `false`, and
    /// returns it.
    fn wait_for(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let value = self.run(script, json!([]));
            if !value.is_null() && value != json!(false) {
                return value;
            }
            if Instant::now() > deadline {
                let page = self.run("return document.body.innerText;", json!([]));
                panic!(
                    "waited 20 s for {what}; the page shows:\n{}",
                    page.as_str().unwrap_or("")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The page as a PNG.
    fn screenshot(&self) -> Vec<u8> {
        let encoded = self.command("GET", "/screenshot", None);
        base64_decoded(encoded.as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        send_quietly(self.driver, "DELETE", &format!("/session/{}", self.session));
    }
}

/// Standard base64 (WebDriver's screenshots), decoded.
fn base64_decoded(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let bits = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, d)| acc | u32::from(*d) << (18 - 6 * i));
        for byte in 0..chunk.len() - 1 {
            out.push((bits >> (16 - 8 * byte)) as u8);
        }
    }
    out
}

/// The row of the field `label` (`Health.max`) in the entity view.
fn row(label: &str) -> String {
    format!("tr[data-field='{label}']")
}

#[test]
fn a_designer_tunes_a_goblin_in_the_browser_and_applies_it_to_its_archetype() {
    if !browser_found() {
        return;
    }
    let sandbox = tempfile::tempdir().unwrap();
    let (_demo, url) = crate::inspector::start_demo(sandbox.path(), crate::inspector::CAMP, 3600);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );
    let goblin_file = sandbox.path().join("archetypes/enemies/goblin.json");
    let before = std::fs::read_to_string(&goblin_file).unwrap();
    let browser = Browser::start(&sandbox.path().join("profile"));
    browser.open(&url);

    // Find a goblin.
    browser.type_into("#f-archetype", "enemies/goblin");
    let count = browser.wait_for(
        "the goblins listed",
        "const items = document.querySelectorAll('#entities li');
         return items.length > 1 && items[0].textContent.includes('enemies/goblin') ? items.length : null;",
    );
    assert!(count.as_u64().unwrap() >= 2);
    browser.click("#entities li");
    let max = row("Health.max");
    let source = browser.wait_for(
        "the goblin's Health.max",
        &format!("const row = document.querySelector(\"{max}\"); return row && row.querySelector('.source').textContent;"),
    );
    let source = source.as_str().unwrap();
    assert!(source.ends_with("enemies/goblin.json:5"), "{source}");

    // Change it live, then apply it to the archetype.
    browser.type_into(&format!("{max} input.value"), "31\u{E007}");
    browser.wait_for(
        "the live edit",
        "return document.getElementById('status').textContent.startsWith('set Health.max');",
    );
    browser.click(&format!("{max} input.pick"));
    browser.click("#apply");
    let status = browser.wait_for(
        "the apply",
        "const s = document.getElementById('status').textContent; return s.startsWith('applied') ? s : null;",
    );
    assert!(
        status
            .as_str()
            .unwrap()
            .starts_with("applied to enemies/goblin"),
        "{status}"
    );
    assert_eq!(
        std::fs::read_to_string(&goblin_file).unwrap(),
        before.replace("\"max\": 12 }", "\"max\": 31 }")
    );
    // The page's view follows: the value, still the archetype file's.
    let shown = browser.wait_for(
        "the updated view",
        &format!("const row = document.querySelector(\"{max}\");
                  const source = row && row.querySelector('.source').textContent;
                  return row && row.querySelector('input.value').value === '31' && source.endsWith(':5') ? source : null;"),
    );
    assert!(
        shown.as_str().unwrap().ends_with("enemies/goblin.json:5"),
        "{shown}"
    );
    // Every other goblin was hot-reloaded.
    let every_max = browser.run(
        "const token = new URLSearchParams(location.search).get('token');
         const get = path => fetch(path, { headers: { 'X-Inspector-Token': token } }).then(r => r.json());
         return get('/api/entities?archetype=enemies/goblin&limit=1000').then(page =>
           Promise.all(page.entities.map(e => get('/api/entity?id=' + e.id).then(entity =>
             entity.components.find(c => c.name === 'Health').value.max))));",
        json!([]),
    );
    let every_max = every_max.as_array().unwrap();
    assert!(
        every_max.len() >= 2 && every_max.iter().all(|max| max == 31.0),
        "{every_max:?}"
    );

    std::fs::write(screenshot_path(), browser.screenshot()).unwrap();

    // Save the goblin as a new archetype, then spawn it by name.
    browser.type_into("#new-name", "enemies/goblin_veteran");
    browser.click("#save-as");
    browser.wait_for(
        "the save",
        "return document.getElementById('status').textContent.startsWith('saved as enemies/goblin_veteran');",
    );
    let veteran = sandbox
        .path()
        .join("archetypes/enemies/goblin_veteran.json");
    let text = std::fs::read_to_string(veteran).unwrap();
    assert!(
        text.starts_with("{\n  \"extends\": \"enemies/goblin\",\n  \"components\": {"),
        "{text}"
    );
    let registry = archetool::demo::components::registry();
    let library = ArchetypeLibrary::load(sandbox.path().join("archetypes"), registry).unwrap();
    let mut world = hecs::World::new();
    let spawned = library.spawn(&mut world, "enemies/goblin_veteran").unwrap();
    let health = world
        .get::<&archetool::demo::components::Health>(spawned)
        .unwrap();
    assert_eq!(health.max, 31.0);
}

/// Where the test leaves its screenshot of the page: `INSPECTOR_SCREENSHOT`, or a file in
/// the test's temporary directory.
fn screenshot_path() -> PathBuf {
    match std::env::var_os("INSPECTOR_SCREENSHOT") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("inspector.png"),
    }
}
