//! Hot-reload workloads: patching every live instance after an edit
//! ([`ArchetypeLibrary::set_source`] + [`apply_update`]), and the latency of the real
//! [`HotReloader`] from a file write to the change being visible in the world.

use std::fs;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use archetype_engine::{
    apply_update, ArchetypeLibrary, HotReloadOptions, HotReloader, WatchBackend,
};
use hecs::{Entity, World};
use tempfile::TempDir;

use crate::bench::load::{leaf_path, LoadFixture};
use crate::bench::spawn::{write, CREATURE, GOBLIN};
use crate::demo::components::{self, Health};

/// The goblin's file path under the archetypes root.
const GOBLIN_PATH: &str = "enemies/goblin.json";

/// The goblin of the spawn workloads, with `Health.max` set to `max` (`current` stays 12).
fn goblin_file(max: u32) -> String {
    format!(
        r#"{{
  "extends": "base/creature",
  "components": {{
    "Name": "Goblin",
    "Glyph": {{ "ch": "g", "color": "Green" }},
    "Health": {{ "current": 12, "max": {max} }},
    "Speed": {{ "value": 2.0 }},
    "Faction": "Hostile"
  }}
}}
"#
    )
}

/// Writes the creature and the goblin (with `Health.max` = `max`) into a new temporary
/// directory and loads it.
pub(crate) fn goblin_library(max: u32) -> (TempDir, ArchetypeLibrary) {
    let dir = tempfile::tempdir().expect("bench setup: cannot create a temporary directory");
    write(dir.path(), "base/creature.json", CREATURE);
    write(dir.path(), GOBLIN_PATH, &goblin_file(max));
    let library = ArchetypeLibrary::load(dir.path(), components::registry())
        .unwrap_or_else(|error| panic!("bench setup: the goblin does not load: {error}"));
    (dir, library)
}

/// `instances` live goblins; each [`patch`](Self::patch) changes `Health.max` in the goblin's
/// file (alternating between two values) and applies it to all of them.
pub struct PatchFixture {
    library: ArchetypeLibrary,
    world: World,
    probe: Entity,
    /// The probe's `Health.current`, which no patch may change.
    probe_current: f32,
    instances: usize,
    max: u32,
    _dir: TempDir,
}

impl PatchFixture {
    /// Loads the goblin and spawns `instances` of it.
    ///
    /// # Panics
    /// If the files cannot be written, or the goblin does not load or spawn.
    pub fn new(instances: usize) -> Self {
        Self::with_state(instances, false)
    }

    /// The same goblins mid-fight: every one has taken damage (`Health.current` differs from
    /// the archetype's), so no live `Health` equals the archetype's value and each is patched
    /// field by field.
    ///
    /// # Panics
    /// As [`new`](Self::new).
    pub fn mid_fight(instances: usize) -> Self {
        Self::with_state(instances, true)
    }

    fn with_state(instances: usize, hurt: bool) -> Self {
        let max = 12;
        let (dir, library) = goblin_library(max);
        let mut world = World::new();
        let spawned = library
            .spawn_many(&mut world, GOBLIN, instances)
            .unwrap_or_else(|error| panic!("bench setup: cannot spawn goblins: {error}"));
        let probe = *spawned
            .last()
            .expect("bench setup: the patch workload needs at least one instance");
        if hurt {
            for (i, &goblin) in spawned.iter().enumerate() {
                if let Ok(mut health) = world.get::<&mut Health>(goblin) {
                    health.current = (i % 11) as f32 + 1.0;
                }
            }
        }
        let probe_current = world
            .get::<&Health>(probe)
            .map(|health| health.current)
            .expect("bench setup: the goblin has no Health");
        PatchFixture {
            library,
            world,
            probe,
            probe_current,
            instances,
            max,
            _dir: dir,
        }
    }

    /// Live instances.
    pub fn instances(&self) -> usize {
        self.instances
    }

