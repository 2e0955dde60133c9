//! The live inspector's workloads: what a game pays per frame for having it
//! ([`Inspector::apply`] with nothing waiting), and how long the page waits for a filtered
//! page of a large world (a real request over loopback, answered by `apply` on the game
//! thread).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use archetype_engine::{ArchetypeLibrary, Inspector, InspectorOptions};
use hecs::World;
use tempfile::TempDir;

use crate::bench::reload::goblin_library;
use crate::bench::spawn::GOBLIN;

/// `apply` calls per timed round of the idle figure (one call is far below the clock's grain).
const IDLE_CALLS: usize = 10_000;

/// A world of `entities` live goblins with an inspector on loopback.
pub struct InspectorFixture {
    _dir: TempDir,
    library: ArchetypeLibrary,
    world: World,
    inspector: Inspector,
    token: String,
}

impl InspectorFixture {
    /// Spawns `entities` goblins and binds an inspector.
    ///
    /// # Panics
    /// If the goblin does not load or no loopback port can be bound (bench setup).
    pub fn new(entities: usize) -> InspectorFixture {
        let (dir, library) = goblin_library(12);
        let mut world = World::new();
        for _ in 0..entities {
            library
                .spawn(&mut world, GOBLIN)
                .unwrap_or_else(|error| panic!("bench setup: {error}"));
        }
        let inspector = Inspector::bind("127.0.0.1:0", InspectorOptions::default())
            .unwrap_or_else(|error| panic!("bench setup: {error}"));
        let url = inspector.url();
        let token = url[url.find("token=").map_or(0, |at| at + 6)..].to_string();
        InspectorFixture {
            _dir: dir,
            library,
            world,
            inspector,
            token,
        }
    }

    /// The mean time of one `apply` with no request waiting, over 10,000 calls.
    pub fn idle_apply(&mut self) -> Duration {
        let start = Instant::now();
        for _ in 0..IDLE_CALLS {
            self.inspector.apply(&mut self.world, &mut self.library);
        }
        start.elapsed() / IDLE_CALLS as u32
    }

    /// One filtered page (by archetype and name, the last hundred of the entities) requested
    /// over loopback, `apply` called as a game's frames would until the answer comes: the time
    /// from the request sent to its answer read.
    ///
    /// # Panics
    /// If the request fails or gets no answer within ten seconds.
    pub fn entity_page(&mut self, entities: usize) -> Duration {
        let offset = entities.saturating_sub(100);
        let path = format!("/api/entities?archetype={GOBLIN}&name=gob&offset={offset}&limit=100");
        let addr = self.inspector.local_addr();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Inspector-Token: {}\r\n\r\n",
            self.token
        );
        let (done, answer) = mpsc::channel();
        let start = Instant::now();
        std::thread::spawn(move || {
            let _ = done.send(exchange(addr, request.as_bytes()));
        });
        let deadline = start + Duration::from_secs(10);
        loop {
            self.inspector.apply(&mut self.world, &mut self.library);
            if let Ok(result) = answer.try_recv() {
                let elapsed = start.elapsed();
                let text = result.unwrap_or_else(|error| panic!("bench: {error}"));
                assert!(text.starts_with("HTTP/1.1 200"), "bench: {text}");
                return elapsed;
            }
            assert!(Instant::now() < deadline, "bench: no answer in ten seconds");
            std::hint::spin_loop();
        }
    }
}

/// Sends `request` to `addr` and reads the whole answer.
fn exchange(addr: SocketAddr, request: &[u8]) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(request)?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}
