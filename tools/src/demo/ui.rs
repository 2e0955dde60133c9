//! What the demo draws: the arena map, the side panel (archetypes with live counts, the game's
//! status, and a creature's portrait where the panel is wide enough), the log and the help line. Pure drawing from a [`Game`], so tests render it to
//! ratatui's `TestBackend`.
//!
//! In 80×24 the map is drawn without a frame (60×20 tiles), the panel takes the 20 columns to
//! its right and the log the three rows below; larger terminals get framed boxes and a taller
//! log, and a panel wide enough for both shows [`Game::portrait`] beside the archetype list.

use hecs::Entity;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use ratatui::Frame;

use super::arena::{ARENA_HEIGHT, ARENA_WIDTH};
use super::components::{self, Door, Glyph, Health, Projectile};
use super::event_log::LogKind;
use super::game::{Game, ShownPortrait};
use super::systems::position;

/// The keys, as the help line shows them.
pub const HELP: [(&str, &str); 5] = [
    ("s", "save"),
    ("l", "load"),
    ("r", "reload"),
    ("p", "pause"),
    ("q", "quit"),
];

/// The side panel's width in the smallest layout.
const PANEL_WIDTH: u16 = 20;
/// Archetype names are padded to at most this width, so counts stay next to them in a wide
/// panel.
const MAX_NAME_WIDTH: usize = 28;
/// The columns the archetype list takes beside a portrait: glyph, space, name, count.
const LIST_WIDTH: u16 = 2 + MAX_NAME_WIDTH as u16 + 4;
/// The fewest columns a portrait is drawn in (its border included).
const PORTRAIT_WIDTH: u16 = 16;
/// The fewest rows the log gets.
const LOG_ROWS: u16 = 3;
/// The help line.
const HELP_ROWS: u16 = 1;

/// Draws the whole screen for `game`.
pub fn draw(frame: &mut Frame<'_>, game: &Game) {
    let area = frame.area();
    let buffer = frame.buffer_mut();
    let framed = area.width >= ARENA_WIDTH + 2 + PANEL_WIDTH + 2
        && area.height >= ARENA_HEIGHT + 2 + LOG_ROWS + 2 + HELP_ROWS;
    let border = if framed { 2 } else { 0 };
    let [main, help] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(HELP_ROWS)]).areas(area);
    let [top, log] = Layout::vertical([
        Constraint::Length(ARENA_HEIGHT + border),
        Constraint::Min(0),
    ])
    .areas(main);
    let [map, panel] =
        Layout::horizontal([Constraint::Length(ARENA_WIDTH + border), Constraint::Min(0)])
            .areas(top);

    let map = if framed {
        boxed(" arena ", map, buffer)
    } else {
        map
    };
    draw_map(game, map, buffer);

    let panel = if framed {
        boxed(" archetypes ", panel, buffer)
    } else {
        let block = Block::new()
            .borders(Borders::LEFT)
            .border_style(Style::new().fg(Color::DarkGray));
        let inner = block.inner(panel);
        block.render(panel, buffer);
        inner
    };
    match game.portrait() {
        Some(portrait) if panel.width >= LIST_WIDTH + PORTRAIT_WIDTH => {
            let [list, beside] =
                Layout::horizontal([Constraint::Length(LIST_WIDTH), Constraint::Min(0)])
                    .areas(panel);
            draw_panel(game, list, buffer);
            draw_portrait(&portrait, beside, buffer);
        }
        _ => draw_panel(game, panel, buffer),
    }

    let log = if framed && log.height >= LOG_ROWS + 2 {
        boxed(" log ", log, buffer)
    } else {
        log
    };
    draw_log(game, log, buffer);
    draw_help(game, help, buffer);
}

fn boxed(title: &str, area: Rect, buffer: &mut Buffer) -> Rect {
    let block = Block::bordered()
        .title(title)
        .border_style(Style::new().fg(Color::DarkGray));
    let inner = block.inner(area);
    block.render(area, buffer);
    inner
}