    /// One edit, applied: `set_source` of the goblin's file with `Health.max` changed, then
    /// `apply_update` to the world. Returns the time each step took.
    ///
    /// # Panics
    /// If the edit is not applied to every instance, or touches `Health.current` (runtime
    /// state).
    pub fn patch(&mut self) -> (Duration, Duration) {
        self.max = if self.max == 12 { 13 } else { 12 };
        let text = goblin_file(self.max);
        let start = Instant::now();
        let update = self.library.set_source(GOBLIN_PATH, Some(&text));
        let resolved = start.elapsed();
        let report = apply_update(&mut self.world, &self.library, &update);
        let applied = start.elapsed() - resolved;
        assert_eq!(
            report.entities_updated(),
            self.instances,
            "bench: the edit did not reach every instance: {report}"
        );
        let health = self
            .world
            .get::<&Health>(self.probe)
            .map(|health| (health.current, health.max))
            .ok();
        assert_eq!(
            health,
            Some((self.probe_current, self.max as f32)),
            "bench: the patch is wrong"
        );
        (resolved, applied)
    }

    /// Reference: what writing the same field by hand costs, a query over every instance
    /// setting `Health.max` (the floor for any patch).
    pub fn write_by_hand(&mut self) -> Duration {
        self.max = if self.max == 12 { 13 } else { 12 };
        let max = self.max as f32;
        let start = Instant::now();
        for health in self.world.query_mut::<&mut Health>() {
            health.max = max;
        }
        start.elapsed()
    }
}

/// What [`watch_latency`] measured.
#[derive(Clone, Debug)]
pub struct LatencyRun {
    /// Per save: from the write returning to `apply` having applied it.
    pub samples: Vec<Duration>,
    /// How the reloader noticed the writes.
    pub backend: WatchBackend,
}

/// How long to wait for one save to show before giving up.
const SAVE_TIMEOUT: Duration = Duration::from_secs(3);

