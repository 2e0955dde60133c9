//! The interactive shell: the terminal (raw mode, alternate screen), the frame loop and the
//! keys. Everything else is the [`Game`], which runs the same without a terminal.

use std::io::{self, Stdout};
use std::panic::{self, PanicHookInfo};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use super::game::{Command, Flow, Game};
use super::{ui, DemoError, DemoOptions};

/// Time between frames: 30 frames per second.
const FRAME: Duration = Duration::from_millis(33);

type PanicHook = dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static;

/// The command a key event means: `s`, `l`, `r`, `p`, `q` (see [`Command::from_key`]), and
/// Esc or Ctrl-C to quit (raw mode delivers Ctrl-C as a key, not a signal).
pub fn command_for(key: &KeyEvent) -> Option<Command> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    match key.code {
        KeyCode::Esc => Some(Command::Quit),
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Some(Command::Quit),
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => Command::from_key(c),
        _ => None,
    }
}

/// Runs the demo in the terminal until `q`, Esc or Ctrl-C.
pub(crate) fn run(options: DemoOptions) -> Result<(), DemoError> {
    let fixed_step = options.fixed_step;
    // Everything that can fail before the first frame fails here, with the terminal untouched.
    let mut game = Game::new(options)?;
    // Printed before the alternate screen, so it stays on the terminal after the demo (the
    // side panel's log shows it too).
    if let Some(url) = game.inspector_url() {
        println!("{url}");
    }
    let mut session = Session::enter().map_err(DemoError::Terminal)?;
    let result = play(&mut game, &mut session.terminal, fixed_step);
    drop(session);
    result.map_err(DemoError::Terminal)
}

fn play(
    game: &mut Game,
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    fixed_step: Option<f32>,
) -> io::Result<()> {
    let mut last = Instant::now();
    loop {
        terminal.draw(|frame| ui::draw(frame, game))?;
        let due = last + FRAME;
        loop {
            let wait = due.saturating_duration_since(Instant::now());
            if wait.is_zero() || !event::poll(wait)? {
                break;
            }
            match event::read()? {
                Event::Key(key) => {
                    if let Some(command) = command_for(&key) {
                        if game.run_command(command) == Flow::Quit {
                            return Ok(());
                        }
                    }
                }
                Event::Resize(..) => terminal.autoresize()?,
                _ => {}
            }
        }
        let now = Instant::now();
        let dt = fixed_step.unwrap_or_else(|| now.duration_since(last).as_secs_f32());
        last = now;
        game.step(dt);
    }
}

/// The terminal in the demo's mode. Dropping it (on return, on error, while unwinding from a
/// panic) restores the terminal; so does a panic hook, which runs first, so the panic message
/// prints on a usable screen.
struct Session {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    previous_hook: Arc<PanicHook>,
}

impl Session {
    fn enter() -> io::Result<Session> {
        let previous_hook: Arc<PanicHook> = Arc::from(panic::take_hook());
        let chained = previous_hook.clone();
        panic::set_hook(Box::new(move |info| {
            restore();
            chained(info);
        }));
        let session = Session {
            terminal: Terminal::new(CrosstermBackend::new(io::stdout()))?,
            previous_hook,
        };
        // From here on, `Drop` restores whatever was changed.
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)?;
        let mut session = session;
        session.terminal.clear()?;
        Ok(session)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        restore();
        // Put the previous panic hook back (behind a forwarding closure: a hook, once taken,
        // cannot be reinstalled as itself).
        let previous = self.previous_hook.clone();
        if !std::thread::panicking() {
            let _ = panic::take_hook();
            panic::set_hook(Box::new(move |info| previous(info)));
        }
    }
}

/// Leaves raw mode and the alternate screen and shows the cursor. Safe to call more than once.
fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
}
