//! The systems: what makes the archetypes' data matter. [`run`] runs one tick of each, in a
//! fixed order, over snapshots taken from queries (hecs iterates in a deterministic order), so
//! the same world, seed and time step always play out the same way.
//!
//! The map is the `x`/`y` plane of [`Transform::translation`] (`z` is unused), one unit per
//! tile. A child entity's `Transform` is relative to its parent (a turret's gun sits one tile
//! to its right); only root entities move.

use archetype_engine::{
    ArchetypeLibrary, ArchetypeRef, Children, EntityRef, Name, Parent, Transform,
};
use glam::Vec2;
use hecs::{Entity, World};

use super::arena::{ARENA_HEIGHT, ARENA_WIDTH};
use super::components::{
    Armor, Boss, Door, Faction, Follow, Health, Key, Leader, Loot, Melee, Projectile, Ranged,
    Sensor, Spawner, Speed, Stance, Target, Turret, Velocity,
};
use super::rng::Rng;

/// How close (in tiles) a melee attacker must be to hit.
pub const MELEE_RANGE: f32 = 1.3;
/// How close a projectile must come to an entity to hit it.
const HIT_RADIUS: f32 = 0.75;
/// How close a friendly must come to a key to pick it up.
const PICKUP_RADIUS: f32 = 0.8;
/// Creatures of one side closer than this push each other apart, so a squad does not collapse
/// onto one tile.
const PERSONAL_SPACE: f32 = 0.9;
/// How far a squad member looks for a fight when its leader has no `Leader` radius any more.
const DEFAULT_RALLY_RADIUS: f32 = 6.0;
/// Idle creatures without a `Stance` wander at this fraction of their speed.
const WANDER_PACE: f32 = 0.35;
/// A spawner never spawns more often than this (a designer may type `"interval": 0`).
const MIN_SPAWN_INTERVAL: f32 = 0.1;
/// How deep `Parent` chains are followed for positions (a cycle written by hand in a scene
/// must not hang the game).
const MAX_PARENT_DEPTH: usize = 16;

// Runtime state the systems keep on entities. Not registered with the component registry, so
// scenes never save it and hot reload never touches it; the systems add it again when missing
// (after a scene load, for new spawns).

/// Seconds until the entity (an attacker, or a turret's gun) can attack again.
struct Cooldown(f32);
/// Seconds until a spawner spawns again.
struct SpawnTimer(f32);
/// The spawner an entity came from (for `Spawner::max_alive`).
struct SpawnedBy(Entity);
/// Seconds a projectile has been flying.
struct Age(f32);
/// Where an idle creature is strolling, and for how much longer.
struct Wander {
    heading: Vec2,
    left: f32,
}

/// What one tick did that the game reports.
#[derive(Debug, Default)]
pub struct TickReport {
    /// Things that went wrong (a spawner or a gun naming an archetype that cannot be spawned).
    pub problems: Vec<String>,
    /// Things worth a log line (a door opened).
    pub notes: Vec<String>,
    /// Friendly creatures and structures that died.
    pub fallen_friendly: u32,
    /// Hostile creatures that died.
    pub fallen_hostile: u32,
}

/// Runs one tick of every system, `dt` seconds long.
pub fn run(world: &mut World, library: &ArchetypeLibrary, rng: &mut Rng, dt: f32) -> TickReport {
    let mut tick = Tick {
        world,
        library,
        rng,
        dt,
        report: TickReport::default(),
    };
    tick.cool_down();
    tick.spawners();
    tick.creatures();
    tick.turrets();
    tick.movement();
    tick.projectiles();
    tick.pickups();
    tick.deaths();
    tick.report
}

/// The world position of `entity`: its translation plus its parents'.
pub fn position(world: &World, entity: Entity) -> Option<Vec2> {
    let mut at = translation(world, entity)?;
    let mut current = entity;
    for _ in 0..MAX_PARENT_DEPTH {
        let Some(parent) = world.get::<&Parent>(current).ok().map(|p| p.0.entity()) else {
            break;
        };
        at += translation(world, parent).unwrap_or(Vec2::ZERO);
        current = parent;
    }
    Some(at)
}

fn translation(world: &World, entity: Entity) -> Option<Vec2> {
    world
        .get::<&Transform>(entity)
        .ok()
        .map(|t| t.translation.truncate())
}