/// The same for a save written in place under the polling watcher in a big tree (found by a
/// full sweep, which it spaces out to stay cheap).
const POLLED_SAVE_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs `frame` every millisecond, as a game runs its frames, until it says save number `save`
/// (written at `written`) is applied; the time from the write to that frame's end.
///
/// # Errors
/// What `frame` says, or that the save was not applied within `timeout`.
pub(crate) fn until_applied(
    save: usize,
    written: Instant,
    timeout: Duration,
    mut frame: impl FnMut() -> Result<bool, String>,
) -> Result<Duration, String> {
    loop {
        if frame()? {
            return Ok(written.elapsed());
        }
        if written.elapsed() > timeout {
            return Err(format!(
                "save {save} was not applied within {} s",
                timeout.as_secs()
            ));
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// Watcher latency with the real [`HotReloader`] and its default options: `saves` times,
/// write the goblin's file in place (with a new `Health.max`), then call `apply` every
/// millisecond, as a game calls it every frame, until the new value is visible on a live
/// goblin (of `instances`). Each sample is the time from the write returning to that `apply`
/// returning.
///
/// # Errors
/// If the watcher cannot be set up, or a save is not applied within 3 seconds.
///
/// # Panics
/// If the files cannot be written or the goblin does not load.
pub fn watch_latency(saves: usize, instances: usize) -> Result<LatencyRun, String> {
    let (dir, mut library) = goblin_library(12);
    let mut world = World::new();
    let spawned = library
        .spawn_many(&mut world, GOBLIN, instances.max(1))
        .map_err(|error| format!("cannot spawn goblins: {error}"))?;
    let probe = spawned[0];
    let mut reloader = HotReloader::new(&library)
        .map_err(|error| format!("cannot watch {}: {error}", dir.path().display()))?;
    let path: PathBuf = dir.path().join(GOBLIN_PATH);
    let mut samples = Vec::with_capacity(saves);
    for save in 0..saves {
        let max = 100 + save as u32;
        fs::write(&path, goblin_file(max))
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        let written = Instant::now();
        let latency = until_applied(save, written, SAVE_TIMEOUT, || {
            let report = reloader.apply(&mut world, &mut library);
            if !report.errors().is_empty() {
                return Err(format!("save {save} did not apply cleanly: {report}"));
            }
            Ok(world
                .get::<&Health>(probe)
                .is_ok_and(|health| health.max == max as f32))
        })?;
        samples.push(latency);
    }
    Ok(LatencyRun {
        samples,
        backend: reloader.backend(),
    })
}

/// What [`polling_watch`] measured.
#[derive(Clone, Debug)]
pub struct PollingRun {
    /// The share of one core the process used while nothing changed, in percent.
    pub idle_cpu_percent: f64,
    /// Per save of a leaf: from the write returning to `apply` having applied it.
    pub samples: Vec<Duration>,
}

/// The polling watcher ([`HotReloadOptions::force_polling`], its default interval) over a
/// generated library of `files` archetypes ([`LoadFixture`]): the process's CPU time while
/// nothing changes for `idle` (nothing else runs meanwhile), then `saves` edits of a leaf with
/// live instances, each timed from the write to `apply` having applied it.
///
/// # Errors
/// If the watcher cannot be set up, the CPU time cannot be read (no `/proc`), or a save is not
/// applied within 3 seconds.
pub fn polling_watch(files: usize, idle: Duration, saves: usize) -> Result<PollingRun, String> {
    let fixture = LoadFixture::generate(files);
    let mut library = fixture.load();
    let relative = leaf_path(0);
    let name = relative.trim_end_matches(".json").to_string();
    let mut world = World::new();
    let probe = library
        .spawn(&mut world, &name)
        .map_err(|error| format!("cannot spawn {name}: {error}"))?;
    let mut options = HotReloadOptions::default();
    options.force_polling = true;
    let mut reloader = HotReloader::with_options(fixture.root(), options)
        .map_err(|error| format!("cannot watch {}: {error}", fixture.root().display()))?;
    let before = process_cpu_time()?;
    let started = Instant::now();
    thread::sleep(idle);
    let used = process_cpu_time()? - before;
    let idle_cpu_percent = 100.0 * used.as_secs_f64() / started.elapsed().as_secs_f64();
    let path = fixture.root().join(&relative);
    let text = fs::read_to_string(&path).map_err(|error| error.to_string())?;
    let mut samples = Vec::with_capacity(saves);
    for save in 0..saves {
        let max = 1_000 + save as u32;
        let edited = with_max(&text, max)?;
        fs::write(&path, edited).map_err(|error| error.to_string())?;
        let written = Instant::now();
        samples.push(until_applied(save, written, POLLED_SAVE_TIMEOUT, || {
            reloader.apply(&mut world, &mut library);
            Ok(world
                .get::<&Health>(probe)
                .is_ok_and(|health| health.max == max as f32))
        })?);
    }
    Ok(PollingRun {
        idle_cpu_percent,
        samples,
    })
}

/// `text` with the number after its first `"max": ` replaced by `max`.
fn with_max(text: &str, max: u32) -> Result<String, String> {
    let key = "\"max\": ";
    let at = text.find(key).ok_or("bench setup: the leaf has no `max`")? + key.len();
    let digits = text[at..].find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
    Ok(format!("{}{max}{}", &text[..at], &text[at + digits..]))
}

/// The CPU time this process has used (user and system), from `/proc/self/stat`.
fn process_cpu_time() -> Result<Duration, String> {
    let stat = fs::read_to_string("/proc/self/stat")
        .map_err(|error| format!("no /proc/self/stat to read CPU time from: {error}"))?;
    // The fields after the command name (which may hold spaces) in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |at: usize| fields.get(at).and_then(|field| field.parse::<u64>().ok());
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after the name.
    let (Some(user), Some(system)) = (ticks(11), ticks(12)) else {
        return Err("cannot read the CPU time in /proc/self/stat".to_string());
    };
    // Linux counts them in clock ticks of 1/100 s (USER_HZ).
    Ok(Duration::from_millis((user + system) * 10))
}

/// One round of [`game_thread_share`]: what the game thread spent in `apply` from a leaf's
/// write until the edit was in the world.
#[derive(Clone, Copy, Debug)]
pub struct GameThreadRound {
    /// The `apply` calls that took settled changes (read the file, rebuilt, patched): the
    /// game thread's share of the reload.
    pub carrying: Duration,
    /// Of those, what the reloader itself timed ([`ReloadReport::elapsed`]: reading the
    /// changed files, rebuilding the library, patching the instances).
    ///
    /// [`ReloadReport::elapsed`]: archetype_engine::ReloadReport::elapsed
    pub reloading: Duration,
    /// The `apply` calls before the change settled (each returns at once, nothing to do).
    pub idle: Duration,
    /// How many such idle calls there were.
    pub idle_polls: usize,
}

/// How long to wait for one leaf's save in a 50,000-archetype library to reach the world.
const GAME_THREAD_SAVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The game thread's share of a hot reload: a generated library of `files` archetypes
/// ([`LoadFixture`]) with `instances` live instances of one leaf (nothing extends it), watched
/// by a real [`HotReloader`] (its default options). One unmeasured round, then `rounds`
/// measured ones; each writes the leaf's file in place (a new `Health.max`) and calls `apply`
/// every millisecond, as a game calls it once per frame, until a live instance has the new
/// value. Each call is timed: a call that took settled changes (its report has something in
/// it or took time: `apply` returns an empty, untimed report when nothing has settled) is the
/// game thread's share; the calls before it, while the watcher waits for the file to settle,
/// are counted apart. Returns the archetypes in the library and each measured round.
///
/// # Panics
/// If the files cannot be written, the leaf does not load or spawn, the root cannot be
/// watched, a save does not reach the world within 5 seconds, or the reload reports an error.
pub fn game_thread_share(
    files: usize,
    instances: usize,
    rounds: usize,
) -> (usize, Vec<GameThreadRound>) {
    let fixture = LoadFixture::generate(files);
    let mut library = fixture.load();
    let relative = leaf_path(0);
    let name = relative.trim_end_matches(".json").to_string();
    let mut world = World::new();
    let spawned = library
        .spawn_many(&mut world, &name, instances.max(1))
        .unwrap_or_else(|error| panic!("bench setup: cannot spawn {name}: {error}"));
    let probe = spawned[0];
    let mut reloader = HotReloader::new(&library).unwrap_or_else(|error| {
        panic!(
            "bench setup: cannot watch {}: {error}",
            fixture.root().display()
        )
    });
    let path = fixture.root().join(&relative);
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("bench setup: cannot read {}: {error}", path.display()));
    let mut measured = Vec::with_capacity(rounds);
    for round in 0..=rounds {
        let max = 2_000 + round as u32;
        let edited = with_max(&text, max).unwrap_or_else(|error| panic!("{error}"));
        fs::write(&path, edited)
            .unwrap_or_else(|error| panic!("bench: cannot write {}: {error}", path.display()));
        let written = Instant::now();
        let mut spent = GameThreadRound {
            carrying: Duration::ZERO,
            reloading: Duration::ZERO,
            idle: Duration::ZERO,
            idle_polls: 0,
        };
        let mut calls = 0;
        loop {
            calls += 1;
            let start = Instant::now();
            let report = reloader.apply(&mut world, &mut library);
            let took = start.elapsed();
            if report.is_empty() && report.elapsed().is_zero() {
                spent.idle += took;
                spent.idle_polls += 1;
            } else {
                spent.carrying += took;
                spent.reloading += report.elapsed();
                assert!(
                    report.errors().is_empty(),
                    "bench: save {round} of {relative} did not reload cleanly: {report}"
                );
            }
            let applied = world
                .get::<&Health>(probe)
                .is_ok_and(|health| health.max == max as f32);
            if applied {
                break;
            }
            assert!(
                written.elapsed() < GAME_THREAD_SAVE_TIMEOUT,
                "bench: save {round} of {relative} did not reach the world within {} s \
                 ({calls} apply calls, {:?} watching)",
                GAME_THREAD_SAVE_TIMEOUT.as_secs(),
                reloader.backend(),
            );
            thread::sleep(Duration::from_millis(1));
        }
        // The first round warms up, unmeasured, as every quick figure's first round does.
        if round > 0 {
            measured.push(spent);
        }
    }
    (library.len(), measured)
}
