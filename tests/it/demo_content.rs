//! The demo's archetypes (the repository's `archetypes/`): all valid, all spawnable, and using
//! the format's inheritance features as the guide's designer chapters say.

use std::path::PathBuf;

use archetool::demo::components::{
    registry, Armor, Faction, Glyph, Health, Leader, Melee, Ranged, Sensor, Turret,
};
use archetype_engine::{
    ArchetypeInstance, ArchetypeLibrary, ArchetypeRef, Children, EntityRef, Name, Parent,
};
use hecs::{Entity, World};

use crate::support::get;

fn demo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../archetypes")
}

fn demo() -> ArchetypeLibrary {
    match ArchetypeLibrary::load(demo_root(), registry()) {
        Ok(library) => library,
        Err(error) => panic!("{error}"),
    }
}

fn spawn(library: &ArchetypeLibrary, world: &mut World, name: &str) -> Entity {
    match library.spawn(world, name) {
        Ok(entity) => entity,
        Err(error) => panic!("{name}: {error}"),
    }
}

#[test]
fn the_demo_archetypes_load_without_any_diagnostic() {
    let library = demo();
    let messages: Vec<String> = library
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(messages, Vec::<String>::new());
    assert!(library.len() >= 12, "{} archetypes", library.len());
}

#[test]
fn every_concrete_demo_archetype_spawns() {
    let library = demo();
    let mut world = World::new();
    let mut concrete = 0;
    for name in library.names() {
        let archetype = library.get(name).unwrap();
        if archetype.is_abstract() {
            assert!(library.spawn(&mut world, name).is_err(), "{name}");
            continue;
        }
        let entity = spawn(&library, &mut world, name);
        let marker = get::<ArchetypeInstance>(&world, entity);
        assert_eq!(library.name_of(marker.archetype), Some(name));
        concrete += 1;
    }
    assert!(concrete >= 8, "{concrete} concrete archetypes");
}

#[test]
fn the_demo_uses_abstract_bases_and_deep_inheritance() {
    let library = demo();
    for name in [
        "base/creature",
        "enemies/enemy",
        "traits/leader",
        "traits/armored",
    ] {
        assert!(library.get(name).unwrap().is_abstract(), "{name}");
    }
    // goblin_archer -> goblin -> enemy -> creature
    let mut chain = vec!["enemies/goblin_archer".to_string()];
    while let Some(parent) = library
        .get(chain.last().unwrap())
        .unwrap()
        .extends()
        .first()
    {
        chain.push(parent.clone());
    }
    assert_eq!(
        chain,
        [
            "enemies/goblin_archer",
            "enemies/goblin",
            "enemies/enemy",
            "base/creature"
        ]
    );
}

#[test]
fn goblin_archer_removes_melee_and_keeps_the_inherited_faction() {
    let library = demo();
    let mut world = World::new();
    let archer = spawn(&library, &mut world, "enemies/goblin_archer");
    assert!(!world.satisfies::<&Melee>(archer));
    assert_eq!(get::<Faction>(&world, archer), Faction::Hostile);
    // The projectile is checked when the archer is read, and holds its archetype's ID.
    let projectile = get::<Ranged>(&world, archer).projectile;
    assert_eq!(projectile.name(), "projectiles/arrow");
    assert_eq!(projectile.id(), library.id("projectiles/arrow"));
    // The glyph merges: the archer's own character, the goblin's colour.
    let glyph = get::<Glyph>(&world, archer);
    let goblin = spawn(&library, &mut world, "enemies/goblin");
    assert_eq!(glyph.ch, 'a');
    assert_eq!(glyph.color, get::<Glyph>(&world, goblin).color);
    assert!(world.satisfies::<&Melee>(goblin));
}

#[test]
fn goblin_chief_takes_components_from_several_parents() {
    let library = demo();
    assert_eq!(
        library.get("enemies/goblin_chief").unwrap().extends(),
        ["enemies/goblin", "traits/leader", "traits/armored"]
    );
    let mut world = World::new();
    let chief = spawn(&library, &mut world, "enemies/goblin_chief");
    assert_eq!(get::<Leader>(&world, chief), Leader { radius: 6.0 });
    assert_eq!(get::<Armor>(&world, chief), Armor { value: 1.0 });
    assert_eq!(get::<Faction>(&world, chief), Faction::Hostile);
    assert_eq!(
        get::<Health>(&world, chief),
        Health {
            current: 30.0,
            max: 30.0
        }
    );
    // `Melee` merges key by key: the chief's damage, the enemy's cooldown.
    assert_eq!(
        get::<Melee>(&world, chief),
        Melee {
            damage: 4.0,
            cooldown: 1.0
        }
    );
}

#[test]
fn the_turret_points_at_its_own_sensor_and_gun() {
    let library = demo();
    let mut world = World::new();
    let first = spawn(&library, &mut world, "structures/turret");
    let second = spawn(&library, &mut world, "structures/turret");
    for turret in [first, second] {
        let children = get::<Children>(&world, turret).0;
        assert_eq!(children.len(), 2);
        let turret_component = get::<Turret>(&world, turret);
        for (reference, path) in [
            (turret_component.sensor, "sensor"),
            (turret_component.gun, "gun"),
        ] {
            assert!(children.contains(&reference), "{path}");
            let marker = get::<ArchetypeInstance>(&world, reference.entity());
            assert_eq!(library.node_path(marker), Some(path));
            assert_eq!(
                get::<Parent>(&world, reference.entity()),
                Parent(EntityRef(turret))
            );
        }
        let sensor = turret_component.sensor.entity();
        assert_eq!(get::<Sensor>(&world, sensor), Sensor { range: 9.0 });
        let gun = turret_component.gun.entity();
        assert_eq!(
            get::<Ranged>(&world, gun).projectile.name(),
            "projectiles/bolt"
        );
    }
}

#[test]
fn the_heavy_turret_inherits_and_changes_the_turrets_children() {
    let library = demo();
    let mut world = World::new();
    let heavy = spawn(&library, &mut world, "structures/heavy_turret");
    assert_eq!(get::<Name>(&world, heavy), Name("Heavy turret".to_string()));
    let turret = get::<Turret>(&world, heavy);
    assert_eq!(
        get::<Sensor>(&world, turret.sensor.entity()),
        Sensor { range: 12.0 }
    );
    let ranged = get::<Ranged>(&world, turret.gun.entity());
    assert_eq!(
        ranged,
        Ranged {
            projectile: ArchetypeRef::new("projectiles/shell"),
            range: 10.0,
            cooldown: 1.2
        }
    );
}