/// Despawns `entity` and, through [`Children`], everything below it.
pub fn despawn_tree(world: &mut World, entity: Entity) {
    let mut stack = vec![entity];
    while let Some(entity) = stack.pop() {
        if let Ok(children) = world.get::<&Children>(entity) {
            stack.extend(children.0.iter().map(|child| child.entity()));
        }
        // Already gone (listed twice, or despawned by hand): nothing to do.
        let _ = world.despawn(entity);
    }
}

/// The tile a position is on.
fn tile(at: Vec2) -> (i32, i32) {
    (at.x.round() as i32, at.y.round() as i32)
}

fn clamp_to_arena(at: Vec2) -> Vec2 {
    Vec2::new(
        at.x.clamp(0.0, (ARENA_WIDTH - 1) as f32),
        at.y.clamp(0.0, (ARENA_HEIGHT - 1) as f32),
    )
}

fn in_arena(at: Vec2) -> bool {
    at == clamp_to_arena(at)
}

fn enemy_of(faction: Faction) -> Option<Faction> {
    match faction {
        Faction::Hostile => Some(Faction::Friendly),
        Faction::Friendly => Some(Faction::Hostile),
        Faction::Neutral => None,
    }
}

/// Something that can be attacked: a root entity with a side and hit points.
struct Body {
    entity: Entity,
    at: Vec2,
    faction: Faction,
    /// Its `Leader` rally radius, if it leads.
    rally: Option<f32>,
    /// Whether it moves by itself (creatures do, turrets do not).
    mobile: bool,
}

/// A creature the AI steers.
struct Creature {
    entity: Entity,
    at: Vec2,
    faction: Faction,
    speed: f32,
    stance: Option<Stance>,
    follow: Option<Follow>,
    melee: Option<Melee>,
    ranged: Option<Ranged>,
}

/// A projectile to spawn.
struct Shot {
    shooter: Entity,
    projectile: ArchetypeRef,
    from: Vec2,
    toward: Vec2,
    faction: Faction,
}

struct Tick<'a> {
    world: &'a mut World,
    library: &'a ArchetypeLibrary,
    rng: &'a mut Rng,
    dt: f32,
    report: TickReport,
}

