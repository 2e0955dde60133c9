//! The integration tests: every capability through the public API, with real files.

mod smoke {
    #[test]
    fn demo_loads() {
        let registry = archetool::demo::components::registry();
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../archetypes");
        match archetype_engine::ArchetypeLibrary::load(root, registry) {
            Ok(library) => {
                let mut world = hecs::World::new();
                for name in library.names().collect::<Vec<_>>() {
                    let r = library.spawn(&mut world, name);
                    println!("{name}: {r:?}");
                }
                println!("{} entities", world.len());
            }
            Err(e) => panic!("{e}"),
        }
    }
}