/// The terminal colour of a demo colour.
pub fn color(color: components::Color) -> Color {
    match color {
        components::Color::Red => Color::Red,
        components::Color::Green => Color::Green,
        components::Color::Yellow => Color::Yellow,
        components::Color::Blue => Color::Blue,
        components::Color::Magenta => Color::Magenta,
        components::Color::Cyan => Color::Cyan,
        components::Color::White => Color::White,
        components::Color::Gray => Color::Gray,
    }
}

/// The arena: a dotted floor, then every entity with a `Glyph` at its tile. Projectiles are
/// drawn over creatures, creatures over items.
fn draw_map(game: &Game, area: Rect, buffer: &mut Buffer) {
    let floor = Style::new().fg(Color::DarkGray);
    for y in 0..ARENA_HEIGHT.min(area.height) {
        for x in 0..ARENA_WIDTH.min(area.width) {
            if let Some(cell) = buffer.cell_mut((area.x + x, area.y + y)) {
                cell.set_char('·').set_style(floor);
            }
        }
    }
    let world = game.world();
    let mut sprites: Vec<(u8, Entity, char, Color)> = Vec::new();
    for (entity, glyph) in world.query::<(Entity, &Glyph)>().iter() {
        let layer = if world.satisfies::<&Projectile>(entity) {
            2
        } else if world.satisfies::<&Health>(entity) {
            1
        } else {
            0
        };
        let open = world.get::<&Door>(entity).is_ok_and(|door| door.open);
        let fg = if open {
            Color::DarkGray
        } else {
            color(glyph.color)
        };
        sprites.push((layer, entity, glyph.ch, fg));
    }
    sprites.sort_by_key(|(layer, entity, _, _)| (*layer, entity.id()));
    for (_, entity, ch, fg) in sprites {
        let Some(at) = position(world, entity) else {
            continue;
        };
        let (x, y) = (at.x.round(), at.y.round());
        if !(0.0..f32::from(ARENA_WIDTH.min(area.width))).contains(&x)
            || !(0.0..f32::from(ARENA_HEIGHT.min(area.height))).contains(&y)
        {
            continue;
        }
        if let Some(cell) = buffer.cell_mut((area.x + x as u16, area.y + y as u16)) {
            cell.set_char(ch)
                .set_style(Style::new().fg(fg).add_modifier(Modifier::BOLD));
        }
    }
}

/// The archetype list with live counts, then the game's status.
fn draw_panel(game: &Game, area: Rect, buffer: &mut Buffer) {
    let width = usize::from(area.width);
    let mut lines: Vec<Line<'_>> = Vec::new();
    // Full names when they fit, otherwise the last part (`enemies/goblin` → `goblin`).
    let name_width = width.saturating_sub(2 + 4).min(MAX_NAME_WIDTH);
    let counts = game.archetype_counts();
    let full_names = counts.iter().all(|c| c.name.chars().count() <= name_width);
    lines.push(Line::styled(
        format!("{:<w$}{:>4}", "archetypes", "live", w = name_width + 2),
        Style::new().add_modifier(Modifier::BOLD),
    ));
    for count in &counts {
        let name = if full_names {
            count.name.as_str()
        } else {
            count.name.rsplit('/').next().unwrap_or(&count.name)
        };
        let (ch, style) = match &count.glyph {
            Some(glyph) => (glyph.ch, Style::new().fg(color(glyph.color))),
            None => (' ', Style::new()),
        };
        let live_style = if count.live == 0 {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        };
        lines.push(Line::from(vec![
            Span::styled(ch.to_string(), style.add_modifier(Modifier::BOLD)),
            Span::raw(" "),
            Span::styled(format!("{name:<name_width$.name_width$}"), live_style),
            Span::styled(format!("{:>4}", count.live), live_style),
        ]));
    }
    let summary = game.summary();
    let (friendly, hostile) = game.fallen();
    let mut status = vec![
        Line::raw(format!("frame {} {:.0}s", summary.frames, summary.seconds)),
        Line::raw(format!("entities {}", summary.entities)),
        Line::raw(format!("kills {hostile} losses {friendly}")),
        Line::raw(format!(
            "reloads {} errors {}",
            summary.reloads, summary.errors
        )),
    ];
    let broken = game.current_errors().count();
    let plural = if broken == 1 { "" } else { "s" };
    let error_style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
    if game.is_paused() {
        let mut line = vec![Span::styled(
            "PAUSED",
            Style::new().fg(Color::Black).bg(Color::Yellow),
        )];
        if broken > 0 {
            line.push(Span::styled(
                format!(" {broken} error{plural}"),
                error_style,
            ));
        }
        status.push(Line::from(line));
    } else if broken > 0 {
        status.push(Line::styled(
            format!("{broken} archetype error{plural}"),
            error_style,
        ));
    }
    // With little room, the status lines win over the tail of the archetype list.
    let height = usize::from(area.height);
    lines.truncate(height.saturating_sub(status.len()));
    lines.extend(status);
    Paragraph::new(lines).render(area, buffer);
}