impl Tick<'_> {
    fn cool_down(&mut self) {
        for cooldown in self.world.query_mut::<&mut Cooldown>() {
            cooldown.0 -= self.dt;
        }
    }

    fn ready(&self, entity: Entity) -> bool {
        self.world
            .get::<&Cooldown>(entity)
            .map_or(true, |cooldown| cooldown.0 <= 0.0)
    }

    fn start_cooldown(&mut self, entity: Entity, seconds: f32) {
        let seconds = seconds.max(0.0);
        if let Ok(mut cooldown) = self.world.get::<&mut Cooldown>(entity) {
            cooldown.0 = seconds;
            return;
        }
        let _ = self.world.insert_one(entity, Cooldown(seconds));
    }

    fn label(&self, entity: Entity) -> String {
        match self.world.get::<&Name>(entity) {
            Ok(name) => name.0.clone(),
            Err(_) => format!("entity {}", entity.id()),
        }
    }

    /// Spawns each spawner's archetype by name on its timer, near the spawner, while fewer
    /// than `max_alive` of its spawns live.
    fn spawners(&mut self) {
        let spawners: Vec<(Entity, Spawner, Vec2)> = self
            .world
            .query::<(Entity, &Spawner, &Transform)>()
            .without::<&Parent>()
            .iter()
            .map(|(entity, spawner, transform)| {
                (entity, spawner.clone(), transform.translation.truncate())
            })
            .collect();
        if spawners.is_empty() {
            return;
        }
        let origins: Vec<Entity> = self
            .world
            .query::<&SpawnedBy>()
            .iter()
            .map(|by| by.0)
            .collect();
        for (spawner_entity, spawner, at) in spawners {
            let interval = spawner.interval.max(MIN_SPAWN_INTERVAL);
            let timer = self
                .world
                .get::<&SpawnTimer>(spawner_entity)
                .map_or(interval + self.dt, |timer| timer.0)
                - self.dt;
            let due = timer <= 0.0;
            // Never more than one spawn per tick, even after a long pause.
            let timer = if due { interval } else { timer };
            let _ = self.world.insert_one(spawner_entity, SpawnTimer(timer));
            if !due {
                continue;
            }
            let alive = origins.iter().filter(|&&by| by == spawner_entity).count();
            if alive >= spawner.max_alive as usize {
                continue;
            }
            match self.library.spawn_ref(self.world, &spawner.archetype) {
                Ok(spawned) => {
                    let offset = Vec2::new(self.rng.range(-2.0, 2.0), self.rng.range(-2.0, 2.0));
                    place(self.world, spawned, clamp_to_arena(at + offset));
                    let _ = self.world.insert_one(spawned, SpawnedBy(spawner_entity));
                }
                Err(error) => {
                    let label = self.label(spawner_entity);
                    self.report
                        .problems
                        .push(format!("{label} cannot spawn: {error}"));
                }
            }
        }
    }

    fn bodies(&self) -> Vec<Body> {
        self.world
            .query::<(Entity, &Transform, &Faction, &Health, Option<&Leader>)>()
            .without::<&Parent>()
            .without::<&Projectile>()
            .iter()
            .map(|(entity, transform, faction, _, leader)| Body {
                entity,
                at: transform.translation.truncate(),
                faction: *faction,
                rally: leader.map(|l| l.radius),
                mobile: false,
            })
            .map(|mut body| {
                body.mobile = self.world.satisfies::<&Speed>(body.entity);
                body
            })
            .collect()
    }

    /// Squad members follow their leader (`Follow.leader`) and fight what comes near it;
    /// leaders and loners attack the nearest enemy; hostiles chase the nearest friendly.
    /// Attacks are melee hits or projectiles spawned from `Ranged.projectile`.
    fn creatures(&mut self) {
        let bodies = self.bodies();
        let creatures: Vec<Creature> = self
            .world
            .query::<(
                Entity,
                &Transform,
                &Faction,
                &Speed,
                Option<&Stance>,
                Option<&Follow>,
                Option<&Melee>,
                Option<&Ranged>,
            )>()
            .with::<&Health>()
            .without::<&Parent>()
            .without::<&Projectile>()
            .iter()
            .map(
                |(entity, transform, faction, speed, stance, follow, melee, ranged)| Creature {
                    entity,
                    at: transform.translation.truncate(),
                    faction: *faction,
                    speed: speed.value.max(0.0),
                    stance: stance.cloned(),
                    follow: follow.cloned(),
                    melee: melee.cloned(),
                    ranged: ranged.cloned(),
                },
            )
            .collect();
        let mut hits: Vec<(Entity, f32)> = Vec::new();
        let mut shots: Vec<Shot> = Vec::new();
        for creature in &creatures {
            let leader = self.leader_of(creature, &bodies);
            let engage = match leader {
                Some(leader) => bodies
                    .iter()
                    .find(|b| b.entity == leader)
                    .and_then(|b| b.rally)
                    .unwrap_or(DEFAULT_RALLY_RADIUS),
                None => match creature.stance {
                    Some(Stance::Guard { alert }) => alert,
                    _ => f32::INFINITY,
                },
            };
            let target = enemy_of(creature.faction).and_then(|enemy| {
                nearest(&bodies, creature.at, engage, |b| {
                    b.faction == enemy && b.entity != creature.entity
                })
            });
            let mut velocity = Vec2::ZERO;
            if let Some(target) = target {
                let distance = creature.at.distance(target.at);
                let toward = (target.at - creature.at).normalize_or_zero();
                let melee = creature.melee.as_ref().filter(|_| distance <= MELEE_RANGE);
                let ranged = creature.ranged.as_ref().filter(|r| distance <= r.range);
                if let Some(melee) = melee {
                    if self.ready(creature.entity) {
                        hits.push((target.entity, melee.damage));
                        self.start_cooldown(creature.entity, melee.cooldown);
                    }
                } else if let Some(ranged) = ranged {
                    if self.ready(creature.entity) {
                        shots.push(Shot {
                            shooter: creature.entity,
                            projectile: ranged.projectile.clone(),
                            from: creature.at,
                            toward: target.at,
                            faction: creature.faction,
                        });
                        self.start_cooldown(creature.entity, ranged.cooldown);
                    }
                } else {
                    velocity = toward * creature.speed;
                }
            } else if let (Some(leader), Some(follow)) = (leader, &creature.follow) {
                if let Some(leader_at) = bodies.iter().find(|b| b.entity == leader).map(|b| b.at) {
                    if creature.at.distance(leader_at) > follow.distance {
                        velocity = (leader_at - creature.at).normalize_or_zero() * creature.speed;
                    }
                }
            } else {
                let pace = match creature.stance {
                    Some(Stance::Wander { pace }) => pace,
                    Some(Stance::Guard { .. }) => 0.0,
                    None => WANDER_PACE,
                };
                velocity = self.wander(creature.entity) * creature.speed * pace;
            }
            velocity += self.personal_space(creature, &bodies);
            velocity = velocity.clamp_length_max(creature.speed);
            self.set_velocity(creature.entity, velocity);
            let _ = self
                .world
                .insert_one(creature.entity, Target(target.map(|t| EntityRef(t.entity))));
        }
        for (target, damage) in hits {
            hurt(self.world, target, damage);
        }
        for shot in shots {
            self.fire(shot);
        }
    }

    /// A squad member's leader: its `Follow.leader` while that one lives, otherwise the
    /// nearest leader of its side (written back to `Follow.leader`, so it shows in saves).
    fn leader_of(&mut self, creature: &Creature, bodies: &[Body]) -> Option<Entity> {
        let follow = creature.follow.as_ref()?;
        let current = follow.leader.map(EntityRef::entity);
        if let Some(current) = current {
            if current != creature.entity && bodies.iter().any(|b| b.entity == current) {
                return Some(current);
            }
        }
        let new = nearest(bodies, creature.at, f32::INFINITY, |b| {
            b.rally.is_some() && b.faction == creature.faction && b.entity != creature.entity
        })
        .map(|b| b.entity);
        if new != current {
            if let Ok(mut follow) = self.world.get::<&mut Follow>(creature.entity) {
                follow.leader = new.map(EntityRef);
            }
        }
        new
    }

    /// A heading for an idle creature, changed every few seconds.
    fn wander(&mut self, entity: Entity) -> Vec2 {
        if let Ok(mut wander) = self.world.get::<&mut Wander>(entity) {
            wander.left -= self.dt;
            if wander.left > 0.0 {
                return wander.heading;
            }
        }
        let angle = self.rng.range(0.0, std::f32::consts::TAU);
        let heading = if self.rng.next_f32() < 0.3 {
            Vec2::ZERO
        } else {
            Vec2::from_angle(angle)
        };
        let left = self.rng.range(1.0, 3.0);
        let _ = self.world.insert_one(entity, Wander { heading, left });
        heading
    }

    /// A push away from creatures of the same side that stand too close.
    fn personal_space(&self, creature: &Creature, bodies: &[Body]) -> Vec2 {
        let mut push = Vec2::ZERO;
        for other in bodies {
            if other.entity == creature.entity || other.faction != creature.faction || !other.mobile
            {
                continue;
            }
            let away = creature.at - other.at;
            let distance = away.length();
            if distance >= PERSONAL_SPACE {
                continue;
            }
            // Two creatures on the very same spot part along a direction fixed by their IDs.
            let direction = if distance > 1e-4 {
                away / distance
            } else if creature.entity.id() < other.entity.id() {
                Vec2::X
            } else {
                Vec2::NEG_X
            };
            push += direction * (PERSONAL_SPACE - distance) * creature.speed;
        }
        push
    }

    fn set_velocity(&mut self, entity: Entity, velocity: Vec2) {
        let value = Velocity {
            x: velocity.x,
            y: velocity.y,
        };
        if let Ok(mut current) = self.world.get::<&mut Velocity>(entity) {
            *current = value;
            return;
        }
        let _ = self.world.insert_one(entity, value);
    }

    /// Turrets look through their `sensor` child and shoot with their `gun` child, both found
    /// through the turret's entity references.
    fn turrets(&mut self) {
        let turrets: Vec<(Entity, Turret, Faction)> = self
            .world
            .query::<(Entity, &Turret, &Faction)>()
            .iter()
            .map(|(entity, turret, faction)| (entity, turret.clone(), *faction))
            .collect();
        if turrets.is_empty() {
            return;
        }
        let bodies = self.bodies();
        let mut shots = Vec::new();
        for (turret_entity, turret, faction) in turrets {
            let (sensor, gun) = (turret.sensor.entity(), turret.gun.entity());
            let Some(range) = self.world.get::<&Sensor>(sensor).ok().map(|s| s.range) else {
                continue;
            };
            let Some(ranged) = self.world.get::<&Ranged>(gun).ok().map(|r| (*r).clone()) else {
                continue;
            };
            let (Some(eye), Some(muzzle)) =
                (position(self.world, sensor), position(self.world, gun))
            else {
                continue;
            };
            let Some(enemy) = enemy_of(faction) else {
                continue;
            };
            let Some(target) = nearest(&bodies, eye, range, |b| b.faction == enemy) else {
                continue;
            };
            if muzzle.distance(target.at) <= ranged.range && self.ready(gun) {
                shots.push(Shot {
                    shooter: turret_entity,
                    projectile: ranged.projectile.clone(),
                    from: muzzle,
                    toward: target.at,
                    faction,
                });
                self.start_cooldown(gun, ranged.cooldown);
            }
        }
        for shot in shots {
            self.fire(shot);
        }
    }

    /// Spawns a shot's projectile archetype, flying at the projectile's `Speed`.
    fn fire(&mut self, shot: Shot) {
        let projectile = match self.library.spawn_ref(self.world, &shot.projectile) {
            Ok(projectile) => projectile,
            Err(error) => {
                let label = self.label(shot.shooter);
                self.report
                    .problems
                    .push(format!("{label} cannot shoot: {error}"));
                return;
            }
        };
        let speed = self
            .world
            .get::<&Speed>(projectile)
            .map_or(10.0, |speed| speed.value);
        let heading = (shot.toward - shot.from).normalize_or_zero();
        place(self.world, projectile, shot.from);
        self.set_velocity(projectile, heading * speed);
        let _ = self.world.insert(projectile, (shot.faction, Age(0.0)));
    }

    /// Moves root entities by their velocity, within the arena. Closed doors block creatures;
    /// projectiles stop at doors and at the arena's edge.
    fn movement(&mut self) {
        let closed: Vec<(i32, i32)> = self
            .world
            .query::<(&Door, &Transform)>()
            .iter()
            .filter(|(door, _)| !door.open)
            .map(|(_, transform)| tile(transform.translation.truncate()))
            .collect();
        let dt = self.dt;
        let mut spent = Vec::new();
        for (entity, transform, velocity, projectile) in self
            .world
            .query_mut::<(Entity, &mut Transform, &Velocity, Option<&Projectile>)>()
            .without::<&Parent>()
        {
            let at = transform.translation.truncate();
            let step = Vec2::new(velocity.x, velocity.y) * dt;
            let blocked = |next: Vec2| closed.contains(&tile(next)) && !closed.contains(&tile(at));
            let next = if projectile.is_some() {
                let next = at + step;
                if blocked(next) || !in_arena(next) {
                    spent.push(entity);
                    continue;
                }
                next
            } else {
                // Around a closed door: the first of a few turns that is free.
                let turns = [0.0, 45.0, -45.0, 90.0, -90.0_f32];
                let free = turns
                    .iter()
                    .map(|degrees| at + Vec2::from_angle(degrees.to_radians()).rotate(step))
                    .find(|next| !blocked(*next));
                match free {
                    Some(next) => next,
                    None => continue,
                }
            };
            if !next.is_finite() {
                continue;
            }
            let next = clamp_to_arena(next);
            transform.translation.x = next.x;
            transform.translation.y = next.y;
        }
        for entity in spent {
            despawn_tree(self.world, entity);
        }
    }

    /// Projectiles age out after their `lifetime` and hit the first enemy they reach, for their
    /// `damage` less the target's `Armor`.
    fn projectiles(&mut self) {
        // Projectiles loaded from a scene start their flight time afresh.
        let unaged: Vec<Entity> = self
            .world
            .query::<Entity>()
            .with::<&Projectile>()
            .without::<&Age>()
            .iter()
            .collect();
        for entity in unaged {
            let _ = self.world.insert_one(entity, Age(0.0));
        }
        let dt = self.dt;
        let mut flying = Vec::new();
        for (entity, projectile, transform, faction, age) in
            self.world
                .query_mut::<(Entity, &Projectile, &Transform, Option<&Faction>, &mut Age)>()
        {
            age.0 += dt;
            flying.push((
                entity,
                projectile.clone(),
                transform.translation.truncate(),
                faction.copied(),
                age.0,
            ));
        }
        if flying.is_empty() {
            return;
        }
        let bodies = self.bodies();
        for (entity, projectile, at, faction, age) in flying {
            if age >= projectile.lifetime {
                despawn_tree(self.world, entity);
                continue;
            }
            let Some(enemy) = faction.and_then(enemy_of) else {
                continue;
            };
            if let Some(target) = nearest(&bodies, at, HIT_RADIUS, |b| b.faction == enemy) {
                hurt(self.world, target.entity, projectile.damage);
                despawn_tree(self.world, entity);
            }
        }
    }

    /// A friendly creature that reaches a key opens the key's door (through `Key.door`); the
    /// key is used up and the door forgets it.
    fn pickups(&mut self) {
        let keys: Vec<(Entity, Option<Entity>, Vec2)> = self
            .world
            .query::<(Entity, &Key, &Transform)>()
            .without::<&Parent>()
            .iter()
            .map(|(entity, key, transform)| {
                (
                    entity,
                    key.door.map(EntityRef::entity),
                    transform.translation.truncate(),
                )
            })
            .collect();
        if keys.is_empty() {
            return;
        }
        let friendlies: Vec<Vec2> = self
            .world
            .query::<(&Transform, &Faction)>()
            .with::<&Speed>()
            .with::<&Health>()
            .without::<&Parent>()
            .iter()
            .filter(|(_, faction)| **faction == Faction::Friendly)
            .map(|(transform, _)| transform.translation.truncate())
            .collect();
        for (key, door, at) in keys {
            let Some(door) = door else { continue };
            if !friendlies.iter().any(|f| f.distance(at) <= PICKUP_RADIUS) {
                continue;
            }
            let opened = match self.world.get::<&mut Door>(door) {
                Ok(mut door) => {
                    door.open = true;
                    door.key = None;
                    true
                }
                Err(_) => false,
            };
            if opened {
                let door_name = self.label(door);
                self.report
                    .notes
                    .push(format!("a friendly picked up the key: {door_name} is open"));
                despawn_tree(self.world, key);
            }
        }
    }

    /// Entities out of hit points are despawned with their children.
    fn deaths(&mut self) {
        let dead: Vec<(Entity, Option<Faction>, bool)> = self
            .world
            .query::<(Entity, &Health, Option<&Faction>, Option<&Boss>)>()
            .iter()
            .filter(|(_, health, _, _)| health.current <= 0.0)
            .map(|(entity, _, faction, boss)| (entity, faction.copied(), boss.is_some()))
            .collect();
        for (entity, faction, boss) in dead {
            match faction {
                Some(Faction::Friendly) => self.report.fallen_friendly += 1,
                Some(Faction::Hostile) => self.report.fallen_hostile += 1,
                _ => {}
            }
            if boss {
                let name = self.label(entity);
                let loot = self.world.get::<&Loot>(entity).ok();
                let dropped = match loot.as_deref().map(|loot| loot.items.join(", ")) {
                    Some(items) if !items.is_empty() => format!(", dropping {items}"),
                    _ => String::new(),
                };
                self.report
                    .notes
                    .push(format!("the boss has fallen: {name}{dropped}"));
            }
            despawn_tree(self.world, entity);
        }
    }
}

