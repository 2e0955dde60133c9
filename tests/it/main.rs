mod smoke {
    #[test]
    fn bad() {
        let registry = archetool::demo::components::registry();
        match archetype_engine::ArchetypeLibrary::load("/tmp/bad", registry) {
            Ok(_) => println!("ok"),
            Err(e) => println!("{e}"),
        }
    }
}