/// A creature's portrait, behind a line on its left: its name, its health, its art (each
/// line cut at the width).
fn draw_portrait(portrait: &ShownPortrait<'_>, area: Rect, buffer: &mut Buffer) {
    let block = Block::new()
        .borders(Borders::LEFT)
        .border_style(Style::new().fg(Color::DarkGray));
    let inner = block.inner(area);
    block.render(area, buffer);
    let mut lines: Vec<Line<'_>> = Vec::new();
    if let Some(name) = &portrait.name {
        lines.push(Line::styled(
            name.clone(),
            Style::new().add_modifier(Modifier::BOLD),
        ));
    }
    if let Some((current, max)) = portrait.health {
        lines.push(Line::raw(format!("health {current:.0}/{max:.0}")));
    }
    lines.push(Line::raw(""));
    lines.extend(portrait.art.iter().map(|line| Line::raw(line.as_str())));
    Paragraph::new(lines).render(inner, buffer);
}

/// The newest log entries, wrapped to the width, newest at the bottom.
fn draw_log(game: &Game, area: Rect, buffer: &mut Buffer) {
    let width = usize::from(area.width.max(1));
    let height = usize::from(area.height);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for entry in game.log().entries().rev() {
        if lines.len() >= height {
            break;
        }
        let (mark, style) = match entry.kind {
            LogKind::Reload => ("↻ ", Style::new().fg(Color::Green)),
            LogKind::Error => ("✗ ", Style::new().fg(Color::Red)),
            LogKind::Info => ("· ", Style::new().fg(Color::Gray)),
        };
        let mut text = format!("{mark}{}", entry.text);
        if entry.repeats > 1 {
            text.push_str(&format!(" (×{})", entry.repeats));
        }
        let mut wrapped = wrap(&text, width);
        if lines.len() + wrapped.len() > height {
            if !lines.is_empty() {
                // Only whole entries, except the newest, which shows its beginning.
                break;
            }
            wrapped.truncate(height);
        }
        for line in wrapped.into_iter().rev() {
            lines.push(Line::styled(line, style));
        }
    }
    lines.truncate(height);
    lines.reverse();
    Paragraph::new(lines).render(area, buffer);
}

/// `text` in lines of at most `width` characters, broken at spaces where possible (so a
/// `file:line:col` stays on one line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        let gap = usize::from(used > 0);
        if used + gap + word.len() > width && used > 0 {
            lines.push(std::mem::take(&mut line));
            used = 0;
        } else if used > 0 {
            line.push(' ');
            used += 1;
        }
        while word.len() > width {
            let rest = word.split_off(width);
            lines.push(word.into_iter().collect());
            word = rest;
        }
        used += word.len();
        line.extend(word);
    }
    if used > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The keys, and a hint at what to try when there is room.
fn draw_help(game: &Game, area: Rect, buffer: &mut Buffer) {
    let key = Style::new().fg(Color::Black).bg(Color::Gray);
    let mut spans = Vec::new();
    for (i, (k, what)) in HELP.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(*k, key));
        spans.push(Span::raw(format!(" {what}")));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let hint = format!(
        "   edit {}/enemies/goblin.json",
        game.options().dir.display()
    );
    if used + hint.chars().count() <= usize::from(area.width) {
        spans.push(Span::styled(hint, Style::new().fg(Color::DarkGray)));
    }
    Paragraph::new(Line::from(spans)).render(area, buffer);
}