/// The nearest body within `radius` of `at` that `accept`s; ties go to the earlier body.
fn nearest(
    bodies: &[Body],
    at: Vec2,
    radius: f32,
    accept: impl Fn(&Body) -> bool,
) -> Option<&Body> {
    let mut best: Option<(&Body, f32)> = None;
    for body in bodies {
        if !accept(body) {
            continue;
        }
        let distance = body.at.distance(at);
        if distance > radius {
            continue;
        }
        if best.is_none_or(|(_, d)| distance < d) {
            best = Some((body, distance));
        }
    }
    best.map(|(body, _)| body)
}

/// Deals `damage` less the target's armour (never below zero).
fn hurt(world: &mut World, target: Entity, damage: f32) {
    let armor = world.get::<&Armor>(target).map_or(0.0, |armor| armor.value);
    if let Ok(mut health) = world.get::<&mut Health>(target) {
        health.current -= (damage - armor).max(0.0);
    }
}

/// Puts a root entity at `at` on the map.
fn place(world: &mut World, entity: Entity, at: Vec2) {
    if let Ok(mut transform) = world.get::<&mut Transform>(entity) {
        transform.translation.x = at.x;
        transform.translation.y = at.y;
        return;
    }
    let _ = world.insert_one(entity, Transform::from_translation(at.extend(0.0)));
}
